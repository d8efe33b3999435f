//! The plain-text forms of a stepping session, for `ptxmc step`: the state
//! as boxes of text, the numbered transitions, the reachable outcomes and
//! the answer to "go to outcome". These functions alone own the layout;
//! golden tests (`tests/step.rs`) pin it.

use crate::rel::Bits;
use std::fmt::Write;

use super::picture::{Picture, ThreadBox};
use super::{GoTo, Reachable, Session, Transition};

/// The current state, drawn: threads by CTA, asynchronous operations,
/// memory, barriers; then the final state if the run is over.
pub fn state<S: Bits>(s: &Session<'_, S>, pic: &Picture) -> String {
    let m = s.machine();
    let mut out = String::new();
    let n = s.steps().len();
    writeln!(
        out,
        "== {} after {n} step{} ==",
        m.program.name,
        if n == 1 { "" } else { "s" }
    )
    .unwrap();
    for c in &pic.ctas {
        writeln!(out, "GPU {} cluster {} CTA {}", c.gpu, c.cluster, c.cta).unwrap();
        for t in &c.threads {
            thread(&mut out, t);
        }
    }
    if !pic.asyncs.is_empty() {
        writeln!(out, "Asynchronous operations").unwrap();
        for t in &pic.asyncs {
            thread(&mut out, t);
        }
    }
    writeln!(
        out,
        "Memory (versions at the L2 coherence point, oldest first)"
    )
    .unwrap();
    for loc in &pic.memory {
        let kind = if loc.kind == "data" {
            String::new()
        } else {
            format!(" ({})", loc.kind)
        };
        writeln!(out, "  {}{kind}: {}", loc.name, loc.versions.join("  <  ")).unwrap();
        if loc.versions.len() > 1 && loc.coherence.contains("unordered") {
            writeln!(out, "    coherence {}", loc.coherence).unwrap();
        }
    }
    for b in &pic.barriers {
        writeln!(out, "Barrier: {b}").unwrap();
    }
    // An `activemask` choice picks which lanes meet, not a leader.
    for (f, l) in s.leaders().iter().enumerate() {
        let label = match s.choice_kind(f) {
            "activemask" => "Lanes together",
            _ => "Leader",
        };
        writeln!(out, "{label}: {l}").unwrap();
    }
    if s.picking_leaders() {
        let why = match s.choice_kind(s.steps().len()) {
            "activemask" => {
                "Pick how the lanes meet first: which lanes of a warp execute `activemask` \
                 together is the scheduler's choice, and every partition of them is a run \
                 (docs/warps.md)"
            }
            _ => {
                "Pick a leader first: `elect.sync` elects the same lane of a warp for a mask at \
                 every execution, a lane the PTX ISA leaves unspecified (docs/warps.md)"
            }
        };
        writeln!(
            out,
            "{why}; until then the code shows the first choice's results."
        )
        .unwrap();
    }
    if let Some(h) = s.hang() {
        writeln!(
            out,
            "Hang ({}): {}.",
            h.kind().as_str(),
            crate::report::hang::sentence(m.source, &h)
        )
        .unwrap();
    }
    if s.is_final() {
        match s.final_states() {
            Some(states) => {
                let list: Vec<String> = states
                    .iter()
                    .map(|o| m.columns.line(&m.program, o))
                    .collect();
                writeln!(out, "Final state: {}", list.join("  or  ")).unwrap();
            }
            None => writeln!(
                out,
                "The run is over: a thread stopped at the loop bound, so this is no final state."
            )
            .unwrap(),
        }
    }
    out
}

fn thread(out: &mut String, t: &ThreadBox) {
    let head = match &t.issued_by {
        Some(by) => format!("  {} (issued by {by})", t.name),
        None => format!("  {}", t.name),
    };
    let regs = if t.registers.is_empty() {
        String::new()
    } else {
        format!("  {}", t.registers.join(" "))
    };
    writeln!(out, "{head}: {}{regs}", t.status).unwrap();
    let labels_at = |out: &mut String, pc: usize| {
        for l in t.labels.iter().filter(|l| l.at == pc) {
            writeln!(out, "    {}:", l.name).unwrap();
        }
    };
    for (pc, instr) in t.code.iter().enumerate() {
        labels_at(out, pc);
        let mark = if pc == t.pc { "->" } else { "  " };
        writeln!(out, "    {mark} {instr}").unwrap();
    }
    labels_at(out, t.code.len());
    for w in &t.store_buffer {
        writeln!(out, "    store buffer: {w}").unwrap();
    }
    for r in &t.early_reads {
        writeln!(out, "    read ahead: {r}").unwrap();
    }
    for c in &t.cache_lines {
        writeln!(out, "    sees {c}").unwrap();
    }
    if !t.causal_past.is_empty() {
        writeln!(out, "    causal past: {}", t.causal_past.join(", ")).unwrap();
    }
}

