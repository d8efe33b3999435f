//! Decoding the asynchronous-proxy, mbarrier and cluster instructions:
//! `cp.async.bulk*`, `cp.reduce.async.bulk`, `cp.async*`, `mbarrier.*`,
//! `barrier.cluster.*`, `st.async`, `red.async`. Each family checks its
//! modifiers against what PTX allows and names anything ptxmc does not model.

use super::diag::{Diagnostic, Span};
use super::raw::{
    Modifier, RawInstr, RawOperand, Resolver, address, classify, expect_operands, mod_error,
    register, value,
};
use crate::ir::{
    AsyncKind, AsyncSrc, Completion, Instr, MbarOp, Operand, RmwOp, Scope, Sem, SpaceQual, Value,
    WaitPhase,
};

fn end_of(raw: &RawInstr) -> Span {
    let e = raw.parts.last().unwrap().1.end;
    Span::new(e, e + 1)
}

fn space_of(part: &str) -> Option<SpaceQual> {
    match part {
        "global" => Some(SpaceQual::Global),
        "shared" => Some(SpaceQual::Shared),
        "shared::cta" => Some(SpaceQual::SharedCta),
        "shared::cluster" => Some(SpaceQual::SharedCluster),
        _ => None,
    }
}

fn reduce_op(part: &str) -> Option<RmwOp> {
    Some(match part {
        "add" => RmwOp::Add,
        "min" => RmwOp::Min,
        "max" => RmwOp::Max,
        "inc" => RmwOp::Inc,
        "dec" => RmwOp::Dec,
        "and" => RmwOp::And,
        "or" => RmwOp::Or,
        "xor" => RmwOp::Xor,
        _ => return None,
    })
}

fn is_type(part: &str) -> bool {
    matches!(classify("cp", part), Some(Modifier::Type))
}

fn int_operand(op: &RawOperand, what: &str) -> Result<Value, Diagnostic> {
    match op {
        RawOperand::Int(v, _) => Ok(*v),
        other => Err(Diagnostic::expected(
            other.span(),
            what.to_string(),
            format!("`{}`", shown(other)),
        )),
    }
}

fn shown(op: &RawOperand) -> String {
    match op {
        RawOperand::Name(n, _) => n.clone(),
        RawOperand::Bracketed(n, _) => format!("[{n}]"),
        RawOperand::Int(v, _) => v.to_string(),
        RawOperand::Vector(..) => "{...}".to_string(),
        RawOperand::Tensor(n, ..) => format!("[{n}, {{...}}]"),
    }
}

fn unsupported(span: Span, feature: &str, expected: &str, why: &str) -> Diagnostic {
    Diagnostic::unsupported(span, feature, expected.to_string()).with_note(why)
}

