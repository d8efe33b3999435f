//! NVIDIA mixedproxy `.test` files.
//!
//! ```text
//! .global x;                                  a location
//! .global y physically aliases x;             another virtual address of x's location
//! .surfref s virtually aliases x;             x's address seen through the surface proxy
//! d0.b1.t0 { ld.acquire.gpu r0, [flag] == 1; ld r1, [x]; }
//! permit (r1 != 2) as name;                   or assert(...) / check(...)
//! ```
//! A template has placeholders `$0..$n`, a line `$$`, then one instance per
//! `|`-separated row (blank and `#` lines skipped). Placeholders are replaced
//! textually; every position in an instance maps back to the file, so
//! diagnostics point at the template or at the row cell.
//!
//! Semantics: a missing `.sem` is weak; `.volatile` is relaxed at system
//! scope; `ld ... == v` restricts the outcomes considered to those where the
//! load returned `v`. `permit(P)` becomes `exists (pre /\ P)`, `assert(P)`
//! becomes `forall (~pre \/ P)`, and `check(P)` becomes `exists (pre /\ P)`
//! with no expected verdict.

use std::collections::HashMap;

use super::SourceMap;
use super::builder::{AddrDecl, Builder};
use super::cond::{TermResolver, condition_register, parse_prop, too_deep};
use super::diag::{Diagnostic, Span, plural};
use super::lexer::{Cursor, Tok, Token, tokenize};
use super::raw::{MAX_PLACEMENT, RawInstr, parse_int, parse_raw};
use crate::ir::{
    AddressKind, CmpOp, ExpectKind, Expectation, Instr, MAX_PROP_DEPTH, Placement, Program, Prop,
    Quantifier, Term,
};

/// The largest text one template row may expand to: the peer suite's
/// instances are below 1 KiB, and expansion multiplies (every placeholder
/// receives its cell), so a small file could otherwise ask for gigabytes.
pub const MAX_INSTANCE_BYTES: usize = 256 << 10;
/// The most text all the rows of one file may expand to together.
pub const MAX_EXPANDED_BYTES: usize = 4 << 20;
/// The most template rows (instances) one file may have.
pub const MAX_INSTANCES: usize = 4096;

/// Parse a `.test` file into its instances: `(program, spans, template row)`.
pub fn parse(
    stem: &str,
    src: &str,
) -> Result<Vec<(Program, SourceMap, Option<usize>)>, Diagnostic> {
    let sep = find_separator(src);
    let Some((body_end, rows_start)) = sep else {
        let (p, m) = parse_instance(stem.to_string(), Vec::new(), src, None)?;
        return Ok(vec![(p, m, None)]);
    };
    let template = &src[..body_end];
    let mut out = Vec::new();
    let mut k = 0;
    let mut line_start = rows_start;
    let mut expanded = 0usize;
    for line in src[rows_start..].split_inclusive('\n') {
        let start = line_start;
        line_start += line.len();
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        k += 1;
        let content = line.trim_end_matches(['\n', '\r']);
        let row_span = Span::new(start, start + content.len());
        if k > MAX_INSTANCES {
            return Err(Diagnostic::expected(
                row_span,
                format!("at most {MAX_INSTANCES} template rows"),
                format!("row {k}"),
            )
            .with_label("ptxmc limits how many tests one file expands to"));
        }
        let cells = split_row(content, start);
        let budget = MAX_INSTANCE_BYTES.min(MAX_EXPANDED_BYTES - expanded);
        let exp = expand(template, &cells, start, budget).map_err(|e| match e {
            ExpandError::Diagnostic(d) => d,
            ExpandError::TooLarge if budget < MAX_INSTANCE_BYTES => Diagnostic::expected(
                row_span,
                format!(
                    "template rows that expand to at most {} KiB together",
                    MAX_EXPANDED_BYTES >> 10
                ),
                format!("more by row {k}"),
            )
            .with_label("the expansion limit is reached at this row"),
            ExpandError::TooLarge => Diagnostic::expected(
                row_span,
                format!(
                    "a template row that expands to at most {} KiB",
                    MAX_INSTANCE_BYTES >> 10
                ),
                format!("row {k}, which expands to more"),
            )
            .with_label("every placeholder of the template receives its cell"),
        })?;
        expanded += exp.text.len();
        let doc = format!("mixedproxy template row {k}: {}", squeeze(trimmed));
        let (p, m) = parse_instance(
            format!("{stem}[{k}]"),
            vec![doc],
            &exp.text,
            Some(&exp.origin),
        )?;
        out.push((p, m, Some(k)));
    }
    if out.is_empty() {
        return Err(Diagnostic::expected(
            Span::new(rows_start, rows_start),
            "at least one template row after `$$`",
            "none",
        ));
    }
    Ok(out)
}

