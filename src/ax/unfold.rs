//! Symbolic unfolding of one thread into its control-flow paths.
//!
//! The values a load returns are not known until reads-from is chosen, so a
//! path records them as symbols: each register holds an [`Expr`] over the
//! path's reads, each branch whose condition is not constant forks the path
//! and records the outcome it assumed as a [`Constraint`]. The search later
//! picks reads-from, evaluates the expressions and discards paths whose
//! constraints fail. Spin-loop back edges are never taken and other back
//! edges at most `bound` times (see [`crate::model::loops`]).
//!
//! For the termination check the unfolding also yields **stuck paths**
//! ([`StuckPoint`]): prefixes that stop where the thread may wait forever —
//! after arriving at a `bar.sync`, before an async-group wait, at a blocking
//! mbarrier wait that fails, or after one iteration of a spin or retry loop
//! that goes back (that iteration is the one repeated forever).

use crate::ir::{
    Access, ArithOp, BranchCmp, FenceSem, Instr, Operand, Proxy, ProxyFenceKind, RmwOp, Scope, Sem,
    Thread, Value, mbar,
};
use crate::limits::{Exceeded, Poll};
use crate::model::loops::{Beyond, LoopInfo};

use crate::rel::Grow;

/// A value computed from the reads of one path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    /// A constant.
    Const(Value),
    /// The value returned by the path's event with this index (a read).
    Read(usize),
    /// Register arithmetic.
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    /// The value an RMW writes: `op(old, args)`.
    Rmw(RmwOp, Box<Expr>, Vec<Expr>),
    /// 1 if an mbarrier wait of this kind succeeds on the state, else 0.
    Done(mbar::Test, Box<Expr>, Box<Expr>),
}

/// Symbolic values: constants fold, anything over a read stays an expression.
impl crate::ir::eval::Domain for Expr {
    fn constant(v: Value) -> Self {
        Expr::Const(v)
    }
    fn arith(op: ArithOp, a: Expr, b: Expr) -> Expr {
        match (&a, &b) {
            (Expr::Const(x), Expr::Const(y)) => Expr::Const(op.apply(*x, *y)),
            _ => Expr::Arith(op, Box::new(a), Box::new(b)),
        }
    }
}

impl Expr {
    /// The reads this expression depends on.
    pub fn reads(&self) -> Grow {
        let mut out = Grow::new();
        self.add_reads(&mut out);
        out
    }
    fn add_reads(&self, out: &mut Grow) {
        match self {
            Expr::Const(_) => {}
            Expr::Read(i) => out.insert(*i),
            Expr::Arith(_, a, b) | Expr::Done(_, a, b) => {
                a.add_reads(out);
                b.add_reads(out);
            }
            Expr::Rmw(_, old, args) => {
                old.add_reads(out);
                for a in args {
                    a.add_reads(out);
                }
            }
        }
    }
    /// Renumber the reads after removing event `k` (never referred to).
    fn renumber(&mut self, k: usize) {
        match self {
            Expr::Const(_) => {}
            Expr::Read(i) => {
                debug_assert_ne!(*i, k, "a removed event is no read");
                if *i > k {
                    *i -= 1
                }
            }
            Expr::Arith(_, a, b) | Expr::Done(_, a, b) => {
                a.renumber(k);
                b.renumber(k)
            }
            Expr::Rmw(_, old, args) => {
                old.renumber(k);
                args.iter_mut().for_each(|a| a.renumber(k));
            }
        }
    }
    /// Evaluate, given the values of reads (by path index); `None` if one is unknown.
    pub fn eval(&self, read: &mut dyn FnMut(usize) -> Option<Value>) -> Option<Value> {
        Some(match self {
            Expr::Const(v) => *v,
            Expr::Read(i) => read(*i)?,
            Expr::Arith(op, a, b) => {
                let x = a.eval(read)?;
                op.apply(x, b.eval(read)?)
            }
            Expr::Rmw(op, old, args) => {
                let o = old.eval(read)?;
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(a.eval(read)?);
                }
                op.apply(o, &vals)
            }
            Expr::Done(test, v, a) => {
                let v = v.eval(read)?;
                mbar::done(*test, v, a.eval(read)?) as Value
            }
        })
    }
}

