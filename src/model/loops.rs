//! Loops: which back edges both engines may treat as "wait until the exit
//! condition holds" (they are never taken), and the unrolling bound for the
//! rest. `docs/loops.md` gives the arguments in full.
//!
//! * A **spin loop** is a back edge `pc → head` whose body `head..=pc` only
//!   reads memory, fences and computes on registers, leaves only by forward
//!   branches (or by falling through the back edge), is entered only at its
//!   head, defines every register it writes before its first exit, and reads
//!   no register value from an earlier iteration. Removing a failed
//!   iteration from a consistent execution leaves a consistent execution
//!   with the same final state (Dat3M's spin-loop reduction). A *closed*
//!   loop (no way out at all) needs only the first three: no final state
//!   goes through it.
//! * A **retry loop** is the same shape with exactly one `atom.cas` in the
//!   body, whose back edge is taken only when the CAS failed (whichever
//!   branch form shows it: `bne r, E`, `beq r, V` with `V != E`, either
//!   operand order), on a location
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

/// Whether an instruction only orders: a thread fence or a proxy fence. It
/// writes nothing and reads no value, so a spin loop's body may hold it.
pub fn is_fence(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Fence { .. } | Instr::ProxyFence { .. } | Instr::ProxyFenceUni { .. }
    )
}

/// Whether the loop `head..=back` of `code` is closed: its back edge is
/// unconditional and no branch of its body leaves it (a way out would be a
/// branch past `back`; branches before `head` are not loop bodies at all).
pub fn closed(code: &[Instr], head: usize, back: usize) -> bool {
    matches!(code[back], Instr::Branch { cond: None, .. })
        && code[head..back]
            .iter()
            .all(|i| !matches!(i, Instr::Branch { target, .. } if *target > back))
}

