//! Decoding and printing the tensor-core instructions: Hopper's `wgmma.*`
//! and Blackwell's `tcgen05.*` (`docs/tensor-core.md`). Operands that real
//! PTX passes as descriptors or tensor-memory addresses in registers are
//! written as location names here: `[a]` a shared-memory operand, `[t]` a
//! tensor-memory cell (declared `t @ tmem cta N`). Shapes, types and
//! instruction descriptors only shape the arithmetic, which is opaque
//! ([`crate::ir::tensor_core::mma`]), so they are checked and dropped.

use super::diag::{Diagnostic, Span};
use super::raw::{RawInstr, RawOperand, Resolver, address, expect_operands, register};
use crate::ir::tensor_core::{TcFence, TcOp};
use crate::ir::{AddrId, Instr, Program, SpaceQual, Thread, Value};

fn unsupported(span: Span, feature: &str, expected: &str, why: &str) -> Diagnostic {
    Diagnostic::unsupported(span, feature, expected.to_string()).with_note(why)
}

fn end_of(raw: &RawInstr) -> Span {
    let e = raw.parts.last().unwrap().1.end;
    Span::new(e, e + 1)
}

/// A shape such as `m64n8k16`, `32x32b`, `128x256b`, `16x32bx2`, or a
/// repetition `x4`.
fn is_shape(p: &str) -> bool {
    let b = p.as_bytes();
    (b.first() == Some(&b'm') && p[1..].contains('n') && p.contains('k'))
        || b.first().is_some_and(u8::is_ascii_digit) && p.contains('x')
        || (b.first() == Some(&b'x') && p[1..].bytes().all(|c| c.is_ascii_digit()) && p.len() > 1)
}

/// Element types of MMA operands and of tensor-memory accesses.
fn is_elem_type(p: &str) -> bool {
    matches!(
        p,
        "f16"
            | "bf16"
            | "f32"
            | "tf32"
            | "f64"
            | "e4m3"
            | "e5m2"
            | "e2m3"
            | "e3m2"
            | "e2m1"
            | "s8"
            | "u8"
            | "s32"
            | "b1"
            | "b32"
            | "satfinite"
    )
}

/// Check the modifiers after `skip` parts: each must satisfy `ok`; known
/// unmodelled ones are refused by name.
fn mods(
    raw: &RawInstr,
    skip: usize,
    allowed: &str,
    ok: &dyn Fn(&str) -> bool,
) -> Result<(), Diagnostic> {
    for (p, s) in &raw.parts[skip..] {
        if ok(p) {
            continue;
        }
        let why = match p.as_str() {
            "cta_group::2" => Some(
                "a CTA pair's tensor cores (`cta_group::2`) are not modelled: one CTA's tensor memory only",
            ),
            "sp" => Some("sparse MMA reads a metadata operand ptxmc does not model"),
            "ws" => {
                Some("weight-stationary MMA (`.ws`) and its collector buffers are not modelled")
            }
            "multicast::cluster" => {
                Some("multicast commits (an arrive on several CTAs' mbarriers) are not modelled")
            }
            p if p.starts_with("collector") => {
                Some("collector buffers of `tcgen05.mma` are not modelled")
            }
            p if p.starts_with("block_scale") || p.starts_with("scale_vec") => {
                Some("block-scaled MMA reads scale factors from tensor memory ptxmc does not model")
            }
            _ => None,
        };
        return Err(match why {
            Some(why) => unsupported(*s, &format!(".{p}"), allowed, why),
            None => Diagnostic::expected(*s, allowed.to_string(), format!("`.{p}`"))
                .with_label(format!("not a modifier of `{}`", raw.parts[0].0)),
        });
    }
    Ok(())
}

