//! `fix` says why it found no fix, on many tests (issue 28, item 4): the
//! outcome comes from a hang; allowed under sequential consistency (not a
//! memory-ordering bug, and `explain` says the same); needs more changes
//! than the bound (a fix of that size found and verified). Each row runs
//! `ptxmc fix --format json` and checks the reason's kind, its words and
//! the exit status.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `ptxmc fix FILE ARGS --format json`: exit status and the report.
fn fix(file: &str, args: &[&str]) -> (i32, serde_json::Value) {
    let o = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .current_dir(root())
        .arg("fix")
        .arg(file)
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{file}: {e}\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

/// Programs whose asked outcome only a stuck program shows: the condition
/// reads a register the stuck thread never writes, or memory as it was
/// when everything stopped.
const FROM_HANG: &[(&str, &str)] = &[
    ("litmus/liveness/Flag-never-set.litmus", "P1:r1 == 0"),
    (
        "litmus/liveness/Flag-never-set-fence-in-spin.litmus",
        "P1:r0 == 0",
    ),
    (
        "litmus/liveness/Grid-barrier-miscounted.litmus",
        "P0:r2 == 0 \\/ P1:r2 == 0",
    ),
    ("litmus/liveness/Self-loop.litmus", ""),
    ("litmus/liveness/Counter-closed-loop.litmus", ""),
    ("litmus/liveness/Spinlock-cas-beq-never-released.litmus", ""),
    ("litmus/liveness/Mbar-phase-never-completes.litmus", ""),
    ("litmus/liveness/SplitK-flag-chain-broken.litmus", ""),
    ("litmus/liveness/Cluster-barrier-missing-cta.litmus", ""),
    ("litmus/barriers/Bar64-three-warps.litmus", ""),
];

#[test]
fn an_outcome_only_a_hang_shows_says_it_comes_from_a_hang() {
    for (file, outcome) in FROM_HANG {
        let (code, v) = fix(file, &[]);
        assert_eq!(code, 5, "{file}: a program that still hangs exits as `run`");
        assert_eq!(v["problem"], "hang", "{file}");
        assert_eq!(v["fixes"], serde_json::json!([]), "{file}");
        assert_eq!(v["why"]["kind"], "from_hang", "{file}: {}", v["why"]);
        let text = v["why"]["text"].as_str().unwrap();
        let want = format!(
            "the outcome comes from a hang: no execution that ends gives {}; the program shows it only while stuck (",
            v["outcome"].as_str().unwrap()
        );
        assert!(text.starts_with(&want), "{file}: {text}");
        assert!(
            text.ends_with(
                "No fence or stronger annotation can forbid it: the fix is whatever makes the program terminate"
            ),
            "{file}: {text}"
        );
        if !outcome.is_empty() {
            assert_eq!(v["outcome"], *outcome, "{file}");
        }
    }
}

/// A hang whose stuck configuration does not show the outcome keeps the
/// general reason: the program's logic, not this outcome, is at fault.
#[test]
fn a_hang_that_does_not_show_the_outcome_is_not_called_its_source() {
    let (code, v) = fix("litmus/liveness/Circular-wait.litmus", &[]);
    assert_eq!(code, 5);
    assert_eq!(v["why"]["kind"], "no_repair", "{}", v["why"]);
}

/// Outcomes the strongest program still allows; `explain` finds a
/// sequentially consistent witness for each (an interleaving gives it).
/// With `--no-repairs` the reason is "not a memory-ordering bug" only when
/// no barrier repair within the bound forbids the outcome either.
const NOT_MEMORY_ORDERING: &[&str] = &[
    "litmus/races/RF-single-thread-weak.litmus",
    "litmus/async/CpAsync-no-wait.litmus",
    "litmus/vector/Vector-stores-tear.litmus",
];

/// Sequentially consistent outcomes that no fence or annotation forbids but
/// an inserted barrier does (it orders the racing accesses): `--no-repairs`
/// says so, and `explain` agrees that no fence or annotation can (it names
/// the barrier a writer lane never reaches, or says sequentially consistent).
const NEEDS_BARRIER: &[&str] = &[
    "litmus/races/DR-WW-weak.litmus",
    "litmus/races/IS-gpu-vs-cta.litmus",
    "litmus/races/DR-three-writers-reader.litmus",
    "litmus/warp/MP+syncwarp-writer-exits.litmus",
];

#[test]
fn an_outcome_a_barrier_forbids_is_not_called_a_logic_bug() {
    for file in NEEDS_BARRIER {
        let (code, v) = fix(file, &["--no-repairs"]);
        assert_eq!(code, 0, "{file}");
        assert_eq!(v["why"]["kind"], "needs_repair", "{file}: {}", v["why"]);
        assert_eq!(
            v["why"]["text"],
            "no fence or annotation fixes it; a barrier does: run without --no-repairs",
            "{file}"
        );
        // The barrier fix it names is the one the search with repairs lists.
        let fix_words = v["why"]["fix"][0].as_str().unwrap().to_string();
        let (code, with) = fix(file, &[]);
        assert_eq!(code, 0, "{file}");
        let listed: Vec<&str> = with["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["changes"].as_array().unwrap())
            .map(|c| c["text"].as_str().unwrap())
            .collect();
        assert!(listed.contains(&fix_words.as_str()), "{file}: {fix_words}");
        let t = ptxmc::litmus::parse_file(&root().join(file))
            .unwrap()
            .remove(0);
        let want = t.program.condition.target();
        match ptxmc::explain::missing_orderings(&t, &want, &Default::default()) {
            // Sequentially consistent, or the barrier the writer does not
            // reach is named (a `bar.warp.sync` whose writer lane exits).
            ptxmc::explain::MissingAnswer::Allowed { missing } => {
                assert!(
                    missing.sequentially_consistent
                        || (!missing.pairs.is_empty()
                            && missing.pairs.iter().all(|p| p.kind == "barrier_phase")),
                    "{file}: {missing:?}"
                );
            }
            other => panic!("{file}: {other:?}"),
        }
    }
}

#[test]
fn an_outcome_allowed_under_sequential_consistency_is_not_a_memory_ordering_bug() {
    for file in NOT_MEMORY_ORDERING {
        let (code, v) = fix(file, &["--no-repairs"]);
        assert_eq!(code, 0, "{file}");
        assert_eq!(
            v["why"]["kind"], "not_memory_ordering",
            "{file}: {}",
            v["why"]
        );
        let text = v["why"]["text"].as_str().unwrap();
        assert!(
            text.starts_with(
                "allowed under sequential consistency: not a memory-ordering bug — the outcome stays allowed even in the strongest program — "
            ),
            "{file}: {text}"
        );
        // `explain` says the same thing: nothing is missing.
        let t = ptxmc::litmus::parse_file(&root().join(file))
            .unwrap()
            .remove(0);
        let want = t.program.condition.target();
        match ptxmc::explain::missing_orderings(&t, &want, &Default::default()) {
            // A wait left out is named by `explain` (`explain::waits`),
            // though no fence or stronger annotation forbids the outcome.
            ptxmc::explain::MissingAnswer::Allowed { missing }
                if file.ends_with("CpAsync-no-wait.litmus") =>
            {
                assert!(!missing.sequentially_consistent, "{file}: {missing:?}");
                assert!(
                    missing.pairs[0].links[0].ends_with(
                        "nothing between them waits for it: `cp.async.commit_group` and \
                         `cp.async.wait_group 0` (or `cp.async.wait_all`) between them are missing"
                    ),
                    "{file}: {missing:?}"
                );
            }
            ptxmc::explain::MissingAnswer::Allowed { missing } => {
                assert!(missing.sequentially_consistent, "{file}: {missing:?}");
                assert!(!missing.interleaving.is_empty(), "{file}");
            }
            other => panic!("{file}: {other:?}"),
        }
    }
}

/// Outcomes that a fix of 2 changes forbids, asked with `--bound 1`: the
/// reason says more are needed, and the fix found has 2 changes.
const NEEDS_MORE: &[&str] = &[
    "litmus/mp/MP+rlx+rlx.gpu.litmus",
    "litmus/sb/SB+rlx.gpu.litmus",
    "litmus/iriw/IRIW+rel+acq.gpu.litmus",
    "litmus/lb/LB+rlx.gpu.litmus",
];

#[test]
fn an_outcome_that_needs_more_changes_says_how_many_were_found() {
    for file in NEEDS_MORE {
        let (code, v) = fix(file, &["--bound", "1", "--no-repairs"]);
        assert_eq!(code, 0, "{file}");
        assert_eq!(
            v["why"]["kind"], "needs_more_changes",
            "{file}: {}",
            v["why"]
        );
        assert_eq!(v["why"]["fix_changes"], 2, "{file}");
        let text = v["why"]["text"].as_str().unwrap();
        assert!(
            text.ends_with(
                "a fix needs more than 1 change; 2 of them suffice (verified by both engines); try --bound 2"
            ),
            "{file}: {text}"
        );
        // And `--bound 2` finds a fix of 2 changes.
        let (code, v) = fix(file, &["--bound", "2", "--no-repairs"]);
        assert_eq!(code, 0, "{file}");
        assert_eq!(
            v["fixes"][0]["changes"].as_array().map(Vec::len),
            Some(2),
            "{file}"
        );
        assert_eq!(v["fixes"][0]["verified"], true, "{file}");
    }
}

/// The reason when changes within the bound forbid the outcome though the
/// search found no fix (it rejected each one it met: the program then
/// hangs, or a wait never succeeds). `why_no_fix` is asked directly with a
/// bound the 2-change fix of `MP+rlx+rlx` fits in: it used to say "a fix
/// needs more than 3 changes; 2 of them suffice", which contradicts itself.
#[test]
fn changes_within_the_bound_that_forbid_it_are_not_called_a_fix_needing_more() {
    use ptxmc::fix::why::{NoFixKind, why_no_fix};
    let t = ptxmc::litmus::parse_file(&root().join("litmus/mp/MP+rlx+rlx.gpu.litmus"))
        .unwrap()
        .remove(0);
    let p = &t.program;
    let want = p.condition.target();
    let sites = ptxmc::fix::sites::strengthening_sites(p);
    let budget = ptxmc::limits::Budget::new(ptxmc::limits::Limits::default());
    let why = why_no_fix(
        p,
        &want,
        &sites,
        3,
        2,
        ptxmc::model::barrier::Reading::default(),
        &budget,
        None,
    );
    assert_eq!(why.kind, NoFixKind::FixesRejected);
    assert_eq!(
        why.text,
        format!(
            "the strongest program — every access at its strongest semantics and widest scope (loads acquire, stores release, RMWs acq_rel), every fence fence.sc and fence.sc between every two instructions: {} changes — forbids it (checked by both engines), and so do 2 of its changes (verified by both engines); but the search rejected every fix of at most 3 changes it found: with each, the program can hang (both engines agree) or a wait that succeeds as written never succeeds, so none is listed",
            sites.len()
        )
    );
    assert_eq!(why.fix_changes, None);
    assert!(why.fix.is_empty());
    // With a bound below the fix's size the reason is still "needs more".
    let why = why_no_fix(
        p,
        &want,
        &sites,
        1,
        2,
        ptxmc::model::barrier::Reading::default(),
        &budget,
        None,
    );
    assert_eq!(why.kind, NoFixKind::NeedsMoreChanges);
    assert!(
        why.text.ends_with(
            "a fix needs more than 1 change; 2 of them suffice (verified by both engines); try --bound 2"
        ),
        "{}",
        why.text
    );
}
