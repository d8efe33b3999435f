//! `ptxmc gen`: diy-style generation of litmus tests from the critical
//! cycles of a vocabulary, classified by both engines (`docs/gen.md`).

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::Exit;
use super::common::{EngineArgs, init_pool};
use crate::engine::RunResult;
use crate::generate::{self, GenError, GenOptions, GenTest, Shard, Vocabulary, output, vocab};

/// Output formats of `ptxmc gen`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GenFormat {
    /// `DIR/*.litmus` and `DIR/expected.csv` (Dat3M's `path,1|0`); a summary on stdout.
    Csv,
    /// One JSON object per test on stdout (merge shards with `cat`); `DIR/*.litmus` too with `-o`.
    Jsonl,
}

/// Arguments of `ptxmc gen`.
#[derive(Args, Debug)]
pub struct GenArgs {
    /// Largest cycle, in edges (every critical cycle of 2..=N edges is generated).
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub size: usize,
    /// Vocabulary: a built-in one (`default`, `alias`, `proxy`, `deps`) or a file
    /// (write `./NAME` for a file named like a built-in).
    #[arg(long, default_value = "default", value_name = "FILE|NAME")]
    pub vocab: String,
    /// Directory for the `.litmus` files and `expected.csv` (created if missing).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only the K-th of N deterministic parts of the set (1 <= K <= N).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: GenFormat,
    /// Write the tests without running the engines (no `expected.csv`).
    #[arg(long)]
    pub no_classify: bool,
    /// Print a built-in vocabulary's text and exit (`--print-vocab list` lists them).
    #[arg(long, value_name = "NAME")]
    pub print_vocab: Option<String>,
    /// Engine options.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Largest cycle size accepted (enumeration grows exponentially with it).
const MAX_SIZE: usize = 12;

/// Run `ptxmc gen`.
pub fn run(args: &GenArgs) -> Exit {
    if let Some(name) = &args.print_vocab {
        return print_vocab(name);
    }
    if !(2..=MAX_SIZE).contains(&args.size) {
        eprintln!(
            "error: expected a cycle size from 2 to {MAX_SIZE} (`--size`), found {}",
            args.size
        );
        return Exit::BadInput;
    }
    if args.format == GenFormat::Csv && args.out.is_none() {
        eprintln!("error: expected an output directory (`-o DIR`) for `--format csv`, found none");
        return Exit::BadInput;
    }
    let vocab = match load_vocab(&args.vocab) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let shard = args.shard.unwrap_or(Shard::ALL);
    init_pool(args.engine.jobs());

    let start = Instant::now();
    let gen_opts = GenOptions {
        size: args.size,
        shard,
        max_memory: args.engine.options(1).limits.max_memory,
    };
    let plan = match generate::plan(&vocab, &gen_opts) {
        Ok(p) => p,
        Err(e) => return gen_error(&e),
    };
    if let Some(dir) = &args.out {
        // A failed run must not leave an earlier run's verdicts looking current.
        let stale = dir.join("expected.csv");
        let prepared =
            std::fs::create_dir_all(dir).and_then(|()| match std::fs::remove_file(&stale) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            });
        if let Err(e) = prepared {
            eprintln!(
                "error: expected a writable directory, found an I/O error: {e}\n --> {}",
                dir.display()
            );
            return Exit::BadInput;
        }
    }
    let opts = crate::engine::RunOptions {
        // Verdicts are written, not outcomes: the least reserve.
        output_cost: crate::limits::OutputCost::HERD,
        ..args.engine.options(plan.cycles.len())
    };
    let bar = progress_bar(plan.cycles.len() as u64);
    let mut gen_secs = start.elapsed().as_secs_f64();
    let mut class_secs = 0.0;
    let mut csv = String::new();
    let mut allowed = 0;
    let mut failures = Failures::default();
    // Chunks keep memory to one chunk of programs, whatever the set's size.
    for chunk in plan.cycles.chunks(CHUNK) {
        let t0 = Instant::now();
        let tests = match generate::build_all(chunk) {
            Ok(t) => t,
            Err(e) => return gen_error(&e),
        };
        if let Err(e) = admit(&tests, &vocab, args) {
            return e;
        }
        if let Some(dir) = &args.out {
            if let Err(e) = write_tests(dir, &tests) {
                eprintln!("error: cannot write the tests: {e}\n --> {}", dir.display());
                return Exit::BadInput;
            }
        }
        gen_secs += t0.elapsed().as_secs_f64();
        let results = if args.no_classify {
            bar.inc(tests.len() as u64);
            None
        } else {
            let t1 = Instant::now();
            let r = generate::classify(&tests, &opts, &|| bar.inc(1));
            class_secs += t1.elapsed().as_secs_f64();
            failures.record(&tests, &r, args.out.as_deref(), opts.loop_bound);
            Some(r)
        };
        if failures.disagreements > 0 {
            break;
        }
        let mut lines = Vec::new();
        for (k, t) in tests.iter().enumerate() {
            let r = results.as_ref().and_then(|r| r[k].as_ref());
            if r.is_some_and(|r| r.verdict.holds) {
                allowed += 1;
            }
            match args.format {
                GenFormat::Csv => {
                    if let Some(r) = r {
                        csv.push_str(&output::csv_row(t, r));
                        csv.push('\n');
                    }
                }
                GenFormat::Jsonl => lines.push(output::jsonl_line(t, r)),
            }
        }
        if let Err(e) = print_lines(&lines) {
            eprintln!("error: cannot write to stdout: {e}");
            return Exit::BadInput;
        }
    }
    bar.finish_and_clear();
    let exit = failures.exit();
    if exit != Exit::Success {
        return exit;
    }
    let n = plan.cycles.len();
    let mut summary = format!(
        "Generated {n} tests (shard {shard} of {} cycles) from vocabulary `{}`, up to {} edges, in {gen_secs:.2} s",
        plan.total, vocab.name, args.size
    );
    let skipped = plan.stats.shapes_needing_observers;
    if skipped > 0 {
        summary.push_str(&format!(
            " ({skipped} cycle shapes left out: more than two stores to one location need observers)"
        ));
    }
    if !args.no_classify {
        summary.push_str(&format!(
            "; classified by {} in {class_secs:.2} s: {allowed} allowed, {} forbidden",
            opts.engine.label(),
            n - allowed
        ));
        if let (GenFormat::Csv, Some(dir)) = (args.format, &args.out) {
            if let Err(e) = std::fs::write(dir.join("expected.csv"), csv) {
                eprintln!(
                    "error: cannot write expected.csv: {e}\n --> {}",
                    dir.display()
                );
                return Exit::BadInput;
            }
        }
    }
    finish_summary(args.format, &summary);
    Exit::Success
}

