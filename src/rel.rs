//! Sets of events and binary relations over them, as bit sets and bit
//! matrices, shared by both engines: the oracle's events of one candidate
//! execution and the machine's event slots. Row `i` of a relation is the set
//! of `j` with `(i, j)` in it. A litmus test has tens of events; 128 fit in
//! one `u128` per row.

/// The most events a candidate execution may have.
pub const MAX_EVENTS: usize = 128;

/// A set of events.
pub type Set = u128;

/// Iterate over the members of a set, in increasing order.
pub fn members(mut s: Set) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if s == 0 {
            None
        } else {
            let i = s.trailing_zeros() as usize;
            s &= s - 1;
            Some(i)
        }
    })
}

/// The singleton `{i}`.
pub fn bit(i: usize) -> Set {
    1u128 << i
}

/// Whether the relation whose row `i` is `rows[i]` has a cycle.
///
/// Depth-first search over bit rows, each edge followed once: a successor
/// still on the search path closes a cycle; a finished event leads to none.
/// The oracle asks this once per candidate coherence order, so it must not
/// allocate nor close the relation (Warshall is n² row operations every
/// time).
pub fn rows_have_cycle(rows: &[Set]) -> bool {
    debug_assert!(rows.len() <= MAX_EVENTS);
    let mut finished: Set = 0;
    let mut on_path: Set = 0;
    // The path: each event with the successors it has not followed yet.
    let mut path: smallvec::SmallVec<[(usize, Set); 32]> = smallvec::SmallVec::new();
    for (start, &row) in rows.iter().enumerate() {
        if row == 0 || finished & bit(start) != 0 {
            continue;
        }
        path.push((start, row));
        on_path |= bit(start);
        while let Some((v, rest)) = path.last_mut() {
            let todo = *rest & !finished;
            if todo == 0 {
                on_path &= !bit(*v);
                finished |= bit(*v);
                path.pop();
                continue;
            }
            let w = todo.trailing_zeros() as usize;
            *rest = todo & (todo - 1);
            if on_path & bit(w) != 0 {
                return true;
            }
            path.push((w, rows[w]));
            on_path |= bit(w);
        }
    }
    false
}

/// Whether the relation whose row `i` is `rows[i]`, restricted to the
/// events `within`, has a cycle; only the rows of `within` are read.
///
/// Peels sinks until none is left (acyclic) or none can be peeled (a
/// cycle). For the dozen events of one location and a dense relation this
/// is a few passes of word operations, with no search path at all. Passes
/// go from the highest event down because program order points up the
/// indices: a thread's chain peels in one pass.
pub fn has_cycle_within(rows: &[Set], within: Set) -> bool {
    let mut left = within;
    loop {
        let before = left;
        let mut todo = left;
        while todo != 0 {
            let v = (Set::BITS - 1 - todo.leading_zeros()) as usize;
            todo &= !bit(v);
            if rows[v] & left == 0 {
                left &= !bit(v);
            }
        }
        if left == 0 {
            return false;
        }
        if left == before {
            return true;
        }
    }
}

/// A relation on `n <= MAX_EVENTS` events.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rel {
    rows: Vec<Set>,
}

