//! The operational machine's exploration: throughput on fixed tests, whole
//! suites per engine, and how time and states grow on scaling families
//! (n-reader IRIW, message passing along a chain of n CTAs, n writers to one
//! location), with and without partial-order reduction, on 1 and 2 workers.
//! The `machine-scaling/*` and `machine-random-*` groups run every family of
//! issue 15 as `ptxmc::families` writes it (IRIW, MP chain, SB ring, writers,
//! random 4×4, 3×6 and 4×5), the machine's side of `benches/oracle.rs`.
//!
//! The `termination` group times the termination check (the liveness
//! library with the check on and off, per engine) and the retry-loop
//! reduction (a three-CTA spin-lock reduced and bounded).
//!
//! `cargo bench --bench explore`; each exploration benchmark's throughput is
//! in distinct states, so criterion reports states per second. The `state`
//! group times the per-successor bookkeeping (copy, fingerprint).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::path::Path;
use std::time::Duration;

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::explore::{self, ExploreOptions};
use ptxmc::families;
use ptxmc::ir::Program;
use ptxmc::litmus;
use ptxmc::op::Machine;

fn parse(text: &str) -> Program {
    litmus::parse_source("bench.litmus", text)
        .expect("bench input parses")
        .remove(0)
        .program
}

/// The slowest random program the differential generator produced for the machine.
fn random_4x4() -> Program {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/random-4x4.litmus");
    litmus::parse_file(&file).unwrap().remove(0).program
}

fn load_dir(dir: &str, skip: &str) -> Vec<Program> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    litmus::collect_files(&[root])
        .unwrap()
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains(skip))
        .flat_map(|p| litmus::parse_file(&p).unwrap())
        .map(|t| t.program)
        .collect()
}

fn explore_states(p: &Program, por: bool, jobs: usize) -> u64 {
    let mut m = Machine::new(p, 2).unwrap();
    m.por = por;
    let r = explore::explore(
        &m,
        &ExploreOptions {
            jobs,
            ..ExploreOptions::default()
        },
    );
    r.stats.distinct_states
}

fn hot_loop(c: &mut Criterion) {
    let mut inputs: Vec<(String, Program)> = vec![
        ("random-4x4".into(), random_4x4()),
        ("IRIW-4-readers".into(), parse(&families::iriw(4))),
        ("MP-chain-7".into(), parse(&families::mp_chain(7))),
    ];
    let mut g = c.benchmark_group("machine");
    for (name, p) in inputs.drain(..) {
        let states = explore_states(&p, true, 1);
        g.throughput(Throughput::Elements(states));
        g.bench_function(name, |b| b.iter(|| explore_states(&p, true, 1)));
    }
    g.finish();
}

/// The bookkeeping every generated successor pays whatever the semantics:
/// copying a state and fingerprinting it (on the initial state of each test;
/// later states have the same size).
fn state_ops(c: &mut Criterion) {
    let inputs: Vec<(String, Program)> = vec![
        ("random-4x4".into(), random_4x4()),
        ("IRIW-7-readers".into(), parse(&families::iriw(7))),
    ];
    let mut g = c.benchmark_group("state");
    for (name, p) in &inputs {
        let m = Machine::new(p, 2).unwrap();
        let st = m.initial();
        g.bench_function(format!("{name}/clone"), |b| {
            b.iter(|| Box::new(std::hint::black_box(&st).clone()))
        });
        g.bench_function(format!("{name}/fingerprint"), |b| {
            b.iter(|| std::hint::black_box(&st).fingerprint())
        });
    }
    g.finish();
}

fn suites(c: &mut Criterion) {
    let dat3m = load_dir("tests/peers/dat3m/litmus/PTX", "/CADP/");
    let mut g = c.benchmark_group("suite");
    for (label, engine) in [
        ("op", EngineChoice::Op),
        ("ax", EngineChoice::Ax),
        ("both", EngineChoice::Both),
    ] {
        let opts = RunOptions {
            engine,
            ..RunOptions::default()
        };
        g.bench_function(format!("dat3m_non_cadp_{}_{label}", dat3m.len()), |b| {
            b.iter(|| {
                dat3m
                    .iter()
                    .map(|p| engine::run(p, &opts).outcomes.len())
                    .sum::<usize>()
            })
        });
    }
    g.finish();
}

