//! The stepping session (`ptxmc::step`) and `ptxmc step`: on every test of
//! the litmus library, a walk to the end, undo/redo, the test's own outcome
//! reached or refused as the engines say; since when an outcome is out of
//! reach; `trace --follow`'s replay through the session; a golden transcript.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::ir::elect::Variants;
use ptxmc::limits::Limits;
use ptxmc::litmus;
use ptxmc::op::Machine;
use ptxmc::step::{GoTo, Options, Session, picture, text};

mod sample;

fn library() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    litmus::collect_files(&[root.join("litmus")]).expect("the library is readable")
}

/// Library tests whose state space the breadth-first "go to" may not cover
/// within [`options`]' limits, depending on the mode (the two-round TMA
/// pipelines of `docs/async.md` §6: tens of thousands of states with the
/// explorer's reductions, millions without): the walk, undo and redo still
/// run on them, and "go to" may stop with an incomplete answer, never give
/// a wrong one.
const TOO_LARGE_FOR_GO_TO: [&str; 9] = [
    "Pipeline-2stage-2round",
    "Pipeline-2stage-2round-no-proxy-fence",
    "Pipeline-2stage-2round-wrong-parity",
    // Two MMAs, two commits, a TMA copy and a load: seven threads, whose
    // every-step interleavings pass the minute (the machine's own run: 0.1 s).
    "Pipeline-2acc-commit",
    "Pipeline-2acc-commit-wrong-barrier",
    // Multicast tensor copies (two CTAs, four element agents): proving an
    // outcome unreachable step by step passes a million states, and reaching
    // one passes the minute on a loaded machine (the machine's own run: 0.2 s).
    "MulticastTensor+both-armed",
    "MulticastTensor-short-expect",
    // Four element copies, a spinning reader and the whole-copy variant.
    "TmaTensor2d+expect_tx-short-spin",
    // A one-stage pipeline looping twice: the every-step search reached the
    // 60 s limit on a machine loaded by seven builds (the machine's own run:
    // 13,216 states, 0.6 s).
    "Pipeline-1stage-2round-loop",
];

fn options(every_step: bool) -> Options {
    Options {
        loop_bound: 2,
        every_step,
        limits: Limits {
            max_states: Some(2_000_000),
            timeout: Some(Duration::from_secs(60)),
            max_memory: None,
        },
        barriers: Default::default(),
        fairness: Default::default(),
    }
}

/// On every library test, in both modes: a deterministic walk to the end
/// (every state has a transition until the run is over), its final state
/// among the engines' outcomes, undo back to the start and redo to the end
/// again, and "go to" the test's own outcome agreeing with the verdict.
#[test]
fn every_library_test_steps_to_the_end_and_reaches_its_outcome_as_the_engines_say() {
    let files = library();
    assert!(files.len() > 200, "{} files", files.len());
    // A part of the library by default, all of it with PTXMC_DEEP=1.
    walk(&sample::corpus(files));
}

/// The tensor-core tests (`litmus/wgmma`, `litmus/tcgen05`), every one: their
/// agents start at fences rather than at their issue, which the session's
/// steps, undo, redo and "go to" must follow.
#[test]
fn tensor_core_tests_step_to_the_end_and_reach_their_outcomes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let files =
        litmus::collect_files(&[root.join("litmus/wgmma"), root.join("litmus/tcgen05")]).unwrap();
    assert!(files.len() >= 17, "{} files", files.len());
    walk(&files);
}

