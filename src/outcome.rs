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
///
/// Every column ([`Columns::of`], herd's final states) or, with
/// `--project condition`, only those the test asks about
/// ([`Columns::projected`]: the condition's terms, the filter's and herd's
/// `locations [...]`), in the same order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns {
    /// In order: registers by thread, then locations.
    pub columns: Vec<Column>,
    /// Per thread, per register: its column.
    reg_col: Vec<Vec<Option<usize>>>,
    loc_col: Vec<Option<usize>>,
    /// Only some columns are kept ([`Columns::projected`]).
    projected: bool,
}

impl Columns {
    /// A final state of `p` in herd's notation (`0:r0=1; 1:r1=0; x=1;`): how
    /// the reports list it and how `--outcome` and `g` read it back.
    pub fn line(&self, p: &Program, s: &State) -> String {
        let mut out = Vec::new();
        LinePrinter::new(self, p).push(&mut out, s);
        String::from_utf8(out).expect("names and numbers are UTF-8")
    }

    /// The columns of `p`: every register of every test thread, then every
    /// data location.
    pub fn of(p: &Program) -> Columns {
        Columns::keeping(p, |_| true, false)
    }

    /// The columns `p`'s test asks about ([`observed`]; with `memory`, every
    /// data location too), in the order of [`Columns::of`]: what `--project
    /// condition` (`--project memory`) lists.
    pub fn projected(p: &Program, memory: bool) -> Columns {
        let seen = observed(p, memory);
        Columns::keeping(p, |c| seen.contains(c), true)
    }

    /// Whether only the observed columns are kept ([`Columns::projected`]).
    pub fn is_projection(&self) -> bool {
        self.projected
    }

    /// The columns of `p` that `keep` keeps.
    fn keeping(p: &Program, keep: impl Fn(&Column) -> bool, projected: bool) -> Columns {
        let mut columns = Vec::new();
        let mut reg_col = Vec::new();
        for (t, th) in p.threads.iter().enumerate() {
            let mut cols = vec![None; th.regs.len()];
            if th.agent.is_none() {
                for (reg, col) in cols.iter_mut().enumerate() {
                    let c = Column::Reg { thread: t, reg };
                    if keep(&c) {
                        *col = Some(columns.len());
                        columns.push(c);
                    }
                }
            }
            reg_col.push(cols);
        }
        let mut loc_col = Vec::new();
        for (l, loc) in p.locations.iter().enumerate() {
            let c = Column::Loc(l);
            if matches!(loc.kind, LocKind::Data | LocKind::TensorMemory) && keep(&c) {
                loc_col.push(Some(columns.len()));
                columns.push(c);
            } else {
                loc_col.push(None);
            }
        }
        Columns {
            columns,
            reg_col,
            loc_col,
            projected,
        }
    }

    /// Where each of these columns stands in `full` (the columns of the
    /// same program this projects), to project `full`'s states
    /// ([`Columns::project`]).
    pub fn positions_in(&self, full: &Columns) -> Vec<usize> {
        self.columns
            .iter()
            .map(|c| match *c {
                Column::Reg { thread, reg } => full.reg(thread, reg),
                Column::Loc(l) => full.loc(l),
            })
            .map(|i| i.expect("a projection keeps columns of the full set"))
            .collect()
    }

    /// `states`, final states over `full`, over these columns instead
    /// (`positions` from [`Columns::positions_in`]).
    pub fn project(positions: &[usize], states: Outcomes) -> Outcomes {
        states
            .into_iter()
            .map(|s| positions.iter().map(|&i| s[i]).collect())
            .collect()
    }

    /// Index of a register's column (`None` for an agent's registers, and
    /// for registers a projection leaves out).
    pub fn reg(&self, thread: ThreadId, reg: RegId) -> Option<usize> {
        self.reg_col[thread].get(reg).copied().flatten()
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

/// The registers and locations `p`'s test asks about: the terms of its
/// condition and of its filter, and herd's `locations [...]` (`p.shown`);
/// with `memory`, every location as well (a kernel's buffers: `--project
/// memory`). These are what a projected run lists and keeps apart.
pub fn observed(p: &Program, memory: bool) -> Vec<Column> {
    let mut terms = p.condition.prop.terms();
    if let Some(f) = &p.filter {
        terms.extend(f.terms());
    }
    terms.extend(p.shown.iter().copied());
    let mut out: Vec<Column> = Vec::new();
    for t in terms {
        let c = match t {
            Term::Reg { thread, reg } => Column::Reg { thread, reg },
            Term::Loc(l) => Column::Loc(l),
            Term::Const(_) => continue,
        };
        if !out.contains(&c) {
            out.push(c);
        }
    }
    if memory {
        for l in 0..p.locations.len() {
            if !out.contains(&Column::Loc(l)) {
                out.push(Column::Loc(l));
            }
        }
    }
    out
}

/// Per thread of `p`, per register: whether [`observed`] names it.
pub fn observed_regs(p: &Program) -> Vec<Vec<bool>> {
    let mut out: Vec<Vec<bool>> = p
        .threads
        .iter()
        .map(|t| vec![false; t.regs.len()])
        .collect();
    for c in observed(p, false) {
        if let Column::Reg { thread, reg } = c {
            if let Some(b) = out.get_mut(thread).and_then(|r| r.get_mut(reg)) {
                *b = true;
            }
        }
    }
    out
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
