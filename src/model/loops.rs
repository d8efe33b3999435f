//! Loops: which back edges both engines may treat as "wait until the exit
//! condition holds" (they are never taken), and the unrolling bound for the
//! rest. `docs/loops.md` gives the arguments in full.
//!
//! * A **spin loop** is a back edge `pc → head` whose body `head..=pc` only
//!   reads memory and computes on registers, leaves only by forward branches
//!   (or by falling through the back edge), is entered only at its head,
//!   defines every register it writes before its first exit, and reads no
//!   register value from an earlier iteration. Removing a failed iteration
//!   from a consistent execution leaves a consistent execution with the same
//!   final state (Dat3M's spin-loop reduction).
//! * A **retry loop** is the same shape with exactly one `atom.cas` in the
//!   body, whose back edge is taken only when the CAS failed, on a location
//!   all of whose accesses are pairwise morally strong. A failed CAS writes
//!   back the value it read, and removing such an iteration also leaves a
//!   consistent execution with the same final state.
//!
//! For termination, both kinds repeat the same iteration forever exactly
//! when that iteration, reading the coherence-latest values, goes back.
//!
//! Every other back edge may be taken at most `bound` times per execution of
//! the thread; a path that would take it once more is cut, and the result
//! says so (herd's "loop unrolling" warning).

use crate::ir::{Instr, Operand, Program, Proxy, RmwOp, ThreadId};
use crate::model::sync::placement_of;

/// A spin or retry loop: its back edge is never taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpinLoop {
    /// First instruction of the body (the back edge's target).
    pub head: usize,
    /// The back edge.
    pub back: usize,
    /// For a retry loop: the `atom.cas` of the body.
    pub retry: Option<usize>,
    /// How many iterations that go back must be kept (0 for most loops):
    /// the number of registers that some way out of the body leaves
    /// unwritten, whose final value may come from an iteration that went
    /// back (the last one that wrote it).
    pub keep: u32,
}

impl SpinLoop {
    /// Whether the body is `head..=back`'s instruction `pc`.
    pub fn contains(&self, pc: usize) -> bool {
        (self.head..=self.back).contains(&pc)
    }
}

/// Per-instruction loop facts of one thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopInfo {
    /// `back_edge[pc]`: the instruction is a branch to `target <= pc`.
    pub back_edge: Vec<bool>,
    /// `spin[pc]`: the back edge at `pc` is never taken (it closes a spin
    /// loop or a retry loop).
    pub spin: Vec<bool>,
    /// The spin and retry loops (their bodies are disjoint).
    pub loops: Vec<SpinLoop>,
    /// `body_of[pc]`: the loop of [`LoopInfo::loops`] whose body holds `pc`.
    pub body_of: Vec<Option<usize>>,
}

