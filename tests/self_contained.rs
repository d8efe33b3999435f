//! A fresh clone passes its tests with nothing beside it: no test, bench,
//! README command or recorded data points outside the repository, and every
//! test file that recorded data names exists in the repository.
//!
//! `.ci/run` checks the same end to end: it runs README's test command in a
//! fresh clone in a temporary directory.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Source files of tests and benches, README and `.ci/run` never name a path
/// that leaves the repository (`../something`).
#[test]
fn nothing_reads_outside_the_repository() {
    let mut files = vec![root().join("README.md"), root().join(".ci/run")];
    for dir in ["tests", "benches", "src"] {
        let mut all = Vec::new();
        files_under(&root().join(dir), &mut all);
        files.extend(all.into_iter().filter(|p| {
            p.extension().is_some_and(|e| e == "rs") && !p.ends_with("tests/self_contained.rs")
        }));
    }
    let mut offenders = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            if leaves_repository(line) {
                offenders.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "paths outside the repository:\n{}",
        offenders.join("\n")
    );
}

/// Whether `line` names a relative path that starts by going up: `../`
/// at the start of a word (after a quote, a space, a bracket, `=`, or at the
/// start of the line), not inside a path such as `a/../b`.
fn leaves_repository(line: &str) -> bool {
    line.match_indices("../").any(|(i, _)| {
        line[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || "./_-".contains(c)))
    })
}

/// Every test path recorded in the hardware histograms exists in the clone,
/// so `hw compare` on the recorded data reads only vendored tests.
#[test]
fn recorded_histograms_name_tests_of_the_repository() {
    let mut files = Vec::new();
    files_under(&root().join("tests/data/hw"), &mut files);
    let mut checked = 0;
    for f in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let Some(test) = v.get("test").and_then(|t| t.as_str()) else {
            continue;
        };
        let path = test.split('[').next().unwrap();
        assert!(
            root().join(path).is_file(),
            "{} names {test}, which is not in the repository",
            f.display()
        );
        checked += 1;
    }
    assert!(checked > 700, "only {checked} recorded histograms found");
}

/// The vendored peer suites are complete and carry their licences.
#[test]
fn vendored_peer_suites_are_complete_and_licensed() {
    let peers = root().join("tests/peers");
    for f in [
        "dat3m/LICENCE",
        "dat3m/PROVENANCE.md",
        "dat3m/litmus/LICENSE",
        "mixedproxy/LICENSE",
        "mixedproxy/PROVENANCE.md",
    ] {
        assert!(peers.join(f).is_file(), "missing tests/peers/{f}");
    }
    let mut files = Vec::new();
    files_under(&peers.join("dat3m/litmus/PTX"), &mut files);
    let litmus = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .count();
    assert_eq!(litmus, 655);
    let mut files = Vec::new();
    files_under(&peers.join("mixedproxy/tests"), &mut files);
    assert_eq!(files.len(), 11);
}
