//! The shared-memory side of a plan: shared locations and mbarriers, the
//! asynchronous proxy, and cluster barriers.
//!
//! A test with shared memory or asynchronous operations runs in the *shared
//! harness* (`docs/hardware.md`): every block keeps, in its dynamic shared
//! memory, one 16-byte *cell* per shared location (data word or mbarrier) and
//! instance of the 32 it plays, at a position drawn per launch. This module
//! decides what such a test needs and refuses what the hardware cannot do
//! exactly:
//!
//! * how each instruction operand reaches its location ([`Arg`]): a global
//!   address, a generic or `.shared::cta` address of the block's own cell, or
//!   a `.shared::cluster` address (`mapa`) of the owner CTA's cell;
//! * byte counts: a litmus location is one 32-bit word, but a bulk copy moves
//!   a multiple of 16 bytes, so a bulk copy moves the location's whole cell
//!   (the word and three padding words nobody observes) and the byte counts
//!   on its mbarrier are scaled by the hardware bytes per litmus byte
//!   ([`MbarPlan::scale`]);
//! * how the harness waits, after the test, until every asynchronous write
//!   into a CTA's shared memory has landed ([`Drain`]), so that the final
//!   values it gathers are final;
//! * how many `barrier.cluster` phases the threads of each cluster go
//!   through (every thread of a hardware cluster takes part in each).

use smallvec::SmallVec;

use super::refusal::Reason;
use super::roles::CtaRole;
use crate::ir::{
    AddrId, AsyncKind, AsyncSrc, Completion, Instr, LocId, LocKind, MbarOp, Operand, Program,
    ProxyFenceKind, Space, SpaceQual, ThreadId, UniProxy, Value, WaitPhase, mbar,
};

/// Bytes of a shared-memory cell, and of every bulk copy (the smallest PTX allows).
pub const CELL_BYTES: Value = 16;
/// Bytes a non-bulk `cp.async`, an `st.async.b32` and a `red.async…u32` move.
pub const WORD_BYTES: Value = 4;

/// How an instruction operand reaches its location: the kind of parameter
/// the role function receives for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgForm {
    /// Global memory or the constant bank: the address's place in the plan
    /// ([`super::plan::AddrPlace`]), a 64-bit address.
    Memory,
    /// A generic address of the executing CTA's own cell (64-bit).
    SharedGeneric,
    /// A `.shared::cta` address of the executing CTA's own cell (32-bit).
    SharedCta,
    /// A `.shared::cluster` address of the owner CTA's cell (32-bit, `mapa`).
    SharedCluster,
}

/// One parameter of a role function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arg {
    /// The named address.
    pub addr: AddrId,
    /// How it is reached.
    pub form: ArgForm,
}

/// The form of an operand naming `addr` with state space `space` as written.
pub fn arg_form(p: &Program, addr: AddrId, space: Option<SpaceQual>) -> ArgForm {
    match p.locations[p.addresses[addr].loc].space {
        Space::Global => ArgForm::Memory,
        Space::Shared { .. } => match space {
            None => ArgForm::SharedGeneric,
            Some(SpaceQual::SharedCluster) => ArgForm::SharedCluster,
            // The parser allows only the own CTA's shared memory here
            // (`.global` on a shared location is a parse error).
            Some(_) => ArgForm::SharedCta,
        },
    }
}

/// The memory operands of an instruction, in the order its PTX names them.
pub fn operands(p: &Program, i: &Instr) -> SmallVec<[Arg; 3]> {
    let arg = |addr: AddrId, space: Option<SpaceQual>| Arg {
        addr,
        form: arg_form(p, addr, space),
    };
    let mut out = SmallVec::new();
    match i {
        Instr::Load { access, .. } | Instr::Store { access, .. } | Instr::Rmw { access, .. } => {
            out.push(arg(access.addr, access.space))
        }
        Instr::AsyncCopy {
            dst,
            dst_space,
            src,
            src_space,
            completion,
            ..
        } => {
            out.push(arg(*dst, Some(*dst_space)));
            if let AsyncSrc::Addr(a) = src {
                out.push(arg(*a, *src_space));
            }
            if let Completion::Mbarrier(b) = completion {
                // The mbarrier lies in the destination's CTA and is named in
                // the destination's state space.
                out.push(arg(*b, Some(*dst_space)));
            }
        }
        Instr::AsyncMbarArrive { addr, .. } => out.push(arg(*addr, Some(SpaceQual::SharedCta))),
        Instr::Mbar { addr, space, .. } | Instr::MbarWait { addr, space, .. } => {
            out.push(arg(*addr, *space))
        }
        _ => {}
    }
    out
}

