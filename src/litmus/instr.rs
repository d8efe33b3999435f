//! Decoding instructions written in either dialect into [`Instr`]: a mnemonic
//! with dotted modifiers and comma-separated operands ([`RawInstr`]).
//!
//! Decoding is table-driven: `raw::classify` names every modifier ptxmc knows,
//! and each opcode says which kinds of modifiers it takes. Adding an
//! instruction means adding an arm to [`decode`] and, if needed, a modifier.

use smallvec::{SmallVec, smallvec};

use super::diag::{Diagnostic, Span};
use super::raw::{
    Modifier, RawInstr, RawOperand, Resolver, Space, address, classify, expect_operands, mod_error,
    register, value,
};
use crate::ir::{
    Access, ArithOp, BarrierKind, BranchCmp, DataType, FenceSem, Instr, Operand, Proxy,
    ProxyFenceKind, Restrict, RmwOp, Scope, Sem, SignalKind, SpaceQual, UndefinedStep, UniProxy,
};

/// A decoded instruction plus the label its branch refers to (resolved by the caller).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The instruction; a branch's `target` is 0 until the caller patches it.
    pub instr: Instr,
    /// Label name and its span, for branches.
    pub label: Option<(String, Span)>,
    /// Instructions that follow `instr` for the same source instruction: the
    /// other elements of a vector access (`ld.v2`, `st.v4`), one scalar
    /// access each; the `mov`s of `elect.sync`'s results.
    pub rest: Vec<Instr>,
    /// For `elect.sync`: whether its `d` and `p` are written (`rest` holds
    /// their `mov`s, `d`'s first; [`crate::ir::ElectSite`]).
    pub elect: Option<(bool, bool)>,
}

/// Modifiers a memory access may carry, in one place per instruction family.
struct MemMods {
    sem: Option<(Sem, Span)>,
    scope: Option<(Scope, Span)>,
    rmw: Option<(RmwOp, Span)>,
    space: Option<(Space, Span)>,
    ty: Option<(DataType, Span)>,
}

/// The state-space qualifier of collected modifiers (`.const` selects the proxy instead).
fn qual(space: Option<(Space, Span)>) -> Option<SpaceQual> {
    match space {
        Some((Space::Qual(q), _)) => Some(q),
        _ => None,
    }
}

/// Collect memory-access modifiers, rejecting anything `allowed` does not admit.
fn mem_mods(
    opcode: &str,
    parts: &[(String, Span)],
    allowed: &str,
    rmw_allowed: bool,
) -> Result<MemMods, Diagnostic> {
    let mut m = MemMods {
        sem: None,
        scope: None,
        rmw: None,
        space: None,
        ty: None,
    };
    for (part, span) in &parts[1..] {
        let span = *span;
        let dup = |what: &str| {
            Diagnostic::expected(
                span,
                format!("at most one {what}"),
                format!("a second one, `.{part}`"),
            )
        };
        // Each kind of modifier may be given once.
        fn once<T>(
            slot: &mut Option<(T, Span)>,
            v: T,
            span: Span,
            dup: Diagnostic,
        ) -> Result<(), Diagnostic> {
            match slot {
                Some(_) => Err(dup),
                None => {
                    *slot = Some((v, span));
                    Ok(())
                }
            }
        }
        match classify(opcode, part) {
            Some(Modifier::Sem(s)) => once(&mut m.sem, s, span, dup("semantics qualifier"))?,
            Some(Modifier::Scope(s)) => once(&mut m.scope, s, span, dup("scope"))?,
            Some(Modifier::Rmw(op)) if rmw_allowed => once(&mut m.rmw, op, span, dup("operation"))?,
            Some(Modifier::Space(s)) => once(&mut m.space, s, span, dup("state space"))?,
            Some(Modifier::Type) => once(
                &mut m.ty,
                DataType::parse(part).expect("a type modifier names a type"),
                span,
                dup("type"),
            )?,
            Some(Modifier::Cache) => {}
            // Floating-point types are types of memory accesses only (a
            // register computation `add.f32` is not modelled).
            None if DataType::parse(part).is_some() => {
                once(&mut m.ty, DataType::parse(part).unwrap(), span, dup("type"))?
            }
            _ => return Err(mod_error(opcode, part, span, allowed)),
        }
    }
    Ok(m)
}

const SCOPES: &str = "a scope (`.cta`, `.cluster`, `.gpu` or `.sys`)";

