//! Launch descriptions: how a kernel is run for a check.
//!
//! One grammar, three places (docs/kernels.md, "Launch"): command-line
//! flags, a `FILE.launch` beside the kernel, or a `/* ptxmc-launch: ... */`
//! comment block in the `.cu` file. The text is a list of shell-like words
//! (`'...'` and `"..."` quote); flags take their value as the next word or
//! after `=`:
//!
//! ```text
//! --entry NAME            the kernel (mangled or demangled name; default: the only one)
//! --grid X[,Y[,Z]]        CTAs (default 1)
//! --block X[,Y[,Z]]       threads per CTA (default 1)
//! --cluster X[,Y[,Z]]     CTAs per cluster (default 1)
//! --cooperative           a cooperative launch (`cudaLaunchCooperativeKernel`):
//!                         `%envreg1:%envreg2` point to the grid workspace
//!                         that `cg::this_grid().sync()` arrives on
//! --buffer NAME:TYPE[LEN][={v,v,...}]   the next pointer parameter
//! --scalar NAME:TYPE=V    the next value parameter
//! --tensormap NAME:TYPE[D0,D1,...]box[B0,B1,...][={v,v,...}]
//!                         the next tensor-map parameter (`.param .b8 [128]`):
//!                         a global tensor NAME (its own buffer) and the box
//!                         its tensor copies move
//! --struct NAME{OFF:buffer=BUFFER; OFF:scalar=SCALAR; ...}
//!                         the next struct parameter (`.param .align A .b8
//!                         NAME[N]`, a struct passed by value): at each byte
//!                         offset, a pointer to a new buffer (`--buffer`'s
//!                         value) or a value (`--scalar`'s)
//! --exists COND | --not-exists COND | --forall COND
//! --dependent NAME        the flags after it describe a second kernel, NAME,
//!                         launched as the programmatic dependent of the
//!                         first (grid 1 of the test, docs/griddep.md): its
//!                         own `--grid`, `--block`, `--cluster` and
//!                         parameters, where `--buffer NAME` alone passes
//!                         the first kernel's buffer NAME
//! ```
//!
//! Every error is a [`Diagnostic`] positioned in the launch text.

use crate::ir::{DataType, Quantifier, Value};
use crate::litmus::{Diagnostic, Span};

/// The most threads one launch may have: one litmus thread each, and the
/// engines explore every interleaving, so real launch sizes are out of reach.
pub const MAX_THREADS: u64 = 64;
/// The most elements one buffer may have (one location each).
pub const MAX_BUFFER_LEN: u64 = 4096;

/// An element type of a buffer or scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElemType {
    /// The spelling (`int32`).
    pub name: &'static str,
    /// The data type of accesses to it.
    pub ty: DataType,
}

impl ElemType {
    /// Size in bytes.
    pub fn bytes(self) -> u64 {
        u64::from(self.ty.bits() / 8)
    }
}

const TYPES: &[(&str, DataType)] = &[
    ("int8", DataType::S8),
    ("uint8", DataType::U8),
    ("int16", DataType::S16),
    ("uint16", DataType::U16),
    ("int32", DataType::S32),
    ("uint32", DataType::U32),
    ("int64", DataType::S64),
    ("uint64", DataType::U64),
    ("float32", DataType::F32),
    ("float64", DataType::F64),
];

fn elem_type(text: &str, span: Span) -> Result<ElemType, Diagnostic> {
    TYPES
        .iter()
        .find(|(n, _)| *n == text)
        .map(|&(name, ty)| ElemType { name, ty })
        .ok_or_else(|| {
            Diagnostic::expected(
                span,
                "an element type (`int8`, `uint8`, `int16`, `uint16`, `int32`, `uint32`, `int64`, `uint64`, `float32`, `float64`)",
                format!("`{text}`"),
            )
        })
}

/// A buffer bound to a pointer parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// Its name (locations are `NAME[i]`).
    pub name: String,
    /// Element type.
    pub elem: ElemType,
    /// Number of elements.
    pub len: u64,
    /// Initial values (missing ones are 0), as signed values of the element width.
    pub init: Vec<Value>,
    /// Where it was given.
    pub span: Span,
}

/// A value bound to a scalar parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scalar {
    /// Its name.
    pub name: String,
    /// Type.
    pub elem: ElemType,
    /// Value.
    pub value: Value,
    /// Where it was given.
    pub span: Span,
}

