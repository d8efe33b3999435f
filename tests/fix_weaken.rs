//! `ptxmc fix --weaken` (issue 28 item 5): only maximal weakenings, each
//! keeping every property of the test (condition, termination, definedness,
//! no new race, the final values of every location and register); the
//! single-site weakenings that keep the condition but change something else
//! flagged with what they change; sites named by line and column; a time
//! limit that ends with an explicit incomplete statement.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ptxmc::engine::{self, RunOptions, RunResult};
use ptxmc::fix::{self, FixOptions, sites};
use ptxmc::ir::{Program, Prop, Term};
use ptxmc::litmus::{self, LitmusTest};
use ptxmc::outcome::Columns;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn load(path: &str) -> LitmusTest {
    litmus::parse_file(&root().join(path))
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
        .remove(0)
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

/// The report's lines but the last (`Searched …`, which has a time).
fn lines_but_timing(out: &str) -> Vec<&str> {
    let mut l: Vec<&str> = out.lines().collect();
    let last = l.pop().unwrap_or_default();
    assert!(last.starts_with("Searched "), "{out}");
    l
}

const SEMAPHORE: &str = "litmus/weaken/Semaphore-count+MP.litmus";
const SEQLOCK: &str = "litmus/weaken/Seqlock.litmus";
const CHASE_LEV: &str = "litmus/weaken/ChaseLev-push-pop+steal.litmus";

const KEEP: &str = "forbidden and everything else the program does (termination, definedness, races, the final values of every location and register)";

/// Narrowing a semaphore's atomics to `.cta` (the threads are in two CTAs)
/// keeps the condition, which looks at the message only, but brings back a
/// lost update: never offered, flagged with the new final value and the
/// new race.
#[test]
fn semaphore_narrowed_to_cta_is_flagged_not_offered() {
    let (code, out, err) = ptxmc(&["fix", "--weaken", SEMAPHORE]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines_but_timing(&out),
        vec![
            format!("Weaken Semaphore-count+MP: keep P1:r0 == 1 /\\ P1:r1 == 0 {KEEP}").as_str(),
            "  1. [saves 5] P0 `atom.relaxed.gpu.add r0, sem, 1` at 9:2 → `atom.relaxed.cluster.add r0, sem, 1` and P0 `st.release.gpu f, 1` at 10:2 → `st.release.cluster f, 1` and P1 `ld.acquire.gpu r0, f` at 8:37 → `ld.acquire.cluster r0, f` and P1 `atom.relaxed.gpu.add r2, sem, 1` at 10:37 → `atom.relaxed.cluster.add r2, sem, 1`  (verified by both engines)",
            "Not offered: each of these keeps P1:r0 == 1 /\\ P1:r1 == 0 forbidden but changes what the condition does not observe:",
            "  - P0 `atom.relaxed.gpu.add r0, sem, 1` at 9:2 → `atom.relaxed.cta.add r0, sem, 1`: new final value sem=1; new race on sem: P0 `atom.relaxed.gpu.add r0, sem, 1` at 9:2 / P1 `atom.relaxed.gpu.add r2, sem, 1` at 10:37 (insufficient-scope)",
            "  - P1 `atom.relaxed.gpu.add r2, sem, 1` at 10:37 → `atom.relaxed.cta.add r2, sem, 1`: new final value sem=1; new race on sem: P0 `atom.relaxed.gpu.add r0, sem, 1` at 9:2 / P1 `atom.relaxed.gpu.add r2, sem, 1` at 10:37 (insufficient-scope)",
        ]
    );
    // The same as data.
    let (code, out, _) = ptxmc(&["fix", "--weaken", "--format", "json", SEMAPHORE]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["fixes"].as_array().unwrap().len(), 1);
    assert_eq!(v["flagged"][0]["changes_what"][0], "new final value sem=1");
    assert_eq!(
        v["flagged"][0]["change"]["text"],
        "P0 `atom.relaxed.gpu.add r0, sem, 1` at 9:2 → `atom.relaxed.cta.add r0, sem, 1`"
    );
    assert!(v["weaken"]["stopped"].is_null());
    assert!(v["weaken"]["stats"]["checked"].as_u64().unwrap() > 0);
}

/// Weakening a seqlock's sequence store (to `.cta`, let alone `.weak`)
/// keeps the condition (the reader retries) but makes the store race with
/// the reader's loads: flagged; the one safe weakening narrows to the
/// cluster and turns the fences into the release / acquire fences a
/// seqlock needs (Boehm, MSPC'12).
#[test]
fn seqlock_sequence_store_weakening_is_flagged() {
    let (code, out, err) = ptxmc(&["fix", "--weaken", SEQLOCK]);
    assert_eq!(code, 0, "{err}");
    let cond = "P1:r0 == 0 /\\ P1:r3 == 0 /\\ (P1:r1 != 0 \\/ P1:r2 != 0) \\/ P1:r0 == 2 /\\ P1:r3 == 2 /\\ (P1:r1 != 1 \\/ P1:r2 != 1)";
    assert_eq!(
        lines_but_timing(&out),
        vec![
            format!("Weaken Seqlock: keep {cond} {KEEP}").as_str(),
            "  1. [saves 19] P0 `st.relaxed.gpu seq, 1` at 8:2 → `st.relaxed.cluster seq, 1` and P0 `fence.acq_rel.gpu` at 9:2 → `fence.release.cluster` and P0 `st.relaxed.gpu d0, 1` at 10:2 → `st.relaxed.cluster d0, 1` and P0 `st.relaxed.gpu d1, 1` at 11:2 → `st.relaxed.cluster d1, 1` and P0 `st.release.gpu seq, 2` at 12:2 → `st.release.cluster seq, 2` and P1 `ld.acquire.gpu r0, seq` at 8:29 → `ld.acquire.cluster r0, seq` and P1 `ld.relaxed.gpu r1, d0` at 9:29 → `ld.relaxed.cluster r1, d0` and P1 `ld.relaxed.gpu r2, d1` at 10:29 → `ld.relaxed.cluster r2, d1` and P1 `fence.acq_rel.gpu` at 11:29 → `fence.acquire.cluster` and P1 `ld.relaxed.gpu r3, seq` at 12:29 → `ld.relaxed.cluster r3, seq`  (verified by both engines)",
            format!("Not offered: each of these keeps {cond} forbidden but changes what the condition does not observe:").as_str(),
            "  - P0 `st.relaxed.gpu seq, 1` at 8:2 → `st.relaxed.cta seq, 1`: new race on seq: P0 `st.relaxed.gpu seq, 1` at 8:2 / P1 `ld.acquire.gpu r0, seq` at 8:29 (insufficient-scope); new race on seq: P0 `st.relaxed.gpu seq, 1` at 8:2 / P1 `ld.relaxed.gpu r3, seq` at 12:29 (insufficient-scope)",
            "  - P1 `ld.relaxed.gpu r3, seq` at 12:29 → `ld.relaxed.cta r3, seq`: new race on seq: P0 `st.relaxed.gpu seq, 1` at 8:2 / P1 `ld.relaxed.gpu r3, seq` at 12:29 (insufficient-scope); new race on seq: P0 `st.release.gpu seq, 2` at 12:2 / P1 `ld.relaxed.gpu r3, seq` at 12:29 (insufficient-scope)",
        ]
    );
    // The condition-only answer (the old one) offered `st.weak seq, 1`.
    assert!(!out.contains("→ `st.weak seq, 1`  ("), "{out}");
}

/// The two-thread Chase-Lev deque: answered well within 10 s (it took more
/// than 120 s, silently, before), each of P1's two `fence.sc.gpu` named by
/// its line and column.
#[test]
fn chase_lev_is_answered_in_seconds() {
    let t0 = Instant::now();
    let (code, out, err) = ptxmc(&["fix", "--weaken", CHASE_LEV]);
    let took = t0.elapsed();
    assert_eq!(code, 0, "{err}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let l = lines_but_timing(&out);
    assert_eq!(
        l.iter().filter(|l| l.starts_with("  1. ")).count(),
        1,
        "{out}"
    );
    assert!(!out.contains("  2. "), "{out}");
    for site in [
        "remove P0 `fence.sc.gpu` at 16:2",
        "P0 `fence.sc.gpu` at 10:2 → `fence.release.cluster`",
        "remove P1 `fence.sc.gpu` at 9:34",
        "remove P1 `fence.sc.gpu` at 14:34",
    ] {
        assert!(l[1].contains(site), "{site}: {out}");
    }
    assert!(l[1].ends_with("(verified by both engines)"), "{out}");
    assert!(
        out.contains("  - P0 `st.relaxed.gpu bot, r1` at 15:2 → `st.relaxed.cta bot, r1`: new race on bot: P0 `st.relaxed.gpu bot, r1` at 15:2 / P1 `ld.acquire.gpu r1, bot` at 10:34 (insufficient-scope)\n"),
        "{out}"
    );
}

/// What a run shows that a weakening must keep: whether the outcome is
/// allowed, a hang, an undefined step, the number of racing pairs, each
/// column's final values. Computed here from `engine::run` (both engines),
/// apart from the search's own comparison.
fn observed(p: &Program, want: &Prop) -> (bool, bool, bool, usize, Vec<Vec<i64>>) {
    let r: RunResult = engine::run(p, &RunOptions::default());
    assert!(r.incomplete.is_none() && r.disagreement.is_none());
    let cols = Columns::of(p);
    let allowed = r
        .outcomes
        .iter()
        .any(|s| want.eval(&|t: &Term| cols.term(s, t)));
    let mut values = vec![Vec::new(); cols.len()];
    for s in &r.outcomes {
        for (k, v) in s.iter().enumerate() {
            if !values[k].contains(v) {
                values[k].push(*v);
            }
        }
    }
    values.iter_mut().for_each(|v| v.sort());
    (
        allowed,
        r.termination.hangs(),
        r.undefined.is_some(),
        r.races.found.len(),
        values,
    )
}

/// Every weakening listed keeps everything, and is maximal: taking any of
/// its sites further, or weakening any other site, changes something.
#[test]
fn every_weakening_is_safe_and_maximal() {
    for path in [
        SEMAPHORE,
        SEQLOCK,
        CHASE_LEV,
        "litmus/mp/MP+rel+acq.gpu.litmus",
        "litmus/sb/SB+fence.sc.gpu.litmus",
        "tests/peers/dat3m/litmus/PTX/Manual/MICRO24-Fig4a-correct.litmus",
    ] {
        let t = load(path);
        let p = &t.program;
        let want = &p.condition.prop;
        let orig = observed(p, want);
        let r = fix::weaken(p, want, &FixOptions::default());
        assert!(!r.incomplete && !r.fixes.is_empty(), "{path}");
        let all = sites::weakening_sites(p, &sites::Positions::new());
        for f in &r.fixes {
            assert!(f.verified, "{path}");
            assert_eq!(observed(&f.program, want), orig, "{path}: {:?}", f.changes);
            // The (site, variant) of each change, by its text.
            let chosen: Vec<(usize, usize)> = f
                .changes
                .iter()
                .map(|c| {
                    all.iter()
                        .enumerate()
                        .find_map(|(s, site)| {
                            site.variants
                                .iter()
                                .position(|v| v.text == c.text)
                                .map(|k| (s, k))
                        })
                        .expect("a change is a variant of a site")
                })
                .collect();
            for (s, site) in all.iter().enumerate() {
                for k in 0..site.variants.len() {
                    let further = match chosen.iter().find(|(cs, _)| *cs == s) {
                        Some(&(_, ck)) => ck != k && site.leq(ck, k),
                        None => true,
                    };
                    if !further {
                        continue;
                    }
                    let mut c: Vec<(usize, usize)> =
                        chosen.iter().copied().filter(|(cs, _)| *cs != s).collect();
                    c.push((s, k));
                    let q = sites::apply(p, &all, &c);
                    assert_ne!(
                        observed(&q, want),
                        orig,
                        "{path}: {:?} plus {} keeps everything: not maximal",
                        f.changes.iter().map(|c| &c.text).collect::<Vec<_>>(),
                        site.variants[k].text
                    );
                }
            }
        }
    }
}

/// Exact lists on classic shapes: MP with release / acquire narrows to the
/// cluster (one cluster: `.gpu` adds nothing, `.cluster` costs less); store
/// buffering keeps both `fence.sc`, narrowed to the cluster.
#[test]
fn exact_lists_on_classic_shapes() {
    let (code, out, _) = ptxmc(&["fix", "--weaken", "litmus/mp/MP+rel+acq.gpu.litmus"]);
    assert_eq!(code, 0);
    assert_eq!(
        lines_but_timing(&out)[1..],
        [
            "  1. [saves 3] P0 `st.release.gpu f, 1` at 9:2 → `st.release.cluster f, 1` and P1 `ld.acquire.gpu r0, f` at 8:29 → `ld.acquire.cluster r0, f`  (verified by both engines)"
        ]
    );
    let (code, out, _) = ptxmc(&["fix", "--weaken", "litmus/sb/SB+fence.sc.gpu.litmus"]);
    assert_eq!(code, 0);
    assert_eq!(
        lines_but_timing(&out)[1..],
        [
            "  1. [saves 8] P0 `fence.sc.gpu` at 9:2 → `fence.sc.cluster` and P1 `fence.sc.gpu` at 9:29 → `fence.sc.cluster`  (verified by both engines)"
        ]
    );
}

/// A test with nothing to weaken, and one whose every weakening changes
/// something: no empty "weakening" is ever listed.
#[test]
fn no_empty_weakening_is_listed() {
    let (code, out, _) = ptxmc(&["fix", "--weaken", "litmus/barriers/Bar0-loop.litmus"]);
    assert_eq!(code, 0);
    assert_eq!(
        lines_but_timing(&out)[1..],
        ["  Nothing to weaken: no fence, and no strong access or mbarrier operation."]
    );
    let (code, out, _) = ptxmc(&[
        "fix",
        "--weaken",
        "litmus/mp/MP+rel+acq.cta-same-cta.litmus",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        lines_but_timing(&out)[1..],
        ["  No weakening keeps all of it: every site is needed as written."]
    );
}

/// The time limit ends the search with an explicit statement, never
/// silence, and exit status 4.
#[test]
fn time_limit_ends_with_an_incomplete_statement() {
    let (code, out, _) = ptxmc(&["fix", "--weaken", "--timeout", "0.02", CHASE_LEV]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains("Incomplete: the time limit (0.02 s) stopped the search; ")
            || out
                .contains("Incomplete: the time limit stopped the run of the program as written."),
        "{out}"
    );
    // With the library: a zero time limit stops before any run.
    let t = load(CHASE_LEV);
    let r = fix::weaken(
        &t.program,
        &t.program.condition.prop,
        &FixOptions {
            timeout: Some(Duration::ZERO),
            ..FixOptions::default()
        },
    );
    assert!(r.incomplete && r.fixes.is_empty());
    assert_eq!(
        r.weaken.unwrap().stopped.as_deref(),
        Some("the time limit stopped the run of the program as written")
    );
}

/// `--bound` is the fix search's; a maximal weakening changes as many
/// sites as it can, so `--weaken --bound` is refused by name.
#[test]
fn bound_is_refused_with_weaken() {
    let (code, _, err) = ptxmc(&["fix", "--weaken", "--bound", "2", SEMAPHORE]);
    assert_eq!(code, 2);
    assert!(err.contains("--bound does not apply to --weaken"), "{err}");
}

mod sample;

/// The monotonicity the search rests on, for weakenings: a weakening of one
/// site (each variant of each site of the sampled library tests of at most
/// three threads) keeps every final state, every racing pair and every
/// undefined step of the program as written, and a hang stays a hang.
#[test]
fn weakening_never_removes_behaviours() {
    let files = litmus::collect_files(&[root().join("litmus")]).unwrap();
    let files = sample::corpus(files);
    let mut checked = 0;
    for f in files {
        for t in litmus::parse_file(&f).unwrap() {
            let p = &t.program;
            if ptxmc::model::Model::Ptx75.admit(p, &t.spans).is_err() || p.threads.len() > 3 {
                continue;
            }
            let base = engine::run(
                p,
                &RunOptions {
                    engine: engine::EngineChoice::Ax,
                    ..RunOptions::default()
                },
            );
            if base.incomplete.is_some() || base.bound_hit {
                continue;
            }
            let ws = sites::weakening_sites(p, &sites::Positions::new());
            for (s, site) in ws.iter().enumerate() {
                for k in 0..site.variants.len() {
                    let q = sites::apply(p, &ws, &[(s, k)]);
                    let r = engine::run(
                        &q,
                        &RunOptions {
                            engine: engine::EngineChoice::Ax,
                            ..RunOptions::default()
                        },
                    );
                    if r.incomplete.is_some() {
                        continue;
                    }
                    let what = format!("{}: {}", t.display_path(), site.variants[k].text);
                    // Weakenings keep the columns: same threads, registers, locations.
                    let all = |r: &RunResult| -> std::collections::BTreeSet<Vec<i64>> {
                        r.outcomes.union(&r.filtered_out).cloned().collect()
                    };
                    assert!(all(&base).is_subset(&all(&r)), "{what} removes outcomes");
                    // A removed instruction shifts the later ones of its thread.
                    let removed = match &site.variants[k].action {
                        sites::Action::Remove { thread, pc } => Some((*thread, *pc)),
                        _ => None,
                    };
                    let back = |a: &ptxmc::ax::race::Access| match removed {
                        Some((t, pc)) if a.thread == t && a.pc >= pc => (a.thread, a.pc + 1),
                        _ => (a.thread, a.pc),
                    };
                    let races: Vec<_> = r
                        .races
                        .found
                        .iter()
                        .map(|f| (f.race.loc, back(&f.race.first), back(&f.race.second)))
                        .collect();
                    for f in &base.races.found {
                        let key = (
                            f.race.loc,
                            (f.race.first.thread, f.race.first.pc),
                            (f.race.second.thread, f.race.second.pc),
                        );
                        assert!(races.contains(&key), "{what} removes a race");
                    }
                    assert!(
                        base.undefined.is_none() || r.undefined.is_some(),
                        "{what} removes an undefined step"
                    );
                    // Where the weakened loop is no spin or retry loop any
                    // more it is bounded and its termination undecided
                    // (`fix --weaken` counts that as unsafe), not shown.
                    assert!(
                        !base.termination.hangs() || r.termination.hangs() || r.bound_hit,
                        "{what} removes a hang"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > sample::corpus_len(300), "{checked}");
}

/// A weakening whose run takes its whole share of the time limit (one
/// thread's CAS narrowed to `.cta` turns its retry loop into a loop the
/// oracle unrolls) is undecided: never listed, counted, and the answer is
/// incomplete (exit 4), the weakenings listed still safe.
#[test]
fn a_run_that_takes_its_share_of_the_limit_is_undecided() {
    let (code, out, _) = ptxmc(&[
        "fix",
        "--weaken",
        // With four trips round each loop, three of the narrowed CASes'
        // runs take more than 20 s each on this machine and three more over
        // 1 s, while every other run takes about 0.1 s: a tenth of 10 s per
        // run leaves them undecided with a twentyfold margin, and the whole
        // search (about 6 s) ends well before its own deadline even on a
        // loaded CI machine. (With the default bound and 1 s the runs took
        // 0.3 s against a share of 0.1 s, and on CI the search's own
        // deadline came first.)
        "--loop-bound",
        "4",
        "--timeout",
        "10",
        "litmus/liveness/Spinlock-cas-3cta.litmus",
    ]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains(
            " could not be checked within the time one run may take (a tenth of the limit) and were counted unsafe: the weakenings listed are safe but may not be maximal (a longer --timeout gives each run more).\n"
        ),
        "{out}"
    );
    // The safe weakening every run agrees on (the whole lock narrowed to
    // the cluster) is still listed, verified by both engines; a narrowed
    // CAS is never listed as safe.
    assert!(out.contains("  1. [saves 9] "), "{out}");
    assert!(!out.contains("  2. "), "{out}");
    assert!(!out.contains("atom.acquire.cta.cas"), "{out}");
}
