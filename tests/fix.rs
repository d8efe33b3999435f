//! `ptxmc fix` and `fix --weaken`: the expected fixes on the classic
//! shapes and the async proxy, every reported fix verified, and the
//! monotonicity the search relies on.

use std::path::{Path, PathBuf};

use ptxmc::fix::{self, FixOptions, sites};
use ptxmc::litmus::{self, LitmusTest};
use ptxmc::model::Model;

mod sample;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn load(path: &str) -> LitmusTest {
    litmus::parse_file(&root().join(path))
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
        .remove(0)
}

fn first_fix(path: &str) -> Vec<String> {
    let t = load(path);
    let r = fix::fix(
        &t.program,
        &t.program.condition.prop,
        &FixOptions::default(),
    );
    assert!(r.allowed, "{path}: the outcome is not allowed");
    assert!(r.fixes.iter().all(|f| f.verified), "{path}: unverified fix");
    r.fixes[0].changes.iter().map(|c| c.text.clone()).collect()
}

#[test]
fn mp_with_relaxed_flag_accesses_is_fixed_by_release_and_acquire_first() {
    assert_eq!(
        first_fix("litmus/mp/MP+rlx+rlx.gpu.litmus"),
        vec![
            "P0 `st.relaxed.gpu f, 1` → `st.release.gpu f, 1`",
            "P1 `ld.relaxed.gpu r0, f` → `ld.acquire.gpu r0, f`"
        ]
    );
}

#[test]
fn tma_store_without_proxy_fence_is_fixed_by_the_fence() {
    assert_eq!(
        first_fix("litmus/async/Y1+tma-store.litmus"),
        vec![
            "insert `fence.proxy.async.shared::cta` in P0 before `cp.async.bulk.global.shared::cta.bulk_group [g], [s], 4`"
        ]
    );
    assert_eq!(
        first_fix("litmus/proxy/CoWR-tex-single-thread.litmus"),
        vec!["insert `fence.proxy.texture` in P0 before `tld.weak r0, t`"]
    );
}

#[test]
fn remote_mbarrier_arrive_is_fixed_by_a_cluster_wait() {
    assert_eq!(
        first_fix("litmus/async/Y4+mbarrier.rel.cluster-remote+acq.cta.litmus"),
        vec![
            "P1 `mbarrier.try_wait.acquire.cta.shared::cta.b64 r0, [bar], 0` → `mbarrier.try_wait.acquire.cluster.shared::cta.b64 r0, [bar], 0`"
        ]
    );
}

#[test]
fn fixes_are_minimal_and_cheapest_first() {
    let t = load("litmus/mp/MP+rlx+rlx.gpu.litmus");
    let r = fix::fix(
        &t.program,
        &t.program.condition.prop,
        &FixOptions::default(),
    );
    let costs: Vec<u32> = r.fixes.iter().map(|f| f.cost).collect();
    let mut sorted = costs.clone();
    sorted.sort();
    assert_eq!(costs, sorted);
    // No fix contains another (as a set of change texts).
    for a in &r.fixes {
        for b in &r.fixes {
            if std::ptr::eq(a, b) {
                continue;
            }
            assert!(
                !b.changes.iter().all(|c| a.changes.contains(c)),
                "{:?} contains {:?}",
                a.changes,
                b.changes
            );
        }
    }
    // Removing any change of a fix brings the outcome back.
    for f in &r.fixes {
        assert!(fix::forbidden_by_both(
            &f.program,
            &t.program.condition.prop,
            2
        ));
    }
}

#[test]
fn weakening_release_acquire_narrows_to_the_cluster() {
    let t = load("litmus/mp/MP+rel+acq.gpu.litmus");
    let r = fix::weaken(
        &t.program,
        &t.program.condition.prop,
        &FixOptions::default(),
    );
    let texts: Vec<Vec<String>> = r
        .fixes
        .iter()
        .map(|f| f.changes.iter().map(|c| c.text.clone()).collect())
        .collect();
    assert_eq!(
        texts,
        vec![vec![
            "P0 `st.release.gpu f, 1` → `st.release.cluster f, 1`".to_string(),
            "P1 `ld.acquire.gpu r0, f` → `ld.acquire.cluster r0, f`".to_string()
        ]]
    );
    assert!(r.fixes.iter().all(|f| f.verified));
}

