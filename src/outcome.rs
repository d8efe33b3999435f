//! Results shared by all engines: final states, outcome sets and verdicts.
//!
//! A final state lists the value of every register of every thread (in
//! thread order, then register order) followed by every location (in
//! location order). Engines produce sets of such states; the verdict of the
//! test's condition is computed here, the same way for every engine.

use serde::Serialize;
use std::collections::BTreeSet;

use crate::ir::{LocId, LocKind, Program, RegId, Term, ThreadId, Value};

/// One column of a final state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Column {
    /// A register's final value.
    Reg {
        /// Thread.
        thread: ThreadId,
        /// Register.
        reg: RegId,
    },
    /// A location's final value.
    Loc(LocId),
}

/// The columns of a program's final states. Agent threads added by lowering
/// and mbarrier or hidden locations have none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns {
    /// In order: registers by thread, then locations.
    pub columns: Vec<Column>,
    reg_base: Vec<Option<usize>>,
    loc_col: Vec<Option<usize>>,
}

impl Columns {
    /// A final state of `p` in herd's notation (`0:r0=1; 1:r1=0; x=1;`): how
    /// the reports list it and how `--outcome` and `g` read it back.
    pub fn line(&self, p: &Program, s: &State) -> String {
        let mut out = Vec::new();
        LinePrinter::new(self, p).push(&mut out, s);
        String::from_utf8(out).expect("names and numbers are UTF-8")
    }

    /// The columns of `p`.
    pub fn of(p: &Program) -> Columns {
        let mut columns = Vec::new();
        let mut reg_base = Vec::new();
        for (t, th) in p.threads.iter().enumerate() {
            if th.agent.is_some() {
                reg_base.push(None);
                continue;
            }
            reg_base.push(Some(columns.len()));
            columns.extend((0..th.regs.len()).map(|reg| Column::Reg { thread: t, reg }));
        }
        let mut loc_col = Vec::new();
        for (l, loc) in p.locations.iter().enumerate() {
            if matches!(loc.kind, LocKind::Data | LocKind::TensorMemory) {
                loc_col.push(Some(columns.len()));
                columns.push(Column::Loc(l));
            } else {
                loc_col.push(None);
            }
        }
        Columns {
            columns,
            reg_base,
            loc_col,
        }
    }
    /// Index of a register's column (`None` for an agent's registers).
    pub fn reg(&self, thread: ThreadId, reg: RegId) -> Option<usize> {
        self.reg_base[thread].map(|b| b + reg)
    }
    /// Index of a location's column (`None` for mbarriers and hidden locations).
    pub fn loc(&self, loc: LocId) -> Option<usize> {
        self.loc_col[loc]
    }
    /// Number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }
    /// Whether there are no columns.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }
    /// The value of a condition term in a state.
    pub fn term(&self, state: &[Value], t: &Term) -> Value {
        match t {
            Term::Reg { thread, reg } => {
                state[self
                    .reg(*thread, *reg)
                    .expect("conditions name test threads")]
            }
            Term::Loc(l) => state[self.loc(*l).expect("conditions name data locations")],
            Term::Const(v) => *v,
        }
    }
}

/// A final state: one value per column.
pub type State = Vec<Value>;

/// Writes final states in herd's notation ([`Columns::line`]) for reports of
/// millions of them: each column's `name=` is built once, values are
/// formatted without the formatting machinery, and lines go into a byte
/// buffer the caller flushes.
pub struct LinePrinter {
    /// Per column, what comes before its value: `0:r0=`, then ` 1:r1=`,
    /// ` x=` (the separator included).
    prefixes: Vec<String>,
}

impl LinePrinter {
    /// The printer of `cols`, the columns of `p`.
    pub fn new(cols: &Columns, p: &Program) -> LinePrinter {
        let prefixes = cols
            .columns
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let sep = if k > 0 { " " } else { "" };
                match c {
                    Column::Reg { thread, reg } => {
                        format!("{sep}{thread}:{}=", p.threads[*thread].regs[*reg].name)
                    }
                    Column::Loc(l) => format!("{sep}{}=", p.locations[*l].name),
                }
            })
            .collect();
        LinePrinter { prefixes }
    }

    /// Append the line of `s` (no newline) to `out`.
    pub fn push(&self, out: &mut Vec<u8>, s: &State) {
        let mut digits = itoa::Buffer::new();
        for (prefix, &v) in self.prefixes.iter().zip(s) {
            out.extend_from_slice(prefix.as_bytes());
            out.extend_from_slice(digits.format(v).as_bytes());
            out.push(b';');
        }
    }
}

/// A set of final states, ordered for deterministic output.
pub type Outcomes = BTreeSet<State>;

/// The verdict of a test's condition over a set of final states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// States satisfying the proposition.
    pub positive: usize,
    /// States not satisfying it.
    pub negative: usize,
    /// Whether the condition (with its quantifier) holds.
    pub holds: bool,
}

impl Verdict {
    /// Evaluate `p`'s condition over `states`.
    pub fn of(p: &Program, cols: &Columns, states: &Outcomes) -> Verdict {
        let positive = states
            .iter()
            .filter(|s| p.condition.prop.eval(&|t: &Term| cols.term(s, t)))
            .count();
        let negative = states.len() - positive;
        Verdict {
            positive,
            negative,
            holds: p.condition.holds(positive, negative),
        }
    }
}

/// herd's `filter`: split `states` into those that satisfy `p`'s filter
/// (listed and counted for the verdict) and those it removes. Without a
/// filter every state passes.
pub fn apply_filter(p: &Program, cols: &Columns, states: Outcomes) -> (Outcomes, Outcomes) {
    match &p.filter {
        Some(f) => states
            .into_iter()
            .partition(|s| f.eval(&|t: &Term| cols.term(s, t))),
        None => (states, Outcomes::new()),
    }
}
