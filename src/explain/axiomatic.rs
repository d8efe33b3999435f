//! The axiomatic explanation of an outcome: a witness execution when the
//! model allows it; otherwise every candidate execution that would give it,
//! grouped by what the outcome's reads read from, each group with the axiom
//! that rejects it and the offending cycle in PTX terms, and one sentence
//! that sums it up.

use serde::Serialize;

use crate::ax::graph::Kind;
use crate::ir::{Program, Prop, Term};
use crate::litmus::print;
use crate::model::lower;
use crate::rel::{Bits, Rel, members};

use super::check::{Axiom, Edge, EdgeRel, Relations, Sync, Violation, Witness};
use super::enumerate::{self, Candidate, Filter, Limits, Verdict, Visit};
use super::missing::{self, Missing};
use super::words::{Positions, Words, letter};

/// How many groups an explanation lists, and how many reasons per group.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    /// Groups listed (the others are counted).
    pub groups: usize,
    /// Distinct reasons listed per group.
    pub reasons: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            groups: 8,
            reasons: 3,
        }
    }
}

/// The axiomatic explanation of one outcome.
#[derive(Clone, Debug, Serialize)]
pub struct AxExplanation {
    /// The outcome, as printed.
    pub outcome: String,
    /// What the axioms say.
    pub verdict: AxVerdict,
    /// Candidate executions examined.
    pub candidates: u64,
    /// Some path was cut at the loop bound: longer executions were not examined.
    pub bound_hit: bool,
}

/// Allowed with a witness, forbidden with the reasons, or incomplete.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum AxVerdict {
    /// Some consistent execution gives the outcome.
    Allowed {
        /// One such execution (a sequentially consistent one when the
        /// enumeration meets one).
        witness: Execution,
        /// What the witness misses: the pairs a programmer expected
        /// ordered and, per pair, the links that are absent.
        missing: Missing,
    },
    /// Every candidate that would give the outcome breaks an axiom.
    Forbidden {
        /// The groups listed.
        groups: Vec<Group>,
        /// How many groups there are in all.
        total_groups: usize,
        /// One sentence.
        summary: String,
    },
    /// A limit stopped the enumeration; what was seen so far.
    Incomplete {
        /// Which limit.
        reason: String,
        /// The groups rejected so far.
        groups: Vec<Group>,
        /// How many groups so far.
        total_groups: usize,
    },
}

/// Candidates that read the same way where the outcome looks.
#[derive(Clone, Debug, Serialize)]
pub struct Group {
    /// What each read the outcome depends on reads from.
    pub reads: Vec<String>,
    /// How many candidates (or rejected choices of reads-from) it holds.
    pub candidates: u64,
    /// The distinct reasons, in the order met (at most the cap).
    pub reasons: Vec<Reason>,
    /// Distinct reasons beyond the cap.
    pub more_reasons: usize,
    /// One candidate of the group, with the first reason's cycle.
    pub picture: Execution,
}

/// One reason a candidate is rejected.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reason {
    /// The axiom.
    pub axiom: Axiom,
    /// Where it is stated (`A6`, `oracle choice 1`).
    pub rule: &'static str,
    /// The axiom's name and the offending cycle in PTX terms.
    pub text: String,
    /// What the synchronisation on the cycle is (`the release/acquire pair on f`).
    pub through: Vec<String>,
}

/// An execution (or a rejected candidate) as events and edges, for text and pictures.
#[derive(Clone, Debug, Serialize)]
pub struct Execution {
    /// The events.
    pub events: Vec<EventNode>,
    /// The edges drawn: po (consecutive), rf, co (consecutive), fr, rmw and
    /// the synchronisation edges, with those on the violated cycle marked.
    pub edges: Vec<ExecEdge>,
    /// The axiom the marked cycle violates, if any.
    pub violated: Option<Axiom>,
}

/// An event of an [`Execution`].
#[derive(Clone, Debug, Serialize)]
pub struct EventNode {
    /// Index in the execution's skeleton.
    pub id: usize,
    /// herd's letter (`a`, `b`, …).
    pub name: String,
    /// The thread (`P0`, `P0.async@1`); none for an initial write.
    pub thread: Option<String>,
    /// The thread's index in the lowered program.
    pub thread_index: Option<usize>,
    /// (gpu, cluster, cta) where it is performed.
    pub placement: Option<(u32, u32, u32)>,
    /// In PTX terms (`st.release.gpu f=1`).
    pub text: String,
    /// In herd's terms (`W.rel.gpu f=1`).
    pub herd: String,
    /// A non-generic proxy, if the access uses one.
    pub proxy: Option<String>,
}

