//! Lowering one kernel under a launch to the program IR.
//!
//! One litmus thread per CUDA thread. Each thread's code is the kernel
//! *specialised* for that thread by an online partial evaluator over the
//! kernel's control flow: a register is `Known` (an integer: special
//! registers, parameters, arithmetic on them), a `Ptr` (a buffer or variable
//! and a byte offset: address arithmetic folds exactly), a `Pred` (a
//! comparison not decided yet), or `Dyn` (held in an IR register: values
//! loaded from memory and what is computed from them). Code is lowered
//! polyvariantly: each (instruction, values of the live registers) is
//! lowered once, so a branch on a known value is followed statically
//! (counted loops unroll, up to [`MAX_VISITS`]), a branch on a loaded value
//! becomes an IR branch, and a spin loop whose values are stable loops back
//! to the same IR instruction (the engines' loop analysis sees it). When a
//! loop controlled by a loaded value keeps changing a known register, that
//! register is widened: moved into an IR register on the edge.
//!
//! Values are signed numbers of their width (an `int32` -1 is -1, a `uint32`
//! 0xffffffff is -1 too): known arithmetic wraps exactly at the
//! instruction's width, and dynamic arithmetic is followed by IR
//! instructions that sign-extend the result from that width.
//!
//! Every memory-model instruction is decoded by the litmus dialect's own
//! decoder ([`crate::litmus::instr::decode`]) once its address is a
//! location and its operands are registers or constants, so the semantics
//! of `ld.acquire.gpu`, `atom.cas`, `membar.gl`, `bar.sync`, ... are those of
//! litmus tests. Everything else is refused by name at its position.

use std::collections::HashMap;

use smallvec::SmallVec;

use super::ast::{Function, Instr as PInstr, Loc, Module, Opnd, VarSpace};
use super::launch::{Binding, FieldBinding, Launch};
use crate::ir::{
    Address, AddressKind, ArithOp, BranchCmp, Condition, Instr, LocKind, Location, Operand,
    Placement, Program, Prop, Quantifier, Register, Space, Term, Thread, Value,
};
use crate::litmus::raw::{RawInstr, RawOperand, Resolver};
use crate::litmus::{Diagnostic, SourceMap, Span};

mod bulk;
mod rmw;
mod tensor;
mod tensor_core;

/// How many times one instruction may be lowered for one thread with
/// different known values (how far a counted loop unrolls).
pub const MAX_VISITS: usize = 256;
/// The most IR instructions one thread's specialised code may have.
pub const MAX_CODE: usize = 20_000;
/// Visits of an instruction after which registers that changed since an
/// earlier visit, with a run-time branch on the way, are widened to IR
/// registers.
const WIDEN_AT: usize = 1;

pub use crate::ir::sext;

/// Zero-extend the low `bits` bits of `v`.
fn zext(v: Value, bits: u32) -> Value {
    if bits >= 64 {
        v
    } else {
        v & ((1i64 << bits) - 1)
    }
}

/// Which text an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The PTX module.
    Ptx,
    /// The launch description.
    Launch,
}

/// A lowering error: where, and what.
pub type Error = Box<(Source, Diagnostic)>;

fn ptx(d: Diagnostic) -> Error {
    Box::new((Source::Ptx, d))
}

/// The lowered kernel.
#[derive(Debug)]
pub struct Lowered {
    /// The program.
    pub program: Program,
    /// PTX spans of every IR instruction.
    pub spans: SourceMap,
    /// CUDA position of every IR instruction (from `.loc`).
    pub lines: Vec<Vec<Option<Loc>>>,
    /// The kernel's (mangled) name.
    pub entry: String,
    /// Per location: the element type of the buffer it belongs to (its
    /// data type and launch spelling), so a condition's constants are held
    /// as the buffer holds its values ([`condition`]).
    pub loc_types: Vec<Option<(crate::ir::DataType, &'static str)>>,
}

/// Where a pointer points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Region {
    /// The buffer bound to parameter `k` (index into `Ctx::buffers`).
    Buffer(usize),
    /// A module-scope or function-scope variable (index into `Ctx::vars`),
    /// in CTA `cta` for shared variables.
    Var(usize, u32),
    /// The tensor map bound to a `.param .b8 [128]` parameter (index into
    /// `Ctx::tmaps`): read by tensor copies only (`lower::tensor`).
    TensorMap(usize),
}

/// A register's value during specialisation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Val {
    /// Not written yet.
    Undef,
    /// A constant (signed, of the width it was written with).
    Known(Value),
    /// An address: region and byte offset.
    Ptr(Region, i64),
    /// Held in this IR register.
    Dyn(usize),
    /// An address whose byte offset into the region is the value of an IR
    /// register plus a constant: a pointer plus an index computed from a
    /// loaded value (a ring-buffer slot, a queue entry). An access through
    /// it dispatches on the register at run time
    /// ([`ThreadLower::dispatch`]).
    Idx(Region, usize, i64),
    /// A predicate decided at run time: `a cmp b` (signed 64-bit).
    Pred(BranchCmp, Operand, Operand),
    /// One 32-bit half of an address: the high half (`true`) or the low one.
    /// Only the cooperative launch's grid workspace pointer arrives this way
    /// (`%envreg1` high, `%envreg2` low), and only `bfi.b64 d, high, low,
    /// 32, 32` (how cooperative groups joins them) makes an address of it.
    Half(Region, bool),
}

struct BufferInfo {
    name: String,
    elem_bytes: u64,
    len: u64,
    /// Address of element i: `first_addr + i`.
    first_addr: usize,
    /// The element type's launch spelling (`int32`).
    ty: &'static str,
    /// The element type (`.s32`): a tensor reduction's operand type.
    data: crate::ir::DataType,
}

struct VarInfo {
    name: String,
    space: VarSpace,
    bytes: u64,
    init: Vec<Value>,
    elem_bytes: u64,
    span: Span,
}

/// What all threads share: the memory.
struct Ctx {
    locations: Vec<Location>,
    addresses: Vec<Address>,
    by_name: HashMap<String, usize>,
    buffers: Vec<BufferInfo>,
    vars: Vec<VarInfo>,
    var_names: HashMap<String, usize>,
    /// (region, byte offset) → (address, size in bytes).
    cells: HashMap<(Region, i64), (usize, u64)>,
    /// Per parameter: its name and the values a load reads, as (byte
    /// offset, value, size in bytes): one at offset 0 for a buffer, scalar
    /// or tensor map; a struct's fields (`--struct`).
    params: Vec<(String, Vec<ParamField>)>,
    /// The tensor maps bound to parameters (`--tensormap`).
    tmaps: Vec<TensorMapInfo>,
    multi_cta: bool,
    /// The grid workspace of the kernel being lowered, if it is launched
    /// cooperatively (`--cooperative`): a buffer of `Ctx::buffers`.
    workspace: Option<usize>,
    /// Allocated tensor memory and descriptor tiles (`lower::tensor_core`).
    tc: tensor_core::Shared,
}

/// What a load of a parameter reads at a byte offset: (offset, value, size
/// in bytes).
type ParamField = (i64, Val, u64);

/// A tensor map parameter: its parameter's name, the buffer holding its
/// tensor, and its shape.
struct TensorMapInfo {
    param: String,
    buffer: usize,
    map: crate::litmus::tensor::TensorMap,
}

impl Ctx {
    fn add_location(&mut self, name: String, init: Value, space: Space) -> usize {
        let id = self.locations.len();
        self.locations.push(Location {
            name: name.clone(),
            init,
            space,
            kind: LocKind::Data,
        });
        let a = self.addresses.len();
        self.addresses.push(Address {
            name: name.clone(),
            loc: id,
            va: a,
            kind: AddressKind::Generic,
            alias_of: None,
        });
        self.by_name.insert(name, a);
        a
    }

    /// A new global buffer bound by the launch: one location per element
    /// (`NAME[i]`, initialised from the binding), returning its index in
    /// `buffers`. Buffers of `--buffer` and the tensors of `--tensormap` are
    /// made here alike, so their elements are the same kind of location.
    fn add_buffer(&mut self, b: &super::launch::Buffer) -> usize {
        let first = self.addresses.len();
        for i in 0..b.len {
            let init = b.init.get(i as usize).copied().unwrap_or(0);
            self.add_location(format!("{}[{i}]", b.name), init, Space::Global);
        }
        self.buffers.push(BufferInfo {
            name: b.name.clone(),
            elem_bytes: b.elem.bytes(),
            len: b.len,
            first_addr: first,
            ty: b.elem.name,
            data: b.elem.ty,
        });
        self.buffers.len() - 1
    }

    /// The address of `size` bytes at `off` in `region`, or why not.
    fn cell(
        &mut self,
        region: Region,
        off: i64,
        size: u64,
        span: Span,
        mbarrier: bool,
    ) -> Result<usize, Diagnostic> {
        let a = self.cell_of(region, off, size, span, mbarrier)?;
        let kind = self.locations[self.addresses[a].loc].kind;
        if mbarrier != (kind == LocKind::Mbarrier) {
            return Err(Diagnostic::expected(
                span,
                if mbarrier {
                    "an mbarrier object (a shared variable only mbarrier instructions use)"
                } else {
                    "data (an address no mbarrier instruction uses)"
                },
                format!("`{}`", self.addresses[a].name),
            )
            .with_label(if mbarrier {
                "this address holds data"
            } else {
                "this address holds an mbarrier"
            }));
        }
        Ok(a)
    }

    fn cell_of(
        &mut self,
        region: Region,
        off: i64,
        size: u64,
        span: Span,
        mbarrier: bool,
    ) -> Result<usize, Diagnostic> {
        match region {
            Region::Buffer(b) => {
                if mbarrier {
                    return Err(Diagnostic::expected(
                        span,
                        "an mbarrier object in shared memory",
                        format!("an element of buffer `{}` (global)", self.buffers[b].name),
                    ));
                }
                let info = &self.buffers[b];
                let total = info.len * info.elem_bytes;
                if off < 0 || off as u64 >= total {
                    return Err(Diagnostic::expected(
                        span,
                        format!(
                            "an address inside buffer `{}` (bytes 0 to {})",
                            info.name,
                            total - 1
                        ),
                        format!("byte offset {off}"),
                    )
                    .with_label("out of bounds"));
                }
                if size != info.elem_bytes || off as u64 % info.elem_bytes != 0 {
                    return Err(unsupported(
                        span,
                        format!("an access of {size} bytes at byte offset {off}"),
                        format!(
                            "whole elements of buffer `{}` ({}, {} bytes each)",
                            info.name,
                            info.ty,
                            info.elem_bytes
                        ),
                    )
                    .with_note("mixed-size accesses are outside the PTX memory model's axioms; bind the buffer with the type the kernel accesses"));
                }
                Ok(info.first_addr + (off as u64 / info.elem_bytes) as usize)
            }
            Region::TensorMap(t) => Err(unsupported(
                span,
                format!("an access to tensor map `{}`", self.tmaps[t].param),
                "accesses to buffers and variables",
            )
            .with_note("a tensor map is read by tensor copies only; its 128 bytes are not modelled as memory")),
            Region::Var(v, cta) => {
                if let Some(&(a, s)) = self.cells.get(&(region, off)) {
                    if s != size {
                        return Err(unsupported(
                            span,
                            format!("an access of {size} bytes"),
                            format!("accesses of {s} bytes, as before at this address"),
                        ));
                    }
                    return Ok(a);
                }
                let info = &self.vars[v];
                if off < 0 || (off as u64).saturating_add(size) > info.bytes {
                    return Err(Diagnostic::expected(
                        span,
                        format!(
                            "an address inside variable `{}` (bytes 0 to {})",
                            info.name,
                            info.bytes.saturating_sub(1)
                        ),
                        format!("byte offset {off}"),
                    )
                    .with_label("out of bounds"));
                }
                // Overlap with a cell of another size or offset: mixed sizes.
                for (&(r, o), &(_, s)) in &self.cells {
                    if r == region && o < off + size as i64 && off < o + s as i64 {
                        return Err(unsupported(
                            span,
                            format!("an access of {size} bytes at byte offset {off}"),
                            format!(
                                "accesses that do not overlap (bytes {o}..{} are accessed as one)",
                                o + s as i64
                            ),
                        ));
                    }
                }
                let init = if info.elem_bytes == size {
                    info.init
                        .get((off as u64 / size.max(1)) as usize)
                        .copied()
                        .unwrap_or(0)
                } else if info.init.iter().all(|&v| v == 0) {
                    0
                } else {
                    return Err(unsupported(
                        span,
                        format!("an access of {size} bytes"),
                        format!(
                            "accesses of {} bytes to initialised variable `{}`",
                            info.elem_bytes, info.name
                        ),
                    ));
                };
                let idx = off as u64 / size;
                let mut name = if off as u64 % size == 0 {
                    format!("{}[{idx}]", info.name)
                } else {
                    format!("{}+{off}", info.name)
                };
                let space = if info.space == VarSpace::Shared {
                    if self.multi_cta {
                        name = format!("{name}@cta{cta}");
                    }
                    Space::Shared { gpu: 0, cta }
                } else {
                    Space::Global
                };
                let a = self.add_location(name, init, space);
                if mbarrier {
                    // An mbarrier starts uninitialised (`mbarrier.init` sets it).
                    let loc = self.addresses[a].loc;
                    self.locations[loc].kind = LocKind::Mbarrier;
                    self.locations[loc].init = 0;
                }
                self.cells.insert((region, off), (a, size));
                Ok(a)
            }
        }
    }
}

/// Itanium-demangled base name of a kernel (`_Z2mpPiS_S_` → `mp`), if simple.
pub fn demangled_base(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("_Z")?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let n: usize = rest[..digits].parse().ok()?;
    rest.get(digits..digits + n)
}

