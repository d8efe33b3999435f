//! Hostile and mistaken inputs: each gives a positioned error (exit 2 from
//! the binary) or a correct parse, never a panic, a stack overflow or
//! super-linear time. Time bounds here only guard against hangs (they are
//! far above the measured times); speed is measured by benches, not tests.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ptxmc::engine::{self, RunOptions};
use ptxmc::ir::{MAX_PROP_DEPTH, Program};
use ptxmc::litmus::{self, LitmusError, LitmusTest, print};

/// What std gives a spawned thread: the parsers and every walk of their
/// output must fit, whatever the input.
const SMALL_STACK: usize = 2 << 20;

/// Run `f` on a thread with a small stack (a stack overflow aborts the
/// whole test binary, which fails the test run).
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// Parse on a small stack within a generous time bound.
fn parse_guarded(path: &str, text: String) -> Result<Vec<LitmusTest>, LitmusError> {
    let path = path.to_string();
    let start = Instant::now();
    let r = on_small_stack(move || litmus::parse_source(&path, &text));
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "parsing took {:?}",
        start.elapsed()
    );
    r
}

fn expect_error(path: &str, text: String, message: &str) {
    match parse_guarded(path, text) {
        Ok(_) => panic!("{path}: accepted"),
        Err(e) => assert!(
            e.rendered().starts_with(&format!("error: {message}")),
            "{path}: {}",
            e.rendered()
        ),
    }
}

const HDR: &str = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n";

#[test]
fn deep_conditions_are_refused_without_recursing() {
    let nested = "expected at most 512 nested parentheses and negations, found more";
    let deep = "expected a proposition at most 256 levels deep, found a deeper one";
    let cases = [
        (
            format!(
                "{HDR}exists {}x == 1{}\n",
                "(".repeat(7000),
                ")".repeat(7000)
            ),
            nested,
        ),
        (
            format!(
                "{HDR}exists {}x == 1{}\n",
                "~(".repeat(5000),
                ")".repeat(5000)
            ),
            nested,
        ),
        (
            format!("{HDR}exists {}x == 1\n", "~".repeat(20_000)),
            nested,
        ),
        (format!("{HDR}exists {}x == 1\n", "~".repeat(300)), deep),
        (
            format!("{HDR}exists ({})\n", vec!["x == 1"; 200_000].join(" /\\ ")),
            deep,
        ),
        (
            format!("{HDR}exists ({})\n", vec!["x == 1"; 200_000].join(" \\/ ")),
            deep,
        ),
        (
            // Right-nested: every level behind a parenthesis.
            format!(
                "{HDR}exists {}x == 1{}\n",
                "x == 1 /\\ (".repeat(3000),
                ")".repeat(3000)
            ),
            nested,
        ),
    ];
    for (text, message) in cases {
        expect_error("deep.litmus", text, message);
    }
    let mp =
        |cond: String| format!(".global x;\nd0.b0.t0 {{\n  st [x], 1;\n}}\npermit({cond}) as t;\n");
    expect_error(
        "deep.test",
        mp(format!("{}x == 1{}", "!(".repeat(5000), ")".repeat(5000))),
        nested,
    );
    expect_error("deep.test", mp(vec!["x == 1"; 100_000].join(" && ")), deep);
    // 100,000 preconditions would make a 100,000-deep chain.
    let pre: String = (0..100_000)
        .map(|i| format!("  ld r{i}, [x] == 0;\n"))
        .collect();
    expect_error(
        "pre.test",
        format!(".global x;\nd0.b0.t0 {{\n{pre}}}\npermit(x == 0) as t;\n"),
        deep,
    );
}

/// The deepest conditions the parser accepts are safe for every walk of the
/// tree (evaluation by both engines, printing, reports, dropping), on a
/// small stack, and read back from their canonical text.
#[test]
fn the_deepest_accepted_conditions_are_safe_everywhere() {
    let d = MAX_PROP_DEPTH;
    let conditions = [
        format!("{}(x == 1)", "~".repeat(d)),
        format!("{}x == 1{}", "x == 1 /\\ (".repeat(d), ")".repeat(d)),
        vec!["x == 1"; d + 1].join(" \\/ "),
        format!(
            "{}x == 1{}",
            "~(x == 1 \\/ ".repeat(d / 2),
            ")".repeat(d / 2)
        ),
    ];
    for cond in conditions {
        let text = format!("{HDR}exists ({cond})\n");
        on_small_stack(move || {
            let tests = litmus::parse_source("deepest.litmus", &text)
                .unwrap_or_else(|e| panic!("{}", e.rendered()));
            let p = &tests[0].program;
            assert!(p.condition.prop.depth() <= MAX_PROP_DEPTH);
            p.validate().unwrap();
            let printed = print::to_litmus(p);
            let again = litmus::parse_source("again.litmus", &printed)
                .unwrap_or_else(|e| panic!("{}", e.rendered()));
            assert_eq!(&again[0].program, p);
            let r = engine::run(p, &RunOptions::default());
            assert!(r.disagreement.is_none() && r.incomplete.is_none());
            assert_eq!(r.outcomes.len(), 1);
            let _ = serde_json::to_string(p).unwrap();
            let _ = ptxmc::report::herd::condition(p);
        });
    }
}

