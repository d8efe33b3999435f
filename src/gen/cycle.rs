//! A cycle of accesses and edges, and what a test built from it is made of:
//! its threads, their placement, its locations and the values of every
//! access. The canonical rotation is chosen here.

use super::edge::{Ann, Dir, Edge, Place};
use crate::ir::Placement;

/// One access of a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Access {
    /// Load or store.
    pub dir: Dir,
    /// Path and semantics.
    pub ann: Ann,
}

/// A cycle: access `i`, then edge `i` from access `i` to access `i + 1`
/// (the last edge returns to access 0). Once canonical, access 0 is the first
/// access of thread 0 (so the last edge is a communication edge).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cycle {
    /// The accesses.
    pub accesses: Vec<Access>,
    /// The edges.
    pub edges: Vec<Edge>,
}

/// The shape of one thread of a cycle: one access, or two with the kind of
/// program order between them. Ranks order family names (`docs/gen.md` §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ThreadShape {
    /// A single store.
    W,
    /// Two stores, different locations.
    WW,
    /// Two stores, same location.
    WsW,
    /// Two loads.
    RR,
    /// Two loads, same location.
    RsR,
    /// A load, then a store.
    RW,
    /// A load, then a store, same location.
    RsW,
    /// A store, then a load.
    WR,
    /// A store, then a load, same location.
    WsR,
    /// A single load.
    R,
}

impl ThreadShape {
    /// The shape of a thread with accesses `dirs` (one or two) and, for two,
    /// whether they are to the same location.
    pub fn of(dirs: &[Dir], same_loc: bool) -> ThreadShape {
        use Dir::*;
        match (dirs, same_loc) {
            ([W], _) => ThreadShape::W,
            ([R], _) => ThreadShape::R,
            ([W, W], false) => ThreadShape::WW,
            ([W, W], true) => ThreadShape::WsW,
            ([R, R], false) => ThreadShape::RR,
            ([R, R], true) => ThreadShape::RsR,
            ([R, W], false) => ThreadShape::RW,
            ([R, W], true) => ThreadShape::RsW,
            ([W, R], false) => ThreadShape::WR,
            ([W, R], true) => ThreadShape::WsR,
            _ => unreachable!("a thread of a critical cycle has one or two accesses"),
        }
    }
    /// Its text in family names (`W`, `RR`, `RsR`, ...).
    pub fn text(self) -> &'static str {
        match self {
            ThreadShape::W => "W",
            ThreadShape::WW => "WW",
            ThreadShape::WsW => "WsW",
            ThreadShape::RR => "RR",
            ThreadShape::RsR => "RsR",
            ThreadShape::RW => "RW",
            ThreadShape::RsW => "RsW",
            ThreadShape::WR => "WR",
            ThreadShape::WsR => "WsR",
            ThreadShape::R => "R",
        }
    }
}

/// Indices of the first accesses of threads in a rotation where access 0
/// starts a thread: the accesses whose incoming edge is a communication edge.
pub fn thread_starts(n: usize, is_com: impl Fn(usize) -> bool) -> Vec<usize> {
    (0..n).filter(|&i| is_com((i + n - 1) % n)).collect()
}

