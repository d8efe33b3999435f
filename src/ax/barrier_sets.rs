//! Which sets of threads can be stuck at a count-less CTA barrier, decided
//! from the paths alone, so that the termination search never enumerates a
//! path combination no barrier plan admits (`docs/oracle.md`, "Stuck sets
//! at count-less barriers").
//!
//! A thread of `n` stuck at `bar.sync 0` gives its combination a stuck
//! path; each thread has a complete and a stuck path, so the termination
//! search has `2^n` combinations, and every one of them but the all-complete
//! one is a deadlock that the barrier planner (`model::barrier::isa_plans`)
//! rejects. Here that planner's answer is worked out per *resource*, from
//! three facts per path, before any combination is built.
//!
//! It applies to each *pure* resource `a` of a CTA: `bar.sync a` with an
//! immediate name in 0..15 and no thread count, where no other barrier
//! instruction of the CTA names `a` and every one names an immediate (ISA
//! reading; counted barriers at other names may be there). For one such
//! resource, each thread's path gives:
//! `c`, its arrivals at `a` whose phase completes (every arrival, or all but
//! the last when the path is stuck at `a`), and its class: it finishes (runs
//! to its end, or is cut at the loop bound), it is stuck at `a`, or it is
//! stuck elsewhere. The planner's phases of a count-less resource are then
//! forced: complete phases `1..=m`, each taking the next arrival of every
//! thread with one left (a thread with none left must have exited), then at
//! most one phase that never completes, holding every arrival left. So a
//! plan exists exactly when, for some `m`:
//! 1. every thread that does not finish has `c = m` (a thread stuck at `a`
//!    has its stuck arrival in the open phase, after `m` complete ones; a
//!    thread stuck elsewhere must have given every phase its arrival, or it
//!    holds that phase up);
//! 2. every thread that finishes has `c ≤ m` (more arrivals would go to
//!    the open phase, and a waiting arrival of a finishing path must be
//!    released);
//! 3. if some thread is stuck at `a`, some thread of the CTA is stuck
//!    elsewhere: the open phase never completes only if a thread of the CTA
//!    neither arrives at it nor exits.
//!
//! [`BarrierSets::partial_ok`] answers whether the threads chosen so far can
//! still be completed by the others' paths into a combination that meets
//! these conditions for every pure resource; [`super::combos::Combos`] asks
//! it before going deeper, so the combinations it hands out are those of the
//! plain walk, in the same order, less some that no search could accept.

use crate::ir::{BarrierKind, Instr, Operand, Program, ThreadId, Value};

use super::unfold::{Expr, Path, PathEventKind, StuckKind};

/// How a path ends, as one resource sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// The path runs to its end (or is cut at the loop bound).
    Finishes,
    /// The path is stuck at an arrival at this resource.
    StuckHere,
    /// The path is stuck at something else.
    StuckElsewhere,
}

/// One path, as one resource sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Summary {
    /// Its arrivals at the resource in phases that complete.
    c: usize,
    /// How it ends.
    class: Class,
}

/// One count-less barrier resource of a pure CTA.
#[derive(Debug)]
struct Resource {
    /// The threads of its CTA (non-agents), and per thread the summary of
    /// each of its paths (by path index).
    threads: Vec<(ThreadId, Vec<Summary>)>,
    /// The largest `c` of any path.
    max_c: usize,
}

/// The count-less barrier resources of a program's pure CTAs, with each
/// path's summary (see the module's documentation), and the counted
/// barriers that warps of several lanes reach as one event.
#[derive(Debug)]
pub struct BarrierSets {
    resources: Vec<Resource>,
    warps: Vec<WarpResource>,
}

/// One path of a lane, as one counted barrier name of its warp sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LaneSummary {
    /// Per warp arrival of the lane at the name (in order): whether it waits
    /// (`bar.sync`; `bar.arrive` does not).
    waits: Vec<bool>,
    /// The path is stuck at its last warp arrival at the name.
    stuck_here: bool,
    /// The path is stuck (anywhere).
    stuck: bool,
}

