//! The program IR: one representation that every litmus format lands in and
//! every engine reads.
//!
//! A [`Program`] is plain data: threads with their placement in the scope tree
//! (thread → CTA → cluster → GPU), their code, named virtual addresses mapped
//! onto physical locations, initial values, and the final condition. Source
//! positions are kept outside, in [`crate::litmus::SourceMap`], so that two
//! programs compare equal exactly when they mean the same test.
//!
//! Invariants (checked by [`Program::validate`], upheld by every parser):
//! 1. Every id ([`LocId`], [`AddrId`], [`RegId`], thread index, branch target)
//!    is in range; a branch target may equal the code length (end of thread).
//! 2. An address's `va` names an address of kind [`AddressKind::Generic`] with
//!    `va == itself` (the owner of that virtual address), on the same location.
//!    Two addresses with the same `va` denote the same virtual address.
//! 3. An access's `scope` is `Some` iff its semantics are strong; `Volatile`
//!    always has scope `Sys`. An access's proxy is its instruction's (`tld`
//!    is texture), whatever kind of declaration named its address: the
//!    address gives the virtual address ([`Address::va`]) and the location.
//! 4. RMW operand counts match [`RmwOp::arity`]; `red` (no destination) is
//!    never `acquire`.
//! 5. Each CTA (per GPU) lies in exactly one cluster; thread names are `P0..Pn`
//!    in order.
//! 6. Names of locations, addresses and registers are unique in their scope.
//! 7. Propositions (the condition, the filter) are at most [`MAX_PROP_DEPTH`]
//!    deep, so the recursive functions that walk them cannot overflow a stack.

pub mod activemask;
mod cond;
pub mod copies;
pub mod elect;
pub mod eval;
mod instr;
pub mod mbar;
pub mod tensor_core;
mod validate;

pub use cond::{CmpOp, Condition, MAX_PROP_DEPTH, Prop, Quantifier, Term};
pub use instr::{
    Access, ArithOp, AsyncKind, AsyncSrc, AwaitPoint, BarrierKind, BranchCmp, Completion,
    DEFAULT_BITS, DataType, FenceSem, Instr, MbarOp, Operand, Proxy, ProxyFenceKind, Restrict,
    RmwOp, Scope, Sem, SignalKind, SpaceQual, UndefinedStep, UniProxy, WaitPhase,
};
pub use validate::IrError;

use serde::{Deserialize, Serialize};

/// A machine value. Litmus values are small integers; arithmetic wraps at 64 bits.
pub type Value = i64;

/// Sign-extend the low `bits` bits of `v` (a value of that width as the
/// kernel front end and a kernel's wrapped RMWs keep it).
pub fn sext(v: Value, bits: u32) -> Value {
    if bits >= 64 {
        v
    } else {
        let s = 64 - bits;
        (v << s) >> s
    }
}
/// Index into [`Program::locations`].
pub type LocId = usize;
/// Index into [`Program::addresses`].
pub type AddrId = usize;
/// Index into [`Thread::regs`].
pub type RegId = usize;
/// Index into [`Program::threads`].
pub type ThreadId = usize;