#[test]
fn a_line_of_many_rows_reads_in_linear_time() {
    let text = format!(
        "PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n st.weak x, 1 {}\nexists (x == 1)\n",
        ";".repeat(300_000)
    );
    let t = &parse_guarded("semis.litmus", text).unwrap()[0];
    assert_eq!(t.program.threads[0].code.len(), 1);
}

/// Found by fuzzing (issue 24): the initial state read super-linearly —
/// each declaration's alias chain was followed with a fresh table of every
/// declaration, and again (recursively) for its virtual address. Plain
/// declarations near the 4 MiB file limit, and one long chain of aliases
/// (5,000 took 0.9 s, 20,000 took 20 s; now each is walked once), read within
/// the guard on a small stack.
#[test]
fn initial_states_read_in_linear_time() {
    let n = 300_000;
    let plain: String = (0..n).map(|i| format!("x{i}=0; ")).collect();
    let text = format!(
        "PTX t\n{{ {plain}}}\n P0@cta 0,gpu 0 ;\n st.weak x{}, 1 ;\nexists (x0 == 0)\n",
        n - 1
    );
    assert!(text.len() < 4 << 20);
    let t = &parse_guarded("plain.litmus", text).unwrap()[0];
    assert_eq!(t.program.locations.len(), n);
    let n = 50_000;
    for kind in ["generic", "texture"] {
        let chain: String = (0..n)
            .map(|i| format!("x{} @ {kind} aliases x{i}; ", i + 1))
            .collect();
        let text = format!(
            "PTX t\n{{ x0=0; {chain}}}\n P0@cta 0,gpu 0 ;\n st.weak x{n}, 1 ;\nexists (x0 == 1)\n"
        );
        let t = &parse_guarded("chain.litmus", text).unwrap()[0];
        let p = &t.program;
        assert_eq!(p.locations.len(), 1, "{kind}");
        assert_eq!(p.addresses.len(), n + 1, "{kind}");
        // Every alias is of the one location; a proxy reference has the
        // virtual address at the end of its chain of proxy references.
        assert!(p.addresses.iter().all(|a| a.loc == 0), "{kind}");
        let va = if kind == "generic" { n } else { 0 };
        assert_eq!(p.addresses[n].va, va, "{kind}");
    }
    // A cycle anywhere in a long chain is still refused, at the first declaration on it.
    let chain: String = (0..n)
        .map(|i| format!("x{i} @ generic aliases x{}; ", i + 1))
        .collect();
    let text = format!(
        "PTX t\n{{ {chain}x{n} @ generic aliases x0; }}\n P0@cta 0,gpu 0 ;\n st.weak x0, 1 ;\nexists (x0 == 1)\n"
    );
    expect_error(
        "cycle.litmus",
        text,
        "expected an alias chain that ends at a location, found a cycle of aliases",
    );
}

#[test]
fn long_names_print_and_read_back() {
    let reg = format!("r{}", "a".repeat(70_000));
    let loc = format!("l{}", "b".repeat(70_000));
    let text = format!(
        "PTX {}\n{{ {loc}=0; }}\n P0@cta 0,gpu 0 ;\n ld.weak {reg}, {loc} ;\nexists (P0:{reg} == 0)\n",
        "n".repeat(70_000)
    );
    let t = &parse_guarded("long.litmus", text).unwrap()[0];
    let printed = print::to_litmus(&t.program);
    let again = &parse_guarded("again.litmus", printed).unwrap()[0];
    assert_eq!(again.program, t.program);
}

/// A small file whose template multiplies: refused by size, quickly.
#[test]
fn template_expansion_is_bounded() {
    let text = format!(
        ".global x;\nd0.b0.t0 {{\n{}}}\npermit(x == 0) as t;\n$$\n{}\n",
        "  $0\n".repeat(10_000),
        "st [x], 1;".repeat(1000)
    );
    assert!(text.len() < 100_000);
    expect_error(
        "blowup.test",
        text,
        "expected a template row that expands to at most 256 KiB",
    );
    let rows = format!(
        ".global x;\nd0.b0.t0 {{\n  st [x], $0;\n}}\npermit(x == 0) as t;\n$$\n{}",
        "1\n".repeat(100_000)
    );
    expect_error("rows.test", rows, "expected at most 4096 template rows");
}

#[test]
fn extreme_integers_read_back() {
    let text = format!(
        "{HDR}exists (x == -9223372036854775808 \\/ x == 0xffffffffffffffff \\/ x == 0x8000000000000000 \\/ x == 9223372036854775807)\n"
    );
    let p = &parse_guarded("ints.litmus", text).unwrap()[0].program;
    let printed = print::to_litmus(p);
    assert!(printed.contains("x == -9223372036854775808 \\/ x == -1"));
    let again = &parse_guarded("again.litmus", printed).unwrap()[0];
    assert_eq!(&again.program, p);
    for bad in [
        "9223372036854775808",
        "-9223372036854775809",
        "0x10000000000000000",
    ] {
        expect_error(
            "int.litmus",
            format!("{HDR}exists (x == {bad})\n"),
            "expected an integer that fits in 64 bits",
        );
    }
}

