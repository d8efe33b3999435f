//! The waits a programmer reads into a program: an asynchronous operation
//! (`cp.async`, `cp.async.bulk`, `wgmma.mma_async`, `tcgen05.ld`/`st`/`mma`)
//! is read as complete before its issuing thread's later accesses to the
//! locations it touches and, for an operation the thread itself waits for,
//! before the thread's later signals to other threads (a release, a barrier
//! or mbarrier arrival). Where the execution does not order the operation
//! there, the wait that would have ordered it is missing, or waits for less
//! than the programmer meant (`cp.async.bulk.wait_group.read`, a
//! `wait_group N` whose N leaves the operation's group pending).
//!
//! These are the edges [`super::missing`] adds to the program's orderings
//! without synchronisation (so an outcome they explain is no longer
//! "sequentially consistent"), and the sentence for each such missing link.

use crate::ax::graph::Kind;
use crate::ir::tensor_core::TcOp;
use crate::ir::{Completion, Instr};
use crate::rel::Bits;

use super::check::{Edge, EdgeRel, Relations};
use super::words::Words;

/// How the issuing thread learns that an operation completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mechanism {
    /// `cp.async` groups.
    AsyncGroup,
    /// `cp.async.bulk` bulk groups.
    BulkGroup,
    /// complete-tx on an mbarrier (another thread may wait for it).
    Mbarrier,
    /// `wgmma.commit_group` / `wgmma.wait_group`.
    Wgmma,
    /// `tcgen05.wait::ld`.
    TcLd,
    /// `tcgen05.wait::st`.
    TcSt,
    /// `tcgen05.commit` to an mbarrier.
    TcCommit,
}

impl Mechanism {
    fn of(i: &Instr) -> Option<Mechanism> {
        Some(match i {
            Instr::AsyncCopy { completion, .. } => match completion {
                Completion::AsyncGroup => Mechanism::AsyncGroup,
                Completion::BulkGroup => Mechanism::BulkGroup,
                Completion::Mbarrier(_) => Mechanism::Mbarrier,
            },
            Instr::Tensor { op } => match op {
                TcOp::Wgmma { .. } => Mechanism::Wgmma,
                TcOp::Ld { .. } => Mechanism::TcLd,
                TcOp::St { .. } => Mechanism::TcSt,
                TcOp::Mma { .. } | TcOp::Cp { .. } => Mechanism::TcCommit,
                _ => return None,
            },
            _ => return None,
        })
    }

    /// The thread waits for the operation itself (else an mbarrier that
    /// any thread may wait on tells of its completion).
    fn own_wait(self) -> bool {
        !matches!(self, Mechanism::Mbarrier | Mechanism::TcCommit)
    }