/// A tensor map bound to a `.param .b8 NAME[128]` parameter (a
/// `const __grid_constant__ CUtensorMap`): the global tensor it names, a
/// buffer of its own whose elements are `NAME[i]` (dimension 0 varies
/// fastest), and the box its tensor copies move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapBinding {
    /// The tensor, as a buffer of `dims`' product elements.
    pub buffer: Buffer,
    /// The tensor's size per dimension, innermost first.
    pub dims: Vec<u64>,
    /// The box's size per dimension, innermost first.
    pub boxdims: Vec<u64>,
}

/// What one field of a struct parameter holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldBinding {
    /// A pointer to a new buffer (8 bytes).
    Buffer(Buffer),
    /// A value of the scalar's type.
    Scalar(Scalar),
}

/// A field of a struct parameter: its byte offset and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Byte offset in the struct.
    pub offset: u64,
    /// What it holds.
    pub binding: FieldBinding,
    /// Where it was given.
    pub span: Span,
}

impl Field {
    /// Its size in bytes: a pointer's 8, or the scalar type's.
    pub fn bytes(&self) -> u64 {
        match &self.binding {
            FieldBinding::Buffer(_) => 8,
            FieldBinding::Scalar(s) => s.elem.bytes(),
        }
    }
}

/// A struct passed by value (`.param .align A .b8 NAME[N]`, as CUTLASS
/// kernels take their `Params`): the fields the launch binds, by offset;
/// bytes no field covers are not read by a checked kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructBinding {
    /// The name given to the struct (for messages).
    pub name: String,
    /// The fields, in increasing offset.
    pub fields: Vec<Field>,
    /// Where it was given.
    pub span: Span,
}

/// A parameter binding, in the kernel's parameter order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// `--buffer`
    Buffer(Buffer),
    /// `--scalar`
    Scalar(Scalar),
    /// `--tensormap`
    TensorMap(TensorMapBinding),
    /// `--struct`
    Struct(StructBinding),
    /// `--buffer NAME` in a dependent kernel's part: the pointer to the
    /// primary kernel's buffer `NAME` (both kernels get the same memory).
    Primary {
        /// The buffer's name.
        name: String,
        /// Where it was given.
        span: Span,
    },
}

/// A launch description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// `--entry`.
    pub entry: Option<(String, Span)>,
    /// `--grid`.
    pub grid: [u32; 3],
    /// `--block`.
    pub block: [u32; 3],
    /// `--cluster`.
    pub cluster: [u32; 3],
    /// `--cooperative`: launched by `cudaLaunchCooperativeKernel`, so the
    /// driver hands the kernel a grid workspace (`%envreg1:%envreg2`) for
    /// cooperative groups' grid barrier (docs/kernels.md, "Grid-wide sync").
    pub cooperative: bool,
    /// Parameter bindings in order.
    pub params: Vec<Binding>,
    /// The condition: quantifier, its text and where that text starts.
    pub condition: Option<(Quantifier, String, Span)>,
    /// Whether each dimension flag was given (a later source may fill the others).
    pub given: Given,
    /// `--dependent NAME` and the flags after it: a second kernel launched
    /// as this one's programmatic dependent (`cudaLaunchKernelEx` with
    /// `cudaLaunchAttributeProgrammaticStreamSerialization`), grid 1 of the
    /// test (docs/griddep.md). Its `entry` is `NAME`; the condition is the
    /// launch's, wherever it was written.
    pub dependent: Option<Box<Launch>>,
}

/// Which parts a launch text gave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Given {
    /// `--grid`
    pub grid: bool,
    /// `--block`
    pub block: bool,
    /// `--cluster`
    pub cluster: bool,
}

impl Default for Launch {
    fn default() -> Self {
        Launch {
            entry: None,
            grid: [1, 1, 1],
            block: [1, 1, 1],
            cluster: [1, 1, 1],
            cooperative: false,
            params: Vec::new(),
            condition: None,
            given: Given::default(),
            dependent: None,
        }
    }
}

