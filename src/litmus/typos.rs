//! Likely typos in location names. A name the initial state does not
//! declare is a location that starts at 0 (herd's convention), so a
//! misspelt name silently becomes a second location: in MP, `st.release.gpu
//! flag, 1` in P0 and `ld.acquire.gpu r0, f` in P1 give a test whose flag is
//! never read and whose reader never sees a write, and the verdict reads as
//! correct. This module finds such names: a location that threads write and
//! nothing reads (neither a thread nor the condition, `filter` or
//! `locations`), or that threads read and no thread writes, when another
//! name of the test is similar (one a prefix of the other, or at most two
//! edits apart for names of three characters or more; names that differ only
//! in their digits, `x1` and `x12`, are a numbered family, not a typo).
//!
//! Reads and writes are not only the threads'. The condition, `filter` and
//! `locations` read final values; an asynchronous copy's writes (a TMA
//! store's element copies, each a location) are writes of the thread that
//! issued it. In a kernel the host is a reader and a writer too: it fills
//! every global buffer before the launch (zeros or the values `--buffer`
//! gives) and reads every one back after it (the final values `ptxmc
//! kernel` prints), so a global location of a kernel is never "written but
//! read by no thread" nor "read but written by no thread" — the three
//! words of a 16-byte TMA store that the kernel never reads back itself
//! (`kernels/tma_store_wait.cu`) are its output, not a typo.

use crate::ir::{AsyncSrc, Instr, LocId, LocKind, Program, Space, Term};

use super::diag::{Diagnostic, Span};
use super::{Format, LitmusTest, SourceMap};

/// A location whose name looks like a typo of another name of the test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Typo {
    /// The suspect location.
    pub loc: LocId,
    /// Its name.
    pub name: String,
    /// The similar name (a declared or used location of the test).
    pub like: String,
    /// What is odd about it: `written by P0 but read by no thread` or
    /// `read by P1 but written by no thread`.
    pub what: String,
    /// The first instruction that names it, as (thread, pc).
    pub at: (usize, usize),
}

/// How the threads use one location: who reads it, who writes it, and the
/// first instruction (thread, pc) that names it.
type Usage = (Vec<usize>, Vec<usize>, Option<(usize, usize)>);

/// Per location, its [`Usage`].
fn usage(p: &Program) -> Vec<Usage> {
    let mut u: Vec<Usage> = vec![(Vec::new(), Vec::new(), None); p.locations.len()];
    let mut note = |l: LocId, t: usize, pc: usize, read: bool, write: bool| {
        let e = &mut u[l];
        if read && !e.0.contains(&t) {
            e.0.push(t);
        }
        if write && !e.1.contains(&t) {
            e.1.push(t);
        }
        e.2.get_or_insert((t, pc));
    };
    for (t, th) in p.threads.iter().enumerate() {
        for (pc, i) in th.code.iter().enumerate() {
            let loc = |a: usize| p.addresses[a].loc;
            match i {
                Instr::Load { access, .. } => note(loc(access.addr), t, pc, true, false),
                Instr::Store { access, .. } => note(loc(access.addr), t, pc, false, true),
                Instr::Rmw { access, .. } => note(loc(access.addr), t, pc, true, true),
                Instr::AsyncCopy { dst, src, .. } => {
                    note(loc(*dst), t, pc, false, true);
                    if let AsyncSrc::Addr(s) = src {
                        note(loc(*s), t, pc, true, false);
                    }
                }
                // Tensor-core operands: MMA tiles and tensor memory read,
                // accumulators and stores written, a commit's mbarrier both.
                Instr::Tensor { op } => {
                    use crate::ir::tensor_core::TcOp;
                    let (reads, writes): (Vec<usize>, Vec<usize>) = match op {
                        TcOp::Wgmma { a, b, .. } => (vec![*a, *b], vec![]),
                        TcOp::Mma {
                            d,
                            a,
                            b,
                            accumulate,
                            ..
                        } => {
                            let mut r = vec![*a, *b];
                            if *accumulate {
                                r.push(*d);
                            }
                            (r, vec![*d])
                        }
                        TcOp::Cp { d, src } => (vec![*src], vec![*d]),
                        TcOp::Ld { src, .. } => (vec![*src], vec![]),
                        TcOp::St { dst, .. } => (vec![], vec![*dst]),
                        TcOp::Commit { bar } => (vec![*bar], vec![*bar]),
                        _ => (vec![], vec![]),
                    };
                    for a in reads {
                        note(loc(a), t, pc, true, false);
                    }
                    for a in writes {
                        note(loc(a), t, pc, false, true);
                    }
                }
                _ => {}
            }
        }
    }
    u
}

