//! CTA barrier phases of a candidate under the ISA reading
//! (`model::barrier`): which arrivals form which phase, as synchronisation
//! edges, the order in time the phases impose, and the undefined behaviour
//! a choice reaches. Shared by the oracle's search and the explanation's
//! enumeration, so the two implementations of the axioms read barriers
//! alike.

use crate::ir::{BarrierKind, Value};
use crate::model::barrier::{self, CtaThreads, PlanArrival, PlannedPhase, Reading};
use crate::model::ub::Undefined;
use crate::rel::{Bits, Rel};

use super::graph::Graph;
use super::search::Instance;

/// One way the barrier arrivals of a candidate form phases.
#[derive(Clone)]
pub struct BarChoice<S: Bits> {
    /// Arrive → wait of every other participant, in each complete phase.
    pub sync: Rel<S>,
    /// What the phases order in time, without synchronising: every arrival
    /// of a phase before every arrival of the next phase of its barrier, and
    /// the last event of a thread whose exit completed a count-less phase
    /// before that phase's waits. Retirement order extends base causality
    /// and these, so base causality with them must stay acyclic.
    pub time: Rel<S>,
    /// The phases as instances (for hang descriptions).
    pub instances: Vec<Instance>,
    /// The least undefined step of the choice, if any.
    pub ub: Option<Undefined>,
}