impl Launch {
    /// Threads in the launch.
    pub fn threads(&self) -> u64 {
        self.grid
            .iter()
            .chain(&self.block)
            .map(|&d| u64::from(d))
            .product()
    }
    /// CTAs in the launch.
    pub fn ctas(&self) -> u64 {
        self.grid.iter().map(|&d| u64::from(d)).product()
    }
    /// Threads of this kernel and of its dependent.
    pub fn all_threads(&self) -> u64 {
        self.threads() + self.dependent.as_ref().map_or(0, |d| d.threads())
    }
    /// Whether nothing was given.
    pub fn is_empty(&self) -> bool {
        *self == Launch::default()
    }
}

/// A word of the launch text with its span (quotes removed).
fn words(text: &str) -> Result<Vec<(String, Span)>, Diagnostic> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let mut w = String::new();
        while i < b.len() && !b[i].is_ascii_whitespace() {
            let c = b[i];
            if c == b'\'' || c == b'"' {
                let close = text[i + 1..].find(c as char).ok_or_else(|| {
                    Diagnostic::expected(
                        Span::new(i, i + 1),
                        "a closing quote",
                        "a quote that is never closed",
                    )
                })?;
                w.push_str(&text[i + 1..i + 1 + close]);
                i += close + 2;
            } else {
                let ch = text[i..].chars().next().unwrap_or(' ');
                w.push(ch);
                i += ch.len_utf8();
            }
        }
        out.push((w, Span::new(start, i)));
    }
    Ok(out)
}

/// Parse a launch text.
pub fn parse(text: &str) -> Result<Launch, Diagnostic> {
    let ws = words(text)?;
    let mut l = Launch::default();
    // The dependent kernel's part, once `--dependent` is read.
    let mut dependent: Option<Launch> = None;
    let mut it = ws.into_iter().peekable();
    while let Some((w, span)) = it.next() {
        let (flag, inline) = match w.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (w.clone(), None),
        };
        const FLAGS: &str = "a launch flag (`--entry`, `--grid`, `--block`, `--cluster`, `--cooperative`, `--buffer`, `--scalar`, `--tensormap`, `--struct`, `--exists`, `--not-exists`, `--forall`, `--dependent`)";
        if !matches!(
            flag.as_str(),
            "--entry"
                | "--dependent"
                | "--grid"
                | "--block"
                | "--cluster"
                | "--cooperative"
                | "--buffer"
                | "--scalar"
                | "--tensormap"
                | "--struct"
                | "--exists"
                | "--not-exists"
                | "--forall"
        ) {
            return Err(Diagnostic::expected(span, FLAGS, format!("`{w}`")));
        }
        // The one flag without a value.
        if flag == "--cooperative" {
            if inline.is_some() {
                return Err(Diagnostic::expected(
                    span,
                    "`--cooperative` alone (it takes no value)",
                    format!("`{w}`"),
                ));
            }
            match dependent.as_mut() {
                Some(d) => d.cooperative = true,
                None => l.cooperative = true,
            }
            continue;
        }
        // The value and where it starts in the text (for positions inside it).
        let (value, vspan) = match inline {
            Some(v) => {
                let at = span.start + flag.len() + 1;
                (v, Span::new(at, span.end))
            }
            None => match it.next() {
                Some((v, s)) => {
                    // Positions inside a quoted word start after the quote.
                    let q = text[s.start..].starts_with(['\'', '"']) as usize;
                    (v, Span::new(s.start + q, s.end - q))
                }
                None => {
                    return Err(Diagnostic::expected(
                        Span::new(span.end, span.end),
                        format!("a value after `{flag}`"),
                        "the end of the launch",
                    ));
                }
            },
        };
        // The flags after `--dependent` describe the dependent kernel.
        let in_dependent = dependent.is_some();
        let k: &mut Launch = match dependent.as_mut() {
            Some(d) => d,
            None => &mut l,
        };
        match flag.as_str() {
            "--entry" if in_dependent => {
                return Err(Diagnostic::expected(
                    span,
                    "`--entry` before `--dependent` (the dependent kernel is named by `--dependent NAME`)",
                    "`--entry` after it",
                ));
            }
            "--entry" => k.entry = Some((value, vspan)),
            "--dependent" => {
                if in_dependent {
                    return Err(Diagnostic::expected(
                        span,
                        "one dependent kernel",
                        "a second `--dependent`",
                    ));
                }
                dependent = Some(Launch {
                    entry: Some((value, vspan)),
                    ..Launch::default()
                });
            }
            "--grid" => {
                k.grid = dims(&value, vspan)?;
                k.given.grid = true;
            }
            "--block" => {
                k.block = dims(&value, vspan)?;
                k.given.block = true;
            }
            "--cluster" => {
                k.cluster = dims(&value, vspan)?;
                k.given.cluster = true;
            }
            "--buffer" if in_dependent && !value.contains(':') => {
                name_only(&value, vspan)?;
                k.params.push(Binding::Primary {
                    name: value,
                    span: vspan,
                });
            }
            "--buffer" => k.params.push(Binding::Buffer(buffer(&value, vspan)?)),
            "--scalar" => k.params.push(Binding::Scalar(scalar(&value, vspan)?)),
            "--tensormap" => k
                .params
                .push(Binding::TensorMap(tensor_map(&value, vspan)?)),
            "--struct" => k.params.push(Binding::Struct(struct_param(&value, vspan)?)),
            q => {
                if l.condition.is_some() {
                    return Err(Diagnostic::expected(span, "one condition", "a second one"));
                }
                let quant = match q {
                    "--exists" => Quantifier::Exists,
                    "--not-exists" => Quantifier::NotExists,
                    _ => Quantifier::Forall,
                };
                l.condition = Some((quant, value, vspan));
            }
        }
    }
    l.dependent = dependent.map(Box::new);
    if l.all_threads() > MAX_THREADS {
        return Err(Diagnostic::expected(
            Span::new(0, text.len()),
            format!("a launch of at most {MAX_THREADS} threads (grid × block)"),
            format!("{} threads", l.all_threads()),
        )
        .with_note("every CUDA thread becomes one thread of the model checker, which explores all their interleavings: check a small launch"));
    }
    Ok(l)
}

