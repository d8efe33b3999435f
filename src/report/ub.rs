//! Words for undefined behaviour: one owner of its sentence, which herd
//! text, JSON and traces share (`docs/barriers.md`, "Undefined behaviour").

use serde::Serialize;

use crate::litmus::LitmusTest;
use crate::model::ub::Undefined;

/// An undefined step, as the reports show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UbReport {
    /// The kind (`barrier`, `mbarrier`, `accumulator`, `wgmma-fence`,
    /// `warpgroup`, `out-of-bounds`).
    pub kind: &'static str,
    /// What happened (for an accumulator access, with the thread, the
    /// register and the instructions named).
    pub what: String,
    /// The ISA's sentence that makes it undefined, with its section.
    pub isa: &'static str,
    /// The instructions involved.
    pub at: Vec<UbSite>,
}

/// One instruction of an undefined step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UbSite {
    /// The thread (`P0`).
    pub thread: String,
    /// The instruction as written.
    pub instr: String,
    /// `file:line:column` of the instruction.
    pub position: String,
}

/// The report of `u`, found in test `t`.
pub fn of(t: &LitmusTest, u: &Undefined) -> UbReport {
    let kind = match u.kind {
        crate::model::ub::UbKind::Barrier(_) => "barrier",
        crate::model::ub::UbKind::Mbarrier(_) => "mbarrier",
        crate::model::ub::UbKind::Accumulator(_) => "accumulator",
        crate::model::ub::UbKind::Warpgroup(_) => "warpgroup",
        crate::model::ub::UbKind::WgmmaFence(_) => "wgmma-fence",
        crate::model::ub::UbKind::Step(crate::ir::UndefinedStep::OutOfBounds) => "out-of-bounds",
    };
    let text = |th: usize, pc: usize| {
        crate::litmus::print::instr(
            &t.program,
            &t.program.threads[th],
            &t.program.threads[th].code[pc],
        )
    };
    let what = match (u.kind, u.at.as_slice()) {
        (crate::model::ub::UbKind::Accumulator(a), &[(th, op), (_, at), (_, wait)]) => format!(
            "{} {} `{}` (`{}`) before `{}` completes `{}`, which writes it",
            t.program.threads[th].name,
            if a.write { "writes" } else { "reads" },
            t.program.threads[th].regs[a.reg].name,
            text(th, at),
            text(th, wait),
            text(th, op),
        ),
        (crate::model::ub::UbKind::Warpgroup(w), &[(th, at)]) if w.present < 128 => format!(
            "{} executes `{}`, which all 128 threads of its warpgroup must execute together, but \
             the launch gives warpgroup {} of its CTA {} thread{}",
            t.program.threads[th].name,
            text(th, at),
            w.warpgroup,
            w.present,
            if w.present == 1 { "" } else { "s" },
        ),
        (crate::model::ub::UbKind::Warpgroup(w), &[(th, at)]) => format!(
            "{} executes `{}`, which the other threads of warpgroup {} of its CTA do not execute \
             with it",
            t.program.threads[th].name,
            text(th, at),
            w.warpgroup,
        ),
        (crate::model::ub::UbKind::WgmmaFence(f), &[(th, mma)]) if f.access.is_none() => format!(
            "{} issues `{}`, its first `wgmma.mma_async`, with no `wgmma.fence` before it",
            t.program.threads[th].name,
            text(th, mma),
        ),
        (crate::model::ub::UbKind::WgmmaFence(f), &[(th, at), (_, mma)]) => format!(
            "{} {} `{}` (`{}`) and then issues `{}`, which accesses it, with no `wgmma.fence` \
             between",
            t.program.threads[th].name,
            if f.access == Some(true) {
                "writes"
            } else {
                "reads"
            },
            t.program.threads[th].regs[f.reg].name,
            text(th, at),
            text(th, mma),
        ),
        (crate::model::ub::UbKind::Step(crate::ir::UndefinedStep::OutOfBounds), &[(th, _)]) => {
            format!(
                "{} accesses an address, computed from a loaded value, that is no element of the \
                 buffer or variable its pointer points into (out of bounds, or not aligned to an \
                 element)",
                t.program.threads[th].name,
            )
        }
        _ => u.kind.what().to_string(),
    };
    UbReport {
        kind,
        what,
        isa: u.kind.isa(),
        at: u
            .at
            .iter()
            .map(|&(th, pc)| UbSite {
                thread: t.program.threads[th].name.clone(),
                instr: crate::litmus::print::instr(
                    &t.program,
                    &t.program.threads[th],
                    &t.program.threads[th].code[pc],
                ),
                position: t.position(th, pc),
            })
            .collect(),
    }
}

/// The herd-text line: `Undefined: <what> — P0 `bar.sync 1, 48` (f:3:2); <isa>`.
pub fn line(u: &UbReport) -> String {
    let sites: Vec<String> =
        u.at.iter()
            .map(|s| format!("{} `{}` ({})", s.thread, s.instr, s.position))
            .collect();
    format!("Undefined: {} — {}; {}", u.what, sites.join(", "), u.isa)
}
