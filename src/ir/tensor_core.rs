//! Tensor-core instructions as the memory model sees them: Hopper's
//! `wgmma` and Blackwell's `tcgen05` (`docs/tensor-core.md`).
//!
//! Only what reaches memory is kept: which locations an operation reads and
//! writes, through which path, and what orders it. The arithmetic is opaque:
//! an MMA's result is [`mma`] of the values it read, an injective encoding for
//! small values, so an operand read stale shows as a different result.
//!
//! These instructions never reach an engine: `model::lower` turns each
//! asynchronous one into an agent thread, waits into awaits, and each
//! [`TcOp::Result`] into a load of the hidden location its operation wrote.

use serde::{Deserialize, Serialize};

use super::{AddrId, RegId, Value};

/// The factor of [`mma`]'s encoding: results of operands in `0..MMA_BASE`
/// are told apart.
pub const MMA_BASE: Value = 1000;

/// The opaque result of a matrix multiply-accumulate that read `a` and `b`
/// (and, when it accumulates, the old accumulator `d`; else `d` is 0):
/// `(d·1000 + a)·1000 + b`, wrapping. Deterministic, and different for
/// different operands below 1000, which is all a memory model needs.
pub fn mma(d: Value, a: Value, b: Value) -> Value {
    d.wrapping_mul(MMA_BASE)
        .wrapping_add(a)
        .wrapping_mul(MMA_BASE)
        .wrapping_add(b)
}

/// Which tensor-core fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TcFence {
    /// `wgmma.fence.sync.aligned`: later `wgmma.mma_async` are ordered after
    /// the thread's earlier accesses.
    Wgmma,
    /// `tcgen05.fence::after_thread_sync`: later asynchronous tcgen05
    /// operations are ordered after the thread's earlier instructions (and
    /// so after a thread synchronisation they follow).
    AfterThreadSync,
    /// `tcgen05.fence::before_thread_sync`: earlier asynchronous tcgen05
    /// operations are ordered before a later thread synchronisation. Every
    /// ordering it gives is, in our model, already given by the completion
    /// mechanism the ISA requires with it (`docs/tensor-core.md` §4).
    BeforeThreadSync,
}

/// One tensor-core instruction ([`super::Instr::Tensor`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum TcOp {
    /// A fence.
    Fence {
        /// Which.
        kind: TcFence,
    },
    /// `wgmma.mma_async d, [a], [b], scale_d`: reads shared-memory `a` and
    /// `b` through the async proxy; `d` gets [`mma`] of them at the
    /// `wgmma.wait_group` that completes it.
    Wgmma {
        /// The accumulator register.
        dst: RegId,
        /// Shared-memory operand A (a descriptor, named by its location).
        a: AddrId,
        /// Shared-memory operand B.
        b: AddrId,
        /// `scale-d` = 1: accumulate onto the previous `wgmma` into `dst`.
        accumulate: bool,
    },
    /// `wgmma.commit_group.sync.aligned`.
    WgmmaCommit,
    /// `wgmma.wait_group.sync.aligned N`.
    WgmmaWait {
        /// How many of the most recent groups may still be pending.
        pending: u32,
    },
    /// `tcgen05.mma [d], [a], [b], idesc, enable_input_d`: reads
    /// shared-memory `a`, `b` (async proxy), and with `enable_input_d` the
    /// tensor memory `d`, and writes [`mma`] of them to `d`.
    Mma {
        /// Tensor-memory accumulator.
        d: AddrId,
        /// Shared-memory operand A.
        a: AddrId,
        /// Shared-memory operand B.
        b: AddrId,
        /// `enable_input_d`: accumulate onto `d`'s value.
        accumulate: bool,
    },
    /// `tcgen05.cp [d], [s]`: copies shared memory `s` into tensor memory `d`.
    Cp {
        /// Tensor-memory destination.
        d: AddrId,
        /// Shared-memory source.
        src: AddrId,
    },
    /// `tcgen05.ld r, [t]`: reads tensor memory; `r` gets the value at the
    /// `tcgen05.wait::ld` that completes it.
    Ld {
        /// The destination register.
        dst: RegId,
        /// Tensor-memory source.
        src: AddrId,
    },
    /// `tcgen05.st [t], v`: writes tensor memory, complete at `tcgen05.wait::st`.
    St {
        /// Tensor-memory destination.
        dst: AddrId,
        /// The value (an immediate: the operation runs apart from the thread).
        value: Value,
    },
    /// `tcgen05.wait::ld` (`ld`) or `tcgen05.wait::st`.
    Wait {
        /// `wait::ld` (else `wait::st`).
        ld: bool,
    },
    /// `tcgen05.commit [bar]`: an arrive on `bar` once the thread's earlier
    /// asynchronous tcgen05 operations (`mma`, `cp`) complete.
    Commit {
        /// The mbarrier.
        bar: AddrId,
    },
    /// Not written: the register result of the operation at `from` (a
    /// `wgmma.mma_async` or `tcgen05.ld`), delivered by the wait it follows.
    /// The parsers add one after each wait per result it completes.
    Result {
        /// The register.
        dst: RegId,
        /// The pc of the operation.
        from: usize,
    },
}

