//! Litmus tests made by program, for tests and benchmarks: seeded random
//! tests of a given shape, scaling families whose cost grows with `n`, and a
//! spin lock whose cost grows with the loop bound.
//!
//! Every builder returns litmus text in the Dat3M dialect (parse it with
//! [`crate::litmus::parse_source`]), so a failing case can be written to a file
//! and run with `ptxmc run` as it is. Every thread sits in its own CTA of one
//! cluster of one GPU, and every strong access is `.gpu`-scoped, so all of
//! them are morally strong with each other: the hardest case for both engines.
//!
//! The random tests are reproducible: the same `(seed, threads, instrs)` gives
//! the same text on every machine and every version of this crate (the
//! generator is XorShift seeded through `rand_core`'s portable
//! `seed_from_u64`).

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

/// The instruction table, one CTA per thread (`P{i}@cta {i},cluster 0,gpu 0`).
fn table(cols: &[Vec<String>]) -> String {
    let headers: Vec<String> = (0..cols.len())
        .map(|i| format!("P{i}@cta {i},cluster 0,gpu 0"))
        .collect();
    crate::litmus::print::table(&headers, cols)
}

/// A whole test: name, initial values of `locs` (all 0), table, a condition
/// that always holds (these tests are about the set of outcomes, not a verdict).
fn test(name: &str, locs: &[String], cols: &[Vec<String>]) -> String {
    let init: String = locs.iter().map(|l| format!("{l}=0; ")).collect();
    format!("PTX {name}\n{{ {init}}}\n{}exists (0 == 0)\n", table(cols))
}

/// A seeded random test of `threads` threads with `instrs` instructions each:
/// loads (`ld.relaxed.gpu` or `ld.acquire.gpu`, each into its own register)
/// and stores (`st.relaxed.gpu` or `st.release.gpu` of a value unique in the
/// test) to two locations `x` and `y`, each kind equally likely.
///
/// This is the shape of issue 15's measurements ("4 × 4", "4 × 5", "3 × 6").
pub fn random(seed: u64, threads: usize, instrs: usize) -> String {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut pick = |n: u32| (rng.next_u32() % n) as usize;
    let mut value = 0;
    let cols: Vec<Vec<String>> = (0..threads)
        .map(|_| {
            (0..instrs)
                .map(|k| {
                    let loc = ["x", "y"][pick(2)];
                    if pick(2) == 0 {
                        let sem = ["relaxed", "acquire"][pick(2)];
                        format!("ld.{sem}.gpu r{k}, {loc}")
                    } else {
                        let sem = ["relaxed", "release"][pick(2)];
                        value += 1;
                        format!("st.{sem}.gpu {loc}, {value}")
                    }
                })
                .collect()
        })
        .collect();
    let name = format!("random-{threads}x{instrs}-seed{seed}");
    test(&name, &["x".into(), "y".into()], &cols)
}

/// IRIW with `n` readers: two writers (`x`, then `y`) and `n` readers of
/// both, half reading `x` first, half `y` first.
pub fn iriw(n: usize) -> String {
    let mut cols = vec![
        vec!["st.relaxed.gpu x, 1".to_string()],
        vec!["st.relaxed.gpu y, 1".to_string()],
    ];
    for i in 0..n {
        let (a, b) = if i % 2 == 0 { ("x", "y") } else { ("y", "x") };
        cols.push(vec![
            format!("ld.relaxed.gpu r0, {a}"),
            format!("ld.relaxed.gpu r1, {b}"),
        ]);
    }
    test(&format!("IRIW-{n}"), &["x".into(), "y".into()], &cols)
}