/// An edge of an [`Execution`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExecEdge {
    /// Source event id.
    pub from: usize,
    /// Target event id.
    pub to: usize,
    /// `po`, `rf`, `co`, `fr`, `rmw`, `dep`, `sw`, `sc`, `bar`, `async`.
    pub rel: &'static str,
    /// On the violated cycle.
    pub cycle: bool,
}

/// What [`explain`] keeps of the candidates it is shown: the first
/// consistent one, and the rejected ones grouped by how they read.
struct Collect<'a> {
    source: &'a Program,
    positions: &'a Positions,
    prop: &'a Prop,
    witness: Option<(Execution, Missing)>,
    /// Candidates seen since the first witness, looking for a sequentially
    /// consistent one.
    after_witness: u64,
    groups: Vec<(Vec<Option<usize>>, usize, Group)>,
    /// Per group, the texts of the distinct reasons seen (all of them).
    seen: Vec<std::collections::HashSet<String>>,
    /// Per group, every distinct reason, ranked at the end.
    all_reasons: Vec<Vec<Reason>>,
}

/// How many candidates the enumeration goes on with after the first
/// witness, looking for one that is sequentially consistent.
const SC_SEARCH: u64 = 20_000;

impl Visit for Collect<'_> {
    fn visit<S: Bits>(&mut self, c: &Candidate<'_, '_, '_, S>) -> bool {
        let words = Words {
            source: self.source,
            graph: c.graph,
            positions: self.positions,
        };
        if self.witness.is_some() {
            self.after_witness += 1;
        }
        match &c.verdict {
            Verdict::Consistent => {
                let rels = c.relations.unwrap();
                let sc = missing::sequentially_consistent(&words, c.witness, rels, c.finals);
                if self.witness.is_none() || sc {
                    let m = missing::analyse(
                        &words,
                        c.witness,
                        rels,
                        &outcome_reads(c, self.prop),
                        c.finals,
                    );
                    self.witness = Some((execution(&words, c.witness, rels, None), m));
                }
                // A sequentially consistent witness ends the search; else
                // look a while for one (an interleaving that gives the
                // outcome is the better explanation: nothing is missing).
                !sc && self.after_witness < SC_SEARCH
            }
            Verdict::Rejected(_) if self.witness.is_some() => self.after_witness < SC_SEARCH,
            Verdict::Rejected(vs) => {
                let key = group_key(c, self.prop);
                let pos = self
                    .groups
                    .iter()
                    .position(|(k, combo, _)| *k == key && *combo == c.combo);
                let gi = match pos {
                    Some(i) => i,
                    None => {
                        let rels_owned;
                        let rels = match c.relations {
                            Some(r) => r,
                            None => {
                                rels_owned = Relations::new(
                                    c.graph,
                                    &super::check::Static::new(c.graph),
                                    c.witness,
                                );
                                &rels_owned
                            }
                        };
                        let picture = execution(&words, c.witness, rels, best(&words, c, vs));
                        self.seen.push(Default::default());
                        self.all_reasons.push(Vec::new());
                        self.groups.push((
                            key.clone(),
                            c.combo,
                            Group {
                                reads: describe_reads(&words, c, self.prop),
                                candidates: 0,
                                reasons: Vec::new(),
                                more_reasons: 0,
                                picture,
                            },
                        ));
                        self.groups.len() - 1
                    }
                };
                self.groups[gi].2.candidates += 1;
                let before = self.all_reasons[gi].iter().map(|r| r.rank()).min();
                for v in vs {
                    let r = reason(&words, &c.witness.rf, v);
                    if self.seen[gi].insert(r.text.clone()) {
                        self.all_reasons[gi].push(r);
                    }
                }
                let after = self.all_reasons[gi].iter().map(|r| r.rank()).min();
                if after < before {
                    // The group's picture shows its principal reason.
                    let rels_owned;
                    let rels = match c.relations {
                        Some(r) => r,
                        None => {
                            rels_owned = Relations::new(
                                c.graph,
                                &super::check::Static::new(c.graph),
                                c.witness,
                            );
                            &rels_owned
                        }
                    };
                    self.groups[gi].2.picture =
                        execution(&words, c.witness, rels, best(&words, c, vs));
                }
                true
            }
        }
    }
}

/// Explain why `prop` is allowed or forbidden for `source` (the test as
/// written), by the axioms.
pub fn explain(source: &Program, prop: &Prop, limits: &Limits, caps: Caps) -> AxExplanation {
    explain_at(source, &Positions::default(), prop, limits, caps)
}

