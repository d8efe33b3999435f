//! Sets of events and binary relations over them, as bit sets and bit
//! matrices, shared by both engines: the oracle's events of one candidate
//! execution and the machine's event slots. Row `i` of a relation is the set
//! of `j` with `(i, j)` in it.
//!
//! There is no fixed event cap: the set type is a parameter ([`Bits`]) of
//! every structure that holds sets, and a program picks the narrowest width
//! its events fit once, before any set is made ([`with_width!`]). A litmus
//! test has tens of events and gets [`u128`], the plain machine word pair it
//! always had (the small cases pay nothing for the wide ones); a kernel with
//! hundreds or thousands of events gets [`Words`] of as many 64-bit words as
//! it needs, still `Copy` and still word-parallel. Unfolding, which runs
//! before the event count is known, keeps its per-thread sets in the
//! growable [`Grow`].

use std::fmt::Debug;
use std::hash::Hash;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

/// The most events one execution may have: the widest [`Words`] that
/// [`with_width!`] instantiates. Not a limit of the model: an execution
/// beyond it ends the run with an explicit *incomplete* verdict (the
/// oracle's `AxLimit::TooManyEvents`, the machine's `TooManySlots`), like
/// any other resource limit.
pub const MAX_EVENTS: usize = 64 * WIDEST_WORDS;

/// Words in the widest set [`with_width!`] instantiates.
pub const WIDEST_WORDS: usize = 64;

/// A set of event indices `0..Self::CAPACITY`, as a fixed-width bit set.
///
/// Invariant of every implementation: bits at or above `CAPACITY` do not
/// exist, so `!s` is the complement within the capacity and `FULL` has every
/// one of them; the engines only ever put indices below their event count in
/// a set.
pub trait Bits:
    Copy
    + Eq
    + Ord
    + Hash
    + Debug
    + Default
    + Send
    + Sync
    + 'static
    + bytemuck::Pod
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + BitAndAssign
    + BitOrAssign
    + BitXorAssign
{
    /// How many indices the set can hold.
    const CAPACITY: usize;
    /// The empty set.
    const EMPTY: Self;
    /// Every index below [`Bits::CAPACITY`].
    const FULL: Self;
    /// The singleton `{i}` (`i < CAPACITY`).
    fn bit(i: usize) -> Self;
    /// `{0, …, n − 1}` (`n <= CAPACITY`).
    fn below(n: usize) -> Self;
    /// Whether the set is empty.
    fn is_empty(self) -> bool;
    /// The least member.
    fn first(self) -> Option<usize>;
    /// The greatest member.
    fn last(self) -> Option<usize>;
    /// The number of members.
    fn count(self) -> usize;
    /// Remove and return the least member.
    #[inline]
    fn pop_first(&mut self) -> Option<usize> {
        let i = self.first()?;
        *self ^= Self::bit(i);
        Some(i)
    }
    /// Whether `i` is a member.
    #[inline]
    fn has(self, i: usize) -> bool {
        !(self & Self::bit(i)).is_empty()
    }
    /// Whether the sets share a member.
    #[inline]
    fn meets(self, other: Self) -> bool {
        !(self & other).is_empty()
    }
    /// `{i | i ∈ self, i < k} ∪ {i − 1 | i ∈ self, i > k}`: the set after
    /// index `k` is removed and the later indices move down by one.
    fn remove_shift(self, k: usize) -> Self;
}

impl Bits for u128 {
    const CAPACITY: usize = 128;
    const EMPTY: Self = 0;
    const FULL: Self = u128::MAX;
    #[inline]
    fn bit(i: usize) -> Self {
        1u128 << i
    }
    #[inline]
    fn below(n: usize) -> Self {
        if n >= 128 {
            u128::MAX
        } else {
            (1u128 << n) - 1
        }
    }
    #[inline]
    fn is_empty(self) -> bool {
        self == 0
    }
    #[inline]
    fn first(self) -> Option<usize> {
        (self != 0).then(|| self.trailing_zeros() as usize)
    }
    #[inline]
    fn last(self) -> Option<usize> {
        (self != 0).then(|| 127 - self.leading_zeros() as usize)
    }
    #[inline]
    fn count(self) -> usize {
        self.count_ones() as usize
    }
    #[inline]
    fn pop_first(&mut self) -> Option<usize> {
        if *self == 0 {
            return None;
        }
        let i = self.trailing_zeros() as usize;
        *self &= *self - 1;
        Some(i)
    }
    #[inline]
    fn has(self, i: usize) -> bool {
        self & (1u128 << i) != 0
    }
    #[inline]
    fn meets(self, other: Self) -> bool {
        self & other != 0
    }
    fn remove_shift(self, k: usize) -> Self {
        let low = Self::below(k);
        (self & low) | ((self >> 1) & !low)
    }
}

