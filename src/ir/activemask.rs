//! Which lanes `activemask.b32 d` reports (`docs/warps.md`, "`activemask.b32 d`").
//!
//! PTX ISA, "Parallel Synchronization and Communication Instructions:
//! activemask": the result has a 1 for each lane of the executing warp that
//! is active, a 0 for exited, inactive and predicated-off lanes. Under
//! independent thread scheduling which lanes of a warp execute an
//! instruction *together* is the scheduler's choice, so an execution of
//! `activemask` reports any set of the warp's lanes that execute that same
//! instruction at that moment, the executing lane among them.
//!
//! For an instruction each lane executes at most once (not on a loop, which
//! the front ends refuse through [`check`]), the lanes that execute it
//! together form a *partition* of the lanes that execute it. ptxmc runs,
//! per warp and instruction, every partition of the lanes that have the
//! instruction (a *choice*; the product over instructions, united with
//! `elect.sync`'s choices by `engine::run`): the instruction is a
//! rendezvous of the lane's block ([`crate::ir::BarrierKind::ActiveMask`]:
//! it orders no memory and an exited lane is not excused) followed by
//! `mov d, BLOCK`. Every real execution is an execution of the choice whose
//! blocks are the lanes that did execute it together; every complete
//! execution of a choice is real. A state in which a lane waits at such a
//! rendezvous for good is not (its block was not a possible set in that
//! run, and the choice that splits it covers the run), so both engines'
//! hang searches discard them (`op::hang`, `ax::unfold`).

use super::{BarrierKind, Instr, Operand, Program, ThreadId, Value};

/// The most lanes of one warp that may have one `activemask` instruction:
/// their partitions are a Bell number (8 lanes: 4140 runs).
pub const MAX_LANES: usize = 6;

/// One `activemask` instruction of one warp: the lanes that have it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The instruction (`Thread::site` of its pc: one instruction of a
    /// kernel is at the same site in every lane).
    pub site: usize,
    /// The lanes (threads) that have it, in lane order.
    pub lanes: Vec<ThreadId>,
    /// Their lane ids.
    pub ids: Vec<u32>,
}

/// The `activemask` rendezvous of thread `t`: their pcs.
fn pcs(p: &Program, t: usize) -> impl Iterator<Item = usize> + '_ {
    p.threads[t]
        .code
        .iter()
        .enumerate()
        .filter(|(_, i)| {
            matches!(
                i,
                Instr::Barrier {
                    kind: BarrierKind::ActiveMask,
                    ..
                }
            )
        })
        .map(|(pc, _)| pc)
}

/// Whether `p` has any `activemask`.
pub fn any(p: &Program) -> bool {
    (0..p.threads.len()).any(|t| pcs(p, t).next().is_some())
}

/// The groups of `p`'s `activemask` instructions, in order of first
/// appearance (thread, then pc).
pub fn groups(p: &Program) -> Vec<Group> {
    let mut out: Vec<(ThreadId, Group)> = Vec::new();
    for t in 0..p.threads.len() {
        let warp = p.warp_lanes(t);
        let first = warp.first().copied().unwrap_or(t);
        for pc in pcs(p, t) {
            let site = p.threads[t].site(pc);
            let lane = warp.iter().position(|&u| u == t).unwrap_or(0) as u32;
            match out.iter_mut().find(|(w, g)| *w == first && g.site == site) {
                Some((_, g)) => {
                    if !g.lanes.contains(&t) {
                        g.lanes.push(t);
                        g.ids.push(lane);
                    }
                }
                None => out.push((
                    first,
                    Group {
                        site,
                        lanes: vec![t],
                        ids: vec![lane],
                    },
                )),
            }
        }
    }
    out.into_iter().map(|(_, g)| g).collect()
}

/// Every partition of `n` lanes, as the block index of each lane (a
/// restricted growth string), every lane alone first, then by fewer blocks.
pub fn partitions(n: usize) -> Vec<Vec<usize>> {
    fn grow(acc: &mut Vec<usize>, n: usize, out: &mut Vec<Vec<usize>>) {
        if acc.len() == n {
            out.push(acc.clone());
            return;
        }
        let blocks = acc.iter().max().map_or(0, |m| m + 1);
        for b in 0..=blocks {
            acc.push(b);
            grow(acc, n, out);
            acc.pop();
        }
    }
    let mut out = Vec::new();
    grow(&mut Vec::new(), n, &mut out);
    let blocks = |r: &Vec<usize>| r.iter().max().map_or(0, |m| m + 1);
    // Stable: lexicographic order among partitions of as many blocks.
    out.sort_by_key(|r| std::cmp::Reverse(blocks(r)));
    out
}

