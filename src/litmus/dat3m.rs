//! The herd-style PTX dialect used by Dat3M (`.litmus`), with ptxmc's
//! extensions: `cluster N` and `warp N` in thread placements, and an `expect` line.
//!
//! ```text
//! PTX NAME
//! "doc string"                       (free text until `{` is skipped; "..." are docs)
//! { x=0; P1:r0=0; y @ generic aliases x; t @ texture aliases x; }
//!  P0@cta 0,cluster 0,gpu 0 | P1@cta 1,gpu 0 ;
//!  st.weak x, 1             | ld.acquire.gpu r0, y ;
//! locations [x; P1:r0;]              (herd, optional)
//! filter (P1:r0 == 1)                (herd, optional)
//! exists (P1:r0 == 1 /\ P1:r1 == 0)
//! expect permit as NAME             (optional, ptxmc extension)
//! ```
//!
//! As in herd and Dat3M, a location used but not declared starts at 0; a
//! register named by the condition must be written by its thread or set by
//! the initial state (`cond::condition_register`).

use std::collections::HashMap;

use super::SourceMap;
use super::builder::{AddrDecl, Builder};
use super::cond::{
    TermResolver, condition_register, parse_locations, parse_prop, parse_quantifier, thread_index,
};
use super::diag::{Diagnostic, Span, plural};
use super::lexer::{Cursor, Tok, Token, tokenize};
use super::raw::{parse_int, parse_raw, placement_number};
use crate::ir::{
    AddressKind, ExpectKind, Expectation, LocKind, Placement, Program, Prop, Space, Term,
};

