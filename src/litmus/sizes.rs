//! Access sizes (`docs/litmus-format.md`, "Access sizes"): what a test may
//! do with the data types written on `ld`, `st`, `atom` and `red`.
//!
//! * Accesses of **different widths** to one location (through any of its
//!   addresses) are refused: the PTX memory consistency model's axioms do
//!   not apply to programs with mixed-size data races (PTX ISA, "Memory
//!   Consistency Model", "Data races": a race between partially overlapping
//!   operations is a mixed-size data race), and ptxmc models a location as
//!   one word. An access that writes no type is a 32-bit word.
//! * Values are never wrapped: an immediate or initial value must fit the
//!   type of every typed access of its location (`st.u8 x, 300` is
//!   refused), and an 8- or 16-bit store or RMW must write an immediate (a
//!   register may hold any value).
//!
//! Every refusal is positioned at the instruction and names both ends.

use crate::ir::{DataType, Instr, Operand, Program, Value};

use super::SourceMap;
use super::diag::{Diagnostic, Span};

/// One typed-or-not load, store or RMW of the program.
struct Seen {
    thread: usize,
    pc: usize,
    bits: u32,
    ty: Option<DataType>,
}

/// Check the access sizes of `p`. `place` words where another instruction
/// is (`"line 7"` where the source is at hand).
pub fn check(
    p: &Program,
    spans: &SourceMap,
    place: &dyn Fn(Span) -> String,
) -> Result<(), Diagnostic> {
    let span_of = |t: usize, pc: usize| spans.instr(t, pc);
    let text = |t: usize, pc: usize| {
        format!(
            "{}'s `{}`",
            p.threads[t].name,
            super::print::instr(p, &p.threads[t], &p.threads[t].code[pc])
        )
    };
    let named = |t: usize, pc: usize| {
        let at = place(span_of(t, pc));
        if at.is_empty() {
            text(t, pc)
        } else {
            format!("{} ({at})", text(t, pc))
        }
    };
    let mut by_loc: Vec<Vec<Seen>> = (0..p.locations.len()).map(|_| Vec::new()).collect();
    for (t, th) in p.threads.iter().enumerate() {
        for (pc, i) in th.code.iter().enumerate() {
            if let Some(a) = i.access() {
                by_loc[p.addresses[a.addr].loc].push(Seen {
                    thread: t,
                    pc,
                    bits: a.bits(),
                    ty: a.ty,
                });
            }
        }
    }
    for (loc, seen) in by_loc.iter().enumerate() {
        let name = &p.locations[loc].name;
        // One width per location.
        if let Some(first) = seen.first() {
            if let Some(other) = seen.iter().find(|s| s.bits != first.bits) {
                return Err(Diagnostic::expected(
                    span_of(other.thread, other.pc),
                    format!(
                        "{} access to {name}, the width of {}",
                        bits_article(first.bits),
                        named(first.thread, first.pc)
                    ),
                    format!("{} access", bits_article(other.bits)),
                )
                .with_label("accesses of different sizes to one location")
                .with_note(
                    "the PTX memory model's axioms do not cover mixed-size accesses (PTX ISA, \
                     Memory Consistency Model, \"Data races\"); an access with no type is 32 bits",
                ));
            }
        }
        // Values fit every typed access of the location.
        if seen.iter().all(|s| s.ty.is_none()) {
            continue;
        }
        let fits_all = |v: Value| -> Option<(&Seen, DataType)> {
            seen.iter()
                .filter_map(|s| s.ty.map(|ty| (s, ty)))
                .find(|(_, ty)| {
                    let (lo, hi) = ty.range();
                    v < lo || v > hi
                })
        };
        let init = p.locations[loc].init;
        if let Some((s, ty)) = fits_all(init) {
            let (lo, hi) = ty.range();
            return Err(Diagnostic::expected(
                span_of(s.thread, s.pc),
                format!("an initial value of {name} that fits `.{ty}` ({lo}..{hi})"),
                format!("{name}={init} in the initial state"),
            )
            .with_label(format!("{name} is accessed as `.{ty}` here"))
            .with_note("values are not wrapped to an access's width"));
        }
        for s in seen {
            let i = &p.threads[s.thread].code[s.pc];
            let written: Vec<Operand> = match i {
                Instr::Store { src, .. } => vec![*src],
                Instr::Rmw { args, .. } => args.to_vec(),
                _ => Vec::new(),
            };
            for o in written {
                match o {
                    Operand::Imm(v) => {
                        if let Some((by, ty)) = fits_all(v) {
                            let (lo, hi) = ty.range();
                            let whose = if by.thread == s.thread && by.pc == s.pc {
                                "the instruction's own type".to_string()
                            } else {
                                format!("the type of {}", named(by.thread, by.pc))
                            };
                            return Err(Diagnostic::expected(
                                span_of(s.thread, s.pc),
                                format!("a value that fits `.{ty}` ({lo}..{hi}), {whose}"),
                                format!("`{v}`"),
                            )
                            .with_label(format!("{v} does not fit `.{ty}`"))
                            .with_note("values are not wrapped to an access's width"));
                        }
                    }
                    Operand::Reg(r) if s.bits < 32 => {
                        return Err(Diagnostic::expected(
                            span_of(s.thread, s.pc),
                            format!(
                                "an immediate value in {} write (a register may hold a value \
                                 that does not fit, and values are not wrapped)",
                                bits_article(s.bits)
                            ),
                            format!("register `{}`", p.threads[s.thread].regs[r].name),
                        )
                        .with_label(format!("{} writes a register", text(s.thread, s.pc))));
                    }
                    Operand::Reg(_) => {}
                }
            }
        }
    }
    Ok(())
}

/// "a 32-bit", "an 8-bit".
fn bits_article(bits: u32) -> String {
    if bits == 8 {
        "an 8-bit".to_string()
    } else {
        format!("a {bits}-bit")
    }
}
