//! The oracle's static barrier planning (`docs/oracle.md`, "Barrier phases
//! before reads-from" and "Stuck sets at count-less barriers") keeps every
//! answer: with and without it the oracle gives the same final states,
//! loop-bound flag, termination verdict (the hang itself included) and
//! undefined behaviour on every litmus test and corpus kernel that has a
//! barrier, under both barrier readings, and on the barrier family; and it
//! pays on that family.

use std::path::{Path, PathBuf};

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::ir::Program;
use ptxmc::model::barrier::Reading;
use ptxmc::{families, litmus, ptx};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn ax(static_barriers: bool, barriers: Reading) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Ax,
        static_barriers,
        barriers,
        ..RunOptions::default()
    }
}

/// Runs `p` both ways under `reading`; returns the oracle's search nodes
/// (main and termination search together) with and without the planning.
fn same_both_ways(name: &str, p: &Program, reading: Reading) -> (u64, u64) {
    let a = engine::run(p, &ax(true, reading));
    let b = engine::run(p, &ax(false, reading));
    assert!(
        a.incomplete.is_none() && b.incomplete.is_none(),
        "{name}: incomplete"
    );
    assert_eq!(a.outcomes, b.outcomes, "{name}: outcomes changed");
    assert_eq!(a.bound_hit, b.bound_hit, "{name}: bound flag changed");
    assert_eq!(a.termination, b.termination, "{name}: termination changed");
    assert_eq!(a.undefined, b.undefined, "{name}: undefined changed");
    let nodes = |r: &engine::RunResult| {
        r.stats.ax.map_or(0, |s| s.nodes) + r.stats.ax_termination.map_or(0, |s| s.nodes)
    };
    (nodes(&a), nodes(&b))
}

#[test]
fn static_barriers_keep_every_answer_of_the_barrier_litmus_tests() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let mut n = 0;
    for f in litmus::collect_files(&dirs).unwrap() {
        let text = std::fs::read_to_string(&f).unwrap();
        if !(text.contains("bar.") || text.contains("barrier.")) {
            continue;
        }
        for t in litmus::parse_file(&f).unwrap() {
            for reading in [Reading::Isa, Reading::Dat3m] {
                same_both_ways(&t.display_path(), &t.program, reading);
            }
            n += 1;
        }
    }
    assert!(n > 100, "{n} tests with a barrier");
}

#[test]
fn static_barriers_keep_every_answer_of_the_barrier_kernels() {
    let mut n = 0;
    for e in std::fs::read_dir(root().join("kernels")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "ptx") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.contains("bar.sync") && !text.contains("barrier.sync") {
            continue;
        }
        let t = ptx::load_file(&path, None, None).unwrap_or_else(|e| panic!("{}", e.rendered()));
        // Without the planning, the oracle's termination search tries every
        // set of lanes stuck at a barrier: 2^64 for the 64-thread CUTLASS
        // named-barrier kernel, which `tests/kernels.rs` checks with it on.
        if t.program.threads.len() > 16 {
            continue;
        }
        // Two cooperative-groups grid barriers (four `bar.sync 0` per CTA
        // around two spins): without the planning its termination search
        // did not finish in 120 s (0.6 s with it, `tests/kernels_cg.rs`).
        if path.ends_with("cg_grid_sync_twice.ptx") {
            continue;
        }
        same_both_ways(&path.display().to_string(), &t.program, Reading::Isa);
        n += 1;
    }
    assert!(n >= 5, "{n} kernels with a barrier");
}

#[test]
fn static_barriers_keep_every_answer_of_the_barrier_family_and_pay() {
    for n in 1..=7 {
        let t = &litmus::parse_source("barrier.litmus", &families::cta_barrier(n)).unwrap()[0];
        let (with, without) = same_both_ways(&format!("Barrier-{n}"), &t.program, Reading::Isa);
        if n >= 4 {
            // Without the planning: 2^n - 1 stuck sets, each searched.
            assert!(
                with * 10 < without,
                "Barrier-{n}: {with} vs {without} nodes"
            );
        }
    }
}

/// The family's scale target (issue 27): 128 threads at one barrier, both
/// engines, complete, agreeing, with one search node per read (and its
/// final state) in the oracle and no stuck set built.
#[test]
fn the_barrier_family_at_128_threads_is_linear_in_both_engines() {
    let t = &litmus::parse_source("barrier.litmus", &families::cta_barrier(128)).unwrap()[0];
    let r = engine::run(&t.program, &RunOptions::default());
    assert!(r.incomplete.is_none());
    assert!(r.disagreement.is_none());
    assert_eq!(r.outcomes.len(), 1);
    assert!(!r.verdict.holds);
    assert!(r.termination.checked() && !r.termination.hangs());
    let ax = r.stats.ax.unwrap();
    assert_eq!(ax.nodes, 130);
    assert_eq!(r.stats.ax_termination.unwrap().path_combinations, 0);
    assert_eq!(r.stats.op.unwrap().distinct_states, 130);
}

/// Count-less lanes beside a counted barrier (issue 25): the warp barrier
/// family, whose count-less `bar.sync 0` shares its CTA with the counted
/// `bar.sync 1, 64`, keeps every answer without the planning at small sizes
/// (terminating, and hanging with a third warp counted), and the planning
/// pays there.
#[test]
fn static_barriers_keep_every_answer_of_the_warp_barrier_family_and_pay() {
    for lanes in 1..=4 {
        for counted in [2, 3] {
            let text = families::warp_barriers(2, lanes, counted);
            let t = &litmus::parse_source("warp.litmus", &text).unwrap()[0];
            let name = format!("Warp-barriers-2x{lanes}-{counted}");
            let (with, without) = same_both_ways(&name, &t.program, Reading::Isa);
            if lanes == 4 {
                assert!(with * 10 < without, "{name}: {with} vs {without} nodes");
            }
        }
    }
}

/// The target: two full warps of 32 lanes at a count-less and a counted
/// barrier, both engines, complete and agreeing: the stale read forbidden
/// and every run terminating; with three warps counted, the hang found and
/// every lane in it.
#[test]
fn two_warps_of_32_lanes_at_count_less_and_counted_barriers_are_answered() {
    for counted in [2, 3] {
        let text = families::warp_barriers(2, 32, counted);
        let t = &litmus::parse_source("warp.litmus", &text).unwrap()[0];
        let r = engine::run(&t.program, &RunOptions::default());
        assert!(r.incomplete.is_none(), "{counted}: {:?}", r.incomplete);
        assert!(r.disagreement.is_none(), "{counted}");
        assert!(r.undefined.is_none(), "{counted}");
        assert!(r.termination.checked());
        if counted == 2 {
            assert_eq!(r.outcomes.len(), 1);
            assert!(!r.verdict.holds);
            assert!(!r.termination.hangs());
        } else {
            assert!(r.termination.hangs());
            let hang = r.termination.hang().expect("a hang");
            assert_eq!(hang.stuck.len(), 64);
        }
    }
}
