//! The shared harness: asynchronous-proxy, mbarrier and cluster-barrier
//! instructions, and the kernel of a test with shared memory.
//!
//! Each instruction is still one `asm volatile` with the test's semantics,
//! scope and state spaces (`docs/hardware.md`, "The shared harness"). What
//! the hardware forces on a litmus test, and nothing else, differs from the
//! litmus text: a bulk copy moves the location's 16-byte cell (so byte counts
//! on its mbarrier are scaled, [`super::async_plan::MbarPlan::scale`]), and
//! a wait that names phase 0 by number is the parity wait of phase 0 (the
//! plan checks that at most one phase can complete).
//!
//! The kernel differs from the global-memory one in that no thread leaves
//! early: every thread of a block (of a cluster, with a cluster launch)
//! takes part in the harness's barriers — after the shared cells are
//! initialised, and after the test, before the harness drains the
//! mbarriers that asynchronous operations complete on and gathers the final
//! values of the shared locations.

use std::fmt::Write as _;

use super::async_plan::{Arg, ArgForm, CELL_BYTES, WORD_BYTES};
use super::generate::{constraint, lit, memory_arg, operand, param, reg, rmw_type};
use super::plan::Plan;
use super::role_function;
use crate::ir::{
    AsyncKind, AsyncSrc, Completion, Instr, MbarOp, Operand, Program, Sem, SpaceQual, Thread,
    WaitPhase, mbar,
};

/// One `asm volatile` statement.
fn asm(text: &str, outputs: &str, inputs: &[String]) -> String {
    let colons = if outputs.is_empty() {
        "::".to_string()
    } else {
        format!(": {outputs} :")
    };
    format!(
        "  asm volatile(\"{text}\" {colons} {} : \"memory\");\n",
        inputs.join(", ")
    )
}

fn input(a: &Arg) -> String {
    format!("\"{}\"({})", constraint(a), param(a))
}

/// `.shared::cta`, `.global`, …: a state space as the test wrote it.
fn space(q: SpaceQual) -> String {
    format!(".{}", q.as_str())
}

/// The state space of an mbarrier operand as written (none: generic addressing).
fn bar_space(q: Option<SpaceQual>) -> String {
    q.map_or(String::new(), space)
}

/// An immediate operand (the plan refuses registers where the harness needs values).
fn imm(o: &Option<Operand>) -> crate::ir::Value {
    match o {
        Some(Operand::Imm(v)) => *v,
        _ => 1,
    }
}

