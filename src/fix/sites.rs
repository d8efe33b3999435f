//! Where a test can be changed, and how: fence insertions between
//! instructions, stronger or weaker semantics and scopes on accesses,
//! fences and mbarrier operations, fence removals; each with its cost
//! (`docs/fix.md`) and its place in the site's strength order.

use crate::ir::tensor_core::{TcFence, TcOp};
use crate::ir::{
    AsyncKind, FenceSem, Instr, MbarOp, Program, Proxy, ProxyFenceKind, Scope, Sem, SpaceQual,
};
use crate::litmus::print;

/// One change: what it does to the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Insert `instr` before instruction `pos` of `thread`.
    Insert {
        /// Thread.
        thread: usize,
        /// Position (an instruction index of the test as written).
        pos: usize,
        /// The instruction.
        instr: Instr,
    },
    /// Replace instruction `pc` of `thread`.
    Replace {
        /// Thread.
        thread: usize,
        /// Instruction.
        pc: usize,
        /// The new instruction.
        instr: Instr,
    },
    /// Remove instruction `pc` of `thread`.
    Remove {
        /// Thread.
        thread: usize,
        /// Instruction.
        pc: usize,
    },
    /// Several changes made together (a barrier inserted in every thread
    /// that must take part in it: one change for the search).
    Group(Vec<Action>),
}

/// One possible change at a site.
#[derive(Clone, Debug)]
pub struct Variant {
    /// In PTX terms.
    pub text: String,
    /// What it costs (strengthening) or saves (weakening).
    pub cost: u32,
    /// The change.
    pub action: Action,
    /// Its strength key: (semantics rank, scope rank); compared pointwise.
    key: (u8, u8),
    /// Semantics that are incomparable with each other (acquire vs release).
    incomparable: Option<u8>,
}

impl Variant {
    /// A repair (`repairs.rs`): a change that is not a fence or a stronger
    /// annotation. `rank` orders the variants of one repair site that form
    /// a chain (a smaller `wait_group` count waits for more); variants of
    /// equal rank are incomparable.
    pub(super) fn repair(text: String, cost: u32, action: Action, rank: u8) -> Variant {
        Variant {
            text,
            cost,
            action,
            key: (rank, 0),
            incomparable: None,
        }
    }
}

/// A place where a change can be made, with its variants in increasing
/// order along the site's direction (stronger for fixes, weaker for weakenings).
#[derive(Clone, Debug)]
pub struct Site {
    /// The thread's name.
    pub thread_name: String,
    /// The variants; the last one is the furthest.
    pub variants: Vec<Variant>,
    /// Weakening sites order variants by decreasing strength.
    weakening: bool,
    /// A repair site (`repairs.rs`): its variants change the program's
    /// control (barriers, waits, parities, byte counts), so they can make
    /// it hang or reach undefined behaviour, and the strongest program of
    /// `why.rs` (fences and annotations only) leaves them out.
    pub repair: bool,
    /// A barrier inserted in every member of a group (`repairs.rs`): a fix
    /// holds at most one (two inserted barriers are never the expert fix,
    /// and their placements multiply).
    pub group_barrier: bool,
}

impl Site {
    /// A repair site (`repairs.rs`) with its variants, weakest first.
    pub(super) fn repair(thread_name: String, variants: Vec<Variant>) -> Site {
        Site {
            thread_name,
            variants,
            weakening: false,
            repair: true,
            group_barrier: false,
        }
    }

    /// Whether variant `b` goes at least as far as variant `a` (stronger for a
    /// fix site, weaker for a weakening site).
    pub fn leq(&self, a: usize, b: usize) -> bool {
        let (va, vb) = (&self.variants[a], &self.variants[b]);
        let (lo, hi) = if self.weakening { (vb, va) } else { (va, vb) };
        if a == b {
            return true;
        }
        // Repair variants form a chain by rank or are incomparable.
        if self.repair {
            return va.key.0 < vb.key.0 && same_family(&va.action, &vb.action);
        }
        // A removal is the weakest of all.
        if matches!(lo.action, Action::Remove { .. }) {
            return true;
        }
        if matches!(hi.action, Action::Remove { .. }) {
            return false;
        }
        let sem_ok = lo.key.0 <= hi.key.0
            && !(lo.incomparable.is_some()
                && hi.incomparable.is_some()
                && lo.incomparable != hi.incomparable);
        sem_ok && lo.key.1 <= hi.key.1 && same_family(&lo.action, &hi.action)
    }
}

