//! Waiting bugs that an interleaving does not show: the witness is
//! sequentially consistent once every wait is read for what it does, yet a
//! programmer wrote the wait to order something it does not order. Each
//! detector here matches one such bug on the witness and names it:
//!
//! * an mbarrier wait that observes an earlier phase than the one the data
//!   it guards completes in: the phase was armed with fewer transaction
//!   bytes than the copy brings (`expect_tx` short, or a plain arrival
//!   without `expect_tx`), or the operation completes on another mbarrier
//!   (a `tcgen05.commit` to the wrong barrier);
//! * a producer's mbarrier wait that observes a phase completed before the
//!   consumer's release (a wrong parity): the producer overwrites data the
//!   consumer has not read yet;
//! * a read of the dependent grid before (or without) `griddepcontrol.wait`;
//! * a barrier that does not include the writer's arrival: a `bar.warp.sync`
//!   whose writer lane exits without one, or two arrivals in different
//!   phases of one barrier resource;
//! * a register read of a `wgmma.mma_async` accumulator before the
//!   `wgmma.wait_group` that delivers it.
//!
//! The phase an mbarrier wait observes is read off the state it read (the
//! PTX ISA, "mbarrier.test_wait/mbarrier.try_wait": a wait succeeds once the
//! phase it names has completed; `.parity` names the current phase or the
//! one immediately before it by its parity): a wait that succeeds on a
//! state of phase `k` observes phase `k − 1` complete (phase −1 is the one
//! before the first, complete from the start). The phase an operation's
//! bytes or arrival count toward is that of the state its complete-tx or
//! arrive-on read.

use crate::ax::graph::Kind;
use crate::ir::tensor_core::TcOp;
use crate::ir::{BarrierKind, Completion, Instr, LocKind, MbarOp, Operand, Value, mbar};
use crate::rel::{Bits, members};

use super::check::{Relations, Witness};
use super::missing::{Links, Pair, PairSite};
use super::words::Words;

/// The waiting bugs of the sequentially consistent witness `w`, the reads
/// the outcome depends on first (empty: nothing to name, the outcome is
/// sequentially consistent).
pub fn waiting_bugs<S: Bits>(
    words: &Words<'_, '_, S>,
    w: &Witness<S>,
    rels: &Relations<'_, '_, S>,
    outcome_reads: &[usize],
) -> Vec<Pair> {
    let g = words.graph;
    let mut reads: Vec<usize> = g
        .reads
        .iter()
        .copied()
        .filter(|&r| !is_mbar(words, g.events[r].loc))
        .collect();
    reads.sort_by_key(|r| (!outcome_reads.contains(r), *r));
    let mut out: Vec<Pair> = Vec::new();
    let push = |p: Option<Pair>, out: &mut Vec<Pair>| {
        if let Some(p) = p {
            if !out.iter().any(|q| q.links == p.links) {
                out.push(p);
            }
        }
    };
    for &r in &reads {
        let Some(from) = w.rf[r] else { continue };
        for m in members(rels.fr.row(r) & !g.inits) {
            if m == r || g.events[m].loc != g.events[r].loc {
                continue;
            }
            let d = Detect {
                words,
                w,
                rels,
                links: Links::new(words, w, rels),
            };
            // A write the program orders after the read is not missed.
            if d.after(r, m) {
                continue;
            }
            let found = d
                .mbarrier_phase(r, from, m)
                .or_else(|| d.griddep(r, from, m))
                .or_else(|| d.barrier_phase(r, from, m));
            push(found, &mut out);
        }
        let d = Detect {
            words,
            w,
            rels,
            links: Links::new(words, w, rels),
        };
        push(d.overwritten(r, from), &mut out);
    }
    for p in register_before_wait(words) {
        push(Some(p), &mut out);
    }
    out
}

/// Whether location `l` is an mbarrier.
fn is_mbar<S: Bits>(words: &Words<'_, '_, S>, l: usize) -> bool {
    words
        .graph
        .program
        .locations
        .get(l)
        .is_some_and(|x| x.kind == LocKind::Mbarrier)
}

/// One witness's detectors, with the namer of the pair being built.
struct Detect<'x, 'a, 'p, S: Bits> {
    words: &'x Words<'a, 'p, S>,
    w: &'x Witness<S>,
    rels: &'x Relations<'a, 'p, S>,
    links: Links<'x, 'a, 'p, S>,
}

