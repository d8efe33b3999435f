//! The final value of a *counter* — a location written only by atomic
//! additions of constants — read off a path combination, so that the
//! termination search never builds a combination in which a thread spins on
//! a counter whose final value lets it leave (`docs/oracle.md`, "Spinning on
//! a counter").
//!
//! A grid barrier's threads each add 1 to `count` and spin until it reads
//! `n`. Each thread has a complete path and a path stuck in the spin loop, so
//! the termination search has `2^n - 1` combinations with a stuck path, and
//! searches each in full — every order of the `n` additions (`n!` reads-from
//! chains) — before finding that the spinning read, which must read the
//! coherence-latest write (the fairness condition of `docs/loops.md`), reads
//! `n` and leaves the loop.
//!
//! The value that write holds does not depend on the order. A location `L`
//! is a counter of a program when it holds data, every access to it is
//! strong, generic and through one virtual address, and every two accesses
//! of different threads have scopes that include each other's thread
//! ([`crate::model::loops::all_accesses_morally_strong`]): then its events
//! (the initial write included) are pairwise morally strong. In a
//! combination whose every write of `L` is the write half of an RMW `add`
//! of a constant, coherence orders those writes totally (A1), and Atomicity
//! (A3, every pair morally strong) makes each RMW read its immediate
//! coherence predecessor. So the writes form one chain from the initial
//! write, and the last holds `init + c1 + … + ck` (wrapping addition is
//! commutative and associative) whatever the order. A read that must read
//! the coherence-latest write of `L` returns exactly that value; a branch
//! outcome the stuck path assumed that is false with those values is false
//! in every candidate of the combination, which the search would reject
//! (`pruned_values`). Leaving the combination out changes no answer.

use crate::ir::{AddrId, Instr, LocKind, Program, RmwOp, Value};

use super::unfold::{Expr, Path, PathEventKind};

/// The counters of a program (see the module documentation).
pub struct Counters {
    /// Per location: whether it is a counter.
    counter: Vec<bool>,
}

impl Counters {
    /// The counters of `p` (lowered); `None` if it has none, so that the
    /// termination search pays nothing for programs without one.
    pub fn new(p: &Program) -> Option<Counters> {
        // Per location: an address that accesses it, and whether some RMW
        // adds a constant to it while nothing else writes it.
        let mut addr: Vec<Option<AddrId>> = vec![None; p.locations.len()];
        let mut adds = vec![false; p.locations.len()];
        let mut other_write = vec![false; p.locations.len()];
        for th in &p.threads {
            for i in &th.code {
                let Some(a) = i.access() else { continue };
                let loc = p.addresses[a.addr].loc;
                addr[loc].get_or_insert(a.addr);
                match i {
                    Instr::Load { .. } => {}
                    Instr::Rmw {
                        op: RmwOp::Add,
                        args,
                        ..
                    } if args.len() == 1 && matches!(args[0], crate::ir::Operand::Imm(_)) => {
                        adds[loc] = true
                    }
                    _ => other_write[loc] = true,
                }
            }
        }
        let counter: Vec<bool> = (0..p.locations.len())
            .map(|loc| {
                p.locations[loc].kind == LocKind::Data
                    && adds[loc]
                    && !other_write[loc]
                    && addr[loc].is_some_and(|a| {
                        crate::model::loops::all_accesses_morally_strong(p, loc, a)
                    })
            })
            .collect();
        counter.contains(&true).then_some(Counters { counter })
    }

    /// Per location of the program: whether it is a counter.
    pub fn flags(&self) -> &[bool] {
        &self.counter
    }

