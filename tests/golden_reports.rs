//! The herd-style and JSON reports, pinned byte for byte (times zeroed).

use std::path::Path;

use ptxmc::engine::{self, RunOptions};
use ptxmc::litmus;
use ptxmc::model::Model;
use ptxmc::report::{self, TestReport};

fn run(rel: &str, instance: usize) -> (String, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let tests = litmus::parse_file(&path).unwrap_or_else(|e| panic!("{}", e.rendered()));
    let t = &tests[instance];
    let mut r = engine::run(&t.program, &RunOptions::default());
    r.seconds = 0.0;
    let rep = TestReport {
        program: &t.program,
        file: rel.to_string(),
        model: Model::Ptx75,
        result: &r,
        notes: t.notes(),
        undefined: r.undefined.as_ref().map(|u| report::ub::of(t, u)),
        races: report::races::of(t, &r.races),
    };
    let mut json = report::json::report(&rep);
    json["time_s"] = serde_json::json!(0.0);
    // Times and memory vary from run to run.
    for path in [&["stats"][..], &["engine_stats", "op"][..]] {
        let obj = path.iter().fold(&mut json, |v, k| &mut v[*k]);
        if let Some(o) = obj.as_object_mut() {
            for k in ["elapsed_s", "states_per_s", "peak_rss_bytes"] {
                if o.contains_key(k) {
                    o.insert(k.to_string(), serde_json::json!(0));
                }
            }
        }
    }
    // Positions name the file as it was opened (an absolute path here):
    // the snapshots keep it relative to the repository.
    let prefix = format!("{}/", env!("CARGO_MANIFEST_DIR"));
    (
        report::herd::report(&rep).replace(&prefix, ""),
        serde_json::to_string_pretty(&json)
            .unwrap()
            .replace(&prefix, ""),
    )
}

#[test]
fn herd_mp_release_acquire() {
    insta::assert_snapshot!(run("litmus/mp/MP+rel+acq.gpu.litmus", 0).0);
}

#[test]
fn herd_sb_relaxed() {
    insta::assert_snapshot!(run("litmus/sb/SB+rlx.gpu.litmus", 0).0);
}

#[test]
fn herd_iriw_acq_rel_fences() {
    insta::assert_snapshot!(run("litmus/iriw/IRIW+rlx-fence.acq_rel-rlx.gpu.litmus", 0).0);
}

#[test]
fn herd_mixedproxy_instance_with_expectation() {
    insta::assert_snapshot!(run("tests/peers/mixedproxy/tests/MP_gpu_synonym.test", 18).0);
}

#[test]
fn herd_loop_bound_reached() {
    insta::assert_snapshot!(
        run(
            "tests/peers/dat3m/litmus/PTX/CADP/2_threads_2_instructions/0_simple.litmus",
            0
        )
        .0
    );
}

#[test]
fn herd_retry_loop_needs_no_bound() {
    insta::assert_snapshot!(
        run(
            "tests/peers/dat3m/litmus/PTX/Manual/MICRO24-Fig4b.litmus",
            0
        )
        .0
    );
}

#[test]
fn herd_deadlock() {
    insta::assert_snapshot!(run("litmus/liveness/Bar-count-too-high.litmus", 0).0);
}

#[test]
fn herd_spin() {
    insta::assert_snapshot!(run("litmus/liveness/Flag-never-set.litmus", 0).0);
}

#[test]
fn json_hang() {
    insta::assert_snapshot!(run("litmus/liveness/TMA-expect_tx-wrong.litmus", 0).1);
}

#[test]
fn json_termination_not_checked() {
    let json = run(
        "tests/peers/dat3m/litmus/PTX/CADP/2_threads_2_instructions/0_simple.litmus",
        0,
    )
    .1;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    insta::assert_snapshot!(serde_json::to_string_pretty(&v["termination"]).unwrap());
}

#[test]
fn herd_forall_condition() {
    insta::assert_snapshot!(
        run(
            "tests/peers/dat3m/litmus/PTX/Manual/SB+bar-const-equal.litmus",
            0
        )
        .0
    );
}

