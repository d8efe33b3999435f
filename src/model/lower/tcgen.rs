//! Lowering the tensor-core instructions (`wgmma.*`, `tcgen05.*`) into
//! agents, awaits and loads (`docs/tensor-core.md`).
//!
//! Each asynchronous operation becomes an agent thread, as a TMA copy does
//! (`docs/async.md` §1), with one difference that is the point of these
//! instructions: the agent does **not** start after its issuing instruction.
//! It awaits only what orders it in the ISA:
//!
//! * `wgmma.mma_async`: the thread's last `wgmma.fence` before it, and the
//!   previous `wgmma.mma_async` into the same accumulator (they are pipelined);
//! * `tcgen05.mma` / `cp` / `ld` / `st`: the thread's last
//!   `tcgen05.fence::after_thread_sync` before it, the operations the thread
//!   completed with `tcgen05.wait::ld` / `wait::st` before it, and for an MMA
//!   the earlier `tcgen05.cp`s and MMAs into the same accumulator (pipelined
//!   pairs);
//! * `tcgen05.commit`: its issue and every earlier `tcgen05.mma` / `cp` of the
//!   thread; then an arrive (`.release.cluster`) that publishes only theirs.
//!
//! So an MMA issued after an mbarrier wait without
//! `tcgen05.fence::after_thread_sync` is not ordered after the wait, and may
//! read the shared memory (or write the tensor memory) of before it.
//!
//! Register results travel through a hidden location per operation: the agent
//! writes it, and the [`TcOp::Result`] loads after the wait that completes
//! the operation read it back.

use smallvec::{SmallVec, smallvec};

use super::{Lowering, access};
use crate::ir::tensor_core::{MMA_BASE, TcFence, TcOp};
use crate::ir::{
    ArithOp, AwaitPoint, Instr, Operand, Program, Proxy, RmwOp, Scope, Sem, SignalKind, ThreadId,
};
use crate::litmus::{Diagnostic, Span};

/// The tensor-core operations of a thread, by pc.
fn ops(code: &[Instr]) -> impl Iterator<Item = (usize, &TcOp)> {
    code.iter().enumerate().filter_map(|(pc, i)| match i {
        Instr::Tensor { op } => Some((pc, op)),
        _ => None,
    })
}

/// The committed groups of `wgmma.mma_async` before `pc`, oldest first.
fn wgmma_groups(code: &[Instr], pc: usize) -> Vec<Vec<usize>> {
    let mut groups = Vec::new();
    let mut open = Vec::new();
    for (q, op) in ops(&code[..pc]) {
        match op {
            TcOp::Wgmma { .. } => open.push(q),
            TcOp::WgmmaCommit => groups.push(std::mem::take(&mut open)),
            _ => {}
        }
    }
    groups
}

/// The `wgmma.mma_async` that a `wgmma.wait_group N` at `pc` waits for.
fn wgmma_waited(code: &[Instr], pc: usize, pending: u32) -> Vec<usize> {
    let groups = wgmma_groups(code, pc);
    let upto = groups.len().saturating_sub(pending as usize);
    groups[..upto].iter().flatten().copied().collect()
}

/// The `tcgen05.ld` (`ld`) or `tcgen05.st` a `tcgen05.wait::ld/st` at `pc`
/// waits for: those since the previous wait of its kind.
fn tc_waited(code: &[Instr], pc: usize, ld: bool) -> Vec<usize> {
    let mut since = Vec::new();
    for (q, op) in ops(&code[..pc]) {
        match op {
            TcOp::Ld { .. } if ld => since.push(q),
            TcOp::St { .. } if !ld => since.push(q),
            TcOp::Wait { ld: l } if *l == ld => since.clear(),
            _ => {}
        }
    }
    since
}

