//! The syntax tree of a PTX module: what the text says, with spans, before
//! any meaning is given to instructions. Every instruction is kept, known
//! to ptxmc or not (lowering refuses the unknown ones it reaches, by name).

use std::collections::BTreeMap;

use crate::litmus::Span;

/// A whole PTX module.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// `.version X.Y`.
    pub version: Option<String>,
    /// `.target` names (`sm_90a`, `debug`, ...).
    pub target: Vec<String>,
    /// `.address_size N`.
    pub address_size: Option<u32>,
    /// `.file N "path"`.
    pub files: BTreeMap<u32, String>,
    /// Kernels (`.entry`) and device functions (`.func`), in file order.
    pub functions: Vec<Function>,
    /// Module-scope variables (`.global`, `.shared`, `.const`).
    pub vars: Vec<VarDecl>,
}

impl Module {
    /// The kernels.
    pub fn entries(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.entry)
    }
    /// Number of instructions in every function body.
    pub fn instruction_count(&self) -> usize {
        self.functions.iter().map(|f| f.body.len()).sum()
    }
}

/// A `.entry` or `.func`.
#[derive(Clone, Debug)]
pub struct Function {
    /// Name as written (mangled).
    pub name: String,
    /// Where the name is.
    pub span: Span,
    /// `.entry` (a kernel) rather than `.func`.
    pub entry: bool,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Return parameters (`.func (.param .b32 r) f(...)`).
    pub rets: Vec<Param>,
    /// Registers, one per declared name (ranges are expanded on use).
    pub regs: Vec<RegDecl>,
    /// Variables declared inside the body (`.shared`, `.local`, ...).
    pub vars: Vec<VarDecl>,
    /// The instructions, flattened (nested `{ }` blocks only scope names).
    pub body: Vec<Instr>,
    /// Labels: name and the index of the instruction they precede.
    pub labels: Vec<(String, usize)>,
    /// A declaration without a body (`.extern .func ...;`).
    pub decl_only: bool,
}

/// A parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// Name.
    pub name: String,
    /// Type as written (`u64`, `b8`, ...).
    pub ty: String,
    /// Array length (`.param .b8 p[16]`).
    pub len: Option<u64>,
    /// Where.
    pub span: Span,
}

/// A register of a function.
#[derive(Clone, Debug)]
pub struct RegDecl {
    /// Name (`%r3`, or `P1` inside inline assembly).
    pub name: String,
    /// Type as written (`b32`, `pred`, ...).
    pub ty: String,
}

/// A state space of a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarSpace {
    /// `.global`
    Global,
    /// `.shared`
    Shared,
    /// `.const`
    Const,
    /// `.local`
    Local,
    /// `.param` inside a body (call arguments)
    Param,
}

/// A variable declaration.
#[derive(Clone, Debug)]
pub struct VarDecl {
    /// Name.
    pub name: String,
    /// Its state space.
    pub space: VarSpace,
    /// Element type as written (`b8`, `u32`, `b64`).
    pub ty: String,
    /// Array length; `None` for a scalar, `Some(0)` for `[]` (extern, sized at launch).
    pub len: Option<u64>,
    /// Initialiser values, if any.
    pub init: Vec<i64>,
    /// Where the name is.
    pub span: Span,
}

/// CUDA source position of an instruction, from `.loc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    /// `.file` number of the innermost position (an inlined function's).
    pub file: u32,
    /// Its line.
    pub line: u32,
    /// The position in the function that was compiled (following `inlined_at` to its root).
    pub root: (u32, u32),
}

/// An instruction as written.
#[derive(Clone, Debug)]
pub struct Instr {
    /// `@%p` / `@!%p` guard: (negated, register, span).
    pub guard: Option<(bool, u32, Span)>,
    /// The mnemonic with its modifiers (`ld.global.u32`).
    pub mnemonic: String,
    /// Where the mnemonic is.
    pub mn_span: Span,
    /// Operands.
    pub operands: Vec<Opnd>,
    /// The whole instruction.
    pub span: Span,
    /// The current `.loc`.
    pub loc: Option<Loc>,
    /// A branch's resolved target (instruction index).
    pub target: Option<usize>,
}

/// An operand as written.
#[derive(Clone, Debug)]
pub enum Opnd {
    /// A declared register (index into [`Function::regs`]).
    Reg(u32, Span),
    /// A special register (`%tid.x`, `%laneid`, ...), name as written.
    Special(String, Span),
    /// An integer.
    Imm(i64, Span),
    /// A floating-point literal's bits (`0f3F800000`).
    Float(u64, Span),
    /// A name: label, function, parameter or variable.
    Name(String, Span),
    /// `[base+offset]`.
    Addr {
        /// The base (register or name), absent for `[imm]`.
        base: Option<Box<Opnd>>,
        /// Constant byte offset.
        offset: i64,
        /// The whole `[...]`.
        span: Span,
    },
    /// `{a, b}`.
    Vector(Vec<Opnd>, Span),
    /// `(a, b)` of `call`.
    List(Vec<Opnd>, Span),
    /// `_`.
    Sink(Span),
    /// `!p`.
    Not(Box<Opnd>, Span),
    /// `p|q` (the two destinations of `setp`).
    Pair(Box<Opnd>, Box<Opnd>, Span),
}

impl Opnd {
    /// Where it was written.
    pub fn span(&self) -> Span {
        match self {
            Opnd::Reg(_, s)
            | Opnd::Special(_, s)
            | Opnd::Imm(_, s)
            | Opnd::Float(_, s)
            | Opnd::Name(_, s)
            | Opnd::Vector(_, s)
            | Opnd::List(_, s)
            | Opnd::Sink(s)
            | Opnd::Not(_, s)
            | Opnd::Pair(_, _, s) => *s,
            Opnd::Addr { span, .. } => *span,
        }
    }
}
