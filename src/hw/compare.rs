//! A histogram beside the model's outcome set.
//!
//! [`compare`] runs the axiomatic oracle on the test (as `ptxmc run --engine
//! ax` does) and sorts every final state into three categories: allowed and
//! observed (with counts), allowed but never observed, and observed but
//! forbidden. A forbidden observation is explained when the SASS check says
//! the test's machine code was altered by the compiler; otherwise it is a
//! model bug or a harness bug to investigate.

use serde_json::json;
use std::fmt::Write as _;

use super::column_names;
use super::histogram::Histogram;
use super::sass::{self, Functions, SassCheck};
use crate::engine::{self, EngineChoice, RunOptions};
use crate::ir::Program;
use crate::outcome::State;

/// The largest loop bound the comparison tries: when a looping test shows
/// an outcome outside the model's set at the default bound, the oracle is
/// run again with more iterations, up to this many.
pub const MAX_LOOP_BOUND: u32 = 8;

/// What explains the forbidden observations of a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Explanation {
    /// Nothing forbidden was observed.
    NothingForbidden,
    /// The SASS check found the machine code altered (a compiler effect).
    CompilerEffect,
    /// The test loops, and even at [`MAX_LOOP_BOUND`] iterations the model's
    /// outcome set is cut by the bound: the GPU ran longer than the model
    /// looked, so nothing is decided.
    BeyondLoopBound,
    /// Not explained: a model bug or a harness bug to investigate.
    Investigate,
}

impl Explanation {
    /// The label used in text and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Explanation::NothingForbidden => "nothing forbidden observed",
            Explanation::CompilerEffect => "compiler effect (the SASS does not match the test)",
            Explanation::BeyondLoopBound => {
                "beyond the model's loop bound (the GPU iterated more often than the model unrolled)"
            }
            Explanation::Investigate => "model bug or harness bug: investigate",
        }
    }
}

/// The comparison of one histogram with the model.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The test (`path` or `path[row]`).
    pub test: String,
    /// The test's name.
    pub name: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Instances that finished on the GPU.
    pub runs: u64,
    /// Instances where a loop gave up.
    pub timeouts: u64,
    /// Allowed by the model and observed, with counts.
    pub allowed_observed: Vec<(State, u64)>,
    /// Allowed by the model, never observed.
    pub allowed_unobserved: Vec<State>,
    /// Observed although the model forbids them, with counts.
    pub forbidden_observed: Vec<(State, u64)>,
    /// The SASS check, when a dump was given.
    pub sass: Option<SassCheck>,
    /// The model's set may lack outcomes (a loop bound or a limit cut it).
    pub model_partial: bool,
    /// What explains the forbidden observations.
    pub explanation: Explanation,
}

impl Comparison {
    /// Exit 0 when nothing forbidden was observed, the SASS check explains
    /// it, or the model's set is cut by a loop bound (the outcome is then
    /// not known to be forbidden).
    pub fn ok(&self) -> bool {
        self.explanation != Explanation::Investigate
    }
}

