//! Every limit holds in every engine: deliberately huge programs run by the
//! binary under `--timeout`, `--max-states` and `--max-memory`, with
//! `--engine ax`, `op` and `both`, return with exit status 4 and a report
//! that says which engine was stopped by which limit.
//!
//! The only timing here is a hang guard (a run still going after
//! [`HANG_GUARD`] fails the test); how close to the limit a run returns is
//! measured, not asserted (`docs/exploration.md`, "Limits").

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ptxmc::families;

/// A run that has not returned by then is a hang.
const HANG_GUARD: Duration = Duration::from_secs(90);

const ENGINES: [&str; 3] = ["ax", "op", "both"];

/// Write `text` to a fresh file of this test process.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptxmc-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(format!("{name}.litmus"));
    std::fs::write(&f, text).unwrap();
    f
}

/// Run the binary; exit status, stdout, and how long it took. Panics if the
/// run outlives the hang guard (after killing it).
fn ptxmc(args: &[&str]) -> (i32, String, Duration) {
    ptxmc_within(args, HANG_GUARD)
}

/// [`ptxmc`] with another hang guard.
fn ptxmc_within(args: &[&str], guard: Duration) -> (i32, String, Duration) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("ptxmc starts");
    // Read stdout on the side so a large report cannot block the child.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > guard {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`ptxmc {}` did not return in {guard:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = reader.join().unwrap();
    (status.code().unwrap_or(-1), out, start.elapsed())
}

/// Two threads writing `n` locations with weak stores: weak writes are not
/// morally strong, so coherence leaves each location's two writes unordered
/// and a single execution has 2^n final states. Memory grows fast in both
/// engines (the oracle's final states, the machine's states).
fn weak_writes(n: usize) -> String {
    let locs: String = (0..n).map(|i| format!("x{i}=0; ")).collect();
    let mut rows = String::new();
    for i in 0..n {
        rows.push_str(&format!(" st.weak x{i}, 1 | st.weak x{i}, 2 ;\n"));
    }
    format!(
        "PTX weak-writes-{n}\n{{ {locs}}}\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;\n{rows}exists (0 == 0)\n"
    )
}

/// Deliberately huge programs, each with the extra arguments it needs: two
/// whose searches are huge, then one whose set of final states is (its
/// oracle search is small: the state limit does not stop it).
fn huge() -> Vec<(&'static str, PathBuf, Vec<&'static str>)> {
    vec![
        // Far beyond either engine in seconds.
        (
            "random-4x8",
            file("random-4x8", &families::random(1, 4, 8)),
            vec![],
        ),
        // A retry loop that writes, bounded on purpose (the retry-loop
        // reduction of docs/loops.md makes it instant): the oracle has 7^3
        // path combinations.
        (
            "spin-lock-3",
            file("spin-lock-3", &families::spin_lock(3)),
            vec!["--bound-retry-loops", "--loop-bound", "6"],
        ),
        (
            "weak-writes-20",
            file("weak-writes-20", &weak_writes(20)),
            vec![],
        ),
    ]
}

