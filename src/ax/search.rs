//! The search for consistent executions of one candidate skeleton.
//!
//! It is a chain of small steps, each pruning as early as it can, each
//! with its own counter in [`AxStats`]:
//! 1. **reads-from**, read by read: reject when a branch outcome the path
//!    assumed fails, when `rf ∪ dep` gets a cycle (A4, No-Thin-Air), or when
//!    the base causality known so far is cyclic or makes a read read from a
//!    write it causally precedes (A6, rf part). Relations only grow as more
//!    reads are fixed, so these rejections are final;
//! 2. **barriers**: once values are known, match barrier arrivals into
//!    instances; an instance that never completes is a deadlock;
//! 3. **Fence-SC order**: orient each morally strong pair of `fence.sc` not
//!    already ordered by base causality; a cycle is a violation of Fence-SC
//!    (A2) or of `acyclic(cb)`;
//! 4. **coherence**: start from the initial writes and the write-to-write
//!    causality edges (A1), then orient each morally strong pair of writes,
//!    checking Atomicity (A3), SC-per-location (A5) and the from-read part of
//!    Causality (A6) after every orientation (they only get harder as `co`
//!    grows, so the smallest `co` is enough, digest §3.9);
//! 5. **final state**: registers, and for each location any `co`-maximal write.

use serde::Serialize;

use crate::ir::{Proxy, Value};
use crate::limits::{Budget, Exceeded, Finder, Poll};
use crate::model::hang::Fairness;
use crate::model::ub::Undefined;
use crate::outcome::{Columns, Outcomes};

use super::graph::Graph;
use super::race::{self, Race, RaceWitness};
use crate::rel::{Bits, Rel, bit, has_cycle_within, members};

/// Counters of the search, one per step and per reason for rejection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AxStats {
    /// Combinations of one control-flow path per thread.
    pub path_combinations: u64,
    /// Nodes of the search tree visited (partial candidates examined).
    pub nodes: u64,
    /// Complete reads-from assignments reached.
    pub rf_candidates: u64,
    /// Consistent executions found.
    pub executions: u64,
    /// Rejected: a branch outcome assumed by a path fails.
    pub pruned_values: u64,
    /// Rejected: `rf ∪ dep` cyclic (A4).
    pub pruned_thin_air: u64,
    /// Rejected: a barrier instance never completes (deadlock).
    pub pruned_deadlock: u64,
    /// Rejected: base causality cyclic (incl. Fence-SC, A2).
    pub pruned_cb_cycle: u64,
    /// Rejected: a read reads from a write it causally precedes, or from a
    /// write coherence-before one that causally precedes it (A6).
    pub pruned_causality: u64,
    /// Rejected: coherence cyclic (A1).
    pub pruned_coherence: u64,
    /// Rejected: an RMW is not atomic (A3).
    pub pruned_atomicity: u64,
    /// Rejected: SC-per-location (A5).
    pub pruned_sc_per_location: u64,
    /// Rejected (termination search only): a spinning or waiting read does
    /// not read the coherence-latest write.
    pub pruned_not_latest: u64,
    /// Rejected: an order of a counter's commuting additions that no read
    /// tells from the canonical order of the same additions
    /// ([`Search::commute_chains`]; `docs/oracle.md`, "Commuting additions").
    pub pruned_commuted: u64,
}

/// What [`Search::forced_read`] found at a node.
enum Forced {
    /// Some read not bound yet has no candidate left.
    Dead,
    /// The read at this index of the order has exactly one.
    At(usize),
    /// Every read not bound yet has two or more.
    Free,
}

/// What the search of one skeleton found.
pub struct Found {
    /// Some consistent execution exists.
    pub any: bool,
}

/// Search state for one skeleton.
pub struct Search<'a, 'p, S: Bits> {
    g: &'a Graph<'p, S>,
    cols: &'a Columns,
    /// Reads-from so far, indexed by read event.
    rf: Vec<Option<usize>>,
    /// The same as a relation write → read.
    rf_rel: Rel<S>,
    /// Rows of a relation being checked, indexed by event (reused, to not
    /// allocate per check; only the rows of the events checked are current).
    scratch: Vec<S>,
    /// Every event of the skeleton.
    all: S,
    /// Per location: its memory events, initial write included. The axioms
    /// that mention coherence relate events of one location, so orienting a
    /// location's writes is checked on these events alone.
    loc_events: Vec<S>,
    /// Per read: the reads program-order-before it at its address.
    reads_po_loc_before: Vec<S>,
    /// Per location: whether it is *total* — its events (initial write
    /// included) pairwise morally strong, no RMW and no read that must read
    /// the latest write. For such a location every coherence order that
    /// extends `Search::min_co` is consistent (`docs/oracle.md`,
    /// "Forced coherence"), so nothing is searched: its final values are
    /// the writes `min_co` leaves maximal.
    total_loc: Vec<bool>,
    /// The events of the total locations.
    total_events: S,
    /// Every write (initial writes included): what coherence relates.
    writes: S,
    /// Per event: the writes of its location.
    same_loc_writes: Vec<S>,
    /// The part of the least coherence that holds for every reads-from:
    /// initial writes first, and (with forced coherence) writes in program
    /// order at one address, morally strong, in that order (coWW).
    co_base: Rel<S>,
    /// Per read: the writes program-order-before it at its address that are
    /// morally strong with it (coWR's writes).
    po_loc_ms_writes_before: Vec<S>,
    /// Add forced coherence edges and use total locations (see
    /// [`Search::forced_coherence`]).
    forced: bool,
    /// Per memory event X of a non-generic proxy: the proxy fences that may
    /// be in `Src(X)` (bi-directional, X's proxy, X's CTA, X's space).
    src_cand: Vec<S>,
    /// Per memory event Y of a non-generic proxy: the proxy fences that may
    /// be in `Dst(Y)` (either direction).
    dst_cand: Vec<S>,
    /// Program order and signal → await edges, closed: the static part of
    /// base causality.
    base: Rel<S>,
    /// When every access is generic and each location has one address (no
    /// proxies, no aliases): per memory event of a thread, the memory events
    /// of its location. Proxy-preserved causality is then base causality
    /// restricted to these pairs, which saves the per-pair proxy rules.
    plain_same_loc: Option<Vec<S>>,
    /// Per memory event X: the memory events of its location (what
    /// proxy-preserved causality may relate X to).
    same_loc_mem: Vec<S>,
    /// Per generic memory event X: the generic memory events of its
    /// location through its virtual address, which proxy-preserved base
    /// causality relates X to whenever base causality does (no proxy rule
    /// to check pair by pair).
    generic_same_va: Vec<S>,
    /// Some event depends on a read (`dep` is not empty).
    has_deps: bool,
    /// Morally strong pairs of `fence.sc`.
    sc_pairs: Vec<(usize, usize)>,
    /// Morally strong pairs of same-location writes (initial writes
    /// excluded), per location.
    ws_pairs_of: Vec<Vec<(usize, usize)>>,
    /// Counters.
    pub stats: AxStats,
    /// Record outcomes (false for a skeleton cut at the loop bound).
    record: bool,
    /// The run's budget, polled at every node and in every loop that can grow.
    poll: Poll<'a>,
    /// Search nodes of the run before this search (the state limit counts all).
    nodes_before: u64,
    /// A limit of the run was reached: results are partial.
    pub stopped: Option<Exceeded>,
    found: bool,
    /// How CTA barriers are read.
    pub barriers: crate::model::barrier::Reading,
    /// ISA reading: what the barrier phases of the current choice order in
    /// time ([`super::barriers::BarChoice::time`]).
    bar_time: Option<Rel<S>>,
    /// ISA reading: the phases of the current choice, as instances.
    bar_instances: Vec<Instance>,
    /// The undefined step of the current barrier choice, if any.
    bar_ub: Option<Undefined>,
    /// Decide the barrier phases before reads-from when no barrier's name
    /// or count depends on a read (ISA reading; `docs/oracle.md`, "Barrier
    /// phases before reads-from"); `false` only to check that shortcut.
    pub static_barriers: bool,
    /// Bind forced reads first ([`Search::forced_read`]; `docs/oracle.md`,
    /// "Forced reads first"). Off by default: the outcome search turns it
    /// on (`AxOptions::forced_reads`).
    pub forced_reads: bool,
    /// With `forced_reads`: bind a forced read out of the fixed order
    /// (`true`, the outcome search), or only drop a node where some read
    /// has no candidate, keeping the order and so the first execution
    /// found (`false`, the termination search, whose first hang is its
    /// witness).
    pub forced_order: bool,
    /// With `forced_reads` and `forced_order`: keep, per read not bound
    /// yet, the candidate writes that the checks of [`Search::partial_ok`]
    /// left at the node above (each node re-checks only those, as a write
    /// rejected above stays rejected), and when no read is forced, bind
    /// the one with the fewest candidates (`docs/oracle.md`, "Fewest
    /// candidates first"). Off only to check that search order.
    pub fewest_first: bool,
    /// With `fewest_first`: re-check the reads not bound yet in ascending
    /// order of their kept candidates (ties by event) instead of
    /// the fixed order, so that a read left with one is met after few trial
    /// checks (`docs/oracle.md`, "Fewest kept candidates scanned first").
    /// Off only to check that scan order.
    pub fewest_scan: bool,
    /// With `fewest_first`: per read, a superset of the writes it can
    /// still read (every write it cannot is one the checks reject).
    cands: Vec<S>,
    /// With [`Search::static_barriers`], when they apply: every way the
    /// barrier arrivals form phases, which reads-from cannot change.
    pre_choices: Vec<super::barriers::BarChoice<S>>,
    /// The indices of the `pre_choices` that the reads-from bound so far
    /// leave consistent (each read can only remove some).
    alive: Vec<usize>,
    /// The order in which reads-from binds the reads: program order thread
    /// by thread, unless [`Search::chains_first`] moved some first.
    order: Vec<usize>,
    /// `pre_choices` is in use.
    pre_planned: bool,
    /// Per plan of `pre_choices`: the static part of base causality with
    /// the plan's synchronisation edges, closed (computed once, as a
    /// plan's `k²` edges cost more to close than everything else a check
    /// does).
    pre_cb: Vec<Rel<S>>,
    /// The least undefined step of a consistent execution found.
    pub undefined: Option<Undefined>,
    /// mbarrier read-modify-writes as (read half, write half), judged at
    /// every consistent execution (`model::ub::mbarrier_step`).
    mbar_rmws: Vec<(usize, usize)>,
    /// Events of lowered undefined steps ([`crate::ir::SignalKind::Undefined`]):
    /// every consistent execution that has one is undefined
    /// (`model::ub::step_ub`).
    undefined_steps: Vec<usize>,
    /// In a search that stops at its first execution (stuck paths): go on
    /// through every execution, for the least undefined step (the program
    /// may reach one).
    pub hunt_undefined: bool,
    /// The barrier instances of the witness execution.
    witness_instances: Vec<Instance>,
    /// For a graph with stuck paths: reads-from of the first consistent
    /// execution found (a hang witness).
    pub witness: Option<Vec<Option<usize>>>,
    /// Conflicting pairs of events that are not morally strong: each is a
    /// race in every consistent execution whose causality leaves it
    /// unordered (`ax::race`).
    race_pairs: Vec<(usize, usize)>,
    /// The races of the executions found, each with the first execution
    /// that shows it.
    pub races: std::collections::BTreeMap<Race, RaceWitness>,
    /// Which writes spinning reads must eventually see.
    fairness: Fairness,
    /// Per read that must read a fair write (`Graph::latest`): the writes
    /// of its location none of which may follow its source in coherence —
    /// all of them for blocking waits, RMWs and under [`Fairness::All`];
    /// under [`Fairness::MorallyStrong`] those morally strong with a
    /// spinning load, and (while a coherence is searched, `co_start`) those
    /// that causally precede the load's copy in the next iteration.
    fair_forbid: Vec<S>,
    /// With [`Search::commute_chains`]: how many reads at the front of
    /// `order` are read halves of counters' RMW chains, which reads-from
    /// binds position by position from the initial write (0: none).
    chain_len: usize,
    /// Per location: the last write of its chain bound so far (the initial
    /// write before any).
    chain_tail: Vec<usize>,
    /// Per location: the read halves of its chain's RMWs.
    chain_reads: Vec<S>,
    /// Read halves of the RMWs that commute with each other: nothing reads
    /// their value, nothing synchronises on their read, and no other
    /// thread's event is base-causality-before them.
    commuting: S,
    /// Per location: its reads that are not RMW read halves.
    plain_reads: Vec<S>,
    /// Per write half of an RMW of a chain: its read half.
    read_half: Vec<Option<usize>>,
    /// Per location: every read half of its chain commutes and no read but
    /// an RMW's can read a write short of the chain's last (each is pinned
    /// by its branch outcomes to the final value, which no shorter chain
    /// holds): no descent can be told apart, so the one canonical chain is
    /// the ascending one.
    ascending_only: Vec<bool>,
    /// Per location: how many descents of commuting additions the chain
    /// bound so far has (each needs a read of its own to tell it apart).
    descents: Vec<usize>,
    /// With [`Search::twin_adders`]: per chain read half, the read halves
    /// of the same location's chain that belong to lesser twins of its
    /// thread (`ax::twins`; empty: none).
    lesser_twins: Vec<S>,
    out: &'a mut Outcomes,
}

