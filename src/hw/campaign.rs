//! A campaign of generated tests (`ptxmc gen`, then `ptxmc hw`): what the GPU
//! did with each test's *weak behaviour*, grouped by what orders the cycle.
//!
//! Every generated test asks, in its `exists` condition, for the outcome of
//! its cycle (`docs/gen.md` §3.4). [`weak_outcome`] says whether the model
//! allows that outcome and how often the GPU showed it; [`CycleOrders::parse`]
//! reads the cycle from the test's doc string (`"Cycle: [rlx.gpu] PodWW …"`)
//! and says, per thread, what orders its two accesses (program order alone,
//! a release store, an acquire load, a fence) at which scope, and how far
//! away its partners run. [`CycleOrders::ordering`] sorts a test into the
//! groups of `docs/hardware-results.md` (generated campaign):
//! `examples/hw_campaign.rs` prints its tables from the recorded data.

use std::fmt;

use super::compare::Comparison;
use super::histogram::Histogram;
use crate::ir::{Program, Scope};
use crate::outcome::Columns;

/// The weak behaviour of one test on the GPU: the outcome its condition asks
/// for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeakOutcome {
    /// The model allows some final state that satisfies the condition.
    pub allowed: bool,
    /// Instances whose final state satisfied the condition.
    pub seen: u64,
    /// The same per harness configuration, in the histogram's order.
    pub by_config: Vec<u64>,
}

/// How often the GPU showed the outcome `p`'s condition asks for, and
/// whether the model allows it (from the comparison's allowed states).
pub fn weak_outcome(p: &Program, h: &Histogram, c: &Comparison) -> WeakOutcome {
    let cols = Columns::of(p);
    let satisfies = |s: &[i64]| p.condition.prop.eval(&|t| cols.term(s, t));
    let allowed = c
        .allowed_observed
        .iter()
        .map(|(s, _)| s)
        .chain(&c.allowed_unobserved)
        .any(|s| satisfies(s));
    let mut seen = 0;
    let mut by_config = vec![0; h.configs.len()];
    for o in h.outcomes.iter().filter(|o| satisfies(&o.values)) {
        seen += o.count;
        for (sum, n) in by_config.iter_mut().zip(&o.by_config) {
            *sum += n;
        }
    }
    WeakOutcome {
        allowed,
        seen,
        by_config,
    }
}

/// What orders a thread's two accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sync {
    /// The second access is a release store (`st.release`).
    Release,
    /// The first access is an acquire load (`ld.acquire`).
    Acquire,
    /// `fence.acq_rel` between them.
    FenceAcqRel,
    /// `fence.sc` between them.
    FenceSc,
}

impl Sync {
    /// The word used in tables: `rel`, `acq`, `acq_rel`, `sc`.
    pub fn word(self) -> &'static str {
        match self {
            Sync::Release => "rel",
            Sync::Acquire => "acq",
            Sync::FenceAcqRel => "acq_rel",
            Sync::FenceSc => "sc",
        }
    }
}

/// One scoped ordering of a thread: what, and at which scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Orderer {
    /// What orders.
    pub sync: Sync,
    /// Its scope.
    pub scope: Scope,
}

impl fmt::Display for Orderer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.sync.word(), self.scope)
    }
}

/// One thread of a cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleThread {
    /// Its accesses in program order: `W`, `R`, `WW`, `RR`, `WR`, `RW`.
    pub accesses: String,
    /// Both accesses touch one location (a `Pos` edge: a coherence cycle).
    pub same_location: bool,
    /// The scoped orderings between its two accesses (empty: program order
    /// alone, or a single access).
    pub orders: Vec<Orderer>,
    /// A `fence.proxy.alias` lies between its accesses.
    pub proxy_fence: bool,
    /// How far away its partners run: the widest placement of the two
    /// communication edges that enter and leave it (`Cta`: one CTA,
    /// `Cluster`: two CTAs of one cluster, `Gpu`: two clusters).
    pub reach: Scope,
}

