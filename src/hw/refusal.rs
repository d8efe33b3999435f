//! What the hardware harness can express, and the refusal that names what it
//! cannot: the harness's fixed limits, [`Refusal`] and its [`Reason`]s.
//!
//! Both planners ([`super::plan`] for the test as a whole and
//! [`super::async_plan`] for shared memory, mbarriers and bulk copies) refuse
//! through these types, so they live apart from either planner: the
//! planners depend on this module, never on each other's refusals.

use std::fmt;

use crate::ir::{Proxy, ProxyFenceKind, Sem, Value};

/// Most result columns (registers and locations) a test may have; the
/// harness keeps a final state in a fixed-size array.
pub const MAX_COLS: usize = 64;
/// Most locations of a test.
pub const MAX_LOCS: usize = 16;
/// Most distinct CTAs of a test (each is a block role).
pub const MAX_CTAS: usize = 16;
/// Most litmus threads in one CTA: each is a warp, and a block has at most 32.
pub const MAX_THREADS_PER_CTA: usize = 32;
/// Most clusters of a test that launches clusters.
pub const MAX_CLUSTERS: usize = 16;
/// Most CTAs in one cluster (the portable cluster size).
pub const MAX_CLUSTER_DIM: usize = 8;
/// Most virtual addresses of one location (one mapping of the physical memory each).
pub const MAX_MAPS: usize = 4;
/// Hardware named barriers 1..=15 are available to a test (0 is left to `__syncthreads`).
pub const MAX_BARRIERS: usize = 15;
/// 32-bit words in the `__constant__` bank that holds constant-proxy locations (32 KiB).
pub const CONST_WORDS: usize = 8192;
/// Instances per launch when no region limits them.
pub const UNLIMITED_INSTANCES: usize = 1 << 24;

/// A test the harness will not run, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The test, as `path` or `path[row]`.
    pub test: String,
    /// Why.
    pub reason: Reason,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.test, self.reason)
    }
}

impl std::error::Error for Refusal {}