impl<S: Bits> Detect<'_, '_, '_, S> {
    fn q(&self, e: usize) -> String {
        self.links.q(e)
    }

    /// "`r` reads from `from` and misses `m`": what every detector of a
    /// missed write names.
    fn misses(&self, r: usize, from: usize, m: usize) -> String {
        format!(
            "{} reads from {} and misses {}",
            self.q(r),
            self.q(from),
            self.q(m)
        )
    }

    fn value(&self, e: usize) -> Option<Value> {
        self.words.value(&self.w.rf, e)
    }

    /// The thread of the test as written an event belongs to (an
    /// asynchronous operation's: its issuer).
    fn owner(&self, e: usize) -> Option<usize> {
        self.words.source_instr(e).map(|(t, _)| t)
    }

    /// Whether `e` is an event of a thread as written (not of an operation).
    fn own(&self, e: usize) -> bool {
        let g = self.words.graph;
        g.events[e]
            .thread
            .is_some_and(|t| g.program.threads[t].agent.is_none())
    }

    /// The event of `e`'s owner where `e` happens as far as its thread can
    /// tell: `e` itself, or for an operation's event the issuer's event
    /// the operation's start awaits.
    fn anchor(&self, e: usize) -> Option<usize> {
        if self.own(e) {
            return Some(e);
        }
        let g = self.words.graph;
        let t = g.events[e].thread?;
        let issuer = g.program.threads[t].agent.as_ref()?.issuer;
        let first = (0..g.len()).find(|&x| g.events[x].thread == Some(t))?;
        (0..g.len())
            .filter(|&x| g.await_edges.has(x, first) && g.events[x].thread == Some(issuer))
            .max()
    }

    /// Whether `a`, an event of a thread as written, comes before `e` in
    /// its thread (`e` or, for an operation's event, its issue).
    fn before(&self, a: usize, e: usize) -> bool {
        self.anchor(e)
            .is_some_and(|x| x == a || self.words.graph.po.has(a, x))
    }

    /// Whether causality (or program order) puts `m` after the read `r`
    /// (after its issue, for an operation's read).
    fn after(&self, r: usize, m: usize) -> bool {
        let g = self.words.graph;
        let cb = &self.rels.cb;
        std::iter::once(r)
            .chain(self.anchor(r))
            .any(|x| x == m || g.po.has(x, m) || cb.has(x, m))
    }

    /// Whether `e` is an mbarrier wait that succeeded.
    fn succeeded_wait(&self, e: usize) -> bool {
        let g = self.words.graph;
        let Some(t) = g.events[e].thread else {
            return false;
        };
        g.cond_reads
            .iter()
            .find(|(c, _)| *c == e)
            .is_some_and(|(_, done)| g.eval(&self.w.rf, t, done).is_some_and(|v| v != 0))
            && is_mbar(self.words, g.events[e].loc)
    }

    /// The last successful mbarrier wait of `e`'s owner before `e`.
    fn wait_before(&self, e: usize) -> Option<usize> {
        let g = self.words.graph;
        let t = self.owner(e)?;
        (0..g.len())
            .filter(|&x| {
                self.own(x)
                    && g.events[x].thread == Some(t)
                    && self.before(x, e)
                    && self.succeeded_wait(x)
            })
            .max()
    }

    /// The phase a successful wait observes complete: the one before the
    /// phase of the state it read.
    fn observed(&self, wait: usize) -> Option<Value> {
        self.value(wait).map(|v| mbar::phase(v) - 1)
    }

    /// The phase an mbarrier operation's write half counts toward: that
    /// of the state its read half read.
    fn phase_of(&self, write: usize) -> Option<Value> {
        let g = self.words.graph;
        let read = (write > 0 && g.rmw.has(write - 1, write)).then(|| write - 1)?;
        self.value(read).map(mbar::phase)
    }

    fn instr_at(&self, t: usize, pc: usize) -> Option<String> {
        let th = self.words.source.threads.get(t)?;
        let i = th.code.get(pc)?;
        Some(crate::litmus::print::instr(self.words.source, th, i))
    }

    /// `` `instr` (line 8:2)`` for instruction `pc` of thread `t` as written.
    fn at(&self, t: usize, pc: usize) -> String {
        let text = self.instr_at(t, pc).unwrap_or_default();
        match self.words.positions.short(t, pc) {
            Some(p) => format!("`{text}` ({p})"),
            None => format!("`{text}`"),
        }
    }

    fn site(&self, t: usize, pc: usize) -> PairSite {
        let th = &self.words.source.threads[t];
        PairSite {
            thread: th.name.clone(),
            instr: self.instr_at(t, pc).unwrap_or_default(),
            position: self.words.positions.full(t, pc).map(str::to_string),
        }
    }

    fn loc_name(&self, l: usize) -> String {
        self.words.graph.program.locations[l].name.clone()
    }

    /// A pair named by this detector.
    fn pair(
        &self,
        kind: &'static str,
        what: String,
        links: Vec<String>,
        extra: &[(usize, usize)],
    ) -> Pair {
        let mut sites = self.links.sites();
        for &(t, pc) in extra {
            let s = self.site(t, pc);
            if !sites.contains(&s) {
                sites.push(s);
            }
        }
        Pair {
            kind,
            what,
            chain: String::new(),
            links,
            sites,
        }
    }

    /// The mbarrier completions that follow `m`: complete-tx or arrive-on
    /// writes of operations that `m` is causally before, the first ones
    /// (none of them after another).
    fn completions(&self, m: usize) -> Vec<usize> {
        let g = self.words.graph;
        let all: Vec<usize> = (0..g.len())
            .filter(|&c| {
                let ev = &g.events[c];
                ev.kind == Kind::Write
                    && !self.own(c)
                    && ev.thread.is_some()
                    && is_mbar(self.words, ev.loc)
                    && (g.po.has(m, c) || self.rels.cb.has(m, c))
            })
            .collect();
        all.iter()
            .copied()
            .filter(|&c| {
                !all.iter()
                    .any(|&d| d != c && (g.po.has(d, c) || self.rels.cb.has(d, c)))
            })
            .collect()
    }

    /// The bytes that the copy writing `m` brings to mbarrier location
    /// `bar`, with its first element copy as written: the sizes of the
    /// element copies of its copy group (a tensor, multicast or
    /// multi-element copy is written as joined element copies) that
    /// complete on `bar`.
    fn copy_bytes(&self, m: usize, bar: usize) -> Option<(Value, usize, (usize, usize))> {
        let (t, pc) = self.words.source_instr(m)?;
        let code = &self.words.source.threads[t].code;
        let joined =
            |pc: usize| matches!(code.get(pc), Some(Instr::AsyncCopy { joined: true, .. }));
        let mut first = pc;
        while first > 0 && joined(first) {
            first -= 1;
        }
        let mut last = pc;
        while joined(last + 1) {
            last += 1;
        }
        let mut bytes = 0;
        let mut elements = 0;
        for i in &code[first..=last] {
            if let Instr::AsyncCopy {
                size,
                completion: Completion::Mbarrier(a),
                ..
            } = i
            {
                if self.words.source.addresses[*a].loc == bar {
                    bytes += size;
                    elements += 1;
                }
            }
        }
        (bytes > 0).then_some((bytes, elements, (t, first)))
    }

    /// A read that misses `m` after an mbarrier wait that observes an
    /// earlier phase than the one `m`'s bytes complete in, or that waits on
    /// another mbarrier than the one `m`'s operation completes on.
    fn mbarrier_phase(&self, r: usize, from: usize, m: usize) -> Option<Pair> {
        let g = self.words.graph;
        if self.own(m) {
            return None;
        }
        let wait = self.wait_before(r)?;
        let bar = g.events[wait].loc;
        let k_obs = self.observed(wait)?;
        let done = self.completions(m);
        if done.is_empty() {
            return None;
        }
        let what = self.misses(r, from, m);
        let observes = |k: Value| {
            if k < 0 {
                format!(
                    "it reads the state of phase {} of `{}`, so it observes phase {k}, the one before the first, complete from the start",
                    k + 1,
                    self.loc_name(bar)
                )
            } else {
                format!(
                    "it reads the state of phase {} of `{}`, so it observes phase {k} (parity {}) complete",
                    k + 1,
                    self.loc_name(bar),
                    k.rem_euclid(2)
                )
            }
        };
        if let Some(&c) = done.iter().find(|&&c| g.events[c].loc == bar) {
            let k_c = self.phase_of(c)?;
            if k_c <= k_obs {
                return None;
            }
            let head = format!(
                "{} succeeds before {} is complete: {}, but the bytes of {} count toward phase {k_c}, with {}: the wait observes a phase that completed without them",
                self.q(wait),
                self.q(m),
                observes(k_obs),
                self.q(m),
                self.q(c)
            );
            let mut extra = Vec::new();
            let why = self.armed(bar, k_obs, m, &mut extra);
            let mut links = vec![head];
            links.extend(why);
            return Some(self.pair("mbarrier_phase", what, links, &extra));
        }
        // The operation completes on another mbarrier only.
        let c = done[0];
        let other = g.events[c].loc;
        let (ot, opc) = self.words.source_instr(m)?;
        let mut extra = vec![(ot, opc)];
        let by = match self.words.source_instr(c) {
            Some((ct, cpc)) if (ct, cpc) != (ot, opc) => {
                extra.push((ct, cpc));
                format!(
                    " ({} arrives on it once the operation completes)",
                    self.at(ct, cpc)
                )
            }
            _ => String::new(),
        };
        let src = self.w.rf[wait];
        let completer = src
            .filter(|&s| !g.inits.has(s))
            .and_then(|s| self.words.source_instr(s).map(|(t, pc)| (s, t, pc)));
        let phase_by = match completer {
            Some((s, t, pc)) => {
                extra.push((t, pc));
                format!(
                    "; the phase it observes was completed by {} ({}), which does not wait for {}",
                    self.q(s),
                    self.at(t, pc),
                    self.q(m)
                )
            }
            None => String::new(),
        };
        let link = format!(
            "{} waits on `{}`, but the operation that writes {}, {}, completes on `{}`{by}: {}{phase_by}; a wait on `{}` — or the operation's completion sent to `{}` — is needed",
            self.q(wait),
            self.loc_name(bar),
            self.q(m),
            self.at(ot, opc),
            self.loc_name(other),
            observes(k_obs),
            self.loc_name(other),
            self.loc_name(bar)
        );
        Some(self.pair("mbarrier_wrong_barrier", what, vec![link], &extra))
    }

    /// Why phase `k` of mbarrier `bar` completed without the bytes of `m`:
    /// the transaction bytes it was armed with against the copy's.
    fn armed(
        &self,
        bar: usize,
        k: Value,
        m: usize,
        extra: &mut Vec<(usize, usize)>,
    ) -> Vec<String> {
        let g = self.words.graph;
        let Some((bytes, elements, (ct, cpc))) = self.copy_bytes(m, bar) else {
            return Vec::new();
        };
        extra.push((ct, cpc));
        // A copy written as several element copies is named by where it
        // is written, with its element count.
        let copy = match self.words.positions.short(ct, cpc) {
            Some(p) if elements > 1 => {
                format!(
                    "the copy at {p} ({elements} element copies to `{}`)",
                    self.loc_name(bar)
                )
            }
            _ => self.at(ct, cpc),
        };
        let mut expected = 0;
        let mut arming: Vec<String> = Vec::new();
        let mut arrivals: Vec<String> = Vec::new();
        for x in 0..g.len() {
            let ev = &g.events[x];
            if ev.kind != Kind::Write || ev.loc != bar || !self.own(x) {
                continue;
            }
            if self.phase_of(x) != Some(k) {
                continue;
            }
            let Some((t, pc)) = self.words.source_instr(x) else {
                continue;
            };
            match self.words.source.threads[t].code.get(pc) {
                Some(Instr::Mbar {
                    op: MbarOp::ArriveExpectTx | MbarOp::ExpectTx,
                    arg,
                    ..
                }) => {
                    if let Some(Operand::Imm(b)) = arg {
                        expected += b;
                    }
                    extra.push((t, pc));
                    arming.push(self.at(t, pc));
                }
                Some(Instr::Mbar {
                    op: MbarOp::Arrive, ..
                }) => {
                    extra.push((t, pc));
                    arrivals.push(self.at(t, pc));
                }
                _ => {}
            }
        }
        let name = self.loc_name(bar);
        let rule = "(PTX ISA, mbarrier: a phase completes when its pending arrival count and its tx-count both reach zero)";
        if expected == 0 && !arrivals.is_empty() {
            return vec![format!(
                "phase {k} of `{name}` expects no transaction bytes: {} arrive{} without `expect_tx`, so the arrivals alone complete it, and the {bytes} bytes that {} brings to `{name}` count toward phase {}: `mbarrier.arrive.expect_tx` of {bytes} bytes on `{name}` is needed {rule}",
                arrivals.join(" and "),
                if arrivals.len() == 1 { "s" } else { "" },
                copy,
                k + 1
            )];
        }
        if expected > 0 && expected < bytes {
            return vec![format!(
                "{} arm{} phase {k} of `{name}` with {expected} transaction bytes, but {} brings {bytes} bytes to `{name}`: the tx-count reaches zero, and the phase completes, when {expected} of them have arrived; `expect_tx` of {bytes} bytes is needed {rule}",
                arming.join(" and "),
                if arming.len() == 1 { "s" } else { "" },
                copy
            )];
        }
        Vec::new()
    }

    /// A read of a value written by an operation that its issuer started
    /// after an mbarrier wait which does not wait for the reader's later
    /// arrival on that mbarrier (the reader's release of the buffer): the
    /// wait observes an earlier phase, by its parity.
    fn overwritten(&self, r: usize, from: usize) -> Option<Pair> {
        let g = self.words.graph;
        if g.inits.has(from) || self.own(from) {
            return None;
        }
        let reader = self.owner(r)?;
        let issuer = self.owner(from)?;
        if reader == issuer {
            return None;
        }
        // The read is ordered after an earlier write of the location, not
        // after the one it returns: that one came too early.
        if std::iter::once(r)
            .chain(self.anchor(r))
            .any(|x| self.rels.cb.has(from, x))
        {
            return None;
        }
        let loc = g.events[r].loc;
        // The write it overwrote, when there is one the read is not
        // ordered before.
        let earlier = members(g.writes_of[loc] & !g.inits)
            .filter(|&e| e != from && self.rels.co.has(e, from) && !self.after(r, e))
            .max();
        let wait = self.wait_before(from)?;
        let bar = g.events[wait].loc;
        let src = self.w.rf[wait]?;
        let anchor = self.anchor(r)?;
        // The reader's first arrival on that mbarrier after the read.
        let arrival = (0..g.len()).find(|&a| {
            let ev = &g.events[a];
            ev.kind == Kind::Write
                && ev.loc == bar
                && self.own(a)
                && ev.thread == g.events[anchor].thread
                && g.po.has(anchor, a)
        })?;
        if !self.rels.co.has(src, arrival) {
            return None;
        }
        let k_obs = self.observed(wait)?;
        let k_a = self.phase_of(arrival)?;
        if k_a <= k_obs {
            return None;
        }
        let name = self.loc_name(bar);
        let (ot, opc) = self.words.source_instr(from)?;
        let what = match earlier {
            Some(e) => format!(
                "{} reads from {}, which overwrites {} before the read",
                self.q(r),
                self.q(from),
                self.q(e)
            ),
            None => format!(
                "{} reads from {}, which its issuer writes before the read is done",
                self.q(r),
                self.q(from)
            ),
        };
        let observes = if k_obs < 0 {
            format!(
                "it reads the state of phase {} of `{name}`, so it observes phase {k_obs}, the one before the first, complete from the start",
                k_obs + 1
            )
        } else {
            format!(
                "it reads the state of phase {} of `{name}`, so it observes phase {k_obs} complete",
                k_obs + 1
            )
        };
        let head = format!(
            "{} is started by {} after {} succeeds: {observes}, not phase {k_a}, which {} — made after {} — counts toward: the producer does not wait for the consumer to release the buffer",
            self.q(from),
            self.at(ot, opc),
            self.q(wait),
            self.q(arrival),
            self.q(r)
        );
        let mut links = vec![head];
        let (wt, wpc) = self.words.source_instr(wait)?;
        if let Some(Instr::MbarWait {
            phase: crate::ir::WaitPhase::Parity(_),
            ..
        }) = self.words.source.threads[wt].code.get(wpc)
        {
            let p = k_obs.rem_euclid(2);
            let want = k_a.rem_euclid(2);
            if p != want {
                links.push(format!(
                    "{} asks for parity {p}, which names phase {k_obs} while `{name}` is in phase {}: a wait for phase {k_a} needs parity {want} (PTX ISA, mbarrier.test_wait/try_wait: the parity operand names the current phase or the one immediately before it; an even phase has parity 0, an odd one parity 1)",
                    self.at(wt, wpc),
                    k_obs + 1
                ));
            } else {
                links.push(format!(
                    "{} asks for parity {p}, which phase {k_obs} and phase {k_a} share: by the time the wait looks, the phase it means has not begun, and the earlier phase of the same parity satisfies it (PTX ISA, mbarrier.test_wait/try_wait: the parity names the current phase or the one immediately before it)",
                    self.at(wt, wpc)
                ));
            }
        }
        Some(self.pair("mbarrier_parity", what, links, &[(ot, opc), (wt, wpc)]))
    }

    /// A read of the dependent grid that misses a write of the primary: the
    /// read comes before `griddepcontrol.wait`, or its thread's path skips
    /// or has none. Judged on the witness's events (the waits the thread
    /// executed), not on positions in the text: a wait written before the
    /// read on a branch the thread did not take orders nothing.
    fn griddep(&self, r: usize, from: usize, m: usize) -> Option<Pair> {
        let g = self.words.graph;
        let (rt, _) = self.words.source_instr(r)?;
        let (mt, _) = self.words.source_instr(m)?;
        let src = self.words.source;
        if src.threads[rt].placement.grid == 0 || src.threads[mt].placement.grid != 0 {
            return None;
        }
        let is_wait = |pc: usize| {
            matches!(
                src.threads[rt].code.get(pc),
                Some(Instr::GridDep { wait: true })
            )
        };
        // A dependent's `griddepcontrol.wait` runs as an await of the
        // primary's completion (`model::griddep`): its events are the waits
        // the thread executed.
        let executed: Vec<usize> = (0..g.len())
            .filter(|&x| {
                let ev = &g.events[x];
                ev.thread == Some(rt) && ev.kind == Kind::Await && is_wait(ev.pc)
            })
            .collect();
        if executed.iter().any(|&x| self.before(x, r)) {
            return None;
        }
        let what = self.misses(r, from, m);
        let isa = "PTX ISA, griddepcontrol: `.wait` waits until the prerequisite grids have completed and their memory operations are performed and made visible; the dependent grid may start before the primary completes";
        let mut extra = Vec::new();
        let anchor = self.anchor(r)?;
        // The wait the thread executes after the read, if any; else one
        // written in its code on a path it did not take.
        let later = executed
            .iter()
            .copied()
            .find(|&x| g.po.has(anchor, x))
            .map(|x| g.events[x].pc);
        let skipped = (0..src.threads[rt].code.len()).find(|&pc| is_wait(pc));
        let link = match (later, skipped) {
            (Some(w), _) => {
                extra.push((rt, w));
                format!(
                    "{} comes before {} in {}: only the accesses after the wait are ordered after the primary grid's completion, so the read may run before {}; it must come after the wait ({isa})",
                    self.q(r),
                    self.at(rt, w),
                    src.threads[rt].name,
                    self.q(m)
                )
            }
            (None, Some(w)) => {
                extra.push((rt, w));
                format!(
                    "{} does not pass {} before {}: the path it takes to the read skips the wait, so nothing orders the read after the primary grid, and it may run before {}; every path to the read must go through the wait ({isa})",
                    src.threads[rt].name,
                    self.at(rt, w),
                    self.q(r),
                    self.q(m)
                )
            }
            (None, None) => {
                let trigger = (0..src.threads[mt].code.len())
                    .find(|&pc| matches!(src.threads[mt].code[pc], Instr::GridDep { wait: false }));
                let tail = match trigger {
                    Some(pc) => {
                        extra.push((mt, pc));
                        format!(
                            ": {} only lets the dependent grid be scheduled early, and orders no memory",
                            self.at(mt, pc)
                        )
                    }
                    None => String::new(),
                };
                format!(
                    "{} never executes `griddepcontrol.wait`, so nothing orders {} after the primary grid{tail}; `griddepcontrol.wait` (`cudaGridDependencySynchronize()`) before it is missing ({isa})",
                    src.threads[rt].name,
                    self.q(r)
                )
            }
        };
        Some(self.pair("griddep_wait", what, vec![link], &extra))
    }

    /// A read after a barrier wait that does not include the arrival the
    /// writer makes after its write: a warp barrier whose writer lane exits
    /// without one, or two arrivals in different phases of one barrier.
    fn barrier_phase(&self, r: usize, from: usize, m: usize) -> Option<Pair> {
        let g = self.words.graph;
        if !self.own(m) {
            return None;
        }
        let rt = g.events[self.anchor(r)?].thread?;
        let mt = g.events[m].thread?;
        if rt == mt {
            return None;
        }
        let barrier = |e: usize| -> Option<&Instr> {
            let ev = &g.events[e];
            match g.program.threads[ev.thread?].code.get(ev.pc) {
                Some(i @ Instr::Barrier { .. }) => Some(i),
                _ => None,
            }
        };
        let wait = (0..g.len())
            .filter(|&x| {
                g.events[x].kind == Kind::BarWait
                    && g.events[x].thread == Some(rt)
                    && self.before(x, r)
                    && barrier(x).is_some()
            })
            .max()?;
        let Some(Instr::Barrier { kind, id, .. }) = barrier(wait) else {
            return None;
        };
        // `elect.sync`'s and `activemask`'s rendezvous order no memory (their
        // meetings are not in `bar`): a missed write there is no phase's.
        if matches!(kind, BarrierKind::Elect | BarrierKind::ActiveMask) {
            return None;
        }
        let warp = *kind == BarrierKind::WarpSync;
        let arrive = (0..g.len()).find(|&x| {
            g.events[x].kind == Kind::BarArrive
                && g.events[x].thread == Some(mt)
                && g.po.has(m, x)
                && matches!(barrier(x), Some(Instr::Barrier { kind: k, id: i, .. })
                    if (*k == BarrierKind::WarpSync) == warp && (warp || i.first() == id.first()))
        });
        let what = self.misses(r, from, m);
        let p = g.program;
        match arrive {
            None if warp => {
                // The writer lane must be named in the mask.
                let Some(Operand::Imm(mask)) = id.first() else {
                    return None;
                };
                let me = &p.threads[rt].placement;
                if !p.threads[mt].placement.same_warp(me) {
                    return None;
                }
                let lane = p.lane_id(mt);
                if (mask >> lane) & 1 == 0 {
                    return None;
                }
                let link = format!(
                    "{} (lane {lane}) is named in the mask of {}, but it executes no `bar.warp.sync` after {} and exits: an exited lane is not waited for, so the barrier orders nothing of {}'s; a `bar.warp.sync {mask}` (`__syncwarp()`) in {} after the write is missing (CUDA Programming Guide, __syncwarp: only the non-exited threads named in the mask must execute it)",
                    p.threads[mt].name,
                    self.q(wait),
                    self.q(m),
                    p.threads[mt].name,
                    p.threads[mt].name
                );
                Some(self.pair("barrier_phase", what, vec![link], &[]))
            }
            Some(a) if !warp && !self.w.bar.has(a, wait) => {
                // The other threads' arrivals that the phase of a wait met.
                let met = |v: usize, own: usize| -> Vec<String> {
                    (0..g.len())
                        .filter(|&y| y != own && self.w.bar.has(y, v))
                        .map(|y| self.q(y))
                        .collect()
                };
                let own_arrive = wait.checked_sub(1).filter(|&x| {
                    g.events[x].kind == Kind::BarArrive && g.events[x].thread == Some(rt)
                })?;
                let mine = met(wait, own_arrive);
                // The arrival's phase: its own wait's, or the waits it met.
                let their_wait = (a + 1 < g.len()
                    && g.events[a + 1].kind == Kind::BarWait
                    && g.events[a + 1].thread == Some(mt))
                .then_some(a + 1)
                .or_else(|| members(self.w.bar.row(a)).next());
                let theirs = their_wait.map(|v| met(v, a)).unwrap_or_default();
                let list = |v: Vec<String>| {
                    if v.is_empty() {
                        "no other thread's arrival".to_string()
                    } else {
                        v.join(", ")
                    }
                };
                // `bar.sync a, b` is written with the count as a second
                // operand (the dialect's `id` holds both).
                let counted = |i: &Instr| matches!(i, Instr::Barrier { id, count, .. } if count.is_some() || id.len() > 1);
                let countless =
                    barrier(wait).is_some_and(|i| !counted(i)) && barrier(a).is_some_and(counted);
                let hint = if countless {
                    ": the wait's instruction has no thread count and the arrival's has one, so the count-less phase it joins is not the counted phase of the write"
                } else {
                    ""
                };
                let resource = match id.first() {
                    Some(Operand::Imm(b)) => format!("barrier {b}"),
                    _ => "the barrier".to_string(),
                };
                let link = format!(
                    "{} and {} are in different phases of {resource}: the wait's phase has {}, the arrival's has {}, so {} does not wait for {}{hint}",
                    self.q(wait),
                    self.q(a),
                    list(mine),
                    list(theirs),
                    self.q(wait),
                    self.q(a)
                );
                Some(self.pair("barrier_phase", what, vec![link], &[]))
            }
            _ => None,
        }
    }
}