impl TcOp {
    /// Whether the operation runs apart from the thread (an agent).
    pub fn is_async(&self) -> bool {
        matches!(
            self,
            TcOp::Wgmma { .. }
                | TcOp::Mma { .. }
                | TcOp::Cp { .. }
                | TcOp::Ld { .. }
                | TcOp::St { .. }
                | TcOp::Commit { .. }
        )
    }
    /// The addresses it names.
    pub fn addrs(&self) -> Vec<AddrId> {
        match self {
            TcOp::Wgmma { a, b, .. } => vec![*a, *b],
            TcOp::Mma { d, a, b, .. } => vec![*d, *a, *b],
            TcOp::Cp { d, src } => vec![*d, *src],
            TcOp::Ld { src, .. } => vec![*src],
            TcOp::St { dst, .. } => vec![*dst],
            TcOp::Commit { bar } => vec![*bar],
            _ => Vec::new(),
        }
    }
}

/// The results a wait at the end of `code` delivers: for `wgmma.wait_group
/// N`, the `wgmma.mma_async` of every committed group but the `N` most
/// recent (the last into each register); for `tcgen05.wait::ld`, every
/// `tcgen05.ld` since the previous one. Straight-line code (the lowering
/// refuses branches around tensor-core operations), so positions decide.
pub fn results_of_wait(code: &[super::Instr], wait: &TcOp) -> Vec<TcOp> {
    use super::Instr;
    let ops = code.iter().enumerate().filter_map(|(pc, i)| match i {
        Instr::Tensor { op } => Some((pc, op)),
        _ => None,
    });
    let mut out: Vec<TcOp> = Vec::new();
    match wait {
        TcOp::Wait { ld: true } => {
            let mut since = Vec::new();
            for (pc, op) in ops {
                match op {
                    TcOp::Ld { dst, .. } => since.push(TcOp::Result {
                        dst: *dst,
                        from: pc,
                    }),
                    TcOp::Wait { ld: true } => since.clear(),
                    _ => {}
                }
            }
            out = since;
        }
        TcOp::WgmmaWait { pending } => {
            // Groups: committed lists of wgmma pcs; a wgmma that an earlier
            // wait completed is not delivered again (worked out from the
            // waits, not from the results, so an edited program agrees).
            let mut groups: Vec<Vec<(usize, RegId)>> = Vec::new();
            let mut open: Vec<(usize, RegId)> = Vec::new();
            let mut delivered: Vec<usize> = Vec::new();
            for (pc, op) in ops {
                match op {
                    TcOp::Wgmma { dst, .. } => open.push((pc, *dst)),
                    TcOp::WgmmaCommit => groups.push(std::mem::take(&mut open)),
                    TcOp::WgmmaWait { pending } => {
                        let upto = groups.len().saturating_sub(*pending as usize);
                        delivered.extend(groups[..upto].iter().flatten().map(|&(q, _)| q));
                    }
                    _ => {}
                }
            }
            let upto = groups.len().saturating_sub(*pending as usize);
            let mut last: Vec<(usize, RegId)> = Vec::new();
            for &(pc, dst) in groups[..upto].iter().flatten() {
                if delivered.contains(&pc) {
                    continue;
                }
                last.retain(|&(_, d)| d != dst);
                last.push((pc, dst));
            }
            out = last
                .into_iter()
                .map(|(from, dst)| TcOp::Result { dst, from })
                .collect();
        }
        _ => {}
    }
    out
}

