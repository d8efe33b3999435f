//! Dead-register elimination for projected runs (`--project condition`;
//! `docs/exploration.md`, "Projection and dead registers").
//!
//! A register is *dead* at a thread's retire pointer `pc` when no
//! instruction reachable from `pc` reads it before writing it, and the
//! projected final state does not list it. Its value can then influence
//! nothing the machine does from that state on — no branch, address,
//! stored value, barrier name or count, window entry (the window evaluates
//! instructions at and after `pc` from the registers at `pc`) — nor the
//! projected outcome. Two states that differ only there have the same
//! futures up to those values, so the explorer sets them to 0 before a state
//! is fingerprinted and stores one state for both.

use smallvec::SmallVec;

use crate::ir::{Program, RegId};
use crate::model::accounting::successors;
use crate::op::state::State;
use crate::rel::Bits;

/// `dead[t][pc]`: the registers of thread `t` dead at `pc` (`pc` = the code
/// length stands for a finished thread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadRegs {
    dead: Vec<Vec<SmallVec<[RegId; 4]>>>,
}

impl DeadRegs {
    /// The dead registers of the (lowered) program `p`, whose registers
    /// `observed[t][r]` the projected final states list (those are never dead).
    pub fn new(p: &Program, observed: &[Vec<bool>]) -> DeadRegs {
        let dead = p
            .threads
            .iter()
            .enumerate()
            .map(|(t, th)| {
                let nregs = th.regs.len();
                let n = th.code.len();
                let seen = |r: usize| observed.get(t).and_then(|o| o.get(r)).copied() == Some(true);
                // live[pc]: live on entry to pc; live[n]: the observed ones.
                let mut live: Vec<Vec<bool>> = vec![vec![false; nregs]; n + 1];
                for (r, l) in live[n].iter_mut().enumerate() {
                    *l = seen(r);
                }
                // Backward fixed point (loops): iterate until nothing changes.
                let mut changed = true;
                while changed {
                    changed = false;
                    for pc in (0..n).rev() {
                        let i = &th.code[pc];
                        let mut now = vec![false; nregs];
                        for s in successors(th, pc) {
                            for (r, l) in live[s.min(n)].iter().enumerate() {
                                now[r] |= *l;
                            }
                        }
                        if let Some(d) = i.def() {
                            if d < nregs {
                                now[d] = false;
                            }
                        }
                        for u in i.uses() {
                            if u < nregs {
                                now[u] = true;
                            }
                        }
                        for (r, l) in now.iter_mut().enumerate() {
                            *l |= seen(r);
                        }
                        if now != live[pc] {
                            live[pc] = now;
                            changed = true;
                        }
                    }
                }
                live.iter()
                    .map(|l| (0..nregs).filter(|&r| !l[r]).collect())
                    .collect()
            })
            .collect();
        DeadRegs { dead }
    }

    /// The registers of thread `t` dead at `pc`.
    pub fn at(&self, t: usize, pc: usize) -> &[RegId] {
        let d = &self.dead[t];
        &d[pc.min(d.len() - 1)]
    }

    /// Set every dead register of `st` to 0 (a thread is copied only if
    /// one of its dead registers is not 0 already).
    pub fn clear<S: Bits>(&self, st: &mut State<S>) {
        for t in 0..st.threads.len() {
            let dead = self.at(t, st.threads[t].pc);
            if dead.iter().any(|&r| st.threads[t].regs[r] != 0) {
                let ts = st.thread_mut(t);
                for &r in dead {
                    ts.regs[r] = 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(text: &str) -> Program {
        crate::litmus::parse_source("dead.litmus", text)
            .unwrap_or_else(|e| panic!("{}", e.rendered()))
            .remove(0)
            .program
    }

    #[test]
    fn a_ticket_nobody_reads_is_dead_after_its_rmw_and_a_spin_register_is_live_in_its_loop() {
        let p = program(
            "PTX dead\n{ c=0; x=0; }\n P0@cta 0,cluster 0,gpu 0 ;\n atom.relaxed.gpu.add r0, c, 1 ;\n LC00: ;\n ld.relaxed.gpu r1, c ;\n bne r1, 1, LC00 ;\n ld.relaxed.gpu r2, x ;\nexists (0:r2 == 0)\n",
        );
        let th = &p.threads[0];
        let reg = |n: &str| th.reg_named(n).unwrap();
        let obs = crate::outcome::observed_regs(&p);
        let d = DeadRegs::new(&p, &obs);
        let (r0, r1, r2) = (reg("r0"), reg("r1"), reg("r2"));
        // Before the RMW every register but the observed r2 is dead (each is
        // written before it is read); after it, r0 stays dead (never read).
        assert!(d.at(0, 0).contains(&r0) && d.at(0, 0).contains(&r1));
        assert!(!d.at(0, 0).contains(&r2));
        assert!(d.at(0, 1).contains(&r0));
        // At the branch, r1 is read: live.
        let bne = th
            .code
            .iter()
            .position(|i| matches!(i, crate::ir::Instr::Branch { .. }))
            .unwrap();
        assert!(!d.at(0, bne).contains(&r1));
        // At the end only the observed register is kept.
        let end = th.code.len();
        assert!(d.at(0, end).contains(&r0) && d.at(0, end).contains(&r1));
        assert!(!d.at(0, end).contains(&r2));
    }
}
