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

use crate::ir::{Program, ThreadId};

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
        Combos {
            paths,
            follows,
            idx: vec![0; paths.len()],
            done: paths.iter().any(Vec::is_empty),
        }
    }

    /// The next combination, or `None` after the last.
    #[allow(clippy::should_implement_trait)] // it lends out paths, like an iterator would
    pub fn next(&mut self) -> Option<Vec<&'a Path>> {
        if self.done {
            return None;
        }
        for (t, f) in self.follows.iter().enumerate() {
            if let Some(f) = f {
                let issued = self.paths[f.issuer][self.idx[f.issuer]]
                    .point(f.pc, f.exec)
                    .is_some();
                self.idx[t] = if issued { f.full } else { f.empty };
            }
        }
        let combo = self
            .idx
            .iter()
            .enumerate()
            .map(|(t, &i)| &self.paths[t][i])
            .collect();
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
}