/// Every way (ISA reading) the arrivals of `g` under reads-from `rf` form
/// phases in which every waiting arrival is released and every stuck one
/// is not; `None` if there is none (a deadlock). `stop` is polled per plan
/// step; once it says so the choices found so far are returned.
pub fn isa_choices<S: Bits>(
    g: &Graph<'_, S>,
    rf: &[Option<usize>],
    stop: &mut dyn FnMut() -> bool,
) -> Option<Vec<BarChoice<S>>> {
    let n = g.len();
    let p = g.program;
    type Key = (u32, u32, Vec<Value>);
    /// One barrier resource: its key, its arrivals, each one's index into
    /// `g.barriers`, and per thread its arrivals in order.
    type Group = (Key, Vec<PlanArrival>, Vec<usize>, Vec<(usize, Vec<usize>)>);
    let mut groups: Vec<Group> = Vec::new();
    for (bi, b) in g.barriers.iter().enumerate() {
        let t = g.events[b.arrive].thread.unwrap();
        // An undefined name (a thin-air value, which No-Thin-Air rejects
        // anyway) synchronises nothing.
        let ids: Vec<Value> =
            b.id.iter()
                .map(|e| g.eval(rf, t, e))
                .collect::<Option<_>>()?;
        let count = b.count.as_ref().map(|c| g.eval(rf, t, c).unwrap_or(-1));
        let waits = b.wait.is_some() || b.stuck;
        let kind = if waits {
            BarrierKind::Sync
        } else {
            BarrierKind::Arrive
        };
        let pc = g.events[b.arrive].pc;
        let r = match &p.threads[t].code[pc] {
            crate::ir::Instr::Barrier { kind: k, .. } if k.is_warp() => {
                barrier::resolve_warp_kind(*k, ids[0], barrier::WarpOf::of(p, t))
            }
            _ => barrier::resolve(Reading::Isa, kind, &ids, count),
        };
        let (gpu, cta) = g.cta(b.arrive);
        let key = (gpu, cta, r.id.to_vec());
        let gi = match groups.iter().position(|(k, ..)| *k == key) {
            Some(i) => i,
            None => {
                groups.push((key, Vec::new(), Vec::new(), Vec::new()));
                groups.len() - 1
            }
        };
        let (_, arr, of, per_thread) = &mut groups[gi];
        let a = arr.len();
        arr.push(PlanArrival {
            thread: t,
            needed: r.needed,
            count: r.count,
            ub: r.ub,
            waits,
            stuck: b.stuck,
            own_waits: waits,
            own_stuck: b.stuck,
        });
        of.push(bi);
        match per_thread.iter_mut().find(|(u, _)| *u == t) {
            Some((_, l)) => l.push(a),
            None => per_thread.push((t, vec![a])),
        }
    }
    let finishes = |u: usize| g.stuck[u].is_none();
    let last_event = |u: usize| {
        let end = g.offset.get(u + 1).copied().unwrap_or(n);
        (end > g.offset[u]).then(|| end - 1)
    };
    let mut choices = vec![BarChoice {
        sync: Rel::empty(n),
        time: Rel::empty(n),
        instances: Vec::new(),
        ub: None,
    }];
    for ((gpu, cta, id), arr, of, per_thread) in &groups {
        let threads: Vec<usize> = barrier::participants(p, *gpu, *cta, id).unwrap_or_else(|| {
            (0..p.threads.len())
                .filter(|&u| {
                    let pl = p.threads[u].placement;
                    p.threads[u].agent.is_none() && (pl.gpu, pl.cta) == (*gpu, *cta)
                })
                .collect()
        });
        // An `activemask` block's lanes execute it together: a lane that
        // exits without arriving does not complete it (the planner excuses
        // only lanes that finish).
        let never = |_: usize| false;
        let cta_threads = CtaThreads {
            threads: &threads,
            finishes: if barrier::excuses_exits(id) {
                &finishes
            } else {
                &never
            },
        };
        let units = warp_units(g, arr, of, per_thread, &last_event)?;
        let plans = barrier::isa_plans(&units.arr, &units.per_thread, &cta_threads, stop);
        if plans.is_empty() {
            return None;
        }
        let mut next = Vec::new();
        for plan in &plans {
            let plan = units.expand(plan);
            let mut one = phases_as_choice(g, id, arr, of, &plan, &threads, &last_event);
            for &(a, b) in &units.time {
                one.time.add(a, b);
            }
            for c in &choices {
                if stop() {
                    return Some(next);
                }
                let mut sync = c.sync.clone();
                sync.union_with(&one.sync);
                let mut time = c.time.clone();
                time.union_with(&one.time);
                let mut instances = c.instances.clone();
                instances.extend(one.instances.iter().cloned());
                let ub = match (&c.ub, &one.ub) {
                    (Some(a), Some(b)) => Some(a.clone().min(b.clone())),
                    (a, b) => a.clone().or_else(|| b.clone()),
                };
                next.push(BarChoice {
                    sync,
                    time,
                    instances,
                    ub,
                });
            }
        }
        choices = next;
    }
    // Lanes of one warp stuck for good at different barriers, one counted;
    // or a lane stuck at an `.aligned` barrier while another lane of its
    // warp is stuck elsewhere.
    let away = barrier::aligned_lane_away(
        g.program,
        &g.stuck
            .iter()
            .enumerate()
            .filter_map(|(t, sp)| Some((t, sp.as_ref()?.pc)))
            .collect::<Vec<_>>(),
    );
    let divergence = match (warp_divergence(g, rf), away) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some(u) = divergence {
        for c in &mut choices {
            if c.ub.as_ref().is_none_or(|b| u < *b) {
                c.ub = Some(u.clone());
            }
        }
    }
    Some(choices)
}

/// The lanes of a candidate whose paths are stuck at a CTA barrier arrival,
/// judged by `model::barrier::warp_divergence` (the machine judges its hang
/// witnesses by the same rule): undefined when lanes of one warp wait for
/// good at different barriers, one of them counted.
fn warp_divergence<S: Bits>(g: &Graph<'_, S>, rf: &[Option<usize>]) -> Option<Undefined> {
    let p = g.program;
    let lanes: Vec<barrier::StuckLane> = g
        .barriers
        .iter()
        .filter(|b| b.stuck)
        .filter_map(|b| {
            let t = g.events[b.arrive].thread?;
            let pc = g.events[b.arrive].pc;
            let i = &p.threads[t].code[pc];
            if !matches!(i, crate::ir::Instr::Barrier { kind, .. } if !kind.is_warp()) {
                return None;
            }
            Some(barrier::StuckLane {
                thread: t,
                pc,
                name: g.eval(rf, t, b.id.first()?)?,
                counted: barrier::warp_unit(p, t, i),
            })
        })
        .collect();
    barrier::warp_divergence(p, &lanes)
}

