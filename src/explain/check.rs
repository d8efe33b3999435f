//! A literal checker of the digest's §3 axioms for one fully chosen
//! candidate execution, written apart from the oracle's pruning search
//! (`ax::search`): every relation is computed by its definition, and a
//! rejection comes with the offending cycle as a list of basic edges
//! (program order, reads-from, coherence, from-read, the synchronisation
//! edges with the pattern that made them), so that it can be told in PTX
//! terms and drawn.
//!
//! The checks run in a fixed order and the first failure is reported:
//! No-Thin-Air (A4: values are only defined without it), Coherence (A1,
//! including "the outcome's final value is coherence-last"), Fence-SC (A2),
//! Atomicity (A3), SC-per-location (A5), Causality (A6), then the oracle's
//! own choice that base causality is acyclic (`docs/oracle.md` choice 1).

use std::collections::VecDeque;

use serde::Serialize;

use crate::ax::graph::{Graph, Kind};
use crate::ir::{LocId, Proxy};
use crate::rel::{Bits, Rel, bit, members};

/// The witnesses of one candidate execution of a skeleton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness<S: Bits> {
    /// Reads-from, indexed by event (`None` for events that are not reads).
    pub rf: Vec<Option<usize>>,
    /// Barrier synchronisation: arrive → wait edges of the completed instances.
    pub bar: Rel<S>,
    /// ISA reading: what the barrier phases order in time without
    /// synchronising (`ax::barriers::BarChoice::time`); base causality with
    /// it must stay acyclic.
    pub time: Rel<S>,
    /// The Fence-SC order (transitively closed).
    pub sc: Rel<S>,
    /// The chosen orientation of every morally strong pair of same-location
    /// writes (before closure with the causality edges of A1).
    pub orient: Rel<S>,
}

/// An axiom of the model, or the oracle's extra rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Axiom {
    /// A1: causality between writes of one location is part of coherence,
    /// which is an order (and the outcome's final writes are coherence-last).
    Coherence,
    /// A2: Fence-SC order agrees with base causality.
    FenceSc,
    /// A3: nothing morally strong falls between an RMW's read and write.
    Atomicity,
    /// A4: `rf ∪ dep` is acyclic.
    NoThinAir,
    /// A5: `(ms ∩ com) ∪ po_loc` is acyclic.
    ScPerLocation,
    /// A6: no read reads from a write it causally precedes, or from one
    /// coherence-before a write that causally precedes it.
    Causality,
    /// `docs/oracle.md` choice 1: base causality is acyclic.
    BaseCausality,
    /// A barrier instance never completes: no execution finishes.
    Deadlock,
}

impl Axiom {
    /// The name users read.
    pub fn name(self) -> &'static str {
        match self {
            Axiom::Coherence => "Coherence",
            Axiom::FenceSc => "Fence-SC",
            Axiom::Atomicity => "Atomicity",
            Axiom::NoThinAir => "No-Thin-Air",
            Axiom::ScPerLocation => "SC-per-location",
            Axiom::Causality => "Causality",
            Axiom::BaseCausality => "acyclic base causality",
            Axiom::Deadlock => "Deadlock",
        }
    }
    /// Where the rule is stated.
    pub fn source(self) -> &'static str {
        match self {
            Axiom::Coherence => "A1",
            Axiom::FenceSc => "A2",
            Axiom::Atomicity => "A3",
            Axiom::NoThinAir => "A4",
            Axiom::ScPerLocation => "A5",
            Axiom::Causality => "A6",
            Axiom::BaseCausality => "oracle choice 1",
            Axiom::Deadlock => "barriers",
        }
    }
}

/// The basic relation an edge of a witness cycle belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeRel {
    /// Program order.
    Po,
    /// Reads-from.
    Rf,
    /// Coherence order.
    Co,
    /// From-read.
    Fr,
    /// RMW pair (read half → write half).
    Rmw,
    /// Syntactic dependency.
    Dep,
    /// Fence-SC order.
    Sc,
    /// Barrier synchronisation (arrive → wait of one instance).
    Bar,
    /// An asynchronous operation's start or completion (signal → await).
    Async,
}

impl EdgeRel {
    /// Short name as drawn (`po`, `rf`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeRel::Po => "po",
            EdgeRel::Rf => "rf",
            EdgeRel::Co => "co",
            EdgeRel::Fr => "fr",
            EdgeRel::Rmw => "rmw",
            EdgeRel::Dep => "dep",
            EdgeRel::Sc => "sc",
            EdgeRel::Bar => "bar",
            EdgeRel::Async => "async",
        }
    }
}