/// Parse one Dat3M-dialect litmus test.
pub fn parse(src: &str) -> Result<(Program, SourceMap), Diagnostic> {
    let mut s = Scanner { src, pos: 0 };
    // A byte-order mark is not part of the text.
    if src.starts_with('\u{feff}') {
        s.pos = '\u{feff}'.len_utf8();
    }
    s.skip_blank()?;
    let arch_start = s.pos;
    let arch = s.word();
    if arch != "PTX" {
        let span = Span::new(arch_start, arch_start + arch.len().max(1));
        let found = if arch.is_empty() {
            s.found_here()
        } else {
            format!("`{arch}`")
        };
        return Err(Diagnostic::expected(
            span,
            "`PTX` (the first word of a PTX litmus test)",
            found,
        ));
    }
    let name_start = s.pos;
    let line_end = src[s.pos..].find('\n').map_or(src.len(), |i| s.pos + i);
    let name = src[s.pos..line_end].trim();
    if name.is_empty() {
        return Err(Diagnostic::expected(
            Span::new(name_start, line_end),
            "a test name after `PTX`",
            "the end of the line",
        ));
    }
    s.pos = line_end;
    let mut b = Builder::new(name.to_string());
    b.implicit_locations = true;
    s.skip_header(&mut b.docs)?;

    // Init block.
    let open = s.pos;
    let Some(close_rel) = s.rest().find('}') else {
        return Err(Diagnostic::expected(
            Span::new(open, open + 1),
            "a `}` closing the initial state",
            "the end of the file",
        ));
    };
    let init_text = &src[open + 1..open + close_rel];
    let init_items = parse_init(init_text, open + 1)?;
    s.pos = open + close_rel + 1;
    // Dat3M allows a `;` after the initial state.
    s.skip_blank()?;
    if s.rest().starts_with(';') {
        s.pos += 1;
    }

    let decls: Vec<AddrDecl> = init_items
        .iter()
        .filter_map(|i| match i {
            InitItem::Addr(d) => Some(d.clone()),
            _ => None,
        })
        .collect();
    b.declare_addresses(&decls)?;
    for i in &init_items {
        if let InitItem::TensorMap(m) = i {
            if b.tensor_maps.contains_key(&m.name) || b.address(&m.name).is_some() {
                return Err(Diagnostic::expected(
                    m.span,
                    "a name not declared before",
                    format!("`{}` again", m.name),
                ));
            }
            b.tensor_maps.insert(m.name.clone(), m.clone());
        }
    }

    // Thread header row.
    s.skip_blank()?;
    let (header, header_start) = s.row()?;
    let mut explicit_cluster: HashMap<(u32, u32), (u32, Span)> = HashMap::new();
    let mut placements = Vec::new();
    // Threads with the same GPU, CTA and `warp` are lanes of one warp.
    let mut warp_lanes: HashMap<(u32, u32, u32), usize> = HashMap::new();
    for (i, (cell, off)) in split_cells(header, header_start).into_iter().enumerate() {
        let ThreadHeader {
            placement: p,
            cluster,
            span,
        } = parse_thread_header(cell, off, i)?;
        if let Some((c, cspan)) = cluster {
            match explicit_cluster.get(&(p.gpu, p.cta)) {
                Some((prev, _)) if *prev != c => {
                    return Err(Diagnostic::expected(
                        cspan,
                        format!(
                            "cluster {prev} (CTA {} of GPU {} is already placed there)",
                            p.cta, p.gpu
                        ),
                        format!("cluster {c}"),
                    ));
                }
                _ => {
                    explicit_cluster.insert((p.gpu, p.cta), (c, cspan));
                }
            }
        }
        if let Some(w) = p.warp {
            let lanes = warp_lanes.entry((p.gpu, p.cta, w)).or_insert(0usize);
            *lanes += 1;
            if *lanes > WARP_LANES {
                return Err(Diagnostic::expected(
                    span,
                    format!(
                        "at most {WARP_LANES} lanes in warp {w} of CTA {} of GPU {}",
                        p.cta, p.gpu
                    ),
                    format!("lane {}", *lanes - 1),
                )
                .with_label("a warp has 32 lanes"));
            }
        }
        placements.push((p, span));
    }
    // CTAs without an explicit cluster get a fresh cluster of their own, per GPU.
    let mut next_free: HashMap<u32, u32> = HashMap::new();
    for ((gpu, _), (c, _)) in &explicit_cluster {
        let e = next_free.entry(*gpu).or_insert(0);
        *e = (*e).max(c + 1);
    }
    let mut implicit: HashMap<(u32, u32), u32> = HashMap::new();
    // A CTA, and a cluster, runs in one grid (`docs/griddep.md`).
    let mut grid_of: HashMap<(u32, bool, u32), (u32, Span)> = HashMap::new();
    for (p, span) in &placements {
        let cluster = match explicit_cluster.get(&(p.gpu, p.cta)) {
            Some((c, _)) => *c,
            None => *implicit.entry((p.gpu, p.cta)).or_insert_with(|| {
                let e = next_free.entry(p.gpu).or_insert(0);
                *e += 1;
                *e - 1
            }),
        };
        for (key, what) in [
            ((p.gpu, false, p.cta), "CTA"),
            ((p.gpu, true, cluster), "cluster"),
        ] {
            match grid_of.get(&key) {
                Some((g, _)) if *g != p.grid => {
                    return Err(Diagnostic::expected(
                        *span,
                        format!(
                            "grid {g} ({what} {} of GPU {} already runs in grid {g})",
                            key.2, p.gpu
                        ),
                        format!("grid {}", p.grid),
                    )
                    .with_label("a CTA and its cluster belong to one grid"));
                }
                _ => {
                    grid_of.insert(key, (p.grid, *span));
                }
            }
        }
        b.add_thread(Placement { cluster, ..*p }, *span);
    }
    let nthreads = b.threads.len();

    // Register initialisations (now that threads exist).
    for item in &init_items {
        if let InitItem::Reg {
            thread,
            reg,
            value,
            span,
        } = item
        {
            let t = thread_index(thread, nthreads).map_err(|d| d.with_label("no such thread"))?;
            b.init_register(t, reg.text, *value, *span)?;
        }
    }

    // Instruction rows.
    let mut branch_refs: Vec<Vec<(usize, String, Span)>> = vec![Vec::new(); nthreads];
    loop {
        s.skip_blank()?;
        if s.rest().is_empty() {
            return Err(Diagnostic::expected(
                s.here(),
                "an instruction row or a final condition (`exists`, `~exists`, `forall`)",
                "the end of the file",
            ));
        }
        if s.at_condition() {
            break;
        }
        let (row, row_start) = s.row()?;
        let cells = split_cells(row, row_start);
        if cells.len() != nthreads {
            let span = Span::new(row_start, row_start + row.len());
            let d = Diagnostic::expected(
                span,
                format!("{nthreads} cells separated by `|` (one per thread)"),
                plural(cells.len(), "cell"),
            );
            // More of the line after the row's `;`: most likely PTX pasted
            // with a `;` after each instruction. Accepting it would be a
            // guess (herd allows several rows on a line, and empty cells),
            // so the error says what the dialect expects instead.
            let line = s.rest().split('\n').next().unwrap_or("");
            let more = line.trim();
            if cells.len() < nthreads && !more.is_empty() && !more.starts_with("//") {
                let semi = row_start + row.len();
                return Err(Diagnostic {
                    span: Span::new(semi, semi + 1),
                    ..d
                }
                    .with_label("this `;` ends the row here")
                    .with_note(format!(
                        "in this dialect `;` ends a row of the instruction table, not an instruction: write one row per line, one instruction per thread separated by `|`, and a single `;` at the end (`{} | ... ;`); drop the `;` after each PTX instruction",
                        cells.first().map_or("", |(c, _)| c.trim())
                    )));
            }
            return Err(d);
        }
        for (t, (cell, off)) in cells.into_iter().enumerate() {
            parse_cell(&mut b, t, cell, off, &mut branch_refs[t])?;
        }
    }
    for (t, refs) in branch_refs.iter().enumerate() {
        b.resolve_branches(t, refs)?;
    }

    // herd's `locations [...]` and `filter P` (each at most once), the final
    // condition, and the optional expectation.
    let cond_start = s.pos;
    let toks = tokenize(s.rest(), cond_start)?;
    let mut cur = Cursor::new(&toks, Span::new(src.len(), src.len()));
    let mut shown: Option<Vec<Term>> = None;
    let mut filter: Option<Prop> = None;
    while let Some(kw) = cur
        .peek()
        .filter(|t| t.tok == Tok::Word && matches!(t.text, "locations" | "filter"))
    {
        let again = match kw.text {
            "locations" => shown.is_some(),
            _ => filter.is_some(),
        };
        if again {
            return Err(Diagnostic::expected(
                kw.span,
                format!("one `{}` clause", kw.text),
                format!("a second `{}`", kw.text),
            ));
        }
        cur.bump();
        let mut res = CondNames { b: &mut b };
        if kw.text == "locations" {
            shown = Some(parse_locations(&mut cur, &mut res)?);
        } else {
            filter = Some(parse_prop(&mut cur, &mut res)?);
        }
        cur.eat(Tok::Semi);
    }
    let quantifier = parse_quantifier(&mut cur)?;
    let mut res = CondNames { b: &mut b };
    let prop = parse_prop(&mut cur, &mut res)?;
    cur.eat(Tok::Semi);
    let mut expectation = None;
    if let Some(t) = cur.peek() {
        if t.tok == Tok::Word && t.text == "expect" {
            cur.bump();
            expectation = Some(parse_expect(&mut cur)?);
        }
    }
    if let Some(t) = cur.peek() {
        return Err(Diagnostic::expected(
            t.span,
            "the end of the test (after the condition)",
            t.quoted(),
        ));
    }
    b.spans.condition = Span::new(cond_start, cur.prev_span().end);
    let (mut program, spans) = b.finish(quantifier, prop, expectation);
    super::builder::check_activemask(&program, &spans)?;
    super::sizes::check(&program, &spans, &|sp| {
        let before = &src[..sp.start.min(src.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("line {line}, column {column}")
    })?;
    program.filter = filter;
    program.shown = shown.unwrap_or_default();
    Ok((program, spans))
}

fn parse_expect(cur: &mut Cursor<'_, '_>) -> Result<Expectation, Diagnostic> {
    let k = cur.expect(Tok::Word, "`permit`, `assert` or `check`")?;
    let kind = match k.text {
        "permit" => ExpectKind::Permit,
        "assert" => ExpectKind::Assert,
        "check" => ExpectKind::Check,
        _ => {
            return Err(Diagnostic::expected(
                k.span,
                "`permit`, `assert` or `check`",
                k.quoted(),
            ));
        }
    };
    let a = cur.expect(Tok::Word, "`as NAME`")?;
    if a.text != "as" {
        return Err(Diagnostic::expected(a.span, "`as NAME`", a.quoted()));
    }
    let name = cur.expect(Tok::Word, "a name for the expectation")?;
    Ok(Expectation {
        kind,
        name: name.text.to_string(),
    })
}

struct CondNames<'b> {
    b: &'b mut Builder,
}

impl TermResolver for CondNames<'_> {
    fn thread_reg(&mut self, thread: &Token<'_>, reg: &Token<'_>) -> Result<Term, Diagnostic> {
        let t = thread_index(thread, self.b.threads.len())?;
        if reg.text.contains('.') || self.b.address(reg.text).is_some() {
            return Err(Diagnostic::expected(
                reg.span,
                "a register name",
                reg.quoted(),
            ));
        }
        let r = condition_register(&self.b.threads, &self.b.spans.initialised, t, reg)?;
        Ok(Term::Reg { thread: t, reg: r })
    }
    fn bare(&mut self, name: &Token<'_>) -> Result<Term, Diagnostic> {
        match self.b.address(name.text) {
            Some(a) if self.b.locations[self.b.location_of(a)].kind != crate::ir::LocKind::Data => {
                Err(Diagnostic::expected(
                    name.span,
                    "a data location or `P<n>:<register>`",
                    format!("mbarrier `{}`", name.text),
                )
                .with_label("mbarrier states are not part of final states")
                .with_note("record a wait's result in a register and test that instead"))
            }
            Some(a) => Ok(Term::Loc(self.b.location_of(a))),
            None => {
                // herd creates the location; but a register written without
                // its thread would silently become a new location holding 0.
                let owner =
                    (0..self.b.threads.len()).find(|&t| self.b.reg_named(t, name.text).is_some());
                if let Some(t) = owner {
                    return Err(Diagnostic::expected(
                        name.span,
                        "a location or `P<n>:<register>`",
                        format!("`{}`, a register of P{t}", name.text),
                    )
                    .with_label(format!("write `P{t}:{}` for the register", name.text)));
                }
                let a = self.b.implicit_address(name.text, name.span)?;
                Ok(Term::Loc(self.b.location_of(a)))
            }
        }
    }
}

