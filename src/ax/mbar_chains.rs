//! Mbarrier chains read off a path combination, so that the termination
//! search never builds a combination whose waits no order of the mbarrier's
//! operations can satisfy (`docs/oracle.md`, "Mbarrier chains").
//!
//! A TMA pipeline's producer and consumer each wait at every tile, so the
//! termination search has one combination per pair of places they may stop
//! at (and the agents follow), and searched each in full before finding
//! that the stuck wait's fairness read (it reads the coherence-latest write)
//! sees the phase complete, or that a wait the path passed can read no
//! write that completes its phase: 2×3 did not finish in 30 s.
//!
//! An mbarrier location `L` is a **chain** of the (lowered) program when no
//! instruction stores to it and every access to it — loads, RMWs of
//! constants (arrive-on, expect-tx, complete-tx, …) and mbarrier waits — is
//! strong, generic, through one virtual address, and every two accesses of
//! different threads have scopes that include each other's thread; same
//! thread pairs are morally strong by definition (PTX ISA §8.7, "Morally
//! strong operations"). Then, in every candidate of a combination:
//!
//! * its writes are the initial write and RMW write halves; coherence
//!   orders them totally (initial write first) and Atomicity makes each RMW
//!   read its immediate predecessor, so they form one chain
//!   `w0 = init, w1 = op1(w0), …, wk`;
//! * SC per location (every pair morally strong) makes each thread's
//!   accesses of `L`, in program order, take non-decreasing positions on the
//!   chain, strictly increasing for its RMWs, and a read program-order
//!   before an RMW a position below it;
//! * a read of a stuck path's fairness set reads `wk`: under either
//!   fairness no write morally strong with it may follow the write it
//!   reads, and every write of a chain is.
//!
//! So the candidate, ordered by chain position (at one position the write
//! first, then the reads in program order), is an *interleaving* of the
//! threads' accesses of `L` acting one at a time on one current value, in
//! which each read returns the value current when it comes and each
//! fairness read comes after the last write. Every branch outcome a path
//! assumed that depends on one read of `L` alone holds of that value (the
//! search rejects a candidate where it does not, `pruned_values`).
//! [`MbarChains::impossible`] searches those interleavings (reachable
//! states: each thread's position in its accesses, the pending counts of
//! interchangeable single operations, the current value); if none reaches
//! the end, the combination has no consistent candidate and is left out.
//! The combinations searched are the plain walk's less some with none:
//! the same hang (the first found), the same bound flag, the same undefined
//! step. The search over interleavings gives up (keeps the combination)
//! past [`STATE_CAP`] states.

use std::collections::HashSet;

use smallvec::SmallVec;

use crate::ir::{Instr, LocKind, Program, Proxy, RmwOp, Value};
use crate::model::sync::placement_of;

use super::unfold::{Expr, Path, PathEventKind};

/// Interleaving states searched per location and combination before giving
/// up (the combination is then searched as usual).
pub const STATE_CAP: usize = 200_000;

/// The chains of a program (see the module documentation).
pub struct MbarChains {
    /// Per location: whether it is a chain.
    chain: Vec<bool>,
}

/// One access of `L` by one thread, as the interleaving sees it.
#[derive(Clone, Debug)]
enum Item {
    /// A read (a load or a wait), with the branch outcomes that depend on it
    /// alone (indices into its path's constraints), and whether it must read
    /// the chain's last write (fairness).
    Read {
        checks: SmallVec<[usize; 2]>,
        latest: bool,
    },
    /// An RMW: the outcomes that depend on its read alone, and what it
    /// writes.
    Rmw {
        checks: SmallVec<[usize; 2]>,
        op: RmwOp,
        args: SmallVec<[Value; 2]>,
    },
}

/// The accesses of one thread, with the event index each read has.
struct Seq<'a> {
    path: &'a Path,
    items: Vec<(usize, Item)>,
    /// `rmws_from[k]`: RMWs at positions `k..`.
    rmws_from: Vec<u16>,
}