impl Cycle {
    /// Number of edges.
    pub fn len(&self) -> usize {
        self.edges.len()
    }
    /// Whether the cycle has no edge (never true for a generated cycle).
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }
    /// The threads: for each, the indices of its accesses in program order.
    pub fn threads(&self) -> Vec<Vec<usize>> {
        let mut threads: Vec<Vec<usize>> = Vec::new();
        let mut current = Vec::new();
        for (i, e) in self.edges.iter().enumerate() {
            current.push(i);
            if e.is_com() {
                threads.push(std::mem::take(&mut current));
            }
        }
        debug_assert!(
            current.is_empty(),
            "canonical cycles end with a communication edge"
        );
        threads
    }
    /// The communication edges' placements, in cycle order: the `k`-th
    /// relates thread `k` and thread `k + 1` (mod the thread count).
    pub fn places(&self) -> Vec<Place> {
        self.edges
            .iter()
            .filter_map(|e| match e {
                Edge::Com { place, .. } => Some(*place),
                Edge::Po { .. } => None,
            })
            .collect()
    }
    /// The shape of each thread.
    pub fn shapes(&self) -> Vec<ThreadShape> {
        self.threads()
            .iter()
            .map(|t| {
                let dirs: Vec<Dir> = t.iter().map(|&i| self.accesses[i].dir).collect();
                let same =
                    t.len() == 2 && matches!(self.edges[t[0]], Edge::Po { same_loc: true, .. });
                ThreadShape::of(&dirs, same)
            })
            .collect()
    }
    /// The location of each access (0, 1, ...): program order to a different
    /// location moves to the next one, the last segment closes on location 0.
    pub fn locations(&self) -> Vec<usize> {
        locations(self.len(), |i| {
            matches!(
                self.edges[i],
                Edge::Po {
                    same_loc: false,
                    ..
                }
            )
        })
    }
    /// Number of locations.
    pub fn location_count(&self) -> usize {
        self.locations().iter().max().map_or(0, |m| m + 1)
    }
    /// The value of every access: for a store, the value it writes; for a
    /// load, the value the cycle says it reads. Along each location's segment
    /// (from the access after a `Pod`, or, with one location, after the first
    /// `Pos`), stores write 1, 2, ... and a load reads the latest store before
    /// it (0, the initial value, if none) — the coherence order is the
    /// segment's order.
    pub fn values(&self) -> Vec<i64> {
        let n = self.len();
        let cut = (0..n)
            .rev()
            .find(|&i| {
                matches!(
                    self.edges[i],
                    Edge::Po {
                        same_loc: false,
                        ..
                    }
                )
            })
            .or_else(|| (0..n).find(|&i| matches!(self.edges[i], Edge::Po { same_loc: true, .. })))
            .expect("a cycle has program order");
        let mut values = vec![0; n];
        let mut written = 0;
        let mut last = 0;
        for k in 1..=n {
            let i = (cut + k) % n;
            let prev = (i + n - 1) % n;
            if matches!(
                self.edges[prev],
                Edge::Po {
                    same_loc: false,
                    ..
                }
            ) {
                written = 0;
                last = 0;
            }
            match self.accesses[i].dir {
                Dir::W => {
                    written += 1;
                    last = written;
                    values[i] = written;
                }
                Dir::R => values[i] = last,
            }
        }
        values
    }
    /// How many stores each location receives.
    pub fn writes_per_location(&self) -> Vec<usize> {
        let locs = self.locations();
        let mut w = vec![0; self.location_count()];
        for (a, l) in self.accesses.iter().zip(&locs) {
            if a.dir == Dir::W {
                w[*l] += 1;
            }
        }
        w
    }
}

/// The location of each of `n` accesses when edge `i` (from access `i` to
/// access `i + 1`) changes location iff `is_pod(i)`: locations are numbered
/// from 0 in order of first use from access 0; the segment after the last
/// change closes on location 0.
pub fn locations(n: usize, is_pod: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut current = 0;
    let mut loc: Vec<usize> = (0..n)
        .map(|i| {
            if i > 0 && is_pod(i - 1) {
                current += 1;
            }
            current
        })
        .collect();
    if current > 0 && !is_pod(n - 1) {
        for l in loc.iter_mut().filter(|l| **l == current) {
            *l = 0;
        }
    }
    loc
}