/// An mbarrier of the test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MbarPlan {
    /// Its location.
    pub loc: LocId,
    /// The CTA role whose shared memory holds it.
    pub role: usize,
    /// Its rank among the shared cells of an instance.
    pub rank: usize,
    /// The arrival count it is initialised with before the test (`= COUNT`),
    /// or `None` when the test initialises it (`mbarrier.init`).
    pub declared: Option<Value>,
    /// Whether it is initialised when the test ends (so the harness
    /// invalidates it before the block's shared memory is reused).
    pub initialised: bool,
    /// Hardware transaction bytes per litmus byte on this barrier: every byte
    /// count of an `expect_tx`/`complete_tx` operand is multiplied by it.
    pub scale: Value,
    /// How the harness completes it after the test, when asynchronous
    /// operations complete on it.
    pub drain: Option<Drain>,
}

/// What the harness does, after every litmus thread finished, to learn that
/// every asynchronous operation completing on an mbarrier has landed: add
/// `expect_tx` bytes and `arrivals` arrivals so that the barrier's first
/// phase completes exactly when the last of them lands, then wait (bounded)
/// for that phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drain {
    /// Hardware bytes the harness expects on top of the test's.
    pub expect_tx: Value,
    /// Arrivals the harness adds.
    pub arrivals: Value,
}

/// A shared data location of the test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedLoc {
    /// Its location.
    pub loc: LocId,
    /// The CTA role whose shared memory holds it.
    pub role: usize,
    /// Its rank among the shared cells of an instance.
    pub rank: usize,
}

/// What the shared harness needs beyond the ordinary plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedPlan {
    /// Shared data locations.
    pub data: Vec<SharedLoc>,
    /// mbarriers.
    pub mbarriers: Vec<MbarPlan>,
    /// Cells per instance in a block's window (data and mbarriers of every CTA).
    pub cells: usize,
    /// Per launch unit (test cluster with a cluster launch, else CTA role):
    /// how many `barrier.cluster` phases each of its threads goes through.
    pub cluster_phases: Vec<usize>,
    /// Per litmus thread: it issues `cp.async` (the harness waits for them
    /// with `cp.async.wait_all` once the thread's code is done).
    pub cp_async: Vec<bool>,
    /// Per litmus thread: it issues bulk-group copies (the harness commits
    /// and waits for every bulk group once the thread's code is done).
    pub bulk_groups: Vec<bool>,
    /// Whether bulk copies touch global memory: every global location then
    /// gets a 16-byte cell of its own (the copy moves the whole cell).
    pub global_cells: bool,
    /// First word of the CTA roles' status words in an instance's results
    /// (1: the harness gathered the role's shared memory; 2: a drain gave up).
    pub status_offset: usize,
}

impl SharedPlan {
    /// The plan of the mbarrier at location `loc`.
    pub fn mbarrier(&self, loc: LocId) -> Option<&MbarPlan> {
        self.mbarriers.iter().find(|m| m.loc == loc)
    }
}

/// Whether the test needs the shared harness: shared locations, mbarriers,
/// asynchronous operations, cluster barriers, async-proxy or restricted fences.
pub fn needs_shared_harness(p: &Program) -> bool {
    p.locations
        .iter()
        .any(|l| l.space != Space::Global || l.kind != LocKind::Data)
        || p.threads.iter().flat_map(|t| &t.code).any(is_async)
}

fn is_async(i: &Instr) -> bool {
    match i {
        Instr::AsyncCopy { .. }
        | Instr::CommitGroup { .. }
        | Instr::WaitGroup { .. }
        | Instr::AsyncMbarArrive { .. }
        | Instr::Mbar { .. }
        | Instr::MbarWait { .. }
        | Instr::ClusterBarrier { .. }
        | Instr::ProxyFenceUni { .. }
        | Instr::ProxyFence {
            kind: ProxyFenceKind::Async(_),
        } => true,
        Instr::Fence { restrict, .. } => restrict.is_some(),
        _ => false,
    }
}

/// Whether the test needs a cluster launch for reasons beyond `.cluster`
/// scopes: another CTA's shared memory, or `barrier.cluster`.
pub fn needs_cluster(p: &Program) -> bool {
    p.threads.iter().flat_map(|t| &t.code).any(|i| {
        matches!(i, Instr::ClusterBarrier { .. })
            || operands(p, i)
                .iter()
                .any(|a| a.form == ArgForm::SharedCluster)
    })
}

