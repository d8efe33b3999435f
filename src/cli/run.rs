//! `ptxmc run`: list the allowed outcomes of tests.

use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

use super::Exit;
use rayon::prelude::*;

use super::common::{EngineArgs, init_pool, load_all, worst};
use crate::engine;
use crate::limits::OutputCost;
use crate::report::{self, TestReport};

/// Report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    /// herd7's text summary, one block per test.
    Herd,
    /// A JSON array with one object per test.
    Json,
}

/// Arguments of `ptxmc run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Test files, or directories searched recursively for `.litmus` and `.test` files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Engine options.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "herd")]
    pub format: RunFormat,
    /// Add the engines' counters to the herd-style report (JSON always has them).
    #[arg(long)]
    pub stats: bool,
    /// Write one picture (Graphviz DOT) per allowed final state of each test into this directory.
    #[arg(long, value_name = "DIR")]
    pub graphs: Option<PathBuf>,
    /// Treat warnings (a likely typo in a location name, a modelling choice)
    /// as errors: exit status 2 if any was printed.
    #[arg(long)]
    pub deny_warnings: bool,
    /// For CI: exit status 7 if any test has a data race (races are always
    /// listed: herd's `Races` section, JSON's `races`; docs/races.md).
    #[arg(long)]
    pub deny_races: bool,
}

/// Run `ptxmc run`.
pub fn run(args: &RunArgs) -> Exit {
    let (tests, exit) = load_all(&args.paths, args.engine.model);
    run_loaded(&tests, exit, args)
}

/// Run and report tests already loaded (`run`, and `kernel` with its launch flags).
pub(super) fn run_loaded(
    tests: &[crate::litmus::LitmusTest],
    mut exit: Exit,
    args: &RunArgs,
) -> Exit {
    let opts = engine::RunOptions {
        // The limits keep what printing the outcomes will take in this format.
        output_cost: match args.format {
            RunFormat::Herd => OutputCost::HERD,
            RunFormat::Json => OutputCost::JSON,
        },
        ..args.engine.options(tests.len())
    };
    init_pool(args.engine.jobs());
    // Tests run side by side; reports come out in file order.
    let results: Vec<engine::RunResult> = tests
        .par_iter()
        .map(|t| engine::run(&t.program, &opts))
        .collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut json = Vec::new();
    for (t, result) in tests.iter().zip(&results) {
        let notes = report::run::notes(t, result);
        let rep = TestReport {
            program: &t.program,
            file: t.display_path(),
            model: opts.model,
            result,
            notes,
            undefined: result.undefined.as_ref().map(|u| report::ub::of(t, u)),
            races: report::races::of(t, &result.races),
        };
        if result.disagreement.is_some() {
            exit = worst(exit, Exit::Disagreement);
        }
        if result.incomplete.is_some() {
            exit = worst(exit, Exit::Incomplete);
        }
        if rep.expectation_met() == Some(false) {
            exit = worst(exit, Exit::CheckFailed);
        }
        if result.termination.hangs() {
            exit = worst(exit, Exit::Hang);
        }
        if result.undefined.is_some() {
            exit = worst(exit, Exit::Undefined);
        }
        if args.deny_races && !result.races.found.is_empty() {
            exit = worst(exit, Exit::Racy);
        }
        if let Some(dir) = &args.graphs {
            if let Err(e) = super::graphs::write(dir, &t.program, &result.outcomes) {
                eprintln!("error: cannot write into {}: {e}", dir.display());
                exit = worst(exit, Exit::BadInput);
            }
        }
        match args.format {
            RunFormat::Herd => {
                let _ = report::herd::write(&rep, &mut out);
                if args.stats {
                    let _ = write!(out, "{}", report::herd::stats(&rep));
                }
                let _ = writeln!(out);
            }
            RunFormat::Json => json.push(report::json::object(&rep)),
        }
    }
    if args.format == RunFormat::Json {
        // Written as it is serialised: no text, nor values, of the whole set.
        let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut out);
        let _ = serde_json::to_writer_pretty(&mut w, &json);
        let _ = writeln!(w);
    }
    super::common::deny_warnings(args.deny_warnings, exit)
}
