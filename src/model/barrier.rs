//! CTA barriers (`bar`/`barrier{.cta}`): what an arrival means, under the
//! reading in force, for both engines (`docs/barriers.md`).
//!
//! **The ISA reading** (the default; PTX ISA §9.7.13.1, "Parallel
//! Synchronization and Communication Instructions: bar, barrier"):
//! * `bar.sync a` names barrier `a` (0..15) of the CTA; with no thread count
//!   *all non-exited threads of the CTA* participate, so a phase completes
//!   once every thread placed in the CTA has arrived or exited — an exit
//!   releases the threads a count-less barrier was holding up;
//! * `bar.sync a, b` / `bar.arrive a, b`: `b` threads participate, a multiple
//!   of the warp size, and the ISA counts them per warp (*"marks warps'
//!   arrival at barrier"*), so the phase needs `b / 32` warp arrivals. A
//!   litmus thread alone in its warp stands for one warp; the lanes of a warp
//!   (`warp N`, a kernel's CUDA threads) first wait for each other (*"causes
//!   executing thread to wait for all non-exited threads from its warp"*),
//!   then arrive together as one event ([`warp_unit`]). The dialect's
//!   three-operand form `bar.sync a, b, n` names the barrier `(a, b)` and
//!   needs `n` arrivals;
//! * arrivals are counted per barrier, whichever thread makes them: a
//!   run-ahead `bar.arrive` counts again; the first `n` arrivals complete the
//!   phase and later ones belong to the next; exits do not count. The order
//!   of arrivals is a choice both engines explore.
//!
//! Undefined behaviour (the ISA's words): a thread count that is zero,
//! negative or not a multiple of the warp size, a barrier name outside
//! 0..15, `bar.arrive` without a count, and participants of one phase that
//! disagree on the count. An arrival that is undefined *poisons* its phase:
//! the phase never completes (so whoever waits on it is stuck), and the run
//! reports the undefined behaviour.
//!
//! **The Dat3M reading** (`--barriers dat3m`, for Dat3M's suites): the
//! operands are names (`bar.cta.sync 1, 1` is barrier `(1, 1)`), the k-th
//! arrival of each thread belongs to the k-th phase, a count-less phase
//! needs every thread that arrives at that barrier at all (or still may),
//! and with a count `n` any `n` arrivals of the phase complete it while the
//! others pass with their views.

use clap::ValueEnum;
use serde::Serialize;
use smallvec::{SmallVec, smallvec};

use super::ub::{UbKind, Undefined};
use crate::ir::{BarrierKind, Instr, Operand, Program, Value};

/// How CTA barriers are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// The PTX ISA's text, as the H100 behaves (`docs/barriers.md`).
    #[default]
    Isa,
    /// Dat3M's reading, for Dat3M's suites (`docs/oracle.md` choice 4).
    Dat3m,
}

impl Reading {
    /// The reading the engines apply to `p`: `bar.warp.sync` has the ISA's
    /// reading only, so a program whose barriers are all `bar.warp.sync` is
    /// read under it whatever the option says (Dat3M has no warp barrier).
    /// A program that mixes them with CTA barriers under `--barriers dat3m`
    /// keeps the Dat3M reading for both (`docs/warps.md`: not supported).
    pub fn for_program(self, p: &Program) -> Reading {
        let mut warp = false;
        for i in p.threads.iter().flat_map(|t| &t.code) {
            match i {
                Instr::Barrier {
                    kind: BarrierKind::WarpSync | BarrierKind::Elect | BarrierKind::ActiveMask,
                    ..
                } => warp = true,
                Instr::Barrier { .. } => return self,
                _ => {}
            }
        }
        if warp { Reading::Isa } else { self }
    }

    /// The option's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Reading::Isa => "isa",
            Reading::Dat3m => "dat3m",
        }
    }
}

/// The warp size: a litmus thread stands for one warp.
pub const WARP: Value = 32;

/// Why a barrier arrival is undefined behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BarrierUb {
    /// The barrier name is outside 0..15.
    Name,
    /// The thread count is zero or negative.
    CountNotPositive,
    /// The thread count is not a multiple of the warp size.
    CountNotWarpMultiple,
    /// `bar.arrive` without a thread count.
    ArriveWithoutCount,
    /// Participants of one phase disagree on the thread count.
    CountsDisagree,
    /// `bar.warp.sync` by a lane its membermask does not name.
    WarpSelfNotInMask,
    /// `elect.sync` by a lane its membermask does not name.
    ElectSelfNotInMask,
    /// Lanes of one warp arrive at one phase of an `.aligned` barrier from
    /// different instructions (a divergent `bar.sync`).
    AlignedDivergent,
    /// Lanes of one warp stay for good at different CTA barriers, one of
    /// them counted (its warp arrival can never gather the lanes).
    WarpBarriersDiffer,
    /// A lane waits for good at an `.aligned` CTA barrier that another lane
    /// of its warp, which has not exited, never executes (it is stuck at
    /// another instruction: a spin loop, a wait, another barrier).
    AlignedLaneAway,
}

