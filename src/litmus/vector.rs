//! Vector accesses (`ld.v2`, `st.v4`, `ld.global.v8`): one scalar access per
//! element, in the IR (`docs/litmus-format.md`, "Vector accesses").
//!
//! PTX ISA, Memory Consistency Model, "Vector Data-types": *memory
//! operations with a vector data-type are modelled as a set of equivalent
//! memory operations with a scalar data-type, executed in an unspecified
//! order on the elements in the vector*. The decoder writes the elements'
//! accesses one after the other. Program order between them orders nothing
//! the model can observe as long as each is weak or relaxed: the model
//! orders accesses of one thread to *different* locations only through a
//! fence between them or a release/acquire pattern that one of them
//! carries, and elements of one instruction have neither. `.acquire` and
//! `.release` vectors are refused by name: written in program order, an
//! element's acquire would order the elements after it, which the ISA does
//! not (a lost outcome).
//!
//! The elements of a vector at `[x]` are the locations `x[0]`, `x[1]`, ...;
//! at `[x[k]]` they are `x[k]`, `x[k+1]`, ... (the names the kernel front
//! end gives consecutive elements of a buffer or variable).

use super::diag::{Diagnostic, Span};
use super::instr::{Decoded, decode as decode_scalar, vector_part};
use super::raw::{RawInstr, RawOperand, Resolver};
use crate::ir::DataType;

/// The base name and first index of a vector's address: `x` → (`x`, 0),
/// `x[3]` → (`x`, 3).
fn base_index(name: &str) -> (&str, u64) {
    if let Some(open) = name.rfind('[') {
        if let Some(idx) = name[open + 1..]
            .strip_suffix(']')
            .and_then(|d| d.parse::<u64>().ok())
        {
            return (&name[..open], idx);
        }
    }
    (name, 0)
}

/// Decode `ld{...}.vN.type {d0, ...}, [a]` or `st{...}.vN.type [a], {v0, ...}`
/// into one scalar access per element. `elements`: the element addresses'
/// names when the caller computed them (the kernel front end, from byte
/// offsets); `None` names them from the written address (`x[k+i]`).
pub fn decode(
    raw: &RawInstr,
    elements: Option<&[String]>,
    r: &mut dyn Resolver,
) -> Result<Decoded, Diagnostic> {
    let opcode = raw.parts[0].0.as_str();
    let load = opcode == "ld";
    let (n, vspan) = vector_part(raw).expect("a vector access");
    // The scalar mnemonic: the same parts without `.vN`.
    let parts: Vec<(String, Span)> = raw
        .parts
        .iter()
        .filter(|(p, _)| !matches!(p.as_str(), "v2" | "v4" | "v8"))
        .cloned()
        .collect();
    if raw.parts.iter().filter(|(p, _)| vector_part_len(p)).count() > 1 {
        return Err(Diagnostic::expected(
            vspan,
            "one vector length",
            "a second `.v2`, `.v4` or `.v8`",
        ));
    }
    for (p, s) in &parts[1..] {
        if matches!(p.as_str(), "acquire" | "release") {
            return Err(Diagnostic::unsupported(
                *s,
                format!("`.{p}` on a vector access"),
                "a weak, `.relaxed` or `.volatile` vector access",
            )
            .with_note(
                "the elements of a vector access are unordered (PTX ISA, Memory Consistency \
                 Model, \"Vector Data-types\"); ptxmc writes them in program order, where an \
                 element's acquire or release would order the others: write one scalar access \
                 per element",
            ));
        }
    }
    let ty = parts[1..]
        .iter()
        .find_map(|(p, _)| DataType::parse(p))
        .ok_or_else(|| {
            Diagnostic::expected(
                Span::new(vspan.end, vspan.end + 1),
                format!("a data type after `.v{n}` (`.u32`, `.b64`, ...)"),
                "none",
            )
        })?;
    let total = n as u32 * ty.bits();
    let global = parts.iter().any(|(p, _)| p == "global");
    if total > 256 || (total > 128 && !global) {
        return Err(Diagnostic::expected(
            vspan,
            "a vector of at most 128 bits (256 bits with `.global`)",
            format!("`.v{n}.{ty}` ({total} bits)"),
        )
        .with_note("PTX ISA, `ld`/`st`: `.v8` and 256-bit vectors are `.global` only"));
    }
    if let Some((_, s)) = raw.precondition {
        return Err(Diagnostic::unsupported(
            s,
            "a precondition on a vector load",
            "a precondition on a scalar load",
        ));
    }
    if raw.operands.len() != 2 {
        return Err(Diagnostic::expected(
            raw.span,
            if load {
                "2 operands: `{d0, ...}, [addr]`"
            } else {
                "2 operands: `[addr], {v0, ...}`"
            },
            format!("{}", raw.operands.len()),
        ));
    }
    let (vec_op, addr_op) = if load {
        (&raw.operands[0], &raw.operands[1])
    } else {
        (&raw.operands[1], &raw.operands[0])
    };
    let RawOperand::Vector(elems, espan) = vec_op else {
        return Err(Diagnostic::expected(
            vec_op.span(),
            format!("a vector of {n} elements `{{...}}`"),
            vec_op.shown(),
        ));
    };
    if elems.len() != n {
        return Err(Diagnostic::expected(
            *espan,
            format!("{n} elements (`.v{n}`)"),
            format!("{}", elems.len()),
        ));
    }
    let (name, aspan) = match addr_op {
        RawOperand::Bracketed(a, s) | RawOperand::Name(a, s) => (a.as_str(), *s),
        o => {
            return Err(Diagnostic::expected(
                o.span(),
                "an address `[x]`",
                o.shown(),
            ));
        }
    };
    let names: Vec<String> = match elements {
        Some(e) => e.to_vec(),
        None => {
            let (base, k) = base_index(name);
            (0..n as u64)
                .map(|i| format!("{base}[{}]", k + i))
                .collect()
        }
    };
    let mut out = Vec::with_capacity(n);
    for (e, at) in elems.iter().zip(&names) {
        let addr = RawOperand::Bracketed(at.clone(), aspan);
        let operands = if load {
            vec![e.clone(), addr]
        } else {
            vec![addr, e.clone()]
        };
        let scalar = RawInstr {
            parts: parts.clone(),
            operands,
            precondition: None,
            span: raw.span,
        };
        out.push(decode_scalar(&scalar, r)?.instr);
    }
    let mut it = out.into_iter();
    Ok(Decoded {
        instr: it.next().expect("a vector has elements"),
        label: None,
        rest: it.collect(),
        elect: None,
    })
}

fn vector_part_len(p: &str) -> bool {
    matches!(p, "v2" | "v4" | "v8")
}

#[cfg(test)]
mod tests {
    use super::base_index;

    #[test]
    fn element_names_split_at_the_last_index() {
        assert_eq!(base_index("x"), ("x", 0));
        assert_eq!(base_index("x[3]"), ("x", 3));
        assert_eq!(base_index("x[a]"), ("x[a]", 0));
    }
}
