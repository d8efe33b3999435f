//! `ptxmc trace`: a step-by-step run of the operational machine.

use clap::{Args, ValueEnum};

use super::Exit;
use super::common::{TestArgs, hang_lines, target_outcome, termination, undefined_lines, worst};
use crate::limits::{Budget, Limits};
use crate::op::trace::TraceError;
use crate::report::trace::{self, NoRun};
use crate::step::{self, GoTo, Session};

/// Trace formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TraceFormat {
    /// Numbered steps with their effects.
    Text,
    /// The same as data.
    Json,
}

/// Arguments of `ptxmc trace`.
#[derive(Args, Debug)]
pub struct TraceArgs {
    /// The test, its instance, model and loop bound.
    #[command(flatten)]
    pub test: TestArgs,
    /// The final state to reach, e.g. `P1:r0=1 /\ P1:r1=0` or a state line copied from
    /// `ptxmc run` (`1:r0=1; 1:r1=0;`); a shortest run is shown. Default: the outcome
    /// the test's own condition asks about.
    #[arg(long, conflicts_with = "follow")]
    pub outcome: Option<String>,
    /// Show a shortest run into a hang instead: the steps to a deadlock or
    /// to a loop that spins forever, what repeats, and what every stuck
    /// thread waits for (exit status 1 if the program cannot hang).
    #[arg(long, conflicts_with_all = ["outcome", "follow"])]
    pub hang: bool,
    /// Show a shortest run to undefined behaviour instead: the steps up to
    /// and including the undefined one, named with the ISA's sentence (exit
    /// status 6; 1 if no run reaches undefined behaviour).
    #[arg(long, conflicts_with_all = ["outcome", "follow", "hang", "every_step"])]
    pub undefined: bool,
    /// Show race N of `ptxmc run`'s `Races` list instead: the two accesses,
    /// why they race, a consistent execution (the oracle's) in which
    /// neither precedes the other in causality order, and a shortest run of
    /// the machine that shows it too, with its `--follow` line (exit status
    /// 0; 1 if the test has fewer races; 3 if no run of the machine shows
    /// it; 4 if a search was cut short).
    #[arg(long, value_name = "N", conflicts_with_all = ["outcome", "follow", "hang", "undefined", "every_step"])]
    pub race: Option<usize>,
    /// Replay these successor choices instead (as printed after a trace), e.g. `0,2,1`.
    #[arg(long, value_delimiter = ',', num_args = 0..)]
    pub follow: Option<Vec<usize>>,
    /// Offer every thread's transitions at every state, as `ptxmc step` does
    /// (the machine's reduction off): choices are counted that way.
    #[arg(long, conflicts_with = "hang")]
    pub every_step: bool,
    /// Give up searching for a run (or a hang) after this many states
    /// (result: incomplete, exit 4).
    #[arg(long, default_value_t = 2_000_000, value_name = "N")]
    pub max_states: u64,
    /// Give up searching for a run (or a hang) after this many seconds
    /// (default: no limit; result: incomplete, exit 4).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Give up when resident memory exceeds this many MiB (default: 80% of
    /// physical memory; result: incomplete, exit 4).
    #[arg(long, value_name = "MIB")]
    pub max_memory: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TraceFormat,
    /// Run the program with each tensor or multicast copy's bytes completing
    /// on its mbarrier element by element, or all at once (docs/async.md 8,
    /// "Completion granularity"). Default: element by element, and `--hang`
    /// looks at both, in that order; a hang of the second says so in its
    /// replay line.
    #[arg(long, value_enum, value_name = "HOW")]
    pub copy_completion: Option<CopyCompletion>,
}

/// How a copy's bytes complete (`ir::copies::Granularity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CopyCompletion {
    /// Each element copy completes its own bytes.
    Element,
    /// A copy's bytes complete in one complete-tx.
    Whole,
}

impl From<CopyCompletion> for crate::ir::copies::Granularity {
    fn from(c: CopyCompletion) -> Self {
        match c {
            CopyCompletion::Element => crate::ir::copies::Granularity::Element,
            CopyCompletion::Whole => crate::ir::copies::Granularity::Whole,
        }
    }
}

