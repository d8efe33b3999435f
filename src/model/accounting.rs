//! What a thread that issues asynchronous operations has issued, committed
//! and arrived at before each of its instructions — when that is the same on
//! every path that reaches the instruction (`docs/async.md`, "Branching
//! issuers").
//!
//! The lowering lays agents, groups and cluster-barrier phases out
//! statically: `cp.async.bulk.wait_group N` becomes an await of the agents
//! in all but the `N` most recent committed groups, `cp.async.mbarrier.arrive`
//! an agent that awaits every earlier `cp.async`, and `barrier.cluster.wait`
//! a wait for the phase the thread's own arrivals have reached. In a thread
//! that branches these depend on the path taken. A forward data-flow
//! analysis over the thread's control-flow graph computes them per
//! instruction; where two paths that meet disagree, the quantity is marked
//! [`Known::Differs`] with the instruction where they met, and an
//! instruction whose lowering needs it is refused ([`super::lower::check`]).
//! Nothing is guessed: what is known is known on every path.
//!
//! The analysis also gives the most executions an instruction can have in
//! one run of the thread ([`executions`]): asynchronous operations inside
//! bounded loops get one agent per execution.

use crate::ir::{Completion, Instr, Thread};

/// A quantity that is the same on every path reaching an instruction, or
/// where two paths first met that disagree about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Known<T> {
    /// The same on every path.
    Same(T),
    /// Paths that meet at instruction `join` disagree.
    Differs {
        /// Where they met (may equal the code length: the thread's end).
        join: usize,
    },
}

impl<T: PartialEq + Clone> Known<T> {
    /// Merge what another path brings at `join`; whether anything changed.
    fn merge(&mut self, other: &Known<T>, join: usize) -> bool {
        match (&*self, other) {
            (Known::Differs { .. }, _) => false,
            (Known::Same(a), Known::Same(b)) if a == b => false,
            (Known::Same(_), Known::Same(_)) => {
                *self = Known::Differs { join };
                true
            }
            (Known::Same(_), Known::Differs { join: j }) => {
                *self = Known::Differs { join: *j };
                true
            }
        }
    }

    /// The value, if it is the same on every path.
    pub fn same(&self) -> Option<&T> {
        match self {
            Known::Same(v) => Some(v),
            Known::Differs { .. } => None,
        }
    }
}

/// The async-groups of one kind (bulk, or non-bulk `cp.async`): operations
/// are named by the instruction that issues them (none lies in a loop).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Groups {
    /// Operations issued since the last commit.
    pub uncommitted: Vec<usize>,
    /// Committed groups, oldest first.
    pub committed: Vec<Vec<usize>>,
    /// Every operation of this kind issued so far (what
    /// `cp.async.mbarrier.arrive` tracks).
    pub issued: Vec<usize>,
}

/// The thread's own `barrier.cluster` arrivals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClusterArrivals {
    /// How many arrives it has performed.
    pub arrives: i64,
    /// It has arrived and not yet waited.
    pub arrived: bool,
}

/// What holds before one instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accounts {
    /// Bulk async-groups (`cp.async.bulk…bulk_group`), then `cp.async` groups.
    pub groups: [Known<Groups>; 2],
    /// Cluster-barrier arrivals.
    pub cluster: Known<ClusterArrivals>,
}

impl Default for Accounts {
    fn default() -> Self {
        Accounts {
            groups: [
                Known::Same(Groups::default()),
                Known::Same(Groups::default()),
            ],
            cluster: Known::Same(ClusterArrivals::default()),
        }
    }
}

/// Index into [`Accounts::groups`]: 0 for bulk groups, 1 for `cp.async`.
pub fn group_kind(bulk: bool) -> usize {
    if bulk { 0 } else { 1 }
}

/// The group an asynchronous operation joins, if any.
pub fn joins_group(i: &Instr) -> Option<usize> {
    match i {
        Instr::AsyncCopy {
            completion: Completion::BulkGroup,
            ..
        } => Some(0),
        Instr::AsyncCopy {
            completion: Completion::AsyncGroup,
            ..
        } => Some(1),
        _ => None,
    }
}

/// Successor instructions of `pc` (the code length stands for the end).
pub fn successors(th: &Thread, pc: usize) -> smallvec::SmallVec<[usize; 2]> {
    match &th.code[pc] {
        Instr::Branch { cond: None, target } => smallvec::smallvec![*target],
        Instr::Branch {
            cond: Some(_),
            target,
        } => smallvec::smallvec![pc + 1, *target],
        _ => smallvec::smallvec![pc + 1],
    }
}

/// The back edges `(target, pc)` whose body `target..=pc` holds `at`.
pub fn enclosing_loops(th: &Thread, at: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    th.code
        .iter()
        .enumerate()
        .filter_map(move |(pc, i)| match i {
            Instr::Branch { target, .. } if *target <= pc && (*target..=pc).contains(&at) => {
                Some((*target, pc))
            }
            _ => None,
        })
}

