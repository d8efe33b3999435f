//! The text form of an explanation (`ptxmc explain`). This function alone
//! owns the layout; golden tests pin it.

use std::fmt::Write;

use crate::explain::axiomatic::{AxVerdict, Execution, Group};
use crate::explain::missing::Missing;
use crate::explain::operational::OpExplanation;
use crate::explain::{Explanation, MissingAnswer, TerminationNote};

/// The explanation as text: the axioms' answer, then the machine's.
pub fn text(x: &Explanation) -> String {
    let mut out = String::new();
    let word = match &x.ax.verdict {
        AxVerdict::Allowed { .. } => "allowed",
        AxVerdict::Forbidden { .. } => "forbidden",
        AxVerdict::Incomplete { .. } => "not decided (incomplete)",
    };
    // Undefined behaviour before anything: the program has no meaning in
    // the executions that reach it, whatever the outcome's verdict below.
    if let Some(u) = &x.undefined {
        writeln!(
            out,
            "Explain {}: the program can reach undefined behaviour",
            x.name
        )
        .unwrap();
        writeln!(out, "{}", super::ub::line(u)).unwrap();
        writeln!(out, "A run to it: ptxmc trace {} --undefined", x.file).unwrap();
    }
    match &x.termination {
        // A hang first: the program never ends in some execution, and the
        // outcome's verdict below speaks only of those that end.
        TerminationNote::Hangs { kind, why, .. } => {
            writeln!(out, "Explain {}: the program can hang", x.name).unwrap();
            writeln!(out, "Hang: {kind} — {why}").unwrap();
            writeln!(out, "A run into it: ptxmc trace {} --hang", x.file).unwrap();
            writeln!(
                out,
                "Among the executions that end, {} is {word}",
                x.ax.outcome
            )
            .unwrap();
        }
        TerminationNote::NotChecked { why } => {
            writeln!(out, "Explain {}: {} is {word}", x.name, x.ax.outcome).unwrap();
            writeln!(out, "Termination: not checked — {why}").unwrap();
        }
        TerminationNote::Terminates => {
            writeln!(out, "Explain {}: {} is {word}", x.name, x.ax.outcome).unwrap();
        }
    }
    if let Some(l) = &x.leaders {
        // `activemask` lanes are chosen like leaders (`ir::elect::Variants`).
        let what = if l.leaders.iter().any(|s| s.contains("`activemask")) {
            "`elect.sync` leader and `activemask` lanes"
        } else {
            "`elect.sync` leader"
        };
        let head = match (&x.ax.verdict, l.witness) {
            (_, true) => format!(
                "Leaders: one of the {} choices of {what}, one that gives it:",
                l.choices
            ),
            (AxVerdict::Forbidden { .. }, _) => format!(
                "Leaders: forbidden under each of the {} choices of {what}; shown under the first:",
                l.choices
            ),
            _ => format!(
                "Leaders: not decided under one of the {} choices of {what}; shown under it:",
                l.choices
            ),
        };
        writeln!(out, "{head}").unwrap();
        for line in &l.leaders {
            writeln!(out, "  {line}").unwrap();
        }
    }
    match &x.ax.verdict {
        AxVerdict::Allowed { witness, missing } => {
            writeln!(out, "Axioms: a consistent execution that gives it").unwrap();
            execution(&mut out, witness);
            missing_text(&mut out, missing);
        }
        AxVerdict::Forbidden {
            groups,
            total_groups,
            summary,
        } => {
            let n = x.ax.candidates;
            writeln!(
                out,
                "Axioms: {n} candidate execution{} would give it, in {total_groups} group{} by what the outcome's reads read from; each breaks an axiom",
                if n == 1 { "" } else { "s" },
                if *total_groups == 1 { "" } else { "s" }
            )
            .unwrap();
            groups_text(&mut out, groups, *total_groups);
            writeln!(out, "In short: {summary}.").unwrap();
        }
        AxVerdict::Incomplete {
            reason,
            groups,
            total_groups,
        } => {
            writeln!(
                out,
                "Incomplete: {reason}; the explanation below covers only the candidates examined"
            )
            .unwrap();
            groups_text(&mut out, groups, *total_groups);
        }
    }
    if x.ax.bound_hit {
        writeln!(
            out,
            "Note: some paths reached the loop bound; longer executions were not examined."
        )
        .unwrap();
    }
    if let Some(op) = &x.op {
        operational(&mut out, op);
    }
    out
}

