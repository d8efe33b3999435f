//! The text form of a machine trace (`ptxmc trace`). This function alone owns
//! the layout; golden tests pin it.

use std::fmt::Write;
use std::path::Path;

use crate::ir::Program;
use crate::op::trace::Trace;
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
