//! Every candidate execution of a program, or only those that would give an
//! outcome, each with the verdict of the literal checker ([`super::check`]).
//!
//! A candidate is one control-flow path per thread, reads-from (each read
//! from a write of its location), the barrier instances, a Fence-SC order
//! (an orientation of every morally strong pair of `fence.sc`), an
//! orientation of every morally strong pair of same-location writes, and —
//! for an outcome that names final values — the write each named location
//! ends with. Coherence is then the smallest order those choices and A1
//! allow (digest §3.9). Candidates are pruned only on values (a branch
//! outcome a path assumed, the outcome's registers), never on an axiom, so
//! every inconsistent candidate reaches the checker and gets its reason.

use std::time::Instant;

use crate::ax::graph::Graph;
use crate::ax::unfold::{self, Path};
use crate::ir::{LocId, Program, Prop, Term, Value};
use crate::outcome::{Columns, Outcomes};
use crate::rel::{Bits, Rel, members};

use super::check::{Axiom, Relations, Static, Violation, Witness};

/// Limits of an enumeration.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How many times a loop that is not a spin loop may jump back.
    pub loop_bound: u32,
    /// The most candidates to examine.
    pub max_candidates: u64,
    /// Give up at this instant.
    pub deadline: Option<Instant>,
    /// How CTA barriers are read.
    pub barriers: crate::model::barrier::Reading,
    /// Which writes spinning reads must eventually see (termination).
    pub fairness: crate::model::hang::Fairness,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            loop_bound: 2,
            max_candidates: 1_000_000,
            deadline: None,
            barriers: Default::default(),
            fairness: Default::default(),
        }
    }
}

/// Why an enumeration stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// More candidates than the limit.
    TooManyCandidates(u64),
    /// The time limit passed.
    Timeout,
    /// The program is too large for the skeleton (paths or events).
    TooLarge(String),
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stopped::TooManyCandidates(n) => write!(f, "more than {n} candidate executions"),
            Stopped::Timeout => write!(f, "the time limit was reached"),
            Stopped::TooLarge(why) => f.write_str(why),
        }
    }
}

/// The checker's verdict on a candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every axiom holds (for one coherence order per location, in the witness).
    Consistent,
    /// Rejected. With one reason for a choice of reads-from, barriers and
    /// Fence-SC order that fails whatever coherence is; with several when
    /// each coherence order of one location fails in its own way.
    Rejected(Vec<Violation>),
}

/// One candidate, as the visitor sees it: reads-from, barrier instances and
/// Fence-SC order chosen, coherence judged per location.
pub struct Candidate<'c, 'g, 'p, S: Bits> {
    /// The skeleton (one path per thread).
    pub graph: &'g Graph<'p, S>,
    /// Index of the path combination (odometer order over threads).
    pub combo: usize,
    /// The witnesses; for a consistent candidate `orient` is one coherence
    /// order per location that passes.
    pub witness: &'c Witness<S>,
    /// Only some reads are chosen (`rf` is `None` for the others): every
    /// candidate that extends this choice fails the same way.
    pub prefix: bool,
    /// Relations of the witness (for a consistent one: with its coherence).
    pub relations: Option<&'c Relations<'c, 'p, S>>,
    /// For each location the outcome names, the write it ends with (consistent candidates).
    pub finals: &'c [(LocId, usize)],
    /// The checker's verdict.
    pub verdict: Verdict,
}

/// What [`enumerate`] shows each candidate to, at whatever width the
/// candidate's events need (a generic method, so a closure would not do).
pub trait Visit {
    /// Look at one candidate; `false` to stop the enumeration.
    fn visit<S: Bits>(&mut self, c: &Candidate<'_, '_, '_, S>) -> bool;
}

/// A visitor that looks at nothing and never stops.
struct Every;

impl Visit for Every {
    fn visit<S: Bits>(&mut self, _: &Candidate<'_, '_, '_, S>) -> bool {
        true
    }
}

/// What an enumeration saw.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Candidates examined (including rejected prefixes).
    pub candidates: u64,
    /// Some path was cut at the loop bound (its executions were skipped).
    pub bound_hit: bool,
}

/// Which candidates to enumerate.
#[derive(Clone, Copy)]
pub enum Filter<'a> {
    /// All of them.
    All,
    /// Those whose final state would satisfy this proposition.
    Outcome(&'a Prop),
}