enum InitItem<'s> {
    Addr(AddrDecl),
    TensorMap(super::tensor::TensorMap),
    Reg {
        thread: Token<'s>,
        reg: Token<'s>,
        value: i64,
        span: Span,
    },
}

fn parse_init(text: &str, offset: usize) -> Result<Vec<InitItem<'_>>, Diagnostic> {
    let toks = tokenize(text, offset)?;
    let mut cur = Cursor::new(
        &toks,
        Span::new(offset + text.len(), offset + text.len() + 1),
    );
    let mut items = Vec::new();
    const ITEM: &str =
        "an initial value (`x=0;`, `P0:r0=0;`) or an alias (`y @ generic aliases x;`)";
    while !cur.is_done() {
        if cur.eat(Tok::Semi).is_some() {
            continue;
        }
        let first = cur.bump().unwrap();
        let item = match (first.tok, cur.peek().map(|t| t.tok)) {
            (Tok::Word | Tok::Int, Some(Tok::Colon)) => {
                cur.bump();
                let reg = cur.expect(Tok::Word, "a register name")?;
                cur.expect(Tok::Assign, "`=`")?;
                let v = cur.expect(Tok::Int, "an integer initial value")?;
                InitItem::Reg {
                    thread: first,
                    reg,
                    value: parse_int(v.text, v.span)?,
                    span: first.span.to(v.span),
                }
            }
            (Tok::Word, Some(Tok::Assign)) if !first.text.contains('.') => {
                cur.bump();
                let v = cur.expect(Tok::Int, "an integer initial value")?;
                InitItem::Addr(AddrDecl {
                    name: first.text.to_string(),
                    alias: None,
                    init: parse_int(v.text, v.span)?,
                    space: Space::Global,
                    kind: LocKind::Data,
                    span: first.span,
                })
            }
            (Tok::Word, Some(Tok::At))
                if !first.text.contains(['.', '['])
                    && cur.peek2().is_some_and(|t| t.text == "tensormap") =>
            {
                cur.bump();
                cur.bump();
                InitItem::TensorMap(super::tensor::parse_decl(&mut cur, &first)?)
            }
            (Tok::Word, Some(Tok::At))
                if !first.text.contains('.')
                    && cur
                        .peek2()
                        .is_some_and(|t| matches!(t.text, "shared" | "mbarrier" | "tmem")) =>
            {
                cur.bump();
                InitItem::Addr(parse_shared_decl(&mut cur, &first)?)
            }
            (Tok::Word, Some(Tok::At)) if !first.text.contains('.') => {
                cur.bump();
                let k = cur.expect(
                    Tok::Word,
                    "a proxy kind (`generic`, `texture`, `surface`, `constant`)",
                )?;
                let kind = match k.text {
                    "generic" => AddressKind::Generic,
                    "texture" => AddressKind::Texture,
                    "surface" => AddressKind::Surface,
                    "constant" => AddressKind::Constant,
                    _ => {
                        return Err(Diagnostic::expected(
                            k.span,
                            "a proxy kind (`generic`, `texture`, `surface`, `constant`)",
                            k.quoted(),
                        ));
                    }
                };
                let a = cur.expect(Tok::Word, "`aliases`")?;
                if a.text != "aliases" {
                    return Err(Diagnostic::expected(a.span, "`aliases`", a.quoted()));
                }
                let target = cur.expect(Tok::Word, "the name of the aliased location")?;
                InitItem::Addr(AddrDecl {
                    name: first.text.to_string(),
                    alias: Some((kind, target.text.to_string(), target.span)),
                    init: 0,
                    space: Space::Global,
                    kind: LocKind::Data,
                    span: first.span,
                })
            }
            _ => return Err(Diagnostic::expected(first.span, ITEM, first.quoted())),
        };
        items.push(item);
        if !cur.is_done() {
            cur.expect(Tok::Semi, "`;` after an initial-state item")?;
        }
    }
    Ok(items)
}

