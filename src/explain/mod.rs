//! Explanations: why the model allows or forbids an outcome, in the words
//! of the axioms (a witness execution, or every candidate execution with
//! the axiom that rejects it and the offending cycle) and of the machine.
//!
//! The axiomatic side does not reuse the oracle's pruning search: it
//! enumerates candidates itself ([`enumerate`]) and judges each with a
//! literal, by-the-book checker of the digest's §3 ([`check`]). That second
//! implementation doubles as a cross-check of the oracle
//! (`tests/explain.rs`: the same outcome sets on every public test).

pub mod axiomatic;
pub mod check;
pub mod enumerate;
pub mod lints;
pub mod missing;
pub mod operational;
pub mod races;
pub mod waiting;
pub mod waits;
pub mod words;

use serde::Serialize;

use axiomatic::{AxExplanation, AxVerdict, Caps, Execution};
use enumerate::Limits;
use operational::OpExplanation;

use crate::ir::{CmpOp, Program, Prop, Term};
use crate::op::Machine;
use crate::outcome::{Column, Columns};

/// Both explanations of one outcome of one test.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// The test's name.
    pub name: String,
    /// The file (with `[row]` for template instances).
    pub file: String,
    /// The axioms' explanation.
    pub ax: AxExplanation,
    /// The machine's explanation (absent when the machine cannot hold the test).
    pub op: Option<OpExplanation>,
    /// Whether the program can hang, decided as `ptxmc run` decides it.
    pub termination: TerminationNote,
    /// The undefined step `ptxmc run` finds, worded (`null` when none).
    pub undefined: Option<crate::report::ub::UbReport>,
    /// The choice of `elect.sync` leaders the explanation is about, for a
    /// program with several (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaders: Option<LeaderChoice>,
}

/// Which choice of `elect.sync` leaders an explanation follows
/// (`ir::elect`): the program's outcomes are the union over every choice,
/// so an allowed outcome is explained under a choice that gives it, and a
/// forbidden one under the first choice (it is forbidden under each).
#[derive(Clone, Debug, Serialize)]
pub struct LeaderChoice {
    /// How many choices the program has.
    pub choices: usize,
    /// The leaders of the choice explained, one line per warp and mask
    /// with several candidate lanes ([`crate::ir::elect::Variants::leaders_text`]).
    pub leaders: Vec<String>,
    /// Whether the outcome is allowed under this choice (else it is
    /// forbidden, or undecided, under every choice).
    pub witness: bool,
}

/// The test under each choice of `elect.sync` leader, with the choice's
/// leaders in words (one test, no words, without a choice of leader; `None`
/// beyond [`crate::ir::elect::MAX_VARIANTS`], when the parsed test, choice
/// 0, is all there is).
/// The leader lines come with the choice's leader steps (what a stepping
/// session's run, and so `trace --follow`, begins with).
type Leaders = Option<(Vec<String>, Vec<usize>)>;

fn leader_variants(t: &crate::litmus::LitmusTest) -> Vec<(crate::litmus::LitmusTest, Leaders)> {
    match crate::ir::elect::Variants::of(&t.program) {
        Ok(v) if v.programs.len() > 1 => (0..v.programs.len())
            .map(|i| {
                let mut u = t.clone();
                u.program = v.programs[i].1.clone();
                (u, Some((v.leaders_text(i), v.picks(i))))
            })
            .collect(),
        _ => vec![(t.clone(), None)],
    }
}

/// The machine's explanation of a choice of leaders, its replay commands
/// beginning with the choice's leader steps (`picks`) as `trace` counts them.
fn with_leader_steps(op: OpExplanation, picks: &[usize]) -> OpExplanation {
    let prefix = |replay: String| match replay.split_once("--follow") {
        Some((head, rest)) => {
            let mut list: Vec<String> = picks.iter().map(usize::to_string).collect();
            list.extend(
                rest.trim()
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string),
            );
            format!("{head}--follow {}", list.join(","))
        }
        None => replay,
    };
    match op {
        OpExplanation::Reached { replay } => OpExplanation::Reached {
            replay: prefix(replay),
        },
        OpExplanation::Blocked {
            steps,
            replay,
            blocked,
        } => OpExplanation::Blocked {
            steps: steps + picks.len(),
            replay: prefix(replay),
            blocked,
        },
        other => other,
    }
}

/// The index of the variant an outcome is explained under: the first
/// whose verdict is `allowed`, else the first undecided one, else the first.
fn pick_variant(verdicts: &[&AxVerdict]) -> usize {
    verdicts
        .iter()
        .position(|v| matches!(v, AxVerdict::Allowed { .. }))
        .or_else(|| {
            verdicts
                .iter()
                .position(|v| matches!(v, AxVerdict::Incomplete { .. }))
        })
        .unwrap_or(0)
}

