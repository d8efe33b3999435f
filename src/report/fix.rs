//! The text of `ptxmc fix` and `ptxmc fix --weaken`: one line per fix,
//! cheapest first, with how it was verified.

use std::fmt::Write;

use crate::fix::{self, FixReport};

/// The most starving candidates (`fix/starve.rs`) the text lists.
const SHOWN_STARVING: usize = 5;

/// The text report of a fix search (one line per fix).
///
/// `problem` are the lines that say what else is wrong with the program as
/// written (a hang, an undefined step, and a run into it): every fix listed
/// then removes that too.
pub fn text(name: &str, r: &FixReport, weaken: bool, bound: usize, problem: &[String]) -> String {
    if weaken {
        return weaken_text(name, r);
    }
    let mut out = String::new();
    {
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
                // With no condition (`true`) there is no outcome to forbid.
                if r.outcome == "true" {
                    writeln!(out, "Fix {name}: {what}").unwrap();
                } else {
                    writeln!(out, "Fix {name}: {what} and forbid {}", r.outcome).unwrap();
                }
                for l in problem {
                    writeln!(out, "{l}").unwrap();
                }
            }
        }
    }
    if r.outcome_kept && !r.fixes.is_empty() && r.outcome != "true" {
        writeln!(
            out,
            "No change within the bound removes it and forbids {} as well; these remove it and the outcome stays allowed:",
            r.outcome
        )
        .unwrap();
    }
    let unit = "cost";
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
    if !r.flagged.is_empty() {
        // Changes that forbid the outcome by starving a wait
        // (`fix/starve.rs`): shown, so that the missing cheap fix is
        // explained, never offered.
        writeln!(
            out,
            "Not offered: each of these forbids {} only by making a wait that succeeds as written fail in every execution:",
            r.outcome
        )
        .unwrap();
        for f in r.flagged.iter().take(SHOWN_STARVING) {
            writeln!(
                out,
                "  - [{unit} {}] {}: {}",
                f.change.cost,
                f.change.text,
                f.changes_what.join("; ")
            )
            .unwrap();
        }
        if r.flagged.len() > SHOWN_STARVING {
            writeln!(
                out,
                "  … and {} more (--format json lists them).",
                r.flagged.len() - SHOWN_STARVING
            )
            .unwrap();
        }
    }
    if r.fixes.is_empty() && (r.allowed || r.problem.is_some()) {
        let none = if r.problem == Some(fix::Problem::Hang) {
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

/// The text report of `fix --weaken`: the maximal safe weakenings, then the
/// single-site weakenings that keep the outcome forbidden but change
/// something the condition does not observe (flagged, never offered), then
/// whether the search finished and what it did.
pub fn weaken_text(name: &str, r: &FixReport) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "Weaken {name}: keep {} forbidden and everything else the program does (termination, definedness, races, the final values of every location and register)",
        r.outcome
    )
    .unwrap();
    let stats = r.weaken.as_ref();
    if r.allowed {
        match stats.and_then(|w| w.stopped.as_ref()) {
            Some(why) => writeln!(out, "Incomplete: {why}.").unwrap(),
            None => writeln!(
                out,
                "The model already allows it: there is nothing to keep."
            )
            .unwrap(),
        }
        return out;
    }
    for (i, f) in r.fixes.iter().enumerate() {
        let changes: Vec<String> = f.changes.iter().map(|c| c.text.clone()).collect();
        writeln!(
            out,
            "  {}. [saves {}] {}  ({})",
            i + 1,
            f.cost,
            changes.join(" and "),
            fix::verdict_word(f)
        )
        .unwrap();
    }
    if r.sites == 0 {
        writeln!(
            out,
            "  Nothing to weaken: no fence, and no strong access or mbarrier operation."
        )
        .unwrap();
    } else if r.fixes.is_empty() && !r.incomplete {
        writeln!(
            out,
            "  No weakening keeps all of it: every site is needed as written."
        )
        .unwrap();
    }
    if !r.flagged.is_empty() {
        writeln!(
            out,
            "Not offered: each of these keeps {} forbidden but changes what the condition does not observe:",
            r.outcome
        )
        .unwrap();
        for f in &r.flagged {
            writeln!(out, "  - {}: {}", f.change.text, f.changes_what.join("; ")).unwrap();
        }
    }
    if let Some(why) = stats.and_then(|w| w.stopped.as_ref()) {
        let what = if stats.is_some_and(|w| w.stats.undecided > 0) {
            "safe"
        } else {
            "maximal and safe"
        };
        let found = match r.fixes.len() {
            0 => "no weakening was shown safe before it stopped".to_string(),
            1 => format!("the weakening listed is {what}"),
            n => format!("the {n} weakenings listed are {what}"),
        };
        writeln!(
            out,
            "Incomplete: {why}; {found}, others may exist, and more sites may be flagged (--timeout SECS for more time)."
        )
        .unwrap();
    } else if r.incomplete && stats.is_none_or(|w| w.stats.undecided == 0) {
        writeln!(
            out,
            "Incomplete: the time limit stopped the verification by both engines."
        )
        .unwrap();
    }
    let st = stats.map(|w| w.stats).unwrap_or_default();
    if st.undecided > 0 {
        writeln!(
            out,
            "Undecided: {} weakening{} could not be checked within the time one run may take (a tenth of the limit) and {} counted unsafe: the weakenings listed are safe but may not be maximal (a longer --timeout gives each run more).",
            st.undecided,
            if st.undecided == 1 { "" } else { "s" },
            if st.undecided == 1 { "was" } else { "were" },
        )
        .unwrap();
    }
    writeln!(
        out,
        "Searched {} site{}: {} programs checked by the oracle (decided without a run: {} known safe, {} known unsafe; {} subtrees covered) in {:.2} s.",
        r.sites,
        if r.sites == 1 { "" } else { "s" },
        st.checked,
        st.known_safe,
        st.known_unsafe,
        st.covered,
        r.seconds
    )
    .unwrap();
    out
}
