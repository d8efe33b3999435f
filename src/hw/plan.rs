//! Can a test run faithfully on one GPU, and where does everything go?
//!
//! [`plan`] reads a [`Program`] and either returns a [`Plan`] — CTA roles and
//! the warps that play them, the cluster layout, which memory region every
//! location lives in and how every named address reaches it, the hardware
//! barrier resources, the layout of the per-instance results — or a
//! [`Refusal`] that names the first feature the harness cannot express
//! exactly. The generator ([`super::generate`]) only ever sees plans, so nothing
//! it emits is an approximation of the test.
//!
//! The harness runs 32 instances of a test per warp: each lane of a warp is
//! the same litmus thread of a different instance, and every litmus thread
//! of one instance is a different warp, in the block that plays its CTA.

use std::collections::BTreeMap;
use std::fmt;

use super::async_plan;
pub use super::async_plan::{Arg, ArgForm, SharedPlan};
use crate::ir::{
    AddrId, AddressKind, BarrierKind, Instr, LocId, Operand, Program, Proxy, ProxyFenceKind, RmwOp,
    Scope, Sem, ThreadId, Value,
};

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

/// Where a location's memory lives. The numbers are the runtime's region ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Region {
    /// Ordinary global memory (mapped several times through the driver's
    /// virtual-memory API when the test has virtual aliases).
    Main = 0,
    /// The `__constant__` bank, written through its global alias.
    Const = 1,
    /// A 2D CUDA array behind a surface object (and a texture object).
    Surface = 2,
    /// The shared memory of the CTA that owns the location: a 16-byte cell
    /// per instance in every block's window (`super::async_plan`).
    Shared = 3,
}

/// A location's place: region and rank among the region's locations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocPlan {
    /// The region.
    pub region: Region,
    /// Index among the locations of the region (the placement permutes ranks).
    pub rank: usize,
}

/// How an instruction's named address reaches memory on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrPlace {
    /// A global address in mapping `map` of the main region.
    Global {
        /// Which virtual mapping (0 = the location's own address).
        map: usize,
    },
    /// The global alias of a constant-bank word (generic accesses to a constant location).
    ConstGlobal,
    /// A constant-state-space address (`ld.const`).
    ConstSpace,
    /// A linear texture object over mapping `map`, indexed by element.
    Texture1d {
        /// Which virtual mapping the texture is bound to.
        map: usize,
    },
    /// The texture object over the surface array, indexed by (x, y).
    Texture2d,
    /// The surface object, addressed by (x in bytes, y).
    Surface,
    /// A cell of the owner CTA's shared memory; each instruction reaches it
    /// in its own way ([`ArgForm`]).
    Shared,
}

/// One CTA of the test: a block role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtaRole {
    /// The CTA number written in the test.
    pub cta: u32,
    /// Its cluster number.
    pub cluster: u32,
    /// Its litmus threads, in thread order (warp slot `i` plays `threads[i]`).
    pub threads: Vec<ThreadId>,
}

/// A hardware barrier for one barrier instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierPlan {
    /// Named barrier resource (1..=15).
    pub id: u32,
    /// Hardware threads that arrive: 32 lanes for every participating litmus thread.
    pub count: u32,
}

/// What one litmus thread's device function needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPlan {
    /// Addresses it uses and how, in order of first use (its function's parameters).
    pub args: Vec<Arg>,
    /// First word of its registers in an instance's results.
    pub res_offset: usize,
    /// Words it writes: its registers, a sink word that keeps every loaded
    /// value live and a status word (1 = finished, 2 = a loop gave up),
    /// padded to whole 16-byte stores.
    pub res_words: usize,
    /// Barrier instructions by program counter.
    pub barriers: BTreeMap<usize, BarrierPlan>,
    /// Whether it branches backwards (a loop, guarded by a watchdog).
    pub loops: bool,
}

