//! Tensor copies and multicast copies (`docs/async.md` §8): tensor maps,
//! `cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor` and
//! `cp.async.bulk...multicast::cluster`, decoded as the element copies the
//! dialect already models.
//!
//! A tensor map names a box of a global tensor; a tensor copy moves the box's
//! elements through the async proxy (PTX ISA, "Tensor Memory Access" and
//! `cp.async.bulk.tensor`). ptxmc writes it as one `cp.async.bulk` of one
//! element per element of the box, as it writes a vector access as one
//! scalar access per element (`litmus::vector`): each copy reads its global
//! element through the async proxy, writes its shared element, and completes
//! its bytes on the mbarrier, so the phase's transaction bytes are the box's.
//! A multicast copy (`.multicast::cluster`, a `ctaMask`) writes the same
//! elements into every destination CTA *at the same CTA-relative offset* and
//! signals the mbarrier at the same offset in each (PTX ISA,
//! `cp.async.bulk.tensor` and `cp.async.bulk`): one copy per destination CTA
//! and element. A litmus test has no offsets, so it lists the destination
//! CTAs' buffers and mbarriers, in the order of the mask's bits:
//! `{s, t}, [g], 4, {bar0, bar1}, 3`.
//!
//! Printed back, a test shows the element copies, the second and later of
//! each destination marked `.joined` (they parse to the same IR: the copy
//! groups of `ir::copies`, whose bytes the GPU may complete in any chunks). The tensor map itself is a declaration, not a memory location:
//! `tensormap.replace` is refused by name (`docs/async.md` §8).

use super::diag::{Diagnostic, Span};
use super::instr::Decoded;
use super::lexer::{Cursor, Tok, Token};
use super::raw::{RawInstr, RawOperand, Resolver, parse_int};

/// The largest rank of a tensor (PTX: `.1d` to `.5d`).
pub const MAX_RANK: usize = 5;
/// The most elements one tensor copy may move to one CTA (each is an agent
/// thread of its own in both engines).
pub const MAX_BOX_ELEMENTS: u64 = 32;

/// A tensor map: a box shape over a global tensor whose elements are the
/// locations `global[0]`, `global[1]`, ... (dimension 0 varies fastest, as in
/// a CUDA tensor map's `globalDim[0]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMap {
    /// The map's name.
    pub name: String,
    /// The global tensor's element locations' base name.
    pub global: String,
    /// The tensor's size in each dimension, innermost first.
    pub dims: Vec<u64>,
    /// The box's size in each dimension, innermost first.
    pub boxdims: Vec<u64>,
    /// Bytes per element (the transaction bytes each element completes).
    pub elem: u64,
    /// Where it was declared.
    pub span: Span,
}

impl TensorMap {
    /// The number of elements of one box.
    pub fn box_len(&self) -> u64 {
        self.boxdims.iter().product()
    }
    /// The linear indices (into the global tensor) of the box at `coords`, in
    /// the order the box lies in shared memory (dimension 0 fastest), or why
    /// there is none: a box partly outside the tensor is refused (the
    /// hardware fills such elements with zeros on loads and skips them on
    /// stores, which ptxmc does not model).
    pub fn box_at(&self, coords: &[i64]) -> Result<Vec<u64>, String> {
        if coords.len() != self.dims.len() {
            return Err(format!(
                "{} coordinate{} (map `{}` has rank {})",
                self.dims.len(),
                if self.dims.len() == 1 { "" } else { "s" },
                self.name,
                self.dims.len()
            ));
        }
        for (k, (&c, (&d, &b))) in coords
            .iter()
            .zip(self.dims.iter().zip(&self.boxdims))
            .enumerate()
        {
            if c < 0 || (c as u64).saturating_add(b) > d {
                return Err(format!(
                    "a box inside the tensor (dimension {k}: coordinate {c} with box {b} in 0..{d}); \
                     out-of-bound elements (zero-filled on loads, skipped on stores) are not modelled"
                ));
            }
        }
        let n = self.box_len();
        let mut out = Vec::with_capacity(n as usize);
        for e in 0..n {
            // Box coordinates of element e, dimension 0 fastest.
            let (mut rest, mut lin, mut stride) = (e, 0u64, 1u64);
            for ((&c, &d), &b) in coords.iter().zip(&self.dims).zip(&self.boxdims) {
                let j = rest % b;
                rest /= b;
                lin += (c as u64 + j) * stride;
                stride *= d;
            }
            out.push(lin);
        }
        Ok(out)
    }
}