/// Pick the kernel the launch names (or the only one).
pub fn select<'m>(m: &'m Module, launch: &Launch) -> Result<&'m Function, Error> {
    let entries: Vec<&Function> = m.entries().filter(|f| !f.decl_only).collect();
    let list = || {
        entries
            .iter()
            .map(|f| match demangled_base(&f.name) {
                Some(d) => format!("`{}` ({d})", f.name),
                None => format!("`{}`", f.name),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &launch.entry {
        Some((name, span)) => {
            let found: Vec<&&Function> = entries
                .iter()
                .filter(|f| f.name == *name || demangled_base(&f.name) == Some(name.as_str()))
                .collect();
            match found.as_slice() {
                [f] => Ok(f),
                [] => Err(Box::new((
                    Source::Launch,
                    Diagnostic::expected(
                        *span,
                        format!("a kernel of the module: {}", list()),
                        format!("`{name}`"),
                    ),
                ))),
                _ => Err(Box::new((
                    Source::Launch,
                    Diagnostic::expected(
                        *span,
                        "the mangled name of one kernel",
                        format!("`{name}`, which names several: {}", list()),
                    ),
                ))),
            }
        }
        None => match entries.as_slice() {
            [f] => Ok(f),
            [] => Err(ptx(Diagnostic::expected(
                Span::default(),
                "a module with a kernel (`.entry`)",
                "none",
            ))),
            _ => Err(Box::new((
                Source::Launch,
                Diagnostic::expected(
                    Span::default(),
                    "`--entry NAME` naming one kernel",
                    format!("several kernels: {}", list()),
                ),
            ))),
        },
    }
}

/// Lower the kernel `launch` names in `m`, and the dependent kernel it
/// names (`--dependent`: grid 1 of the test, after the primary's CTAs and
/// clusters, `docs/griddep.md`), under `launch`.
pub fn lower(m: &Module, launch: &Launch, launch_len: usize) -> Result<Lowered, Error> {
    let whole = Span::new(0, launch_len);
    let mut selected: Vec<(&Function, &Launch)> = vec![(select(m, launch)?, launch)];
    if let Some(d) = launch.dependent.as_deref() {
        selected.push((select(m, d)?, d));
    }
    // Device functions spliced in (`ptx::inline`): the lowering sees one body.
    let inlined: Vec<Function> = selected
        .iter()
        .map(|(f, _)| super::inline::inline_calls(m, f).map_err(ptx))
        .collect::<Result<_, _>>()?;
    let kernels: Vec<(&Function, &Launch)> = inlined
        .iter()
        .zip(&selected)
        .map(|(f, (_, l))| (f, *l))
        .collect();
    for &(f, l) in &kernels {
        if l.params.len() != f.params.len() {
            return Err(Box::new((
                Source::Launch,
                Diagnostic::expected(
                    whole,
                    format!(
                        "{} parameter binding{} (`--buffer`, `--scalar`, `--tensormap` or `--struct`, in order) for kernel `{}`",
                        f.params.len(),
                        if f.params.len() == 1 { "" } else { "s" },
                        f.name
                    ),
                    format!("{}", l.params.len()),
                ),
            )));
        }
    }
    let multi_cta = kernels.iter().map(|(_, l)| l.ctas()).sum::<u64>() > 1;
    let mut ctx = Ctx {
        locations: Vec::new(),
        addresses: Vec::new(),
        by_name: HashMap::new(),
        buffers: Vec::new(),
        vars: Vec::new(),
        var_names: HashMap::new(),
        cells: HashMap::new(),
        params: Vec::new(),
        tmaps: Vec::new(),
        multi_cta,
        workspace: None,
        tc: tensor_core::Shared::default(),
    };
    let mut seen_names: HashMap<&str, Span> = HashMap::new();
    let mut threads = Vec::new();
    // Per thread: its CTA and linear thread id (for warpgroups).
    let mut wg_members: Vec<(u32, u32)> = Vec::new();
    // Per kernel: its first thread and its block's size (for warpgroups).
    let mut kernel_threads: Vec<(usize, u32)> = Vec::new();
    let mut elects = Vec::new();
    let mut spans = SourceMap::default();
    let mut lines = Vec::new();
    // The dependent's CTAs and clusters are numbered after the primary's.
    let (mut cta_base, mut cluster_base) = (0u32, 0u32);
    for (grid_no, &(f, launch)) in kernels.iter().enumerate() {
        // Parameters are per kernel; buffers and variables are shared.
        ctx.params.clear();
        ctx.workspace = None;
        if launch.cooperative {
            // The driver's `grid_workspace` (cooperative_groups/details/
            // driver_abi.h): `wsSize` at +0, the grid barrier's word at +4.
            // Cooperative groups' barrier flips the word's top bit whatever
            // it held, so zeros are one launch among all (docs/kernels.md,
            // "Grid-wide sync").
            let name = if grid_no == 0 {
                "grid_workspace".to_string()
            } else {
                format!("grid_workspace{grid_no}")
            };
            if ctx.buffers.iter().any(|b| b.name == name)
                || launch.params.iter().any(|b| match b {
                    Binding::Buffer(b) => b.name == name,
                    _ => false,
                })
            {
                return Err(Box::new((
                    Source::Launch,
                    Diagnostic::expected(
                        whole,
                        format!("a buffer name other than `{name}` in a cooperative launch"),
                        format!("`{name}`"),
                    )
                    .with_note("the cooperative launch's grid workspace is that buffer"),
                )));
            }
            let ws = super::launch::Buffer {
                name,
                elem: super::launch::ElemType {
                    name: "uint32",
                    ty: crate::ir::DataType::U32,
                },
                len: 2,
                init: Vec::new(),
                span: whole,
            };
            ctx.workspace = Some(ctx.add_buffer(&ws));
        }
        for (p, b) in f.params.iter().zip(&launch.params) {
            let names: Vec<(&String, Span)> = match b {
                Binding::Buffer(b) => vec![(&b.name, b.span)],
                Binding::Scalar(s) => vec![(&s.name, s.span)],
                Binding::TensorMap(t) => vec![(&t.buffer.name, t.buffer.span)],
                Binding::Struct(st) => st
                    .fields
                    .iter()
                    .map(|f| match &f.binding {
                        FieldBinding::Buffer(b) => (&b.name, b.span),
                        FieldBinding::Scalar(s) => (&s.name, s.span),
                    })
                    .collect(),
                // A reference to a buffer bound before, not a new name.
                Binding::Primary { .. } => Vec::new(),
            };
            for (name, span) in names {
                if seen_names.insert(name, span).is_some() {
                    return Err(Box::new((
                        Source::Launch,
                        Diagnostic::expected(
                            span,
                            "a name not bound before",
                            format!("`{name}` again"),
                        ),
                    )));
                }
            }
            let pbytes = param_bytes(&p.ty);
            match b {
                Binding::Primary { name, span } => {
                    if pbytes != 8 || p.len.is_some() {
                        return Err(Box::new((
                            Source::Launch,
                            Diagnostic::expected(
                                *span,
                                format!(
                                    "{} for parameter `{}` ({})",
                                    binds(p),
                                    p.name,
                                    declared(p)
                                ),
                                "`--buffer`",
                            )
                            .with_note("a buffer binds a pointer parameter (a 64-bit one)"),
                        )));
                    }
                    let Some(k) = ctx.buffers.iter().position(|b| b.name == *name) else {
                        let names: Vec<String> = ctx
                            .buffers
                            .iter()
                            .map(|b| format!("`{}`", b.name))
                            .collect();
                        return Err(Box::new((
                        Source::Launch,
                        Diagnostic::expected(
                            *span,
                            format!(
                                "a buffer of the primary kernel ({})",
                                if names.is_empty() {
                                    "it binds none".to_string()
                                } else {
                                    names.join(", ")
                                }
                            ),
                            format!("`{name}`"),
                        )
                        .with_note("`--buffer NAME` alone passes the primary kernel's buffer; `--buffer NAME:TYPE[LEN]` binds a new one"),
                    )));
                    };
                    ctx.params
                        .push((p.name.clone(), vec![(0, Val::Ptr(Region::Buffer(k), 0), 8)]));
                }
                Binding::Buffer(b) => {
                    if pbytes != 8 || p.len.is_some() {
                        return Err(Box::new((
                            Source::Launch,
                            Diagnostic::expected(
                                b.span,
                                format!(
                                    "{} for parameter `{}` ({})",
                                    binds(p),
                                    p.name,
                                    declared(p)
                                ),
                                "`--buffer`",
                            )
                            .with_note("a buffer binds a pointer parameter (a 64-bit one)"),
                        )));
                    }
                    let k = ctx.add_buffer(b);
                    ctx.params
                        .push((p.name.clone(), vec![(0, Val::Ptr(Region::Buffer(k), 0), 8)]));
                }
                Binding::TensorMap(t) => {
                    let b = &t.buffer;
                    if pbytes != 1 || p.len != Some(128) {
                        return Err(Box::new((
                        Source::Launch,
                        Diagnostic::expected(
                            b.span,
                            format!("{} for parameter `{}` ({})", binds(p), p.name, declared(p)),
                            "`--tensormap`",
                        )
                        .with_note("a tensor map binds a `.param .b8 NAME[128]` parameter (a `const __grid_constant__ CUtensorMap`)"),
                    )));
                    }
                    let buffer = ctx.add_buffer(b);
                    ctx.params.push((
                        p.name.clone(),
                        vec![(0, Val::Ptr(Region::TensorMap(ctx.tmaps.len()), 0), 128)],
                    ));
                    ctx.tmaps.push(TensorMapInfo {
                        param: p.name.clone(),
                        buffer,
                        map: crate::litmus::tensor::TensorMap {
                            name: p.name.clone(),
                            global: b.name.clone(),
                            dims: t.dims.clone(),
                            boxdims: t.boxdims.clone(),
                            elem: b.elem.bytes(),
                            span: b.span,
                        },
                    });
                }
                Binding::Scalar(s) => {
                    if p.len.is_some() || pbytes == 0 {
                        return Err(Box::new((
                        Source::Launch,
                        unsupported(
                            s.span,
                            format!("parameter `{}` (`.{}`)", p.name, p.ty),
                            "a scalar parameter",
                        )
                        .with_note("a struct passed by value (`.param .align A .b8 NAME[N]`) is bound with `--struct` (docs/kernels.md)"),
                    )));
                    }
                    ctx.params
                        .push((p.name.clone(), vec![(0, Val::Known(s.value), pbytes)]));
                }
                Binding::Struct(st) => {
                    // A struct passed by value: `.param .align A .b8 NAME[N]`.
                    let Some(n) = p.len.filter(|_| pbytes == 1) else {
                        return Err(Box::new((
                        Source::Launch,
                        Diagnostic::expected(
                            st.span,
                            format!("{} for parameter `{}` ({})", binds(p), p.name, declared(p)),
                            "`--struct`",
                        )
                        .with_note("a struct binds a `.param .align A .b8 NAME[N]` parameter (a struct passed by value)"),
                    )));
                    };
                    let mut fields = Vec::new();
                    for fd in &st.fields {
                        let size = fd.bytes();
                        if fd.offset + size > n {
                            return Err(Box::new((
                                Source::Launch,
                                Diagnostic::expected(
                                    fd.span,
                                    format!(
                                        "a field inside parameter `{}` (bytes 0 to {})",
                                        p.name,
                                        n - 1
                                    ),
                                    format!("bytes {} to {}", fd.offset, fd.offset + size - 1),
                                ),
                            )));
                        }
                        let v = match &fd.binding {
                            FieldBinding::Buffer(b) => {
                                Val::Ptr(Region::Buffer(ctx.add_buffer(b)), 0)
                            }
                            FieldBinding::Scalar(s) => Val::Known(s.value),
                        };
                        fields.push((fd.offset as i64, v, size));
                    }
                    ctx.params.push((p.name.clone(), fields));
                }
            }
        }
        // Module variables once (both kernels see the same ones), then the
        // kernel's own.
        let module_vars = if grid_no == 0 { &m.vars[..] } else { &[] };
        for v in module_vars.iter().chain(&f.vars) {
            if matches!(v.space, VarSpace::Local | VarSpace::Param) {
                continue;
            }
            if ctx.var_names.contains_key(&v.name) {
                return Err(ptx(Diagnostic::expected(
                    v.span,
                    "a variable of the dependent kernel whose name the primary kernel does not declare",
                    format!("`{}` again", v.name),
                )));
            }
            let eb = param_bytes(&v.ty).max(1);
            let id = ctx.vars.len();
            ctx.vars.push(VarInfo {
                name: v.name.clone(),
                space: v.space,
                bytes: eb * v.len.unwrap_or(1),
                init: v.init.iter().map(|&x| sext(x, (eb * 8) as u32)).collect(),
                elem_bytes: eb,
                span: v.span,
            });
            ctx.var_names.insert(v.name.clone(), id);
        }
        let live = liveness(f);
        kernel_threads.push((threads.len(), launch.block.iter().product()));
        let [gx, gy, gz] = launch.grid;
        let [bx, by, bz] = launch.block;
        let [cx, cy, cz] = launch.cluster;
        for (k, &c) in launch.cluster.iter().enumerate() {
            if launch.grid[k] % c != 0 {
                return Err(Box::new((
                    Source::Launch,
                    Diagnostic::expected(
                        whole,
                        "a grid whose every dimension is a multiple of the cluster's",
                        format!("grid {:?} and cluster {:?}", launch.grid, launch.cluster),
                    ),
                )));
            }
        }
        for z in 0..gz {
            for y in 0..gy {
                for x in 0..gx {
                    let cta = cta_base + x + gx * (y + gy * z);
                    let (ncx, ncy) = (gx / cx, gy / cy);
                    let cluster = cluster_base + x / cx + ncx * (y / cy + ncy * (z / cz));
                    let rank = x % cx + cx * (y % cy + cy * (z % cz));
                    for tz in 0..bz {
                        for ty in 0..by {
                            for tx in 0..bx {
                                let linear = tx + bx * (ty + by * tz);
                                let sp = Specials {
                                    tid: [tx, ty, tz],
                                    ntid: launch.block,
                                    ctaid: [x, y, z],
                                    nctaid: launch.grid,
                                    laneid: linear % 32,
                                    warpid: linear / 32,
                                    cluster_ctarank: rank,
                                    cluster_nctarank: cx * cy * cz,
                                    cluster_ctaid: [x % cx, y % cy, z % cz],
                                    cluster_nctaid: launch.cluster,
                                    clusterid: [x / cx, y / cy, z / cz],
                                    nclusterid: [gx / cx, gy / cy, gz / cz],
                                    cta,
                                    cta_base,
                                };
                                let _ = cz;
                                let t = threads.len();
                                let mut tl = ThreadLower::new(f, &mut ctx, &live, sp);
                                tl.run()?;
                                elects.extend(tl.elects.iter().map(|&(pc, dst, pred)| {
                                    crate::ir::ElectSite {
                                        thread: t,
                                        pc,
                                        dst,
                                        pred,
                                    }
                                }));
                                threads.push(Thread {
                                    name: format!("P{t}"),
                                    // CUDA threads are lanes of warps of 32, in
                                    // linear thread order (`%warpid` is not
                                    // the warp's number: `linear / 32` is).
                                    placement: Placement {
                                        gpu: 0,
                                        cluster,
                                        cta,
                                        warp: Some(linear / 32),
                                        grid: grid_no as u32,
                                    },
                                    regs: tl.regs,
                                    code: tl.code,
                                    labels: Vec::new(),
                                    agent: None,
                                    sites: tl.sites,
                                    wrap_rmw: true,
                                });
                                wg_members.push((cta, linear));
                                spans.instrs.push(tl.spans);
                                spans.threads.push(f.span);
                                spans.initialised.push(Vec::new());
                                lines.push(tl.lines);
                            }
                        }
                    }
                }
            }
        }
        cta_base += gx * gy * gz;
        cluster_base += (gx / cx) * (gy / cy) * (gz / cz);
    }
    ctx.check_tiles().map_err(ptx)?;
    let base = |f: &Function| demangled_base(&f.name).unwrap_or(&f.name).to_string();
    let mut program = Program {
        name: kernels
            .iter()
            .map(|(f, _)| base(f))
            .collect::<Vec<_>>()
            .join("+"),
        docs: Vec::new(),
        locations: ctx.locations,
        addresses: ctx.addresses,
        threads,
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop: Prop::True,
        },
        filter: None,
        shown: Vec::new(),
        expectation: None,
        elects,
        granularity: Default::default(),
        tc_early: Vec::new(),
        short_warpgroups: Vec::new(),
        tc_unfenced: Vec::new(),
    };
    // Each kernel's warpgroups, under its own block size.
    let mut short = Vec::new();
    for (k, &(first, block)) in kernel_threads.iter().enumerate() {
        let end = kernel_threads
            .get(k + 1)
            .map_or(program.threads.len(), |n| n.0);
        short.extend(short_warpgroups(
            &program,
            &spans,
            &wg_members[first..end],
            first,
            block,
        ));
    }
    program.short_warpgroups = short;
    crate::ir::elect::apply_first(&mut program);
    crate::ir::activemask::apply_first(&mut program);
    if let Err(r) = crate::ir::activemask::check(&program) {
        return Err(ptx(refuse(spans.instr(r.thread, r.pc), r.found, &r.note)));
    }
    let mut loc_types = vec![None; program.locations.len()];
    for b in &ctx.buffers {
        for i in 0..b.len as usize {
            if let Some(a) = program.addresses.get(b.first_addr + i) {
                if let Some(slot) = loc_types.get_mut(a.loc) {
                    *slot = Some((b.data, b.ty));
                }
            }
        }
    }
    Ok(Lowered {
        program,
        spans,
        lines,
        entry: kernels[0].0.name.clone(),
        loc_types,
    })
}

/// The threads of `p` that execute a warpgroup instruction (`wgmma.*`)
/// their warpgroup does not execute together
/// ([`crate::ir::tensor_core::short_warpgroups`]): each thread's warpgroup
/// instructions are named by their place in the PTX, so two threads execute
/// "the same" instruction when it is the same line of the kernel.
fn short_warpgroups(
    p: &Program,
    spans: &SourceMap,
    members: &[(u32, u32)],
    first: usize,
    block: u32,
) -> Vec<crate::ir::tensor_core::ShortWarpgroup> {
    use crate::ir::tensor_core::{WarpgroupMember, is_warpgroup_op};
    let members: Vec<WarpgroupMember> = members
        .iter()
        .enumerate()
        .map(|(k, &(cta, linear))| (first + k, cta, linear))
        .map(|(t, cta, linear)| WarpgroupMember {
            cta,
            linear,
            sequence: p.threads[t]
                .code
                .iter()
                .enumerate()
                .filter(|(_, i)| matches!(i, Instr::Tensor { op } if is_warpgroup_op(op)))
                .map(|(pc, _)| (pc, spans.instrs[t][pc].start))
                .collect(),
        })
        .collect();
    // `short_warpgroups` numbers threads by their place in `members`.
    let mut out = crate::ir::tensor_core::short_warpgroups(&members, block);
    for s in &mut out {
        s.thread += first;
    }
    out
}

/// Parse the launch's condition against the lowered program: `buf[i]`
/// names element `i` of a buffer, `P3:r2` a register of a thread; herd's
/// `/\ \/ ~` and `&& || !` both read.
/// The condition `text` over the lowered kernel `p`: `buf[i]` names an
/// element, `P3:%r1` a register; a constant compared with a buffer element
/// is held as the buffer holds its values (a `uint32` 4294967295 is -1,
/// docs/kernels.md "Values"), and one its type cannot hold is refused at
/// its position (`loc_types`, from [`Lowered::loc_types`]).
pub fn condition(
    p: &Program,
    quant: Quantifier,
    text: &str,
    loc_types: &[Option<(crate::ir::DataType, &'static str)>],
) -> Result<Condition, Diagnostic> {
    use crate::litmus::cond::{TermResolver, parse_prop, thread_index};
    use crate::litmus::lexer::{Cursor, Token, tokenize};
    // `buf[3]` → `buf_3_`, keeping every byte position.
    let mut rewritten = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'[' {
            let j = text[i + 1..].find(']').map(|j| i + 1 + j);
            if let Some(j) = j {
                if j > i + 1 && text[i + 1..j].bytes().all(|c| c.is_ascii_digit()) {
                    rewritten.push('_');
                    rewritten.push_str(&text[i + 1..j]);
                    rewritten.push('_');
                    i = j + 1;
                    continue;
                }
            }
        }
        let ch = text[i..].chars().next().unwrap_or(' ');
        rewritten.push(ch);
        i += ch.len_utf8();
    }
    struct Names<'a> {
        p: &'a Program,
        text: &'a str,
        loc_types: &'a [Option<(crate::ir::DataType, &'static str)>],
    }
    impl TermResolver for Names<'_> {
        fn fit(&mut self, other: &Term, c: Value, at: Span) -> Result<Value, Diagnostic> {
            let Term::Loc(l) = other else { return Ok(c) };
            let Some(&Some((ty, name))) = self.loc_types.get(*l) else {
                return Ok(c);
            };
            // Either spelling of a value of the width: a `uint32`'s
            // 4294967295 or -1, an `int32`'s -1 or 4294967295; at 64 bits
            // every number the condition can write (a `uint64`'s 2^64-1 is
            // written -1).
            let bits = ty.bits();
            let (lo, hi) = if bits >= 64 {
                (Value::MIN, Value::MAX)
            } else {
                (-(1i64 << (bits - 1)), (1i64 << bits) - 1)
            };
            if c < lo || c > hi {
                return Err(Diagnostic::expected(
                    at,
                    format!(
                        "a value of {bits} bits ({lo} to {hi}) for `{}` ({name})",
                        self.p.locations[*l].name
                    ),
                    format!("`{}`", &self.text[at.start..at.end]),
                ));
            }
            Ok(sext(c, bits))
        }
        fn thread_reg(&mut self, thread: &Token<'_>, reg: &Token<'_>) -> Result<Term, Diagnostic> {
            let t = thread_index(thread, self.p.threads.len())?;
            let name = reg.text.trim_start_matches('%');
            match self.p.threads[t].reg_named(name) {
                Some(r) => Ok(Term::Reg { thread: t, reg: r }),
                None => Err(Diagnostic::expected(
                    reg.span,
                    format!("a register that P{t} loads into"),
                    reg.quoted(),
                )),
            }
        }
        fn bare(&mut self, name: &Token<'_>) -> Result<Term, Diagnostic> {
            let orig = &self.text[name.span.start..name.span.end];
            match self.p.address_named(orig) {
                Some(a) => Ok(Term::Loc(self.p.addresses[a].loc)),
                None => Err(Diagnostic::expected(
                    name.span,
                    "an element of a buffer (`NAME[i]`) or a variable of the kernel",
                    format!("`{orig}`"),
                )),
            }
        }
    }
    let toks = tokenize(&rewritten, 0)?;
    let mut cur = Cursor::new(&toks, Span::new(text.len(), text.len()));
    let prop = parse_prop(&mut cur, &mut Names { p, text, loc_types })?;
    if let Some(t) = cur.peek() {
        return Err(Diagnostic::expected(
            t.span,
            "the end of the condition",
            format!("`{}`", &text[t.span.start..t.span.end]),
        ));
    }
    Ok(Condition {
        quantifier: quant,
        prop,
    })
}