/// A litmus test after parsing: everything an engine needs, nothing about syntax.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Program {
    /// Test name (herd's `Test NAME`).
    pub name: String,
    /// Documentation strings, in file order.
    pub docs: Vec<String>,
    /// Physical locations (what coherence and reads-from are about).
    pub locations: Vec<Location>,
    /// Named virtual addresses; several may map to one location.
    pub addresses: Vec<Address>,
    /// The threads, in column order.
    pub threads: Vec<Thread>,
    /// The final condition.
    pub condition: Condition,
    /// herd's `filter P`: only final states satisfying `P` are listed and
    /// counted for the verdict (the engines' comparison uses every state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Prop>,
    /// herd's `locations [...]`: the registers and locations the test asks
    /// to see in its final states (only [`Term::Reg`] and [`Term::Loc`];
    /// reports list every column anyway, this records the request).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shown: Vec<Term>,
    /// The verdict the source file claims, when it carries one (mixedproxy tests do).
    pub expectation: Option<Expectation>,
    /// The `elect.sync` instructions, in thread and pc order: which `mov`s
    /// hold their results ([`elect`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elects: Vec<ElectSite>,
    /// How copy groups complete their bytes in this program ([`copies`]):
    /// per element as parsed; the engines also run the whole-copy variant
    /// (`engine::run`). Not printed: the test is both variants.
    #[serde(default, skip_serializing_if = "copies::Granularity::is_element")]
    pub granularity: copies::Granularity,
    /// Set by `model::lower` (empty in a program as written): the
    /// instructions that access a register an asynchronous tensor-core
    /// operation has not delivered yet ([`tensor_core::early_accesses`] of
    /// the program before lowering), which both engines report as undefined
    /// when a thread gets past them (`docs/tensor-core.md` §3a).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tc_early: Vec<tensor_core::EarlyAccess>,
    /// Set by the kernel front end (empty in a litmus test): the threads
    /// that execute a warpgroup instruction their warpgroup does not execute
    /// together ([`tensor_core::ShortWarpgroup`]), which both engines report
    /// as undefined when the thread gets past it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_warpgroups: Vec<tensor_core::ShortWarpgroup>,
    /// Set by `model::lower` (empty in a program as written): the
    /// `wgmma.mma_async`s issued without the `wgmma.fence` the ISA requires
    /// before them ([`tensor_core::unfenced`] of the program before
    /// lowering), which both engines report as undefined when a thread gets
    /// past them (`docs/tensor-core.md` §3b).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tc_unfenced: Vec<tensor_core::Unfenced>,
}

/// One `elect.sync d, p, membermask` (`docs/warps.md`): the
/// [`Instr::Barrier`] of kind [`BarrierKind::Elect`] at `pc` (its one
/// operand is the mask), then a `mov d, LEADER` at `pc + 1` when `d` is not
/// `_`, then a `mov p, IS_LEADER` when `p` is not `_`. The moved immediates
/// are one choice of leader ([`elect`]); the engines run every choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ElectSite {
    /// The thread.
    pub thread: ThreadId,
    /// The barrier's pc.
    pub pc: usize,
    /// Whether `d` (the leader's lane id) is written.
    pub dst: bool,
    /// Whether `p` (this lane is the leader) is written.
    pub pred: bool,
}

impl ElectSite {
    /// The pcs of the `mov`s holding the results: `d`'s, then `p`'s.
    pub fn movs(&self) -> (Option<usize>, Option<usize>) {
        let d = self.dst.then_some(self.pc + 1);
        let p = self.pred.then_some(self.pc + 1 + usize::from(self.dst));
        (d, p)
    }
}

/// A physical memory location.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Canonical name: the name of the generic address that declared it.
    pub name: String,
    /// Initial value (the hypothetical initial write W0); for an mbarrier,
    /// its encoded state ([`mbar`]).
    pub init: Value,
    /// Where it lives.
    #[serde(default)]
    pub space: Space,
    /// What it holds.
    #[serde(default)]
    pub kind: LocKind,
}

/// Where a location lives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    /// Global memory.
    #[default]
    Global,
    /// The shared memory of one CTA.
    Shared {
        /// GPU of the CTA.
        gpu: u32,
        /// CTA number.
        cta: u32,
    },
}

/// What a location holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocKind {
    /// Data.
    #[default]
    Data,
    /// An mbarrier object (its value is the encoded barrier state; it is not
    /// part of final states).
    Mbarrier,
    /// A location the lowering adds (a cluster barrier's object); not part of final states.
    Synthetic,
    /// A tensor-memory cell (Blackwell's per-CTA tensor memory, declared
    /// `NAME @ tmem cta N`): accessed by `tcgen05` instructions only; part of
    /// final states like data.
    TensorMemory,
}

/// How a named address reaches its location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressKind {
    /// A generic virtual address (the location's own name, or a generic alias
    /// of it: a *different* virtual address of the same location).
    Generic,
    /// A texture reference over the same virtual address as its target.
    Texture,
    /// A surface reference over the same virtual address as its target.
    Surface,
    /// A constant-bank view of the same virtual address as its target.
    Constant,
}