/// A counted barrier name that the lanes of one warp reach as one event
/// (`model::barrier::warp_unit`): per lane, the summary of each path.
#[derive(Debug)]
struct WarpResource {
    lanes: Vec<(ThreadId, Vec<LaneSummary>)>,
}

impl BarrierSets {
    /// The pure resources of `p` (lowered, read under the ISA reading), over
    /// `paths` (every path of every thread, stuck ones included). `None` if
    /// there are none (nothing to prune).
    pub fn new(p: &Program, paths: &[Vec<Path>]) -> Option<BarrierSets> {
        let mut ctas: Vec<(u32, u32)> = Vec::new();
        for th in &p.threads {
            let key = (th.placement.gpu, th.placement.cta);
            if !ctas.contains(&key) {
                ctas.push(key);
            }
        }
        let mut resources = Vec::new();
        for (gpu, cta) in ctas {
            let in_cta: Vec<ThreadId> = (0..p.threads.len())
                .filter(|&t| {
                    let pl = p.threads[t].placement;
                    (pl.gpu, pl.cta) == (gpu, cta)
                })
                .collect();
            let Some(ids) = pure_names(p, &in_cta) else {
                continue;
            };
            for id in ids {
                let mut threads = Vec::new();
                let mut max_c = 0;
                for &t in &in_cta {
                    if p.threads[t].agent.is_some() {
                        continue;
                    }
                    let sums: Vec<Summary> = paths[t].iter().map(|q| summary(q, id)).collect();
                    max_c = sums.iter().fold(max_c, |m, s| m.max(s.c));
                    threads.push((t, sums));
                }
                resources.push(Resource { threads, max_c });
            }
        }
        let warps = warp_resources(p, paths);
        (!resources.is_empty() || !warps.is_empty()).then_some(BarrierSets { resources, warps })
    }

    /// Whether the paths chosen so far (`chosen[t]`: thread `t`'s path
    /// index, `None` for a thread not chosen yet) can be completed, with
    /// any of the other threads' paths, into a combination for which every
    /// pure resource has a barrier plan. Exact for each resource alone, so
    /// never false for a combination some search could accept.
    pub fn partial_ok(&self, chosen: &[Option<usize>]) -> bool {
        self.resources.iter().all(|r| r.partial_ok(chosen))
            && self.warps.iter().all(|w| w.partial_ok(chosen))
    }
}

impl WarpResource {
    /// Whether the lanes chosen so far can be part of a combination whose
    /// warp events at this name the oracle can form (`ax::barriers`,
    /// `warp_units`, which rejects the others). For the k-th event, with
    /// *present* lanes (those with a k-th warp arrival) and *absent* ones:
    /// * an absent lane that is stuck means the event never happens, so
    ///   every present lane must be stuck at it;
    /// * otherwise the event happens: a lane stuck at it while another
    ///   present lane passes it and waits (a released `bar.sync`) cannot be,
    ///   nor can a lane stuck at a `bar.arrive` (it waits only for lanes that
    ///   never come).
    ///
    /// Decided on the chosen lanes alone where a lane not chosen yet cannot
    /// change the answer, and exactly once the whole warp is chosen; never
    /// false for a combination `warp_units` accepts.
    fn partial_ok(&self, chosen: &[Option<usize>]) -> bool {
        let sums: Vec<&LaneSummary> = self
            .lanes
            .iter()
            .filter_map(|(t, s)| chosen[*t].map(|i| &s[i]))
            .collect();
        let whole = sums.len() == self.lanes.len();
        let most = sums.iter().map(|s| s.waits.len()).max().unwrap_or(0);
        for k in 0..most {
            let absent_stuck = sums.iter().any(|s| s.waits.len() <= k && s.stuck);
            // (stuck at the k-th arrival, it waits)
            let present: Vec<(bool, bool)> = sums
                .iter()
                .filter(|s| s.waits.len() > k)
                .map(|s| (s.stuck_here && s.waits.len() == k + 1, s.waits[k]))
                .collect();
            let any_stuck = present.iter().any(|p| p.0);
            let any_passes = present.iter().any(|p| !p.0);
            let stuck_arrive = present.iter().any(|p| p.0 && !p.1);
            if absent_stuck && any_passes {
                return false;
            }
            // Stuck and released lanes of one event (whichever case holds).
            if any_stuck && present.iter().any(|p| !p.0 && p.1) {
                return false;
            }
            // A lane stuck at `bar.arrive`: only an event that never
            // happens holds it, and then no lane of it passes.
            if stuck_arrive && any_passes {
                return false;
            }
            if whole && !absent_stuck && stuck_arrive {
                return false;
            }
        }
        true
    }
}

