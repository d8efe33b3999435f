//! A machine state as a teacher draws it: threads grouped by GPU, cluster
//! and CTA, each with its registers, its code and next instruction, its
//! "store buffer" and the cache lines its view guarantees; memory as the
//! versions of every location in coherence order; barrier arrivals and the
//! asynchronous operations in flight. Plain data (serialised for the
//! playground) built from the machine's state; `docs/playground.md` maps
//! each box to what the machine (`docs/machine.md`) holds.
//!
//! The machine has no literal store buffers or caches. What is drawn:
//! * a thread's **store buffer**: its writes issued early (already versions
//!   in memory, forwarded to a reader ahead of their retirement) and its
//!   reads bound early, that it has not retired yet;
//! * its **cache lines**: for each location it reads, the oldest version its
//!   view still allows that read to return (anything coherence-before is
//!   hidden from it), and for each non-generic proxy path of a CTA, what an
//!   invalidation has removed from it;
//! * **memory**: every version written so far at the L2 coherence point,
//!   with the coherence order between them (a DAG while stores are unordered).

use crate::rel::Bits;
use serde::Serialize;

use crate::ir::{LocKind, Proxy};
use crate::op::Machine;
use crate::op::state::{Stage, State};
use crate::rel::members;

/// The whole picture of one state.
#[derive(Clone, Debug, Serialize)]
pub struct Picture {
    /// The CTAs with their threads, in placement order.
    pub ctas: Vec<CtaBox>,
    /// Asynchronous operations (copies, mbarrier completions), each with its issuer.
    pub asyncs: Vec<ThreadBox>,
    /// Every location of memory.
    pub memory: Vec<LocationBox>,
    /// Threads waiting at a barrier, in words.
    pub barriers: Vec<String>,
}

/// One CTA: where it is, and its threads.
#[derive(Clone, Debug, Serialize)]
pub struct CtaBox {
    /// GPU number.
    pub gpu: u32,
    /// Cluster number within the GPU.
    pub cluster: u32,
    /// CTA number within the GPU.
    pub cta: u32,
    /// Its threads.
    pub threads: Vec<ThreadBox>,
}

/// One thread (or the agent of an asynchronous operation).
#[derive(Clone, Debug, Serialize)]
pub struct ThreadBox {
    /// `P0`, or the agent's name.
    pub name: String,
    /// For an asynchronous operation: the instruction that issued it.
    pub issued_by: Option<String>,
    /// `running`, `not started`, `waiting at a barrier`, `finished` or
    /// `stopped at the loop bound`.
    pub status: &'static str,
    /// Its code, one instruction a line, as written.
    pub code: Vec<String>,
    /// Its labels as written, each with the index in `code` of the
    /// instruction it precedes (`code.len()` for one at the end): a loop
    /// reads as the test does (`LC10:` before the instruction a branch
    /// goes back to). An agent has none.
    pub labels: Vec<crate::ir::Label>,
    /// The index in `code` of the next instruction to retire (`code.len()`
    /// when finished).
    pub pc: usize,
    /// Registers and their values, as `r0=1`.
    pub registers: Vec<String>,
    /// Its "store buffer": writes issued ahead of their retirement (already
    /// versions in memory, forwarded to a reader), not retired yet.
    pub store_buffer: Vec<String>,
    /// Reads that have returned a value ahead of their retirement.
    pub early_reads: Vec<String>,
    /// What its view guarantees each location it reads shows (`x ≥ 1 (P0 `st x, 1`)`).
    pub cache_lines: Vec<String>,
    /// Writes of other threads in its causal past.
    pub causal_past: Vec<String>,
}

/// One location: its versions in coherence order.
#[derive(Clone, Debug, Serialize)]
pub struct LocationBox {
    /// Its name.
    pub name: String,
    /// `data`, `mbarrier` or `synthetic`.
    pub kind: &'static str,
    /// The versions, oldest first in coherence order, as `1 (P0 `st x, 1`)`.
    pub versions: Vec<String>,
    /// The coherence order as chains (`x: 0 < 1 < 2`), unordered pairs named.
    pub coherence: String,
}

/// The picture of `st`.
pub fn picture<S: Bits>(m: &Machine<'_, S>, st: &State<S>) -> Picture {
    picture_at(m, st, None)
}