/// Walk each test of `files` in both modes (a pseudo-random run to the end,
/// restart and redo, "go to" its condition), checking against the oracle.
fn walk(files: &[PathBuf]) {
    let mut walked = 0;
    // Every test whose go-to search stops at a limit, listed at once.
    let mut incomplete = Vec::new();
    for f in files {
        for t in litmus::parse_file(f).expect("library tests parse") {
            let p = &t.program;
            let run = engine::run(
                p,
                &RunOptions {
                    engine: EngineChoice::Ax,
                    ..RunOptions::default()
                },
            );
            assert!(run.incomplete.is_none(), "{}", f.display());
            let every = run
                .outcomes
                .union(&run.filtered_out)
                .cloned()
                .collect::<Vec<_>>();
            for every_step in [true, false] {
                let v = Variants::of(p).expect("few leader choices");
                let mut s = Session::new(&v, options(every_step)).expect("the machine holds it");
                let mut k = 0usize;
                while !s.is_final() {
                    let n = s.transitions().len();
                    if n == 0 {
                        break; // a dead end: the machine's checks refuse every step
                    }
                    s.take((k * 7 + 3) % n).expect("an enabled transition");
                    k += 1;
                    if k == 2_000 {
                        // Only a spin loop can go on for ever (the walk may keep
                        // choosing its iterations).
                        assert!(
                            f.to_string_lossy().contains("/liveness/"),
                            "{}: the walk does not end",
                            f.display()
                        );
                        break;
                    }
                }
                let pic = picture::picture(s.machine(), s.current());
                assert!(!text::state(&s, &pic).is_empty());
                if let Some(finals) = s.final_states() {
                    for o in &finals {
                        assert!(every.contains(o), "{}: {o:?} not allowed", f.display());
                    }
                }
                let end = s.current().fingerprint();
                let history = s.history();
                s.restart();
                assert_eq!(s.history(), Vec::<usize>::new());
                for _ in 0..history.len() {
                    assert!(s.redo());
                }
                assert!(!s.redo());
                assert_eq!(s.current().fingerprint(), end, "{}", f.display());
                assert_eq!(s.history(), history);
                s.restart();
                let target = p.condition.target();
                let possible = run
                    .outcomes
                    .iter()
                    .chain(&run.filtered_out)
                    .any(|o| s.satisfies(o, &target));
                let name = f.file_stem().unwrap().to_string_lossy();
                let too_large = TOO_LARGE_FOR_GO_TO.contains(&name.as_ref());
                match s.go_to(&target) {
                    GoTo::Path(path) => {
                        assert!(possible, "{}: reached a forbidden outcome", f.display());
                        s.replay(&path).expect("the path replays");
                        let finals = s.final_states().expect("the path ends the run");
                        assert!(finals.iter().any(|o| s.satisfies(o, &target)));
                    }
                    GoTo::Unreachable { since } => {
                        assert!(!possible, "{}: missed an allowed outcome", f.display());
                        assert_eq!(since, None);
                    }
                    GoTo::Incomplete(_) if too_large => {}
                    GoTo::Incomplete(e) => incomplete.push(format!("{}: {e}", f.display())),
                }
                walked += 1;
            }
        }
    }
    // Every file sampled, each test in both modes.
    assert!(
        incomplete.is_empty(),
        "go-to stopped at a limit:\n{}",
        incomplete.join("\n")
    );
    assert!(walked >= 2 * files.len(), "{walked}");
}

fn mp_relaxed() -> litmus::LitmusTest {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("litmus/mp/MP+rlx+rlx.gpu.litmus");
    litmus::parse_file(&f).unwrap().remove(0)
}