/// Why a test cannot be run faithfully. The messages are part of the
/// interface (tests pin them): each says what the test does and why the
/// harness cannot reproduce it exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Threads on several GPUs.
    MultipleGpus(usize),
    /// An instruction kind this harness does not know.
    UnknownInstruction {
        /// Thread name.
        thread: String,
        /// Variant name of the instruction.
        what: String,
    },
    /// A texture, surface or constant access with strong semantics.
    StrongProxyAccess {
        /// Thread name.
        thread: String,
        /// The proxy.
        proxy: Proxy,
        /// The semantics written.
        sem: Sem,
    },
    /// `fence.proxy.texture/surface/constant`.
    NotPtxProxyFence(ProxyFenceKind),
    /// `atom.sub` / `red.sub`.
    AtomSub,
    /// `red.acq_rel` (Dat3M writes it; PTX `red` takes `.relaxed` or `.release`).
    RedAcqRel,
    /// A texture or surface access (not generated yet, see `docs/hardware.md`).
    TextureSurface {
        /// Thread name.
        thread: String,
        /// The proxy.
        proxy: Proxy,
    },
    /// A read-modify-write through a surface.
    SurfaceRmw,
    /// An access whose proxy differs from the kind of the name it uses
    /// (`cold r, x` with `x` a generic name): the harness places memory by
    /// the names' declarations.
    ProxyOtherName {
        /// Thread name.
        thread: String,
        /// The access's proxy.
        proxy: Proxy,
        /// The name used.
        name: String,
    },
    /// `mul` on registers.
    Mul,
    /// An immediate or initial value outside 32 bits.
    ValueRange(Value),
    /// A surface location also reached through a generic address or a constant reference.
    SurfaceShared {
        /// Location name.
        loc: String,
        /// What else reaches it (`generic address `x``).
        other: String,
    },
    /// A surface location reached through references of several virtual addresses.
    SurfaceAliases(String),
    /// A constant-proxy location also read through a texture.
    ConstTexture(String),
    /// A constant-proxy location reached through several virtual addresses.
    ConstAliases(String),
    /// A location with more virtual addresses than mappings.
    TooManyMappings(String, usize),
    /// A barrier in a test with branches.
    BarrierWithBranches,
    /// A barrier named or counted by a register the thread computes.
    BarrierRegister {
        /// Thread name.
        thread: String,
        /// Register name.
        reg: String,
    },
    /// A barrier whose thread count differs from its participants.
    BarrierCount {
        /// CTA number.
        cta: u32,
        /// The barrier's name values.
        name: Vec<Value>,
        /// The count written.
        count: Value,
        /// The threads that arrive.
        participants: usize,
    },
    /// Barrier participants disagree on the thread count.
    BarrierCountsDiffer {
        /// CTA number.
        cta: u32,
        /// The barrier's name values.
        name: Vec<Value>,
    },
    /// The threads of a CTA wait at barriers in an order that never lets
    /// them all pass (the test's point may be the deadlock; the GPU would hang).
    BarrierDeadlock {
        /// CTA number.
        cta: u32,
        /// The name of a barrier some thread waits at forever.
        name: Vec<Value>,
    },
    /// Participants arrive a different number of times.
    BarrierPhases {
        /// CTA number.
        cta: u32,
        /// The barrier's name values.
        name: Vec<Value>,
    },
    /// More than [`MAX_BARRIERS`] barrier names in one CTA.
    TooManyBarriers(u32),
    /// More than [`MAX_THREADS_PER_CTA`] threads in one CTA.
    TooManyThreadsInCta(u32, usize),
    /// More than [`MAX_CTAS`] CTAs.
    TooManyCtas(usize),
    /// A cluster with more than [`MAX_CLUSTER_DIM`] CTAs.
    ClusterTooLarge(u32, usize),
    /// More than [`MAX_CLUSTERS`] clusters.
    TooManyClusters(usize),
    /// More than [`MAX_LOCS`] locations.
    TooManyLocations(usize),
    /// An mbarrier arrive that keeps its state token, or a wait on a token
    /// held in a register (the hardware token is an opaque 64-bit value).
    MbarrierStateToken(String),
    /// An mbarrier count, byte count or phase held in a register.
    MbarrierOperand {
        /// Thread name.
        thread: String,
        /// What the register gives.
        what: String,
    },
    /// The phases of an mbarrier cannot be told apart the way the hardware does.
    MbarrierPhase {
        /// The mbarrier.
        bar: String,
        /// Why.
        why: String,
    },
    /// The harness cannot tell when the asynchronous operations completing on
    /// an mbarrier have all landed (so final values could be gathered early).
    MbarrierDrain {
        /// The mbarrier.
        bar: String,
        /// Why.
        why: String,
    },
    /// A copy size the hardware cannot move as one litmus word.
    CopySize {
        /// Thread name.
        thread: String,
        /// The size written.
        size: Value,
    },
    /// Transaction byte counts that no hardware copy size matches.
    TxBytes {
        /// The mbarrier.
        bar: String,
        /// Why.
        why: String,
    },
    /// `fence.proxy.tensormap::generic.acquire` with a tensormap operand.
    TensormapAcquire(String),
    /// Threads of one cluster go through different numbers of `barrier.cluster` phases.
    ClusterBarrierPhases(u32),
    /// A shared location of a CTA that has no thread (no block plays it).
    SharedWithoutCta(String),
    /// A shared location reached through several virtual addresses.
    SharedAliases(String),
    /// More than [`MAX_COLS`] result columns.
    TooManyColumns(usize),
    /// Litmus threads placed as lanes of one warp (`warp N`): the harness
    /// runs each litmus thread as a warp of its own.
    WarpLanes {
        /// Thread name.
        thread: String,
        /// Lanes in its warp.
        lanes: usize,
    },
}

