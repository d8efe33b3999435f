//! Programmatic dependent launch: a primary grid (grid 0), one grid launched
//! as its dependent (grid 1), and `griddepcontrol` (`docs/griddep.md`).
//!
//! PTX ISA, "Parallel Synchronization and Communication Instructions:
//! griddepcontrol": `.wait` makes the executing thread wait until every
//! prerequisite grid in flight has completed and all its memory operations
//! are performed and visible to the current grid; `.launch_dependents` lets
//! the dependents be scheduled once every CTA of the grid has issued it or
//! completed, with no guarantee that they launch before the grid completes,
//! and orders no memory.
//!
//! How both engines see it, by lowering ([`lower`]):
//!
//! * each thread of the primary grid ends with a [`SignalKind::GridEnd`];
//! * `griddepcontrol.wait` in a thread of the dependent grid is an
//!   [`Instr::Await`] of every one of those ends: it waits until the primary
//!   grid has completed and takes on every primary thread's view (a
//!   synchronisation edge from each, as an agent's completion);
//! * `griddepcontrol.wait` in the primary grid (which has no prerequisite
//!   grid in the test: those before it completed before the initial state)
//!   and `griddepcontrol.launch_dependents` anywhere are a
//!   [`SignalKind::GridControl`], which orders nothing.
//!
//! `.launch_dependents` only decides *when* the dependent may start, and
//! the dependent may start as late as the primary's completion. What the
//! dependent does before its `.wait` is unordered with the primary, so the
//! time it starts cannot change what it reads; it could change only what
//! the *primary* sees of the dependent — a dependent's write before its
//! wait to a location the primary accesses (the primary might read it, or
//! spin for it, only if the dependent was scheduled in time). [`check`]
//! refuses exactly those programs by name, and then letting the dependent
//! start at any time is exact.

use crate::ir::{AwaitPoint, Instr, LocId, Program, SignalKind, ThreadId};
use crate::litmus::{Diagnostic, SourceMap};

use super::accounting::successors;

/// Whether `p` uses `griddepcontrol` or places threads in a dependent grid.
pub fn present(p: &Program) -> bool {
    p.threads
        .iter()
        .any(|t| t.placement.grid != 0 || t.code.iter().any(|i| matches!(i, Instr::GridDep { .. })))
}

/// The threads of grid `g` the test writes (no agents).
fn grid(p: &Program, g: u32) -> impl Iterator<Item = ThreadId> + '_ {
    p.threads
        .iter()
        .enumerate()
        .filter(move |(_, t)| t.agent.is_none() && t.placement.grid == g)
        .map(|(i, _)| i)
}

/// Whether some thread of the dependent grid executes `griddepcontrol.wait`
/// (then the primary's threads end with the signal it awaits).
fn dependent_waits(p: &Program) -> bool {
    grid(p, 1).any(|t| {
        p.threads[t]
            .code
            .iter()
            .any(|i| matches!(i, Instr::GridDep { wait: true }))
    })
}

/// Per instruction of thread `t`: whether every path from the start to it
/// went through a `griddepcontrol.wait` (a must analysis over the code).
fn after_wait(p: &Program, t: ThreadId) -> Vec<bool> {
    let th = &p.threads[t];
    let n = th.code.len();
    // Entry states; start from "true" everywhere but the entry and shrink.
    let mut into = vec![true; n + 1];
    into[0] = false;
    let mut changed = true;
    while changed {
        changed = false;
        let mut next = vec![true; n + 1];
        next[0] = false;
        for (pc, &passed) in into.iter().enumerate().take(n) {
            let out = passed || matches!(th.code[pc], Instr::GridDep { wait: true });
            for s in successors(th, pc) {
                next[s.min(n)] &= out;
            }
        }
        if next != into {
            into = next;
            changed = true;
        }
    }
    into
}

