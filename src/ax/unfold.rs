//! Symbolic unfolding of one thread into its control-flow paths.
//!
//! The values a load returns are not known until reads-from is chosen, so a
//! path records them as symbols: each register holds an [`Expr`] over the
//! path's reads, each branch whose condition is not constant forks the path
//! and records the outcome it assumed as a [`Constraint`]. The search later
//! picks reads-from, evaluates the expressions and discards paths whose
//! constraints fail. Spin-loop back edges are never taken and other back
//! edges at most `bound` times (see [`crate::model::loops`]).

use crate::ir::{
    Access, ArithOp, BranchCmp, FenceSem, Instr, Operand, Proxy, ProxyFenceKind, RmwOp, Scope, Sem,
    Thread, Value, mbar,
};
use crate::limits::{Exceeded, Poll};
use crate::model::loops::LoopInfo;

use crate::rel::{MAX_EVENTS, Set, bit};

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
    pub fn reads(&self) -> Set {
        match self {
            Expr::Const(_) => 0,
            Expr::Read(i) => bit(*i),
            Expr::Arith(_, a, b) => a.reads() | b.reads(),
            Expr::Rmw(_, old, args) => args.iter().fold(old.reads(), |s, a| s | a.reads()),
            Expr::Done(_, v, a) => v.reads() | a.reads(),
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
    pub deps: Set,
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
}

/// Why unfolding failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnfoldError {
    /// More paths than the limit.
    TooManyPaths(usize),
    /// A path with more events than the oracle can represent.
    TooManyEvents,
    /// A limit of the run (time, memory) was reached.
    Budget(Exceeded),
}

#[derive(Clone)]
struct State {
    pc: usize,
    regs: Vec<Expr>,
    events: Vec<PathEvent>,
    constraints: Vec<Constraint>,
    ctrl: Set,
    iters: Vec<u32>,
}

/// All paths of `t`, with non-spin back edges taken at most `bound` times;
/// `poll` is stepped once per instruction executed.
pub fn unfold(
    t: &Thread,
    bound: u32,
    max_paths: usize,
    poll: &mut Poll,
) -> Result<Vec<Path>, UnfoldError> {
    let loops = LoopInfo::of(t);
    let mut out = Vec::new();
    let init = State {
        pc: 0,
        regs: t.regs.iter().map(|r| Expr::Const(r.init)).collect(),
        events: Vec::new(),
        constraints: Vec::new(),
        ctrl: 0,
        iters: vec![0; t.code.len()],
    };
    let mut stack = vec![init];
    while let Some(mut s) = stack.pop() {
        loop {
            if let Some(e) = poll.step() {
                return Err(UnfoldError::Budget(e));
            }
            if s.events.len() + 2 > MAX_EVENTS {
                return Err(UnfoldError::TooManyEvents);
            }
            let Some(instr) = t.code.get(s.pc) else {
                out.push(Path {
                    events: s.events,
                    constraints: s.constraints,
                    final_regs: s.regs,
                    truncated: false,
                });
                break;
            };
            let pc = s.pc;
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
                        deps: s.ctrl,
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
                            },
                            rmw: false,
                            red: false,
                            cond_acq: Some(done.clone()),
                        },
                        deps: s.ctrl,
                    });
                    if let Some(d) = dst {
                        s.regs[*d] = done.clone();
                    }
                    if test == mbar::Test::Phase {
                        // A blocking wait: only executions in which it succeeds finish.
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
                    deps: s.ctrl,
                }),
                Instr::Await { .. } => s.events.push(PathEvent {
                    pc,
                    kind: PathEventKind::Await,
                    deps: s.ctrl,
                }),
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
                    deps: s.ctrl,
                }),
                Instr::AsyncCopy { .. }
                | Instr::CommitGroup { .. }
                | Instr::WaitGroup { .. }
                | Instr::AsyncMbarArrive { .. }
                | Instr::Mbar { .. }
                | Instr::ClusterBarrier { .. } => {
                    unreachable!("the oracle runs lowered programs (model::lower)")
                }
                Instr::Store { src, access } => {
                    let value = val(&s, src);
                    let deps = s.ctrl | value.reads();
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
                    let arg_deps = args.iter().fold(0, |d, a| d | a.reads());
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
                        deps: s.ctrl,
                    });
                    let value = if op.write_depends_on_read() {
                        Expr::Rmw(*op, Box::new(Expr::Read(i)), args)
                    } else {
                        args[0].clone()
                    };
                    let deps = s.ctrl | arg_deps | value.reads();
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
                    deps: s.ctrl,
                }),
                Instr::ProxyFence { kind } => s.events.push(PathEvent {
                    pc,
                    kind: PathEventKind::ProxyFence(*kind),
                    deps: s.ctrl,
                }),
                Instr::Barrier { kind, id, count } => {
                    let id: Vec<Expr> = id.iter().map(|o| val(&s, o)).collect();
                    let count = count.as_ref().map(|o| val(&s, o));
                    let deps = id
                        .iter()
                        .chain(count.iter())
                        .fold(s.ctrl, |d, e| d | e.reads());
                    let waits = *kind == crate::ir::BarrierKind::Sync;
                    s.events.push(PathEvent {
                        pc,
                        kind: PathEventKind::BarArrive { id, count, waits },
                        deps,
                    });
                    if waits {
                        s.events.push(PathEvent {
                            pc,
                            kind: PathEventKind::BarWait,
                            deps: s.ctrl,
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
                            if loops.spin[pc] {
                                return None;
                            }
                            if s.iters[pc] >= bound {
                                return Some(false);
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
                                    let reads = x.reads() | y.reads();
                                    let mut other = s.clone();
                                    other.constraints.push(Constraint {
                                        cmp: *cmp,
                                        a: x.clone(),
                                        b: y.clone(),
                                        holds: false,
                                    });
                                    other.ctrl |= reads;
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
                                    s.ctrl |= reads;
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
                                });
                                break;
                            }
                            None => break,
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