impl MbarChains {
    /// The chains of `p` (lowered); `None` if it has none.
    pub fn new(p: &Program) -> Option<MbarChains> {
        let n = p.locations.len();
        let mut ok: Vec<bool> = p
            .locations
            .iter()
            .map(|l| matches!(l.kind, LocKind::Mbarrier | LocKind::Synthetic))
            .collect();
        let mut va: Vec<Option<usize>> = vec![None; n];
        // (thread, placement, scope) of each access, per location.
        let mut accesses: Vec<Vec<_>> = vec![Vec::new(); n];
        for (t, th) in p.threads.iter().enumerate() {
            for (pc, i) in th.code.iter().enumerate() {
                let (addr, scope) = match i {
                    Instr::Load { access, .. } => (
                        access.addr,
                        access.scope.filter(|_| access.proxy == Proxy::Generic),
                    ),
                    Instr::Rmw { access, args, .. } => {
                        let consts = args.iter().all(|a| matches!(a, crate::ir::Operand::Imm(_)));
                        (
                            access.addr,
                            access
                                .scope
                                .filter(|_| access.proxy == Proxy::Generic && consts),
                        )
                    }
                    Instr::MbarWait { addr, scope, .. } => (*addr, Some(*scope)),
                    Instr::Store { access, .. } => (access.addr, None),
                    // Lowered away before any engine runs; should one stay,
                    // nothing is claimed about any location.
                    Instr::AsyncCopy { .. }
                    | Instr::AsyncMbarArrive { .. }
                    | Instr::Mbar { .. }
                    | Instr::Tensor { .. }
                    | Instr::ProxyFenceUni {
                        operand: Some(_), ..
                    } => return None,
                    _ => continue,
                };
                let a = &p.addresses[addr];
                let loc = a.loc;
                if *va[loc].get_or_insert(a.va) != a.va {
                    ok[loc] = false;
                }
                match scope {
                    Some(s) => accesses[loc].push((t, placement_of(p, t, pc), s)),
                    None => ok[loc] = false,
                }
            }
        }
        for (loc, acc) in accesses.iter().enumerate() {
            let strong = acc.iter().all(|(ta, pa, sa)| {
                acc.iter()
                    .all(|(tb, pb, sb)| ta == tb || (pa.includes(*sa, pb) && pb.includes(*sb, pa)))
            });
            ok[loc] &= strong && !acc.is_empty();
        }
        ok.contains(&true).then_some(MbarChains { chain: ok })
    }

    /// Per location of the program: whether it is a chain.
    pub fn flags(&self) -> &[bool] {
        &self.chain
    }

    /// Whether some chain of `combo` (one path per thread) has no
    /// interleaving that satisfies the reads' branch outcomes and fairness:
    /// then no candidate of the combination is consistent.
    pub fn impossible(&self, p: &Program, combo: &[&Path]) -> bool {
        // The barriers stuck paths wait at first: those most often decide.
        let mut first: Vec<usize> = Vec::new();
        for path in combo {
            let Some(sp) = &path.stuck else { continue };
            for i in sp.latest.members() {
                if let PathEventKind::Read { access, .. } = &path.events[i].kind {
                    let loc = p.addresses[access.addr].loc;
                    if self.chain[loc] && !first.contains(&loc) {
                        first.push(loc);
                    }
                }
            }
        }
        let rest = (0..self.chain.len()).filter(|l| self.chain[*l] && !first.contains(l));
        first
            .iter()
            .copied()
            .chain(rest)
            .any(|loc| !feasible(p, combo, loc))
    }
}