/// A row as a one-line doc string: cells trimmed, blanks squeezed, and `"`
/// written `'` (a doc string cannot hold `"`, so the canonical text of the
/// instance stays readable as the same test).
fn squeeze(s: &str) -> String {
    let s = s.replace('"', "'");
    let parts: Vec<String> = s
        .split('|')
        .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    parts.join(" | ")
}

/// The `$$` line: returns (end of template, start of rows).
fn find_separator(src: &str) -> Option<(usize, usize)> {
    let mut pos = 0;
    for line in src.split_inclusive('\n') {
        if line.trim() == "$$" {
            return Some((pos, pos + line.len()));
        }
        pos += line.len();
    }
    None
}

fn split_row(line: &str, off: usize) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut push = |s: usize, e: usize| {
        let cell = &line[s..e];
        let lead = cell.len() - cell.trim_start().len();
        out.push((cell.trim().to_string(), off + s + lead));
    };
    for (i, c) in line.char_indices() {
        if c == '|' {
            push(start, i);
            start = i + 1;
        }
    }
    push(start, line.len());
    out
}

/// An instance's text with, for every byte, its offset in the original file.
struct Expanded {
    text: String,
    origin: Vec<usize>,
}

/// Why a row could not be expanded.
enum ExpandError {
    /// A positioned error (a placeholder without a cell).
    Diagnostic(Diagnostic),
    /// The instance would exceed its byte budget.
    TooLarge,
}

/// The template with `$k` replaced by cell `k`, stopping as soon as the text
/// would exceed `budget` bytes.
fn expand(
    template: &str,
    cells: &[(String, usize)],
    row_start: usize,
    budget: usize,
) -> Result<Expanded, ExpandError> {
    let mut text = String::new();
    let mut origin = Vec::new();
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' && i + 1 < bytes.len() && bytes[i + 1].is_ascii_digit() {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            let n: usize = template[i + 1..j].parse().unwrap_or(usize::MAX);
            let Some((cell, cell_off)) = cells.get(n) else {
                return Err(ExpandError::Diagnostic(Diagnostic::expected(
                    Span::new(row_start, row_start + 1),
                    format!(
                        "a row with at least {} cells (the template uses `${n}`)",
                        n.saturating_add(1)
                    ),
                    plural(cells.len(), "cell"),
                )));
            };
            if text.len() + cell.len() > budget {
                return Err(ExpandError::TooLarge);
            }
            text.push_str(cell);
            origin.extend((0..cell.len()).map(|k| cell_off + k));
            i = j;
        } else {
            let c = template[i..].chars().next().unwrap();
            if text.len() + c.len_utf8() > budget {
                return Err(ExpandError::TooLarge);
            }
            text.push(c);
            origin.extend((0..c.len_utf8()).map(|k| i + k));
            i += c.len_utf8();
        }
    }
    origin.push(template.len());
    Ok(Expanded { text, origin })
}

fn remap(origin: Option<&[usize]>, sp: Span) -> Span {
    match origin {
        None => sp,
        Some(o) => {
            let s = o[sp.start.min(o.len() - 1)];
            let e = if sp.end > sp.start {
                o[(sp.end - 1).min(o.len() - 1)] + 1
            } else {
                s
            };
            Span::new(s, e.max(s))
        }
    }
}

struct RawThread<'s> {
    name: Token<'s>,
    placement: (u32, u32),
    instrs: Vec<RawInstr>,
}