/// The arrivals at one resource as the planner counts them: the lanes of a
/// warp arriving at a counted barrier together are one event
/// (`model::barrier::warp_unit`), every other arrival an event of its own.
struct Units {
    /// One arrival per event (the first lane's, waiting if any lane waits,
    /// stuck if any is, undefined if any lane is or the lanes disagree).
    arr: Vec<PlanArrival>,
    /// Per thread (per warp: its first lane) its events in order.
    per_thread: Vec<(usize, Vec<usize>)>,
    /// Per event, its arrivals (indices into the resource's arrivals).
    lanes: Vec<Vec<usize>>,
    /// What the events order in time, as event pairs: every lane's earlier
    /// events, and the last event of every lane of the warp that exited
    /// before the event, before each lane's arrival (the machine makes the
    /// event once every lane not finished has reached the barrier).
    time: Vec<(usize, usize)>,
}

impl Units {
    /// A plan over events as a plan over the resource's arrivals.
    fn expand(&self, plan: &[PlannedPhase]) -> Vec<PlannedPhase> {
        plan.iter()
            .map(|ph| {
                let mut members: Vec<usize> = ph
                    .members
                    .iter()
                    .flat_map(|&u| self.lanes[u].iter().copied())
                    .collect();
                members.sort_unstable();
                let mut order = Vec::new();
                for &(a, b) in &ph.order {
                    for &x in &self.lanes[a] {
                        for &y in &self.lanes[b] {
                            order.push((x, y));
                        }
                    }
                }
                PlannedPhase {
                    members,
                    complete: ph.complete,
                    exited: ph.exited.clone(),
                    ub: ph.ub,
                    order,
                }
            })
            .collect()
    }
}