/// The `wgmma.wait_group` after `m` that completes the `wgmma.mma_async`
/// at `m` (the first whose committed groups, all but its `N` most recent,
/// include it), or the `tcgen05.wait::ld` after the `tcgen05.ld` at `m`.
/// Straight-line code, as [`results_of_wait`].
pub fn completing_wait(code: &[super::Instr], m: usize) -> Option<usize> {
    use super::Instr;
    let op = |q: usize| match &code[q] {
        Instr::Tensor { op } => Some(op),
        _ => None,
    };
    match op(m)? {
        TcOp::Ld { .. } => {
            (m + 1..code.len()).find(|&q| matches!(op(q), Some(TcOp::Wait { ld: true })))
        }
        TcOp::Wgmma { .. } => (m + 1..code.len()).find(|&q| {
            let Some(TcOp::WgmmaWait { pending }) = op(q) else {
                return false;
            };
            let mut groups: Vec<Vec<usize>> = Vec::new();
            let mut open = Vec::new();
            for r in 0..q {
                match op(r) {
                    Some(TcOp::Wgmma { .. }) => open.push(r),
                    Some(TcOp::WgmmaCommit) => groups.push(std::mem::take(&mut open)),
                    _ => {}
                }
            }
            let upto = groups.len().saturating_sub(*pending as usize);
            groups[..upto].iter().flatten().any(|&r| r == m)
        }),
        _ => None,
    }
}

/// An instruction of a thread that reads or writes a register while an
/// asynchronous operation that writes it (a `wgmma.mma_async`'s accumulator,
/// a `tcgen05.ld`'s destination) is pending: after the operation and before
/// the wait that completes it (`docs/tensor-core.md` §3a). Found statically
/// ([`early_accesses`]): a thread that issues tensor-core operations is
/// straight-line code, so the access happens in exactly the executions in
/// which the thread gets past it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EarlyAccess {
    /// The thread.
    pub thread: super::ThreadId,
    /// The asynchronous operation's pc.
    pub op: usize,
    /// The accessing instruction's pc.
    pub at: usize,
    /// The pc of the wait that completes the operation (later than `at`).
    pub wait: usize,
    /// The register.
    pub reg: RegId,
    /// The access writes the register (and does not read it).
    pub write: bool,
    /// The operation is a `wgmma.mma_async` (else a `tcgen05.ld`).
    pub wgmma: bool,
}

/// A thread that executes a warpgroup instruction (`wgmma.fence`,
/// `wgmma.mma_async`, `wgmma.commit_group`, `wgmma.wait_group`, all
/// `.sync.aligned`) that the other threads of its warpgroup — the four warps
/// `4w … 4w+3` of its CTA — do not all execute with it: the launch gives the
/// warpgroup fewer than 128 threads, or its threads' sequences of warpgroup
/// instructions differ. Undefined (ISA §9.7.15.5.2 `wgmma.mma_async`: "all
/// threads in the warpgroup must execute the same wgmma.mma_async
/// instruction"; the same `.aligned` rule on each `wgmma.*` page); an H200
/// stops such a launch with "an illegal instruction was encountered"
/// (`docs/hardware-results.md`). Found by the kernel front end, which knows
/// the launch (`src/ptx/lower.rs`); a litmus thread stands for its whole
/// warpgroup (`docs/tensor-core.md` §5a), so a litmus test has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ShortWarpgroup {
    /// The thread.
    pub thread: super::ThreadId,
    /// The pc of its first warpgroup instruction that the warpgroup does
    /// not execute together.
    pub at: usize,
    /// The warpgroup's number in its CTA (`linear thread id / 128`).
    pub warpgroup: u32,
    /// How many threads of the warpgroup the launch has (128 when the
    /// warpgroup is complete and its threads' instructions differ).
    pub present: u32,
}

