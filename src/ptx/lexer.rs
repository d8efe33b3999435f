//! Tokens of a PTX module (nvcc output and hand-written PTX alike).
//!
//! Comments (`// ...`, `/* ... */`) are skipped here; a mnemonic with its
//! dotted modifiers (`ld.acquire.gpu.global.u32`, `mbarrier.try_wait.parity.shared::cta.b64`)
//! and a special register with its component (`%tid.x`) are one [`Tok::Word`].

use logos::Logos;

use crate::litmus::{Diagnostic, Span};

/// A PTX token.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f\u{FEFF}]+")]
#[logos(skip r"/\*([^*]|\*+[^*/])*\*+/")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Tok {
    /// A directive (`.reg`, `.entry`, `.loc`, `.b32` as a type).
    #[regex(r"\.[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z0-9_]+)*")]
    Directive,
    /// An identifier, register, or mnemonic with dotted modifiers.
    #[regex(r"[A-Za-z_$%][A-Za-z0-9_$]*(\.[A-Za-z0-9_]+(::[A-Za-z0-9_]+)*)*")]
    Word,
    /// An integer: decimal, `0x` hex, octal or `0b` binary, optionally `U`-suffixed.
    #[regex(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?")]
    Int,
    /// A floating-point literal in hex form (`0f3F800000`, `0d3FF0000000000000`).
    #[regex(r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}")]
    HexFloat,
    /// A decimal number with a fraction (`.version 9.5`, `1.0`).
    #[regex(r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?")]
    Decimal,
    /// A quoted string.
    #[regex(r#""([^"\\\n]|\\.)*""#)]
    Str,
    /// `,`
    #[token(",")]
    Comma,
    /// `;`
    #[token(";")]
    Semi,
    /// `:`
    #[token(":")]
    Colon,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `[`
    #[token("[")]
    LBrack,
    /// `]`
    #[token("]")]
    RBrack,
    /// `<`
    #[token("<")]
    Lt,
    /// `>`
    #[token(">")]
    Gt,
    /// `@`
    #[token("@")]
    At,
    /// `!`
    #[token("!")]
    Bang,
    /// `+`
    #[token("+")]
    Plus,
    /// `-`
    #[token("-")]
    Minus,
    /// `=`
    #[token("=")]
    Eq,
    /// `|`
    #[token("|")]
    Pipe,
}

impl Tok {
    /// How the token is named in "found ..." messages.
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Directive => "a directive",
            Tok::Word => "a name",
            Tok::Int => "an integer",
            Tok::HexFloat => "a floating-point literal",
            Tok::Decimal => "a decimal number",
            Tok::Str => "a string",
            _ => "punctuation",
        }
    }
}

/// A token with its text and place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'s> {
    /// Kind.
    pub tok: Tok,
    /// Text as written.
    pub text: &'s str,
    /// Where.
    pub span: Span,
}

impl Token<'_> {
    /// The token quoted for messages.
    pub fn quoted(&self) -> String {
        let t: String = self.text.chars().take(40).collect();
        format!("`{t}`")
    }
}

/// Split a PTX text into tokens; the first character no token matches is a
/// positioned error.
pub fn tokenize(text: &str) -> Result<Vec<Token<'_>>, Diagnostic> {
    let mut out = Vec::with_capacity(text.len() / 5);
    let mut lex = Tok::lexer(text);
    while let Some(t) = lex.next() {
        let r = lex.span();
        let span = Span::new(r.start, r.end);
        match t {
            Ok(tok) => out.push(Token {
                tok,
                text: lex.slice(),
                span,
            }),
            Err(()) => {
                let c = text[r.start..].chars().next().unwrap_or(' ');
                let found = if text[r.start..].starts_with("/*") {
                    "a comment that is never closed".to_string()
                } else if c == '"' {
                    "a string that is never closed".to_string()
                } else {
                    format!("`{c}`")
                };
                return Err(Diagnostic::expected(
                    Span::new(r.start, r.start + c.len_utf8()),
                    "a PTX token",
                    found,
                ));
            }
        }
    }
    Ok(out)
}

/// Parse an integer token's text (`0x1F`, `10U`, `0b101`, `017`).
pub fn int_value(text: &str) -> Option<u64> {
    let t = text.strip_suffix('U').unwrap_or(text);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_registers_and_labels_lex() {
        let toks =
            tokenize("@%p1 bra $L__BB0_2; ld.shared::cta.b32 %r1, [%rd1+-4]; // x\n%tid.x L:")
                .unwrap();
        let kinds: Vec<Tok> = toks.iter().map(|t| t.tok).collect();
        use Tok::*;
        assert_eq!(
            kinds,
            vec![
                At, Word, Word, Word, Semi, Word, Word, Comma, LBrack, Word, Plus, Minus, Int,
                RBrack, Semi, Word, Word, Colon
            ]
        );
        assert_eq!(toks[5].text, "ld.shared::cta.b32");
        assert_eq!(int_value("0x10"), Some(16));
        assert_eq!(int_value("10U"), Some(10));
    }

    #[test]
    fn an_unclosed_comment_is_positioned() {
        let e = tokenize("ret; /* oops").unwrap_err();
        assert_eq!(e.span.start, 5);
        assert!(e.found.contains("never closed"), "{}", e.found);
    }
}
