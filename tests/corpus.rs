//! The public test suites parse completely, satisfy the IR invariants, and
//! survive a round trip through canonical litmus text.

use std::path::{Path, PathBuf};

use ptxmc::litmus::{self, print};

fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    litmus::collect_files(&[dir.to_path_buf()]).expect("peer suite directory is readable")
}

fn round_trip(t: &litmus::LitmusTest) {
    t.program
        .validate()
        .unwrap_or_else(|e| panic!("{}: invalid IR: {e}", t.display_path()));
    let text = print::to_litmus(&t.program);
    let again = litmus::parse_source("roundtrip.litmus", &text).unwrap_or_else(|e| {
        panic!(
            "{}: canonical text does not parse:\n{}\n{text}",
            t.display_path(),
            e.rendered()
        )
    });
    assert_eq!(again.len(), 1);
    assert_eq!(
        again[0].program,
        t.program,
        "{}: round trip changed the IR\n{text}",
        t.display_path()
    );
}

#[test]
fn every_dat3m_ptx_test_parses_and_round_trips() {
    let files = files_under(&peers().join("dat3m/litmus/PTX"));
    assert_eq!(files.len(), 655, "the Dat3M PTX suite has 655 tests");
    for f in &files {
        let tests = litmus::parse_file(f).unwrap_or_else(|e| panic!("{}", e.rendered()));
        assert_eq!(tests.len(), 1);
        round_trip(&tests[0]);
    }
}

#[test]
fn every_mixedproxy_test_parses_into_128_instances_and_round_trips() {
    let files = files_under(&peers().join("mixedproxy/tests"));
    assert_eq!(files.len(), 11);
    let mut instances = 0;
    for f in &files {
        let tests = litmus::parse_file(f).unwrap_or_else(|e| panic!("{}", e.rendered()));
        for t in &tests {
            assert!(
                t.program.expectation.is_some(),
                "{}: mixedproxy tests carry an expectation",
                t.display_path()
            );
            round_trip(t);
        }
        instances += tests.len();
    }
    assert_eq!(instances, 128);
}

#[test]
fn project_litmus_library_parses_and_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus");
    let files = files_under(&dir);
    assert!(
        files.len() >= 50,
        "the project's library has its tests ({} found)",
        files.len()
    );
    for f in &files {
        let tests = litmus::parse_file(f).unwrap_or_else(|e| panic!("{}", e.rendered()));
        for t in &tests {
            round_trip(t);
        }
    }
}

/// The typo check (`litmus::typos`) finds nothing in the public suites and
/// the library (1,080 tests): numbered families (`x1`, `x12`) and one-letter
/// names are not typos; and it finds the two names of a test whose writer
/// sets `flag` while its reader polls `f`.
#[test]
fn no_public_test_has_a_likely_typo_and_a_misspelt_flag_has_two() {
    let mut files = files_under(&peers().join("dat3m/litmus/PTX"));
    files.extend(files_under(&peers().join("mixedproxy")));
    files.extend(files_under(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus"),
    ));
    let mut tests = 0;
    for f in &files {
        for t in litmus::parse_file(f).unwrap() {
            tests += 1;
            let found = litmus::typos::typos(&t.program);
            assert!(found.is_empty(), "{}: {found:?}", t.display_path());
        }
    }
    assert_eq!(tests, 1206);
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/warnings/MP+flag-typo.litmus");
    let t = litmus::parse_file(&f).unwrap().remove(0);
    let found: Vec<(String, String)> = litmus::typos::typos(&t.program)
        .into_iter()
        .map(|ty| (ty.name, ty.like))
        .collect();
    assert_eq!(
        found,
        [
            ("f".to_string(), "flag".to_string()),
            ("flag".to_string(), "f".to_string())
        ]
    );
}
