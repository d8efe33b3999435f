//! Instructions of the program IR and their attributes (semantics, scope, proxy).

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::fmt;

use super::{AddrId, RegId, Value};

/// Memory-ordering semantics written on an access (PTX `.sem`).
///
/// `Volatile` is kept apart from `Relaxed` so that printers and the hardware
/// harness can write the instruction back as it was; the engines treat it as
/// `.relaxed.sys` (digest §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sem {
    /// `.weak` (or nothing written on `ld`/`st`): not strong, carries no scope.
    Weak,
    /// `.relaxed`: strong, no ordering of its own.
    Relaxed,
    /// `.acquire`.
    Acquire,
    /// `.release`.
    Release,
    /// `.acq_rel` (RMWs only).
    AcqRel,
    /// `.volatile`: equivalent to `.relaxed.sys` for the memory model.
    Volatile,
}

impl Sem {
    /// Strong operations take part in moral strength across threads (digest §2.1).
    pub fn is_strong(self) -> bool {
        self != Sem::Weak
    }
    /// Whether this access has acquire semantics (before any RMW-specific rule).
    pub fn is_acquire(self) -> bool {
        matches!(self, Sem::Acquire | Sem::AcqRel)
    }
    /// Whether this access has release semantics.
    pub fn is_release(self) -> bool {
        matches!(self, Sem::Release | Sem::AcqRel)
    }
    /// The PTX spelling, without the leading dot.
    pub fn as_str(self) -> &'static str {
        match self {
            Sem::Weak => "weak",
            Sem::Relaxed => "relaxed",
            Sem::Acquire => "acquire",
            Sem::Release => "release",
            Sem::AcqRel => "acq_rel",
            Sem::Volatile => "volatile",
        }
    }
}

impl fmt::Display for Sem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A memory-model scope (PTX `.scope`): the set of threads an operation is
/// strong with respect to. Ordered from narrowest to widest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The executing thread's CTA.
    Cta,
    /// The executing thread's cluster.
    Cluster,
    /// The executing thread's GPU.
    Gpu,
    /// Every thread of the program.
    Sys,
}

impl Scope {
    /// All scopes, narrowest first.
    pub const ALL: [Scope; 4] = [Scope::Cta, Scope::Cluster, Scope::Gpu, Scope::Sys];
    /// The PTX spelling, without the leading dot.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The path a memory access takes (digest §1.4). Virtual aliases use the
/// generic proxy; they are told apart by their virtual address, not here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Proxy {
    /// Ordinary `ld`/`st`/`atom`/`red`.
    Generic,
    /// Texture fetches (`tld`).
    Texture,
    /// Surface accesses (`suld`, `sust`, `suatom`, `sured`).
    Surface,
    /// Constant-cache loads (`cold`, `ldc`, `ld.const`).
    Constant,
}

impl Proxy {
    /// All proxies, generic first.
    pub const ALL: [Proxy; 4] = [
        Proxy::Generic,
        Proxy::Texture,
        Proxy::Surface,
        Proxy::Constant,
    ];
    /// Lower-case name used in text and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Proxy::Generic => "generic",
            Proxy::Texture => "texture",
            Proxy::Surface => "surface",
            Proxy::Constant => "constant",
        }
    }
}

impl fmt::Display for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A register or an immediate value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operand {
    /// The current value of a register of the executing thread.
    Reg(RegId),
    /// A constant.
    Imm(Value),
}

/// The memory side of a load, store or RMW: where, through which path, how strong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Access {
    /// The virtual address named by the instruction.
    pub addr: AddrId,
    /// The proxy the access uses (fixed by the mnemonic: `ld` generic, `tld` texture ...).
    pub proxy: Proxy,
    /// Ordering semantics.
    pub sem: Sem,
    /// Scope; `Some` iff `sem` is strong (IR invariant).
    pub scope: Option<Scope>,
}

/// Read-modify-write operations of `atom` and `red`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RmwOp {
    /// `old + a`
    Add,
    /// `old - a`
    Sub,
    /// `a` (the written value does not depend on `old`)
    Exch,
    /// `old == a ? b : old` (a failed CAS still writes `old`, digest §3.1)
    Cas,
    /// `old >= a ? 0 : old + 1`
    Inc,
    /// `(old == 0 || old > a) ? a : old - 1`
    Dec,
    /// `old & a`
    And,
    /// `old | a`
    Or,
    /// `old ^ a`
    Xor,
    /// `min(old, a)` (signed)
    Min,
    /// `max(old, a)` (signed)
    Max,
}

