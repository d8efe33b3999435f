//! The operational explanation of an outcome: a run of the machine that
//! reaches it (as a replay command), or the longest run *towards* it —
//! every read bound so far agrees with the outcome — and, where that run
//! stops, each next step the machine refuses, with the check that refuses
//! it (`op::reason`), and each step it does take that leaves the outcome.

use fxhash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;

use crate::ir::{Instr, Program, Prop, Term, Value};
use crate::op::Machine;
use crate::op::state::State;
use crate::op::{Step, StepKind};
use crate::rel::Bits;

use super::enumerate::tri;

/// What the machine says about an outcome.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "machine")]
pub enum OpExplanation {
    /// A run ends in the outcome.
    Reached {
        /// The command that replays it.
        replay: String,
    },
    /// No run ends in it.
    Blocked {
        /// Steps of the longest run towards it.
        steps: usize,
        /// The command that replays that run.
        replay: String,
        /// At its end: each next step refused (and why), and each step taken
        /// that leaves the outcome.
        blocked: Vec<String>,
    },
    /// The search hit its state limit.
    Incomplete {
        /// Why.
        reason: String,
    },
    /// The machine and the axioms disagree (a bug: it is reported, never hidden).
    Disagrees {
        /// What each says.
        what: String,
    },
}

/// Explain `want` on machine `m` (built from the test in `file`); `allowed`
/// is the axioms' verdict, which the machine must confirm.
pub fn explain<S: Bits>(
    m: &Machine<'_, S>,
    want: &Prop,
    file: &str,
    allowed: bool,
    max_states: u64,
    deadline: Option<std::time::Instant>,
) -> OpExplanation {
    let replay = |choices: &[usize]| {
        let list: Vec<String> = choices.iter().map(usize::to_string).collect();
        format!("ptxmc trace {file} --follow {}", list.join(","))
    };
    // The search's limits: the state count, and the time left before the
    // explanation's deadline, looked at inside every step too.
    let budget = crate::limits::Budget::new(crate::limits::Limits {
        max_states: Some(max_states),
        timeout: deadline.map(|d| d.saturating_duration_since(std::time::Instant::now())),
        max_memory: None,
    });
    let found = m.within(&budget, || search(m, want, &budget));
    let found = match budget.exceeded() {
        Some(e) if m.interrupted() => Search::Limit(e),
        _ => found,
    };
    match found {
        Search::Reached(choices) if allowed => OpExplanation::Reached {
            replay: replay(&choices),
        },
        Search::Reached(choices) => OpExplanation::Disagrees {
            what: format!(
                "the axioms forbid the outcome but this run reaches it: {}",
                replay(&choices)
            ),
        },
        Search::Deepest(_) if allowed => OpExplanation::Disagrees {
            what: "the axioms allow the outcome but no run of the machine reaches it".into(),
        },
        Search::Deepest(choices) => {
            let st = replay_state(m, &choices);
            let blocked = if m.is_final(&st) {
                let finals: Vec<String> = m
                    .outcomes(&st)
                    .iter()
                    .map(|s| m.columns.line(&m.program, s))
                    .collect();
                vec![format!(
                    "every run ends without it; this one ends in {}",
                    finals.join(" or ")
                )]
            } else {
                blocked_words(m, &st, want)
            };
            OpExplanation::Blocked {
                steps: choices.len(),
                replay: replay(&choices),
                blocked,
            }
        }
        Search::Limit(why) => OpExplanation::Incomplete {
            reason: format!("no run found before {why}"),
        },
    }
}

enum Search {
    Reached(Vec<usize>),
    Deepest(Vec<usize>),
    Limit(crate::limits::Exceeded),
}

/// Breadth-first over the states that still agree with `want`: the first
/// run that ends in it, or the (first) deepest state reached.
fn search<S: Bits>(m: &Machine<'_, S>, want: &Prop, budget: &crate::limits::Budget) -> Search {
    let init = m.initial();
    let root = init.fingerprint();
    let mut parent: FxHashMap<u64, (u64, usize)> = FxHashMap::default();
    parent.insert(root, (root, usize::MAX));
    let mut depth_of: FxHashMap<u64, usize> = FxHashMap::default();
    depth_of.insert(root, 0);
    let mut deepest = (0usize, root);
    let mut queue = VecDeque::from([init]);
    let path = |parent: &FxHashMap<u64, (u64, usize)>, mut cur: u64| {
        let mut choices = Vec::new();
        while cur != root {
            let (p, c) = parent[&cur];
            choices.push(c);
            cur = p;
        }
        choices.reverse();
        choices
    };
    let mut poll = crate::limits::Poll::new(budget);
    while let Some(st) = queue.pop_front() {
        if let Some(e) = poll.step() {
            return Search::Limit(e);
        }
        let fp = st.fingerprint();
        let d = depth_of[&fp];
        if d > deepest.0 {
            deepest = (d, fp);
        }
        if m.is_final(&st) {
            if !m.is_cut(&st)
                && m.outcomes(&st)
                    .iter()
                    .any(|s| want.eval(&|t: &Term| m.columns.term(s, t)))
            {
                return Search::Reached(path(&parent, fp));
            }
            continue;
        }
        for (i, (_, s)) in m.successors(&st).into_iter().enumerate() {
            if !towards(m, &s, want) {
                continue;
            }
            let f = s.fingerprint();
            if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(f) {
                e.insert((fp, i));
                depth_of.insert(f, d + 1);
                queue.push_back(*s);
            }
        }
        if let Some(e) = budget.states_exceeded(parent.len() as u64) {
            return Search::Limit(e);
        }
    }
    Search::Deepest(path(&parent, deepest.1))
}

