//! `ptxmc check`: compare verdicts with an expected-verdict CSV (Dat3M's
//! `path,1|0` format: 1 = the test's condition holds under the model; with
//! `--property termination`, 1 = every execution terminates). Termination
//! is checked on outcome rows too: a program that can hang fails its row
//! unless `--liveness` expects the hang. Likewise undefined behaviour: a
//! program that can reach an undefined step fails its outcome or termination
//! row unless `--undefined` expects it (or the CSV is about it,
//! `--property undefined`).

use clap::{Args, ValueEnum};
use std::path::PathBuf;

use super::Exit;
use rayon::prelude::*;

use super::common::{EngineArgs, init_pool, load, worst};
use crate::engine::{self, RunOptions};
use crate::generate::Shard;
use crate::litmus::LitmusTest;

/// What a CSV's verdicts are about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Property {
    /// The test's final condition (1 = it holds).
    Outcome,
    /// Termination, as in Dat3M's liveness CSVs (1 = every execution
    /// terminates, 0 = some execution deadlocks or spins forever).
    Termination,
    /// Undefined behaviour (1 = some execution reaches an undefined step,
    /// 0 = none does).
    Undefined,
}

/// Arguments of `ptxmc check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// CSV of `path,1|0` rows (paths relative to `--root`).
    #[arg(long, value_name = "FILE.csv")]
    pub expected: PathBuf,
    /// Directory the CSV's paths are relative to.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// What the CSV's verdicts are about.
    #[arg(long, value_enum, default_value = "outcome")]
    pub property: Property,
    /// With `--property outcome`: a liveness CSV (`path,1|0`, as with
    /// `--property termination`) whose `path,0` rows are the programs
    /// expected to hang. A program that can hang fails its outcome row
    /// unless this CSV expects the hang; a row it expects to hang fails if
    /// the program terminates.
    #[arg(long, value_name = "FILE.csv", conflicts_with = "no_termination")]
    pub liveness: Option<PathBuf>,
    /// With `--property outcome` or `termination`: an undefined-behaviour
    /// CSV (`path,1|0`, as with `--property undefined`) whose `path,1` rows
    /// are the programs expected to reach undefined behaviour. A program
    /// that can reach it fails its row unless this CSV expects it; a row it
    /// expects fails if no execution reaches undefined behaviour.
    #[arg(long, value_name = "FILE.csv")]
    pub undefined: Option<PathBuf>,
    /// Check only the K-th of N deterministic parts of the rows (1 <= K <= N),
    /// chosen by the row's path as `ptxmc gen --shard K/N` chooses tests.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Treat warnings (a likely typo in a location name, a modelling choice)
    /// as errors: exit status 2 if any was printed.
    #[arg(long)]
    pub deny_warnings: bool,
    /// A row whose verdict holds but whose program has a data race fails
    /// (exit status 7, as `run --deny-races`). Without it the race is
    /// reported on a `RACES` line and the row passes (docs/races.md).
    #[arg(long)]
    pub deny_races: bool,
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
    // Read every row first (a malformed row stops everything), then run the
    // tests side by side and report in row order.
    let rows: Vec<(String, bool)> = match read_rows(&text, &args.expected) {
        Ok(r) => r
            .into_iter()
            .filter(|(path, _)| args.shard.is_none_or(|s| s.contains(path)))
            .collect(),
        Err(e) => return e,
    };
    if args.liveness.is_some() && args.property == Property::Termination {
        eprintln!(
            "error: expected `--liveness` with `--property outcome`, found `--property termination` (its CSV is the liveness one)"
        );
        return Exit::BadInput;
    }
    if args.undefined.is_some() && args.property == Property::Undefined {
        eprintln!(
            "error: expected `--undefined` with `--property outcome` or `termination`, found `--property undefined` (its CSV is the undefined-behaviour one)"
        );
        return Exit::BadInput;
    }
    // Per outcome row: whether the liveness CSV expects the program to
    // terminate (`Some(true)`), to hang (`Some(false)`), or says nothing.
    let liveness = match side_rows(args.liveness.as_deref()) {
        Ok(r) => r,
        Err(e) => return e,
    };
    // Per row: whether the undefined-behaviour CSV expects the program to
    // reach an undefined step (`Some(true)`), not to (`Some(false)`), or
    // says nothing.
    let undefined = match side_rows(args.undefined.as_deref()) {
        Ok(r) => r,
        Err(e) => return e,
    };
    let mut opts = args.engine.options(rows.len());
    // A verdict per test is printed, not the outcomes: the least reserve.
    opts.output_cost = crate::limits::OutputCost::HERD;
    // Termination is checked for outcome rows too: a program that can hang
    // fails its row (only a termination CSV's `path,0` row expects a hang);
    // undefined steps can lie on executions that hang.
    if args.property != Property::Outcome && !opts.termination {
        eprintln!("error: expected termination to be checked, found --no-termination");
        return Exit::BadInput;
    }
    init_pool(args.engine.jobs());
    let loaded: Vec<Result<Vec<LitmusTest>, Exit>> = rows
        .iter()
        .map(|(path, _)| load(&args.root.join(path), opts.model))
        .collect();
    type Verdict = ((bool, String, Exit), Option<String>);
    let verdicts: Vec<Result<Verdict, Exit>> = rows
        .par_iter()
        .zip(loaded.par_iter())
        .map(|((path, want), tests)| {
            let tests = tests.as_ref().map_err(|e| *e)?;
            let ub = undefined.get(path).copied();
            let mut races = Races::default();
            let v = match args.property {
                Property::Outcome => judge(
                    tests,
                    *want,
                    liveness.get(path).copied(),
                    ub,
                    &opts,
                    &mut races,
                ),
                Property::Termination => judge_termination(tests, *want, ub, &opts, &mut races),
                Property::Undefined => judge_undefined(tests, *want, &opts, &mut races),
            };
            Ok((v, races.summary()))
        })
        .collect();
    let (mut passed, mut failed) = (0usize, 0usize);
    let mut exit = Exit::Success;
    for ((path, _), v) in rows.iter().zip(verdicts) {
        // A verdict that holds does not make a racy program correct: the
        // races are said, and with --deny-races the row fails.
        let v = v.map(|(v, races)| match (v, races) {
            ((true, _, _), Some(r)) if args.deny_races => {
                (false, format!("{r} (--deny-races)"), Exit::Racy)
            }
            ((true, w, e), Some(r)) => {
                println!("RACES {path}: {r}");
                (true, w, e)
            }
            (v, _) => v,
        });
        match v {
            Ok((true, _, _)) => passed += 1,
            Ok((false, why, e)) => {
                failed += 1;
                exit = worst(exit, e);
                println!("FAIL {path}: {why}");
            }
            Err(e) => {
                failed += 1;
                exit = worst(exit, e);
                println!("FAIL {path}: the test could not be read");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    let exit = if failed > 0 {
        worst(exit, Exit::CheckFailed)
    } else {
        exit
    };
    super::common::deny_warnings(args.deny_warnings, exit)
}

/// The rows of a side CSV (`--liveness`, `--undefined`) by path; none
/// without one.
fn side_rows(
    file: Option<&std::path::Path>,
) -> Result<std::collections::HashMap<String, bool>, Exit> {
    let Some(file) = file else {
        return Ok(Default::default());
    };
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!(
                "error: expected a readable CSV, found an I/O error: {e}\n --> {}",
                file.display()
            );
            return Err(Exit::BadInput);
        }
    };
    Ok(read_rows(&text, file)?.into_iter().collect())
}

