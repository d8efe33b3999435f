//! No fixed event cap (issue 27): executions past 128 events, up to and
//! beyond 2,000, run in both engines with the same, complete outcomes; past
//! the widest event sets a build holds, the run ends with an explicit
//! incomplete verdict, never an error. The family is
//! [`ptxmc::families::wide_mp`]: `2n + 5` events, five final states, a
//! forbidden condition.

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::{families, litmus};

fn parse(text: &str) -> ptxmc::ir::Program {
    litmus::parse_source("wide.litmus", text)
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
        .remove(0)
        .program
}

fn run(p: &ptxmc::ir::Program, engine: EngineChoice) -> engine::RunResult {
    engine::run(
        p,
        &RunOptions {
            engine,
            ..RunOptions::default()
        },
    )
}

/// Both engines, each alone and together: complete, five outcomes, the
/// condition never holds, no disagreement.
fn agree(n: usize) {
    let p = parse(&families::wide_mp(n));
    let events = p.locations.len() + (n + 1) + 3;
    assert_eq!(events, 2 * n + 5);
    let mut sets = Vec::new();
    for e in [EngineChoice::Op, EngineChoice::Ax, EngineChoice::Both] {
        let r = run(&p, e);
        assert_eq!(r.incomplete, None, "n={n} ({events} events), {e:?}");
        assert!(r.disagreement.is_none(), "n={n}: {:?}", r.disagreement);
        assert_eq!(r.outcomes.len(), 5, "n={n} ({events} events), {e:?}");
        assert_eq!(
            (r.verdict.positive, r.verdict.negative, r.verdict.holds),
            (0, 5, false),
            "n={n}, {e:?}"
        );
        assert!(!r.bound_hit);
        sets.push(r.outcomes);
    }
    assert_eq!(sets[0], sets[1], "n={n}: op and ax outcome sets");
}

#[test]
fn both_engines_agree_past_128_events() {
    // 127 events (the plain width), 129 (the first past it), and widths
    // further up the ladder.
    for n in [61, 62, 70, 300] {
        agree(n);
    }
}

#[test]
fn both_engines_agree_on_2000_events() {
    agree(998);
}

#[test]
fn past_the_widest_sets_the_run_is_incomplete_not_an_error() {
    let n = ptxmc::rel::MAX_EVENTS / 2;
    let p = parse(&families::wide_mp(n));
    let op = run(&p, EngineChoice::Op);
    assert_eq!(
        op.incomplete.as_deref(),
        Some(
            format!(
                "operational engine: the test needs more than {} event slots (the widest event sets this build holds)",
                ptxmc::rel::MAX_EVENTS
            )
            .as_str()
        )
    );
    let ax = run(&p, EngineChoice::Ax);
    assert_eq!(
        ax.incomplete.as_deref(),
        Some(
            format!(
                "axiomatic engine: an execution has more than {} events (the widest event sets this build holds)",
                ptxmc::rel::MAX_EVENTS
            )
            .as_str()
        )
    );
    assert!(op.outcomes.is_empty() && ax.outcomes.is_empty());
}

#[test]
fn explanations_walk_candidates_past_128_events() {
    use ptxmc::ax::{self, AxOptions};
    use ptxmc::explain::axiomatic::{self, AxVerdict, Caps};
    use ptxmc::explain::enumerate::{self, Limits};
    for n in [62, 300] {
        let p = parse(&families::wide_mp(n));
        // The literal checker of the axioms lists the oracle's outcomes.
        let oracle = ax::run(&p, &AxOptions::default()).unwrap();
        let lowered = ptxmc::model::lower::lower(&p, AxOptions::default().loop_bound);
        let mine = enumerate::outcomes(&lowered, &Limits::default()).unwrap();
        assert_eq!(mine, oracle.outcomes, "n={n}");
        assert_eq!(mine.len(), 5, "n={n}");
        // The condition (flag seen, last payload store not) is forbidden,
        // every candidate for it rejected by an axiom.
        let e = axiomatic::explain(&p, &p.condition.prop, &Limits::default(), Caps::default());
        assert!(
            matches!(e.verdict, AxVerdict::Forbidden { .. }),
            "n={n}: {:?}",
            e.verdict
        );
        assert!(e.candidates > 0, "n={n}");
        // Both explanations: the machine's is built at the width its slots
        // need too, and agrees (no run reaches the outcome).
        let t = litmus::parse_source("wide.litmus", &families::wide_mp(n))
            .unwrap()
            .remove(0);
        let both = ptxmc::explain::explain_outcome(
            &t,
            "wide.litmus",
            &p.condition.prop,
            &Limits::default(),
            Caps::default(),
            1_000_000,
        );
        assert!(
            matches!(
                both.op,
                Some(ptxmc::explain::operational::OpExplanation::Blocked { .. })
            ),
            "n={n}: {:?}",
            both.op
        );
        assert!(!both.disagreement() && !both.incomplete(), "n={n}");
    }
}

#[test]
fn trace_and_step_run_past_128_slots() {
    // `trace` and `step` build their session's machine at the width the
    // program needs (they refused 129 slots before).
    let dir = std::env::temp_dir().join(format!("ptxmc-wide-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("wide.litmus");
    std::fs::write(&file, families::wide_mp(70)).unwrap();
    let run = |args: &[&str], stdin: &str| {
        use std::io::Write;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ptxmc"))
            .args(args)
            .arg(&file)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    // No run reaches the condition's outcome: exit 1, as for any test.
    let trace = run(&["trace"], "");
    let text = String::from_utf8_lossy(&trace.stdout);
    assert_eq!(trace.status.code(), Some(1), "{text}");
    assert!(
        text.contains("No run of the machine ends in 1:r0=1 /\\ 1:r2=0"),
        "{text}"
    );
    let step = run(&["step"], "q\n");
    let text = String::from_utf8_lossy(&step.stdout);
    assert!(step.status.success(), "{text}");
    assert!(text.contains("== MP-wide-70 after 0 steps =="), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
