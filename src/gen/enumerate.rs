//! Enumerating the critical cycles of a vocabulary, each once.
//!
//! Two stages. First the *shapes* of cycles (each edge reduced to its kind
//! and directions) that satisfy diy's critical-mode rules, once per rotation
//! class. Then, for each shape, every choice of vocabulary edges for its
//! positions whose annotations agree on shared accesses and whose placements
//! fit together; each result is put in its canonical rotation and kept once.

use std::collections::{BTreeMap, BTreeSet};

use super::cycle::{Access, Cycle, ThreadShape, locations, placements, thread_starts};
use super::edge::{Ann, ComKind, Dir, Edge, EvProxy, Place};
use super::vocab::Vocabulary;

/// An edge reduced to what the critical-cycle rules look at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Shape {
    /// `Some` for a communication edge.
    com: Option<ComKind>,
    /// For program order: same location.
    same_loc: bool,
    src: Dir,
    dst: Dir,
}

impl Shape {
    fn is_com(self) -> bool {
        self.com.is_some()
    }
    fn is_pod(self) -> bool {
        self.com.is_none() && !self.same_loc
    }
}

/// What the enumeration found, besides the cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnumStats {
    /// Cycle shapes (rotation classes) satisfying the critical-cycle rules.
    pub shapes: usize,
    /// Shapes left out because a location would receive more than two
    /// stores (their coherence order needs observer threads).
    pub shapes_needing_observers: usize,
    /// Edge choices examined (annotations agreeing).
    pub choices: u64,
    /// Of those, choices whose placements contradict each other.
    pub placement_conflicts: u64,
}

/// The canonical cycles of a vocabulary up to a size.
#[derive(Clone, Debug)]
pub struct Enumeration {
    /// Every canonical cycle of 2..=size edges, each once, in canonical order.
    pub cycles: Vec<Cycle>,
    /// Counters.
    pub stats: EnumStats,
}

/// Whether `b` may follow `a` in a cycle: directions meet, no two program
/// order edges in a row (each thread has at most two accesses), and two
/// communication edges in a row only as `Coe;Rfe` or `Fre;Rfe` (an isolated
/// store; the other sequences collapse into one edge: diy's rule).
fn pair_ok(a: Shape, b: Shape) -> bool {
    if a.dst != b.src {
        return false;
    }
    match (a.com, b.com) {
        (None, None) => false,
        (Some(x), Some(y)) => matches!((x, y), (ComKind::Co | ComKind::Fr, ComKind::Rf)),
        _ => true,
    }
}

/// Enumerate every canonical cycle of at most `size` edges over `v`.
///
/// # Errors
/// Why the enumeration stopped early: the resident memory exceeded
/// `max_memory` bytes (checked every few thousand cycles).
pub fn enumerate(
    v: &Vocabulary,
    size: usize,
    max_memory: Option<u64>,
) -> Result<Enumeration, String> {
    // Intern edges so that comparing ids compares edges.
    let table: Vec<Edge> = v
        .edges
        .iter()
        .map(|e| e.edge.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let id_of = |e: &Edge| table.binary_search(e).expect("interned") as u16;
    let mut by_shape: BTreeMap<Shape, Vec<Choice>> = BTreeMap::new();
    for e in &v.edges {
        let shape = Shape {
            com: match &e.edge {
                Edge::Com { kind, .. } => Some(*kind),
                Edge::Po { .. } => None,
            },
            same_loc: matches!(e.edge, Edge::Po { same_loc: true, .. }),
            src: e.src,
            dst: e.dst,
        };
        by_shape.entry(shape).or_default().push(Choice {
            id: id_of(&e.edge),
            src_ann: e.src_ann,
            dst_ann: e.dst_ann,
            place: match e.edge {
                Edge::Com { place, .. } => Some(place),
                Edge::Po { .. } => None,
            },
        });
    }
    let alphabet: Vec<Shape> = by_shape.keys().copied().collect();
    let mut ctx = Ctx {
        v,
        table: &table,
        by_shape: &by_shape,
        keys: BTreeSet::new(),
        stats: EnumStats::default(),
        max_memory,
        halted: None,
    };
    for n in 2..=size {
        let mut seq = Vec::with_capacity(n);
        shapes(&alphabet, n, &mut seq, &mut |s: &[Shape]| ctx.shape(s));
    }
    if let Some(why) = ctx.halted {
        return Err(why);
    }
    let cycles = ctx
        .keys
        .iter()
        .map(|k| Cycle {
            accesses: k.iter().map(|(a, _)| *a).collect(),
            edges: k
                .iter()
                .map(|(_, id)| table[*id as usize].clone())
                .collect(),
        })
        .collect();
    Ok(Enumeration {
        cycles,
        stats: ctx.stats,
    })
}

/// A vocabulary edge, as the second stage sees it.
#[derive(Clone, Copy, Debug)]
struct Choice {
    id: u16,
    src_ann: Option<Ann>,
    dst_ann: Option<Ann>,
    place: Option<Place>,
}

/// A canonical cycle: accesses and interned edges from the canonical start.
type Key = Vec<(Access, u16)>;

struct Ctx<'a> {
    v: &'a Vocabulary,
    table: &'a [Edge],
    by_shape: &'a BTreeMap<Shape, Vec<Choice>>,
    keys: BTreeSet<Key>,
    stats: EnumStats,
    max_memory: Option<u64>,
    /// Why the enumeration stopped, once it has.
    halted: Option<String>,
}

