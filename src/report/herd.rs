//! herd7's text summary. This module alone decides its layout; golden tests
//! pin it byte for byte.
//!
//! ```text
//! Test MP Allowed
//! States 3
//! 1:r0=0; 1:r1=0; f=1; x=1;
//! ...
//! No
//! Witnesses
//! Positive: 0 Negative: 3
//! Condition exists (1:r0=1 /\ 1:r1=0)
//! Observation MP Never 0 3
//! Time MP 0.00
//! ```
//! Positive and Negative count final states (herd counts executions); lines
//! beyond herd's say when a loop bound or a limit cut the search short,
//! whether a mixedproxy expectation is met, and, for a program with a loop, a
//! barrier or a wait, its termination (`Hang: <kind> — <why>`, or
//! `Termination: checked — …` / `Termination: not checked — …`).

use std::fmt::Write;

use super::TestReport;
use crate::engine::{NotChecked, Termination};
use crate::ir::{CmpOp, Program, Prop, Term};
use crate::outcome::{Columns, LinePrinter, State};

/// The herd-style report of one test.
pub fn report(r: &TestReport) -> String {
    let mut out = Vec::new();
    write(r, &mut out).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("a report is UTF-8")
}

/// The herd-style report of one test, written to `out` as it is made: the
/// final states, most of a large report, go out a buffer at a time instead
/// of being held whole.
pub fn write(r: &TestReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    out.write_all(head(r).as_bytes())?;
    let printer = LinePrinter::new(&r.result.columns, r.program);
    let mut buf = Vec::with_capacity(OUT_BUFFER + 4096);
    for s in &r.result.outcomes {
        printer.push(&mut buf, s);
        buf.push(b'\n');
        if buf.len() >= OUT_BUFFER {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.write_all(tail(r).as_bytes())
}

/// How many bytes of final states [`write`] gathers before writing them.
const OUT_BUFFER: usize = 1 << 16;

/// The report up to the final states: the test, why it is incomplete, the
/// number of states.
fn head(r: &TestReport) -> String {
    let p = r.program;
    let res = r.result;
    let mut out = String::new();
    writeln!(
        out,
        "Test {} {}",
        p.name,
        p.condition.quantifier.herd_kind()
    )
    .unwrap();
    if let Some(why) = &res.incomplete {
        // With two engines, the other one may have finished: `why` says so.
        let found = if res.partial {
            "; the states below are only those found"
        } else {
            ""
        };
        writeln!(out, "Incomplete: {why}{found}").unwrap();
    }
    if res.columns.is_projection() {
        // `--project condition`: say which columns the states are over, so
        // a projected list is never read as herd's full final states.
        let names: Vec<String> = res
            .columns
            .columns
            .iter()
            .map(|c| column_name(p, c))
            .collect();
        writeln!(
            out,
            "States over: {} (projected: other registers and locations are not listed)",
            if names.is_empty() {
                "nothing".to_string()
            } else {
                names.join(" ")
            }
        )
        .unwrap();
    }
    writeln!(out, "States {}", res.outcomes.len()).unwrap();
    out
}

/// A column's name as a final state writes it (`0:r0`, `x`).
fn column_name(p: &Program, c: &crate::outcome::Column) -> String {
    match *c {
        crate::outcome::Column::Reg { thread, reg } => {
            format!("{thread}:{}", p.threads[thread].regs[reg].name)
        }
        crate::outcome::Column::Loc(l) => p.locations[l].name.clone(),
    }
}

/// The report after the final states: the verdict, the counts, the
/// condition, the observation, then ptxmc's own lines.
fn tail(r: &TestReport) -> String {
    let p = r.program;
    let res = r.result;
    let mut out = String::new();
    writeln!(out, "{}", if res.verdict.holds { "Ok" } else { "No" }).unwrap();
    writeln!(out, "Witnesses").unwrap();
    writeln!(
        out,
        "Positive: {} Negative: {}",
        res.verdict.positive, res.verdict.negative
    )
    .unwrap();
    writeln!(out, "Condition {}", condition(p)).unwrap();
    writeln!(
        out,
        "Observation {} {} {} {}",
        p.name,
        r.observation(),
        res.verdict.positive,
        res.verdict.negative
    )
    .unwrap();
    if let Some(d) = &res.disagreement {
        if !d.only_op.is_empty() || !d.only_ax.is_empty() {
            writeln!(out, "Disagreement: the engines' outcome sets differ").unwrap();
        }
        for s in &d.only_op {
            writeln!(out, "Only operational: {}", state(p, &res.columns, s)).unwrap();
        }
        for s in &d.only_ax {
            writeln!(out, "Only axiomatic: {}", state(p, &res.columns, s)).unwrap();
        }
        if let Some((op, ax)) = d.termination {
            let word = |h: bool| if h { "hangs" } else { "terminates" };
            writeln!(
                out,
                "Disagreement: the engines' termination verdicts differ (operational: {}, axiomatic: {})",
                word(op),
                word(ax)
            )
            .unwrap();
        }
    }
    if let Some(f) = &p.filter {
        let all = res.outcomes.len() + res.filtered_out.len();
        writeln!(
            out,
            "Filter ({}): {} of {all} final states pass; only they are listed and counted",
            prop(p, f),
            res.outcomes.len()
        )
        .unwrap();
    }
    if res.bound_hit {
        writeln!(
            out,
            "Loop: an execution reached the loop bound; states of longer executions are not listed"
        )
        .unwrap();
    }
    if let Some(u) = &r.undefined {
        writeln!(out, "{}", super::ub::line(u)).unwrap();
    }
    match &res.termination {
        Termination::Hangs(h) => writeln!(
            out,
            "Hang: {} — {}",
            h.kind().as_str(),
            super::hang::sentence(p, h)
        )
        .unwrap(),
        t @ Termination::NotChecked(NotChecked::LoopBound(_) | NotChecked::Incomplete) => {
            writeln!(out, "Termination: not checked — {}", super::hang::why(p, t)).unwrap()
        }
        // Said whenever it was searched (a loop, a barrier or a wait), not
        // only in JSON; a program with none of them keeps herd's report.
        t @ Termination::Terminates { trivially: false } => {
            writeln!(out, "Termination: checked — {}", super::hang::why(p, t)).unwrap()
        }
        Termination::Terminates { trivially: true } | Termination::NotChecked(NotChecked::Off) => {}
    }
    out.push_str(&super::races::section(&r.races));
    if let Some(e) = &p.expectation {
        let status = match r.expectation_met() {
            Some(true) => "met",
            Some(false) => "NOT met",
            None => "reported only",
        };
        writeln!(out, "Expectation {} {}: {status}", e.kind.as_str(), e.name).unwrap();
    }
    for n in &r.notes {
        writeln!(out, "Note: {n}").unwrap();
    }
    writeln!(out, "Time {} {:.2}", p.name, res.seconds).unwrap();
    out
}

/// A final state as herd prints it: `0:r0=1; 1:r1=0; x=1;`.
pub fn state(p: &Program, cols: &Columns, s: &State) -> String {
    cols.line(p, s)
}

/// A proposition in herd's notation (`1:r0=1 /\ ~(x=2)`).
pub fn proposition(p: &Program, q: &Prop) -> String {
    prop(p, q)
}

/// The condition in herd's notation: `exists (1:r0=1 /\ ~(x=2))`.
pub fn condition(p: &Program) -> String {
    format!(
        "{} ({})",
        p.condition.quantifier.keyword(),
        prop(p, &p.condition.prop)
    )
}

fn term(p: &Program, t: &Term) -> String {
    match t {
        Term::Reg { thread, reg } => format!("{thread}:{}", p.threads[*thread].regs[*reg].name),
        Term::Loc(l) => p.locations[*l].name.clone(),
        Term::Const(v) => v.to_string(),
    }
}

fn prop(p: &Program, q: &Prop) -> String {
    let wrap = |x: &Prop| match x {
        Prop::And(..) | Prop::Or(..) => format!("({})", prop(p, x)),
        _ => prop(p, x),
    };
    match q {
        Prop::True => "true".into(),
        Prop::False => "false".into(),
        Prop::Cmp(a, CmpOp::Eq, b) => format!("{}={}", term(p, a), term(p, b)),
        Prop::Cmp(a, CmpOp::Ne, b) => format!("{}!={}", term(p, a), term(p, b)),
        Prop::Not(x) => format!(
            "~{}",
            match **x {
                Prop::Cmp(..) => format!("({})", prop(p, x)),
                _ => wrap(x),
            }
        ),
        Prop::And(a, b) => {
            let side = |x: &Prop| {
                if matches!(x, Prop::Or(..)) {
                    wrap(x)
                } else {
                    prop(p, x)
                }
            };
            format!("{} /\\ {}", side(a), side(b))
        }
        Prop::Or(a, b) => {
            let side = |x: &Prop| {
                if matches!(x, Prop::And(..)) {
                    wrap(x)
                } else {
                    prop(p, x)
                }
            };
            format!("{} \\/ {}", side(a), side(b))
        }
    }
}

/// The engines' counters, for `--stats` (appended after the report).
pub fn stats(r: &TestReport) -> String {
    let mut out = String::new();
    let name = &r.program.name;
    if let Some(a) = &r.result.stats.ax {
        writeln!(
            out,
            "Stats {name} ax: candidates {} paths {} rf {} executions {} pruned values {} thin-air {} deadlock {} cb-cycle {} causality {} coherence {} atomicity {} sc-per-location {}",
            a.nodes, a.path_combinations, a.rf_candidates, a.executions, a.pruned_values, a.pruned_thin_air,
            a.pruned_deadlock, a.pruned_cb_cycle, a.pruned_causality, a.pruned_coherence, a.pruned_atomicity,
            a.pruned_sc_per_location
        )
        .unwrap();
    }
    if let Some(o) = &r.result.stats.op {
        writeln!(
            out,
            "Stats {name} op: states {} distinct {} transitions {} eager {} dedup-hits {} por-pruned {} dead-ends {} finals {} time {:.3} s, {:.0} states/s, peak RSS {} MiB",
            o.states, o.distinct_states, o.transitions, o.eager_steps, o.dedup_hits, o.por_pruned, o.dead_ends,
            o.final_states, o.elapsed_s, o.states_per_s, o.peak_rss_bytes >> 20
        )
        .unwrap();
    }
    out
}