/// The placement of each thread, given the placements of the communication
/// edges around the cycle (`places[k]` relates threads `k` and `k + 1`), or
/// `None` if they contradict each other. Threads not related by an edge are
/// kept as far apart as the edges allow; CTAs, clusters and GPUs are
/// numbered in thread order (CTAs and clusters per GPU).
pub fn placements(places: &[Place]) -> Option<Vec<Placement>> {
    let t = places.len();
    // Union-find per level: CTA, cluster, GPU.
    let mut classes = [
        (0..t).collect::<Vec<usize>>(),
        (0..t).collect(),
        (0..t).collect(),
    ];
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for (k, &pl) in places.iter().enumerate() {
        let (a, b) = (k, (k + 1) % t);
        // Level 0 (CTA) joins only same-CTA pairs, level 2 (GPU) all but Sys.
        let depth = match pl {
            Place::Cta => 0,
            Place::Cluster => 1,
            Place::Gpu => 2,
            Place::Sys => 3,
        };
        for (level, parent) in classes.iter_mut().enumerate() {
            if level >= depth {
                let (ra, rb) = (find(parent, a), find(parent, b));
                parent[ra] = rb;
            }
        }
    }
    let rep: Vec<[usize; 3]> = (0..t)
        .map(|i| {
            [
                find(&mut classes[0], i),
                find(&mut classes[1], i),
                find(&mut classes[2], i),
            ]
        })
        .collect();
    // Every edge must relate its threads exactly as it says.
    for (k, &pl) in places.iter().enumerate() {
        let (a, b) = (rep[k], rep[(k + 1) % t]);
        let actual = if a[0] == b[0] {
            Place::Cta
        } else if a[1] == b[1] {
            Place::Cluster
        } else if a[2] == b[2] {
            Place::Gpu
        } else {
            Place::Sys
        };
        if actual != pl {
            return None;
        }
    }
    let mut gpus: Vec<usize> = Vec::new();
    let mut clusters: Vec<(usize, usize)> = Vec::new();
    let mut ctas: Vec<(usize, usize)> = Vec::new();
    fn index<T: PartialEq>(v: &mut Vec<T>, x: T) -> usize {
        match v.iter().position(|y| *y == x) {
            Some(i) => i,
            None => {
                v.push(x);
                v.len() - 1
            }
        }
    }
    let mut out = Vec::with_capacity(t);
    for r in &rep {
        let gpu = index(&mut gpus, r[2]);
        // Clusters and CTAs are numbered per GPU.
        let cluster = index(&mut clusters, (gpu, r[1]));
        let cta = index(&mut ctas, (gpu, r[0]));
        let per_gpu = |v: &Vec<(usize, usize)>, i: usize| {
            v[..i].iter().filter(|(g, _)| *g == gpu).count() as u32
        };
        out.push(Placement {
            gpu: gpu as u32,
            cluster: per_gpu(&clusters, cluster),
            cta: per_gpu(&ctas, cta),
            warp: None,
            grid: 0,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pl(gpu: u32, cluster: u32, cta: u32) -> Placement {
        Placement {
            gpu,
            cluster,
            cta,
            warp: None,
            grid: 0,
        }
    }

    #[test]
    fn two_threads_need_one_placement() {
        assert_eq!(
            placements(&[Place::Cluster, Place::Cluster]),
            Some(vec![pl(0, 0, 0), pl(0, 0, 1)])
        );
        assert_eq!(placements(&[Place::Cta, Place::Gpu]), None);
    }

    #[test]
    fn unrelated_threads_stay_apart() {
        // IRIW with every pair in different clusters: four clusters.
        let p = placements(&[Place::Gpu; 4]).unwrap();
        assert_eq!(p, vec![pl(0, 0, 0), pl(0, 1, 1), pl(0, 2, 2), pl(0, 3, 3)]);
        // Triangle: two pairs in one CTA force the third.
        assert_eq!(placements(&[Place::Cta, Place::Cta, Place::Cluster]), None);
        assert_eq!(
            placements(&[Place::Cta, Place::Cluster, Place::Cluster]),
            Some(vec![pl(0, 0, 0), pl(0, 0, 0), pl(0, 0, 1)])
        );
    }

    #[test]
    fn ctas_and_clusters_are_numbered_per_gpu() {
        let p = placements(&[Place::Sys, Place::Sys]).unwrap();
        assert_eq!(p, vec![pl(0, 0, 0), pl(1, 0, 0)]);
    }
}
