//! Commuting additions in the machine (issue 27; `docs/exploration.md`,
//! "Commuting additions in the machine"): the seen-set remembers a state up
//! to the *order* of a counter's chain of additions, which no later step can
//! tell apart.
//!
//! A machine state keeps each RMW's reads-from and the coherence order of
//! its location, so `n` additions to a counter give one branch of states
//! per order (`n!` of them on the grid barrier) although nothing reads the
//! intermediate counts. [`Commuting::detect`] finds the *commuting counters*
//! of a program (conservative: any doubt, none); [`Commuting::canonical`]
//! rewrites a state's chain on each of them into one fixed order (ascending
//! slots) and clears what is left of the chain's order elsewhere (the
//! obligations it satisfies, the dead tickets of `atom`s). The explorer
//! expands only real states and uses the rewritten one for its seen-set
//! alone, as symmetry does with its canonical encoding.

use crate::ir::{BranchCmp, Instr, LocKind, Operand, Proxy, RmwOp, Value};
use crate::rel::{Bits, bit, members};

use super::layout::SlotKind;
use super::state::{NONE, State};
use super::steps::{Folded, Step, StepKind};
use super::window::{Entry, Windows, operand};
use super::{Coherence, Machine};

/// A counter whose additions commute (the conditions are in
/// [`Commuting::detect`]).
#[derive(Clone, Debug)]
struct Counter<S: Bits> {
    /// Its initial version.
    init: usize,
    /// Its additions' slots.
    rmws: S,
    /// Its loads' slots (each the load of a spin loop that leaves only on
    /// `sum`).
    loads: S,
    /// Per slot: what the addition adds (0 for other slots).
    add: Vec<Value>,
    /// The initial value.
    init_value: Value,
    /// The initial value plus every addition: what the spins leave on,
    /// and what only the complete chain's last version holds.
    sum: Value,
    /// Every addition is followed at once (`pc + 1`) by the load of a spin
    /// on this counter: once its addition has retired, a thread can do
    /// nothing but spin until the chain is complete (the shape
    /// [`Machine::commute_alone`] needs).
    then_spin: bool,
}

/// The commuting counters of a program, and the registers whose values
/// nothing reads (the tickets of their `atom`s).
#[derive(Clone, Debug)]
pub struct Commuting<S: Bits> {
    counters: Vec<Counter<S>>,
    /// `(thread, register)`: an `atom`'s destination that no instruction
    /// reads, no other instruction writes and the projection leaves out.
    dead: Vec<(usize, usize)>,
    /// Whether the machine lets one commuting addition go alone where the
    /// others can only wait for it ([`Machine::commute_alone`]; off only to
    /// check it).
    pub alone: bool,
}

