//! Data races by the PTX ISA's definition (Memory Consistency Model,
//! "Conflict and Data-races"; digest §3.7): two *conflicting* memory
//! operations (same location, at least one a write) are in a data race in
//! an execution when they are not morally strong with each other and not
//! related by causality order in either direction.
//!
//! The oracle finds them ([`super::search`] looks at every consistent
//! execution with the relations it already built: moral strength from
//! [`super::graph::Graph::ms`], causality from the search's `cause`,
//! proxy-preserved as the mixed-proxy extension has it, so a pair of one
//! thread through two proxies with no proxy fence between them is a race
//! too). This module owns what a race *is* as data: the pair of
//! instructions, its kind, and the execution that shows it; the second
//! implementation (`explain::races`) and the reports share it.

use serde::Serialize;

use crate::ir::{LocId, Program, Proxy, Scope, ThreadId, Value};
use crate::rel::Bits;

use super::graph::{Event, Graph, Kind};

/// Why a conflicting pair is not morally strong: the three kinds users read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RaceKind {
    /// At least one of the two accesses is weak (`.weak`, a plain `ld`/`st`):
    /// a generic-proxy data race.
    DataRace,
    /// Both accesses are strong, through one proxy and one address, but the
    /// scope of one does not include the other's thread (ScoRD's
    /// "insufficient scope").
    InsufficientScope,
    /// The accesses go through different proxies (generic, async, texture,
    /// ...) or different virtual addresses of one location, with no proxy
    /// fence ordering them: the ISCA'22 mixed-proxy races, within one thread
    /// or across threads.
    MixedProxy,
}

impl RaceKind {
    /// The name printed in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            RaceKind::DataRace => "data-race",
            RaceKind::InsufficientScope => "insufficient-scope",
            RaceKind::MixedProxy => "mixed-proxy",
        }
    }
}

/// One side of a race: the source instruction (an asynchronous agent's
/// access is named by the instruction that issued it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Access {
    /// The source thread.
    pub thread: ThreadId,
    /// The instruction in that thread.
    pub pc: usize,
    /// What this side does to the location.
    pub access: AccessKind,
    /// Performed by the asynchronous agent the instruction started (a bulk
    /// copy's write, say), not by the thread itself.
    pub agent: bool,
    /// The proxy of the access.
    #[serde(serialize_with = "proxy_name")]
    pub proxy: Proxy,
}

/// What one side of a race does: a read, a write, or both halves of one
/// read-modify-write (a race of either half is the instruction's race).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessKind {
    /// A load.
    Read,
    /// A store.
    Write,
    /// An `atom`, `red` or other read-modify-write.
    ReadModifyWrite,
}

impl AccessKind {
    /// The word reports print.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::ReadModifyWrite => "read-modify-write",
        }
    }
}

fn proxy_name<S: serde::Serializer>(p: &Proxy, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.as_str())
}

/// A racing pair of instructions, the same whatever execution shows it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Race {
    /// The location they both access.
    pub loc: LocId,
    /// The side that comes first (by thread, then instruction).
    pub first: Access,
    /// The other side.
    pub second: Access,
    /// Why they are not morally strong.
    pub kind: RaceKind,
    /// The reason in words, naming threads and scopes.
    pub reason: String,
}

/// One event of a witness execution, as the trace prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessEvent {
    /// The source thread and instruction (`None`: the initial write).
    pub site: Option<(ThreadId, usize)>,
    /// Performed by an asynchronous agent of that instruction.
    pub agent: bool,
    /// What it is.
    pub kind: Kind,
    /// Memory events: the location.
    pub loc: Option<LocId>,
    /// Writes: the value written; reads: the value read.
    pub value: Option<Value>,
    /// Reads: the event (index into the witness) it reads from.
    pub reads_from: Option<usize>,
}

/// A consistent execution in which a race happens, with the two events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceWitness {
    /// Every event of the execution, initial writes first, then each
    /// thread's in program order.
    pub events: Vec<WitnessEvent>,
    /// The racing events (indices into `events`).
    pub pair: (usize, usize),
}

/// A race and the first execution the oracle found it in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The racing pair.
    pub race: Race,
    /// An execution showing it.
    pub witness: RaceWitness,
}

/// Whether events `x` and `y` of `g` conflict: two accesses by threads
/// (initial writes are morally strong with every access) to one location,
/// at least one a write.
pub fn conflict<S: Bits>(g: &Graph<'_, S>, x: usize, y: usize) -> bool {
    let (a, b) = (&g.events[x], &g.events[y]);
    x != y
        && a.is_mem()
        && b.is_mem()
        && a.thread.is_some()
        && b.thread.is_some()
        && a.loc == b.loc
        && (a.kind == Kind::Write || b.kind == Kind::Write)
}