/// `s @ shared cta N[,gpu G] [= V]` or `bar @ mbarrier cta N[,gpu G] [= COUNT]`:
/// a location in one CTA's shared memory (an mbarrier object, initialised
/// to expect COUNT arrivals when a count is given).
fn parse_shared_decl(cur: &mut Cursor<'_, '_>, name: &Token<'_>) -> Result<AddrDecl, Diagnostic> {
    let what = cur.bump().unwrap();
    let mbarrier = what.text == "mbarrier";
    let (mut cta, mut gpu) = (None, None);
    loop {
        let k = cur.expect(Tok::Word, "`cta N` (and optionally `gpu G`)")?;
        let v = cur.expect(Tok::Int, &format!("a number after `{}`", k.text))?;
        let n = placement_number(v.text, v.span)?;
        match k.text {
            "cta" if cta.is_none() => cta = Some(n),
            "gpu" if gpu.is_none() => gpu = Some(n),
            _ => {
                return Err(Diagnostic::expected(
                    k.span,
                    "`cta N` or `gpu G` (once each)",
                    k.quoted(),
                ));
            }
        }
        if cur.eat(Tok::Comma).is_none() {
            break;
        }
    }
    let Some(cta) = cta else {
        return Err(Diagnostic::expected(
            what.span,
            "the CTA whose shared memory holds it (`cta N`)",
            "none",
        ));
    };
    let mut init = 0;
    if cur.eat(Tok::Assign).is_some() {
        let v = cur.expect(
            Tok::Int,
            if mbarrier {
                "the expected arrival count"
            } else {
                "an initial value"
            },
        )?;
        init = parse_int(v.text, v.span)?;
        if mbarrier {
            if !(1..4096).contains(&init) {
                return Err(Diagnostic::expected(
                    v.span,
                    "an arrival count between 1 and 4095",
                    v.quoted(),
                ));
            }
            init = crate::ir::mbar::init(init);
        }
    }
    Ok(AddrDecl {
        name: name.text.to_string(),
        alias: None,
        init,
        space: Space::Shared {
            gpu: gpu.unwrap_or(0),
            cta,
        },
        kind: if mbarrier {
            LocKind::Mbarrier
        } else if what.text == "tmem" {
            LocKind::TensorMemory
        } else {
            LocKind::Data
        },
        span: name.span,
    })
}