    /// The final value of counter `loc` in `combo` (one path per thread):
    /// its initial value plus every constant the combination's writes add;
    /// `None` if some write of it is not an addition of a constant (the
    /// static check covers the program's instructions; this covers the
    /// paths' events as the search sees them).
    fn final_value(&self, p: &Program, combo: &[&Path], loc: usize) -> Option<Value> {
        let mut v = p.locations[loc].init;
        for path in combo {
            for e in &path.events {
                let PathEventKind::Write { access, value, .. } = &e.kind else {
                    continue;
                };
                if p.addresses[access.addr].loc != loc {
                    continue;
                }
                match value {
                    Expr::Rmw(RmwOp::Add, _, args) => match args.as_slice() {
                        [Expr::Const(c)] => v = RmwOp::Add.apply(v, &[*c]),
                        _ => return None,
                    },
                    _ => return None,
                }
            }
        }
        Some(v)
    }

    /// Whether some stuck path of `combo` spins on reads of counters whose
    /// final values break a branch outcome it assumed: then no candidate of
    /// the combination is consistent.
    pub fn spin_leaves(&self, p: &Program, combo: &[&Path]) -> bool {
        combo.iter().any(|path| {
            let Some(sp) = &path.stuck else { return false };
            // The latest reads of counters, with the counters' final values.
            let mut known: Vec<(usize, Value)> = Vec::new();
            for i in sp.latest.members() {
                let PathEventKind::Read { access, .. } = &path.events[i].kind else {
                    continue;
                };
                let loc = p.addresses[access.addr].loc;
                if !self.counter[loc] {
                    continue;
                }
                match self.final_value(p, combo, loc) {
                    Some(v) => known.push((i, v)),
                    None => continue,
                }
            }
            if known.is_empty() {
                return false;
            }
            let mut read =
                |i: usize| -> Option<Value> { known.iter().find(|k| k.0 == i).map(|k| k.1) };
            path.constraints
                .iter()
                .any(|c| match (c.a.eval(&mut read), c.b.eval(&mut read)) {
                    (Some(a), Some(b)) => c.cmp.holds(a, b) != c.holds,
                    _ => false,
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{families, litmus};

    fn lowered(text: &str) -> Program {
        let p = litmus::parse_source("t.litmus", text)
            .unwrap_or_else(|e| panic!("{}", e.rendered()))
            .remove(0)
            .program;
        crate::model::lower::lowered(&p, 2).into_owned()
    }

    #[test]
    fn the_grid_barrier_counts_on_count_and_nothing_else() {
        let p = lowered(&families::grid_barrier(3, families::Arrival::Atom));
        let c = Counters::new(&p).expect("count is a counter");
        let names: Vec<&str> = (0..p.locations.len())
            .filter(|&l| c.counter[l])
            .map(|l| p.locations[l].name.as_str())
            .collect();
        assert_eq!(names, ["count"]);
    }

    #[test]
    fn a_store_a_weak_access_or_another_operation_makes_no_counter() {
        for (what, extra) in [
            ("a store", "st.relaxed.gpu count, 5"),
            ("a weak load", "ld.weak r5, count"),
            ("an exchange", "atom.relaxed.gpu.exch r5, count, 2"),
            ("an add of a register", "red.relaxed.gpu.add count, r1"),
        ] {
            let text = format!(
                "PTX t\n{{ count=0; }}\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;\n red.release.gpu.add count, 1 | {extra} ;\nexists (count == 1)\n"
            );
            assert!(Counters::new(&lowered(&text)).is_none(), "{what}");
        }
    }

    #[test]
    fn the_spinning_combinations_of_the_grid_barrier_are_all_left_out() {
        let p = lowered(&families::grid_barrier(3, families::Arrival::Red));
        let c = Counters::new(&p).unwrap();
        let paths = crate::ax::unfold_all(
            &p,
            &crate::ax::AxOptions::default(),
            true,
            &crate::limits::Budget::unlimited(),
        )
        .unwrap();
        let mut stuck = 0;
        let mut combos = crate::ax::combos::Combos::new(&p, &paths);
        while let Some(combo) = combos.next() {
            if combo.iter().any(|q| q.stuck.is_some()) {
                stuck += 1;
                assert!(c.spin_leaves(&p, &combo));
            } else {
                assert!(!c.spin_leaves(&p, &combo));
            }
        }
        assert_eq!(stuck, 7);
    }
}
