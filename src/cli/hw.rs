//! `ptxmc hw gen` and `ptxmc hw compare`: hardware conformance.

use clap::{Args, Subcommand, ValueEnum};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Exit;
use super::common::{load, load_all, worst};
use crate::hw::compare::{self, Comparison};
use crate::hw::generate::{self, GenOptions};
use crate::hw::histogram::Histogram;
use crate::hw::sass::{self, Functions};
use crate::ir::Program;
use crate::model::Model;

/// Arguments of `ptxmc hw`.
#[derive(Args, Debug)]
pub struct HwArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: HwCommand,
}

/// The `hw` subcommands.
#[derive(Subcommand, Debug)]
pub enum HwCommand {
    /// Write a CUDA harness for tests: bundles of tests, build.sh, run.sh, manifest.json.
    ///
    /// Tests the harness cannot run exactly are refused (`refused: TEST: REASON`
    /// on stderr and in manifest.json), never approximated.
    Gen(GenArgs),
    /// Compare histograms measured on a GPU with the outcomes the model allows.
    ///
    /// Per histogram: allowed and observed, allowed but never observed,
    /// observed but forbidden. Exit status 1 if something forbidden was
    /// observed and the SASS check does not explain it.
    Compare(CompareArgs),
}

/// Arguments of `ptxmc hw gen`.
#[derive(Args, Debug)]
pub struct GenArgs {
    /// Test files, or directories searched recursively for `.litmus` and `.test` files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The harness directory to write (created if needed).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Tests per bundle (one .cu file and one binary each).
    #[arg(long, default_value_t = GenOptions::default().bundle_size, value_name = "N")]
    pub bundle_size: usize,
}

/// Output formats of `ptxmc hw compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    /// One block of text per histogram.
    Text,
    /// A JSON array with one object per histogram.
    Json,
}

/// Arguments of `ptxmc hw compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Histogram files written by the harness.
    #[arg(required = true)]
    pub histograms: Vec<PathBuf>,
    /// The litmus test (default: the path recorded in the histogram). Only with one histogram.
    #[arg(long, value_name = "FILE")]
    pub test: Option<PathBuf>,
    /// `cuobjdump -sass` output of the bundles (build.sh writes bundleNN.sass);
    /// takes several files (`--sass hwout/bundle*.sass`) and may be repeated.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub sass: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: CompareFormat,
}

/// Run `ptxmc hw`.
pub fn run(args: &HwArgs) -> Exit {
    match &args.command {
        HwCommand::Gen(a) => generate_cmd(a),
        HwCommand::Compare(a) => compare_cmd(a),
    }
}

fn generate_cmd(args: &GenArgs) -> Exit {
    let (loaded, exit) = load_all(&args.paths, Model::Ptx75);
    let tests: Vec<(String, Program)> = loaded
        .into_iter()
        .map(|t| (t.display_path(), t.program))
        .collect();
    let g = generate::generate(
        &tests,
        &GenOptions {
            bundle_size: args.bundle_size,
        },
    );
    for r in &g.refusals {
        eprintln!("refused: {r}");
    }
    if let Err(e) = write_files(&args.out, &g.files) {
        eprintln!("error: cannot write {}: {e}", args.out.display());
        return Exit::BadInput;
    }
    let bundles = g.files.iter().filter(|(n, _)| n.ends_with(".cu")).count();
    println!(
        "{} tests generated in {bundles} bundles under {}; {} refused",
        g.entries.len(),
        args.out.display(),
        g.refusals.len()
    );
    let mut by_key: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &g.refusals {
        *by_key.entry(r.reason.key()).or_default() += 1;
    }
    for (k, n) in by_key {
        println!("  refused {n:>4}  {k}");
    }
    exit
}

fn write_files(dir: &Path, files: &[(String, String)]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, content) in files {
        let path = dir.join(name);
        std::fs::write(&path, content)?;
        if name.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

/// The program a histogram was measured for: `path` or `path[row]`. When
/// the name comes from the histogram `h`, a bad one is reported at its
/// `"test"` field.
fn load_test(spec: &str, h: Option<&Histogram>) -> Result<crate::ir::Program, Exit> {
    let (path, row) = match spec.strip_suffix(']').and_then(|s| s.rsplit_once('[')) {
        Some((p, r)) if r.parse::<usize>().is_ok() => (p, r.parse::<usize>().ok()),
        _ => (spec, None),
    };
    let unknown = |found: String| {
        const EXPECTED: &str =
            "a test file (`path` or `path[row]`, relative to the current directory)";
        match h {
            Some(h) => eprint!("{}", h.source.error_at_key("test", EXPECTED, found)),
            None => eprintln!("error: expected {EXPECTED}, found {found}"),
        }
        Exit::BadInput
    };
    if !Path::new(path).is_file() {
        return Err(unknown(format!("`{spec}`, which is not a file")));
    }
    let tests = load(Path::new(path), Model::Ptx75)?;
    tests
        .into_iter()
        .find(|t| t.instance == row || row.is_none())
        .map(|t| t.program)
        .ok_or_else(|| unknown(format!("`{spec}`, which names no test of the file")))
}

fn compare_cmd(args: &CompareArgs) -> Exit {
    if args.test.is_some() && args.histograms.len() > 1 {
        eprintln!("error: --test needs exactly one histogram");
        return Exit::BadInput;
    }
    let mut funcs: Option<Functions> = None;
    for f in &args.sass {
        match std::fs::read_to_string(f) {
            Ok(text) => funcs
                .get_or_insert_with(Functions::new)
                .extend(sass::parse(&text)),
            Err(e) => {
                eprintln!("error: {}: cannot read: {e}", f.display());
                return Exit::BadInput;
            }
        }
    }
    let mut exit = Exit::Success;
    let mut results: Vec<Comparison> = Vec::new();
    for hp in &args.histograms {
        let h = match Histogram::read(hp) {
            Ok(h) => h,
            Err(e) => {
                eprint!("{e}");
                exit = worst(exit, Exit::BadInput);
                continue;
            }
        };
        let spec = args
            .test
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| h.test.clone());
        let p = match load_test(&spec, args.test.is_none().then_some(&h)) {
            Ok(p) => p,
            Err(e) => {
                exit = worst(exit, e);
                continue;
            }
        };
        match compare::compare(&h, &p, funcs.as_ref()) {
            Ok(c) => {
                if !c.ok() {
                    exit = worst(exit, Exit::CheckFailed);
                }
                results.push(c);
            }
            Err(e) => {
                eprintln!("error: {}: {e}", hp.display());
                exit = worst(exit, Exit::BadInput);
            }
        }
    }
    match args.format {
        CompareFormat::Text => {
            let blocks: Vec<String> = results.iter().map(compare::text).collect();
            print!("{}", blocks.join("\n"));
        }
        CompareFormat::Json => {
            let v: Vec<serde_json::Value> = results.iter().map(compare::to_json).collect();
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
    }
    exit
}
