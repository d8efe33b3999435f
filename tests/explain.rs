//! The explainer's literal checker of the axioms against the oracle, and
//! the explanations themselves on the classic shapes.

use std::path::{Path, PathBuf};

use ptxmc::ax::{self, AxOptions};
use ptxmc::explain::enumerate::{self, Limits};
use ptxmc::litmus::{self, LitmusTest};
use ptxmc::model::{Model, lower};

mod sample;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Every public test but Dat3M's CADP liveness suite: the library, Dat3M's
/// other PTX tests and the mixedproxy instances.
fn public_tests() -> Vec<LitmusTest> {
    let dat3m = root().join("tests/peers/dat3m/litmus/PTX");
    let mut dirs = vec![
        root().join("litmus"),
        root().join("tests/peers/mixedproxy/tests"),
    ];
    for d in ["Barrier", "Manual", "Memalloy", "Nvidia"] {
        dirs.push(dat3m.join(d));
    }
    let files = litmus::collect_files(&dirs).unwrap();
    let mut out = Vec::new();
    for f in files {
        let tests = litmus::parse_file(&f).unwrap_or_else(|e| panic!("{}", e.rendered()));
        for t in tests {
            if Model::Ptx75.admit(&t.program, &t.spans).is_ok() {
                out.push(t);
            }
        }
    }
    out
}

#[test]
fn literal_checker_lists_the_oracles_outcomes_on_every_public_test() {
    let tests = public_tests();
    assert!(tests.len() > 500, "{} tests", tests.len());
    // A part of the public tests by default, all of them with PTXMC_DEEP=1.
    let tests = sample::corpus(tests);
    let mut bad = Vec::new();
    for t in &tests {
        let p = lower::lower(&t.program, AxOptions::default().loop_bound);
        let oracle = ax::run(&t.program, &AxOptions::default()).unwrap();
        let mine = enumerate::outcomes(&p, &Limits::default()).unwrap();
        if oracle.outcomes != mine {
            bad.push(format!(
                "{}: oracle {:?}, checker {:?}",
                t.display_path(),
                oracle.outcomes,
                mine
            ));
        }
    }
    assert!(bad.is_empty(), "{} differ:\n{}", bad.len(), bad.join("\n"));
}

mod random {
    //! Random straight-line programs for the checker/oracle comparison:
    //! two or three threads, placements over CTAs, clusters and GPUs, all
    //! access semantics and scopes, RMWs, fences, proxy fences, aliases,
    //! the hypothetical proxies and CTA barriers.
    use proptest::prelude::*;
    use std::fmt::Write;

    const SCOPES: [&str; 4] = ["cta", "cluster", "gpu", "sys"];

    pub fn program() -> impl Strategy<Value = String> {
        (
            0..5usize,
            proptest::collection::vec(
                proptest::collection::vec((0..12usize, 0..64usize), 1..=4),
                2..=3,
            ),
        )
            .prop_map(|(placement, threads)| render(placement, &threads))
    }

