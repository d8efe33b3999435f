//! Tensor copies in kernels: `cp.async.bulk.tensor.Nd...` and
//! `cp.reduce.async.bulk.tensor.Nd...` through a tensor map bound by
//! `--tensormap` (`docs/kernels.md`, "Tensor copies"; `docs/async.md` §8).
//!
//! As `lower::bulk` does for `cp.async.bulk`, a tensor copy becomes the
//! litmus element copies the dialect models: the box at the copy's
//! coordinates (`litmus::tensor::TensorMap::box_at`) is a list of elements of
//! the tensor's buffer, laid out one after the other from the shared-memory
//! address (dimension 0 fastest, the layout of a tensor map without
//! interleave or swizzle); each element is a `cp.async.bulk` of one element
//! that completes its bytes on the mbarrier (or joins the bulk async-group).
//! `.multicast::cluster` writes the same shared variable at the same offset
//! in every CTA its `ctaMask` names, completing on the mbarrier at the same
//! offset in each (PTX ISA, `cp.async.bulk.tensor`). Coordinates and masks
//! must be known when the kernel is lowered; anything else is refused by name.

use super::bulk::MBARRIER_BYTES;
use super::{Env, Region, ThreadLower, Val, refuse};
use crate::litmus::Diagnostic;
use crate::litmus::raw::{RawInstr, RawOperand};
use crate::ptx::ast::{Instr as PInstr, Opnd, VarSpace};

