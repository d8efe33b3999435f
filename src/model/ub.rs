//! Undefined behaviour, as both engines report it: a verdict of its own,
//! never a silent pairing or a wrapped counter (`docs/barriers.md`,
//! "Undefined behaviour").
//!
//! An execution that reaches an undefined step still lists its final state
//! (what the machine does next is whatever the engines' fallback is: an
//! undefined barrier arrival poisons its phase, which then never completes);
//! the run as a whole is reported as undefined, with the least witness in
//! (kind, threads, instructions) order, so the report does not depend on the
//! order of exploration or the engine.

use serde::Serialize;

use super::barrier::BarrierUb;
use crate::ir::ThreadId;

/// What kind of undefined behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "why")]
pub enum UbKind {
    /// A CTA barrier (`bar`, `barrier{.cta}`).
    Barrier(BarrierUb),
}

impl UbKind {
    /// What happened.
    pub fn what(self) -> &'static str {
        match self {
            UbKind::Barrier(b) => b.what(),
        }
    }

    /// The ISA's sentence that makes it undefined.
    pub fn isa(self) -> &'static str {
        match self {
            UbKind::Barrier(b) => b.isa(),
        }
    }
}

/// One undefined step found by an engine.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Undefined {
    /// What kind.
    #[serde(flatten)]
    pub kind: UbKind,
    /// The instructions involved, as (thread, instruction index of the
    /// program as written), in the order they happened.
    pub at: Vec<(ThreadId, usize)>,
}