/// Parse the rest of `NAME @ tensormap GLOBAL dims D0[,D1...] box B0[,B1...] [elem BYTES]`
/// (the cursor is after `@ tensormap`).
pub fn parse_decl(cur: &mut Cursor<'_, '_>, name: &Token<'_>) -> Result<TensorMap, Diagnostic> {
    let global = cur.expect(
        Tok::Word,
        "the global tensor's name (its elements are `NAME[i]`)",
    )?;
    if global.text.contains(['.', '[']) {
        return Err(Diagnostic::expected(
            global.span,
            "the global tensor's name (its elements are `NAME[i]`)",
            global.quoted(),
        ));
    }
    let list = |cur: &mut Cursor<'_, '_>, key: &str| -> Result<(Vec<u64>, Span), Diagnostic> {
        let k = cur.expect(Tok::Word, &format!("`{key}`"))?;
        if k.text != key {
            return Err(Diagnostic::expected(k.span, format!("`{key}`"), k.quoted()));
        }
        let mut v = Vec::new();
        let mut span = k.span;
        loop {
            let t = cur.expect(Tok::Int, &format!("a size after `{key}`"))?;
            let n = parse_int(t.text, t.span)?;
            if !(1..=256).contains(&n) {
                return Err(Diagnostic::expected(
                    t.span,
                    "a size between 1 and 256",
                    t.quoted(),
                ));
            }
            v.push(n as u64);
            span = span.to(t.span);
            if cur.eat(Tok::Comma).is_none() {
                break;
            }
        }
        if v.len() > MAX_RANK {
            return Err(Diagnostic::expected(
                span,
                format!("at most {MAX_RANK} dimensions"),
                v.len().to_string(),
            ));
        }
        Ok((v, span))
    };
    let (dims, dspan) = list(cur, "dims")?;
    let (boxdims, bspan) = list(cur, "box")?;
    check_box(&dims, &boxdims, bspan)?;
    let total: u64 = dims.iter().product();
    if total > 4096 {
        return Err(Diagnostic::expected(
            dspan,
            "a tensor of at most 4096 elements (one location each)",
            total.to_string(),
        ));
    }
    let mut elem = 4;
    if cur.peek().is_some_and(|t| t.text == "elem") {
        cur.bump();
        let t = cur.expect(Tok::Int, "the element size in bytes (1, 2, 4 or 8)")?;
        elem = parse_int(t.text, t.span)?;
        if ![1, 2, 4, 8].contains(&elem) {
            return Err(Diagnostic::expected(
                t.span,
                "the element size in bytes (1, 2, 4 or 8)",
                t.quoted(),
            ));
        }
    }
    let m = TensorMap {
        name: name.text.to_string(),
        global: global.text.to_string(),
        dims,
        boxdims,
        elem: elem as u64,
        span: name.span,
    };
    if m.box_len() > MAX_BOX_ELEMENTS {
        return Err(Diagnostic::unsupported(
            bspan,
            format!("box of {} elements", m.box_len()),
            format!("a box of at most {MAX_BOX_ELEMENTS} elements"),
        )
        .with_note("each element of a tensor copy is an asynchronous copy of its own"));
    }
    Ok(m)
}

/// Whether `raw` is a form this module decodes: a tensor copy or reduction,
/// or a multicast bulk copy.
pub fn handles(raw: &RawInstr) -> bool {
    let p: Vec<&str> = raw.parts.iter().map(|(s, _)| s.as_str()).collect();
    match p.as_slice() {
        ["cp", "async", "bulk", "tensor", ..] | ["cp", "reduce", "async", "bulk", "tensor", ..] => {
            true
        }
        ["cp", "async", "bulk", rest @ ..] => rest.contains(&"multicast::cluster"),
        _ => false,
    }
}

/// Whether `raw` is a tensor-map instruction ptxmc refuses in litmus tests
/// ([`refusal`]).
pub fn is_tensormap_instr(raw: &RawInstr) -> bool {
    let op = raw.parts[0].0.as_str();
    op == "tensormap" || (op == "prefetch" && raw.parts.iter().any(|p| p.0 == "tensormap"))
}

