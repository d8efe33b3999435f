//! Exhaustive exploration of the operational machine: depth-first search
//! over its steps with hashed-state deduplication. The strategy is kept
//! apart from the machine: the machine says what the successors of a state
//! are; the explorer decides in which order to visit them, which to skip,
//! and when to stop. Each reason to skip a state has its own counter.

use fxhash::{FxHashSet, FxHasher};
use serde::Serialize;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use crate::op::Machine;
use crate::op::state::State;
use crate::outcome::Outcomes;

/// Limits of one exploration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Stop after visiting this many distinct states.
    pub max_states: Option<u64>,
    /// Stop after this much wall-clock time.
    pub timeout: Option<Duration>,
}

/// Counters of one exploration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ExploreStats {
    /// States visited (expanded), duplicates excluded.
    pub states: u64,
    /// Distinct states recorded in the seen-set.
    pub distinct_states: u64,
    /// Transitions generated.
    pub transitions: u64,
    /// Successors skipped because their state was seen before.
    pub dedup_hits: u64,
    /// States with no successor that are not final (a check failed, or a deadlock).
    pub dead_ends: u64,
    /// Final states reached.
    pub final_states: u64,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
}

/// What an exploration found.
#[derive(Clone, Debug)]
pub struct Explored {
    /// Final states of the program reached.
    pub outcomes: Outcomes,
    /// Some thread stopped at the loop bound in a reachable end state.
    pub bound_hit: bool,
    /// A limit stopped the search (and which); outcomes are partial.
    pub incomplete: Option<String>,
    /// Counters.
    pub stats: ExploreStats,
}

/// A 64-bit fingerprint of a state (FxHash of its full contents).
pub fn fingerprint(st: &State) -> u64 {
    let mut h = FxHasher::default();
    st.hash(&mut h);
    h.finish()
}

/// Explore every state reachable from the initial state.
pub fn explore(m: &Machine, limits: &Limits) -> Explored {
    let start = Instant::now();
    let mut stats = ExploreStats::default();
    let mut outcomes = Outcomes::new();
    let mut bound_hit = false;
    let mut incomplete = None;
    let mut seen: FxHashSet<u64> = FxHashSet::default();
    let init = m.initial();
    seen.insert(fingerprint(&init));
    let mut stack = vec![init];
    while let Some(st) = stack.pop() {
        stats.states += 1;
        if let Some(max) = limits.max_states {
            if seen.len() as u64 > max {
                incomplete = Some(format!("the state limit ({max}) was reached"));
                break;
            }
        }
        if let Some(t) = limits.timeout {
            if stats.states % 1024 == 0 && start.elapsed() > t {
                incomplete = Some(format!(
                    "the time limit ({:.1} s) was reached",
                    t.as_secs_f64()
                ));
                break;
            }
        }
        if m.is_final(&st) {
            stats.final_states += 1;
            if m.is_cut(&st) {
                bound_hit = true;
            } else {
                outcomes.extend(m.outcomes(&st));
            }
            continue;
        }
        let succ = m.successors(&st);
        if succ.is_empty() {
            stats.dead_ends += 1;
            continue;
        }
        stats.transitions += succ.len() as u64;
        for (_, s) in succ.into_iter().rev() {
            if seen.insert(fingerprint(&s)) {
                stack.push(s);
            } else {
                stats.dedup_hits += 1;
            }
        }
    }
    stats.distinct_states = seen.len() as u64;
    stats.elapsed_s = start.elapsed().as_secs_f64();
    Explored {
        outcomes,
        bound_hit,
        incomplete,
        stats,
    }
}
