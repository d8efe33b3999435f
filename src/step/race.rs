//! A race the oracle found, replayed on the operational machine
//! (`ptxmc trace --race N`; `docs/races.md`, "Replayed on the machine").
//!
//! The oracle decides a race on its own relations (`ax::race`); the machine
//! is the second implementation that checks it. A run *shows* a race when
//! it ends in a final state (no thread cut at the loop bound: the oracle's
//! races come from complete, consistent executions) and, on the way, an
//! access of each side of the race retires while the other is not in its
//! causal past.
//!
//! Why the machine can say "not in its causal past": by its Lemma V
//! (`docs/machine.md` §4), when a thread retires an event `i`, after the
//! scoped propagation in, its view holds `raw(X)` exactly for the `X` with
//! `X cb i`, and `Front(K, line(i))` is exactly `{X : (X, i) ∈ ppcb}`;
//! `Front⁺` adds the writes observed by reads in the front, so
//! `Front ∪ Front⁺ = {X : (X, i) ∈ cause}` with `cause = ppcb ∪ obs;ppcb`
//! (digest §3.5) — the order the ISA's definition of a race uses. A
//! retirement adds only the event's own tokens to the thread's view
//! (`finish_retire_check`), so the view at retirement is the view after the
//! step without them. The set is recorded for each racing access when it
//! retires; the pair races when neither is in the other's set. Both
//! directions are decided at retirement: an access that retires later can
//! precede an earlier one in causality only as a write that a read in the
//! earlier one's past observed (retirement extends `cb`), and a read binds
//! before it retires, so that write is in the earlier one's set already.
//!
//! The search is breadth first over the stepping machine's own choices
//! (the ones `trace --follow` replays), so the run is a shortest one; a node
//! is a state together with the sets recorded so far, since two runs into
//! one state may differ in what each racing access saw when it retired.

use std::collections::{HashMap, HashSet, VecDeque};

use super::Session;
use crate::ax::race::{Access, Race};
use crate::ir::Program;
use crate::limits::{Budget, Exceeded, Poll};
use crate::op::Machine;
use crate::op::state::State;
use crate::rel::{Bits, members};

/// The machine's event slots of the two sides of a race.
#[derive(Clone, Copy, Debug)]
struct Sides<S: Bits> {
    first: S,
    second: S,
}

impl<S: Bits> Sides<S> {
    /// The memory slots of `m` that perform `race`'s accesses: its location,
    /// from the instruction that each side names (an asynchronous agent's
    /// access is named by the instruction that started it, as `ax::race`
    /// names it).
    fn of(m: &Machine<'_, S>, race: &Race) -> Sides<S> {
        let p: &Program = &m.program;
        let of = |a: &Access| {
            let mut out = S::EMPTY;
            for (s, info) in m.layout.slots.iter().enumerate() {
                let Some(t) = info.thread else { continue };
                if !info.is_mem() || info.loc != race.loc || info.proxy != a.proxy {
                    continue;
                }
                let (thread, pc, agent) = match &p.threads[t].agent {
                    Some(ag) => (ag.issuer, ag.spawn_pc, true),
                    None => (t, info.pc, false),
                };
                if (thread, pc, agent) == (a.thread, a.pc, a.agent) {
                    out |= S::bit(s);
                }
            }
            out
        };
        Sides {
            first: of(&race.first),
            second: of(&race.second),
        }
    }

    fn all(&self) -> S {
        self.first | self.second
    }
}

/// What a run has recorded of the racing accesses that retired: each one's
/// slot with the racing slots in its causal past at retirement, or that
/// two of them were found unordered.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Record<S: Bits> {
    past: Vec<(usize, S)>,
    confirmed: Option<(usize, usize)>,
}

/// The slots in causality order before slot `x`, which retired in the step
/// that led to `st`: `Front ∪ Front⁺` of `x`'s cache line, in its thread's
/// view less `x`'s own tokens (the view at its retirement).
pub fn causal_past<S: Bits>(m: &Machine<'_, S>, st: &State<S>, x: usize) -> S {
    let t = m.layout.slots[x]
        .thread
        .expect("a retired access belongs to a thread");
    let mut k = st.threads[t].view.clone();
    k.raw &= !S::bit(x);
    k.gen_ &= !S::bit(x);
    m.front(&k, x) | m.front_plus(st, &k, x).0
}

