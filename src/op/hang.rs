//! Hangs in the machine (`docs/loops.md`, "Termination"): which states are
//! stuck configurations.
//!
//! The machine never takes a spin-loop back edge, so a thread that would
//! spin forever shows up as a thread that stays at the start of its loop's
//! iteration while the others go on. A state is a **hang witness** when
//! every event issued so far has retired (it is a prefix of an execution,
//! not a speculation), some thread has not finished, and every unfinished
//! thread is stuck:
//! * arrived at a `bar.sync` whose phase cannot complete;
//! * a lane at a counted barrier that its warp reaches as one event, while
//!   another lane of the warp stays away from it (`model::barrier::warp_unit`);
//! * at an await whose awaited points have not retired;
//! * at a blocking mbarrier wait that a coherence-latest state of the
//!   barrier does not satisfy;
//! * inside a spin or retry loop, such that an iteration from the loop's
//!   head, reading coherence-latest versions, goes back (what the current
//!   iteration read so far can be dropped from the prefix: reads only add
//!   constraints).
//!
//! Nothing another thread can do changes that: the others are finished or
//! stuck themselves. Fairness makes every read eventually return a latest
//! version, so the spinning iteration repeats forever, and the barriers and
//! waits never complete.

use smallvec::SmallVec;

use crate::ir::{Instr, Value, WaitPhase, mbar};
use crate::model::hang::{Fairness, Hang, Stuck, Waits};
use crate::model::loops::SpinLoop;
use crate::rel::{Bits, members};

use super::Machine;
use super::state::State;

/// What the termination check makes of a state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Quiescence {
    /// Some thread can still do something (or the state is not a clean
    /// prefix): not a witness.
    Running,
    /// A stuck configuration.
    Hang(Hang),
    /// Every thread is finished or stuck, and some thread was cut at the
    /// loop bound: a longer execution of its loop might behave otherwise.
    Cut,
}

/// How one unfinished thread stands.
enum Standing {
    Stuck(Stuck),
    /// At the start of a spin or retry loop's iteration: stuck if the
    /// iteration goes back on the latest versions.
    SpinStart(usize, SpinLoop),
    Cut,
}

