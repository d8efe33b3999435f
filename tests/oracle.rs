//! The oracle's forced coherence (`docs/oracle.md`, "Forced coherence")
//! keeps every outcome: with and without it the oracle gives the same final
//! states, loop-bound flag and termination verdict on the whole public suite
//! and on seeded random tests of the shapes issue 15 measures, while
//! visiting fewer search nodes.

use std::path::{Path, PathBuf};

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::{families, litmus};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn ax(forced_coherence: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Ax,
        forced_coherence,
        ..RunOptions::default()
    }
}

/// Runs `p` both ways; returns the search nodes (with, without).
fn same_both_ways(name: &str, p: &ptxmc::ir::Program) -> (u64, u64) {
    let a = engine::run(p, &ax(true));
    let b = engine::run(p, &ax(false));
    assert!(
        a.incomplete.is_none() && b.incomplete.is_none(),
        "{name}: incomplete"
    );
    assert_eq!(
        a.outcomes, b.outcomes,
        "{name}: forced coherence changed the outcomes"
    );
    assert_eq!(a.bound_hit, b.bound_hit, "{name}");
    assert_eq!(
        (a.termination.checked(), a.termination.hangs()),
        (b.termination.checked(), b.termination.hangs()),
        "{name}: forced coherence changed the termination verdict"
    );
    (a.stats.ax.unwrap().nodes, b.stats.ax.unwrap().nodes)
}

#[test]
fn forced_coherence_keeps_every_outcome_of_the_public_suite() {
    let dirs = [
        root().join("tests/peers/dat3m/litmus/PTX"),
        root().join("tests/peers/mixedproxy/tests"),
        root().join("litmus"),
    ];
    let (mut with, mut without, mut n) = (0, 0, 0);
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            let (a, b) = same_both_ways(&t.display_path(), &t.program);
            with += a;
            without += b;
            n += 1;
        }
    }
    assert!(n > 900, "{n} tests");
    eprintln!(
        "oracle search nodes on {n} public tests: {with} with forced coherence, {without} without"
    );
    assert!(
        with < without,
        "forced coherence should pay: {with} vs {without}"
    );
}

#[test]
fn forced_coherence_keeps_every_outcome_of_random_tests() {
    let (mut with, mut without) = (0, 0);
    for (threads, len, seeds) in [(3, 4, 1..=40), (4, 4, 1..=10), (3, 6, 1..=4)] {
        for seed in seeds {
            let text = families::random(seed, threads, len);
            let t = &litmus::parse_source("random.litmus", &text).unwrap()[0];
            let (a, b) = same_both_ways(&format!("random {threads}x{len} seed {seed}"), &t.program);
            with += a;
            without += b;
        }
    }
    eprintln!(
        "oracle search nodes on random tests: {with} with forced coherence, {without} without"
    );
    assert!(
        with * 2 < without,
        "forced coherence should pay: {with} vs {without}"
    );
}
