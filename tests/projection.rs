//! Projection (`--project condition|memory`: final states over what the test
//! asks about, the oracle's unobserved additions commuting;
//! `docs/exploration.md`, "Projection") and verdict-only runs
//! (`--verdict-only`: both engines stop at the first final state that
//! settles the condition; "Verdict-only runs") keep every answer.
//!
//! Projected: the outcomes are the full run's outcomes projected, and the
//! verdict, loop-bound flag, termination verdict (the hang itself
//! included), undefined behaviour, races and the engines' agreement are the
//! same — on the litmus library with Dat3M's suite, the corpus kernels, the
//! issue-27 families and seeded random programs; with the machine's
//! symmetry reduction on and off. Verdict-only: the same verdict; a run
//! that stopped says so and lists only states of the full set, one of which
//! settles the condition; a run that did not stop is the full run.
//!
//! Cost: the default suite checks the programs whose full run (both
//! engines) fits in [`CHEAP`] machine states and oracle nodes, and every
//! third test of the library; `PTXMC_DEEP=1` checks every program without
//! a limit.

use std::path::{Path, PathBuf};

use ptxmc::engine::{self, EngineChoice, Projection, RunOptions, RunResult};
use ptxmc::families::{self, Arrival};
use ptxmc::ir::Program;
use ptxmc::limits::Limits;
use ptxmc::outcome::Columns;
use ptxmc::{litmus, ptx};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// `PTXMC_DEEP=1`: every program, no limit.
fn deep() -> bool {
    std::env::var("PTXMC_DEEP").is_ok_and(|v| v == "1")
}

/// The default suite's bound on a full run (machine states, oracle nodes):
/// a program that needs more is checked only under `PTXMC_DEEP=1`. A state
/// count, not a time, so which programs are checked does not depend on the
/// machine's load.
const CHEAP: u64 = 20_000;

fn opts(engine: EngineChoice, project: Projection, verdict_only: bool) -> RunOptions {
    RunOptions {
        engine,
        project,
        verdict_only,
        limits: Limits {
            max_states: (!deep()).then_some(CHEAP),
            ..Limits::default()
        },
        ..RunOptions::default()
    }
}

/// The full run of `p` (both engines); `None` when it is beyond [`CHEAP`]
/// (default suite only: under `PTXMC_DEEP=1` every run is complete).
fn full_run(name: &str, p: &Program) -> Option<RunResult> {
    let r = engine::run(p, &opts(EngineChoice::Both, Projection::All, false));
    if r.incomplete.is_some() && !deep() {
        return None;
    }
    assert!(r.incomplete.is_none(), "{name}: {:?}", r.incomplete);
    Some(r)
}

fn races(r: &RunResult) -> (Vec<ptxmc::ax::race::Race>, engine::RaceStatus) {
    let v = r.races.found.iter().map(|f| f.race.clone()).collect();
    (v, r.races.status.clone())
}

/// How many commuting counters the machine finds in `p`, listing every
/// register or (`projected`) those of the condition.
fn commuting_counters(p: &Program, projected: bool) -> usize {
    let Ok(mut m) = ptxmc::op::Machine::new(p, RunOptions::default().loop_bound) else {
        return 0;
    };
    let observed: Vec<Vec<bool>> = if projected {
        ptxmc::outcome::observed_regs(p)
    } else {
        p.threads.iter().map(|t| vec![true; t.regs.len()]).collect()
    };
    m.commute_additions(&observed);
    m.commuting.as_ref().map_or(0, |c| c.counters())
}

/// The machine's distinct states and the oracle's outcome nodes of a run.
fn cost(r: &RunResult) -> (u64, u64) {
    (
        r.stats.op.map_or(0, |s| s.distinct_states),
        r.stats.ax.map_or(0, |s| s.nodes),
    )
}

/// Runs `p` in full and projected (both engines); checks every answer is
/// kept; returns the cost of each (full, projected).
fn same_projected(name: &str, p: &Program, project: Projection) -> ((u64, u64), (u64, u64)) {
    let full = full_run(name, p).unwrap_or_else(|| panic!("{name}: beyond {CHEAP} states"));
    same_projected_as(name, p, project, &full)
}

