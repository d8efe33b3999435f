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
    /// The asynchronous proxy: the copies of `cp.async.bulk` and
    /// `cp.reduce.async.bulk` (the TMA engine's path).
    Async,
}

impl Proxy {
    /// All proxies, generic first.
    pub const ALL: [Proxy; 5] = [
        Proxy::Generic,
        Proxy::Texture,
        Proxy::Surface,
        Proxy::Constant,
        Proxy::Async,
    ];
    /// Lower-case name used in text and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Proxy::Generic => "generic",
            Proxy::Texture => "texture",
            Proxy::Surface => "surface",
            Proxy::Constant => "constant",
            Proxy::Async => "async",
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

/// A state-space qualifier as written on an instruction (`.global`,
/// `.shared`, `.shared::cta`, `.shared::cluster`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpaceQual {
    /// `.global`
    Global,
    /// `.shared` (the executing CTA's shared memory, as `.shared::cta`)
    Shared,
    /// `.shared::cta`
    SharedCta,
    /// `.shared::cluster`: any CTA of the cluster's shared memory.
    SharedCluster,
}

impl SpaceQual {
    /// The PTX spelling, without the leading dot.
    pub fn as_str(self) -> &'static str {
        match self {
            SpaceQual::Global => "global",
            SpaceQual::Shared => "shared",
            SpaceQual::SharedCta => "shared::cta",
            SpaceQual::SharedCluster => "shared::cluster",
        }
    }
}

/// What a restricted fence (or a completion mechanism) orders: only the
/// operations it names (`.sync_restrict::...`, `fence.mbarrier_init`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Restrict {
    /// `.sync_restrict::shared::cta`: operations on the executing CTA's shared memory.
    SharedCta,
    /// `.sync_restrict::shared::cluster`: operations on shared memory of the cluster.
    SharedCluster,
    /// `fence.mbarrier_init`: the thread's prior `mbarrier.init` operations.
    MbarrierInit,
}

/// The data type written on a load, store or RMW (`.b8` ... `.f64`). Only
/// its width matters to the memory model; the kind decides which values an
/// immediate or initial value may take (`docs/litmus-format.md`, "Access
/// sizes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataType {
    /// `.b8`
    B8,
    /// `.b16`
    B16,
    /// `.b32`
    B32,
    /// `.b64`
    B64,
    /// `.u8`
    U8,
    /// `.u16`
    U16,
    /// `.u32`
    U32,
    /// `.u64`
    U64,
    /// `.s8`
    S8,
    /// `.s16`
    S16,
    /// `.s32`
    S32,
    /// `.s64`
    S64,
    /// `.f16` (its bits; values are integers)
    F16,
    /// `.f32` (its bits; values are integers)
    F32,
    /// `.f64` (its bits; values are integers)
    F64,
}