fn same_family(a: &Action, b: &Action) -> bool {
    let instr = |x: &Action| match x {
        Action::Insert { instr, .. } | Action::Replace { instr, .. } => Some(instr.clone()),
        Action::Remove { .. } | Action::Group(_) => None,
    };
    match (instr(a), instr(b)) {
        (Some(Instr::ProxyFence { kind: k1 }), Some(Instr::ProxyFence { kind: k2 })) => {
            k1 == k2 || (k1.proxy() == k2.proxy() && k2 == ProxyFenceKind::Async(None))
        }
        _ => true,
    }
}

// ---- costs (docs/fix.md) ------------------------------------------------------

/// A `MEMBAR` at scope `s`: what release stores and fences compile to.
fn membar(s: Scope) -> u32 {
    match s {
        Scope::Cta => 2,
        Scope::Cluster => 4,
        Scope::Gpu => 6,
        Scope::Sys => 12,
    }
}

/// A strong access at scope `s` (bypasses the L1 for scopes above the CTA).
fn strong(s: Scope) -> u32 {
    match s {
        Scope::Cta => 1,
        Scope::Cluster | Scope::Gpu => 2,
        Scope::Sys => 3,
    }
}

/// The cost of an access with these semantics.
fn access_cost(sem: Sem, scope: Option<Scope>) -> u32 {
    let s = scope.unwrap_or(Scope::Sys);
    match sem {
        Sem::Weak => 0,
        Sem::Relaxed | Sem::Volatile => strong(s),
        Sem::Acquire => strong(s) + 2,
        Sem::Release => strong(s) + membar(s),
        Sem::AcqRel => strong(s) + 2 + membar(s),
    }
}

/// The cost of a fence (one more instruction than an annotation).
fn fence_cost(sem: FenceSem, s: Scope) -> u32 {
    1 + match sem {
        FenceSem::Acquire => 2,
        FenceSem::Release => membar(s),
        FenceSem::AcqRel => membar(s) + 2,
        FenceSem::Sc => 2 * membar(s) + 2,
    }
}

fn proxy_fence_cost(k: ProxyFenceKind) -> u32 {
    match k {
        ProxyFenceKind::Alias => 3,
        ProxyFenceKind::Async(_) => 5,
        _ => 4,
    }
}

fn sem_rank(s: Sem) -> (u8, Option<u8>) {
    match s {
        Sem::Weak => (0, None),
        Sem::Relaxed | Sem::Volatile => (1, None),
        Sem::Acquire => (2, Some(0)),
        Sem::Release => (2, Some(1)),
        Sem::AcqRel => (3, None),
    }
}

fn fence_rank(s: FenceSem) -> (u8, Option<u8>) {
    match s {
        FenceSem::Acquire => (0, Some(0)),
        FenceSem::Release => (0, Some(1)),
        FenceSem::AcqRel => (1, None),
        FenceSem::Sc => (2, None),
    }
}

fn scope_rank(s: Option<Scope>) -> u8 {
    s.map_or(0, |s| s as u8 + 1)
}

// ---- which scopes and proxies matter ---------------------------------------------

/// The scopes that include different sets of the test's threads, narrowest
/// first: a wider scope that includes no more threads is never proposed.
pub fn useful_scopes(p: &Program) -> Vec<Scope> {
    let set = |t: usize, s: Scope| -> Vec<bool> {
        p.threads
            .iter()
            .map(|u| p.threads[t].placement.includes(s, &u.placement))
            .collect()
    };
    let mut out = vec![Scope::Cta];
    for s in [Scope::Cluster, Scope::Gpu, Scope::Sys] {
        let last = *out.last().unwrap();
        if (0..p.threads.len()).any(|t| set(t, s) != set(t, last)) {
            out.push(s);
        }
    }
    out
}