/// Check one asynchronous-proxy, mbarrier or cluster instruction; `Ok(false)`
/// when `i` is none of them.
pub fn check_instr(p: &Program, thread: &str, i: &Instr) -> Result<bool, Reason> {
    let imm = |o: &Operand, what: &str| -> Result<Value, Reason> {
        match o {
            Operand::Imm(v) => Ok(*v),
            Operand::Reg(_) => Err(Reason::MbarrierOperand {
                thread: thread.to_string(),
                what: what.to_string(),
            }),
        }
    };
    match i {
        Instr::AsyncCopy { kind, size, .. } => {
            let ok = match kind {
                AsyncKind::Bulk | AsyncKind::ReduceBulk(_) => {
                    *size > 0 && *size % WORD_BYTES == 0 && CELL_BYTES % *size == 0
                }
                AsyncKind::NonBulk | AsyncKind::Store | AsyncKind::Reduce(_) => *size == WORD_BYTES,
            };
            if !ok {
                return Err(Reason::CopySize {
                    thread: thread.to_string(),
                    size: *size,
                });
            }
            if let AsyncKind::ReduceBulk(op) | AsyncKind::Reduce(op) = kind {
                if *op == crate::ir::RmwOp::Sub {
                    return Err(Reason::AtomSub);
                }
            }
        }
        Instr::CommitGroup { .. } | Instr::WaitGroup { .. } | Instr::AsyncMbarArrive { .. } => {}
        Instr::Mbar { op, dst, arg, .. } => {
            if dst.is_some() {
                return Err(Reason::MbarrierStateToken(thread.to_string()));
            }
            if let Some(a) = arg {
                let what = match op {
                    MbarOp::Init | MbarOp::Arrive => "an arrival count",
                    _ => "a transaction byte count",
                };
                imm(a, what)?;
            }
        }
        Instr::MbarWait {
            suspend: Some(h), ..
        } if matches!(h, Operand::Reg(_)) => {
            // The suspend-time hint is emitted as written; it must be known.
            imm(h, "a suspend-time hint")?;
        }
        Instr::MbarWait { phase, .. } => match phase {
            WaitPhase::Parity(o) => {
                let k = imm(o, "a phase parity")?;
                if !(0..=1).contains(&k) {
                    return Err(Reason::MbarrierPhase {
                        bar: name_of_wait(p, i),
                        why: format!("the phase parity {k} is neither 0 nor 1"),
                    });
                }
            }
            WaitPhase::State(Operand::Reg(_)) => {
                return Err(Reason::MbarrierStateToken(thread.to_string()));
            }
            WaitPhase::State(Operand::Imm(_)) => {}
            WaitPhase::Phase(_) => {
                return Err(Reason::UnknownInstruction {
                    thread: thread.to_string(),
                    what: "a lowered cluster-barrier wait".to_string(),
                });
            }
        },
        Instr::ClusterBarrier { .. } => {}
        Instr::ProxyFenceUni { to, operand, .. } => {
            if *to == UniProxy::Tensormap && operand.is_some() {
                return Err(Reason::TensormapAcquire(thread.to_string()));
            }
        }
        Instr::ProxyFence {
            kind: ProxyFenceKind::Async(_),
        } => {}
        Instr::Fence {
            restrict: Some(_), ..
        } => {}
        _ => return Ok(false),
    }
    Ok(true)
}

fn name_of_wait(p: &Program, i: &Instr) -> String {
    match i {
        Instr::MbarWait { addr, .. } => p.locations[p.addresses[*addr].loc].name.clone(),
        _ => String::new(),
    }
}

/// Per mbarrier: what the test does to it.
#[derive(Default)]
struct Usage {
    /// Arrivals that count (synchronous ones and `cp.async.mbarrier.arrive.noinc`).
    arrivals: Value,
    /// Whether an arrival sits in a thread that loops.
    arrive_in_loop: bool,
    /// `mbarrier.init` counts written by the test.
    inits: Vec<Value>,
    /// Litmus bytes of standalone `expect_tx`.
    plain_expect: Value,
    /// Litmus bytes of `arrive.expect_tx`.
    arrive_expect: Value,
    /// Litmus bytes of `complete_tx` instructions.
    complete: Value,
    /// Hardware bytes of asynchronous operations completing on it, and their
    /// hardware bytes per litmus byte.
    async_bytes: Value,
    scales: Vec<Value>,
    /// An asynchronous operation completes on it (a copy or `cp.async.mbarrier.arrive`).
    completion: bool,
    /// Phases named by number by its waits (`State` form).
    waits_by_number: Vec<Value>,
}

