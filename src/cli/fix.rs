//! `ptxmc fix`: the cheapest changes that make an allowed outcome forbidden,
//! or (`--weaken`) the synchronisation a forbidden outcome does not need.

use crate::report::ub::UbReport;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

use super::Exit;
use super::common::{TestArgs, target_outcome};
use crate::explain::TerminationNote;
use crate::fix::{self, FixOptions, FixReport};
use crate::litmus::print;

/// Fix report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FixFormat {
    /// One line per fix.
    Text,
    /// The same as data.
    Json,
}

/// Arguments of `ptxmc fix`.
#[derive(Args, Debug)]
pub struct FixArgs {
    /// The test, its instance, model and loop bound.
    #[command(flatten)]
    pub test: TestArgs,
    /// The outcome to forbid (default: the test's condition; for a `forall` test, its negation).
    #[arg(long)]
    pub outcome: Option<String>,
    /// Instead: which fences and annotations a forbidden outcome does not need.
    #[arg(long)]
    pub weaken: bool,
    /// The most changes in one fix (default 3). Not with `--weaken`, which
    /// lists maximal weakenings (as many changes as they need).
    #[arg(long, value_name = "N")]
    pub bound: Option<usize>,
    /// Write each changed test as a litmus file into this directory.
    #[arg(long, value_name = "DIR")]
    pub emit: Option<PathBuf>,
    /// Fences and stronger annotations only: no repairs (inserted
    /// barriers and waits, removed arrivals, counts, parities, byte counts).
    #[arg(long)]
    pub no_repairs: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: FixFormat,
    /// Stop searching after this many seconds (the fixes found so far are
    /// listed; exit 4). `--weaken` stops after 60 s unless told otherwise
    /// (`--timeout 0`: no limit).
    #[arg(long, value_name = "SECS", value_parser = super::common::parse_seconds)]
    pub timeout: Option<f64>,
}