impl Rel {
    /// The empty relation on `n` events.
    pub fn empty(n: usize) -> Rel {
        debug_assert!(n <= MAX_EVENTS);
        Rel { rows: vec![0; n] }
    }
    /// Number of events.
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    /// Whether the relation is over zero events.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    /// Add `(i, j)`.
    pub fn add(&mut self, i: usize, j: usize) {
        self.rows[i] |= bit(j);
    }
    /// Whether `(i, j)` is in the relation.
    pub fn has(&self, i: usize, j: usize) -> bool {
        self.rows[i] & bit(j) != 0
    }
    /// The successors of `i`.
    pub fn row(&self, i: usize) -> Set {
        self.rows[i]
    }
    /// Replace the successors of `i`.
    pub fn set_row(&mut self, i: usize, s: Set) {
        self.rows[i] = s;
    }
    /// `self ∪= other`.
    pub fn union_with(&mut self, other: &Rel) {
        for (a, b) in self.rows.iter_mut().zip(&other.rows) {
            *a |= b;
        }
    }
    /// `self ∩ other`.
    pub fn intersect(&self, other: &Rel) -> Rel {
        Rel {
            rows: self
                .rows
                .iter()
                .zip(&other.rows)
                .map(|(a, b)| a & b)
                .collect(),
        }
    }
    /// `self ; other`.
    pub fn compose(&self, other: &Rel) -> Rel {
        let rows = self
            .rows
            .iter()
            .map(|&r| members(r).fold(0, |acc, k| acc | other.rows[k]))
            .collect();
        Rel { rows }
    }
    /// The inverse relation.
    pub fn inverse(&self) -> Rel {
        let mut out = Rel::empty(self.len());
        for (i, &r) in self.rows.iter().enumerate() {
            for j in members(r) {
                out.add(j, i);
            }
        }
        out
    }
    /// Transitive closure, in place (Warshall over bit rows).
    pub fn close(&mut self) {
        let n = self.rows.len();
        for k in 0..n {
            let rk = self.rows[k];
            if rk == 0 {
                continue; // nothing to pass on
            }
            let kb = bit(k);
            for i in 0..n {
                if self.rows[i] & kb != 0 {
                    self.rows[i] |= rk;
                }
            }
        }
    }
    /// Transitive closure, in place, of a relation whose every pair lies in
    /// `within`: Warshall over those events alone (the oracle's coherence
    /// relates a dozen writes among tens of events).
    pub fn close_within(&mut self, within: Set) {
        debug_assert!(
            self.pairs()
                .all(|(i, j)| within & bit(i) != 0 && within & bit(j) != 0)
        );
        for k in members(within) {
            let rk = self.rows[k];
            if rk == 0 {
                continue; // nothing to pass on
            }
            let kb = bit(k);
            for i in members(within) {
                if self.rows[i] & kb != 0 {
                    self.rows[i] |= rk;
                }
            }
        }
    }
    /// The transitive closure.
    pub fn closure(&self) -> Rel {
        let mut c = self.clone();
        c.close();
        c
    }
    /// Add `(a, b)` to a transitively closed relation and keep it closed.
    pub fn add_closed(&mut self, a: usize, b: usize) {
        let add = bit(b) | self.rows[b];
        let ab = bit(a);
        for i in 0..self.rows.len() {
            if i == a || self.rows[i] & ab != 0 {
                self.rows[i] |= add;
            }
        }
    }
    /// For a transitively closed relation: whether it is irreflexive (acyclic).
    pub fn closed_is_acyclic(&self) -> bool {
        self.rows.iter().enumerate().all(|(i, &r)| r & bit(i) == 0)
    }
    /// Whether the relation (closed or not) has a cycle.
    pub fn has_cycle(&self) -> bool {
        rows_have_cycle(&self.rows)
    }
    /// Whether `to` is reachable from `from` in one or more steps.
    pub fn reaches(&self, from: usize, to: usize) -> bool {
        let mut seen: Set = 0;
        let mut frontier = self.rows[from];
        while frontier & !seen != 0 {
            if frontier & bit(to) != 0 {
                return true;
            }
            let new = frontier & !seen;
            seen |= new;
            frontier = members(new).fold(frontier, |acc, k| acc | self.rows[k]);
        }
        frontier & bit(to) != 0
    }
    /// All pairs, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.rows
            .iter()
            .enumerate()
            .flat_map(|(i, &r)| members(r).map(move |j| (i, j)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closure_and_cycles() {
        let mut r = Rel::empty(4);
        r.add(0, 1);
        r.add(1, 2);
        assert!(!r.has_cycle());
        let c = r.closure();
        assert!(c.has(0, 2) && !c.has(2, 0));
        assert!(r.reaches(0, 2) && !r.reaches(2, 0));
        r.add(2, 0);
        assert!(r.has_cycle());
        // Against the closure, on relations of every density.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for n in [1usize, 2, 5, 17, 64, 128] {
            for density in [1u64, 3, 10, 40] {
                let mut r = Rel::empty(n);
                for i in 0..n {
                    for j in 0..n {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        if seed % (4 * n as u64) < density {
                            r.add(i, j);
                        }
                    }
                }
                assert_eq!(r.has_cycle(), !r.closure().closed_is_acyclic(), "n={n}");
                // Restricted to a part of the events: the same as the
                // relation with every other row and column cleared.
                let within = (0..n).filter(|i| i % 3 != 1).fold(0, |m, i| m | bit(i));
                let mut part = Rel::empty(n);
                for (i, j) in r
                    .pairs()
                    .filter(|&(i, j)| within & bit(i) != 0 && within & bit(j) != 0)
                {
                    part.add(i, j);
                }
                assert_eq!(has_cycle_within(&r.rows, within), part.has_cycle(), "n={n}");
                assert!(!has_cycle_within(&r.rows, 0));
                // Its forward edges alone: acyclic, however deep.
                let mut dag = Rel::empty(n);
                for (i, j) in r.pairs().filter(|&(i, j)| i < j) {
                    dag.add(i, j);
                }
                assert!(!dag.has_cycle(), "n={n}");
            }
        }
        let mut self_loop = Rel::empty(3);
        self_loop.add(1, 1);
        assert!(self_loop.has_cycle());
        let mut c = Rel::empty(4);
        c.add(0, 1);
        c.close();
        c.add_closed(1, 3);
        assert!(c.has(0, 3) && c.has(1, 3) && !c.has(3, 0));
        c.add_closed(3, 0);
        assert!(!c.closed_is_acyclic());
    }

    #[test]
    fn compose_and_inverse() {
        let mut a = Rel::empty(3);
        a.add(0, 1);
        let mut b = Rel::empty(3);
        b.add(1, 2);
        let ab = a.compose(&b);
        assert_eq!(ab.pairs().collect::<Vec<_>>(), vec![(0, 2)]);
        assert_eq!(ab.inverse().pairs().collect::<Vec<_>>(), vec![(2, 0)]);
        assert_eq!(members(0b1011).collect::<Vec<_>>(), vec![0, 1, 3]);
    }
}