/// One barrier instance of a candidate: the arrivals of one phase of one
/// barrier of one CTA (Dat3M reading: the `k`-th arrivals of the threads).
#[derive(Clone, Debug)]
pub struct Instance {
    /// The values naming the barrier.
    pub id: Vec<Value>,
    /// The thread count, if the participants agree on one (`None` with
    /// `agree` false: they disagree, and it never completes).
    pub count: Option<Value>,
    /// Whether every participant gives the same count.
    pub agree: bool,
    /// Its arrivals (indices into [`Graph::barriers`]).
    pub arrivals: Vec<usize>,
    /// Arrivals it needs to complete.
    pub needed: usize,
}

impl Instance {
    /// Whether the instance completes.
    pub fn completes(&self) -> bool {
        self.agree && self.arrivals.len() >= self.needed
    }
}

/// What the Fence-SC and coherence steps share about one reads-from choice.
struct Ctx<'r, S: Bits> {
    /// Release/acquire synchronisation.
    sw_ra: &'r Rel<S>,
    /// Observation.
    obs: &'r Rel<S>,
}

/// Base causality for each *signature* of origins: with restricted release
/// heads, an event travels through such a head only if the head publishes
/// it, so each set of passable heads has its own closure (digest §3.5 with
/// the restricted releases of `docs/async.md`).
struct Closures<S: Bits> {
    /// The closure for each signature.
    by_sig: Vec<Rel<S>>,
    /// Each event's signature.
    sig_of: Vec<usize>,
}

impl<'a, 'p, S: Bits> Search<'a, 'p, S> {
    /// Prepare the search of `g`; outcomes go to `out`. The search stops
    /// when `budget` is exceeded, its state limit counting `nodes_before`
    /// plus this search's nodes.
    pub fn new(
        g: &'a Graph<'p, S>,
        cols: &'a Columns,
        out: &'a mut Outcomes,
        budget: &'a Budget,
        nodes_before: u64,
    ) -> Self {
        let n = g.len();
        let mut cta_of = vec![S::EMPTY; n];
        for (i, row) in cta_of.iter_mut().enumerate() {
            for j in 0..n {
                if g.events[i].thread.is_some()
                    && g.events[j].thread.is_some()
                    && g.cta(i) == g.cta(j)
                {
                    *row |= bit(j);
                }
            }
        }
        let mut src_cand = vec![S::EMPTY; n];
        let mut dst_cand = vec![S::EMPTY; n];
        for x in 0..n {
            let e = &g.events[x];
            if !e.is_mem() || e.thread.is_none() || e.proxy == Proxy::Generic {
                continue;
            }
            for (f, role) in g.proxy_role.iter().enumerate() {
                let Some(role) = role else { continue };
                if role.proxy == Some(e.proxy)
                    && cta_of[x].has(f)
                    && role.space.contains(g.program, e.loc)
                {
                    dst_cand[x] |= bit(f);
                    if role.source_side {
                        src_cand[x] |= bit(f);
                    }
                }
            }
        }
        let mut base = g.po.clone();
        base.union_with(&g.await_edges);
        base.close();
        let mut sc_pairs = Vec::new();
        for a in members(g.fence_sc) {
            for b in members(g.fence_sc) {
                if a < b && g.ms.has(a, b) {
                    sc_pairs.push((a, b));
                }
            }
        }
        let ws_pairs_of = g
            .writes_of
            .iter()
            .map(|&ws| {
                let mut pairs = Vec::new();
                for a in members(ws & !g.inits) {
                    for b in members(ws & !g.inits) {
                        if a < b && g.ms.has(a, b) {
                            pairs.push((a, b));
                        }
                    }
                }
                pairs
            })
            .collect();
        let plain = (0..n).all(|x| {
            let e = &g.events[x];
            !e.is_mem()
                || (e.proxy == Proxy::Generic
                    && (0..n).all(|y| {
                        let f = &g.events[y];
                        !f.is_mem() || f.loc != e.loc || f.va == e.va
                    }))
        });
        let plain_same_loc = plain.then(|| {
            (0..n)
                .map(|x| {
                    let e = &g.events[x];
                    (0..n)
                        .filter(|&y| e.is_mem() && g.events[y].is_mem() && g.events[y].loc == e.loc)
                        .fold(S::EMPTY, |m, y| m | bit(y))
                })
                .collect()
        });
        let mut loc_events = vec![S::EMPTY; g.writes_of.len()];
        for (i, e) in g.events.iter().enumerate() {
            if e.is_mem() {
                loc_events[e.loc] |= bit(i);
            }
        }
        let rmw_events = g
            .rmw
            .pairs()
            .fold(S::EMPTY, |m, (r, w)| m | bit(r) | bit(w));
        let total_loc: Vec<bool> = loc_events
            .iter()
            .map(|&evs| {
                !evs.meets(rmw_events | g.latest)
                    && members(evs).all(|a| (g.ms.row(a) | bit(a)) & evs == evs)
            })
            .collect();
        let total_events = loc_events
            .iter()
            .zip(&total_loc)
            .filter(|(_, t)| **t)
            .fold(S::EMPTY, |m, (&evs, _)| m | evs);
        let read_set = g.reads.iter().fold(S::EMPTY, |m, &r| m | bit(r));
        let writes = g.writes_of.iter().fold(S::EMPTY, |m, &ws| m | ws);
        let same_loc_writes: Vec<S> = (0..n)
            .map(|i| {
                let e = &g.events[i];
                if e.is_mem() {
                    g.writes_of[e.loc]
                } else {
                    S::EMPTY
                }
            })
            .collect();
        let mut co_base = initial_writes_first(g);
        for w in members(writes & !g.inits) {
            // coWW (A1 covers it unless proxies differ).
            co_base.set_row(w, same_loc_writes[w] & g.po_loc.row(w) & g.ms.row(w));
        }
        let po_loc_ms_writes_before: Vec<S> = (0..n)
            .map(|r| {
                members(writes)
                    .filter(|&w| g.po_loc.has(w, r) && g.ms.has(r, w))
                    .fold(S::EMPTY, |m, w| m | bit(w))
            })
            .collect();
        let mbar_rmws = g
            .rmw
            .pairs()
            .filter(|&(_, w)| {
                let e = &g.events[w];
                e.thread
                    .is_some_and(|t| crate::model::ub::is_mbarrier_rmw(g.program, t, e.pc))
            })
            .collect();
        let undefined_steps = (0..n)
            .filter(|&e| {
                let ev = &g.events[e];
                ev.kind == super::graph::Kind::Signal
                    && ev
                        .thread
                        .is_some_and(|t| crate::model::ub::step_ub(g.program, t, ev.pc).is_some())
            })
            .collect();
        let mut race_pairs = Vec::new();
        for x in 0..n {
            for y in x + 1..n {
                if race::conflict(g, x, y) && !g.ms.has(x, y) {
                    race_pairs.push((x, y));
                }
            }
        }
        let same_loc_mem: Vec<S> = (0..n)
            .map(|x| {
                let e = &g.events[x];
                (0..n)
                    .filter(|&y| e.is_mem() && g.events[y].is_mem() && g.events[y].loc == e.loc)
                    .fold(S::EMPTY, |m, y| m | bit(y))
            })
            .collect();
        let generic_same_va: Vec<S> = (0..n)
            .map(|x| {
                let e = &g.events[x];
                if e.proxy != Proxy::Generic {
                    return S::EMPTY;
                }
                members(same_loc_mem[x])
                    .filter(|&y| {
                        let f = &g.events[y];
                        f.proxy == Proxy::Generic && f.va == e.va
                    })
                    .fold(S::EMPTY, |m, y| m | bit(y))
            })
            .collect();
        let mut cands = vec![S::EMPTY; n];
        for &r in &g.reads {
            cands[r] = g.writes_of[g.events[r].loc] & !g.rmw.row(r);
        }
        let po_loc_inv = g.po_loc.inverse();
        let reads_po_loc_before = (0..n).map(|r| po_loc_inv.row(r) & read_set).collect();
        Search {
            g,
            cols,
            all: (0..n).fold(S::EMPTY, |m, i| m | bit(i)),
            loc_events,
            reads_po_loc_before,
            total_loc,
            total_events,
            writes,
            same_loc_writes,
            co_base,
            po_loc_ms_writes_before,
            forced: true,
            plain_same_loc,
            same_loc_mem,
            generic_same_va,
            has_deps: g.dep.pairs().next().is_some(),
            rf: vec![None; n],
            rf_rel: Rel::empty(n),
            scratch: vec![S::EMPTY; n],
            src_cand,
            dst_cand,
            base,
            sc_pairs,
            ws_pairs_of,
            stats: AxStats::default(),
            record: !g.truncated && g.stuck.iter().all(Option::is_none),
            poll: Poll::new(budget),
            nodes_before,
            stopped: None,
            found: false,
            barriers: Default::default(),
            bar_time: None,
            bar_instances: Vec::new(),
            bar_ub: None,
            static_barriers: true,
            forced_reads: false,
            forced_order: true,
            fewest_first: false,
            fewest_scan: true,
            cands,
            pre_choices: Vec::new(),
            alive: Vec::new(),
            pre_planned: false,
            order: g.reads.clone(),
            pre_cb: Vec::new(),
            undefined: None,
            mbar_rmws,
            undefined_steps,
            hunt_undefined: false,
            witness_instances: Vec::new(),
            witness: None,
            race_pairs,
            races: Default::default(),
            fair_forbid: static_forbid(g, Fairness::default()),
            fairness: Fairness::default(),
            chain_len: 0,
            chain_tail: (0..g.writes_of.len()).collect(),
            chain_reads: vec![S::EMPTY; g.writes_of.len()],
            commuting: S::EMPTY,
            plain_reads: vec![S::EMPTY; g.writes_of.len()],
            read_half: Vec::new(),
            ascending_only: Vec::new(),
            descents: vec![0; g.writes_of.len()],
            lesser_twins: Vec::new(),
            out,
        }
    }