/// Whether `op` is one of the warpgroup-collective `wgmma.*` instructions.
pub fn is_warpgroup_op(op: &TcOp) -> bool {
    matches!(
        op,
        TcOp::Fence {
            kind: TcFence::Wgmma
        } | TcOp::Wgmma { .. }
            | TcOp::WgmmaCommit
            | TcOp::WgmmaWait { .. }
    )
}

/// One thread of a launch as [`short_warpgroups`] sees it (thread `t` of
/// the program is the `t`-th member).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpgroupMember {
    /// Its CTA.
    pub cta: u32,
    /// Its linear thread id in the CTA.
    pub linear: u32,
    /// Its warpgroup instructions in order: (pc, a name of the instruction
    /// that is the same for every thread executing the same one).
    pub sequence: Vec<(usize, usize)>,
}

/// The [`ShortWarpgroup`]s of a launch of `block` threads a CTA: each
/// thread's warpgroup instructions must be the same sequence as every other
/// thread's of its warpgroup (the threads `128w … 128w+127` of its CTA), and
/// the launch must have all 128. Threads that issue tensor-core
/// instructions are straight-line code (`ptx::lower::tensor_core`), so the
/// sequence a thread executes is the one its code lists; the first place it
/// parts from the others is its undefined step (short of threads, its first
/// warpgroup instruction). In (thread, pc) order.
pub fn short_warpgroups(members: &[WarpgroupMember], block: u32) -> Vec<ShortWarpgroup> {
    let mut groups: std::collections::BTreeMap<(u32, u32), Vec<usize>> = Default::default();
    for (t, m) in members.iter().enumerate() {
        groups.entry((m.cta, m.linear / 128)).or_default().push(t);
    }
    let mut out = Vec::new();
    for ((_, w), threads) in groups {
        let seqs: Vec<&Vec<(usize, usize)>> =
            threads.iter().map(|&t| &members[t].sequence).collect();
        if seqs.iter().all(|s| s.is_empty()) {
            continue;
        }
        let present = block.saturating_sub(128 * w).min(128);
        for (&t, seq) in threads.iter().zip(&seqs) {
            let first = if present == 128 {
                seq.iter().enumerate().find(|&(k, &(_, name))| {
                    seqs.iter().any(|o| o.get(k).map(|x| x.1) != Some(name))
                })
            } else {
                seq.iter().enumerate().next()
            };
            if let Some((_, &(pc, _))) = first {
                out.push(ShortWarpgroup {
                    thread: t,
                    at: pc,
                    warpgroup: w,
                    present,
                });
            }
        }
    }
    out.sort_by_key(|s| (s.thread, s.at));
    out
}