/// A register read of a `wgmma.mma_async` accumulator before the
/// `wgmma.wait_group` that delivers it: the read gets the register's old
/// value (and the PTX ISA makes it undefined).
fn register_before_wait<S: Bits>(words: &Words<'_, '_, S>) -> Vec<Pair> {
    let src = words.source;
    let mut out = Vec::new();
    for (t, th) in src.threads.iter().enumerate() {
        for (pc, i) in th.code.iter().enumerate() {
            let Instr::Tensor {
                op: TcOp::Wgmma { dst, .. },
            } = i
            else {
                continue;
            };
            let Some((u, wait)) = unwaited_use(th, pc, *dst) else {
                continue;
            };
            let at = |k: usize| {
                let text = crate::litmus::print::instr(src, th, &th.code[k]);
                match words.positions.short(t, k) {
                    Some(p) => format!("`{text}` ({p})"),
                    None => format!("`{text}`"),
                }
            };
            let site = |k: usize| PairSite {
                thread: th.name.clone(),
                instr: crate::litmus::print::instr(src, th, &th.code[k]),
                position: words.positions.full(t, k).map(str::to_string),
            };
            let reg = &th.regs[*dst].name;
            let until = match wait {
                // The wait is written before the read, on a branch the
                // read's path does not take.
                Some(w) if w < u => format!(
                    "{} delivers it: the path from the MMA to the read skips that wait",
                    at(w)
                ),
                Some(w) => format!("{} delivers it", at(w)),
                None => {
                    "a `wgmma.wait_group` delivers it (the thread has none after it)".to_string()
                }
            };
            let mut sites = vec![site(u), site(pc)];
            if let Some(w) = wait {
                sites.push(site(w));
            }
            out.push(Pair {
                kind: "register_before_wait",
                what: format!(
                    "{} {} reads the accumulator `{reg}` of {} before {until}",
                    th.name,
                    at(u),
                    at(pc)
                ),
                chain: String::new(),
                links: vec![format!(
                    "the accumulator `{reg}` gets the product when a `wgmma.wait_group` that waits for its group completes, not at the issue: read before it, `{reg}` holds its old value, and the PTX ISA makes the access undefined (wgmma.mma_async: the accumulator must not be accessed until the wait); move the read after {}",
                    wait.map_or_else(|| "a `wgmma.wait_group 0`".to_string(), at)
                )],
                sites,
            });
        }
    }
    out
}

