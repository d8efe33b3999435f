//! Why an allowed outcome is allowed, in the terms a programmer asks about:
//! which read returned a stale value (or a value from the future, or which
//! write lost to a write it "should" follow), along which chain of the
//! program a programmer expected the two to be ordered, and, per link of
//! that chain, what is missing for the model to order them (a release, an
//! acquire, a `fence.sc`, a proxy fence, a wider scope).
//!
//! The chain is a path of program order, reads-from, coherence, from-read,
//! barrier and asynchronous edges from the missed write to the read: under
//! sequential consistency it would forbid the witness. Every missing link is
//! decided on the checker's relations of the witness (`check::Relations`:
//! release and acquire patterns, observation, `sw`, base causality, moral
//! strength, proxy-preserved causality), never on the syntax alone, and a
//! sentence is written only for a link that is absent there.

use serde::Serialize;

use crate::ax::graph::{Event, Kind};
use crate::ir::tensor_core::TcOp;
use crate::ir::{BarrierKind, FenceSem, Instr, Proxy, Sem};
use crate::rel::{Bits, Rel, members};

use super::check::{Edge, EdgeRel, Relations, Sync, Witness, find_path};
use super::words::Words;

/// At most this many pairs are listed (the others are counted).
pub const MAX_PAIRS: usize = 4;

/// At most this many steps of a sequentially consistent interleaving are
/// shown.
pub const MAX_INTERLEAVING: usize = 16;

/// What the witness of an allowed outcome misses.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Missing {
    /// The witness is sequentially consistent: an interleaving of the
    /// threads gives the outcome, so no ordering is missing.
    pub sequentially_consistent: bool,
    /// For a sequentially consistent witness: an interleaving of the
    /// threads' accesses and barriers that gives it, in order (each with
    /// where it is written; at most [`MAX_INTERLEAVING`], then `…`).
    pub interleaving: Vec<String>,
    /// The pairs a programmer expected ordered, reads the outcome depends
    /// on first.
    pub pairs: Vec<Pair>,
    /// Pairs beyond [`MAX_PAIRS`].
    pub more_pairs: usize,
}

/// One pair of accesses the witness does not order as the program suggests.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pair {
    /// `stale_read`, `read_from_later_write` or `coherence_against_order`.
    pub kind: &'static str,
    /// What happened, in words (`P1 ld x=0 reads x=0 (initial) and misses P0 st x=1`).
    pub what: String,
    /// The chain that would have ordered them, edge by edge.
    pub chain: String,
    /// One sentence per missing link.
    pub links: Vec<String>,
    /// The instructions the sentences name, in the order first named, with
    /// where each is written (an asynchronous operation's events are its
    /// starting instruction's).
    pub sites: Vec<PairSite>,
}

/// An instruction named by a [`Pair`]'s sentences.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PairSite {
    /// The thread as written (`P0`; an asynchronous operation's issuer).
    pub thread: String,
    /// The instruction as written (`st.relaxed.gpu f, 1`).
    pub instr: String,
    /// `file:line:column` (a kernel's with its CUDA line); `null` if unknown.
    pub position: Option<String>,
}

/// The kind of an unordered pair, and its events.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `read` reads from `from` and misses `missed`, coherence-after `from`.
    Stale {
        read: usize,
        from: usize,
        missed: usize,
    },
    /// `read` reads from `from`, which the chain puts after `read`.
    Later { read: usize, from: usize },
    /// `first` is coherence-before `second`, which the chain puts before it.
    Coherence { first: usize, second: usize },
    /// Coherence does not order `first` and `second` (not morally strong).
    Unordered { first: usize, second: usize },
    /// The outcome's final write `last` ends last, though the program puts
    /// `later`, a write coherence leaves unordered with it, after it.
    LastAgainstOrder { last: usize, later: usize },
}