/// A bit set of `64 · W` indices: `W` little-endian 64-bit words (index `i`
/// is bit `i mod 64` of word `i / 64`). `Copy`, like `u128`, so the engines
/// pass sets by value whatever their width.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Words<const W: usize>(pub [u64; W]);

// SAFETY: a transparent wrapper of an array of `u64`: no padding, every bit
// pattern valid, all zeroes the empty set.
unsafe impl<const W: usize> bytemuck::Zeroable for Words<W> {}
// SAFETY: as above.
unsafe impl<const W: usize> bytemuck::Pod for Words<W> {}

impl<const W: usize> Default for Words<W> {
    fn default() -> Self {
        Self([0; W])
    }
}

impl<const W: usize> Debug for Words<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(members(*self)).finish()
    }
}

macro_rules! words_op {
    ($Op:ident, $op:ident, $OpAssign:ident, $op_assign:ident, $sym_assign:tt) => {
        impl<const W: usize> $Op for Words<W> {
            type Output = Self;
            #[inline]
            fn $op(mut self, rhs: Self) -> Self {
                for (a, b) in self.0.iter_mut().zip(rhs.0) {
                    *a $sym_assign b;
                }
                self
            }
        }
        impl<const W: usize> $OpAssign for Words<W> {
            #[inline]
            fn $op_assign(&mut self, rhs: Self) {
                for (a, b) in self.0.iter_mut().zip(rhs.0) {
                    *a $sym_assign b;
                }
            }
        }
    };
}
words_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &=);
words_op!(BitOr, bitor, BitOrAssign, bitor_assign, |=);
words_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^=);

impl<const W: usize> Not for Words<W> {
    type Output = Self;
    #[inline]
    fn not(mut self) -> Self {
        for a in &mut self.0 {
            *a = !*a;
        }
        self
    }
}

impl<const W: usize> Bits for Words<W> {
    const CAPACITY: usize = 64 * W;
    const EMPTY: Self = Words([0; W]);
    const FULL: Self = Words([u64::MAX; W]);
    #[inline]
    fn bit(i: usize) -> Self {
        let mut s = Self::EMPTY;
        s.0[i / 64] = 1 << (i % 64);
        s
    }
    fn below(n: usize) -> Self {
        let mut s = Self::EMPTY;
        for (k, w) in s.0.iter_mut().enumerate() {
            let lo = 64 * k;
            *w = if n >= lo + 64 {
                u64::MAX
            } else if n > lo {
                (1 << (n - lo)) - 1
            } else {
                0
            };
        }
        s
    }
    #[inline]
    fn is_empty(self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
    #[inline]
    fn first(self) -> Option<usize> {
        let k = self.0.iter().position(|&w| w != 0)?;
        Some(64 * k + self.0[k].trailing_zeros() as usize)
    }
    #[inline]
    fn last(self) -> Option<usize> {
        let k = self.0.iter().rposition(|&w| w != 0)?;
        Some(64 * k + 63 - self.0[k].leading_zeros() as usize)
    }
    fn count(self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
    #[inline]
    fn has(self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 != 0
    }
    #[inline]
    fn meets(self, other: Self) -> bool {
        self.0.iter().zip(other.0).any(|(a, b)| a & b != 0)
    }
    fn remove_shift(self, k: usize) -> Self {
        let low = Self::below(k);
        let mut down = Self::EMPTY;
        for i in 0..W {
            let carry = if i + 1 < W { self.0[i + 1] << 63 } else { 0 };
            down.0[i] = (self.0[i] >> 1) | carry;
        }
        (self & low) | (down & !low)
    }
}

/// Run `$body` with the type name `$S` bound to the narrowest [`Bits`] that
/// holds `$n` events; `$too_many` (an expression) if `$n` exceeds
/// [`MAX_EVENTS`]. The one place where the widths are chosen: each arm
/// instantiates the engines once more, so the ladder is short (a set at most
/// 4–8 times wider than needed, and every arm a power of two in words).
#[macro_export]
macro_rules! with_width {
    ($n:expr, $S:ident => $body:expr, $too_many:expr) => {{
        let n: usize = $n;
        if n <= 128 {
            type $S = u128;
            $body
        } else if n <= 512 {
            type $S = $crate::rel::Words<8>;
            $body
        } else if n <= $crate::rel::MAX_EVENTS {
            type $S = $crate::rel::Words<{ $crate::rel::WIDEST_WORDS }>;
            $body
        } else {
            $too_many
        }
    }};
}

/// A growable set of indices, for the sets made before the event count is
/// known (unfolding a thread's paths, [`crate::ax::unfold`]). Its words are
/// trimmed (no trailing zero word), so equal sets are equal values.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Grow(smallvec::SmallVec<[u64; 2]>);

impl Debug for Grow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.members()).finish()
    }
}

