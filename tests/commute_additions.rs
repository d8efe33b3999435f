//! The machine's commuting additions (`docs/exploration.md`, "Commuting
//! additions in the machine": the seen-set remembers a state up to the
//! order of a commuting counter's chain of additions) keep every answer:
//! with and without them the machine gives the same final states, loop-bound
//! flag, termination verdict (the hang itself included) and undefined
//! behaviour — listed in full and projected on the condition, where the
//! tickets of `atom`s may be forgotten too — on every litmus test of the
//! library and of Dat3M's suite and every corpus kernel the reduction
//! applies to, on the grid barrier family (both arrivals) and on seeded
//! random programs that add to and spin on counters around releases,
//! acquires and fences (where the oracle agrees as well); and it pays on
//! the grid barrier.

mod same_answers;

use std::path::{Path, PathBuf};

use ptxmc::engine::{self, EngineChoice, Projection, RunOptions, RunResult};
use ptxmc::families::{self, Arrival};
use ptxmc::ir::Program;
use ptxmc::op::Machine;
use ptxmc::{litmus, ptx};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn op(commute_additions: bool, project: Projection) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Op,
        commute_additions,
        project,
        jobs: 1,
        ..RunOptions::default()
    }
}

/// How many commuting counters the machine finds in `p` (with the
/// registers a projection on the condition leaves out as unobserved).
fn counters(p: &Program, project: Projection) -> usize {
    let Ok(mut m) = Machine::new(p, RunOptions::default().loop_bound) else {
        return 0;
    };
    let observed: Vec<Vec<bool>> = if project.projects() {
        ptxmc::outcome::observed_regs(p)
    } else {
        p.threads.iter().map(|t| vec![true; t.regs.len()]).collect()
    };
    m.commute_additions(&observed);
    m.commuting.as_ref().map_or(0, |c| c.counters())
}

fn states(r: &RunResult) -> u64 {
    r.stats.op.expect("the machine ran").distinct_states
}

/// Runs `p` with and without the reduction (listing `project`); asserts
/// the same answers. Returns the states stored with and without.
fn same_both_ways(name: &str, p: &Program, project: Projection) -> (u64, u64) {
    let a = engine::run(p, &op(true, project));
    let b = engine::run(p, &op(false, project));
    same_answers::assert_same(name, &a, &b, true);
    assert_eq!(a.verdict, b.verdict, "{name}: verdict changed");
    assert!(
        states(&a) <= states(&b),
        "{name}: {} states with, {} without",
        states(&a),
        states(&b)
    );
    (states(&a), states(&b))
}

fn parse(text: &str) -> Program {
    litmus::parse_source("commute.litmus", text)
        .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()))
        .remove(0)
        .program
}

/// Every test of the library and of Dat3M's suite with a commuting
/// counter, both ways, listed in full and projected. (Where the machine
/// finds none the two runs are the same run.)
#[test]
fn commuting_additions_keep_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let (mut n, mut applied) = (0, 0);
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            n += 1;
            for project in [Projection::All, Projection::Condition] {
                if counters(&t.program, project) > 0 {
                    same_both_ways(&t.display_path(), &t.program, project);
                    applied += 1;
                }
            }
        }
    }
    assert!(n > 900, "{n} tests");
    // The library's grid barrier (`litmus/liveness/Grid-barrier`: `atom`s
    // whose tickets its condition does not read, so projected only).
    assert!(applied >= 1, "{applied} runs with a commuting counter");
}

/// Every corpus kernel with a commuting counter, both ways.
#[test]
fn commuting_additions_keep_every_answer_of_the_kernels() {
    let mut n = 0;
    for dir in ["kernels", "kernels/scale"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "ptx") {
                continue;
            }
            let t =
                ptx::load_file(&path, None, None).unwrap_or_else(|e| panic!("{}", e.rendered()));
            n += 1;
            for project in [Projection::All, Projection::Memory] {
                if counters(&t.program, project) > 0 {
                    same_both_ways(&path.display().to_string(), &t.program, project);
                }
            }
        }
    }
    assert!(n >= 10, "{n} kernels");
}

/// The grid barrier: the same answers both ways, one final machine state
/// per run instead of one per order of the arrivals, and polynomially many
/// states. `atom` tickets are forgotten only when the projection leaves
/// them out.
#[test]
fn commuting_additions_keep_every_answer_of_the_grid_barrier_and_pay() {
    for n in 1..=5 {
        for arrival in [Arrival::Red, Arrival::Atom] {
            let p = parse(&families::grid_barrier(n, arrival));
            for project in [Projection::All, Projection::Condition] {
                let name = format!("grid-{arrival:?}-{n}-{project:?}");
                let applies = n >= 2 && (arrival == Arrival::Red || project.projects());
                assert_eq!(counters(&p, project), usize::from(applies), "{name}");
                let (with, without) = same_both_ways(&name, &p, project);
                if applies && n >= 3 {
                    assert!(with * 2 < without, "{name}: {with} vs {without}");
                }
                if !applies {
                    assert_eq!(with, without, "{name}");
                }
            }
        }
    }
    // Out of reach before (n! orders): 8 CTAs, and the oracle agrees.
    for arrival in [Arrival::Red, Arrival::Atom] {
        let p = parse(&families::grid_barrier(8, arrival));
        let r = engine::run(
            &p,
            &RunOptions {
                project: Projection::Condition,
                ..RunOptions::default()
            },
        );
        assert!(r.incomplete.is_none(), "{arrival:?}-8: incomplete");
        assert!(
            r.disagreement.is_none(),
            "{arrival:?}-8: the engines disagree"
        );
        assert_eq!(r.outcomes.len(), 1, "{arrival:?}-8");
        assert!(states(&r) < 20_000, "{arrival:?}-8: {} states", states(&r));
    }
}