/// Every [`EarlyAccess`] of the source threads of `p` (as written: tensor
/// instructions not lowered yet), in (thread, pc) order; for an access while
/// several operations into its register are pending, the most recent one.
/// Not accesses: the results a wait delivers ([`TcOp::Result`]), and a later
/// `wgmma.mma_async` into the same accumulator (the ISA orders accumulator
/// accesses across `wgmma.mma_async`s of one shape by default, §9.7.15.7.1
/// `wgmma.fence`).
pub fn early_accesses(p: &super::Program) -> Vec<EarlyAccess> {
    use super::Instr;
    let mut out: Vec<EarlyAccess> = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        if th.agent.is_some() {
            continue;
        }
        let code = &th.code;
        for (m, i) in code.iter().enumerate() {
            let (reg, wgmma) = match i {
                Instr::Tensor {
                    op: TcOp::Wgmma { dst, .. },
                } => (*dst, true),
                Instr::Tensor {
                    op: TcOp::Ld { dst, .. },
                } => (*dst, false),
                _ => continue,
            };
            let Some(wait) = completing_wait(code, m) else {
                continue;
            };
            for (at, j) in code.iter().enumerate().take(wait).skip(m + 1) {
                let write = match j {
                    Instr::Tensor {
                        op: TcOp::Result { .. },
                    } => continue,
                    Instr::Tensor {
                        op: TcOp::Wgmma { dst, .. },
                    } if wgmma && *dst == reg => continue,
                    Instr::Tensor {
                        op: TcOp::Wgmma { dst, .. } | TcOp::Ld { dst, .. },
                    } => *dst == reg,
                    j => j.def() == Some(reg),
                };
                let read = j.uses().contains(&reg);
                if !(read || write) {
                    continue;
                }
                let e = EarlyAccess {
                    thread: t,
                    op: m,
                    at,
                    wait,
                    reg,
                    write: !read,
                    wgmma,
                };
                match out.iter_mut().find(|o| o.thread == t && o.at == at) {
                    Some(o) if o.op < m => *o = e,
                    Some(_) => {}
                    None => out.push(e),
                }
            }
        }
    }
    out.sort_by_key(|e| (e.thread, e.at));
    out
}

/// A `wgmma.mma_async` issued where PTX ISA §9.7.15.7.1 (`wgmma.fence`)
/// requires a `wgmma.fence` and the thread has none (`docs/tensor-core.md`
/// §3b): *"The wgmma.fence instruction must be issued by all warps of the
/// warpgroup at the following locations: Before the first wgmma.mma_async
/// operation in a warpgroup. Between a register access by a thread in the
/// warpgroup and any wgmma.mma_async instruction that accesses the same
/// registers, either as accumulator or input register containing fragments
/// of matrix A, except when these are accumulator register accesses across
/// multiple wgmma.mma_async instructions of the same shape. ... Otherwise,
/// the behavior is undefined."* Found statically ([`unfenced`]), like
/// [`EarlyAccess`]: the thread is straight-line code, so the MMA is issued
/// in exactly the executions in which the thread gets past it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Unfenced {
    /// The thread.
    pub thread: super::ThreadId,
    /// The `wgmma.mma_async`'s pc.
    pub mma: usize,
    /// The pc of the thread's access to the MMA's accumulator with no
    /// `wgmma.fence` between it and the MMA; `None` when the MMA is the
    /// thread's first and no `wgmma.fence` comes before it.
    pub access: Option<usize>,
    /// The accumulator register.
    pub reg: RegId,
    /// The access writes the register (and does not read it).
    pub write: bool,
}

