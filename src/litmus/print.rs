//! Printing the IR as canonical litmus text (the Dat3M dialect with ptxmc's
//! extensions). The output parses back to an identical [`Program`]: every
//! register is declared in the init block in IR order, labels get rows of
//! their own, and propositions are parenthesised to reproduce the tree.

use std::fmt::Write;

use crate::ir::{
    Access, AsyncKind, AsyncSrc, BarrierKind, CmpOp, Completion, Instr, LocKind, MbarOp, Operand,
    Program, Prop, Proxy, Restrict, Sem, SignalKind, Space, SpaceQual, Term, Thread, UniProxy,
    WaitPhase, mbar,
};

/// The instruction table of a litmus test as generators write it: the
/// thread `headers` (`P0@cta 0,cluster 0,gpu 0`), then one row per line of
/// the longest column, shorter columns padded with empty cells; no
/// alignment (the canonical printer, [`to_litmus`], aligns its own).
pub fn table(headers: &[String], columns: &[Vec<String>]) -> String {
    let mut s = format!(" {} ;\n", headers.join(" | "));
    let depth = columns.iter().map(Vec::len).max().unwrap_or(0);
    for k in 0..depth {
        let row: Vec<&str> = columns
            .iter()
            .map(|c| c.get(k).map_or("", String::as_str))
            .collect();
        writeln!(s, " {} ;", row.join(" | ")).unwrap();
    }
    s
}

/// The canonical text of a program.
pub fn to_litmus(p: &Program) -> String {
    let mut out = String::new();
    writeln!(out, "PTX {}", p.name).unwrap();
    for d in &p.docs {
        // Parsers never make a doc string with `"`; a hand-built one is
        // written with `'` rather than as text that reads differently.
        writeln!(out, "\"{}\"", d.replace('"', "'")).unwrap();
    }
    out.push_str("{\n");
    for a in &p.addresses {
        let loc = &p.locations[a.loc];
        match (a.alias_of, loc.space, loc.kind) {
            (None, _, LocKind::Synthetic) => {}
            (None, Space::Shared { gpu, cta }, LocKind::Mbarrier) => {
                let count = if loc.init == 0 {
                    String::new()
                } else {
                    format!(" = {}", mbar::expected(loc.init))
                };
                writeln!(out, "{} @ mbarrier cta {cta},gpu {gpu}{count};", a.name).unwrap()
            }
            (None, Space::Shared { gpu, cta }, LocKind::TensorMemory) => {
                writeln!(out, "{} @ tmem cta {cta},gpu {gpu} = {};", a.name, loc.init).unwrap()
            }
            (None, Space::Shared { gpu, cta }, _) => writeln!(
                out,
                "{} @ shared cta {cta},gpu {gpu} = {};",
                a.name, loc.init
            )
            .unwrap(),
            (None, _, _) => writeln!(out, "{}={};", a.name, loc.init).unwrap(),
            (Some(t), _, _) => writeln!(
                out,
                "{} @ {} aliases {};",
                a.name,
                a.kind.as_str(),
                p.addresses[t].name
            )
            .unwrap(),
        }
    }
    for t in &p.threads {
        if !t.regs.is_empty() {
            let regs: Vec<String> = t
                .regs
                .iter()
                .map(|r| format!("{}:{}={};", t.name, r.name, r.init))
                .collect();
            writeln!(out, "{}", regs.join(" ")).unwrap();
        }
    }
    out.push_str("}\n");

    let columns: Vec<Vec<String>> = p.threads.iter().map(|t| column(p, t)).collect();
    let headers: Vec<String> = p
        .threads
        .iter()
        .map(|t| {
            let pl = t.placement;
            let warp = pl.warp.map(|w| format!(",warp {w}")).unwrap_or_default();
            let grid = match pl.grid {
                0 => String::new(),
                g => format!(",grid {g}"),
            };
            format!(
                "{}@cta {},cluster {}{warp}{grid},gpu {}",
                t.name, pl.cta, pl.cluster, pl.gpu
            )
        })
        .collect();
    // Columns are aligned up to a width; a longer cell (a very long name)
    // is written as it is rather than widening every row of its column,
    // so the text stays linear in the size of the program.
    const ALIGN: usize = 100;
    let widths: Vec<usize> = headers
        .iter()
        .zip(&columns)
        .map(|(h, c)| {
            c.iter()
                .map(String::len)
                .chain([h.len()])
                .filter(|&w| w <= ALIGN)
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Padded by hand: `format!`'s width is limited to 16 bits and a cell may
    // be longer (a long register name).
    let row = |cells: Vec<&str>| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.len()))))
            .collect();
        format!(" {} ;\n", padded.join(" | "))
    };
    out.push_str(&row(headers.iter().map(String::as_str).collect()));
    let nrows = columns.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..nrows {
        out.push_str(&row(columns
            .iter()
            .map(|c| c.get(i).map_or("", String::as_str))
            .collect()));
    }
    if !p.shown.is_empty() {
        let items: Vec<String> = p.shown.iter().map(|t| format!("{};", term(p, t))).collect();
        writeln!(out, "locations [{}]", items.join(" ")).unwrap();
    }
    if let Some(f) = &p.filter {
        writeln!(out, "filter ({})", prop(p, f)).unwrap();
    }
    writeln!(
        out,
        "{} ({})",
        p.condition.quantifier.keyword(),
        prop(p, &p.condition.prop)
    )
    .unwrap();
    if let Some(e) = &p.expectation {
        writeln!(out, "expect {} as {}", e.kind.as_str(), e.name).unwrap();
    }
    out
}