/// MP with relaxed accesses: the weak outcome is reachable until P1 reads
/// the flag's initial value, and the session says so, naming that step.
#[test]
fn an_outcome_goes_out_of_reach_at_the_step_that_decides_it() {
    let t = mp_relaxed();
    let weak = litmus::cond::parse_outcome(&t.program, &t.spans, "1:r0=1 /\\ 1:r1=0").unwrap();
    let v = Variants::of(&t.program).unwrap();
    let mut s = Session::new(&v, options(true)).unwrap();
    assert!(matches!(s.go_to(&weak), GoTo::Path(_)));
    // P0's first store retires, then P1 reads f=0 (initial).
    s.take(0).unwrap();
    let read_initial = s
        .transitions()
        .into_iter()
        .find(|t| t.sentence == "P1 `ld.relaxed.gpu r0, f` reads f=0 (initial)")
        .expect("P1 may read the initial flag");
    s.take(read_initial.index).unwrap();
    s.take(0).unwrap();
    assert_eq!(s.go_to(&weak), GoTo::Unreachable { since: Some(2) });
    let said = text::go_to(
        &s,
        "1:r0=1 /\\ 1:r1=0",
        &GoTo::Unreachable { since: Some(2) },
    );
    assert_eq!(
        said,
        "1:r0=1 /\\ 1:r1=0 is no longer reachable: it was until step 2 (P1 `ld.relaxed.gpu r0, f` reads f=0 (initial)). Undo back to step 1 to reach it.\n"
    );
    // Reachable outcomes from here: r0 is 0 in all of them.
    let r = s.reachable();
    assert!(r.incomplete.is_none());
    let r0 = s.machine().columns.reg(1, 0).unwrap();
    assert!(!r.outcomes.is_empty());
    assert!(r.outcomes.iter().all(|o| o[r0] == 0));
    // Undo twice: reachable again.
    assert!(s.undo() && s.undo());
    assert!(matches!(s.go_to(&weak), GoTo::Path(_)));
}

/// `trace`'s choices (the reduction on) replay through a session exactly as
/// the machine's own replay describes them.
#[test]
fn a_session_replays_trace_choices_as_the_machine_does() {
    for name in [
        "litmus/mp/MP+rlx+rlx.gpu.litmus",
        "litmus/sb/SB+rlx.gpu.litmus",
    ] {
        let f = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name);
        let t = litmus::parse_file(&f).unwrap().remove(0);
        let m = Machine::new(&t.program, 2).unwrap();
        let target = t.program.condition.target();
        let choices = m.shortest_run(&target, 1_000_000).unwrap();
        let by_machine = m.replay(&choices).unwrap();
        let v = Variants::of(&t.program).unwrap();
        let mut s = Session::new(&v, options(false)).unwrap();
        assert_eq!(s.go_to(&target), GoTo::Path(choices.clone()));
        s.replay(&choices).unwrap();
        let by_session = s.trace();
        assert_eq!(by_session.choices, by_machine.choices);
        assert_eq!(by_session.final_states, by_machine.final_states);
        let a: Vec<String> = by_session.steps.iter().map(|s| format!("{s:?}")).collect();
        let b: Vec<String> = by_machine.steps.iter().map(|s| format!("{s:?}")).collect();
        assert_eq!(a, b);
    }
}

#[test]
fn undo_redo_and_a_new_step_forget_what_was_undone() {
    let t = mp_relaxed();
    let v = Variants::of(&t.program).unwrap();
    let mut s = Session::new(&v, options(true)).unwrap();
    assert!(!s.undo());
    s.take(0).unwrap();
    s.take(0).unwrap();
    assert!(s.undo());
    assert_eq!(s.history(), vec![0]);
    assert!(s.redo());
    assert_eq!(s.history(), vec![0, 0]);
    assert!(s.undo());
    s.take(1).unwrap();
    assert!(!s.redo(), "a new step forgets the undone one");
    let n = s.transitions().len();
    assert_eq!(
        s.take(n).unwrap_err().to_string(),
        format!("expected a transition between 0 and {}, found {n}", n - 1)
    );
}

fn step_cli(file: &str, script: &str) -> (i32, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["step", file])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ptxmc runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// A scripted session on MP with release/acquire: the transcript is pinned.
#[test]
fn a_scripted_step_session_is_a_golden_transcript() {
    let (code, out) = step_cli(
        "litmus/mp/MP+rel+acq.gpu.litmus",
        "2\n7\nu\nr\nx\no\ng 1:r0=1 /\\ 1:r1=0\ng 1:r0=1 /\\ 1:r1=1\nf\ns\nq\n",
    );
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!(out);
}