impl Grow {
    /// The empty set.
    pub fn new() -> Grow {
        Grow::default()
    }
    /// The singleton `{i}`.
    pub fn single(i: usize) -> Grow {
        let mut s = Grow::new();
        s.insert(i);
        s
    }
    /// Add `i`.
    pub fn insert(&mut self, i: usize) {
        if self.0.len() <= i / 64 {
            self.0.resize(i / 64 + 1, 0);
        }
        self.0[i / 64] |= 1 << (i % 64);
    }
    /// `self ∪= other`.
    pub fn union_with(&mut self, other: &Grow) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
    /// `self ∪ other`.
    pub fn union(mut self, other: &Grow) -> Grow {
        self.union_with(other);
        self
    }
    /// Whether `i` is a member.
    pub fn has(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 != 0)
    }
    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The members, in increasing order.
    pub fn members(&self) -> impl Iterator<Item = usize> + '_ {
        self.0
            .iter()
            .enumerate()
            .flat_map(|(k, &w)| members(w as u128).map(move |i| 64 * k + i))
    }
    /// The set after index `k` is removed and later indices move down by one
    /// (see [`Bits::remove_shift`]).
    pub fn remove_shift(&self, k: usize) -> Grow {
        let mut out = Grow::new();
        for i in self.members() {
            if i < k {
                out.insert(i);
            } else if i > k {
                out.insert(i - 1);
            }
        }
        out
    }
    /// The same set at width `S`, for the execution it has been placed in
    /// with its indices moved up by `offset` (every member + `offset` must be
    /// below `S::CAPACITY`).
    pub fn to_bits<S: Bits>(&self, offset: usize) -> S {
        self.members().fold(S::EMPTY, |m, i| m | S::bit(offset + i))
    }
}

/// Iterate over the members of a set, in increasing order.
#[inline]
pub fn members<S: Bits>(mut s: S) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || s.pop_first())
}

/// The singleton `{i}`.
#[inline]
pub fn bit<S: Bits>(i: usize) -> S {
    S::bit(i)
}