/// A symmetric lock bug: relaxed CAS and relaxed unlock on both threads, so
/// an increment is lost; the fix (acquire CAS + release unlock on both)
/// needs 4 changes, one more than the default bound.
const LOCK_RLX: &str = r#"PTX Lock-rlx
"Two CTAs take a CAS spin-lock with relaxed atomics and release it with a relaxed store: an increment is lost."
{
lock=0; x=0;
}
 P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;
 LC00: | LC10: ;
 atom.relaxed.gpu.cas r0, lock, 0, 1 | atom.relaxed.gpu.cas r0, lock, 0, 1 ;
 bne r0, 0, LC00 | bne r0, 0, LC10 ;
 ld.weak r1, x | ld.weak r1, x ;
 add r1, r1, 1 | add r1, r1, 1 ;
 st.weak x, r1 | st.weak x, r1 ;
 st.relaxed.gpu lock, 0 | st.relaxed.gpu lock, 0 ;
exists (x != 2)
"#;

/// The `Why:` line of the text report and the JSON `why` object.
/// Repairs are off: the reason is about fences and annotations (with
/// repairs, a cluster barrier orders both tests below).
fn why_of(t: &LitmusTest, bound: usize) -> (String, serde_json::Value) {
    let opts = FixOptions {
        bound,
        repairs: false,
        ..FixOptions::default()
    };
    let r = fix::fix(&t.program, &t.program.condition.prop, &opts);
    assert!(r.allowed && r.fixes.is_empty() && !r.incomplete);
    let text = ptxmc::report::fix::text(&t.program.name, &r, false, bound, &[]);
    let line = text
        .lines()
        .find(|l| l.starts_with("  Why: "))
        .unwrap_or_else(|| panic!("no Why line in\n{text}"))
        .to_string();
    let json = serde_json::to_value(&r).unwrap();
    (line, json["why"].clone())
}

const STRONGEST: &str = "every access at its strongest semantics and widest scope (loads acquire, stores release, RMWs acq_rel), every fence fence.sc and fence.sc between every two instructions";

