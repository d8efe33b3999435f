//! The IR's invariants as executable checks (see the module docs of [`crate::ir`]).

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::{AddressKind, Instr, MAX_PROP_DEPTH, Operand, Program, Sem, Term};

/// A broken IR invariant. Parsers never produce these; they guard hand-built
/// or deserialised programs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrError(pub String);

impl fmt::Display for IrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for IrError {}

macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(IrError(format!($($arg)*)));
        }
    };
}

impl Program {
    /// Check every IR invariant; the first violation is returned.
    pub fn validate(&self) -> Result<(), IrError> {
        let nlocs = self.locations.len();
        let naddrs = self.addresses.len();
        let mut names = HashSet::new();
        for l in &self.locations {
            ensure!(
                names.insert(&l.name),
                "duplicate location name `{}`",
                l.name
            );
        }
        let mut anames = HashSet::new();
        for (i, a) in self.addresses.iter().enumerate() {
            ensure!(
                anames.insert(&a.name),
                "duplicate address name `{}`",
                a.name
            );
            ensure!(
                a.loc < nlocs,
                "address `{}` maps to missing location {}",
                a.name,
                a.loc
            );
            ensure!(
                a.va < naddrs,
                "address `{}` has va {} out of range",
                a.name,
                a.va
            );
            let owner = &self.addresses[a.va];
            ensure!(
                owner.kind == AddressKind::Generic && owner.va == a.va && owner.loc == a.loc,
                "address `{}`: its virtual address must be owned by a generic address of the same location",
                a.name
            );
            if a.kind != AddressKind::Generic {
                ensure!(
                    a.va != i,
                    "proxy reference `{}` cannot own a virtual address",
                    a.name
                );
            }
            if let Some(t) = a.alias_of {
                ensure!(
                    t < naddrs && t != i,
                    "address `{}` aliases an invalid address",
                    a.name
                );
                ensure!(
                    self.addresses[t].loc == a.loc,
                    "alias `{}` changes location",
                    a.name
                );
            }
        }
        for l in 0..nlocs {
            ensure!(
                self.addresses
                    .iter()
                    .any(|a| a.loc == l && a.alias_of.is_none()),
                "location `{}` has no owning address",
                self.locations[l].name
            );
        }
        let mut cluster_of_cta = HashMap::new();
        let mut lanes_of_warp: HashMap<(u32, u32, u32), usize> = HashMap::new();
        for (ti, t) in self.threads.iter().enumerate() {
            if let (Some(w), None) = (t.placement.warp, &t.agent) {
                let n = lanes_of_warp
                    .entry((t.placement.gpu, t.placement.cta, w))
                    .or_insert(0);
                *n += 1;
                ensure!(
                    *n <= 32,
                    "warp {w} of CTA {} of GPU {} has more than 32 lanes",
                    t.placement.cta,
                    t.placement.gpu
                );
            }
            ensure!(
                t.sites.is_empty() || t.sites.len() == t.code.len(),
                "thread {ti} names the shared instruction of {} of its {} instructions",
                t.sites.len(),
                t.code.len()
            );
            ensure!(
                t.name == format!("P{ti}"),
                "thread {ti} is named `{}`, expected `P{ti}`",
                t.name
            );
            let p = t.placement;
            let prev = cluster_of_cta.insert((p.gpu, p.cta), p.cluster);
            ensure!(
                prev.is_none() || prev == Some(p.cluster),
                "CTA {} of GPU {} is placed in two clusters",
                p.cta,
                p.gpu
            );
            let mut rnames = HashSet::new();
            for r in &t.regs {
                ensure!(
                    rnames.insert(&r.name),
                    "{}: duplicate register `{}`",
                    t.name,
                    r.name
                );
            }
            let nregs = t.regs.len();
            let op_ok = |o: &Operand| match o {
                Operand::Reg(r) => *r < nregs,
                Operand::Imm(_) => true,
            };
            for (pc, ins) in t.code.iter().enumerate() {
                let at = format!("{} instruction {pc}", t.name);
                ensure!(
                    ins.uses().iter().all(|r| *r < nregs),
                    "{at}: register out of range"
                );
                ensure!(
                    ins.def().is_none_or(|r| r < nregs),
                    "{at}: register out of range"
                );
                if let Some(acc) = ins.access() {
                    ensure!(acc.addr < naddrs, "{at}: address out of range");
                    ensure!(
                        acc.scope.is_some() == acc.sem.is_strong(),
                        "{at}: scope must be present exactly for strong semantics"
                    );
                    if acc.sem == Sem::Volatile {
                        ensure!(
                            acc.scope == Some(super::Scope::Sys),
                            "{at}: volatile implies .sys"
                        );
                    }
                }
                match ins {
                    Instr::Load { access, .. } => {
                        ensure!(!access.sem.is_release(), "{at}: a load cannot be a release")
                    }
                    Instr::Store { src, access } => {
                        ensure!(op_ok(src), "{at}: bad operand");
                        ensure!(
                            !access.sem.is_acquire(),
                            "{at}: a store cannot be an acquire"
                        )
                    }
                    Instr::Rmw {
                        dst,
                        op,
                        args,
                        access,
                    } => {
                        ensure!(
                            args.len() == op.arity(),
                            "{at}: {} takes {} operands",
                            op.as_str(),
                            op.arity()
                        );
                        ensure!(
                            access.sem != Sem::Weak && access.sem != Sem::Volatile,
                            "{at}: RMWs are strong"
                        );
                        ensure!(
                            dst.is_some() || access.sem != Sem::Acquire,
                            "{at}: red cannot acquire"
                        );
                    }
                    Instr::Branch { target, .. } => {
                        ensure!(*target <= t.code.len(), "{at}: branch target out of range")
                    }
                    Instr::Barrier { id, .. } => {
                        ensure!(!id.is_empty(), "{at}: barrier without id")
                    }
                    _ => {}
                }
            }
            let mut last = 0;
            for l in &t.labels {
                ensure!(
                    l.at <= t.code.len() && l.at >= last,
                    "{}: labels out of order",
                    t.name
                );
                last = l.at;
            }
        }
        // Every `elect.sync` wait has its site, and each site its wait
        // (with an immediate mask) and its `mov`s of immediates.
        for (t, th) in self.threads.iter().enumerate() {
            for (pc, i) in th.code.iter().enumerate() {
                if let Instr::Barrier {
                    kind: crate::ir::BarrierKind::Elect,
                    ..
                } = i
                {
                    ensure!(
                        self.elects.iter().any(|s| s.thread == t && s.pc == pc),
                        "{}:{pc}: `elect.sync` without its site",
                        th.name
                    );
                }
            }
        }
        if let Some((t, pc, why)) = super::copies::misjoined(self) {
            return Err(IrError(format!("{}:{pc}: {why}", self.threads[t].name)));
        }
        for s in &self.elects {
            let code = &self
                .threads
                .get(s.thread)
                .map(|t| &t.code[..])
                .unwrap_or(&[]);
            ensure!(
                matches!(
                    code.get(s.pc),
                    Some(Instr::Barrier {
                        kind: crate::ir::BarrierKind::Elect,
                        id,
                        ..
                    }) if matches!(id.first(), Some(crate::ir::Operand::Imm(_)))
                ),
                "elect site P{}:{}: not an `elect.sync` wait with an immediate mask",
                s.thread,
                s.pc
            );
            let (d, p) = s.movs();
            for m in d.into_iter().chain(p) {
                ensure!(
                    matches!(
                        code.get(m),
                        Some(Instr::Mov {
                            src: crate::ir::Operand::Imm(_),
                            ..
                        })
                    ),
                    "elect site P{}:{}: no result `mov` at {m}",
                    s.thread,
                    s.pc
                );
            }
        }
        let props = std::iter::once(("condition", &self.condition.prop))
            .chain(self.filter.iter().map(|f| ("filter", f)));
        for (what, prop) in props {
            ensure!(
                prop.depth() <= MAX_PROP_DEPTH,
                "the {what} is {} levels deep (at most {MAX_PROP_DEPTH})",
                prop.depth()
            );
            for term in prop.terms() {
                self.check_term(term, what)?;
            }
        }
        for &term in &self.shown {
            ensure!(
                !matches!(term, Term::Const(_)),
                "`locations` lists a constant"
            );
            self.check_term(term, "`locations` clause")?;
        }
        Ok(())
    }

    fn check_term(&self, term: Term, what: &str) -> Result<(), IrError> {
        match term {
            Term::Reg { thread, reg } => ensure!(
                thread < self.threads.len() && reg < self.threads[thread].regs.len(),
                "the {what} names a missing register"
            ),
            Term::Loc(l) => ensure!(
                l < self.locations.len(),
                "the {what} names a missing location"
            ),
            Term::Const(_) => {}
        }
        Ok(())
    }
}