/// What the witness of an allowed outcome misses (the same words as JSON's
/// `missing`).
pub fn missing_text(out: &mut String, m: &Missing) {
    if m.sequentially_consistent {
        writeln!(
            out,
            "Missing orderings: none — allowed under sequential consistency: not a memory-ordering bug (an interleaving of the threads gives it, so no fence or stronger annotation can forbid it; what the threads do, or wait for, allows it)"
        )
        .unwrap();
        if !m.interleaving.is_empty() {
            writeln!(
                out,
                "  an interleaving that gives it: {}",
                m.interleaving.join("; ")
            )
            .unwrap();
        }
        return;
    }
    writeln!(
        out,
        "Missing orderings: what the program suggests is ordered, and why the model does not order it"
    )
    .unwrap();
    for (i, p) in m.pairs.iter().enumerate() {
        writeln!(out, "  {}. {}", i + 1, p.what).unwrap();
        if !p.chain.is_empty() {
            writeln!(out, "     chain: {}", p.chain).unwrap();
        }
        for l in &p.links {
            writeln!(out, "     missing: {l}").unwrap();
        }
    }
    if m.more_pairs > 0 {
        writeln!(
            out,
            "  … and {} more pair{}",
            m.more_pairs,
            if m.more_pairs == 1 { "" } else { "s" }
        )
        .unwrap();
    }
}

/// The missing orderings of an outcome as `trace`, `step` and the
/// playground say them: `explain`'s words ([`missing_text`]) for an allowed
/// outcome, else why there are none.
pub fn missing_answer_text(a: &MissingAnswer) -> String {
    let mut out = String::new();
    match a {
        MissingAnswer::Allowed { missing } => missing_text(&mut out, missing),
        MissingAnswer::Forbidden { summary } => writeln!(
            out,
            "Missing orderings: none — the axioms forbid this outcome: {summary}"
        )
        .unwrap(),
        MissingAnswer::Incomplete { why } => writeln!(
            out,
            "Missing orderings: not worked out — {why} (`ptxmc explain` with a larger --max-candidates or --timeout)"
        )
        .unwrap(),
    }
    out
}

fn groups_text(out: &mut String, groups: &[Group], total: usize) {
    for (i, g) in groups.iter().enumerate() {
        let reads = if g.reads.is_empty() {
            "(the outcome reads no register)".to_string()
        } else {
            g.reads.join("; ")
        };
        writeln!(
            out,
            "  {}. {reads}  [{} candidate{}]",
            i + 1,
            g.candidates,
            if g.candidates == 1 { "" } else { "s" }
        )
        .unwrap();
        for r in &g.reasons {
            writeln!(out, "     {}  ({})", r.text, r.rule).unwrap();
        }
        if g.more_reasons > 0 {
            writeln!(
                out,
                "     … and {} other cycle{}",
                g.more_reasons,
                if g.more_reasons == 1 { "" } else { "s" }
            )
            .unwrap();
        }
    }
    if total > groups.len() {
        writeln!(out, "  … {} more groups not shown", total - groups.len()).unwrap();
    }
}

fn execution(out: &mut String, x: &Execution) {
    let mut threads: Vec<&str> = Vec::new();
    for e in &x.events {
        if let Some(t) = &e.thread {
            if !threads.contains(&t.as_str()) {
                threads.push(t);
            }
        }
    }
    let name = |id: usize| {
        x.events
            .iter()
            .find(|e| e.id == id)
            .map(|e| {
                format!(
                    "{}{}",
                    e.thread.as_ref().map_or(String::new(), |t| format!("{t} ")),
                    e.text
                )
            })
            .unwrap_or_default()
    };
    for t in threads {
        let evs: Vec<String> = x
            .events
            .iter()
            .filter(|e| e.thread.as_deref() == Some(t))
            .map(|e| e.text.clone())
            .collect();
        writeln!(out, "  {t}: {}", evs.join("; ")).unwrap();
    }
    for (rel, title) in [
        ("rf", "reads-from"),
        ("co", "coherence"),
        ("sw", "release/acquire synchronisation"),
        ("sc", "Fence-SC order"),
        ("bar", "barrier synchronisation"),
        ("async", "asynchronous issue and completion"),
    ] {
        let pairs: Vec<String> = x
            .edges
            .iter()
            .filter(|e| e.rel == rel)
            .map(|e| format!("{} → {}", name(e.from), name(e.to)))
            .collect();
        if !pairs.is_empty() {
            writeln!(out, "  {title}: {}", pairs.join(", ")).unwrap();
        }
    }
}

fn operational(out: &mut String, op: &OpExplanation) {
    match op {
        OpExplanation::Reached { replay } => {
            writeln!(out, "Machine: a run reaches it; replay it with").unwrap();
            writeln!(out, "  {replay}").unwrap();
        }
        OpExplanation::Blocked {
            steps,
            replay,
            blocked,
        } => {
            writeln!(
                out,
                "Machine: no run reaches it. At the end of the longest run towards it ({steps} step{}):",
                if *steps == 1 { "" } else { "s" }
            )
            .unwrap();
            for b in blocked {
                writeln!(out, "  {b}").unwrap();
            }
            writeln!(out, "  (the run: {replay})").unwrap();
        }
        OpExplanation::Incomplete { reason } => {
            writeln!(out, "Machine: incomplete: {reason}").unwrap();
        }
        OpExplanation::Disagrees { what } => {
            writeln!(out, "Machine: DISAGREES with the axioms: {what}").unwrap();
        }
    }
}