/// [`same_projected`] against a full run already made. Where the machine
/// grouped symmetric threads, the projected run without symmetry
/// (`--no-symmetry`) is checked to list the same states.
fn same_projected_as(
    name: &str,
    p: &Program,
    project: Projection,
    full: &RunResult,
) -> ((u64, u64), (u64, u64)) {
    let proj = engine::run(p, &opts(EngineChoice::Both, project, false));
    assert!(
        full.incomplete.is_none() && proj.incomplete.is_none(),
        "{name}: incomplete {:?} {:?}",
        full.incomplete,
        proj.incomplete
    );
    assert!(!full.columns.is_projection() && proj.columns.is_projection());
    assert_eq!(
        proj.columns,
        Columns::projected(p, project == Projection::Memory)
    );
    let at = proj.columns.positions_in(&full.columns);
    assert_eq!(
        proj.outcomes,
        Columns::project(&at, full.outcomes.clone()),
        "{name}: outcomes changed"
    );
    assert_eq!(
        proj.filtered_out,
        Columns::project(&at, full.filtered_out.clone()),
        "{name}: filtered states changed"
    );
    assert_eq!(proj.verdict.holds, full.verdict.holds, "{name}: verdict");
    assert_eq!(proj.bound_hit, full.bound_hit, "{name}: bound flag");
    assert_eq!(proj.termination, full.termination, "{name}: termination");
    assert_eq!(proj.undefined, full.undefined, "{name}: undefined");
    assert_eq!(races(&proj), races(full), "{name}: races");
    assert!(
        full.disagreement.is_none() && proj.disagreement.is_none(),
        "{name}: engines disagree"
    );
    // The machine explores exactly as in full (projection only lists),
    // unless the projection leaves out the tickets of additions that then
    // commute (`docs/exploration.md`, "Commuting additions in the machine").
    if commuting_counters(p, true) > commuting_counters(p, false) {
        assert!(cost(&proj).0 <= cost(full).0, "{name}: machine states");
    } else {
        assert_eq!(cost(&proj).0, cost(full).0, "{name}: machine states");
    }
    if full.stats.op.is_some_and(|s| s.symmetric_threads > 0) {
        let mut o = opts(EngineChoice::Op, project, false);
        o.symmetry = false;
        let plain = engine::run(p, &o);
        assert!(plain.incomplete.is_none(), "{name}: {:?}", plain.incomplete);
        assert_eq!(
            plain.outcomes, proj.outcomes,
            "{name}: projected, with and without symmetry"
        );
        assert_eq!(plain.verdict.holds, proj.verdict.holds, "{name}");
    }
    (cost(full), cost(&proj))
}

/// Runs `p` in full and verdict-only (both engines); checks the verdict
/// and what a stopped run claims. Returns whether it stopped.
fn same_verdict(name: &str, p: &Program) -> bool {
    let full = full_run(name, p).unwrap_or_else(|| panic!("{name}: beyond {CHEAP} states"));
    same_verdict_as(name, p, &full)
}

