//! Repairs: the fixes engineers make that are not a fence or a stronger
//! annotation (`docs/fix.md`, "Repairs").
//!
//! - a barrier inserted in every thread that must take part in it:
//!   `bar.sync 0` in every thread of a CTA, `bar.warp.sync` in every lane
//!   of a warp, `barrier.cluster.arrive` + `barrier.cluster.wait` in every
//!   thread of a cluster;
//! - `bar.arrive` → `bar.sync` (the arriving thread then waits too);
//! - an extra arrival removed (`bar.arrive`, `mbarrier.arrive`);
//! - `cp.async.bulk.wait_group N` → a smaller count (`.read` dropped too),
//!   and a missing wait inserted after asynchronous copies;
//! - an `mbarrier.try_wait.parity` / `test_wait.parity` asking for the
//!   other parity;
//! - an `expect_tx` byte count made equal to the bytes the copies that
//!   complete on that mbarrier transfer;
//! - an `mbarrier.arrive` on an mbarrier nothing arms, though copies
//!   complete on it, made an `arrive.expect_tx` of their bytes;
//! - an mbarrier arrival that releases a stage moved after the later wait
//!   for the asynchronous operations issued before it;
//! - a `.volatile` access made a release (stores) or an acquire (loads) at
//!   a scope that may be narrower than `.sys` (`.volatile` is
//!   `.relaxed.sys`: the narrower release is not "stronger" in the order
//!   the fence search relies on, so it is a repair).
//!
//! Unlike fences these change what the program waits for, so a repair can
//! make a program hang or reach undefined behaviour: the search checks
//! every candidate with a repair for termination and definedness, not only
//! for the outcome (`mod.rs`). Each repair site's variants are single or a
//! chain (by rank), which keeps the search's monotonicity pruning sound:
//! given the choices at the repair sites, fences and annotations still only
//! remove executions.

use super::sites::{Action, Site, Variant, quoted, useful_scopes};
use crate::ir::tensor_core::TcOp;
use crate::ir::{
    AsyncKind, BarrierKind, Completion, Instr, MbarOp, Operand, Program, Sem, WaitPhase,
};
use crate::litmus::print;

/// Every repair site of `p`: changes to single instructions and inserted
/// waits, and, with `groups`, barriers inserted in every member of a group
/// (many placements: the search tries those only when the program has a
/// problem to remove or nothing else fixes it).
pub fn repair_sites(p: &Program, groups: bool) -> Vec<Site> {
    let mut out = Vec::new();
    // `__syncwarp` placements are few (lanes of one warp) and the expert
    // fix of many warp bugs: always tried.
    group_barriers(p, &mut out, true, groups);
    for (t, th) in p.threads.iter().enumerate() {
        if th.agent.is_some() {
            continue;
        }
        for (pc, i) in th.code.iter().enumerate() {
            in_place(p, t, pc, i, &mut out);
        }
        missing_waits(p, t, &mut out);
        moved_releases(p, t, &mut out);
    }
    out
}

/// How many placements of inserted CTA and cluster barriers, and of
/// `__syncwarp` in warps of more than [`SMALL_WARP`] lanes, `p` has.
pub fn group_barrier_sites(p: &Program) -> usize {
    let mut all = Vec::new();
    group_barriers(p, &mut all, true, true);
    let mut small = Vec::new();
    group_barriers(p, &mut small, true, false);
    all.len() - small.len()
}

fn text_of(p: &Program, t: usize, i: &Instr) -> String {
    print::instr(p, &p.threads[t], i)
}

fn site(p: &Program, t: usize, variants: Vec<Variant>) -> Site {
    Site::repair(p.threads[t].name.clone(), variants)
}

/// Cost of a barrier: every participant stalls until the last arrives.
const BAR_SYNC_COST: u32 = 8;
/// Cost of `__syncwarp`: a warp-local convergence point.
const WARP_SYNC_COST: u32 = 3;
/// Cost of a cluster barrier (arrive + wait across CTAs).
const CLUSTER_BAR_COST: u32 = 12;
/// The most lanes of a warp whose `__syncwarp` placements are tried with
/// every other change from the start.
const SMALL_WARP: usize = 8;
/// The most placements of one inserted barrier (positions per thread,
/// multiplied): beyond it the group's insertion sites are not generated.
const MAX_PLACEMENTS: usize = 64;