fn dims(v: &str, span: Span) -> Result<[u32; 3], Diagnostic> {
    let parts: Vec<&str> = v.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(Diagnostic::expected(
            span,
            "`X`, `X,Y` or `X,Y,Z`",
            format!("`{v}`"),
        ));
    }
    let mut out = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        match p.trim().parse::<u32>() {
            Ok(n) if (1..=65535).contains(&n) => out[i] = n,
            _ => {
                return Err(Diagnostic::expected(
                    span,
                    "dimensions between 1 and 65535",
                    format!("`{v}`"),
                ));
            }
        }
    }
    Ok(out)
}

/// A buffer's name alone (`--buffer NAME` in a dependent kernel's part).
fn name_only(v: &str, span: Span) -> Result<(), Diagnostic> {
    if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Diagnostic::expected(
            span,
            "`NAME` (a buffer of the primary kernel) or `NAME:TYPE[LEN]` (a new buffer)",
            format!("`{v}`"),
        ));
    }
    Ok(())
}

fn name_and_type(v: &str, span: Span) -> Result<(String, &str, Span), Diagnostic> {
    let Some((name, rest)) = v.split_once(':') else {
        return Err(Diagnostic::expected(
            span,
            "`NAME:TYPE...`",
            format!("`{v}`"),
        ));
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Diagnostic::expected(
            Span::new(span.start, span.start + name.len()),
            "a name (letters, digits, `_`)",
            format!("`{name}`"),
        ));
    }
    let at = span.start + name.len() + 1;
    Ok((name.to_string(), rest, Span::new(at, span.end)))
}

fn value_of(text: &str, elem: ElemType, span: Span) -> Result<Value, Diagnostic> {
    let t = text.trim();
    let v = crate::litmus::raw::parse_int(t, span)?;
    let (lo, hi) = elem.ty.range();
    if v < lo || v > hi {
        return Err(Diagnostic::expected(
            span,
            format!("a value of type {} ({lo} to {hi})", elem.name),
            format!("`{t}`"),
        ));
    }
    // Registers and memory hold values as signed numbers of their width
    // (docs/kernels.md, "Values").
    Ok(super::lower::sext(v, elem.ty.bits()))
}

