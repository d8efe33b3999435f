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

use super::async_plan;
pub use super::async_plan::{Arg, ArgForm, SharedPlan};
use super::refusal::{
    CONST_WORDS, MAX_BARRIERS, MAX_CLUSTER_DIM, MAX_CLUSTERS, MAX_COLS, MAX_CTAS, MAX_LOCS,
    MAX_MAPS, MAX_THREADS_PER_CTA, UNLIMITED_INSTANCES,
};
pub use super::refusal::{Reason, Refusal};
use super::roles::CtaRole;
use crate::ir::{
    AddrId, AddressKind, BarrierKind, Instr, LocId, Operand, Program, Proxy, ProxyFenceKind, RmwOp,
    Scope, Sem, ThreadId, Value,
};

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
    // One grid: the harness launches one kernel.
    for th in &p.threads {
        let griddep = th.code.iter().any(|i| matches!(i, Instr::GridDep { .. }));
        if th.placement.grid != 0 || griddep {
            return Err(Reason::UnknownInstruction {
                thread: th.name.clone(),
                what: "a dependent grid or `griddepcontrol` (the harness launches one grid)"
                    .to_string(),
            });
        }
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
                    kind: k @ (BarrierKind::WarpSync | BarrierKind::Elect | BarrierKind::ActiveMask),
                    ..
                } => {
                    let name = match k {
                        BarrierKind::Elect => "elect.sync",
                        BarrierKind::ActiveMask => "activemask.b32",
                        _ => "bar.warp.sync",
                    };
                    return Err(Reason::UnknownInstruction {
                        thread: th.name.clone(),
                        what: format!(
                            "{name}: the harness runs each litmus thread as a whole warp"
                        ),
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