impl BarrierUb {
    /// What happened, in a sentence fragment.
    pub fn what(self) -> &'static str {
        match self {
            BarrierUb::Name => "the barrier name is outside 0..15",
            BarrierUb::CountNotPositive => "the thread count is not positive",
            BarrierUb::CountNotWarpMultiple => {
                "the thread count is not a multiple of the warp size (32)"
            }
            BarrierUb::ArriveWithoutCount => "`bar.arrive` has no thread count",
            BarrierUb::CountsDisagree => "participants of one barrier phase disagree on the count",
            BarrierUb::WarpSelfNotInMask => {
                "`bar.warp.sync` is executed by a lane that its membermask does not name"
            }
            BarrierUb::ElectSelfNotInMask => {
                "`elect.sync` is executed by a lane that its membermask does not name"
            }
            BarrierUb::AlignedDivergent => {
                "lanes of one warp reach an `.aligned` barrier at different instructions"
            }
            BarrierUb::WarpBarriersDiffer => {
                "lanes of one warp wait for good at different barriers, one of them counted: the \
                 warp's arrival at the counted barrier can never gather its lanes"
            }
            BarrierUb::AlignedLaneAway => {
                "a lane waits for good at an `.aligned` barrier that another lane of its warp, \
                 which has not exited, never executes"
            }
        }
    }

    /// The ISA's sentence that makes it undefined.
    pub fn isa(self) -> &'static str {
        match self {
            BarrierUb::Name => {
                "PTX ISA 9.7.13.1: \"operand a specifies a logical barrier resource as an immediate \
                 constant or register with value 0 through 15\""
            }
            BarrierUb::CountNotPositive | BarrierUb::ArriveWithoutCount => {
                "PTX ISA 9.7.13.1: \"a non-zero thread count is required for barrier{.cta}.arrive\"; \
                 \"operand b specifies the number of threads participating in the barrier\""
            }
            BarrierUb::CountNotWarpMultiple => {
                "PTX ISA 9.7.13.1: \"when specifying a thread count, the value must be a multiple of \
                 the warp size\""
            }
            BarrierUb::CountsDisagree => {
                "PTX ISA 9.7.13.1: the threads of one barrier phase must give the same thread count \
                 (\"operand b specifies the number of threads participating in the barrier\"); \
                 with different counts the phase's completion is not defined"
            }
            BarrierUb::WarpSelfNotInMask => {
                "PTX ISA 9.7.13.2 (bar.warp.sync): \"the behavior of bar.warp.sync is undefined if \
                 the executing thread is not in the membermask\""
            }
            BarrierUb::ElectSelfNotInMask => {
                "PTX ISA, Parallel Synchronization and Communication Instructions: elect.sync: \"the \
                 behavior is undefined if the executing thread is not in membermask\""
            }
            BarrierUb::AlignedDivergent => {
                "PTX ISA 9.7.13.1: \"the optional .aligned modifier indicates that all threads in CTA \
                 will execute the same barrier{.cta} instruction. In conditionally executed code, an \
                 aligned barrier{.cta} instruction should only be used if it is known that all threads \
                 in CTA evaluate the condition identically, otherwise behavior is undefined\" \
                 (barriers are executed per warp: ptxmc applies it to the lanes of a warp)"
            }
            BarrierUb::WarpBarriersDiffer => {
                "PTX ISA 9.7.13.1: \"barrier{.cta} instruction causes executing thread to wait for \
                 all non-exited threads from its warp and marks warps' arrival at barrier\" — a \
                 warp arrives at one barrier; for `bar` and `.aligned` forms \"all threads in CTA \
                 will execute the same barrier{.cta} instruction ... otherwise behavior is \
                 undefined\", and for sm_6x and below \"all threads in warp (except for those have \
                 exited) must execute barrier{.cta} instruction in convergence\"; the ISA gives no \
                 meaning to a warp whose lanes name different barriers"
            }
            BarrierUb::AlignedLaneAway => {
                "PTX ISA 9.7.13.1: \"the optional .aligned modifier indicates that all threads in CTA \
                 will execute the same barrier{.cta} instruction. In conditionally executed code, an \
                 aligned barrier{.cta} instruction should only be used if it is known that all threads \
                 in CTA evaluate the condition identically, otherwise behavior is undefined\"; a lane \
                 that has exited is excused (\"wait for all non-exited threads from its warp\"), one \
                 stuck elsewhere is not (barriers are executed per warp: ptxmc applies it to the \
                 lanes of a warp)"
            }
        }
    }
}

/// What an arrival at a CTA barrier stands for under a reading.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Resolved {
    /// The values naming the barrier resource.
    pub id: SmallVec<[Value; 2]>,
    /// Arrivals (litmus threads) a phase needs; `None`: every thread of the
    /// CTA (ISA: that has not exited; Dat3M: that uses the barrier).
    pub needed: Option<Value>,
    /// The count as the participants compare it (the operand value).
    pub count: Option<Value>,
    /// The arrival is undefined behaviour (ISA reading only).
    pub ub: Option<BarrierUb>,
}

/// Resolve a barrier instruction's operand values (`ids` as written, then
/// the count operand of the three-operand form) under `reading`.
///
/// PTX's thread count `b` needs `b / 32` warp arrivals: a thread alone in
/// its warp arrives as its warp, the lanes of a warp together
/// ([`warp_unit`]).
pub fn resolve(
    reading: Reading,
    kind: BarrierKind,
    ids: &[Value],
    count: Option<Value>,
) -> Resolved {
    match reading {
        Reading::Dat3m => Resolved {
            id: SmallVec::from_slice(ids),
            needed: count,
            count,
            ub: None,
        },
        Reading::Isa => {
            let (id, count, warps): (SmallVec<[Value; 2]>, Option<Value>, bool) = match (ids, count)
            {
                // PTX's `bar.sync a, b`: `b` threads.
                ([a, b], None) => (smallvec![*a], Some(*b), true),
                // The dialect's `bar.sync a, b, n`: `n` litmus threads.
                (ids, c) => (SmallVec::from_slice(ids), c, false),
            };
            let mut ub = None;
            if !(0..16).contains(&id[0]) {
                ub = Some(BarrierUb::Name);
            }
            let needed = match count {
                None if kind == BarrierKind::Arrive => {
                    ub = ub.or(Some(BarrierUb::ArriveWithoutCount));
                    None
                }
                None => None,
                Some(c) if c <= 0 => {
                    ub = ub.or(Some(BarrierUb::CountNotPositive));
                    Some(c)
                }
                Some(c) if warps && c % WARP != 0 => {
                    ub = ub.or(Some(BarrierUb::CountNotWarpMultiple));
                    Some(c)
                }
                Some(c) if warps => Some(c / WARP),
                Some(c) => Some(c),
            };
            Resolved {
                id,
                needed,
                count,
                ub,
            }
        }
    }
}

/// Whether thread `t`'s arrivals at the CTA barrier instruction `i` are
/// made by its warp as one event (ISA reading): `i` is PTX's counted
/// `bar{.cta}.sync/arrive a, b` (two operands) and `t` is a lane of a warp
/// of several litmus lanes. PTX ISA §9.7.13.1: the instruction *"causes
/// executing thread to wait for all non-exited threads from its warp and
/// marks warps' arrival at barrier"*, so the lanes wait for each other
/// (every lane not finished has reached a barrier instruction naming the
/// same barrier), then arrive together; the warp's arrival counts 32
/// threads, however many lanes the litmus test gives it. Lanes at
/// count-less barriers arrive one by one (a count-less phase needs every
/// thread of the CTA anyway).
pub fn warp_unit(p: &Program, t: usize, i: &Instr) -> bool {
    matches!(i, Instr::Barrier { kind, id, count: None, .. } if !kind.is_warp() && id.len() == 2)
        && p.threads[t].agent.is_none()
        && p.warp_lanes(t).len() > 1
}