/// Enumerate the candidates of `p` (a *lowered* program) that pass `filter`;
/// `visit` returns false to stop.
pub fn enumerate<V: Visit>(
    p: &Program,
    filter: Filter,
    limits: &Limits,
    visit: &mut V,
) -> Result<Summary, Stopped> {
    walk_all(p, filter, limits, None, visit)
}

/// Every final state of a consistent candidate, by the literal checker: the
/// outcome set to compare with the oracle's.
pub fn outcomes(p: &Program, limits: &Limits) -> Result<Outcomes, Stopped> {
    let cols = Columns::of(p);
    let mut out = Outcomes::new();
    walk_all(p, Filter::All, limits, Some((&cols, &mut out)), &mut Every)?;
    Ok(out)
}

fn walk_all<V: Visit>(
    p: &Program,
    filter: Filter,
    limits: &Limits,
    mut sink: Option<(&Columns, &mut Outcomes)>,
    visit: &mut V,
) -> Result<Summary, Stopped> {
    let mut paths: Vec<Vec<Path>> = Vec::new();
    // Unfolding polls the run's budget like the oracle's does; here the only
    // limit it can meet is the deadline.
    let budget = crate::limits::Budget::new(crate::limits::Limits {
        timeout: limits
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now())),
        ..Default::default()
    });
    let mut poll = crate::limits::Poll::new(&budget);
    let loops = crate::model::loops::analyse(p, true);
    for (t, th) in p.threads.iter().enumerate() {
        let ps = unfold::unfold(th, &loops[t], limits.loop_bound, 4096, false, &mut poll).map_err(
            |e| match e {
                unfold::UnfoldError::Budget(_) => Stopped::Timeout,
                unfold::UnfoldError::TooManyPaths(n) => {
                    Stopped::TooLarge(format!("thread P{t} has more than {n} control-flow paths"))
                }
            },
        )?;
        paths.push(ps);
    }
    let mut summary = Summary::default();
    if paths.iter().any(|ps| ps.is_empty()) {
        return Ok(summary);
    }
    let named: Vec<LocId> = match filter {
        Filter::All => Vec::new(),
        Filter::Outcome(prop) => {
            let mut ls: Vec<LocId> = prop
                .terms()
                .iter()
                .filter_map(|t| match t {
                    Term::Loc(l) => Some(*l),
                    _ => None,
                })
                .collect();
            ls.sort_unstable();
            ls.dedup();
            ls
        }
    };
    let mut combos = crate::ax::combos::Combos::new(p, &paths);
    let mut combo = 0;
    while let Some(chosen) = combos.next() {
        // One look at the clock per combination: a program with many
        // combinations, each of which has no candidate, visits no node
        // (where the clock is otherwise read) for as long as they last.
        if limits.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Stopped::Timeout);
        }
        let events = p.locations.len() + chosen.iter().map(|c| c.events.len()).sum::<usize>();
        if chosen.iter().any(|c| c.truncated) {
            summary.bound_hit = true;
        } else if crate::ax::termination::awaits_consistent(p, &chosen) {
            // As wide as this combination's events need (`rel::with_width!`).
            let too_many = || {
                Err(Stopped::TooLarge(format!(
                    "an execution has more than {} events (the widest event sets this build holds)",
                    crate::rel::MAX_EVENTS
                )))
            };
            let end = crate::with_width!(events, S => {
                walk_one::<S, V>(p, &chosen, filter, &named, limits, combo, &mut summary, &mut sink, visit)
            }, too_many())?;
            if end {
                return Ok(summary);
            }
        }
        combo += 1;
    }
    Ok(summary)
}

/// Walk the candidates of one path combination with event sets of type
/// `S`; `Ok(true)` if the visitor asked to stop.
#[allow(clippy::too_many_arguments)]
fn walk_one<S: Bits, V: Visit>(
    p: &Program,
    chosen: &[&Path],
    filter: Filter,
    named: &[LocId],
    limits: &Limits,
    combo: usize,
    summary: &mut Summary,
    sink: &mut Option<(&Columns, &mut Outcomes)>,
    visit: &mut V,
) -> Result<bool, Stopped> {
    {
        {
            let g = Graph::<S>::new(p, chosen);
            let mut walk = Walk {
                g: &g,
                st: Static::new(&g),
                filter,
                named,
                limits,
                combo,
                summary,
                sink: sink.as_mut().map(|(c, o)| (*c, &mut **o)),
                rf: vec![None; g.len()],
                time: Rel::empty(g.len()),
                stop: None,
                done: false,
            };
            walk.reads(0, visit);
            if let Some(s) = walk.stop {
                return Err(s);
            }
            Ok(walk.done)
        }
    }
}