#[test]
fn no_fix_for_an_outcome_the_program_logic_allows_says_so() {
    // The reader may pass its (unshared) barrier and read before the writer runs.
    // No fence or annotation forbids it, but a cluster barrier does: the
    // reason says so (as `explain` names the CTA barrier the threads do not
    // share), never "not a memory-ordering bug" (issue 28).
    let t = load("litmus/barrier/MP+bar.litmus");
    let (line, why) = why_of(&t, 3);
    assert_eq!(
        line,
        "  Why: no fence or annotation fixes it; a barrier does: run without --no-repairs."
    );
    assert_eq!(why["kind"], "needs_repair");
    assert_eq!(why["fix_changes"], 1);
    assert!(
        why["fix"][0]
            .as_str()
            .unwrap()
            .starts_with("insert `barrier.cluster.arrive"),
        "{why}"
    );
    // `explain` names the barrier as the missing ordering.
    let want = t.program.condition.target();
    match ptxmc::explain::missing_orderings(&t, &want, &Default::default()) {
        ptxmc::explain::MissingAnswer::Allowed { missing } => {
            assert!(!missing.sequentially_consistent);
            let words = format!("{missing:?}");
            assert!(
                words.contains("a CTA barrier synchronises only threads of one CTA"),
                "{words}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_fix_for_a_symmetric_lock_bug_says_it_needs_more_changes() {
    let t = litmus::parse_source("Lock-rlx.litmus", LOCK_RLX)
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
        .remove(0);
    let (line, why) = why_of(&t, 3);
    assert_eq!(
        line,
        format!(
            "  Why: the strongest program — {STRONGEST}: 14 changes — forbids it (checked by both engines): a fix needs more than 3 changes; 4 of them suffice (verified by both engines); try --bound 4."
        )
    );
    assert_eq!(why["kind"], "needs_more_changes");
    assert_eq!(why["strongest_changes"], 14);
    assert_eq!(why["fix_changes"], 4);
    assert_eq!(
        why["fix"],
        serde_json::json!([
            "P0 `atom.relaxed.gpu.cas r0, lock, 0, 1` → `atom.acq_rel.gpu.cas r0, lock, 0, 1`",
            "P0 `st.relaxed.gpu lock, 0` → `st.release.gpu lock, 0`",
            "P1 `atom.relaxed.gpu.cas r0, lock, 0, 1` → `atom.acq_rel.gpu.cas r0, lock, 0, 1`",
            "P1 `st.relaxed.gpu lock, 0` → `st.release.gpu lock, 0`"
        ])
    );
    // With a smaller bound the same fix is further away, and a smaller one may exist.
    let (line, why) = why_of(&t, 2);
    assert!(
        line.ends_with(
            "a fix needs more than 2 changes; 4 of them suffice (verified by both engines; a smaller fix may exist); try --bound 3."
        ),
        "{line}"
    );
    assert_eq!(why["fix_changes"], 4);
    // And --bound 4 finds the maintainers' fix first: acquire CAS + release unlock on both threads.
    let r = fix::fix(
        &t.program,
        &t.program.condition.prop,
        &FixOptions {
            bound: 4,
            ..FixOptions::default()
        },
    );
    assert!(r.why.is_none());
    assert_eq!(
        r.fixes[0]
            .changes
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>(),
        vec![
            "P0 `atom.relaxed.gpu.cas r0, lock, 0, 1` → `atom.acquire.gpu.cas r0, lock, 0, 1`",
            "P0 `st.relaxed.gpu lock, 0` → `st.release.gpu lock, 0`",
            "P1 `atom.relaxed.gpu.cas r0, lock, 0, 1` → `atom.acquire.gpu.cas r0, lock, 0, 1`",
            "P1 `st.relaxed.gpu lock, 0` → `st.release.gpu lock, 0`"
        ]
    );
}

#[test]
fn no_fix_check_that_cannot_run_says_unknown() {
    // The search spent the time limit: the strongest program is not run and nothing is guessed.
    let t = load("litmus/barrier/MP+bar.litmus");
    let p = &t.program;
    let budget = ptxmc::limits::Budget::new(ptxmc::limits::Limits::default());
    let why = fix::why::why_no_fix(
        p,
        &p.condition.prop,
        &sites::strengthening_sites(p),
        3,
        2,
        Default::default(),
        &budget,
        Some(std::time::Instant::now()),
    );
    assert_eq!(why.kind, fix::NoFixKind::Unknown);
    assert_eq!(
        why.text,
        format!(
            "unknown: the check on the strongest program — {STRONGEST}: 4 changes — was not run: the search spent the time limit (--timeout), so whether any fix exists is not known"
        )
    );
}

/// The search assumes that a stronger variant allows no more outcomes.
/// Check it on every site of every 2- and 3-thread library test.
#[test]
fn strengthening_never_adds_outcomes() {
    let files = litmus::collect_files(&[root().join("litmus")]).unwrap();
    // A part of the library by default, all of it with PTXMC_DEEP=1.
    let files = sample::corpus(files);
    let mut checked = 0;
    for f in files {
        for t in litmus::parse_file(&f).unwrap() {
            if Model::Ptx75.admit(&t.program, &t.spans).is_err() || t.program.threads.len() > 3 {
                continue;
            }
            let base = ptxmc::ax::run(&t.program, &Default::default())
                .unwrap()
                .outcomes;
            let ss = sites::strengthening_sites(&t.program);
            for (s, site) in ss.iter().enumerate() {
                for k in 0..site.variants.len() {
                    let q = sites::apply(&t.program, &ss, &[(s, k)]);
                    let out = ptxmc::ax::run(&q, &Default::default()).unwrap().outcomes;
                    assert!(
                        out.is_subset(&base),
                        "{}: {} adds outcomes",
                        t.display_path(),
                        site.variants[k].text
                    );
                    checked += 1;
                }
            }
        }
    }
    // Over 500 variants on the whole library: as many in proportion to the part sampled.
    assert!(checked > sample::corpus_len(500), "{checked}");
}

/// The figures of `docs/fix.md`: `fix` time on every 2- and 3-thread test
/// of the library, and for the public suite how many allowed outcomes
/// (tests whose `exists` condition holds) get a minimal fix of 1, 2 or 3
/// changes, or none within the bound. Run with
/// `cargo test --release --test fix -- --ignored --nocapture`.
#[test]
#[ignore = "prints the figures of docs/fix.md (minutes); run with -- --ignored --nocapture"]
fn figures() {
    use ptxmc::ir::Quantifier;
    let mut dirs = vec![
        root().join("litmus"),
        root().join("tests/peers/mixedproxy/tests"),
    ];
    let dat3m = root().join("tests/peers/dat3m/litmus/PTX");
    for d in ["Barrier", "Manual", "Memalloy", "Nvidia"] {
        dirs.push(dat3m.join(d));
    }
    let mut lib_max = (0.0f64, String::new());
    let mut by_size = [0usize; 4];
    let mut none = Vec::new();
    let mut total_fix = 0.0;
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            if Model::Ptx75.admit(&t.program, &t.spans).is_err() {
                continue;
            }
            let p = &t.program;
            if p.condition.quantifier != Quantifier::Exists {
                continue;
            }
            let start = std::time::Instant::now();
            let r = fix::fix(p, &p.condition.prop, &FixOptions::default());
            let dt = start.elapsed().as_secs_f64();
            total_fix += dt;
            let lib = t.display_path().contains("/litmus/") && !t.display_path().contains("peers");
            if lib && p.threads.len() <= 3 && dt > lib_max.0 {
                lib_max = (dt, t.display_path());
            }
            if !r.allowed {
                continue;
            }
            match r.fixes.iter().map(|f| f.changes.len()).min() {
                Some(n) => by_size[n] += 1,
                None => {
                    by_size[0] += 1;
                    let kind = r.why.as_ref().map(|w| w.kind);
                    let size = r.why.as_ref().and_then(|w| w.fix_changes);
                    none.push(format!(
                        "{} ({kind:?}, fix of {size:?} changes)",
                        t.display_path()
                    ));
                }
            }
        }
    }
    eprintln!(
        "fix: slowest 2-/3-thread library test {:.3} s ({})",
        lib_max.0, lib_max.1
    );
    eprintln!("fix: total {:.1} s", total_fix);
    eprintln!(
        "allowed outcomes: 1 change {}, 2 changes {}, 3 changes {}, none within 3: {}",
        by_size[1], by_size[2], by_size[3], by_size[0]
    );
    for n in none {
        eprintln!("  no fix: {n}");
    }
}

/// A loop the model unrolls only `--loop-bound` times: the outcome is in
/// no listed state, but longer executions might reach it. `fix` must not
/// call it forbidden ("nothing to fix") nor claim a fix; it says it does not
/// know.
#[test]
fn a_loop_bound_cut_leaves_fix_unknown_never_forbidden() {
    let text = "PTX Loop\n{\nx=0; P0:r1=0;\n}\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;\n L:                       | ld.relaxed.gpu r0, x     ;\n add r1, r1, 1            |                          ;\n blt r1, 10, L            |                          ;\n st.relaxed.gpu x, r1     |                          ;\nexists\n(P1:r0 == 10)\n";
    let t = litmus::parse_source("Loop.litmus", text)
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
        .remove(0);
    let (line, why) = why_of(&t, 3);
    assert_eq!(
        line,
        format!(
            "  Why: unknown: the check on the strongest program — {STRONGEST}: 2 changes — is inconclusive: an execution reached the loop bound (2), and longer ones might reach the outcome (--loop-bound), so whether any fix exists is not known."
        )
    );
    assert_eq!(why["kind"], "unknown");
}
