//! Hardware conformance: run litmus tests on a real GPU and set what it does
//! beside what the model allows.
//!
//! The pipeline, one module per step:
//! 1. [`plan`] decides whether a test can be run faithfully on one GPU and,
//!    if so, where everything goes (CTA roles, warps, memory regions, barrier
//!    resources, result columns); anything it cannot express is a
//!    [`Refusal`] with a reason, never an approximation. [`async_plan`] is
//!    its part for shared memory, mbarriers, the async proxy and clusters
//!    (the shared harness: 16-byte cells, scaled byte counts, drains).
//! 2. [`generate`] (`gen.rs`) writes the CUDA C++ harness of a plan (inline PTX with the
//!    test's exact instructions), bundles, a manifest and a build/run script
//!    that needs only nvcc and the driver; `gen_shared.rs` writes the
//!    asynchronous instructions and the shared harness's kernel.
//! 3. [`histogram`] is the JSON the harness writes: final states and counts.
//! 4. [`sass`] reads `cuobjdump` output and checks, per litmus thread, that
//!    the machine code still has the test's accesses, fences, barriers and
//!    asynchronous operations, and that acquire mbarrier waits complete
//!    before the next access issues (from the instructions' control bits).
//! 5. [`compare`] puts a histogram beside the model's outcome set: allowed
//!    and observed, allowed but never observed, observed but forbidden.
//! 6. [`campaign`] reads a campaign of generated tests: whether the GPU
//!    showed each test's weak behaviour (its cycle's outcome), and what
//!    orders each thread of the cycle (fence, release/acquire, scope,
//!    placement), to group the observations.
//!
//! `docs/hardware.md` describes the harness, the JSON schema and every
//! refusal.

pub mod async_plan;
pub mod campaign;
pub mod compare;
mod gen_shared;
// `gen` is a reserved word in Rust 2024; the file keeps the short name.
#[path = "gen.rs"]
pub mod generate;
pub mod histogram;
pub mod kernels;
pub mod plan;
pub mod refusal;
pub mod roles;
pub mod sass;

pub use plan::Plan;
pub use refusal::{Reason, Refusal};

/// The name of the device function that runs litmus thread `thread` of test
/// `id` (e.g. `ptxmc_t0007_P1`); the SASS check finds a thread's machine code
/// under this name.
pub fn role_function(id: &str, thread: usize) -> String {
    format!("ptxmc_{id}_P{thread}")
}

/// The names of a test's final-state columns, in [`crate::outcome::Columns`]
/// order: `P1:r0` for a register, the location's name for a location. The
/// harness writes them into every histogram, and the comparison checks them.
pub fn column_names(p: &crate::ir::Program) -> Vec<String> {
    use crate::outcome::{Column, Columns};
    Columns::of(p)
        .columns
        .iter()
        .map(|c| match c {
            Column::Reg { thread, reg } => {
                format!(
                    "{}:{}",
                    p.threads[*thread].name, p.threads[*thread].regs[*reg].name
                )
            }
            Column::Loc(l) => p.locations[*l].name.clone(),
        })
        .collect()
}