/// Run `ptxmc trace`.
pub fn run(args: &TraceArgs) -> Exit {
    let mut t = match args.test.load() {
        Ok(t) => t,
        Err(e) => return e,
    };
    if let Some(c) = args.copy_completion {
        t.program.granularity = c.into();
    }
    let t = &t;
    let limits = limits(args.max_states, args.timeout, args.max_memory);
    if let Some(n) = args.race {
        return race(args, t, n, limits);
    }
    let options = step::Options {
        loop_bound: args.test.loop_bound,
        barriers: args.test.barriers.for_program(&t.program),
        fairness: args.test.fairness,
        every_step: args.every_step,
        limits,
    };
    if args.hang {
        return hang_in_variants(args, t, options, &limits);
    }
    // One stepping core: `trace` replays and searches through a session,
    // whose machine is as wide as the program's slots need.
    let done = match run_at::<u128>(args, t, options) {
        Err(too) => crate::with_width!(
            too.needed,
            S => run_at::<S>(args, t, options),
            Err(too)
        ),
        done => done,
    };
    done.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        Exit::Incomplete
    })
}

/// [`run`] with event sets of type `S`; `Err` if the program has more event
/// slots than `S` holds.
fn run_at<S: crate::rel::Bits>(
    args: &TraceArgs,
    t: &crate::litmus::LitmusTest,
    options: step::Options,
) -> Result<Exit, crate::op::TooManySlots> {
    let variants = match crate::ir::elect::Variants::of(&t.program) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(Exit::Incomplete);
        }
    };
    let mut session = Session::<S>::build(&variants, options)?;
    if args.undefined {
        return Ok(undefined(args, &mut session, t));
    }
    let m = session.machine();
    // A run to an outcome of a program that can hang must not read as the
    // whole story: the hang is said after it, and the exit status is `run`'s.
    // Likewise undefined behaviour, said before the hang.
    let (note, ub) = termination(
        t,
        args.test.loop_bound,
        args.max_states,
        args.timeout,
        args.test.barriers,
        args.test.fairness,
    );
    let hint = format!(
        "`ptxmc trace {} --hang` shows a run into it",
        t.display_path()
    );
    let ub_hint = format!(
        "`ptxmc trace {} --undefined` shows a run to it",
        t.display_path()
    );
    let notes = format!(
        "{}{}",
        undefined_lines(ub.as_ref(), &ub_hint),
        hang_lines(&note, &hint)
    );
    let with_note = |mut v: serde_json::Value| {
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "termination".into(),
                serde_json::to_value(&note).unwrap_or_default(),
            );
            o.insert(
                "undefined".into(),
                serde_json::to_value(&ub).unwrap_or_default(),
            );
        }
        serde_json::to_string_pretty(&v).unwrap_or_default()
    };
    let hang_exit = |e: Exit| {
        let e = if note.hangs() {
            worst(e, Exit::Hang)
        } else {
            e
        };
        if ub.is_some() {
            worst(e, Exit::Undefined)
        } else {
            e
        }
    };
    let answer = |goal: &str, why: NoRun| -> Exit {
        match args.format {
            TraceFormat::Text => print!(
                "{}{}",
                trace::no_run_text(goal, &why, &args.test.file),
                notes
            ),
            TraceFormat::Json => println!(
                "{}",
                with_note(trace::json(
                    &m.program,
                    &m.columns,
                    &t.display_path(),
                    Some(goal),
                    Err(&why),
                ))
            ),
        }
        hang_exit(match why {
            NoRun::Forbidden => Exit::CheckFailed,
            NoRun::Incomplete(_) => Exit::Incomplete,
        })
    };
    // Replay the given choices, or find a shortest run to the outcome asked
    // for (by default the one the test's own condition asks about).
    let (choices, goal) = match &args.follow {
        Some(f) => (f.clone(), None),
        None => {
            let (want, goal) = match target_outcome(t, args.outcome.as_deref()) {
                Ok(w) => w,
                Err(e) => return Ok(e),
            };
            match session.go_to(&want) {
                GoTo::Path(c) => (c, Some(goal)),
                GoTo::Unreachable { .. } => return Ok(answer(&goal, NoRun::Forbidden)),
                GoTo::Incomplete(e) => return Ok(answer(&goal, NoRun::Incomplete(e.to_string()))),
            }
        }
    };
    if let Err(TraceError::BadChoice {
        step,
        choice,
        available,
    }) = session.replay(&choices)
    {
        eprintln!("error: expected a choice below {available} at step {step}, found {choice}");
        return Ok(Exit::BadInput);
    }
    let run = session.trace();
    let m = session.machine();
    // What the outcome the run reaches misses, in `explain`'s words: the
    // outcome asked for, or (replaying choices) the final state reached
    // when it is one the test's condition asks about.
    let target = match (&args.follow, &run.final_states) {
        (None, _) => target_outcome(t, args.outcome.as_deref()).ok().map(|w| w.0),
        (Some(_), Some(states)) => {
            let asked = t.program.condition.target();
            states
                .iter()
                .find(|s| asked.eval(&|term: &crate::ir::Term| m.columns.term(s, term)))
                .map(|s| crate::explain::exactly(&m.columns, s))
        }
        (Some(_), None) => None,
    };
    let missing = target
        .map(|want| crate::explain::missing_orderings(t, &want, &explain_limits(args, &t.program)));
    match args.format {
        TraceFormat::Text => {
            let mut text = trace::text(
                &m.program,
                &m.columns,
                goal.as_deref(),
                &run,
                &args.test.file,
            );
            if args.every_step {
                // The replay command must count choices the same way.
                text.truncate(text.trim_end().len());
                text.push_str(" --every-step\n");
            }
            let said = missing
                .as_ref()
                .map(crate::report::explain::missing_answer_text)
                .unwrap_or_default();
            print!("{text}{said}{notes}")
        }
        TraceFormat::Json => {
            let mut v = trace::json(
                &m.program,
                &m.columns,
                &t.display_path(),
                goal.as_deref(),
                Ok(&run),
            );
            if let Some(o) = v.as_object_mut() {
                o.insert(
                    "missing".into(),
                    serde_json::to_value(&missing).unwrap_or_default(),
                );
            }
            println!("{}", with_note(v))
        }
    }
    Ok(hang_exit(Exit::Success))
}