impl DataType {
    /// Every type, in the order above.
    pub const ALL: [DataType; 15] = [
        DataType::B8,
        DataType::B16,
        DataType::B32,
        DataType::B64,
        DataType::U8,
        DataType::U16,
        DataType::U32,
        DataType::U64,
        DataType::S8,
        DataType::S16,
        DataType::S32,
        DataType::S64,
        DataType::F16,
        DataType::F32,
        DataType::F64,
    ];
    /// The PTX spelling, without the leading dot.
    pub fn as_str(self) -> &'static str {
        match self {
            DataType::B8 => "b8",
            DataType::B16 => "b16",
            DataType::B32 => "b32",
            DataType::B64 => "b64",
            DataType::U8 => "u8",
            DataType::U16 => "u16",
            DataType::U32 => "u32",
            DataType::U64 => "u64",
            DataType::S8 => "s8",
            DataType::S16 => "s16",
            DataType::S32 => "s32",
            DataType::S64 => "s64",
            DataType::F16 => "f16",
            DataType::F32 => "f32",
            DataType::F64 => "f64",
        }
    }
    /// The type of a spelling (without the dot).
    pub fn parse(s: &str) -> Option<DataType> {
        DataType::ALL.into_iter().find(|t| t.as_str() == s)
    }
    /// Width in bits.
    pub fn bits(self) -> u32 {
        use DataType::*;
        match self {
            B8 | U8 | S8 => 8,
            B16 | U16 | S16 | F16 => 16,
            B32 | U32 | S32 | F32 => 32,
            B64 | U64 | S64 | F64 => 64,
        }
    }
    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, DataType::F16 | DataType::F32 | DataType::F64)
    }
    /// The values an immediate or initial value of this type may take:
    /// `.uN` `0..2^N-1`, `.sN` `-2^(N-1)..2^(N-1)-1`, `.bN` and `.fN` (bit
    /// patterns) either (`-2^(N-1)..2^N-1`); 64-bit types as far as a
    /// value (a signed 64-bit integer) reaches.
    pub fn range(self) -> (Value, Value) {
        let n = self.bits();
        let signed = |n: u32| {
            if n == 64 {
                (Value::MIN, Value::MAX)
            } else {
                (-(1 << (n - 1)), (1 << (n - 1)) - 1)
            }
        };
        let unsigned = |n: u32| {
            if n == 64 {
                (0, Value::MAX)
            } else {
                (0, (1 << n) - 1)
            }
        };
        match self {
            DataType::U8 | DataType::U16 | DataType::U32 | DataType::U64 => unsigned(n),
            DataType::S8 | DataType::S16 | DataType::S32 | DataType::S64 => signed(n),
            _ => (signed(n).0, unsigned(n).1),
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The width of an access that writes no type: Dat3M's and mixedproxy's
/// tests write none, and read them as 32-bit words.
pub const DEFAULT_BITS: u32 = 32;

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
    /// State-space qualifier as written (`None`: generic addressing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<SpaceQual>,
    /// Data type as written (`None`: none written, a 32-bit word).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub ty: Option<DataType>,
}

impl Access {
    /// The width of the access in bits ([`DEFAULT_BITS`] when no type is written).
    pub fn bits(&self) -> u32 {
        self.ty.map_or(DEFAULT_BITS, DataType::bits)
    }

    /// `v` as a signed value of this access's width when a type narrower
    /// than 64 bits is written (its low bits, sign-extended), else `v`: what
    /// a word of that width holds after an RMW computed `v` in 64 bits
    /// ([`Thread::wrap_rmw`](super::Thread::wrap_rmw)).
    pub fn fit(&self, v: Value) -> Value {
        self.ty.map_or(v, |t| super::sext(v, t.bits()))
    }
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
    /// `min(old, a)` compared unsigned: a kernel's `.u32`/`.u64` `min`
    /// (values kept as signed numbers of their width, docs/kernels.md
    /// "Values"; see [`RmwOp::unsigned`]).
    #[serde(rename = "umin")]
    UMin,
    /// `max(old, a)` compared unsigned (a kernel's `.u32`/`.u64` `max`).
    #[serde(rename = "umax")]
    UMax,
    /// `old >= a ? 0 : old + 1` compared unsigned (a kernel's `inc.u32`).
    #[serde(rename = "uinc")]
    UInc,
    /// `(old == 0 || old > a) ? a : old - 1` compared unsigned (a kernel's `dec.u32`).
    #[serde(rename = "udec")]
    UDec,
    /// mbarrier arrive-on with count `a` (lowered `mbarrier.arrive`).
    MbarArrive,
    /// mbarrier expect-tx of `a` bytes.
    MbarExpectTx,
    /// mbarrier complete-tx of `a` bytes (a bulk copy's completion).
    MbarCompleteTx,
    /// mbarrier expect-tx of `a` bytes, then arrive-on with count 1.
    MbarArriveExpectTx,
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
            RmwOp::Min | RmwOp::UMin => "min",
            RmwOp::Max | RmwOp::UMax => "max",
            RmwOp::UInc => "inc",
            RmwOp::UDec => "dec",
            RmwOp::MbarArrive => "mbarrier.arrive",
            RmwOp::MbarExpectTx => "mbarrier.expect_tx",
            RmwOp::MbarCompleteTx => "mbarrier.complete_tx",
            RmwOp::MbarArriveExpectTx => "mbarrier.arrive.expect_tx",
        }
    }
    /// Whether this is one of the mbarrier operations (not an `atom`/`red` op).
    pub fn is_mbarrier(self) -> bool {
        matches!(
            self,
            RmwOp::MbarArrive
                | RmwOp::MbarExpectTx
                | RmwOp::MbarCompleteTx
                | RmwOp::MbarArriveExpectTx
        )
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
    /// The unsigned form of a comparing operation (`min`, `max`, `inc`,
    /// `dec`), as a kernel's `.u32`/`.u64` type asks (PTX ISA, "atom": the
    /// comparison follows the instruction's type; `inc`/`dec` are `.u32`
    /// only); any other operation as it is.
    pub fn unsigned(self) -> RmwOp {
        match self {
            RmwOp::Min => RmwOp::UMin,
            RmwOp::Max => RmwOp::UMax,
            RmwOp::Inc => RmwOp::UInc,
            RmwOp::Dec => RmwOp::UDec,
            other => other,
        }
    }
    /// The value written, given the old value and the operands.
    ///
    /// The unsigned operations compare `old` and `a` as `u64`: a kernel
    /// keeps a value of width N sign-extended from N bits, and sign
    /// extension keeps the unsigned order of N-bit patterns (0x7fffffff <
    /// 0x80000000 stays below as 2^31 - 1 < 2^64 - 2^31), so this is the
    /// comparison of the N-bit unsigned numbers. The result is that of 64
    /// bits; a kernel's RMW fits it to its width ([`Access::fit`]).
    pub fn apply(self, old: Value, args: &[Value]) -> Value {
        let a = args[0];
        let (uo, ua) = (old as u64, a as u64);
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
            RmwOp::UMin => uo.min(ua) as Value,
            RmwOp::UMax => uo.max(ua) as Value,
            RmwOp::UInc => {
                if uo >= ua {
                    0
                } else {
                    old.wrapping_add(1)
                }
            }
            RmwOp::UDec => {
                if old == 0 || uo > ua {
                    a
                } else {
                    old.wrapping_sub(1)
                }
            }
            RmwOp::MbarArrive => super::mbar::arrive(old, a),
            RmwOp::MbarExpectTx => super::mbar::expect_tx(old, a),
            RmwOp::MbarCompleteTx => super::mbar::complete_tx(old, a),
            RmwOp::MbarArriveExpectTx => super::mbar::arrive(super::mbar::expect_tx(old, a), 1),
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
    /// `fence.proxy.async`, optionally limited to one state space
    /// (`.global`, `.shared::cta`, `.shared::cluster`).
    Async(Option<SpaceQual>),
}

impl ProxyFenceKind {
    /// The PTX spelling after `fence.proxy.`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyFenceKind::Alias => "alias",
            ProxyFenceKind::Texture => "texture",
            ProxyFenceKind::Surface => "surface",
            ProxyFenceKind::Constant => "constant",
            ProxyFenceKind::Async(None) => "async",
            ProxyFenceKind::Async(Some(SpaceQual::Global)) => "async.global",
            ProxyFenceKind::Async(Some(SpaceQual::Shared | SpaceQual::SharedCta)) => {
                "async.shared::cta"
            }
            ProxyFenceKind::Async(Some(SpaceQual::SharedCluster)) => "async.shared::cluster",
        }
    }
    /// The non-generic proxy this fence pairs with the generic one (`None` for alias fences).
    pub fn proxy(self) -> Option<Proxy> {
        match self {
            ProxyFenceKind::Alias => None,
            ProxyFenceKind::Texture => Some(Proxy::Texture),
            ProxyFenceKind::Surface => Some(Proxy::Surface),
            ProxyFenceKind::Constant => Some(Proxy::Constant),
            ProxyFenceKind::Async(_) => Some(Proxy::Async),
        }
    }
    /// The state space a qualified async proxy fence is limited to.
    pub fn space(self) -> Option<SpaceQual> {
        match self {
            ProxyFenceKind::Async(s) => s,
            _ => None,
        }
    }
}

