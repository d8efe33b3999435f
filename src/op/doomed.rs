//! Doomed speculation (`docs/exploration.md`, "Doomed speculation"): a
//! state in which a write issued ahead of its thread's retirement is already
//! coherence-before a write that its retirement must place it after, or a
//! read bound ahead of its retirement already returned a version
//! coherence-before a write its retirement must see, can reach no final
//! state, hang witness or loop cut. The exploration drops it at once instead
//! of running on until the retirement fails.
//!
//! What a retirement "must" see is computed once, statically: the slots whose
//! `raw` token the thread's view holds whenever it retires an instruction —
//! those of the instructions that dominate it in its thread, and through each
//! dominating `await`, those its awaited signal's view held. Their part on
//! the access's cache line ([`Machine::front`], monotone in the view) is a
//! subset of the `Front⁺` the retirement computes, so a coherence edge into
//! it that the state already has the wrong way round closes a cycle there.

use crate::ir::{Instr, mbar};
use crate::rel::{Bits, bit, members};

use super::Machine;
use super::layout::SlotKind;
use super::state::{NONE, State, View};
use super::window::{Windows, operand};

/// The static fronts of a program's accesses, when the reduction applies.
pub struct Doom<S: Bits> {
    /// `front[s]`: writes of `s`'s location, other than `s`, that are in the
    /// `Front⁺` of `s`'s retirement on every run that retires `s`.
    front: Vec<S>,
    /// Slots with a non-empty `front`.
    watched: S,
}

impl<S: Bits> Doom<S> {
    /// The static fronts of `m`'s program; `None` where the argument does
    /// not hold as stated: a thread with a loop that can be cut at the
    /// bound (a cut thread leaves its issued writes unretired in a final
    /// state) or an instruction with several slots (a kept spin iteration).
    pub fn of(m: &Machine<'_, S>) -> Option<Doom<S>> {
        let p = &m.program;
        let l = &m.layout;
        for (t, th) in p.threads.iter().enumerate() {
            let info = &l.loops[t];
            if (0..th.code.len())
                .any(|pc| info.back_edge[pc] && !info.spin[pc] || l.execs[t][pc] > 1)
            {
                return None;
            }
        }
        let dom: Vec<Vec<Vec<bool>>> = (0..p.threads.len()).map(|t| dominators(m, t)).collect();
        let mut raw: Vec<Vec<Option<S>>> = p
            .threads
            .iter()
            .map(|th| vec![None; th.code.len()])
            .collect();
        let mut front = vec![S::EMPTY; l.len()];
        let mut watched = S::EMPTY;
        let pairs = l.line_pairs.len();
        for (t, th) in p.threads.iter().enumerate() {
            for pc in 0..th.code.len() {
                let Some(s) = l.slot(t, pc, 0) else { continue };
                if !l.slots[s].is_mem() {
                    continue;
                }
                let mut k = View::new(pairs);
                k.raw = raw_before(m, &dom, &mut raw, t, pc, &mut Vec::new());
                let f = m.front(&k, s) & l.writes & !S::bit(s);
                if !f.is_empty() {
                    front[s] = f;
                    watched |= bit(s);
                }
            }
        }
        Some(Doom { front, watched })
    }

    /// Whether `st` has an issued, unretired write coherence-before a write
    /// of its static front, or a bound, unretired read whose version is.
    /// Coherence only grows and issued writes stay issued, so the write's
    /// (the read's) retirement would close a cycle (find the version stale),
    /// and every final state and hang witness has it retired.
    pub fn doomed(&self, m: &Machine<'_, S>, st: &State<S>) -> bool {
        self.wrong_way(m, st) || stalled(m, st)
    }

    /// The static-front half of [`Doom::doomed`]: a write already before a
    /// write of its front, a read whose version is, or an RMW whose source
    /// must precede a write of its front that is morally strong with it
    /// (the source is an initial version, or already before that write, or
    /// in that write's own front): its retirement would put the write
    /// between the RMW's source and the RMW, which atomicity forbids.
    fn wrong_way(&self, m: &Machine<'_, S>, st: &State<S>) -> bool {
        let l = &m.layout;
        let pending = self.watched & !st.retired;
        for w in members(pending & st.versions) {
            if st.co[w].meets(self.front[w]) {
                return true;
            }
        }
        for r in members(pending & st.bound) {
            let u = st.rf[r];
            if u == NONE {
                continue;
            }
            let u = u as usize;
            if st.co[u].meets(self.front[r]) {
                return true;
            }
            if l.slots[r].kind == SlotKind::Rmw
                && members(self.front[r] & l.ms[r])
                    .any(|v| l.inits.has(u) || st.co[u].has(v) || self.front[v].has(u))
            {
                return true;
            }
        }
        false
    }
}

/// `dom[pc][q]`: instruction `q` is retired before `pc` on every path of
/// thread `t` that retires `pc` (spin and retry back edges are never taken;
/// [`Doom::of`] admits no other back edge).
fn dominators<S: Bits>(m: &Machine<'_, S>, t: usize) -> Vec<Vec<bool>> {
    let code = &m.program.threads[t].code;
    let n = code.len();
    let spin = &m.layout.loops[t].spin;
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (pc, i) in code.iter().enumerate() {
        let succ: &[usize] = match i {
            Instr::Branch { cond: None, target } => &[*target],
            Instr::Branch { target, .. } => &[pc + 1, *target],
            _ => &[pc + 1],
        };
        for &q in succ {
            if q < n && !(spin[pc] && q <= pc) {
                preds[q].push(pc);
            }
        }
    }
    // Forward edges only: one pass in program order.
    let mut dom: Vec<Vec<bool>> = Vec::with_capacity(n);
    for pc in 0..n {
        let mut d = if pc == 0 {
            vec![false; n]
        } else if preds[pc].is_empty() {
            // Unreachable: claims nothing.
            vec![false; n]
        } else {
            let mut d = vec![true; n];
            for &q in &preds[pc] {
                let mut with_q = dom[q].clone();
                with_q[q] = true;
                for (a, b) in d.iter_mut().zip(with_q) {
                    *a &= b;
                }
            }
            d
        };
        d[pc] = false;
        dom.push(d);
    }
    dom
}

