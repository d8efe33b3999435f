//! Inlining `.func` calls: a kernel that calls device functions becomes one
//! body, the callees' instructions spliced in at each `call`, before
//! lowering (docs/kernels.md, "Device functions").
//!
//! nvcc passes arguments through `.param` variables of a call sequence:
//!
//! ```text
//! { .param .b64 param0;  st.param.b64 [param0+0], %rd1;
//!   .param .b32 retval0;
//!   call.uni (retval0), f, (param0);
//!   ld.param.b32 %r2, [retval0+0]; }
//! ```
//!
//! and the callee reads them with `ld.param.u64 %rd3, [f_param_0]` and
//! writes its result with `st.param.b32 [func_retval0+0], %r2`. The inliner
//! turns the argument and result traffic into register moves (the callee's
//! registers are new registers of the kernel), `ret` into a branch past the
//! spliced body, and drops the caller's `st.param`s to argument variables.
//! Only this whole-parameter form is accepted; anything else about a call —
//! an indirect call, a callee without a body, recursion, a guarded call, a
//! parameter read or written in parts — is refused by name at its position.

use std::collections::HashMap;

use super::ast::{Function, Instr, Module, Opnd, RegDecl, VarSpace};
use crate::litmus::{Diagnostic, Span};

/// How deep calls may nest (a guard against runaway chains; recursion is
/// refused before this is reached).
const MAX_DEPTH: usize = 16;

/// `f` with every `call` replaced by the callee's body (recursively), or
/// `f` itself when it calls nothing.
pub fn inline_calls(m: &Module, f: &Function) -> Result<Function, Diagnostic> {
    let mut stack = vec![f.name.clone()];
    inline_in(m, f, &mut stack)
}

fn refuse(at: Span, what: impl Into<String>, note: &str) -> Diagnostic {
    Diagnostic::expected(at, "what ptxmc models (docs/kernels.md)", what).with_note(note)
}

fn base_op(i: &Instr) -> &str {
    i.mnemonic.split('.').next().unwrap_or("")
}

/// The variable a `[name+0]` operand names, if it is one.
fn param_name(o: &Opnd) -> Option<(&str, i64, Span)> {
    match o {
        Opnd::Addr {
            base: Some(b),
            offset,
            span,
        } => match b.as_ref() {
            Opnd::Name(n, _) => Some((n.as_str(), *offset, *span)),
            _ => None,
        },
        _ => None,
    }
}

/// Add `k` to every register index of `o`.
fn shift_regs(o: &mut Opnd, k: u32) {
    match o {
        Opnd::Reg(r, _) => *r += k,
        Opnd::Addr { base: Some(b), .. } => shift_regs(b, k),
        Opnd::Vector(v, _) | Opnd::List(v, _) => v.iter_mut().for_each(|o| shift_regs(o, k)),
        Opnd::Not(o, _) => shift_regs(o, k),
        Opnd::Pair(a, b, _) => {
            shift_regs(a, k);
            shift_regs(b, k);
        }
        _ => {}
    }
}

/// Whether a `ld.param`/`st.param` moves a vector (`.v2`, `.v4`): a struct
/// argument in parts, which is refused.
fn is_vector(i: &Instr) -> bool {
    i.mnemonic
        .split('.')
        .any(|p| p.len() > 1 && p.starts_with('v') && p[1..].bytes().all(|b| b.is_ascii_digit()))
}

/// The type suffix of a `ld.param.T` / `st.param.T` (`T` of the mnemonic).
fn type_suffix(i: &Instr) -> &str {
    i.mnemonic.rsplit('.').next().unwrap_or("b64")
}

/// A `mov.T dst, src` standing for a parameter transfer at `at`.
fn mov(at: &Instr, ty: &str, dst: Opnd, src: Opnd) -> Instr {
    Instr {
        guard: at.guard,
        mnemonic: format!("mov.{ty}"),
        mn_span: at.mn_span,
        operands: vec![dst, src],
        span: at.span,
        loc: at.loc,
        target: None,
    }
}

