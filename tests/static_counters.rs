//! The oracle's counters read off the paths (`docs/oracle.md`, "Spinning on
//! a counter") keep every answer: with and without them the oracle gives the
//! same final states, loop-bound flag, termination verdict (the hang itself
//! included) and undefined behaviour on every litmus test of the library and
//! of Dat3M's suite, every corpus kernel, the grid barrier family and
//! seeded random programs that spin on counters; and they pay on the grid
//! barrier.

mod same_answers;

use std::path::{Path, PathBuf};

use ptxmc::ax::counters::Counters;
use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::families::{self, Arrival};
use ptxmc::ir::Program;
use ptxmc::{litmus, ptx};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn ax(static_counters: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Ax,
        static_counters,
        ..RunOptions::default()
    }
}

/// Runs `p` both ways; returns the termination search's nodes with and
/// without the counters, then all the oracle's nodes with and without.
fn same_both_ways(name: &str, p: &Program) -> (u64, u64, u64, u64) {
    let a = engine::run(p, &ax(true));
    let b = engine::run(p, &ax(false));
    same_answers::assert_same(name, &a, &b, true);
    let term = |r: &engine::RunResult| r.stats.ax_termination.map_or(0, |s| s.nodes);
    let all = |r: &engine::RunResult| term(r) + r.stats.ax.map_or(0, |s| s.nodes);
    (term(&a), term(&b), all(&a), all(&b))
}

#[test]
fn static_counters_keep_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let (mut n, mut paid) = (0, 0);
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            let (_, _, with, without) = same_both_ways(&t.display_path(), &t.program);
            paid += usize::from(with < without);
            n += 1;
        }
    }
    assert!(n > 900, "{n} tests");
    // The library's grid barriers and counters spin on counters.
    assert!(paid >= 2, "{paid} tests searched less");
}

#[test]
fn static_counters_keep_every_answer_of_the_kernels_with_a_counter() {
    let mut n = 0;
    for dir in ["kernels", "kernels/scale"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "ptx") {
                continue;
            }
            let t =
                ptx::load_file(&path, None, None).unwrap_or_else(|e| panic!("{}", e.rendered()));
            // Without a counter the oracle runs the same code either way
            // (`Counters::new` is `None`); the others are run both ways.
            let lowered = ptxmc::model::lower::lowered(&t.program, 2);
            if Counters::new(&lowered).is_none() {
                continue;
            }
            same_both_ways(&path.display().to_string(), &t.program);
            n += 1;
        }
    }
    assert!(n >= 2, "{n} kernels with a counter");
}

#[test]
fn static_counters_keep_every_answer_of_the_grid_barrier_and_pay() {
    for arrival in [Arrival::Red, Arrival::Atom] {
        for n in 1..=5 {
            let text = families::grid_barrier(n, arrival);
            let t = &litmus::parse_source("grid.litmus", &text).unwrap()[0];
            let (with, without, _, _) = same_both_ways(&format!("{arrival:?}-{n}"), &t.program);
            // Every spinning combination is left out; without the counters
            // each of the 2^n - 1 is searched.
            assert_eq!(with, 0, "{arrival:?}-{n}");
            if n >= 2 {
                assert!(without > 0, "{arrival:?}-{n}");
            }
        }
    }
}

/// A grid barrier with one thread that never arrives hangs, and both ways
/// name the same hang: the counter's final value keeps the others spinning.
#[test]
fn a_grid_barrier_short_of_one_arrival_still_hangs() {
    let text = families::grid_barrier(3, Arrival::Red).replacen(
        " red.release.gpu.add count, 1 |",
        " add r0, r0, 1 |",
        1,
    );
    let t = &litmus::parse_source("grid.litmus", &text).unwrap()[0];
    same_both_ways("short grid", &t.program);
    let r = engine::run(&t.program, &RunOptions::default());
    assert!(r.disagreement.is_none());
    assert!(r.termination.hangs(), "{text}");
}

/// Seeded random programs of 2–3 threads over a counter `c` (additions of
/// constants by `red` and `atom`, spins until it reads a value, or while it
/// reads one) and a flag `x`, sometimes with a store to `c` or a weak
/// access that makes it no counter: the same answers both ways, and the
/// machine agrees.
#[test]
fn static_counters_keep_every_answer_of_random_counter_programs() {
    use rand_core::{Rng, SeedableRng};
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(0x00c0_0273);
    let (mut hangs, mut terminates, mut paid) = (0, 0, 0);
    for case in 0..300 {
        let mut pick = |n: u32| (rng.next_u32() % n) as i64;
        let threads = 2 + pick(2) as usize;
        let mut cols = Vec::new();
        for t in 0..threads {
            let mut code = Vec::new();
            for k in 0..1 + pick(3) {
                let sem = ["relaxed", "release", "acq_rel"][pick(3) as usize];
                match pick(7) {
                    0 | 1 => code.push(format!("red.{sem}.gpu.add c, {}", 1 + pick(2))),
                    2 => code.push(format!("atom.{sem}.gpu.add r{k}, c, 1")),
                    3 | 4 => {
                        let want = pick(4);
                        let b = ["bne", "beq"][pick(2) as usize];
                        code.push(format!("LC{t}{k}:"));
                        code.push(format!("ld.acquire.gpu r{}, c", 10 + k));
                        code.push(format!("{b} r{}, {want}, LC{t}{k}", 10 + k));
                    }
                    5 => code.push(format!("st.relaxed.gpu x, {}", 1 + k)),
                    _ => match pick(8) {
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
            "PTX counters-{case}\n{{ c=0; x=0; }}\n{}exists (c == 2)\n",
            litmus::print::table(&headers, &cols)
        );
        let t = &litmus::parse_source("counters.litmus", &text)
            .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()))[0];
        let (_, _, with, without) = same_both_ways(&text, &t.program);
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
    assert!(paid > 30, "{paid} programs searched less");
}
