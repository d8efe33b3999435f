//! The speculative window of a thread: the instructions from its retire
//! pointer onwards, along the control-flow path fixed by the registers known
//! so far. Loads bound early (and RMWs issued early) contribute their values;
//! the window ends at the first branch whose condition is still unknown, at
//! a spin-loop back edge that would be taken, or at the loop bound.

use smallvec::SmallVec;
use std::cell::OnceCell;

use crate::ir::{Instr, Operand, Value};
use crate::rel::Bits;

use super::Machine;
use super::state::State;
use crate::model::loops::Beyond;

/// One instruction of the window.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Instruction index.
    pub pc: usize,
    /// Its slot, for instructions that have one.
    pub slot: Option<usize>,
    /// Program-order position in the thread.
    pub seq: u16,
    /// Register values before it (`None` = depends on an unbound load).
    pub regs: SmallVec<[Option<Value>; 8]>,
}

/// How the window ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The thread's code ends.
    Finished,
    /// A branch whose condition is not known yet (at this pc).
    Unresolved(usize),
    /// A spin-loop back edge would be taken: this path never finishes.
    Spins,
    /// A bounded back edge would be taken beyond the bound.
    Bound,
    /// Too long to look ahead further.
    Horizon,
}

/// A thread's window.
#[derive(Clone, Debug)]
pub struct Window {
    /// The instructions, the first being the next to retire.
    pub entries: Vec<Entry>,
    /// How it ends.
    pub end: End,
}

const HORIZON: usize = 64;

/// The value of an operand, given register values.
pub fn operand(regs: &[Option<Value>], o: &Operand) -> Option<Value> {
    crate::ir::eval::operand(regs, o)
}

impl<S: Bits> Machine<'_, S> {
    /// Compute thread `t`'s window in `st`.
    pub fn window(&self, st: &State<S>, t: usize) -> Window {
        let th = &self.program.threads[t];
        let ts = &st.threads[t];
        let mut regs: SmallVec<[Option<Value>; 8]> = ts.regs.iter().map(|v| Some(*v)).collect();
        let mut execs = ts.execs.clone();
        let mut back = ts.back_taken.clone();
        let mut pc = ts.pc;
        let mut seq = ts.seq;
        let mut entries = Vec::new();
        if ts.cut {
            return Window {
                entries,
                end: End::Bound,
            };
        }
        if self.cannot_start(st, t) {
            // Nothing of an agent that can no longer start will ever retire:
            // issuing any of it early leads only to dead ends.
            return Window {
                entries,
                end: End::Finished,
            };
        }
        let end = loop {
            let Some(instr) = th.code.get(pc) else {
                break End::Finished;
            };
            if entries.len() >= HORIZON {
                break End::Horizon;
            }
            let slot = self.layout.slot(t, pc, execs[pc] as usize);
            entries.push(Entry {
                pc,
                slot,
                seq,
                regs: regs.clone(),
            });
            execs[pc] = execs[pc].saturating_add(1);
            seq += 1;
            let bound_value = |s: Option<usize>| {
                s.filter(|&s| st.bound.has(s))
                    .map(|s| self.read_value(st, s))
            };
            match instr {
                Instr::Load { dst, .. } => regs[*dst] = bound_value(slot),
                Instr::MbarWait {
                    dst: Some(d),
                    phase,
                    ..
                } => {
                    let (test, arg) = crate::ir::mbar::Test::of(phase);
                    regs[*d] = bound_value(slot)
                        .zip(operand(&regs, &arg))
                        .map(|(v, a)| crate::ir::mbar::done(test, v, a) as Value)
                }
                Instr::Rmw { dst: Some(d), .. } => regs[*d] = bound_value(slot),
                Instr::Mov { .. } | Instr::Arith { .. } => {
                    let (dst, v) = instr.local_effect(&regs).expect("a register instruction");
                    regs[dst] = v;
                }
                Instr::Branch { cond, target } => {
                    let taken = match cond {
                        None => Some(true),
                        Some((c, a, b)) => operand(&regs, a)
                            .zip(operand(&regs, b))
                            .map(|(x, y)| c.holds(x, y)),
                    };
                    match taken {
                        None => {
                            entries.pop();
                            break End::Unresolved(pc);
                        }
                        Some(true) => {
                            let info = &self.layout.loops[t];
                            if info.back_edge[pc] {
                                let (limit, beyond) = info.limit(pc, self.bound);
                                let i = self.back_index[t][pc];
                                if i.map_or(0, |i| back[i] as u32) >= limit {
                                    break match beyond {
                                        Beyond::Drop => End::Spins,
                                        Beyond::Cut => End::Bound,
                                    };
                                }
                                back[i.unwrap()] += 1;
                            }
                            pc = *target;
                            continue;
                        }
                        Some(false) => {}
                    }
                }
                _ => {}
            }
            pc += 1;
        };
        Window { entries, end }
    }
}

/// The windows of every thread of one state, computed on first use.
pub struct Windows<'a, 'p, S: Bits = u128> {
    machine: &'a Machine<'p, S>,
    state: &'a State<S>,
    cache: Vec<OnceCell<Window>>,
}

impl<'a, 'p, S: Bits> Windows<'a, 'p, S> {
    /// Windows of `state`, none computed yet.
    pub fn new(machine: &'a Machine<'p, S>, state: &'a State<S>) -> Self {
        Windows {
            machine,
            state,
            cache: (0..state.threads.len()).map(|_| OnceCell::new()).collect(),
        }
    }
    /// Thread `t`'s window.
    pub fn get(&self, t: usize) -> &Window {
        self.cache[t].get_or_init(|| self.machine.window(self.state, t))
    }
    /// Number of threads.
    pub fn len(&self) -> usize {
        self.cache.len()
    }
    /// Whether there are no threads.
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }
}

impl<S: Bits> Machine<'_, S> {
    /// The next instruction of thread `t` to retire, as a window entry (cheaper
    /// than the whole window); `None` when the thread has finished.
    pub fn head_entry(&self, st: &State<S>, t: usize) -> Option<Entry> {
        let ts = &st.threads[t];
        let th = &self.program.threads[t];
        if ts.cut || ts.pc >= th.code.len() {
            return None;
        }
        let slot = self.layout.slot(t, ts.pc, ts.execs[ts.pc] as usize);
        Some(Entry {
            pc: ts.pc,
            slot,
            seq: ts.seq,
            regs: ts.regs.iter().map(|v| Some(*v)).collect(),
        })
    }
}
