//! The axiomatic oracle: whole suites (the public Dat3M PTX suite without the
//! CADP liveness tests, the project's litmus library), a fixed set of seeded
//! random tests of the shapes issue 15 measured (4 threads × 5 instructions,
//! 3 × 6), and the scaling families of `ptxmc::families` at growing n.
//!
//! `cargo bench --bench oracle`. Per-test medians and maxima over 20 seeds,
//! and where the families cross 1 s and 10 s, come from
//! `cargo run --release --example oracle_times` (`docs/oracle.md`).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use ptxmc::ax::{self, AxOptions};
use ptxmc::families;
use ptxmc::ir::Program;
use ptxmc::litmus;

fn load(dir: &str, skip: &str) -> Vec<Program> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    litmus::collect_files(&[root])
        .expect("suite is readable")
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains(skip))
        .flat_map(|p| litmus::parse_file(&p).expect("suite parses"))
        .map(|t| t.program)
        .collect()
}

fn parse(text: &str) -> Program {
    litmus::parse_source("bench.litmus", text)
        .expect("generated tests parse")
        .remove(0)
        .program
}

/// The number of outcomes, so that the work cannot be optimised away.
fn outcomes(p: &Program) -> usize {
    ax::run(black_box(p), &AxOptions::default())
        .expect("within the oracle's structural limits")
        .outcomes
        .len()
}

fn suites(c: &mut Criterion) {
    let dat3m = load("tests/peers/dat3m/litmus/PTX", "/CADP/");
    let library = load("litmus", "\u{0}");
    let mut g = c.benchmark_group("oracle");
    g.bench_function(format!("dat3m_ptx_non_cadp_{}_tests", dat3m.len()), |b| {
        b.iter(|| dat3m.iter().map(outcomes).sum::<usize>())
    });
    g.bench_function(format!("litmus_library_{}_tests", library.len()), |b| {
        b.iter(|| library.iter().map(outcomes).sum::<usize>())
    });
    g.finish();
}

/// Seeds 1–5 of each shape: a fixed, reproducible sample (the 20-seed
/// figures come from the `oracle_times` example).
fn random(c: &mut Criterion) {
    for (threads, instrs) in [(3, 6), (4, 5)] {
        let mut g = c.benchmark_group(format!("oracle-random-{threads}x{instrs}"));
        for seed in 1..=5u64 {
            let p = parse(&families::random(seed, threads, instrs));
            g.bench_with_input(BenchmarkId::from_parameter(seed), &p, |b, p| {
                b.iter(|| outcomes(p))
            });
        }
        g.finish();
    }
}

fn scaling(c: &mut Criterion) {
    type Family = fn(usize) -> String;
    let families: [(&str, Family, std::ops::RangeInclusive<usize>); 4] = [
        ("iriw", families::iriw, 2..=6),
        ("mp-chain", families::mp_chain, 2..=7),
        ("sb-ring", families::sb_ring, 2..=7),
        ("writers", families::writers, 2..=6),
    ];
    for (name, make, range) in families {
        let mut g = c.benchmark_group(format!("oracle-scaling/{name}"));
        for n in range {
            let p = parse(&make(n));
            g.bench_with_input(BenchmarkId::from_parameter(n), &p, |b, p| {
                b.iter(|| outcomes(p))
            });
        }
        g.finish();
    }
}

/// Past the plain width (issue 27, no event cap): `families::wide_mp` at
/// 129, 605 and 2,001 events; each candidate's event sets are as wide as its
/// events need. Throughput counts search nodes.
fn wide(c: &mut Criterion) {
    let mut g = c.benchmark_group("oracle-wide-mp");
    for n in [62, 300, 998] {
        let p = parse(&families::wide_mp(n));
        let nodes = ax::run(&p, &AxOptions::default())
            .expect("no event cap")
            .stats
            .nodes;
        g.throughput(criterion::Throughput::Elements(nodes));
        g.bench_with_input(BenchmarkId::from_parameter(2 * n + 5), &p, |b, p| {
            b.iter(|| outcomes(p))
        });
    }
    g.finish();
}

/// Issue 27's thread families, termination check included, through
/// `engine::run` (`--engine ax`): the CTA barrier
/// (`families::cta_barrier`), the grid barrier with `red` arrivals
/// and `atom` arrivals (`families::grid_barrier`) and the counter
/// (`families::counter`) and the TMA pipeline of S stages × R rounds
/// (`families::pipeline`), at sizes that finish in a bench. Throughput counts search nodes (outcome and termination searches together); each size's
/// count is printed once (`docs/exploration.md`, "Threads at one barrier").
fn issue27(c: &mut Criterion) {
    let mut g = c.benchmark_group("oracle-issue27");
    let opts = ptxmc::engine::RunOptions {
        engine: ptxmc::engine::EngineChoice::Ax,
        jobs: 1,
        ..Default::default()
    };
    let cases: Vec<(String, String)> = [8, 32, 64]
        .into_iter()
        .map(|n| (format!("barrier-{n}"), families::cta_barrier(n)))
        .chain([3, 4, 5, 8, 16].into_iter().map(|n| {
            (
                format!("grid-red-{n}"),
                families::grid_barrier(n, families::Arrival::Red),
            )
        }))
        .chain([4].into_iter().map(|n| {
            (
                format!("grid-atom-{n}"),
                families::grid_barrier(n, families::Arrival::Atom),
            )
        }))
        .chain(
            [4, 6, 8]
                .into_iter()
                .map(|n| (format!("counter-{n}"), families::counter(n))),
        )
        .chain(
            [(2, 1), (2, 2)]
                .into_iter()
                .map(|(s, r)| (format!("pipeline-{s}x{r}"), families::pipeline(s, r))),
        )
        .chain([(2, 8), (2, 32)].into_iter().map(|(w, l)| {
            (
                format!("warp-barriers-{w}x{l}"),
                families::warp_barriers(w, l, w),
            )
        }))
        .collect();
    for (name, text) in cases {
        let p = parse(&text);
        let count = |p: &Program| {
            let r = ptxmc::engine::run(p, &opts);
            assert!(r.incomplete.is_none(), "{name}: {:?}", r.incomplete);
            r.stats.ax.map_or(0, |s| s.nodes) + r.stats.ax_termination.map_or(0, |s| s.nodes)
        };
        let n = count(&p);
        let r = ptxmc::engine::run(&p, &opts);
        eprintln!(
            "oracle-issue27 {name}: {n} search nodes ({} outcome, {} chains left out as commuting, {} termination in {} path combinations)",
            r.stats.ax.map_or(0, |s| s.nodes),
            r.stats.ax.map_or(0, |s| s.pruned_commuted),
            r.stats.ax_termination.map_or(0, |s| s.nodes),
            r.stats.ax_termination.map_or(0, |s| s.path_combinations),
        );
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
    targets = suites, random, scaling, wide, issue27
}
criterion_main!(benches);