/// Which synchronisation an edge is part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Sync {
    /// A release pattern observed by an acquire pattern (`sw_ra`) whose
    /// observed write is on this location; `head` and `tail` are the events
    /// that must be morally strong.
    ReleaseAcquire {
        /// The location of the observed write.
        loc: LocId,
        /// The release head.
        head: usize,
        /// The acquire tail.
        tail: usize,
    },
    /// The Fence-SC order.
    FenceSc,
    /// A barrier.
    Barrier,
    /// An asynchronous operation's issue or completion.
    Async,
}

/// One edge of a witness cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Edge {
    /// Source event.
    pub from: usize,
    /// Target event.
    pub to: usize,
    /// Its relation.
    pub rel: EdgeRel,
    /// The synchronisation it is part of, if any.
    pub sync: Option<Sync>,
}

impl Edge {
    fn new(from: usize, to: usize, rel: EdgeRel) -> Edge {
        Edge {
            from,
            to,
            rel,
            sync: None,
        }
    }
}

/// Why a candidate is inconsistent: the axiom and the edges that show it.
/// For every axiom but Atomicity and Deadlock the edges form a cycle; for
/// Atomicity they go from an RMW's read to its write through another write;
/// for a final value, from the final write to a write coherence-after it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Violation {
    /// The rule broken.
    pub axiom: Axiom,
    /// The edges, in order.
    pub edges: Vec<Edge>,
    /// For Coherence on a final value: the location whose final write is
    /// not coherence-last.
    pub final_loc: Option<LocId>,
}

/// Every relation of one candidate, computed by its definition.
pub struct Relations<'a, 'p, S: Bits> {
    g: &'a Graph<'p, S>,
    w: &'a Witness<S>,
    /// The orientations `co` is built from (see [`Relations::set_orient`]).
    orient: Rel<S>,
    /// Moral strength (§3.3).
    pub ms: Rel<S>,
    /// Program order between accesses to one virtual address.
    pub po_loc: Rel<S>,
    /// Reads-from as a relation write → read.
    pub rf: Rel<S>,
    /// Observation (§3.4).
    pub obs: Rel<S>,
    /// Release patterns (head, strong write).
    pub rp: Rel<S>,
    /// Acquire patterns (strong read, tail).
    pub ap: Rel<S>,
    /// Release/acquire synchronisation.
    pub sw_ra: Rel<S>,
    /// Base causality (closed), every synchronisation included.
    pub cb: Rel<S>,
    /// Base causality (closed) per signature of origins (restricted releases).
    cb_sig: Vec<Rel<S>>,
    /// The synchronisation edges each signature may use (`sw_ra` rows of
    /// restricted heads that do not publish that origin are removed).
    sw_sig: Vec<Rel<S>>,
    sig_of: Vec<usize>,
    /// Proxy-preserved base causality, with the proxy fences each pair goes through.
    pub ppcb: Rel<S>,
    ppcb_via: Vec<(usize, usize, [Option<usize>; 3])>,
    /// Causality order.
    pub cause: Rel<S>,
    /// Coherence (closed): initial writes first, the orientations, A1's causality edges.
    pub co: Rel<S>,
    /// From-read.
    pub fr: Rel<S>,
}

/// The parts of the relations that do not depend on the witnesses.
pub struct Static<S: Bits> {
    /// Moral strength (§3.3).
    pub ms: Rel<S>,
    /// Program order between accesses to one virtual address.
    pub po_loc: Rel<S>,
    /// Release patterns (head, strong write), §3.4.
    pub rp: Rel<S>,
    /// Morally strong pairs of `fence.sc`, each once.
    pub sc_pairs: Vec<(usize, usize)>,
    /// Morally strong pairs of same-location writes (initial writes apart), each once.
    pub write_pairs: Vec<(usize, usize)>,
}