impl AddressKind {
    /// The proxy an access through this address uses.
    pub fn proxy(self) -> Proxy {
        match self {
            AddressKind::Generic => Proxy::Generic,
            AddressKind::Texture => Proxy::Texture,
            AddressKind::Surface => Proxy::Surface,
            AddressKind::Constant => Proxy::Constant,
        }
    }
    /// The Dat3M spelling (`generic`, `texture`, ...).
    pub fn as_str(self) -> &'static str {
        self.proxy().as_str()
    }
}

/// A name that instructions use to access memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    /// The name as written.
    pub name: String,
    /// The physical location it maps to.
    pub loc: LocId,
    /// The virtual address, identified by its owning generic address.
    pub va: AddrId,
    /// Generic, or which proxy's reference this is.
    pub kind: AddressKind,
    /// The address this one was declared as an alias of (`None` for a location's own name).
    pub alias_of: Option<AddrId>,
}

/// Where a thread runs in the scope tree. CTA and cluster numbers are per GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Placement {
    /// GPU number.
    pub gpu: u32,
    /// Cluster number within the GPU.
    pub cluster: u32,
    /// CTA number within the GPU.
    pub cta: u32,
    /// Warp number within the CTA (`warp N` in the dialect): threads with
    /// the same GPU, CTA and warp are lanes of one warp, in column order.
    /// `None`: the thread is alone in its warp (lane 0 of a warp of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warp: Option<u32>,
    /// Grid number (`grid G` in the dialect): 0, the primary grid (the
    /// default), or 1, a grid launched as its programmatic dependent
    /// (`docs/griddep.md`). A CTA's threads are in one grid.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grid: u32,
}

fn is_zero(g: &u32) -> bool {
    *g == 0
}

impl Placement {
    /// Whether a thread placed at `other` lies in the instance of `scope` that contains `self`.
    pub fn includes(&self, scope: Scope, other: &Placement) -> bool {
        match scope {
            Scope::Cta => self.gpu == other.gpu && self.cta == other.cta,
            Scope::Cluster => self.gpu == other.gpu && self.cluster == other.cluster,
            Scope::Gpu => self.gpu == other.gpu,
            Scope::Sys => true,
        }
    }
    /// Same CTA (the unit of non-generic caches and `bar.sync`).
    pub fn same_cta(&self, other: &Placement) -> bool {
        self.includes(Scope::Cta, other)
    }
    /// Same warp: both carry the same `warp N` in the same CTA (a thread
    /// without `warp` shares its warp with no other thread).
    pub fn same_warp(&self, other: &Placement) -> bool {
        self.warp.is_some() && self.warp == other.warp && self.same_cta(other)
    }
}

/// A register of one thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Register {
    /// Name as written (`r0`).
    pub name: String,
    /// Initial value (0 unless the init block says otherwise).
    pub init: Value,
}

/// A label, kept for printing; branches already point at instruction indices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    /// Name as written (`LC00`).
    pub name: String,
    /// Index of the instruction it precedes (may equal the code length).
    pub at: usize,
}

/// One thread of the test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thread {
    /// `P0`, `P1`, ... (its index in [`Program::threads`]).
    pub name: String,
    /// Position in the scope tree.
    pub placement: Placement,
    /// Registers mentioned by the code, the init block or the condition.
    pub regs: Vec<Register>,
    /// The code.
    pub code: Vec<Instr>,
    /// Labels, sorted by position.
    pub labels: Vec<Label>,
    /// For an agent thread added by lowering: who issued its operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentOf>,
    /// For threads that run one shared program (a kernel's CUDA threads,
    /// each specialised into code of its own): per pc, which instruction of
    /// that program it is. Empty: each pc is its own instruction, as in a
    /// litmus test, where lanes of a warp are written with the same code.
    /// Rules about "the same instruction" across lanes (`.aligned`
    /// barriers) compare these ([`Thread::site`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sites: Vec<usize>,
    /// Set by the kernel front end: an `atom`/`red` of a typed access
    /// narrower than 64 bits writes the value it computes as a signed value
    /// of its width, wrapped as the GPU's word wraps ([`Access::fit`]), since
    /// a kernel keeps every value so (docs/kernels.md, "Values"). A litmus
    /// test keeps ptxmc's 64-bit values (docs/litmus-format.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wrap_rmw: bool,
}

