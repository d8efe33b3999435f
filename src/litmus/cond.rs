//! Final conditions: `exists` / `~exists` / `forall` over propositions with
//! herd's `/\ \/ ~` (and mixedproxy's `&& || !`).

use super::diag::{Diagnostic, Span};
use super::raw::parse_int;
use super::lexer::{Cursor, Tok, Token};
use crate::ir::{CmpOp, Prop, Quantifier, Term};

/// Name resolution for condition terms, provided by the dialect.
pub trait TermResolver {
    /// `THREAD:reg` where `thread` is `P1` or `1`.
    fn thread_reg(&mut self, thread: &Token<'_>, reg: &Token<'_>) -> Result<Term, Diagnostic>;
    /// A bare name (a location in herd files, a register or location in mixedproxy files).
    fn bare(&mut self, name: &Token<'_>) -> Result<Term, Diagnostic>;
}

/// Parse a quantifier keyword: `exists`, `~exists`, `~ exists`, `forall`.
pub fn parse_quantifier(cur: &mut Cursor<'_, '_>) -> Result<Quantifier, Diagnostic> {
    const Q: &str = "a final condition (`exists`, `~exists` or `forall`)";
    if cur.eat(Tok::Tilde).is_some() {
        let t = cur.expect(Tok::Word, "`exists` after `~`")?;
        if t.text != "exists" {
            return Err(Diagnostic::expected(
                t.span,
                "`exists` after `~`",
                t.quoted(),
            ));
        }
        return Ok(Quantifier::NotExists);
    }
    let t = cur.expect(Tok::Word, Q)?;
    match t.text {
        "exists" => Ok(Quantifier::Exists),
        "forall" => Ok(Quantifier::Forall),
        _ => Err(Diagnostic::expected(t.span, Q, t.quoted())),
    }
}

/// Parse a proposition; stops at the first token that cannot continue it.
pub fn parse_prop(cur: &mut Cursor<'_, '_>, r: &mut dyn TermResolver) -> Result<Prop, Diagnostic> {
    let mut lhs = parse_and(cur, r)?;
    while cur.eat(Tok::Vee).is_some() || cur.eat(Tok::PipePipe).is_some() {
        let rhs = parse_and(cur, r)?;
        lhs = Prop::Or(Box::new(lhs), Box::new(rhs));
    }
    Ok(lhs)
}

fn parse_and(cur: &mut Cursor<'_, '_>, r: &mut dyn TermResolver) -> Result<Prop, Diagnostic> {
    let mut lhs = parse_unary(cur, r)?;
    while cur.eat(Tok::Wedge).is_some() || cur.eat(Tok::AmpAmp).is_some() {
        let rhs = parse_unary(cur, r)?;
        lhs = Prop::And(Box::new(lhs), Box::new(rhs));
    }
    Ok(lhs)
}

fn parse_unary(cur: &mut Cursor<'_, '_>, r: &mut dyn TermResolver) -> Result<Prop, Diagnostic> {
    if cur.eat(Tok::Tilde).is_some() || cur.eat(Tok::Bang).is_some() {
        return Ok(Prop::Not(Box::new(parse_unary(cur, r)?)));
    }
    if cur
        .peek()
        .is_some_and(|t| t.tok == Tok::Word && t.text == "not")
    {
        cur.bump();
        return Ok(Prop::Not(Box::new(parse_unary(cur, r)?)));
    }
    if cur.eat(Tok::LParen).is_some() {
        let p = parse_prop(cur, r)?;
        cur.expect(Tok::RParen, "`)` or a connective (`/\\`, `\\/`)")?;
        return Ok(p);
    }
    if let Some(t) = cur.peek() {
        if t.tok == Tok::Word && (t.text == "true" || t.text == "false") {
            cur.bump();
            return Ok(if t.text == "true" {
                Prop::True
            } else {
                Prop::False
            });
        }
    }
    let a = parse_term(cur, r)?;
    let op = match cur.peek().map(|t| t.tok) {
        Some(Tok::EqEq) | Some(Tok::Assign) => CmpOp::Eq,
        Some(Tok::NotEq) => CmpOp::Ne,
        _ => return Err(cur.error("a comparison (`==`, `=` or `!=`)")),
    };
    cur.bump();
    let b = parse_term(cur, r)?;
    Ok(Prop::Cmp(a, op, b))
}

fn parse_term(cur: &mut Cursor<'_, '_>, r: &mut dyn TermResolver) -> Result<Term, Diagnostic> {
    const WHAT: &str = "a register (`P0:r0`), a location or an integer";
    let t = cur
        .bump()
        .ok_or_else(|| Diagnostic::expected(cur.end, WHAT, "the end of the input"))?;
    match t.tok {
        Tok::Int if cur.at(Tok::Colon) => {
            cur.bump();
            let reg = cur.expect(Tok::Word, "a register name after `:`")?;
            r.thread_reg(&t, &reg)
        }
        Tok::Int => Ok(Term::Const(parse_int(t.text, t.span)?)),
        Tok::Word if cur.at(Tok::Colon) => {
            cur.bump();
            let reg = cur.expect(Tok::Word, "a register name after `:`")?;
            r.thread_reg(&t, &reg)
        }
        Tok::Word if !t.text.contains('.') => r.bare(&t),
        Tok::LBrack => {
            let name = cur.expect(Tok::Word, "a location name inside `[...]`")?;
            cur.expect(Tok::RBrack, "`]`")?;
            r.bare(&name)
        }
        _ => Err(Diagnostic::expected(t.span, WHAT, t.quoted())),
    }
}

/// Resolve a thread name `P3` or `3` to its index, given the number of threads.
pub fn thread_index(t: &Token<'_>, nthreads: usize) -> Result<usize, Diagnostic> {
    let digits = t.text.strip_prefix('P').unwrap_or(t.text);
    match digits.parse::<usize>() {
        Ok(i) if i < nthreads && !digits.starts_with('+') => Ok(i),
        _ => {
            let range = match nthreads {
                1 => "P0".to_string(),
                n => format!("P0..P{}", n - 1),
            };
            Err(Diagnostic::expected(
                t.span,
                format!("a thread of this test ({range})"),
                t.quoted(),
            ))
        }
    }
}

/// Convenience for "found the end of input" spans after the last token.
pub fn end_span(text_len: usize) -> Span {
    Span::new(text_len, text_len)
}

/// Parse an outcome such as `P1:r0=1 /\ x=2` against a program (for
/// `ptxmc trace --outcome`). Registers and locations must exist.
pub fn parse_outcome(p: &crate::ir::Program, text: &str) -> Result<Prop, Diagnostic> {
    struct Names<'a>(&'a crate::ir::Program);
    impl TermResolver for Names<'_> {
        fn thread_reg(&mut self, thread: &Token<'_>, reg: &Token<'_>) -> Result<Term, Diagnostic> {
            let t = thread_index(thread, self.0.threads.len())?;
            match self.0.threads[t].reg_named(reg.text) {
                Some(r) => Ok(Term::Reg { thread: t, reg: r }),
                None => Err(Diagnostic::expected(
                    reg.span,
                    format!("a register of P{t}"),
                    reg.quoted(),
                )),
            }
        }
        fn bare(&mut self, name: &Token<'_>) -> Result<Term, Diagnostic> {
            match self.0.address_named(name.text) {
                Some(a) => Ok(Term::Loc(self.0.addresses[a].loc)),
                None => Err(Diagnostic::expected(
                    name.span,
                    "a location of the test",
                    name.quoted(),
                )),
            }
        }
    }
    let toks = super::lexer::tokenize(text, 0)?;
    let mut cur = Cursor::new(&toks, Span::new(text.len(), text.len()));
    let prop = parse_prop(&mut cur, &mut Names(p))?;
    if let Some(t) = cur.peek() {
        return Err(Diagnostic::expected(
            t.span,
            "the end of the outcome",
            t.quoted(),
        ));
    }
    Ok(prop)
}
