//! A seeded, bounded mutation campaign over both engines and every
//! subcommand that runs one: the shipped tests of `litmus/`, mutated (lines
//! deleted, duplicated or swapped; numbers, scopes and semantics changed;
//! operands swapped; loops and self-loops inserted; threads multiplied up
//! to 64), run through the binary's `run` (both engines), `check`,
//! `explain`, `fix`, `trace` (to an outcome and `--hang`) and `step` (read
//! from a pipe), each under a short time limit.
//!
//! Every command must return: no panic (exit 101) or abort (a signal), no
//! run far beyond its limit (a hang guard of ten times the limit and five
//! seconds: a guard, not a timing assertion), and no disagreement between
//! the engines when both finish (exit 3).
//!
//! By default 200 mutants, each through `run` and one other command in
//! turn (seconds); a deep campaign is one variable away:
//! `PTXMC_MUTATION_CASES=3000` (every command on each; `PTXMC_MUTATION_SEED`
//! for another sequence), or `PTXMC_DEEP=1` for 1,000. The figures (inputs,
//! commands, panics, overruns, disagreements, peak memory) are printed
//! (`--nocapture`); failing mutants are kept on disk. `PTXMC_MUTATION_ONLY=I`
//! runs mutant `I` of the same sequence alone, to reproduce a failure.
//!
//! Loops without any read are not inserted: the machine misses their hangs
//! (`a_loop_without_reads_hangs_in_both_engines`, ignored until fixed).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Mutants in the default run, and in a deep one (`PTXMC_DEEP=1`).
const DEFAULT_CASES: usize = 200;
const DEEP_CASES: usize = 1000;

/// The limit every command runs under, in seconds.
const TIMEOUT: f64 = 0.5;
/// The memory limit of the commands that take one, in MiB.
const MAX_MEMORY: u64 = 500;

/// A command still running after this is an overrun: ten times its limit
/// and five seconds (process start, parsing, printing, a loaded machine).
fn guard() -> Duration {
    Duration::from_secs_f64(10.0 * TIMEOUT + 5.0)
}

fn cases() -> usize {
    if let Some(n) = std::env::var("PTXMC_MUTATION_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    if std::env::var("PTXMC_DEEP").is_ok_and(|v| !v.is_empty() && v != "0") {
        return DEEP_CASES;
    }
    DEFAULT_CASES
}