fn parse_instance(
    name: String,
    docs: Vec<String>,
    text: &str,
    origin: Option<&[usize]>,
) -> Result<(Program, SourceMap), Diagnostic> {
    let remap_d = |mut d: Diagnostic| {
        d.span = remap(origin, d.span);
        d
    };
    let toks = tokenize(text, 0).map_err(remap_d)?;
    let end = Span::new(text.len(), text.len());
    let mut cur = Cursor::new(&toks, end);
    let mut decls = Vec::new();
    let mut threads: Vec<RawThread> = Vec::new();
    let mut expectation: Option<(ExpectKind, Token, usize)> = None;
    const TOP: &str =
        "a declaration (`.global x;`), a thread (`d0.b0.t0 { ... }`) or `permit`/`assert`/`check`";
    while let Some(t) = cur.peek() {
        match t.tok {
            Tok::Word if t.text.starts_with('.') => {
                decls.push(parse_decl(&mut cur).map_err(remap_d)?)
            }
            Tok::Word if matches!(t.text, "permit" | "assert" | "check") => {
                if expectation.is_some() {
                    return Err(remap_d(Diagnostic::expected(
                        t.span,
                        "one expectation per test",
                        format!("a second one, `{}`", t.text),
                    )));
                }
                let kind = match t.text {
                    "permit" => ExpectKind::Permit,
                    "assert" => ExpectKind::Assert,
                    _ => ExpectKind::Check,
                };
                cur.bump();
                // The condition is parsed after the threads exist; remember where it starts.
                let start = cur_pos(&toks, &cur);
                skip_condition(&mut cur).map_err(remap_d)?;
                expectation = Some((kind, t, start));
            }
            Tok::Word if t.text.starts_with('d') => {
                threads.push(parse_thread(&mut cur).map_err(remap_d)?)
            }
            Tok::Placeholder => {
                return Err(remap_d(
                    Diagnostic::expected(t.span, TOP, t.quoted())
                        .with_label("placeholder outside a template (no `$$` line)"),
                ));
            }
            _ => return Err(remap_d(Diagnostic::expected(t.span, TOP, t.quoted()))),
        }
    }
    let Some((kind, kw, cond_pos)) = expectation else {
        return Err(remap_d(Diagnostic::expected(
            end,
            "an expectation: `permit(...) as NAME;`, `assert(...) as NAME;` or `check(...) as NAME;`",
            "the end of the file",
        )));
    };
    if threads.is_empty() {
        return Err(remap_d(Diagnostic::expected(
            end,
            "at least one thread (`d0.b0.t0 { ... }`)",
            "none",
        )));
    }

    let mut b = Builder::new(name);
    b.declare_hint = "a location declared with `.global NAME;`";
    b.docs = docs;
    b.declare_addresses(&decls).map_err(remap_d)?;
    // CTAs in order of first appearance get their own cluster, per GPU.
    let mut cluster_of: HashMap<(u32, u32), u32> = HashMap::new();
    let mut next: HashMap<u32, u32> = HashMap::new();
    let mut seen = HashMap::new();
    let mut pre: Vec<(usize, usize, i64)> = Vec::new();
    for th in &threads {
        if seen.insert(th.name.text, th.name.span).is_some() {
            return Err(remap_d(Diagnostic::expected(
                th.name.span,
                "a thread name used once",
                format!("`{}` again", th.name.text),
            )));
        }
        let (gpu, cta) = th.placement;
        let cluster = *cluster_of.entry((gpu, cta)).or_insert_with(|| {
            let n = next.entry(gpu).or_insert(0);
            *n += 1;
            *n - 1
        });
        let t = b.add_thread(
            Placement {
                gpu,
                cluster,
                cta,
                warp: None,
                grid: 0,
            },
            remap(origin, th.name.span),
        );
        for raw in &th.instrs {
            let mut raw = raw.clone();
            if let Some(l) = b.push_instr(t, &raw).map_err(remap_d)? {
                return Err(remap_d(
                    Diagnostic::expected(l.1, "a memory instruction", "a branch")
                        .with_label("mixedproxy tests have no control flow"),
                ));
            }
            let pc = b.threads[t].code.len() - 1;
            if let Some((v, vspan)) = raw.precondition.take() {
                let dst = match &b.threads[t].code[pc] {
                    Instr::Load { dst, .. } | Instr::Rmw { dst: Some(dst), .. } => *dst,
                    _ => {
                        return Err(remap_d(Diagnostic::expected(
                            vspan,
                            "a precondition only on a load or atomic",
                            "one on another instruction",
                        )));
                    }
                };
                pre.push((t, dst, v));
            }
            let span = b.spans.instrs[t][pc];
            b.spans.instrs[t][pc] = remap(origin, span);
        }
        // A precondition speaks about the value the load returned; that is the
        // final register value only if nothing writes the register again.
        let mut writes = vec![0usize; b.threads[t].regs.len()];
        for r in b.threads[t].code.iter().filter_map(|i| i.def()) {
            writes[r] += 1;
        }
        for &(pt, reg, _) in pre.iter().filter(|p| p.0 == t) {
            let defs = writes[reg];
            if defs > 1 {
                let rname = b.threads[pt].regs[reg].name.clone();
                return Err(remap_d(Diagnostic::expected(
                    th.name.span,
                    "preconditions on registers written once",
                    format!("register `{rname}` written {defs} times"),
                )));
            }
        }
    }

    // Parse the condition now that registers exist.
    let mut cur = Cursor::new(&toks[cond_pos..], end);
    let mut res = Names { b: &mut b };
    let prop = parse_prop(&mut cur, &mut res).map_err(remap_d)?;
    let as_kw = cur
        .expect(Tok::Word, "`as NAME` after the condition")
        .map_err(remap_d)?;
    if as_kw.text != "as" {
        return Err(remap_d(Diagnostic::expected(
            as_kw.span,
            "`as NAME` after the condition",
            as_kw.quoted(),
        )));
    }
    let ename = cur
        .expect(Tok::Word, "a name after `as`")
        .map_err(remap_d)?;
    let cond_end = ename.span.end;
    b.spans.condition = remap(origin, Span::new(kw.span.start, cond_end));

    // Checked before the chain is built: a tree far deeper than the bound
    // could not even be dropped safely.
    if pre.len() > MAX_PROP_DEPTH {
        return Err(remap_d(
            too_deep(Span::new(kw.span.start, cond_end)).with_label(format!(
                "{} preconditions make this condition too deep",
                pre.len()
            )),
        ));
    }
    let pre_prop = pre
        .iter()
        .map(|&(thread, reg, v)| Prop::Cmp(Term::Reg { thread, reg }, CmpOp::Eq, Term::Const(v)))
        .reduce(|a, c| Prop::And(Box::new(a), Box::new(c)));
    let (quantifier, prop) = match (kind, pre_prop) {
        (ExpectKind::Assert, Some(p)) => (
            Quantifier::Forall,
            Prop::Or(Box::new(Prop::Not(Box::new(p))), Box::new(prop)),
        ),
        (ExpectKind::Assert, None) => (Quantifier::Forall, prop),
        (_, Some(p)) => (Quantifier::Exists, Prop::And(Box::new(p), Box::new(prop))),
        (_, None) => (Quantifier::Exists, prop),
    };
    // Preconditions add levels above the written condition.
    if prop.depth() > MAX_PROP_DEPTH {
        return Err(
            remap_d(too_deep(Span::new(kw.span.start, cond_end))).with_label(format!(
                "with its {} precondition(s) this condition is {} levels deep",
                pre.len(),
                prop.depth()
            )),
        );
    }
    let expectation = Expectation {
        kind,
        name: ename.text.to_string(),
    };
    let (program, spans) = b.finish(quantifier, prop, Some(expectation));
    super::builder::check_activemask(&program, &spans).map_err(remap_d)?;
    // Where a template row put an instruction is not worded: the other
    // access is named by its thread and text.
    super::sizes::check(&program, &spans, &|_| String::new()).map_err(remap_d)?;
    Ok((program, spans))
}

