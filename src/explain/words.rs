//! Events of a candidate execution in words: in PTX terms for text
//! (`P0 st.release.gpu f=1`), in herd's terms for pictures (`a: W.rel.gpu f=1`).

use crate::ax::graph::{Graph, Kind};
use crate::ir::{FenceSem, Program, Proxy, Sem, Value};
use crate::model::describe;

use super::enumerate::write_value;
use crate::rel::Bits;

/// Names the events of one skeleton.
pub struct Words<'a, 'p, S: Bits> {
    /// The test as written.
    pub source: &'a Program,
    /// The skeleton (of the lowered program).
    pub graph: &'a Graph<'p, S>,
    /// Where the test's instructions are written (empty: not known).
    pub positions: &'a Positions,
}

/// Where each instruction of a test is written, per thread and pc of the
/// test as written: `line 8:2` in a litmus file, `mp.cu:12, PTX line 62:2`
/// in a kernel (the CUDA line from `.loc`, then the PTX line and column).
/// The explanations name instructions with these, so that a sentence points
/// at the line to change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Positions {
    /// `short[thread][pc]`: the words above (`None`: no source text).
    short: Vec<Vec<Option<String>>>,
    /// `full[thread][pc]`: `file:line:column`, as races and errors give it.
    full: Vec<Vec<Option<String>>>,
}

impl Positions {
    /// The positions of `t`'s instructions.
    pub fn of(t: &crate::litmus::LitmusTest) -> Positions {
        let mut short = Vec::new();
        let mut full = Vec::new();
        for (th, thread) in t.program.threads.iter().enumerate() {
            let mut s = Vec::new();
            let mut f = Vec::new();
            for pc in 0..thread.code.len() {
                let span = t.spans.instr(th, pc);
                if span.end == 0 || span.start > t.source.len() {
                    s.push(None);
                    f.push(None);
                    continue;
                }
                let before = &t.source[..span.start];
                let line = before.matches('\n').count() + 1;
                let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                let cuda = t
                    .cuda
                    .get(th)
                    .and_then(|c| c.get(pc))
                    .and_then(|c| c.as_ref());
                s.push(Some(
                    match (
                        cuda,
                        crate::ptx::is_kernel_path(std::path::Path::new(&t.path)),
                    ) {
                        (Some(cu), _) => format!("{cu}, PTX line {line}:{col}"),
                        (None, true) => format!("PTX line {line}:{col}"),
                        (None, false) => format!("line {line}:{col}"),
                    },
                ));
                f.push(Some(t.position(th, pc)));
            }
            short.push(s);
            full.push(f);
        }
        Positions { short, full }
    }

    /// `line 8:2` (or a kernel's CUDA and PTX lines) of instruction `pc` of
    /// thread `t` of the test as written.
    pub fn short(&self, t: usize, pc: usize) -> Option<&str> {
        self.short.get(t)?.get(pc)?.as_deref()
    }

    /// `file:line:column` of instruction `pc` of thread `t`.
    pub fn full(&self, t: usize, pc: usize) -> Option<&str> {
        self.full.get(t)?.get(pc)?.as_deref()
    }
}

impl<S: Bits> Words<'_, '_, S> {
    /// The instruction of the test as written that event `e` comes from:
    /// its own thread's, or for an asynchronous operation's event the
    /// instruction that started it. `None` for an initial write.
    pub fn source_instr(&self, e: usize) -> Option<(usize, usize)> {
        let ev = &self.graph.events[e];
        let t = ev.thread?;
        match &self.graph.program.threads[t].agent {
            Some(a) => Some((a.issuer, a.spawn_pc)),
            None => Some((t, ev.pc)),
        }
    }

    /// Where event `e`'s instruction is written (`line 8:2`), if known.
    pub fn position(&self, e: usize) -> Option<String> {
        let (t, pc) = self.source_instr(e)?;
        self.positions.short(t, pc).map(str::to_string)
    }

    /// The thread of an event (`P0`, `P0.async@1`); `None` for an initial write.
    pub fn thread(&self, e: usize) -> Option<String> {
        let t = self.graph.events[e].thread?;
        Some(self.graph.program.threads[t].name.clone())
    }

    /// The value an event reads or writes, if defined.
    pub fn value(&self, rf: &[Option<usize>], e: usize) -> Option<Value> {
        let g = self.graph;
        match g.events[e].kind {
            Kind::Read => g.read_value(rf, e),
            Kind::Write => write_value(g, rf, e),
            _ => None,
        }
    }

    /// The name of the address an access uses as written.
    fn address(&self, e: usize) -> String {
        let g = self.graph;
        let ev = &g.events[e];
        let p = g.program;
        if let Some(t) = ev.thread {
            if let Some(a) = p.threads[t].code[ev.pc].access() {
                return p.addresses[a.addr].name.clone();
            }
        }
        p.locations[ev.loc].name.clone()
    }

