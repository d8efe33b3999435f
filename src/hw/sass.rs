//! The SASS check: does the machine code of each litmus thread still have
//! the test's accesses, fences and barriers?
//!
//! `build.sh` dumps every bundle with `cuobjdump -sass`. Each litmus thread
//! is an `extern "C" __noinline__` function named by
//! [`super::role_function`], so it is a `Function : NAME` section of the
//! dump. [`parse`] counts, per function, the memory instructions by kind;
//! [`check`] sets them beside the litmus thread's instructions:
//!
//! | kind | SASS opcodes (first dotted part) | rule |
//! |---|---|---|
//! | loads | `LDG LD LDS LDC TLD SULD` | equal |
//! | stores | `STG ST STS SUST` | equal |
//! | atomics | `ATOM ATOMG ATOMS RED REDG` | equal |
//! | fences | `MEMBAR FENCE CCTL` | at least the test's `fence`s |
//! | barriers | `BAR` on barriers 1..15 | equal |
//! | async copies | `UBLKCP UBLKRED UTMALDG UTMASTG UTMAREDG LDGSTS STAS REDAS` | equal |
//! | mbarrier operations | `SYNCS ARRIVES` | equal |
//! | async-group operations | `UTMACMDFLUSH LDGDEPBAR DEPBAR` | equal |
//! | cluster barriers | `UCGABAR_ARV UCGABAR_WAIT` | at least |
//!
//! What ptxas 13.0 emits for the asynchronous proxy on sm_90 (read in its
//! `cuobjdump -sass`; `docs/hardware.md` has the table): a bulk copy is one
//! `UBLKCP` (`UBLKRED` for a reduction) inside a loop that issues each
//! lane's copy in turn (`ELECT`, `BRA.U.ANY`); `cp.async` is `LDGSTS`;
//! `st.async` is `STAS`, `red.async` `REDAS`; every mbarrier operation is one
//! `SYNCS` instruction (`SYNCS.EXCH.64` init, `SYNCS.ARRIVE.TRANS64.*`
//! arrivals and transaction counts, `.RED` when remote, `SYNCS.PHASECHK.*`
//! waits), except `cp.async.mbarrier.arrive`: `ARRIVES.LDGSTSBAR`, preceded
//! without `.noinc` by a `SYNCS` that raises the pending count; a bulk
//! commit is `UTMACMDFLUSH`, a `cp.async` commit `LDGDEPBAR`, every wait
//! `DEPBAR` (`cp.async.wait_all` is both); `barrier.cluster` is
//! `UCGABAR_ARV`/`UCGABAR_WAIT`, twice without `.aligned` (a path for a
//! converged warp and one for a diverged warp), next to a `BAR.SYNC 0` that
//! runs when the kernel was launched without clusters (a barrier on
//! barrier 0 or a register is therefore not a litmus barrier: the harness
//! gives litmus barriers 1..15). Four fences have no fence instruction:
//! `fence.acquire.cta` and the acquire fences restricted to
//! `.shared::cluster` (plain and `fence.proxy.async::generic`) become a
//! scoreboard wait (a `NOP` that waits for every earlier instruction), and
//! `fence.mbarrier_init.release.cluster` nothing at all; the check cannot
//! count them and says so in a note.
//!
//! One more rule reads the instructions' control bits: an mbarrier wait
//! that orders later accesses (`.acquire`, or `.relaxed` followed by an
//! acquire fence) must complete before the next memory instruction issues,
//! i.e. that instruction or one before it waits on the scoreboard the
//! `SYNCS.PHASECHK` sets ([`WaitOrder`]). ptxas 13.0 does not make a load
//! wait for a straight-line `mbarrier.try_wait.acquire` whose result it does
//! not depend on, so on the H100 that load reads memory before the wait
//! completes; the check reports such a test as compiler-altered.
//!
//! 128-bit accesses are the harness's own result stores and are skipped;
//! local-memory accesses (`LDL`, `STL`) are spills. Fences only need to be at
//! least as many as in the test because ptxas adds `MEMBAR`s for release
//! accesses (`st.release.gpu` = `MEMBAR.ALL.GPU` + `STG.E.STRONG.GPU`). A
//! thread whose counts break a rule is *compiler-altered*: ptxas merged,
//! dropped, duplicated or unrolled something, so the hardware did not run the
//! test as written.
//!
//! Two refinements from the first runs on an H100 (ptxas 13.0): a
//! `fence.acquire` compiles to an L1 invalidation alone (`CCTL.IVALL`, no
//! `MEMBAR`), so `CCTL` counts as a fence; and a thread that loops (a
//! backward branch) may be unrolled, so its counts are lower bounds — each
//! kind must appear at least as often as in the test, and not at all when
//! the test has none. Instructions guarded by `@!PT` never execute and are
//! skipped, and so are loads from constant bank 0 (launch parameters and
//! memory descriptors).

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

