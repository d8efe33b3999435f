//! The machine state: memory as versions in a coherence DAG at the L2
//! reconvergence point, per-thread views (what each thread's path to memory
//! is guaranteed to show), release snapshots, and each thread's progress.
//! Everything is plain data, fingerprinted whole for deduplication
//! ([`State::fingerprint`]: its canonical bytes through XXH3).

use smallvec::SmallVec;
use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_64;

use crate::ir::Value;
use crate::rel::Bits;

/// Which stage of propagation a line token records (machine-m2.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// The event had reached the generic path (the L2 reconvergence point).
    Gen,
    /// The event was visible through every virtual alias of its location.
    AnyVa,
}

/// A thread's view: frontier tokens per event slot (machine-m2.md §3).
///
/// In GPU terms: `raw` — the event is on its own path (its proxy's line in
/// its CTA); `gen` — it has been pushed from a private proxy path to the L2
/// reconvergence point; `anyva` — it is visible through every virtual alias
/// (an alias fence ran after it reached L2); `line[c][q][σ]` — CTA `c`'s
/// non-generic cache for proxy `q` was invalidated after the event reached
/// stage σ, so that cache can no longer hold anything older.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct View<S: Bits = u128> {
    /// ⟨X⟩raw tokens.
    pub raw: S,
    /// ⟨X⟩gen tokens.
    pub gen_: S,
    /// ⟨X⟩anyva tokens.
    pub anyva: S,
    /// ⟨X⟩line(c, q, σ) tokens, two per (CTA, proxy) pair of
    /// [`crate::op::layout::Layout::line_pairs`], indexed by [`View::line_index`].
    pub line: SmallVec<[S; 2]>,
}

impl<S: Bits> Clone for View<S> {
    fn clone(&self) -> View<S> {
        // from_slice copies Copy data in one move, where the derived clone goes element by element.
        View {
            raw: self.raw,
            gen_: self.gen_,
            anyva: self.anyva,
            line: SmallVec::from_slice(&self.line),
        }
    }
}

/// An immutable published view (a release, `fence.sc` or barrier snapshot),
/// shared between states, with its hash computed once.
#[derive(Clone, Debug)]
pub struct Snapshot<S: Bits = u128>(Arc<(u64, View<S>)>);

impl<S: Bits> Snapshot<S> {
    /// Publish `view`.
    pub fn new(view: View<S>) -> Snapshot<S> {
        let mut bytes = Bytes::new();
        view.encode(&mut bytes);
        Snapshot(Arc::new((xxh3_64(&bytes), view)))
    }
}

impl<S: Bits> std::ops::Deref for Snapshot<S> {
    type Target = View<S>;
    fn deref(&self) -> &View<S> {
        &self.0.1
    }
}

impl<S: Bits> PartialEq for Snapshot<S> {
    fn eq(&self, other: &Snapshot<S>) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || (self.0.0 == other.0.0 && self.0.1 == other.0.1)
    }
}

impl<S: Bits> Eq for Snapshot<S> {}

impl<S: Bits> Snapshot<S> {
    /// The published view's 64-bit hash (computed once, at publication).
    pub fn hash64(&self) -> u64 {
        self.0.0
    }
}

impl<S: Bits> View<S> {
    /// A view with room for `pairs` (CTA, proxy) caches.
    pub fn new(pairs: usize) -> View<S> {
        View {
            raw: S::EMPTY,
            gen_: S::EMPTY,
            anyva: S::EMPTY,
            line: SmallVec::from_elem(S::EMPTY, pairs * 2),
        }
    }
    /// Index of the line tokens of (CTA, proxy) pair `pair` at stage `s`.
    pub fn line_index(pair: usize, s: Stage) -> usize {
        pair * 2 + (s == Stage::AnyVa) as usize
    }
    /// The line tokens of pair `pair` at stage `s` (none if the pair has no tokens).
    pub fn line(&self, pair: Option<usize>, s: Stage) -> S {
        pair.map_or(S::EMPTY, |p| self.line[Self::line_index(p, s)])
    }
    /// `self ∪= other`.
    pub fn merge(&mut self, other: &View<S>) {
        self.raw |= other.raw;
        self.gen_ |= other.gen_;
        self.anyva |= other.anyva;
        for (a, b) in self.line.iter_mut().zip(&other.line) {
            *a |= *b;
        }
    }
    /// Only the tokens of events in `mask` (what a restricted release publishes).
    pub fn filtered(&self, mask: S) -> View<S> {
        View {
            raw: self.raw & mask,
            gen_: self.gen_ & mask,
            anyva: self.anyva & mask,
            line: self.line.iter().map(|&s| s & mask).collect(),
        }
    }
    /// Append the view's canonical bytes.
    fn encode(&self, out: &mut Bytes) {
        out.extend_from_slice(bytemuck::bytes_of(&[self.raw, self.gen_, self.anyva]));
        out.extend_from_slice(bytemuck::cast_slice(&self.line));
    }
    /// Every event with any token.
    pub fn known(&self) -> S {
        self.line
            .iter()
            .fold(self.raw | self.gen_ | self.anyva, |a, &b| a | b)
    }
}