/// A read of register `dst` reached from the `wgmma.mma_async` at `pc` of
/// `th` along a path of the thread's control-flow graph that passes no
/// `wgmma.wait_group` (other tensor-core instructions are the pipeline's
/// own, not reads of the register), with the wait nearest the MMA on any
/// path (`None`: no path reaches one). Searched on paths, not positions: a
/// read on the other arm of a branch is not after the MMA, and a wait on a
/// branch the read's path skips does not deliver the accumulator to it.
fn unwaited_use(th: &crate::ir::Thread, pc: usize, dst: usize) -> Option<(usize, Option<usize>)> {
    let n = th.code.len();
    let mut seen = vec![false; n];
    let mut queue: std::collections::VecDeque<usize> = crate::model::accounting::successors(th, pc)
        .into_iter()
        .collect();
    let mut wait = None;
    let mut used = None;
    while let Some(k) = queue.pop_front() {
        if k >= n || seen[k] {
            continue;
        }
        seen[k] = true;
        match &th.code[k] {
            Instr::Tensor {
                op: TcOp::WgmmaWait { .. },
            } => {
                wait.get_or_insert(k);
                continue;
            }
            Instr::Tensor { .. } => {}
            i if i.uses().contains(&dst) => {
                used.get_or_insert(k);
            }
            _ => {}
        }
        queue.extend(crate::model::accounting::successors(th, k));
    }
    used.map(|u| (u, wait))
}