/// Check semantics/scope combination for a load or store and build the access parts.
fn sem_scope(
    m: &MemMods,
    allowed: &[Sem],
    default: (Sem, Option<Scope>),
    mnemonic_span: Span,
    what: &str,
) -> Result<(Sem, Option<Scope>), Diagnostic> {
    let sem = match m.sem {
        Some((s, span)) => {
            if !allowed.contains(&s) {
                let list: Vec<String> = allowed.iter().map(|s| format!("`.{s}`")).collect();
                return Err(Diagnostic::expected(
                    span,
                    format!("the semantics of {what} ({})", list.join(", ")),
                    format!("`.{s}`"),
                ));
            }
            s
        }
        None => default.0,
    };
    match (sem, m.scope) {
        (Sem::Weak, Some((_, span))) => Err(Diagnostic::expected(
            span,
            "no scope on a weak access (write `.relaxed.<scope>` for a strong one)",
            format!("scope `.{}`", m.scope.unwrap().0),
        )),
        (Sem::Weak, None) => Ok((Sem::Weak, None)),
        (Sem::Volatile, Some((s, span))) => Err(Diagnostic::expected(
            span,
            "no scope after `.volatile` (it always means `.relaxed.sys`)",
            format!("scope `.{s}`"),
        )),
        (Sem::Volatile, None) => Ok((Sem::Volatile, Some(Scope::Sys))),
        (s, Some((scope, _))) => Ok((s, Some(scope))),
        (s, None) => match default.1 {
            Some(d) => Ok((s, Some(d))),
            None => {
                let at = m.sem.map_or(mnemonic_span, |(_, sp)| sp);
                Err(Diagnostic::expected(
                    Span::new(at.end, at.end + 1),
                    format!("{SCOPES} after `.{s}`"),
                    "no scope".to_string(),
                )
                .with_label("strong accesses need a scope"))
            }
        },
    }
}

fn label_of(op: &RawOperand) -> Result<(String, Span), Diagnostic> {
    match op {
        RawOperand::Name(n, s) => Ok((n.clone(), *s)),
        o => Err(Diagnostic::expected(o.span(), "a label", o.shown())),
    }
}

fn no_mods(raw: &RawInstr, allowed: &[&str]) -> Result<(), Diagnostic> {
    for (p, s) in &raw.parts[1..] {
        if !allowed.contains(&p.as_str()) && classify(&raw.parts[0].0, p) != Some(Modifier::Type) {
            return Err(mod_error(
                &raw.parts[0].0,
                p,
                *s,
                "no modifier other than a type",
            ));
        }
    }
    Ok(())
}

const INSTRUCTIONS: &str = "an instruction (ld, st, atom, red, fence, membar, bar, tld, suld, sust, suatom, sured, cold, ldc, mov, add, sub, beq, bne, goto, ...)";

/// Instructions that are real PTX but not modelled, with the reason.
fn unsupported_opcode(op: &str) -> Option<&'static str> {
    Some(match op {
        "st" | "ld" => return None,
        "tex" | "tld4" => "write texture fetches as `tld` on a texture alias",
        "bra" => return None,
        "vote" | "shfl" | "match" => "warp-level primitives are not modelled",
        "multimem" => "multimem operations are not modelled",
        "prefetch" | "prefetchu" | "cvta" | "isspacep" => {
            "address-space and prefetch instructions are not modelled"
        }
        "setmaxnreg" => "this control instruction is not modelled",
        _ => return None,
    })
}

/// `griddepcontrol.wait` / `griddepcontrol.launch_dependents` (PTX ISA,
/// "Parallel Synchronization and Communication Instructions:
/// griddepcontrol"): no operands, exactly one action.
fn decode_griddep(raw: &RawInstr) -> Result<Instr, Diagnostic> {
    const ACTIONS: &str = "`.wait` or `.launch_dependents` after `griddepcontrol`";
    let mn_end = raw.parts.last().map_or(raw.span, |p| p.1);
    let wait = match raw.parts.get(1) {
        Some((p, _)) if p == "wait" => true,
        Some((p, _)) if p == "launch_dependents" => false,
        Some((p, s)) => return Err(mod_error("griddepcontrol", p, *s, ACTIONS)),
        None => {
            return Err(Diagnostic::expected(
                Span::new(mn_end.end, mn_end.end + 1),
                ACTIONS,
                "none",
            ));
        }
    };
    if let Some((p, s)) = raw.parts.get(2) {
        return Err(mod_error(
            "griddepcontrol",
            p,
            *s,
            "nothing after the action of `griddepcontrol`",
        ));
    }
    expect_operands(raw, &[0], "no operands")?;
    Ok(Instr::GridDep { wait })
}

