//! `ptxmc trace`: a step-by-step run of the operational machine.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

use super::Exit;
use super::common::load;
use crate::litmus::{LitmusError, cond};
use crate::model::Model;
use crate::op::Machine;
use crate::op::trace::TraceError;

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
    /// The final state to reach, e.g. `P1:r0=1 /\ P1:r1=0` (a shortest run is shown).
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
    let tests = match load(&args.file, args.model) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let Some(t) = tests.get(args.instance.saturating_sub(1)) else {
        eprintln!(
            "error: expected an instance between 1 and {}, found {}",
            tests.len(),
            args.instance
        );
        return Exit::BadInput;
    };
    let p = &t.program;
    let m = match Machine::new(p, args.loop_bound) {
        Ok(m) => m,
        Err(e) => {
            eprintln!(
                "error: the test needs {} event slots; the machine holds at most 128",
                e.0
            );
            return Exit::Incomplete;
        }
    };
    if args.hang {
        return hang(args, &m, t);
    }
    let (choices, goal) = match (&args.outcome, &args.follow) {
        (Some(text), _) => {
            let want = match cond::parse_outcome(p, text) {
                Ok(w) => w,
                Err(d) => {
                    eprint!("{}", LitmusError::new("--outcome", text, d).rendered());
                    return Exit::BadInput;
                }
            };
            match m.shortest_run(&want, args.max_states) {
                Ok(c) => (c, Some(text.clone())),
                Err(TraceError::Unreachable) => {
                    println!(
                        "No run of the machine ends in {text}: the model forbids this outcome."
                    );
                    return Exit::CheckFailed;
                }
                Err(TraceError::TooManyStates(n)) => {
                    println!("Incomplete: no run found within {n} states.");
                    return Exit::Incomplete;
                }
                Err(e) => unreachable!("{e:?}"),
            }
        }
        (None, Some(f)) => (f.clone(), None),
        (None, None) => {
            eprintln!(
                "error: expected `--outcome OUTCOME`, `--follow CHOICES` or `--hang`, found none"
            );
            return Exit::BadInput;
        }
    };
    let trace = match m.replay(&choices) {
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
            crate::report::trace::text(&m.program, &m.columns, goal.as_deref(), &trace, &args.file)
        ),
        TraceFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "name": p.name,
                "file": t.display_path(),
                "outcome": goal,
                "steps": trace.steps,
                "choices": trace.choices,
                "final_state": crate::report::trace::final_states(&m.program, &m.columns, &trace),
            }))
            .unwrap_or_default()
        ),
    }
    Exit::Success
}

/// `ptxmc trace --hang`.
fn hang(args: &TraceArgs, m: &Machine, t: &crate::litmus::LitmusTest) -> Exit {
    let p = &t.program;
    let lasso = match m.shortest_hang(args.max_states) {
        Ok(l) => l,
        Err(TraceError::NoHang { bound_hit: false }) => {
            println!(
                "No run of the machine hangs: every execution of {} terminates.",
                p.name
            );
            return Exit::CheckFailed;
        }
        Err(TraceError::NoHang { bound_hit: true }) => {
            println!(
                "No hang found, but a loop reached the loop bound ({}): longer executions were not looked at.",
                args.loop_bound
            );
            return Exit::CheckFailed;
        }
        Err(TraceError::TooManyStates(n)) => {
            println!("Incomplete: no hang found within {n} states.");
            return Exit::Incomplete;
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
