//! `ptxmc hw gen`, `ptxmc hw kernels` and `ptxmc hw compare`: hardware conformance.

use clap::{Args, Subcommand, ValueEnum};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Exit;
use super::common::{load, load_all, worst};
use crate::hw::compare::{self, Comparison, KernelComparison};
use crate::hw::generate::{self, GenOptions};
use crate::hw::histogram::Histogram;
use crate::hw::kernels::{self, KernelRun, RunnerOptions};
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
    /// Write a runner folder that launches kernels (`.ptx`, or `.cu` compiled
    /// with nvcc) as themselves under their launch descriptions.
    ///
    /// Per kernel: its PTX, a spec (grid, block, cluster, entry, buffers,
    /// scalars), then build.sh (ptxas each PTX; compile the runner) and
    /// run.sh (one process per kernel, a watchdog for hangs). The
    /// histograms it writes are read by `ptxmc hw compare`.
    Kernels(KernelsArgs),
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

/// Arguments of `ptxmc hw kernels`.
#[derive(Args, Debug)]
pub struct KernelsArgs {
    /// Kernel files (`.ptx`; `.cu` compiled with nvcc), or directories
    /// searched recursively for `.ptx` files. Each needs its launch beside
    /// it (a `.launch` file, or the `ptxmc-launch` comment of the `.cu`).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The folder to write (created if needed).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Launches per configuration (alone, then beside stress warps).
    #[arg(long, default_value_t = RunnerOptions::default().launches, value_name = "N")]
    pub launches: u64,
    /// A launch unfinished after this many milliseconds is recorded as a hang.
    #[arg(long, default_value_t = RunnerOptions::default().timeout_ms, value_name = "MS")]
    pub timeout_ms: u32,
    /// The nvcc for `.cu` files (default: `$NVCC`, then `nvcc` on PATH).
    #[arg(long, value_name = "PATH")]
    pub nvcc: Option<PathBuf>,
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
        HwCommand::Kernels(a) => kernels_cmd(a),
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

/// Kernel files under `paths`: files as given, directories searched
/// recursively for `.ptx` (a `.cu` beside its `.ptx` is the same kernel),
/// sorted within each directory.
fn kernel_files(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for e in entries {
            if e.is_dir() {
                walk(&e, out)?;
            } else if e.extension().is_some_and(|x| x == "ptx") {
                out.push(e);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn kernels_cmd(args: &KernelsArgs) -> Exit {
    let files = match kernel_files(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: cannot read a directory: {e}");
            return Exit::BadInput;
        }
    };
    let mut exit = Exit::Success;
    let mut runs: Vec<KernelRun> = Vec::new();
    for f in &files {
        if !crate::ptx::is_kernel_path(f) {
            eprintln!(
                "error: {}: expected a kernel (`.ptx` or `.cu`), found another kind of file",
                f.display()
            );
            exit = worst(exit, Exit::BadInput);
            continue;
        }
        match crate::ptx::load_file_full(f, None, args.nvcc.as_deref()) {
            Ok(k) => {
                let id = format!("k{:03}", runs.len());
                let test = f.display().to_string();
                match KernelRun::from_launch(&id, &test, &k.entry, &k.launch, &k.ptx) {
                    Ok(r) => runs.push(r),
                    Err(why) => {
                        eprintln!("refused: {test}: {why}");
                        exit = worst(exit, Exit::BadInput);
                    }
                }
            }
            Err(e) => {
                eprint!("{}", e.rendered());
                exit = worst(exit, Exit::BadInput);
            }
        }
    }
    let opts = RunnerOptions {
        launches: args.launches,
        timeout_ms: args.timeout_ms,
    };
    if let Err(e) = kernels::write(&args.out, &runs, &opts) {
        eprintln!("error: cannot write {}: {e}", args.out.display());
        return Exit::BadInput;
    }
    println!(
        "{} kernels written under {} ({} launches per configuration, hang after {} ms); \
         then: ./build.sh && ./run.sh results && ptxmc hw compare results/*.json",
        runs.len(),
        args.out.display(),
        opts.launches,
        opts.timeout_ms
    );
    for r in &runs {
        println!("  {}  {}", r.id, r.test);
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

/// One histogram compared: a litmus test's, or a kernel's (with the
/// histogram's columns).
enum Compared {
    Litmus(Comparison),
    Kernel(KernelComparison, Vec<String>),
}

/// A kernel's histogram ([`kernels`]) beside the model: the kernel is read
/// with the launch beside it, as `ptxmc hw kernels` did.
fn compare_kernel_histogram(h: &Histogram, spec: &str) -> Result<KernelComparison, Exit> {
    let path = Path::new(spec);
    if !path.is_file() {
        eprint!(
            "{}",
            h.source.error_at_key(
                "test",
                "a kernel file (relative to the current directory)",
                format!("`{spec}`, which is not a file")
            )
        );
        return Err(Exit::BadInput);
    }
    let t = crate::ptx::load_file(path, None, None).map_err(|e| {
        eprint!("{}", e.rendered());
        Exit::BadInput
    })?;
    compare::compare_kernel(h, &t.program).map_err(|e| {
        eprintln!("error: {spec}: {e}");
        Exit::BadInput
    })
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
    let mut results: Vec<Compared> = Vec::new();
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
        if crate::ptx::is_kernel_path(Path::new(&spec)) {
            match compare_kernel_histogram(&h, &spec) {
                Ok(c) => {
                    if !c.ok() {
                        exit = worst(exit, Exit::CheckFailed);
                    }
                    results.push(Compared::Kernel(c, h.columns.clone()));
                }
                Err(e) => exit = worst(exit, e),
            }
            continue;
        }
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
                results.push(Compared::Litmus(c));
            }
            Err(e) => {
                eprintln!("error: {}: {e}", hp.display());
                exit = worst(exit, Exit::BadInput);
            }
        }
    }
    match args.format {
        CompareFormat::Text => {
            let blocks: Vec<String> = results
                .iter()
                .map(|r| match r {
                    Compared::Litmus(c) => compare::text(c),
                    Compared::Kernel(c, cols) => compare::kernel_text(c, cols),
                })
                .collect();
            print!("{}", blocks.join("\n"));
        }
        CompareFormat::Json => {
            let v: Vec<serde_json::Value> = results
                .iter()
                .map(|r| match r {
                    Compared::Litmus(c) => compare::to_json(c),
                    Compared::Kernel(c, cols) => compare::kernel_to_json(c, cols),
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
    }
    exit
}
