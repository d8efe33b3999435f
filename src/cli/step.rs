//! `ptxmc step`: stand inside the machine and choose each step.
//!
//! Prints the state and the numbered transitions, then reads commands: on a
//! terminal with line editing (rustyline), otherwise one per line from
//! standard input, printing plain text, so a session is a script and its
//! transcript a golden file.

use clap::Args;
use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use super::Exit;
use super::common::TestArgs;
use crate::explain::axiomatic::Caps;
use crate::explain::enumerate::Limits as ExplainLimits;
use crate::explain::explain_outcome;
use crate::ir::Prop;
use crate::limits::Limits;
use crate::litmus::{LitmusError, LitmusTest, cond};
use crate::step::{self, GoTo, Session, picture, text};

/// Arguments of `ptxmc step`.
#[derive(Args, Debug)]
pub struct StepArgs {
    /// The test, its instance, model and loop bound.
    #[command(flatten)]
    pub test: TestArgs,
    /// Let a thread whose next instruction retires without a choice go first
    /// and alone (the machine's reduction, as `ptxmc trace` counts choices).
    #[arg(long)]
    pub eager: bool,
    /// Start after these choices (as printed by `f` or `ptxmc trace`), e.g. `0,2,1`.
    #[arg(long, value_delimiter = ',', num_args = 0..)]
    pub follow: Option<Vec<usize>>,
    /// Give up a question to the explorer (`o`, `g`) after this many states.
    #[arg(long, default_value_t = 1_000_000, value_name = "N")]
    pub max_states: u64,
    /// Give up a question to the explorer (`o`, `g`, `e`), or listing a
    /// state's transitions, after this many seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECS", value_parser = super::common::parse_seconds)]
    pub timeout: f64,
    /// Give up a question to the explorer, or listing a state's transitions,
    /// when resident memory exceeds this many MiB (default: 80% of physical memory).
    #[arg(long, value_name = "MIB")]
    pub max_memory: Option<u64>,
}

const HELP: &str = "\
Commands:
  N       take transition N
  u       undo the last step            r   redo it
  s       restart from the initial state
  o       the final states still reachable from here
  g COND  go to an outcome by the shortest path, e.g. g 1:r0=1 /\\ 1:r1=0
  g hang  go into a hang (a deadlock, or a loop that spins forever)
  g undefined  go to undefined behaviour (the step that makes the run undefined)
  f       the run so far and the `ptxmc trace --follow` command that replays it
  e [COND]  explain an outcome (default: this run's final state, or the test's condition)
  m [COND]  the missing orderings of an outcome (the same default): which read was stale
            and which link the model does not give
  p       print the state again          h   this help
  q       quit";

/// Run `ptxmc step`.
pub fn run(args: &StepArgs) -> Exit {
    let t = match args.test.load() {
        Ok(t) => t,
        Err(e) => return e,
    };
    let t = &t;
    let timeout = Duration::try_from_secs_f64(args.timeout.max(0.0)).ok();
    let options = step::Options {
        loop_bound: args.test.loop_bound,
        barriers: args.test.barriers.for_program(&t.program),
        fairness: args.test.fairness,
        every_step: !args.eager,
        limits: Limits {
            max_states: Some(args.max_states),
            timeout,
            max_memory: args
                .max_memory
                .map(|m| m << 20)
                .or_else(|| super::common::physical_memory().map(|b| b / 10 * 8)),
        },
    };
    // The machine at the width the program's slots need, like `run`'s.
    let done = match session_at::<u128>(args, t, options) {
        Err(too) => crate::with_width!(
            too.needed,
            S => session_at::<S>(args, t, options),
            Err(too)
        ),
        done => done,
    };
    done.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        Exit::Incomplete
    })
}