    /// What orders the operation before a later instruction of its thread.
    fn needed(self) -> &'static str {
        match self {
            Mechanism::AsyncGroup => {
                "`cp.async.commit_group` and `cp.async.wait_group 0` (or `cp.async.wait_all`)"
            }
            Mechanism::BulkGroup => "`cp.async.bulk.commit_group` and `cp.async.bulk.wait_group 0`",
            Mechanism::Mbarrier => {
                "a successful `mbarrier.try_wait` on the mbarrier the operation completes on, for the phase it completes"
            }
            Mechanism::Wgmma => "`wgmma.commit_group` and `wgmma.wait_group 0`",
            Mechanism::TcLd => "`tcgen05.wait::ld`",
            Mechanism::TcSt => "`tcgen05.wait::st`",
            Mechanism::TcCommit => {
                "`tcgen05.commit` to an mbarrier and a successful wait on it (then `tcgen05.fence::after_thread_sync`)"
            }
        }
    }

    /// The wait alone, for a group already committed.
    fn wait_only(self) -> Option<&'static str> {
        match self {
            Mechanism::AsyncGroup => Some("`cp.async.wait_group 0` (or `cp.async.wait_all`)"),
            Mechanism::BulkGroup => Some("`cp.async.bulk.wait_group 0`"),
            Mechanism::Wgmma => Some("`wgmma.wait_group 0`"),
            _ => None,
        }
    }

    /// Whether `i` is a wait of this mechanism's family.
    fn waits_with(self, i: &Instr) -> bool {
        match (self, i) {
            (Mechanism::AsyncGroup, Instr::WaitGroup { bulk, .. }) => !bulk,
            (Mechanism::BulkGroup, Instr::WaitGroup { bulk, .. }) => *bulk,
            (Mechanism::Wgmma, Instr::Tensor { op }) => matches!(op, TcOp::WgmmaWait { .. }),
            (Mechanism::TcLd, Instr::Tensor { op }) => matches!(op, TcOp::Wait { ld: true }),
            (Mechanism::TcSt, Instr::Tensor { op }) => matches!(op, TcOp::Wait { ld: false }),
            (Mechanism::Mbarrier | Mechanism::TcCommit, Instr::MbarWait { .. }) => true,
            _ => false,
        }
    }

    /// Whether `i` commits this mechanism's groups.
    fn commits_with(self, i: &Instr) -> bool {
        match (self, i) {
            (Mechanism::AsyncGroup, Instr::CommitGroup { bulk }) => !bulk,
            (Mechanism::BulkGroup, Instr::CommitGroup { bulk }) => *bulk,
            (Mechanism::Wgmma, Instr::Tensor { op }) => matches!(op, TcOp::WgmmaCommit),
            _ => false,
        }
    }
}

/// The issue of the operation event `e` belongs to: (issuer, issuing pc,
/// mechanism), for the first execution of an operation of the program as
/// written (an operation issued in a loop is read as written only once).
fn issue_of<S: Bits>(words: &Words<'_, '_, S>, e: usize) -> Option<(usize, usize, Mechanism)> {
    let g = words.graph;
    let t = g.events[e].thread?;
    let a = g.program.threads[t].agent.as_ref()?;
    if a.exec != 0 {
        return None;
    }
    let i = words.source.threads.get(a.issuer)?.code.get(a.spawn_pc)?;
    Some((a.issuer, a.spawn_pc, Mechanism::of(i)?))
}

/// Where event `e` stands in the code of thread `issuer`: its own pc, or
/// for an operation `issuer` issued, the issuing pc.
fn pc_in<S: Bits>(words: &Words<'_, '_, S>, issuer: usize, e: usize) -> Option<usize> {
    let (t, pc) = words.source_instr(e)?;
    (t == issuer).then_some(pc)
}

/// Whether `e` tells other threads that its thread is done with something:
/// a release write (an mbarrier arrival included), a release fence or a
/// barrier arrival.
fn is_signal<S: Bits>(words: &Words<'_, '_, S>, e: usize) -> bool {
    let ev = &words.graph.events[e];
    match ev.kind {
        Kind::Write => ev.sem.is_release(),
        Kind::Fence(f) => f.releases(),
        Kind::BarArrive => true,
        _ => false,
    }
}

/// The completions as written that the execution does not provide: from
/// each event of an operation to each later event of its issuer (or of an
/// operation its issuer issues later) that accesses a location the
/// operation accesses, one of them a write; and, for an operation its
/// thread waits for itself, to each later signal of the issuer.
pub fn completion_edges<S: Bits>(
    words: &Words<'_, '_, S>,
    rels: &Relations<'_, '_, S>,
    out: &mut Vec<Edge>,
) {
    let g = words.graph;
    let n = g.len();
    for x in 0..n {
        if !g.events[x].is_mem() {
            continue;
        }
        let Some((issuer, at, mech)) = issue_of(words, x) else {
            continue;
        };
        for e in 0..n {
            if e == x || g.events[e].thread == g.events[x].thread {
                continue;
            }
            let Some(pc) = pc_in(words, issuer, e) else {
                continue;
            };
            // A later operation of the issuer counts from its issue only
            // when it too is the first execution of its instruction.
            let agent = g.events[e]
                .thread
                .is_some_and(|t| g.program.threads[t].agent.is_some());
            if pc <= at || (agent && issue_of(words, e).is_none()) {
                continue;
            }
            let (a, b) = (&g.events[x], &g.events[e]);
            let conflict =
                b.is_mem() && a.loc == b.loc && (a.kind == Kind::Write || b.kind == Kind::Write);
            let signal = mech.own_wait() && !agent && is_signal(words, e);
            if (conflict || signal) && !rels.cb.has(x, e) {
                out.push(Edge {
                    from: x,
                    to: e,
                    rel: EdgeRel::Async,
                    sync: None,
                });
            }
        }
    }
}

