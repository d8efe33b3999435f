//! Data races (`docs/races.md`): the oracle's races of every test under
//! `litmus/races/` are exactly the pairs written here, of each kind; the
//! literal checker (`explain::races`) finds the same races on every test
//! of `litmus/`; race-free tests give an empty, complete list; the JSON
//! shape, `--deny-races`, `trace --race N`, a kernel, and limits that make
//! the list incomplete, never "race-free".

use std::path::{Path, PathBuf};
use std::process::Command;

use ptxmc::engine::{self, RaceStatus, RunOptions};
use ptxmc::explain;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

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

/// The races of one test as `kind loc Pi:access Pj:access` strings, with
/// the status of the check.
fn races(file: &str) -> (Vec<String>, RaceStatus) {
    let t = &ptxmc::litmus::parse_file(&root().join(file)).unwrap()[0];
    let r = engine::run(&t.program, &RunOptions::default());
    assert!(r.disagreement.is_none(), "{file}: the engines disagree");
    let p = &t.program;
    let list = r
        .races
        .found
        .iter()
        .map(|f| {
            let side = |a: &ptxmc::ax::race::Access| {
                format!(
                    "{}:{}{}",
                    p.threads[a.thread].name,
                    a.access.as_str(),
                    if a.agent { "(async)" } else { "" }
                )
            };
            format!(
                "{} {} {} {}",
                f.race.kind.as_str(),
                p.locations[f.race.loc].name,
                side(&f.race.first),
                side(&f.race.second)
            )
        })
        .collect();
    (list, r.races.status)
}

fn expect(file: &str, want: &[&str]) {
    let (got, status) = races(&format!("litmus/races/{file}.litmus"));
    assert_eq!(status, RaceStatus::Complete, "{file}");
    assert_eq!(got, want, "{file}");
}

#[test]
fn generic_data_races_are_found_exactly() {
    let cases: &[(&str, &[&str])] = &[
        (
            "DR-MP-weak",
            &[
                "data-race x P0:write P1:read",
                "data-race f P0:write P1:read",
            ],
        ),
        (
            "DR-SB-weak",
            &[
                "data-race x P0:write P1:read",
                "data-race y P0:read P1:write",
            ],
        ),
        ("DR-WW-weak", &["data-race x P0:write P1:write"]),
        ("DR-MP-rel-acq-unchecked", &["data-race x P0:write P1:read"]),
        ("DR-weak-vs-relaxed", &["data-race x P0:write P1:read"]),
        (
            "DR-LB-weak",
            &[
                "data-race x P0:read P1:write",
                "data-race y P0:write P1:read",
            ],
        ),
        (
            "DR-atom-vs-weak-store",
            &["data-race x P0:read-modify-write P1:write"],
        ),
        (
            "DR-three-writers-reader",
            &[
                "data-race x P0:write P1:write",
                "data-race x P0:write P2:read",
                "data-race x P1:write P2:read",
            ],
        ),
        ("DR-MP-no-release", &["data-race x P0:write P1:read"]),
        ("DR-after-barrier", &["data-race x P0:write P1:read"]),
        ("DR-volatile-vs-weak", &["data-race x P0:write P1:read"]),
    ];
    assert!(cases.len() >= 10);
    for (file, want) in cases {
        expect(file, want);
    }
}

#[test]
fn insufficient_scope_races_are_found_exactly() {
    let cases: &[(&str, &[&str])] = &[
        (
            "IS-SB-rlx.cta-diff-cta",
            &[
                "insufficient-scope x P0:write P1:read",
                "insufficient-scope y P0:read P1:write",
            ],
        ),
        (
            "IS-WW-rlx.cta-diff-cta",
            &["insufficient-scope x P0:write P1:write"],
        ),
        (
            "IS-atom.cta-diff-cta",
            &["insufficient-scope x P0:read-modify-write P1:read-modify-write"],
        ),
        (
            "IS-atom.gpu-diff-gpu",
            &["insufficient-scope x P0:read-modify-write P1:read-modify-write"],
        ),
        (
            "IS-rlx.cluster-diff-cluster",
            &["insufficient-scope x P0:write P1:read"],
        ),
        ("IS-gpu-vs-cta", &["insufficient-scope x P0:write P1:read"]),
        (
            "IS-red.cta-vs-ld.gpu",
            &["insufficient-scope x P0:read-modify-write P1:read"],
        ),
        (
            "IS-MP-rel.cta-acq.gpu",
            &["insufficient-scope f P0:write P1:read"],
        ),
        (
            "IS-cas-lock.cta-diff-cta",
            &["insufficient-scope l P0:read-modify-write P1:read-modify-write"],
        ),
        (
            "IS-three-threads-one-outside",
            &["insufficient-scope x P0:write P2:read"],
        ),
        (
            "IS-exch.cta-vs-st.cta",
            &["insufficient-scope x P0:read-modify-write P1:write"],
        ),
    ];
    assert!(cases.len() >= 10);
    for (file, want) in cases {
        expect(file, want);
    }
}