/// `undefined.out_of_bounds`: not PTX, ptxmc's spelling of a lowered
/// undefined step ([`SignalKind::Undefined`]), which the kernel front end
/// emits where a run-time address names no element (`docs/kernels.md`,
/// "Run-time addresses"), so that a kernel written out as a litmus test
/// (`ptxmc fix --emit`) reads back as the same program.
fn decode_undefined(raw: &RawInstr) -> Result<Instr, Diagnostic> {
    const KINDS: &str = "`.out_of_bounds` after `undefined`";
    let mn_end = raw.parts.last().map_or(raw.span, |p| p.1);
    let why = match raw.parts.get(1) {
        Some((p, _)) if p == "out_of_bounds" => UndefinedStep::OutOfBounds,
        Some((p, s)) => return Err(mod_error("undefined", p, *s, KINDS)),
        None => {
            return Err(Diagnostic::expected(
                Span::new(mn_end.end, mn_end.end + 1),
                KINDS,
                "none",
            ));
        }
    };
    if let Some((p, s)) = raw.parts.get(2) {
        return Err(mod_error(
            "undefined",
            p,
            *s,
            "nothing after `undefined.out_of_bounds`",
        ));
    }
    expect_operands(raw, &[0], "no operands")?;
    Ok(Instr::Signal {
        kind: SignalKind::Undefined(why),
    })
}