/// Changes to single instructions.
fn in_place(p: &Program, t: usize, pc: usize, i: &Instr, out: &mut Vec<Site>) {
    let name = &p.threads[t].name;
    let old = quoted(p, t, pc);
    let replace = |instr: Instr| Action::Replace {
        thread: t,
        pc,
        instr,
    };
    if matches!(i, Instr::Barrier { kind, .. } if *kind != BarrierKind::WarpSync) {
        barrier_count(p, t, pc, i, out);
    }
    match i {
        Instr::Barrier {
            kind: BarrierKind::Arrive,
            id,
            count,
            aligned,
        } => {
            let sync = Instr::Barrier {
                kind: BarrierKind::Sync,
                id: id.clone(),
                count: *count,
                aligned: *aligned,
            };
            let text = format!("{name} {old} → `{}`", text_of(p, t, &sync));
            out.push(site(p, t, vec![Variant::repair(text, 4, replace(sync), 0)]));
            let text = format!("remove {name} {old}");
            let remove = Action::Remove { thread: t, pc };
            out.push(site(p, t, vec![Variant::repair(text, 1, remove, 0)]));
        }
        Instr::Mbar {
            op: MbarOp::Arrive,
            addr,
            arg,
            ..
        } => {
            let text = format!("remove {name} {old}");
            let remove = Action::Remove { thread: t, pc };
            out.push(site(p, t, vec![Variant::repair(text, 1, remove, 0)]));
            if arg.is_none() {
                arm(p, t, pc, i, *addr, out);
            }
        }
        Instr::WaitGroup {
            pending, read, all, ..
        } if !*all && (*pending > 0 || *read) => {
            // A chain: fewer pending groups (and no `.read`) wait for more.
            // Counts above the thread's commits (plus one, for a loop's
            // next round) are not tried one by one: the chain keeps its
            // strongest link, `0`, so pruning by monotonicity still holds,
            // and a hostile count (2^31) is not a chain of 2^31 variants.
            let mut vs = Vec::new();
            let mut rank = 0u8;
            let bulk_kind = matches!(i, Instr::WaitGroup { bulk: true, .. });
            let commits = p.threads[t]
                .code
                .iter()
                .filter(|c| matches!(c, Instr::CommitGroup { bulk } if *bulk == bulk_kind))
                .count();
            let top = (*pending).min(u32::try_from(commits).unwrap_or(u32::MAX).saturating_add(1));
            for n in (0..=top).rev() {
                for r in [true, false] {
                    if (n, r) == (*pending, *read) || (r && !*read) {
                        continue;
                    }
                    rank = rank.saturating_add(1);
                    let mut w = i.clone();
                    if let Instr::WaitGroup { pending, read, .. } = &mut w {
                        *pending = n;
                        *read = r;
                    }
                    let text = format!("{name} {old} → `{}`", text_of(p, t, &w));
                    vs.push(Variant::repair(text, 1, replace(w), rank));
                }
            }
            out.push(site(p, t, vs));
        }
        Instr::MbarWait {
            phase: WaitPhase::Parity(Operand::Imm(v @ (0 | 1))),
            ..
        } => {
            let mut w = i.clone();
            if let Instr::MbarWait { phase, .. } = &mut w {
                *phase = WaitPhase::Parity(Operand::Imm(1 - v));
            }
            let text = format!("{name} {old} → `{}`", text_of(p, t, &w));
            out.push(site(p, t, vec![Variant::repair(text, 1, replace(w), 0)]));
        }
        Instr::Mbar {
            op: MbarOp::ArriveExpectTx | MbarOp::ExpectTx,
            addr,
            arg: Some(Operand::Imm(bytes)),
            ..
        } => {
            for b in tx_candidates(p, *addr) {
                if b == *bytes {
                    continue;
                }
                let mut w = i.clone();
                if let Instr::Mbar { arg, .. } = &mut w {
                    *arg = Some(Operand::Imm(b));
                }
                let text = format!(
                    "{name} {old} → `{}` (the bytes the copies completing on it transfer)",
                    text_of(p, t, &w)
                );
                out.push(site(p, t, vec![Variant::repair(text, 1, replace(w), 0)]));
            }
        }
        Instr::Load { access, .. } | Instr::Store { access, .. } if access.sem == Sem::Volatile => {
            let load = matches!(i, Instr::Load { .. });
            let sem = if load { Sem::Acquire } else { Sem::Release };
            let mut vs = Vec::new();
            for (rank, s) in useful_scopes(p).into_iter().enumerate() {
                let mut w = i.clone();
                if let Instr::Load { access, .. } | Instr::Store { access, .. } = &mut w {
                    access.sem = sem;
                    access.scope = Some(s);
                }
                let text = format!("{name} {old} → `{}`", text_of(p, t, &w));
                let cost = if load { 2 } else { 2 + 2 * (s as u32 + 1) };
                vs.push(Variant::repair(text, cost, replace(w), rank as u8 + 1));
            }
            out.push(site(p, t, vs));
        }
        _ => {}
    }
}

