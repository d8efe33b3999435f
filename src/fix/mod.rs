//! The cheapest changes that make an allowed outcome forbidden (`ptxmc fix`),
//! and the opposite question, over-synchronisation (`ptxmc fix --weaken`):
//! which fences can go and which annotations can be weakened or narrowed
//! while a forbidden outcome stays forbidden.
//!
//! A *site* is a place a change can be made: a position between two
//! instructions of a thread (a memory fence, or a proxy fence), or an
//! existing access, fence or mbarrier operation. Each site has *variants*
//! (the changes possible there), partially ordered by strength; a *fix* is
//! one variant at each of a set of sites. The model is monotone in strength
//! (a stronger program allows no more outcomes: every relation the axioms
//! build only grows), which the search uses twice: a set of sites whose
//! strongest variants do not forbid the outcome has no fix, and a fix that
//! is at least as strong as another at every site of the other is not
//! minimal. `docs/fix.md` has the cost model and the reasons behind it.

pub mod repairs;
pub mod sites;
pub mod starve;
pub mod stuck;
pub mod weaken;
pub mod why;

use serde::Serialize;
use std::time::{Duration, Instant};

use crate::ax::{self, AxLimit, AxOptions};
use crate::engine::{self, EngineChoice, RunOptions};
use crate::ir::{Program, Prop, Term};
use crate::limits::{Budget, Exceeded, Limits};
use crate::model::barrier::Reading;
use crate::outcome::{Columns, Outcomes};

pub use sites::{Site, Variant};
pub use why::{NoFix, NoFixKind};

/// Options of a search.
#[derive(Clone, Copy, Debug)]
pub struct FixOptions {
    /// The most changes in one fix.
    pub bound: usize,
    /// Loop bound of the engines.
    pub loop_bound: u32,
    /// Give up after this long (the fixes found so far are reported).
    pub timeout: Option<Duration>,
    /// How CTA barriers are read.
    pub barriers: crate::model::barrier::Reading,
    /// Also search repairs (`repairs.rs`: barriers, waits, parities, byte
    /// counts), not only fences and stronger annotations.
    pub repairs: bool,
    /// What is wrong with the program beyond the outcome, if anything: a
    /// fix must then also make every execution terminate and be defined.
    pub problem: Option<Problem>,
}

/// What a fix must remove besides the outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    /// The program can hang.
    Hang,
    /// The program can reach undefined behaviour.
    Undefined,
}

impl Default for FixOptions {
    fn default() -> Self {
        FixOptions {
            bound: 3,
            loop_bound: 2,
            timeout: None,
            barriers: Default::default(),
            repairs: true,
            problem: None,
        }
    }
}

/// One change of a fix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The thread (`P0`).
    pub thread: String,
    /// What it does, in PTX terms.
    pub text: String,
    /// Its cost (`docs/fix.md`).
    pub cost: u32,
}

/// A set of changes with its verdicts.
#[derive(Clone, Debug, Serialize)]
pub struct Fix {
    /// The changes.
    pub changes: Vec<Change>,
    /// Total cost.
    pub cost: u32,
    /// Both engines agree on the verdict the search wanted.
    pub verified: bool,
    /// The changed program can reach undefined behaviour (what the
    /// verification run found; `null` when it cannot): a weakening can make
    /// a defined program undefined, and such a proposal says so.
    pub undefined: Option<crate::model::ub::Undefined>,
    /// The changed test.
    #[serde(skip)]
    pub program: Program,
}

