//! Vocabularies: the edges cycles are made of, read from a small line-based
//! text format (`docs/gen.md` §2), and the built-in vocabularies.
//!
//! One edge (or a family of edges, through `|` alternatives and `*`
//! directions) per line; `#` starts a comment. Every error names the file,
//! line and column, what was found and what was expected.

use std::collections::HashSet;

use super::edge::{Ann, ComKind, Dir, Edge, EvProxy, FenceKind, Mid, Place, ProxyKind, Strength};
use crate::ir::Scope;
use crate::litmus::{Diagnostic, LitmusError, Span};

/// One edge a cycle may use, with the annotations it imposes on its ends
/// (`None`: the edge leaves that end to its neighbour or to the default).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VocabEdge {
    /// The edge.
    pub edge: Edge,
    /// Direction of its source access.
    pub src: Dir,
    /// Direction of its target access.
    pub dst: Dir,
    /// Annotation of the source access, if the edge imposes one.
    pub src_ann: Option<Ann>,
    /// Annotation of the target access, if the edge imposes one.
    pub dst_ann: Option<Ann>,
}

/// A vocabulary: edges and the few settings that shape cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vocabulary {
    /// Its name (the built-in name, or the file's stem).
    pub name: String,
    /// Annotation of an access that no adjacent edge annotates.
    pub default: Ann,
    /// At most this many threads per test (diy's `-nprocs`).
    pub max_threads: usize,
    /// The edges, without duplicates, in file order.
    pub edges: Vec<VocabEdge>,
}

/// The built-in vocabularies: name, one-line description, text.
pub const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "default",
        "global memory, generic proxy: scopes, placements, release/acquire, fences, coherence",
        include_str!("vocab/default.vocab"),
    ),
    (
        "alias",
        "virtual aliases of one location and fence.proxy.alias",
        include_str!("vocab/alias.vocab"),
    ),
    (
        "proxy",
        "texture, surface and constant proxies and their proxy fences (not runnable on hardware)",
        include_str!("vocab/proxy.vocab"),
    ),
    (
        "deps",
        "data dependencies (false dependencies, as diy writes them)",
        include_str!("vocab/deps.vocab"),
    ),
];

/// The text of a built-in vocabulary.
pub fn builtin_text(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _, _)| *n == name).map(|b| b.2)
}

/// Parse the built-in vocabulary `name`.
pub fn builtin(name: &str) -> Option<Vocabulary> {
    let text = builtin_text(name)?;
    // The built-in texts are tested to parse; an error here is a build defect.
    Some(parse(name, &format!("<builtin:{name}>"), text).expect("built-in vocabulary parses"))
}

/// Maximum thread count a vocabulary may ask for.
pub const MAX_THREADS: usize = 8;

/// A whitespace-separated word of a line, with its byte span in the file.
#[derive(Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    span: Span,
}

impl Word<'_> {
    /// The `|`-separated alternatives, each with its own span.
    fn alternatives(&self) -> Vec<Word<'_>> {
        let mut out = Vec::new();
        let mut start = 0;
        for part in self.text.split('|') {
            let s = self.span.start + start;
            out.push(Word {
                text: part,
                span: Span::new(s, s + part.len()),
            });
            start += part.len() + 1;
        }
        out
    }
}

fn words(line: &str, offset: usize) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push(Word {
                    text: &line[s..i],
                    span: Span::new(offset + s, offset + i),
                });
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    out
}

const ANN_EXPECTED: &str = "an access annotation (`weak`, `rlx.S`, `acq.S`, `rel.S`, `vol` or `*`, \
     optionally prefixed by `alias_`, `tex_`, `surf_` or `const_`; S is `cta`, `cluster`, `gpu` or `sys`)";
const MID_EXPECTED: &str = "a fence or dependency (`fence.sc.S`, `fence.acq_rel.S`, `fence.acq.S`, \
     `fence.rel.S`, `fence.proxy.alias|texture|surface|constant`, `data`, or `-` for nothing)";
const PLACE_EXPECTED: &str = "a placement (`cta`, `cluster`, `gpu` or `sys`)";

fn scope_of(text: &str) -> Option<Scope> {
    Scope::ALL.into_iter().find(|s| s.as_str() == text)
}