/// `ptxmc trace --hang` on the program's variants in order (`ir::copies`:
/// copies completing element by element, then all at once, unless
/// `--copy-completion` picks one): the first variant that hangs is shown,
/// as `engine::run` keeps the first variant's hang.
fn hang_in_variants(
    args: &TraceArgs,
    t: &crate::litmus::LitmusTest,
    options: step::Options,
    limits: &Limits,
) -> Exit {
    let grains: Vec<crate::ir::copies::Granularity> = match args.copy_completion {
        Some(c) => vec![c.into()],
        None => crate::ir::copies::choices(&t.program).to_vec(),
    };
    let mut bound_hit = false;
    for (k, &grain) in grains.iter().enumerate() {
        let mut v = t.clone();
        v.program.granularity = grain;
        let last = k + 1 == grains.len();
        let done = match hang_at::<u128>(args, &v, options, limits, last, bound_hit) {
            Err(too) => crate::with_width!(
                too.needed,
                S => hang_at::<S>(args, &v, options, limits, last, bound_hit),
                Err(too)
            ),
            done => done,
        };
        match done {
            Ok(Ok(exit)) => return exit,
            Ok(Err(hit)) => bound_hit |= hit,
            Err(e) => {
                eprintln!("error: {e}");
                return Exit::Incomplete;
            }
        }
    }
    unreachable!("the last variant always answers")
}

/// [`hang`] on one variant at width `S`: `Ok(Err(bound_hit))` when it has
/// no hang and is not the `last` variant (nothing printed).
fn hang_at<S: crate::rel::Bits>(
    args: &TraceArgs,
    t: &crate::litmus::LitmusTest,
    options: step::Options,
    limits: &Limits,
    last: bool,
    bound_hit: bool,
) -> Result<Result<Exit, bool>, crate::op::TooManySlots> {
    let variants = match crate::ir::elect::Variants::of(&t.program) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(Ok(Exit::Incomplete));
        }
    };
    let mut session = Session::<S>::build(&variants, options)?;
    Ok(hang(args, &mut session, t, limits, last, bound_hit))
}

