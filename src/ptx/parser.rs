//! Reading a whole PTX module into its syntax tree ([`super::ast`]).
//!
//! The parser knows PTX's *structure* — directives, declarations, scopes,
//! labels, guards, operands, `.loc` — but no instruction's meaning, so a
//! module full of instructions ptxmc does not model still reads; lowering
//! refuses the ones a checked kernel reaches. `.section .debug_*` blocks are
//! skipped as a unit. Names are resolved here: registers through the chain
//! of `{ }` scopes (inline assembly declares its own), labels within the
//! block that defines them or an enclosing one.

use std::collections::HashMap;

use super::ast::{Function, Instr, Loc, Module, Opnd, Param, RegDecl, VarDecl, VarSpace};
use super::lexer::{Tok, Token, int_value, tokenize};
use crate::litmus::{Diagnostic, Span};

/// The most nested `{ }` blocks a body may have (hostile input cannot
/// exhaust anything: blocks are a stack here, not recursion, but a bound
/// keeps messages sane).
pub const MAX_BLOCK_DEPTH: usize = 256;

/// Parse a PTX module.
pub fn parse(text: &str) -> Result<Module, Diagnostic> {
    let toks = tokenize(text)?;
    let mut p = Parser {
        toks: &toks,
        pos: 0,
        end: Span::new(text.len(), text.len()),
        module: Module::default(),
        locs: HashMap::new(),
    };
    p.module_items()?;
    Ok(p.module)
}

struct Parser<'t, 's> {
    toks: &'t [Token<'s>],
    pos: usize,
    end: Span,
    module: Module,
    /// `.loc` positions seen, to follow `inlined_at` to the compiled function's line.
    locs: HashMap<(u32, u32, u32), (u32, u32)>,
}

/// One `{ }` block of a body: its names.
#[derive(Default)]
struct Block {
    /// Single register names.
    regs: HashMap<String, u32>,
    /// `%r<N>` ranges: prefix → count.
    ranges: HashMap<String, u64>,
    /// Labels defined here.
    labels: HashMap<String, usize>,
    /// Branches in this block (or inner ones) whose label is not found yet:
    /// (instruction, label, span).
    pending: Vec<(usize, String, Span)>,
}