fn inline_in(m: &Module, f: &Function, stack: &mut Vec<String>) -> Result<Function, Diagnostic> {
    if !f.body.iter().any(|i| base_op(i) == "call") {
        return Ok(f.clone());
    }
    let local_params: Vec<&str> = f
        .vars
        .iter()
        .filter(|v| v.space == VarSpace::Param)
        .map(|v| v.name.as_str())
        .collect();
    let mut out = Function {
        body: Vec::new(),
        labels: Vec::new(),
        ..f.clone()
    };
    // Per original instruction: its index in `out.body` (branch targets).
    let mut new_index = vec![0usize; f.body.len() + 1];
    // Instructions of `f` itself, whose targets are remapped at the end.
    let mut own: Vec<usize> = Vec::new();
    // What each argument variable of the current call sequence was set to.
    let mut args: HashMap<String, Opnd> = HashMap::new();
    // Each result variable read back after a call: the register holding it.
    let mut results: HashMap<String, u32> = HashMap::new();
    for (k, ins) in f.body.iter().enumerate() {
        new_index[k] = out.body.len();
        let op = base_op(ins);
        let local = ins
            .operands
            .first()
            .and_then(param_name)
            .filter(|(n, _, _)| local_params.contains(n));
        if op == "st" && ins.mnemonic.starts_with("st.param") {
            if let Some((name, off, span)) = local {
                if off != 0 || ins.guard.is_some() || ins.operands.len() != 2 || is_vector(ins) {
                    return Err(refuse(
                        span,
                        "a call argument written in parts or under a guard",
                        "arguments are inlined as whole values (`st.param.T [paramN+0], v`)",
                    ));
                }
                // The value as it is now, in a register of its own: a later
                // write to the operand's register must not reach the callee.
                let reg = out.regs.len() as u32;
                out.regs.push(RegDecl {
                    name: format!("%{name}.arg{k}"),
                    ty: type_suffix(ins).to_string(),
                });
                own.push(out.body.len());
                out.body.push(mov(
                    ins,
                    type_suffix(ins),
                    Opnd::Reg(reg, span),
                    ins.operands[1].clone(),
                ));
                args.insert(name.to_string(), Opnd::Reg(reg, span));
                continue;
            }
        }
        if op == "ld" && ins.mnemonic.starts_with("ld.param") {
            if let Some((name, off, span)) = ins.operands.get(1).and_then(param_name) {
                if let Some(&reg) = results.get(name) {
                    if off != 0 || is_vector(ins) {
                        return Err(refuse(
                            span,
                            "a call result read in parts",
                            "results are inlined as whole values (`ld.param.T r, [retval0+0]`)",
                        ));
                    }
                    let span = ins.operands[1].span();
                    own.push(out.body.len());
                    out.body.push(mov(
                        ins,
                        type_suffix(ins),
                        ins.operands[0].clone(),
                        Opnd::Reg(reg, span),
                    ));
                    continue;
                }
            }
        }
        if op != "call" {
            own.push(out.body.len());
            out.body.push(ins.clone());
            continue;
        }
        splice_call(m, &mut out, ins, &args, &mut results, stack)?;
        args.clear();
    }
    new_index[f.body.len()] = out.body.len();
    for &k in &own {
        if let Some(t) = out.body[k].target {
            out.body[k].target = Some(new_index[t]);
        }
    }
    let spliced = std::mem::take(&mut out.labels);
    out.labels = f
        .labels
        .iter()
        .map(|(n, at)| (n.clone(), new_index[*at]))
        .chain(spliced)
        .collect();
    out.labels.sort_by_key(|l| l.1);
    Ok(out)
}