/// The label a branch to `target` names: the thread's first label there,
/// else one made up (`L7` for instruction 7; with `_`s added while the
/// name is taken), which [`column`] then places: code lowered from a kernel
/// has branches but no labels.
fn label_at(t: &Thread, target: usize) -> String {
    // Labels are sorted by position: the first one at the target.
    let first = t.labels.partition_point(|l| l.at < target);
    if let Some(l) = t.labels.get(first).filter(|l| l.at == target) {
        return l.name.clone();
    }
    let mut name = format!("L{target}");
    while t.labels.iter().any(|l| l.name == name) {
        name.push('_');
    }
    name
}

/// The cells of one thread: labels on rows of their own, then instructions.
/// Labels are sorted by position (an IR invariant), so one pass places them;
/// a branch target without a label gets the one [`label_at`] makes up.
fn column(p: &Program, t: &Thread) -> Vec<String> {
    let mut cells = Vec::new();
    let made_up: std::collections::BTreeSet<usize> = t
        .code
        .iter()
        .filter_map(|i| match i {
            Instr::Branch { target, .. } if !t.labels.iter().any(|l| l.at == *target) => {
                Some(*target)
            }
            _ => None,
        })
        .collect();
    let mut labels = t.labels.iter().peekable();
    let me = p.threads.iter().position(|u| std::ptr::eq(u, t));
    // `elect.sync d, p, mask` is its barrier and the `mov`s of its results.
    let mut results: Vec<usize> = Vec::new();
    for pc in 0..=t.code.len() {
        while let Some(l) = labels.next_if(|l| l.at <= pc) {
            cells.push(format!("{}:", l.name));
        }
        if made_up.contains(&pc) {
            cells.push(format!("{}:", label_at(t, pc)));
        }
        if results.contains(&pc) {
            continue;
        }
        if let Some(Instr::Tensor {
            op: crate::ir::tensor_core::TcOp::Result { .. },
        }) = t.code.get(pc)
        {
            // Part of the wait before it, which the parser expands again.
            continue;
        }
        let site = p.elects.iter().find(|s| Some(s.thread) == me && s.pc == pc);
        if let (Some(s), Some(Instr::Barrier { id, .. })) = (site, t.code.get(pc)) {
            let (d, pr) = s.movs();
            let reg = |m: Option<usize>| match m.and_then(|m| t.code.get(m)) {
                Some(Instr::Mov { dst, .. }) => t.regs[*dst].name.clone(),
                _ => "_".to_string(),
            };
            cells.push(format!(
                "elect.sync {}, {}, {}",
                reg(d),
                reg(pr),
                operand(t, &id[0])
            ));
            results.extend(d.into_iter().chain(pr));
            continue;
        }
        // `activemask.b32 d` is its rendezvous and the `mov` of its result.
        if let (
            Some(Instr::Barrier {
                kind: BarrierKind::ActiveMask,
                ..
            }),
            Some(Instr::Mov { dst, .. }),
        ) = (t.code.get(pc), t.code.get(pc + 1))
        {
            cells.push(format!("activemask.b32 {}", t.regs[*dst].name));
            results.push(pc + 1);
            continue;
        }
        if let Some(i) = t.code.get(pc) {
            cells.push(instr(p, t, i));
        }
    }
    cells
}

fn operand(t: &Thread, o: &Operand) -> String {
    match o {
        Operand::Reg(r) => t.regs[*r].name.clone(),
        Operand::Imm(v) => v.to_string(),
    }
}