/// Undefined behaviour on a row about something else (outcome or
/// termination): a program that can reach an undefined step never passes,
/// unless the `--undefined` CSV expects exactly that (`expected`:
/// `Some(true)`); a row it expects fails if none is reached. `None` if the
/// row may go on to be judged.
fn undefined_row(
    t: &LitmusTest,
    r: &engine::RunResult,
    expected: Option<bool>,
) -> Option<(bool, String, Exit)> {
    match (&r.undefined, expected) {
        (Some(_), Some(true)) | (None, None | Some(false)) => None,
        (Some(u), _) => Some((
            false,
            format!(
                "{} (undefined behaviour is expected only by a `path,1` row of the `--undefined` CSV)",
                crate::report::ub::line(&crate::report::ub::of(t, u))
            ),
            Exit::Undefined,
        )),
        (None, Some(true)) => Some((
            false,
            "expected undefined behaviour (--undefined), found none".into(),
            Exit::CheckFailed,
        )),
    }
}

/// The rows `path,1|0` of a CSV, in order; a malformed row is reported
/// with its position.
fn read_rows(text: &str, file: &std::path::Path) -> Result<Vec<(String, bool)>, Exit> {
    let mut rows = Vec::new();
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
                file.display(),
                lineno + 1
            );
            return Err(Exit::BadInput);
        };
        rows.push((path.to_string(), want));
    }
    Ok(rows)
}

