//! Pieces shared by the subcommands that run engines.

use clap::Args;
use std::path::Path;

use super::Exit;
use crate::engine::{EngineChoice, RunOptions};
use crate::litmus::{self, LitmusTest};
use crate::model::Model;

/// Engine options common to `run` and `check`.
#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// Engine to run.
    #[arg(long, value_enum, default_value_t = EngineChoice::default())]
    pub engine: EngineChoice,
    /// Memory model: `ptx7.5` (scopes incl. .cluster, proxies, aliases) or `ptx6.0` (no proxies).
    #[arg(long, value_enum, default_value_t = Model::default())]
    pub model: Model,
    /// How many times a loop may jump back (spin loops that only read are not bounded).
    #[arg(long, default_value_t = RunOptions::default().loop_bound, value_name = "N")]
    pub loop_bound: u32,
}

impl EngineArgs {
    /// The run options these arguments select.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            model: self.model,
            engine: self.engine,
            loop_bound: self.loop_bound,
            ..RunOptions::default()
        }
    }
}

/// Parse one file and admit its tests under `model`; diagnostics go to stderr.
pub fn load(path: &Path, model: Model) -> Result<Vec<LitmusTest>, Exit> {
    let tests = litmus::parse_file(path).map_err(|e| {
        eprint!("{}", e.rendered());
        Exit::BadInput
    })?;
    for t in &tests {
        if let Err(d) = model.admit(&t.program, &t.spans) {
            eprint!("{}", t.error(d).rendered());
            return Err(Exit::BadInput);
        }
    }
    Ok(tests)
}

/// Combine two exit statuses, keeping the more serious.
pub fn worst(a: Exit, b: Exit) -> Exit {
    fn rank(e: Exit) -> u8 {
        match e {
            Exit::Success => 0,
            Exit::CheckFailed => 1,
            Exit::Incomplete => 2,
            Exit::Disagreement => 3,
            Exit::BadInput => 4,
        }
    }
    if rank(a) >= rank(b) { a } else { b }
}