use super::role_function;
use crate::ir::{FenceSem, Instr, Program, Restrict, Scope, Thread, UniProxy};

/// Memory instructions of one function (or one litmus thread), by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Loads (every proxy).
    pub loads: usize,
    /// Stores.
    pub stores: usize,
    /// Atomics and reductions.
    pub atomics: usize,
    /// Fences (thread and proxy fences).
    pub fences: usize,
    /// Barriers.
    pub barriers: usize,
    /// Asynchronous copies, stores and reductions.
    #[serde(default)]
    pub copies: usize,
    /// mbarrier operations.
    #[serde(default)]
    pub mbarrier: usize,
    /// Async-group commits and waits.
    #[serde(default)]
    pub groups: usize,
    /// Cluster-barrier arrivals and waits.
    #[serde(default)]
    pub cluster_barriers: usize,
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} loads, {} stores, {} atomics, {} fences, {} barriers",
            self.loads, self.stores, self.atomics, self.fences, self.barriers
        )?;
        for (n, what) in [
            (self.copies, "async copies"),
            (self.mbarrier, "mbarrier operations"),
            (self.groups, "async-group operations"),
            (self.cluster_barriers, "cluster barriers"),
        ] {
            if n > 0 {
                write!(f, ", {n} {what}")?;
            }
        }
        Ok(())
    }
}

/// What follows an mbarrier wait (`SYNCS.PHASECHK`) in the machine code.
///
/// A wait is a variable-latency instruction that sets a scoreboard; an
/// instruction issues before the wait completes unless it (or one before
/// it: the warp issues in order) waits on that scoreboard. The control bits
/// of each instruction (the second 64-bit word of its encoding, which
/// `cuobjdump -sass` prints on the following line) say which.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum WaitOrder {
    /// Nothing accesses memory before the wait completes.
    Ordered,
    /// This memory instruction (its opcode) issues before the wait completes.
    Early(String),
    /// The dump has no encodings: the control bits cannot be read.
    Unknown,
}

/// One function of a `cuobjdump -sass` dump.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Function {
    /// Its memory instructions, by kind.
    pub counts: Counts,
    /// Per mbarrier wait, in address order: whether the next memory
    /// instruction waits for it.
    pub waits: Vec<WaitOrder>,
}

/// The functions of a `cuobjdump -sass` dump.
pub type Functions = BTreeMap<String, Function>;

/// One instruction of a dump.
struct Inst {
    /// The opcode with its modifiers (`LDG.E.STRONG.GPU`).
    op: String,
    /// The instruction text.
    line: String,
    /// Guarded by `@!PT`: never executes.
    dead: bool,
    /// The control word (second half of the encoding), when printed.
    control: Option<u64>,
}

impl Inst {
    fn base(&self) -> &str {
        self.op.split('.').next().unwrap_or("")
    }
    /// The scoreboard a variable-latency instruction sets when it completes.
    fn write_barrier(&self) -> Option<u32> {
        self.control
            .map(|c| ((c >> 46) & 7) as u32)
            .filter(|&b| b != 7)
    }
    /// Whether it waits, before issuing, on scoreboard `b`.
    fn waits_on(&self, b: u32) -> Option<bool> {
        self.control.map(|c| (c >> 52) & (1 << b) != 0)
    }
}

