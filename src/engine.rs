//! Running the engines on one test: the results layer between the engines
//! and the reports. It owns the choice of engine, the options shared by
//! every engine, and the comparison of their outcome sets.

use clap::ValueEnum;
use serde::Serialize;
use std::time::Instant;

use crate::ax::{self, AxOptions, AxStats};
use crate::ir::Program;
use crate::model::Model;
use crate::outcome::{Columns, Outcomes, Verdict};

/// Which engine(s) to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum EngineChoice {
    /// The axiomatic oracle.
    #[default]
    Ax,
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
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            model: Model::Ptx75,
            engine: EngineChoice::Ax,
            loop_bound: AxOptions::default().loop_bound,
        }
    }
}

/// Engine-specific counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum EngineStats {
    /// The oracle's counters.
    Ax(AxStats),
}

/// What running the engine(s) on one program produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Engine label (`ax`).
    pub engine: &'static str,
    /// The columns of the final states.
    pub columns: Columns,
    /// The allowed final states.
    pub outcomes: Outcomes,
    /// The verdict of the condition over `outcomes`.
    pub verdict: Verdict,
    /// A loop bound cut some execution short: final states may be missing.
    pub bound_hit: bool,
    /// A resource limit stopped the run (and why); `outcomes` are partial.
    pub incomplete: Option<String>,
    /// Counters.
    pub stats: Option<EngineStats>,
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
    let ax_opts = AxOptions {
        loop_bound: opts.loop_bound,
        ..AxOptions::default()
    };
    let (outcomes, bound_hit, incomplete, stats) = match ax::run(p, &ax_opts) {
        Ok(r) => (
            r.outcomes,
            r.bound_hit,
            None,
            Some(EngineStats::Ax(r.stats)),
        ),
        Err(limit) => (Outcomes::new(), false, Some(limit.to_string()), None),
    };
    let verdict = Verdict::of(p, &columns, &outcomes);
    RunResult {
        engine: "ax",
        columns,
        outcomes,
        verdict,
        bound_hit,
        incomplete,
        stats,
        seconds: start.elapsed().as_secs_f64(),
    }
}
