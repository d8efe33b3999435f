//! Undefined behaviour, as both engines report it: a verdict of its own,
//! never a silent pairing or a wrapped counter (`docs/barriers.md`,
//! "Undefined behaviour").
//!
//! An execution that reaches an undefined step still lists its final state
//! (what the machine does next is whatever the engines' fallback is: an
//! undefined barrier arrival poisons its phase, which then never completes);
//! the run as a whole is reported as undefined, with the least witness in
//! (kind, threads, instructions) order, so the report does not depend on the
//! order of exploration or the engine.

use serde::Serialize;

use super::barrier::BarrierUb;
use crate::ir::mbar::{self, MbarUb};
use crate::ir::{Instr, Program, SignalKind, ThreadId, UndefinedStep, Value};

/// What kind of undefined behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "why")]
pub enum UbKind {
    /// A CTA barrier (`bar`, `barrier{.cta}`).
    Barrier(BarrierUb),
    /// An mbarrier operation takes a count of the mbarrier object out of
    /// its valid range (`ir::mbar`).
    Mbarrier(MbarUb),
    /// A thread accesses an accumulator register of a `wgmma.mma_async`
    /// before the `wgmma.wait_group` that completes it
    /// ([`crate::ir::tensor_core::EarlyAccess`]).
    Accumulator(AccumulatorUb),
    /// A thread issues a `wgmma.mma_async` without the `wgmma.fence` the
    /// ISA requires before it ([`crate::ir::tensor_core::Unfenced`]).
    WgmmaFence(WgmmaFenceUb),
    /// A thread executes a `wgmma.*` instruction that its warpgroup does
    /// not execute together ([`crate::ir::tensor_core::ShortWarpgroup`]).
    Warpgroup(WarpgroupUb),
    /// A thread retires a lowered undefined step
    /// ([`crate::ir::SignalKind::Undefined`]): an access out of bounds.
    Step(UndefinedStep),
}

/// A warpgroup instruction its warpgroup does not execute together: how
/// many of the warpgroup's 128 threads the launch has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct WarpgroupUb {
    /// The warpgroup's number in its CTA.
    pub warpgroup: u32,
    /// Threads of the warpgroup in the launch (128: all there, but their
    /// warpgroup instructions differ).
    pub present: u32,
}

impl WarpgroupUb {
    /// What happened.
    pub fn what(self) -> &'static str {
        if self.present < 128 {
            "a thread executes a `wgmma` instruction, which all 128 threads of its warpgroup must \
             execute together, in a launch that gives the warpgroup fewer threads"
        } else {
            "a thread executes a `wgmma` instruction that the other threads of its warpgroup do \
             not execute with it"
        }
    }

    /// The ISA's sentence.
    pub fn isa(self) -> &'static str {
        "PTX ISA 9.7.15.5.2, wgmma.mma_async: \"The mandatory .aligned qualifier indicates that all \
         threads in the warpgroup must execute the same wgmma.mma_async instruction. In \
         conditionally executed code, a wgmma.mma_async instruction should only be used if it is \
         known that all threads in the warpgroup evaluate the condition identically, otherwise \
         behavior is undefined.\" (the same for wgmma.fence, commit_group and wait_group)"
    }
}

/// A `wgmma.mma_async` without the `wgmma.fence` PTX ISA §9.7.15.7.1
/// requires: before the thread's first one, or between an access to its
/// accumulator register and it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct WgmmaFenceUb {
    /// The accumulator register (of the issuing thread).
    pub reg: crate::ir::RegId,
    /// `None`: the thread's first `wgmma.mma_async`, with no `wgmma.fence`
    /// before it; `Some(write)`: an access to the accumulator (a write that
    /// does not read it, or a read) with no `wgmma.fence` between it and the
    /// MMA.
    pub access: Option<bool>,
}

