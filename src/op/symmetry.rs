//! Symmetry reduction over interchangeable threads (the scalarsets of
//! Murphi and SPIN; `docs/exploration.md`, "Symmetry").
//!
//! Kernels run many threads that do the same thing, each on a slot of its
//! own: the machine's states then come in orbits of states that differ only
//! by which of those threads did what. [`Symmetry::detect`] finds *groups*
//! of threads that are interchangeable, each with the locations it owns
//! privately; [`Symmetry::encode`] lays a state down as the bytes of a
//! representative of its orbit, so the explorer remembers one state per
//! orbit; [`Symmetry::expand`] gives back, from the final states found, every
//! final state of their orbits, so the outcome set is the unreduced one.
//!
//! **Which threads (conservative; any doubt, no group).** The whole program
//! is loop-free, has no agent thread, and uses only loads, stores,
//! read-modify-writes, unrestricted thread fences, register moves,
//! arithmetic and branches (so no barrier, mbarrier, proxy fence, asynchronous
//! copy: nothing blocks, nothing hangs, nothing is undefined, and nothing
//! names a thread or a CTA but its events' placement). A location is
//! *private* to a thread when only that thread writes it, nobody reads it
//! (no load, no read-modify-write), it has one name (no alias, no proxy
//! reference), it holds data, and each of its writes stores a constant. Two
//! threads are interchangeable when their code is the same instruction for
//! instruction once the private locations of one are renamed to those of
//! the other (the constants stored there may differ: they are relabelled
//! with the location, one-to-one), their registers start alike, neither is
//! a lane of a warp, each stands to every other thread as the other does
//! (same GPU, cluster, CTA or not), the members of a group stand to each
//! other alike, and the machine's static tables (every slot's kind,
//! semantics, scope, moral strength, what a release publishes) are mapped
//! onto themselves by swapping them.
//!
//! **Why it keeps every outcome.** A private location's values flow nowhere
//! (nobody reads them) but to its final-state column; in a reachable state
//! each version of it holds its store's constant, so a state is determined
//! by everything else, and the encoding leaves those values out. Up to them,
//! the machine's transitions commute with swapping a group's members
//! (threads, their event slots and their private locations together): every
//! rule reads the program only through the code and the static tables, which
//! the swap maps onto themselves. The explorer expands only real states and
//! skips a state whose encoding it has seen, i.e. one that is a permutation
//! of a stored state; the final states reachable from a permuted state are
//! the permuted final states (columns of the members' registers and private
//! locations moved, private values relabelled). By induction on the length
//! of the longest run from a stored state, every final state reachable from
//! it has a permutation among those found (the partial-order reduction keeps
//! every final state reachable from any state, and a skipped successor's
//! final states are permutations of its stored twin's). The initial state is
//! its own permutation, so the final states of the program are closed under
//! the group, and closing the found ones gives exactly them.

use std::collections::HashMap;

use smallvec::SmallVec;

use crate::ir::{Instr, LocKind, Operand, Program, Value};
use crate::outcome::{Columns, Outcomes};
use crate::rel::{Bits, bit, members};

use super::layout::{Layout, SlotKind};
use super::state::{NONE, State, View};

/// A group of interchangeable threads.
#[derive(Clone, Debug)]
struct Group {
    /// Member threads, ascending.
    threads: Vec<usize>,
    /// Per member, its *frame*: its event slots in slot order, then the
    /// initial slots of its private locations, in corresponding order (the
    /// `f`-th entries of two members correspond).
    frames: Vec<Vec<usize>>,
    /// Per member, its final-state columns in corresponding order: its
    /// registers, then its private locations.
    cols: Vec<Vec<usize>>,
    /// Per member and column: the relabelling of values into member 0's
    /// frame (`None`: a register, kept as it is).
    to0: Vec<Vec<Option<HashMap<Value, Value>>>>,
    /// The inverse relabelling, from member 0's frame.
    from0: Vec<Vec<Option<HashMap<Value, Value>>>>,
}

/// The symmetry groups of a machine's program.
#[derive(Clone, Debug)]
pub struct Symmetry<S: Bits = u128> {
    groups: Vec<Group>,
    /// Slots of private locations: their values are left out of the encoding.
    dead: S,
    /// Slots that some permutation moves.
    moving: S,
    /// `owner[s]`: (group, member, frame index) of a moving slot.
    owner: Vec<Option<(usize, usize, usize)>>,
}

/// How two threads stand to each other: same GPU, cluster, CTA.
fn relation(p: &Program, a: usize, b: usize) -> (bool, bool, bool) {
    let (x, y) = (p.threads[a].placement, p.threads[b].placement);
    (
        x.gpu == y.gpu,
        x.gpu == y.gpu && x.cluster == y.cluster,
        x.gpu == y.gpu && x.cta == y.cta,
    )
}