/// Message passing through `n` threads: the first writes `x` and flag `f1`,
/// thread `i` reads `f{i}` and writes `f{i+1}`, the last reads the last flag
/// and then `x` (`n` ≥ 2 threads in all).
pub fn mp_chain(n: usize) -> String {
    let n = n.max(2);
    let mut cols = vec![vec![
        "st.relaxed.gpu x, 1".to_string(),
        "st.relaxed.gpu f1, 1".to_string(),
    ]];
    for i in 1..n - 1 {
        cols.push(vec![
            format!("ld.relaxed.gpu r0, f{i}"),
            format!("st.relaxed.gpu f{}, 1", i + 1),
        ]);
    }
    cols.push(vec![
        format!("ld.relaxed.gpu r0, f{}", n - 1),
        "ld.relaxed.gpu r1, x".to_string(),
    ]);
    let mut locs = vec!["x".to_string()];
    locs.extend((1..n).map(|i| format!("f{i}")));
    test(&format!("MP-chain-{n}"), &locs, &cols)
}

/// Store buffering around a ring of `n` threads: thread `i` writes `x{i}`,
/// then reads `x{(i+1) mod n}`.
pub fn sb_ring(n: usize) -> String {
    let cols: Vec<Vec<String>> = (0..n)
        .map(|i| {
            vec![
                format!("st.relaxed.gpu x{i}, 1"),
                format!("ld.relaxed.gpu r0, x{}", (i + 1) % n),
            ]
        })
        .collect();
    let locs: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
    test(&format!("SB-ring-{n}"), &locs, &cols)
}

/// `n` writers of distinct values to one location and a reader that reads it twice.
pub fn writers(n: usize) -> String {
    let mut cols: Vec<Vec<String>> = (0..n)
        .map(|i| vec![format!("st.relaxed.gpu x, {}", i + 1)])
        .collect();
    cols.push(vec![
        "ld.relaxed.gpu r0, x".to_string(),
        "ld.relaxed.gpu r1, x".to_string(),
    ]);
    test(&format!("W-{n}"), &["x".into()], &cols)
}

/// A spin lock taken by `threads` threads (each in its own CTA): retry an
/// acquiring CAS of `lock` from 0 to 1 until it returns 0, increment `x`
/// inside the critical section, release the lock with a release store of 0.
///
/// The retry loop writes (a failed CAS still writes the value it read), so it
/// is not a spin loop; it is a retry loop, whose failed iterations both
/// engines drop (`docs/loops.md`), which makes it cheap. With
/// `--bound-retry-loops` it is bounded instead and its cost grows with
/// `--loop-bound` (the limits tests use it that way).
pub fn spin_lock(threads: usize) -> String {
    let cols: Vec<Vec<String>> = (0..threads)
        .map(|_| {
            vec![
                "LC00:".to_string(),
                "atom.acquire.gpu.cas r0, lock, 0, 1".to_string(),
                "bne r0, 0, LC00".to_string(),
                "ld.relaxed.gpu r1, x".to_string(),
                "add r1, r1, 1".to_string(),
                "st.relaxed.gpu x, r1".to_string(),
                "st.release.gpu lock, 0".to_string(),
            ]
        })
        .collect();
    test(
        &format!("spin-lock-{threads}"),
        &["lock".into(), "x".into()],
        &cols,
    )
}

/// Message passing behind a wide payload: P0 stores `1..=n` to `x0 …
/// x{n-1}` and then releases `flag`; P1 acquires `flag` and reads `x0` and
/// `x{n-1}`. An execution has `2n + 5` events (initial writes included), so
/// `wide_mp(62)` is the first past 128 and `wide_mp(998)` past 2,000, while
/// the outcomes stay five (P1 sees the flag and then both payload ends, or
/// not the flag and each end either way): the family that checks the engines
/// have no event cap (`crate::rel`). The condition (flag seen, last store
/// not) is forbidden.
pub fn wide_mp(n: usize) -> String {
    assert!(n >= 1, "a payload of at least one location");
    let locs: Vec<String> = (0..n)
        .map(|i| format!("x{i}"))
        .chain(["flag".to_string()])
        .collect();
    let mut p0: Vec<String> = (0..n)
        .map(|i| format!("st.relaxed.gpu x{i}, {}", i + 1))
        .collect();
    p0.push("st.release.gpu flag, 1".into());
    let p1 = vec![
        "ld.acquire.gpu r0, flag".to_string(),
        "ld.relaxed.gpu r1, x0".to_string(),
        format!("ld.relaxed.gpu r2, x{}", n - 1),
    ];
    let init: String = locs.iter().map(|l| format!("{l}=0; ")).collect();
    format!(
        "PTX MP-wide-{n}\n{{ {init}}}\n{}exists (1:r0=1 /\\ 1:r2=0)\n",
        table(&[p0, p1])
    )
}