fn cur_pos(toks: &[Token<'_>], cur: &Cursor<'_, '_>) -> usize {
    match cur.peek() {
        Some(t) => toks
            .iter()
            .position(|x| x.span == t.span)
            .unwrap_or(toks.len()),
        None => toks.len(),
    }
}

/// Skip `( ... ) as NAME ;` to find where the next item starts.
fn skip_condition(cur: &mut Cursor<'_, '_>) -> Result<(), Diagnostic> {
    let open = cur.expect(Tok::LParen, "`(` and a condition")?;
    let mut depth = 1;
    while depth > 0 {
        match cur.bump() {
            Some(t) if t.tok == Tok::LParen => depth += 1,
            Some(t) if t.tok == Tok::RParen => depth -= 1,
            Some(_) => {}
            None => {
                return Err(Diagnostic::expected(
                    open.span,
                    "a `)` closing the condition",
                    "the end of the file",
                ));
            }
        }
    }
    let a = cur.expect(Tok::Word, "`as NAME` after the condition")?;
    if a.text != "as" {
        return Err(Diagnostic::expected(
            a.span,
            "`as NAME` after the condition",
            a.quoted(),
        ));
    }
    cur.expect(Tok::Word, "a name after `as`")?;
    cur.eat(Tok::Semi);
    Ok(())
}

fn parse_decl(cur: &mut Cursor<'_, '_>) -> Result<AddrDecl, Diagnostic> {
    let kw = cur.bump().unwrap();
    let name = cur.expect(Tok::Word, "a name to declare")?;
    if name.text.contains('.') {
        return Err(Diagnostic::expected(
            name.span,
            "a plain name",
            name.quoted(),
        ));
    }
    let kind = match kw.text {
        ".global" => AddressKind::Generic,
        ".surfref" => AddressKind::Surface,
        ".texref" => AddressKind::Texture,
        ".constref" => AddressKind::Constant,
        ".shared" => {
            return Err(Diagnostic::unsupported(
                kw.span,
                ".shared",
                "`.global`, `.surfref`, `.texref` or `.constref`",
            )
            .with_note("shared-memory locations are not modelled yet"));
        }
        _ => {
            return Err(Diagnostic::expected(
                kw.span,
                "`.global`, `.surfref`, `.texref` or `.constref`",
                kw.quoted(),
            ));
        }
    };
    let mut decl = AddrDecl {
        name: name.text.to_string(),
        alias: None,
        init: 0,
        space: crate::ir::Space::Global,
        kind: crate::ir::LocKind::Data,
        span: name.span,
    };
    if cur.eat(Tok::Assign).is_some() {
        let v = cur.expect(Tok::Int, "an initial value")?;
        decl.init = parse_int(v.text, v.span)?;
    } else if let Some(w) = cur.peek().filter(|t| t.tok == Tok::Word) {
        cur.bump();
        let want = if kind == AddressKind::Generic {
            "physically"
        } else {
            "virtually"
        };
        if w.text != want {
            return Err(Diagnostic::expected(
                w.span,
                format!("`{want} aliases`"),
                w.quoted(),
            ));
        }
        let a = cur.expect(Tok::Word, "`aliases`")?;
        if a.text != "aliases" {
            return Err(Diagnostic::expected(a.span, "`aliases`", a.quoted()));
        }
        let target = cur.expect(Tok::Word, "the aliased name")?;
        decl.alias = Some((kind, target.text.to_string(), target.span));
    } else if kind != AddressKind::Generic {
        return Err(
            cur.error("`virtually aliases NAME` (a proxy reference needs the address it views)")
        );
    }
    cur.expect(Tok::Semi, "`;` after the declaration")?;
    Ok(decl)
}

fn parse_thread<'s>(cur: &mut Cursor<'_, 's>) -> Result<RawThread<'s>, Diagnostic> {
    let name = cur.bump().unwrap();
    let mut nums = Vec::new();
    for (part, prefix) in name.text.split('.').zip(["d", "b", "t"]) {
        match part
            .strip_prefix(prefix)
            .and_then(|n| n.parse::<u64>().ok())
        {
            Some(n) => nums.push(n),
            None => break,
        }
    }
    if nums.len() != 3 || name.text.split('.').count() != 3 {
        return Err(Diagnostic::expected(
            name.span,
            "a thread name `dD.bB.tT` (device, block, thread)",
            name.quoted(),
        ));
    }
    if nums.iter().any(|&n| n > u64::from(MAX_PLACEMENT)) {
        return Err(Diagnostic::expected(
            name.span,
            format!("device, block and thread numbers between 0 and {MAX_PLACEMENT}"),
            name.quoted(),
        ));
    }
    cur.expect(Tok::LBrace, "`{` opening the thread's code")?;
    let mut instrs = Vec::new();
    loop {
        if cur.eat(Tok::RBrace).is_some() {
            break;
        }
        if cur.eat(Tok::Semi).is_some() {
            continue;
        }
        if cur.is_done() {
            return Err(Diagnostic::expected(
                name.span,
                "a `}` closing this thread",
                "the end of the file",
            ));
        }
        let raw = parse_raw(cur)?;
        cur.expect(Tok::Semi, "`;` after the instruction")?;
        instrs.push(raw);
    }
    Ok(RawThread {
        name,
        placement: (nums[0] as u32, nums[1] as u32),
        instrs,
    })
}

/// Condition names: bare registers are looked up across threads.
struct Names<'b> {
    b: &'b mut Builder,
}

