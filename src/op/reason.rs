//! Why the machine refuses a step, as data: the check functions of
//! [`super::steps`] return a [`Reason`] instead of a bare `false`;
//! [`super::refusals`] lists, for a state, the steps not taken with theirs.
//! `op::trace` phrases them. This module is plain data and imports nothing
//! of the machine, so the steps and the refusal list both depend on it and
//! not on each other's internals.

use serde::Serialize;

/// The check that refuses a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "check")]
pub enum Reason {
    /// Read `read` may not return `version`: the thread's view already
    /// guarantees `newer` on the read's cache line (`Front⁺`), and `newer` is
    /// coherence-after `version` (Causality, from-read part).
    Stale {
        /// The read.
        read: usize,
        /// The version refused.
        version: usize,
        /// The write the view shows.
        newer: usize,
    },
    /// The accesses to location `loc` would form a cycle of program order and
    /// morally strong reads-from, coherence and from-read (SC per location).
    ScPerLocation {
        /// The location.
        loc: usize,
    },
    /// Coherence would be cyclic at `version`.
    CoherenceCycle {
        /// A version on the cycle.
        version: usize,
    },
    /// `version` would be coherence-below `newer`, which a reader already
    /// knew when it read `version` (an obligation).
    Obligation {
        /// The version read.
        version: usize,
        /// The write the reader knew.
        newer: usize,
    },
    /// The morally strong write `between` would fall between the read and the
    /// write of the RMW `rmw` (Atomicity).
    Atomicity {
        /// The RMW.
        rmw: usize,
        /// The write in between.
        between: usize,
    },
    /// `read` returned `write` and is already in the writing thread's causal
    /// past (Causality, reads-from part).
    ReadsFromFuture {
        /// The write.
        write: usize,
        /// The read.
        read: usize,
    },
    /// Retirement waits: a release it synchronises with, a barrier phase or
    /// an awaited operation has not happened yet.
    Waits,
}
