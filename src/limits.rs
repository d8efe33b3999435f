//! Resource limits of a run — states, time, memory — and the [`Budget`]
//! through which every engine and every phase that can grow polls them.
//!
//! One budget serves one test's whole run: with `--engine both` the two
//! engines share its deadline and its memory ceiling, so `--timeout 5` bounds
//! the test, not each engine. The state limit is counted by each engine on
//! its own measure (the machine's distinct states, the oracle's search
//! nodes), so it is checked by the engines with [`Budget::states_exceeded`].
//!
//! Polling is cheap: a hot loop keeps a [`Poll`], which looks at the clock
//! every [`Poll::PERIOD`] steps; the budget itself reads the resident set
//! size (a `/proc` read) at most every [`MEMORY_PERIOD`]. Once time or memory
//! is exceeded the budget stays exceeded, so every engine and phase that asks
//! afterwards stops with the same reason.
//!
//! **Output.** Printing the outcomes is a phase too: a large set takes
//! seconds to format and many times its own size in memory (the JSON report
//! builds a map per outcome). So the engines declare every new outcome
//! ([`Budget::reserve_output`]) and the budget keeps time and memory in
//! reserve for printing it, at the cost of the format the run prints in
//! ([`OutputCost`]): the search stops early enough for the report to be
//! written within the limits, and says that this is why
//! ([`Exceeded::OutputTime`], [`Exceeded::OutputMemory`]). With both engines
//! the report prints one set, so the reserve is that of the engine that has
//! found more, not the sum of the two.

use serde::Serialize;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Limits of one test's run. Hitting one ends the run as incomplete.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Stop an engine after this many states: distinct machine states for
    /// the operational engine, search nodes for the axiomatic oracle.
    pub max_states: Option<u64>,
    /// Stop the run after this much wall-clock time (both engines together).
    pub timeout: Option<Duration>,
    /// Stop when the process's resident memory exceeds this many bytes.
    pub max_memory: Option<u64>,
}

/// Which limit stopped an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Exceeded {
    /// The engine's own count passed `max_states` (the limit).
    States(u64),
    /// The deadline passed (the timeout).
    Time(Duration),
    /// Resident memory passed `max_memory` (the limit, in bytes).
    Memory(u64),
    /// The time left before the deadline (the timeout) is what printing
    /// the outcomes found so far needs: the run stopped early to keep it.
    OutputTime(Duration),
    /// The memory left below `max_memory` (the limit, in bytes) is what
    /// printing the outcomes found so far needs.
    OutputMemory(u64),
    /// `--verdict-only`: an engine found a final state that settles the
    /// condition (a witness of `exists`, a counter-example of `forall` or
    /// `~exists`), so the run stopped there ([`Budget::stop_at`]).
    Settled,
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exceeded::States(max) => write!(f, "the state limit ({max}) was reached"),
            Exceeded::Time(t) => {
                write!(f, "the time limit ({:.1} s) was reached", t.as_secs_f64())
            }
            Exceeded::Memory(m) => write!(f, "the memory limit ({} MiB) was reached", m >> 20),
            Exceeded::OutputTime(t) => write!(
                f,
                "the time limit ({:.1} s) was nearly reached: the time left is kept to print the outcomes found",
                t.as_secs_f64()
            ),
            Exceeded::Settled => write!(
                f,
                "stopped at the first final state that settles the condition (--verdict-only): the verdict stands; other final states, termination and races were not searched to the end"
            ),
            Exceeded::OutputMemory(m) => write!(
                f,
                "the memory limit ({} MiB) was nearly reached: the memory left is kept to print the outcomes found",
                m >> 20
            ),
        }
    }
}

/// How often, at most, the budget reads the resident set size.
pub const MEMORY_PERIOD: Duration = Duration::from_millis(10);

/// What printing one value of a found outcome (one register or location of
/// one final state) costs in the report's format: the time and memory the
/// budget keeps in reserve for it.
///
/// The time is known twice: `time_per_value`, with room for a loaded
/// machine, and `measured_time_per_value`, the fastest measured on an idle
/// one. A reserve at the first is a guess; at the second it is grounded:
/// printing cannot take less. [`Budget::check`] stops a run for the first
/// only once half its time limit has passed, and for the second at any time,
/// so a short run is never stopped on a guess ("the time limit (5.0 s) was
/// nearly reached" after 0.26 s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputCost {
    /// Time per value, with room for a loaded machine.
    pub time_per_value: Duration,
    /// Time per value as measured on an idle machine: a lower bound.
    pub measured_time_per_value: Duration,
    /// Memory per value, beyond the outcome set itself.
    pub bytes_per_value: u64,
}

