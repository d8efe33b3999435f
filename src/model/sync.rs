//! Facts about synchronisation that both engines read the same way:
//! which accesses a proxy fence reconciles (its proxy, its direction and the
//! state space it is limited to), and which events a release publishes when
//! it is restricted (`.sync_restrict::shared::cta`, `fence.mbarrier_init`,
//! and the completions of asynchronous operations). `docs/async.md` gives
//! the readings.

use crate::ir::{
    Instr, LocId, LocKind, Placement, Program, Proxy, Restrict, SpaceQual, ThreadId, UniProxy,
};

/// The locations a proxy fence is limited to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpaceSet {
    /// Every location (no state-space qualifier).
    All,
    /// Global memory.
    Global,
    /// The shared memory of one CTA (gpu, cta).
    SharedCta(u32, u32),
    /// The shared memory of every CTA of one cluster (gpu, cluster).
    SharedCluster(u32, u32),
}

impl SpaceSet {
    /// The set a qualifier names for a fence executed at `at`.
    pub fn of(q: Option<SpaceQual>, at: Placement) -> SpaceSet {
        match q {
            None => SpaceSet::All,
            Some(SpaceQual::Global) => SpaceSet::Global,
            Some(SpaceQual::Shared | SpaceQual::SharedCta) => SpaceSet::SharedCta(at.gpu, at.cta),
            Some(SpaceQual::SharedCluster) => SpaceSet::SharedCluster(at.gpu, at.cluster),
        }
    }
    /// Whether location `l` of `p` lies in the set.
    pub fn contains(self, p: &Program, l: LocId) -> bool {
        use crate::ir::Space;
        match (self, p.locations[l].space) {
            (SpaceSet::All, _) => true,
            (SpaceSet::Global, s) => s == Space::Global,
            (SpaceSet::SharedCta(g, c), Space::Shared { gpu, cta }) => (g, c) == (gpu, cta),
            (SpaceSet::SharedCluster(g, k), Space::Shared { gpu, cta }) => {
                g == gpu && cluster_of_cta(p, gpu, cta) == Some(k)
            }
            _ => false,
        }
    }
}

/// The cluster of CTA `cta` of GPU `gpu`, from the threads placed there.
pub fn cluster_of_cta(p: &Program, gpu: u32, cta: u32) -> Option<u32> {
    p.threads
        .iter()
        .map(|t| t.placement)
        .find(|pl| pl.gpu == gpu && pl.cta == cta)
        .map(|pl| pl.cluster)
}

/// What a proxy fence does (machine-m2.md §3, digest §3.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProxyRole {
    /// The non-generic proxy it reconciles with the generic one (`None`: the alias fence).
    pub proxy: Option<Proxy>,
    /// It also pushes earlier accesses of `proxy` out to the generic path
    /// (bi-directional fences); a uni-directional generic→`proxy` fence
    /// only makes later `proxy` accesses see earlier generic ones.
    pub source_side: bool,
    /// The locations it acts on.
    pub space: SpaceSet,
}

/// The proxy-fence role of `instr` executed at `at`, if it has one.
pub fn proxy_role(instr: &Instr, at: Placement) -> Option<ProxyRole> {
    match instr {
        Instr::ProxyFence { kind } => Some(ProxyRole {
            proxy: kind.proxy(),
            source_side: true,
            space: SpaceSet::of(kind.space(), at),
        }),
        Instr::ProxyFenceUni {
            to: UniProxy::Async,
            restrict,
            ..
        } => Some(ProxyRole {
            proxy: Some(Proxy::Async),
            source_side: false,
            space: match restrict {
                Some(Restrict::SharedCta) => SpaceSet::SharedCta(at.gpu, at.cta),
                Some(Restrict::SharedCluster) => SpaceSet::SharedCluster(at.gpu, at.cluster),
                _ => SpaceSet::All,
            },
        }),
        // No instruction accesses memory through the tensormap proxy (tensor
        // copies are not modelled), so these fences only release or acquire.
        Instr::ProxyFenceUni {
            to: UniProxy::Tensormap,
            ..
        } => None,
        _ => None,
    }
}

/// Which events a release publishes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Publish {
    /// Everything in its causal past.
    All,
    /// Only events of these threads (an agent's completion).
    Threads(Vec<ThreadId>),
    /// Only accesses to the shared memory of this CTA (gpu, cta)
    /// (`.sync_restrict::shared::cta`).
    SharedOfCta(u32, u32),
    /// Only this thread's `mbarrier.init` stores (`fence.mbarrier_init`).
    MbarrierInitsOf(ThreadId),
}

impl Publish {
    /// What instruction `pc` of thread `t` publishes when it heads a release pattern.
    pub fn of(p: &Program, t: ThreadId, pc: usize, at: Placement) -> Publish {
        if let Some(a) = &p.threads[t].agent {
            return Publish::Threads(a.publishes.clone());
        }
        let restrict = match &p.threads[t].code[pc] {
            Instr::Fence { restrict, .. } | Instr::ProxyFenceUni { restrict, .. } => *restrict,
            _ => None,
        };
        match restrict {
            Some(Restrict::SharedCta) => Publish::SharedOfCta(at.gpu, at.cta),
            Some(Restrict::MbarrierInit) => Publish::MbarrierInitsOf(t),
            // An acquire-only restriction (see `Model::warnings`).
            Some(Restrict::SharedCluster) | None => Publish::All,
        }
    }
    /// Whether an event of thread `thread` (`None`: an initial write) that
    /// accesses location `loc` (`None`: not a memory access), and is a store
    /// when `store`, passes.
    pub fn admits(
        &self,
        p: &Program,
        thread: Option<ThreadId>,
        loc: Option<LocId>,
        store: bool,
    ) -> bool {
        match self {
            Publish::All => true,
            Publish::Threads(ts) => thread.is_some_and(|t| ts.contains(&t)),
            Publish::SharedOfCta(g, c) => {
                thread.is_some() && loc.is_some_and(|l| SpaceSet::SharedCta(*g, *c).contains(p, l))
            }
            Publish::MbarrierInitsOf(t) => {
                thread == Some(*t)
                    && store
                    && loc.is_some_and(|l| p.locations[l].kind == LocKind::Mbarrier)
            }
        }
    }
    /// Whether it publishes everything.
    pub fn is_all(&self) -> bool {
        *self == Publish::All
    }
}

/// Where instruction `pc` of thread `t` is performed (agents' accesses may
/// be performed in another CTA than their issuer, see [`crate::ir::AgentOf`]).
pub fn placement_of(p: &Program, t: ThreadId, pc: usize) -> Placement {
    let th = &p.threads[t];
    th.agent
        .as_ref()
        .and_then(|a| a.at.get(pc).copied())
        .unwrap_or(th.placement)
}
