//! Why a fix search found nothing: the *strongest* program decides it.
//!
//! The strongest program takes the furthest variant of every strengthening
//! site of the search (`sites.rs`): every generic access at its strongest
//! semantics (loads acquire, stores and reductions release, RMWs acq_rel)
//! and widest scope, every fence `fence.sc`, every mbarrier operation
//! acquire / release at `.cluster`, `fence.sc` and the proxy fences the test
//! could need between every two instructions that touch memory. By
//! monotonicity no program the search can build allows fewer outcomes, so
//! it splits "no fix within the bound" in two: if it still allows the
//! outcome, no fence or annotation at all can forbid it (the program's logic
//! allows it); if it forbids it, a fix exists with more changes. Both
//! engines run it; a run that does not finish, or on which they disagree,
//! says so and guesses nothing.

use serde::Serialize;
use std::time::{Duration, Instant};

use super::sites::{self, Site};
use crate::engine::{self, EngineChoice, RunOptions};
use crate::ir::{Program, Prop, Term};
use crate::limits::{Budget, Limits};
use crate::model::barrier::Reading;
use crate::outcome::Columns;

/// The kind of reason, as data (`why.kind` in JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoFixKind {
    /// The strongest program still allows the outcome: not a memory-ordering bug.
    NotMemoryOrdering,
    /// The strongest program forbids it: a fix needs more changes than the bound.
    NeedsMoreChanges,
    /// The check on the strongest program did not finish (limits) or the
    /// engines disagreed on it.
    Unknown,
    /// The program can hang or reach undefined behaviour and no repair or
    /// fence within the bound removes it.
    NoRepair,
    /// No execution that ends gives the outcome: only a stuck program shows
    /// it (`stuck.rs`).
    FromHang,
    /// The strongest program forbids the outcome, and so do changes within
    /// the bound, but the search rejected each fix it found there: the
    /// program could then hang, or a wait that succeeds as written never
    /// would.
    FixesRejected,
    /// A search without repairs (`--no-repairs`): no fence or annotation
    /// forbids the outcome, but a barrier (inserted, or changed) within the
    /// bound does, verified by both engines.
    NeedsRepair,
}

/// Why a completed search found no fix within its bound.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NoFix {
    /// The kind of reason.
    pub kind: NoFixKind,
    /// The reason in words (the `Why:` line of the text report).
    pub text: String,
    /// Changes that make the strongest program (one per site of the search).
    pub strongest_changes: usize,
    /// For `needs_more_changes`: the size of a fix found by dropping changes
    /// from the strongest program while the outcome stays forbidden, verified
    /// by both engines (`null` when that did not finish). It is minimal by
    /// inclusion, not necessarily the smallest fix.
    pub fix_changes: Option<usize>,
    /// The changes of that fix (each at its strongest), empty when there is none.
    pub fix: Vec<String>,
}

/// Why a search for a program that can hang or reach undefined behaviour
/// found nothing: no strongest program decides this (repairs are not
/// monotone), so the reason says what was tried.
pub fn no_repair(problem: Option<super::Problem>, bound: usize) -> NoFix {
    let what = match problem {
        Some(super::Problem::Undefined) => "reaches undefined behaviour",
        _ => "can hang",
    };
    NoFix {
        kind: NoFixKind::NoRepair,
        text: format!(
            "with at most {bound} change{} among fences, stronger annotations, inserted barriers (`bar.sync`, `bar.warp.sync`, `barrier.cluster`), `bar.arrive` → `bar.sync`, removed arrivals, smaller `wait_group` counts, inserted waits, flipped parities and matching `expect_tx` byte counts, the program still {what} or still allows the outcome: the fix is in its logic (who waits for whom), not in one of these changes",
            plural(bound)
        ),
        strongest_changes: 0,
        fix_changes: None,
        fix: Vec::new(),
    }
}