fn termination(c: &mut Criterion) {
    let liveness = load_dir("litmus/liveness", "\u{0}");
    let mut g = c.benchmark_group("termination");
    for (label, engine) in [("op", EngineChoice::Op), ("ax", EngineChoice::Ax)] {
        for check in [true, false] {
            let opts = RunOptions {
                engine,
                termination: check,
                ..RunOptions::default()
            };
            let id = format!(
                "liveness_{}_{label}_{}",
                liveness.len(),
                if check { "checked" } else { "unchecked" }
            );
            g.bench_function(id, |b| {
                b.iter(|| {
                    liveness
                        .iter()
                        .map(|p| engine::run(p, &opts).termination.hangs() as usize)
                        .sum::<usize>()
                })
            });
        }
    }
    let lock = load_dir("litmus/liveness", "\u{0}")
        .into_iter()
        .find(|p| p.name == "Spinlock-cas-3cta")
        .expect("the spin-lock test");
    for (label, retry) in [("reduced", true), ("bound2", false)] {
        let opts = RunOptions {
            engine: EngineChoice::Op,
            retry_loops: retry,
            termination: false,
            ..RunOptions::default()
        };
        g.bench_function(format!("spinlock_3cta_op_{label}"), |b| {
            b.iter(|| engine::run(&lock, &opts).outcomes.len())
        });
    }
    g.finish();
}

fn scaling(c: &mut Criterion) {
    type Family = fn(usize) -> String;
    let families: [(&str, Family, std::ops::RangeInclusive<usize>); 3] = [
        ("iriw", families::iriw, 1..=4),
        ("mp-chain", families::mp_chain, 2..=6),
        ("writers", families::writers, 2..=5),
    ];
    for (name, make, range) in families {
        let mut g = c.benchmark_group(format!("scaling/{name}"));
        for n in range {
            let p = parse(&make(n));
            for (por, jobs) in [(true, 1), (true, 2), (false, 1), (false, 2)] {
                let states = explore_states(&p, por, jobs);
                g.throughput(Throughput::Elements(states));
                let id = format!("{}-j{jobs}", if por { "por" } else { "no-por" });
                g.bench_with_input(BenchmarkId::new(id, n), &p, |b, p| {
                    b.iter(|| explore_states(p, por, jobs))
                });
            }
        }
        g.finish();
    }
}

/// The machine on the families of issue 15 as `ptxmc::families` writes them
/// (the shapes `benches/oracle.rs` times on the oracle, and the CLI figures
/// of `docs/exploration.md`, "Lazy coherence and P2"), with every reduction
/// on: the scaling families at growing n and seeds 1–5 of the random shapes.
fn families(c: &mut Criterion) {
    type Family = fn(usize) -> String;
    let scaling: [(&str, Family, &[usize]); 4] = [
        ("iriw", families::iriw, &[2, 4, 6, 7]),
        ("mp-chain", families::mp_chain, &[2, 6, 10, 12]),
        ("sb-ring", families::sb_ring, &[2, 6, 10, 12]),
        ("writers", families::writers, &[2, 4, 6, 8]),
    ];
    for (name, make, sizes) in scaling {
        let mut g = c.benchmark_group(format!("machine-scaling/{name}"));
        for &n in sizes {
            let p = parse(&make(n));
            g.bench_with_input(BenchmarkId::from_parameter(n), &p, |b, p| {
                b.iter(|| explore_states(p, true, 1))
            });
        }
        g.finish();
    }
    for (threads, instrs) in [(4, 4), (3, 6), (4, 5)] {
        let mut g = c.benchmark_group(format!("machine-random-{threads}x{instrs}"));
        for seed in 1..=5u64 {
            let p = parse(&families::random(seed, threads, instrs));
            g.bench_with_input(BenchmarkId::from_parameter(seed), &p, |b, p| {
                b.iter(|| explore_states(p, true, 1))
            });
        }
        g.finish();
    }
}

