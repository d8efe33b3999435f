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
use super::words::{Words, letter};

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
        /// One such execution.
        witness: Execution,
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
    prop: &'a Prop,
    caps: Caps,
    witness: Option<Execution>,
    groups: Vec<(Vec<Option<usize>>, usize, Group)>,
}

impl Visit for Collect<'_> {
    fn visit<S: Bits>(&mut self, c: &Candidate<'_, '_, '_, S>) -> bool {
        let words = Words {
            source: self.source,
            graph: c.graph,
        };
        match &c.verdict {
            Verdict::Consistent => {
                self.witness = Some(execution(&words, c.witness, c.relations.unwrap(), None));
                false
            }
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
                        let picture = execution(&words, c.witness, rels, vs.first());
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
                let g = &mut self.groups[gi].2;
                g.candidates += 1;
                for v in vs {
                    let r = reason(&words, &c.witness.rf, v);
                    if g.reasons.contains(&r) {
                        continue;
                    }
                    if g.reasons.len() < self.caps.reasons {
                        g.reasons.push(r);
                    } else {
                        g.more_reasons += 1;
                    }
                }
                true
            }
        }
    }
}

/// Explain why `prop` is allowed or forbidden for `source` (the test as
/// written), by the axioms.
pub fn explain(source: &Program, prop: &Prop, limits: &Limits, caps: Caps) -> AxExplanation {
    let lowered = lower::lower(source, limits.loop_bound);
    let mut collect = Collect {
        source,
        prop,
        caps,
        witness: None,
        groups: Vec::new(),
    };
    let result = enumerate::enumerate(&lowered, Filter::Outcome(prop), limits, &mut collect);
    let Collect {
        witness, groups, ..
    } = collect;
    let outcome = print::prop(source, prop);
    let (candidates, bound_hit) = match &result {
        Ok(s) => (s.candidates, s.bound_hit),
        Err(_) => (limits.max_candidates, false),
    };
    let total_groups = groups.len();
    let all: Vec<Group> = groups.into_iter().map(|(_, _, g)| g).collect();
    let summary = summarise(&all);
    let listed: Vec<Group> = all.into_iter().take(caps.groups).collect();
    let verdict = match (witness, result) {
        (Some(w), _) => AxVerdict::Allowed { witness: w },
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
            format!(
                "{} ({}) in {n} group{}",
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