/// Tests built and classified per chunk.
const CHUNK: usize = 4096;

fn gen_error(e: &GenError) -> Exit {
    eprintln!("error: {e}");
    match e {
        GenError::Limit(_) => Exit::Incomplete,
        GenError::Defect(_) => Exit::BadInput,
    }
}

/// Every test must be admitted by the chosen model (`--model ptx6.0` has no
/// proxies or clusters).
fn admit(tests: &[GenTest], vocab: &Vocabulary, args: &GenArgs) -> Result<(), Exit> {
    for t in tests {
        if let Err(d) = args.engine.model.admit(&t.program, &t.spans) {
            let path = generate::file_name(&t.name);
            eprint!(
                "{}",
                crate::litmus::LitmusError::new(&path, &t.text, d).rendered()
            );
            eprintln!(
                "error: vocabulary `{}` needs features that --model {} lacks",
                vocab.name, args.engine.model
            );
            return Err(Exit::BadInput);
        }
    }
    Ok(())
}

/// The summary goes where it does not mix with data: stdout for CSV (the
/// data is in files), stderr for JSON lines.
fn finish_summary(format: GenFormat, summary: &str) {
    match format {
        GenFormat::Csv => println!("{summary}"),
        GenFormat::Jsonl => eprintln!("{summary}"),
    }
}