/// [`run`]'s session with event sets of type `S`; `Err` if the program has
/// more event slots than `S` holds.
fn session_at<S: crate::rel::Bits>(
    args: &StepArgs,
    t: &LitmusTest,
    options: step::Options,
) -> Result<Exit, crate::op::TooManySlots> {
    // Said once, up front, as `run` says it: a session on a program that can
    // hang ends with `run`'s exit status for hangs.
    let (note, ub) = super::common::termination(
        t,
        args.test.loop_bound,
        args.max_states,
        Some(args.timeout),
        args.test.barriers,
        args.test.fairness,
    );
    // A hang that needs each copy's bytes completing at once
    // (`ir::copies`): the session runs that variant, so `g hang` finds it.
    let whole = match &note {
        crate::explain::TerminationNote::Hangs { copies, .. } => {
            *copies == crate::ir::copies::Granularity::Whole
        }
        _ => false,
    };
    let mut variant;
    let t = if whole {
        variant = t.clone();
        variant.program.granularity = crate::ir::copies::Granularity::Whole;
        &variant
    } else {
        t
    };
    let variants = match crate::ir::elect::Variants::of(&t.program) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(Exit::Incomplete);
        }
    };
    let mut session = Session::<S>::build(&variants, options)?;
    if let Some(f) = &args.follow {
        if let Err(crate::op::trace::TraceError::BadChoice {
            step,
            choice,
            available,
        }) = session.replay(f)
        {
            eprintln!("error: expected a choice below {available} at step {step}, found {choice}");
            return Ok(Exit::BadInput);
        }
    }
    let file = args.test.file.display().to_string();
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{}", show(&session, t));
    if whole {
        let _ = writeln!(
            out,
            "(This session runs the program with {}, the way it can hang: docs/async.md 8.)",
            crate::ir::copies::Granularity::Whole.words()
        );
    }
    let _ = write!(
        out,
        "{}{}",
        super::common::undefined_lines(ub.as_ref(), "`g undefined` walks to it"),
        super::common::hang_lines(&note, "`g hang` walks into it")
    );
    if session.stopped().is_some() {
        return Ok(Exit::Incomplete);
    }
    if interactive {
        let _ = writeln!(out, "(h for help)");
    }
    let mut input = Input::new(interactive);
    while let Some(line) = input.next_line() {
        let line = line.trim();
        if !interactive && !line.is_empty() {
            // Echo the command, so a transcript reads like the session.
            let _ = writeln!(out, "> {line}");
        }
        match command(&mut session, t, &file, line, args) {
            Reply::Quit => break,
            Reply::Text(s) => {
                let _ = write!(out, "{s}");
            }
        }
        if session.stopped().is_some() {
            let _ = out.flush();
            return Ok(Exit::Incomplete);
        }
        let _ = out.flush();
    }
    Ok(if ub.is_some() {
        Exit::Undefined
    } else if note.hangs() {
        Exit::Hang
    } else {
        Exit::Success
    })
}

/// The state and the transitions (warp-level waits named by where `t`
/// writes them).
fn show<S: crate::rel::Bits>(s: &Session<'_, S>, t: &LitmusTest) -> String {
    let at = crate::explain::words::Positions::of(t);
    let pic = picture::picture_at(s.machine(), s.current(), Some(&at));
    let transitions = match s.transitions_within() {
        Ok(list) => text::transitions(s, &list),
        Err(why) => {
            format!("Incomplete: the transitions of this state could not be listed before {why}.\n")
        }
    };
    format!("{}{transitions}", text::state(s, &pic))
}

enum Reply {
    Text(String),
    Quit,
}

/// Carry out one command line.
fn command<S: crate::rel::Bits>(
    s: &mut Session<'_, S>,
    t: &LitmusTest,
    file: &str,
    line: &str,
    args: &StepArgs,
) -> Reply {
    let (cmd, rest) = match line.split_once(char::is_whitespace) {
        Some((c, r)) => (c, r.trim()),
        None => (line, ""),
    };
    let text = match cmd {
        "" => String::new(),
        "q" | "quit" | "exit" => return Reply::Quit,
        "h" | "help" | "?" => format!("{HELP}\n"),
        "p" => show(s, t),
        "u" => {
            if s.undo() {
                show(s, t)
            } else {
                "Nothing to undo: this is the initial state.\n".into()
            }
        }
        "r" => {
            if s.redo() {
                show(s, t)
            } else {
                "Nothing to redo.\n".into()
            }
        }
        "s" => {
            s.restart();
            show(s, t)
        }
        "o" => text::reachable(s, &s.reachable()),
        "f" => text::follow(s, file),
        "g" if rest.is_empty() => "error: expected an outcome after `g`, e.g. `g 1:r0=1`\n".into(),
        "g" if rest == "hang" => {
            let answer = s.go_to_hang();
            let said = text::go_to_hang(s, &answer);
            match answer {
                GoTo::Path(p) if !p.is_empty() => {
                    let _ = s.replay(&p);
                    format!("{said}{}", show(s, t))
                }
                _ => said,
            }
        }
        "g" if rest == "undefined" => {
            let answer = s.go_to_undefined();
            if let GoTo::Path(p) = &answer {
                let _ = s.replay(p);
            }
            let ub = s
                .undefined()
                .map(|u| crate::report::ub::line(&crate::report::ub::of(t, &u)));
            let said = text::go_to_undefined(s, &answer, ub.as_deref());
            match answer {
                GoTo::Path(p) if !p.is_empty() => format!("{said}{}", show(s, t)),
                _ => said,
            }
        }
        "g" => match outcome(t, rest) {
            Err(e) => e,
            Ok(want) => {
                let answer = s.go_to(&want);
                let said = text::go_to(s, rest, &answer);
                match answer {
                    GoTo::Path(p) if !p.is_empty() => {
                        // The path was found in this very state.
                        let _ = s.replay(&p);
                        format!("{said}{}", show(s, t))
                    }
                    _ => said,
                }
            }
        },
        "e" => explain(s, t, file, rest, args),
        "m" => missing(s, t, rest, args),
        n if n.parse::<usize>().is_ok() => match s.take(n.parse().unwrap_or(0)) {
            Ok(_) => show(s, t),
            Err(e) => format!("error: {e}\n"),
        },
        other => format!("error: unknown command `{other}` (h for help)\n"),
    };
    Reply::Text(text)
}