/// How member `b`'s code corresponds to member `a`'s.
struct Matching {
    /// `a`'s private locations in order of first use, and `b`'s counterparts.
    locs: Vec<(usize, usize)>,
    /// Per pair of `locs`: the values `a`'s location may hold, each with
    /// its counterpart in `b`'s.
    values: Vec<Vec<(Value, Value)>>,
}

impl<S: Bits> Symmetry<S> {
    /// The groups of the (lowered) program `p` laid out as `l`, final states
    /// in `columns`; `None` when there is none (then nothing is reduced).
    pub fn detect(p: &Program, l: &Layout<S>, columns: &Columns) -> Option<Symmetry<S>> {
        if p.threads.len() < 2 {
            return None;
        }
        let loop_free = l.loops.iter().all(|i| i.back_edge.iter().all(|b| !b));
        let simple = p
            .threads
            .iter()
            .all(|t| t.agent.is_none() && t.code.iter().all(Instr::is_plain));
        if !loop_free || !simple || !l.line_pairs.is_empty() {
            return None;
        }
        let private = Self::private_locations(p, l);
        let n = p.threads.len();
        let mut taken = vec![false; n];
        let mut groups = Vec::new();
        for a in 0..n {
            if taken[a] || p.threads[a].placement.warp.is_some() {
                continue;
            }
            let mut threads = vec![a];
            let mut matchings = vec![];
            // `b` names a thread (matching, placement) as well as indexing `taken`.
            #[allow(clippy::needless_range_loop)]
            for b in a + 1..n {
                if taken[b] || p.threads[b].placement.warp.is_some() {
                    continue;
                }
                if let Some(m) = Self::matching(p, &private, a, b) {
                    threads.push(b);
                    matchings.push(m);
                }
            }
            if threads.len() < 2 {
                continue;
            }
            let Some(g) = Self::group(p, l, columns, &private, threads, matchings) else {
                continue;
            };
            for &t in &g.threads {
                taken[t] = true;
            }
            groups.push(g);
        }
        if groups.is_empty() {
            return None;
        }
        let mut sym = Symmetry {
            dead: S::EMPTY,
            moving: S::EMPTY,
            owner: vec![None; l.len()],
            groups,
        };
        for (gi, g) in sym.groups.iter().enumerate() {
            for (mi, frame) in g.frames.iter().enumerate() {
                for (f, &s) in frame.iter().enumerate() {
                    sym.moving |= bit(s);
                    sym.owner[s] = Some((gi, mi, f));
                }
            }
        }
        for (loc, owner) in private.iter().enumerate() {
            if owner.is_some() {
                sym.dead |= l.loc_slots[loc];
            }
        }
        // Belt and braces: the static tables must be mapped onto themselves
        // by every transposition of a member with the first.
        for g in 0..sym.groups.len() {
            for m in 1..sym.groups[g].threads.len() {
                if !sym.invariant(p, l, g, m) {
                    return None;
                }
            }
        }
        Some(sym)
    }

    /// Threads in groups (for the counters).
    pub fn threads(&self) -> usize {
        self.groups.iter().map(|g| g.threads.len()).sum()
    }

    /// `private[loc]`: the thread the location is private to.
    fn private_locations(p: &Program, l: &Layout<S>) -> Vec<Option<usize>> {
        (0..p.locations.len())
            .map(|loc| {
                let here = l.loc_slots[loc] & !l.inits;
                let mut owner = None;
                for s in members(here) {
                    let info = &l.slots[s];
                    let t = info.thread?;
                    if *owner.get_or_insert(t) != t || info.kind != SlotKind::Store {
                        return None;
                    }
                    match &p.threads[t].code[info.pc] {
                        Instr::Store {
                            src: Operand::Imm(_),
                            ..
                        } => {}
                        _ => return None,
                    }
                }
                let names = p.addresses.iter().filter(|a| a.loc == loc).count();
                let ok = names == 1
                    && p.locations[loc].kind == LocKind::Data
                    && (l.loc_slots[loc] & l.reads).is_empty();
                if ok { owner } else { None }
            })
            .collect()
    }