/// The Bell number of `n` (how many partitions `n` lanes have), saturating.
pub fn bell(n: usize) -> u64 {
    // The Bell triangle.
    let mut row = vec![1u64];
    for _ in 0..n {
        let mut next = vec![*row.last().unwrap()];
        for &x in &row {
            next.push(next.last().unwrap().saturating_add(x));
        }
        row = next;
    }
    row[0]
}

/// How many choices there are (saturating).
pub fn count(groups: &[Group]) -> u64 {
    groups
        .iter()
        .fold(1u64, |n, g| n.saturating_mul(bell(g.lanes.len())))
}

/// Every choice, as one partition index ([`partitions`]) per group, in
/// lexicographic order (every lane alone first); lazily.
pub fn choices(groups: &[Group]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let sizes: Vec<u64> = groups.iter().map(|g| bell(g.lanes.len())).collect();
    let mut next = Some(vec![0usize; groups.len()]);
    std::iter::from_fn(move || {
        let cur = next.take()?;
        let mut succ = cur.clone();
        // Odometer, last group fastest.
        for i in (0..groups.len()).rev() {
            if ((succ[i] + 1) as u64) < sizes[i] {
                succ[i] += 1;
                next = Some(succ);
                break;
            }
            succ[i] = 0;
        }
        Some(cur)
    })
}

/// The rendezvous operand of a block: its mask, with `site + 1` above bit
/// 31 (`model::barrier::resolve_activemask` keys the resource on both).
pub fn operand(site: usize, mask: Value) -> Value {
    ((site as Value + 1) << 32) | (mask & 0xffff_ffff)
}

/// The mask each lane of group `g` gets under partition `part`.
pub fn masks(g: &Group, part: &[usize]) -> Vec<Value> {
    (0..g.lanes.len())
        .map(|i| {
            (0..g.lanes.len())
                .filter(|&j| part[j] == part[i])
                .fold(0, |m, j| m | 1 << g.ids[j])
        })
        .collect()
}

/// Write choice `choice` (one partition index per group of `groups`) into
/// `p`'s rendezvous operands and the `mov`s after them.
pub fn apply(p: &mut Program, groups: &[Group], choice: &[usize]) {
    for (g, &c) in groups.iter().zip(choice) {
        // A group over the bound is refused by [`check`], which runs after
        // the parsers write choice 0: its partitions (a Bell number of
        // them) are never built.
        if g.lanes.len() > MAX_LANES {
            continue;
        }
        let parts = partitions(g.lanes.len());
        let Some(part) = parts.get(c) else { continue };
        let masks = masks(g, part);
        for (&t, &mask) in g.lanes.iter().zip(&masks) {
            let at: Vec<usize> = pcs(p, t)
                .filter(|&pc| p.threads[t].site(pc) == g.site)
                .collect();
            let code = &mut p.threads[t].code;
            for pc in at {
                if let Some(Instr::Barrier { id, .. }) = code.get_mut(pc) {
                    id[0] = Operand::Imm(operand(g.site, mask));
                }
                if let Some(Instr::Mov { src, .. }) = code.get_mut(pc + 1) {
                    *src = Operand::Imm(mask);
                }
            }
        }
    }
}

/// Write choice 0 (every lane alone): what a parsed program carries.
pub fn apply_first(p: &mut Program) {
    let g = groups(p);
    if !g.is_empty() {
        apply(p, &g, &vec![0; g.len()]);
    }
}

/// Why an `activemask` cannot be modelled exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The thread.
    pub thread: ThreadId,
    /// The rendezvous' pc.
    pub pc: usize,
    /// What is wrong, as a diagnostic's "found".
    pub found: String,
    /// Why, as its note.
    pub note: String,
}

/// Whether instruction `i` only computes registers or branches (it neither
/// reads nor publishes anything another thread can see).
fn register_only(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Mov { .. } | Instr::Arith { .. } | Instr::Branch { .. } | Instr::Fence { .. }
    )
}

/// Whether thread `t` may observe another thread before its rendezvous at
/// `pc`: a read, a wait or any other instruction before it that is neither
/// register code nor a plain store.
fn observes_before(p: &Program, t: usize, pc: usize) -> bool {
    p.threads[t].code[..pc]
        .iter()
        .any(|i| !register_only(i) && !matches!(i, Instr::Store { .. }))
}

/// Whether the result of thread `t`'s `activemask` at `pc` (the register
/// the `mov` after the rendezvous writes) reaches anything but register
/// code: a store's value, an RMW's operand, a barrier's operand or a
/// branch (whose later instructions then depend on it), directly or through
/// registers computed from it.
fn result_escapes(p: &Program, t: usize, pc: usize) -> bool {
    let code = &p.threads[t].code;
    let Some(Instr::Mov { dst, .. }) = code.get(pc + 1) else {
        return false;
    };
    let mut tainted = vec![*dst];
    // Registers computed from the result, to a fixpoint (later code may
    // loop).
    loop {
        let before = tainted.len();
        for i in &code[pc + 2..] {
            if let (Instr::Mov { .. } | Instr::Arith { .. }, Some(d)) = (i, i.def()) {
                if i.uses().iter().any(|r| tainted.contains(r)) && !tainted.contains(&d) {
                    tainted.push(d);
                }
            }
        }
        if tainted.len() == before {
            break;
        }
    }
    code[pc + 2..].iter().any(|i| {
        !matches!(i, Instr::Mov { .. } | Instr::Arith { .. })
            && i.uses().iter().any(|r| tainted.contains(r))
    })
}

