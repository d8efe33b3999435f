//! Stepping through the machine by hand: one session type that the terminal
//! front end (`ptxmc step`), the playground (`ptxmc serve`) and
//! `ptxmc trace --follow` all use, so none of them re-implements the machine.
//!
//! A [`Session`] stands in one state of the operational machine
//! ([`crate::op`]) and knows how it got there: the list of choices taken
//! (successor indices, exactly what `ptxmc trace --follow` replays) and the
//! states along the way. From there it lists the enabled transitions, takes
//! one, undoes and redoes, restarts, asks the explorer which outcomes are
//! still reachable, and extends the run by a shortest path to a chosen
//! outcome — or says since which step that outcome has been out of reach.
//!
//! A program with `elect.sync` runs under one choice of leader per warp and
//! mask (`ir::elect`): a session over its [`Variants`] first takes one
//! *leader step* per warp and mask with several candidate lanes (its
//! transitions are the candidates), then runs that choice's program. The
//! searches (go to an outcome, a hang, undefined behaviour) try every choice
//! still open, so a run reached only with lane 1 elected shows lane 1 elected.
//!
//! A run is plain data, so a front end may keep only the choices and
//! rebuild the session from them ([`Session::replay`]): the playground's
//! server is stateless that way.
//!
//! By default every transition of every thread is offered
//! ([`Options::every_step`]): a student chooses each interleaving. With it
//! off the machine's reduction R1 applies (a thread whose next instruction
//! retires without a choice goes first and alone), as in `ptxmc trace`; the
//! choice indices of the two modes differ, and the replay command says which
//! one a list belongs to.

pub mod picture;
pub mod race;
pub mod text;

use crate::rel::Bits;
use std::collections::VecDeque;

use crate::explore::{self, ExploreOptions};
use crate::ir::elect::Variants;
use crate::ir::{Prop, Term};
use crate::limits::{Budget, Exceeded, Limits, Poll};
use crate::model::hang::Hang;
use crate::op::hang::Quiescence;
use crate::op::state::State;
use crate::op::trace::{Parents, Trace, TraceError, TraceStep};
use crate::op::{Machine, TooManySlots};
use crate::outcome::{Outcomes, State as Outcome};

/// How a session runs the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// How many times a loop may jump back.
    pub loop_bound: u32,
    /// Offer every thread's transitions at every state (the machine's
    /// partial-order reduction off). Off: `ptxmc trace`'s choices.
    pub every_step: bool,
    /// Limits of each question asked of the explorer (reachable outcomes,
    /// go to outcome).
    pub limits: Limits,
    /// How CTA barriers are read.
    pub barriers: crate::model::barrier::Reading,
    /// Which writes spinning reads must eventually see (hang witnesses).
    pub fairness: crate::model::hang::Fairness,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            loop_bound: 2,
            every_step: true,
            limits: Limits::default(),
            barriers: Default::default(),
            fairness: Default::default(),
        }
    }
}

/// A transition enabled in the current state.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Transition {
    /// Its index: the choice to take it (stable for a given state).
    pub index: usize,
    /// The step, described as a trace describes it (what happened, what changed).
    pub step: TraceStep,
    /// One sentence: thread, instruction and what it does.
    pub sentence: String,
}

/// The outcomes still reachable from a state.
#[derive(Clone, Debug)]
pub struct Reachable {
    /// Final states reachable from here.
    pub outcomes: Outcomes,
    /// Some run from here stops at the loop bound.
    pub bound_hit: bool,
    /// The explorer stopped at a limit: the set may be partial.
    pub incomplete: Option<Exceeded>,
}

/// The answer to "go to outcome".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoTo {
    /// These choices, taken from the current state, end in the outcome
    /// (fewest steps).
    Path(Vec<usize>),
    /// No run from the current state ends in the outcome. `since`: the
    /// 1-based step after which it was out of reach (`None`: the model
    /// forbids it, no run from the initial state reaches it).
    Unreachable {
        /// The step that put the outcome out of reach.
        since: Option<usize>,
    },
    /// A limit stopped the search before it could say.
    Incomplete(Exceeded),
}