/// An `mbarrier.arrive` made an `mbarrier.arrive.expect_tx` with the bytes
/// of the copies that complete on its mbarrier, when nothing in the program
/// expects them there: the barrier was never armed, so its phase can
/// complete with the arrivals alone, before the data lands (a
/// `.multicast::cluster` copy completes on the mbarrier of every
/// destination CTA, and each CTA must arm its own; PTX ISA §9.7.9.25.4.2
/// "expect-tx operation", §9.7.9.25 `cp.async.bulk` `.multicast::cluster`).
fn arm(p: &Program, t: usize, pc: usize, i: &Instr, bar: usize, out: &mut Vec<Site>) {
    let loc = p.addresses[bar].loc;
    let armed = p.threads.iter().flat_map(|th| &th.code).any(|j| {
        matches!(j, Instr::Mbar { op: MbarOp::ArriveExpectTx | MbarOp::ExpectTx, addr, .. }
            if p.addresses[*addr].loc == loc)
    });
    if armed {
        return;
    }
    let name = &p.threads[t].name;
    let old = quoted(p, t, pc);
    for b in tx_candidates(p, bar) {
        let mut w = i.clone();
        if let Instr::Mbar { op, arg, .. } = &mut w {
            *op = MbarOp::ArriveExpectTx;
            *arg = Some(Operand::Imm(b));
        }
        let text = format!(
            "{name} {old} → `{}` (arm it with the bytes the copies completing on it transfer)",
            text_of(p, t, &w)
        );
        let action = Action::Replace {
            thread: t,
            pc,
            instr: w,
        };
        out.push(site(p, t, vec![Variant::repair(text, 1, action, 0)]));
    }
}

/// The cost of moving a stage's release after the wait for the operations
/// that read the stage: no instruction more, the producer may wait longer.
const MOVE_RELEASE_COST: u32 = 2;