#[test]
fn insufficient_scope_names_the_scope_that_falls_short() {
    let t =
        &ptxmc::litmus::parse_file(&root().join("litmus/races/IS-gpu-vs-cta.litmus")).unwrap()[0];
    let r = engine::run(&t.program, &RunOptions::default());
    assert_eq!(
        r.races.found[0].race.reason,
        "the .cta scope of P1's access does not include P0"
    );
}

#[test]
fn mixed_proxy_races_are_found_exactly() {
    let cases: &[(&str, &[&str])] = &[
        ("MX-alias-CoWR", &["mixed-proxy a1 P0:write P0:read"]),
        ("MX-alias-WW", &["mixed-proxy a1 P0:write P0:write"]),
        ("MX-alias-two-threads", &["mixed-proxy a1 P0:write P1:read"]),
        ("MX-tex-CoWR", &["mixed-proxy x P0:write P0:read"]),
        ("MX-tex-WAR", &["mixed-proxy x P0:read P0:write"]),
        ("MX-const-CoWR", &["mixed-proxy x P0:write P0:read"]),
        ("MX-surf-CoWR", &["mixed-proxy x P0:write P0:read"]),
        ("MX-surf-const", &["mixed-proxy x P0:write P0:read"]),
        (
            "MX-tma-store-no-fence",
            &["mixed-proxy s P0:write P0:read(async)"],
        ),
        (
            "MX-tma-load-try-wait",
            &["mixed-proxy s P0:write(async) P1:read"],
        ),
        (
            "MX-tma-load-overwrites-read",
            &["mixed-proxy s P0:read P0:write(async)"],
        ),
    ];
    assert!(cases.len() >= 10);
    for (file, want) in cases {
        expect(file, want);
    }
}

#[test]
fn race_free_tests_give_an_empty_complete_list() {
    let files = [
        "RF-MP-rel-acq-spin",
        "RF-SB-fence.sc-rlx.gpu",
        "RF-bar-ordered",
        "RF-atom.gpu-counter",
        "RF-MP-rlx.sys",
        "RF-single-thread-weak",
        "RF-cta-scope-same-cta",
        "RF-alias-CoWR+fence.proxy.alias",
        "RF-tex-CoWR+fence.proxy.texture",
        "RF-tma-store+fence.proxy.async",
    ];
    for f in files {
        expect(f, &[]);
    }
}

/// The second implementation: the literal checker's moral strength and
/// causality, over every consistent candidate it enumerates, give the
/// oracle's races on every library test it can enumerate.
#[test]
fn the_literal_checker_finds_the_oracles_races_on_the_library() {
    let files = ptxmc::litmus::collect_files(&[root().join("litmus")]).unwrap();
    let mut compared = 0;
    let mut racy = 0;
    for f in &files {
        for t in ptxmc::litmus::parse_file(f).unwrap() {
            let r = engine::run(
                &t.program,
                &RunOptions {
                    engine: engine::EngineChoice::Ax,
                    ..RunOptions::default()
                },
            );
            if r.races.status != RaceStatus::Complete && !r.termination.hangs() {
                continue;
            }
            let limits = explain::enumerate::Limits {
                deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(5)),
                ..Default::default()
            };
            let Ok(theirs) = explain::races::races(&t.program, &limits) else {
                continue;
            };
            let ours: std::collections::BTreeSet<_> =
                r.races.found.iter().map(|f| f.race.clone()).collect();
            assert_eq!(ours, theirs, "{}", f.display());
            compared += 1;
            racy += usize::from(!ours.is_empty());
        }
    }
    assert!(compared >= 250, "only {compared} tests compared");
    assert!(racy >= 100, "only {racy} racy tests compared");
}

