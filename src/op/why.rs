//! Why synchronisation does or does not happen, in the words of traces:
//! why a thread's cache line need not show a write (not in its causal past,
//! or in it but on another proxy path or through another virtual address),
//! which releases an acquire takes and which it does not (scopes that do
//! not include each other, a weak write that is not observed), and what a
//! refused step's [`Reason`] means.

use crate::ir::Proxy;
use crate::rel::{Bits, bit, members};

use super::Machine;
use super::reason::Reason;
use super::state::State;

impl<S: Bits> Machine<'_, S> {
    /// A slot as `P0 `st.weak x, 1``, or `x=initial`.
    pub fn slot_words(&self, s: usize) -> String {
        let si = &self.layout.slots[s];
        match si.thread {
            None => format!("{}=initial", self.program.locations[si.loc].name),
            Some(t) => format!(
                "{} `{}`",
                self.program.threads[t].name,
                crate::model::describe::instr_text(self.source, &self.program, t, si.pc)
            ),
        }
    }

    /// Why thread `t`'s view in `st` does not oblige read `r`'s cache line to
    /// show write `w` (which is coherence-after the version `r` returned).
    pub fn not_shown(&self, st: &State<S>, t: usize, r: usize, w: usize) -> String {
        let l = &self.layout;
        let k = &st.threads[t].view;
        let me = &self.program.threads[t].name;
        let (sr, sw) = (&l.slots[r], &l.slots[w]);
        if !k.raw.has(w) {
            return format!("it is not in {me}'s causal past");
        }
        let past = format!("it is in {me}'s causal past");
        let written = |p: Proxy| {
            if p == Proxy::Generic {
                "the generic proxy".to_string()
            } else {
                format!("the {p} proxy")
            }
        };
        let reached_l2 = k.gen_.has(w);
        let cta_of = |c: usize| l.ctas[c].1;
        if sr.proxy == Proxy::Generic {
            if !reached_l2 {
                return format!(
                    "{past}, but it was written through {} and no fence.proxy.{} in CTA {} after it has pushed it to the L2 reconvergence point, so the generic path need not see it",
                    written(sw.proxy),
                    sw.proxy,
                    cta_of(sw.cta)
                );
            }
            return format!(
                "{past}, but through another virtual address of the location; no fence.proxy.alias after it has made it visible through every alias, so this address's cache line may be older"
            );
        }
        let q = sr.proxy;
        let c = cta_of(sr.cta);
        if sw.proxy == q && sw.va == sr.va && sw.cta != sr.cta && !reached_l2 {
            return format!(
                "{past}, but on the {q} path of CTA {}: a fence.proxy.{q} in CTA {} after it (to push it to L2) and one in CTA {c} before this read (to invalidate this CTA's {q} cache) are missing",
                cta_of(sw.cta),
                cta_of(sw.cta)
            );
        }
        let mut why = format!(
            "{past}, but it was written through {}, and this read goes through CTA {c}'s {q} cache: ",
            written(sw.proxy)
        );
        if !reached_l2 {
            why.push_str(&format!(
                "it has not even been pushed to L2 (no fence.proxy.{} in CTA {} after it), and ",
                sw.proxy,
                cta_of(sw.cta)
            ));
        }
        why.push_str(&format!(
            "no fence.proxy.{q} in CTA {c} ordered after it has invalidated that cache, so the {q} path may still return an older value"
        ));
        if sw.va != sr.va {
            why.push_str(" (and the addresses differ: a fence.proxy.alias is needed too)");
        }
        why
    }

    /// Why slots `a` and `b` are not morally strong (digest §3.3), in words.
    pub fn not_morally_strong(&self, a: usize, b: usize) -> String {
        let l = &self.layout;
        let (sa, sb) = (&l.slots[a], &l.slots[b]);
        let (na, nb) = (self.slot_words(a), self.slot_words(b));
        let who = |s: &super::layout::SlotInfo| {
            let t = s.thread.map_or("the initial state".to_string(), |t| {
                self.program.threads[t].name.clone()
            });
            format!(
                "{t} (GPU {}, cluster {}, CTA {})",
                s.placement.gpu, s.placement.cluster, s.placement.cta
            )
        };
        if sa.thread != sb.thread {
            if !sa.strong() {
                return format!(
                    "{na} is weak, and a weak access synchronises with no other thread"
                );
            }
            if !sb.strong() {
                return format!(
                    "{nb} is weak, and a weak access synchronises with no other thread"
                );
            }
            for (x, y, sx, sy) in [(&na, &nb, sa, sb), (&nb, &na, sb, sa)] {
                if let Some(sc) = sx.scope {
                    if !sx.placement.includes(sc, &sy.placement) {
                        let _ = y;
                        return format!(
                            "the .{sc} scope of {x} does not include {}, and morally strong accesses need scopes that include each other",
                            who(sy)
                        );
                    }
                }
            }
        }
        if sa.proxy != sb.proxy {
            return format!(
                "{na} and {nb} use different proxies ({} and {})",
                sa.proxy, sb.proxy
            );
        }
        format!("{na} and {nb} access different virtual addresses")
    }

    /// What retiring the acquire (read or fence) `tail` of thread `t` takes in
    /// `st` (the state before it retires): one line per release it
    /// synchronises with, and one per release or read that fails to.
    pub fn acquire_words(&self, st: &State<S>, t: usize, tail: usize) -> Vec<String> {
        let l = &self.layout;
        let st_tail = &l.slots[tail];
        let mut out = Vec::new();
        if st_tail.wait.is_some() && st_tail.acquire_read() {
            let done = self.wait_done(st, t, tail);
            if !done {
                out.push("the wait did not succeed, so it acquires nothing".to_string());
                return out;
            }
        }
        let earlier = st.retired & l.thread_slots[t] & l.reads;
        let pattern: S = if st_tail.acquire_read() {
            S::bit(tail)
                | members(earlier & l.va_slots[st_tail.va])
                    .filter(|&r| l.slots[r].pattern_read())
                    .fold(S::EMPTY, |a, r| a | bit(r))
        } else {
            members(earlier)
                .filter(|&r| l.slots[r].pattern_read())
                .fold(S::EMPTY, |a, r| a | bit(r))
        };
        for r in members(pattern) {
            let src = st.rf[r];
            if src == super::state::NONE {
                continue;
            }
            let src = src as usize;
            if l.inits.has(src) {
                continue;
            }
            if !l.ms(src, r) {
                out.push(format!(
                    "{} reads from {} but does not synchronise with it: {}",
                    self.slot_words(r),
                    self.slot_words(src),
                    self.not_morally_strong(src, r)
                ));
                continue;
            }
            let (obs, _) = self.observed_by(st, r);
            for u in members(obs & !l.inits) {
                for h in self.heads_of(st, u) {
                    if l.ms(h, tail) {
                        out.push(format!("synchronises with {}", self.slot_words(h)));
                    } else {
                        out.push(format!(
                            "takes nothing from {}: {}",
                            self.slot_words(h),
                            self.not_morally_strong(h, tail)
                        ));
                    }
                }
            }
        }
        out.dedup();
        out
    }

    /// The retired heads of version `u`'s release patterns, whatever the tail.
    fn heads_of(&self, st: &State<S>, u: usize) -> Vec<usize> {
        let l = &self.layout;
        let su = &l.slots[u];
        let Some(ut) = su.thread else {
            return Vec::new();
        };
        members(st.retired & l.thread_slots[ut])
            .filter(|&h| {
                let sh = &l.slots[h];
                (h == u || st.seq[h] < st.seq[u])
                    && ((h == u && sh.release_write())
                        || (h != u
                            && su.strong()
                            && ((sh.release_write() && sh.va == su.va) || sh.release_fence())))
            })
            .collect()
    }

    /// Whether the bound mbarrier wait in `slot` of thread `t` succeeds
    /// (true for any other read).
    pub fn wait_done(&self, st: &State<S>, t: usize, slot: usize) -> bool {
        let pc = self.layout.slots[slot].pc;
        let crate::ir::Instr::MbarWait { phase, .. } = &self.program.threads[t].code[pc] else {
            return true;
        };
        let (test, arg) = crate::ir::mbar::Test::of(phase);
        let regs: Vec<Option<crate::ir::Value>> =
            st.threads[t].regs.iter().map(|v| Some(*v)).collect();
        let Some(arg) = crate::ir::eval::operand(&regs, &arg) else {
            return false;
        };
        crate::ir::mbar::done(test, self.read_value(st, slot), arg)
    }

    /// A refused step's reason in words (`st` is the state it is refused in).
    pub fn reason_words(&self, st: &State<S>, t: usize, reason: &Reason) -> String {
        let l = &self.layout;
        match *reason {
            Reason::Stale {
                read,
                version,
                newer,
            } => {
                let via = if l.slots[newer].writes() {
                    String::new()
                } else {
                    " (a read it has in its causal past)".to_string()
                };
                format!(
                    "Causality: {}'s view already guarantees {}{via} on the cache line of {}, and it is coherence-after {}",
                    self.program.threads[t].name,
                    self.slot_words(newer),
                    self.slot_words(read),
                    self.slot_words(version)
                )
            }
            Reason::ScPerLocation { loc } => format!(
                "SC per location: program order and the morally strong reads and writes of {} would form a cycle",
                self.program.locations[loc].name
            ),
            Reason::CoherenceCycle { version } => format!(
                "Coherence: the coherence order of {} would be cyclic",
                self.program.locations[l.slots[version].loc].name
            ),
            Reason::Obligation { version, newer } => format!(
                "Causality: a reader that returned {} already knew {}, so {} may not be ordered after it",
                self.slot_words(version),
                self.slot_words(newer),
                self.slot_words(newer)
            ),
            Reason::Atomicity { rmw, between } => format!(
                "Atomicity: {} would fall between the read and the write of {}",
                self.slot_words(between),
                self.slot_words(rmw)
            ),
            Reason::ReadsFromFuture { write, read } => format!(
                "Causality: {} returned {} but is already in its causal past",
                self.slot_words(read),
                self.slot_words(write)
            ),
            Reason::Waits => {
                let _ = st;
                "it waits: a release it synchronises with, a barrier phase or an awaited operation has not happened yet".to_string()
            }
        }
    }
}
