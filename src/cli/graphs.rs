//! `ptxmc run --graphs DIR`: one picture per allowed final state.

use std::path::Path;

use crate::explain::axiomatic::{self, AxVerdict, Caps};
use crate::explain::enumerate::Limits;
use crate::ir::{CmpOp, Program, Prop, Term};
use crate::outcome::{Column, Columns, Outcomes};

/// The proposition that a final state is exactly `state`.
fn exactly(cols: &Columns, state: &[crate::ir::Value]) -> Prop {
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

/// Write `DIR/<test>-<k>.dot` for the k-th allowed final state of `p`.
pub fn write(dir: &Path, p: &Program, outcomes: &Outcomes) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let cols = Columns::of(p);
    for (k, state) in outcomes.iter().enumerate() {
        let want = exactly(&cols, state);
        let x = axiomatic::explain(p, &want, &Limits::default(), Caps::default());
        if let AxVerdict::Allowed { witness } = &x.verdict {
            let title = format!("{}-{}", p.name, k + 1);
            let name = crate::report::dot::file_name(&title);
            let mut dot = crate::report::dot::execution(&title, witness);
            dot.insert_str(
                0,
                &format!(
                    "// final state: {}\n",
                    crate::report::herd::state(p, &cols, state)
                ),
            );
            std::fs::write(dir.join(format!("{name}.dot")), dot)?;
        }
    }
    Ok(())
}
