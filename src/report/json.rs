//! The JSON report: one object per test. Field names are part of the
//! interface (scripts read them); add fields, never rename them.

use serde_json::{Map, Value, json};

use super::{TestReport, herd};
use crate::outcome::Column;

/// The JSON object of one test.
pub fn report(r: &TestReport) -> Value {
    let p = r.program;
    let res = r.result;
    let names: Vec<String> = res
        .columns
        .columns
        .iter()
        .map(|c| match c {
            Column::Reg { thread, reg } => format!(
                "{}:{}",
                p.threads[*thread].name, p.threads[*thread].regs[*reg].name
            ),
            Column::Loc(l) => p.locations[*l].name.clone(),
        })
        .collect();
    let outcomes: Vec<Value> = res
        .outcomes
        .iter()
        .map(|s| {
            let m: Map<String, Value> = names
                .iter()
                .cloned()
                .zip(s.iter().map(|v| json!(v)))
                .collect();
            Value::Object(m)
        })
        .collect();
    let candidates = res.stats.ax.map_or(Value::Null, |s| json!(s.nodes));
    let disagreement = res.disagreement.as_ref().map(|d| {
        let list = |o: &crate::outcome::Outcomes| -> Vec<String> {
            o.iter().map(|s| herd::state(p, &res.columns, s)).collect()
        };
        json!({ "only_op": list(&d.only_op), "only_ax": list(&d.only_ax) })
    });
    json!({
        "name": p.name,
        "file": r.file,
        "engine": res.engine,
        "model": r.model.to_string(),
        "condition": herd::condition(p),
        "quantifier": p.condition.quantifier.keyword(),
        "outcomes": outcomes,
        "verdict": if res.verdict.holds { "Ok" } else { "No" },
        "holds": res.verdict.holds,
        "positive": res.verdict.positive,
        "negative": res.verdict.negative,
        "observation": r.observation(),
        "bound_hit": res.bound_hit,
        "complete": res.incomplete.is_none(),
        "incomplete_reason": res.incomplete,
        "expectation": p.expectation.as_ref().map(|e| json!({
            "kind": e.kind.as_str(),
            "name": e.name,
            "met": r.expectation_met(),
        })),
        "agree": res.disagreement.is_none(),
        "disagreement": disagreement,
        "candidates": candidates,
        "engine_stats": res.stats,
        "time_s": res.seconds,
    })
}
