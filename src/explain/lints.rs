//! Cheap notes on a test (`ptxmc run` prints them as `Note:` lines): a
//! release/acquire pair on one location that cannot synchronise because of
//! scope, a proxy fence in a CTA where its proxy is never used, and a fence
//! the test's forbidden outcome does not need. `ptxmc fix --weaken` gives
//! the full answer to the last one.

use crate::ir::{Instr, Placement, Program, Proxy, Quantifier, Scope, Sem};
use crate::litmus::print;
use crate::model::lower;
use crate::model::sync::placement_of;

/// The notes for `p`, in thread and instruction order. The redundant-fence
/// check runs the oracle once per fence, so it runs only when `cheap` (the
/// caller's run of the test was complete and quick).
pub fn notes(p: &Program, cheap: bool) -> Vec<String> {
    let mut out = scope_mismatches(p);
    out.extend(idle_proxy_fences(p));
    if cheap {
        out.extend(redundant_fences(p));
    }
    out
}

/// A release or acquire of the test, with where it runs.
struct Sync {
    thread: usize,
    pc: usize,
    addr: usize,
    scope: Scope,
    at: Placement,
}

/// Where a thread runs, outermost first.
fn place(at: &Placement) -> String {
    format!("GPU {}, cluster {}, CTA {}", at.gpu, at.cluster, at.cta)
}

fn text(p: &Program, t: usize, pc: usize) -> String {
    format!(
        "{} `{}`",
        p.threads[t].name,
        print::instr(p, &p.threads[t], &p.threads[t].code[pc])
    )
}

/// Releases and acquires on one virtual address whose scopes do not include
/// each other's threads: they never synchronise.
fn scope_mismatches(p: &Program) -> Vec<String> {
    let mut rel = Vec::new();
    let mut acq = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        for (pc, i) in th.code.iter().enumerate() {
            let at = th.placement;
            let (addr, sem, scope) = match i {
                Instr::Load { access, .. }
                | Instr::Store { access, .. }
                | Instr::Rmw { access, .. } => (access.addr, access.sem, access.scope),
                Instr::Mbar {
                    addr, sem, scope, ..
                }
                | Instr::MbarWait {
                    addr, sem, scope, ..
                } => (*addr, *sem, Some(*scope)),
                _ => continue,
            };
            let Some(scope) = scope else { continue };
            let reads = matches!(i, Instr::Load { .. } | Instr::MbarWait { .. })
                || matches!(i, Instr::Rmw { dst: Some(_), .. });
            let writes = !matches!(i, Instr::Load { .. } | Instr::MbarWait { .. });
            let s = Sync {
                thread: t,
                pc,
                addr: p.addresses[addr].va,
                scope,
                at,
            };
            if writes && matches!(sem, Sem::Release | Sem::AcqRel) {
                rel.push(Sync { ..s });
            } else if reads && matches!(sem, Sem::Acquire | Sem::AcqRel) {
                acq.push(s);
            }
        }
    }
    let mut out = Vec::new();
    for a in &acq {
        let same: Vec<&Sync> = rel
            .iter()
            .filter(|r| r.addr == a.addr && r.thread != a.thread)
            .collect();
        for r in same {
            let why = if !r.at.includes(r.scope, &a.at) {
                format!(
                    "the .{} scope of the release does not include {} ({})",
                    r.scope,
                    p.threads[a.thread].name,
                    place(&a.at)
                )
            } else if !a.at.includes(a.scope, &r.at) {
                format!(
                    "the .{} scope of the acquire does not include {} ({})",
                    a.scope,
                    p.threads[r.thread].name,
                    place(&r.at)
                )
            } else {
                continue;
            };
            out.push(format!(
                "{} and {} cannot synchronise: {why}",
                text(p, r.thread, r.pc),
                text(p, a.thread, a.pc)
            ));
        }
    }
    out
}

/// Proxy fences in a CTA where no access of their proxy happens (a proxy
/// fence acts only on its own CTA's paths).
fn idle_proxy_fences(p: &Program) -> Vec<String> {
    // Agents of later executions repeat the first one's accesses, so the
    // bound does not change which proxies each CTA uses.
    let lowered = lower::lower(p, 0);
    let used = |proxy: Proxy, gpu: u32, cta: u32| {
        lowered.threads.iter().enumerate().any(|(t, th)| {
            th.code.iter().enumerate().any(|(pc, i)| {
                let at = placement_of(&lowered, t, pc);
                i.access()
                    .is_some_and(|a| a.proxy == proxy && at.gpu == gpu && at.cta == cta)
            })
        })
    };
    let mut out = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        for (pc, i) in th.code.iter().enumerate() {
            let Instr::ProxyFence { kind } = i else {
                continue;
            };
            let Some(proxy) = kind.proxy() else { continue };
            let at = th.placement;
            if !used(proxy, at.gpu, at.cta) {
                out.push(format!(
                    "{} has no effect: no {proxy} access happens in CTA {} (a proxy fence acts only in its own CTA; place it in the CTA of the {proxy} access)",
                    text(p, t, pc),
                    at.cta
                ));
            }
        }
    }
    out
}

/// Fences the test does not need: without the fence the outcome stays
/// forbidden and nothing else the program does changes — the safety check
/// of `ptxmc fix --weaken` (`fix::weaken::fence_removal_changes`:
/// termination, definedness, races, final values), so the note and
/// `--weaken` agree. A fence the condition alone does not need but whose
/// removal changes something else is named with what it changes. Only for
/// tests with a few fences and an `exists`/`~exists` condition whose
/// outcome is forbidden.
fn redundant_fences(p: &Program) -> Vec<String> {
    if p.condition.quantifier == Quantifier::Forall {
        return Vec::new();
    }
    let fences: Vec<(usize, usize)> = p
        .threads
        .iter()
        .enumerate()
        .flat_map(|(t, th)| {
            th.code
                .iter()
                .enumerate()
                .filter(|(_, i)| matches!(i, Instr::Fence { .. } | Instr::ProxyFence { .. }))
                .map(move |(pc, _)| (t, pc))
        })
        .collect();
    if fences.is_empty() || fences.len() > 6 || p.has_loops() {
        return Vec::new();
    }
    let want = &p.condition.prop;
    if crate::fix::allows(p, want, 2, Default::default()) != Some(false) {
        return Vec::new();
    }
    let opts = crate::fix::FixOptions::default();
    let mut out = Vec::new();
    for (t, pc) in fences {
        let Ok(changes) = crate::fix::weaken::fence_removal_changes(p, want, t, pc, &opts) else {
            continue;
        };
        let outcome = changes.iter().any(|c| c.starts_with("the outcome "));
        if changes.is_empty() {
            out.push(format!(
                "{} is not needed: without it the outcome stays forbidden and nothing else the program does changes (termination, definedness, races, final values; see `ptxmc fix --weaken`)",
                text(p, t, pc)
            ));
        } else if !outcome {
            out.push(format!(
                "{} is not needed for this test's condition, but it is needed: without it {} (see `ptxmc fix --weaken`)",
                text(p, t, pc),
                changes.join("; ")
            ));
        }
    }
    out
}