/// What a search found.
#[derive(Clone, Debug, Serialize)]
pub struct FixReport {
    /// The outcome, as printed.
    pub outcome: String,
    /// Whether the test as written allows it.
    pub allowed: bool,
    /// The fixes (or weakenings), cheapest first (weakenings: greatest saving first).
    pub fixes: Vec<Fix>,
    /// Sites considered.
    pub sites: usize,
    /// Programs the oracle judged.
    pub checked: u64,
    /// The search stopped at its time limit: the list may miss some.
    pub incomplete: bool,
    /// Seconds.
    pub seconds: f64,
    /// Why a fix search that finished found no fix within its bound (the
    /// strongest program's verdict, [`why::why_no_fix`]); `null` otherwise
    /// and for weakenings.
    pub why: Option<NoFix>,
    /// What the program as written does besides the outcome (a hang, an
    /// undefined step): every fix listed removes it too. `null`: nothing.
    pub problem: Option<Problem>,
    /// No change within the bound removes the problem and forbids the
    /// outcome: the fixes listed remove the problem and the outcome stays
    /// allowed.
    pub outcome_kept: bool,
    /// Weakenings: single-site weakenings that keep the outcome
    /// forbidden but change something the condition does not observe (a
    /// final value, a race, termination, definedness), with what; never
    /// offered as weakenings. Fixes: the minimal changes that forbid the
    /// outcome only by making a wait that succeeds as written fail in every
    /// execution ([`starve`]), with the waits; never offered as fixes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flagged: Vec<weaken::Flagged>,
    /// Weakenings only: the search's counters and why it stopped early.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weaken: Option<weaken::WeakenReport>,
}

/// Whether some final state of `p` in `outcomes` satisfies `want`: the one
/// place every search asks it.
pub(crate) fn satisfied(p: &Program, outcomes: &Outcomes, want: &Prop) -> bool {
    let cols = Columns::of(p);
    outcomes
        .iter()
        .any(|s| want.eval(&|t: &Term| cols.term(s, t)))
}

/// Whether some final state the oracle allows for `p` satisfies `want`;
/// `None` if the oracle could not finish, or if no state satisfies it but a loop
/// bound cut some execution short (longer executions might).
pub fn allows(p: &Program, want: &Prop, loop_bound: u32, barriers: Reading) -> Option<bool> {
    let r = ax::run(
        p,
        &AxOptions {
            loop_bound,
            barriers,
            ..AxOptions::default()
        },
    )
    .ok()?;
    let found = satisfied(p, &r.outcomes, want);
    // Not found within a loop bound that cut some execution short: the
    // longer executions might reach it, so nothing is known.
    (found || !r.bound_hit).then_some(found)
}

/// [`allows`] within `budget` (the search's deadline); `Err` if the budget
/// stopped the oracle.
fn allows_within(
    p: &Program,
    want: &Prop,
    loop_bound: u32,
    barriers: Reading,
    budget: &Budget,
) -> Result<Option<bool>, Exceeded> {
    // `elect.sync`: the outcomes are those of every choice of leader,
    // which `engine::run` enumerates (`ir::elect`).
    // Likewise the granularities of copy completion (`ir::copies`).
    if crate::ir::elect::count(&crate::ir::elect::groups(p)) > 1
        || crate::ir::copies::choices(p).len() > 1
    {
        return Ok(elect_allows(p, want, loop_bound, barriers, budget));
    }
    let r = ax::run_within(
        p,
        &AxOptions {
            loop_bound,
            barriers,
            ..AxOptions::default()
        },
        budget,
    );
    match r.incomplete {
        Some(AxLimit::Budget(e)) => return Err(e),
        Some(_) => return Ok(None),
        None => {}
    }
    let found = satisfied(p, &r.outcomes, want);
    // As in [`allows`]: a loop bound that cut executions short leaves a
    // missing outcome unknown, never forbidden.
    Ok((found || !r.bound_hit).then_some(found))
}

/// The oracle alone, outcomes only, in the time `budget` leaves: how `fix`
/// asks a question of a changed program (elect leaders, starved waits).
fn oracle_in_time_left(loop_bound: u32, barriers: Reading, budget: &Budget) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Ax,
        loop_bound,
        barriers,
        termination: false,
        limits: Limits {
            timeout: budget
                .limits()
                .timeout
                .map(|t| t.saturating_sub(budget.start().elapsed())),
            ..Limits::default()
        },
        ..RunOptions::default()
    }
}

