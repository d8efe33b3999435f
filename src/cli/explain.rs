//! `ptxmc explain`: why the model allows or forbids an outcome, by the
//! axioms and by the machine, as text, JSON or pictures.

use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::Exit;
use super::common::{TestArgs, target_outcome};
use crate::explain::axiomatic::{Caps, Execution};
use crate::explain::enumerate::Limits;
use crate::explain::{Explanation, explain_outcome, pictures};

/// Explanation formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    /// Both explanations in words.
    Text,
    /// The same as data.
    Json,
    /// Graphviz DOT: the witness, or one picture per group of rejected candidates.
    Dot,
    /// SVG, laid out in-process (no external program).
    Svg,
}

/// Arguments of `ptxmc explain`.
#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The test, its instance, model and loop bound.
    #[command(flatten)]
    pub test: TestArgs,
    /// The outcome to explain, e.g. `P1:r0=1 /\ P1:r1=0` (default: the test's
    /// condition; for a `forall` test, its negation).
    #[arg(long)]
    pub outcome: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ExplainFormat,
    /// Write every picture (`--format dot` or `svg`) into this directory
    /// instead of printing the first one.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// How many groups of rejected candidates to list.
    #[arg(long, default_value_t = Caps::default().groups, value_name = "N")]
    pub groups: usize,
    /// Stop after this many candidate executions (result: incomplete, exit 4).
    #[arg(long, default_value_t = 1_000_000, value_name = "N")]
    pub max_candidates: u64,
    /// Stop the machine's search after this many states (result: incomplete, exit 4).
    #[arg(long, default_value_t = 2_000_000, value_name = "N")]
    pub max_states: u64,
    /// Stop after this many seconds (result: incomplete, exit 4).
    #[arg(long, value_name = "SECS", value_parser = super::common::parse_seconds)]
    pub timeout: Option<f64>,
}

/// Run `ptxmc explain`.
pub fn run(args: &ExplainArgs) -> Exit {
    let t = match args.test.load() {
        Ok(t) => t,
        Err(e) => return e,
    };
    let t = &t;
    let want = match target_outcome(t, args.outcome.as_deref()) {
        Ok((w, _)) => w,
        Err(e) => return e,
    };
    let limits = Limits {
        loop_bound: args.test.loop_bound,
        max_candidates: args.max_candidates,
        barriers: args.test.barriers.for_program(&t.program),
        fairness: args.test.fairness,
        deadline: args
            .timeout
            .filter(|s| *s > 0.0)
            .map(|s| Instant::now() + Duration::from_secs_f64(s)),
    };
    let caps = Caps {
        groups: args.groups,
        ..Caps::default()
    };
    let x = explain_outcome(t, &t.display_path(), &want, &limits, caps, args.max_states);
    // A racy program must not read as explained and correct: its races are
    // stated, as `run` lists them (docs/races.md), in text and JSON.
    let races = match args.format {
        ExplainFormat::Text | ExplainFormat::Json => Some(races(t, &limits, args.max_states)),
        _ => None,
    };
    if let Err(e) = print(&x, args, races.as_ref()) {
        eprintln!("error: cannot write the pictures: {e}");
        return Exit::BadInput;
    }
    if let (ExplainFormat::Text, Some(r)) = (args.format, &races) {
        print!("{}", race_lines(t, r));
    }
    if x.disagreement() {
        Exit::Disagreement
    } else if x.incomplete() {
        Exit::Incomplete
    } else if x.undefined.is_some() {
        // As `ptxmc run`: undefined behaviour is the more serious verdict.
        Exit::Undefined
    } else if x.termination.hangs() {
        // As `ptxmc run`: a program that can hang is never a success.
        Exit::Hang
    } else {
        Exit::Success
    }
}

fn print(
    x: &Explanation,
    args: &ExplainArgs,
    races: Option<&crate::report::races::RacesReport>,
) -> std::io::Result<()> {
    match args.format {
        ExplainFormat::Text => print!("{}", crate::report::explain::text(x)),
        ExplainFormat::Json => {
            // `run`'s keys for races (a list, empty when race-free), and the
            // missing orderings at the top as `trace` gives them.
            let mut v = serde_json::to_value(x).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert(
                    "missing".into(),
                    serde_json::to_value(crate::explain::missing_of(x)).unwrap_or_default(),
                );
                if let Some(r) = races {
                    o.insert("races".into(), serde_json::json!(r.races));
                    o.insert("races_status".into(), serde_json::json!(r.status));
                    o.insert("races_incomplete_reason".into(), serde_json::json!(r.why));
                }
            }
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
        ExplainFormat::Dot | ExplainFormat::Svg => {
            let render = |title: &str, e: &Execution| {
                let dot = crate::report::dot::execution(title, e);
                match args.format {
                    ExplainFormat::Svg => crate::report::svg::render(title, e),
                    _ => dot,
                }
            };
            let pics = pictures(x);
            match &args.output {
                Some(dir) => {
                    std::fs::create_dir_all(dir)?;
                    let ext = if args.format == ExplainFormat::Svg {
                        "svg"
                    } else {
                        "dot"
                    };
                    for (title, e) in &pics {
                        let name = crate::report::dot::file_name(title);
                        std::fs::write(dir.join(format!("{name}.{ext}")), render(title, e))?;
                    }
                }
                None => {
                    if let Some((title, e)) = pics.first() {
                        print!("{}", render(title, e));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The test's races as `run` finds them (the oracle alone, under the same
/// limits).
fn races(
    t: &crate::litmus::LitmusTest,
    limits: &Limits,
    max_states: u64,
) -> crate::report::races::RacesReport {
    let opts = crate::engine::RunOptions {
        engine: crate::engine::EngineChoice::Ax,
        loop_bound: limits.loop_bound,
        barriers: limits.barriers,
        limits: crate::limits::Limits {
            max_states: Some(max_states),
            timeout: limits
                .deadline
                .map(|d| d.saturating_duration_since(Instant::now())),
            max_memory: None,
        },
        ..Default::default()
    };
    let r = crate::engine::run(&t.program, &opts);
    crate::report::races::of(t, &r.races)
}

/// `run`'s `Races` section for the test, with where to see one; nothing for
/// a race-free test.
fn race_lines(t: &crate::litmus::LitmusTest, report: &crate::report::races::RacesReport) -> String {
    let mut out = crate::report::races::section(report);
    if !report.races.is_empty() {
        out.push_str(&format!(
            "`ptxmc trace {} --race N` shows an execution in which race N happens.\n",
            t.display_path()
        ));
    }
    out
}