impl<S: Bits> Commuting<S> {
    /// The commuting counters of `m`'s program, if any. `observed[t][r]`:
    /// register `r` of thread `t` is a column of the listed final states
    /// (every register unless the run projects).
    ///
    /// The program: no agent thread, only plain instructions
    /// ([`Instr::is_plain`]: loads, stores, RMWs, unrestricted fences,
    /// register code, branches), every back edge closing a spin loop (no
    /// thread is ever cut at the loop bound), and coherence oriented at
    /// issue ([`Coherence::Eager`], as in every program with a loop).
    ///
    /// A location `ℓ` is a commuting counter when it holds data, every slot
    /// of it is generic and at one virtual address, and besides its initial
    /// version its slots are
    /// * at least two additions `add ℓ, c` (`red`, or `atom` whose
    ///   destination is dead and unobserved), each of one slot (outside any
    ///   loop), with a constant `c > 0`, whose read half is no acquire,
    ///   pairwise morally strong, and either all or none morally strong
    ///   with the initial version; an `atom`'s thread has no acquiring
    ///   fence (its read would head an acquire pattern);
    /// * loads, each the first instruction of a spin loop `L: ld r, ℓ;
    ///   bne r, S, L` (no kept iteration) where `S` is the initial value
    ///   plus every addition's constant, each morally strong with every
    ///   addition;
    ///
    /// and every partial sum stays within 32 bits, so that only the
    /// complete chain's last version holds `S`.
    pub fn detect(m: &Machine<'_, S>, observed: &[Vec<bool>]) -> Option<Commuting<S>> {
        let p: &crate::ir::Program = &m.program;
        let lay = &m.layout;
        if m.coherence != Coherence::Eager
            || p.threads.iter().enumerate().any(|(t, th)| {
                th.agent.is_some()
                    // A kernel's RMWs wrap at their width (`Thread::wrap_rmw`):
                    // the count a spin waits for is then not a sum of positive
                    // constants that only the whole chain reaches.
                    || th.wrap_rmw
                    || th.code.iter().any(|i| !i.is_plain())
                    || lay.loops[t]
                        .back_edge
                        .iter()
                        .zip(&lay.loops[t].spin)
                        .any(|(&back, &spin)| back && !spin)
            })
        {
            return None;
        }
        let initial = m.initial();
        let mut counters = Vec::new();
        let mut dead = Vec::new();
        'loc: for (l, loc) in p.locations.iter().enumerate() {
            if loc.kind != LocKind::Data {
                continue;
            }
            let slots = lay.loc_slots[l];
            let inits = slots & lay.inits;
            let Some(init) = inits.first() else { continue };
            if inits.count() != 1 {
                continue;
            }
            let mut rmws = S::EMPTY;
            let mut loads = S::EMPTY;
            let mut va = None;
            let mut add = vec![0; lay.len()];
            let mut tickets = Vec::new();
            for s in members(slots & !inits) {
                let info = &lay.slots[s];
                if info.proxy != Proxy::Generic || *va.get_or_insert(info.va) != info.va {
                    continue 'loc;
                }
                let Some(t) = info.thread else { continue 'loc };
                let code = &p.threads[t].code;
                match (info.kind, &code[info.pc]) {
                    (
                        SlotKind::Rmw,
                        Instr::Rmw {
                            dst,
                            op: RmwOp::Add,
                            args,
                            ..
                        },
                    ) => {
                        let [Operand::Imm(c)] = args[..] else {
                            continue 'loc;
                        };
                        if c <= 0 || lay.execs[t][info.pc] != 1 || info.read_sem.is_acquire() {
                            continue 'loc;
                        }
                        if let Some(r) = *dst {
                            let used = code.iter().any(|i| i.uses().contains(&r));
                            let written = code
                                .iter()
                                .enumerate()
                                .any(|(q, i)| q != info.pc && i.def() == Some(r));
                            let acquiring = code
                                .iter()
                                .any(|i| matches!(i, Instr::Fence { sem, .. } if sem.acquires()));
                            let seen = observed
                                .get(t)
                                .and_then(|o| o.get(r))
                                .copied()
                                .unwrap_or(true);
                            if used || written || acquiring || seen {
                                continue 'loc;
                            }
                            tickets.push((t, r));
                        }
                        rmws |= bit(s);
                        add[s] = c;
                    }
                    (SlotKind::Load, Instr::Load { .. }) => loads |= bit(s),
                    _ => continue 'loc,
                }
            }
            if rmws.count() < 2 {
                continue;
            }
            let init_value = initial.value[init];
            let mut sum = init_value;
            for s in members(rmws) {
                sum = match sum.checked_add(add[s]) {
                    Some(v) if v <= i32::MAX as Value && init_value >= i32::MIN as Value => v,
                    _ => continue 'loc,
                };
            }
            // Every addition morally strong with every other and with every
            // load (so that a load reading the last version observes the
            // whole chain, and a spin replayed for a hang reads only the
            // last version); the initial version with all or none.
            let all_ms =
                members(rmws | loads).all(|a| ((lay.ms[a] & rmws) | (S::bit(a) & rmws)) == rmws);
            let with_init = lay.ms[init] & rmws;
            if !all_ms || !(with_init.is_empty() || with_init == rmws) {
                continue;
            }
            for s in members(loads) {
                let info = &lay.slots[s];
                let t = info.thread.unwrap();
                let code = &p.threads[t].code;
                let Instr::Load { dst, .. } = code[info.pc] else {
                    continue 'loc;
                };
                let pinned = lay.loops[t].loop_at(info.pc).is_some_and(|lp| {
                    lp.head == info.pc
                        && lp.back == info.pc + 1
                        && lp.retry.is_none()
                        && lp.keep == 0
                }) && matches!(
                    &code[info.pc + 1],
                    Instr::Branch { cond: Some((BranchCmp::Ne, a, b)), target }
                        if *target == info.pc
                            && ((*a == Operand::Reg(dst) && *b == Operand::Imm(sum))
                                || (*b == Operand::Reg(dst) && *a == Operand::Imm(sum)))
                );
                if !pinned {
                    continue 'loc;
                }
            }
            let then_spin = members(rmws).all(|s| {
                let info = &lay.slots[s];
                let t = info.thread.unwrap();
                lay.base[t]
                    .get(info.pc + 1)
                    .copied()
                    .flatten()
                    .is_some_and(|b| loads.has(b))
            });
            dead.extend(tickets);
            counters.push(Counter {
                init,
                rmws,
                loads,
                add,
                init_value,
                sum,
                then_spin,
            });
        }
        (!counters.is_empty()).then_some(Commuting {
            counters,
            dead,
            alone: true,
        })
    }