/// A CUTLASS-style TMA pipeline of `stages` stages run for `rounds` rounds
/// (`litmus/liveness/Pipeline-2stage-2round.litmus` generalised; issue 27's
/// "S × R" family). Both threads sit in CTA 0. Tile `k = round·stages + stage`
/// goes through stage buffer `s{stage}`: the producer spins on `empty{stage}`
/// (parity 1 in round 0, which passes at once, then alternating), announces 4
/// bytes on `full{stage}` and issues the TMA load of `g{k}` (holding `k + 1`)
/// into the buffer; the consumer spins on `full{stage}` (parity `round mod
/// 2`), reads the buffer into `r{2k+1}`, orders that generic read before the
/// next TMA write with `fence.proxy.async.shared::cta` and arrives on
/// `empty{stage}`. The condition asks for a stale or overwritten read: it
/// never holds, and every run terminates.
pub fn pipeline(stages: usize, rounds: usize) -> String {
    let mut prod = Vec::new();
    let mut cons = Vec::new();
    let mut init = String::new();
    for s in 0..stages {
        init += &format!(
            "s{s} @ shared cta 0 = 0; full{s} @ mbarrier cta 0 = 1; empty{s} @ mbarrier cta 0 = 1; "
        );
    }
    let mut cond = Vec::new();
    for r in 0..rounds {
        for s in 0..stages {
            let k = r * stages + s;
            init += &format!("g{k}={}; ", k + 1);
            prod.push(format!("LP{k}:"));
            prod.push(format!(
                "mbarrier.try_wait.parity.shared::cta r{}, [empty{s}], {}",
                2 * k,
                (r + 1) % 2
            ));
            prod.push(format!("beq r{}, 0, LP{k}", 2 * k));
            prod.push(format!(
                "mbarrier.arrive.expect_tx.shared::cta _, [full{s}], 4"
            ));
            prod.push(format!(
                "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [s{s}], [g{k}], 4, [full{s}]"
            ));
            cons.push(format!("LC{k}:"));
            cons.push(format!(
                "mbarrier.try_wait.parity.shared::cta r{}, [full{s}], {}",
                2 * k,
                r % 2
            ));
            cons.push(format!("beq r{}, 0, LC{k}", 2 * k));
            cons.push(format!("ld.shared::cta r{}, s{s}", 2 * k + 1));
            cons.push("fence.proxy.async.shared::cta".to_string());
            cons.push(format!("mbarrier.arrive.shared::cta _, [empty{s}]"));
            cond.push(format!("P1:r{} != {}", 2 * k + 1, k + 1));
        }
    }
    let headers = [
        "P0@cta 0,cluster 0,gpu 0".to_string(),
        "P1@cta 0,cluster 0,gpu 0".to_string(),
    ];
    format!(
        "PTX Pipeline-{stages}stage-{rounds}round\n{{ {init}}}\n{}exists ({})\n",
        crate::litmus::print::table(&headers, &[prod, cons]),
        cond.join(" \\/ ")
    )
}