/// Where a thread stands in its warp, for `bar.warp.sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpOf {
    /// Names the warp within its CTA: the `warp` number, or `-1 - thread`
    /// for a thread alone in its warp.
    pub key: Value,
    /// The thread's lane id.
    pub lane: u32,
}

impl WarpOf {
    /// Thread `t`'s warp in `p`.
    pub fn of(p: &Program, t: usize) -> WarpOf {
        let key = match p.threads[t].placement.warp {
            Some(w) if p.threads[t].agent.is_none() => Value::from(w),
            _ => -1 - t as Value,
        };
        WarpOf {
            key,
            lane: p.lane_id(t) as u32,
        }
    }
}

/// A `bar.warp.sync membermask` arrival (PTX ISA 9.7.13.2): its resource
/// is the pair (warp, membermask) — the lanes wait for *"all threads
/// corresponding to membermask"* that execute *"a bar.warp.sync with the
/// same membermask value"* — so lanes with different masks use different
/// resources (and wait for each other forever). The key has three values,
/// so it never equals a CTA barrier's (one or two). Count-less: a phase
/// completes once every lane named in the mask that exists has arrived or
/// exited ([`participants`]). A lane the mask does not name is undefined.
pub fn resolve_warp(mask: Value, warp: WarpOf) -> Resolved {
    let m = mask & 0xffff_ffff;
    Resolved {
        id: smallvec![warp.key, m, WARP_SYNC_TAG],
        needed: None,
        count: None,
        ub: (m >> warp.lane & 1 == 0).then_some(BarrierUb::WarpSelfNotInMask),
    }
}

/// The third value of a `bar.warp.sync` resource's key.
const WARP_SYNC_TAG: Value = 0;
/// The third value of an `elect.sync` resource's key.
const ELECT_TAG: Value = 1;
/// The third value of an `activemask` rendezvous' key.
const ACTIVEMASK_TAG: Value = 2;

/// An `elect.sync membermask` arrival: like [`resolve_warp`] (the mask's
/// lanes wait for each other: *"elect causes the executing thread to wait
/// until all threads in the membermask execute the elect instruction"*), on
/// a resource of its own, whose completion orders no memory
/// ([`orders_memory`]). A lane the mask does not name is undefined.
pub fn resolve_elect(mask: Value, warp: WarpOf) -> Resolved {
    let mut r = resolve_warp(mask, warp);
    r.id[2] = ELECT_TAG;
    r.ub = r.ub.map(|_| BarrierUb::ElectSelfNotInMask);
    r
}

/// An `activemask` rendezvous (`ir::activemask`): `block` is the lanes'
/// mask with the instruction's site + 1 above bit 31, so each instruction
/// of each warp has its own resource, whose participants are the block's
/// lanes. It orders no memory ([`orders_memory`]) and an exited lane is not
/// excused ([`excuses_exits`]): the lanes of a block execute the
/// instruction together.
pub fn resolve_activemask(block: Value, warp: WarpOf) -> Resolved {
    Resolved {
        id: smallvec![warp.key, block, ACTIVEMASK_TAG],
        needed: None,
        count: None,
        ub: None,
    }
}

/// Resolve an arrival at a warp-level barrier of `kind` with mask `mask`.
pub fn resolve_warp_kind(kind: BarrierKind, mask: Value, warp: WarpOf) -> Resolved {
    match kind {
        BarrierKind::Elect => resolve_elect(mask, warp),
        BarrierKind::ActiveMask => resolve_activemask(mask, warp),
        _ => resolve_warp(mask, warp),
    }
}

/// Whether a completed phase of the resource `id` orders memory (its
/// arrivals synchronise with the other participants' waits): every barrier
/// but `elect.sync`'s convergence wait and `activemask`'s rendezvous, for
/// which the PTX ISA states no memory ordering.
pub fn orders_memory(id: &[Value]) -> bool {
    !matches!(*id, [_, _, ELECT_TAG | ACTIVEMASK_TAG])
}

/// Whether a count-less phase of the resource `id` completes when its
/// participants that have not arrived have exited: every barrier but an
/// `activemask` rendezvous, whose block is the lanes that execute the
/// instruction together (`ir::activemask`).
pub fn excuses_exits(id: &[Value]) -> bool {
    !matches!(*id, [_, _, ACTIVEMASK_TAG])
}

/// Whether `id` is an `activemask` rendezvous: a lane waiting at one for
/// good is no hang witness (its block was not a possible set of lanes in
/// that run; another choice covers the run: `ir::activemask`).
pub fn is_activemask(id: &[Value]) -> bool {
    !excuses_exits(id)
}

/// The threads a count-less phase of the resource `id` in CTA (`gpu`,
/// `cta`) waits for, when they are not every thread of the CTA: for a
/// `bar.warp.sync` resource, the lanes of its warp named in its membermask
/// (a lane the litmus test does not have never runs, like a lane of a
/// partial warp, and is not waited for). `None` for a CTA barrier.
pub fn participants(p: &Program, gpu: u32, cta: u32, id: &[Value]) -> Option<Vec<usize>> {
    let [key, mask, WARP_SYNC_TAG | ELECT_TAG | ACTIVEMASK_TAG] = *id else {
        return None;
    };
    let lanes: Vec<usize> = if key < 0 {
        vec![usize::try_from(-1 - key).unwrap_or(usize::MAX)]
    } else {
        (0..p.threads.len())
            .filter(|&u| {
                let pl = p.threads[u].placement;
                p.threads[u].agent.is_none()
                    && (pl.gpu, pl.cta) == (gpu, cta)
                    && pl.warp.map(Value::from) == Some(key)
            })
            .collect()
    };
    Some(
        lanes
            .into_iter()
            .enumerate()
            .filter(|&(lane, u)| u < p.threads.len() && lane < 32 && mask >> lane & 1 == 1)
            .map(|(_, u)| u)
            .collect(),
    )
}

