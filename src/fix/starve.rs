//! A fix must not forbid an outcome by starving a wait (`docs/fix.md`,
//! "A fix keeps every wait's success path").
//!
//! An outcome guarded by a non-blocking wait (`ok = try_wait(&full, 0); …
//! not-exists ok == 1 /\ out != 5007`) is forbidden, vacuously, by any
//! change after which the wait never succeeds: removing the producer's
//! `mbarrier.arrive` "fixes" the stale read of `kernels/tcgen05_pipeline_nofence`
//! by never letting the consumer reach it (issue 28). That is not a fix
//! but a broken program, so a candidate is offered only if every
//! `mbarrier.test_wait` / `try_wait` that succeeds in some terminating
//! execution of the program as written still succeeds in some terminating
//! execution of the changed one.
//!
//! Whether a wait ever succeeds is read off final states: the checked
//! program is the changed one with a ghost register per wait, or-ed with the
//! wait's predicate right after it ([`observed`]); the oracle's final states
//! then say, per wait, whether it succeeded at least once. The ghost
//! touches no memory, and a branch to the instruction after the wait still
//! skips it (targets shift past the inserted instruction), so the executions
//! are those of the changed program.

use super::sites::{self, quoted};
use crate::engine;
use crate::ir::{ArithOp, Instr, Operand, Program, Register};
use crate::limits::Budget;
use crate::model::barrier::Reading;
use crate::outcome::Columns;

/// The waits whose success is observed, in thread and pc order: `(thread,
/// pc)` of every `mbarrier.test_wait` / `try_wait` with a predicate.
pub(super) fn waits(p: &Program) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        if th.agent.is_some() {
            continue;
        }
        for (pc, i) in th.code.iter().enumerate() {
            if matches!(i, Instr::MbarWait { dst: Some(_), .. }) {
                out.push((t, pc));
            }
        }
    }
    out
}

/// `p` with a ghost register per wait of [`waits`], or-ed with the wait's
/// result right after it; and, per wait in the same order, `(thread,
/// ghost register)`.
fn observed(p: &Program) -> (Program, Vec<(usize, usize)>) {
    let mut q = p.clone();
    let at = waits(p);
    let mut ghosts = Vec::with_capacity(at.len());
    // Ghost registers first (one per wait, in order), then the inserted
    // instructions from the end of each thread so that pcs stay valid.
    for (k, &(t, _)) in at.iter().enumerate() {
        let th = &mut q.threads[t];
        ghosts.push((t, th.regs.len()));
        th.regs.push(Register {
            name: format!("%ptxmc_wait{k}"),
            init: 0,
        });
    }
    for (k, &(t, pc)) in at.iter().enumerate().rev() {
        let Instr::MbarWait { dst: Some(d), .. } = q.threads[t].code[pc] else {
            unreachable!("waits() lists waits with a predicate")
        };
        let g = ghosts[k].1;
        let or = Instr::Arith {
            op: ArithOp::Or,
            dst: g,
            a: Operand::Reg(g),
            b: Operand::Reg(d),
        };
        sites::insert(&mut q, t, pc + 1, or);
    }
    (q, ghosts)
}

/// Per wait of [`waits`], whether it succeeds in some terminating execution
/// of `p` that the oracle finds; `None` if the oracle did not finish in the
/// time `budget` leaves.
pub(super) fn succeeding(
    p: &Program,
    loop_bound: u32,
    barriers: Reading,
    budget: &Budget,
) -> Option<Vec<bool>> {
    let (q, ghosts) = observed(p);
    if ghosts.is_empty() {
        return Some(Vec::new());
    }
    let r = engine::run(
        &q,
        &super::oracle_in_time_left(loop_bound, barriers, budget),
    );
    if r.incomplete.is_some() {
        return None;
    }
    let cols = Columns::of(&q);
    Some(
        ghosts
            .iter()
            .map(|&(t, g)| {
                let c = cols.reg(t, g).expect("a ghost is a test thread's register");
                r.outcomes.iter().any(|s| s[c] != 0)
            })
            .collect(),
    )
}

/// The waits of `p` (as written) that succeed in some execution of `p`
/// (`before`) but in none of the changed program (`after`), each quoted
/// (`` P0 `mbarrier.try_wait…` ``). Repairs neither insert nor remove
/// such waits, so the k-th wait of one is the k-th of the other; if the
/// counts differ nothing is claimed.
pub(super) fn starved(p: &Program, before: &[bool], after: &[bool]) -> Vec<String> {
    if before.len() != after.len() {
        return Vec::new();
    }
    waits(p)
        .into_iter()
        .zip(before.iter().zip(after))
        .filter(|(_, (b, a))| **b && !**a)
        .map(|((t, pc), _)| format!("{} {}", p.threads[t].name, quoted(p, t, pc)))
        .collect()
}