/// A branch outcome a path assumed: `cmp(a, b) == holds`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Constraint {
    /// The comparison.
    pub cmp: BranchCmp,
    /// Left operand.
    pub a: Expr,
    /// Right operand.
    pub b: Expr,
    /// Whether the path assumed the comparison true (branch taken).
    pub holds: bool,
}

/// What an event of a path is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathEventKind {
    /// A load, or the read half of an RMW (`rmw` = true; `red` for reductions).
    Read {
        /// The access, with the semantics of this half.
        access: Access,
        /// Read half of an RMW (its write half is the next event).
        rmw: bool,
        /// Read half of a `red` (never part of an acquire pattern).
        red: bool,
        /// An mbarrier wait: it acquires only when this is nonzero (it succeeded).
        cond_acq: Option<Expr>,
    },
    /// A store, or the write half of an RMW (`rmw` = true).
    Write {
        /// The access, with the semantics of this half.
        access: Access,
        /// The value written.
        value: Expr,
        /// Write half of an RMW (its read half is the previous event).
        rmw: bool,
    },
    /// A thread fence.
    Fence {
        /// Its kind.
        sem: FenceSem,
        /// Its scope.
        scope: Scope,
    },
    /// A proxy fence.
    ProxyFence(ProxyFenceKind),
    /// The arrive part of a barrier; for `bar.sync` a [`PathEventKind::BarWait`] follows.
    BarArrive {
        /// Values naming the barrier.
        id: Vec<Expr>,
        /// Expected number of threads, if given.
        count: Option<Expr>,
        /// Whether the thread waits (`bar.sync`) or only arrives.
        waits: bool,
    },
    /// The wait part of a `bar.sync`.
    BarWait,
    /// A point other threads may wait for (lowered).
    Signal,
    /// A wait for other threads' signals (lowered).
    Await,
}

/// One event of a path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathEvent {
    /// The instruction that produced it.
    pub pc: usize,
    /// What it is.
    pub kind: PathEventKind,
    /// The path's reads it depends on (data, address of barrier ids, control).
    pub deps: Grow,
}

/// One control-flow path of a thread.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Path {
    /// Events in program order.
    pub events: Vec<PathEvent>,
    /// Branch outcomes assumed.
    pub constraints: Vec<Constraint>,
    /// Register values at the end of the path.
    pub final_regs: Vec<Expr>,
    /// The path was cut at the loop bound: the thread did not finish.
    pub truncated: bool,
    /// A stuck path: where the thread stops for good (`None`: it finishes,
    /// or is cut at the bound).
    pub stuck: Option<StuckPoint>,
}

impl Path {
    /// The index of the last event of execution `exec` (from 0) of
    /// instruction `pc`, if the path performs it: what an await of that
    /// point synchronises with (an RMW's write half, a signal).
    pub fn point(&self, pc: usize, exec: usize) -> Option<usize> {
        let mut seen = 0;
        let mut found: Option<usize> = None;
        for (i, e) in self.events.iter().enumerate() {
            // The write half of an RMW and the wait of a `bar.sync` belong
            // to the execution their first half started, just before.
            let continues = matches!(
                e.kind,
                PathEventKind::Write { rmw: true, .. } | PathEventKind::BarWait
            );
            if let Some(f) = found {
                if e.pc == pc && continues && i == f + 1 {
                    found = Some(i);
                    continue;
                }
                break;
            }
            if e.pc == pc && !continues {
                if seen == exec {
                    found = Some(i);
                }
                seen += 1;
            }
        }
        found
    }
}

/// Where a stuck path stops, and which of its reads must return the
/// coherence-latest write (the fairness condition).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StuckPoint {
    /// The waiting instruction, or the loop's head.
    pub pc: usize,
    /// How it is stuck.
    pub kind: StuckKind,
    /// Reads (path indices) that must read a coherence-maximal write: a
    /// spinning iteration's reads, a failing blocking wait's read.
    pub latest: Grow,
    /// For a spinning path, the index of the first event of the iteration
    /// that repeats (its events end the path); `usize::MAX` otherwise.
    pub iteration: usize,
}