/// A location operand `[name]` resolved and checked: tensor memory
/// (`tmem`) or shared memory of this CTA.
fn operand_addr(r: &mut dyn Resolver, op: &RawOperand, tmem: bool) -> Result<AddrId, Diagnostic> {
    let RawOperand::Bracketed(name, span) = op else {
        return Err(Diagnostic::expected(
            op.span(),
            if tmem {
                "a tensor-memory operand `[t]`"
            } else {
                "a shared-memory operand `[s]`"
            },
            op.shown(),
        ));
    };
    if tmem {
        let id = match r.address(name) {
            Some(id) => id,
            None => r.unknown_address(name, *span)?,
        };
        if !r.is_tensor_memory(id) {
            return Err(Diagnostic::expected(
                *span,
                "a tensor-memory cell (declared `NAME @ tmem cta N;`)",
                format!("location `{name}`"),
            ));
        }
        r.check_tensor_cta(id, *span)?;
        Ok(id)
    } else {
        address(r, op, Some(SpaceQual::SharedCta), false)
    }
}

fn int(op: &RawOperand, what: &str) -> Result<Value, Diagnostic> {
    match op {
        RawOperand::Int(v, _) => Ok(*v),
        RawOperand::Vector(items, _) if items.len() == 1 => int(&items[0], what),
        other => Err(Diagnostic::expected(
            other.span(),
            what.to_string(),
            other.shown(),
        )),
    }
}

fn flag(op: &RawOperand, what: &str) -> Result<bool, Diagnostic> {
    match int(op, what)? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Diagnostic::expected(
            op.span(),
            what.to_string(),
            op.shown(),
        )),
    }
}

/// The register of a result operand: `r` or `{r}` (one register stands for
/// the whole fragment).
fn result_reg(r: &mut dyn Resolver, op: &RawOperand) -> Result<crate::ir::RegId, Diagnostic> {
    match op {
        RawOperand::Vector(items, _) if items.len() == 1 => register(r, &items[0]),
        RawOperand::Vector(items, s) => Err(Diagnostic::expected(
            *s,
            "one register for the result fragment (`r` or `{r}`)",
            format!("{} registers", items.len()),
        )
        .with_note("the arithmetic is opaque: one register stands for the whole fragment")),
        other => register(r, other),
    }
}

