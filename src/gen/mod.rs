//! diy-style test generation: every critical cycle of a vocabulary of edges,
//! up to a size, becomes a litmus test whose `exists` condition is the
//! cycle's outcome; both engines then classify each test (`docs/gen.md`).
//!
//! Pipeline: [`vocab`] (edges) → [`enumerate`] (canonical cycles, each once)
//! → [`build`] (litmus text, named by [`name`], read back by ptxmc's parser)
//! → [`classify`] (the engines, side by side) → [`output`] (`expected.csv`,
//! JSON lines). [`shard`] selects a deterministic part of the set.

pub mod build;
pub mod cycle;
pub mod edge;
pub mod enumerate;
pub mod name;
pub mod output;
pub mod shard;
pub mod vocab;

use rayon::prelude::*;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

pub use build::GenTest;
pub use enumerate::EnumStats;
pub use shard::Shard;
pub use vocab::Vocabulary;

use crate::engine::{self, RunOptions, RunResult};

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenOptions {
    /// Largest cycle, in edges.
    pub size: usize,
    /// Which part of the set.
    pub shard: Shard,
    /// Stop when the resident memory exceeds this many bytes.
    pub max_memory: Option<u64>,
}

impl GenOptions {
    /// Every cycle of at most `size` edges, no memory limit.
    pub fn all(size: usize) -> GenOptions {
        GenOptions {
            size,
            shard: Shard::ALL,
            max_memory: None,
        }
    }
}

/// Why generation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GenError {
    /// A limit stopped the enumeration (the set is incomplete).
    Limit(String),
    /// The generator contradicted itself (two cycles with one name, a test
    /// its own parser rejects): a defect, reported rather than hidden.
    Defect(String),
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenError::Limit(why) => write!(f, "generation stopped: {why}"),
            GenError::Defect(what) => {
                write!(f, "{what}\n(a defect of ptxmc gen: please report it)")
            }
        }
    }
}

/// The cycles of one shard of a vocabulary, named, in name order.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The shard's cycles with their names, sorted by name.
    pub cycles: Vec<(String, cycle::Cycle)>,
    /// Cycles in the whole set (every shard).
    pub total: usize,
    /// The enumeration's counters.
    pub stats: EnumStats,
}

/// The tests of one shard of a vocabulary's cycles.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The shard's tests, sorted by name.
    pub tests: Vec<GenTest>,
    /// Cycles in the whole set (every shard).
    pub total: usize,
    /// The enumeration's counters.
    pub stats: EnumStats,
}

/// The path of a generated test relative to the output directory (also its shard key).
pub fn file_name(test_name: &str) -> String {
    format!("{test_name}.litmus")
}

/// Name every cycle of `v` that `opts` asks for and keep those of its shard.
///
/// # Errors
/// [`GenError::Limit`] if the memory limit stopped the enumeration;
/// [`GenError::Defect`] if two cycles got one name.
pub fn plan(v: &Vocabulary, opts: &GenOptions) -> Result<Plan, GenError> {
    let shard = opts.shard;
    let e = enumerate::enumerate(v, opts.size, opts.max_memory).map_err(GenError::Limit)?;
    let total = e.cycles.len();
    let mut cycles: Vec<(String, cycle::Cycle)> = e
        .cycles
        .into_par_iter()
        .map(|c| (name::name(&c), c))
        .filter(|(n, _)| shard.contains(&file_name(n)))
        .collect();
    cycles.par_sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(w) = cycles.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(GenError::Defect(format!(
            "ptxmc gen named two cycles `{}`:\n  {}\n  {}",
            w[0].0,
            build::cycle_text(&w[0].1),
            build::cycle_text(&w[1].1)
        )));
    }
    Ok(Plan {
        cycles,
        total,
        stats: e.stats,
    })
}

/// Build the tests of some planned cycles, side by side, in order.
///
/// # Errors
/// [`GenError::Defect`] if the generator wrote a test its own parser rejects.
pub fn build_all(cycles: &[(String, cycle::Cycle)]) -> Result<Vec<GenTest>, GenError> {
    cycles
        .par_iter()
        .map(|(_, c)| build::build(c).map_err(GenError::Defect))
        .collect()
}

/// Generate the tests `opts` asks for, all at once (`ptxmc gen` builds them
/// in chunks instead).
///
/// # Errors
/// As [`plan`] and [`build_all`].
pub fn generate(v: &Vocabulary, opts: &GenOptions) -> Result<Generated, GenError> {
    let p = plan(v, opts)?;
    Ok(Generated {
        tests: build_all(&p.cycles)?,
        total: p.total,
        stats: p.stats,
    })
}

/// Run the engines on every test, side by side on rayon's pool; results
/// come back in the order of `tests`. After the first disagreement between
/// the engines no further test is started (those are `None`). `done` is
/// called once per finished test (for a progress bar).
pub fn classify(
    tests: &[GenTest],
    opts: &RunOptions,
    done: &(dyn Fn() + Sync),
) -> Vec<Option<RunResult>> {
    let stop = AtomicBool::new(false);
    tests
        .par_iter()
        .map(|t| {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            let r = engine::run(&t.program, opts);
            if r.disagreement.is_some() {
                stop.store(true, Ordering::Relaxed);
            }
            done();
            Some(r)
        })
        .collect()
}
