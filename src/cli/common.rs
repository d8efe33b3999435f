//! Pieces shared by the subcommands that run engines.

use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Exit;
use crate::engine::{EngineChoice, Projection, RunOptions};
use crate::explain::TerminationNote;
use crate::ir::Prop;
use crate::limits::Limits;
use crate::litmus::{self, LitmusError, LitmusTest, cond};
use crate::model::Model;
use crate::model::barrier::Reading;
use crate::model::hang::Fairness;

/// The test of a single-test command (`explain`, `fix`, `step`, `trace`)
/// and how to read it.
#[derive(Args, Debug, Clone)]
pub struct TestArgs {
    /// The test (for a mixedproxy template, its first instance unless `--instance` says otherwise).
    pub file: PathBuf,
    /// Template row of a mixedproxy file (1-based).
    #[arg(long, default_value_t = 1)]
    pub instance: usize,
    /// Memory model.
    #[arg(long, value_enum, default_value_t = Model::default())]
    pub model: Model,
    /// How many times a loop may jump back.
    #[arg(long, default_value_t = RunOptions::default().loop_bound, value_name = "N")]
    pub loop_bound: u32,
    /// How CTA barriers are read: `isa` (the PTX ISA, as the H100 behaves)
    /// or `dat3m` (Dat3M's reading, for its suites; docs/barriers.md).
    #[arg(long, value_enum, default_value_t = Reading::default())]
    pub barriers: Reading,
    /// Which writes a spinning read must eventually see: `morally-strong`
    /// (those morally strong with it; a weak or `.cta` spin across CTAs may
    /// hang, as on the GPU) or `all` (every write; Dat3M's reading).
    #[arg(long, value_enum, default_value_t = Fairness::default())]
    pub fairness: Fairness,
}

impl TestArgs {
    /// Load the test ([`load_instance`]).
    pub fn load(&self) -> Result<LitmusTest, Exit> {
        load_instance(&self.file, self.model, self.instance)
    }
}