fn buffer(v: &str, span: Span) -> Result<Buffer, Diagnostic> {
    let (name, rest, rspan) = name_and_type(v, span)?;
    let (decl, init) = match rest.split_once('=') {
        Some((d, i)) => (d, Some(i)),
        None => (rest, None),
    };
    let Some((ty, len)) = decl.strip_suffix(']').and_then(|d| d.split_once('[')) else {
        return Err(Diagnostic::expected(
            rspan,
            "`TYPE[LEN]` such as `int32[4]`",
            format!("`{decl}`"),
        ));
    };
    let elem = elem_type(ty, Span::new(rspan.start, rspan.start + ty.len()))?;
    let lspan = Span::new(rspan.start + ty.len() + 1, rspan.start + decl.len() - 1);
    let len = match len.parse::<u64>() {
        Ok(n) if (1..=MAX_BUFFER_LEN).contains(&n) => n,
        _ => {
            return Err(Diagnostic::expected(
                lspan,
                format!("a length between 1 and {MAX_BUFFER_LEN}"),
                format!("`{len}`"),
            ));
        }
    };
    let mut values = Vec::new();
    if let Some(i) = init {
        let ispan = Span::new(rspan.start + decl.len() + 1, span.end);
        let inner = i
            .strip_prefix('{')
            .and_then(|i| i.strip_suffix('}'))
            .ok_or_else(|| Diagnostic::expected(ispan, "`{v,v,...}`", format!("`{i}`")))?;
        let mut off = ispan.start + 1;
        for part in inner.split(',') {
            let ps = Span::new(off, off + part.len());
            off += part.len() + 1;
            if part.trim().is_empty() && inner.trim().is_empty() {
                break;
            }
            values.push(value_of(part, elem, ps)?);
        }
        if values.len() as u64 > len {
            return Err(Diagnostic::expected(
                ispan,
                format!("at most {len} initial values"),
                values.len().to_string(),
            ));
        }
    }
    Ok(Buffer {
        name,
        elem,
        len,
        init: values,
        span,
    })
}

/// `NAME:TYPE[D0,D1,...]box[B0,B1,...][={v,v,...}]`.
fn tensor_map(v: &str, span: Span) -> Result<TensorMapBinding, Diagnostic> {
    const WANT: &str = "`TYPE[D0,D1,...]box[B0,B1,...]` such as `int32[4,4]box[2,2]`";
    let (name, rest, rspan) = name_and_type(v, span)?;
    let (decl, init) = match rest.split_once('=') {
        Some((d, i)) => (d, Some(i)),
        None => (rest, None),
    };
    let Some((tensor, boxpart)) = decl.split_once("box") else {
        return Err(Diagnostic::expected(rspan, WANT, format!("`{decl}`")));
    };
    let Some((ty, dims)) = tensor.strip_suffix(']').and_then(|d| d.split_once('[')) else {
        return Err(Diagnostic::expected(rspan, WANT, format!("`{decl}`")));
    };
    let Some(boxdims) = boxpart.strip_prefix('[').and_then(|b| b.strip_suffix(']')) else {
        return Err(Diagnostic::expected(rspan, WANT, format!("`{decl}`")));
    };
    let elem = elem_type(ty, Span::new(rspan.start, rspan.start + ty.len()))?;
    let list = |text: &str, at: usize, what: &str| -> Result<Vec<u64>, Diagnostic> {
        let mut out = Vec::new();
        let mut off = at;
        for part in text.split(',') {
            let ps = Span::new(off, off + part.len());
            off += part.len() + 1;
            match part.trim().parse::<u64>() {
                Ok(n) if (1..=256).contains(&n) => out.push(n),
                _ => {
                    return Err(Diagnostic::expected(
                        ps,
                        format!("{what} between 1 and 256"),
                        format!("`{part}`"),
                    ));
                }
            }
        }
        if out.len() > 5 {
            return Err(Diagnostic::expected(
                Span::new(at, off - 1),
                "at most 5 dimensions",
                out.len().to_string(),
            ));
        }
        Ok(out)
    };
    let dims_at = rspan.start + ty.len() + 1;
    let dims = list(dims, dims_at, "a tensor size")?;
    let box_at = rspan.start + tensor.len() + 4;
    let boxdims = list(boxdims, box_at, "a box size")?;
    let bspan = Span::new(box_at, box_at + boxpart.len().saturating_sub(2));
    crate::litmus::tensor::check_box(&dims, &boxdims, bspan)?;
    let len: u64 = dims.iter().product();
    if len > MAX_BUFFER_LEN {
        return Err(Diagnostic::expected(
            Span::new(dims_at, dims_at + tensor.len() - ty.len() - 2),
            format!("a tensor of at most {MAX_BUFFER_LEN} elements"),
            len.to_string(),
        ));
    }
    // The initial values: as a `--buffer`'s.
    let text = match init {
        Some(i) => format!("{name}:{ty}[{len}]={i}"),
        None => format!("{name}:{ty}[{len}]"),
    };
    let mut buffer = buffer(&text, span).map_err(|mut d| {
        // Positions inside the values are those of the written text.
        d.span = span;
        d
    })?;
    buffer.elem = elem;
    Ok(TensorMapBinding {
        buffer,
        dims,
        boxdims,
    })
}