/// Past the plain width (issue 27, no event cap): `families::wide_mp` at
/// 129, 605 and 2,001 events, through `engine::run`, which sizes the
/// machine's event sets to the program. Throughput counts distinct states.
fn wide(c: &mut Criterion) {
    let mut g = c.benchmark_group("machine-wide-mp");
    let opts = ptxmc::engine::RunOptions {
        engine: ptxmc::engine::EngineChoice::Op,
        jobs: 1,
        ..Default::default()
    };
    for n in [62, 300, 998] {
        let p = parse(&families::wide_mp(n));
        let states = |p: &Program| {
            let r = ptxmc::engine::run(p, &opts);
            assert!(r.incomplete.is_none(), "{n}: {:?}", r.incomplete);
            r.stats.op.expect("the machine ran").distinct_states
        };
        g.throughput(Throughput::Elements(states(&p)));
        g.bench_with_input(BenchmarkId::from_parameter(2 * n + 5), &p, |b, p| {
            b.iter(|| states(p))
        });
    }
    g.finish();
}

/// Issue 27's thread families, termination check included, through
/// `engine::run` (`--engine op`): the CTA barrier
/// (`families::cta_barrier`), the grid barrier with `red` arrivals
/// (`families::grid_barrier`), the counter (`families::counter`; with
/// symmetry and symmetric choices, and at 6 threads also `-no-choices`,
/// symmetry alone) and the TMA pipeline of S stages × R rounds
/// (`families::pipeline`), at sizes that finish in a bench; the grid barrier also without P3
/// (`-no-p3`, `docs/exploration.md`, "P3"). Throughput counts distinct machine states; each size's
/// count is printed once (`docs/exploration.md`, "Threads at one barrier").
fn issue27(c: &mut Criterion) {
    let mut g = c.benchmark_group("machine-issue27");
    // (spin persistence, symmetric choices)
    let opts = |(spin_persistent, symmetric_choices): (bool, bool)| ptxmc::engine::RunOptions {
        engine: ptxmc::engine::EngineChoice::Op,
        jobs: 1,
        spin_persistent,
        symmetric_choices,
        ..Default::default()
    };
    let grid = |n: usize, p3: bool| {
        let name = format!("grid-red-{n}{}", if p3 { "" } else { "-no-p3" });
        (
            name,
            families::grid_barrier(n, families::Arrival::Red),
            (p3, true),
        )
    };
    let counter = |n: usize, choices: bool| {
        let name = format!("counter-{n}{}", if choices { "" } else { "-no-choices" });
        (name, families::counter(n), (true, choices))
    };
    let cases: Vec<(String, String, (bool, bool))> = [8, 32, 64]
        .into_iter()
        .map(|n| {
            (
                format!("barrier-{n}"),
                families::cta_barrier(n),
                (true, true),
            )
        })
        .chain(
            [3, 4]
                .into_iter()
                .flat_map(|n| [grid(n, true), grid(n, false)]),
        )
        .chain([counter(4, true), counter(6, true), counter(6, false)])
        .chain([counter(8, true), counter(12, true), counter(16, true)])
        .chain([(2, 1), (2, 2)].into_iter().map(|(s, r)| {
            (
                format!("pipeline-{s}x{r}"),
                families::pipeline(s, r),
                (true, true),
            )
        }))
        .chain([(2, 8), (2, 32)].into_iter().map(|(w, l)| {
            (
                format!("warp-barriers-{w}x{l}"),
                families::warp_barriers(w, l, w),
                (true, true),
            )
        }))
        .collect();
    for (name, text, how) in cases {
        let p = parse(&text);
        let opts = opts(how);
        let count = |p: &Program| {
            let r = ptxmc::engine::run(p, &opts);
            assert!(r.incomplete.is_none(), "{name}: {:?}", r.incomplete);
            r.stats.op.expect("the machine ran").distinct_states
        };
        let n = count(&p);
        eprintln!("machine-issue27 {name}: {n} distinct machine states");
        g.throughput(criterion::Throughput::Elements(n));
        g.bench_with_input(BenchmarkId::from_parameter(&name), &p, |b, p| {
            b.iter(|| count(p))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = hot_loop, state_ops, suites, termination, scaling, families, wide, issue27
}
criterion_main!(benches);