/// An mbarrier arrival that releases a stage while asynchronous operations
/// the thread issued before it may still read the stage, moved after the
/// later wait that completes them (`wgmma.wait_group`, `tcgen05.wait`,
/// `cp.async.bulk.wait_group`, `cp.async.wait_group`): CUTLASS's
/// `consumer_release` after `warpgroup_wait`. PTX ISA §9.7.15.7
/// (`wgmma.wait_group`: accessing the operands before the wait is
/// undefined), §9.7.9.25.4 (mbarrier arrive-on). Only in a thread without
/// branches, where moving an instruction changes nothing else.
fn moved_releases(p: &Program, t: usize, out: &mut Vec<Site>) {
    let code = &p.threads[t].code;
    if code.iter().any(|i| matches!(i, Instr::Branch { .. })) {
        return;
    }
    let name = &p.threads[t].name;
    for (pc, i) in code.iter().enumerate() {
        if !matches!(
            i,
            Instr::Mbar {
                op: MbarOp::Arrive | MbarOp::ArriveExpectTx,
                ..
            }
        ) {
            continue;
        }
        for (w, wait) in code.iter().enumerate().skip(pc + 1) {
            let Some(issues) = completes(wait) else {
                continue;
            };
            if !code[..pc].iter().any(issues) {
                continue;
            }
            // After the wait and the results it delivers.
            let end = (w + 1..code.len())
                .find(|&k| {
                    !matches!(
                        code[k],
                        Instr::Tensor {
                            op: TcOp::Result { .. }
                        }
                    )
                })
                .unwrap_or(code.len());
            // The arrival's state token must not be read before its new place.
            let token = i.def();
            if token.is_some_and(|r| code[pc + 1..end].iter().any(|j| j.uses().contains(&r))) {
                break;
            }
            let text = format!("move {name} {} after {}", quoted(p, t, pc), quoted(p, t, w));
            let action = Action::Group(vec![
                Action::Remove { thread: t, pc },
                Action::Insert {
                    thread: t,
                    pos: end,
                    instr: i.clone(),
                },
            ]);
            out.push(site(
                p,
                t,
                vec![Variant::repair(text, MOVE_RELEASE_COST, action, 0)],
            ));
            // The first such wait is where the release belongs.
            break;
        }
    }
}

/// What a wait completes: the instructions that issue the asynchronous
/// operations it waits for; `None` for any other instruction.
fn completes(wait: &Instr) -> Option<fn(&Instr) -> bool> {
    match wait {
        Instr::Tensor {
            op: TcOp::WgmmaWait { .. },
        } => Some(|i| {
            matches!(
                i,
                Instr::Tensor {
                    op: TcOp::Wgmma { .. }
                }
            )
        }),
        Instr::Tensor {
            op: TcOp::Wait { ld: true },
        } => Some(|i| {
            matches!(
                i,
                Instr::Tensor {
                    op: TcOp::Ld { .. }
                }
            )
        }),
        Instr::Tensor {
            op: TcOp::Wait { ld: false },
        } => Some(|i| {
            matches!(
                i,
                Instr::Tensor {
                    op: TcOp::St { .. }
                }
            )
        }),
        Instr::WaitGroup { bulk: true, .. } => Some(|i| {
            matches!(
                i,
                Instr::AsyncCopy {
                    completion: Completion::BulkGroup,
                    ..
                }
            )
        }),
        Instr::WaitGroup { bulk: false, .. } => Some(|i| {
            matches!(
                i,
                Instr::AsyncCopy {
                    completion: Completion::AsyncGroup,
                    ..
                }
            )
        }),
        _ => None,
    }
}

/// A barrier's count made equal to another count written for the same
/// barrier name, or to the count of the threads that use the name (PTX's
/// `bar.sync a, b` counts CUDA threads: a litmus thread outside a warp is
/// a warp of 32; the dialect's `bar.sync a, b, n` counts litmus threads).
fn barrier_count(p: &Program, t: usize, pc: usize, i: &Instr, out: &mut Vec<Site>) {
    let Some((bar, c, ptx_form)) = name_and_count(i) else {
        return;
    };
    let name = &p.threads[t].name;
    let old = quoted(p, t, pc);
    let mut counts: Vec<i64> = Vec::new();
    let mut users = 0i64;
    for th in p.threads.iter().filter(|th| th.agent.is_none()) {
        let mut uses = false;
        for j in &th.code {
            if let Some((b2, c2, f2)) = name_and_count(j) {
                if b2 == bar && f2 == ptx_form {
                    counts.push(c2);
                    uses = true;
                }
            }
        }
        users += uses as i64;
    }
    counts.push(if ptx_form { 32 * users } else { users });
    counts.sort_unstable();
    counts.dedup();
    for other in counts {
        if other == c || other <= 0 {
            continue;
        }
        let mut w = i.clone();
        if let Instr::Barrier { id, count, .. } = &mut w {
            if ptx_form {
                id[1] = Operand::Imm(other);
            } else {
                *count = Some(Operand::Imm(other));
            }
        }
        let text = format!("{name} {old} → `{}`", text_of(p, t, &w));
        let action = Action::Replace {
            thread: t,
            pc,
            instr: w,
        };
        out.push(site(p, t, vec![Variant::repair(text, 1, action, 0)]));
    }
}

