//! Explanations: why the model allows or forbids an outcome, in the words
//! of the axioms (a witness execution, or every candidate execution with
//! the axiom that rejects it and the offending cycle) and of the machine.
//!
//! The axiomatic side does not reuse the oracle's pruning search: it
//! enumerates candidates itself ([`enumerate`]) and judges each with a
//! literal, by-the-book checker of the digest's §3 ([`check`]). That second
//! implementation doubles as a cross-check of the oracle
//! (`tests/explain.rs`: the same outcome sets on every public test).

pub mod axiomatic;
pub mod check;
pub mod enumerate;
pub mod operational;
pub mod words;

use serde::Serialize;

use axiomatic::{AxExplanation, AxVerdict};
use operational::OpExplanation;

/// Both explanations of one outcome of one test.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// The test's name.
    pub name: String,
    /// The file (with `[row]` for template instances).
    pub file: String,
    /// The axioms' explanation.
    pub ax: AxExplanation,
    /// The machine's explanation (absent when the machine cannot hold the test).
    pub op: Option<OpExplanation>,
}

impl Explanation {
    /// Whether the axioms allow the outcome (`None`: incomplete).
    pub fn allowed(&self) -> Option<bool> {
        match self.ax.verdict {
            AxVerdict::Allowed { .. } => Some(true),
            AxVerdict::Forbidden { .. } => Some(false),
            AxVerdict::Incomplete { .. } => None,
        }
    }
    /// Whether the machine contradicts the axioms.
    pub fn disagreement(&self) -> bool {
        matches!(self.op, Some(OpExplanation::Disagrees { .. }))
    }
    /// Whether some part stopped at a limit.
    pub fn incomplete(&self) -> bool {
        matches!(self.ax.verdict, AxVerdict::Incomplete { .. })
            || matches!(self.op, Some(OpExplanation::Incomplete { .. }))
    }
}
pub mod lints;
