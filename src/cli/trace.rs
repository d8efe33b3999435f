//! `ptxmc trace`: a step-by-step run of the operational machine.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

use super::Exit;
use super::common::{load_instance, target_outcome};
use crate::model::Model;
use crate::op::Machine;
use crate::op::trace::TraceError;
use crate::report::trace::{self, NoRun};

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
    /// The test (for a mixedproxy template, its first instance unless `--instance` says otherwise).
    pub file: PathBuf,
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
    /// Replay these successor choices instead (as printed after a trace), e.g. `0,2,1`.
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub follow: Option<Vec<usize>>,
    /// Template row of a mixedproxy file (1-based).
    #[arg(long, default_value_t = 1)]
    pub instance: usize,
    /// Memory model.
    #[arg(long, value_enum, default_value_t = Model::default())]
    pub model: Model,
    /// How many times a loop may jump back.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub loop_bound: u32,
    /// Give up searching for a run after this many states.
    #[arg(long, default_value_t = 2_000_000, value_name = "N")]
    pub max_states: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TraceFormat,
}

/// Run `ptxmc trace`.
pub fn run(args: &TraceArgs) -> Exit {
    let t = match load_instance(&args.file, args.model, args.instance) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let t = &t;
    let p = &t.program;
    let m = match Machine::new(p, args.loop_bound) {
        Ok(m) => m,
        Err(e) => {
            eprintln!(
                "error: the test needs {} event slots; the machine holds at most {}",
                e.0,
                crate::rel::MAX_EVENTS
            );
            return Exit::Incomplete;
        }
    };
    if args.hang {
        return hang(args, &m, t);
    }
    let answer = |goal: &str, why: NoRun| -> Exit {
        match args.format {
            TraceFormat::Text => print!("{}", trace::no_run_text(goal, &why, &args.file)),
            TraceFormat::Json => println!(
                "{}",
                serde_json::to_string_pretty(&trace::json(
                    &m.program,
                    &m.columns,
                    &t.display_path(),
                    Some(goal),
                    Err(&why),
                ))
                .unwrap_or_default()
            ),
        }
        match why {
            NoRun::Forbidden => Exit::CheckFailed,
            NoRun::Incomplete(_) => Exit::Incomplete,
        }
    };
    // Replay the given choices, or find a shortest run to the outcome asked
    // for (by default the one the test's own condition asks about).
    let (choices, goal) = match &args.follow {
        Some(f) => (f.clone(), None),
        None => {
            let (want, goal) = match target_outcome(t, args.outcome.as_deref()) {
                Ok(w) => w,
                Err(e) => return e,
            };
            match m.shortest_run(&want, args.max_states) {
                Ok(c) => (c, Some(goal)),
                Err(TraceError::Unreachable) => return answer(&goal, NoRun::Forbidden),
                Err(TraceError::TooManyStates(n)) => {
                    return answer(
                        &goal,
                        NoRun::Incomplete(format!("the state limit ({n}) was reached")),
                    );
                }
                Err(e) => unreachable!("{e:?}"),
            }
        }
    };
    let run = match m.replay(&choices) {
        Ok(t) => t,
        Err(TraceError::BadChoice {
            step,
            choice,
            available,
        }) => {
            eprintln!("error: expected a choice below {available} at step {step}, found {choice}");
            return Exit::BadInput;
        }
        Err(e) => unreachable!("{e:?}"),
    };
    match args.format {
        TraceFormat::Text => print!(
            "{}",
            trace::text(&m.program, &m.columns, goal.as_deref(), &run, &args.file)
        ),
        TraceFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&trace::json(
                &m.program,
                &m.columns,
                &t.display_path(),
                goal.as_deref(),
                Ok(&run),
            ))
            .unwrap_or_default()
        ),
    }
    Exit::Success
}

/// `ptxmc trace --hang`.
fn hang(args: &TraceArgs, m: &Machine, t: &crate::litmus::LitmusTest) -> Exit {
    let p = &t.program;
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
    let lasso = match m.shortest_hang(args.max_states) {
        Ok(l) => l,
        Err(TraceError::NoHang { bound_hit: false }) => {
            return none(
                format!(
                    "No run of the machine hangs: every execution of {} terminates.",
                    p.name
                ),
                Exit::CheckFailed,
            );
        }
        Err(TraceError::NoHang { bound_hit: true }) => {
            return none(
                format!(
                    "No hang found, but a loop reached the loop bound ({}): longer executions were not looked at.",
                    args.loop_bound
                ),
                Exit::CheckFailed,
            );
        }
        Err(TraceError::TooManyStates(n)) => {
            return none(
                format!("Incomplete: no hang found within {n} states."),
                Exit::Incomplete,
            );
        }
        Err(e) => unreachable!("{e:?}"),
    };
    let stem = match m.replay(&lasso.choices) {
        Ok(s) => s,
        Err(e) => unreachable!("a found run replays: {e:?}"),
    };
    match args.format {
        TraceFormat::Text => print!(
            "{}",
            crate::report::trace::hang_text(p, &stem, &lasso, &args.file)
        ),
        TraceFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
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
            }))
            .unwrap_or_default()
        ),
    }
    Exit::Hang
}