/// The C++ statements of an asynchronous, mbarrier or cluster-barrier instruction.
pub(super) fn instr(p: &Program, pl: &Plan, th: &Thread, i: &Instr, ops: &[Arg]) -> String {
    let scale = |addr: usize| -> crate::ir::Value {
        let loc = p.addresses[addr].loc;
        pl.shared
            .as_ref()
            .and_then(|sh| sh.mbarrier(loc))
            .map_or(1, |m| m.scale)
    };
    match i {
        Instr::AsyncCopy {
            kind,
            dst_space,
            src,
            src_space,
            completion,
            ..
        } => {
            let done = match completion {
                Completion::Mbarrier(_) => ".mbarrier::complete_tx::bytes",
                Completion::BulkGroup => ".bulk_group",
                Completion::AsyncGroup => "",
            };
            let bar = if matches!(completion, Completion::Mbarrier(_)) {
                ", [%2]"
            } else {
                ""
            };
            let dsp = space(*dst_space);
            let ssp = src_space.map_or(String::new(), space);
            let mut inputs: Vec<String> = vec![input(&ops[0])];
            match kind {
                AsyncKind::Bulk => {
                    inputs.extend(ops[1..].iter().map(input));
                    asm(
                        &format!("cp.async.bulk{dsp}{ssp}{done} [%0], [%1], {CELL_BYTES}{bar};"),
                        "",
                        &inputs,
                    )
                }
                AsyncKind::ReduceBulk(op) => {
                    inputs.extend(ops[1..].iter().map(input));
                    asm(
                        &format!(
                            "cp.reduce.async.bulk{dsp}{ssp}{done}.{}.{} [%0], [%1], {CELL_BYTES}{bar};",
                            op.as_str(),
                            rmw_type(*op)
                        ),
                        "",
                        &inputs,
                    )
                }
                AsyncKind::NonBulk => {
                    inputs.extend(ops[1..].iter().map(input));
                    asm(
                        &format!("cp.async.ca{dsp}{ssp} [%0], [%1], {WORD_BYTES};"),
                        "",
                        &inputs,
                    )
                }
                AsyncKind::Store | AsyncKind::Reduce(_) => {
                    let AsyncSrc::Value(v) = src else {
                        unreachable!("st.async and red.async store a value")
                    };
                    inputs.push(format!("\"r\"({})", operand(v)));
                    inputs.extend(ops[1..].iter().map(input));
                    let text = match kind {
                        AsyncKind::Store => {
                            format!("st.async{dsp}{done}.b32 [%0], %1, [%2];")
                        }
                        AsyncKind::Reduce(op) => format!(
                            "red.async.relaxed.cluster{dsp}{done}.{}.{} [%0], %1, [%2];",
                            op.as_str(),
                            rmw_type(*op)
                        ),
                        _ => unreachable!(),
                    };
                    asm(&text, "", &inputs)
                }
            }
        }
        Instr::CommitGroup { bulk } => {
            let what = if *bulk { "cp.async.bulk" } else { "cp.async" };
            format!("  asm volatile(\"{what}.commit_group;\" ::: \"memory\");\n")
        }
        Instr::WaitGroup {
            bulk,
            pending,
            read,
            all,
        } => {
            let text = if *all {
                "cp.async.wait_all;".to_string()
            } else if *bulk {
                format!(
                    "cp.async.bulk.wait_group{} {pending};",
                    if *read { ".read" } else { "" }
                )
            } else {
                format!("cp.async.wait_group {pending};")
            };
            format!("  asm volatile(\"{text}\" ::: \"memory\");\n")
        }
        Instr::AsyncMbarArrive { noinc, .. } => asm(
            &format!(
                "cp.async.mbarrier.arrive{}.shared::cta.b64 [%0];",
                if *noinc { ".noinc" } else { "" }
            ),
            "",
            &[input(&ops[0])],
        ),
        Instr::Mbar {
            op,
            addr,
            arg,
            sem,
            scope,
            space: sp,
            ..
        } => {
            let sp = bar_space(*sp);
            let bytes = imm(arg) * scale(*addr);
            let text = match op {
                MbarOp::Init => format!("mbarrier.init{sp}.b64 [%0], {};", imm(arg)),
                MbarOp::Arrive => {
                    let count = match arg {
                        Some(Operand::Imm(n)) => format!(", {n}"),
                        _ => String::new(),
                    };
                    format!("mbarrier.arrive.{sem}.{scope}{sp}.b64 _, [%0]{count};")
                }
                MbarOp::ArriveExpectTx => {
                    format!("mbarrier.arrive.expect_tx.{sem}.{scope}{sp}.b64 _, [%0], {bytes};")
                }
                MbarOp::ExpectTx => {
                    format!("mbarrier.expect_tx.{sem}.{scope}{sp}.b64 [%0], {bytes};")
                }
                MbarOp::CompleteTx => {
                    format!("mbarrier.complete_tx.{sem}.{scope}{sp}.b64 [%0], {bytes};")
                }
            };
            asm(&text, "", &[input(&ops[0])])
        }
        Instr::MbarWait {
            dst,
            test,
            phase,
            sem,
            scope,
            space: sp,
            suspend,
            ..
        } => {
            // `try_wait`'s suspend-time hint, as written (the plan refuses a
            // register one).
            let hint = match suspend {
                Some(Operand::Imm(h)) => format!(", {h}"),
                _ => String::new(),
            };
            // The parity of the phase asked about: as written for the parity
            // form; for a phase number, that phase's parity (the plan allows
            // only phase 0 of a barrier that completes at most one phase).
            let parity = match phase {
                WaitPhase::Parity(Operand::Imm(k)) => *k,
                WaitPhase::State(Operand::Imm(t)) => mbar::phase(*t) & 1,
                _ => unreachable!("refused by the plan"),
            };
            let w = if *test { "test_wait" } else { "try_wait" };
            let d = dst.map_or_else(|| "sink".to_string(), reg);
            let mut out = asm(
                &format!(
                    "{{\\n\\t.reg .pred p;\\n\\tmbarrier.{w}.parity.{sem}.{scope}{}.b64 p, [%1], {parity}{hint};\\n\\tselp.u32 %0, 1, 0, p;\\n\\t}}",
                    bar_space(*sp)
                ),
                &format!("\"=r\"({d})"),
                &[input(&ops[0])],
            );
            if dst.is_some() {
                let _ = writeln!(out, "  sink ^= {d};");
            }
            out
        }
        Instr::ClusterBarrier {
            arrive,
            sem,
            aligned,
        } => {
            let what = if *arrive { "arrive" } else { "wait" };
            let sem = match sem {
                Sem::Relaxed => ".relaxed",
                Sem::Release => ".release",
                Sem::Acquire => ".acquire",
                _ => "",
            };
            let al = if *aligned { ".aligned" } else { "" };
            format!("  asm volatile(\"barrier.cluster.{what}{sem}{al};\" ::: \"memory\");\n")
        }
        Instr::ProxyFenceUni { .. } => {
            // The canonical text is the PTX instruction (the plan refuses the
            // tensormap acquire form that names an address).
            format!(
                "  asm volatile(\"{};\" ::: \"memory\");\n",
                crate::litmus::print::instr(p, th, i)
            )
        }
        _ => unreachable!("not an asynchronous-proxy instruction"),
    }
}

