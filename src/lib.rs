//! ptxmc — which final outcomes may an NVIDIA GPU produce for a small
//! concurrent PTX program, under the PTX memory consistency model?
//!
//! Layers, each depending only on those above it:
//! 1. [`litmus`] — reading litmus files (Dat3M `.litmus`, mixedproxy `.test`)
//!    into the program IR, and printing it back;
//! 2. [`ir`] — the program IR every engine reads, and [`model`] — what the
//!    engines share about the model (admission, loops, lowering of async
//!    operations);
//! 3. engines: the operational machine [`op`], explored by [`explore`], and
//!    the axiomatic oracle [`ax`]; both keep sets of events in [`rel`];
//! 4. results: [`engine`] runs them and [`outcome`] holds final states and
//!    verdicts;
//! 5. [`report`] — herd text, JSON and traces; [`hw`] — hardware conformance;
//! 6. [`cli`] — the command-line front end.
//!
//! See `ARCHITECTURE.md` for the codemap and the invariants of each module.

#![warn(missing_docs)]

pub mod ax;
pub mod cli;
pub mod engine;
pub mod explain;
pub mod explore;
pub mod families;
pub mod fix;
// `gen` is a reserved word in Rust 2024; the directory keeps the short name.
#[path = "gen/mod.rs"]
pub mod generate;
pub mod hw;
pub mod ir;
pub mod limits;
pub mod litmus;
pub mod model;
pub mod op;
pub mod outcome;
pub mod ptx;
pub mod rel;
pub mod report;
pub mod serve;
pub mod step;
