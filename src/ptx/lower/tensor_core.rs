//! Tensor-core instructions in kernels: Hopper's `wgmma.*` and Blackwell's
//! `tcgen05.*` as `nvcc` emits them, lowered to the IR the litmus dialect
//! gives them ([`crate::ir::Instr::Tensor`]; `docs/tensor-core.md`,
//! `docs/kernels.md` "Tensor cores").
//!
//! Real PTX names memory through values computed in registers, which the
//! front end's concrete evaluation of each thread knows:
//!
//! * a **shared-memory matrix descriptor** (a 64-bit register) carries its
//!   tile's start address in bits 0–13 as `(addr & 0x3FFFF) >> 4`. A shared
//!   variable's address used as a number (`and`, `shr`, `or` of it) is its
//!   address in the shared window ([`WINDOW_BASE`], each variable aligned to
//!   [`WINDOW_ALIGN`]), so the descriptor's start field names a variable and
//!   an offset. As in the litmus dialect, one location stands for the whole
//!   operand tile: the cell at the tile's start. Another access inside the
//!   tile's bytes (rows × 32 bytes) is refused by name after lowering
//!   ([`Ctx::check_tiles`]), never read as part of a tile it is not in.
//! * a **tensor-memory address** comes from `tcgen05.alloc`, which writes it
//!   to a shared word. ptxmc does not model allocation as memory: every CTA's
//!   allocation gives [`TMEM_BASE`], and a 32-bit `ld.shared` of the word an
//!   earlier-lowered thread's `tcgen05.alloc` wrote reads that constant
//!   ([`ThreadLower::tmem_slot`]); the allocation's ordering against that
//!   load is not checked. Each tensor-memory address an instruction names is
//!   one cell of its CTA's tensor memory (`tmem[ADDR]`).
//! * **register fragments** (`{%f1, ..., %f4}` of a `wgmma.mma_async`,
//!   `{%r1}` of a `tcgen05.ld`) are one IR register, as the dialect's one
//!   register per fragment: every register of the fragment reads the value
//!   the wait that completes the operation delivers.
//!
//! Once operands are locations, registers and constants, the instruction is
//! decoded by the dialect's own decoders (`litmus::tcgen`), so what the
//! dialect refuses (`cta_group::2`, `.ws`, block scaling, `tcgen05.shift`,
//! a register `tcgen05.st`, ...) is refused here with the same words. A
//! wait is followed by the results it delivers ([`results_of_wait`]), as the
//! litmus parsers add them.

use std::collections::{HashMap, HashSet};

use super::{Ctx, Env, Region, ThreadLower, Val, bulk::MBARRIER_BYTES, refuse};
use crate::ir::tensor_core::{TcOp, results_of_wait};
use crate::ir::{Address, AddressKind, Instr, LocKind, Location, Register, Space};
use crate::litmus::raw::{RawInstr, RawOperand, Resolver};
use crate::litmus::{Diagnostic, Span};
use crate::ptx::ast::{Instr as PInstr, Opnd, VarSpace};

/// Where the first shared variable sits in the shared window when its
/// address is used as a number (Hopper and Blackwell reserve the window's
/// first kilobyte).
pub const WINDOW_BASE: i64 = 1024;
/// Alignment of each shared variable in the window (the strictest a matrix
/// descriptor's swizzle modes ask for).
pub const WINDOW_ALIGN: i64 = 1024;
/// The tensor-memory address (lane 0, column 0) every CTA's
/// `tcgen05.alloc` gives.
pub const TMEM_BASE: i64 = 0;
/// Bytes of one row of a dense MMA operand tile: K elements of every kind
/// (16 × f16, 8 × tf32, 32 × 8-bit) are 32 bytes.
const ROW_BYTES: u64 = 32;

/// What every thread's lowering shares about tensor cores.
#[derive(Default)]
pub(super) struct Shared {
    /// Shared words a `tcgen05.alloc` wrote: (variable, CTA, byte offset).
    slots: HashSet<(usize, u32, i64)>,
    /// Tensor-memory cells: (CTA, address) → IR address.
    tmem: HashMap<(u32, i64), usize>,
    /// Operand tiles named by descriptors, checked after lowering.
    tiles: Vec<Tile>,
}

/// An operand tile a descriptor named: its bytes and the cell standing for it.
struct Tile {
    region: Region,
    off: i64,
    bytes: u64,
    span: Span,
}

/// What one thread's lowering keeps about tensor cores.
#[derive(Default)]
pub(super) struct Lane {
    /// The IR register of each fragment → the PTX registers of the fragment.
    frags: HashMap<usize, Vec<u32>>,
    /// Operations with a register result that no wait has completed yet,
    /// in issue order ([`ThreadLower::check_pending`]).
    pending: Vec<PendingOp>,
    /// The PTX registers this thread accessed since its last `wgmma.fence`
    /// ([`ThreadLower::check_fence`]), each with its first access since.
    touched: HashMap<u32, Touch>,
    /// Whether the function being lowered has a `wgmma.mma_async` (keyed by
    /// the function's address): only then are accesses recorded.
    wgmma_fn: Option<(usize, bool)>,
}