/// A counted CTA barrier's name, constant count, and whether it is PTX's
/// two-operand form (`bar.sync a, b`) rather than the dialect's
/// `bar.sync a, b, n`.
fn name_and_count(i: &Instr) -> Option<(i64, i64, bool)> {
    match i {
        Instr::Barrier {
            kind: BarrierKind::Sync | BarrierKind::Arrive,
            id,
            count,
            ..
        } => match (id.as_slice(), count) {
            ([Operand::Imm(a), Operand::Imm(b)], None) => Some((*a, *b, true)),
            ([Operand::Imm(a), ..], Some(Operand::Imm(n))) => Some((*a, *n, false)),
            _ => None,
        },
        _ => None,
    }
}

/// The byte counts an `expect_tx` on `bar` could mean: each copy that
/// completes on it, and all of them together.
fn tx_candidates(p: &Program, bar: usize) -> Vec<i64> {
    let loc = p.addresses[bar].loc;
    let sizes: Vec<i64> = p
        .threads
        .iter()
        .flat_map(|t| &t.code)
        .filter_map(|i| match i {
            Instr::AsyncCopy {
                completion: Completion::Mbarrier(b),
                size,
                ..
            } if p.addresses[*b].loc == loc => Some(*size),
            _ => None,
        })
        .collect();
    let mut out: Vec<i64> = sizes.clone();
    out.push(sizes.iter().sum());
    out.retain(|&b| b > 0);
    out.sort_unstable();
    out.dedup();
    out
}

/// A wait inserted after asynchronous copies that nothing waits for:
/// `cp.async.wait_all` after a `cp.async` of a group, and
/// `cp.async.bulk.commit_group` + `cp.async.bulk.wait_group 0` after a bulk
/// copy of a bulk group, before each later instruction that touches memory.
fn missing_waits(p: &Program, t: usize, out: &mut Vec<Site>) {
    let th = &p.threads[t];
    let name = &th.name;
    for (pc, i) in th.code.iter().enumerate() {
        let Instr::AsyncCopy {
            kind, completion, ..
        } = i
        else {
            continue;
        };
        let wait: Vec<Instr> = match (kind, completion) {
            (AsyncKind::NonBulk, Completion::AsyncGroup) => vec![Instr::WaitGroup {
                bulk: false,
                pending: 0,
                read: false,
                all: true,
            }],
            (AsyncKind::Bulk | AsyncKind::ReduceBulk(_), Completion::BulkGroup) => vec![
                Instr::CommitGroup { bulk: true },
                Instr::WaitGroup {
                    bulk: true,
                    pending: 0,
                    read: false,
                    all: false,
                },
            ],
            _ => continue,
        };
        // Already waited for: a wait of the same kind follows.
        let waited = th.code[pc + 1..].iter().any(|j| {
            matches!(j, Instr::WaitGroup { bulk, .. } if *bulk == matches!(completion, Completion::BulkGroup))
        });
        if waited {
            continue;
        }
        for pos in pc + 1..th.code.len() {
            if !touches_memory(&th.code[pos]) {
                continue;
            }
            let before = quoted(p, t, pos);
            let words: Vec<String> = wait.iter().map(|w| text_of(p, t, w)).collect();
            let text = format!("insert `{}` in {name} before {before}", words.join("; "));
            let action = Action::Group(
                wait.iter()
                    .rev()
                    .map(|w| Action::Insert {
                        thread: t,
                        pos,
                        instr: w.clone(),
                    })
                    .collect(),
            );
            out.push(site(p, t, vec![Variant::repair(text, 3, action, 0)]));
        }
    }
}

