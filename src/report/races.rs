//! Words for data races (`docs/races.md`): one owner of how a race is
//! named — kind, location, the two instructions with their positions, the
//! reason — which the herd text, JSON and `trace --race` share.

use std::fmt::Write;

use serde::Serialize;

use crate::ax::graph::Kind;
use crate::ax::race::{Access, Found, RaceWitness};
use crate::engine::{RaceCheck, RaceStatus};
use crate::litmus::LitmusTest;

/// The races of a test, as the reports show them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RacesReport {
    /// Every race found, numbered from 1 in this order.
    pub races: Vec<RaceReport>,
    /// `complete` (the list is every race: empty means race-free),
    /// `incomplete` (more may exist) or `not-checked`.
    pub status: &'static str,
    /// Why the list is not complete.
    pub why: Option<String>,
}

/// One racing pair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RaceReport {
    /// Its number (`trace --race N`).
    pub number: usize,
    /// `data-race`, `insufficient-scope` or `mixed-proxy`.
    pub kind: &'static str,
    /// The location both access.
    pub location: String,
    /// The two accesses.
    pub accesses: [RaceSite; 2],
    /// Why they race, in words.
    pub reason: String,
}

/// One access of a race.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RaceSite {
    /// The thread (`P0`).
    pub thread: String,
    /// The instruction as written.
    pub instr: String,
    /// `file:line:column` of the instruction.
    pub position: String,
    /// `read`, `write` or `read-modify-write`.
    pub access: &'static str,
    /// The proxy it goes through.
    pub proxy: &'static str,
    /// Performed by the asynchronous operation the instruction started.
    pub by_async_operation: bool,
}

fn site(t: &LitmusTest, a: &Access) -> RaceSite {
    let p = &t.program;
    RaceSite {
        thread: p.threads[a.thread].name.clone(),
        instr: instr_text(t, a.thread, a.pc),
        position: t.position(a.thread, a.pc),
        access: a.access.as_str(),
        proxy: a.proxy.as_str(),
        by_async_operation: a.agent,
    }
}

fn instr_text(t: &LitmusTest, thread: usize, pc: usize) -> String {
    let p = &t.program;
    let th = &p.threads[thread];
    th.code
        .get(pc)
        .map_or_else(String::new, |i| crate::litmus::print::instr(p, th, i))
}

/// The report of one race, numbered `number`.
pub fn race(t: &LitmusTest, f: &Found, number: usize) -> RaceReport {
    let r = &f.race;
    let loc = t
        .program
        .locations
        .get(r.loc)
        .map_or_else(|| format!("location {}", r.loc), |l| l.name.clone());
    RaceReport {
        number,
        kind: r.kind.as_str(),
        location: loc,
        accesses: [site(t, &r.first), site(t, &r.second)],
        reason: r.reason.clone(),
    }
}

/// The report of a run's races, found in test `t`.
pub fn of(t: &LitmusTest, c: &RaceCheck) -> RacesReport {
    let (status, why) = match &c.status {
        RaceStatus::Complete => ("complete", None),
        RaceStatus::Incomplete(w) => ("incomplete", Some(w.clone())),
        RaceStatus::NotChecked(w) => ("not-checked", Some(w.clone())),
    };
    RacesReport {
        races: c
            .found
            .iter()
            .enumerate()
            .map(|(i, f)| race(t, f, i + 1))
            .collect(),
        status,
        why,
    }
}

fn side(s: &RaceSite) -> String {
    let by = if s.by_async_operation {
        " (by its asynchronous operation)"
    } else {
        ""
    };
    format!(
        "{} `{}` ({}) {}{by}, {} proxy",
        s.thread, s.instr, s.position, s.access, s.proxy
    )
}

/// One line per race: `N kind on loc: side; side — reason`.
pub fn race_line(r: &RaceReport) -> String {
    format!(
        "{} {} on {}: {}; {} — {}",
        r.number,
        r.kind,
        r.location,
        side(&r.accesses[0]),
        side(&r.accesses[1]),
        r.reason
    )
}

