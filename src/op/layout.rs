//! The static layout of the machine: every memory event the program can
//! perform gets a fixed *slot* (an index into 128-bit sets), so that views,
//! coherence and reads-from are small bit sets.
//!
//! Slots `0..locations` are the initial versions. Then each instruction that
//! touches memory or orders it (load, store, RMW, fence, proxy fence,
//! barrier) gets one slot per possible execution: one, or `(bound+1)^depth`
//! inside `depth` nested bounded loops. The k-th execution of instruction
//! `pc` by thread `t` uses slot `base[t][pc] + k`.

use crate::ir::{
    FenceSem, Instr, LocId, Placement, Program, Proxy, ProxyFenceKind, Scope, Sem, ThreadId, mbar,
};
use crate::model::loops::LoopInfo;
use crate::model::sync::{ProxyRole, Publish, placement_of, proxy_role};
use crate::rel::{Bits, bit};

/// What a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    /// An initial version.
    Init,
    /// A load.
    Load,
    /// A store.
    Store,
    /// An RMW (read and write halves in one slot).
    Rmw,
    /// A thread fence.
    Fence(FenceSem),
    /// A proxy fence.
    ProxyFence(ProxyFenceKind),
    /// A barrier (its arrival; the wait has no slot of its own).
    Barrier,
    /// A point other threads may wait for (lowered).
    Signal,
    /// A wait for other threads' signals (lowered).
    Await,
}

/// Static facts about a slot.
#[derive(Clone, Debug)]
pub struct SlotInfo {
    /// Executing thread (`None` for initial versions).
    pub thread: Option<ThreadId>,
    /// Instruction.
    pub pc: usize,
    /// Which execution of the instruction (0 for straight-line code).
    pub iter: usize,
    /// What it is.
    pub kind: SlotKind,
    /// Location (memory slots).
    pub loc: LocId,
    /// Virtual address (memory slots).
    pub va: usize,
    /// Proxy (memory slots; generic otherwise).
    pub proxy: Proxy,
    /// Semantics of the read half.
    pub read_sem: Sem,
    /// Semantics of the write half.
    pub write_sem: Sem,
    /// Scope (strong accesses and fences).
    pub scope: Option<Scope>,
    /// Index of the thread's CTA in [`Layout::ctas`].
    pub cta: usize,
    /// Read half of a `red`.
    pub red: bool,
    /// Where the event is performed.
    pub placement: Placement,
    /// An mbarrier wait: how it tests the state (it acquires only if it succeeds).
    pub wait: Option<mbar::Test>,
    /// Its proxy-fence role, if any.
    pub role: Option<ProxyRole>,
}

impl SlotInfo {
    /// A load or RMW.
    pub fn reads(&self) -> bool {
        matches!(self.kind, SlotKind::Load | SlotKind::Rmw)
    }
    /// A store, RMW or initial version.
    pub fn writes(&self) -> bool {
        matches!(self.kind, SlotKind::Store | SlotKind::Rmw | SlotKind::Init)
    }
    /// A memory access (not a fence or barrier).
    pub fn is_mem(&self) -> bool {
        self.reads() || self.writes()
    }
    /// Strong (fences always).
    pub fn strong(&self) -> bool {
        match self.kind {
            SlotKind::Load => self.read_sem != Sem::Weak,
            SlotKind::Store => self.write_sem != Sem::Weak,
            SlotKind::Rmw | SlotKind::Init | SlotKind::Fence(_) => true,
            _ => false,
        }
    }
    /// Heads a release pattern by itself (a release write).
    pub fn release_write(&self) -> bool {
        matches!(self.kind, SlotKind::Store | SlotKind::Rmw) && self.write_sem.is_release()
    }
    /// A release-capable fence.
    pub fn release_fence(&self) -> bool {
        matches!(self.kind, SlotKind::Fence(f) if f.releases())
    }
    /// Ends an acquire pattern as an acquire read.
    pub fn acquire_read(&self) -> bool {
        self.reads() && self.read_sem.is_acquire() && !self.red
    }
    /// An acquire read whatever value it returns (not an mbarrier wait).
    pub fn always_acquires(&self) -> bool {
        self.acquire_read() && self.wait.is_none()
    }
    /// An acquire-capable fence.
    pub fn acquire_fence(&self) -> bool {
        matches!(self.kind, SlotKind::Fence(f) if f.acquires())
    }
    /// A strong read that may start an acquire pattern (not the read of a `red`).
    pub fn pattern_read(&self) -> bool {
        self.reads() && self.strong() && !self.red
    }
}

