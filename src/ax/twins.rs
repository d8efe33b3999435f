//! Interchangeable adders for the oracle's chain search (issue 27,
//! `docs/oracle.md`, "Interchangeable adders").
//!
//! With commuting additions ([`super::search::Search::commute_chains`]) the
//! oracle still searches one order of a counter's chain per *set* of
//! additions a read observes: the counter family's reader, which reads the
//! count, is searched against every subset of the writers (`2^(n-1)`
//! executions), although the writers are alike and the answer depends only
//! on how many of them it observed (and on whether the one whose slot it
//! reads is among them). This module finds the *adders* that are
//! interchangeable, so that the chain search tries, at each position, only
//! the least of a class of twins still unplaced.
//!
//! **Which threads (conservative: any doubt, no twin).** The program has no
//! agent thread and uses only loads, stores, read-modify-writes, register
//! moves, arithmetic, branches and unrestricted fences (nothing names a
//! thread but its events' placement). A location is *private* to a thread
//! when it holds data, has one name, only that thread writes it, with
//! exactly one store of a constant, and no thread reads it. An *adder* is a
//! thread whose code is its private stores and exactly one `red` (an RMW
//! with no destination register) of constants to a location that is not
//! private, and is not a lane of a warp. Two adders are *twins* when their
//! code is the same instruction for instruction once the private locations
//! of one are renamed to the other's (the constants stored there may
//! differ), their registers (names and initial values) are the same, and
//! every other thread stands to both alike (same GPU, cluster, CTA or not).
//!
//! **Why swapping twins changes no answer.** Let `σ` exchange twins `a` and
//! `b`: each one's events become the other's (event for event in code
//! order), each one's private location the other's. For a consistent
//! execution `X`, `σ(X)` — the same reads-from, coherence, Fence-SC and
//! barrier choices with the events exchanged — is a candidate of the same
//! program (their code corresponds, with the private locations renamed), and
//! it is consistent: every axiom reads events only through their kind,
//! semantics, scope, location and the placement relation between their
//! threads, which `σ` preserves (the twins' shared instructions are the
//! same instruction on the same location; every other thread stands to both
//! alike). Its final state is `X`'s: no register of either twin is written
//! (a `red` has no destination), and their registers start alike; each
//! private location is written once, by its owner, and read by nobody, so it
//! ends with its one store's constant in every execution; every other
//! location is written by the same instructions with the same values. The
//! twins' events race with nothing (a private location has one writer and
//! no reader; the counter's accesses are pairwise morally strong, see
//! [`super::counters`]), and they can be undefined in no way (a store and a
//! `red`), so races and undefined steps are those of other threads' events,
//! which `σ` maps to themselves.

use crate::ir::{Instr, LocKind, Operand, Program};

/// `rep[t]`: the least thread twin of `t` (`t` itself when it has none).
pub fn classes(p: &Program) -> Vec<usize> {
    let n = p.threads.len();
    let mut rep: Vec<usize> = (0..n).collect();
    if n < 2
        || p.threads
            .iter()
            .any(|t| t.agent.is_some() || !t.code.iter().all(Instr::is_plain))
    {
        return rep;
    }
    let private = private_locations(p);
    let adder: Vec<bool> = (0..n).map(|t| is_adder(p, &private, t)).collect();
    for b in 0..n {
        if !adder[b] {
            continue;
        }
        if let Some(a) = (0..b).find(|&a| adder[a] && rep[a] == a && twins(p, a, b)) {
            rep[b] = a;
        }
    }
    rep
}

/// `private[loc]`: the thread the location is private to (see the module
/// documentation).
fn private_locations(p: &Program) -> Vec<Option<usize>> {
    let mut owner: Vec<Option<usize>> = vec![None; p.locations.len()];
    let mut ok: Vec<bool> = p
        .locations
        .iter()
        .enumerate()
        .map(|(loc, l)| {
            l.kind == LocKind::Data && p.addresses.iter().filter(|a| a.loc == loc).count() == 1
        })
        .collect();
    let mut stores = vec![0usize; p.locations.len()];
    for (t, th) in p.threads.iter().enumerate() {
        for i in &th.code {
            let Some(a) = i.access() else { continue };
            let loc = p.addresses[a.addr].loc;
            match i {
                Instr::Store {
                    src: Operand::Imm(_),
                    ..
                } if owner[loc].is_none_or(|o| o == t) => {
                    owner[loc] = Some(t);
                    stores[loc] += 1;
                }
                _ => ok[loc] = false,
            }
        }
    }
    (0..p.locations.len())
        .map(|loc| owner[loc].filter(|_| ok[loc] && stores[loc] == 1))
        .collect()
}