/// Current resident set size in bytes (Linux), if known.
fn current_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Call `f` on every shape sequence of length `n` that is a critical cycle
/// starting at a thread's first access, in its least rotation.
fn shapes(alphabet: &[Shape], n: usize, seq: &mut Vec<Shape>, f: &mut dyn FnMut(&[Shape])) {
    let i = seq.len();
    if i == n {
        if closes(seq) && is_least_rotation(seq) {
            f(seq);
        }
        return;
    }
    for &s in alphabet {
        if i > 0 && !pair_ok(seq[i - 1], s) {
            continue;
        }
        if i > 1 && seq[i - 2].is_com() && seq[i - 1].is_com() && s.is_com() {
            continue;
        }
        seq.push(s);
        shapes(alphabet, n, seq, f);
        seq.pop();
    }
}

/// The wrap-around rules and the global ones: the cycle returns to a thread
/// start and has at least two threads; its program order is either all to
/// different locations, at least twice (a critical cycle: one `Pod` alone
/// cannot come back to where it started), or all to the same location (a
/// coherence cycle on one location, diy's `-oneloc`).
fn closes(seq: &[Shape]) -> bool {
    let n = seq.len();
    let last = seq[n - 1];
    if !last.is_com() || !pair_ok(last, seq[0]) {
        return false;
    }
    let com = |i: usize| seq[i % n].is_com();
    if n >= 3 && ((com(n - 2) && com(n - 1) && com(n)) || (com(n - 1) && com(n) && com(n + 1))) {
        return false;
    }
    let threads = seq.iter().filter(|s| s.is_com()).count();
    let pods = seq.iter().filter(|s| s.is_pod()).count();
    let poss = n - threads - pods;
    threads >= 2 && ((pods >= 2 && poss == 0) || (pods == 0 && poss >= 1))
}

fn is_least_rotation(seq: &[Shape]) -> bool {
    let n = seq.len();
    thread_starts(n, |i| seq[i].is_com())
        .into_iter()
        .filter(|&r| r != 0)
        .all(|r| seq[r..].iter().chain(&seq[..r]).cmp(seq.iter()) != std::cmp::Ordering::Less)
}

/// Merge the annotations two edges impose on their shared access.
fn merge(a: Option<Ann>, b: Option<Ann>) -> Result<Option<Ann>, ()> {
    match (a, b) {
        (Some(x), Some(y)) if x != y => Err(()),
        (Some(x), _) | (_, Some(x)) => Ok(Some(x)),
        (None, None) => Ok(None),
    }
}