/// One arrival at a barrier resource, as the oracle's phase planner sees it.
#[derive(Clone, Debug)]
pub struct PlanArrival {
    /// The arriving thread.
    pub thread: usize,
    /// Arrivals its phase needs (`None`: every non-exited thread of the CTA).
    pub needed: Option<Value>,
    /// The count as compared between participants.
    pub count: Option<Value>,
    /// Undefined (poisons its phase), and why.
    pub ub: Option<BarrierUb>,
    /// `bar.sync`: the thread waits for the phase.
    pub waits: bool,
    /// The thread's path stops here for good (termination search): its
    /// phase must never complete.
    pub stuck: bool,
    /// Whether the thread of the list this arrival stands in itself waits
    /// here. Equal to `waits` except for a warp's event
    /// (`ax::barriers::warp_units`), which waits when any lane does but
    /// stands in its first lane's list: a first lane that only arrives goes
    /// on to its own later arrivals (count-less ones) while the phase is
    /// still open, and they may join it.
    pub own_waits: bool,
    /// Whether the list's thread itself stops here for good (as
    /// `own_waits` to `waits`): a warp's event stuck because of another
    /// lane may be followed by its first lane's own arrivals.
    pub own_stuck: bool,
}

/// One phase of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedPhase {
    /// Its arrivals (indices into the resource's arrivals), in thread order.
    pub members: Vec<usize>,
    /// Whether it completes.
    pub complete: bool,
    /// Count-less and complete: threads that completed it by exiting.
    pub exited: Vec<usize>,
    /// Undefined behaviour in this phase, if any.
    pub ub: Option<BarrierUb>,
    /// Arrivals of this phase that come before others in time, as the plan
    /// needs them (the undefined arrival of a phase that never completes
    /// comes while the phase is still short of its count).
    pub order: Vec<(usize, usize)>,
}

/// The threads of a resource's CTA and how each one's path ends.
pub struct CtaThreads<'a> {
    /// Every (non-agent) thread placed in the CTA, ascending.
    pub threads: &'a [usize],
    /// Whether the thread's path runs to its end (it exits); `false` for a
    /// path stuck for good (termination search).
    pub finishes: &'a dyn Fn(usize) -> bool,
}

/// Every way (ISA reading) the arrivals at one barrier resource can form
/// phases: complete phases, then at most one phase that never completes.
/// `arrivals` are grouped per thread in program order (`per_thread`: thread
/// and its arrival indices). A plan is kept only if every waiting arrival's
/// phase completes and every stuck arrival's phase does not. `budget` is
/// called once per plan step and stops the enumeration when it says so.
pub fn isa_plans(
    arrivals: &[PlanArrival],
    per_thread: &[(usize, Vec<usize>)],
    cta: &CtaThreads,
    budget: &mut dyn FnMut() -> bool,
) -> Vec<Vec<PlannedPhase>> {
    let mut planner = Planner {
        arr: arrivals,
        per_thread,
        cta,
        budget,
        next: vec![0; per_thread.len()],
        acc: Vec::new(),
        out: Vec::new(),
    };
    planner.plan_from();
    planner.out
}

/// The enumeration of [`isa_plans`]: what it reads, where it stands, and
/// what it found.
struct Planner<'a, 'c> {
    /// The resource's arrivals.
    arr: &'a [PlanArrival],
    /// Per thread, its arrivals in program order.
    per_thread: &'a [(usize, Vec<usize>)],
    /// The CTA's threads and how their paths end.
    cta: &'a CtaThreads<'c>,
    /// Says when to stop.
    budget: &'a mut dyn FnMut() -> bool,
    /// Per thread, its first arrival not yet in a phase.
    next: Vec<usize>,
    /// The phases planned so far.
    acc: Vec<PlannedPhase>,
    /// The plans found.
    out: Vec<Vec<PlannedPhase>>,
}

impl Planner<'_, '_> {
    /// Plan the phases from `next` on, after `acc`.
    fn plan_from(&mut self) {
        if (self.budget)() {
            return;
        }
        let (arr, per_thread, cta) = (self.arr, self.per_thread, self.cta);
        if per_thread
            .iter()
            .zip(&self.next)
            .all(|((_, l), &n)| n >= l.len())
        {
            self.out.push(self.acc.clone());
            return;
        }
        // The phase that never completes: every remaining arrival joins it.
        for ph in open_phase(arr, per_thread, cta, &self.next, &mut *self.budget) {
            self.acc.push(ph);
            self.out.push(self.acc.clone());
            self.acc.pop();
        }
        // A complete phase: its first arrival (in time) sets its count;
        // every member agrees and none is undefined.
        let mut kinds: Vec<Option<Value>> = Vec::new();
        for ((_, l), &n) in per_thread.iter().zip(&self.next) {
            if let Some(&f) = l.get(n) {
                if arr[f].ub.is_none() && !kinds.contains(&arr[f].needed) {
                    kinds.push(arr[f].needed);
                }
            }
        }
        for needed in kinds {
            let saved = self.next.clone();
            match needed {
                None => self.countless_phase(),
                Some(n) => {
                    if let Ok(n) = usize::try_from(n) {
                        let mut members = Vec::new();
                        self.chunks(0, n, needed, &mut members);
                    }
                }
            }
            self.next = saved;
        }
    }

    /// A complete count-less phase: every thread of the CTA with an arrival
    /// left gives its next one; the others must exit.
    fn countless_phase(&mut self) {
        let (arr, per_thread, cta) = (self.arr, self.per_thread, self.cta);
        let mut members = Vec::new();
        for (i, (u, l)) in per_thread.iter().enumerate() {
            // A thread that is no participant (a lane outside a
            // `bar.warp.sync` mask: undefined) is not waited for; its
            // arrival belongs to a phase that never completes.
            if !cta.threads.contains(u) {
                continue;
            }
            if let Some(&a) = l.get(self.next[i]) {
                let x = &arr[a];
                if x.ub.is_some() || x.needed.is_some() || x.stuck || !x.waits {
                    return;
                }
                members.push(a);
                self.next[i] += 1;
            }
        }
        let arrived: Vec<usize> = members.iter().map(|&a| arr[a].thread).collect();
        let exited: Vec<usize> = cta
            .threads
            .iter()
            .copied()
            .filter(|u| !arrived.contains(u))
            .collect();
        // A thread that never exits and never arrives holds it up; a thread
        // with arrivals left has given its next one.
        let ok = exited.iter().all(|&u| {
            (cta.finishes)(u)
                && per_thread
                    .iter()
                    .zip(&self.next)
                    .all(|((t, l), &n)| *t != u || n >= l.len())
        });
        if ok && !members.is_empty() {
            self.acc.push(PlannedPhase {
                members,
                complete: true,
                exited,
                ub: None,
                order: Vec::new(),
            });
            self.plan_from();
            self.acc.pop();
        }
    }