/// [`allows_within`] for a program with several choices of `elect.sync`
/// leader: the oracle over each, through `engine::run`, in the time left.
fn elect_allows(
    p: &Program,
    want: &Prop,
    loop_bound: u32,
    barriers: Reading,
    budget: &Budget,
) -> Option<bool> {
    let r = engine::run(p, &oracle_in_time_left(loop_bound, barriers, budget));
    if r.incomplete.is_some() {
        return None;
    }
    let found = satisfied(p, &r.outcomes, want);
    (found || !r.bound_hit).then_some(found)
}

/// Both engines on `p`: whether they agree that `want` is allowed (`Some(v)`);
/// `Err` if the time left (`timeout`) stopped them.
fn verified(
    p: &Program,
    want: &Prop,
    loop_bound: u32,
    barriers: Reading,
    timeout: Option<Duration>,
) -> Result<Option<bool>, ()> {
    verified_and_undefined(p, want, loop_bound, barriers, timeout)
        .map(|(v, _)| v.allowed.filter(|_| !v.hangs).or(v.hangs.then_some(true)))
}

/// What both engines found about a changed program.
#[derive(Clone, Copy, Debug)]
struct Verdicts {
    /// Whether the outcome is allowed.
    allowed: Option<bool>,
    /// Whether the program can hang.
    hangs: bool,
}

impl Verdicts {
    /// Whether the engines finished and agreed.
    fn is_some(&self) -> bool {
        self.allowed.is_some()
    }
}

/// [`verified`], with the undefined step the same run finds in `p`.
#[allow(clippy::type_complexity)]
fn verified_and_undefined(
    p: &Program,
    want: &Prop,
    loop_bound: u32,
    barriers: Reading,
    timeout: Option<Duration>,
) -> Result<(Verdicts, Option<crate::model::ub::Undefined>), ()> {
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
    if r.incomplete.is_some() && timeout.is_some() {
        return Err(());
    }
    let hangs = r.termination.hangs();
    if r.disagreement.is_some() || r.incomplete.is_some() || !r.termination.checked() {
        return Ok((
            Verdicts {
                allowed: None,
                hangs,
            },
            r.undefined,
        ));
    }
    let allowed = satisfied(p, &r.outcomes, want);
    Ok((
        Verdicts {
            allowed: Some(allowed),
            hangs,
        },
        r.undefined,
    ))
}

/// The cheapest minimal sets of changes (at most `opts.bound`) after which
/// the model forbids `want` in `p`.
pub fn fix(p: &Program, want: &Prop, opts: &FixOptions) -> FixReport {
    search(p, want, opts)
}

/// The maximal safe weakenings of `p`: the model still forbids `want`, and
/// every other property of the program as written is kept ([`weaken`]
/// module; `opts.bound` does not apply: a maximal weakening changes as many
/// sites as it can).
pub fn weaken(p: &Program, want: &Prop, opts: &FixOptions) -> FixReport {
    weaken::weaken(p, want, opts, &sites::Positions::new(), &mut |_| {})
}

fn search(p: &Program, want: &Prop, opts: &FixOptions) -> FixReport {
    // The oracle polls its budget every 128 search nodes, and a node of a
    // program of many threads can take tens of milliseconds: a watchdog
    // latches the deadline as soon as it passes, which every node sees.
    let budget = Budget::new(Limits {
        timeout: opts.timeout,
        ..Limits::default()
    });
    crate::limits::watched(
        &budget,
        |_| {},
        || {
            // Inserted group barriers have many placements: with no hang or
            // undefined step to remove, they are tried only when nothing
            // else fixes the outcome.
            let groups = opts.problem.is_some();
            let mut r = search_within(p, want, opts, &budget, groups);
            if !opts.repairs {
                repairs_instead(p, want, opts, &budget, &mut r);
                return r;
            }
            let retry = !groups && opts.repairs && r.fixes.is_empty() && r.allowed && !r.incomplete;
            if retry && repairs::group_barrier_sites(p) > 0 {
                let mut again = search_within(p, want, opts, &budget, true);
                again.checked += r.checked;
                if again.fixes.is_empty() {
                    // The reason is the one of fences and annotations.
                    again.why = r.why;
                }
                return again;
            }
            r
        },
    )
}