fn scalar(v: &str, span: Span) -> Result<Scalar, Diagnostic> {
    let (name, rest, rspan) = name_and_type(v, span)?;
    let Some((ty, val)) = rest.split_once('=') else {
        return Err(Diagnostic::expected(
            rspan,
            "`TYPE=VALUE` such as `int32=4`",
            format!("`{rest}`"),
        ));
    };
    let elem = elem_type(ty, Span::new(rspan.start, rspan.start + ty.len()))?;
    let vs = Span::new(rspan.start + ty.len() + 1, span.end);
    let value = value_of(val, elem, vs)?;
    Ok(Scalar {
        name,
        elem,
        value,
        span,
    })
}

/// `NAME{OFF:buffer=BUFFER; OFF:scalar=SCALAR; ...}`: fields separated by
/// `;` (a buffer's initial values keep their `{v,v}`), each at a byte offset
/// aligned to its size, none overlapping another.
fn struct_param(v: &str, span: Span) -> Result<StructBinding, Diagnostic> {
    const WANT: &str = "`NAME{OFFSET:buffer=NAME:TYPE[LEN]; OFFSET:scalar=NAME:TYPE=V; ...}` such as `p{0:buffer=data:int32[4]; 8:scalar=n:int32=3}`";
    let at = |i: usize, j: usize| Span::new(span.start + i, span.start + j);
    let Some(open) = v.find('{') else {
        return Err(Diagnostic::expected(span, WANT, format!("`{v}`")));
    };
    let name = &v[..open];
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Diagnostic::expected(
            at(0, open),
            "a name for the struct (letters, digits, `_`)",
            format!("`{name}`"),
        ));
    }
    let Some(inner) = v[open + 1..].strip_suffix('}') else {
        return Err(Diagnostic::expected(
            at(v.len(), v.len()),
            "`}` closing the struct's fields",
            "the end of the value",
        ));
    };
    let base = open + 1;
    // Fields: split at `;` outside a buffer's `{...}`.
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0i32, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ';' if depth == 0 => {
                parts.push((from, &inner[from..i]));
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push((from, &inner[from..]));
    let mut fields: Vec<Field> = Vec::new();
    for (off, text) in parts {
        let lead = text.len() - text.trim_start().len();
        let f = text.trim();
        if f.is_empty() {
            continue;
        }
        let start = base + off + lead;
        let fspan = at(start, start + f.len());
        let Some((o, rest)) = f.split_once(':') else {
            return Err(Diagnostic::expected(
                fspan,
                "a field `OFFSET:buffer=...` or `OFFSET:scalar=...`",
                format!("`{f}`"),
            ));
        };
        let offset = match o.trim().parse::<u64>() {
            Ok(n) if n < 1 << 16 => n,
            _ => {
                return Err(Diagnostic::expected(
                    at(start, start + o.len()),
                    "a byte offset (0 to 65535)",
                    format!("`{o}`"),
                ));
            }
        };
        let kstart = start + o.len() + 1;
        let Some((kind, spec)) = rest.split_once('=') else {
            return Err(Diagnostic::expected(
                at(kstart, start + f.len()),
                "`buffer=...` or `scalar=...`",
                format!("`{rest}`"),
            ));
        };
        let sspan = at(kstart + kind.len() + 1, start + f.len());
        let binding = match kind {
            "buffer" => FieldBinding::Buffer(buffer(spec, sspan)?),
            "scalar" => FieldBinding::Scalar(scalar(spec, sspan)?),
            _ => {
                return Err(Diagnostic::expected(
                    at(kstart, kstart + kind.len()),
                    "`buffer` or `scalar`",
                    format!("`{kind}`"),
                ));
            }
        };
        let field = Field {
            offset,
            binding,
            span: fspan,
        };
        let size = field.bytes();
        if offset % size != 0 {
            return Err(Diagnostic::expected(
                at(start, start + o.len()),
                format!("an offset that is a multiple of the field's {size} bytes (its alignment)"),
                format!("`{offset}`"),
            ));
        }
        if let Some(g) = fields
            .iter()
            .find(|g| g.offset < offset + size && offset < g.offset + g.bytes())
        {
            return Err(Diagnostic::expected(
                fspan,
                "fields that do not overlap",
                format!(
                    "bytes {offset}..{} over bytes {}..{} of an earlier field",
                    offset + size,
                    g.offset,
                    g.offset + g.bytes()
                ),
            ));
        }
        fields.push(field);
    }
    if fields.is_empty() {
        return Err(Diagnostic::expected(
            at(base, base + inner.len()),
            "at least one field",
            "none",
        ));
    }
    fields.sort_by_key(|f| f.offset);
    Ok(StructBinding {
        name: name.to_string(),
        fields,
        span,
    })
}