    /// Choose, thread by thread from `i`, a run of each thread's next
    /// arrivals (only the last may wait) so that `left` more arrivals of
    /// count `needed` complete the phase; then plan the phases after it.
    fn chunks(&mut self, i: usize, left: usize, needed: Option<Value>, members: &mut Vec<usize>) {
        if left == 0 {
            if members.is_empty() {
                return;
            }
            let mut m = members.clone();
            m.sort_unstable();
            self.acc.push(PlannedPhase {
                members: m,
                complete: true,
                exited: Vec::new(),
                ub: None,
                order: Vec::new(),
            });
            self.plan_from();
            self.acc.pop();
            return;
        }
        // Threads i.. have too few arrivals left to fill the phase (a
        // prune: without it, 64 lanes at `bar.sync 1, 64` try 2^64 subsets).
        let left_over: usize = self.per_thread[i..]
            .iter()
            .zip(&self.next[i..])
            .map(|((_, l), &n)| l.len().saturating_sub(n))
            .sum();
        if left_over < left {
            return;
        }
        let (arr, list) = (self.arr, &self.per_thread[i].1);
        let start = self.next[i];
        // Take k arrivals of thread i (k = 0 first).
        self.chunks(i + 1, left, needed, members);
        let mut k = 0;
        while k < left && start + k < list.len() {
            let a = list[start + k];
            let x = &arr[a];
            if x.ub.is_some() || x.needed != needed || x.stuck {
                break;
            }
            members.push(a);
            k += 1;
            self.next[i] = start + k;
            self.chunks(i + 1, left - k, needed, members);
            if x.waits {
                // A waiting arrival ends the thread's part of the phase.
                break;
            }
        }
        members.truncate(members.len() - k);
        self.next[i] = start;
    }
}

/// Every remaining arrival in one phase that never completes, in each way
/// it can: a phase that no waiting (non-stuck) arrival is in and that does
/// not complete by itself, or one that an undefined or disagreeing arrival
/// poisons before it is complete (one variant per order that lets it).
fn open_phase(
    arr: &[PlanArrival],
    per_thread: &[(usize, Vec<usize>)],
    cta: &CtaThreads,
    next: &[usize],
    budget: &mut dyn FnMut() -> bool,
) -> Vec<PlannedPhase> {
    let mut members = Vec::new();
    for ((_, l), &n) in per_thread.iter().zip(next) {
        for (k, &a) in l[n..].iter().enumerate() {
            // A waiting arrival of a finishing path must be released, and
            // a thread stuck at an arrival has none after it.
            if arr[a].waits && !arr[a].stuck {
                return Vec::new();
            }
            if arr[a].own_stuck && n + k + 1 != l.len() {
                return Vec::new();
            }
            members.push(a);
        }
    }
    members.sort_unstable();
    let first = &arr[members[0]];
    let ub = members.iter().find_map(|&a| arr[a].ub).or_else(|| {
        members
            .iter()
            .any(|&a| arr[a].needed != first.needed || arr[a].count != first.count)
            .then_some(BarrierUb::CountsDisagree)
    });
    if ub.is_some() {
        return poison_orders(arr, per_thread, next, budget)
            .into_iter()
            .map(|order| PlannedPhase {
                members: members.clone(),
                complete: false,
                exited: Vec::new(),
                ub,
                order,
            })
            .collect();
    }
    // A phase whose members agree completes if it is full.
    let full = match first.needed {
        Some(n) => usize::try_from(n).is_ok_and(|n| members.len() >= n),
        None => {
            let arrived: Vec<usize> = members.iter().map(|&a| arr[a].thread).collect();
            cta.threads
                .iter()
                .all(|u| arrived.contains(u) || (cta.finishes)(*u))
        }
    };
    if full {
        return Vec::new();
    }
    vec![PlannedPhase {
        members,
        complete: false,
        exited: Vec::new(),
        ub: None,
        order: Vec::new(),
    }]
}

/// The orders in which the arrivals left (`next` on) make one phase that an
/// undefined or disagreeing arrival `m` poisons: the arrivals before `m`
/// (`B`, a prefix of each thread's, `m`'s own earlier ones included and
/// none of those waiting) all agree with the first of them, `f`, which sets the
/// count, and are fewer than it needs (count-less: `m`'s thread has not
/// arrived, so the phase is short of it); every other arrival comes after
/// `m`. Each order as `before → after` pairs: `f` before the rest of `B`,
/// `B` before `m`, `m` before the others. An `f` undefined in itself
/// poisons the phase at once. The prefix choices grow as the product of the
/// threads' arrival counts (3^32 for a warp of 32 lanes with two arrivals
/// each), so `budget` is asked at every one and stops the enumeration.
fn poison_orders(
    arr: &[PlanArrival],
    per_thread: &[(usize, Vec<usize>)],
    next: &[usize],
    budget: &mut dyn FnMut() -> bool,
) -> Vec<Vec<(usize, usize)>> {
    let rest: Vec<&[usize]> = per_thread
        .iter()
        .zip(next)
        .map(|((_, l), &n)| &l[n..])
        .collect();
    let all: Vec<usize> = rest.iter().flat_map(|r| r.iter().copied()).collect();
    let mut out = Vec::new();
    // Prefix lengths per thread, as an odometer.
    let mut take = vec![0usize; rest.len()];
    loop {
        if budget() {
            return out;
        }
        let before: Vec<usize> = rest
            .iter()
            .zip(&take)
            .flat_map(|(r, &k)| r[..k].iter().copied())
            .collect();
        for (mi, r) in rest.iter().enumerate() {
            let Some(&m) = r.get(take[mi]) else { continue };
            // `m` comes only if its own thread's earlier arrivals go on.
            if r[..take[mi]].iter().any(|&a| arr[a].own_waits) {
                continue;
            }
            // `f`: the first of `B` in time, the first of its thread's; or
            // `m` itself when `B` is empty.
            let firsts: Vec<usize> = if before.is_empty() {
                vec![m]
            } else {
                (0..rest.len())
                    .filter(|&i| take[i] > 0)
                    .map(|i| rest[i][0])
                    .collect()
            };
            for f in firsts {
                let fa = &arr[f];
                let agrees = |a: usize| {
                    arr[a].ub.is_none() && arr[a].needed == fa.needed && arr[a].count == fa.count
                };
                let ok = if f == m {
                    fa.ub.is_some()
                } else {
                    before.iter().all(|&a| agrees(a))
                        && !agrees(m)
                        && match fa.needed {
                            // `m`'s thread has neither arrived nor exited.
                            None => take[mi] == 0,
                            Some(n) => usize::try_from(n).is_ok_and(|n| before.len() < n),
                        }
                };
                if !ok {
                    continue;
                }
                let mut order = Vec::new();
                for &b in &before {
                    if b != f {
                        order.push((f, b));
                    }
                    order.push((b, m));
                }
                for &o in &all {
                    if o != m && !before.contains(&o) {
                        order.push((m, o));
                    }
                }
                out.push(order);
            }
        }
        // Next prefix choice.
        let mut i = 0;
        loop {
            if i == rest.len() {
                return out;
            }
            if take[i] < rest[i].len() {
                take[i] += 1;
                break;
            }
            take[i] = 0;
            i += 1;
        }
    }
}

