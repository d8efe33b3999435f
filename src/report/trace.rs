//! The text form of a machine trace (`ptxmc trace`). This function alone owns
//! the layout; golden tests pin it.

use std::fmt::Write;
use std::path::Path;

use crate::op::trace::Trace;

/// Numbered steps, each with its effects indented below, then the final state
/// and the `--follow` list that replays the run.
pub fn text(name: &str, goal: Option<&str>, trace: &Trace, file: &Path) -> String {
    let mut out = String::new();
    match goal {
        Some(g) => writeln!(
            out,
            "Trace {name}: a shortest run of the machine ending in {g}"
        )
        .unwrap(),
        None => writeln!(out, "Trace {name}: replay of the given choices").unwrap(),
    }
    let width = trace
        .steps
        .iter()
        .map(|s| s.instruction.len())
        .max()
        .unwrap_or(0);
    for s in &trace.steps {
        writeln!(
            out,
            "{:>3}. {} {:<width$}  {}",
            s.index, s.thread, s.instruction, s.action
        )
        .unwrap();
        for e in &s.effects {
            writeln!(out, "       {e}").unwrap();
        }
    }
    match &trace.final_state {
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
