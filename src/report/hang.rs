//! Words for hangs: the one-sentence reason that herd text, JSON and traces
//! share, and each stuck thread's clause. This module alone words them.

use crate::engine::{NotChecked, Termination};
use crate::ir::{LocKind, Program, ThreadId, Value, mbar};
use crate::litmus::print;
use crate::model::hang::{Hang, Stuck, Waits};

/// Names and texts of the program the engines ran (the test, lowered).
struct Names {
    lowered: Program,
}

impl Names {
    fn of(p: &Program) -> Names {
        // A hang names source threads and the agents of first executions
        // (agents are never stuck: they run to completion once started,
        // and one that never starts is not stuck); those come first in the
        // lowering whatever the loop bound, so bound 0 names them alike.
        Names {
            lowered: crate::model::lower::lower(p, 0),
        }
    }
    fn thread(&self, t: ThreadId) -> &str {
        &self.lowered.threads[t].name
    }
    /// An instruction as the test writes it; an agent's as the operation it performs.
    fn instr(&self, t: ThreadId, pc: usize, source: &Program) -> String {
        let th = &self.lowered.threads[t];
        match &th.agent {
            None => {
                let src = &source.threads[t];
                match src.code.get(pc) {
                    Some(i) => print::instr(source, src, i),
                    // The grid-end signal `model::griddep` appends.
                    None => "its end".to_string(),
                }
            }
            Some(a) => {
                let issuer = &source.threads[a.issuer];
                format!(
                    "the operation of {} `{}`",
                    issuer.name,
                    print::instr(source, issuer, &issuer.code[a.spawn_pc])
                )
            }
        }
    }
    fn loc(&self, l: usize) -> String {
        let loc = &self.lowered.locations[l];
        if loc.kind == LocKind::Synthetic {
            // The hidden mbarrier of `barrier.cluster` (model::lower).
            if let Some((gpu, cluster)) = loc
                .name
                .strip_prefix("%cluster_barrier_gpu")
                .and_then(|r| r.split_once("_cluster"))
            {
                return format!("the barrier of cluster {cluster} (GPU {gpu})");
            }
        }
        loc.name.clone()
    }
    fn value(&self, l: usize, v: Value) -> String {
        if self.lowered.locations[l].kind == LocKind::Data {
            v.to_string()
        } else {
            mbar::describe(v)
        }
    }
}

fn list(items: &[String]) -> String {
    match items {
        [] => "none".into(),
        [a] => a.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The stuck threads, in thread order (an agent that never started is not
/// stuck, and so never among them).
pub fn threads<'h>(_p: &Program, h: &'h Hang) -> Vec<&'h Stuck> {
    h.stuck.iter().collect()
}

/// The thread's name.
pub fn thread_name(p: &Program, t: ThreadId) -> String {
    Names::of(p).thread(t).to_string()
}

/// The instruction a stuck thread waits at (a loop's first instruction).
pub fn at(p: &Program, s: &Stuck) -> String {
    Names::of(p).instr(s.thread, s.pc, p)
}

/// `barrier`, `phase`, `await`, `warp` or `spin`.
pub fn on(s: &Stuck) -> &'static str {
    match s.on {
        Waits::Barrier { .. } => "barrier",
        Waits::Phase { .. } => "phase",
        Waits::Await { .. } => "await",
        Waits::Warp { .. } => "warp",
        Waits::Spin { .. } => "spin",
    }
}

/// What one stuck thread waits for, as a clause.
pub fn clause(p: &Program, s: &Stuck) -> String {
    let n = Names::of(p);
    format!("{} {}", n.thread(s.thread), predicate(&n, p, s, false))
}

