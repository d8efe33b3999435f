//! The oracle's mbarrier chains read off the paths (`docs/oracle.md`,
//! "Mbarrier chains": the termination search leaves out a path combination
//! when no order of some mbarrier's operations lets its waits read what the
//! paths assumed) keep every answer: with and without them the oracle gives
//! the same final states, loop-bound flag, termination verdict (the hang
//! itself included), undefined behaviour and races on every litmus test of
//! the library and of Dat3M's suite with an mbarrier, every corpus kernel
//! with one, and the TMA pipeline family with its wrong-parity and
//! missing-fence variants, where the machine agrees; and they pay on the
//! pipeline.

mod same_answers;

use std::path::{Path, PathBuf};

use ptxmc::ax::mbar_chains::MbarChains;
use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::families;
use ptxmc::ir::Program;
use ptxmc::{litmus, ptx};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn ax(mbar_chains: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Ax,
        mbar_chains,
        ..RunOptions::default()
    }
}

fn has_chains(p: &Program) -> bool {
    MbarChains::new(&ptxmc::model::lower::lowered(p, 2)).is_some()
}

/// Runs `p` both ways; returns the termination search's nodes with and
/// without the chains, and the result with them.
fn same_both_ways(name: &str, p: &Program) -> (u64, u64, engine::RunResult) {
    let a = engine::run(p, &ax(true));
    let b = engine::run(p, &ax(false));
    same_answers::assert_same(name, &a, &b, true);
    let term = |r: &engine::RunResult| r.stats.ax_termination.map_or(0, |s| s.nodes);
    (term(&a), term(&b), a)
}

#[test]
fn mbar_chains_keep_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let (mut n, mut paid) = (0, 0);
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            // Without a chain the oracle runs the same code either way.
            if !has_chains(&t.program) {
                continue;
            }
            let (with, without, _) = same_both_ways(&t.display_path(), &t.program);
            paid += usize::from(with < without);
            n += 1;
        }
    }
    assert!(n > 50, "{n} tests with an mbarrier");
    assert!(paid >= 5, "{paid} tests searched less");
}

#[test]
fn mbar_chains_keep_every_answer_of_the_kernels_with_an_mbarrier() {
    let mut n = 0;
    for dir in ["kernels", "kernels/scale"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "ptx") {
                continue;
            }
            let t =
                ptx::load_file(&path, None, None).unwrap_or_else(|e| panic!("{}", e.rendered()));
            if !has_chains(&t.program) {
                continue;
            }
            same_both_ways(&path.display().to_string(), &t.program);
            n += 1;
        }
    }
    assert!(n >= 5, "{n} kernels with an mbarrier");
}

/// The pipeline of `stages` × `rounds`, and its two bugs: the producer's
/// round-1 wait on stage 0's empty barrier asks for the wrong parity, or
/// the consumer orders its read before its release with a generic fence
/// instead of `fence.proxy.async`.
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
fn mbar_chains_keep_every_answer_of_the_pipeline_family_and_pay() {
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
            let bug = name.contains("parity") || name.contains("fence");
            // A correct pipeline has no stuck combination left to search.
            if !bug {
                assert_eq!(with, 0, "{name}: {with} termination nodes");
                if s * r >= 2 {
                    assert!(without > 0, "{name}");
                }
            }
            let found = a.termination.hangs() || a.verdict.positive > 0;
            if bug && r >= 2 {
                assert!(found, "{name}: the bug is not found");
            } else if !bug {
                assert!(!found, "{name}: a bug where there is none");
            }
        }
    }
}
