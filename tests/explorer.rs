//! The explorer: deterministic results for any number of workers, the same
//! outcomes with and without partial-order reduction, and limits that end a
//! run as incomplete instead of running out of time or memory.

use std::path::{Path, PathBuf};
use std::process::Command;

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::explore::Limits;
use ptxmc::litmus;

mod sample;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn public_suite() -> Vec<litmus::LitmusTest> {
    let dirs = [
        root().join("tests/peers/dat3m/litmus/PTX"),
        root().join("tests/peers/mixedproxy/tests"),
        root().join("litmus"),
    ];
    litmus::collect_files(&dirs)
        .unwrap()
        .iter()
        .flat_map(|f| litmus::parse_file(f).unwrap())
        .collect()
}

fn op(jobs: usize, por: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Op,
        jobs,
        por,
        ..RunOptions::default()
    }
}

#[test]
fn one_and_two_workers_give_identical_outcomes_and_counts() {
    let tests = public_suite();
    assert!(tests.len() > 900);
    // A part of the suite by default, all of it with PTXMC_DEEP=1.
    let tests = sample::corpus(tests);
    for t in &tests {
        let a = engine::run(&t.program, &op(1, true));
        let b = engine::run(&t.program, &op(2, true));
        assert_eq!(a.outcomes, b.outcomes, "{}", t.display_path());
        assert_eq!(a.bound_hit, b.bound_hit, "{}", t.display_path());
        // The same hang witness, not only the same verdict.
        assert_eq!(a.termination, b.termination, "{}", t.display_path());
        let (sa, sb) = (a.stats.op.unwrap(), b.stats.op.unwrap());
        assert_eq!(
            (
                sa.states,
                sa.distinct_states,
                sa.transitions,
                sa.eager_steps,
                sa.dedup_hits,
                sa.por_pruned,
                sa.persistent_states,
                sa.dead_ends,
                sa.final_states
            ),
            (
                sb.states,
                sb.distinct_states,
                sb.transitions,
                sb.eager_steps,
                sb.dedup_hits,
                sb.por_pruned,
                sb.persistent_states,
                sb.dead_ends,
                sb.final_states
            ),
            "{}: counts differ between 1 and 2 workers",
            t.display_path()
        );
    }
}

#[test]
fn partial_order_reduction_keeps_every_outcome() {
    // CADP liveness tests are skipped: without reduction their loops take
    // minutes; the random programs below cover loops-free code broadly.
    let tests: Vec<_> = public_suite()
        .into_iter()
        .filter(|t| !t.path.contains("/CADP/"))
        .collect();
    let tests = sample::corpus(tests);
    let mut reduced_total = 0;
    let mut full_total = 0;
    for t in &tests {
        let a = engine::run(&t.program, &op(1, true));
        let b = engine::run(&t.program, &op(1, false));
        assert_eq!(
            a.outcomes,
            b.outcomes,
            "{}: POR changed the outcomes",
            t.display_path()
        );
        assert_eq!(a.bound_hit, b.bound_hit, "{}", t.display_path());
        assert_eq!(
            (a.termination.checked(), a.termination.hangs()),
            (b.termination.checked(), b.termination.hangs()),
            "{}: POR changed the termination verdict",
            t.display_path()
        );
        reduced_total += a.stats.op.unwrap().distinct_states;
        full_total += b.stats.op.unwrap().distinct_states;
    }
    assert!(
        full_total > 5 * reduced_total,
        "POR should pay: {reduced_total} vs {full_total} states"
    );
}

/// Each reduction added on top of R1 (lazy coherence, P2) keeps every
/// outcome, the bound verdict and the termination verdict when it is turned
/// off alone, on the whole public suite (CADP included: R1 stays on).
#[test]
fn lazy_coherence_and_persistent_choices_keep_every_outcome() {
    let tests = sample::corpus(public_suite());
    let (mut on, mut eager, mut no_p2) = (0u64, 0u64, 0u64);
    for t in &tests {
        let a = engine::run(&t.program, &op(1, true));
        for (what, off) in [
            (
                "lazy coherence",
                RunOptions {
                    lazy_coherence: false,
                    ..op(1, true)
                },
            ),
            (
                "P2",
                RunOptions {
                    persistent: false,
                    ..op(1, true)
                },
            ),
        ] {
            let b = engine::run(&t.program, &off);
            assert_eq!(
                a.outcomes,
                b.outcomes,
                "{}: {what} changed the outcomes",
                t.display_path()
            );
            assert_eq!(a.bound_hit, b.bound_hit, "{}: {what}", t.display_path());
            assert_eq!(
                (a.termination.checked(), a.termination.hangs()),
                (b.termination.checked(), b.termination.hangs()),
                "{}: {what} changed the termination verdict",
                t.display_path()
            );
            let n = b.stats.op.unwrap().distinct_states;
            if what == "P2" {
                no_p2 += n;
            } else {
                eager += n;
            }
        }
        on += a.stats.op.unwrap().distinct_states;
    }
    eprintln!(
        "distinct states on the public suite: both on {on}, eager coherence {eager}, without P2 {no_p2}"
    );
    assert!(
        on < eager && on <= no_p2,
        "the reductions should pay: {on} vs {eager} / {no_p2}"
    );
}