    fn render(placement: usize, threads: &[Vec<(usize, usize)>]) -> String {
        let mut s = String::from(
            "PTX random\n{\nx=0; y=0;\nx2 @ generic aliases x;\ntx @ texture aliases x; sy @ surface aliases y; cx @ constant aliases x;\n}\n",
        );
        let head: Vec<String> = (0..threads.len())
            .map(|t| {
                let (cta, cl, gpu) = match placement {
                    0 => (0, 0, 0),
                    1 => (t, 0, 0),
                    2 => (t, t, 0),
                    3 => (t / 2, 0, 0),
                    _ => (0, 0, t % 2),
                };
                format!("P{t}@cta {cta},cluster {cl},gpu {gpu}")
            })
            .collect();
        let mut cols = Vec::new();
        for (t, code) in threads.iter().enumerate() {
            let mut out = Vec::new();
            let mut reg = 0;
            for &(op, r) in code {
                let loc = ["x", "y"][r % 2];
                let scope = SCOPES[(r / 2) % 4];
                let sem = (r / 8) % 4;
                let val = t * 10 + out.len() + 1;
                let cell = match op {
                    0 | 1 => {
                        reg += 1;
                        let sem = [
                            "weak".to_string(),
                            format!("relaxed.{scope}"),
                            format!("acquire.{scope}"),
                            format!("relaxed.{scope}"),
                        ][sem]
                            .clone();
                        let a = if r % 5 == 0 && loc == "x" { "x2" } else { loc };
                        format!("ld.{sem} r{reg}, {a}")
                    }
                    2 | 3 => {
                        let sem = [
                            "weak".to_string(),
                            format!("relaxed.{scope}"),
                            format!("release.{scope}"),
                            format!("release.{scope}"),
                        ][sem]
                            .clone();
                        let v = if r % 7 == 0 && reg > 0 {
                            format!("r{reg}")
                        } else {
                            val.to_string()
                        };
                        format!("st.{sem} {loc}, {v}")
                    }
                    4 => {
                        reg += 1;
                        let sem = ["relaxed", "acquire", "release", "acq_rel"][sem];
                        match r % 3 {
                            0 => format!("atom.{sem}.{scope}.add r{reg}, {loc}, 1"),
                            1 => format!("atom.{sem}.{scope}.exch r{reg}, {loc}, {val}"),
                            _ => format!("atom.{sem}.{scope}.cas r{reg}, {loc}, 0, {val}"),
                        }
                    }
                    5 => format!(
                        "red.{}.{scope}.add {loc}, 1",
                        ["relaxed", "release"][sem % 2]
                    ),
                    6 | 7 => format!(
                        "fence.{}.{scope}",
                        ["sc", "acq_rel", "acquire", "release"][sem]
                    ),
                    8 => format!(
                        "fence.proxy.{}",
                        ["alias", "texture", "surface", "constant"][sem]
                    ),
                    9 => {
                        reg += 1;
                        [
                            "tld.weak r{R}, tx",
                            "suld.weak r{R}, sy",
                            "cold.weak r{R}, cx",
                            "ld.weak r{R}, x2",
                        ][sem]
                            .replace("{R}", &reg.to_string())
                    }
                    10 => format!("sust.weak sy, {val}"),
                    _ => "bar.cta.sync 0".to_string(),
                };
                out.push(cell);
            }
            cols.push(out);
        }
        let mut rows = vec![head.join(" | ")];
        let depth = cols.iter().map(Vec::len).max().unwrap();
        for k in 0..depth {
            let row: Vec<&str> = cols
                .iter()
                .map(|c| c.get(k).map_or("", String::as_str))
                .collect();
            rows.push(row.join(" | "));
        }
        for r in rows {
            writeln!(s, " {r} ;").unwrap();
        }
        s.push_str("exists (0 == 0)\n");
        s
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        // 1,500 with PTXMC_DEEP=1 (tests/sample/mod.rs).
        cases: sample::cases(1500),
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xe5_91a1),
        ..proptest::prelude::ProptestConfig::default()
    })]

    #[test]
    fn literal_checker_lists_the_oracles_outcomes_on_random_programs(text in random::program()) {
        let tests = litmus::parse_source("random.litmus", &text)
            .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()));
        let t = &tests[0];
        let oracle = ax::run(&t.program, &AxOptions::default()).unwrap();
        let mine = enumerate::outcomes(&lower::lower(&t.program, AxOptions::default().loop_bound), &Limits::default()).unwrap();
        proptest::prop_assert_eq!(oracle.outcomes, mine, "{}", text);
    }
}

// ---- explanations of the classic shapes ---------------------------------------

use ptxmc::explain::Explanation;
use ptxmc::explain::axiomatic::{AxVerdict, Caps};
use ptxmc::explain::operational::OpExplanation;

fn load(path: &str) -> LitmusTest {
    litmus::parse_file(&root().join(path))
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
        .remove(0)
}

fn explain_file(path: &str) -> Explanation {
    let t = load(path);
    let want = t.program.condition.prop.clone();
    explain_prop(&t, &want)
}

fn explain_prop(t: &LitmusTest, want: &ptxmc::ir::Prop) -> Explanation {
    ptxmc::explain::explain_outcome(
        t,
        &t.display_path(),
        want,
        &Limits::default(),
        Caps::default(),
        2_000_000,
    )
}

/// The reasons of a forbidden explanation, and its summary.
fn forbidden(x: &Explanation) -> (Vec<String>, String) {
    match &x.ax.verdict {
        AxVerdict::Forbidden {
            groups, summary, ..
        } => (
            groups
                .iter()
                .flat_map(|g| g.reasons.iter().map(|r| r.text.clone()))
                .collect(),
            summary.clone(),
        ),
        other => panic!("{}: expected forbidden, got {other:?}", x.name),
    }
}