/// [`same_verdict`] against a full run already made.
fn same_verdict_as(name: &str, p: &Program, full: &RunResult) -> bool {
    let fast = engine::run(p, &opts(EngineChoice::Both, Projection::All, true));
    assert!(full.incomplete.is_none(), "{name}: incomplete");
    assert_eq!(fast.verdict.holds, full.verdict.holds, "{name}: verdict");
    let stopped = fast
        .incomplete
        .as_deref()
        .is_some_and(|w| w.contains("--verdict-only"));
    if stopped {
        // Only states of the full set, one of which settles the condition;
        // nothing claimed about termination or races.
        assert!(
            fast.outcomes.is_subset(&full.outcomes),
            "{name}: invented states"
        );
        assert!(fast.verdict_is_definitive(p), "{name}: not definitive");
        assert!(
            fast.partial || fast.outcomes == full.outcomes,
            "{name}: a stopped run's states are partial or all"
        );
        // Only a program with no loop, barrier or wait keeps its verdict
        // (it terminates whatever the search did).
        assert!(
            !fast.termination.checked()
                || fast.termination == engine::Termination::Terminates { trivially: true }
                || fast.termination == full.termination,
            "{name}: termination claimed"
        );
        assert!(
            !matches!(fast.races.status, engine::RaceStatus::Complete),
            "{name}: races claimed complete"
        );
        assert!(fast.disagreement.is_none(), "{name}");
    } else {
        assert!(fast.incomplete.is_none(), "{name}: {:?}", fast.incomplete);
        assert_eq!(fast.outcomes, full.outcomes, "{name}: outcomes");
        assert_eq!(fast.termination, full.termination, "{name}: termination");
        assert_eq!(fast.undefined, full.undefined, "{name}: undefined");
        assert_eq!(races(&fast), races(full), "{name}: races");
    }
    stopped
}

/// Every test of the library and of Dat3M's suite (default suite: every
/// third one within [`CHEAP`]): projected onto its condition, and
/// verdict-only.
#[test]
fn projection_and_verdict_only_keep_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let (mut all, mut n, mut stopped, mut symmetric) = (0usize, 0, 0, 0);
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            all += 1;
            if !deep() && all % 3 != 1 {
                continue;
            }
            let name = t.display_path();
            let Some(full) = full_run(&name, &t.program) else {
                continue;
            };
            same_projected_as(&name, &t.program, Projection::Condition, &full);
            stopped += usize::from(same_verdict_as(&name, &t.program, &full));
            symmetric += usize::from(full.stats.op.is_some_and(|s| s.symmetric_threads > 0));
            n += 1;
        }
    }
    eprintln!("{n} of {all} tests checked, {stopped} stopped early, {symmetric} symmetric");
    assert!(all > 1000, "{all} tests");
    // Nearly every sampled test is within the bound.
    let sampled = if deep() { all } else { all.div_ceil(3) };
    assert!(n * 10 >= sampled * 9, "{n} of {sampled} checked");
    assert!(stopped * 10 > n, "{stopped} of {n} stopped early");
    assert!(symmetric >= 5, "{symmetric} symmetric tests");
}

/// Every corpus kernel (`kernels/expected.csv`; default suite: those
/// within [`CHEAP`]): projected onto its condition and onto memory (a
/// kernel's buffers), and verdict-only.
#[test]
fn projection_and_verdict_only_keep_every_answer_of_the_kernels() {
    let csv = std::fs::read_to_string(root().join("kernels/expected.csv")).unwrap();
    let (mut all, mut n) = (0, 0);
    for line in csv.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let name = line.split(',').next().unwrap();
        all += 1;
        let t = ptx::load_file(&root().join("kernels").join(name), None, None)
            .unwrap_or_else(|e| panic!("{}", e.rendered()));
        let Some(full) = full_run(name, &t.program) else {
            continue;
        };
        same_projected_as(name, &t.program, Projection::Condition, &full);
        same_projected_as(name, &t.program, Projection::Memory, &full);
        same_verdict_as(name, &t.program, &full);
        n += 1;
    }
    eprintln!("{n} of {all} kernels checked");
    assert_eq!(all, 87);
    assert!(n >= if deep() { all } else { 50 }, "{n} of {all} kernels");
}