/// The counted barrier names that warps of several lanes of `p` reach as one
/// event, with each lane's paths summarised; a warp whose counted barriers
/// are not all named by constants is left out (nothing is pruned for it).
fn warp_resources(p: &Program, paths: &[Vec<Path>]) -> Vec<WarpResource> {
    let mut out = Vec::new();
    let mut seen: Vec<ThreadId> = Vec::new();
    for t in 0..p.threads.len() {
        if seen.contains(&t) || p.threads[t].agent.is_some() {
            continue;
        }
        let lanes = p.warp_lanes(t);
        seen.extend(&lanes);
        if lanes.len() < 2 {
            continue;
        }
        let mut names: Vec<Value> = Vec::new();
        let mut constant = true;
        for &u in &lanes {
            for i in &p.threads[u].code {
                if crate::model::barrier::warp_unit(p, u, i) {
                    match i {
                        Instr::Barrier { id, .. } => match id.first() {
                            Some(Operand::Imm(a)) => {
                                if !names.contains(a) {
                                    names.push(*a);
                                }
                            }
                            _ => constant = false,
                        },
                        _ => unreachable!("a warp unit is a barrier"),
                    }
                }
            }
        }
        if !constant {
            continue;
        }
        for a in names {
            let lanes = lanes
                .iter()
                .map(|&u| {
                    let sums = paths[u].iter().map(|q| lane_summary(p, u, q, a)).collect();
                    (u, sums)
                })
                .collect();
            out.push(WarpResource { lanes });
        }
    }
    out
}

/// Lane `u`'s path `q`, as the counted barrier `a` of its warp sees it.
fn lane_summary(p: &Program, u: ThreadId, q: &Path, a: Value) -> LaneSummary {
    let code = &p.threads[u].code;
    let here = |e: &super::unfold::PathEvent| {
        matches!(&e.kind, PathEventKind::BarArrive { id, .. } if id.first() == Some(&Expr::Const(a)))
            && crate::model::barrier::warp_unit(p, u, &code[e.pc])
    };
    let waits: Vec<bool> = q
        .events
        .iter()
        .filter(|e| here(e))
        .map(|e| matches!(e.kind, PathEventKind::BarArrive { waits: true, .. }))
        .collect();
    // A path stuck at a barrier ends with that arrival (`StuckKind::Barrier`).
    let stuck_here = q
        .stuck
        .as_ref()
        .is_some_and(|sp| sp.kind == StuckKind::Barrier)
        && q.events.last().is_some_and(here);
    LaneSummary {
        waits,
        stuck_here,
        stuck: q.stuck.is_some(),
    }
}

impl Resource {
    fn partial_ok(&self, chosen: &[Option<usize>]) -> bool {
        (0..=self.max_c).any(|m| self.ok_with(m, chosen))
    }