/// `ptxmc trace --hang` on one variant; `Err(bound_hit)` when it has no
/// hang and is not the `last` (then nothing is printed).
fn hang<S: crate::rel::Bits>(
    args: &TraceArgs,
    session: &mut Session<'_, S>,
    t: &crate::litmus::LitmusTest,
    limits: &Limits,
    last: bool,
    earlier_bound_hit: bool,
) -> Result<Exit, bool> {
    let p = &t.program;
    let whole = p.granularity == crate::ir::copies::Granularity::Whole;
    let none = |why: String, exit: Exit| -> Exit {
        match args.format {
            TraceFormat::Text => println!("{why}"),
            TraceFormat::Json => println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "name": p.name,
                    "file": t.display_path(),
                    "hang": serde_json::Value::Null,
                    "why": why,
                }))
                .unwrap_or_default()
            ),
        }
        exit
    };
    let lasso = match session.shortest_hang(&Budget::new(*limits)) {
        Ok(l) => l,
        Err(TraceError::NoHang { bound_hit }) if !last => return Err(bound_hit),
        Err(TraceError::NoHang { bound_hit: false }) if !earlier_bound_hit => {
            return Ok(none(
                format!(
                    "No run of the machine hangs: every execution of {} terminates.",
                    p.name
                ),
                Exit::CheckFailed,
            ));
        }
        Err(TraceError::NoHang { .. }) => {
            return Ok(none(
                format!(
                    "No hang found, but a loop reached the loop bound ({}): longer executions were not looked at.",
                    args.test.loop_bound
                ),
                Exit::CheckFailed,
            ));
        }
        Err(TraceError::Incomplete(why)) => {
            return Ok(none(
                format!("Incomplete: no hang found before {why}."),
                Exit::Incomplete,
            ));
        }
        Err(e) => unreachable!("{e:?}"),
    };
    if let Err(e) = session.replay(&lasso.choices) {
        unreachable!("a found run replays: {e:?}");
    }
    let stem = session.trace();
    match args.format {
        TraceFormat::Text => {
            let mut text = crate::report::trace::hang_text(p, &stem, &lasso, &args.test.file);
            if whole {
                // The replay must run the same variant.
                text.truncate(text.trim_end().len());
                text.push_str(" --copy-completion whole\n");
                text.push_str(&format!(
                    "This run has {} (the GPU may complete a copy's bytes in any chunks: docs/async.md 8).\n",
                    p.granularity.words()
                ));
            }
            print!("{text}")
        }
        TraceFormat::Json => {
            let mut v = serde_json::json!({
                "name": p.name,
                "file": t.display_path(),
                "hang": {
                    "kind": lasso.hang.kind().as_str(),
                    "why": crate::report::hang::sentence(p, &lasso.hang),
                    "stuck": lasso.hang.stuck,
                },
                "steps": stem.steps,
                "choices": lasso.choices,
                "cycle": lasso.cycle,
            });
            if whole {
                // Replaying `choices` needs `--copy-completion whole`.
                v["copy_completion"] = "whole".into();
            }
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
    }
    Ok(Exit::Hang)
}

/// `ptxmc trace --undefined`.
fn undefined<S: crate::rel::Bits>(
    args: &TraceArgs,
    session: &mut Session<'_, S>,
    t: &crate::litmus::LitmusTest,
) -> Exit {
    let p = &t.program;
    let none = |why: String, exit: Exit| -> Exit {
        match args.format {
            TraceFormat::Text => println!("{why}"),
            TraceFormat::Json => println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "name": p.name,
                    "file": t.display_path(),
                    "undefined": serde_json::Value::Null,
                    "why": why,
                }))
                .unwrap_or_default()
            ),
        }
        exit
    };
    let choices = match session.go_to_undefined() {
        GoTo::Path(c) => c,
        GoTo::Unreachable { .. } => {
            return none(
                format!(
                    "No run of the machine reaches undefined behaviour: every execution of {} is defined (within the loop bound).",
                    p.name
                ),
                Exit::CheckFailed,
            );
        }
        GoTo::Incomplete(e) => {
            return none(
                format!("Incomplete: no undefined step found before {e}."),
                Exit::Incomplete,
            );
        }
    };
    if let Err(e) = session.replay(&choices) {
        unreachable!("a found run replays: {e:?}");
    }
    let u = session
        .undefined()
        .expect("the run found ends at an undefined step");
    let ub = crate::report::ub::of(t, &u);
    let run = session.trace();
    match args.format {
        TraceFormat::Text => print!(
            "{}",
            crate::report::trace::undefined_text(&p.name, &run, &ub, &args.test.file)
        ),
        TraceFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "name": p.name,
                "file": t.display_path(),
                "undefined": ub,
                "steps": run.steps,
                "choices": run.choices,
            }))
            .unwrap_or_default()
        ),
    }
    Exit::Undefined
}

