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
use crate::model::hang::Hang;
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
    /// Check termination (deadlocks and fair non-termination) when the
    /// program has a loop, a barrier or a wait.
    pub termination: bool,
    /// Recognise retry loops (`false` bounds them like other loops; only to
    /// check the reduction).
    pub retry_loops: bool,
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
            termination: true,
            retry_loops: true,
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
    /// A resource limit stopped an engine (and why).
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
    let check = opts.termination && crate::model::hang::can_block(&crate::model::lower::lower(p));
    // Each engine's termination verdict: a hang, or whether the loop bound
    // was reached before the program settled.
    let mut ax_term: Option<Result<Hang, bool>> = None;
    let mut op_term: Option<Result<Hang, bool>> = None;
    let ax = matches!(opts.engine, EngineChoice::Ax | EngineChoice::Both).then(|| {
        let ax_opts = AxOptions {
            loop_bound: opts.loop_bound,
            retry_loops: opts.retry_loops,
            ..AxOptions::default()
        };
        match ax::run(p, &ax_opts) {
            Ok(r) => {
                stats.ax = Some(r.stats);
                if check {
                    match ax::termination(p, &ax_opts) {
                        Ok(t) => {
                            stats.ax_termination = Some(t.stats);
                            ax_term = Some(t.hang.ok_or(t.bound_hit || r.bound_hit));
                        }
                        Err(limit) => {
                            incomplete = Some(format!("axiomatic engine (termination): {limit}"));
                        }
                    }
                }
                (r.outcomes, r.bound_hit)
            }
            Err(limit) => {
                incomplete = Some(format!("axiomatic engine: {limit}"));
                (Outcomes::new(), false)
            }
        }
    });
    let mut op_done = false;
    let op = matches!(opts.engine, EngineChoice::Op | EngineChoice::Both).then(|| {
        match Machine::with_retry_loops(p, opts.loop_bound, opts.retry_loops) {
            Ok(mut m) => {
                m.por = opts.por;
                let eo = ExploreOptions {
                    limits: opts.limits,
                    jobs: opts.jobs,
                    exact: opts.exact,
                    progress: opts.progress,
                    termination: check,
                };
                let r = explore::explore(&m, &eo);
                stats.op = Some(r.stats);
                match r.incomplete {
                    Some(why) => incomplete = Some(format!("operational engine: {why}")),
                    None => {
                        op_done = true;
                        if check {
                            op_term = Some(r.hang.ok_or(r.cut_reached || r.bound_hit));
                        }
                    }
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
    // Termination: a hang either engine found is real; "terminates" needs
    // the bound never reached before the program settled.
    let term_disagree = match (&op_term, &ax_term) {
        (Some(o), Some(a)) if incomplete.is_none() => match (o, a) {
            (Ok(_), Err(false)) | (Err(false), Ok(_)) => Some((o.is_ok(), a.is_ok())),
            _ => None,
        },
        _ => None,
    };
    let termination = if !opts.termination {
        Termination::NotChecked(NotChecked::Off)
    } else if !check {
        Termination::Terminates { trivially: true }
    } else if incomplete.is_some() {
        Termination::NotChecked(NotChecked::Incomplete)
    } else {
        let verdicts = [&op_term, &ax_term];
        let hang = verdicts
            .iter()
            .find_map(|v| v.as_ref().and_then(|r| r.as_ref().ok()));
        match hang {
            Some(h) => Termination::Hangs(h.clone()),
            None if verdicts.iter().any(|v| matches!(v, Some(Err(true)))) => {
                Termination::NotChecked(NotChecked::LoopBound(opts.loop_bound))
            }
            None => Termination::Terminates { trivially: false },
        }
    };
    let (outcomes, bound_hit, disagreement, partial) = match (ax, op) {
        (Some((a, ab)), Some((o, ob))) => {
            let d = ((a != o || term_disagree.is_some()) && incomplete.is_none()).then(|| {
                Disagreement {
                    only_op: o.difference(&a).cloned().collect(),
                    only_ax: a.difference(&o).cloned().collect(),
                    termination: term_disagree,
                }
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
        termination,
        seconds: start.elapsed().as_secs_f64(),
    }
}