/// A search without repairs (`--no-repairs`) that says "not a
/// memory-ordering bug" would contradict `explain` where a barrier forbids
/// the outcome (a barrier the threads do not share, `MP+bar`): the repairs
/// are searched too (same bound, the time left), and when a barrier fix is
/// found and verified the reason says so instead ([`why::needs_barrier`]).
/// The fixes listed stay fences and annotations only.
fn repairs_instead(
    p: &Program,
    want: &Prop,
    opts: &FixOptions,
    budget: &Budget,
    r: &mut FixReport,
) {
    if r.why.as_ref().map(|w| w.kind) != Some(NoFixKind::NotMemoryOrdering) {
        return;
    }
    let with = FixOptions {
        repairs: true,
        timeout: opts
            .timeout
            .map(|t| t.saturating_sub(budget.start().elapsed())),
        ..*opts
    };
    let found = search_within(p, want, &with, budget, true);
    r.checked += found.checked;
    if found.incomplete {
        // Not known whether a repair forbids it: the reason cannot claim
        // that nothing does.
        r.incomplete = true;
        r.why = None;
        return;
    }
    // A barrier is what `explain` names (a barrier as written that does
    // not order the pair); a missing wait stays the program's logic.
    let barrier = found
        .fixes
        .iter()
        .find(|f| f.verified && f.changes.iter().any(|c| why::is_barrier_change(&c.text)));
    if let Some(f) = barrier {
        let changes: Vec<String> = f.changes.iter().map(|c| c.text.clone()).collect();
        r.why = Some(why::needs_barrier(&changes));
    }
}