    /// Whether some thread of `st` has bound the load of its spin on a
    /// commuting counter to a version that does not hold the sum it leaves
    /// on: that thread can only go back, and the machine drops its path
    /// when it retires the branch (a spin loop keeps no iteration that goes
    /// back). Such a state reaches no final state, and no hang witness
    /// either: the load stays bound and unretired until then, so no state
    /// on the way is clean, and the partial-order reduction retires the
    /// branch in the same step as the load. The explorer drops it at once.
    pub fn doomed(&self, st: &State<S>) -> bool {
        self.counters
            .iter()
            .any(|c| members(st.bound & c.loads).any(|l| st.value[st.rf[l] as usize] != c.sum))
    }

    /// Whether read `slot`, if it is a spin's load of a commuting counter,
    /// can only be bound to a version that sends it back: the chain lacks
    /// more additions than a bind can forward (`depth`, each forwarding
    /// one), so every version it may return holds less than the sum.
    pub fn cannot_leave(&self, st: &State<S>, slot: usize, depth: u32) -> bool {
        self.counters
            .iter()
            .any(|c| c.loads.has(slot) && (c.rmws & !st.versions).count() > depth as usize)
    }

    /// How many commuting counters the program has.
    pub fn counters(&self) -> usize {
        self.counters.len()
    }

    /// `st` with each commuting counter's chain in ascending slot order and
    /// the dead tickets zeroed, when that changes anything (`None`: `st` is
    /// its own canonical form). A counter whose chain is not (yet) of the
    /// shape the argument needs is left as it is: its additions' coherence
    /// is not one total order from the initial version with each addition
    /// reading the one before, some obligation of the chain is not already
    /// met by its order, or some bound load has not read the last version of
    /// the complete chain.
    pub fn canonical(&self, st: &State<S>) -> Option<State<S>> {
        let mut out: Option<State<S>> = None;
        for c in &self.counters {
            if !chain_shaped(c, st) {
                continue;
            }
            let mine = c.rmws & st.versions;
            let all = mine | bit(c.init);
            // The canonical order: ascending slots, each reading the one
            // before and holding the sum so far.
            let mut value = c.init_value;
            let mut after = mine;
            let mut prev = c.init;
            for v in members(mine) {
                after ^= bit(v);
                value = value.wrapping_add(c.add[v]);
                let row = (st.co[v] & !all) | after;
                if st.co[v] != row || st.rf[v] as usize != prev || st.value[v] != value {
                    let o = out.get_or_insert_with(|| st.clone());
                    o.co[v] = row;
                    o.rf[v] = prev as u16;
                    o.value[v] = value;
                }
                prev = v;
            }
            // Obligations among the chain are met by its order: forgotten.
            for v in members(all) {
                if st.never_below[v].meets(all) {
                    let o = out.get_or_insert_with(|| st.clone());
                    o.never_below[v] = st.never_below[v] & !all;
                }
            }
            // Bound loads read the complete chain's last version.
            for l in members(st.bound & c.loads) {
                if st.rf[l] as usize != prev {
                    out.get_or_insert_with(|| st.clone()).rf[l] = prev as u16;
                }
            }
        }
        for &(t, r) in &self.dead {
            let cur = out.as_ref().map_or(st, |o| o);
            if cur.threads[t].regs.get(r).is_some_and(|&v| v != 0) {
                out.get_or_insert_with(|| st.clone()).thread_mut(t).regs[r] = 0;
            }
        }
        out
    }
}