/// Engine options common to `run` and `check`.
#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// Engine to run.
    #[arg(long, value_enum, default_value_t = EngineChoice::default())]
    pub engine: EngineChoice,
    /// Memory model: `ptx7.5` (scopes incl. .cluster, proxies, aliases) or `ptx6.0` (no proxies).
    #[arg(long, value_enum, default_value_t = Model::default())]
    pub model: Model,
    /// How many times a loop may jump back (spin loops that only read are not bounded).
    #[arg(long, default_value_t = RunOptions::default().loop_bound, value_name = "N")]
    pub loop_bound: u32,
    /// How CTA barriers are read: `isa` (the PTX ISA, as the H100 behaves)
    /// or `dat3m` (Dat3M's reading, for its suites; docs/barriers.md).
    #[arg(long, value_enum, default_value_t = Reading::default())]
    pub barriers: Reading,
    /// Which writes a spinning read must eventually see: `morally-strong`
    /// (those morally strong with it; a weak or `.cta` spin across CTAs may
    /// hang, as on the GPU) or `all` (every write; Dat3M's reading;
    /// docs/loops.md, "Fairness").
    #[arg(long, value_enum, default_value_t = Fairness::default())]
    pub fairness: Fairness,
    /// Worker threads (default: all cores). Several tests run side by side; a
    /// single test's exploration is shared between the workers.
    #[arg(long, short = 'j', value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Turn off the operational machine's partial-order reduction (to measure it).
    #[arg(long)]
    pub no_por: bool,
    /// Order every pair of morally strong writes when the later one is issued
    /// instead of completing coherence at the end (to check lazy coherence).
    #[arg(long)]
    pub eager_coherence: bool,
    /// Turn off P2, exploring one persistent thread's choices alone (to check it).
    #[arg(long)]
    pub no_persistent: bool,
    /// Turn off P3, which lets P2 take a spinning thread's binds alone when
    /// no hang can leave it spinning (to check it).
    #[arg(long)]
    pub no_spin_persistent: bool,
    /// Turn off the machine's symmetry reduction, which remembers one state
    /// per permutation of interchangeable threads (to check it).
    #[arg(long)]
    pub no_symmetry: bool,
    /// Under symmetry, make the machine offer every choice of every thread
    /// instead of one per class of symmetric choices (to check that).
    #[arg(long)]
    pub no_symmetric_choices: bool,
    /// Make the machine check coherence, obligations, atomicity and SC per
    /// location over each location's whole graph at every step instead of
    /// only through what the step added (to check that shortcut).
    #[arg(long)]
    pub no_incremental_sc: bool,
    /// Make the machine remember every order of a commuting counter's
    /// additions instead of one (to check that reduction; docs/exploration.md,
    /// "Commuting additions in the machine").
    #[arg(long)]
    pub no_commute_additions: bool,
    /// Make the machine offer every addition to a commuting counter at a
    /// state where one alone suffices (to check that reduction;
    /// docs/exploration.md, "One addition at a time").
    #[arg(long)]
    pub no_commute_alone: bool,
    /// Make the machine run doomed speculation on until its retirement
    /// fails instead of dropping it at once (to check that shortcut).
    #[arg(long)]
    pub no_doomed_pruning: bool,
    /// Make the oracle search every coherence orientation instead of adding
    /// the edges an axiom forces and reading total locations' final values
    /// off the least coherence (to check that shortcut).
    #[arg(long)]
    pub no_forced_coherence: bool,
    /// Make the oracle choose barrier phases after reads-from and try every
    /// set of threads stuck at a barrier, instead of planning constant
    /// count-less barriers from the paths alone (to check that shortcut).
    #[arg(long)]
    pub no_static_barriers: bool,
    /// Make the oracle's termination search try every combination in which
    /// a thread spins on a counter that only atomic additions of constants
    /// write, instead of reading the counter's final value off the paths
    /// (to check that shortcut).
    #[arg(long)]
    pub no_static_counters: bool,
    /// Make the oracle's termination search try every combination in which
    /// a thread waits on an mbarrier, instead of leaving out those whose
    /// waits no order of the barrier's operations satisfies (to check that
    /// shortcut).
    #[arg(long)]
    pub no_mbar_chains: bool,
    /// Make the oracle search every order of a counter's additions instead
    /// of one order per set of what its reads observe (to check that
    /// reduction).
    #[arg(long)]
    pub no_commute_counters: bool,
    /// Make the oracle try every interchangeable adder at each position of
    /// a counter's chain instead of the least one still unplaced (to check
    /// that reduction; docs/oracle.md, "Interchangeable adders").
    #[arg(long)]
    pub no_twin_adders: bool,
    /// Make the oracle bind reads in its fixed order only, instead of
    /// binding first, at each node, a read with at most one candidate left
    /// (to check that search order).
    #[arg(long)]
    pub no_forced_reads: bool,
    /// Make the oracle re-check every candidate of every read at each node
    /// and bind reads in its fixed order when none is forced, instead of
    /// keeping each read's candidates and binding the one with the fewest
    /// (to check that search order; docs/oracle.md, "Fewest candidates
    /// first").
    #[arg(long)]
    pub no_fewest_first: bool,
    /// Make the oracle re-check the reads not bound yet in its fixed order
    /// instead of those with the fewest kept candidates first (to check
    /// that scan order; docs/oracle.md, "Fewest kept candidates scanned
    /// first").
    #[arg(long)]
    pub no_fewest_scan: bool,
    /// Which columns final states are listed over: `all` (every register
    /// and location, herd's final states) or `condition` (only the
    /// registers and locations of the condition, the filter and herd's
    /// `locations [...]`; the oracle lets additions whose result nobody
    /// asks about commute), or `memory` (those and every location's final
    /// value: a kernel's buffers). docs/exploration.md, "Projection".
    #[arg(long, value_enum, default_value_t = Projection::default())]
    pub project: Projection,
    /// Stop both engines at the first final state that settles the
    /// condition (a witness of `exists`, a counter-example of `forall` or
    /// `~exists`). The verdict stands; the run is reported incomplete
    /// (exit 4): the states listed are only those found, and termination
    /// and races are not searched to the end.
    #[arg(long)]
    pub verdict_only: bool,
    /// Remember full machine states instead of 64-bit fingerprints (no collision risk, more memory).
    #[arg(long)]
    pub exact: bool,
    /// Stop an engine after this many states: distinct machine states for
    /// `op`, search nodes for `ax` (result: incomplete, exit 4).
    #[arg(long, value_name = "N")]
    pub max_states: Option<u64>,
    /// Stop a test after this many seconds, both engines together, printing
    /// included (result: incomplete, exit 4).
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub timeout: Option<f64>,
    /// Stop when resident memory exceeds this many MiB, keeping room to print
    /// the outcomes found (default: 80% of physical memory; result: incomplete, exit 4).
    #[arg(long, value_name = "MIB")]
    pub max_memory: Option<u64>,
    /// Do not check termination (deadlocks, spinning forever; on by default
    /// for programs with a loop, a barrier or a wait).
    #[arg(long)]
    pub no_termination: bool,
    /// Bound CAS retry loops like other loops instead of dropping their
    /// failed iterations (to check that reduction; see docs/loops.md).
    #[arg(long)]
    pub bound_retry_loops: bool,
}

