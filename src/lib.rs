//! ptxmc — which final outcomes may an NVIDIA GPU produce for a small
//! concurrent PTX program, under the PTX memory consistency model?
//!
//! Layers, each depending only on those above it:
//! 1. [`litmus`] — reading litmus files (Dat3M `.litmus`, mixedproxy `.test`)
//!    into the program IR, and printing it back;
//! 2. [`ir`] — the program IR every engine reads;
//! 3. engines (added as they land);
//! 4. [`cli`] — the command-line front end.
//!
//! See `ARCHITECTURE.md` for the codemap and the invariants of each module.

#![warn(missing_docs)]

pub mod ax;
pub mod cli;
pub mod engine;
pub mod explore;
// `gen` is a reserved word in Rust 2024; the directory keeps the short name.
#[path = "gen/mod.rs"]
pub mod generate;
pub mod hw;
pub mod ir;
pub mod litmus;
pub mod model;
pub mod op;
pub mod outcome;
pub mod report;