/// The herd-text section: nothing for a complete, race-free run (herd's
/// report stays as it was); otherwise `Races N`, one line per race, and a
/// line saying why the list may not be whole.
pub fn section(r: &RacesReport) -> String {
    let mut out = String::new();
    if !r.races.is_empty() {
        writeln!(out, "Races {}", r.races.len()).unwrap();
        for race in &r.races {
            writeln!(out, "  {}", race_line(race)).unwrap();
        }
    }
    if let Some(why) = &r.why {
        let word = if r.status == "not-checked" {
            "not checked"
        } else {
            "incomplete"
        };
        let more = if r.races.is_empty() {
            "; none found, which does not make the program race-free"
        } else {
            "; more may exist"
        };
        writeln!(out, "Races: {word} — {why}{more}").unwrap();
    }
    out
}

/// `trace --race N`: the race and an execution in which it happens, the
/// oracle's (each thread's events in program order, each read with the
/// write it reads from).
pub fn trace_text(t: &LitmusTest, f: &Found, number: usize, total: usize) -> String {
    let r = race(t, f, number);
    let p = &t.program;
    let w: &RaceWitness = &f.witness;
    let mut out = String::new();
    writeln!(
        out,
        "Race {number} of {total}: {} on {}",
        r.kind, r.location
    )
    .unwrap();
    for s in &r.accesses {
        writeln!(out, "  {}", side(s)).unwrap();
    }
    writeln!(out, "Why: {}", r.reason).unwrap();
    writeln!(
        out,
        "An execution in which they race (the oracle's; every read with the write it reads from):"
    )
    .unwrap();
    let loc_name = |l: Option<usize>| {
        l.and_then(|l| p.locations.get(l))
            .map_or_else(|| "?".to_string(), |l| l.name.clone())
    };
    let who = |i: usize| -> String {
        let e = &w.events[i];
        match e.site {
            None => "the initial value".to_string(),
            Some((th, pc)) => {
                let by = if e.agent {
                    " (its asynchronous operation)"
                } else {
                    ""
                };
                format!("{} `{}`{by}", p.threads[th].name, instr_text(t, th, pc))
            }
        }
    };
    for (i, e) in w.events.iter().enumerate() {
        let Some((th, pc)) = e.site else { continue };
        // Agents' internal signals and waits are the lowering's, not the
        // program's: only their memory accesses are shown.
        if e.agent && !matches!(e.kind, Kind::Read | Kind::Write) {
            continue;
        }
        let mark = if i == w.pair.0 || i == w.pair.1 {
            "   <- race"
        } else {
            ""
        };
        let by = if e.agent {
            " (asynchronous operation)"
        } else {
            ""
        };
        let what = match e.kind {
            Kind::Write => format!(
                "writes {} = {}",
                loc_name(e.loc),
                e.value.map_or("?".into(), |v| v.to_string())
            ),
            Kind::Read => format!(
                "reads {} = {} from {}",
                loc_name(e.loc),
                e.value.map_or("?".into(), |v| v.to_string()),
                e.reads_from.map_or("?".into(), who)
            ),
            _ => continue_word(e.kind),
        };
        writeln!(
            out,
            "  {:<4} {}{by}: {what}{mark}",
            p.threads[th].name,
            instr_text(t, th, pc)
        )
        .unwrap();
    }
    writeln!(
        out,
        "Neither access precedes the other in causality order, and they are not morally strong."
    )
    .unwrap();
    out
}

fn continue_word(k: Kind) -> String {
    match k {
        Kind::Fence(_) => "fence".into(),
        Kind::ProxyFence(_) => "proxy fence".into(),
        Kind::BarArrive => "arrives at the barrier".into(),
        Kind::BarWait => "waits at the barrier".into(),
        Kind::Signal => "signals".into(),
        Kind::Await => "waits".into(),
        Kind::Read | Kind::Write => unreachable!("memory events are worded above"),
    }
}