/// The proxy fences the test's accesses could need.
fn useful_proxy_fences(p: &Program) -> Vec<ProxyFenceKind> {
    let mut out = Vec::new();
    // Two generic virtual addresses of one location are aliases.
    let generic = |a: &&crate::ir::Address| a.kind == crate::ir::AddressKind::Generic;
    let aliased = p.addresses.iter().filter(generic).any(|a| {
        p.addresses
            .iter()
            .filter(generic)
            .any(|b| b.loc == a.loc && b.va != a.va)
    });
    if aliased {
        out.push(ProxyFenceKind::Alias);
    }
    for (proxy, kind) in [
        (Proxy::Texture, ProxyFenceKind::Texture),
        (Proxy::Surface, ProxyFenceKind::Surface),
        (Proxy::Constant, ProxyFenceKind::Constant),
    ] {
        let used = p
            .threads
            .iter()
            .flat_map(|t| &t.code)
            .any(|i| i.access().is_some_and(|a| a.proxy == proxy));
        if used {
            out.push(kind);
        }
    }
    let bulk = p.threads.iter().flat_map(|t| &t.code).any(|i| {
        matches!(
            i,
            Instr::AsyncCopy {
                kind: AsyncKind::Bulk | AsyncKind::ReduceBulk(_),
                ..
            }
        )
    });
    if bulk {
        out.push(ProxyFenceKind::Async(Some(SpaceQual::SharedCta)));
        out.push(ProxyFenceKind::Async(Some(SpaceQual::Global)));
        out.push(ProxyFenceKind::Async(None));
    }
    out
}

/// Instructions that touch memory or synchronise (not register moves or branches).
fn effectful(i: &Instr) -> bool {
    !matches!(
        i,
        Instr::Mov { .. } | Instr::Arith { .. } | Instr::Branch { .. }
    )
}

fn text_of(p: &Program, t: usize, i: &Instr) -> String {
    print::instr(p, &p.threads[t], i)
}

/// Where each instruction of a test is in its source, to name a site
/// unambiguously: `at[thread][pc]`, `12:3` (line and column of a litmus
/// file) or, for a kernel, the PTX line and column and the CUDA line
/// (`45:5, splitk.cu:17`). Empty, or an empty entry: not known.
pub type Positions = Vec<Vec<String>>;

/// Instruction `pc` of thread `t` in backquotes with its position in the
/// source (`` `fence.sc.gpu` at 12:3 ``) when `at` has one, otherwise as
/// [`quoted`] names it.
pub fn quoted_at(p: &Program, t: usize, pc: usize, at: &Positions) -> String {
    match at.get(t).and_then(|v| v.get(pc)).filter(|s| !s.is_empty()) {
        Some(pos) => format!("`{}` at {pos}", text_of(p, t, &p.threads[t].code[pc])),
        None => quoted(p, t, pc),
    }
}

/// Instruction `pc` of thread `t` in backquotes, with which one it is when
/// the thread has several with the same text (`` `fence.sc.gpu` (2nd of
/// 2) ``): a change must name its site unambiguously.
pub(super) fn quoted(p: &Program, t: usize, pc: usize) -> String {
    let code = &p.threads[t].code;
    let text = text_of(p, t, &code[pc]);
    let same: Vec<usize> = (0..code.len())
        .filter(|&k| text_of(p, t, &code[k]) == text)
        .collect();
    if same.len() < 2 {
        return format!("`{text}`");
    }
    let k = same.iter().position(|&k| k == pc).unwrap_or(0) + 1;
    let nth = match k {
        1 => "1st".to_string(),
        2 => "2nd".to_string(),
        3 => "3rd".to_string(),
        k => format!("{k}th"),
    };
    format!("`{text}` ({nth} of {})", same.len())
}

// ---- strengthening ----------------------------------------------------------------

