//! The two engines agree on random programs of programmatic dependent launch
//! (`docs/griddep.md`): two to four threads, each in a CTA of its own of the
//! primary grid (grid 0) or of its dependent (grid 1), issuing plain and
//! release/acquire accesses, `fence.acq_rel.gpu`, `griddepcontrol.wait` and
//! `griddepcontrol.launch_dependents`, must give the same outcomes,
//! termination verdict and undefined-behaviour verdict under the
//! operational machine and the axiomatic oracle (thread 0 is of the
//! primary grid, thread 1 of the dependent one). A dependent's write before
//! its first `griddepcontrol.wait` goes to a location of its own (`z`, `g`):
//! the writes the primary could see are refused by name (`model::griddep`),
//! and every generated program must be admitted. 150 programs by default,
//! 1,500 with `PTXMC_DEEP=1` (`PTXMC_GRIDDEP_CASES` for any other number),
//! drawn with a fixed seed.

use proptest::prelude::*;
use std::fmt::Write;

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::explore::Limits;
use ptxmc::litmus;

/// One item of a random thread.
#[derive(Clone, Debug)]
enum Item {
    /// `st.weak x|y, v`.
    St { y: bool, v: u8 },
    /// `ld.weak r, x|y`.
    Ld { y: bool },
    /// `st.release.gpu f, 1`.
    Release,
    /// `ld.acquire.gpu r, f`.
    Acquire,
    /// `fence.acq_rel.gpu`.
    Fence,
    /// `griddepcontrol.wait`.
    Wait,
    /// `griddepcontrol.launch_dependents`.
    Launch,
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        3 => (any::<bool>(), 1..3u8).prop_map(|(y, v)| Item::St { y, v }),
        3 => any::<bool>().prop_map(|y| Item::Ld { y }),
        1 => Just(Item::Release),
        1 => Just(Item::Acquire),
        1 => Just(Item::Fence),
        3 => Just(Item::Wait),
        1 => Just(Item::Launch),
    ]
}

/// Threads: (in the dependent grid, items). Thread 0 is of the primary
/// grid and thread 1 of the dependent one; the others of either.
fn program() -> impl Strategy<Value = Vec<(bool, Vec<Item>)>> {
    proptest::collection::vec(
        (any::<bool>(), proptest::collection::vec(item(), 1..=4)),
        2..=4,
    )
    .prop_map(|mut threads| {
        threads[0].0 = false;
        threads[1].0 = true;
        threads
    })
}

/// The litmus text: thread `i` in CTA `i`, of grid 1 when it is dependent.
/// A dependent thread's writes before its first `griddepcontrol.wait` go to
/// `z` (plain) and `g` (the flag), which the primary grid never accesses.
fn render(threads: &[(bool, Vec<Item>)]) -> String {
    let mut s = String::from("PTX random-griddep\n{\nx=0; y=0; z=0; f=0; g=0;\n}\n");
    let header: Vec<String> = threads
        .iter()
        .enumerate()
        .map(|(i, (dep, _))| {
            if *dep {
                format!("P{i}@cta {i},grid 1,gpu 0")
            } else {
                format!("P{i}@cta {i},gpu 0")
            }
        })
        .collect();
    let cells: Vec<Vec<String>> = threads
        .iter()
        .map(|(dep, items)| {
            let mut r = 0;
            let mut reg = || {
                r += 1;
                format!("r{}", r - 1)
            };
            // Before its first wait, a dependent writes only its own locations.
            let mut own = *dep;
            let mut out = Vec::new();
            for it in items {
                out.push(match *it {
                    Item::St { y, v } => {
                        let loc = if own {
                            "z"
                        } else if y {
                            "y"
                        } else {
                            "x"
                        };
                        format!("st.weak {loc}, {v}")
                    }
                    Item::Ld { y } => format!("ld.weak {}, {}", reg(), if y { "y" } else { "x" }),
                    Item::Release => format!("st.release.gpu {}, 1", if own { "g" } else { "f" }),
                    Item::Acquire => format!("ld.acquire.gpu {}, f", reg()),
                    Item::Fence => "fence.acq_rel.gpu".into(),
                    Item::Wait => {
                        own = false;
                        "griddepcontrol.wait".into()
                    }
                    Item::Launch => "griddepcontrol.launch_dependents".into(),
                });
            }
            out
        })
        .collect();
    s.push_str(&litmus::print::table(&header, &cells));
    s.push_str("exists (0 == 0)\n");
    s
}