/// The program's termination, as `ptxmc run` reports it (both engines'
/// termination search under the explanation's limits). A hang comes before
/// any outcome: an execution that never ends has no final state, so an
/// outcome's verdict speaks only of the executions that do end.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum TerminationNote {
    /// Every execution terminates.
    Terminates,
    /// Some execution hangs.
    Hangs {
        /// `deadlock` or `spin`.
        kind: &'static str,
        /// What waits, for what, and why nothing releases it (the sentence
        /// of `ptxmc run`'s `Hang:` line).
        why: String,
        /// The stuck threads.
        stuck: Vec<crate::model::hang::Stuck>,
        /// How copies complete in the variant that hangs (`ir::copies`).
        #[serde(skip_serializing_if = "crate::ir::copies::Granularity::is_element")]
        copies: crate::ir::copies::Granularity,
    },
    /// Not decided (a loop bound, a limit, or the engines disagree).
    NotChecked {
        /// Why, in words.
        why: String,
    },
}

impl TerminationNote {
    /// The termination of `p` as `ptxmc run` decides it, under the
    /// explanation's loop bound, deadline and state limit.
    pub fn of(p: &Program, limits: &Limits, max_states: u64) -> TerminationNote {
        TerminationNote::with_undefined(p, limits, max_states).0
    }

    /// [`TerminationNote::of`], with the least undefined step `ptxmc run`
    /// finds in the same run (`None`: no execution reaches one, or the run
    /// stopped at a limit before finding one).
    pub fn with_undefined(
        p: &Program,
        limits: &Limits,
        max_states: u64,
    ) -> (TerminationNote, Option<crate::model::ub::Undefined>) {
        let timeout = limits
            .deadline
            .map(|d| d.saturating_duration_since(std::time::Instant::now()));
        let opts = crate::engine::RunOptions {
            loop_bound: limits.loop_bound,
            limits: crate::limits::Limits {
                max_states: Some(max_states),
                timeout,
                max_memory: None,
            },
            output_cost: crate::limits::OutputCost::HERD,
            barriers: limits.barriers,
            fairness: limits.fairness,
            ..crate::engine::RunOptions::default()
        };
        let r = crate::engine::run(p, &opts);
        if let Some(d) = r.disagreement.as_ref().and_then(|d| d.termination) {
            let word = |h: bool| if h { "hangs" } else { "terminates" };
            let note = TerminationNote::NotChecked {
                why: format!(
                    "the engines disagree (operational: {}, axiomatic: {})",
                    word(d.0),
                    word(d.1)
                ),
            };
            return (note, r.undefined);
        }
        let note = match &r.termination {
            crate::engine::Termination::Hangs(h) => TerminationNote::Hangs {
                kind: h.kind().as_str(),
                why: crate::report::hang::sentence(p, h),
                stuck: h.stuck.clone(),
                copies: h.copies,
            },
            crate::engine::Termination::Terminates { .. } => TerminationNote::Terminates,
            t @ crate::engine::Termination::NotChecked(_) => TerminationNote::NotChecked {
                why: crate::report::hang::why(p, t),
            },
        };
        (note, r.undefined)
    }
    /// Whether a hang was found.
    pub fn hangs(&self) -> bool {
        matches!(self, TerminationNote::Hangs { .. })
    }
}

impl Explanation {
    /// Whether the axioms allow the outcome (`None`: incomplete).
    pub fn allowed(&self) -> Option<bool> {
        match self.ax.verdict {
            AxVerdict::Allowed { .. } => Some(true),
            AxVerdict::Forbidden { .. } => Some(false),
            AxVerdict::Incomplete { .. } => None,
        }
    }
    /// Whether the machine contradicts the axioms.
    pub fn disagreement(&self) -> bool {
        matches!(self.op, Some(OpExplanation::Disagrees { .. }))
    }
    /// Whether some part stopped at a limit.
    pub fn incomplete(&self) -> bool {
        matches!(self.ax.verdict, AxVerdict::Incomplete { .. })
            || matches!(self.op, Some(OpExplanation::Incomplete { .. }))
    }
}