/// The same answers for any number of workers (which state of a class is
/// expanded first may differ; what is found may not).
#[test]
fn commuting_additions_are_deterministic_across_workers() {
    let p = parse(&families::grid_barrier(5, Arrival::Atom));
    let run = |jobs| {
        engine::run(
            &p,
            &RunOptions {
                jobs,
                ..op(true, Projection::Condition)
            },
        )
    };
    let (a, b) = (run(1), run(2));
    same_answers::assert_same("grid-atom-5, 1 and 2 workers", &a, &b, true);
    assert_eq!(states(&a), states(&b));
}

/// Seeded random programs of 2–4 threads over a counter `c` that every
/// thread's spin waits to reach its total (additions of 1 or 2 by `red`
/// and `atom` of every semantics, the `atom`s' tickets unread), beside a
/// flag `x` and payload `y` passed by release and acquire (so that an
/// addition may follow an acquire of another thread's addition, and its
/// speculative issue may be out of order with it), fences and a final read
/// of the payload. Both ways, in full and projected; the oracle agrees.
#[test]
fn commuting_additions_keep_every_answer_of_random_counter_programs() {
    use rand_core::{Rng, SeedableRng};
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(0x00c0_5e77);
    let (mut applied, mut paid, mut hangs) = (0, 0, 0);
    for case in 0..200 {
        let mut pick = |n: u32| (rng.next_u32() % n) as i64;
        let threads = 2 + pick(3) as usize;
        let mut cols: Vec<Vec<String>> = Vec::new();
        let mut total = 0;
        let mut spins = Vec::new();
        for t in 0..threads {
            let mut code = Vec::new();
            for k in 0..1 + pick(3) {
                let sem = ["relaxed", "release", "acq_rel", "acquire"][pick(4) as usize];
                match pick(8) {
                    0..=2 => {
                        let c = 1 + pick(2);
                        total += c;
                        let sem = if sem == "acq_rel" || sem == "acquire" {
                            "release"
                        } else {
                            sem
                        };
                        code.push(format!("red.{sem}.gpu.add c, {c}"));
                    }
                    3 => {
                        total += 1;
                        code.push(format!("atom.{sem}.gpu.add r{k}, c, 1"));
                    }
                    4 => {
                        code.push(format!("st.weak y, {}", 1 + t));
                        code.push("st.release.gpu x, 1".to_string());
                    }
                    5 => code.push(format!("ld.acquire.gpu r{}, x", 20 + k)),
                    6 => code.push("fence.acq_rel.gpu".to_string()),
                    _ => code.push(format!("ld.weak r{}, y", 30 + k)),
                }
            }
            // The spin, mostly last; before some of the thread's own
            // additions it never leaves (a hang the runs must agree on).
            if pick(3) > 0 {
                let at = if pick(4) == 0 {
                    pick(code.len() as u32 + 1) as usize
                } else {
                    code.len()
                };
                spins.push(t);
                let sem = ["relaxed", "acquire"][pick(2) as usize];
                let spin = [
                    format!("LC{t}:"),
                    format!("ld.{sem}.gpu r9, c"),
                    format!("bne r9, TOTAL, LC{t}"),
                    "ld.weak r8, y".to_string(),
                ];
                code.splice(at..at, spin);
            }
            cols.push(code);
        }
        for code in &mut cols {
            for i in code.iter_mut() {
                *i = i.replace("TOTAL", &total.to_string());
            }
        }
        let headers: Vec<String> = (0..threads)
            .map(|t| format!("P{t}@cta {t},cluster 0,gpu 0"))
            .collect();
        let cond = match spins.first() {
            Some(t) => format!("P{t}:r8 == 0"),
            None => "c == 2".to_string(),
        };
        let text = format!(
            "PTX commute-{case}\n{{ c=0; x=0; y=0; }}\n{}exists ({cond})\n",
            litmus::print::table(&headers, &cols)
        );
        let p = parse(&text);
        for project in [Projection::All, Projection::Condition] {
            if counters(&p, project) == 0 {
                continue;
            }
            applied += 1;
            let (with, without) = same_both_ways(&text, &p, project);
            paid += usize::from(with < without);
        }
        let r = engine::run(
            &p,
            &RunOptions {
                project: Projection::Condition,
                ..RunOptions::default()
            },
        );
        assert!(r.disagreement.is_none(), "{text}");
        assert!(r.incomplete.is_none(), "{text}");
        hangs += usize::from(r.termination.hangs());
    }
    assert!(hangs > 5, "{hangs} programs hang");
    assert!(applied > 60, "{applied} runs with a commuting counter");
    assert!(paid > 30, "{paid} runs stored fewer states");
}