/// With an `atom` ticket per arrival the grid barrier has `n!` final
/// states; over its condition's registers it has one. Projected, the
/// machine stores the `red` family's states (its commuting additions
/// forget the order of the arrivals once the tickets are not listed:
/// `docs/exploration.md`, "Commuting additions in the machine"), fewer
/// than in full; the oracle searches every order either way: an `atom`'s
/// read half, unlike a `red`'s, heads
/// an acquire pattern with the spin's acquiring load of the same location,
/// so it does not commute even when nobody reads its ticket
/// (`docs/oracle.md`, "Projection").
#[test]
fn projection_keeps_every_answer_of_the_families() {
    for n in 1..=5 {
        let text = families::grid_barrier(n, Arrival::Atom);
        let t = &litmus::parse_source("grid.litmus", &text).unwrap()[0];
        let (full, proj) = same_projected(&format!("atom-{n}"), &t.program, Projection::Condition);
        let red = families::grid_barrier(n, Arrival::Red);
        let r = &litmus::parse_source("grid.litmus", &red).unwrap()[0];
        let red_run = engine::run(
            &r.program,
            &opts(EngineChoice::Both, Projection::All, false),
        );
        assert_eq!(
            proj.0,
            cost(&red_run).0,
            "atom-{n}: the red family's states"
        );
        // The oracle searches as much; the machine forgets the unlisted
        // tickets of the commuting `atom`s, and with them the order of the
        // additions (`docs/exploration.md`, "Commuting additions in the
        // machine").
        assert_eq!(proj.1, full.1, "atom-{n}: {full:?} -> {proj:?}");
        assert!(
            if n >= 3 {
                proj.0 < full.0
            } else {
                proj.0 <= full.0
            },
            "atom-{n}: {full:?} -> {proj:?}"
        );
        same_projected(&format!("red-{n}"), &r.program, Projection::Condition);
        same_verdict(&format!("atom-{n}"), &t.program);
        let listed = engine::run(
            &t.program,
            &opts(EngineChoice::Ax, Projection::Condition, false),
        );
        assert_eq!(listed.outcomes.len(), 1, "atom-{n}");
    }
    for n in 2..=6 {
        let t = &litmus::parse_source("counter.litmus", &families::counter(n)).unwrap()[0];
        same_projected(&format!("counter-{n}"), &t.program, Projection::Condition);
        same_verdict(&format!("counter-{n}"), &t.program);
    }
    for n in [2, 4, 8] {
        let t = &litmus::parse_source("barrier.litmus", &families::cta_barrier(n)).unwrap()[0];
        same_projected(&format!("barrier-{n}"), &t.program, Projection::Condition);
    }
    let t = &litmus::parse_source("pipeline.litmus", &families::pipeline(2, 1)).unwrap()[0];
    same_projected("pipeline-2x1", &t.program, Projection::Condition);
    same_verdict("pipeline-2x1", &t.program);
}

/// A hang is found the same way projected, and a verdict-only run of a
/// program whose condition no state settles searches to the end and
/// reports the hang.
#[test]
fn a_grid_barrier_short_of_one_arrival_hangs_projected_and_verdict_only() {
    let text = families::grid_barrier(3, Arrival::Atom).replacen(
        " atom.release.gpu.add r0, count, 1 |",
        " add r0, r0, 1 |",
        1,
    );
    let t = &litmus::parse_source("grid.litmus", &text).unwrap()[0];
    same_projected("short grid", &t.program, Projection::Condition);
    assert!(!same_verdict("short grid", &t.program));
    let r = engine::run(
        &t.program,
        &opts(EngineChoice::Both, Projection::Condition, true),
    );
    assert!(r.termination.hangs(), "{text}");
}