/// `cp.async.bulk*`, `cp.reduce.async.bulk*`, `cp.async*`.
pub fn decode_cp(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Instr, Diagnostic> {
    let p: Vec<&str> = raw.parts.iter().map(|(s, _)| s.as_str()).collect();
    let span_of = |i: usize| raw.parts.get(i).map_or(end_of(raw), |x| x.1);
    let none_after = |i: usize| -> Result<(), Diagnostic> {
        match raw.parts.get(i) {
            Some((q, s)) => Err(Diagnostic::expected(
                *s,
                "the end of the mnemonic",
                format!("`.{q}`"),
            )),
            None => Ok(()),
        }
    };
    match (p.get(1).copied(), p.get(2).copied(), p.get(3).copied()) {
        (Some("async"), Some("bulk"), Some("commit_group")) => {
            none_after(4)?;
            expect_operands(raw, &[0], "no operands")?;
            Ok(Instr::CommitGroup { bulk: true })
        }
        (Some("async"), Some("bulk"), Some("wait_group")) => {
            let read = p.get(4) == Some(&"read");
            none_after(4 + read as usize)?;
            expect_operands(raw, &[1], "N")?;
            let n = int_operand(
                &raw.operands[0],
                "the number of groups that may stay pending",
            )?;
            Ok(Instr::WaitGroup {
                bulk: true,
                pending: pending(n, raw)?,
                read,
                all: false,
            })
        }
        (Some("async"), Some("bulk"), Some(t @ ("tensor" | "prefetch"))) => Err(unsupported(
            span_of(3),
            &format!("cp.async.bulk.{t}"),
            "a bulk copy (`cp.async.bulk.<dst>.<src>...`)",
            "bulk prefetches only warm the L2 cache (no memory effect): leave them out",
        )),
        (Some("async"), Some("bulk"), _) => bulk_copy(raw, r, 3, None),
        (Some("reduce"), Some("async"), Some("bulk")) => {
            if p.get(4) == Some(&"tensor") {
                return Err(unsupported(
                    span_of(4),
                    "cp.reduce.async.bulk.tensor",
                    "`cp.reduce.async.bulk`",
                    "tensor reductions are not modelled",
                ));
            }
            let op = raw.parts[4..].iter().find_map(|(q, _)| reduce_op(q));
            let Some(op) = op else {
                return Err(Diagnostic::expected(
                    end_of(raw),
                    "a reduction (`.add`, `.min`, `.max`, `.inc`, `.dec`, `.and`, `.or`, `.xor`)",
                    "none",
                ));
            };
            bulk_copy(raw, r, 4, Some(op))
        }
        (Some("async"), Some("commit_group"), _) => {
            none_after(3)?;
            expect_operands(raw, &[0], "no operands")?;
            Ok(Instr::CommitGroup { bulk: false })
        }
        (Some("async"), Some("wait_group"), _) => {
            none_after(3)?;
            expect_operands(raw, &[1], "N")?;
            let n = int_operand(
                &raw.operands[0],
                "the number of groups that may stay pending",
            )?;
            Ok(Instr::WaitGroup {
                bulk: false,
                pending: pending(n, raw)?,
                read: false,
                all: false,
            })
        }
        (Some("async"), Some("wait_all"), _) => {
            none_after(3)?;
            expect_operands(raw, &[0], "no operands")?;
            Ok(Instr::WaitGroup {
                bulk: false,
                pending: 0,
                read: false,
                all: true,
            })
        }
        (Some("async"), Some("mbarrier"), Some("arrive")) => {
            let mut noinc = false;
            for (q, s) in &raw.parts[4..] {
                match q.as_str() {
                    "noinc" if !noinc => noinc = true,
                    "shared" | "shared::cta" | "b64" => {}
                    _ => {
                        return Err(Diagnostic::expected(
                            *s,
                            "`.noinc`, `.shared::cta` or `.b64`",
                            format!("`.{q}`"),
                        ));
                    }
                }
            }
            expect_operands(raw, &[1], "[mbar]")?;
            let addr = address(r, &raw.operands[0], Some(SpaceQual::SharedCta), true)?;
            Ok(Instr::AsyncMbarArrive { addr, noinc })
        }
        (Some("async"), Some("ca" | "cg"), _) => {
            let mut dst_ok = false;
            let mut src_ok = false;
            for (q, s) in &raw.parts[3..] {
                match q.as_str() {
                    "shared" | "shared::cta" if !dst_ok => dst_ok = true,
                    "global" if dst_ok && !src_ok => src_ok = true,
                    x if x.starts_with("L2::") => {
                        return Err(unsupported(
                            *s,
                            &format!(".{x}"),
                            "the end of the mnemonic",
                            "cache hints are not accepted (they take operands)",
                        ));
                    }
                    _ => {
                        return Err(Diagnostic::expected(
                            *s,
                            "`.shared::cta.global`",
                            format!("`.{q}`"),
                        ));
                    }
                }
            }
            if !(dst_ok && src_ok) {
                return Err(Diagnostic::expected(
                    end_of(raw),
                    "`.shared::cta.global` (copy direction)",
                    "none",
                ));
            }
            expect_operands(raw, &[3], "[dst], [src], cp-size")?;
            let dst = address(r, &raw.operands[0], Some(SpaceQual::SharedCta), false)?;
            let src = address(r, &raw.operands[1], Some(SpaceQual::Global), false)?;
            let size = int_operand(&raw.operands[2], "the copy size in bytes (4, 8 or 16)")?;
            Ok(Instr::AsyncCopy {
                kind: AsyncKind::NonBulk,
                dst,
                dst_space: SpaceQual::SharedCta,
                src: AsyncSrc::Addr(src),
                src_space: Some(SpaceQual::Global),
                size,
                completion: Completion::AsyncGroup,
                joined: false,
            })
        }
        _ => Err(Diagnostic::expected(
            raw.parts[0].1.to(span_of(2)),
            "`cp.async.bulk...`, `cp.reduce.async.bulk...`, `cp.async.{ca,cg}...`, `cp.async.commit_group`, `cp.async.wait_group`, `cp.async.wait_all` or `cp.async.mbarrier.arrive`",
            format!("`{}`", p.join(".")),
        )),
    }
}

fn pending(n: Value, raw: &RawInstr) -> Result<u32, Diagnostic> {
    u32::try_from(n).map_err(|_| {
        Diagnostic::expected(
            raw.operands[0].span(),
            "a non-negative group count",
            n.to_string(),
        )
    })
}

/// `cp{.reduce}.async.bulk.<dst>.<src>.<completion>{.op.type}`, parts from `from`.
fn bulk_copy(
    raw: &RawInstr,
    r: &mut dyn Resolver,
    from: usize,
    reduce: Option<RmwOp>,
) -> Result<Instr, Diagnostic> {
    let mut spaces = Vec::new();
    let mut completion = None;
    let mut joined = false;
    for (q, s) in &raw.parts[from..] {
        match q.as_str() {
            // ptxmc's own modifier, last: part of the thread's previous copy
            // (`ir::copies`; the builder checks that there is one).
            "joined" if !joined && completion.is_some() => joined = true,
            q2 if space_of(q2).is_some() && spaces.len() < 2 => {
                spaces.push((space_of(q2).unwrap(), *s))
            }
            "mbarrier::complete_tx::bytes" if completion.is_none() => completion = Some(true),
            "bulk_group" if completion.is_none() => completion = Some(false),
            q2 if reduce.is_some() && (reduce_op(q2).is_some() || is_type(q2) || q2 == "noftz") => {
            }
            "multicast::cluster" => {
                return Err(unsupported(
                    *s,
                    ".multicast::cluster",
                    "a bulk copy to one CTA",
                    "multicast copies are not modelled",
                ));
            }
            x if x.starts_with("L2::") || x == "level::cache_hint" => {
                return Err(unsupported(
                    *s,
                    &format!(".{x}"),
                    "the end of the mnemonic",
                    "cache hints are not accepted (they take operands)",
                ));
            }
            _ => {
                return Err(Diagnostic::expected(
                    *s,
                    "a state space, then `.mbarrier::complete_tx::bytes` or `.bulk_group`",
                    format!("`.{q}`"),
                ));
            }
        }
    }
    let [(dst_space, dsp), (src_space, ssp)] = spaces[..] else {
        return Err(Diagnostic::expected(
            end_of(raw),
            "the destination and source state spaces (e.g. `.shared::cluster.global`)",
            "fewer",
        ));
    };
    let Some(mbar) = completion else {
        return Err(Diagnostic::expected(
            end_of(raw),
            "a completion mechanism (`.mbarrier::complete_tx::bytes` or `.bulk_group`)",
            "none",
        ));
    };
    let dst_space = if dst_space == SpaceQual::Shared {
        SpaceQual::SharedCta
    } else {
        dst_space
    };
    let src_space = if src_space == SpaceQual::Shared {
        SpaceQual::SharedCta
    } else {
        src_space
    };
    // The directions PTX has: into shared memory with an mbarrier, out to global with a bulk group.
    let ok = matches!(
        (dst_space, src_space, mbar),
        (
            SpaceQual::SharedCta | SpaceQual::SharedCluster,
            SpaceQual::Global,
            true
        ) | (SpaceQual::SharedCluster, SpaceQual::SharedCta, true)
            | (SpaceQual::Global, SpaceQual::SharedCta, false)
    );
    if !ok {
        return Err(Diagnostic::expected(
            dsp.to(ssp),
            "a direction PTX has: `.shared::cta|.shared::cluster` from `.global` with `.mbarrier::complete_tx::bytes`, `.shared::cluster` from `.shared::cta` with it, or `.global` from `.shared::cta` with `.bulk_group`",
            format!(
                "`.{}.{}` with `{}`",
                dst_space.as_str(),
                src_space.as_str(),
                if mbar {
                    ".mbarrier::complete_tx::bytes"
                } else {
                    ".bulk_group"
                }
            ),
        ));
    }
    let shape = if mbar {
        "[dst], [src], size, [mbar]"
    } else {
        "[dst], [src], size"
    };
    expect_operands(raw, &[if mbar { 4 } else { 3 }], shape)?;
    let dst = address(r, &raw.operands[0], Some(dst_space), false)?;
    let src = address(r, &raw.operands[1], Some(src_space), false)?;
    let size = int_operand(&raw.operands[2], "the size in bytes")?;
    if size <= 0 {
        return Err(Diagnostic::expected(
            raw.operands[2].span(),
            "a positive size",
            size.to_string(),
        ));
    }
    let completion = if mbar {
        // The mbarrier lives with the destination (the receiving CTA).
        let bar_space = if dst_space == SpaceQual::SharedCluster {
            SpaceQual::SharedCluster
        } else {
            SpaceQual::SharedCta
        };
        Completion::Mbarrier(address(r, &raw.operands[3], Some(bar_space), true)?)
    } else {
        Completion::BulkGroup
    };
    let kind = match reduce {
        Some(op) => AsyncKind::ReduceBulk(op),
        None => AsyncKind::Bulk,
    };
    Ok(Instr::AsyncCopy {
        kind,
        dst,
        dst_space,
        src: AsyncSrc::Addr(src),
        src_space: Some(src_space),
        size,
        completion,
        joined,
    })
}

/// `mbarrier.{init,arrive,arrive.expect_tx,expect_tx,complete_tx,test_wait,try_wait}`.
pub fn decode_mbarrier(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Instr, Diagnostic> {
    let Some((op_name, op_span)) = raw.parts.get(1) else {
        return Err(Diagnostic::expected(
            end_of(raw),
            "an mbarrier operation (`.init`, `.arrive`, `.expect_tx`, `.complete_tx`, `.test_wait`, `.try_wait`)",
            "none",
        ));
    };
    let mut rest = &raw.parts[2..];
    let (op, wait) = match op_name.as_str() {
        "init" => (Some(MbarOp::Init), None),
        "arrive" if rest.first().is_some_and(|p| p.0 == "expect_tx") => {
            rest = &rest[1..];
            (Some(MbarOp::ArriveExpectTx), None)
        }
        "arrive" => (Some(MbarOp::Arrive), None),
        "expect_tx" => (Some(MbarOp::ExpectTx), None),
        "complete_tx" => (Some(MbarOp::CompleteTx), None),
        "test_wait" => (None, Some(true)),
        "try_wait" => (None, Some(false)),
        other @ ("arrive_drop" | "pending_count" | "inval") => {
            return Err(unsupported(
                *op_span,
                &format!("mbarrier.{other}"),
                "`.init`, `.arrive`, `.expect_tx`, `.complete_tx`, `.test_wait` or `.try_wait`",
                "this mbarrier operation is not modelled",
            ));
        }
        other => {
            return Err(Diagnostic::expected(
                *op_span,
                "`.init`, `.arrive`, `.expect_tx`, `.complete_tx`, `.test_wait` or `.try_wait`",
                format!("`.{other}`"),
            ));
        }
    };
    let (mut sem, mut scope, mut space, mut parity) = (None, None, None, false);
    for (q, s) in rest {
        match (q.as_str(), classify("mbarrier", q)) {
            ("parity", _) if wait.is_some() && !parity => parity = true,
            (_, Some(Modifier::Sem(x))) if sem.is_none() => sem = Some((x, *s)),
            (_, Some(Modifier::Scope(x))) if scope.is_none() => scope = Some((x, *s)),
            (q2, _) if space.is_none() && space_of(q2).is_some() => space = space_of(q2),
            ("b64", _) => {}
            ("noComplete", _) => {
                return Err(unsupported(
                    *s,
                    ".noComplete",
                    "the end of the mnemonic",
                    "`.noComplete` arrivals are not modelled",
                ));
            }
            _ => {
                return Err(mod_error(
                    "mbarrier",
                    q,
                    *s,
                    "semantics, a scope (`.cta`, `.cluster`), a state space, `.b64`",
                ));
            }
        }
    }
    let scope = match scope {
        None => Scope::Cta,
        Some((x @ (Scope::Cta | Scope::Cluster), _)) => x,
        Some((x, sp)) => {
            return Err(Diagnostic::expected(
                sp,
                "`.cta` or `.cluster` (mbarrier scopes)",
                format!("`.{x}`"),
            ));
        }
    };
    let ops = &raw.operands;
    if let Some(test) = wait {
        let sem = match sem {
            None => Sem::Acquire,
            Some((x @ (Sem::Acquire | Sem::Relaxed), _)) => x,
            Some((x, sp)) => {
                return Err(Diagnostic::expected(
                    sp,
                    "`.acquire` or `.relaxed` on a wait",
                    format!("`.{x}`"),
                ));
            }
        };
        if space == Some(SpaceQual::SharedCluster) {
            return Err(Diagnostic::expected(
                end_of(raw),
                "a wait on the CTA's own mbarrier (`.shared::cta`)",
                "`.shared::cluster`",
            )
            .with_label("only arrivals may be remote"));
        }
        let shape = if parity {
            "p, [mbar], phaseParity"
        } else {
            "p, [mbar], state"
        };
        // `try_wait` takes an optional 4th operand, `suspendTimeHint`.
        if test {
            expect_operands(raw, &[3], shape)?;
        } else {
            expect_operands(raw, &[3, 4], &format!("{shape}{{, suspendTimeHint}}"))?;
        }
        let dst = register(r, &ops[0])?;
        let addr = address(r, &ops[1], space, true)?;
        let v = value(r, &ops[2])?;
        let suspend = ops.get(3).map(|o| value(r, o)).transpose()?;
        let phase = if parity {
            WaitPhase::Parity(v)
        } else {
            WaitPhase::State(v)
        };
        return Ok(Instr::MbarWait {
            dst: Some(dst),
            addr,
            test,
            phase,
            sem,
            scope,
            space,
            suspend,
        });
    }
    let op = op.unwrap();
    let sem = match (op, sem) {
        (MbarOp::Init, None) => Sem::Weak,
        (MbarOp::Init, Some((x, sp))) => {
            return Err(Diagnostic::expected(
                sp,
                "no semantics on `mbarrier.init`",
                format!("`.{x}`"),
            ));
        }
        (MbarOp::Arrive | MbarOp::ArriveExpectTx, None) => Sem::Release,
        (MbarOp::Arrive | MbarOp::ArriveExpectTx, Some((x @ (Sem::Release | Sem::Relaxed), _))) => {
            x
        }
        (MbarOp::ExpectTx | MbarOp::CompleteTx, None | Some((Sem::Relaxed, _))) => Sem::Relaxed,
        (_, Some((x, sp))) => {
            return Err(Diagnostic::expected(
                sp,
                "`.release` or `.relaxed` (`.relaxed` only for expect-tx and complete-tx)",
                format!("`.{x}`"),
            ));
        }
    };
    let (dst, addr_op, arg_op) = match op {
        MbarOp::Init | MbarOp::ExpectTx | MbarOp::CompleteTx => {
            let what = if op == MbarOp::Init {
                "[mbar], count"
            } else {
                "[mbar], txCount"
            };
            expect_operands(raw, &[2], what)?;
            (None, &ops[0], Some(&ops[1]))
        }
        MbarOp::Arrive => {
            expect_operands(raw, &[2, 3], "state, [mbar]{, count}")?;
            (sink(r, &ops[0])?, &ops[1], ops.get(2))
        }
        MbarOp::ArriveExpectTx => {
            expect_operands(raw, &[3], "state, [mbar], txCount")?;
            (sink(r, &ops[0])?, &ops[1], Some(&ops[2]))
        }
    };
    if space == Some(SpaceQual::SharedCluster) && op == MbarOp::Init {
        return Err(Diagnostic::expected(
            end_of(raw),
            "`mbarrier.init` on the CTA's own mbarrier",
            "`.shared::cluster`",
        ));
    }
    let addr = address(r, addr_op, space, true)?;
    let arg = if op == MbarOp::Init {
        // The count becomes part of the initial barrier state, so it must be known.
        let n = int_operand(&ops[1], "an arrival count (an integer literal)")?;
        if !(1..4096).contains(&n) {
            return Err(Diagnostic::expected(
                ops[1].span(),
                "an arrival count between 1 and 4095",
                n.to_string(),
            ));
        }
        Some(Operand::Imm(n))
    } else {
        arg_op.map(|o| value(r, o)).transpose()?
    };
    Ok(Instr::Mbar {
        op,
        dst,
        addr,
        arg,
        sem,
        scope,
        space,
    })
}

/// A destination that may be `_` (discarded).
fn sink(r: &mut dyn Resolver, op: &RawOperand) -> Result<Option<crate::ir::RegId>, Diagnostic> {
    match op {
        RawOperand::Name(n, _) if n == "_" => Ok(None),
        o => register(r, o).map(Some),
    }
}

/// `barrier.cluster.arrive{.release|.relaxed}{.aligned}`, `barrier.cluster.wait{.acquire}{.aligned}`.
pub fn decode_cluster_barrier(raw: &RawInstr) -> Result<Instr, Diagnostic> {
    let Some((what, wspan)) = raw.parts.get(2) else {
        return Err(Diagnostic::expected(
            end_of(raw),
            "`.arrive` or `.wait`",
            "none",
        ));
    };
    let arrive = match what.as_str() {
        "arrive" => true,
        "wait" => false,
        other => {
            return Err(Diagnostic::expected(
                *wspan,
                "`.arrive` or `.wait`",
                format!("`.{other}`"),
            ));
        }
    };
    let (mut sem, mut aligned) = (None, false);
    for (q, s) in &raw.parts[3..] {
        match q.as_str() {
            "release" | "relaxed" if arrive && sem.is_none() => {
                sem = Some(if q == "release" {
                    Sem::Release
                } else {
                    Sem::Relaxed
                })
            }
            "acquire" if !arrive && sem.is_none() => sem = Some(Sem::Acquire),
            "aligned" if !aligned => aligned = true,
            _ => {
                let want = if arrive {
                    "`.release`, `.relaxed` or `.aligned`"
                } else {
                    "`.acquire` or `.aligned`"
                };
                return Err(Diagnostic::expected(*s, want, format!("`.{q}`")));
            }
        }
    }
    expect_operands(raw, &[0], "no operands")?;
    let sem = sem.unwrap_or(if arrive { Sem::Release } else { Sem::Acquire });
    Ok(Instr::ClusterBarrier {
        arrive,
        sem,
        aligned,
    })
}

/// `st.async...mbarrier::complete_tx::bytes [addr], value, [mbar]` and
/// `red.async.relaxed.cluster...mbarrier::complete_tx::bytes.op [addr], value, [mbar]`.
pub fn decode_st_red_async(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Instr, Diagnostic> {
    let red = raw.parts[0].0 == "red";
    let mn = if red { "red.async" } else { "st.async" };
    let (mut op, mut complete, mut sem, mut scope) = (None, false, None, None);
    for (q, s) in &raw.parts[2..] {
        match (q.as_str(), classify(mn, q)) {
            ("shared::cluster", _) => {}
            ("mbarrier::complete_tx::bytes", _) if !complete => complete = true,
            (_, Some(Modifier::Sem(x))) if sem.is_none() => sem = Some((x, *s)),
            (_, Some(Modifier::Scope(x))) if scope.is_none() => scope = Some((x, *s)),
            (q2, _) if red && op.is_none() && reduce_op(q2).is_some() => op = reduce_op(q2),
            (q2, _) if is_type(q2) => {}
            (v @ ("v2" | "v4"), _) => {
                return Err(unsupported(
                    *s,
                    &format!(".{v}"),
                    "a scalar",
                    "vector accesses are not modelled",
                ));
            }
            _ => {
                return Err(Diagnostic::expected(
                    *s,
                    "`.shared::cluster`, `.mbarrier::complete_tx::bytes`, a type",
                    format!("`.{q}`"),
                ));
            }
        }
    }
    if !complete {
        return Err(Diagnostic::expected(
            end_of(raw),
            "`.mbarrier::complete_tx::bytes`",
            "none",
        ));
    }
    match (red, sem) {
        (false, Some((x, sp))) if x != Sem::Weak => {
            return Err(unsupported(
                sp,
                &format!(".{x}"),
                "a weak `st.async`",
                "`st.async` with semantics (PTX 9) is not modelled",
            ));
        }
        (true, Some((x, sp))) if x != Sem::Relaxed => {
            return Err(Diagnostic::expected(
                sp,
                "`.relaxed` (red.async is `.relaxed.cluster`)",
                format!("`.{x}`"),
            ));
        }
        (true, _) if scope.is_some_and(|(s, _)| s != Scope::Cluster) => {
            return Err(Diagnostic::expected(
                scope.unwrap().1,
                "`.cluster`",
                format!("`.{}`", scope.unwrap().0),
            ));
        }
        _ => {}
    }
    let kind = if red {
        let Some(op) = op else {
            return Err(Diagnostic::expected(
                end_of(raw),
                "a reduction (`.add`, `.min`, `.max`, `.inc`, `.dec`, `.and`, `.or`, `.xor`)",
                "none",
            ));
        };
        AsyncKind::Reduce(op)
    } else {
        AsyncKind::Store
    };
    expect_operands(raw, &[3], "[addr], value, [mbar]")?;
    let dst = address(r, &raw.operands[0], Some(SpaceQual::SharedCluster), false)?;
    let v = value(r, &raw.operands[1])?;
    let bar = address(r, &raw.operands[2], Some(SpaceQual::SharedCluster), true)?;
    Ok(Instr::AsyncCopy {
        kind,
        dst,
        dst_space: SpaceQual::SharedCluster,
        src: AsyncSrc::Value(v),
        src_space: None,
        size: 4,
        completion: Completion::Mbarrier(bar),
        joined: false,
    })
}
