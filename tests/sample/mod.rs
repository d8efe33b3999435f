//! How much the slow tests sample: by default a deterministic part of each
//! corpus and a tenth of each random campaign, so that `cargo test
//! --release` takes minutes; with `PTXMC_DEEP=1` (as `.ci/run` sets) every
//! test of every corpus and the full campaigns. `PROPTEST_CASES=N` sets the
//! cases of every random campaign (proptest's and the hand-driven samples')
//! whatever the depth. What each test asserts is the same either way.

#![allow(dead_code)] // each test binary uses part of it

/// Whether the deep campaigns run (`PTXMC_DEEP` set, and not `0`).
pub fn deep() -> bool {
    std::env::var("PTXMC_DEEP").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// In a default run, one element of each `STRIDE` of a corpus is kept.
pub const STRIDE: usize = 6;

/// The part of `xs` a test runs: all of it when deep, otherwise every
/// [`STRIDE`]-th element (from the first), so every family of a sorted
/// corpus keeps some of its members.
pub fn corpus<T>(xs: Vec<T>) -> Vec<T> {
    if deep() {
        return xs;
    }
    xs.into_iter().step_by(STRIDE).collect()
}

/// How many elements of `n` a test runs ([`corpus`]).
pub fn corpus_len(n: usize) -> usize {
    if deep() { n } else { n.div_ceil(STRIDE) }
}

/// The cases of a random campaign whose full size is `full`:
/// `PROPTEST_CASES` if set, `full` when deep, a tenth of it otherwise.
pub fn cases(full: u32) -> u32 {
    if let Some(n) = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    if deep() { full } else { full.div_ceil(10) }
}

/// A coverage threshold `at_full` (a count that a campaign of `full` cases
/// must reach: programs that hang, that terminate, ...) in proportion to
/// the cases run ([`cases`]).
pub fn share(at_full: usize, full: u32) -> usize {
    at_full * cases(full) as usize / full as usize
}
