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
    Access, AddressKind, AgentOf, AsyncKind, AsyncSrc, AwaitPoint, Completion, DataType, Instr,
    LocKind, Location, MbarOp, Operand, Placement, Program, Proxy, ProxyFenceKind, RmwOp, Scope,
    Sem, SignalKind, Space, Thread, ThreadId, WaitPhase, mbar,
};
use crate::litmus::{Diagnostic, SourceMap, Span};

use super::accounting::{self, Accounts, Known};

mod tcgen;

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
                | Instr::Tensor { .. }
                | Instr::GridDep { .. }
        )
    })
}

/// Instructions whose lowering depends on what the thread did before them
/// on the path that reaches them ([`accounting`]).
fn needs_accounts(i: &Instr) -> bool {
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
        let span = |pc: usize| spans.instr(t, pc);
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
                _ => {}
            }
        }
        if th.code.iter().any(needs_accounts) {
            check_paths(p, t, &span)?;
        }
        tcgen::check(p, t, &span)?;
    }
    Ok(())
}

/// Where paths that disagree meet, in words, for a diagnostic at
/// instruction `here`.
fn meeting(p: &Program, t: ThreadId, join: usize, here: usize) -> String {
    let th = &p.threads[t];
    let at = match th.code.get(join) {
        Some(_) if join == here => "at this instruction".to_string(),
        Some(i) => format!(
            "before instruction {} (`{}`)",
            join + 1,
            crate::litmus::print::instr(p, th, i)
        ),
        None => "at its end".to_string(),
    };
    let looped = accounting::enclosing_loops(th, join).any(|(head, _)| head == join);
    format!(
        "paths of {} meet {at}{}",
        th.name,
        if looped {
            ", the head of a loop: the way in and the way round disagree"
        } else {
            ""
        }
    )
}

/// The checks that depend on paths: which operations each async-group wait
/// awaits and which cluster-barrier phase each wait waits for must be the
/// same on every path, and operations that join an async-group may not be
/// issued in a loop.
fn check_paths(p: &Program, t: ThreadId, span: &dyn Fn(usize) -> Span) -> Result<(), Diagnostic> {
    let th = &p.threads[t];
    let text = |pc: usize| crate::litmus::print::instr(p, th, &th.code[pc]);
    for (pc, i) in th.code.iter().enumerate() {
        if accounting::joins_group(i).is_some() {
            if let Some((_, back)) = accounting::enclosing_loops(th, pc).next() {
                return Err(Diagnostic::expected(
                    span(pc),
                    "an operation that joins an async-group outside loops",
                    format!("`{}` inside a loop", text(pc)),
                )
                .with_label("joins a group in every iteration")
                .with_note(format!(
                    "the loop goes back at instruction {} (`{}`); each execution of an operation \
                     in a loop is an operation of its own, and which of them a later wait awaits \
                     changes from one iteration to the next: ptxmc lays async-groups out statically \
                     (operations that complete on an mbarrier may be issued in loops)",
                    back + 1,
                    text(back)
                )));
            }
        }
    }
    let at = accounting::analyse(th);
    for (pc, i) in th.code.iter().enumerate() {
        let Some(before) = &at[pc] else { continue };
        match i {
            Instr::WaitGroup { .. } | Instr::AsyncMbarArrive { .. } => {
                let g = match i {
                    Instr::WaitGroup { bulk, .. } => accounting::group_kind(*bulk),
                    _ => accounting::group_kind(false),
                };
                if let Known::Differs { join } = before.groups[g] {
                    let (expected, label) = match i {
                        Instr::WaitGroup { .. } => (
                            "the same committed async-groups on every path to this wait",
                            "which operations this waits for depends on the path",
                        ),
                        _ => (
                            "the same `cp.async` operations on every path to `cp.async.mbarrier.arrive`",
                            "which copies this arrive tracks depends on the path",
                        ),
                    };
                    return Err(Diagnostic::expected(
                        span(pc),
                        expected,
                        "paths that issued or committed different operations",
                    )
                    .with_label(label)
                    .with_note(format!(
                        "{}; ptxmc lays async-groups out statically and does not guess which \
                         operations a wait awaits",
                        meeting(p, t, join, pc)
                    )));
                }
            }
            Instr::ClusterBarrier { arrive, .. } => match before.cluster {
                Known::Differs { join } => {
                    return Err(Diagnostic::expected(
                        span(pc),
                        "the same number of `barrier.cluster.arrive`s on every path to this instruction",
                        "paths with different numbers of arrivals",
                    )
                    .with_label("which cluster-barrier phase this is depends on the path")
                    .with_note(format!(
                        "{}; ptxmc counts cluster-barrier phases per thread, statically",
                        meeting(p, t, join, pc)
                    )));
                }
                Known::Same(c) if *arrive && c.arrived => {
                    return Err(Diagnostic::expected(
                        span(pc),
                        "`barrier.cluster.wait` before the next `barrier.cluster.arrive`",
                        "a second arrive",
                    ));
                }
                Known::Same(c) if !*arrive && !c.arrived => {
                    return Err(Diagnostic::expected(
                        span(pc),
                        "a `barrier.cluster.arrive` before `barrier.cluster.wait`",
                        "a wait without an arrive",
                    ));
                }
                Known::Same(_) => {}
            },
            _ => {}
        }
    }
    // Paths may end with different numbers of arrivals: no instruction
    // needs the count then, and a phase some path never arrives at is a
    // wait that never completes for the others (a hang both engines find).
    Ok(())
}