/// Whether the relation whose row `i` is `rows[i]` has a cycle.
///
/// Depth-first search over bit rows, each edge followed once: a successor
/// still on the search path closes a cycle; a finished event leads to none.
/// The oracle asks this once per candidate coherence order, so it must not
/// allocate nor close the relation (Warshall is n² row operations every
/// time).
pub fn rows_have_cycle<S: Bits>(rows: &[S]) -> bool {
    debug_assert!(rows.len() <= S::CAPACITY);
    let mut finished = S::EMPTY;
    let mut on_path = S::EMPTY;
    // The path: each event with the successors it has not followed yet.
    let mut path: smallvec::SmallVec<[(usize, S); 32]> = smallvec::SmallVec::new();
    for (start, &row) in rows.iter().enumerate() {
        if row.is_empty() || finished.has(start) {
            continue;
        }
        path.push((start, row));
        on_path |= bit(start);
        while let Some((v, rest)) = path.last_mut() {
            let todo = *rest & !finished;
            let mut rest_todo = todo;
            let Some(w) = rest_todo.pop_first() else {
                on_path &= !S::bit(*v);
                finished |= bit(*v);
                path.pop();
                continue;
            };
            *rest = rest_todo;
            if on_path.has(w) {
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
pub fn has_cycle_within<S: Bits>(rows: &[S], within: S) -> bool {
    let mut left = within;
    loop {
        let before = left;
        let mut todo = left;
        while let Some(v) = todo.last() {
            todo ^= bit(v);
            if !rows[v].meets(left) {
                left ^= bit(v);
            }
        }
        if left.is_empty() {
            return false;
        }
        if left == before {
            return true;
        }
    }
}

/// A relation on `n <= S::CAPACITY` events.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rel<S: Bits> {
    rows: Vec<S>,
}

impl<S: Bits> Rel<S> {
    /// The empty relation on `n` events.
    pub fn empty(n: usize) -> Rel<S> {
        debug_assert!(n <= S::CAPACITY);
        Rel {
            rows: vec![S::EMPTY; n],
        }
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
        self.rows[i].has(j)
    }
    /// The successors of `i`.
    pub fn row(&self, i: usize) -> S {
        self.rows[i]
    }
    /// Replace the successors of `i`.
    pub fn set_row(&mut self, i: usize, s: S) {
        self.rows[i] = s;
    }
    /// `self ∪= other`.
    pub fn union_with(&mut self, other: &Rel<S>) {
        for (a, b) in self.rows.iter_mut().zip(&other.rows) {
            *a |= *b;
        }
    }
    /// `self ∩ other`.
    pub fn intersect(&self, other: &Rel<S>) -> Rel<S> {
        Rel {
            rows: self
                .rows
                .iter()
                .zip(&other.rows)
                .map(|(&a, &b)| a & b)
                .collect(),
        }
    }
    /// `self ; other`.
    pub fn compose(&self, other: &Rel<S>) -> Rel<S> {
        let rows = self
            .rows
            .iter()
            .map(|&r| members(r).fold(S::EMPTY, |acc, k| acc | other.rows[k]))
            .collect();
        Rel { rows }
    }
    /// The inverse relation.
    pub fn inverse(&self) -> Rel<S> {
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
            if rk.is_empty() {
                continue; // nothing to pass on
            }
            for i in 0..n {
                if self.rows[i].has(k) {
                    self.rows[i] |= rk;
                }
            }
        }
    }
    /// Transitive closure, in place, of a relation whose every pair lies in
    /// `within`: Warshall over those events alone (the oracle's coherence
    /// relates a dozen writes among tens of events).
    pub fn close_within(&mut self, within: S) {
        debug_assert!(self.pairs().all(|(i, j)| within.has(i) && within.has(j)));
        for k in members(within) {
            let rk = self.rows[k];
            if rk.is_empty() {
                continue; // nothing to pass on
            }
            for i in members(within) {
                if self.rows[i].has(k) {
                    self.rows[i] |= rk;
                }
            }
        }
    }
    /// The transitive closure.
    pub fn closure(&self) -> Rel<S> {
        let mut c = self.clone();
        c.close();
        c
    }
    /// Add `(a, b)` to a transitively closed relation and keep it closed.
    pub fn add_closed(&mut self, a: usize, b: usize) {
        let add = S::bit(b) | self.rows[b];
        for i in 0..self.rows.len() {
            if i == a || self.rows[i].has(a) {
                self.rows[i] |= add;
            }
        }
    }
    /// For a transitively closed relation: whether it is irreflexive (acyclic).
    pub fn closed_is_acyclic(&self) -> bool {
        self.rows.iter().enumerate().all(|(i, &r)| !r.has(i))
    }
    /// Whether the relation (closed or not) has a cycle.
    pub fn has_cycle(&self) -> bool {
        rows_have_cycle(&self.rows)
    }
    /// Whether `to` is reachable from `from` in one or more steps.
    pub fn reaches(&self, from: usize, to: usize) -> bool {
        let mut seen = S::EMPTY;
        let mut frontier = self.rows[from];
        while !(frontier & !seen).is_empty() {
            if frontier.has(to) {
                return true;
            }
            let new = frontier & !seen;
            seen |= new;
            frontier = members(new).fold(frontier, |acc, k| acc | self.rows[k]);
        }
        frontier.has(to)
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

    /// A xorshift stream, so the tests are the same on every run.
    fn stream(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Every set operation at width `S` on `n` events, against a vector of
    /// booleans.
    fn set_ops<S: Bits>(n: usize) {
        assert!(n <= S::CAPACITY);
        let mut next = stream(0x9e37_79b9_7f4a_7c15 ^ n as u64);
        let mut random = |density: u64| -> (S, Vec<bool>) {
            let model: Vec<bool> = (0..n).map(|_| next() % 100 < density).collect();
            let set = (0..n)
                .filter(|&i| model[i])
                .fold(S::EMPTY, |m, i| m | bit(i));
            (set, model)
        };
        let all = S::below(n);
        assert_eq!(members(all).collect::<Vec<_>>(), (0..n).collect::<Vec<_>>());
        assert_eq!(members(S::FULL).count(), S::CAPACITY);
        assert!(S::EMPTY.is_empty() && S::below(0).is_empty());
        for density in [0, 1, 10, 50, 100] {
            let (a, ma) = random(density);
            let (b, mb) = random(50);
            let listed = |m: &[bool]| (0..n).filter(|&i| m[i]).collect::<Vec<_>>();
            assert_eq!(members(a).collect::<Vec<_>>(), listed(&ma), "n={n}");
            assert_eq!(a.count(), listed(&ma).len());
            assert_eq!(a.first(), listed(&ma).first().copied());
            assert_eq!(a.last(), listed(&ma).last().copied());
            assert_eq!(a.is_empty(), listed(&ma).is_empty());
            for i in 0..n {
                assert_eq!(a.has(i), ma[i]);
                assert_eq!((a & b).has(i), ma[i] && mb[i]);
                assert_eq!((a | b).has(i), ma[i] || mb[i]);
                assert_eq!((a ^ b).has(i), ma[i] != mb[i]);
                assert_eq!((!a & all).has(i), !ma[i]);
            }
            assert_eq!(a.meets(b), (0..n).any(|i| ma[i] && mb[i]));
            let mut c = a;
            c |= b;
            c &= !b;
            c ^= b;
            assert_eq!(c, a | b);
            let mut p = a;
            let popped: Vec<usize> = std::iter::from_fn(|| p.pop_first()).collect();
            assert_eq!(popped, listed(&ma));
            for k in [0, n / 3, n - 1] {
                let mut m = ma.clone();
                m.remove(k);
                assert_eq!(
                    members(a.remove_shift(k)).collect::<Vec<_>>(),
                    (0..m.len()).filter(|&i| m[i]).collect::<Vec<_>>(),
                    "k={k}"
                );
            }
        }
    }

    #[test]
    fn set_operations_at_every_width() {
        // The widths the issue names: one word, two, one past two, and a
        // 2,000-event kernel; each at the type `with_width!` picks for it,
        // and the wide types also at a size the plain `u128` takes.
        for n in [1usize, 64, 128, 129, 511, 512, 513, 2000, MAX_EVENTS] {
            with_width!(n, S => set_ops::<S>(n), panic!("{n} events fit"));
        }
        set_ops::<Words<1>>(64);
        set_ops::<Words<2>>(128);
        set_ops::<Words<3>>(129);
        set_ops::<Words<32>>(2000);
        set_ops::<Words<8>>(100);
        assert!(with_width!(MAX_EVENTS + 1, S => S::CAPACITY == 0, true));
        assert_eq!(with_width!(129, S => S::CAPACITY, 0), 512);
        assert_eq!(with_width!(128, S => S::CAPACITY, 0), 128);
    }

    #[test]
    fn grow_sets() {
        let mut g = Grow::new();
        assert!(g.is_empty());
        for i in [3, 200, 64, 1999] {
            g.insert(i);
        }
        assert_eq!(g.members().collect::<Vec<_>>(), vec![3, 64, 200, 1999]);
        assert!(g.has(200) && !g.has(201) && !g.has(5000));
        assert_eq!(
            g.remove_shift(64).members().collect::<Vec<_>>(),
            vec![3, 199, 1998]
        );
        let u = Grow::single(7).union(&g);
        assert_eq!(u.members().count(), 5);
        let s: Words<32> = g.to_bits(1);
        assert_eq!(members(s).collect::<Vec<_>>(), vec![4, 65, 201, 2000]);
        // Trimmed: the same set built two ways is one value.
        assert_eq!(
            Grow::single(1),
            Grow::single(100).remove_shift(100).union(&Grow::single(1))
        );
    }

    fn closure_and_cycles_at<S: Bits>(sizes: &[usize]) {
        let mut r = Rel::<S>::empty(4);
        r.add(0, 1);
        r.add(1, 2);
        assert!(!r.has_cycle());
        let c = r.closure();
        assert!(c.has(0, 2) && !c.has(2, 0));
        assert!(r.reaches(0, 2) && !r.reaches(2, 0));
        r.add(2, 0);
        assert!(r.has_cycle());
        // Against the closure, on relations of every density.
        let mut next = stream(0x9e37_79b9_7f4a_7c15);
        for &n in sizes {
            for density in [1u64, 3, 10, 40] {
                let mut r = Rel::<S>::empty(n);
                for i in 0..n {
                    for j in 0..n {
                        if next() % (4 * n as u64) < density {
                            r.add(i, j);
                        }
                    }
                }
                assert_eq!(r.has_cycle(), !r.closure().closed_is_acyclic(), "n={n}");
                // Restricted to a part of the events: the same as the
                // relation with every other row and column cleared.
                let within = (0..n)
                    .filter(|i| i % 3 != 1)
                    .fold(S::EMPTY, |m, i| m | bit(i));
                let mut part = Rel::<S>::empty(n);
                for (i, j) in r.pairs().filter(|&(i, j)| within.has(i) && within.has(j)) {
                    part.add(i, j);
                }
                assert_eq!(has_cycle_within(&r.rows, within), part.has_cycle(), "n={n}");
                assert!(!has_cycle_within(&r.rows, S::EMPTY));
                let mut closed_part = part.clone();
                closed_part.close_within(within);
                assert_eq!(closed_part, part.closure(), "n={n}");
                // Its forward edges alone: acyclic, however deep.
                let mut dag = Rel::<S>::empty(n);
                for (i, j) in r.pairs().filter(|&(i, j)| i < j) {
                    dag.add(i, j);
                }
                assert!(!dag.has_cycle(), "n={n}");
                // Composition and inverse, pair by pair.
                let rr = r.compose(&r);
                for i in 0..n.min(40) {
                    for j in 0..n.min(40) {
                        let two = (0..n).any(|k| r.has(i, k) && r.has(k, j));
                        assert_eq!(rr.has(i, j), two);
                        assert_eq!(r.inverse().has(j, i), r.has(i, j));
                    }
                }
            }
        }
        let mut self_loop = Rel::<S>::empty(3);
        self_loop.add(1, 1);
        assert!(self_loop.has_cycle());
        let mut c = Rel::<S>::empty(4);
        c.add(0, 1);
        c.close();
        c.add_closed(1, 3);
        assert!(c.has(0, 3) && c.has(1, 3) && !c.has(3, 0));
        c.add_closed(3, 0);
        assert!(!c.closed_is_acyclic());
    }

    #[test]
    fn closure_and_cycles() {
        closure_and_cycles_at::<u128>(&[1, 2, 5, 17, 64, 128]);
        closure_and_cycles_at::<Words<8>>(&[1, 5, 129, 300]);
    }

    #[test]
    fn long_chains_at_2000_events() {
        // A program-order chain of 2,000 events: acyclic, and one back edge
        // closes a cycle through all of them (the search path is 2,000 deep).
        type S = Words<WIDEST_WORDS>;
        let n = 2000;
        let mut r = Rel::<S>::empty(n);
        for i in 0..n - 1 {
            r.add(i, i + 1);
        }
        assert!(!r.has_cycle());
        assert!(r.reaches(0, n - 1) && !r.reaches(n - 1, 0));
        assert!(!has_cycle_within(&r.rows, S::below(n)));
        r.add(n - 1, 0);
        assert!(r.has_cycle());
        assert!(has_cycle_within(&r.rows, S::below(n)));
        assert!(!has_cycle_within(&r.rows, S::below(n - 1)));
    }

    #[test]
    fn compose_and_inverse() {
        let mut a = Rel::<u128>::empty(3);
        a.add(0, 1);
        let mut b = Rel::empty(3);
        b.add(1, 2);
        let ab = a.compose(&b);
        assert_eq!(ab.pairs().collect::<Vec<_>>(), vec![(0, 2)]);
        assert_eq!(ab.inverse().pairs().collect::<Vec<_>>(), vec![(2, 0)]);
        assert_eq!(members(0b1011u128).collect::<Vec<_>>(), vec![0, 1, 3]);
    }
}