impl OutputCost {
    /// herd's text: lines written into one buffer sized up front. Measured
    /// 0.02–0.04 µs per value on an idle 2-core machine (2,661,676 final
    /// states of 22 values in 1.3–2.3 s, process exit included) and about
    /// 9 bytes; kept with room for a loaded machine.
    pub const HERD: OutputCost = OutputCost {
        time_per_value: Duration::from_nanos(150),
        measured_time_per_value: Duration::from_nanos(20),
        bytes_per_value: 24,
    };
    /// JSON as `run --format json` writes it: serialised straight from the
    /// outcome set into a buffered output. Measured 0.016 µs per value on an
    /// idle 2-core machine (2,661,676 final states of 22 values, 713 MB of
    /// text, in 0.93 s) and no memory beyond the buffer; kept with room for
    /// a loaded machine.
    pub const JSON: OutputCost = OutputCost {
        time_per_value: Duration::from_nanos(300),
        measured_time_per_value: Duration::from_nanos(16),
        bytes_per_value: 32,
    };
    /// JSON built as `serde_json::Value`s first (`report::json::report`, the
    /// playground's answers, library callers): a map per outcome, much of
    /// its time in fresh pages. 0.4–0.8 µs per value on an idle 2-core
    /// machine and up to 2.7 µs with eight busy processes beside it
    /// (120,000 outcomes of 20 values in 6.5 s); 120 bytes per value with 11
    /// columns, 340 with 20 short location names (a map entry with its key,
    /// the value, the index, then the text, all alive together).
    pub const VALUES: OutputCost = OutputCost {
        time_per_value: Duration::from_nanos(3000),
        measured_time_per_value: Duration::from_nanos(400),
        bytes_per_value: 384,
    };
}

impl Default for OutputCost {
    /// The costliest way to print, for callers that do not say how they do.
    fn default() -> Self {
        OutputCost::VALUES
    }
}

/// The limits of one run, with its clock. Shared (`&Budget`) by every engine
/// and worker of the run; all its methods take `&self`.
#[derive(Debug)]
pub struct Budget {
    limits: Limits,
    start: Instant,
    deadline: Option<Instant>,
    /// The time or memory limit that was hit first (it stays hit).
    hit: OnceLock<Exceeded>,
    /// Nanoseconds after `start` before which memory is not read again.
    next_memory_check: AtomicU64,
    /// Resident memory when last read, in bytes.
    last_rss: AtomicU64,
    /// Per engine ([`Finder`]), the values of the outcomes it has found so
    /// far, to be printed.
    output_values: [AtomicU64; 2],
    /// What printing a value costs.
    output_cost: OutputCost,
    /// `--verdict-only`: the final states (over every column) that settle
    /// the condition ([`Budget::stop_at`]).
    settles: Option<Settles>,
}

/// Whether a final state (one value per column of the program, as the
/// engines produce them) settles a test's condition.
pub type SettlesFn = dyn Fn(&[crate::ir::Value]) -> bool + Send + Sync;

/// [`SettlesFn`], boxed, for [`Budget`] (which derives `Debug`).
struct Settles(Box<SettlesFn>);

impl std::fmt::Debug for Settles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Settles(..)")
    }
}

/// Which engine found an outcome ([`Budget::reserve_output`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finder {
    /// The operational machine's explorer.
    Machine = 0,
    /// The axiomatic oracle.
    Oracle = 1,
}

impl Budget {
    /// A budget for `limits` whose clock starts now.
    pub fn new(limits: Limits) -> Budget {
        let start = Instant::now();
        Budget {
            limits,
            start,
            // A timeout beyond the clock's range is no deadline.
            deadline: limits.timeout.and_then(|t| start.checked_add(t)),
            hit: OnceLock::new(),
            next_memory_check: AtomicU64::new(0),
            last_rss: AtomicU64::new(0),
            output_values: [AtomicU64::new(0), AtomicU64::new(0)],
            output_cost: OutputCost::default(),
            settles: None,
        }
    }

