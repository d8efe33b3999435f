//! Reports: the text and data users read. [`herd`] owns the herd-style text
//! summary, [`json`] the machine-readable form. Both read a [`TestReport`],
//! which ties a test to what the engines found.

pub mod dot;
pub mod explain;
pub mod fix;
pub mod hang;
pub mod herd;
pub mod json;
pub mod races;
pub mod run;
pub mod svg;
pub mod trace;
pub mod ub;

use crate::engine::RunResult;
use crate::ir::{ExpectKind, Program};
use crate::model::Model;

/// One test and the results of running it.
pub struct TestReport<'a> {
    /// The program.
    pub program: &'a Program,
    /// The file (with `[row]` for template instances).
    pub file: String,
    /// The model used.
    pub model: Model,
    /// What the engines found.
    pub result: &'a RunResult,
    /// Notes about the test's text ([`crate::litmus::LitmusTest::notes`]).
    pub notes: Vec<String>,
    /// The undefined step the engines found, worded ([`ub::of`]).
    pub undefined: Option<ub::UbReport>,
    /// The data races the oracle found, worded ([`races::of`]).
    pub races: races::RacesReport,
}

impl TestReport<'_> {
    /// Whether the file's own expectation (mixedproxy `permit`/`assert`) is met;
    /// `None` when there is none to check (`check(...)` or a plain litmus test).
    pub fn expectation_met(&self) -> Option<bool> {
        let e = self.program.expectation.as_ref()?;
        match e.kind {
            ExpectKind::Permit | ExpectKind::Assert => Some(self.result.verdict.holds),
            ExpectKind::Check => None,
        }
    }
    /// herd's observation word.
    pub fn observation(&self) -> &'static str {
        let v = &self.result.verdict;
        if v.positive == 0 {
            "Never"
        } else if v.negative == 0 {
            "Always"
        } else {
            "Sometimes"
        }
    }
}
