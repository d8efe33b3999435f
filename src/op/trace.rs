//! Runs of the machine as teaching material: a shortest run that ends in a
//! given outcome, or the replay of a list of choices, with every step told
//! in GPU terms (versions at the L2 coherence point, what each thread's path
//! is guaranteed to show, registers).
//!
//! A run is plain data: the index of the successor taken at each state. So
//! `--follow 0,2,1` replays a run exactly (as rmem's `via`).

use fxhash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;

use crate::ir::{Instr, Prop, Term};
use crate::limits::{Budget, Exceeded, Limits, Poll};
use crate::model::hang::{Hang, Waits};
use crate::outcome::State as Outcome;
use crate::rel::{Bits, members};

use super::layout::SlotKind;
use super::state::{Stage, State};
use super::{Machine, Step, StepKind};

/// One step of a run, described.
#[derive(Clone, Debug, Serialize)]
pub struct TraceStep {
    /// 1-based step number.
    pub index: usize,
    /// Which successor was taken (for `--follow`).
    pub choice: usize,
    /// The thread (`P0`).
    pub thread: String,
    /// The instruction, as written.
    pub instruction: String,
    /// `retire`, `bind`, `arrive`, `pass` or `cut`; `repeat` for a step of
    /// the iteration a hang repeats forever; `elect` for a stepping
    /// session's choice of `elect.sync` leader (`step::Session`).
    pub kind: &'static str,
    /// What happened, in one line.
    pub action: String,
    /// What changed: memory, reads, views, registers.
    pub effects: Vec<String>,
}

/// A described run.
#[derive(Clone, Debug, Serialize)]
pub struct Trace {
    /// The steps.
    pub steps: Vec<TraceStep>,
    /// The choice at each step (what `--follow` takes).
    pub choices: Vec<usize>,
    /// The final states the run ends in (several when a location has several
    /// coherence-maximal versions), or `None` if it does not end in a final
    /// state. Formatting them is the reports' job.
    pub final_states: Option<Vec<Outcome>>,
}

/// A run into a hang: the run to a stuck configuration (the stem) and what
/// repeats forever from there (the cycle: each spinning thread's
/// iteration; nothing for a deadlock).
#[derive(Clone, Debug, Serialize)]
pub struct Lasso {
    /// The choices of the stem (what `--follow` takes).
    pub choices: Vec<usize>,
    /// The stuck configuration it ends in.
    pub hang: Hang,
    /// The iteration each spinning thread repeats, step by step.
    pub cycle: Vec<TraceStep>,
}

/// Why a run could not be found or replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceError {
    /// No run of the machine ends in the requested outcome.
    Unreachable,
    /// No run of the machine hangs; `bound_hit`: but a loop reached the
    /// loop bound, so longer executions were not looked at.
    NoHang {
        /// Some settled state had a thread cut at the loop bound.
        bound_hit: bool,
    },
    /// The search for a run was stopped by a limit (states, time, memory).
    Incomplete(crate::limits::Exceeded),
    /// A `--follow` choice does not exist at its step.
    BadChoice {
        /// 1-based step.
        step: usize,
        /// The choice given.
        choice: usize,
        /// How many successors there were.
        available: usize,
    },
}

/// The breadth-first searches' memory: for each state found (by
/// fingerprint), the state it was first reached from and the choice taken
/// there, so that a shortest run to any found state can be read back.
pub(crate) struct Parents {
    root: u64,
    parent: FxHashMap<u64, (u64, usize)>,
}

impl Parents {
    /// A search that starts at `root`.
    pub(crate) fn new<S: Bits>(root: &State<S>) -> Parents {
        let root = root.fingerprint();
        let mut parent = FxHashMap::default();
        parent.insert(root, (root, usize::MAX));
        Parents { root, parent }
    }