/// `elect.sync d, p, membermask` (PTX ISA, "Parallel Synchronization and
/// Communication Instructions: elect.sync", where it is written `d|p`: `|`
/// separates threads in a litmus table). `d` may be `_` (the ISA's sink);
/// `p` is a register that gets 1 in the leader, 0 elsewhere; the mask is an
/// immediate, since the leader is a function of its value (`ir::elect`).
fn decode_elect(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Decoded, Diagnostic> {
    let mn_end = raw.parts.last().map_or(raw.span, |p| p.1);
    match raw.parts.get(1) {
        Some((p, _)) if p == "sync" => {}
        Some((p, s)) => return Err(mod_error("elect", p, *s, "`.sync` after `elect`")),
        None => {
            return Err(Diagnostic::expected(
                Span::new(mn_end.end, mn_end.end + 1),
                "`.sync` after `elect` (it is mandatory)",
                "none",
            ));
        }
    }
    if let Some((p, s)) = raw.parts.get(2) {
        return Err(mod_error("elect", p, *s, "nothing after `elect.sync`"));
    }
    expect_operands(raw, &[3], "d, p, membermask")?;
    let ops = &raw.operands;
    let dst = match &ops[0] {
        RawOperand::Name(n, _) if n == "_" => None,
        o => Some(register(r, o)?),
    };
    let pred = register(r, &ops[1])?;
    let mask = match &ops[2] {
        RawOperand::Int(v, _) => *v,
        o => {
            return Err(Diagnostic::unsupported(
                o.span(),
                format!("membermask {}", o.shown()),
                "an immediate membermask",
            )
            .with_note(
                "the leader is a fixed function of the mask's value (docs/warps.md): ptxmc \
                 enumerates it per mask value written in the test",
            ));
        }
    };
    let mut rest = Vec::new();
    if let Some(d) = dst {
        rest.push(Instr::Mov {
            dst: d,
            src: Operand::Imm(0),
        });
    }
    rest.push(Instr::Mov {
        dst: pred,
        src: Operand::Imm(0),
    });
    Ok(Decoded {
        instr: Instr::Barrier {
            kind: BarrierKind::Elect,
            id: smallvec![Operand::Imm(mask)],
            count: None,
            aligned: false,
        },
        label: None,
        rest,
        elect: Some((dst.is_some(), true)),
    })
}

/// `activemask.b32 d` (PTX ISA, "Parallel Synchronization and Communication
/// Instructions: activemask"): the rendezvous of the lane's block, then
/// `mov d, MASK` (`ir::activemask`; the engines run every partition).
fn decode_activemask(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Decoded, Diagnostic> {
    let mn_end = raw.parts.last().map_or(raw.span, |p| p.1);
    match raw.parts.get(1) {
        Some((p, _)) if p == "b32" => {}
        Some((p, s)) => return Err(mod_error("activemask", p, *s, "`.b32` after `activemask`")),
        None => {
            return Err(Diagnostic::expected(
                Span::new(mn_end.end, mn_end.end + 1),
                "`.b32` after `activemask` (it is mandatory)",
                "none",
            ));
        }
    }
    if let Some((p, s)) = raw.parts.get(2) {
        return Err(mod_error(
            "activemask",
            p,
            *s,
            "nothing after `activemask.b32`",
        ));
    }
    expect_operands(raw, &[1], "d")?;
    let dst = register(r, &raw.operands[0])?;
    Ok(Decoded {
        instr: Instr::Barrier {
            kind: BarrierKind::ActiveMask,
            id: smallvec![Operand::Imm(0)],
            count: None,
            aligned: false,
        },
        label: None,
        rest: vec![Instr::Mov {
            dst,
            src: Operand::Imm(0),
        }],
        elect: None,
    })
}

/// The vector part of a mnemonic (`.v2`, `.v4`, `.v8`): its length and span.
pub fn vector_part(raw: &RawInstr) -> Option<(usize, Span)> {
    raw.parts[1..].iter().find_map(|(p, s)| match p.as_str() {
        "v2" => Some((2, *s)),
        "v4" => Some((4, *s)),
        "v8" => Some((8, *s)),
        _ => None,
    })
}

/// Decode a raw instruction into the IR. Branch targets are left at 0 and
/// returned as `label` for the caller to patch.
pub fn decode(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Decoded, Diagnostic> {
    let (opcode, op_span) = (&raw.parts[0].0, raw.parts[0].1);
    let mn_span = raw.parts.last().map_or(op_span, |p| op_span.to(p.1));
    let ops = &raw.operands;
    let plain = |instr| {
        Ok(Decoded {
            instr,
            label: None,
            rest: Vec::new(),
            elect: None,
        })
    };
    let second = raw.parts.get(1).map(|p| p.0.as_str());
    match (opcode.as_str(), second) {
        ("cp", _) if super::tensor::handles(raw) => return super::tensor::decode(raw, r),
        _ if super::tensor::is_tensormap_instr(raw) => return Err(super::tensor::refusal(raw)),
        ("cp", _) => return super::async_instr::decode_cp(raw, r).and_then(plain),
        ("mbarrier", _) => return super::async_instr::decode_mbarrier(raw, r).and_then(plain),
        ("wgmma", _) => return super::tcgen::decode_wgmma(raw, r).and_then(plain),
        ("tcgen05", _) => return super::tcgen::decode_tcgen05(raw, r).and_then(plain),
        ("barrier", Some("cluster")) => {
            return super::async_instr::decode_cluster_barrier(raw).and_then(plain);
        }
        ("st" | "red", Some("async")) => {
            return super::async_instr::decode_st_red_async(raw, r).and_then(plain);
        }
        _ => {}
    }
    if matches!(opcode.as_str(), "ld" | "st") && vector_part(raw).is_some() {
        return super::vector::decode(raw, None, r);
    }
    match opcode.as_str() {
        "ld" | "tld" | "suld" | "cold" | "ldc" => {
            if opcode == "ld" && raw.parts.len() == 1 && ops.len() == 2 {
                if let RawOperand::Int(..) = ops[1] {
                    // Dat3M's register move: `ld r0, 1`.
                    let dst = register(r, &ops[0])?;
                    return plain(Instr::Mov {
                        dst,
                        src: value(r, &ops[1])?,
                    });
                }
            }
            let m = mem_mods(
                opcode,
                &raw.parts,
                "load qualifiers (semantics, scope, `.global`, a type)",
                false,
            )?;
            let mut proxy = match opcode.as_str() {
                "tld" => Proxy::Texture,
                "suld" => Proxy::Surface,
                "cold" | "ldc" => Proxy::Constant,
                _ => Proxy::Generic,
            };
            if let Some((Space::Const, sp)) = m.space {
                if opcode != "ld" && proxy != Proxy::Constant {
                    return Err(Diagnostic::expected(sp, "`.global`", "`.const`"));
                }
                proxy = Proxy::Constant;
            }
            let allowed = [Sem::Weak, Sem::Relaxed, Sem::Acquire, Sem::Volatile];
            let (sem, scope) = sem_scope(&m, &allowed, (Sem::Weak, None), mn_span, "a load")?;
            expect_operands(raw, &[2], "dst, addr")?;
            let dst = register(r, &ops[0])?;
            let space = qual(m.space);
            let addr = address(r, &ops[1], space, false)?;
            plain(Instr::Load {
                dst,
                access: Access {
                    addr,
                    proxy,
                    sem,
                    scope,
                    space,
                    ty: m.ty.map(|t| t.0),
                },
            })
        }
        "st" | "sust" => {
            let m = mem_mods(
                opcode,
                &raw.parts,
                "store qualifiers (semantics, scope, `.global`, a type)",
                false,
            )?;
            if let Some((Space::Const, sp)) = m.space {
                return Err(Diagnostic::expected(
                    sp,
                    "a writable state space",
                    "`.const`",
                ));
            }
            let proxy = if opcode == "sust" {
                Proxy::Surface
            } else {
                Proxy::Generic
            };
            let allowed = [Sem::Weak, Sem::Relaxed, Sem::Release, Sem::Volatile];
            let (sem, scope) = sem_scope(&m, &allowed, (Sem::Weak, None), mn_span, "a store")?;
            expect_operands(raw, &[2], "addr, value")?;
            let space = qual(m.space);
            let addr = address(r, &ops[0], space, false)?;
            let src = value(r, &ops[1])?;
            plain(Instr::Store {
                src,
                access: Access {
                    addr,
                    proxy,
                    sem,
                    scope,
                    space,
                    ty: m.ty.map(|t| t.0),
                },
            })
        }
        "atom" | "red" | "suatom" | "sured" => {
            let is_red = opcode == "red" || opcode == "sured";
            let m = mem_mods(
                opcode,
                &raw.parts,
                "RMW qualifiers (semantics, scope, operation, a type)",
                true,
            )?;
            if let Some((Space::Const, sp)) = m.space {
                return Err(Diagnostic::expected(
                    sp,
                    "a writable state space",
                    "`.const`",
                ));
            }
            let proxy = if opcode.starts_with("su") {
                Proxy::Surface
            } else {
                Proxy::Generic
            };
            let allowed: &[Sem] = if is_red {
                // PTX allows .relaxed/.release; Dat3M writes `red.acq_rel`, which
                // the engines read as a release (the read of a red never acquires).
                &[Sem::Relaxed, Sem::Release, Sem::AcqRel]
            } else {
                &[Sem::Relaxed, Sem::Acquire, Sem::Release, Sem::AcqRel]
            };
            let what = if is_red { "a reduction" } else { "an atomic" };
            let (sem, scope) =
                sem_scope(&m, allowed, (Sem::Relaxed, Some(Scope::Gpu)), mn_span, what)?;
            let Some((op, _)) = m.rmw else {
                return Err(Diagnostic::expected(
                    Span::new(mn_span.end, mn_span.end + 1),
                    "an operation (`.add`, `.sub`, `.exch`, `.cas`, `.inc`, `.dec`, `.and`, `.or`, `.xor`, `.min`, `.max`)",
                    "none",
                ));
            };
            if is_red && matches!(op, RmwOp::Exch | RmwOp::Cas) {
                let sp = m.rmw.unwrap().1;
                return Err(Diagnostic::expected(
                    sp,
                    "a reduction operation",
                    format!("`.{}`", op.as_str()),
                )
                .with_label("`red` has no `.exch`/`.cas`; use `atom`"));
            }
            if let Some((ty, sp)) = m.ty {
                // The PTX ISA's `atom`/`red` types: 32- and 64-bit integer
                // types, and `.b16` for `atom.cas`. Floating-point
                // arithmetic is not modelled (values are integers).
                let fits = match ty.bits() {
                    32 | 64 => !ty.is_float(),
                    16 => ty == DataType::B16 && op == RmwOp::Cas && !is_red,
                    _ => false,
                };
                if !fits {
                    return Err(Diagnostic::unsupported(
                        sp,
                        format!("{opcode}.{}.{ty}", op.as_str()),
                        format!(
                            "a type of {what} (`.b32`, `.u32`, `.s32`, `.b64`, `.u64`, `.s64`, or `.b16` with `atom.cas`)"
                        ),
                    )
                    .with_note(if ty.is_float() {
                        "floating-point atomics are not modelled: litmus values are integers"
                    } else {
                        "PTX has no atomic of this width"
                    }));
                }
            }
            let n = op.arity() + if is_red { 1 } else { 2 };
            let shape = match (is_red, op) {
                (true, _) => "addr, value",
                (false, RmwOp::Cas) => "dst, addr, expected, new",
                _ => "dst, addr, value",
            };
            expect_operands(raw, &[n], shape)?;
            let (dst, rest) = if is_red {
                (None, &ops[..])
            } else {
                (Some(register(r, &ops[0])?), &ops[1..])
            };
            let space = qual(m.space);
            let addr = address(r, &rest[0], space, false)?;
            let args = rest[1..]
                .iter()
                .map(|o| value(r, o))
                .collect::<Result<SmallVec<_>, _>>()?;
            plain(Instr::Rmw {
                dst,
                op,
                args,
                access: Access {
                    addr,
                    proxy,
                    sem,
                    scope,
                    space,
                    ty: m.ty.map(|t| t.0),
                },
            })
        }
        "fence" | "membar" => decode_fence(raw, opcode, r).and_then(plain),
        "elect" => decode_elect(raw, r),
        "activemask" => decode_activemask(raw, r),
        "griddepcontrol" => decode_griddep(raw).and_then(plain),
        "undefined" => decode_undefined(raw).and_then(plain),
        "bar" if raw.parts.get(1).is_some_and(|(p, _)| p == "warp") => {
            // `bar.warp.sync membermask` (PTX ISA 9.7.13.2).
            match raw.parts.get(2) {
                Some((p, _)) if p == "sync" => {}
                Some((p, s)) => return Err(mod_error(opcode, p, *s, "`.sync` after `bar.warp`")),
                None => {
                    return Err(Diagnostic::expected(
                        Span::new(mn_span.end, mn_span.end + 1),
                        "`.sync` after `bar.warp`",
                        "none",
                    ));
                }
            }
            if let Some((p, s)) = raw.parts.get(3) {
                return Err(mod_error(opcode, p, *s, "nothing after `bar.warp.sync`"));
            }
            expect_operands(raw, &[1], "membermask")?;
            let mask = value(r, &ops[0])?;
            plain(Instr::Barrier {
                kind: BarrierKind::WarpSync,
                id: smallvec![mask],
                count: None,
                aligned: false,
            })
        }
        "bar" | "barrier" => {
            let mut kind = None;
            // PTX ISA 9.7.13.1: `bar{.cta}` is `barrier{.cta}.aligned`.
            let mut aligned = opcode == "bar";
            for (p, s) in &raw.parts[1..] {
                match classify(opcode, p) {
                    Some(Modifier::Cta) => {}
                    Some(Modifier::Aligned) => aligned = true,
                    Some(Modifier::Sync) if kind.is_none() => kind = Some(BarrierKind::Sync),
                    Some(Modifier::Arrive) if kind.is_none() => kind = Some(BarrierKind::Arrive),
                    _ => {
                        return Err(mod_error(
                            opcode,
                            p,
                            *s,
                            "`.cta`, `.sync`, `.arrive` or `.aligned`",
                        ));
                    }
                }
            }
            let Some(kind) = kind else {
                return Err(Diagnostic::expected(
                    Span::new(mn_span.end, mn_span.end + 1),
                    "`.sync` or `.arrive`",
                    "none",
                ));
            };
            expect_operands(raw, &[1, 2, 3], "id[, id2[, count]]")?;
            let vals = ops
                .iter()
                .map(|o| value(r, o))
                .collect::<Result<Vec<_>, _>>()?;
            let (id, count) = match vals.len() {
                3 => (smallvec![vals[0], vals[1]], Some(vals[2])),
                _ => (SmallVec::from_slice(&vals), None),
            };
            plain(Instr::Barrier {
                kind,
                id,
                count,
                aligned,
            })
        }
        "mov" => {
            no_mods(raw, &[])?;
            expect_operands(raw, &[2], "dst, src")?;
            let dst = register(r, &ops[0])?;
            plain(Instr::Mov {
                dst,
                src: value(r, &ops[1])?,
            })
        }
        "add" | "sub" | "mul" | "and" | "or" | "xor" => {
            no_mods(raw, &["lo"])?;
            expect_operands(raw, &[3], "dst, a, b")?;
            let op = match opcode.as_str() {
                "add" => ArithOp::Add,
                "sub" => ArithOp::Sub,
                "mul" => ArithOp::Mul,
                "and" => ArithOp::And,
                "or" => ArithOp::Or,
                _ => ArithOp::Xor,
            };
            let dst = register(r, &ops[0])?;
            let (a, b) = (value(r, &ops[1])?, value(r, &ops[2])?);
            plain(Instr::Arith { op, dst, a, b })
        }
        "beq" | "bne" | "blt" | "ble" | "bgt" | "bge" => {
            no_mods(raw, &[])?;
            expect_operands(raw, &[3], "a, b, label")?;
            let cmp = match opcode.as_str() {
                "beq" => BranchCmp::Eq,
                "bne" => BranchCmp::Ne,
                "blt" => BranchCmp::Lt,
                "ble" => BranchCmp::Le,
                "bgt" => BranchCmp::Gt,
                _ => BranchCmp::Ge,
            };
            let (a, b) = (value(r, &ops[0])?, value(r, &ops[1])?);
            let label = label_of(&ops[2])?;
            Ok(Decoded {
                instr: Instr::Branch {
                    cond: Some((cmp, a, b)),
                    target: 0,
                },
                label: Some(label),
                rest: Vec::new(),
                elect: None,
            })
        }
        "goto" | "bra" => {
            no_mods(raw, &["uni"])?;
            expect_operands(raw, &[1], "label")?;
            let label = label_of(&ops[0])?;
            Ok(Decoded {
                instr: Instr::Branch {
                    cond: None,
                    target: 0,
                },
                label: Some(label),
                rest: Vec::new(),
                elect: None,
            })
        }
        other => {
            if let Some(why) = unsupported_opcode(other) {
                let shown = raw
                    .parts
                    .iter()
                    .map(|p| p.0.as_str())
                    .collect::<Vec<_>>()
                    .join(".");
                return Err(
                    Diagnostic::unsupported(mn_span, shown, INSTRUCTIONS.to_string())
                        .with_note(why),
                );
            }
            Err(
                Diagnostic::expected(op_span, INSTRUCTIONS, format!("`{other}`"))
                    .with_label("unknown instruction"),
            )
        }
    }
}

fn decode_fence(raw: &RawInstr, opcode: &str, r: &mut dyn Resolver) -> Result<Instr, Diagnostic> {
    let parts = &raw.parts[1..];
    let mn_end = raw.parts.last().unwrap().1.end;
    let is_proxy = parts.first().is_some_and(|p| p.0 == "proxy");
    let tensormap_acquire = is_proxy
        && parts.get(1).is_some_and(|p| p.0 == "tensormap::generic")
        && parts.iter().any(|p| p.0 == "acquire");
    if !tensormap_acquire && !raw.operands.is_empty() {
        return Err(Diagnostic::expected(
            raw.operands[0].span(),
            "no operands after a fence",
            raw.operands[0].shown(),
        ));
    }
    let kinds = "a proxy kind (`.alias`, `.texture`, `.surface`, `.constant`, `.async`, `.async::generic`, `.tensormap::generic`)";
    // fence.proxy.K, membar.proxy.K, and mixedproxy's fence.alias
    if is_proxy || (opcode == "fence" && parts.len() == 1 && parts[0].0 == "alias") {
        let rest = if is_proxy { &parts[1..] } else { parts };
        let Some((k, ks)) = rest.first() else {
            return Err(Diagnostic::expected(
                Span::new(mn_end, mn_end + 1),
                kinds,
                "none",
            ));
        };
        let end = |rest: &[(String, Span)]| match rest.first() {
            Some((p, s)) => Err(Diagnostic::expected(
                *s,
                "the end of the fence",
                format!("`.{p}`"),
            )),
            None => Ok(()),
        };
        let kind = match k.as_str() {
            "alias" => ProxyFenceKind::Alias,
            "texture" => ProxyFenceKind::Texture,
            "surface" => ProxyFenceKind::Surface,
            "constant" => ProxyFenceKind::Constant,
            "async" => {
                let space = match rest.get(1).map(|p| p.0.as_str()) {
                    None => None,
                    Some("global") => Some(SpaceQual::Global),
                    Some("shared::cta") => Some(SpaceQual::SharedCta),
                    Some("shared::cluster") => Some(SpaceQual::SharedCluster),
                    Some(other) => {
                        return Err(Diagnostic::expected(
                            rest[1].1,
                            "`.global`, `.shared::cta`, `.shared::cluster` or the end of the fence",
                            format!("`.{other}`"),
                        ));
                    }
                };
                end(&rest[1 + space.is_some() as usize..])?;
                return Ok(Instr::ProxyFence {
                    kind: ProxyFenceKind::Async(space),
                });
            }
            "async::generic" | "tensormap::generic" => return decode_uni_proxy_fence(raw, rest, r),
            _ => return Err(Diagnostic::expected(*ks, kinds, format!("`.{k}`"))),
        };
        end(&rest[1..])?;
        return Ok(Instr::ProxyFence { kind });
    }
    let mut sem = None;
    let mut scope = None;
    let mut restrict: Option<(Restrict, Span)> = None;
    for (p, s) in parts {
        match (opcode, classify(opcode, p)) {
            ("fence", Some(Modifier::Sc)) if sem.is_none() => sem = Some(FenceSem::Sc),
            ("fence", Some(Modifier::Sem(Sem::AcqRel))) if sem.is_none() => {
                sem = Some(FenceSem::AcqRel)
            }
            ("fence", Some(Modifier::Sem(Sem::Acquire))) if sem.is_none() => {
                sem = Some(FenceSem::Acquire)
            }
            ("fence", Some(Modifier::Sem(Sem::Release))) if sem.is_none() => {
                sem = Some(FenceSem::Release)
            }
            (_, Some(Modifier::Scope(sc)))
                if scope.is_none()
                    && (opcode == "fence" || matches!(sc, Scope::Cta | Scope::Sys)) =>
            {
                scope = Some(sc)
            }
            ("membar", Some(Modifier::Gl)) if scope.is_none() => scope = Some(Scope::Gpu),
            ("fence", _) if restrict.is_none() && restriction(p).is_some() => {
                restrict = Some((restriction(p).unwrap(), *s))
            }
            _ => {
                let expected = if opcode == "membar" {
                    "a membar level (`.cta`, `.gl` or `.sys`) or `.proxy`"
                } else {
                    "fence semantics (`.sc`, `.acq_rel`, `.acquire`, `.release`) then a scope, or `.proxy.<kind>`"
                };
                return Err(mod_error(opcode, p, *s, expected));
            }
        }
    }
    let Some(scope) = scope else {
        return Err(Diagnostic::expected(
            Span::new(mn_end, mn_end + 1),
            format!("{SCOPES} on the fence"),
            "none",
        ));
    };
    let sem = if opcode == "membar" {
        FenceSem::Sc
    } else {
        sem.unwrap_or(FenceSem::AcqRel)
    };
    if let Some((re, span)) = restrict {
        check_restriction(
            re,
            sem == FenceSem::Acquire,
            sem == FenceSem::Release,
            scope,
            span,
        )?;
    }
    Ok(Instr::Fence {
        sem,
        scope,
        restrict: restrict.map(|r| r.0),
    })
}

/// `.sync_restrict::shared::cta`, `.sync_restrict::shared::cluster`, `.mbarrier_init`.
fn restriction(part: &str) -> Option<Restrict> {
    match part {
        "sync_restrict::shared::cta" => Some(Restrict::SharedCta),
        "sync_restrict::shared::cluster" => Some(Restrict::SharedCluster),
        "mbarrier_init" => Some(Restrict::MbarrierInit),
        _ => None,
    }
}

/// PTX's rules for restricted fences: `::shared::cta` and `mbarrier_init` only
/// with `.release`, `::shared::cluster` only with `.acquire`, all at `.cluster` scope.
fn check_restriction(
    re: Restrict,
    acquire: bool,
    release: bool,
    scope: Scope,
    span: Span,
) -> Result<(), Diagnostic> {
    let (ok, want) = match re {
        Restrict::SharedCta => (release, "`.release`"),
        Restrict::MbarrierInit => (release, "`.release`"),
        Restrict::SharedCluster => (acquire, "`.acquire`"),
    };
    if !ok || scope != Scope::Cluster {
        return Err(Diagnostic::expected(
            span,
            format!("{want} semantics and `.cluster` scope with this restriction"),
            "another combination",
        ));
    }
    Ok(())
}

/// `fence.proxy.async::generic.{release,acquire}.sync_restrict::....cluster` and
/// `fence.proxy.tensormap::generic.{release,acquire}.scope{ [addr], size}`.
fn decode_uni_proxy_fence(
    raw: &RawInstr,
    rest: &[(String, Span)],
    r: &mut dyn Resolver,
) -> Result<Instr, Diagnostic> {
    let to = if rest[0].0 == "async::generic" {
        UniProxy::Async
    } else {
        UniProxy::Tensormap
    };
    let (mut acquire, mut release, mut scope, mut restrict) = (false, false, None, None);
    for (p, s) in &rest[1..] {
        match (p.as_str(), classify("fence", p)) {
            ("acquire", _) if !acquire && !release => acquire = true,
            ("release", _) if !acquire && !release => release = true,
            (_, Some(Modifier::Scope(sc))) if scope.is_none() => scope = Some(sc),
            _ if to == UniProxy::Async
                && restrict.is_none()
                && matches!(
                    restriction(p),
                    Some(Restrict::SharedCta | Restrict::SharedCluster)
                ) =>
            {
                restrict = Some((restriction(p).unwrap(), *s))
            }
            _ => {
                return Err(Diagnostic::expected(
                    *s,
                    "`.release` or `.acquire`, a scope, and for `async::generic` a `.sync_restrict::...`",
                    format!("`.{p}`"),
                ));
            }
        }
    }
    let mn_end = raw.parts.last().unwrap().1.end;
    if !acquire && !release {
        return Err(Diagnostic::expected(
            Span::new(mn_end, mn_end + 1),
            "`.release` or `.acquire`",
            "none",
        ));
    }
    let Some(scope) = scope else {
        return Err(Diagnostic::expected(
            Span::new(mn_end, mn_end + 1),
            format!("{SCOPES} on the fence"),
            "none",
        ));
    };
    if to == UniProxy::Async {
        let Some((re, span)) = restrict else {
            return Err(Diagnostic::expected(
                Span::new(mn_end, mn_end + 1),
                "`.sync_restrict::shared::cta` (release) or `::shared::cluster` (acquire)",
                "none",
            ));
        };
        check_restriction(re, acquire, release, scope, span)?;
    }
    let operand = if to == UniProxy::Tensormap && acquire {
        expect_operands(raw, &[2], "[addr], size")?;
        let addr = address(r, &raw.operands[0], None, false)?;
        let RawOperand::Int(size, _) = raw.operands[1] else {
            return Err(Diagnostic::expected(
                raw.operands[1].span(),
                "the size (128)",
                raw.operands[1].shown(),
            ));
        };
        Some((addr, size))
    } else {
        None
    };
    Ok(Instr::ProxyFenceUni {
        to,
        acquire,
        scope,
        restrict: restrict.map(|r| r.0),
        operand,
    })
}
