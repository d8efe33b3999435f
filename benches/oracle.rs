//! The axiomatic oracle over whole suites: the public Dat3M PTX suite
//! (without the CADP liveness tests) and the project's litmus library.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;

use ptxmc::ax::{self, AxOptions};
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

fn suites(c: &mut Criterion) {
    let dat3m = load("tests/peers/dat3m/litmus/PTX", "/CADP/");
    let library = load("litmus", "\u{0}");
    let opts = AxOptions::default();
    let mut g = c.benchmark_group("oracle");
    g.bench_function(format!("dat3m_ptx_non_cadp_{}_tests", dat3m.len()), |b| {
        b.iter(|| {
            dat3m
                .iter()
                .map(|p| ax::run(black_box(p), &opts).unwrap().outcomes.len())
                .sum::<usize>()
        })
    });
    g.bench_function(format!("litmus_library_{}_tests", library.len()), |b| {
        b.iter(|| {
            library
                .iter()
                .map(|p| ax::run(black_box(p), &opts).unwrap().outcomes.len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, suites);
criterion_main!(benches);