/// The owner role of a shared location, from the shared plan.
fn owner(pl: &Plan, loc: usize) -> (usize, usize) {
    let sh = pl.shared.as_ref().expect("a shared plan");
    sh.data
        .iter()
        .map(|d| (d.loc, d.role, d.rank))
        .chain(sh.mbarriers.iter().map(|m| (m.loc, m.role, m.rank)))
        .find(|(l, _, _)| *l == loc)
        .map(|(_, role, rank)| (role, rank))
        .expect("every shared location has an owner")
}

/// The kernel's expression for a role function's argument.
fn arg_expr(p: &Program, pl: &Plan, a: &Arg) -> String {
    if a.form == ArgForm::Memory {
        return memory_arg(p, pl, a.addr);
    }
    let (role, rank) = owner(pl, p.addresses[a.addr].loc);
    match a.form {
        ArgForm::SharedGeneric => format!("ptxmc::smem_generic(L, {rank}u, li)"),
        ArgForm::SharedCta => format!("ptxmc::smem_cta(L, {rank}u, li)"),
        _ => {
            // The owner's hardware rank in the cluster: its position in the
            // test cluster, undone from the launch's rank rotation.
            let d = pl.cluster_dim;
            let pos = pl
                .clusters
                .as_ref()
                .and_then(|cl| cl.iter().find_map(|m| m.iter().position(|&r| r == role)))
                .unwrap_or(0);
            format!("ptxmc::smem_cluster(L, {rank}u, li, ({pos}u + {d}u - L.rank_rot) % {d}u)")
        }
    }
}