/// `ptxmc step` on an async test and a cluster test: the agents and the
/// cluster are drawn, the condition's outcome is reached.
#[test]
fn step_draws_asynchronous_operations_and_clusters() {
    let (code, out) = step_cli(
        "litmus/async/Y3+tma-load+wait.acquire.litmus",
        "g 1:r0=1 /\\ 1:r1=42\nf\nq\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Asynchronous operations\n"), "{out}");
    assert!(out.contains("(issued by P0 `cp.async.bulk"), "{out}");
    assert!(out.contains("(mbarrier)"), "{out}");
    assert!(out.contains("Took "), "{out}");
    assert!(
        out.contains("Replay: ptxmc trace litmus/async/Y3+tma-load+wait.acquire.litmus --follow "),
        "{out}"
    );
    let (code, out) = step_cli("litmus/async/MP+barrier.cluster.litmus", "o\nq\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("GPU 0 cluster 0 CTA 1\n"), "{out}");
    assert!(out.contains("Reachable from here: "), "{out}");
}

/// `trace --follow` accepts what `f` prints, in either mode.
#[test]
fn the_follow_command_replays_in_trace() {
    let (code, out) = step_cli("litmus/sb/SB+rlx.gpu.litmus", "1\n0\n2\nf\nq\n");
    assert_eq!(code, 0, "{out}");
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("Replay: ptxmc "))
        .expect("a replay line");
    let args: Vec<&str> = line.split_whitespace().collect();
    let o = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let trace = String::from_utf8_lossy(&o.stdout);
    assert!(
        trace.ends_with(&format!("Replay: ptxmc {line}\n")),
        "{trace}"
    );
    assert!(trace.lines().filter(|l| l.starts_with("  ")).count() >= 3);
}

/// A flag that is never set: a shortest run into the hang, the hang named
/// in the state; a test without loops has none.
#[test]
fn a_session_goes_into_a_hang_and_names_it() {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("litmus/liveness/Flag-never-set.litmus");
    let t = litmus::parse_file(&f).unwrap().remove(0);
    let v = Variants::of(&t.program).unwrap();
    let mut s = Session::new(&v, options(true)).unwrap();
    assert!(s.hang().is_none());
    let GoTo::Path(path) = s.go_to_hang() else {
        panic!("the flag is never set: P1 spins forever")
    };
    s.replay(&path).unwrap();
    let h = s.hang().expect("a hang");
    assert_eq!(h.kind().as_str(), "spin");
    let pic = picture::picture(s.machine(), s.current());
    let drawn = text::state(&s, &pic);
    assert!(
        drawn.contains("Hang (spin): P1 spins in the loop at `ld.acquire.gpu r0, f`: reading the latest value it must see (f=0) it goes back every time"),
        "{drawn}"
    );
    let mp = mp_relaxed();
    let v = Variants::of(&mp.program).unwrap();
    let s = Session::new(&v, options(true)).unwrap();
    assert_eq!(s.go_to_hang(), GoTo::Unreachable { since: None });
}

