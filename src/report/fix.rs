//! The text of `ptxmc fix` and `ptxmc fix --weaken`: one line per fix,
//! cheapest first, with how it was verified.

use std::fmt::Write;

use crate::fix::{self, FixReport};

/// The text report of a fix search (one line per fix).
///
/// `problem` are the lines that say what else is wrong with the program as
/// written (a hang, an undefined step, and a run into it): every fix listed
/// then removes that too.
pub fn text(name: &str, r: &FixReport, weaken: bool, bound: usize, problem: &[String]) -> String {
    let mut out = String::new();
    if weaken {
        writeln!(out, "Weaken {name}: keep {} forbidden", r.outcome).unwrap();
        if r.allowed {
            writeln!(
                out,
                "The model already allows it: there is nothing to keep."
            )
            .unwrap();
        }
    } else {
        match r.problem {
            None => {
                writeln!(out, "Fix {name}: forbid {}", r.outcome).unwrap();
                if !r.allowed {
                    writeln!(out, "The model already forbids it: nothing to fix.").unwrap();
                }
            }
            Some(k) => {
                let what = match k {
                    fix::Problem::Hang => "make every execution terminate",
                    fix::Problem::Undefined => "make every execution defined and terminate",
                };
                writeln!(out, "Fix {name}: {what} and forbid {}", r.outcome).unwrap();
                for l in problem {
                    writeln!(out, "{l}").unwrap();
                }
            }
        }
    }
    if r.outcome_kept && !r.fixes.is_empty() {
        writeln!(
            out,
            "No change within the bound removes it and forbids {} as well; these remove it and the outcome stays allowed:",
            r.outcome
        )
        .unwrap();
    }
    let unit = if weaken { "saves" } else { "cost" };
    for (i, f) in r.fixes.iter().enumerate() {
        let changes: Vec<String> = f.changes.iter().map(|c| c.text.clone()).collect();
        writeln!(
            out,
            "  {}. [{unit} {}] {}  ({})",
            i + 1,
            f.cost,
            changes.join(" and "),
            fix::verdict_word(f)
        )
        .unwrap();
    }
    if r.fixes.is_empty() && (r.allowed != weaken || r.problem.is_some()) {
        let none = if weaken {
            "No weakening keeps it forbidden"
        } else if r.problem == Some(fix::Problem::Hang) {
            "No fix removes the hang"
        } else if r.problem == Some(fix::Problem::Undefined) {
            "No fix removes the undefined behaviour"
        } else {
            "No fix"
        };
        writeln!(
            out,
            "  {none} with at most {bound} change{}.",
            if bound == 1 { "" } else { "s" }
        )
        .unwrap();
        if let Some(why) = &r.why {
            writeln!(out, "  Why: {}.", why.text).unwrap();
        }
    }
    if r.incomplete {
        writeln!(
            out,
            "Incomplete: the time limit stopped the search; more may exist."
        )
        .unwrap();
    }
    writeln!(
        out,
        "Searched {} site{} with at most {bound} change{}: {} programs checked by the oracle in {:.2} s.",
        r.sites,
        if r.sites == 1 { "" } else { "s" },
        if bound == 1 { "" } else { "s" },
        r.checked,
        r.seconds
    )
    .unwrap();
    out
}