/// Why a program does not fit a machine of a given width: the event slots
/// it needs. A caller that chose the width too narrow builds the machine
/// again at `rel::with_width!(needed)`; past [`crate::rel::MAX_EVENTS`]
/// (`needed` is then one more than that: counting stops there) the run ends
/// incomplete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooManySlots {
    /// Slots the program needs (at least).
    pub needed: usize,
    /// Slots the machine's sets hold.
    pub capacity: usize,
}

impl std::fmt::Display for TooManySlots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.needed > crate::rel::MAX_EVENTS {
            write!(
                f,
                "the test needs more than {} event slots (the widest event sets this build holds)",
                crate::rel::MAX_EVENTS
            )
        } else {
            write!(
                f,
                "the test needs {} event slots; this machine holds at most {}",
                self.needed, self.capacity
            )
        }
    }
}

/// The static layout of a program.
pub struct Layout<S: Bits = u128> {
    /// Slot facts.
    pub slots: Vec<SlotInfo>,
    /// `base[t][pc]`: first slot of instruction `pc` of thread `t`.
    pub base: Vec<Vec<Option<usize>>>,
    /// `execs[t][pc]`: how many slots instruction `pc` has.
    pub execs: Vec<Vec<usize>>,
    /// Distinct CTAs (gpu, cta), in order of first thread (then of first slot).
    pub ctas: Vec<(u32, u32)>,
    /// Placement of each thread.
    pub placement: Vec<Placement>,
    /// What each release head publishes (all slots unless restricted).
    pub publish: Vec<S>,
    /// Slots whose view some [`Instr::Await`] takes on.
    pub snapshot_points: S,
    /// Per slot with a proxy-fence role: the slots of the locations it acts on.
    pub role_space: Vec<S>,
    /// Loop facts per thread.
    pub loops: Vec<LoopInfo>,
    /// `ms[s]`: slots morally strong with `s` (symmetric).
    pub ms: Vec<S>,
    /// Slots of each location.
    pub loc_slots: Vec<S>,
    /// Slots of each virtual address (indexed by the owning address id).
    pub va_slots: Vec<S>,
    /// Slots of each proxy.
    pub proxy_slots: [S; 5],
    /// Slots of each CTA.
    pub cta_slots: Vec<S>,
    /// Reads (loads and RMWs).
    pub reads: S,
    /// Writes (stores, RMWs, initial versions).
    pub writes: S,
    /// Initial versions.
    pub inits: S,
    /// `fence.sc` slots.
    pub fence_sc: S,
    /// Slots of each thread.
    pub thread_slots: Vec<S>,
    /// The (CTA, proxy) caches some proxy fence can invalidate: only these
    /// carry line tokens in views (most programs have none).
    pub line_pairs: Vec<(usize, Proxy)>,
}