impl LoopInfo {
    /// Analyse thread `t` of `p`. `retry`: recognise retry loops (else they
    /// are bounded loops; turned off only to check the reduction).
    pub fn of(p: &Program, t: ThreadId, retry: bool) -> LoopInfo {
        let th = &p.threads[t];
        let n = th.code.len();
        let mut info = LoopInfo {
            back_edge: vec![false; n],
            spin: vec![false; n],
            loops: Vec::new(),
            body_of: vec![None; n],
        };
        for (pc, i) in th.code.iter().enumerate() {
            if let Instr::Branch { target, .. } = i {
                if *target <= pc {
                    info.back_edge[pc] = true;
                    let l = match body_shape(p, t, *target, pc) {
                        Some((None, keep)) => Some(SpinLoop {
                            head: *target,
                            back: pc,
                            retry: None,
                            keep,
                        }),
                        Some((Some(cas), keep)) if retry && is_retry(p, t, *target, pc, cas) => {
                            Some(SpinLoop {
                                head: *target,
                                back: pc,
                                retry: Some(cas),
                                keep,
                            })
                        }
                        _ => None,
                    };
                    // Kept iterations are counted per execution of the
                    // thread, so a loop that keeps some must not be entered
                    // twice: no enclosing loop.
                    let enclosed = |l: &SpinLoop| {
                        th.code.iter().enumerate().any(|(b, i)| {
                            matches!(i, Instr::Branch { target, .. } if *target <= l.head && b > l.back)
                        })
                    };
                    let l = l.filter(|l| l.keep == 0 || !enclosed(l));
                    if let Some(l) = l {
                        info.spin[pc] = true;
                        let idx = info.loops.len();
                        for b in &mut info.body_of[l.head..=l.back] {
                            *b = Some(idx);
                        }
                        info.loops.push(l);
                    }
                }
            }
        }
        info
    }
    /// Whether the thread has any back edge that is not a spin or retry loop.
    pub fn has_bounded_loops(&self) -> bool {
        self.back_edge
            .iter()
            .zip(&self.spin)
            .any(|(b, s)| *b && !*s)
    }
    /// The spin or retry loop whose body holds `pc`.
    pub fn loop_at(&self, pc: usize) -> Option<&SpinLoop> {
        self.body_of
            .get(pc)
            .copied()
            .flatten()
            .map(|i| &self.loops[i])
    }
    /// For the back edge at `pc`: how many times it may be taken, and what
    /// happens beyond: a spin or retry loop's path is dropped ([`Beyond::Drop`],
    /// no final state is lost), another loop's is cut at `bound`.
    pub fn limit(&self, pc: usize, bound: u32) -> (u32, Beyond) {
        match self.loop_at(pc) {
            Some(l) if self.spin[pc] => (l.keep, Beyond::Drop),
            _ => (bound, Beyond::Cut),
        }
    }
    /// Whether the back edge at `pc` counts its takes (a bounded loop, or a
    /// spin loop that keeps some iterations).
    pub fn counts(&self, pc: usize) -> bool {
        self.back_edge[pc] && self.limit(pc, 1).0 > 0
    }
}

/// What happens to a path that would take a back edge beyond its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Beyond {
    /// It is dropped: every final state has an execution within the limit.
    Drop,
    /// It is cut and the result says so: longer executions are not explored.
    Cut,
}

/// The loop analysis of every thread of `p`.
pub fn analyse(p: &Program, retry: bool) -> Vec<LoopInfo> {
    (0..p.threads.len())
        .map(|t| LoopInfo::of(p, t, retry))
        .collect()
}

/// Whether an instruction reads memory (a load, a wait, an RMW).
pub fn reads_memory(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Load { .. } | Instr::MbarWait { .. } | Instr::Rmw { .. }
    )
}

/// The shape shared by spin and retry loops (conditions 1–5 of
/// `docs/loops.md`, with at most one `atom.cas` allowed in condition 1).
/// `None`: neither; `Some((None, keep))`: a spin loop; `Some((Some(pc),
/// keep))`: a candidate retry loop with its CAS at `pc`. `keep`: see
/// [`SpinLoop::keep`].
///
/// The body may branch forward inside itself (CADP's loops do), so it is a
/// small acyclic graph; registers are checked along every path through it.
fn body_shape(p: &Program, t: ThreadId, head: usize, back: usize) -> Option<(Option<usize>, u32)> {
    let th = &p.threads[t];
    let body = head..=back;
    // 3. Entered only at its head.
    let jumps_in = th.code.iter().enumerate().any(|(pc, i)| {
        matches!(i, Instr::Branch { target, .. } if *target > head && *target <= back && !body.contains(&pc))
    });
    if jumps_in {
        return None;
    }
    let mut cas = None;
    for pc in body.clone() {
        match &th.code[pc] {
            // 1. Reads and register computation. A failed mbarrier wait reads
            // the barrier and changes nothing else, so it spins like a load.
            Instr::Load { .. }
            | Instr::MbarWait { .. }
            | Instr::Mov { .. }
            | Instr::Arith { .. } => {}
            Instr::Rmw {
                op: RmwOp::Cas,
                dst: Some(_),
                ..
            } if cas.is_none() => cas = Some(pc),
            // 2. The back edge itself (an exit when it falls through), or a
            // forward branch (inside the body, or out of it: an exit).
            Instr::Branch { target, .. } if pc == back || *target > pc => {}
            _ => return None,
        }
    }
    let defined: Vec<usize> = body.clone().filter_map(|pc| th.code[pc].def()).collect();
    // Registers defined on every path from the head to each instruction
    // (`None`: not reached from the head).
    let mut must: Vec<Option<Vec<usize>>> = vec![None; back - head + 2];
    must[0] = Some(Vec::new());
    let mut exits: Vec<Vec<usize>> = Vec::new();
    for pc in body.clone() {
        let Some(here) = must[pc - head].clone() else {
            continue;
        };
        let i = &th.code[pc];
        // 5. No register carries a value from one iteration to the next: a
        // register the body writes is written before the body reads it.
        if i.uses()
            .iter()
            .any(|r| defined.contains(r) && !here.contains(r))
        {
            return None;
        }
        let mut after = here.clone();
        if let Some(d) = i.def() {
            if !after.contains(&d) {
                after.push(d);
            }
        }
        let mut flow = |to: usize, regs: &Vec<usize>| {
            if to > back {
                exits.push(regs.clone());
            } else if to > pc {
                let slot = &mut must[to - head];
                *slot = Some(match slot.take() {
                    None => regs.clone(),
                    Some(old) => old.into_iter().filter(|r| regs.contains(r)).collect(),
                });
            }
        };
        match i {
            Instr::Branch { cond, target } => {
                if pc != back {
                    flow(*target, &after);
                }
                if cond.is_some() {
                    flow(pc + 1, &after);
                }
            }
            _ => flow(pc + 1, &after),
        }
    }
    // 4. A register that some exit leaves unwritten keeps the value of the
    // last iteration that went back and wrote it: one such iteration per
    // register must be kept.
    let mut leaky: Vec<usize> = defined
        .iter()
        .copied()
        .filter(|r| exits.iter().any(|regs| !regs.contains(r)))
        .collect();
    leaky.sort_unstable();
    leaky.dedup();
    Some((cas, leaky.len() as u32))
}