/// Run `program` with `engine` under `limit` (JSON report) and check that it
/// returned, incomplete, for the reason `why`, with exit status 4.
fn assert_stops(
    engine: &str,
    name: &str,
    program: &Path,
    extra: &[&str],
    limit: &[&str],
    why: &str,
) {
    let mut args = vec!["run", "--engine", engine, "--format", "json", "--jobs", "1"];
    args.extend(limit);
    args.extend(extra);
    args.push(program.to_str().unwrap());
    let (code, out, took) = ptxmc(&args);
    let context = format!(
        "{name}, --engine {engine} {}: returned in {took:?}",
        limit.join(" ")
    );
    assert_eq!(code, 4, "{context}\n{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("a JSON report");
    assert_eq!(v[0]["complete"], false, "{context}");
    let reason = v[0]["incomplete_reason"].as_str().unwrap();
    assert!(reason.contains(why), "{context}: {reason}");
    if engine != "op" {
        assert!(reason.contains("axiomatic engine: "), "{context}: {reason}");
    }
    if engine != "ax" {
        assert!(
            reason.contains("operational engine: "),
            "{context}: {reason}"
        );
    }
}

#[test]
fn the_time_limit_holds_in_every_engine() {
    for (name, program, extra) in huge() {
        for engine in ENGINES {
            assert_stops(
                engine,
                name,
                &program,
                &extra,
                &["--timeout", "2"],
                // "was reached", or "was nearly reached" when the time left
                // is kept to print what was found: which comes first is timing.
                "the time limit (2.0 s) was",
            );
        }
    }
}

#[test]
fn the_state_limit_holds_in_every_engine() {
    for (name, program, extra) in huge().into_iter().take(2) {
        for engine in ENGINES {
            assert_stops(
                engine,
                name,
                &program,
                &extra,
                &["--max-states", "20000"],
                "the state limit (20000) was reached",
            );
        }
    }
}

/// A small ceiling that the weak writes reach within a second in both
/// engines; a ceiling below the process's own size stops every program at
/// the first look, in every phase that looks.
#[test]
fn the_memory_limit_holds_in_every_engine() {
    for (name, program, extra) in huge() {
        for engine in ENGINES {
            assert_stops(
                engine,
                name,
                &program,
                &extra,
                &["--max-memory", "1"],
                // "was reached", or, when a loaded machine lets the engine
                // find outcomes before it first looks, "was nearly reached:
                // the memory left is kept to print the outcomes found".
                "the memory limit (1 MiB) was ",
            );
        }
    }
    let program = file("weak-writes-20-mem", &weak_writes(20));
    for engine in ENGINES {
        assert_stops(
            engine,
            "weak-writes-20",
            &program,
            &[],
            &["--max-memory", "64"],
            // The outcomes found would not fit in what is left to print them.
            "the memory limit (64 MiB) was nearly reached: the memory left is kept to print the outcomes found",
        );
    }
}

/// The outcome lines of a herd report.
fn states(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.ends_with(';')).collect()
}

/// With both engines, one may finish while the other is stopped: the report
/// keeps the finished engine's complete set and says so. The state limit
/// makes this deterministic: the machine needs 147 distinct states for the
/// spin lock at loop bound 6, the oracle 46,075 search nodes.
#[test]
fn with_both_engines_the_report_says_which_engine_finished() {
    let program = file("spin-lock-2", &families::spin_lock(2));
    let path = program.to_str().unwrap();
    // Bounded on purpose: reduced, the retry loop is instant in both engines.
    let (code, both, _) = ptxmc(&[
        "run",
        "--bound-retry-loops",
        // Forced reads first make the oracle finish within the limit; the
        // order they replace still needs 46,075 nodes.
        "--no-forced-reads",
        "--max-states",
        "1000",
        "--loop-bound",
        "6",
        path,
    ]);
    assert_eq!(code, 4, "{both}");
    assert!(
        both.contains(
            "Incomplete: axiomatic engine: the state limit (1000) was reached; \
             the operational engine finished: the states below are its complete set\n"
        ),
        "{both}"
    );
    let (code, op, _) = ptxmc(&[
        "run",
        "--bound-retry-loops",
        "--engine",
        "op",
        "--loop-bound",
        "6",
        path,
    ]);
    assert_eq!(code, 0, "{op}");
    assert!(!states(&op).is_empty());
    assert_eq!(states(&both), states(&op));
}

/// A stopped run's report says its states are partial.
#[test]
fn a_stopped_engine_alone_says_its_states_are_partial() {
    let program = file("random-4x8-herd", &families::random(1, 4, 8));
    let (code, out, _) = ptxmc(&[
        "run",
        "--engine",
        "ax",
        "--max-states",
        "500",
        program.to_str().unwrap(),
    ]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains(
            "Incomplete: axiomatic engine: the state limit (500) was reached; \
             the states below are only those found\n"
        ),
        "{out}"
    );
}

/// The printing reserve is that of the format printed: 131,072 final states
/// of 17 values take a fraction of a second to print as herd text or as
/// JSON written straight from the set, but would be given about 6.7 s at
/// the reserve of JSON built as values (what the reserve was for every
/// format before). Under a 5 s limit both reports are complete, every engine.
#[test]
fn the_printing_reserve_is_the_printed_formats() {
    let program = file("weak-writes-17", &weak_writes(17));
    let path = program.to_str().unwrap();
    for engine in ENGINES {
        let (code, out, _) = ptxmc(&["run", "--engine", engine, "--timeout", "5", path]);
        assert_eq!(code, 0, "--engine {engine}: {}", &out[..out.len().min(300)]);
        assert!(out.contains("\nStates 131072\n"), "--engine {engine}");
        assert_eq!(states(&out).len(), 131_072, "--engine {engine}");
        let (code, out, _) = ptxmc(&[
            "run",
            "--engine",
            engine,
            "--timeout",
            "5",
            "--format",
            "json",
            path,
        ]);
        assert_eq!(code, 0, "--engine {engine} --format json");
        let v: serde_json::Value = serde_json::from_str(&out).expect("a JSON report");
        assert_eq!(v[0]["complete"], true, "--engine {engine} --format json");
        assert_eq!(v[0]["outcomes"].as_array().unwrap().len(), 131_072);
    }
}