/// `*` → `Some(None)`; an annotation → `Some(Some(ann))`; otherwise `None`.
fn parse_ann(text: &str) -> Option<Option<Ann>> {
    if text == "*" {
        return Some(None);
    }
    let (proxy, rest) = [
        ("alias_", EvProxy::Alias),
        ("tex_", EvProxy::Texture),
        ("surf_", EvProxy::Surface),
        ("const_", EvProxy::Constant),
    ]
    .into_iter()
    .find_map(|(p, k)| text.strip_prefix(p).map(|r| (k, r)))
    .unwrap_or((EvProxy::Generic, text));
    let strength = match rest {
        "weak" => Strength::Weak,
        "vol" => Strength::Volatile,
        _ => {
            let (word, scope) = rest.split_once('.')?;
            let scope = scope_of(scope)?;
            match word {
                "rlx" => Strength::Relaxed(scope),
                "acq" => Strength::Acquire(scope),
                "rel" => Strength::Release(scope),
                _ => return None,
            }
        }
    };
    Some(Some(Ann { proxy, strength }))
}

/// `-` → `Some(None)`; a fence or dependency → `Some(Some(mid))`.
fn parse_mid(text: &str) -> Option<Option<Mid>> {
    if text == "-" {
        return Some(None);
    }
    if text == "data" {
        return Some(Some(Mid::Data));
    }
    if let Some(k) = text.strip_prefix("fence.proxy.") {
        let kind = match k {
            "alias" => ProxyKind::Alias,
            "texture" => ProxyKind::Texture,
            "surface" => ProxyKind::Surface,
            "constant" => ProxyKind::Constant,
            _ => return None,
        };
        return Some(Some(Mid::Proxy(kind)));
    }
    let rest = text.strip_prefix("fence.")?;
    let (kind, scope) = rest.rsplit_once('.')?;
    let kind = match kind {
        "sc" => FenceKind::Sc,
        "acq_rel" => FenceKind::AcqRel,
        "acq" | "acquire" => FenceKind::Acquire,
        "rel" | "release" => FenceKind::Release,
        _ => return None,
    };
    Some(Some(Mid::Fence(kind, scope_of(scope)?)))
}

fn parse_place(text: &str) -> Option<Place> {
    Place::ALL.into_iter().find(|p| p.word() == text)
}

/// Parse each alternative of `w` with `f`; the first that fails is an error.
fn alternatives<T>(
    w: &Word<'_>,
    f: impl Fn(&str) -> Option<T>,
    expected: &str,
) -> Result<Vec<(T, Span)>, Diagnostic> {
    w.alternatives()
        .iter()
        .map(|a| {
            f(a.text)
                .map(|v| (v, a.span))
                .ok_or_else(|| Diagnostic::expected(a.span, expected, format!("`{}`", a.text)))
        })
        .collect()
}

/// Directions named by `R`, `W` or `*`, and whether they came from a wildcard.
fn dirs_of(c: char) -> Option<(Vec<Dir>, bool)> {
    match c {
        'R' => Some((vec![Dir::R], false)),
        'W' => Some((vec![Dir::W], false)),
        '*' => Some((vec![Dir::W, Dir::R], true)),
        _ => None,
    }
}

/// Parse a vocabulary file's `text`; `name` names it in generated tests and
/// `path` in error messages.
pub fn parse(name: &str, path: &str, text: &str) -> Result<Vocabulary, LitmusError> {
    parse_inner(name, text).map_err(|d| LitmusError::new(path, text, d))
}