fn name_list(name: &[Value]) -> String {
    name.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::WarpLanes { thread, lanes } => write!(
                f,
                "{thread} is one of {lanes} lanes of a warp (`warp N`); the harness runs each litmus thread as a warp of its own and does not place threads as lanes yet"
            ),
            Reason::MultipleGpus(n) => write!(
                f,
                "threads on {n} GPUs; the harness runs on one GPU and does not emulate several"
            ),
            Reason::UnknownInstruction { thread, what } => write!(
                f,
                "{thread} uses an instruction the harness cannot generate ({what})"
            ),
            Reason::StrongProxyAccess { thread, proxy, sem } => write!(
                f,
                "{thread} makes a {proxy}-proxy access with .{sem} semantics; PTX texture, surface and constant accesses are weak only"
            ),
            Reason::NotPtxProxyFence(k) => write!(
                f,
                "fence.proxy.{} is not a PTX instruction (ISCA'22 writes it for the model only; ptxas rejects it)",
                k.as_str()
            ),
            Reason::AtomSub => write!(
                f,
                "PTX has no atom.sub or red.sub (CUDA's atomicSub adds the negation); the harness does not rewrite instructions"
            ),
            Reason::RedAcqRel => write!(
                f,
                "red.acq_rel is not a PTX instruction (red takes .relaxed or .release); the harness does not rewrite instructions"
            ),
            Reason::TextureSurface { thread, proxy } => write!(
                f,
                "{thread} makes a {proxy}-proxy access; texture and surface objects over the test's memory are not generated yet (not validated on hardware)"
            ),
            Reason::ProxyOtherName {
                thread,
                proxy,
                name,
            } => write!(
                f,
                "{thread} makes a {proxy}-proxy access through `{name}`, declared for another proxy; the harness places memory by the names' declarations"
            ),
            Reason::SurfaceRmw => write!(
                f,
                "surface read-modify-writes (suatom, sured) are not generated: PTX has no suatom and sured has no semantics or scope"
            ),
            Reason::Mul => write!(
                f,
                "`mul` can leave the 32-bit registers of the harness (the model computes with 64 bits)"
            ),
            Reason::ValueRange(v) => write!(
                f,
                "value {v} does not fit in 32 bits (the harness makes .u32/.b32 accesses)"
            ),
            Reason::SurfaceShared { loc, other } => write!(
                f,
                "location `{loc}` is accessed through a surface and through {other}; a surface object lives in a CUDA array, which has no generic or constant address"
            ),
            Reason::SurfaceAliases(loc) => write!(
                f,
                "location `{loc}` is accessed through surface or texture references of two virtual addresses; a CUDA array has only one"
            ),
            Reason::ConstTexture(loc) => write!(
                f,
                "location `{loc}` is read through both the constant and the texture proxy; the harness does not bind a texture to the constant bank"
            ),
            Reason::ConstAliases(loc) => write!(
                f,
                "location `{loc}` is read through the constant proxy and accessed through two virtual addresses; the constant bank cannot be mapped twice"
            ),
            Reason::TooManyMappings(loc, n) => write!(
                f,
                "location `{loc}` has {n} virtual addresses; the harness maps memory at most {MAX_MAPS} times"
            ),
            Reason::BarrierWithBranches => write!(
                f,
                "barriers in a test with branches: a thread that skips or repeats a barrier would hang the hardware barrier"
            ),
            Reason::BarrierRegister { thread, reg } => write!(
                f,
                "{thread} names or counts a barrier with register `{reg}`, which it computes; hardware barrier resources must be fixed before the run"
            ),
            Reason::BarrierCount {
                cta,
                name,
                count,
                participants,
            } => write!(
                f,
                "barrier ({}) of CTA {cta} expects {count} threads but {participants} arrive; the hardware barrier would hang or complete without some of them",
                name_list(name)
            ),
            Reason::BarrierCountsDiffer { cta, name } => write!(
                f,
                "threads of CTA {cta} give barrier ({}) different thread counts; the hardware barrier's behaviour is undefined",
                name_list(name)
            ),
            Reason::BarrierDeadlock { cta, name } => write!(
                f,
                "threads of CTA {cta} deadlock: some wait at barrier ({}) forever, so the model has no final state and the GPU would hang",
                name_list(name)
            ),
            Reason::BarrierPhases { cta, name } => write!(
                f,
                "threads of CTA {cta} arrive at barrier ({}) different numbers of times; the last hardware phase would never complete",
                name_list(name)
            ),
            Reason::TooManyBarriers(cta) => write!(
                f,
                "CTA {cta} uses more than {MAX_BARRIERS} barrier names; the hardware has 16 named barriers and the harness keeps barrier 0"
            ),
            Reason::TooManyThreadsInCta(cta, n) => write!(
                f,
                "CTA {cta} has {n} threads; each is a warp and a block holds at most {MAX_THREADS_PER_CTA} warps"
            ),
            Reason::TooManyCtas(n) => {
                write!(f, "{n} CTAs; the harness supports at most {MAX_CTAS}")
            }
            Reason::ClusterTooLarge(c, n) => write!(
                f,
                "cluster {c} has {n} CTAs; the portable cluster size is at most {MAX_CLUSTER_DIM}"
            ),
            Reason::TooManyClusters(n) => write!(
                f,
                "{n} clusters; the harness supports at most {MAX_CLUSTERS}"
            ),
            Reason::TooManyLocations(n) => {
                write!(f, "{n} locations; the harness supports at most {MAX_LOCS}")
            }
            Reason::MbarrierStateToken(thread) => write!(
                f,
                "{thread} keeps an mbarrier state token in a register or waits on one; the hardware token is an opaque 64-bit value, not the model's phase number"
            ),
            Reason::MbarrierOperand { thread, what } => write!(
                f,
                "{thread} gives {what} of an mbarrier operation in a register; the harness needs it before the run (to scale byte counts, plan phases and drain the barrier)"
            ),
            Reason::MbarrierPhase { bar, why } => {
                write!(f, "mbarrier `{bar}`: {why}")
            }
            Reason::MbarrierDrain { bar, why } => write!(
                f,
                "mbarrier `{bar}`: {why}; the harness could read final values before an asynchronous write lands"
            ),
            Reason::CopySize { thread, size } => write!(
                f,
                "{thread} copies {size} bytes; a litmus location is one 32-bit word, so cp.async, st.async and red.async move 4 bytes and a bulk copy 4, 8 or 16 (the harness moves a 16-byte cell)"
            ),
            Reason::TxBytes { bar, why } => write!(f, "mbarrier `{bar}`: {why}"),
            Reason::TensormapAcquire(thread) => write!(
                f,
                "{thread} uses fence.proxy.tensormap::generic.acquire on an address; the harness creates no tensor maps"
            ),
            Reason::ClusterBarrierPhases(c) => write!(
                f,
                "threads of cluster {c} go through different numbers of barrier.cluster phases; every thread of a hardware cluster takes part in each phase, so the barrier would hang"
            ),
            Reason::SharedAliases(loc) => write!(
                f,
                "`{loc}` lies in shared memory and has several virtual addresses; shared memory cannot be mapped twice"
            ),
            Reason::SharedWithoutCta(loc) => write!(
                f,
                "`{loc}` lies in the shared memory of a CTA that has no thread; no block plays that CTA"
            ),
            Reason::TooManyColumns(n) => write!(
                f,
                "{n} registers and locations in the final state; the harness records at most {MAX_COLS}"
            ),
        }
    }
}