#[cfg(test)]
mod tests {
    use super::unwaited_use;
    use crate::ir::{BranchCmp, Instr, Operand, Thread};

    /// `P0` of a straight-line test: `wgmma.fence` (0), `wgmma.mma_async d`
    /// (1), `wgmma.commit_group` (2), `mov r0, d` (3), `wgmma.wait_group 0`
    /// (4); with its registers `d` and `r0`.
    fn straight() -> (Thread, usize, usize) {
        let src = "PTX t\n{\ns @ shared cta 0 = 5;\nw @ shared cta 0 = 7;\n}\n P0@cta 0,cluster 0,gpu 0 ;\n wgmma.fence.sync.aligned ;\n wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 d, [s], [w], 0 ;\n wgmma.commit_group.sync.aligned ;\n mov r0, d ;\n wgmma.wait_group.sync.aligned 0 ;\nexists (P0:r0 == 0)\n";
        let t = crate::litmus::parse_source("t.litmus", src)
            .unwrap()
            .remove(0);
        let th = t.program.threads[0].clone();
        let reg = |n: &str| th.regs.iter().position(|r| r.name == n).unwrap();
        let (d, r0) = (reg("d"), reg("r0"));
        (th, d, r0)
    }

    fn beq(r: usize, target: usize) -> Instr {
        Instr::Branch {
            cond: Some((BranchCmp::Eq, Operand::Reg(r), Operand::Imm(0))),
            target,
        }
    }

