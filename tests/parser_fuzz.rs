//! The parsers never panic: arbitrary bytes, mutated suite files and
//! hostile inputs (deep nesting, long lines and names, huge numbers and
//! counts, template blow-ups, CRLF, NUL, byte-order marks) either parse into
//! valid IR that round-trips, or give a positioned error, within a time
//! bound that only guards against hangs.
//!
//! `mutation_campaign` runs a deterministic mutation campaign over every
//! file of `litmus/` and `tests/peers/` (two mutants per file by default);
//! the big campaign is the ignored test `mutation_campaign_big`:
//!
//! ```sh
//! PTXMC_MUTATIONS=100000 cargo test --release --test parser_fuzz \
//!     mutation_campaign_big -- --ignored --nocapture
//! ```
//!
//! (`PTXMC_MUTATION_SEED` changes the campaign, `PTXMC_MUTATION_START`
//! starts it at an input, `PTXMC_MUTATION_LOG=FILE` writes each input's
//! index before running it, to find the one that killed a process, and
//! `PTXMC_MUTATION_DUMP=DIR` writes each input to `DIR/INDEX-FILE`.)

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ptxmc::litmus::{self, print};

fn corpus() -> &'static Vec<(String, String)> {
    static CORPUS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dirs: Vec<PathBuf> = vec![
            root.join("tests/peers/dat3m/litmus/PTX/Manual"),
            root.join("tests/peers/dat3m/litmus/PTX/Nvidia"),
            root.join("tests/peers/dat3m/litmus/PTX/Barrier"),
            root.join("tests/peers/mixedproxy/tests"),
        ];
        litmus::collect_files(&dirs)
            .expect("peer suites are readable")
            .into_iter()
            .map(|p| {
                (
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect()
    })
}

/// Parse and check the contract: valid IR that round-trips, or an error
/// whose position lies inside the text.
fn check_contract(path: &str, text: &str) {
    match litmus::parse_source(path, text) {
        Ok(tests) => {
            for t in tests {
                t.program
                    .validate()
                    .unwrap_or_else(|e| panic!("invalid IR from {path}: {e}\n{text}"));
                let printed = print::to_litmus(&t.program);
                let again = litmus::parse_source("again.litmus", &printed).unwrap_or_else(|e| {
                    panic!("canonical text does not parse: {}\n{printed}", e.rendered())
                });
                assert_eq!(again[0].program, t.program);
            }
        }
        Err(e) => {
            let lines = text.matches('\n').count() + 1;
            assert!(
                e.line >= 1 && e.line <= lines,
                "line {} out of range in\n{text}",
                e.line
            );
            assert!(e.column >= 1);
            assert!(
                e.rendered()
                    .contains(&format!("{path}:{}:{}", e.line, e.column))
            );
            assert!(e.rendered().starts_with("error: expected "));
        }
    }
}

const VOCAB: &[&str] = &[
    "|",
    ";",
    ":",
    ",",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "=",
    "==",
    "!=",
    "@",
    "/\\",
    "\\/",
    "~",
    "\"",
    "$1",
    "$$\n",
    "ld",
    "st",
    "atom",
    ".weak",
    ".relaxed",
    ".acquire",
    ".release",
    ".gpu",
    ".cta",
    ".cluster",
    ".sys",
    ".add",
    ".cas",
    "fence",
    ".sc",
    ".proxy",
    ".alias",
    "bar.cta.sync",
    "goto",
    "LC00",
    "LC00:",
    "beq",
    "P0",
    "P7",
    "r0",
    "x",
    "y",
    "-1",
    "99999999999999999999",
    "exists",
    "forall",
    "~exists",
    "\n",
    " ",
    "(*",
    "*)",
    "é",
    "\t",
    "generic aliases",
    "texture",
    "d0.b0.t0",
    ".global",
    "permit",
    "assert",
    "as",
    "0x1f",
];

#[derive(Clone, Debug)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, word: usize },
    DuplicateLine { line: usize },
    SwapChars { at: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..12).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), any::<usize>()).prop_map(|(at, word)| Mutation::Insert { at, word }),
        any::<usize>().prop_map(|line| Mutation::DuplicateLine { line }),
        any::<usize>().prop_map(|at| Mutation::SwapChars { at }),
    ]
}

