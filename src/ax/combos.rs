//! Path combinations: one path per thread, where an agent's path follows
//! from its issuer's (`docs/async.md`, "Branching issuers").
//!
//! An agent performs one execution of one asynchronous operation. If its
//! issuer's path performs that execution, the agent runs its whole
//! (branch-free) path; if not — a branch skipped the operation, a loop ran
//! fewer times, the issuer stopped before it — the agent **never starts**:
//! its path is the empty one, which counts as finished and is never stuck.
//! So only the source threads' paths are chosen, in odometer order (thread
//! 0 fastest, as before agents existed), and each agent's follows.
//!
//! With a [`BarrierSets`] filter ([`Combos::filtered`]) the same order is
//! walked depth first, from the slowest thread down, and a prefix that no
//! barrier plan admits is left with everything under it: the combinations
//! handed out are the plain walk's, less those.

use crate::ir::{Program, ThreadId};

use super::barrier_sets::BarrierSets;
use super::unfold::Path;

/// How an agent's path is picked: its issuer, the instruction and which
/// execution of it, and the indices of its full and its empty path.
struct Follows {
    issuer: ThreadId,
    pc: usize,
    exec: usize,
    full: usize,
    empty: usize,
}

/// The path combinations of a program, one at a time.
pub struct Combos<'a> {
    paths: &'a [Vec<Path>],
    follows: Vec<Option<Follows>>,
    idx: Vec<usize>,
    done: bool,
    /// Prune prefixes no barrier plan admits (see [`Combos::filtered`]).
    filter: Option<&'a BarrierSets>,
    /// With a filter: the source threads, slowest first.
    order: Vec<ThreadId>,
    /// With a filter: a combination has been handed out.
    started: bool,
}

impl<'a> Combos<'a> {
    /// The combinations of `paths` (per thread of `p`, from
    /// [`super::unfold::unfold`], which gives every agent its full path
    /// and its empty one).
    pub fn new(p: &Program, paths: &'a [Vec<Path>]) -> Combos<'a> {
        let follows = p
            .threads
            .iter()
            .zip(paths)
            .map(|(th, ps)| {
                let a = th.agent.as_ref()?;
                // An agent is branch-free and never stuck at its start, so
                // unfolding gives it exactly these two paths: following the
                // issuer loses nothing only if there is no third.
                assert_eq!(
                    ps.len(),
                    2,
                    "{} has its full path and its empty one",
                    th.name
                );
                Some(Follows {
                    issuer: a.issuer,
                    pc: a.spawn_pc,
                    exec: a.exec,
                    full: ps
                        .iter()
                        .position(|q| !q.events.is_empty())
                        .expect("an agent's path starts with its await"),
                    empty: ps
                        .iter()
                        .position(|q| q.events.is_empty())
                        .expect("unfold gives every agent its empty path"),
                })
            })
            .collect();
        let order = (0..paths.len())
            .rev()
            .filter(|&t| p.threads[t].agent.is_none())
            .collect();
        Combos {
            paths,
            follows,
            idx: vec![0; paths.len()],
            done: paths.iter().any(Vec::is_empty),
            filter: None,
            order,
            started: false,
        }
    }

    /// The combinations of [`Combos::new`], in the same order, less those
    /// that `filter` shows no barrier plan admits: a prefix (the slowest
    /// threads' paths) it refuses is never extended.
    pub fn filtered(p: &Program, paths: &'a [Vec<Path>], filter: &'a BarrierSets) -> Combos<'a> {
        Combos {
            filter: Some(filter),
            ..Combos::new(p, paths)
        }
    }

    /// With a filter: move `idx` to the next combination whose every prefix
    /// the filter admits, at or after the current one (`depth` source
    /// threads, slowest first, are chosen and admitted). False after the last.
    fn seek(&mut self, filter: &BarrierSets, mut depth: usize) -> bool {
        let mut chosen: Vec<Option<usize>> = vec![None; self.idx.len()];
        for &t in &self.order[..depth] {
            chosen[t] = Some(self.idx[t]);
        }
        loop {
            if depth == self.order.len() {
                return true;
            }
            let t = self.order[depth];
            if self.idx[t] >= self.paths[t].len() {
                // This thread's paths are spent: back to the one above.
                self.idx[t] = 0;
                chosen[t] = None;
                if depth == 0 {
                    return false;
                }
                depth -= 1;
                let u = self.order[depth];
                chosen[u] = None;
                self.idx[u] += 1;
                continue;
            }
            chosen[t] = Some(self.idx[t]);
            if filter.partial_ok(&chosen) {
                depth += 1;
                if let Some(&u) = self.order.get(depth) {
                    self.idx[u] = 0;
                }
            } else {
                chosen[t] = None;
                self.idx[t] += 1;
            }
        }
    }