    /// Which writes spinning reads must eventually see (`docs/loops.md`,
    /// "Fairness").
    pub fn fairness(mut self, f: Fairness) -> Self {
        self.fairness = f;
        self.fair_forbid = static_forbid(self.g, f);
        self
    }

    /// Under morally strong fairness, the spinning loads whose fairness
    /// depends on causality (`fair_forbid` grows in `co_start`).
    fn fair_loads(&self) -> S {
        let g = self.g;
        if self.fairness != Fairness::MorallyStrong {
            return S::EMPTY;
        }
        members(g.latest & g.spin_iter)
            .filter(|&r| fair_load(g, r))
            .fold(S::EMPTY, |m, r| m | bit(r))
    }

    /// The writes of spinning load `r`'s location that causally precede the
    /// copy `r'` of `r` in the next iteration of its loop, given the
    /// closures `cl` and observation `obs` of the current candidate: `r'` is
    /// program-order after the iteration's last event `last`, so base
    /// causality reaches it from whatever reaches `last` (base causality
    /// contains program order), and the proxy rules of [`Search::cause`]
    /// apply to `r'` as to `r`. Repeating the iteration adds exactly these
    /// edges into the spinning thread: a write among them that `r`'s source
    /// precedes in coherence would put `fr(r', x) ; cause(x, r')` in the
    /// repeated execution (A6).
    fn next_copy_causes(&self, cl: &Closures<S>, obs: &Rel<S>, r: usize) -> S {
        let g = self.g;
        let b = &g.events[r];
        let Some(last) = b.thread.and_then(|t| g.spin_last[t]) else {
            return S::EMPTY;
        };
        let ppcb = |z: usize| -> bool {
            let a = &g.events[z];
            if !a.is_mem() || a.thread.is_none() || a.loc != b.loc {
                return false;
            }
            let c = &cl.by_sig[cl.sig_of[z]];
            let reaches = |y: usize| y == last || c.has(y, last);
            if !reaches(z) {
                return false;
            }
            let src = if a.proxy == Proxy::Generic {
                bit(z)
            } else {
                c.row(z) & self.src_cand[z]
            };
            // As in `cause`: the segments from Src(z), through an alias fence,
            // to Dst(r'), each strictly after the one before. `via`: the
            // events whose strict successors form the segment's end set.
            let src_reach = members(src).fold(S::EMPTY, |acc, s| acc | c.row(s));
            let alias_via = src_reach & g.alias_fences;
            // Dst(r'): r' itself if generic (reached from `via` when some
            // member reaches `last`), else the proxy fences of its proxy in
            // its CTA before it.
            let hits = |via: S| {
                if b.proxy == Proxy::Generic {
                    members(via).any(reaches)
                } else {
                    let end = members(via).fold(S::EMPTY, |acc, u| acc | c.row(u));
                    members(self.dst_cand[r])
                        .filter(|&d| reaches(d))
                        .any(|d| end.has(d))
                }
            };
            if a.va == b.va {
                (a.proxy == Proxy::Generic && b.proxy == Proxy::Generic)
                    || (a.proxy == b.proxy && g.cta(z) == g.cta(r))
                    || hits(src)
            } else {
                hits(alias_via)
            }
        };
        let mut out = S::EMPTY;
        for x in members(g.writes_of[b.loc]) {
            if ppcb(x) || members(obs.row(x)).any(ppcb) {
                out |= bit(x);
            }
        }
        out
    }

    /// With `on` false, the search adds only A1's coherence edges to the
    /// least coherence and searches every location's orders: the oracle as
    /// it was before forced edges and total locations, kept to check them.
    pub fn forced_coherence(mut self, on: bool) -> Self {
        self.forced = on;
        if !on {
            self.co_base = initial_writes_first(self.g);
            self.total_loc.iter_mut().for_each(|t| *t = false);
            self.total_events = S::EMPTY;
        }
        self
    }

    /// Bind the read halves of RMWs on the locations `counter` marks
    /// (`ax::counters`) before every other read, keeping program order
    /// within each group (`docs/oracle.md`, "Spinning on a counter"). The
    /// values a counter's writes hold are known once its chain is bound, so
    /// a read that must return one value (a spin's exit) is pruned as soon
    /// as it is bound, instead of at the leaf. Reads-from enumerates the
    /// same assignments in another order, and every check of
    /// [`Search::partial_ok`] is monotone in the reads bound, so the
    /// consistent executions, and the final states, are the same.
    pub fn chains_first(mut self, counter: &[bool]) -> Self {
        let g = self.g;
        let first = |r: &usize| g.rmw.row(*r) != S::EMPTY && counter[g.events[*r].loc];
        let (mut front, back): (Vec<usize>, Vec<usize>) = self.order.iter().partition(|r| first(r));
        front.extend(back);
        self.order = front;
        self
    }

    /// With the chains bound first ([`Search::chains_first`]): bind each
    /// counter's RMW chain position by position from its initial write, and
    /// leave out every chain in which two *commuting* additions stand in
    /// descending order while no read but the later one's reads the
    /// earlier one's write (`docs/oracle.md`, "Commuting additions"). Swapping
    /// two such neighbours gives a consistent execution with the same final
    /// state, races and undefined steps, so every outcome keeps a canonical
    /// witness. Only for the outcome search (a search of stuck paths keeps
    /// every chain, so that its first hang is the same).
    pub fn commute_chains(mut self, counter: &[bool]) -> Self {
        let g = self.g;
        if g.truncated || g_has_stuck(g) {
            return self;
        }
        let nlocs = g.writes_of.len();
        let front: Vec<usize> = self
            .order
            .iter()
            .copied()
            .take_while(|&r| g.rmw.row(r) != S::EMPTY && counter[g.events[r].loc])
            .collect();
        // A location's chain is bound by position only when every write of
        // it is the write half of one of these RMWs: then Atomicity (every
        // pair morally strong) makes the writes one chain from the initial
        // write, and the positions enumerate every candidate that can be
        // consistent.
        let mut chain_reads = vec![S::EMPTY; nlocs];
        let mut chain_writes = vec![S::EMPTY; nlocs];
        for &r in &front {
            let l = g.events[r].loc;
            chain_reads[l] |= bit(r);
            chain_writes[l] |= g.rmw.row(r);
        }
        let whole: Vec<bool> = (0..nlocs)
            .map(|l| chain_reads[l] != S::EMPTY && g.writes_of[l] & !g.inits == chain_writes[l])
            .collect();
        let (mut chained, rest): (Vec<usize>, Vec<usize>) =
            front.iter().partition(|&&r| whole[g.events[r].loc]);
        chained.sort_by_key(|&r| g.events[r].loc); // stable: program order within
        self.chain_len = chained.len();
        let back = self.order[front.len()..].to_vec();
        self.order = chained;
        self.order.extend(rest);
        self.order.extend(back);
        for l in 0..nlocs {
            if !whole[l] {
                chain_reads[l] = S::EMPTY;
            }
        }
        self.chain_reads = chain_reads;
        let rmw_reads = g.rmw.pairs().fold(S::EMPTY, |m, (r, _)| m | bit(r));
        self.read_half = vec![None; g.len()];
        for (r, w) in g.rmw.pairs() {
            self.read_half[w] = Some(r);
        }
        for &r in &g.reads {
            let l = g.events[r].loc;
            if !rmw_reads.has(r) {
                self.plain_reads[l] |= bit(r);
            }
        }
        let ap_tails = g.ap.pairs().fold(S::EMPTY, |m, (_, t)| m | bit(t));
        let await_targets = g.await_edges.pairs().fold(S::EMPTY, |m, (_, t)| m | bit(t));
        let cond = g.cond_reads.iter().fold(S::EMPTY, |m, (c, _)| m | bit(*c));
        for l in 0..nlocs {
            for r in members(self.chain_reads[l]) {
                if commutes(g, r, ap_tails | await_targets | cond) {
                    self.commuting |= bit(r);
                }
            }
        }
        self.ascending_only = (0..nlocs)
            .map(|l| {
                self.chain_reads[l] != S::EMPTY
                    && self.chain_reads[l] & !self.commuting == S::EMPTY
                    && final_only(g, l, self.chain_reads[l], self.plain_reads[l])
            })
            .collect();
        self
    }

    /// With the chains bound by position ([`Search::commute_chains`]): of
    /// the commuting additions of twin adders (`rep[t]`: the least twin of
    /// thread `t`, [`super::twins::classes`]), try at each position only
    /// the least one still unplaced (`docs/oracle.md`, "Interchangeable
    /// adders"): exchanging two twins maps a consistent execution to one
    /// with the same final state, races and undefined steps, and fixes
    /// every chain prefix that places neither.
    pub fn twin_adders(mut self, rep: &[usize]) -> Self {
        let g = self.g;
        if self.chain_len == 0 || rep.iter().enumerate().all(|(t, &r)| r == t) {
            return self;
        }
        let mut lesser = vec![S::EMPTY; g.len()];
        let mut any = false;
        for l in 0..self.chain_reads.len() {
            let reads = self.chain_reads[l] & self.commuting;
            for rb in members(reads) {
                let Some(tb) = g.events[rb].thread else {
                    continue;
                };
                for ra in members(reads) {
                    let Some(ta) = g.events[ra].thread else {
                        continue;
                    };
                    if ra < rb && ta != tb && rep[ta] == rep[tb] {
                        lesser[rb] |= bit(ra);
                        any = true;
                    }
                }
            }
        }
        if any {
            self.lesser_twins = lesser;
        }
        self
    }

    /// Whether write `w` of location `l` may still be read by a read that
    /// is not an RMW's: one reads it already, or one is unbound and its
    /// thread's branch outcomes do not fail when it reads `w`.
    fn may_be_read(&mut self, w: usize, l: usize) -> bool {
        for q in members(self.plain_reads[l]) {
            match self.rf[q] {
                Some(src) if src == w => return true,
                Some(_) => continue,
                None => {}
            }
            let t = self.g.events[q].thread.unwrap();
            self.rf[q] = Some(w);
            let ok = self.g.constraints.iter().all(|(u, c)| {
                *u != t
                    || match (
                        self.g.eval(&self.rf, *u, &c.a),
                        self.g.eval(&self.rf, *u, &c.b),
                    ) {
                        (Some(a), Some(b)) => c.cmp.holds(a, b) == c.holds,
                        _ => true,
                    }
            });
            self.rf[q] = None;
            if ok {
                return true;
            }
        }
        false
    }

    /// Whether binding `rb` (a chain's read half) to the write `tail` puts
    /// two commuting additions next to each other in descending order
    /// (whether a read tells them apart is the caller's question).
    fn descending(&self, tail: usize, rb: usize) -> bool {
        if !self.commuting.has(rb) {
            return false;
        }
        let Some(ra) = self.read_half[tail] else {
            return false; // the initial write
        };
        self.commuting.has(ra) && rb < ra
    }

    /// Every descent of commuting additions in the chains is told apart by
    /// a read (all reads bound).
    fn chains_canonical(&self) -> bool {
        for l in 0..self.chain_reads.len() {
            for rb in members(self.chain_reads[l] & self.commuting) {
                let Some(tail) = self.rf[rb] else { continue };
                if self.descending(tail, rb)
                    && !members(self.plain_reads[l]).any(|q| self.rf[q] == Some(tail))
                {
                    return false;
                }
            }
        }
        true
    }

