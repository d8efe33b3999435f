//! The text and JSON forms of `ptxmc trace`'s answer: a run of the machine,
//! or why there is none. These functions alone own the layouts; golden tests
//! pin them.

use std::fmt::Write;
use std::path::Path;

use crate::ir::Program;
use crate::op::trace::{Lasso, Trace, TraceStep};
use crate::outcome::Columns;

/// The final states a trace ends in, herd-style, joined by `or` (a location
/// with several coherence-maximal versions gives several); `None` if the run
/// does not end in a final state.
pub fn final_states(p: &Program, cols: &Columns, trace: &Trace) -> Option<String> {
    trace.final_states.as_ref().map(|states| {
        states
            .iter()
            .map(|s| super::herd::state(p, cols, s))
            .collect::<Vec<_>>()
            .join("  or  ")
    })
}

/// Numbered steps, each with its effects indented below.
fn steps(out: &mut String, steps: &[TraceStep]) {
    marked_steps(out, steps, &[]);
}

/// [`steps`], with `   <- race` after the steps numbered in `marks`.
fn marked_steps(out: &mut String, steps: &[TraceStep], marks: &[usize]) {
    let width = steps.iter().map(|s| s.instruction.len()).max().unwrap_or(0);
    for s in steps {
        let mark = if marks.contains(&s.index) {
            "   <- race"
        } else {
            ""
        };
        writeln!(
            out,
            "{:>3}. {} {:<width$}  {}{mark}",
            s.index, s.thread, s.instruction, s.action
        )
        .unwrap();
        for e in &s.effects {
            writeln!(out, "       {e}").unwrap();
        }
    }
}

/// Numbered steps, each with its effects indented below, then the final state
/// and the `--follow` list that replays the run. `p` and `cols` are the
/// program the machine ran and its columns.
pub fn text(p: &Program, cols: &Columns, goal: Option<&str>, trace: &Trace, file: &Path) -> String {
    let name = &p.name;
    let mut out = String::new();
    match goal {
        Some(g) => writeln!(
            out,
            "Trace {name}: a shortest run of the machine ending in {g}"
        )
        .unwrap(),
        None => writeln!(out, "Trace {name}: replay of the given choices").unwrap(),
    }
    steps(&mut out, &trace.steps);
    match final_states(p, cols, trace) {
        Some(f) => writeln!(out, "Final state: {f}").unwrap(),
        None => writeln!(out, "The run has not reached a final state.").unwrap(),
    }
    let list: Vec<String> = trace.choices.iter().map(usize::to_string).collect();
    writeln!(
        out,
        "Replay: ptxmc trace {} --follow {}",
        file.display(),
        list.join(",")
    )
    .unwrap();
    out
}

/// The machine's run that shows a race (`ptxmc trace --race N`,
/// `step::race`): its steps, the two retirements marked, the final state,
/// the check in words and the `--follow` line (`replay_args`: what else the
/// replay needs, e.g. ` --loop-bound 3`).
pub fn race_run_text(
    p: &Program,
    cols: &Columns,
    trace: &Trace,
    marks: (usize, usize),
    file: &Path,
    replay_args: &str,
) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "A run of the machine in which they race (a shortest one; the two retirements marked):"
    )
    .unwrap();
    marked_steps(&mut out, &trace.steps, &[marks.0, marks.1]);
    match final_states(p, cols, trace) {
        Some(f) => writeln!(out, "Final state: {f}").unwrap(),
        None => writeln!(out, "The run has not reached a final state.").unwrap(),
    }
    let (a, b) = (marks.0.min(marks.1), marks.0.max(marks.1));
    let named = |k: usize| {
        let s = &trace.steps[k - 1];
        format!("{} `{}`", s.thread, s.instruction)
    };
    writeln!(
        out,
        "The machine checks it: step {a} retires {} and step {b} retires {}, each without the other in its causal past (its view of the line it accesses: Front and Front⁺, docs/machine.md §2).",
        named(a),
        named(b)
    )
    .unwrap();
    let list: Vec<String> = trace.choices.iter().map(usize::to_string).collect();
    writeln!(
        out,
        "Replay: ptxmc trace {} --follow {}{replay_args}",
        file.display(),
        list.join(",")
    )
    .unwrap();
    out
}

