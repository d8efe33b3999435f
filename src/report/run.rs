//! The report of `ptxmc run` for one test text, as one function that the
//! command line and the playground's `POST /api/run` both call, so the
//! server answers exactly what `ptxmc run --format json` prints.

use serde_json::Value;

use super::{TestReport, json};
use crate::engine::{self, RunOptions, RunResult};
use crate::litmus::{self, LitmusError, LitmusTest};

/// The most search work (oracle nodes, or machine states) for which `run`
/// also looks for fences the test's outcome does not need.
pub const LINT_WORK: u64 = 20_000;

/// The `Note:` lines of a test's report: notes about its text, then the
/// lints. The redundant-fence lint reruns the oracle once per fence, so it
/// runs only for tests whose run was complete and small; the measure is the
/// engines' work, never the clock, so the notes are the same on every machine.
pub fn notes(t: &LitmusTest, result: &RunResult) -> Vec<String> {
    let work = result
        .stats
        .ax
        .map(|a| a.nodes)
        .or(result.stats.op.map(|o| o.distinct_states))
        .unwrap_or(u64::MAX);
    let cheap = result.incomplete.is_none() && !result.bound_hit && work <= LINT_WORK;
    let mut notes = t.notes();
    notes.extend(crate::explain::lints::notes(&t.program, cheap));
    notes
}

/// Parse `text` (named `path`: its extension picks the dialect), admit its
/// tests under `opts.model`, run each, and return the JSON array that
/// `ptxmc run --format json PATH` prints; or the first parse or admission
/// error, rendered as the command line renders it.
pub fn json_of_source(
    path: &str,
    text: &str,
    opts: &RunOptions,
) -> Result<Vec<Value>, LitmusError> {
    let tests = litmus::parse_source(path, text)?;
    for t in &tests {
        opts.model
            .admit(&t.program, &t.spans)
            .map_err(|d| t.error(d))?;
    }
    Ok(json_of_tests(&tests, opts))
}

/// Run each of `tests` (parsed and admitted: litmus tests or kernels) and
/// return the JSON array that `ptxmc run --format json` (or `ptxmc kernel
/// --format json`) prints for them.
pub fn json_of_tests(tests: &[LitmusTest], opts: &RunOptions) -> Vec<Value> {
    tests
        .iter()
        .map(|t| {
            let result = engine::run(&t.program, opts);
            let rep = TestReport {
                program: &t.program,
                file: t.display_path(),
                model: opts.model,
                result: &result,
                notes: notes(t, &result),
                undefined: result.undefined.as_ref().map(|u| super::ub::of(t, u)),
                races: super::races::of(t, &result.races),
            };
            json::report(&rep)
        })
        .collect()
}