/// The counted CTA barriers of `p` whose arrivals are *order-free* under the
/// ISA reading, as (GPU, CTA, barrier name): every arrival at the name in the
/// CTA is PTX's `bar.sync a, b` / `bar.arrive a, b` with constant operands,
/// one count for all, defined in itself; no thread has two arrivals at it nor
/// one inside a loop; and the threads that have one are at most the arrivals
/// the count needs. Then every arrival that happens joins phase 0, which
/// completes exactly when all of them have arrived, whatever their order —
/// so the machine retires such an arrival without a choice, as it does a
/// count-less one (a kernel's two warps at `bar.sync 1, 64`: 64 lanes whose
/// arrival orders would otherwise be explored one by one).
pub fn order_free_counted(p: &Program) -> Vec<(u32, u32, Value)> {
    // (GPU, CTA, name) → (count, needed, threads), or None once disqualified.
    type Key = (u32, u32, Value);
    /// The count, the arrivals it needs, and the warps arriving so far
    /// (one event each, [`warp_unit`]).
    type Seen = Option<(Value, Value, Vec<Value>)>;
    let mut seen: Vec<(Key, Seen)> = Vec::new();
    // CTAs with a barrier named by a register: any name may be it.
    let mut unknown: Vec<(u32, u32)> = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        if th.agent.is_some() {
            continue;
        }
        let cta = (th.placement.gpu, th.placement.cta);
        let warp = WarpOf::of(p, t).key;
        let mut mine: Vec<Value> = Vec::new();
        for (pc, i) in th.code.iter().enumerate() {
            let Instr::Barrier {
                kind, id, count, ..
            } = i
            else {
                continue;
            };
            if *kind == BarrierKind::WarpSync {
                continue;
            }
            let Some(&Operand::Imm(a)) = id.first() else {
                unknown.push(cta);
                continue;
            };
            let in_loop = th.code.iter().enumerate().any(|(q, j)| {
                q >= pc && matches!(j, Instr::Branch { target, .. } if *target <= pc)
            });
            let this = match (id.get(1), count) {
                (Some(&Operand::Imm(c)), None) if !in_loop && !mine.contains(&a) => {
                    let r = resolve(Reading::Isa, *kind, &[a, c], None);
                    r.needed.filter(|_| r.ub.is_none()).map(|n| (c, n))
                }
                _ => None,
            };
            mine.push(a);
            let key = (cta.0, cta.1, a);
            match seen.iter_mut().find(|(k, _)| *k == key) {
                None => seen.push((key, this.map(|(c, n)| (c, n, vec![warp])))),
                Some((_, st)) => {
                    *st = match (st.take(), this) {
                        (Some((c, n, mut w)), Some((c2, n2))) if (c, n) == (c2, n2) => {
                            if !w.contains(&warp) {
                                w.push(warp);
                            }
                            Some((c, n, w))
                        }
                        _ => None,
                    }
                }
            }
        }
    }
    seen.into_iter()
        .filter_map(|(k, st)| {
            let (_, needed, warps) = st?;
            let n = Value::try_from(warps.len()).unwrap_or(Value::MAX);
            (n <= needed && !unknown.contains(&(k.0, k.1))).then_some(k)
        })
        .collect()
}

/// Whether some execution of `p` (lowered) might reach an undefined step
/// under `reading`, judged from the text alone: a CTA barrier (ISA reading) named or counted
/// by a register, an arrival undefined in itself, or two barriers of one
/// CTA with the same name and different counts; or an mbarrier
/// read-modify-write on a declared mbarrier (whether it goes beyond a count's
/// range depends on the order of operations; the hidden barriers of
/// `barrier.cluster`, whose arrivals alternate with waits, are left out);
/// or an access to a pending `wgmma` accumulator or a `wgmma.mma_async`
/// without its `wgmma.fence` (undefined when the thread gets past it, which
/// a hang may prevent); or a lowered undefined step. `false` means none can.
pub fn may_be_undefined(p: &Program, reading: Reading) -> bool {
    // Accesses to pending `wgmma` accumulators (`model::ub::accumulator_ub`).
    if p.tc_early.iter().any(|e| e.wgmma)
        || !p.tc_unfenced.is_empty()
        || !p.short_warpgroups.is_empty()
    {
        return true;
    }
    // Lowered undefined steps (out-of-bounds accesses, `model::ub::step_ub`).
    if p.threads.iter().flat_map(|t| &t.code).any(|i| {
        matches!(
            i,
            Instr::Signal {
                kind: crate::ir::SignalKind::Undefined(_)
            }
        )
    }) {
        return true;
    }
    let mbarrier_rmw = p.threads.iter().flat_map(|t| &t.code).any(|i| {
        matches!(i, Instr::Rmw { op, access, .. }
            if op.is_mbarrier()
                && p.locations[p.addresses[access.addr].loc].kind != crate::ir::LocKind::Synthetic)
    });
    if mbarrier_rmw {
        return true;
    }
    if reading == Reading::Dat3m {
        return false;
    }
    // Lanes of a warp that may wait at different barriers, or stay away
    // from an `.aligned` one (`warp_divergence`, `aligned_lane_away`: judged
    // at hangs, so the termination search must look for the least).
    if warps_may_diverge(p) || aligned_warps(p) {
        return true;
    }
    type Key = (u32, u32, SmallVec<[Value; 2]>);
    let mut seen: Vec<(Key, Option<Value>, Option<Value>)> = Vec::new();
    for (t, th) in p
        .threads
        .iter()
        .enumerate()
        .filter(|(_, t)| t.agent.is_none())
    {
        for i in &th.code {
            let Instr::Barrier {
                kind, id, count, ..
            } = i
            else {
                continue;
            };
            let imm = |o: &Operand| match o {
                Operand::Imm(v) => Some(*v),
                Operand::Reg(_) => None,
            };
            if kind.is_warp() {
                match imm(&id[0]) {
                    Some(m) if resolve_warp_kind(*kind, m, WarpOf::of(p, t)).ub.is_none() => {
                        continue;
                    }
                    _ => return true,
                }
            }
            let Some(ids) = id.iter().map(imm).collect::<Option<Vec<Value>>>() else {
                return true;
            };
            let c = match count.as_ref().map(imm) {
                Some(Some(v)) => Some(v),
                Some(None) => return true,
                None => None,
            };
            let r = resolve(Reading::Isa, *kind, &ids, c);
            if r.ub.is_some() {
                return true;
            }
            let key = (th.placement.gpu, th.placement.cta, r.id);
            match seen.iter().find(|(k, ..)| *k == key) {
                Some((_, n, c)) if (*n, *c) != (r.needed, r.count) => return true,
                Some(_) => {}
                None => seen.push((key, r.needed, r.count)),
            }
        }
    }
    false
}