fn search_within(
    p: &Program,
    want: &Prop,
    opts: &FixOptions,
    budget: &Budget,
    groups: bool,
) -> FixReport {
    let start = Instant::now();
    // The search stops at four fifths of the time limit, so that the fixes
    // it found can still be verified by both engines in the rest.
    let deadline = opts.timeout.map(|t| start + t.mul_f64(0.8));
    let end = opts.timeout.map(|t| start + t);
    // Every oracle run of the search shares the deadline (one run may take
    // long on its own: a program of many threads).
    let mut stopped = false;
    let outcome = crate::litmus::print::prop(p, want);
    let allowed = match allows_within(p, want, opts.loop_bound, opts.barriers, budget) {
        Ok(a) => a.unwrap_or(true),
        Err(_) => {
            stopped = true;
            true
        }
    };
    let sites = {
        let mut s = sites::strengthening_sites(p);
        if opts.repairs {
            let r = repairs::repair_sites(p, groups);
            // A hang or an undefined step is most often removed by a
            // repair: those subsets come first (subsets are enumerated in
            // lexicographic order of site indices).
            if opts.problem.is_some() {
                s = r.into_iter().chain(s).collect();
            } else {
                s.extend(r);
            }
        }
        s
    };
    let mut report = FixReport {
        outcome,
        allowed,
        fixes: Vec::new(),
        sites: sites.len(),
        checked: 0,
        incomplete: false,
        seconds: 0.0,
        why: None,
        problem: opts.problem,
        outcome_kept: false,
        flagged: Vec::new(),
        weaken: None,
    };
    // Fixing needs an allowed outcome (or a hang or undefined step to
    // remove).
    if (!allowed && report.problem.is_none()) || stopped {
        report.incomplete = stopped;
        report.seconds = start.elapsed().as_secs_f64();
        return report;
    }
    // "Good": the changed program forbids the outcome.
    let mut checked = 0u64;
    let problem = report.problem;
    // First pass: the outcome forbidden too. A second pass, for a program
    // with a problem when the first found nothing, removes the problem
    // alone (the test's condition may describe what it computes when it
    // terminates rather than a bug).
    let require_forbidden = std::cell::Cell::new(true);
    let mut good = |q: &Program, subset: &[usize]| {
        // A repair can make a program the model does not admit (a cluster
        // barrier inside a spin loop): such a program is no fix. Fences
        // and annotations never change admissibility, so every variant of
        // a subset is admitted or none is, and the pruning stays sound.
        if subset.iter().any(|&s| sites[s].repair) && !admitted(q) {
            return false;
        }
        checked += 1;
        let forbidden = !require_forbidden.get()
            || match allows_within(q, want, opts.loop_bound, opts.barriers, budget) {
                Ok(a) => a == Some(false),
                Err(_) => {
                    stopped = true;
                    false
                }
            };
        // A repair can make a program hang or reach undefined behaviour,
        // and a program that does either is not fixed by any outcome: the
        // machine checks both (fences and annotations only remove
        // executions, so without a repair and without a problem to remove
        // the outcome decides).
        let repaired = subset.iter().any(|&s| sites[s].repair);
        if forbidden && (repaired || problem.is_some()) {
            return runs_clean(q, opts.loop_bound, opts.barriers, deadline);
        }
        forbidden
    };
    let mut found: Vec<Vec<(usize, usize)>> = Vec::new();
    // Candidates that forbid the outcome only by starving a wait, with the
    // waits they starve (`starve.rs`); the success of each wait of `p` as
    // written, computed at the first candidate that needs it.
    let mut starves: Vec<Starving> = Vec::new();
    let mut before: Option<Option<Vec<bool>>> = None;
    let mut checked_waits = 0u64;
    let has_waits = !starve::waits(p).is_empty();
    let starving = |q: &Program,
                    before: &mut Option<Option<Vec<bool>>>,
                    runs: &mut u64|
     -> Option<Vec<String>> {
        if !has_waits {
            return None;
        }
        let was = before
            .get_or_insert_with(|| {
                *runs += 1;
                starve::succeeding(p, opts.loop_bound, opts.barriers, budget)
            })
            .as_ref()?;
        if !was.iter().any(|&b| b) {
            return None;
        }
        *runs += 1;
        // Not known (the time left stopped the oracle): not claimed.
        let now = starve::succeeding(q, opts.loop_bound, opts.barriers, budget)?;
        let what = starve::starved(p, was, &now);
        (!what.is_empty()).then_some(what)
    };
    // A program checked for its hang or undefined step alone (no
    // condition: `want` is `true`, as for a kernel launched without
    // `--forall` / `--not-exists`) has no outcome to forbid: every
    // terminating execution satisfies `true`, so the first pass could only
    // spend the time limit (issue 28: `kernels/tma_expect_tx_short` used
    // all of `--timeout 120` there and never reached the second).
    let first = usize::from(matches!(want, Prop::True) && problem.is_some());
    for pass in first..2 {
        if pass == 1 {
            // (Without a condition there was no first pass: and a program
            // that always hangs has no final state, so `allowed` is false.)
            if first == 0
                && (!found.is_empty() || problem.is_none() || !allowed || report.incomplete)
            {
                break;
            }
            require_forbidden.set(false);
            report.outcome_kept = true;
        }
        'sizes: for size in 1..=opts.bound.min(sites.len()) {
            for subset in combinations(sites.len(), size) {
                if budget.exceeded().is_some() || deadline.is_some_and(|d| Instant::now() > d) {
                    report.incomplete = true;
                    break 'sizes;
                }
                if subset.iter().filter(|&&s| sites[s].group_barrier).count() > 1 {
                    continue;
                }
                // Monotonicity: if the strongest variants do not forbid it, nothing on this set does.
                let strongest: Vec<(usize, usize)> = subset
                    .iter()
                    .map(|&s| (s, sites[s].variants.len() - 1))
                    .collect();
                if !good(&sites::apply(p, &sites, &strongest), &subset) {
                    continue;
                }
                let mut vs = vectors(&sites, &subset);
                vs.sort_by_key(|v| cost(&sites, v));
                let mut bad: Vec<Vec<(usize, usize)>> = Vec::new();
                for v in vs {
                    if found.iter().any(|f| dominates(&sites, &v, f)) {
                        continue;
                    }
                    if bad.iter().any(|b| dominates(&sites, b, &v)) {
                        continue;
                    }
                    let q = sites::apply(p, &sites, &v);
                    if good(&q, &subset) {
                        // A fix must keep every wait's success path
                        // (`starve.rs`). Not a monotone property, so a
                        // starving vector prunes nothing: vectors weaker
                        // than it may be fixes that keep it.
                        match starving(&q, &mut before, &mut checked_waits) {
                            None => found.push(v),
                            Some(what) => {
                                if !starves.iter().any(|(s, _)| dominates(&sites, &v, s)) {
                                    starves.push((v, what));
                                }
                            }
                        }
                    } else {
                        bad.push(v);
                    }
                }
            }
        }
    }
    report.checked = checked + checked_waits;
    // Shown is what explains a missing cheap fix: the starving candidates
    // cheaper than every fix offered (a barrier placed so that a wait
    // always runs before its arrival is one of many, and no news).
    let cheapest = found.iter().map(|v| cost(&sites, v)).min();
    starves.retain(|(v, _)| {
        !found.iter().any(|f| dominates(&sites, v, f))
            && cheapest.is_none_or(|c| cost(&sites, v) < c)
    });
    starves.sort_by_key(|(v, _)| (cost(&sites, v), v.len()));
    report.flagged = starves
        .iter()
        .map(|(v, what)| weaken::Flagged {
            change: Change {
                thread: sites[v[0].0].thread_name.clone(),
                text: v
                    .iter()
                    .map(|&(s, k)| sites[s].variants[k].text.clone())
                    .collect::<Vec<_>>()
                    .join(" and "),
                cost: cost(&sites, v),
            },
            changes_what: what
                .iter()
                .map(|w| format!("{w} never succeeds (it does as written)"))
                .collect(),
        })
        .collect();
    // A search stopped inside an oracle run did not finish either.
    report.incomplete |= budget.exceeded().is_some();
    let mut fixes: Vec<Fix> = found
        .into_iter()
        .filter_map(|v| {
            let q = sites::apply(p, &sites, &v);
            let left = end.map(|d| d.saturating_duration_since(Instant::now()));
            let (ok, undefined) =
                match verified_and_undefined(&q, want, opts.loop_bound, opts.barriers, left) {
                    // Both engines agree, completely, that the changed
                    // program can hang: the change is no fix (the outcome
                    // search judged final states only), not a proposal the
                    // engines failed to verify.
                    Ok((v, _)) if v.allowed.is_some() && v.hangs => return None,
                    Ok((v, u)) if report.outcome_kept => (v.is_some() && !v.hangs, u),
                    Ok((v, u)) => (v.allowed == Some(false) && !v.hangs, u),
                    Err(()) => {
                        report.incomplete = true;
                        (false, None)
                    }
                };
            let changes: Vec<Change> = v
                .iter()
                .map(|&(s, k)| Change {
                    thread: sites[s].thread_name.clone(),
                    text: sites[s].variants[k].text.clone(),
                    cost: sites[s].variants[k].cost,
                })
                .collect();
            let total = changes.iter().map(|c| c.cost).sum();
            Some(Fix {
                changes,
                cost: total,
                verified: ok,
                undefined,
                program: q,
            })
        })
        .collect();
    fixes.sort_by(|a, b| {
        a.cost
            .cmp(&b.cost)
            .then(a.changes.len().cmp(&b.changes.len()))
    });
    report.fixes = fixes;
    if report.fixes.is_empty() && !report.incomplete && report.problem.is_some() {
        // An outcome that only a stuck program shows has no fix but the hang's.
        let stuck = (report.problem == Some(Problem::Hang))
            .then(|| stuck::source(p, want, opts.loop_bound, opts.barriers, budget))
            .flatten();
        report.why = Some(match stuck {
            Some(stuck::Source::Hang(h)) => why::from_hang(&report.outcome, &h),
            _ => why::no_repair(report.problem, opts.bound),
        });
    } else if report.fixes.is_empty() && !report.incomplete {
        // The strongest program is made of fences and annotations only
        // (repairs are not monotone: `repairs.rs`).
        let memory: Vec<Site> = sites.iter().filter(|s| !s.repair).cloned().collect();
        report.why = Some(why::why_no_fix(
            p,
            want,
            &memory,
            opts.bound,
            opts.loop_bound,
            opts.barriers,
            budget,
            deadline,
        ));
    }
    report.seconds = start.elapsed().as_secs_f64();
    report
}