impl<S: Bits> Layout<S> {
    /// Lay out `p` with loop bound `bound`; `retry`: recognise retry loops
    /// ([`crate::model::loops`]).
    pub fn new(p: &Program, bound: u32, retry: bool) -> Result<Layout<S>, TooManySlots> {
        let mut ctas: Vec<(u32, u32)> = Vec::new();
        for (t, th) in p.threads.iter().enumerate() {
            let k = (th.placement.gpu, th.placement.cta);
            if !ctas.contains(&k) {
                ctas.push(k);
            }
            for pc in 0..th.code.len() {
                let pl = placement_of(p, t, pc);
                if !ctas.contains(&(pl.gpu, pl.cta)) {
                    ctas.push((pl.gpu, pl.cta));
                }
            }
        }
        let mut slots = Vec::new();
        for (l, _) in p.locations.iter().enumerate() {
            let owner = p
                .addresses
                .iter()
                .position(|a| a.loc == l && a.alias_of.is_none())
                .unwrap_or(0);
            slots.push(SlotInfo {
                thread: None,
                pc: 0,
                iter: 0,
                kind: SlotKind::Init,
                loc: l,
                va: owner,
                proxy: Proxy::Generic,
                read_sem: Sem::Relaxed,
                write_sem: Sem::Relaxed,
                scope: Some(Scope::Sys),
                cta: usize::MAX,
                red: false,
                placement: Placement {
                    gpu: u32::MAX,
                    cluster: u32::MAX,
                    cta: u32::MAX,
                    warp: None,
                    grid: 0,
                },
                wait: None,
                role: None,
            });
        }
        let mut base = Vec::new();
        let mut execs = Vec::new();
        let mut loops = Vec::new();
        for (t, th) in p.threads.iter().enumerate() {
            let info = LoopInfo::of(p, t, retry);
            let n = th.code.len();
            // Executions per instruction: (limit+1) per enclosing loop whose
            // back edge may be taken (`limit`: the bound, or the iterations
            // a spin loop keeps).
            let mut ex = vec![1usize; n];
            for (b, i) in th.code.iter().enumerate() {
                if let Instr::Branch { target, .. } = i {
                    if info.counts(b) {
                        let (limit, _) = info.limit(b, bound);
                        for e in &mut ex[*target..=b] {
                            *e = e.saturating_mul(limit as usize + 1);
                        }
                    }
                }
            }
            let mut b = vec![None; n];
            for (pc, i) in th.code.iter().enumerate() {
                let Some(kind) = slot_kind(i) else { continue };
                let placement = placement_of(p, t, pc);
                let cta = ctas
                    .iter()
                    .position(|c| *c == (placement.gpu, placement.cta))
                    .unwrap();
                b[pc] = Some(slots.len());
                for k in 0..ex[pc] {
                    // Loop bounds multiply: stop counting once no width
                    // could hold the slots.
                    if slots.len() >= crate::rel::MAX_EVENTS {
                        return Err(TooManySlots {
                            needed: slots.len() + 1,
                            capacity: S::CAPACITY,
                        });
                    }
                    let mut s = SlotInfo {
                        thread: Some(t),
                        pc,
                        iter: k,
                        kind,
                        loc: usize::MAX,
                        va: usize::MAX,
                        proxy: Proxy::Generic,
                        read_sem: Sem::Weak,
                        write_sem: Sem::Weak,
                        scope: None,
                        cta,
                        red: false,
                        placement,
                        wait: None,
                        role: proxy_role(i, placement),
                    };
                    match i {
                        Instr::Load { access, .. }
                        | Instr::Store { access, .. }
                        | Instr::Rmw { access, .. } => {
                            let a = &p.addresses[access.addr];
                            s.loc = a.loc;
                            s.va = a.va;
                            s.proxy = access.proxy;
                            s.scope = access.scope;
                            let sem = if access.sem == Sem::Volatile {
                                Sem::Relaxed
                            } else {
                                access.sem
                            };
                            match i {
                                Instr::Load { .. } => s.read_sem = sem,
                                Instr::Store { .. } => s.write_sem = sem,
                                Instr::Rmw { dst, .. } => {
                                    let (r, w) =
                                        crate::ax::unfold::split_rmw_sem(sem, dst.is_none());
                                    s.read_sem = r;
                                    s.write_sem = w;
                                    s.red = dst.is_none();
                                }
                                _ => {}
                            }
                        }
                        Instr::MbarWait {
                            addr,
                            phase,
                            sem,
                            scope,
                            ..
                        } => {
                            let a = &p.addresses[*addr];
                            s.loc = a.loc;
                            s.va = a.va;
                            s.scope = Some(*scope);
                            s.read_sem = *sem;
                            s.wait = Some(mbar::Test::of(phase).0);
                        }
                        Instr::Fence { scope, .. } | Instr::ProxyFenceUni { scope, .. } => {
                            s.scope = Some(*scope)
                        }
                        _ => {}
                    }
                    slots.push(s);
                }
            }
            base.push(b);
            execs.push(ex);
            loops.push(info);
        }
        let n = slots.len();
        if n > S::CAPACITY {
            return Err(TooManySlots {
                needed: n,
                capacity: S::CAPACITY,
            });
        }
        let placement: Vec<Placement> = p.threads.iter().map(|t| t.placement).collect();
        let mut l = Layout {
            ms: vec![S::EMPTY; n],
            loc_slots: vec![S::EMPTY; p.locations.len()],
            va_slots: vec![S::EMPTY; p.addresses.len()],
            proxy_slots: [S::EMPTY; 5],
            publish: vec![S::FULL; n],
            snapshot_points: S::EMPTY,
            role_space: vec![S::EMPTY; n],
            cta_slots: vec![S::EMPTY; ctas.len()],
            reads: S::EMPTY,
            writes: S::EMPTY,
            inits: S::EMPTY,
            fence_sc: S::EMPTY,
            thread_slots: vec![S::EMPTY; p.threads.len()],
            line_pairs: Vec::new(),
            slots,
            base,
            execs,
            ctas,
            placement,
            loops,
        };
        for i in 0..n {
            let s = &l.slots[i];
            if s.is_mem() {
                l.loc_slots[s.loc] |= bit(i);
                l.va_slots[s.va] |= bit(i);
                l.proxy_slots[s.proxy as usize] |= bit(i);
            }
            if let Some(t) = s.thread {
                l.cta_slots[s.cta] |= bit(i);
                l.thread_slots[t] |= bit(i);
            }
            if s.reads() {
                l.reads |= bit(i);
            }
            if s.writes() {
                l.writes |= bit(i);
            }
            if s.kind == SlotKind::Init {
                l.inits |= bit(i);
            }
            if s.kind == SlotKind::Fence(FenceSem::Sc) {
                l.fence_sc |= bit(i);
            }
        }
        for s in &l.slots {
            if let Some(ProxyRole { proxy: Some(q), .. }) = s.role {
                if !l.line_pairs.contains(&(s.cta, q)) {
                    l.line_pairs.push((s.cta, q));
                }
            }
        }
        l.derive_lowered(p);
        for i in 0..n {
            for j in 0..n {
                if i != j && l.morally_strong(i, j) {
                    l.ms[i] |= bit(j);
                }
            }
        }
        Ok(l)
    }