impl TermResolver for Names<'_> {
    fn thread_reg(&mut self, thread: &Token<'_>, reg: &Token<'_>) -> Result<Term, Diagnostic> {
        let t = super::cond::thread_index(thread, self.b.threads.len())?;
        let r = condition_register(&self.b.threads, &self.b.spans.initialised, t, reg)?;
        Ok(Term::Reg { thread: t, reg: r })
    }
    fn bare(&mut self, name: &Token<'_>) -> Result<Term, Diagnostic> {
        let owners: Vec<usize> = (0..self.b.threads.len())
            .filter(|&t| self.b.reg_named(t, name.text).is_some())
            .collect();
        match owners.as_slice() {
            [t] => Ok(Term::Reg {
                thread: *t,
                reg: condition_register(&self.b.threads, &self.b.spans.initialised, *t, name)?,
            }),
            [] => match self.b.address(name.text) {
                Some(a) => Ok(Term::Loc(self.b.location_of(a))),
                None => Err(Diagnostic::expected(
                    name.span,
                    "a register used by one thread, or a declared location",
                    name.quoted(),
                )),
            },
            _ => Err(Diagnostic::expected(
                name.span,
                "a register name used by exactly one thread",
                format!("`{}`, used by several threads", name.text),
            )),
        }
    }
}
