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
    };
    let mut json = report::json::report(&rep);
    json["time_s"] = serde_json::json!(0.0);
    if let Some(op) = json["engine_stats"].get_mut("op") {
        op["elapsed_s"] = serde_json::json!(0.0);
    }
    (
        report::herd::report(&rep),
        serde_json::to_string_pretty(&json).unwrap(),
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
    insta::assert_snapshot!(run("../shared/peers/mixedproxy/tests/MP_gpu_synonym.test", 18).0);
}

#[test]
fn herd_loop_bound_reached() {
    insta::assert_snapshot!(
        run(
            "../shared/peers/dat3m/litmus/PTX/Manual/MICRO24-Fig4b.litmus",
            0
        )
        .0
    );
}

#[test]
fn herd_forall_condition() {
    insta::assert_snapshot!(
        run(
            "../shared/peers/dat3m/litmus/PTX/Manual/SB+bar-const-equal.litmus",
            0
        )
        .0
    );
}

#[test]
fn json_mp_release_acquire() {
    insta::assert_snapshot!(run("litmus/mp/MP+rel+acq.gpu.litmus", 0).1);
}