impl WgmmaFenceUb {
    /// What happened.
    pub fn what(self) -> &'static str {
        match self.access {
            None => "a thread issues its first `wgmma.mma_async` with no `wgmma.fence` before it",
            Some(_) => {
                "a thread accesses the accumulator register of a `wgmma.mma_async` with no \
                 `wgmma.fence` between the access and the `wgmma.mma_async`"
            }
        }
    }

    /// The ISA's sentence.
    pub fn isa(self) -> &'static str {
        "PTX ISA 9.7.15.7.1, wgmma.fence: \"The wgmma.fence instruction must be issued by all \
         warps of the warpgroup at the following locations: Before the first wgmma.mma_async \
         operation in a warpgroup. Between a register access by a thread in the warpgroup and any \
         wgmma.mma_async instruction that accesses the same registers, either as accumulator or \
         input register containing fragments of matrix A, except when these are accumulator \
         register accesses across multiple wgmma.mma_async instructions of the same shape. ... \
         Otherwise, the behavior is undefined.\""
    }
}

/// An access to a pending `wgmma.mma_async` accumulator: which register,
/// and whether the access writes it (else it reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct AccumulatorUb {
    /// The register (of the accessing thread).
    pub reg: crate::ir::RegId,
    /// The access writes the register (and does not read it).
    pub write: bool,
}

impl AccumulatorUb {
    /// What happened.
    pub fn what(self) -> &'static str {
        if self.write {
            "a thread writes an accumulator register of a `wgmma.mma_async` before the \
             `wgmma.wait_group` that completes it"
        } else {
            "a thread reads an accumulator register of a `wgmma.mma_async` before the \
             `wgmma.wait_group` that completes it"
        }
    }

    /// The ISA's sentence.
    pub fn isa(self) -> &'static str {
        "PTX ISA 9.7.15.7.3, wgmma.wait_group: \"Accessing the accumulator register or the input \
         register containing the fragments of matrix A of a wgmma.mma_async instruction without \
         first performing a wgmma.wait_group instruction that waits on a wgmma-group including \
         that wgmma.mma_async instruction is undefined behavior.\""
    }
}

impl UbKind {
    /// What happened.
    pub fn what(self) -> &'static str {
        match self {
            UbKind::Barrier(b) => b.what(),
            UbKind::Mbarrier(m) => m.what(),
            UbKind::Accumulator(a) => a.what(),
            UbKind::WgmmaFence(f) => f.what(),
            UbKind::Warpgroup(w) => w.what(),
            UbKind::Step(u) => u.what(),
        }
    }

    /// The ISA's sentence that makes it undefined.
    pub fn isa(self) -> &'static str {
        match self {
            UbKind::Barrier(b) => b.isa(),
            UbKind::Mbarrier(m) => m.isa(),
            UbKind::Accumulator(a) => a.isa(),
            UbKind::WgmmaFence(f) => f.isa(),
            UbKind::Warpgroup(w) => w.isa(),
            UbKind::Step(u) => u.isa(),
        }
    }
}

/// One undefined step found by an engine.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Undefined {
    /// What kind.
    #[serde(flatten)]
    pub kind: UbKind,
    /// The instructions involved, as (thread, instruction index of the
    /// program as written), in the order they happened.
    pub at: Vec<(ThreadId, usize)>,
}

/// Whether instruction `pc` of thread `t` of the lowered program `p` is an
/// mbarrier read-modify-write (arrive-on, expect-tx, complete-tx: what
/// [`mbarrier_step`] judges).
pub fn is_mbarrier_rmw(p: &Program, t: ThreadId, pc: usize) -> bool {
    matches!(p.threads[t].code.get(pc), Some(Instr::Rmw { op, .. }) if op.is_mbarrier())
}

/// The undefined step of one mbarrier read-modify-write of the lowered
/// program `p` (thread `t`, instruction `pc`) that read state `old` and
/// wrote state `new`: the write is undefined and the read was not. Both
/// engines judge every mbarrier RMW of an execution through this one rule;
/// the step is named at the instruction as written (an agent's at the
/// instruction that issued it).
pub fn mbarrier_step(
    p: &Program,
    t: ThreadId,
    pc: usize,
    old: Value,
    new: Value,
) -> Option<Undefined> {
    if mbar::ub(old).is_some() {
        return None;
    }
    let why = mbar::ub(new)?;
    Some(Undefined {
        kind: UbKind::Mbarrier(why),
        at: vec![as_written(p, t, pc)],
    })
}