/// The kind of a memory instruction, `None` for anything else.
fn kind_of(i: &Inst) -> Option<&'static str> {
    let base = i.base();
    if i.op.split('.').any(|m| m == "128") {
        return None;
    }
    // Bank 0 holds the launch parameters and the driver's memory
    // descriptors, which every function loads: not a test access.
    if base == "LDC" && i.line.contains("c[0x0]") {
        return None;
    }
    Some(match base {
        "LDG" | "LD" | "LDS" | "LDC" | "TLD" | "SULD" => "loads",
        "STG" | "ST" | "STS" | "SUST" => "stores",
        "ATOM" | "ATOMG" | "ATOMS" | "RED" | "REDG" => "atomics",
        "MEMBAR" | "FENCE" | "CCTL" => "fences",
        // Barrier 0 and register-named barriers are barrier.cluster's
        // fallback for launches without clusters.
        "BAR" if litmus_barrier(&i.line) => "barriers",
        "UBLKCP" | "UBLKRED" | "UTMALDG" | "UTMASTG" | "UTMAREDG" | "LDGSTS" | "STAS" | "REDAS" => {
            "copies"
        }
        "SYNCS" | "ARRIVES" => "mbarrier",
        "UTMACMDFLUSH" | "LDGDEPBAR" | "DEPBAR" => "groups",
        "UCGABAR_ARV" | "UCGABAR_WAIT" => "cluster_barriers",
        _ => return None,
    })
}

/// Whether an instruction reads or writes memory (the accesses a wait must
/// precede: loads, stores, atomics, copies, mbarrier operations).
fn accesses_memory(i: &Inst) -> bool {
    matches!(
        kind_of(i),
        Some("loads" | "stores" | "atomics" | "copies" | "mbarrier")
    )
}

/// Whether the wait at `insts[at]` completes before the next memory access issues.
fn wait_order(insts: &[Inst], at: usize) -> WaitOrder {
    if insts[at].control.is_none() {
        return WaitOrder::Unknown;
    }
    let Some(b) = insts[at].write_barrier() else {
        return WaitOrder::Ordered;
    };
    for i in insts[at + 1..].iter().filter(|i| !i.dead) {
        match i.waits_on(b) {
            None => return WaitOrder::Unknown,
            Some(true) => return WaitOrder::Ordered,
            Some(false) => {}
        }
        if accesses_memory(i) {
            return WaitOrder::Early(i.op.clone());
        }
        if matches!(i.base(), "RET" | "EXIT") {
            return WaitOrder::Ordered;
        }
    }
    WaitOrder::Ordered
}

fn summarise(insts: &[Inst]) -> Function {
    let mut f = Function::default();
    for (k, i) in insts.iter().enumerate() {
        if i.dead {
            continue;
        }
        let c = &mut f.counts;
        match kind_of(i) {
            Some("loads") => c.loads += 1,
            Some("stores") => c.stores += 1,
            Some("atomics") => c.atomics += 1,
            Some("fences") => c.fences += 1,
            Some("barriers") => c.barriers += 1,
            Some("copies") => c.copies += 1,
            Some("mbarrier") => c.mbarrier += 1,
            Some("groups") => c.groups += 1,
            Some("cluster_barriers") => c.cluster_barriers += 1,
            _ => {}
        }
        if i.op.starts_with("SYNCS.PHASECHK") {
            f.waits.push(wait_order(insts, k));
        }
    }
    f
}

/// Read every function of `cuobjdump -sass` output: its memory instructions
/// by kind, and whether each mbarrier wait completes before the next access.
pub fn parse(text: &str) -> Functions {
    let mut out = Functions::new();
    let mut current: Option<(String, Vec<Inst>)> = None;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("Function :") {
            if let Some((name, insts)) = current.take() {
                out.insert(name, summarise(&insts));
            }
            current = Some((rest.trim().to_string(), Vec::new()));
            continue;
        }
        let Some((_, insts)) = &mut current else {
            continue;
        };
        if let Some((op, dead)) = opcode(l) {
            insts.push(Inst {
                op: op.to_string(),
                line: l.to_string(),
                dead,
                control: None,
            });
        } else if let Some(word) = encoding_only(l) {
            // The second half of the last instruction's encoding.
            if let Some(last) = insts.last_mut() {
                if last.control.is_none() && last.line.contains("/* 0x") {
                    last.control = Some(word);
                }
            }
        }
    }
    if let Some((name, insts)) = current.take() {
        out.insert(name, summarise(&insts));
    }
    out
}