fn replay_state<S: Bits>(m: &Machine<'_, S>, choices: &[usize]) -> State<S> {
    let mut st = m.initial();
    for &c in choices {
        let (_, next) = m.successors(&st).swap_remove(c);
        st = *next;
    }
    st
}

/// Whether the registers known in `st` still agree with `want`.
fn towards<S: Bits>(m: &Machine<'_, S>, st: &State<S>, want: &Prop) -> bool {
    tri(want, &|t: &Term| match *t {
        Term::Const(v) => Some(v),
        Term::Reg { thread, reg } => known_reg(m, st, thread, reg),
        Term::Loc(_) => None,
    }) != Some(false)
}

/// A register's final value, if already decided: the thread is finished, or
/// (straight-line code) no instruction left writes it, or the last one left
/// that writes it is a bound load.
fn known_reg<S: Bits>(m: &Machine<'_, S>, st: &State<S>, t: usize, reg: usize) -> Option<Value> {
    let th: &crate::ir::Thread = &m.program.threads[t];
    let ts = &st.threads[t];
    if ts.finished(th.code.len()) {
        return Some(ts.regs[reg]);
    }
    if th.code.iter().any(|i| matches!(i, Instr::Branch { .. })) {
        return None;
    }
    let last = (ts.pc..th.code.len())
        .rev()
        .find(|&pc| th.code[pc].def() == Some(reg));
    let Some(pc) = last else {
        return Some(ts.regs[reg]);
    };
    match &th.code[pc] {
        Instr::Load { .. } | Instr::Rmw { .. } => {
            let slot = m.layout.base[t][pc]?;
            st.bound.has(slot).then(|| m.read_value(st, slot))
        }
        // A wait's register says whether it succeeded; its operand must be known.
        Instr::MbarWait { .. } if th.code[ts.pc..pc].iter().all(|i| i.def().is_none()) => {
            let slot = m.layout.base[t][pc]?;
            st.bound
                .has(slot)
                .then(|| m.wait_done(st, t, slot) as Value)
        }
        _ => None,
    }
}

/// At the end of the longest run: what each thread cannot do, and what it
/// can do that leaves the outcome.
fn blocked_words<S: Bits>(m: &Machine<'_, S>, st: &State<S>, want: &Prop) -> Vec<String> {
    let mut out = Vec::new();
    let p: &Program = &m.program;
    let instr = |t: usize, pc: usize| crate::model::describe::instr_text(m.source, p, t, pc);
    for r in m.refusals(st) {
        let who = format!("{} {}", p.threads[r.thread].name, instr(r.thread, r.pc));
        let what = match r.version {
            Some(v) => format!("may not read {}", version_words(m, st, v)),
            None => "may not retire".to_string(),
        };
        out.push(format!(
            "{who} {what}: {}",
            m.reason_words(st, r.thread, &r.reason)
        ));
    }
    for (step, next) in m.successors(st) {
        if towards(m, &next, want) {
            continue;
        }
        let Step { thread, pc, kind } = step;
        let who = format!("{} {}", p.threads[thread].name, instr(thread, pc));
        let what = match kind {
            StepKind::Bind { version, .. } => {
                format!("may read {}", version_words(m, &next, version))
            }
            _ => "may retire".to_string(),
        };
        out.push(format!("{who} {what}, but that leaves the outcome"));
    }
    out
}

fn version_words<S: Bits>(m: &Machine<'_, S>, st: &State<S>, v: usize) -> String {
    let si = &m.layout.slots[v];
    let loc = &m.program.locations[si.loc].name;
    let value = crate::model::describe::value_text(&m.program, si.loc, st.value[v]);
    match si.thread {
        None => format!("{loc}={value} (initial)"),
        Some(_) => format!("{loc}={value} ({})", m.slot_words(v)),
    }
}
