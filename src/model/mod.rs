//! What both engines share about the memory model itself: which model is
//! in force ([`Model`]), what a program may use under it, and the static
//! analyses both engines must agree on (loops, [`loops`]; what a hang is,
//! [`hang`]).

pub mod accounting;
pub mod barrier;
pub mod describe;
pub mod griddep;
pub mod hang;
pub mod loops;
pub mod lower;
pub mod sync;
pub mod ub;

use clap::ValueEnum;
use serde::Serialize;
use std::fmt;

use crate::ir::{Instr, Program, Proxy, Restrict, Scope};
use crate::litmus::{Diagnostic, SourceMap};

/// The memory model an engine implements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, ValueEnum)]
pub enum Model {
    /// PTX 7.5 and later: scopes (incl. `.cluster`), proxies, aliases, proxy fences.
    #[default]
    #[value(name = "ptx7.5")]
    #[serde(rename = "ptx7.5")]
    Ptx75,
    /// PTX 6.0: the scoped model of ASPLOS'19, generic proxy only.
    #[value(name = "ptx6.0")]
    #[serde(rename = "ptx6.0")]
    Ptx60,
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Model::Ptx75 => "ptx7.5",
            Model::Ptx60 => "ptx6.0",
        })
    }
}

impl Model {
    /// Reject what the model cannot express, pointing at the offending text.
    ///
    /// PTX 6.0 has neither proxies nor aliases nor clusters: a test that uses
    /// them is refused rather than silently read as generic accesses.
    pub fn admit(self, p: &Program, spans: &SourceMap) -> Result<(), Diagnostic> {
        counted_barriers_of_lanes(p, spans)?;
        griddep::check(p, spans)?;
        if self == Model::Ptx75 {
            return lower::check(p, spans);
        }
        let note = "PTX 6.0 has one (generic) proxy, no aliases, no clusters and no asynchronous \
                    operations; use --model ptx7.5";
        for (t, th) in p.threads.iter().enumerate() {
            for (pc, i) in th.code.iter().enumerate() {
                let span = spans.instr(t, pc);
                let bad = match i {
                    Instr::ProxyFence { kind } => Some(format!("`fence.proxy.{}`", kind.as_str())),
                    Instr::GridDep { .. } => Some("`griddepcontrol` (PTX 7.8+)".to_string()),
                    Instr::Fence {
                        restrict: Some(_), ..
                    } => Some("a restricted fence".to_string()),
                    Instr::ProxyFenceUni { .. }
                    | Instr::AsyncCopy { .. }
                    | Instr::CommitGroup { .. }
                    | Instr::WaitGroup { .. }
                    | Instr::AsyncMbarArrive { .. }
                    | Instr::Mbar { .. }
                    | Instr::MbarWait { .. }
                    | Instr::ClusterBarrier { .. }
                    | Instr::Signal { .. }
                    | Instr::Await { .. } => Some(
                        "an asynchronous-proxy, mbarrier or cluster instruction (PTX 8.0+)"
                            .to_string(),
                    ),
                    Instr::Fence {
                        scope: Scope::Cluster,
                        ..
                    } => Some("a `.cluster` scope".to_string()),
                    _ => i.access().and_then(|a| {
                        let addr = &p.addresses[a.addr];
                        if a.proxy != Proxy::Generic {
                            Some(format!("a {} proxy access", a.proxy))
                        } else if addr.va != a.addr {
                            Some(format!("access through alias `{}`", addr.name))
                        } else if a.scope == Some(Scope::Cluster) {
                            Some("a `.cluster` scope".to_string())
                        } else {
                            None
                        }
                    }),
                };
                if let Some(found) = bad {
                    return Err(Diagnostic::expected(
                        span,
                        "an instruction of the PTX 6.0 model",
                        found,
                    )
                    .with_label("not in PTX 6.0")
                    .with_note(note));
                }
            }
        }
        Ok(())
    }

    /// Readings the user should know about: inputs that are accepted but
    /// modelled more strictly than PTX states (`docs/async.md`).
    pub fn warnings(self, p: &Program, spans: &SourceMap) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for (t, th) in p.threads.iter().enumerate() {
            for (pc, i) in th.code.iter().enumerate() {
                let restricted_acquire = matches!(
                    i,
                    Instr::Fence {
                        restrict: Some(Restrict::SharedCluster),
                        ..
                    } | Instr::ProxyFenceUni {
                        acquire: true,
                        restrict: Some(Restrict::SharedCluster),
                        ..
                    }
                );
                if restricted_acquire {
                    let span = spans.instr(t, pc);
                    out.push(
                        Diagnostic::warning(
                            span,
                            "`.sync_restrict::shared::cluster` is modelled as an unrestricted acquire",
                        )
                        .with_label("orders every later access, not only `.shared::cluster` ones")
                        .with_note(
                            "ptxmc may forbid outcomes in which a later access outside shared memory \
                             reads a stale value; see docs/async.md",
                        ),
                    );
                }
            }
        }
        out
    }
}

/// PTX counts a CTA barrier's threads per warp (*"marks warps' arrival at
/// barrier"*, PTX ISA §9.7.13.1): the arrival of a warp's lanes at a counted
/// barrier (PTX's `bar.sync a, b`) is one event that counts 32 threads,
/// whatever number of lanes the litmus test gives the warp
/// (`model::barrier::warp_unit`). Refused, at the barrier: the dialect's
/// three-operand `bar.sync a, b, n` by lanes (`n` counts litmus threads, and
/// lanes of one warp are threads of one warp).
fn counted_barriers_of_lanes(p: &Program, spans: &SourceMap) -> Result<(), Diagnostic> {
    for (t, th) in p.threads.iter().enumerate() {
        if th.agent.is_some() || p.warp_lanes(t).len() < 2 {
            continue;
        }
        for (pc, i) in th.code.iter().enumerate() {
            let Instr::Barrier { kind, count, .. } = i else {
                continue;
            };
            if kind.is_warp() || count.is_none() {
                continue;
            }
            return Err(Diagnostic::expected(
                spans.instr(t, pc),
                "PTX's `bar.sync a, b` (a thread count), or the warp as one litmus thread (no `warp`)",
                "the dialect's `bar.sync a, b, n` executed by a lane of a warp",
            )
            .with_label("counted barriers of the dialect's three-operand form are not supported for lanes")
            .with_note("`n` counts litmus threads; lanes of one warp are threads of one warp"));
        }
    }
    Ok(())
}