    /// Whether `b`'s code is `a`'s with `a`'s private locations renamed.
    fn matching(p: &Program, private: &[Option<usize>], a: usize, b: usize) -> Option<Matching> {
        let (ta, tb) = (&p.threads[a], &p.threads[b]);
        if ta.code.len() != tb.code.len()
            || ta.regs.len() != tb.regs.len()
            || ta.regs.iter().zip(&tb.regs).any(|(x, y)| x.init != y.init)
            || ta.sites != tb.sites
        {
            return None;
        }
        // Every other thread stands to both alike.
        if (0..p.threads.len())
            .filter(|&v| v != a && v != b)
            .any(|v| relation(p, a, v) != relation(p, b, v))
        {
            return None;
        }
        let mut m = Matching {
            locs: Vec::new(),
            values: Vec::new(),
        };
        let loc_of = |addr: usize| p.addresses[addr].loc;
        for (ia, ib) in ta.code.iter().zip(&tb.code) {
            let access = |i: &Instr| match i {
                Instr::Load { access, .. }
                | Instr::Store { access, .. }
                | Instr::Rmw { access, .. } => Some(access.addr),
                _ => None,
            };
            let mut renamed = ib.clone();
            if let (Some(x), Some(y)) = (access(ia), access(ib)) {
                let (lx, ly) = (loc_of(x), loc_of(y));
                if x == y {
                    if private[lx].is_some() {
                        return None;
                    }
                } else {
                    if private[lx] != Some(a) || private[ly] != Some(b) {
                        return None;
                    }
                    let k = match m.locs.iter().position(|&(u, _)| u == lx) {
                        Some(k) if m.locs[k].1 == ly => k,
                        Some(_) => return None,
                        None => {
                            if m.locs.iter().any(|&(_, v)| v == ly) {
                                return None;
                            }
                            m.locs.push((lx, ly));
                            m.values
                                .push(vec![(p.locations[lx].init, p.locations[ly].init)]);
                            m.locs.len() - 1
                        }
                    };
                    match (ia, &mut renamed) {
                        (
                            Instr::Store {
                                src: Operand::Imm(u),
                                ..
                            },
                            Instr::Store { src, access },
                        ) => {
                            let Operand::Imm(v) = *src else { return None };
                            m.values[k].push((*u, v));
                            *src = Operand::Imm(*u);
                            access.addr = x;
                        }
                        _ => return None,
                    }
                }
            }
            if *ia != renamed {
                return None;
            }
        }
        // Every private location of each is used (it has a store), so the
        // renaming is onto; the values must correspond one to one.
        let own = |t: usize| private.iter().filter(|o| **o == Some(t)).count();
        if own(a) != m.locs.len() || own(b) != m.locs.len() {
            return None;
        }
        for vals in &m.values {
            for (i, x) in vals.iter().enumerate() {
                for y in &vals[..i] {
                    if (x.0 == y.0) != (x.1 == y.1) {
                        return None;
                    }
                }
            }
        }
        Some(m)
    }

    /// The group of `threads` (the first, and those matching it), if its
    /// members stand to each other alike.
    fn group(
        p: &Program,
        l: &Layout<S>,
        columns: &Columns,
        private: &[Option<usize>],
        threads: Vec<usize>,
        matchings: Vec<Matching>,
    ) -> Option<Group> {
        let rel = relation(p, threads[0], threads[1]);
        for (i, &a) in threads.iter().enumerate() {
            for &b in &threads[..i] {
                if relation(p, a, b) != rel {
                    return None;
                }
            }
        }
        let first_locs: Vec<usize> = match matchings.first() {
            Some(m) => m.locs.iter().map(|&(u, _)| u).collect(),
            None => return None,
        };
        debug_assert_eq!(
            first_locs.len(),
            private.iter().filter(|o| **o == Some(threads[0])).count()
        );
        let mut frames = Vec::new();
        let mut cols = Vec::new();
        let mut to0 = Vec::new();
        let mut from0 = Vec::new();
        for (i, &t) in threads.iter().enumerate() {
            let locs: Vec<usize> = if i == 0 {
                first_locs.clone()
            } else {
                matchings[i - 1].locs.iter().map(|&(_, v)| v).collect()
            };
            let mut frame: Vec<usize> = members(l.thread_slots[t]).collect();
            frame.extend(locs.iter().map(|&loc| {
                members(l.loc_slots[loc] & l.inits)
                    .next()
                    .expect("a location has an initial slot")
            }));
            let mut c = Vec::new();
            let mut fwd = Vec::new();
            let mut back = Vec::new();
            for r in 0..p.threads[t].regs.len() {
                c.push(columns.reg(t, r)?);
                fwd.push(None);
                back.push(None);
            }
            for (k, &loc) in locs.iter().enumerate() {
                c.push(columns.loc(loc)?);
                if i == 0 {
                    let id: HashMap<Value, Value> = matchings[0].values[k]
                        .iter()
                        .map(|&(u, _)| (u, u))
                        .collect();
                    fwd.push(Some(id.clone()));
                    back.push(Some(id));
                } else {
                    let vals = &matchings[i - 1].values[k];
                    fwd.push(Some(vals.iter().map(|&(u, v)| (v, u)).collect()));
                    back.push(Some(vals.iter().map(|&(u, v)| (u, v)).collect()));
                }
            }
            frames.push(frame);
            cols.push(c);
            to0.push(fwd);
            from0.push(back);
        }
        if frames.iter().any(|f| f.len() != frames[0].len()) {
            return None;
        }
        Some(Group {
            threads,
            frames,
            cols,
            to0,
            from0,
        })
    }

