//! Symmetry reduction (`docs/exploration.md`, "Symmetry": the machine
//! remembers one state per permutation of interchangeable threads and
//! expands the final states found to their orbits) keeps every answer of
//! the machine: with and without it the same final states, loop-bound flag,
//! termination verdict and undefined behaviour on every litmus test of the
//! library and of Dat3M's suite, every corpus kernel, the scaling families
//! and seeded random programs built of interchangeable threads; and it pays
//! on the counter family.

use std::path::{Path, PathBuf};

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::families::{self, Arrival};
use ptxmc::ir::Program;
use ptxmc::{litmus, ptx};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn op(symmetry: bool) -> RunOptions {
    RunOptions {
        engine: EngineChoice::Op,
        symmetry,
        ..RunOptions::default()
    }
}

/// What a run with symmetry stored and did, against a run without.
struct Paid {
    /// Distinct states with symmetry (and symmetric choices).
    with: u64,
    /// Distinct states without symmetry.
    without: u64,
    /// Threads in groups.
    symmetric: u64,
    /// Transitions with symmetric choices, and with symmetry alone.
    transitions: u64,
    transitions_all_choices: u64,
}

/// Runs `p` three ways — without symmetry, with symmetry offering every
/// choice (`symmetric_choices` off), and with both reductions — (each with
/// `opts` changed by `tweak`); asserts the same answers.
fn same_both_ways_with(name: &str, p: &Program, tweak: impl Fn(&mut RunOptions)) -> Paid {
    let (mut on, mut off, mut all) = (op(true), op(false), op(true));
    all.symmetric_choices = false;
    tweak(&mut on);
    tweak(&mut off);
    tweak(&mut all);
    let a = engine::run(p, &on);
    let b = engine::run(p, &off);
    let c = engine::run(p, &all);
    for (x, how) in [(&a, "symmetric choices"), (&c, "every choice")] {
        assert!(
            x.incomplete.is_none() && b.incomplete.is_none(),
            "{name}: incomplete"
        );
        assert_eq!(x.outcomes, b.outcomes, "{name} ({how}): outcomes changed");
        assert_eq!(
            x.bound_hit, b.bound_hit,
            "{name} ({how}): bound flag changed"
        );
        assert_eq!(
            x.termination, b.termination,
            "{name} ({how}): termination changed"
        );
        assert_eq!(
            x.undefined, b.undefined,
            "{name} ({how}): undefined changed"
        );
        assert_eq!(x.verdict, b.verdict, "{name} ({how}): verdict changed");
    }
    let sa = a.stats.op.expect("the machine ran");
    let sb = b.stats.op.expect("the machine ran");
    let sc = c.stats.op.expect("the machine ran");
    assert_eq!(sb.symmetric_threads, 0, "{name}");
    assert_eq!(sa.symmetric_threads, sc.symmetric_threads, "{name}");
    Paid {
        with: sa.distinct_states,
        without: sb.distinct_states,
        symmetric: sa.symmetric_threads,
        transitions: sa.transitions,
        transitions_all_choices: sc.transitions,
    }
}

fn same_both_ways(name: &str, p: &Program) -> Paid {
    same_both_ways_with(name, p, |_| {})
}

fn parse(text: &str) -> Program {
    litmus::parse_source("sym.litmus", text)
        .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()))
        .remove(0)
        .program
}

#[test]
fn symmetry_keeps_every_answer_of_the_litmus_library() {
    let dirs = [
        root().join("litmus"),
        root().join("tests/peers/dat3m/litmus/PTX"),
    ];
    let (mut n, mut grouped, mut paid) = (0, 0, 0);
    for f in litmus::collect_files(&dirs).unwrap() {
        for t in litmus::parse_file(&f).unwrap() {
            let r = same_both_ways(&t.display_path(), &t.program);
            grouped += usize::from(r.symmetric > 0);
            paid += usize::from(r.with < r.without);
            assert!(r.with <= r.without, "{}", t.display_path());
            n += 1;
        }
    }
    assert!(n > 900, "{n} tests");
    // IRIW-like tests with two identical writers, 2+2W and the like.
    assert!(grouped >= 10, "{grouped} tests had a group");
    assert!(paid >= 5, "{paid} tests stored fewer states");
}

