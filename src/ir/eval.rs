//! Register computation — `mov` and arithmetic — in one place, over any value
//! domain. The machine retires with concrete values, its speculative window
//! computes with values that may not be known yet, and the oracle unfolds
//! threads over symbolic expressions; all three evaluate through
//! [`Instr::local_effect`], so they cannot drift apart.

use super::{ArithOp, Instr, Operand, RegId, Value};

/// A domain of register values.
pub trait Domain: Clone {
    /// An immediate operand.
    fn constant(v: Value) -> Self;
    /// `op(a, b)` in this domain.
    fn arith(op: ArithOp, a: Self, b: Self) -> Self;
}

/// Concrete values.
impl Domain for Value {
    fn constant(v: Value) -> Self {
        v
    }
    fn arith(op: ArithOp, a: Self, b: Self) -> Self {
        op.apply(a, b)
    }
}

/// Values that may be unknown (`None`): unknown in, unknown out.
impl Domain for Option<Value> {
    fn constant(v: Value) -> Self {
        Some(v)
    }
    fn arith(op: ArithOp, a: Self, b: Self) -> Self {
        Some(op.apply(a?, b?))
    }
}

/// The value of an operand, given the registers' values.
pub fn operand<D: Domain>(regs: &[D], o: &Operand) -> D {
    match o {
        Operand::Reg(r) => regs[*r].clone(),
        Operand::Imm(v) => D::constant(*v),
    }
}

impl Instr {
    /// For an instruction that only computes on registers (`mov`,
    /// arithmetic): the register it defines and the value it computes from
    /// `regs`. `None` for every other instruction.
    pub fn local_effect<D: Domain>(&self, regs: &[D]) -> Option<(RegId, D)> {
        match self {
            Instr::Mov { dst, src } => Some((*dst, operand(regs, src))),
            Instr::Arith { op, dst, a, b } => {
                Some((*dst, D::arith(*op, operand(regs, a), operand(regs, b))))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_domain_computes_the_same() {
        let i = Instr::Arith {
            op: ArithOp::Sub,
            dst: 1,
            a: Operand::Reg(0),
            b: Operand::Imm(5),
        };
        assert_eq!(i.local_effect::<Value>(&[3, 0]), Some((1, -2)));
        assert_eq!(
            i.local_effect::<Option<Value>>(&[Some(3), None]),
            Some((1, Some(-2)))
        );
        assert_eq!(
            i.local_effect::<Option<Value>>(&[None, Some(1)]),
            Some((1, None))
        );
        let m = Instr::Mov {
            dst: 0,
            src: Operand::Imm(7),
        };
        assert_eq!(m.local_effect::<Value>(&[0]), Some((0, 7)));
        let branch = Instr::Branch {
            cond: None,
            target: 0,
        };
        assert_eq!(branch.local_effect::<Value>(&[]), None);
    }
}