/// `n` values of `strategy` drawn with a fixed seed.
fn sample<S: Strategy>(strategy: S, seed: u64, n: usize) -> impl Iterator<Item = S::Value> {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngSeed, TestRunner};
    let mut runner = TestRunner::new(Config {
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    });
    (0..n).map(move |_| strategy.new_tree(&mut runner).unwrap().current())
}

/// Random griddep programs: both engines give the same outcomes (`--engine
/// both` reports any difference), and each engine alone the same
/// termination and undefined-behaviour verdicts. The sample must be worth
/// something: a quarter of the programs or more have a dependent thread that
/// waits for a primary that writes, and a fifth or more several final
/// states.
#[test]
fn engines_agree_on_random_griddep_programs() {
    let deep = std::env::var("PTXMC_DEEP").is_ok_and(|v| v == "1");
    let cases: usize = std::env::var("PTXMC_GRIDDEP_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if deep { 1500 } else { 150 });
    let limits = Limits {
        max_states: Some(3_000_000),
        timeout: Some(std::time::Duration::from_secs(30)),
        max_memory: Some(4 << 30),
    };
    let (mut checked, mut several, mut waiting, mut skipped) = (0, 0, 0, 0);
    for threads in sample(program(), 0x009d_1de9, cases) {
        let text = render(&threads);
        let tests = litmus::parse_source("random.litmus", &text)
            .unwrap_or_else(|e| panic!("generated test does not parse:\n{}\n{text}", e.rendered()));
        let t = &tests[0];
        if let Err(d) = ptxmc::model::Model::default().admit(&t.program, &t.spans) {
            panic!("generated test refused:\n{}\n{text}", t.error(d).rendered());
        }
        let p = &t.program;
        let run = |engine| {
            engine::run(
                p,
                &RunOptions {
                    engine,
                    limits,
                    ..RunOptions::default()
                },
            )
        };
        let both = run(EngineChoice::Both);
        if both.incomplete.is_some() {
            skipped += 1;
            continue;
        }
        if let Some(d) = &both.disagreement {
            panic!(
                "engines disagree on\n{text}\nonly operational: {:?}\nonly axiomatic: {:?}",
                d.only_op, d.only_ax
            );
        }
        let (op, ax) = (run(EngineChoice::Op), run(EngineChoice::Ax));
        assert_eq!(
            op.undefined, ax.undefined,
            "undefined behaviour differs on\n{text}"
        );
        assert_eq!(
            (op.termination.checked(), op.termination.hangs()),
            (ax.termination.checked(), ax.termination.hangs()),
            "termination differs on\n{text}"
        );
        checked += 1;
        several += usize::from(both.outcomes.len() > 1);
        let primary_writes = threads
            .iter()
            .any(|(dep, items)| !dep && items.iter().any(|i| matches!(i, Item::St { .. })));
        let dependent_waits = threads
            .iter()
            .any(|(dep, items)| *dep && items.iter().any(|i| matches!(i, Item::Wait)));
        waiting += usize::from(primary_writes && dependent_waits);
    }
    let mut said = String::new();
    writeln!(
        said,
        "checked {checked}, skipped {skipped}, several outcomes {several}, a dependent waits for a writing primary {waiting}"
    )
    .unwrap();
    eprint!("{said}");
    assert!(checked * 10 >= cases * 9, "{said}");
    assert!(several * 5 >= checked, "{said}");
    assert!(waiting * 4 >= checked, "{said}");
}