    /// Whether swapping member `m` of group `g` with its first member maps
    /// the layout's static tables onto themselves.
    fn invariant(&self, p: &Program, l: &Layout<S>, g: usize, m: usize) -> bool {
        let grp = &self.groups[g];
        let n = l.len();
        let mut sigma: Vec<usize> = (0..n).collect();
        for (&x, &y) in grp.frames[0].iter().zip(&grp.frames[m]) {
            sigma[x] = y;
            sigma[y] = x;
        }
        let mut locs: Vec<usize> = (0..p.locations.len()).collect();
        let mut vas: Vec<usize> = (0..p.addresses.len()).collect();
        for (&x, &y) in grp.frames[0].iter().zip(&grp.frames[m]) {
            let (sx, sy) = (&l.slots[x], &l.slots[y]);
            if sx.is_mem() && sy.is_mem() && sx.loc != sy.loc {
                locs[sx.loc] = sy.loc;
                locs[sy.loc] = sx.loc;
                vas[sx.va] = sy.va;
                vas[sy.va] = sx.va;
            }
        }
        // Sets may hold indices past the slots (a release that publishes
        // everything is the full set): those stay.
        let live = S::below(n);
        let remap = |s: S| members(s & live).fold(s & !live, |acc, i| acc | bit(sigma[i]));
        let swap_thread = |t: usize| {
            if t == grp.threads[0] {
                grp.threads[m]
            } else if t == grp.threads[m] {
                grp.threads[0]
            } else {
                t
            }
        };
        (0..n).all(|a| {
            let (x, y) = (&l.slots[a], &l.slots[sigma[a]]);
            let mem = x.is_mem();
            x.kind == y.kind
                && x.pc == y.pc
                && x.iter == y.iter
                && x.thread.map(swap_thread) == y.thread
                && mem == y.is_mem()
                && (!mem || (locs[x.loc] == y.loc && vas[x.va] == y.va))
                && x.proxy == y.proxy
                && x.read_sem == y.read_sem
                && x.write_sem == y.write_sem
                && x.scope == y.scope
                && x.red == y.red
                && x.wait.is_none()
                && y.wait.is_none()
                && x.role.is_none()
                && y.role.is_none()
                && remap(l.ms[a]) == l.ms[sigma[a]]
                && remap(l.publish[a]) == l.publish[sigma[a]]
                && l.snapshot_points.has(a) == l.snapshot_points.has(sigma[a])
        }) && (0..p.locations.len()).all(|loc| remap(l.loc_slots[loc]) == l.loc_slots[locs[loc]])
            && (0..p.threads.len())
                .all(|t| remap(l.thread_slots[t]) == l.thread_slots[swap_thread(t)])
    }

    // ---- the canonical encoding -------------------------------------------

