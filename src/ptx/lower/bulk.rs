//! Bulk copies in kernels: `cp.async.bulk.<dst>.<src>.<completion>` as the
//! element copies the litmus dialect models (`docs/kernels.md`, "Bulk
//! copies"; `docs/async.md`).
//!
//! A litmus copy moves one location, and a kernel's locations are buffer
//! elements (and the cells accesses cut shared variables into). So a copy of
//! `size` bytes is `size / e` element copies, `e` the element size of the
//! global buffer it reads or writes: each a litmus `cp.async.bulk` of `e`
//! bytes between the two elements at the same index, decoded by the litmus
//! dialect's own decoder (`litmus::async_instr`). Each completes `e` bytes on
//! the mbarrier (or joins the open bulk async-group), so the transaction
//! bytes the phase sees are exactly `size`, and an `expect_tx` that announces
//! another count leaves the phase open just as on the GPU. A size that is not
//! a known constant, not a multiple of 16 (PTX ISA §9.7.9.25.4.1, "cp.async.bulk":
//! the size and both addresses are multiples of 16), or of more than
//! [`MAX_ELEMENT_COPIES`] elements is refused by name — never shrunk.

use super::{Env, Region, ThreadLower, Val, refuse};
use crate::litmus::Diagnostic;
use crate::litmus::raw::{RawInstr, RawOperand};
use crate::ptx::ast::{Instr as PInstr, Opnd, VarSpace};

/// The most element copies one bulk copy lowers to (each is an agent thread
/// of its own in both engines).
pub const MAX_ELEMENT_COPIES: u64 = 32;

/// The size of an mbarrier object.
pub(super) const MBARRIER_BYTES: u64 = 8;

/// The span of each `.`-separated part of `i`'s mnemonic (`parts`, in
/// order), for diagnostics that point at one modifier.
pub(super) fn mnemonic_part_spans(i: &PInstr, parts: &[&str]) -> Vec<crate::litmus::Span> {
    let mut spans = Vec::with_capacity(parts.len());
    let mut off = i.mn_span.start;
    for p in parts {
        spans.push(crate::litmus::Span::new(off, off + p.len()));
        off += p.len() + 1;
    }
    spans
}

