//! The static part of a candidate execution: the events of one path per
//! thread plus initial writes, and every relation that does not depend on
//! the witnesses (program order, moral strength, patterns, dependencies).

use crate::ir::{
    FenceSem, Instr, LocId, Placement, Program, Proxy, ProxyFenceKind, Scope, Sem, ThreadId, Value,
};
use crate::model::sync::{ProxyRole, Publish, placement_of, proxy_role};

use super::unfold::{Constraint, Expr, Path, PathEventKind, StuckKind, StuckPoint};
use crate::rel::{Bits, Rel, bit};

/// What an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A read (a load or the read half of an RMW).
    Read,
    /// A write (a store, the write half of an RMW, or an initial write).
    Write,
    /// A thread fence.
    Fence(FenceSem),
    /// A proxy fence.
    ProxyFence(ProxyFenceKind),
    /// A barrier arrival.
    BarArrive,
    /// A barrier wait.
    BarWait,
    /// A point other threads may wait for (lowered).
    Signal,
    /// A wait for other threads' signals (lowered).
    Await,
}

/// One event of a candidate execution.
#[derive(Clone, Debug)]
pub struct Event {
    /// Executing thread; `None` for an initial write.
    pub thread: Option<ThreadId>,
    /// The instruction it comes from.
    pub pc: usize,
    /// What it is.
    pub kind: Kind,
    /// Semantics (fences: `Relaxed`, they are strong; `Volatile` reads as relaxed).
    pub sem: Sem,
    /// Scope of strong events.
    pub scope: Option<Scope>,
    /// Proxy (generic for everything but non-generic memory accesses).
    pub proxy: Proxy,
    /// Virtual address (memory events).
    pub va: usize,
    /// Physical location (memory events).
    pub loc: LocId,
    /// Read half of a `red`.
    pub red: bool,
    /// Where the thread runs.
    pub placement: Placement,
}

impl Event {
    /// A read or write.
    pub fn is_mem(&self) -> bool {
        matches!(self.kind, Kind::Read | Kind::Write)
    }
    /// Strong in the sense of moral strength: fences always, accesses unless weak.
    pub fn is_strong(&self) -> bool {
        match self.kind {
            Kind::Read | Kind::Write => self.sem != Sem::Weak,
            Kind::Fence(_) => true,
            _ => false,
        }
    }
}

/// A barrier arrival of the candidate, with what decides its instance.
#[derive(Clone, Debug)]
pub struct BarrierEvent {
    /// The arrive event.
    pub arrive: usize,
    /// The wait event, for `bar.sync`.
    pub wait: Option<usize>,
    /// Expressions naming the barrier (evaluated once reads-from is known).
    pub id: Vec<Expr>,
    /// Thread count expression, if any.
    pub count: Option<Expr>,
    /// A `bar.sync` whose thread stops here for good (a stuck path): its
    /// phase must never complete.
    pub stuck: bool,
}