/// A barrier arrival, for matching waits to phases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// CTA index.
    pub cta: usize,
    /// Values naming the barrier.
    pub id: SmallVec<[Value; 2]>,
    /// Thread count, if given (the operand, as participants compare it).
    pub count: Option<Value>,
    /// Arrivals its phase needs (`None`: every thread of the CTA;
    /// [`crate::model::barrier::resolve`]).
    pub needed: Option<Value>,
    /// The arrival is undefined behaviour: it poisons its phase.
    pub ub: Option<crate::model::barrier::BarrierUb>,
    /// Arriving thread.
    pub thread: usize,
    /// Its phase: under the Dat3M reading, which arrival of this thread at
    /// this barrier; under the ISA reading, the barrier's phase it joined.
    pub phase: usize,
    /// The arrival's slot (its snapshot is stored there).
    pub slot: usize,
    /// The event it is part of: the slot of the arrival that made it. The
    /// lanes of a warp arriving at a counted barrier make one event
    /// (`model::barrier::warp_unit`), which a counted phase counts once;
    /// any other arrival is an event of its own.
    pub unit: usize,
}

/// Progress of one thread.
#[derive(Debug, PartialEq, Eq)]
pub struct ThreadState<S: Bits = u128> {
    /// Next instruction to retire (= code length when finished).
    pub pc: usize,
    /// Stopped at the loop bound (it would take a bounded back edge once more).
    pub cut: bool,
    /// Register values after the retired instructions.
    pub regs: SmallVec<[Value; 4]>,
    /// How many times each instruction has retired (selects its slot).
    pub execs: SmallVec<[u8; 16]>,
    /// How many times each bounded back edge has been taken.
    pub back_taken: SmallVec<[u8; 4]>,
    /// Number of instructions retired (program-order position of the next one).
    pub seq: u16,
    /// The view.
    pub view: View<S>,
    /// The barrier at `pc` has been arrived at; the thread waits for its phase.
    pub arrived: bool,
}

impl<S: Bits> Clone for ThreadState<S> {
    fn clone(&self) -> ThreadState<S> {
        ThreadState {
            pc: self.pc,
            cut: self.cut,
            regs: SmallVec::from_slice(&self.regs),
            execs: SmallVec::from_slice(&self.execs),
            back_taken: SmallVec::from_slice(&self.back_taken),
            seq: self.seq,
            view: self.view.clone(),
            arrived: self.arrived,
        }
    }
}

impl<S: Bits> ThreadState<S> {
    /// Append the thread's own part of the state key (position, flags,
    /// registers, execution counts), everything but its view: the one
    /// layout both the plain key and the symmetric canonical key use.
    pub fn encode_local(&self, b: &mut Vec<u8>) {
        let head = [
            self.pc as u64,
            self.seq as u64 | (self.cut as u64) << 16 | (self.arrived as u64) << 17,
        ];
        b.extend_from_slice(bytemuck::bytes_of(&head));
        b.extend_from_slice(bytemuck::cast_slice(&self.regs));
        b.extend_from_slice(&self.execs);
        b.extend_from_slice(&self.back_taken);
    }

    /// Retired everything (or stopped at the bound).
    pub fn finished(&self, code_len: usize) -> bool {
        self.pc >= code_len || self.cut
    }
}

/// No slot.
pub const NONE: u16 = u16::MAX;