/// The kernel of a test in the shared harness.
pub(super) fn kernel(s: &mut String, id: &str, p: &Program, pl: &Plan) {
    let sh = pl.shared.as_ref().expect("a shared plan");
    let warps = pl.warps;
    let cluster = pl.uses_clusters();
    let sync = if cluster {
        "ptxmc::sync_cluster();"
    } else {
        "__syncthreads();"
    };
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void {id}_kernel(const __grid_constant__ ptxmc::Launch L) {{\n  // Shared harness: no thread leaves early, every one takes part in the\n  // harness's {} barriers.\n  const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;",
        if cluster { "cluster" } else { "block" }
    );
    match &pl.clusters {
        None => {
            let _ = writeln!(
                s,
                "  const unsigned slot = (unsigned)(((unsigned long long)L.unit_a * blockIdx.x + L.unit_c) % L.nunits);\n  const unsigned group = slot % L.ngroups;\n  const int role = (int)(slot / L.ngroups);"
            );
        }
        Some(cl) => {
            let d = pl.cluster_dim;
            let _ = writeln!(
                s,
                "  const unsigned slot = (unsigned)(((unsigned long long)L.unit_a * (blockIdx.x / {d}u) + L.unit_c) % L.nunits);\n  const unsigned group = slot % L.ngroups;\n  const unsigned unit = slot / L.ngroups;\n  const unsigned rank = (blockIdx.x % {d}u + L.rank_rot) % {d}u;\n  int role = -1;\n  switch (unit * {d}u + rank) {{"
            );
            for (c, members) in cl.iter().enumerate() {
                for (r, role) in members.iter().enumerate() {
                    let _ = writeln!(s, "    case {}: role = {role}; break;", c * d + r);
                }
            }
            let _ = writeln!(s, "    default: break;\n  }}");
        }
    }
    let _ = writeln!(
        s,
        "  int t = -1;\n  if (warp < {warps}u) {{\n    switch (role * {warps} + (int)warp) {{"
    );
    for (c, cta) in pl.ctas.iter().enumerate() {
        for (w, t) in cta.threads.iter().enumerate() {
            let _ = writeln!(s, "      case {}: t = {t}; break;", c * warps + w);
        }
    }
    let _ = writeln!(s, "      default: break;\n    }}\n  }}");

    // Initial state of the shared cells, per role.
    let _ = writeln!(
        s,
        "  // Before the test: the shared cells of the block's CTA role, one instance\n  // per lane of warp 0, published to the async proxy{} before anyone starts.\n  if (warp == 0) {{\n    switch (role) {{",
        if cluster { " and the cluster" } else { "" }
    );
    for c in 0..pl.ctas.len() {
        let mut body = String::new();
        for d in sh.data.iter().filter(|d| d.role == c) {
            let _ = writeln!(
                body,
                "        ptxmc::init_word(L, {}u, lane, {});  // {}",
                d.rank,
                lit(p.locations[d.loc].init),
                p.locations[d.loc].name
            );
        }
        for m in sh.mbarriers.iter().filter(|m| m.role == c) {
            let name = &p.locations[m.loc].name;
            match m.declared {
                Some(n) => {
                    let _ = writeln!(
                        body,
                        "        ptxmc::init_mbarrier(L, {}u, lane, {n}u);  // {name}",
                        m.rank
                    );
                }
                None => {
                    let _ = writeln!(
                        body,
                        "        ptxmc::clear_cell(L, {}u, lane);  // {name} (the test initialises it)",
                        m.rank
                    );
                }
            }
        }
        if !body.is_empty() {
            let _ = write!(s, "      case {c}:\n{body}        break;\n");
        }
    }
    let _ = writeln!(
        s,
        "      default: break;\n    }}\n    ptxmc::publish_shared_init({cluster});\n  }}\n  {sync}"
    );

    // The test.
    // The instance's index in the block (its shared cells' position).
    let local = if pl
        .threads
        .iter()
        .flat_map(|tp| &tp.args)
        .any(|a| a.form != ArgForm::Memory)
    {
        "\n    const unsigned li = inst & 31u;"
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "  if (t >= 0) {{\n    const unsigned inst = ptxmc::lane_instance(L, group, (unsigned)t, lane);{local}\n    if (L.barrier_start) ptxmc::start_barrier(L, group, {}u);\n    unsigned* res = L.res + (size_t)inst * {}u;\n    switch (t) {{",
        p.threads.len(),
        pl.res_stride
    );
    for (t, tp) in pl.threads.iter().enumerate() {
        let mut args: Vec<String> = tp.args.iter().map(|a| arg_expr(p, pl, a)).collect();
        args.push(format!("res + {}", tp.res_offset));
        let mut after = String::new();
        if sh.cp_async[t] {
            after.push_str(" ptxmc::complete_cp_async();");
        }
        if sh.bulk_groups[t] {
            after.push_str(" ptxmc::complete_bulk_groups();");
        }
        let _ = writeln!(
            s,
            "      case {t}: {}({});{after} break;",
            role_function(id, t),
            args.join(", ")
        );
    }
    // Idle threads (stress warps, warps of a CTA with fewer threads, blocks
    // of a cluster rank the test does not use) join the test's
    // barrier.cluster phases of their cluster.
    let phases = if sh.cluster_phases.iter().any(|&n| n > 0) {
        let _ = writeln!(
            s,
            "      default: break;\n    }}\n  }} else {{\n    unsigned phases = 0u;\n    switch (unit) {{"
        );
        for (u, n) in sh.cluster_phases.iter().enumerate() {
            if *n > 0 {
                let _ = writeln!(s, "      case {u}: phases = {n}u; break;");
            }
        }
        let _ = writeln!(s, "      default: break;\n    }}");
        "phases"
    } else {
        let _ = writeln!(s, "      default: break;\n    }}\n  }} else {{");
        "0u"
    };
    let _ = writeln!(s, "    ptxmc::idle(L, warp >= {warps}u, {phases});\n  }}");

    // After the test: drains, final values, status.
    let _ = writeln!(
        s,
        "  // After the test: every litmus thread has finished (its registers are in\n  // its results) and its own asynchronous operations have completed.\n  {sync}\n  if (warp == 0 && role >= 0) {{\n    const unsigned inst = group * 32u + lane;\n    unsigned ok = 1u;\n    switch (role) {{"
    );
    for c in 0..pl.ctas.len() {
        let mut body = String::new();
        for m in sh.mbarriers.iter().filter(|m| m.role == c) {
            if let Some(d) = m.drain {
                let _ = writeln!(
                    body,
                    "        ok &= ptxmc::drain(L, {}u, lane, {}u, {}u);  // {}",
                    m.rank, d.expect_tx, d.arrivals, p.locations[m.loc].name
                );
            }
        }
        for d in sh.data.iter().filter(|d| d.role == c) {
            let _ = writeln!(
                body,
                "        ptxmc::gather(L, {}u, lane, inst, {}u);  // {}",
                d.rank, d.loc, p.locations[d.loc].name
            );
        }
        if !body.is_empty() {
            let _ = write!(s, "      case {c}:\n{body}        break;\n");
        }
    }
    let _ = writeln!(
        s,
        "      default: break;\n    }}\n    L.res[(size_t)inst * {}u + {}u + (unsigned)role] = ok ? 1u : 2u;\n  }}\n  {sync}",
        pl.res_stride, sh.status_offset
    );
    let mut inval = String::new();
    for c in 0..pl.ctas.len() {
        let mut body = String::new();
        for m in sh.mbarriers.iter().filter(|m| m.role == c && m.initialised) {
            let _ = writeln!(
                body,
                "        ptxmc::inval_mbarrier(L, {}u, lane);  // {}",
                m.rank, p.locations[m.loc].name
            );
        }
        if !body.is_empty() {
            let _ = write!(inval, "      case {c}:\n{body}        break;\n");
        }
    }
    if !inval.is_empty() {
        let _ = writeln!(
            s,
            "  // The block's shared memory is reused by later blocks: invalidate its mbarriers.\n  if (warp == 0) {{\n    switch (role) {{\n{inval}      default: break;\n    }}\n  }}"
        );
    }
    let _ = writeln!(s, "}}\n");
}