/// Every site where a fix may strengthen `p`.
pub fn strengthening_sites(p: &Program) -> Vec<Site> {
    let scopes = useful_scopes(p);
    let proxy_fences = useful_proxy_fences(p);
    let mut out = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        let name = th.name.clone();
        let eff: Vec<usize> = (0..th.code.len())
            .filter(|&i| effectful(&th.code[i]))
            .collect();
        // Fences between two effectful instructions.
        for &pos in eff.iter().skip(1) {
            let before = quoted(p, t, pos);
            let mut vs = Vec::new();
            for sem in [FenceSem::AcqRel, FenceSem::Sc] {
                for &s in &scopes {
                    let instr = Instr::Fence {
                        sem,
                        scope: s,
                        restrict: None,
                    };
                    let (r, inc) = fence_rank(sem);
                    vs.push(Variant {
                        text: format!(
                            "insert `{}` in {name} before {before}",
                            text_of(p, t, &instr)
                        ),
                        cost: fence_cost(sem, s),
                        action: Action::Insert {
                            thread: t,
                            pos,
                            instr,
                        },
                        key: (r, scope_rank(Some(s))),
                        incomparable: inc,
                    });
                }
            }
            vs.sort_by_key(|v| (v.key, v.cost));
            out.push(Site {
                thread_name: name.clone(),
                variants: vs,
                weakening: false,
                repair: false,
                group_barrier: false,
            });
            // One site per proxy, so that each site's variants form a chain
            // whose last is the strongest (the async space-limited fences are
            // both weaker than the full one).
            let mut kinds: Vec<Vec<ProxyFenceKind>> = Vec::new();
            for &k in &proxy_fences {
                match kinds.iter_mut().find(|g| g[0].proxy() == k.proxy()) {
                    Some(g) => g.push(k),
                    None => kinds.push(vec![k]),
                }
            }
            for group in kinds {
                let vs = group
                    .iter()
                    .map(|&k| {
                        let instr = Instr::ProxyFence { kind: k };
                        Variant {
                            text: format!(
                                "insert `{}` in {name} before {before}",
                                text_of(p, t, &instr)
                            ),
                            cost: proxy_fence_cost(k),
                            action: Action::Insert {
                                thread: t,
                                pos,
                                instr,
                            },
                            key: (0, 0),
                            incomparable: None,
                        }
                    })
                    .collect();
                out.push(Site {
                    thread_name: name.clone(),
                    variants: vs,
                    weakening: false,
                    repair: false,
                    group_barrier: false,
                });
            }
        }
        tensor_fence_sites(p, t, &eff, &mut out);
        // Stronger semantics and wider scopes on what is there.
        for (pc, i) in th.code.iter().enumerate() {
            let vs = stronger(p, t, pc, i, &scopes);
            if !vs.is_empty() {
                out.push(Site {
                    thread_name: name.clone(),
                    variants: vs,
                    weakening: false,
                    repair: false,
                    group_barrier: false,
                });
            }
        }
    }
    out
}

/// What a tensor-core fence costs: an ordering point of the issuing
/// thread for the tensor core's queue, with no `MEMBAR` (`docs/fix.md`).
const TENSOR_FENCE_COST: u32 = 2;