/// The limits of the missing-orderings analysis after a run: the trace's
/// loop bound and barrier reading, and its timeout (10 s when none is
/// given: the summary must not hold a trace up).
fn explain_limits(args: &TraceArgs, p: &crate::ir::Program) -> crate::explain::enumerate::Limits {
    let secs = args.timeout.filter(|s| *s > 0.0).unwrap_or(10.0);
    crate::explain::enumerate::Limits {
        loop_bound: args.test.loop_bound,
        barriers: args.test.barriers.for_program(p),
        deadline: std::time::Duration::try_from_secs_f64(secs)
            .ok()
            .and_then(|d| std::time::Instant::now().checked_add(d)),
        ..crate::explain::enumerate::Limits::default()
    }
}

/// The limits of a single-test command's searches: `max_states`, the
/// timeout (none if absent, zero, negative or beyond the clock) and the
/// memory ceiling in MiB (default: 80% of physical memory), as `run` reads them.
pub(super) fn limits(max_states: u64, timeout: Option<f64>, max_memory: Option<u64>) -> Limits {
    Limits {
        max_states: Some(max_states),
        timeout: timeout
            .filter(|t| *t > 0.0)
            .and_then(|t| std::time::Duration::try_from_secs_f64(t).ok()),
        max_memory: max_memory
            .map(|m| m << 20)
            .or_else(|| super::common::physical_memory().map(|b| b / 10 * 8)),
    }
}

