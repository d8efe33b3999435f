//! The operational machine ("M2" of `docs/reference/machine-m2.md`,
//! described in `docs/machine.md`): memory as write versions in a per-location
//! coherence DAG at the L2 reconvergence point; each thread's view of the
//! per-CTA, per-proxy, per-address cache lines kept as frontier tokens;
//! release snapshots and acquire merges guarded by moral strength; loads and
//! stores issued speculatively and retired in program order.
//!
//! [`Machine`] owns the static tables and the transitions: [`Machine::initial`],
//! [`Machine::successors`] (each a named [`Step`] with the state it leads to)
//! and [`Machine::outcomes`] of a final state. The search strategy lives in
//! [`crate::explore`].

// States are boxed wherever successors are collected: a state is a few
// kilobytes, and moving it between vectors (found, bound, returned) showed up
// as a fifth of the hot loop's time; a box moves as a pointer.
#![allow(clippy::vec_box)]

mod coherence;
pub mod commute;
mod doomed;
pub mod hang;
pub mod layout;
pub mod reason;
pub mod refusals;
pub mod state;
mod steps;
pub mod symmetry;
pub mod trace;
mod why;
pub mod window;

use smallvec::SmallVec;
use std::borrow::Cow;

use crate::ir::{Instr, Operand, Program, Proxy, Value};
use crate::model::lower;
use crate::outcome::{Columns, State as Outcome};
use crate::rel::{Bits, bit, members};

use layout::{Layout, SlotKind};
use reason::Reason;
use state::{NONE, State, ThreadState, View};

pub use layout::TooManySlots;
pub use steps::{Folded, Step, StepKind};

/// When the machine orders morally strong writes of one location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coherence {
    /// At the later write's issue, one way or the other, each orientation a
    /// separate successor (machine-m2.md, ISSUE-W): the steps
    /// [`Machine::successors`] describes.
    Eager,
    /// Only where an axiom forces it (causality at retirement, obligations
    /// of morally strong pairs); the rest is completed at the end, where the
    /// final values are those of the versions that can end some consistent
    /// completion (`docs/machine.md`, "Lazy coherence"). The exploration's
    /// mode in programs without loops: it does not multiply states by
    /// orders of writes.
    Lazy,
}

/// The machine for one program.
pub struct Machine<'p, S: Bits = u128> {
    /// The program it runs: the test, lowered ([`crate::model::lower`]).
    pub program: Cow<'p, Program>,
    /// The test as written (for descriptions).
    pub source: &'p Program,
    /// Slots and static relations.
    pub layout: Layout<S>,
    /// Loop bound.
    pub bound: u32,
    /// Final-state columns.
    pub columns: Columns,
    /// Partial-order reduction (R1: choice-free retirements go first and
    /// alone, and are folded into the preceding step). Off only to measure it.
    pub por: bool,
    /// How the exploration ([`Machine::successors_folded`]) orders morally
    /// strong writes: lazily in a program without loops, eagerly otherwise
    /// (set by the constructor); [`Machine::successors`] is always eager.
    pub coherence: Coherence,
    /// P2: at a state where no thread can retire without a choice, explore
    /// only the choices of one thread whose binds no other thread's step can
    /// affect (`docs/exploration.md`). Only with `por`.
    pub persistent: bool,
    /// P3: P2 may also take the binds of a thread at a spin loop's load when
    /// no hang witness can leave it spinning there (`docs/exploration.md`,
    /// "P3"). Only with `persistent`.
    pub spin_persistent: bool,
    /// Symmetry reduction: the exploration from the initial state remembers
    /// one state per orbit of [`Machine::symmetry`]'s groups and expands the
    /// final states found to their orbits (`docs/exploration.md`,
    /// "Symmetry"). Off only to check it.
    pub use_symmetry: bool,
    /// With `use_symmetry`, offer symmetric choices once: the choices of
    /// one member of each class of twins, and within a forwarding chain one
    /// twin not yet named (`docs/exploration.md`, "Symmetric choices").
    /// Off only to check it.
    pub symmetric_choices: bool,
    /// Check SC per location only for cycles through what a step added (a
    /// bound read, an issued write, the targets of new coherence edges),
    /// the rest of the location's graph being acyclic already, and
    /// coherence, obligations and atomicity only on the pairs it added
    /// (`docs/exploration.md`, "Incremental SC per location"). Off only to
    /// check it.
    pub incremental_sc: bool,
    /// Drop a state from the exploration as soon as a write issued (a read
    /// bound) ahead of its retirement is coherence-ordered against what that
    /// retirement must see (`docs/exploration.md`, "Doomed speculation"):
    /// it can reach no final state, hang witness or cut. Off only to check it.
    pub prune_doomed: bool,
    /// The static fronts that decide it, when the program admits them.
    doom: Option<doomed::Doom<S>>,
    /// The program's groups of interchangeable threads, if any
    /// ([`symmetry::Symmetry::detect`]).
    pub symmetry: Option<symmetry::Symmetry<S>>,
    /// The program's commuting counters, whose chains of additions the
    /// exploration from the initial state remembers up to their order
    /// (`docs/exploration.md`, "Commuting additions in the machine"); `None`
    /// unless [`Machine::commute_additions`] found some.
    pub commuting: Option<commute::Commuting<S>>,
    /// `back_index[t][pc]`: index of a back edge that counts its takes
    /// (bounded loops, spin loops that keep iterations) in `ThreadState::back_taken`.
    back_index: Vec<Vec<Option<usize>>>,
    /// `reach[t][pc]`: instructions reachable from `pc` (inclusive).
    reach: Vec<Vec<Vec<bool>>>,
    /// `writes_reach[t][pc]`: the locations (as a bit set) that instructions
    /// reachable from `pc` (inclusive) may write.
    writes_reach: Vec<Vec<S>>,
    /// `po_va_after[s]`: the slots of `s`'s thread and virtual address that
    /// come after it in program order, when the thread has no loop (then
    /// slot order is program order); `None` in a thread with a loop, whose
    /// order the state's `seq` gives.
    po_va_after: Vec<Option<S>>,
    /// [`Machine::maxima`] remembered per location part of a state.
    maxima_memo: coherence::MaximaMemo<S>,
    /// How CTA barriers are read (`model::barrier`).
    pub barriers: crate::model::barrier::Reading,
    /// Which writes spinning reads must eventually see (the hang witness,
    /// `hang.rs`).
    pub fairness: crate::model::hang::Fairness,
    /// Per CTA (index into [`Layout::ctas`]): the names of its barriers
    /// with a thread count. Under the ISA reading a count-less arrival at a
    /// name that also has counted arrivals may join a counted phase or start
    /// the next, so its order against other arrivals is a choice; at a name
    /// no counted barrier of its CTA uses, every phase waits for every
    /// thread and the order of arrivals decides nothing.
    cta_counted: Vec<CountedNames>,
    /// Counted barriers whose arrivals are order-free, as (GPU, CTA, name)
    /// (`model::barrier::order_free_counted`): under the ISA reading their
    /// arrivals retire without a choice.
    order_free: Vec<(u32, u32, Value)>,
    /// Lanes of a warp may wait at different barriers, one counted
    /// (`model::barrier::warps_may_diverge`): hangs are judged for it.
    warps_diverge: bool,
    /// Per thread: the other lanes of its warp, when some warp of several
    /// lanes has an `.aligned` CTA barrier (`model::barrier::aligned_warps`;
    /// empty otherwise): hangs are judged for a lane that stays away from it
    /// ([`Machine::warp_divergence`]). Computed once, since the check runs
    /// at every state.
    aligned_lanes: Vec<Vec<usize>>,
    /// Per CTA: its source threads (agents are no CUDA threads).
    cta_threads: Vec<Vec<usize>>,
    /// Per location: whether it is *total* — every slot of it generic, at
    /// one virtual address, no RMW, and every two of them (initial version
    /// included) morally strong ([`Machine::maxima`]).
    total_loc: Vec<bool>,
    /// The slots of mbarrier read-modify-writes (arrive-on, expect-tx,
    /// complete-tx), whose states [`Machine::undefined`] judges.
    mbar_rmws: S,
    /// The slots of lowered undefined steps ([`crate::ir::SignalKind::Undefined`]):
    /// a state that has retired one is undefined (`model::ub::step_ub`).
    undefined_steps: S,
    /// Set by [`Machine::within`]'s watchdog when the run's budget is
    /// exhausted: the long loops of one step (binds with forwarding chains,
    /// coherence orientations and completions, a final state's outcomes)
    /// look at it and give up, leaving partial answers that the caller
    /// reports as incomplete.
    interrupted: std::sync::atomic::AtomicBool,
}