fn sem_scope(a: &Access) -> String {
    let base = match (a.sem, a.scope) {
        (Sem::Volatile, _) => ".volatile".to_string(),
        (s, Some(sc)) => format!(".{s}.{sc}"),
        (s, None) => format!(".{s}"),
    };
    format!("{base}{}", space(a.space))
}

/// The type suffix of an access (`.u8`), empty when none was written.
fn ty(a: &Access) -> String {
    a.ty.map_or(String::new(), |t| format!(".{t}"))
}

fn space(q: Option<SpaceQual>) -> String {
    q.map_or(String::new(), |q| format!(".{}", q.as_str()))
}

fn restriction(r: Restrict) -> &'static str {
    match r {
        Restrict::SharedCta => "sync_restrict::shared::cta",
        Restrict::SharedCluster => "sync_restrict::shared::cluster",
        Restrict::MbarrierInit => "mbarrier_init",
    }
}

/// The canonical text of one instruction of thread `t`.
pub fn instr(p: &Program, t: &Thread, i: &Instr) -> String {
    let addr = |a: &Access| p.addresses[a.addr].name.clone();
    match i {
        Instr::Load { dst, access } => {
            let op = match access.proxy {
                Proxy::Generic => "ld",
                Proxy::Texture => "tld",
                Proxy::Surface => "suld",
                Proxy::Constant => "cold",
                Proxy::Async => "ld.async",
            };
            format!(
                "{op}{}{} {}, {}",
                sem_scope(access),
                ty(access),
                t.regs[*dst].name,
                addr(access)
            )
        }
        Instr::Store { src, access } => {
            let op = if access.proxy == Proxy::Surface {
                "sust"
            } else {
                "st"
            };
            format!(
                "{op}{}{} {}, {}",
                sem_scope(access),
                ty(access),
                addr(access),
                operand(t, src)
            )
        }
        Instr::Rmw {
            dst,
            op,
            args,
            access,
        } => {
            let surface = access.proxy == Proxy::Surface;
            let mn = match (dst.is_some(), surface) {
                (true, false) => "atom",
                (true, true) => "suatom",
                (false, false) => "red",
                (false, true) => "sured",
            };
            let mut ops = Vec::new();
            if let Some(d) = dst {
                ops.push(t.regs[*d].name.clone());
            }
            ops.push(addr(access));
            ops.extend(args.iter().map(|a| operand(t, a)));
            format!(
                "{mn}{}.{}{} {}",
                sem_scope(access),
                op.as_str(),
                ty(access),
                ops.join(", ")
            )
        }
        Instr::Fence {
            sem,
            scope,
            restrict: None,
        } => format!("fence.{}.{}", sem.as_str(), scope),
        Instr::Fence {
            restrict: Some(Restrict::MbarrierInit),
            sem,
            scope,
        } => {
            format!("fence.mbarrier_init.{}.{scope}", sem.as_str())
        }
        Instr::Fence {
            sem,
            scope,
            restrict: Some(r),
        } => {
            format!("fence.{}.{}.{scope}", sem.as_str(), restriction(*r))
        }
        Instr::ProxyFenceUni {
            to,
            acquire,
            scope,
            restrict,
            operand,
        } => {
            let to = match to {
                UniProxy::Async => "async::generic",
                UniProxy::Tensormap => "tensormap::generic",
            };
            let sem = if *acquire { "acquire" } else { "release" };
            let re = restrict.map_or(String::new(), |r| format!(".{}", restriction(r)));
            let ops = operand.map_or(String::new(), |(a, n)| {
                format!(" [{}], {n}", p.addresses[a].name)
            });
            format!("fence.proxy.{to}.{sem}{re}.{scope}{ops}")
        }
        Instr::AsyncCopy {
            kind,
            dst,
            dst_space,
            src,
            src_space,
            size,
            completion,
            joined,
        } => {
            let name = |a: usize| format!("[{}]", p.addresses[a].name);
            // ptxmc's `.joined` (`ir::copies`): only bulk copies carry it.
            let joined = if *joined { ".joined" } else { "" };
            let src_text = match src {
                AsyncSrc::Addr(a) => name(*a),
                AsyncSrc::Value(v) => operand(t, v),
            };
            let done = match completion {
                Completion::Mbarrier(b) => (
                    ".mbarrier::complete_tx::bytes".to_string(),
                    format!(", {}", name(*b)),
                ),
                Completion::BulkGroup => (".bulk_group".to_string(), String::new()),
                Completion::AsyncGroup => (String::new(), String::new()),
            };
            let spaces = format!("{}{}", space(Some(*dst_space)), space(*src_space));
            match kind {
                AsyncKind::Bulk => format!(
                    "cp.async.bulk{spaces}{}{joined} {}, {src_text}, {size}{}",
                    done.0,
                    name(*dst),
                    done.1
                ),
                AsyncKind::ReduceBulk(op) => {
                    format!(
                        "cp.reduce.async.bulk{spaces}{}.{}.u32{joined} {}, {src_text}, {size}{}",
                        done.0,
                        op.as_str(),
                        name(*dst),
                        done.1
                    )
                }
                AsyncKind::NonBulk => {
                    format!("cp.async.ca{spaces} {}, {src_text}, {size}", name(*dst))
                }
                AsyncKind::Store => format!(
                    "st.async{}{}.u32 {}, {src_text}{}",
                    space(Some(*dst_space)),
                    done.0,
                    name(*dst),
                    done.1
                ),
                AsyncKind::Reduce(op) => format!(
                    "red.async.relaxed.cluster{}{}.{}.u32 {}, {src_text}{}",
                    space(Some(*dst_space)),
                    done.0,
                    op.as_str(),
                    name(*dst),
                    done.1
                ),
            }
        }
        Instr::CommitGroup { bulk: true } => "cp.async.bulk.commit_group".to_string(),
        Instr::CommitGroup { bulk: false } => "cp.async.commit_group".to_string(),
        Instr::WaitGroup { all: true, .. } => "cp.async.wait_all".to_string(),
        Instr::WaitGroup {
            bulk: true,
            pending,
            read,
            ..
        } => {
            format!(
                "cp.async.bulk.wait_group{} {pending}",
                if *read { ".read" } else { "" }
            )
        }
        Instr::WaitGroup {
            bulk: false,
            pending,
            ..
        } => format!("cp.async.wait_group {pending}"),
        Instr::AsyncMbarArrive { addr, noinc } => format!(
            "cp.async.mbarrier.arrive{}.shared::cta.b64 [{}]",
            if *noinc { ".noinc" } else { "" },
            p.addresses[*addr].name
        ),
        Instr::Mbar {
            op,
            dst,
            addr,
            arg,
            sem,
            scope,
            space: sp,
        } => {
            let bar = format!("[{}]", p.addresses[*addr].name);
            let arg = arg.map_or(String::new(), |a| format!(", {}", operand(t, &a)));
            let d = dst.map_or("_".to_string(), |r| t.regs[r].name.clone());
            match op {
                MbarOp::Init => format!("mbarrier.init{}.b64 {bar}{arg}", space(*sp)),
                MbarOp::Arrive => format!(
                    "mbarrier.arrive.{sem}.{scope}{}.b64 {d}, {bar}{arg}",
                    space(*sp)
                ),
                MbarOp::ArriveExpectTx => format!(
                    "mbarrier.arrive.expect_tx.{sem}.{scope}{}.b64 {d}, {bar}{arg}",
                    space(*sp)
                ),
                MbarOp::ExpectTx => format!(
                    "mbarrier.expect_tx.{sem}.{scope}{}.b64 {bar}{arg}",
                    space(*sp)
                ),
                MbarOp::CompleteTx => format!(
                    "mbarrier.complete_tx.{sem}.{scope}{}.b64 {bar}{arg}",
                    space(*sp)
                ),
            }
        }
        Instr::MbarWait {
            dst,
            addr,
            test,
            phase,
            sem,
            scope,
            space: sp,
            suspend,
        } => {
            let w = if *test { "test_wait" } else { "try_wait" };
            let hint = suspend
                .as_ref()
                .map_or(String::new(), |h| format!(", {}", operand(t, h)));
            let (par, op) = match phase {
                WaitPhase::Parity(o) => (".parity", operand(t, o)),
                WaitPhase::State(o) => ("", operand(t, o)),
                WaitPhase::Phase(k) => (".phase", k.to_string()),
            };
            format!(
                "mbarrier.{w}{par}.{sem}.{scope}{}.b64 {}, [{}], {op}{hint}",
                space(*sp),
                dst.map_or("_".to_string(), |r| t.regs[r].name.clone()),
                p.addresses[*addr].name
            )
        }
        Instr::ClusterBarrier {
            arrive,
            sem,
            aligned,
        } => format!(
            "barrier.cluster.{}.{sem}{}",
            if *arrive { "arrive" } else { "wait" },
            if *aligned { ".aligned" } else { "" }
        ),
        Instr::Signal {
            kind: SignalKind::Undefined(crate::ir::UndefinedStep::OutOfBounds),
        } => "undefined.out_of_bounds".into(),
        Instr::Signal { kind } => format!("(signal: {kind:?})"),
        Instr::GridDep { wait } => format!(
            "griddepcontrol.{}",
            if *wait { "wait" } else { "launch_dependents" }
        ),
        Instr::Tensor { op } => super::tcgen::print(p, t, op),
        Instr::Await { from } => {
            let list: Vec<String> = from
                .iter()
                .map(|a| match a.exec {
                    0 => format!("{}:{}", p.threads[a.thread].name, a.pc),
                    k => format!("{}:{}[{k}]", p.threads[a.thread].name, a.pc),
                })
                .collect();
            format!("(await {})", list.join(", "))
        }
        Instr::ProxyFence { kind } => format!("fence.proxy.{}", kind.as_str()),
        Instr::Barrier {
            kind,
            id,
            count,
            aligned,
        } => {
            let k = match kind {
                BarrierKind::Sync => "sync",
                BarrierKind::Arrive => "arrive",
                BarrierKind::WarpSync => {
                    return format!("bar.warp.sync {}", operand(t, &id[0]));
                }
                // Alone (a trace's step): the wait; the results are the
                // `mov`s after it. `column` prints the whole instruction.
                BarrierKind::Elect => {
                    return format!("elect.sync (wait) {}", operand(t, &id[0]));
                }
                // The rendezvous of the lane's block (`ir::activemask`).
                BarrierKind::ActiveMask => {
                    let block = match &id[0] {
                        Operand::Imm(v) => format!("{:#x}", v & 0xffff_ffff),
                        o => operand(t, o),
                    };
                    return format!("activemask.b32 (rendezvous) {block}");
                }
            };
            let mut ops: Vec<String> = id.iter().map(|o| operand(t, o)).collect();
            if let Some(c) = count {
                ops.push(operand(t, c));
            }
            // `bar` is aligned; `barrier` without `.aligned` is not.
            let op = if *aligned { "bar" } else { "barrier" };
            format!("{op}.cta.{k} {}", ops.join(", "))
        }
        Instr::Mov { dst, src } => format!("mov {}, {}", t.regs[*dst].name, operand(t, src)),
        Instr::Arith { op, dst, a, b } => {
            format!(
                "{} {}, {}, {}",
                op.as_str(),
                t.regs[*dst].name,
                operand(t, a),
                operand(t, b)
            )
        }
        Instr::Branch { cond, target } => {
            let label = label_at(t, *target);
            match cond {
                None => format!("goto {label}"),
                Some((c, a, b)) => format!(
                    "{} {}, {}, {label}",
                    c.mnemonic(),
                    operand(t, a),
                    operand(t, b)
                ),
            }
        }
    }
}

