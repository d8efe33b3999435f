//! Running the engines on one test: the results layer between the engines
//! and the reports. It owns the choice of engine, the options shared by
//! every engine, and the comparison of their outcome sets.

use clap::ValueEnum;
use serde::Serialize;

use crate::ax::{self, AxOptions, AxStats};
use crate::explore::{self, ExploreOptions, ExploreStats};
use crate::ir::Program;
use crate::limits::{Budget, Limits, OutputCost};
use crate::model::Model;
use crate::model::hang::Hang;
use crate::op::{Coherence, Machine, TooManySlots};
use crate::outcome::{Columns, Outcomes, Verdict};
use crate::rel::Bits;

/// Which engine(s) to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum EngineChoice {
    /// The operational machine.
    Op,
    /// The axiomatic oracle.
    Ax,
    /// Both, comparing their outcome sets.
    #[default]
    Both,
}

impl EngineChoice {
    /// Label used in reports.
    pub fn label(self) -> &'static str {
        match self {
            EngineChoice::Op => "op",
            EngineChoice::Ax => "ax",
            EngineChoice::Both => "both",
        }
    }
}

/// Which columns final states are listed over (`--project`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Projection {
    /// Every register of every thread and every location: herd's final
    /// states.
    #[default]
    All,
    /// Only what the test asks about: the condition's registers and
    /// locations, the filter's, and herd's `locations [...]`
    /// ([`crate::outcome::observed`]). The oracle then lets additions whose
    /// result nobody asks about commute (`docs/exploration.md`,
    /// "Projection"; `docs/oracle.md`, "Projection").
    Condition,
    /// What `Condition` keeps, and every location's final value (a
    /// kernel's buffers): registers outside the condition are dropped.
    Memory,
}

impl Projection {
    /// Whether some columns are left out.
    pub fn projects(self) -> bool {
        self != Projection::All
    }
}

