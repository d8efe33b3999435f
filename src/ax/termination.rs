//! The oracle's termination check: a search for a consistent *stuck*
//! candidate (`docs/loops.md`, "Termination").
//!
//! Each thread contributes one of its paths — complete, cut at the loop
//! bound, or stuck ([`super::unfold::StuckPoint`]) — and at least one path
//! is stuck. Such a combination is searched like any candidate, with three
//! extra rules: a barrier a stuck path waits at must never complete; an
//! await that happened has every point it awaits, and a stuck await misses
//! one; and the reads of spinning iterations and failing blocking waits
//! read coherence-maximal writes (fairness: once nothing else can happen,
//! every read eventually returns the latest write). A consistent one whose
//! paths are all complete or stuck is a hang; one with a path cut at the
//! bound only says that the bound was reached before the program settled.

use crate::ir::{AwaitPoint, Instr, Program, mbar};
use crate::limits::Budget;
use crate::model::hang::{Hang, Stuck, Waits};
use crate::outcome::{Columns, Outcomes};
use crate::rel::Bits;

use super::graph::Graph;
use super::search::{AxStats, Search};
use super::unfold::{Path, PathEventKind, StuckKind};
use super::{AxLimit, AxOptions};

/// What the oracle's termination search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxTermination {
    /// A hang: the first stuck configuration found (in a fixed order).
    pub hang: Option<Hang>,
    /// A stuck configuration with a thread cut at the loop bound exists: if
    /// no hang was found, longer executions might still hang.
    pub bound_hit: bool,
    /// Search counters (of the stuck candidates only).
    pub stats: AxStats,
    /// The hang's execution reaches an undefined step.
    pub undefined: Option<crate::model::ub::Undefined>,
}

/// Search for a hang of `p` (the test as written; it is lowered here),
/// without resource limits.
pub fn termination(p: &Program, opts: &AxOptions) -> Result<AxTermination, AxLimit> {
    termination_within(p, opts, &Budget::unlimited(), 0)
}

/// Search for a hang of `p` within `budget`; `nodes_before`: search nodes
/// the oracle already spent on this run (the state limit counts them all).
pub fn termination_within(
    p: &Program,
    opts: &AxOptions,
    budget: &Budget,
    nodes_before: u64,
) -> Result<AxTermination, AxLimit> {
    let lowered = crate::model::lower::lowered(p, opts.loop_bound);
    let p = &lowered;
    let paths = super::unfold_all(p, opts, true, budget)?;
    let mut result = AxTermination {
        hang: None,
        bound_hit: false,
        stats: AxStats::default(),
        undefined: None,
    };
    if paths.iter().any(Vec::is_empty) || !paths.iter().flatten().any(|q| q.stuck.is_some()) {
        return Ok(result);
    }
    let cols = Columns::of(p);
    let mut sink = Outcomes::new();
    let hunt = crate::model::barrier::may_be_undefined(p, opts.barriers);
    let inits = p.locations.len();
    // Stuck sets no barrier plan admits are never built (`barrier_sets`).
    let sets = (opts.static_barriers && opts.barriers == crate::model::barrier::Reading::Isa)
        .then(|| super::barrier_sets::BarrierSets::new(p, &paths))
        .flatten();
    // Spinning on a counter whose final value leaves the loop (`counters`).
    let counters = opts
        .static_counters
        .then(|| super::counters::Counters::new(p))
        .flatten();
    // Waits no order of an mbarrier's operations satisfies (`mbar_chains`).
    let chains = opts
        .mbar_chains
        .then(|| super::mbar_chains::MbarChains::new(p))
        .flatten();
    let mut combos = match &sets {
        Some(sets) => super::combos::Combos::filtered(p, &paths, sets),
        None => super::combos::Combos::new(p, &paths),
    };
    loop {
        // Each combination costs at least a look: the limits bound this walk
        // even when every search is trivial.
        let spent = nodes_before + result.stats.nodes;
        if let Some(e) = budget.check().or_else(|| budget.states_exceeded(spent)) {
            return Err(AxLimit::Budget(e));
        }
        let Some(combo) = combos.next() else {
            return Ok(result);
        };
        let truncated = combo.iter().any(|c| c.truncated);
        let worth = combo.iter().any(|c| c.stuck.is_some())
            && !(truncated && result.bound_hit)
            && awaits_consistent(p, &combo)
            && !counters.as_ref().is_some_and(|c| c.spin_leaves(p, &combo))
            && !chains.as_ref().is_some_and(|c| c.impossible(p, &combo));
        if worth {
            let nevents = inits + combo.iter().map(|c| c.events.len()).sum::<usize>();
            let step = |result: &mut AxTermination, sink: &mut Outcomes| {
                crate::with_width!(nevents, S => {
                    let g = Graph::<S>::new(p, &combo);
                    let mut s = Search::new(&g, &cols, sink, budget, spent)
                        .forced_coherence(opts.forced_coherence)
                        .fairness(opts.fairness);
                    s.barriers = opts.barriers;
                    s.static_barriers = opts.static_barriers;
                    s.forced_reads = opts.forced_reads;
                    s.forced_order = false;
                    s.hunt_undefined = hunt;
                    s.run();
                    super::add_stats(&mut result.stats, &s.stats);
                    if let Some(e) = s.stopped {
                        return Err(AxLimit::Budget(e));
                    }
                    if let Some(rf) = s.witness.take() {
                        if truncated {
                            result.bound_hit = true;
                        } else {
                            if result.hang.is_none() {
                                result.hang = Some(describe(&s, &g, &combo, &rf));
                            }
                            if let Some(u) = s.undefined.take() {
                                if result.undefined.as_ref().is_none_or(|b| u < *b) {
                                    result.undefined = Some(u);
                                }
                            }
                            // A program that may reach an undefined step is
                            // searched to the end, for the least undefined
                            // step of its stuck executions (the machine
                            // reports the least of all).
                            if !hunt {
                                return Ok(true);
                            }
                        }
                    }
                    Ok(false)
                }, Err(AxLimit::TooManyEvents))
            };
            if step(&mut result, &mut sink)? {
                return Ok(result);
            }
        }
    }
}