    /// Per group, its members in canonical order: sorted by a colour that
    /// is the same for members a permutation exchanges (refined round by
    /// round through the slots they refer to, as in colour refinement),
    /// ties broken by thread order. Only the amount of reduction depends on
    /// how good the colours are, never its soundness: whatever order is
    /// chosen, the encoding is that of a permutation of the state.
    fn order(&self, st: &State<S>) -> Vec<Vec<usize>> {
        let fixed = !self.moving;
        // References into moving slots from fixed slots and fixed threads'
        // views, per moving slot (fixed things have fixed names).
        let mut inref: HashMap<usize, u64> = HashMap::new();
        let mut note = |row: S, tag: u64| {
            for s in members(row & self.moving) {
                let h = inref.entry(s).or_insert(0);
                *h = mix(*h, tag);
            }
        };
        for x in members(fixed & (st.versions | st.bound | st.retired)) {
            let x64 = x as u64;
            note(st.co[x], mix(x64, 1));
            note(st.never_below[x], mix(x64, 2));
            if st.rf[x] != NONE {
                note(bit(st.rf[x] as usize), mix(x64, 3));
            }
            if let Some(v) = &st.snapshots[x] {
                note_view(&mut note, v, mix(x64, 4));
            }
        }
        for (t, ts) in st.threads.iter().enumerate() {
            if self.member(t).is_none() {
                note_view(&mut note, &ts.view, mix(t as u64, 5));
            }
        }
        let mut orders = Vec::new();
        for (gi, g) in self.groups.iter().enumerate() {
            let k = g.threads.len();
            // Round 0: each member on its own, with fixed references by name.
            let mut colour: Vec<u64> = (0..k)
                .map(|mi| {
                    let ts = &st.threads[g.threads[mi]];
                    let mut h = mix(ts.pc as u64, ts.seq as u64);
                    h = mix(h, ts.cut as u64 | (ts.arrived as u64) << 1);
                    for &r in &ts.regs {
                        h = mix(h, r as u64);
                    }
                    for &e in &ts.execs {
                        h = mix(h, e as u64);
                    }
                    h = mix(h, view_fixed(&ts.view, fixed));
                    for &s in &g.frames[mi] {
                        h = mix(h, self.slot_local(st, s, fixed));
                        h = mix(h, inref.get(&s).copied().unwrap_or(0));
                    }
                    h
                })
                .collect();
            let distinct = |c: &[u64]| {
                let mut v = c.to_vec();
                v.sort_unstable();
                v.dedup();
                v.len()
            };
            let mut classes = distinct(&colour);
            for _ in 0..k {
                if classes == k {
                    break;
                }
                let name = |s: usize| -> u64 {
                    match self.owner[s] {
                        Some((gj, mj, f)) if gj == gi => mix(colour[mj], f as u64),
                        // Another group's slot: its frame position only.
                        Some((gj, _, f)) => mix(gj as u64 + 7, f as u64),
                        None => mix(s as u64, 11),
                    }
                };
                let set = |row: S| -> u64 {
                    let mut v: Vec<u64> = members(row & self.moving).map(name).collect();
                    v.sort_unstable();
                    v.into_iter().fold(0x51, mix)
                };
                let next: Vec<u64> = (0..k)
                    .map(|mi| {
                        let ts = &st.threads[g.threads[mi]];
                        let mut h = colour[mi];
                        for row in [ts.view.raw, ts.view.gen_, ts.view.anyva] {
                            h = mix(h, set(row));
                        }
                        for &s in &g.frames[mi] {
                            if st.rf[s] != NONE {
                                let v = st.rf[s] as usize;
                                h = mix(h, if self.moving.has(v) { name(v) } else { 0 });
                            }
                            h = mix(h, set(st.co[s]));
                            h = mix(h, set(st.never_below[s]));
                            if let Some(v) = &st.snapshots[s] {
                                for row in [v.raw, v.gen_, v.anyva] {
                                    h = mix(h, set(row));
                                }
                            }
                        }
                        h
                    })
                    .collect();
                let c = distinct(&next);
                colour = next;
                if c == classes {
                    break;
                }
                classes = c;
            }
            let mut idx: Vec<usize> = (0..k).collect();
            idx.sort_by_key(|&mi| (colour[mi], mi));
            orders.push(idx);
        }
        orders
    }

    /// The group and member index of thread `t`, if it is a member.
    fn member(&self, t: usize) -> Option<(usize, usize)> {
        self.groups
            .iter()
            .enumerate()
            .find_map(|(gi, g)| g.threads.iter().position(|&u| u == t).map(|mi| (gi, mi)))
    }

    /// A slot's own data, with references to fixed slots by name and to
    /// moving slots left out (the refinement rounds add them).
    fn slot_local(&self, st: &State<S>, s: usize, fixed: S) -> u64 {
        let flags = st.versions.has(s) as u64
            | (st.bound.has(s) as u64) << 1
            | (st.retired.has(s) as u64) << 2;
        let mut h = mix(flags, st.seq[s] as u64);
        if !self.dead.has(s) {
            h = mix(h, st.value[s] as u64);
        }
        let rf = st.rf[s];
        h = mix(
            h,
            if rf == NONE {
                u64::MAX
            } else if self.moving.has(rf as usize) {
                u64::MAX - 1
            } else {
                rf as u64
            },
        );
        h = mix(h, hash_set(st.co[s] & fixed));
        h = mix(h, hash_set(st.never_below[s] & fixed));
        h = mix(
            h,
            st.snapshots[s]
                .as_ref()
                .map_or(0, |v| view_fixed(v, fixed) | 1),
        );
        h
    }

    /// Append the canonical bytes of `st`: those of the permutation of `st`
    /// that puts every group's members in [`Symmetry::order`]. Injective on
    /// states up to the values of private locations (snapshots are written
    /// out in full), so `--exact` can store these bytes.
    pub fn encode(&self, st: &State<S>, b: &mut Vec<u8>) {
        let n = st.co.len();
        let orders = self.order(st);
        // sigma: old slot → new slot; inv: new → old; threads likewise.
        let mut sigma: Vec<usize> = (0..n).collect();
        let mut thread_at: Vec<usize> = (0..st.threads.len()).collect();
        for (g, ord) in self.groups.iter().zip(&orders) {
            for (pos, &mi) in ord.iter().enumerate() {
                thread_at[g.threads[pos]] = g.threads[mi];
                for (&old, &new) in g.frames[mi].iter().zip(&g.frames[pos]) {
                    sigma[old] = new;
                }
            }
        }
        self.encode_with(st, &sigma, &thread_at, b);
    }

