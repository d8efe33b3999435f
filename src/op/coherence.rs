//! Completing coherence. With [`Coherence::Lazy`](super::Coherence) the
//! machine orders two morally strong writes of a location only where an
//! axiom forces it (causality at a store's retirement, the obligations of a
//! read's retirement); the rest of the order is left open. A final state then
//! stands for every *consistent completion* of its coherence: an orientation
//! of each morally strong pair still unordered such that the order stays
//! acyclic and every check of [`Machine::co_check`] holds (obligations,
//! atomicity, SC per location). The final values of a location are those of
//! the versions that end some completion (`docs/machine.md`, "Lazy
//! coherence").
//!
//! Every check relates events of one location, so each location is completed
//! on its own, and a location with nothing left to order (always so in the
//! eager machine) costs nothing.

use smallvec::SmallVec;

use crate::rel::{Bits, bit, members};

use super::state::State;
use super::{Machine, add_co_in};

/// A coherence order being completed (rows per slot, closed).
type Rows<S> = SmallVec<[S; 32]>;

/// The most location parts [`Machine::maxima`] remembers (a few hundred
/// bytes each), so that the memo stays a small part of a run's memory.
const MEMO_LIMIT: usize = 1 << 20;

/// Remembered [`Machine::maxima`] per location part of a state.
pub(super) type MaximaMemo<S> = dashmap::DashMap<Box<[u8]>, S, fxhash::FxBuildHasher>;