/// The numbered transitions, or that none is left.
pub fn transitions<S: Bits>(s: &Session<'_, S>, ts: &[Transition]) -> String {
    let mut out = String::new();
    if ts.is_empty() {
        if s.is_final() {
            writeln!(out, "No transition: the run is over.").unwrap();
        } else {
            writeln!(
                out,
                "No transition: this run is stuck (a check would fail whatever is done next); undo with `u`."
            )
            .unwrap();
        }
        return out;
    }
    writeln!(out, "Transitions:").unwrap();
    for t in ts {
        writeln!(out, "  [{}] {}", t.index, t.sentence).unwrap();
    }
    out
}

/// The outcomes reachable from the current state, herd-style, each marked
/// `*` where the test's condition holds.
pub fn reachable<S: Bits>(s: &Session<'_, S>, r: &Reachable) -> String {
    let m = s.machine();
    let p = &m.program;
    let mut out = String::new();
    writeln!(
        out,
        "Reachable from here: {} final state{}",
        r.outcomes.len(),
        if r.outcomes.len() == 1 { "" } else { "s" }
    )
    .unwrap();
    for o in &r.outcomes {
        let mark = if s.satisfies(o, &p.condition.prop) {
            "*"
        } else {
            " "
        };
        writeln!(out, "{mark} {}", m.columns.line(p, o)).unwrap();
    }
    writeln!(out, "(* = the condition's proposition holds)").unwrap();
    if r.bound_hit {
        writeln!(
            out,
            "Some run from here stops at the loop bound: final states may be missing."
        )
        .unwrap();
    }
    if let Some(e) = r.incomplete {
        writeln!(out, "Incomplete: {e}; the list may miss final states.").unwrap();
    }
    out
}

/// The answer to `g COND`: the steps that were taken, or why none.
pub fn go_to<S: Bits>(s: &Session<'_, S>, goal: &str, answer: &GoTo) -> String {
    match answer {
        GoTo::Path(p) if p.is_empty() => format!("Already there: the run ends in {goal}.\n"),
        GoTo::Path(p) => format!(
            "Took {} step{} to reach {goal}.\n",
            p.len(),
            if p.len() == 1 { "" } else { "s" }
        ),
        GoTo::Unreachable { since: None } => format!(
            "No run of the machine ends in {goal}: the model forbids it (try `e {goal}`).\n"
        ),
        GoTo::Unreachable { since: Some(k) } => {
            let step = &s.steps()[k - 1];
            format!(
                "{goal} is no longer reachable: it was until step {k} ({} `{}` {}). Undo back to step {} to reach it.\n",
                step.thread,
                step.instruction,
                step.action,
                k - 1
            )
        }
        GoTo::Incomplete(e) => format!("Incomplete: {e} before the search could tell.\n"),
    }
}

/// The answer to `g hang`.
pub fn go_to_hang<S: Bits>(s: &Session<'_, S>, answer: &GoTo) -> String {
    match answer {
        GoTo::Path(p) if p.is_empty() => "Already there: this state is a hang.\n".into(),
        GoTo::Path(p) => format!(
            "Took {} step{} into a hang.\n",
            p.len(),
            if p.len() == 1 { "" } else { "s" }
        ),
        GoTo::Unreachable { since: None } => format!(
            "No run of the machine hangs: every execution of {} terminates (within the loop bound).\n",
            s.machine().program.name
        ),
        GoTo::Unreachable { since: Some(k) } => {
            let step = &s.steps()[k - 1];
            format!(
                "No run from here hangs; one could until step {k} ({} `{}` {}).\n",
                step.thread, step.instruction, step.action
            )
        }
        GoTo::Incomplete(e) => format!("Incomplete: {e} before the search could tell.\n"),
    }
}

/// The answer to `g undefined`: the steps taken, then the undefined step in
/// `run`'s words (`ub`, the line of the run's undefined step once there).
pub fn go_to_undefined<S: crate::rel::Bits>(
    s: &Session<'_, S>,
    answer: &GoTo,
    ub: Option<&str>,
) -> String {
    let ub = ub.map(|l| format!("{l}\n")).unwrap_or_default();
    match answer {
        GoTo::Path(p) if p.is_empty() => {
            format!("Already there: this run has reached undefined behaviour.\n{ub}")
        }
        GoTo::Path(p) => format!(
            "Took {} step{} to undefined behaviour.\n{ub}",
            p.len(),
            if p.len() == 1 { "" } else { "s" }
        ),
        GoTo::Unreachable { since: None } => format!(
            "No run of the machine reaches undefined behaviour: every execution of {} is defined (within the loop bound).\n",
            s.machine().program.name
        ),
        GoTo::Unreachable { since: Some(k) } => {
            let step = &s.steps()[k - 1];
            format!(
                "No run from here reaches undefined behaviour; one could until step {k} ({} `{}` {}).\n",
                step.thread, step.instruction, step.action
            )
        }
        GoTo::Incomplete(e) => format!("Incomplete: {e} before the search could tell.\n"),
    }
}

/// The run so far, one line a step, and the command that replays it.
pub fn follow<S: Bits>(s: &Session<'_, S>, file: &str) -> String {
    let mut out = String::new();
    for st in s.steps() {
        writeln!(
            out,
            "{:>3}. [{}] {} `{}` {}",
            st.index, st.choice, st.thread, st.instruction, st.action
        )
        .unwrap();
    }
    writeln!(out, "Replay: ptxmc trace {file} {}", s.follow_args()).unwrap();
    out
}