impl EngineArgs {
    /// Worker threads to use.
    pub fn jobs(&self) -> usize {
        self.jobs
            .filter(|&j| j > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
    /// The run options these arguments select, for `tests` tests in the run.
    pub fn options(&self, tests: usize) -> RunOptions {
        let jobs = self.jobs();
        let max_memory = self
            .max_memory
            .map(|m| m << 20)
            .or_else(|| physical_memory().map(|b| b / 10 * 8));
        RunOptions {
            model: self.model,
            engine: self.engine,
            loop_bound: self.loop_bound,
            limits: Limits {
                max_states: self.max_states,
                timeout: self
                    .timeout
                    .filter(|t| *t > 0.0)
                    // Beyond `Duration` (or infinite): no limit.
                    .and_then(|t| Duration::try_from_secs_f64(t).ok()),
                max_memory,
            },
            por: !self.no_por,
            lazy_coherence: !self.eager_coherence,
            persistent: !self.no_persistent,
            spin_persistent: !self.no_spin_persistent,
            symmetry: !self.no_symmetry,
            symmetric_choices: !self.no_symmetric_choices,
            incremental_sc: !self.no_incremental_sc,
            commute_additions: !self.no_commute_additions,
            commute_alone: !self.no_commute_alone,
            prune_doomed: !self.no_doomed_pruning,
            forced_coherence: !self.no_forced_coherence,
            static_barriers: !self.no_static_barriers,
            static_counters: !self.no_static_counters,
            mbar_chains: !self.no_mbar_chains,
            commute_counters: !self.no_commute_counters,
            twin_adders: !self.no_twin_adders,
            forced_reads: !self.no_forced_reads,
            fewest_first: !self.no_fewest_first,
            fewest_scan: !self.no_fewest_scan,
            project: self.project,
            verdict_only: self.verdict_only,
            // The costlier format; a command that prints less says so.
            output_cost: crate::limits::OutputCost::default(),
            // Several tests: one worker per test; one test: the workers share it.
            jobs: if tests == 1 { jobs } else { 1 },
            exact: self.exact,
            progress: tests == 1,
            termination: !self.no_termination,
            retry_loops: !self.bound_retry_loops,
            barriers: self.barriers,
            fairness: self.fairness,
        }
    }
}

/// The most worker threads `--jobs` accepts. Each worker is an OS thread
/// with its own stack and its own part of the search: far more than any
/// machine's cores only costs memory and start-up time (a million workers
/// took minutes to start), so a larger number is refused rather than tried.
pub const MAX_JOBS: usize = 1024;

/// `--jobs N`: a number of workers from 0 (all cores) to [`MAX_JOBS`].
pub fn parse_jobs(text: &str) -> Result<usize, String> {
    let n: usize = text.trim().parse().map_err(|_| {
        format!("expected a number of workers from 0 to {MAX_JOBS}, found `{text}`")
    })?;
    if n > MAX_JOBS {
        return Err(format!(
            "expected a number of workers from 0 (all cores) to {MAX_JOBS}, found {n}"
        ));
    }
    Ok(n)
}

/// A number of seconds (`--timeout`): finite and not negative. `nan`, `inf`
/// and negative numbers are refused: each used to be read as "no limit" or
/// "stop at once" without a word.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    let s: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of seconds, found `{text}`"))?;
    if !s.is_finite() || s < 0.0 {
        return Err(format!(
            "expected a finite number of seconds, 0 or more, found `{text}`"
        ));
    }
    Ok(s)
}

/// Physical memory in bytes (Linux), if known.
pub(super) fn physical_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Every test under `paths` (files, or directories searched recursively),
/// admitted under `model`, and the worst exit status met on the way. A file
/// that fails is reported on stderr and skipped; the others still load.
pub fn load_all(paths: &[std::path::PathBuf], model: Model) -> (Vec<LitmusTest>, Exit) {
    let files = match litmus::collect_files(paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: cannot read a directory: {e}");
            return (Vec::new(), Exit::BadInput);
        }
    };
    let mut exit = Exit::Success;
    let mut tests = Vec::new();
    for f in files {
        match load(&f, model) {
            Ok(t) => tests.extend(t),
            Err(e) => exit = worst(exit, e),
        }
    }
    (tests, exit)
}