fn touches_memory(i: &Instr) -> bool {
    i.access().is_some() || matches!(i, Instr::AsyncCopy { .. } | Instr::Mbar { .. })
}

/// Where one barrier may go in each member: per placement, a position per
/// member and the placement in words; `None` when there are too many.
///
/// Threads lowered from one kernel run the same PTX code (`Thread::sites`):
/// a placement is one PTX instruction, before which every member inserts
/// the barrier (a member whose specialised code lacks it is left out:
/// inserting there would not be `__syncthreads()` before that line), or
/// the end. Litmus threads each have code of their own: a placement is
/// one position per member (every combination, up to [`MAX_PLACEMENTS`]),
/// with every member at its first or every member at its end left out
/// (it orders nothing).
fn placements(p: &Program, members: &[usize]) -> Option<Vec<(Vec<usize>, String)>> {
    let name = |t: usize| p.threads[t].name.clone();
    let span = format!("{}–{}", name(members[0]), name(*members.last().unwrap()));
    // (A lane whose specialised code is empty has no sites either.)
    if members.iter().any(|&t| !p.threads[t].sites.is_empty()) {
        // Every PTX instruction some member runs that touches memory or
        // synchronises, with a member that runs it (for its words).
        let mut sites: std::collections::BTreeMap<usize, (usize, usize)> = Default::default();
        for &t in members {
            let th = &p.threads[t];
            for pc in barrier_positions(p, t) {
                if pc < th.code.len() {
                    sites.entry(th.site(pc)).or_insert((t, pc));
                }
            }
        }
        let mut out = Vec::new();
        for (&site, &(t0, pc0)) in &sites {
            // Before that instruction in each member: before the first of
            // its instructions that come from that PTX instruction or a
            // later one (the end, if none does).
            let at: Vec<usize> = members
                .iter()
                .map(|&t| {
                    let th = &p.threads[t];
                    (0..th.code.len())
                        .find(|&k| th.site(k) >= site)
                        .unwrap_or(th.code.len())
                })
                .collect();
            let words = format!("every thread {span} before {}", quoted(p, t0, pc0));
            out.push((at, words));
        }
        if out.len() > MAX_PLACEMENTS {
            return None;
        }
        return Some(out);
    }
    let positions: Vec<Vec<usize>> = members.iter().map(|&t| barrier_positions(p, t)).collect();
    let total = positions
        .iter()
        .try_fold(1usize, |acc, v| acc.checked_mul(v.len()))
        .unwrap_or(usize::MAX);
    if total > MAX_PLACEMENTS {
        return None;
    }
    let lanes = members.len();
    let mut out = Vec::new();
    let mut choice = vec![0usize; lanes];
    loop {
        let at: Vec<usize> = (0..lanes).map(|m| positions[m][choice[m]]).collect();
        let all_first = (0..lanes).all(|m| choice[m] == 0);
        let all_last = (0..lanes).all(|m| choice[m] == positions[m].len() - 1);
        if !all_first && !all_last {
            let words: Vec<String> = members
                .iter()
                .enumerate()
                .map(|(m, &t)| {
                    if at[m] < p.threads[t].code.len() {
                        format!("{} before {}", name(t), quoted(p, t, at[m]))
                    } else {
                        format!("{} at its end", name(t))
                    }
                })
                .collect();
            out.push((at, words.join(", ")));
        }
        // Next combination.
        let mut m = 0;
        while m < lanes {
            choice[m] += 1;
            if choice[m] < positions[m].len() {
                break;
            }
            choice[m] = 0;
            m += 1;
        }
        if m == lanes {
            return Some(out);
        }
    }
}

/// Positions where a barrier may go in thread `t`: before its first
/// instruction that touches memory or synchronises, between two such, and
/// at its end.
fn barrier_positions(p: &Program, t: usize) -> Vec<usize> {
    let code = &p.threads[t].code;
    let eff: Vec<usize> = (0..code.len())
        .filter(|&i| {
            !matches!(
                code[i],
                Instr::Mov { .. } | Instr::Arith { .. } | Instr::Branch { .. }
            )
        })
        .collect();
    let mut out: Vec<usize> = eff.clone();
    out.push(code.len());
    out.dedup();
    out
}