impl ThreadLower<'_> {
    /// `cp.async.bulk.shared::{cta,cluster}.global.mbarrier::complete_tx::bytes
    /// [dst], [src], size, [mbar]` and `cp.async.bulk.global.shared::cta.bulk_group
    /// [dst], [src], size`: one litmus copy per element.
    pub(super) fn bulk_copy(
        &mut self,
        i: &PInstr,
        parts: &[&str],
        env: &Env,
    ) -> Result<(), Diagnostic> {
        let part_spans = mnemonic_part_spans(i, parts);
        // `.multicast::cluster`: one copy per CTA of the mask, into the same
        // variable at the same offset, completing on the mbarrier at the same
        // offset in each (PTX ISA, cp.async.bulk).
        let multicast = parts.contains(&"multicast::cluster");
        let (parts, part_spans): (Vec<&str>, Vec<crate::litmus::Span>) = parts
            .iter()
            .zip(part_spans)
            .filter(|(p, _)| **p != "multicast::cluster")
            .map(|(p, s)| (*p, s))
            .unzip();
        let parts = &parts[..];
        for (k, p) in parts.iter().enumerate().skip(3) {
            let what = if p.starts_with("L2::") || p.starts_with("level::") {
                "cache hints (they take an operand)"
            } else if p.starts_with("multicast") {
                "multicast copies other than `.multicast::cluster`"
            } else if *p == "ignore_oob" || *p == "cp_mask" {
                "partial copies"
            } else {
                continue;
            };
            return Err(refuse(
                part_spans[k],
                format!("`.{p}` on `{}`", i.mnemonic),
                &format!("{what} are not modelled in kernels"),
            ));
        }
        // Spaces as written: `.dst.src` right after `cp.async.bulk`.
        let space = |p: Option<&&str>| match p.copied() {
            Some("global") => Some(VarSpace::Global),
            Some(s) if s.starts_with("shared") => Some(VarSpace::Shared),
            _ => None,
        };
        let (Some(dst_space), Some(src_space)) = (space(parts.get(3)), space(parts.get(4))) else {
            // Let the litmus decoder word what is missing.
            return Err(self.decode_only(i, parts, &part_spans));
        };
        let mbar = parts.contains(&"mbarrier::complete_tx::bytes");
        let want = if multicast {
            5
        } else if mbar {
            4
        } else {
            3
        };
        if i.operands.len() != want || (multicast && !(mbar && src_space == VarSpace::Global)) {
            return Err(Diagnostic::expected(
                i.span,
                format!(
                    "{want} operands ({})",
                    if multicast {
                        "a copy from `.global` with `.mbarrier::complete_tx::bytes`: [dst], [src], size, [mbar], ctaMask"
                    } else if mbar {
                        "[dst], [src], size, [mbar]"
                    } else {
                        "[dst], [src], size"
                    }
                ),
                i.operands.len().to_string(),
            ));
        }
        let (dst, dst_off) = self.pointer(&i.operands[0], env, dst_space)?;
        let (src, src_off) = self.pointer(&i.operands[1], env, src_space)?;
        // The element size: that of the global side (the buffer the launch
        // typed); a copy between two shared variables has none.
        let global = if src_space == VarSpace::Global {
            src
        } else if dst_space == VarSpace::Global {
            dst
        } else {
            return Err(refuse(
                i.mn_span,
                format!("`{}` (a copy between shared memories)", i.mnemonic),
                "a bulk copy's elements are those of the global buffer it reads or writes; copies between shared variables are not lowered yet",
            ));
        };
        let (elem, what) = match global {
            Region::Buffer(b) => {
                let info = &self.ctx.buffers[b];
                (
                    info.elem_bytes,
                    format!("buffer `{}` ({})", info.name, info.ty),
                )
            }
            Region::Var(v, _) => {
                let info = &self.ctx.vars[v];
                (info.elem_bytes, format!("variable `{}`", info.name))
            }
            Region::TensorMap(_) => unreachable!("`pointer` refuses tensor maps"),
        };
        let size_span = i.operands[2].span();
        let size = match &i.operands[2] {
            Opnd::Imm(v, _) => *v,
            Opnd::Reg(r, _) => match &env[*r as usize] {
                Val::Known(v) => *v,
                _ => {
                    return Err(refuse(
                        size_span,
                        "a bulk copy whose size is not a known constant",
                        "a copy is lowered to one copy per element, so its size must be known when the kernel is lowered",
                    ));
                }
            },
            o => {
                return Err(Diagnostic::expected(
                    o.span(),
                    "a size in bytes (a register or a constant)",
                    "another operand",
                ));
            }
        };
        if size <= 0 || size % 16 != 0 {
            return Err(Diagnostic::expected(
                size_span,
                "a size that is a positive multiple of 16 bytes (PTX ISA, cp.async.bulk)",
                format!("{size} bytes"),
            ));
        }
        for (o, at) in [(&i.operands[0], dst_off), (&i.operands[1], src_off)] {
            if at % 16 != 0 {
                return Err(Diagnostic::expected(
                    o.span(),
                    "a 16-byte aligned address (PTX ISA, cp.async.bulk)",
                    format!("byte offset {at}"),
                ));
            }
        }
        let size = size as u64;
        if size % elem != 0 {
            return Err(refuse(
                size_span,
                format!("a copy of {size} bytes"),
                &format!("a bulk copy moves whole elements of {what}, {elem} bytes each"),
            ));
        }
        let n = size / elem;
        if n > MAX_ELEMENT_COPIES {
            return Err(refuse(
                size_span,
                format!("a bulk copy of {n} elements of {what}"),
                &format!(
                    "each element is an asynchronous copy of its own; at most {MAX_ELEMENT_COPIES} per instruction (give the buffer fewer elements)"
                ),
            ));
        }
        let ctas = if multicast {
            self.mask_ctas(&i.operands[4], env)?
        } else {
            vec![None]
        };
        let in_cta = |r: Region, c: Option<u32>| match (r, c) {
            (Region::Var(v, _), Some(c)) => Region::Var(v, c),
            (r, _) => r,
        };
        for c in ctas {
            let bar = if mbar {
                let (b, b_off) = self.pointer(&i.operands[3], env, VarSpace::Shared)?;
                let a = self.ctx.cell(
                    in_cta(b, c),
                    b_off,
                    MBARRIER_BYTES,
                    i.operands[3].span(),
                    true,
                )?;
                Some(self.ctx.addresses[a].name.clone())
            } else {
                None
            };
            for k in 0..n {
                let step = (k * elem) as i64;
                let d = self.ctx.cell(
                    in_cta(dst, c),
                    dst_off + step,
                    elem,
                    i.operands[0].span(),
                    false,
                )?;
                let s = self
                    .ctx
                    .cell(src, src_off + step, elem, i.operands[1].span(), false)?;
                let mut operands = vec![
                    RawOperand::Bracketed(self.ctx.addresses[d].name.clone(), i.operands[0].span()),
                    RawOperand::Bracketed(self.ctx.addresses[s].name.clone(), i.operands[1].span()),
                    RawOperand::Int(elem as i64, size_span),
                ];
                if let Some(b) = &bar {
                    operands.push(RawOperand::Bracketed(b.clone(), i.operands[3].span()));
                }
                let raw = RawInstr {
                    parts: parts
                        .iter()
                        .zip(&part_spans)
                        .map(|(p, s)| (p.to_string(), *s))
                        .collect(),
                    operands,
                    precondition: None,
                    span: i.span,
                };
                let mut decoded = self.decode(&raw)?;
                if k > 0 {
                    // One copy group per destination (`ir::copies`).
                    crate::litmus::tensor::join_previous(self.code.last(), &mut decoded);
                }
                self.emit(decoded, i)?;
            }
        }
        Ok(())
    }

    /// The CTAs a multicast copy's `ctaMask` names (by `%cluster_ctarank`).
    pub(super) fn mask_ctas(
        &mut self,
        o: &Opnd,
        env: &Env,
    ) -> Result<Vec<Option<u32>>, Diagnostic> {
        let m = match self.value(o, env, 16)? {
            Val::Known(m) if (1..=0xffff).contains(&m) => m,
            Val::Known(m) => {
                return Err(Diagnostic::expected(
                    o.span(),
                    "a 16-bit ctaMask naming at least one CTA",
                    m.to_string(),
                ));
            }
            _ => {
                return Err(refuse(
                    o.span(),
                    "a ctaMask that is not a known constant",
                    "a multicast copy is lowered to one copy per destination CTA, so its mask must be known when the kernel is lowered",
                ));
            }
        };
        let mut out = Vec::new();
        for r in (0..16).filter(|r| m & (1 << r) != 0) {
            match self.sp.cta_of_rank(r) {
                Some(c) => out.push(Some(c)),
                None => {
                    return Err(Diagnostic::expected(
                        o.span(),
                        format!(
                            "a mask of CTA ranks of the cluster (0..{})",
                            self.sp.cluster_nctarank
                        ),
                        format!("{m:#x} (rank {r})"),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Decode `raw` with the litmus dialect's decoder.
    pub(super) fn decode(&mut self, raw: &RawInstr) -> Result<crate::ir::Instr, Diagnostic> {
        let mut res = super::Res {
            regs: &mut self.regs,
            names: &mut self.reg_names,
            addrs: &self.ctx.by_name,
        };
        Ok(crate::litmus::instr::decode(raw, &mut res)?.instr)
    }

    /// The litmus decoder's error for a malformed mnemonic (no operands are
    /// resolved: the mnemonic is what is wrong).
    fn decode_only(
        &mut self,
        i: &PInstr,
        parts: &[&str],
        spans: &[crate::litmus::Span],
    ) -> Diagnostic {
        let raw = RawInstr {
            parts: parts
                .iter()
                .zip(spans)
                .map(|(p, s)| (p.to_string(), *s))
                .collect(),
            operands: Vec::new(),
            precondition: None,
            span: i.span,
        };
        match self.decode(&raw) {
            Err(d) => d,
            Ok(_) => Diagnostic::expected(
                i.mn_span,
                "the destination and source state spaces of a bulk copy",
                format!("`{}`", i.mnemonic),
            ),
        }
    }
}