/// How a stuck path is stuck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StuckKind {
    /// Arrived at the `bar.sync` at `pc` (its arrive is the last event); waits.
    Barrier,
    /// At the async-group wait (or agent start) `pc`, which has not happened.
    Await,
    /// The blocking mbarrier wait at `pc` read a state whose phase is not
    /// complete (its read is the last event).
    Wait,
    /// The spin or retry loop `pc..=back` went back after the iteration
    /// whose events end the path (a retry loop's failed CAS is kept as a
    /// plain read: its write stores back what it read).
    Spin {
        /// The back edge.
        back: usize,
    },
}

/// Why unfolding failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnfoldError {
    /// More paths than the limit.
    TooManyPaths(usize),
    /// A limit of the run (time, memory) was reached.
    Budget(Exceeded),
}

#[derive(Clone)]
struct State {
    pc: usize,
    regs: Vec<Expr>,
    events: Vec<PathEvent>,
    constraints: Vec<Constraint>,
    ctrl: Grow,
    iters: Vec<u32>,
    /// Index of the first event of the current spin-loop iteration.
    iter_start: usize,
}

impl State {
    /// The path so far, stopped for good at `at`.
    fn stuck(&self, at: StuckPoint) -> Path {
        Path {
            events: self.events.clone(),
            constraints: self.constraints.clone(),
            final_regs: self.regs.clone(),
            truncated: false,
            stuck: Some(at),
        }
    }
}