#[test]
fn mp_release_acquire_is_forbidden_by_causality_through_the_pair_on_f() {
    let x = explain_file("litmus/mp/MP+rel+acq.gpu.litmus");
    let (reasons, summary) = forbidden(&x);
    assert_eq!(
        reasons,
        vec![
            "Causality: P0 st.release.gpu f=1 —rf→ P1 ld.acquire.gpu f=1 —po→ P1 ld x=0 —fr→ P0 st x=1 —po→ P0 st.release.gpu f=1"
        ]
    );
    assert_eq!(
        summary,
        "every execution that gives this outcome violates Causality (A6) through the release/acquire pair on f"
    );
    match &x.op {
        Some(OpExplanation::Blocked { blocked, .. }) => assert!(
            blocked[0].starts_with("P1 ld.weak r1, x may not read x=0 (initial): Causality: P1's view already guarantees P0 `st.weak x, 1`"),
            "{blocked:?}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn classic_shapes_name_their_axiom() {
    for (path, axiom) in [
        ("litmus/lb/LB+data.litmus", "No-Thin-Air: "),
        (
            "litmus/coherence/CoWW+weak-single-thread.litmus",
            "Coherence: P0 st x=1 —po→ P0 st x=2 —co→ P0 st x=1",
        ),
        (
            "litmus/2+2w/2+2W+fence.sc.gpu.litmus",
            "Coherence: P0 st x=1 —po→ P0 fence.sc.gpu —sc→ P1 fence.sc.gpu —po→ P1 st x=2",
        ),
        ("litmus/coherence/CoRR+rlx.sys.litmus", "SC-per-location: "),
        ("litmus/sb/SB+fence.sc.gpu.litmus", "Causality: "),
        ("litmus/rmw/ATOM+inc.sys.litmus", "Atomicity: "),
    ] {
        let x = explain_file(path);
        let (reasons, _) = forbidden(&x);
        assert!(
            reasons.iter().any(|r| r.starts_with(axiom)),
            "{path}: {reasons:#?}"
        );
        assert!(
            matches!(x.op, Some(OpExplanation::Blocked { .. })),
            "{path}"
        );
    }
}

#[test]
fn allowed_outcomes_have_a_witness_and_a_replayable_run() {
    let x = explain_file("litmus/sb/SB+rlx.gpu.litmus");
    let AxVerdict::Allowed { witness, .. } = &x.ax.verdict else {
        panic!("{:?}", x.ax.verdict)
    };
    let texts: Vec<&str> = witness.events.iter().map(|e| e.text.as_str()).collect();
    assert!(
        texts.contains(&"ld.relaxed.gpu y=0") && texts.contains(&"ld.relaxed.gpu x=0"),
        "{texts:?}"
    );
    match &x.op {
        Some(OpExplanation::Reached { replay }) => {
            assert!(
                replay.ends_with("litmus/sb/SB+rlx.gpu.litmus --follow 0,0,0,0,0,0"),
                "{replay}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn proxy_and_async_explanations_name_the_fence_on_the_cycle() {
    let x = explain_file("litmus/proxy/MP-const+rel+acq-fence.proxy.constant.gpu.litmus");
    let (reasons, _) = forbidden(&x);
    assert!(
        reasons[0].contains("—po→ P1 fence.proxy.constant —po→ P1 cold c=0 —fr→ P0 st x=42"),
        "{reasons:?}"
    );
    let x = explain_file("litmus/async/Y1+fence.proxy.async+tma-store.litmus");
    let (reasons, _) = forbidden(&x);
    assert!(
        reasons.iter().any(|r| r.contains("P0 st.shared::cta s=1 —po→ P0 fence.proxy.async.shared::cta —po→")),
        "{reasons:?}"
    );
}

/// The axioms' explanation agrees with the oracle on every public test, and
/// a forbidden outcome has the machine's explanation too (both engines
/// explain it). Also measures the time of each explanation.
#[test]
fn explanations_agree_with_the_oracle_on_every_public_test() {
    let mut times = Vec::new();
    let mut bad = Vec::new();
    for t in sample::corpus(public_tests()) {
        let want = t.program.condition.target();
        let start = std::time::Instant::now();
        let x = explain_prop(&t, &want);
        times.push((start.elapsed().as_secs_f64(), t.display_path()));
        // Every `elect.sync` leader choice: the outcome is allowed when one
        // choice allows it.
        let cols = ptxmc::outcome::Columns::of(&t.program);
        let variants = ptxmc::ir::elect::Variants::of(&t.program).unwrap();
        let allowed = variants.programs.iter().any(|(_, v)| {
            ax::run(v, &AxOptions::default())
                .unwrap()
                .outcomes
                .iter()
                .any(|s| want.eval(&|term: &ptxmc::ir::Term| cols.term(s, term)))
        });
        let ok = match (&x.ax.verdict, &x.op) {
            (AxVerdict::Allowed { .. }, Some(OpExplanation::Reached { .. })) => allowed,
            // Every listed group has a reason (none at all: no combination
            // of writes has the outcome's values).
            (AxVerdict::Forbidden { groups, .. }, Some(OpExplanation::Blocked { .. })) => {
                !allowed && groups.iter().all(|g| !g.reasons.is_empty())
            }
            _ => false,
        };
        if !ok {
            bad.push(format!(
                "{}: {:?} / {:?}",
                t.display_path(),
                x.ax.verdict,
                x.op
            ));
        }
    }
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    eprintln!(
        "explain: {} tests, median {:.4} s, max {:.4} s ({})",
        times.len(),
        times[times.len() / 2].0,
        times.last().unwrap().0,
        times.last().unwrap().1
    );
    assert!(bad.is_empty(), "{} wrong:\n{}", bad.len(), bad.join("\n"));
}