impl CycleThread {
    /// The widest scope among its orderings, if any.
    pub fn widest(&self) -> Option<Scope> {
        self.orders.iter().map(|o| o.scope).max()
    }
    /// A short label of its orderings: `po` when none, else `rel.cta`,
    /// `sc.gpu`, … joined by `+`.
    pub fn label(&self) -> String {
        if self.orders.is_empty() {
            return "po".into();
        }
        self.orders
            .iter()
            .map(Orderer::to_string)
            .collect::<Vec<_>>()
            .join("+")
    }
}

/// What orders a generated test's cycle, the groups of the campaign's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ordering {
    /// Some thread has only program order between its two accesses.
    Unordered,
    /// Every thread is ordered, but some only at a scope narrower than its
    /// partners' placement (`.cta` across CTAs, `.cluster` across clusters);
    /// the narrowest such scope.
    Narrow(Scope),
    /// Every thread is ordered at a scope that contains its partners.
    Covered,
    /// A coherence cycle: the threads' two accesses touch one location.
    Coherence,
    /// A location is reached through two virtual addresses (the `alias`
    /// vocabulary).
    Alias,
}

impl fmt::Display for Ordering {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ordering::Unordered => f.write_str("some thread has program order alone"),
            Ordering::Narrow(s) => write!(
                f,
                "every thread ordered, some only at .{s} with partners outside it"
            ),
            Ordering::Covered => {
                f.write_str("every thread ordered at a scope that contains its partners")
            }
            Ordering::Coherence => f.write_str("coherence (one location)"),
            Ordering::Alias => f.write_str("aliases (two virtual addresses)"),
        }
    }
}

/// The threads of a generated test's cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleOrders {
    /// The threads, in cycle order (thread `Pk` of the test is the k-th).
    pub threads: Vec<CycleThread>,
    /// Some access goes through a location's second virtual address, or a
    /// thread has `fence.proxy.alias`.
    pub aliases: bool,
}

impl CycleOrders {
    /// The cycle of a generated test, from its doc string `Cycle: …`.
    pub fn of(p: &Program) -> Result<CycleOrders, String> {
        let doc = p
            .docs
            .iter()
            .find_map(|d| d.strip_prefix("Cycle: "))
            .ok_or_else(|| format!("{}: no `Cycle: ` doc string (not a generated test)", p.name))?;
        CycleOrders::parse(doc)
    }