/// Whether the iteration of `lp` that starts at its head with registers
/// `regs` goes back without reading memory: every branch it meets is decided
/// by registers, and it meets no load, wait or RMW on its way to the back
/// edge. Such an iteration goes back whatever memory holds, so a thread that
/// starts it never leaves the loop.
pub fn goes_back_without_reading(code: &[Instr], lp: &SpinLoop, regs: &[crate::ir::Value]) -> bool {
    let mut regs: smallvec::SmallVec<[crate::ir::Value; 8]> = regs.iter().copied().collect();
    let mut pc = lp.head;
    // Inside the body every branch but the back edge goes forward, so the
    // walk ends within the body's length.
    loop {
        let i = &code[pc];
        match i {
            Instr::Mov { .. } | Instr::Arith { .. } => {
                let (dst, v) = i
                    .local_effect::<crate::ir::Value>(&regs)
                    .expect("a register instruction");
                regs[dst] = v;
            }
            Instr::Branch { cond, target } => {
                let taken = cond.as_ref().is_none_or(|(c, a, b)| {
                    c.holds(
                        crate::ir::eval::operand(&regs, a),
                        crate::ir::eval::operand(&regs, b),
                    )
                });
                if pc == lp.back {
                    return taken;
                }
                if taken {
                    if *target > lp.back {
                        return false;
                    }
                    pc = *target;
                    continue;
                }
            }
            i if is_fence(i) => {}
            _ => return false,
        }
        pc += 1;
    }
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
            // 1. Reads, fences and register computation. A failed mbarrier
            // wait reads the barrier and changes nothing else, so it spins
            // like a load; a fence writes nothing and only orders.
            Instr::Load { .. }
            | Instr::MbarWait { .. }
            | Instr::Mov { .. }
            | Instr::Arith { .. } => {}
            i if is_fence(i) => {}
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
    // A closed loop has no way out: its back edge is unconditional and no
    // branch of the body leaves it. A thread that enters it never finishes,
    // so no final state goes through it and nothing an iteration carries to
    // the next matters (conditions 4 and 5 are about final states).
    let closed = closed(&th.code, head, back);
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
        if !closed
            && i.uses()
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
    let failed_when = |cmp, a: &Operand, b: &Operand| decides_failure(*r, expected, cmp, a, b);
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
        // A comparison of `r` that shows `r != expected` on one side
        // decides PENDING there (FAILED); the other side learns nothing.
        let (on_taken, on_fallthrough) = match i {
            Instr::Branch {
                cond: Some((cmp, a, b)),
                ..
            } if f & PENDING != 0 => match failed_when(*cmp, a, b) {
                Some((taken, fallthrough)) => {
                    let decide =
                        |failed: bool| (f & !PENDING) | if failed { FAILED } else { OTHER };
                    (decide(taken), decide(fallthrough))
                }
                None => (f, f),
            },
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

/// What the branch `cmp a, b` says about a CAS that wrote its result to `r`
/// and expected `expected`: `Some((taken, fallthrough))`, whether taking
/// the branch (falling through) shows that `r != expected`, i.e. that the
/// CAS failed. `None` when the branch does not compare `r` with a value
/// known here. Every branch form is covered: `bne r, E` / `beq r, E` (either
/// operand order), and a comparison with another immediate `V` that `E`
/// does not satisfy, such as `beq r, 1` for a lock taken with `cas r, m, 0, 1`
/// (taken, `r == 1 != 0`).
fn decides_failure(
    r: usize,
    expected: Operand,
    cmp: crate::ir::BranchCmp,
    a: &Operand,
    b: &Operand,
) -> Option<(bool, bool)> {
    use crate::ir::BranchCmp::*;
    let me = Operand::Reg(r);
    // Normalise to `r cmp v`.
    let (cmp, v) = if *a == me && *b != me {
        (cmp, *b)
    } else if *b == me && *a != me {
        let flipped = match cmp {
            Lt => Gt,
            Le => Ge,
            Gt => Lt,
            Ge => Le,
            c => c,
        };
        (flipped, *a)
    } else {
        return None;
    };
    if v == expected {
        // `r cmp E`: taken shows `r != E` when `cmp` is irreflexive (`ne`,
        // `lt`, `gt`); not taken shows it when `cmp` is reflexive.
        let reflexive = cmp.holds(0, 0);
        return Some((!reflexive, reflexive));
    }
    match (v, expected) {
        // `r cmp V`: taken shows `r != E` when `E cmp V` is false; not taken
        // when it is true.
        (Operand::Imm(v), Operand::Imm(e)) => {
            let holds = cmp.holds(e, v);
            Some((!holds, holds))
        }
        _ => None,
    }
}

/// Whether every access to location `loc` in `p` is strong, generic and
/// through virtual address `va`'s owner, and every two accesses of
/// different threads have scopes that include each other's thread: then
/// all of them (and the initial write) are pairwise morally strong, and
/// coherence orders every two writes to `loc`.
pub fn all_accesses_morally_strong(p: &Program, loc: usize, addr: usize) -> bool {
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

    #[test]
    fn every_branch_form_of_a_cas_retry_is_a_retry_loop() {
        let src = "PTX t\n{ m=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n LC00: | LC10: ;\n atom.acquire.gpu.cas r0, m, 0, 1 | atom.acquire.gpu.cas r0, m, 0, 1 ;\n bne r0, 0, LC00 | bne r0, 0, LC10 ;\n st.release.gpu m, 0 | st.release.gpu m, 0 ;\nexists (0==0)\n";
        let retry = SpinLoop {
            head: 0,
            back: 1,
            retry: Some(0),
            keep: 0,
        };
        // Taken only when `r0 != 0`: the CAS failed.
        for form in [
            "bne r0, 0, LC00",
            "bne 0, r0, LC00",
            "beq r0, 1, LC00",
            "beq 1, r0, LC00",
            "bgt r0, 0, LC00",
            "blt 0, r0, LC00",
            "bge r0, 1, LC00",
        ] {
            let s = src.replace("bne r0, 0, LC00", form);
            assert_eq!(info(&s, 0).loops, vec![retry], "{form}");
        }
        // Taken when the CAS may have succeeded: bounded.
        for form in [
            "beq r0, 0, LC00",
            "beq 0, r0, LC00",
            "bne r0, 1, LC00",
            "bge r0, 0, LC00",
            "ble r0, 1, LC00",
            "beq r0, r0, LC00",
        ] {
            let s = src.replace("bne r0, 0, LC00", form);
            assert!(info(&s, 0).loops.is_empty(), "{form}");
        }
    }

    #[test]
    fn fences_in_a_spin_body_keep_it_a_spin_loop() {
        let src = "PTX t\n{ f=0; }\n P0@cta 0,gpu 0 ;\n LC00: ;\n ld.relaxed.gpu r0, f ;\n fence.acq_rel.gpu ;\n fence.proxy.alias ;\n beq r0, 0, LC00 ;\nexists (0==0)\n";
        let i = info(src, 0);
        assert_eq!(
            i.loops,
            vec![SpinLoop {
                head: 0,
                back: 3,
                retry: None,
                keep: 0,
            }]
        );
        // A store in the body changes memory: bounded.
        let store = src.replace("fence.proxy.alias", "st.relaxed.gpu f, 0");
        assert!(info(&store, 0).loops.is_empty());
        // A barrier in the body waits for others: bounded.
        let bar = src.replace("fence.proxy.alias", "bar.cta.sync 0");
        assert!(info(&bar, 0).loops.is_empty());
    }

    #[test]
    fn a_closed_loop_is_a_spin_loop_even_if_it_carries_registers() {
        let src = "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n LC00: ;\n add r1, r1, 1 ;\n goto LC00 ;\nexists (0==0)\n";
        let i = info(src, 0);
        assert_eq!(
            i.loops,
            vec![SpinLoop {
                head: 0,
                back: 1,
                retry: None,
                keep: 0,
            }]
        );
        let code = &litmus::parse_source("t.litmus", src).unwrap()[0]
            .program
            .threads[0]
            .code;
        assert!(closed(code, 0, 1));
        assert!(goes_back_without_reading(code, &i.loops[0], &[0, 0]));
        // With a way out it is a counter loop again: bounded.
        let out = src.replace("goto LC00", "bne r1, 5, LC00");
        assert!(info(&out, 0).loops.is_empty());
        // A self-loop on an always-true condition is a spin loop that reads nothing.
        let own =
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n LC00: ;\n beq r0, r0, LC00 ;\nexists (0==0)\n";
        let i = info(own, 0);
        let code = &litmus::parse_source("t.litmus", own).unwrap()[0]
            .program
            .threads[0]
            .code;
        assert!(!closed(code, 0, 0));
        assert!(goes_back_without_reading(code, &i.loops[0], &[0]));
    }

    #[test]
    fn an_iteration_that_reads_does_not_go_back_without_reading() {
        let src = "PTX t\n{ f=0; }\n P0@cta 0,gpu 0 ;\n LC00: ;\n beq r1, 1, LC01 ;\n ld.relaxed.gpu r0, f ;\n LC01: ;\n beq r0, 0, LC00 ;\nexists (0==0)\n";
        let p = &litmus::parse_source("t.litmus", src).unwrap()[0].program;
        let lp = SpinLoop {
            head: 0,
            back: 2,
            retry: None,
            keep: 0,
        };
        let code = &p.threads[0].code;
        let (r0, r1) = (
            p.threads[0]
                .regs
                .iter()
                .position(|r| r.name == "r0")
                .unwrap(),
            p.threads[0]
                .regs
                .iter()
                .position(|r| r.name == "r1")
                .unwrap(),
        );
        let mut regs = vec![0; p.threads[0].regs.len()];
        // r1 = 0: the iteration reads f.
        assert!(!goes_back_without_reading(code, &lp, &regs));
        // r1 = 1 and r0 = 0: it skips the read and goes back.
        regs[r1] = 1;
        assert!(goes_back_without_reading(code, &lp, &regs));
        // r1 = 1 and r0 = 1: it skips the read and leaves.
        regs[r0] = 1;
        assert!(!goes_back_without_reading(code, &lp, &regs));
    }
}