/// Whether the candidate retry loop `head..=back` with its CAS at `cas`
/// is a retry loop: every iteration runs the CAS, the back edge is taken
/// only after it failed, and every access to the CAS's location is morally
/// strong with every other.
fn is_retry(p: &Program, t: ThreadId, head: usize, back: usize, cas: usize) -> bool {
    let code = &p.threads[t].code;
    let Instr::Rmw {
        dst: Some(r),
        args,
        access,
        ..
    } = &code[cas]
    else {
        return false;
    };
    let expected = args[0];
    // Every iteration runs the CAS (no branch before it), so a thread is
    // before the CAS of its iteration exactly when its pc is.
    if code[head..cas]
        .iter()
        .any(|i| matches!(i, Instr::Branch { .. }))
    {
        return false;
    }
    // The expected operand is the same in every iteration.
    if let Operand::Reg(e) = expected {
        if code[head..=back].iter().any(|i| i.def() == Some(e)) {
            return false;
        }
    }
    let compares = |a: &Operand, b: &Operand| {
        (*a == Operand::Reg(*r) && *b == expected) || (*b == Operand::Reg(*r) && *a == expected)
    };
    // What is known about the CAS on each path, as a set of these facts.
    const NOT_RUN: u8 = 1; // the CAS has not run in this iteration
    const PENDING: u8 = 2; // it ran, `r` holds its result, outcome unknown
    const FAILED: u8 = 4; // it ran and failed
    const OTHER: u8 = 8; // it ran and succeeded, or nothing is known
    let mut facts = vec![0u8; back - head + 1];
    facts[0] = NOT_RUN;
    for pc in head..=back {
        let mut f = facts[pc - head];
        if f == 0 {
            continue;
        }
        let i = &code[pc];
        if pc == cas {
            f = PENDING;
        } else if i.def() == Some(*r) && f & PENDING != 0 {
            f = (f & !PENDING) | OTHER;
        }
        // A comparison of `r` with the expected value decides PENDING.
        let (on_taken, on_fallthrough) = match i {
            Instr::Branch {
                cond: Some((cmp, a, b)),
                ..
            } if compares(a, b) && f & PENDING != 0 => {
                use crate::ir::BranchCmp::{Eq, Ne};
                let decide = |failed: bool| (f & !PENDING) | if failed { FAILED } else { OTHER };
                match cmp {
                    Ne => (decide(true), decide(false)),
                    Eq => (decide(false), decide(true)),
                    _ => (f, f),
                }
            }
            _ => (f, f),
        };
        match i {
            Instr::Branch { cond, target } => {
                if pc == back {
                    // Going back: the CAS did not run, or failed.
                    if on_taken & !(NOT_RUN | FAILED) != 0 {
                        return false;
                    }
                } else if *target <= back {
                    facts[*target - head] |= on_taken;
                }
                if cond.is_some() && pc < back {
                    facts[pc + 1 - head] |= on_fallthrough;
                }
            }
            _ if pc < back => facts[pc + 1 - head] |= f,
            _ => {}
        }
    }
    all_accesses_morally_strong(p, p.addresses[access.addr].loc, access.addr)
}