/// Why a step could not be taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepError {
    /// There is no transition with this index here.
    NoSuchTransition {
        /// The index asked for.
        choice: usize,
        /// How many there are.
        available: usize,
    },
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepError::NoSuchTransition { available: 0, .. } => {
                write!(f, "no transition is enabled here")
            }
            StepError::NoSuchTransition { choice, available } => write!(
                f,
                "expected a transition between 0 and {}, found {choice}",
                available - 1
            ),
        }
    }
}

/// A stepping session over one program.
pub struct Session<'p, S: Bits = u128> {
    /// The program's choices of `elect.sync` leader, each with its program.
    variants: &'p Variants,
    /// Per variant, the machine the session steps (reduction as
    /// [`Options::every_step`] says).
    machines: Vec<Machine<'p, S>>,
    /// Per variant, the same machine with its reductions on, for questions
    /// to the explorer (the outcomes reachable from a state do not depend on
    /// the reduction).
    explorers: Vec<Machine<'p, S>>,
    /// `states[k]`: the state after `k` steps; `states[0]` is the initial
    /// state (the leader steps leave it as it is).
    states: Vec<State<S>>,
    /// The steps taken, described.
    steps: Vec<TraceStep>,
    /// Undone choices, the next one to redo last.
    redo: Vec<usize>,
    options: Options,
    /// The limit that stopped the last listing of transitions, if one did
    /// ([`Session::transitions_within`]).
    stopped: std::cell::Cell<Option<Exceeded>>,
}

impl<'p> Session<'p> {
    /// A session in the initial state of `v`'s program, at the plain width
    /// (128 event slots; [`Session::build`] for any width).
    pub fn new(v: &'p Variants, options: Options) -> Result<Session<'p>, TooManySlots> {
        Session::build(v, options)
    }
}

impl<'p, S: Bits> Session<'p, S> {
    /// A session in the initial state of `v`'s program with event sets of
    /// type `S`; `Err` if the program has more event slots than `S` holds
    /// (pick `S` with `rel::with_width!(needed)`).
    pub fn build(v: &'p Variants, options: Options) -> Result<Session<'p, S>, TooManySlots> {
        let mut machines = Vec::new();
        let mut explorers = Vec::new();
        for (_, p) in &v.programs {
            let mut machine = Machine::build(p, options.loop_bound, true)?;
            machine.por = !options.every_step;
            machine.barriers = options.barriers.for_program(p);
            machine.fairness = options.fairness;
            let mut explorer = Machine::build(p, options.loop_bound, true)?;
            explorer.barriers = options.barriers.for_program(p);
            explorer.fairness = options.fairness;
            machines.push(machine);
            explorers.push(explorer);
        }
        let init = machines[0].initial();
        Ok(Session {
            variants: v,
            machines,
            explorers,
            states: vec![init],
            steps: Vec::new(),
            redo: Vec::new(),
            options,
            stopped: Default::default(),
        })
    }

    /// How many leader steps a run begins with.
    fn leader_steps(&self) -> usize {
        self.variants.free.len()
    }

    /// The leaders picked in the first `k` steps.
    fn picks_at(&self, k: usize) -> Vec<usize> {
        self.steps[..k.min(self.leader_steps())]
            .iter()
            .map(|s| s.choice)
            .collect()
    }

    /// The variants still open after `k` steps (one once every leader is picked).
    fn open_at(&self, k: usize) -> Vec<usize> {
        let picks = self.picks_at(k);
        self.variants.consistent(&picks).collect()
    }

    /// The variant after `k` steps, once every leader is picked.
    fn chosen_at(&self, k: usize) -> Option<usize> {
        (k >= self.leader_steps()).then(|| self.open_at(k)[0])
    }

    /// The variant the current run follows (the first one while leaders
    /// are still to be picked).
    fn current_variant(&self) -> usize {
        self.chosen_at(self.steps.len()).unwrap_or(0)
    }

    /// Whether the run is still picking leaders.
    pub fn picking_leaders(&self) -> bool {
        self.steps.len() < self.leader_steps()
    }

    /// What choice step `f` of a run picks: `elect` (a leader) or
    /// `activemask` (which lanes execute it together).
    pub fn choice_kind(&self, f: usize) -> &'static str {
        self.variants.kind(f)
    }