impl ThreadLower<'_> {
    /// `cp.async.bulk.tensor.Nd.shared::{cta,cluster}.global{.tile}.mbarrier::complete_tx::bytes{.multicast::cluster}
    /// [dst], [tmap, {c...}], [mbar]{, ctaMask}` and
    /// `cp{.reduce}.async.bulk.tensor.Nd.global.shared::cta{.op}{.tile}.bulk_group [tmap, {c...}], [src]`.
    pub(super) fn tensor_copy(
        &mut self,
        i: &PInstr,
        parts: &[&str],
        env: &Env,
    ) -> Result<(), Diagnostic> {
        let part_spans = super::bulk::mnemonic_part_spans(i, parts);
        let reduce = parts[1] == "reduce";
        let t = if reduce { 4 } else { 3 };
        let rank = match parts.get(t + 1).copied() {
            Some(d @ ("1d" | "2d" | "3d" | "4d" | "5d")) => (d.as_bytes()[0] - b'0') as usize,
            other => {
                return Err(Diagnostic::expected(
                    part_spans.get(t + 1).copied().unwrap_or(i.mn_span),
                    "the tensor's rank (`.1d` to `.5d`)",
                    other.map_or("none".to_string(), |o| format!("`.{o}`")),
                ));
            }
        };
        // The element copy's mnemonic: without `.tensor.Nd`, `.tile` and
        // `.multicast::cluster`; the litmus module refuses the rest by name.
        let mut raw = RawInstr {
            parts: parts
                .iter()
                .zip(&part_spans)
                .enumerate()
                .filter(|(k, _)| *k != t && *k != t + 1)
                .map(|(_, (p, s))| (p.to_string(), *s))
                .collect(),
            operands: Vec::new(),
            precondition: None,
            span: i.span,
        };
        let (eparts, multicast) = crate::litmus::tensor::element_parts(&raw, t, true)?;
        raw.parts = eparts;
        let load = raw.parts.get(t).is_some_and(|p| p.0.starts_with("shared"));
        let mbar = raw
            .parts
            .iter()
            .any(|p| p.0 == "mbarrier::complete_tx::bytes");
        let want = match (load, multicast) {
            (true, false) => 3,
            (true, true) => 4,
            (false, _) => 2,
        };
        if i.operands.len() != want || load != mbar || (multicast && !load) {
            return Err(Diagnostic::expected(
                i.span,
                match (load, multicast) {
                    (true, false) => {
                        "`.mbarrier::complete_tx::bytes` and 3 operands ([dst], [tmap, {coords}], [mbar])"
                    }
                    (true, true) => {
                        "`.mbarrier::complete_tx::bytes` and 4 operands ([dst], [tmap, {coords}], [mbar], ctaMask)"
                    }
                    (false, _) => {
                        "a store or reduction into `.global` with `.bulk_group` and 2 operands ([tmap, {coords}], [src])"
                    }
                },
                format!("{} operands", i.operands.len()),
            ));
        }
        let map_op = &i.operands[if load { 1 } else { 0 }];
        let shared_op = &i.operands[if load { 0 } else { 1 }];
        // `[tmap, {c0, c1}]`: the parser keeps it as a list in the base.
        let (tm, coords) = match map_op {
            Opnd::Addr { base: Some(b), .. } => match &**b {
                Opnd::List(items, _) if items.len() == 2 => {
                    let v = self.value(&items[0], env, 64)?;
                    let Val::Ptr(Region::TensorMap(k), 0) = v else {
                        return Err(Diagnostic::expected(
                            items[0].span(),
                            "a tensor map parameter's address (`--tensormap`)",
                            match v {
                                Val::Ptr(r, _) => self.region_name(r),
                                _ => "another value".to_string(),
                            },
                        ));
                    };
                    let Opnd::Vector(cs, _) = &items[1] else {
                        return Err(Diagnostic::expected(
                            items[1].span(),
                            "the box's coordinates `{c0, ...}`",
                            "another operand",
                        ));
                    };
                    let mut coords = Vec::new();
                    for c in cs {
                        match self.value(c, env, 32)? {
                            Val::Known(x) => coords.push(x),
                            _ => {
                                return Err(refuse(
                                    c.span(),
                                    "a tensor coordinate that is not a known constant",
                                    "a tensor copy is lowered to one copy per element of its box, so its coordinates must be known when the kernel is lowered",
                                ));
                            }
                        }
                    }
                    (k, coords)
                }
                _ => {
                    return Err(Diagnostic::expected(
                        map_op.span(),
                        "`[tmap, {coords}]`",
                        "another operand",
                    ));
                }
            },
            _ => {
                return Err(Diagnostic::expected(
                    map_op.span(),
                    "`[tmap, {coords}]`",
                    "another operand",
                ));
            }
        };
        let info = &self.ctx.tmaps[tm];
        if info.map.dims.len() != rank {
            return Err(Diagnostic::expected(
                part_spans[t + 1],
                format!(
                    "`.{}d` (tensor map `{}` has rank {})",
                    info.map.dims.len(),
                    info.param,
                    info.map.dims.len()
                ),
                format!("`.{rank}d`"),
            ));
        }
        let elems = info.map.box_at(&coords).map_err(|want| {
            Diagnostic::expected(map_op.span(), want, format!("coordinates {coords:?}"))
        })?;
        let elem = info.map.elem;
        let buffer = info.buffer;
        let first = self.ctx.buffers[buffer].first_addr;
        let (shared, shared_off) = self.pointer(shared_op, env, VarSpace::Shared)?;
        if shared_off % 16 != 0 {
            return Err(Diagnostic::expected(
                shared_op.span(),
                "a 16-byte aligned shared-memory address (PTX ISA, cp.async.bulk.tensor)",
                format!("byte offset {shared_off}"),
            ));
        }
        // The destination CTAs: the issuer's, or the mask's.
        let ctas: Vec<Option<u32>> = if multicast {
            self.mask_ctas(&i.operands[3], env)?
        } else {
            vec![None]
        };
        let bar = if load {
            Some(self.pointer(&i.operands[2], env, VarSpace::Shared)?)
        } else {
            None
        };
        let in_cta = |r: Region, c: Option<u32>| match (r, c) {
            (Region::Var(v, _), Some(c)) => Region::Var(v, c),
            (r, _) => r,
        };
        // Where a reduction's operation is written (its type is the tensor's).
        let op_span = parts
            .iter()
            .position(|p| {
                matches!(
                    *p,
                    "add" | "min" | "max" | "inc" | "dec" | "and" | "or" | "xor"
                )
            })
            .map_or(i.mn_span, |k| part_spans[k]);
        for c in ctas {
            let bar_name = match bar {
                Some((b, b_off)) => {
                    let a = self.ctx.cell(
                        in_cta(b, c),
                        b_off,
                        MBARRIER_BYTES,
                        i.operands[2].span(),
                        true,
                    )?;
                    Some(self.ctx.addresses[a].name.clone())
                }
                None => None,
            };
            for (k, &g) in elems.iter().enumerate() {
                let s = self.ctx.cell(
                    in_cta(shared, c),
                    shared_off + (k as u64 * elem) as i64,
                    elem,
                    shared_op.span(),
                    false,
                )?;
                let s_name = self.ctx.addresses[s].name.clone();
                let g_name = self.ctx.addresses[first + g as usize].name.clone();
                let mut operands = if load {
                    vec![
                        RawOperand::Bracketed(s_name, shared_op.span()),
                        RawOperand::Bracketed(g_name, map_op.span()),
                    ]
                } else {
                    vec![
                        RawOperand::Bracketed(g_name, map_op.span()),
                        RawOperand::Bracketed(s_name, shared_op.span()),
                    ]
                };
                operands.push(RawOperand::Int(elem as i64, map_op.span()));
                if let Some(b) = &bar_name {
                    operands.push(RawOperand::Bracketed(b.clone(), i.operands[2].span()));
                }
                let one = RawInstr {
                    operands,
                    ..raw.clone()
                };
                let mut decoded = self.decode(&one)?;
                if reduce {
                    decoded = self.tensor_signedness(decoded, buffer, op_span)?;
                }
                if k > 0 {
                    // One copy group per destination (`ir::copies`).
                    crate::litmus::tensor::join_previous(self.code.last(), &mut decoded);
                }
                self.emit(decoded, i)?;
            }
        }
        Ok(())
    }
}