/// The accesses of `loc` on `path`, or `None` if one cannot be read as the
/// module documentation says (then nothing is claimed).
fn items<'a>(p: &Program, path: &'a Path, loc: usize) -> Option<Seq<'a>> {
    let only = |e: &Expr, i: usize| {
        let r = e.reads();
        r.members().all(|m| m == i)
    };
    let checks = |i: usize| -> SmallVec<[usize; 2]> {
        path.constraints
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                let (ra, rb) = (c.a.reads(), c.b.reads());
                (ra.has(i) || rb.has(i)) && only(&c.a, i) && only(&c.b, i)
            })
            .map(|(k, _)| k)
            .collect()
    };
    let latest = path.stuck.as_ref().map(|s| &s.latest);
    let mut items = Vec::new();
    let mut k = 0;
    while k < path.events.len() {
        let e = &path.events[k];
        match &e.kind {
            PathEventKind::Read { access, rmw, .. } if p.addresses[access.addr].loc == loc => {
                if *rmw {
                    // A fairness read that is an RMW's read half: not a
                    // shape this reading covers.
                    if latest.is_some_and(|l| l.has(k)) {
                        return None;
                    }
                    let w = path.events.get(k + 1)?;
                    let PathEventKind::Write {
                        value: Expr::Rmw(op, old, args),
                        rmw: true,
                        ..
                    } = &w.kind
                    else {
                        return None;
                    };
                    if !matches!(**old, Expr::Read(r) if r == k) {
                        return None;
                    }
                    let args = args
                        .iter()
                        .map(|a| match a {
                            Expr::Const(v) => Some(*v),
                            _ => None,
                        })
                        .collect::<Option<_>>()?;
                    items.push((
                        k,
                        Item::Rmw {
                            checks: checks(k),
                            op: *op,
                            args,
                        },
                    ));
                    k += 2;
                    continue;
                }
                let latest = latest.is_some_and(|l| l.has(k));
                let checks = checks(k);
                // A read nothing depends on can take any position between
                // its neighbours: it constrains nothing.
                if latest || !checks.is_empty() {
                    items.push((k, Item::Read { checks, latest }));
                }
            }
            PathEventKind::Write { access, .. } if p.addresses[access.addr].loc == loc => {
                return None;
            }
            _ => {}
        }
        k += 1;
    }
    let mut rmws_from = vec![0u16; items.len() + 1];
    for j in (0..items.len()).rev() {
        rmws_from[j] = rmws_from[j + 1] + u16::from(matches!(items[j].1, Item::Rmw { .. }));
    }
    Some(Seq {
        path,
        items,
        rmws_from,
    })
}

/// Whether the branch outcomes `checks` of `path` hold when event `i`
/// returns `v`.
fn holds(path: &Path, checks: &[usize], i: usize, v: Value) -> bool {
    let mut read = |j: usize| (j == i).then_some(v);
    checks.iter().all(|&c| {
        let c = &path.constraints[c];
        match (c.a.eval(&mut read), c.b.eval(&mut read)) {
            (Some(a), Some(b)) => c.cmp.holds(a, b) == c.holds,
            _ => true,
        }
    })
}