impl<S: Bits> Machine<'_, S> {
    /// The morally strong pairs of versions of `loc` that `st` leaves unordered.
    pub(super) fn open_pairs(&self, st: &State<S>, loc: usize) -> SmallVec<[(usize, usize); 8]> {
        let l = &self.layout;
        let vs = st.versions & l.loc_slots[loc];
        let mut pairs = SmallVec::new();
        for a in members(vs) {
            for b in members(vs & l.ms[a] & !S::below(a + 1)) {
                if !st.co[a].has(b) && !st.co[b].has(a) {
                    pairs.push((a, b));
                }
            }
        }
        pairs
    }

    /// The versions of `loc` that end some consistent completion of `st`'s
    /// coherence, one per value (the least slot of each): the versions a
    /// final read of `loc` may show. Empty when no completion is consistent.
    pub fn maxima(&self, st: &State<S>, loc: usize) -> S {
        let pairs = self.open_pairs(st, loc);
        if pairs.is_empty() {
            return self.maxima_of(st, loc, &pairs);
        }
        // The answer depends only on the location's part of the state, which
        // many final states share: remember it.
        let key = self.projection(st, loc);
        if let Some(m) = self.maxima_memo.get(&key) {
            return *m;
        }
        let m = self.maxima_of(st, loc, &pairs);
        // An interrupted search may have given up on a completion: not an answer to keep.
        if self.maxima_memo.len() < MEMO_LIMIT && !self.interrupted() {
            self.maxima_memo.insert(key, m);
        }
        m
    }

    /// The part of `st` that [`Machine::maxima`] of `loc` reads, as bytes:
    /// the location's versions with their coherence rows, obligations and
    /// values, its bound reads with what they read, the program-order
    /// positions of its events, and which of them retired.
    fn projection(&self, st: &State<S>, loc: usize) -> Box<[u8]> {
        let here = self.layout.loc_slots[loc];
        let vs = st.versions & here;
        let nodes = (st.versions | st.bound | st.retired) & here;
        let mut b: Vec<u8> = Vec::with_capacity(64 + 48 * nodes.count());
        b.extend_from_slice(&(loc as u32).to_le_bytes());
        for s in [vs, st.bound & here, st.retired & here] {
            b.extend_from_slice(bytemuck::bytes_of(&s));
        }
        for v in members(nodes) {
            b.extend_from_slice(&st.seq[v].to_le_bytes());
            b.extend_from_slice(&st.rf[v].to_le_bytes());
            if vs.has(v) {
                b.extend_from_slice(bytemuck::bytes_of(&(st.co[v] & here)));
                b.extend_from_slice(bytemuck::bytes_of(&(st.never_below[v] & here)));
                b.extend_from_slice(&st.value[v].to_le_bytes());
            }
        }
        b.into_boxed_slice()
    }

    /// [`Machine::maxima`], computed.
    ///
    /// On a *total* location (generic accesses to one address, no RMW,
    /// pairwise morally strong) every completion is consistent, so the
    /// versions nothing follows are the answer, with no check: the state's
    /// coherence already holds every edge an axiom forces there — A1's at
    /// each store's retirement, A6's at each read's, and these cover the
    /// short cycles of SC per location through program order, because on
    /// such a location program order is in causality and so is a read's
    /// source before what follows the read — and the oracle's
    /// `docs/oracle.md`, "Forced coherence and total locations", shows that
    /// every extension of such an order is consistent. `tests/explorer.rs`
    /// and `tests/differential.rs` check it against eager coherence.
    fn maxima_of(&self, st: &State<S>, loc: usize, pairs: &[(usize, usize)]) -> S {
        let vs = st.versions & self.layout.loc_slots[loc];
        let mut out: S = S::EMPTY;
        let mut values: SmallVec<[crate::ir::Value; 8]> = SmallVec::new();
        let total = self.total_loc[loc];
        for w in members(vs) {
            if st.co[w].meets(vs) || values.contains(&st.value[w]) {
                continue; // something follows it, or its value is known possible
            }
            let ok = if pairs.is_empty() || total {
                // Nothing to order: the state's own checks stand.
                true
            } else {
                // Every morally strong version goes before w.
                let mut co: Rows<S> = SmallVec::from_slice(&st.co);
                for u in members(vs & self.layout.ms[w]) {
                    if u != w && !co[u].has(w) {
                        add_co_in(st.versions, &mut co, u, w);
                    }
                }
                !co[w].meets(vs) && self.completes(st, &mut co, loc, pairs, Some((w, vs)))
            };
            if ok {
                out |= bit(w);
                values.push(st.value[w]);
            }
        }
        out
    }

    /// Whether some consistent completion of `st`'s coherence of `loc` puts
    /// no version of `avoid` after version `w` (the fairness check of a
    /// spinning read that returns `w`, `hang.rs`): every morally strong
    /// version of `avoid` still unordered with `w` goes before it.
    pub(super) fn can_stay_above(&self, st: &State<S>, loc: usize, w: usize, avoid: S) -> bool {
        let vs = st.versions & self.layout.loc_slots[loc];
        let avoid = avoid & vs & !S::bit(w);
        if st.co[w].meets(avoid) {
            return false;
        }
        let pairs = self.open_pairs(st, loc);
        if pairs.is_empty() {
            return true;
        }
        let mut co: Rows<S> = SmallVec::from_slice(&st.co);
        for u in members(avoid & self.layout.ms[w]) {
            if !co[u].has(w) {
                add_co_in(st.versions, &mut co, u, w);
            }
        }
        !co[w].meets(avoid) && self.completes(st, &mut co, loc, &pairs, Some((w, avoid)))
    }

    /// Whether every location's coherence has a consistent completion (in
    /// the eager machine, or with nothing left to order, the state's own
    /// checks decide, and they hold in every state the machine keeps).
    pub fn completable(&self, st: &State<S>) -> bool {
        (0..self.program.locations.len()).all(|loc| {
            let pairs = self.open_pairs(st, loc);
            pairs.is_empty() || {
                let mut co: Rows<S> = SmallVec::from_slice(&st.co);
                self.completes(st, &mut co, loc, &pairs, None)
            }
        })
    }

    /// Whether orienting the pairs of `pairs` still unordered in `co` can
    /// give a consistent coherence of `loc`, with `last = (w, avoid)`: no
    /// version of `avoid` after `w` (`avoid` all versions: `w` maximal).
    ///
    /// First one completion, checked once: every pair still open oriented
    /// along one linear extension of `co` that ends with `last`
    /// ([`one_completion`]). The checks only ever fail on edges an axiom
    /// forbids, and on a location whose accesses are pairwise morally
    /// strong the machine's retirements have already added the edges the
    /// axioms force (A1 at a store's retirement, A6's at a read's), so
    /// there this completion almost always works and the answer costs one
    /// check instead of one per pair (30 writers of one location: 435
    /// pairs). If it fails, the depth-first search decides: the answer is
    /// exact either way.
    pub(super) fn completes(
        &self,
        st: &State<S>,
        co: &mut Rows<S>,
        loc: usize,
        pairs: &[(usize, usize)],
        last: Option<(usize, S)>,
    ) -> bool {
        let vs = st.versions & self.layout.loc_slots[loc];
        if last.is_some_and(|(w, avoid)| co[w].meets(avoid)) {
            return false;
        }
        let first = one_completion(co, vs, pairs, last.map(|(w, _)| w));
        if last.is_none_or(|(w, avoid)| !first[w].meets(avoid))
            && self.co_check_with(st, &first, loc).is_ok()
        {
            return true;
        }
        self.completes_dfs(st, co, loc, pairs, last)
    }

    /// [`Machine::completes`] by depth-first search, stopping at the first
    /// completion that works; every check only gets harder as `co` grows,
    /// so a failing partial order prunes.
    fn completes_dfs(
        &self,
        st: &State<S>,
        co: &mut Rows<S>,
        loc: usize,
        pairs: &[(usize, usize)],
        last: Option<(usize, S)>,
    ) -> bool {
        if self.interrupted()
            || last.is_some_and(|(w, avoid)| co[w].meets(avoid))
            || self.co_check_with(st, co, loc).is_err()
        {
            return false;
        }
        let Some(k) = pairs
            .iter()
            .position(|&(a, b)| !co[a].has(b) && !co[b].has(a))
        else {
            return true;
        };
        let (a, b) = pairs[k];
        for (x, y) in [(a, b), (b, a)] {
            let mut c = co.clone();
            add_co_in(st.versions, &mut c, x, y);
            if self.completes_dfs(st, &mut c, loc, &pairs[k + 1..], last) {
                return true;
            }
        }
        false
    }
}