/// The value write `w` writes under reads-from `rf`, if defined.
pub fn write_value<S: Bits>(g: &Graph<'_, S>, rf: &[Option<usize>], w: usize) -> Option<Value> {
    let t = g.events[w].thread;
    let base = t.map_or(0, |t| g.offset[t]);
    g.value[w]
        .as_ref()?
        .eval(&mut |i| g.read_value(rf, base + i))
}

/// Three-valued evaluation: `None` when a term is not known yet.
pub fn tri(prop: &Prop, term: &dyn Fn(&Term) -> Option<Value>) -> Option<bool> {
    use crate::ir::CmpOp;
    match prop {
        Prop::True => Some(true),
        Prop::False => Some(false),
        Prop::Cmp(a, op, b) => {
            let (a, b) = (term(a)?, term(b)?);
            Some(match op {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
            })
        }
        Prop::Not(q) => tri(q, term).map(|v| !v),
        Prop::And(x, y) => match (tri(x, term), tri(y, term)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        Prop::Or(x, y) => match (tri(x, term), tri(y, term)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
    }
}

/// What one coherence order of one location gives.
struct LocChoice<S: Bits> {
    /// The orientations of the location's morally strong write pairs.
    orient: Rel<S>,
    /// The write the outcome needs last (named locations).
    last: Option<usize>,
    /// Why it fails, if it does.
    violation: Option<Violation>,
    /// The values the location may end with (coherence-maximal writes).
    finals: Vec<Value>,
}

/// The walk over one skeleton's candidates.
struct Walk<'w, 'g, 'p, S: Bits> {
    g: &'g Graph<'p, S>,
    st: Static<S>,
    filter: Filter<'w>,
    named: &'w [LocId],
    limits: &'w Limits,
    combo: usize,
    summary: &'w mut Summary,
    sink: Option<(&'w Columns, &'w mut Outcomes)>,
    rf: Vec<Option<usize>>,
    /// ISA reading: the order in time of the current barrier choice's phases.
    time: Rel<S>,
    stop: Option<Stopped>,
    done: bool,
}

impl<S: Bits> Walk<'_, '_, '_, S> {
    fn halted(&self) -> bool {
        self.stop.is_some() || self.done
    }

    /// The value of a term under the current reads-from and final writes.
    fn term(&self, finals: &[(LocId, usize)], t: &Term) -> Option<Value> {
        match *t {
            Term::Const(v) => Some(v),
            Term::Reg { thread, reg } => {
                let e = self.g.final_regs.get(thread)?.get(reg)?;
                self.g.eval(&self.rf, thread, e)
            }
            Term::Loc(l) => {
                let &(_, w) = finals.iter().find(|(fl, _)| *fl == l)?;
                write_value(self.g, &self.rf, w)
            }
        }
    }

    /// Whether the branch outcomes the paths assumed may still hold.
    fn constraints_possible(&self) -> bool {
        self.g.constraints.iter().all(|(t, c)| {
            match (
                self.g.eval(&self.rf, *t, &c.a),
                self.g.eval(&self.rf, *t, &c.b),
            ) {
                (Some(a), Some(b)) => c.cmp.holds(a, b) == c.holds,
                _ => true,
            }
        })
    }

    fn outcome_possible(&self, finals: &[(LocId, usize)]) -> bool {
        match self.filter {
            Filter::All => true,
            Filter::Outcome(p) => tri(p, &|t| self.term(finals, t)) != Some(false),
        }
    }

    fn empty(&self) -> Rel<S> {
        Rel::empty(self.g.len())
    }

    // Step 1: reads-from, read by read. A choice that already breaks an
    // axiom whatever the rest is (every relation only grows with more
    // reads-from, barrier, Fence-SC and coherence edges) is reported once, as
    // a prefix, and not extended.
    fn reads<V: Visit>(&mut self, k: usize, visit: &mut V) {
        // Each node checks every axiom on the prefix (`prefix_violation`), so
        // a look at the clock per node costs nothing beside it; nodes can be
        // millions before a candidate is complete.
        if self.limits.deadline.is_some_and(|d| Instant::now() > d) {
            self.stop = Some(Stopped::Timeout);
            return;
        }
        let g = self.g;
        let Some(&r) = g.reads.get(k) else {
            return self.barriers(visit);
        };
        let loc = g.events[r].loc;
        for w in members(g.writes_of[loc]) {
            if g.rmw.has(r, w) {
                continue;
            }
            self.rf[r] = Some(w);
            if self.constraints_possible() && self.outcome_possible(&[]) {
                let last = k + 1 == g.reads.len();
                match (!last).then(|| self.prefix_violation()).flatten() {
                    Some(v) => {
                        let wit = Witness {
                            rf: self.rf.clone(),
                            bar: self.empty(),
                            time: self.empty(),
                            sc: self.empty(),
                            orient: self.empty(),
                        };
                        self.emit(&wit, true, None, &[], Verdict::Rejected(vec![v]), visit);
                    }
                    None => self.reads(k + 1, visit),
                }
            }
            self.rf[r] = None;
            if self.halted() {
                return;
            }
        }
    }

    /// A violation every completion of the current partial reads-from has.
    fn prefix_violation(&self) -> Option<Violation> {
        let wit = Witness {
            rf: self.rf.clone(),
            bar: self.empty(),
            time: self.empty(),
            sc: self.empty(),
            orient: self.empty(),
        };
        let rels = Relations::new(self.g, &self.st, &wit);
        rels.independent_violation(false)
            .or_else(|| (0..self.g.writes_of.len()).find_map(|l| rels.location_violation(l, None)))
            .or_else(|| rels.base_causality_violation())
    }

    // Step 2: barrier instances.
    fn barriers<V: Visit>(&mut self, visit: &mut V) {
        let choices: Option<Vec<(Rel<S>, Rel<S>)>> = match self.limits.barriers {
            crate::model::barrier::Reading::Dat3m => {
                match barrier_choices(self.g, &self.rf, self.limits) {
                    Ok(c) => c.map(|v| v.into_iter().map(|r| (r, self.empty())).collect()),
                    Err(stop) => {
                        self.stop = Some(stop);
                        return;
                    }
                }
            }
            crate::model::barrier::Reading::Isa => {
                let deadline = self.limits.deadline;
                let mut late = false;
                let c = crate::ax::barriers::isa_choices(self.g, &self.rf, &mut || {
                    late |= deadline.is_some_and(|d| Instant::now() >= d);
                    late
                });
                if late {
                    self.stop = Some(Stopped::Timeout);
                    return;
                }
                c.map(|v| v.into_iter().map(|c| (c.sync, c.time)).collect())
            }
        };
        match choices {
            None => {
                let w = Witness {
                    rf: self.rf.clone(),
                    bar: self.empty(),
                    time: self.empty(),
                    sc: self.empty(),
                    orient: self.empty(),
                };
                let v = Violation {
                    axiom: Axiom::Deadlock,
                    edges: Vec::new(),
                    final_loc: None,
                };
                self.emit(&w, false, None, &[], Verdict::Rejected(vec![v]), visit);
            }
            Some(choices) => {
                for (bar, time) in choices {
                    self.time = time;
                    let sc = self.empty();
                    self.fence_sc(0, &bar, sc, visit);
                    if self.halted() {
                        return;
                    }
                }
            }
        }
    }

    // Step 3: Fence-SC orders.
    fn fence_sc<V: Visit>(&mut self, i: usize, bar: &Rel<S>, sc: Rel<S>, visit: &mut V) {
        let Some(&(a, b)) = self.st.sc_pairs.get(i) else {
            let w = Witness {
                rf: self.rf.clone(),
                bar: bar.clone(),
                time: self.time.clone(),
                sc,
                orient: self.empty(),
            };
            return self.judge(w, visit);
        };
        for (x, y) in [(a, b), (b, a)] {
            let mut s = sc.clone();
            s.add_closed(x, y);
            if s.closed_is_acyclic() {
                self.fence_sc(i + 1, bar, s, visit);
            }
            if self.halted() {
                return;
            }
        }
    }

    // Step 4: coherence, location by location (given reads-from, barriers and
    // Fence-SC, each location's checks depend on its own coherence only).
    fn judge<V: Visit>(&mut self, mut w: Witness<S>, visit: &mut V) {
        let g = self.g;
        let mut rels = Relations::new(g, &self.st, &w);
        if let Some(v) = rels.independent_violation(true) {
            return self.emit(
                &w,
                false,
                Some(&rels),
                &[],
                Verdict::Rejected(vec![v]),
                visit,
            );
        }
        let mut per_loc: Vec<Vec<LocChoice<S>>> = Vec::new();
        for l in 0..g.writes_of.len() {
            let choices = match self.location_choices(&mut rels, l) {
                Ok(c) => c,
                Err(stop) => {
                    self.stop = Some(stop);
                    return;
                }
            };
            if !choices.iter().any(|c| c.violation.is_none()) {
                let vs = distinct(choices.into_iter().filter_map(|c| c.violation));
                rels.set_orient(&self.empty());
                return self.emit(&w, false, Some(&rels), &[], Verdict::Rejected(vs), visit);
            }
            per_loc.push(choices);
        }
        if let Some(v) = rels.base_causality_violation() {
            return self.emit(
                &w,
                false,
                Some(&rels),
                &[],
                Verdict::Rejected(vec![v]),
                visit,
            );
        }
        // The final states (every mode), and the first combination of final
        // writes that gives the outcome (outcome mode).
        if let Some((cols, out)) = self.sink.as_mut() {
            let mut base = vec![0; cols.len()];
            for (t, regs) in g.final_regs.iter().enumerate() {
                for (reg, e) in regs.iter().enumerate() {
                    if let Some(col) = cols.reg(t, reg) {
                        base[col] = g.eval(&w.rf, t, e).expect("values are defined");
                    }
                }
            }
            let mut states = vec![base];
            for (l, choices) in per_loc.iter().enumerate() {
                let Some(col) = cols.loc(l) else { continue };
                let mut vals: Vec<Value> = choices
                    .iter()
                    .filter(|c| c.violation.is_none())
                    .flat_map(|c| c.finals.iter().copied())
                    .collect();
                vals.sort_unstable();
                vals.dedup();
                states = states
                    .into_iter()
                    .flat_map(|s| {
                        vals.iter().map(move |&v| {
                            let mut s = s.clone();
                            s[col] = v;
                            s
                        })
                    })
                    .collect();
            }
            out.extend(states);
        }
        let pick = match self.filter {
            Filter::All => Some(
                per_loc
                    .iter()
                    .map(|cs| cs.iter().position(|c| c.violation.is_none()).unwrap())
                    .collect::<Vec<_>>(),
            ),
            Filter::Outcome(_) => self.outcome_pick(&per_loc),
        };
        match pick {
            Some(pick) => {
                let mut orient = self.empty();
                let mut finals = Vec::new();
                for (l, (cs, &k)) in per_loc.iter().zip(&pick).enumerate() {
                    orient.union_with(&cs[k].orient);
                    if let Some(f) = cs[k].last {
                        finals.push((l, f));
                    }
                }
                rels.set_orient(&orient);
                w.orient = orient;
                let rels = Relations::new(g, &self.st, &w);
                self.emit(&w, false, Some(&rels), &finals, Verdict::Consistent, visit);
            }
            None => {
                // Each location has a coherence order, but none that gives
                // the outcome's final values together.
                let vs = distinct(
                    self.named
                        .iter()
                        .flat_map(|&l| per_loc[l].iter().filter_map(|c| c.violation.clone())),
                );
                let verdict = if vs.is_empty() {
                    // The values exist only in combinations the proposition rejects.
                    return;
                } else {
                    Verdict::Rejected(vs)
                };
                rels.set_orient(&self.empty());
                self.emit(&w, false, Some(&rels), &[], verdict, visit);
            }
        }
    }

    /// Every coherence order of location `l` (an orientation of its morally
    /// strong write pairs), with the write the outcome needs last for a
    /// named location, judged by the location's checks.
    ///
    /// One choice per orientation of the location's pairs of writes: 2^pairs
    /// of them, so the deadline is looked at while they are made, and a
    /// location with 64 pairs or more (2^64 orientations) is more than any
    /// candidate limit.
    fn location_choices(
        &self,
        rels: &mut Relations<'_, '_, S>,
        l: LocId,
    ) -> Result<Vec<LocChoice<S>>, Stopped> {
        let g = self.g;
        let pairs: Vec<(usize, usize)> = self
            .st
            .write_pairs
            .iter()
            .copied()
            .filter(|&(a, _)| g.events[a].loc == l)
            .collect();
        let here = g.writes_of[l];
        let named = self.named.contains(&l);
        let mut out = Vec::new();
        if pairs.len() >= 64 {
            return Err(Stopped::TooManyCandidates(self.limits.max_candidates));
        }
        for bits in 0u64..(1u64 << pairs.len()) {
            if bits % 64 == 63 && self.limits.deadline.is_some_and(|d| Instant::now() > d) {
                return Err(Stopped::Timeout);
            }
            let mut orient = Rel::empty(g.len());
            for (i, &(a, b)) in pairs.iter().enumerate() {
                if bits & (1 << i) == 0 {
                    orient.add(a, b);
                } else {
                    orient.add(b, a);
                }
            }
            let mut co0 = orient.clone();
            for i in members(here & g.inits) {
                for x in members(here & !S::bit(i)) {
                    co0.add(i, x);
                }
            }
            co0.close();
            if !co0.closed_is_acyclic() {
                continue;
            }
            rels.set_orient(&orient);
            let maximal = |co: &Rel<S>| -> Vec<usize> {
                members(here).filter(|&x| !co.row(x).meets(here)).collect()
            };
            let finals_of = |rels: &Relations<'_, '_, S>| -> Vec<Value> {
                let mut v: Vec<Value> = maximal(&rels.co)
                    .into_iter()
                    .filter_map(|x| write_value(g, &self.rf, x))
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            if named {
                for f in maximal(&co0) {
                    if !self.outcome_possible(&[(l, f)]) {
                        continue;
                    }
                    out.push(LocChoice {
                        orient: orient.clone(),
                        last: Some(f),
                        violation: rels.location_violation(l, Some(f)),
                        finals: finals_of(rels),
                    });
                }
            } else {
                out.push(LocChoice {
                    orient: orient.clone(),
                    last: None,
                    violation: rels.location_violation(l, None),
                    finals: finals_of(rels),
                });
            }
        }
        Ok(out)
    }

    /// For each location, a passing choice, such that the named locations'
    /// final writes give the outcome; `None` if there is none.
    fn outcome_pick(&self, per_loc: &[Vec<LocChoice<S>>]) -> Option<Vec<usize>> {
        let ok: Vec<Vec<usize>> = per_loc
            .iter()
            .map(|cs| {
                (0..cs.len())
                    .filter(|&k| cs[k].violation.is_none())
                    .collect()
            })
            .collect();
        let mut pick = vec![0usize; per_loc.len()];
        loop {
            let finals: Vec<(LocId, usize)> = per_loc
                .iter()
                .zip(&pick)
                .zip(&ok)
                .enumerate()
                .filter_map(|(l, ((cs, &k), okl))| cs[okl[k]].last.map(|f| (l, f)))
                .collect();
            if self.outcome_possible(&finals) {
                return Some(pick.iter().zip(&ok).map(|(&k, okl)| okl[k]).collect());
            }
            // Only named locations vary; the others keep their first choice.
            let mut k = 0;
            loop {
                if k == pick.len() {
                    return None;
                }
                if self.named.contains(&k) {
                    pick[k] += 1;
                    if pick[k] < ok[k].len() {
                        break;
                    }
                    pick[k] = 0;
                }
                k += 1;
            }
        }
    }

    fn emit<V: Visit>(
        &mut self,
        w: &Witness<S>,
        prefix: bool,
        rels: Option<&Relations<'_, '_, S>>,
        finals: &[(LocId, usize)],
        verdict: Verdict,
        visit: &mut V,
    ) {
        self.summary.candidates += 1;
        if self.summary.candidates > self.limits.max_candidates {
            self.stop = Some(Stopped::TooManyCandidates(self.limits.max_candidates));
            return;
        }
        if self.summary.candidates % 64 == 0
            && self.limits.deadline.is_some_and(|d| Instant::now() > d)
        {
            self.stop = Some(Stopped::Timeout);
            return;
        }
        let c = Candidate {
            graph: self.g,
            combo: self.combo,
            witness: w,
            prefix,
            relations: rels,
            finals,
            verdict,
        };
        if !visit.visit(&c) {
            self.done = true;
        }
    }
}

/// The violations without repeats, in order.
fn distinct(vs: impl Iterator<Item = Violation>) -> Vec<Violation> {
    let mut out: Vec<Violation> = Vec::new();
    for v in vs {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Every way the barrier arrivals of `g` form completed instances, as
/// arrive → wait edges; `None` if some waiting thread is never released.
///
/// Arrivals are grouped by CTA and barrier name; the k-th arrival of each
/// thread belongs to the k-th phase. Without a thread count a phase needs
/// every thread that uses the barrier; with a count n, any n of the arrivals
/// complete it (the others pass without synchronising). Participants that
/// disagree on the count never complete a phase (`docs/oracle.md` choices 4, 7).
/// A barrier whose name is not defined (a thin-air value, which No-Thin-Air
/// rejects anyway) synchronises nothing.
///
/// The subsets of arrivals that complete a phase are enumerated directly
/// (not as a filter over every subset: 2^64 with 64 arrivals), the deadline
/// of `limits` is looked at while they are, and more choices than its
/// candidate limit stop the enumeration.
pub fn barrier_choices<S: Bits>(
    g: &Graph<'_, S>,
    rf: &[Option<usize>],
    limits: &Limits,
) -> Result<Option<Vec<Rel<S>>>, Stopped> {
    let n = g.len();
    type Key = (u32, u32, Vec<Value>);
    /// Per participating thread, its arrivals (indices into `g.barriers`) in order.
    type Arrivals = Vec<(usize, Vec<usize>)>;
    let mut groups: Vec<(Key, Arrivals)> = Vec::new();
    for (bi, b) in g.barriers.iter().enumerate() {
        let t = g.events[b.arrive].thread.unwrap();
        let Some(id) =
            b.id.iter()
                .map(|e| g.eval(rf, t, e))
                .collect::<Option<Vec<Value>>>()
        else {
            return Ok(Some(vec![Rel::empty(n)]));
        };
        let (gpu, cta) = g.cta(b.arrive);
        let key = (gpu, cta, id);
        let gi = match groups.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                groups.push((key, Vec::new()));
                groups.len() - 1
            }
        };
        match groups[gi].1.iter_mut().find(|(u, _)| *u == t) {
            Some((_, list)) => list.push(bi),
            None => groups[gi].1.push((t, vec![bi])),
        }
    }
    let mut choices = vec![Rel::empty(n)];
    for (_, threads) in &groups {
        let phases = threads.iter().map(|(_, l)| l.len()).max().unwrap_or(0);
        for k in 0..phases {
            let part: Vec<usize> = threads
                .iter()
                .filter_map(|(_, l)| l.get(k).copied())
                .collect();
            let waits = part.iter().any(|&b| g.barriers[b].wait.is_some());
            let counts: Vec<Option<Value>> = part
                .iter()
                .map(|&b| {
                    let t = g.events[g.barriers[b].arrive].thread.unwrap();
                    g.barriers[b]
                        .count
                        .as_ref()
                        .map(|c| g.eval(rf, t, c).unwrap_or(-1))
                })
                .collect();
            let agree = counts.iter().all(|c| *c == counts[0]);
            let needed = match counts[0] {
                None => threads.len(),
                Some(c) => usize::try_from(c).unwrap_or(usize::MAX),
            };
            if !agree || part.len() < needed {
                if waits {
                    return Ok(None);
                }
                continue;
            }
            let mut next = Vec::new();
            // Every subset of `needed` arrivals, in lexicographic order of indices.
            let m = part.len();
            let mut pick: Vec<usize> = (0..needed).collect();
            'subsets: loop {
                if next.len() as u64 > limits.max_candidates {
                    return Err(Stopped::TooManyCandidates(limits.max_candidates));
                }
                if next.len() % 64 == 63 && limits.deadline.is_some_and(|d| Instant::now() > d) {
                    return Err(Stopped::Timeout);
                }
                let mut edges = Rel::empty(n);
                for &i in &pick {
                    let bi = part[i];
                    for (j, &bj) in part.iter().enumerate() {
                        if let (true, Some(wt)) = (i != j, g.barriers[bj].wait) {
                            edges.add(g.barriers[bi].arrive, wt);
                        }
                    }
                }
                for c in &choices {
                    let mut x = c.clone();
                    x.union_with(&edges);
                    next.push(x);
                }
                // The next subset: raise the last index that can go up.
                let mut i = needed;
                loop {
                    if i == 0 {
                        break 'subsets;
                    }
                    i -= 1;
                    if pick[i] != i + m - needed {
                        break;
                    }
                }
                pick[i] += 1;
                for j in i + 1..needed {
                    pick[j] = pick[j - 1] + 1;
                }
            }
            choices = next;
        }
    }
    Ok(Some(choices))
}
