//! Tokens shared by both litmus dialects (instructions, init items, conditions).

use logos::Logos;

use super::diag::{Diagnostic, Span};

/// A token. Dotted mnemonics (`ld.acquire.gpu`, `fence.proxy.async::generic`)
/// and plain names (`x`, `r0`, `P1`) are both [`Tok::Word`]; the instruction
/// parser splits words at dots.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f\u{FEFF}]+")]
#[logos(skip r"\(\*([^*]|\*+[^*)])*\*+\)")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Tok {
    /// A name or dotted mnemonic. A name may end in an element index,
    /// `x[1]`: the locations of a vector access (`docs/litmus-format.md`,
    /// "Vector accesses").
    #[regex(r"\.?[A-Za-z_%][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*(\.[A-Za-z0-9_]+(::[A-Za-z0-9_]+)*)*(\[[0-9]+\])?")]
    Word,
    /// An integer (decimal or `0x` hex, optionally negative).
    #[regex(r"-?(0[xX][0-9a-fA-F]+|[0-9]+)")]
    Int,
    /// A quoted string (may span lines).
    #[regex(r#""[^"]*""#)]
    Str,
    /// `$k` template placeholder (mixedproxy).
    #[regex(r"\$[0-9]+")]
    Placeholder,
    /// `,`
    #[token(",")]
    Comma,
    /// `;`
    #[token(";")]
    Semi,
    /// `:`
    #[token(":")]
    Colon,
    /// `|`
    #[token("|")]
    Pipe,
    /// `||`
    #[token("||")]
    PipePipe,
    /// `&&`
    #[token("&&")]
    AmpAmp,
    /// `/\`
    #[token("/\\")]
    Wedge,
    /// `\/`
    #[token("\\/")]
    Vee,
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
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `=`
    #[token("=")]
    Assign,
    /// `==`
    #[token("==")]
    EqEq,
    /// `!=`
    #[token("!=")]
    NotEq,
    /// `!`
    #[token("!")]
    Bang,
    /// `~`
    #[token("~")]
    Tilde,
    /// `@`
    #[token("@")]
    At,
}

impl Tok {
    /// How the token is described in "found ..." messages when its text is not shown.
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Word => "a name",
            Tok::Int => "an integer",
            Tok::Str => "a string",
            Tok::Placeholder => "a template placeholder",
            _ => "a symbol",
        }
    }
}

/// A token with its text and absolute span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'s> {
    /// Kind.
    pub tok: Tok,
    /// Text as written.
    pub text: &'s str,
    /// Absolute position.
    pub span: Span,
}

impl Token<'_> {
    /// "`text`" for messages.
    pub fn quoted(&self) -> String {
        format!("`{}`", self.text)
    }
}

/// Tokenise `text`, whose first byte is at absolute offset `offset` in the file.
pub fn tokenize(text: &str, offset: usize) -> Result<Vec<Token<'_>>, Diagnostic> {
    let mut out = Vec::new();
    let mut lex = Tok::lexer(text);
    while let Some(res) = lex.next() {
        let r = lex.span();
        let span = Span::new(r.start + offset, r.end + offset);
        match res {
            Ok(tok) => out.push(Token {
                tok,
                text: lex.slice(),
                span,
            }),
            Err(()) => {
                let bad = lex.slice();
                let first = bad.chars().next();
                // Control characters (NUL, escape, ...) are shown escaped.
                let shown = first.map_or(String::new(), |c| {
                    if c.is_control() {
                        c.escape_debug().to_string()
                    } else {
                        c.to_string()
                    }
                });
                let (expected, found) = if bad.starts_with('"') {
                    (
                        "a closing `\"`".to_string(),
                        "the end of the input".to_string(),
                    )
                } else if bad.starts_with("(*") {
                    (
                        "a closing `*)`".to_string(),
                        "the end of the input".to_string(),
                    )
                } else {
                    (
                        "a name, an integer or punctuation".to_string(),
                        format!("character `{shown}`"),
                    )
                };
                // An invisible character gets an empty span: the caret is
                // then drawn where it lies (a span over a zero-width
                // character draws none).
                let end = match first {
                    Some(c) if c.is_control() => span.start,
                    c => span.start + c.map_or(1, char::len_utf8),
                };
                let d = Diagnostic::expected(Span::new(span.start, end), expected, found);
                return Err(match first {
                    Some(c) if c.is_control() => d.with_label("an invisible control character"),
                    _ => d,
                });
            }
        }
    }
    Ok(out)
}

/// A cursor over tokens with good error messages at the end of input.
pub struct Cursor<'t, 's> {
    toks: &'t [Token<'s>],
    pos: usize,
    /// Span used for "end of input" errors.
    pub end: Span,
}

impl<'t, 's> Cursor<'t, 's> {
    /// A cursor over `toks`; `end` is where "found the end of ..." points.
    pub fn new(toks: &'t [Token<'s>], end: Span) -> Self {
        Cursor { toks, pos: 0, end }
    }
    /// Next token without consuming it.
    pub fn peek(&self) -> Option<Token<'s>> {
        self.toks.get(self.pos).copied()
    }
    /// The token after the next one.
    pub fn peek2(&self) -> Option<Token<'s>> {
        self.toks.get(self.pos + 1).copied()
    }
    /// Whether the next token is `tok`.
    pub fn at(&self, tok: Tok) -> bool {
        self.peek().is_some_and(|t| t.tok == tok)
    }
    /// Whether all tokens are consumed.
    pub fn is_done(&self) -> bool {
        self.pos >= self.toks.len()
    }
    /// Consume and return the next token.
    pub fn bump(&mut self) -> Option<Token<'s>> {
        let t = self.peek();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    /// Consume the next token if it is `tok`.
    pub fn eat(&mut self, tok: Tok) -> Option<Token<'s>> {
        if self.at(tok) { self.bump() } else { None }
    }
    /// Consume a `tok` or fail with "expected `what`".
    pub fn expect(&mut self, tok: Tok, what: &str) -> Result<Token<'s>, Diagnostic> {
        match self.peek() {
            Some(t) if t.tok == tok => {
                self.pos += 1;
                Ok(t)
            }
            other => Err(self.error_at(other, what)),
        }
    }
    /// "expected `what`, found" the next token.
    pub fn error(&self, what: &str) -> Diagnostic {
        self.error_at(self.peek(), what)
    }
    fn error_at(&self, t: Option<Token<'s>>, what: &str) -> Diagnostic {
        match t {
            Some(t) => Diagnostic::expected(t.span, what, t.quoted()),
            None => Diagnostic::expected(self.end, what, "the end of the input"),
        }
    }
    /// Span of the previous token (or `end`).
    pub fn prev_span(&self) -> Span {
        if self.pos == 0 {
            self.end
        } else {
            self.toks[self.pos - 1].span
        }
    }
}