    #[test]
    fn a_read_before_the_wait_in_straight_line_code_is_found() {
        let (th, d, _) = straight();
        assert_eq!(unwaited_use(&th, 1, d), Some((3, Some(4))));
    }

    /// A wait written before the read, on a branch the read's path skips:
    /// the positions said "after the wait"; a path reaches the read without
    /// one (`beq` at 3 jumps over the wait at 4 to the read at 5).
    #[test]
    fn a_wait_the_path_skips_does_not_deliver_the_accumulator() {
        let (mut th, d, r0) = straight();
        let (wait, read) = (th.code[4].clone(), th.code[3].clone());
        th.code.truncate(3);
        th.code.extend([beq(r0, 5), wait.clone(), read, wait]);
        assert_eq!(unwaited_use(&th, 1, d), Some((5, Some(4))));
    }

    /// A read on the other arm of a branch from the MMA: by position it
    /// sits between the MMA and its wait; no path goes from the MMA to it.
    #[test]
    fn a_read_on_the_other_arm_is_not_after_the_mma() {
        let (th0, d, r0) = straight();
        let c = &th0.code;
        let mut th = th0.clone();
        // fence; beq → 5; wgmma; commit; bra → 6; mov r0, d; wait
        th.code = vec![
            c[0].clone(),
            beq(r0, 5),
            c[1].clone(),
            c[2].clone(),
            Instr::Branch {
                cond: None,
                target: 6,
            },
            c[3].clone(),
            c[4].clone(),
        ];
        assert_eq!(unwaited_use(&th, 2, d), None);
    }
}
