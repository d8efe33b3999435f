//! The `ptxmc` binary end to end: output formats and exit statuses.

use std::process::Command;

fn ptxmc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("ptxmc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn parse_prints_canonical_text() {
    let (code, out, err) = ptxmc(&["parse", "litmus/mp/MP+rel+acq.gpu.litmus"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("PTX MP+rel+acq.gpu\n"), "{out}");
    assert!(
        out.contains(" P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;\n"),
        "{out}"
    );
    assert!(out.contains("st.release.gpu f, 1"), "{out}");
}

#[test]
fn parse_json_expands_mixedproxy_templates() {
    let (code, out, err) = ptxmc(&[
        "parse",
        "--format",
        "json",
        "tests/peers/mixedproxy/tests/MP_gpu.test",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let tests = v.as_array().unwrap();
    assert_eq!(tests.len(), 18);
    assert_eq!(tests[0]["instance"], 1);
    assert_eq!(tests[0]["program"]["name"], "MP_gpu[1]");
    assert_eq!(tests[0]["program"]["threads"][1]["placement"]["cta"], 1);
    assert_eq!(tests[0]["program"]["expectation"]["kind"], "assert");
    assert_eq!(tests[0]["program"]["condition"]["quantifier"], "forall");
}

#[test]
fn parse_error_exits_2_with_position() {
    let dir = std::env::temp_dir().join(format!("ptxmc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.litmus");
    std::fs::write(
        &f,
        "PTX bad\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1, 2 ;\nexists (x == 1)\n",
    )
    .unwrap();
    let (code, out, err) = ptxmc(&["parse", f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.starts_with("error: expected operands `addr, value`, found 3 operands\n"),
        "{err}"
    );
    assert!(err.contains("bad.litmus:4:16\n"), "{err}");
}

#[test]
fn missing_file_exits_2() {
    let (code, _, err) = ptxmc(&["parse", "no/such/file.litmus"]);
    assert_eq!(code, 2);
    assert!(err.contains("no/such/file.litmus"), "{err}");
    assert!(
        err.starts_with("error: expected a readable file, found an I/O error"),
        "{err}"
    );
}

#[test]
fn run_prints_herd_summary() {
    let (code, out, err) = ptxmc(&["run", "litmus/sb/SB+rlx.gpu.litmus"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("Test SB+rlx.gpu Allowed\nStates 4\n"),
        "{out}"
    );
    assert!(
        out.contains("\nOk\nWitnesses\nPositive: 1 Negative: 3\n"),
        "{out}"
    );
    assert!(
        out.contains("\nObservation SB+rlx.gpu Sometimes 1 3\n"),
        "{out}"
    );
}

#[test]
fn run_exits_1_when_a_mixedproxy_expectation_fails() {
    let (code, out, _) = ptxmc(&[
        "run",
        "tests/peers/mixedproxy/tests/Release_acquire_pattern.test",
    ]);
    assert_eq!(code, 1);
    assert!(
        out.contains("Expectation permit my_test: NOT met\n"),
        "{out}"
    );
}

#[test]
fn run_with_ptx60_rejects_proxy_tests_with_exit_2() {
    let (code, _, err) = ptxmc(&[
        "run",
        "--model",
        "ptx6.0",
        "litmus/proxy/CoWR-tex+fence.proxy.texture-single-thread.litmus",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "error: expected an instruction of the PTX 6.0 model, found `fence.proxy.texture`\n"
        ),
        "{err}"
    );
}

#[test]
fn check_reports_mismatches_and_exits_1() {
    let dir = std::env::temp_dir().join(format!("ptxmc-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("expected.csv");
    std::fs::write(
        &csv,
        "litmus/mp/MP+rel+acq.gpu.litmus,0\nlitmus/sb/SB+rlx.gpu.litmus,0\n",
    )
    .unwrap();
    let (code, out, err) = ptxmc(&["check", "--expected", csv.to_str().unwrap(), "--root", "."]);
    assert_eq!(code, 1, "{err}");
    // The row that passes is racy (weak data): said, not called correct.
    assert_eq!(
        out,
        "RACES litmus/mp/MP+rel+acq.gpu.litmus: the program has 1 data race: race 1 data-race on x: P0 `st.weak x, 1` (./litmus/mp/MP+rel+acq.gpu.litmus:8:2) write, generic proxy; P1 `ld.weak r1, x` (./litmus/mp/MP+rel+acq.gpu.litmus:9:29) read, generic proxy — both accesses are weak, and no causality order relates them; `ptxmc trace ./litmus/mp/MP+rel+acq.gpu.litmus --race 1` shows it\n\
         FAIL litmus/sb/SB+rlx.gpu.litmus: expected 0, got 1 (1 of 4 states satisfy the condition)\n1 passed, 1 failed\n"
    );
    // With --deny-races the racy row fails too, with `run --deny-races`'s status.
    let (code, out, err) = ptxmc(&[
        "check",
        "--deny-races",
        "--expected",
        csv.to_str().unwrap(),
        "--root",
        ".",
    ]);
    assert_eq!(code, 7, "{err}");
    assert!(
        out.starts_with("FAIL litmus/mp/MP+rel+acq.gpu.litmus: the program has 1 data race: race 1 data-race on x: ")
            && out.ends_with("(--deny-races)\nFAIL litmus/sb/SB+rlx.gpu.litmus: expected 0, got 1 (1 of 4 states satisfy the condition)\n0 passed, 2 failed\n"),
        "{out}"
    );
}

/// `check`'s output without its `RACES` lines (each checked to name a
/// race), and how many there were.
fn without_races(out: &str) -> (String, usize) {
    let mut n = 0;
    let mut rest = String::new();
    for l in out.lines() {
        if l.starts_with("RACES ") {
            assert!(l.contains(": the program has "), "{l}");
            n += 1;
        } else {
            rest.push_str(l);
            rest.push('\n');
        }
    }
    (rest, n)
}

#[test]
fn check_passes_the_project_library() {
    // The library's hanging tests have outcome rows too: the liveness CSV
    // says they are expected to hang.
    let (code, out, err) = ptxmc(&[
        "check",
        "--expected",
        "litmus/expected.csv",
        "--liveness",
        "litmus/liveness-expected.csv",
        "--undefined",
        "litmus/ub-expected.csv",
        "--root",
        ".",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (out, racy) = without_races(&out);
    assert_eq!(out, "423 passed, 0 failed\n");
    // Many library tests keep weak data on purpose (message passing's
    // payload): each is said to be racy.
    assert!(racy >= 100, "{racy}");
}

/// A row whose program can reach undefined behaviour fails with the
/// undefined step named (exit status 6), whatever the row says about the
/// outcome or termination, unless `--undefined` expects it; an expected
/// undefined step that never comes fails the row too.
#[test]
fn check_fails_a_row_whose_program_can_reach_undefined_behaviour() {
    let dir = std::env::temp_dir().join(format!("ptxmc-check-ub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    // The verdicts `run` gives: the condition never holds in either.
    let csv = write(
        "expected.csv",
        "litmus/ub/Mbar-over-arrival.litmus,0\nlitmus/ub/Mbar-two-arrivals-expected.litmus,0\n",
    );
    let hang = write("liveness.csv", "litmus/ub/Mbar-over-arrival.litmus,0\n");
    let line = "Undefined: an mbarrier arrive-on exceeds the pending arrival count of its phase — \
                P0 `mbarrier.arrive.release.cta.shared::cta.b64 _, [bar]` \
                (./litmus/ub/Mbar-over-arrival.litmus:12:2); PTX ISA 9.7.13.15.7: in an arrive-on \
                operation \"the pending arrival count is decremented by count\"; 9.7.13.15.2: \
                \"The valid range of each of the counts\" gives the pending arrival count the \
                minimum value 0";
    let fail = format!(
        "FAIL litmus/ub/Mbar-over-arrival.litmus: {line} (undefined behaviour is expected only by \
         a `path,1` row of the `--undefined` CSV)\n1 passed, 1 failed\n"
    );
    // Even with its hang expected by the liveness CSV.
    let (code, out, err) = ptxmc(&[
        "check",
        "--expected",
        &csv,
        "--liveness",
        &hang,
        "--root",
        ".",
    ]);
    assert_eq!(code, 6, "{err}");
    assert_eq!(out, fail);
    // A termination row that expects the hang fails the same way.
    let (code, out, err) = ptxmc(&[
        "check",
        "--property",
        "termination",
        "--expected",
        &hang,
        "--root",
        ".",
    ]);
    assert_eq!(code, 6, "{err}");
    assert_eq!(
        out,
        fail.replace("1 passed, 1 failed", "0 passed, 1 failed")
    );
    // Expected by `--undefined`: the row passes (its hang is expected too).
    let ub = write(
        "ub.csv",
        "litmus/ub/Mbar-over-arrival.litmus,1\nlitmus/ub/Mbar-two-arrivals-expected.litmus,1\n",
    );
    let (code, out, err) = ptxmc(&[
        "check",
        "--expected",
        &csv,
        "--liveness",
        &hang,
        "--undefined",
        &ub,
        "--root",
        ".",
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        out,
        "FAIL litmus/ub/Mbar-two-arrivals-expected.litmus: expected undefined behaviour (--undefined), found none\n\
         1 passed, 1 failed\n"
    );
    // `--undefined` belongs to the other properties.
    let (code, _, err) = ptxmc(&[
        "check",
        "--property",
        "undefined",
        "--expected",
        &ub,
        "--undefined",
        &ub,
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "error: expected `--undefined` with `--property outcome` or `termination`, found `--property undefined` (its CSV is the undefined-behaviour one)\n"
    );
}

#[test]
fn check_fails_an_outcome_row_whose_program_can_hang() {
    let dir = std::env::temp_dir().join(format!("ptxmc-check-hang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("expected.csv");
    // Both rows give the verdict `run` gives; the first program can hang.
    std::fs::write(
        &csv,
        "litmus/liveness/Bar-count-too-high.litmus,0\nlitmus/liveness/Bar-count-right.litmus,0\n",
    )
    .unwrap();
    let csv = csv.to_str().unwrap();
    let (code, out, err) = ptxmc(&["check", "--expected", csv, "--root", "."]);
    assert_eq!(code, 5, "{err}");
    assert_eq!(
        out,
        "FAIL litmus/liveness/Bar-count-too-high.litmus: the program can hang: P0 and P1 wait at `bar.cta.sync 1, 1, 3`, whose phase needs 3 arrivals and gets 2 (P0 and P1); every other thread has finished or is stuck too, so nothing can release them (a hang is expected only by a `path,0` row of the `--liveness` CSV)\n\
         1 passed, 1 failed\n"
    );
    // A liveness row that expects the hang lets the row pass; one that
    // expects a hang of a program that terminates fails it.
    let live = dir.join("liveness.csv");
    std::fs::write(
        &live,
        "litmus/liveness/Bar-count-too-high.litmus,0\nlitmus/liveness/Bar-count-right.litmus,0\n",
    )
    .unwrap();
    let live = live.to_str().unwrap();
    let (code, out, err) = ptxmc(&[
        "check",
        "--expected",
        csv,
        "--liveness",
        live,
        "--root",
        ".",
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        out,
        "FAIL litmus/liveness/Bar-count-right.litmus: expected a hang (--liveness), every execution terminates\n\
         1 passed, 1 failed\n"
    );
    let (code, _, err) = ptxmc(&[
        "check",
        "--expected",
        live,
        "--liveness",
        live,
        "--property",
        "termination",
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "error: expected `--liveness` with `--property outcome`, found `--property termination` (its CSV is the liveness one)\n"
    );
}

/// `ptxmc run`'s report of `path`: whether the condition holds, and the
/// hang line (`Hang: KIND — WHY`), if any.
fn run_verdict(path: &str) -> (bool, Option<String>) {
    let (_, out, err) = ptxmc(&["run", "--format", "json", path]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let t = &v[0]["termination"];
    let hang = (t["hangs"] == true).then(|| {
        format!(
            "Hang: {} — {}",
            t["kind"].as_str().unwrap(),
            t["why"].as_str().unwrap()
        )
    });
    (v[0]["holds"] == true, hang)
}

#[test]
fn every_command_agrees_with_run_on_every_hanging_library_test() {
    let rows = std::fs::read_to_string("litmus/liveness-expected.csv").unwrap();
    let dir = std::env::temp_dir().join(format!("ptxmc-agree-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut hanging = 0;
    // (The tests that reach undefined behaviour — `litmus/ub/`, and the rows
    // of `ub-expected.csv` with 1 — hang too, but exit 6: undefined
    // behaviour is the more serious verdict; `tests/suites.rs` checks them.)
    let ub = std::fs::read_to_string("litmus/ub-expected.csv").unwrap();
    let undefined: Vec<&str> = ub.lines().filter_map(|l| l.strip_suffix(",1")).collect();
    for path in rows
        .lines()
        .filter_map(|l| l.strip_suffix(",0"))
        .filter(|p| !p.starts_with("litmus/ub/") && !undefined.contains(p))
    {
        hanging += 1;
        let (holds, hang) = run_verdict(path);
        let hang = hang.unwrap_or_else(|| panic!("{path}: run finds no hang"));
        let (code, out, _) = ptxmc(&["run", path]);
        assert_eq!(code, 5, "run {path}");
        assert!(out.contains(&format!("{hang}\n")), "run {path}: {out}");
        let name = path.rsplit('/').next().unwrap().trim_end_matches(".litmus");

        // check: the row with run's own verdict still fails, on the hang.
        let csv = dir.join("row.csv");
        std::fs::write(&csv, format!("{path},{}\n", holds as u8)).unwrap();
        let (code, out, _) = ptxmc(&["check", "--expected", csv.to_str().unwrap()]);
        assert_eq!(code, 5, "check {path}: {out}");
        assert!(
            out.starts_with(&format!("FAIL {path}: the program can hang: ")),
            "check {path}: {out}"
        );
        assert!(out.ends_with("0 passed, 1 failed\n"), "check {path}: {out}");

        // explain: the hang first, in run's words.
        let (code, out, _) = ptxmc(&["explain", path]);
        assert_eq!(code, 5, "explain {path}: {out}");
        assert!(
            out.starts_with(&format!(
                "Explain {name}: the program can hang\n{hang}\nA run into it: ptxmc trace {path} --hang\nAmong the executions that end, "
            )),
            "explain {path}: {out}"
        );

        // fix: never "nothing to fix": the hang first, then repairs that
        // remove it (every one verified by both engines), or none (exit 5).
        let (code, out, _) = ptxmc(&["fix", "--bound", "1", path]);
        assert!(
            out.starts_with(&format!(
                "Fix {name}: make every execution terminate and forbid "
            )) && out.contains(&format!(
                "\n{hang}\nA run into it: ptxmc trace {path} --hang\n"
            )),
            "fix {path}: {out}"
        );
        assert!(!out.contains("nothing to fix"), "fix {path}: {out}");
        match code {
            0 => assert!(
                out.contains("  1. [cost ") && !out.contains("NOT verified"),
                "fix {path}: {out}"
            ),
            5 => assert!(
                out.contains("  No fix removes the hang with at most 1 change."),
                "fix {path}: {out}"
            ),
            _ => panic!("fix {path}: exit {code}: {out}"),
        }

        // trace to the condition's outcome, and into the hang.
        let (code, out, _) = ptxmc(&["trace", path]);
        assert_eq!(code, 5, "trace {path}: {out}");
        assert!(
            out.ends_with(&format!(
                "{hang}\nThis program can hang: `ptxmc trace {path} --hang` shows a run into it.\n"
            )),
            "trace {path}: {out}"
        );
        let (code, out, _) = ptxmc(&["trace", path, "--hang"]);
        assert_eq!(code, 5, "trace --hang {path}: {out}");

        // step: said up front, and the session ends with run's status.
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ptxmc"))
            .args(["step", path])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"q\n").unwrap();
        let o = child.wait_with_output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(5), "step {path}: {out}");
        assert!(
            out.contains(&format!(
                "{hang}\nThis program can hang: `g hang` walks into it.\n"
            )),
            "step {path}: {out}"
        );
    }
    assert_eq!(hanging, 42);
}

#[test]
fn a_wait_whose_groups_depend_on_the_path_is_refused() {
    let (code, out, err) = ptxmc(&["run", "tests/data/errors/async-group-differs.litmus"]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        err,
        "error: expected the same committed async-groups on every path to this wait, found paths that issued or committed different operations
   --> tests/data/errors/async-group-differs.litmus:11:2
   |
11 |  cp.async.bulk.wait_group 0 ;
   |  ^^^^^^^^^^^^^^^^^^^^^^^^^^ which operations this waits for depends on the path
   |
   = paths of P0 meet at this instruction; ptxmc lays async-groups out statically and does not guess which operations a wait awaits

"
    );
}

#[test]
fn branching_issuers_are_checked_in_both_engines() {
    // The two-round pipeline: the producer spins on the empty barriers and
    // issues copies after each loop; both engines find the one outcome and
    // agree that it terminates.
    let (code, out, err) = ptxmc(&[
        "run",
        "litmus/liveness/Pipeline-2stage-2round.litmus",
        "--engine",
        "both",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &v[0];
    assert_eq!(t["verdict"], "No", "{out}");
    let outcomes = t["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 1, "{out}");
    for (r, want) in [("P1:r1", 11), ("P1:r3", 22), ("P1:r5", 33), ("P1:r7", 44)] {
        assert_eq!(outcomes[0][r], want, "{r} in {out}");
    }
    assert_eq!(t["termination"]["checked"], true, "{out}");
    assert_eq!(t["termination"]["hangs"], false, "{out}");
}

#[test]
fn cluster_wait_needs_an_arrive_first() {
    let (code, _, err) = ptxmc(&["run", "tests/data/errors/cluster-wait-before-arrive.litmus"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "error: expected a `barrier.cluster.arrive` before `barrier.cluster.wait`, found a wait without an arrive\n  --> tests/data/errors/cluster-wait-before-arrive.litmus:6:2\n"
        ),
        "{err}"
    );
}

#[test]
fn restricted_acquire_fence_warns_about_its_modelling() {
    let (code, out, err) = ptxmc(&[
        "run",
        "litmus/async/Restricted+fence.release.sync_restrict-shared.litmus",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        err.starts_with(
            "warning: `.sync_restrict::shared::cluster` is modelled as an unrestricted acquire\n   --> litmus/async/Restricted+fence.release.sync_restrict-shared.litmus:11:19\n"
        ),
        "{err}"
    );
}

#[test]
fn version_prints_the_crate_version() {
    let (code, out, err) = ptxmc(&["--version"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("ptxmc {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn run_exits_5_when_a_test_can_hang() {
    let (code, out, err) = ptxmc(&["run", "litmus/liveness/Bar-count-too-high.litmus"]);
    assert_eq!(code, 5, "{err}");
    assert!(
        out.contains("\nHang: deadlock — P0 and P1 wait at `bar.cta.sync 1, 1, 3`, whose phase needs 3 arrivals and gets 2 (P0 and P1); every other thread has finished or is stuck too, so nothing can release them\n"),
        "{out}"
    );
    // A directory with hanging and terminating tests: still 5.
    let (code, _, _) = ptxmc(&[
        "run",
        "litmus/liveness/Bar-count-too-high.litmus",
        "litmus/mp",
    ]);
    assert_eq!(code, 5);
    // `litmus/barriers` has hanging tests and one that loads a barrier's
    // count (`Bar-reg-count-loaded`: undefined), so 6.
    let (code, _, _) = ptxmc(&["run", "litmus/barriers"]);
    assert_eq!(code, 6);
    // With one that can reach undefined behaviour too: 6, the more serious.
    let (code, _, _) = ptxmc(&["run", "litmus/liveness"]);
    assert_eq!(code, 6);
    // Without the check, the same test passes silently.
    let (code, out, _) = ptxmc(&[
        "run",
        "--no-termination",
        "litmus/liveness/Bar-count-too-high.litmus",
    ]);
    assert_eq!(code, 0);
    assert!(!out.contains("Hang"), "{out}");
}

#[test]
fn run_json_reports_termination() {
    let (code, out, err) = ptxmc(&[
        "run",
        "--format",
        "json",
        "litmus/liveness/Flag-never-set.litmus",
        "litmus/liveness/Flag-set.litmus",
    ]);
    assert_eq!(code, 5, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &v[0]["termination"];
    assert_eq!(t["checked"], true);
    assert_eq!(t["hangs"], true);
    assert_eq!(t["kind"], "spin");
    assert_eq!(t["threads"][0]["thread"], "P1");
    assert_eq!(t["threads"][0]["on"], "spin");
    let t = &v[1]["termination"];
    assert_eq!(
        (&t["checked"], &t["hangs"], &t["kind"]),
        (
            &serde_json::json!(true),
            &serde_json::json!(false),
            &serde_json::Value::Null
        )
    );
}

#[test]
fn check_termination_passes_the_liveness_library() {
    let (code, out, err) = ptxmc(&[
        "check",
        "--property",
        "termination",
        "--expected",
        "litmus/liveness-expected.csv",
        "--undefined",
        "litmus/ub-expected.csv",
        "--root",
        ".",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (out, _) = without_races(&out);
    assert_eq!(out, "131 passed, 0 failed\n");
}

#[test]
fn check_termination_reports_mismatches_and_inconclusive_rows() {
    let dir = std::env::temp_dir().join(format!("ptxmc-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("liveness.csv");
    std::fs::write(
        &csv,
        "litmus/liveness/Flag-never-set.litmus,1\nlitmus/liveness/Flag-set.litmus,0\n\
         tests/peers/dat3m/litmus/PTX/CADP/2_threads_2_instructions/0_simple.litmus,1\n\
         litmus/liveness/Handshake.litmus,1\n",
    )
    .unwrap();
    let (code, out, err) = ptxmc(&[
        "check",
        "--property",
        "termination",
        "--expected",
        csv.to_str().unwrap(),
        "--root",
        ".",
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        out,
        "FAIL litmus/liveness/Flag-never-set.litmus: expected termination, found a hang: P1 spins in the loop at `ld.acquire.gpu r0, f`: reading the latest value it must see (f=0) it goes back every time; every other thread has finished or is stuck too, so nothing can release it\n\
         FAIL litmus/liveness/Flag-set.litmus: expected a hang, every execution terminates\n\
         FAIL tests/peers/dat3m/litmus/PTX/CADP/2_threads_2_instructions/0_simple.litmus: inconclusive: termination not checked (a loop that is neither a spin loop nor a retry loop reached the loop bound (2), so longer executions might hang)\n\
         1 passed, 3 failed\n"
    );
}

/// A spin that hangs only because the store is not morally strong with the
/// spinning load: `trace --hang` shows the lasso, the load reading an older
/// version, and `run` exits 5; `--fairness all` says it terminates.
#[test]
fn trace_hang_shows_a_spin_on_a_write_that_is_not_morally_strong() {
    let path = "litmus/liveness/Flag-cta-scope-other-cta.litmus";
    let (code, out, err) = ptxmc(&["trace", path, "--hang"]);
    assert_eq!(code, 5, "{err}");
    assert!(
        out.contains("Then forever, each iteration reading the latest versions it must see:\n  1. P1 ld.acquire.cta r0, f  reads f=0 (initial), an older version: no newer one is morally strong with the load or in its causal past, so it need never see them\n"),
        "{out}"
    );
    assert!(
        out.contains("  P1 spins in the loop at `ld.acquire.cta r0, f`: reading the latest value it must see (f=0) it goes back every time\n"),
        "{out}"
    );
    let (code, out, _) = ptxmc(&["run", path]);
    assert_eq!(code, 5, "{out}");
    let (code, out, _) = ptxmc(&["run", path, "--fairness", "all"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Termination: checked — every execution terminates"),
        "{out}"
    );
    let (code, out, _) = ptxmc(&["trace", path, "--hang", "--fairness", "all"]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn trace_hang_shows_the_lasso_or_says_there_is_none() {
    let (code, out, err) = ptxmc(&["trace", "litmus/liveness/Flag-never-set.litmus", "--hang"]);
    assert_eq!(code, 5, "{err}");
    assert!(
        out.starts_with("Trace Flag-never-set: a shortest run of the machine into a hang (spin)\n"),
        "{out}"
    );
    assert!(
        out.contains("Then forever, each iteration reading the latest versions it must see:\n  1. P1 ld.acquire.gpu r0, f  reads f=0 (initial), the latest version\n"),
        "{out}"
    );
    assert!(
        out.ends_with(" --hang\n")
            || out
                .contains("\nReplay: ptxmc trace litmus/liveness/Flag-never-set.litmus --follow "),
        "{out}"
    );
    let (code, out, _) = ptxmc(&["trace", "litmus/liveness/Flag-set.litmus", "--hang"]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "No run of the machine hangs: every execution of Flag-set terminates.\n"
    );
}

#[test]
fn help_lists_the_hang_exit_status() {
    let (code, out, _) = ptxmc(&["run", "--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(
            "  5  a test can hang: a deadlock, or a loop that spins forever (every command)\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("  2  bad input (unreadable or malformed test, bad arguments; warnings under --deny-warnings)\n"),
        "{out}"
    );
}

/// Without `--outcome`, `trace` targets the outcome the test's own condition
/// asks about; `--outcome` also takes a state line copied from `run`.
#[test]
fn trace_defaults_to_the_condition_and_reads_state_lines() {
    let (code, out, err) = ptxmc(&["trace", "litmus/sb/SB+rlx.gpu.litmus"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(
            "Trace SB+rlx.gpu: a shortest run of the machine ending in 0:r0=0 /\\ 1:r1=0\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("Final state: 0:r0=0; 1:r1=0; x=1; y=1;"),
        "{out}"
    );
    let (code, out, err) = ptxmc(&[
        "trace",
        "litmus/sb/SB+rlx.gpu.litmus",
        "--outcome",
        "0:r0=0; 1:r1=1; x=1; y=1;",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Final state: 0:r0=0; 1:r1=1; x=1; y=1;"),
        "{out}"
    );
    let (code, _, err) = ptxmc(&[
        "trace",
        "litmus/sb/SB+rlx.gpu.litmus",
        "--outcome",
        "0:r0=0; 1:r1=1 x=1;",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "error: expected the end of the outcome (or `;` and another item of a state line), found `x`"
        ),
        "{err}"
    );
}

/// A forbidden outcome: text says so and where to ask why; JSON stays JSON.
#[test]
fn trace_of_a_forbidden_outcome_answers_in_the_chosen_format() {
    let (code, out, _) = ptxmc(&["trace", "litmus/mp/MP+rel+acq.gpu.litmus"]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "No run of the machine ends in 1:r0=1 /\\ 1:r1=0: the model forbids this outcome.\n\
         Why: ptxmc explain litmus/mp/MP+rel+acq.gpu.litmus --outcome '1:r0=1 /\\ 1:r1=0'\n"
    );
    let (code, out, _) = ptxmc(&[
        "trace",
        "litmus/mp/MP+rel+acq.gpu.litmus",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["reachable"], false);
    assert_eq!(v["outcome"], "1:r0=1 /\\ 1:r1=0");
    let (code, out, _) = ptxmc(&[
        "trace",
        "litmus/mp/MP+rel+acq.gpu.litmus",
        "--format",
        "json",
        "--max-states",
        "3",
    ]);
    assert_eq!(code, 4);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["reachable"], serde_json::Value::Null);
    assert_eq!(v["incomplete"], "the state limit (3) was reached");
}

/// Undefined behaviour: its own line with every instruction's position and
/// the ISA's sentence, its own JSON field and exit status 6; a test without
/// any gets `"undefined": null`.
#[test]
fn undefined_behaviour_is_reported_with_positions_and_exit_6() {
    let f = "litmus/ub/Bar-counts-disagree.litmus";
    let (code, out, _) = ptxmc(&["run", f]);
    assert_eq!(code, 6);
    let line = out.lines().find(|l| l.starts_with("Undefined:")).unwrap();
    assert_eq!(
        line,
        "Undefined: participants of one barrier phase disagree on the count — \
         P0 `bar.cta.sync 1, 64` (litmus/ub/Bar-counts-disagree.litmus:9:2), \
         P1 `bar.cta.sync 1, 96` (litmus/ub/Bar-counts-disagree.litmus:8:28); \
         PTX ISA 9.7.13.1: the threads of one barrier phase must give the same thread count \
         (\"operand b specifies the number of threads participating in the barrier\"); \
         with different counts the phase's completion is not defined"
    );
    let (code, out, _) = ptxmc(&["run", "--format", "json", f]);
    assert_eq!(code, 6);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let u = &v[0]["undefined"];
    assert_eq!(u["kind"], "barrier");
    assert_eq!(
        u["at"][1]["position"],
        "litmus/ub/Bar-counts-disagree.litmus:8:28"
    );
    let (code, out, _) = ptxmc(&["run", "--format", "json", "litmus/barriers/MP+bar64.litmus"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v[0]["undefined"].is_null());
    // Under Dat3M's reading the same text is a barrier named (1, 64) / (1, 96).
    let (code, out, _) = ptxmc(&["run", "--barriers", "dat3m", f]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("Undefined"));
}

/// A second arrival in a phase whose pending count is already 0 (the
/// producer's `arrive.expect_tx` left the phase open for the copy's bytes):
/// undefined in both engines, named at the arrival, with the barrier's state
/// shown as undefined in the hang; with an expected count of 2 the same
/// program is defined and terminates.
#[test]
fn mbarrier_over_arrival_is_undefined_in_both_engines() {
    let f = "litmus/ub/Mbar-over-arrival.litmus";
    let want = "Undefined: an mbarrier arrive-on exceeds the pending arrival count of its phase — \
         P0 `mbarrier.arrive.release.cta.shared::cta.b64 _, [bar]` \
         (litmus/ub/Mbar-over-arrival.litmus:12:2); PTX ISA 9.7.13.15.7: in an arrive-on operation \
         \"the pending arrival count is decremented by count\"; 9.7.13.15.2: \"The valid range of \
         each of the counts\" gives the pending arrival count the minimum value 0";
    for engine in ["op", "ax", "both"] {
        let (code, out, _) = ptxmc(&["run", "--engine", engine, f]);
        assert_eq!(code, 6, "{engine}: {out}");
        assert!(out.lines().any(|l| l == want), "{engine}: {out}");
        assert!(
            out.contains("(bar=[phase 0, undefined: an mbarrier arrive-on exceeds the pending arrival count of its phase])"),
            "{engine}: {out}"
        );
    }
    let (code, out, _) = ptxmc(&["run", "--format", "json", f]);
    assert_eq!(code, 6);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let u = &v[0]["undefined"];
    assert_eq!(u["kind"], "mbarrier");
    assert_eq!(u["at"][0]["thread"], "P0");
    assert_eq!(
        u["at"][0]["position"],
        "litmus/ub/Mbar-over-arrival.litmus:12:2"
    );
    let (code, out, _) = ptxmc(&[
        "run",
        "--engine",
        "both",
        "litmus/ub/Mbar-two-arrivals-expected.litmus",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("Undefined"), "{out}");
    // tx-count beyond 2^20 - 1: named at the expect-tx.
    let (code, out, _) = ptxmc(&[
        "run",
        "--engine",
        "both",
        "litmus/ub/Mbar-tx-out-of-range.litmus",
    ]);
    assert_eq!(code, 6, "{out}");
    assert!(
        out.contains("Undefined: an mbarrier's tx-count leaves its valid range — P0 `mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 1048576` (litmus/ub/Mbar-tx-out-of-range.litmus:10:2); PTX ISA 9.7.13.15.5: expect-tx \"increases the tx-count of an mbarrier object by the value specified by expectCount\", and in complete-tx \"tx-count is decremented by completeCount\"; 9.7.13.15.2: \"The valid range of each of the counts\" gives the tx-count the range -(2^20 - 1) to 2^20 - 1\n"),
        "{out}"
    );
}

/// A count-less `bar.sync` that a thread of the CTA never reaches hangs
/// under the ISA reading (the H100 hangs too) and terminates under Dat3M's.
#[test]
fn a_divergent_bar_sync_hangs_under_the_isa_reading_only() {
    let f = "litmus/barriers/Bar0-partial-spinner.litmus";
    for engine in ["op", "ax", "both"] {
        let (code, out, _) = ptxmc(&["run", "--engine", engine, f]);
        assert_eq!(code, 5, "{engine}: {out}");
        let (code, out, _) = ptxmc(&["run", "--engine", engine, "--barriers", "dat3m", f]);
        assert_eq!(code, 0, "{engine}: {out}");
    }
    // The stepping session finds the same hang.
    let (code, out, _) = ptxmc(&["trace", "--hang", f]);
    assert_eq!(code, 5, "{out}");
    assert!(
        out.contains("a shortest run of the machine into a hang (spin)"),
        "{out}"
    );
    assert!(out.contains("bar.cta.sync 0"), "{out}");
}

#[test]
fn timeouts_must_be_finite_and_not_negative() {
    for (cmd, bad) in [
        (&["run", "litmus/mp/MP+rel+acq.gpu.litmus"][..], "nan"),
        (&["run", "litmus/mp/MP+rel+acq.gpu.litmus"][..], "inf"),
        (&["explain", "litmus/mp/MP+rel+acq.gpu.litmus"][..], "-1"),
        (&["fix", "litmus/mp/MP+rel+acq.gpu.litmus"][..], "NaN"),
        (&["step", "litmus/mp/MP+rel+acq.gpu.litmus"][..], "-inf"),
        (&["serve"][..], "infinity"),
    ] {
        let mut args: Vec<String> = cmd.iter().map(|a| a.to_string()).collect();
        // `=`: a value that starts with `-` is not taken for an option.
        args.push(format!("--timeout={bad}"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = ptxmc(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.starts_with(&format!(
                "error: invalid value '{bad}' for '--timeout <SECS>': expected a finite number of seconds, 0 or more, found `{bad}`\n"
            )),
            "{args:?}: {err}"
        );
    }
    let (code, _, err) = ptxmc(&[
        "run",
        "--timeout",
        "soon",
        "litmus/mp/MP+rel+acq.gpu.litmus",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: invalid value 'soon' for '--timeout <SECS>': expected a number of seconds, found `soon`\n"),
        "{err}"
    );
}

#[test]
fn jobs_above_the_bound_are_refused_at_once() {
    for cmd in [
        &["gen", "--size", "2", "--format", "jsonl"][..],
        &["run", "litmus/mp/MP+rel+acq.gpu.litmus"][..],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["-j", "999999"]);
        let (code, out, err) = ptxmc(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.starts_with("error: invalid value '999999' for '--jobs <N>': expected a number of workers from 0 (all cores) to 1024, found 999999\n"),
            "{err}"
        );
    }
    let (code, _, err) = ptxmc(&["run", "-j", "1024", "litmus/mp/MP+rel+acq.gpu.litmus"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn herd_text_says_termination_when_it_was_searched() {
    // Checked, terminates.
    let (code, out, err) = ptxmc(&["run", "litmus/liveness/Flag-set.litmus"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\nObservation Flag-set Never 0 1\nTermination: checked — every execution terminates: no reachable state leaves a thread waiting or spinning forever\nTime Flag-set "),
        "{out}"
    );
    // Stopped by a limit: not checked, and said.
    let (code, out, _) = ptxmc(&[
        "run",
        "--max-states",
        "5",
        "litmus/liveness/Spinlock-cas-3cta.litmus",
    ]);
    assert_eq!(code, 4);
    assert!(
        out.contains(
            "\nTermination: not checked — a limit stopped the run before every state was seen\n"
        ),
        "{out}"
    );
    // No loop, barrier or wait: herd's report as herd writes it.
    let (_, out, _) = ptxmc(&["run", "litmus/mp/MP+rel+acq.gpu.litmus"]);
    assert!(!out.contains("Termination"), "{out}");
    assert!(!out.contains("Hang"), "{out}");
}

/// The words of a TMA store that a kernel never reads back itself are its
/// output (the host reads every global buffer after the launch), not a
/// typo: `dst[1]`–`dst[3]` of the three TMA-store kernels were "written by
/// P0 but read by no thread … did you mean `out[0]`?" (issue 28).
#[test]
fn a_kernels_buffers_are_read_by_the_host_not_typos() {
    for k in [
        "kernels/tma_store_nofence.ptx",
        "kernels/tma_store_wait.ptx",
        "kernels/tma_store_wait_one.ptx",
    ] {
        let (code, out, err) = ptxmc(&["kernel", k]);
        assert_eq!((code, err.as_str()), (0, ""), "{k}: {out}");
        assert!(out.contains("dst[1]=0; dst[2]=0; dst[3]=0;"), "{k}: {out}");
    }
    let (code, out, err) = ptxmc(&["fix", "kernels/tma_store_nofence.ptx", "--bound", "1"]);
    assert!(!err.contains("warning"), "{err}");
    assert!(
        out.starts_with("Fix publish: forbid out[0] != 9\n"),
        "{out}"
    );
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_likely_typo_in_a_location_name_is_warned_with_its_position() {
    let file = "tests/data/warnings/MP+flag-typo.litmus";
    let (code, out, err) = ptxmc(&["run", file]);
    // A warning never changes the exit status by itself.
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "warning: `f` is read by P1 but written by no thread; did you mean `flag`?
  --> tests/data/warnings/MP+flag-typo.litmus:7:48
  |
7 |  st.weak x, 1             | ld.acquire.gpu r0, f     ;
  |                                                ^ `flag` is a name of this test too
  |
  = a name the initial state does not declare is a new location that starts at 0, so a misspelt name gives a different test without an error

warning: `flag` is written by P0 but read by no thread and not named by the condition; did you mean `f`?
  --> tests/data/warnings/MP+flag-typo.litmus:8:17
  |
8 |  st.release.gpu flag, 1   | ld.weak r1, x            ;
  |                 ^^^^ `f` is a name of this test too
  |
  = a name the initial state does not declare is a new location that starts at 0, so a misspelt name gives a different test without an error

"
    );
    // The verdict rests on `f` (the condition names P1:r0, loaded from it).
    assert!(
        out.contains("\nNote: the verdict rests on `f` (line 7:48), which is read by P1 but written by no thread: did you mean `flag`?\n"),
        "{out}"
    );
    let (code, _, err) = ptxmc(&["run", "--deny-warnings", file]);
    assert_eq!(code, 2);
    assert!(
        err.ends_with("error: 2 warnings above, denied by --deny-warnings\n"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("ptxmc-typo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("expected.csv");
    std::fs::write(&csv, format!("{file},0\n")).unwrap();
    let csv = csv.to_str().unwrap();
    // (The misspelt test is racy — `ld.weak x` — and `check` says so.)
    let (code, out, _) = ptxmc(&["check", "--expected", csv]);
    assert_eq!(
        (code, without_races(&out)),
        (0, ("1 passed, 0 failed\n".to_string(), 1))
    );
    let (code, out, _) = ptxmc(&["check", "--deny-warnings", "--expected", csv]);
    assert_eq!(
        (code, without_races(&out)),
        (2, ("1 passed, 0 failed\n".to_string(), 1))
    );
    // The library has no such name.
    let (code, _, err) = ptxmc(&["run", "--deny-warnings", "litmus/mp", "litmus/sb"]);
    assert_eq!(code, 0, "{err}");
}

/// `trace` and `step` never stay silent about termination they could not
/// decide: the loop bound, or a limit.
#[test]
fn trace_and_step_say_when_termination_was_not_checked() {
    let (code, out, err) = ptxmc(&[
        "trace",
        "tests/peers/dat3m/litmus/PTX/CADP/2_threads_2_instructions/0_simple.litmus",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.ends_with("\nTermination: not checked — a loop that is neither a spin loop nor a retry loop reached the loop bound (2), so longer executions might hang\n"),
        "{out}"
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args([
            "step",
            "--timeout",
            "0",
            "litmus/liveness/Pipeline-2stage-2round.litmus",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"q\n").unwrap();
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    // The limit stops the session too: incomplete (exit 4), and it says why.
    assert_eq!(o.status.code(), Some(4), "{out}");
    assert!(
        out.ends_with(
            "Incomplete: the transitions of this state could not be listed before the time limit (0.0 s) was reached.\n\
             Termination: not checked — a limit stopped the run before every state was seen\n"
        ),
        "{out}"
    );
}

/// The undefined step of `litmus/ub/Bar-counts-disagree.litmus`, as `run`
/// words it.
const COUNTS_DISAGREE: &str = "Undefined: participants of one barrier phase disagree on the count — \
    P0 `bar.cta.sync 1, 64` (litmus/ub/Bar-counts-disagree.litmus:9:2), \
    P1 `bar.cta.sync 1, 96` (litmus/ub/Bar-counts-disagree.litmus:8:28); \
    PTX ISA 9.7.13.1: the threads of one barrier phase must give the same thread count \
    (\"operand b specifies the number of threads participating in the barrier\"); \
    with different counts the phase's completion is not defined";

/// `explain`, `fix`, `trace` and `step` each state the undefined behaviour
/// of a program that can reach it, in `run`'s words and before its hang,
/// and exit with `run`'s status 6; `fix` proposes nothing.
#[test]
fn every_command_states_undefined_behaviour() {
    let f = "litmus/ub/Bar-counts-disagree.litmus";
    let (code, out, err) = ptxmc(&["explain", f]);
    assert_eq!(code, 6, "{err}");
    assert!(
        out.starts_with(&format!(
            "Explain Bar-counts-disagree: the program can reach undefined behaviour\n\
             {COUNTS_DISAGREE}\n\
             A run to it: ptxmc trace {f} --undefined\n\
             Explain Bar-counts-disagree: the program can hang\n"
        )),
        "{out}"
    );
    let (code, out, _) = ptxmc(&["explain", "--format", "json", f]);
    assert_eq!(code, 6);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["undefined"]["kind"], "barrier");

    // fix: the undefined step first, then the repair that removes it (the
    // counts made equal), verified by both engines.
    let (code, out, err) = ptxmc(&["fix", f]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!(
            "Fix Bar-counts-disagree: make every execution defined and terminate and forbid P1:r0 == 0\n\
             {COUNTS_DISAGREE}\n\
             A run to it: ptxmc trace {f} --undefined\n\
             \x20 1. [cost 1] P1 `bar.cta.sync 1, 96` → `bar.cta.sync 1, 64`  (verified by both engines)\n"
        )),
        "{out}"
    );
    let (code, out, _) = ptxmc(&["fix", "--format", "json", f]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["problem"], "undefined");
    assert_eq!(v["fixes"][0]["verified"], true);
    assert_eq!(v["undefined"]["at"][1]["thread"], "P1");
    // --weaken still refuses: a weakening keeps what the program does.
    let (code, out, _) = ptxmc(&["fix", "--weaken", f]);
    assert_eq!(code, 6, "{out}");
    assert!(
        out.ends_with("(`ptxmc fix` without --weaken searches repairs).\n"),
        "{out}"
    );

    // A run to an outcome: the undefined step is said after it, then the hang.
    let (code, out, err) = ptxmc(&["trace", f]);
    assert_eq!(code, 6, "{err}");
    assert!(
        out.contains(&format!(
            "{COUNTS_DISAGREE}\n\
             This program can reach undefined behaviour: `ptxmc trace {f} --undefined` shows a run to it.\n\
             Hang: deadlock — "
        )),
        "{out}"
    );
    let (code, out, _) = ptxmc(&["trace", "--format", "json", f]);
    assert_eq!(code, 6);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["undefined"]["kind"], "barrier");

    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["step", f])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"g undefined\nq\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(6), "{out}");
    assert!(
        out.contains(&format!(
            "{COUNTS_DISAGREE}\nThis program can reach undefined behaviour: `g undefined` walks to it.\nHang: deadlock — "
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "> g undefined\nTook 3 steps to undefined behaviour.\n{COUNTS_DISAGREE}\n"
        )),
        "{out}"
    );

    // A defined program: none of them says a word about it.
    let ok = "litmus/ub/Mbar-two-arrivals-expected.litmus";
    for cmd in ["explain", "trace"] {
        let (code, out, _) = ptxmc(&[cmd, ok]);
        assert_eq!(code, if cmd == "trace" { 1 } else { 0 }, "{cmd}: {out}");
        assert!(!out.contains("Undefined"), "{cmd}: {out}");
    }
}

/// `trace --undefined`: a shortest machine run whose last step is the
/// undefined one, then the step in `run`'s words and the replay list (exit
/// 6); exit 1 when no run reaches undefined behaviour.
#[test]
fn trace_undefined_shows_a_shortest_run_to_the_undefined_step() {
    let f = "litmus/ub/Bar-counts-disagree.litmus";
    let (code, out, err) = ptxmc(&["trace", f, "--undefined"]);
    assert_eq!(code, 6, "{err}");
    assert_eq!(
        out,
        format!(
            "Trace Bar-counts-disagree: a shortest run of the machine to undefined behaviour\n  \
             1. P0 st.relaxed.cta x, 1  retires: the store is performed (its value is a version at the L2 coherence point)\n       \
             new version in memory: x=1 (P0 `st.relaxed.cta x, 1`)\n       \
             coherence x: 0 < 1\n  \
             2. P0 bar.cta.sync 1, 64   arrives at the barrier and waits for the other participants\n  \
             3. P1 bar.cta.sync 1, 96   arrives at the barrier and waits for the other participants\n\
             {COUNTS_DISAGREE}\n\
             Replay: ptxmc trace {f} --follow 0,0,0\n"
        )
    );
    // The replayed run ends at the same step.
    let (code, out, _) = ptxmc(&["trace", f, "--follow", "0,0,0"]);
    assert_eq!(code, 6);
    assert!(out.contains("  3. P1 bar.cta.sync 1, 96"), "{out}");
    // An mbarrier: the last step retires the second arrival.
    let m = "litmus/ub/Mbar-over-arrival.litmus";
    let (code, out, _) = ptxmc(&["trace", m, "--undefined"]);
    assert_eq!(code, 6);
    assert!(
        out.contains(
            "  4. P0 mbarrier.arrive.release.cta.shared::cta.b64 _, [bar]                              retires: its read and write are one atomic step\n\
             Undefined: an mbarrier arrive-on exceeds the pending arrival count of its phase — P0 `mbarrier.arrive.release.cta.shared::cta.b64 _, [bar]` (litmus/ub/Mbar-over-arrival.litmus:12:2); "
        ),
        "{out}"
    );
    let (code, out, _) = ptxmc(&["trace", m, "--undefined", "--format", "json"]);
    assert_eq!(code, 6);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["undefined"]["kind"], "mbarrier");
    assert_eq!(v["choices"].as_array().unwrap().len(), 4);
    // None reachable: exit 1, said.
    let ok = "litmus/ub/Mbar-two-arrivals-expected.litmus";
    let (code, out, _) = ptxmc(&["trace", ok, "--undefined"]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "No run of the machine reaches undefined behaviour: every execution of Mbar-two-arrivals-expected is defined (within the loop bound).\n"
    );
    let (code, _, err) = ptxmc(&["trace", ok, "--undefined", "--hang"]);
    assert_eq!(code, 2, "{err}");
}

/// `fix --weaken` never offers a weakening whose changed program can reach
/// undefined behaviour: dropping the message passing lets P1 read the stale
/// thread count 48, which keeps the condition but is undefined; it is
/// flagged with what it changes, and the one weakening offered keeps every
/// execution defined.
#[test]
fn fix_weaken_flags_weakenings_that_reach_undefined_behaviour() {
    let dir = std::env::temp_dir().join(format!("ptxmc-weaken-ub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("MP-count.litmus");
    std::fs::write(
        &f,
        "PTX MP-count\n\
         {\nc=48;\nf=0;\n}\n \
         P0@cta 0,cluster 0,gpu 0 | P1@cta 0,cluster 0,gpu 0 ;\n \
         st.relaxed.gpu c, 64 | ld.acquire.gpu r0, f ;\n \
         st.release.gpu f, 1 | bne r0, 1, END ;\n \
         | ld.relaxed.gpu r1, c ;\n \
         | bar.cta.arrive 1, r1 ;\n \
         | END: ;\n\
         exists (P1:r0 == 2)\n",
    )
    .unwrap();
    let f = f.to_str().unwrap();
    // As written, no execution is undefined.
    let (code, out, _) = ptxmc(&["run", f]);
    assert_eq!(code, 0, "{out}");
    let (code, out, err) = ptxmc(&["fix", "--weaken", f]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "  1. [saves 10] P0 `st.relaxed.gpu c, 64` at 7:2 → `st.weak c, 64` and P0 `st.release.gpu f, 1` at 8:2 → `st.release.cta f, 1` and P1 `ld.acquire.gpu r0, f` at 7:25 → `ld.acquire.cta r0, f` and P1 `ld.relaxed.gpu r1, c` at 9:4 → `ld.weak r1, c`  (verified by both engines)\n"
        ),
        "{out}"
    );
    assert!(!out.contains("  2. "), "{out}");
    assert!(
        out.contains("  - P1 `ld.acquire.gpu r0, f` at 7:25 → `ld.relaxed.gpu r0, f`: undefined behaviour: the thread count is not a multiple of the warp size (32); new final value P1:r1=48\n"),
        "{out}"
    );
    let (code, out, _) = ptxmc(&["fix", "--weaken", "--format", "json", f]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["fixes"][0]["undefined"].is_null());
    assert_eq!(
        v["flagged"][1]["changes_what"][0],
        "undefined behaviour: the thread count is not a multiple of the warp size (32)"
    );
}

/// A lane at a counted barrier whose warp's other lane waits at another
/// barrier is worded as waiting for that lane of its warp (issue 25: it
/// used to name the instruction at the waiting lane's position in the
/// other lane's code), by both engines alike, and JSON says `"on": "warp"`.
#[test]
fn a_lane_waiting_for_its_warp_names_the_lane_that_never_comes() {
    let path = "litmus/ub/Bar-warp-names-differ.litmus";
    let hang = "Hang: deadlock — P0 waits at `bar.cta.sync 1, 32` for P1 of its warp, which never \
                comes: a warp arrives at a counted barrier as a whole; P1 waits at `bar.cta.sync \
                2, 32` for P0 of its warp, which never comes: a warp arrives at a counted barrier \
                as a whole; every other thread has finished or is stuck too, so nothing can \
                release them\n";
    for engine in ["op", "ax"] {
        let (code, out, err) = ptxmc(&["run", "--engine", engine, path]);
        assert_eq!(code, 6, "{engine}: {err}");
        assert!(out.contains(hang), "{engine}: {out}");
    }
    let (_, out, _) = ptxmc(&["run", "--format", "json", path]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &v[0]["termination"]["threads"];
    assert_eq!(t[0]["on"], "warp");
    assert_eq!(t[1]["on"], "warp");
}