/// The source instruction of an event of a thread (agents: their issuer's).
fn site(p: &Program, e: &Event) -> (ThreadId, usize, bool) {
    let t = e.thread.expect("an access of a thread");
    match &p.threads[t].agent {
        Some(a) => (a.issuer, a.spawn_pc, true),
        None => (t, e.pc, false),
    }
}

/// The race of conflicting events `x` and `y`, which are not morally
/// strong and not ordered by causality in some consistent execution: its
/// sides in a canonical order, its kind and its reason.
pub fn race<S: Bits>(g: &Graph<'_, S>, x: usize, y: usize) -> Race {
    let p = g.program;
    let side = |i: usize| {
        let e = &g.events[i];
        let (thread, pc, agent) = site(p, e);
        let rmw = (i + 1 < g.len() && g.rmw.has(i, i + 1)) || (i > 0 && g.rmw.has(i - 1, i));
        Access {
            thread,
            pc,
            access: match e.kind {
                _ if rmw => AccessKind::ReadModifyWrite,
                Kind::Write => AccessKind::Write,
                _ => AccessKind::Read,
            },
            agent,
            proxy: e.proxy,
        }
    };
    let (mut a, mut b) = (side(x), side(y));
    let (mut ea, mut eb) = (&g.events[x], &g.events[y]);
    if b < a {
        std::mem::swap(&mut a, &mut b);
        std::mem::swap(&mut ea, &mut eb);
    }
    let name = |s: &Access| p.threads[s.thread].name.clone();
    let (kind, reason) = if ea.proxy != eb.proxy {
        (
            RaceKind::MixedProxy,
            format!(
                "{}'s access is through the {} proxy and {}'s through the {} proxy, and no proxy fence orders them",
                name(&a),
                ea.proxy.as_str(),
                name(&b),
                eb.proxy.as_str()
            ),
        )
    } else if ea.va != eb.va {
        (
            RaceKind::MixedProxy,
            format!(
                "they use different virtual addresses of {} ({} and {}), and no fence.proxy.alias orders them",
                p.locations[ea.loc].name, p.addresses[ea.va].name, p.addresses[eb.va].name
            ),
        )
    } else if ea.is_strong() && eb.is_strong() {
        let narrow = |e: &Event, s: &Access, o: &Event, os: &Access| {
            let scope = e.scope.unwrap_or(Scope::Sys);
            (!e.placement.includes(scope, &o.placement)).then(|| {
                format!(
                    "the .{} scope of {}'s access does not include {}",
                    scope.as_str(),
                    name(s),
                    name(os)
                )
            })
        };
        let parts: Vec<String> = [narrow(ea, &a, eb, &b), narrow(eb, &b, ea, &a)]
            .into_iter()
            .flatten()
            .collect();
        (RaceKind::InsufficientScope, parts.join("; "))
    } else {
        let weak = match (ea.is_strong(), eb.is_strong()) {
            (false, false) => "both accesses are weak".to_string(),
            (false, true) => format!("{}'s access is weak", name(&a)),
            _ => format!("{}'s access is weak", name(&b)),
        };
        (
            RaceKind::DataRace,
            format!("{weak}, and no causality order relates them"),
        )
    };
    Race {
        loc: ea.loc,
        first: a,
        second: b,
        kind,
        reason,
    }
}

/// The witness of a race between `x` and `y` in the execution of `g` whose
/// reads-from is `rf` (every read bound).
pub fn witness<S: Bits>(g: &Graph<'_, S>, rf: &[Option<usize>], x: usize, y: usize) -> RaceWitness {
    let p = g.program;
    let events = g
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let site_of = e.thread.map(|_| site(p, e));
            let value = match e.kind {
                Kind::Write => g.write_value(rf, i),
                Kind::Read => g.read_value(rf, i),
                _ => None,
            };
            WitnessEvent {
                site: site_of.map(|(t, pc, _)| (t, pc)),
                agent: site_of.is_some_and(|(_, _, a)| a),
                kind: e.kind,
                loc: e.is_mem().then_some(e.loc),
                value,
                reads_from: if e.kind == Kind::Read { rf[i] } else { None },
            }
        })
        .collect();
    RaceWitness {
        events,
        pair: (x, y),
    }
}