/// [`lower`] without a copy when nothing needs lowering: a program that is
/// already lowered (or never needed it) is borrowed. Lowering is idempotent
/// (a lowered program has no instruction left that [`needs_lowering`]
/// names), so a run lowers its program once and hands the result to every
/// engine and phase, which call this again for free.
pub fn lowered(p: &Program, bound: u32) -> std::borrow::Cow<'_, Program> {
    if needs_lowering(p) {
        std::borrow::Cow::Owned(lower(p, bound))
    } else {
        std::borrow::Cow::Borrowed(p)
    }
}

/// The program the engines run (the program itself when nothing needs
/// lowering), with one agent per execution of an asynchronous operation
/// that a loop may run up to `bound` more times.
///
/// Agents of first executions come first (in thread and instruction
/// order), then those of later executions: the agents a hang can name
/// (those of operations outside loops) have the same ids whatever the
/// bound.
pub fn lower(p: &Program, bound: u32) -> Program {
    if !needs_lowering(p) {
        return p.clone();
    }
    // Whole-copy completion (`ir::copies`): the element copies of each
    // group complete no bytes; one completer per group does.
    let groups = match p.granularity {
        crate::ir::copies::Granularity::Element => Vec::new(),
        crate::ir::copies::Granularity::Whole => crate::ir::copies::groups(p),
    };
    let mut l = Lowering {
        out: p.clone(),
        src: p,
        cluster_bars: HashMap::new(),
        tracked: HashMap::new(),
        tc_agents: HashMap::new(),
        grouped: groups
            .iter()
            .flat_map(|g| g.pcs.iter().map(move |&pc| (g.thread, pc)))
            .collect(),
        groups,
        elements: HashMap::new(),
    };
    for t in 0..p.threads.len() {
        l.thread(t);
    }
    for t in 0..p.threads.len() {
        l.later_executions(t, bound);
    }
    l.out.tc_early = crate::ir::tensor_core::early_accesses(p);
    l.out.tc_unfenced = crate::ir::tensor_core::unfenced(p);
    super::griddep::lower(&mut l.out);
    l.out
}

