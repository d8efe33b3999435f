//! The machine's incremental SC-per-location check (`docs/exploration.md`,
//! "Incremental SC per location": after a step, only cycles through what it
//! added are looked for) gives the whole check's answer: with and without
//! it the machine stores the same states, makes the same transitions and
//! gives the same answers (final states, loop-bound flag, termination
//! verdict, undefined behaviour, races) on every litmus test of the library
//! and of Dat3M's suite, every corpus kernel, the scaling families and
//! seeded random programs. The check decides which steps survive, so a
//! single different answer of it would show as a different count.

mod same_answers;

use std::path::{Path, PathBuf};

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::families::{self, Arrival};
use ptxmc::ir::Program;
use ptxmc::{litmus, ptx};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn op(incremental_sc: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Op,
        incremental_sc,
        // One worker: the transitions counted are then the same run to run.
        jobs: 1,
        ..RunOptions::default()
    }
}

/// Runs `p` with and without the incremental check; asserts the same
/// answers and the same exploration. Returns the states stored.
fn same_both_ways(name: &str, p: &Program) -> u64 {
    let a = engine::run(p, &op(true));
    let b = engine::run(p, &op(false));
    same_answers::assert_same(name, &a, &b, true);
    assert_eq!(a.verdict, b.verdict, "{name}: verdict changed");
    let sa = a.stats.op.expect("the machine ran");
    let sb = b.stats.op.expect("the machine ran");
    assert_eq!(
        (
            sa.distinct_states,
            sa.transitions,
            sa.dead_ends,
            sa.final_states
        ),
        (
            sb.distinct_states,
            sb.transitions,
            sb.dead_ends,
            sb.final_states
        ),
        "{name}: states, transitions, dead ends or final states changed"
    );
    sa.distinct_states
}

fn parse(text: &str) -> Program {
    litmus::parse_source("inc.litmus", text)
        .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()))
        .remove(0)
        .program
}

#[test]
fn incremental_sc_keeps_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let mut n = 0;
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            same_both_ways(&t.display_path(), &t.program);
            n += 1;
        }
    }
    assert!(n > 900, "{n} tests");
}

#[test]
fn incremental_sc_keeps_every_answer_of_the_kernels() {
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
fn incremental_sc_keeps_every_answer_of_the_families() {
    for n in 2..=6 {
        same_both_ways(&format!("barrier-{n}"), &parse(&families::cta_barrier(n)));
        same_both_ways(&format!("sb-{n}"), &parse(&families::sb_ring(n)));
        same_both_ways(&format!("writers-{n}"), &parse(&families::writers(n)));
        same_both_ways(&format!("iriw-{n}"), &parse(&families::iriw(n)));
    }
    for n in 1..=4 {
        for arrival in [Arrival::Red, Arrival::Atom] {
            same_both_ways(
                &format!("grid-{arrival:?}-{n}"),
                &parse(&families::grid_barrier(n, arrival)),
            );
        }
    }
    // The chain of additions the incremental check is for.
    let mut last = 0;
    for n in 2..=12 {
        last = same_both_ways(&format!("counter-{n}"), &parse(&families::counter(n)));
    }
    assert!(last > 1000, "counter-12: {last} states");
}

/// Random programs of a few threads on few locations: coherence
/// orientations both ways, forwarding, RMWs and cycles the check must find.
#[test]
fn incremental_sc_keeps_every_answer_of_random_programs() {
    for seed in 1..=150 {
        for (threads, instrs) in [(2, 5), (3, 4), (4, 3)] {
            same_both_ways(
                &format!("random-{seed}-{threads}x{instrs}"),
                &parse(&families::random(seed, threads, instrs)),
            );
        }
    }
}