/// A line that holds only an encoding word (`/* 0x000fe20000000800 */`).
fn encoding_only(line: &str) -> Option<u64> {
    let hex = line.strip_prefix("/* 0x")?.strip_suffix("*/")?.trim();
    u64::from_str_radix(hex, 16).ok()
}

/// Whether a `BAR` line names a barrier 1..15 by an immediate (the harness's
/// litmus barriers), not barrier 0 or a register.
fn litmus_barrier(line: &str) -> bool {
    let Some((_, rest)) = line.split_once("*/") else {
        return false;
    };
    let mut words = rest.split_whitespace().skip_while(|w| w.starts_with('@'));
    words.next(); // the opcode
    words
        .next()
        .map(|w| w.trim_end_matches([',', ';']))
        .is_some_and(|id| id.starts_with("0x") && id != "0x0")
}

/// The opcode of an instruction line (`/*0040*/  @!P0 LDG.E.STRONG.GPU R2, [R4.64] ;`),
/// and whether it is guarded by `@!PT`: never executed (ptxas pads fence.sc
/// sequences with `@!PT LDS RZ, [RZ]`), so not an access.
fn opcode(line: &str) -> Option<(&str, bool)> {
    let rest = line.strip_prefix("/*")?;
    let end = rest.find("*/")?;
    // The address: hexadecimal digits only (encoding comments are longer).
    let addr = &rest[..end];
    if addr.is_empty() || addr.len() > 6 || !addr.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let mut words = rest[end + 2..].split_whitespace();
    let mut w = words.next()?;
    let mut dead = false;
    if w.starts_with('@') {
        dead = w == "@!PT";
        w = words.next()?;
    }
    let w = w.trim_end_matches(';');
    (!w.is_empty() && w.chars().next()?.is_ascii_uppercase()).then_some((w, dead))
}

/// The fences ptxas 13.0 compiles to no fence instruction on sm_90, with
/// what it emits instead (`None` for a fence it materialises): the check
/// cannot count them.
fn invisible_fence(i: &Instr) -> Option<(&'static str, &'static str)> {
    const WAIT: &str = "a scoreboard wait only (a NOP that waits for every earlier instruction)";
    match i {
        Instr::Fence {
            sem: FenceSem::Acquire,
            scope: Scope::Cta,
            restrict: None,
        } => Some(("fence.acquire.cta", WAIT)),
        Instr::Fence {
            restrict: Some(Restrict::MbarrierInit),
            ..
        } => Some(("fence.mbarrier_init", "nothing at all")),
        Instr::Fence {
            sem: FenceSem::Acquire,
            restrict: Some(_),
            ..
        } => Some(("fence.acquire.sync_restrict", WAIT)),
        Instr::ProxyFenceUni {
            to: UniProxy::Async,
            acquire: true,
            ..
        } => Some(("fence.proxy.async::generic.acquire", WAIT)),
        _ => None,
    }
}

/// What a litmus thread should compile to.
pub fn expected(th: &Thread) -> Counts {
    let mut c = Counts::default();
    for i in &th.code {
        if invisible_fence(i).is_some() {
            continue;
        }
        match i {
            Instr::Load { .. } => c.loads += 1,
            Instr::Store { .. } => c.stores += 1,
            Instr::Rmw { .. } => c.atomics += 1,
            Instr::Fence { .. } | Instr::ProxyFence { .. } | Instr::ProxyFenceUni { .. } => {
                c.fences += 1
            }
            Instr::Barrier { .. } => c.barriers += 1,
            Instr::AsyncCopy { .. } => c.copies += 1,
            Instr::Mbar { .. } | Instr::MbarWait { .. } => c.mbarrier += 1,
            // Without `.noinc`, a SYNCS raises the pending count first.
            Instr::AsyncMbarArrive { noinc, .. } => c.mbarrier += if *noinc { 1 } else { 2 },
            Instr::CommitGroup { .. } => c.groups += 1,
            // `cp.async.wait_all` commits, then waits.
            Instr::WaitGroup { all, .. } => c.groups += if *all { 2 } else { 1 },
            Instr::ClusterBarrier { .. } => c.cluster_barriers += 1,
            _ => {}
        }
    }
    c
}

