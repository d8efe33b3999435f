//! Exhaustive exploration of the operational machine: depth-first search
//! over its steps with a shared seen-set of states, on one thread or many.
//!
//! The strategy is kept apart from the machine: the machine says what the
//! successors of a state are ([`Machine::successors_folded`], which already
//! applies the machine's partial-order reduction); the explorer decides the
//! order of visits, which states to skip, and when to stop.
//!
//! **Determinism.** Every distinct reachable state is expanded exactly once
//! (the first worker to insert it into the seen-set expands it), and every
//! counter is a sum over expanded states. So outcome sets and every counter
//! are the same for any number of workers; only the time differs. (A run
//! stopped by a limit is the exception: which states it reached depends on
//! the schedule, and it is reported as incomplete.)
//!
//! **Fingerprints.** By default a state is remembered by a 64-bit XXH3 hash
//! of its canonical bytes ([`State::fingerprint`]). Two distinct states
//! collide with probability about n²/2⁶⁵ for n states (n = 10⁶: 3·10⁻⁸;
//! n = 10⁸: 3·10⁻⁴); a collision would skip a state and could lose outcomes. `--exact` stores full states
//! instead and has no such risk, at a few kilobytes per state.

use crate::rel::Bits;
use dashmap::DashSet;
use fxhash::FxBuildHasher;
use serde::Serialize;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::limits::{Budget, Exceeded, Finder, Poll};
use crate::model::hang::Hang;
use crate::model::ub::Undefined;
use crate::op::Machine;
use crate::op::commute::Commuting;
use crate::op::hang::Quiescence;
use crate::op::state::State;
use crate::op::symmetry::Symmetry;
use crate::outcome::Outcomes;

pub use crate::limits::{Limits, current_rss, peak_rss};

/// How to explore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExploreOptions {
    /// Limits ([`explore`]; [`explore_within`] takes a budget instead).
    pub limits: Limits,
    /// Worker threads (1 = sequential).
    pub jobs: usize,
    /// Remember full states instead of 64-bit fingerprints.
    pub exact: bool,
    /// Show a progress line on stderr for long runs (only if it is a terminal).
    pub progress: bool,
    /// Look for hangs: classify every state ([`Machine::quiescence`]).
    pub termination: bool,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            limits: Limits::default(),
            jobs: 1,
            exact: false,
            progress: false,
            termination: false,
        }
    }
}

/// Counters of one exploration. Field names are part of the JSON interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ExploreStats {
    /// States expanded (each distinct state once).
    pub states: u64,
    /// Distinct states stored in the seen-set.
    pub distinct_states: u64,
    /// Transitions between stored states.
    pub transitions: u64,
    /// Choice-free retirements carried out in place, without storing the
    /// intermediate state (part of the partial-order reduction).
    pub eager_steps: u64,
    /// Successors skipped because their state was seen before.
    pub dedup_hits: u64,
    /// Transitions not explored thanks to partial-order reduction.
    pub por_pruned: u64,
    /// Choice states whose choices were those of one persistent thread
    /// alone (P2: a thread whose binds no other thread's step can affect).
    pub persistent_states: u64,
    /// Threads in groups of interchangeable threads whose states the
    /// search remembered one per orbit (`docs/exploration.md`, "Symmetry";
    /// 0 when there is none or with `--no-symmetry`).
    pub symmetric_threads: u64,
    /// States with no successor that are not final (a check failed, or a deadlock).
    pub dead_ends: u64,
    /// Final states reached.
    pub final_states: u64,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
    /// Distinct states per second.
    pub states_per_s: f64,
    /// Peak resident memory of the process, in bytes (0 where unknown).
    pub peak_rss_bytes: u64,
}