fn parse_thread_header(cell: &str, off: usize, index: usize) -> Result<ThreadHeader, Diagnostic> {
    let toks = tokenize(cell, off)?;
    let end = Span::new(off + cell.len(), off + cell.len());
    let mut cur = Cursor::new(&toks, end);
    let want = format!("`P{index}@cta N,gpu N` (thread {index}'s placement)");
    let name = cur.expect(Tok::Word, &want)?;
    if name.text != format!("P{index}") {
        return Err(Diagnostic::expected(
            name.span,
            format!("`P{index}` (threads are numbered by column)"),
            name.quoted(),
        ));
    }
    cur.expect(
        Tok::At,
        &format!("`@` and a placement after `{}`", name.text),
    )?;
    let (mut cta, mut gpu, mut cluster, mut warp, mut grid) = (None, None, None, None, None);
    loop {
        let k = cur.expect(
            Tok::Word,
            "`cta N`, `cluster N`, `warp N`, `grid N` or `gpu N`",
        )?;
        let v = cur.expect(Tok::Int, &format!("a number after `{}`", k.text))?;
        let n = placement_number(v.text, v.span)?;
        let slot = match k.text {
            "cta" => &mut cta,
            "gpu" => &mut gpu,
            "cluster" => &mut cluster,
            "warp" => &mut warp,
            "grid" => &mut grid,
            _ => {
                return Err(Diagnostic::expected(
                    k.span,
                    "`cta`, `cluster`, `warp`, `grid` or `gpu`",
                    k.quoted(),
                ));
            }
        };
        if slot.is_some() {
            return Err(Diagnostic::expected(
                k.span,
                format!("one `{}` per thread", k.text),
                format!("a second `{}`", k.text),
            ));
        }
        *slot = Some((n, k.span.to(v.span)));
        if cur.eat(Tok::Comma).is_none() {
            break;
        }
    }
    if let Some(t) = cur.peek() {
        return Err(Diagnostic::expected(
            t.span,
            "`,` or the end of the thread header",
            t.quoted(),
        ));
    }
    let span = name.span.to(cur.prev_span());
    let Some((cta, _)) = cta else {
        return Err(
            Diagnostic::expected(span, "a placement with `cta N`", "none")
                .with_label("missing `cta`"),
        );
    };
    let Some((gpu, _)) = gpu else {
        return Err(
            Diagnostic::expected(span, "a placement with `gpu N`", "none")
                .with_label("missing `gpu`"),
        );
    };
    let placement = Placement {
        gpu,
        cluster: 0,
        cta,
        warp: warp.map(|(w, _)| w),
        grid: match grid {
            None => 0,
            Some((g, _)) if g <= 1 => g,
            Some((g, at)) => {
                return Err(Diagnostic::unsupported(
                    at,
                    format!("grid {g}"),
                    "grid 0 (the primary grid) or grid 1 (its programmatic dependent)",
                )
                .with_note(
                    "ptxmc models one primary grid and one dependent grid (docs/griddep.md)",
                ));
            }
        },
    };
    Ok(ThreadHeader {
        placement,
        cluster,
        span,
    })
}