/// Every [`Unfenced`] `wgmma.mma_async` of the source threads of `p` (as
/// written: tensor instructions not lowered yet), in (thread, pc) order; for
/// an MMA after several unfenced accesses, the first of them. Not accesses
/// by the thread: the results a wait delivers ([`TcOp::Result`], the
/// earlier MMA's own write) and an earlier `wgmma.mma_async` into the same
/// accumulator (the ISA's exception for MMAs of one shape; the dialect keeps
/// no shape, so every `wgmma.mma_async` is of one shape, and the kernel
/// front end checks shapes itself). Matrix A in registers is refused by both
/// front ends, so only the accumulator is checked.
pub fn unfenced(p: &super::Program) -> Vec<Unfenced> {
    use super::Instr;
    let fence = |i: &Instr| {
        matches!(
            i,
            Instr::Tensor {
                op: TcOp::Fence {
                    kind: TcFence::Wgmma
                }
            }
        )
    };
    let mut out = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        if th.agent.is_some() {
            continue;
        }
        let code = &th.code;
        let mut first = true;
        for (m, i) in code.iter().enumerate() {
            let Instr::Tensor {
                op: TcOp::Wgmma { dst: reg, .. },
            } = i
            else {
                continue;
            };
            let reg = *reg;
            let last_fence = code[..m].iter().rposition(fence);
            if first && last_fence.is_none() {
                out.push(Unfenced {
                    thread: t,
                    mma: m,
                    access: None,
                    reg,
                    write: false,
                });
                first = false;
                continue;
            }
            first = false;
            let from = last_fence.map_or(0, |f| f + 1);
            for (at, j) in code.iter().enumerate().take(m).skip(from) {
                let write = match j {
                    Instr::Tensor {
                        op: TcOp::Result { .. },
                    } => continue,
                    Instr::Tensor {
                        op: TcOp::Wgmma { dst, .. },
                    } if *dst == reg => continue,
                    Instr::Tensor {
                        op: TcOp::Wgmma { dst, .. } | TcOp::Ld { dst, .. },
                    } => *dst == reg,
                    j => j.def() == Some(reg),
                };
                let read = j.uses().contains(&reg);
                if read || write {
                    out.push(Unfenced {
                        thread: t,
                        mma: m,
                        access: Some(at),
                        reg,
                        write: !read,
                    });
                    break;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    fn member(cta: u32, linear: u32, names: &[usize]) -> WarpgroupMember {
        WarpgroupMember {
            cta,
            linear,
            sequence: names
                .iter()
                .enumerate()
                .map(|(k, &n)| (10 + k, n))
                .collect(),
        }
    }

    #[test]
    fn a_whole_warpgroup_that_agrees_is_not_short_and_one_that_parts_is_at_the_parting() {
        // 128 threads of one CTA: all execute instructions 1, 2, 3.
        let mut m: Vec<WarpgroupMember> = (0..128).map(|l| member(0, l, &[1, 2, 3])).collect();
        assert!(short_warpgroups(&m, 128).is_empty());
        // Threads 0..63 skip instruction 2: each parts at its second one.
        for x in &mut m[..64] {
            *x = member(0, x.linear, &[1, 3]);
        }
        let s = short_warpgroups(&m, 128);
        assert_eq!(s.len(), 128);
        assert!(
            s.iter()
                .all(|w| w.at == 11 && w.present == 128 && w.warpgroup == 0)
        );
        // A second CTA, whole and agreeing, adds nothing.
        m.extend((0..128).map(|l| member(1, l, &[1, 2, 3])));
        assert_eq!(short_warpgroups(&m, 128).len(), 128);
    }

    #[test]
    fn a_warpgroup_short_of_threads_is_short_at_each_threads_first_instruction() {
        let m: Vec<WarpgroupMember> = (0..160)
            .map(|l| member(0, l, if l % 2 == 0 { &[4, 5] } else { &[] }))
            .collect();
        let s = short_warpgroups(&m, 160);
        // Warpgroup 0 is whole but half its threads execute nothing.
        assert!(
            s.iter()
                .filter(|w| w.warpgroup == 0)
                .all(|w| w.at == 10 && w.present == 128)
        );
        assert_eq!(s.iter().filter(|w| w.warpgroup == 0).count(), 64);
        // Warpgroup 1 has 32 threads: its 16 issuing threads are short.
        let w1: Vec<_> = s.iter().filter(|w| w.warpgroup == 1).collect();
        assert_eq!(w1.len(), 16);
        assert!(
            w1.iter()
                .all(|w| w.present == 32 && w.at == 10 && w.thread >= 128)
        );
        // A warpgroup where nobody issues anything is never short.
        let idle: Vec<WarpgroupMember> = (0..8).map(|l| member(0, l, &[])).collect();
        assert!(short_warpgroups(&idle, 8).is_empty());
    }

    use super::*;

    #[test]
    fn mma_tells_operands_apart() {
        assert_eq!(mma(0, 5, 7), 5007);
        assert_eq!(mma(5007, 5, 7), 5_007_005_007);
        assert_ne!(mma(0, 0, 7), mma(0, 5, 7));
    }
}