    /// The leader choices the run has made, one line each (empty for a
    /// program without a choice of leader).
    pub fn leaders(&self) -> Vec<String> {
        let picks = self.picks_at(self.steps.len());
        picks
            .iter()
            .enumerate()
            .map(|(f, &k)| {
                let (threads, instruction, action) = self.variants.describe(f, k);
                format!("{threads} `{instruction}` {action}")
            })
            .collect()
    }

    /// The leader step `k` of the next free group, described.
    fn leader_step(&self, k: usize) -> TraceStep {
        let f = self.steps.len();
        let (thread, instruction, action) = self.variants.describe(f, k);
        TraceStep {
            index: f + 1,
            choice: k,
            thread,
            instruction,
            kind: self.variants.kind(f),
            action,
            effects: Vec::new(),
        }
    }

    /// The machine (its program, layout and columns).
    pub fn machine(&self) -> &Machine<'p, S> {
        &self.machines[self.current_variant()]
    }

    /// The session's options.
    pub fn options(&self) -> Options {
        self.options
    }

    /// The current state.
    pub fn current(&self) -> &State<S> {
        self.states
            .last()
            .expect("the initial state is always there")
    }

    /// The steps taken so far, described.
    pub fn steps(&self) -> &[TraceStep] {
        &self.steps
    }

    /// The choices taken so far (what `ptxmc trace --follow` replays).
    pub fn history(&self) -> Vec<usize> {
        self.steps.iter().map(|s| s.choice).collect()
    }

    /// Whether every thread has finished (or stopped at the loop bound).
    pub fn is_final(&self) -> bool {
        !self.picking_leaders() && self.machine().is_final(self.current())
    }

    /// Whether the run stopped some thread at the loop bound.
    pub fn is_cut(&self) -> bool {
        !self.picking_leaders() && self.machine().is_cut(self.current())
    }

    /// The final states the current state stands for (`None` unless the
    /// run is over and no thread was cut at the loop bound).
    pub fn final_states(&self) -> Option<Vec<Outcome>> {
        (self.is_final() && !self.is_cut()).then(|| self.machine().outcomes(self.current()))
    }

    /// The transitions enabled in the current state, in the machine's order.
    pub fn transitions(&self) -> Vec<Transition> {
        if self.picking_leaders() {
            return (0..self.variants.options(self.steps.len()))
                .map(|k| {
                    let step = self.leader_step(k);
                    let sentence =
                        format!("{} `{}` {}", step.thread, step.instruction, step.action);
                    Transition {
                        index: k,
                        step,
                        sentence,
                    }
                })
                .collect();
        }
        let st = self.current();
        let n = self.steps.len() + 1;
        let machine = self.machine();
        machine
            .successors(st)
            .into_iter()
            .enumerate()
            .map(|(i, (step, next))| {
                let step = machine.describe(n, i, st, &step, &next);
                let sentence = format!("{} `{}` {}", step.thread, step.instruction, step.action);
                Transition {
                    index: i,
                    step,
                    sentence,
                }
            })
            .collect()
    }

    /// [`Session::transitions`] within the session's time and memory
    /// limits: one state may have tens of thousands of successors (RMWs
    /// reading writes forwarded from other threads' RMWs), so listing them
    /// is watched like a search ([`Machine::within`]). The limit hit, if
    /// the list could not be made; [`Session::stopped`] remembers it.
    pub fn transitions_within(&self) -> Result<Vec<Transition>, Exceeded> {
        let budget = Budget::new(Limits {
            max_states: None,
            ..self.options.limits
        });
        let list = self.machine().within(&budget, || self.transitions());
        let stopped = budget.exceeded().filter(|_| self.machine().interrupted());
        self.stopped.set(stopped);
        match stopped {
            Some(e) => Err(e),
            None => Ok(list),
        }
    }

    /// The limit that stopped the last [`Session::transitions_within`].
    pub fn stopped(&self) -> Option<Exceeded> {
        self.stopped.get()
    }