/// Warnings printed so far by [`load`] in this process, for `--deny-warnings`.
static WARNINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `--deny-warnings`: if [`load`] printed warnings, say so and return
/// [`Exit::BadInput`] (warnings are then errors); otherwise `exit`.
pub fn deny_warnings(deny: bool, exit: Exit) -> Exit {
    let n = WARNINGS.load(std::sync::atomic::Ordering::Relaxed);
    if !deny || n == 0 {
        return exit;
    }
    eprintln!(
        "error: {n} warning{} above, denied by --deny-warnings",
        if n == 1 { "" } else { "s" }
    );
    worst(exit, Exit::BadInput)
}

/// Parse one file and admit its tests under `model`; diagnostics go to
/// stderr (warnings too, counted for [`deny_warnings`]).
pub fn load(path: &Path, model: Model) -> Result<Vec<LitmusTest>, Exit> {
    // Kernels (`.ptx`, `.cu`) with the launch beside them (`ptxmc kernel`
    // also takes the launch as flags).
    let read = if crate::ptx::is_kernel_path(path) {
        crate::ptx::load_file(path, None, None).map(|t| vec![t])
    } else {
        litmus::parse_file(path)
    };
    admit(read, model)
}

/// Admit parsed tests under `model` ([`load`]'s second half).
pub fn admit(
    read: Result<Vec<LitmusTest>, LitmusError>,
    model: Model,
) -> Result<Vec<LitmusTest>, Exit> {
    let tests = read.map_err(|e| {
        eprint!("{}", e.rendered());
        Exit::BadInput
    })?;
    for t in &tests {
        if let Err(d) = model.admit(&t.program, &t.spans) {
            eprint!("{}", t.error(d).rendered());
            return Err(Exit::BadInput);
        }
        let typos = litmus::typos::warnings(t);
        for w in model
            .warnings(&t.program, &t.spans)
            .into_iter()
            .chain(typos)
        {
            WARNINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            eprint!("{}", t.error(w).rendered());
        }
    }
    Ok(tests)
}

/// Combine two exit statuses, keeping the more serious.
pub fn worst(a: Exit, b: Exit) -> Exit {
    fn rank(e: Exit) -> u8 {
        match e {
            Exit::Success => 0,
            Exit::CheckFailed => 1,
            Exit::Racy => 2,
            Exit::Hang => 3,
            Exit::Undefined => 4,
            Exit::Incomplete => 5,
            Exit::Disagreement => 6,
            Exit::BadInput => 7,
        }
    }
    if rank(a) >= rank(b) { a } else { b }
}