/// `trace --race N`: the oracle's races of the test (as `run` finds them),
/// and the execution of race N.
fn race(args: &TraceArgs, t: &crate::litmus::LitmusTest, n: usize, limits: Limits) -> Exit {
    let opts = crate::engine::RunOptions {
        model: args.test.model,
        engine: crate::engine::EngineChoice::Ax,
        loop_bound: args.test.loop_bound,
        barriers: args.test.barriers,
        fairness: args.test.fairness,
        limits,
        ..Default::default()
    };
    let result = crate::engine::run(&t.program, &opts);
    let check = &result.races;
    let total = check.found.len();
    let found = n.checked_sub(1).and_then(|i| check.found.get(i));
    let report = crate::report::races::of(t, check);
    let Some(f) = found else {
        let listed = match total {
            0 => "no race was found".to_string(),
            1 => "it has 1 race".to_string(),
            k => format!("it has {k} races"),
        };
        println!("No race {n} in {}: {listed}.", t.display_path());
        if let Some(why) = &report.why {
            println!("Races: {} — {why}", report.status);
            if report.status == "incomplete" {
                return Exit::Incomplete;
            }
        }
        return Exit::CheckFailed;
    };
    // The second implementation: the machine must reach the race too.
    let shown = machine_race(args, t, &f.race, limits);
    let exit = match &shown {
        MachineRace::Shown { .. } => Exit::Success,
        MachineRace::NotShown => Exit::Disagreement,
        MachineRace::Incomplete(_) => Exit::Incomplete,
    };
    match args.format {
        TraceFormat::Text => {
            print!("{}", crate::report::races::trace_text(t, f, n, total));
            match &shown {
                MachineRace::Shown { text, .. } => print!("{text}"),
                MachineRace::NotShown => println!(
                    "The machine finds no run in which they race: the engines disagree (please report it)."
                ),
                MachineRace::Incomplete(why) => {
                    println!("The machine's search for a run in which they race stopped: {why}.")
                }
            }
            if let Some(why) = &report.why {
                println!("Races: {} — {why}", report.status);
            }
        }
        TraceFormat::Json => {
            let machine = match &shown {
                MachineRace::Shown {
                    steps,
                    choices,
                    marks,
                    copy_completion_whole,
                    ..
                } => serde_json::json!({
                    "shown": true,
                    "steps": steps,
                    "choices": choices,
                    "race_steps": [marks.0, marks.1],
                    "copy_completion": if *copy_completion_whole { "whole" } else { "element" },
                }),
                MachineRace::NotShown => serde_json::json!({
                    "shown": false,
                    "why": "no run of the machine shows the race: the engines disagree",
                }),
                MachineRace::Incomplete(why) => serde_json::json!({
                    "shown": serde_json::Value::Null,
                    "why": why,
                }),
            };
            let v = serde_json::json!({
                "name": t.program.name,
                "file": t.display_path(),
                "race": crate::report::races::race(t, f, n),
                "execution": crate::report::races::trace_text(t, f, n, total),
                "machine": machine,
                "races_status": report.status,
                "races_incomplete_reason": report.why,
            });
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
    }
    exit
}

/// What the machine says about a race the oracle found.
enum MachineRace {
    /// A run that shows it (`step::race`).
    Shown {
        /// The run in `trace`'s words, with the check and the replay line.
        text: String,
        /// Its steps.
        steps: Vec<crate::op::trace::TraceStep>,
        /// Its choices (what `--follow` replays).
        choices: Vec<usize>,
        /// The steps that retire the first and the second side's access.
        marks: (usize, usize),
        /// The run needs `--copy-completion whole`.
        copy_completion_whole: bool,
    },
    /// No run of the machine shows it.
    NotShown,
    /// A limit stopped the search (or the machine could not be built).
    Incomplete(String),
}

/// A shortest run of the machine that shows `race`, in each variant of copy
/// completion in turn (`ir::copies`; as `engine::run` unites them).
fn machine_race(
    args: &TraceArgs,
    t: &crate::litmus::LitmusTest,
    race: &crate::ax::race::Race,
    limits: Limits,
) -> MachineRace {
    let options = step::Options {
        loop_bound: args.test.loop_bound,
        barriers: args.test.barriers.for_program(&t.program),
        fairness: args.test.fairness,
        every_step: false,
        limits,
    };
    let grains: Vec<crate::ir::copies::Granularity> = match args.copy_completion {
        Some(c) => vec![c.into()],
        None => crate::ir::copies::choices(&t.program).to_vec(),
    };
    for grain in grains {
        let mut v = t.clone();
        v.program.granularity = grain;
        let done = match machine_race_at::<u128>(args, &v, race, options) {
            Err(too) => crate::with_width!(
                too.needed,
                S => machine_race_at::<S>(args, &v, race, options),
                Err(too)
            ),
            done => done,
        };
        match done {
            Ok(MachineRace::NotShown) => continue,
            Ok(answer) => return answer,
            Err(e) => return MachineRace::Incomplete(e.to_string()),
        }
    }
    MachineRace::NotShown
}

/// [`machine_race`] on one variant at width `S`.
fn machine_race_at<S: crate::rel::Bits>(
    args: &TraceArgs,
    t: &crate::litmus::LitmusTest,
    race: &crate::ax::race::Race,
    options: step::Options,
) -> Result<MachineRace, crate::op::TooManySlots> {
    let variants = match crate::ir::elect::Variants::of(&t.program) {
        Ok(v) => v,
        Err(e) => return Ok(MachineRace::Incomplete(e.to_string())),
    };
    let mut session = Session::<S>::build(&variants, options)?;
    let choices = match session.go_to_race(race) {
        Ok(Some(c)) => c,
        Ok(None) => return Ok(MachineRace::NotShown),
        Err(e) => return Ok(MachineRace::Incomplete(e.to_string())),
    };
    if let Err(e) = session.replay(&choices) {
        unreachable!("a found run replays: {e:?}");
    }
    let shown = session
        .shows_race(race)
        .expect("the run found shows the race");
    let marks = (shown.first_step, shown.second_step);
    let whole = t.program.granularity == crate::ir::copies::Granularity::Whole;
    let mut extra = String::new();
    if args.test.loop_bound != step::Options::default().loop_bound {
        extra.push_str(&format!(" --loop-bound {}", args.test.loop_bound));
    }
    if whole {
        extra.push_str(" --copy-completion whole");
    }
    let run = session.trace();
    let m = session.machine();
    let text = trace::race_run_text(&m.program, &m.columns, &run, marks, &args.test.file, &extra);
    Ok(MachineRace::Shown {
        text,
        steps: run.steps,
        choices: run.choices,
        marks,
        copy_completion_whole: whole,
    })
}