/// The warp (GPU, CTA, warp) of thread `t` and the instruction it executes
/// ([`crate::ir::Thread::site`]: the pc, or a kernel's shared instruction)
/// when its instruction `pc` is an `.aligned` barrier and the thread is a
/// lane of a warp with a `warp` placement: the arrivals [`phase_ub`]
/// compares for divergence.
pub fn aligned_warp(p: &Program, t: usize, pc: usize) -> Option<AlignedLane> {
    let th = p.threads.get(t)?;
    match th.code.get(pc)? {
        Instr::Barrier { aligned: true, .. } if th.agent.is_none() => {
            let pl = th.placement;
            pl.warp.map(|w| AlignedLane {
                warp: (pl.gpu, pl.cta, w),
                site: th.site(pc),
            })
        }
        _ => None,
    }
}

/// A lane's arrival at an `.aligned` barrier: its warp and the instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlignedLane {
    /// (GPU, CTA, warp).
    pub warp: (u32, u32, u32),
    /// The instruction, as [`crate::ir::Thread::site`] numbers it.
    pub site: usize,
}

/// One arrival of a phase, as [`phase_ub`] judges it.
pub struct PhaseMember {
    /// Undefined in itself, and why.
    pub ub: Option<BarrierUb>,
    /// Arrivals its phase needs.
    pub needed: Option<Value>,
    /// The count as compared between participants.
    pub count: Option<Value>,
    /// Where: (thread, instruction).
    pub at: (usize, usize),
    /// Its warp and instruction, when it is an `.aligned` arrival of a lane
    /// ([`aligned_warp`]).
    pub aligned_warp: Option<AlignedLane>,
}

/// The least undefined step of one phase (members in arrival order, first
/// first): an arrival undefined in itself, or members that disagree on the
/// count (then every member is named, in (thread, instruction) order). Both
/// engines name undefined phases through this one rule, so they report the
/// same witness.
pub fn phase_ub(members: impl Iterator<Item = PhaseMember>) -> Option<Undefined> {
    let members: Vec<PhaseMember> = members.collect();
    let first = members.first()?;
    let mut best: Option<Undefined> = None;
    let mut keep = |u: Undefined| {
        if best.as_ref().is_none_or(|b| u < *b) {
            best = Some(u);
        }
    };
    for m in &members {
        if let Some(why) = m.ub {
            keep(Undefined {
                kind: UbKind::Barrier(why),
                at: vec![m.at],
            });
        }
    }
    // `.aligned`: the lanes of one warp arriving together at one
    // instruction. A warp may arrive again in the same phase (a run-ahead
    // `bar.arrive`, then `bar.sync`): each lane's i-th arrival in the phase
    // belongs to its warp's i-th arrival event (a lane absent from one has
    // exited and has no later one), so lanes are compared arrival by
    // arrival, not every arrival of the warp in the phase with every other.
    let nth = |k: usize| {
        members[..k]
            .iter()
            .filter(|o| o.at.0 == members[k].at.0)
            .count()
    };
    for (k, m) in members.iter().enumerate() {
        let Some(w) = m.aligned_warp else { continue };
        let i = nth(k);
        let lanes: Vec<&PhaseMember> = members
            .iter()
            .enumerate()
            .filter(|&(j, o)| o.aligned_warp.is_some_and(|l| l.warp == w.warp) && nth(j) == i)
            .map(|(_, o)| o)
            .collect();
        if lanes
            .iter()
            .any(|o| o.aligned_warp.is_some_and(|l| l.site != w.site))
        {
            let mut all: Vec<(usize, usize)> = lanes.iter().map(|o| o.at).collect();
            all.sort_unstable();
            keep(Undefined {
                kind: UbKind::Barrier(BarrierUb::AlignedDivergent),
                at: all,
            });
        }
    }
    if members
        .iter()
        .any(|m| m.needed != first.needed || m.count != first.count)
    {
        let mut all: Vec<(usize, usize)> = members.iter().map(|m| m.at).collect();
        all.sort_unstable();
        keep(Undefined {
            kind: UbKind::Barrier(BarrierUb::CountsDisagree),
            at: all,
        });
    }
    best
}

/// A lane that waits for good at a CTA barrier instruction (a hang's stuck
/// lane), as [`warp_divergence`] judges it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StuckLane {
    /// The lane (thread).
    pub thread: usize,
    /// The barrier instruction.
    pub pc: usize,
    /// The barrier's name (operand `a`).
    pub name: Value,
    /// PTX's counted `bar{.cta}.sync/arrive a, b`, which the lane's warp
    /// reaches as one event ([`warp_unit`]).
    pub counted: bool,
}

