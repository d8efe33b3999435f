//! Instructions as written, shared by every instruction decoder: the raw
//! mnemonic and operands ([`RawInstr`], [`parse_raw`]), the classification
//! of dotted modifiers (`classify`), and the operand helpers that resolve
//! registers, values and addresses through a dialect's [`Resolver`].
//!
//! Imports flow one way: `raw` ← `instr` (the generic decoder) → `async_instr`
//! (asynchronous-proxy, mbarrier and cluster instructions), and `raw` ←
//! `async_instr`.

use super::diag::{Diagnostic, Span};
use super::lexer::{Cursor, Tok};
use crate::ir::{AddrId, Operand, RegId, RmwOp, Scope, Sem, SpaceQual, Value};

/// One operand as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawOperand {
    /// A bare name: register, location or label, depending on position.
    Name(String, Span),
    /// `[name]`: always an address.
    Bracketed(String, Span),
    /// An integer.
    Int(Value, Span),
    /// `{a, b, ...}`: the registers or integers of a vector access's elements.
    Vector(Vec<RawOperand>, Span),
    /// `[tensorMap, {c0, c1, ...}]`: a tensor map and the coordinates of a
    /// box in it (`cp.async.bulk.tensor`; `litmus::tensor`).
    Tensor(String, Vec<RawOperand>, Span),
}

impl RawOperand {
    /// Where it was written.
    pub fn span(&self) -> Span {
        match self {
            RawOperand::Name(_, s)
            | RawOperand::Bracketed(_, s)
            | RawOperand::Int(_, s)
            | RawOperand::Vector(_, s)
            | RawOperand::Tensor(_, _, s) => *s,
        }
    }
    /// The operand as written, quoted for messages.
    pub(super) fn shown(&self) -> String {
        match self {
            RawOperand::Name(n, _) => format!("`{n}`"),
            RawOperand::Bracketed(n, _) => format!("`[{n}]`"),
            RawOperand::Int(v, _) => format!("`{v}`"),
            RawOperand::Vector(..) => "a vector operand `{...}`".to_string(),
            RawOperand::Tensor(n, ..) => format!("`[{n}, {{...}}]`"),
        }
    }
}

/// An instruction as written, before names are resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawInstr {
    /// The mnemonic split at dots, each part with its span (the first is the opcode).
    pub parts: Vec<(String, Span)>,
    /// Operands in order.
    pub operands: Vec<RawOperand>,
    /// mixedproxy's `ld r, [x] == v` precondition.
    pub precondition: Option<(Value, Span)>,
    /// The whole instruction.
    pub span: Span,
}

/// Parse an integer literal (decimal or hex, optionally negative).
/// Decimal literals are signed 64-bit values (`-9223372036854775808` is
/// the smallest); hex literals are 64-bit patterns (`0xffffffffffffffff` is
/// -1), so every value the printer writes in decimal reads back.
pub fn parse_int(text: &str, span: Span) -> Result<Value, Diagnostic> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    let hex = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"));
    let magnitude = match hex {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => digits.parse::<u64>().ok(),
    };
    let v = match magnitude {
        Some(m) if hex.is_some() => Some(m as i64),
        Some(m) if m <= i64::MAX as u64 => Some(m as i64),
        Some(m) if neg && m == 1 << 63 => Some(i64::MIN),
        _ => None,
    };
    match v {
        Some(v) => Ok(if neg { v.wrapping_neg() } else { v }),
        None => Err(Diagnostic::expected(
            span,
            "an integer that fits in 64 bits",
            format!("`{text}`"),
        )),
    }
}

/// The largest CTA, cluster or GPU number a test may use. Tests use small
/// numbers; the bound keeps every table indexed by them small and every
/// "next free number" computation far from overflow.
pub const MAX_PLACEMENT: u32 = 65535;

/// A CTA, cluster or GPU number (`0..=MAX_PLACEMENT`).
pub fn placement_number(text: &str, span: Span) -> Result<u32, Diagnostic> {
    match text.parse::<u32>() {
        Ok(n) if n <= MAX_PLACEMENT && !text.starts_with('+') => Ok(n),
        _ => Err(Diagnostic::expected(
            span,
            format!("a number between 0 and {MAX_PLACEMENT}"),
            format!("`{text}`"),
        )),
    }
}