    /// Take transition `choice` of the current state. Forgets what was undone.
    pub fn take(&mut self, choice: usize) -> Result<&TraceStep, StepError> {
        self.advance(choice)?;
        self.redo.clear();
        Ok(self.steps.last().expect("a step was just taken"))
    }

    fn advance(&mut self, choice: usize) -> Result<(), StepError> {
        if self.picking_leaders() {
            let available = self.variants.options(self.steps.len());
            if choice >= available {
                return Err(StepError::NoSuchTransition { choice, available });
            }
            let step = self.leader_step(choice);
            let st = self.current().clone();
            self.steps.push(step);
            self.states.push(st);
            return Ok(());
        }
        let st = self.current();
        let machine = self.machine();
        let mut succ = machine.successors(st);
        if choice >= succ.len() {
            return Err(StepError::NoSuchTransition {
                choice,
                available: succ.len(),
            });
        }
        let (step, next) = succ.swap_remove(choice);
        let described = machine.describe(self.steps.len() + 1, choice, st, &step, &next);
        self.steps.push(described);
        self.states.push(*next);
        Ok(())
    }

    /// Take `choices` one after the other from the current state; on a bad
    /// choice, stop there and say at which step (1-based, counted from the
    /// initial state) it was.
    pub fn replay(&mut self, choices: &[usize]) -> Result<(), TraceError> {
        for &c in choices {
            if let Err(StepError::NoSuchTransition { choice, available }) = self.advance(c) {
                return Err(TraceError::BadChoice {
                    step: self.steps.len() + 1,
                    choice,
                    available,
                });
            }
        }
        self.redo.clear();
        Ok(())
    }

    /// Undo the last step; false if there is none.
    pub fn undo(&mut self) -> bool {
        match self.steps.pop() {
            Some(s) => {
                self.states.pop();
                self.redo.push(s.choice);
                true
            }
            None => false,
        }
    }

    /// Redo the last undone step; false if there is none.
    pub fn redo(&mut self) -> bool {
        match self.redo.pop() {
            Some(c) => {
                let keep = std::mem::take(&mut self.redo);
                // An undone choice was valid in this very state.
                let ok = self.advance(c).is_ok();
                self.redo = keep;
                ok
            }
            None => false,
        }
    }

    /// Back to the initial state; the whole run can be redone step by step.
    pub fn restart(&mut self) {
        while self.undo() {}
    }

    /// The run so far as a trace (the same data as `ptxmc trace --follow`).
    pub fn trace(&self) -> Trace {
        Trace {
            steps: self.steps.clone(),
            choices: self.history(),
            final_states: self.final_states(),
        }
    }

    /// The `ptxmc trace` arguments that replay the run so far, after the file name.
    pub fn follow_args(&self) -> String {
        let list: Vec<String> = self.history().iter().map(usize::to_string).collect();
        let mut args = format!("--follow {}", list.join(","));
        if list.is_empty() {
            args = "--follow".into();
        }
        if self.options.every_step {
            args.push_str(" --every-step");
        }
        if self.options.loop_bound != Options::default().loop_bound {
            args.push_str(&format!(" --loop-bound {}", self.options.loop_bound));
        }
        args
    }

    /// Every final state reachable from the current state (the explorer,
    /// within the session's limits).
    pub fn reachable(&self) -> Reachable {
        self.reachable_from(self.states.len() - 1, &Budget::new(self.options.limits))
    }

    fn reachable_from(&self, k: usize, budget: &Budget) -> Reachable {
        let opts = ExploreOptions {
            limits: self.options.limits,
            jobs: 1,
            exact: false,
            progress: false,
            ..ExploreOptions::default()
        };
        // While leaders are still to be picked: every open choice's outcomes.
        let mut all = Reachable {
            outcomes: Outcomes::new(),
            bound_hit: false,
            incomplete: None,
        };
        for v in self.open_at(k) {
            let r = explore::explore_from_within(
                &self.explorers[v],
                self.states[k].clone(),
                &opts,
                budget,
            );
            all.outcomes.extend(r.outcomes);
            all.bound_hit |= r.bound_hit;
            if r.incomplete.is_some() {
                all.incomplete = r.incomplete;
                break;
            }
        }
        all
    }

