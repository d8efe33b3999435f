//! The SASS check: does the machine code of each litmus thread still have
//! the test's accesses, fences and barriers?
//!
//! `build.sh` dumps every bundle with `cuobjdump -sass`. Each litmus thread
//! is an `extern "C" __noinline__` function named by
//! [`super::role_function`], so it is a `Function : NAME` section of the
//! dump. [`parse`] counts, per function, the memory instructions by kind;
//! [`check`] sets them beside the litmus thread's instructions:
//!
//! | kind | SASS opcodes (first dotted part) | rule |
//! |---|---|---|
//! | loads | `LDG LD LDS LDC TLD SULD` | equal |
//! | stores | `STG ST STS SUST` | equal |
//! | atomics | `ATOM ATOMG ATOMS RED REDG` | equal |
//! | fences | `MEMBAR FENCE CCTL` | at least the test's `fence`s |
//! | barriers | `BAR` | equal |
//!
//! 128-bit accesses are the harness's own result stores and are skipped;
//! local-memory accesses (`LDL`, `STL`) are spills. Fences only need to be at
//! least as many as in the test because ptxas adds `MEMBAR`s for release
//! accesses (`st.release.gpu` = `MEMBAR.ALL.GPU` + `STG.E.STRONG.GPU`). A
//! thread whose counts break a rule is *compiler-altered*: ptxas merged,
//! dropped, duplicated or unrolled something, so the hardware did not run the
//! test as written.
//!
//! Two refinements from the first runs on an H100 (ptxas 13.0): a
//! `fence.acquire` compiles to an L1 invalidation alone (`CCTL.IVALL`, no
//! `MEMBAR`), so `CCTL` counts as a fence; and a thread that loops (a
//! backward branch) may be unrolled, so its counts are lower bounds — each
//! kind must appear at least as often as in the test, and not at all when
//! the test has none. Instructions guarded by `@!PT` never execute and are
//! skipped, and so are loads from constant bank 0 (launch parameters and
//! memory descriptors).

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

use super::role_function;
use crate::ir::{Instr, Program, Thread};

/// Memory instructions of one function (or one litmus thread), by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Loads (every proxy).
    pub loads: usize,
    /// Stores.
    pub stores: usize,
    /// Atomics and reductions.
    pub atomics: usize,
    /// Fences (thread and proxy fences).
    pub fences: usize,
    /// Barriers.
    pub barriers: usize,
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} loads, {} stores, {} atomics, {} fences, {} barriers",
            self.loads, self.stores, self.atomics, self.fences, self.barriers
        )
    }
}

/// The functions of a `cuobjdump -sass` dump, with their counts.
pub type Functions = BTreeMap<String, Counts>;

/// Count the memory instructions of every function in `cuobjdump -sass` output.
pub fn parse(text: &str) -> Functions {
    let mut out = Functions::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("Function :") {
            let name = rest.trim().to_string();
            out.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        let Some(name) = &current else { continue };
        let Some(op) = opcode(l) else { continue };
        let c = out.entry(name.clone()).or_default();
        let mut parts = op.split('.');
        let base = parts.next().unwrap_or("");
        if op.split('.').any(|m| m == "128") {
            continue;
        }
        // Bank 0 holds the launch parameters and the driver's memory
        // descriptors, which every function loads: not a test access.
        if base == "LDC" && l.contains("c[0x0]") {
            continue;
        }
        match base {
            "LDG" | "LD" | "LDS" | "LDC" | "TLD" | "SULD" => c.loads += 1,
            "STG" | "ST" | "STS" | "SUST" => c.stores += 1,
            "ATOM" | "ATOMG" | "ATOMS" | "RED" | "REDG" => c.atomics += 1,
            "MEMBAR" | "FENCE" | "CCTL" => c.fences += 1,
            "BAR" => c.barriers += 1,
            _ => {}
        }
    }
    out
}