impl Reason {
    /// A short stable key for counting refusals by kind (`multiple-gpus`, ...).
    pub fn key(&self) -> &'static str {
        match self {
            Reason::MultipleGpus(_) => "multiple-gpus",
            Reason::MbarrierStateToken(_) => "mbarrier-state-token",
            Reason::MbarrierOperand { .. } => "mbarrier-operand",
            Reason::MbarrierPhase { .. } => "mbarrier-phase",
            Reason::MbarrierDrain { .. } => "mbarrier-drain",
            Reason::CopySize { .. } => "copy-size",
            Reason::TxBytes { .. } => "tx-bytes",
            Reason::TensormapAcquire(_) => "tensormap-acquire",
            Reason::ClusterBarrierPhases(_) => "cluster-barrier-phases",
            Reason::SharedWithoutCta(_) => "shared-without-cta",
            Reason::SharedAliases(_) => "shared-aliases",
            Reason::UnknownInstruction { .. } => "unknown-instruction",
            Reason::StrongProxyAccess { .. } => "strong-proxy-access",
            Reason::NotPtxProxyFence(_) => "not-ptx-proxy-fence",
            Reason::AtomSub => "atom-sub",
            Reason::RedAcqRel => "red-acq-rel",
            Reason::TextureSurface { .. } => "texture-surface",
            Reason::SurfaceRmw => "surface-rmw",
            Reason::ProxyOtherName { .. } => "proxy-other-name",
            Reason::Mul => "mul",
            Reason::ValueRange(_) => "value-range",
            Reason::SurfaceShared { .. } => "surface-shared",
            Reason::SurfaceAliases(_) => "surface-aliases",
            Reason::ConstTexture(_) => "const-texture",
            Reason::ConstAliases(_) => "const-aliases",
            Reason::TooManyMappings(..) => "too-many-mappings",
            Reason::BarrierWithBranches => "barrier-with-branches",
            Reason::BarrierRegister { .. } => "barrier-register",
            Reason::BarrierCount { .. } => "barrier-count",
            Reason::BarrierCountsDiffer { .. } => "barrier-counts-differ",
            Reason::BarrierDeadlock { .. } => "barrier-deadlock",
            Reason::BarrierPhases { .. } => "barrier-phases",
            Reason::TooManyBarriers(_) => "too-many-barriers",
            Reason::TooManyThreadsInCta(..) => "too-many-threads-in-cta",
            Reason::TooManyCtas(_) => "too-many-ctas",
            Reason::ClusterTooLarge(..) => "cluster-too-large",
            Reason::TooManyClusters(_) => "too-many-clusters",
            Reason::TooManyLocations(_) => "too-many-locations",
            Reason::TooManyColumns(_) => "too-many-columns",
            Reason::WarpLanes { .. } => "warp-lanes",
        }
    }
}
