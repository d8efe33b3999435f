//! Whether an outcome comes from a hang: no execution that ends gives it,
//! but a stuck configuration of the machine shows it (the registers a
//! stuck thread never wrote still hold their initial values, memory holds
//! what was written before everything stopped). On hardware such an
//! outcome is what a kernel that never finishes leaves behind (a watchdog,
//! a timeout), and no fence or stronger annotation is its fix: the hang is.
//!
//! The machine decides it on its whole state space (the executions that
//! end, and the stuck configurations `op::hang` recognises), under the
//! search's budget.

use std::collections::HashSet;

use crate::ir::{Program, Prop, Term};
use crate::limits::Budget;
use crate::model::barrier::Reading;
use crate::op::Machine;
use crate::op::hang::Quiescence;
use crate::rel::Bits;

/// The most states the search visits (as `fix`'s termination check).
const MAX_STATES: usize = 2_000_000;

/// What the machine found about where an outcome comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Some execution that ends gives it (not only a hang).
    Ends,
    /// No execution that ends gives it, and this hang shows it (`ptxmc
    /// run`'s sentence for it).
    Hang(String),
    /// Neither: no execution that ends and no stuck configuration gives it.
    Neither,
}

/// Where `want` comes from in `p` (the test as written), by the machine;
/// `None` if the budget ran out first or the machine cannot hold `p`.
pub fn source(
    p: &Program,
    want: &Prop,
    loop_bound: u32,
    barriers: Reading,
    budget: &Budget,
) -> Option<Source> {
    fn at<S: Bits>(
        p: &Program,
        want: &Prop,
        loop_bound: u32,
        barriers: Reading,
        budget: &Budget,
    ) -> Result<Option<Source>, crate::op::TooManySlots> {
        let mut m = Machine::<S>::build(p, loop_bound, true)?;
        m.barriers = barriers;
        let found = m.within(budget, || search(&m, p, want, budget));
        Ok(if m.interrupted() { None } else { found })
    }
    match at::<u128>(p, want, loop_bound, barriers, budget) {
        Ok(x) => x,
        Err(too) => crate::with_width!(
            too.needed,
            S => at::<S>(p, want, loop_bound, barriers, budget).ok().flatten(),
            None
        ),
    }
}

/// Every state of the machine, breadth first: an ending state that shows
/// `want` ends the search; the first stuck one that does is remembered.
fn search<S: Bits>(
    m: &Machine<'_, S>,
    p: &Program,
    want: &Prop,
    budget: &Budget,
) -> Option<Source> {
    let shows = |st: &crate::op::state::State<S>| {
        let mut yes = false;
        m.for_each_outcome(st, |o| {
            yes = want.eval(&|t: &Term| m.columns.term(&o, t));
            if yes {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        });
        yes
    };
    let init = m.initial();
    let mut seen: HashSet<u64> = HashSet::from([init.fingerprint()]);
    let mut queue = std::collections::VecDeque::from([init]);
    let mut hang: Option<String> = None;
    while let Some(st) = queue.pop_front() {
        if budget.exceeded().is_some()
            || budget.states_exceeded(seen.len() as u64).is_some()
            || seen.len() > MAX_STATES
        {
            return None;
        }
        if m.is_final(&st) {
            if !m.is_cut(&st) && shows(&st) {
                return Some(Source::Ends);
            }
            continue;
        }
        if hang.is_none() {
            if let Quiescence::Hang(h) = m.quiescence(&st) {
                if shows(&st) {
                    hang = Some(crate::report::hang::sentence(p, &h));
                }
            }
        }
        for (_, s) in m.successors(&st) {
            if seen.insert(s.fingerprint()) {
                queue.push_back(*s);
            }
        }
    }
    Some(hang.map_or(Source::Neither, Source::Hang))
}