/// Both explanations of `want` for test `t` (from `file`).
pub fn explain_outcome(
    t: &crate::litmus::LitmusTest,
    file: &str,
    want: &Prop,
    limits: &Limits,
    caps: Caps,
    max_states: u64,
) -> Explanation {
    // `elect.sync`: explain under the choice of leaders a witness needs.
    let variants = leader_variants(t);
    let mut axs: Vec<AxExplanation> = Vec::new();
    for (u, _) in &variants {
        let ax = axiomatic::explain_at(&u.program, &words::Positions::of(u), want, limits, caps);
        let found = matches!(ax.verdict, AxVerdict::Allowed { .. });
        axs.push(ax);
        if found {
            break;
        }
    }
    let chosen = pick_variant(&axs.iter().map(|a| &a.verdict).collect::<Vec<_>>());
    let ax = axs.swap_remove(chosen);
    let leaders = variants[chosen].1.clone().map(|(leaders, _)| LeaderChoice {
        choices: variants.len(),
        leaders,
        witness: matches!(ax.verdict, AxVerdict::Allowed { .. }),
    });
    let picks = variants[chosen]
        .1
        .as_ref()
        .map(|(_, picks)| picks.clone())
        .unwrap_or_default();
    let p = &variants[chosen].0.program;
    let allowed = match ax.verdict {
        AxVerdict::Allowed { .. } => Some(true),
        AxVerdict::Forbidden { .. } => Some(false),
        AxVerdict::Incomplete { .. } => None,
    };
    let op = allowed.and_then(|allowed| {
        // The machine at the width its slots need, like `engine::run`'s.
        fn at<S: crate::rel::Bits>(
            p: &Program,
            want: &Prop,
            file: &str,
            allowed: bool,
            limits: &Limits,
            max_states: u64,
        ) -> Result<OpExplanation, crate::op::TooManySlots> {
            let mut m = Machine::<S>::build(p, limits.loop_bound, true)?;
            m.barriers = limits.barriers;
            Ok(operational::explain(
                &m,
                want,
                file,
                allowed,
                max_states,
                limits.deadline,
            ))
        }
        match at::<u128>(p, want, file, allowed, limits, max_states) {
            Ok(x) => Some(x),
            Err(too) => crate::with_width!(
                too.needed,
                S => at::<S>(p, want, file, allowed, limits, max_states).ok(),
                None
            ),
        }
    });
    // Termination and undefined behaviour: the whole program's, every
    // choice of leader (`engine::run`).
    let op = op.map(|op| with_leader_steps(op, &picks));
    let (termination, undefined) = TerminationNote::with_undefined(&t.program, limits, max_states);
    Explanation {
        name: p.name.clone(),
        file: file.to_string(),
        ax,
        op,
        termination,
        undefined: undefined.map(|u| crate::report::ub::of(t, &u)),
        leaders,
    }
}

/// The missing orderings of an outcome, as data: the one answer that
/// `explain`, `trace`, `step` (`m`) and the playground render.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum MissingAnswer {
    /// The axioms allow the outcome: what its witness misses.
    Allowed {
        /// The pairs and their missing links (or: sequentially consistent).
        missing: missing::Missing,
    },
    /// The axioms forbid it: nothing is missing (`summary`: why, as
    /// `explain`'s `In short:` line says it).
    Forbidden {
        /// The principal reason.
        summary: String,
    },
    /// The enumeration stopped at a limit before a witness was found.
    Incomplete {
        /// The limit, in words.
        why: String,
    },
}

/// The missing orderings of `want` in `t`, worded with the instructions'
/// positions (what `explain` says under `Missing orderings:`).
pub fn missing_orderings(
    t: &crate::litmus::LitmusTest,
    want: &Prop,
    limits: &Limits,
) -> MissingAnswer {
    let caps = Caps {
        groups: 1,
        ..Caps::default()
    };
    // `elect.sync`: under the first choice of leaders that allows it.
    let mut axs = Vec::new();
    for (u, _) in leader_variants(t) {
        let ax = axiomatic::explain_at(&u.program, &words::Positions::of(&u), want, limits, caps);
        let found = matches!(ax.verdict, AxVerdict::Allowed { .. });
        axs.push(ax);
        if found {
            break;
        }
    }
    let chosen = pick_variant(&axs.iter().map(|a| &a.verdict).collect::<Vec<_>>());
    let ax = axs.swap_remove(chosen);
    match ax.verdict {
        AxVerdict::Allowed { missing, .. } => MissingAnswer::Allowed { missing },
        AxVerdict::Forbidden { summary, .. } => MissingAnswer::Forbidden { summary },
        AxVerdict::Incomplete { reason, .. } => MissingAnswer::Incomplete { why: reason },
    }
}

/// The missing orderings of an explanation already made, as
/// [`missing_orderings`] answers them.
pub fn missing_of(x: &Explanation) -> MissingAnswer {
    match &x.ax.verdict {
        AxVerdict::Allowed { missing, .. } => MissingAnswer::Allowed {
            missing: missing.clone(),
        },
        AxVerdict::Forbidden { summary, .. } => MissingAnswer::Forbidden {
            summary: summary.clone(),
        },
        AxVerdict::Incomplete { reason, .. } => MissingAnswer::Incomplete {
            why: reason.clone(),
        },
    }
}

/// The pictures of an explanation: the witness, or one per listed group.
pub fn pictures(x: &Explanation) -> Vec<(String, &Execution)> {
    match &x.ax.verdict {
        AxVerdict::Allowed { witness, .. } => vec![(x.name.clone(), witness)],
        AxVerdict::Forbidden { groups, .. } | AxVerdict::Incomplete { groups, .. } => groups
            .iter()
            .enumerate()
            .map(|(i, g)| (format!("{}-candidate{}", x.name, i + 1), &g.picture))
            .collect(),
    }
}

/// The proposition that a final state is exactly `state` (columns `cols`).
pub fn exactly(cols: &Columns, state: &[crate::ir::Value]) -> Prop {
    let mut prop = Prop::True;
    for (c, v) in cols.columns.iter().zip(state) {
        let term = match *c {
            Column::Reg { thread, reg } => Term::Reg { thread, reg },
            Column::Loc(l) => Term::Loc(l),
        };
        let cmp = Prop::Cmp(term, CmpOp::Eq, Term::Const(*v));
        prop = match prop {
            Prop::True => cmp,
            other => Prop::And(Box::new(other), Box::new(cmp)),
        };
    }
    prop
}