/// The launch flags that bind parameter `p`, by its declaration: a 64-bit
/// value may be a pointer; a byte array is a struct passed by value (or, of
/// 128 bytes, a tensor map).
fn binds(p: &super::ast::Param) -> &'static str {
    match (param_bytes(&p.ty), p.len) {
        (1, Some(128)) => "`--tensormap` or `--struct`",
        (_, Some(_)) => "`--struct`",
        (8, None) => "`--buffer` or `--scalar`",
        _ => "`--scalar`",
    }
}

/// A parameter's declaration as PTX writes it (`.u64`, `.b8 [32]`).
fn declared(p: &super::ast::Param) -> String {
    match p.len {
        Some(n) => format!("`.{} [{n}]`", p.ty),
        None => format!("`.{}`", p.ty),
    }
}

/// Bytes of a scalar type name (`u64` → 8); 0 for unknown.
fn param_bytes(ty: &str) -> u64 {
    match ty {
        "b8" | "u8" | "s8" | "pred" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        "b128" => 16,
        _ => 0,
    }
}

/// The special registers of one CUDA thread.
impl Specials {
    /// The CTA (linear index in the grid) of the executing CTA's cluster
    /// whose `%cluster_ctarank` is `rank`, if the cluster has one.
    fn cta_of_rank(&self, rank: i64) -> Option<u32> {
        let [cx, cy, cz] = self.cluster_nctaid;
        let r = u32::try_from(rank).ok().filter(|&r| r < cx * cy * cz)?;
        let at = [r % cx, (r / cx) % cy, r / (cx * cy)];
        let mut c = [0u32; 3];
        for k in 0..3 {
            c[k] = self.ctaid[k] - self.cluster_ctaid[k] + at[k];
        }
        let [gx, gy, _] = self.nctaid;
        Some(self.cta_base + c[0] + gx * (c[1] + gy * c[2]))
    }
}

#[derive(Clone, Copy)]
struct Specials {
    tid: [u32; 3],
    ntid: [u32; 3],
    ctaid: [u32; 3],
    nctaid: [u32; 3],
    laneid: u32,
    warpid: u32,
    cluster_ctarank: u32,
    cluster_nctarank: u32,
    cluster_ctaid: [u32; 3],
    cluster_nctaid: [u32; 3],
    clusterid: [u32; 3],
    nclusterid: [u32; 3],
    cta: u32,
    /// The number of the grid's first CTA among the test's CTAs (the
    /// dependent grid's CTAs follow the primary's).
    cta_base: u32,
}

impl Specials {
    fn get(&self, name: &str) -> Option<u32> {
        let (base, comp) = match name.split_once('.') {
            Some((b, c)) => (b, Some(c)),
            None => (name, None),
        };
        let pick = |v: [u32; 3]| match comp {
            Some("x") => Some(v[0]),
            Some("y") => Some(v[1]),
            Some("z") => Some(v[2]),
            _ => None,
        };
        match base {
            "%tid" => pick(self.tid),
            "%ntid" => pick(self.ntid),
            "%ctaid" => pick(self.ctaid),
            "%nctaid" => pick(self.nctaid),
            "%cluster_ctaid" => pick(self.cluster_ctaid),
            "%cluster_nctaid" => pick(self.cluster_nctaid),
            "%clusterid" => pick(self.clusterid),
            "%nclusterid" => pick(self.nclusterid),
            "%laneid" if comp.is_none() => Some(self.laneid),
            "%warpid" if comp.is_none() => Some(self.warpid),
            "%cluster_ctarank" if comp.is_none() => Some(self.cluster_ctarank),
            "%cluster_nctarank" if comp.is_none() => Some(self.cluster_nctarank),
            "%is_explicit_cluster" if comp.is_none() => Some(1),
            _ => None,
        }
    }
}

/// Registers live before each instruction (backward dataflow to a fixpoint).
fn liveness(f: &Function) -> Vec<Vec<bool>> {
    let n = f.body.len();
    let nregs = f.regs.len();
    let mut live = vec![vec![false; nregs]; n + 1];
    let succs = |pc: usize| -> SmallVec<[usize; 2]> {
        let i = &f.body[pc];
        let op = i.mnemonic.split('.').next().unwrap_or("");
        let mut s = SmallVec::new();
        match op {
            "ret" | "exit" if i.guard.is_none() => {}
            "bra" => {
                if let Some(t) = i.target {
                    s.push(t);
                }
                if i.guard.is_some() {
                    s.push(pc + 1);
                }
            }
            _ => s.push(pc + 1),
        }
        s
    };
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            let i = &f.body[pc];
            let mut out = vec![false; nregs];
            for s in succs(pc) {
                for (o, l) in out.iter_mut().zip(&live[s.min(n)]) {
                    *o |= *l;
                }
            }
            // Destinations: the first operand of instructions that define one
            // (stores, branches and barriers define nothing). A guarded
            // instruction may not execute: its destination stays live.
            let op = i.mnemonic.split('.').next().unwrap_or("");
            let defines = !matches!(
                op,
                "st" | "red"
                    | "bra"
                    | "bar"
                    | "barrier"
                    | "membar"
                    | "fence"
                    | "ret"
                    | "exit"
                    | "cp"
                    | "mbarrier"
                    | "call"
                    // A fragment may be read (accumulation): kept live.
                    | "wgmma"
                    | "tcgen05"
            ) || (op == "mbarrier"
                && matches!(
                    i.mnemonic.split('.').nth(1),
                    Some("arrive" | "arrive_drop" | "test_wait" | "try_wait")
                )
                && matches!(i.operands.first(), Some(Opnd::Reg(..))));
            if defines && i.guard.is_none() {
                if let Some(d) = i.operands.first() {
                    for r in regs_in(d) {
                        if let Opnd::Reg(..) | Opnd::Pair(..) | Opnd::Vector(..) = d {
                            out[r as usize] = false;
                        }
                    }
                }
            }
            let skip = usize::from(defines);
            for o in i.operands.iter().skip(skip) {
                for r in regs_in(o) {
                    out[r as usize] = true;
                }
            }
            if let Some(d) = i.operands.first().filter(|_| defines) {
                // An address operand in first place is read, not written.
                if let Opnd::Addr { .. } = d {
                    for r in regs_in(d) {
                        out[r as usize] = true;
                    }
                }
            }
            if let Some((_, g, _)) = i.guard {
                out[g as usize] = true;
            }
            if out != live[pc] {
                live[pc] = out;
                changed = true;
            }
        }
    }
    live
}

fn regs_in(o: &Opnd) -> SmallVec<[u32; 4]> {
    let mut out = SmallVec::new();
    fn walk(o: &Opnd, out: &mut SmallVec<[u32; 4]>) {
        match o {
            Opnd::Reg(r, _) => out.push(*r),
            Opnd::Addr { base: Some(b), .. } => walk(b, out),
            Opnd::Vector(v, _) | Opnd::List(v, _) => v.iter().for_each(|x| walk(x, out)),
            Opnd::Not(x, _) => walk(x, out),
            Opnd::Pair(a, b, _) => {
                walk(a, out);
                walk(b, out)
            }
            _ => {}
        }
    }
    walk(o, &mut out);
    out
}

/// A place in the IR code whose branch target is to be filled in.
const END: usize = usize::MAX;

/// The most elements one run-time address may name: the cases of its
/// dispatch ([`ThreadLower::dispatch`]).
pub const MAX_DISPATCH: usize = 256;

/// An `[address]` operand whose register holds a run-time address
/// (`Val::Idx`).
struct IndexedAddress {
    /// The PTX register.
    reg: u32,
    /// Where it is written.
    span: Span,
    /// The operand's constant offset (`[%rd1+8]`).
    operand_offset: i64,
    /// The buffer or variable the address points into.
    region: Region,
    /// The IR register holding the run-time part of the byte offset.
    index: usize,
    /// The constant part of the byte offset.
    constant: i64,
}

struct ThreadLower<'a> {
    f: &'a Function,
    ctx: &'a mut Ctx,
    live: &'a [Vec<bool>],
    sp: Specials,
    code: Vec<Instr>,
    spans: Vec<Span>,
    /// Per emitted instruction: the PTX instruction it comes from (its
    /// offset in the module), the same in every thread ([`Thread::sites`]).
    sites: Vec<usize>,
    lines: Vec<Option<Loc>>,
    regs: Vec<Register>,
    reg_names: HashMap<String, usize>,
    /// PTX register → its own IR register.
    own: HashMap<u32, usize>,
    memo: HashMap<(usize, Vec<Val>), usize>,
    /// Per instruction: the live values it was lowered with so far.
    seen: HashMap<usize, Vec<(Vec<Val>, u32)>>,
    /// Pending paths: (pc, env, IR branch to patch, run-time branches the path went through).
    work: Vec<(usize, Vec<Val>, usize, u32)>,
    temps: usize,
    /// The instruction being lowered (for liveness in [`Self::before_write`]).
    pc: usize,
    /// `elect.sync` sites emitted: barrier pc, whether `d` and `p` are written.
    elects: Vec<(usize, bool, bool)>,
    /// Register fragments of tensor-core operations (`lower::tensor_core`).
    tc: tensor_core::Lane,
}