/// The stepping view shows the test's labels before the instructions they
/// precede, and says up front that the program can hang (exit status 5).
#[test]
fn the_step_view_shows_labels_and_the_hang() {
    let (code, out) = step_cli("litmus/liveness/Flag-never-set.litmus", "q\n");
    assert_eq!(code, 5, "{out}");
    assert!(
        out.contains(
            "  P1: running  r0=0 r1=0\n    LC10:\n    -> ld.acquire.gpu r0, f\n       beq r0, 0, LC10\n       ld.relaxed.gpu r1, x\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("\nHang: spin — P1 spins in the loop at `ld.acquire.gpu r0, f`: reading the latest value it must see (f=0) it goes back every time; every other thread has finished or is stuck too, so nothing can release it\nThis program can hang: `g hang` walks into it.\n"),
        "{out}"
    );
}

fn elect_other_lane() -> litmus::LitmusTest {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("litmus/warp/MP+elect-other-lane-leads.litmus");
    litmus::parse_file(&f).unwrap().remove(0)
}

/// `elect.sync`: a session begins with the leader step, whose transitions
/// are the candidate lanes; "go to" the stale read (reached only with lane
/// 1 elected) picks lane 1; with lane 0 picked, it is out of reach since
/// that step; undo reopens it.
#[test]
fn a_session_offers_every_elect_leader_and_goes_to_the_one_the_outcome_needs() {
    let t = elect_other_lane();
    let v = Variants::of(&t.program).unwrap();
    assert_eq!(v.programs.len(), 2);
    let mut s = Session::new(&v, options(true)).unwrap();
    assert!(s.picking_leaders());
    assert!(!s.is_final());
    let sentences: Vec<String> = s.transitions().into_iter().map(|t| t.sentence).collect();
    assert_eq!(
        sentences,
        [
            "P0,P1 `elect.sync _, r1, 0x3` leader: lane 0 (P0), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 1 of 2)",
            "P0,P1 `elect.sync _, r1, 0x3` leader: lane 1 (P1), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 2 of 2)",
        ]
    );
    // From the initial state every choice is open: the reachable outcomes
    // are `run`'s.
    let run = engine::run(&t.program, &RunOptions::default());
    assert_eq!(s.reachable().outcomes, run.outcomes);
    let stale = t.program.condition.target();
    let GoTo::Path(path) = s.go_to(&stale) else {
        panic!("the stale read is reachable");
    };
    assert_eq!(path[0], 1, "lane 1 must lead: {path:?}");
    s.replay(&path).unwrap();
    assert_eq!(
        s.leaders(),
        [
            "P0,P1 `elect.sync _, r1, 0x3` leader: lane 1 (P1), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 2 of 2)"
        ]
    );
    let finals = s.final_states().unwrap();
    assert!(finals.iter().any(|o| s.satisfies(o, &stale)));
    // Lane 0 leads: the stale read is out of reach since the leader step.
    s.restart();
    s.take(0).unwrap();
    assert!(!s.picking_leaders());
    assert_eq!(s.go_to(&stale), GoTo::Unreachable { since: Some(1) });
    assert!(s.undo());
    assert!(s.picking_leaders());
    assert!(matches!(s.go_to(&stale), GoTo::Path(_)));
    // A leader step beyond the candidates is refused like any step.
    assert_eq!(
        s.take(2).unwrap_err().to_string(),
        "expected a transition between 0 and 1, found 2"
    );
}

fn ptxmc(args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
    )
}

const ELECT: &str = "litmus/warp/MP+elect-other-lane-leads.litmus";

/// `ptxmc trace` of the stale read: its first step elects lane 1, the one
/// the outcome needs; the replay list begins with that choice.
#[test]
fn trace_shows_the_elect_leader_the_outcome_needs() {
    let (code, out) = ptxmc(&["trace", ELECT]);
    assert_eq!(code, 0, "{out}");
    let expected = "\
Trace MP+elect-other-lane-leads: a shortest run of the machine ending in 2:r0=1 /\\ 2:r1=0
  1. P0,P1 elect.sync _, r1, 0x3  leader: lane 1 (P1), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 2 of 2)
  2. P0 st.relaxed.cta x, 1    retires: the store is performed (its value is a version at the L2 coherence point)
       new version in memory: x=1 (P0 `st.relaxed.cta x, 1`)
       coherence x: 0 < 1
  3. P0 elect.sync (wait) 3    arrives at the barrier and waits for the other participants
  4. P1 elect.sync (wait) 3    arrives at the barrier and waits for the other participants
  5. P0 elect.sync (wait) 3    the barrier phase is complete: meets the other lanes; orders no memory, and goes on
  6. P0 mov r1, 0              retires (registers only)
  7. P0 beq r1, 0, END         retires (registers only)
  8. P1 elect.sync (wait) 3    the barrier phase is complete: meets the other lanes; orders no memory, and goes on
  9. P1 mov r1, 1              retires (registers only)
       registers of P1: r1=1
 10. P1 beq r1, 0, END         retires (registers only)
 11. P1 st.release.cta f, 1    retires as a release: the store is performed, and the thread's view is published for acquirers
       new version in memory: f=1 (P1 `st.release.cta f, 1`)
       coherence f: 0 < 1
 12. P2 ld.acquire.cta r0, f   reads f=1 (P1 `st.release.cta f, 1`)
 13. P2 ld.acquire.cta r0, f   retires as an acquire: takes the views published by the releases it synchronises with
       synchronises with P1 `st.release.cta f, 1`
       P2 now has in its causal past: P1 `st.release.cta f, 1`
       registers of P2: r0=1
 14. P2 ld.relaxed.cta r1, x   reads x=0 (initial)
       newer: x=1 (P0 `st.relaxed.cta x, 1`); it is not in P2's causal past
 15. P2 ld.relaxed.cta r1, x   retires: the value read is checked against what this thread's cache line must show