#[test]
fn json_lists_races_in_each_test_object() {
    let (code, out, err) = ptxmc(&[
        "run",
        "--format",
        "json",
        "litmus/races/IS-gpu-vs-cta.litmus",
        "litmus/races/RF-bar-ordered.litmus",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let racy = &v[0];
    assert_eq!(racy["races_status"], "complete");
    assert_eq!(racy["races_incomplete_reason"], serde_json::Value::Null);
    let r = &racy["races"][0];
    assert_eq!(r["number"], 1);
    assert_eq!(r["kind"], "insufficient-scope");
    assert_eq!(r["location"], "x");
    assert_eq!(
        r["reason"],
        "the .cta scope of P1's access does not include P0"
    );
    let a = &r["accesses"][0];
    assert_eq!(a["thread"], "P0");
    assert_eq!(a["instr"], "st.relaxed.gpu x, 1");
    assert_eq!(a["position"], "litmus/races/IS-gpu-vs-cta.litmus:7:2");
    assert_eq!(a["access"], "write");
    assert_eq!(a["proxy"], "generic");
    assert_eq!(a["by_async_operation"], false);
    assert_eq!(r["accesses"][1]["access"], "read");
    assert_eq!(racy["races"].as_array().unwrap().len(), 1);
    let free = &v[1];
    assert_eq!(free["races"], serde_json::json!([]));
    assert_eq!(free["races_status"], "complete");
}

#[test]
fn herd_text_has_a_races_section_only_for_racy_tests() {
    let (_, out, _) = ptxmc(&["run", "litmus/races/MX-alias-CoWR.litmus"]);
    assert!(out.contains(
        "Races 1\n  1 mixed-proxy on a1: P0 `st.weak a1, 42` (litmus/races/MX-alias-CoWR.litmus:8:2) write, generic proxy; P0 `ld.weak r0, a2` (litmus/races/MX-alias-CoWR.litmus:9:2) read, generic proxy — they use different virtual addresses of a1 (a1 and a2), and no fence.proxy.alias orders them\n"
    ), "{out}");
    let (_, out, _) = ptxmc(&["run", "litmus/races/RF-bar-ordered.litmus"]);
    assert!(!out.contains("Races"), "{out}");
}

#[test]
fn deny_races_exits_7_on_a_racy_test_only() {
    let (code, _, _) = ptxmc(&["run", "--deny-races", "litmus/races/DR-WW-weak.litmus"]);
    assert_eq!(code, 7);
    let (code, _, _) = ptxmc(&["run", "litmus/races/DR-WW-weak.litmus"]);
    assert_eq!(code, 0);
    let (code, _, _) = ptxmc(&["run", "--deny-races", "litmus/races/RF-bar-ordered.litmus"]);
    assert_eq!(code, 0);
}

#[test]
fn trace_race_shows_the_pair_and_an_execution() {
    let (code, out, err) = ptxmc(&["trace", "litmus/races/DR-MP-weak.litmus", "--race", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Race 2 of 2: data-race on f\n"), "{out}");
    assert!(
        out.contains("Why: both accesses are weak, and no causality order relates them\n"),
        "{out}"
    );
    assert!(
        out.contains("  P0   st.weak f, 1: writes f = 1   <- race\n"),
        "{out}"
    );
    assert!(
        out.contains("  P1   ld.weak r0, f: reads f = 0 from the initial value   <- race\n"),
        "{out}"
    );
    let (code, out, _) = ptxmc(&["trace", "litmus/races/DR-MP-weak.litmus", "--race", "3"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("No race 3 in litmus/races/DR-MP-weak.litmus: it has 2 races."),
        "{out}"
    );
    let (code, out, _) = ptxmc(&[
        "trace",
        "litmus/races/MX-tma-load-try-wait.litmus",
        "--race",
        "1",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("(asynchronous operation): writes s = 42   <- race"),
        "{out}"
    );
}

#[test]
fn a_kernel_reports_its_races() {
    let (code, out, err) = ptxmc(&[
        "kernel",
        "kernels/shared_exchange_nosync.ptx",
        "--deny-races",
    ]);
    assert_eq!(code, 7, "{err}");
    assert!(out.contains("Races 2\n"), "{out}");
    assert!(
        out.contains(
            "(kernels/shared_exchange_nosync.ptx:36:2 (shared_exchange_nosync.cu:11)) write"
        ),
        "{out}"
    );
    let (code, out, err) = ptxmc(&["kernel", "kernels/shared_exchange.ptx", "--deny-races"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("Races"), "{out}");
}

#[test]
fn a_limit_makes_the_list_incomplete_never_race_free() {
    let (code, out, _) = ptxmc(&[
        "run",
        "--max-states",
        "1",
        "litmus/races/RF-bar-ordered.litmus",
    ]);
    assert_eq!(code, 4);
    assert!(
        out.contains("Races: incomplete — the axiomatic engine stopped:"),
        "{out}"
    );
    assert!(
        out.contains("none found, which does not make the program race-free"),
        "{out}"
    );
    let (_, out, _) = ptxmc(&["run", "--engine", "op", "litmus/races/DR-WW-weak.litmus"]);
    assert!(out.contains("Races: not checked — races are found by the axiomatic engine, which did not run (--engine op)"), "{out}");
}