impl Ctx<'_> {
    /// Second stage for one shape.
    fn shape(&mut self, seq: &[Shape]) {
        if self.halted.is_some() {
            return;
        }
        if self.needs_observers(seq) {
            self.stats.shapes_needing_observers += 1;
            return;
        }
        let threads = seq.iter().filter(|s| s.is_com()).count();
        if threads > self.v.max_threads {
            return;
        }
        self.stats.shapes += 1;
        let lists: Vec<&[Choice]> = seq.iter().map(|s| self.by_shape[s].as_slice()).collect();
        let mut picked: Vec<Choice> = Vec::with_capacity(seq.len());
        let mut anns: Vec<Option<Ann>> = vec![None; seq.len()];
        self.choose(seq, &lists, &mut picked, &mut anns);
    }

    /// A location receiving more than two stores needs observers, which the
    /// generator does not write (`docs/gen.md` §3).
    fn needs_observers(&self, seq: &[Shape]) -> bool {
        let skeleton = Cycle {
            accesses: seq
                .iter()
                .map(|s| Access {
                    dir: s.src,
                    ann: self.v.default,
                })
                .collect(),
            edges: seq
                .iter()
                .map(|s| match s.com {
                    Some(kind) => Edge::Com {
                        kind,
                        place: Place::Cta,
                    },
                    None => Edge::Po {
                        same_loc: s.same_loc,
                        mids: Vec::new(),
                    },
                })
                .collect(),
        };
        skeleton.writes_per_location().iter().any(|&w| w > 2)
    }

    fn choose(
        &mut self,
        seq: &[Shape],
        lists: &[&[Choice]],
        picked: &mut Vec<Choice>,
        anns: &mut [Option<Ann>],
    ) {
        let i = picked.len();
        let n = seq.len();
        if i == n {
            let Ok(first) = merge(picked[n - 1].dst_ann, picked[0].src_ann) else {
                return;
            };
            anns[0] = first;
            self.stats.choices += 1;
            let places: Vec<Place> = picked.iter().filter_map(|c| c.place).collect();
            if placements(&places).is_none() {
                self.stats.placement_conflicts += 1;
                return;
            }
            let concrete: Key = (0..n)
                .map(|k| {
                    let access = Access {
                        dir: seq[k].src,
                        ann: anns[k].unwrap_or(self.v.default),
                    };
                    (access, picked[k].id)
                })
                .collect();
            let key = self.canonical(concrete);
            self.keys.insert(key);
            if self.stats.choices % 4096 == 0 {
                if let (Some(m), Some(rss)) = (self.max_memory, current_rss()) {
                    if rss > m {
                        self.halted = Some(format!(
                            "the memory limit ({} MiB) was reached after {} cycles",
                            m >> 20,
                            self.keys.len()
                        ));
                    }
                }
            }
            return;
        }
        for c in lists[i] {
            if self.halted.is_some() {
                return;
            }
            if i > 0 {
                match merge(picked[i - 1].dst_ann, c.src_ann) {
                    Ok(a) => anns[i] = a,
                    Err(()) => continue,
                }
            }
            picked.push(*c);
            self.choose(seq, lists, picked, anns);
            picked.pop();
        }
    }

    /// The least rotation starting at a thread's first access, comparing the
    /// threads' shapes first (so family names come out the same for every
    /// member of a family) and then the accesses and edges. A location's two
    /// virtual addresses are interchangeable, so each rotation first names
    /// them by first use (`x` before `xa`).
    fn canonical(&self, concrete: Key) -> Key {
        let n = concrete.len();
        let is_com = |id: u16| self.table[id as usize].is_com();
        let is_pod = |id: u16| {
            matches!(
                self.table[id as usize],
                Edge::Po {
                    same_loc: false,
                    ..
                }
            )
        };
        let loc = locations(n, |i| is_pod(concrete[i].1));
        // Swapping addresses only makes sense where no proxy reference (tied
        // to the location's own address) is used.
        let swappable: Vec<bool> = (0..=loc.iter().copied().max().unwrap_or(0))
            .map(|l| {
                (0..n).all(|i| {
                    loc[i] != l
                        || matches!(concrete[i].0.ann.proxy, EvProxy::Generic | EvProxy::Alias)
                })
            })
            .collect();
        let rotated = |r: usize| -> Key {
            let mut swap: Vec<Option<bool>> = vec![None; swappable.len()];
            (0..n)
                .map(|k| {
                    let i = (r + k) % n;
                    let (mut a, e) = concrete[i];
                    let l = loc[i];
                    let s = *swap[l].get_or_insert(swappable[l] && a.ann.proxy == EvProxy::Alias);
                    if s {
                        a.ann.proxy = match a.ann.proxy {
                            EvProxy::Alias => EvProxy::Generic,
                            EvProxy::Generic => EvProxy::Alias,
                            other => other,
                        };
                    }
                    (a, e)
                })
                .collect()
        };
        let rank = |key: &Key| -> Vec<ThreadShape> {
            let mut out = Vec::new();
            let mut k = 0;
            while k < n {
                let (a, e) = key[k];
                if is_com(e) {
                    out.push(ThreadShape::of(&[a.dir], false));
                    k += 1;
                } else {
                    let (b, _) = key[k + 1];
                    let same = matches!(self.table[e as usize], Edge::Po { same_loc: true, .. });
                    out.push(ThreadShape::of(&[a.dir, b.dir], same));
                    k += 2;
                }
            }
            out
        };
        thread_starts(n, |i| is_com(concrete[i].1))
            .into_iter()
            .map(|r| {
                let key = rotated(r);
                (rank(&key), key)
            })
            .min()
            .map(|(_, key)| key)
            .expect("a cycle has a thread")
    }
}
