//! Instructions of a lowered program told in the words of the test as
//! written: a source thread's instruction as the test spells it, an agent's
//! step as what the asynchronous operation does. Traces and explanations
//! share it, so both name every event the same way.

use crate::ir::{Instr, LocKind, Operand, Program, RmwOp, SignalKind, Value, mbar};
use crate::litmus::print;

/// Instruction `pc` of thread `t` of `lowered` (the lowering of `source`).
pub fn instr_text(source: &Program, lowered: &Program, t: usize, pc: usize) -> String {
    let th = &lowered.threads[t];
    let Some(a) = &th.agent else {
        let src = &source.threads[t];
        return match src.code.get(pc) {
            Some(i) => print::instr(source, src, i),
            None => "(end of the thread: its part of the primary grid is complete)".into(),
        };
    };
    let issuer = &source.threads[a.issuer];
    let name = |addr: usize| lowered.addresses[addr].name.clone();
    match &th.code[pc] {
        Instr::Await { .. } if pc == 0 => format!(
            "(start of {} `{}`{})",
            issuer.name,
            print::instr(source, issuer, &issuer.code[a.spawn_pc]),
            match a.exec {
                0 => String::new(),
                k => format!(", its execution {}", k + 1),
            }
        ),
        Instr::Await { .. } => "(after the tracked cp.async copies)".into(),
        Instr::Load { access, .. } => {
            format!("(read [{}], {} proxy)", name(access.addr), access.proxy)
        }
        Instr::Store { access, .. } => {
            format!("(write [{}], {} proxy)", name(access.addr), access.proxy)
        }
        Instr::Rmw {
            op, args, access, ..
        } if op.is_mbarrier() => {
            let n = match args[0] {
                Operand::Imm(v) => v.to_string(),
                Operand::Reg(_) => "?".into(),
            };
            let what = if *op == RmwOp::MbarCompleteTx {
                format!("complete-tx of {n} bytes")
            } else {
                "arrive".to_string()
            };
            format!(
                "({what} on [{}], .{}.{})",
                name(access.addr),
                access.sem,
                access.scope.map_or("-", |s| s.as_str())
            )
        }
        Instr::Rmw { op, access, .. } => format!(
            "(reduction {} into [{}], {} proxy)",
            op.as_str(),
            name(access.addr),
            access.proxy
        ),
        Instr::ProxyFence { .. } => "(implicit fence.proxy.async at completion)".into(),
        Instr::Signal {
            kind: SignalKind::ReadsDone,
        } => "(source reads complete)".into(),
        Instr::Signal { .. } => "(operation complete)".into(),
        other => print::instr(lowered, th, other),
    }
}

/// A location's value as text; mbarrier states decoded. Only mbarriers
/// (and the hidden mbarrier of `barrier.cluster`) hold an encoded state:
/// tensor memory and the hidden locations that carry a `wgmma` or
/// `tcgen05.ld` register result hold plain numbers.
pub fn value_text(p: &Program, loc: usize, v: Value) -> String {
    let l = &p.locations[loc];
    let encoded = match l.kind {
        LocKind::Mbarrier => true,
        LocKind::Synthetic => l.name.starts_with("%cluster_barrier"),
        LocKind::Data | LocKind::TensorMemory => false,
    };
    if !encoded {
        return v.to_string();
    }
    mbar::describe(v)
}
