//! Explanations: why the model allows or forbids an outcome, in the words
//! of the axioms (a witness execution, or every candidate execution with
//! the axiom that rejects it and the offending cycle) and of the machine.
//!
//! The axiomatic side does not reuse the oracle's pruning search: it
//! enumerates candidates itself ([`enumerate`]) and judges each with a
//! literal, by-the-book checker of the digest's §3 ([`check`]). That second
//! implementation doubles as a cross-check of the oracle
//! (`tests/explain.rs`: the same outcome sets on every public test).

pub mod check;
pub mod enumerate;