/// An access to a register since the thread's last `wgmma.fence`.
struct Touch {
    /// The accessing instruction's mnemonic.
    mnemonic: String,
    /// The shape (`m64n8k16`) when the access is a `wgmma.mma_async`'s
    /// accumulator (the ISA's exception for MMAs of one shape).
    mma_shape: Option<String>,
}

/// A `wgmma.mma_async` or `tcgen05.ld` issued and not completed yet.
struct PendingOp {
    /// Its instruction in the lowered code.
    pc: usize,
    /// The PTX registers of its fragment.
    regs: Vec<u32>,
    /// Its mnemonic, as written.
    mnemonic: String,
    /// `wgmma.mma_async` (else `tcgen05.ld`).
    wgmma: bool,
}

/// Every register an operand names (inside vectors, addresses, pairs).
fn named_regs(o: &Opnd, out: &mut Vec<(u32, Span)>) {
    match o {
        Opnd::Reg(r, s) => out.push((*r, *s)),
        Opnd::Addr { base: Some(b), .. } => named_regs(b, out),
        Opnd::Vector(v, _) | Opnd::List(v, _) => v.iter().for_each(|e| named_regs(e, out)),
        Opnd::Not(b, _) => named_regs(b, out),
        Opnd::Pair(a, b, _) => {
            named_regs(a, out);
            named_regs(b, out)
        }
        _ => {}
    }
}

fn round_up(v: i64, a: i64) -> i64 {
    (v + a - 1) / a * a
}

impl Ctx {
    /// The shared variables in window order with their window addresses.
    fn window(&self) -> impl Iterator<Item = (usize, i64)> + '_ {
        let mut at = WINDOW_BASE;
        self.vars
            .iter()
            .enumerate()
            .filter(|(_, v)| v.space == VarSpace::Shared)
            .map(move |(k, v)| {
                let here = at;
                at = round_up(at + v.bytes.max(1) as i64, WINDOW_ALIGN);
                (k, here)
            })
    }

    /// A shared variable's address used as a number: its window address.
    fn as_number(&self, v: &Val) -> Option<Val> {
        match v {
            Val::Ptr(Region::Var(k, _), off) if self.vars[*k].space == VarSpace::Shared => {
                let base = self.window().find(|&(j, _)| j == *k)?.1;
                Some(Val::Known(base.wrapping_add(*off)))
            }
            _ => None,
        }
    }

    /// `a op b` with shared addresses as numbers, where `op` is bit or
    /// multiplicative arithmetic on an address and a constant (a matrix
    /// descriptor's `(addr & 0x3FFFF) >> 4`); `None` otherwise.
    pub(super) fn numbers(&self, op: &str, a: &Val, b: &Val) -> Option<(Val, Val)> {
        if !matches!(
            op,
            "and" | "or" | "xor" | "shl" | "shr" | "mul" | "div" | "rem" | "add" | "sub"
        ) {
            return None;
        }
        let num = |v: &Val| match v {
            Val::Known(_) => Some(v.clone()),
            _ => self.as_number(v),
        };
        let (x, y) = (num(a)?, num(b)?);
        (x != *a || y != *b).then_some((x, y))
    }

    /// The shared variable and offset at window address `addr`.
    fn window_var(&self, addr: i64) -> Option<(usize, i64)> {
        self.window()
            .find(|&(k, base)| addr >= base && addr < base + self.vars[k].bytes as i64)
            .map(|(k, base)| (k, addr - base))
    }

    /// Refuse an access inside an operand tile other than the tile's own
    /// cell: one location stands for the tile (`docs/tensor-core.md` §2), so
    /// a write to another of its elements would not reach the MMA.
    pub(super) fn check_tiles(&self) -> Result<(), Diagnostic> {
        for t in &self.tc.tiles {
            let end = t.off + t.bytes as i64;
            let other = self
                .cells
                .iter()
                .map(|(&(r, o), &(a, s))| (r, o, a, s))
                .filter(|&(r, o, _, s)| {
                    r == t.region && o != t.off && o < end && t.off < o + s as i64
                })
                .map(|(_, o, a, s)| (o, a, s))
                .min();
            if let Some((o, a, s)) = other {
                return Err(refuse(
                    t.span,
                    format!(
                        "an access to `{}` (bytes {o}..{}), inside the operand tile this descriptor names (bytes {}..{end} of `{}`)",
                        self.addresses[a].name,
                        o + s as i64,
                        t.off,
                        self.var_label(t.region),
                    ),
                    "one location stands for a whole operand tile, its first element (docs/tensor-core.md §2): write and read the tile through its first element",
                ));
            }
        }
        Ok(())
    }

    fn var_label(&self, r: Region) -> String {
        match r {
            Region::Var(v, _) => self.vars[v].name.clone(),
            _ => "?".to_string(),
        }
    }

    /// The cell of tensor memory at `taddr` in CTA `cta`.
    fn tmem_cell(&mut self, cta: u32, taddr: i64) -> usize {
        if let Some(&a) = self.tc.tmem.get(&(cta, taddr)) {
            return a;
        }
        let mut name = format!("tmem[{taddr}]");
        if self.multi_cta {
            name = format!("{name}@cta{cta}");
        }
        let loc = self.locations.len();
        self.locations.push(Location {
            name: name.clone(),
            init: 0,
            space: Space::Shared { gpu: 0, cta },
            kind: LocKind::TensorMemory,
        });
        let a = self.addresses.len();
        self.addresses.push(Address {
            name: name.clone(),
            loc,
            va: a,
            kind: AddressKind::Generic,
            alias_of: None,
        });
        self.by_name.insert(name, a);
        self.tc.tmem.insert((cta, taddr), a);
        a
    }
}

