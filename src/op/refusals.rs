//! The steps the machine does not take in a state, each with the check that
//! refuses it ([`Reason`]): what `trace` and `step` show as "blocked" or
//! "may not read".

use serde::Serialize;

use crate::ir::Instr;
use crate::rel::{Bits, members};

use super::Machine;
use super::reason::Reason;
use super::state::State;
use super::steps::{Plan, Retire};
use super::window::Windows;

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