/// Refuse what the partition model does not cover exactly: an `activemask`
/// a lane may execute more than once (on a loop: a branch at or after it
/// goes back to it or before it; or, in a kernel, at two pcs of one
/// instruction), more than [`MAX_LANES`] lanes of one warp with one
/// instruction, and a result that may flow back into the lanes' meeting.
///
/// The last: in each choice the result is a constant, so code that depends
/// on it may run before the lanes meet. Where some lane of the warp reads
/// or waits before the instruction and some lane uses the result beyond
/// register code, a value computed from the result could reach a lane
/// before the meeting that produced it (lane 0 stores its mask to a flag
/// that lane 1 spins on before its own `activemask`): an outcome no GPU can
/// give, which the PTX model forbids (No-Thin-Air: the result depends on
/// the meeting). Neither engine carries that dependency, so the shape is
/// refused rather than answered with that outcome.
pub fn check(p: &Program) -> Result<(), Refusal> {
    for t in 0..p.threads.len() {
        let code = &p.threads[t].code;
        let mut seen: Vec<usize> = Vec::new();
        for pc in pcs(p, t) {
            let back = code.iter().enumerate().any(|(b, i)| match i {
                Instr::Branch { target, .. } => b >= pc && *target <= pc,
                _ => false,
            });
            let site = p.threads[t].site(pc);
            if back || seen.contains(&site) {
                return Err(Refusal {
                    thread: t,
                    pc,
                    found: "`activemask` on a loop".into(),
                    note: "which lanes execute it together may differ at every execution; ptxmc \
                           models an `activemask` that each lane executes at most once \
                           (docs/warps.md)"
                        .into(),
                });
            }
            seen.push(site);
        }
    }
    for g in groups(p) {
        let at = |t: usize| {
            pcs(p, t)
                .find(|&pc| p.threads[t].site(pc) == g.site)
                .unwrap_or(0)
        };
        let observer = g.lanes.iter().find(|&&t| observes_before(p, t, at(t)));
        let user = g.lanes.iter().find(|&&t| result_escapes(p, t, at(t)));
        if let (Some(&o), Some(&u)) = (observer, user) {
            return Err(Refusal {
                thread: u,
                pc: at(u),
                found: "an `activemask` whose result is used beyond register code while a lane \
                        of its warp reads or waits before it"
                    .into(),
                note: format!(
                    "P{o} may observe memory before this `activemask`, and its result reaches a \
                     store, a branch or a barrier: a value computed from it could flow back \
                     before the lanes meet, and ptxmc does not model that dependency \
                     (docs/warps.md)"
                ),
            });
        }
        if g.lanes.len() > MAX_LANES {
            let t = g.lanes[0];
            let pc = pcs(p, t)
                .find(|&pc| p.threads[t].site(pc) == g.site)
                .unwrap_or(0);
            return Err(Refusal {
                thread: t,
                pc,
                found: format!(
                    "`activemask` executed by {} lanes of one warp",
                    g.lanes.len()
                ),
                note: format!(
                    "ptxmc runs every partition of the lanes that execute one `activemask` \
                     ({} for {} lanes); at most {MAX_LANES} lanes ({} partitions) are admitted \
                     (docs/warps.md)",
                    bell(g.lanes.len()),
                    g.lanes.len(),
                    bell(MAX_LANES)
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bell_numbers() {
        let b: Vec<u64> = (0..9).map(bell).collect();
        assert_eq!(b, [1, 1, 2, 5, 15, 52, 203, 877, 4140]);
        for n in 0..7 {
            assert_eq!(partitions(n).len() as u64, bell(n));
        }
    }

    #[test]
    fn partitions_start_with_every_lane_alone() {
        assert_eq!(
            partitions(3),
            vec![
                vec![0, 1, 2],
                vec![0, 0, 1],
                vec![0, 1, 0],
                vec![0, 1, 1],
                vec![0, 0, 0]
            ]
        );
    }

    #[test]
    fn block_masks() {
        let g = Group {
            site: 4,
            lanes: vec![0, 1, 2],
            ids: vec![0, 1, 2],
        };
        assert_eq!(masks(&g, &[0, 1, 0]), vec![0b101, 0b010, 0b101]);
        assert_eq!(operand(4, 0b101), (5 << 32) | 0b101);
    }
}