    /// The same budget, stopping every engine ([`Exceeded::Settled`]) as
    /// soon as one finds a final state for which `settles` holds
    /// ([`Budget::offer`]).
    pub fn stop_at(mut self, settles: Box<SettlesFn>) -> Budget {
        self.settles = Some(Settles(settles));
        self
    }

    /// An engine found the final state `state` (over every column): with
    /// [`Budget::stop_at`], if it settles the condition, the budget is hit
    /// with [`Exceeded::Settled`], which every engine's next poll sees.
    pub fn offer(&self, state: &[crate::ir::Value]) {
        if let Some(Settles(f)) = &self.settles {
            if f(state) {
                self.set(Exceeded::Settled);
            }
        }
    }

    /// The same budget, reserving for printing at `cost` a value.
    pub fn with_output_cost(mut self, cost: OutputCost) -> Budget {
        self.output_cost = cost;
        self
    }

    /// A budget without limits (benchmarks, library callers).
    pub fn unlimited() -> Budget {
        Budget::new(Limits::default())
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// When the clock started.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// The time or memory limit already hit, without looking again.
    pub fn exceeded(&self) -> Option<Exceeded> {
        self.hit.get().copied()
    }

    /// Declare a new outcome of `values` values (its columns) that `finder`
    /// found, which the report will have to print.
    pub fn reserve_output(&self, finder: Finder, values: u64) {
        self.output_values[finder as usize].fetch_add(values, Ordering::Relaxed);
    }

    /// The values to keep in reserve for: those of the engine that has
    /// found more (the report prints one set).
    fn output_values(&self) -> u64 {
        let [m, o] = &self.output_values;
        m.load(Ordering::Relaxed).max(o.load(Ordering::Relaxed))
    }

    /// Look at the clock and, at most every [`MEMORY_PERIOD`], at resident
    /// memory, keeping the output's reserve of each; the limit hit, if any.
    pub fn check(&self) -> Option<Exceeded> {
        if let Some(e) = self.hit.get() {
            return Some(*e);
        }
        let now = Instant::now();
        let values = self.output_values();
        if let (Some(d), Some(t)) = (self.deadline, self.limits.timeout) {
            let values = values.min(u32::MAX as u64) as u32;
            let reserve = self.output_cost.time_per_value.saturating_mul(values);
            if now >= d {
                return Some(self.set(Exceeded::Time(t)));
            }
            if now + reserve >= d {
                // The reserve is a guess with room for a loaded machine:
                // before half the limit has passed it stops the run only if
                // the measured cost, with room for two busy cores (4×: the
                // test binaries run their tests side by side), would not fit
                // in the time left. (At the measured cost alone a million
                // outcomes of JSON completed and printed 40% past the limit.)
                let grounded = now
                    + self
                        .output_cost
                        .measured_time_per_value
                        .saturating_mul(values)
                        .saturating_mul(4)
                    >= d;
                let young = now.duration_since(self.start) < t / 2;
                // A reserve of a few milliseconds is within the polling's
                // slack: the limit was reached, whatever kept it.
                if reserve < Duration::from_millis(10) {
                    return Some(self.set(Exceeded::Time(t)));
                }
                if grounded || !young {
                    return Some(self.set(Exceeded::OutputTime(t)));
                }
            }
        }
        if let Some(max) = self.limits.max_memory {
            // Reading the resident size costs a few microseconds: at most
            // every MEMORY_PERIOD. The output's reserve grows much faster
            // than that, so it is added to the last reading at every look.
            let since = now.duration_since(self.start).as_nanos() as u64;
            if since >= self.next_memory_check.load(Ordering::Relaxed) {
                self.next_memory_check
                    .store(since + MEMORY_PERIOD.as_nanos() as u64, Ordering::Relaxed);
                if let Some(rss) = current_rss() {
                    self.last_rss.store(rss, Ordering::Relaxed);
                }
            }
            let rss = self.last_rss.load(Ordering::Relaxed);
            if rss > max {
                return Some(self.set(Exceeded::Memory(max)));
            }
            if rss.saturating_add(values.saturating_mul(self.output_cost.bytes_per_value)) > max {
                return Some(self.set(Exceeded::OutputMemory(max)));
            }
        }
        None
    }

    /// The state limit, for an engine that has counted `n` states.
    pub fn states_exceeded(&self, n: u64) -> Option<Exceeded> {
        self.limits
            .max_states
            .filter(|&max| n > max)
            .map(Exceeded::States)
    }

    fn set(&self, e: Exceeded) -> Exceeded {
        *self.hit.get_or_init(|| e)
    }
}

/// How often a [`watched`] run's watchdog looks at the budget.
pub const WATCH_PERIOD: Duration = Duration::from_millis(2);

/// Run `work` while a watchdog thread looks at `budget` every
/// [`WATCH_PERIOD`] and calls `on_hit` once when a time or memory limit is
/// hit. For work whose single steps can be long — one state's successors,
/// the coherence completions of one final state — and so cannot be trusted
/// to poll often enough: the work only has to look at a flag that `on_hit`
/// sets. Without a time or memory limit, or if no thread can be started,
/// `work` simply runs.
pub fn watched<R>(
    budget: &Budget,
    on_hit: impl Fn(Exceeded) + Sync,
    work: impl FnOnce() -> R,
) -> R {
    let limits = budget.limits();
    if limits.timeout.is_none() && limits.max_memory.is_none() {
        return work();
    }
    let (done, wait) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        let on_hit = &on_hit;
        let dog = std::thread::Builder::new()
            .name("ptxmc-watchdog".into())
            .spawn_scoped(s, move || {
                loop {
                    if let Some(e) = budget.check() {
                        on_hit(e);
                        return;
                    }
                    match wait.recv_timeout(WATCH_PERIOD) {
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                        _ => return,
                    }
                }
            });
        let r = work();
        drop(done);
        if let Ok(dog) = dog {
            let _ = dog.join();
        }
        r
    })
}

