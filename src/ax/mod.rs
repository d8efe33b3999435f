//! The axiomatic oracle: the PTX memory model's axioms (digest §3), with
//! scopes, the `.cluster` level and the mixed-proxy extension, as a checker
//! that enumerates candidate executions and lists every allowed final state.
//!
//! Pipeline: each thread is unfolded into its control-flow paths
//! ([`unfold`]); for each combination of paths a candidate skeleton is built
//! ([`graph`]); [`search`] then chooses reads-from, barrier instances, the
//! Fence-SC order and the coherence order, pruning at every step.
//! `docs/oracle.md` lists every reading of the model this implementation
//! makes, with the tests that pin it.

pub mod graph;
pub mod search;
pub mod termination;
pub mod unfold;

use serde::Serialize;

use crate::ir::Program;
use crate::outcome::{Columns, Outcomes};
use crate::rel;

pub use search::AxStats;
pub use termination::{AxTermination, termination};

/// Options of the oracle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxOptions {
    /// How many times a loop that is not a spin loop may jump back.
    pub loop_bound: u32,
    /// The most control-flow paths per thread before giving up.
    pub max_paths: usize,
    /// Give up after this much time.
    pub timeout: Option<std::time::Duration>,
    /// Recognise retry loops (else they are bounded like other loops).
    pub retry_loops: bool,
}

impl Default for AxOptions {
    fn default() -> Self {
        AxOptions {
            loop_bound: 2,
            max_paths: 4096,
            timeout: None,
            retry_loops: true,
        }
    }
}

/// What the oracle found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxResult {
    /// Every allowed final state.
    pub outcomes: Outcomes,
    /// Some execution was cut at the loop bound: longer executions exist and
    /// their final states are not listed.
    pub bound_hit: bool,
    /// Search counters.
    pub stats: AxStats,
}

/// Why the oracle could not finish.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum AxLimit {
    /// A thread has more control-flow paths than the limit.
    TooManyPaths {
        /// The thread.
        thread: usize,
        /// The limit.
        limit: usize,
    },
    /// A candidate has more events than the bit matrices hold.
    TooManyEvents,
    /// The time limit passed.
    Timeout(u64),
}

impl std::fmt::Display for AxLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AxLimit::TooManyPaths { thread, limit } => {
                write!(
                    f,
                    "thread P{thread} has more than {limit} control-flow paths"
                )
            }
            AxLimit::TooManyEvents => {
                write!(f, "an execution has more than {} events", rel::MAX_EVENTS)
            }
            AxLimit::Timeout(ms) => write!(
                f,
                "the time limit ({:.1} s) was reached",
                *ms as f64 / 1000.0
            ),
        }
    }
}

/// Enumerate every final state the model allows for `p`.
pub fn run(p: &Program, opts: &AxOptions) -> Result<AxResult, AxLimit> {
    let lowered = crate::model::lower::lower(p);
    let p = &lowered;
    let cols = Columns::of(p);
    let deadline = opts.timeout.map(|t| std::time::Instant::now() + t);
    let paths = unfold_all(p, opts, false)?;
    let mut outcomes = Outcomes::new();
    let mut stats = AxStats::default();
    let mut bound_hit = false;
    let inits = p.locations.len();
    let mut idx = vec![0usize; paths.len()];
    if paths.iter().any(|ps| ps.is_empty()) {
        return Ok(AxResult {
            outcomes,
            bound_hit,
            stats,
        });
    }
    loop {
        let combo: Vec<&unfold::Path> =
            idx.iter().enumerate().map(|(t, &i)| &paths[t][i]).collect();
        let nevents = inits + combo.iter().map(|c| c.events.len()).sum::<usize>();
        if nevents > rel::MAX_EVENTS {
            return Err(AxLimit::TooManyEvents);
        }
        let truncated = combo.iter().any(|c| c.truncated);
        if !(truncated && bound_hit) {
            let g = graph::Graph::new(p, &combo);
            let mut s = search::Search::new(&g, &cols, &mut outcomes).with_deadline(deadline);
            let found = s.run();
            add_stats(&mut stats, &s.stats);
            if s.timed_out {
                return Err(AxLimit::Timeout(opts.timeout.unwrap().as_millis() as u64));
            }
            bound_hit |= truncated && found.any;
        }
        // Next combination (odometer order).
        let mut t = 0;
        loop {
            if t == idx.len() {
                return Ok(AxResult {
                    outcomes,
                    bound_hit,
                    stats,
                });
            }
            idx[t] += 1;
            if idx[t] < paths[t].len() {
                break;
            }
            idx[t] = 0;
            t += 1;
        }
    }
}

/// Every thread's paths (with `stuck`, its stuck paths too).
fn unfold_all(
    p: &Program,
    opts: &AxOptions,
    stuck: bool,
) -> Result<Vec<Vec<unfold::Path>>, AxLimit> {
    let loops = crate::model::loops::analyse(p, opts.retry_loops);
    let mut paths = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        let ps =
            unfold::unfold(th, &loops[t], opts.loop_bound, opts.max_paths, stuck).map_err(|e| {
                match e {
                    unfold::UnfoldError::TooManyPaths(limit) => {
                        AxLimit::TooManyPaths { thread: t, limit }
                    }
                    unfold::UnfoldError::TooManyEvents => AxLimit::TooManyEvents,
                }
            })?;
        paths.push(ps);
    }
    Ok(paths)
}

fn add_stats(a: &mut AxStats, b: &AxStats) {
    a.path_combinations += b.path_combinations;
    a.nodes += b.nodes;
    a.rf_candidates += b.rf_candidates;
    a.executions += b.executions;
    a.pruned_values += b.pruned_values;
    a.pruned_thin_air += b.pruned_thin_air;
    a.pruned_deadlock += b.pruned_deadlock;
    a.pruned_cb_cycle += b.pruned_cb_cycle;
    a.pruned_causality += b.pruned_causality;
    a.pruned_coherence += b.pruned_coherence;
    a.pruned_atomicity += b.pruned_atomicity;
    a.pruned_sc_per_location += b.pruned_sc_per_location;
    a.pruned_not_latest += b.pruned_not_latest;
}