    /// Append the bytes of the permutation of `st` that moves slot `s` to
    /// `sigma[s]` and puts thread `thread_at[t]` at position `t` (a
    /// permutation of the groups' members with their frames).
    fn encode_with(&self, st: &State<S>, sigma: &[usize], thread_at: &[usize], b: &mut Vec<u8>) {
        let n = st.co.len();
        let mut inv = vec![0; n];
        for (old, &new) in sigma.iter().enumerate() {
            inv[new] = old;
        }
        let moving = self.moving;
        let remap = |s: S| members(s & moving).fold(s & !moving, |acc, i| acc | bit(sigma[i]));
        let put = |b: &mut Vec<u8>, s: S| b.extend_from_slice(bytemuck::bytes_of(&s));
        put(b, remap(st.versions));
        put(b, remap(st.bound));
        put(b, remap(st.retired));
        for &old in &inv {
            put(b, remap(st.co[old]));
            put(b, remap(st.never_below[old]));
            let value = if self.dead.has(old) { 0 } else { st.value[old] };
            b.extend_from_slice(&value.to_le_bytes());
            b.extend_from_slice(&st.seq[old].to_le_bytes());
            let rf = st.rf[old];
            let rf = if rf == NONE {
                NONE
            } else {
                sigma[rf as usize] as u16
            };
            b.extend_from_slice(&rf.to_le_bytes());
            match &st.snapshots[old] {
                None => b.push(0),
                Some(v) => {
                    b.push(1);
                    encode_view(v, &remap, b);
                }
            }
        }
        for &t in thread_at {
            let ts = &st.threads[t];
            ts.encode_local(b);
            encode_view(&ts.view, &remap, b);
        }
        // No program with groups has barriers, so there are no arrivals.
        debug_assert!(st.arrivals.is_empty());
        b.extend_from_slice(&(st.arrivals.len() as u64).to_le_bytes());
    }

    /// A 64-bit fingerprint of [`Symmetry::encode`]'s bytes.
    pub fn fingerprint(&self, st: &State<S>) -> u64 {
        let mut b = Vec::with_capacity(1024);
        self.encode(st, &mut b);
        xxhash_rust::xxh3::xxh3_64(&b)
    }

    // ---- twins: symmetric choices -----------------------------------------

    /// The members of each group that `st` cannot tell apart: `a` and `b`
    /// are twins when swapping them (threads, event slots and private
    /// locations together) maps `st` onto itself, up to the values of
    /// private locations — exactly: the two permutations' encodings are
    /// compared byte for byte. Twinship is an equivalence (the swap of `b`
    /// and `c` is that of `a` and `b` composed with that of `a` and `c`),
    /// so each class is checked against its first member only. A cheap
    /// test on the threads' own parts (position, registers, counts) comes
    /// first: twins have equal ones.
    pub fn twins(&self, st: &State<S>) -> Twins {
        let mut tw = Twins {
            class: vec![None; st.threads.len()],
            classes: Vec::new(),
        };
        for g in &self.groups {
            // (first member's index in the group, its signature, class
            // index), per class.
            let mut heads: Vec<(usize, u64, usize)> = Vec::new();
            for mi in 0..g.threads.len() {
                let t = g.threads[mi];
                let sig = self.signature(st, g, mi);
                let found = heads.iter().copied().find(|&(hi, hs, _)| {
                    hs == sig
                        && same_local(&st.threads[g.threads[hi]], &st.threads[t])
                        && self.swap_fixes(st, g, hi, mi)
                });
                match found {
                    Some((_, _, c)) => {
                        tw.classes[c].push(t);
                        tw.class[t] = Some(c);
                    }
                    None => {
                        let c = tw.classes.len();
                        tw.classes.push(SmallVec::from_slice(&[t]));
                        tw.class[t] = Some(c);
                        heads.push((mi, sig, c));
                    }
                }
            }
        }
        // Classes of one member tell nothing apart.
        for t in 0..tw.class.len() {
            if let Some(c) = tw.class[t] {
                if tw.classes[c].len() < 2 {
                    tw.class[t] = None;
                }
            }
        }
        tw
    }

    /// A hash of member `mi`'s slots that a swap fixing `st` keeps (flags,
    /// positions, values, how many versions are coherence-after, whether
    /// it reads a moving slot): twins have equal ones, so only members
    /// with equal signatures are compared in full.
    fn signature(&self, st: &State<S>, g: &Group, mi: usize) -> u64 {
        g.frames[mi].iter().fold(0x5167, |h, &s| {
            let flags = st.versions.has(s) as u64
                | (st.bound.has(s) as u64) << 1
                | (st.retired.has(s) as u64) << 2;
            let mut h = mix(h, flags | (st.seq[s] as u64) << 3);
            if !self.dead.has(s) {
                h = mix(h, st.value[s] as u64);
            }
            let rf = st.rf[s];
            let rf = if rf == NONE {
                u64::MAX
            } else if self.moving.has(rf as usize) {
                u64::MAX - 1
            } else {
                rf as u64
            };
            h = mix(h, rf);
            mix(
                h,
                st.co[s].count() as u64 | (st.never_below[s].count() as u64) << 16,
            )
        })
    }