/// Options shared by every engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// The memory model.
    pub model: Model,
    /// Which engine.
    pub engine: EngineChoice,
    /// How many times a (non-spin) loop may jump back.
    pub loop_bound: u32,
    /// Limits of the run: one deadline and one memory ceiling for the whole
    /// test (both engines together); the state limit applies to each engine
    /// on its own measure (machine states, oracle search nodes).
    pub limits: Limits,
    /// Partial-order reduction in the operational machine.
    pub por: bool,
    /// Lazy coherence in the operational machine (with `por`; off only to
    /// check it: `docs/exploration.md`, "Lazy coherence").
    pub lazy_coherence: bool,
    /// P2, persistent thread choices in the operational machine (with `por`;
    /// off only to check it: `docs/exploration.md`, "P2").
    pub persistent: bool,
    /// P3, P2 extended to a thread at a spin loop's load that no hang
    /// witness can leave spinning (with `persistent`; off only to check it:
    /// `docs/exploration.md`, "P3").
    pub spin_persistent: bool,
    /// Symmetry reduction over interchangeable threads in the operational
    /// machine (off only to check it: `docs/exploration.md`, "Symmetry").
    pub symmetry: bool,
    /// With `symmetry`, the machine offers symmetric choices once (off only
    /// to check it: `docs/exploration.md`, "Symmetric choices").
    pub symmetric_choices: bool,
    /// The machine checks coherence, obligations, atomicity and SC per
    /// location only through what a step adds (off only to check it:
    /// `docs/exploration.md`, "Incremental SC per location").
    pub incremental_sc: bool,
    /// The machine remembers states up to the order of a commuting
    /// counter's additions (off only to check it: `docs/exploration.md`,
    /// "Commuting additions in the machine").
    pub commute_additions: bool,
    /// With `commute_additions`, the machine lets one addition go alone
    /// where every other thread stands at an addition or spins on the
    /// counter (off only to check it: `docs/exploration.md`, "One addition
    /// at a time").
    pub commute_alone: bool,
    /// The machine drops states whose speculation is doomed (off only to
    /// check it: `docs/exploration.md`, "Doomed speculation").
    pub prune_doomed: bool,
    /// The oracle's forced coherence edges and total locations (off only to
    /// check them: `docs/oracle.md`, "Forced coherence").
    pub forced_coherence: bool,
    /// The oracle's static barrier planning (off only to check it:
    /// `docs/oracle.md`, "Barrier phases before reads-from").
    pub static_barriers: bool,
    /// The oracle's counters read off the paths in the termination search
    /// (off only to check it: `docs/oracle.md`, "Spinning on a counter").
    pub static_counters: bool,
    /// The oracle's mbarrier chains read off the paths in the termination
    /// search (off only to check it: `docs/oracle.md`, "Mbarrier chains").
    pub mbar_chains: bool,
    /// The oracle's one order per class of commuting additions to a counter
    /// (off only to check it: `docs/oracle.md`, "Commuting additions").
    pub commute_counters: bool,
    /// The oracle's least unplaced twin per chain position among
    /// interchangeable adders (off only to check it: `docs/oracle.md`,
    /// "Interchangeable adders").
    pub twin_adders: bool,
    /// The oracle's reads-from binds forced reads first (off only to check
    /// it: `docs/oracle.md`, "Forced reads first").
    pub forced_reads: bool,
    /// With `forced_reads`, the oracle keeps each read's candidates from
    /// node to node and binds the read with the fewest first (off only to
    /// check it: `docs/oracle.md`, "Fewest candidates first").
    pub fewest_first: bool,
    /// With `fewest_first`, the oracle re-checks the reads with the fewest
    /// kept candidates first (off only to check it: `docs/oracle.md`,
    /// "Fewest kept candidates scanned first").
    pub fewest_scan: bool,
    /// Which columns the final states are listed over (`Projection::All`:
    /// herd's full states).
    pub project: Projection,
    /// Stop both engines at the first final state that settles the
    /// condition (`docs/exploration.md`, "Verdict-only runs"): the run is
    /// then reported incomplete ([`crate::limits::Exceeded::Settled`]), with
    /// a definitive verdict.
    pub verdict_only: bool,
    /// What printing a value of an outcome will cost, so that the limits
    /// keep time and memory for the report (`limits::OutputCost`).
    pub output_cost: OutputCost,
    /// Worker threads for the operational exploration.
    pub jobs: usize,
    /// Remember full states instead of fingerprints.
    pub exact: bool,
    /// Show a progress line on stderr for long explorations.
    pub progress: bool,
    /// Check termination (deadlocks and fair non-termination) when the
    /// program has a loop, a barrier or a wait.
    pub termination: bool,
    /// Recognise retry loops (`false` bounds them like other loops; only to
    /// check the reduction).
    pub retry_loops: bool,
    /// How CTA barriers are read (`model::barrier`).
    pub barriers: crate::model::barrier::Reading,
    /// Which writes spinning reads must eventually see (`model::hang::Fairness`).
    pub fairness: crate::model::hang::Fairness,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            model: Model::Ptx75,
            engine: EngineChoice::Both,
            loop_bound: AxOptions::default().loop_bound,
            limits: Limits::default(),
            por: true,
            lazy_coherence: true,
            persistent: true,
            spin_persistent: true,
            symmetry: true,
            symmetric_choices: true,
            incremental_sc: true,
            commute_additions: true,
            commute_alone: true,
            prune_doomed: true,
            forced_coherence: true,
            static_barriers: true,
            static_counters: true,
            mbar_chains: true,
            commute_counters: true,
            twin_adders: true,
            forced_reads: true,
            fewest_first: true,
            fewest_scan: true,
            project: Projection::All,
            verdict_only: false,
            output_cost: OutputCost::default(),
            jobs: 1,
            exact: false,
            progress: false,
            termination: true,
            retry_loops: true,
            barriers: Default::default(),
            fairness: Default::default(),
        }
    }
}

/// Engine-specific counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct EngineStats {
    /// The oracle's counters, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ax: Option<AxStats>,
    /// The explorer's counters, when the machine ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<ExploreStats>,
    /// The oracle's counters for its termination search, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ax_termination: Option<AxStats>,
}