/// The proxy a uni-directional proxy fence orders generic accesses before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UniProxy {
    /// `fence.proxy.async::generic`
    Async,
    /// `fence.proxy.tensormap::generic`
    Tensormap,
}

/// The operation of an mbarrier instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MbarOp {
    /// `mbarrier.init [bar], count`
    Init,
    /// `mbarrier.arrive [bar]{, count}`
    Arrive,
    /// `mbarrier.expect_tx [bar], bytes`
    ExpectTx,
    /// `mbarrier.arrive.expect_tx [bar], bytes`
    ArriveExpectTx,
    /// `mbarrier.complete_tx [bar], bytes`
    CompleteTx,
}

/// Which phase an mbarrier wait asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitPhase {
    /// `.parity` form: has the phase with this parity completed?
    Parity(Operand),
    /// State form: has the phase of this state token (from an arrive) completed?
    State(Operand),
    /// Lowered blocking wait (`barrier.cluster.wait`): wait until phase `k` has completed.
    Phase(Value),
}

/// The kind of an asynchronous copy or store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AsyncKind {
    /// `cp.async.bulk`: a copy in the async proxy.
    Bulk,
    /// `cp.reduce.async.bulk`: an element-wise reduction into the destination, async proxy.
    ReduceBulk(RmwOp),
    /// `cp.async` (non-bulk): weak generic copy.
    NonBulk,
    /// `st.async`: a store to remote shared memory with mbarrier completion.
    Store,
    /// `red.async`: a reduction to remote shared memory with mbarrier completion.
    Reduce(RmwOp),
}

