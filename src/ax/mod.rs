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
//!
//! Every phase that can grow — unfolding, the walk over path combinations,
//! the search, the final states of a leaf — polls the run's [`Budget`]; the
//! state limit counts search nodes ([`AxStats::nodes`]).

pub mod barrier_sets;
pub mod barriers;
pub mod combos;
pub mod counters;
pub mod graph;
pub mod mbar_chains;
pub mod race;
pub mod search;
pub mod termination;
pub mod twins;
pub mod unfold;

use serde::Serialize;

use crate::ir::Program;
use crate::limits::{Budget, Exceeded, Poll};
use crate::outcome::{Columns, Outcomes};
use crate::rel;

pub use search::AxStats;
pub use termination::{AxTermination, termination, termination_within};

/// Options of the oracle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxOptions {
    /// How many times a loop that is not a spin loop may jump back.
    pub loop_bound: u32,
    /// The most control-flow paths per thread before giving up.
    pub max_paths: usize,
    /// Recognise retry loops (else they are bounded like other loops).
    pub retry_loops: bool,
    /// Add the coherence edges that one orientation's immediate violation
    /// forces, and read the final values of total locations off the least
    /// coherence instead of searching their orders (`docs/oracle.md`,
    /// "Forced coherence"); `false` only to check that shortcut.
    pub forced_coherence: bool,
    /// How CTA barriers are read.
    pub barriers: crate::model::barrier::Reading,
    /// Plan count-less and constant barriers from the paths alone: the
    /// phases before reads-from, and (termination search) the sets of
    /// threads that can be stuck at a barrier before any combination is
    /// built (`docs/oracle.md`, "Barrier phases before reads-from");
    /// `false` only to check that shortcut.
    pub static_barriers: bool,
    /// Which writes spinning reads must eventually see (termination search).
    pub fairness: crate::model::hang::Fairness,
    /// Leave out, in the termination search, every path combination in
    /// which a thread spins on a counter (a location only atomic additions
    /// of constants write) whose final value, read off the paths, lets it
    /// leave (`docs/oracle.md`, "Spinning on a counter"); `false` only to
    /// check that shortcut.
    pub static_counters: bool,
    /// Leave out, in the termination search, every path combination in
    /// which no order of some mbarrier's operations lets every wait read
    /// what its path assumed (`docs/oracle.md`, "Mbarrier chains");
    /// `false` only to check that shortcut.
    pub mbar_chains: bool,
    /// Bind counters' RMW chains position by position and search one order
    /// of the additions that commute for each set of what reads observe
    /// (`docs/oracle.md`, "Commuting additions"; outcome search only, with
    /// `static_counters`); `false` only to check that reduction.
    pub commute_counters: bool,
    /// With `commute_counters`: of interchangeable adders (`twins`), try at
    /// each position of a chain only the least still unplaced
    /// (`docs/oracle.md`, "Interchangeable adders"); `false` only to check
    /// that reduction.
    pub twin_adders: bool,
    /// Reads-from binds first, at each node, a read that has at most one
    /// candidate left (a *forced* read), and drops a node where some read
    /// has none (`docs/oracle.md`, "Forced reads first"; outcome search
    /// only); `false` only to check that search order.
    pub forced_reads: bool,
    /// With `forced_reads`: keep each read's candidates from node to node
    /// and, when no read is forced, bind the one with the fewest
    /// (`docs/oracle.md`, "Fewest candidates first"; outcome search only);
    /// `false` only to check that search order.
    pub fewest_first: bool,
    /// With `fewest_first`: re-check the reads not bound yet in ascending
    /// order of their kept candidates, so a forced read is met after few
    /// trial checks (`docs/oracle.md`, "Fewest kept candidates scanned
    /// first"; outcome search only); `false` only to check that scan order.
    pub fewest_scan: bool,
    /// `--project condition`: the final states list only the registers and
    /// locations the test asks about ([`crate::outcome::observed`]), so a
    /// register nobody asks about is no part of an outcome — which lets an
    /// `atom` whose result nothing else reads commute like a `red`
    /// (`docs/oracle.md`, "Projection"). The outcomes are full-width states
    /// all the same, with such registers 0.
    pub project: bool,
}

impl Default for AxOptions {
    fn default() -> Self {
        AxOptions {
            loop_bound: 2,
            max_paths: 4096,
            retry_loops: true,
            forced_coherence: true,
            barriers: Default::default(),
            static_barriers: true,
            fairness: Default::default(),
            static_counters: true,
            mbar_chains: true,
            commute_counters: true,
            twin_adders: true,
            forced_reads: true,
            fewest_first: true,
            fewest_scan: true,
            project: false,
        }
    }
}