/// A barrier inserted in every member of each group of threads that one
/// barrier instance spans: the threads of a CTA (`bar.sync 0`), the lanes
/// of a warp (`bar.warp.sync` with every lane's bit), the threads of a
/// cluster of several CTAs (`barrier.cluster.arrive` + `.wait`). Every
/// combination of one position per member is its own site, up to
/// [`MAX_PLACEMENTS`] per group; a combination with every member at its
/// first or every member at its end orders nothing and is left out.
fn group_barriers(p: &Program, out: &mut Vec<Site>, warps: bool, wider: bool) {
    let sources: Vec<usize> = (0..p.threads.len())
        .filter(|&t| p.threads[t].agent.is_none())
        .collect();
    let mut groups: Vec<(Vec<usize>, &str)> = Vec::new();
    let mut push_groups = |key: &dyn Fn(usize) -> Option<(u32, u32, u32)>, kind: &'static str| {
        let mut keys: Vec<(u32, u32, u32)> = sources.iter().filter_map(|&t| key(t)).collect();
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            let members: Vec<usize> = sources
                .iter()
                .copied()
                .filter(|&t| key(t) == Some(k))
                .collect();
            if members.len() >= 2 {
                groups.push((members, kind));
            }
        }
    };
    let pl = |t: usize| p.threads[t].placement;
    push_groups(&|t| Some((pl(t).gpu, pl(t).cta, 0)), "cta");
    push_groups(&|t| pl(t).warp.map(|w| (pl(t).gpu, pl(t).cta, w)), "warp");
    push_groups(&|t| Some((pl(t).gpu, pl(t).cluster, 0)), "cluster");
    for (members, kind) in groups {
        if (kind == "warp" && !warps) || (kind != "warp" && !wider) {
            continue;
        }
        // A full warp of lanes is costly to check for every placement:
        // it waits for the pass of wider barriers.
        if kind == "warp" && !wider && members.len() > SMALL_WARP {
            continue;
        }
        if kind == "cluster" {
            let ctas: std::collections::BTreeSet<u32> =
                members.iter().map(|&t| pl(t).cta).collect();
            if ctas.len() < 2 {
                continue;
            }
        }
        let Some(placements) = placements(p, &members) else {
            continue;
        };
        let lanes = members.len();
        let instrs: Vec<Instr> = match kind {
            "cta" => vec![Instr::Barrier {
                kind: BarrierKind::Sync,
                id: smallvec::smallvec![Operand::Imm(0)],
                count: None,
                aligned: true,
            }],
            "warp" => vec![Instr::Barrier {
                kind: BarrierKind::WarpSync,
                id: smallvec::smallvec![Operand::Imm(((1u64 << lanes) - 1) as i64)],
                count: None,
                aligned: false,
            }],
            _ => vec![
                Instr::ClusterBarrier {
                    arrive: true,
                    sem: Sem::Release,
                    aligned: true,
                },
                Instr::ClusterBarrier {
                    arrive: false,
                    sem: Sem::Acquire,
                    aligned: true,
                },
            ],
        };
        let cost = match kind {
            "cta" => BAR_SYNC_COST,
            "warp" => WARP_SYNC_COST,
            _ => CLUSTER_BAR_COST,
        };
        for (at, words) in placements {
            let mut actions = Vec::new();
            for (m, &t) in members.iter().enumerate() {
                for instr in instrs.iter().rev() {
                    actions.push(Action::Insert {
                        thread: t,
                        pos: at[m],
                        instr: instr.clone(),
                    });
                }
            }
            let shown: Vec<String> = instrs.iter().map(|i| text_of(p, members[0], i)).collect();
            let text = format!("insert `{}` in {words}", shown.join("; "));
            let mut site = Site::repair(
                p.threads[members[0]].name.clone(),
                vec![Variant::repair(text, cost, Action::Group(actions), 0)],
            );
            site.group_barrier = true;
            out.push(site);
        }
    }
}