/// Run `ptxmc fix`.
pub fn run(args: &FixArgs) -> Exit {
    let t = match args.test.load() {
        Ok(t) => t,
        Err(e) => return e,
    };
    let t = &t;
    let p = &t.program;
    if args.weaken && args.bound.is_some() {
        eprintln!(
            "error: --bound does not apply to --weaken: it lists maximal weakenings, which change as many sites as they can (limit the search with --timeout)"
        );
        return Exit::BadInput;
    }
    let want = match target_outcome(t, args.outcome.as_deref()) {
        Ok((w, _)) => w,
        Err(e) => return e,
    };
    // A program that can hang is never "fixed" by forbidding an outcome, and
    // the search below changes accesses and fences for outcomes only: say
    // so, as `run` would, before anything else.
    let limits = crate::explain::enumerate::Limits {
        loop_bound: args.test.loop_bound,
        deadline: args
            .timeout
            .filter(|s| *s > 0.0)
            .and_then(|s| std::time::Instant::now().checked_add(Duration::from_secs_f64(s))),
        barriers: args.test.barriers.for_program(p),
        fairness: args.test.fairness,
        ..crate::explain::enumerate::Limits::default()
    };
    // Undefined behaviour and hangs first. A search for an outcome alone
    // cannot remove either (fences and stronger annotations only remove
    // executions), so the search is asked for repairs that make every
    // execution terminate and stay defined as well; `--weaken` refuses.
    let (note, undefined) = TerminationNote::with_undefined(p, &limits, HANG_CHECK_STATES);
    let mut problem = None;
    let mut problem_lines: Vec<String> = Vec::new();
    let mut problem_json: Option<(&str, serde_json::Value)> = None;
    if let Some(u) = undefined {
        let ub = crate::report::ub::of(t, &u);
        if args.weaken {
            return refuse_undefined(args, t, &ub);
        }
        problem = Some(fix::Problem::Undefined);
        problem_json = Some(("undefined", serde_json::to_value(&ub).unwrap_or_default()));
        problem_lines.push(crate::report::ub::line(&ub));
        problem_lines.push(format!(
            "A run to it: ptxmc trace {} --undefined",
            t.display_path()
        ));
    } else if let TerminationNote::Hangs { kind, why, .. } = &note {
        if args.weaken {
            return refuse_hang(args, t, &note);
        }
        problem = Some(fix::Problem::Hang);
        problem_json = Some((
            "termination",
            serde_json::to_value(&note).unwrap_or_default(),
        ));
        problem_lines.push(format!("Hang: {kind} — {why}"));
        problem_lines.push(format!(
            "A run into it: ptxmc trace {} --hang",
            t.display_path()
        ));
    }
    // `--weaken` has a time limit by default (its search can be long: one
    // run per candidate); `--timeout 0` lifts it.
    let timeout = match (args.timeout, args.weaken) {
        (Some(s), _) => Some(s),
        (None, true) => Some(WEAKEN_TIMEOUT_S),
        (None, false) => None,
    };
    let opts = FixOptions {
        bound: args.bound.unwrap_or(3),
        loop_bound: args.test.loop_bound,
        barriers: args.test.barriers.for_program(p),
        timeout: timeout.filter(|s| *s > 0.0).map(Duration::from_secs_f64),
        repairs: !args.no_repairs,
        problem,
    };
    let report = if args.weaken {
        let mut line = ProgressLine::new("weaken");
        let r = fix::weaken::weaken(p, &want, &opts, &positions(t), &mut |g| {
            line.show(&format!(
                "{} programs checked, {} maximal weakening{} found, {:.1} s{}",
                g.stats.checked,
                g.found,
                if g.found == 1 { "" } else { "s" },
                g.seconds,
                opts.timeout
                    .map(|l| format!(" (limit {:.0} s)", l.as_secs_f64()))
                    .unwrap_or_default()
            ))
        });
        line.finish();
        r
    } else {
        fix::fix(p, &want, &opts)
    };
    if let Some(dir) = &args.emit {
        if let Err(e) = emit(dir, &p.name, &report, args.weaken) {
            eprintln!("error: cannot write into {}: {e}", dir.display());
            return Exit::BadInput;
        }
    }
    match args.format {
        FixFormat::Text => print!(
            "{}",
            crate::report::fix::text(&p.name, &report, args.weaken, opts.bound, &problem_lines)
        ),
        FixFormat::Json => {
            let mut v = serde_json::to_value(&report).unwrap_or_default();
            if let (Some(o), Some((key, value))) = (v.as_object_mut(), problem_json) {
                o.insert("problem_text".into(), serde_json::json!(problem_lines));
                o.insert(key.into(), value);
            }
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
    }
    if report.incomplete {
        Exit::Incomplete
    } else if report.fixes.iter().any(|f| !f.verified) {
        Exit::Disagreement
    } else if report.fixes.iter().any(|f| f.undefined.is_some()) {
        // A proposal that leaves undefined behaviour reachable said so.
        Exit::Undefined
    } else if report.fixes.is_empty() && problem == Some(fix::Problem::Hang) {
        // Nothing removes the hang: the program as written still hangs.
        Exit::Hang
    } else if report.fixes.is_empty() && problem == Some(fix::Problem::Undefined) {
        Exit::Undefined
    } else {
        Exit::Success
    }
}

/// `fix --weaken`'s time limit when `--timeout` is not given, in seconds.
const WEAKEN_TIMEOUT_S: f64 = 60.0;

/// Where each instruction of `t` is: line and column in its file, and for a
/// kernel the CUDA line its `.loc` names (`fix --weaken` names sites so).
fn positions(t: &crate::litmus::LitmusTest) -> fix::sites::Positions {
    t.program
        .threads
        .iter()
        .enumerate()
        .map(|(ti, th)| {
            (0..th.code.len())
                .map(|pc| {
                    let span = t.spans.instr(ti, pc);
                    if span.end == 0 {
                        return String::new();
                    }
                    let at = span.start.min(t.source.len());
                    let before = &t.source[..at];
                    let line = before.matches('\n').count() + 1;
                    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                    match t
                        .cuda
                        .get(ti)
                        .and_then(|c| c.get(pc))
                        .and_then(|c| c.as_ref())
                    {
                        Some(cu) => format!("{line}:{col}, {cu}"),
                        None => format!("{line}:{col}"),
                    }
                })
                .collect()
        })
        .collect()
}

/// The states the termination check may visit before `fix` gives up on it.
const HANG_CHECK_STATES: u64 = 2_000_000;

/// What `fix` says about a program that can hang: the hang, and that its
/// search cannot remove one. Exit status 5, as `run`.
fn refuse_hang(args: &FixArgs, t: &crate::litmus::LitmusTest, note: &TerminationNote) -> Exit {
    let p = &t.program;
    let TerminationNote::Hangs { kind, why, .. } = note else {
        unreachable!("called on a hang")
    };
    let cannot = "ptxmc fix --weaken does not look at programs that can hang: a weakening keeps what the program does, and this program can hang already (`ptxmc fix` without --weaken searches repairs)";
    match args.format {
        FixFormat::Text => {
            println!("Fix {}: the program can hang", p.name);
            println!("Hang: {kind} — {why}");
            println!("A run into it: ptxmc trace {} --hang", t.display_path());
            println!("{cannot}.");
        }
        FixFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "name": p.name,
                "file": t.display_path(),
                "termination": note,
                "fixes": [],
                "why": cannot,
            }))
            .unwrap_or_default()
        ),
    }
    Exit::Hang
}