/// What an asynchronous operation reads: a location, or a register/immediate (`st.async`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AsyncSrc {
    /// The source location.
    Addr(AddrId),
    /// The value stored.
    Value(Operand),
}

/// How the issuing thread learns that an asynchronous operation completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Completion {
    /// `.mbarrier::complete_tx::bytes [bar]`: complete-tx on that mbarrier.
    Mbarrier(AddrId),
    /// `.bulk_group`: a bulk async-group (`cp.async.bulk.commit_group` / `wait_group`).
    BulkGroup,
    /// `cp.async` groups (`cp.async.commit_group` / `wait_group` / `wait_all`).
    AsyncGroup,
}

/// What a lowered [`Instr::Await`] waits for: the `exec`-th execution
/// (counting from 0, in program order) of instruction `pc` of `thread`.
/// Instructions outside loops execute at most once (`exec` 0); an
/// asynchronous operation issued inside a bounded loop has one agent per
/// execution, and each agent awaits its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AwaitPoint {
    /// The thread.
    pub thread: usize,
    /// The instruction.
    pub pc: usize,
    /// Which execution of it.
    pub exec: usize,
}

impl AwaitPoint {
    /// The first (or only) execution of instruction `pc` of `thread`.
    pub fn first(thread: usize, pc: usize) -> AwaitPoint {
        AwaitPoint {
            thread,
            pc,
            exec: 0,
        }
    }
}

/// What a lowered [`Instr::Signal`] stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    /// An asynchronous operation is issued here (its agent starts after it).
    Issue,
    /// A commit of async-groups (no ordering effect).
    Commit,
    /// In an agent: the source reads are complete.
    ReadsDone,
    /// In an agent: the whole operation is complete and visible.
    Done,
    /// `griddepcontrol.launch_dependents`, or `griddepcontrol.wait` in a
    /// thread whose grid has no prerequisite grid in the test: a control
    /// instruction that orders no memory (`docs/griddep.md`).
    GridControl,
    /// Appended to each thread of a primary grid (grid 0) when the test has
    /// a dependent grid: the thread has completed, every instruction of it
    /// retired; a dependent's `griddepcontrol.wait` awaits these.
    GridEnd,
    /// An undefined step: a thread that retires it has done what the ISA
    /// leaves undefined, and the run is reported as undefined
    /// (`model::ub::step_ub`). The thread then exits, the engines'
    /// fallback (what follows an undefined step is not the model's to say).
    /// Only the kernel front end emits it (an access whose run-time address
    /// lies in no element of its buffer or variable).
    Undefined(UndefinedStep),
}

