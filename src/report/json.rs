//! The JSON report: one object per test. Field names are part of the
//! interface (scripts read them); add fields, never rename them.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

use super::{TestReport, herd};
use crate::outcome::{Column, Outcomes, State};

/// The JSON object of one test.
pub fn report(r: &TestReport) -> Value {
    serde_json::to_value(object(r)).expect("a report serialises")
}

/// The JSON object of one test, ready to serialise: every field but the
/// outcomes is a value; the outcomes, most of a large report, are written
/// straight from the outcome set as they are serialised (a map per outcome
/// built as values costs ~20× the time and memory of writing it).
pub struct Report<'a> {
    /// The fields before `"outcomes"`.
    head: Map<String, Value>,
    /// The outcomes' keys, one per column.
    names: Vec<String>,
    /// The outcome set.
    outcomes: &'a Outcomes,
    /// The fields after `"outcomes"`.
    tail: Map<String, Value>,
}

impl Serialize for Report<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.head.len() + 1 + self.tail.len()))?;
        for (k, v) in &self.head {
            map.serialize_entry(k, v)?;
        }
        map.serialize_entry("outcomes", &OutcomeList(&self.names, self.outcomes))?;
        for (k, v) in &self.tail {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The outcomes as a list of objects, column name → value.
struct OutcomeList<'a>(&'a [String], &'a Outcomes);

impl Serialize for OutcomeList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.1.len()))?;
        for state in self.1 {
            seq.serialize_element(&OutcomeObject(self.0, state))?;
        }
        seq.end()
    }
}

/// One outcome as an object, column name → value.
struct OutcomeObject<'a>(&'a [String], &'a State);

impl Serialize for OutcomeObject<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0.iter().zip(self.1) {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// [`report`], ready to serialise without building the outcomes as values.
pub fn object<'a>(r: &TestReport<'a>) -> Report<'a> {
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
    let column_name = |t: &crate::ir::Term| match *t {
        crate::ir::Term::Reg { thread, reg } => Some(format!(
            "{}:{}",
            p.threads[thread].name, p.threads[thread].regs[reg].name
        )),
        crate::ir::Term::Loc(l) => Some(p.locations[l].name.clone()),
        crate::ir::Term::Const(_) => None,
    };
    let locations: Vec<String> = p.shown.iter().filter_map(column_name).collect();
    let filter = p.filter.as_ref().map(|f| herd::proposition(p, f));
    let candidates = res.stats.ax.map_or(Value::Null, |s| json!(s.nodes));
    let disagreement = res.disagreement.as_ref().map(|d| {
        let list = |o: &crate::outcome::Outcomes| -> Vec<String> {
            o.iter().map(|s| herd::state(p, &res.columns, s)).collect()
        };
        let word = |h: bool| if h { "hangs" } else { "terminates" };
        json!({
            "only_op": list(&d.only_op),
            "only_ax": list(&d.only_ax),
            "termination": d.termination.map(|(op, ax)| json!({ "op": word(op), "ax": word(ax) })),
        })
    });
    let mut head = json!({
        "name": p.name,
        "file": r.file,
        "engine": res.engine,
        "model": r.model.to_string(),
        "condition": herd::condition(p),
        "quantifier": p.condition.quantifier.keyword(),
        "locations": locations,
        "filter": filter,
        "filtered_out": res.filtered_out.len(),
    });
    if res.columns.is_projection() {
        // `--project`: the columns the outcomes are over (absent: every
        // register and location, herd's final states).
        head["states_over"] = json!(names.clone());
    }
    let mut tail = json!({
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
        "termination": termination(r),
        "undefined": r.undefined,
        "races": r.races.races,
        "races_status": r.races.status,
        "races_incomplete_reason": r.races.why,
        "agree": res.disagreement.is_none(),
        "disagreement": disagreement,
        "notes": r.notes,
        "candidates": candidates,
        "stats": stats(r),
        "engine_stats": res.stats,
        "time_s": res.seconds,
    });
    if res.partial {
        // No engine finished (a limit, or `--verdict-only` stopped it): the
        // outcomes listed are only those found, never the full set.
        tail["states_partial"] = json!(true);
    }
    let (Value::Object(head), Value::Object(tail)) = (head, tail) else {
        unreachable!("json! of braces is an object")
    };
    Report {
        head,
        names,
        outcomes: &res.outcomes,
        tail,
    }
}

/// The `"termination"` object: `checked` (the verdict is conclusive),
/// `hangs`, `kind` (`deadlock` or `spin`), the stuck `threads` and `why`.
fn termination(r: &TestReport) -> Value {
    let p = r.program;
    let t = &r.result.termination;
    let threads: Vec<Value> = t.hang().map_or(Vec::new(), |h| {
        super::hang::threads(p, h)
            .into_iter()
            .map(|s| {
                json!({
                    "thread": super::hang::thread_name(p, s.thread),
                    "at": super::hang::at(p, s),
                    "on": super::hang::on(s),
                    "why": super::hang::clause(p, s),
                })
            })
            .collect()
    });
    json!({
        "checked": t.checked(),
        "hangs": t.hangs(),
        "kind": t.hang().map(|h| h.kind().as_str()),
        "threads": threads,
        "why": super::hang::why(p, t),
    })
}

/// The `"stats"` object: the operational exploration's counters when the
/// machine ran; for `--engine ax` alone, the oracle's search nodes stand for
/// states (the explorer-only counters are 0). `executions` is the oracle's
/// count of consistent executions (`null` when it did not run), and
/// `states_per_execution` the machine's distinct states per execution: how
/// far the explorer is from visiting each execution once.
fn stats(r: &TestReport) -> Value {
    let res = r.result;
    let executions = res.stats.ax.map(|a| a.executions);
    if let Some(o) = &res.stats.op {
        let ratio = executions
            .filter(|&e| e > 0)
            .map(|e| o.distinct_states as f64 / e as f64);
        return json!({
            "executions": executions,
            "states_per_execution": ratio,
            "states": o.states,
            "distinct_states": o.distinct_states,
            "transitions": o.transitions,
            "dedup_hits": o.dedup_hits,
            "por_pruned": o.por_pruned,
            "elapsed_s": o.elapsed_s,
            "states_per_s": o.states_per_s,
            "peak_rss_bytes": o.peak_rss_bytes,
        });
    }
    let nodes = res.stats.ax.map_or(0, |a| a.nodes);
    json!({
        "executions": executions,
        "states_per_execution": null,
        "states": nodes,
        "distinct_states": nodes,
        "transitions": nodes.saturating_sub(1),
        "dedup_hits": 0,
        "por_pruned": 0,
        "elapsed_s": res.seconds,
        "states_per_s": if res.seconds > 0.0 { nodes as f64 / res.seconds } else { 0.0 },
        "peak_rss_bytes": crate::explore::peak_rss().unwrap_or(0),
    })
}
