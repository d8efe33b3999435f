//! The oracle's interchangeable adders (`docs/oracle.md`, "Interchangeable
//! adders") keep every answer: with and without them the oracle gives the
//! same final states, loop-bound flag, termination verdict, undefined
//! behaviour and races on every litmus test of the library and of Dat3M's
//! suite, the counter and grid barrier families, and seeded random programs
//! of copies of an adder beside observers (where the machine must agree
//! too); and they pay on the counter family.

mod same_answers;

use std::path::{Path, PathBuf};

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::families::{self, Arrival};
use ptxmc::ir::Program;
use ptxmc::litmus;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn ax(twin_adders: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Ax,
        twin_adders,
        ..RunOptions::default()
    }
}

/// Runs `p` both ways; returns the oracle's nodes with and without.
fn same_both_ways(name: &str, p: &Program) -> (u64, u64) {
    let a = engine::run(p, &ax(true));
    let b = engine::run(p, &ax(false));
    same_answers::assert_same(name, &a, &b, true);
    let nodes = |r: &engine::RunResult| r.stats.ax.map_or(0, |s| s.nodes);
    (nodes(&a), nodes(&b))
}

fn parse(text: &str) -> Program {
    litmus::parse_source("t.litmus", text)
        .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()))
        .remove(0)
        .program
}

#[test]
fn twin_adders_keep_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let mut n = 0;
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            same_both_ways(&t.display_path(), &t.program);
            n += 1;
        }
    }
    assert!(n > 900, "{n} tests");
}

/// The counter's writers but the first are twins: the reader's count is
/// searched against one set of writers per size, not every subset.
#[test]
fn twin_adders_keep_every_answer_of_the_families_and_pay() {
    for n in 2..=9 {
        let p = parse(&families::counter(n));
        let (with, without) = same_both_ways(&format!("counter-{n}"), &p);
        if n >= 4 {
            assert!(with < without, "counter-{n}: {with} {without}");
        }
        assert_eq!(
            engine::run(&p, &ax(true)).outcomes.len(),
            2 * n - 1,
            "counter-{n}"
        );
    }
    for n in 1..=4 {
        for arrival in [Arrival::Red, Arrival::Atom] {
            let p = parse(&families::grid_barrier(n, arrival));
            let (with, without) = same_both_ways(&format!("grid {arrival:?}-{n}"), &p);
            // Each CTA reads another's slot: no twins, nothing changes.
            assert_eq!(with, without, "grid {arrival:?}-{n}");
        }
    }
    // Out of reach before (2^31 sets of writers): polynomial now.
    let r = engine::run(&parse(&families::counter(24)), &ax(true));
    assert!(r.incomplete.is_none());
    assert_eq!(r.outcomes.len(), 47);
    let nodes = r.stats.ax.unwrap().nodes;
    assert!(nodes < 200_000, "{nodes} nodes at 24 threads");
}

/// Seeded random programs: 2–4 copies of a random adder (a constant stored
/// to a slot of its own, then one `red` of a random semantics, scope and
/// constant to `c`), placed in CTAs of their own or sharing one, beside 1–2
/// observers that read `c` (relaxed, acquiring, or spinning until a value)
/// and some adders' slots (weak, or after a fence), so that some adders are
/// twins and some are told apart. The same answers both ways, and the
/// machine agrees.
#[test]
fn twin_adders_keep_every_answer_of_random_programs() {
    use rand_core::{Rng, SeedableRng};
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(0x7_2717);
    let (mut paid, mut cases) = (0, 0);
    for case in 0..160 {
        let mut pick = |n: u32| (rng.next_u32() % n) as i64;
        let copies = 2 + pick(3) as usize;
        let observers = 1 + pick(2) as usize;
        let sem = ["relaxed", "release"][pick(2) as usize];
        let scope = ["gpu", "sys", "cta"][pick(3) as usize];
        let add = 1 + pick(2);
        let odd = pick(3) == 0; // one copy adds another constant
        let mut cols = Vec::new();
        let mut headers = Vec::new();
        let shared_cta = pick(4) == 0;
        for i in 0..copies {
            let k = if odd && i == copies - 1 { add + 1 } else { add };
            cols.push(vec![
                format!("st.weak s{i}, {}", 1 + pick(3)),
                format!("red.{sem}.{scope}.add c, {k}"),
            ]);
            let cta = if shared_cta && i < 2 { 0 } else { i };
            headers.push(format!("P{i}@cta {cta},cluster 0,gpu 0"));
        }
        for o in 0..observers {
            let t = copies + o;
            let mut code = Vec::new();
            for k in 0..1 + pick(3) {
                match pick(6) {
                    0 => code.push(format!("ld.relaxed.gpu r{k}, c")),
                    1 => code.push(format!("ld.acquire.gpu r{k}, c")),
                    2 => {
                        let want = pick(3) * add;
                        code.push(format!("LC{t}{k}:"));
                        code.push(format!("ld.acquire.gpu r{k}, c"));
                        code.push(format!("bne r{k}, {want}, LC{t}{k}"));
                    }
                    3 => code.push("fence.sc.gpu".to_string()),
                    _ => code.push(format!("ld.weak r{}, s{}", 10 + k, pick(copies as u32))),
                }
            }
            cols.push(code);
            headers.push(format!("P{t}@cta {},cluster 0,gpu 0", 10 + o));
        }
        let init: String = (0..copies).map(|i| format!("s{i}=0; ")).collect();
        let text = format!(
            "PTX twins-{case}\n{{ c=0; {init}}}\n{}exists (c == {})\n",
            litmus::print::table(&headers, &cols),
            add * copies as i64
        );
        let p = parse(&text);
        let (with, without) = same_both_ways(&text, &p);
        paid += usize::from(with < without);
        let r = engine::run(&p, &RunOptions::default());
        assert!(r.disagreement.is_none(), "{text}");
        assert!(r.incomplete.is_none(), "{text}");
        cases += 1;
    }
    assert_eq!(cases, 160);
    assert!(paid > 20, "{paid} programs searched less");
}