    /// Restricted releases, snapshot points and proxy-fence spaces.
    fn derive_lowered(&mut self, p: &Program) {
        let n = self.slots.len();
        for h in 0..n {
            let sh = &self.slots[h];
            let Some(t) = sh.thread else { continue };
            if sh.release_write() || sh.release_fence() {
                let publish = Publish::of(p, t, sh.pc, sh.placement);
                if !publish.is_all() {
                    self.publish[h] = (0..n).fold(S::EMPTY, |m, x| {
                        let sx = &self.slots[x];
                        let loc = sx.is_mem().then_some(sx.loc);
                        if publish.admits(p, sx.thread, loc, sx.kind == SlotKind::Store) {
                            m | bit(x)
                        } else {
                            m
                        }
                    });
                }
            }
            if let Some(role) = sh.role {
                self.role_space[h] = (0..n).fold(S::EMPTY, |m, x| {
                    let sx = &self.slots[x];
                    if sx.is_mem() && role.space.contains(p, sx.loc) {
                        m | bit(x)
                    } else {
                        m
                    }
                });
            }
            if let Instr::Await { from } = &p.threads[t].code[sh.pc] {
                for pt in from {
                    let s = self
                        .slot(pt.thread, pt.pc, pt.exec)
                        .expect("awaited executions have slots");
                    self.snapshot_points |= bit(s);
                }
            }
        }
    }

    fn morally_strong(&self, i: usize, j: usize) -> bool {
        let (a, b) = (&self.slots[i], &self.slots[j]);
        if a.thread.is_none() || b.thread.is_none() {
            return a.is_mem() && b.is_mem() && a.loc == b.loc;
        }
        let orders = |s: &SlotInfo| s.is_mem() || matches!(s.kind, SlotKind::Fence(_));
        if !orders(a) || !orders(b) {
            return false;
        }
        let (pa, pb) = (a.placement, b.placement);
        let threads = a.thread == b.thread
            || (a.strong()
                && b.strong()
                && pa.includes(a.scope.unwrap_or(Scope::Sys), &pb)
                && pb.includes(b.scope.unwrap_or(Scope::Sys), &pa));
        threads && a.proxy == b.proxy && (!(a.is_mem() && b.is_mem()) || a.va == b.va)
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The slot of the `k`-th execution of `pc` in thread `t`.
    pub fn slot(&self, t: ThreadId, pc: usize, k: usize) -> Option<usize> {
        let b = self.base[t][pc]?;
        (k < self.execs[t][pc]).then_some(b + k)
    }

    /// Index of the line tokens of CTA `c`'s cache for proxy `q`, if any fence can touch it.
    pub fn line_pair(&self, c: usize, q: Proxy) -> Option<usize> {
        self.line_pairs
            .iter()
            .position(|&(pc, pq)| pc == c && pq == q)
    }

    /// Whether `a` and `b` are morally strong.
    pub fn ms(&self, a: usize, b: usize) -> bool {
        self.ms[a].has(b)
    }
}

fn slot_kind(i: &Instr) -> Option<SlotKind> {
    Some(match i {
        Instr::Load { .. } => SlotKind::Load,
        Instr::Store { .. } => SlotKind::Store,
        Instr::Rmw { .. } => SlotKind::Rmw,
        Instr::Fence { sem, .. } => SlotKind::Fence(*sem),
        Instr::ProxyFence { kind } => SlotKind::ProxyFence(*kind),
        Instr::Barrier { .. } => SlotKind::Barrier,
        Instr::MbarWait { .. } => SlotKind::Load,
        Instr::ProxyFenceUni { acquire, .. } => SlotKind::Fence(if *acquire {
            FenceSem::Acquire
        } else {
            FenceSem::Release
        }),
        Instr::Signal { .. } => SlotKind::Signal,
        Instr::Await { .. } => SlotKind::Await,
        _ => return None,
    })
}