impl<S: Bits> Static<S> {
    /// Compute the static relations of `g`.
    pub fn new(g: &Graph<'_, S>) -> Static<S> {
        let n = g.len();
        let ev = &g.events;
        // Moral strength, §3.3, with the initial write morally strong with
        // every access to its location.
        let mut ms = Rel::empty(n);
        for i in 0..n {
            for j in 0..n {
                if i != j && morally_strong(g, i, j) {
                    ms.add(i, j);
                }
            }
        }
        let mut po_loc = Rel::empty(n);
        for (i, j) in g.po.pairs() {
            if ev[i].is_mem() && ev[j].is_mem() && ev[i].va == ev[j].va {
                po_loc.add(i, j);
            }
        }
        // Release patterns: [Wrel] ∪ [Wrel];po_loc;[Ws] ∪ [Frel];po;[Ws].
        let wrel = |e: usize| ev[e].kind == Kind::Write && ev[e].sem.is_release();
        let frel = |e: usize| matches!(ev[e].kind, Kind::Fence(f) if f.releases());
        let ws =
            |e: usize| ev[e].kind == Kind::Write && ev[e].is_strong() && ev[e].thread.is_some();
        let mut rp = Rel::empty(n);
        for h in 0..n {
            if wrel(h) {
                rp.add(h, h);
            }
            for x in 0..n {
                if ws(x) && ((wrel(h) && po_loc.has(h, x)) || (frel(h) && g.po.has(h, x))) {
                    rp.add(h, x);
                }
            }
        }
        let mut sc_pairs = Vec::new();
        for a in members(g.fence_sc) {
            for b in members(g.fence_sc) {
                if a < b && ms.has(a, b) {
                    sc_pairs.push((a, b));
                }
            }
        }
        let mut write_pairs = Vec::new();
        for &wsl in &g.writes_of {
            for a in members(wsl & !g.inits) {
                for b in members(wsl & !g.inits) {
                    if a < b && ms.has(a, b) {
                        write_pairs.push((a, b));
                    }
                }
            }
        }
        Static {
            ms,
            po_loc,
            rp,
            sc_pairs,
            write_pairs,
        }
    }
}

impl<'a, 'p, S: Bits> Relations<'a, 'p, S> {
    /// Compute every relation of candidate `w` of skeleton `g` (whose
    /// static relations are `st`). Values (which mbarrier waits succeed)
    /// use the reads-from of `w`.
    pub fn new(g: &'a Graph<'p, S>, st: &Static<S>, w: &'a Witness<S>) -> Self {
        let n = g.len();
        let ev = &g.events;
        let ms = st.ms.clone();
        let po_loc = st.po_loc.clone();
        let rp = st.rp.clone();
        let mut rf = Rel::empty(n);
        for (r, src) in w.rf.iter().enumerate() {
            if let Some(s) = src {
                rf.add(*s, r);
            }
        }
        // obs = (ms ∩ rf) ; (rmw ; (ms ∩ rf))*
        let msrf = ms.intersect(&rf);
        let mut obs = msrf.clone();
        let mut frontier = msrf.clone();
        loop {
            let next = frontier.compose(&g.rmw).compose(&msrf);
            let mut grown = obs.clone();
            grown.union_with(&next);
            if grown == obs {
                break;
            }
            obs = grown;
            frontier = next;
        }
        // Acquire patterns: [Racq] ∪ [Rs\red];po_loc;[Racq] ∪ [Rs\red];po;[Facq].
        // An mbarrier wait is an acquire read only if it succeeds.
        let succeeded = |c: usize| {
            g.cond_reads
                .iter()
                .find(|(e, _)| *e == c)
                .is_none_or(|(_, done)| {
                    let t = ev[c].thread.unwrap();
                    g.eval(&w.rf, t, done).is_some_and(|v| v != 0)
                })
        };
        let racq = |e: usize| {
            ev[e].kind == Kind::Read && ev[e].sem.is_acquire() && !ev[e].red && succeeded(e)
        };
        let rs = |e: usize| ev[e].kind == Kind::Read && ev[e].is_strong() && !ev[e].red;
        let facq = |e: usize| matches!(ev[e].kind, Kind::Fence(f) if f.acquires());
        let mut ap = Rel::empty(n);
        for r in 0..n {
            if racq(r) {
                ap.add(r, r);
            }
            if !rs(r) {
                continue;
            }
            for t in 0..n {
                if (racq(t) && po_loc.has(r, t)) || (facq(t) && g.po.has(r, t)) {
                    ap.add(r, t);
                }
            }
        }
        let sw_ra = rp.compose(&obs).compose(&ap).intersect(&ms);
        // The synchronisation that is not release/acquire.
        let mut other_sw = w.sc.clone();
        other_sw.union_with(&w.bar);
        other_sw.union_with(&g.await_edges);
        let closure_of = |sw: &Rel<S>| {
            let mut c = g.po.clone();
            c.union_with(sw);
            c.union_with(&other_sw);
            c.close();
            c
        };
        let cb = closure_of(&sw_ra);
        // Signatures: which restricted, synchronising heads publish an origin.
        let heads: Vec<(usize, S)> = g
            .restricted
            .iter()
            .filter(|(h, _)| !sw_ra.row(*h).is_empty())
            .copied()
            .collect();
        let mut sigs: Vec<u64> = Vec::new();
        let mut cb_sig = Vec::new();
        let mut sw_sig = Vec::new();
        let mut sig_of = vec![0; n];
        for (x, slot) in sig_of.iter_mut().enumerate() {
            let sig = heads.iter().enumerate().fold(
                0u64,
                |s, (k, (_, m))| {
                    if m.has(x) { s | 1 << k } else { s }
                },
            );
            *slot = match sigs.iter().position(|&s| s == sig) {
                Some(i) => i,
                None => {
                    let mut sw = sw_ra.clone();
                    for (k, (h, _)) in heads.iter().enumerate() {
                        if sig & (1 << k) == 0 {
                            sw.set_row(*h, S::EMPTY);
                        }
                    }
                    cb_sig.push(closure_of(&sw));
                    sw_sig.push(sw);
                    sigs.push(sig);
                    sigs.len() - 1
                }
            };
        }
        let mut rels = Relations {
            g,
            w,
            orient: w.orient.clone(),
            ms,
            po_loc,
            rf,
            obs,
            rp,
            ap,
            sw_ra,
            cb,
            cb_sig,
            sw_sig,
            sig_of,
            ppcb: Rel::empty(n),
            ppcb_via: Vec::new(),
            cause: Rel::empty(n),
            co: Rel::empty(n),
            fr: Rel::empty(n),
        };
        rels.proxy_preserved();
        let mut cause = rels.obs.compose(&rels.ppcb);
        cause.union_with(&rels.ppcb);
        rels.cause = cause;
        rels.set_orient(&w.orient);
        rels
    }

