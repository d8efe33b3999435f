//! Why the machine refuses a step, as data: the check functions return a
//! [`Reason`] instead of a bare `false`, and [`Machine::refusals`] lists, for
//! a state, the next step of each thread that the machine does not take and
//! why. `op::trace` phrases them.

use serde::Serialize;

use crate::ir::Instr;
use crate::rel::{Bits, members};

use super::Machine;
use super::state::State;
use super::steps::{Plan, Retire};
use super::window::Windows;

/// The check that refuses a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "check")]
pub enum Reason {
    /// Read `read` may not return `version`: the thread's view already
    /// guarantees `newer` on the read's cache line (`Front⁺`), and `newer` is
    /// coherence-after `version` (Causality, from-read part).
    Stale {
        /// The read.
        read: usize,
        /// The version refused.
        version: usize,
        /// The write the view shows.
        newer: usize,
    },
    /// The accesses to location `loc` would form a cycle of program order and
    /// morally strong reads-from, coherence and from-read (SC per location).
    ScPerLocation {
        /// The location.
        loc: usize,
    },
    /// Coherence would be cyclic at `version`.
    CoherenceCycle {
        /// A version on the cycle.
        version: usize,
    },
    /// `version` would be coherence-below `newer`, which a reader already
    /// knew when it read `version` (an obligation).
    Obligation {
        /// The version read.
        version: usize,
        /// The write the reader knew.
        newer: usize,
    },
    /// The morally strong write `between` would fall between the read and the
    /// write of the RMW `rmw` (Atomicity).
    Atomicity {
        /// The RMW.
        rmw: usize,
        /// The write in between.
        between: usize,
    },
    /// `read` returned `write` and is already in the writing thread's causal
    /// past (Causality, reads-from part).
    ReadsFromFuture {
        /// The write.
        write: usize,
        /// The read.
        read: usize,
    },
    /// Retirement waits: a release it synchronises with, a barrier phase or
    /// an awaited operation has not happened yet.
    Waits,
}

/// A step the machine does not take, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// The thread.
    pub thread: usize,
    /// Its instruction.
    pub pc: usize,
    /// For a read: the version it may not return.
    pub version: Option<usize>,
    /// Why.
    pub reason: Reason,
}

impl<S: Bits> Machine<'_, S> {
    /// The next step of each unfinished thread that the machine refuses in
    /// `st`: for a read at the retire pointer, each version it may not
    /// return; otherwise a retirement whose validation fails, or one that waits.
    pub fn refusals(&self, st: &State<S>) -> Vec<Refusal> {
        let windows = Windows::new(self, st);
        let mut out = Vec::new();
        for t in 0..st.threads.len() {
            if st.threads[t].finished(self.program.threads[t].code.len()) {
                continue;
            }
            let Some(e) = self.head_entry(st, t) else {
                continue;
            };
            let reads = matches!(
                self.program.threads[t].code[e.pc],
                Instr::Load { .. } | Instr::Rmw { .. } | Instr::MbarWait { .. }
            );
            if reads && !self.is_bound(st, &e) {
                let r = e.slot.unwrap();
                let loc = self.layout.slots[r].loc;
                for v in members(st.versions & self.layout.loc_slots[loc] & !S::bit(r)) {
                    let reason = match self.bind_check(st, t, r, v) {
                        Err(why) => Some(why),
                        Ok(()) => {
                            let mut s = st.clone();
                            (!self.bind_in(&mut s, r, v, e.seq))
                                .then_some(Reason::ScPerLocation { loc })
                        }
                    };
                    if let Some(reason) = reason {
                        out.push(Refusal {
                            thread: t,
                            pc: e.pc,
                            version: Some(v),
                            reason,
                        });
                    }
                }
                continue;
            }
            let refusal = |reason| Refusal {
                thread: t,
                pc: e.pc,
                version: None,
                reason,
            };
            match self.try_retire(st, t, &windows) {
                Retire::Blocked => out.push(refusal(Reason::Waits)),
                Retire::Choice => {}
                Retire::Ready(t, e, plan) => {
                    let failed = match plan {
                        Plan::Finish(k) => {
                            self.finish_retire_check(&mut st.clone(), t, &e, k).err()
                        }
                        Plan::Store {
                            issue: Some(value),
                            k,
                        } => {
                            let mut first = None;
                            let mut any_ok = false;
                            for mut s in self.issue_write(st, e.slot.unwrap(), value, e.seq) {
                                match self.finish_retire_check(&mut s, t, &e, k.clone()) {
                                    Ok(()) => any_ok = true,
                                    Err(why) => first = first.or(Some(why)),
                                }
                            }
                            if any_ok { None } else { first }
                        }
                        Plan::Store { issue: None, k } => {
                            self.finish_retire_check(&mut st.clone(), t, &e, k).err()
                        }
                        _ => None,
                    };
                    if let Some(why) = failed {
                        out.push(refusal(why));
                    }
                }
            }
        }
        out
    }
}