/// Group the arrivals `arr` at one resource into events ([`Units`]): the
/// k-th warp arrival of each lane of a warp at it form one event. `None` if
/// the candidate cannot be: a lane that waits past an event whose other
/// lane is stuck there, or a lane that arrives while another lane of its
/// warp is stuck elsewhere and never comes (the machine never makes that
/// event).
fn warp_units<S: Bits>(
    g: &Graph<'_, S>,
    arr: &[PlanArrival],
    of: &[usize],
    per_thread: &[(usize, Vec<usize>)],
    last_event: &dyn Fn(usize) -> Option<usize>,
) -> Option<Units> {
    let p = g.program;
    let is_unit = |a: usize| {
        let ev = g.barriers[of[a]].arrive;
        let t = g.events[ev].thread.unwrap();
        barrier::warp_unit(p, t, &p.threads[t].code[g.events[ev].pc])
    };
    // `bar.arrive` (no wait event): stuck only while its warp never comes.
    let arrive_only = |a: usize| {
        g.barriers[of[a]].wait.is_none() && {
            let ev = g.barriers[of[a]].arrive;
            let t = g.events[ev].thread.unwrap();
            matches!(
                p.threads[t].code[g.events[ev].pc],
                crate::ir::Instr::Barrier {
                    kind: BarrierKind::Arrive,
                    ..
                }
            )
        }
    };
    if arr
        .iter()
        .enumerate()
        .any(|(a, x)| x.stuck && arrive_only(a) && !is_unit(a))
    {
        return None;
    }
    let mut u = Units {
        arr: Vec::new(),
        per_thread: Vec::new(),
        lanes: Vec::new(),
        time: Vec::new(),
    };
    let push = |u: &mut Units, key: usize, lanes: Vec<usize>| {
        let first = &arr[lanes[0]];
        let agree = lanes
            .iter()
            .all(|&a| arr[a].needed == first.needed && arr[a].count == first.count);
        let ub = lanes
            .iter()
            .find_map(|&a| arr[a].ub)
            .or_else(|| (!agree).then_some(barrier::BarrierUb::CountsDisagree));
        let e = u.arr.len();
        u.arr.push(PlanArrival {
            thread: key,
            needed: first.needed,
            count: first.count,
            ub,
            waits: lanes.iter().any(|&a| arr[a].waits),
            stuck: lanes.iter().any(|&a| arr[a].stuck),
            own_waits: lanes.iter().any(|&a| arr[a].thread == key && arr[a].waits),
            own_stuck: lanes.iter().any(|&a| arr[a].thread == key && arr[a].stuck),
        });
        u.lanes.push(lanes);
        match u.per_thread.iter_mut().find(|(k, _)| *k == key) {
            Some((_, l)) => l.push(e),
            None => u.per_thread.push((key, vec![e])),
        }
    };
    // Per warp (by its first lane), its events in order: the lanes' k-th
    // warp arrivals, or `None` for an event that never happens.
    let mut warps: Vec<(usize, Vec<Option<Vec<usize>>>)> = Vec::new();
    for (t, list) in per_thread {
        let warp = p.warp_lanes(*t);
        let lead = warp[0];
        if !list.iter().any(|&a| is_unit(a)) || warps.iter().any(|(l, _)| *l == lead) {
            continue;
        }
        // Each lane's warp arrivals at this resource, in order.
        let of_lane: Vec<(usize, Vec<usize>)> = warp
            .iter()
            .map(|&w| {
                let l = per_thread
                    .iter()
                    .find(|(x, _)| *x == w)
                    .map(|(_, l)| l.iter().copied().filter(|&a| is_unit(a)).collect())
                    .unwrap_or_default();
                (w, l)
            })
            .collect();
        let most = of_lane.iter().map(|(_, l)| l.len()).max().unwrap_or(0);
        let mut events = Vec::new();
        for k in 0..most {
            let lanes: Vec<usize> = of_lane
                .iter()
                .filter_map(|(_, l)| l.get(k).copied())
                .collect();
            // The lanes without a k-th arrival: exited, or stuck elsewhere.
            let absent: Vec<usize> = of_lane
                .iter()
                .filter(|(_, l)| l.len() <= k)
                .map(|(w, _)| *w)
                .collect();
            if absent.iter().any(|&w| g.stuck[w].is_some()) {
                // The event never happens: every lane in it must be stuck
                // there (it never arrives, so its phase never completes).
                if lanes.iter().any(|&a| !arr[a].stuck) {
                    return None;
                }
                events.push(None);
                continue;
            }
            if lanes.iter().any(|&a| arr[a].stuck && arrive_only(a))
                || (lanes.iter().any(|&a| arr[a].stuck)
                    && lanes.iter().any(|&a| !arr[a].stuck && arr[a].waits))
            {
                return None;
            }
            let ev = |a: usize| g.barriers[of[a]].arrive;
            for &i in &lanes {
                for &j in &lanes {
                    let (tj, pj) = (arr[j].thread, ev(j));
                    if i != j && pj > g.offset[tj] {
                        u.time.push((pj - 1, ev(i)));
                    }
                }
                for &w in &absent {
                    if let Some(last) = last_event(w) {
                        u.time.push((last, ev(i)));
                    }
                }
            }
            events.push(Some(lanes));
        }
        warps.push((lead, events));
    }
    // Each thread's events in its program order (the planner takes them so):
    // its own arrivals one by one, and each warp event in the list of one of
    // its lanes, where that lane's own warp arrival stands. The lane is the
    // event's first lane with count-less arrivals at this name, else its
    // first lane: so a lane with both count-less and counted arrivals keeps
    // their order in its list (a count-less phase takes every listed
    // thread's next arrival, and an event listed under another lane, one
    // that has exited or arrives count-less later, would stand in its way:
    // `Bar-warp-countless-after-counted`). Another lane's part in an event
    // is ordered against its own arrivals by the time edges above.
    let countless = |t: usize| {
        per_thread
            .iter()
            .any(|(x, l)| *x == t && l.iter().any(|&a| !is_unit(a)))
    };
    let key = |lanes: &[usize]| {
        lanes
            .iter()
            .map(|&a| arr[a].thread)
            .find(|&t| countless(t))
            .unwrap_or(arr[lanes[0]].thread)
    };
    for (t, list) in per_thread {
        let lead = p.warp_lanes(*t)[0];
        let events = warps.iter().find(|(l, _)| *l == lead).map(|(_, e)| e);
        let mut k = 0;
        for &a in list {
            if !is_unit(a) {
                push(&mut u, *t, vec![a]);
                continue;
            }
            if let Some(Some(lanes)) = events.and_then(|e| e.get(k)) {
                if key(lanes) == *t {
                    push(&mut u, *t, lanes.clone());
                }
            }
            k += 1;
        }
    }
    Some(u)
}