    /// Rebuild coherence and from-read from `orient` (orientations of
    /// morally strong write pairs): the initial write first, the
    /// orientations, and A1's causality edges between writes of one location.
    pub fn set_orient(&mut self, orient: &Rel<S>) {
        let g = self.g;
        let mut co = orient.clone();
        for &wsl in &g.writes_of {
            for a in members(wsl) {
                if g.inits.has(a) {
                    for b in members(wsl & !S::bit(a)) {
                        co.add(a, b);
                    }
                }
                for b in members(wsl & self.cause.row(a)) {
                    co.add(a, b);
                }
            }
        }
        co.close();
        self.fr = self.rf.inverse().compose(&co);
        self.co = co;
        self.orient = orient.clone();
    }

    /// The signature-specific base causality of origin `x`.
    fn cb_of(&self, x: usize) -> &Rel<S> {
        &self.cb_sig[self.sig_of[x]]
    }

    /// `ppcb` by the nine clauses of §3.5 (MPX's general rule), each pair
    /// with the source-side, alias and destination-side fences it goes through.
    fn proxy_preserved(&mut self) {
        let g = self.g;
        let ev = &g.events;
        let n = g.len();
        let same_cta = |a: usize, b: usize| {
            ev[a].thread.is_some() && ev[b].thread.is_some() && g.cta(a) == g.cta(b)
        };
        // Proxy fences that may stand for a non-generic access on its side.
        let fence_for = |x: usize, source: bool| -> S {
            let e = &ev[x];
            (0..n).fold(S::EMPTY, |acc, f| match g.proxy_role[f] {
                Some(role)
                    if role.proxy == Some(e.proxy)
                        && same_cta(x, f)
                        && role.space.contains(g.program, e.loc)
                        && (!source || role.source_side) =>
                {
                    acc | bit(f)
                }
                _ => acc,
            })
        };
        let mut ppcb = Rel::empty(n);
        let mut via = Vec::new();
        for x in 0..n {
            let a = &ev[x];
            if !a.is_mem() || a.thread.is_none() {
                continue;
            }
            let c = self.cb_of(x);
            let src: S = if a.proxy == Proxy::Generic {
                bit(x)
            } else {
                c.row(x) & fence_for(x, true)
            };
            for y in members(c.row(x)) {
                let b = &ev[y];
                if !b.is_mem() || b.loc != a.loc {
                    continue;
                }
                let dst: S = if b.proxy == Proxy::Generic {
                    bit(y)
                } else {
                    members(fence_for(y, false))
                        .filter(|&d| c.has(d, y))
                        .fold(S::EMPTY, |acc, d| acc | bit(d))
                };
                let fences = if a.va == b.va {
                    if (a.proxy == Proxy::Generic && b.proxy == Proxy::Generic)
                        || (a.proxy == b.proxy && same_cta(x, y))
                    {
                        Some([None, None, None])
                    } else {
                        members(src).find_map(|s| {
                            members(dst)
                                .find(|&d| c.has(s, d))
                                .map(|d| [(s != x).then_some(s), None, (d != y).then_some(d)])
                        })
                    }
                } else {
                    members(src).find_map(|s| {
                        members(c.row(s) & g.alias_fences).find_map(|al| {
                            members(dst)
                                .find(|&d| c.has(al, d))
                                .map(|d| [(s != x).then_some(s), Some(al), (d != y).then_some(d)])
                        })
                    })
                };
                if let Some(f) = fences {
                    ppcb.add(x, y);
                    via.push((x, y, f));
                }
            }
        }
        self.ppcb = ppcb;
        self.ppcb_via = via;
    }