/// Seeded random programs of 2–3 threads over a counter `c` and a flag `x`
/// (additions by `red` and `atom`, loads into registers, spins, stores),
/// whose condition names one register of thread 0 and `c`: every answer
/// kept projected and verdict-only, and the engines agree (80 programs;
/// 250 under `PTXMC_DEEP=1`).
#[test]
fn projection_and_verdict_only_keep_every_answer_of_random_programs() {
    use rand_core::{Rng, SeedableRng};
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(0x0070_2027);
    let (mut paid, mut stopped) = (0, 0);
    let cases = if deep() { 250 } else { 80 };
    for case in 0..cases {
        let mut pick = |n: u32| (rng.next_u32() % n) as i64;
        let threads = 2 + pick(2) as usize;
        let mut cols = Vec::new();
        for t in 0..threads {
            let mut code = Vec::new();
            for k in 0..1 + pick(4) {
                let sem = ["relaxed", "release", "acq_rel"][pick(3) as usize];
                match pick(9) {
                    0 | 1 => code.push(format!("red.{sem}.gpu.add c, {}", 1 + pick(2))),
                    2 => code.push(format!("atom.{sem}.gpu.add r{k}, c, 1")),
                    3 => {
                        let want = pick(3);
                        let loc = ["c", "x"][pick(2) as usize];
                        code.push(format!("LC{t}{k}:"));
                        code.push(format!("ld.acquire.gpu r{}, {loc}", 10 + k));
                        code.push(format!("bne r{}, {want}, LC{t}{k}", 10 + k));
                    }
                    4 | 5 => code.push(format!("st.release.gpu x, {}", 1 + pick(2))),
                    6 => code.push(format!("ld.acquire.gpu r{}, x", 20 + k)),
                    7 => code.push(format!("add r30, r{}, 1", 20 + pick(2))),
                    _ => code.push("st.relaxed.gpu x, r30".to_string()),
                }
            }
            if t == 0 {
                code.push("ld.relaxed.gpu r40, x".to_string());
            }
            cols.push(code);
        }
        let headers: Vec<String> = (0..threads)
            .map(|t| format!("P{t}@cta {t},cluster 0,gpu 0"))
            .collect();
        let quant = ["exists", "~exists", "forall"][pick(3) as usize];
        let text = format!(
            "PTX projected-{case}\n{{ c=0; x=0; }}\n{}{quant} (P0:r40 == 1 /\\ c == 2)\n",
            litmus::print::table(&headers, &cols)
        );
        let t = &litmus::parse_source("projected.litmus", &text)
            .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()))[0];
        let full = full_run(&text, &t.program).expect("a small program");
        let (before, after) = same_projected_as(&text, &t.program, Projection::Condition, &full);
        paid += usize::from(after.1 < before.1);
        stopped += usize::from(same_verdict_as(&text, &t.program, &full));
    }
    eprintln!("{paid} programs took fewer oracle nodes projected, {stopped} stopped early");
    assert!(stopped * 8 > cases, "{stopped} programs stopped early");
}

/// `n` threads each add 1 to `c` with a relaxed `atom` whose ticket (`r0`)
/// nothing reads; the condition asks about `c` only.
fn atom_counter(n: usize) -> String {
    let head: Vec<String> = (0..n)
        .map(|t| format!("P{t}@cta {t},cluster 0,gpu 0"))
        .collect();
    let cols: Vec<Vec<String>> = (0..n)
        .map(|_| vec!["atom.relaxed.gpu.add r0, c, 1".to_string()])
        .collect();
    format!(
        "PTX Atom-counter-{n}\n{{ c=0; }}\n{}exists (c == {n})\n",
        litmus::print::table(&head, &cols)
    )
}

/// Where the oracle's projection pays: tickets that only the full final
/// states list keep the oracle from letting the additions commute
/// (`docs/oracle.md`, "Commuting additions"), so it searches every order
/// of them (`n!` final states); projected onto the condition (`c`) they
/// commute and it searches one. The machine is unchanged. Without
/// `Graph::project_final_regs` the node counts would be equal.
#[test]
fn the_oracle_lets_unobserved_tickets_commute_when_projected() {
    for (n, full_nodes) in [(3, 22), (4, 89), (5, 446)] {
        let t = &litmus::parse_source("atoms.litmus", &atom_counter(n)).unwrap()[0];
        let (full, proj) = same_projected(&format!("atoms-{n}"), &t.program, Projection::Condition);
        assert_eq!(full.1, full_nodes, "atoms-{n}: oracle nodes in full");
        assert!(
            proj.1 * 2 < full.1,
            "atoms-{n}: {} oracle nodes projected, {} in full",
            proj.1,
            full.1
        );
    }
}

