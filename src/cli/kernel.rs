//! `ptxmc kernel`: check a CUDA kernel (`.ptx`, or `.cu` compiled with nvcc)
//! under a launch given as flags, a `--launch` file, a `.launch` file beside
//! it or a `/* ptxmc-launch: ... */` comment in the `.cu` (docs/kernels.md).

use clap::Args;
use std::path::PathBuf;

use super::Exit;
use super::common::{EngineArgs, admit};
use super::run::{RunArgs, RunFormat, run_loaded};
use crate::ptx::{self, LaunchText};

/// Arguments of `ptxmc kernel`.
#[derive(Args, Debug)]
pub struct KernelArgs {
    /// The kernel: a `.ptx` file, or a `.cu` file (compiled with nvcc).
    pub file: PathBuf,
    /// A launch file (same grammar as the flags); replaces the one beside the kernel.
    #[arg(long, value_name = "FILE")]
    pub launch: Option<PathBuf>,
    /// The kernel to check (mangled or demangled name; default: the only one).
    #[arg(long, value_name = "NAME")]
    pub entry: Option<String>,
    /// CTAs of the grid: `X[,Y[,Z]]` (again after `--dependent`: its grid).
    #[arg(long, value_name = "X,Y,Z")]
    pub grid: Vec<String>,
    /// Threads per CTA: `X[,Y[,Z]]` (again after `--dependent`: its block).
    #[arg(long, value_name = "X,Y,Z")]
    pub block: Vec<String>,
    /// CTAs per cluster: `X[,Y[,Z]]` (again after `--dependent`: its cluster).
    #[arg(long, value_name = "X,Y,Z")]
    pub cluster: Vec<String>,
    /// A cooperative launch (`cudaLaunchCooperativeKernel`): the kernel gets
    /// the grid workspace that `cg::this_grid().sync()` uses (docs/kernels.md,
    /// "Grid-wide sync"). Applies to the kernel whose flags it is among
    /// (given again after `--dependent`, to the dependent kernel too).
    #[arg(long, action = clap::ArgAction::Count)]
    pub cooperative: u8,
    /// A second kernel, launched as the programmatic dependent of the first:
    /// the flags after it are its own; `--buffer NAME` alone passes the
    /// first kernel's buffer (docs/kernels.md, "Two kernels").
    #[arg(long, value_name = "NAME")]
    pub dependent: Option<String>,
    /// A buffer for the next pointer parameter: `NAME:TYPE[LEN]` or `NAME:TYPE[LEN]={v,...}`.
    #[arg(long, value_name = "NAME:TYPE[LEN]={..}")]
    pub buffer: Vec<String>,
    /// A value for the next scalar parameter: `NAME:TYPE=V`.
    #[arg(long, value_name = "NAME:TYPE=V")]
    pub scalar: Vec<String>,
    /// A tensor map for the next `.param .b8 [128]` parameter: `NAME:TYPE[D0,...]box[B0,...]`.
    #[arg(long, value_name = "NAME:TYPE[D..]box[B..]")]
    pub tensormap: Vec<String>,
    /// The fields of the next struct parameter (`.param .align A .b8 P[N]`):
    /// `NAME{OFF:buffer=NAME:TYPE[LEN]; OFF:scalar=NAME:TYPE=V; ...}`.
    #[arg(long = "struct", value_name = "NAME{OFF:KIND=..;..}")]
    pub structs: Vec<String>,
    /// Condition: some final state satisfies it (`out[0] != 42`).
    #[arg(long, value_name = "COND", group = "cond")]
    pub exists: Option<String>,
    /// Condition: no final state satisfies it.
    #[arg(long, value_name = "COND", group = "cond")]
    pub not_exists: Option<String>,
    /// Condition: every final state satisfies it.
    #[arg(long, value_name = "COND", group = "cond")]
    pub forall: Option<String>,
    /// The nvcc for `.cu` files (default: `$NVCC`, then `nvcc` on PATH).
    #[arg(long, value_name = "PATH")]
    pub nvcc: Option<PathBuf>,
    /// Engine options.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "herd")]
    pub format: RunFormat,
    /// Shorthand for `--format json`.
    #[arg(long)]
    pub json: bool,
    /// Add the engines' counters to the report.
    #[arg(long)]
    pub stats: bool,
    /// For CI: exit status 7 if the kernel has a data race (docs/races.md).
    #[arg(long)]
    pub deny_races: bool,
}