/// The missing orderings of the consistent witness `w` (relations `rels`);
/// `outcome_reads` are listed first.
pub fn analyse<S: Bits>(
    words: &Words<'_, '_, S>,
    w: &Witness<S>,
    rels: &Relations<'_, '_, S>,
    outcome_reads: &[usize],
    finals: &[(crate::ir::LocId, usize)],
) -> Missing {
    let g = words.graph;
    let n = g.len();
    if let Some(order) = interleaving(words, w, rels, finals) {
        let g = words.graph;
        let mut steps: Vec<String> = order
            .into_iter()
            .filter(|&e| {
                let ev = &g.events[e];
                // An RMW is one step: its read half names it.
                ev.thread.is_some()
                    && matches!(
                        ev.kind,
                        Kind::Read | Kind::Write | Kind::BarArrive | Kind::BarWait
                    )
                    && !(e > 0 && g.rmw.has(e - 1, e))
            })
            .map(|e| match words.position(e) {
                Some(at) => format!("{} ({at})", words.full(&w.rf, e)),
                None => words.full(&w.rf, e),
            })
            .collect();
        if steps.len() > MAX_INTERLEAVING {
            steps.truncate(MAX_INTERLEAVING);
            steps.push("…".into());
        }
        // An interleaving gives it once every wait is read for what it
        // does: a wait written to order something it does not is the
        // missing ordering (`waiting.rs`).
        let mut pairs = super::waiting::waiting_bugs(words, w, rels, outcome_reads);
        if !pairs.is_empty() {
            let more_pairs = pairs.len().saturating_sub(MAX_PAIRS);
            pairs.truncate(MAX_PAIRS);
            return Missing {
                sequentially_consistent: false,
                interleaving: Vec::new(),
                pairs,
                more_pairs,
            };
        }
        return Missing {
            sequentially_consistent: true,
            interleaving: steps,
            ..Missing::default()
        };
    }
    let edges = programmer_edges(words, w, rels);
    let mut shapes: Vec<(Shape, Vec<Edge>)> = Vec::new();
    let mut later: Vec<(Shape, Vec<Edge>)> = Vec::new();
    for &r in &g.reads {
        let Some(src) = w.rf[r] else { continue };
        // The read returned a value older than a write the chain puts before it.
        let stale = members(rels.fr.row(r) & !g.inits)
            .filter(|&m| m != r)
            .filter_map(|m| find_path(n, &edges, m, r).map(|p| (m, p)))
            .min_by_key(|(m, p)| (p.len(), *m));
        if let Some((missed, path)) = stale {
            shapes.push((
                Shape::Stale {
                    read: r,
                    from: src,
                    missed,
                },
                path,
            ));
            continue;
        }
        if !g.inits.has(src) {
            if let Some(path) = find_path(n, &edges, r, src) {
                later.push((Shape::Later { read: r, from: src }, path));
            }
        }
    }
    // A read from a later write is the pair to explain only when no read
    // is stale (load buffering): on a cycle that has a stale read too, it
    // is the same cycle seen from another edge.
    if shapes.is_empty() {
        // An mbarrier wait that reads the arrival it synchronises with is
        // the same cycle seen from the wait: the data read is the pair a
        // programmer asks about, when there is one.
        let mbar = |s: &Shape| {
            matches!(*s, Shape::Later { read, .. }
                if g.program.locations[g.events[read].loc].kind == crate::ir::LocKind::Mbarrier)
        };
        if later.iter().any(|(s, _)| !mbar(s)) {
            later.retain(|(s, _)| !mbar(s));
        }
        shapes = later;
    }
    if shapes.is_empty() {
        // Two writes coherence leaves unordered, which sequential
        // consistency must order (readers that disagree, an RMW split).
        for (a, b) in unordered_writes(words, rels) {
            let observed = |x: usize| {
                g.reads.iter().any(|&r| w.rf[r] == Some(x)) || (x > 0 && g.rmw.has(x - 1, x))
            };
            if observed(a) || observed(b) {
                shapes.push((
                    Shape::Unordered {
                        first: a,
                        second: b,
                    },
                    Vec::new(),
                ));
            }
        }
    }
    if shapes.is_empty() {
        // A final value from a write the program puts before another write
        // of its location that coherence leaves unordered with it (two
        // virtual aliases written without `fence.proxy.alias`).
        let free = unordered_writes(words, rels);
        for &(_, last) in finals {
            for &(a, b) in &free {
                let later = match (a == last, b == last) {
                    (true, _) => b,
                    (_, true) => a,
                    _ => continue,
                };
                if let Some(path) = find_path(n, &edges, last, later) {
                    shapes.push((Shape::LastAgainstOrder { last, later }, path));
                }
            }
        }
    }
    if shapes.is_empty() {
        // Only coherence goes against the program (final values, 2+2W).
        for (a, b) in rels.co.pairs() {
            if g.inits.has(a) || a == b {
                continue;
            }
            if let Some(path) = find_path(n, &edges, b, a) {
                shapes.push((
                    Shape::Coherence {
                        first: a,
                        second: b,
                    },
                    path,
                ));
            }
        }
    }
    // The reads the outcome depends on first, then event order.
    let key = |s: &Shape| match *s {
        Shape::Stale { read, .. } | Shape::Later { read, .. } => {
            (!outcome_reads.contains(&read), read)
        }
        Shape::Coherence { first, .. }
        | Shape::Unordered { first, .. }
        | Shape::LastAgainstOrder { last: first, .. } => (true, first),
    };
    shapes.sort_by_key(|(s, _)| key(s));
    let more_pairs = shapes.len().saturating_sub(MAX_PAIRS);
    let pairs = shapes
        .into_iter()
        .take(MAX_PAIRS)
        .map(|(s, path)| pair(words, w, rels, s, &path))
        .collect();
    Missing {
        sequentially_consistent: false,
        interleaving: Vec::new(),
        pairs,
        more_pairs,
    }
}