type Env = Vec<Val>;

impl<'a> ThreadLower<'a> {
    fn new(f: &'a Function, ctx: &'a mut Ctx, live: &'a [Vec<bool>], sp: Specials) -> Self {
        ThreadLower {
            f,
            ctx,
            live,
            sp,
            code: Vec::new(),
            spans: Vec::new(),
            sites: Vec::new(),
            lines: Vec::new(),
            regs: Vec::new(),
            reg_names: HashMap::new(),
            own: HashMap::new(),
            memo: HashMap::new(),
            seen: HashMap::new(),
            work: Vec::new(),
            temps: 0,
            pc: 0,
            elects: Vec::new(),
            tc: tensor_core::Lane::default(),
        }
    }

    fn ir_reg(&mut self, name: &str) -> usize {
        if let Some(&r) = self.reg_names.get(name) {
            return r;
        }
        let r = self.regs.len();
        self.regs.push(Register {
            name: name.to_string(),
            init: 0,
        });
        self.reg_names.insert(name.to_string(), r);
        r
    }

    fn own_reg(&mut self, r: u32) -> usize {
        if let Some(&x) = self.own.get(&r) {
            return x;
        }
        let name = self.f.regs[r as usize]
            .name
            .trim_start_matches('%')
            .to_string();
        let x = self.ir_reg(&name);
        self.own.insert(r, x);
        x
    }

    fn temp(&mut self) -> usize {
        self.temps += 1;
        let name = format!("t{}", self.temps);
        self.ir_reg(&name)
    }

    fn emit(&mut self, i: Instr, at: &PInstr) -> Result<usize, Diagnostic> {
        if self.code.len() >= MAX_CODE {
            return Err(unsupported(
                at.span,
                format!("more than {MAX_CODE} instructions of specialised code for one thread"),
                "a kernel whose loops unroll to a bounded size",
            ));
        }
        self.code.push(i);
        self.spans.push(at.span);
        self.sites.push(at.span.start);
        self.lines.push(at.loc);
        Ok(self.code.len() - 1)
    }

    /// Before IR register `x` is overwritten: any other value that refers
    /// to it is copied out first.
    fn before_write(
        &mut self,
        env: &mut Env,
        x: usize,
        keep: Option<u32>,
        at: &PInstr,
    ) -> Result<(), Diagnostic> {
        let live = self.live[self.pc.min(self.live.len() - 1)].clone();
        for k in 0..env.len() {
            if Some(k as u32) == keep {
                continue;
            }
            if !live[k] {
                // Dead here: forget a value that would go stale.
                if matches!(&env[k], Val::Dyn(y) | Val::Idx(_, y, _) if *y == x)
                    || matches!(&env[k], Val::Pred(_, a, b) if *a == Operand::Reg(x) || *b == Operand::Reg(x))
                {
                    env[k] = Val::Undef;
                }
                continue;
            }
            let refers = match &env[k] {
                Val::Dyn(y) | Val::Idx(_, y, _) => *y == x,
                Val::Pred(_, a, b) => *a == Operand::Reg(x) || *b == Operand::Reg(x),
                _ => false,
            };
            if !refers {
                continue;
            }
            let t = self.temp();
            self.emit(
                Instr::Mov {
                    dst: t,
                    src: Operand::Reg(x),
                },
                at,
            )?;
            env[k] = match env[k].clone() {
                Val::Dyn(_) => Val::Dyn(t),
                Val::Idx(r, _, c) => Val::Idx(r, t, c),
                Val::Pred(c, a, b) => {
                    let fix = |o: Operand| {
                        if o == Operand::Reg(x) {
                            Operand::Reg(t)
                        } else {
                            o
                        }
                    };
                    Val::Pred(c, fix(a), fix(b))
                }
                v => v,
            };
        }
        Ok(())
    }

    fn key(&self, pc: usize, env: &Env) -> Vec<Val> {
        let live = &self.live[pc.min(self.live.len() - 1)];
        env.iter()
            .zip(live)
            .map(|(v, &l)| if l { v.clone() } else { Val::Undef })
            .collect()
    }

