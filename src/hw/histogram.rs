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
use crate::litmus::{Diagnostic, LitmusError, Span};

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
    /// Kernel runs ([`super::kernels`]): launches the watchdog found hung
    /// (the runner stops at the first; 0 or 1).
    #[serde(default)]
    pub hangs: u64,
    /// Kernel runs: the driver's message for a launch that failed on the
    /// GPU (the runner stops there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// Per configuration.
    #[serde(default)]
    pub configs: Vec<Config>,
    /// Column names (see [`super::column_names`]).
    pub columns: Vec<String>,
    /// The observed final states.
    pub outcomes: Vec<Observed>,
    /// Where the histogram was read from (not part of the schema): errors
    /// about its fields point into this text.
    #[serde(skip)]
    pub source: Source,
}

/// A histogram file's path and text, for positioned errors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    /// The path as given.
    pub path: String,
    /// The file's text.
    pub text: String,
}

impl Source {
    /// The error `expected E, found F` at the key `"key"` of the file's
    /// top-level object (or at its start), rendered like every ptxmc input
    /// error: message, `--> file:line:column`, the line and a caret.
    pub fn error_at_key(&self, key: &str, expected: &str, found: String) -> String {
        let span = key_span(&self.text, key).unwrap_or_default();
        LitmusError::new(
            &self.path,
            &self.text,
            Diagnostic::expected(span, expected, found),
        )
        .rendered()
        .to_string()
    }
}

/// Where `"key":` is written (the first occurrence followed by a colon:
/// a string value cannot be followed by one).
fn key_span(text: &str, key: &str) -> Option<Span> {
    let quoted = format!("\"{key}\"");
    let mut from = 0;
    while let Some(i) = text[from..].find(&quoted) {
        let at = from + i;
        let after = text[at + quoted.len()..].trim_start();
        if after.starts_with(':') {
            return Some(Span::new(at, at + quoted.len()));
        }
        from = at + quoted.len();
    }
    None
}

/// The JSON value whose last byte is at `last` (where serde_json reports a
/// value of the wrong type): a string back to its opening quote, anything
/// else back to the separator before it.
fn value_span(text: &str, last: usize) -> Span {
    let b = text.as_bytes();
    if last >= b.len() {
        return Span::new(last, last);
    }
    let mut start = last;
    if b[last] == b'"' {
        while start > 0 {
            start -= 1;
            if b[start] == b'"' && (start == 0 || b[start - 1] != b'\\') {
                break;
            }
        }
    } else {
        while start > 0 && !b":,[{ \t\r\n".contains(&b[start - 1]) {
            start -= 1;
        }
    }
    Span::new(start, last + 1)
}

/// A serde_json error as "expected E, found F" at its line and column.
fn json_diagnostic(text: &str, e: &serde_json::Error) -> Diagnostic {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(e.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let at = (line_start + e.column().saturating_sub(1)).min(text.len());
    let span = Span::new(at, at + 1);
    let full = e.to_string();
    // serde_json appends " at line L column C"; the position is shown apart.
    let msg = match full.rfind(" at line ") {
        Some(i) => &full[..i],
        None => &full,
    };
    let plain = |t: &str| match t {
        "u64" => "a non-negative integer (64 bits)".to_string(),
        "i64" => "an integer (64 bits)".to_string(),
        "u32" => "a non-negative integer (32 bits)".to_string(),
        "f64" => "a number".to_string(),
        "a sequence" => "an array".to_string(),
        "a boolean" => "`true` or `false`".to_string(),
        t if t.starts_with("struct ") => format!("an object ({})", &t[7..]),
        t => t.to_string(),
    };
    let mut span = span;
    let (expected, found) = if let Some(rest) = msg
        .strip_prefix("invalid type: ")
        .or_else(|| msg.strip_prefix("invalid value: "))
    {
        span = value_span(text, at);
        match rest.split_once(", expected ") {
            Some((f, x)) => (plain(x), f.to_string()),
            None => (
                "a value of the histogram schema".to_string(),
                rest.to_string(),
            ),
        }
    } else if let Some(field) = msg.strip_prefix("missing field ") {
        (
            format!("a field {field}"),
            "an object without it".to_string(),
        )
    } else if let Some(rest) = msg.strip_prefix("invalid length ") {
        match rest.split_once(", expected ") {
            Some((n, x)) => (x.to_string(), format!("length {n}")),
            None => ("another length".to_string(), rest.to_string()),
        }
    } else if let Some(what) = msg.strip_prefix("EOF while parsing ") {
        (
            format!("the rest of {what}"),
            "the end of the file".to_string(),
        )
    } else if msg == "number out of range" {
        (
            "an integer that fits in 64 bits".to_string(),
            "a larger number".to_string(),
        )
    } else if let Some(what) = msg.strip_prefix("expected ") {
        let found = text[at..]
            .chars()
            .next()
            .map_or("the end of the file".to_string(), |c| format!("`{c}`"));
        (what.to_string(), found)
    } else {
        ("well-formed JSON".to_string(), msg.to_string())
    };
    Diagnostic::expected(span, expected, found)
}

impl Histogram {
    /// Read a histogram file. Errors are rendered with their position in
    /// the file (`--> file:line:column`), like every ptxmc input error.
    pub fn read(path: &Path) -> Result<Histogram, String> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            LitmusError::whole_file(&shown, "a readable histogram", format!("an I/O error: {e}"))
                .rendered()
                .to_string()
        })?;
        Histogram::parse_file(&shown, &text)
    }
    /// Parse histogram JSON (for messages, it came from `path`), checking
    /// that every outcome has one value per column and that the counts add
    /// up without overflow.
    pub fn parse_file(path: &str, text: &str) -> Result<Histogram, String> {
        let render = |d: Diagnostic| LitmusError::new(path, text, d).rendered().to_string();
        let mut h: Histogram =
            serde_json::from_str(text).map_err(|e| render(json_diagnostic(text, &e)))?;
        h.source = Source {
            path: path.to_string(),
            text: text.to_string(),
        };
        if !h.schema.is_empty() && h.schema != SCHEMA {
            return Err(h.source.error_at_key(
                "schema",
                &format!("the schema `{SCHEMA}`"),
                format!("`{}`", h.schema),
            ));
        }
        if let Some((k, o)) = h
            .outcomes
            .iter()
            .enumerate()
            .find(|(_, o)| o.values.len() != h.columns.len())
        {
            return Err(h.source.error_at_key(
                "outcomes",
                &format!("{} values per outcome (one per column)", h.columns.len()),
                format!("{} in outcome {}", o.values.len(), k + 1),
            ));
        }
        let mut total: u64 = 0;
        for (k, o) in h.outcomes.iter().enumerate() {
            total = total.checked_add(o.count).ok_or_else(|| {
                h.source.error_at_key(
                    "outcomes",
                    &format!("counts that add up to at most {}", u64::MAX),
                    format!("a total that overflows at outcome {}", k + 1),
                )
            })?;
        }
        Ok(h)
    }
    /// Parse histogram JSON that has no file (messages say `<histogram>`).
    pub fn parse(text: &str) -> Result<Histogram, String> {
        Histogram::parse_file("<histogram>", text)
    }
    /// The histogram as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
