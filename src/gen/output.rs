//! The two outputs of `ptxmc gen` besides the litmus files: `expected.csv`
//! rows (Dat3M's `path,1|0`) and JSON lines (one object per test, so that
//! shards merge with `cat`). Field names are an interface: add, never rename.

use serde_json::json;

use super::{GenTest, file_name};
use crate::engine::RunResult;

/// The `expected.csv` row of a classified test: its path relative to the
/// output directory, then 1 if the cycle's outcome is allowed.
pub fn csv_row(t: &GenTest, r: &RunResult) -> String {
    format!("{},{}", file_name(&t.name), r.verdict.holds as u8)
}

/// The JSON line of a test (no trailing newline); the verdict fields are
/// `null` when it was not classified (`--no-classify`). `complete` is false
/// when a limit stopped an engine: the verdict is then not established.
pub fn jsonl_line(t: &GenTest, r: Option<&RunResult>) -> String {
    json!({
        "name": t.name,
        "file": file_name(&t.name),
        "cycle": t.cycle,
        "edges": t.edges,
        "threads": t.program.threads.len(),
        "engine": r.map(|r| r.engine),
        "holds": r.map(|r| r.verdict.holds),
        "expected": r.map(|r| r.verdict.holds as u8),
        "outcomes": r.map(|r| r.outcomes.len()),
        "positive": r.map(|r| r.verdict.positive),
        "negative": r.map(|r| r.verdict.negative),
        "complete": r.map(|r| r.incomplete.is_none() && r.verdict_is_definitive(&t.program)),
        "time_s": r.map(|r| r.seconds),
        "litmus": t.text,
    })
    .to_string()
}