/// Everything the generator needs to write a faithful harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Block roles, in order of first appearance.
    pub ctas: Vec<CtaRole>,
    /// With a cluster launch: per cluster of the test, its CTA roles (indices into `ctas`).
    pub clusters: Option<Vec<Vec<usize>>>,
    /// Blocks per hardware cluster (0 without a cluster launch).
    pub cluster_dim: usize,
    /// Warps per block: the most threads in one CTA.
    pub warps: usize,
    /// Per litmus thread.
    pub threads: Vec<ThreadPlan>,
    /// Per location.
    pub locs: Vec<LocPlan>,
    /// Locations per region.
    pub nregion: [usize; 4],
    /// Virtual mappings of the main region (1 = one plain allocation).
    pub maps: usize,
    /// Mappings that need a linear texture object.
    pub tex_lin_maps: Vec<usize>,
    /// Whether the surface array needs a texture object.
    pub tex_array: bool,
    /// Per address (by id): how it reaches memory, if some instruction uses it.
    pub addrs: Vec<Option<AddrPlace>>,
    /// Words of results per instance.
    pub res_stride: usize,
    /// Most instances per launch (the constant bank limits tests that use it).
    pub max_instances: usize,
    /// Whether some thread loops.
    pub loops: bool,
    /// With shared memory or asynchronous operations: the shared harness.
    pub shared: Option<SharedPlan>,
}

impl Plan {
    /// Whether the test runs as a cluster launch.
    pub fn uses_clusters(&self) -> bool {
        self.clusters.is_some()
    }
}

/// Whether the barrier operations `seqs` (per thread of one CTA, in program
/// order; straight-line threads) deadlock, and if so at which barrier. A
/// barrier's participants are the threads that ever use its name; a phase
/// completes when all of them arrived; `bar.arrive` does not wait.
fn barrier_deadlock(seqs: &[Vec<(Vec<Value>, BarrierKind)>]) -> Option<Vec<Value>> {
    let participants = |name: &Vec<Value>| -> Vec<usize> {
        (0..seqs.len())
            .filter(|&t| seqs[t].iter().any(|(n, _)| n == name))
            .collect()
    };
    let mut pos = vec![0usize; seqs.len()];
    // Threads that arrived in the current phase of each name, and whether they wait.
    let mut arrived: BTreeMap<Vec<Value>, BTreeMap<usize, bool>> = BTreeMap::new();
    loop {
        let mut progress = false;
        for t in 0..seqs.len() {
            let Some((name, kind)) = seqs[t].get(pos[t]) else {
                continue;
            };
            let here = arrived.entry(name.clone()).or_default();
            if here.contains_key(&t) {
                continue;
            }
            here.insert(t, *kind == BarrierKind::Sync);
            if *kind == BarrierKind::Arrive {
                pos[t] += 1;
            }
            progress = true;
        }
        let complete: Vec<Vec<Value>> = arrived
            .iter()
            .filter(|(name, who)| who.len() == participants(name).len())
            .map(|(name, _)| name.clone())
            .collect();
        for name in complete {
            for (t, waits) in arrived.remove(&name).unwrap() {
                if waits {
                    pos[t] += 1;
                }
            }
            progress = true;
        }
        if (0..seqs.len()).all(|t| pos[t] == seqs[t].len()) {
            return None;
        }
        if !progress {
            let t = (0..seqs.len()).find(|&t| pos[t] < seqs[t].len()).unwrap();
            return Some(seqs[t][pos[t]].0.clone());
        }
    }
}

/// Per thread that arrives at one barrier name: how often, and the thread counts written.
type Arrivals = BTreeMap<ThreadId, (usize, Vec<Option<Value>>)>;

/// Decide how `p` runs on the GPU, or why it cannot. `test` names the test in
/// the refusal.
pub fn plan(p: &Program, test: &str) -> Result<Plan, Refusal> {
    plan_program(p).map_err(|reason| Refusal {
        test: test.to_string(),
        reason,
    })
}

fn check_value(v: Value) -> Result<(), Reason> {
    if i32::try_from(v).is_ok() {
        Ok(())
    } else {
        Err(Reason::ValueRange(v))
    }
}

fn check_operand(o: &Operand) -> Result<(), Reason> {
    match o {
        Operand::Imm(v) => check_value(*v),
        Operand::Reg(_) => Ok(()),
    }
}