/// Why `prefetch.tensormap` and `tensormap.replace` are refused, by name.
pub fn refusal(raw: &RawInstr) -> Diagnostic {
    let span = raw.parts[0].1.to(raw.parts.last().unwrap().1);
    let name: Vec<&str> = raw.parts.iter().map(|p| p.0.as_str()).collect();
    if raw.parts[0].0 == "prefetch" {
        Diagnostic::unsupported(
            span,
            name.join("."),
            "an instruction with a memory effect (in a litmus test)",
        )
        .with_note(
            "`prefetch.tensormap` only brings the tensor map into a cache (PTX ISA, \"prefetch, \
             prefetchu\"): it changes no value and orders nothing, so a litmus test leaves it \
             out (the kernel front end passes over it)",
        )
    } else {
        Diagnostic::unsupported(
            span,
            name.join("."),
            "a tensor map fixed by its declaration in the init block",
        )
        .with_note(
            "a tensor map that changes at run time is not modelled: the elements a copy moves \
             would depend on the map's value, and ptxmc fixes them when the test is read; \
             declare one tensor map per box (docs/async.md 8)",
        )
    }
}

fn end_of(raw: &RawInstr) -> Span {
    let e = raw.parts.last().unwrap().1.end;
    Span::new(e, e + 1)
}

/// The element location `base[k]` (`base` may itself end in `[i]`: the
/// elements then start at `i`).
fn element(base: &str, k: u64) -> String {
    if let Some(open) = base.rfind('[') {
        if let Some(i) = base[open + 1..]
            .strip_suffix(']')
            .and_then(|d| d.parse::<u64>().ok())
        {
            return format!("{}[{}]", &base[..open], i + k);
        }
    }
    format!("{base}[{k}]")
}

fn bracketed(name: String, span: Span) -> RawOperand {
    RawOperand::Bracketed(name, span)
}

/// What one decoded copy instruction is made of: its mnemonic parts, as the
/// unicast element copy is spelt, and the operands of each element copy.
struct Plan {
    parts: Vec<(String, Span)>,
    copies: Vec<Vec<RawOperand>>,
}