/// What the oracle found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxResult {
    /// Every allowed final state (with `incomplete`: those found so far).
    pub outcomes: Outcomes,
    /// Some execution was cut at the loop bound: longer executions exist and
    /// their final states are not listed.
    pub bound_hit: bool,
    /// Search counters.
    pub stats: AxStats,
    /// Why the oracle stopped before the end, if it did: `outcomes` is partial.
    pub incomplete: Option<AxLimit>,
    /// The least undefined step of a consistent execution, if any.
    pub undefined: Option<crate::model::ub::Undefined>,
    /// The data races of the consistent executions searched (all of them
    /// when the run is complete and no loop bound was hit), each with the
    /// first execution found that shows it, in the order of [`race::Race`].
    pub races: std::collections::BTreeMap<race::Race, race::RaceWitness>,
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
    /// A candidate has more events than the widest bit matrices hold
    /// ([`rel::MAX_EVENTS`], thousands): a resource limit, like the others.
    TooManyEvents,
    /// A limit of the run (states = search nodes, time, memory) was reached.
    Budget(Exceeded),
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
                write!(
                    f,
                    "an execution has more than {} events (the widest event sets this build holds)",
                    rel::MAX_EVENTS
                )
            }
            AxLimit::Budget(e) => e.fmt(f),
        }
    }
}

/// Enumerate every final state the model allows for `p`, without resource
/// limits; `Err` only if the program is beyond the oracle (too many paths or
/// events).
pub fn run(p: &Program, opts: &AxOptions) -> Result<AxResult, AxLimit> {
    let r = run_within(p, opts, &Budget::unlimited());
    match r.incomplete {
        Some(why) => Err(why),
        None => Ok(r),
    }
}

/// Enumerate every final state the model allows for `p` within `budget`;
/// a run stopped early says why in [`AxResult::incomplete`] and keeps the
/// outcomes and counters it had.
pub fn run_within(p: &Program, opts: &AxOptions, budget: &Budget) -> AxResult {
    let mut r = AxResult {
        outcomes: Outcomes::new(),
        bound_hit: false,
        stats: AxStats::default(),
        incomplete: None,
        undefined: None,
        races: Default::default(),
    };
    if let Err(why) = search_all(p, opts, budget, &mut r) {
        r.incomplete = Some(why);
    }
    r
}

fn search_all(
    p: &Program,
    opts: &AxOptions,
    budget: &Budget,
    r: &mut AxResult,
) -> Result<(), AxLimit> {
    let lowered = crate::model::lower::lowered(p, opts.loop_bound);
    let p = &lowered;
    let cols = Columns::of(p);
    let paths = unfold_all(p, opts, false, budget)?;
    let inits = p.locations.len();
    let counters = opts
        .static_counters
        .then(|| counters::Counters::new(p))
        .flatten();
    let mut combos = combos::Combos::new(p, &paths);
    let observed = opts.project.then(|| crate::outcome::observed_regs(p));
    let twins = twins::classes(p);
    loop {
        // One combination is one search node at least, so the state limit
        // and the clock bound this walk even when every search is trivial.
        if let Some(e) = budget
            .check()
            .or_else(|| budget.states_exceeded(r.stats.nodes))
        {
            return Err(AxLimit::Budget(e));
        }
        let Some(combo) = combos.next() else {
            return Ok(());
        };
        let nevents = inits + combo.iter().map(|c| c.events.len()).sum::<usize>();
        let truncated = combo.iter().any(|c| c.truncated);
        if !(truncated && r.bound_hit) && termination::awaits_consistent(p, &combo) {
            // The event sets of this combination are as wide as its events
            // need (`rel::with_width!`), so there is no cap but the widest.
            crate::with_width!(nevents, S => {
                let mut g = graph::Graph::<S>::new(p, &combo);
                if let Some(seen) = &observed {
                    g.project_final_regs(seen);
                }
                let mut s = search::Search::new(&g, &cols, &mut r.outcomes, budget, r.stats.nodes)
                    .forced_coherence(opts.forced_coherence);
                if let Some(c) = &counters {
                    s = s.chains_first(c.flags());
                    if opts.commute_counters {
                        s = s.commute_chains(c.flags());
                        if opts.twin_adders {
                            s = s.twin_adders(&twins);
                        }
                    }
                }
                s.barriers = opts.barriers;
                s.static_barriers = opts.static_barriers;
                s.forced_reads = opts.forced_reads;
                s.fewest_first = opts.fewest_first;
                s.fewest_scan = opts.fewest_scan;
                let found = s.run();
                add_stats(&mut r.stats, &s.stats);
                for (race, w) in std::mem::take(&mut s.races) {
                    r.races.entry(race).or_insert(w);
                }
                if let Some(u) = s.undefined.take() {
                    if r.undefined.as_ref().is_none_or(|b| u < *b) {
                        r.undefined = Some(u);
                    }
                }
                if let Some(e) = s.stopped {
                    return Err(AxLimit::Budget(e));
                }
                r.bound_hit |= truncated && found.any;
            }, return Err(AxLimit::TooManyEvents))
        }
    }
}

/// Every thread's paths (with `stuck`, its stuck paths too).
pub(crate) fn unfold_all(
    p: &Program,
    opts: &AxOptions,
    stuck: bool,
    budget: &Budget,
) -> Result<Vec<Vec<unfold::Path>>, AxLimit> {
    let loops = crate::model::loops::analyse(p, opts.retry_loops);
    let mut poll = Poll::new(budget);
    let mut paths = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        let ps = unfold::unfold(
            th,
            &loops[t],
            opts.loop_bound,
            opts.max_paths,
            stuck,
            &mut poll,
        )
        .map_err(|e| match e {
            unfold::UnfoldError::TooManyPaths(limit) => AxLimit::TooManyPaths { thread: t, limit },
            unfold::UnfoldError::Budget(e) => AxLimit::Budget(e),
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
    a.pruned_commuted += b.pruned_commuted;
}