/// `co` (closed, acyclic on the versions `vs`) with every pair of `pairs`
/// it leaves open oriented along one linear extension, `last` (maximal in
/// `co`) placed at its end; closed again. Kahn's order over bit rows, then
/// one pass in reverse order to close: n² word operations, where orienting
/// pair by pair with a closed insertion costs one row pass per pair.
fn one_completion<S: Bits>(
    co: &Rows<S>,
    vs: S,
    pairs: &[(usize, usize)],
    last: Option<usize>,
) -> Rows<S> {
    let mut preds: SmallVec<[S; 32]> = SmallVec::from_elem(S::EMPTY, co.len());
    for u in members(vs) {
        for v in members(co[u] & vs) {
            preds[v] |= bit(u);
        }
    }
    let mut order: SmallVec<[usize; 32]> = SmallVec::new();
    let mut pos: SmallVec<[usize; 32]> = SmallVec::from_elem(0, co.len());
    let mut left = vs;
    while !left.is_empty() {
        let free = members(left).filter(|&v| !preds[v].meets(left));
        let mut pick = None;
        for v in free {
            pick = Some(v);
            if Some(v) != last {
                break;
            }
        }
        // `co` is acyclic in every state the machine keeps; were it not, the
        // check of the unchanged order reports the cycle.
        let Some(v) = pick else {
            return co.clone();
        };
        pos[v] = order.len();
        order.push(v);
        left &= !S::bit(v);
    }
    let mut out = co.clone();
    for &(a, b) in pairs {
        if !out[a].has(b) && !out[b].has(a) {
            if pos[a] < pos[b] {
                out[a] |= bit(b);
            } else {
                out[b] |= bit(a);
            }
        }
    }
    for &v in order.iter().rev() {
        let mut row = out[v];
        for u in members(out[v] & vs) {
            row |= out[u];
        }
        out[v] = row;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    type S = u128;

    /// On random closed partial orders: the completion contains `co`,
    /// orients every pair asked, stays closed and acyclic, and keeps `last`
    /// at the end.
    #[test]
    fn one_completion_is_a_closed_linear_extension() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..500 {
            let n = 2 + (next() % 12) as usize;
            let vs: S = (0..n).fold(S::EMPTY, |m, i| m | S::bit(i));
            // A random DAG along the indices, closed.
            let mut co: Rows<S> = SmallVec::from_elem(0, n);
            for a in 0..n {
                for b in a + 1..n {
                    if next() % 4 == 0 {
                        add_co_in(vs, &mut co, a, b);
                    }
                }
            }
            let pairs: Vec<(usize, usize)> = (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .filter(|_| next() % 3 != 0)
                .collect();
            let last = members(vs).find(|&w| co[w].is_empty() && next() % 2 == 0);
            let out = one_completion(&co, vs, &pairs, last);
            for v in 0..n {
                assert_eq!(out[v] & co[v], co[v], "contains co");
                assert!(!out[v].has(v), "acyclic");
                for u in members(out[v]) {
                    assert_eq!(out[u] & out[v], out[u], "closed");
                }
            }
            for &(a, b) in &pairs {
                assert!(out[a].has(b) || out[b].has(a), "oriented");
            }
            if let Some(w) = last {
                assert_eq!(out[w], 0, "last stays maximal");
            }
        }
    }
}