/// Splice the callee of `call` into `out` at its end.
fn splice_call(
    m: &Module,
    out: &mut Function,
    call: &Instr,
    args: &HashMap<String, Opnd>,
    results: &mut HashMap<String, u32>,
    stack: &mut Vec<String>,
) -> Result<(), Diagnostic> {
    if call.guard.is_some() {
        return Err(refuse(
            call.mn_span,
            "a guarded `call`",
            "calls are inlined where they stand: branch around the call instead",
        ));
    }
    // `call (rets), f, (args)`, `call f, (args)`, `call (rets), f`, `call f`.
    let mut ops = call.operands.iter().peekable();
    let rets: Vec<&Opnd> = match ops.peek() {
        Some(Opnd::List(v, _)) => {
            ops.next();
            v.iter().collect()
        }
        _ => Vec::new(),
    };
    let (name, name_span) = match ops.next() {
        Some(Opnd::Name(n, s)) => (n.clone(), *s),
        Some(o) => {
            return Err(refuse(
                o.span(),
                "an indirect `call`",
                "calls name their `.func`",
            ));
        }
        None => {
            return Err(Diagnostic::expected(
                call.span,
                "a function to call",
                "none",
            ));
        }
    };
    let actuals: Vec<&Opnd> = match ops.next() {
        Some(Opnd::List(v, _)) => v.iter().collect(),
        None => Vec::new(),
        Some(o) => {
            return Err(refuse(
                o.span(),
                "this `call` operand",
                "a call's arguments are one `(a, b, ...)` list",
            ));
        }
    };
    if let Some(o) = ops.next() {
        return Err(refuse(
            o.span(),
            "a `call` with a prototype or target list",
            "direct calls only",
        ));
    }
    let Some(callee) = m.functions.iter().find(|g| g.name == name && !g.entry) else {
        return Err(Diagnostic::expected(
            name_span,
            "a `.func` of the module",
            format!("`{name}`"),
        ));
    };
    if callee.decl_only {
        return Err(refuse(
            name_span,
            format!("a call to `{name}`, which has no body in the module"),
            "an external function (libdevice, a separately compiled unit) cannot be inlined",
        ));
    }
    if let Some(v) = callee.vars.iter().find(|v| v.space != VarSpace::Param) {
        return Err(refuse(
            v.span,
            format!(
                "a variable `{}` declared inside the called `{name}`",
                v.name
            ),
            "calls are inlined into the kernel, and a callee's own `.local`/`.shared` variables are not carried over yet",
        ));
    }
    if stack.contains(&name) {
        return Err(refuse(
            name_span,
            format!("a recursive call to `{name}`"),
            "calls are inlined, and recursion has no bound: rewrite it as a loop",
        ));
    }
    if stack.len() >= MAX_DEPTH {
        return Err(refuse(
            name_span,
            format!("a call nested {MAX_DEPTH} deep"),
            "calls are inlined",
        ));
    }
    if actuals.len() != callee.params.len() || rets.len() != callee.rets.len() {
        return Err(Diagnostic::expected(
            call.span,
            format!(
                "{} argument(s) and {} result(s) for `{name}`",
                callee.params.len(),
                callee.rets.len()
            ),
            format!("{} and {}", actuals.len(), rets.len()),
        ));
    }
    stack.push(name.clone());
    let body = inline_in(m, callee, stack)?;
    stack.pop();
    // The callee's registers become the kernel's, after the caller's.
    let k = out.regs.len() as u32;
    out.regs.extend(body.regs.iter().cloned());
    // One register per result.
    let mut ret_regs: HashMap<&str, u32> = HashMap::new();
    for (p, r) in callee.rets.iter().zip(&rets) {
        let Opnd::Name(var, _) = r else {
            return Err(refuse(
                r.span(),
                "this call result",
                "results are `.param` variables",
            ));
        };
        let reg = out.regs.len() as u32;
        out.regs.push(RegDecl {
            name: format!("%{name}.{}", p.name),
            ty: p.ty.clone(),
        });
        ret_regs.insert(p.name.as_str(), reg);
        results.insert(var.clone(), reg);
    }
    // Each parameter's value: what the caller stored in its argument.
    let mut values: HashMap<&str, Opnd> = HashMap::new();
    for (p, a) in callee.params.iter().zip(&actuals) {
        let Opnd::Name(var, s) = a else {
            return Err(refuse(
                a.span(),
                "this call argument",
                "arguments are `.param` variables",
            ));
        };
        let Some(v) = args.get(var) else {
            return Err(Diagnostic::expected(
                *s,
                format!("an argument `{var}` written by `st.param` before the call"),
                "none",
            ));
        };
        values.insert(p.name.as_str(), v.clone());
    }
    let base = out.body.len();
    let mut rets_at = Vec::new();
    for ins in &body.body {
        let mut c = ins.clone();
        if let Some(g) = c.guard.as_mut() {
            g.1 += k;
        }
        c.operands.iter_mut().for_each(|o| shift_regs(o, k));
        c.target = c.target.map(|t| t + base);
        let op = base_op(&c);
        if op == "ld" && c.mnemonic.starts_with("ld.param") {
            if let Some((p, off, span)) = c.operands.get(1).and_then(param_name) {
                if let Some(v) = values.get(p) {
                    if off != 0 || is_vector(&c) {
                        return Err(refuse(
                            span,
                            "a parameter read in parts",
                            "parameters are inlined as whole values (`ld.param.T r, [f_param_0]`)",
                        ));
                    }
                    let ty = type_suffix(&c).to_string();
                    let dst = c.operands[0].clone();
                    out.body.push(mov(&c, &ty, dst, v.clone()));
                    continue;
                }
            }
        }
        if op == "st" && c.mnemonic.starts_with("st.param") {
            if let Some((p, off, span)) = c.operands.first().and_then(param_name) {
                if let Some(&reg) = ret_regs.get(p) {
                    if off != 0 || is_vector(&c) {
                        return Err(refuse(
                            span,
                            "a result written in parts",
                            "results are inlined as whole values (`st.param.T [func_retval0+0], r`)",
                        ));
                    }
                    let ty = type_suffix(&c).to_string();
                    let src = c.operands[1].clone();
                    out.body.push(mov(&c, &ty, Opnd::Reg(reg, span), src));
                    continue;
                }
            }
        }
        if op == "ret" {
            // Past the spliced body (patched below).
            rets_at.push(out.body.len());
            c.mnemonic = "bra.uni".to_string();
            c.operands.clear();
        }
        out.body.push(c);
    }
    let end = out.body.len();
    for at in rets_at {
        out.body[at].target = Some(end);
    }
    out.labels.extend(
        body.labels
            .iter()
            .map(|(n, at)| (format!("{name}:{n}"), at + base)),
    );
    Ok(())
}