/// Lay out the shared memory of a test and check what the hardware needs.
/// `ctas` are the plan's CTA roles, `units` the launch units (test clusters
/// as role lists with a cluster launch; `None` without one).
pub fn analyse(
    p: &Program,
    ctas: &[CtaRole],
    units: Option<&[Vec<usize>]>,
) -> Result<SharedPlan, Reason> {
    let role_of = |gpu: u32, cta: u32| -> Option<usize> {
        ctas.iter().position(|c| {
            c.cta == cta
                && c.threads
                    .first()
                    .is_some_and(|&t| p.threads[t].placement.gpu == gpu)
        })
    };
    let mut data = Vec::new();
    let mut mbarriers = Vec::new();
    let mut cells = 0;
    for (l, loc) in p.locations.iter().enumerate() {
        let Space::Shared { gpu, cta } = loc.space else {
            continue;
        };
        let Some(role) = role_of(gpu, cta) else {
            return Err(Reason::SharedWithoutCta(loc.name.clone()));
        };
        let rank = cells;
        cells += 1;
        match loc.kind {
            LocKind::Mbarrier => {
                let n = mbar::expected(loc.init);
                mbarriers.push(MbarPlan {
                    loc: l,
                    role,
                    rank,
                    declared: (n > 0).then_some(n),
                    initialised: n > 0,
                    scale: 1,
                    drain: None,
                });
            }
            _ => data.push(SharedLoc { loc: l, role, rank }),
        }
    }

    // What each thread does to each mbarrier.
    let mut usage: Vec<Usage> = mbarriers.iter().map(|_| Usage::default()).collect();
    let bar_index = |addr: AddrId| -> Option<usize> {
        let l = p.addresses[addr].loc;
        mbarriers.iter().position(|m| m.loc == l)
    };
    let mut cp_async = vec![false; p.threads.len()];
    let mut bulk_groups = vec![false; p.threads.len()];
    let mut global_cells = false;
    for (t, th) in p.threads.iter().enumerate() {
        let loops = th
            .code
            .iter()
            .enumerate()
            .any(|(pc, i)| matches!(i, Instr::Branch { target, .. } if *target <= pc));
        for i in &th.code {
            match i {
                Instr::AsyncCopy {
                    kind,
                    dst_space,
                    src_space,
                    size,
                    completion,
                    ..
                } => {
                    let hw = match kind {
                        AsyncKind::Bulk | AsyncKind::ReduceBulk(_) => {
                            if *dst_space == SpaceQual::Global
                                || *src_space == Some(SpaceQual::Global)
                            {
                                global_cells = true;
                            }
                            CELL_BYTES
                        }
                        _ => WORD_BYTES,
                    };
                    match completion {
                        Completion::Mbarrier(b) => {
                            if let Some(k) = bar_index(*b) {
                                let u = &mut usage[k];
                                u.completion = true;
                                u.async_bytes += hw;
                                u.scales.push(hw / *size);
                            }
                        }
                        Completion::BulkGroup => bulk_groups[t] = true,
                        Completion::AsyncGroup => cp_async[t] = true,
                    }
                }
                Instr::AsyncMbarArrive { addr, noinc } => {
                    cp_async[t] = true;
                    if let Some(k) = bar_index(*addr) {
                        let u = &mut usage[k];
                        u.completion = true;
                        if *noinc {
                            u.arrivals += 1;
                        }
                        u.arrive_in_loop |= loops;
                    }
                }
                Instr::Mbar { op, addr, arg, .. } => {
                    let Some(k) = bar_index(*addr) else { continue };
                    let v = match arg {
                        Some(Operand::Imm(v)) => *v,
                        _ => 1,
                    };
                    let u = &mut usage[k];
                    match op {
                        MbarOp::Init => u.inits.push(v),
                        MbarOp::Arrive => {
                            u.arrivals += v;
                            u.arrive_in_loop |= loops;
                        }
                        MbarOp::ArriveExpectTx => {
                            u.arrivals += 1;
                            u.arrive_expect += v;
                            u.arrive_in_loop |= loops;
                        }
                        MbarOp::ExpectTx => {
                            u.plain_expect += v;
                            u.arrive_in_loop |= loops;
                        }
                        MbarOp::CompleteTx => {
                            u.complete += v;
                            u.arrive_in_loop |= loops;
                        }
                    }
                }
                Instr::MbarWait {
                    addr,
                    phase: WaitPhase::State(Operand::Imm(token)),
                    ..
                } => {
                    if let Some(k) = bar_index(*addr) {
                        usage[k].waits_by_number.push(mbar::phase(*token));
                    }
                }
                _ => {}
            }
        }
    }

    for (m, u) in mbarriers.iter_mut().zip(&usage) {
        let name = p.locations[m.loc].name.clone();
        let phase_err = |why: String| Reason::MbarrierPhase {
            bar: name.clone(),
            why,
        };
        if u.arrive_in_loop {
            return Err(phase_err(
                "a thread that loops arrives on it or changes its transaction count, so the phases it completes are not known before the run".into(),
            ));
        }
        let count = match (m.declared, u.inits.as_slice()) {
            (Some(n), []) => n,
            (None, [n]) => {
                m.initialised = true;
                *n
            }
            (None, []) => return Err(phase_err("it is never initialised".into())),
            _ => {
                return Err(phase_err(
                    "it is initialised more than once; the harness cannot tell the phases apart"
                        .into(),
                ));
            }
        };
        // A wait that names a phase by number becomes a parity wait (the
        // hardware's state token cannot be made up): exact only for phase 0
        // when at most one phase can complete.
        let most_phases = u.arrivals / count;
        for &k in &u.waits_by_number {
            if k != 0 || most_phases > 1 {
                return Err(phase_err(format!(
                    "a wait asks whether phase {k} completed while {most_phases} phases may complete; the hardware wait tests the phase's parity"
                )));
            }
        }
        // Hardware bytes per litmus byte: one factor for every operation
        // that completes on the barrier.
        let mut scales = u.scales.clone();
        scales.sort_unstable();
        scales.dedup();
        m.scale = match scales.as_slice() {
            [] => 1,
            [s] => *s,
            _ => {
                return Err(Reason::TxBytes {
                    bar: name,
                    why: "bulk copies (16 bytes) and word-sized st.async/red.async complete on it; one byte count cannot match both".into(),
                });
            }
        };
        if !u.completion {
            continue;
        }
        let drain_err = |why: String| Reason::MbarrierDrain {
            bar: name.clone(),
            why,
        };
        if m.declared.is_none() {
            return Err(drain_err(
                "the test initialises it, so the harness cannot add the arrivals that tell it when the asynchronous operations have landed".into(),
            ));
        }
        let expect = (u.plain_expect + u.arrive_expect) * m.scale;
        let complete = u.async_bytes + u.complete * m.scale;
        let a = u.arrivals;
        m.drain = Some(if a < count {
            // The first phase cannot complete during the test; the harness
            // adds the missing arrivals and bytes after it.
            if complete < expect {
                return Err(drain_err(format!(
                    "{expect} bytes are expected but only {complete} complete; the phase would never complete"
                )));
            }
            Drain {
                expect_tx: complete - expect,
                arrivals: count - a,
            }
        } else if a == count && u.plain_expect == 0 && expect == complete {
            // Every expected byte is announced with an arrival, so the first
            // phase completes exactly when the last byte lands.
            Drain {
                expect_tx: 0,
                arrivals: 0,
            }
        } else {
            return Err(drain_err(format!(
                "{a} arrivals for a count of {count}, {expect} bytes expected and {complete} completed: the first phase could complete before every asynchronous operation has landed"
            )));
        });
    }

    // barrier.cluster: every thread of a hardware cluster takes part in each
    // phase, so the test's threads of one cluster must all go through the
    // same number (idle threads of the cluster then join as many).
    let arrivals_of = |t: ThreadId| -> usize {
        p.threads[t]
            .code
            .iter()
            .filter(|i| matches!(i, Instr::ClusterBarrier { arrive: true, .. }))
            .count()
    };
    let cluster_phases = match units {
        Some(units) => {
            let mut out = Vec::with_capacity(units.len());
            for roles in units {
                let counts: Vec<usize> = roles
                    .iter()
                    .flat_map(|&r| ctas[r].threads.iter().map(|&t| arrivals_of(t)))
                    .collect();
                if counts.iter().any(|&n| n != counts[0]) {
                    return Err(Reason::ClusterBarrierPhases(
                        p.threads[ctas[roles[0]].threads[0]].placement.cluster,
                    ));
                }
                out.push(counts.first().copied().unwrap_or(0));
            }
            out
        }
        None => vec![0; ctas.len()],
    };

    Ok(SharedPlan {
        data,
        mbarriers,
        cells,
        cluster_phases,
        cp_async,
        bulk_groups,
        global_cells,
        status_offset: 0,
    })
}