    /// The instruction's mnemonic with its qualifiers (`st.release.gpu`),
    /// `.weak` left out as in the usual notation.
    fn mnemonic(&self, e: usize) -> String {
        let g = self.graph;
        let ev = &g.events[e];
        let t = ev.thread.expect("an event of a thread");
        let text = describe::instr_text(self.source, g.program, t, ev.pc);
        if text.starts_with('(') {
            return text;
        }
        let head = text.split_whitespace().next().unwrap_or("").to_string();
        head.replace(".weak", "")
    }

    /// The event in PTX terms, without its thread: `st.release.gpu f=1`,
    /// `ld x=0`, `fence.sc.gpu`, `x=0 (initial)`.
    pub fn text(&self, rf: &[Option<usize>], e: usize) -> String {
        let g = self.graph;
        let ev = &g.events[e];
        let value = |v: Option<Value>| {
            v.map_or("?".to_string(), |v| {
                describe::value_text(g.program, ev.loc, v)
            })
        };
        if ev.thread.is_none() {
            return format!(
                "{}={} (initial)",
                g.program.locations[ev.loc].name,
                value(self.value(rf, e))
            );
        }
        let mn = self.mnemonic(e);
        let rmw_half = |read: bool| {
            let pair = if read {
                e + 1 < g.len() && g.rmw.has(e, e + 1)
            } else {
                e > 0 && g.rmw.has(e - 1, e)
            };
            if pair {
                if read { " (read)" } else { " (write)" }
            } else {
                ""
            }
        };
        match ev.kind {
            Kind::Read | Kind::Write if mn.starts_with('(') => {
                format!("{mn} {}={}", self.address(e), value(self.value(rf, e)))
            }
            Kind::Read => format!(
                "{mn} {}={}{}",
                self.address(e),
                value(self.value(rf, e)),
                rmw_half(true)
            ),
            Kind::Write => format!(
                "{mn} {}={}{}",
                self.address(e),
                value(self.value(rf, e)),
                rmw_half(false)
            ),
            Kind::BarArrive => format!("{mn} (arrive)"),
            Kind::BarWait => format!("{mn} (wait)"),
            _ => mn,
        }
    }

    /// The event in PTX terms with its thread: `P0 st.release.gpu f=1`.
    pub fn full(&self, rf: &[Option<usize>], e: usize) -> String {
        match self.thread(e) {
            Some(t) => format!("{t} {}", self.text(rf, e)),
            None => self.text(rf, e),
        }
    }

    /// herd's label without the letter: `W.rel.gpu f=1`, `R x=0`, `F.sc.gpu`.
    pub fn herd(&self, rf: &[Option<usize>], e: usize) -> String {
        let g = self.graph;
        let ev = &g.events[e];
        let annot = |sem: Sem| -> String {
            let s = match sem {
                Sem::Weak => return String::new(),
                Sem::Relaxed | Sem::Volatile => "rlx",
                Sem::Acquire => "acq",
                Sem::Release => "rel",
                Sem::AcqRel => "acq_rel",
            };
            match ev.scope {
                Some(sc) => format!(".{s}.{sc}"),
                None => format!(".{s}"),
            }
        };
        let proxy = if ev.proxy == Proxy::Generic {
            String::new()
        } else {
            format!(".{}", ev.proxy)
        };
        let star = if !g.rmw.row(e).is_empty() || (e > 0 && g.rmw.has(e - 1, e)) {
            "*"
        } else {
            ""
        };
        let val = self
            .value(rf, e)
            .map_or("?".into(), |v| describe::value_text(g.program, ev.loc, v));
        match ev.kind {
            Kind::Read => format!("R{star}{}{proxy} {}={val}", annot(ev.sem), self.address(e)),
            Kind::Write if ev.thread.is_none() => {
                format!("W {}={val}", g.program.locations[ev.loc].name)
            }
            Kind::Write => format!("W{star}{}{proxy} {}={val}", annot(ev.sem), self.address(e)),
            Kind::Fence(f) => {
                let k = match f {
                    FenceSem::Sc => "sc",
                    FenceSem::AcqRel => "acq_rel",
                    FenceSem::Acquire => "acq",
                    FenceSem::Release => "rel",
                };
                format!("F.{k}.{}", ev.scope.map_or("-", |s| s.as_str()))
            }
            Kind::ProxyFence(k) => format!("F.proxy.{}", k.as_str()),
            Kind::BarArrive => format!("B.arrive {}", self.mnemonic(e)),
            Kind::BarWait => format!("B.wait {}", self.mnemonic(e)),
            Kind::Signal => "signal".into(),
            Kind::Await => "await".into(),
        }
    }
}

/// herd's event letters: a, b, …, z, a1, b1, ….
pub fn letter(k: usize) -> String {
    let c = (b'a' + (k % 26) as u8) as char;
    if k < 26 {
        c.to_string()
    } else {
        format!("{c}{}", k / 26)
    }
}
