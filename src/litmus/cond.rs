//! Final conditions: `exists` / `~exists` / `forall` over propositions with
//! herd's `/\ \/ ~` (and mixedproxy's `&& || !`).

use super::diag::{Diagnostic, Span};
use super::lexer::{Cursor, Tok, Token};
use super::raw::parse_int;
use crate::ir::{CmpOp, MAX_PROP_DEPTH, Prop, Quantifier, RegId, Term, Thread, Value};

/// Name resolution for condition terms, provided by the dialect.
pub trait TermResolver {
    /// `THREAD:reg` where `thread` is `P1` or `1`.
    fn thread_reg(&mut self, thread: &Token<'_>, reg: &Token<'_>) -> Result<Term, Diagnostic>;
    /// A bare name (a location in herd files, a register or location in mixedproxy files).
    fn bare(&mut self, name: &Token<'_>) -> Result<Term, Diagnostic>;
    /// The constant `c`, written at `at`, as compared with `other`: a front
    /// end whose locations have types fits it to the type's width (a
    /// kernel's `uint32` 4294967295 is held as -1), or refuses a value the
    /// type cannot hold. Litmus values are plain numbers: unchanged.
    fn fit(&mut self, other: &Term, c: Value, at: Span) -> Result<Value, Diagnostic> {
        let _ = (other, at);
        Ok(c)
    }
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

/// How many parentheses and negations may enclose a comparison: twice the
/// tree's bound, so that reading stays bounded while every proposition
/// within [`MAX_PROP_DEPTH`] reads back from its canonical text (which
/// nests at most one level deeper than the tree, plus the condition's own
/// parentheses).
pub const MAX_NESTING: usize = 2 * MAX_PROP_DEPTH;

/// Parse a proposition; stops at the first token that cannot continue it.
///
/// Both the text's nesting ([`MAX_NESTING`] parentheses and negations) and
/// the tree's depth ([`MAX_PROP_DEPTH`]; a chain of `/\` counts one level
/// per operand) are bounded, with positioned errors, so neither this parser
/// nor any later walk of the tree can exhaust the stack.
pub fn parse_prop(cur: &mut Cursor<'_, '_>, r: &mut dyn TermResolver) -> Result<Prop, Diagnostic> {
    parse_or(cur, r, 0).map(|(p, _)| p)
}

/// "expected a proposition at most N levels deep" at `span`.
pub fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::expected(
        span,
        format!("a proposition at most {MAX_PROP_DEPTH} levels deep"),
        "a deeper one",
    )
    .with_label("the depth limit is reached here")
    .with_note(
        "every negation and every `/\\`, `\\/`, `&&` or `||` above a comparison counts one level \
         (a chain of N conjuncts is N-1 levels); ptxmc bounds the depth so that no condition can \
         exhaust the stack",
    )
}

/// "expected at most N nested parentheses and negations" at `span`.
fn too_nested(span: Span) -> Diagnostic {
    Diagnostic::expected(
        span,
        format!("at most {MAX_NESTING} nested parentheses and negations"),
        "more",
    )
    .with_label("the nesting limit is reached here")
    .with_note("ptxmc bounds the nesting so that no condition can exhaust the stack")
}

/// A disjunction at parenthesis/negation `level`; returns it with its depth.
fn parse_or(
    cur: &mut Cursor<'_, '_>,
    r: &mut dyn TermResolver,
    level: usize,
) -> Result<(Prop, usize), Diagnostic> {
    let (mut lhs, mut depth) = parse_and(cur, r, level)?;
    while let Some(op) = cur.eat(Tok::Vee).or_else(|| cur.eat(Tok::PipePipe)) {
        let (rhs, d) = parse_and(cur, r, level)?;
        depth = 1 + depth.max(d);
        if depth > MAX_PROP_DEPTH {
            return Err(too_deep(op.span));
        }
        lhs = Prop::Or(Box::new(lhs), Box::new(rhs));
    }
    Ok((lhs, depth))
}

fn parse_and(
    cur: &mut Cursor<'_, '_>,
    r: &mut dyn TermResolver,
    level: usize,
) -> Result<(Prop, usize), Diagnostic> {
    let (mut lhs, mut depth) = parse_unary(cur, r, level)?;
    while let Some(op) = cur.eat(Tok::Wedge).or_else(|| cur.eat(Tok::AmpAmp)) {
        let (rhs, d) = parse_unary(cur, r, level)?;
        depth = 1 + depth.max(d);
        if depth > MAX_PROP_DEPTH {
            return Err(too_deep(op.span));
        }
        lhs = Prop::And(Box::new(lhs), Box::new(rhs));
    }
    Ok((lhs, depth))
}

fn parse_unary(
    cur: &mut Cursor<'_, '_>,
    r: &mut dyn TermResolver,
    level: usize,
) -> Result<(Prop, usize), Diagnostic> {
    let negation = cur.peek().filter(|t| {
        matches!(t.tok, Tok::Tilde | Tok::Bang) || (t.tok == Tok::Word && t.text == "not")
    });
    if let Some(t) = negation {
        if level >= MAX_NESTING {
            return Err(too_nested(t.span));
        }
        cur.bump();
        let (p, d) = parse_unary(cur, r, level + 1)?;
        if d + 1 > MAX_PROP_DEPTH {
            return Err(too_deep(t.span));
        }
        return Ok((Prop::Not(Box::new(p)), d + 1));
    }
    if let Some(t) = cur.peek().filter(|t| t.tok == Tok::LParen) {
        if level >= MAX_NESTING {
            return Err(too_nested(t.span));
        }
        cur.bump();
        let p = parse_or(cur, r, level + 1)?;
        cur.expect(Tok::RParen, "`)` or a connective (`/\\`, `\\/`)")?;
        return Ok(p);
    }
    if let Some(t) = cur.peek() {
        if t.tok == Tok::Word && (t.text == "true" || t.text == "false") {
            cur.bump();
            let p = if t.text == "true" {
                Prop::True
            } else {
                Prop::False
            };
            return Ok((p, 0));
        }
    }
    let a_at = cur.peek().map(|t| t.span);
    let a = parse_term(cur, r)?;
    let op = match cur.peek().map(|t| t.tok) {
        Some(Tok::EqEq) | Some(Tok::Assign) => CmpOp::Eq,
        Some(Tok::NotEq) => CmpOp::Ne,
        _ => return Err(cur.error("a comparison (`==`, `=` or `!=`)")),
    };
    cur.bump();
    let b_at = cur.peek().map(|t| t.span);
    let b = parse_term(cur, r)?;
    let b = match (b, b_at) {
        (Term::Const(c), Some(at)) => Term::Const(r.fit(&a, c, at)?),
        (b, _) => b,
    };
    let a = match (a, a_at) {
        (Term::Const(c), Some(at)) => Term::Const(r.fit(&b, c, at)?),
        (a, _) => a,
    };
    Ok((Prop::Cmp(a, op, b), 0))
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

/// herd's `locations [x; P1:r0; ...]` after its keyword: registers and
/// locations separated by `;` (a trailing `;` is allowed).
pub fn parse_locations(
    cur: &mut Cursor<'_, '_>,
    r: &mut dyn TermResolver,
) -> Result<Vec<Term>, Diagnostic> {
    const ITEM: &str = "a register (`P0:r0`) or a location";
    cur.expect(Tok::LBrack, "`[` and the registers and locations to show")?;
    let mut out = Vec::new();
    loop {
        if cur.eat(Tok::RBrack).is_some() {
            return Ok(out);
        }
        let at = cur.peek();
        let term = parse_term(cur, r)?;
        if let (Term::Const(_), Some(t)) = (term, at) {
            return Err(Diagnostic::expected(t.span, ITEM, t.quoted()));
        }
        out.push(term);
        if cur.eat(Tok::Semi).is_none() {
            cur.expect(Tok::RBrack, "`;` or `]`")?;
            return Ok(out);
        }
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

/// The register `reg` of thread `t`, as a condition, a filter, a
/// `locations` clause or `ptxmc trace --outcome` may name it: a register the
/// thread's code writes, or one the initial state sets (`initialised`, per
/// thread). Anything else would read as a constant 0 and silently decide the
/// verdict (a typo such as `r2` for `r1`, or `r0` for `%r0`), so it is an
/// error.
pub fn condition_register(
    threads: &[Thread],
    initialised: &[Vec<RegId>],
    t: usize,
    reg: &Token<'_>,
) -> Result<RegId, Diagnostic> {
    let th = &threads[t];
    let expected = format!("a register that P{t} writes or the initial state sets");
    let Some(r) = th.reg_named(reg.text) else {
        let mut label = match th.regs.len() {
            0 => format!("P{t} has no registers"),
            n => {
                let mut names: Vec<String> = th
                    .regs
                    .iter()
                    .take(8)
                    .map(|r| format!("`{}`", r.name))
                    .collect();
                if n > 8 {
                    names.push(format!("and {} more", n - 8));
                }
                format!("P{t}'s registers: {}", names.join(", "))
            }
        };
        let twin = match reg.text.strip_prefix('%') {
            Some(bare) => bare.to_string(),
            None => format!("%{}", reg.text),
        };
        if th.reg_named(&twin).is_some() {
            label = format!("did you mean `{twin}`?");
        }
        return Err(Diagnostic::expected(reg.span, expected, reg.quoted()).with_label(label));
    };
    let written = th.code.iter().any(|i| i.def() == Some(r));
    let set = initialised.get(t).is_some_and(|v| v.contains(&r));
    if written || set {
        return Ok(r);
    }
    Err(
        Diagnostic::expected(reg.span, expected, reg.quoted()).with_label(format!(
            "P{t} reads `{}` but never writes it, and the initial state does not set it",
            reg.text
        )),
    )
}

/// Parse an outcome such as `P1:r0=1 /\ x=2`, or a final-state line copied
/// from `ptxmc run` (`1:r0=0; 1:r1=1; x=1;`), against a test (for
/// `--outcome`). Registers follow the rule of conditions
/// ([`condition_register`]); locations must exist.
pub fn parse_outcome(
    p: &crate::ir::Program,
    spans: &super::SourceMap,
    text: &str,
) -> Result<Prop, Diagnostic> {
    struct Names<'a>(&'a crate::ir::Program, &'a super::SourceMap);
    impl TermResolver for Names<'_> {
        fn thread_reg(&mut self, thread: &Token<'_>, reg: &Token<'_>) -> Result<Term, Diagnostic> {
            let t = thread_index(thread, self.0.threads.len())?;
            let r = condition_register(&self.0.threads, &self.1.initialised, t, reg)?;
            Ok(Term::Reg { thread: t, reg: r })
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
    let mut names = Names(p, spans);
    let (mut prop, mut depth) = parse_or(&mut cur, &mut names, 0)?;
    // A final-state line copied from `ptxmc run` (`1:r0=0; 1:r1=1; x=1;`):
    // the `;`-separated items are a conjunction.
    while let Some(semi) = cur.eat(Tok::Semi) {
        if cur.peek().is_none() {
            break;
        }
        let (rhs, d) = parse_or(&mut cur, &mut names, 0)?;
        depth = 1 + depth.max(d);
        if depth > MAX_PROP_DEPTH {
            return Err(too_deep(semi.span));
        }
        prop = Prop::And(Box::new(prop), Box::new(rhs));
    }
    if let Some(t) = cur.peek() {
        return Err(Diagnostic::expected(
            t.span,
            "the end of the outcome (or `;` and another item of a state line)",
            t.quoted(),
        ));
    }
    Ok(prop)
}