/// The picture of `st`, naming a warp-level wait by where its instruction
/// is written when `at` has the test's positions.
pub fn picture_at<S: Bits>(
    m: &Machine<'_, S>,
    st: &State<S>,
    at: Option<&crate::explain::words::Positions>,
) -> Picture {
    let p = &m.program;
    let mut ctas: Vec<CtaBox> = Vec::new();
    let mut asyncs = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        let b = thread_box(m, st, t);
        if th.agent.is_some() {
            asyncs.push(b);
            continue;
        }
        let pl = th.placement;
        match ctas
            .iter_mut()
            .find(|c| (c.gpu, c.cluster, c.cta) == (pl.gpu, pl.cluster, pl.cta))
        {
            Some(c) => c.threads.push(b),
            None => ctas.push(CtaBox {
                gpu: pl.gpu,
                cluster: pl.cluster,
                cta: pl.cta,
                threads: vec![b],
            }),
        }
    }
    ctas.sort_by_key(|c| (c.gpu, c.cluster, c.cta));
    let memory = (0..p.locations.len())
        .map(|l| location_box(m, st, l))
        .collect();
    let barriers = st
        .arrivals
        .iter()
        .filter(|a| st.threads[a.thread].arrived)
        .map(|a| waiting(m, a, at))
        .collect();
    Picture {
        ctas,
        asyncs,
        memory,
        barriers,
    }
}

/// One thread waiting at a barrier, in words. A warp-level rendezvous
/// (`bar.warp.sync`, `elect.sync`, `activemask`) is keyed on an encoded
/// resource (`model::barrier::resolve_warp_kind`): it is named by its
/// instruction, where it is written, and the lanes it waits for.
fn waiting<S: Bits>(
    m: &Machine<'_, S>,
    a: &crate::op::state::Arrival,
    at: Option<&crate::explain::words::Positions>,
) -> String {
    let p = &m.program;
    let (gpu, cta) = m.layout.ctas[a.cta];
    let name = &p.threads[a.thread].name;
    match crate::model::barrier::participants(p, gpu, cta, &a.id) {
        Some(lanes) => {
            let pc = m.layout.slots[a.slot].pc;
            let place = at
                .and_then(|x| x.short(a.thread, pc))
                .map_or_else(String::new, |l| format!(" ({l})"));
            let names: Vec<&str> = lanes.iter().map(|&u| p.threads[u].name.as_str()).collect();
            // `activemask.b32 d` as written: the rendezvous and the `mov`
            // of its result after it (`ir::activemask`), as the choice of
            // blocks names it.
            let code = &p.threads[a.thread].code;
            let instr = match (code.get(pc), code.get(pc + 1)) {
                (
                    Some(crate::ir::Instr::Barrier {
                        kind: crate::ir::BarrierKind::ActiveMask,
                        ..
                    }),
                    Some(crate::ir::Instr::Mov { dst, .. }),
                ) => format!("activemask.b32 {}", p.threads[a.thread].regs[*dst].name),
                _ => m.instr_text(a.thread, pc),
            };
            format!(
                "{name} waits at `{instr}`{place} for the lanes {} (phase {})",
                names.join(","),
                a.phase
            )
        }
        None => {
            let id: Vec<String> = a.id.iter().map(|v| v.to_string()).collect();
            format!(
                "{name} waits at barrier {} of CTA {cta} (phase {})",
                id.join(","),
                a.phase
            )
        }
    }
}

