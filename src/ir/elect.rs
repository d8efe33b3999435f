//! Which lane `elect.sync` elects (`docs/warps.md`, "`elect.sync`").
//!
//! PTX ISA, "Parallel Synchronization and Communication Instructions:
//! elect.sync": *"Election of a leader thread happens deterministically,
//! i.e. the same leader thread is elected for the same membermask every
//! time."* The leader is a fixed but unspecified function of the mask: per
//! warp and mask value, one of the mask's lanes, the same at every execution
//! of every `elect.sync` of that warp with that mask. A program's outcomes
//! are the union, over every such function (a *choice*: one candidate lane
//! per group), of the program whose `elect.sync` results are that choice's
//! constants. The parsed program carries choice 0 (the lowest lane of each
//! mask); the engines run every choice ([`choices`], [`apply`]).

use super::{ElectSite, Instr, Operand, Program, Value};

/// One warp and mask value: the lanes the leader is chosen from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The warp: GPU, CTA and its `warp` number, or `-1 - thread` for a
    /// thread alone in its warp.
    pub warp: (u32, u32, Value),
    /// The membermask (low 32 bits).
    pub mask: Value,
    /// Lane ids of the warp's lanes that the mask names, lowest first (a
    /// lane the test does not have never runs and is never elected).
    pub candidates: Vec<u32>,
}

/// The mask of a site: its barrier's immediate operand (a register mask is
/// refused by the front ends).
fn mask_of(p: &Program, s: &ElectSite) -> Value {
    match &p.threads[s.thread].code[s.pc] {
        Instr::Barrier { id, .. } => match id.first() {
            Some(Operand::Imm(m)) => m & 0xffff_ffff,
            _ => 0,
        },
        _ => 0,
    }
}

fn warp_of(p: &Program, t: usize) -> (u32, u32, Value) {
    let pl = p.threads[t].placement;
    match pl.warp {
        Some(w) if p.threads[t].agent.is_none() => (pl.gpu, pl.cta, Value::from(w)),
        _ => (pl.gpu, pl.cta, -1 - t as Value),
    }
}

/// The groups of `p`'s `elect.sync` sites, in order of first appearance.
pub fn groups(p: &Program) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for s in &p.elects {
        let warp = warp_of(p, s.thread);
        let mask = mask_of(p, s);
        if out.iter().any(|g| g.warp == warp && g.mask == mask) {
            continue;
        }
        let candidates = (0..p.warp_lanes(s.thread).len().min(32) as u32)
            .filter(|l| mask >> l & 1 == 1)
            .collect();
        out.push(Group {
            warp,
            mask,
            candidates,
        });
    }
    out
}

/// How many choices there are (saturating).
pub fn count(groups: &[Group]) -> u64 {
    groups.iter().fold(1u64, |n, g| {
        n.saturating_mul(g.candidates.len().max(1) as u64)
    })
}

/// Every choice, as one candidate index per group, in lexicographic order
/// (choice 0 first); lazily, since their number is a product.
pub fn choices(groups: &[Group]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let mut next = Some(vec![0usize; groups.len()]);
    std::iter::from_fn(move || {
        let cur = next.take()?;
        let mut succ = cur.clone();
        // Odometer, last group fastest.
        for i in (0..groups.len()).rev() {
            if succ[i] + 1 < groups[i].candidates.len() {
                succ[i] += 1;
                next = Some(succ);
                break;
            }
            succ[i] = 0;
        }
        Some(cur)
    })
}

/// Write choice `choice` (one candidate index per group of `groups`) into
/// the `mov`s of `p`'s sites: `d` = the leader's lane id, `p` = 1 in the
/// leader, 0 elsewhere.
pub fn apply(p: &mut Program, groups: &[Group], choice: &[usize]) {
    let sites = p.elects.clone();
    for s in &sites {
        let warp = warp_of(p, s.thread);
        let mask = mask_of(p, s);
        let Some(gi) = groups.iter().position(|g| g.warp == warp && g.mask == mask) else {
            continue;
        };
        let leader = groups[gi]
            .candidates
            .get(choice[gi])
            .copied()
            .map_or(-1, Value::from);
        let me = p.lane_id(s.thread) as Value;
        let (d, pr) = s.movs();
        let code = &mut p.threads[s.thread].code;
        if let Some(Instr::Mov { src, .. }) = d.and_then(|pc| code.get_mut(pc)) {
            *src = Operand::Imm(leader);
        }
        if let Some(Instr::Mov { src, .. }) = pr.and_then(|pc| code.get_mut(pc)) {
            *src = Operand::Imm(Value::from(me == leader));
        }
    }
}

/// Write choice 0 (the lowest lane of each mask): what a parsed program carries.
pub fn apply_first(p: &mut Program) {
    if p.elects.is_empty() {
        return;
    }
    let g = groups(p);
    apply(p, &g, &vec![0; g.len()]);
}