fn plan_program(p: &Program) -> Result<Plan, Reason> {
    // One GPU.
    let mut gpus: Vec<u32> = p.threads.iter().map(|t| t.placement.gpu).collect();
    gpus.sort_unstable();
    gpus.dedup();
    if gpus.len() > 1 {
        return Err(Reason::MultipleGpus(gpus.len()));
    }
    // Lanes of one warp.
    for (t, th) in p.threads.iter().enumerate() {
        let lanes = p.warp_lanes(t).len();
        if lanes > 1 {
            return Err(Reason::WarpLanes {
                thread: th.name.clone(),
                lanes,
            });
        }
    }

    // Instructions: only what PTX has and the harness writes exactly.
    let mut has_branch = false;
    let mut has_barrier = false;
    let mut cluster_scope = async_plan::needs_cluster(p);
    for l in &p.locations {
        // An mbarrier's initial value is its encoded state; the harness
        // initialises it with its arrival count instead.
        if l.kind == crate::ir::LocKind::Data {
            check_value(l.init)?;
        }
    }
    for th in &p.threads {
        for r in &th.regs {
            check_value(r.init)?;
        }
        for i in &th.code {
            if let Some(a) = i.access() {
                let named = &p.addresses[a.addr];
                if a.proxy != Proxy::Async && a.proxy != named.kind.proxy() {
                    return Err(Reason::ProxyOtherName {
                        thread: th.name.clone(),
                        proxy: a.proxy,
                        name: named.name.clone(),
                    });
                }
                if a.proxy != Proxy::Generic && a.sem != Sem::Weak {
                    // `sured`/`suatom` carry the RMW default semantics; they are
                    // refused below for their own reason.
                    if !matches!(i, Instr::Rmw { .. }) {
                        return Err(Reason::StrongProxyAccess {
                            thread: th.name.clone(),
                            proxy: a.proxy,
                            sem: a.sem,
                        });
                    }
                }
                if a.scope == Some(Scope::Cluster) {
                    cluster_scope = true;
                }
                if matches!(a.proxy, Proxy::Texture | Proxy::Surface)
                    && !matches!(i, Instr::Rmw { .. })
                {
                    return Err(Reason::TextureSurface {
                        thread: th.name.clone(),
                        proxy: a.proxy,
                    });
                }
            }
            if async_plan::check_instr(p, &th.name, i)? {
                if let Instr::Mbar { scope, .. } | Instr::MbarWait { scope, .. } = i {
                    if *scope == Scope::Cluster {
                        cluster_scope = true;
                    }
                }
                if let Instr::Fence { scope, .. } | Instr::ProxyFenceUni { scope, .. } = i {
                    if *scope == Scope::Cluster {
                        cluster_scope = true;
                    }
                }
                continue;
            }
            #[allow(unreachable_patterns)]
            match i {
                Instr::Load { .. } => {}
                Instr::Store { src, .. } => check_operand(src)?,
                Instr::Rmw {
                    op, args, access, ..
                } => {
                    if access.proxy != Proxy::Generic {
                        return Err(Reason::SurfaceRmw);
                    }
                    if *op == RmwOp::Sub {
                        return Err(Reason::AtomSub);
                    }
                    if i.def().is_none() && access.sem == Sem::AcqRel {
                        return Err(Reason::RedAcqRel);
                    }
                    args.iter().try_for_each(check_operand)?;
                }
                Instr::Fence { scope, .. } => {
                    if *scope == Scope::Cluster {
                        cluster_scope = true;
                    }
                }
                Instr::ProxyFence { kind } => {
                    if *kind != ProxyFenceKind::Alias {
                        return Err(Reason::NotPtxProxyFence(*kind));
                    }
                }
                Instr::Barrier {
                    kind: BarrierKind::WarpSync,
                    ..
                } => {
                    return Err(Reason::UnknownInstruction {
                        thread: th.name.clone(),
                        what: "bar.warp.sync: the harness runs each litmus thread as a whole warp"
                            .to_string(),
                    });
                }
                Instr::Barrier { id, count, .. } => {
                    has_barrier = true;
                    id.iter().try_for_each(check_operand)?;
                    count.iter().try_for_each(check_operand)?;
                }
                Instr::Mov { src, .. } => check_operand(src)?,
                Instr::Arith { op, a, b, .. } => {
                    if *op == crate::ir::ArithOp::Mul {
                        return Err(Reason::Mul);
                    }
                    check_operand(a)?;
                    check_operand(b)?;
                }
                Instr::Branch { cond, .. } => {
                    has_branch = true;
                    if let Some((_, a, b)) = cond {
                        check_operand(a)?;
                        check_operand(b)?;
                    }
                }
                other => {
                    let dbg = format!("{other:?}");
                    let what = dbg
                        .split(|c: char| !c.is_alphanumeric() && c != '_')
                        .next()
                        .unwrap_or("?")
                        .to_string();
                    return Err(Reason::UnknownInstruction {
                        thread: th.name.clone(),
                        what,
                    });
                }
            }
        }
    }

    // Block roles: one per CTA of the test, in order of first appearance.
    let mut ctas: Vec<CtaRole> = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        match ctas.iter_mut().find(|c| c.cta == th.placement.cta) {
            Some(c) => c.threads.push(t),
            None => ctas.push(CtaRole {
                cta: th.placement.cta,
                cluster: th.placement.cluster,
                threads: vec![t],
            }),
        }
    }
    for c in &ctas {
        if c.threads.len() > MAX_THREADS_PER_CTA {
            return Err(Reason::TooManyThreadsInCta(c.cta, c.threads.len()));
        }
    }
    if ctas.len() > MAX_CTAS {
        return Err(Reason::TooManyCtas(ctas.len()));
    }
    let warps = ctas.iter().map(|c| c.threads.len()).max().unwrap_or(1);

    // Clusters matter only to `.cluster`-scoped operations; then the test's
    // clusters become hardware clusters (one per test cluster and instance group).
    let (clusters, cluster_dim) = if cluster_scope {
        let mut cl: Vec<(u32, Vec<usize>)> = Vec::new();
        for (k, c) in ctas.iter().enumerate() {
            match cl.iter_mut().find(|(id, _)| *id == c.cluster) {
                Some((_, v)) => v.push(k),
                None => cl.push((c.cluster, vec![k])),
            }
        }
        if cl.len() > MAX_CLUSTERS {
            return Err(Reason::TooManyClusters(cl.len()));
        }
        for (id, v) in &cl {
            if v.len() > MAX_CLUSTER_DIM {
                return Err(Reason::ClusterTooLarge(*id, v.len()));
            }
        }
        let dim = cl.iter().map(|(_, v)| v.len()).max().unwrap_or(1);
        (
            Some(cl.into_iter().map(|(_, v)| v).collect::<Vec<_>>()),
            dim,
        )
    } else {
        (None, 0)
    };

    // Locations: which region, and how each used address reaches it.
    if p.locations.len() > MAX_LOCS {
        return Err(Reason::TooManyLocations(p.locations.len()));
    }
    let mut used: Vec<bool> = vec![false; p.addresses.len()];
    for th in &p.threads {
        for i in &th.code {
            for a in async_plan::operands(p, i) {
                used[a.addr] = true;
            }
        }
    }
    let mut addrs: Vec<Option<AddrPlace>> = vec![None; p.addresses.len()];
    let mut locs = Vec::with_capacity(p.locations.len());
    let mut nregion = [0usize; 4];
    let mut maps = 1;
    let mut tex_lin_maps: Vec<usize> = Vec::new();
    let mut tex_array = false;
    for (l, loc) in p.locations.iter().enumerate() {
        let reach: Vec<AddrId> = (0..p.addresses.len())
            .filter(|&a| used[a] && p.addresses[a].loc == l)
            .collect();
        let kinds = |k: AddressKind| {
            reach
                .iter()
                .copied()
                .filter(move |&a| p.addresses[a].kind == k)
        };
        let first_of = |k: AddressKind| kinds(k).next();
        let mut vas: Vec<AddrId> = reach.iter().map(|&a| p.addresses[a].va).collect();
        vas.sort_unstable();
        vas.dedup();
        let region = if loc.space != crate::ir::Space::Global {
            if vas.len() > 1 {
                return Err(Reason::SharedAliases(loc.name.clone()));
            }
            for &a in &reach {
                addrs[a] = Some(AddrPlace::Shared);
            }
            Region::Shared
        } else if first_of(AddressKind::Surface).is_some() {
            if let Some(g) = first_of(AddressKind::Generic) {
                return Err(Reason::SurfaceShared {
                    loc: loc.name.clone(),
                    other: format!("generic address `{}`", p.addresses[g].name),
                });
            }
            if let Some(c) = first_of(AddressKind::Constant) {
                return Err(Reason::SurfaceShared {
                    loc: loc.name.clone(),
                    other: format!("constant reference `{}`", p.addresses[c].name),
                });
            }
            if vas.len() > 1 {
                return Err(Reason::SurfaceAliases(loc.name.clone()));
            }
            for &a in &reach {
                addrs[a] = Some(match p.addresses[a].kind {
                    AddressKind::Texture => {
                        tex_array = true;
                        AddrPlace::Texture2d
                    }
                    _ => AddrPlace::Surface,
                });
            }
            Region::Surface
        } else if first_of(AddressKind::Constant).is_some() {
            if first_of(AddressKind::Texture).is_some() {
                return Err(Reason::ConstTexture(loc.name.clone()));
            }
            if vas.len() > 1 {
                return Err(Reason::ConstAliases(loc.name.clone()));
            }
            for &a in &reach {
                addrs[a] = Some(match p.addresses[a].kind {
                    AddressKind::Constant => AddrPlace::ConstSpace,
                    _ => AddrPlace::ConstGlobal,
                });
            }
            Region::Const
        } else {
            if vas.len() > MAX_MAPS {
                return Err(Reason::TooManyMappings(loc.name.clone(), vas.len()));
            }
            maps = maps.max(vas.len());
            for &a in &reach {
                let map = vas
                    .iter()
                    .position(|&v| v == p.addresses[a].va)
                    .unwrap_or(0);
                addrs[a] = Some(match p.addresses[a].kind {
                    AddressKind::Texture => {
                        if !tex_lin_maps.contains(&map) {
                            tex_lin_maps.push(map);
                        }
                        AddrPlace::Texture1d { map }
                    }
                    _ => AddrPlace::Global { map },
                });
            }
            Region::Main
        };
        locs.push(LocPlan {
            region,
            rank: nregion[region as usize],
        });
        nregion[region as usize] += 1;
    }
    tex_lin_maps.sort_unstable();

    let ncols: usize = p.threads.iter().map(|t| t.regs.len()).sum::<usize>() + p.locations.len();
    if ncols > MAX_COLS {
        return Err(Reason::TooManyColumns(ncols));
    }

    // Barriers: static names, one hardware resource per name and CTA, and a
    // count that the hardware can honour exactly.
    let mut barrier_plans: Vec<BTreeMap<usize, BarrierPlan>> =
        vec![BTreeMap::new(); p.threads.len()];
    if has_barrier {
        if has_branch {
            return Err(Reason::BarrierWithBranches);
        }
        for c in &ctas {
            // name -> per thread: (arrivals, counts written)
            let mut names: Vec<(Vec<Value>, Arrivals)> = Vec::new();
            // Per thread, its barrier operations in program order.
            let mut seqs: Vec<Vec<(Vec<Value>, BarrierKind)>> = Vec::new();
            for &t in &c.threads {
                let mut seq = Vec::new();
                let th = &p.threads[t];
                let static_value = |o: &Operand| -> Result<Value, Reason> {
                    match o {
                        Operand::Imm(v) => Ok(*v),
                        Operand::Reg(r) => {
                            if th.code.iter().any(|i| i.def() == Some(*r)) {
                                Err(Reason::BarrierRegister {
                                    thread: th.name.clone(),
                                    reg: th.regs[*r].name.clone(),
                                })
                            } else {
                                Ok(th.regs[*r].init)
                            }
                        }
                    }
                };
                for i in &th.code {
                    if let Instr::Barrier {
                        id, count, kind, ..
                    } = i
                    {
                        let name = id.iter().map(static_value).collect::<Result<Vec<_>, _>>()?;
                        seq.push((name.clone(), *kind));
                        let count = count.as_ref().map(static_value).transpose()?;
                        let entry = match names.iter_mut().position(|(n, _)| *n == name) {
                            Some(k) => &mut names[k].1,
                            None => {
                                names.push((name, BTreeMap::new()));
                                &mut names.last_mut().unwrap().1
                            }
                        };
                        let e = entry.entry(t).or_insert((0, Vec::new()));
                        e.0 += 1;
                        e.1.push(count);
                    }
                }
                seqs.push(seq);
            }
            if names.len() > MAX_BARRIERS {
                return Err(Reason::TooManyBarriers(c.cta));
            }
            for (k, (name, per_thread)) in names.iter().enumerate() {
                let arrivals: Vec<usize> = per_thread.values().map(|(n, _)| *n).collect();
                if arrivals.iter().any(|&n| n != arrivals[0]) {
                    return Err(Reason::BarrierPhases {
                        cta: c.cta,
                        name: name.clone(),
                    });
                }
                let counts: Vec<Option<Value>> = per_thread
                    .values()
                    .flat_map(|(_, cs)| cs.iter().copied())
                    .collect();
                if counts.iter().any(|&n| n != counts[0]) {
                    return Err(Reason::BarrierCountsDiffer {
                        cta: c.cta,
                        name: name.clone(),
                    });
                }
                let participants = per_thread.len();
                if let Some(n) = counts[0] {
                    if n != participants as Value {
                        return Err(Reason::BarrierCount {
                            cta: c.cta,
                            name: name.clone(),
                            count: n,
                            participants,
                        });
                    }
                }
                let bp = BarrierPlan {
                    id: k as u32 + 1,
                    count: 32 * participants as u32,
                };
                for &t in per_thread.keys() {
                    let th = &p.threads[t];
                    for (pc, i) in th.code.iter().enumerate() {
                        if let Instr::Barrier { id, .. } = i {
                            let this: Vec<Value> = id
                                .iter()
                                .map(|o| match o {
                                    Operand::Imm(v) => *v,
                                    Operand::Reg(r) => th.regs[*r].init,
                                })
                                .collect();
                            if this == *name {
                                barrier_plans[t].insert(pc, bp);
                            }
                        }
                    }
                }
            }
            if let Some(name) = barrier_deadlock(&seqs) {
                return Err(Reason::BarrierDeadlock { cta: c.cta, name });
            }
        }
    }

    // Results: per thread its registers and a sink word, in 16-byte stores.
    let mut threads = Vec::with_capacity(p.threads.len());
    let mut offset = 0;
    for (t, th) in p.threads.iter().enumerate() {
        let mut args: Vec<Arg> = Vec::new();
        for i in &th.code {
            for a in async_plan::operands(p, i) {
                if !args.contains(&a) {
                    args.push(a);
                }
            }
        }
        let words = (th.regs.len() + 2).div_ceil(4) * 4;
        let loops = th
            .code
            .iter()
            .enumerate()
            .any(|(pc, i)| matches!(i, Instr::Branch { target, .. } if *target <= pc));
        threads.push(ThreadPlan {
            args,
            res_offset: offset,
            res_words: words,
            barriers: std::mem::take(&mut barrier_plans[t]),
            loops,
        });
        offset += words;
    }
    // The shared harness: shared cells, mbarriers, drains, cluster-barrier
    // phases, and one status word per CTA role after the threads' results.
    let shared = if async_plan::needs_shared_harness(p) {
        let mut sp = async_plan::analyse(p, &ctas, clusters.as_deref())?;
        sp.status_offset = offset;
        offset += ctas.len().div_ceil(4) * 4;
        Some(sp)
    } else {
        None
    };
    let nconst = nregion[Region::Const as usize];
    let max_instances = if nconst > 0 {
        // Room for every placement with location spacing up to 2 words.
        (CONST_WORDS / (2 * nconst)) / 32 * 32
    } else {
        UNLIMITED_INSTANCES
    };
    Ok(Plan {
        loops: threads.iter().any(|t| t.loops),
        ctas,
        clusters,
        cluster_dim,
        warps,
        threads,
        locs,
        nregion,
        maps,
        tex_lin_maps,
        tex_array,
        addrs,
        res_stride: offset,
        max_instances,
        shared,
    })
}

/// The location an address reaches (a convenience for the generator).
pub fn loc_of(p: &Program, a: AddrId) -> LocId {
    p.addresses[a].loc
}