Final state: 0:r1=0; 1:r1=1; 2:r0=1; 2:r1=0; x=1; f=1;
Replay: ptxmc trace litmus/warp/MP+elect-other-lane-leads.litmus --follow 1,0,0,0,0,0,0,0,0,0,0,1,0,0,0
";
    assert!(out.starts_with(expected), "{out}");
    // Lane 0 elected: the replay says so, and the leader's own store is
    // released with the flag.
    let (code, out) = ptxmc(&["trace", ELECT, "--follow", "0"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("\n  1. P0,P1 elect.sync _, r1, 0x3  leader: lane 0 (P0), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 1 of 2)\n"),
        "{out}"
    );
    assert!(
        out.contains("The run has not reached a final state."),
        "{out}"
    );
    let (code, out) = ptxmc(&["trace", ELECT, "--follow", "2"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("error: expected a choice below 2 at step 1, found 2"),
        "{out}"
    );
}

/// `ptxmc explain` of the stale read names the leader its witness needs,
/// and its machine replay begins with that leader step; a forbidden
/// outcome is forbidden under each choice.
#[test]
fn explain_names_the_elect_leader_of_its_witness() {
    let (code, out) = ptxmc(&["explain", ELECT]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with(
            "\
Explain MP+elect-other-lane-leads: P2:r0 == 1 /\\ P2:r1 == 0 is allowed
Leaders: one of the 2 choices of `elect.sync` leader, one that gives it:
  P0,P1 `elect.sync _, r1, 0x3` leader: lane 1 (P1), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 2 of 2)
Axioms: a consistent execution that gives it
"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "\nMachine: a run reaches it; replay it with\n  ptxmc trace litmus/warp/MP+elect-other-lane-leads.litmus --follow 1,"
        ),
        "{out}"
    );
    let replay = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("ptxmc trace "))
        .expect("a replay command");
    let args: Vec<&str> = std::iter::once("trace")
        .chain(replay.split_whitespace())
        .collect();
    let (code, trace) = ptxmc(&args);
    assert_eq!(code, 0, "{trace}");
    assert!(
        trace.contains("Final state: 0:r1=0; 1:r1=1; 2:r0=1; 2:r1=0; x=1; f=1;\n"),
        "{trace}"
    );
    let (code, out) = ptxmc(&["explain", ELECT, "--outcome", "2:r0=1 /\\ 2:r1=2"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("\nLeaders: forbidden under each of the 2 choices of `elect.sync` leader; shown under the first:\n  P0,P1 `elect.sync _, r1, 0x3` leader: lane 0 (P0), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 1 of 2)\n"),
        "{out}"
    );
}

