//! Hangs, as both engines report them (`docs/loops.md`, "Termination").
//!
//! A program **hangs** if it has a reachable *stuck configuration*: a
//! consistent partial execution in which some thread has not finished and
//! every unfinished thread is stuck — waiting at a barrier, a blocking
//! wait or an async-group wait that nothing can complete any more, or
//! spinning in a spin or retry loop whose iteration, reading the
//! coherence-latest values, goes back. Both engines describe such a
//! configuration as a [`Hang`]: for each stuck thread, where it is stuck and
//! on what. This module also holds the static facts both engines use to
//! decide who may still arrive at a barrier.

use clap::ValueEnum;
use serde::Serialize;

use crate::ir::{Instr, LocId, Operand, RegId, Thread, ThreadId, Value};

/// Which writes a spinning read must eventually see (`docs/loops.md`,
/// "Fairness"). The PTX ISA states no progress guarantee; the default is
/// the reading the hardware shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Fairness {
    /// A write morally strong with a spinning read cannot stay fr-after it
    /// forever; a weak write, or one whose scope does not include the
    /// reader (or a weak or too narrowly scoped read), may stay invisible:
    /// a `.cta` acquire spinning in another CTA, or a weak `ld`, may hang.
    #[default]
    MorallyStrong,
    /// Every write eventually becomes visible to every read (co/fr-fairness
    /// for every pair, Dat3M's reading and ptxmc's before 2026-11).
    All,
}

impl Fairness {
    /// The option's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Fairness::MorallyStrong => "morally-strong",
            Fairness::All => "all",
        }
    }
}

/// What a stuck thread waits for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "on")]
pub enum Waits {
    /// `bar.sync`: the thread arrived; the barrier phase never completes.
    Barrier {
        /// The values naming the barrier.
        id: Vec<Value>,
        /// The thread count it was given, if any.
        count: Option<Value>,
        /// Threads that arrived at this phase.
        arrived: Vec<ThreadId>,
        /// Arrivals the phase needs.
        needed: usize,
        /// The phase is undefined (an undefined arrival, or participants
        /// that disagree on the count): it never completes.
        undefined: bool,
    },
    /// A blocking mbarrier wait (`barrier.cluster.wait`): the latest state
    /// of the barrier has not completed the phase.
    Phase {
        /// The barrier's location.
        loc: LocId,
        /// The latest state it reads (encoded, [`crate::ir::mbar`]).
        value: Value,
        /// The phase it waits for (it needs a later one to have begun).
        phase: Value,
    },
    /// An async-group wait (or an agent's start): the operations it waits
    /// for never complete.
    Await {
        /// The `(thread, instruction)` points not reached.
        missing: Vec<(ThreadId, usize)>,
    },
    /// A lane of a warp at a counted CTA barrier, which its warp reaches
    /// as one event (`model::barrier::warp_unit`): the other lanes named
    /// are stuck elsewhere and never come to it.
    Warp {
        /// The lanes of its warp that never come.
        lanes: Vec<ThreadId>,
    },
    /// A spin or retry loop: each iteration reads the coherence-latest
    /// values and goes back.
    Spin {
        /// The loop's head.
        head: usize,
        /// Its back edge.
        back: usize,
        /// What each read of the iteration returns: `(pc, location, value)`.
        reads: Vec<(usize, LocId, Value)>,
    },
}

impl Stuck {
    /// Whether it waits at PTX's counted CTA barrier (`bar.sync a, b`),
    /// whose lanes of a warp arrive as one event.
    pub fn on_counted(&self) -> bool {
        matches!(&self.on, Waits::Barrier { id, count: Some(_), .. } if id.len() == 1)
    }
}

/// One stuck thread.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Stuck {
    /// The thread.
    pub thread: ThreadId,
    /// Where: the waiting instruction, or a loop's head.
    pub pc: usize,
    /// On what.
    #[serde(flatten)]
    pub on: Waits,
}

/// What kind of hang.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HangKind {
    /// Every stuck thread waits (barrier, blocking wait, async-group wait).
    Deadlock,
    /// Some thread spins forever in a loop although every write eventually
    /// becomes visible to it (fair non-termination).
    Spin,
}

impl HangKind {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            HangKind::Deadlock => "deadlock",
            HangKind::Spin => "spin",
        }
    }
}

/// A stuck configuration: the stuck threads, in thread order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Hang {
    /// The stuck threads (finished threads are not listed).
    pub stuck: Vec<Stuck>,
    /// How copies completed their bytes in the program variant that hangs
    /// (`ir::copies`; set by `engine::run`, which runs the variants).
    #[serde(skip_serializing_if = "crate::ir::copies::Granularity::is_element")]
    pub copies: crate::ir::copies::Granularity,
}

impl Hang {
    /// `spin` if some thread spins, else `deadlock`.
    pub fn kind(&self) -> HangKind {
        if self
            .stuck
            .iter()
            .any(|s| matches!(s.on, Waits::Spin { .. }))
        {
            HangKind::Spin
        } else {
            HangKind::Deadlock
        }
    }
}

/// `reach[pc][q]`: instruction `q` is reachable from `pc` (inclusive).
pub fn reachability(th: &Thread) -> Vec<Vec<bool>> {
    let n = th.code.len();
    let succ = |pc: usize| -> smallvec::SmallVec<[usize; 2]> {
        match &th.code[pc] {
            Instr::Branch { cond: None, target } => smallvec::smallvec![*target],
            Instr::Branch { target, .. } => smallvec::smallvec![pc + 1, *target],
            _ => smallvec::smallvec![pc + 1],
        }
    };
    (0..n)
        .map(|start| {
            let mut seen = vec![false; n];
            let mut stack = vec![start];
            while let Some(pc) = stack.pop() {
                if pc >= n || seen[pc] {
                    continue;
                }
                seen[pc] = true;
                stack.extend(succ(pc));
            }
            seen
        })
        .collect()
}

/// Whether thread `th`, going on from an instruction whose reachable set is
/// `reach` with register values `reg`, may still arrive at a barrier named
/// `id`: some reachable `bar` names it with immediates, or with registers
/// that hold those values now and that nothing reachable redefines (a
/// redefined register may hold anything).
pub fn may_reach_barrier(
    th: &Thread,
    reach: &[bool],
    reg: &dyn Fn(RegId) -> Option<Value>,
    id: &[Value],
) -> bool {
    let redefined = |r: RegId| {
        th.code
            .iter()
            .enumerate()
            .any(|(pc, i)| reach[pc] && i.def() == Some(r))
    };
    th.code.iter().enumerate().any(|(pc, i)| {
        let Instr::Barrier { id: ops, .. } = i else {
            return false;
        };
        reach[pc]
            && ops.len() == id.len()
            && ops.iter().zip(id).all(|(o, want)| match o {
                Operand::Imm(v) => v == want,
                Operand::Reg(r) => redefined(*r) || reg(*r).is_none_or(|v| v == *want),
            })
    })
}

/// Whether some thread of the (lowered) program `p` can wait or loop: a
/// `bar.sync`, an mbarrier wait, an async-group wait, or a back edge.
/// Without any, every thread runs to its end in every execution.
pub fn can_block(p: &crate::ir::Program) -> bool {
    p.threads.iter().any(|th| {
        th.code.iter().enumerate().any(|(pc, i)| match i {
            Instr::Barrier { kind, .. } => kind.waits(),
            Instr::MbarWait { .. } | Instr::Await { .. } => true,
            Instr::Branch { target, .. } => *target <= pc,
            _ => false,
        })
    })
}