/// The least undefined step of a stuck configuration (ISA reading) in which
/// lanes of one warp wait for good at *different* CTA barriers, at least one
/// of them counted: counted barriers of different names, or a counted and a
/// count-less one (the same name included). The counted barrier's lanes wait
/// for the warp's other lanes (PTX ISA §9.7.13.1, *"wait for all non-exited
/// threads from its warp and marks warps' arrival at barrier"*), which wait
/// elsewhere, so the warp's arrival never happens: the ISA gives that no
/// meaning (`.aligned`: *"otherwise behavior is undefined"*). `lanes` are
/// every stuck lane at a CTA barrier; the witness names every such lane of
/// the warp, in (thread, instruction) order, so both engines name the same
/// one. Lanes that agree (one counted name for all) are a hang, not this.
pub fn warp_divergence(p: &Program, lanes: &[StuckLane]) -> Option<Undefined> {
    let mut best: Option<Undefined> = None;
    let mut done: Vec<usize> = Vec::new();
    for l in lanes {
        let Some(th) = p.threads.get(l.thread) else {
            continue;
        };
        if th.agent.is_some() || th.placement.warp.is_none() || p.warp_lanes(l.thread).len() < 2 {
            continue;
        }
        let key = WarpOf::of(p, l.thread).key;
        let warp = (th.placement.gpu, th.placement.cta, key);
        let same_warp = |o: &&StuckLane| {
            p.threads.get(o.thread).is_some_and(|u| {
                u.agent.is_none()
                    && (
                        u.placement.gpu,
                        u.placement.cta,
                        WarpOf::of(p, o.thread).key,
                    ) == warp
            })
        };
        if done.contains(&l.thread) {
            continue;
        }
        let mine: Vec<&StuckLane> = lanes.iter().filter(same_warp).collect();
        done.extend(mine.iter().map(|o| o.thread));
        let differ = mine
            .iter()
            .any(|o| (o.name, o.counted) != (mine[0].name, mine[0].counted));
        if differ && mine.iter().any(|o| o.counted) {
            let mut at: Vec<(usize, usize)> = mine.iter().map(|o| (o.thread, o.pc)).collect();
            at.sort_unstable();
            at.dedup();
            let u = Undefined {
                kind: super::ub::UbKind::Barrier(BarrierUb::WarpBarriersDiffer),
                at,
            };
            if best.as_ref().is_none_or(|b| u < *b) {
                best = Some(u);
            }
        }
    }
    best
}

/// The least undefined step of a stuck configuration (ISA reading) in which
/// a lane of a warp waits for good at an `.aligned` CTA barrier instruction
/// while another lane of its warp is stuck at a different instruction (a
/// spin loop's head, a blocking wait, another barrier). `stuck` is every
/// stuck thread of the hang as `(thread, instruction)`, as both engines'
/// [`crate::model::hang::Hang`]s list them; lanes that exited are not in it
/// and are excused (PTX ISA §9.7.13.1: *"wait for all non-exited threads
/// from its warp"*; §9.7.13.3, `exit`: a barrier held up only by exited
/// threads is released). The witness names every stuck lane of the warp,
/// in (thread, instruction) order. Lanes compare by [`crate::ir::Thread::site`],
/// so the lanes of a kernel, each with its own code, compare by the PTX
/// instruction they run.
pub fn aligned_lane_away(p: &Program, stuck: &[(usize, usize)]) -> Option<Undefined> {
    let at_aligned = |t: usize, pc: usize| {
        p.threads.get(t).is_some_and(|th| {
            th.agent.is_none()
                && matches!(
                    th.code.get(pc),
                    Some(Instr::Barrier { kind, aligned: true, .. }) if !kind.is_warp()
                )
        })
    };
    let warp_of = |t: usize| {
        let th = p.threads.get(t)?;
        if th.agent.is_some() || th.placement.warp.is_none() || p.warp_lanes(t).len() < 2 {
            return None;
        }
        Some((th.placement.gpu, th.placement.cta, WarpOf::of(p, t).key))
    };
    let site = |t: usize, pc: usize| p.threads[t].site(pc);
    let mut best: Option<Undefined> = None;
    for &(t, pc) in stuck {
        if !at_aligned(t, pc) {
            continue;
        }
        let Some(w) = warp_of(t) else { continue };
        let mine: Vec<(usize, usize)> = stuck
            .iter()
            .copied()
            .filter(|&(o, _)| warp_of(o) == Some(w))
            .collect();
        if mine.iter().all(|&(o, opc)| site(o, opc) == site(t, pc)) {
            continue;
        }
        let mut at = mine;
        at.sort_unstable();
        at.dedup();
        let u = Undefined {
            kind: super::ub::UbKind::Barrier(BarrierUb::AlignedLaneAway),
            at,
        };
        if best.as_ref().is_none_or(|b| u < *b) {
            best = Some(u);
        }
    }
    best
}

/// Whether some warp of `p` (lowered) has several lanes and an `.aligned`
/// CTA barrier: only then can [`aligned_lane_away`] find anything.
pub fn aligned_warps(p: &Program) -> bool {
    p.threads.iter().enumerate().any(|(t, th)| {
        th.agent.is_none()
            && th.placement.warp.is_some()
            && th
                .code
                .iter()
                .any(|i| matches!(i, Instr::Barrier { kind, aligned: true, .. } if !kind.is_warp()))
            && p.warp_lanes(t).len() >= 2
    })
}

/// Whether lanes of one warp of `p` (lowered) may wait at different CTA
/// barriers, one of them counted ([`warp_divergence`]), judged from the text:
/// a warp of several lanes whose CTA barrier instructions include a counted
/// one and are not all counted with one constant name.
pub fn warps_may_diverge(p: &Program) -> bool {
    /// A warp (gpu, CTA, warp) and its lanes' CTA barriers: (name if
    /// constant, counted).
    type WarpBarriers = ((u32, u32, u32), Vec<(Option<Value>, bool)>);
    let mut warps: Vec<WarpBarriers> = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        let Some(w) = th.placement.warp else { continue };
        if th.agent.is_some() || p.warp_lanes(t).len() < 2 {
            continue;
        }
        let key = (th.placement.gpu, th.placement.cta, w);
        let i = match warps.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                warps.push((key, Vec::new()));
                warps.len() - 1
            }
        };
        for ins in &th.code {
            if let Instr::Barrier { kind, id, .. } = ins {
                if kind.is_warp() {
                    continue;
                }
                let name = match id.first() {
                    Some(Operand::Imm(v)) => Some(*v),
                    _ => None,
                };
                let b = (name, warp_unit(p, t, ins));
                if !warps[i].1.contains(&b) {
                    warps[i].1.push(b);
                }
            }
        }
    }
    warps
        .iter()
        .any(|(_, bs)| bs.iter().any(|b| b.1) && (bs.len() > 1 || bs.iter().any(|b| b.0.is_none())))
}