/// Parse one instruction: a mnemonic word and operands up to the end of the cursor
/// (or up to a `;` / `|`, which is left unconsumed).
pub fn parse_raw(cur: &mut Cursor<'_, '_>) -> Result<RawInstr, Diagnostic> {
    let mn = cur.expect(Tok::Word, "an instruction")?;
    let mut parts = Vec::new();
    let mut off = 0;
    for p in mn.text.split('.') {
        let start = mn.span.start + off;
        parts.push((p.to_string(), Span::new(start, start + p.len())));
        off += p.len() + 1;
    }
    if parts[0].0.is_empty() {
        return Err(Diagnostic::expected(mn.span, "an instruction", mn.quoted()));
    }
    let mut operands = Vec::new();
    let mut precondition = None;
    let stop = |c: &Cursor| c.is_done() || c.at(Tok::Semi) || c.at(Tok::Pipe);
    if !stop(cur) {
        loop {
            let t = cur.bump().ok_or_else(|| cur.error("an operand"))?;
            let op = match t.tok {
                Tok::Word if !t.text.contains('.') => RawOperand::Name(t.text.to_string(), t.span),
                Tok::Int => RawOperand::Int(parse_int(t.text, t.span)?, t.span),
                Tok::LBrack => {
                    let name = cur.expect(Tok::Word, "an address name inside `[...]`")?;
                    if name.text.contains('.') {
                        return Err(Diagnostic::expected(
                            name.span,
                            "an address name",
                            name.quoted(),
                        ));
                    }
                    if cur.eat(Tok::Comma).is_some() {
                        // `[tensorMap, {c0, c1}]`: a tensor copy's box.
                        cur.expect(Tok::LBrace, "`{` opening the tensor coordinates")?;
                        let mut coords = Vec::new();
                        loop {
                            let e = cur.bump().ok_or_else(|| {
                                cur.error("a coordinate (an integer) of the tensor `{...}`")
                            })?;
                            coords.push(match e.tok {
                                Tok::Int => RawOperand::Int(parse_int(e.text, e.span)?, e.span),
                                Tok::Word if !e.text.contains(['.', '[']) => {
                                    RawOperand::Name(e.text.to_string(), e.span)
                                }
                                _ => {
                                    return Err(Diagnostic::expected(
                                        e.span,
                                        "a coordinate (an integer) of the tensor `{...}`",
                                        e.quoted(),
                                    ));
                                }
                            });
                            if cur.eat(Tok::Comma).is_some() {
                                continue;
                            }
                            cur.expect(Tok::RBrace, "`,` or `}` closing the coordinates")?;
                            break;
                        }
                        let close = cur.expect(Tok::RBrack, "`]`")?;
                        RawOperand::Tensor(name.text.to_string(), coords, t.span.to(close.span))
                    } else {
                        let close = cur.expect(Tok::RBrack, "`]`")?;
                        RawOperand::Bracketed(name.text.to_string(), t.span.to(close.span))
                    }
                }
                Tok::LBrace => {
                    // A vector access's elements: `{r0, r1}` or `{1, 2}`.
                    let mut elems = Vec::new();
                    loop {
                        let e = cur.bump().ok_or_else(|| {
                            cur.error("a register or an integer of the vector `{...}`")
                        })?;
                        elems.push(match e.tok {
                            Tok::Word if !e.text.contains(['.', '[']) => {
                                RawOperand::Name(e.text.to_string(), e.span)
                            }
                            Tok::Int => RawOperand::Int(parse_int(e.text, e.span)?, e.span),
                            _ => {
                                return Err(Diagnostic::expected(
                                    e.span,
                                    "a register or an integer of the vector `{...}`",
                                    e.quoted(),
                                ));
                            }
                        });
                        if cur.eat(Tok::Comma).is_some() {
                            continue;
                        }
                        let close = cur.expect(Tok::RBrace, "`,` or `}` closing the vector")?;
                        break RawOperand::Vector(elems, t.span.to(close.span));
                    }
                }
                _ => {
                    return Err(Diagnostic::expected(
                        t.span,
                        "an operand (a register, a location, `[address]` or an integer)",
                        t.quoted(),
                    ));
                }
            };
            operands.push(op);
            if cur.eat(Tok::Comma).is_some() {
                continue;
            }
            if cur.eat(Tok::EqEq).is_some() {
                let v = cur.expect(Tok::Int, "the value the load must return")?;
                precondition = Some((parse_int(v.text, v.span)?, v.span));
            }
            if stop(cur) {
                break;
            }
            return Err(cur.error("`,` or the end of the instruction"));
        }
    }
    let span = mn.span.to(cur.prev_span());
    Ok(RawInstr {
        parts,
        operands,
        precondition,
        span,
    })
}