#[test]
fn json_mp_release_acquire() {
    insta::assert_snapshot!(run("litmus/mp/MP+rel+acq.gpu.litmus", 0).1);
}

fn trace(rel: &str, outcome: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let t = &litmus::parse_file(&path).unwrap()[0];
    let m = ptxmc::op::Machine::new(&t.program, 2).unwrap();
    let want = litmus::cond::parse_outcome(&t.program, &t.spans, outcome).unwrap();
    let choices = m.shortest_run(&want, 1_000_000).expect("reachable");
    let tr = m.replay(&choices).unwrap();
    // Replaying the printed choices gives the same run.
    assert_eq!(m.replay(&tr.choices).unwrap().final_states, tr.final_states);
    report::trace::text(&m.program, &m.columns, Some(outcome), &tr, Path::new(rel))
}

#[test]
fn trace_mp_release_acquire() {
    insta::assert_snapshot!(trace(
        "litmus/mp/MP+rel+acq.gpu.litmus",
        "P1:r0=1 /\\ P1:r1=1"
    ));
}

#[test]
fn trace_sb_relaxed() {
    insta::assert_snapshot!(trace("litmus/sb/SB+rlx.gpu.litmus", "P0:r0=0 /\\ P1:r1=0"));
}

#[test]
fn trace_iriw_acq_rel_fences() {
    insta::assert_snapshot!(trace(
        "litmus/iriw/IRIW+rlx-fence.acq_rel-rlx.gpu.litmus",
        "P1:r1=1 /\\ P1:r2=0 /\\ P2:r3=1 /\\ P2:r4=0"
    ));
}

#[test]
fn trace_surface_proxy_fences() {
    insta::assert_snapshot!(trace(
        "litmus/proxy/MP-surf+fence.proxy.surface-rel+acq-fence.proxy.surface.gpu.litmus",
        "P1:r0=1 /\\ P1:r1=2"
    ));
}

#[test]
fn trace_tma_store_stale_copy() {
    insta::assert_snapshot!(trace("litmus/async/Y1+tma-store.litmus", "P0:r0=0"));
}

#[test]
fn trace_tma_load_mbarrier_phase() {
    insta::assert_snapshot!(trace(
        "litmus/async/Y3+tma-load+wait.acquire.litmus",
        "P1:r0=1 /\\ P1:r1=42"
    ));
}

fn hang_trace(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let t = &litmus::parse_file(&path).unwrap()[0];
    let m = ptxmc::op::Machine::new(&t.program, 2).unwrap();
    let lasso = m.shortest_hang(1_000_000).expect("a hang");
    let stem = m.replay(&lasso.choices).unwrap();
    report::trace::hang_text(&t.program, &stem, &lasso, Path::new(rel))
}

#[test]
fn trace_hang_spin_lock_never_released() {
    insta::assert_snapshot!(hang_trace("litmus/liveness/Spinlock-never-released.litmus"));
}

#[test]
fn trace_hang_cluster_barrier_missing_cta() {
    insta::assert_snapshot!(hang_trace(
        "litmus/liveness/Cluster-barrier-missing-cta.litmus"
    ));
}

#[test]
fn trace_hang_refused_when_every_execution_terminates() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus/liveness/Spinlock-cas-2cta.litmus");
    let t = &litmus::parse_file(&path).unwrap()[0];
    let m = ptxmc::op::Machine::new(&t.program, 2).unwrap();
    assert_eq!(
        m.shortest_hang(1_000_000).unwrap_err(),
        ptxmc::op::trace::TraceError::NoHang { bound_hit: false }
    );
}

#[test]
fn trace_unreachable_outcome_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus/mp/MP+rel+acq.gpu.litmus");
    let t = &litmus::parse_file(&path).unwrap()[0];
    let m = ptxmc::op::Machine::new(&t.program, 2).unwrap();
    let want = litmus::cond::parse_outcome(&t.program, &t.spans, "P1:r0=1 /\\ P1:r1=0").unwrap();
    assert_eq!(
        m.shortest_run(&want, 1_000_000),
        Err(ptxmc::op::trace::TraceError::Unreachable)
    );
}
