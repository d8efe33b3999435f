//! Lowering: what the engines execute for the asynchronous-proxy, mbarrier
//! and cluster-barrier instructions (`docs/async.md`).
//!
//! Both engines run the *lowered* program, so they give these instructions
//! one meaning by construction:
//!
//! * every asynchronous operation (`cp.async.bulk`, `cp.reduce.async.bulk`,
//!   `cp.async`, `st.async`, `red.async`) becomes an **agent thread** (digest
//!   §2.5 [F]) that starts once the issuing instruction retires
//!   ([`Instr::Await`] of the issuer's [`Instr::Signal`]): it reads the source,
//!   writes the destination, runs the implicit `fence.proxy.async` of a bulk
//!   operation and completes — by a `.release.cluster` complete-tx on the
//!   mbarrier, or by signalling its bulk or `cp.async` group;
//! * `cp.async.bulk.wait_group` / `cp.async.wait_group` / `wait_all` become
//!   an [`Instr::Await`] of the agents' completion signals;
//! * mbarrier operations become read-modify-writes of the barrier's encoded
//!   state ([`crate::ir::mbar`]), `mbarrier.init` a weak store of it, waits
//!   stay reads ([`Instr::MbarWait`]) that acquire only when they succeed;
//! * `barrier.cluster.arrive` / `wait` become an arrive and a blocking wait on
//!   one hidden mbarrier per cluster, expecting every thread of the cluster.
//!
//! Source threads keep their index and their instructions their position, so
//! registers, traces and diagnostics refer to the test as written; agents
//! and hidden locations come after the source ones and are not part of final
//! states.

use smallvec::{SmallVec, smallvec};
use std::collections::HashMap;

use crate::ir::{
    Access, AddressKind, AgentOf, AsyncKind, AsyncSrc, Completion, Instr, LocKind, Location,
    MbarOp, Operand, Placement, Program, Proxy, ProxyFenceKind, RmwOp, Scope, Sem, SignalKind,
    Space, Thread, ThreadId, WaitPhase, mbar,
};
use crate::litmus::{Diagnostic, SourceMap};

/// Whether `p` uses anything this module rewrites.
pub fn needs_lowering(p: &Program) -> bool {
    p.threads.iter().flat_map(|t| &t.code).any(|i| {
        matches!(
            i,
            Instr::AsyncCopy { .. }
                | Instr::CommitGroup { .. }
                | Instr::WaitGroup { .. }
                | Instr::AsyncMbarArrive { .. }
                | Instr::Mbar { .. }
                | Instr::ClusterBarrier { .. }
        )
    })
}

/// Instructions that need their thread to be free of branches: the agents
/// and groups they create are laid out statically.
fn needs_straight_line(i: &Instr) -> bool {
    matches!(
        i,
        Instr::AsyncCopy { .. }
            | Instr::CommitGroup { .. }
            | Instr::WaitGroup { .. }
            | Instr::AsyncMbarArrive { .. }
            | Instr::ClusterBarrier { .. }
    )
}