/// The lanes of a warp.
const WARP_LANES: usize = 32;

/// A parsed `P0@cta N,cluster K,warp W,gpu G` cell; the cluster is `None` when not written.
struct ThreadHeader {
    placement: Placement,
    cluster: Option<(u32, Span)>,
    span: Span,
}

fn parse_cell(
    b: &mut Builder,
    t: usize,
    cell: &str,
    off: usize,
    refs: &mut Vec<(usize, String, Span)>,
) -> Result<(), Diagnostic> {
    let toks = tokenize(cell, off)?;
    let mut cur = Cursor::new(&toks, Span::new(off + cell.len(), off + cell.len()));
    // Leading labels `L:`.
    while cur
        .peek()
        .is_some_and(|x| x.tok == Tok::Word && !x.text.contains('.'))
        && cur.peek2().is_some_and(|x| x.tok == Tok::Colon)
    {
        let l = cur.bump().unwrap();
        cur.bump();
        b.push_label(t, l.text, l.span)?;
    }
    if cur.is_done() {
        return Ok(());
    }
    let raw = parse_raw(&mut cur)?;
    if let Some((_, span)) = raw.precondition {
        return Err(Diagnostic::expected(
            span,
            "`,` or the end of the instruction",
            "a `== value` precondition",
        )
        .with_label("preconditions belong to mixedproxy `.test` files"));
    }
    if let Some(x) = cur.peek() {
        return Err(Diagnostic::expected(
            x.span,
            "the end of the cell (one instruction per cell)",
            x.quoted(),
        ));
    }
    let pc = b.threads[t].code.len();
    if let Some((name, span)) = b.push_instr(t, &raw)? {
        refs.push((pc, name, span));
    }
    Ok(())
}