    fn run(&mut self) -> Result<(), Error> {
        let env = vec![Val::Undef; self.f.regs.len()];
        self.work.push((0, env, END, 0));
        while let Some((pc, env, patch, dyn_count)) = self.work.pop() {
            let start = self.code.len();
            let at = self.path(pc, env, dyn_count).map_err(ptx)?;
            let target = at.unwrap_or(start);
            if patch != END {
                if let Instr::Branch { target: t, .. } = &mut self.code[patch] {
                    *t = target;
                }
            }
        }
        let len = self.code.len();
        for i in &mut self.code {
            if let Instr::Branch { target, .. } = i {
                if *target == END {
                    *target = len;
                }
            }
        }
        // A jump to the end as the last instruction does nothing: drop it
        // (what jumped to it now reaches the end).
        while let Some(Instr::Branch { cond: None, target }) = self.code.last() {
            let len = self.code.len();
            if *target != len {
                break;
            }
            self.code.pop();
            self.spans.pop();
            self.sites.pop();
            self.lines.pop();
            for i in &mut self.code {
                if let Instr::Branch { target, .. } = i {
                    if *target == len {
                        *target = len - 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Lower a path from `pc`. Returns `Some(idx)` if it immediately joins
    /// code lowered before (nothing emitted), else `None` (it starts at the
    /// code's end as it was).
    fn path(
        &mut self,
        mut pc: usize,
        mut env: Env,
        mut dyn_count: u32,
    ) -> Result<Option<usize>, Diagnostic> {
        let mut first = true;
        loop {
            if pc >= self.f.body.len() {
                // Falling off the end: the thread exits.
                if first {
                    return Ok(Some(END));
                }
                return Ok(None);
            }
            self.pc = pc;
            // Join points: memoise (pc, live values).
            let key = self.key(pc, &env);
            if let Some(&idx) = self.memo.get(&(pc, key.clone())) {
                if first {
                    return Ok(Some(idx));
                }
                self.emit(
                    Instr::Branch {
                        cond: None,
                        target: idx,
                    },
                    &self.f.body[pc.saturating_sub(1).min(pc)],
                )?;
                return Ok(None);
            }
            let seen = self.seen.entry(pc).or_default();
            if seen.len() >= MAX_VISITS {
                let i = &self.f.body[pc];
                return Err(unsupported(
                    i.span,
                    format!("a loop that unrolls more than {MAX_VISITS} times"),
                    "a loop with a bounded trip count, or one controlled by a value loaded from memory",
                ));
            }
            if seen.len() >= WIDEN_AT && seen.iter().any(|(_, c)| *c < dyn_count) {
                let widened = self.widen(pc, &mut env, first)?;
                if widened {
                    first = false;
                    continue;
                }
            }
            self.seen
                .get_mut(&pc)
                .expect("just made")
                .push((key.clone(), dyn_count));
            self.memo.insert((pc, key), self.code.len());
            first = false;
            let i = &self.f.body[pc];
            match self.step(pc, i, &mut env, &mut dyn_count)? {
                Next::Go(n) => pc = n,
                Next::End => {
                    self.emit(
                        Instr::Branch {
                            cond: None,
                            target: END,
                        },
                        i,
                    )?;
                    return Ok(None);
                }
            }
        }
    }

    /// Widen the registers whose known values differ from an earlier visit
    /// of `pc`: move each into its own IR register (IR `mov` on this edge).
    fn widen(&mut self, pc: usize, env: &mut Env, _first: bool) -> Result<bool, Diagnostic> {
        let live = self.live[pc].clone();
        let seen = self.seen[&pc].clone();
        let at = &self.f.body[pc];
        let mut changed = false;
        for r in 0..env.len() {
            if !live[r] {
                continue;
            }
            let differs = seen.iter().any(|(s, _)| s[r] != env[r]);
            if !differs {
                continue;
            }
            match env[r].clone() {
                Val::Known(v) => {
                    let x = self.own_reg(r as u32);
                    self.before_write(env, x, Some(r as u32), at)?;
                    self.emit(
                        Instr::Mov {
                            dst: x,
                            src: Operand::Imm(v),
                        },
                        at,
                    )?;
                    env[r] = Val::Dyn(x);
                    changed = true;
                }
                Val::Dyn(y) => {
                    let x = self.own_reg(r as u32);
                    if x != y {
                        self.before_write(env, x, Some(r as u32), at)?;
                        self.emit(
                            Instr::Mov {
                                dst: x,
                                src: Operand::Reg(y),
                            },
                            at,
                        )?;
                        env[r] = Val::Dyn(x);
                        changed = true;
                    }
                }
                Val::Ptr(..) | Val::Idx(..) => {
                    return Err(unsupported(
                        at.span,
                        "an address that changes on every iteration of a loop controlled by a loaded value",
                        "addresses that are constants for each thread",
                    ));
                }
                _ => {}
            }
        }
        Ok(changed)
    }
}

enum Next {
    Go(usize),
    End,
}

/// Width in bits of an integer type modifier.
/// Bytes of one element of a memory instruction's type (`.u32`, `.f16`, ...).
fn scalar_bytes(parts: &[&str]) -> Option<u64> {
    parts.iter().rev().find_map(|p| {
        type_bits(p)
            .map(|(b, _)| u64::from(b.max(8) / 8))
            .or(match *p {
                "f32" => Some(4),
                "f64" => Some(8),
                "f16" | "bf16" => Some(2),
                _ => None,
            })
    })
}

/// The length of a vector access (`.v2`, `.v4`, `.v8`), if it is one.
fn vector_len(parts: &[&str]) -> Option<usize> {
    parts.iter().find_map(|p| match *p {
        "v2" => Some(2usize),
        "v4" => Some(4),
        "v8" => Some(8),
        _ => None,
    })
}

fn type_bits(t: &str) -> Option<(u32, bool)> {
    Some(match t {
        "b8" | "u8" => (8, false),
        "s8" => (8, true),
        "b16" | "u16" => (16, false),
        "s16" => (16, true),
        "b32" | "u32" => (32, false),
        "s32" => (32, true),
        "b64" | "u64" => (64, false),
        "s64" => (64, true),
        "pred" => (1, false),
        _ => return None,
    })
}

fn is_float(t: &str) -> bool {
    matches!(
        t,
        "f16" | "f16x2" | "bf16" | "bf16x2" | "f32" | "f64" | "tf32" | "e4m3" | "e5m2"
    )
}

/// A constant operand of a memory instruction of `bytes`-wide data as the
/// kernel keeps values, a signed number of that width: `st.u32 [x],
/// 0xffffffff` writes -1, as a `uint32` buffer holds it, and `atom.inc.u32`'s
/// bound 0xffffffff is -1, which the unsigned comparison reads back as
/// 0xffffffff (`RmwOp::UInc`).
fn fit_raw(o: RawOperand, bytes: Option<u64>) -> RawOperand {
    match (o, bytes) {
        (RawOperand::Int(v, s), Some(b)) => RawOperand::Int(sext(v, (b * 8) as u32), s),
        (o, _) => o,
    }
}

/// "expected WHAT IS MODELLED, found X" for a form ptxmc reads but does not model.
fn unsupported(at: Span, found: impl Into<String>, expected: impl Into<String>) -> Diagnostic {
    Diagnostic::expected(at, expected, found).with_label("not supported by ptxmc")
}

/// A refusal by name, with why.
fn refuse(at: Span, what: impl Into<String>, note: &str) -> Diagnostic {
    unsupported(at, what, "what ptxmc models (docs/kernels.md)").with_note(note)
}

impl ThreadLower<'_> {
    fn step(
        &mut self,
        pc: usize,
        i: &PInstr,
        env: &mut Env,
        dyn_count: &mut u32,
    ) -> Result<Next, Diagnostic> {
        let parts: Vec<&str> = i.mnemonic.split('.').collect();
        let op = parts[0];
        self.check_pending(i)?;
        self.check_fence(i)?;
        // The guard.
        if let Some((neg, g, gspan)) = i.guard {
            match env[g as usize].clone() {
                Val::Known(v) => {
                    if (v != 0) == neg {
                        return Ok(Next::Go(pc + 1));
                    }
                }
                v @ (Val::Pred(..) | Val::Dyn(_)) => {
                    // The guard's comparison: a `setp` on run-time values, or
                    // a predicate an instruction wrote (`mbarrier.try_wait`:
                    // 0 or 1).
                    let (c, a, b) = match v {
                        Val::Pred(c, a, b) => (c, a, b),
                        Val::Dyn(x) => (BranchCmp::Ne, Operand::Reg(x), Operand::Imm(0)),
                        _ => unreachable!("matched above"),
                    };
                    if op == "bra" {
                        let c = if neg { negate(c) } else { c };
                        let Some(t) = i.target else {
                            return Err(refuse(
                                i.span,
                                "an indirect branch",
                                "branches go to labels",
                            ));
                        };
                        let idx = self.emit(
                            Instr::Branch {
                                cond: Some((c, a, b)),
                                target: END,
                            },
                            i,
                        )?;
                        *dyn_count += 1;
                        self.work.push((t, env.clone(), idx, *dyn_count));
                        return Ok(Next::Go(pc + 1));
                    }
                    // When the guard fails the instruction is skipped: a
                    // run-time branch to a path of its own from the next
                    // instruction, with the registers as they were (the
                    // instruction's destinations keep their old values,
                    // and copies `before_write` makes for it belong to the
                    // executing path only). Where the two paths' live
                    // values agree they join (the memo).
                    let c = if neg { c } else { negate(c) };
                    let idx = self.emit(
                        Instr::Branch {
                            cond: Some((c, a, b)),
                            target: END,
                        },
                        i,
                    )?;
                    *dyn_count += 1;
                    self.work.push((pc + 1, env.clone(), idx, *dyn_count));
                }
                Val::Undef => {
                    return Err(Diagnostic::expected(
                        gspan,
                        "a predicate written before it is read",
                        "one never written on this path",
                    ));
                }
                _ => {
                    return Err(refuse(
                        gspan,
                        "a guard that is not a predicate",
                        "guards are predicates set by `setp`",
                    ));
                }
            }
        }
        let next = match self.indexed_address(i, env) {
            Some(at) => self.dispatch(pc, i, &parts, env, at)?,
            None => self.exec(pc, i, &parts, env)?,
        };
        Ok(next)
    }

    /// The first `[address]` operand of `i` whose register holds an address
    /// resolved at run time (`Val::Idx`).
    fn indexed_address(&self, i: &PInstr, env: &Env) -> Option<IndexedAddress> {
        i.operands.iter().find_map(|o| match o {
            Opnd::Addr {
                base: Some(b),
                offset,
                ..
            } => match b.as_ref() {
                Opnd::Reg(r, rs) => match env[*r as usize] {
                    Val::Idx(region, index, constant) => Some(IndexedAddress {
                        reg: *r,
                        span: *rs,
                        operand_offset: *offset,
                        region,
                        index,
                        constant,
                    }),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
    }

    /// Lower `i`, whose address is resolved at run time, as a dispatch on
    /// the index register: one case per element the access could name (its
    /// address `region + index + constant + operand offset` at an element
    /// boundary, the access's size apart: the ISA's natural alignment),
    /// each lowering `i` at that element, and when no case matches an
    /// undefined step ([`crate::ir::UndefinedStep::OutOfBounds`]) after
    /// which the thread exits. Both engines see ordinary branches on a
    /// register (the value loaded decides the element, as on the GPU), so
    /// nothing in them learns about addresses.
    fn dispatch(
        &mut self,
        pc: usize,
        i: &PInstr,
        parts: &[&str],
        env: &mut Env,
        at: IndexedAddress,
    ) -> Result<Next, Diagnostic> {
        let op = parts[0];
        if !matches!(op, "ld" | "st" | "atom" | "red" | "mbarrier") {
            return Err(refuse(
                at.span,
                format!(
                    "an address computed from a loaded value in `{}`",
                    i.mnemonic
                ),
                "run-time addresses are resolved for `ld`, `st`, `atom`, `red` and `mbarrier` (docs/kernels.md)",
            ));
        }
        // The access's size: its type's, times the vector's length (as
        // `memory` reads them).
        let elem = scalar_bytes(parts).unwrap_or(8);
        let lanes = vector_len(parts).map_or(1, |n| n as u64);
        let size = elem * lanes;
        let (total, name) = match at.region {
            Region::Buffer(b) => {
                let info = &self.ctx.buffers[b];
                (info.len * info.elem_bytes, info.name.clone())
            }
            Region::Var(v, _) => (self.ctx.vars[v].bytes, self.ctx.vars[v].name.clone()),
            Region::TensorMap(_) => {
                return Err(refuse(
                    at.span,
                    "an access to a tensor map at an address computed from a loaded value",
                    "a tensor map is read by tensor copies only",
                ));
            }
        };
        let cases = total / size.max(1);
        if cases == 0 {
            return Err(unsupported(
                at.span,
                format!(
                    "an access of {size} bytes through an address computed from a loaded value into `{name}`, which has {total} bytes"
                ),
                "an access no larger than the buffer or variable it points into",
            ));
        }
        if cases as usize > MAX_DISPATCH {
            return Err(unsupported(
                at.span,
                format!(
                    "an address computed from a loaded value into `{name}`, which has {cases} elements of {size} bytes"
                ),
                format!(
                    "at most {MAX_DISPATCH} elements a run-time address may name (bind a smaller buffer)"
                ),
            ));
        }
        // The destinations' own registers are written in every case: copy
        // out, once, the values that refer to them, so every case ends with
        // the same environment.
        if matches!(op, "ld" | "atom" | "mbarrier") {
            if let Some(first) = i.operands.first() {
                if !matches!(first, Opnd::Addr { .. }) {
                    for r in regs_in(first) {
                        let own = self.own_reg(r);
                        self.before_write(env, own, Some(r), i)?;
                    }
                }
            }
        }
        let base = at.constant.wrapping_add(at.operand_offset);
        let mut branches = Vec::with_capacity(cases as usize);
        for k in 0..cases {
            let off = (k * size) as i64;
            branches.push(self.emit(
                Instr::Branch {
                    cond: Some((
                        BranchCmp::Eq,
                        Operand::Reg(at.index),
                        Operand::Imm(off.wrapping_sub(base)),
                    )),
                    target: END,
                },
                i,
            )?);
        }
        self.emit(
            Instr::Signal {
                kind: crate::ir::SignalKind::Undefined(crate::ir::UndefinedStep::OutOfBounds),
            },
            i,
        )?;
        // After an undefined step the thread exits (`END` is patched to the
        // thread's end by `run`).
        self.emit(
            Instr::Branch {
                cond: None,
                target: END,
            },
            i,
        )?;
        let mut exits = Vec::with_capacity(branches.len());
        let mut after: Option<Env> = None;
        let address = env[at.reg as usize].clone();
        for (k, &b) in branches.iter().enumerate() {
            let here = self.code.len();
            if let Instr::Branch { target, .. } = &mut self.code[b] {
                *target = here;
            }
            let off = (k as u64 * size) as i64;
            let mut e = env.clone();
            e[at.reg as usize] = Val::Ptr(at.region, off.wrapping_sub(at.operand_offset));
            match self.exec(pc, i, parts, &mut e)? {
                Next::Go(n) if n == pc + 1 => {}
                _ => {
                    return Err(refuse(
                        i.mn_span,
                        format!(
                            "`{}` at an address computed from a loaded value",
                            i.mnemonic
                        ),
                        "run-time addresses are resolved for accesses that go on to the next instruction",
                    ));
                }
            }
            // The address register keeps its run-time address unless the
            // instruction wrote it (`ld.u64 %rd1, [%rd1]`).
            if e[at.reg as usize] == Val::Ptr(at.region, off.wrapping_sub(at.operand_offset)) {
                e[at.reg as usize] = address.clone();
            }
            match &after {
                None => after = Some(e),
                Some(a) if *a == e => {}
                Some(_) => {
                    return Err(refuse(
                        i.mn_span,
                        format!(
                            "`{}` at an address computed from a loaded value",
                            i.mnemonic
                        ),
                        "its cases leave different register values (docs/kernels.md)",
                    ));
                }
            }
            exits.push(self.emit(
                Instr::Branch {
                    cond: None,
                    target: END,
                },
                i,
            )?);
        }
        let join = self.code.len();
        for x in exits {
            if let Instr::Branch { target, .. } = &mut self.code[x] {
                *target = join;
            }
        }
        if let Some(a) = after {
            *env = a;
        }
        Ok(Next::Go(pc + 1))
    }

    /// The value of a source operand.
    fn value(&mut self, o: &Opnd, env: &Env, bits: u32) -> Result<Val, Diagnostic> {
        Ok(match o {
            Opnd::Reg(r, s) => match &env[*r as usize] {
                Val::Undef => {
                    return Err(Diagnostic::expected(
                        *s,
                        "a register written before it is read",
                        format!(
                            "`{}`, never written on this path",
                            self.f.regs[*r as usize].name
                        ),
                    ));
                }
                v => v.clone(),
            },
            Opnd::Imm(v, _) => Val::Known(sext(*v, bits.max(1))),
            Opnd::Special(n, _) if n == "%envreg1" || n == "%envreg2" => self.envreg(o, n)?,
            Opnd::Special(n, s) => match self.sp.get(n) {
                Some(v) => Val::Known(i64::from(v)),
                None => {
                    return Err(refuse(
                        *s,
                        format!("special register `{n}`"),
                        "only the thread, CTA, cluster, lane and warp numbers are modelled",
                    ));
                }
            },
            Opnd::Name(n, s) => match self.ctx.var_names.get(n) {
                Some(&v) => Val::Ptr(Region::Var(v, self.sp.cta), 0),
                // `mov.b64 %rd, tmap_param`: the tensor map's address.
                None if self.ctx.tmaps.iter().any(|t| &t.param == n) => {
                    let k = self.ctx.tmaps.iter().position(|t| &t.param == n).unwrap();
                    Val::Ptr(Region::TensorMap(k), 0)
                }
                None => {
                    return Err(Diagnostic::expected(
                        *s,
                        "a register, a constant or a variable",
                        format!("`{n}`"),
                    ));
                }
            },
            other => {
                return Err(refuse(
                    other.span(),
                    "this operand form here",
                    "operands are registers, constants or variables",
                ));
            }
        })
    }

    /// `%envreg1` / `%envreg2`: the high and low halves of the grid
    /// workspace's address in a cooperative launch (cooperative_groups/
    /// details/driver_abi.h, `get_grid_workspace`); refused otherwise.
    fn envreg(&self, o: &Opnd, name: &str) -> Result<Val, Diagnostic> {
        match self.ctx.workspace {
            Some(ws) => Ok(Val::Half(Region::Buffer(ws), name == "%envreg1")),
            None => Err(refuse(
                o.span(),
                format!("special register `{name}` outside a cooperative launch"),
                "it holds half of the grid workspace that `cg::this_grid().sync()` uses, which only a cooperative launch has: add `--cooperative` to the launch (docs/kernels.md, \"Grid-wide sync\")",
            )),
        }
    }

    /// `bfi.bB d, a, b, pos, len`: `b` with `len` bits of `a` inserted at
    /// bit `pos` (PTX ISA, `bfi`: both clamped to 255, bits past the width
    /// dropped), of known values; or the grid workspace's address from its
    /// two halves.
    fn bfi(&mut self, i: &PInstr, env: &Env, bits: u32) -> Result<Val, Diagnostic> {
        let ops = &i.operands;
        let a = self.value(&ops[1], env, bits)?;
        let b = self.value(&ops[2], env, bits)?;
        let pos = self.value(&ops[3], env, 32)?;
        let len = self.value(&ops[4], env, 32)?;
        match (a, b, pos, len) {
            (Val::Half(r1, true), Val::Half(r2, false), Val::Known(32), Val::Known(32))
                if r1 == r2 && bits == 64 =>
            {
                Ok(Val::Ptr(r1, 0))
            }
            (Val::Known(a), Val::Known(b), Val::Known(pos), Val::Known(len)) => {
                let (pos, len) = ((pos & 0xff) as u32, (len & 0xff) as u32);
                let mut f = b;
                for k in 0..len {
                    let at = pos + k;
                    if at >= bits || k >= 64 {
                        break;
                    }
                    let bit = (a >> k) & 1;
                    f = (f & !(1i64 << at)) | (bit << at);
                }
                Ok(Val::Known(sext(f, bits)))
            }
            (a, b, _, _)
                if matches!(a, Val::Half(..) | Val::Ptr(..))
                    || matches!(b, Val::Half(..) | Val::Ptr(..)) =>
            {
                Err(refuse(
                    i.span,
                    "`bfi` of an address other than joining the grid workspace's halves",
                    "addresses are joined only as `bfi.b64 d, %envreg1, %envreg2, 32, 32` (after `cvt.u64.u32`)",
                ))
            }
            _ => Err(refuse(
                i.mn_span,
                format!("`{}` of a value loaded at run time", i.mnemonic),
                "bit-field insertion is modelled on known values only",
            )),
        }
    }

    /// The register written by a destination operand.
    fn dst(&self, o: &Opnd) -> Result<u32, Diagnostic> {
        match o {
            Opnd::Reg(r, _) => Ok(*r),
            other => Err(refuse(
                other.span(),
                "this destination",
                "destinations are single registers",
            )),
        }
    }

    /// An operand of the IR for a value, materialising it if needed.
    fn operand(&self, v: &Val, s: Span) -> Result<Operand, Diagnostic> {
        match v {
            Val::Known(k) => Ok(Operand::Imm(*k)),
            Val::Dyn(r) => Ok(Operand::Reg(*r)),
            Val::Ptr(..) | Val::Idx(..) => Err(refuse(
                s,
                "computing with an address beyond adding offsets",
                "addresses are buffer or variable elements at constant offsets, or plus an index computed from a loaded value",
            )),
            Val::Pred(..) => Err(refuse(
                s,
                "using a predicate computed from a loaded value as a number",
                "such predicates may only guard branches and instructions",
            )),
            Val::Half(..) => Err(refuse(
                s,
                "computing with half of the grid workspace's address",
                "its halves (`%envreg1`, `%envreg2`) are joined by `bfi.b64 d, high, low, 32, 32`",
            )),
            Val::Undef => Err(Diagnostic::expected(s, "a value", "an unwritten register")),
        }
    }

    /// Write `v` to PTX register `r`.
    fn set(&mut self, env: &mut Env, r: u32, v: Val) {
        env[r as usize] = v;
    }

    /// Emit IR for a dynamic `a op b` at `bits` into `r`'s own register.
    #[allow(clippy::too_many_arguments)]
    fn dyn_arith(
        &mut self,
        env: &mut Env,
        r: u32,
        op: ArithOp,
        a: Operand,
        b: Operand,
        bits: u32,
        at: &PInstr,
    ) -> Result<(), Diagnostic> {
        let x = self.own_reg(r);
        self.before_write(env, x, Some(r), at)?;
        self.emit(Instr::Arith { op, dst: x, a, b }, at)?;
        self.sext_in_place(x, bits, at)?;
        env[r as usize] = Val::Dyn(x);
        Ok(())
    }

    /// `x = sext(x, bits)` in IR: `((x & m) ^ s) - s` with `s` the sign bit.
    fn sext_in_place(&mut self, x: usize, bits: u32, at: &PInstr) -> Result<(), Diagnostic> {
        if bits >= 64 {
            return Ok(());
        }
        let mask = (1i64 << bits) - 1;
        let sign = 1i64 << (bits - 1);
        self.emit(
            Instr::Arith {
                op: ArithOp::And,
                dst: x,
                a: Operand::Reg(x),
                b: Operand::Imm(mask),
            },
            at,
        )?;
        self.emit(
            Instr::Arith {
                op: ArithOp::Xor,
                dst: x,
                a: Operand::Reg(x),
                b: Operand::Imm(sign),
            },
            at,
        )?;
        self.emit(
            Instr::Arith {
                op: ArithOp::Sub,
                dst: x,
                a: Operand::Reg(x),
                b: Operand::Imm(sign),
            },
            at,
        )?;
        Ok(())
    }

    fn exec(
        &mut self,
        pc: usize,
        i: &PInstr,
        parts: &[&str],
        env: &mut Env,
    ) -> Result<Next, Diagnostic> {
        let op = parts[0];
        let ty = parts
            .iter()
            .rev()
            .copied()
            .find(|p| type_bits(p).is_some() || is_float(p));
        if let Some(t) = ty {
            if is_float(t)
                && !matches!(
                    op,
                    "ld" | "st" | "mov" | "atom" | "red" | "wgmma" | "tcgen05"
                )
            {
                return Err(refuse(
                    i.mn_span,
                    format!("`{}`", i.mnemonic),
                    "floating-point arithmetic is not modelled (values are opaque bit patterns)",
                ));
            }
        }
        let (bits, signed) = ty.and_then(type_bits).unwrap_or((64, false));
        let ops = &i.operands;
        let need = |n: usize| -> Result<(), Diagnostic> {
            if ops.len() == n {
                Ok(())
            } else {
                Err(Diagnostic::expected(
                    i.span,
                    format!("{n} operands for `{}`", i.mnemonic),
                    format!("{}", ops.len()),
                ))
            }
        };
        match op {
            "ret" | "exit" => return Ok(Next::End),
            "bra" => {
                let Some(t) = i.target else {
                    return Err(refuse(
                        i.span,
                        "an indirect branch",
                        "branches go to labels",
                    ));
                };
                return Ok(Next::Go(t));
            }
            "mov" => {
                need(2)?;
                let d = self.dst(&ops[0])?;
                let v = self.value(&ops[1], env, bits)?;
                let v = match v {
                    Val::Known(k) => Val::Known(sext(k, bits)),
                    v => v,
                };
                self.set(env, d, v);
            }
            "mapa" => {
                // `mapa d, a, rank`: the same shared variable in the CTA of
                // the cluster whose rank is `rank` (PTX ISA, `mapa`): the
                // address names that CTA's copy.
                need(3)?;
                let d = self.dst(&ops[0])?;
                let v = self.value(&ops[1], env, bits)?;
                let rank = self.value(&ops[2], env, bits)?;
                match (v, rank) {
                    (Val::Ptr(Region::Var(var, _), off), Val::Known(r))
                        if self.ctx.vars[var].space == VarSpace::Shared =>
                    {
                        let Some(cta) = self.sp.cta_of_rank(r) else {
                            return Err(Diagnostic::expected(
                                ops[2].span(),
                                format!(
                                    "a CTA rank of the cluster (0..{})",
                                    self.sp.cluster_nctarank
                                ),
                                format!("{r}"),
                            ));
                        };
                        self.set(env, d, Val::Ptr(Region::Var(var, cta), off));
                    }
                    (_, Val::Known(_)) => {
                        return Err(refuse(
                            ops[1].span(),
                            "`mapa` of a value that is not a shared variable's address",
                            "distributed shared memory is reached through shared variables",
                        ));
                    }
                    _ => {
                        return Err(refuse(
                            ops[2].span(),
                            "`mapa` to a CTA rank computed from a loaded value",
                            "the CTA a `mapa` names must be known when the kernel is lowered (docs/kernels.md)",
                        ));
                    }
                }
            }
            "cvta" => {
                need(2)?;
                let d = self.dst(&ops[0])?;
                let v = self.value(&ops[1], env, bits)?;
                match v {
                    Val::Ptr(..) | Val::Idx(..) => self.set(env, d, v),
                    _ => {
                        return Err(refuse(
                            ops[1].span(),
                            "`cvta` of a value that is not a known address",
                            "addresses come from buffer parameters and variables",
                        ));
                    }
                }
            }
            "cvt" => {
                need(2)?;
                // cvt.DST.SRC: the last type is the source's.
                let tys: Vec<&str> = parts
                    .iter()
                    .copied()
                    .filter(|p| type_bits(p).is_some() || is_float(p))
                    .collect();
                if tys.len() != 2
                    || tys.iter().any(|t| is_float(t))
                    || parts.iter().any(|p| p.starts_with("sat"))
                {
                    return Err(refuse(
                        i.mn_span,
                        format!("`{}`", i.mnemonic),
                        "only integer conversions are modelled",
                    ));
                }
                let (db, _) = type_bits(tys[0]).expect("checked");
                let (sb, ss) = type_bits(tys[1]).expect("checked");
                let d = self.dst(&ops[0])?;
                let v = self.value(&ops[1], env, sb)?;
                match v {
                    Val::Known(k) => {
                        let k = if ss { sext(k, sb) } else { zext(k, sb) };
                        self.set(env, d, Val::Known(sext(k, db)));
                    }
                    Val::Ptr(..) | Val::Idx(..) => self.set(env, d, v),
                    // Zero-extending an address's half keeps it one.
                    Val::Half(..) if !ss && sb == 32 && db == 64 => self.set(env, d, v),
                    Val::Dyn(y) => {
                        let x = self.own_reg(d);
                        self.before_write(env, x, Some(d), i)?;
                        if !ss && sb < 64 && db > sb {
                            self.emit(
                                Instr::Arith {
                                    op: ArithOp::And,
                                    dst: x,
                                    a: Operand::Reg(y),
                                    b: Operand::Imm((1i64 << sb) - 1),
                                },
                                i,
                            )?;
                        } else {
                            self.emit(
                                Instr::Mov {
                                    dst: x,
                                    src: Operand::Reg(y),
                                },
                                i,
                            )?;
                        }
                        self.sext_in_place(x, db.min(sb.max(db)), i)?;
                        env[d as usize] = Val::Dyn(x);
                    }
                    other => return Err(self.operand(&other, ops[1].span()).unwrap_err()),
                }
            }
            "bfi" => {
                need(5)?;
                let d = self.dst(&ops[0])?;
                let v = self.bfi(i, env, bits)?;
                self.set(env, d, v);
            }
            "add" | "sub" | "mul" | "and" | "or" | "xor" | "mad" | "shl" | "shr" | "div"
            | "rem" | "min" | "max" => {
                let wide = parts.contains(&"wide");
                if wide && bits >= 64 {
                    return Err(refuse(
                        i.mn_span,
                        format!("`{}`", i.mnemonic),
                        "`.wide` takes 16- or 32-bit operands",
                    ));
                }
                let hi = parts.contains(&"hi");
                if parts.iter().any(|p| matches!(*p, "cc" | "sat"))
                    || (op == "addc" || op == "subc")
                {
                    return Err(refuse(
                        i.mn_span,
                        format!("`{}`", i.mnemonic),
                        "carry and saturating arithmetic are not modelled",
                    ));
                }
                if hi {
                    return Err(refuse(
                        i.mn_span,
                        format!("`{}`", i.mnemonic),
                        "the high half of a product is not modelled",
                    ));
                }
                let n = if op == "mad" { 4 } else { 3 };
                need(n)?;
                let d = self.dst(&ops[0])?;
                let a = self.value(&ops[1], env, bits)?;
                let b = self.value(
                    &ops[2],
                    env,
                    if matches!(op, "shl" | "shr") {
                        32
                    } else {
                        bits
                    },
                )?;
                let c = if op == "mad" {
                    Some(self.value(&ops[3], env, if wide { 64 } else { bits })?)
                } else {
                    None
                };
                let out_bits = if wide { bits * 2 } else { bits };
                // Widening operands first (`mul.wide.u32`: zero- or sign-extend).
                let widen = |v: Val| match v {
                    Val::Known(k) if wide => {
                        Val::Known(if signed { sext(k, bits) } else { zext(k, bits) })
                    }
                    v => v,
                };
                let (a, b) = (widen(a), widen(b));
                let r = self.arith(op, signed, out_bits, bits, a, b, c, env, d, i, wide)?;
                if let Some(v) = r {
                    self.set(env, d, v);
                }
            }
            "neg" | "not" | "abs" => {
                need(2)?;
                let d = self.dst(&ops[0])?;
                let a = self.value(&ops[1], env, bits)?;
                match a {
                    Val::Known(k) => {
                        let v = match op {
                            "neg" => k.wrapping_neg(),
                            "not" => !k,
                            _ => k.wrapping_abs(),
                        };
                        self.set(env, d, Val::Known(sext(v, bits)));
                    }
                    Val::Dyn(y) if op != "abs" => {
                        let (aop, x, yv) = if op == "neg" {
                            (ArithOp::Sub, Operand::Imm(0), Operand::Reg(y))
                        } else {
                            (ArithOp::Xor, Operand::Reg(y), Operand::Imm(-1))
                        };
                        self.dyn_arith(env, d, aop, x, yv, bits, i)?;
                    }
                    Val::Pred(c, x, y) if op == "not" && bits == 1 => {
                        self.set(env, d, Val::Pred(negate(c), x, y))
                    }
                    other => {
                        self.operand(&other, ops[1].span())?;
                        return Err(refuse(
                            i.mn_span,
                            format!("`{}` of a loaded value", i.mnemonic),
                            "dynamic `abs` is not modelled",
                        ));
                    }
                }
            }
            "setp" => self.setp(parts, i, env, bits, signed)?,
            "selp" => {
                need(4)?;
                let d = self.dst(&ops[0])?;
                let c = self.value(&ops[3], env, 1)?;
                match c {
                    Val::Known(k) => {
                        let v = self.value(&ops[if k != 0 { 1 } else { 2 }], env, bits)?;
                        self.set(env, d, v);
                    }
                    Val::Dyn(x)
                        if matches!(
                            (
                                self.value(&ops[1], env, bits)?,
                                self.value(&ops[2], env, bits)?
                            ),
                            (Val::Known(1), Val::Known(0))
                        ) =>
                    {
                        // `selp d, 1, 0, p` of a predicate an instruction wrote
                        // (0 or 1, `mbarrier.try_wait`): `d` is `p` (no code, so a
                        // wait loop stays a spin loop).
                        self.set(env, d, Val::Dyn(x));
                    }
                    Val::Pred(..) | Val::Dyn(_) => {
                        // Decided at run time: `d = false value; if cond: d = true value`.
                        let (c, a, b) = match c {
                            Val::Pred(c, a, b) => (c, a, b),
                            Val::Dyn(x) => (BranchCmp::Ne, Operand::Reg(x), Operand::Imm(0)),
                            _ => unreachable!("matched above"),
                        };
                        let t = self.value(&ops[1], env, bits)?;
                        let f = self.value(&ops[2], env, bits)?;
                        let (t, f) = (
                            self.operand(&t, ops[1].span())?,
                            self.operand(&f, ops[2].span())?,
                        );
                        let x = self.own_reg(d);
                        // The operands may be `x` itself: take copies first.
                        let keep = |o: Operand, this: &mut Self| -> Result<Operand, Diagnostic> {
                            if o == Operand::Reg(x) {
                                let tmp = this.temp();
                                this.emit(Instr::Mov { dst: tmp, src: o }, i)?;
                                Ok(Operand::Reg(tmp))
                            } else {
                                Ok(o)
                            }
                        };
                        let (t, a, b) = (keep(t, self)?, keep(a, self)?, keep(b, self)?);
                        self.before_write(env, x, Some(d), i)?;
                        self.emit(Instr::Mov { dst: x, src: f }, i)?;
                        let here = self.code.len();
                        self.emit(
                            Instr::Branch {
                                cond: Some((negate(c), a, b)),
                                target: here + 2,
                            },
                            i,
                        )?;
                        self.emit(Instr::Mov { dst: x, src: t }, i)?;
                        env[d as usize] = Val::Dyn(x);
                    }
                    other => {
                        self.operand(&other, ops[3].span())?;
                    }
                }
            }
            "ld" if parts.get(1) == Some(&"param") => {
                need(2)?;
                // `ld.param.v2.u32 {%r1, %r2}, [P+8]`: consecutive fields.
                let dsts: Vec<u32> = match &ops[0] {
                    Opnd::Vector(items, _) => items
                        .iter()
                        .map(|o| self.dst(o))
                        .collect::<Result<_, _>>()?,
                    o => vec![self.dst(o)?],
                };
                let Opnd::Addr {
                    base: Some(b),
                    offset,
                    span,
                } = &ops[1]
                else {
                    return Err(Diagnostic::expected(
                        ops[1].span(),
                        "`[parameter]`",
                        "another operand",
                    ));
                };
                let Opnd::Name(n, _) = &**b else {
                    return Err(refuse(
                        *span,
                        "a parameter address held in a register",
                        "`ld.param` names the parameter",
                    ));
                };
                let Some((_, fields)) = self.ctx.params.iter().find(|(p, _)| p == n).cloned()
                else {
                    return Err(refuse(
                        *span,
                        format!("`{n}`, which is not a parameter of the kernel"),
                        "parameters of called functions are not modelled (calls are not inlined yet)",
                    ));
                };
                let read = u64::from(bits / 8);
                let whole = matches!(&fields[..], [(0, _, _)]);
                for (k, d) in dsts.into_iter().enumerate() {
                    let at = offset.wrapping_add(k as i64 * read as i64);
                    match fields
                        .iter()
                        .find(|(o, _, s)| *o == at && *s == read.max(1))
                    {
                        Some((_, v, _)) => self.set(env, d, v.clone()),
                        None if whole => {
                            let size = fields[0].2;
                            return Err(refuse(
                                *span,
                                format!(
                                    "a {read}-byte read at offset {at} of a {size}-byte parameter"
                                ),
                                "parameters are read whole",
                            ));
                        }
                        None => {
                            let list = fields
                                .iter()
                                .map(|(o, _, s)| format!("{s} bytes at {o}"))
                                .collect::<Vec<_>>()
                                .join(", ");
                            return Err(refuse(
                                *span,
                                format!(
                                    "a {read}-byte read at byte {at} of struct parameter `{n}`"
                                ),
                                &format!(
                                    "the launch binds its fields ({list}; `--struct`), and a read is one whole field"
                                ),
                            ));
                        }
                    }
                }
            }
            "ld" | "st" | "atom" | "red" | "mbarrier" | "cp" | "membar" | "fence" | "bar"
            | "barrier" => {
                if !self.tmem_slot(i, parts, env)? {
                    self.memory(pc, i, parts, env)?;
                }
            }
            "elect" => self.elect(i, parts, env)?,
            "activemask" => self.activemask(i, parts, env)?,
            // `griddepcontrol.wait` / `.launch_dependents` (PTX ISA,
            // "griddepcontrol"): the primary kernel is grid 0 and a
            // `--dependent` kernel grid 1; `model::griddep` gives both
            // their meaning from the threads' grids (`docs/griddep.md`).
            "griddepcontrol" => {
                let wait = match parts.get(1..) {
                    Some(["wait"]) => true,
                    Some(["launch_dependents"]) => false,
                    _ => {
                        return Err(refuse(
                            i.mn_span,
                            format!("`{}`", i.mnemonic),
                            "`griddepcontrol.wait` or `griddepcontrol.launch_dependents`",
                        ));
                    }
                };
                if let Some(o) = i.operands.first() {
                    return Err(Diagnostic::expected(o.span(), "no operands", "an operand"));
                }
                self.emit(Instr::GridDep { wait }, i)?;
            }
            // `prefetch{.space}.tensormap [a]` brings the tensor map into a
            // cache (PTX ISA, "prefetch, prefetchu"): no value changes and
            // nothing is ordered, so it lowers to nothing.
            "prefetch" if parts.contains(&"tensormap") => {}
            "tensormap" => {
                return Err(refuse(
                    i.mn_span,
                    format!("`{}`", i.mnemonic),
                    "a tensor map that changes at run time is not modelled: the elements a tensor copy moves are fixed by the `--tensormap` binding when the kernel is lowered (docs/async.md 8)",
                ));
            }
            "wgmma" | "tcgen05" => self.tensor_core(i, parts, env)?,
            "call" => {
                return Err(refuse(
                    i.mn_span,
                    "`call`",
                    "calls to `.func` are not inlined yet; compile with the callee inlined (`__forceinline__`)",
                ));
            }
            _ => {
                return Err(refuse(
                    i.mn_span,
                    format!("`{}`", i.mnemonic),
                    "this instruction is outside what ptxmc models",
                ));
            }
        }
        Ok(Next::Go(pc + 1))
    }

    #[allow(clippy::too_many_arguments)]
    fn arith(
        &mut self,
        op: &str,
        signed: bool,
        out_bits: u32,
        in_bits: u32,
        a: Val,
        b: Val,
        c: Option<Val>,
        env: &mut Env,
        d: u32,
        i: &PInstr,
        wide: bool,
    ) -> Result<Option<Val>, Diagnostic> {
        let span = i.mn_span;
        // Known ⊕ Known.
        if let (Val::Known(x), Val::Known(y)) = (&a, &b) {
            let (x, y) = (*x, *y);
            let v = match op {
                "add" => x.wrapping_add(y),
                "sub" => x.wrapping_sub(y),
                "mul" | "mad" => x.wrapping_mul(y),
                "and" => x & y,
                "or" => x | y,
                "xor" => x ^ y,
                "shl" => {
                    if (y as u64) >= u64::from(in_bits) {
                        0
                    } else {
                        x.wrapping_shl(y as u32)
                    }
                }
                "shr" => {
                    let s = (y as u64).min(u64::from(in_bits) - 1 + u64::from(!signed)) as u32;
                    if signed {
                        sext(x, in_bits) >> s.min(63)
                    } else if s >= 64 || s >= in_bits {
                        0
                    } else {
                        ((zext(x, in_bits) as u64) >> s) as i64
                    }
                }
                "div" | "rem" => {
                    if y == 0 {
                        return Err(Diagnostic::expected(
                            span,
                            "a division by a non-zero value",
                            "a division by zero",
                        ));
                    }
                    let (x, y) = if signed {
                        (sext(x, in_bits), sext(y, in_bits))
                    } else {
                        (zext(x, in_bits), zext(y, in_bits))
                    };
                    if signed {
                        if op == "div" {
                            x.wrapping_div(y)
                        } else {
                            x.wrapping_rem(y)
                        }
                    } else {
                        let (x, y) = (x as u64, y as u64);
                        (if op == "div" { x / y } else { x % y }) as i64
                    }
                }
                "min" | "max" => {
                    let (x, y) = if signed {
                        (sext(x, in_bits), sext(y, in_bits))
                    } else {
                        (zext(x, in_bits), zext(y, in_bits))
                    };
                    let lt = if signed {
                        x < y
                    } else {
                        (x as u64) < (y as u64)
                    };
                    if (op == "min") == lt { x } else { y }
                }
                _ => unreachable!("arith ops only"),
            };
            let v = match (op, c) {
                ("mad", Some(Val::Known(z))) => v.wrapping_add(z),
                ("mad", Some(Val::Ptr(r, o))) => return Ok(Some(Val::Ptr(r, o.wrapping_add(v)))),
                ("mad", Some(other)) => {
                    let z = self.operand(&other, span)?;
                    self.dyn_arith(
                        env,
                        d,
                        ArithOp::Add,
                        Operand::Imm(sext(v, out_bits)),
                        z,
                        out_bits,
                        i,
                    )?;
                    return Ok(None);
                }
                _ => v,
            };
            return Ok(Some(Val::Known(sext(v, out_bits))));
        }
        // Address arithmetic: pointer ± known, known + pointer, pointer - pointer.
        match (op, &a, &b) {
            ("add", Val::Ptr(r, o), Val::Known(k)) | ("add", Val::Known(k), Val::Ptr(r, o))
                if out_bits >= 32 =>
            {
                return Ok(Some(Val::Ptr(*r, o.wrapping_add(*k))));
            }
            ("sub", Val::Ptr(r, o), Val::Known(k)) if out_bits >= 32 => {
                return Ok(Some(Val::Ptr(*r, o.wrapping_sub(*k))));
            }
            ("sub", Val::Ptr(r1, o1), Val::Ptr(r2, o2)) if r1 == r2 => {
                return Ok(Some(Val::Known(o1.wrapping_sub(*o2))));
            }
            _ => {}
        }
        // A pointer plus an index computed from a loaded value: an address
        // resolved at run time (`Val::Idx`).
        if out_bits >= 32 {
            match (op, &a, &b) {
                ("add", Val::Ptr(r, o), Val::Dyn(x)) | ("add", Val::Dyn(x), Val::Ptr(r, o)) => {
                    return Ok(Some(Val::Idx(*r, *x, *o)));
                }
                ("add", Val::Idx(r, x, o), Val::Known(k))
                | ("add", Val::Known(k), Val::Idx(r, x, o)) => {
                    return Ok(Some(Val::Idx(*r, *x, o.wrapping_add(*k))));
                }
                ("sub", Val::Idx(r, x, o), Val::Known(k)) => {
                    return Ok(Some(Val::Idx(*r, *x, o.wrapping_sub(*k))));
                }
                ("add", Val::Idx(r, x, o), Val::Dyn(y))
                | ("add", Val::Dyn(y), Val::Idx(r, x, o)) => {
                    let (r, x, o, y) = (*r, *x, *o, *y);
                    let own = self.own_reg(d);
                    self.before_write(env, own, Some(d), i)?;
                    self.emit(
                        Instr::Arith {
                            op: ArithOp::Add,
                            dst: own,
                            a: Operand::Reg(x),
                            b: Operand::Reg(y),
                        },
                        i,
                    )?;
                    // A 32-bit address wraps at 32 bits, as every value.
                    self.sext_in_place(own, out_bits, i)?;
                    return Ok(Some(Val::Idx(r, own, o)));
                }
                _ => {}
            }
        }
        // A shared address used as a number (a matrix descriptor's start
        // field): its address in the shared window (`lower::tensor_core`).
        if let Some((a, b)) = self.ctx.numbers(op, &a, &b) {
            return self.arith(op, signed, out_bits, in_bits, a, b, c, env, d, i, wide);
        }
        // `mad` of a loaded value onto an address (`mad.wide.s32 d, i, 4,
        // base`, how nvcc indexes an array): the product in `d`'s own
        // register, then the address plus it.
        if op == "mad" && out_bits >= 32 {
            if let Some(Val::Ptr(r, o)) = c {
                let product = self.arith(
                    "mul", signed, out_bits, in_bits, a, b, None, env, d, i, wide,
                )?;
                return match product.unwrap_or_else(|| env[d as usize].clone()) {
                    Val::Dyn(x) => Ok(Some(Val::Idx(r, x, o))),
                    Val::Known(k) => Ok(Some(Val::Ptr(r, o.wrapping_add(k)))),
                    _ => Err(refuse(
                        span,
                        "an address offset that is not a number",
                        "addresses are a pointer plus a number",
                    )),
                };
            }
            if let Some(Val::Idx(r, y, o)) = c {
                // The addend's register survives the product written to
                // `d`'s own register (`mad d, i, 4, d`).
                let own = self.own_reg(d);
                let y = if y == own {
                    let t = self.temp();
                    self.emit(
                        Instr::Mov {
                            dst: t,
                            src: Operand::Reg(y),
                        },
                        i,
                    )?;
                    t
                } else {
                    y
                };
                let product = self.arith(
                    "mul", signed, out_bits, in_bits, a, b, None, env, d, i, wide,
                )?;
                let addend = match product.unwrap_or_else(|| env[d as usize].clone()) {
                    Val::Dyn(x) => Operand::Reg(x),
                    Val::Known(k) => Operand::Imm(k),
                    _ => {
                        return Err(refuse(
                            span,
                            "an address offset that is not a number",
                            "addresses are a pointer plus a number",
                        ));
                    }
                };
                self.before_write(env, own, Some(d), i)?;
                self.emit(
                    Instr::Arith {
                        op: ArithOp::Add,
                        dst: own,
                        a: Operand::Reg(y),
                        b: addend,
                    },
                    i,
                )?;
                self.sext_in_place(own, out_bits, i)?;
                return Ok(Some(Val::Idx(r, own, o)));
            }
        }
        // Dynamic arithmetic.
        let aop = match op {
            "add" => ArithOp::Add,
            "sub" => ArithOp::Sub,
            "mul" => ArithOp::Mul,
            "mad" => ArithOp::Mul,
            "and" => ArithOp::And,
            "or" => ArithOp::Or,
            "xor" => ArithOp::Xor,
            "shl" => {
                if let Val::Known(k) = b {
                    if (0..i64::from(in_bits)).contains(&k) {
                        let x = self.operand(&a, span)?;
                        self.dyn_arith(
                            env,
                            d,
                            ArithOp::Mul,
                            x,
                            Operand::Imm(1i64 << k),
                            out_bits,
                            i,
                        )?;
                        return Ok(None);
                    }
                }
                return Err(refuse(
                    span,
                    "a shift of a loaded value by a loaded amount",
                    "dynamic shifts are by constants only",
                ));
            }
            _ => {
                return Err(refuse(
                    span,
                    format!("`{op}` of a value loaded from memory"),
                    "dynamic arithmetic is add, sub, mul, mad, and, or, xor, not, neg and shl by a constant",
                ));
            }
        };
        let (x, y) = (self.operand(&a, span)?, self.operand(&b, span)?);
        // `.wide` of a dynamic 32-bit operand: extend it first.
        let (x, y) = if wide {
            let ext = |o: Operand, this: &mut Self| -> Result<Operand, Diagnostic> {
                match o {
                    Operand::Reg(r) if !signed => {
                        let t = this.temp();
                        this.emit(
                            Instr::Arith {
                                op: ArithOp::And,
                                dst: t,
                                a: Operand::Reg(r),
                                b: Operand::Imm((1i64 << in_bits) - 1),
                            },
                            i,
                        )?;
                        Ok(Operand::Reg(t))
                    }
                    Operand::Imm(k) if !signed => Ok(Operand::Imm(zext(k, in_bits))),
                    o => Ok(o),
                }
            };
            (ext(x, self)?, ext(y, self)?)
        } else {
            (x, y)
        };
        self.dyn_arith(env, d, aop, x, y, out_bits, i)?;
        if let Some(cv) = c {
            let z = self.operand(&cv, span)?;
            let own = self.own_reg(d);
            self.emit(
                Instr::Arith {
                    op: ArithOp::Add,
                    dst: own,
                    a: Operand::Reg(own),
                    b: z,
                },
                i,
            )?;
            self.sext_in_place(own, out_bits, i)?;
        }
        Ok(None)
    }

    fn setp(
        &mut self,
        parts: &[&str],
        i: &PInstr,
        env: &mut Env,
        bits: u32,
        signed: bool,
    ) -> Result<(), Diagnostic> {
        let ops = &i.operands;
        let cmp = parts.get(1).copied().unwrap_or("");
        if parts.len() > 3 {
            return Err(refuse(
                i.mn_span,
                format!("`{}`", i.mnemonic),
                "`setp` with a combining operation (`.and`, `.or`, `.xor`) is not modelled",
            ));
        }
        if ops.len() != 3 {
            return Err(Diagnostic::expected(
                i.span,
                format!("3 operands for `{}`", i.mnemonic),
                format!("{}", ops.len()),
            ));
        }
        let (d, dn) = match &ops[0] {
            Opnd::Reg(r, _) => (*r, None),
            Opnd::Pair(a, b, _) => (self.dst(a)?, Some(self.dst(b)?)),
            o => {
                return Err(refuse(
                    o.span(),
                    "this destination",
                    "`setp` writes predicate registers",
                ));
            }
        };
        let a = self.value(&ops[1], env, bits)?;
        let b = self.value(&ops[2], env, bits)?;
        // Unsigned comparisons: lo, ls, hi, hs, and lt/le/gt/ge on .u/.b types.
        let (base, unsigned) = match cmp {
            "eq" | "ne" => (cmp, false),
            "lt" | "le" | "gt" | "ge" => (cmp, !signed),
            "lo" => ("lt", true),
            "ls" => ("le", true),
            "hi" => ("gt", true),
            "hs" => ("ge", true),
            _ => {
                return Err(refuse(
                    i.mn_span,
                    format!("`setp.{cmp}`"),
                    "integer comparisons only",
                ));
            }
        };
        let c = match base {
            "eq" => BranchCmp::Eq,
            "ne" => BranchCmp::Ne,
            "lt" => BranchCmp::Lt,
            "le" => BranchCmp::Le,
            "gt" => BranchCmp::Gt,
            _ => BranchCmp::Ge,
        };
        // Addresses compare by offset within one region; an address is
        // never null (`setp.ne.s64 p, ws, 0` before cooperative groups'
        // `trap`).
        let (a, b) = match (&a, &b) {
            (Val::Ptr(r1, o1), Val::Ptr(r2, o2)) if r1 == r2 => (Val::Known(*o1), Val::Known(*o2)),
            (Val::Ptr(..), Val::Known(0)) | (Val::Known(0), Val::Ptr(..))
                if matches!(c, BranchCmp::Eq | BranchCmp::Ne) =>
            {
                (Val::Known(1), Val::Known(0))
            }
            _ => (a, b),
        };
        let flip = if bits >= 64 {
            i64::MIN
        } else {
            -(1i64 << (bits - 1))
        };
        match (&a, &b) {
            (Val::Known(x), Val::Known(y)) => {
                let (x, y) = if unsigned {
                    (sext(*x, bits) ^ flip, sext(*y, bits) ^ flip)
                } else {
                    (sext(*x, bits), sext(*y, bits))
                };
                let v = c.holds(x, y);
                self.set(env, d, Val::Known(v as i64));
                if let Some(n) = dn {
                    self.set(env, n, Val::Known(!v as i64));
                }
            }
            _ => {
                let mut x = self.operand(&a, ops[1].span())?;
                let mut y = self.operand(&b, ops[2].span())?;
                if unsigned {
                    let flipped = |o: Operand, this: &mut Self| -> Result<Operand, Diagnostic> {
                        Ok(match o {
                            Operand::Imm(k) => Operand::Imm(sext(k, bits) ^ flip),
                            Operand::Reg(r) => {
                                let t = this.temp();
                                this.emit(
                                    Instr::Arith {
                                        op: ArithOp::Xor,
                                        dst: t,
                                        a: Operand::Reg(r),
                                        b: Operand::Imm(flip),
                                    },
                                    i,
                                )?;
                                Operand::Reg(t)
                            }
                        })
                    };
                    x = flipped(x, self)?;
                    y = flipped(y, self)?;
                }
                // The predicate's own copies, so that later writes to the
                // operands' registers cannot change it.
                self.set(env, d, Val::Pred(c, x, y));
                if let Some(n) = dn {
                    self.set(env, n, Val::Pred(negate(c), x, y));
                }
            }
        }
        Ok(())
    }

    /// A memory-model instruction: resolve its address to a location, its
    /// operands to IR registers and constants, and decode it as a litmus
    /// instruction.
    fn memory(
        &mut self,
        _pc: usize,
        i: &PInstr,
        parts: &[&str],
        env: &mut Env,
    ) -> Result<(), Diagnostic> {
        let op = parts[0];
        if parts.contains(&"local") {
            return Err(refuse(
                i.mn_span,
                format!("`{}`", i.mnemonic),
                "local memory (a thread's stack) is not modelled; compile with optimisation so registers hold the values",
            ));
        }
        if op == "cp" {
            let bulk = parts.get(1..3) == Some(&["async", "bulk"][..]);
            if (bulk && parts.get(3) == Some(&"tensor"))
                || parts.get(1..5) == Some(&["reduce", "async", "bulk", "tensor"][..])
            {
                return self.tensor_copy(i, parts, env);
            }
            match parts.get(3).copied() {
                // Bulk async-groups: no addresses, decoded below as written.
                Some("commit_group" | "wait_group") if bulk => {}
                Some(q) if bulk && !matches!(q, "tensor" | "prefetch") => {
                    return self.bulk_copy(i, parts, env);
                }
                _ => {
                    return Err(refuse(
                        i.mn_span,
                        format!("`{}`", i.mnemonic),
                        "of the asynchronous copies, kernels lower `cp.async.bulk` between a global buffer and shared memory and tensor copies through a `--tensormap` (prefetches, `cp.reduce.async.bulk` and non-bulk `cp.async` are modelled in litmus tests only)",
                    ));
                }
            }
        }
        if (op == "bar" || op == "barrier") && i.operands.len() > 1 && !parts.contains(&"warp") {
            self.barrier_count(i, env)?;
        }
        // Build the raw instruction with resolved operands.
        let mut raw_parts: Vec<(String, Span)> = Vec::new();
        let mut off = i.mn_span.start;
        for p in parts {
            raw_parts.push((p.to_string(), Span::new(off, off + p.len())));
            off += p.len() + 1;
        }
        // `bar.sync` (no `.cta`) reads as `bar.cta.sync`; `barrier.sync` likewise.
        let mut operands = Vec::new();
        let mut dst_reg: Option<u32> = None;
        // mbarrier arrivals write a state token, waits a predicate.
        let defines = matches!(op, "ld" | "atom")
            || (op == "mbarrier"
                && matches!(
                    parts.get(1).copied(),
                    Some("arrive" | "arrive_drop" | "test_wait" | "try_wait")
                )
                && matches!(i.operands.first(), Some(Opnd::Reg(..) | Opnd::Sink(_))));
        let bytes = scalar_bytes(parts);
        let space = if parts.contains(&"global") {
            Some(VarSpace::Global)
        } else if parts.iter().any(|p| p.starts_with("shared")) {
            Some(VarSpace::Shared)
        } else {
            None
        };
        // `ld.v4`/`st.v2`: one scalar access per element (`litmus::vector`),
        // at consecutive element addresses.
        let vector = match vector_len(parts) {
            Some(n) if matches!(op, "ld" | "st") => Some(n),
            Some(_) => {
                return Err(refuse(
                    i.mn_span,
                    format!("`{}`", i.mnemonic),
                    "vector accesses are modelled on `ld` and `st` only",
                ));
            }
            None => None,
        };
        let mut elem_names: Vec<String> = Vec::new();
        let mut dst_regs: Vec<u32> = Vec::new();
        for (k, o) in i.operands.iter().enumerate() {
            let s = o.span();
            if let Opnd::Vector(items, vs) = o {
                if vector != Some(items.len()) {
                    return Err(Diagnostic::expected(
                        *vs,
                        match vector {
                            Some(n) => format!("{n} elements (the instruction's `.v{n}`)"),
                            None => "a scalar operand (the instruction has no `.v2`, `.v4`, `.v8`)"
                                .to_string(),
                        },
                        format!("a vector of {}", items.len()),
                    ));
                }
                let mut elems = Vec::new();
                for e in items {
                    let es = e.span();
                    if k == 0 && defines {
                        let d = self.dst(e)?;
                        dst_regs.push(d);
                        let x = self.own_reg(d);
                        self.before_write(env, x, Some(d), i)?;
                        elems.push(RawOperand::Name(self.regs[x].name.clone(), es));
                    } else {
                        elems.push(fit_raw(self.raw_value(e, env, es)?, bytes));
                    }
                }
                operands.push(RawOperand::Vector(elems, *vs));
                continue;
            }
            if k == 0 && defines {
                if let Opnd::Sink(sp) = o {
                    operands.push(RawOperand::Name("_".to_string(), *sp));
                    continue;
                }
                let d = self.dst(o)?;
                dst_reg = Some(d);
                let x = self.own_reg(d);
                self.before_write(env, x, Some(d), i)?;
                operands.push(RawOperand::Name(self.regs[x].name.clone(), s));
                continue;
            }
            match o {
                Opnd::Addr { span, .. } => {
                    // A `.const` variable is readable through any state
                    // space the access names (nvcc reads `__constant__`
                    // data with generic and `.global` loads).
                    let (region, at) = self.resolve_address(o, env, space, true)?;
                    let size = bytes.ok_or_else(|| {
                        Diagnostic::expected(i.mn_span, "a data type on the access", "none")
                    })?;
                    let a = self.ctx.cell(region, at, size, *span, op == "mbarrier")?;
                    for e in 0..vector.unwrap_or(0) as i64 {
                        let c = self
                            .ctx
                            .cell(region, at + e * size as i64, size, *span, false)?;
                        elem_names.push(self.ctx.addresses[c].name.clone());
                    }
                    operands.push(RawOperand::Bracketed(
                        self.ctx.addresses[a].name.clone(),
                        *span,
                    ));
                }
                Opnd::Reg(..) | Opnd::Imm(..) | Opnd::Float(..) => {
                    operands.push(fit_raw(self.raw_value(o, env, s)?, bytes))
                }
                other => {
                    return Err(refuse(
                        other.span(),
                        "this operand form",
                        "memory instructions take registers, constants and `[address]`",
                    ));
                }
            }
        }
        let raw = RawInstr {
            parts: raw_parts,
            operands,
            precondition: None,
            span: i.span,
        };
        let mut res = Res {
            regs: &mut self.regs,
            names: &mut self.reg_names,
            addrs: &self.ctx.by_name,
        };
        let decoded = if vector.is_some() {
            crate::litmus::vector::decode(&raw, Some(&elem_names), &mut res)?
        } else {
            crate::litmus::instr::decode(&raw, &mut res)?
        };
        for d in std::iter::once(decoded.instr).chain(decoded.rest) {
            let d = self.signedness(d, i, parts)?;
            self.emit(d, i)?;
        }
        for d in dst_reg.into_iter().chain(dst_regs) {
            let x = self.own_reg(d);
            env[d as usize] = Val::Dyn(x);
        }
        Ok(())
    }

    /// The region and byte offset an `[address]` operand names: a variable
    /// (`[smem+8]`) or a register holding a pointer, plus the offset. The
    /// region's state space must be `space` when the instruction names one
    /// (a generic access, `None`, reaches every region); with `const_ok`, a
    /// `.const` variable is accepted whatever space is named. The one
    /// address resolution of plain accesses, bulk and tensor copies.
    fn resolve_address(
        &self,
        o: &Opnd,
        env: &Env,
        space: Option<VarSpace>,
        const_ok: bool,
    ) -> Result<(Region, i64), Diagnostic> {
        let Opnd::Addr { base, offset, span } = o else {
            return Err(Diagnostic::expected(
                o.span(),
                "an `[address]`",
                "another operand",
            ));
        };
        let (region, at) = match base.as_deref() {
            Some(Opnd::Name(n, ns)) => match self.ctx.var_names.get(n) {
                Some(&v) => (Region::Var(v, self.sp.cta), *offset),
                None => {
                    return Err(Diagnostic::expected(
                        *ns,
                        "a register or a variable",
                        format!("`{n}`"),
                    ));
                }
            },
            Some(Opnd::Reg(r, rs)) => match &env[*r as usize] {
                Val::Ptr(region, o) => (*region, o.wrapping_add(*offset)),
                Val::Dyn(_) => {
                    return Err(refuse(
                        *rs,
                        "an address that is a value loaded from memory",
                        "addresses are a buffer or variable plus a number; pointers stored in memory are not modelled (docs/kernels.md)",
                    ));
                }
                Val::Idx(..) => {
                    return Err(refuse(
                        *rs,
                        "a second address computed from a loaded value in one instruction",
                        "run-time addresses are resolved for one address operand an instruction (docs/kernels.md)",
                    ));
                }
                Val::Known(_) => {
                    return Err(refuse(
                        *rs,
                        "an address that is a plain number",
                        "addresses come from buffer parameters and variables",
                    ));
                }
                _ => {
                    return Err(Diagnostic::expected(
                        *rs,
                        "a register holding an address",
                        format!("`{}`", self.f.regs[*r as usize].name),
                    ));
                }
            },
            _ => {
                return Err(refuse(
                    *span,
                    "an absolute address",
                    "addresses come from buffer parameters and variables",
                ));
            }
        };
        let rspace = match region {
            Region::Buffer(_) => VarSpace::Global,
            Region::Var(v, _) => self.ctx.vars[v].space,
            Region::TensorMap(_) => VarSpace::Param,
        };
        if let Some(sp) = space {
            if sp != rspace && !(const_ok && rspace == VarSpace::Const) {
                return Err(Diagnostic::expected(
                    *span,
                    format!(
                        "an address in the {} state space",
                        if sp == VarSpace::Global {
                            "global"
                        } else {
                            "shared"
                        }
                    ),
                    format!("an address of {}", self.region_name(region)),
                )
                .with_label("wrong state space"));
            }
        }
        Ok((region, at))
    }

    /// The region and byte offset of an asynchronous copy's `[address]`
    /// operand, which must be in `space` (no `.const` exception).
    fn pointer(&self, o: &Opnd, env: &Env, space: VarSpace) -> Result<(Region, i64), Diagnostic> {
        self.resolve_address(o, env, Some(space), false)
    }

    /// `elect.sync d|p, membermask` (`docs/warps.md`): the convergence wait,
    /// then `mov`s of the results into IR registers (run-time values, since
    /// the engines run every choice of leader: `ir::elect`).
    fn elect(&mut self, i: &PInstr, parts: &[&str], env: &mut Env) -> Result<(), Diagnostic> {
        if parts.get(1) != Some(&"sync") || parts.len() != 2 {
            return Err(Diagnostic::expected(
                i.mn_span,
                "`elect.sync`",
                format!("`{}`", i.mnemonic),
            ));
        }
        let [dp, m] = &i.operands[..] else {
            return Err(Diagnostic::expected(
                i.span,
                "2 operands for `elect.sync` (`d|p, membermask`)",
                format!("{}", i.operands.len()),
            ));
        };
        let Opnd::Pair(d, p, _) = dp else {
            return Err(Diagnostic::expected(
                dp.span(),
                "the destinations `d|p`",
                "another operand form",
            ));
        };
        let mask = match self.value(m, env, 32)? {
            Val::Known(k) => k & 0xffff_ffff,
            _ => {
                return Err(refuse(
                    m.span(),
                    "a membermask computed at run time",
                    "the leader is a fixed function of the mask's value (docs/warps.md): the mask must be known when the kernel is lowered",
                ));
            }
        };
        let dst = match &**d {
            Opnd::Sink(_) => None,
            o => Some(self.dst(o)?),
        };
        let pred = self.dst(p)?;
        let at = self.emit(
            Instr::Barrier {
                kind: crate::ir::BarrierKind::Elect,
                id: smallvec::smallvec![Operand::Imm(mask)],
                count: None,
                aligned: false,
            },
            i,
        )?;
        self.elects.push((at, dst.is_some(), true));
        for r in dst.into_iter().chain([pred]) {
            let x = self.own_reg(r);
            self.before_write(env, x, Some(r), i)?;
            self.emit(
                Instr::Mov {
                    dst: x,
                    src: Operand::Imm(0),
                },
                i,
            )?;
            env[r as usize] = Val::Dyn(x);
        }
        Ok(())
    }

    /// `activemask.b32 d` (`docs/warps.md`): the rendezvous of the lane's
    /// block, then a `mov` of the block's mask into an IR register (a
    /// run-time value, since the engines run every partition of the lanes
    /// that execute it: `ir::activemask`).
    fn activemask(&mut self, i: &PInstr, parts: &[&str], env: &mut Env) -> Result<(), Diagnostic> {
        if parts.get(1) != Some(&"b32") || parts.len() != 2 {
            return Err(Diagnostic::expected(
                i.mn_span,
                "`activemask.b32`",
                format!("`{}`", i.mnemonic),
            ));
        }
        let [d] = &i.operands[..] else {
            return Err(Diagnostic::expected(
                i.span,
                "1 operand for `activemask.b32` (`d`)",
                format!("{}", i.operands.len()),
            ));
        };
        let r = self.dst(d)?;
        // Copies that save live values of the destination come before the
        // rendezvous: `ir::activemask` finds the result's `mov` right after
        // it (`apply`, `check`).
        let x = self.own_reg(r);
        self.before_write(env, x, Some(r), i)?;
        self.emit(
            Instr::Barrier {
                kind: crate::ir::BarrierKind::ActiveMask,
                id: smallvec::smallvec![Operand::Imm(0)],
                count: None,
                aligned: false,
            },
            i,
        )?;
        self.emit(
            Instr::Mov {
                dst: x,
                src: Operand::Imm(0),
            },
            i,
        )?;
        env[r as usize] = Val::Dyn(x);
        Ok(())
    }

    /// A CTA barrier's thread count (`bar.sync a, b`, `bar.arrive a, b`):
    /// one litmus thread is one CUDA thread, a lane of a warp of 32, so the
    /// count carries over as written; the warp's lanes arrive as one event
    /// of 32 threads (`model::barrier::warp_unit`).
    /// It must be known when the kernel is lowered and a positive multiple
    /// of the warp size (PTX ISA §9.7.13.1: *"When specifying a thread
    /// count, the value must be a multiple of the warp size"*).
    fn barrier_count(&self, i: &PInstr, env: &Env) -> Result<(), Diagnostic> {
        if i.operands.len() != 2 {
            return Err(refuse(
                i.span,
                format!("`{}` with {} operands", i.mnemonic, i.operands.len()),
                "CTA barriers in kernels take a barrier name and a thread count",
            ));
        }
        let o = &i.operands[1];
        let c = match o {
            Opnd::Imm(v, _) => *v,
            Opnd::Reg(r, _) => match &env[*r as usize] {
                Val::Known(v) => *v,
                _ => {
                    return Err(refuse(
                        o.span(),
                        format!("`{}` with a thread count that is not known", i.mnemonic),
                        "barrier thread counts computed from loaded values are not modelled in kernels",
                    ));
                }
            },
            _ => return Ok(()),
        };
        if c <= 0 || c % 32 != 0 {
            return Err(Diagnostic::expected(
                o.span(),
                "a thread count that is a positive multiple of the warp size, 32 (PTX ISA 9.7.13.1)",
                c.to_string(),
            ));
        }
        Ok(())
    }

    /// A register or constant operand of a memory instruction, as the
    /// litmus decoder reads it.
    fn raw_value(&self, o: &Opnd, env: &Env, s: Span) -> Result<RawOperand, Diagnostic> {
        Ok(match o {
            Opnd::Reg(r, _) => match env[*r as usize].clone() {
                Val::Known(k) => RawOperand::Int(k, s),
                Val::Dyn(x) => RawOperand::Name(self.regs[x].name.clone(), s),
                Val::Ptr(..) | Val::Half(..) | Val::Idx(..) => {
                    return Err(refuse(
                        s,
                        "storing an address",
                        "pointers stored in memory are not modelled",
                    ));
                }
                Val::Pred(..) => {
                    return Err(refuse(
                        s,
                        "a predicate as a value",
                        "predicates guard branches and instructions",
                    ));
                }
                Val::Undef => {
                    return Err(Diagnostic::expected(
                        s,
                        "a register written before it is read",
                        "an unwritten register",
                    ));
                }
            },
            Opnd::Imm(v, _) => RawOperand::Int(*v, s),
            Opnd::Float(v, _) => RawOperand::Int(*v as i64, s),
            other => {
                return Err(refuse(
                    other.span(),
                    "this operand form",
                    "memory instructions take registers, constants and `[address]`",
                ));
            }
        })
    }

    fn region_name(&self, r: Region) -> String {
        match r {
            Region::Buffer(b) => format!("buffer `{}` (global)", self.ctx.buffers[b].name),
            Region::TensorMap(t) => format!("tensor map `{}`", self.ctx.tmaps[t].param),
            Region::Var(v, _) => {
                let info = &self.ctx.vars[v];
                let _ = info.span;
                format!(
                    "variable `{}` ({})",
                    info.name,
                    match info.space {
                        VarSpace::Shared => "shared",
                        VarSpace::Const => "const",
                        _ => "global",
                    }
                )
            }
        }
    }
}

fn negate(c: BranchCmp) -> BranchCmp {
    match c {
        BranchCmp::Eq => BranchCmp::Ne,
        BranchCmp::Ne => BranchCmp::Eq,
        BranchCmp::Lt => BranchCmp::Ge,
        BranchCmp::Ge => BranchCmp::Lt,
        BranchCmp::Le => BranchCmp::Gt,
        BranchCmp::Gt => BranchCmp::Le,
    }
}

/// Name resolution for the litmus decoder: IR registers of the thread and
/// the locations made so far.
struct Res<'a> {
    regs: &'a mut Vec<Register>,
    names: &'a mut HashMap<String, usize>,
    addrs: &'a HashMap<String, usize>,
}

impl Resolver for Res<'_> {
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
        self.addrs.get(name).copied()
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
        // Spaces were checked against the buffer or variable before.
        Ok(())
    }
}