/// A cheap poll of a [`Budget`] from a loop: it counts steps and checks the
/// budget every [`Poll::PERIOD`] of them.
#[derive(Debug)]
pub struct Poll<'b> {
    budget: &'b Budget,
    steps: u32,
}

impl<'b> Poll<'b> {
    /// Steps between two looks at the budget: a step costs at least tens of
    /// nanoseconds and a look about as much, so the poll costs ~1%.
    pub const PERIOD: u32 = 128;

    /// A poll of `budget`.
    pub fn new(budget: &'b Budget) -> Self {
        Poll { budget, steps: 0 }
    }

    /// The budget polled.
    pub fn budget(&self) -> &'b Budget {
        self.budget
    }

    /// Count one step; the time or memory limit hit, if any (looked at
    /// every [`Poll::PERIOD`] steps, otherwise only the latched result).
    #[inline]
    pub fn step(&mut self) -> Option<Exceeded> {
        self.steps = self.steps.wrapping_add(1);
        if self.steps % Self::PERIOD == 0 {
            self.budget.check()
        } else {
            self.budget.exceeded()
        }
    }
}

/// Current resident set size in bytes (Linux), if known.
pub fn current_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Peak resident set size in bytes (Linux), if known.
pub fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passed_deadline_is_reported_and_stays_reported() {
        let b = Budget::new(Limits {
            timeout: Some(Duration::ZERO),
            ..Limits::default()
        });
        assert_eq!(b.check(), Some(Exceeded::Time(Duration::ZERO)));
        assert_eq!(b.exceeded(), Some(Exceeded::Time(Duration::ZERO)));
    }

    #[test]
    fn memory_over_the_limit_is_reported() {
        let b = Budget::new(Limits {
            max_memory: Some(1),
            ..Limits::default()
        });
        assert_eq!(b.check(), Some(Exceeded::Memory(1)));
    }

    #[test]
    fn outcomes_to_print_bring_the_deadline_forward() {
        let b = Budget::new(Limits {
            timeout: Some(Duration::from_secs(60)),
            ..Limits::default()
        });
        assert_eq!(b.check(), None);
        // 2^28 values need at least 107 s of printing (at the measured
        // 0.4 µs a value): more than the limit, grounded, so at once.
        b.reserve_output(Finder::Machine, 1 << 28);
        let e = b.check();
        assert_eq!(e, Some(Exceeded::OutputTime(Duration::from_secs(60))));
        assert_eq!(
            e.unwrap().to_string(),
            "the time limit (60.0 s) was nearly reached: the time left is kept to print the outcomes found"
        );
    }

    #[test]
    fn both_engines_reserve_for_one_printed_set() {
        let b = Budget::new(Limits {
            timeout: Some(Duration::from_secs(60)),
            ..Limits::default()
        });
        // Each engine's 2^25 values need at least 54 s of printing (the
        // measured cost with room for two busy cores); the report prints one
        // set, so together they still fit in the limit.
        b.reserve_output(Finder::Machine, 1 << 25);
        b.reserve_output(Finder::Oracle, 1 << 25);
        assert_eq!(b.check(), None);
        b.reserve_output(Finder::Oracle, 1 << 23);
        assert_eq!(
            b.check(),
            Some(Exceeded::OutputTime(Duration::from_secs(60)))
        );
    }

    #[test]
    fn the_reserve_follows_the_format() {
        let limits = Limits {
            timeout: Some(Duration::from_secs(60)),
            ..Limits::default()
        };
        // 2^28 values: at least 107 s of JSON values, 5.4 s of herd text.
        let values = Budget::new(limits);
        values.reserve_output(Finder::Machine, 1 << 28);
        assert_eq!(
            values.check(),
            Some(Exceeded::OutputTime(Duration::from_secs(60)))
        );
        let herd = Budget::new(limits).with_output_cost(OutputCost::HERD);
        herd.reserve_output(Finder::Machine, 1 << 28);
        assert_eq!(herd.check(), None);
        herd.reserve_output(Finder::Machine, 1 << 32);
        assert_eq!(
            herd.check(),
            Some(Exceeded::OutputTime(Duration::from_secs(60)))
        );
    }

    #[test]
    fn a_guessed_reserve_does_not_stop_a_young_run() {
        let b = Budget::new(Limits {
            timeout: Some(Duration::from_secs(5)),
            ..Limits::default()
        });
        // 2^21 values: 6.3 s at the cost kept for a loaded machine, more
        // than the limit; 0.84 s at the measured cost, which fits.
        b.reserve_output(Finder::Machine, 1 << 21);
        assert_eq!(b.check(), None);
    }

    #[test]
    fn a_guessed_reserve_stops_a_run_past_half_its_limit() {
        let b = Budget::new(Limits {
            timeout: Some(Duration::from_secs(2)),
            ..Limits::default()
        });
        // 2^20 values: 3.1 s with room for a loaded machine, 0.42 s as
        // measured. Young, the run goes on; past half the limit (at most
        // 0.9 s left), the guess is what is left to go by.
        b.reserve_output(Finder::Machine, 1 << 20);
        assert_eq!(b.check(), None);
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(
            b.check(),
            Some(Exceeded::OutputTime(Duration::from_secs(2)))
        );
    }

    #[test]
    fn the_watchdog_stops_work_that_never_polls() {
        let b = Budget::new(Limits {
            timeout: Some(Duration::from_millis(20)),
            ..Limits::default()
        });
        let flag = AtomicU64::new(0);
        // The work only looks at the flag, never at the budget.
        let spins = watched(
            &b,
            |_| flag.store(1, Ordering::Relaxed),
            || {
                let mut n = 0u64;
                while flag.load(Ordering::Relaxed) == 0 {
                    n += 1;
                    std::hint::spin_loop();
                }
                n
            },
        );
        assert!(spins > 0);
        assert_eq!(
            b.exceeded(),
            Some(Exceeded::Time(Duration::from_millis(20)))
        );
    }

    #[test]
    fn work_without_limits_is_not_watched() {
        let b = Budget::unlimited();
        let hits = AtomicU64::new(0);
        assert_eq!(
            watched(
                &b,
                |_| {
                    hits.fetch_add(1, Ordering::Relaxed);
                },
                || 7
            ),
            7
        );
        assert_eq!(hits.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn no_limit_never_stops() {
        let b = Budget::unlimited();
        let mut p = Poll::new(&b);
        assert!((0..10_000).all(|_| p.step().is_none()));
        assert_eq!(b.states_exceeded(u64::MAX), None);
    }

    #[test]
    fn the_state_limit_is_strict() {
        let b = Budget::new(Limits {
            max_states: Some(5),
            ..Limits::default()
        });
        assert_eq!(b.states_exceeded(5), None);
        assert_eq!(b.states_exceeded(6), Some(Exceeded::States(5)));
    }

    #[test]
    fn messages_name_the_limit() {
        assert_eq!(
            Exceeded::Time(Duration::from_millis(5000)).to_string(),
            "the time limit (5.0 s) was reached"
        );
        assert_eq!(
            Exceeded::Memory(64 << 20).to_string(),
            "the memory limit (64 MiB) was reached"
        );
        assert_eq!(
            Exceeded::States(3).to_string(),
            "the state limit (3) was reached"
        );
    }
}
