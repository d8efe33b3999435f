//! The signedness of a kernel's comparing read-modify-writes: `min`, `max`,
//! `inc` and `dec` of `atom`, `red`, `red.async` and tensor reductions.
//!
//! The litmus decoder gives these operations their litmus meaning, signed
//! comparisons of ptxmc's 64-bit values. A kernel keeps a value as a signed
//! number of its width (docs/kernels.md, "Values": a `uint32` 0xffffffff is
//! -1), so a signed comparison would order 0x80000000 below 1. The PTX ISA
//! makes the comparison follow the instruction's type ("atom", "red",
//! "cp.reduce.async.bulk.tensor"): `.u32`/`.u64` compare unsigned,
//! `.s32`/`.s64` signed; `inc` and `dec` are `.u32` only (their semantics,
//! `old >= b ? 0 : old + 1` and `(old == 0 || old > b) ? b : old - 1`, are
//! unsigned); `min`/`max` take no bit-size type (`.b32`, `.b64`). Here each
//! such operation gets its signed or unsigned form ([`RmwOp::unsigned`]),
//! and a type the ISA does not allow is an error at the type.

use super::ThreadLower;
use crate::ir::{AsyncKind, DataType, Instr, RmwOp};
use crate::litmus::{Diagnostic, Span};
use crate::ptx::ast::Instr as PInstr;

/// `op` on operands of type `ty`: its unsigned form for `.u32`/`.u64`,
/// itself for a signed or a non-comparing operation; `Err` with what the
/// PTX ISA allows when it does not allow `ty` with `op`.
pub(super) fn typed(op: RmwOp, ty: DataType) -> Result<RmwOp, &'static str> {
    match op {
        RmwOp::Min | RmwOp::Max => match ty {
            DataType::U32 | DataType::U64 => Ok(op.unsigned()),
            DataType::S32 | DataType::S64 => Ok(op),
            _ => Err(
                "`.u32`, `.s32`, `.u64` or `.s64` (PTX ISA, atom: `.min` and `.max` compare integers, unsigned or signed as the type says)",
            ),
        },
        RmwOp::Inc | RmwOp::Dec => match ty {
            DataType::U32 => Ok(op.unsigned()),
            _ => Err("`.u32` (PTX ISA, atom: `.inc` and `.dec` are `.u32` only)"),
        },
        _ => Ok(op),
    }
}

/// The operation of an RMW or reduction instruction, if it has one.
fn op_of(d: &mut Instr) -> Option<&mut RmwOp> {
    match d {
        Instr::Rmw { op, .. } if !op.is_mbarrier() => Some(op),
        Instr::AsyncCopy {
            kind: AsyncKind::Reduce(op) | AsyncKind::ReduceBulk(op),
            ..
        } => Some(op),
        _ => None,
    }
}

impl ThreadLower<'_> {
    /// `d`, decoded from the memory instruction `i` (mnemonic `parts`), with
    /// its comparing operation signed or unsigned as the instruction's type
    /// says.
    pub(super) fn signedness(
        &self,
        mut d: Instr,
        i: &PInstr,
        parts: &[&str],
    ) -> Result<Instr, Diagnostic> {
        let Some(op) = op_of(&mut d) else {
            return Ok(d);
        };
        let spans = super::bulk::mnemonic_part_spans(i, parts);
        // The operand type is the mnemonic's last type (`red.async`'s
        // `.mbarrier::complete_tx::bytes` comes before it).
        let Some((ty, at)) = parts
            .iter()
            .zip(&spans)
            .rev()
            .find_map(|(p, s)| DataType::parse(p).map(|t| (t, *s)))
        else {
            // Untyped, an access is a 32-bit word (`.b32`) in the dialect.
            return match typed(*op, DataType::B32) {
                Ok(_) => Ok(d),
                Err(want) => Err(Diagnostic::expected(i.mn_span, want, "no type")),
            };
        };
        *op = typed(*op, ty).map_err(|want| wrong_type(at, ty, *op, want))?;
        Ok(d)
    }

    /// `d`, an element reduction of a tensor reduction into buffer
    /// `buffer` (`cp.reduce.async.bulk.tensor`), whose element type the
    /// tensor map gives (`--tensormap NAME:TYPE...`), with its comparing
    /// operation signed or unsigned as that type says. A floating-point
    /// tensor is refused: values are bit patterns, and a reduction would
    /// compute on them as integers.
    pub(super) fn tensor_signedness(
        &self,
        mut d: Instr,
        buffer: usize,
        at: Span,
    ) -> Result<Instr, Diagnostic> {
        let Some(op) = op_of(&mut d) else {
            return Ok(d);
        };
        let b = &self.ctx.buffers[buffer];
        if b.data.is_float() {
            return Err(super::refuse(
                at,
                format!("a reduction into the `{}` tensor `{}`", b.ty, b.name),
                "floating-point values are opaque bit patterns: arithmetic on them is not modelled",
            ));
        }
        *op = typed(*op, b.data).map_err(|want| {
            Diagnostic::expected(
                at,
                want,
                format!("`.{}` on the `{}` tensor `{}`", op.as_str(), b.ty, b.name),
            )
        })?;
        Ok(d)
    }
}

fn wrong_type(at: Span, ty: DataType, op: RmwOp, want: &str) -> Diagnostic {
    Diagnostic::expected(at, want, format!("`.{ty}` with `.{}`", op.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_types_compare_unsigned_and_signed_types_signed() {
        assert_eq!(typed(RmwOp::Max, DataType::U32), Ok(RmwOp::UMax));
        assert_eq!(typed(RmwOp::Min, DataType::U64), Ok(RmwOp::UMin));
        assert_eq!(typed(RmwOp::Max, DataType::S32), Ok(RmwOp::Max));
        assert_eq!(typed(RmwOp::Min, DataType::S64), Ok(RmwOp::Min));
        assert_eq!(typed(RmwOp::Inc, DataType::U32), Ok(RmwOp::UInc));
        assert_eq!(typed(RmwOp::Dec, DataType::U32), Ok(RmwOp::UDec));
        // Operations that do not compare keep their form whatever the type.
        assert_eq!(typed(RmwOp::Add, DataType::U32), Ok(RmwOp::Add));
        assert_eq!(typed(RmwOp::And, DataType::B64), Ok(RmwOp::And));
    }

    #[test]
    fn types_the_isa_does_not_allow_are_refused() {
        for ty in [DataType::B32, DataType::B64, DataType::U16, DataType::F32] {
            assert!(typed(RmwOp::Min, ty).unwrap_err().contains("`.s64`"));
            assert!(typed(RmwOp::Max, ty).is_err());
        }
        for ty in [DataType::S32, DataType::B32, DataType::U64] {
            assert!(typed(RmwOp::Inc, ty).unwrap_err().starts_with("`.u32`"));
            assert!(typed(RmwOp::Dec, ty).is_err());
        }
    }
}
