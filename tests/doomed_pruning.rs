//! Dropping doomed speculation (`docs/exploration.md`, "Doomed
//! speculation": a state whose issued write or bound read can never retire,
//! or would fail its retirement's coherence check, is dropped at once) keeps
//! every answer: with and without it the machine gives the same final
//! states, loop-bound flag, termination verdict (the hang itself included)
//! and undefined behaviour on every litmus test of the library and of
//! Dat3M's suite, every corpus kernel, the scaling families, the TMA
//! pipeline family and seeded random programs — and never stores more
//! states.

mod same_answers;

use std::path::{Path, PathBuf};

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::families::{self, Arrival};
use ptxmc::ir::Program;
use ptxmc::{litmus, ptx};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn op(prune_doomed: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Op,
        prune_doomed,
        jobs: 1,
        ..RunOptions::default()
    }
}

/// Runs `p` with and without the pruning; asserts the same answers and no
/// more states with it. Returns the states stored (with, without).
fn same_both_ways(name: &str, p: &Program) -> (u64, u64) {
    let a = engine::run(p, &op(true));
    let b = engine::run(p, &op(false));
    same_answers::assert_same(name, &a, &b, true);
    assert_eq!(a.verdict, b.verdict, "{name}: verdict changed");
    let sa = a.stats.op.expect("the machine ran").distinct_states;
    let sb = b.stats.op.expect("the machine ran").distinct_states;
    assert!(
        sa <= sb,
        "{name}: {sa} states with the pruning, {sb} without"
    );
    (sa, sb)
}

fn parse(text: &str) -> Program {
    litmus::parse_source("doomed.litmus", text)
        .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()))
        .remove(0)
        .program
}

#[test]
fn doomed_pruning_keeps_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let (mut n, mut fewer) = (0, 0);
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            let (a, b) = same_both_ways(&t.display_path(), &t.program);
            fewer += (a < b) as usize;
            n += 1;
        }
    }
    assert!(n > 900, "{n} tests");
    // The async tests (agents forwarded ahead of their start) are pruned.
    assert!(fewer > 10, "{fewer} tests with fewer states");
}

#[test]
fn doomed_pruning_keeps_every_answer_of_the_kernels() {
    let mut n = 0;
    for dir in ["kernels", "kernels/scale"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "ptx") {
                continue;
            }
            let t =
                ptx::load_file(&path, None, None).unwrap_or_else(|e| panic!("{}", e.rendered()));
            same_both_ways(&path.display().to_string(), &t.program);
            n += 1;
        }
    }
    assert!(n >= 10, "{n} kernels");
}

#[test]
fn doomed_pruning_keeps_every_answer_of_the_families() {
    for n in 2..=5 {
        same_both_ways(&format!("barrier-{n}"), &parse(&families::cta_barrier(n)));
        same_both_ways(&format!("sb-{n}"), &parse(&families::sb_ring(n)));
        same_both_ways(&format!("writers-{n}"), &parse(&families::writers(n)));
        same_both_ways(&format!("iriw-{n}"), &parse(&families::iriw(n)));
        same_both_ways(&format!("counter-{n}"), &parse(&families::counter(n)));
    }
    for n in 1..=3 {
        for arrival in [Arrival::Red, Arrival::Atom] {
            same_both_ways(
                &format!("grid-{arrival:?}-{n}"),
                &parse(&families::grid_barrier(n, arrival)),
            );
        }
    }
}

/// The family the pruning is for: fewer states at every size, the same
/// final state and termination verdict.
#[test]
fn doomed_pruning_keeps_every_answer_of_the_pipeline() {
    for (s, r) in [(1, 1), (1, 2), (2, 1), (1, 3), (3, 1), (2, 2)] {
        let (a, b) = same_both_ways(
            &format!("pipeline-{s}x{r}"),
            &parse(&families::pipeline(s, r)),
        );
        if r > 1 {
            assert!(a < b, "pipeline-{s}x{r}: {a} states with, {b} without");
        }
    }
}

/// A pipeline whose consumer waits on the wrong parity hangs; one whose
/// producer arms the barrier with too few bytes completes early. The
/// pruning keeps the hang and the outcomes.
#[test]
fn doomed_pruning_keeps_the_pipeline_bugs() {
    let good = families::pipeline(2, 2);
    let parity = good.replacen("[full1], 1 ;", "[full1], 0 ;", 1);
    assert_ne!(parity, good, "the mutation applies");
    let (_, _) = same_both_ways("pipeline-2x2-parity", &parse(&parity));
    let short = good.replacen("[full0], 4 ", "[full0], 2 ", 1);
    assert_ne!(short, good, "the mutation applies");
    same_both_ways("pipeline-2x2-short", &parse(&short));
}

/// Random programs of a few threads on few locations: forwarding, RMWs and
/// speculation that fails late.
#[test]
fn doomed_pruning_keeps_every_answer_of_random_programs() {
    for seed in 1..=100 {
        for (threads, instrs) in [(2, 5), (3, 4), (4, 3)] {
            same_both_ways(
                &format!("random-{seed}-{threads}x{instrs}"),
                &parse(&families::random(seed, threads, instrs)),
            );
        }
    }
}
