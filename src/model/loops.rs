//! Loops: which back edges are *spin loops* that both engines may treat as
//! "wait until the exit condition holds", and the unrolling bound for the rest.
//!
//! A spin loop is a back edge `pc → head` whose body `head..=pc` only reads
//! memory and computes on registers, leaves only by forward branches (or by
//! falling through the back edge), is entered only at its head, and defines
//! every register it writes before its first exit. Removing a failed
//! iteration of such a loop from a consistent execution leaves a consistent
//! execution with the same final state: the iteration's reads only add
//! constraints, it writes no memory, and the exiting iteration rewrites every
//! register the failed one wrote. So the outcomes are exactly those of the
//! executions where the back edge is never taken, and both engines discard a
//! path the moment it takes such a back edge. This is Dat3M's spin-loop
//! reduction; `docs/loops.md` gives the argument in full.
//!
//! Every other back edge may be taken at most `bound` times per execution of
//! the thread; a path that would take it once more is cut, and the result
//! says so (herd's "loop unrolling" warning).

use crate::ir::{Instr, Thread};

/// Per-instruction loop facts of one thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopInfo {
    /// `back_edge[pc]`: the instruction is a branch to `target <= pc`.
    pub back_edge: Vec<bool>,
    /// `spin[pc]`: the back edge at `pc` closes a spin loop (never taken).
    pub spin: Vec<bool>,
}

impl LoopInfo {
    /// Analyse one thread.
    pub fn of(t: &Thread) -> LoopInfo {
        let n = t.code.len();
        let mut info = LoopInfo {
            back_edge: vec![false; n],
            spin: vec![false; n],
        };
        for (pc, i) in t.code.iter().enumerate() {
            if let Instr::Branch { target, .. } = i {
                if *target <= pc {
                    info.back_edge[pc] = true;
                    info.spin[pc] = is_spin_loop(t, *target, pc);
                }
            }
        }
        info
    }
    /// Whether the thread has any back edge that is not a spin loop.
    pub fn has_bounded_loops(&self) -> bool {
        self.back_edge
            .iter()
            .zip(&self.spin)
            .any(|(b, s)| *b && !*s)
    }
}

fn is_spin_loop(t: &Thread, head: usize, back: usize) -> bool {
    let body = &t.code[head..=back];
    // Entered only at its head.
    let jumps_in = t.code.iter().enumerate().any(|(pc, i)| {
        matches!(i, Instr::Branch { target, .. } if *target > head && *target <= back && !(head..=back).contains(&pc))
    });
    if jumps_in {
        return false;
    }
    let mut first_exit = None;
    for (k, i) in body.iter().enumerate() {
        let pc = head + k;
        match i {
            // A failed mbarrier wait reads the barrier and changes nothing
            // else, so it spins like a load.
            Instr::Load { .. }
            | Instr::MbarWait { .. }
            | Instr::Mov { .. }
            | Instr::Arith { .. } => {}
            // The back edge itself (an exit when it falls through), or a forward exit.
            Instr::Branch { target, .. } if pc == back || *target > back => {
                first_exit.get_or_insert(pc);
            }
            _ => return false,
        }
    }
    let first_exit = first_exit.unwrap_or(back);
    // Every register defined in the body is defined before the first exit.
    body.iter()
        .enumerate()
        .filter_map(|(k, i)| i.def().map(|r| (head + k, r)))
        .all(|(pc, r)| {
            pc < first_exit || body[..first_exit - head].iter().any(|i| i.def() == Some(r))
        })
}