/// An agent thread: performs one asynchronous operation for its issuer
/// (digest §2.5 [F]); it exists only in lowered programs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentOf {
    /// The issuing thread.
    pub issuer: ThreadId,
    /// The issuing instruction.
    pub spawn_pc: usize,
    /// Which execution of the issuing instruction it performs (0 unless the
    /// instruction lies in a bounded loop: one agent per execution).
    #[serde(default)]
    pub exec: usize,
    /// A release by the agent publishes only the events of these threads
    /// (itself, and for `cp.async.mbarrier.arrive` the copies it tracks):
    /// a completion does not publish the issuer's earlier accesses.
    pub publishes: Vec<ThreadId>,
    /// Where each instruction is performed: source reads in the issuer's
    /// CTA, destination writes, the completion fence and the completion in
    /// the destination's CTA.
    pub at: Vec<Placement>,
}

/// What the source file says the result should be.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expectation {
    /// Which kind of claim.
    pub kind: ExpectKind,
    /// The claim's name (`... as NAME` in mixedproxy files).
    pub name: String,
}

/// The three claims of mixedproxy tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectKind {
    /// `permit(P)`: some execution satisfies P (condition `exists`; expected to hold).
    Permit,
    /// `assert(P)`: every execution satisfies P (condition `forall`; expected to hold).
    Assert,
    /// `check(P)`: report whether P is reachable; no expected verdict.
    Check,
}

impl ExpectKind {
    /// Keyword as written.
    pub fn as_str(self) -> &'static str {
        match self {
            ExpectKind::Permit => "permit",
            ExpectKind::Assert => "assert",
            ExpectKind::Check => "check",
        }
    }
}

impl Program {
    /// Location accessed by an address.
    pub fn loc_of(&self, addr: AddrId) -> LocId {
        self.addresses[addr].loc
    }
    /// Look up an address by name.
    pub fn address_named(&self, name: &str) -> Option<AddrId> {
        self.addresses.iter().position(|a| a.name == name)
    }
    /// Look up a location by its canonical name.
    pub fn location_named(&self, name: &str) -> Option<LocId> {
        self.locations.iter().position(|l| l.name == name)
    }
    /// Whether any instruction uses a non-generic proxy or a proxy fence
    /// (the PTX 6.0 model rejects such tests).
    pub fn uses_proxies(&self) -> bool {
        self.threads.iter().flat_map(|t| &t.code).any(|i| match i {
            Instr::ProxyFence { .. } => true,
            _ => i.access().is_some_and(|a| a.proxy != Proxy::Generic),
        }) || self
            .addresses
            .iter()
            .enumerate()
            .any(|(i, a)| a.va != i || a.kind != AddressKind::Generic)
    }
    /// Whether some thread contains a backward branch (a loop).
    pub fn has_loops(&self) -> bool {
        self.threads.iter().any(|t| {
            t.code
                .iter()
                .enumerate()
                .any(|(pc, i)| matches!(i, Instr::Branch { target, .. } if *target <= pc))
        })
    }
}

impl Program {
    /// The lanes of thread `t`'s warp, in column order (`t` alone when it
    /// has no `warp`; agents have none). A thread's lane id is its index here.
    pub fn warp_lanes(&self, t: ThreadId) -> Vec<ThreadId> {
        let me = self.threads[t].placement;
        if me.warp.is_none() || self.threads[t].agent.is_some() {
            return vec![t];
        }
        (0..self.threads.len())
            .filter(|&u| {
                self.threads[u].agent.is_none() && self.threads[u].placement.same_warp(&me)
            })
            .collect()
    }
    /// Thread `t`'s lane id (`%laneid`): its position among its warp's lanes.
    pub fn lane_id(&self, t: ThreadId) -> usize {
        self.warp_lanes(t).iter().position(|&u| u == t).unwrap_or(0)
    }
}

impl Thread {
    /// The instruction of the shared program that `pc` is ([`Thread::sites`]).
    pub fn site(&self, pc: usize) -> usize {
        self.sites.get(pc).copied().unwrap_or(pc)
    }
    /// Look up a register by name.
    pub fn reg_named(&self, name: &str) -> Option<RegId> {
        self.regs.iter().position(|r| r.name == name)
    }
}