    /// Reads-from for the chain position `k` (`k < chain_len`): which of the
    /// location's unbound RMWs reads the chain's last write.
    fn chain_step(&mut self, k: usize) {
        let g = self.g;
        let loc = g.events[self.order[k]].loc;
        let tail = self.chain_tail[loc];
        let unbound: Vec<usize> = members(self.chain_reads[loc])
            .filter(|&r| self.rf[r].is_none())
            .collect();
        let least = unbound.first().copied();
        let unbound_set = unbound.iter().fold(S::EMPTY, |m, &r| m | bit(r));
        for &rb in &unbound {
            if self.ascending_only[loc] && Some(rb) != least {
                self.stats.pruned_commuted += 1;
                continue;
            }
            // A lesser twin still unplaced: its exchange with `rb`'s thread
            // is tried instead (`twin_adders`).
            if self
                .lesser_twins
                .get(rb)
                .is_some_and(|m| *m & unbound_set != S::EMPTY)
            {
                self.stats.pruned_commuted += 1;
                continue;
            }
            // Every descent needs its own read of the write before it, and
            // when every addition commutes, an unbound one below `rb` means
            // one more descent later.
            let down = self.descending(tail, rb);
            let later = self.chain_reads[loc] & !self.commuting == S::EMPTY
                && unbound.iter().any(|&r| r < rb);
            let need = self.descents[loc] + usize::from(down) + usize::from(later);
            if need > members(self.plain_reads[loc]).count() {
                self.stats.pruned_commuted += 1;
                continue;
            }
            if down && !self.may_be_read(tail, loc) {
                self.stats.pruned_commuted += 1;
                continue;
            }
            let wb = members(g.rmw.row(rb)).next().unwrap();
            self.rf[rb] = Some(tail);
            self.rf_rel.add(tail, rb);
            self.chain_tail[loc] = wb;
            self.descents[loc] += usize::from(down);
            if self.pre_planned {
                let alive = self.alive_after(rb);
                if !alive.is_empty() {
                    let before = std::mem::replace(&mut self.alive, alive);
                    self.rf_step(k + 1);
                    self.alive = before;
                }
            } else if self.partial_ok(rb, k + 1 == self.order.len()) {
                self.rf_step(k + 1);
            }
            self.chain_tail[loc] = tail;
            self.descents[loc] -= usize::from(down);
            self.rf_rel
                .set_row(tail, self.rf_rel.row(tail) & !S::bit(rb));
            self.rf[rb] = None;
            if self.stop() {
                return;
            }
        }
    }

    /// Count a node and poll the budget.
    fn tick(&mut self) {
        self.stats.nodes += 1;
        if self.stopped.is_none() {
            self.stopped = self.poll.step().or_else(|| {
                self.poll
                    .budget()
                    .states_exceeded(self.nodes_before + self.stats.nodes)
            });
        }
    }

    /// Poll the budget from a loop inside one node; true if the search must stop.
    fn poll(&mut self) -> bool {
        if self.stopped.is_none() {
            self.stopped = self.poll.step();
        }
        self.stopped.is_some()
    }

    /// Run the whole search. For a skeleton cut at the loop bound, stop at
    /// the first consistent execution (its outcome is not a final state).
    pub fn run(&mut self) -> Found {
        self.stats.path_combinations += 1;
        if self.static_barriers && !self.plan_barriers_first() {
            return Found { any: false };
        }
        self.rf_step(0);
        Found { any: self.found }
    }

    /// Under the ISA reading, when every barrier arrival's name and count
    /// are constants on its path, the phases the arrivals can form do not
    /// depend on reads-from (`ax::barriers::isa_choices` reads `rf` only to
    /// evaluate those): plan them once, before reads-from, so that each
    /// read is checked against every plan still standing and a read that
    /// breaks all of them is rejected at once (`docs/oracle.md`, "Barrier
    /// phases before reads-from"). False if no plan exists (a deadlock:
    /// the skeleton has no consistent execution) or the budget ran out.
    fn plan_barriers_first(&mut self) -> bool {
        let g = self.g;
        if self.barriers != crate::model::barrier::Reading::Isa || g.barriers.is_empty() {
            return true;
        }
        let none = vec![None; g.len()];
        let constant = g.barriers.iter().all(|b| {
            let t = g.events[b.arrive].thread.unwrap();
            b.id.iter().all(|e| g.eval(&none, t, e).is_some())
                && b.count
                    .as_ref()
                    .is_none_or(|c| g.eval(&none, t, c).is_some())
        });
        if !constant {
            return true;
        }
        let mut stop = || self.poll.step().is_some();
        let choices = super::barriers::isa_choices(g, &none, &mut stop);
        if self.poll() {
            return false;
        }
        let Some(choices) = choices else {
            self.stats.pruned_deadlock += 1;
            return false;
        };
        self.pre_cb = choices
            .iter()
            .map(|c| {
                let mut cb = self.base.clone();
                cb.union_with(&c.sync);
                cb.close();
                cb
            })
            .collect();
        self.alive = (0..choices.len()).collect();
        self.pre_choices = choices;
        self.pre_planned = true;
        true
    }

    fn stop(&self) -> bool {
        self.stopped.is_some() || (self.found && !self.record && !self.hunt_undefined)
    }

    // ---- step 1: reads-from ----------------------------------------------

    fn rf_step(&mut self, k: usize) {
        self.tick();
        if self.stop() {
            return;
        }
        if k < self.chain_len {
            return self.chain_step(k);
        }
        let Some(&r) = self.order.get(k) else {
            if self.commuting != S::EMPTY && !self.chains_canonical() {
                self.stats.pruned_commuted += 1;
                return;
            }
            self.stats.rf_candidates += 1;
            return self.barrier_step();
        };
        // Forced reads first: bind a read with one candidate left before
        // the read the fixed order names, and drop the node if some read
        // has none left.
        let mut swapped = None;
        let mut r = r;
        if self.forced_reads
            && self.forced_order
            && self.fewest_first
            && !self.pre_planned
            && k + 1 < self.order.len()
        {
            return self.fewest_step(k);
        }
        if self.forced_reads && !self.pre_planned && k + 1 < self.order.len() {
            match self.forced_read(k) {
                Forced::Dead => return,
                Forced::At(j) => {
                    self.order.swap(k, j);
                    swapped = Some(j);
                    r = self.order[k];
                }
                Forced::Free => {}
            }
        }
        let loc = self.g.events[r].loc;
        for w in members(self.g.writes_of[loc]) {
            if self.g.rmw.has(r, w) {
                continue; // an RMW does not read its own write
            }
            self.rf[r] = Some(w);
            self.rf_rel.add(w, r);
            if self.pre_planned {
                let alive = self.alive_after(r);
                if !alive.is_empty() {
                    let before = std::mem::replace(&mut self.alive, alive);
                    self.rf_step(k + 1);
                    self.alive = before;
                }
            } else if self.partial_ok(r, k + 1 == self.order.len()) {
                self.rf_step(k + 1);
            }
            self.rf_rel.set_row(w, self.rf_rel.row(w) & !S::bit(r));
            self.rf[r] = None;
            if self.stop() {
                break;
            }
        }
        if let Some(j) = swapped {
            self.order.swap(k, j);
        }
    }

    /// [`Search::rf_step`] at a node with at least two reads not bound,
    /// with fewest candidates first ([`Search::fewest_first`]): narrow each
    /// read's kept candidates ([`Search::narrow`]), drop the node if one
    /// has none, else bind the read it picks to each of its candidates —
    /// exactly the writes the checks of [`Search::partial_ok`] accept at
    /// this node, so they are not checked again.
    fn fewest_step(&mut self, k: usize) {
        let kept = self.cands.clone();
        let Some(j) = self.narrow(k) else {
            self.cands = kept;
            return;
        };
        self.order.swap(k, j);
        let r = self.order[k];
        for w in members(self.cands[r]) {
            self.rf[r] = Some(w);
            self.rf_rel.add(w, r);
            self.rf_step(k + 1);
            self.rf_rel.set_row(w, self.rf_rel.row(w) & !S::bit(r));
            self.rf[r] = None;
            if self.stop() {
                break;
            }
        }
        self.order.swap(k, j);
        self.cands = kept;
    }