impl<'p> Machine<'p> {
    /// Build the machine for `p` with loop bound `bound`, at the plain width
    /// (128 event slots; [`Machine::build`] for any width).
    pub fn new(source: &'p Program, bound: u32) -> Result<Machine<'p>, TooManySlots> {
        Machine::build(source, bound, true)
    }

    /// [`Machine::new`]; `retry`: recognise retry loops (`false` bounds them
    /// like any other loop, to check the reduction).
    pub fn with_retry_loops(
        source: &'p Program,
        bound: u32,
        retry: bool,
    ) -> Result<Machine<'p>, TooManySlots> {
        Machine::build(source, bound, retry)
    }
}

impl<'p, S: Bits> Machine<'p, S> {
    /// Build the machine for `p` with loop bound `bound` and event sets of
    /// type `S`; `retry`: recognise retry loops (`false` bounds them like
    /// any other loop, to check the reduction). `Err` if the program has
    /// more event slots than `S` holds: pick `S` with
    /// `rel::with_width!(needed)`.
    pub fn build(
        source: &'p Program,
        bound: u32,
        retry: bool,
    ) -> Result<Machine<'p, S>, TooManySlots> {
        let program = lower::lowered(source, bound);
        let p: &Program = &program;
        let layout = Layout::new(p, bound, retry)?;
        let mut back_index = Vec::new();
        let mut reach = Vec::new();
        for (t, th) in p.threads.iter().enumerate() {
            let info = &layout.loops[t];
            let mut k = 0;
            back_index.push(
                (0..th.code.len())
                    .map(|pc| {
                        info.counts(pc).then(|| {
                            k += 1;
                            k - 1
                        })
                    })
                    .collect(),
            );
            reach.push(crate::model::hang::reachability(th));
        }
        let writes_reach = p
            .threads
            .iter()
            .zip(&reach)
            .map(|(th, reach)| {
                reach
                    .iter()
                    .map(|from| {
                        th.code
                            .iter()
                            .zip(from)
                            .filter(|(_, r)| **r)
                            .filter_map(|(i, _)| match i {
                                Instr::Store { access, .. } | Instr::Rmw { access, .. } => {
                                    Some(bit(p.addresses[access.addr].loc))
                                }
                                _ => None,
                            })
                            .fold(S::EMPTY, |a, b| a | b)
                    })
                    .collect()
            })
            .collect();
        let po_va_after = (0..layout.len())
            .map(|a| {
                let sa = &layout.slots[a];
                let t = sa.thread?;
                if layout.loops[t].back_edge.iter().any(|&b| b) {
                    return None;
                }
                let later = !(S::bit(a) | S::below(a));
                Some(
                    layout.thread_slots[t]
                        & layout.va_slots.get(sa.va).copied().unwrap_or(S::EMPTY)
                        & later,
                )
            })
            .collect();
        // Lazy coherence pays on loop-free programs (writes of one location
        // from many threads: orders not multiplied) and costs on programs
        // with loops, where reads that repeat keep unordered writes apart in
        // many more states (`docs/exploration.md`, "Lazy coherence").
        let coherence = if layout.loops.iter().any(|l| l.back_edge.iter().any(|&b| b)) {
            Coherence::Eager
        } else {
            Coherence::Lazy
        };
        let columns = Columns::of(p);
        let total_loc = layout
            .loc_slots
            .iter()
            .map(|&here| {
                let first = members(here).next().map(|s| layout.slots[s].va);
                members(here).all(|s| {
                    let info = &layout.slots[s];
                    info.proxy == Proxy::Generic
                        && Some(info.va) == first
                        && info.kind != layout::SlotKind::Rmw
                        && (layout.ms[s] | bit(s)) & here == here
                })
            })
            .collect();
        let mbar_rmws = (0..layout.slots.len())
            .filter(|&s| {
                let info = &layout.slots[s];
                info.kind == layout::SlotKind::Rmw
                    && info
                        .thread
                        .is_some_and(|t| crate::model::ub::is_mbarrier_rmw(p, t, info.pc))
            })
            .fold(S::EMPTY, |acc, s| acc | S::bit(s));
        let undefined_steps = (0..layout.slots.len())
            .filter(|&s| {
                let info = &layout.slots[s];
                info.kind == layout::SlotKind::Signal
                    && info
                        .thread
                        .is_some_and(|t| crate::model::ub::step_ub(p, t, info.pc).is_some())
            })
            .fold(S::EMPTY, |acc, s| acc | S::bit(s));
        let cta_threads: Vec<Vec<usize>> = (0..layout.ctas.len())
            .map(|c| {
                (0..p.threads.len())
                    .filter(|&t| {
                        let pl = layout.placement[t];
                        p.threads[t].agent.is_none() && layout.ctas[c] == (pl.gpu, pl.cta)
                    })
                    .collect()
            })
            .collect();
        let cta_counted = cta_threads
            .iter()
            .map(|ts| CountedNames::of(p, ts))
            .collect();
        let order_free = crate::model::barrier::order_free_counted(p);
        let warps_diverge = crate::model::barrier::warps_may_diverge(p);
        let aligned_lanes = if crate::model::barrier::aligned_warps(p) {
            (0..p.threads.len())
                .map(|t| p.warp_lanes(t).into_iter().filter(|&o| o != t).collect())
                .collect()
        } else {
            Vec::new()
        };
        let symmetry = symmetry::Symmetry::detect(p, &layout, &columns);
        let mut m = Machine {
            use_symmetry: true,
            symmetric_choices: true,
            incremental_sc: true,
            prune_doomed: true,
            doom: None,
            symmetry,
            commuting: None,
            barriers: Default::default(),
            fairness: Default::default(),
            cta_counted,
            order_free,
            warps_diverge,
            aligned_lanes,
            cta_threads,
            program,
            source,
            columns,
            layout,
            bound,
            por: true,
            coherence,
            persistent: true,
            spin_persistent: true,
            back_index,
            reach,
            writes_reach,
            po_va_after,
            maxima_memo: Default::default(),
            total_loc,
            mbar_rmws,
            undefined_steps,
            interrupted: Default::default(),
        };
        m.doom = doomed::Doom::of(&m);
        Ok(m)
    }

    /// Whether the exploration drops `st` as doomed ([`Machine::prune_doomed`]).
    pub(crate) fn doomed(&self, st: &State<S>) -> bool {
        self.prune_doomed && self.doom.as_ref().is_some_and(|d| d.doomed(self, st))
    }

    /// Run `work` on this machine within `budget`: a watchdog looks at the
    /// budget every few milliseconds and, once a time or memory limit is
    /// hit, interrupts the machine, whose long loops then give up
    /// ([`Machine::interrupted`]). A single step of the machine is not
    /// bounded by much (one bind of an RMW may forward a chain of other
    /// RMWs: tens of thousands of successors), so polling between steps
    /// alone lets a run overrun its limits many times over.
    pub fn within<R>(&self, budget: &crate::limits::Budget, work: impl FnOnce() -> R) -> R {
        use std::sync::atomic::Ordering;
        self.interrupted.store(false, Ordering::Relaxed);
        crate::limits::watched(
            budget,
            |_| self.interrupted.store(true, Ordering::Relaxed),
            work,
        )
    }

    /// Whether the run's budget was exhausted during [`Machine::within`]:
    /// answers given since may be partial.
    #[inline]
    pub fn interrupted(&self) -> bool {
        self.interrupted.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The initial state: initial versions in memory, nothing issued.
    pub fn initial(&self) -> State<S> {
        let n = self.layout.len();
        let pairs = self.layout.line_pairs.len();
        let threads = self
            .program
            .threads
            .iter()
            .enumerate()
            .map(|(t, th)| {
                std::sync::Arc::new(ThreadState {
                    pc: 0,
                    cut: false,
                    regs: th.regs.iter().map(|r| r.init).collect(),
                    execs: SmallVec::from_elem(0, th.code.len()),
                    back_taken: SmallVec::from_elem(0, self.back_index[t].iter().flatten().count()),
                    seq: 0,
                    view: View::new(pairs),
                    arrived: false,
                })
            })
            .collect();
        State {
            threads,
            versions: self.layout.inits,
            bound: S::EMPTY,
            retired: self.layout.inits,
            co: SmallVec::from_elem(S::EMPTY, n),
            rf: SmallVec::from_elem(NONE, n),
            never_below: SmallVec::from_elem(S::EMPTY, n),
            seq: SmallVec::from_elem(0, n),
            value: SmallVec::from_elem(0, n),
            snapshots: SmallVec::from_elem(None, n),
            arrivals: SmallVec::new(),
        }
        .with_init_values(self)
    }

    /// Whether every thread has retired everything or stopped at the loop
    /// bound, or is an agent that never starts ([`Machine::never_starts`]).
    pub fn is_final(&self, st: &State<S>) -> bool {
        st.threads
            .iter()
            .zip(&self.program.threads)
            .enumerate()
            .all(|(t, (ts, th))| ts.finished(th.code.len()) || self.never_starts(st, t))
    }

    /// Whether a final state was reached with some thread stopped at the loop bound.
    pub fn is_cut(&self, st: &State<S>) -> bool {
        st.threads.iter().any(|t| t.cut)
    }

    /// The final states a final machine state stands for: registers, and for
    /// each location any coherence-maximal version (co may stay partial).
    pub fn outcomes(&self, st: &State<S>) -> Vec<Outcome> {
        let mut out = Vec::new();
        self.for_each_outcome(st, |o| {
            out.push(o);
            std::ops::ControlFlow::Continue(())
        });
        out
    }

    /// [`Machine::outcomes`] one at a time, until `f` breaks: their number
    /// is a product over locations, which a caller with limits must be able
    /// to stop.
    pub fn for_each_outcome(
        &self,
        st: &State<S>,
        mut f: impl FnMut(Outcome) -> std::ops::ControlFlow<()>,
    ) {
        let mut state = vec![0; self.columns.len()];
        for (t, ts) in st.threads.iter().enumerate() {
            for (r, v) in ts.regs.iter().enumerate() {
                if let Some(c) = self.columns.reg(t, r) {
                    state[c] = *v;
                }
            }
        }
        let mut cols: Vec<(usize, Vec<Value>)> = Vec::new();
        for l in 0..self.program.locations.len() {
            // Every location must have a consistent completion of its
            // coherence, shown or not (lazy coherence, `coherence.rs`).
            let maxima = self.maxima(st, l);
            if self.interrupted() {
                return;
            }
            let Some(col) = self.columns.loc(l) else {
                if maxima.is_empty() {
                    return;
                }
                continue;
            };
            let mut finals: Vec<Value> = members(maxima).map(|v| st.value[v]).collect();
            finals.sort_unstable();
            cols.push((col, finals));
        }
        if cols.iter().any(|(_, vals)| vals.is_empty()) {
            return;
        }
        // Odometer over one value per location.
        let mut pick = vec![0usize; cols.len()];
        loop {
            for ((col, vals), &k) in cols.iter().zip(&pick) {
                state[*col] = vals[k];
            }
            if f(state.clone()).is_break() {
                return;
            }
            let mut i = 0;
            loop {
                let Some((_, vals)) = cols.get(i) else {
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

    /// The value a bound read returned.
    pub fn read_value(&self, st: &State<S>, r: usize) -> Value {
        st.value[st.rf[r] as usize]
    }

    // ---- frontiers (machine-m2.md §3) -------------------------------------

    /// `Front(K, line(s))`: the events of `s`'s location that `K` guarantees
    /// visible on the cache line `s` uses (its CTA, proxy and virtual address).
    pub fn front(&self, k: &View<S>, s: usize) -> S {
        let l = &self.layout;
        let si = &l.slots[s];
        let locm = l.loc_slots[si.loc] & !l.inits;
        let same = locm & l.va_slots[si.va];
        let diff = locm & !l.va_slots[si.va];
        if si.proxy == Proxy::Generic {
            (k.raw & same & l.proxy_slots[Proxy::Generic as usize])
                | (k.gen_ & same)
                | (k.anyva & diff)
        } else {
            let c = si.cta;
            let pair = l.line_pair(c, si.proxy);
            (k.raw & same & l.proxy_slots[si.proxy as usize] & l.cta_slots[c])
                | (k.line(pair, state::Stage::Gen) & same)
                | (k.line(pair, state::Stage::AnyVa) & diff)
        }
    }

    /// Versions that observe read `z`: its source if morally strong, then
    /// back through RMWs while each link is morally strong. The second value
    /// is false when the chain reaches an RMW whose read is not bound yet (an
    /// exch whose write was issued first): the chain may still grow.
    pub fn observed_by(&self, st: &State<S>, z: usize) -> (S, bool) {
        let mut out = S::EMPTY;
        let mut r = z;
        loop {
            let u = st.rf[r];
            if u == NONE {
                return (out, r == z || st.bound.has(r));
            }
            let u = u as usize;
            if !self.layout.ms(u, r) || out.has(u) {
                return (out, true);
            }
            out |= bit(u);
            if self.layout.slots[u].kind != SlotKind::Rmw {
                return (out, true);
            }
            if !st.bound.has(u) {
                return (out, false);
            }
            r = u;
        }
    }

    /// `Front⁺(K, line(s))`: writes in the front, and writes observed by reads
    /// in it. The second value is false if some observation chain is not
    /// complete yet.
    pub fn front_plus(&self, st: &State<S>, k: &View<S>, s: usize) -> (S, bool) {
        let f = self.front(k, s);
        let mut out = f & self.layout.writes;
        let mut complete = true;
        for z in members(f & self.layout.reads) {
            let (o, c) = self.observed_by(st, z);
            out |= o;
            complete &= c;
        }
        (out, complete)
    }

    // ---- coherence checks -------------------------------------------------

    /// Add `a <co b` to the closed coherence order. Returns the versions
    /// that gained a coherence predecessor (the targets of the new edges).
    fn add_co(&self, st: &mut State<S>, a: usize, b: usize) -> S {
        // Coherence never crosses locations: only `a`'s location's rows change.
        let here = self.layout.loc_slots[self.layout.slots[a].loc];
        add_co_in(st.versions & here, &mut st.co, a, b)
    }

    /// Add `a <co b` for every `a` of `from` (versions of `b`'s location) in
    /// one pass over the location's versions, where one [`Machine::add_co`]
    /// per edge makes one pass each: the predecessors of `from`, and `from`,
    /// gain `b` and what follows it. Where the edges close no cycle this is
    /// the order the edges added one by one give, with the same targets
    /// returned; where they close one, both orders have one (a version of
    /// `from` that follows `b` gains itself), which the check rejects.
    fn add_co_from(&self, st: &mut State<S>, from: S, b: usize) -> S {
        let here = self.layout.loc_slots[self.layout.slots[b].loc];
        add_co_from_in(st.versions & here, &mut st.co, from, b)
    }

    /// For location `loc`: coherence acyclic, obligations respected, RMWs
    /// atomic, SC per location. (Coherence and obligations never cross
    /// locations, so a change at `loc` only needs `loc` checked.)
    fn co_ok(&self, st: &State<S>, loc: usize) -> bool {
        self.co_check(st, loc).is_ok()
    }

    /// [`Machine::co_ok`], saying which check fails.
    fn co_check(&self, st: &State<S>, loc: usize) -> Result<(), Reason> {
        self.co_check_with(st, &st.co, loc)
    }

    /// [`Machine::co_check`] with the coherence order `co` in place of the
    /// state's (a completion being tried, `coherence.rs`).
    fn co_check_with(&self, st: &State<S>, co: &[S], loc: usize) -> Result<(), Reason> {
        self.co_check_from(st, co, loc, None)
    }

    /// [`Machine::co_check`] after a change whose new SC-per-location edges
    /// all end in (or leave a new node in) `changed`, on a state whose
    /// location graph was acyclic before it ([`Machine::ser_ok_through`]).
    fn co_check_after(&self, st: &State<S>, loc: usize, changed: S) -> Result<(), Reason> {
        self.co_check_from(st, &st.co, loc, Some(changed))
    }

    /// [`Machine::co_check_with`]; with `changed`, SC per location looks only
    /// for cycles through it (when `incremental_sc` is on).
    fn co_check_from(
        &self,
        st: &State<S>,
        co: &[S],
        loc: usize,
        changed: Option<S>,
    ) -> Result<(), Reason> {
        // Nothing changed at `loc` since a state that passed every check
        // here: none can fail now (coherence, obligations, atomicity and SC
        // per location read only the order, reads-from and the issued
        // accesses; an obligation added since is never violated when added,
        // the Stale check at retirement sees to that).
        if self.incremental_sc && changed.is_some_and(|c| c.is_empty()) {
            return Ok(());
        }
        let l = &self.layout;
        let here = l.loc_slots[loc];
        let vs = st.versions & here;
        // With `changed` (incremental), only pairs a check has not seen
        // yet are looked at: every coherence pair `v → w` the step added has
        // `w` in `changed` (the targets `add_co` returns), a new node is in
        // it, and a new obligation is never violated when added. A failing
        // check then fails at the same version as the whole check, since
        // the state before passed them all (`docs/exploration.md`,
        // "Incremental coherence checks").
        let new = match changed {
            Some(c) if self.incremental_sc => c,
            _ => S::FULL,
        };
        for v in members(vs) {
            // A row that is a new node's is read whole.
            let look = if new.has(v) { S::FULL } else { new };
            if co[v].has(v) {
                return Err(Reason::CoherenceCycle { version: v });
            }
            if let Some(w) = members(co[v] & st.never_below[v] & look).next() {
                return Err(Reason::Obligation {
                    version: v,
                    newer: w,
                });
            }
        }
        // An RMW `x` breaks atomicity through `y` once `src → y` and `y → x`
        // are both in the order: new only if `x` or `y` is in `new`, so `x`
        // is in `new` or follows a version of it.
        let after_new = if new == S::FULL {
            S::FULL
        } else {
            members(new & vs).fold(new, |acc, y| acc | co[y])
        };
        for x in members(vs & st.bound & after_new) {
            // x is an issued RMW: nothing morally strong between its source and itself.
            let src = st.rf[x] as usize;
            let look = if new.has(x) { S::FULL } else { new };
            // The order is closed and acyclic here, so what follows `x` (or
            // is `x`) cannot also precede it: leave it out of the look.
            if let Some(y) =
                members(co[src] & l.ms[x] & !co[x] & !bit::<S>(x) & look).find(|&y| co[y].has(x))
            {
                return Err(Reason::Atomicity { rmw: x, between: y });
            }
        }
        let ser = match changed {
            Some(roots) if self.incremental_sc => self.ser_ok_through(st, co, loc, roots),
            _ => self.ser_ok_with(st, co, loc),
        };
        if ser {
            Ok(())
        } else {
            Err(Reason::ScPerLocation { loc })
        }
    }

    /// SC per location (A5) for `loc`: its issued accesses, with program order
    /// on one address and morally strong rf, co and fr, are acyclic.
    // Hot: runs at every bind and coherence change. Rows stay in slot space
    // (no renumbering), and acyclicity is decided by peeling off nodes with
    // no successor left, which needs no transitive closure.
    fn ser_ok(&self, st: &State<S>, loc: usize) -> bool {
        self.ser_ok_with(st, &st.co, loc)
    }

    /// [`Machine::ser_ok`] with the coherence order `co`.
    fn ser_ok_with(&self, st: &State<S>, co: &[S], loc: usize) -> bool {
        let l = &self.layout;
        let nodes = self.ser_nodes(st, loc);
        if (nodes & !l.inits).count() < 2 {
            return true;
        }
        let mut succ: SmallVec<[S; 32]> = SmallVec::from_elem(S::EMPTY, l.len());
        for a in members(nodes) {
            let sa = &l.slots[a];
            if sa.reads() && st.rf[a] != NONE {
                let src = st.rf[a] as usize;
                if l.ms(src, a) {
                    succ[src] |= bit(a);
                }
            }
            succ[a] |= self.ser_out(st, co, nodes, a);
        }
        acyclic(nodes, &succ)
    }

    /// The nodes of `loc`'s SC-per-location graph: its issued accesses.
    fn ser_nodes(&self, st: &State<S>, loc: usize) -> S {
        self.layout.loc_slots[loc] & (st.versions | st.bound | st.retired)
    }

    /// Node `a`'s successors in its location's SC-per-location graph on
    /// `nodes`, less the reads that read from `a` (morally strong co, fr
    /// and program order on one address).
    fn ser_out(&self, st: &State<S>, co: &[S], nodes: S, a: usize) -> S {
        let l = &self.layout;
        let sa = &l.slots[a];
        let mut out = co[a] & l.ms[a];
        if sa.reads() && st.rf[a] != NONE {
            out |= co[st.rf[a] as usize] & l.ms[a];
        }
        if let Some(t) = sa.thread {
            match self.po_va_after[a] {
                Some(after) => out |= nodes & after,
                None => {
                    for b in members(nodes & l.thread_slots[t] & l.va_slots[sa.va]) {
                        if st.seq[a] < st.seq[b] {
                            out |= bit(b);
                        }
                    }
                }
            }
        }
        out
    }

    /// [`Machine::ser_ok_with`] on a state whose location graph was acyclic
    /// before a change that only added nodes and edges, where every new edge
    /// ends in `roots` or leaves a new node, and every new node is in
    /// `roots`. Then a cycle of the new graph has a new edge, so it passes
    /// through a root: the graph is acyclic iff no cycle is reachable from
    /// the roots, which a depth-first search from them alone decides, looking
    /// at the rows of the nodes it reaches only (a bind at the end of a chain
    /// of additions reaches next to nothing, where the whole check rebuilt
    /// the chain's graph). The answer is [`Machine::ser_ok_with`]'s
    /// (`docs/exploration.md`, "Incremental SC per location").
    fn ser_ok_through(&self, st: &State<S>, co: &[S], loc: usize, roots: S) -> bool {
        let l = &self.layout;
        let nodes = self.ser_nodes(st, loc);
        // The whole check's shortcut, kept so that both give one answer.
        if (nodes & !l.inits).count() < 2 {
            return true;
        }
        if !roots.meets(nodes) {
            return true;
        }
        // The rf edges `src → r` that the morally strong coherence edge
        // `src → r` (an RMW's, once ordered after its source) does not give
        // already; the others change no path. Gathered at the first row
        // that needs them.
        let mut rf_own: Option<S> = None;
        let mut row = |a: usize| -> S {
            let mut out = self.ser_out(st, co, nodes, a);
            if l.writes.has(a) {
                let own = *rf_own.get_or_insert_with(|| {
                    members(nodes & l.reads)
                        .filter(|&r| {
                            let src = st.rf[r];
                            src != NONE && l.ms(src as usize, r) && !co[src as usize].has(r)
                        })
                        .fold(S::EMPTY, |acc, r| acc | bit(r))
                });
                for r in members(own) {
                    if st.rf[r] as usize == a {
                        out |= bit(r);
                    }
                }
            }
            out & nodes
        };
        let mut done = S::EMPTY;
        let mut on_stack = S::EMPTY;
        // Each entry keeps its node's row, computed once when it enters.
        let mut stack: SmallVec<[(usize, S); 32]> = SmallVec::new();
        for root in members(roots & nodes) {
            if done.has(root) {
                continue;
            }
            on_stack |= bit(root);
            stack.push((root, row(root)));
            while let Some(&(a, out)) = stack.last() {
                let left = out & !done;
                if left.meets(on_stack) {
                    return false;
                }
                match left.first() {
                    Some(next) => {
                        on_stack |= bit(next);
                        stack.push((next, row(next)));
                    }
                    None => {
                        on_stack &= !bit::<S>(a);
                        done |= bit(a);
                        stack.pop();
                    }
                }
            }
        }
        true
    }

    /// Issue write `w` with value `value`: it becomes a version, ordered
    /// against every morally strong version of its location one way or the
    /// other (each orientation a separate state). Returns the consistent ones.
    fn issue_write(&self, st: &State<S>, w: usize, value: Value, seq: u16) -> Vec<Box<State<S>>> {
        self.issue_write_owned(Box::new(st.clone()), w, value, seq, Coherence::Eager)
    }

    /// [`Machine::issue_write`] on a state the caller gives up (saves a
    /// copy). With [`Coherence::Lazy`] nothing is oriented: one state at most.
    fn issue_write_owned(
        &self,
        mut s: Box<State<S>>,
        w: usize,
        value: Value,
        seq: u16,
        co: Coherence,
    ) -> Vec<Box<State<S>>> {
        let l = &self.layout;
        let loc = l.slots[w].loc;
        let partners: SmallVec<[usize; 8]> = match co {
            Coherence::Eager => {
                members(s.versions & l.loc_slots[loc] & l.ms[w] & !l.inits).collect()
            }
            Coherence::Lazy => SmallVec::new(),
        };
        s.versions |= bit(w);
        s.value[w] = value;
        s.seq[w] = seq;
        let init = members(l.loc_slots[loc] & l.inits).next().unwrap();
        // `w` is a new node (or a bound RMW's, whose bind was checked).
        let changed = bit::<S>(w) | self.add_co(&mut s, init, w);
        let mut out = Vec::new();
        self.orient(s, w, &partners, changed, &mut out);
        out
    }

    /// Issue write `w` in `s` itself when no orientation is a choice (no
    /// morally strong version to order it against, or lazy coherence). `None`
    /// if there is one (then `s` is unchanged); `Some(false)` if a check fails.
    fn issue_write_single(
        &self,
        s: &mut State<S>,
        w: usize,
        value: Value,
        seq: u16,
        co: Coherence,
    ) -> Option<bool> {
        let l = &self.layout;
        let loc = l.slots[w].loc;
        if co == Coherence::Eager && (s.versions & l.loc_slots[loc] & l.ms[w]).meets(!l.inits) {
            return None;
        }
        s.versions |= bit(w);
        s.value[w] = value;
        s.seq[w] = seq;
        let init = members(l.loc_slots[loc] & l.inits).next().unwrap();
        let changed = bit::<S>(w) | self.add_co(s, init, w);
        Some(self.co_check_after(s, loc, changed).is_ok())
    }

    /// Order `w` against each of `partners` both ways; `changed` gathers
    /// the new node and the targets of the new coherence edges, which the
    /// check at the end needs ([`Machine::co_check_after`]).
    fn orient(
        &self,
        st: Box<State<S>>,
        w: usize,
        partners: &[usize],
        changed: S,
        out: &mut Vec<Box<State<S>>>,
    ) {
        if self.interrupted() {
            return;
        }
        let Some((&m, rest)) = partners.split_first() else {
            if self
                .co_check_after(&st, self.layout.slots[w].loc, changed)
                .is_ok()
            {
                out.push(st);
            }
            return;
        };
        if st.co_before(m, w) || st.co_before(w, m) {
            return self.orient(st, w, rest, changed, out);
        }
        // Neither is coherence-before the other, so either edge keeps co acyclic.
        let mut first = Box::new((*st).clone());
        let gained = self.add_co(&mut first, m, w);
        self.orient(first, w, rest, changed | gained, out);
        let mut second = st;
        let gained = self.add_co(&mut second, w, m);
        self.orient(second, w, rest, changed | gained, out);
    }

    /// Bind read `r` of thread `t` to version `v` (ISSUE-R): the early
    /// Causality check against the thread's current view, and SC per location.
    fn bind(&self, st: &State<S>, t: usize, r: usize, v: usize, seq: u16) -> Option<Box<State<S>>> {
        if !self.bind_allowed(st, t, r, v) {
            return None;
        }
        let mut s = Box::new(st.clone());
        self.bind_in(&mut s, r, v, seq).then_some(s)
    }

    /// [`Machine::bind`] on a state the caller gives up (saves a copy).
    fn bind_owned(
        &self,
        mut s: Box<State<S>>,
        t: usize,
        r: usize,
        v: usize,
        seq: u16,
    ) -> Option<Box<State<S>>> {
        (self.bind_allowed(&s, t, r, v) && self.bind_in(&mut s, r, v, seq)).then_some(s)
    }

    /// The early Causality check of a bind: no write `t`'s view already
    /// shows on `r`'s line is coherence-after `v`.
    fn bind_allowed(&self, st: &State<S>, t: usize, r: usize, v: usize) -> bool {
        self.bind_check(st, t, r, v).is_ok()
    }

    /// [`Machine::bind_allowed`], naming the newer write the view shows.
    fn bind_check(&self, st: &State<S>, t: usize, r: usize, v: usize) -> Result<(), Reason> {
        let k = &st.threads[t].view;
        // A partial front is fine here: this early check only rejects what the
        // full check at retirement would reject too.
        let (f, _) = self.front_plus(st, k, r);
        match members(f).find(|&w| st.co_before(v, w)) {
            Some(w) => Err(Reason::Stale {
                read: r,
                version: v,
                newer: w,
            }),
            None => Ok(()),
        }
    }

    /// Record the bind in `s` and check SC per location.
    fn bind_in(&self, s: &mut State<S>, r: usize, v: usize, seq: u16) -> bool {
        s.bound |= bit(r);
        s.rf[r] = v as u16;
        s.seq[r] = seq;
        // `r` is the one new node: every new edge enters or leaves it.
        let loc = self.layout.slots[r].loc;
        if self.incremental_sc {
            self.ser_ok_through(s, &s.co, loc, bit(r))
        } else {
            self.ser_ok(s, loc)
        }
    }

    /// Whether thread `u` may still arrive at the barrier named `id` in CTA `cta`.
    fn may_arrive(&self, st: &State<S>, u: usize, cta: usize, id: &[Value]) -> bool {
        let th = &self.program.threads[u];
        let ts = &st.threads[u];
        if ts.finished(th.code.len()) || self.cta_of_thread(u) != cta {
            return false;
        }
        let from = ts.pc + ts.arrived as usize;
        if from >= th.code.len() {
            return false;
        }
        crate::model::hang::may_reach_barrier(th, &self.reach[u][from], &|r| Some(ts.regs[r]), id)
    }

    /// The threads a count-less phase of barrier `id` in CTA `cta` waits
    /// for: the lanes of a `bar.warp.sync`'s mask, else every source thread
    /// of the CTA.
    pub fn barrier_participants(&self, cta: usize, id: &[crate::ir::Value]) -> Vec<usize> {
        let (gpu, c) = self.layout.ctas[cta];
        crate::model::barrier::participants(&self.program, gpu, c, id)
            .unwrap_or_else(|| self.cta_threads[cta].clone())
    }

    /// The source threads placed in CTA `cta` (an index into [`Layout::ctas`]).
    pub fn cta_threads(&self, cta: usize) -> &[usize] {
        &self.cta_threads[cta]
    }

    /// The undefined behaviour a state has reached, if any: the least
    /// (thread, instruction) order, so the report does not depend on the
    /// order of exploration. Barrier arrivals that are undefined themselves
    /// (`model::barrier::BarrierUb`), phases whose arrivals disagree on
    /// the count (ISA reading), retired mbarrier read-modify-writes
    /// that made the barrier's state undefined (`model::ub::mbarrier_step`),
    /// retired accesses to pending `wgmma` accumulators
    /// (`model::ub::accumulator_ub`), and, at a hang witness, lanes of one
    /// warp stuck at different barriers ([`Machine::warp_divergence`]).
    pub fn undefined(&self, st: &State<S>) -> Option<crate::model::ub::Undefined> {
        use crate::model::barrier::{self, PhaseMember, Reading};
        let member = |a: &state::Arrival| PhaseMember {
            ub: a.ub,
            needed: a.needed,
            count: a.count,
            at: (a.thread, self.layout.slots[a.slot].pc),
            aligned_warp: barrier::aligned_warp(
                &self.program,
                a.thread,
                self.layout.slots[a.slot].pc,
            ),
        };
        let mut found: Option<crate::model::ub::Undefined> = None;
        for (i, a) in st.arrivals.iter().enumerate() {
            let same = |b: &&state::Arrival| b.cta == a.cta && b.id == a.id && b.phase == a.phase;
            // Each phase once, at its first arrival; under the Dat3M reading
            // phases are per thread and only arrivals undefined in themselves
            // count (none are).
            let u = if self.barriers == Reading::Dat3m {
                barrier::phase_ub(std::iter::once(member(a)))
            } else if st.arrivals[..i].iter().any(|b| same(&b)) {
                continue;
            } else {
                barrier::phase_ub(st.arrivals[i..].iter().filter(same).map(member))
            };
            if let Some(u) = u {
                if found.as_ref().is_none_or(|f| u < *f) {
                    found = Some(u);
                }
            }
        }
        for v in members(self.mbar_rmws & st.retired) {
            let info = &self.layout.slots[v];
            let t = info.thread.expect("an RMW has a thread");
            let u = crate::model::ub::mbarrier_step(
                &self.program,
                t,
                info.pc,
                self.read_value(st, v),
                st.value[v],
            );
            if let Some(u) = u {
                if found.as_ref().is_none_or(|f| u < *f) {
                    found = Some(u);
                }
            }
        }
        // Undefined steps the threads have retired.
        for v in members(self.undefined_steps & st.retired) {
            let info = &self.layout.slots[v];
            let t = info.thread.expect("an undefined step has a thread");
            if let Some(u) = crate::model::ub::step_ub(&self.program, t, info.pc) {
                if found.as_ref().is_none_or(|f| u < *f) {
                    found = Some(u);
                }
            }
        }
        // Accesses to pending `wgmma` accumulators the threads have retired
        // (straight-line threads: past `pc` exactly when the next
        // instruction to retire is later).
        if let Some(u) =
            crate::model::ub::accumulator_ub(&self.program, |t, pc| st.threads[t].pc > pc)
        {
            if found.as_ref().is_none_or(|f| u < *f) {
                found = Some(u);
            }
        }
        if let Some(u) = self.warp_divergence(st) {
            if found.as_ref().is_none_or(|f| u < *f) {
                found = Some(u);
            }
        }
        found
    }

    /// At a hang witness, lanes of one warp that wait for good at different
    /// CTA barriers, one of them counted (`model::barrier::warp_divergence`):
    /// a lane at a counted barrier that its warp's other lanes never reach
    /// (it waits at the gate, [`Machine::warp_gate`]) or one that has
    /// arrived and waits for its phase; or a lane at an `.aligned` barrier
    /// while another lane of its warp is stuck elsewhere
    /// (`model::barrier::aligned_lane_away`). Only a hang makes it so:
    /// before that, a lane waiting for a phase may still go on to the others.
    fn warp_divergence(&self, st: &State<S>) -> Option<crate::model::ub::Undefined> {
        use crate::model::barrier::{self, Reading};
        if self.barriers != Reading::Isa {
            return None;
        }
        let differ = if self.warps_diverge {
            self.warp_barriers_differ(st)
        } else {
            None
        };
        let away = !self.aligned_lanes.is_empty() && self.lane_may_stay_away(st);
        if differ.is_none() && !away {
            return None;
        }
        let hang::Quiescence::Hang(h) = self.quiescence(st) else {
            return None;
        };
        let away = if away {
            let stuck: Vec<(usize, usize)> = h.stuck.iter().map(|s| (s.thread, s.pc)).collect();
            barrier::aligned_lane_away(&self.program, &stuck)
        } else {
            None
        };
        match (differ, away) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether some unfinished lane stands at an `.aligned` CTA barrier while
    /// another unfinished lane of its warp stands at a different instruction:
    /// the cheap test before [`Machine::warp_divergence`] asks for the hang.
    fn lane_may_stay_away(&self, st: &State<S>) -> bool {
        let p = &self.program;
        let live = |t: usize| {
            let ts = &st.threads[t];
            !ts.cut && !ts.finished(p.threads[t].code.len()) && p.threads[t].agent.is_none()
        };
        p.threads.iter().enumerate().any(|(t, th)| {
            let pc = st.threads[t].pc;
            live(t)
                && matches!(
                    th.code.get(pc),
                    Some(Instr::Barrier { kind, aligned: true, .. }) if !kind.is_warp()
                )
                && self.aligned_lanes[t]
                    .iter()
                    .any(|&o| live(o) && p.threads[o].site(st.threads[o].pc) != th.site(pc))
        })
    }

    /// The stuck lanes of one warp at different CTA barriers, one of them
    /// counted, if `st` were a hang (`model::barrier::warp_divergence`).
    fn warp_barriers_differ(&self, st: &State<S>) -> Option<crate::model::ub::Undefined> {
        use crate::model::barrier::{self, StuckLane};
        let p = &self.program;
        let mut lanes = Vec::new();
        let mut windows = None;
        for (t, th) in p.threads.iter().enumerate() {
            let ts = &st.threads[t];
            if ts.cut || ts.finished(th.code.len()) || th.agent.is_some() {
                continue;
            }
            let Some(i @ Instr::Barrier { kind, id, .. }) = th.code.get(ts.pc) else {
                continue;
            };
            if kind.is_warp() {
                continue;
            }
            let counted = barrier::warp_unit(p, t, i);
            let name = if ts.arrived {
                self.layout
                    .slot(t, ts.pc, ts.execs[ts.pc] as usize)
                    .and_then(|slot| st.arrivals.iter().find(|a| a.slot == slot && a.thread == t))
                    .and_then(|a| a.id.first().copied())
            } else if counted {
                let w = windows.get_or_insert_with(|| window::Windows::new(self, st));
                w.get(t)
                    .entries
                    .first()
                    .and_then(|e| window::operand(&e.regs, &id[0]))
            } else {
                None
            };
            if let Some(name) = name {
                lanes.push(StuckLane {
                    thread: t,
                    pc: ts.pc,
                    name,
                    counted,
                });
            }
        }
        barrier::warp_divergence(p, &lanes)
    }

    fn cta_of_thread(&self, t: usize) -> usize {
        let p = self.layout.placement[t];
        self.layout
            .ctas
            .iter()
            .position(|c| *c == (p.gpu, p.cta))
            .unwrap()
    }
}

/// The names of the counted CTA barriers of one CTA's threads
/// ([`Machine::cta_counted`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum CountedNames {
    /// No barrier of the CTA has a thread count.
    #[default]
    None,
    /// Every counted barrier names one of these constants.
    Names(SmallVec<[Value; 2]>),
    /// Some counted barrier names its barrier with a register: any name
    /// may be counted.
    Any,
}

impl CountedNames {
    /// The counted names of the CTA barriers of `threads` (warp barriers,
    /// `bar.warp.sync`, are no CTA barriers).
    fn of(p: &Program, threads: &[usize]) -> CountedNames {
        let mut names = CountedNames::None;
        for &t in threads {
            for i in &p.threads[t].code {
                let Instr::Barrier {
                    kind, id, count, ..
                } = i
                else {
                    continue;
                };
                if kind.is_warp() || (count.is_none() && id.len() != 2) {
                    continue;
                }
                names = match (names, id.first()) {
                    (CountedNames::Any, _) | (_, Some(Operand::Reg(_)) | None) => CountedNames::Any,
                    (CountedNames::None, Some(Operand::Imm(v))) => {
                        CountedNames::Names(smallvec::smallvec![*v])
                    }
                    (CountedNames::Names(mut ns), Some(Operand::Imm(v))) => {
                        if !ns.contains(v) {
                            ns.push(*v);
                        }
                        CountedNames::Names(ns)
                    }
                };
            }
        }
        names
    }

    /// Whether a barrier named `name` may have counted arrivals.
    pub(crate) fn may_count(&self, name: Option<Value>) -> bool {
        match (self, name) {
            (CountedNames::None, _) => false,
            (CountedNames::Any, _) | (CountedNames::Names(_), None) => true,
            (CountedNames::Names(ns), Some(n)) => ns.contains(&n),
        }
    }
}

/// Whether the graph on `nodes` with successor rows `succ` is acyclic: a
/// depth-first search that fails on reaching a node on its stack (linear in
/// nodes; peeling off sinks round by round took a round per node of a chain,
/// as a counter's additions are).
///
/// The node on top looks at its row afresh each time it is on top, less the
/// nodes already finished: one word operation tells whether the row meets
/// the stack (a cycle), and the next node to enter is the row's first
/// unfinished one. Rows of a closed coherence order are dense (a chain of
/// `k` additions has `k²/2` edges), so popping every edge bit by bit, as
/// this did before, was quadratic; now each node enters the stack once and
/// is on top once per child plus once, so the search is linear in the nodes.
/// Edges to finished nodes cannot close a cycle (a finished node reaches no
/// node on the stack), so leaving them out changes no answer.
fn acyclic<S: Bits>(nodes: S, succ: &[S]) -> bool {
    let mut done = S::EMPTY;
    let mut on_stack = S::EMPTY;
    let mut stack: SmallVec<[usize; 32]> = SmallVec::new();
    for root in members(nodes) {
        if done.has(root) {
            continue;
        }
        on_stack |= bit(root);
        stack.push(root);
        while let Some(&a) = stack.last() {
            let row = succ[a] & nodes & !done;
            if !(row & on_stack).is_empty() {
                return false;
            }
            match row.first() {
                Some(next) => {
                    on_stack |= bit(next);
                    stack.push(next);
                }
                None => {
                    on_stack &= !bit::<S>(a);
                    done |= bit(a);
                    stack.pop();
                }
            }
        }
    }
    true
}

/// Add `a <co b` to the closed coherence order `co` over `versions`.
/// Returns the versions some row gained (those with a new predecessor).
fn add_co_in<S: Bits>(versions: S, co: &mut [S], a: usize, b: usize) -> S {
    // Closed: `a`'s predecessors already have `b` and all that follows it.
    if co[a].has(b) {
        return S::EMPTY;
    }
    let add = S::bit(b) | co[b];
    let mut gained = S::EMPTY;
    for v in members(versions) {
        if v == a || co[v].has(a) {
            gained |= add & !co[v];
            co[v] |= add;
        }
    }
    gained
}

/// [`add_co_in`] for every `a` of `from` at once ([`Machine::add_co_from`]).
fn add_co_from_in<S: Bits>(versions: S, co: &mut [S], from: S, b: usize) -> S {
    let add = S::bit(b) | co[b];
    let mut gained = S::EMPTY;
    for v in members(versions) {
        if from.has(v) || co[v].meets(from) {
            gained |= add & !co[v];
            co[v] |= add;
        }
    }
    gained
}

impl<S: Bits> State<S> {
    fn with_init_values(mut self, m: &Machine<'_, S>) -> State<S> {
        for v in members(m.layout.inits) {
            self.value[v] = m.program.locations[m.layout.slots[v].loc].init;
        }
        self
    }
}

#[cfg(test)]
mod acyclic_tests {
    use super::acyclic;
    use crate::rel::{Bits, bit, members};
    use rand_core::{Rng, SeedableRng};
    use rand_xorshift::XorShiftRng;

    /// Acyclicity by Kahn's algorithm: take away sources until none is left.
    fn by_sources(nodes: u128, succ: &[u128]) -> bool {
        let mut left = nodes;
        loop {
            let targets = members(left).fold(0u128, |t, a| t | (succ[a] & left));
            let sources = left & !targets;
            if sources == 0 {
                return left == 0;
            }
            left &= !sources;
        }
    }

    #[test]
    fn the_depth_first_search_agrees_with_taking_sources_away() {
        let mut rng = XorShiftRng::seed_from_u64(27);
        let (mut cyclic, mut acyc) = (0, 0);
        for round in 0..4000 {
            let n = 1 + (rng.next_u32() % 40) as usize;
            // Sparse and dense graphs, and closed chains (a counter's order).
            let density = [2u32, 8, 30, 60][round % 4];
            let mut succ = vec![0u128; n];
            for (a, row) in succ.iter_mut().enumerate() {
                for b in 0..n {
                    let forward = b > a;
                    let p = if forward { density * 2 } else { density / 2 };
                    if rng.next_u32() % 100 < p {
                        *row |= bit::<u128>(b);
                    }
                }
            }
            let nodes = members(u128::below(n))
                .filter(|_| rng.next_u32() % 8 != 0)
                .fold(0u128, |s, a| s | bit::<u128>(a));
            let want = by_sources(nodes, &succ);
            assert_eq!(
                acyclic(nodes, &succ),
                want,
                "round {round}: {succ:?} on {nodes:#x}"
            );
            if want { acyc += 1 } else { cyclic += 1 }
        }
        assert!(
            cyclic > 500 && acyc > 500,
            "{cyclic} cyclic, {acyc} acyclic"
        );
        // A closed chain of 100 nodes, and the same with one edge back.
        let mut chain: Vec<u128> = (0..100)
            .map(|a| u128::below(100) & !u128::below(a + 1))
            .collect();
        assert!(acyclic(u128::below(100), &chain));
        chain[70] |= bit::<u128>(3);
        assert!(!acyclic(u128::below(100), &chain));
    }
}

#[cfg(test)]
mod add_co_tests {
    use super::{add_co_from_in, add_co_in};
    use crate::rel::{Bits, bit, members};
    use rand_core::{Rng, SeedableRng};
    use rand_xorshift::XorShiftRng;

    /// Adding the edges `a → b` for every `a` of a set at once gives the
    /// rows and the gained targets that adding them one by one gives, on
    /// random closed acyclic orders; where the edges close a cycle, both
    /// orders show one (a version that follows itself).
    #[test]
    fn edges_at_once_are_the_edges_one_by_one() {
        let mut rng = XorShiftRng::seed_from_u64(27);
        let (mut acyc, mut cyclic) = (0, 0);
        for round in 0..3000 {
            let n = 2 + (rng.next_u32() % 40) as usize;
            let versions = members(u128::below(n))
                .filter(|_| rng.next_u32() % 6 != 0)
                .fold(0u128, |s, a| s | bit::<u128>(a));
            // A random order along the indices, closed edge by edge.
            let mut co = vec![0u128; n];
            for a in members(versions) {
                for b in members(versions & !u128::below(a + 1)) {
                    if rng.next_u32() % 5 == 0 {
                        add_co_in(versions, &mut co, a, b);
                    }
                }
            }
            if versions.count() < 2 {
                continue;
            }
            let b = members(versions)
                .nth(rng.next_u32() as usize % versions.count())
                .expect("a version");
            let from = members(versions & !bit::<u128>(b))
                .filter(|_| rng.next_u32() % 4 == 0)
                .fold(0u128, |s, a| s | bit::<u128>(a));
            let mut one = co.clone();
            let mut by_one = 0u128;
            for a in members(from) {
                by_one |= add_co_in(versions, &mut one, a, b);
            }
            let mut all = co.clone();
            let at_once = add_co_from_in(versions, &mut all, from, b);
            let cycle = |c: &[u128]| members(versions).any(|v| c[v].has(v));
            if from.meets(co[b]) {
                cyclic += 1;
                assert!(cycle(&one) && cycle(&all), "round {round}: a cycle");
            } else {
                acyc += 1;
                assert!(!cycle(&all), "round {round}: no cycle");
                assert_eq!(one, all, "round {round}: rows");
                assert_eq!(by_one, at_once, "round {round}: gained");
            }
        }
        assert!(
            acyc > 500 && cyclic > 500,
            "{acyc} acyclic, {cyclic} cyclic"
        );
    }
}