/// `wgmma.*`.
pub fn decode_wgmma(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Instr, Diagnostic> {
    let ops = &raw.operands;
    let Some((what, wspan)) = raw.parts.get(1) else {
        return Err(Diagnostic::expected(
            end_of(raw),
            "`.fence`, `.mma_async`, `.commit_group` or `.wait_group` after `wgmma`",
            "none",
        ));
    };
    let sync = |p: &str| matches!(p, "sync" | "aligned");
    let op = match what.as_str() {
        "fence" => {
            mods(raw, 2, "`.sync.aligned`", &sync)?;
            expect_operands(raw, &[0], "")?;
            TcOp::Fence {
                kind: TcFence::Wgmma,
            }
        }
        "commit_group" => {
            mods(raw, 2, "`.sync.aligned`", &sync)?;
            expect_operands(raw, &[0], "")?;
            TcOp::WgmmaCommit
        }
        "wait_group" => {
            mods(raw, 2, "`.sync.aligned`", &sync)?;
            expect_operands(raw, &[1], "N")?;
            let n = int(&ops[0], "a group count (an integer)")?;
            let pending = u32::try_from(n).map_err(|_| {
                Diagnostic::expected(ops[0].span(), "a group count from 0", ops[0].shown())
            })?;
            TcOp::WgmmaWait { pending }
        }
        "mma_async" => {
            mods(
                raw,
                2,
                "`.sync.aligned`, a shape `.mMnNkK` and element types",
                &|p| sync(p) || is_shape(p) || is_elem_type(p),
            )?;
            if !(4..=8).contains(&ops.len()) {
                expect_operands(raw, &[4], "d, [a], [b], scale-d")?;
            }
            let dst = result_reg(r, &ops[0])?;
            let a = operand_addr(r, &ops[1], false)?;
            let b = operand_addr(r, &ops[2], false)?;
            let accumulate = flag(&ops[3], "scale-d: 0 or 1")?;
            // imm-scale-a/b and imm-trans-a/b only shape the arithmetic.
            for o in &ops[4..] {
                int(
                    o,
                    "an immediate (imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b)",
                )?;
            }
            TcOp::Wgmma {
                dst,
                a,
                b,
                accumulate,
            }
        }
        other => {
            return Err(Diagnostic::expected(
                *wspan,
                "`.fence`, `.mma_async`, `.commit_group` or `.wait_group`",
                format!("`.{other}`"),
            ));
        }
    };
    Ok(Instr::Tensor { op })
}

/// `tcgen05.*`.
pub fn decode_tcgen05(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Instr, Diagnostic> {
    let ops = &raw.operands;
    let Some((what, wspan)) = raw.parts.get(1) else {
        return Err(Diagnostic::expected(
            end_of(raw),
            "a tcgen05 operation (`.mma`, `.cp`, `.ld`, `.st`, `.wait::ld`, `.wait::st`, \
             `.commit`, `.fence::before_thread_sync`, `.fence::after_thread_sync`)",
            "none",
        ));
    };
    let sync = |p: &str| matches!(p, "sync" | "aligned");
    let group1 = |p: &str| p == "cta_group::1";
    let op = match what.as_str() {
        "fence::before_thread_sync" | "fence::after_thread_sync" => {
            mods(raw, 2, "nothing more", &|_| false)?;
            expect_operands(raw, &[0], "")?;
            TcOp::Fence {
                kind: if what == "fence::after_thread_sync" {
                    TcFence::AfterThreadSync
                } else {
                    TcFence::BeforeThreadSync
                },
            }
        }
        "wait::ld" | "wait::st" => {
            mods(raw, 2, "`.sync.aligned`", &sync)?;
            expect_operands(raw, &[0], "")?;
            TcOp::Wait {
                ld: what == "wait::ld",
            }
        }
        "mma" => {
            mods(raw, 2, "`.cta_group::1` and `.kind::KIND`", &|p| {
                group1(p) || p.starts_with("kind::")
            })?;
            if !(5..=6).contains(&ops.len()) {
                expect_operands(raw, &[5], "[d], [a], [b], idesc, enable-input-d")?;
            }
            let d = operand_addr(r, &ops[0], true)?;
            let a = operand_addr(r, &ops[1], false)?;
            let b = operand_addr(r, &ops[2], false)?;
            // idesc (an immediate or a register) only shapes the arithmetic.
            match &ops[3] {
                RawOperand::Int(..) => {}
                o => {
                    register(r, o)?;
                }
            }
            if ops.len() == 6 {
                return Err(unsupported(
                    ops[4].span(),
                    "disable-output-lane",
                    "[d], [a], [b], idesc, enable-input-d",
                    "masking lanes of the output is not modelled",
                ));
            }
            let accumulate = flag(&ops[4], "enable-input-d: 0 or 1")?;
            TcOp::Mma {
                d,
                a,
                b,
                accumulate,
            }
        }
        "cp" => {
            mods(raw, 2, "`.cta_group::1` and a shape", &|p| {
                group1(p) || is_shape(p) || p.starts_with("warpx")
            })?;
            expect_operands(raw, &[2], "[taddr], [s]")?;
            TcOp::Cp {
                d: operand_addr(r, &ops[0], true)?,
                src: operand_addr(r, &ops[1], false)?,
            }
        }
        "ld" => {
            mods(raw, 2, "`.sync.aligned`, a shape, `.xN` and `.b32`", &|p| {
                sync(p) || is_shape(p) || p == "b32" || p == "pack::16b"
            })?;
            expect_operands(raw, &[2], "r, [taddr]")?;
            TcOp::Ld {
                dst: result_reg(r, &ops[0])?,
                src: operand_addr(r, &ops[1], true)?,
            }
        }
        "st" => {
            mods(raw, 2, "`.sync.aligned`, a shape, `.xN` and `.b32`", &|p| {
                sync(p) || is_shape(p) || p == "b32" || p == "unpack::16b"
            })?;
            expect_operands(raw, &[2], "[taddr], v")?;
            let dst = operand_addr(r, &ops[0], true)?;
            let value = match &ops[1] {
                RawOperand::Int(v, _) => *v,
                RawOperand::Vector(items, _) if items.len() == 1 => {
                    int(&items[0], "an immediate value")?
                }
                o => {
                    return Err(Diagnostic::expected(
                        o.span(),
                        "an immediate value for `tcgen05.st`",
                        o.shown(),
                    )
                    .with_note(
                        "the store runs apart from the thread, so ptxmc needs its value up front",
                    ));
                }
            };
            TcOp::St { dst, value }
        }
        "commit" => {
            mods(
                raw,
                2,
                "`.cta_group::1`, `.mbarrier::arrive::one`, `.shared::cluster` and `.b64`",
                &|p| group1(p) || matches!(p, "mbarrier::arrive::one" | "shared::cluster" | "b64"),
            )?;
            expect_operands(raw, &[1], "[mbar]")?;
            TcOp::Commit {
                bar: address(r, &ops[0], Some(SpaceQual::SharedCta), true)?,
            }
        }
        "alloc" | "dealloc" | "relinquish_alloc_permit" => {
            return Err(unsupported(
                *wspan,
                &format!("tcgen05.{what}"),
                "a tcgen05 operation ptxmc models",
                "tensor-memory allocation is not modelled: declare the cells a test uses \
                 (`t @ tmem cta N`), as if allocated before the test (docs/tensor-core.md)",
            ));
        }
        "shift" => {
            return Err(unsupported(
                *wspan,
                "tcgen05.shift",
                "a tcgen05 operation ptxmc models",
                "shifting rows of tensor memory is not modelled (docs/tensor-core.md)",
            ));
        }
        other => {
            return Err(Diagnostic::expected(
                *wspan,
                "a tcgen05 operation (`.mma`, `.cp`, `.ld`, `.st`, `.wait::ld`, `.wait::st`, \
                 `.commit`, `.fence::before_thread_sync`, `.fence::after_thread_sync`)",
                format!("`.{other}`"),
            ));
        }
    };
    Ok(Instr::Tensor { op })
}

/// The canonical text of a tensor-core instruction (`Result`s are part of
/// the wait before them and print as nothing in a test; traces show them).
pub fn print(p: &Program, t: &Thread, op: &TcOp) -> String {
    let n = |a: &AddrId| p.addresses[*a].name.clone();
    let reg = |r: &crate::ir::RegId| t.regs[*r].name.clone();
    match op {
        TcOp::Fence {
            kind: TcFence::Wgmma,
        } => "wgmma.fence.sync.aligned".into(),
        TcOp::Fence {
            kind: TcFence::AfterThreadSync,
        } => "tcgen05.fence::after_thread_sync".into(),
        TcOp::Fence {
            kind: TcFence::BeforeThreadSync,
        } => "tcgen05.fence::before_thread_sync".into(),
        TcOp::Wgmma {
            dst,
            a,
            b,
            accumulate,
        } => format!(
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {}, [{}], [{}], {}",
            reg(dst),
            n(a),
            n(b),
            u8::from(*accumulate)
        ),
        TcOp::WgmmaCommit => "wgmma.commit_group.sync.aligned".into(),
        TcOp::WgmmaWait { pending } => format!("wgmma.wait_group.sync.aligned {pending}"),
        TcOp::Mma {
            d,
            a,
            b,
            accumulate,
        } => format!(
            "tcgen05.mma.cta_group::1.kind::f16 [{}], [{}], [{}], 0, {}",
            n(d),
            n(a),
            n(b),
            u8::from(*accumulate)
        ),
        TcOp::Cp { d, src } => format!("tcgen05.cp.cta_group::1.128x256b [{}], [{}]", n(d), n(src)),
        TcOp::Ld { dst, src } => format!(
            "tcgen05.ld.sync.aligned.32x32b.x1.b32 {}, [{}]",
            reg(dst),
            n(src)
        ),
        TcOp::St { dst, value } => {
            format!(
                "tcgen05.st.sync.aligned.32x32b.x1.b32 [{}], {value}",
                n(dst)
            )
        }
        TcOp::Wait { ld } => format!(
            "tcgen05.wait::{}.sync.aligned",
            if *ld { "ld" } else { "st" }
        ),
        TcOp::Commit { bar } => format!(
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [{}]",
            n(bar)
        ),
        TcOp::Result { dst, from } => {
            format!("(result of instruction {} into {})", from + 1, reg(dst))
        }
    }
}