    /// Re-check the kept candidates of the reads not bound yet
    /// (`order[k..]`, in order) with the reads bound so far, keeping those
    /// [`Search::partial_ok`] accepts: `None` if some read has none left
    /// (no extension of this node is consistent) or the budget ran out;
    /// else the index of the read to bind next — the first with exactly
    /// one candidate (the scan stops there; reads after it keep their
    /// supersets), or, when none has one, the one with the fewest (the
    /// first of those). The checks are monotone in the reads bound, so a
    /// write rejected here stays rejected below, and the order of binding
    /// changes no complete assignment the search accepts (`docs/oracle.md`,
    /// "Fewest candidates first"). The counters count the rejections of
    /// the read it returns (or of the read left with none), as the plain
    /// loop over one read's writes does; the other trial checks leave them
    /// as they were.
    fn narrow(&mut self, k: usize) -> Option<usize> {
        let saved = self.stats;
        let mut counted = saved;
        let mut best: Option<(usize, u32)> = None;
        let mut out = None;
        let mut scan: Vec<usize> = (k..self.order.len()).collect();
        if self.fewest_scan {
            // Reads with few kept candidates are the likely forced ones:
            // meet them first (the choice below is unchanged when no read
            // is forced, see `best`).
            scan.sort_by_key(|&j| (self.cands[self.order[j]].count(), self.order[j]));
        }
        'reads: for j in scan {
            self.stats = saved;
            let r = self.order[j];
            let mut keep = S::EMPTY;
            let mut n = 0u32;
            for w in members(self.cands[r]) {
                if self.poll() {
                    best = None;
                    break 'reads;
                }
                self.rf[r] = Some(w);
                self.rf_rel.add(w, r);
                let ok = self.partial_ok(r, false);
                self.rf_rel.set_row(w, self.rf_rel.row(w) & !S::bit(r));
                self.rf[r] = None;
                if ok {
                    keep |= bit(w);
                    n += 1;
                }
            }
            self.cands[r] = keep;
            match n {
                0 => {
                    best = None;
                    counted = self.stats;
                    break;
                }
                1 => {
                    out = Some(j);
                    counted = self.stats;
                    break;
                }
                // Among the fewest: with the sorted scan the least event
                // (a tie-break that does not depend on the order the
                // swaps above left), else the first in that order.
                _ if best.is_none_or(|(bj, m)| {
                    if self.fewest_scan {
                        (n, r) < (m, self.order[bj])
                    } else {
                        n < m
                    }
                }) =>
                {
                    best = Some((j, n));
                    counted = self.stats;
                }
                _ => {}
            }
        }
        self.stats = counted;
        out.or(best.map(|(j, _)| j))
    }

    /// Among the reads not bound yet (`order[k..]`, scanned in order), the
    /// first that has at most one candidate write the checks of
    /// [`Search::partial_ok`] accept with the reads bound so far: `Dead`
    /// if it has none (no extension of this node is consistent), `At` its
    /// index if it has one (only with `forced_order`), `Free` otherwise.
    /// The checks are monotone in the reads bound, so which read is bound
    /// next changes no complete assignment the search accepts, only how
    /// soon a dead prefix is cut (`docs/oracle.md`, "Forced reads first").
    /// The trial checks leave the counters as they were.
    fn forced_read(&mut self, k: usize) -> Forced {
        let saved = self.stats;
        let mut out = Forced::Free;
        'reads: for j in k..self.order.len() {
            let r = self.order[j];
            let loc = self.g.events[r].loc;
            let mut alive = 0;
            for w in members(self.g.writes_of[loc]) {
                if self.g.rmw.has(r, w) {
                    continue;
                }
                // Every read against every write is a long loop inside one
                // node: the limits must stop it (found by the mutation
                // campaign: `fix --timeout 0.5` ran past 10 s).
                if self.poll() {
                    break 'reads;
                }
                self.rf[r] = Some(w);
                self.rf_rel.add(w, r);
                let ok = self.partial_ok(r, false);
                self.rf_rel.set_row(w, self.rf_rel.row(w) & !S::bit(r));
                self.rf[r] = None;
                if ok {
                    alive += 1;
                    if alive > 1 || !self.forced_order {
                        continue 'reads;
                    }
                }
            }
            out = if alive == 0 {
                Forced::Dead
            } else {
                Forced::At(j)
            };
            break;
        }
        self.stats = saved;
        out
    }

    /// Checks that only get harder as more reads are fixed. After the last
    /// read (`last`), when neither barriers nor Fence-SC orientations come
    /// between, the coherence step makes the same relational checks at once:
    /// only the checks it does not repeat are made here.
    fn partial_ok(&mut self, r: usize, last: bool) -> bool {
        if !self.rmw_reads_ok(r) {
            self.stats.pruned_atomicity += 1;
            return false;
        }
        if !self.constraints_hold(false) {
            self.stats.pruned_values += 1;
            return false;
        }
        // rf alone (write → read) has no cycle: only dependencies can close
        // one, and only through the edge just added (`thin_air_from`).
        if self.has_deps && self.thin_air_from(r) {
            self.stats.pruned_thin_air += 1;
            return false;
        }
        if last && self.sc_pairs.is_empty() && self.g.barriers.is_empty() {
            return true;
        }
        let obs = self.obs();
        let sw = self.sw_ra(&obs);
        let cb = self.cb(&sw, None);
        if !cb.closed_is_acyclic() {
            self.stats.pruned_cb_cycle += 1;
            return false;
        }
        let cause = self.cause(&cb, &sw, None, &obs);
        if !self.causality_ok(&cause, None, self.all) {
            self.stats.pruned_causality += 1;
            return false;
        }
        // The coherence every completion must contain already breaks A3, A5
        // or A6 for the reads bound so far: no completion can repair it.
        let Some(co) = self.min_co(&cause) else {
            self.stats.pruned_coherence += 1;
            return false;
        };
        self.co_consistent(&co, &cause, self.all)
    }

    /// Whether `rf ∪ dep` has a cycle, `r` being the read bound last. Every
    /// read bound before it was bound only after this check passed (here
    /// or in [`Search::alive_after`]), so `rf ∪ dep` without `r`'s edge is
    /// acyclic and a cycle must go through that edge `w → r`: it exists
    /// exactly when `r` reaches `w` (a path from `r` to `w` that used the
    /// edge would have reached `w` before it). A search from `r` instead of
    /// a cycle search over every event (`rel::rows_have_cycle` was an
    /// eighth of the oracle's time on the TMA pipeline).
    fn thin_air_from(&self, r: usize) -> bool {
        let Some(w) = self.rf[r] else {
            return false;
        };
        let mut rd = self.rf_rel.clone();
        rd.union_with(&self.g.dep);
        debug_assert_eq!(
            rd.reaches(r, w),
            rd.has_cycle(),
            "rf ∪ dep was acyclic before r's edge"
        );
        rd.reaches(r, w)
    }

    /// With the barrier phases planned first: the plans among `alive` that
    /// the reads bound so far (the last being `r`) leave consistent. Each
    /// plan's synchronisation edges join base causality and its order in
    /// time joins retirement order, and the checks of
    /// [`Search::partial_ok`] are made with them: relations only grow as
    /// more reads are bound and as Fence-SC orientations are added, so a
    /// plan rejected here is rejected at every leaf below (where the same
    /// checks are made with the full reads-from).
    fn alive_after(&mut self, r: usize) -> Vec<usize> {
        if !self.rmw_reads_ok(r) {
            self.stats.pruned_atomicity += 1;
            return Vec::new();
        }
        if !self.constraints_hold(false) {
            self.stats.pruned_values += 1;
            return Vec::new();
        }
        if self.has_deps && self.thin_air_from(r) {
            self.stats.pruned_thin_air += 1;
            return Vec::new();
        }
        let obs = self.obs();
        let sw = self.sw_ra(&obs);
        let mut out = Vec::new();
        for i in self.alive.clone() {
            if self.poll() {
                return Vec::new();
            }
            let cb = self.pre_cb_with(i, &sw);
            let c = &self.pre_choices[i];
            if !cb.closed_is_acyclic() || !time_acyclic(&cb, &c.time) {
                self.stats.pruned_cb_cycle += 1;
                continue;
            }
            let sync = c.sync.clone();
            let cause = self.cause(&cb, &sw, Some(&sync), &obs);
            if !self.causality_ok(&cause, None, self.all) {
                self.stats.pruned_causality += 1;
                continue;
            }
            let Some(co) = self.min_co(&cause) else {
                self.stats.pruned_coherence += 1;
                continue;
            };
            if self.co_consistent(&co, &cause, self.all) {
                out.push(i);
            }
        }
        out
    }

    /// Base causality under plan `i` of `pre_choices` with `sw_ra`: its
    /// closed static part with `sw_ra`'s edges added (the same relation as
    /// [`Search::cb`] with the plan's edges as `extra`).
    fn pre_cb_with(&self, i: usize, sw_ra: &Rel<S>) -> Rel<S> {
        let mut cb = self.pre_cb[i].clone();
        for (a, b) in sw_ra.pairs() {
            if !cb.has(a, b) {
                cb.add_closed(a, b);
            }
        }
        cb
    }

    /// Atomicity, decided by reads-from alone: two RMWs that read the same
    /// write `src`, when all of them are morally strong with each other,
    /// cannot both be atomic. `src` is coherence-before both writes (the other
    /// orientation closes an SC-per-location cycle through the RMW's own read),
    /// the two writes are ordered one way or the other, and either way one
    /// lies between the other's read and write. Without moral strength to
    /// `src`, coherence may leave `src` unordered and both may stand.
    fn rmw_reads_ok(&self, r: usize) -> bool {
        let g = self.g;
        let Some(w) = members(g.rmw.row(r)).next() else {
            return true;
        };
        let Some(src) = self.rf[r] else {
            return true;
        };
        if !(g.ms.has(src, r) && g.ms.has(src, w)) {
            return true;
        }
        g.reads.iter().all(|&r2| {
            if r2 == r || self.rf[r2] != Some(src) {
                return true;
            }
            let Some(w2) = members(g.rmw.row(r2)).next() else {
                return true;
            };
            !(g.ms.has(w, w2)
                && g.ms.has(r, w2)
                && g.ms.has(r2, w)
                && g.ms.has(src, r2)
                && g.ms.has(src, w2))
        })
    }

    /// Branch outcomes assumed by the paths; `complete` requires every one to be decidable.
    fn constraints_hold(&self, complete: bool) -> bool {
        self.g.constraints.iter().all(|(t, c)| {
            match (
                self.g.eval(&self.rf, *t, &c.a),
                self.g.eval(&self.rf, *t, &c.b),
            ) {
                (Some(a), Some(b)) => c.cmp.holds(a, b) == c.holds,
                _ => !complete,
            }
        })
    }

    // ---- derived relations ----------------------------------------------

    /// Observation: `(ms ∩ rf) ; (rmw ; (ms ∩ rf))*`.
    fn obs(&self) -> Rel<S> {
        let msrf = self.g.ms.intersect(&self.rf_rel);
        if self.g.rmw.pairs().next().is_none() {
            return msrf; // no RMW to chain through
        }
        let step = self.g.rmw.compose(&msrf).closure();
        let mut obs = msrf.compose(&step);
        obs.union_with(&msrf);
        obs
    }

    /// Release/acquire synchronisation: `ms ∩ (RP ; obs ; AP)`.
    fn sw_ra(&self, obs: &Rel<S>) -> Rel<S> {
        let g = self.g;
        let rp_obs = g.rp.compose(obs);
        if g.cond_reads.is_empty() {
            return rp_obs.compose(&g.ap).intersect(&g.ms);
        }
        // An mbarrier wait is an acquire read only when it succeeds.
        let mut ap = g.ap.clone();
        for (c, done) in &g.cond_reads {
            let e = &g.events[*c];
            if !e.sem.is_acquire() {
                continue;
            }
            let t = e.thread.unwrap();
            if g.eval(&self.rf, t, done).is_some_and(|v| v != 0) {
                ap.add(*c, *c);
                for &r in &g.reads {
                    let er = &g.events[r];
                    if g.po_loc.has(r, *c) && er.is_strong() && !er.red {
                        ap.add(r, *c);
                    }
                }
            }
        }
        rp_obs.compose(&ap).intersect(&g.ms)
    }

    /// Base causality `(po ∪ sw)+`, closed (every synchronisation edge in
    /// full: the order in which the machine retires events).
    fn cb(&self, sw_ra: &Rel<S>, extra: Option<&Rel<S>>) -> Rel<S> {
        // The static part is closed already and the synchronisation edges
        // are few: adding them one by one, closed, is a row pass each where
        // closing the union is a pass per event.
        let mut cb = self.base.clone();
        let new: Vec<(usize, usize)> = std::iter::once(sw_ra)
            .chain(extra)
            .flat_map(|r| r.pairs())
            .filter(|&(a, b)| !cb.has(a, b))
            .collect();
        // A complete barrier phase of `k` threads brings `k²` edges: past
        // one edge per event, one closure of the union costs less than a
        // row pass per edge (the closure is the same either way).
        if new.len() > self.g.len() {
            for (a, b) in new {
                cb.add(a, b);
            }
            cb.close();
            return cb;
        }
        for (a, b) in new {
            if !cb.has(a, b) {
                cb.add_closed(a, b);
            }
        }
        cb
    }

    /// Base causality per signature of origins, when some synchronising
    /// release head is restricted; `cb` itself serves every origin otherwise.
    fn closures(&self, cb: &Rel<S>, sw_ra: &Rel<S>, extra: Option<&Rel<S>>) -> Closures<S> {
        let g = self.g;
        let n = g.len();
        let heads: Vec<(usize, S)> = g
            .restricted
            .iter()
            .filter(|(h, _)| !sw_ra.row(*h).is_empty())
            .copied()
            .collect();
        if heads.is_empty() {
            return Closures {
                by_sig: vec![cb.clone()],
                sig_of: vec![0; n],
            };
        }
        let mut sigs: Vec<u64> = Vec::new();
        let mut by_sig = Vec::new();
        let mut sig_of = vec![0; n];
        for (x, slot) in sig_of.iter_mut().enumerate() {
            let sig = heads
                .iter()
                .enumerate()
                .fold(0u64, |s, (k, (_, m))| if m.has(x) { s | 1 << k } else { s });
            *slot = match sigs.iter().position(|&s| s == sig) {
                Some(i) => i,
                None => {
                    let mut sw = sw_ra.clone();
                    for (k, (h, _)) in heads.iter().enumerate() {
                        if sig & (1 << k) == 0 {
                            sw.set_row(*h, S::EMPTY);
                        }
                    }
                    by_sig.push(self.cb(&sw, extra));
                    sigs.push(sig);
                    sigs.len() - 1
                }
            };
        }
        Closures { by_sig, sig_of }
    }

    /// Causality `ppcb ∪ obs;ppcb`, with proxy-preserved base causality
    /// (digest §3.5): every segment of the chain from X to Y (through its
    /// source-side fence, an alias fence, its destination-side fence) is taken
    /// in the base causality of X's signature.
    fn cause(&self, cb: &Rel<S>, sw_ra: &Rel<S>, extra: Option<&Rel<S>>, obs: &Rel<S>) -> Rel<S> {
        let g = self.g;
        let n = g.len();
        let cl = self.closures(cb, sw_ra, extra);
        let mut ppcb = Rel::empty(n);
        if let (Some(same), [c]) = (&self.plain_same_loc, cl.by_sig.as_slice()) {
            for (x, &m) in same.iter().enumerate() {
                if g.events[x].thread.is_some() {
                    ppcb.set_row(x, c.row(x) & m);
                }
            }
            let mut cause = obs.compose(&ppcb);
            cause.union_with(&ppcb);
            return cause;
        }
        for x in 0..n {
            let a = &g.events[x];
            if !a.is_mem() || a.thread.is_none() {
                continue;
            }
            let c = &cl.by_sig[cl.sig_of[x]];
            // Between generic accesses through one address the proxy rules
            // below always hold: take those pairs as a row, and check the
            // others (other proxies, aliases) pair by pair.
            let reach = c.row(x) & self.same_loc_mem[x];
            let easy = reach & self.generic_same_va[x];
            ppcb.set_row(x, easy);
            let rest = reach & !easy;
            if rest.is_empty() {
                continue;
            }
            // Src(X): X if generic, else proxy fences of X's proxy in X's CTA after X.
            let src = if a.proxy == Proxy::Generic {
                bit(x)
            } else {
                c.row(x) & self.src_cand[x]
            };
            let src_reach = members(src).fold(S::EMPTY, |acc, s| acc | c.row(s));
            let alias_reach =
                members(src_reach & g.alias_fences).fold(S::EMPTY, |acc, f| acc | c.row(f));
            for y in members(rest) {
                let b = &g.events[y];
                // Dst(Y): Y if generic, else proxy fences of Y's proxy in Y's CTA before Y.
                let dst = if b.proxy == Proxy::Generic {
                    bit(y)
                } else {
                    members(self.dst_cand[y])
                        .filter(|&d| c.has(d, y))
                        .fold(S::EMPTY, |acc, d| acc | bit(d))
                };
                let ok = if a.va == b.va {
                    (a.proxy == Proxy::Generic && b.proxy == Proxy::Generic)
                        || (a.proxy == b.proxy && g.cta(x) == g.cta(y))
                        || src_reach.meets(dst)
                } else {
                    alias_reach.meets(dst)
                };
                if ok {
                    ppcb.add(x, y);
                }
            }
        }
        let mut cause = obs.compose(&ppcb);
        cause.union_with(&ppcb);
        cause
    }

    /// A6 for the reads among `within`: no read reads from a write it
    /// causally precedes; with `co`, no read reads from a write
    /// coherence-before one that causally precedes it.
    fn causality_ok(&self, cause: &Rel<S>, co: Option<&Rel<S>>, within: S) -> bool {
        self.g.reads.iter().all(|&r| {
            if !within.has(r) {
                return true;
            }
            let Some(w) = self.rf[r] else { return true };
            if cause.has(r, w) {
                return false;
            }
            match co {
                Some(co) => members(co.row(w)).all(|w2| !cause.has(w2, r)),
                None => true,
            }
        })
    }

    // ---- step 2: barriers -------------------------------------------------

    fn barrier_step(&mut self) {
        if !self.constraints_hold(true) {
            self.stats.pruned_values += 1;
            return;
        }
        if self.barriers == crate::model::barrier::Reading::Isa && !self.g.barriers.is_empty() {
            return self.isa_barrier_step();
        }
        match self.barrier_choices() {
            None => self.stats.pruned_deadlock += 1,
            Some(choices) => {
                let obs = self.obs();
                let sw_ra = self.sw_ra(&obs);
                for bar in choices {
                    let cb = self.cb(&sw_ra, Some(&bar));
                    if !cb.closed_is_acyclic() {
                        // Barriers passed in opposite orders, or a causality cycle.
                        self.stats.pruned_cb_cycle += 1;
                        continue;
                    }
                    let ctx = Ctx {
                        sw_ra: &sw_ra,
                        obs: &obs,
                    };
                    self.sc_step(0, cb, bar, &ctx);
                    if self.stop() {
                        return;
                    }
                }
            }
        }
    }

    /// [`Search::barrier_step`] under the ISA reading: each way the arrivals
    /// form phases (`ax::barriers`), with base causality and the phases'
    /// order in time acyclic together.
    fn isa_barrier_step(&mut self) {
        let g = self.g;
        let choices: Vec<(Option<usize>, super::barriers::BarChoice<S>)> = if self.pre_planned {
            // The plans still standing, in the order `isa_choices` gives.
            self.alive
                .iter()
                .map(|&i| (Some(i), self.pre_choices[i].clone()))
                .collect()
        } else {
            let mut stop = || self.poll.step().is_some();
            let choices = super::barriers::isa_choices(g, &self.rf, &mut stop);
            if self.poll() {
                return;
            }
            let Some(choices) = choices else {
                self.stats.pruned_deadlock += 1;
                return;
            };
            choices.into_iter().map(|c| (None, c)).collect()
        };
        let obs = self.obs();
        let sw_ra = self.sw_ra(&obs);
        for (pre, c) in choices {
            let cb = match pre {
                Some(i) => self.pre_cb_with(i, &sw_ra),
                None => self.cb(&sw_ra, Some(&c.sync)),
            };
            if !cb.closed_is_acyclic() || !time_acyclic(&cb, &c.time) {
                self.stats.pruned_cb_cycle += 1;
                continue;
            }
            self.bar_time = Some(c.time);
            self.bar_instances = c.instances;
            self.bar_ub = c.ub;
            let ctx = Ctx {
                sw_ra: &sw_ra,
                obs: &obs,
            };
            self.sc_step(0, cb, c.sync, &ctx);
            self.bar_time = None;
            self.bar_ub = None;
            if self.stop() {
                return;
            }
        }
    }

    /// The barrier instances of the execution found (for its hang's
    /// description): the current choice's phases under the ISA reading.
    pub fn hang_instances(&self) -> Option<Vec<Instance>> {
        match self.barriers {
            crate::model::barrier::Reading::Isa => Some(self.witness_instances.clone()),
            crate::model::barrier::Reading::Dat3m => self.barrier_instances(),
        }
    }

    /// The barrier instances under the reads-from so far; `None` if a
    /// barrier's name is not known yet.
    pub fn barrier_instances(&self) -> Option<Vec<Instance>> {
        let g = self.g;
        // Group arrivals by (gpu, cta, id values), per thread in program order.
        // Each group: its key, and per participating thread its arrivals (indices into g.barriers).
        type Key = (u32, u32, Vec<Value>);
        type Arrivals = Vec<(usize, Vec<usize>)>;
        let mut groups: Vec<(Key, Arrivals)> = Vec::new();
        for (bi, b) in g.barriers.iter().enumerate() {
            let t = g.events[b.arrive].thread.unwrap();
            let id: Option<Vec<Value>> = b.id.iter().map(|e| g.eval(&self.rf, t, e)).collect();
            let (gpu, cta) = g.cta(b.arrive);
            let key = (gpu, cta, id?);
            let gi = match groups.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    groups.push((key, Vec::new()));
                    groups.len() - 1
                }
            };
            let per_thread = &mut groups[gi].1;
            match per_thread.iter_mut().find(|(th, _)| *th == t) {
                Some((_, occ)) => occ.push(bi),
                None => per_thread.push((t, vec![bi])),
            }
        }
        let mut out = Vec::new();
        for ((gpu, cta, id), per_thread) in groups {
            // Without a count, every thread that arrives at this barrier at
            // all takes part, and so does every stuck thread that could
            // still reach it (it never will).
            let waiting = self.stuck_participants(gpu, cta, &id, &per_thread);
            let phases = per_thread.iter().map(|(_, o)| o.len()).max().unwrap_or(0);
            for k in 0..phases {
                let part: Vec<usize> = per_thread
                    .iter()
                    .filter_map(|(_, o)| o.get(k).copied())
                    .collect();
                let counts: Vec<Option<Value>> = part
                    .iter()
                    .map(|&b| {
                        let t = g.events[g.barriers[b].arrive].thread.unwrap();
                        g.barriers[b]
                            .count
                            .as_ref()
                            .map(|c| g.eval(&self.rf, t, c).unwrap_or(-1))
                    })
                    .collect();
                let agree = counts.iter().all(|c| *c == counts[0]);
                let needed = match counts[0] {
                    None => per_thread.len() + waiting,
                    Some(c) => usize::try_from(c).unwrap_or(usize::MAX),
                };
                out.push(Instance {
                    id: id.clone(),
                    count: if agree { counts[0] } else { None },
                    agree,
                    arrivals: part,
                    needed,
                });
            }
        }
        Some(out)
    }

    /// Stuck threads of CTA (`gpu`, `cta`) with no arrival at barrier `id`
    /// that could still reach it from where they are stuck.
    fn stuck_participants(
        &self,
        gpu: u32,
        cta: u32,
        id: &[Value],
        arrived: &[(usize, Vec<usize>)],
    ) -> usize {
        let g = self.g;
        let p = g.program;
        (0..g.stuck.len())
            .filter(|&u| {
                let Some(sp) = &g.stuck[u] else { return false };
                let pl = p.threads[u].placement;
                if (pl.gpu, pl.cta) != (gpu, cta) || arrived.iter().any(|(t, _)| *t == u) {
                    return false;
                }
                let th = &p.threads[u];
                let from = if sp.kind == super::unfold::StuckKind::Barrier {
                    sp.pc + 1
                } else {
                    sp.pc
                };
                if from >= th.code.len() {
                    return false;
                }
                let reach = crate::model::hang::reachability(th);
                crate::model::hang::may_reach_barrier(
                    th,
                    &reach[from],
                    &|r| g.eval(&self.rf, u, &g.final_regs[u][r]),
                    id,
                )
            })
            .count()
    }

    /// Every way the barrier arrivals can form completed instances, as
    /// synchronisation edges; `None` if some waiting thread never gets
    /// through, or a stuck thread's barrier completes.
    fn barrier_choices(&mut self) -> Option<Vec<Rel<S>>> {
        let g = self.g;
        let n = g.len();
        let mut choices = vec![Rel::empty(n)];
        for inst in self.barrier_instances()? {
            let part = &inst.arrivals;
            let waits = part.iter().any(|&b| g.barriers[b].wait.is_some());
            let stuck = part.iter().any(|&b| g.barriers[b].stuck);
            if !inst.completes() {
                if waits {
                    return None;
                }
                continue;
            }
            if stuck {
                return None;
            }
            let mut phase_choices = Vec::new();
            for s in subsets(part.len(), inst.needed) {
                // Choices are exponential in the participants: poll.
                if self.poll() {
                    return Some(Vec::new());
                }
                let mut r = Rel::empty(n);
                for (i, &bi) in part.iter().enumerate() {
                    if s & (1 << i) == 0 {
                        continue;
                    }
                    for (j, &bj) in part.iter().enumerate() {
                        if i != j {
                            if let Some(w) = g.barriers[bj].wait {
                                r.add(g.barriers[bi].arrive, w);
                            }
                        }
                    }
                }
                phase_choices.push(r);
            }
            let mut next = Vec::new();
            for c in &choices {
                for p in &phase_choices {
                    if self.poll() {
                        return Some(Vec::new());
                    }
                    let mut x = c.clone();
                    x.union_with(p);
                    next.push(x);
                }
            }
            choices = next;
        }
        Some(choices)
    }

    // ---- step 3: Fence-SC order -------------------------------------------

    /// `extra`: barrier edges and the Fence-SC orientations chosen so far
    /// (kept apart from `cb` for the per-signature closures).
    fn sc_step(&mut self, i: usize, cb: Rel<S>, extra: Rel<S>, ctx: &Ctx<S>) {
        self.tick();
        if self.stop() {
            return;
        }
        let Some(&(a, b)) = self.sc_pairs.get(i) else {
            return self.co_start(&cb, &extra, ctx);
        };
        if cb.has(a, b) || cb.has(b, a) {
            return self.sc_step(i + 1, cb, extra, ctx);
        }
        // A spinning iteration's `fence.sc` repeats forever: in the limit
        // every other `fence.sc` precedes its copies (the machine retires it
        // after everything else). Two spinning iterations' fences are left
        // unordered: neither engine lets one thread's repeated fence reach
        // another's (`docs/loops.md`, "Fairness").
        if self.fairness == Fairness::MorallyStrong && g_has_stuck(self.g) {
            let (ia, ib) = (self.g.spin_iter.has(a), self.g.spin_iter.has(b));
            if ia && ib {
                return self.sc_step(i + 1, cb, extra, ctx);
            }
            if ia || ib {
                let (x, y) = if ia { (b, a) } else { (a, b) };
                let mut c = cb;
                c.add_closed(x, y);
                let mut e = extra;
                e.add(x, y);
                return self.sc_step(i + 1, c, e, ctx);
            }
        }
        for (x, y) in [(a, b), (b, a)] {
            let mut c = cb.clone();
            c.add_closed(x, y);
            let mut e = extra.clone();
            e.add(x, y);
            self.sc_step(i + 1, c, e, ctx);
            if self.stop() {
                return;
            }
        }
    }

    // ---- step 4: coherence --------------------------------------------------

    fn co_start(&mut self, cb: &Rel<S>, extra: &Rel<S>, ctx: &Ctx<S>) {
        let loads = self.fair_loads();
        if loads.is_empty() {
            return self.co_start_fair(cb, extra, ctx);
        }
        // The spinning loads' forbidden writes grow with this candidate's
        // causality; put back the static part after (the reads-from steps
        // above check with it alone, which stays sound as relations grow).
        let cl = self.closures(cb, ctx.sw_ra, Some(extra));
        let mut full = self.fair_forbid.clone();
        for r in members(loads) {
            full[r] |= self.next_copy_causes(&cl, ctx.obs, r);
        }
        let saved = std::mem::replace(&mut self.fair_forbid, full);
        self.co_start_fair(cb, extra, ctx);
        self.fair_forbid = saved;
    }

    /// [`Search::co_start`] with the spinning loads' forbidden writes known.
    fn co_start_fair(&mut self, cb: &Rel<S>, extra: &Rel<S>, ctx: &Ctx<S>) {
        // Fence-SC orientations are retirement order too: with them, base
        // causality and the barrier phases' order in time stay acyclic.
        if !self.sc_pairs.is_empty() {
            if let Some(time) = &self.bar_time {
                if !time_acyclic(cb, time) {
                    self.stats.pruned_cb_cycle += 1;
                    return;
                }
            }
        }
        let cause = self.cause(cb, ctx.sw_ra, Some(extra), ctx.obs);
        if !self.causality_ok(&cause, None, self.all) {
            self.stats.pruned_causality += 1;
            return;
        }
        let Some(co) = self.min_co(&cause) else {
            self.stats.pruned_coherence += 1;
            return;
        };
        if !self.co_consistent(&co, &cause, self.all) {
            return;
        }
        // Given reads-from and causality, the axioms constrain the coherence
        // of each location apart from the others (A1, A3, A5 and the
        // from-read part of A6 each relate events of one location), so the
        // final values are a product over locations of the writes that can
        // end their location's coherence: search each location alone, for
        // each candidate last write, stopping at the first coherence that
        // works. (Orienting every pair of every location together, as one
        // product, costs the product of the locations' orders.)
        let g = self.g;
        let mut finals: Vec<Vec<Value>> = Vec::with_capacity(g.writes_of.len());
        for l in 0..g.writes_of.len() {
            let pairs = std::mem::take(&mut self.ws_pairs_of[l]);
            let vals = self.co_finals(&co, &cause, l, &pairs);
            self.ws_pairs_of[l] = pairs;
            match vals {
                Some(v) if !v.is_empty() => finals.push(v),
                _ => return,
            }
        }
        if self.record {
            self.note_races(&cause);
        }
        self.leaf(&finals);
    }

    /// The races of a consistent execution whose causality order is
    /// `cause`: its conflicting, not morally strong pairs that causality
    /// leaves unordered (PTX ISA "Conflict and Data-races"; digest §3.7).
    /// Each pair of instructions keeps the first execution found.
    fn note_races(&mut self, cause: &Rel<S>) {
        for &(x, y) in &self.race_pairs {
            if cause.has(x, y) || cause.has(y, x) {
                continue;
            }
            let r = race::race(self.g, x, y);
            if !self.races.contains_key(&r) {
                let w = race::witness(self.g, &self.rf, x, y);
                self.races.insert(r, w);
            }
        }
    }

    /// The least coherence every consistent completion contains; `None` if
    /// it is cyclic. Initial writes come first and causality orders
    /// same-location writes (A1). Two morally strong writes must be ordered
    /// one way or the other, so where one orientation breaks an axiom
    /// outright with the reads bound so far, the other is forced:
    /// * A6: a write `w2` that causally precedes a read of `w` goes before `w`;
    /// * A5 (SC per location), for each short cycle through program order at
    ///   one address whose every edge is morally strong: writes in program
    ///   order are in coherence order (coWW); a write program-order before a
    ///   read goes before the write it reads (coWR); the write a read reads
    ///   goes before a write program-order after the read (coRW); two reads in
    ///   program order read writes in coherence order (coRR).
    ///
    /// The forced edges only cut the orientations the search would try and
    /// reject; they let most locations finish with nothing left to orient.
    fn min_co(&self, cause: &Rel<S>) -> Option<Rel<S>> {
        let g = self.g;
        let mut co = self.co_base.clone();
        for w in members(self.writes & !g.inits) {
            co.set_row(w, co.row(w) | (self.same_loc_writes[w] & cause.row(w)));
        }
        if self.forced {
            for &r in &g.reads {
                let Some(w) = self.rf[r] else { continue };
                let others = self.same_loc_writes[r] & g.ms.row(w) & !S::bit(w);
                // A6 and coWR: these go before `w`.
                for w2 in members(others) {
                    if self.po_loc_ms_writes_before[r].has(w2) || cause.has(w2, r) {
                        co.add(w2, w);
                    }
                }
                // coRW: `w` goes before these (r po w2 co w rf r otherwise).
                if g.ms.has(w, r) {
                    co.set_row(w, co.row(w) | (others & g.po_loc.row(r)));
                }
                for r1 in members(self.reads_po_loc_before[r]) {
                    let Some(w1) = self.rf[r1] else { continue };
                    // coRR: r1 po r fr w1 rf r1 otherwise.
                    if w1 != w && g.ms.has(w1, w) && g.ms.has(r, w1) && g.ms.has(w1, r1) {
                        co.add(w1, w);
                    }
                }
            }
        }
        co.close_within(self.writes);
        co.closed_is_acyclic().then_some(co)
    }

    /// The values of the writes of one location (`ws`, its morally strong
    /// pairs `pairs`) that end some consistent coherence of it extending
    /// `co`; for a skeleton that records nothing, only whether one exists
    /// (a one-element list). `None` when the search was stopped.
    fn co_finals(
        &mut self,
        co: &Rel<S>,
        cause: &Rel<S>,
        l: usize,
        pairs: &[(usize, usize)],
    ) -> Option<Vec<Value>> {
        let ws = self.g.writes_of[l];
        let within = self.loc_events[l];
        // A total location: every extension of `co` is consistent. With
        // nothing to orient, `co` (already checked) is the location's only
        // coherence. Either way its maximal writes, and only they, can end it.
        let settled = || pairs.iter().all(|&(a, b)| co.has(a, b) || co.has(b, a));
        if self.total_loc[l] || (self.record && settled()) {
            let mut vals: Vec<Value> = members(ws)
                .filter(|&w| !co.row(w).meets(ws))
                .map(|w| if self.record { self.write_value(w) } else { 0 })
                .collect();
            vals.sort_unstable();
            vals.dedup();
            return Some(vals);
        }
        if !self.record {
            let any = self.co_exists(co, cause, pairs, None, within);
            if self.stopped.is_some() {
                return None;
            }
            return Some(if any { vec![0] } else { Vec::new() });
        }
        let g = self.g;
        let mut vals = Vec::new();
        for w in members(ws) {
            if co.row(w).meets(ws) {
                continue; // something already follows it
            }
            // Every write morally strong with w goes before it.
            let mut c = co.clone();
            for w2 in members(ws & g.ms.row(w)) {
                if !c.has(w2, w) {
                    c.add_closed(w2, w);
                }
            }
            if !c.closed_is_acyclic() || c.row(w).meets(ws) {
                self.stats.pruned_coherence += 1;
                continue;
            }
            let v = self.write_value(w);
            if vals.contains(&v) {
                continue; // this final value is known possible already
            }
            if self.co_exists(&c, cause, pairs, Some((w, ws)), within) {
                vals.push(v);
            }
            if self.stopped.is_some() {
                return None;
            }
        }
        vals.sort_unstable();
        Some(vals)
    }

    /// Whether orienting the rest of `pairs` (writes of one location, whose
    /// events are `within`) can extend `co` (closed, consistent outside
    /// `within`) into a coherence satisfying A3, A5 and A6, with `last` (a
    /// write and its location's writes) kept coherence-maximal.
    fn co_exists(
        &mut self,
        co: &Rel<S>,
        cause: &Rel<S>,
        pairs: &[(usize, usize)],
        last: Option<(usize, S)>,
        within: S,
    ) -> bool {
        self.tick();
        if self.stopped.is_some() {
            return false;
        }
        if !self.co_consistent(co, cause, within) {
            return false;
        }
        if let Some((w, ws)) = last {
            if co.row(w).meets(ws) {
                return false;
            }
        }
        let Some(k) = pairs
            .iter()
            .position(|&(a, b)| !(co.has(a, b) || co.has(b, a)))
        else {
            return true;
        };
        let (a, b) = pairs[k];
        for (x, y) in [(a, b), (b, a)] {
            let mut c = co.clone();
            c.add_closed(x, y);
            if !c.closed_is_acyclic() {
                self.stats.pruned_coherence += 1;
                continue;
            }
            if self.co_exists(&c, cause, &pairs[k + 1..], last, within) {
                return true;
            }
            if self.stopped.is_some() {
                return false;
            }
        }
        false
    }

    /// The value write `w` writes, with every read bound.
    fn write_value(&self, w: usize) -> Value {
        let g = self.g;
        let base = g.events[w].thread.map_or(0, |t| g.offset[t]);
        g.value[w]
            .as_ref()
            .expect("a write has a value")
            .eval(&mut |i| g.read_value(&self.rf, base + i))
            .expect("all reads are bound at a leaf")
    }

    /// A3, A5 and the from-read part of A6 for a (closed, acyclic) `co`, on
    /// the events `within` (each of these axioms relates events of one
    /// location, so a union of locations' events checks exactly those
    /// locations); for stuck paths, fairness: spinning and failing waits'
    /// reads read a coherence-maximal write (`co` only grows, so this is
    /// final too).
    fn co_consistent(&mut self, co: &Rel<S>, cause: &Rel<S>, within: S) -> bool {
        let g = self.g;
        // On a total location, with `co` from `Search::min_co`, the one
        // cycle left to look for is a read reading a write program-order
        // after it (coRW1); everything else is `min_co`'s acyclicity.
        for r in members(within & self.total_events) {
            if self.rf[r].is_some_and(|w| g.po_loc.has(r, w)) {
                self.stats.pruned_sc_per_location += 1;
                return false;
            }
        }
        let within = within & !self.total_events;
        for r in members(g.latest & within) {
            // During reads-from, a read not bound yet has no say.
            let Some(w) = self.rf[r] else { continue };
            if co.row(w).meets(self.fair_forbid[r]) {
                self.stats.pruned_not_latest += 1;
                return false;
            }
        }
        // Atomicity: no morally strong write between an RMW's read and write.
        for (r, w) in g.rmw.pairs() {
            if !within.has(r) {
                continue;
            }
            // During reads-from, an RMW whose read is not bound yet has no say.
            let Some(src) = self.rf[r] else { continue };
            for w2 in members(co.row(src)) {
                if g.ms.has(r, w2) && g.ms.has(w2, w) && co.has(w2, w) {
                    self.stats.pruned_atomicity += 1;
                    return false;
                }
            }
        }
        if !self.causality_ok(cause, Some(co), within) {
            self.stats.pruned_causality += 1;
            return false;
        }
        // SC per location: acyclic((ms ∩ (rf ∪ co ∪ fr)) ∪ po_loc), row by
        // row into a reused buffer (this runs once per coherence candidate).
        // fr = rf⁻¹; co, and a read has one source: fr(r) = co(rf(r)).
        for i in members(within) {
            let fr = self.rf[i].map_or(S::EMPTY, |w| co.row(w));
            self.scratch[i] =
                (((self.rf_rel.row(i) | co.row(i) | fr) & g.ms.row(i)) | g.po_loc.row(i)) & within;
        }
        if has_cycle_within(&self.scratch, within) {
            self.stats.pruned_sc_per_location += 1;
            return false;
        }
        true
    }

    // ---- step 5: final states ---------------------------------------------

    /// A consistent execution: record its registers with every combination
    /// of the locations' possible final values (`finals`, per location).
    fn leaf(&mut self, finals: &[Vec<Value>]) {
        self.stats.executions += 1;
        self.found = true;
        if let Some(u) = &self.bar_ub {
            if self.undefined.as_ref().is_none_or(|b| u < b) {
                self.undefined = Some(u.clone());
            }
        }
        for &(r, w) in &self.mbar_rmws {
            let e = &self.g.events[w];
            let (Some(t), Some(old), Some(new)) = (
                e.thread,
                self.g.read_value(&self.rf, r),
                self.g.write_value(&self.rf, w),
            ) else {
                continue;
            };
            if let Some(u) = crate::model::ub::mbarrier_step(self.g.program, t, e.pc, old, new) {
                if self.undefined.as_ref().is_none_or(|b| u < *b) {
                    self.undefined = Some(u);
                }
            }
        }
        for &e in &self.undefined_steps {
            let ev = &self.g.events[e];
            let Some(t) = ev.thread else { continue };
            if let Some(u) = crate::model::ub::step_ub(self.g.program, t, ev.pc) {
                if self.undefined.as_ref().is_none_or(|b| u < *b) {
                    self.undefined = Some(u);
                }
            }
        }
        // Accesses to pending `wgmma` accumulators on the paths: a
        // straight-line thread gets past `pc` unless its path stops for good
        // at or before it.
        let stuck = &self.g.stuck;
        if let Some(u) = crate::model::ub::accumulator_ub(self.g.program, |t, pc| {
            stuck[t].as_ref().is_none_or(|sp| sp.pc > pc)
        }) {
            if self.undefined.as_ref().is_none_or(|b| u < *b) {
                self.undefined = Some(u);
            }
        }
        if g_has_stuck(self.g) && self.witness.is_none() {
            self.witness = Some(self.rf.clone());
            self.witness_instances = self.bar_instances.clone();
        }
        if !self.record {
            return;
        }
        let g = self.g;
        let mut state = vec![0; self.cols.len()];
        for (t, regs) in g.final_regs.iter().enumerate() {
            for (reg, e) in regs.iter().enumerate() {
                let Some(c) = self.cols.reg(t, reg) else {
                    continue;
                };
                state[c] = g
                    .eval(&self.rf, t, e)
                    .expect("all reads are bound at a leaf");
            }
        }
        // One final state per choice of a value for each location: walk the
        // product with an odometer, inserting as we go, so that memory holds
        // only the outcome set and the budget sees each new outcome.
        let cols: Vec<(usize, &[Value])> = finals
            .iter()
            .enumerate()
            .filter_map(|(l, vals)| Some((self.cols.loc(l)?, vals.as_slice())))
            .collect();
        if cols.iter().any(|(_, vals)| vals.is_empty()) {
            return;
        }
        let width = self.cols.len() as u64;
        let mut pick = vec![0usize; cols.len()];
        loop {
            for (&(col, vals), &k) in cols.iter().zip(&pick) {
                state[col] = vals[k];
            }
            if self.out.insert(state.clone()) {
                self.poll.budget().reserve_output(Finder::Oracle, width);
                // `--verdict-only`: a settling state stops the search at
                // the poll just below.
                self.poll.budget().offer(&state);
            }
            if self.poll() {
                return;
            }
            let mut i = 0;
            loop {
                let Some(&(_, vals)) = cols.get(i) else {
                    return;
                };
                pick[i] += 1;
                if pick[i] < vals.len() {
                    break;
                }
                pick[i] = 0;
                i += 1;
            }
        }
    }
}

