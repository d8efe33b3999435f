//! `ptxmc run --graphs DIR`: one picture per allowed final state.

use std::path::Path;

use crate::explain::axiomatic::{self, AxVerdict, Caps};
use crate::explain::enumerate::Limits;
use crate::explain::exactly;
use crate::ir::Program;
use crate::outcome::{Columns, Outcomes};

/// Write `DIR/<test>-<k>.dot` for the k-th allowed final state of `p`.
pub fn write(dir: &Path, p: &Program, outcomes: &Outcomes) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let cols = Columns::of(p);
    for (k, state) in outcomes.iter().enumerate() {
        let want = exactly(&cols, state);
        let x = axiomatic::explain(p, &want, &Limits::default(), Caps::default());
        if let AxVerdict::Allowed { witness, .. } = &x.verdict {
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