    /// Whether swapping members `i` and `j` of group `g` (threads, frames)
    /// maps `st` onto itself up to the values of private locations: what
    /// [`Symmetry::encode_with`] writes for the swap equals what it writes
    /// for the identity, compared field by field without writing it (the
    /// threads' own parts are compared by the caller).
    fn swap_fixes(&self, st: &State<S>, g: &Group, i: usize, j: usize) -> bool {
        let (fi, fj) = (&g.frames[i], &g.frames[j]);
        let sw = |s: S| -> S {
            let mut out = s;
            for (&x, &y) in fi.iter().zip(fj) {
                let (hx, hy) = (s.has(x), s.has(y));
                if hx != hy {
                    out &= !(bit::<S>(x) | bit::<S>(y));
                    out |= if hx { bit(y) } else { bit(x) };
                }
            }
            out
        };
        let sw_view = |v: &View<S>, w: &View<S>| {
            sw(v.raw) == w.raw
                && sw(v.gen_) == w.gen_
                && sw(v.anyva) == w.anyva
                && v.line.len() == w.line.len()
                && v.line.iter().zip(&w.line).all(|(&a, &b)| sw(a) == b)
        };
        if sw(st.versions) != st.versions
            || sw(st.bound) != st.bound
            || sw(st.retired) != st.retired
        {
            return false;
        }
        let n = st.co.len();
        let mut sigma: SmallVec<[u16; 64]> = (0..n as u16).collect();
        for (&x, &y) in fi.iter().zip(fj) {
            sigma[x] = y as u16;
            sigma[y] = x as u16;
        }
        for s in 0..n {
            let d = sigma[s] as usize;
            if d < s {
                continue; // the pair was compared from its lower slot
            }
            // Slot `s` goes to `d`: its data, swapped, must be `d`'s; and
            // for a pair also the other way round.
            let same = |a: usize, b: usize| {
                sw(st.co[a]) == st.co[b]
                    && sw(st.never_below[a]) == st.never_below[b]
                    && (self.dead.has(a) || st.value[a] == st.value[b])
                    && st.seq[a] == st.seq[b]
                    && (if st.rf[a] == NONE {
                        st.rf[b] == NONE
                    } else {
                        st.rf[b] != NONE && sigma[st.rf[a] as usize] == st.rf[b]
                    })
                    && match (&st.snapshots[a], &st.snapshots[b]) {
                        (None, None) => true,
                        (Some(v), Some(w)) => sw_view(v, w),
                        _ => false,
                    }
            };
            if !same(s, d) || (d != s && !same(d, s)) {
                return false;
            }
        }
        let (a, b) = (g.threads[i], g.threads[j]);
        (0..st.threads.len()).all(|t| {
            let u = if t == a {
                b
            } else if t == b {
                a
            } else {
                t
            };
            sw_view(&st.threads[t].view, &st.threads[u].view)
        })
    }

    // ---- outcomes ----------------------------------------------------------

    /// Every final state of the orbits of `found`: the members' columns
    /// moved between members in every distinct way (values of private
    /// locations relabelled into the receiving member's), group after group.
    /// `fresh` is told of each final state added (to reserve its output)
    /// and answers whether to go on: an orbit can be huge (32 readers of
    /// one flag have 2^32 final states), so the run's limits end the
    /// expansion too; the second value then says it stopped short.
    pub fn expand(
        &self,
        found: Outcomes,
        mut fresh: impl FnMut(&[Value]) -> bool,
    ) -> (Outcomes, bool) {
        let mut out = found;
        for g in &self.groups {
            let mut next = Outcomes::new();
            for o in &out {
                // Each member's block, in member 0's frame.
                let mut blocks: Vec<Vec<Value>> = (0..g.threads.len())
                    .map(|mi| {
                        g.cols[mi]
                            .iter()
                            .zip(&g.to0[mi])
                            .map(|(&c, map)| match map {
                                None => o[c],
                                Some(m) => *m
                                    .get(&o[c])
                                    .expect("a private location holds one of its writes' values"),
                            })
                            .collect()
                    })
                    .collect();
                blocks.sort();
                loop {
                    let mut s = o.clone();
                    for (mi, block) in blocks.iter().enumerate() {
                        for ((&c, map), &v) in g.cols[mi].iter().zip(&g.from0[mi]).zip(block) {
                            s[c] = match map {
                                None => v,
                                Some(m) => *m
                                    .get(&v)
                                    .expect("relabelling is one to one on a location's values"),
                            };
                        }
                    }
                    if !out.contains(&s) && !next.contains(&s) && !fresh(&s) {
                        next.insert(s);
                        next.extend(out.iter().cloned());
                        return (next, false);
                    }
                    next.insert(s);
                    if !next_permutation(&mut blocks) {
                        break;
                    }
                }
            }
            out = next;
        }
        (out, true)
    }
}