/// Name resolution provided by a dialect's parser.
pub trait Resolver {
    /// The register named `name` (created on first use).
    fn register(&mut self, name: &str, span: Span) -> Result<RegId, Diagnostic>;
    /// The address named `name`, if there is one.
    fn address(&self, name: &str) -> Option<AddrId>;
    /// Declare-on-use policy for unknown address names.
    fn unknown_address(&mut self, name: &str, span: Span) -> Result<AddrId, Diagnostic>;
    /// Check that this thread may access `addr` with state-space qualifier
    /// `qual` (`None`: generic addressing), and that mbarrier objects are used
    /// by mbarrier operations only (`mbarrier` says which this is).
    fn check_space(
        &self,
        addr: AddrId,
        qual: Option<SpaceQual>,
        mbarrier: bool,
        span: Span,
    ) -> Result<(), Diagnostic>;
    /// The tensor map declared as `name` (`NAME @ tensormap ...`), if any.
    fn tensor_map(&self, _name: &str) -> Option<super::tensor::TensorMap> {
        None
    }
    /// The rank in its cluster (`%cluster_ctarank`) of the CTA whose shared
    /// memory holds `addr`, if it has one.
    fn cluster_rank(&self, _addr: AddrId) -> Option<u32> {
        None
    }
    /// Whether `addr` names a tensor-memory cell (`NAME @ tmem cta N`).
    fn is_tensor_memory(&self, _addr: AddrId) -> bool {
        false
    }
    /// Check that this thread may access tensor-memory cell `addr` (its
    /// own CTA's tensor memory).
    fn check_tensor_cta(&self, _addr: AddrId, _span: Span) -> Result<(), Diagnostic> {
        Ok(())
    }
}

/// A modifier after the opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Modifier {
    Sem(Sem),
    Sc,
    Scope(Scope),
    /// `.gl` of `membar.gl`.
    Gl,
    Space(Space),
    Type,
    Cache,
    Rmw(RmwOp),
    Aligned,
    Proxy,
    Cta,
    Sync,
    Arrive,
}

/// State-space modifiers: `.global`, the shared windows, and `.const` (constant loads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Space {
    Qual(SpaceQual),
    Const,
}

pub(super) fn classify(opcode: &str, part: &str) -> Option<Modifier> {
    use Modifier::*;
    Some(match part {
        "weak" => Sem(crate::ir::Sem::Weak),
        "relaxed" => Sem(crate::ir::Sem::Relaxed),
        "acquire" => Sem(crate::ir::Sem::Acquire),
        "release" => Sem(crate::ir::Sem::Release),
        "acq_rel" => Sem(crate::ir::Sem::AcqRel),
        "volatile" => Sem(crate::ir::Sem::Volatile),
        "sc" => Sc,
        "cta" if opcode == "bar" || opcode == "barrier" => Cta,
        "cta" => Scope(crate::ir::Scope::Cta),
        "cluster" => Scope(crate::ir::Scope::Cluster),
        "gpu" => Scope(crate::ir::Scope::Gpu),
        "sys" => Scope(crate::ir::Scope::Sys),
        "gl" => Gl,
        "global" => Space(self::Space::Qual(SpaceQual::Global)),
        "shared" => Space(self::Space::Qual(SpaceQual::Shared)),
        "shared::cta" => Space(self::Space::Qual(SpaceQual::SharedCta)),
        "shared::cluster" => Space(self::Space::Qual(SpaceQual::SharedCluster)),
        "const" => Space(self::Space::Const),
        "u8" | "u16" | "u32" | "u64" | "s8" | "s16" | "s32" | "s64" | "b8" | "b16" | "b32"
        | "b64" => Type,
        "ca" | "cg" | "cs" | "lu" | "cv" | "wb" | "wt" => Cache,
        "add" => Rmw(RmwOp::Add),
        "sub" => Rmw(RmwOp::Sub),
        "exch" => Rmw(RmwOp::Exch),
        "cas" => Rmw(RmwOp::Cas),
        "inc" => Rmw(RmwOp::Inc),
        "dec" => Rmw(RmwOp::Dec),
        "and" => Rmw(RmwOp::And),
        "or" => Rmw(RmwOp::Or),
        "xor" => Rmw(RmwOp::Xor),
        "min" => Rmw(RmwOp::Min),
        "max" => Rmw(RmwOp::Max),
        "aligned" => Aligned,
        "proxy" => Proxy,
        "sync" => Sync,
        "arrive" => Arrive,
        _ => return None,
    })
}