/// xorshift64*: a deterministic sequence for a seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// The shipped `.litmus` tests, in a fixed order.
fn corpus() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "litmus") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus"),
        &mut files,
    );
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// Where a test's thread table is: the header line and the instruction rows
/// (up to the condition), if it has the usual shape.
fn table(lines: &[String]) -> Option<(usize, usize)> {
    let close = lines.iter().position(|l| l.contains('}'))?;
    let header = (close + 1..lines.len()).find(|&i| lines[i].trim_start().starts_with("P0"))?;
    let end = (header + 1..lines.len())
        .find(|&i| {
            let l = lines[i].trim_start();
            ["exists", "~exists", "forall", "filter", "locations", "~"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .unwrap_or(lines.len());
    Some((header, end))
}

fn cells(row: &str) -> Vec<String> {
    let row = row.trim_end();
    let row = row.strip_suffix(';').unwrap_or(row);
    row.split('|').map(|c| c.trim().to_string()).collect()
}

fn join(cells: &[String]) -> String {
    format!(" {} ;", cells.join(" | "))
}

const NUMBERS: [&str; 10] = [
    "0",
    "1",
    "2",
    "3",
    "-1",
    "7",
    "255",
    "4096",
    "2147483647",
    "99999999999999999999",
];
const SCOPES: [&str; 4] = [".cta", ".cluster", ".gpu", ".sys"];
const SEMS: [&str; 7] = [
    ".weak",
    ".relaxed",
    ".acquire",
    ".release",
    ".acq_rel",
    ".sc",
    ".volatile",
];

/// Replace one occurrence (chosen at random) of one of `words` by another.
fn swap_word(text: &str, words: &[&str], rng: &mut Rng) -> Option<String> {
    let hits: Vec<(usize, &str)> = words
        .iter()
        .flat_map(|w| text.match_indices(w).map(move |(i, _)| (i, *w)))
        .filter(|&(i, w)| {
            // A whole modifier: not followed by a letter or digit.
            !text[i + w.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .collect();
    if hits.is_empty() {
        return None;
    }
    let (i, w) = *rng.pick(&hits);
    let by = rng.pick(words);
    Some(format!("{}{}{}", &text[..i], by, &text[i + w.len()..]))
}

/// One mutation of `text`; `n` names labels uniquely.
fn mutate_once(text: &str, rng: &mut Rng, n: usize) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let tab = table(&lines);
    match rng.below(11) {
        0 if lines.len() > 1 => {
            lines.remove(rng.below(lines.len()));
        }
        1 => {
            let i = rng.below(lines.len());
            lines.insert(i, lines[i].clone());
        }
        2 => {
            let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
            lines.swap(i, j);
        }
        3 => {
            // A number.
            let digits: Vec<usize> = text
                .char_indices()
                .filter(|&(i, c)| {
                    c.is_ascii_digit()
                        && !text[..i]
                            .chars()
                            .next_back()
                            .is_some_and(|p| p.is_ascii_alphanumeric())
                })
                .map(|(i, _)| i)
                .collect();
            if digits.is_empty() {
                return text.to_string();
            }
            let i = *rng.pick(&digits);
            let end = text[i..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(text.len(), |k| i + k);
            return format!("{}{}{}", &text[..i], rng.pick(&NUMBERS), &text[end..]);
        }
        4 => return swap_word(text, &SCOPES, rng).unwrap_or_else(|| text.to_string()),
        5 => return swap_word(text, &SEMS, rng).unwrap_or_else(|| text.to_string()),
        6 => {
            // Swap two operands of one instruction.
            let Some((h, e)) = tab else {
                return text.to_string();
            };
            if e <= h + 1 {
                return text.to_string();
            }
            let r = h + 1 + rng.below(e - h - 1);
            let mut cs = cells(&lines[r]);
            let c = rng.below(cs.len());
            let Some((op, args)) = cs[c].split_once(' ') else {
                return text.to_string();
            };
            let mut args: Vec<String> = args.split(',').map(|a| a.trim().to_string()).collect();
            let (a, b) = (rng.below(args.len()), rng.below(args.len()));
            args.swap(a, b);
            cs[c] = format!("{op} {}", args.join(", "));
            lines[r] = join(&cs);
        }
        k @ (7 | 8) => {
            // A spin loop around a read: the label before it, a branch on
            // the register it reads right after it (a self-loop) or after
            // one or two more rows (a loop). Loops without any read are left
            // out: the machine misses their hangs (a known disagreement,
            // `a_loop_without_reads_hangs_in_both_engines` below).
            let Some((h, e)) = tab else {
                return text.to_string();
            };
            let reads: Vec<(usize, usize, String)> = (h + 1..e)
                .flat_map(|r| {
                    cells(&lines[r])
                        .into_iter()
                        .enumerate()
                        .filter(|(_, c)| c.starts_with("ld") || c.starts_with("atom"))
                        .filter_map(move |(col, c)| {
                            let dst = c.split_once(' ')?.1.split(',').next()?.trim().to_string();
                            Some((r, col, dst))
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            if reads.is_empty() {
                return text.to_string();
            }
            let (at, col, dst) = rng.pick(&reads).clone();
            let width = cells(&lines[h]).len();
            let label = format!("LM{n}");
            let branch = match rng.below(2) {
                0 => format!("beq {dst}, 0, {label}"),
                _ => format!("bne {dst}, 1, {label}"),
            };
            let row = |cell: String| {
                join(
                    &(0..width)
                        .map(|c| {
                            if c == col {
                                cell.clone()
                            } else {
                                String::new()
                            }
                        })
                        .collect::<Vec<_>>(),
                )
            };
            let last = if k == 7 {
                (at + 1 + rng.below(2)).min(e - 1)
            } else {
                at
            };
            lines.insert(last + 1, row(branch));
            lines.insert(at, row(format!("{label}:")));
        }
        9 => {
            // Multiply the threads: 2x, 4x, ... up to 64.
            let Some((h, e)) = tab else {
                return text.to_string();
            };
            let width = cells(&lines[h]).len();
            let times = (*rng.pick(&[2usize, 4, 8, 16, 64]) * width).min(64) / width;
            for (k, line) in lines[h..e].iter_mut().enumerate() {
                let header = k == 0;
                let cs = cells(line);
                let mut out = Vec::new();
                for k in 0..times.max(1) {
                    for (c, cell) in cs.iter().enumerate() {
                        if header {
                            // Rename the header's thread: `P{c}` → `P{k*width + c}`.
                            let rest = cell
                                .trim_start_matches('P')
                                .trim_start_matches(|ch: char| ch.is_ascii_digit());
                            out.push(format!("P{}{rest}", k * width + c));
                        } else {
                            out.push(cell.clone());
                        }
                    }
                }
                *line = join(&out);
            }
        }
        _ => {
            // A register or location renamed to something else of the test.
            let words: Vec<&str> = text
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| w.len() <= 3 && w.starts_with(['r', 'x', 'y', 'f']))
                .collect();
            if words.len() < 2 {
                return text.to_string();
            }
            let (a, b) = (*rng.pick(&words), *rng.pick(&words));
            let line = rng.below(lines.len());
            lines[line] = lines[line].replacen(a, b, 1);
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// One mutant: one to three mutations of a shipped test.
fn mutant(corpus: &[(PathBuf, String)], rng: &mut Rng, n: usize) -> (String, String) {
    let (path, text) = rng.pick(corpus);
    let mut t = text.clone();
    for k in 0..1 + rng.below(3) {
        t = mutate_once(&t, rng, n * 4 + k);
    }
    (path.file_name().unwrap().to_string_lossy().into_owned(), t)
}

/// What a command did.
struct Ran {
    code: Option<i32>,
    took: Duration,
    overran: bool,
    stderr: String,
    peak_kib: u64,
}

/// The resident peak of a live process, in KiB (Linux).
fn vm_hwm(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Run the binary with `args` (and `stdin`), killing it at the guard.
fn ptxmc(args: &[String], stdin: &str) -> Ran {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ptxmc starts");
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let mut peak_kib = 0;
    let mut overran = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(k) = vm_hwm(child.id()) {
            peak_kib = peak_kib.max(k);
        }
        if start.elapsed() > guard() {
            overran = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = start.elapsed();
    let _ = writer.join();
    Ran {
        code: status.code(),
        took,
        overran,
        stderr: reader.join().unwrap(),
        peak_kib,
    }
}

/// The commands run on a mutant at `file` (in `dir`, with `csv` listing it).
fn commands(
    file: &Path,
    dir: &Path,
    csv: &Path,
    all: bool,
    rng: &mut Rng,
) -> Vec<(Vec<String>, String)> {
    let f = file.to_str().unwrap().to_string();
    let t = TIMEOUT.to_string();
    let m = MAX_MEMORY.to_string();
    let s = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let limits = s(&["--timeout", &t, "--max-memory", &m]);
    let with = |mut a: Vec<String>, extra: &[String]| {
        a.extend_from_slice(extra);
        a
    };
    let run = with(s(&["run", "--engine", "both", "--jobs", "1", &f]), &limits);
    let others: Vec<(Vec<String>, String)> = vec![
        (
            with(
                s(&[
                    "check",
                    "--expected",
                    csv.to_str().unwrap(),
                    "--root",
                    dir.to_str().unwrap(),
                    "--jobs",
                    "1",
                ]),
                &limits,
            ),
            String::new(),
        ),
        (s(&["explain", &f, "--timeout", &t]), String::new()),
        (s(&["fix", &f, "--timeout", &t]), String::new()),
        (with(s(&["trace", &f]), &limits), String::new()),
        (with(s(&["trace", "--hang", &f]), &limits), String::new()),
        (
            with(s(&["step", &f]), &limits),
            "0\n1\no\ng hang\nu\nf\ne\np\nq\n".to_string(),
        ),
    ];
    let mut out = vec![(run, String::new())];
    if all {
        out.extend(others);
    } else {
        // One other command per mutant, in turn.
        let k = rng.below(others.len());
        out.push(others[k].clone());
    }
    out
}

#[derive(Default)]
struct Tally {
    inputs: usize,
    commands: usize,
    panics: Vec<String>,
    overruns: Vec<String>,
    disagreements: Vec<String>,
    peak_kib: u64,
    slowest: (Duration, String),
}

#[test]
fn mutants_never_panic_overrun_or_disagree() {
    let n = cases();
    let seed: u64 = std::env::var("PTXMC_MUTATION_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let all = n > DEFAULT_CASES || std::env::var("PTXMC_MUTATION_ALL").is_ok();
    // One mutant of the sequence, to reproduce a failure (its index and the
    // campaign's size and seed, as the failure printed them).
    let only: Option<usize> = std::env::var("PTXMC_MUTATION_ONLY")
        .ok()
        .and_then(|v| v.parse().ok());
    let corpus = corpus();
    assert!(corpus.len() > 100, "the shipped tests are found");
    let dir = std::env::temp_dir().join(format!("ptxmc-mutation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tally = Mutex::new(Tally::default());
    let next = AtomicUsize::new(0);
    // Two mutants at a time (the commands run one engine thread each, and
    // `run` two).
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return;
                    }
                    if only.is_some_and(|o| o != i) {
                        continue;
                    }
                    let mut rng = Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(i as u64));
                    let (from, text) = mutant(&corpus, &mut rng, i);
                    let sub = dir.join(format!("m{i}"));
                    std::fs::create_dir_all(&sub).unwrap();
                    let file = sub.join(format!("m{i}.litmus"));
                    std::fs::write(&file, &text).unwrap();
                    let csv = sub.join("expected.csv");
                    std::fs::write(&csv, format!("m{i}.litmus,1\n")).unwrap();
                    let mut failed = false;
                    for (args, stdin) in commands(&file, &sub, &csv, all, &mut rng) {
                        let r = ptxmc(&args, &stdin);
                        let what = format!(
                            "mutant {i} of {from} ({}): `ptxmc {}`: exit {:?} in {:.2?}",
                            file.display(),
                            args.join(" "),
                            r.code,
                            r.took
                        );
                        let mut t = tally.lock().unwrap();
                        t.commands += 1;
                        t.peak_kib = t.peak_kib.max(r.peak_kib);
                        if r.took > t.slowest.0 {
                            t.slowest = (r.took, what.clone());
                        }
                        if r.overran {
                            t.overruns.push(what);
                            failed = true;
                        } else if r.code.is_none()
                            || r.code == Some(101)
                            || r.stderr.contains("panicked at")
                        {
                            t.panics.push(format!("{what}\n{}", r.stderr));
                            failed = true;
                        } else if r.code == Some(3) {
                            t.disagreements.push(what);
                            failed = true;
                        }
                    }
                    tally.lock().unwrap().inputs += 1;
                    if !failed && only.is_none() {
                        let _ = std::fs::remove_dir_all(&sub);
                    }
                }
            });
        }
    });
    let t = tally.into_inner().unwrap();
    println!(
        "mutation campaign, seed {seed}: {} inputs, {} commands, {} panics, {} overruns, \
         {} disagreements, peak memory {} MiB; slowest {:.2?}: {}",
        t.inputs,
        t.commands,
        t.panics.len(),
        t.overruns.len(),
        t.disagreements.len(),
        t.peak_kib >> 10,
        t.slowest.0,
        t.slowest.1
    );
    let failures: Vec<&String> = t
        .panics
        .iter()
        .chain(&t.overruns)
        .chain(&t.disagreements)
        .collect();
    assert!(
        failures.is_empty(),
        "{} failures (mutants kept in {}):\n{}",
        failures.len(),
        dir.display(),
        failures
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    if only.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The mutator itself: deterministic for a seed, and it changes the tests.
#[test]
fn the_mutator_is_seeded_and_changes_its_input() {
    let corpus = corpus();
    let run = |seed: u64| {
        let mut rng = Rng::new(seed);
        (0..50)
            .map(|i| mutant(&corpus, &mut rng, i))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
    let changed = run(7)
        .iter()
        .filter(|(from, text)| {
            corpus
                .iter()
                .find(|(p, _)| p.file_name().unwrap().to_string_lossy() == *from)
                .is_some_and(|(_, orig)| orig != text)
        })
        .count();
    assert!(
        changed >= 40,
        "{changed} of 50 mutants differ from their test"
    );
}

/// Found by the mutation campaign: a loop without any read that a thread
/// may enter (`L: bra L`, or `L: beq r0, 0, L` after a load) hangs, and the
/// oracle said so while the machine said every execution terminates (its
/// choice-free retirements took the back edge and dropped the path). Fixed
/// in the machine (a thread whose iteration goes back without reading stays
/// at its back edge, `docs/loops.md`): both engines report the hang.
#[test]
fn a_loop_without_reads_hangs_in_both_engines() {
    let dir = std::env::temp_dir().join(format!("ptxmc-mutation-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("selfloop.litmus");
    std::fs::write(
        &file,
        "PTX selfloop\n{ x=0; f=0; }\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 1,gpu 0 ;\n \
         st.release.gpu f, 1 | ld.acquire.gpu r0, f ;\n | LM: ;\n | beq r0, 0, LM ;\n\
         exists (P1:r0 == 1)\n",
    )
    .unwrap();
    let args: Vec<String> = ["run", "--engine", "both", file.to_str().unwrap()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let r = ptxmc(&args, "");
    let _ = std::fs::remove_dir_all(&dir);
    // A hang (exit 5), found by both engines.
    assert_eq!(r.code, Some(5), "{}", r.stderr);
}