/// What makes a lowered [`SignalKind::Undefined`] step undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UndefinedStep {
    /// A memory access whose address, computed at run time from a loaded
    /// value, is not an element of the buffer or variable its pointer was
    /// derived from: outside it, or not at an element's first byte.
    OutOfBounds,
}

impl UndefinedStep {
    /// What happened.
    pub fn what(self) -> &'static str {
        match self {
            UndefinedStep::OutOfBounds => {
                "a thread accesses an address, computed from a loaded value, that is no element of \
                 the buffer or variable its pointer points into (out of bounds, or not aligned to \
                 an element)"
            }
        }
    }

    /// The ISA's (or CUDA's) sentence that makes it undefined.
    pub fn isa(self) -> &'static str {
        match self {
            UndefinedStep::OutOfBounds => {
                "PTX ISA 6.4.1, Addresses as Operands: an address must be naturally aligned to the \
                 size of the access, else the behaviour is undefined; C++ [expr.add], which CUDA \
                 C++ inherits: pointer arithmetic that leaves the array its pointer points into is \
                 undefined"
            }
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
    /// `bar.warp.sync membermask` (`__syncwarp`): arrive, then wait for the
    /// lanes of the thread's warp named in the mask (the barrier's one
    /// operand); `docs/warps.md`.
    WarpSync,
    /// The convergence wait of `elect.sync d, p, membermask`: like
    /// [`BarrierKind::WarpSync`], the lanes named in the mask wait for each
    /// other, but it orders no memory (the PTX ISA states none). Its results
    /// are the `mov`s that follow it ([`crate::ir::ElectSite`]).
    Elect,
    /// The rendezvous of `activemask.b32 d` (`docs/warps.md`): the lanes of
    /// one block of a partition of the lanes executing the instruction wait
    /// for each other (an exited lane is *not* excused) and order no memory;
    /// the `mov d, MASK` after it holds the block ([`crate::ir::activemask`]).
    /// Its one operand is the block's mask with the instruction's pc + 1 in
    /// bits 32 and up, so that two instructions never share a rendezvous.
    ActiveMask,
}