/// The orderings a programmer reasons with: program order, communication
/// (reads-from, coherence, from-read), the barriers that synchronised and
/// the asynchronous operations' issue and completion.
fn programmer_edges<S: Bits>(
    words: &Words<'_, '_, S>,
    w: &Witness<S>,
    rels: &Relations<'_, '_, S>,
) -> Vec<Edge> {
    let g = words.graph;
    let mut out = Vec::new();
    let mut add = |r: &Rel<S>, rel: EdgeRel| {
        for (a, b) in r.pairs() {
            if a != b {
                out.push(Edge {
                    from: a,
                    to: b,
                    rel,
                    sync: None,
                });
            }
        }
    };
    add(&g.po, EdgeRel::Po);
    add(&rels.rf, EdgeRel::Rf);
    add(&rels.co, EdgeRel::Co);
    add(&rels.fr, EdgeRel::Fr);
    add(&g.await_edges, EdgeRel::Async);
    issue_edges(words, rels, &mut out);
    super::waits::completion_edges(words, rels, &mut out);
    for (a, b) in w.bar.pairs() {
        out.push(Edge {
            from: a,
            to: b,
            rel: EdgeRel::Bar,
            sync: Some(Sync::Barrier),
        });
    }
    // The barriers as written: the k-th barrier of a thread meets the k-th
    // of every other thread of the same kind (CTA or warp), unless the
    // execution synchronises the two threads through a barrier already.
    // These edges carry no synchronisation: the links that are missing.
    let family = |e: usize| {
        let ev = &g.events[e];
        let t = ev.thread?;
        match &g.program.threads[t].code[ev.pc] {
            Instr::Barrier { kind, .. } => Some(*kind == BarrierKind::WarpSync),
            _ => None,
        }
    };
    let threads = g.program.threads.len();
    let mut per: Vec<Vec<(usize, Option<usize>)>> = vec![Vec::new(); threads];
    for b in &g.barriers {
        if let Some(t) = g.events[b.arrive].thread {
            per[t].push((b.arrive, b.wait));
        }
    }
    for v in &mut per {
        v.sort_unstable();
    }
    let met = |ta: usize, tb: usize| {
        w.bar.pairs().any(|(a, b)| {
            let (x, y) = (g.events[a].thread, g.events[b].thread);
            (x, y) == (Some(ta), Some(tb)) || (x, y) == (Some(tb), Some(ta))
        })
    };
    for ta in 0..threads {
        for tb in 0..threads {
            if ta == tb || met(ta, tb) {
                continue;
            }
            for (&(arrive, _), &(_, wait)) in per[ta].iter().zip(&per[tb]) {
                if let Some(wait) = wait {
                    if family(arrive).is_some() && family(arrive) == family(wait) {
                        out.push(Edge {
                            from: arrive,
                            to: wait,
                            rel: EdgeRel::Bar,
                            sync: None,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The asynchronous operations as written: a programmer reads an operation
/// issued after an instruction as ordered after it (the MMA issued after
/// the wait for its tile reads the tile). The machine and the oracle start a
/// tensor-core operation at the fence that orders it (`wgmma.fence`,
/// `tcgen05.fence::after_thread_sync`; `docs/tensor-core.md`), not at its
/// issue, so where base causality does not order the issuer's last event
/// before the issue with the operation's first event, the edge is added
/// without synchronisation: the link that is missing. (A bulk copy starts at
/// its issue: base causality has that edge, and nothing is added.)
fn issue_edges<S: Bits>(
    words: &Words<'_, '_, S>,
    rels: &Relations<'_, '_, S>,
    out: &mut Vec<Edge>,
) {
    let g = words.graph;
    for (t, th) in g.program.threads.iter().enumerate() {
        let Some(a) = &th.agent else { continue };
        if a.exec != 0 {
            continue;
        }
        let Some(first) = (0..g.len()).find(|&e| g.events[e].thread == Some(t)) else {
            continue;
        };
        // The issuer's events before the issue: those before its first
        // event at or after the issuing instruction.
        let mut before = None;
        for e in 0..g.len() {
            let ev = &g.events[e];
            if ev.thread != Some(a.issuer) {
                continue;
            }
            if ev.pc >= a.spawn_pc {
                break;
            }
            before = Some(e);
        }
        let Some(before) = before else { continue };
        if !rels.cb.has(before, first) {
            out.push(Edge {
                from: before,
                to: first,
                rel: EdgeRel::Async,
                sync: None,
            });
        }
    }
}

/// Pairs of same-location writes (initial writes apart) that coherence
/// leaves unordered: they are not morally strong.
fn unordered_writes<S: Bits>(
    words: &Words<'_, '_, S>,
    rels: &Relations<'_, '_, S>,
) -> Vec<(usize, usize)> {
    let g = words.graph;
    let mut out = Vec::new();
    for &wsl in &g.writes_of {
        for a in members(wsl & !g.inits) {
            for b in members(wsl & !g.inits) {
                if a < b && !rels.co.has(a, b) && !rels.co.has(b, a) {
                    out.push((a, b));
                }
            }
        }
    }
    out
}

/// At most this many unordered write pairs are oriented both ways when
/// deciding whether an interleaving gives a witness.
const MAX_UNORDERED: usize = 10;

/// Whether some interleaving of the threads gives the witness `w`
/// (relations `rels`, the outcome's final writes `finals`): sequential
/// consistency, with the barriers as written and the asynchronous
/// operations' issue and completion. Coherence must then be total, so the
/// write pairs the model leaves unordered are tried both ways (up to
/// [`MAX_UNORDERED`] of them; beyond, the answer is no).
pub fn sequentially_consistent<S: Bits>(
    words: &Words<'_, '_, S>,
    w: &Witness<S>,
    rels: &Relations<'_, '_, S>,
    finals: &[(crate::ir::LocId, usize)],
) -> bool {
    interleaving(words, w, rels, finals).is_some()
}

/// [`sequentially_consistent`], with the interleaving: every event of the
/// witness in an order that respects program order, the barriers, the
/// asynchronous edges, reads-from, a total coherence and from-read (each
/// read reads the latest write before it).
pub fn interleaving<S: Bits>(
    words: &Words<'_, '_, S>,
    w: &Witness<S>,
    rels: &Relations<'_, '_, S>,
    finals: &[(crate::ir::LocId, usize)],
) -> Option<Vec<usize>> {
    let g = words.graph;
    let n = g.len();
    let free = unordered_writes(words, rels);
    if free.len() > MAX_UNORDERED {
        return None;
    }
    let mut fixed = Rel::<S>::empty(n);
    for e in programmer_edges(words, w, rels) {
        if !matches!(e.rel, EdgeRel::Co | EdgeRel::Fr) {
            fixed.add(e.from, e.to);
        }
    }
    (0u32..1 << free.len()).find_map(|mask| {
        let mut co = rels.co.clone();
        for (k, &(a, b)) in free.iter().enumerate() {
            if mask & (1 << k) == 0 {
                co.add(a, b);
            } else {
                co.add(b, a);
            }
        }
        co.close();
        if co.has_cycle() {
            return None;
        }
        if finals
            .iter()
            .any(|&(l, f)| !(co.row(f) & g.writes_of[l]).is_empty())
        {
            return None;
        }
        let fr = rels.rf.inverse().compose(&co);
        let mut all = fixed.clone();
        all.union_with(&co);
        all.union_with(&fr);
        for i in 0..n {
            all.set_row(i, all.row(i) & !S::bit(i));
        }
        if all.has_cycle() {
            return None;
        }
        // An RMW is atomic under sequential consistency, whatever its strength.
        if g.rmw
            .pairs()
            .any(|(r, wr)| members(fr.row(r)).any(|x| x != wr && co.has(x, wr)))
        {
            return None;
        }
        Some(topological(&all, n))
    })
}

/// The events `0..n` in an order that respects the acyclic relation `r`,
/// the least event first among those ready.
fn topological<S: Bits>(r: &Rel<S>, n: usize) -> Vec<usize> {
    let mut preds = vec![0usize; n];
    for (a, b) in r.pairs() {
        if a != b {
            preds[b] += 1;
        }
    }
    let mut done = vec![false; n];
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let Some(next) = (0..n).find(|&e| !done[e] && preds[e] == 0) else {
            break;
        };
        done[next] = true;
        out.push(next);
        for b in members(r.row(next)) {
            if b != next {
                preds[b] -= 1;
            }
        }
    }
    out
}

/// Words for one pair: what happened, the chain, the missing links.
fn pair<S: Bits>(
    words: &Words<'_, '_, S>,
    w: &Witness<S>,
    rels: &Relations<'_, '_, S>,
    shape: Shape,
    path: &[Edge],
) -> Pair {
    let rf = &w.rf;
    let links_of = Links {
        words,
        w,
        rels,
        named: Default::default(),
    };
    let q = |e: usize| links_of.q(e);
    if let Shape::Unordered { first, second } = shape {
        let rmw = |x: usize| x > 0 && words.graph.rmw.has(x - 1, x);
        let why = if rmw(first) || rmw(second) {
            "so the RMW is not atomic with respect to the other write"
        } else {
            "so threads may see them in different orders"
        };
        return Pair {
            kind: "unordered_writes",
            what: format!(
                "{} and {} are not ordered by coherence, {why}",
                q(first),
                q(second)
            ),
            chain: String::new(),
            links: vec![format!(
                "coherence orders only morally strong writes: {}",
                links_of.not_morally_strong(first, second)
            )],
            sites: links_of.sites(),
        };
    }
    if let Shape::LastAgainstOrder { last, later } = shape {
        let what = format!(
            "{} ends last, although the program puts {} after it: coherence does not order them",
            q(last),
            q(later)
        );
        let mut chain = words.full(rf, path[0].from);
        for e in path {
            chain.push_str(&format!(" —{}→ {}", e.rel.as_str(), words.full(rf, e.to)));
        }
        let (a, b) = (&words.graph.events[last], &words.graph.events[later]);
        let link = if a.thread == b.thread && a.va != b.va {
            let g = words.graph;
            // A virtual address is named by the generic address that owns it.
            let name = |e: &crate::ax::graph::Event| {
                g.program
                    .addresses
                    .get(e.va)
                    .map_or_else(|| "?".to_string(), |x| x.name.clone())
            };
            format!(
                "no `fence.proxy.alias` between {} and {}: they write {} through different virtual addresses ({} and {}), and program order orders such writes for coherence only through a proxy fence",
                q(last),
                q(later),
                g.program.locations[a.loc].name,
                name(a),
                name(b)
            )
        } else {
            format!(
                "coherence orders only morally strong writes: {}",
                links_of.not_morally_strong(last, later)
            )
        };
        return Pair {
            kind: "final_write_against_order",
            what,
            chain,
            links: vec![link],
            sites: links_of.sites(),
        };
    }
    let (kind, what, start, end) = match shape {
        Shape::Stale { read, from, missed } => (
            "stale_read",
            format!(
                "{} reads from {} and misses {}",
                q(read),
                q(from),
                q(missed)
            ),
            missed,
            read,
        ),
        Shape::Later { read, from } => (
            "read_from_later_write",
            format!(
                "{} reads from {}, which the program puts after it",
                q(read),
                q(from)
            ),
            read,
            from,
        ),
        Shape::Unordered { .. } | Shape::LastAgainstOrder { .. } => {
            unreachable!("worded above")
        }
        Shape::Coherence { first, second } => (
            "coherence_against_order",
            format!(
                "{} is coherence-before {}, which the program puts before it",
                q(first),
                q(second)
            ),
            second,
            first,
        ),
    };
    let mut chain = words.full(rf, path[0].from);
    for e in path {
        chain.push_str(&format!(" —{}→ {}", e.rel.as_str(), words.full(rf, e.to)));
    }
    let links = links_of.missing(start, end, path);
    Pair {
        kind,
        what,
        chain,
        links,
        sites: links_of.sites(),
    }
}

/// The link analysis of one chain (and the namer of a pair's events).
pub(super) struct Links<'x, 'a, 'p, S: Bits> {
    words: &'x Words<'a, 'p, S>,
    w: &'x Witness<S>,
    rels: &'x Relations<'a, 'p, S>,
    /// The events the sentences named so far, in order.
    named: std::cell::RefCell<Vec<usize>>,
}

impl<'x, 'a, 'p, S: Bits> Links<'x, 'a, 'p, S> {
    /// A namer with nothing named yet.
    pub(super) fn new(
        words: &'x Words<'a, 'p, S>,
        w: &'x Witness<S>,
        rels: &'x Relations<'a, 'p, S>,
    ) -> Self {
        Links {
            words,
            w,
            rels,
            named: Default::default(),
        }
    }

    fn ev(&self, e: usize) -> &Event {
        &self.words.graph.events[e]
    }

    /// `P0 st.relaxed.gpu f=1` in backquotes, with where it is written
    /// (`(line 8:14)`) when known.
    /// The position is given the first time the pair names the event.
    pub(super) fn q(&self, e: usize) -> String {
        let mut named = self.named.borrow_mut();
        let first = !named.contains(&e);
        if first {
            named.push(e);
        }
        match self.words.position(e).filter(|_| first) {
            Some(at) => format!("`{}` ({at})", self.words.full(&self.w.rf, e)),
            None => format!("`{}`", self.words.full(&self.w.rf, e)),
        }
    }

    /// The instructions of the test as written that the sentences named.
    pub(super) fn sites(&self) -> Vec<PairSite> {
        let words = self.words;
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for &e in self.named.borrow().iter() {
            let Some((t, pc)) = words.source_instr(e) else {
                continue;
            };
            if seen.contains(&(t, pc)) {
                continue;
            }
            seen.push((t, pc));
            let th = &words.source.threads[t];
            out.push(PairSite {
                thread: th.name.clone(),
                instr: th.code.get(pc).map_or_else(String::new, |i| {
                    crate::litmus::print::instr(words.source, th, i)
                }),
                position: words.positions.full(t, pc).map(str::to_string),
            });
        }
        out
    }

    /// `a` is `b` or before it in program order.
    fn po_eq(&self, a: usize, b: usize) -> bool {
        a == b || self.words.graph.po.has(a, b)
    }

    /// The events of `x`'s thread between `x` and `y` (both included).
    fn between(&self, x: usize, y: usize) -> impl Iterator<Item = usize> + '_ {
        let t = self.ev(x).thread;
        (0..self.words.graph.len())
            .filter(move |&e| self.ev(e).thread == t && self.po_eq(x, e) && self.po_eq(e, y))
    }

    /// One sentence per link of `path` (from `start` to `end`) that the
    /// model's relations do not provide.
    fn missing(&self, start: usize, end: usize, path: &[Edge]) -> Vec<String> {
        let rels = self.rels;
        // Base causality from the start (or from a read observing it) to the end.
        let ordered_base = std::iter::once(start)
            .chain(members(rels.obs.row(start)))
            .any(|z| z == end || rels.cb.has(z, end));
        if ordered_base {
            return vec![self.proxy_gap(start, end)];
        }
        // The thread visits of the chain: (enter, leave) around each link.
        let mut visits: Vec<(usize, usize)> = vec![(start, start)];
        let mut links: Vec<Edge> = Vec::new();
        for e in path {
            if e.rel == EdgeRel::Po {
                visits.last_mut().unwrap().1 = e.to;
            } else {
                links.push(*e);
                visits.push((e.to, e.to));
            }
        }
        let mut out: Vec<String> = Vec::new();
        for (i, l) in links.iter().enumerate() {
            let (x0, _) = visits[i];
            let (_, y1) = visits[i + 1];
            let said = match l.rel {
                EdgeRel::Rf => self.rf_link(i == 0 && x0 == l.from, x0, l.from, l.to, y1, end),
                EdgeRel::Fr | EdgeRel::Co => {
                    // The fence after the link may sit further on: a visit
                    // that only passes a write on to a reader by
                    // observation (IRIW's writers) has no room for one.
                    let mut j = i + 1;
                    while visits[j].0 == visits[j].1
                        && j < links.len()
                        && links[j].rel == EdgeRel::Rf
                        && self.rels.obs.has(links[j].from, links[j].to)
                    {
                        j += 1;
                    }
                    let (bx, by) = visits[j];
                    self.fence_sc_link(x0, l.from, bx, by, l.rel)
                }
                EdgeRel::Bar if l.sync.is_none() => vec![self.barrier_link(l.from, l.to)],
                EdgeRel::Async if !self.rels.cb.has(l.from, l.to) => {
                    if super::waits::is_completion(self.words, l.from) {
                        vec![super::waits::missing_wait(self.words, l.from, l.to, &|e| {
                            self.q(e)
                        })]
                    } else {
                        vec![self.issue_link(l.from, l.to)]
                    }
                }
                // A barrier that synchronised and an operation's issue or
                // completion are base causality already.
                _ => Vec::new(),
            };
            for s in said {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        if out.is_empty() {
            // Each link orders on its own, but they do not chain (an
            // acquire after the next release in some thread, or a
            // Fence-SC order against the chain).
            out.push(format!(
                "each link synchronises on its own, but they do not chain: {} is not causality-before {} (in some thread the acquire comes after the release that continues the chain, or the Fence-SC order goes the other way)",
                self.q(start),
                self.q(end)
            ));
        }
        out
    }

    /// The link `write —rf→ read`, entered at `x0` in the writer's thread
    /// and left at `y1` in the reader's; `first`: the chain starts at the
    /// write itself, so observation is enough.
    fn rf_link(
        &self,
        first: bool,
        x0: usize,
        write: usize,
        read: usize,
        y1: usize,
        end: usize,
    ) -> Vec<String> {
        let rels = self.rels;
        let g = self.words.graph;
        if first {
            if rels.obs.has(write, read) {
                return Vec::new();
            }
            return vec![format!(
                "{} reads from {} but does not observe it: {}",
                self.q(read),
                self.q(write),
                self.not_morally_strong(write, read)
            )];
        }
        let heads: Vec<usize> = self
            .between(x0, write)
            .filter(|&h| rels.rp.has(h, write))
            .collect();
        let tails: Vec<usize> = self
            .between(read, y1)
            .filter(|&t| rels.ap.has(read, t))
            .collect();
        let useful = |t: usize| self.po_eq(t, y1) || t == end || rels.cb.has(t, end);
        let synced = members(rels.obs.row(write)).any(|r2| {
            (0..g.len()).any(|t| {
                rels.ap.has(r2, t) && useful(t) && heads.iter().any(|&h| rels.sw_ra.has(h, t))
            })
        });
        if synced {
            return Vec::new();
        }
        let mut out = Vec::new();
        if heads.is_empty() {
            out.push(self.no_release(x0, write));
        }
        if tails.is_empty() {
            out.push(self.no_acquire(read, y1));
        }
        if !out.is_empty() {
            return out;
        }
        if !rels.obs.has(write, read) {
            return vec![format!(
                "{} reads from {} but does not observe it: {}",
                self.q(read),
                self.q(write),
                self.not_morally_strong(write, read)
            )];
        }
        for &h in &heads {
            for &t in &tails {
                if !rels.ms.has(h, t) {
                    out.push(format!(
                        "{} does not synchronise with {}: {}",
                        self.q(t),
                        self.q(h),
                        self.not_morally_strong(h, t)
                    ));
                }
            }
        }
        out
    }

    /// Why no release pattern of the writer's thread between `x0` and
    /// `write` ends at `write`.
    fn no_release(&self, x0: usize, write: usize) -> String {
        let e = self.ev(write);
        let g = self.words.graph;
        if !e.is_strong() {
            return format!(
                "{} is weak: a weak write ends no release pattern (it needs `.release`, or `.relaxed` after a `fence.acq_rel`/`fence.sc`), so no acquire synchronises with it",
                self.q(write)
            );
        }
        let fence_before = (0..g.len()).find(|&f| {
            matches!(self.ev(f).kind, Kind::Fence(k) if k.releases())
                && self.ev(f).thread == e.thread
                && g.po.has(f, x0)
                && f != x0
        });
        let opening = if x0 == write {
            "nothing before it in its thread is part of the chain".to_string()
        } else {
            format!(
                "no release fence (`fence.acq_rel`, `fence.sc`) lies between {} and it",
                self.q(x0)
            )
        };
        let mut s = format!(
            "{} is `.{}`: it is not a release, and {opening}",
            self.q(write),
            sem_word(e.sem)
        );
        if let Some(f) = fence_before {
            s.push_str(&format!(
                " ({} comes before {}, too early to order it)",
                self.q(f),
                self.q(x0)
            ));
        }
        s.push_str(", so no acquire synchronises with it");
        s
    }

    /// Why no acquire pattern starts at `read` and ends by `y1`.
    fn no_acquire(&self, read: usize, y1: usize) -> String {
        let e = self.ev(read);
        let g = self.words.graph;
        if e.red {
            return format!(
                "{} is a reduction: its read half is never an acquire",
                self.q(read)
            );
        }
        if g.cond_reads.iter().any(|(c, _)| *c == read) && e.sem.is_acquire() {
            return format!("{} did not succeed, so it acquires nothing", self.q(read));
        }
        if !e.is_strong() {
            return format!(
                "{} is weak: a weak read starts no acquire pattern (it needs `.acquire`, or `.relaxed` followed by a `fence.acq_rel`/`fence.sc`), so it synchronises with no release",
                self.q(read)
            );
        }
        let rest = if y1 == read {
            "the chain leaves its thread at this read".to_string()
        } else {
            format!(
                "no acquire fence (`fence.acq_rel`, `fence.sc`) lies between it and {}",
                self.q(y1)
            )
        };
        format!(
            "{} is `.{}`: it is not an acquire, and {rest}, so it synchronises with no release",
            self.q(read),
            sem_word(e.sem)
        )
    }

    /// The link `a —fr/co→ b` between the visits `x0..a` and `b..y1`: only
    /// the Fence-SC order turns such a link into causality.
    fn fence_sc_link(&self, x0: usize, a: usize, b: usize, y1: usize, rel: EdgeRel) -> Vec<String> {
        let sc_between = |x: usize, y: usize| -> Vec<usize> {
            if x == y {
                return Vec::new();
            }
            self.between(x, y)
                .filter(|&f| f != x && f != y && self.ev(f).kind == Kind::Fence(FenceSem::Sc))
                .collect()
        };
        let left = sc_between(x0, a);
        let right = sc_between(b, y1);
        let ordered = left
            .iter()
            .any(|&f| right.iter().any(|&f2| self.rels.cb.has(f, f2)));
        if ordered {
            return Vec::new();
        }
        let what = if rel == EdgeRel::Fr {
            "from-read"
        } else {
            "coherence"
        };
        let mut out = Vec::new();
        for (x, y, fs) in [(x0, a, &left), (b, y1, &right)] {
            if fs.is_empty() {
                if x == y {
                    out.push(format!(
                        "the chain enters and leaves {}'s thread at {}: with nothing between, no `fence.sc` can order the {what} link",
                        self.words.thread(x).unwrap_or_else(|| "the initial state".into()),
                        self.q(x)
                    ));
                } else {
                    out.push(format!(
                        "no `fence.sc` between {} and {}: only the Fence-SC order makes a {what} link part of causality",
                        self.q(x),
                        self.q(y)
                    ));
                }
            }
        }
        if out.is_empty() {
            for &f in &left {
                for &f2 in &right {
                    if !self.rels.ms.has(f, f2) {
                        out.push(format!(
                            "{} and {} are not in one Fence-SC order: {}",
                            self.q(f),
                            self.q(f2),
                            self.not_morally_strong(f, f2)
                        ));
                    } else if self.w.sc.has(f2, f) {
                        out.push(format!(
                            "the Fence-SC order of this execution puts {} before {}, against the chain",
                            self.q(f2),
                            self.q(f)
                        ));
                    }
                }
            }
        }
        out
    }

    /// A barrier as written whose arrival `arrive` the wait `wait` does not
    /// wait for in this execution.
    fn barrier_link(&self, arrive: usize, wait: usize) -> String {
        let g = self.words.graph;
        let (a, b) = (self.ev(arrive), self.ev(wait));
        let kind_of = |e: &Event| match g.program.threads[e.thread.unwrap_or(0)].code.get(e.pc) {
            Some(Instr::Barrier { kind, .. }) => Some(*kind),
            _ => None,
        };
        // `elect.sync`'s and `activemask`'s meetings order no memory, even
        // when the lanes meet (the PTX ISA states no memory ordering for
        // either): the barrier that would is `bar.warp.sync`.
        for (e, at) in [(a, arrive), (b, wait)] {
            let name = match kind_of(e) {
                Some(BarrierKind::Elect) => "elect.sync",
                Some(BarrierKind::ActiveMask) => "activemask",
                _ => continue,
            };
            return format!(
                "{} is the lanes' meeting at `{name}`, which orders no memory (the PTX ISA states no memory ordering for `{name}`): a `bar.warp.sync` (`__syncwarp()`) between the write and the read is missing",
                self.q(at)
            );
        }
        let warp = matches!(
            g.program.threads[a.thread.unwrap_or(0)].code.get(a.pc),
            Some(Instr::Barrier {
                kind: BarrierKind::WarpSync,
                ..
            })
        );
        if warp && (g.cta(arrive) != g.cta(wait) || a.placement.warp != b.placement.warp) {
            let w = |e: &Event| e.placement.warp.map_or("?".to_string(), |w| w.to_string());
            return format!(
                "{} and {} are in different warps (warp {} and warp {}): `bar.warp.sync` synchronises only lanes of one warp, so {} does not wait for {}",
                self.q(arrive),
                self.q(wait),
                w(a),
                w(b),
                self.q(wait),
                self.q(arrive)
            );
        }
        if !warp && g.cta(arrive) != g.cta(wait) {
            return format!(
                "{} and {} are in different CTAs (CTA {} and CTA {}): a CTA barrier synchronises only threads of one CTA, so {} does not wait for {}",
                self.q(arrive),
                self.q(wait),
                a.placement.cta,
                b.placement.cta,
                self.q(wait),
                self.q(arrive)
            );
        }
        format!(
            "in this execution {} does not wait for {}: they meet no common barrier phase (another barrier resource, a count or mask that completes the phase without it, or a thread that leaves before it)",
            self.q(wait),
            self.q(arrive)
        )
    }

    /// An asynchronous operation (its first event `op`) that does not wait
    /// for `before`, its issuer's last event before the issue: the fence
    /// that would start it after `before` is missing.
    fn issue_link(&self, before: usize, op: usize) -> String {
        let g = self.words.graph;
        let issued = self.ev(op).thread.and_then(|t| {
            let a = g.program.threads[t].agent.as_ref()?;
            let th = self.words.source.threads.get(a.issuer)?;
            Some((th, th.code.get(a.spawn_pc)?))
        });
        let (what, fence) = match issued {
            Some((
                th,
                i @ Instr::Tensor {
                    op: TcOp::Wgmma { .. },
                },
            )) => (
                crate::litmus::print::instr(self.words.source, th, i),
                "`wgmma.fence` between them",
            ),
            Some((
                th,
                i @ Instr::Tensor {
                    op: TcOp::Mma { .. } | TcOp::Cp { .. } | TcOp::Ld { .. } | TcOp::St { .. },
                },
            )) => (
                crate::litmus::print::instr(self.words.source, th, i),
                "`tcgen05.fence::after_thread_sync` between them",
            ),
            Some((th, i)) => (
                crate::litmus::print::instr(self.words.source, th, i),
                "a fence that orders the operation after them",
            ),
            None => (String::from("the operation"), "a fence that orders it"),
        };
        format!(
            "{} (by `{what}`) does not wait for {}: an asynchronous tensor-core operation starts at the fence that orders it, not at its issue, and {fence} is missing",
            self.q(op),
            self.q(before)
        )
    }

    /// Base causality orders `start` before `end`, causality does not: a
    /// proxy or an alias gap.
    fn proxy_gap(&self, start: usize, end: usize) -> String {
        let g = self.words.graph;
        let (a, b) = (self.ev(start), self.ev(end));
        let cta = |e: &Event| format!("CTA {}", e.placement.cta);
        let mut parts: Vec<String> = Vec::new();
        for e in [a, b] {
            let named = format!("a `fence.proxy.{}` of {} between them", e.proxy, cta(e));
            if e.proxy != Proxy::Generic
                && (a.proxy != b.proxy || g.cta(start) != g.cta(end))
                && !parts.contains(&named)
            {
                parts.push(named);
            }
        }
        if a.va != b.va {
            parts.push("a `fence.proxy.alias` between them (they use different virtual addresses of one location)".into());
        }
        let how = |e: &Event| {
            if e.proxy == Proxy::Generic {
                "the generic proxy".to_string()
            } else {
                format!("the {} proxy", e.proxy)
            }
        };
        if parts.is_empty() {
            return format!(
                "{} is before {} in base causality, but the release on the way is restricted and does not publish it",
                self.q(start),
                self.q(end)
            );
        }
        format!(
            "{} ({}) is before {} ({}) in base causality, but not in causality order: {} {} missing",
            self.q(start),
            how(a),
            self.q(end),
            how(b),
            join_and(&parts),
            if parts.len() == 1 { "is" } else { "are" }
        )
    }

    /// Why two events are not morally strong (digest §3.3), in words.
    fn not_morally_strong(&self, x: usize, y: usize) -> String {
        let (a, b) = (self.ev(x), self.ev(y));
        let who = |e: &Event, i: usize| {
            format!(
                "{} (GPU {}, cluster {}, CTA {})",
                self.words
                    .thread(i)
                    .unwrap_or_else(|| "the initial state".into()),
                e.placement.gpu,
                e.placement.cluster,
                e.placement.cta
            )
        };
        if a.thread != b.thread {
            for (e, i) in [(a, x), (b, y)] {
                if !e.is_strong() {
                    return format!(
                        "{} is weak, and a weak access is morally strong with no access of another thread (it neither synchronises with one nor is ordered with one by coherence)",
                        self.q(i)
                    );
                }
            }
            for (e, i, o, j) in [(a, x, b, y), (b, y, a, x)] {
                if let Some(sc) = e.scope {
                    if !e.placement.includes(sc, &o.placement) {
                        return format!(
                            "the `.{sc}` scope of {} does not include {}",
                            self.q(i),
                            who(o, j)
                        );
                    }
                }
            }
        }
        if a.is_mem() && b.is_mem() && a.proxy != b.proxy {
            return format!(
                "{} and {} use different proxies ({} and {})",
                self.q(x),
                self.q(y),
                a.proxy,
                b.proxy
            );
        }
        format!(
            "{} and {} access different virtual addresses",
            self.q(x),
            self.q(y)
        )
    }
}

/// `.relaxed`, `.weak` … as written.
fn sem_word(s: Sem) -> &'static str {
    s.as_str()
}

fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