    // ---- the checks -------------------------------------------------------

    /// The first axiom the candidate violates, with its witness; `finals`
    /// names, per location, a write the outcome needs to be coherence-last.
    /// Order: No-Thin-Air, Fence-SC, then per location Coherence,
    /// Atomicity, SC-per-location and Causality, then acyclic base causality.
    pub fn first_violation(&self, finals: &[(LocId, usize)]) -> Option<Violation> {
        self.independent_violation(true)
            .or_else(|| {
                (0..self.g.writes_of.len()).find_map(|l| {
                    let f = finals.iter().find(|(fl, _)| *fl == l).map(|&(_, w)| w);
                    self.location_violation(l, f)
                })
            })
            .or_else(|| self.base_causality())
    }

    /// The checks that do not depend on coherence: No-Thin-Air, and
    /// Fence-SC when the Fence-SC order is chosen (`with_sc`).
    pub fn independent_violation(&self, with_sc: bool) -> Option<Violation> {
        self.no_thin_air()
            .or_else(|| if with_sc { self.fence_sc() } else { None })
    }

    /// The checks of one location, which depend only on its own coherence
    /// order: Coherence (with `last`, a write the outcome needs
    /// coherence-last), Atomicity, SC-per-location, Causality.
    pub fn location_violation(&self, l: LocId, last: Option<usize>) -> Option<Violation> {
        self.coherence(l, last)
            .or_else(|| self.atomicity(l))
            .or_else(|| self.sc_per_location(l))
            .or_else(|| self.causality(l))
    }

    /// `acyclic(cb)` (the oracle's choice 1).
    pub fn base_causality_violation(&self) -> Option<Violation> {
        self.base_causality()
    }

    fn violation(axiom: Axiom, edges: Vec<Edge>) -> Violation {
        Violation {
            axiom,
            edges,
            final_loc: None,
        }
    }

    /// A4: `rf ∪ dep` acyclic.
    fn no_thin_air(&self) -> Option<Violation> {
        let mut basic = Vec::new();
        for (a, b) in self.rf.pairs() {
            basic.push(Edge::new(a, b, EdgeRel::Rf));
        }
        for (a, b) in self.g.dep.pairs() {
            basic.push(Edge::new(a, b, EdgeRel::Dep));
        }
        find_cycle(self.g.len(), &basic).map(|c| Self::violation(Axiom::NoThinAir, c))
    }

    /// A1: coherence (with causality edges) is an order, and each write the
    /// outcome needs last is coherence-maximal.
    fn coherence(&self, l: LocId, last: Option<usize>) -> Option<Violation> {
        let g = self.g;
        let here = g.writes_of[l];
        if members(here).any(|x| self.co.has(x, x)) {
            let co_basic: Vec<Step> = self
                .co_basic_edges()
                .into_iter()
                .filter(|s| here.has(s.ends().0))
                .collect();
            let cyc = find_cycle(g.len(), &co_basic).expect("a cyclic closure has a cycle");
            return Some(Self::violation(Axiom::Coherence, self.expand_all(cyc)));
        }
        if let Some(f) = last {
            let co_basic = self.co_basic_edges();
            let after = self.co.row(f) & here;
            if let Some(later) = members(after).next() {
                let path = find_path(g.len(), &co_basic, f, later).expect("co is a closure");
                return Some(Violation {
                    axiom: Axiom::Coherence,
                    edges: self.expand_all(path),
                    final_loc: Some(l),
                });
            }
        }
        None
    }