/// Where the engines differ.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disagreement {
    /// Only the operational machine reached these.
    pub only_op: Outcomes,
    /// Only the axiomatic oracle allows these.
    pub only_ax: Outcomes,
    /// The termination verdicts differ: whether each engine found a hang
    /// (operational, axiomatic).
    pub termination: Option<(bool, bool)>,
}

/// Why termination was not checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotChecked {
    /// The check was turned off.
    Off,
    /// A limit stopped an engine.
    Incomplete,
    /// A loop that is neither a spin nor a retry loop reached the loop bound
    /// (the bound given) and no hang was found: longer executions might hang.
    LoopBound(u32),
}

/// The termination verdict of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Termination {
    /// A reachable stuck configuration: the program can hang.
    Hangs(Hang),
    /// Every execution terminates. `trivially`: no thread has a loop, a
    /// barrier or a wait, so no search was needed.
    Terminates {
        /// No loop, barrier or wait.
        trivially: bool,
    },
    /// Not decided.
    NotChecked(NotChecked),
}

impl Termination {
    /// Whether the verdict is conclusive (a hang, or termination shown).
    pub fn checked(&self) -> bool {
        !matches!(self, Termination::NotChecked(_))
    }
    /// Whether a hang was found.
    pub fn hangs(&self) -> bool {
        matches!(self, Termination::Hangs(_))
    }
    /// The hang found, if any.
    pub fn hang(&self) -> Option<&Hang> {
        match self {
            Termination::Hangs(h) => Some(h),
            _ => None,
        }
    }
}

/// What running the engine(s) on one program produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Engine label (`op`, `ax` or `both`).
    pub engine: &'static str,
    /// The columns of the final states.
    pub columns: Columns,
    /// The allowed final states (those that pass the test's `filter`, if any).
    pub outcomes: Outcomes,
    /// Allowed final states that the test's `filter` removed (not listed,
    /// not counted); every allowed state is in `outcomes` or here.
    pub filtered_out: Outcomes,
    /// The verdict of the condition over `outcomes`.
    pub verdict: Verdict,
    /// A loop bound cut some execution short: final states may be missing.
    pub bound_hit: bool,
    /// A resource limit stopped an engine: which, why, and whether the
    /// other engine finished.
    pub incomplete: Option<String>,
    /// The outcomes shown are partial (no engine finished); otherwise they
    /// are a complete engine's set even if the other was stopped.
    pub partial: bool,
    /// Counters.
    pub stats: EngineStats,
    /// With both engines: the outcomes on which they differ, if any.
    pub disagreement: Option<Disagreement>,
    /// Whether the program can hang.
    pub termination: Termination,
    /// The least undefined step an engine found a consistent execution to
    /// reach (either engine's finding is real, like a hang).
    pub undefined: Option<crate::model::ub::Undefined>,
    /// The data races the oracle found, and whether the search was whole.
    pub races: RaceCheck,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The data races of a run (`ax::race`): found by the oracle over every
/// consistent execution it searched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceCheck {
    /// The races found, each with an execution that shows it, in a fixed
    /// order (by location's instructions: thread, then instruction).
    pub found: Vec<ax::race::Found>,
    /// Whether `found` is every race of the program.
    pub status: RaceStatus,
}

/// Whether a race check covered every execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaceStatus {
    /// Every consistent execution was searched: `found` is every race
    /// (an empty list means race-free).
    Complete,
    /// Some executions were not searched (a limit, the loop bound, a hang):
    /// more races may exist; never read an empty list as race-free.
    Incomplete(String),
    /// The oracle did not run (`--engine op`).
    NotChecked(String),
}

impl RaceCheck {
    /// Whether the program was shown race-free.
    pub fn race_free(&self) -> bool {
        self.found.is_empty() && self.status == RaceStatus::Complete
    }
}