/// The coherence edges from each location's initial write to its other writes.
fn initial_writes_first<S: Bits>(g: &Graph<'_, S>) -> Rel<S> {
    let mut co = Rel::empty(g.len());
    for &ws in &g.writes_of {
        for i in members(ws & g.inits) {
            co.set_row(i, ws & !S::bit(i));
        }
    }
    co
}

/// Per event, the writes its source must not precede in coherence, as far
/// as they are known before causality (`Search::fair_forbid`).
fn static_forbid<S: Bits>(g: &Graph<'_, S>, f: Fairness) -> Vec<S> {
    let mut out = vec![S::EMPTY; g.len()];
    for r in members(g.latest) {
        let writes = g.writes_of[g.events[r].loc];
        out[r] = if f == Fairness::MorallyStrong && g.spin_iter.has(r) && fair_load(g, r) {
            writes & g.ms.row(r)
        } else {
            writes
        };
    }
    out
}

/// Whether event `r` is a plain load (not an RMW's read, not an mbarrier
/// wait): the reads that morally strong fairness relaxes.
fn fair_load<S: Bits>(g: &Graph<'_, S>, r: usize) -> bool {
    let e = &g.events[r];
    e.thread.is_some_and(|t| {
        matches!(
            g.program.threads[t].code[e.pc],
            crate::ir::Instr::Load { .. }
        )
    })
}