/// What [`check`] made sure of: the quantity is the same on every path.
fn known<T: Clone + PartialEq>(k: &Known<T>) -> T {
    k.same()
        .cloned()
        .expect("model::lower::check admits only path-independent accounts")
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
    /// The copies each `cp.async.mbarrier.arrive` tracks, by (thread, instruction).
    tracked: HashMap<(ThreadId, usize), Vec<Pending>>,
    /// The agent of each tensor-core operation, by (thread, instruction).
    tc_agents: HashMap<(ThreadId, usize), tcgen::TcAgent>,
    /// Under whole-copy completion, the copy groups (`ir::copies`)...
    groups: Vec<crate::ir::copies::Group>,
    /// ... their element copies, by (thread, instruction) ...
    grouped: std::collections::HashSet<(ThreadId, usize)>,
    /// ... and the agent of each execution of an element copy, by
    /// (thread, instruction, execution).
    elements: HashMap<(ThreadId, usize, usize), Pending>,
}

fn access(addr: usize, proxy: Proxy, sem: Sem, scope: Option<Scope>) -> Access {
    Access {
        addr,
        proxy,
        sem,
        scope,
        space: None,
        ty: None,
    }
}

impl Lowering<'_> {
    /// Lower thread `t`, creating the agents of its operations' first
    /// executions.
    fn thread(&mut self, t: ThreadId) {
        let th = &self.src.threads[t];
        let mut code = th.code.clone();
        let accounts = if th.code.iter().any(needs_accounts) {
            accounting::analyse(th)
        } else {
            Vec::new()
        };
        let before = |pc: usize| -> &Accounts {
            accounts[pc]
                .as_ref()
                .expect("an instruction that needs accounts is reachable")
        };
        // The agent of each operation's first execution, by instruction.
        let mut first: HashMap<usize, Pending> = HashMap::new();
        for (pc, instr) in th.code.iter().enumerate() {
            if !accounts.is_empty() && accounts[pc].is_none() && needs_accounts(instr) {
                // Dead code: never executed, but nothing of the source may be left.
                code[pc] = Instr::Signal {
                    kind: SignalKind::Issue,
                };
                continue;
            }
            code[pc] = match instr {
                Instr::AsyncCopy { .. } => {
                    first.insert(pc, self.agent_for(t, pc, 0, instr));
                    Instr::Signal {
                        kind: SignalKind::Issue,
                    }
                }
                Instr::CommitGroup { .. } => Instr::Signal {
                    kind: SignalKind::Commit,
                },
                Instr::WaitGroup {
                    bulk,
                    pending,
                    read,
                    all,
                } => {
                    let g: accounting::Groups =
                        known(&before(pc).groups[accounting::group_kind(*bulk)]);
                    let mut groups = g.committed;
                    if *all {
                        groups.push(g.uncommitted);
                    }
                    let keep = if *all { 0 } else { *pending as usize };
                    let upto = groups.len().saturating_sub(keep);
                    let from = groups[..upto]
                        .iter()
                        .flatten()
                        .map(|op| {
                            let a = first[op];
                            let at = if *read { a.reads_done.unwrap() } else { a.done };
                            AwaitPoint::first(a.agent, at)
                        })
                        .collect();
                    Instr::Await { from }
                }
                Instr::AsyncMbarArrive { addr, noinc } => {
                    let g: accounting::Groups =
                        known(&before(pc).groups[accounting::group_kind(false)]);
                    let tracked: Vec<Pending> = g.issued.iter().map(|op| first[op]).collect();
                    self.mbarrier_arrive_agent(t, pc, 0, *addr, &tracked);
                    self.tracked.insert((t, pc), tracked);
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
                    let arrives = known(&before(pc).cluster).arrives;
                    if *arrive {
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
                            // The phase this thread's last arrive joined.
                            phase: WaitPhase::Phase(arrives - 1),
                            sem: *sem,
                            scope: Scope::Cluster,
                            space: None,
                            suspend: None,
                        }
                    }
                }
                Instr::Tensor { op } => self.tensor(t, pc, op),
                other => other.clone(),
            };
        }
        self.out.threads[t].code = code;
        self.completers(t, 0);
    }

    /// The agents of the later executions of thread `t`'s operations that
    /// a bounded loop may run again (up to `bound` more times per back edge).
    fn later_executions(&mut self, t: ThreadId, bound: u32) {
        let th = &self.src.threads[t];
        let execs = accounting::executions(th, bound);
        let live = if th.code.iter().any(needs_accounts) {
            accounting::analyse(th)
                .iter()
                .map(Option::is_some)
                .collect()
        } else {
            vec![true; th.code.len() + 1]
        };
        for (pc, instr) in th.code.iter().enumerate() {
            if !live[pc] {
                continue;
            }
            for k in 1..execs[pc] {
                match instr {
                    Instr::AsyncCopy { .. } => {
                        self.agent_for(t, pc, k, instr);
                    }
                    Instr::AsyncMbarArrive { addr, .. } => {
                        let tracked = self.tracked[&(t, pc)].clone();
                        self.mbarrier_arrive_agent(t, pc, k, *addr, &tracked);
                    }
                    _ => {}
                }
            }
        }
        let most = execs.iter().copied().max().unwrap_or(0);
        for k in 1..most {
            self.completers(t, k);
        }
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
        let addr = self.hidden(name, mbar::init(members));
        self.cluster_bars.insert(key, addr);
        addr
    }

    /// A hidden location (not part of final states) with its address: the
    /// cluster barriers' mbarriers, the tensor-core operations' register
    /// results.
    fn hidden(&mut self, name: String, init: crate::ir::Value) -> usize {
        let loc = self.out.locations.len();
        self.out.locations.push(Location {
            name: name.clone(),
            init,
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

    /// Add the agent thread of execution `exec` of the operation at `pc` of
    /// `issuer`, running `code` (each instruction with where it is
    /// performed), publishing its own and `publishes`' accesses at its
    /// release, with `regs` registers: `v` for one, else `v0`, `v1`, ...
    #[allow(clippy::too_many_arguments)]
    fn push_agent(
        &mut self,
        issuer: ThreadId,
        pc: usize,
        exec: usize,
        code: Vec<(Instr, Placement)>,
        publishes: Vec<ThreadId>,
        regs: usize,
    ) -> ThreadId {
        let id = self.out.threads.len();
        let th = &self.src.threads[issuer];
        let (code, at): (Vec<Instr>, Vec<Placement>) = code.into_iter().unzip();
        let mut publishes = publishes;
        publishes.push(id);
        publishes.sort_unstable();
        self.out.threads.push(Thread {
            name: if exec == 0 {
                format!("{}.async@{}", th.name, pc)
            } else {
                format!("{}.async@{}[{}]", th.name, pc, exec)
            },
            // An agent is no lane of its issuer's warp.
            placement: Placement {
                warp: None,
                ..th.placement
            },
            regs: (0..regs)
                .map(|i| crate::ir::Register {
                    name: if regs == 1 {
                        "v".to_string()
                    } else {
                        format!("v{i}")
                    },
                    init: 0,
                })
                .collect(),
            code,
            labels: Vec::new(),
            agent: Some(AgentOf {
                issuer,
                spawn_pc: pc,
                exec,
                publishes,
                at,
            }),
            sites: Vec::new(),
            // An agent's reduction (`cp.reduce.async.bulk`) wraps as its
            // issuer's RMWs do.
            wrap_rmw: th.wrap_rmw,
        });
        id
    }

    /// The agent of execution `exec` of the asynchronous operation `instr`
    /// at `pc` of thread `t`.
    fn agent_for(&mut self, t: ThreadId, pc: usize, exec: usize, instr: &Instr) -> Pending {
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
                from: smallvec![AwaitPoint {
                    thread: t,
                    pc,
                    exec
                }],
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
        // A kernel's reduction wraps at the element's width as its issuer's
        // RMWs do (`Thread::wrap_rmw`): the access carries that width.
        let mut write = write;
        if let (Instr::Rmw { access, .. }, true) = (&mut write, self.src.threads[t].wrap_rmw) {
            access.ty = match *size {
                1 => Some(DataType::B8),
                2 => Some(DataType::B16),
                4 => Some(DataType::B32),
                _ => None,
            };
        }
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
        let whole = self.grouped.contains(&(t, pc));
        match completion {
            // Whole-copy completion: the group's completer completes the
            // bytes once every element copy of the group signals.
            Completion::Mbarrier(_) if whole => code.push((
                Instr::Signal {
                    kind: SignalKind::Done,
                },
                there,
            )),
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
        let agent = self.push_agent(t, pc, exec, code, Vec::new(), 1);
        let pending = Pending {
            agent,
            reads_done,
            done,
        };
        if whole {
            self.elements.insert((t, pc, exec), pending);
        }
        pending
    }

    /// Under whole-copy completion, the completers of execution `exec` of
    /// thread `t`'s copy groups whose element agents exist: once the issuer
    /// has issued the group's last element copy and every element copy has
    /// written, one `.release.cluster` complete-tx of the group's bytes that
    /// publishes the element copies' writes (as `cp.async.mbarrier.arrive`'s
    /// agent publishes its copies').
    fn completers(&mut self, t: ThreadId, exec: usize) {
        let here = self.src.threads[t].placement;
        let groups: Vec<crate::ir::copies::Group> = self
            .groups
            .iter()
            .filter(|g| g.thread == t)
            .cloned()
            .collect();
        for g in groups {
            let Some(agents) = g
                .pcs
                .iter()
                .map(|&pc| self.elements.get(&(t, pc, exec)).copied())
                .collect::<Option<Vec<Pending>>>()
            else {
                continue;
            };
            let (first, last) = (g.pcs[0], *g.pcs.last().unwrap());
            let Instr::AsyncCopy { dst, .. } = &self.src.threads[t].code[first] else {
                unreachable!("a copy group's pcs are copies")
            };
            let there = self.dest_placement(here, *dst);
            let mut from: SmallVec<[AwaitPoint; 2]> = smallvec![AwaitPoint {
                thread: t,
                pc: last,
                exec
            }];
            from.extend(agents.iter().map(|a| AwaitPoint::first(a.agent, a.done)));
            let code = vec![
                (Instr::Await { from }, there),
                (
                    Instr::Rmw {
                        dst: None,
                        op: RmwOp::MbarCompleteTx,
                        args: smallvec![Operand::Imm(g.bytes)],
                        access: access(g.bar, Proxy::Generic, Sem::Release, Some(Scope::Cluster)),
                    },
                    there,
                ),
            ];
            let id = self.push_agent(
                t,
                first,
                exec,
                code,
                agents.iter().map(|a| a.agent).collect(),
                1,
            );
            let issuer = &self.src.threads[t].name;
            self.out.threads[id].name = if exec == 0 {
                format!("{issuer}.complete@{first}")
            } else {
                format!("{issuer}.complete@{first}[{exec}]")
            };
        }
    }

    /// The agent of execution `exec` of `cp.async.mbarrier.arrive`: once the
    /// thread's earlier `cp.async` operations complete, an arrive that
    /// publishes their writes.
    fn mbarrier_arrive_agent(
        &mut self,
        t: ThreadId,
        pc: usize,
        exec: usize,
        bar: usize,
        tracked: &[Pending],
    ) {
        let here = self.src.threads[t].placement;
        let mut from: SmallVec<[AwaitPoint; 2]> = smallvec![AwaitPoint {
            thread: t,
            pc,
            exec
        }];
        from.extend(tracked.iter().map(|a| AwaitPoint::first(a.agent, a.done)));
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
        self.push_agent(
            t,
            pc,
            exec,
            code,
            tracked.iter().map(|a| a.agent).collect(),
            1,
        );
    }
}