/// The static part of a candidate execution, with its event sets of width
/// `S` (chosen from its event count, [`crate::with_width!`]).
pub struct Graph<'p, S: Bits> {
    /// The program.
    pub program: &'p Program,
    /// Events: initial writes (one per location) first, then each thread's path.
    pub events: Vec<Event>,
    /// Index of each thread's first event.
    pub offset: Vec<usize>,
    /// Value written by each write (`None` for non-writes), over its thread's reads.
    pub value: Vec<Option<Expr>>,
    /// Reads, in program order thread by thread.
    pub reads: Vec<usize>,
    /// Writes of each location (initial write included).
    pub writes_of: Vec<S>,
    /// Initial writes.
    pub inits: S,
    /// Program order.
    pub po: Rel<S>,
    /// Program order between accesses to the same virtual address.
    pub po_loc: Rel<S>,
    /// Moral strength (symmetric).
    pub ms: Rel<S>,
    /// RMW read half → write half.
    pub rmw: Rel<S>,
    /// Syntactic dependencies: read → event that depends on its value.
    pub dep: Rel<S>,
    /// Release patterns: head → strong write.
    pub rp: Rel<S>,
    /// Acquire patterns: strong read → tail.
    pub ap: Rel<S>,
    /// `fence.sc` events.
    pub fence_sc: S,
    /// `fence.proxy.alias` events.
    pub alias_fences: S,
    /// Branch outcomes assumed, with their thread.
    pub constraints: Vec<(ThreadId, Constraint)>,
    /// Final register expressions per thread.
    pub final_regs: Vec<Vec<Expr>>,
    /// Barrier arrivals.
    pub barriers: Vec<BarrierEvent>,
    /// Signal → await synchronisation (agents' starts and completions).
    pub await_edges: Rel<S>,
    /// Release heads that publish only part of their causal past, with the
    /// events they publish.
    pub restricted: Vec<(usize, S)>,
    /// The proxy-fence role of each event, if it has one.
    pub proxy_role: Vec<Option<ProxyRole>>,
    /// mbarrier waits (which acquire only when they succeed), with the
    /// expression of their success over their thread's reads.
    pub cond_reads: Vec<(usize, Expr)>,
    /// Some thread's path was cut at the loop bound.
    pub truncated: bool,
    /// Per thread: where its path stops for good, for stuck paths.
    pub stuck: Vec<Option<StuckPoint>>,
    /// Reads that must read a coherence-maximal write (stuck paths' spinning
    /// iterations and failing blocking waits).
    pub latest: S,
    /// The events of stuck paths' spinning iterations (the iteration that
    /// repeats forever, `docs/loops.md`, "Fairness").
    pub spin_iter: S,
    /// Per thread: the last event of its path when that path spins.
    pub spin_last: Vec<Option<usize>>,
}

impl<'p, S: Bits> Graph<'p, S> {
    /// A projected run (`--project condition`): every final register that
    /// `observed[t][r]` does not name becomes the constant 0, so no read's
    /// value reaches the final state through it (`docs/oracle.md`,
    /// "Projection"). Only for the outcome search: a stuck path's registers
    /// still tell which barriers it may reach.
    pub fn project_final_regs(&mut self, observed: &[Vec<bool>]) {
        for (t, regs) in self.final_regs.iter_mut().enumerate() {
            for (r, e) in regs.iter_mut().enumerate() {
                if observed.get(t).and_then(|o| o.get(r)).copied() != Some(true) {
                    *e = Expr::Const(0);
                }
            }
        }
    }