#[test]
fn exact_mode_gives_the_same_results_as_fingerprints() {
    for f in [
        "litmus/iriw/IRIW+rlx-fence.acq_rel-rlx.gpu.litmus",
        "litmus/rmw/MP+rel+atom.rlx+acq.gpu.litmus",
    ] {
        let path = root().join(f);
        let t = &litmus::parse_file(&path).unwrap()[0];
        let a = engine::run(&t.program, &op(1, true));
        let b = engine::run(
            &t.program,
            &RunOptions {
                exact: true,
                ..op(1, true)
            },
        );
        assert_eq!(a.outcomes, b.outcomes);
        assert_eq!(
            a.stats.op.unwrap().distinct_states,
            b.stats.op.unwrap().distinct_states
        );
    }
}

#[test]
fn a_state_limit_makes_the_run_incomplete() {
    let t = &litmus::parse_file(&root().join("litmus/iriw/IRIW+rlx.gpu.litmus")).unwrap()[0];
    let opts = RunOptions {
        limits: Limits {
            max_states: Some(5),
            ..Limits::default()
        },
        ..op(1, true)
    };
    let r = engine::run(&t.program, &opts);
    assert_eq!(
        r.incomplete.as_deref(),
        Some("operational engine: the state limit (5) was reached")
    );
    let full = engine::run(&t.program, &op(1, true));
    assert!(r.outcomes.is_subset(&full.outcomes));
}

fn ptxmc(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn limits_exit_4_with_an_incomplete_verdict() {
    let (code, out) = ptxmc(&[
        "run",
        "--engine",
        "op",
        "--max-states",
        "3",
        "litmus/iriw/IRIW+rlx.gpu.litmus",
    ]);
    assert_eq!(code, 4);
    assert!(out.contains("Incomplete: operational engine: the state limit (3) was reached; the states below are only those found\n"), "{out}");
    let (code, out) = ptxmc(&[
        "run",
        "--max-memory",
        "1",
        "--format",
        "json",
        "litmus/iriw/IRIW+rlx.gpu.litmus",
    ]);
    assert_eq!(code, 4, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["complete"], false);
    assert!(
        v[0]["incomplete_reason"]
            .as_str()
            .unwrap()
            .contains("the memory limit (1 MiB) was reached")
    );
}

#[test]
fn a_limit_leaves_termination_not_checked() {
    let (code, out) = ptxmc(&[
        "run",
        "--max-states",
        "2",
        "--format",
        "json",
        "litmus/liveness/SplitK-flag-chain-broken.litmus",
    ]);
    assert_eq!(code, 4, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["termination"]["checked"], false);
    assert_eq!(v[0]["termination"]["hangs"], false);
    assert_eq!(
        v[0]["termination"]["why"],
        "a limit stopped the run before every state was seen"
    );
}

#[test]
fn json_stats_carry_the_documented_fields() {
    let (code, out) = ptxmc(&["run", "--format", "json", "litmus/mp/MP+rel+acq.gpu.litmus"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let stats = v[0]["stats"].as_object().unwrap();
    let names: Vec<&str> = stats.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "executions",
            "states_per_execution",
            "states",
            "distinct_states",
            "transitions",
            "dedup_hits",
            "por_pruned",
            "elapsed_s",
            "states_per_s",
            "peak_rss_bytes"
        ]
    );
    assert!(stats.values().all(serde_json::Value::is_number));
}

/// On the scaling families of issue 15 the machine stores at most two states
/// per consistent execution the oracle enumerates (P2 and lazy coherence: a
/// constant, not a growth with n), and both engines give the same outcomes.
#[test]
fn scaling_families_store_at_most_two_states_per_execution() {
    use ptxmc::families;
    let cases = [
        ("IRIW-6", families::iriw(6)),
        ("MP-chain-8", families::mp_chain(8)),
        ("SB-ring-8", families::sb_ring(8)),
        ("writers-6", families::writers(6)),
        ("random-4x4-seed-1", families::random(1, 4, 4)),
    ];
    for (name, text) in cases {
        let t = &litmus::parse_source("family.litmus", &text).unwrap()[0];
        let r = engine::run(
            &t.program,
            &RunOptions {
                engine: EngineChoice::Both,
                ..RunOptions::default()
            },
        );
        assert!(r.incomplete.is_none() && r.disagreement.is_none(), "{name}");
        let states = r.stats.op.unwrap().distinct_states;
        let executions = r.stats.ax.unwrap().executions;
        assert!(
            states <= 2 * executions,
            "{name}: {states} states for {executions} executions"
        );
    }
}
