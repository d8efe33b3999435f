//! The transitions of the machine (machine-m2.md §4), each a named [`Step`].
//!
//! * **Retire** (in program order): scoped propagation in (acquire merges of
//!   release snapshots, `fence.sc` merges, barrier merges — possibly waiting),
//!   validation against the thread's view (Causality and Coherence), then the
//!   view update (tokens, proxy-fence promotions, snapshots). A store that was
//!   not forwarded earlier is issued here.
//! * **Bind**: a load (or an RMW's read) returns a version — at the retire
//!   pointer, or earlier when a later write depends on it. A write further
//!   ahead in some thread's window may be issued on the spot and returned
//!   (forwarding), which is how non-multi-copy-atomic and load-buffering
//!   behaviours arise.
//! * **Arrive** / **Pass** at barriers; **Cut** at the loop bound.
//!
//! Reductions (machine-m2.md §7, all exact): a thread whose next instruction
//! can retire without a choice retires first and alone (R1); loads bind late
//! unless a later write depends on them (R2); stores issue at retirement
//! unless a load returns them (R3); coherence is oriented only between
//! morally strong versions (R4).

use smallvec::SmallVec;

use crate::ir::{BarrierKind, FenceSem, Instr, Proxy, Value, WaitPhase, mbar};
use crate::model::barrier::{self, Reading};
use crate::rel::{Bits, bit, members};

use super::layout::SlotKind;
use super::reason::Reason;
use super::state::{Arrival, Snapshot, Stage, State, View};
use super::symmetry::Twins;
use super::window::{End, Entry, Window, Windows, operand};
use super::{Coherence, Machine};
use crate::model::loops::{Beyond, goes_back_without_reading};

/// One transition: which thread did what at which instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The thread.
    pub thread: usize,
    /// Its instruction.
    pub pc: usize,
    /// What happened.
    pub kind: StepKind,
}

/// The kinds of transition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// The instruction retired (stores are issued here unless forwarded before).
    Retire,
    /// A load or RMW read (slot `slot`) returned version `version`; the
    /// writes in `forwarded` were issued in the same step to make that possible.
    Bind {
        /// The read.
        slot: usize,
        /// The version it returned.
        version: usize,
        /// Writes issued early by forwarding.
        forwarded: SmallVec<[usize; 2]>,
    },
    /// The thread arrived at a barrier and waits.
    Arrive,
    /// The barrier phase completed; the thread goes on.
    Pass,
    /// The thread would take a loop back edge beyond the bound; it stops here.
    Cut,
}

/// Successor states with the step to each.
pub(super) type Successors<S> = Vec<(Step, Box<State<S>>)>;

/// States with a read bound, each with the forwarding chain that bound it.
type BoundStates<S> = Vec<(SmallVec<[usize; 2]>, Box<State<S>>)>;

/// What retiring an instruction amounts to.
pub(super) enum Plan<S: Bits> {
    /// Registers only, or a branch: go on at `target` (or the next
    /// instruction), counting a bounded back edge.
    Advance(Option<usize>, Option<usize>),
    /// A bounded back edge taken once too often: the thread stops.
    Cut,
    /// A spin-loop back edge taken: this path never finishes.
    Die,
    /// A store: issue it (unless forwarded earlier) with this value, then
    /// validate against the view.
    Store { issue: Option<Value>, k: View<S> },
    /// A bound load or RMW, a fence or a proxy fence: validate against the
    /// view (after propagation) and update it.
    Finish(View<S>),
    /// Arrive at a barrier, with the other lanes of the thread's warp that
    /// arrive in the same event (`model::barrier::warp_unit`), each at its
    /// entry.
    Arrive(Vec<(usize, Entry)>),
    /// Pass a barrier whose phase is complete, with the merged view.
    Pass(View<S>),
}

/// Successors of a state for exhaustive search.
#[derive(Default)]
#[allow(clippy::vec_box)] // boxed so the explorer moves states by pointer
pub struct Folded<S: Bits = u128> {
    /// The successor states (each carried through its choice-free retirements).
    pub states: Vec<Box<State<S>>>,
    /// Choice-free retirements carried out in place.
    pub folded: u64,
    /// Transitions of other threads left unexplored because a choice-free
    /// retirement or a persistent thread's choices went alone (one per other
    /// unfinished thread and step).
    pub pruned: u64,
    /// 1 if the state's choices were those of its persistent thread alone (P2).
    pub persistent: u64,
}

/// The symmetric choices to leave out while a read's binds are listed: the
/// state's twins and the threads the forwarding chain has named so far
/// (the reading thread first).
struct Pick<'w> {
    twins: Option<&'w Twins>,
    named: SmallVec<[usize; 4]>,
}

impl Pick<'_> {
    /// Whether a choice naming thread `u` next is left out ([`Twins::shadowed`]).
    fn shadowed(&self, u: usize) -> bool {
        self.twins.is_some_and(|w| w.shadowed(u, &self.named))
    }
}

/// The result of carrying out a plan in place.
enum InPlace {
    /// Done; the step's kind.
    Done(StepKind),
    /// A check failed: the state is dead.
    Dead,
    /// A store's coherence orientations are a choice: not done.
    Branches,
}

/// How a lane's arrival stands against its warp ([`Machine::warp_gate`]).
pub(super) enum WarpGate {
    /// Not a warp's arrival: the thread arrives alone.
    Alone,
    /// It waits: for these lanes to reach the barrier (none: another lane
    /// arrives for the warp).
    Wait(Vec<usize>),
    /// The thread arrives for its warp, with these other lanes (each at its
    /// entry).
    Go(Vec<(usize, Entry)>),
}

// Short-lived (one per thread and step), so the size of `Ready` does not matter.
#[allow(clippy::large_enum_variant)]
pub(super) enum Retire<S: Bits> {
    /// The retirement of thread `t`'s entry needs no choice but its plan's own.
    Ready(usize, Entry, Plan<S>),
    /// It needs a choice (a load to bind, a `fence.sc` to order).
    Choice,
    /// It waits for another thread.
    Blocked,
}

/// How many read-modify-writes one bind may forward, one inside another
/// (each reading the next one's write).
pub(super) const FORWARD_DEPTH: u32 = 3;