/// A term as written in conditions.
pub fn term(p: &Program, t: &Term) -> String {
    match t {
        Term::Reg { thread, reg } => format!(
            "{}:{}",
            p.threads[*thread].name, p.threads[*thread].regs[*reg].name
        ),
        Term::Loc(l) => p.locations[*l].name.clone(),
        Term::Const(v) => v.to_string(),
    }
}

/// A proposition with just the parentheses needed to parse back to the same tree.
pub fn prop(p: &Program, q: &Prop) -> String {
    match q {
        Prop::True => "true".into(),
        Prop::False => "false".into(),
        Prop::Cmp(a, op, b) => {
            let o = match op {
                CmpOp::Eq => "==",
                CmpOp::Ne => "!=",
            };
            format!("{} {o} {}", term(p, a), term(p, b))
        }
        // `~~(...)` rather than `~(~(...))`: the text nests no deeper than
        // the tree, so every proposition the parser accepts prints as text
        // it accepts again (`cond::MAX_NESTING`).
        Prop::Not(x) if matches!(**x, Prop::Not(_)) => format!("~{}", prop(p, x)),
        Prop::Not(x) => format!("~({})", prop(p, x)),
        Prop::And(a, b) => {
            let l = match **a {
                Prop::Or(..) => format!("({})", prop(p, a)),
                _ => prop(p, a),
            };
            let r = match **b {
                Prop::Or(..) | Prop::And(..) => format!("({})", prop(p, b)),
                _ => prop(p, b),
            };
            format!("{l} /\\ {r}")
        }
        Prop::Or(a, b) => {
            let r = match **b {
                Prop::Or(..) => format!("({})", prop(p, b)),
                _ => prop(p, b),
            };
            format!("{} \\/ {r}", prop(p, a))
        }
    }
}