impl RunResult {
    /// Whether the verdict stands despite a loop bound or an incomplete run:
    /// a reachable outcome proves `exists` (and refutes `~exists`/`forall`)
    /// whatever was cut; the converse needs the complete set.
    pub fn verdict_is_definitive(&self, p: &Program) -> bool {
        if !self.bound_hit && self.incomplete.is_none() {
            return true;
        }
        use crate::ir::Quantifier::*;
        match p.condition.quantifier {
            Exists => self.verdict.holds,
            NotExists | Forall => !self.verdict.holds,
        }
    }
}

/// What one engine produced.
struct EngineRun {
    outcomes: Outcomes,
    bound_hit: bool,
    /// Why it stopped early, if it did.
    stopped: Option<String>,
    /// With the termination check and a finished run: a hang, or whether
    /// the loop bound was reached (then "no hang" is not conclusive).
    term: Option<Result<Hang, bool>>,
    /// Why the termination search stopped early, if it did (the outcomes
    /// are complete all the same).
    term_stopped: Option<String>,
    /// The least undefined step found.
    undefined: Option<crate::model::ub::Undefined>,
    /// The oracle's races (empty for the machine).
    races: std::collections::BTreeMap<ax::race::Race, ax::race::RaceWitness>,
}

/// Stack for the oracle's thread: its search recurses once per read and per
/// coherence orientation, with bit matrices in each frame.
const AX_STACK: usize = 256 << 20;

/// Run the chosen engine(s) on `p`, already admitted by `opts.model`.
///
/// Both engines share one [`Budget`]: with `--engine both` they run side by
/// side (the oracle on a thread of its own) against the same deadline and
/// memory ceiling, so the whole run returns within the time limit, and the
/// complete set of whichever engine finished is kept.
pub fn run(p: &Program, opts: &RunOptions) -> RunResult {
    let mut budget = Budget::new(opts.limits).with_output_cost(opts.output_cost);
    if opts.verdict_only {
        budget = budget.stop_at(settles(p));
    }
    let groups = crate::ir::elect::groups(p);
    let masks = crate::ir::activemask::groups(p);
    let grains = crate::ir::copies::choices(p);
    if crate::ir::elect::count(&groups) <= 1
        && crate::ir::activemask::count(&masks) <= 1
        && grains.len() <= 1
    {
        return run_within(p, opts, &budget);
    }
    // `elect.sync`: the leader is a fixed but unknown function of the
    // warp and mask (`ir::elect`); a copy's bytes complete in chunks the
    // GPU picks (`ir::copies`): the outcomes are the union over every
    // choice of leaders and each granularity, each run on the same budget.
    // `activemask`: the lanes executing one together are a block of a
    // partition (`ir::activemask`): the union over every partition too.
    let start = budget.start();
    let mut merged: Option<RunResult> = None;
    'choices: for choice in crate::ir::elect::choices(&groups) {
        for blocks in crate::ir::activemask::choices(&masks) {
            for &grain in grains {
                let mut variant = p.clone();
                crate::ir::elect::apply(&mut variant, &groups, &choice);
                crate::ir::activemask::apply(&mut variant, &masks, &blocks);
                variant.granularity = grain;
                let r = run_within(&variant, opts, &budget);
                let stop = r.incomplete.is_some();
                merged = Some(match merged {
                    None => r,
                    Some(acc) => merge(acc, r),
                });
                if stop {
                    break 'choices;
                }
            }
        }
    }
    let mut r = merged.expect("at least one choice");
    let (outcomes, filtered_out) = crate::outcome::apply_filter(
        p,
        &r.columns,
        r.outcomes.union(&r.filtered_out).cloned().collect(),
    );
    r.verdict = Verdict::of(p, &r.columns, &outcomes);
    r.outcomes = outcomes;
    r.filtered_out = filtered_out;
    r.seconds = start.elapsed().as_secs_f64();
    r
}