fn boundary(s: &str, i: usize) -> usize {
    let mut i = i % (s.len() + 1);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(mut s: String, m: &Mutation) -> String {
    match m {
        Mutation::Delete { at, len } => {
            let a = boundary(&s, *at);
            let b = boundary(&s, (a + len).min(s.len()));
            s.replace_range(a..b.max(a), "");
        }
        Mutation::Insert { at, word } => {
            let a = boundary(&s, *at);
            s.insert_str(a, VOCAB[word % VOCAB.len()]);
        }
        Mutation::DuplicateLine { line } => {
            let lines: Vec<&str> = s.lines().collect();
            if !lines.is_empty() {
                let k = line % lines.len();
                let mut out: Vec<&str> = lines[..=k].to_vec();
                out.extend_from_slice(&lines[k..]);
                s = out.join("\n");
            }
        }
        Mutation::SwapChars { at } => {
            let chars: Vec<char> = s.chars().collect();
            if chars.len() > 1 {
                let k = at % (chars.len() - 1);
                let mut c = chars;
                c.swap(k, k + 1);
                s = c.into_iter().collect();
            }
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let text = String::from_utf8_lossy(&bytes);
        check_contract("fuzz.litmus", &text);
        check_contract("fuzz.test", &text);
    }

    #[test]
    fn arbitrary_token_soup_never_panics(words in proptest::collection::vec(0usize..VOCAB.len(), 0..60)) {
        let text: String = words.iter().map(|w| VOCAB[*w]).collect::<Vec<_>>().join(" ");
        check_contract("soup.litmus", &format!("PTX soup\n{{ x=0; }}\n{text}"));
        check_contract("soup.test", &text);
    }

    #[test]
    fn mutated_suite_files_never_panic(file in any::<usize>(), muts in proptest::collection::vec(mutation(), 1..4)) {
        let corpus = corpus();
        let (path, text) = &corpus[file % corpus.len()];
        let mutated = muts.iter().fold(text.clone(), apply);
        check_contract(path, &mutated);
    }
}

/// Hostile shapes, each built from a few numbers.
#[derive(Clone, Debug)]
enum Hostile {
    /// `(`, `~`, `!(`, `~(` or a `/\` chain, `depth` deep, in a condition.
    Nesting { kind: usize, depth: usize },
    /// A row of `n` semicolons, or of `n` cells.
    WideRow { cells: bool, n: usize },
    /// A name of `len` characters, used as register or location.
    LongName { len: usize, register: bool },
    /// A literal with `digits` digits (optionally hex, negative).
    BigNumber { digits: usize, hex: bool, neg: bool },
    /// A template with `lines` placeholders and a cell of `cell` bytes, `rows` rows.
    Template {
        lines: usize,
        cell: usize,
        rows: usize,
    },
    /// `threads` threads, `labels` labels.
    Wide { threads: usize, labels: usize },
}

fn hostile() -> impl Strategy<Value = Hostile> {
    let size = prop_oneof![1usize..20, 200usize..600, 2_000usize..20_000];
    prop_oneof![
        (0usize..5, size.clone()).prop_map(|(kind, depth)| Hostile::Nesting { kind, depth }),
        (any::<bool>(), size.clone()).prop_map(|(cells, n)| Hostile::WideRow { cells, n }),
        (size.clone(), any::<bool>()).prop_map(|(len, register)| Hostile::LongName {
            len: len * 4,
            register
        }),
        (1usize..40, any::<bool>(), any::<bool>())
            .prop_map(|(digits, hex, neg)| Hostile::BigNumber { digits, hex, neg }),
        (1usize..1000, 1usize..100, 1usize..20).prop_map(|(lines, cell, rows)| Hostile::Template {
            lines,
            cell,
            rows
        }),
        (1usize..300, 0usize..300).prop_map(|(threads, labels)| Hostile::Wide { threads, labels }),
    ]
}

/// The text of a hostile input and the path (which picks the format).
fn hostile_text(h: &Hostile) -> (&'static str, String) {
    const HDR: &str = "PTX h\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n";
    match *h {
        Hostile::Nesting { kind, depth } => {
            let body = match kind {
                0 => format!("{}x == 1{}", "(".repeat(depth), ")".repeat(depth)),
                1 => format!("{}x == 1", "~".repeat(depth)),
                2 => format!("{}x == 1{}", "~(".repeat(depth), ")".repeat(depth)),
                3 => vec!["P0:r0 == 1"; depth + 1].join(" /\\ "),
                _ => {
                    let cond = format!("{}x == 1{}", "!(".repeat(depth), ")".repeat(depth));
                    let test = format!(
                        ".global x;\nd0.b0.t0 {{\n  ld r0, [x];\n}}\npermit({cond}) as t;\n"
                    );
                    return ("nesting.test", test);
                }
            };
            ("nesting.litmus", format!("{HDR}exists ({body})\n"))
        }
        Hostile::WideRow { cells, n } => {
            let row = if cells {
                format!(" {} ;\n", vec![""; n + 1].join("|"))
            } else {
                format!(" st.weak x, 1 {}\n", ";".repeat(n))
            };
            (
                "row.litmus",
                format!("PTX r\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{row}exists (x == 1)\n"),
            )
        }
        Hostile::LongName { len, register } => {
            let name = format!("n{}", "a".repeat(len));
            let text = if register {
                format!(
                    "PTX n\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n ld.weak {name}, x ;\nexists (P0:{name} == 0)\n"
                )
            } else {
                format!(
                    "PTX n\n{{ {name}=0; }}\n P0@cta 0,gpu 0 ;\n st.weak {name}, 1 ;\nexists ({name} == 1)\n"
                )
            };
            ("name.litmus", text)
        }
        Hostile::BigNumber { digits, hex, neg } => {
            let n = format!(
                "{}{}{}",
                if neg { "-" } else { "" },
                if hex { "0x" } else { "" },
                "9".repeat(digits)
            );
            (
                "number.litmus",
                format!(
                    "PTX n\n{{ x={n}; }}\n P0@cta 0,gpu 0 ;\n st.weak x, {n} ;\nexists (x == {n})\n"
                ),
            )
        }
        Hostile::Template { lines, cell, rows } => {
            let row = format!("{}\n", "st [x], 1;".repeat(cell.div_ceil(10)));
            (
                "template.test",
                format!(
                    ".global x;\nd0.b0.t0 {{\n{}}}\npermit(x == 1) as t;\n$$\n{}",
                    "  $0\n".repeat(lines),
                    row.repeat(rows)
                ),
            )
        }
        Hostile::Wide { threads, labels } => {
            let head: Vec<String> = (0..threads)
                .map(|i| format!("P{i}@cta {},gpu 0", i % 70))
                .collect();
            let mut rows = format!(" {} ;\n", head.join(" | "));
            for l in 0..labels {
                let mut cells = vec![String::new(); threads];
                cells[0] = format!("L{l}: mov r{l}, 1");
                rows.push_str(&format!(" {} ;\n", cells.join(" | ")));
            }
            (
                "wide.litmus",
                format!("PTX w\n{{ x=0; }}\n{rows}exists (x == 0)\n"),
            )
        }
    }
}

/// The contract on a hostile input, on a small stack, within a hang guard.
fn check_hostile(path: &'static str, text: String) {
    let start = std::time::Instant::now();
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || check_contract(path, &text))
        .unwrap()
        .join()
        .unwrap();
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{path}: {:?}",
        start.elapsed()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn hostile_inputs_never_panic_or_hang(h in hostile(), crlf in any::<bool>(), bom in any::<bool>()) {
        let (path, mut text) = hostile_text(&h);
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        if bom {
            text.insert(0, '\u{feff}');
        }
        check_hostile(path, text);
    }

    #[test]
    fn control_characters_anywhere_never_panic(file in any::<usize>(), at in any::<usize>(), c in prop_oneof![Just('\0'), Just('\r'), Just('\u{7}'), Just('\u{1b}'), Just('\u{feff}'), Just('\u{202e}')]) {
        let corpus = corpus();
        let (path, text) = &corpus[file % corpus.len()];
        let mut text = text.clone();
        text.insert(boundary(&text, at), c);
        check_contract(path, &text);
    }
}

/// A small deterministic generator (SplitMix64): input `k` of a campaign is
/// the same on every machine and every version, so a finding can be rerun.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Every file of `litmus/` and `tests/peers/`, sorted.
fn campaign_corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    litmus::collect_files(&[root.join("litmus"), root.join("tests/peers")])
        .expect("the suites are readable")
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            (rel, text)
        })
        .collect()
}