/// Whether every access to location `loc` in `p` is strong, generic and
/// through virtual address `va`'s owner, and every two accesses of
/// different threads have scopes that include each other's thread: then
/// all of them (and the initial write) are pairwise morally strong, and
/// coherence orders every two writes to `loc`.
fn all_accesses_morally_strong(p: &Program, loc: usize, addr: usize) -> bool {
    let va = p.addresses[addr].va;
    let mut accesses = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        for (pc, i) in th.code.iter().enumerate() {
            let touches = match i {
                Instr::Load { access, .. }
                | Instr::Store { access, .. }
                | Instr::Rmw { access, .. } => Some(*access),
                Instr::MbarWait { addr, .. } if p.addresses[*addr].loc == loc => return false,
                Instr::AsyncCopy { dst, src, .. } => {
                    let src_here =
                        matches!(src, crate::ir::AsyncSrc::Addr(a) if p.addresses[*a].loc == loc);
                    if p.addresses[*dst].loc == loc || src_here {
                        return false;
                    }
                    None
                }
                _ => None,
            };
            let Some(a) = touches.filter(|a| p.addresses[a.addr].loc == loc) else {
                continue;
            };
            let Some(scope) = a.scope else { return false };
            if a.proxy != Proxy::Generic || p.addresses[a.addr].va != va {
                return false;
            }
            accesses.push((t, placement_of(p, t, pc), scope));
        }
    }
    accesses.iter().all(|(ta, pa, sa)| {
        accesses
            .iter()
            .all(|(tb, pb, sb)| ta == tb || (pa.includes(*sa, pb) && pb.includes(*sb, pa)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus;

    fn info(src: &str, t: usize) -> LoopInfo {
        let tests =
            litmus::parse_source("t.litmus", src).unwrap_or_else(|e| panic!("{}", e.rendered()));
        LoopInfo::of(&tests[0].program, t, true)
    }

    #[test]
    fn a_loop_carried_register_is_not_a_spin_loop() {
        // r2 accumulates across iterations: dropping a failed iteration
        // would change when the loop exits.
        let src = "PTX t\n{ x=1; }\n P0@cta 0,gpu 0 ;\n LC00: ;\n ld.relaxed.gpu r1, x ;\n add r2, r2, r1 ;\n bne r2, 5, LC00 ;\nexists (0==0)\n";
        let i = info(src, 0);
        assert_eq!(i.back_edge, vec![false, false, true]);
        assert_eq!(i.spin, vec![false, false, false]);
    }

    #[test]
    fn a_cas_lock_is_a_retry_loop() {
        let src = "PTX t\n{ m=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n LC00: | LC10: ;\n atom.acquire.gpu.cas r0, m, 0, 1 | atom.acquire.gpu.cas r0, m, 0, 1 ;\n bne r0, 0, LC00 | bne r0, 0, LC10 ;\n st.release.gpu m, 0 | st.release.gpu m, 0 ;\nexists (0==0)\n";
        let i = info(src, 0);
        assert_eq!(
            i.loops,
            vec![SpinLoop {
                head: 0,
                back: 1,
                retry: Some(0),
                keep: 0,
            }]
        );
        // A weak access to the lock breaks moral strength: no longer a retry loop.
        let weak = src.replace("st.release.gpu m, 0 | st", "st.weak m, 0 | st");
        assert!(info(&weak, 0).loops.is_empty());
        // A `.cta` CAS does not include the other CTA.
        let cta = src.replace(
            "atom.acquire.gpu.cas r0, m, 0, 1 |",
            "atom.acquire.cta.cas r0, m, 0, 1 |",
        );
        assert!(info(&cta, 0).loops.is_empty());
        // Going back when the CAS *succeeded* is not a retry.
        let wrong = src.replace("bne r0, 0, LC00", "beq r0, 0, LC00");
        assert!(info(&wrong, 0).loops.is_empty());
    }
}