/// The tensor-core fences a fix may insert in thread `t` (`eff`: its
/// instructions that touch memory or synchronise), each a site of one
/// variant (`docs/tensor-core.md`, PTX ISA §9.7.16.6 and §9.7.15):
///
/// * `tcgen05.fence::after_thread_sync` after a thread synchronisation and
///   before an asynchronous tcgen05 operation (`mma`, `cp`, `ld`, `st`):
///   without it the operation is not ordered after the synchronisation;
/// * `tcgen05.fence::before_thread_sync` before a thread synchronisation
///   that follows an asynchronous tcgen05 operation;
/// * `wgmma.fence` before a `wgmma.mma_async` that follows an earlier
///   access of the thread.
///
/// Each only adds ordering (an operation's agent awaits one more point), so
/// the search's monotonicity holds. A position right after the same fence
/// is left out (a second one orders nothing more).
fn tensor_fence_sites(p: &Program, t: usize, eff: &[usize], out: &mut Vec<Site>) {
    let th = &p.threads[t];
    let code = &th.code;
    let tc = |pc: usize| match &code[pc] {
        Instr::Tensor { op } => Some(op),
        _ => None,
    };
    let tcgen_async = |pc: usize| {
        matches!(
            tc(pc),
            Some(TcOp::Mma { .. } | TcOp::Cp { .. } | TcOp::Ld { .. } | TcOp::St { .. })
        )
    };
    let wgmma = |pc: usize| matches!(tc(pc), Some(TcOp::Wgmma { .. }));
    if !(0..code.len()).any(|pc| tcgen_async(pc) || wgmma(pc)) {
        return;
    }
    // A thread synchronisation a tcgen05 fence pairs with: a barrier, an
    // mbarrier operation, or an access with release or acquire semantics.
    let syncs = |pc: usize| match &code[pc] {
        Instr::Barrier { .. } | Instr::ClusterBarrier { .. } => true,
        Instr::Mbar { .. } | Instr::MbarWait { .. } => true,
        i => i
            .access()
            .is_some_and(|a| matches!(a.sem, Sem::Acquire | Sem::Release | Sem::AcqRel)),
    };
    let fence_before = |pos: usize, kind: TcFence| {
        eff.iter()
            .rev()
            .find(|&&k| k < pos)
            .is_some_and(|&k| matches!(tc(k), Some(TcOp::Fence { kind: k2 }) if *k2 == kind))
    };
    let name = th.name.clone();
    let mut push = |pos: usize, kind: TcFence| {
        let same = |k: usize| matches!(tc(k), Some(TcOp::Fence { kind: k2 }) if *k2 == kind);
        if fence_before(pos, kind) || (pos < code.len() && same(pos)) {
            return;
        }
        let instr = Instr::Tensor {
            op: TcOp::Fence { kind },
        };
        let before = quoted(p, t, pos);
        out.push(Site {
            thread_name: name.clone(),
            variants: vec![Variant {
                text: format!(
                    "insert `{}` in {name} before {before}",
                    text_of(p, t, &instr)
                ),
                cost: TENSOR_FENCE_COST,
                action: Action::Insert {
                    thread: t,
                    pos,
                    instr,
                },
                key: (0, 0),
                incomparable: None,
            }],
            weakening: false,
            repair: false,
            group_barrier: false,
        });
    };
    for (k, &pos) in eff.iter().enumerate().skip(1) {
        let earlier = &eff[..k];
        let later = &eff[k..];
        if earlier.iter().any(|&e| syncs(e)) && later.iter().any(|&l| tcgen_async(l)) {
            push(pos, TcFence::AfterThreadSync);
        }
        if syncs(pos) && earlier.iter().any(|&e| tcgen_async(e)) {
            push(pos, TcFence::BeforeThreadSync);
        }
        // `wgmma.fence` orders later MMAs after the thread's earlier
        // instructions other than tensor-core ones.
        if later.iter().any(|&l| wgmma(l)) && earlier.iter().any(|&e| tc(e).is_none()) {
            push(pos, TcFence::Wgmma);
        }
    }
}

/// Which (semantics rank, scope rank) pairs qualify, given the current ones.
type Keep = dyn Fn(SemRank, u8, SemRank, u8) -> bool;

/// A semantics' rank and, for acquire and release, its incomparable class.
type SemRank = (u8, Option<u8>);