/// Limits keep a projected or verdict-only run explicitly incomplete: the
/// state limit stops the grid barrier (whose `exists` is forbidden, so no
/// state settles it) in either mode; the verdict is then not definitive,
/// the states listed are partial, and the limit, not `--verdict-only`, is
/// the reason given.
#[test]
fn limits_leave_projected_and_verdict_only_runs_incomplete() {
    let text = families::grid_barrier(4, Arrival::Atom);
    let t = &litmus::parse_source("grid.litmus", &text).unwrap()[0];
    for (project, verdict_only) in [
        (Projection::Condition, false),
        (Projection::All, true),
        (Projection::Condition, true),
    ] {
        for engine in [EngineChoice::Op, EngineChoice::Ax, EngineChoice::Both] {
            let mut o = opts(engine, project, verdict_only);
            // Below the 14 states the machine stores projected, one
            // addition at a time (`docs/exploration.md`).
            o.limits.max_states = Some(10);
            let r = engine::run(&t.program, &o);
            let why = r
                .incomplete
                .as_deref()
                .unwrap_or_else(|| panic!("{engine:?} {project:?} {verdict_only}: complete"));
            assert!(
                why.contains("state limit") && !why.contains("--verdict-only"),
                "{engine:?} {project:?} {verdict_only}: {why}"
            );
            assert!(r.partial, "{engine:?} {project:?} {verdict_only}");
            assert!(!r.verdict_is_definitive(&t.program));
            assert!(!r.termination.checked());
        }
    }
}

/// What the herd report says: a projected run names its columns before the
/// count; a stopped verdict-only run says it is incomplete, keeps the
/// verdict and exits with the incomplete status (4).
#[test]
fn the_report_says_what_was_projected_and_where_a_verdict_only_run_stopped() {
    let dir = std::env::temp_dir().join(format!("ptxmc-projection-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let grid = dir.join("grid.litmus");
    std::fs::write(&grid, families::grid_barrier(3, Arrival::Atom)).unwrap();
    let iriw = dir.join("iriw.litmus");
    std::fs::write(&iriw, families::iriw(4)).unwrap();
    let run = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_ptxmc"))
            .arg("run")
            .args(args)
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8(o.stdout).unwrap())
    };
    let (code, out) = run(&["--project", "condition", grid.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(
            "States over: 0:r2 1:r2 2:r2 (projected: other registers and locations are not listed)\nStates 1\n0:r2=2; 1:r2=3; 2:r2=1;\n"
        ),
        "{out}"
    );
    let (_, full) = run(&[grid.to_str().unwrap()]);
    assert!(
        !full.contains("States over") && full.contains("States 6\n"),
        "{full}"
    );
    let (code, out) = run(&[
        "--verdict-only",
        "--engine",
        "op",
        "--jobs",
        "1",
        iriw.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(4), "{out}");
    assert!(
        out.contains(
            "stopped at the first final state that settles the condition (--verdict-only)"
        ),
        "{out}"
    );
    assert!(
        out.contains("States 1\n") && out.contains("\nOk\n"),
        "{out}"
    );
    // JSON says the same: not complete, why, and that the states are only
    // those found; a projected report names its columns.
    let (code, out) = run(&[
        "--verdict-only",
        "--engine",
        "op",
        "--jobs",
        "1",
        "--format",
        "json",
        iriw.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(4), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let v = if v.is_array() { v[0].clone() } else { v };
    assert_eq!(v["complete"], false, "{out}");
    assert_eq!(v["states_partial"], true, "{out}");
    assert_eq!(v["holds"], true, "{out}");
    assert!(
        v["incomplete_reason"]
            .as_str()
            .unwrap()
            .contains("(--verdict-only)"),
        "{out}"
    );
    let (code, out) = run(&[
        "--project",
        "condition",
        "--format",
        "json",
        grid.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let v = if v.is_array() { v[0].clone() } else { v };
    assert_eq!(
        v["states_over"],
        serde_json::json!(["P0:r2", "P1:r2", "P2:r2"]),
        "{out}"
    );
    assert_eq!(v["complete"], true, "{out}");
    assert!(v.get("states_partial").is_none(), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}
