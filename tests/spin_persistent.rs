//! P3 (`docs/exploration.md`, "P3": P2 takes the binds of a thread at a spin
//! loop's load alone when no hang witness can leave it spinning there) keeps
//! every answer of the machine: with and without it the same final states,
//! loop-bound flag, termination verdict (the hang itself included) and
//! undefined behaviour on every litmus test of the library and of Dat3M's
//! suite, every corpus kernel, the grid barrier family and seeded random
//! programs that spin on counters and flags; and it pays on the grid barrier.

mod same_answers;

use std::path::{Path, PathBuf};

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::families::{self, Arrival};
use ptxmc::ir::Program;
use ptxmc::{litmus, ptx};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn op(spin_persistent: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Op,
        spin_persistent,
        ..RunOptions::default()
    }
}

/// Runs `p` both ways; returns the machine's distinct states with and
/// without P3.
fn same_both_ways(name: &str, p: &Program) -> (u64, u64) {
    let a = engine::run(p, &op(true));
    let b = engine::run(p, &op(false));
    same_answers::assert_same(name, &a, &b, false);
    let states = |r: &engine::RunResult| r.stats.op.map_or(0, |s| s.distinct_states);
    (states(&a), states(&b))
}

/// Distinct states summed over tests, with and without P3. (On one test P3
/// may store more: the thread P2 takes alone can differ.)
#[derive(Debug, Default)]
struct Totals {
    with: u64,
    without: u64,
}

impl std::ops::AddAssign<(u64, u64)> for Totals {
    fn add_assign(&mut self, (with, without): (u64, u64)) {
        self.with += with;
        self.without += without;
    }
}

#[test]
fn spin_persistence_keeps_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let (mut n, mut paid) = (0, 0);
    let mut total = Totals::default();
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            let (with, without) = same_both_ways(&t.display_path(), &t.program);
            total += (with, without);
            paid += usize::from(with < without);
            n += 1;
        }
    }
    assert!(n > 900, "{n} tests");
    assert!(total.with < total.without, "{total:?}");
    // The library's grid barriers and flag spins settle before they are read.
    assert!(paid >= 2, "{paid} tests stored fewer states");
}

#[test]
fn spin_persistence_keeps_every_answer_of_the_kernels() {
    let mut n = 0;
    for dir in ["kernels", "kernels/scale"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "ptx") {
                continue;
            }
            let t =
                ptx::load_file(&path, None, None).unwrap_or_else(|e| panic!("{}", e.rendered()));
            same_both_ways(&path.display().to_string(), &t.program);
            n += 1;
        }
    }
    assert!(n >= 10, "{n} kernels");
}

#[test]
fn spin_persistence_keeps_every_answer_of_the_grid_barrier_and_pays() {
    for arrival in [Arrival::Red, Arrival::Atom] {
        for n in 1..=4 {
            let text = families::grid_barrier(n, arrival);
            let t = &litmus::parse_source("grid.litmus", &text).unwrap()[0];
            let (with, without) = same_both_ways(&format!("{arrival:?}-{n}"), &t.program);
            if n >= 3 {
                assert!(with < without, "{arrival:?}-{n}: {with} vs {without}");
            }
        }
    }
}

/// A grid barrier with one thread that never arrives hangs, with and
/// without P3, and the same hang is named: the counter never reaches the
/// value the others wait for, so P3 never takes their spins alone.
#[test]
fn a_grid_barrier_short_of_one_arrival_still_hangs() {
    let text = families::grid_barrier(3, Arrival::Red).replacen(
        " red.release.gpu.add count, 1 |",
        " add r0, r0, 1 |",
        1,
    );
    let t = &litmus::parse_source("grid.litmus", &text).unwrap()[0];
    same_both_ways("short grid", &t.program);
    let r = engine::run(&t.program, &op(true));
    assert!(r.termination.hangs(), "{text}");
}

/// Seeded random programs of 2–3 threads over a counter `c` (additions of
/// constants by `red` and `atom`, stores) and a flag `x`, with spins until
/// or while a location reads a value: the same answers both ways, and the
/// oracle agrees with the machine.
#[test]
fn spin_persistence_keeps_every_answer_of_random_spinning_programs() {
    use rand_core::{Rng, SeedableRng};
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(0x0005_9173);
    let (mut hangs, mut terminates, mut paid) = (0, 0, 0);
    let mut total = Totals::default();
    for case in 0..300 {
        let mut pick = |n: u32| (rng.next_u32() % n) as i64;
        let threads = 2 + pick(2) as usize;
        let mut cols = Vec::new();
        for t in 0..threads {
            let mut code = Vec::new();
            for k in 0..1 + pick(3) {
                let sem = ["relaxed", "release", "acq_rel"][pick(3) as usize];
                match pick(8) {
                    0 | 1 => code.push(format!("red.{sem}.gpu.add c, {}", 1 + pick(2))),
                    2 => code.push(format!("atom.{sem}.gpu.add r{k}, c, 1")),
                    3 | 4 => {
                        let want = pick(4);
                        let b = ["bne", "beq"][pick(2) as usize];
                        let loc = ["c", "x"][pick(2) as usize];
                        let ld = ["ld.acquire.gpu", "ld.relaxed.gpu", "ld.weak"][pick(3) as usize];
                        code.push(format!("LC{t}{k}:"));
                        code.push(format!("{ld} r{}, {loc}", 10 + k));
                        code.push(format!("{b} r{}, {want}, LC{t}{k}", 10 + k));
                    }
                    5 | 6 => code.push(format!("st.release.gpu x, {}", 1 + pick(3))),
                    _ => match pick(4) {
                        0 => code.push("st.relaxed.gpu c, 1".to_string()),
                        1 => code.push(format!("ld.weak r{}, c", 20 + k)),
                        _ => code.push(format!("ld.acquire.gpu r{}, x", 20 + k)),
                    },
                }
            }
            cols.push(code);
        }
        let headers: Vec<String> = (0..threads)
            .map(|t| format!("P{t}@cta {t},cluster 0,gpu 0"))
            .collect();
        let text = format!(
            "PTX spins-{case}\n{{ c=0; x=0; }}\n{}exists (c == 2)\n",
            litmus::print::table(&headers, &cols)
        );
        let t = &litmus::parse_source("spins.litmus", &text)
            .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()))[0];
        let (with, without) = same_both_ways(&text, &t.program);
        total += (with, without);
        paid += usize::from(with < without);
        let r = engine::run(&t.program, &RunOptions::default());
        assert!(r.disagreement.is_none(), "{text}");
        assert!(r.incomplete.is_none(), "{text}");
        if r.termination.hangs() {
            hangs += 1;
        } else {
            terminates += 1;
        }
    }
    assert!(
        hangs > 30 && terminates > 30,
        "{hangs} hang, {terminates} terminate"
    );
    assert!(paid > 30, "{paid} programs stored fewer states");
    assert!(total.with < total.without, "{total:?}");
}