fn parse_inner(name: &str, text: &str) -> Result<Vocabulary, Diagnostic> {
    let mut vocab = Vocabulary {
        name: name.to_string(),
        default: Ann::generic(Strength::Weak),
        max_threads: 4,
        edges: Vec::new(),
    };
    let mut seen = HashSet::new();
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let line_offset = offset;
        offset += raw.len();
        let line = raw.split('#').next().unwrap_or("");
        let ws = words(line, line_offset);
        let Some(head) = ws.first() else { continue };
        let found_end =
            |w: &Word<'_>| Diagnostic::expected(w.span, "more words", "the end of the line");
        match head.text {
            "default" => {
                let [_, w] = ws[..] else {
                    return Err(match ws.get(2) {
                        Some(extra) => Diagnostic::expected(
                            extra.span,
                            "the end of the line after `default ANN`",
                            format!("`{}`", extra.text),
                        ),
                        None => found_end(head).with_label("`default` takes one annotation"),
                    });
                };
                let ann = match parse_ann(w.text) {
                    Some(Some(a)) => a,
                    _ => {
                        return Err(Diagnostic::expected(
                            w.span,
                            "an annotation that fits loads and stores (`weak`, `rlx.S`, `vol`, optionally with a proxy prefix that allows stores)",
                            format!("`{}`", w.text),
                        ));
                    }
                };
                if !(ann.allows(Dir::R) && ann.allows(Dir::W)) {
                    return Err(Diagnostic::expected(
                        w.span,
                        "an annotation that fits loads and stores (`weak`, `rlx.S`, `vol`, optionally with a proxy prefix that allows stores)",
                        format!("`{}`", w.text),
                    ));
                }
                vocab.default = ann;
            }
            "threads" => {
                let n = ws
                    .get(1)
                    .ok_or_else(|| found_end(head).with_label("`threads` takes a number"))?;
                match n.text.parse::<usize>() {
                    Ok(k) if (2..=MAX_THREADS).contains(&k) => vocab.max_threads = k,
                    _ => {
                        return Err(Diagnostic::expected(
                            n.span,
                            format!("a thread count from 2 to {MAX_THREADS}"),
                            format!("`{}`", n.text),
                        ));
                    }
                }
                if let Some(extra) = ws.get(2) {
                    return Err(Diagnostic::expected(
                        extra.span,
                        "the end of the line after `threads N`",
                        format!("`{}`", extra.text),
                    ));
                }
            }
            "Rfe" | "Fre" | "Coe" | "Wse" => {
                let kind = match head.text {
                    "Rfe" => ComKind::Rf,
                    "Fre" => ComKind::Fr,
                    _ => ComKind::Co,
                };
                let places = ws.get(1).ok_or_else(|| {
                    found_end(head).with_label("a communication edge needs a placement")
                })?;
                let places = alternatives(places, parse_place, PLACE_EXPECTED)?;
                let (src_anns, dst_anns) = match ws.len() {
                    2 => (vec![(None, head.span)], vec![(None, head.span)]),
                    4 => (
                        alternatives(&ws[2], parse_ann, ANN_EXPECTED)?,
                        alternatives(&ws[3], parse_ann, ANN_EXPECTED)?,
                    ),
                    3 => return Err(found_end(&ws[2]).with_label("give both annotations, or none")),
                    _ => {
                        return Err(Diagnostic::expected(
                            ws[4].span,
                            "the end of the line after `EDGE PLACEMENT SRC DST`",
                            format!("`{}`", ws[4].text),
                        ));
                    }
                };
                let (src, dst) = kind.dirs();
                let mut any = false;
                for &(place, _) in &places {
                    for &(sa, ss) in &src_anns {
                        for &(da, ds) in &dst_anns {
                            check_ann(sa, src, ss, false)?;
                            check_ann(da, dst, ds, false)?;
                            let e = VocabEdge {
                                edge: Edge::Com { kind, place },
                                src,
                                dst,
                                src_ann: sa,
                                dst_ann: da,
                            };
                            any = true;
                            if seen.insert(e.clone()) {
                                vocab.edges.push(e);
                            }
                        }
                    }
                }
                debug_assert!(any);
            }
            w if (w.starts_with("Pod") || w.starts_with("Pos")) && w.len() == 5 => {
                let same_loc = w.starts_with("Pos");
                let mut cs = w[3..].chars();
                let bad_dirs = || {
                    Diagnostic::expected(
                        head.span,
                        "`Pod` or `Pos` followed by two directions (`R`, `W` or `*`), e.g. `PodWR`",
                        format!("`{w}`"),
                    )
                };
                let (src_dirs, src_wild) = cs.next().and_then(dirs_of).ok_or_else(bad_dirs)?;
                let (dst_dirs, dst_wild) = cs.next().and_then(dirs_of).ok_or_else(bad_dirs)?;
                let (src_anns, mids, dst_anns) = match ws.len() {
                    1 => (vec![(None, head.span)], Vec::new(), vec![(None, head.span)]),
                    2 => return Err(found_end(&ws[1]).with_label("give both annotations, or none")),
                    n => (
                        alternatives(&ws[1], parse_ann, ANN_EXPECTED)?,
                        ws[2..n - 1]
                            .iter()
                            .map(|m| alternatives(m, parse_mid, MID_EXPECTED))
                            .collect::<Result<Vec<_>, _>>()?,
                        alternatives(&ws[n - 1], parse_ann, ANN_EXPECTED)?,
                    ),
                };
                let mid_seqs = mid_sequences(&mids);
                let mut any = false;
                for &src in &src_dirs {
                    for &dst in &dst_dirs {
                        for &(sa, ss) in &src_anns {
                            if !check_ann(sa, src, ss, src_wild)? {
                                continue;
                            }
                            for &(da, ds) in &dst_anns {
                                if !check_ann(da, dst, ds, dst_wild)? {
                                    continue;
                                }
                                'mids: for seq in &mid_seqs {
                                    for &(m, span) in seq {
                                        if !check_mid(m, src, dst, span, src_wild || dst_wild)? {
                                            continue 'mids;
                                        }
                                    }
                                    let e = VocabEdge {
                                        edge: Edge::Po {
                                            same_loc,
                                            mids: seq.iter().map(|(m, _)| *m).collect(),
                                        },
                                        src,
                                        dst,
                                        src_ann: sa,
                                        dst_ann: da,
                                    };
                                    any = true;
                                    if seen.insert(e.clone()) {
                                        vocab.edges.push(e);
                                    }
                                }
                            }
                        }
                    }
                }
                if !any {
                    return Err(Diagnostic::expected(
                        head.span.to(ws[ws.len() - 1].span),
                        "a line that yields at least one edge",
                        "no direction that fits every annotation and fence of the line",
                    ));
                }
            }
            other => {
                return Err(Diagnostic::expected(
                    head.span,
                    "an edge (`Rfe`, `Fre`, `Coe`, `PodXY`, `PosXY`) or a directive (`default`, `threads`)",
                    format!("`{other}`"),
                ));
            }
        }
    }
    Ok(vocab)
}