/// The outcome `outcome` comes from a hang (`hang`: `ptxmc run`'s sentence
/// for a stuck configuration that shows it): its fix is the hang's.
pub fn from_hang(outcome: &str, hang: &str) -> NoFix {
    NoFix {
        kind: NoFixKind::FromHang,
        text: format!(
            "the outcome comes from a hang: no execution that ends gives {outcome}; the program shows it only while stuck ({hang}), with the registers and memory as they were when everything stopped. No fence or stronger annotation can forbid it: the fix is whatever makes the program terminate"
        ),
        strongest_changes: 0,
        fix_changes: None,
        fix: Vec::new(),
    }
}

/// The reason of a `--no-repairs` search whose strongest program allows
/// the outcome while a barrier repair forbids it (`explain` then names the
/// barrier that does not order the pair): `fix` is the cheapest such fix,
/// its changes as the fix list words them.
pub fn needs_barrier(fix: &[String]) -> NoFix {
    NoFix {
        kind: NoFixKind::NeedsRepair,
        text: "no fence or annotation fixes it; a barrier does: run without --no-repairs".into(),
        strongest_changes: 0,
        fix_changes: Some(fix.len()),
        fix: fix.to_vec(),
    }
}

/// Whether a change (as the fix list words it) inserts or changes a barrier.
pub fn is_barrier_change(text: &str) -> bool {
    text.contains("`bar.") || text.contains("`barrier.")
}

/// What the strongest program is, in words.
const STRONGEST: &str = "every access at its strongest semantics and widest scope (loads acquire, stores release, RMWs acq_rel), every fence fence.sc and fence.sc between every two instructions";

/// [`STRONGEST`], with the tensor-core fences when the search has such
/// sites (`sites.rs`: they are part of the strongest program too).
fn strongest_words(sites: &[Site]) -> String {
    let tensor = sites.iter().any(|s| {
        s.variants.iter().any(|v| {
            matches!(
                &v.action,
                sites::Action::Insert {
                    instr: crate::ir::Instr::Tensor { .. },
                    ..
                }
            )
        })
    });
    if tensor {
        format!(
            "{STRONGEST}, and the tensor-core fences (tcgen05.fence::after_thread_sync, ::before_thread_sync, wgmma.fence) at every place they apply"
        )
    } else {
        STRONGEST.to_string()
    }
}

