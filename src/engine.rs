//! Running the engines on one test: the results layer between the engines
//! and the reports. It owns the choice of engine, the options shared by
//! every engine, and the comparison of their outcome sets.

use clap::ValueEnum;
use serde::Serialize;
use std::time::Instant;

use crate::ax::{self, AxOptions, AxStats};
use crate::explore::{self, ExploreOptions, ExploreStats, Limits};
use crate::ir::Program;
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
    /// Limits (both engines honour the time limit; the explorer all of them).
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
    /// A resource limit stopped an engine (and why).
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

/// Run the chosen engine(s) on `p`, already admitted by `opts.model`.
pub fn run(p: &Program, opts: &RunOptions) -> RunResult {
    let columns = Columns::of(p);
    let start = Instant::now();
    let mut stats = EngineStats::default();
    let mut incomplete = None;
    let ax = matches!(opts.engine, EngineChoice::Ax | EngineChoice::Both).then(|| {
        let ax_opts = AxOptions {
            loop_bound: opts.loop_bound,
            ..AxOptions::default()
        };
        match ax::run(p, &ax_opts) {
            Ok(r) => {
                stats.ax = Some(r.stats);
                (r.outcomes, r.bound_hit)
            }
            Err(limit) => {
                incomplete = Some(format!("axiomatic engine: {limit}"));
                (Outcomes::new(), false)
            }
        }
    });
    let mut op_done = false;
    let op =
        matches!(opts.engine, EngineChoice::Op | EngineChoice::Both).then(|| {
            match Machine::new(p, opts.loop_bound) {
                Ok(mut m) => {
                    m.por = opts.por;
                    let eo = ExploreOptions {
                        limits: opts.limits,
                        jobs: opts.jobs,
                        exact: opts.exact,
                        progress: opts.progress,
                    };
                    let r = explore::explore(&m, &eo);
                    stats.op = Some(r.stats);
                    match r.incomplete {
                        Some(why) => incomplete = Some(format!("operational engine: {why}")),
                        None => op_done = true,
                    }
                    (r.outcomes, r.bound_hit)
                }
                Err(TooManySlots(n)) => {
                    incomplete = Some(format!(
                        "operational engine: the program needs {n} event slots (at most {})",
                        crate::rel::MAX_EVENTS
                    ));
                    (Outcomes::new(), false)
                }
            }
        });
    // Which outcome set to show: a complete one if either engine finished.
    let ax_done = stats.ax.is_some();
    let (outcomes, bound_hit, disagreement, partial) = match (ax, op) {
        (Some((a, ab)), Some((o, ob))) => {
            let d = (a != o && incomplete.is_none()).then(|| Disagreement {
                only_op: o.difference(&a).cloned().collect(),
                only_ax: a.difference(&o).cloned().collect(),
            });
            match (ax_done, op_done) {
                (true, _) => (a, ab || ob, d, false),
                (false, true) => (o, ob, d, false),
                (false, false) => (a.union(&o).cloned().collect(), ab || ob, d, true),
            }
        }
        (Some((a, ab)), None) => (a, ab, None, !ax_done),
        (None, Some((o, ob))) => (o, ob, None, !op_done),
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