/// The variants of instruction `i` with other semantics or scopes, `keep`
/// saying which (semantics rank, scope rank) pairs qualify.
fn variants_of(
    p: &Program,
    t: usize,
    pc: usize,
    i: &Instr,
    scopes: &[Scope],
    keep: &Keep,
    at: &Positions,
) -> Vec<Variant> {
    let name = &p.threads[t].name;
    let old = quoted_at(p, t, pc, at);
    let mut out = Vec::new();
    let mut push = |instr: Instr, cost: u32, rank: (u8, Option<u8>), sc: u8| {
        out.push(Variant {
            text: format!("{name} {old} → `{}`", text_of(p, t, &instr)),
            cost,
            action: Action::Replace {
                thread: t,
                pc,
                instr,
            },
            key: (rank.0, sc),
            incomparable: rank.1,
        });
    };
    match i {
        Instr::Load { access, .. } | Instr::Store { access, .. } | Instr::Rmw { access, .. }
            if access.proxy == Proxy::Generic && access.sem != Sem::Volatile =>
        {
            let red = matches!(i, Instr::Rmw { dst: None, .. });
            let sems: &[Sem] = match i {
                Instr::Load { .. } => &[Sem::Weak, Sem::Relaxed, Sem::Acquire],
                Instr::Store { .. } => &[Sem::Weak, Sem::Relaxed, Sem::Release],
                _ if red => &[Sem::Relaxed, Sem::Release],
                _ => &[Sem::Relaxed, Sem::Acquire, Sem::Release, Sem::AcqRel],
            };
            let cur = (sem_rank(access.sem), scope_rank(access.scope));
            let old_cost = access_cost(access.sem, access.scope);
            for &sem in sems {
                let scs: Vec<Option<Scope>> = if sem == Sem::Weak {
                    vec![None]
                } else {
                    with_current(scopes, access.scope)
                };
                for sc in scs {
                    let rank = sem_rank(sem);
                    let r = scope_rank(sc);
                    if (sem, sc) == (access.sem, access.scope) || !keep(cur.0, cur.1, rank, r) {
                        continue;
                    }
                    let mut instr = i.clone();
                    match &mut instr {
                        Instr::Load { access, .. }
                        | Instr::Store { access, .. }
                        | Instr::Rmw { access, .. } => {
                            access.sem = sem;
                            access.scope = sc;
                        }
                        _ => unreachable!(),
                    }
                    let c = access_cost(sem, sc).abs_diff(old_cost).max(1);
                    push(instr, c, rank, r);
                }
            }
        }
        Instr::Fence {
            sem,
            scope,
            restrict: None,
        } => {
            let cur = (fence_rank(*sem), scope_rank(Some(*scope)));
            let old_cost = fence_cost(*sem, *scope);
            for s2 in [
                FenceSem::Acquire,
                FenceSem::Release,
                FenceSem::AcqRel,
                FenceSem::Sc,
            ] {
                for sc in with_current(scopes, Some(*scope)).into_iter().flatten() {
                    let rank = fence_rank(s2);
                    let r = scope_rank(Some(sc));
                    if (s2, sc) == (*sem, *scope) || !keep(cur.0, cur.1, rank, r) {
                        continue;
                    }
                    let instr = Instr::Fence {
                        sem: s2,
                        scope: sc,
                        restrict: None,
                    };
                    let c = fence_cost(s2, sc).abs_diff(old_cost).max(1);
                    push(instr, c, rank, r);
                }
            }
        }
        Instr::MbarWait { sem, scope, .. } => {
            let cur = (sem_rank(*sem), scope_rank(Some(*scope)));
            for s2 in [Sem::Relaxed, Sem::Acquire] {
                for sc in [Scope::Cta, Scope::Cluster] {
                    let rank = sem_rank(s2);
                    let r = scope_rank(Some(sc));
                    if (s2, sc) == (*sem, *scope) || !keep(cur.0, cur.1, rank, r) {
                        continue;
                    }
                    let mut instr = i.clone();
                    if let Instr::MbarWait { sem, scope, .. } = &mut instr {
                        *sem = s2;
                        *scope = sc;
                    }
                    let c = access_cost(s2, Some(sc))
                        .abs_diff(access_cost(cur_sem(i), Some(*scope)))
                        .max(1);
                    push(instr, c, rank, r);
                }
            }
        }
        Instr::Mbar {
            op: MbarOp::Arrive | MbarOp::ArriveExpectTx,
            sem,
            scope,
            ..
        } => {
            let cur = (sem_rank(*sem), scope_rank(Some(*scope)));
            for s2 in [Sem::Relaxed, Sem::Release] {
                for sc in [Scope::Cta, Scope::Cluster] {
                    let rank = sem_rank(s2);
                    let r = scope_rank(Some(sc));
                    if (s2, sc) == (*sem, *scope) || !keep(cur.0, cur.1, rank, r) {
                        continue;
                    }
                    let mut instr = i.clone();
                    if let Instr::Mbar { sem, scope, .. } = &mut instr {
                        *sem = s2;
                        *scope = sc;
                    }
                    let c = access_cost(s2, Some(sc))
                        .abs_diff(access_cost(cur_sem(i), Some(cur_scope(i))))
                        .max(1);
                    push(instr, c, rank, r);
                }
            }
        }
        _ => {}
    }
    out
}