/// The CTA barrier family of issue 27: `n` threads of CTA 0 each store
/// `i + 1` to their own slot `s{i}` (a weak store), meet at `bar.sync 0`,
/// and thread 0 then reads every slot into `r{i}`. The barrier makes every
/// store visible to thread 0 (PTX ISA 9.7.13.1), so the condition (some slot
/// read stale) is forbidden and there is one final state; every run
/// terminates. The cost lies in the barrier: `n` arrivals and, for the
/// oracle's termination search, the sets of threads that might be stuck at
/// it.
pub fn cta_barrier(n: usize) -> String {
    assert!(n >= 1, "a barrier of at least one thread");
    let locs: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    let cols: Vec<Vec<String>> = (0..n)
        .map(|i| {
            let mut c = vec![format!("st.weak s{i}, {}", i + 1), "bar.sync 0".to_string()];
            if i == 0 {
                c.extend((0..n).map(|j| format!("ld.weak r{j}, s{j}")));
            }
            c
        })
        .collect();
    let headers: Vec<String> = (0..n)
        .map(|i| format!("P{i}@cta 0,cluster 0,gpu 0"))
        .collect();
    let init: String = locs.iter().map(|l| format!("{l}=0; ")).collect();
    let cond: Vec<String> = (0..n).map(|j| format!("P0:r{j} != {}", j + 1)).collect();
    format!(
        "PTX Barrier-{n}\n{{ {init}}}\n{}exists ({})\n",
        crate::litmus::print::table(&headers, &cols),
        cond.join(" \\/ ")
    )
}

/// The warp barrier family of issue 25/27: `warps` warps of `lanes` lanes
/// each in CTA 0; every lane stores `1` to its own slot `s{i}` (weak), meets
/// the CTA at the count-less `bar.sync 0`, then at the counted
/// `bar.sync 1, 32·counted` (which a warp reaches as one arrival of 32
/// threads), and lane 0 of warp 0 then reads the last slot into `r0`. With
/// `counted == warps` the condition (a stale read) is forbidden and every
/// run terminates; with more warps counted than there are, every lane hangs
/// at the counted barrier. The cost lies in the lanes' count-less arrivals
/// beside a counted barrier: each lane arrives on its own.
pub fn warp_barriers(warps: usize, lanes: usize, counted: usize) -> String {
    assert!(warps >= 1 && lanes >= 1, "at least one lane");
    let n = warps * lanes;
    let cols: Vec<Vec<String>> = (0..n)
        .map(|i| {
            let mut c = vec![
                format!("st.weak s{i}, 1"),
                "bar.sync 0".to_string(),
                format!("bar.sync 1, {}", 32 * counted),
            ];
            if i == 0 {
                c.push(format!("ld.weak r0, s{}", n - 1));
            }
            c
        })
        .collect();
    let headers: Vec<String> = (0..n)
        .map(|i| format!("P{i}@cta 0,warp {},gpu 0", i / lanes))
        .collect();
    let init: String = (0..n).map(|i| format!("s{i}=0; ")).collect();
    format!(
        "PTX Warp-barriers-{warps}x{lanes}-{counted}\n{{ {init}}}\n{}exists (P0:r0 == 0)\n",
        crate::litmus::print::table(&headers, &cols),
    )
}

/// How a grid barrier's arrival adds to the counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// `red.release.gpu.add count, 1`: nothing is returned.
    Red,
    /// `atom.release.gpu.add r0, count, 1`: each thread's ticket (the value
    /// it read) lands in `r0`, so the tickets tell the order of arrival and
    /// there are `n!` final states.
    Atom,
}