/// The slots whose `raw` token thread `t`'s view holds whenever it is about
/// to retire `pc`: every dominating instruction's slot (a retirement adds
/// its own slot's token, and a thread's view only grows), and what each
/// dominating `await`'s signals held when they retired (the await merges
/// their snapshots). `visiting` breaks a cycle of awaits conservatively.
fn raw_before<S: Bits>(
    m: &Machine<'_, S>,
    dom: &[Vec<Vec<bool>>],
    memo: &mut [Vec<Option<S>>],
    t: usize,
    pc: usize,
    visiting: &mut Vec<(usize, usize)>,
) -> S {
    if let Some(s) = memo[t][pc] {
        return s;
    }
    if visiting.contains(&(t, pc)) {
        return S::EMPTY;
    }
    visiting.push((t, pc));
    let code = &m.program.threads[t].code;
    let mut out = S::EMPTY;
    for q in (0..code.len()).filter(|&q| dom[t][pc][q]) {
        if let Some(s) = m.layout.slot(t, q, 0) {
            if m.layout.slots[s].is_mem() {
                out |= bit(s);
            }
        }
        if let Instr::Await { from } = &code[q] {
            for pt in from {
                if pt.exec == 0 && pt.pc < m.program.threads[pt.thread].code.len() {
                    out |= raw_before(m, dom, memo, pt.thread, pt.pc, visiting);
                }
            }
        }
    }
    visiting.pop();
    // A value found inside a cycle may miss what the cycle hid: keep it unmemoised.
    if visiting.is_empty() {
        memo[t][pc] = Some(out);
    }
    out
}

/// Whether some issued write or bound read of `st` can never retire: a
/// least fixpoint over the threads' windows of the entries that may still
/// retire, each needing the entries before it (retirement is in program
/// order), an `await` needing its awaited slots, and a bound acquire read
/// that acquires needing every unretired release write in its observation
/// chain that is morally strong with it (`release_heads` blocks on those).
/// Everything beyond a window may retire once the whole window may. Each
/// need is one the machine waits for, and reads-from, values and the
/// registers a window gives an entry never change once bound, so a slot left
/// out retires on no run from `st`: the first of them to retire would have
/// had its needs met by slots retired before it, all in the fixpoint.
fn stalled<S: Bits>(m: &Machine<'_, S>, st: &State<S>) -> bool {
    let l = &m.layout;
    let pending = (st.bound | st.versions) & !st.retired & !l.inits;
    if pending.is_empty() {
        return false;
    }
    let windows = Windows::new(m, st);
    let n = st.threads.len();
    // Where each slot stands in its thread's window.
    let mut at: Vec<u32> = vec![u32::MAX; l.len()];
    for t in 0..n {
        for (i, e) in windows.get(t).entries.iter().enumerate() {
            if let Some(s) = e.slot {
                at[s] = i as u32;
            }
        }
    }
    let mut ok = vec![0usize; n];
    let may = |ok: &[usize], s: usize| -> bool {
        if st.retired.has(s) {
            return true;
        }
        let Some(u) = l.slots[s].thread else {
            return true;
        };
        match at[s] {
            u32::MAX => ok[u] == windows.get(u).entries.len(),
            i => (i as usize) < ok[u],
        }
    };
    loop {
        let mut changed = false;
        for t in 0..n {
            let entries = &windows.get(t).entries;
            while ok[t] < entries.len() {
                let e = &entries[ok[t]];
                let code = &m.program.threads[t].code[e.pc];
                let ready = match (code, e.slot) {
                    (Instr::Await { from }, _) => from.iter().all(|pt| {
                        l.slot(pt.thread, pt.pc, pt.exec)
                            .is_none_or(|s| may(&ok, s))
                    }),
                    (_, Some(x)) if st.bound.has(x) && acquires(m, st, x, code, &e.regs) => {
                        let (obs, _) = m.observed_by(st, x);
                        members(obs & !l.inits & !st.retired)
                            .all(|u| !(l.slots[u].release_write() && l.ms(u, x)) || may(&ok, u))
                    }
                    _ => true,
                };
                if !ready {
                    break;
                }
                ok[t] += 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    members(pending).any(|s| !may(&ok, s))
}

/// Whether bound read `x` (instruction `code`, register values `regs`
/// before it) takes the acquire merge when it retires: an acquire read,
/// and for an mbarrier wait only if the value it read completes its phase.
fn acquires<S: Bits>(
    m: &Machine<'_, S>,
    st: &State<S>,
    x: usize,
    code: &Instr,
    regs: &[Option<crate::ir::Value>],
) -> bool {
    let si = &m.layout.slots[x];
    if !si.acquire_read() {
        return false;
    }
    if si.wait.is_none() {
        return true;
    }
    let Instr::MbarWait { phase, .. } = code else {
        return false;
    };
    let (test, arg) = mbar::Test::of(phase);
    operand(regs, &arg).is_some_and(|a| mbar::done(test, m.read_value(st, x), a))
}