    /// Record that `child`, successor number `choice` of the state with
    /// fingerprint `from`, was reached; `false` if it had been reached before
    /// (breadth-first, so by a run no longer than this one).
    pub(crate) fn discover<S: Bits>(&mut self, from: u64, choice: usize, child: &State<S>) -> bool {
        match self.parent.entry(child.fingerprint()) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((from, choice));
                true
            }
            std::collections::hash_map::Entry::Occupied(_) => false,
        }
    }

    /// How many states have been found.
    pub(crate) fn len(&self) -> usize {
        self.parent.len()
    }

    /// The choices of the recorded run from the root to the state with
    /// fingerprint `fp` (which must have been found).
    pub(crate) fn choices_to(&self, mut fp: u64) -> Vec<usize> {
        let mut choices = Vec::new();
        while fp != self.root {
            let (p, c) = self.parent[&fp];
            choices.push(c);
            fp = p;
        }
        choices.reverse();
        choices
    }
}

impl<S: Bits> Machine<'_, S> {
    /// A shortest run (fewest steps) that ends in a final state where `want` holds.
    pub fn shortest_run(&self, want: &Prop, max_states: u64) -> Result<Vec<usize>, TraceError> {
        let init = self.initial();
        let mut parents = Parents::new(&init);
        let mut queue = VecDeque::from([init]);
        while let Some(st) = queue.pop_front() {
            let fp = st.fingerprint();
            if self.is_final(&st) {
                if !self.is_cut(&st)
                    && self
                        .outcomes(&st)
                        .iter()
                        .any(|s| want.eval(&|t: &Term| self.columns.term(s, t)))
                {
                    return Ok(parents.choices_to(fp));
                }
                continue;
            }
            for (i, (_, s)) in self.successors(&st).into_iter().enumerate() {
                if parents.discover(fp, i, &s) {
                    queue.push_back(*s);
                }
            }
            if parents.len() as u64 > max_states {
                return Err(TraceError::Incomplete(Exceeded::States(max_states)));
            }
        }
        Err(TraceError::Unreachable)
    }

    /// A shortest run into the least hang (the one `ptxmc run` reports), as a
    /// lasso: breadth-first over the whole state space (up to `max_states`).
    pub fn shortest_hang(&self, max_states: u64) -> Result<Lasso, TraceError> {
        self.shortest_hang_within(&Budget::new(Limits {
            max_states: Some(max_states),
            ..Limits::default()
        }))
    }

    /// [`Machine::shortest_hang`] within `budget`: its state limit counts the
    /// states found; time and memory are watched inside every step too
    /// ([`Machine::within`]).
    pub fn shortest_hang_within(&self, budget: &Budget) -> Result<Lasso, TraceError> {
        let r = self.within(budget, || self.shortest_hang_search(budget));
        if self.interrupted() {
            // A step was cut short: whatever the search concluded is partial.
            if let Some(e) = budget.exceeded() {
                return Err(TraceError::Incomplete(e));
            }
        }
        r
    }

    fn shortest_hang_search(&self, budget: &Budget) -> Result<Lasso, TraceError> {
        let init = self.initial();
        let mut parents = Parents::new(&init);
        let mut queue = VecDeque::from([init]);
        let mut best: Option<(Hang, u64, State<S>)> = None;
        let mut bound_hit = false;
        let mut poll = Poll::new(budget);
        while let Some(st) = queue.pop_front() {
            if let Some(e) = poll.step() {
                return Err(TraceError::Incomplete(e));
            }
            let fp = st.fingerprint();
            bound_hit |= st.threads.iter().any(|t| t.cut);
            if self.is_final(&st) {
                continue;
            }
            match self.quiescence(&st) {
                super::hang::Quiescence::Running => {}
                super::hang::Quiescence::Cut => bound_hit = true,
                super::hang::Quiescence::Hang(h) => {
                    // Breadth-first: the first state with a given hang is a nearest one.
                    if best.as_ref().is_none_or(|(b, _, _)| h < *b) {
                        best = Some((h, fp, st.clone()));
                    }
                }
            }
            for (i, (_, s)) in self.successors(&st).into_iter().enumerate() {
                if parents.discover(fp, i, &s) {
                    queue.push_back(*s);
                }
            }
            if let Some(e) = budget.states_exceeded(parents.len() as u64) {
                return Err(TraceError::Incomplete(e));
            }
        }
        let Some((hang, fp, st)) = best else {
            return Err(TraceError::NoHang { bound_hit });
        };
        let cycle = self.cycle(&st, &hang);
        Ok(Lasso {
            choices: parents.choices_to(fp),
            hang,
            cycle,
        })
    }

    /// The iterations the spinning threads of `hang` repeat from `st`, step by step.
    fn cycle(&self, st: &State<S>, hang: &Hang) -> Vec<TraceStep> {
        let mut out = Vec::new();
        for s in &hang.stuck {
            let Waits::Spin { head, back, reads } = &s.on else {
                continue;
            };
            let t = s.thread;
            let th = &self.program.threads[t];
            let mut regs: Vec<crate::ir::Value> = st.threads[t].regs.to_vec();
            let mut next_read = reads.iter();
            let mut pc = *head;
            loop {
                let instr = &th.code[pc];
                let mut effects = Vec::new();
                let mut goto = pc + 1;
                let action = match instr {
                    Instr::Load { dst, .. }
                    | Instr::Rmw { dst: Some(dst), .. }
                    | Instr::MbarWait { dst: Some(dst), .. } => {
                        let &(_, loc, value) = next_read.next().expect("one value per read");
                        // Under morally strong fairness a load may return an
                        // older version: newer ones it need never see.
                        let latest = self.latest_version(st, loc, value);
                        let older = latest.is_none().then(|| {
                            let vs = st.versions & self.layout.loc_slots[loc];
                            members(vs).find(|&v| st.value[v] == value)
                        });
                        let v = latest.or(older.flatten()).map_or(
                            format!("{}={value}", self.program.locations[loc].name),
                            |v| self.version_text(st, v),
                        );
                        let shown = match instr {
                            Instr::MbarWait { phase, .. } => {
                                let (test, arg) = crate::ir::mbar::Test::of(phase);
                                let arg = crate::ir::eval::operand(&regs, &arg);
                                crate::ir::mbar::done(test, value, arg) as crate::ir::Value
                            }
                            _ => value,
                        };
                        regs[*dst] = shown;
                        effects.push(format!(
                            "registers of {}: {}={shown}",
                            th.name, th.regs[*dst].name
                        ));
                        if matches!(instr, Instr::Rmw { .. }) {
                            format!(
                                "reads {v}, the latest version: the compare fails, and the write puts back what it read"
                            )
                        } else if older.is_some() {
                            format!(
                                "reads {v}, an older version: no newer one is morally strong with the load or in its causal past, so it need never see them"
                            )
                        } else {
                            format!("reads {v}, the latest version")
                        }
                    }
                    Instr::MbarWait { dst: None, .. } => {
                        next_read.next();
                        "reads the latest state of the barrier: the phase has completed".into()
                    }
                    Instr::Mov { .. } | Instr::Arith { .. } => {
                        let (dst, v) = instr
                            .local_effect::<crate::ir::Value>(&regs)
                            .expect("a register instruction");
                        regs[dst] = v;
                        effects.push(format!(
                            "registers of {}: {}={v}",
                            th.name, th.regs[dst].name
                        ));
                        "retires (registers only)".into()
                    }
                    Instr::Branch { cond, target } => {
                        let taken = cond.as_ref().is_none_or(|(c, a, b)| {
                            c.holds(
                                crate::ir::eval::operand(&regs, a),
                                crate::ir::eval::operand(&regs, b),
                            )
                        });
                        if taken {
                            goto = *target;
                        }
                        match (taken, pc == *back) {
                            (true, true) => "goes back to the head of the loop".into(),
                            (true, false) => "taken (still inside the loop)".into(),
                            (false, _) => "not taken".into(),
                        }
                    }
                    i if crate::model::loops::is_fence(i) => {
                        "retires (a fence: it writes nothing, it only orders)".into()
                    }
                    _ => unreachable!(
                        "spin loop bodies hold reads, fences, register moves and branches"
                    ),
                };
                out.push(TraceStep {
                    index: out.len() + 1,
                    choice: 0,
                    thread: th.name.clone(),
                    instruction: self.instr_text(t, pc),
                    kind: "repeat",
                    action,
                    effects,
                });
                if pc == *back {
                    break;
                }
                pc = goto;
            }
        }
        out
    }

    /// A coherence-maximal version of `loc` holding `value`.
    fn latest_version(&self, st: &State<S>, loc: usize, value: crate::ir::Value) -> Option<usize> {
        let vs = st.versions & self.layout.loc_slots[loc];
        members(vs).find(|&v| !st.co[v].meets(vs) && st.value[v] == value)
    }

    /// Replay `choices` from the initial state and describe every step.
    pub fn replay(&self, choices: &[usize]) -> Result<Trace, TraceError> {
        let mut st = self.initial();
        let mut steps = Vec::new();
        for (i, &c) in choices.iter().enumerate() {
            let mut succ = self.successors(&st);
            if c >= succ.len() {
                return Err(TraceError::BadChoice {
                    step: i + 1,
                    choice: c,
                    available: succ.len(),
                });
            }
            let (step, next) = succ.swap_remove(c);
            steps.push(self.describe(i + 1, c, &st, &step, &next));
            st = *next;
        }
        let final_states = (self.is_final(&st) && !self.is_cut(&st)).then(|| self.outcomes(&st));
        Ok(Trace {
            steps,
            choices: choices.to_vec(),
            final_states,
        })
    }

    /// The instruction of a slot, as text, with its thread.
    pub fn slot_text(&self, s: usize) -> String {
        let si = &self.layout.slots[s];
        match si.thread {
            None => format!("{}=initial", self.program.locations[si.loc].name),
            Some(t) => format!(
                "{} `{}`",
                self.program.threads[t].name,
                self.instr_text(t, si.pc)
            ),
        }
    }

    /// A version as `x=1 (P0 `st.weak x, 1`)`.
    pub fn version_text(&self, st: &State<S>, v: usize) -> String {
        let si = &self.layout.slots[v];
        let loc = &self.program.locations[si.loc].name;
        let value = self.value_text(si.loc, st.value[v]);
        match si.thread {
            None => format!("{loc}={value} (initial)"),
            Some(_) => format!("{loc}={value} ({})", self.slot_text(v)),
        }
    }

    /// The coherence order of a location, as chains: `x: 0 < 1 < 2`.
    pub fn coherence_text(&self, st: &State<S>, loc: usize) -> String {
        let vs = st.versions & self.layout.loc_slots[loc];
        let mut order: Vec<usize> = members(vs).collect();
        order.sort_by_key(|&v| std::cmp::Reverse((st.co[v] & vs).count()));
        let name = &self.program.locations[loc].name;
        let parts: Vec<String> = order
            .iter()
            .map(|&v| {
                let unordered: Vec<String> = members(vs & !st.co[v] & !S::bit(v))
                    .filter(|&w| !st.co[w].has(v))
                    .map(|w| self.value_text(loc, st.value[w]))
                    .collect();
                if unordered.is_empty() {
                    self.value_text(loc, st.value[v])
                } else {
                    format!(
                        "{} (unordered with {})",
                        self.value_text(loc, st.value[v]),
                        unordered.join(", ")
                    )
                }
            })
            .collect();
        format!("{name}: {}", parts.join(" < "))
    }

    /// Step `step` from `prev` to `next`, described: what happened in one
    /// line and what changed (`index` is its 1-based number in the run,
    /// `choice` its successor index).
    pub fn describe(
        &self,
        index: usize,
        choice: usize,
        prev: &State<S>,
        step: &Step,
        next: &State<S>,
    ) -> TraceStep {
        let th = &self.program.threads[step.thread];
        let instruction = self.instr_text(step.thread, step.pc);
        let mut effects = Vec::new();
        let (kind, action) = match &step.kind {
            StepKind::Retire => {
                if let Some(slot) = self.layout.base[step.thread][step.pc] {
                    let si = &self.layout.slots[slot];
                    if si.acquire_read() || si.acquire_fence() {
                        let s = self.layout.slot(
                            step.thread,
                            step.pc,
                            prev.threads[step.thread].execs[step.pc] as usize,
                        );
                        effects.extend(self.acquire_words(prev, step.thread, s.unwrap_or(slot)));
                    }
                }
                ("retire", self.retire_text(step))
            }
            StepKind::Bind {
                slot,
                version,
                forwarded,
            } => {
                for &w in forwarded {
                    effects.push(format!(
                        "{} is issued early (from ahead of its thread's retirement) so it can be read now",
                        self.slot_text(w)
                    ));
                }
                let early = if self.layout.slots[*slot].pc != prev.threads[step.thread].pc {
                    " (bound early: a later write of its thread needs the value)"
                } else {
                    ""
                };
                let newer = next.co[*version]
                    & next.versions
                    & self.layout.loc_slots[self.layout.slots[*slot].loc];
                for w in members(newer) {
                    effects.push(format!(
                        "newer: {}; {}",
                        self.version_text(next, w),
                        self.not_shown(next, step.thread, *slot, w)
                    ));
                }
                (
                    "bind",
                    format!("reads {}{early}", self.version_text(next, *version)),
                )
            }
            StepKind::Arrive => (
                "arrive",
                "arrives at the barrier and waits for the other participants".into(),
            ),
            // `elect.sync`'s and `activemask`'s rendezvous order no memory
            // (`model::barrier::orders_memory`): the lanes only meet.
            StepKind::Pass if self.meets_only(step.thread, step.pc) => (
                "pass",
                "the barrier phase is complete: meets the other lanes; orders no memory, and goes on"
                    .into(),
            ),
            StepKind::Pass => (
                "pass",
                "the barrier phase is complete: takes the other participants' views and goes on"
                    .into(),
            ),
            StepKind::Cut => (
                "cut",
                format!(
                    "would loop more than {} times: this run stops here",
                    self.bound
                ),
            ),
        };
        // New versions and coherence.
        for v in members(next.versions & !prev.versions) {
            effects.push(format!(
                "new version in memory: {}",
                self.version_text(next, v)
            ));
        }
        let mut locs_changed = Vec::new();
        for v in members(next.versions) {
            if next.co[v] != prev.co.get(v).copied().unwrap_or(S::EMPTY) || !prev.versions.has(v) {
                let l = self.layout.slots[v].loc;
                if !locs_changed.contains(&l) {
                    locs_changed.push(l);
                }
            }
        }
        for l in locs_changed {
            if (next.versions & self.layout.loc_slots[l]).count() > 1 {
                effects.push(format!("coherence {}", self.coherence_text(next, l)));
            }
        }
        // What the thread's view gained.
        let t = step.thread;
        let (a, b) = (&prev.threads[t].view, &next.threads[t].view);
        let own = self.layout.thread_slots[t];
        let seen_raw: S = (b.raw & !a.raw & !own) & self.layout.writes;
        if !seen_raw.is_empty() {
            let list: Vec<String> = members(seen_raw).map(|s| self.slot_text(s)).collect();
            effects.push(format!(
                "{} now has in its causal past: {}",
                th.name,
                list.join(", ")
            ));
        }
        let pushed = b.gen_ & !a.gen_ & !self.layout.proxy_slots[0] & self.layout.writes;
        for s in members(pushed) {
            effects.push(format!(
                "{} has reached L2 (its proxy path was flushed)",
                self.slot_text(s)
            ));
        }
        for s in members(b.anyva & !a.anyva & self.layout.writes) {
            effects.push(format!(
                "{} is now visible through every alias of its location",
                self.slot_text(s)
            ));
        }
        for (pair, &(c, q)) in self.layout.line_pairs.iter().enumerate() {
            let (gpu, cta) = self.layout.ctas[c];
            let new = (b.line(Some(pair), Stage::Gen) & !a.line(Some(pair), Stage::Gen))
                & self.layout.writes;
            if !new.is_empty() {
                let list: Vec<String> = members(new).map(|s| self.slot_text(s)).collect();
                effects.push(format!(
                    "the {q} cache of CTA {cta} (GPU {gpu}) is invalidated: it can no longer show anything older than {}",
                    list.join(", ")
                ));
            }
        }
        // Registers.
        let regs: Vec<String> = prev.threads[t]
            .regs
            .iter()
            .zip(&next.threads[t].regs)
            .enumerate()
            .filter(|(_, (x, y))| x != y)
            .map(|(r, (_, y))| format!("{}={y}", th.regs[r].name))
            .collect();
        if !regs.is_empty() {
            effects.push(format!("registers of {}: {}", th.name, regs.join(", ")));
        }
        TraceStep {
            index,
            choice,
            thread: th.name.clone(),
            instruction,
            kind,
            action,
            effects,
        }
    }

    fn retire_text(&self, step: &Step) -> String {
        let th = &self.program.threads[step.thread];
        let Some(slot) = self.layout.base[step.thread][step.pc] else {
            return "retires (registers only)".into();
        };
        let si = &self.layout.slots[slot];
        match si.kind {
            SlotKind::Store if si.release_write() => {
                "retires as a release: the store is performed, and the thread's view is published for acquirers".into()
            }
            SlotKind::Store => "retires: the store is performed (its value is a version at the L2 coherence point)".into(),
            SlotKind::Load if si.acquire_read() => {
                "retires as an acquire: takes the views published by the releases it synchronises with".into()
            }
            SlotKind::Load => "retires: the value read is checked against what this thread's cache line must show".into(),
            SlotKind::Rmw => "retires: its read and write are one atomic step".into(),
            SlotKind::Fence(f) => format!(
                "retires: fence.{} at .{} scope{}",
                f.as_str(),
                si.scope.map_or("-", |s| s.as_str()),
                if f == crate::ir::FenceSem::Sc { " (joins the order of fence.sc; takes earlier ones' views)" } else { "" }
            ),
            SlotKind::ProxyFence(k) => format!(
                "retires: fence.proxy.{} flushes and invalidates CTA {}'s {} path",
                k.as_str(),
                si.placement.cta,
                k.proxy().map_or("alias".to_string(), |p| p.as_str().to_string())
            ),
            SlotKind::Barrier => "arrives at the barrier without waiting".into(),
            SlotKind::Signal if th.agent.is_some() => {
                "signals its issuer: what it has done so far is published to waiting threads".into()
            }
            SlotKind::Signal => match th.code.get(step.pc) {
                Some(crate::ir::Instr::Signal {
                    kind: crate::ir::SignalKind::GridControl,
                }) => "retires: orders nothing (docs/griddep.md)".into(),
                Some(crate::ir::Instr::Signal {
                    kind: crate::ir::SignalKind::GridEnd,
                }) => "completes: its view is published to the dependent grid's waits".into(),
                Some(crate::ir::Instr::Signal {
                    kind: crate::ir::SignalKind::Undefined(_),
                }) => "is an undefined step: the address its access computed is no element of \
                       its buffer or variable; the thread exits (what follows is not the model's \
                       to say)"
                    .into(),
                _ => "issues the asynchronous operation (or commits a group): its view is published to the agent".into(),
            },
            SlotKind::Await if th.agent.is_some() && step.pc == 0 => {
                "starts: the operation is ordered after everything its issuer did before issuing it".into()
            }
            SlotKind::Await if self.awaits_grid_end(step.thread, step.pc) => {
                "waits until every thread of the primary grid has completed, then takes on their views".into()
            }
            SlotKind::Await => "waits for the asynchronous operations it names, then takes on their views".into(),
            SlotKind::Init => format!("{} retires", th.name),
        }
    }

    /// Whether instruction `pc` of thread `t` is a dependent grid's
    /// `griddepcontrol.wait`: an await of the primary's grid-end signals.
    fn awaits_grid_end(&self, t: usize, pc: usize) -> bool {
        let code = |u: usize| &self.program.threads[u].code;
        matches!(code(t).get(pc), Some(crate::ir::Instr::Await { from }) if from.iter().all(|a| {
            matches!(
                code(a.thread).get(a.pc),
                Some(crate::ir::Instr::Signal {
                    kind: crate::ir::SignalKind::GridEnd
                })
            )
        }))
    }

    /// Whether instruction `pc` of thread `t` is a rendezvous that orders
    /// no memory: `elect.sync`'s wait or `activemask`'s meeting (the PTX ISA
    /// states no memory ordering for either).
    fn meets_only(&self, t: usize, pc: usize) -> bool {
        matches!(
            self.program.threads[t].code.get(pc),
            Some(Instr::Barrier {
                kind: crate::ir::BarrierKind::Elect | crate::ir::BarrierKind::ActiveMask,
                ..
            })
        )
    }

    /// An instruction as the test writes it; an agent's steps as what the
    /// asynchronous operation does.
    pub fn instr_text(&self, t: usize, pc: usize) -> String {
        crate::model::describe::instr_text(self.source, &self.program, t, pc)
    }

    /// A location's value; mbarrier states decoded.
    pub fn value_text(&self, loc: usize, v: crate::ir::Value) -> String {
        crate::model::describe::value_text(&self.program, loc, v)
    }
}