/// The whole machine state.
#[derive(Debug, PartialEq, Eq)]
pub struct State<S: Bits = u128> {
    /// Per thread. Shared between states until a step changes the thread
    /// ([`State::thread_mut`]): a step changes one thread, so a successor
    /// copies one thread's state instead of all of them.
    pub threads: SmallVec<[Arc<ThreadState<S>>; 8]>,
    /// Issued writes: the versions in memory (initial versions included).
    pub versions: S,
    /// Issued reads (bound to a version).
    pub bound: S,
    /// Retired slots.
    pub retired: S,
    /// Coherence: `co[v]` = versions known to be coherence-after `v` (closed).
    pub co: SmallVec<[S; 32]>,
    /// Reads-from: the version each bound read returned.
    pub rf: SmallVec<[u16; 32]>,
    /// Obligations: `never_below[v]` = versions `v` must never be coherence-before.
    pub never_below: SmallVec<[S; 32]>,
    /// The value each version holds.
    pub value: SmallVec<[Value; 32]>,
    /// Program-order position of each issued or retired slot in its thread.
    pub seq: SmallVec<[u16; 32]>,
    /// Release snapshots, fence.sc snapshots and barrier arrival snapshots.
    pub snapshots: SmallVec<[Option<Snapshot<S>>; 32]>,
    /// Barrier arrivals so far.
    pub arrivals: SmallVec<[Arrival; 2]>,
}

impl<S: Bits> Clone for State<S> {
    fn clone(&self) -> State<S> {
        State {
            threads: self.threads.iter().cloned().collect(),
            versions: self.versions,
            bound: self.bound,
            retired: self.retired,
            co: SmallVec::from_slice(&self.co),
            rf: SmallVec::from_slice(&self.rf),
            never_below: SmallVec::from_slice(&self.never_below),
            value: SmallVec::from_slice(&self.value),
            seq: SmallVec::from_slice(&self.seq),
            snapshots: self.snapshots.clone(),
            arrivals: self.arrivals.clone(),
        }
    }
}

/// A buffer for a state's canonical bytes.
type Bytes = Vec<u8>;

thread_local! {
    /// Reused between fingerprints, so computing one allocates nothing.
    static BYTES: std::cell::RefCell<Bytes> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<S: Bits> State<S> {
    /// A 64-bit fingerprint: XXH3 of the state's canonical bytes.
    ///
    /// Canonical: equal states have equal bytes (every per-slot and
    /// per-thread array has a length fixed by the program, and the one
    /// variable-length part, the arrivals, is preceded by its length).
    // Hot (once per successor): the state is laid down as bytes in one buffer
    // and hashed in bulk, which is several times faster than feeding a
    // `Hasher` field by field.
    pub fn fingerprint(&self) -> u64 {
        BYTES.with_borrow_mut(|b| {
            b.clear();
            self.encode(b);
            xxh3_64(b)
        })
    }

    /// Append the state's canonical bytes.
    fn encode(&self, b: &mut Bytes) {
        b.extend_from_slice(bytemuck::bytes_of(&[
            self.versions,
            self.bound,
            self.retired,
        ]));
        b.extend_from_slice(bytemuck::cast_slice(&self.co));
        b.extend_from_slice(bytemuck::cast_slice(&self.never_below));
        b.extend_from_slice(bytemuck::cast_slice(&self.value));
        b.extend_from_slice(bytemuck::cast_slice(&self.seq));
        b.extend_from_slice(bytemuck::cast_slice(&self.rf));
        for s in &self.snapshots {
            let h = s.as_ref().map_or(0, |s| s.hash64() | 1);
            b.extend_from_slice(&h.to_le_bytes());
        }
        for t in &self.threads {
            t.encode_local(b);
            t.view.encode(b);
        }
        b.extend_from_slice(&(self.arrivals.len() as u64).to_le_bytes());
        for a in &self.arrivals {
            let count = a.count.map_or([0, 0], |c| [1, c]);
            let needed = a.needed.map_or([0, 0], |c| [1, c]);
            let head: [i64; 10] = [
                needed[0],
                needed[1],
                a.ub.map_or(-1, |u| u as i64),
                a.cta as i64,
                a.thread as i64,
                a.phase as i64,
                a.slot as i64,
                count[0],
                count[1],
                a.id.len() as i64,
            ];
            b.extend_from_slice(bytemuck::bytes_of(&head));
            b.extend_from_slice(bytemuck::cast_slice(&a.id));
        }
    }

    /// Thread `t`'s state, to change (copied first if another state shares it).
    pub fn thread_mut(&mut self, t: usize) -> &mut ThreadState<S> {
        Arc::make_mut(&mut self.threads[t])
    }

    /// Whether `a` is coherence-before `b`.
    pub fn co_before(&self, a: usize, b: usize) -> bool {
        self.co[a].has(b)
    }
}

// Hashing a state (for the `--exact` seen-set) goes through its fingerprint,
// which equal states share.
impl<S: Bits> std::hash::Hash for State<S> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.fingerprint())
    }
}