/// The fences of a litmus thread that have no machine instruction.
fn notes(th: &Thread) -> Vec<String> {
    th.code
        .iter()
        .filter_map(invisible_fence)
        .map(|(f, what)| format!("{f} has no fence instruction: ptxas emits {what}"))
        .collect()
}

/// The SASS check of one litmus thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ThreadCheck {
    /// `P0`, `P1`, ...
    pub thread: String,
    /// The role function's name.
    pub function: String,
    /// What the litmus thread has.
    pub expected: Counts,
    /// What the SASS has; `None` when the function is not in the dump.
    pub found: Option<Counts>,
    /// Why the code does not match (empty: it matches).
    pub mismatches: Vec<String>,
    /// Litmus instructions the check cannot see in machine code.
    pub notes: Vec<String>,
}

/// The SASS check of one test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SassCheck {
    /// Per litmus thread.
    pub threads: Vec<ThreadCheck>,
}

impl SassCheck {
    /// Whether some thread's machine code does not match the test.
    pub fn compiler_altered(&self) -> bool {
        self.threads.iter().any(|t| !t.mismatches.is_empty())
    }
    /// Whether some role function is missing from the dump (the check is incomplete).
    pub fn missing(&self) -> Vec<&str> {
        self.threads
            .iter()
            .filter(|t| t.found.is_none())
            .map(|t| t.function.as_str())
            .collect()
    }
    /// One line per note: `P0: fence.acquire.cta has no machine instruction …`.
    pub fn notes(&self) -> Vec<String> {
        self.threads
            .iter()
            .flat_map(|t| t.notes.iter().map(move |m| format!("{}: {m}", t.thread)))
            .collect()
    }
    /// One line per mismatch: `P1: 1 load in SASS, 2 in the test`.
    pub fn reasons(&self) -> Vec<String> {
        self.threads
            .iter()
            .flat_map(|t| {
                t.mismatches
                    .iter()
                    .map(move |m| format!("{}: {m}", t.thread))
            })
            .collect()
    }
}

/// Find a role function in the dump: its plain name, or a C++-mangled form.
fn find<'a>(funcs: &'a Functions, name: &str) -> Option<&'a Function> {
    funcs.get(name).or_else(|| {
        let mangled = format!("_Z{}{name}", name.len());
        funcs
            .iter()
            .find(|(k, _)| k.starts_with(&mangled))
            .map(|(_, v)| v)
    })
}

/// Whether each mbarrier wait of a litmus thread must complete before the
/// thread's next memory access: an acquire wait, or a relaxed one that an
/// acquire fence follows before that access.
fn ordering_waits(th: &Thread) -> Vec<bool> {
    let access = |i: &Instr| {
        matches!(
            i,
            Instr::Load { .. }
                | Instr::Store { .. }
                | Instr::Rmw { .. }
                | Instr::AsyncCopy { .. }
                | Instr::Mbar { .. }
                | Instr::MbarWait { .. }
                | Instr::AsyncMbarArrive { .. }
        )
    };
    let acquire_fence = |i: &Instr| match i {
        Instr::Fence { sem, .. } => sem.acquires(),
        Instr::ProxyFenceUni { acquire, .. } => *acquire,
        _ => false,
    };
    th.code
        .iter()
        .enumerate()
        .filter_map(|(pc, i)| match i {
            Instr::MbarWait { sem, .. } => Some(
                *sem == crate::ir::Sem::Acquire
                    || th.code[pc + 1..]
                        .iter()
                        .take_while(|j| !access(j))
                        .any(acquire_fence),
            ),
            _ => None,
        })
        .collect()
}