/// [`explain`], naming instructions with where they are written
/// (`positions`) in the sentences about missing orderings.
pub fn explain_at(
    source: &Program,
    positions: &Positions,
    prop: &Prop,
    limits: &Limits,
    caps: Caps,
) -> AxExplanation {
    let lowered = lower::lower(source, limits.loop_bound);
    let mut collect = Collect {
        source,
        positions,
        prop,
        witness: None,
        after_witness: 0,
        groups: Vec::new(),
        seen: Vec::new(),
        all_reasons: Vec::new(),
    };
    let result = enumerate::enumerate(&lowered, Filter::Outcome(prop), limits, &mut collect);
    let Collect {
        witness,
        groups,
        all_reasons,
        ..
    } = collect;
    let outcome = print::prop(source, prop);
    let (candidates, bound_hit) = match &result {
        Ok(s) => (s.candidates, s.bound_hit),
        Err(_) => (limits.max_candidates, false),
    };
    let total_groups = groups.len();
    let mut all: Vec<Group> = groups
        .into_iter()
        .zip(all_reasons)
        .map(|((_, _, mut g), mut rs)| {
            // The synchronisation a programmer wrote first, then the order met.
            rs.sort_by_key(|r| r.rank());
            g.more_reasons = rs.len().saturating_sub(caps.reasons);
            rs.truncate(caps.reasons);
            g.reasons = rs;
            g
        })
        .collect();
    // Groups whose principal reason is such synchronisation first.
    all.sort_by_key(|g| g.rank());
    let summary = summarise(&all);
    let listed: Vec<Group> = all.into_iter().take(caps.groups).collect();
    let verdict = match (witness, result) {
        (Some((witness, missing)), _) => AxVerdict::Allowed { witness, missing },
        (None, Err(why)) => AxVerdict::Incomplete {
            reason: why.to_string(),
            groups: listed,
            total_groups,
        },
        (None, Ok(_)) => AxVerdict::Forbidden {
            groups: listed,
            total_groups,
            summary,
        },
    };
    AxExplanation {
        outcome,
        verdict,
        candidates,
        bound_hit,
    }
}