/// What an exploration found.
#[derive(Clone, Debug)]
pub struct Explored {
    /// Final states of the program reached.
    pub outcomes: Outcomes,
    /// Some thread stopped at the loop bound in a reachable end state.
    pub bound_hit: bool,
    /// A limit stopped the search (and which); outcomes are partial.
    pub incomplete: Option<Exceeded>,
    /// With the termination check: the least hang witness found (the same
    /// for any number of workers, since every state is visited once).
    pub hang: Option<Hang>,
    /// With the termination check: some reachable state has a thread cut at
    /// the loop bound (an execution takes a bounded loop's back edge more
    /// often than the bound allows; without one, every loop was explored
    /// completely).
    pub cut_reached: bool,
    /// The least undefined step reached by a consistent execution (a final
    /// state, or with the termination check a hang witness).
    pub undefined: Option<Undefined>,
    /// Counters.
    pub stats: ExploreStats,
}

/// A 64-bit fingerprint of a state ([`State::fingerprint`]).
pub fn fingerprint<S: Bits>(st: &State<S>) -> u64 {
    st.fingerprint()
}

/// The seen-set: fingerprints, or full states in `--exact` mode; under a
/// symmetry, fingerprints or bytes of the canonical encoding
/// ([`Symmetry::encode`]), one per orbit.
enum Seen<'y, S: Bits> {
    Fingerprints(DashSet<u64, FxBuildHasher>),
    Exact(DashSet<Box<State<S>>, FxBuildHasher>),
    Canonical(&'y Symmetry<S>, DashSet<u64, FxBuildHasher>),
    CanonicalExact(&'y Symmetry<S>, DashSet<Box<[u8]>, FxBuildHasher>),
}

impl<S: Bits> Seen<'_, S> {
    /// Insert; true if the state was new.
    fn insert(&self, st: &State<S>) -> bool {
        match self {
            Seen::Fingerprints(s) => s.insert(fingerprint(st)),
            Seen::Exact(s) => !s.contains(st) && s.insert(Box::new(st.clone())),
            Seen::Canonical(y, s) => s.insert(y.fingerprint(st)),
            Seen::CanonicalExact(y, s) => {
                let mut b = Vec::new();
                y.encode(st, &mut b);
                s.insert(b.into_boxed_slice())
            }
        }
    }
    fn len(&self) -> usize {
        match self {
            Seen::Fingerprints(s) | Seen::Canonical(_, s) => s.len(),
            Seen::Exact(s) => s.len(),
            Seen::CanonicalExact(_, s) => s.len(),
        }
    }
}

/// Shared counters (summed over workers).
#[derive(Default)]
struct Counters {
    states: AtomicU64,
    transitions: AtomicU64,
    eager_steps: AtomicU64,
    dedup_hits: AtomicU64,
    por_pruned: AtomicU64,
    persistent_states: AtomicU64,
    dead_ends: AtomicU64,
    final_states: AtomicU64,
}

struct Ctx<'m, 'p, 'b, S: Bits> {
    machine: &'m Machine<'p, S>,
    /// The symmetry the seen-set quotients by, if any.
    sym: Option<&'m Symmetry<S>>,
    /// The commuting counters whose orders of additions the seen-set
    /// forgets, if any (`docs/exploration.md`, "Commuting additions in the
    /// machine").
    commute: Option<&'m Commuting<S>>,
    seen: Seen<'m, S>,
    /// Distinct states inserted (the seen-set's length, without locking its shards).
    distinct: AtomicU64,
    counters: Counters,
    outcomes: Mutex<Outcomes>,
    bound_hit: AtomicBool,
    termination: bool,
    hang: Mutex<Option<Hang>>,
    undefined: Mutex<Option<Undefined>>,
    cut_reached: AtomicBool,
    stop: AtomicBool,
    why: Mutex<Option<Exceeded>>,
    budget: &'b Budget,
    /// Split-off stacks waiting for a worker; splitting stops while there are
    /// enough of them, so the queue (and the memory it holds) stays small.
    pending: std::sync::atomic::AtomicUsize,
    jobs: usize,
}

