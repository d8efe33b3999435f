//! `ptxmc check`: compare verdicts with an expected-verdict CSV (Dat3M's
//! `path,1|0` format: 1 = the test's condition holds under the model).

use clap::Args;
use std::path::PathBuf;

use super::Exit;
use super::common::{EngineArgs, load, worst};
use crate::engine;

/// Arguments of `ptxmc check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// CSV of `path,1|0` rows (paths relative to `--root`).
    #[arg(long, value_name = "FILE.csv")]
    pub expected: PathBuf,
    /// Directory the CSV's paths are relative to.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Engine options.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Run `ptxmc check`.
pub fn run(args: &CheckArgs) -> Exit {
    let text = match std::fs::read_to_string(&args.expected) {
        Ok(t) => t,
        Err(e) => {
            eprintln!(
                "error: expected a readable CSV, found an I/O error: {e}\n --> {}",
                args.expected.display()
            );
            return Exit::BadInput;
        }
    };
    let opts = args.engine.options();
    let (mut passed, mut failed) = (0usize, 0usize);
    let mut exit = Exit::Success;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some((path, want)) = line.rsplit_once(',').and_then(|(p, v)| match v.trim() {
            "1" => Some((p.trim(), true)),
            "0" => Some((p.trim(), false)),
            _ => None,
        }) else {
            eprintln!(
                "error: expected a row `path,1` or `path,0`, found `{line}`\n --> {}:{}:1",
                args.expected.display(),
                lineno + 1
            );
            return Exit::BadInput;
        };
        let tests = match load(&args.root.join(path), opts.model) {
            Ok(t) => t,
            Err(e) => {
                println!("FAIL {path}: the test could not be read");
                failed += 1;
                exit = worst(exit, e);
                continue;
            }
        };
        let mut ok = true;
        let mut why = String::new();
        for t in &tests {
            let r = engine::run(&t.program, &opts);
            if let Some(d) = &r.disagreement {
                ok = false;
                why = format!(
                    "the engines disagree ({} states only operational, {} only axiomatic)",
                    d.only_op.len(),
                    d.only_ax.len()
                );
                exit = worst(exit, Exit::Disagreement);
            } else if let Some(reason) = &r.incomplete {
                ok = false;
                why = format!("incomplete ({reason})");
                exit = worst(exit, Exit::Incomplete);
            } else if !r.verdict_is_definitive(&t.program) {
                ok = false;
                why = format!(
                    "inconclusive: the loop bound ({}) was reached",
                    opts.loop_bound
                );
            } else if r.verdict.holds != want {
                ok = false;
                why = format!(
                    "expected {}, got {} ({} of {} states satisfy the condition)",
                    want as u8,
                    r.verdict.holds as u8,
                    r.verdict.positive,
                    r.outcomes.len()
                );
            }
        }
        if ok {
            passed += 1;
        } else {
            failed += 1;
            println!("FAIL {path}: {why}");
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        worst(exit, Exit::CheckFailed)
    } else {
        exit
    }
}