/// Whether the edge `from → to` is a completion as written (from an
/// operation's event), not an issue.
pub fn is_completion<S: Bits>(words: &Words<'_, '_, S>, from: usize) -> bool {
    issue_of(words, from).is_some()
}

/// Why the operation event `op` is not complete at `later`, a later event
/// of its issuer: the wait is missing, or the one written waits for less.
/// `q` words an event (with its position the first time).
pub fn missing_wait<S: Bits>(
    words: &Words<'_, '_, S>,
    op: usize,
    later: usize,
    q: &dyn Fn(usize) -> String,
) -> String {
    let Some((issuer, at, mech)) = issue_of(words, op) else {
        return format!("{} does not wait for {}", q(later), q(op));
    };
    let th = &words.source.threads[issuer];
    let print = |pc: usize| crate::litmus::print::instr(words.source, th, &th.code[pc]);
    let line = |pc: usize| {
        words
            .positions
            .short(issuer, pc)
            .map_or_else(String::new, |p| format!(" ({p})"))
    };
    let head = format!(
        "{} is not complete at {}: `{}` is asynchronous",
        q(op),
        q(later),
        print(at)
    );
    let end = pc_in(words, issuer, later).unwrap_or(at);
    let wait = (at + 1..end.min(th.code.len())).find(|&pc| mech.waits_with(&th.code[pc]));
    let Some(w) = wait else {
        // A group committed already needs only its wait.
        let committed = (at + 1..end.min(th.code.len())).any(|pc| mech.commits_with(&th.code[pc]));
        let needed = match mech.wait_only() {
            Some(wait) if committed => wait,
            _ => mech.needed(),
        };
        return format!(
            "{head}, and nothing between them waits for it: {needed} between them {} missing",
            if needed.contains(" and ") {
                "are"
            } else {
                "is"
            }
        );
    };
    match &th.code[w] {
        Instr::WaitGroup { read: true, .. } => format!(
            "{head}, and `{}`{} waits only until it has read its source, not for its writes: `cp.async.bulk.wait_group` without `.read` is needed",
            print(w),
            line(w)
        ),
        Instr::WaitGroup { pending, .. }
        | Instr::Tensor {
            op: TcOp::WgmmaWait { pending },
        } if *pending > 0 => {
            // The operation's group is committed by the first commit after
            // it; the groups committed after that one, before the wait, are
            // the most recent ones the wait may leave pending.
            let first = (at + 1..w).find(|&pc| mech.commits_with(&th.code[pc]));
            match first {
                None => format!(
                    "{head}, and its group is not committed before `{}`{}: a commit before the wait is missing",
                    print(w),
                    line(w)
                ),
                Some(c) => {
                    let after = (c + 1..w)
                        .filter(|&pc| mech.commits_with(&th.code[pc]))
                        .count();
                    format!(
                        "{head}, and `{}`{} lets the {pending} most recent group{} stay pending, the operation's among them: a count of at most {after} is needed",
                        print(w),
                        line(w),
                        if *pending == 1 { "" } else { "s" }
                    )
                }
            }
        }
        _ => format!(
            "{head}, and `{}`{} does not order it before {}",
            print(w),
            line(w),
            q(later)
        ),
    }
}
