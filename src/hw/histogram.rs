//! The histogram a harness writes for one test (`OUT/<id>.json`).
//!
//! Schema `ptxmc-hw-histogram/1` (field names are an interface; the C++
//! writer is `run_test` in `ptxmc_hw.h`, documented in `docs/hardware.md`):
//!
//! ```json
//! {
//!   "schema": "ptxmc-hw-histogram/1",
//!   "id": "t0003",                       // harness id: kernel and role functions
//!   "test": "litmus/mp/MP+rel+acq.gpu.litmus",   // path, or path[row]
//!   "name": "MP+rel+acq.gpu",
//!   "bundle": "bundle00",                // the binary (and bundle00.sass)
//!   "device": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "sms": 132,
//!              "driver": 13000, "runtime": 13000},
//!   "instances_per_launch": 67584, "groups": 2112, "block_threads": 128,
//!   "cluster_dim": 0, "seed": 1, "seconds": 2.0,
//!   "runs": 123456,                      // instances that finished
//!   "timeouts": 0,                       // instances where a loop gave up
//!   "configs": [{"name": "plain", "barrier_start": false, "stress": false,
//!                "launches": 10, "runs": 675840, "timeouts": 0}, ...],
//!   "columns": ["P1:r0", "P1:r1", "x", "f"],
//!   "outcomes": [{"values": [0, 0, 1, 1], "count": 5, "by_config": [1, 2, 1, 1]}, ...]
//! }
//! ```
//!
//! Only `test`, `id`, `columns`, `outcomes` and `runs` are needed by the
//! comparison; the other fields are optional when reading (hand-written
//! histograms may leave them out).

use serde::{Deserialize, Serialize};
use std::path::Path;

use crate::ir::Value;

/// The schema tag the harness writes.
pub const SCHEMA: &str = "ptxmc-hw-histogram/1";

/// The GPU a histogram was measured on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    /// `cudaDeviceProp::name`.
    pub name: String,
    /// Compute capability (`9.0`).
    #[serde(default)]
    pub cc: String,
    /// Streaming multiprocessors.
    #[serde(default)]
    pub sms: u32,
    /// `cudaDriverGetVersion`.
    #[serde(default)]
    pub driver: u32,
    /// `cudaRuntimeGetVersion`.
    #[serde(default)]
    pub runtime: u32,
}

/// Runs of one harness configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// `plain`, `barrier-start`, `stress` or `barrier-start+stress`.
    pub name: String,
    /// Whether the testing warps of an instance group spin until all have started.
    #[serde(default)]
    pub barrier_start: bool,
    /// Whether extra warps hammer scratch memory during the test.
    #[serde(default)]
    pub stress: bool,
    /// Kernel launches.
    #[serde(default)]
    pub launches: u64,
    /// Instances that finished.
    #[serde(default)]
    pub runs: u64,
    /// Instances where some loop gave up.
    #[serde(default)]
    pub timeouts: u64,
}

/// One observed final state and how often it was seen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    /// One value per column.
    pub values: Vec<Value>,
    /// Times observed (all configurations).
    pub count: u64,
    /// Times observed per configuration, in `configs` order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_config: Vec<u64>,
}

/// A histogram of final outcomes of one test on one GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// [`SCHEMA`].
    #[serde(default)]
    pub schema: String,
    /// Harness id (`t0007`).
    #[serde(default)]
    pub id: String,
    /// The litmus test: `path` or `path[row]`.
    pub test: String,
    /// The test's name.
    #[serde(default)]
    pub name: String,
    /// The bundle binary that ran it.
    #[serde(default)]
    pub bundle: String,
    /// The GPU.
    #[serde(default)]
    pub device: Device,
    /// Instances per launch.
    #[serde(default)]
    pub instances_per_launch: u64,
    /// Instance groups per launch.
    #[serde(default)]
    pub groups: u64,
    /// Threads per block.
    #[serde(default)]
    pub block_threads: u64,
    /// Blocks per cluster (0: no cluster launch).
    #[serde(default)]
    pub cluster_dim: u64,
    /// Random seed of the run.
    #[serde(default)]
    pub seed: u64,
    /// Seconds spent.
    #[serde(default)]
    pub seconds: f64,
    /// Instances that finished.
    pub runs: u64,
    /// Instances where a loop gave up (not in `outcomes`).
    #[serde(default)]
    pub timeouts: u64,
    /// Per configuration.
    #[serde(default)]
    pub configs: Vec<Config>,
    /// Column names (see [`super::column_names`]).
    pub columns: Vec<String>,
    /// The observed final states.
    pub outcomes: Vec<Observed>,
}

impl Histogram {
    /// Read a histogram file.
    pub fn read(path: &Path) -> Result<Histogram, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        Histogram::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
    /// Parse histogram JSON, checking that every outcome has one value per column.
    pub fn parse(text: &str) -> Result<Histogram, String> {
        let h: Histogram =
            serde_json::from_str(text).map_err(|e| format!("not a ptxmc histogram: {e}"))?;
        if !h.schema.is_empty() && h.schema != SCHEMA {
            return Err(format!(
                "schema `{}` is not supported (expected `{SCHEMA}`)",
                h.schema
            ));
        }
        if let Some(o) = h
            .outcomes
            .iter()
            .find(|o| o.values.len() != h.columns.len())
        {
            return Err(format!(
                "an outcome has {} values for {} columns",
                o.values.len(),
                h.columns.len()
            ));
        }
        Ok(h)
    }
    /// The histogram as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