impl<S: Bits> Machine<'_, S> {
    /// Every successor of `st`, in a deterministic order.
    pub fn successors(&self, st: &State<S>) -> Vec<(Step, Box<State<S>>)> {
        self.successors_with(st, Coherence::Eager, false, None).0
    }

    /// [`Machine::successors`] with coherence ordered as `co` says; with
    /// `persistent`, a state where no thread can retire without a choice
    /// offers only the choices of its persistent thread, if it has one (P2;
    /// the second value is that thread). With `twins`, symmetric choices are
    /// offered once ([`Twins`]).
    fn successors_with(
        &self,
        st: &State<S>,
        co: Coherence,
        persistent: bool,
        twins: Option<&Twins>,
    ) -> (Successors<S>, Option<usize>) {
        let windows = Windows::new(self, st);
        if self.por {
            if let Some(out) = self.eager(st, &windows, co) {
                return (out, None);
            }
            if persistent {
                if let Some(t) = self.persistent_thread(st, &windows) {
                    let mut out = Vec::new();
                    self.thread_choices(st, t, &windows, co, twins, &mut out);
                    return (out, Some(t));
                }
            }
            return (self.choices(st, &windows, co, twins), None);
        }
        // Without reduction: every thread's choice-free retirement is one
        // successor among the others.
        let mut out = Vec::new();
        for t in 0..st.threads.len() {
            if st.threads[t].finished(self.program.threads[t].code.len()) {
                continue;
            }
            if let Retire::Ready(t, e, plan) = self.try_retire(st, t, &windows) {
                out.extend(self.apply(st, t, &e, plan, co));
            }
        }
        out.extend(self.choices(st, &windows, co, twins));
        (out, None)
    }

    /// Successors for exhaustive search: as [`Machine::successors`], but each
    /// successor is carried on through every retirement that needs no choice
    /// (R1 with a single outcome), so only states where something is chosen
    /// are returned. Also returns how many such steps were folded in, and how
    /// many transitions of other threads they made unnecessary.
    pub fn successors_folded(&self, st: &State<S>) -> Folded<S> {
        self.successors_folded_with(st, None)
    }

    /// [`Machine::successors_folded`] offering symmetric choices once: of
    /// each class of `twins` only its least member's choices, and within a
    /// choice only the least twin not yet named (`docs/exploration.md`,
    /// "Symmetric choices"). Every successor left out is a permutation of
    /// one offered by a permutation that fixes `st`, so under a search that
    /// remembers states one per orbit it loses no final state.
    pub fn successors_folded_with(&self, st: &State<S>, twins: Option<&Twins>) -> Folded<S> {
        let mut f = Folded::default();
        let unfinished = |s: &State<S>| {
            (0..s.threads.len())
                .filter(|&t| !s.threads[t].finished(self.program.threads[t].code.len()))
                .count() as u64
        };
        if self.por && self.is_ready(st) {
            f.pruned += unfinished(st).saturating_sub(1);
        }
        // `--no-por` turns every reduction off, lazy coherence included.
        let co = if self.por {
            self.coherence
        } else {
            Coherence::Eager
        };
        // A commuting addition goes alone (`op::commute`, `commute_alone`).
        if self.por {
            if let Some(one) = self.commute_alone(st, co) {
                return one;
            }
        }
        let (succ, alone) = self.successors_with(st, co, self.por && self.persistent, twins);
        if alone.is_some() {
            f.persistent = 1;
            f.pruned += unfinished(st).saturating_sub(1);
        }
        self.fold_into(succ, co, &mut f);
        f
    }

    /// Carry each successor of `succ` through its choice-free retirements
    /// (with the partial-order reduction) into `f`, leaving out the dead and
    /// the doomed ones.
    pub(super) fn fold_into(&self, succ: Successors<S>, co: Coherence, f: &mut Folded<S>) {
        let unfinished = |s: &State<S>| {
            (0..s.threads.len())
                .filter(|&t| !s.threads[t].finished(self.program.threads[t].code.len()))
                .count() as u64
        };
        'next: for (_, mut cur) in succ {
            if self.interrupted() {
                break;
            }
            while self.por && !self.is_final(&cur) {
                let windows = Windows::new(self, &cur);
                let Some((t, e, plan)) = self.first_ready(&cur, &windows) else {
                    break;
                };
                drop(windows);
                let others = unfinished(&cur).saturating_sub(1);
                match self.apply_in_place(&mut cur, t, &e, plan, co) {
                    InPlace::Done(_) => {
                        f.folded += 1;
                        f.pruned += others;
                    }
                    InPlace::Dead => continue 'next,
                    InPlace::Branches => break,
                }
            }
            // Doomed speculation: no final state, hang witness or cut ahead.
            if self.por && self.doomed(&cur) {
                continue;
            }
            f.states.push(cur);
        }
    }

    /// Whether some thread can retire without a choice.
    fn is_ready(&self, st: &State<S>) -> bool {
        let windows = Windows::new(self, st);
        self.first_ready(st, &windows).is_some()
    }

    /// R1: the first thread whose next instruction can retire without a choice.
    pub(super) fn first_ready(
        &self,
        st: &State<S>,
        windows: &Windows<'_, '_, S>,
    ) -> Option<(usize, Entry, Plan<S>)> {
        (0..st.threads.len())
            .filter(|&t| !st.threads[t].finished(self.program.threads[t].code.len()))
            .find_map(|t| match self.try_retire(st, t, windows) {
                Retire::Ready(t, e, plan) => Some((t, e, plan)),
                _ => None,
            })
    }

    /// R1: the first thread that can retire without a choice goes alone.
    fn eager(
        &self,
        st: &State<S>,
        windows: &Windows<'_, '_, S>,
        co: Coherence,
    ) -> Option<Vec<(Step, Box<State<S>>)>> {
        let (t, e, plan) = self.first_ready(st, windows)?;
        Some(self.apply(st, t, &e, plan, co))
    }

    /// The choices of a state where no thread can retire without one.
    fn choices(
        &self,
        st: &State<S>,
        windows: &Windows<'_, '_, S>,
        co: Coherence,
        twins: Option<&Twins>,
    ) -> Vec<(Step, Box<State<S>>)> {
        let mut out = Vec::new();
        for t in 0..st.threads.len() {
            if self.interrupted() {
                break;
            }
            // A twin below `t` offers the same choices, swapped.
            if twins.is_some_and(|w| w.shadowed(t, &[])) {
                continue;
            }
            self.thread_choices(st, t, windows, co, twins, &mut out);
        }
        out
    }

    /// Thread `t`'s choices (binds, counted barrier arrivals, `fence.sc`
    /// retirements) at a state where no thread can retire without one.
    fn thread_choices(
        &self,
        st: &State<S>,
        t: usize,
        windows: &Windows<'_, '_, S>,
        co: Coherence,
        twins: Option<&Twins>,
        out: &mut Vec<(Step, Box<State<S>>)>,
    ) {
        {
            if st.threads[t].finished(self.program.threads[t].code.len()) {
                return;
            }
            let w = windows.get(t);
            let Some(e0) = w.entries.first() else {
                return;
            };
            let instr = &self.program.threads[t].code[e0.pc];
            match instr {
                Instr::Load { .. } | Instr::Rmw { .. } | Instr::MbarWait { .. }
                    if !self.is_bound(st, e0) =>
                {
                    self.push_binds(st, t, e0, windows, co, twins, out)
                }
                Instr::Barrier { .. }
                    if !st.threads[t].arrived && self.arrival_is_choice(t, e0) =>
                {
                    match self.warp_gate(st, t, e0, windows) {
                        WarpGate::Wait(_) => {}
                        WarpGate::Alone => out.push(self.arrive(st, t, e0, &[])),
                        WarpGate::Go(with) => out.push(self.arrive(st, t, e0, &with)),
                    }
                }
                Instr::Fence {
                    sem: FenceSem::Sc, ..
                } if self.sc_partner_pending(st, t, e0.slot.unwrap()) => {
                    if let Some(k) = self.propagate_in(st, t, e0.slot.unwrap(), windows) {
                        let mut s = Box::new(st.clone());
                        if self.finish_retire(&mut s, t, e0, k) {
                            out.push((
                                Step {
                                    thread: t,
                                    pc: e0.pc,
                                    kind: StepKind::Retire,
                                },
                                s,
                            ));
                        }
                    }
                }
                _ => {}
            }
            // Early binding of loads (and RMWs) whose value a later write or branch needs.
            for (k, e) in w.entries.iter().enumerate().skip(1) {
                let ins = &self.program.threads[t].code[e.pc];
                let issued_write = e.slot.is_some_and(|s| st.versions.has(s));
                if matches!(
                    ins,
                    Instr::Load { .. } | Instr::Rmw { .. } | Instr::MbarWait { .. }
                ) && !self.is_bound(st, e)
                    && (issued_write || self.feeds_later(t, w, k))
                {
                    self.push_binds(st, t, e, windows, co, twins, out);
                }
            }
        }
    }

    /// P2: the first thread whose choices form a persistent set — no run of
    /// the other threads can change them or be changed by them, so exploring
    /// them alone keeps every final state and every hang witness
    /// (`docs/exploration.md`, "P2"). Such a thread:
    /// * is at a plain load, unbound, outside every loop (so it is stuck in
    ///   no hang witness: it moves on every run to one);
    /// * has no unbound RMW or mbarrier wait in its window (its only choices
    ///   are binds of plain loads: the head, and loads bound early);
    /// * reads only locations whose writes are *settled*: every write of the
    ///   location that may still be issued is already issued, or can be
    ///   forwarded now with the value it will have (so a bind on any later
    ///   run is a bind it can make now).
    fn persistent_thread(&self, st: &State<S>, windows: &Windows<'_, '_, S>) -> Option<usize> {
        (0..st.threads.len()).find(|&t| self.binds_persistent(st, t, windows))
    }

    fn binds_persistent(&self, st: &State<S>, t: usize, windows: &Windows<'_, '_, S>) -> bool {
        let code = &self.program.threads[t].code;
        let ts = &st.threads[t];
        if ts.finished(code.len()) || ts.arrived || !matches!(code[ts.pc], Instr::Load { .. }) {
            return false;
        }
        if let Some(lp) = self.layout.loops[t].loop_at(ts.pc) {
            if !(self.spin_persistent && self.spin_cannot_hang(st, t, lp, windows)) {
                return false;
            }
        }
        let w = windows.get(t);
        let mut locs: S = S::EMPTY;
        for (k, e) in w.entries.iter().enumerate() {
            match &code[e.pc] {
                Instr::Rmw { .. } | Instr::MbarWait { .. } if !self.is_bound(st, e) => {
                    return false;
                }
                Instr::Load { .. }
                    if !self.is_bound(st, e) && (k == 0 || self.feeds_later(t, w, k)) =>
                {
                    locs |= bit(self.layout.slots[e.slot.unwrap()].loc);
                }
                _ => {}
            }
        }
        !locs.is_empty() && members(locs).all(|loc| self.writes_settled(st, windows, loc))
    }

    /// P3: whether thread `t`, at a load of spin loop `lp`, is stuck in no
    /// hang witness reachable from `st`, so that P2 may take its binds alone
    /// (`docs/exploration.md`, "P3"): `lp` is a spin loop (not a retry
    /// loop), every location its body reads has every write any run may
    /// issue issued already ([`Machine::writes_all_issued`]), and an
    /// iteration reading the versions fairness lets a spin read forever
    /// does not go back ([`Machine::spinning_reads`]). No version of those
    /// locations appears later, coherence and views only grow, so the
    /// versions such an iteration may read only shrink: the iteration goes
    /// back in no later state either.
    fn spin_cannot_hang(
        &self,
        st: &State<S>,
        t: usize,
        lp: &crate::model::loops::SpinLoop,
        windows: &Windows<'_, '_, S>,
    ) -> bool {
        if lp.retry.is_some() {
            return false;
        }
        // As a hang witness's thread stands at a spin (`hang.rs`,
        // `standing`): nothing of this iteration retired before `pc` or
        // bound, and every instruction of the body with slots has one left
        // for its next execution (the replay from the head needs them).
        let ts = &st.threads[t];
        let l = &self.layout;
        let fresh = |q: usize| {
            l.base[t][q].is_none()
                || l.slot(t, q, ts.execs[q] as usize)
                    .is_some_and(|s| !st.bound.has(s))
        };
        if (lp.head..ts.pc).any(|q| l.base[t][q].is_some()) || !(lp.head..=lp.back).all(fresh) {
            return false;
        }
        let code = &self.program.threads[t].code;
        let mut locs = S::EMPTY;
        for i in &code[lp.head..=lp.back] {
            match i {
                Instr::Load { access, .. } => locs |= bit(self.program.addresses[access.addr].loc),
                i if crate::model::loops::reads_memory(i) => return false,
                _ => {}
            }
        }
        members(locs).all(|loc| self.writes_all_issued(st, windows, loc))
            && self.spinning_reads(st, t, lp).is_none()
    }

    /// Whether every write of `loc` that some run may still issue is issued
    /// already: no unissued write of it in any thread's window, and none
    /// reachable past a window's end.
    fn writes_all_issued(&self, st: &State<S>, windows: &Windows<'_, '_, S>, loc: usize) -> bool {
        let l = &self.layout;
        (0..st.threads.len()).all(|u| {
            let code = &self.program.threads[u].code;
            if st.threads[u].finished(code.len()) {
                return true;
            }
            let w = windows.get(u);
            let pending = w.entries.iter().any(|e| {
                e.slot.is_some_and(|slot| {
                    let si = &l.slots[slot];
                    si.writes() && si.loc == loc && !st.versions.has(slot)
                })
            });
            !pending && !self.writes_beyond(u, w, loc)
        })
    }

    /// Whether some instruction past the end of thread `u`'s window `w` may
    /// write `loc` (conservatively true when the window gives no place to
    /// look from).
    fn writes_beyond(&self, u: usize, w: &Window, loc: usize) -> bool {
        let from = match w.end {
            End::Finished | End::Spins | End::Bound => return false,
            End::Unresolved(pc) => pc,
            End::Horizon => match w.entries.last() {
                Some(e) => e.pc,
                None => return true,
            },
        };
        self.writes_reach[u][from].has(loc)
    }

    /// Whether every write of `loc` that some run may still issue is issued
    /// already or is a store in its thread's window whose value is known (so
    /// that [`Machine::binds`] forwards it now, with the value and
    /// program-order position it will have).
    fn writes_settled(&self, st: &State<S>, windows: &Windows<'_, '_, S>, loc: usize) -> bool {
        let l = &self.layout;
        (0..st.threads.len()).all(|u| {
            let code = &self.program.threads[u].code;
            if st.threads[u].finished(code.len()) {
                return true;
            }
            let w = windows.get(u);
            for e in &w.entries {
                let Some(slot) = e.slot else { continue };
                let si = &l.slots[slot];
                if !si.writes() || si.loc != loc || st.versions.has(slot) {
                    continue;
                }
                match &code[e.pc] {
                    Instr::Store { src, .. } if operand(&e.regs, src).is_some() => {}
                    _ => return false,
                }
            }
            // Beyond the window: nothing after its end may write `loc`.
            !self.writes_beyond(u, w, loc)
        })
    }

    pub(super) fn is_bound(&self, st: &State<S>, e: &Entry) -> bool {
        e.slot.is_some_and(|s| st.bound.has(s))
    }

    /// Whether the register written by entry `k` flows into a later store,
    /// RMW operand, barrier name or branch (the only reason to bind early).
    fn feeds_later(&self, t: usize, w: &Window, k: usize) -> bool {
        let code = &self.program.threads[t].code;
        let Some(dst) = code[w.entries[k].pc].def() else {
            return false;
        };
        let mut taint: u64 = 1 << (dst % 64);
        let tainted = |taint: u64, i: &Instr| i.uses().iter().any(|r| taint & (1 << (r % 64)) != 0);
        for e in &w.entries[k + 1..] {
            let i = &code[e.pc];
            let hit = tainted(taint, i);
            match i {
                Instr::Store { .. }
                | Instr::Rmw { .. }
                | Instr::Barrier { .. }
                | Instr::Branch { .. }
                    if hit =>
                {
                    return true;
                }
                Instr::Mov { dst, .. } | Instr::Arith { dst, .. } => {
                    if hit {
                        taint |= 1 << (dst % 64);
                    } else {
                        taint &= !(1 << (dst % 64));
                    }
                }
                Instr::Load { dst, .. } => taint &= !(1 << (dst % 64)),
                // A wait's result depends on its own read and its operand.
                Instr::MbarWait { dst: Some(dst), .. } => {
                    if hit {
                        taint |= 1 << (dst % 64);
                    } else {
                        taint &= !(1 << (dst % 64));
                    }
                }
                _ => {}
            }
        }
        match w.end {
            End::Unresolved(pc) => tainted(taint, &code[pc]),
            _ => false,
        }
    }

    // ---- retirement -------------------------------------------------------

    /// Decide what retiring thread `t`'s next instruction amounts to, without
    /// changing the state.
    pub(super) fn try_retire(
        &self,
        st: &State<S>,
        t: usize,
        windows: &Windows<'_, '_, S>,
    ) -> Retire<S> {
        let ts = &st.threads[t];
        let Some(e) = self.head_entry(st, t) else {
            return Retire::Blocked;
        };
        let instr = &self.program.threads[t].code[e.pc];
        let plan = match instr {
            Instr::Mov { .. } | Instr::Arith { .. } => Plan::Advance(None, None),
            Instr::Branch { cond, target } => {
                let taken = cond.as_ref().is_none_or(|(c, a, b)| {
                    c.holds(operand(&e.regs, a).unwrap(), operand(&e.regs, b).unwrap())
                });
                let info = &self.layout.loops[t];
                if !taken {
                    Plan::Advance(None, None)
                } else if !info.back_edge[e.pc] {
                    Plan::Advance(Some(*target), None)
                } else {
                    let (limit, beyond) = info.limit(e.pc, self.bound);
                    let i = self.back_index[t][e.pc];
                    let taken = i.map_or(0, |i| ts.back_taken[i] as u32);
                    match (taken >= limit, beyond) {
                        // A spin loop whose iterations go back without
                        // reading memory never leaves: the thread stays
                        // here, and the others go on (R1 must not pick a
                        // step that drops the whole state, or no hang
                        // witness with the others finished is reached).
                        (true, Beyond::Drop)
                            if self.layout.loops[t].loop_at(e.pc).is_some_and(|lp| {
                                goes_back_without_reading(
                                    &self.program.threads[t].code,
                                    lp,
                                    &ts.regs,
                                )
                            }) =>
                        {
                            return Retire::Blocked;
                        }
                        // A spin loop goes round no further than it must.
                        (true, Beyond::Drop) => Plan::Die,
                        (true, Beyond::Cut) => Plan::Cut,
                        (false, _) => Plan::Advance(Some(*target), i),
                    }
                }
            }
            Instr::Store { src, .. } => {
                let slot = e.slot.unwrap();
                let Some(k) = self.propagate_in(st, t, slot, windows) else {
                    return Retire::Blocked;
                };
                let issue = (!st.versions.has(slot)).then(|| operand(&e.regs, src).unwrap());
                Plan::Store { issue, k }
            }
            Instr::Load { .. } | Instr::Rmw { .. } | Instr::MbarWait { .. } => {
                let slot = e.slot.unwrap();
                if !st.bound.has(slot) {
                    return Retire::Choice;
                }
                match self.propagate_in(st, t, slot, windows) {
                    None => return Retire::Blocked,
                    Some(k) => Plan::Finish(k),
                }
            }
            Instr::Fence { sem, .. } => {
                let slot = e.slot.unwrap();
                if *sem == FenceSem::Sc && self.sc_partner_pending(st, t, slot) {
                    return Retire::Choice;
                }
                match self.propagate_in(st, t, slot, windows) {
                    None => return Retire::Blocked,
                    Some(k) => Plan::Finish(k),
                }
            }
            Instr::ProxyFenceUni { .. } => match self.propagate_in(st, t, e.slot.unwrap(), windows)
            {
                None => return Retire::Blocked,
                Some(k) => Plan::Finish(k),
            },
            Instr::ProxyFence { .. } | Instr::Signal { .. } => {
                Plan::Finish(st.threads[t].view.clone())
            }
            Instr::Await { from } => {
                let mut k = st.threads[t].view.clone();
                for pt in from {
                    let s = self.layout.slot(pt.thread, pt.pc, pt.exec).unwrap();
                    if !st.retired.has(s) {
                        return Retire::Blocked;
                    }
                    k.merge(
                        st.snapshots[s]
                            .as_ref()
                            .expect("awaited slots are snapshot points"),
                    );
                }
                Plan::Finish(k)
            }
            Instr::AsyncCopy { .. }
            | Instr::CommitGroup { .. }
            | Instr::WaitGroup { .. }
            | Instr::AsyncMbarArrive { .. }
            | Instr::Mbar { .. }
            | Instr::ClusterBarrier { .. }
            | Instr::Tensor { .. }
            | Instr::GridDep { .. } => {
                unreachable!("the machine runs lowered programs (model::lower)")
            }
            Instr::Barrier { .. } => {
                let slot = e.slot.unwrap();
                if !ts.arrived {
                    // A warp's lanes arrive together, once all have come.
                    let with = match self.warp_gate(st, t, &e, windows) {
                        WarpGate::Wait(_) => return Retire::Blocked,
                        WarpGate::Alone => Vec::new(),
                        WarpGate::Go(with) => with,
                    };
                    if self.arrival_is_choice(t, &e) {
                        // With a thread count the first n arrivals complete the
                        // phase, so the order of arrivals is a choice.
                        return Retire::Choice;
                    }
                    Plan::Arrive(with)
                } else {
                    match self.barrier_merge(st, t, slot) {
                        None => return Retire::Blocked,
                        Some(k) => Plan::Pass(k),
                    }
                }
            }
        };
        Retire::Ready(t, e, plan)
    }

    /// Carry out a retirement plan on a copy of `st`: every resulting state
    /// (several when a store's coherence orientations are a choice; none if a
    /// check fails).
    fn apply(
        &self,
        st: &State<S>,
        t: usize,
        e: &Entry,
        plan: Plan<S>,
        co: Coherence,
    ) -> Vec<(Step, Box<State<S>>)> {
        let step = |kind| Step {
            thread: t,
            pc: e.pc,
            kind,
        };
        match plan {
            Plan::Store {
                issue: Some(value),
                k,
            } => self
                .issue_write_owned(Box::new(st.clone()), e.slot.unwrap(), value, e.seq, co)
                .into_iter()
                .filter_map(|mut s| self.finish_retire(&mut s, t, e, k.clone()).then_some(s))
                .map(|s| (step(StepKind::Retire), s))
                .collect(),
            plan => {
                let mut s = Box::new(st.clone());
                match self.apply_in_place(&mut s, t, e, plan, co) {
                    InPlace::Done(kind) => vec![(step(kind), s)],
                    InPlace::Dead => Vec::new(),
                    InPlace::Branches => unreachable!("handled above"),
                }
            }
        }
    }

    /// Carry out a retirement plan on `s` itself. A store that must still be
    /// ordered against other versions is left alone (`Branches`); after a
    /// failed check `s` is garbage (`Dead`).
    fn apply_in_place(
        &self,
        s: &mut State<S>,
        t: usize,
        e: &Entry,
        plan: Plan<S>,
        co: Coherence,
    ) -> InPlace {
        match plan {
            Plan::Advance(target, back) => {
                if let Some(i) = back {
                    s.thread_mut(t).back_taken[i] += 1;
                }
                self.advance(s, t, e, target);
                InPlace::Done(StepKind::Retire)
            }
            Plan::Cut => {
                s.thread_mut(t).cut = true;
                InPlace::Done(StepKind::Cut)
            }
            Plan::Die => InPlace::Dead,
            Plan::Store { issue, k } => {
                if let Some(value) = issue {
                    match self.issue_write_single(s, e.slot.unwrap(), value, e.seq, co) {
                        None => return InPlace::Branches,
                        Some(false) => return InPlace::Dead,
                        Some(true) => {}
                    }
                }
                if self.finish_retire(s, t, e, k) {
                    InPlace::Done(StepKind::Retire)
                } else {
                    InPlace::Dead
                }
            }
            Plan::Finish(k) => {
                if self.finish_retire(s, t, e, k) {
                    InPlace::Done(StepKind::Retire)
                } else {
                    InPlace::Dead
                }
            }
            Plan::Arrive(with) => InPlace::Done(self.arrive_in(s, t, e, &with)),
            Plan::Pass(k) => {
                s.thread_mut(t).view = k;
                s.thread_mut(t).arrived = false;
                self.advance(s, t, e, None);
                InPlace::Done(StepKind::Pass)
            }
        }
    }

    /// Whether thread `t`'s arrival at the barrier of entry `e` waits for
    /// its warp (`model::barrier::warp_unit`, ISA reading): the lanes of the
    /// warp arrive together once every lane not finished stands, not
    /// arrived, at a barrier instruction of the same kind naming the same
    /// barrier (PTX ISA §9.7.13.1: the instruction *"causes executing thread
    /// to wait for all non-exited threads from its warp and marks warps'
    /// arrival at barrier"*). The lowest such lane arrives for all of them.
    pub(super) fn warp_gate(
        &self,
        st: &State<S>,
        t: usize,
        e: &Entry,
        windows: &Windows<'_, '_, S>,
    ) -> WarpGate {
        let p = &self.program;
        if self.barriers != Reading::Isa || !barrier::warp_unit(p, t, &p.threads[t].code[e.pc]) {
            return WarpGate::Alone;
        }
        // The barrier a lane's entry names, if it is a warp's arrival.
        let name = |u: usize, eu: &Entry| match &p.threads[u].code[eu.pc] {
            i @ Instr::Barrier { id, .. } if barrier::warp_unit(p, u, i) => {
                operand(&eu.regs, &id[0])
            }
            _ => None,
        };
        let mine = name(t, e);
        let (mut missing, mut with, mut leader) = (Vec::new(), Vec::new(), true);
        for u in p.warp_lanes(t) {
            let us = &st.threads[u];
            if u == t || us.finished(p.threads[u].code.len()) {
                continue;
            }
            let at = (!us.arrived)
                .then(|| windows.get(u).entries.first())
                .flatten()
                .filter(|eu| eu.pc == us.pc && mine.is_some() && name(u, eu) == mine);
            match at {
                None => missing.push(u),
                Some(_) if u < t => leader = false,
                Some(eu) => with.push((u, eu.clone())),
            }
        }
        if !missing.is_empty() || !leader {
            WarpGate::Wait(missing)
        } else {
            WarpGate::Go(with)
        }
    }

    /// Thread `t` arrives at the barrier of entry `e` (on a copy of `st`),
    /// with the lanes `with` of its warp.
    fn arrive(
        &self,
        st: &State<S>,
        t: usize,
        e: &Entry,
        with: &[(usize, Entry)],
    ) -> (Step, Box<State<S>>) {
        let mut s = Box::new(st.clone());
        let kind = self.arrive_in(&mut s, t, e, with);
        (
            Step {
                thread: t,
                pc: e.pc,
                kind,
            },
            s,
        )
    }

    /// Thread `t` arrives at the barrier of entry `e`, and with it the lanes
    /// `with` of its warp (one event, in the same phase): each one's view is
    /// recorded as its arrival's snapshot; `bar.arrive` then goes on,
    /// `bar.sync` waits. The step's kind is `t`'s.
    fn arrive_in(
        &self,
        s: &mut State<S>,
        t: usize,
        e: &Entry,
        with: &[(usize, Entry)],
    ) -> StepKind {
        let unit = e.slot.unwrap();
        let (kind, phase) = self.arrive_one(s, t, e, unit, None);
        for (u, eu) in with {
            self.arrive_one(s, *u, eu, unit, Some(phase));
        }
        kind
    }

    /// Thread `t`'s part of an arrival event `unit`: in phase `phase` if
    /// given (a lane arriving with its warp), else in the phase the barrier
    /// stands at. Returns the step's kind and the phase.
    fn arrive_one(
        &self,
        s: &mut State<S>,
        t: usize,
        e: &Entry,
        unit: usize,
        phase: Option<usize>,
    ) -> (StepKind, usize) {
        let Instr::Barrier {
            kind, id, count, ..
        } = &self.program.threads[t].code[e.pc]
        else {
            unreachable!("arrive at a barrier")
        };
        let slot = e.slot.unwrap();
        let cta = self.layout.slots[slot].cta;
        let ids: SmallVec<[Value; 2]> = id.iter().map(|o| operand(&e.regs, o).unwrap()).collect();
        let count = count.as_ref().map(|c| operand(&e.regs, c).unwrap());
        let r = self.resolve_barrier(t, *kind, &ids, count);
        // `bar.warp.sync` has one reading, the ISA's.
        let reading = if kind.is_warp() {
            Reading::Isa
        } else {
            self.barriers
        };
        let phase = match (phase, reading) {
            (Some(p), _) => p,
            (None, Reading::Dat3m) => s
                .arrivals
                .iter()
                .filter(|a| a.thread == t && a.cta == cta && a.id == r.id)
                .count(),
            // The barrier's open phase, or the next one if it is complete.
            (None, Reading::Isa) => match s
                .arrivals
                .iter()
                .filter(|a| a.cta == cta && a.id == r.id)
                .map(|a| a.phase)
                .max()
            {
                None => 0,
                Some(p) if self.isa_phase_complete(s, cta, &r.id, p) => p + 1,
                Some(p) => p,
            },
        };
        s.arrivals.push(Arrival {
            cta,
            id: r.id,
            count: r.count,
            needed: r.needed,
            ub: r.ub,
            thread: t,
            phase,
            slot,
            unit,
        });
        s.snapshots[slot] = Some(Snapshot::new(s.threads[t].view.clone()));
        s.retired |= bit(slot);
        s.seq[slot] = e.seq;
        if *kind == BarrierKind::Arrive {
            self.advance(s, t, e, None);
            return (StepKind::Retire, phase);
        }
        s.thread_mut(t).arrived = true;
        (StepKind::Arrive, phase)
    }

    /// Advance thread `t` past entry `e` (to `target` for a taken branch).
    pub(super) fn advance(&self, s: &mut State<S>, t: usize, e: &Entry, target: Option<usize>) {
        let instr = &self.program.threads[t].code[e.pc];
        let ts = s.thread_mut(t);
        if let Some((dst, v)) = instr.local_effect::<Value>(&ts.regs) {
            ts.regs[dst] = v;
        }
        ts.execs[e.pc] = ts.execs[e.pc].saturating_add(1);
        ts.seq += 1;
        ts.pc = target.unwrap_or(e.pc + 1);
    }

    /// Whether a `fence.sc` of another unfinished thread, morally strong with
    /// `slot`, may still retire (then the order of the two is a choice).
    fn sc_partner_pending(&self, st: &State<S>, t: usize, slot: usize) -> bool {
        (0..st.threads.len()).any(|u| {
            let th = &self.program.threads[u];
            let ts = &st.threads[u];
            if u == t || ts.finished(th.code.len()) {
                return false;
            }
            let reach = &self.reach[u][ts.pc];
            th.code.iter().enumerate().any(|(pc, i)| {
                reach[pc]
                    && matches!(
                        i,
                        Instr::Fence {
                            sem: FenceSem::Sc,
                            ..
                        }
                    )
                    && self.layout.base[u][pc].is_some_and(|b| self.layout.ms(slot, b))
            })
        })
    }

    /// Scoped propagation into thread `t` before `slot` retires: merge the
    /// snapshots of the release heads its acquire patterns synchronise with,
    /// and of earlier morally strong `fence.sc`. `None` if a head has not
    /// retired yet (WAIT).
    pub(super) fn propagate_in(
        &self,
        st: &State<S>,
        t: usize,
        slot: usize,
        windows: &Windows<'_, '_, S>,
    ) -> Option<View<S>> {
        let l = &self.layout;
        let si = &l.slots[slot];
        let mut k = st.threads[t].view.clone();
        // An mbarrier wait acquires only when it succeeds.
        let acquire_read = si.acquire_read()
            && (si.wait.is_none() || self.wait_succeeds(st, t, slot) == Some(true));
        if acquire_read || si.acquire_fence() {
            let earlier = st.retired & l.thread_slots[t] & l.reads;
            let pattern_reads: S = if acquire_read {
                S::bit(slot)
                    | members(earlier & l.va_slots[si.va])
                        .filter(|&r| l.slots[r].pattern_read())
                        .fold(S::EMPTY, |a, r| a | bit(r))
            } else {
                members(earlier)
                    .filter(|&r| l.slots[r].pattern_read())
                    .fold(S::EMPTY, |a, r| a | bit(r))
            };
            for r in members(pattern_reads) {
                let (obs, complete) = self.observed_by(st, r);
                if !complete {
                    return None; // wait until the RMW in the chain has read
                }
                for u in members(obs & !l.inits) {
                    for h in members(self.release_heads(st, u, slot, windows)?) {
                        k.merge(
                            st.snapshots[h]
                                .as_ref()
                                .expect("retired heads have snapshots"),
                        );
                    }
                }
            }
        }
        if si.kind == SlotKind::Fence(FenceSem::Sc) {
            for f in members(st.retired & l.fence_sc & l.ms[slot]) {
                k.merge(st.snapshots[f].as_ref().unwrap());
            }
        }
        if si.is_mem() {
            // Validation needs every observation chain in the causal past complete.
            let mut with_self = k.clone();
            with_self.raw |= bit(slot);
            with_self.gen_ |= bit(slot);
            if !self.front_plus(st, &with_self, slot).1 {
                return None;
            }
        }
        Some(k)
    }

    /// The retired release heads of version `u`'s release patterns that are
    /// morally strong with the tail `tail`; `None` if such a head exists but
    /// has not retired yet.
    fn release_heads(
        &self,
        st: &State<S>,
        u: usize,
        tail: usize,
        windows: &Windows<'_, '_, S>,
    ) -> Option<S> {
        let l = &self.layout;
        let su = &l.slots[u];
        let ut = su.thread.unwrap();
        let mut heads = S::EMPTY;
        let is_head = |h: usize| {
            let sh = &l.slots[h];
            (h == u && sh.release_write())
                || (h != u
                    && su.strong()
                    && ((sh.release_write() && sh.va == su.va) || sh.release_fence()))
        };
        for h in members(st.retired & l.thread_slots[ut]) {
            if (h == u || st.seq[h] < st.seq[u]) && is_head(h) && l.ms(h, tail) {
                heads |= bit(h);
            }
        }
        if !st.retired.has(u) {
            // u was issued ahead of its thread's retirement: a head may still be pending.
            if is_head(u) && l.ms(u, tail) {
                return None;
            }
            for e in &windows.get(ut).entries {
                if e.seq >= st.seq[u] {
                    break;
                }
                if let Some(h) = e.slot {
                    if is_head(h) && l.ms(h, tail) {
                        return None;
                    }
                }
            }
        }
        Some(heads)
    }

    /// Whether thread `t`'s arrival at the barrier of entry `e` is a choice
    /// (its order against other arrivals matters) rather than a step that
    /// retires first and alone. With a thread count the first n arrivals
    /// complete the phase; under the ISA reading a count-less arrival in a
    /// CTA that also counts may join a counted phase or start the next.
    fn arrival_is_choice(&self, t: usize, e: &Entry) -> bool {
        let Instr::Barrier {
            kind, id, count, ..
        } = &self.program.threads[t].code[e.pc]
        else {
            return false;
        };
        // `bar.warp.sync`: a phase waits for the mask's lanes only, so an
        // arrival may complete one (or start the next) before another's.
        if kind.is_warp() {
            return true;
        }
        match self.barriers {
            Reading::Dat3m => count.is_some(),
            Reading::Isa => {
                let ids: SmallVec<[Value; 2]> =
                    id.iter().filter_map(|o| operand(&e.regs, o)).collect();
                let c = count.as_ref().and_then(|c| operand(&e.regs, c));
                let pl = self.layout.placement[t];
                if c.is_none()
                    && ids.len() == 2
                    && self.order_free.contains(&(pl.gpu, pl.cta, ids[0]))
                {
                    return false;
                }
                let cta = self.layout.slots[e.slot.unwrap()].cta;
                self.cta_counted[cta].may_count(ids.first().copied())
                    || self.resolve_barrier(t, *kind, &ids, c).needed.is_some()
            }
        }
    }

    /// What thread `t`'s arrival at a barrier of `kind` with operand values
    /// `ids` and `count` stands for (`model::barrier`).
    fn resolve_barrier(
        &self,
        t: usize,
        kind: BarrierKind,
        ids: &[Value],
        count: Option<Value>,
    ) -> barrier::Resolved {
        if kind.is_warp() {
            return barrier::resolve_warp_kind(kind, ids[0], barrier::WarpOf::of(&self.program, t));
        }
        barrier::resolve(self.barriers, kind, ids, count)
    }

    /// ISA reading: whether phase `p` of barrier `id` of CTA `cta` is
    /// complete in `st`. Its first arrival sets its count; a phase with an
    /// undefined arrival or disagreeing counts never completes; a counted
    /// phase needs that many arrivals, a count-less one every thread of the
    /// CTA to have arrived or exited (`model::barrier`).
    pub(super) fn isa_phase_complete(
        &self,
        st: &State<S>,
        cta: usize,
        id: &[Value],
        p: usize,
    ) -> bool {
        let members: SmallVec<[&Arrival; 4]> = st
            .arrivals
            .iter()
            .filter(|a| a.cta == cta && *a.id == *id && a.phase == p)
            .collect();
        let Some(first) = members.first() else {
            return false;
        };
        if members
            .iter()
            .any(|a| a.ub.is_some() || a.needed != first.needed || a.count != first.count)
        {
            return false;
        }
        match first.needed {
            // A counted phase counts events: a warp's lanes arrive as one.
            Some(n) => usize::try_from(n).is_ok_and(|n| {
                let mut units: SmallVec<[usize; 4]> = members.iter().map(|a| a.unit).collect();
                units.sort_unstable();
                units.dedup();
                units.len() >= n
            }),
            None => {
                let (gpu, c) = self.layout.ctas[cta];
                let lanes = barrier::participants(&self.program, gpu, c, id);
                // An `activemask` block's lanes execute it together: an
                // exited lane does not complete it.
                let excused = barrier::excuses_exits(id);
                lanes
                    .as_deref()
                    .unwrap_or(&self.cta_threads[cta])
                    .iter()
                    .all(|&u| {
                        members.iter().any(|a| a.thread == u)
                            || excused && st.threads[u].finished(self.program.threads[u].code.len())
                    })
            }
        }
    }

    /// The view after passing the barrier `slot` (its phase complete), or `None`.
    pub(super) fn barrier_merge(&self, st: &State<S>, t: usize, slot: usize) -> Option<View<S>> {
        let me = st
            .arrivals
            .iter()
            .find(|a| a.slot == slot && a.thread == t)?;
        let same = |a: &&Arrival| a.cta == me.cta && a.id == me.id && a.phase == me.phase;
        let phase: Vec<&Arrival> = st.arrivals.iter().filter(same).collect();
        if self.barriers == Reading::Isa || me.id.len() == 3 {
            if !self.isa_phase_complete(st, me.cta, &me.id, me.phase) {
                return None;
            }
            let mut k = st.threads[t].view.clone();
            // `elect.sync`'s wait takes no other participant's view.
            if !barrier::orders_memory(&me.id) {
                return Some(k);
            }
            for a in phase {
                if a.thread != t {
                    k.merge(st.snapshots[a.slot].as_ref().unwrap());
                }
            }
            return Some(k);
        }
        if phase.iter().any(|a| a.count != me.count) {
            return None; // participants disagree on the count: never completes
        }
        let members_: Vec<&Arrival> = match me.count {
            Some(n) => {
                let n = usize::try_from(n).ok()?;
                if phase.len() < n {
                    return None;
                }
                phase[..n].to_vec()
            }
            None => {
                // Every thread of the CTA that arrives at this barrier at all, or still may.
                for u in 0..st.threads.len() {
                    let arrived_here = phase.iter().any(|a| a.thread == u);
                    let participant = st
                        .arrivals
                        .iter()
                        .any(|a| a.thread == u && a.cta == me.cta && a.id == me.id)
                        || self.may_arrive(st, u, me.cta, &me.id);
                    if participant && !arrived_here {
                        return None;
                    }
                }
                phase
            }
        };
        let mut k = st.threads[t].view.clone();
        for a in members_ {
            if a.thread != t {
                k.merge(st.snapshots[a.slot].as_ref().unwrap());
            }
        }
        Some(k)
    }

    /// Validate and retire entry `e` of thread `t` in `s`, with the view `k`
    /// after propagation (machine-m2.md §4 RETIRE (b), (c)). False if a check
    /// fails (then `s` is garbage).
    // `s` descends from a state the machine holds through checked steps
    // only, so its location graphs are acyclic: SC per location may look
    // only at what this retirement adds.
    fn finish_retire(&self, s: &mut State<S>, t: usize, e: &Entry, k: View<S>) -> bool {
        self.finish_retire_in(s, t, e, k, true).is_ok()
    }

    /// [`Machine::finish_retire`], saying which check fails. Checks SC per
    /// location in full: the hang witnesses bind reads unchecked before they
    /// retire them.
    pub(super) fn finish_retire_check(
        &self,
        s: &mut State<S>,
        t: usize,
        e: &Entry,
        k: View<S>,
    ) -> Result<(), Reason> {
        self.finish_retire_in(s, t, e, k, false)
    }

    /// Add `a <co b` for every `a` of `from`; returns the versions that
    /// gained a predecessor. With `acyclic_before` and the incremental
    /// checks on, in one pass ([`Machine::add_co_from`], whose order differs
    /// from the edge-by-edge one only where both close a cycle: the caller
    /// then only asks whether the check passes); else edge by edge, so that
    /// a failing check names what the edge-by-edge order shows.
    fn add_co_all(&self, s: &mut State<S>, from: S, b: usize, acyclic_before: bool) -> S {
        if acyclic_before && self.incremental_sc {
            return self.add_co_from(s, from, b);
        }
        let mut gained = S::EMPTY;
        for a in members(from) {
            gained |= self.add_co(s, a, b);
        }
        gained
    }

    /// [`Machine::finish_retire_check`]; with `acyclic_before`, the caller
    /// vouches that `s`'s SC-per-location graphs are acyclic, so the check
    /// after new coherence edges looks only for cycles through their targets
    /// ([`Machine::co_check_after`]).
    fn finish_retire_in(
        &self,
        s: &mut State<S>,
        t: usize,
        e: &Entry,
        mut k: View<S>,
        acyclic_before: bool,
    ) -> Result<(), Reason> {
        let loc = self.layout.slots[e.slot.unwrap()].loc;
        let check = |s: &State<S>, gained: S| match acyclic_before {
            true => self.co_check_after(s, loc, gained),
            false => self.co_check(s, loc),
        };
        let l = &self.layout;
        let slot = e.slot.unwrap();
        let si = &l.slots[slot];
        let instr = &self.program.threads[t].code[e.pc];
        let generic = si.proxy == Proxy::Generic;
        if si.reads() {
            // Causality, from-read part: the version returned is not older than
            // anything the thread's causal past guarantees on this line.
            let v = s.rf[slot] as usize;
            let mut forced: S = S::EMPTY;
            for w in members(self.front_plus(s, &k, slot).0) {
                if s.co_before(v, w) {
                    return Err(Reason::Stale {
                        read: slot,
                        version: v,
                        newer: w,
                    });
                }
                if w != v {
                    s.never_below[v] |= bit(w);
                    // A morally strong pair is ordered in every execution, and
                    // the obligation rules out one way: take the other now
                    // (only lazy coherence leaves such a pair unordered).
                    if l.ms(v, w) && !s.co_before(w, v) {
                        forced |= bit(w);
                    }
                }
            }
            if !forced.is_empty() {
                let gained = self.add_co_all(s, forced, v, acyclic_before);
                check(s, gained)?;
            }
            k.raw |= bit(slot);
            if generic {
                k.gen_ |= bit(slot);
            }
        }
        if si.writes() {
            // Coherence: everything the causal past guarantees is older.
            let front = self.front_plus(s, &k, slot).0 & l.writes & !S::bit(slot);
            let gained = self.add_co_all(s, front, slot, acyclic_before);
            check(s, gained)?;
            // Causality, rf part: no read that returned this write lies in its causal past.
            if let Some(r) = members(self.front(&k, slot) & l.reads & s.bound)
                .find(|&r| s.rf[r] as usize == slot)
            {
                return Err(Reason::ReadsFromFuture {
                    write: slot,
                    read: r,
                });
            }
            k.raw |= bit(slot);
            if generic {
                k.gen_ |= bit(slot);
            }
        }
        if let Some(role) = si.role {
            // Promotions read the tokens present *before* the fence, so one fence
            // never serves as both the source-side and the destination-side fence.
            let before = k.clone();
            let space = l.role_space[slot];
            match role.proxy {
                // fence.proxy.alias: what reached L2 becomes visible through every alias.
                None => k.anyva |= before.gen_,
                Some(q) => {
                    let c = si.cta;
                    if role.source_side {
                        // This CTA's q-path accesses are pushed to L2.
                        k.gen_ |= before.raw & l.proxy_slots[q as usize] & l.cta_slots[c] & space;
                    }
                    // This CTA's q-cache is invalidated.
                    let pair = l
                        .line_pair(c, q)
                        .expect("a proxy fence's own cache has line tokens");
                    k.line[View::<S>::line_index(pair, Stage::Gen)] |= before.gen_ & space;
                    k.line[View::<S>::line_index(pair, Stage::AnyVa)] |= before.anyva & space;
                }
            }
        }
        if si.release_write() || si.release_fence() || si.kind == SlotKind::Fence(FenceSem::Sc) {
            // A restricted release publishes only part of the view.
            let publish = l.publish[slot];
            let snap = if publish == S::FULL {
                k.clone()
            } else {
                k.filtered(publish)
            };
            s.snapshots[slot] = Some(Snapshot::new(snap));
        }
        if l.snapshot_points.has(slot) {
            debug_assert!(
                s.snapshots[slot].is_none(),
                "a snapshot point is no release head"
            );
            s.snapshots[slot] = Some(Snapshot::new(k.clone()));
        }
        match instr {
            Instr::Load { dst, .. } | Instr::Rmw { dst: Some(dst), .. } => {
                let v = self.read_value(s, slot);
                s.thread_mut(t).regs[*dst] = v;
            }
            Instr::MbarWait { dst: Some(dst), .. } => {
                let done = self
                    .wait_succeeds(s, t, slot)
                    .expect("operands known at retirement");
                s.thread_mut(t).regs[*dst] = done as Value;
            }
            _ => {}
        }
        s.retired |= bit(slot);
        s.seq[slot] = e.seq;
        s.thread_mut(t).view = k;
        self.advance(s, t, e, None);
        Ok(())
    }

    /// Whether the mbarrier wait in `slot` (thread `t`, bound) succeeds, given
    /// the thread's registers before it; `None` if its operand is not known.
    fn wait_succeeds(&self, st: &State<S>, t: usize, slot: usize) -> Option<bool> {
        let pc = self.layout.slots[slot].pc;
        let Instr::MbarWait { phase, .. } = &self.program.threads[t].code[pc] else {
            return None;
        };
        let (test, arg) = mbar::Test::of(phase);
        let regs: SmallVec<[Option<Value>; 8]> =
            st.threads[t].regs.iter().map(|v| Some(*v)).collect();
        let arg = operand(&regs, &arg)?;
        Some(mbar::done(test, self.read_value(st, slot), arg))
    }

    // ---- binding ------------------------------------------------------------

    /// Every way the read of entry `e` (thread `t`) can bind now (with
    /// `twins`, one per class of symmetric ways).
    #[allow(clippy::too_many_arguments)]
    fn push_binds(
        &self,
        st: &State<S>,
        t: usize,
        e: &Entry,
        windows: &Windows<'_, '_, S>,
        co: Coherence,
        twins: Option<&Twins>,
        out: &mut Vec<(Step, Box<State<S>>)>,
    ) {
        let slot = e.slot.unwrap();
        // A spin on a commuting counter that no bind can let out is not
        // bound (`op::commute`, `Commuting::doomed`).
        let commuting = self.commuting.as_ref();
        if commuting.is_some_and(|c| c.cannot_leave(st, slot, FORWARD_DEPTH)) {
            return;
        }
        let mut found = Vec::new();
        let mut fw = SmallVec::new();
        let mut pick = Pick {
            twins,
            named: SmallVec::from_slice(&[t]),
        };
        self.binds(
            st,
            t,
            e,
            windows,
            co,
            FORWARD_DEPTH,
            S::EMPTY,
            &mut fw,
            &mut pick,
            &mut found,
        );
        if let Some(c) = commuting {
            found.retain(|(_, s)| !c.doomed(s));
        }
        for (fw, s) in found {
            let version = s.rf[slot] as usize;
            out.push((
                Step {
                    thread: t,
                    pc: e.pc,
                    kind: StepKind::Bind {
                        slot,
                        version,
                        forwarded: fw,
                    },
                },
                s,
            ));
        }
    }

    /// Bind entry `e`'s read to an existing version or to a write forwarded
    /// from some thread's window; for an RMW, also issue its write. With
    /// twins, a version or forwarded write of a thread `pick` says is
    /// shadowed is left out (its twin's is taken).
    #[allow(clippy::too_many_arguments)]
    fn binds(
        &self,
        st: &State<S>,
        t: usize,
        e: &Entry,
        windows: &Windows<'_, '_, S>,
        co: Coherence,
        depth: u32,
        busy: S,
        fw: &mut SmallVec<[usize; 2]>,
        pick: &mut Pick<'_>,
        out: &mut BoundStates<S>,
    ) {
        let l = &self.layout;
        let r = e.slot.unwrap();
        // RMWs being bound further up this forwarding chain cannot be forwarded
        // themselves when their write depends on their read: that would be a
        // value cycle (thin air). An exch's write may be.
        let dependent = matches!(&self.program.threads[t].code[e.pc], Instr::Rmw { op, .. } if op.write_depends_on_read());
        let busy = if dependent { busy | bit(r) } else { busy };
        let loc = l.slots[r].loc;
        let mut bound_states: BoundStates<S> = Vec::new();
        for v in members(st.versions & l.loc_slots[loc] & !S::bit(r)) {
            if self.interrupted() {
                return;
            }
            if l.slots[v].thread.is_some_and(|o| pick.shadowed(o)) {
                continue;
            }
            if let Some(s) = self.bind(st, t, r, v, e.seq) {
                bound_states.push((fw.clone(), s));
            }
        }
        // Forwarding: issue a write from some window right now and return it.
        for u in 0..windows.len() {
            if pick.shadowed(u) {
                continue;
            }
            let w = windows.get(u);
            for we in &w.entries {
                if self.interrupted() {
                    return;
                }
                let Some(ws) = we.slot else { continue };
                if ws == r || busy.has(ws) || st.versions.has(ws) || l.slots[ws].loc != loc {
                    continue;
                }
                let ins = &self.program.threads[u].code[we.pc];
                // The value a store writes; an exch's write does not depend on
                // its read (digest §3.1), so it may be issued before the read
                // binds (which happens later).
                let independent = match ins {
                    Instr::Store { src, .. } => Some(src),
                    Instr::Rmw { op, args, .. } if !op.write_depends_on_read() => Some(&args[0]),
                    _ => None,
                };
                if let Some(src) = independent {
                    let Some(val) = operand(&we.regs, src) else {
                        continue;
                    };
                    let s0 = Box::new(st.clone());
                    for s1 in self.issue_write_owned(s0, ws, val, we.seq, co) {
                        if let Some(s2) = self.bind_owned(s1, t, r, ws, e.seq) {
                            let mut f = fw.clone();
                            f.push(ws);
                            bound_states.push((f, s2));
                        }
                    }
                    continue;
                }
                match ins {
                    Instr::Rmw { args, .. } if depth > 0 && !st.bound.has(ws) => {
                        if args.iter().any(|a| operand(&we.regs, a).is_none()) {
                            continue;
                        }
                        let mut inner = Vec::new();
                        fw.push(ws);
                        pick.named.push(u);
                        self.binds(
                            st,
                            u,
                            we,
                            windows,
                            co,
                            depth - 1,
                            busy,
                            fw,
                            pick,
                            &mut inner,
                        );
                        pick.named.pop();
                        fw.pop();
                        for (f, s1) in inner {
                            if let Some(s2) = self.bind_owned(s1, t, r, ws, e.seq) {
                                bound_states.push((f, s2));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        // A blocking wait (the lowered `barrier.cluster.wait`) only returns a completed phase.
        if let Instr::MbarWait {
            phase: WaitPhase::Phase(k),
            ..
        } = &self.program.threads[t].code[e.pc]
        {
            bound_states.retain(|(_, s)| mbar::done(mbar::Test::Phase, self.read_value(s, r), *k));
        }
        // An RMW's write is issued together with its read.
        match &self.program.threads[t].code[e.pc] {
            Instr::Rmw {
                op, args, access, ..
            } => {
                let argv: Option<Vec<Value>> = args.iter().map(|a| operand(&e.regs, a)).collect();
                let Some(argv) = argv else { return };
                // As the oracle's paths (`ax::unfold`): only a computed
                // value wraps; an `exch` writes its operand, which a kernel
                // keeps fitted already.
                let wrap = self.program.threads[t].wrap_rmw && op.write_depends_on_read();
                for (f, s) in bound_states {
                    if s.versions.has(r) {
                        // The write was issued earlier (forwarded exch): check atomicity now.
                        if self.co_ok(&s, l.slots[r].loc) {
                            out.push((f, s));
                        }
                        continue;
                    }
                    let old = self.read_value(&s, r);
                    let mut new = op.apply(old, &argv);
                    if wrap {
                        new = access.fit(new);
                    }
                    for s2 in self.issue_write_owned(s, r, new, e.seq, co) {
                        out.push((f.clone(), s2));
                    }
                }
            }
            _ => out.extend(bound_states),
        }
    }
}