/// Whether the RMW whose read half is `r` (a counter's addition of a
/// constant) commutes with the other such additions: its read is no acquire
/// and starts no acquire pattern, its value reaches nothing but its own
/// write (no register, branch, address or final state reads it), and no
/// event of its thread up to it can be the target of a synchronisation from
/// another thread (`sync_targets`: acquire patterns' tails, awaits,
/// mbarrier waits; and no fence or barrier), so nothing of another thread
/// is base-causality-before it (`docs/oracle.md`, "Commuting additions").
fn commutes<S: Bits>(g: &Graph<'_, S>, r: usize, sync_targets: S) -> bool {
    use super::graph::Kind;
    let e = &g.events[r];
    let Some(t) = e.thread else { return false };
    let Some(w) = members(g.rmw.row(r)).next() else {
        return false;
    };
    if e.sem.is_acquire() || g.ap.row(r) != S::EMPTY || g.dep.row(r) & !S::bit(w) != S::EMPTY {
        return false;
    }
    let base = g.offset[t];
    let end = g.offset.get(t + 1).copied().unwrap_or(g.len());
    let local = r - base;
    let mentions = |x: &super::unfold::Expr| x.reads().has(local);
    if g.constraints
        .iter()
        .any(|(u, c)| *u == t && (mentions(&c.a) || mentions(&c.b)))
        || g.final_regs[t].iter().any(mentions)
        || (base..end).any(|x| x != w && g.value[x].as_ref().is_some_and(mentions))
        || g.barriers.iter().any(|b| {
            g.events[b.arrive].thread == Some(t)
                && (b.id.iter().any(mentions) || b.count.as_ref().is_some_and(mentions))
        })
        || g.cond_reads
            .iter()
            .any(|(c, x)| g.events[*c].thread == Some(t) && mentions(x))
    {
        return false;
    }
    (base..=r).all(|x| {
        !sync_targets.has(x)
            && !matches!(
                g.events[x].kind,
                Kind::Fence(_) | Kind::BarArrive | Kind::BarWait | Kind::Await
            )
    })
}

