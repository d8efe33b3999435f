//! The oracle's forced reads first (`docs/oracle.md`, "Forced reads
//! first": at each node of reads-from, bind a read that has one candidate
//! left, and drop a node where some read has none) keeps every answer: with
//! and without it the oracle gives the same final states, loop-bound flag,
//! termination verdict (the hang itself included), undefined behaviour and
//! races on every litmus test of the library and of Dat3M's suite, and on
//! the TMA pipeline family with its wrong-parity and missing-fence
//! variants, where the machine agrees; and it pays on the pipeline.

mod same_answers;

use std::path::{Path, PathBuf};

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::families;
use ptxmc::ir::Program;
use ptxmc::litmus;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn ax(forced_reads: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Ax,
        forced_reads,
        ..RunOptions::default()
    }
}

/// Runs `p` both ways; returns the oracle's search nodes (outcome search)
/// with and without forced reads, and the result with them.
fn same_both_ways(name: &str, p: &Program) -> (u64, u64, engine::RunResult) {
    let a = engine::run(p, &ax(true));
    let b = engine::run(p, &ax(false));
    same_answers::assert_same(name, &a, &b, true);
    let nodes = |r: &engine::RunResult| r.stats.ax.map_or(0, |s| s.nodes);
    (nodes(&a), nodes(&b), a)
}

#[test]
fn forced_reads_keep_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let (mut n, mut paid) = (0, 0);
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            let (with, without, _) = same_both_ways(&t.display_path(), &t.program);
            paid += usize::from(with < without);
            n += 1;
        }
    }
    assert!(n > 900, "{n} tests");
    assert!(paid >= 10, "{paid} tests searched less");
}

/// The pipeline of `stages` × `rounds`, and its two bugs: the producer's
/// round-1 wait on stage 0's empty barrier asks for the wrong parity
/// (`litmus/liveness/Pipeline-2stage-2round-wrong-parity.litmus`), or the
/// consumer orders its read before its release with a generic fence
/// instead of `fence.proxy.async` (`…-no-proxy-fence`).
fn variants(stages: usize, rounds: usize) -> Vec<(String, String)> {
    let text = families::pipeline(stages, rounds);
    let mut out = vec![(format!("pipeline {stages}x{rounds}"), text.clone())];
    if rounds >= 2 {
        assert!(text.contains("[empty0], 0"));
        out.push((
            format!("pipeline {stages}x{rounds}, wrong parity"),
            text.replacen("[empty0], 0", "[empty0], 1", 1),
        ));
    }
    out.push((
        format!("pipeline {stages}x{rounds}, no proxy fence"),
        text.replace("fence.proxy.async.shared::cta", "fence.acq_rel.cta"),
    ));
    out
}

#[test]
fn forced_reads_keep_every_answer_of_the_pipeline_family_and_pay() {
    for (s, r) in [(1, 1), (1, 2), (2, 1), (1, 3), (3, 1), (2, 2)] {
        for (name, text) in variants(s, r) {
            let t = &litmus::parse_source("pipeline.litmus", &text).unwrap()[0];
            let (with, without, a) = same_both_ways(&name, &t.program);
            // The machine agrees.
            let m = engine::run(
                &t.program,
                &RunOptions {
                    engine: EngineChoice::Op,
                    ..RunOptions::default()
                },
            );
            assert!(m.incomplete.is_none(), "{name}: machine incomplete");
            assert_eq!(m.outcomes, a.outcomes, "{name}: engines disagree");
            assert_eq!(
                m.termination.hangs(),
                a.termination.hangs(),
                "{name}: termination"
            );
            assert_eq!(m.undefined, a.undefined, "{name}: undefined");
            if s * r >= 4 {
                assert!(
                    with * 4 < without,
                    "{name}: {with} nodes, {without} without"
                );
            }
            // The bugs are found: the condition holds or a hang is reported.
            let bug = name.contains("parity") || name.contains("fence");
            let found = a.termination.hangs() || a.verdict.positive > 0;
            if bug && r >= 2 {
                assert!(found, "{name}: the bug is not found");
            } else if !bug {
                assert!(!found, "{name}: a bug where there is none");
            }
        }
    }
}