/// The reads the outcome depends on (through its registers), in event order.
fn outcome_reads<S: Bits>(c: &Candidate<'_, '_, '_, S>, prop: &Prop) -> Vec<usize> {
    let g = c.graph;
    let mut out = Vec::new();
    for t in prop.terms() {
        if let Term::Reg { thread, reg } = t {
            if let Some(e) = g.final_regs.get(thread).and_then(|r| r.get(reg)) {
                out.extend(e.reads().members().map(|i| g.offset[thread] + i));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn group_key<S: Bits>(c: &Candidate<'_, '_, '_, S>, prop: &Prop) -> Vec<Option<usize>> {
    outcome_reads(c, prop)
        .into_iter()
        .map(|r| c.witness.rf[r])
        .collect()
}

fn describe_reads<S: Bits>(
    words: &Words<'_, '_, S>,
    c: &Candidate<'_, '_, '_, S>,
    prop: &Prop,
) -> Vec<String> {
    let rf = &c.witness.rf;
    outcome_reads(c, prop)
        .into_iter()
        .map(|r| {
            let who = format!(
                "{} {}",
                words.thread(r).unwrap_or_default(),
                words.text(rf, r)
            );
            match rf[r] {
                Some(w) => format!("{who} reads from {}", words.full(rf, w)),
                None => format!("{who} (any write)"),
            }
        })
        .collect()
}

impl Reason {
    /// How principal a reason is, smallest first: 0, a cycle through the
    /// synchronisation a programmer writes to forbid an outcome (a
    /// release/acquire pair, a barrier, the Fence-SC order); 1, through an
    /// asynchronous operation or a proxy fence; 2, any other Causality,
    /// Coherence, SC-per-location, base-causality or barrier reason; 3,
    /// Atomicity; 4, No-Thin-Air (both hold by coincidence of values more
    /// often than by design).
    pub fn rank(&self) -> u8 {
        let written = self.through.iter().any(|t| {
            t.starts_with("the release/acquire pair")
                || t == "the Fence-SC order"
                || t == "the barrier"
        });
        match self.axiom {
            Axiom::NoThinAir => 4,
            Axiom::Atomicity => 3,
            _ if written => 0,
            _ if !self.through.is_empty() => 1,
            _ => 2,
        }
    }
}

impl Group {
    /// The rank of the group's principal (first) reason.
    pub fn rank(&self) -> u8 {
        self.reasons.first().map_or(u8::MAX, |r| r.rank())
    }
}

/// The violation of `vs` with the most principal reason (the first of equals).
fn best<'v, S: Bits>(
    words: &Words<'_, '_, S>,
    c: &Candidate<'_, '_, '_, S>,
    vs: &'v [Violation],
) -> Option<&'v Violation> {
    vs.iter()
        .min_by_key(|v| reason(words, &c.witness.rf, v).rank())
}

/// A violation in words.
fn reason<S: Bits>(words: &Words<'_, '_, S>, rf: &[Option<usize>], v: &Violation) -> Reason {
    let g = words.graph;
    let edges = rotate(words, &v.edges, v.axiom);
    let mut text = format!("{}: ", v.axiom.name());
    if let Some(first) = edges.first() {
        text.push_str(&words.full(rf, first.from));
        for e in &edges {
            text.push_str(&format!(" —{}→ {}", e.rel.as_str(), words.full(rf, e.to)));
        }
    }
    match v.axiom {
        Axiom::Atomicity => text.push_str(" (a write between the read and the write of one RMW)"),
        Axiom::Coherence if v.final_loc.is_some() => {
            let l = v.final_loc.unwrap();
            let f = edges.first().map(|e| e.from).unwrap_or(0);
            text.push_str(&format!(
                " (so {} cannot end with {}'s value)",
                g.program.locations[l].name,
                words.full(rf, f)
            ));
        }
        Axiom::Deadlock => text.push_str(
            "the barrier phases cannot complete this way: a waiting thread is never released, \
             or a phase would have to complete before the one it follows",
        ),
        _ => {}
    }
    Reason {
        axiom: v.axiom,
        rule: v.axiom.source(),
        text,
        through: through(words, &edges),
    }
}

/// Cycles start at the first release/acquire edge (else any synchronisation
/// edge, else the earliest event), so that the same cycle reads the same.
fn rotate<S: Bits>(words: &Words<'_, '_, S>, edges: &[Edge], axiom: Axiom) -> Vec<Edge> {
    let cyclic = !matches!(axiom, Axiom::Atomicity | Axiom::Deadlock)
        && edges.first().map(|e| e.from) == edges.last().map(|e| e.to);
    if !cyclic || edges.is_empty() {
        return edges.to_vec();
    }
    let g = words.graph;
    let start = edges
        .iter()
        .position(|e| matches!(e.sync, Some(Sync::ReleaseAcquire { .. })))
        .or_else(|| edges.iter().position(|e| e.sync.is_some()))
        .unwrap_or_else(|| {
            (0..edges.len())
                .min_by_key(|&k| {
                    let ev = &g.events[edges[k].from];
                    (ev.thread.map_or(0, |t| t + 1), edges[k].from)
                })
                .unwrap()
        });
    let mut out = edges[start..].to_vec();
    out.extend_from_slice(&edges[..start]);
    out
}

/// The synchronisation a cycle goes through, in words.
fn through<S: Bits>(words: &Words<'_, '_, S>, edges: &[Edge]) -> Vec<String> {
    let g = words.graph;
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !out.contains(&s) {
            out.push(s)
        }
    };
    for e in edges {
        match e.sync {
            Some(Sync::ReleaseAcquire { loc, .. }) => push(format!(
                "the release/acquire pair on {}",
                g.program.locations[loc].name
            )),
            Some(Sync::FenceSc) => push("the Fence-SC order".into()),
            Some(Sync::Barrier) => push("the barrier".into()),
            Some(Sync::Async) => push("the asynchronous operation's issue or completion".into()),
            None => {}
        }
        for x in [e.from, e.to] {
            if let Kind::ProxyFence(k) = g.events[x].kind {
                push(format!(
                    "{} fence.proxy.{}",
                    words.thread(x).unwrap_or_default(),
                    k.as_str()
                ));
            }
        }
    }
    out
}

/// One sentence for every group.
fn summarise(groups: &[Group]) -> String {
    let reasons: Vec<&Reason> = groups.iter().flat_map(|g| &g.reasons).collect();
    if reasons.is_empty() {
        return "no candidate execution gives this outcome: no combination of writes has these values".into();
    }
    let mut axioms: Vec<Axiom> = reasons.iter().map(|r| r.axiom).collect();
    axioms.sort();
    axioms.dedup();
    // The most principal axiom first (see [`Reason::rank`]).
    let rank_of = |a: Axiom| {
        reasons
            .iter()
            .filter(|r| r.axiom == a)
            .map(|r| r.rank())
            .min()
    };
    axioms.sort_by_key(|&a| rank_of(a));
    if axioms.len() == 1 {
        let common: Vec<&String> = reasons[0]
            .through
            .iter()
            .filter(|s| reasons.iter().all(|r| r.through.contains(s)))
            .collect();
        let via = match common.first() {
            Some(s) => format!(" through {s}"),
            None => String::new(),
        };
        return format!(
            "every execution that gives this outcome violates {} ({}){via}",
            axioms[0].name(),
            axioms[0].source()
        );
    }
    let parts: Vec<String> = axioms
        .iter()
        .map(|a| {
            let n = groups
                .iter()
                .filter(|g| g.reasons.iter().any(|r| r.axiom == *a))
                .count();
            // The synchronisation the axiom's most principal cycles share.
            let top: Vec<&&Reason> = reasons
                .iter()
                .filter(|r| r.axiom == *a && Some(r.rank()) == rank_of(*a))
                .collect();
            let via = top
                .first()
                .and_then(|r0| {
                    r0.through
                        .iter()
                        .find(|s| top.iter().all(|r| r.through.contains(s)))
                })
                .map_or(String::new(), |s| format!(" through {s}"));
            format!(
                "{} ({}){via} in {n} group{}",
                a.name(),
                a.source(),
                if n == 1 { "" } else { "s" }
            )
        })
        .collect();
    format!(
        "every execution that gives this outcome is rejected: {}",
        parts.join(", ")
    )
}

/// The events and edges of a candidate, with `violation`'s edges marked.
pub fn execution<S: Bits>(
    words: &Words<'_, '_, S>,
    w: &Witness<S>,
    rels: &Relations<'_, '_, S>,
    violation: Option<&Violation>,
) -> Execution {
    let g = words.graph;
    let rf = &w.rf;
    let used: Vec<usize> = (0..g.len())
        .filter(|&e| {
            let ev = &g.events[e];
            ev.thread.is_some() || g.reads.iter().any(|&r| rf[r] == Some(e)) || ev.is_mem()
        })
        .collect();
    let mut events = Vec::new();
    for (k, &e) in used.iter().enumerate() {
        let ev = &g.events[e];
        events.push(EventNode {
            id: e,
            name: letter(k),
            thread: words.thread(e),
            thread_index: ev.thread,
            placement: ev
                .thread
                .map(|_| (ev.placement.gpu, ev.placement.cluster, ev.placement.cta)),
            text: words.text(rf, e),
            herd: words.herd(rf, e),
            proxy: (ev.is_mem() && ev.proxy != crate::ir::Proxy::Generic)
                .then(|| ev.proxy.to_string()),
        });
    }
    let mut edges: Vec<ExecEdge> = Vec::new();
    let mut add = |from: usize, to: usize, rel: &'static str| {
        let e = ExecEdge {
            from,
            to,
            rel,
            cycle: false,
        };
        if !edges.contains(&e) {
            edges.push(e);
        }
    };
    // po between consecutive events of a thread.
    for (a, b) in reduce(&g.po).pairs() {
        add(a, b, "po");
    }
    for (a, b) in g.rmw.pairs() {
        add(a, b, "rmw");
    }
    for (a, b) in rels.rf.pairs() {
        add(a, b, "rf");
    }
    let co = reduce(&rels.co);
    for (a, b) in co.pairs() {
        add(a, b, "co");
    }
    // fr to the coherence-next writes only, as herd draws it.
    for (r, w2) in rels.rf.inverse().compose(&co).pairs() {
        add(r, w2, "fr");
    }
    for (a, b) in rels.sw_ra.pairs() {
        add(a, b, "sw");
    }
    for (a, b) in reduce(&w.sc).pairs() {
        add(a, b, "sc");
    }
    for (a, b) in w.bar.pairs() {
        add(a, b, "bar");
    }
    for (a, b) in g.await_edges.pairs() {
        add(a, b, "async");
    }
    if let Some(v) = violation {
        for e in &v.edges {
            let rel = drawn(e.rel);
            match edges
                .iter_mut()
                .find(|x| x.from == e.from && x.to == e.to && x.rel == rel)
            {
                Some(x) => x.cycle = true,
                None => edges.push(ExecEdge {
                    from: e.from,
                    to: e.to,
                    rel,
                    cycle: true,
                }),
            }
        }
    }
    Execution {
        events,
        edges,
        violated: violation.map(|v| v.axiom),
    }
}

fn drawn(r: EdgeRel) -> &'static str {
    r.as_str()
}

/// The transitive reduction of an acyclic relation (its covering pairs).
fn reduce<S: Bits>(r: &Rel<S>) -> Rel<S> {
    let mut c = r.clone();
    c.close();
    let mut out = Rel::empty(r.len());
    for (a, b) in c.pairs() {
        if a == b {
            continue;
        }
        let between = members(c.row(a)).any(|m| m != b && m != a && c.has(m, b));
        if !between {
            out.add(a, b);
        }
    }
    out
}