/// `ptxmc step`: the leader step comes first; `f` lists it and its replay
/// reaches the same final state in `trace`.
#[test]
fn step_lets_the_user_pick_the_elect_leader() {
    let (code, out) = step_cli(ELECT, "1\ng 2:r0=1 /\\ 2:r1=0\nf\nq\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "\
Pick a leader first: `elect.sync` elects the same lane of a warp for a mask at every execution, a lane the PTX ISA leaves unspecified (docs/warps.md); until then the code shows the first choice's results.
Transitions:
  [0] P0,P1 `elect.sync _, r1, 0x3` leader: lane 0 (P0), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 1 of 2)
  [1] P0,P1 `elect.sync _, r1, 0x3` leader: lane 1 (P1), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 2 of 2)
"
        ),
        "{out}"
    );
    assert!(
        out.contains("\nLeader: P0,P1 `elect.sync _, r1, 0x3` leader: lane 1 (P1), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 2 of 2)\n"),
        "{out}"
    );
    assert!(
        out.contains("\n  1. [1] P0,P1 `elect.sync _, r1, 0x3` leader: lane 1 (P1), for every execution with mask 0x3 in warp 0 of cta 0, gpu 0 (choice 2 of 2)\n"),
        "{out}"
    );
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("Replay: ptxmc "))
        .expect("a replay line");
    assert!(
        line.starts_with(&format!("trace {ELECT} --follow 1,")) && line.ends_with(" --every-step"),
        "{line}"
    );
    let args: Vec<&str> = line.split_whitespace().collect();
    let (code, trace) = ptxmc(&args);
    assert_eq!(code, 0, "{trace}");
    assert!(
        trace.contains("Final state: 0:r1=0; 1:r1=1; 2:r0=1; 2:r1=0; x=1; f=1;\n"),
        "{trace}"
    );
}

/// `trace --hang` over a choice of leaders: the run into the hang begins
/// with its leader step, and its replay list with that choice.
#[test]
fn trace_into_a_hang_begins_with_the_leader_step() {
    let (code, out) = ptxmc(&["trace", "litmus/warp/Elect-spinner.litmus", "--hang"]);
    assert_eq!(code, 5, "{out}");
    assert!(out.contains("\n  1. P0,P1 elect.sync "), "{out}");
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("Replay: ptxmc "))
        .expect("a replay line");
    let args: Vec<&str> = line.split_whitespace().collect();
    let (code, replayed) = ptxmc(&args);
    assert_eq!(code, 5, "{replayed}");
    assert!(
        replayed.contains("The run has not reached a final state."),
        "{replayed}"
    );
}

/// `ptxmc step` on `activemask`: the choice step asks how the lanes meet
/// (not for a leader), the choice made is a `Lanes together` line, a lane
/// waiting at the rendezvous is named by its instruction as written and
/// where it is written (not the resource's encoded key), and passing it
/// orders no memory.
#[test]
fn step_shows_an_activemask_rendezvous_as_its_instruction() {
    let (code, out) = step_cli("litmus/warp/Activemask-two-lanes.litmus", "1\n0\nq\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("\nPick how the lanes meet first: which lanes of a warp execute `activemask` together is the scheduler's choice, and every partition of them is a run (docs/warps.md); until then the code shows the first choice's results.\n"),
        "{out}"
    );
    assert!(!out.contains("Pick a leader"), "{out}");
    assert!(
        out.contains("\nLanes together: P0,P1 `activemask.b32 r0` lanes together: P0,P1, at its every execution in warp 0 of cta 0, gpu 0 (choice 2 of 2)\n"),
        "{out}"
    );
    assert!(!out.contains("\nLeader:"), "{out}");
    assert!(
        out.contains(
            "\nBarrier: P0 waits at `activemask.b32 r0` (line 7:2) for the lanes P0,P1 (phase 0)\n"
        ),
        "{out}"
    );
    assert!(!out.contains("waits at barrier"), "{out}");
    // The other lane's arrival completes the block; passing orders nothing.
    let (code, out) = step_cli("litmus/warp/Activemask-two-lanes.litmus", "1\n0\n0\nq\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("`activemask.b32 (rendezvous) 0x3` the barrier phase is complete: meets the other lanes; orders no memory, and goes on\n"),
        "{out}"
    );
}
