//! The parsers never panic: arbitrary bytes and mutated suite files either
//! parse into valid IR that round-trips, or give a positioned error.

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