/// All paths of `t` (whose loops are `loops`), with non-spin back edges
/// taken at most `bound` times; with `stuck`, its stuck paths too. `poll`
/// is stepped once per instruction executed.
///
/// An agent also gets the empty path: it never starts when its issuer does
/// not perform its execution of the operation ([`super::combos`]). That
/// path counts as finished, so an agent is never stuck at its start.
pub fn unfold(
    t: &Thread,
    loops: &LoopInfo,
    bound: u32,
    max_paths: usize,
    stuck: bool,
    poll: &mut Poll,
) -> Result<Vec<Path>, UnfoldError> {
    let mut out = Vec::new();
    let init = State {
        pc: 0,
        regs: t.regs.iter().map(|r| Expr::Const(r.init)).collect(),
        events: Vec::new(),
        constraints: Vec::new(),
        ctrl: Grow::new(),
        iters: vec![0; t.code.len()],
        iter_start: 0,
    };
    let mut stack = vec![init];
    if t.agent.is_some() {
        out.push(Path {
            events: Vec::new(),
            constraints: Vec::new(),
            final_regs: t.regs.iter().map(|r| Expr::Const(r.init)).collect(),
            truncated: false,
            stuck: None,
        });
    }
    while let Some(mut s) = stack.pop() {
        loop {
            if let Some(e) = poll.step() {
                return Err(UnfoldError::Budget(e));
            }
            let Some(instr) = t.code.get(s.pc) else {
                out.push(Path {
                    events: s.events,
                    constraints: s.constraints,
                    final_regs: s.regs,
                    truncated: false,
                    stuck: None,
                });
                break;
            };
            let pc = s.pc;
            if loops.loop_at(pc).is_some_and(|l| l.head == pc) {
                // A new iteration of a spin or retry loop starts here.
                s.iter_start = s.events.len();
            }
            let val = |s: &State, o: &Operand| crate::ir::eval::operand(&s.regs, o);
            match instr {
                Instr::Load { dst, access } => {
                    let i = s.events.len();
                    s.events.push(PathEvent {
                        pc,
                        kind: PathEventKind::Read {
                            access: *access,
                            rmw: false,
                            red: false,
                            cond_acq: None,
                        },
                        deps: s.ctrl.clone(),
                    });
                    s.regs[*dst] = Expr::Read(i);
                }
                Instr::MbarWait {
                    dst,
                    addr,
                    phase,
                    sem,
                    scope,
                    space,
                    ..
                } => {
                    let i = s.events.len();
                    let (test, arg) = mbar::Test::of(phase);
                    let done = Expr::Done(test, Box::new(Expr::Read(i)), Box::new(val(&s, &arg)));
                    s.events.push(PathEvent {
                        pc,
                        kind: PathEventKind::Read {
                            access: Access {
                                addr: *addr,
                                proxy: Proxy::Generic,
                                sem: *sem,
                                scope: Some(*scope),
                                space: *space,
                                ty: None,
                            },
                            rmw: false,
                            red: false,
                            cond_acq: Some(done.clone()),
                        },
                        deps: s.ctrl.clone(),
                    });
                    if let Some(d) = dst {
                        s.regs[*d] = done.clone();
                    }
                    if test == mbar::Test::Phase {
                        // A blocking wait: only executions in which it succeeds go on.
                        let mut fails = s.clone();
                        fails.constraints.push(Constraint {
                            cmp: BranchCmp::Ne,
                            a: done.clone(),
                            b: Expr::Const(0),
                            holds: false,
                        });
                        if stuck {
                            out.push(fails.stuck(StuckPoint {
                                pc,
                                kind: StuckKind::Wait,
                                latest: Grow::single(i),
                                iteration: usize::MAX,
                            }));
                        }
                        s.constraints.push(Constraint {
                            cmp: BranchCmp::Ne,
                            a: done,
                            b: Expr::Const(0),
                            holds: true,
                        });
                    }
                }
                Instr::Signal { .. } => s.events.push(PathEvent {
                    pc,
                    kind: PathEventKind::Signal,
                    deps: s.ctrl.clone(),
                }),
                Instr::Await { .. } => {
                    // An agent's start either happens or the agent never
                    // starts (its empty path), see above.
                    if stuck && !(t.agent.is_some() && pc == 0) {
                        out.push(s.stuck(StuckPoint {
                            pc,
                            kind: StuckKind::Await,
                            latest: Grow::new(),
                            iteration: usize::MAX,
                        }));
                    }
                    s.events.push(PathEvent {
                        pc,
                        kind: PathEventKind::Await,
                        deps: s.ctrl.clone(),
                    })
                }
                Instr::ProxyFenceUni { acquire, scope, .. } => s.events.push(PathEvent {
                    pc,
                    kind: PathEventKind::Fence {
                        sem: if *acquire {
                            FenceSem::Acquire
                        } else {
                            FenceSem::Release
                        },
                        scope: *scope,
                    },
                    deps: s.ctrl.clone(),
                }),
                Instr::AsyncCopy { .. }
                | Instr::CommitGroup { .. }
                | Instr::WaitGroup { .. }
                | Instr::AsyncMbarArrive { .. }
                | Instr::Mbar { .. }
                | Instr::ClusterBarrier { .. }
                | Instr::Tensor { .. }
                | Instr::GridDep { .. } => {
                    unreachable!("the oracle runs lowered programs (model::lower)")
                }
                Instr::Store { src, access } => {
                    let value = val(&s, src);
                    let deps = s.ctrl.clone().union(&value.reads());
                    s.events.push(PathEvent {
                        pc,
                        kind: PathEventKind::Write {
                            access: *access,
                            value,
                            rmw: false,
                        },
                        deps,
                    });
                }
                Instr::Rmw {
                    dst,
                    op,
                    args,
                    access,
                } => {
                    let (rsem, wsem) = split_rmw_sem(access.sem, dst.is_none());
                    let i = s.events.len();
                    let args: Vec<Expr> = args.iter().map(|a| val(&s, a)).collect();
                    let arg_deps = args.iter().fold(Grow::new(), |d, a| d.union(&a.reads()));
                    s.events.push(PathEvent {
                        pc,
                        kind: PathEventKind::Read {
                            access: Access {
                                sem: rsem,
                                ..*access
                            },
                            rmw: true,
                            red: dst.is_none(),
                            cond_acq: None,
                        },
                        deps: s.ctrl.clone(),
                    });
                    let value = if op.write_depends_on_read() {
                        let v = Expr::Rmw(*op, Box::new(Expr::Read(i)), args);
                        if t.wrap_rmw { fit(access, v) } else { v }
                    } else {
                        args[0].clone()
                    };
                    let deps = s.ctrl.clone().union(&arg_deps).union(&value.reads());
                    s.events.push(PathEvent {
                        pc,
                        kind: PathEventKind::Write {
                            access: Access {
                                sem: wsem,
                                ..*access
                            },
                            value,
                            rmw: true,
                        },
                        deps,
                    });
                    if let Some(d) = dst {
                        s.regs[*d] = Expr::Read(i);
                    }
                }
                Instr::Fence { sem, scope, .. } => s.events.push(PathEvent {
                    pc,
                    kind: PathEventKind::Fence {
                        sem: *sem,
                        scope: *scope,
                    },
                    deps: s.ctrl.clone(),
                }),
                Instr::ProxyFence { kind } => s.events.push(PathEvent {
                    pc,
                    kind: PathEventKind::ProxyFence(*kind),
                    deps: s.ctrl.clone(),
                }),
                Instr::Barrier {
                    kind, id, count, ..
                } => {
                    let id: Vec<Expr> = id.iter().map(|o| val(&s, o)).collect();
                    let count = count.as_ref().map(|o| val(&s, o));
                    let deps = id
                        .iter()
                        .chain(count.iter())
                        .fold(s.ctrl.clone(), |d, e| d.union(&e.reads()));
                    let waits = kind.waits();
                    // A lane at PTX's counted `bar.arrive a, b` waits for
                    // its warp's other lanes first (`model::barrier::warp_unit`),
                    // so it too may be stuck there, after its arrival event,
                    // when another lane never comes (`ax::barriers` keeps such
                    // a path only then).
                    let converges = !waits
                        && t.agent.is_none()
                        && t.placement.warp.is_some()
                        && !kind.is_warp()
                        && id.len() == 2
                        && count.is_none();
                    s.events.push(PathEvent {
                        pc,
                        kind: PathEventKind::BarArrive { id, count, waits },
                        deps,
                    });
                    if converges && stuck {
                        out.push(s.stuck(StuckPoint {
                            pc,
                            kind: StuckKind::Barrier,
                            latest: Grow::new(),
                            iteration: usize::MAX,
                        }));
                    }
                    if waits {
                        // A lane waiting for good at an `activemask`
                        // rendezvous is no hang (`ir::activemask`: another
                        // choice of blocks covers the run): no stuck path.
                        if stuck && *kind != crate::ir::BarrierKind::ActiveMask {
                            out.push(s.stuck(StuckPoint {
                                pc,
                                kind: StuckKind::Barrier,
                                latest: Grow::new(),
                                iteration: usize::MAX,
                            }));
                        }
                        s.events.push(PathEvent {
                            pc,
                            kind: PathEventKind::BarWait,
                            deps: s.ctrl.clone(),
                        });
                    }
                }
                Instr::Mov { .. } | Instr::Arith { .. } => {
                    let (dst, v) = instr.local_effect(&s.regs).expect("a register instruction");
                    s.regs[dst] = v;
                }
                Instr::Branch { cond, target } => {
                    let taken_ok = |s: &mut State| -> Option<bool> {
                        // Some(true): go on at target; Some(false): path cut at the bound; None: path dies.
                        if loops.back_edge[pc] {
                            let (limit, beyond) = loops.limit(pc, bound);
                            if s.iters[pc] >= limit {
                                return match beyond {
                                    Beyond::Drop => None,
                                    Beyond::Cut => Some(false),
                                };
                            }
                            s.iters[pc] += 1;
                        }
                        Some(true)
                    };
                    let decided = match cond {
                        None => Some(true),
                        Some((cmp, a, b)) => {
                            let (x, y) = (val(&s, a), val(&s, b));
                            match (&x, &y) {
                                (Expr::Const(x), Expr::Const(y)) => Some(cmp.holds(*x, *y)),
                                _ => {
                                    // Fork: the not-taken continuation goes on the stack.
                                    let reads = x.reads().union(&y.reads());
                                    let mut other = s.clone();
                                    other.constraints.push(Constraint {
                                        cmp: *cmp,
                                        a: x.clone(),
                                        b: y.clone(),
                                        holds: false,
                                    });
                                    other.ctrl.union_with(&reads);
                                    other.pc = pc + 1;
                                    stack.push(other);
                                    if stack.len() + out.len() > max_paths {
                                        return Err(UnfoldError::TooManyPaths(max_paths));
                                    }
                                    s.constraints.push(Constraint {
                                        cmp: *cmp,
                                        a: x,
                                        b: y,
                                        holds: true,
                                    });
                                    s.ctrl.union_with(&reads);
                                    Some(true)
                                }
                            }
                        }
                    };
                    if decided == Some(true) {
                        match taken_ok(&mut s) {
                            Some(true) => {
                                s.pc = *target;
                                continue;
                            }
                            Some(false) => {
                                out.push(Path {
                                    events: s.events,
                                    constraints: s.constraints,
                                    final_regs: s.regs,
                                    truncated: true,
                                    stuck: None,
                                });
                                break;
                            }
                            None => {
                                if stuck {
                                    out.push(spinning(&s, loops, pc));
                                }
                                break;
                            }
                        }
                    }
                }
            }
            s.pc += 1;
        }
        if out.len() > max_paths {
            return Err(UnfoldError::TooManyPaths(max_paths));
        }
    }
    Ok(out)
}