/// `threads` threads in CTAs of their own, each with `each` acquire CAS of
/// one location at `.cta` scope (`atom.acquire.cta.cas r, x, 0, 1`): a
/// single state has many successors, because each CAS may read a write
/// forwarded from another thread's CAS, itself reading a forwarded one (12
/// CAS in each of 2 threads: about 1,000 successors a state; one CAS in
/// each of 20 threads: 123,520 successors of the initial state alone, 417
/// MB).
fn cas_threads(threads: usize, each: usize) -> String {
    let head: Vec<String> = (0..threads)
        .map(|t| format!("P{t}@cta {t},cluster 0,gpu 0"))
        .collect();
    let mut rows = String::new();
    for i in 0..each {
        let row: Vec<String> = (0..threads)
            .map(|t| format!("atom.acquire.cta.cas r{i}, x, 0, {}", t + 1))
            .collect();
        rows.push_str(&format!(" {} ;\n", row.join(" | ")));
    }
    format!(
        "PTX cas-{threads}x{each}\n{{ x=0; }}\n {} ;\n{rows}exists (x == 1)\n",
        head.join(" | ")
    )
}

/// The guard of a run under a short time limit: ten times the limit and
/// five seconds (a hang guard, not a timing assertion).
fn guard_of(timeout: f64) -> Duration {
    Duration::from_secs_f64(10.0 * timeout + 5.0)
}

/// Found by fuzzing (issue 24): the machine polled its limits between
/// expansions only, and one expansion of these programs takes from tens of
/// milliseconds to minutes (2 threads of 12 CAS under `--timeout 0.2`
/// returned after 3.0 s; 24 threads of one CAS under `--timeout 1`, after
/// 28 s). A watchdog now interrupts the machine inside an expansion.
#[test]
fn the_time_limit_holds_inside_one_expansion() {
    for (name, text, timeout) in [
        ("cas-2x12", cas_threads(2, 12), "0.2"),
        ("cas-24x1", cas_threads(24, 1), "0.5"),
    ] {
        let program = file(name, &text);
        for engine in ["op", "both"] {
            let args = [
                "run",
                "--engine",
                engine,
                "--format",
                "json",
                "--timeout",
                timeout,
                program.to_str().unwrap(),
            ];
            let (code, out, took) = ptxmc_within(&args, guard_of(timeout.parse().unwrap()));
            let context = format!("{name}, --engine {engine}: returned in {took:?}");
            assert_eq!(code, 4, "{context}\n{out}");
            let v: serde_json::Value = serde_json::from_str(&out).expect("a JSON report");
            assert_eq!(v[0]["complete"], false, "{context}");
            let reason = v[0]["incomplete_reason"].as_str().unwrap();
            let limit: f64 = timeout.parse().unwrap();
            assert!(
                reason.contains(&format!(
                    "operational engine: the time limit ({limit:.1} s) was"
                )),
                "{context}: {reason}"
            );
        }
    }
}