/// The useful scopes and the instruction's own.
fn with_current(scopes: &[Scope], cur: Option<Scope>) -> Vec<Option<Scope>> {
    let mut out: Vec<Option<Scope>> = scopes.iter().map(|s| Some(*s)).collect();
    if cur.is_some() && !out.contains(&cur) {
        out.push(cur);
        out.sort();
    }
    out
}

fn cur_sem(i: &Instr) -> Sem {
    match i {
        Instr::MbarWait { sem, .. } | Instr::Mbar { sem, .. } => *sem,
        _ => Sem::Relaxed,
    }
}

fn cur_scope(i: &Instr) -> Scope {
    match i {
        Instr::MbarWait { scope, .. } | Instr::Mbar { scope, .. } => *scope,
        _ => Scope::Cta,
    }
}

/// `a ≤ b` in the semantics order, (rank, incomparable class).
fn sem_leq(a: (u8, Option<u8>), b: (u8, Option<u8>)) -> bool {
    a.0 <= b.0 && !(a.1.is_some() && b.1.is_some() && a.1 != b.1) && (a.0 < b.0 || a.1 == b.1)
}

fn stronger(p: &Program, t: usize, pc: usize, i: &Instr, scopes: &[Scope]) -> Vec<Variant> {
    let mut vs = variants_of(
        p,
        t,
        pc,
        i,
        scopes,
        &|cs, csc, s, sc| sem_leq(cs, s) && csc <= sc,
        &Positions::new(),
    );
    vs.sort_by_key(|v| (v.key, v.cost));
    vs
}

// ---- weakening ------------------------------------------------------------------------

/// Every site where `p` may be weakened: each fence (weaker, narrower, or
/// removed), each proxy fence (removed, or limited to one state space), each
/// strong access or mbarrier operation (weaker or narrower). Each change
/// names its instruction with its position in `at` (when known).
pub fn weakening_sites(p: &Program, at: &Positions) -> Vec<Site> {
    let mut out = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        if th.agent.is_some() {
            continue;
        }
        let name = th.name.clone();
        for (pc, i) in th.code.iter().enumerate() {
            let mut vs = variants_of(
                p,
                t,
                pc,
                i,
                &Scope::ALL,
                &|cs, csc, s, sc| sem_leq(s, cs) && sc <= csc,
                at,
            );
            // Furthest (weakest) last.
            vs.sort_by_key(|v| (std::cmp::Reverse(v.key), v.cost));
            let removal = match i {
                Instr::Fence {
                    restrict: None,
                    sem,
                    scope,
                } => Some(fence_cost(*sem, *scope)),
                Instr::ProxyFence { kind } => Some(proxy_fence_cost(*kind)),
                _ => None,
            };
            if let Instr::ProxyFence {
                kind: ProxyFenceKind::Async(None),
            } = i
            {
                for q in [SpaceQual::SharedCta, SpaceQual::Global] {
                    let instr = Instr::ProxyFence {
                        kind: ProxyFenceKind::Async(Some(q)),
                    };
                    vs.push(Variant {
                        text: format!(
                            "{name} {} → `{}`",
                            quoted_at(p, t, pc, at),
                            text_of(p, t, &instr)
                        ),
                        cost: 1,
                        action: Action::Replace {
                            thread: t,
                            pc,
                            instr,
                        },
                        key: (0, 0),
                        incomparable: Some(q as u8),
                    });
                }
            }
            if let Some(c) = removal {
                vs.push(Variant {
                    text: format!("remove {name} {}", quoted_at(p, t, pc, at)),
                    cost: c,
                    action: Action::Remove { thread: t, pc },
                    key: (0, 0),
                    incomparable: None,
                });
            }
            if !vs.is_empty() {
                out.push(Site {
                    thread_name: name.clone(),
                    variants: vs,
                    weakening: true,
                    repair: false,
                    group_barrier: false,
                });
            }
        }
    }
    out
}