/// The machine code must not let an access issue before an ordering wait
/// completes: ptxas 13.0 lets a load that does not depend on a straight-line
/// `mbarrier.try_wait.acquire` issue before the wait completes (nothing
/// waits on the wait's scoreboard), which breaks the acquire.
fn check_waits(
    th: &Thread,
    waits: &[WaitOrder],
    mismatches: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    let ordering = ordering_waits(th);
    if !ordering.iter().any(|&o| o) {
        return;
    }
    let loops = th
        .code
        .iter()
        .enumerate()
        .any(|(pc, i)| matches!(i, Instr::Branch { target, .. } if *target <= pc));
    // A straight-line thread's waits are its function's waits, in order; a
    // loop's are unrolled copies of the loop's waits.
    let pairs: Vec<(usize, &WaitOrder)> = if loops {
        waits.iter().enumerate().collect()
    } else if waits.len() == ordering.len() {
        waits
            .iter()
            .enumerate()
            .filter(|(k, _)| ordering[*k])
            .collect()
    } else {
        return; // the count mismatch is already reported
    };
    for (k, w) in pairs {
        match w {
            WaitOrder::Ordered => {}
            WaitOrder::Early(op) => mismatches.push(format!(
                "{op} issues before mbarrier wait {} completes (nothing waits on the wait's scoreboard), so the wait does not order it",
                k + 1
            )),
            WaitOrder::Unknown => {
                let n = "the dump has no instruction encodings: whether accesses wait for the mbarrier waits is not checked".to_string();
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
    }
}

/// Check every litmus thread of test `id` against the dump.
pub fn check(p: &Program, id: &str, funcs: &Functions) -> SassCheck {
    let threads = p
        .threads
        .iter()
        .enumerate()
        .map(|(t, th)| {
            let function = role_function(id, t);
            let expected = expected(th);
            let func = find(funcs, &function);
            let found = func.map(|f| f.counts);
            let mut mismatches = Vec::new();
            let mut notes = notes(th);
            if let Some(func) = func {
                let f = func.counts;
                let exact = [
                    ("loads", f.loads, expected.loads),
                    ("stores", f.stores, expected.stores),
                    ("atomics", f.atomics, expected.atomics),
                    ("barriers", f.barriers, expected.barriers),
                    ("async copies", f.copies, expected.copies),
                    ("mbarrier operations", f.mbarrier, expected.mbarrier),
                    ("async-group operations", f.groups, expected.groups),
                ];
                // An unrolled loop repeats its accesses.
                let loops = th
                    .code
                    .iter()
                    .enumerate()
                    .any(|(pc, i)| matches!(i, Instr::Branch { target, .. } if *target <= pc));
                for (what, got, want) in exact {
                    let ok = if loops {
                        got >= want && (got == 0) == (want == 0)
                    } else {
                        got == want
                    };
                    if !ok {
                        let bound = if loops { " (a loop: at least)" } else { "" };
                        mismatches.push(format!("{got} {what} in SASS, {want} in the test{bound}"));
                    }
                }
                if f.fences < expected.fences {
                    mismatches.push(format!(
                        "{} fences in SASS, {} in the test",
                        f.fences, expected.fences
                    ));
                }
                // Without `.aligned`, ptxas emits each cluster-barrier
                // operation twice (converged and diverged warps).
                if f.cluster_barriers < expected.cluster_barriers
                    || (f.cluster_barriers == 0) != (expected.cluster_barriers == 0)
                {
                    mismatches.push(format!(
                        "{} cluster barriers in SASS, {} in the test",
                        f.cluster_barriers, expected.cluster_barriers
                    ));
                }
                check_waits(th, &func.waits, &mut mismatches, &mut notes);
            }
            ThreadCheck {
                thread: th.name.clone(),
                function,
                expected,
                found,
                mismatches,
                notes,
            }
        })
        .collect();
    SassCheck { threads }
}