/// Found by fuzzing (issue 24): 64-thread programs grew to 5.7 GB under
/// `--max-memory 1000` and aborted ("memory allocation failed"): the
/// successors of the initial state alone do not fit (64 threads of one CAS:
/// millions of states of a few kilobytes). The watchdog stops the machine
/// inside that expansion, within a small multiple of the limit (the
/// resident size is read every 10 ms, while memory grows by hundreds of
/// megabytes a second).
#[test]
fn the_memory_limit_holds_inside_one_expansion() {
    let program = file("cas-64x1", &cas_threads(64, 1));
    for engine in ["op", "both"] {
        let args = [
            "run",
            "--engine",
            engine,
            "--format",
            "json",
            "--max-memory",
            "300",
            program.to_str().unwrap(),
        ];
        let (code, out, took) = ptxmc(&args);
        let context = format!("cas-64x1, --engine {engine}: returned in {took:?}");
        assert_eq!(code, 4, "{context}\n{out}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("a JSON report");
        let reason = v[0]["incomplete_reason"].as_str().unwrap();
        assert!(
            reason.contains("operational engine: the memory limit (300 MiB) was"),
            "{context}: {reason}"
        );
        let peak = v[0]["engine_stats"]["op"]["peak_rss_bytes"]
            .as_u64()
            .unwrap();
        assert!(peak < 1 << 30, "{context}: peak {} MiB", peak >> 20);
    }
}

/// `trace --hang` searches the whole state space: it takes the limits of
/// `run` (`--max-states`, `--timeout`, `--max-memory`) and says when one
/// stopped it (exit status 4). It had only a state limit, counted between
/// steps.
#[test]
fn trace_hang_honours_every_limit() {
    let program = file("cas-16x1", &cas_threads(16, 1));
    let path = program.to_str().unwrap();
    for (limit, value, why) in [
        ("--timeout", "0.5", "the time limit (0.5 s) was reached"),
        (
            "--max-memory",
            "100",
            "the memory limit (100 MiB) was reached",
        ),
        ("--max-states", "1000", "the state limit (1000) was reached"),
    ] {
        let (code, out, took) =
            ptxmc_within(&["trace", "--hang", limit, value, path], guard_of(0.5));
        let context = format!("trace --hang {limit} {value}: returned in {took:?}");
        assert_eq!(code, 4, "{context}\n{out}");
        assert_eq!(
            out.trim(),
            format!("Incomplete: no hang found before {why}."),
            "{context}"
        );
    }
}

/// Message passing repeated `k` times side by side (2k threads on `x` and `f`).
fn mp_times(k: usize) -> String {
    let head: Vec<String> = (0..k)
        .map(|i| {
            format!(
                "P{}@cta 0,cluster 0,gpu 0 | P{}@cta 1,cluster 0,gpu 0",
                2 * i,
                2 * i + 1
            )
        })
        .collect();
    let r1 = vec!["st.weak x, 1 | ld.acquire.gpu r0, f"; k].join(" | ");
    let r2 = vec!["st.release.gpu f, 1 | ld.weak r1, x"; k].join(" | ");
    format!(
        "PTX MP-x{k}\n{{ x=0; f=0; }}\n {} ;\n {r1} ;\n {r2} ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
        head.join(" | ")
    )
}

/// Found by the mutation campaign (`tests/mutation.rs`): `explain
/// --timeout` looked at the clock only between candidates, and neither the
/// orientations of a location's writes (2^pairs) nor the machine's search
/// for a run polled it; `fix --timeout` ran every oracle and both-engine
/// verification without limits. Message passing repeated over 32 threads
/// ran past 20 s (explain growing to 4 GB) under `--timeout 0.5`.
#[test]
fn explain_and_fix_honour_their_time_limit() {
    let program = file("mp-x16", &mp_times(16));
    let path = program.to_str().unwrap();
    for command in ["explain", "fix"] {
        let (code, out, took) = ptxmc_within(&[command, "--timeout", "0.5", path], guard_of(0.5));
        assert_eq!(code, 4, "{command}: returned in {took:?}\n{out}");
    }
}

/// Found by the mutation campaign (seed of `.ci/run`'s deep run): 16
/// threads, each reader in two nested spin loops around a `fence.sc`. The
/// explanation's reads-from walk checked the clock once per 64 complete
/// candidates, and every node checks every axiom on its prefix: `explain
/// --timeout 0.5` ran for minutes. It now looks at the clock at every node.
#[test]
fn explain_looks_at_the_clock_at_every_node() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/explain-nested-spins-x16.litmus"
    );
    let (code, out, took) = ptxmc_within(&["explain", "--timeout", "0.5", path], guard_of(0.5));
    assert_eq!(code, 4, "returned in {took:?}\n{out}");
}