/// An outcome given on the command line: a condition or a final-state line.
fn outcome(t: &LitmusTest, text: &str) -> Result<Prop, String> {
    cond::parse_outcome(&t.program, &t.spans, text)
        .map_err(|d| LitmusError::new("outcome", text, d).rendered().to_string())
}

/// The outcome `e` and `m` are about: `rest` if given, else this run's
/// final state, else the test's condition.
fn asked<S: crate::rel::Bits>(
    s: &Session<'_, S>,
    t: &LitmusTest,
    rest: &str,
) -> Result<Prop, String> {
    if !rest.is_empty() {
        outcome(t, rest)
    } else if let Some(states) = s.final_states() {
        let m = s.machine();
        Ok(crate::explain::exactly(&m.columns, &states[0]))
    } else {
        Ok(t.program.condition.target())
    }
}

/// The explanation's limits under the session's options.
fn explain_limits(t: &LitmusTest, args: &StepArgs) -> ExplainLimits {
    ExplainLimits {
        loop_bound: args.test.loop_bound,
        barriers: args.test.barriers.for_program(&t.program),
        fairness: args.test.fairness,
        max_candidates: 1_000_000,
        deadline: Duration::try_from_secs_f64(args.timeout.max(0.0))
            .ok()
            .and_then(|d| std::time::Instant::now().checked_add(d)),
    }
}

/// `e [COND]`: the explanation of an outcome, in words.
fn explain<S: crate::rel::Bits>(
    s: &Session<'_, S>,
    t: &LitmusTest,
    file: &str,
    rest: &str,
    args: &StepArgs,
) -> String {
    let want = match asked(s, t, rest) {
        Ok(w) => w,
        Err(e) => return e,
    };
    let limits = explain_limits(t, args);
    let x = explain_outcome(t, file, &want, &limits, Caps::default(), args.max_states);
    crate::report::explain::text(&x)
}

/// `m [COND]`: the missing orderings of an outcome, in `explain`'s words.
fn missing<S: crate::rel::Bits>(
    s: &Session<'_, S>,
    t: &LitmusTest,
    rest: &str,
    args: &StepArgs,
) -> String {
    let want = match asked(s, t, rest) {
        Ok(w) => w,
        Err(e) => return e,
    };
    let answer = crate::explain::missing_orderings(t, &want, &explain_limits(t, args));
    format!(
        "Outcome {}\n{}",
        crate::litmus::print::prop(&t.program, &want),
        crate::report::explain::missing_answer_text(&answer)
    )
}

/// Command lines: from a line editor on a terminal, else from stdin.
enum Input {
    Editor(Box<rustyline::DefaultEditor>),
    Lines(std::io::StdinLock<'static>),
}

impl Input {
    fn new(interactive: bool) -> Input {
        if interactive {
            if let Ok(ed) = rustyline::DefaultEditor::new() {
                return Input::Editor(Box::new(ed));
            }
        }
        Input::Lines(std::io::stdin().lock())
    }

    fn next_line(&mut self) -> Option<String> {
        match self {
            Input::Editor(ed) => match ed.readline("step> ") {
                Ok(l) => {
                    let _ = ed.add_history_entry(l.as_str());
                    Some(l)
                }
                Err(_) => None,
            },
            Input::Lines(lines) => {
                let mut l = String::new();
                match lines.read_line(&mut l) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(l),
                }
            }
        }
    }
}