impl BarrierKind {
    /// Whether the arriving thread then waits for the phase.
    pub fn waits(self) -> bool {
        self != BarrierKind::Arrive
    }
    /// Whether it is a warp-level resource (the lanes named by a membermask).
    pub fn is_warp(self) -> bool {
        matches!(
            self,
            BarrierKind::WarpSync | BarrierKind::Elect | BarrierKind::ActiveMask
        )
    }
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
        /// `.sync_restrict::...` or `fence.mbarrier_init`: what the fence orders.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        restrict: Option<Restrict>,
    },
    /// `fence.proxy.kind` (no scope).
    ProxyFence {
        /// Which path it reconciles.
        kind: ProxyFenceKind,
    },
    /// Uni-directional proxy fence `fence.proxy.<to>::generic.{release,acquire}.scope`:
    /// orders prior generic accesses before later `<to>` accesses, and is a
    /// release (or acquire) fence at `scope`.
    ProxyFenceUni {
        /// The proxy ordered after the generic one.
        to: UniProxy,
        /// `.acquire` (else `.release`).
        acquire: bool,
        /// Scope of the release/acquire part.
        scope: Scope,
        /// `.sync_restrict::...`
        restrict: Option<Restrict>,
        /// `[addr], size` of the tensormap acquire form.
        operand: Option<(AddrId, Value)>,
    },
    /// `cp.async.bulk`, `cp.reduce.async.bulk`, `cp.async`, `st.async`, `red.async`.
    AsyncCopy {
        /// What kind of operation.
        kind: AsyncKind,
        /// Destination location.
        dst: AddrId,
        /// State space of the destination as written.
        dst_space: SpaceQual,
        /// Source location or value.
        src: AsyncSrc,
        /// State space of the source as written (locations only).
        src_space: Option<SpaceQual>,
        /// Size in bytes (for transaction counts).
        size: Value,
        /// Completion mechanism.
        completion: Completion,
        /// This element copy is part of the same copy as the thread's
        /// previous `AsyncCopy` (a tensor, multicast or multi-element bulk
        /// copy written as its element copies, `litmus::tensor`): the
        /// element copies of one source copy that complete on one mbarrier
        /// are one *copy group*, whose bytes the GPU may complete in any
        /// chunks ([`crate::ir::copies`]). Printed `.joined`.
        joined: bool,
    },
    /// `cp.async.bulk.commit_group` (`bulk`) or `cp.async.commit_group`.
    CommitGroup {
        /// Bulk groups (else `cp.async` groups).
        bulk: bool,
    },
    /// `cp.async.bulk.wait_group{.read} N`, `cp.async.wait_group N`, `cp.async.wait_all`.
    WaitGroup {
        /// Bulk groups (else `cp.async` groups).
        bulk: bool,
        /// How many of the most recent groups may still be pending.
        pending: u32,
        /// `.read`: wait only for the source reads.
        read: bool,
        /// `cp.async.wait_all` (commit, then wait for everything).
        all: bool,
    },
    /// `cp.async.mbarrier.arrive{.noinc} [bar]`: an arrive once the thread's prior `cp.async` complete.
    AsyncMbarArrive {
        /// The mbarrier.
        addr: AddrId,
        /// `.noinc`: the arrive counts towards the expected arrivals.
        noinc: bool,
    },
    /// `mbarrier.init/arrive/expect_tx/arrive.expect_tx/complete_tx`.
    Mbar {
        /// The operation.
        op: MbarOp,
        /// Destination of the state token (`_` or none: `None`).
        dst: Option<RegId>,
        /// The mbarrier.
        addr: AddrId,
        /// Count or byte operand.
        arg: Option<Operand>,
        /// Semantics (`.release`/`.relaxed`; init and expect-tx are relaxed).
        sem: Sem,
        /// Scope (`.cta` default, or `.cluster`).
        scope: Scope,
        /// State space as written (`.shared::cta` / `.shared::cluster`).
        space: Option<SpaceQual>,
    },
    /// `mbarrier.test_wait` / `mbarrier.try_wait{.parity}`: `dst` = 1 if the phase completed.
    MbarWait {
        /// The predicate register (`None` in the lowered `barrier.cluster.wait`).
        dst: Option<RegId>,
        /// The mbarrier.
        addr: AddrId,
        /// `test_wait` (else `try_wait`).
        test: bool,
        /// Which phase.
        phase: WaitPhase,
        /// `.acquire` (default) or `.relaxed`.
        sem: Sem,
        /// `.cta` (default) or `.cluster`.
        scope: Scope,
        /// State space as written.
        space: Option<SpaceQual>,
        /// `try_wait`'s `suspendTimeHint` operand as written: a time limit
        /// in nanoseconds for one try, with no effect on memory or on the
        /// result (PTX ISA, "Parallel Synchronization and Communication Instructions:
        /// mbarrier.test_wait/mbarrier.try_wait").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suspend: Option<Operand>,
    },
    /// `barrier.cluster.arrive{.release|.relaxed}` / `barrier.cluster.wait{.acquire}`.
    ClusterBarrier {
        /// Arrive (else wait).
        arrive: bool,
        /// `.release`/`.relaxed` for arrive, `.acquire` for wait.
        sem: Sem,
        /// `.aligned` as written.
        aligned: bool,
    },
    /// Lowered form (never parsed): a point whose view other threads may
    /// wait for ([`Instr::Await`]). It orders nothing by itself.
    Signal {
        /// What the point stands for (for traces).
        kind: SignalKind,
    },
    /// Lowered form (never parsed): wait until each awaited point has
    /// retired, then take on its view (a synchronisation edge from each).
    Await {
        /// The awaited executions of instructions.
        from: SmallVec<[AwaitPoint; 2]>,
    },
    /// `bar.cta.sync` / `bar.cta.arrive`, and `bar.warp.sync membermask`
    /// (kind [`BarrierKind::WarpSync`], `id` = `[membermask]`, no count).
    Barrier {
        /// Sync or arrive-only.
        kind: BarrierKind,
        /// The operands naming the barrier resource (Dat3M allows one or two, possibly registers).
        id: SmallVec<[Operand; 2]>,
        /// Expected number of participating threads; `None` = every thread of
        /// the CTA that executes this barrier.
        count: Option<Operand>,
        /// `.aligned`: every thread of the warp executes this same barrier
        /// instruction (`bar{.cta}.*` is always aligned, `barrier{.cta}.*`
        /// when written `.aligned`; `bar.warp.sync` is not).
        #[serde(default)]
        aligned: bool,
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
    /// `griddepcontrol.wait` (`wait`) or `griddepcontrol.launch_dependents`
    /// (programmatic dependent launch; PTX ISA, "Parallel Synchronization
    /// and Communication Instructions: griddepcontrol"); lowered away before
    /// any engine runs (`model::griddep`, `docs/griddep.md`).
    GridDep {
        /// `.wait` (else `.launch_dependents`).
        wait: bool,
    },
    /// A tensor-core instruction (`wgmma.*`, `tcgen05.*`;
    /// [`super::tensor_core`]); lowered away before any engine runs.
    Tensor {
        /// The operation.
        op: super::tensor_core::TcOp,
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
    /// A plain access, an unrestricted fence, or register code: the
    /// instructions the reductions over interchangeable threads admit
    /// (`op::symmetry`'s groups, `ax::twins`' adders).
    pub fn is_plain(&self) -> bool {
        matches!(
            self,
            Instr::Load { .. }
                | Instr::Store { .. }
                | Instr::Rmw { .. }
                | Instr::Fence { restrict: None, .. }
                | Instr::Mov { .. }
                | Instr::Arith { .. }
                | Instr::Branch { .. }
        )
    }

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
            Instr::Mbar { arg: Some(a), .. } => push(a),
            Instr::MbarWait {
                phase: WaitPhase::Parity(a) | WaitPhase::State(a),
                suspend,
                ..
            } => {
                push(a);
                if let Some(h) = suspend {
                    push(h)
                }
            }
            Instr::MbarWait {
                suspend: Some(h), ..
            } => push(h),
            Instr::AsyncCopy {
                src: AsyncSrc::Value(v),
                ..
            } => push(v),
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
            Instr::Rmw { dst, .. } | Instr::Mbar { dst, .. } | Instr::MbarWait { dst, .. } => *dst,
            Instr::Tensor {
                op: super::tensor_core::TcOp::Result { dst, .. },
            } => Some(*dst),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(ty: Option<DataType>) -> Access {
        Access {
            addr: 0,
            proxy: Proxy::Generic,
            sem: Sem::Relaxed,
            scope: Some(Scope::Gpu),
            space: None,
            ty,
        }
    }

    #[test]
    fn fit_wraps_to_the_width_and_sign_extends() {
        let u32 = access(Some(DataType::U32));
        assert_eq!(u32.fit(0x8000_0000), -0x8000_0000);
        assert_eq!(u32.fit(0x1_0000_0000), 0);
        assert_eq!(u32.fit(-1), -1);
        assert_eq!(access(Some(DataType::S16)).fit(0x1_8001), -0x7fff);
        // 64-bit and untyped accesses keep the value.
        assert_eq!(
            access(Some(DataType::U64)).fit(0x1_0000_0000),
            0x1_0000_0000
        );
        assert_eq!(access(None).fit(0x1_0000_0000), 0x1_0000_0000);
    }

    /// A kernel's RMW of a `.u32` word: the unsigned operation on values
    /// kept sign-extended, fitted to 32 bits ([`Access::fit`]).
    fn u32_rmw(op: RmwOp, old: u32, a: u32) -> u32 {
        let w = access(Some(DataType::U32));
        let sx = |v: u32| v as i32 as Value;
        w.fit(op.apply(sx(old), &[sx(a)])) as u32
    }

    #[test]
    fn unsigned_min_and_max_order_the_full_width() {
        assert_eq!(u32_rmw(RmwOp::UMax, 0x8000_0000, 1), 0x8000_0000);
        assert_eq!(u32_rmw(RmwOp::UMax, 1, 0xffff_ffff), 0xffff_ffff);
        assert_eq!(u32_rmw(RmwOp::UMax, 0x8000_0000, 0x7fff_ffff), 0x8000_0000);
        assert_eq!(u32_rmw(RmwOp::UMin, 0x8000_0000, 1), 1);
        assert_eq!(u32_rmw(RmwOp::UMin, 0xffff_ffff, 0xffff_fffe), 0xffff_fffe);
        assert_eq!(u32_rmw(RmwOp::UMin, 0, 0xffff_ffff), 0);
        // The signed forms keep ordering by sign (0x80000000 is -2^31).
        assert_eq!(u32_rmw(RmwOp::Max, 0x8000_0000, 1), 1);
        assert_eq!(u32_rmw(RmwOp::Min, 0x8000_0000, 1), 0x8000_0000);
        // 64 bits: the values themselves, compared as u64.
        let big = i64::MIN;
        assert_eq!(RmwOp::UMax.apply(big, &[1]), big);
        assert_eq!(RmwOp::UMin.apply(big, &[-1]), big);
        assert_eq!(RmwOp::Max.apply(big, &[1]), 1);
    }

    #[test]
    fn unsigned_inc_and_dec_follow_the_isa_around_2_pow_31_and_2_pow_32() {
        // inc: old >= b ? 0 : old + 1 (PTX ISA, atom), unsigned.
        assert_eq!(u32_rmw(RmwOp::UInc, 5, 0xffff_ffff), 6);
        assert_eq!(u32_rmw(RmwOp::UInc, 0x7fff_ffff, 0xffff_ffff), 0x8000_0000);
        assert_eq!(u32_rmw(RmwOp::UInc, 0x8000_0000, 0xffff_ffff), 0x8000_0001);
        assert_eq!(u32_rmw(RmwOp::UInc, 0xffff_fffe, 0xffff_ffff), 0xffff_ffff);
        assert_eq!(u32_rmw(RmwOp::UInc, 0xffff_ffff, 0xffff_ffff), 0);
        assert_eq!(u32_rmw(RmwOp::UInc, 0x8000_0000, 3), 0);
        // dec: (old == 0 || old > b) ? b : old - 1, unsigned.
        assert_eq!(u32_rmw(RmwOp::UDec, 5, 0xffff_ffff), 4);
        assert_eq!(u32_rmw(RmwOp::UDec, 0, 0xffff_ffff), 0xffff_ffff);
        assert_eq!(u32_rmw(RmwOp::UDec, 0x8000_0000, 0xffff_ffff), 0x7fff_ffff);
        assert_eq!(u32_rmw(RmwOp::UDec, 0x8000_0000, 7), 7);
        assert_eq!(u32_rmw(RmwOp::UDec, 3, 7), 2);
        // The signed forms (litmus tests) read 0xffffffff as -1.
        assert_eq!(u32_rmw(RmwOp::Inc, 5, 0xffff_ffff), 0);
        assert_eq!(u32_rmw(RmwOp::Dec, 5, 0xffff_ffff), 0xffff_ffff);
    }

    #[test]
    fn unsigned_forms_are_written_and_named_as_the_isa_spells_them() {
        for (op, u) in [
            (RmwOp::Min, RmwOp::UMin),
            (RmwOp::Max, RmwOp::UMax),
            (RmwOp::Inc, RmwOp::UInc),
            (RmwOp::Dec, RmwOp::UDec),
        ] {
            assert_eq!(op.unsigned(), u);
            assert_eq!(u.unsigned(), u);
            // Traces and reports name the PTX operation.
            assert_eq!(u.as_str(), op.as_str());
            assert_eq!(u.arity(), 1);
            assert!(u.write_depends_on_read());
        }
        assert_eq!(RmwOp::Add.unsigned(), RmwOp::Add);
        assert_eq!(RmwOp::Cas.unsigned(), RmwOp::Cas);
    }
}