/// Compare `h` with the outcomes the model allows for `p`; `funcs` is the
/// SASS dump of the bundle that ran it, if any.
pub fn compare(
    h: &Histogram,
    p: &Program,
    funcs: Option<&Functions>,
) -> Result<Comparison, String> {
    let names = column_names(p);
    if names != h.columns {
        return Err(format!(
            "the histogram's columns [{}] are not the test's [{}]",
            h.columns.join(", "),
            names.join(", ")
        ));
    }
    let mut seen = std::collections::BTreeMap::<State, u64>::new();
    for o in &h.outcomes {
        let n = seen.entry(o.values.clone()).or_default();
        *n = n
            .checked_add(o.count)
            .ok_or("the histogram's counts of one outcome add up beyond 64 bits")?;
    }
    let mut opts = RunOptions {
        engine: EngineChoice::Ax,
        // The recorded campaigns ran harnesses that emit the dialect's
        // barriers as Dat3M names them (`bar.cta.sync a, b, n` as
        // `bar.sync ID, 32·n`, `docs/hardware.md`): judge them so.
        barriers: crate::model::barrier::Reading::Dat3m,
        ..RunOptions::default()
    };
    let mut result = engine::run(p, &opts);
    // A loop the model unrolled fewer times than the GPU ran it: unroll more
    // before calling an observation forbidden.
    while result.bound_hit
        && opts.loop_bound < MAX_LOOP_BOUND
        && seen.iter().any(|(s, n)| {
            *n > 0 && !result.outcomes.contains(s) && !result.filtered_out.contains(s)
        })
    {
        opts.loop_bound = (opts.loop_bound * 2).min(MAX_LOOP_BOUND);
        result = engine::run(p, &opts);
    }
    // Every state the model allows: a test's `filter` only narrows what
    // reports list, not what the GPU may show.
    let allowed: crate::outcome::Outcomes = result
        .outcomes
        .union(&result.filtered_out)
        .cloned()
        .collect();
    let allowed = &allowed;
    let mut allowed_observed = Vec::new();
    let mut forbidden_observed = Vec::new();
    for (state, count) in &seen {
        if *count == 0 {
            continue;
        }
        if allowed.contains(state) {
            allowed_observed.push((state.clone(), *count));
        } else {
            forbidden_observed.push((state.clone(), *count));
        }
    }
    let allowed_unobserved = allowed
        .iter()
        .filter(|s| seen.get(*s).copied().unwrap_or(0) == 0)
        .cloned()
        .collect();
    let sass = funcs.map(|f| sass::check(p, &h.id, f));
    let explanation = if forbidden_observed.is_empty() {
        Explanation::NothingForbidden
    } else if sass.as_ref().is_some_and(|s| s.compiler_altered()) {
        Explanation::CompilerEffect
    } else if result.bound_hit {
        Explanation::BeyondLoopBound
    } else {
        Explanation::Investigate
    };
    Ok(Comparison {
        test: h.test.clone(),
        name: if h.name.is_empty() {
            p.name.clone()
        } else {
            h.name.clone()
        },
        columns: h.columns.clone(),
        runs: h.runs,
        timeouts: h.timeouts,
        allowed_observed,
        allowed_unobserved,
        forbidden_observed,
        sass,
        model_partial: result.bound_hit || result.incomplete.is_some(),
        explanation,
    })
}