/// The twins of a state ([`Symmetry::twins`]): classes of members of a
/// group that the state cannot tell apart. The machine offers the choices
/// of one member of a class only, and within a choice that names other
/// threads (a forwarding chain, a version read) names one member of a class
/// only among those the choice has not named yet ([`Twins::shadowed`]);
/// `docs/exploration.md`, "Symmetric choices".
#[derive(Clone, Debug, Default)]
pub struct Twins {
    /// `class[t]`: thread `t`'s class, if it has another member.
    class: Vec<Option<usize>>,
    /// Each class's members, ascending.
    classes: Vec<SmallVec<[usize; 8]>>,
}

impl Twins {
    /// Whether a choice that names thread `u` next, after naming the threads
    /// of `named`, may be left out: `u` has a twin below it that the choice
    /// has not named. Swapping the two fixes the state and everything named
    /// so far, so it maps the choices naming `u` onto those naming the twin,
    /// which are offered.
    pub fn shadowed(&self, u: usize, named: &[usize]) -> bool {
        let Some(c) = self.class.get(u).copied().flatten() else {
            return false;
        };
        !named.contains(&u)
            && self.classes[c]
                .iter()
                .take_while(|&&m| m < u)
                .any(|m| !named.contains(m))
    }

    /// Threads with a twin (for the tests).
    pub fn paired(&self) -> usize {
        self.class.iter().filter(|c| c.is_some()).count()
    }
}

/// Whether two threads' own parts (everything but the view) are equal.
fn same_local<S: Bits>(a: &super::state::ThreadState<S>, b: &super::state::ThreadState<S>) -> bool {
    a.pc == b.pc
        && a.cut == b.cut
        && a.seq == b.seq
        && a.arrived == b.arrived
        && a.regs == b.regs
        && a.execs == b.execs
        && a.back_taken == b.back_taken
}

/// The next permutation in lexicographic order (false after the last).
fn next_permutation<T: Ord>(v: &mut [T]) -> bool {
    let n = v.len();
    if n < 2 {
        return false;
    }
    let mut i = n - 1;
    while i > 0 && v[i - 1] >= v[i] {
        i -= 1;
    }
    if i == 0 {
        return false;
    }
    let mut j = n - 1;
    while v[j] <= v[i - 1] {
        j -= 1;
    }
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

/// splitmix64's finaliser over `h` and `x`.
fn mix(h: u64, x: u64) -> u64 {
    let mut z = h ^ x.wrapping_add(0x9e37_79b9_7f4a_7c15).wrapping_add(h << 6);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn hash_set<S: Bits>(s: S) -> u64 {
    members(s).fold(0x1234, |h, i| mix(h, i as u64))
}

/// A view's tokens of fixed slots, hashed.
fn view_fixed<S: Bits>(v: &View<S>, fixed: S) -> u64 {
    let mut h = hash_set(v.raw & fixed);
    h = mix(h, hash_set(v.gen_ & fixed));
    mix(h, hash_set(v.anyva & fixed))
}

fn note_view<S: Bits>(note: &mut impl FnMut(S, u64), v: &View<S>, tag: u64) {
    note(v.raw, mix(tag, 1));
    note(v.gen_, mix(tag, 2));
    note(v.anyva, mix(tag, 3));
    for (i, &row) in v.line.iter().enumerate() {
        note(row, mix(tag, 4 + i as u64));
    }
}

fn encode_view<S: Bits>(v: &View<S>, remap: &impl Fn(S) -> S, b: &mut Vec<u8>) {
    for s in [v.raw, v.gen_, v.anyva]
        .into_iter()
        .chain(v.line.iter().copied())
    {
        b.extend_from_slice(bytemuck::bytes_of(&remap(s)));
    }
}

#[cfg(test)]
mod tests {
    use super::next_permutation;

    #[test]
    fn next_permutation_walks_distinct_orders_of_a_multiset() {
        let mut v = vec![1, 1, 2];
        let mut seen = vec![v.clone()];
        while next_permutation(&mut v) {
            seen.push(v.clone());
        }
        assert_eq!(seen, vec![vec![1, 1, 2], vec![1, 2, 1], vec![2, 1, 1]]);
    }
}