/// The locations the condition, `filter` and `locations` name.
fn observed(p: &Program) -> Vec<LocId> {
    let mut terms = p.condition.prop.terms();
    if let Some(f) = &p.filter {
        terms.extend(f.terms());
    }
    terms.extend(p.shown.iter().copied());
    terms
        .into_iter()
        .filter_map(|t| match t {
            Term::Loc(l) => Some(l),
            _ => None,
        })
        .collect()
}

/// Levenshtein distance, stopping early above 2 (names are short).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 {
        return 3;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Whether two different names look like one mistyped for the other.
pub fn similar(a: &str, b: &str) -> bool {
    if a == b {
        return false;
    }
    // Elements of buffers (`g[5]`, `s[0]`: vectors, tensor boxes): the
    // buffers' names are what may be mistyped; `s[0]` and `s[1]` are a family.
    let base = |s: &str| {
        s.rfind('[')
            .filter(|_| s.ends_with(']'))
            .map(|i| s[..i].to_string())
    };
    if let (Some(x), Some(y)) = (base(a), base(b)) {
        return similar(&x, &y);
    }
    let letters = |s: &str| -> String { s.chars().filter(|c| !c.is_ascii_digit()).collect() };
    if letters(a) == letters(b) {
        // `x1` and `x12`: a numbered family.
        return false;
    }
    a.starts_with(b)
        || b.starts_with(a)
        || (a.chars().count() >= 3 && b.chars().count() >= 3 && distance(a, b) <= 2)
}

/// The likely typos of `p` (a litmus test), in location order.
pub fn typos(p: &Program) -> Vec<Typo> {
    typos_with(p, false)
}

/// The likely typos of the test `t` ([`typos`]; for a kernel, the host's
/// reads and writes of its global buffers count).
pub fn typos_of(t: &LitmusTest) -> Vec<Typo> {
    typos_with(&t.program, t.format == Format::Kernel)
}

/// [`typos`]; `host`: `p` is a kernel, whose global locations the host
/// writes before the launch and reads after it.
fn typos_with(p: &Program, host: bool) -> Vec<Typo> {
    let u = usage(p);
    let seen = observed(p);
    let names = |l: LocId| {
        p.addresses
            .iter()
            .filter(move |a| a.loc == l)
            .map(|a| a.name.as_str())
    };
    let thread_list = |ts: &[usize]| -> String {
        let names: Vec<&str> = ts.iter().map(|&t| p.threads[t].name.as_str()).collect();
        match names.as_slice() {
            [] => String::new(),
            [a] => a.to_string(),
            [init @ .., last] => format!("{} and {last}", init.join(", ")),
        }
    };
    let mut out = Vec::new();
    for (l, loc) in p.locations.iter().enumerate() {
        if loc.kind != LocKind::Data || (host && loc.space == Space::Global) {
            continue;
        }
        let (reads, writes, first) = &u[l];
        let Some(at) = *first else { continue };
        let what = if !writes.is_empty() && reads.is_empty() && !seen.contains(&l) {
            format!(
                "written by {} but read by no thread and not named by the condition",
                thread_list(writes)
            )
        } else if !reads.is_empty() && writes.is_empty() {
            format!("read by {} but written by no thread", thread_list(reads))
        } else {
            continue;
        };
        // Prefer the name that is odd the other way round (`flag` written
        // and never read, `f` read and never written): the likelier pair.
        let written_only = reads.is_empty();
        let candidates: Vec<(LocId, &str)> = p
            .addresses
            .iter()
            .filter(|a| a.loc != l && p.locations[a.loc].kind == LocKind::Data)
            .filter(|a| names(l).any(|n| similar(n, &a.name)))
            .map(|a| (a.loc, a.name.as_str()))
            .collect();
        let other_way = |o: LocId| {
            let (r, w, _) = &u[o];
            if written_only {
                !r.is_empty() && w.is_empty()
            } else {
                !w.is_empty() && r.is_empty()
            }
        };
        let like = candidates
            .iter()
            .find(|(o, _)| other_way(*o))
            .or(candidates.first())
            .map(|(_, n)| *n);
        if let Some(like) = like {
            out.push(Typo {
                loc: l,
                name: loc.name.clone(),
                like: like.to_string(),
                what,
                at,
            });
        }
    }
    out
}