/// The stuck path of a spin or retry loop whose back edge `back` is taken
/// at the end of the iteration that `s`'s last events form.
fn spinning(s: &State, loops: &LoopInfo, back: usize) -> Path {
    let head = loops.loop_at(back).expect("a spin back edge").head;
    let mut p = s.stuck(StuckPoint {
        pc: head,
        kind: StuckKind::Spin { back },
        latest: Grow::new(),
        iteration: s.iter_start,
    });
    // A failed CAS writes back what it read; the iteration that repeats
    // forever is its read alone (docs/loops.md, retry loops).
    let cas_write = (s.iter_start..p.events.len()).find(|&i| {
        matches!(p.events[i].kind, PathEventKind::Write { rmw: true, .. })
            && loops
                .loop_at(p.events[i].pc)
                .is_some_and(|l| l.retry == Some(p.events[i].pc))
    });
    if let Some(w) = cas_write {
        if let PathEventKind::Read { rmw, .. } = &mut p.events[w - 1].kind {
            *rmw = false;
        }
        remove_event(&mut p, w);
    }
    let latest = (s.iter_start..p.events.len())
        .filter(|&i| matches!(p.events[i].kind, PathEventKind::Read { .. }))
        .fold(Grow::new(), |mut m, i| {
            m.insert(i);
            m
        });
    p.stuck.as_mut().unwrap().latest = latest;
    p
}

