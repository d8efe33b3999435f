//! The oracle's commuting additions (`docs/oracle.md`, "Commuting
//! additions") keep every answer: with and without them the oracle gives
//! the same final states, loop-bound flag, termination verdict (the hang
//! itself included), undefined behaviour and races on every litmus test of
//! the library and of Dat3M's suite, every corpus kernel with a counter, the
//! grid barrier and counter families and seeded random programs that add
//! to and read counters (where the machine must agree too); and they pay on
//! the families.

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

fn ax(commute_counters: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Ax,
        commute_counters,
        ..RunOptions::default()
    }
}

/// Runs `p` both ways; returns the outcome search's nodes with and without
/// the reduction, and how many candidates it left out.
fn same_both_ways(name: &str, p: &Program) -> (u64, u64, u64) {
    let a = engine::run(p, &ax(true));
    let b = engine::run(p, &ax(false));
    same_answers::assert_same(name, &a, &b, true);
    let nodes = |r: &engine::RunResult| r.stats.ax.map_or(0, |s| s.nodes);
    let pruned = |r: &engine::RunResult| r.stats.ax.map_or(0, |s| s.pruned_commuted);
    assert_eq!(pruned(&b), 0, "{name}: pruned with the reduction off");
    (nodes(&a), nodes(&b), pruned(&a))
}

#[test]
fn commuting_additions_keep_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let (mut n, mut paid) = (0, 0);
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            let (with, without, _) = same_both_ways(&t.display_path(), &t.program);
            paid += usize::from(with < without);
            n += 1;
        }
    }
    assert!(n > 900, "{n} tests");
    // The library's grid barriers add to a counter that only spins read.
    assert!(paid >= 1, "{paid} tests searched less");
}

#[test]
fn commuting_additions_keep_every_answer_of_the_kernels_with_a_counter() {
    let mut n = 0;
    for dir in ["kernels", "kernels/scale"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "ptx") {
                continue;
            }
            let t =
                ptx::load_file(&path, None, None).unwrap_or_else(|e| panic!("{}", e.rendered()));
            // Without a counter the reduction has nothing to bind.
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

/// `red` arrivals commute (one chain of the `n!` is searched); `atom`
/// arrivals do not (each ticket lands in a register of the final state),
/// so the atom family searches every order either way.
#[test]
fn commuting_additions_keep_every_answer_of_the_families_and_pay() {
    for n in 1..=5 {
        for arrival in [Arrival::Red, Arrival::Atom] {
            let text = families::grid_barrier(n, arrival);
            let t = &litmus::parse_source("grid.litmus", &text).unwrap()[0];
            let (with, without, pruned) =
                same_both_ways(&format!("grid {arrival:?}-{n}"), &t.program);
            match arrival {
                Arrival::Red if n >= 3 => {
                    assert!(
                        pruned > 0 && with < without,
                        "{arrival:?}-{n}: {with} {without}"
                    )
                }
                Arrival::Atom => assert_eq!(pruned, 0, "{arrival:?}-{n}"),
                _ => {}
            }
        }
    }
    for n in 2..=7 {
        let text = families::counter(n);
        let t = &litmus::parse_source("counter.litmus", &text).unwrap()[0];
        let (with, without, _) = same_both_ways(&format!("counter-{n}"), &t.program);
        if n >= 4 {
            assert!(with < without, "counter-{n}: {with} {without}");
        }
    }
    // The grid barrier's red chain is searched once: its nodes grow
    // polynomially, not as n!.
    let text = families::grid_barrier(10, Arrival::Red);
    let t = &litmus::parse_source("grid.litmus", &text).unwrap()[0];
    let r = engine::run(&t.program, &ax(true));
    assert!(r.incomplete.is_none());
    assert_eq!(r.outcomes.len(), 1);
    let nodes = r.stats.ax.unwrap().nodes;
    assert!(nodes < 10_000, "{nodes} nodes at 10 CTAs");
}

/// Seeded random programs of 2–4 threads over a counter `c` (additions of
/// constants by `red` and `atom` of every semantics, some after an
/// acquiring load or a fence that makes them not commute, relaxed and
/// acquiring reads and spins on `c`) and a flag `x` with a weak payload
/// `y`: the same answers both ways, and the machine agrees.
#[test]
fn commuting_additions_keep_every_answer_of_random_counter_programs() {
    use rand_core::{Rng, SeedableRng};
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(0x00c0_3375);
    let mut paid = 0;
    for case in 0..300 {
        let mut pick = |n: u32| (rng.next_u32() % n) as i64;
        let threads = 2 + pick(3) as usize;
        let mut cols = Vec::new();
        for t in 0..threads {
            let mut code = Vec::new();
            for k in 0..1 + pick(3) {
                let sem = ["relaxed", "release", "acq_rel"][pick(3) as usize];
                match pick(9) {
                    0..=2 => code.push(format!("red.{sem}.gpu.add c, {}", 1 + pick(2))),
                    3 => code.push(format!("atom.{sem}.gpu.add r{k}, c, 1")),
                    4 => {
                        let want = 1 + pick(4);
                        code.push(format!("LC{t}{k}:"));
                        code.push(format!("ld.acquire.gpu r{}, c", 10 + k));
                        code.push(format!("bne r{}, {want}, LC{t}{k}", 10 + k));
                    }
                    5 => {
                        let s = ["relaxed", "acquire"][pick(2) as usize];
                        code.push(format!("ld.{s}.gpu r{}, c", 10 + k));
                    }
                    6 => {
                        code.push(format!("st.weak y, {}", 1 + t));
                        code.push("st.release.gpu x, 1".to_string());
                    }
                    7 => code.push(format!("ld.acquire.gpu r{}, x", 20 + k)),
                    _ => match pick(3) {
                        0 => code.push("fence.acq_rel.gpu".to_string()),
                        _ => code.push(format!("ld.weak r{}, y", 30 + k)),
                    },
                }
            }
            cols.push(code);
        }
        let headers: Vec<String> = (0..threads)
            .map(|t| format!("P{t}@cta {t},cluster 0,gpu 0"))
            .collect();
        let text = format!(
            "PTX commute-{case}\n{{ c=0; x=0; y=0; }}\n{}exists (c == 2)\n",
            litmus::print::table(&headers, &cols)
        );
        let t = &litmus::parse_source("commute.litmus", &text)
            .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()))[0];
        let (_, _, pruned) = same_both_ways(&text, &t.program);
        paid += usize::from(pruned > 0);
        let r = engine::run(&t.program, &RunOptions::default());
        assert!(r.disagreement.is_none(), "{text}");
        assert!(r.incomplete.is_none(), "{text}");
    }
    assert!(paid > 30, "{paid} programs searched less");
}