impl<S: Bits> Ctx<'_, '_, '_, S> {
    fn halt(&self, why: Exceeded) {
        let mut w = self.why.lock().unwrap();
        if w.is_none() {
            *w = Some(why);
        }
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Remember `st` (up to the order of commuting additions); true if it
    /// is new.
    fn insert(&self, st: &State<S>) -> bool {
        let canonical = self.commute.and_then(|c| c.canonical(st));
        let new = self.seen.insert(canonical.as_ref().unwrap_or(st));
        if new {
            let n = self.distinct.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(e) = self.budget.states_exceeded(n) {
                self.halt(e);
            }
        }
        new
    }

    /// Depth-first search from the states of `stack`; with a scope, split off
    /// part of the stack now and then so idle workers can steal it.
    // States are boxed so that pushing and popping them moves a pointer, not
    // the whole state.
    /// Keep the least undefined step of a consistent state.
    fn note_undefined(&self, st: &State<S>) {
        if let Some(u) = self.machine.undefined(st) {
            let mut best = self.undefined.lock().unwrap();
            if best.as_ref().is_none_or(|b| u < *b) {
                *best = Some(u);
            }
        }
    }

    #[allow(clippy::vec_box)]
    fn run<'s>(&'s self, scope: Option<&rayon::Scope<'s>>, mut stack: Vec<Box<State<S>>>) {
        let m = self.machine;
        let mut local = Outcomes::new();
        let mut since_split = 0u32;
        let mut poll = Poll::new(self.budget);
        while let Some(st) = stack.pop() {
            if let Some(e) = poll.step() {
                self.halt(e);
            }
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            self.counters.states.fetch_add(1, Ordering::Relaxed);
            if self.termination && st.threads.iter().any(|t| t.cut) {
                self.cut_reached.store(true, Ordering::Relaxed);
            }
            if m.is_final(&st) {
                self.counters.final_states.fetch_add(1, Ordering::Relaxed);
                if m.is_cut(&st) {
                    // With lazy coherence a final state stands for its
                    // consistent completions: it counts only if it has one
                    // (always so when coherence is eager, as with loops).
                    if m.completable(&st) {
                        self.bound_hit.store(true, Ordering::Relaxed);
                        // An undefined step retired before the cut is
                        // reached all the same (the oracle judges
                        // truncated executions too).
                        self.note_undefined(&st);
                    }
                } else {
                    if m.completable(&st) {
                        self.note_undefined(&st);
                    }
                    // Declared per worker, so an outcome two workers find
                    // counts twice: the reserve errs on the safe side.
                    // One final state may stand for a product of outcomes:
                    // poll while taking them.
                    m.for_each_outcome(&st, |o| {
                        let width = o.len() as u64;
                        // `--verdict-only`: a settling state stops the run
                        // at the next poll (just below).
                        self.budget.offer(&o);
                        if local.insert(o) {
                            self.budget.reserve_output(Finder::Machine, width);
                        }
                        match poll.step() {
                            Some(e) => {
                                self.halt(e);
                                std::ops::ControlFlow::Break(())
                            }
                            None => std::ops::ControlFlow::Continue(()),
                        }
                    });
                }
                continue;
            }
            if self.termination {
                match m.quiescence(&st) {
                    Quiescence::Running => {}
                    Quiescence::Cut => self.cut_reached.store(true, Ordering::Relaxed),
                    Quiescence::Hang(h) => {
                        self.note_undefined(&st);
                        let mut best = self.hang.lock().unwrap();
                        if best.as_ref().is_none_or(|b| h < *b) {
                            *best = Some(h);
                        }
                    }
                }
            }
            // Under symmetry, symmetric choices are offered once: their
            // successors are permutations of each other, one orbit.
            let twins = self
                .sym
                .filter(|_| m.symmetric_choices)
                .map(|y| y.twins(&st));
            let f = m.successors_folded_with(&st, twins.as_ref());
            self.counters
                .eager_steps
                .fetch_add(f.folded, Ordering::Relaxed);
            self.counters
                .por_pruned
                .fetch_add(f.pruned, Ordering::Relaxed);
            self.counters
                .persistent_states
                .fetch_add(f.persistent, Ordering::Relaxed);
            if f.states.is_empty() {
                self.counters.dead_ends.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            self.counters
                .transitions
                .fetch_add(f.states.len() as u64, Ordering::Relaxed);
            for s in f.states.into_iter().rev() {
                // A state whose spin on a commuting counter can only go
                // back reaches nothing (`Commuting::doomed`).
                if self.commute.is_some_and(|c| c.doomed(&s)) {
                    self.counters.dead_ends.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                if self.insert(&s) {
                    stack.push(s);
                } else {
                    self.counters.dedup_hits.fetch_add(1, Ordering::Relaxed);
                }
            }
            since_split += 1;
            if let Some(scope) = scope {
                if stack.len() >= 2
                    && since_split >= 16
                    && self.pending.load(Ordering::Relaxed) < self.jobs
                {
                    since_split = 0;
                    // Hand the oldest half (the shallowest states, likely the biggest subtrees) to a thief.
                    let rest = stack.split_off(stack.len() / 2);
                    let half = std::mem::replace(&mut stack, rest);
                    self.pending.fetch_add(1, Ordering::Relaxed);
                    scope.spawn(move |s| {
                        self.pending.fetch_sub(1, Ordering::Relaxed);
                        self.run(Some(s), half)
                    });
                }
            }
        }
        self.outcomes.lock().unwrap().extend(local);
    }
}

/// Explore every state reachable from the initial state, within `opts.limits`.
pub fn explore<S: Bits>(m: &Machine<'_, S>, opts: &ExploreOptions) -> Explored {
    explore_within(m, opts, &Budget::new(opts.limits))
}

/// Explore every state reachable from the initial state, within `budget`
/// (shared with whatever else the run does; `opts.limits` is not read). The
/// state limit counts distinct states; time and memory are looked at every
/// [`Poll::PERIOD`] expansions of each worker.
pub fn explore_within<S: Bits>(
    m: &Machine<'_, S>,
    opts: &ExploreOptions,
    budget: &Budget,
) -> Explored {
    // Only from the initial state, which every permutation of a group maps
    // to itself: the final states of a state that is not would not be
    // closed under the group.
    let sym = m.symmetry.as_ref().filter(|_| m.use_symmetry);
    // Commuting additions: with the partial-order reduction (the argument
    // needs a load that will go back to be dropped with its retirement),
    // and not beside a symmetry (one quotient at a time).
    let commute = m.commuting.as_ref().filter(|_| m.por && sym.is_none());
    explore_from(m, m.initial(), opts, budget, sym, commute)
}

/// [`explore_within`] from `from` instead of the initial state: every final
/// state reachable from a state a stepping session stands in
/// ([`crate::step`]).
pub fn explore_from_within<S: Bits>(
    m: &Machine<'_, S>,
    from: State<S>,
    opts: &ExploreOptions,
    budget: &Budget,
) -> Explored {
    explore_from(m, from, opts, budget, None, None)
}

/// [`explore_from_within`], remembering states one per orbit of `sym` and
/// expanding the final states found to their orbits.
fn explore_from<'m, S: Bits>(
    m: &'m Machine<'_, S>,
    from: State<S>,
    opts: &ExploreOptions,
    budget: &Budget,
    sym: Option<&'m Symmetry<S>>,
    commute: Option<&'m Commuting<S>>,
) -> Explored {
    let start = Instant::now();
    let hasher = FxBuildHasher::default;
    let seen = match (sym, opts.exact) {
        (None, true) => Seen::Exact(DashSet::with_hasher(hasher())),
        (None, false) => Seen::Fingerprints(DashSet::with_hasher(hasher())),
        (Some(y), true) => Seen::CanonicalExact(y, DashSet::with_hasher(hasher())),
        (Some(y), false) => Seen::Canonical(y, DashSet::with_hasher(hasher())),
    };
    let ctx = Ctx {
        machine: m,
        sym,
        commute,
        seen,
        distinct: AtomicU64::new(0),
        counters: Counters::default(),
        outcomes: Mutex::new(Outcomes::new()),
        bound_hit: AtomicBool::new(false),
        termination: opts.termination,
        hang: Mutex::new(None),
        undefined: Mutex::new(None),
        cut_reached: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        why: Mutex::new(None),
        budget,
        pending: std::sync::atomic::AtomicUsize::new(0),
        jobs: opts.jobs,
    };
    let init = Box::new(from);
    ctx.insert(&init);
    let done = AtomicBool::new(false);
    // One expansion can be long (tens of thousands of successors) and so
    // can one final state's outcomes: a watchdog interrupts the machine
    // inside them when a limit is hit, beside the polls between expansions.
    m.within(budget, || {
        std::thread::scope(|sc| {
            if opts.progress {
                sc.spawn(|| progress(&ctx.counters.states, &done, start));
            }
            if opts.jobs <= 1 {
                ctx.run(None, vec![init]);
            } else if rayon::current_num_threads() == opts.jobs {
                rayon::scope(|s| ctx.run(Some(s), vec![init]));
            } else {
                match rayon::ThreadPoolBuilder::new()
                    .num_threads(opts.jobs)
                    .build()
                {
                    Ok(pool) => pool.install(|| rayon::scope(|s| ctx.run(Some(s), vec![init]))),
                    Err(_) => ctx.run(None, vec![init]),
                }
            }
            done.store(true, Ordering::Relaxed);
        })
    });
    if m.interrupted() {
        // The machine gave up inside a step: what it returned is partial,
        // even if the search ran out of states right after.
        if let Some(e) = budget.exceeded() {
            ctx.halt(e);
        }
    }
    let c = &ctx.counters;
    let elapsed = start.elapsed().as_secs_f64();
    let distinct = ctx.seen.len() as u64;
    let stats = ExploreStats {
        states: c.states.load(Ordering::Relaxed),
        distinct_states: distinct,
        transitions: c.transitions.load(Ordering::Relaxed),
        eager_steps: c.eager_steps.load(Ordering::Relaxed),
        dedup_hits: c.dedup_hits.load(Ordering::Relaxed),
        por_pruned: c.por_pruned.load(Ordering::Relaxed),
        persistent_states: c.persistent_states.load(Ordering::Relaxed),
        symmetric_threads: sym.map_or(0, |y| y.threads() as u64),
        dead_ends: c.dead_ends.load(Ordering::Relaxed),
        final_states: c.final_states.load(Ordering::Relaxed),
        elapsed_s: elapsed,
        states_per_s: if elapsed > 0.0 {
            distinct as f64 / elapsed
        } else {
            0.0
        },
        peak_rss_bytes: peak_rss().unwrap_or(0),
    };
    let mut outcomes = ctx.outcomes.into_inner().unwrap();
    let mut why = ctx.why.into_inner().unwrap();
    if let Some(y) = sym {
        // The orbits of the final states found are final states too; their
        // listing is bounded by the run's limits like the search.
        let (all, whole) = y.expand(outcomes, |o| {
            budget.reserve_output(Finder::Machine, o.len() as u64);
            budget.check().is_none()
        });
        outcomes = all;
        if !whole && why.is_none() {
            why = budget.check();
        }
    }
    Explored {
        outcomes,
        bound_hit: ctx.bound_hit.load(Ordering::Relaxed),
        incomplete: why,
        hang: ctx.hang.into_inner().unwrap(),
        undefined: ctx.undefined.into_inner().unwrap(),
        cut_reached: ctx.cut_reached.load(Ordering::Relaxed),
        stats,
    }
}

/// A progress line on stderr, shown only on a terminal and only once a run
/// has lasted a second and a half; cleared at the end. Never on stdout, so it
/// cannot pollute `--format json`.
fn progress(states: &AtomicU64, done: &AtomicBool, start: Instant) {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return;
    }
    let bar = indicatif::ProgressBar::hidden();
    let mut shown = false;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if !shown && start.elapsed() > Duration::from_millis(1500) {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} exploring: {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            shown = true;
        }
        if shown {
            let n = states.load(Ordering::Relaxed);
            let secs = start.elapsed().as_secs_f64();
            bar.set_message(format!(
                "{n} states, {:.0} states/s, {secs:.1} s",
                n as f64 / secs.max(1e-9)
            ));
            bar.tick();
        }
    }
    bar.finish_and_clear();
}