/// Whether every test of a file terminates (`want`) or can hang (`!want`);
/// if not, why.
/// `undefined`: what the `--undefined` CSV expects ([`undefined_row`]).
fn judge_termination(
    tests: &[LitmusTest],
    want: bool,
    undefined: Option<bool>,
    opts: &RunOptions,
    races: &mut Races,
) -> (bool, String, Exit) {
    for t in tests {
        let r = engine::run(&t.program, opts);
        races.add(t, &r);
        if let Some(failed) = unsettled(&r) {
            return failed;
        }
        if let Some(failed) = undefined_row(t, &r, undefined) {
            return failed;
        }
        let why = crate::report::hang::why(&t.program, &r.termination);
        if !r.termination.checked() {
            return (
                false,
                format!("inconclusive: termination not checked ({why})"),
                Exit::CheckFailed,
            );
        }
        if r.termination.hangs() == want {
            let got = if want {
                format!("found a hang: {why}")
            } else {
                "every execution terminates".into()
            };
            let expected = if want { "termination" } else { "a hang" };
            return (
                false,
                format!("expected {expected}, {got}"),
                Exit::CheckFailed,
            );
        }
    }
    (true, String::new(), Exit::Success)
}

/// Whether some test of a file can reach undefined behaviour (`want`) or
/// none can (`!want`); if not, why.
fn judge_undefined(
    tests: &[LitmusTest],
    want: bool,
    opts: &RunOptions,
    races: &mut Races,
) -> (bool, String, Exit) {
    let mut found = None;
    for t in tests {
        let r = engine::run(&t.program, opts);
        races.add(t, &r);
        if let Some(failed) = unsettled(&r) {
            return failed;
        }
        if let Some(u) = &r.undefined {
            found = Some(crate::report::ub::line(&crate::report::ub::of(t, u)));
        }
    }
    match (found, want) {
        (Some(_), true) | (None, false) => (true, String::new(), Exit::Success),
        (None, true) => (
            false,
            "expected undefined behaviour, found none".into(),
            Exit::CheckFailed,
        ),
        (Some(line), false) => (
            false,
            format!("expected no undefined behaviour, found: {line}"),
            Exit::CheckFailed,
        ),
    }
}

/// Why a run gives no answer to judge (the engines disagree, or a limit
/// stopped it), as `judge` reports it; `None` if it does.
fn unsettled(r: &engine::RunResult) -> Option<(bool, String, Exit)> {
    if let Some(d) = &r.disagreement {
        return Some((false, disagreement(d), Exit::Disagreement));
    }
    r.incomplete
        .as_ref()
        .map(|reason| (false, format!("incomplete ({reason})"), Exit::Incomplete))
}