/// A run into a hang (`ptxmc trace --hang`): the steps to the stuck
/// configuration, the iteration each spinning thread then repeats forever,
/// which threads wait on what, and why nothing can release them. `source`
/// is the test as written (for the hang's words); `stem` the replayed run.
pub fn hang_text(source: &Program, stem: &Trace, lasso: &Lasso, file: &Path) -> String {
    let h = &lasso.hang;
    let kind = h.kind().as_str();
    let mut out = String::new();
    writeln!(
        out,
        "Trace {}: a shortest run of the machine into a hang ({kind})",
        source.name
    )
    .unwrap();
    steps(&mut out, &stem.steps);
    if lasso.cycle.is_empty() {
        writeln!(out, "Then no thread can move, forever.").unwrap();
    } else {
        writeln!(
            out,
            "Then forever, each iteration reading the latest versions it must see:"
        )
        .unwrap();
        steps(&mut out, &lasso.cycle);
    }
    writeln!(out, "Stuck:").unwrap();
    let stuck = super::hang::threads(source, h);
    for s in &stuck {
        writeln!(out, "  {}", super::hang::clause(source, s)).unwrap();
    }
    let why = if lasso.cycle.is_empty() {
        "every thread has finished or waits, so nothing can arrive, signal or write any more"
    } else {
        "every other thread has finished or is stuck, so no write will change what the loop reads, \
         and a read cannot keep returning a value overwritten by a write it must eventually see (fairness)"
    };
    let them = if stuck.len() == 1 { "it" } else { "them" };
    writeln!(out, "Nothing can release {them}: {why}.").unwrap();
    let list: Vec<String> = lasso.choices.iter().map(usize::to_string).collect();
    writeln!(
        out,
        "Replay: ptxmc trace {} --follow {}",
        file.display(),
        list.join(",")
    )
    .unwrap();
    out
}

/// A run to undefined behaviour (`ptxmc trace --undefined`): the steps,
/// the last of which is the undefined one, then the undefined step in
/// `run`'s words with the ISA's sentence, and the replay list.
pub fn undefined_text(name: &str, trace: &Trace, ub: &super::ub::UbReport, file: &Path) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "Trace {name}: a shortest run of the machine to undefined behaviour"
    )
    .unwrap();
    steps(&mut out, &trace.steps);
    writeln!(out, "{}", super::ub::line(ub)).unwrap();
    let list: Vec<String> = trace.choices.iter().map(usize::to_string).collect();
    writeln!(
        out,
        "Replay: ptxmc trace {} --follow {}",
        file.display(),
        list.join(",")
    )
    .unwrap();
    out
}

/// Why `trace` shows no run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoRun {
    /// No run of the machine ends in the outcome: the model forbids it.
    Forbidden,
    /// The search for a run stopped at a limit before finding one.
    Incomplete(String),
}

/// The text answer when there is no run to show.
pub fn no_run_text(goal: &str, why: &NoRun, file: &Path) -> String {
    match why {
        NoRun::Forbidden => format!(
            "No run of the machine ends in {goal}: the model forbids this outcome.\n\
             Why: ptxmc explain {} --outcome '{goal}'\n",
            file.display()
        ),
        NoRun::Incomplete(reason) => {
            format!("Incomplete: no run ending in {goal} was found ({reason}).\n")
        }
    }
}

/// The JSON answer: the run (`"reachable": true`, its steps, choices and
/// final state) or why there is none (`"reachable": false` with `"why"`, or
/// `"incomplete"` with its reason).
pub fn json(
    p: &Program,
    cols: &Columns,
    file: &str,
    goal: Option<&str>,
    answer: Result<&Trace, &NoRun>,
) -> serde_json::Value {
    let mut v = serde_json::json!({
        "name": p.name,
        "file": file,
        "outcome": goal,
    });
    let obj = v.as_object_mut().expect("an object");
    match answer {
        Ok(trace) => {
            obj.insert("reachable".into(), true.into());
            obj.insert("steps".into(), serde_json::json!(trace.steps));
            obj.insert("choices".into(), serde_json::json!(trace.choices));
            obj.insert(
                "final_state".into(),
                serde_json::json!(final_states(p, cols, trace)),
            );
        }
        Err(NoRun::Forbidden) => {
            obj.insert("reachable".into(), false.into());
            obj.insert(
                "why".into(),
                "no run of the machine ends in this outcome: the model forbids it".into(),
            );
        }
        Err(NoRun::Incomplete(reason)) => {
            obj.insert("reachable".into(), serde_json::Value::Null);
            obj.insert("incomplete".into(), reason.clone().into());
        }
    }
    v
}