/// Remove event `k` (a write no expression refers to) from `p`, renumbering
/// the later events in every expression and dependency set.
fn remove_event(p: &mut Path, k: usize) {
    p.events.remove(k);
    let fix = |e: &mut Expr| e.renumber(k);
    for ev in &mut p.events {
        ev.deps = ev.deps.remove_shift(k);
        match &mut ev.kind {
            PathEventKind::Read {
                cond_acq: Some(e), ..
            } => fix(e),
            PathEventKind::Write { value, .. } => fix(value),
            PathEventKind::BarArrive { id, count, .. } => {
                id.iter_mut().for_each(fix);
                if let Some(c) = count {
                    fix(c)
                }
            }
            _ => {}
        }
    }
    for c in &mut p.constraints {
        fix(&mut c.a);
        fix(&mut c.b);
    }
    p.final_regs.iter_mut().for_each(fix);
}

/// `v` fitted to `access`'s width as [`Access::fit`] does, in the
/// arithmetic expressions have (`(v & mask ^ sign) - sign`), so that both
/// engines wrap a kernel's RMW alike ([`Thread::wrap_rmw`]).
fn fit(access: &Access, v: Expr) -> Expr {
    use crate::ir::eval::Domain;
    match access.ty.map(crate::ir::DataType::bits) {
        Some(b) if b < 64 => {
            let sign = 1i64 << (b - 1);
            let masked = Expr::arith(ArithOp::And, v, Expr::Const((1i64 << b) - 1));
            let flipped = Expr::arith(ArithOp::Xor, masked, Expr::Const(sign));
            Expr::arith(ArithOp::Sub, flipped, Expr::Const(sign))
        }
        _ => v,
    }
}

