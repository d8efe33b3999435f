//! Final conditions: a quantifier over final states and a proposition.

use serde::{Deserialize, Serialize};

use super::{LocId, RegId, ThreadId, Value};

/// How the proposition is quantified over the reachable final states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantifier {
    /// `exists P`: holds iff some final state satisfies P (herd: *Allowed*).
    Exists,
    /// `~exists P`: holds iff no final state satisfies P (herd: *Forbidden*).
    NotExists,
    /// `forall P`: holds iff every final state satisfies P (herd: *Required*).
    Forall,
}

impl Quantifier {
    /// The keyword as written in litmus files.
    pub fn keyword(self) -> &'static str {
        match self {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "~exists",
            Quantifier::Forall => "forall",
        }
    }
    /// herd's name for the test kind (`Test NAME Allowed`).
    pub fn herd_kind(self) -> &'static str {
        match self {
            Quantifier::Exists => "Allowed",
            Quantifier::NotExists => "Forbidden",
            Quantifier::Forall => "Required",
        }
    }
}

/// A value in a final state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Term {
    /// A register's final value.
    Reg {
        /// The thread.
        thread: ThreadId,
        /// The register.
        reg: RegId,
    },
    /// A location's final value.
    Loc(LocId),
    /// A constant.
    Const(Value),
}

/// `==` or `!=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CmpOp {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
}

/// How deep a proposition may be: the longest path from the root to a leaf,
/// counting every `Not`, `And` and `Or` on it (a chain `a /\ b /\ c` is two
/// levels). Every function that walks a [`Prop`] recursively (evaluation,
/// printing, comparison, dropping the boxes) relies on this bound to stay
/// far from the end of a thread's stack; parsers refuse deeper input with a
/// positioned error and [`crate::ir::Program::validate`] checks it.
pub const MAX_PROP_DEPTH: usize = 256;

/// A proposition over one final state. `And`/`Or` are binary so that
/// printing and re-parsing give back the same tree.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prop {
    /// Always true (`true`).
    True,
    /// Always false (`false`).
    False,
    /// A comparison.
    Cmp(Term, CmpOp, Term),
    /// Negation (`~P`).
    Not(Box<Prop>),
    /// Conjunction (`P /\ Q`).
    And(Box<Prop>, Box<Prop>),
    /// Disjunction (`P \/ Q`).
    Or(Box<Prop>, Box<Prop>),
}

impl Prop {
    /// Evaluate with a lookup for terms.
    pub fn eval(&self, value: &impl Fn(&Term) -> Value) -> bool {
        match self {
            Prop::True => true,
            Prop::False => false,
            Prop::Cmp(a, op, b) => {
                let (a, b) = (value(a), value(b));
                match op {
                    CmpOp::Eq => a == b,
                    CmpOp::Ne => a != b,
                }
            }
            Prop::Not(p) => !p.eval(value),
            Prop::And(p, q) => p.eval(value) && q.eval(value),
            Prop::Or(p, q) => p.eval(value) || q.eval(value),
        }
    }
    /// The proposition's depth (see [`MAX_PROP_DEPTH`]): 0 for a leaf.
    /// Computed without recursion, so it is safe on any tree.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut todo: Vec<(&Prop, usize)> = vec![(self, 0)];
        while let Some((p, d)) = todo.pop() {
            deepest = deepest.max(d);
            match p {
                Prop::True | Prop::False | Prop::Cmp(..) => {}
                Prop::Not(x) => todo.push((x, d + 1)),
                Prop::And(x, y) | Prop::Or(x, y) => {
                    todo.push((x, d + 1));
                    todo.push((y, d + 1));
                }
            }
        }
        deepest
    }
    /// Every term the proposition mentions, in order.
    pub fn terms(&self) -> Vec<Term> {
        let mut out = Vec::new();
        self.collect_terms(&mut out);
        out
    }
    fn collect_terms(&self, out: &mut Vec<Term>) {
        match self {
            Prop::True | Prop::False => {}
            Prop::Cmp(a, _, b) => {
                out.push(*a);
                out.push(*b)
            }
            Prop::Not(p) => p.collect_terms(out),
            Prop::And(p, q) | Prop::Or(p, q) => {
                p.collect_terms(out);
                q.collect_terms(out)
            }
        }
    }
}

/// The final condition of a test.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Condition {
    /// Quantifier.
    pub quantifier: Quantifier,
    /// Proposition.
    pub prop: Prop,
}

impl Condition {
    /// The outcome the condition asks about: its proposition for `exists` and
    /// `~exists` (a state that proves or refutes it), the negation for
    /// `forall` (a state that refutes it). What `trace`, `explain` and `fix`
    /// target when no `--outcome` is given.
    pub fn target(&self) -> Prop {
        match self.quantifier {
            Quantifier::Forall => Prop::Not(Box::new(self.prop.clone())),
            Quantifier::Exists | Quantifier::NotExists => self.prop.clone(),
        }
    }
    /// Whether the condition holds given the number of final states that
    /// satisfy (`positive`) and do not satisfy (`negative`) the proposition.
    pub fn holds(&self, positive: usize, negative: usize) -> bool {
        match self.quantifier {
            Quantifier::Exists => positive > 0,
            Quantifier::NotExists => positive == 0,
            Quantifier::Forall => negative == 0,
        }
    }
}