    /// Conditions 1–3 with `m` complete phases.
    fn ok_with(&self, m: usize, chosen: &[Option<usize>]) -> bool {
        let fits = |s: &Summary| match s.class {
            Class::Finishes => s.c <= m,
            Class::StuckHere | Class::StuckElsewhere => s.c == m,
        };
        let (mut here, mut elsewhere) = (false, false);
        // Threads not chosen yet whose only fitting paths are stuck here;
        // whether some thread not chosen yet can be stuck elsewhere.
        let (mut only_here, mut may_elsewhere) = (0usize, false);
        for (t, sums) in &self.threads {
            match chosen[*t] {
                Some(i) => {
                    let s = &sums[i];
                    if !fits(s) {
                        return false;
                    }
                    here |= s.class == Class::StuckHere;
                    elsewhere |= s.class == Class::StuckElsewhere;
                }
                None => {
                    let mut any = false;
                    let mut not_here = false;
                    for s in sums.iter().filter(|s| fits(s)) {
                        any = true;
                        not_here |= s.class != Class::StuckHere;
                        may_elsewhere |= s.class == Class::StuckElsewhere;
                    }
                    if !any {
                        return false;
                    }
                    if !not_here {
                        only_here += 1;
                    }
                }
            }
        }
        // Condition 3: a thread stuck here, chosen or forced, needs one
        // stuck elsewhere, chosen or available (a thread forced to be stuck
        // here offers no path stuck elsewhere, so `may_elsewhere` comes
        // from another thread).
        !(here || only_here > 0) || elsewhere || may_elsewhere
    }
}

/// The *pure* count-less resources of a CTA (its threads `in_cta`): the
/// names `a` (immediates in 0..15) of its `bar.sync a` instructions without
/// a thread count that no other barrier instruction of the CTA names (no
/// counted form, no `bar.arrive`). A counted barrier at another name does
/// not touch them: the planner plans each resource by its own arrivals, and
/// a thread waiting at the counted one is, for `a`, stuck elsewhere. `None`
/// when some CTA barrier names its resource with a register (any name may
/// then be shared) or is out of range, or the CTA has a warp barrier.
fn pure_names(p: &Program, in_cta: &[ThreadId]) -> Option<Vec<Value>> {
    let mut ids = Vec::new();
    let mut shared = Vec::new();
    for &t in in_cta {
        for i in &p.threads[t].code {
            let Instr::Barrier {
                kind, id, count, ..
            } = i
            else {
                continue;
            };
            match (kind, id.as_slice(), count) {
                (BarrierKind::Sync, [Operand::Imm(a)], None) if (0..16).contains(a) => {
                    if !ids.contains(a) {
                        ids.push(*a);
                    }
                }
                (BarrierKind::Sync | BarrierKind::Arrive, [Operand::Imm(a), ..], _)
                    if (0..16).contains(a) && !(id.len() == 1 && count.is_none()) =>
                {
                    shared.push(*a);
                }
                _ => return None,
            }
        }
    }
    ids.retain(|a| !shared.contains(a));
    Some(ids)
}