    /// The generating edges of `co`: initial writes first, the orientations,
    /// and causality pairs (expanded later by [`Self::expand_all`]).
    fn co_basic_edges(&self) -> Vec<Step> {
        let g = self.g;
        let mut out = Vec::new();
        for (a, b) in self.orient.pairs() {
            out.push(Step::Basic(Edge::new(a, b, EdgeRel::Co)));
        }
        for &wsl in &g.writes_of {
            for a in members(wsl) {
                if g.inits.has(a) {
                    for b in members(wsl & !S::bit(a)) {
                        out.push(Step::Basic(Edge::new(a, b, EdgeRel::Co)));
                    }
                }
                for b in members(wsl & self.cause.row(a)) {
                    out.push(Step::Cause(a, b));
                }
            }
        }
        out
    }

    /// Replace causality placeholders by their paths.
    fn expand_all(&self, steps: Vec<Step>) -> Vec<Edge> {
        let mut out = Vec::new();
        for s in steps {
            match s {
                Step::Basic(e) => out.push(e),
                Step::Cause(a, b) => out.extend(self.cause_path(a, b)),
                Step::Sw(a, b) => out.extend(self.sw_ra_path(a, b)),
            }
        }
        out
    }

    /// A2: morally strong `fence.sc` pairs ordered by base causality are
    /// ordered the same way by Fence-SC.
    fn fence_sc(&self) -> Option<Violation> {
        let g = self.g;
        for a in members(g.fence_sc) {
            for b in members(g.fence_sc) {
                if a != b && self.ms.has(a, b) && self.cb.has(a, b) && !self.w.sc.has(a, b) {
                    let mut edges = self.cb_path_full(a, b);
                    edges.push(Edge {
                        sync: Some(Sync::FenceSc),
                        ..Edge::new(b, a, EdgeRel::Sc)
                    });
                    return Some(Self::violation(Axiom::FenceSc, edges));
                }
            }
        }
        None
    }

    /// A3: `rmw ∩ ((ms ∩ fr) ; (ms ∩ co)) = ∅`.
    fn atomicity(&self, l: LocId) -> Option<Violation> {
        for (r, w) in self.g.rmw.pairs() {
            if self.g.events[r].loc != l {
                continue;
            }
            for w2 in members(self.fr.row(r) & self.ms.row(r)) {
                if self.co.has(w2, w) && self.ms.has(w2, w) {
                    return Some(Self::violation(
                        Axiom::Atomicity,
                        vec![Edge::new(r, w2, EdgeRel::Fr), Edge::new(w2, w, EdgeRel::Co)],
                    ));
                }
            }
        }
        None
    }

    /// A5: `(ms ∩ com) ∪ po_loc` acyclic.
    fn sc_per_location(&self, l: LocId) -> Option<Violation> {
        let ev = &self.g.events;
        let on_l = |a: usize| ev[a].is_mem() && ev[a].loc == l;
        let mut basic = Vec::new();
        for (rel, r) in [
            (EdgeRel::Rf, &self.rf),
            (EdgeRel::Co, &self.co),
            (EdgeRel::Fr, &self.fr),
        ] {
            for (a, b) in r.intersect(&self.ms).pairs() {
                if on_l(a) {
                    basic.push(Edge::new(a, b, rel));
                }
            }
        }
        for (a, b) in self.po_loc.pairs() {
            if on_l(a) {
                basic.push(Edge::new(a, b, EdgeRel::Po));
            }
        }
        find_cycle(self.g.len(), &basic).map(|c| Self::violation(Axiom::ScPerLocation, c))
    }

    /// A6: `irreflexive((rf ∪ fr) ; cause)`.
    fn causality(&self, l: LocId) -> Option<Violation> {
        for &r in &self.g.reads {
            if self.g.events[r].loc != l {
                continue;
            }
            let Some(w) = self.w.rf[r] else { continue };
            if self.cause.has(r, w) {
                let mut edges = vec![Edge::new(w, r, EdgeRel::Rf)];
                edges.extend(self.cause_path(r, w));
                return Some(Self::violation(Axiom::Causality, edges));
            }
            for w2 in members(self.fr.row(r)) {
                if self.cause.has(w2, r) {
                    let mut edges = vec![Edge::new(r, w2, EdgeRel::Fr)];
                    edges.extend(self.cause_path(w2, r));
                    return Some(Self::violation(Axiom::Causality, edges));
                }
            }
        }
        None
    }