/// The grid barrier family of issue 27: one thread in each of `n` CTAs
/// stores `i + 1` to its slot `s{i}` (weak), arrives on `count` with a
/// releasing `.gpu` add ([`Arrival`]), spins with `ld.acquire.gpu` until
/// `count` reads `n`, and then reads the next CTA's slot
/// `s{(i+1) mod n}` into `r2` (`litmus/liveness/Grid-barrier.litmus`
/// generalised). The condition (some CTA reads a stale slot) is forbidden;
/// every run terminates.
pub fn grid_barrier(n: usize, arrival: Arrival) -> String {
    assert!(n >= 1, "a barrier of at least one CTA");
    let mut locs = vec!["count".to_string()];
    locs.extend((0..n).map(|i| format!("s{i}")));
    let cols: Vec<Vec<String>> = (0..n)
        .map(|i| {
            vec![
                format!("st.weak s{i}, {}", i + 1),
                match arrival {
                    Arrival::Red => "red.release.gpu.add count, 1".to_string(),
                    Arrival::Atom => "atom.release.gpu.add r0, count, 1".to_string(),
                },
                format!("LC{i}:"),
                "ld.acquire.gpu r1, count".to_string(),
                format!("bne r1, {n}, LC{i}"),
                format!("ld.weak r2, s{}", (i + 1) % n),
            ]
        })
        .collect();
    let init: String = locs.iter().map(|l| format!("{l}=0; ")).collect();
    let cond: Vec<String> = (0..n)
        .map(|i| format!("P{i}:r2 != {}", (i + 1) % n + 1))
        .collect();
    let name = match arrival {
        Arrival::Red => format!("Grid-barrier-red-{n}"),
        Arrival::Atom => format!("Grid-barrier-atom-{n}"),
    };
    format!(
        "PTX {name}\n{{ {init}}}\n{}exists ({})\n",
        table(&cols),
        cond.join(" \\/ ")
    )
}

/// The counter family of issue 27: `n - 1` CTAs each store `i + 1` to their
/// slot `s{i}` (weak) and then `red.release.gpu.add count, 1`; the last CTA
/// reads `count` with `ld.acquire.gpu` into `r0` and then slot `s0` into
/// `r1` (`n` ≥ 2 threads in all). The condition (every writer counted, yet
/// `s0` stale) is forbidden; there are `2n - 2` final states (the count
/// read, and whether `s0` is seen when the count is short).
pub fn counter(n: usize) -> String {
    let n = n.max(2);
    let w = n - 1;
    let mut locs = vec!["count".to_string()];
    locs.extend((0..w).map(|i| format!("s{i}")));
    let mut cols: Vec<Vec<String>> = (0..w)
        .map(|i| {
            vec![
                format!("st.weak s{i}, {}", i + 1),
                "red.release.gpu.add count, 1".to_string(),
            ]
        })
        .collect();
    cols.push(vec![
        "ld.acquire.gpu r0, count".to_string(),
        "ld.weak r1, s0".to_string(),
    ]);
    let init: String = locs.iter().map(|l| format!("{l}=0; ")).collect();
    format!(
        "PTX Counter-{n}\n{{ {init}}}\n{}exists (P{w}:r0 == {w} /\\ P{w}:r1 == 0)\n",
        table(&cols),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus;

    fn parses(text: &str) -> crate::ir::Program {
        litmus::parse_source("families.litmus", text)
            .unwrap_or_else(|e| panic!("{}\n{text}", e.rendered()))
            .remove(0)
            .program
    }

    #[test]
    fn every_builder_gives_a_test_that_parses() {
        for text in [
            random(1, 4, 5),
            iriw(3),
            mp_chain(4),
            sb_ring(3),
            writers(3),
            spin_lock(2),
            pipeline(2, 2),
            wide_mp(3),
            cta_barrier(3),
            grid_barrier(3, Arrival::Red),
            grid_barrier(3, Arrival::Atom),
            counter(3),
        ] {
            let p = parses(&text);
            assert!(
                p.threads
                    .iter()
                    .enumerate()
                    .all(|(i, t)| t.name == format!("P{i}"))
            );
        }
        assert_eq!(parses(&random(7, 3, 6)).threads.len(), 3);
        assert_eq!(parses(&iriw(3)).threads.len(), 5);
        assert_eq!(parses(&mp_chain(4)).threads.len(), 4);
        assert_eq!(parses(&writers(3)).threads.len(), 4);
    }

    #[test]
    fn random_tests_are_reproducible_and_vary_with_the_seed() {
        assert_eq!(random(3, 4, 5), random(3, 4, 5));
        assert_ne!(random(3, 4, 5), random(4, 4, 5));
        let t = random(3, 4, 5);
        let rows = t.lines().filter(|l| l.ends_with(';')).count();
        // The placement header and one row per instruction.
        assert_eq!(rows, 1 + 5, "{t}");
    }
}