/// The edges, instances and undefined step of one resource's plan.
fn phases_as_choice<S: Bits>(
    g: &Graph<'_, S>,
    id: &[Value],
    arr: &[PlanArrival],
    of: &[usize],
    plan: &[PlannedPhase],
    threads: &[usize],
    last_event: &dyn Fn(usize) -> Option<usize>,
) -> BarChoice<S> {
    let n = g.len();
    let mut sync = Rel::empty(n);
    let mut time = Rel::empty(n);
    let mut instances = Vec::new();
    let mut ub = None;
    let ev = |a: usize| &g.barriers[of[a]];
    for (k, ph) in plan.iter().enumerate() {
        if ph.complete {
            // `elect.sync`'s wait orders no memory: its phases constrain
            // only the order in time.
            let edges = if barrier::orders_memory(id) {
                &mut sync
            } else {
                &mut time
            };
            for &i in &ph.members {
                for &j in &ph.members {
                    if let (true, Some(w)) = (i != j, ev(j).wait) {
                        edges.add(ev(i).arrive, w);
                    }
                }
            }
            for &u in &ph.exited {
                if let Some(last) = last_event(u) {
                    for &j in &ph.members {
                        if let Some(w) = ev(j).wait {
                            time.add(last, w);
                        }
                    }
                }
            }
        }
        for &(a, b) in &ph.order {
            time.add(ev(a).arrive, ev(b).arrive);
        }
        if let Some(next) = plan.get(k + 1) {
            for &i in &ph.members {
                for &j in &next.members {
                    time.add(ev(i).arrive, ev(j).arrive);
                }
            }
        }
        let at = |a: usize| (arr[a].thread, g.events[ev(a).arrive].pc);
        let members = ph.members.iter().map(|&a| barrier::PhaseMember {
            ub: arr[a].ub,
            needed: arr[a].needed,
            count: arr[a].count,
            at: at(a),
            aligned_warp: barrier::aligned_warp(g.program, at(a).0, at(a).1),
        });
        if let Some(u) = barrier::phase_ub(members) {
            if ub.as_ref().is_none_or(|b| u < *b) {
                ub = Some(u);
            }
        }
        let first = &arr[ph.members[0]];
        let needed = match first.needed {
            Some(c) => usize::try_from(c).unwrap_or(usize::MAX),
            None => threads
                .iter()
                .filter(|&&u| {
                    ph.members.iter().any(|&a| arr[a].thread == u) || !ph.exited.contains(&u)
                })
                .count(),
        };
        instances.push(Instance {
            id: id.to_vec(),
            count: first.count,
            agree: ph.ub.is_none(),
            arrivals: ph.members.iter().map(|&a| of[a]).collect(),
            needed,
        });
    }
    BarChoice {
        sync,
        time,
        instances,
        ub,
    }
}
