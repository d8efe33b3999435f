//! A second finder of data races, for tests: the literal checker's
//! relations ([`super::check::Relations`]: moral strength and causality
//! computed by their definitions, apart from the oracle's search) over
//! every consistent candidate that [`super::enumerate`] lists. The oracle's
//! races (`ax::race`, found during its search) must be exactly these.

use std::collections::BTreeSet;

use crate::ax::race::{self, Race};
use crate::ir::Program;
use crate::rel::Bits;

use super::enumerate::{self, Candidate, Filter, Limits, Stopped, Verdict, Visit};

/// Every race of `p` (not lowered yet) by the checker's relations, or why
/// the enumeration stopped. Executions cut at the loop bound are skipped,
/// as the oracle skips them.
pub fn races(p: &Program, limits: &Limits) -> Result<BTreeSet<Race>, Stopped> {
    let lowered = crate::model::lower::lowered(p, limits.loop_bound);
    let mut c = Collect::default();
    enumerate::enumerate(&lowered, Filter::All, limits, &mut c)?;
    Ok(c.out)
}

#[derive(Default)]
struct Collect {
    out: BTreeSet<Race>,
}

impl Visit for Collect {
    fn visit<S: Bits>(&mut self, c: &Candidate<'_, '_, '_, S>) -> bool {
        if c.prefix || c.verdict != Verdict::Consistent {
            return true;
        }
        let Some(rel) = c.relations else { return true };
        let g = c.graph;
        for x in 0..g.len() {
            for y in x + 1..g.len() {
                if race::conflict(g, x, y)
                    && !rel.ms.has(x, y)
                    && !rel.cause.has(x, y)
                    && !rel.cause.has(y, x)
                {
                    self.out.insert(race::race(g, x, y));
                }
            }
        }
        true
    }
}