/// Size rayon's global pool once for this process.
pub fn init_pool(jobs: usize) {
    // Only the first call in a process can size the pool; later ones keep it.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build_global();
}

/// Load `path` and take its instance `instance` (1-based): what every command
/// that works on one test (`trace`, `explain`, `fix`, `step`) starts with.
pub fn load_instance(path: &Path, model: Model, instance: usize) -> Result<LitmusTest, Exit> {
    let mut tests = load(path, model)?;
    pick(&tests, instance)?;
    Ok(tests.swap_remove(instance - 1))
}

/// Instance `instance` (1-based) of a file's tests.
pub fn pick(tests: &[LitmusTest], instance: usize) -> Result<&LitmusTest, Exit> {
    tests.get(instance.wrapping_sub(1)).ok_or_else(|| {
        eprintln!(
            "error: expected an instance between 1 and {}, found {instance}",
            tests.len()
        );
        Exit::BadInput
    })
}

/// The outcome a one-test command targets: `--outcome TEXT` (a condition, or
/// a final-state line copied from `run`), or else the test's own condition
/// ([`crate::ir::Condition::target`]). Returns the proposition and its text.
pub fn target_outcome(t: &LitmusTest, text: Option<&str>) -> Result<(Prop, String), Exit> {
    match text {
        Some(text) => match cond::parse_outcome(&t.program, &t.spans, text) {
            Ok(w) => Ok((w, text.to_string())),
            Err(d) => {
                eprint!("{}", LitmusError::new("--outcome", text, d).rendered());
                Err(Exit::BadInput)
            }
        },
        None => {
            let p = &t.program;
            let prop = p.condition.target();
            let text = crate::report::herd::proposition(p, &prop);
            Ok((prop, text))
        }
    }
}

/// The program's termination as `ptxmc run` decides it (both engines), and
/// the undefined step it finds, worded, for the one-test commands (`trace`,
/// `step`), which must never let a program that can hang or reach undefined
/// behaviour look correct. `timeout`: at most this many seconds (a question
/// that runs out says termination was not checked).
pub fn termination(
    t: &LitmusTest,
    loop_bound: u32,
    max_states: u64,
    timeout: Option<f64>,
    barriers: Reading,
    fairness: Fairness,
) -> (TerminationNote, Option<crate::report::ub::UbReport>) {
    let limits = crate::explain::enumerate::Limits {
        loop_bound,
        barriers: barriers.for_program(&t.program),
        fairness,
        deadline: timeout
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .and_then(|d| std::time::Instant::now().checked_add(d)),
        ..crate::explain::enumerate::Limits::default()
    };
    let (note, ub) = TerminationNote::with_undefined(&t.program, &limits, max_states);
    (note, ub.map(|u| crate::report::ub::of(t, &u)))
}

/// The lines a one-test command prints about undefined behaviour: the
/// undefined step in `run`'s words with `hint`, what shows a run to it;
/// nothing when no execution reaches one.
pub fn undefined_lines(ub: Option<&crate::report::ub::UbReport>, hint: &str) -> String {
    match ub {
        Some(u) => format!(
            "{}\nThis program can reach undefined behaviour: {hint}.\n",
            crate::report::ub::line(u)
        ),
        None => String::new(),
    }
}

/// The lines a one-test command prints about termination: a hang in
/// `run`'s words with `hint`, what shows a run into it; or that termination
/// was not checked, and why (a limit, the loop bound), so that silence
/// always means "every execution terminates".
pub fn hang_lines(note: &TerminationNote, hint: &str) -> String {
    match note {
        TerminationNote::Hangs { kind, why, .. } => {
            format!("Hang: {kind} — {why}\nThis program can hang: {hint}.\n")
        }
        TerminationNote::NotChecked { why } => format!("Termination: not checked — {why}\n"),
        TerminationNote::Terminates => String::new(),
    }
}