    /// The next combination, or `None` after the last.
    #[allow(clippy::should_implement_trait)] // it lends out paths, like an iterator would
    pub fn next(&mut self) -> Option<Vec<&'a Path>> {
        if self.done {
            return None;
        }
        if let Some(filter) = self.filter {
            let found = if !self.started {
                self.started = true;
                self.seek(filter, 0)
            } else if let Some(&last) = self.order.last() {
                // Past the combination handed out last.
                self.idx[last] += 1;
                self.seek(filter, self.order.len() - 1)
            } else {
                false
            };
            if !found {
                self.done = true;
                return None;
            }
            return Some(self.current());
        }
        let combo = self.current();
        // Odometer over the source threads.
        let mut t = 0;
        loop {
            if t == self.idx.len() {
                self.done = true;
                break;
            }
            if self.follows[t].is_none() {
                self.idx[t] += 1;
                if self.idx[t] < self.paths[t].len() {
                    break;
                }
                self.idx[t] = 0;
            }
            t += 1;
        }
        Some(combo)
    }

    /// The combination `idx` stands for, each agent's path following its
    /// issuer's.
    fn current(&mut self) -> Vec<&'a Path> {
        for (t, f) in self.follows.iter().enumerate() {
            if let Some(f) = f {
                let issued = self.paths[f.issuer][self.idx[f.issuer]]
                    .point(f.pc, f.exec)
                    .is_some();
                self.idx[t] = if issued { f.full } else { f.empty };
            }
        }
        self.idx
            .iter()
            .enumerate()
            .map(|(t, &i)| &self.paths[t][i])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ax::AxOptions;
    use crate::limits::Budget;

    /// P0 issues a TMA load only when it reads `g == 1`, and another one in
    /// a loop that runs twice.
    const SRC: &str = "PTX t\n{ s @ shared cta 0 = 0; b @ mbarrier cta 0 = 1; g=0; h=0; }\n \
         P0@cta 0,cluster 0,gpu 0 | P1@cta 0,cluster 0,gpu 0 ;\n \
         ld.relaxed.gpu r0, g | st.relaxed.gpu g, 1 ;\n \
         beq r0, 0, L | ;\n \
         cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [s], [h], 4, [b] | ;\n \
         L: | ;\n mov r1, 0 | ;\n M: | ;\n \
         cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [s], [h], 4, [b] | ;\n \
         add r1, r1, 1 | ;\n bne r1, 2, M | ;\nexists (0==0)\n";

    #[test]
    fn each_agent_runs_exactly_when_its_issuer_performs_its_execution() {
        let tests = crate::litmus::parse_source("t.litmus", SRC).unwrap();
        let p = crate::model::lower::lower(&tests[0].program, 2);
        // The guarded copy (pc 2) and three executions of the looped one (pc 4).
        let agents: Vec<(usize, usize)> = p
            .threads
            .iter()
            .filter_map(|th| th.agent.as_ref().map(|a| (a.spawn_pc, a.exec)))
            .collect();
        assert_eq!(agents, vec![(2, 0), (4, 0), (4, 1), (4, 2)]);
        let paths =
            crate::ax::unfold_all(&p, &AxOptions::default(), false, &Budget::unlimited()).unwrap();
        let mut combos = Combos::new(&p, &paths);
        let mut seen = Vec::new();
        while let Some(c) = combos.next() {
            let issued = |pc: usize, exec: usize| c[0].point(pc, exec).is_some();
            let started: Vec<bool> = c[2..].iter().map(|q| !q.events.is_empty()).collect();
            assert_eq!(
                started,
                vec![issued(2, 0), issued(4, 0), issued(4, 1), issued(4, 2)]
            );
            seen.push(started);
        }
        // P0 has two paths (the guard taken or not) and P1 one: agents do
        // not multiply the combinations. The loop runs twice on both, so
        // its third agent never starts.
        seen.sort();
        assert_eq!(
            seen,
            vec![
                vec![false, true, true, false],
                vec![true, true, true, false]
            ]
        );
    }
}