// ---- applying ---------------------------------------------------------------------------

/// `p` with the chosen variant at each chosen site.
pub fn apply(p: &Program, sites: &[Site], choice: &[(usize, usize)]) -> Program {
    let mut q = p.clone();
    fn flatten<'a>(a: &'a Action, out: &mut Vec<&'a Action>) {
        match a {
            Action::Group(all) => all.iter().for_each(|b| flatten(b, out)),
            _ => out.push(a),
        }
    }
    let mut edits: Vec<&Action> = Vec::new();
    for &(s, k) in choice {
        flatten(&sites[s].variants[k].action, &mut edits);
    }
    // Replacements keep positions; then insertions and removals from the end.
    for a in &edits {
        if let Action::Replace { thread, pc, instr } = a {
            q.threads[*thread].code[*pc] = instr.clone();
        }
    }
    let at = |a: &Action| match a {
        Action::Insert { thread, pos, .. } => (*thread, *pos, 1),
        Action::Remove { thread, pc } => (*thread, *pc, 0),
        Action::Replace { thread, pc, .. } => (*thread, *pc, 2),
        Action::Group(_) => unreachable!("groups are flattened"),
    };
    edits.sort_by_key(|a| std::cmp::Reverse(at(a)));
    for a in edits {
        match a {
            Action::Insert { thread, pos, instr } => insert(&mut q, *thread, *pos, instr.clone()),
            Action::Remove { thread, pc } => remove(&mut q, *thread, *pc),
            Action::Replace { .. } | Action::Group(_) => {}
        }
    }
    q
}

/// The `Thread::sites` entry of inserted instructions: one value no PTX
/// instruction has, so that an inserted `.aligned` barrier is the same
/// instruction in every lane it was inserted in (they are inserted together)
/// and never the same as one of the kernel's own.
pub const INSERTED_SITE: usize = usize::MAX;

/// Insert `instr` at `pos` of thread `t`, keeping every pc that names an
/// instruction (branch targets, `elect.sync` sites, tensor-core results,
/// kernel sites, labels) on the same instruction.
pub(super) fn insert(q: &mut Program, t: usize, pos: usize, instr: Instr) {
    // `elect.sync` sites name their instructions by pc.
    for e in q.elects.iter_mut().filter(|e| e.thread == t && e.pc >= pos) {
        e.pc += 1;
    }
    // A kernel's threads name the PTX instruction of every pc: keep the
    // list aligned with the code. A lane whose specialised code is empty
    // (it skips every branch) has no list yet, and still needs one: its
    // inserted barrier must be the same instruction as its warp's others.
    let kernel = q.threads.iter().any(|th| !th.sites.is_empty());
    let th = &mut q.threads[t];
    th.code.insert(pos, instr);
    if kernel && th.sites.len() + 1 == th.code.len() {
        th.sites.insert(pos.min(th.sites.len()), INSERTED_SITE);
    }
    for i in th.code.iter_mut() {
        match i {
            Instr::Branch { target, .. } if *target >= pos => *target += 1,
            // A tensor-core result names its operation by pc.
            Instr::Tensor {
                op: TcOp::Result { from, .. },
            } if *from >= pos => *from += 1,
            _ => {}
        }
    }
    for l in th.labels.iter_mut() {
        if l.at > pos {
            l.at += 1;
        }
    }
}

fn remove(q: &mut Program, t: usize, pc: usize) {
    for e in q.elects.iter_mut().filter(|e| e.thread == t && e.pc > pc) {
        e.pc -= 1;
    }
    let th = &mut q.threads[t];
    th.code.remove(pc);
    if pc < th.sites.len() {
        th.sites.remove(pc);
    }
    for i in th.code.iter_mut() {
        match i {
            Instr::Branch { target, .. } if *target > pc => *target -= 1,
            Instr::Tensor {
                op: TcOp::Result { from, .. },
            } if *from > pc => *from -= 1,
            _ => {}
        }
    }
    for l in th.labels.iter_mut() {
        if l.at > pc {
            l.at -= 1;
        }
    }
}