impl<'s> Parser<'_, 's> {
    fn peek(&self) -> Option<Token<'s>> {
        self.toks.get(self.pos).copied()
    }
    fn peek_at(&self, k: usize) -> Option<Token<'s>> {
        self.toks.get(self.pos + k).copied()
    }
    fn bump(&mut self) -> Option<Token<'s>> {
        let t = self.peek();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    fn at(&self, tok: Tok) -> bool {
        self.peek().is_some_and(|t| t.tok == tok)
    }
    fn eat(&mut self, tok: Tok) -> Option<Token<'s>> {
        if self.at(tok) { self.bump() } else { None }
    }
    fn error(&self, what: &str) -> Diagnostic {
        match self.peek() {
            Some(t) => Diagnostic::expected(t.span, what, t.quoted()),
            None => Diagnostic::expected(self.end, what, "the end of the file"),
        }
    }
    fn expect(&mut self, tok: Tok, what: &str) -> Result<Token<'s>, Diagnostic> {
        self.eat(tok).ok_or_else(|| self.error(what))
    }
    fn int(&mut self, what: &str) -> Result<(u64, Span), Diagnostic> {
        let t = self.expect(Tok::Int, what)?;
        let v = int_value(t.text).ok_or_else(|| {
            Diagnostic::expected(t.span, "an integer that fits in 64 bits", t.quoted())
        })?;
        Ok((v, t.span))
    }
    /// Skip to just after the next `;` at this nesting level.
    fn skip_statement(&mut self) -> Result<(), Diagnostic> {
        let mut depth = 0usize;
        loop {
            let t = self.bump().ok_or_else(|| self.error("`;`"))?;
            match t.tok {
                Tok::LBrace | Tok::LParen => depth += 1,
                Tok::RBrace | Tok::RParen => depth = depth.saturating_sub(1),
                Tok::Semi if depth == 0 => return Ok(()),
                _ => {}
            }
        }
    }

    fn module_items(&mut self) -> Result<(), Diagnostic> {
        while let Some(t) = self.peek() {
            match (t.tok, t.text) {
                (Tok::Directive, ".version") => {
                    self.bump();
                    let v = self.expect(Tok::Decimal, "a PTX version such as `9.5`")?;
                    self.module.version = Some(v.text.to_string());
                }
                (Tok::Directive, ".target") => {
                    self.bump();
                    loop {
                        let w = self.expect(Tok::Word, "a target name such as `sm_90a`")?;
                        self.module.target.push(w.text.to_string());
                        if self.eat(Tok::Comma).is_none() {
                            break;
                        }
                    }
                }
                (Tok::Directive, ".address_size") => {
                    self.bump();
                    let (v, s) = self.int("an address size (32 or 64)")?;
                    if v != 32 && v != 64 {
                        return Err(Diagnostic::expected(s, "32 or 64", v.to_string()));
                    }
                    self.module.address_size = Some(v as u32);
                }
                (Tok::Directive, ".file") => {
                    self.bump();
                    let (n, s) = self.int("a file number")?;
                    let name = self.expect(Tok::Str, "a file name in quotes")?;
                    // Optional `, timestamp, size`.
                    while self.eat(Tok::Comma).is_some() {
                        self.int("a timestamp or file size")?;
                    }
                    let n = u32::try_from(n).map_err(|_| {
                        Diagnostic::expected(s, "a file number below 2^32", n.to_string())
                    })?;
                    let text = name.text[1..name.text.len() - 1].to_string();
                    self.module.files.insert(n, text);
                }
                (Tok::Directive, ".section") => {
                    self.bump();
                    self.expect(Tok::Directive, "a section name such as `.debug_str`")?;
                    self.skip_block()?;
                }
                (Tok::Directive, ".visible" | ".extern" | ".weak" | ".common") => {
                    self.bump();
                }
                (Tok::Directive, ".entry" | ".func") => self.function()?,
                (Tok::Directive, ".global" | ".shared" | ".const") => {
                    let vars = self.var_decl()?;
                    self.module.vars.extend(vars);
                }
                (Tok::Directive, ".alias" | ".pragma") => {
                    self.bump();
                    self.skip_statement()?;
                }
                _ => {
                    return Err(self.error(
                        "a module directive (`.version`, `.target`, `.entry`, `.func`, a variable, `.file`, `.section`)",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Skip a balanced `{ ... }` (a debug section's contents).
    fn skip_block(&mut self) -> Result<(), Diagnostic> {
        let open = self.expect(Tok::LBrace, "`{`")?;
        let mut depth = 1usize;
        while depth > 0 {
            let t = self.bump().ok_or_else(|| {
                Diagnostic::expected(open.span, "a block closed by `}`", "a block never closed")
            })?;
            match t.tok {
                Tok::LBrace => depth += 1,
                Tok::RBrace => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    /// `.global/.shared/.const/.local/.param [.align N] [.ptr ...] .TYPE name[N] [= init] {, name};`
    fn var_decl(&mut self) -> Result<Vec<VarDecl>, Diagnostic> {
        let sp = self.bump().expect("caller saw a directive");
        let space = match sp.text {
            ".global" => VarSpace::Global,
            ".shared" => VarSpace::Shared,
            ".const" => VarSpace::Const,
            ".local" => VarSpace::Local,
            _ => VarSpace::Param,
        };
        let mut ty = None;
        while let Some(t) = self.eat(Tok::Directive) {
            match t.text {
                ".align" => {
                    self.int("an alignment")?;
                }
                ".v2" | ".v4" | ".v8" => {
                    return Err(Diagnostic::unsupported(
                        t.span,
                        t.text,
                        "a scalar or array variable",
                    )
                    .with_note("vector variables are not modelled"));
                }
                ".ptr" | ".global" | ".shared" | ".const" | ".local" => {}
                ".texref" | ".samplerref" | ".surfref" => {
                    return Err(Diagnostic::unsupported(t.span, t.text, "a data variable")
                        .with_note("texture, sampler and surface references are not modelled"));
                }
                _ => ty = Some(t.text[1..].to_string()),
            }
        }
        let ty = ty.ok_or_else(|| self.error("a type such as `.b32`"))?;
        let mut out = Vec::new();
        loop {
            let name = self.expect(Tok::Word, "a variable name")?;
            let mut len = None;
            if self.eat(Tok::LBrack).is_some() {
                if self.eat(Tok::RBrack).is_some() {
                    len = Some(0);
                } else {
                    let (n, _) = self.int("an array length")?;
                    self.expect(Tok::RBrack, "`]`")?;
                    len = Some(n);
                }
            }
            let mut init = Vec::new();
            if self.eat(Tok::Eq).is_some() {
                if self.eat(Tok::LBrace).is_some() {
                    loop {
                        init.push(self.signed_int()?);
                        if self.eat(Tok::Comma).is_none() {
                            break;
                        }
                    }
                    self.expect(Tok::RBrace, "`}`")?;
                } else {
                    init.push(self.signed_int()?);
                }
            }
            out.push(VarDecl {
                name: name.text.to_string(),
                space,
                ty: ty.clone(),
                len,
                init,
                span: name.span,
            });
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        self.expect(Tok::Semi, "`;` after a declaration")?;
        Ok(out)
    }

    fn signed_int(&mut self) -> Result<i64, Diagnostic> {
        let neg = self.eat(Tok::Minus).is_some();
        if let Some(t) = self.eat(Tok::HexFloat) {
            return Ok(u64::from_str_radix(&t.text[2..], 16).unwrap_or(0) as i64);
        }
        let (v, _) = self.int("an integer initialiser")?;
        Ok(if neg {
            (v as i64).wrapping_neg()
        } else {
            v as i64
        })
    }

    /// `( .param .T name, ... )`
    fn params(&mut self) -> Result<Vec<Param>, Diagnostic> {
        let mut out = Vec::new();
        self.expect(Tok::LParen, "`(`")?;
        if self.eat(Tok::RParen).is_some() {
            return Ok(out);
        }
        loop {
            let sp = self.expect(Tok::Directive, "`.param` or `.reg`")?;
            if sp.text != ".param" && sp.text != ".reg" {
                return Err(Diagnostic::expected(sp.span, "`.param`", sp.quoted()));
            }
            let mut ty = None;
            while let Some(t) = self.eat(Tok::Directive) {
                match t.text {
                    ".align" => {
                        self.int("an alignment")?;
                    }
                    ".ptr" | ".global" | ".shared" | ".const" | ".local" => {}
                    _ => ty = Some(t.text[1..].to_string()),
                }
            }
            let ty = ty.ok_or_else(|| self.error("a parameter type such as `.u64`"))?;
            let name = self.expect(Tok::Word, "a parameter name")?;
            let mut len = None;
            if self.eat(Tok::LBrack).is_some() {
                let (n, _) = self.int("an array length")?;
                self.expect(Tok::RBrack, "`]`")?;
                len = Some(n);
            }
            out.push(Param {
                name: name.text.to_string(),
                ty,
                len,
                span: name.span,
            });
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        self.expect(Tok::RParen, "`,` or `)`")?;
        Ok(out)
    }

    fn function(&mut self) -> Result<(), Diagnostic> {
        let kw = self.bump().expect("caller saw the directive");
        let entry = kw.text == ".entry";
        // `.func` attributes such as `.attribute(.unified_addr)` are rare; refuse them by name.
        let rets = if !entry && self.at(Tok::LParen) {
            self.params()?
        } else {
            Vec::new()
        };
        let name = self.expect(Tok::Word, "a function name")?;
        let params = if self.at(Tok::LParen) {
            self.params()?
        } else {
            Vec::new()
        };
        // Performance directives up to the body (or `;` of a declaration).
        loop {
            match self.peek() {
                Some(t) if t.tok == Tok::Directive => {
                    self.bump();
                    // Their operands: numbers and commas (or a string for `.pragma`).
                    while self.at(Tok::Int) || self.at(Tok::Comma) || self.at(Tok::Str) {
                        self.bump();
                    }
                    self.eat(Tok::Semi);
                }
                _ => break,
            }
        }
        let mut f = Function {
            name: name.text.to_string(),
            span: name.span,
            entry,
            params,
            rets,
            regs: Vec::new(),
            vars: Vec::new(),
            body: Vec::new(),
            labels: Vec::new(),
            decl_only: false,
        };
        if self.eat(Tok::Semi).is_some() {
            f.decl_only = true;
            self.module.functions.push(f);
            return Ok(());
        }
        self.body(&mut f)?;
        self.module.functions.push(f);
        Ok(())
    }

    fn body(&mut self, f: &mut Function) -> Result<(), Diagnostic> {
        let open = self.expect(Tok::LBrace, "`{` opening the function body, or `;`")?;
        let mut blocks: Vec<(Block, Span)> = vec![(Block::default(), open.span)];
        let mut loc: Option<Loc> = None;
        loop {
            let Some(t) = self.peek() else {
                let (_, s) = blocks.last().expect("a block is open");
                return Err(Diagnostic::expected(
                    *s,
                    "a block closed by `}`",
                    "a block never closed",
                )
                .with_label("this block is not closed before the end of the file"));
            };
            match t.tok {
                Tok::LBrace => {
                    self.bump();
                    if blocks.len() >= MAX_BLOCK_DEPTH {
                        return Err(Diagnostic::expected(
                            t.span,
                            format!("at most {MAX_BLOCK_DEPTH} nested blocks"),
                            "more",
                        ));
                    }
                    blocks.push((Block::default(), t.span));
                }
                Tok::RBrace => {
                    self.bump();
                    let (b, _) = blocks.pop().expect("a block is open");
                    let mut unresolved = Vec::new();
                    for (i, name, span) in b.pending {
                        match b.labels.get(&name) {
                            Some(&at) => f.body[i].target = Some(at),
                            None => unresolved.push((i, name, span)),
                        }
                    }
                    match blocks.last_mut() {
                        Some((parent, _)) => parent.pending.extend(unresolved),
                        None => {
                            if let Some((_, name, span)) = unresolved.into_iter().next() {
                                return Err(Diagnostic::expected(
                                    span,
                                    "a label defined in this function",
                                    format!("`{name}`"),
                                ));
                            }
                            return Ok(());
                        }
                    }
                }
                Tok::Directive => match t.text {
                    ".reg" => {
                        self.bump();
                        self.reg_decl(f, &mut blocks)?;
                    }
                    ".shared" | ".local" | ".param" | ".global" | ".const" => {
                        let vars = self.var_decl()?;
                        f.vars.extend(vars);
                    }
                    ".loc" => {
                        self.bump();
                        loc = Some(self.loc()?);
                    }
                    _ => {
                        // `.pragma "nounroll";`, `.callprototype ...;` and the like:
                        // no effect on what the kernel does.
                        self.bump();
                        self.skip_statement()?;
                    }
                },
                Tok::Word if self.peek_at(1).is_some_and(|n| n.tok == Tok::Colon) => {
                    self.bump();
                    self.bump();
                    let (b, _) = blocks.last_mut().expect("a block is open");
                    if b.labels.insert(t.text.to_string(), f.body.len()).is_some() {
                        return Err(Diagnostic::expected(
                            t.span,
                            "a label not defined before in this block",
                            format!("`{}` again", t.text),
                        ));
                    }
                    f.labels.push((t.text.to_string(), f.body.len()));
                }
                Tok::Semi => {
                    self.bump();
                }
                _ => {
                    let i = self.instruction(f, &mut blocks, loc)?;
                    if let Some((name, span)) = branch_label(&i) {
                        let at = f.body.len();
                        blocks
                            .last_mut()
                            .expect("a block is open")
                            .0
                            .pending
                            .push((at, name, span));
                    }
                    f.body.push(i);
                }
            }
        }
    }

    fn reg_decl(
        &mut self,
        f: &mut Function,
        blocks: &mut [(Block, Span)],
    ) -> Result<(), Diagnostic> {
        let mut ty = None;
        while let Some(t) = self.eat(Tok::Directive) {
            match t.text {
                ".v2" | ".v4" | ".v8" => {}
                _ => ty = Some(t.text[1..].to_string()),
            }
        }
        let ty = ty.ok_or_else(|| self.error("a register type such as `.b32`"))?;
        loop {
            let name = self.expect(Tok::Word, "a register name")?;
            let (b, _) = blocks.last_mut().expect("a block is open");
            if self.eat(Tok::Lt).is_some() {
                let (n, _) = self.int("a register count")?;
                self.expect(Tok::Gt, "`>`")?;
                b.ranges.insert(name.text.to_string(), n);
                // Later single declarations of the same name shadow nothing: a
                // range's registers are created on first use.
            } else {
                let id = f.regs.len() as u32;
                f.regs.push(RegDecl {
                    name: name.text.to_string(),
                    ty: ty.clone(),
                });
                b.regs.insert(name.text.to_string(), id);
            }
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        // Remember the type of ranges for registers created later.
        self.expect(Tok::Semi, "`;` after a register declaration")?;
        let _ = ty;
        Ok(())
    }

    /// `.loc F L C [, function_name LAB, inlined_at F L C]`
    fn loc(&mut self) -> Result<Loc, Diagnostic> {
        let (file, fs) = self.int("a file number")?;
        let (line, _) = self.int("a line number")?;
        let (col, _) = self.int("a column number")?;
        let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let (file, line, col) = (small(file), small(line), small(col));
        let _ = fs;
        let mut root = (file, line);
        while self.at(Tok::Comma) {
            self.bump();
            let w = self.expect(Tok::Word, "`function_name` or `inlined_at`")?;
            match w.text {
                "function_name" => {
                    self.expect(Tok::Word, "a label")?;
                }
                "inlined_at" => {
                    let f2 = small(self.int("a file number")?.0);
                    let l2 = small(self.int("a line number")?.0);
                    let c2 = small(self.int("a column number")?.0);
                    root = self.locs.get(&(f2, l2, c2)).copied().unwrap_or((f2, l2));
                }
                _ => {
                    return Err(Diagnostic::expected(
                        w.span,
                        "`function_name` or `inlined_at`",
                        w.quoted(),
                    ));
                }
            }
        }
        self.locs.insert((file, line, col), root);
        Ok(Loc { file, line, root })
    }

    fn lookup_reg(f: &mut Function, blocks: &mut [(Block, Span)], name: &str) -> Option<u32> {
        for (b, _) in blocks.iter_mut().rev() {
            if let Some(&id) = b.regs.get(name) {
                return Some(id);
            }
            // `%r12` within `%r<N>`: the prefix and a number below N
            // (no leading zero, as nvcc writes them).
            let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            if digits > 0 {
                let (prefix, num) = name.split_at(name.len() - digits);
                if let (Some(&n), Ok(k)) = (b.ranges.get(prefix), num.parse::<u64>()) {
                    if k < n && (num == "0" || !num.starts_with('0')) {
                        let id = f.regs.len() as u32;
                        f.regs.push(RegDecl {
                            name: name.to_string(),
                            ty: String::new(),
                        });
                        b.regs.insert(name.to_string(), id);
                        return Some(id);
                    }
                }
            }
        }
        None
    }

    fn instruction(
        &mut self,
        f: &mut Function,
        blocks: &mut [(Block, Span)],
        loc: Option<Loc>,
    ) -> Result<Instr, Diagnostic> {
        let start = self.peek().map_or(self.end, |t| t.span);
        let mut guard = None;
        if self.eat(Tok::At).is_some() {
            let neg = self.eat(Tok::Bang).is_some();
            let r = self.expect(Tok::Word, "a predicate register after `@`")?;
            let id = Self::lookup_reg(f, blocks, r.text).ok_or_else(|| {
                Diagnostic::expected(r.span, "a declared predicate register", r.quoted())
            })?;
            guard = Some((neg, id, r.span));
        }
        let mn = self.expect(Tok::Word, "an instruction")?;
        let mut operands = Vec::new();
        if !self.at(Tok::Semi) {
            loop {
                operands.push(self.operand(f, blocks)?);
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        let semi = self.expect(Tok::Semi, "`,` or `;` ending the instruction")?;
        Ok(Instr {
            guard,
            mnemonic: mn.text.to_string(),
            mn_span: mn.span,
            operands,
            span: start.to(semi.span),
            loc,
            target: None,
        })
    }

    fn operand(
        &mut self,
        f: &mut Function,
        blocks: &mut [(Block, Span)],
    ) -> Result<Opnd, Diagnostic> {
        let first = self.single_operand(f, blocks)?;
        if self.at(Tok::Pipe) {
            self.bump();
            let second = self.single_operand(f, blocks)?;
            let span = first.span().to(second.span());
            return Ok(Opnd::Pair(Box::new(first), Box::new(second), span));
        }
        Ok(first)
    }

    fn single_operand(
        &mut self,
        f: &mut Function,
        blocks: &mut [(Block, Span)],
    ) -> Result<Opnd, Diagnostic> {
        const WHAT: &str = "an operand (a register, an integer, `[address]`, a name or `{...}`)";
        let t = self.bump().ok_or_else(|| self.error(WHAT))?;
        Ok(match t.tok {
            Tok::Word => self.name_operand(f, blocks, t)?,
            Tok::Int => Opnd::Imm(self.int_of(t)? as i64, t.span),
            Tok::Minus => {
                let n = self.expect(Tok::Int, "an integer after `-`")?;
                Opnd::Imm((self.int_of(n)? as i64).wrapping_neg(), t.span.to(n.span))
            }
            Tok::HexFloat => {
                Opnd::Float(u64::from_str_radix(&t.text[2..], 16).unwrap_or(0), t.span)
            }
            Tok::Bang => {
                let inner = self.single_operand(f, blocks)?;
                let span = t.span.to(inner.span());
                Opnd::Not(Box::new(inner), span)
            }
            Tok::LBrack => {
                let mut base = None;
                let mut offset: i64 = 0;
                if let Some(w) = self.eat(Tok::Word) {
                    base = Some(Box::new(self.name_operand(f, blocks, w)?));
                    if self.eat(Tok::Plus).is_some() {
                        let neg = self.eat(Tok::Minus).is_some();
                        let n = self.expect(Tok::Int, "an offset")?;
                        let v = self.int_of(n)? as i64;
                        offset = if neg { v.wrapping_neg() } else { v };
                    } else if self.eat(Tok::Minus).is_some() {
                        let n = self.expect(Tok::Int, "an offset")?;
                        offset = (self.int_of(n)? as i64).wrapping_neg();
                    }
                } else {
                    let n =
                        self.expect(Tok::Int, "a register, a name or an address inside `[...]`")?;
                    offset = self.int_of(n)? as i64;
                }
                // Texture and surface operands: `[tex, {coords}]`, kept as a
                // list in the base (their instructions are refused by name).
                if self.at(Tok::Comma) {
                    let first = base.take().map_or(Opnd::Imm(offset, t.span), |b| *b);
                    let mut items = vec![first];
                    while self.eat(Tok::Comma).is_some() {
                        items.push(self.operand(f, blocks)?);
                    }
                    let close = self.expect(Tok::RBrack, "`,` or `]`")?;
                    let span = t.span.to(close.span);
                    return Ok(Opnd::Addr {
                        base: Some(Box::new(Opnd::List(items, span))),
                        offset: 0,
                        span,
                    });
                }
                let close = self.expect(Tok::RBrack, "`]`")?;
                Opnd::Addr {
                    base,
                    offset,
                    span: t.span.to(close.span),
                }
            }
            Tok::LBrace | Tok::LParen => {
                let close_tok = if t.tok == Tok::LBrace {
                    Tok::RBrace
                } else {
                    Tok::RParen
                };
                let mut items = Vec::new();
                if !self.at(close_tok) {
                    loop {
                        items.push(self.operand(f, blocks)?);
                        if self.eat(Tok::Comma).is_none() {
                            break;
                        }
                    }
                }
                let close =
                    self.expect(close_tok, if t.tok == Tok::LBrace { "`}`" } else { "`)`" })?;
                let span = t.span.to(close.span);
                if t.tok == Tok::LBrace {
                    Opnd::Vector(items, span)
                } else {
                    Opnd::List(items, span)
                }
            }
            _ => return Err(Diagnostic::expected(t.span, WHAT, t.quoted())),
        })
    }

    fn int_of(&self, t: Token<'_>) -> Result<u64, Diagnostic> {
        int_value(t.text).ok_or_else(|| {
            Diagnostic::expected(t.span, "an integer that fits in 64 bits", t.quoted())
        })
    }

    fn name_operand(
        &mut self,
        f: &mut Function,
        blocks: &mut [(Block, Span)],
        t: Token<'_>,
    ) -> Result<Opnd, Diagnostic> {
        if t.text == "_" {
            return Ok(Opnd::Sink(t.span));
        }
        if let Some(id) = Self::lookup_reg(f, blocks, t.text) {
            return Ok(Opnd::Reg(id, t.span));
        }
        if t.text.starts_with('%') {
            if is_special(t.text) {
                return Ok(Opnd::Special(t.text.to_string(), t.span));
            }
            return Err(Diagnostic::expected(
                t.span,
                "a declared register or a special register",
                t.quoted(),
            ));
        }
        Ok(Opnd::Name(t.text.to_string(), t.span))
    }
}

/// A branch's label operand.
fn branch_label(i: &Instr) -> Option<(String, Span)> {
    let op = i.mnemonic.split('.').next()?;
    if op != "bra" {
        return None;
    }
    match i.operands.first() {
        Some(Opnd::Name(n, s)) => Some((n.clone(), *s)),
        _ => None,
    }
}

/// Special registers PTX defines (ISA §10), with or without a component.
fn is_special(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or(name);
    const SPECIAL: &[&str] = &[
        "%tid",
        "%ntid",
        "%laneid",
        "%warpid",
        "%nwarpid",
        "%ctaid",
        "%nctaid",
        "%smid",
        "%nsmid",
        "%gridid",
        "%is_explicit_cluster",
        "%clusterid",
        "%nclusterid",
        "%cluster_ctaid",
        "%cluster_nctaid",
        "%cluster_ctarank",
        "%cluster_nctarank",
        "%lanemask_eq",
        "%lanemask_le",
        "%lanemask_lt",
        "%lanemask_ge",
        "%lanemask_gt",
        "%clock",
        "%clock_hi",
        "%clock64",
        "%globaltimer",
        "%globaltimer_lo",
        "%globaltimer_hi",
        "%total_smem_size",
        "%aggr_smem_size",
        "%dynamic_smem_size",
        "%current_graph_exec",
    ];
    SPECIAL.contains(&base)
        || base.starts_with("%pm")
        || base.starts_with("%envreg")
        || base.starts_with("%reserved_smem")
}

#[cfg(test)]
mod tests {
    use super::*;

    const INLINE_ASM: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.shared .align 8 .b64 bar;
.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<6>;
	.loc	1 2 0
	// begin inline asm
	{
	.reg .pred P1;
	LAB_WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 P1, [bar], %r1;
	@P1 bra DONE;
	bra LAB_WAIT;
	DONE:
	}
	// end inline asm
	@!%p1 bra $L__BB0_2;
	setp.ne.s32 %p2|%p1, %r5, 0;
$L__BB0_2:
	ret;
}
.section .debug_str { $L__info_string0: .b8 95,0 }
"#;

    #[test]
    fn inline_asm_scopes_and_labels_resolve() {
        let m = parse(INLINE_ASM).unwrap();
        assert_eq!(m.version.as_deref(), Some("9.5"));
        assert_eq!(m.target, vec!["sm_90a"]);
        assert_eq!(m.vars.len(), 1);
        let f = &m.functions[0];
        assert!(f.entry);
        assert_eq!(f.body.len(), 6);
        // `@P1 bra DONE` → index 2 (after the two branches).
        assert_eq!(f.body[1].target, Some(3));
        assert_eq!(f.body[2].target, Some(0));
        assert_eq!(f.body[3].target, Some(5));
        assert!(matches!(f.body[4].operands[0], Opnd::Pair(..)));
        assert_eq!(f.body[0].loc.map(|l| l.line), Some(2));
    }

    #[test]
    fn an_undefined_label_and_an_undeclared_register_are_positioned() {
        let e = parse(".version 9.5\n.entry k() { bra NOWHERE; }").unwrap_err();
        assert_eq!(
            e.message(),
            "expected a label defined in this function, found `NOWHERE`"
        );
        let e = parse(".version 9.5\n.entry k() { .reg .b32 %r<2>; mov.u32 %r2, 1; }").unwrap_err();
        assert_eq!(
            e.message(),
            "expected a declared register or a special register, found `%r2`"
        );
        assert_eq!(e.span.start, 51);
    }

    #[test]
    fn a_label_inside_an_asm_block_is_not_seen_outside() {
        let e = parse(".entry k() { { L: ret; } bra L; }").unwrap_err();
        assert_eq!(
            e.message(),
            "expected a label defined in this function, found `L`"
        );
    }

    #[test]
    fn a_truncated_module_is_positioned() {
        let e = parse(".version 9.5\n.entry k() { .reg .b32 %r<2>; mov.u32 %r1, ").unwrap_err();
        assert!(
            e.message().starts_with("expected an operand"),
            "{}",
            e.message()
        );
        let e = parse(".version 9.5\n.entry k() { ret;").unwrap_err();
        assert_eq!(
            e.message(),
            "expected a block closed by `}`, found a block never closed"
        );
    }

    #[test]
    fn every_corpus_module_reads() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "ptx") {
                let text = std::fs::read_to_string(&p).unwrap();
                let m = parse(&text).unwrap_or_else(|d| panic!("{}: {}", p.display(), d.message()));
                // One kernel per module, but a programmatic dependent
                // launch's pair (`pdl_*`: a primary and its dependent).
                let name = p.file_name().unwrap().to_string_lossy();
                let kernels = if name.starts_with("pdl_") { 2 } else { 1 };
                assert_eq!(m.entries().count(), kernels, "{}", p.display());
                n += 1;
            }
        }
        assert!(n >= 10, "{n} modules");
    }
}