/// One mutation of a campaign: byte, token and line edits, duplication,
/// nesting blow-ups, and the hostile shapes above grafted onto a real file.
fn campaign_mutation(text: &str, rng: &mut Mix) -> String {
    let mut s = text.to_string();
    let at = |s: &str, rng: &mut Mix| boundary(s, rng.below(s.len() + 1));
    let lines = |s: &str| {
        s.split_inclusive('\n')
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let k = *rng.pick(&[2usize, 30, 300, 3000, 30000]);
    match rng.below(18) {
        0 => {
            let a = at(&s, rng);
            let b = boundary(&s, (a + 1 + rng.below(16)).min(s.len()));
            s.replace_range(a..b.max(a), "");
        }
        1 => {
            let c = *rng.pick(&[
                '\0', '\r', '\u{feff}', 'é', '"', '{', '}', '$', '|', ';', '(', '*', ')', '#',
                '\\', '\u{ffff}',
            ]);
            let a = at(&s, rng);
            s.insert(a, c);
        }
        2 => {
            let a = at(&s, rng);
            s.insert_str(a, VOCAB[rng.below(VOCAB.len())]);
        }
        3 => {
            // Replace a word (a run of name characters) by a vocabulary word.
            let a = at(&s, rng);
            let b = s[a..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .map_or(s.len(), |i| a + i);
            s.replace_range(a..b, VOCAB[rng.below(VOCAB.len())]);
        }
        4 => {
            s = apply(
                s,
                &Mutation::SwapChars {
                    at: rng.below(usize::MAX),
                },
            )
        }
        5 | 6 => {
            let mut ls = lines(&s);
            if !ls.is_empty() {
                let i = rng.below(ls.len());
                match rng.below(4) {
                    0 => {
                        ls.remove(i);
                    }
                    1 => {
                        let j = rng.below(ls.len());
                        ls.swap(i, j);
                    }
                    2 => {
                        let l = ls[i].clone();
                        ls.insert(i, l);
                    }
                    _ => {
                        let l = ls[i].clone();
                        let mut l = l.repeat(k.min(3000));
                        if !l.ends_with('\n') {
                            l.push('\n');
                        }
                        ls[i] = l;
                    }
                }
                s = ls.concat();
            }
        }
        7 => s = format!("{s}{s}"),
        8 => {
            // Deep nesting where conditions are: after the quantifier or `permit(`.
            let open = *rng.pick(&["(", "~", "~(", "!(", "not ", "[", "{"]);
            let close = match open {
                "(" | "~(" | "!(" => ")",
                "[" => "]",
                "{" => "}",
                _ => "",
            };
            let anchor = ["exists", "forall", "permit(", "assert(", "filter"]
                .iter()
                .find_map(|w| s.find(w).map(|i| i + w.len()))
                .unwrap_or_else(|| at(&s, rng));
            let tail = s[anchor..].trim_end().len() + anchor;
            s.insert_str(tail, &close.repeat(k));
            s.insert_str(anchor, &open.repeat(k));
        }
        9 => {
            let chain = *rng.pick(&[
                " /\\ x == 1",
                " \\/ P0:r0 == 0",
                " && x == 1",
                " || r0 != 2",
            ]);
            let a = s.rfind(')').unwrap_or(s.len());
            s.insert_str(a, &chain.repeat(k));
        }
        10 => s = s.replace('\n', "\r\n"),
        11 => s.insert(0, '\u{feff}'),
        12 => {
            // A very long word.
            let a = at(&s, rng);
            let b = s[a..]
                .find(|c: char| !c.is_ascii_alphanumeric())
                .map_or(s.len(), |i| a + i);
            s.replace_range(a..b, &format!("r{}", "a".repeat(70_000)));
        }
        13 => {
            // A huge number where a number is.
            if let Some(i) = s.find(|c: char| c.is_ascii_digit()) {
                let j = s[i..]
                    .find(|c: char| !c.is_ascii_digit())
                    .map_or(s.len(), |e| i + e);
                let n = *rng.pick(&[
                    "99999999999999999999999",
                    "-9223372036854775808",
                    "9223372036854775808",
                    "0xffffffffffffffff",
                    "4294967295",
                    "65536",
                ]);
                s.replace_range(i..j, n);
            }
        }
        14 => {
            // Template blow-up: placeholder lines and row cells multiplied.
            let mut ls = lines(&s);
            for l in ls.iter_mut() {
                if l.contains('$') && !l.trim().starts_with("$$") && rng.below(2) == 0 {
                    *l = l.repeat(k.min(3000));
                }
            }
            s = ls.concat();
            if let Some(i) = s.find("$$\n") {
                let rows = s[i + 3..].to_string();
                s.push_str(&rows.repeat(k.min(300)));
            }
        }
        15 => {
            let a = s.find(" ;").unwrap_or(s.len());
            s.insert_str(a, &";".repeat(k));
        }
        16 => {
            let a = s.find(" ;").unwrap_or(s.len());
            s.insert_str(a, &" |".repeat(k));
        }
        _ => {
            // A thread of many cells: widen the thread header.
            if let Some(i) = s.find("P0@") {
                let head: String = (1..k.min(3000))
                    .map(|t| format!(" | P{t}@cta 0,gpu 0"))
                    .collect();
                let e = s[i..].find(';').map_or(s.len(), |e| i + e);
                s.insert_str(e, &head);
            }
        }
    }
    s
}

/// Figures of one campaign.
struct Figures {
    inputs: usize,
    too_large: usize,
    panics: Vec<(usize, String)>,
    slow: Vec<(usize, std::time::Duration)>,
    times: Vec<std::time::Duration>,
}

/// Run inputs `start..start + count` of the campaign with `seed`: each is
/// a file of the corpus with one to three mutations. Panics are caught and
/// counted (a stack overflow would abort the process: the log names the
/// input).
fn run_campaign(seed: u64, start: usize, count: usize, log: Option<&Path>) -> Figures {
    let corpus = campaign_corpus();
    let mut f = Figures {
        inputs: 0,
        too_large: 0,
        panics: Vec::new(),
        slow: Vec::new(),
        times: Vec::new(),
    };
    let mut log = log.map(|p| std::fs::File::create(p).expect("log file"));
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for k in start..start + count {
        let mut rng = Mix(seed ^ (k as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
        let (path, text) = &corpus[k % corpus.len()];
        let mut mutated = text.clone();
        for _ in 0..=rng.below(3) {
            mutated = campaign_mutation(&mutated, &mut rng);
        }
        if let Some(dir) = std::env::var_os("PTXMC_MUTATION_DUMP").filter(|d| !d.is_empty()) {
            let name = Path::new(path).file_name().unwrap().to_string_lossy();
            let _ = std::fs::write(Path::new(&dir).join(format!("{k}-{name}")), &mutated);
        }
        if let Some(l) = log.as_mut() {
            use std::io::Write;
            let _ = writeln!(l, "{k}");
            let _ = l.flush();
        }
        f.inputs += 1;
        if mutated.len() as u64 > litmus::MAX_FILE_BYTES {
            // Compounded blow-ups: the file reader refuses these unread
            // (`tests/errors.rs` pins that message).
            f.too_large += 1;
            continue;
        }
        let t0 = std::time::Instant::now();
        let r = std::panic::catch_unwind(|| check_contract(path, &mutated));
        let took = t0.elapsed();
        f.times.push(took);
        if let Err(p) = r {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let what = format!("{path}: {}", msg.lines().next().unwrap_or(""));
            eprintln!("panic at input {k}: {what}");
            f.panics.push((k, what));
        }
        if took > std::time::Duration::from_secs(10) {
            eprintln!("slow input {k}: {path}: {took:?}");
            f.slow.push((k, took));
        }
    }
    std::panic::set_hook(quiet);
    f
}

fn report(f: &mut Figures) -> String {
    f.times.sort();
    let median = f.times.get(f.times.len() / 2).copied().unwrap_or_default();
    let max = f.times.last().copied().unwrap_or_default();
    format!(
        "mutation campaign: {} inputs ({} over the file size limit, refused unread), {} panics, {} over 10 s; per parsed input median {:.3} ms, max {:.1} ms",
        f.inputs,
        f.too_large,
        f.panics.len(),
        f.slow.len(),
        median.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    )
}

fn campaign(count: usize) {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let seed = env("PTXMC_MUTATION_SEED").unwrap_or(0x0070_7478_6d63);
    let start = env("PTXMC_MUTATION_START").unwrap_or(0) as usize;
    let log = std::env::var("PTXMC_MUTATION_LOG").ok().map(PathBuf::from);
    // On a thread with std's default stack: no input may need more.
    let mut f = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || run_campaign(seed, start, count, log.as_deref()))
        .unwrap()
        .join()
        .unwrap();
    let summary = report(&mut f);
    eprintln!("{summary}");
    assert!(f.panics.is_empty(), "{summary}\n{:#?}", f.panics);
    assert!(f.slow.is_empty(), "{summary}\n{:?}", f.slow);
}

/// Two mutants of every file of `litmus/` and `tests/peers/`.
#[test]
fn mutation_campaign() {
    campaign(2 * campaign_corpus().len());
}

/// The big campaign: `PTXMC_MUTATIONS` inputs (default 100,000).
#[test]
#[ignore = "long; run with PTXMC_MUTATIONS=N ... -- --ignored"]
fn mutation_campaign_big() {
    let n = std::env::var("PTXMC_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    campaign(n);
}