#[test]
fn symmetry_keeps_every_answer_of_the_kernels() {
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
fn symmetry_keeps_every_answer_of_the_families() {
    for n in 2..=6 {
        same_both_ways(&format!("barrier-{n}"), &parse(&families::cta_barrier(n)));
        same_both_ways(&format!("sb-{n}"), &parse(&families::sb_ring(n)));
        same_both_ways(&format!("writers-{n}"), &parse(&families::writers(n)));
    }
    for n in 1..=4 {
        for arrival in [Arrival::Red, Arrival::Atom] {
            same_both_ways(
                &format!("grid-{arrival:?}-{n}"),
                &parse(&families::grid_barrier(n, arrival)),
            );
        }
    }
    for seed in 1..=5 {
        same_both_ways(
            &format!("random-{seed}"),
            &parse(&families::random(seed, 3, 4)),
        );
    }
}

/// The counter family: writers 1.. are interchangeable (each stores a slot
/// nobody reads, then adds to the counter); the answers are the same, the
/// states fall from `n!`-like to polynomial, and the exact seen-set and two
/// workers agree.
#[test]
fn symmetry_pays_on_the_counter_family() {
    let mut last = 0;
    for n in 3..=7 {
        let p = parse(&families::counter(n));
        let r = same_both_ways(&format!("counter-{n}"), &p);
        // Writers 1.. form the group (writer 0's slot is read); one alone is none.
        let grouped = if n >= 4 { n - 2 } else { 0 };
        assert_eq!(r.symmetric, grouped as u64, "counter-{n}");
        if n >= 5 {
            assert!(
                r.with * 4 < r.without,
                "counter-{n}: {} vs {}",
                r.with,
                r.without
            );
        }
        last = r.with;
        same_both_ways_with(&format!("counter-{n} exact"), &p, |o| o.exact = true);
        same_both_ways_with(&format!("counter-{n} jobs 2"), &p, |o| o.jobs = 2);
    }
    assert!(last > 0);
    // Symmetric choices: from a state where `k` writers wait at their
    // addition alike, one is offered, and one per forwarding chain.
    for n in 6..=7 {
        let r = same_both_ways(&format!("counter-{n}"), &parse(&families::counter(n)));
        assert!(
            r.transitions * 2 < r.transitions_all_choices,
            "counter-{n}: {} vs {} transitions",
            r.transitions,
            r.transitions_all_choices
        );
    }
    // Past the unreduced machine's reach: the oracle agrees.
    for n in [10, 12] {
        let r = engine::run(
            &parse(&families::counter(n)),
            &RunOptions {
                engine: EngineChoice::Both,
                ..RunOptions::default()
            },
        );
        assert!(r.incomplete.is_none(), "counter-{n}");
        assert!(r.disagreement.is_none(), "counter-{n}");
        assert_eq!(r.outcomes.len(), 2 * n - 1, "counter-{n}");
    }
    // 2n - 1 final states (7 at n = 4, 15 at n = 8, as the unreduced machine
    // finds), at a size the unreduced machine takes 259,325 states for.
    let r = engine::run(&parse(&families::counter(8)), &op(true));
    assert!(r.incomplete.is_none());
    assert_eq!(r.outcomes.len(), 2 * 8 - 1);
    assert!(!r.verdict.holds);
    assert!(r.stats.op.unwrap().distinct_states < 1_000);
}

/// A group whose members have registers and private slots in the final
/// states: every permutation of their columns is listed, relabelled.
#[test]
fn orbits_move_registers_and_relabel_private_slots() {
    let text = "PTX Sym-regs\n{ x=0; a=0; b=0; c=0; }\n\
        P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 | P2@cta 2,cluster 0,gpu 0 | P3@cta 3,cluster 0,gpu 0 ;\n\
        st.relaxed.gpu a, 5 | st.relaxed.gpu b, 6 | st.relaxed.gpu c, 7 | st.relaxed.gpu x, 1 ;\n\
        ld.relaxed.gpu r0, x | ld.relaxed.gpu r0, x | ld.relaxed.gpu r0, x | st.relaxed.gpu x, 2 ;\n\
        exists (P0:r0 == 1 /\\ P1:r0 == 2)\n";
    let p = parse(text);
    let r = same_both_ways("regs", &p);
    assert_eq!(r.symmetric, 3);
    assert!(r.with < r.without, "{} vs {}", r.with, r.without);
    let run = engine::run(&p, &op(true));
    // Each reader reads 0, 1 or 2: 27 final states.
    assert_eq!(run.outcomes.len(), 27);
    let both = engine::run(
        &p,
        &RunOptions {
            engine: EngineChoice::Both,
            ..RunOptions::default()
        },
    );
    assert!(both.disagreement.is_none());
}

/// Groups are refused where a member's slot is read, or the slots are
/// written from registers, or the threads sit differently: nothing is
/// reduced, and the answers stay.
#[test]
fn no_group_where_threads_are_told_apart() {
    let cases = [
        // P2 reads P0's slot.
        "PTX No-1\n{ a=0; b=0; }\nP0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 | P2@cta 2,cluster 0,gpu 0 ;\n\
         st.relaxed.gpu a, 1 | st.relaxed.gpu b, 2 | ld.relaxed.gpu r0, a ;\nexists (P2:r0 == 1)\n",
        // P0 and P1 share a CTA, P2 is elsewhere: they stand to it alike, but P0 and P2 do not stand to P1 alike.
        "PTX No-2\n{ a=0; b=0; c=0; }\nP0@cta 0,cluster 0,gpu 0 | P1@cta 0,cluster 0,gpu 0 | P2@cta 1,cluster 0,gpu 0 ;\n\
         st.relaxed.gpu a, 1 | st.relaxed.gpu b, 1 | st.relaxed.gpu c, 1 ;\nexists (a == 1)\n",
    ];
    for text in cases {
        let p = parse(text);
        let r = same_both_ways(text, &p);
        assert!(r.symmetric < 3, "{text}");
    }
    // The first: P0 is read, P1 alone is left: no group at all.
    assert_eq!(same_both_ways("no-1", &parse(cases[0])).symmetric, 0);
}

/// Seeded random programs of `k` copies of a random worker (loads and
/// stores of shared `x` and `y`, stores of constants to a slot of its own,
/// which the copies number differently) beside a random observer: the same
/// answers both ways, the oracle agrees, and most store fewer states.
#[test]
fn symmetry_keeps_every_answer_of_random_symmetric_programs() {
    use rand_core::{Rng, SeedableRng};
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(0x5e11_a7e5);
    let (mut paid, mut grouped) = (0, 0);
    for case in 0..120 {
        let mut pick = |n: u32| (rng.next_u32() % n) as i64;
        let k = 2 + pick(2) as usize;
        let len = 1 + pick(3) as usize;
        let mut worker = Vec::new();
        for j in 0..len {
            let sem = ["relaxed", "release", "acquire"][pick(3) as usize];
            let loc = ["x", "y"][pick(2) as usize];
            worker.push(match pick(5) {
                0 | 1 => format!(
                    "ld.{}.gpu r{j}, {loc}",
                    if sem == "release" { "relaxed" } else { sem }
                ),
                2 => format!(
                    "st.{}.gpu {loc}, {}",
                    if sem == "acquire" { "relaxed" } else { sem },
                    1 + pick(2)
                ),
                3 => format!(
                    "red.{}.gpu.add {loc}, 1",
                    if sem == "acquire" { "relaxed" } else { sem }
                ),
                _ => "SLOT".to_string(),
            });
        }
        let mut cols: Vec<Vec<String>> = (0..k)
            .map(|i| {
                worker
                    .iter()
                    .enumerate()
                    .map(|(j, w)| {
                        if w == "SLOT" {
                            format!("st.weak s{i}, {}", 10 * i + j + 1)
                        } else {
                            w.clone()
                        }
                    })
                    .collect()
            })
            .collect();
        let observer: Vec<String> = (0..1 + pick(2))
            .map(|j| {
                let loc = ["x", "y"][pick(2) as usize];
                match pick(3) {
                    0 => format!("st.release.gpu {loc}, 3"),
                    _ => format!("ld.acquire.gpu r{j}, {loc}"),
                }
            })
            .collect();
        cols.push(observer);
        let one_cta = pick(2) == 0;
        let headers: Vec<String> = (0..=k)
            .map(|t| {
                let cta = if one_cta && t < k { 0 } else { t };
                format!("P{t}@cta {cta},cluster 0,gpu 0")
            })
            .collect();
        let init: String = (0..k).map(|i| format!("s{i}=0; ")).collect();
        let text = format!(
            "PTX sym-{case}\n{{ x=0; y=0; {init}}}\n{}exists (x == 1)\n",
            litmus::print::table(&headers, &cols)
        );
        let p = parse(&text);
        let r = same_both_ways(&text, &p);
        grouped += usize::from(r.symmetric > 0);
        paid += usize::from(r.with < r.without);
        let both = engine::run(
            &p,
            &RunOptions {
                engine: EngineChoice::Both,
                ..RunOptions::default()
            },
        );
        assert!(both.disagreement.is_none(), "{text}");
    }
    assert!(grouped > 100, "{grouped} programs had a group");
    assert!(paid > 60, "{paid} programs stored fewer states");
}