/// Whether every await on the paths has the points it awaits, and every
/// path stuck at an await misses one of them. (Agents' starts hold by
/// construction, [`super::combos`]; the lowering makes sure that every
/// other await names only operations issued on every path to it, so this
/// rejects nothing but stuck awaits that could go on.)
pub fn awaits_consistent(p: &Program, combo: &[&Path]) -> bool {
    let reached = |a: &AwaitPoint| combo[a.thread].point(a.pc, a.exec).is_some();
    combo.iter().enumerate().all(|(t, path)| {
        let code = &p.threads[t].code;
        let happened = path.events.iter().all(|e| match (&e.kind, &code[e.pc]) {
            (PathEventKind::Await, Instr::Await { from }) => from.iter().all(reached),
            _ => true,
        });
        let stuck_ok = match &path.stuck {
            Some(sp) if sp.kind == StuckKind::Await => match &code[sp.pc] {
                Instr::Await { from } => from.iter().any(|a| !reached(a)),
                _ => false,
            },
            _ => true,
        };
        happened && stuck_ok
    })
}

/// The hang a consistent stuck candidate stands for.
fn describe<S: Bits>(
    s: &Search<'_, '_, S>,
    g: &Graph<'_, S>,
    combo: &[&Path],
    rf: &[Option<usize>],
) -> Hang {
    let p = g.program;
    let mut stuck = Vec::new();
    for (t, path) in combo.iter().enumerate() {
        let Some(sp) = &path.stuck else { continue };
        let base = g.offset[t];
        let read = |i: usize| {
            let e = base + i;
            (
                g.events[e].pc,
                g.events[e].loc,
                g.read_value(rf, e).expect("a witness binds every read"),
            )
        };
        let on = match sp.kind {
            StuckKind::Barrier => {
                let arrive = base + path.events.len() - 1;
                let inst = s
                    .hang_instances()
                    .expect("a witness names every barrier")
                    .into_iter()
                    .find(|i| i.arrivals.iter().any(|&b| g.barriers[b].arrive == arrive));
                // In no phase: a lane whose warp never comes to the barrier
                // (`model::barrier::warp_unit`) waits for the lanes stuck
                // elsewhere.
                let Some(inst) = inst else {
                    let lanes =
                        p.warp_lanes(t)
                            .into_iter()
                            .filter(|&w| {
                                w != t
                                    && combo[w].stuck.as_ref().is_some_and(|o| {
                                        o.kind != StuckKind::Barrier || o.pc != sp.pc
                                    })
                            })
                            .collect();
                    stuck.push(Stuck {
                        thread: t,
                        pc: sp.pc,
                        on: Waits::Warp { lanes },
                    });
                    continue;
                };
                let mut arrived: Vec<usize> = inst
                    .arrivals
                    .iter()
                    .map(|&b| g.events[g.barriers[b].arrive].thread.unwrap())
                    .collect();
                arrived.sort_unstable();
                Waits::Barrier {
                    id: inst.id,
                    count: inst.count,
                    arrived,
                    needed: inst.needed,
                    undefined: !inst.agree,
                }
            }
            StuckKind::Await => {
                let Instr::Await { from } = &p.threads[t].code[sp.pc] else {
                    unreachable!("stuck at an await")
                };
                Waits::Await {
                    missing: from
                        .iter()
                        .filter(|a| combo[a.thread].point(a.pc, a.exec).is_none())
                        .map(|a| (a.thread, a.pc))
                        .collect(),
                }
            }
            StuckKind::Wait => {
                let Instr::MbarWait { phase, .. } = &p.threads[t].code[sp.pc] else {
                    unreachable!("stuck at a wait")
                };
                let (_, arg) = mbar::Test::of(phase);
                let (_, loc, value) = read(sp.latest.members().next().unwrap());
                let phase = match arg {
                    crate::ir::Operand::Imm(k) => k,
                    crate::ir::Operand::Reg(_) => unreachable!("blocking waits name their phase"),
                };
                Waits::Phase { loc, value, phase }
            }
            StuckKind::Spin { back } => Waits::Spin {
                head: sp.pc,
                back,
                reads: sp.latest.members().map(read).collect(),
            },
        };
        stuck.push(Stuck {
            thread: t,
            pc: sp.pc,
            on,
        });
    }
    Hang {
        stuck,
        copies: p.granularity,
    }
}