/// The locations instruction `i` touches, and whether it writes them.
fn touches(p: &Program, i: &Instr) -> Vec<(LocId, bool)> {
    let loc = |a: usize| p.addresses[a].loc;
    match i {
        Instr::Load { access, .. } => vec![(loc(access.addr), false)],
        Instr::Store { access, .. } | Instr::Rmw { access, .. } => vec![(loc(access.addr), true)],
        Instr::AsyncCopy { dst, src, .. } => {
            let mut v = vec![(loc(*dst), true)];
            if let crate::ir::AsyncSrc::Addr(a) = src {
                v.push((loc(*a), false));
            }
            v
        }
        Instr::Mbar { addr, .. } | Instr::AsyncMbarArrive { addr, .. } => vec![(loc(*addr), true)],
        Instr::MbarWait { addr, .. } => vec![(loc(*addr), false)],
        _ => Vec::new(),
    }
}

/// Refuse, by name, what the model of grids does not cover (module docs):
/// a dependent's write before its `griddepcontrol.wait` to a location the
/// primary grid accesses, and asynchronous or tensor-core operations in a
/// primary grid that a dependent waits for (whether they belong to the
/// grid's completion is not modelled).
pub fn check(p: &Program, spans: &SourceMap) -> Result<(), Diagnostic> {
    if grid(p, 1).next().is_none() {
        return Ok(());
    }
    let mut primary_locs = std::collections::HashSet::new();
    let waits = dependent_waits(p);
    for t in grid(p, 0) {
        for (pc, i) in p.threads[t].code.iter().enumerate() {
            primary_locs.extend(touches(p, i).into_iter().map(|(l, _)| l));
            let asynchronous = matches!(
                i,
                Instr::AsyncCopy { .. } | Instr::AsyncMbarArrive { .. } | Instr::Tensor { .. }
            );
            if waits && asynchronous {
                return Err(Diagnostic::unsupported(
                    spans.instr(t, pc),
                    "an asynchronous operation in a primary grid".to_string(),
                    "no asynchronous or tensor-core operation in grid 0 when grid 1 executes \
                     `griddepcontrol.wait`",
                )
                .with_note(
                    "whether the operation is part of the primary grid's completion is not \
                     modelled yet (docs/griddep.md)",
                ));
            }
        }
    }
    for t in grid(p, 1) {
        let done = after_wait(p, t);
        for (pc, i) in p.threads[t].code.iter().enumerate() {
            if done[pc] {
                continue;
            }
            for (l, write) in touches(p, i) {
                if write && primary_locs.contains(&l) {
                    return Err(Diagnostic::unsupported(
                        spans.instr(t, pc),
                        format!(
                            "a write to `{}` before `griddepcontrol.wait` in the dependent grid",
                            p.locations[l].name
                        ),
                        "writes of grid 1 to locations grid 0 accesses only after \
                         `griddepcontrol.wait` on every path",
                    )
                    .with_note(
                        "whether the primary grid sees it depends on when the dependent grid is \
                         scheduled, which `griddepcontrol.launch_dependents` allows but does not \
                         force (docs/griddep.md)",
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Rewrite `griddepcontrol` and the primary's completion into signals and
/// awaits (module docs). Source threads keep their instructions' positions:
/// a primary thread's end signal is appended, where branches to the end of
/// the thread already point.
pub fn lower(out: &mut Program) {
    let primaries: Vec<ThreadId> = grid(out, 0).collect();
    let waits = dependent_waits(out);
    let mut ends = smallvec::SmallVec::<[AwaitPoint; 2]>::new();
    if waits {
        for &t in &primaries {
            let th = &mut out.threads[t];
            ends.push(AwaitPoint::first(t, th.code.len()));
            th.code.push(Instr::Signal {
                kind: SignalKind::GridEnd,
            });
            if !th.sites.is_empty() {
                // Not an instruction of the kernel: a site of its own.
                th.sites.push(usize::MAX);
            }
        }
    }
    for th in out.threads.iter_mut().filter(|t| t.agent.is_none()) {
        let dependent = th.placement.grid == 1;
        for i in th.code.iter_mut() {
            if let Instr::GridDep { wait } = *i {
                *i = if wait && dependent && !ends.is_empty() {
                    Instr::Await { from: ends.clone() }
                } else {
                    Instr::Signal {
                        kind: SignalKind::GridControl,
                    }
                };
            }
        }
    }
}

/// Whether instruction `pc` of source thread `t` of a lowered program is
/// the end signal [`lower`] appended (past the code as written).
pub fn is_end(source: &Program, t: ThreadId, pc: usize) -> bool {
    source.threads.get(t).is_some_and(|th| pc >= th.code.len())
}