/// Whether some interleaving of `combo`'s accesses of chain `loc` satisfies
/// every read (see the module documentation); `true` when in doubt.
fn feasible(p: &Program, combo: &[&Path], loc: usize) -> bool {
    let mut seqs: Vec<Seq<'_>> = Vec::new();
    // Threads whose only access is one RMW that nothing depends on (an
    // agent's complete-tx, a lone arrival): interchangeable by operation.
    let mut pools: Vec<(RmwOp, SmallVec<[Value; 2]>, u16)> = Vec::new();
    let mut constrained = false;
    for path in combo {
        let Some(s) = items(p, path, loc) else {
            return true;
        };
        match s.items.as_slice() {
            [] => {}
            [(_, Item::Rmw { checks, op, args })] if checks.is_empty() => {
                match pools.iter_mut().find(|q| q.0 == *op && q.1 == *args) {
                    Some(q) => q.2 += 1,
                    None => pools.push((*op, args.clone(), 1)),
                }
            }
            _ => {
                constrained |= s.items.iter().any(|(_, it)| match it {
                    Item::Read { .. } => true,
                    Item::Rmw { checks, .. } => !checks.is_empty(),
                });
                seqs.push(s);
            }
        }
    }
    if !constrained || seqs.len() > 200 || pools.len() > 200 {
        return true;
    }
    // A state: each sequence's position, each pool's remaining count, the
    // current value.
    type Key = (SmallVec<[u16; 8]>, Value);
    let start: Key = (
        seqs.iter()
            .map(|_| 0u16)
            .chain(pools.iter().map(|q| q.2))
            .collect(),
        p.locations[loc].init,
    );
    let ns = seqs.len();
    let mut seen: HashSet<Key> = HashSet::new();
    let mut stack = vec![start.clone()];
    seen.insert(start);
    while let Some((pos, v)) = stack.pop() {
        let writes_left: u32 = (0..ns)
            .map(|j| u32::from(seqs[j].rmws_from[pos[j] as usize]))
            .chain(pos[ns..].iter().map(|&c| u32::from(c)))
            .sum();
        if writes_left == 0 && (0..ns).all(|j| pos[j] as usize == seqs[j].items.len()) {
            return true;
        }
        let mut push = |key: Key| {
            if seen.insert(key.clone()) {
                stack.push(key);
            }
        };
        for j in 0..ns {
            let s = &seqs[j];
            let Some((i, it)) = s.items.get(pos[j] as usize) else {
                continue;
            };
            let mut next = pos.clone();
            next[j] += 1;
            match it {
                Item::Read { checks, latest } => {
                    if (!latest || writes_left == 0) && holds(s.path, checks, *i, v) {
                        push((next, v));
                    }
                }
                Item::Rmw { checks, op, args } => {
                    if holds(s.path, checks, *i, v) {
                        push((next, op.apply(v, args)));
                    }
                }
            }
        }
        for (q, (op, args, _)) in pools.iter().enumerate() {
            if pos[ns + q] > 0 {
                let mut next = pos.clone();
                next[ns + q] -= 1;
                push((next, op.apply(v, args)));
            }
        }
        if seen.len() > STATE_CAP {
            return true;
        }
    }
    false
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

    /// (stuck combinations, those left out).
    fn count(text: &str) -> (usize, usize) {
        let p = lowered(text);
        let c = MbarChains::new(&p).expect("the pipeline's barriers are chains");
        let paths = crate::ax::unfold_all(
            &p,
            &crate::ax::AxOptions::default(),
            true,
            &crate::limits::Budget::unlimited(),
        )
        .unwrap();
        let (mut stuck, mut out) = (0, 0);
        let mut combos = crate::ax::combos::Combos::new(&p, &paths);
        while let Some(combo) = combos.next() {
            if combo.iter().any(|q| q.stuck.is_some()) {
                stuck += 1;
                out += usize::from(c.impossible(&p, &combo));
            }
        }
        (stuck, out)
    }

    #[test]
    fn the_pipelines_barriers_are_chains_and_its_data_is_not() {
        let p = lowered(&families::pipeline(2, 2));
        let c = MbarChains::new(&p).unwrap();
        let mut names: Vec<&str> = (0..p.locations.len())
            .filter(|&l| c.chain[l])
            .map(|l| p.locations[l].name.as_str())
            .collect();
        names.sort_unstable();
        assert_eq!(names, ["empty0", "empty1", "full0", "full1"]);
    }

    #[test]
    fn every_stuck_combination_of_a_correct_pipeline_is_left_out() {
        for (s, r) in [(1, 1), (1, 2), (2, 2), (2, 3), (3, 2)] {
            let (stuck, out) = count(&families::pipeline(s, r));
            assert!(stuck > 0, "{s}x{r}");
            assert_eq!(out, stuck, "{s}x{r}");
        }
    }

    #[test]
    fn the_wrong_parity_keeps_the_combination_that_hangs() {
        let text = families::pipeline(2, 2).replacen("[empty0], 0", "[empty0], 1", 1);
        let (stuck, out) = count(&text);
        assert!(out < stuck, "{out} of {stuck} left out");
    }

    #[test]
    fn an_init_of_the_barrier_makes_no_chain() {
        // `mbarrier.init` is a weak store: the barrier's writes are no
        // longer one chain.
        let text = families::pipeline(1, 1).replacen(
            "mbarrier.arrive.shared::cta _, [empty0]",
            "mbarrier.init.shared::cta [empty0], 1",
            1,
        );
        let p = lowered(&text);
        let c = MbarChains::new(&p).unwrap();
        let empty = p.locations.iter().position(|l| l.name == "empty0").unwrap();
        let full = p.locations.iter().position(|l| l.name == "full0").unwrap();
        assert!(!c.chain[empty]);
        assert!(c.chain[full]);
    }
}