/// A path's summary for the resource named `id`.
fn summary(q: &Path, id: Value) -> Summary {
    let here = |k: &PathEventKind| matches!(k, PathEventKind::BarArrive { id: ids, .. } if ids.as_slice() == [Expr::Const(id)]);
    let arrivals = q.events.iter().filter(|e| here(&e.kind)).count();
    match &q.stuck {
        None => Summary {
            c: arrivals,
            class: Class::Finishes,
        },
        Some(sp)
            if sp.kind == StuckKind::Barrier && q.events.last().is_some_and(|e| here(&e.kind)) =>
        {
            Summary {
                c: arrivals - 1,
                class: Class::StuckHere,
            }
        }
        Some(_) => Summary {
            c: arrivals,
            class: Class::StuckElsewhere,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ax::AxOptions;
    use crate::limits::Budget;

    fn sets(src: &str) -> (Program, Vec<Vec<Path>>) {
        let t = crate::litmus::parse_source("t.litmus", src)
            .unwrap()
            .remove(0);
        let p = crate::model::lower::lower(&t.program, 2);
        let paths =
            crate::ax::unfold_all(&p, &AxOptions::default(), true, &Budget::unlimited()).unwrap();
        (p, paths)
    }

    /// The index of thread `t`'s path that is stuck (`true`) or not.
    fn path(paths: &[Vec<Path>], t: usize, stuck: bool) -> usize {
        paths[t]
            .iter()
            .position(|q| q.stuck.is_some() == stuck)
            .unwrap()
    }

    #[test]
    fn a_thread_stuck_at_a_count_less_barrier_needs_one_stuck_elsewhere() {
        let (p, paths) = sets(&crate::families::cta_barrier(3));
        let b = BarrierSets::new(&p, &paths).expect("one pure resource");
        let done = |t| Some(path(&paths, t, false));
        let stuck = |t| Some(path(&paths, t, true));
        assert!(b.partial_ok(&[None, None, None]));
        assert!(b.partial_ok(&[done(0), done(1), done(2)]));
        // Nobody can be stuck elsewhere: every stuck set is refused, as
        // soon as one stuck thread is chosen.
        assert!(!b.partial_ok(&[None, None, stuck(2)]));
        assert!(!b.partial_ok(&[stuck(0), stuck(1), stuck(2)]));
        assert!(!b.partial_ok(&[stuck(0), done(1), done(2)]));
    }

    #[test]
    fn a_spinner_after_the_barrier_admits_no_thread_stuck_at_it() {
        // P1 spins after the barrier: the open phase it would need to hold
        // up is the one it has already passed.
        let (p, paths) = sets(
            "PTX t\n{ x=0; }\n P0@cta 0,cluster 0,gpu 0 | P1@cta 0,cluster 0,gpu 0 ;\n \
             bar.sync 0 | bar.sync 0 ;\n st.relaxed.gpu x, 1 | L: ;\n \
             | ld.relaxed.gpu r0, x ;\n | beq r0, 0, L ;\nexists (0==0)\n",
        );
        let b = BarrierSets::new(&p, &paths).unwrap();
        let spins = paths[1]
            .iter()
            .position(|q| {
                matches!(
                    q.stuck.as_ref().map(|s| s.kind),
                    Some(StuckKind::Spin { .. })
                )
            })
            .unwrap();
        let at_bar = paths[1]
            .iter()
            .position(|q| q.stuck.as_ref().map(|s| s.kind) == Some(StuckKind::Barrier))
            .unwrap();
        let p0_done = Some(path(&paths, 0, false));
        let p0_stuck = Some(path(&paths, 0, true));
        assert!(b.partial_ok(&[p0_done, Some(spins)]));
        assert!(!b.partial_ok(&[p0_stuck, Some(spins)]));
        assert!(!b.partial_ok(&[p0_stuck, Some(at_bar)]));
        assert!(!b.partial_ok(&[p0_done, Some(at_bar)]));
        assert!(!b.partial_ok(&[p0_stuck, None]));
    }

    #[test]
    fn a_thread_spinning_before_the_barrier_holds_it_up() {
        // P1 spins before the barrier, so P0 may be stuck at it.
        let (p, paths) = sets(
            "PTX t\n{ x=0; }\n P0@cta 0,cluster 0,gpu 0 | P1@cta 0,cluster 0,gpu 0 ;\n \
             bar.sync 0 | L: ;\n | ld.relaxed.gpu r0, x ;\n | beq r0, 0, L ;\n \
             | bar.sync 0 ;\nexists (0==0)\n",
        );
        let b = BarrierSets::new(&p, &paths).unwrap();
        let p0_stuck = Some(path(&paths, 0, true));
        assert!(b.partial_ok(&[p0_stuck, None]));
        let spins = paths[1]
            .iter()
            .position(|q| {
                matches!(
                    q.stuck.as_ref().map(|s| s.kind),
                    Some(StuckKind::Spin { .. })
                )
            })
            .unwrap();
        assert!(b.partial_ok(&[p0_stuck, Some(spins)]));
    }

    #[test]
    fn a_counted_or_named_by_register_barrier_makes_its_cta_impure() {
        let (p, paths) = sets(
            "PTX t\n{ }\n P0@cta 0,cluster 0,gpu 0 | P1@cta 0,cluster 0,gpu 0 ;\n \
             bar.sync 1, 64 | bar.sync 1, 64 ;\nexists (0==0)\n",
        );
        assert!(BarrierSets::new(&p, &paths).is_none());
    }
}