/// The text of a `/* ptxmc-launch: ... */` comment in a CUDA source and
/// where it starts, if there is one.
pub fn from_cuda_comment(src: &str) -> Option<(usize, &str)> {
    const MARK: &str = "ptxmc-launch:";
    let at = src.find(MARK)?;
    let start = at + MARK.len();
    let end = src[start..].find("*/").map_or(src.len(), |e| start + e);
    Some((start, &src[start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read() {
        let l = parse("--grid 2 --block=2,1 --buffer data:int32[2]={1,-1} --scalar n:uint32=3 --forall 'out[0] == 1 || out[0] == 2'").unwrap();
        assert_eq!(l.grid, [2, 1, 1]);
        assert_eq!(l.block, [2, 1, 1]);
        let Binding::Buffer(b) = &l.params[0] else {
            panic!()
        };
        assert_eq!(
            (b.name.as_str(), b.len, b.init.clone()),
            ("data", 2, vec![1, -1])
        );
        let Binding::Scalar(s) = &l.params[1] else {
            panic!()
        };
        assert_eq!(s.value, 3);
        let (q, text, span) = l.condition.unwrap();
        assert_eq!(q, Quantifier::Forall);
        assert_eq!(text, "out[0] == 1 || out[0] == 2");
        assert_eq!(span.start, 81);
    }

    #[test]
    fn cooperative_takes_no_value_and_belongs_to_its_kernel() {
        let l = parse("--grid 2 --cooperative --buffer d:int32[2]").unwrap();
        assert!(l.cooperative);
        assert_eq!(l.params.len(), 1);
        let l = parse("--entry a --dependent b --cooperative").unwrap();
        assert!(!l.cooperative);
        assert!(l.dependent.unwrap().cooperative);
        let e = parse("--grid 2 --cooperative=yes").unwrap_err();
        assert_eq!(e.span, Span::new(9, 26));
        assert_eq!(
            e.message(),
            "expected `--cooperative` alone (it takes no value), found `--cooperative=yes`"
        );
    }

    #[test]
    fn errors_are_positioned() {
        let e = parse("--grid 2 --buffer data:int33[2]").unwrap_err();
        assert_eq!(e.span, Span::new(23, 28));
        assert!(e.message().contains("found `int33`"), "{}", e.message());
        let e = parse("--grid 1000,1000").unwrap_err();
        assert_eq!(
            e.message(),
            "expected a launch of at most 64 threads (grid × block), found 1000000 threads"
        );
        let e = parse("--buffer x:int8[2]={1,300}").unwrap_err();
        assert_eq!(
            e.message(),
            "expected a value of type int8 (-128 to 127), found `300`"
        );
        assert_eq!(e.span, Span::new(22, 25));
        let e = parse("--blocks 2").unwrap_err();
        assert!(e.message().starts_with("expected a launch flag"));
        let e = parse("--buffer x:int32[1099511627776]").unwrap_err();
        assert_eq!(
            e.message(),
            "expected a length between 1 and 4096, found `1099511627776`"
        );
    }

    #[test]
    fn a_struct_binds_fields_by_offset_with_positioned_errors() {
        let l = parse("--struct 'p{0:buffer=data:int32[2]={1,2}; 8:scalar=n:int32=3}'").unwrap();
        let Binding::Struct(st) = &l.params[0] else {
            panic!()
        };
        assert_eq!(st.name, "p");
        assert_eq!(st.fields.len(), 2);
        let FieldBinding::Buffer(b) = &st.fields[0].binding else {
            panic!()
        };
        assert_eq!((b.name.as_str(), b.init.clone()), ("data", vec![1, 2]));
        assert_eq!(st.fields[1].offset, 8);
        let FieldBinding::Scalar(s) = &st.fields[1].binding else {
            panic!()
        };
        assert_eq!(s.value, 3);
        // Positions inside the quoted value.
        let text = "--struct 'p{0:buffer=data:int32[2]; 4:scalar=n:int64=3}'";
        let e = parse(text).unwrap_err();
        assert_eq!(
            e.message(),
            "expected an offset that is a multiple of the field's 8 bytes (its alignment), found `4`"
        );
        assert_eq!(&text[e.span.start..e.span.end], "4");
        let text = "--struct 'p{0:buffer=data:int32[2]; 8:scalar=n:int32=3; 12:scalar=m:int16=1; 14:point=q:int8=0}'";
        let e = parse(text).unwrap_err();
        assert_eq!(e.message(), "expected `buffer` or `scalar`, found `point`");
        assert_eq!(&text[e.span.start..e.span.end], "point");
        let text = "--struct 'p{0:buffer=data:int32[2]; 0:scalar=n:int32=3}'";
        let e = parse(text).unwrap_err();
        assert_eq!(
            e.message(),
            "expected fields that do not overlap, found bytes 0..4 over bytes 0..8 of an earlier field"
        );
        assert_eq!(&text[e.span.start..e.span.end], "0:scalar=n:int32=3");
        let text = "--struct p{0:buffer=data:int33[2]}";
        let e = parse(text).unwrap_err();
        assert_eq!(&text[e.span.start..e.span.end], "int33");
        let e = parse("--struct p{}").unwrap_err();
        assert_eq!(e.message(), "expected at least one field, found none");
        let e = parse("--struct p").unwrap_err();
        assert!(
            e.message().starts_with("expected `NAME{OFFSET:buffer="),
            "{}",
            e.message()
        );
    }

    #[test]
    fn flags_after_dependent_describe_the_dependent_kernel() {
        let text = "--entry a --grid 2 --buffer d:int32[2] --dependent b --block 3 --buffer d --buffer o:int32[1] --forall 'o[0] == 1'";
        let l = parse(text).unwrap();
        assert_eq!((l.grid, l.block, l.params.len()), ([2, 1, 1], [1, 1, 1], 1));
        assert!(l.condition.is_some());
        let d = l.dependent.as_deref().unwrap();
        let (name, span) = d.entry.clone().unwrap();
        assert_eq!((name.as_str(), &text[span.start..span.end]), ("b", "b"));
        assert_eq!((d.grid, d.block), ([1, 1, 1], [3, 1, 1]));
        assert!(d.condition.is_none());
        let Binding::Primary { name, span } = &d.params[0] else {
            panic!("{:?}", d.params[0])
        };
        assert_eq!((name.as_str(), &text[span.start..span.end]), ("d", "d"));
        assert!(matches!(&d.params[1], Binding::Buffer(b) if b.name == "o"));
        assert_eq!(l.all_threads(), 5);
        // `--buffer NAME` alone is a reference only in the dependent's part.
        let e = parse("--buffer d").unwrap_err();
        assert_eq!(e.message(), "expected `NAME:TYPE...`, found `d`");
        let e = parse("--dependent b --buffer d-x").unwrap_err();
        assert_eq!(
            e.message(),
            "expected `NAME` (a buffer of the primary kernel) or `NAME:TYPE[LEN]` (a new buffer), found `d-x`"
        );
        assert_eq!(e.span, Span::new(23, 26));
    }

    #[test]
    fn the_cuda_comment_is_found() {
        let src = "// k\n/* ptxmc-launch:\n --grid 2\n*/\n__global__ void k() {}";
        let (at, text) = from_cuda_comment(src).unwrap();
        assert_eq!(&src[at..at + text.len()], text);
        assert_eq!(parse(text).unwrap().grid, [2, 1, 1]);
    }
}