/// The most times each instruction can execute in one run of the thread
/// when every back edge is taken at most `bound` times (the bound of
/// bounded loops): once, plus once per taken back edge whose body holds it
/// — an instruction runs again only after control jumps back over it.
/// Spin and retry loops never hold an asynchronous operation (their bodies
/// only read), so for those instructions every enclosing back edge is a
/// bounded one.
pub fn executions(th: &Thread, bound: u32) -> Vec<usize> {
    (0..th.code.len())
        .map(|pc| 1 + bound as usize * enclosing_loops(th, pc).count())
        .collect()
}

/// What holds before each instruction of `th` (index `code.len()`: at its
/// end), `None` where no path reaches.
pub fn analyse(th: &Thread) -> Vec<Option<Accounts>> {
    let n = th.code.len();
    let mut at: Vec<Option<Accounts>> = vec![None; n + 1];
    at[0] = Some(Accounts::default());
    // Lowest instruction first, so the join recorded for a disagreement
    // does not depend on anything but the code.
    let mut work = std::collections::BTreeSet::from([0usize]);
    while let Some(pc) = work.pop_first() {
        if pc >= n {
            continue;
        }
        let Some(before) = at[pc].clone() else {
            continue;
        };
        let after = transfer(&th.code[pc], pc, before);
        for next in successors(th, pc) {
            let changed = match &mut at[next] {
                slot @ None => {
                    *slot = Some(after.clone());
                    true
                }
                Some(old) => {
                    let g0 = old.groups[0].merge(&after.groups[0], next);
                    let g1 = old.groups[1].merge(&after.groups[1], next);
                    let c = old.cluster.merge(&after.cluster, next);
                    g0 || g1 || c
                }
            };
            if changed {
                work.insert(next);
            }
        }
    }
    at
}

/// The effect of one instruction.
fn transfer(i: &Instr, pc: usize, mut a: Accounts) -> Accounts {
    match i {
        Instr::AsyncCopy { .. } => {
            if let Some(g) = joins_group(i) {
                if let Known::Same(s) = &mut a.groups[g] {
                    s.uncommitted.push(pc);
                    s.issued.push(pc);
                }
            }
        }
        Instr::CommitGroup { bulk } => {
            if let Known::Same(s) = &mut a.groups[group_kind(*bulk)] {
                let group = std::mem::take(&mut s.uncommitted);
                s.committed.push(group);
            }
        }
        Instr::WaitGroup {
            bulk, all: true, ..
        } => {
            // `wait_all` commits what is pending first.
            if let Known::Same(s) = &mut a.groups[group_kind(*bulk)] {
                let group = std::mem::take(&mut s.uncommitted);
                s.committed.push(group);
            }
        }
        Instr::ClusterBarrier { arrive, .. } => {
            if let Known::Same(c) = &mut a.cluster {
                if *arrive {
                    c.arrives += 1;
                }
                c.arrived = *arrive;
            }
        }
        _ => {}
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus;

    fn thread(src: &str) -> Thread {
        let tests =
            litmus::parse_source("t.litmus", src).unwrap_or_else(|e| panic!("{}", e.rendered()));
        tests[0].program.threads[0].clone()
    }

    #[test]
    fn a_group_committed_on_one_branch_only_is_not_known_after_the_join() {
        let th = thread(
            "PTX t\n{ s @ shared cta 0 = 0; g=0; }\n P0@cta 0,cluster 0,gpu 0 ;\n \
             ld.global r0, g ;\n beq r0, 0, LC00 ;\n \
             cp.async.bulk.global.shared::cta.bulk_group [g], [s], 4 ;\n \
             cp.async.bulk.commit_group ;\n LC00: ;\n cp.async.bulk.wait_group 0 ;\n\
             exists (0==0)\n",
        );
        let at = analyse(&th);
        assert_eq!(
            at[3].as_ref().unwrap().groups[0],
            Known::Same(Groups {
                uncommitted: vec![2],
                committed: vec![],
                issued: vec![2],
            })
        );
        assert_eq!(
            at[4].as_ref().unwrap().groups[0],
            Known::Differs { join: 4 }
        );
        // The cluster barrier count is untouched.
        assert_eq!(
            at[4].as_ref().unwrap().cluster,
            Known::Same(ClusterArrivals::default())
        );
    }

    #[test]
    fn executions_count_enclosing_back_edges() {
        let th = thread(
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n mov r0, 0 ;\n LC00: ;\n \
             st.relaxed.gpu x, 1 ;\n add r0, r0, 1 ;\n bne r0, 2, LC00 ;\n \
             st.relaxed.gpu x, 2 ;\nexists (0==0)\n",
        );
        assert_eq!(executions(&th, 2), vec![1, 3, 3, 3, 1]);
        assert_eq!(executions(&th, 0), vec![1, 1, 1, 1, 1]);
    }
}