/// Reject what the lowering cannot express, pointing at the text.
pub fn check(p: &Program, spans: &SourceMap) -> Result<(), Diagnostic> {
    for (t, th) in p.threads.iter().enumerate() {
        let span = |pc: usize| {
            spans
                .instrs
                .get(t)
                .and_then(|s| s.get(pc))
                .copied()
                .unwrap_or_default()
        };
        let branch = th
            .code
            .iter()
            .position(|i| matches!(i, Instr::Branch { .. }));
        if let (Some(b), Some(a)) = (branch, th.code.iter().position(needs_straight_line)) {
            return Err(Diagnostic::expected(
                span(b),
                "no branches in a thread that issues asynchronous operations or uses cluster barriers",
                "a branch",
            )
            .with_label("branch here")
            .with_note(format!(
                "instruction {} of {} issues an asynchronous operation or uses a cluster barrier; \
                 ptxmc lays their agents, groups and phases out statically",
                a + 1,
                th.name
            )));
        }
        let mut arrived = false;
        for (pc, i) in th.code.iter().enumerate() {
            match i {
                Instr::AsyncCopy {
                    src: AsyncSrc::Value(Operand::Reg(r)),
                    ..
                } => {
                    return Err(Diagnostic::expected(
                        span(pc),
                        "an immediate value for `st.async` / `red.async`",
                        format!("register `{}`", th.regs[*r].name),
                    )
                    .with_note("the operation runs apart from the thread, so ptxmc needs its value up front"));
                }
                Instr::AsyncCopy {
                    dst,
                    completion: Completion::Mbarrier(bar),
                    ..
                } => {
                    let (d, b) = (
                        p.locations[p.addresses[*dst].loc].space,
                        p.locations[p.addresses[*bar].loc].space,
                    );
                    let dst_cta = match d {
                        Space::Shared { gpu, cta } => Some((gpu, cta)),
                        Space::Global => None,
                    };
                    let bar_cta = match b {
                        Space::Shared { gpu, cta } => Some((gpu, cta)),
                        Space::Global => None,
                    };
                    if dst_cta.is_some() && dst_cta != bar_cta {
                        return Err(Diagnostic::expected(
                            span(pc),
                            "an mbarrier in the destination's CTA",
                            format!(
                                "mbarrier `{}` in another CTA than `{}`",
                                p.addresses[*bar].name, p.addresses[*dst].name
                            ),
                        ));
                    }
                }
                Instr::ClusterBarrier { arrive: true, .. } => {
                    if arrived {
                        return Err(Diagnostic::expected(
                            span(pc),
                            "`barrier.cluster.wait` before the next `barrier.cluster.arrive`",
                            "a second arrive",
                        ));
                    }
                    arrived = true;
                }
                Instr::ClusterBarrier { arrive: false, .. } => {
                    if !arrived {
                        return Err(Diagnostic::expected(
                            span(pc),
                            "a `barrier.cluster.arrive` before `barrier.cluster.wait`",
                            "a wait without an arrive",
                        ));
                    }
                    arrived = false;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The program the engines run (the program itself when nothing needs lowering).
pub fn lower(p: &Program) -> Program {
    if !needs_lowering(p) {
        return p.clone();
    }
    let mut l = Lowering {
        out: p.clone(),
        src: p,
        cluster_bars: HashMap::new(),
    };
    for t in 0..p.threads.len() {
        l.thread(t);
    }
    l.out
}

/// One completion an issuer may wait for: the agent and its signals.
#[derive(Clone, Copy)]
struct Pending {
    agent: ThreadId,
    reads_done: Option<usize>,
    done: usize,
}

struct Lowering<'p> {
    out: Program,
    src: &'p Program,
    /// The hidden mbarrier of each (gpu, cluster).
    cluster_bars: HashMap<(u32, u32), usize>,
}

fn access(addr: usize, proxy: Proxy, sem: Sem, scope: Option<Scope>) -> Access {
    Access {
        addr,
        proxy,
        sem,
        scope,
        space: None,
    }
}

impl Lowering<'_> {
    fn thread(&mut self, t: ThreadId) {
        let th = &self.src.threads[t];
        let mut code = th.code.clone();
        // [bulk, cp.async]: operations not yet committed, and committed groups.
        let mut uncommitted: [Vec<Pending>; 2] = [Vec::new(), Vec::new()];
        let mut groups: [Vec<Vec<Pending>>; 2] = [Vec::new(), Vec::new()];
        let mut cp_async: Vec<Pending> = Vec::new();
        let mut arrives: i64 = 0;
        for (pc, instr) in th.code.iter().enumerate() {
            code[pc] = match instr {
                Instr::AsyncCopy { .. } => {
                    let pending = self.agent_for(t, pc, instr);
                    match instr {
                        Instr::AsyncCopy {
                            completion: Completion::BulkGroup,
                            ..
                        } => uncommitted[0].push(pending),
                        Instr::AsyncCopy {
                            completion: Completion::AsyncGroup,
                            ..
                        } => {
                            uncommitted[1].push(pending);
                            cp_async.push(pending);
                        }
                        _ => {}
                    }
                    Instr::Signal {
                        kind: SignalKind::Issue,
                    }
                }
                Instr::CommitGroup { bulk } => {
                    let g = if *bulk { 0 } else { 1 };
                    let group = std::mem::take(&mut uncommitted[g]);
                    groups[g].push(group);
                    Instr::Signal {
                        kind: SignalKind::Commit,
                    }
                }
                Instr::WaitGroup {
                    bulk,
                    pending,
                    read,
                    all,
                } => {
                    let g = if *bulk { 0 } else { 1 };
                    if *all {
                        let group = std::mem::take(&mut uncommitted[g]);
                        groups[g].push(group);
                    }
                    let keep = if *all { 0 } else { *pending as usize };
                    let upto = groups[g].len().saturating_sub(keep);
                    let from = groups[g][..upto]
                        .iter()
                        .flatten()
                        .map(|a| (a.agent, if *read { a.reads_done.unwrap() } else { a.done }))
                        .collect();
                    Instr::Await { from }
                }
                Instr::AsyncMbarArrive { addr, noinc } => {
                    self.mbarrier_arrive_agent(t, pc, *addr, &cp_async);
                    if *noinc {
                        Instr::Signal {
                            kind: SignalKind::Issue,
                        }
                    } else {
                        // Without `.noinc` the pending count goes up by one now, so the
                        // arrive later changes it by zero net (an arrive of -1).
                        Instr::Rmw {
                            dst: None,
                            op: RmwOp::MbarArrive,
                            args: smallvec![Operand::Imm(-1)],
                            access: access(*addr, Proxy::Generic, Sem::Relaxed, Some(Scope::Cta)),
                        }
                    }
                }
                Instr::Mbar {
                    op,
                    dst,
                    addr,
                    arg,
                    sem,
                    scope,
                    space,
                } => {
                    let mut a = access(*addr, Proxy::Generic, *sem, Some(*scope));
                    a.space = *space;
                    let arg = arg.unwrap_or(Operand::Imm(1));
                    match op {
                        MbarOp::Init => {
                            let Operand::Imm(n) = arg else {
                                unreachable!("the parser requires a literal count")
                            };
                            Instr::Store {
                                src: Operand::Imm(mbar::init(n)),
                                access: Access {
                                    sem: Sem::Weak,
                                    scope: None,
                                    ..a
                                },
                            }
                        }
                        _ => Instr::Rmw {
                            dst: *dst,
                            op: match op {
                                MbarOp::Arrive => RmwOp::MbarArrive,
                                MbarOp::ExpectTx => RmwOp::MbarExpectTx,
                                MbarOp::CompleteTx => RmwOp::MbarCompleteTx,
                                MbarOp::ArriveExpectTx => RmwOp::MbarArriveExpectTx,
                                MbarOp::Init => unreachable!(),
                            },
                            args: smallvec![arg],
                            access: a,
                        },
                    }
                }
                Instr::ClusterBarrier { arrive, sem, .. } => {
                    let bar = self.cluster_bar(th.placement);
                    if *arrive {
                        arrives += 1;
                        Instr::Rmw {
                            dst: None,
                            op: RmwOp::MbarArrive,
                            args: smallvec![Operand::Imm(1)],
                            access: access(bar, Proxy::Generic, *sem, Some(Scope::Cluster)),
                        }
                    } else {
                        Instr::MbarWait {
                            dst: None,
                            addr: bar,
                            test: false,
                            phase: WaitPhase::Phase(arrives - 1),
                            sem: *sem,
                            scope: Scope::Cluster,
                            space: None,
                        }
                    }
                }
                other => other.clone(),
            };
        }
        self.out.threads[t].code = code;
    }

    /// The hidden mbarrier that implements `barrier.cluster` for the cluster of `at`.
    fn cluster_bar(&mut self, at: Placement) -> usize {
        let key = (at.gpu, at.cluster);
        if let Some(&a) = self.cluster_bars.get(&key) {
            return a;
        }
        let members = self
            .src
            .threads
            .iter()
            .filter(|t| t.placement.gpu == at.gpu && t.placement.cluster == at.cluster)
            .count() as i64;
        let name = format!("%cluster_barrier_gpu{}_cluster{}", at.gpu, at.cluster);
        let loc = self.out.locations.len();
        self.out.locations.push(Location {
            name: name.clone(),
            init: mbar::init(members),
            space: Space::Global,
            kind: LocKind::Synthetic,
        });
        let addr = self.out.addresses.len();
        self.out.addresses.push(crate::ir::Address {
            name,
            loc,
            va: addr,
            kind: AddressKind::Generic,
            alias_of: None,
        });
        self.cluster_bars.insert(key, addr);
        addr
    }

    /// Where the destination of an operation is performed: the CTA owning
    /// shared-memory destinations, else the issuer's.
    fn dest_placement(&self, issuer: Placement, dst: usize) -> Placement {
        match self.src.locations[self.src.addresses[dst].loc].space {
            Space::Global => issuer,
            Space::Shared { gpu, cta } => self
                .src
                .threads
                .iter()
                .map(|t| t.placement)
                .find(|p| p.gpu == gpu && p.cta == cta)
                .unwrap_or(issuer),
        }
    }

    fn push_agent(
        &mut self,
        issuer: ThreadId,
        pc: usize,
        code: Vec<(Instr, Placement)>,
        publishes: Vec<ThreadId>,
    ) -> ThreadId {
        let id = self.out.threads.len();
        let th = &self.src.threads[issuer];
        let (code, at): (Vec<Instr>, Vec<Placement>) = code.into_iter().unzip();
        let mut publishes = publishes;
        publishes.push(id);
        publishes.sort_unstable();
        self.out.threads.push(Thread {
            name: format!("{}.async@{}", th.name, pc),
            placement: th.placement,
            regs: vec![crate::ir::Register {
                name: "v".to_string(),
                init: 0,
            }],
            code,
            labels: Vec::new(),
            agent: Some(AgentOf {
                issuer,
                spawn_pc: pc,
                publishes,
                at,
            }),
        });
        id
    }

    /// The agent of the asynchronous operation `instr` at `pc` of thread `t`.
    fn agent_for(&mut self, t: ThreadId, pc: usize, instr: &Instr) -> Pending {
        let Instr::AsyncCopy {
            kind,
            dst,
            src,
            size,
            completion,
            ..
        } = instr
        else {
            unreachable!("an asynchronous operation")
        };
        let here = self.src.threads[t].placement;
        let there = self.dest_placement(here, *dst);
        let start = (
            Instr::Await {
                from: smallvec![(t, pc)],
            },
            here,
        );
        let (proxy, bulk) = match kind {
            AsyncKind::Bulk | AsyncKind::ReduceBulk(_) => (Proxy::Async, true),
            AsyncKind::NonBulk | AsyncKind::Store | AsyncKind::Reduce(_) => (Proxy::Generic, false),
        };
        let mut code = vec![start];
        let value = match src {
            AsyncSrc::Addr(a) => {
                code.push((
                    Instr::Load {
                        dst: 0,
                        access: access(*a, proxy, Sem::Weak, None),
                    },
                    here,
                ));
                Operand::Reg(0)
            }
            AsyncSrc::Value(v) => *v,
        };
        let mut reads_done = None;
        if *completion == Completion::BulkGroup {
            // `wait_group.read` lets the issuer reuse the source buffer with
            // plain generic writes (CUTLASS's TMA-store pipelines do exactly
            // this, with no proxy fence): the source reads complete behind an
            // implicit proxy fence, so a later overwrite cannot flow back
            // into the copy. Our choice, docs/async.md.
            code.push((
                Instr::ProxyFence {
                    kind: ProxyFenceKind::Async(None),
                },
                here,
            ));
            reads_done = Some(code.len());
            code.push((
                Instr::Signal {
                    kind: SignalKind::ReadsDone,
                },
                here,
            ));
        }
        let write = match kind {
            AsyncKind::Bulk | AsyncKind::NonBulk | AsyncKind::Store => Instr::Store {
                src: value,
                access: access(*dst, proxy, Sem::Weak, None),
            },
            // cp.reduce.async.bulk: element-wise `.relaxed.gpu` reductions (PTX 8.x).
            AsyncKind::ReduceBulk(op) => Instr::Rmw {
                dst: None,
                op: *op,
                args: smallvec![value],
                access: access(*dst, proxy, Sem::Relaxed, Some(Scope::Gpu)),
            },
            // red.async is `.relaxed.cluster`.
            AsyncKind::Reduce(op) => Instr::Rmw {
                dst: None,
                op: *op,
                args: smallvec![value],
                access: access(*dst, proxy, Sem::Relaxed, Some(Scope::Cluster)),
            },
        };
        code.push((write, there));
        if bulk {
            // Completion of a bulk operation is followed by an implicit proxy fence.
            code.push((
                Instr::ProxyFence {
                    kind: ProxyFenceKind::Async(None),
                },
                there,
            ));
        }
        let done = code.len();
        match completion {
            Completion::Mbarrier(bar) => code.push((
                Instr::Rmw {
                    dst: None,
                    op: RmwOp::MbarCompleteTx,
                    args: smallvec![Operand::Imm(*size)],
                    access: access(*bar, Proxy::Generic, Sem::Release, Some(Scope::Cluster)),
                },
                there,
            )),
            Completion::BulkGroup | Completion::AsyncGroup => code.push((
                Instr::Signal {
                    kind: SignalKind::Done,
                },
                there,
            )),
        }
        let agent = self.push_agent(t, pc, code, Vec::new());
        Pending {
            agent,
            reads_done,
            done,
        }
    }

    /// The agent of `cp.async.mbarrier.arrive`: once the thread's earlier
    /// `cp.async` operations complete, an arrive that publishes their writes.
    fn mbarrier_arrive_agent(&mut self, t: ThreadId, pc: usize, bar: usize, tracked: &[Pending]) {
        let here = self.src.threads[t].placement;
        let mut from: SmallVec<[(usize, usize); 2]> = smallvec![(t, pc)];
        from.extend(tracked.iter().map(|a| (a.agent, a.done)));
        let code = vec![
            (Instr::Await { from }, here),
            (
                Instr::Rmw {
                    dst: None,
                    op: RmwOp::MbarArrive,
                    args: smallvec![Operand::Imm(1)],
                    access: access(bar, Proxy::Generic, Sem::Release, Some(Scope::Cta)),
                },
                here,
            ),
        ];
        self.push_agent(t, pc, code, tracked.iter().map(|a| a.agent).collect());
    }
}