/// A disagreement between the engines, in a few words.
fn disagreement(d: &engine::Disagreement) -> String {
    match d.termination {
        Some((op, _)) if d.only_op.is_empty() && d.only_ax.is_empty() => format!(
            "the engines disagree on termination (the operational machine {} a hang)",
            if op { "finds" } else { "does not find" }
        ),
        _ => format!(
            "the engines disagree ({} states only operational, {} only axiomatic)",
            d.only_op.len(),
            d.only_ax.len()
        ),
    }
}

/// Whether every test of a file gets the expected verdict; if not, why.
/// `terminates`: what the liveness CSV expects (`Some(false)`: a hang),
/// if it has a row for the file; `undefined`: what the `--undefined` CSV
/// expects ([`undefined_row`]).
fn judge(
    tests: &[LitmusTest],
    want: bool,
    terminates: Option<bool>,
    undefined: Option<bool>,
    opts: &RunOptions,
    races: &mut Races,
) -> (bool, String, Exit) {
    for t in tests {
        let r = engine::run(&t.program, opts);
        races.add(t, &r);
        if let Some(failed) = unsettled(&r) {
            return failed;
        }
        // Undefined behaviour first: it is the more serious verdict.
        if let Some(failed) = undefined_row(t, &r, undefined) {
            return failed;
        }
        // A program that can hang never passes as correct, unless a
        // liveness row expects exactly that.
        let why = crate::report::hang::why(&t.program, &r.termination);
        match (r.termination.hangs(), terminates) {
            (true, Some(false)) => {}
            (true, _) => {
                let why = format!(
                    "the program can hang: {why} (a hang is expected only by a `path,0` row of the `--liveness` CSV)"
                );
                return (false, why, Exit::Hang);
            }
            (false, Some(false)) if r.termination.checked() => {
                return (
                    false,
                    "expected a hang (--liveness), every execution terminates".into(),
                    Exit::CheckFailed,
                );
            }
            (false, Some(false)) => {
                return (
                    false,
                    format!(
                        "expected a hang (--liveness), inconclusive: termination not checked ({why})"
                    ),
                    Exit::CheckFailed,
                );
            }
            _ => {}
        }
        if !r.verdict_is_definitive(&t.program) {
            let why = format!(
                "inconclusive: the loop bound ({}) was reached",
                opts.loop_bound
            );
            return (false, why, Exit::CheckFailed);
        }
        if r.verdict.holds != want {
            let why = format!(
                "expected {}, got {} ({} of {} states satisfy the condition)",
                want as u8,
                r.verdict.holds as u8,
                r.verdict.positive,
                r.outcomes.len()
            );
            return (false, why, Exit::CheckFailed);
        }
    }
    (true, String::new(), Exit::Success)
}

/// The races the runs of one row found (`run`'s numbering, per test).
#[derive(Default)]
struct Races {
    /// Per racy test: its path, how many races, and the first in words.
    found: Vec<(String, usize, String)>,
}

impl Races {
    /// Note the races of test `t`'s run `r`.
    fn add(&mut self, t: &LitmusTest, r: &engine::RunResult) {
        let report = crate::report::races::of(t, &r.races);
        if let Some(first) = report.races.first() {
            self.found.push((
                t.display_path(),
                report.races.len(),
                crate::report::races::race_line(first),
            ));
        }
    }

    /// The row's races in one line (`None`: race-free, as far as checked).
    fn summary(&self) -> Option<String> {
        let (path, n, first) = self.found.first()?;
        let more = match n {
            1 => String::new(),
            k => format!(" (and {} more)", k - 1),
        };
        let tests = match self.found.len() {
            1 => String::new(),
            k => format!("; {} more racy tests in the file", k - 1),
        };
        Some(format!(
            "the program has {n} data race{}: race {first}{more}{tests}; `ptxmc trace {path} --race 1` shows it",
            if *n == 1 { "" } else { "s" }
        ))
    }
}