/// The semantics of an RMW's read and write halves (digest §2.1): `.acquire`
/// goes to the read, `.release` to the write, `.acq_rel` to both. The read of
/// a `red` never acquires (Dat3M's `red.acq_rel` is read as `.release`).
pub fn split_rmw_sem(sem: Sem, red: bool) -> (Sem, Sem) {
    let r = if sem.is_acquire() && !red {
        Sem::Acquire
    } else {
        Sem::Relaxed
    };
    let w = if sem.is_release() {
        Sem::Release
    } else {
        Sem::Relaxed
    };
    (r, w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DataType;

    /// The oracle's value of a kernel's RMW (the expression [`fit`] builds
    /// over `Expr::Rmw`) is the machine's (`Access::fit` of
    /// `RmwOp::apply`, `op::steps`) for every operation that compares, on
    /// both sides of 2^31 and 2^32 - 1, for each width.
    #[test]
    fn the_fitted_rmw_expression_is_the_machine_s_value() {
        let edges: [u64; 9] = [
            0,
            1,
            5,
            0x7fff_fffe,
            0x7fff_ffff,
            0x8000_0000,
            0x8000_0001,
            0xffff_fffe,
            0xffff_ffff,
        ];
        let ops = [
            RmwOp::Min,
            RmwOp::Max,
            RmwOp::UMin,
            RmwOp::UMax,
            RmwOp::Inc,
            RmwOp::Dec,
            RmwOp::UInc,
            RmwOp::UDec,
        ];
        for ty in [DataType::U32, DataType::S32, DataType::U64] {
            let access = Access {
                addr: 0,
                proxy: Proxy::Generic,
                sem: Sem::Relaxed,
                scope: Some(Scope::Gpu),
                space: None,
                ty: Some(ty),
            };
            // Values as a kernel keeps them: sign-extended from the width.
            let kept = |v: u64| crate::ir::sext(v as Value, ty.bits());
            for op in ops {
                for &old in &edges {
                    for &a in &edges {
                        let (old, a) = (kept(old), kept(a));
                        let e = fit(
                            &access,
                            Expr::Rmw(op, Box::new(Expr::Read(0)), vec![Expr::Const(a)]),
                        );
                        let oracle = e.eval(&mut |_| Some(old));
                        let machine = access.fit(op.apply(old, &[a]));
                        assert_eq!(oracle, Some(machine), "{op:?} {ty:?} old {old:#x} a {a:#x}");
                    }
                }
            }
        }
        // The unsigned forms differ from the signed ones exactly above 2^31.
        let u32 = Access {
            addr: 0,
            proxy: Proxy::Generic,
            sem: Sem::Relaxed,
            scope: Some(Scope::Gpu),
            space: None,
            ty: Some(DataType::U32),
        };
        let value = |op: RmwOp, old: Value, a: Value| {
            fit(
                &u32,
                Expr::Rmw(op, Box::new(Expr::Read(0)), vec![Expr::Const(a)]),
            )
            .eval(&mut |_| Some(old))
            .unwrap()
        };
        assert_eq!(value(RmwOp::UMax, -0x8000_0000, 1), -0x8000_0000);
        assert_eq!(value(RmwOp::Max, -0x8000_0000, 1), 1);
        assert_eq!(value(RmwOp::UInc, 5, -1), 6);
        assert_eq!(value(RmwOp::Inc, 5, -1), 0);
    }
}