    /// `acyclic(cb)`.
    fn base_causality(&self) -> Option<Violation> {
        if self.cb.closed_is_acyclic() {
            // The barrier phases must also fit an order in time that extends
            // base causality.
            let mut c = self.cb.clone();
            c.union_with(&self.w.time);
            if c.has_cycle() {
                return Some(Self::violation(Axiom::Deadlock, Vec::new()));
            }
            return None;
        }
        let x = (0..self.g.len()).find(|&x| self.cb.has(x, x)).unwrap();
        let edges = self.sync_path(&self.sw_ra, x, x);
        Some(Self::violation(Axiom::BaseCausality, edges))
    }

    // ---- witnesses ----------------------------------------------------------

    /// A path of basic edges showing `(x, y) ∈ cause`.
    pub fn cause_path(&self, x: usize, y: usize) -> Vec<Edge> {
        if self.ppcb.has(x, y) {
            return self.ppcb_path(x, y);
        }
        for z in members(self.obs.row(x)) {
            if self.ppcb.has(z, y) {
                let mut p = self.obs_path(x, z);
                p.extend(self.ppcb_path(z, y));
                return p;
            }
        }
        unreachable!("cause_path on a pair outside cause")
    }

    /// `(x, y) ∈ ppcb`: base-causality paths through the fences of its clause,
    /// all in the base causality of `x`'s signature.
    fn ppcb_path(&self, x: usize, y: usize) -> Vec<Edge> {
        let (_, _, fences) = self
            .ppcb_via
            .iter()
            .find(|(a, b, _)| *a == x && *b == y)
            .expect("a ppcb pair has its clause");
        let sw = &self.sw_sig[self.sig_of[x]];
        let mut stops = vec![x];
        stops.extend(fences.iter().flatten());
        stops.push(y);
        let mut out = Vec::new();
        for pair in stops.windows(2) {
            out.extend(self.sync_path(sw, pair[0], pair[1]));
        }
        out
    }

    /// A path showing `(a, b) ∈ cb` with every synchronisation edge.
    fn cb_path_full(&self, a: usize, b: usize) -> Vec<Edge> {
        self.sync_path(&self.sw_ra, a, b)
    }

    /// A shortest path from `a` to `b` (one step at least) in
    /// `po ∪ sw_ra ∪ sc ∪ bar ∪ await`, release/acquire steps expanded into
    /// their pattern (po to the released write, the observation, po to the tail).
    fn sync_path(&self, sw_ra: &Rel<S>, a: usize, b: usize) -> Vec<Edge> {
        let g = self.g;
        let mut steps = Vec::new();
        let tagged = |x, y, rel, sync| {
            Step::Basic(Edge {
                sync: Some(sync),
                ..Edge::new(x, y, rel)
            })
        };
        for (x, y) in g.po.pairs() {
            steps.push(Step::Basic(Edge::new(x, y, EdgeRel::Po)));
        }
        for (x, y) in self.w.sc.pairs() {
            steps.push(tagged(x, y, EdgeRel::Sc, Sync::FenceSc));
        }
        for (x, y) in self.w.bar.pairs() {
            steps.push(tagged(x, y, EdgeRel::Bar, Sync::Barrier));
        }
        for (x, y) in g.await_edges.pairs() {
            steps.push(tagged(x, y, EdgeRel::Async, Sync::Async));
        }
        for (x, y) in sw_ra.pairs() {
            steps.push(Step::Sw(x, y));
        }
        let path = find_path(g.len(), &steps, a, b).expect("the pair is in base causality");
        merge_po(self.expand_all(path))
    }

    /// `(h, t) ∈ sw_ra`: head —po→ released write —obs→ pattern read —po→ tail.
    fn sw_ra_path(&self, h: usize, t: usize) -> Vec<Edge> {
        for w in members(self.rp.row(h)) {
            for r in members(self.obs.row(w)) {
                if self.ap.has(r, t) {
                    let sync = Some(Sync::ReleaseAcquire {
                        loc: self.g.events[w].loc,
                        head: h,
                        tail: t,
                    });
                    let mut out = Vec::new();
                    if w != h {
                        out.push(Edge::new(h, w, EdgeRel::Po));
                    }
                    out.extend(self.obs_path(w, r));
                    if r != t {
                        out.push(Edge::new(r, t, EdgeRel::Po));
                    }
                    for e in &mut out {
                        e.sync = sync;
                    }
                    return out;
                }
            }
        }
        unreachable!("sw_ra_path on a pair outside sw_ra")
    }