/// The clause without its subject; `plural` for several threads.
fn predicate(n: &Names, p: &Program, s: &Stuck, plural: bool) -> String {
    let at = n.instr(s.thread, s.pc, p);
    let (wait, spin) = if plural {
        ("wait", "spin")
    } else {
        ("waits", "spins")
    };
    match &s.on {
        Waits::Barrier {
            arrived,
            needed,
            undefined,
            ..
        } => {
            let names: Vec<String> = arrived.iter().map(|&t| n.thread(t).to_string()).collect();
            if *undefined {
                // An undefined arrival poisoned the phase (`model::barrier`).
                return format!(
                    "{wait} at `{at}`, whose phase ({}) is undefined and never completes",
                    list(&names)
                );
            }
            format!(
                "{wait} at `{at}`, whose phase needs {needed} arrivals and gets {} ({})",
                arrival_events(&n.lowered, arrived, s.on_counted()),
                list(&names)
            )
        }
        Waits::Phase { loc, value, phase } => format!(
            "{wait} at `{at}` for phase {phase} of {} to complete, and its latest state is {}",
            n.loc(*loc),
            n.value(*loc, *value)
        ),
        Waits::Await { missing } => {
            let what: Vec<String> = missing
                .iter()
                .map(|&(u, pc)| match &n.lowered.threads[u].agent {
                    Some(_) => n.instr(u, pc, p),
                    None if crate::model::griddep::is_end(p, u, pc) => format!(
                        "{} (grid {}) to complete",
                        n.thread(u),
                        p.threads[u].placement.grid
                    ),
                    None => format!("{} to reach `{}`", n.thread(u), n.instr(u, pc, p)),
                })
                .collect();
            format!(
                "{wait} at `{at}` for {}, which never completes",
                list(&what)
            )
        }
        Waits::Warp { lanes } => {
            let names: Vec<String> = lanes.iter().map(|&u| n.thread(u).to_string()).collect();
            format!(
                "{wait} at `{at}` for {} of its warp, which never {}: a warp arrives at a counted barrier as a whole",
                list(&names),
                if names.len() == 1 { "comes" } else { "come" }
            )
        }
        Waits::Spin { reads, .. } if reads.is_empty() => {
            format!("{spin} in the loop at `{at}`: it reads no memory and goes back every time")
        }
        Waits::Spin { reads, .. } => {
            let mut vals: Vec<String> = Vec::new();
            for (_, l, v) in reads {
                let s = format!("{}={}", n.loc(*l), n.value(*l, *v));
                if !vals.contains(&s) {
                    vals.push(s);
                }
            }
            format!(
                "{spin} in the loop at `{at}`: reading the latest {} it must see ({}) it goes back every time",
                if vals.len() == 1 { "value" } else { "values" },
                list(&vals)
            )
        }
    }
}

/// How many arrival events the threads `arrived` (one entry per arrival)
/// made: at a counted barrier the lanes of a warp arrive as one event
/// (`model::barrier::warp_unit`), so a warp counts as many events as its
/// lane with the most arrivals has.
fn arrival_events(p: &Program, arrived: &[ThreadId], counted: bool) -> usize {
    if !counted {
        return arrived.len();
    }
    let mut warps: Vec<Vec<ThreadId>> = Vec::new();
    for &t in arrived {
        let lanes = p.warp_lanes(t);
        if !warps.contains(&lanes) {
            warps.push(lanes);
        }
    }
    warps
        .iter()
        .map(|lanes| {
            lanes
                .iter()
                .map(|l| arrived.iter().filter(|&&a| a == *l).count())
                .max()
                .unwrap_or(0)
        })
        .sum()
}

/// The one-sentence reason of a hang. Threads stuck on the same thing
/// share a clause.
pub fn sentence(p: &Program, h: &Hang) -> String {
    let n = Names::of(p);
    let mut groups: Vec<(Vec<String>, &Stuck)> = Vec::new();
    for s in threads(p, h) {
        let same =
            |o: &Stuck| o.on == s.on && n.instr(o.thread, o.pc, p) == n.instr(s.thread, s.pc, p);
        match groups.iter_mut().find(|(_, o)| same(o)) {
            Some((who, _)) => who.push(n.thread(s.thread).to_string()),
            None => groups.push((vec![n.thread(s.thread).to_string()], s)),
        }
    }
    let stuck: usize = groups.iter().map(|(w, _)| w.len()).sum();
    let clauses: Vec<String> = groups
        .iter()
        .map(|(who, s)| format!("{} {}", list(who), predicate(&n, p, s, who.len() > 1)))
        .collect();
    format!(
        "{}; every other thread has finished or is stuck too, so nothing can release {}",
        clauses.join("; "),
        if stuck == 1 { "it" } else { "them" }
    )
}

/// Why a run's termination verdict is what it is, in one sentence.
pub fn why(p: &Program, t: &Termination) -> String {
    match t {
        Termination::Hangs(h) => sentence(p, h),
        Termination::Terminates { trivially: true } => {
            "no thread has a loop, a barrier or a wait, so every thread runs to its end".into()
        }
        Termination::Terminates { trivially: false } => {
            "every execution terminates: no reachable state leaves a thread waiting or spinning forever".into()
        }
        Termination::NotChecked(NotChecked::Off) => "the check was turned off".into(),
        Termination::NotChecked(NotChecked::Incomplete) => {
            "a limit stopped the run before every state was seen".into()
        }
        Termination::NotChecked(NotChecked::LoopBound(b)) => format!(
            "a loop that is neither a spin loop nor a retry loop reached the loop bound ({b}), so longer executions might hang"
        ),
    }
}