/// Element bytes of an MMA operand type (`.f16`, `kind::tf32`, ...).
fn elem_bytes(ty: &str) -> Option<u64> {
    Some(match ty.strip_prefix("kind::").unwrap_or(ty) {
        "f16" | "bf16" => 2,
        "tf32" => 4,
        "e4m3" | "e5m2" | "s8" | "u8" | "i8" | "f8f6f4" | "b1" => 1,
        _ => return None,
    })
}

/// The litmus resolver of a tensor-core instruction: the thread's IR
/// registers, the locations made so far, which are tensor memory, and the
/// thread's CTA.
struct TcRes<'a> {
    regs: &'a mut Vec<Register>,
    names: &'a mut HashMap<String, usize>,
    ctx: &'a Ctx,
    cta: u32,
}

impl Resolver for TcRes<'_> {
    fn register(&mut self, name: &str, _span: Span) -> Result<usize, Diagnostic> {
        if let Some(&r) = self.names.get(name) {
            return Ok(r);
        }
        let r = self.regs.len();
        self.regs.push(Register {
            name: name.to_string(),
            init: 0,
        });
        self.names.insert(name.to_string(), r);
        Ok(r)
    }
    fn address(&self, name: &str) -> Option<usize> {
        self.ctx.by_name.get(name).copied()
    }
    fn unknown_address(&mut self, name: &str, span: Span) -> Result<usize, Diagnostic> {
        Err(Diagnostic::expected(
            span,
            "a location",
            format!("`{name}`"),
        ))
    }
    fn check_space(
        &self,
        _addr: usize,
        _qual: Option<crate::ir::SpaceQual>,
        _mbarrier: bool,
        _span: Span,
    ) -> Result<(), Diagnostic> {
        // Spaces were checked against the variable before.
        Ok(())
    }
    fn is_tensor_memory(&self, addr: usize) -> bool {
        self.ctx.locations[self.ctx.addresses[addr].loc].kind == LocKind::TensorMemory
    }
    fn check_tensor_cta(&self, addr: usize, span: Span) -> Result<(), Diagnostic> {
        match self.ctx.locations[self.ctx.addresses[addr].loc].space {
            Space::Shared { cta, .. } if cta == self.cta => Ok(()),
            _ => Err(Diagnostic::expected(
                span,
                "a tensor-memory cell of this thread's own CTA",
                format!("`{}`", self.ctx.addresses[addr].name),
            )),
        }
    }
}