/// Decode a tensor copy, a tensor reduction or a multicast bulk copy into
/// its element copies (`Decoded::rest`).
pub fn decode(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Decoded, Diagnostic> {
    let plan = if raw.parts.get(3).is_some_and(|p| p.0 == "tensor")
        || raw.parts.get(4).is_some_and(|p| p.0 == "tensor")
    {
        tensor_plan(raw, r)?
    } else {
        multicast_plan(raw, r)?
    };
    let mut instrs = Vec::new();
    for ops in plan.copies {
        let one = RawInstr {
            parts: plan.parts.clone(),
            operands: ops,
            precondition: None,
            span: raw.span,
        };
        let mut i = super::async_instr::decode_cp(&one, r)?;
        join_previous(instrs.last(), &mut i);
        instrs.push(i);
    }
    let mut it = instrs.into_iter();
    let instr = it.next().expect("a copy has at least one element");
    Ok(Decoded {
        instr,
        label: None,
        rest: it.collect(),
        elect: None,
    })
}

/// Mark `next`, an element copy of the same source copy as `prev`, as
/// `joined` to it when both complete the same way (the same mbarrier: one
/// copy group per destination CTA, `ir::copies`).
pub fn join_previous(prev: Option<&crate::ir::Instr>, next: &mut crate::ir::Instr) {
    use crate::ir::Instr::AsyncCopy;
    if let (
        Some(AsyncCopy { completion: c, .. }),
        AsyncCopy {
            completion, joined, ..
        },
    ) = (prev, next)
    {
        *joined = c == completion;
    }
}

/// Refuse the modifiers of a tensor or multicast copy that ptxmc does not
/// model, by name; keep the others (in order) for the element copies.
pub fn element_parts(
    raw: &RawInstr,
    from: usize,
    tensor: bool,
) -> Result<(Vec<(String, Span)>, bool), Diagnostic> {
    let mut out: Vec<(String, Span)> = raw.parts[..from].to_vec();
    let mut multicast = false;
    for (q, s) in &raw.parts[from..] {
        let refused = match q.as_str() {
            "multicast::cluster" if !multicast => {
                multicast = true;
                continue;
            }
            "tile" if tensor => continue,
            x if tensor && x.starts_with("im2col") => Some((
                "im2col tensor copies",
                "their box follows im2col offsets; `.tile` copies are modelled",
            )),
            x if tensor && (x.starts_with("tile::gather") || x.starts_with("tile::scatter")) => {
                Some(("gather and scatter tensor copies", "only `.tile` boxes are"))
            }
            x if x.starts_with("cta_group") => Some((
                "`.cta_group` copies (CTA pairs)",
                "completion on a peer CTA's mbarrier is not",
            )),
            x if x.starts_with("L2::") || x == "level::cache_hint" => Some((
                "cache hints",
                "they take operands and have no memory-model effect; remove them",
            )),
            "ignore_oob" | "cp_mask" => Some(("partial copies", "whole copies are")),
            _ => None,
        };
        if let Some((what, why)) = refused {
            return Err(Diagnostic::unsupported(
                *s,
                format!(".{q}"),
                format!("a copy without `.{q}`"),
            )
            .with_note(format!("{what} are not modelled: {why}")));
        }
        out.push((q.clone(), *s));
    }
    Ok((out, multicast))
}

/// An integer operand.
fn int_of(op: &RawOperand, what: &str) -> Result<i64, Diagnostic> {
    match op {
        RawOperand::Int(v, _) => Ok(*v),
        RawOperand::Name(n, s) => Err(Diagnostic::unsupported(
            *s,
            n,
            format!("{what} written as an integer (a register is not)"),
        )
        .with_note("a copy's elements must be known when the test is read (computed addresses are not modelled)")),
        other => Err(Diagnostic::expected(other.span(), what.to_string(), other.shown())),
    }
}

/// The destination CTAs' operands of a multicast copy: `{a, b}` with the
/// mask `mask`, checked against each listed location's CTA rank (`boxes`:
/// the names are buffers whose elements `a[0]`, ... are checked).
fn destinations(
    r: &mut dyn Resolver,
    list: &RawOperand,
    mask: &RawOperand,
    mbarrier: bool,
    boxes: bool,
) -> Result<Vec<(String, Span)>, Diagnostic> {
    let what = if mbarrier {
        "the destination CTAs' mbarriers `{bar0, bar1, ...}`, in the order of the mask's bits"
    } else {
        "the destination CTAs' buffers `{s0, s1, ...}`, in the order of the mask's bits"
    };
    let RawOperand::Vector(items, lspan) = list else {
        return Err(Diagnostic::expected(list.span(), what, list.shown()).with_note(
            "a litmus location has no offset: a multicast copy lists the location it writes in each CTA",
        ));
    };
    let m = int_of(mask, "the ctaMask")?;
    if !(1..=0xffff).contains(&m) {
        return Err(Diagnostic::expected(
            mask.span(),
            "a 16-bit ctaMask naming at least one CTA",
            m.to_string(),
        ));
    }
    let ranks: Vec<u32> = (0..16).filter(|b| m & (1 << b) != 0).collect();
    if ranks.len() != items.len() {
        return Err(Diagnostic::expected(
            *lspan,
            format!(
                "{} location{} (the mask {m} names CTA rank{} {})",
                ranks.len(),
                if ranks.len() == 1 { "" } else { "s" },
                if ranks.len() == 1 { "" } else { "s" },
                ranks
                    .iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            items.len().to_string(),
        ));
    }
    let mut out = Vec::new();
    for (item, &rank) in items.iter().zip(&ranks) {
        let RawOperand::Name(n, s) = item else {
            return Err(Diagnostic::expected(item.span(), what, item.shown()));
        };
        let probe = if boxes { element(n, 0) } else { n.clone() };
        let id = match r.address(&probe) {
            Some(id) => id,
            None => r.unknown_address(&probe, *s)?,
        };
        r.check_space(id, Some(crate::ir::SpaceQual::SharedCluster), mbarrier, *s)?;
        match r.cluster_rank(id) {
            Some(k) if k == rank => {}
            Some(k) => {
                return Err(Diagnostic::expected(
                    *s,
                    format!(
                        "a location in the CTA of cluster rank {rank} (bit {rank} of the mask)"
                    ),
                    format!("`{probe}`, in the CTA of rank {k}"),
                ));
            }
            None => {
                return Err(Diagnostic::expected(
                    *s,
                    "a location in the shared memory of a CTA of the cluster",
                    format!("`{probe}`"),
                ));
            }
        }
        out.push((n.clone(), *s));
    }
    Ok(out)
}

/// `cp.async.bulk.<dst>.<src>.mbarrier::complete_tx::bytes.multicast::cluster
/// {d0, d1}, [src], size, {bar0, bar1}, ctaMask`.
fn multicast_plan(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Plan, Diagnostic> {
    let (parts, multicast) = element_parts(raw, 3, false)?;
    debug_assert!(multicast);
    if !parts.iter().any(|p| p.0 == "mbarrier::complete_tx::bytes")
        || !parts.iter().any(|p| p.0 == "global")
    {
        return Err(Diagnostic::expected(
            raw.parts[0].1.to(end_of(raw)),
            "a multicast copy from `.global` into `.shared::cluster` with `.mbarrier::complete_tx::bytes`",
            "another form",
        ));
    }
    if raw.operands.len() != 5 {
        return Err(Diagnostic::expected(
            raw.span,
            "5 operands ({d0, d1, ...}, [src], size, {bar0, bar1, ...}, ctaMask)",
            raw.operands.len().to_string(),
        ));
    }
    let dsts = destinations(r, &raw.operands[0], &raw.operands[4], false, false)?;
    let bars = destinations(r, &raw.operands[3], &raw.operands[4], true, false)?;
    let copies = dsts
        .into_iter()
        .zip(bars)
        .map(|((d, ds), (b, bs))| {
            vec![
                bracketed(d, ds),
                raw.operands[1].clone(),
                raw.operands[2].clone(),
                bracketed(b, bs),
            ]
        })
        .collect();
    Ok(Plan { parts, copies })
}

/// `cp.async.bulk.tensor.Nd.<dst>.<src>{.tile}.<completion>{.multicast::cluster}`
/// and `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<op>{.tile}.bulk_group`.
fn tensor_plan(raw: &RawInstr, r: &mut dyn Resolver) -> Result<Plan, Diagnostic> {
    let reduce = raw.parts[1].0 == "reduce";
    let t = if reduce { 4 } else { 3 };
    let Some((dim, dspan)) = raw.parts.get(t + 1) else {
        return Err(Diagnostic::expected(
            end_of(raw),
            "the tensor's rank (`.1d` to `.5d`)",
            "none",
        ));
    };
    let rank = match dim.as_str() {
        "1d" => 1,
        "2d" => 2,
        "3d" => 3,
        "4d" => 4,
        "5d" => 5,
        _ => {
            return Err(Diagnostic::expected(
                *dspan,
                "the tensor's rank (`.1d` to `.5d`)",
                format!("`.{dim}`"),
            ));
        }
    };
    // The element copy's mnemonic: the same without `.tensor.Nd`.
    let mut trimmed = raw.clone();
    trimmed.parts.drain(t..t + 2);
    let (parts, multicast) = element_parts(&trimmed, t, true)?;
    let load = parts.get(t).is_some_and(|p| p.0.starts_with("shared"));
    let mbar = parts.iter().any(|p| p.0 == "mbarrier::complete_tx::bytes");
    if multicast && !load {
        return Err(Diagnostic::expected(
            raw.span,
            "`.multicast::cluster` on a load into shared memory",
            "a multicast store",
        ));
    }
    let (map_op, other, bars) = if load {
        let want = if multicast { 4 } else { 3 };
        if raw.operands.len() != want || !mbar {
            return Err(Diagnostic::expected(
                raw.span,
                if multicast {
                    "`.mbarrier::complete_tx::bytes` and 4 operands ({d0, d1, ...}, [tensorMap, {coords}], {bar0, bar1, ...}, ctaMask)"
                } else {
                    "`.mbarrier::complete_tx::bytes` and 3 operands ([dst], [tensorMap, {coords}], [mbar])"
                },
                format!("{} operands", raw.operands.len()),
            ));
        }
        (&raw.operands[1], &raw.operands[0], Some(&raw.operands[2]))
    } else {
        if raw.operands.len() != 2 || mbar {
            return Err(Diagnostic::expected(
                raw.span,
                "`.bulk_group` and 2 operands ([tensorMap, {coords}], [src])",
                format!("{} operands", raw.operands.len()),
            ));
        }
        (&raw.operands[0], &raw.operands[1], None)
    };
    let RawOperand::Tensor(map_name, coords, mspan) = map_op else {
        return Err(Diagnostic::expected(
            map_op.span(),
            "a tensor map and the box's coordinates `[tensorMap, {c0, ...}]`",
            map_op.shown(),
        ));
    };
    let Some(map) = r.tensor_map(map_name) else {
        return Err(Diagnostic::expected(
            *mspan,
            "a tensor map declared in the init block (`tm @ tensormap g dims 4 box 2;`)",
            format!("`{map_name}`"),
        ));
    };
    if map.dims.len() != rank {
        return Err(Diagnostic::expected(
            *dspan,
            format!(
                "`.{}d` (map `{}` has rank {})",
                map.dims.len(),
                map.name,
                map.dims.len()
            ),
            format!("`.{dim}`"),
        ));
    }
    let mut cs = Vec::new();
    for c in coords {
        cs.push(int_of(c, "a tensor coordinate")?);
    }
    let elems = map
        .box_at(&cs)
        .map_err(|want| Diagnostic::expected(*mspan, want, format!("coordinates {cs:?}")))?;
    let size = RawOperand::Int(map.elem as i64, *mspan);
    let mut copies = Vec::new();
    if load {
        let dests: Vec<(String, Span, String, Span)> = if multicast {
            let ds = destinations(r, other, &raw.operands[3], false, true)?;
            let bs = destinations(r, bars.unwrap(), &raw.operands[3], true, false)?;
            ds.into_iter()
                .zip(bs)
                .map(|((d, dsp), (b, bsp))| (d, dsp, b, bsp))
                .collect()
        } else {
            let (RawOperand::Bracketed(d, dsp), RawOperand::Bracketed(b, bsp)) =
                (other, bars.unwrap())
            else {
                return Err(Diagnostic::expected(
                    other.span(),
                    "`[dst], [tensorMap, {coords}], [mbar]`",
                    "another operand form",
                ));
            };
            vec![(d.clone(), *dsp, b.clone(), *bsp)]
        };
        for (d, dsp, b, bsp) in dests {
            for (k, &g) in elems.iter().enumerate() {
                copies.push(vec![
                    bracketed(element(&d, k as u64), dsp),
                    bracketed(element(&map.global, g), *mspan),
                    size.clone(),
                    bracketed(b.clone(), bsp),
                ]);
            }
        }
    } else {
        let RawOperand::Bracketed(s, ssp) = other else {
            return Err(Diagnostic::expected(
                other.span(),
                "the shared-memory source `[src]`",
                other.shown(),
            ));
        };
        for (k, &g) in elems.iter().enumerate() {
            copies.push(vec![
                bracketed(element(&map.global, g), *mspan),
                bracketed(element(s, k as u64), *ssp),
                size.clone(),
            ]);
        }
    }
    Ok(Plan { parts, copies })
}

/// A tensor map's box against its tensor (both front ends: the litmus
/// declaration and the kernel launch's `--tensormap`): one size per
/// dimension, none larger than the tensor's. Errors point at `span`, the box.
pub fn check_box(dims: &[u64], boxdims: &[u64], span: Span) -> Result<(), Diagnostic> {
    if boxdims.len() != dims.len() {
        return Err(Diagnostic::expected(
            span,
            format!("{} box sizes (one per dimension of the tensor)", dims.len()),
            boxdims.len().to_string(),
        ));
    }
    if let Some(k) = (0..dims.len()).find(|&k| boxdims[k] > dims[k]) {
        return Err(Diagnostic::expected(
            span,
            format!(
                "a box no larger than the tensor in dimension {k} ({})",
                dims[k]
            ),
            boxdims[k].to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(dims: &[u64], boxdims: &[u64]) -> TensorMap {
        TensorMap {
            name: "tm".into(),
            global: "g".into(),
            dims: dims.to_vec(),
            boxdims: boxdims.to_vec(),
            elem: 4,
            span: Span::new(0, 1),
        }
    }

    #[test]
    fn boxes_are_laid_out_dimension_zero_first() {
        assert_eq!(map(&[8], &[2]).box_at(&[3]).unwrap(), vec![3, 4]);
        // A 2x2 box at (1, 2) of a 4-wide tensor: rows 2 and 3, columns 1 and 2.
        assert_eq!(
            map(&[4, 4], &[2, 2]).box_at(&[1, 2]).unwrap(),
            vec![9, 10, 13, 14]
        );
        assert!(map(&[4, 4], &[2, 2]).box_at(&[3, 0]).is_err());
        assert!(map(&[4, 4], &[2, 2]).box_at(&[-1, 0]).is_err());
        assert!(map(&[4, 4], &[2, 2]).box_at(&[0]).is_err());
    }

    #[test]
    fn element_names_continue_an_index() {
        assert_eq!(element("s", 2), "s[2]");
        assert_eq!(element("s[3]", 2), "s[5]");
    }
}
