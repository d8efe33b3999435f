//! `ptxmc gen` on the default vocabulary: enumerating and naming the cycles,
//! building the tests, and classifying them with both engines (one worker,
//! so that the figure is per core).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use ptxmc::engine::{self, RunOptions};
use ptxmc::generate::{self, GenOptions, vocab};

fn default_vocabulary(c: &mut Criterion) {
    let v = vocab::builtin("default").expect("built in");
    let mut g = c.benchmark_group("gen");
    g.sample_size(10);
    for size in [5, 6] {
        g.bench_function(format!("plan_default_size_{size}"), |b| {
            b.iter(|| {
                generate::plan(black_box(&v), &GenOptions::all(size))
                    .unwrap()
                    .cycles
                    .len()
            })
        });
    }
    let plan = generate::plan(&v, &GenOptions::all(5)).unwrap();
    g.bench_function(
        format!("build_default_size_5_{}_tests", plan.cycles.len()),
        |b| {
            b.iter(|| {
                plan.cycles
                    .iter()
                    .map(|(_, c)| generate::build::build(black_box(c)).unwrap().text.len())
                    .sum::<usize>()
            })
        },
    );
    let tests = generate::build_all(&plan.cycles).unwrap();
    let opts = RunOptions::default();
    g.bench_function(
        format!("classify_both_default_size_5_{}_tests", tests.len()),
        |b| {
            b.iter(|| {
                tests
                    .iter()
                    .filter(|t| engine::run(black_box(&t.program), &opts).verdict.holds)
                    .count()
            })
        },
    );
    g.finish();
}

criterion_group!(benches, default_vocabulary);
criterion_main!(benches);