/// Quote a value for the launch text (the grammar's quotes).
fn quoted(v: &str) -> String {
    if v.contains('\'') {
        format!("\"{v}\"")
    } else {
        format!("'{v}'")
    }
}

/// The launch flags as one launch text, the dimension and parameter flags
/// (`--grid`, `--block`, `--cluster`, `--buffer`, `--scalar`,
/// `--tensormap`, `--struct`) and `--dependent` in the order they were
/// given on the command line (the flags after `--dependent` are the
/// dependent kernel's).
fn flags_text(a: &KernelArgs) -> String {
    let mut out: Vec<String> = Vec::new();
    let push = |out: &mut Vec<String>, flag: &str, v: &str| {
        out.push(flag.to_string());
        out.push(quoted(v));
    };
    if let Some(v) = &a.entry {
        push(&mut out, "--entry", v);
    }
    // Order: as the flags came.
    let mut lists = [
        ("--grid", a.grid.iter()),
        ("--block", a.block.iter()),
        ("--cluster", a.cluster.iter()),
        ("--buffer", a.buffer.iter()),
        ("--scalar", a.scalar.iter()),
        ("--tensormap", a.tensormap.iter()),
        ("--struct", a.structs.iter()),
        ("--dependent", a.dependent.as_slice().iter()),
    ];
    let mut cooperative = a.cooperative;
    for arg in std::env::args() {
        // The flag without a value, where it came (before or after `--dependent`).
        if arg == "--cooperative" && cooperative > 0 {
            cooperative -= 1;
            out.push("--cooperative".to_string());
        }
        for (flag, values) in lists.iter_mut() {
            if arg == *flag || arg.starts_with(&format!("{flag}=")) {
                if let Some(v) = values.next() {
                    push(&mut out, flag, v);
                }
            }
        }
    }
    // (Called other than from a command line: the rest in their own order,
    // a cooperative launch for the first kernel.)
    if cooperative > 0 {
        out.insert(0, "--cooperative".to_string());
    }
    for (flag, values) in lists {
        for v in values {
            push(&mut out, flag, v);
        }
    }
    for (f, v) in [
        ("--exists", &a.exists),
        ("--not-exists", &a.not_exists),
        ("--forall", &a.forall),
    ] {
        if let Some(v) = v {
            push(&mut out, f, v);
        }
    }
    out.join(" ")
}

/// Run `ptxmc kernel`.
pub fn run(args: &KernelArgs) -> Exit {
    let text = flags_text(args);
    let launch = if !text.is_empty() {
        Some(LaunchText::whole("command line", &text))
    } else if let Some(f) = &args.launch {
        match std::fs::read_to_string(f) {
            Ok(t) => Some(LaunchText::whole(&f.display().to_string(), &t)),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", f.display());
                return Exit::BadInput;
            }
        }
    } else {
        None
    };
    let read = ptx::load_file(&args.file, launch.as_ref(), args.nvcc.as_deref()).map(|t| vec![t]);
    let tests = match admit(read, args.engine.model) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let run_args = RunArgs {
        paths: vec![args.file.clone()],
        engine: args.engine.clone(),
        format: if args.json {
            RunFormat::Json
        } else {
            args.format
        },
        stats: args.stats,
        graphs: None,
        deny_warnings: false,
        deny_races: args.deny_races,
    };
    run_loaded(&tests, Exit::Success, &run_args)
}
