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
            let kb = bit(k);
            for i in 0..n {
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
        !self.closure().closed_is_acyclic()
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