/// Split a row at `|` into cells with their absolute offsets.
fn split_cells(row: &str, off: usize) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in row.char_indices() {
        if c == '|' {
            out.push((&row[start..i], off + start));
            start = i + 1;
        }
    }
    out.push((&row[start..], off + start));
    out
}

struct Scanner<'s> {
    src: &'s str,
    pos: usize,
}

impl<'s> Scanner<'s> {
    fn rest(&self) -> &'s str {
        &self.src[self.pos..]
    }
    fn here(&self) -> Span {
        let len = self.rest().chars().next().map_or(0, |c| c.len_utf8());
        Span::new(self.pos, self.pos + len)
    }
    fn found_here(&self) -> String {
        match self.rest().split_whitespace().next() {
            Some(w) => format!("`{}`", w.chars().take(24).collect::<String>()),
            None => "the end of the file".to_string(),
        }
    }
    /// Skip whitespace and `(* ... *)` comments.
    fn skip_blank(&mut self) -> Result<(), Diagnostic> {
        loop {
            let trimmed = self.rest().trim_start();
            self.pos = self.src.len() - trimmed.len();
            if trimmed.starts_with("(*") {
                match trimmed.find("*)") {
                    Some(e) => self.pos += e + 2,
                    None => {
                        return Err(Diagnostic::expected(
                            Span::new(self.pos, self.pos + 2),
                            "a closing `*)`",
                            "the end of the file",
                        ));
                    }
                }
            } else {
                return Ok(());
            }
        }
    }
    fn word(&mut self) -> &'s str {
        let r = self.rest();
        let n = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(r.len());
        self.pos += n;
        &r[..n]
    }
    fn at_condition(&self) -> bool {
        let r = self.rest();
        let kw = |k: &str| {
            r.starts_with(k)
                && !r[k.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        };
        kw("exists")
            || kw("forall")
            || kw("locations")
            || kw("filter")
            || (r.starts_with('~') && r[1..].trim_start().starts_with("exists"))
    }
    /// One table row: the rest of the line up to its `;` (which is consumed).
    /// Only the row itself is scanned, so a line of many rows reads in
    /// linear time.
    fn row(&mut self) -> Result<(&'s str, usize), Diagnostic> {
        let r = self.rest();
        match r.find([';', '\n']) {
            Some(semi) if r.as_bytes()[semi] == b';' => {
                let start = self.pos;
                self.pos += semi + 1;
                Ok((&r[..semi], start))
            }
            other => {
                let line_end = other.unwrap_or(r.len());
                let end = self.pos + r[..line_end].trim_end().len();
                Err(Diagnostic::expected(
                    Span::new(end, end + 1),
                    "`;` at the end of the row",
                    "the end of the line",
                ))
            }
        }
    }
    /// Skip what lies between the `PTX NAME` line and the `{` of the initial
    /// state, as herd and Dat3M do: free text, generator lines, quoted
    /// command lines. Well-formed `"..."` strings there become the test's
    /// doc strings; nothing there is an error. Each byte is looked at a
    /// bounded number of times (a failed search for a closing `*)` or `"`
    /// proves there is none further on).
    fn skip_header(&mut self, docs: &mut Vec<String>) -> Result<(), Diagnostic> {
        let mut comment_ends = true;
        let after_name = self.pos;
        loop {
            let trimmed = self.rest().trim_start();
            self.pos = self.src.len() - trimmed.len();
            if trimmed.starts_with('{') {
                return Ok(());
            }
            if comment_ends && trimmed.starts_with("(*") {
                match trimmed.find("*)") {
                    Some(e) => {
                        self.pos += e + 2;
                        continue;
                    }
                    None => comment_ends = false,
                }
            }
            if let Some(body) = trimmed.strip_prefix('"') {
                if let Some(e) = body.find('"') {
                    docs.push(body[..e].to_string());
                    self.pos += e + 2;
                    continue;
                }
            }
            match trimmed.chars().next() {
                Some(c) => self.pos += c.len_utf8(),
                None => {
                    let first = self.src[after_name..].trim_start();
                    let at = self.src.len() - first.len();
                    let len = first.chars().next().map_or(0, char::len_utf8);
                    return Err(Diagnostic::expected(
                        Span::new(at, at + len),
                        "the initial state (`{ ... }`) after the test's name",
                        "no `{` in the rest of the file",
                    ));
                }
            }
        }
    }
}