/// Whether counter `c`'s chain in `st` has the shape
/// [`Commuting::canonical`] needs: every issued addition bound (its read and
/// write are one step), coherence one total order from the initial version
/// with each addition reading the one before it, every obligation among
/// them met by that order, and every bound load reading the last version of
/// the complete chain.
fn chain_shaped<S: Bits>(c: &Counter<S>, st: &State<S>) -> bool {
    chain(c, st).is_some()
}

/// The chain of counter `c` in `st`, in coherence order, if it has the
/// shape [`chain_shaped`] describes.
fn chain<S: Bits>(c: &Counter<S>, st: &State<S>) -> Option<Vec<usize>> {
    let mine = c.rmws & st.versions;
    // Retired: a speculative addition's retirement still checks its read
    // against its thread's causal past, which may include another addition
    // of the chain, and whether it passes depends on their order.
    if c.rmws & st.bound != mine || mine.meets(!st.retired) {
        return None;
    }
    let all = mine | bit(c.init);
    let k = mine.count();
    let mut order = vec![NONE as usize; k];
    for v in members(mine) {
        // Its place: how many of the chain precede it.
        let pos = members(mine).filter(|&u| st.co[u].has(v)).count();
        if order[pos] != NONE as usize {
            return None;
        }
        order[pos] = v;
    }
    if st.co[c.init] & all != mine {
        return None;
    }
    let mut prev = c.init;
    let mut after = mine;
    for &v in &order {
        after ^= bit(v);
        if st.co[v] & all != after || st.rf[v] as usize != prev {
            return None;
        }
        prev = v;
    }
    // Obligations within the chain are met by its order (and stay met:
    // coherence only grows and stays acyclic in a live state).
    let mut below = S::EMPTY;
    for &v in std::iter::once(&c.init).chain(&order) {
        below |= bit(v);
        if (st.never_below[v] & all).meets(!below) {
            return None;
        }
    }
    let loads = st.bound & c.loads;
    if !loads.is_empty() {
        if mine != c.rmws {
            return None;
        }
        let top = *order.last()?;
        if members(loads).any(|l| st.rf[l] as usize != top) {
            return None;
        }
    }
    Some(order)
}

impl<S: Bits> Machine<'_, S> {
    /// Look for commuting counters ([`Commuting::detect`]) and let the
    /// exploration remember states up to the order of their additions.
    /// `observed[t][r]`: register `r` of thread `t` is listed in the final
    /// states. Call it after the machine's options are set (it reads the
    /// coherence mode).
    ///
    /// Only with the partial-order reduction (the argument needs a load
    /// that sends its spin back to be dropped in the step that retires it)
    /// and without a symmetry group (one quotient at a time).
    pub fn commute_additions(&mut self, observed: &[Vec<bool>]) {
        let symmetric = self.use_symmetry && self.symmetry.is_some();
        self.commuting = if self.por && !symmetric {
            Commuting::detect(self, observed)
        } else {
            None
        };
    }
}