impl RmwOp {
    /// The PTX spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RmwOp::Add => "add",
            RmwOp::Sub => "sub",
            RmwOp::Exch => "exch",
            RmwOp::Cas => "cas",
            RmwOp::Inc => "inc",
            RmwOp::Dec => "dec",
            RmwOp::And => "and",
            RmwOp::Or => "or",
            RmwOp::Xor => "xor",
            RmwOp::Min => "min",
            RmwOp::Max => "max",
        }
    }
    /// Number of value operands after the address.
    pub fn arity(self) -> usize {
        if self == RmwOp::Cas { 2 } else { 1 }
    }
    /// Whether the written value is computed from the value read. This decides
    /// whether the RMW's write depends on its read (digest §3.1: we follow Dat3M,
    /// `exch` carries no dependency).
    pub fn write_depends_on_read(self) -> bool {
        self != RmwOp::Exch
    }
    /// The value written, given the old value and the operands.
    pub fn apply(self, old: Value, args: &[Value]) -> Value {
        let a = args[0];
        match self {
            RmwOp::Add => old.wrapping_add(a),
            RmwOp::Sub => old.wrapping_sub(a),
            RmwOp::Exch => a,
            RmwOp::Cas => {
                if old == a {
                    args[1]
                } else {
                    old
                }
            }
            RmwOp::Inc => {
                if old >= a {
                    0
                } else {
                    old.wrapping_add(1)
                }
            }
            RmwOp::Dec => {
                if old == 0 || old > a {
                    a
                } else {
                    old - 1
                }
            }
            RmwOp::And => old & a,
            RmwOp::Or => old | a,
            RmwOp::Xor => old ^ a,
            RmwOp::Min => old.min(a),
            RmwOp::Max => old.max(a),
        }
    }
}

/// The ordering kind of a thread fence (`fence.sem.scope`, `membar`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FenceSem {
    /// `fence.sc` (also `membar`): joins the Fence-SC order; acts as release and acquire.
    Sc,
    /// `fence.acq_rel` (the default `fence.scope`).
    AcqRel,
    /// `fence.acquire` (PTX 8.6).
    Acquire,
    /// `fence.release` (PTX 8.6).
    Release,
}

impl FenceSem {
    /// The PTX spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            FenceSem::Sc => "sc",
            FenceSem::AcqRel => "acq_rel",
            FenceSem::Acquire => "acquire",
            FenceSem::Release => "release",
        }
    }
    /// Can head a release pattern (digest §3.4, `Frel`).
    pub fn releases(self) -> bool {
        !matches!(self, FenceSem::Acquire)
    }
    /// Can end an acquire pattern (digest §3.4, `Facq`).
    pub fn acquires(self) -> bool {
        !matches!(self, FenceSem::Release)
    }
}

/// Which non-generic path a bi-directional proxy fence reconciles with the generic one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProxyFenceKind {
    /// `fence.proxy.alias`: makes virtual aliases of one location agree.
    Alias,
    /// `fence.proxy.texture` (ISCA'22, hypothetical in PTX).
    Texture,
    /// `fence.proxy.surface` (ISCA'22, hypothetical in PTX).
    Surface,
    /// `fence.proxy.constant` (ISCA'22 Fig. 8, hypothetical in PTX).
    Constant,
}

impl ProxyFenceKind {
    /// The PTX spelling after `fence.proxy.`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyFenceKind::Alias => "alias",
            ProxyFenceKind::Texture => "texture",
            ProxyFenceKind::Surface => "surface",
            ProxyFenceKind::Constant => "constant",
        }
    }
    /// The non-generic proxy this fence pairs with the generic one (`None` for alias fences).
    pub fn proxy(self) -> Option<Proxy> {
        match self {
            ProxyFenceKind::Alias => None,
            ProxyFenceKind::Texture => Some(Proxy::Texture),
            ProxyFenceKind::Surface => Some(Proxy::Surface),
            ProxyFenceKind::Constant => Some(Proxy::Constant),
        }
    }
}

/// `bar.cta.sync` waits for the barrier; `bar.cta.arrive` only signals it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BarrierKind {
    /// `bar.sync` / `barrier.sync`: arrive, then wait for completion.
    Sync,
    /// `bar.arrive`: arrive without waiting.
    Arrive,
}

/// Arithmetic of register-only instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArithOp {
    /// `add`
    Add,
    /// `sub`
    Sub,
    /// `mul` (low half)
    Mul,
    /// `and`
    And,
    /// `or`
    Or,
    /// `xor`
    Xor,
}

impl ArithOp {
    /// The PTX spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ArithOp::Add => "add",
            ArithOp::Sub => "sub",
            ArithOp::Mul => "mul",
            ArithOp::And => "and",
            ArithOp::Or => "or",
            ArithOp::Xor => "xor",
        }
    }
    /// Evaluate with wrapping 64-bit arithmetic.
    pub fn apply(self, a: Value, b: Value) -> Value {
        match self {
            ArithOp::Add => a.wrapping_add(b),
            ArithOp::Sub => a.wrapping_sub(b),
            ArithOp::Mul => a.wrapping_mul(b),
            ArithOp::And => a & b,
            ArithOp::Or => a | b,
            ArithOp::Xor => a ^ b,
        }
    }
}