impl ThreadLower<'_> {
    /// `wgmma.*` and `tcgen05.*`: operands resolved to locations, registers
    /// and constants, then decoded by the litmus dialect.
    pub(super) fn tensor_core(
        &mut self,
        i: &PInstr,
        parts: &[&str],
        env: &mut Env,
    ) -> Result<(), Diagnostic> {
        let spans = super::bulk::mnemonic_part_spans(i, parts);
        let raw_parts: Vec<(String, Span)> = parts
            .iter()
            .zip(&spans)
            .map(|(p, s)| (p.to_string(), *s))
            .collect();
        let family = parts[0];
        let what = parts.get(1).copied().unwrap_or("");
        let ops = &i.operands;
        if family == "tcgen05" {
            match what {
                "alloc" | "dealloc" | "relinquish_alloc_permit" => {
                    return self.allocation(i, parts, &spans, env);
                }
                _ => {}
            }
        }
        let mut operands: Vec<RawOperand> = Vec::with_capacity(ops.len());
        // The fragment the operation writes: (IR register, PTX registers).
        let mut frag: Option<(usize, Vec<u32>)> = None;
        match (family, what) {
            ("wgmma", "mma_async") if ops.len() >= 4 => {
                let shape = parts.iter().find(|p| {
                    p.strip_prefix('m')
                        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
                });
                let n = shape
                    .and_then(|p| p.split_once('n'))
                    .and_then(|(_, r)| r.split('k').next())
                    .and_then(|n| n.parse::<u64>().ok());
                let types: Vec<&str> = parts
                    .iter()
                    .copied()
                    .filter(|p| elem_bytes(p).is_some() || *p == "f32" || *p == "s32")
                    .collect();
                let (Some(n), [_, at, bt]) = (n, types.as_slice()) else {
                    return Err(Diagnostic::expected(
                        i.mn_span,
                        "a shape `.m64nNk16` and the types `.dtype.atype.btype`",
                        format!("`{}`", i.mnemonic),
                    ));
                };
                if let Opnd::Vector(..) = &ops[1] {
                    return Err(refuse(
                        ops[1].span(),
                        "`wgmma.mma_async` with A in registers",
                        "A and B are shared-memory descriptors; register operands of an MMA are opaque to the memory model and not modelled",
                    ));
                }
                let (x, regs) = self.fragment(&ops[0])?;
                let accumulate = self.flag(&ops[3], env, "scale-d")?;
                // Accumulating onto the fragment of an earlier MMA: the same register.
                let x = match (accumulate, env[regs[0] as usize].clone()) {
                    (true, Val::Dyn(y)) if self.tc.frags.contains_key(&y) => y,
                    _ => x,
                };
                operands.push(RawOperand::Name(self.regs[x].name.clone(), ops[0].span()));
                operands.push(self.tile(&ops[1], env, 64, elem_bytes(at).unwrap_or(2), "A")?);
                operands.push(self.tile(&ops[2], env, n, elem_bytes(bt).unwrap_or(2), "B")?);
                operands.push(RawOperand::Int(i64::from(accumulate), ops[3].span()));
                for o in &ops[4..] {
                    operands.push(self.raw_value(o, env, o.span())?);
                }
                frag = Some((x, regs));
            }
            ("tcgen05", "mma") if ops.len() >= 5 => {
                let kind = parts.iter().find(|p| p.starts_with("kind::")).copied();
                let elem = kind.and_then(elem_bytes).unwrap_or(1);
                let idesc = match self.value(&ops[3], env, 32)? {
                    Val::Known(k) => k,
                    _ => {
                        return Err(refuse(
                            ops[3].span(),
                            "an instruction descriptor computed from a loaded value",
                            "the descriptor gives the tile shapes (M, N), which must be known when the kernel is lowered",
                        ));
                    }
                };
                // PTX ISA, "Instruction descriptor": N >> 3 in bits 17-22, M >> 4 in bits 24-28.
                let n = ((idesc >> 17) & 0x3f) as u64 * 8;
                let m = ((idesc >> 24) & 0x1f) as u64 * 16;
                operands.push(self.tmem_operand(&ops[0], env)?);
                operands.push(self.tile(&ops[1], env, m.max(1), elem, "A")?);
                operands.push(self.tile(&ops[2], env, n.max(1), elem, "B")?);
                operands.push(RawOperand::Int(idesc, ops[3].span()));
                for o in &ops[4..ops.len() - 1] {
                    // disable-output-lane: the dialect refuses it by name.
                    operands.push(RawOperand::Int(0, o.span()));
                }
                let last = &ops[ops.len() - 1];
                let enable = self.flag(last, env, "enable-input-d")?;
                operands.push(RawOperand::Int(i64::from(enable), last.span()));
            }
            ("tcgen05", "cp") if ops.len() == 2 => {
                // `.RxCb`: R rows of C bits.
                let bytes = parts
                    .iter()
                    .find_map(|p| {
                        let (r, c) = p.split_once('x')?;
                        let c = c.strip_suffix('b')?;
                        Some(r.parse::<u64>().ok()? * c.parse::<u64>().ok()? / 8)
                    })
                    .unwrap_or(ROW_BYTES);
                operands.push(self.tmem_operand(&ops[0], env)?);
                operands.push(self.tile(
                    &ops[1],
                    env,
                    bytes.div_ceil(ROW_BYTES),
                    4,
                    "the source",
                )?);
            }
            ("tcgen05", "ld") if ops.len() == 2 => {
                let (x, regs) = self.fragment(&ops[0])?;
                operands.push(RawOperand::Name(self.regs[x].name.clone(), ops[0].span()));
                operands.push(self.tmem_operand(&ops[1], env)?);
                frag = Some((x, regs));
            }
            ("tcgen05", "st") if ops.len() == 2 => {
                operands.push(self.tmem_operand(&ops[0], env)?);
                let v = match &ops[1] {
                    Opnd::Vector(items, vs) if items.len() == 1 => {
                        RawOperand::Vector(vec![self.raw_value(&items[0], env, *vs)?], *vs)
                    }
                    o => self.raw_value(o, env, o.span())?,
                };
                operands.push(v);
            }
            ("tcgen05", "commit") if !ops.is_empty() => {
                let (region, off) = self.pointer(&ops[0], env, VarSpace::Shared)?;
                let a = self
                    .ctx
                    .cell(region, off, MBARRIER_BYTES, ops[0].span(), true)?;
                operands.push(RawOperand::Bracketed(
                    self.ctx.addresses[a].name.clone(),
                    ops[0].span(),
                ));
                for o in &ops[1..] {
                    operands.push(self.raw_value(o, env, o.span())?);
                }
            }
            _ => {
                // Fences, commit_group, waits: integers only (the dialect
                // checks the counts and refuses the rest by name).
                for o in ops {
                    operands.push(self.raw_value(o, env, o.span())?);
                }
            }
        }
        let decoded = self.decode_tc(i, &raw_parts, operands)?;
        let wait = match &decoded {
            Instr::Tensor {
                op: w @ (TcOp::WgmmaWait { .. } | TcOp::Wait { ld: true }),
            } => Some(w.clone()),
            _ => None,
        };
        let issued = matches!(
            &decoded,
            Instr::Tensor {
                op: TcOp::Wgmma { .. } | TcOp::Ld { .. }
            }
        );
        let wgmma = matches!(
            &decoded,
            Instr::Tensor {
                op: TcOp::Wgmma { .. }
            }
        );
        if let Some((x, regs)) = frag {
            for &r in &regs {
                env[r as usize] = Val::Dyn(x);
            }
            if issued {
                self.tc.pending.push(PendingOp {
                    pc: self.code.len(),
                    regs: regs.clone(),
                    mnemonic: i.mnemonic.clone(),
                    wgmma,
                });
            }
            self.tc.frags.insert(x, regs);
        }
        self.emit(decoded, i)?;
        if wait.is_some() {
            // What this wait completes is no longer pending.
            let w = self.code.len() - 1;
            let code = &self.code;
            self.tc
                .pending
                .retain(|o| crate::ir::tensor_core::completing_wait(code, o.pc) != Some(w));
        }
        if let Some(w) = wait {
            // The results the wait delivers, as the litmus parsers add them.
            let code = self.code[..self.code.len() - 1].to_vec();
            for r in results_of_wait(&code, &w) {
                let TcOp::Result { dst, .. } = r else {
                    continue;
                };
                // The fragment's registers get the result; any other value
                // that refers to the register keeps the old one.
                let mine: Vec<u32> = self
                    .tc
                    .frags
                    .get(&dst)
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|&p| env[p as usize] == Val::Dyn(dst))
                    .collect();
                for &p in &mine {
                    env[p as usize] = Val::Undef;
                }
                self.before_write(env, dst, None, i)?;
                for &p in &mine {
                    env[p as usize] = Val::Dyn(dst);
                }
                self.emit(Instr::Tensor { op: r }, i)?;
            }
        }
        Ok(())
    }

    /// Refuse an instruction that names a register of a fragment whose
    /// `wgmma.mma_async` or `tcgen05.ld` is still pending (`docs/tensor-core.md`
    /// §3a): for `wgmma` undefined behaviour (PTX ISA 9.7.15.7.3), for
    /// `tcgen05.ld` a read ptxmc does not model. The front end keeps register
    /// values of its own (a copy is not an instruction), so the check is made
    /// here, on the PTX as written, and not left to the engines. A later
    /// `wgmma.mma_async` into the same fragment is no access (the ISA orders
    /// accumulator accesses across `wgmma.mma_async`s).
    pub(super) fn check_pending(&self, i: &PInstr) -> Result<(), Diagnostic> {
        if self.tc.pending.is_empty() {
            return Ok(());
        }
        let mut named = Vec::new();
        for o in &i.operands {
            named_regs(o, &mut named);
        }
        if let Some((_, g, s)) = i.guard {
            named.push((g, s));
        }
        let chain = i.mnemonic.starts_with("wgmma.mma_async");
        for (r, at) in named {
            let Some(op) = self.tc.pending.iter().rev().find(|o| o.regs.contains(&r)) else {
                continue;
            };
            if chain
                && op.wgmma
                && i.operands.first().is_some_and(|d| {
                    let mut first = Vec::new();
                    named_regs(d, &mut first);
                    first.iter().any(|&(q, _)| q == r)
                })
            {
                continue;
            }
            let name = &self.f.regs[r as usize].name;
            let at_op = &op.mnemonic;
            return Err(if op.wgmma {
                Diagnostic::expected(
                    at,
                    format!(
                        "a `wgmma.wait_group` that completes the earlier `{at_op}` before this \
                         access to `{name}`"
                    ),
                    format!("an access to `{name}`, a register of its accumulator"),
                )
                .with_label("the `wgmma.mma_async` is still pending here")
                .with_note(
                    "undefined behaviour: \"Accessing the accumulator register ... without first \
                     performing a wgmma.wait_group instruction that waits on a wgmma-group \
                     including that wgmma.mma_async instruction is undefined behavior\" (PTX ISA \
                     9.7.15.7.3); `ptxmc kernel` refuses it (docs/tensor-core.md §3a)",
                )
            } else {
                Diagnostic::expected(
                    at,
                    format!(
                        "a `tcgen05.wait::ld` that completes the earlier `{at_op}` before this \
                         access to `{name}`"
                    ),
                    format!("an access to `{name}`, a register the load writes"),
                )
                .with_label("the `tcgen05.ld` is still pending here")
                .with_note(
                    "the ISA orders a read after the load through the register dependency (PTX ISA \
                     9.7.16.6.4.5) with no memory ordering, and says nothing of a write; ptxmc \
                     delivers the register at the wait and does not model either \
                     (docs/tensor-core.md §3a)",
                )
            });
        }
        Ok(())
    }

    /// Refuse a `wgmma.mma_async` issued where PTX ISA §9.7.15.7.1
    /// (`wgmma.fence`) requires a `wgmma.fence`: after an access by the
    /// thread to a register of its accumulator fragment with no `wgmma.fence`
    /// between, except an earlier `wgmma.mma_async` of the same shape into it
    /// (`docs/tensor-core.md` §3b). As for [`Self::check_pending`], the front
    /// end keeps register values of its own, so the rule is checked here, on
    /// the PTX as written (an instruction counts as an access of every
    /// register it names, its guard's included, whatever the guard's value).
    /// The other half of the rule, a `wgmma.fence` before the thread's first
    /// `wgmma.mma_async`, is left to the engines, which see both instructions
    /// (`ir::tensor_core::unfenced`).
    pub(super) fn check_fence(&mut self, i: &PInstr) -> Result<(), Diagnostic> {
        let key = std::ptr::from_ref(self.f) as usize;
        let has = match self.tc.wgmma_fn {
            Some((k, has)) if k == key => has,
            _ => {
                let has = self
                    .f
                    .body
                    .iter()
                    .any(|j| j.mnemonic.starts_with("wgmma.mma_async"));
                self.tc.wgmma_fn = Some((key, has));
                has
            }
        };
        if !has {
            return Ok(());
        }
        if i.mnemonic.starts_with("wgmma.fence") {
            self.tc.touched.clear();
            return Ok(());
        }
        let mut named = Vec::new();
        if !i.mnemonic.starts_with("wgmma.mma_async") {
            for o in &i.operands {
                named_regs(o, &mut named);
            }
            if let Some((_, g, s)) = i.guard {
                named.push((g, s));
            }
            for (r, _) in named {
                self.tc.touched.entry(r).or_insert_with(|| Touch {
                    mnemonic: i.mnemonic.clone(),
                    mma_shape: None,
                });
            }
            return Ok(());
        }
        let shape = i
            .mnemonic
            .split('.')
            .find(|p| {
                p.strip_prefix('m')
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            })
            .unwrap_or("")
            .to_string();
        if let Some(d) = i.operands.first() {
            named_regs(d, &mut named);
        }
        for &(r, at) in &named {
            let Some(t) = self.tc.touched.get(&r) else {
                continue;
            };
            if t.mma_shape.as_deref() == Some(shape.as_str()) {
                continue;
            }
            let name = &self.f.regs[r as usize].name;
            let what = match &t.mma_shape {
                Some(other) => format!(
                    "an earlier `{}` of another shape ({other}) into `{name}`",
                    t.mnemonic
                ),
                None => format!("an access to `{name}` (`{}`)", t.mnemonic),
            };
            return Err(Diagnostic::expected(
                at,
                format!(
                    "a `wgmma.fence` between {what} and this `wgmma.mma_async`, whose accumulator \
                     `{name}` is"
                ),
                format!("no `wgmma.fence` since that access to `{name}`"),
            )
            .with_label(format!(
                "`{name}` was accessed since the thread's last `wgmma.fence`"
            ))
            .with_note(
                "undefined behaviour: \"The wgmma.fence instruction must be issued by all warps of \
                 the warpgroup at the following locations: ... Between a register access by a \
                 thread in the warpgroup and any wgmma.mma_async instruction that accesses the \
                 same registers, either as accumulator or input register containing fragments of \
                 matrix A, except when these are accumulator register accesses across multiple \
                 wgmma.mma_async instructions of the same shape. ... Otherwise, the behavior is \
                 undefined.\" (PTX ISA 9.7.15.7.1); `ptxmc kernel` refuses it \
                 (docs/tensor-core.md §3b)",
            ));
        }
        for (r, _) in named {
            self.tc.touched.insert(
                r,
                Touch {
                    mnemonic: i.mnemonic.clone(),
                    mma_shape: Some(shape.clone()),
                },
            );
        }
        Ok(())
    }

    /// Decode with the litmus dialect's tensor-core decoders.
    fn decode_tc(
        &mut self,
        i: &PInstr,
        parts: &[(String, Span)],
        operands: Vec<RawOperand>,
    ) -> Result<Instr, Diagnostic> {
        let raw = RawInstr {
            parts: parts.to_vec(),
            operands,
            precondition: None,
            span: i.span,
        };
        let mut res = TcRes {
            regs: &mut self.regs,
            names: &mut self.reg_names,
            ctx: self.ctx,
            cta: self.sp.cta,
        };
        if parts[0].0 == "wgmma" {
            crate::litmus::tcgen::decode_wgmma(&raw, &mut res)
        } else {
            crate::litmus::tcgen::decode_tcgen05(&raw, &mut res)
        }
    }

    /// A result fragment `{%f1, ..., %fn}` (or one register): its IR
    /// register (the first PTX register's own) and its PTX registers.
    fn fragment(&mut self, o: &Opnd) -> Result<(usize, Vec<u32>), Diagnostic> {
        let regs: Vec<u32> = match o {
            Opnd::Vector(items, _) => items
                .iter()
                .map(|e| self.dst(e))
                .collect::<Result<_, _>>()?,
            other => vec![self.dst(other)?],
        };
        if regs.is_empty() {
            return Err(Diagnostic::expected(
                o.span(),
                "the registers of the result fragment",
                "none",
            ));
        }
        Ok((self.own_reg(regs[0]), regs))
    }

    /// A predicate or immediate flag (`scale-d`, `enable-input-d`) known
    /// when the kernel is lowered.
    fn flag(&mut self, o: &Opnd, env: &Env, what: &str) -> Result<bool, Diagnostic> {
        match self.value(o, env, 32)? {
            Val::Known(k) => Ok(k != 0),
            _ => Err(refuse(
                o.span(),
                format!("a `{what}` decided at run time"),
                "whether an MMA accumulates must be known when the kernel is lowered (the agent that runs it is laid out statically)",
            )),
        }
    }

    /// A matrix descriptor: the cell standing for the tile of `rows` rows
    /// of [`ROW_BYTES`] it names (created with `elem` bytes if no access
    /// made it before).
    fn tile(
        &mut self,
        o: &Opnd,
        env: &Env,
        rows: u64,
        elem: u64,
        which: &str,
    ) -> Result<RawOperand, Diagnostic> {
        let s = o.span();
        let desc = match self.value(o, env, 64)? {
            Val::Known(k) => k,
            Val::Ptr(..) => {
                return Err(refuse(
                    s,
                    format!("an address as the matrix descriptor of {which}"),
                    "a descriptor encodes its tile's shared address as (addr & 0x3FFFF) >> 4 in bits 0-13 (PTX ISA, \"Matrix Descriptor Format\")",
                ));
            }
            _ => {
                return Err(refuse(
                    s,
                    format!("a matrix descriptor of {which} computed from a loaded value"),
                    "a descriptor's start address must be known when the kernel is lowered",
                ));
            }
        };
        let addr = (desc & 0x3fff) << 4;
        let Some((var, off)) = self.ctx.window_var(addr) else {
            let vars: Vec<String> = self
                .ctx
                .window()
                .map(|(k, b)| {
                    let v = &self.ctx.vars[k];
                    format!("`{}` at {b:#x}..{:#x}", v.name, b + v.bytes as i64)
                })
                .collect();
            return Err(Diagnostic::expected(
                s,
                if vars.is_empty() {
                    "a descriptor of a shared variable (the kernel has none)".to_string()
                } else {
                    format!("a descriptor of a shared variable ({})", vars.join(", "))
                },
                format!("a descriptor of {which} whose start address is {addr:#x}"),
            )
            .with_note("a shared variable's address used as a number is its address in the shared window, where ptxmc lays variables out from 0x400, each aligned to 1024 bytes (docs/kernels.md)"));
        };
        let region = Region::Var(var, self.sp.cta);
        let bytes = rows * ROW_BYTES;
        let info = &self.ctx.vars[var];
        if off as u64 + bytes > info.bytes {
            return Err(Diagnostic::expected(
                s,
                format!(
                    "a tile of {which} of {bytes} bytes inside `{}` ({} bytes)",
                    info.name, info.bytes
                ),
                format!("a tile from byte offset {off}"),
            ));
        }
        let size = self
            .ctx
            .cells
            .get(&(region, off))
            .map_or(elem, |&(_, size)| size);
        let a = self.ctx.cell(region, off, size, s, false)?;
        self.ctx.tc.tiles.push(Tile {
            region,
            off,
            bytes,
            span: s,
        });
        Ok(RawOperand::Bracketed(self.ctx.addresses[a].name.clone(), s))
    }

    /// A tensor-memory address operand `[%r]` (or `[%r+off]`) whose value
    /// is known: its cell.
    fn tmem_operand(&mut self, o: &Opnd, env: &Env) -> Result<RawOperand, Diagnostic> {
        let (reg, offset, span) = match o {
            Opnd::Addr {
                base: Some(b),
                offset,
                span,
            } => (&**b, *offset, *span),
            other => {
                return Err(Diagnostic::expected(
                    other.span(),
                    "a tensor-memory address `[taddr]`",
                    "another operand",
                ));
            }
        };
        let taddr = self.tmem_address(reg, env)?.wrapping_add(offset);
        let a = self.ctx.tmem_cell(self.sp.cta, taddr);
        Ok(RawOperand::Bracketed(
            self.ctx.addresses[a].name.clone(),
            span,
        ))
    }

    /// The value of a tensor-memory address register.
    fn tmem_address(&mut self, o: &Opnd, env: &Env) -> Result<i64, Diagnostic> {
        match self.value(o, env, 32)? {
            Val::Known(k) => Ok(k & 0xffff_ffff),
            _ => Err(refuse(
                o.span(),
                "a tensor-memory address that is not known when the kernel is lowered",
                "tensor-memory addresses come from `tcgen05.alloc` (read back from the shared word it writes) and constants added to them",
            )),
        }
    }

    /// `tcgen05.alloc [dst], ncols`, `tcgen05.dealloc taddr, ncols`,
    /// `tcgen05.relinquish_alloc_permit`: allocation is not memory in the
    /// model; `alloc` makes `dst` the word a later 32-bit load reads
    /// [`TMEM_BASE`] from.
    fn allocation(
        &mut self,
        i: &PInstr,
        parts: &[&str],
        spans: &[Span],
        env: &Env,
    ) -> Result<(), Diagnostic> {
        let what = parts[1];
        let allowed: &[&str] = match what {
            "alloc" => &["cta_group::1", "sync", "aligned", "shared::cta", "b32"],
            "dealloc" => &["cta_group::1", "sync", "aligned", "b32"],
            _ => &["cta_group::1", "sync", "aligned"],
        };
        for (p, s) in parts.iter().zip(spans).skip(2) {
            if allowed.contains(p) {
                continue;
            }
            if *p == "cta_group::2" {
                return Err(refuse(
                    *s,
                    "`.cta_group::2`",
                    "a CTA pair's tensor memory is not modelled: one CTA's tensor memory only",
                ));
            }
            return Err(Diagnostic::expected(
                *s,
                allowed
                    .iter()
                    .map(|a| format!("`.{a}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                format!("`.{p}`"),
            )
            .with_label(format!("not a modifier of `tcgen05.{what}`")));
        }
        let ops = &i.operands;
        let count = usize::from(what != "relinquish_alloc_permit") * 2;
        if ops.len() != count {
            return Err(Diagnostic::expected(
                i.span,
                format!("{count} operands for `{}`", i.mnemonic),
                format!("{}", ops.len()),
            ));
        }
        if count == 0 {
            return Ok(());
        }
        // Column counts: a power of two from 32 to 512 (PTX ISA, tcgen05.alloc).
        match self.value(&ops[1], env, 32)? {
            Val::Known(n) if (32..=512).contains(&n) && n.count_ones() == 1 => {}
            Val::Known(n) => {
                return Err(Diagnostic::expected(
                    ops[1].span(),
                    "a column count that is a power of two from 32 to 512 (PTX ISA, tcgen05.alloc)",
                    n.to_string(),
                ));
            }
            _ => {
                return Err(refuse(
                    ops[1].span(),
                    "a column count computed from a loaded value",
                    "allocation sizes must be known when the kernel is lowered",
                ));
            }
        }
        if what == "alloc" {
            let (region, off) = self.pointer(&ops[0], env, VarSpace::Shared)?;
            let Region::Var(v, cta) = region else {
                unreachable!("pointer() checked the shared state space")
            };
            self.ctx.tc.slots.insert((v, cta, off));
        } else {
            let t = self.tmem_address(&ops[0], env)?;
            if t != TMEM_BASE {
                return Err(Diagnostic::expected(
                    ops[0].span(),
                    format!("the address `tcgen05.alloc` gave ({TMEM_BASE})"),
                    t.to_string(),
                ));
            }
        }
        Ok(())
    }

    /// A 32-bit `ld.shared` of a word a `tcgen05.alloc` wrote reads the
    /// tensor-memory address as a constant (no load is emitted); any other
    /// access to that word is refused by name. Returns whether `i` was such
    /// an access.
    pub(super) fn tmem_slot(
        &mut self,
        i: &PInstr,
        parts: &[&str],
        env: &mut Env,
    ) -> Result<bool, Diagnostic> {
        if self.ctx.tc.slots.is_empty() || !matches!(parts[0], "ld" | "st" | "atom" | "red") {
            return Ok(false);
        }
        let Some((k, o)) = i
            .operands
            .iter()
            .enumerate()
            .find(|(_, o)| matches!(o, Opnd::Addr { .. }))
        else {
            return Ok(false);
        };
        let Ok((Region::Var(v, cta), off)) = self.pointer(o, env, VarSpace::Shared) else {
            return Ok(false);
        };
        if !self.ctx.tc.slots.contains(&(v, cta, off)) {
            return Ok(false);
        }
        let word = parts.iter().any(|p| matches!(*p, "b32" | "u32" | "s32"));
        if parts[0] != "ld"
            || k != 1
            || !word
            || parts.iter().any(|p| matches!(*p, "v2" | "v4" | "v8"))
        {
            return Err(refuse(
                i.span,
                format!("`{}` of the word `tcgen05.alloc` wrote", i.mnemonic),
                "allocation is not modelled as memory: the word is read by a 32-bit `ld.shared`, which gives the tensor-memory address (docs/kernels.md)",
            ));
        }
        let d = self.dst(&i.operands[0])?;
        env[d as usize] = Val::Known(TMEM_BASE);
        Ok(true)
    }
}