impl<S: Bits> Commuting<S> {
    /// The thread whose addition goes alone in `st`, with its window's head
    /// (`docs/exploration.md`, "One addition at a time"): for some counter
    /// whose additions are each followed by its spin (`then_spin`), every
    /// unfinished thread stands, at the head of its window, at an unbound
    /// addition of the counter or at the unbound load of a spin on it, and
    /// has nothing else bound, issued or to bind in its window but loads of
    /// those spins. The first thread at an addition is returned.
    fn alone_thread(
        &self,
        m: &Machine<'_, S>,
        st: &State<S>,
        windows: &Windows<'_, '_, S>,
    ) -> Option<(usize, Entry)> {
        'counter: for c in self.counters.iter().filter(|c| c.then_spin) {
            let mut first = None;
            for t in 0..st.threads.len() {
                let ts = &st.threads[t];
                if ts.finished(m.program.threads[t].code.len()) {
                    continue;
                }
                if ts.cut || ts.arrived {
                    continue 'counter;
                }
                let w = windows.get(t);
                let Some(head) = w.entries.first() else {
                    continue 'counter;
                };
                let Some(h) = head.slot else {
                    continue 'counter;
                };
                if st.bound.has(h) || st.versions.has(h) {
                    continue 'counter;
                }
                if c.rmws.has(h) {
                    first.get_or_insert((t, head));
                } else if !c.loads.has(h) {
                    continue 'counter;
                }
                let rest_waits = w.entries[1..].iter().all(|e| {
                    e.slot
                        .is_none_or(|s| c.loads.has(s) && !st.bound.has(s) && !st.versions.has(s))
                });
                if !rest_waits {
                    continue 'counter;
                }
            }
            if let Some((t, head)) = first {
                return Some((t, head.clone()));
            }
        }
        None
    }
}

impl<S: Bits> Machine<'_, S> {
    /// One addition at a time (`docs/exploration.md`, "One addition at a
    /// time"): at a state where no thread can retire without a choice and
    /// every thread either stands at an addition of a commuting counter
    /// (each followed by its spin) or spins on it ([`Commuting`]'s
    /// `alone_thread`), the first thread at an addition binds it to the
    /// counter's last version, alone and without forwarding; the other
    /// additions, in any order, reach the same class of states, and nothing
    /// else can happen before them. `None` where this does not apply (and
    /// where its one successor is not what the argument says: exactly one,
    /// in which the addition has retired); the caller then offers every
    /// choice.
    pub(super) fn commute_alone(&self, st: &State<S>, co: Coherence) -> Option<Folded<S>> {
        let c = self.commuting.as_ref().filter(|c| c.alone)?;
        let windows = Windows::new(self, st);
        if self.first_ready(st, &windows).is_some() {
            return None;
        }
        let (t, e) = c.alone_thread(self, st, &windows)?;
        drop(windows);
        let r = e.slot?;
        let Instr::Rmw { op, args, .. } = &self.program.threads[t].code[e.pc] else {
            return None;
        };
        let loc = self.layout.slots[r].loc;
        let versions = st.versions & self.layout.loc_slots[loc];
        // The last version: the one no other version of the counter follows.
        let mut last = members(versions).filter(|&v| !st.co[v].meets(versions));
        let (Some(v), None) = (last.next(), last.next()) else {
            return None;
        };
        let argv: Option<Vec<Value>> = args.iter().map(|a| operand(&e.regs, a)).collect();
        let s = self.bind(st, t, r, v, e.seq)?;
        let new = op.apply(self.read_value(&s, r), &argv?);
        let step = Step {
            thread: t,
            pc: e.pc,
            kind: StepKind::Bind {
                slot: r,
                version: v,
                forwarded: Default::default(),
            },
        };
        let succ: Vec<_> = self
            .issue_write_owned(s, r, new, e.seq, co)
            .into_iter()
            .map(|s| (step.clone(), s))
            .collect();
        let mut f = Folded::default();
        self.fold_into(succ, co, &mut f);
        if f.states.len() != 1 || !f.states[0].retired.has(r) {
            return None;
        }
        let unfinished = (0..st.threads.len())
            .filter(|&u| !st.threads[u].finished(self.program.threads[u].code.len()))
            .count() as u64;
        f.pruned += unfinished.saturating_sub(1);
        f.persistent = 1;
        Some(f)
    }
}