/// Found by the deep mutation campaign (mutant 465 of
/// `Pipeline-2stage-2round-no-proxy-fence`): the explanation's walk over path
/// combinations read the clock only at search nodes, and this mutant's
/// combinations have no candidate, so `explain --timeout 0.5` ran past 10 s.
/// The walk now looks at the clock at every combination.
#[test]
fn explain_looks_at_the_clock_at_every_path_combination() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/explain-pipeline-mutant.litmus"
    );
    let (code, out, took) = ptxmc_within(&["explain", "--timeout", "0.5", path], guard_of(0.5));
    assert_eq!(code, 4, "returned in {took:?}\n{out}");
}

/// Found by the mutation campaign: `explain` chose which arrivals complete
/// a barrier phase by filtering every subset of the arrivals (2^n of them,
/// unpolled), so `Bar-waits-for-spinner` repeated over 32 threads ran past
/// any `--timeout`. The subsets are now enumerated directly, under the
/// deadline and the candidate limit.
#[test]
fn explain_enumerates_barrier_phases_within_its_limits() {
    let k = 16;
    let head: Vec<String> = (0..2 * k)
        .map(|t| format!("P{t}@cta 0,cluster 0,gpu 0"))
        .collect();
    let rows = [
        ["LC00:", "bar.cta.sync 0, 0, 2"],
        ["ld.relaxed.cta r0, f", "st.relaxed.cta f, 1"],
        ["beq r0, 0, LC00", ""],
        ["bar.cta.sync 0, 0, 2", ""],
    ]
    .map(|pair| vec![pair.join(" | "); k].join(" | "));
    let text = format!(
        "PTX Bar-x{k}\n{{ f=0; }}\n {} ;\n {} ;\nexists (P0:r0 == 1)\n",
        head.join(" | "),
        rows.join(" ;\n ")
    );
    let program = file("bar-x16", &text);
    let (code, out, took) = ptxmc_within(
        &["explain", "--timeout", "0.5", program.to_str().unwrap()],
        guard_of(0.5),
    );
    assert_eq!(code, 4, "returned in {took:?}\n{out}");
    assert!(out.contains("Incomplete: "), "{out}");
    // `fix` on it: the oracle's nodes are slow there (tens of milliseconds)
    // and it polled every 128 of them; a watchdog latches the deadline now
    // (0.55 s; it was 3.7 s idle and 7 s under load, which this guard, as
    // the others, is too generous to tell apart).
    let (code, out, took) = ptxmc_within(
        &["fix", "--timeout", "0.5", program.to_str().unwrap()],
        guard_of(0.5),
    );
    assert_eq!(code, 4, "fix returned in {took:?}\n{out}");
}

/// Found by the deep mutation campaign (mutant 967 of `MP+syncwarp`): the
/// oracle planned a barrier phase that an undefined arrival poisons by every
/// choice of each lane's arrival prefix — 3^32 choices for 32 lanes with two
/// `bar.warp.sync` each — without looking at the clock, so `run --timeout
/// 0.5` ran past 10 s. The planner now asks its budget at every choice.
#[test]
fn the_oracle_plans_poisoned_barrier_phases_within_its_limits() {
    ends_incomplete_at_half_a_second(
        "oracle-poisoned-warp-barrier-mutant.litmus",
        &["ax", "both"],
        "Incomplete: axiomatic engine: the time limit (0.5 s) was reached",
    );
}

/// `ptxmc run --engine E --timeout 0.5` on `tests/data/NAME` ends within
/// its guard with exit 4 and a report that contains `says`, for each E.
fn ends_incomplete_at_half_a_second(name: &str, engines: &[&str], says: &str) {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    for engine in engines {
        let (code, out, took) = ptxmc_within(
            &[
                "run",
                "--engine",
                engine,
                "--timeout",
                "0.5",
                "--jobs",
                "1",
                &path,
            ],
            guard_of(0.5),
        );
        assert_eq!(code, 4, "{engine}: returned in {took:?}\n{out}");
        assert!(out.contains(says), "{engine}: {out}");
    }
}

/// The machine lists the orbits of the final states it found under its
/// symmetry (`op::symmetry::Symmetry::expand`) within the run's limits: 32
/// interchangeable readers of one flag have 2^32 final states, and a
/// mutant of the library (kept in `tests/data/`) once made `run --timeout
/// 0.5` list them for more than 10 s.
#[test]
fn the_machine_expands_symmetric_orbits_within_its_limits() {
    ends_incomplete_at_half_a_second(
        "machine-symmetric-orbit-mutant.litmus",
        &["op", "both"],
        "the time limit (0.5 s) was reached",
    );
}