/// Whether thread `t` is an adder: its private stores and one `red` of
/// constants to a location that is not private.
fn is_adder(p: &Program, private: &[Option<usize>], t: usize) -> bool {
    let th = &p.threads[t];
    if th.placement.warp.is_some() {
        return false;
    }
    let mut reds = 0;
    for i in &th.code {
        match i {
            Instr::Store {
                src: Operand::Imm(_),
                access,
            } if private[p.addresses[access.addr].loc] == Some(t) => {}
            Instr::Rmw {
                dst: None,
                args,
                access,
                ..
            } if private[p.addresses[access.addr].loc].is_none()
                && args.iter().all(|a| matches!(a, Operand::Imm(_))) =>
            {
                reds += 1
            }
            _ => return false,
        }
    }
    reds == 1
}

/// How two threads stand to each other: same GPU, cluster, CTA, grid.
fn relation(p: &Program, a: usize, b: usize) -> (bool, bool, bool, bool) {
    let (x, y) = (p.threads[a].placement, p.threads[b].placement);
    (
        x.gpu == y.gpu,
        x.gpu == y.gpu && x.cluster == y.cluster,
        x.gpu == y.gpu && x.cta == y.cta,
        x.grid == y.grid,
    )
}

/// Whether adders `a` and `b` are twins (their stores are to their own
/// private locations, [`is_adder`]).
fn twins(p: &Program, a: usize, b: usize) -> bool {
    let (ta, tb) = (&p.threads[a], &p.threads[b]);
    if ta.code.len() != tb.code.len() || ta.regs != tb.regs || ta.sites != tb.sites {
        return false;
    }
    if (0..p.threads.len())
        .filter(|&v| v != a && v != b)
        .any(|v| relation(p, a, v) != relation(p, b, v))
    {
        return false;
    }
    // The renaming of a's private locations to b's, in order of use.
    let mut renamed: Vec<(usize, usize)> = Vec::new();
    for (ia, ib) in ta.code.iter().zip(&tb.code) {
        match (ia, ib) {
            (Instr::Store { access: x, .. }, Instr::Store { access: y, .. }) => {
                let (lx, ly) = (p.addresses[x.addr].loc, p.addresses[y.addr].loc);
                let same_kind = x.proxy == y.proxy
                    && x.sem == y.sem
                    && x.scope == y.scope
                    && x.space == y.space
                    && x.ty == y.ty;
                if !same_kind || renamed.iter().any(|&(u, v)| u == lx || v == ly) {
                    return false;
                }
                renamed.push((lx, ly));
            }
            (Instr::Rmw { .. }, Instr::Rmw { .. }) if ia == ib => {}
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families;

    fn program(text: &str) -> Program {
        crate::litmus::parse_source("t.litmus", text)
            .unwrap_or_else(|e| panic!("{}", e.rendered()))
            .remove(0)
            .program
    }

    #[test]
    fn the_counters_writers_but_the_first_are_twins() {
        let p = program(&families::counter(6));
        // Writer 0's slot is read by the reader (P5): not private, no adder.
        assert_eq!(classes(&p), vec![0, 1, 1, 1, 1, 5]);
    }

    #[test]
    fn no_twins_where_threads_are_told_apart() {
        // The grid barrier's threads spin (loads) and read each other's slots.
        let p = program(&families::grid_barrier(4, families::Arrival::Red));
        assert_eq!(classes(&p), vec![0, 1, 2, 3]);
        // `atom` writes a register: its ticket is in the final state.
        let p = program(&families::grid_barrier(4, families::Arrival::Atom));
        assert_eq!(classes(&p), vec![0, 1, 2, 3]);
        // Two adders that add different constants are no twins.
        let p = program(
            "PTX t\n{ c=0; a=0; b=0; }\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 | P2@cta 2,cluster 0,gpu 0 ;\n st.weak a, 1 | st.weak b, 1 | ld.acquire.gpu r0, c ;\n red.release.gpu.add c, 1 | red.release.gpu.add c, 2 | ;\nexists (2:r0 == 0)\n",
        );
        assert_eq!(classes(&p), vec![0, 1, 2]);
        // The same adders, one in the reader's CTA: told apart by placement.
        let p = program(
            "PTX t\n{ c=0; a=0; b=0; }\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 | P2@cta 1,cluster 0,gpu 0 ;\n st.weak a, 1 | st.weak b, 1 | ld.acquire.gpu r0, c ;\n red.release.gpu.add c, 1 | red.release.gpu.add c, 1 | ;\nexists (2:r0 == 0)\n",
        );
        assert_eq!(classes(&p), vec![0, 1, 2]);
        // Alike and placed alike: twins.
        let p = program(
            "PTX t\n{ c=0; a=0; b=0; }\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 | P2@cta 2,cluster 0,gpu 0 ;\n st.weak a, 1 | st.weak b, 7 | ld.acquire.gpu r0, c ;\n red.release.gpu.add c, 1 | red.release.gpu.add c, 1 | ;\nexists (2:r0 == 0)\n",
        );
        assert_eq!(classes(&p), vec![0, 0, 2]);
    }
}