/// Whether every read of location `l` that is not an RMW's (`plain`) can
/// only read the last write of its chain (`chain`: the read halves of the
/// additions): its thread's branch outcomes pin it to the chain's final
/// value (`r == v` taken or `r != v` not taken), and every addition adds a
/// constant of one sign with no overflow, so every shorter chain holds a
/// value short of it.
fn final_only<S: Bits>(g: &Graph<'_, S>, l: usize, chain: S, plain: S) -> bool {
    use super::unfold::Expr;
    use crate::ir::{BranchCmp, RmwOp};
    let mut total = g.program.locations[l].init;
    let (mut pos, mut neg) = (false, false);
    for r in members(chain) {
        let w = members(g.rmw.row(r)).next().unwrap();
        let Some(Expr::Rmw(RmwOp::Add, _, args)) = &g.value[w] else {
            return false;
        };
        let [Expr::Const(c)] = args.as_slice() else {
            return false;
        };
        if *c == 0 {
            return false;
        }
        pos |= *c > 0;
        neg |= *c < 0;
        match total.checked_add(*c) {
            Some(t) => total = t,
            None => return false,
        }
    }
    if pos && neg {
        return false; // both signs: a shorter chain may hold the total
    }
    members(plain).all(|q| {
        let t = g.events[q].thread.unwrap();
        let local = q - g.offset[t];
        g.constraints.iter().any(|(u, c)| {
            let pins = matches!(
                (c.cmp, c.holds),
                (BranchCmp::Eq, true) | (BranchCmp::Ne, false)
            );
            *u == t
                && pins
                && matches!(
                    (&c.a, &c.b),
                    (Expr::Read(i), Expr::Const(v)) | (Expr::Const(v), Expr::Read(i))
                        if *i == local && *v == total
                )
        })
    })
}

fn g_has_stuck<S: Bits>(g: &Graph<'_, S>) -> bool {
    g.stuck.iter().any(Option::is_some)
}

/// All subsets of `0..n` (n < 64) with exactly `k` members, as bit masks.
fn subsets(n: usize, k: usize) -> impl Iterator<Item = u64> {
    (0u64..(1u64 << n)).filter(move |s| s.count_ones() as usize == k)
}

/// Whether closed base causality `cb` with the order in time `time` adds
/// (which need not be closed) has no cycle.
fn time_acyclic<S: Bits>(cb: &Rel<S>, time: &Rel<S>) -> bool {
    if time.pairs().next().is_none() {
        return true;
    }
    let mut c = cb.clone();
    c.union_with(time);
    !c.has_cycle()
}