impl<S: Bits> Machine<'_, S> {
    /// Whether `st` is a hang witness (or a settled state with a thread cut
    /// at the bound). Cheap when it is not: it stops at the first thread that
    /// can still move.
    pub fn quiescence(&self, st: &State<S>) -> Quiescence {
        let mut standing = Vec::new();
        let mut any = false;
        for (t, th) in self.program.threads.iter().enumerate() {
            let ts = &st.threads[t];
            if ts.cut {
                standing.push(Standing::Cut);
                any = true;
                continue;
            }
            if ts.pc >= th.code.len() || self.unstarted(st, t) {
                continue;
            }
            match self.standing(st, t) {
                Some(s) => {
                    standing.push(s);
                    any = true;
                }
                None => return Quiescence::Running,
            }
        }
        // A witness is a consistent prefix: with lazy coherence, one whose
        // coherence can be completed.
        if !any || !self.clean(st) || !self.completable(st) {
            return Quiescence::Running;
        }
        let mut stuck = Vec::new();
        let mut cut = false;
        for s in standing {
            match s {
                Standing::Stuck(s) => stuck.push(s),
                Standing::Cut => cut = true,
                Standing::SpinStart(t, lp) => match self.spinning_reads(st, t, &lp) {
                    Some(reads) => stuck.push(Stuck {
                        thread: t,
                        pc: lp.head,
                        on: Waits::Spin {
                            head: lp.head,
                            back: lp.back,
                            reads,
                        },
                    }),
                    None => return Quiescence::Running,
                },
            }
        }
        if cut {
            Quiescence::Cut
        } else {
            Quiescence::Hang(Hang {
                stuck,
                copies: self.program.granularity,
            })
        }
    }

    /// Whether thread `t` is an agent that has not started because its
    /// issuer has not performed its execution of the operation (yet, or
    /// ever: a branch skipped it, a loop ran fewer times, or the issuer is
    /// stuck before it). Such an agent has no events and is never stuck
    /// (`docs/async.md`, "Branching issuers").
    pub fn unstarted(&self, st: &State<S>, t: usize) -> bool {
        let Some(a) = &self.program.threads[t].agent else {
            return false;
        };
        let ts = &st.threads[t];
        if ts.pc != 0 || ts.cut {
            return false;
        }
        self.layout
            .slot(a.issuer, a.spawn_pc, a.exec)
            .is_none_or(|s| !st.retired.has(s))
    }

    /// Whether thread `t` is an agent that never starts: it has not
    /// started, its issuer has finished, so nothing can start it, and it
    /// has issued nothing ahead of its start. It counts as finished for
    /// final states.
    ///
    /// The machine may issue an agent's accesses speculatively before its
    /// start retires (as any thread's); an agent that never starts never
    /// retires them, so a state where another thread read such a write is
    /// not the prefix of any execution and must not count as final.
    pub fn never_starts(&self, st: &State<S>, t: usize) -> bool {
        self.cannot_start(st, t) && !(st.bound | st.versions).meets(self.layout.thread_slots[t])
    }

    /// Whether thread `t` is an agent that has not started and whose issuer
    /// has finished, so that nothing can start it any more.
    pub fn cannot_start(&self, st: &State<S>, t: usize) -> bool {
        self.unstarted(st, t) && {
            let i = self.program.threads[t].agent.as_ref().unwrap().issuer;
            st.threads[i].finished(self.program.threads[i].code.len())
        }
    }

    /// Every issued write and bound read has retired: the state is a
    /// prefix of an execution, with no speculation ahead of it.
    fn clean(&self, st: &State<S>) -> bool {
        !st.bound.meets(!st.retired) && !st.versions.meets(!(st.retired | self.layout.inits))
    }

    /// How unfinished thread `t` stands, if it is stuck or may be.
    fn standing(&self, st: &State<S>, t: usize) -> Option<Standing> {
        let ts = &st.threads[t];
        let code = &self.program.threads[t].code;
        let pc = ts.pc;
        let slot = self.layout.slot(t, pc, ts.execs[pc] as usize);
        let stuck = |on| Some(Standing::Stuck(Stuck { thread: t, pc, on }));
        match &code[pc] {
            Instr::Barrier { kind, .. } if kind.waits() && ts.arrived => {
                let slot = slot?;
                if self.barrier_merge(st, t, slot).is_some() {
                    return None;
                }
                let waits = self.barrier_waits(st, t, slot);
                // A lane waiting for good at an `activemask` rendezvous is
                // no hang: its block was not a possible set of lanes in this
                // run, and the choice that splits the block covers the run
                // (`ir::activemask`). The state is not a witness.
                if let Waits::Barrier { id, .. } = &waits {
                    if crate::model::barrier::is_activemask(id) {
                        return None;
                    }
                }
                stuck(waits)
            }
            // A lane whose warp arrives as one event waits for the lanes
            // that have not reached the barrier (`model::barrier::warp_unit`).
            Instr::Barrier { .. }
                if !ts.arrived && crate::model::barrier::warp_unit(&self.program, t, &code[pc]) =>
            {
                let windows = super::window::Windows::new(self, st);
                let e = windows.get(t).entries.first()?.clone();
                match self.warp_gate(st, t, &e, &windows) {
                    super::steps::WarpGate::Wait(missing) if !missing.is_empty() => {
                        stuck(Waits::Warp { lanes: missing })
                    }
                    _ => None,
                }
            }
            Instr::Await { from } => {
                let missing: Vec<(usize, usize)> = from
                    .iter()
                    .filter(|a| {
                        let s = self
                            .layout
                            .slot(a.thread, a.pc, a.exec)
                            .expect("awaited points have slots");
                        !st.retired.has(s)
                    })
                    .map(|a| (a.thread, a.pc))
                    .collect();
                if missing.is_empty() {
                    return None;
                }
                stuck(Waits::Await { missing })
            }
            Instr::MbarWait {
                phase: WaitPhase::Phase(k),
                addr,
                ..
            } if slot.is_some_and(|s| !st.bound.has(s)) => {
                let loc = self.program.addresses[*addr].loc;
                let failing = self
                    .latest(st, loc)
                    .find(|&v| !mbar::done(mbar::Test::Phase, st.value[v], *k))?;
                stuck(Waits::Phase {
                    loc,
                    value: st.value[failing],
                    phase: *k,
                })
            }
            // Inside a spin or retry loop, with nothing bound ahead: whatever
            // this iteration has read so far can be left out of the prefix
            // (reads only add constraints), so the thread stands at the start
            // of an iteration. Not so once a retry loop's CAS has written.
            //
            // Under morally strong fairness the iteration is replayed on the
            // machine's own steps from the head, so nothing of it may have
            // retired: only register instructions before `pc` (R1 retires
            // those as soon as the thread reaches them).
            _ => {
                let lp = *self.layout.loops[t].loop_at(pc)?;
                let bound = slot.is_some_and(|s| st.bound.has(s));
                let wrote = lp.retry.is_some_and(|cas| pc > cas);
                // Fences do not count: the replay re-runs them on the view
                // they left (`spin_fair`), which they already hold. Counting
                // them lost every hang of a loop that starts with a fence:
                // R1 retires the fence first and alone, so the thread is
                // never seen at the head with the others stuck.
                let began = self.fairness == Fairness::MorallyStrong
                    && (lp.head..pc).any(|q| {
                        self.layout.base[t][q].is_some() && !crate::model::loops::is_fence(&code[q])
                    });
                (!bound && !wrote && !began).then_some(Standing::SpinStart(t, lp))
            }
        }
    }

    /// The coherence-maximal versions of location `loc` (with lazy
    /// coherence, those that end some consistent completion; one per value).
    fn latest(&self, st: &State<S>, loc: usize) -> impl Iterator<Item = usize> + use<S> {
        members(self.maxima(st, loc))
    }

    /// The barrier thread `t` (arrived in `slot`) waits at, and who arrived.
    fn barrier_waits(&self, st: &State<S>, t: usize, slot: usize) -> Waits {
        let me = st
            .arrivals
            .iter()
            .find(|a| a.slot == slot && a.thread == t)
            .expect("an arrived thread has its arrival");
        let mut arrived: Vec<usize> = st
            .arrivals
            .iter()
            .filter(|a| a.cta == me.cta && a.id == me.id && a.phase == me.phase)
            .map(|a| a.thread)
            .collect();
        arrived.sort_unstable();
        let needed = match (self.barriers, me.needed) {
            (_, Some(n)) => usize::try_from(n).unwrap_or(usize::MAX),
            // ISA: every thread of the CTA that has not exited.
            // ISA (and `bar.warp.sync` under either reading): every thread of
            // the CTA, or lane of the mask, that has not exited.
            (r, None) if r == crate::model::barrier::Reading::Isa || me.id.len() == 3 => self
                .barrier_participants(me.cta, &me.id)
                .iter()
                .filter(|&&u| {
                    arrived.contains(&u)
                        || !st.threads[u].finished(self.program.threads[u].code.len())
                })
                .count(),
            (_, None) => (0..st.threads.len())
                .filter(|&u| {
                    st.arrivals
                        .iter()
                        .any(|a| a.thread == u && a.cta == me.cta && a.id == me.id)
                        || self.may_arrive(st, u, me.cta, &me.id)
                })
                .count(),
        };
        let undefined = st
            .arrivals
            .iter()
            .filter(|a| a.cta == me.cta && a.id == me.id && a.phase == me.phase)
            .any(|a| a.ub.is_some() || a.needed != me.needed || a.count != me.count);
        Waits::Barrier {
            id: me.id.to_vec(),
            count: me.count,
            arrived,
            needed,
            undefined,
        }
    }

    /// If thread `t`'s next iteration of `lp`, every read returning a
    /// coherence-latest version, goes back: what those reads return
    /// `(pc, location, value)`. With several latest versions of a location
    /// (coherence left partial), any choice that goes back will do; the
    /// first in slot order is reported.
    pub fn spinning_reads(
        &self,
        st: &State<S>,
        t: usize,
        lp: &SpinLoop,
    ) -> Option<Vec<(usize, usize, Value)>> {
        let mut reads = Vec::new();
        if self.fairness == Fairness::MorallyStrong {
            let mut s = Box::new(st.clone());
            s.thread_mut(t).pc = lp.head;
            let mut chosen = Vec::new();
            return self
                .spin_fair(s, t, lp, &mut reads, &mut chosen)
                .then_some(reads);
        }
        let regs: SmallVec<[Value; 8]> = st.threads[t].regs.iter().copied().collect();
        self.spin_from(st, t, lp, lp.head, regs, &mut reads)
            .then_some(reads)
    }

    /// [`Machine::spinning_reads`] under morally strong fairness
    /// (`docs/loops.md`, "Fairness"): the iteration is run on the machine's
    /// own retirement (`s`, a copy of the witness with thread `t` at the
    /// loop's head), each plain load returning any version that no version
    /// morally strong with it follows, each RMW (a retry loop's CAS) or
    /// mbarrier wait a coherence-latest one. Retiring checks the iteration
    /// itself (causality against the view it has); at the back edge, the
    /// *next* iteration must be able to read the same versions with the view
    /// this one leaves (`fair_repeat`): then every iteration after it does
    /// too, and the loop spins forever. `chosen`: (slot, version) of the
    /// loads so far.
    fn spin_fair(
        &self,
        mut s: Box<State<S>>,
        t: usize,
        lp: &SpinLoop,
        reads: &mut Vec<(usize, usize, Value)>,
        chosen: &mut Vec<(usize, usize)>,
    ) -> bool {
        let code = &self.program.threads[t].code;
        loop {
            let Some(e) = self.head_entry(&s, t) else {
                return false;
            };
            let pc = e.pc;
            let instr = &code[pc];
            match instr {
                Instr::Load { access, .. } | Instr::Rmw { access, .. } => {
                    let loc = self.program.addresses[access.addr].loc;
                    let slot = e.slot.expect("a read has a slot");
                    let vs = s.versions & self.layout.loc_slots[loc];
                    let load = matches!(instr, Instr::Load { .. });
                    let candidates = if load {
                        members(vs)
                            .filter(|&v| self.can_stay_above(&s, loc, v, self.layout.ms[slot] & vs))
                            .fold(S::EMPTY, |m, v| m | S::bit(v))
                    } else {
                        self.maxima(&s, loc)
                    };
                    for v in members(candidates) {
                        let mut s2 = s.clone();
                        if !self.retire_read(&mut s2, t, &e, v) {
                            continue;
                        }
                        reads.push((pc, loc, s.value[v]));
                        if load {
                            chosen.push((slot, v));
                        }
                        if self.spin_fair(s2, t, lp, reads, chosen) {
                            return true;
                        }
                        reads.pop();
                        if load {
                            chosen.pop();
                        }
                    }
                    return false;
                }
                Instr::MbarWait { addr, dst, .. } => {
                    let loc = self.program.addresses[*addr].loc;
                    let slot = e.slot.expect("a wait has a slot");
                    for v in self.latest(&s, loc) {
                        let mut s2 = s.clone();
                        s2.rf[slot] = v as u16;
                        s2.bound |= S::bit(slot);
                        // A blocking wait inside the loop that fails: the
                        // thread is stuck there, which the wait reports.
                        if dst.is_none() && !self.wait_done(&s2, t, slot) {
                            continue;
                        }
                        if !self.retire_read(&mut s2, t, &e, v) {
                            continue;
                        }
                        reads.push((pc, loc, s.value[v]));
                        if self.spin_fair(s2, t, lp, reads, chosen) {
                            return true;
                        }
                        reads.pop();
                    }
                    return false;
                }
                Instr::Mov { .. } | Instr::Arith { .. } => self.advance(&mut s, t, &e, None),
                Instr::Branch { cond, target } => {
                    let regs = &s.threads[t].regs;
                    let taken = cond
                        .as_ref()
                        .is_none_or(|(c, a, b)| c.holds(arg_value(regs, a), arg_value(regs, b)));
                    if pc == lp.back {
                        return taken && self.fair_repeat(&s, t, chosen);
                    }
                    if taken && *target > lp.back {
                        return false; // an exit
                    }
                    self.advance(&mut s, t, &e, taken.then_some(*target));
                }
                i if crate::model::loops::is_fence(i) => {
                    // A fence this iteration already retired (the witness
                    // stands past it, `standing`) has no fresh slot: it runs
                    // again as its last execution, on the view it left.
                    let slot = match e.slot {
                        Some(slot) if !s.retired.has(slot) => slot,
                        _ => self
                            .layout
                            .slot(t, pc, self.layout.execs[t][pc] - 1)
                            .expect("a fence has a slot"),
                    };
                    let e = super::window::Entry {
                        slot: Some(slot),
                        ..e
                    };
                    let k = {
                        let w = super::window::Windows::new(self, &s);
                        match i {
                            Instr::ProxyFence { .. } => Some(s.threads[t].view.clone()),
                            _ => self.propagate_in(&s, t, slot, &w),
                        }
                    };
                    let Some(k) = k else { return false };
                    if self.finish_retire_check(&mut s, t, &e, k).is_err() {
                        return false;
                    }
                }
                _ => unreachable!(
                    "spin and retry loop bodies hold reads, fences, register moves and branches"
                ),
            }
        }
    }

    /// Bind the read of entry `e` to version `v` and retire it on `s` (the
    /// machine's checks: causality against the thread's view, obligations,
    /// SC per location). A retry loop's CAS retires as the read it is in the
    /// repeated iteration (its write puts back what it read): its acquire
    /// merges, its register is written, nothing is issued.
    fn retire_read(
        &self,
        s: &mut Box<State<S>>,
        t: usize,
        e: &super::window::Entry,
        v: usize,
    ) -> bool {
        let slot = e.slot.expect("a read has a slot");
        s.rf[slot] = v as u16;
        s.bound |= S::bit(slot);
        let k = {
            let w = super::window::Windows::new(self, s);
            self.propagate_in(s, t, slot, &w)
        };
        let Some(mut k) = k else { return false };
        if let Instr::Rmw { dst, .. } = &self.program.threads[t].code[e.pc] {
            k.raw |= S::bit(slot);
            if self.layout.slots[slot].proxy == crate::ir::Proxy::Generic {
                k.gen_ |= S::bit(slot);
            }
            let value = s.value[v];
            let ts = s.thread_mut(t);
            ts.view = k;
            if let Some(d) = dst {
                ts.regs[*d] = value;
            }
            s.retired |= S::bit(slot);
            s.seq[slot] = e.seq;
            self.advance(s, t, e, None);
            return true;
        }
        self.finish_retire_check(s, t, e, k).is_ok()
    }

    /// At the back edge of an iteration run by [`Machine::spin_fair`] on `s`:
    /// whether the next iteration's loads can return the same versions —
    /// each not followed, in some consistent completion of coherence, by a
    /// version morally strong with the load or in the causal past the
    /// iteration leaves on its line (`Front⁺` of the thread's view). Then
    /// the next iteration retires as this one did and leaves the same view,
    /// so every later one does too.
    fn fair_repeat(&self, s: &State<S>, t: usize, chosen: &[(usize, usize)]) -> bool {
        let k = &s.threads[t].view;
        chosen.iter().all(|&(slot, v)| {
            let loc = self.layout.slots[slot].loc;
            let vs = s.versions & self.layout.loc_slots[loc];
            let avoid = (self.front_plus(s, k, slot).0 | self.layout.ms[slot]) & vs;
            self.can_stay_above(s, loc, v, avoid)
        })
    }

    fn spin_from(
        &self,
        st: &State<S>,
        t: usize,
        lp: &SpinLoop,
        mut pc: usize,
        mut regs: SmallVec<[Value; 8]>,
        reads: &mut Vec<(usize, usize, Value)>,
    ) -> bool {
        let code = &self.program.threads[t].code;
        loop {
            let instr = &code[pc];
            let read_loc = match instr {
                Instr::Load { access, .. } | Instr::Rmw { access, .. } => {
                    Some(self.program.addresses[access.addr].loc)
                }
                Instr::MbarWait { addr, .. } => Some(self.program.addresses[*addr].loc),
                _ => None,
            };
            if let Some(loc) = read_loc {
                let versions: SmallVec<[usize; 4]> = self.latest(st, loc).collect();
                for v in versions {
                    let value = st.value[v];
                    let mut r = regs.clone();
                    match instr {
                        Instr::Load { dst, .. } | Instr::Rmw { dst: Some(dst), .. } => {
                            r[*dst] = value
                        }
                        Instr::MbarWait { dst, phase, .. } => {
                            let (test, arg) = mbar::Test::of(phase);
                            let arg = arg_value(&r, &arg);
                            let done = mbar::done(test, value, arg);
                            match dst {
                                Some(d) => r[*d] = done as Value,
                                // A blocking wait inside the loop: if it fails the
                                // thread is stuck there, which the wait itself reports.
                                None if !done => continue,
                                None => {}
                            }
                        }
                        _ => unreachable!("a read"),
                    }
                    reads.push((pc, loc, value));
                    if self.spin_from(st, t, lp, pc + 1, r, reads) {
                        return true;
                    }
                    reads.pop();
                }
                return false;
            }
            match instr {
                Instr::Mov { .. } | Instr::Arith { .. } => {
                    let (dst, v) = instr
                        .local_effect::<Value>(&regs)
                        .expect("a register instruction");
                    regs[dst] = v;
                }
                Instr::Branch { cond, target } => {
                    let taken = cond
                        .as_ref()
                        .is_none_or(|(c, a, b)| c.holds(arg_value(&regs, a), arg_value(&regs, b)));
                    if pc == lp.back {
                        return taken;
                    }
                    if taken {
                        if *target > lp.back {
                            return false; // an exit
                        }
                        pc = *target;
                        continue;
                    }
                }
                // A fence only orders: the iteration goes on.
                i if crate::model::loops::is_fence(i) => {}
                _ => unreachable!(
                    "spin and retry loop bodies hold reads, fences, register moves and branches"
                ),
            }
            pc += 1;
        }
    }
}

fn arg_value(regs: &[Value], o: &crate::ir::Operand) -> Value {
    crate::ir::eval::operand(regs, o)
}