fn print_lines(lines: &[String]) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for l in lines {
        writeln!(out, "{l}")?;
    }
    out.flush()
}

fn print_vocab(name: &str) -> Exit {
    if name == "list" {
        for (n, what, _) in vocab::BUILTIN {
            println!("{n:<8} {what}");
        }
        return Exit::Success;
    }
    match vocab::builtin_text(name) {
        Some(text) => {
            print!("{text}");
            Exit::Success
        }
        None => {
            let names: Vec<&str> = vocab::BUILTIN.iter().map(|b| b.0).collect();
            eprintln!(
                "error: expected a built-in vocabulary ({}), found `{name}`",
                names.join(", ")
            );
            Exit::BadInput
        }
    }
}

/// A built-in vocabulary by name, else a file.
fn load_vocab(arg: &str) -> Result<Vocabulary, Exit> {
    if let Some(v) = vocab::builtin(arg) {
        return Ok(v);
    }
    let path = Path::new(arg);
    let text = std::fs::read_to_string(path).map_err(|e| {
        let names: Vec<&str> = vocab::BUILTIN.iter().map(|b| b.0).collect();
        eprintln!(
            "error: expected a vocabulary file or a built-in vocabulary ({}), found an I/O error: {e}\n --> {arg}",
            names.join(", ")
        );
        Exit::BadInput
    })?;
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("vocabulary");
    vocab::parse(name, arg, &text).map_err(|e| {
        eprint!("{}", e.rendered());
        Exit::BadInput
    })
}

/// Write the tests' files side by side (file creation, not the text, is what
/// costs on a busy disk).
fn write_tests(dir: &Path, tests: &[GenTest]) -> std::io::Result<()> {
    tests
        .par_iter()
        .try_for_each(|t| std::fs::write(dir.join(generate::file_name(&t.name)), &t.text))
}

/// A progress bar on stderr, only when stderr is a terminal.
fn progress_bar(len: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} tests classified, {elapsed} (ETA {eta})",
        )
        .expect("valid template"),
    );
    bar
}

/// Disagreements (exit 3) and incomplete runs (exit 4), reported on stderr
/// as they are found. After either, `expected.csv` is not written: a verdict
/// list with holes would pass for a complete one. (JSON lines already
/// printed stay printed; the exit status says the set is incomplete.)
#[derive(Default)]
struct Failures {
    disagreements: usize,
    incomplete: usize,
}

impl Failures {
    fn record(
        &mut self,
        tests: &[GenTest],
        results: &[Option<RunResult>],
        dir: Option<&Path>,
        loop_bound: u32,
    ) {
        let at = |t: &GenTest| match dir {
            Some(d) => d.join(generate::file_name(&t.name)).display().to_string(),
            None => generate::file_name(&t.name),
        };
        for (t, r) in tests.iter().zip(results) {
            let Some(r) = r else { continue };
            if let Some(d) = &r.disagreement {
                self.disagreements += 1;
                eprintln!(
                    "error: the engines disagree on {} ({} states only operational, {} only axiomatic)\n --> {}",
                    t.name,
                    d.only_op.len(),
                    d.only_ax.len(),
                    at(t)
                );
            } else if let Some(why) = &r.incomplete {
                self.incomplete += 1;
                eprintln!("error: {} is incomplete: {why}\n --> {}", t.name, at(t));
            } else if !r.verdict_is_definitive(&t.program) {
                self.incomplete += 1;
                eprintln!(
                    "error: {} is inconclusive: the loop bound ({loop_bound}) was reached\n --> {}",
                    t.name,
                    at(t)
                );
            }
        }
    }

    fn exit(&self) -> Exit {
        if self.disagreements > 0 {
            eprintln!(
                "error: the engines disagree on {} test(s); the run stopped, no verdicts written",
                self.disagreements
            );
            Exit::Disagreement
        } else if self.incomplete > 0 {
            eprintln!(
                "error: {} test(s) incomplete; no verdicts written",
                self.incomplete
            );
            Exit::Incomplete
        } else {
            Exit::Success
        }
    }
}