    /// Whether `want` holds of outcome `o`.
    pub fn satisfies(&self, o: &Outcome, want: &Prop) -> bool {
        want.eval(&|t: &Term| self.machine().columns.term(o, t))
    }

    /// The hang the current state is (a deadlock, or threads that spin
    /// forever on the latest versions with nothing left to release them),
    /// if it is one ([`crate::op::Machine::quiescence`]).
    pub fn hang(&self) -> Option<Hang> {
        if self.picking_leaders() {
            return None;
        }
        hang_at(self.machine(), self.current())
    }

    /// The undefined step the current run has taken, if any
    /// ([`crate::op::Machine::undefined`]).
    pub fn undefined(&self) -> Option<crate::model::ub::Undefined> {
        if self.picking_leaders() {
            return None;
        }
        self.machine().undefined(self.current())
    }

    /// A shortest extension of the current run that ends at an undefined
    /// step (the run's last step is the one that makes it undefined); or
    /// since which step no run from here reaches one (`since: None`: no run
    /// of the test does, within the loop bound).
    pub fn go_to_undefined(&self) -> GoTo {
        let undefined = |m: &Machine<'p, S>, st: &State<S>| m.undefined(st).is_some();
        self.go_to_where(&undefined)
    }

    /// A shortest extension of the current run into a hang; or since which
    /// step no run from here can hang (`since: None`: no run of the test
    /// hangs, within the loop bound).
    pub fn go_to_hang(&self) -> GoTo {
        let hangs = |m: &Machine<'p, S>, st: &State<S>| hang_at(m, st).is_some();
        self.go_to_where(&hangs)
    }

    /// [`Session::go_to_hang`] and [`Session::go_to_undefined`]: a shortest
    /// extension to a state where `goal` holds, else the first step from
    /// which none is in reach.
    fn go_to_where(&self, goal: &dyn Fn(&Machine<'p, S>, &State<S>) -> bool) -> GoTo {
        let budget = Budget::new(self.options.limits);
        let reaches = |k: usize| -> Result<bool, Exceeded> {
            self.search_at(k, goal, &budget).map(|p| p.is_some())
        };
        self.first_out_of_reach(|| self.search_at(self.steps.len(), goal, &budget), reaches)
    }

    /// A shortest extension of the current run that ends in a final state
    /// where `want` holds; or since which step no run can reach one.
    pub fn go_to(&self, want: &Prop) -> GoTo {
        let budget = Budget::new(self.options.limits);
        let ends_in = |m: &Machine<'p, S>, st: &State<S>| {
            m.is_final(st)
                && !m.is_cut(st)
                && m.outcomes(st).iter().any(|o| self.satisfies(o, want))
        };
        // Reachability from a state: the explorer (with its reductions) is
        // faster than a breadth-first search.
        let reaches = |k: usize| -> Result<bool, Exceeded> {
            let r = self.reachable_from(k, &budget);
            if r.outcomes.iter().any(|o| self.satisfies(o, want)) {
                return Ok(true);
            }
            match r.incomplete {
                Some(e) => Err(e),
                None => Ok(false),
            }
        };
        self.first_out_of_reach(
            || self.search_at(self.steps.len(), &ends_in, &budget),
            reaches,
        )
    }