    /// `(w, r) ∈ obs`: morally strong reads-from, through RMWs.
    fn obs_path(&self, w: usize, r: usize) -> Vec<Edge> {
        let mut basic = Vec::new();
        for (a, b) in self.ms.intersect(&self.rf).pairs() {
            basic.push(Edge::new(a, b, EdgeRel::Rf));
        }
        for (a, b) in self.g.rmw.pairs() {
            basic.push(Edge::new(a, b, EdgeRel::Rmw));
        }
        find_path(self.g.len(), &basic, w, r).expect("the pair is observed")
    }
}

/// An edge of a search graph: a basic edge, or a pair that stands for a
/// longer path (expanded once the search has chosen it).
#[derive(Clone, Copy, Debug)]
enum Step {
    Basic(Edge),
    /// `(a, b) ∈ cause`.
    Cause(usize, usize),
    /// `(a, b) ∈ sw_ra`.
    Sw(usize, usize),
}

impl Link for Step {
    fn ends(&self) -> (usize, usize) {
        match *self {
            Step::Basic(e) => (e.from, e.to),
            Step::Cause(a, b) | Step::Sw(a, b) => (a, b),
        }
    }
}

impl Link for Edge {
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
}

/// Something with a source and a target event.
pub trait Link: Copy {
    /// (source, target).
    fn ends(&self) -> (usize, usize);
}

/// Consecutive program-order steps of one path are one program-order edge
/// (po is transitive), unless they belong to different synchronisations.
fn merge_po(edges: Vec<Edge>) -> Vec<Edge> {
    let mut out: Vec<Edge> = Vec::new();
    for e in edges {
        if let Some(last) = out.last_mut() {
            if last.rel == EdgeRel::Po && e.rel == EdgeRel::Po && last.sync == e.sync {
                last.to = e.to;
                continue;
            }
        }
        out.push(e);
    }
    out
}

/// Moral strength of two distinct events, §3.3 read literally.
fn morally_strong<S: Bits>(g: &Graph<'_, S>, i: usize, j: usize) -> bool {
    let (a, b) = (&g.events[i], &g.events[j]);
    if a.thread.is_none() || b.thread.is_none() {
        return a.is_mem() && b.is_mem() && a.loc == b.loc;
    }
    let takes_part = |k: Kind| matches!(k, Kind::Read | Kind::Write | Kind::Fence(_));
    if !takes_part(a.kind) || !takes_part(b.kind) {
        return false;
    }
    let includes = |x: &crate::ax::graph::Event, y: &crate::ax::graph::Event| {
        x.scope
            .is_some_and(|s| x.placement.includes(s, &y.placement))
    };
    let threads = a.thread == b.thread
        || (a.is_strong() && b.is_strong() && includes(a, b) && includes(b, a));
    let proxies = a.proxy == b.proxy;
    let overlap = !(a.is_mem() && b.is_mem()) || a.va == b.va;
    threads && proxies && overlap
}

/// A shortest path (one edge at least) from `a` to `b` over `edges`.
pub fn find_path<L: Link>(n: usize, edges: &[L], a: usize, b: usize) -> Option<Vec<L>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, e) in edges.iter().enumerate() {
        out[e.ends().0].push(k);
    }
    // BFS over nodes; the start is re-entered only as the target.
    let mut prev: Vec<Option<usize>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut queue = VecDeque::new();
    for &k in &out[a] {
        let t = edges[k].ends().1;
        if !seen[t] {
            seen[t] = true;
            prev[t] = Some(k);
            queue.push_back(t);
        }
    }
    while let Some(x) = queue.pop_front() {
        if x == b {
            let mut path = Vec::new();
            let mut cur = b;
            loop {
                let k = prev[cur].unwrap();
                path.push(edges[k]);
                cur = edges[k].ends().0;
                if cur == a {
                    break;
                }
            }
            path.reverse();
            return Some(path);
        }
        for &k in &out[x] {
            let t = edges[k].ends().1;
            if !seen[t] {
                seen[t] = true;
                prev[t] = Some(k);
                queue.push_back(t);
            }
        }
    }
    None
}

/// A shortest cycle through the smallest event that lies on one.
pub fn find_cycle<L: Link>(n: usize, edges: &[L]) -> Option<Vec<L>> {
    let mut best: Option<Vec<L>> = None;
    for x in 0..n {
        if let Some(c) = find_path(n, edges, x, x) {
            if best.as_ref().is_none_or(|b| c.len() < b.len()) {
                best = Some(c);
            }
        }
    }
    best
}