fn thread_box<S: Bits>(m: &Machine<'_, S>, st: &State<S>, t: usize) -> ThreadBox {
    let p = &m.program;
    let th = &p.threads[t];
    let ts = &st.threads[t];
    let l = &m.layout;
    let finished = ts.finished(th.code.len());
    let status = if ts.cut {
        "stopped at the loop bound"
    } else if finished {
        "finished"
    } else if ts.arrived {
        "waiting at a barrier"
    } else if m.never_starts(st, t) {
        "never starts: its issuer did not perform this execution"
    } else if th.agent.is_some() && ts.seq == 0 {
        "not started"
    } else {
        "running"
    };
    let code = (0..th.code.len()).map(|pc| m.instr_text(t, pc)).collect();
    // A source thread keeps its instruction indices through the lowering.
    let labels = match th.agent {
        None => m.source.threads[t].labels.clone(),
        Some(_) => Vec::new(),
    };
    let registers = th
        .regs
        .iter()
        .zip(&ts.regs)
        .map(|(r, v)| format!("{}={v}", r.name))
        .collect();
    let mine = l.thread_slots[t];
    let store_buffer: Vec<String> = members(st.versions & mine & !st.retired)
        .map(|w| format!("{} (issued early, not retired yet)", m.version_text(st, w)))
        .collect();
    let early_reads = members(st.bound & mine & !st.retired).map(|r| {
        let si = &l.slots[r];
        format!(
            "`{}` returned {} (not retired yet)",
            m.instr_text(t, si.pc),
            m.version_text(st, st.rf[r] as usize)
        )
    });
    let early_reads = early_reads.collect();
    let issued_by = th.agent.as_ref().map(|a| {
        let issuer = &m.source.threads[a.issuer];
        format!(
            "{} `{}`{}",
            issuer.name,
            crate::model::describe::instr_text(m.source, p, a.issuer, a.spawn_pc),
            match a.exec {
                0 => String::new(),
                k => format!(", its execution {}", k + 1),
            }
        )
    });
    ThreadBox {
        name: th.name.clone(),
        issued_by,
        status,
        code,
        labels,
        pc: ts.pc.min(th.code.len()),
        registers,
        store_buffer,
        early_reads,
        cache_lines: cache_lines(m, st, t),
        causal_past: members(ts.view.raw & l.writes & !mine & !l.inits)
            .map(|w| m.slot_text(w))
            .collect(),
    }
}

/// For each location thread `t` reads (one entry per cache line: location,
/// proxy, address), the oldest versions its view lets the read return; then
/// what invalidations did to the CTAs' non-generic proxy caches.
fn cache_lines<S: Bits>(m: &Machine<'_, S>, st: &State<S>, t: usize) -> Vec<String> {
    let l = &m.layout;
    let p = &m.program;
    let view = &st.threads[t].view;
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for s in members(l.reads & l.thread_slots[t]) {
        let si = &l.slots[s];
        let key = (si.loc, si.va, si.proxy, si.cta);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let (front, _) = m.front_plus(st, view, s);
        let front = front & st.versions;
        // The newest guaranteed versions: nothing in the front is after them.
        let newest: Vec<String> = members(front)
            .filter(|&w| members(front).all(|u| !st.co_before(w, u)))
            .map(|w| m.version_text(st, w))
            .collect();
        let path = if si.proxy == Proxy::Generic {
            String::new()
        } else {
            format!(" through CTA {}'s {} proxy", l.ctas[si.cta].1, si.proxy)
        };
        let addr = p
            .addresses
            .get(si.va)
            .map_or(&p.locations[si.loc].name, |a| &a.name);
        let what = if newest.is_empty() {
            "may show any version".to_string()
        } else {
            format!("shows {} or newer", newest.join(" and "))
        };
        out.push(format!("{addr}{path}: {what}"));
    }
    for (pair, &(c, q)) in l.line_pairs.iter().enumerate() {
        let inval = view.line(Some(pair), Stage::Gen) & l.writes & !l.inits;
        if !inval.is_empty() {
            let list: Vec<String> = members(inval).map(|w| m.slot_text(w)).collect();
            out.push(format!(
                "CTA {}'s {q} cache was invalidated after {}: it shows nothing older",
                l.ctas[c].1,
                list.join(", ")
            ));
        }
    }
    out
}

fn location_box<S: Bits>(m: &Machine<'_, S>, st: &State<S>, loc: usize) -> LocationBox {
    let l = &m.layout;
    let vs = st.versions & l.loc_slots[loc];
    let mut order: Vec<usize> = members(vs).collect();
    // Oldest first: the more versions are after it, the older.
    order.sort_by_key(|&v| std::cmp::Reverse((st.co[v] & vs).count()));
    let kind = match m.program.locations[loc].kind {
        LocKind::Data => "data",
        LocKind::Mbarrier => "mbarrier",
        LocKind::Synthetic => "synthetic",
        LocKind::TensorMemory => "tensor memory",
    };
    let versions = order
        .iter()
        .map(|&v| {
            let text = m.version_text(st, v);
            let name = &m.program.locations[loc].name;
            text.strip_prefix(&format!("{name}="))
                .map(str::to_string)
                .unwrap_or(text)
        })
        .collect();
    LocationBox {
        name: m.program.locations[loc].name.clone(),
        kind,
        versions,
        coherence: m.coherence_text(st, loc),
    }
}