/// A final state as `P1:r0=1; P1:r1=0; x=1;`.
fn state_text(columns: &[String], s: &State) -> String {
    columns
        .iter()
        .zip(s)
        .map(|(c, v)| format!("{c}={v};"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn percent(count: u64, runs: u64) -> String {
    if runs == 0 {
        String::new()
    } else {
        format!(" ({:.4}%)", 100.0 * count as f64 / runs as f64)
    }
}

/// The comparison as text.
pub fn text(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Test {} ({}): {} runs, {} timeouts",
        c.name, c.test, c.runs, c.timeouts
    );
    let _ = writeln!(s, "Allowed and observed: {}", c.allowed_observed.len());
    for (st, n) in &c.allowed_observed {
        let _ = writeln!(
            s,
            "  {:>12}{}  {}",
            n,
            percent(*n, c.runs),
            state_text(&c.columns, st)
        );
    }
    let _ = writeln!(s, "Allowed, never observed: {}", c.allowed_unobserved.len());
    for st in &c.allowed_unobserved {
        let _ = writeln!(s, "  {}", state_text(&c.columns, st));
    }
    let _ = writeln!(s, "Observed but forbidden: {}", c.forbidden_observed.len());
    let flag = match c.explanation {
        Explanation::CompilerEffect => "compiler effect",
        _ => "model bug or harness bug: investigate",
    };
    for (st, n) in &c.forbidden_observed {
        let _ = writeln!(
            s,
            "  {:>12}{}  {}  [{flag}]",
            n,
            percent(*n, c.runs),
            state_text(&c.columns, st)
        );
    }
    match &c.sass {
        None => {
            let _ = writeln!(s, "SASS: not checked (no --sass)");
        }
        Some(check) => {
            let missing = check.missing();
            if check.compiler_altered() {
                let _ = writeln!(s, "SASS: compiler-altered");
                for r in check.reasons() {
                    let _ = writeln!(s, "  {r}");
                }
            } else if !missing.is_empty() {
                let _ = writeln!(s, "SASS: not found: {}", missing.join(", "));
            } else {
                let _ = writeln!(s, "SASS: matches the test");
            }
            for n in check.notes() {
                let _ = writeln!(s, "  note: {n}");
            }
        }
    }
    if c.model_partial {
        let _ = writeln!(
            s,
            "Note: the model's outcome set was cut by a loop bound or a limit"
        );
    }
    let _ = writeln!(s, "Verdict: {}", c.explanation.as_str());
    s
}

/// The comparison as JSON.
pub fn to_json(c: &Comparison) -> serde_json::Value {
    let states = |v: &[(State, u64)]| -> Vec<serde_json::Value> {
        v.iter()
            .map(|(s, n)| json!({"values": s, "count": n}))
            .collect()
    };
    json!({
        "test": c.test,
        "name": c.name,
        "columns": c.columns,
        "runs": c.runs,
        "timeouts": c.timeouts,
        "allowed_observed": states(&c.allowed_observed),
        "allowed_unobserved": c.allowed_unobserved,
        "forbidden_observed": states(&c.forbidden_observed),
        "sass": c.sass.as_ref().map(|s| json!({
            "compiler_altered": s.compiler_altered(),
            "missing": s.missing(),
            "reasons": s.reasons(),
            "notes": s.notes(),
            "threads": s.threads,
        })),
        "model_partial": c.model_partial,
        "verdict": match c.explanation {
            Explanation::NothingForbidden => "ok",
            Explanation::CompilerEffect => "compiler-effect",
            Explanation::BeyondLoopBound => "beyond-loop-bound",
            Explanation::Investigate => "investigate",
        },
        "ok": c.ok(),
    })
}

/// A kernel's histogram ([`super::kernels`]: final buffers of whole
/// launches) beside the model.
#[derive(Clone, Debug)]
pub struct KernelComparison {
    /// The kernel, as the histogram names it.
    pub test: String,
    /// Launches that finished.
    pub runs: u64,
    /// Final buffers the GPU showed that the model allows, with counts.
    pub allowed_observed: Vec<(State, u64)>,
    /// Final buffers the GPU showed that the model forbids, with counts.
    pub forbidden_observed: Vec<(State, u64)>,
    /// The GPU hung on a launch; whether the model says the kernel can hang.
    pub hang: Option<bool>,
    /// A launch failed on the GPU (its message); whether the model says
    /// the kernel can reach undefined behaviour.
    pub fault: Option<(String, bool)>,
    /// The model's set may lack states (a loop bound or a limit cut it).
    pub model_partial: bool,
}

impl KernelComparison {
    /// Nothing the GPU did is outside the model: every final state is
    /// allowed, a hang only where the model finds one, a fault only where
    /// it finds undefined behaviour.
    pub fn ok(&self) -> bool {
        self.forbidden_observed.is_empty()
            && self.hang != Some(false)
            && !matches!(self.fault, Some((_, false)))
    }
}

/// Compare a kernel's histogram with the model's outcomes for `p` (the
/// kernel lowered under its launch): the model's final states are projected
/// onto the histogram's columns, the buffer elements (`NAME[i]`). The
/// machine decides (`--engine op`: the engines agree on the corpus, and the
/// oracle's termination search does not finish on 64-thread barriers).
pub fn compare_kernel(h: &Histogram, p: &Program) -> Result<KernelComparison, String> {
    let cols = crate::outcome::Columns::of(p);
    let names = column_names(p);
    let at: Vec<usize> = h
        .columns
        .iter()
        .map(|c| {
            names.iter().position(|n| n == c).ok_or_else(|| {
                format!("the histogram's column `{c}` is no buffer element of the kernel")
            })
        })
        .collect::<Result<_, _>>()?;
    debug_assert_eq!(names.len(), cols.columns.len());
    let opts = RunOptions {
        engine: EngineChoice::Op,
        ..RunOptions::default()
    };
    let result = engine::run(p, &opts);
    let project = |s: &State| -> State { at.iter().map(|&i| s[i]).collect() };
    let allowed: std::collections::BTreeSet<State> = result
        .outcomes
        .iter()
        .chain(result.filtered_out.iter())
        .map(project)
        .collect();
    let mut allowed_observed = Vec::new();
    let mut forbidden_observed = Vec::new();
    for o in &h.outcomes {
        if allowed.contains(&o.values) {
            allowed_observed.push((o.values.clone(), o.count));
        } else {
            forbidden_observed.push((o.values.clone(), o.count));
        }
    }
    Ok(KernelComparison {
        test: h.test.clone(),
        runs: h.runs,
        allowed_observed,
        forbidden_observed,
        hang: (h.hangs > 0).then(|| result.termination.hangs()),
        fault: h.fault.clone().map(|f| (f, result.undefined.is_some())),
        model_partial: result.bound_hit || result.incomplete.is_some(),
    })
}

/// The histogram's columns of a kernel comparison's states (its buffer
/// elements, in the histogram's order).
fn kernel_state_text(columns: &[String], s: &State) -> String {
    state_text(columns, s)
}

/// A kernel comparison as text (`columns`: the histogram's).
pub fn kernel_text(c: &KernelComparison, columns: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Kernel {}: {} launches", c.test, c.runs);
    let _ = writeln!(s, "Allowed and observed: {}", c.allowed_observed.len());
    for (st, n) in &c.allowed_observed {
        let _ = writeln!(
            s,
            "  {:>12}{}  {}",
            n,
            percent(*n, c.runs),
            kernel_state_text(columns, st)
        );
    }
    let _ = writeln!(s, "Observed but forbidden: {}", c.forbidden_observed.len());
    for (st, n) in &c.forbidden_observed {
        let _ = writeln!(
            s,
            "  {:>12}{}  {}  [model bug or harness bug: investigate]",
            n,
            percent(*n, c.runs),
            kernel_state_text(columns, st)
        );
    }
    match c.hang {
        None => {}
        Some(true) => {
            let _ = writeln!(s, "Hang: a launch hung; the model finds a hang too");
        }
        Some(false) => {
            let _ = writeln!(
                s,
                "Hang: a launch hung but the model says every execution terminates: investigate"
            );
        }
    }
    match &c.fault {
        None => {}
        Some((msg, true)) => {
            let _ = writeln!(s, "Fault: {msg}; the model finds undefined behaviour too");
        }
        Some((msg, false)) => {
            let _ = writeln!(
                s,
                "Fault: {msg}; the model finds no undefined behaviour: investigate"
            );
        }
    }
    if c.model_partial {
        let _ = writeln!(
            s,
            "Note: the model's outcome set was cut by a loop bound or a limit"
        );
    }
    let _ = writeln!(
        s,
        "Verdict: {}",
        if c.ok() {
            "nothing observed outside the model"
        } else {
            "observed outside the model: investigate"
        }
    );
    s
}

/// A kernel comparison as JSON (`columns`: the histogram's).
pub fn kernel_to_json(c: &KernelComparison, columns: &[String]) -> serde_json::Value {
    let states = |v: &[(State, u64)]| -> Vec<serde_json::Value> {
        v.iter()
            .map(|(s, n)| json!({"values": s, "count": n}))
            .collect()
    };
    json!({
        "test": c.test,
        "kind": "kernel",
        "columns": columns,
        "runs": c.runs,
        "allowed_observed": states(&c.allowed_observed),
        "forbidden_observed": states(&c.forbidden_observed),
        "hang": c.hang.map(|model| json!({"observed": true, "model_hangs": model})),
        "fault": c.fault.as_ref().map(|(m, ub)| json!({"message": m, "model_undefined": ub})),
        "model_partial": c.model_partial,
        "verdict": if c.ok() { "ok" } else { "investigate" },
        "ok": c.ok(),
    })
}