fn ptxmc(args: &[&str]) -> (Option<i32>, String, Duration) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code(), stderr, start.elapsed())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptxmc-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Thousands of threads, labels or registers: parsed in linear time and
/// printed back; the engines refuse 20,000 threads with an incomplete
/// verdict (exit 4).
#[test]
fn wide_programs_parse_and_run_to_a_verdict_or_a_limit() {
    let dir = scratch("wide");
    let threads = 20_000;
    let wide = format!(
        "PTX wide\n{{ x=0; }}\n {} ;\n {} ;\nexists (x == 1)\n",
        (0..threads)
            .map(|i| format!("P{i}@cta {},gpu 0", i % 1000))
            .collect::<Vec<_>>()
            .join(" | "),
        (0..threads)
            .map(|i| format!("st.relaxed.gpu x, {i}"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let labels: String = (0..100_000)
        .map(|i| format!(" L{i}: mov r{i}, {i} ;\n"))
        .collect();
    let labelled = format!(
        "PTX labels\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{labels} goto L99999 ;\nexists (P0:r5 == 5)\n"
    );
    for (name, text) in [("wide.litmus", &wide), ("labels.litmus", &labelled)] {
        let t = &parse_guarded(name, text.clone()).unwrap()[0];
        let printed = print::to_litmus(&t.program);
        assert_eq!(
            parse_guarded("again.litmus", printed).unwrap()[0].program,
            t.program
        );
    }
    // (Running the 100,000 register moves is the engines' affair: the
    // operational machine copies the register file at every step.)
    let path = dir.join("wide.litmus");
    std::fs::write(&path, &wide).unwrap();
    let (code, err, took) = ptxmc(&["run", path.to_str().unwrap()]);
    assert_eq!(code, Some(4), "{err}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Windows line ends and a byte-order mark read as the plain text does.
#[test]
fn crlf_and_byte_order_marks() {
    let lf = "PTX t\n\"doc\"\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.weak r0, x ;\nlocations [x;]\nexists (P1:r0 == 1)\n";
    let plain = parse_guarded("lf.litmus", lf.to_string()).unwrap();
    for text in [lf.replace('\n', "\r\n"), format!("\u{feff}{lf}")] {
        let t = parse_guarded("crlf.litmus", text).unwrap();
        assert_eq!(t[0].program, plain[0].program);
    }
    let mp = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mixedproxy/tests/MP_gpu.test");
    let text = std::fs::read_to_string(mp).unwrap();
    let plain = parse_guarded("MP_gpu.test", text.clone()).unwrap();
    let crlf = parse_guarded("MP_gpu.test", text.replace('\n', "\r\n")).unwrap();
    assert_eq!(plain.len(), crlf.len());
    for (a, b) in plain.iter().zip(&crlf) {
        let mut b = b.program.clone();
        // The instance's doc quotes its row, which is the same text.
        b.docs = a.program.docs.clone();
        assert_eq!(a.program, b);
    }
}

#[test]
fn empty_and_binary_files_are_refused_with_a_position() {
    for (path, text) in [
        ("empty.litmus", String::new()),
        ("empty.test", String::new()),
        ("nul.litmus", "\0\0\0".to_string()),
        ("nul.test", "\0".to_string()),
        ("ws.litmus", " \n\t\r\n".to_string()),
    ] {
        let e = parse_guarded(path, text).unwrap_err();
        assert_eq!((e.line >= 1, e.column >= 1), (true, true));
        assert!(
            e.rendered().starts_with("error: expected "),
            "{}",
            e.rendered()
        );
    }
}

/// Directories are walked once each: a symbolic link back up ends, and a
/// directory named like a test is searched, not read.
#[test]
fn directory_walks_terminate() {
    let dir = scratch("walk");
    let named = dir.join("suite.litmus");
    std::fs::create_dir_all(&named).unwrap();
    std::fs::write(
        named.join("a.litmus"),
        "PTX a\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\nexists (x == 1)\n",
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&dir, named.join("loop")).unwrap();
    let files = litmus::collect_files(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(files, [named.join("a.litmus")]);
    let (code, err, _) = ptxmc(&["parse", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every program the parsers accept passes `validate` (which checks the
/// depth bound) — including one at the bound built from a template.
#[test]
fn programs_at_the_bound_validate() {
    let pre: String = (0..MAX_PROP_DEPTH - 2)
        .map(|i| format!("  ld r{i}, [x] == 0;\n"))
        .collect();
    let text = format!(".global x;\nd0.b0.t0 {{\n{pre}}}\nassert(x == 0) as t;\n");
    let tests = parse_guarded("pre.test", text).unwrap();
    let p: &Program = &tests[0].program;
    assert!(p.condition.prop.depth() <= MAX_PROP_DEPTH);
    p.validate().unwrap();
    let printed = print::to_litmus(p);
    assert_eq!(
        parse_guarded("again.litmus", printed).unwrap()[0].program,
        *p
    );
}