/// Reject what this lowering cannot express, pointing at the text.
pub(super) fn check(
    p: &Program,
    t: ThreadId,
    span: &dyn Fn(usize) -> Span,
) -> Result<(), Diagnostic> {
    let th = &p.threads[t];
    let Some((first, _)) = ops(&th.code).next() else {
        return Ok(());
    };
    let text = |pc: usize| crate::litmus::print::instr(p, th, &th.code[pc]);
    if let Some(b) = th
        .code
        .iter()
        .position(|i| matches!(i, Instr::Branch { .. }))
    {
        return Err(Diagnostic::expected(
            span(b),
            "straight-line code in a thread that issues tensor-core operations",
            format!("`{}`", text(b)),
        )
        .with_note(format!(
            "{} issues `{}`; which tensor-core operations a wait completes, and what orders \
             each, are laid out statically (docs/tensor-core.md)",
            th.name,
            text(first)
        )));
    }
    for (pc, op) in ops(&th.code) {
        match op {
            TcOp::Wgmma {
                dst,
                accumulate: true,
                ..
            } => {
                let chained = ops(&th.code[..pc])
                    .any(|(_, o)| matches!(o, TcOp::Wgmma { dst: d, .. } if d == dst));
                if !chained {
                    return Err(Diagnostic::expected(
                        span(pc),
                        "scale-d 0, or an earlier `wgmma.mma_async` into the same register",
                        "scale-d 1 onto a register value",
                    )
                    .with_note(
                        "the MMA runs apart from the thread and ptxmc does not pass register \
                         values to it: a first MMA starts from zero (scale-d 0)",
                    ));
                }
            }
            TcOp::Wgmma { .. } => {
                let waited = ops(&th.code[pc..]).any(|(q, o)| match o {
                    TcOp::WgmmaWait { pending } => {
                        wgmma_waited(&th.code, pc + q, *pending).contains(&pc)
                    }
                    _ => false,
                });
                if !waited {
                    return Err(Diagnostic::expected(
                        span(pc),
                        "a later `wgmma.commit_group` and `wgmma.wait_group` that complete it",
                        "none",
                    )
                    .with_label("its result never reaches the register")
                    .with_note("reading the accumulator before the wait is undefined (PTX ISA, wgmma.mma_async)"));
                }
            }
            TcOp::Ld { .. } => {
                let waited = ops(&th.code[pc..]).any(|(_, o)| matches!(o, TcOp::Wait { ld: true }));
                if !waited {
                    return Err(Diagnostic::expected(
                        span(pc),
                        "a later `tcgen05.wait::ld` that completes it",
                        "none",
                    )
                    .with_label("its result never reaches the register"));
                }
            }
            _ => {}
        }
    }
    // A register of a `tcgen05.ld` touched before its `tcgen05.wait::ld`.
    // Unlike `wgmma` (undefined, reported by the engines), the ISA defines a
    // read through the register dependency (§9.7.16.6.4.5: it is "respected
    // regardless of ... other forms of synchronization", with no memory
    // ordering), which this lowering, delivering the register at the wait,
    // does not model; for a write it does not say which value the register
    // keeps. Refused rather than read wrong (docs/tensor-core.md §3a).
    let mut one = crate::ir::tensor_core::early_accesses(p)
        .into_iter()
        .filter(|e| e.thread == t && !e.wgmma);
    if let Some(e) = one.next() {
        let reg = &th.regs[e.reg].name;
        let (found, note) = if e.write {
            (
                format!("a write of `{reg}` before the wait"),
                "the ISA does not say whether the register keeps this value or the load's",
            )
        } else {
            (
                format!("a read of `{reg}` before the wait"),
                "the ISA orders such a read after the load through the register dependency (PTX ISA \
                 9.7.16.6.4.5, \"Register dependencies, same thread\") but gives it no memory \
                 ordering; ptxmc delivers the register at the wait and does not model that",
            )
        };
        return Err(Diagnostic::expected(
            span(e.at),
            format!(
                "`{}` (instruction {}) before this access to `{reg}`, which `{}` (instruction {}) \
                 loads",
                text(e.wait),
                e.wait + 1,
                text(e.op),
                e.op + 1
            ),
            found,
        )
        .with_label("the `tcgen05.ld` is still pending here")
        .with_note(format!("{note}: move `tcgen05.wait::ld` before the access")));
    }
    Ok(())
}

/// An agent of a tensor-core operation: its thread and its completion point.
#[derive(Clone, Copy, Debug)]
pub(super) struct TcAgent {
    agent: ThreadId,
    done: usize,
    /// The hidden location holding its register result.
    hidden: Option<usize>,
}

impl TcAgent {
    fn done(&self) -> AwaitPoint {
        AwaitPoint::first(self.agent, self.done)
    }
}