impl<S: Bits> Record<S> {
    /// The record after the step from `st` to `next`.
    fn after(&self, m: &Machine<'_, S>, st: &State<S>, next: &State<S>, sides: &Sides<S>) -> Self {
        if self.confirmed.is_some() {
            return self.clone();
        }
        let new = next.retired & !st.retired & sides.all();
        if new.is_empty() {
            return self.clone();
        }
        let mut r = self.clone();
        for x in members(new) {
            r.past.push((x, causal_past(m, next, x) & sides.all()));
        }
        r.past.sort_unstable_by_key(|e| e.0);
        for &(a, pa) in &r.past {
            if !sides.first.has(a) {
                continue;
            }
            for &(b, pb) in &r.past {
                if a != b && sides.second.has(b) && !pa.has(b) && !pb.has(a) {
                    r.confirmed = Some((a, b));
                    r.past.clear();
                    return r;
                }
            }
        }
        r
    }
}

/// Where a run shows a race: the 1-based steps that retired the first and
/// the second side's access (in the race's order of sides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shown {
    /// The step that retired the first side's access.
    pub first_step: usize,
    /// The step that retired the second side's access.
    pub second_step: usize,
}

impl<S: Bits> Session<'_, S> {
    /// A shortest run from the initial state, over every choice of leader
    /// still open at the start, that shows `race` ([`Shown`]): its choices
    /// (what `trace --follow` replays); `None` if no run of the machine shows
    /// it, `Err` if a limit of the session stopped the search.
    pub fn go_to_race(&self, race: &Race) -> Result<Option<Vec<usize>>, Exceeded> {
        let budget = Budget::new(self.options.limits);
        let mut best: Option<Vec<usize>> = None;
        for v in self.open_at(0) {
            let Some(path) = self.race_run(v, race, &budget)? else {
                continue;
            };
            let mut full = self.variants.picks(v);
            full.extend(path);
            if best.as_ref().is_none_or(|b| full.len() < b.len()) {
                best = Some(full);
            }
        }
        Ok(best)
    }

    /// Whether the run so far shows `race`, and at which steps.
    pub fn shows_race(&self, race: &Race) -> Option<Shown> {
        if self.picking_leaders() {
            return None;
        }
        let m = self.machine();
        let sides = Sides::of(m, race);
        let mut rec = Record::<S>::default();
        let mut step_of: HashMap<usize, usize> = HashMap::new();
        for k in 0..self.steps.len() {
            let (st, next) = (&self.states[k], &self.states[k + 1]);
            for x in members(next.retired & !st.retired & sides.all()) {
                step_of.insert(x, k + 1);
            }
            rec = rec.after(m, st, next, &sides);
        }
        let (a, b) = rec.confirmed?;
        (self.is_final() && !self.is_cut()).then(|| Shown {
            first_step: step_of[&a],
            second_step: step_of[&b],
        })
    }

    /// Breadth-first search in variant `v`'s stepping machine for a final
    /// state reached by a run that shows `race`.
    fn race_run(
        &self,
        v: usize,
        race: &Race,
        budget: &Budget,
    ) -> Result<Option<Vec<usize>>, Exceeded> {
        let m = &self.machines[v];
        let sides = Sides::of(m, race);
        if sides.first.is_empty() || sides.second.is_empty() {
            return Ok(None);
        }
        m.within(budget, || {
            // Per node: its parent and the choice that led to it.
            let mut nodes: Vec<(usize, usize)> = vec![(usize::MAX, 0)];
            let mut seen: HashSet<(u64, Record<S>)> = HashSet::new();
            let init = m.initial();
            seen.insert((init.fingerprint(), Record::default()));
            let mut queue = VecDeque::from([(0usize, init, Record::<S>::default())]);
            let mut poll = Poll::new(budget);
            let path = |mut id: usize, nodes: &[(usize, usize)]| {
                let mut out = Vec::new();
                while nodes[id].0 != usize::MAX {
                    out.push(nodes[id].1);
                    id = nodes[id].0;
                }
                out.reverse();
                out
            };
            while let Some((id, st, rec)) = queue.pop_front() {
                if let Some(e) = poll.step() {
                    return Err(e);
                }
                if m.is_final(&st) {
                    if rec.confirmed.is_some() && !m.is_cut(&st) {
                        return Ok(Some(path(id, &nodes)));
                    }
                    continue;
                }
                for (i, (_, next)) in m.successors(&st).into_iter().enumerate() {
                    let r = rec.after(m, &st, &next, &sides);
                    let key = (next.fingerprint(), r.clone());
                    if !seen.insert(key) {
                        continue;
                    }
                    nodes.push((id, i));
                    queue.push_back((nodes.len() - 1, *next, r));
                }
                if let Some(e) = budget.states_exceeded(nodes.len() as u64) {
                    return Err(e);
                }
            }
            match budget.exceeded() {
                Some(e) if m.interrupted() => Err(e),
                _ => Ok(None),
            }
        })
    }
}