    /// Build the candidate skeleton for one path per thread.
    pub fn new(program: &'p Program, paths: &[&Path]) -> Graph<'p, S> {
        let mut events = Vec::new();
        let mut value = Vec::new();
        let nlocs = program.locations.len();
        for (l, loc) in program.locations.iter().enumerate() {
            let owner = program
                .addresses
                .iter()
                .position(|a| a.loc == l && a.alias_of.is_none())
                .unwrap_or(0);
            events.push(Event {
                thread: None,
                pc: 0,
                kind: Kind::Write,
                sem: Sem::Relaxed,
                scope: Some(Scope::Sys),
                proxy: Proxy::Generic,
                va: owner,
                loc: l,
                red: false,
                placement: Placement {
                    gpu: u32::MAX,
                    cluster: u32::MAX,
                    cta: u32::MAX,
                    warp: None,
                    grid: 0,
                },
            });
            value.push(Some(Expr::Const(loc.init)));
        }
        let mut offset = Vec::new();
        let mut constraints = Vec::new();
        let mut final_regs = Vec::new();
        let mut barriers = Vec::new();
        let mut truncated = false;
        let mut dep_pairs = Vec::new();
        let mut cond_reads = Vec::new();
        let mut stuck = Vec::new();
        let mut latest = S::EMPTY;
        let mut spin_iter = S::EMPTY;
        let mut spin_last = vec![None; paths.len()];
        for (t, path) in paths.iter().enumerate() {
            let base = events.len();
            offset.push(base);
            truncated |= path.truncated;
            stuck.push(path.stuck.clone());
            if let Some(sp) = &path.stuck {
                latest |= sp.latest.to_bits::<S>(base);
                if matches!(sp.kind, StuckKind::Spin { .. }) && sp.iteration < path.events.len() {
                    for i in sp.iteration..path.events.len() {
                        spin_iter |= S::bit(base + i);
                    }
                    spin_last[t] = Some(base + path.events.len() - 1);
                }
            }
            let stuck_at_barrier = matches!(
                path.stuck,
                Some(StuckPoint {
                    kind: StuckKind::Barrier,
                    ..
                })
            );
            for (k, pe) in path.events.iter().enumerate() {
                let idx = events.len();
                for r in pe.deps.members() {
                    dep_pairs.push((base + r, idx));
                }
                let placement = placement_of(program, t, pe.pc);
                let mut ev = Event {
                    thread: Some(t),
                    pc: pe.pc,
                    kind: Kind::BarWait,
                    sem: Sem::Relaxed,
                    scope: None,
                    proxy: Proxy::Generic,
                    va: usize::MAX,
                    loc: usize::MAX,
                    red: false,
                    placement,
                };
                let mut val = None;
                match &pe.kind {
                    PathEventKind::Read {
                        access,
                        red,
                        cond_acq,
                        ..
                    } => {
                        ev.kind = Kind::Read;
                        ev.red = *red;
                        set_access(&mut ev, access, program);
                        if let Some(e) = cond_acq {
                            cond_reads.push((idx, e.clone()));
                        }
                    }
                    PathEventKind::Write { access, value, .. } => {
                        ev.kind = Kind::Write;
                        set_access(&mut ev, access, program);
                        val = Some(value.clone());
                    }
                    PathEventKind::Fence { sem, scope } => {
                        ev.kind = Kind::Fence(*sem);
                        ev.scope = Some(*scope);
                    }
                    PathEventKind::ProxyFence(k) => ev.kind = Kind::ProxyFence(*k),
                    PathEventKind::BarArrive { id, count, waits } => {
                        ev.kind = Kind::BarArrive;
                        // A stuck path ends with the arrive of the barrier it waits at.
                        let stuck = stuck_at_barrier && k + 1 == path.events.len();
                        barriers.push(BarrierEvent {
                            arrive: idx,
                            wait: (*waits && !stuck).then_some(idx + 1),
                            id: id.clone(),
                            count: count.clone(),
                            stuck,
                        });
                    }
                    PathEventKind::BarWait => ev.kind = Kind::BarWait,
                    PathEventKind::Signal => ev.kind = Kind::Signal,
                    PathEventKind::Await => ev.kind = Kind::Await,
                }
                events.push(ev);
                value.push(val);
            }
            constraints.extend(path.constraints.iter().map(|c| (t, c.clone())));
            final_regs.push(path.final_regs.clone());
        }
        let n = events.len();
        let mut g = Graph {
            program,
            events,
            offset,
            value,
            reads: Vec::new(),
            writes_of: vec![S::EMPTY; nlocs],
            inits: S::EMPTY,
            po: Rel::empty(n),
            po_loc: Rel::empty(n),
            ms: Rel::empty(n),
            rmw: Rel::empty(n),
            dep: Rel::empty(n),
            rp: Rel::empty(n),
            ap: Rel::empty(n),
            fence_sc: S::EMPTY,
            alias_fences: S::EMPTY,
            constraints,
            final_regs,
            barriers,
            await_edges: Rel::empty(n),
            restricted: Vec::new(),
            proxy_role: vec![None; n],
            cond_reads,
            truncated,
            stuck,
            latest,
            spin_iter,
            spin_last,
        };
        for (a, b) in dep_pairs {
            g.dep.add(a, b);
        }
        g.derive_static(paths);
        g.derive_lowered(paths);
        g
    }

    fn derive_static(&mut self, paths: &[&Path]) {
        let n = self.events.len();
        for i in 0..n {
            let e = &self.events[i];
            match e.kind {
                Kind::Read => self.reads.push(i),
                Kind::Write => self.writes_of[e.loc] |= bit(i),
                Kind::Fence(FenceSem::Sc) => self.fence_sc |= bit(i),
                Kind::ProxyFence(ProxyFenceKind::Alias) => self.alias_fences |= bit(i),
                _ => {}
            }
            if e.thread.is_none() {
                self.inits |= bit(i);
            }
        }
        // Program order, same-address program order, RMW pairs.
        for (t, path) in paths.iter().enumerate() {
            let base = self.offset[t];
            let len = path.events.len();
            for i in base..base + len {
                for j in i + 1..base + len {
                    self.po.add(i, j);
                    let (a, b) = (&self.events[i], &self.events[j]);
                    if a.is_mem() && b.is_mem() && a.va == b.va {
                        self.po_loc.add(i, j);
                    }
                }
                if let PathEventKind::Read { rmw: true, .. } = path.events[i - base].kind {
                    self.rmw.add(i, i + 1);
                }
            }
        }
        // Moral strength (digest §3.3).
        for i in 0..n {
            for j in 0..n {
                if i != j && self.morally_strong(i, j) {
                    self.ms.add(i, j);
                }
            }
        }
        // Release patterns (head, strong write) and acquire patterns (strong read, tail), §3.4.
        let cond = self
            .cond_reads
            .iter()
            .fold(S::EMPTY, |s, (c, _)| s | bit(*c));
        for i in 0..n {
            let a = &self.events[i];
            for j in 0..n {
                let b = &self.events[j];
                let strong_w = b.kind == Kind::Write && b.is_strong() && b.thread.is_some();
                let rel_w = |e: &Event| e.kind == Kind::Write && e.sem.is_release();
                if strong_w
                    && ((i == j && rel_w(a))
                        || (rel_w(a) && self.po_loc.has(i, j))
                        || (matches!(a.kind, Kind::Fence(f) if f.releases()) && self.po.has(i, j)))
                {
                    self.rp.add(i, j);
                }
                let strong_r = a.kind == Kind::Read && a.is_strong() && !a.red;
                // A wait acquires only if it succeeds: added during the search.
                let acq_r = |e: &Event| {
                    e.kind == Kind::Read && e.sem.is_acquire() && !e.red && !cond.has(j)
                };
                if strong_r
                    && ((i == j && acq_r(a))
                        || (acq_r(b) && self.po_loc.has(i, j))
                        || (matches!(b.kind, Kind::Fence(f) if f.acquires()) && self.po.has(i, j)))
                {
                    self.ap.add(i, j);
                }
            }
        }
    }

    /// Relations of lowered programs: signal → await edges, restricted
    /// release heads, proxy-fence roles.
    fn derive_lowered(&mut self, paths: &[&Path]) {
        let p = self.program;
        let n = self.events.len();
        for a in 0..n {
            let e = &self.events[a];
            let Some(t) = e.thread else { continue };
            let instr = &p.threads[t].code[e.pc];
            if e.kind == Kind::Await {
                let Instr::Await { from } = instr else {
                    unreachable!("an await event comes from an await")
                };
                for pt in from {
                    // Only combinations where an await that happened has
                    // every point it awaits are built (`awaits_consistent`).
                    let s = paths[pt.thread]
                        .point(pt.pc, pt.exec)
                        .expect("an await that happened has its signals");
                    self.await_edges.add(self.offset[pt.thread] + s, a);
                }
            }
            if matches!(e.kind, Kind::ProxyFence(_) | Kind::Fence(_)) {
                self.proxy_role[a] = proxy_role(instr, e.placement);
            }
            let head = (e.kind == Kind::Write && e.sem.is_release())
                || matches!(e.kind, Kind::Fence(f) if f.releases());
            if head {
                let publish = Publish::of(p, t, e.pc, e.placement);
                if !publish.is_all() {
                    let mask = (0..n).fold(S::EMPTY, |m, x| {
                        let ex = &self.events[x];
                        let loc = ex.is_mem().then_some(ex.loc);
                        let store = ex.kind == Kind::Write && !self.rmw_write(x);
                        if publish.admits(p, ex.thread, loc, store) {
                            m | bit(x)
                        } else {
                            m
                        }
                    });
                    self.restricted.push((a, mask));
                }
            }
        }
    }

    /// Whether event `x` is the write half of an RMW.
    fn rmw_write(&self, x: usize) -> bool {
        x > 0 && self.rmw.has(x - 1, x)
    }

    /// Moral strength of two distinct events (digest §3.3): same thread, or
    /// both strong with scopes including each other; same proxy; and, for two
    /// memory events, the same virtual address. Initial writes are morally
    /// strong with every access to their location.
    fn morally_strong(&self, i: usize, j: usize) -> bool {
        let (a, b) = (&self.events[i], &self.events[j]);
        let mem = |e: &Event| e.is_mem();
        if a.thread.is_none() || b.thread.is_none() {
            return mem(a) && mem(b) && a.loc == b.loc;
        }
        if !(matches!(a.kind, Kind::Read | Kind::Write | Kind::Fence(_))
            && matches!(b.kind, Kind::Read | Kind::Write | Kind::Fence(_)))
        {
            return false;
        }
        let threads = a.thread == b.thread
            || (a.is_strong()
                && b.is_strong()
                && a.placement
                    .includes(a.scope.unwrap_or(Scope::Sys), &b.placement)
                && b.placement
                    .includes(b.scope.unwrap_or(Scope::Sys), &a.placement));
        let proxies = a.proxy == b.proxy;
        let overlap = !(mem(a) && mem(b)) || a.va == b.va;
        threads && proxies && overlap
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the graph has no events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The value of read `r` under the partial reads-from `rf`, if known.
    pub fn read_value(&self, rf: &[Option<usize>], r: usize) -> Option<Value> {
        let mut visiting = S::EMPTY;
        self.read_value_in(rf, r, &mut visiting)
    }

    fn read_value_in(&self, rf: &[Option<usize>], r: usize, visiting: &mut S) -> Option<Value> {
        let w = rf[r]?;
        self.write_value_in(rf, w, visiting)
    }

    /// The value write `w` writes, given reads-from `rf` (`None` while a
    /// read it depends on is unbound).
    pub fn write_value(&self, rf: &[Option<usize>], w: usize) -> Option<Value> {
        let mut visiting = S::EMPTY;
        self.write_value_in(rf, w, &mut visiting)
    }

    fn write_value_in(&self, rf: &[Option<usize>], w: usize, visiting: &mut S) -> Option<Value> {
        if visiting.has(w) {
            return None; // a value cycle: thin air, rejected by No-Thin-Air
        }
        *visiting |= bit(w);
        let base = self.events[w].thread.map_or(0, |t| self.offset[t]);
        let v = self.value[w]
            .as_ref()?
            .eval(&mut |i| self.read_value_in(rf, base + i, visiting));
        *visiting &= !S::bit(w);
        v
    }

    /// Evaluate an expression of thread `t`.
    pub fn eval(&self, rf: &[Option<usize>], t: ThreadId, e: &Expr) -> Option<Value> {
        let base = self.offset[t];
        e.eval(&mut |i| self.read_value(rf, base + i))
    }

    /// The CTA of an event, as (gpu, cta).
    pub fn cta(&self, e: usize) -> (u32, u32) {
        let p = self.events[e].placement;
        (p.gpu, p.cta)
    }
}

fn set_access(ev: &mut Event, access: &crate::ir::Access, program: &Program) {
    ev.sem = if access.sem == Sem::Volatile {
        Sem::Relaxed
    } else {
        access.sem
    };
    ev.scope = access.scope;
    ev.proxy = access.proxy;
    ev.va = program.addresses[access.addr].va;
    ev.loc = program.addresses[access.addr].loc;
}