    /// A shortest path from the current state (`search`), or else the first
    /// step from which nothing is in reach (`reaches(k)`: from `states[k]`).
    fn first_out_of_reach(
        &self,
        search: impl Fn() -> Result<Option<Vec<usize>>, Exceeded>,
        reaches: impl Fn(usize) -> Result<bool, Exceeded>,
    ) -> GoTo {
        match search() {
            Ok(Some(path)) => return GoTo::Path(path),
            Ok(None) => {}
            Err(e) => return GoTo::Incomplete(e),
        }
        if self.steps.is_empty() {
            return GoTo::Unreachable { since: None };
        }
        // Reachability only shrinks along a run: find the first state from
        // which the target is out of reach by bisection over the prefixes.
        match reaches(0) {
            Ok(false) => return GoTo::Unreachable { since: None },
            Ok(true) => {}
            Err(e) => return GoTo::Incomplete(e),
        }
        // Invariant: reachable from states[lo], not from states[hi].
        let (mut lo, mut hi) = (0, self.states.len() - 1);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            match reaches(mid) {
                Ok(true) => lo = mid,
                Ok(false) => hi = mid,
                Err(e) => return GoTo::Incomplete(e),
            }
        }
        GoTo::Unreachable { since: Some(hi) }
    }

    /// A shortest path from `states[k]` to a state where `goal` holds: while
    /// leaders are still to be picked, the shortest over every open choice
    /// (the first choice on a tie), its remaining leader steps first.
    fn search_at(
        &self,
        k: usize,
        goal: &dyn Fn(&Machine<'p, S>, &State<S>) -> bool,
        budget: &Budget,
    ) -> Result<Option<Vec<usize>>, Exceeded> {
        let done = k.min(self.leader_steps());
        let mut best: Option<Vec<usize>> = None;
        for v in self.open_at(k) {
            let Some(path) = self.shortest_from(v, &self.states[k], goal, budget)? else {
                continue;
            };
            let mut full = self.variants.picks(v)[done..].to_vec();
            full.extend(path);
            if best.as_ref().is_none_or(|b| full.len() < b.len()) {
                best = Some(full);
            }
        }
        Ok(best)
    }

    /// Breadth-first search from `from` for a state where `goal` holds, with
    /// variant `v`'s stepping machine's own choices; `None` if there is none.
    fn shortest_from(
        &self,
        v: usize,
        from: &State<S>,
        goal: &dyn Fn(&Machine<'p, S>, &State<S>) -> bool,
        budget: &Budget,
    ) -> Result<Option<Vec<usize>>, Exceeded> {
        let m = &self.machines[v];
        m.within(budget, || {
            let mut parents = Parents::new(from);
            let mut queue = VecDeque::from([from.clone()]);
            let mut poll = Poll::new(budget);
            while let Some(st) = queue.pop_front() {
                if let Some(e) = poll.step() {
                    return Err(e);
                }
                let fp = st.fingerprint();
                if goal(m, &st) {
                    return Ok(Some(parents.choices_to(fp)));
                }
                if m.is_final(&st) {
                    continue;
                }
                for (i, (_, s)) in m.successors(&st).into_iter().enumerate() {
                    if parents.discover(fp, i, &s) {
                        queue.push_back(*s);
                    }
                }
                if let Some(e) = budget.states_exceeded(parents.len() as u64) {
                    return Err(e);
                }
            }
            // A step cut short by the watchdog ([`Machine::within`]) may
            // have lost successors: no answer then.
            match budget.exceeded() {
                Some(e) if m.interrupted() => Err(e),
                _ => Ok(None),
            }
        })
    }

    /// A shortest run into a hang ([`Machine::shortest_hang_within`]) over
    /// every choice of leader (the first choice on a tie): its choices
    /// begin with the leader steps; the cycle's steps are numbered after
    /// them. Only from the initial state.
    pub fn shortest_hang(&self, budget: &Budget) -> Result<crate::op::trace::Lasso, TraceError> {
        let g = self.leader_steps();
        let mut best: Option<crate::op::trace::Lasso> = None;
        let mut bound_hit = false;
        for (v, m) in self.machines.iter().enumerate() {
            match m.shortest_hang_within(budget) {
                Ok(mut l) => {
                    let mut choices = self.variants.picks(v);
                    choices.extend(l.choices);
                    l.choices = choices;
                    for s in &mut l.cycle {
                        s.index += g;
                    }
                    if best
                        .as_ref()
                        .is_none_or(|b| l.choices.len() < b.choices.len())
                    {
                        best = Some(l);
                    }
                }
                Err(TraceError::NoHang { bound_hit: b }) => bound_hit |= b,
                Err(e) => return Err(e),
            }
        }
        best.ok_or(TraceError::NoHang { bound_hit })
    }
}

/// The hang `st` is in `m`, if it is one.
fn hang_at<S: Bits>(m: &Machine<'_, S>, st: &State<S>) -> Option<Hang> {
    if m.is_final(st) {
        return None;
    }
    match m.quiescence(st) {
        Quiescence::Hang(h) => Some(h),
        Quiescence::Running | Quiescence::Cut => None,
    }
}