/// Whether the machine finds that every execution of `q` terminates and
/// none reaches undefined behaviour, within the time left before `deadline`.
fn runs_clean(q: &Program, loop_bound: u32, barriers: Reading, deadline: Option<Instant>) -> bool {
    let r = engine::run(
        q,
        &RunOptions {
            engine: EngineChoice::Op,
            loop_bound,
            barriers,
            limits: Limits {
                timeout: deadline.map(|d| d.saturating_duration_since(Instant::now())),
                max_states: Some(CLEAN_RUN_STATES),
                ..Limits::default()
            },
            ..RunOptions::default()
        },
    );
    r.incomplete.is_none()
        && r.undefined.is_none()
        && matches!(r.termination, engine::Termination::Terminates { .. })
}

/// Whether the model admits `q` (a changed program skipped the front end's
/// check, which the engines rely on).
fn admitted(q: &Program) -> bool {
    q.validate().is_ok()
        && crate::model::Model::Ptx75
            .admit(q, &crate::litmus::SourceMap::default())
            .is_ok()
}

/// The states one termination check of a repaired program may visit.
const CLEAN_RUN_STATES: u64 = 2_000_000;

/// A candidate that forbids the outcome only by starving a wait (its
/// variant vector), with the waits it starves, quoted.
type Starving = (Vec<(usize, usize)>, Vec<String>);

