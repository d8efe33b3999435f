//! The `ptxmc` command line: argument definitions (clap) and one function per
//! subcommand. Commands print to stdout; diagnostics go to stderr.

mod check;
mod common;
mod explain;
mod fix;
// `gen` is a reserved word in Rust 2024; the file keeps the short name.
#[path = "gen.rs"]
mod generate;
mod graphs;
mod hw;
mod kernel;
mod parse;
mod run;
mod serve;
mod step;
mod trace;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit statuses, documented in `--help` and README.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Everything went as expected.
    Success = 0,
    /// An expectation or verdict check failed.
    CheckFailed = 1,
    /// Bad input: a file could not be read or parsed, or a bad argument.
    BadInput = 2,
    /// The two engines disagree.
    Disagreement = 3,
    /// A limit was hit; results are incomplete.
    Incomplete = 4,
    /// A program can hang (deadlock or spin forever).
    Hang = 5,
    /// A program can reach undefined behaviour.
    Undefined = 6,
    /// Under `run --deny-races`: a program has a data race.
    Racy = 7,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

const EXIT_CODES: &str = "\
Exit status:
  0  success
  1  an expectation or verdict check failed
  2  bad input (unreadable or malformed test, bad arguments; warnings under --deny-warnings)
  3  the two engines disagree
  4  incomplete: a limit (states, time, memory) was hit
  5  a test can hang: a deadlock, or a loop that spins forever (every command)
  6  a test can reach undefined behaviour (a barrier used against the ISA's rules, ...)
  7  a test has a data race (run and kernel with --deny-races; docs/races.md)
When several apply, the most serious wins: 2, 3, 4, 6, 5, 7, 1.";

/// Which final outcomes does the PTX memory model allow for a litmus test?
#[derive(Parser, Debug)]
#[command(name = "ptxmc", version, about, long_about = None, after_help = EXIT_CODES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Read litmus tests and print them as IR (JSON) or canonical litmus text.
    ///
    /// Accepts herd/Dat3M `.litmus` files and NVIDIA mixedproxy `.test` files
    /// (templates are expanded, one test per row). Directories are searched
    /// recursively.
    #[command(after_help = EXIT_CODES)]
    Parse(parse::ParseArgs),
    /// List every final state the model allows, with the condition's verdict (herd-style or JSON).
    ///
    /// Directories are searched recursively for `.litmus` and `.test` files.
    /// For mixedproxy tests, says whether the file's `permit`/`assert` holds
    /// (exit status 1 if not).
    #[command(after_help = EXIT_CODES)]
    Run(run::RunArgs),
    /// Check a CUDA kernel (`.ptx`, or `.cu` compiled with nvcc) under a launch:
    /// every allowed outcome over its buffers, hangs, undefined behaviour.
    ///
    /// The launch comes from flags (`--grid 2 --block 1 --buffer data:int32[1]
    /// --forall 'data[0] == 1'`), `--launch FILE`, `FILE.launch` beside the
    /// kernel, or a `/* ptxmc-launch: ... */` comment in the `.cu`
    /// (docs/kernels.md). Exit statuses as `run`'s.
    #[command(after_help = EXIT_CODES)]
    Kernel(Box<kernel::KernelArgs>),
    /// Compare verdicts with a CSV of expected ones (Dat3M's `path,1|0`; 1 = the condition holds).
    ///
    /// With `--property termination` the CSV is a liveness one (Dat3M's
    /// `*-Liveness-expected.csv`: 1 = every execution terminates, 0 = some
    /// execution hangs). Otherwise a program that can hang fails its row (exit
    /// status 5) unless `--liveness` expects the hang. Prints one line per
    /// mismatch, then `N passed, M failed`.
    #[command(after_help = EXIT_CODES)]
    Check(check::CheckArgs),
    /// Show a shortest step-by-step run of the operational machine ending in an outcome.
    ///
    /// Each step names the thread, the instruction and what changed: versions
    /// at the L2 coherence point, what the thread's cache lines are guaranteed
    /// to show, registers. `--follow` replays a run from its list of choices.
    /// Exit status 1 if the outcome is not reachable.
    #[command(after_help = EXIT_CODES)]
    Trace(trace::TraceArgs),
    /// Step through the machine yourself: the state, the enabled transitions
    /// by number, undo/redo, reachable outcomes, go to an outcome.
    ///
    /// Commands: a number (take it), `u`/`r` (undo/redo), `s` (restart),
    /// `o` (outcomes still reachable), `g COND` (go to an outcome), `f` (the
    /// `--follow` list), `e [COND]` (explain), `q`. Reads one command a line
    /// when standard input is not a terminal.
    #[command(after_help = EXIT_CODES)]
    Step(step::StepArgs),
    /// The playground: edit, run, explain and step through tests in a browser.
    ///
    /// Serves a page and its JSON API (docs/playground.md) on 127.0.0.1:8077
    /// by default; everything is embedded, nothing is fetched or read from
    /// disk. Every request runs under `--timeout` and `--max-states`; at most
    /// `--max-running` run at once. Ctrl-C stops it.
    #[command(after_help = EXIT_CODES)]
    Serve(serve::ServeArgs),
    /// Why the model allows or forbids an outcome: a witness execution, or every
    /// candidate with the axiom and the cycle that rejects it; and the machine's side.
    ///
    /// The outcome defaults to the test's condition (for a `forall` test, its
    /// negation). `--format dot` or `svg` draws the witness or one picture per
    /// group of rejected candidates (`-o DIR` writes them all).
    #[command(after_help = EXIT_CODES)]
    Explain(explain::ExplainArgs),
    /// The cheapest changes that make an allowed outcome forbidden (fences,
    /// stronger semantics, wider scopes), each verified by both engines.
    ///
    /// Lists every minimal fix with at most `--bound` changes, cheapest first
    /// (costs: docs/fix.md). `--weaken` asks the opposite: which fences can go
    /// and which annotations can be weakened while a forbidden outcome stays
    /// forbidden. `--emit DIR` writes each changed test.
    #[command(after_help = EXIT_CODES)]
    Fix(fix::FixArgs),
    /// Hardware conformance: generate CUDA harnesses, compare GPU histograms with the model.
    ///
    /// `ptxmc hw gen PATH... -o DIR` writes the harness (build it with
    /// `DIR/build.sh`, run it with `DIR/run.sh OUTDIR SECONDS`);
    /// `ptxmc hw compare OUTDIR/*.json --sass DIR/bundle00.sass ...` sets the
    /// histograms beside the model (exit 1: a forbidden outcome the SASS
    /// check does not explain).
    #[command(after_help = EXIT_CODES)]
    Hw(hw::HwArgs),
    /// Generate litmus tests from the critical cycles of a vocabulary of edges (diy-style).
    ///
    /// Every cycle of up to `--size` edges becomes a test whose `exists`
    /// condition is the cycle's outcome; both engines classify each one.
    /// `-o DIR` receives `NAME.litmus` files and `expected.csv`;
    /// `--shard K/N` keeps a deterministic part of the set. Exit status 3 if
    /// the engines disagree on a test, 4 if one was stopped by a limit.
    #[command(after_help = EXIT_CODES)]
    Gen(generate::GenArgs),
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                Exit::BadInput
            } else {
                Exit::Success
            };
            let _ = e.print();
            return code.into();
        }
    };
    let exit = match cli.command {
        Command::Parse(args) => parse::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Kernel(args) => kernel::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Trace(args) => trace::run(&args),
        Command::Step(args) => step::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Fix(args) => fix::run(&args),
        Command::Hw(args) => hw::run(&args),
        Command::Gen(args) => generate::run(&args),
    };
    exit.into()
}