/// Why no fix of at most `bound` changes forbids `want` in `p`, given the
/// search's strengthening `sites`; the oracle runs share `budget`, the
/// engines' runs get the time left before `deadline`.
#[allow(clippy::too_many_arguments)]
pub fn why_no_fix(
    p: &Program,
    want: &Prop,
    sites: &[Site],
    bound: usize,
    loop_bound: u32,
    barriers: Reading,
    budget: &Budget,
    deadline: Option<Instant>,
) -> NoFix {
    let all: Vec<(usize, usize)> = sites
        .iter()
        .enumerate()
        .map(|(s, site)| (s, site.variants.len() - 1))
        .collect();
    let n = all.len();
    let changes = format!("{n} change{}", plural(n));
    let words = strongest_words(sites);
    let left = || deadline.map(|d| d.saturating_duration_since(Instant::now()));
    let strongest = sites::apply(p, sites, &all);
    let verdict = match both(&strongest, want, loop_bound, barriers, left()) {
        Err(why) => {
            return NoFix {
                kind: NoFixKind::Unknown,
                text: format!(
                    "unknown: the check on the strongest program — {words}: {changes} — {why}, so whether any fix exists is not known"
                ),
                strongest_changes: n,
                fix_changes: None,
                fix: Vec::new(),
            };
        }
        Ok(allowed) => allowed,
    };
    if verdict {
        return NoFix {
            kind: NoFixKind::NotMemoryOrdering,
            text: format!(
                "allowed under sequential consistency: not a memory-ordering bug — the outcome stays allowed even in the strongest program — {words}: {changes} (checked by both engines): the program's logic allows it"
            ),
            strongest_changes: n,
            fix_changes: None,
            fix: Vec::new(),
        };
    }
    // Drop changes one at a time while the outcome stays forbidden (the
    // oracle judges, as in the search); by monotonicity what is left is a
    // fix none of whose changes can go.
    let mut kept = all.clone();
    let mut finished = true;
    for c in all {
        let without: Vec<(usize, usize)> = kept.iter().copied().filter(|&x| x != c).collect();
        match super::allows_within(
            &sites::apply(p, sites, &without),
            want,
            loop_bound,
            barriers,
            budget,
        ) {
            Ok(Some(false)) => kept = without,
            Ok(_) => {}
            Err(_) => {
                finished = false;
                break;
            }
        }
    }
    let verified = finished
        && both(
            &sites::apply(p, sites, &kept),
            want,
            loop_bound,
            barriers,
            left(),
        ) == Ok(false);
    let more = bound + 1;
    if verified && kept.len() <= bound {
        // The search met this set (or a weaker one) and rejected each fix
        // of at most `bound` changes it found: with it both engines agree
        // the program can hang, or a wait that succeeds as written never
        // does (`starve.rs`). The reason says so; it does not call the
        // set a fix, nor claim a count the bound already covers.
        let k = kept.len();
        return NoFix {
            kind: NoFixKind::FixesRejected,
            text: format!(
                "the strongest program — {words}: {changes} — forbids it (checked by both engines), and so {} {k} of its changes (verified by both engines); but the search rejected every fix of at most {bound} change{} it found: with each, the program can hang (both engines agree) or a wait that succeeds as written never succeeds, so none is listed",
                if k == 1 { "does" } else { "do" },
                plural(bound)
            ),
            strongest_changes: n,
            fix_changes: None,
            fix: Vec::new(),
        };
    }
    let (fix_changes, fix, suffice) = if verified {
        let k = kept.len();
        let texts = kept
            .iter()
            .map(|&(s, v)| sites[s].variants[v].text.clone())
            .collect();
        // No fix within the bound, so one of `bound + 1` changes is a smallest one.
        let smaller = if k > more {
            "; a smaller fix may exist"
        } else {
            ""
        };
        // `k` exceeds the bound here (a set within it is `FixesRejected`
        // above): "more than N; k suffice" never contradicts itself.
        debug_assert!(k > bound, "{k} changes within the bound {bound}");
        (
            Some(k),
            texts,
            format!(
                "; {k} of them {} (verified by both engines{smaller})",
                if k == 1 { "suffices" } else { "suffice" }
            ),
        )
    } else {
        (None, Vec::new(), String::new())
    };
    NoFix {
        kind: NoFixKind::NeedsMoreChanges,
        text: format!(
            "the strongest program — {words}: {changes} — forbids it (checked by both engines): a fix needs more than {bound} change{}{suffice}; try --bound {more}",
            plural(bound)
        ),
        strongest_changes: n,
        fix_changes,
        fix,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Both engines on `p`: whether they agree that `want` is allowed; `Err`
/// says why there is no verdict.
fn both(
    p: &Program,
    want: &Prop,
    loop_bound: u32,
    barriers: Reading,
    timeout: Option<Duration>,
) -> Result<bool, String> {
    // The search spent the whole time limit: no run, and no guess.
    if timeout == Some(Duration::ZERO) {
        return Err("was not run: the search spent the time limit (--timeout)".to_string());
    }
    let r = engine::run(
        p,
        &RunOptions {
            engine: EngineChoice::Both,
            loop_bound,
            barriers,
            limits: Limits {
                timeout,
                ..Limits::default()
            },
            ..RunOptions::default()
        },
    );
    if let Some(why) = &r.incomplete {
        return Err(format!("did not finish ({why})"));
    }
    if r.disagreement.is_some() {
        return Err("ended with the engines disagreeing".to_string());
    }
    let cols = Columns::of(p);
    let found = r
        .outcomes
        .iter()
        .any(|s| want.eval(&|t: &Term| cols.term(s, t)));
    if !found && r.bound_hit {
        return Err(format!(
            "is inconclusive: an execution reached the loop bound ({loop_bound}), and longer ones might reach the outcome (--loop-bound)"
        ));
    }
    Ok(found)
}