/// Total cost of a vector.
fn cost(sites: &[Site], v: &[(usize, usize)]) -> u32 {
    v.iter().map(|&(s, k)| sites[s].variants[k].cost).sum()
}

/// Whether `big` makes at least the changes of `small`, each at least as
/// strongly (then `big` is not a minimal fix when `small` is a fix).
fn dominates(sites: &[Site], big: &[(usize, usize)], small: &[(usize, usize)]) -> bool {
    small
        .iter()
        .all(|&(s, k)| big.iter().any(|&(s2, k2)| s2 == s && sites[s].leq(k, k2)))
}

/// Every choice of one variant per site of `subset`.
fn vectors(sites: &[Site], subset: &[usize]) -> Vec<Vec<(usize, usize)>> {
    let mut out = vec![Vec::new()];
    for &s in subset {
        let mut next = Vec::new();
        for v in &out {
            for k in 0..sites[s].variants.len() {
                let mut w = v.clone();
                w.push((s, k));
                next.push(w);
            }
        }
        out = next;
    }
    out
}

/// Subsets of `0..n` of size `k`, in lexicographic order.
fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    fn rec(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            cur.push(i);
            rec(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    rec(0, n, k, &mut cur, &mut out);
    out
}

/// The verdict word for a report line.
pub fn verdict_word(f: &Fix) -> String {
    let word = if f.verified {
        "verified by both engines"
    } else {
        "NOT verified: the engines disagree or did not finish"
    };
    match &f.undefined {
        Some(u) => format!(
            "{word}; but the changed program can reach undefined behaviour: {}",
            u.kind.what()
        ),
        None => word.to_string(),
    }
}

/// For tests: a program's outcome is forbidden by both engines.
pub fn forbidden_by_both(p: &Program, want: &Prop, loop_bound: u32) -> bool {
    verified(p, want, loop_bound, Reading::default(), None) == Ok(Some(false))
}