/// Every sequence of mids a line's middle fields allow (each field picks one
/// alternative; `-` picks nothing).
fn mid_sequences(fields: &[Vec<(Option<Mid>, Span)>]) -> Vec<Vec<(Mid, Span)>> {
    let mut seqs: Vec<Vec<(Mid, Span)>> = vec![Vec::new()];
    for field in fields {
        let mut next = Vec::new();
        for s in &seqs {
            for &(m, span) in field {
                let mut s2 = s.clone();
                if let Some(m) = m {
                    s2.push((m, span));
                }
                next.push(s2);
            }
        }
        seqs = next;
    }
    seqs
}

/// Whether `ann` fits an access in direction `d`. A misfit is an error when
/// the direction was written out, and only skips that direction when it came
/// from a `*`.
fn check_ann(ann: Option<Ann>, d: Dir, span: Span, wild: bool) -> Result<bool, Diagnostic> {
    let Some(a) = ann else { return Ok(true) };
    if a.allows(d) {
        return Ok(true);
    }
    if wild {
        return Ok(false);
    }
    let what = if d == Dir::R { "a load" } else { "a store" };
    Err(Diagnostic::expected(
        span,
        format!("an annotation that fits {what}"),
        format!("`{a}`"),
    )
    .with_label(match d {
        Dir::R => "loads cannot be `rel`",
        Dir::W => "stores cannot be `acq`, nor use the texture or constant proxy",
    }))
}

/// Whether `m` fits between a `src` and a `dst` access (a data dependency
/// goes from a load to a store).
fn check_mid(m: Mid, src: Dir, dst: Dir, span: Span, wild: bool) -> Result<bool, Diagnostic> {
    if m != Mid::Data || (src == Dir::R && dst == Dir::W) {
        return Ok(true);
    }
    if wild {
        return Ok(false);
    }
    Err(Diagnostic::expected(
        span,
        "a data dependency from a load to a store (`PodRW`, `PosRW`)",
        format!("`data` between a {} and a {}", dir_word(src), dir_word(dst)),
    ))
}

fn dir_word(d: Dir) -> &'static str {
    match d {
        Dir::R => "load",
        Dir::W => "store",
    }
}