/// Where `name` is written in the instruction at `at`: the name itself when
/// it appears there as a word, else the whole instruction.
fn name_span(t: &LitmusTest, spans: &SourceMap, at: (usize, usize), name: &str) -> Span {
    let Some(span) = spans.instrs.get(at.0).and_then(|s| s.get(at.1)).copied() else {
        return Span::default();
    };
    let text = t.source.get(span.start..span.end).unwrap_or("");
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let mut from = 0;
    while let Some(i) = text[from..].find(name) {
        let s = from + i;
        let e = s + name.len();
        let before = text[..s].chars().next_back().is_none_or(|c| !word(c));
        let after = text[e..].chars().next().is_none_or(|c| !word(c));
        if before && after {
            return Span {
                start: span.start + s,
                end: span.start + e,
            };
        }
        from = e;
    }
    span
}

/// The positioned warnings of a test's likely typos.
pub fn warnings(t: &LitmusTest) -> Vec<Diagnostic> {
    typos_of(t)
        .into_iter()
        .map(|ty| {
            Diagnostic::warning(
                name_span(t, &t.spans, ty.at, &ty.name),
                format!("`{}` is {}; did you mean `{}`?", ty.name, ty.what, ty.like),
            )
            .with_label(format!("`{}` is a name of this test too", ty.like))
            .with_note(
                "a name the initial state does not declare is a new location that starts at 0, \
                 so a misspelt name gives a different test without an error",
            )
        })
        .collect()
}

/// The `Note:` lines for typos the verdict rests on: the condition names
/// the location, or a register that a load of it writes.
pub fn verdict_notes(t: &LitmusTest) -> Vec<String> {
    let p = &t.program;
    let terms = p.condition.prop.terms();
    typos_of(t)
        .into_iter()
        .filter(|ty| {
            terms.iter().any(|term| match *term {
                Term::Loc(l) => l == ty.loc,
                Term::Reg { thread, reg } => p.threads[thread].code.iter().any(|i| match i {
                    Instr::Load { dst, access, .. } => {
                        *dst == reg && p.addresses[access.addr].loc == ty.loc
                    }
                    Instr::Rmw {
                        dst: Some(dst),
                        access,
                        ..
                    } => *dst == reg && p.addresses[access.addr].loc == ty.loc,
                    _ => false,
                }),
                Term::Const(_) => false,
            })
        })
        .map(|ty| {
            let span = name_span(t, &t.spans, ty.at, &ty.name);
            let at = span.start.min(t.source.len());
            let line = t.source[..at].matches('\n').count() + 1;
            let col = at - t.source[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
            format!(
                "the verdict rests on `{}` (line {line}:{col}), which is {}: did you mean `{}`?",
                ty.name, ty.what, ty.like
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_names() {
        assert!(similar("f", "flag"));
        assert!(similar("flag", "flga"));
        assert!(similar("data", "dat"));
        assert!(!similar("x", "y"));
        assert!(!similar("x1", "x12"));
        // Elements: the buffers' names are compared.
        assert!(!similar("g[5]", "s[0]"));
        assert!(!similar("s[0]", "s[1]"));
        assert!(similar("data[0]", "dat[1]"));
        assert!(!similar("flag", "flag"));
        assert!(!similar("data", "flag"));
    }
}