/// Comparison of a conditional branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BranchCmp {
    /// `beq`
    Eq,
    /// `bne`
    Ne,
    /// `blt` (signed)
    Lt,
    /// `ble`
    Le,
    /// `bgt`
    Gt,
    /// `bge`
    Ge,
}

impl BranchCmp {
    /// The mnemonic (`beq`, `bne`, ...).
    pub fn mnemonic(self) -> &'static str {
        match self {
            BranchCmp::Eq => "beq",
            BranchCmp::Ne => "bne",
            BranchCmp::Lt => "blt",
            BranchCmp::Le => "ble",
            BranchCmp::Gt => "bgt",
            BranchCmp::Ge => "bge",
        }
    }
    /// Evaluate the comparison.
    pub fn holds(self, a: Value, b: Value) -> bool {
        match self {
            BranchCmp::Eq => a == b,
            BranchCmp::Ne => a != b,
            BranchCmp::Lt => a < b,
            BranchCmp::Le => a <= b,
            BranchCmp::Gt => a > b,
            BranchCmp::Ge => a >= b,
        }
    }
}

/// One instruction of a thread. Branch targets are instruction indices; a
/// target equal to the code length means "the end of the thread".
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "instr", rename_all = "snake_case")]
pub enum Instr {
    /// `ld`, `tld`, `suld`, `cold`: read `access.addr` into `dst`.
    Load {
        /// Destination register.
        dst: RegId,
        /// The memory access.
        access: Access,
    },
    /// `st`, `sust`: write `src` to `access.addr`.
    Store {
        /// The value written.
        src: Operand,
        /// The memory access.
        access: Access,
    },
    /// `atom` (with `dst`) or `red` (without): an indivisible read and write.
    Rmw {
        /// Destination of the old value; `None` for `red`.
        dst: Option<RegId>,
        /// The operation.
        op: RmwOp,
        /// Value operands (`op.arity()` of them).
        args: SmallVec<[Operand; 2]>,
        /// The memory access; `sem` applies to the read half (acquire), the
        /// write half (release) or both (acq_rel).
        access: Access,
    },
    /// `fence.sem.scope`, `membar.level`.
    Fence {
        /// Ordering kind.
        sem: FenceSem,
        /// Scope of the fence.
        scope: Scope,
    },
    /// `fence.proxy.kind` (no scope).
    ProxyFence {
        /// Which path it reconciles.
        kind: ProxyFenceKind,
    },
    /// `bar.cta.sync` / `bar.cta.arrive`.
    Barrier {
        /// Sync or arrive-only.
        kind: BarrierKind,
        /// The operands naming the barrier resource (Dat3M allows one or two, possibly registers).
        id: SmallVec<[Operand; 2]>,
        /// Expected number of participating threads; `None` = every thread of
        /// the CTA that executes this barrier.
        count: Option<Operand>,
    },
    /// `mov r, a` (Dat3M also writes `ld r, 1`).
    Mov {
        /// Destination.
        dst: RegId,
        /// Source.
        src: Operand,
    },
    /// `add`/`sub`/... `dst, a, b`.
    Arith {
        /// Operation.
        op: ArithOp,
        /// Destination.
        dst: RegId,
        /// Left operand.
        a: Operand,
        /// Right operand.
        b: Operand,
    },
    /// `goto L` (when `cond` is `None`) or `bXX a, b, L`.
    Branch {
        /// Comparison; `None` for an unconditional jump.
        cond: Option<(BranchCmp, Operand, Operand)>,
        /// Index of the target instruction.
        target: usize,
    },
}

impl Instr {
    /// The memory access of a load, store or RMW.
    pub fn access(&self) -> Option<&Access> {
        match self {
            Instr::Load { access, .. }
            | Instr::Store { access, .. }
            | Instr::Rmw { access, .. } => Some(access),
            _ => None,
        }
    }
    /// Registers this instruction reads.
    pub fn uses(&self) -> SmallVec<[RegId; 4]> {
        let mut out = SmallVec::new();
        let mut push = |o: &Operand| {
            if let Operand::Reg(r) = o {
                out.push(*r)
            }
        };
        match self {
            Instr::Store { src, .. } => push(src),
            Instr::Rmw { args, .. } => args.iter().for_each(push),
            Instr::Barrier { id, count, .. } => {
                id.iter().for_each(&mut push);
                if let Some(c) = count {
                    push(c)
                }
            }
            Instr::Mov { src, .. } => push(src),
            Instr::Arith { a, b, .. } => {
                push(a);
                push(b)
            }
            Instr::Branch {
                cond: Some((_, a, b)),
                ..
            } => {
                push(a);
                push(b)
            }
            _ => {}
        }
        out
    }
    /// The register this instruction writes, if any.
    pub fn def(&self) -> Option<RegId> {
        match self {
            Instr::Load { dst, .. } | Instr::Mov { dst, .. } | Instr::Arith { dst, .. } => {
                Some(*dst)
            }
            Instr::Rmw { dst, .. } => *dst,
            _ => None,
        }
    }
}