    /// Parse cycle text (`docs/gen.md` §4): each access's annotation in
    /// brackets, then the edge that leaves it, e.g.
    /// `[weak] PodWW [rel.gpu] Rfe.cluster [acq.gpu] PodRR [weak] Fre.cluster`.
    pub fn parse(text: &str) -> Result<CycleOrders, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.is_empty() || words.len() % 2 != 0 {
            return Err(format!(
                "cycle text `{text}`: expected `[annotation] edge` pairs"
            ));
        }
        let mut steps = Vec::new();
        for pair in words.chunks(2) {
            let ann = pair[0]
                .strip_prefix('[')
                .and_then(|a| a.strip_suffix(']'))
                .ok_or_else(|| {
                    format!(
                        "cycle text `{text}`: expected `[annotation]`, found `{}`",
                        pair[0]
                    )
                })?;
            steps.push((ann, Edge::parse(pair[1], text)?));
        }
        let aliases = steps
            .iter()
            .any(|(ann, e)| ann.starts_with("alias_") || e.fences.contains(&"fence.proxy.alias"));
        // Threads: runs of accesses, each ended by a communication edge.
        let mut runs: Vec<Vec<(&str, &Edge)>> = vec![Vec::new()];
        for (ann, e) in &steps {
            runs.last_mut().unwrap().push((ann, e));
            if e.place.is_some() {
                runs.push(Vec::new());
            }
        }
        if !runs.pop().unwrap().is_empty() {
            return Err(format!(
                "cycle text `{text}`: the cycle must end with a communication edge"
            ));
        }
        let out_place = |k: usize| runs[k].last().unwrap().1.place.unwrap();
        let mut threads = Vec::new();
        for (k, run) in runs.iter().enumerate() {
            let reach = out_place(k).max(out_place((k + runs.len() - 1) % runs.len()));
            let thread = match run.as_slice() {
                [(_, e)] => CycleThread {
                    accesses: e.from.to_string(),
                    same_location: false,
                    orders: Vec::new(),
                    proxy_fence: false,
                    reach,
                },
                [(first, po), (second, _)] => {
                    let mut orders = Vec::new();
                    for f in &po.fences {
                        let scoped =
                            |word: &str| f.strip_prefix(word).map(|s| scope(s, text)).transpose();
                        if let Some(scope) = scoped("fence.sc.")? {
                            orders.push(Orderer {
                                sync: Sync::FenceSc,
                                scope,
                            });
                        } else if let Some(scope) = scoped("fence.acq_rel.")? {
                            orders.push(Orderer {
                                sync: Sync::FenceAcqRel,
                                scope,
                            });
                        }
                    }
                    if let Some(s) = first.strip_prefix("acq.") {
                        orders.push(Orderer {
                            sync: Sync::Acquire,
                            scope: scope(s, text)?,
                        });
                    }
                    if let Some(s) = second.strip_prefix("rel.") {
                        orders.push(Orderer {
                            sync: Sync::Release,
                            scope: scope(s, text)?,
                        });
                    }
                    orders.sort();
                    CycleThread {
                        accesses: format!("{}{}", po.from, po.to),
                        same_location: po.same_location,
                        orders,
                        proxy_fence: po.fences.contains(&"fence.proxy.alias"),
                        reach,
                    }
                }
                _ => {
                    return Err(format!(
                        "cycle text `{text}`: a thread of {} accesses (generated threads have one or two)",
                        run.len()
                    ));
                }
            };
            threads.push(thread);
        }
        Ok(CycleOrders { threads, aliases })
    }

    /// The group of the campaign's tables (see [`Ordering`]).
    pub fn ordering(&self) -> Ordering {
        if self.aliases {
            return Ordering::Alias;
        }
        if self.threads.iter().any(|t| t.same_location) {
            return Ordering::Coherence;
        }
        let pairs = || self.threads.iter().filter(|t| t.accesses.len() == 2);
        if pairs().any(|t| t.orders.is_empty()) {
            return Ordering::Unordered;
        }
        match pairs()
            .filter_map(|t| t.widest().filter(|w| *w < t.reach))
            .min()
        {
            Some(narrowest) => Ordering::Narrow(narrowest),
            None => Ordering::Covered,
        }
    }
}

/// One edge of cycle text: `PodWR{fence.sc.gpu}`, `Rfe.cluster`, `PosRR`.
struct Edge<'a> {
    from: char,
    to: char,
    same_location: bool,
    fences: Vec<&'a str>,
    /// The placement of a communication edge; `None` for program order.
    place: Option<Scope>,
}

impl<'a> Edge<'a> {
    fn parse(word: &'a str, text: &str) -> Result<Edge<'a>, String> {
        let bad = || format!("cycle text `{text}`: cannot read the edge `{word}`");
        let (kind, rest) = word.split_at_checked(3).ok_or_else(bad)?;
        match kind {
            "Pod" | "Pos" => {
                let mut chars = rest.chars();
                let (from, to) = (chars.next().ok_or_else(bad)?, chars.next().ok_or_else(bad)?);
                let mid = chars.as_str();
                let fences = match mid.strip_prefix('{').and_then(|m| m.strip_suffix('}')) {
                    Some(m) => m.split(',').collect(),
                    None if mid.is_empty() => Vec::new(),
                    None => return Err(bad()),
                };
                Ok(Edge {
                    from,
                    to,
                    same_location: kind == "Pos",
                    fences,
                    place: None,
                })
            }
            "Rfe" | "Fre" | "Coe" | "Wse" => {
                let place = rest.strip_prefix('.').ok_or_else(bad)?;
                let (from, to) = match kind {
                    "Rfe" => ('W', 'R'),
                    "Fre" => ('R', 'W'),
                    _ => ('W', 'W'),
                };
                Ok(Edge {
                    from,
                    to,
                    same_location: true,
                    fences: Vec::new(),
                    place: Some(scope(place, text)?),
                })
            }
            _ => Err(bad()),
        }
    }
}

fn scope(word: &str, text: &str) -> Result<Scope, String> {
    Scope::ALL
        .into_iter()
        .find(|s| s.as_str() == word)
        .ok_or_else(|| format!("cycle text `{text}`: `{word}` is not a scope"))
}
