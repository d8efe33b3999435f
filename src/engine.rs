//! Running the engines on one test: the results layer between the engines
//! and the reports. It owns the choice of engine, the options shared by
//! every engine, and the comparison of their outcome sets.

use clap::ValueEnum;
use serde::Serialize;

use crate::ax::{self, AxOptions, AxStats};
use crate::explore::{self, ExploreOptions, ExploreStats};
use crate::ir::Program;
use crate::limits::{Budget, Limits};
use crate::model::Model;
use crate::op::{Machine, TooManySlots};
use crate::outcome::{Columns, Outcomes, Verdict};

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
    /// Worker threads for the operational exploration.
    pub jobs: usize,
    /// Remember full states instead of fingerprints.
    pub exact: bool,
    /// Show a progress line on stderr for long explorations.
    pub progress: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            model: Model::Ptx75,
            engine: EngineChoice::Both,
            loop_bound: AxOptions::default().loop_bound,
            limits: Limits::default(),
            por: true,
            jobs: 1,
            exact: false,
            progress: false,
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
}

/// Outcomes that only one engine produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disagreement {
    /// Only the operational machine reached these.
    pub only_op: Outcomes,
    /// Only the axiomatic oracle allows these.
    pub only_ax: Outcomes,
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
    /// Wall-clock seconds.
    pub seconds: f64,
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
    let columns = Columns::of(p);
    let budget = Budget::new(opts.limits);
    let start = budget.start();
    let mut stats = EngineStats::default();
    let want_ax = matches!(opts.engine, EngineChoice::Ax | EngineChoice::Both);
    let want_op = matches!(opts.engine, EngineChoice::Op | EngineChoice::Both);
    let (ax, op) = std::thread::scope(|s| {
        let beside = (want_ax && want_op).then(|| {
            std::thread::Builder::new()
                .name("ptxmc-oracle".into())
                .stack_size(AX_STACK)
                .spawn_scoped(s, || run_ax(p, opts, &budget))
        });
        let op = want_op.then(|| run_op(p, opts, &budget));
        let ax = match beside {
            Some(Ok(handle)) => Some(
                handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
            ),
            // No thread to be had: run the oracle after the machine, on the
            // budget that is left.
            Some(Err(_)) => Some(run_ax(p, opts, &budget)),
            None => want_ax.then(|| run_ax(p, opts, &budget)),
        };
        (ax, op)
    });
    let (ax, ax_stats) = ax.map_or((None, None), |(r, s)| (Some(r), Some(s)));
    let (op, op_stats) = op.map_or((None, None), |(r, s)| (Some(r), s));
    stats.ax = ax_stats;
    stats.op = op_stats;
    let incomplete = incompleteness(ax.as_ref(), op.as_ref());
    let (outcomes, bound_hit, disagreement, partial) = match (ax, op) {
        (Some(a), Some(o)) => {
            let d = (a.outcomes != o.outcomes && incomplete.is_none()).then(|| Disagreement {
                only_op: o.outcomes.difference(&a.outcomes).cloned().collect(),
                only_ax: a.outcomes.difference(&o.outcomes).cloned().collect(),
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
    let (outcomes, filtered_out) = crate::outcome::apply_filter(p, &columns, outcomes);
    let verdict = Verdict::of(p, &columns, &outcomes);
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
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Which engines were stopped and why; with two engines of which one
/// finished, also that the states shown are the finished one's.
fn incompleteness(ax: Option<&EngineRun>, op: Option<&EngineRun>) -> Option<String> {
    let named = |label: &str, r: Option<&EngineRun>| {
        r.and_then(|r| r.stopped.as_ref())
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

fn run_ax(p: &Program, opts: &RunOptions, budget: &Budget) -> (EngineRun, AxStats) {
    let ax_opts = AxOptions {
        loop_bound: opts.loop_bound,
        ..AxOptions::default()
    };
    let r = ax::run_within(p, &ax_opts, budget);
    let run = EngineRun {
        outcomes: r.outcomes,
        bound_hit: r.bound_hit,
        stopped: r.incomplete.map(|why| why.to_string()),
    };
    (run, r.stats)
}

fn run_op(p: &Program, opts: &RunOptions, budget: &Budget) -> (EngineRun, Option<ExploreStats>) {
    match Machine::new(p, opts.loop_bound) {
        Ok(mut m) => {
            m.por = opts.por;
            let eo = ExploreOptions {
                limits: opts.limits,
                jobs: opts.jobs,
                exact: opts.exact,
                progress: opts.progress,
            };
            let r = explore::explore_within(&m, &eo, budget);
            let run = EngineRun {
                outcomes: r.outcomes,
                bound_hit: r.bound_hit,
                stopped: r.incomplete.map(|why| why.to_string()),
            };
            (run, Some(r.stats))
        }
        Err(TooManySlots(n)) => {
            let run = EngineRun {
                outcomes: Outcomes::new(),
                bound_hit: false,
                stopped: Some(format!(
                    "the program needs {n} event slots (at most {})",
                    crate::rel::MAX_EVENTS
                )),
            };
            (run, None)
        }
    }
}