/// `--verdict-only`: whether a final state of `p` (over every column, as
/// the engines produce them) settles its condition — it passes the filter
/// and satisfies the proposition of an `exists` (a witness) or falsifies
/// that of a `forall` / satisfies that of a `~exists` (a counter-example).
/// Either way the verdict is decided by that state alone, whatever the
/// other states are.
fn settles(p: &Program) -> Box<crate::limits::SettlesFn> {
    use crate::ir::Quantifier;
    let cols = Columns::of(p);
    let prop = p.condition.prop.clone();
    let filter = p.filter.clone();
    let want = !matches!(p.condition.quantifier, Quantifier::Forall);
    Box::new(move |s: &[crate::ir::Value]| {
        let term = |t: &crate::ir::Term| cols.term(s, t);
        filter.as_ref().is_none_or(|f| f.eval(&term)) && prop.eval(&term) == want
    })
}

/// Two variants' results (leader choices, copy granularities) as one
/// (`run`): outcomes united, the first hang and least undefined step kept, a
/// disagreement or a stop in either kept. Counters are the first variant's.
fn merge(a: RunResult, b: RunResult) -> RunResult {
    let disagreement = match (a.disagreement, b.disagreement) {
        (Some(mut x), Some(y)) => {
            x.only_op.extend(y.only_op);
            x.only_ax.extend(y.only_ax);
            x.termination = x.termination.or(y.termination);
            Some(x)
        }
        (x, y) => x.or(y),
    };
    let termination = match (a.termination, b.termination) {
        (t @ Termination::Hangs(_), _) | (_, t @ Termination::Hangs(_)) => t,
        (t @ Termination::NotChecked(_), _) | (_, t @ Termination::NotChecked(_)) => t,
        (Termination::Terminates { trivially: x }, Termination::Terminates { trivially: y }) => {
            Termination::Terminates { trivially: x && y }
        }
    };
    RunResult {
        engine: a.engine,
        outcomes: a.outcomes.union(&b.outcomes).cloned().collect(),
        filtered_out: a.filtered_out.union(&b.filtered_out).cloned().collect(),
        columns: a.columns,
        verdict: a.verdict,
        bound_hit: a.bound_hit || b.bound_hit,
        incomplete: a.incomplete.or(b.incomplete),
        partial: a.partial || b.partial,
        stats: a.stats,
        disagreement,
        termination,
        undefined: match (a.undefined, b.undefined) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        },
        races: merge_races(a.races, b.races),
        seconds: a.seconds + b.seconds,
    }
}

/// Two leader choices' races as one: every pair either found (the first
/// witness kept), complete only if both searches were.
fn merge_races(a: RaceCheck, b: RaceCheck) -> RaceCheck {
    let mut found = a.found;
    for f in b.found {
        if !found.iter().any(|g| g.race == f.race) {
            found.push(f);
        }
    }
    found.sort_by(|x, y| x.race.cmp(&y.race));
    let status = match (a.status, b.status) {
        (RaceStatus::Complete, s) => s,
        (s, _) => s,
    };
    RaceCheck { found, status }
}