/// Features that are real PTX but that ptxmc does not model yet, with the reason.
fn unsupported_modifier(part: &str) -> Option<&'static str> {
    Some(match part {
        "local" | "param" => "thread-private state spaces have no memory-model behaviour to check",
        "nc" => {
            "non-coherent loads (`ld.global.nc`) use the texture path; write `tld` with a texture alias"
        }
        "mmio" => "`.mmio` accesses are not modelled",
        "v2" | "v4" | "v8" => {
            "vector accesses are modelled on `ld` and `st` only (docs/litmus-format.md)"
        }
        "b128" => {
            "128-bit scalar accesses are not modelled (a location holds at most 64 bits); \
             a `.v2.b64` vector is two 64-bit accesses"
        }
        "f16" | "f16x2" | "bf16" | "bf16x2" | "f32" | "f64" => {
            "floating-point operations are not modelled"
        }
        "tensormap" => "tensor-map accesses (`cp.async.bulk.tensor`) are not modelled",
        "multicast::cluster" => "multicast copies are not modelled",
        "L2::cache_hint"
        | "L2::64B"
        | "L2::128B"
        | "L2::256B"
        | "L1::evict_normal"
        | "L1::evict_unchanged"
        | "L1::evict_first"
        | "L1::evict_last"
        | "L1::no_allocate" => "cache-eviction hints are not accepted (they take extra operands)",
        "red" => "`bar.red` (barrier reductions) is not modelled",
        "warp" => "the only warp-level barrier is `bar.warp.sync membermask` (docs/warps.md)",
        _ => return None,
    })
}

pub(super) fn mod_error(opcode: &str, part: &str, span: Span, allowed: &str) -> Diagnostic {
    if let Some(why) = unsupported_modifier(part) {
        return Diagnostic::unsupported(span, format!(".{part}"), allowed.to_string())
            .with_note(why);
    }
    Diagnostic::expected(span, allowed.to_string(), format!("`.{part}`"))
        .with_label(format!("not a modifier of `{opcode}`"))
}

pub(super) fn expect_operands(raw: &RawInstr, n: &[usize], shape: &str) -> Result<(), Diagnostic> {
    if n.contains(&raw.operands.len()) {
        return Ok(());
    }
    let span = raw
        .operands
        .get(n.iter().copied().max().unwrap_or(0))
        .map_or(raw.span, |o| o.span());
    Err(Diagnostic::expected(
        span,
        format!("operands `{shape}`"),
        format!(
            "{} operand{}",
            raw.operands.len(),
            if raw.operands.len() == 1 { "" } else { "s" }
        ),
    )
    .with_label(format!("`{}` takes `{shape}`", raw.parts[0].0)))
}

pub(super) fn register(r: &mut dyn Resolver, op: &RawOperand) -> Result<RegId, Diagnostic> {
    match op {
        RawOperand::Name(n, s) if r.address(n).is_none() => r.register(n, *s),
        other => Err(Diagnostic::expected(
            other.span(),
            "a register",
            match other {
                RawOperand::Name(n, _) => format!("location `{n}`"),
                o => o.shown(),
            },
        )),
    }
}

pub(super) fn value(r: &mut dyn Resolver, op: &RawOperand) -> Result<Operand, Diagnostic> {
    match op {
        RawOperand::Int(v, _) => Ok(Operand::Imm(*v)),
        RawOperand::Name(n, s) if r.address(n).is_none() => Ok(Operand::Reg(r.register(n, *s)?)),
        other => Err(Diagnostic::expected(
            other.span(),
            "a register or an integer",
            match other {
                RawOperand::Name(n, _) => format!("location `{n}`"),
                o => o.shown(),
            },
        )
        .with_label("ptxmc does not model storing or computing with addresses")),
    }
}

/// Resolve an address operand with state-space qualifier `space`
/// (`mbarrier`: by an mbarrier operation). The proxy of the access comes
/// from the instruction (`tld` reads through the texture proxy whatever the
/// name); the name says which virtual address, and so which physical
/// location, the access reaches (Dat3M's reading; `docs/litmus-format.md`).
pub(super) fn address(
    r: &mut dyn Resolver,
    op: &RawOperand,
    space: Option<SpaceQual>,
    mbarrier: bool,
) -> Result<AddrId, Diagnostic> {
    let (name, span) = match op {
        RawOperand::Name(n, s) | RawOperand::Bracketed(n, s) => (n, *s),
        RawOperand::Int(..) | RawOperand::Vector(..) | RawOperand::Tensor(..) => {
            return Err(Diagnostic::expected(
                op.span(),
                "an address (a location name)",
                op.shown(),
            ));
        }
    };
    let id = match r.address(name) {
        Some(id) => id,
        None => r.unknown_address(name, span)?,
    };
    r.check_space(id, space, mbarrier, span)?;
    Ok(id)
}