/// What `fix` says about a program that can reach undefined behaviour: the
/// undefined step, and that its search does not remove one. Exit status 6,
/// as `run`.
fn refuse_undefined(args: &FixArgs, t: &crate::litmus::LitmusTest, ub: &UbReport) -> Exit {
    let p = &t.program;
    let cannot = "ptxmc fix --weaken does not look at programs that can reach undefined behaviour: a weakening keeps what the program does (`ptxmc fix` without --weaken searches repairs)";
    match args.format {
        FixFormat::Text => {
            println!("Fix {}: the program can reach undefined behaviour", p.name);
            println!("{}", crate::report::ub::line(ub));
            println!("A run to it: ptxmc trace {} --undefined", t.display_path());
            println!("{cannot}.");
        }
        FixFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "name": p.name,
                "file": t.display_path(),
                "undefined": ub,
                "fixes": [],
                "why": cannot,
            }))
            .unwrap_or_default()
        ),
    }
    Exit::Undefined
}

fn emit(dir: &std::path::Path, name: &str, r: &FixReport, weaken: bool) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let what = if weaken { "weaken" } else { "fix" };
    for (i, f) in r.fixes.iter().enumerate() {
        let mut q = f.program.clone();
        q.name = format!("{name}+{what}{}", i + 1);
        let changes: Vec<String> = f.changes.iter().map(|c| c.text.clone()).collect();
        q.docs
            .insert(0, format!("ptxmc fix: {}", changes.join("; ")));
        let file = crate::report::dot::file_name(&q.name);
        std::fs::write(dir.join(format!("{file}.litmus")), print::to_litmus(&q))?;
    }
    Ok(())
}

/// A progress line on stderr for a long search: on a terminal, one line
/// redrawn at most five times a second once the search has run a second;
/// otherwise (a log, a pipe) a line every five seconds. Never on stdout, so
/// it cannot pollute `--format json`.
struct ProgressLine {
    what: &'static str,
    start: std::time::Instant,
    last: Option<std::time::Instant>,
    terminal: bool,
    shown: bool,
}

impl ProgressLine {
    fn new(what: &'static str) -> ProgressLine {
        use std::io::IsTerminal;
        ProgressLine {
            what,
            start: std::time::Instant::now(),
            last: None,
            terminal: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    /// Shows `msg` if it is time to.
    fn show(&mut self, msg: &str) {
        let (first, every) = if self.terminal {
            (Duration::from_secs(1), Duration::from_millis(200))
        } else {
            (Duration::from_secs(5), Duration::from_secs(5))
        };
        let now = std::time::Instant::now();
        let due = match self.last {
            None => now.duration_since(self.start) >= first,
            Some(l) => now.duration_since(l) >= every,
        };
        if !due {
            return;
        }
        self.last = Some(now);
        self.shown = true;
        if self.terminal {
            eprint!("\r\x1b[2K{}: {msg}", self.what);
        } else {
            eprintln!("{}: {msg}", self.what);
        }
    }

    /// Clears a terminal's line.
    fn finish(&mut self) {
        if self.terminal && self.shown {
            eprint!("\r\x1b[2K");
        }
    }
}