/// [`run`] for one program (one choice of `elect.sync` leaders) on `budget`.
fn run_within(p: &Program, opts: &RunOptions, budget: &Budget) -> RunResult {
    // The engines produce states over every column; a projected run lists
    // them over the observed ones (`--project condition`).
    let full = Columns::of(p);
    let columns = match opts.project {
        Projection::All => full.clone(),
        Projection::Condition => Columns::projected(p, false),
        Projection::Memory => Columns::projected(p, true),
    };
    let start = budget.start();
    // Lowered once for every engine and phase: each of them lowers what it
    // is given, which borrows an already lowered program (lowering keeps
    // source threads' instructions in place, so pcs, registers and final
    // states mean the same in both).
    let source = p;
    let lowered = crate::model::lower::lowered(source, opts.loop_bound);
    let p: &Program = &lowered;
    let check = opts.termination && crate::model::hang::can_block(p);
    let mut stats = EngineStats::default();
    let want_ax = matches!(opts.engine, EngineChoice::Ax | EngineChoice::Both);
    let want_op = matches!(opts.engine, EngineChoice::Op | EngineChoice::Both);
    let (ax, op) = std::thread::scope(|s| {
        // The oracle runs on a thread of its own (beside the machine, or
        // alone) for its deep stack: at the widest event sets a frame of its
        // reads-from recursion holds sets of hundreds of bytes.
        let beside = want_ax.then(|| {
            std::thread::Builder::new()
                .name("ptxmc-oracle".into())
                .stack_size(AX_STACK)
                .spawn_scoped(s, || run_ax(p, opts, check, budget))
        });
        let op = want_op.then(|| run_op(p, opts, check, budget));
        let ax = match beside {
            Some(Ok(handle)) => Some(
                handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
            ),
            // No thread to be had: run the oracle after the machine, on the
            // budget that is left.
            Some(Err(_)) => Some(run_ax(p, opts, check, budget)),
            None => None,
        };
        (ax, op)
    });
    let (mut ax, ax_stats) = ax.map_or((None, None), |(r, s)| (Some(r), Some(s)));
    let race_map = ax
        .as_mut()
        .map(|a| std::mem::take(&mut a.races))
        .unwrap_or_default();
    let race_status = match &ax {
        None => RaceStatus::NotChecked(
            "races are found by the axiomatic engine, which did not run (--engine op)".into(),
        ),
        Some(a) => match &a.stopped {
            Some(why) => RaceStatus::Incomplete(format!("the axiomatic engine stopped: {why}")),
            None if a.bound_hit => RaceStatus::Incomplete(format!(
                "an execution reached the loop bound ({}): races in longer executions are not checked",
                opts.loop_bound
            )),
            None => RaceStatus::Complete,
        },
    };
    let (mut op, op_stats) = op.map_or((None, None), |(r, s)| (Some(r), s));
    if columns.is_projection() {
        // Compared, filtered and judged over the observed columns: the
        // oracle zeroed the unobserved registers, so the full states of the
        // two engines need not match.
        let at = columns.positions_in(&full);
        for r in [ax.as_mut(), op.as_mut()].into_iter().flatten() {
            r.outcomes = Columns::project(&at, std::mem::take(&mut r.outcomes));
        }
    }
    stats.ax = ax_stats.map(|s| s.0);
    stats.ax_termination = ax_stats.and_then(|s| s.1);
    stats.op = op_stats;
    let incomplete = incompleteness(ax.as_ref(), op.as_ref());
    let (termination, term_disagree) = termination(
        opts,
        check,
        incomplete.is_some(),
        op.as_ref().and_then(|r| r.term.as_ref()),
        ax.as_ref().and_then(|r| r.term.as_ref()),
    );
    let undefined = [&ax, &op]
        .into_iter()
        .flatten()
        .filter_map(|r| r.undefined.clone())
        .min();
    let (outcomes, bound_hit, disagreement, partial) = match (ax, op) {
        (Some(a), Some(o)) => {
            let differ = a.outcomes != o.outcomes || term_disagree.is_some();
            let d = (differ && incomplete.is_none()).then(|| Disagreement {
                only_op: o.outcomes.difference(&a.outcomes).cloned().collect(),
                only_ax: a.outcomes.difference(&o.outcomes).cloned().collect(),
                termination: term_disagree,
            });
            let bound_hit = a.bound_hit || o.bound_hit;
            match (a.stopped.is_none(), o.stopped.is_none()) {
                (true, _) => (a.outcomes, bound_hit, d, false),
                (false, true) => (o.outcomes, o.bound_hit, d, false),
                (false, false) => {
                    let union = a.outcomes.union(&o.outcomes).cloned().collect();
                    (union, bound_hit, d, true)
                }
            }
        }
        (Some(a), None) => (a.outcomes, a.bound_hit, None, a.stopped.is_some()),
        (None, Some(o)) => (o.outcomes, o.bound_hit, None, o.stopped.is_some()),
        (None, None) => unreachable!("some engine runs"),
    };
    // herd's `filter` applies to what is listed and judged, after the
    // engines were compared above on every state.
    let (outcomes, filtered_out) = crate::outcome::apply_filter(source, &columns, outcomes);
    let verdict = Verdict::of(source, &columns, &outcomes);
    // Executions that hang never reach the oracle's leaves: their races are
    // not searched, so a hanging program is never called race-free.
    let race_status = match (race_status, termination.hangs()) {
        (RaceStatus::Complete, true) => RaceStatus::Incomplete(
            "the program can hang: races in executions that hang are not checked".into(),
        ),
        (s, _) => s,
    };
    let races = RaceCheck {
        found: race_map
            .into_iter()
            .map(|(race, witness)| ax::race::Found { race, witness })
            .collect(),
        status: race_status,
    };
    RunResult {
        engine: opts.engine.label(),
        columns,
        outcomes,
        filtered_out,
        verdict,
        bound_hit,
        incomplete,
        partial,
        stats,
        disagreement,
        termination,
        undefined,
        races,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// The run's termination verdict from each engine's, and whether they
/// disagree: a hang either engine found is real; "terminates" needs the
/// loop bound never reached; a conclusive hang against a conclusive
/// termination is a disagreement.
fn termination(
    opts: &RunOptions,
    check: bool,
    incomplete: bool,
    op: Option<&Result<Hang, bool>>,
    ax: Option<&Result<Hang, bool>>,
) -> (Termination, Option<(bool, bool)>) {
    if !opts.termination {
        return (Termination::NotChecked(NotChecked::Off), None);
    }
    if !check {
        return (Termination::Terminates { trivially: true }, None);
    }
    if incomplete {
        return (Termination::NotChecked(NotChecked::Incomplete), None);
    }
    let disagree = match (op, ax) {
        (Some(o @ Ok(_)), Some(a @ Err(false))) | (Some(o @ Err(false)), Some(a @ Ok(_))) => {
            Some((o.is_ok(), a.is_ok()))
        }
        _ => None,
    };
    let verdicts = [op, ax];
    let hang = verdicts.iter().flatten().find_map(|r| r.as_ref().ok());
    let verdict = match hang {
        Some(h) => Termination::Hangs(h.clone()),
        None if verdicts.iter().flatten().any(|r| matches!(r, Err(true))) => {
            Termination::NotChecked(NotChecked::LoopBound(opts.loop_bound))
        }
        None => Termination::Terminates { trivially: false },
    };
    (verdict, disagree)
}

/// Which engines were stopped and why; with two engines of which one
/// finished, also that the states shown are the finished one's.
fn incompleteness(ax: Option<&EngineRun>, op: Option<&EngineRun>) -> Option<String> {
    let named = |label: &str, r: Option<&EngineRun>| {
        r.and_then(|r| r.stopped.as_ref().or(r.term_stopped.as_ref()))
            .map(|why| format!("{label} engine: {why}"))
    };
    let stopped: Vec<String> = [named("axiomatic", ax), named("operational", op)]
        .into_iter()
        .flatten()
        .collect();
    if stopped.is_empty() {
        return None;
    }
    let mut why = stopped.join("; ");
    match (ax, op) {
        (Some(a), Some(_)) if a.stopped.is_none() => {
            why.push_str("; the axiomatic engine finished: the states below are its complete set")
        }
        (Some(_), Some(o)) if o.stopped.is_none() => {
            why.push_str("; the operational engine finished: the states below are its complete set")
        }
        _ => {}
    }
    Some(why)
}

/// The oracle: its outcomes, then (with `check`, if those finished) its
/// termination search; its counters for each.
fn run_ax(
    p: &Program,
    opts: &RunOptions,
    check: bool,
    budget: &Budget,
) -> (EngineRun, (AxStats, Option<AxStats>)) {
    let ax_opts = AxOptions {
        loop_bound: opts.loop_bound,
        retry_loops: opts.retry_loops,
        forced_coherence: opts.forced_coherence,
        static_barriers: opts.static_barriers,
        static_counters: opts.static_counters,
        mbar_chains: opts.mbar_chains,
        commute_counters: opts.commute_counters,
        twin_adders: opts.twin_adders,
        forced_reads: opts.forced_reads,
        fewest_first: opts.fewest_first,
        fewest_scan: opts.fewest_scan,
        project: opts.project.projects(),
        barriers: opts.barriers.for_program(p),
        fairness: opts.fairness,
        ..AxOptions::default()
    };
    let r = ax::run_within(p, &ax_opts, budget);
    let mut run = EngineRun {
        outcomes: r.outcomes,
        bound_hit: r.bound_hit,
        stopped: r.incomplete.map(|why| why.to_string()),
        term: None,
        term_stopped: None,
        undefined: r.undefined,
        races: r.races,
    };
    let mut term_stats = None;
    if check && run.stopped.is_none() {
        match ax::termination_within(p, &ax_opts, budget, r.stats.nodes) {
            Ok(t) => {
                term_stats = Some(t.stats);
                if let Some(u) = t.undefined {
                    if run.undefined.as_ref().is_none_or(|b| u < *b) {
                        run.undefined = Some(u);
                    }
                }
                run.term = Some(t.hang.ok_or(t.bound_hit || r.bound_hit));
            }
            Err(why) => run.term_stopped = Some(format!("{why} in the termination search")),
        }
    }
    (run, (r.stats, term_stats))
}

fn run_op(
    p: &Program,
    opts: &RunOptions,
    check: bool,
    budget: &Budget,
) -> (EngineRun, Option<ExploreStats>) {
    // The machine's event sets are as wide as the program's slots need: the
    // plain word pair first, then (told how many slots there are) the width
    // `rel::with_width!` picks for them.
    match run_op_at::<u128>(p, opts, check, budget) {
        Err(TooManySlots { needed, .. }) => crate::with_width!(
            needed,
            S => run_op_at::<S>(p, opts, check, budget),
            Err(TooManySlots {
                needed,
                capacity: crate::rel::MAX_EVENTS,
            })
        ),
        done => done,
    }
    .unwrap_or_else(|too_many| {
        let run = EngineRun {
            outcomes: Outcomes::new(),
            bound_hit: false,
            term: None,
            term_stopped: None,
            undefined: None,
            races: Default::default(),
            stopped: Some(too_many.to_string()),
        };
        (run, None)
    })
}

/// [`run_op`] with event sets of type `S`; `Err` if the program has more
/// event slots than `S` holds.
fn run_op_at<S: Bits>(
    p: &Program,
    opts: &RunOptions,
    check: bool,
    budget: &Budget,
) -> Result<(EngineRun, Option<ExploreStats>), TooManySlots> {
    let mut m = Machine::<S>::build(p, opts.loop_bound, opts.retry_loops)?;
    m.por = opts.por;
    if !opts.lazy_coherence {
        m.coherence = Coherence::Eager;
    }
    m.persistent = opts.persistent;
    m.spin_persistent = opts.spin_persistent;
    m.use_symmetry = opts.symmetry;
    m.symmetric_choices = opts.symmetric_choices;
    m.incremental_sc = opts.incremental_sc;
    m.prune_doomed = opts.prune_doomed;
    m.barriers = opts.barriers.for_program(p);
    m.fairness = opts.fairness;
    if opts.commute_additions {
        // A projected run lists no ticket the projection leaves out, so
        // those of commuting `atom`s may be forgotten.
        let observed: Vec<Vec<bool>> = if opts.project.projects() {
            crate::outcome::observed_regs(p)
        } else {
            p.threads.iter().map(|t| vec![true; t.regs.len()]).collect()
        };
        m.commute_additions(&observed);
        if let Some(c) = m.commuting.as_mut() {
            c.alone = opts.commute_alone;
        }
    }
    let eo = ExploreOptions {
        limits: opts.limits,
        jobs: opts.jobs,
        exact: opts.exact,
        progress: opts.progress,
        termination: check,
    };
    let r = explore::explore_within(&m, &eo, budget);
    let finished = r.incomplete.is_none();
    let run = EngineRun {
        outcomes: r.outcomes,
        bound_hit: r.bound_hit,
        stopped: r.incomplete.map(|why| why.to_string()),
        term: (check && finished).then(|| r.hang.ok_or(r.cut_reached || r.bound_hit)),
        term_stopped: None,
        undefined: r.undefined,
        races: Default::default(),
    };
    Ok((run, Some(r.stats)))
}