impl Lowering<'_> {
    /// What orders an asynchronous tensor-core operation at `pc` of `t`
    /// (module documentation).
    fn tc_order(&self, t: ThreadId, pc: usize, op: &TcOp) -> SmallVec<[AwaitPoint; 2]> {
        let src = self.src;
        let code = &src.threads[t].code;
        let mut from: SmallVec<[AwaitPoint; 2]> = SmallVec::new();
        let wgmma = matches!(op, TcOp::Wgmma { .. });
        let fence = if wgmma {
            TcFence::Wgmma
        } else {
            TcFence::AfterThreadSync
        };
        if let Some((f, _)) = ops(&code[..pc])
            .filter(|(_, o)| matches!(o, TcOp::Fence { kind } if *kind == fence))
            .last()
        {
            from.push(AwaitPoint::first(t, f));
        }
        let agent = |q: usize| self.tc_agents[&(t, q)];
        if wgmma {
            let TcOp::Wgmma { dst, .. } = op else {
                unreachable!()
            };
            if let Some((q, _)) = ops(&code[..pc])
                .filter(|(_, o)| matches!(o, TcOp::Wgmma { dst: d, .. } if d == dst))
                .last()
            {
                from.push(agent(q).done());
            }
            return from;
        }
        // Operations completed by an earlier tcgen05.wait::ld / wait::st.
        for (w, o) in ops(&code[..pc]) {
            if let TcOp::Wait { ld } = o {
                for q in tc_waited(code, w, *ld) {
                    from.push(agent(q).done());
                }
            }
        }
        if let TcOp::Mma { d, .. } = op {
            // Pipelined pairs: cp → mma, mma → mma into the same accumulator.
            for (q, o) in ops(&code[..pc]) {
                match o {
                    TcOp::Cp { .. } => from.push(agent(q).done()),
                    TcOp::Mma { d: e, .. } if e == d => from.push(agent(q).done()),
                    _ => {}
                }
            }
        }
        from
    }

    /// Lower the tensor-core instruction `op` at `pc` of thread `t`
    /// (creating its agent if it has one); returns what the thread runs.
    pub(super) fn tensor(&mut self, t: ThreadId, pc: usize, op: &TcOp) -> Instr {
        let src = self.src;
        let code = &src.threads[t].code;
        let here = self.src.threads[t].placement;
        let name = self.src.threads[t].name.clone();
        let weak = |a: usize, proxy: Proxy| access(a, proxy, Sem::Weak, None);
        let signal = |kind| Instr::Signal { kind };
        match op {
            TcOp::Fence { .. } => signal(SignalKind::Issue),
            TcOp::WgmmaCommit => signal(SignalKind::Commit),
            TcOp::WgmmaWait { pending } => {
                let from: SmallVec<[AwaitPoint; 2]> = wgmma_waited(code, pc, *pending)
                    .into_iter()
                    .map(|q| self.tc_agents[&(t, q)].done())
                    .collect();
                Instr::Await { from }
            }
            TcOp::Wait { ld } => {
                let from: SmallVec<[AwaitPoint; 2]> = tc_waited(code, pc, *ld)
                    .into_iter()
                    .map(|q| self.tc_agents[&(t, q)].done())
                    .collect();
                Instr::Await { from }
            }
            TcOp::Result { dst, .. } => {
                // Which operation it delivers is worked out again from the
                // code, so a program edited by `fix` (instructions inserted
                // or removed, even between a wait and its results) stays
                // consistent: the k-th result after a wait is the k-th that
                // wait delivers.
                let wait = (0..pc).rev().find(|&q| {
                    matches!(
                        code[q],
                        Instr::Tensor {
                            op: TcOp::WgmmaWait { .. } | TcOp::Wait { ld: true }
                        }
                    )
                });
                let (delivered, k) = match wait.map(|q| (q, &code[q])) {
                    Some((q, Instr::Tensor { op: w })) => (
                        crate::ir::tensor_core::results_of_wait(&code[..q], w),
                        ops(&code[q + 1..pc])
                            .filter(|(_, o)| matches!(o, TcOp::Result { .. }))
                            .count(),
                    ),
                    _ => (Vec::new(), 0),
                };
                match delivered.get(k) {
                    Some(TcOp::Result { from, .. }) => {
                        let h = self.tc_agents[&(t, *from)]
                            .hidden
                            .expect("a result comes from an operation with a register result");
                        Instr::Load {
                            dst: *dst,
                            access: weak(h, Proxy::Generic),
                        }
                    }
                    // The operation is gone (an edited program): nothing arrives.
                    _ => signal(SignalKind::Done),
                }
            }
            TcOp::Commit { bar } => {
                let mut from: SmallVec<[AwaitPoint; 2]> = smallvec![AwaitPoint::first(t, pc)];
                let mut tracked = Vec::new();
                for (q, o) in ops(&code[..pc]) {
                    if matches!(o, TcOp::Mma { .. } | TcOp::Cp { .. }) {
                        let a = self.tc_agents[&(t, q)];
                        from.push(a.done());
                        tracked.push(a.agent);
                    }
                }
                let body = vec![
                    (Instr::Await { from }, here),
                    (
                        Instr::Rmw {
                            dst: None,
                            op: RmwOp::MbarArrive,
                            args: smallvec![Operand::Imm(1)],
                            access: access(
                                *bar,
                                Proxy::Generic,
                                Sem::Release,
                                Some(Scope::Cluster),
                            ),
                        },
                        here,
                    ),
                ];
                let agent = self.push_agent(t, pc, 0, body, tracked, 1);
                self.tc_agents.insert(
                    (t, pc),
                    TcAgent {
                        agent,
                        done: 1,
                        hidden: None,
                    },
                );
                signal(SignalKind::Issue)
            }
            TcOp::Wgmma { .. }
            | TcOp::Mma { .. }
            | TcOp::Cp { .. }
            | TcOp::Ld { .. }
            | TcOp::St { .. } => {
                let from = self.tc_order(t, pc, op);
                let mut body: Vec<(Instr, _)> = vec![(Instr::Await { from }, here)];
                let mut push = |i: Instr| body.push((i, here));
                let load = |dst: usize, a: usize, proxy: Proxy| Instr::Load {
                    dst,
                    access: weak(a, proxy),
                };
                let arith = |op, dst: usize, a: Operand, b: Operand| Instr::Arith { op, dst, a, b };
                // mma(d, a, b) = (d·B + a)·B + b over agent registers
                // v0 = a, v1 = b, v2 = d (or 0), result in v3.
                let mma = |push: &mut dyn FnMut(Instr)| {
                    push(arith(
                        ArithOp::Mul,
                        3,
                        Operand::Reg(2),
                        Operand::Imm(MMA_BASE),
                    ));
                    push(arith(ArithOp::Add, 3, Operand::Reg(3), Operand::Reg(0)));
                    push(arith(
                        ArithOp::Mul,
                        3,
                        Operand::Reg(3),
                        Operand::Imm(MMA_BASE),
                    ));
                    push(arith(ArithOp::Add, 3, Operand::Reg(3), Operand::Reg(1)));
                };
                let mut hidden = None;
                match op {
                    TcOp::Wgmma {
                        dst,
                        a,
                        b,
                        accumulate,
                    } => {
                        push(load(0, *a, Proxy::Async));
                        push(load(1, *b, Proxy::Async));
                        if *accumulate {
                            let (q, _) = ops(&code[..pc])
                                .filter(
                                    |(_, o)| matches!(o, TcOp::Wgmma { dst: d, .. } if d == dst),
                                )
                                .last()
                                .expect("model::lower::check admits only chained accumulation");
                            let prev = self.tc_agents[&(t, q)].hidden.unwrap();
                            push(load(2, prev, Proxy::Generic));
                        }
                        mma(&mut push);
                        let h = self.hidden(format!("%wgmma_{name}_{pc}"), 0);
                        push(Instr::Store {
                            src: Operand::Reg(3),
                            access: weak(h, Proxy::Generic),
                        });
                        hidden = Some(h);
                    }
                    TcOp::Mma {
                        d,
                        a,
                        b,
                        accumulate,
                    } => {
                        push(load(0, *a, Proxy::Async));
                        push(load(1, *b, Proxy::Async));
                        if *accumulate {
                            push(load(2, *d, Proxy::Async));
                        }
                        mma(&mut push);
                        push(Instr::Store {
                            src: Operand::Reg(3),
                            access: weak(*d, Proxy::Async),
                        });
                    }
                    TcOp::Cp { d, src } => {
                        push(load(0, *src, Proxy::Async));
                        push(Instr::Store {
                            src: Operand::Reg(0),
                            access: weak(*d, Proxy::Async),
                        });
                    }
                    TcOp::Ld { src, .. } => {
                        push(load(0, *src, Proxy::Async));
                        let h = self.hidden(format!("%tcgen05_ld_{name}_{pc}"), 0);
                        push(Instr::Store {
                            src: Operand::Reg(0),
                            access: weak(h, Proxy::Generic),
                        });
                        hidden = Some(h);
                    }
                    TcOp::St { dst, value } => push(Instr::Store {
                        src: Operand::Imm(*value),
                        access: weak(*dst, Proxy::Async),
                    }),
                    _ => unreachable!(),
                }
                if matches!(op, TcOp::Wgmma { .. } | TcOp::Mma { .. } | TcOp::Cp { .. }) {
                    // The operation's completion includes its operand reads:
                    // a generic write after the wait that completes it cannot
                    // flow back into them (our choice, as for a bulk copy's
                    // reads, docs/async.md §3; docs/tensor-core.md §3).
                    body.push((
                        Instr::ProxyFence {
                            kind: crate::ir::ProxyFenceKind::Async(None),
                        },
                        here,
                    ));
                }
                let done = body.len();
                body.push((signal(SignalKind::Done), here));
                // Registers v0 = a, v1 = b, v2 = d, v3 = the result.
                let agent = self.push_agent(t, pc, 0, body, Vec::new(), 4);
                self.tc_agents.insert(
                    (t, pc),
                    TcAgent {
                        agent,
                        done,
                        hidden,
                    },
                );
                signal(SignalKind::Issue)
            }
        }
    }
}