/// The opcode of an instruction line (`/*0040*/  @!P0 LDG.E.STRONG.GPU R2, [R4.64] ;`).
fn opcode(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("/*")?;
    let end = rest.find("*/")?;
    // The address: hexadecimal digits only (encoding comments are longer).
    let addr = &rest[..end];
    if addr.is_empty() || addr.len() > 6 || !addr.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let mut words = rest[end + 2..].split_whitespace();
    let mut w = words.next()?;
    if w.starts_with('@') {
        // `@!PT` guards an instruction that never executes (ptxas pads
        // fence.sc sequences with `@!PT LDS RZ, [RZ]`): not an access.
        if w == "@!PT" {
            return None;
        }
        w = words.next()?;
    }
    let w = w.trim_end_matches(';');
    (!w.is_empty() && w.chars().next()?.is_ascii_uppercase()).then_some(w)
}

/// What a litmus thread should compile to.
pub fn expected(th: &Thread) -> Counts {
    let mut c = Counts::default();
    for i in &th.code {
        match i {
            Instr::Load { .. } => c.loads += 1,
            Instr::Store { .. } => c.stores += 1,
            Instr::Rmw { .. } => c.atomics += 1,
            Instr::Fence { .. } | Instr::ProxyFence { .. } => c.fences += 1,
            Instr::Barrier { .. } => c.barriers += 1,
            _ => {}
        }
    }
    c
}

/// The SASS check of one litmus thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ThreadCheck {
    /// `P0`, `P1`, ...
    pub thread: String,
    /// The role function's name.
    pub function: String,
    /// What the litmus thread has.
    pub expected: Counts,
    /// What the SASS has; `None` when the function is not in the dump.
    pub found: Option<Counts>,
    /// Why the code does not match (empty: it matches).
    pub mismatches: Vec<String>,
}

/// The SASS check of one test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SassCheck {
    /// Per litmus thread.
    pub threads: Vec<ThreadCheck>,
}

impl SassCheck {
    /// Whether some thread's machine code does not match the test.
    pub fn compiler_altered(&self) -> bool {
        self.threads.iter().any(|t| !t.mismatches.is_empty())
    }
    /// Whether some role function is missing from the dump (the check is incomplete).
    pub fn missing(&self) -> Vec<&str> {
        self.threads
            .iter()
            .filter(|t| t.found.is_none())
            .map(|t| t.function.as_str())
            .collect()
    }
    /// One line per mismatch: `P1: 1 load in SASS, 2 in the test`.
    pub fn reasons(&self) -> Vec<String> {
        self.threads
            .iter()
            .flat_map(|t| {
                t.mismatches
                    .iter()
                    .map(move |m| format!("{}: {m}", t.thread))
            })
            .collect()
    }
}

/// Find a role function in the dump: its plain name, or a C++-mangled form.
fn find<'a>(funcs: &'a Functions, name: &str) -> Option<&'a Counts> {
    funcs.get(name).or_else(|| {
        let mangled = format!("_Z{}{name}", name.len());
        funcs
            .iter()
            .find(|(k, _)| k.starts_with(&mangled))
            .map(|(_, v)| v)
    })
}

/// Check every litmus thread of test `id` against the dump.
pub fn check(p: &Program, id: &str, funcs: &Functions) -> SassCheck {
    let threads = p
        .threads
        .iter()
        .enumerate()
        .map(|(t, th)| {
            let function = role_function(id, t);
            let expected = expected(th);
            let found = find(funcs, &function).copied();
            let mut mismatches = Vec::new();
            if let Some(f) = found {
                let exact = [
                    ("loads", f.loads, expected.loads),
                    ("stores", f.stores, expected.stores),
                    ("atomics", f.atomics, expected.atomics),
                    ("barriers", f.barriers, expected.barriers),
                ];
                // An unrolled loop repeats its accesses.
                let loops = th
                    .code
                    .iter()
                    .enumerate()
                    .any(|(pc, i)| matches!(i, Instr::Branch { target, .. } if *target <= pc));
                for (what, got, want) in exact {
                    let ok = if loops {
                        got >= want && (got == 0) == (want == 0)
                    } else {
                        got == want
                    };
                    if !ok {
                        let bound = if loops { " (a loop: at least)" } else { "" };
                        mismatches.push(format!("{got} {what} in SASS, {want} in the test{bound}"));
                    }
                }
                if f.fences < expected.fences {
                    mismatches.push(format!(
                        "{} fences in SASS, {} in the test",
                        f.fences, expected.fences
                    ));
                }
            }
            ThreadCheck {
                thread: th.name.clone(),
                function,
                expected,
                found,
                mismatches,
            }
        })
        .collect();
    SassCheck { threads }
}