/// The undefined step instruction `pc` of thread `t` of the lowered
/// program `p` is, if it is one ([`SignalKind::Undefined`]): a thread that
/// retires it has reached undefined behaviour. Both engines judge every
/// retired step of an execution through this one rule.
pub fn step_ub(p: &Program, t: ThreadId, pc: usize) -> Option<Undefined> {
    match p.threads[t].code.get(pc) {
        Some(Instr::Signal {
            kind: SignalKind::Undefined(why),
        }) => Some(Undefined {
            kind: UbKind::Step(*why),
            at: vec![as_written(p, t, pc)],
        }),
        _ => None,
    }
}

/// Where instruction `pc` of thread `t` of the lowered program `p` comes
/// from in the program as written: an agent's instructions all come from
/// the one that issued it.
pub fn as_written(p: &Program, t: ThreadId, pc: usize) -> (ThreadId, usize) {
    match &p.threads[t].agent {
        Some(a) => (a.issuer, a.spawn_pc),
        None => (t, pc),
    }
}

/// The undefined step of an access to a pending `wgmma.mma_async`
/// accumulator, `e` (of the lowered program's [`Program::tc_early`]), when
/// its thread got past it: the operation, the access and the wait that
/// completes the operation, in program order. Both engines name such a step
/// through this one rule; `None` for a `tcgen05.ld`'s register (refused
/// before any engine runs, `model::lower::tcgen`).
pub fn accumulator_step(e: &crate::ir::tensor_core::EarlyAccess) -> Option<Undefined> {
    e.wgmma.then(|| Undefined {
        kind: UbKind::Accumulator(AccumulatorUb {
            reg: e.reg,
            write: e.write,
        }),
        at: vec![(e.thread, e.op), (e.thread, e.at), (e.thread, e.wait)],
    })
}

/// The undefined step of a `wgmma.mma_async` issued without the
/// `wgmma.fence` the ISA requires (`u`, of the lowered program's
/// [`Program::tc_unfenced`]), when its thread got past it: the access (if
/// any) and the MMA, in program order.
pub fn unfenced_step(u: &crate::ir::tensor_core::Unfenced) -> Undefined {
    Undefined {
        kind: UbKind::WgmmaFence(WgmmaFenceUb {
            reg: u.reg,
            access: u.access.map(|_| u.write),
        }),
        at: u
            .access
            .map(|a| (u.thread, a))
            .into_iter()
            .chain(std::iter::once((u.thread, u.mma)))
            .collect(),
    }
}

/// The least undefined step among the register rules of `wgmma` in the
/// lowered program `p` that a run gets past: accesses to pending
/// accumulators (`docs/tensor-core.md` §3a) and `wgmma.mma_async`s issued
/// without the `wgmma.fence` the ISA requires (§3b). `past(t, pc)` says
/// whether thread `t` has executed instruction `pc` (threads that issue
/// tensor-core operations are straight-line code, so an engine answers from
/// where the thread is: finished, or its next or stuck instruction after
/// `pc`). Also the warpgroup instructions a thread executes without the
/// rest of its warpgroup ([`Program::short_warpgroups`], §5a).
pub fn accumulator_ub(p: &Program, past: impl Fn(ThreadId, usize) -> bool) -> Option<Undefined> {
    let early = p
        .tc_early
        .iter()
        .filter(|e| past(e.thread, e.at))
        .filter_map(accumulator_step);
    let unfenced = p
        .tc_unfenced
        .iter()
        .filter(|u| past(u.thread, u.mma))
        .map(unfenced_step);
    let short = p
        .short_warpgroups
        .iter()
        .filter(|w| past(w.thread, w.at))
        .map(|w| Undefined {
            kind: UbKind::Warpgroup(WarpgroupUb {
                warpgroup: w.warpgroup,
                present: w.present,
            }),
            at: vec![(w.thread, w.at)],
        });
    early.chain(unfenced).chain(short).min()
}
