//! CUDA kernels: the corpus under `kernels/` (checked-in `nvcc -ptx` output
//! with the launch in each `.cu`'s comment) gives the expected verdicts in
//! both engines; refusals and launch errors are positioned and exact; hostile
//! input is refused without a panic.

use std::path::{Path, PathBuf};
use std::process::Command;

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::litmus::LitmusTest;
use ptxmc::ptx::{self, LaunchText};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn load(name: &str) -> LitmusTest {
    ptx::load_file(&root().join("kernels").join(name), None, None)
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
}

/// `FILE` under the launch `flags`; the error's one-line form if it fails.
fn with_flags(ptx_text: &str, flags: &str) -> Result<LitmusTest, String> {
    ptx::load_source("k.ptx", ptx_text, &LaunchText::whole("command line", flags))
        .map_err(|e| e.to_string())
}

#[test]
fn every_corpus_kernel_gives_its_expected_verdict_in_both_engines() {
    let csv = std::fs::read_to_string(root().join("kernels/expected.csv")).unwrap();
    let opts = RunOptions {
        engine: EngineChoice::Both,
        ..RunOptions::default()
    };
    let mut rows = 0;
    for line in csv.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split(',').collect();
        let (name, holds, terminates, undefined) =
            (cols[0], cols[1] == "1", cols[2] == "1", cols[3] == "1");
        let t = load(name);
        ptxmc::model::Model::default()
            .admit(&t.program, &t.spans)
            .unwrap_or_else(|d| panic!("{}", t.error(d).rendered()));
        let r = engine::run(&t.program, &opts);
        assert!(r.disagreement.is_none(), "{name}: engines disagree");
        assert!(r.incomplete.is_none(), "{name}: incomplete");
        assert_eq!(r.verdict.holds, holds, "{name}: verdict");
        assert_eq!(!r.termination.hangs(), terminates, "{name}: termination");
        assert_eq!(r.undefined.is_some(), undefined, "{name}: undefined");
        rows += 1;
    }
    assert_eq!(rows, 87);
}

/// `kernels/scale/`: kernels of 64 threads (two warps of 32 lanes) at a
/// count-less `bar.sync`. The oracle's termination search used to try every
/// set of threads stuck at the barrier (2^64) and did not finish (issue 27);
/// with the barrier planned from the paths (`docs/oracle.md`, "Stuck sets at
/// count-less barriers") both engines answer them at once and agree.
#[test]
fn the_two_warp_barrier_kernels_are_right_in_both_engines() {
    let opts = RunOptions {
        engine: EngineChoice::Both,
        ..RunOptions::default()
    };
    for name in [
        "scale/syncthreads_shared.ptx",
        "scale/syncthreads_divergent_warps_fixed.ptx",
    ] {
        let t = load(name);
        assert_eq!(t.program.threads.len(), 64, "{name}");
        let r = engine::run(&t.program, &opts);
        assert!(r.incomplete.is_none(), "{name}: incomplete");
        assert!(r.disagreement.is_none(), "{name}: engines disagree");
        assert!(r.verdict.holds, "{name}: verdict");
        assert!(r.termination.checked(), "{name}: termination checked");
        assert!(!r.termination.hangs(), "{name}: termination");
        assert!(r.undefined.is_none(), "{name}: undefined");
        // The termination search builds at most the one combination the
        // spinning lane can be stuck in, never a stuck set at the barrier.
        let term = r
            .stats
            .ax_termination
            .expect("the oracle's termination search ran");
        assert!(term.path_combinations <= 1, "{name}: {term:?}");
    }
}

/// `kernels/scale/named_barrier_producer`: CUTLASS's named-barrier hand-over,
/// warp 0 at `bar.arrive 1, 64`, warp 1 at `bar.sync 1, 64` (64 lanes, each
/// one CUDA thread of the count). Its arrivals are order-free, so the machine
/// answers at once; the oracle agrees, its termination search included: the
/// lanes of a warp are stuck at a warp event together or not at all
/// (`ax::barrier_sets`, warp resources), so it builds a handful of path
/// combinations, not 2^64.
#[test]
fn the_named_barrier_kernel_hands_over_in_both_engines() {
    let t = load("scale/named_barrier_producer.ptx");
    assert_eq!(t.program.threads.len(), 64);
    let op = engine::run(
        &t.program,
        &RunOptions {
            engine: EngineChoice::Op,
            ..RunOptions::default()
        },
    );
    assert!(op.incomplete.is_none());
    assert!(op.verdict.holds);
    assert!(!op.termination.hangs());
    assert!(op.undefined.is_none());
    let both = engine::run(
        &t.program,
        &RunOptions {
            engine: EngineChoice::Both,
            ..RunOptions::default()
        },
    );
    assert!(both.incomplete.is_none(), "incomplete");
    assert!(both.disagreement.is_none(), "engines disagree");
    assert!(both.verdict.holds);
    assert!(both.termination.checked());
    assert!(!both.termination.hangs());
    assert_eq!(both.outcomes, op.outcomes);
    let term = both
        .stats
        .ax_termination
        .expect("the oracle's termination search ran");
    assert!(term.path_combinations <= 2, "{term:?}");
}

/// A counted barrier's count is in CUDA threads and carries over as
/// written; one that is not a positive multiple of 32, or not known, is
/// refused at the operand.
#[test]
fn barrier_counts_are_checked_at_the_operand() {
    let src =
        std::fs::read_to_string(root().join("kernels/scale/named_barrier_producer.ptx")).unwrap();
    let flags = "--block 64 --buffer out:int32[1]";
    let bad = src.replace("bar.sync 1, 64;", "bar.sync 1, 48;");
    assert_ne!(bad, src);
    let e = with_flags(&bad, flags).unwrap_err();
    assert!(
        e.contains("expected a thread count that is a positive multiple of the warp size, 32 (PTX ISA 9.7.13.1), found 48"),
        "{e}"
    );
}

/// `kernels/scale/named_barrier_wrong_count`: the consumer warp syncs on
/// named barrier 1 with a count of 32, the producer warp arrives with 64.
/// Each warp's arrival is one event of 32 threads (PTX ISA §9.7.13.1,
/// *"marks warps' arrival at barrier"*; `model::barrier::warp_unit`), so two
/// warps give two orders, not 2^64: the consumer warp completes a phase
/// alone and reads before the store (`out[0] != 5` is reachable), and when
/// the producer arrives first the phase has counts 64 and 32 (undefined) and
/// never completes. The fix (`_fixed`, 64 in both) forbids it. Both engines
/// answer all of it, the oracle's termination search over 64 lanes included
/// (warp resources in `ax::barrier_sets`).
#[test]
fn the_named_barrier_count_bug_is_found_with_warp_arrivals() {
    for (name, holds) in [
        ("scale/named_barrier_wrong_count.ptx", false),
        ("scale/named_barrier_wrong_count_fixed.ptx", true),
    ] {
        let t = load(name);
        assert_eq!(t.program.threads.len(), 64, "{name}");
        let op = engine::run(
            &t.program,
            &RunOptions {
                engine: EngineChoice::Op,
                ..RunOptions::default()
            },
        );
        assert!(op.incomplete.is_none(), "{name}");
        assert_eq!(op.verdict.holds, holds, "{name}: verdict");
        // The bug: a stale read (the initial -1) besides the data.
        assert_eq!(op.outcomes.len(), if holds { 1 } else { 2 }, "{name}");
        assert_eq!(op.termination.hangs(), !holds, "{name}: termination");
        assert_eq!(op.undefined.is_some(), !holds, "{name}: undefined");
        if let Some(u) = &op.undefined {
            assert_eq!(
                u.kind,
                ptxmc::model::ub::UbKind::Barrier(ptxmc::model::barrier::BarrierUb::CountsDisagree),
                "{name}"
            );
        }
        // Two warp arrivals: a handful of states, not 2^64.
        assert!(op.stats.op.as_ref().unwrap().states < 100, "{name}");
        let both = engine::run(
            &t.program,
            &RunOptions {
                engine: EngineChoice::Both,
                ..RunOptions::default()
            },
        );
        assert!(both.incomplete.is_none(), "{name}: incomplete");
        assert!(both.disagreement.is_none(), "{name}: engines disagree");
        assert_eq!(both.outcomes, op.outcomes, "{name}");
        assert_eq!(both.termination.hangs(), !holds, "{name}: termination");
        assert_eq!(both.undefined, op.undefined, "{name}: undefined");
        let term = both
            .stats
            .ax_termination
            .expect("the oracle's termination search ran");
        assert!(term.path_combinations <= 2, "{name}: {term:?}");
    }
}

/// `kernels/cutlass_named_barrier`: CUTLASS's `NamedBarrier` (`arrive` /
/// `arrive_and_wait`, from the nvidia-cutlass headers) in a kernel that
/// takes a `Params` struct by value, bound with `--struct`: 64 threads,
/// both engines, termination included, from the launch in the `.cu`.
#[test]
fn the_cutlass_named_barrier_kernel_with_a_params_struct_is_checked_end_to_end() {
    let t = load("cutlass_named_barrier.ptx");
    assert_eq!(t.program.threads.len(), 64);
    let r = engine::run(
        &t.program,
        &RunOptions {
            engine: EngineChoice::Both,
            ..RunOptions::default()
        },
    );
    assert!(r.incomplete.is_none(), "incomplete");
    assert!(r.disagreement.is_none(), "engines disagree");
    assert!(r.verdict.holds, "out[0] == 5 in every execution");
    assert!(r.termination.checked() && !r.termination.hangs());
    assert!(r.undefined.is_none());
    assert_eq!(r.outcomes.len(), 1);
    // The same through the command line, the launch (with `--struct`) read
    // from the `.cu` beside the PTX.
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["kernel", "--engine", "both"])
        .arg(root().join("kernels/cutlass_named_barrier.ptx"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("out[0]=5"), "{text}");
    assert!(text.contains("every execution terminates"), "{text}");
}

#[test]
fn every_corpus_module_has_its_source_and_an_expected_row() {
    let csv = std::fs::read_to_string(root().join("kernels/expected.csv")).unwrap();
    for e in std::fs::read_dir(root().join("kernels")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|e| e == "ptx") {
            let name = p.file_name().unwrap().to_str().unwrap();
            assert!(p.with_extension("cu").is_file(), "{name} has no .cu");
            assert!(
                csv.contains(&format!("\n{name},")),
                "{name} has no expected row"
            );
        }
    }
}

#[test]
fn the_message_passing_kernel_has_cuda_lines_and_the_buffers_as_locations() {
    let t = load("mp_relaxed.ptx");
    let names: Vec<&str> = t
        .program
        .locations
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    assert_eq!(names, ["data[0]", "flag[0]", "out[0]"]);
    // Two CTAs of one thread: two litmus threads in different CTAs.
    assert_eq!(t.program.threads.len(), 2);
    assert_ne!(
        t.program.threads[0].placement.cta,
        t.program.threads[1].placement.cta
    );
    // CTA 0 stores data (line 12 of the .cu) and then the flag.
    let store = t.program.threads[0]
        .code
        .iter()
        .position(|i| matches!(i, ptxmc::ir::Instr::Store { .. }))
        .unwrap();
    let pos = t.position(0, store);
    assert!(pos.ends_with("(mp_relaxed.cu:12)"), "{pos}");
    assert!(pos.contains("mp_relaxed.ptx:"), "{pos}");
}

const FLOAT_KERNEL: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.visible .entry f(.param .u64 f_param_0)
{
	.reg .f32 %f<3>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [f_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.f32 %f1, [%rd2];
	add.f32 %f2, %f1, %f1;
	st.global.f32 [%rd2], %f2;
	ret;
}
"#;

#[test]
fn float_arithmetic_is_refused_by_name_at_its_position() {
    let e = with_flags(FLOAT_KERNEL, "--buffer x:float32[1]").unwrap_err();
    assert_eq!(
        e,
        "k.ptx:12:2: expected what ptxmc models (docs/kernels.md), found `add.f32`"
    );
}

#[test]
fn an_out_of_bounds_address_is_positioned() {
    let src = FLOAT_KERNEL
        .replace("add.f32 %f2, %f1, %f1;", "mov.f32 %f2, %f1;")
        .replace("st.global.f32 [%rd2]", "st.global.f32 [%rd2+8]");
    let e = with_flags(&src, "--buffer x:float32[2]").unwrap_err();
    assert_eq!(
        e,
        "k.ptx:13:16: expected an address inside buffer `x` (bytes 0 to 7), found byte offset 8"
    );
    // In bounds, it lowers.
    assert!(with_flags(&src, "--buffer x:float32[3]").is_ok());
}

#[test]
fn a_buffer_of_another_element_size_is_refused() {
    let src = FLOAT_KERNEL.replace("add.f32 %f2, %f1, %f1;", "mov.f32 %f2, %f1;");
    let e = with_flags(&src, "--buffer x:int64[2]").unwrap_err();
    assert_eq!(
        e,
        "k.ptx:11:21: expected whole elements of buffer `x` (int64, 8 bytes each), found an access of 4 bytes at byte offset 0"
    );
}

#[test]
fn launch_errors_point_into_the_launch() {
    let mp = std::fs::read_to_string(root().join("kernels/mp_acqrel.ptx")).unwrap();
    let e = with_flags(
        &mp,
        "--grid 2 --buffer data:int32[1] --buffer flag:int32[1]",
    )
    .unwrap_err();
    assert_eq!(
        e,
        "command line:1:1: expected 3 parameter bindings (`--buffer`, `--scalar`, `--tensormap` or `--struct`, in order) for kernel `_Z2mpPiS_S_`, found 2"
    );
    let e = with_flags(
        &mp,
        "--grid 2 --buffer data:int32[1] --buffer flag:int32[1] --buffer out:int32[1] --forall 'out[1] == 42'",
    )
    .unwrap_err();
    assert_eq!(
        e,
        "command line:1:88: expected an element of a buffer (`NAME[i]`) or a variable of the kernel, found `out[1]`"
    );
    let e = with_flags(&mp, "--entry mq --grid 2").unwrap_err();
    assert_eq!(
        e,
        "command line:1:9: expected a kernel of the module: `_Z2mpPiS_S_` (mp), found `mq`"
    );
    // The demangled name selects the kernel.
    assert!(
        with_flags(
            &mp,
            "--entry mp --grid 2 --buffer data:int32[1] --buffer flag:int32[1] --buffer out:int32[1]"
        )
        .is_ok()
    );
}

/// A struct passed by value (`.param .align 8 .b8 P[32]`, `--struct`): its
/// fields are bound by offset and read by `ld.param` at their offsets, the
/// pointers as buffers and the scalar as a value; a field outside the
/// struct, a read of a byte no field binds, a `--buffer` for the struct and
/// a `--struct` for a pointer are refused at their positions; on the command
/// line `--struct` takes its place among `--buffer` flags.
#[test]
fn a_struct_parameter_is_bound_field_by_field() {
    let k = std::fs::read_to_string(root().join("kernels/mp_struct.ptx")).unwrap();
    const FIELDS: &str = "0:buffer=data:int32[1]; 8:buffer=flag:int32[1]; 16:buffer=out:int32[1]";
    let t = with_flags(
        &k,
        &format!(
            "--grid 2 --struct 'p{{{FIELDS}; 24:scalar=value:int32=7}}' --forall 'out[0] == 7'"
        ),
    )
    .unwrap();
    let r = engine::run(
        &t.program,
        &RunOptions {
            engine: EngineChoice::Both,
            ..RunOptions::default()
        },
    );
    assert!(r.disagreement.is_none());
    assert!(r.verdict.holds, "the scalar field is the value written");
    assert_eq!(
        ["data[0]", "flag[0]", "out[0]"].map(|n| t.program.address_named(n).is_some()),
        [true; 3]
    );
    let e = with_flags(
        &k,
        &format!("--grid 2 --struct 'p{{{FIELDS}; 32:scalar=value:int32=42}}'"),
    )
    .unwrap_err();
    assert_eq!(
        e,
        "command line:1:94: expected a field inside parameter `_Z9mp_struct6Params_param_0` (bytes 0 to 31), found bytes 32 to 35"
    );
    let e = with_flags(&k, &format!("--grid 2 --struct 'p{{{FIELDS}}}'")).unwrap_err();
    assert_eq!(
        e,
        "k.ptx:26:21: expected what ptxmc models (docs/kernels.md), found a 4-byte read at byte 24 of struct parameter `_Z9mp_struct6Params_param_0`"
    );
    let e = with_flags(&k, "--grid 2 --buffer data:int32[1]").unwrap_err();
    assert_eq!(
        e,
        "command line:1:19: expected `--struct` for parameter `_Z9mp_struct6Params_param_0` (`.b8 [32]`), found `--buffer`"
    );
    let mp = std::fs::read_to_string(root().join("kernels/mp_relaxed.ptx")).unwrap();
    let e = with_flags(
        &mp,
        "--grid 2 --struct 'p{0:buffer=data:int32[1]}' --buffer flag:int32[1] --buffer out:int32[1]",
    )
    .unwrap_err();
    assert_eq!(
        e,
        "command line:1:20: expected `--buffer` or `--scalar` for parameter `_Z2mpPiS_S__param_0` (`.u64`), found `--struct`"
    );
    // The command line: `ptxmc kernel` with `--struct` as a flag.
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args([
            "kernel",
            "kernels/mp_struct_relaxed.ptx",
            "--grid",
            "2",
            "--struct",
        ])
        .arg(format!("p{{{FIELDS}; 24:scalar=value:int32=42}}"))
        .args(["--exists", "out[0] == 0", "--engine", "both"])
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("Observation mp_struct Sometimes 1 1"),
        "{stdout}"
    );
}

#[test]
fn an_absurd_grid_is_refused() {
    let mp = std::fs::read_to_string(root().join("kernels/mp_acqrel.ptx")).unwrap();
    let e = with_flags(&mp, "--grid 65535,65535,65535 --block 1024").unwrap_err();
    assert_eq!(
        e,
        "command line:1:1: expected a launch of at most 64 threads (grid × block), found 288217182213504000 threads"
    );
}

#[test]
fn every_truncation_of_a_corpus_module_is_an_error_or_a_module_never_a_panic() {
    let text = std::fs::read_to_string(root().join("kernels/cas_lock.ptx")).unwrap();
    let launch = LaunchText::whole(
        "l",
        "--grid 2 --buffer lock:int32[1] --buffer counter:int32[1]",
    );
    let mut errors = 0;
    for cut in (0..text.len()).step_by(7) {
        if !text.is_char_boundary(cut) {
            continue;
        }
        if ptx::load_source("cut.ptx", &text[..cut], &launch).is_err() {
            errors += 1;
        }
    }
    assert!(errors > 0);
}

#[test]
fn a_loop_that_never_ends_statically_is_refused_at_its_branch() {
    let src = r#"
.version 9.5
.target sm_90a
.address_size 64
.visible .entry spin()
{
	.reg .b32 %r<3>;
	mov.u32 %r1, 0;
$L:
	add.s32 %r1, %r1, 1;
	bra.uni $L;
}
"#;
    let e = with_flags(src, "--grid 1").unwrap_err();
    assert_eq!(
        e,
        "k.ptx:10:2: expected a loop with a bounded trip count, or one controlled by a value loaded from memory, found a loop that unrolls more than 256 times"
    );
}

#[test]
fn ptxmc_kernel_runs_with_flags_and_exits_as_run() {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args([
            "kernel",
            "kernels/mp_relaxed.ptx",
            "--grid",
            "2",
            "--buffer",
            "data:int32[1]",
            "--buffer",
            "flag:int32[1]",
            "--buffer",
            "out:int32[1]",
            "--exists",
            "out[0] != 42",
            "--engine",
            "both",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("1:r2=1; 1:r3=0; data[0]=42; flag[0]=1; out[0]=0;"),
        "{stdout}"
    );
    assert!(stdout.contains("\nOk\n"), "{stdout}");
    // Divergent __syncthreads: thread 0 waits at `bar.sync 0` (`.aligned`)
    // while thread 1 of its warp spins elsewhere, so besides the hang the
    // kernel is undefined (`aligned_lane_away`): exit status 6.
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args([
            "kernel",
            "kernels/syncthreads_divergent.ptx",
            "--engine",
            "both",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(6));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "Undefined: a lane waits for good at an `.aligned` barrier that another lane of its \
             warp, which has not exited, never executes — P0 `bar.cta.sync 0` \
             (kernels/syncthreads_divergent.ptx:55:2 (syncthreads_divergent.cu:13)), P1 \
             `ld.volatile.global.u32 r2, flag[0]` (kernels/syncthreads_divergent.ptx:41:2 \
             (syncthreads_divergent.cu:16))"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("\nHang: spin — "), "{stdout}");
    // A .cu without an nvcc: a clear error, exit status 2.
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["kernel", "kernels/mp_acqrel.cu"])
        .env("PATH", "/nonexistent")
        .env_remove("NVCC")
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("pip install nvidia-cuda-nvcc"), "{stderr}");
}

/// Run `src` under `flags` with both engines; the verdict.
fn verdict(src: &str, flags: &str) -> bool {
    let t = with_flags(src, flags).unwrap();
    let r = engine::run(
        &t.program,
        &RunOptions {
            engine: EngineChoice::Both,
            ..RunOptions::default()
        },
    );
    assert!(r.disagreement.is_none(), "engines disagree");
    assert!(r.incomplete.is_none(), "incomplete");
    r.verdict.holds
}

const DYNAMIC: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.visible .entry d(.param .u64 d_param_0)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [d_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.u32 %r1, [%rd2];
	add.s32 %r2, %r1, 1;
	st.global.u32 [%rd2+4], %r2;
	setp.lt.u32 %p1, %r1, 5;
	selp.u32 %r3, 0, 0, %p1;
	@%p1 bra $SMALL;
	st.global.u32 [%rd2+8], 2;
	ret;
$SMALL:
	st.global.u32 [%rd2+8], 1;
	ret;
}
"#;

#[test]
fn dynamic_32_bit_arithmetic_wraps_and_unsigned_comparisons_are_unsigned() {
    let src = DYNAMIC.replace("\tselp.u32 %r3, 0, 0, %p1;\n", "");
    // 2147483647 + 1 wraps to -2147483648 at 32 bits.
    assert!(verdict(
        &src,
        "--buffer x:int32[3]={2147483647} --forall 'x[1] == -2147483648'"
    ));
    // -1 is 0xffffffff: not below 5 unsigned.
    assert!(verdict(
        &src,
        "--buffer x:int32[3]={-1} --forall 'x[1] == 0 && x[2] == 2'"
    ));
    assert!(verdict(
        &src,
        "--buffer x:int32[3]={4} --forall 'x[1] == 5 && x[2] == 1'"
    ));
    // A uint32 initial value of the full width is the same bit pattern.
    assert!(verdict(
        &src,
        "--buffer x:uint32[3]={4294967295} --forall 'x[2] == 2'"
    ));
}

#[test]
fn selp_on_a_loaded_predicate_is_decided_at_run_time() {
    let src = DYNAMIC.replace(
        "selp.u32 %r3, 0, 0, %p1;",
        "selp.u32 %r3, 7, 9, %p1;\n\tst.global.u32 [%rd2+12], %r3;",
    );
    assert!(verdict(
        &src,
        "--buffer x:int32[4]={4} --forall 'x[3] == 7'"
    ));
    assert!(verdict(
        &src,
        "--buffer x:int32[4]={-1} --forall 'x[3] == 9'"
    ));
}

#[test]
fn a_counter_in_a_loop_controlled_by_a_loaded_value_is_widened_to_a_register() {
    let src = r#"
.version 9.5
.target sm_90a
.address_size 64
.visible .entry w(.param .u64 w_param_0)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [w_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, 0;
$L:
	ld.volatile.global.u32 %r2, [%rd2];
	add.s32 %r1, %r1, 1;
	setp.eq.s32 %p1, %r2, 0;
	@%p1 bra $L;
	st.global.u32 [%rd2+4], %r1;
	ret;
}
"#;
    let t = with_flags(src, "--buffer x:int32[2]={1} --forall 'x[1] == 1'").unwrap();
    assert!(t.program.has_loops(), "the loop stays a loop");
    assert!(t.program.threads[0].code.len() < 60, "bounded code");
    assert!(verdict(src, "--buffer x:int32[2]={1} --forall 'x[1] == 1'"));
}

const TWO_KERNELS: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.visible .entry uses_floats(.param .u64 p)
{
	.reg .f32 %f<3>;
	tex.1d.v4.f32.s32 {%f1, %f2, %f1, %f2}, [tex, {%f1}];
	add.rn.ftz.f32 %f2, %f1, 0f3F800000;
	ret;
}
.visible .entry store_one(.param .u64 q)
{
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [q];
	cvta.to.global.u64 %rd2, %rd1;
	st.global.u32 [%rd2], 1;
	ret;
}
"#;

#[test]
fn a_module_reads_whole_and_only_the_checked_kernel_must_be_modelled() {
    // The other kernel's texture fetch and float arithmetic do not matter.
    assert!(verdict(
        TWO_KERNELS,
        "--entry store_one --buffer x:int32[1] --forall 'x[0] == 1'"
    ));
    let e = with_flags(TWO_KERNELS, "--buffer x:int32[1]").unwrap_err();
    assert_eq!(
        e,
        "command line:1:1: expected `--entry NAME` naming one kernel, found several kernels: `uses_floats`, `store_one`"
    );
    let e = with_flags(TWO_KERNELS, "--entry uses_floats --buffer x:int32[1]").unwrap_err();
    assert_eq!(
        e,
        "k.ptx:8:2: expected what ptxmc models (docs/kernels.md), found `tex.1d.v4.f32.s32`"
    );
}

/// A small deterministic generator for the mutation campaign.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn mutated_corpus_modules_and_launches_never_panic() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut outcomes = [0usize; 2];
    for name in [
        "mp_acqrel",
        "cas_lock",
        "grid_barrier",
        "shared_exchange",
        "ticket_lock",
    ] {
        let text = std::fs::read_to_string(root().join(format!("kernels/{name}.ptx"))).unwrap();
        let cu = std::fs::read_to_string(root().join(format!("kernels/{name}.cu"))).unwrap();
        let (at, launch) = ptx::launch::from_cuda_comment(&cu).unwrap();
        let _ = at;
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..300 {
            let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            let k = (xorshift(&mut rng) % l.len() as u64) as usize;
            match xorshift(&mut rng) % 6 {
                0 => {
                    l.remove(k);
                }
                1 => {
                    let dup = l[k].clone();
                    l.insert(k, dup);
                }
                2 => {
                    // Change a digit.
                    let b: Vec<char> = l[k].chars().collect();
                    if let Some(p) = b.iter().position(|c| c.is_ascii_digit()) {
                        let mut b = b.clone();
                        b[p] = char::from(b'0' + (xorshift(&mut rng) % 10) as u8);
                        l[k] = b.into_iter().collect();
                    }
                }
                3 => l[k] = l[k].replace("%r", "%rd").replace("u32", "u64"),
                4 => l[k] = l[k].replace("global", "shared"),
                _ => l[k] = l[k].replace(",", ", 4294967296,"),
            }
            let m = l.join("\n");
            let lt = if xorshift(&mut rng) % 4 == 0 {
                launch
                    .replace("[1]", "[0]")
                    .replace("--grid 2", "--grid 99999")
            } else {
                launch.to_string()
            };
            let r = ptx::load_source("m.ptx", &m, &LaunchText::whole("l", &lt));
            outcomes[r.is_ok() as usize] += 1;
            if let Ok(t) = r {
                t.program.validate().unwrap();
            }
        }
    }
    // The campaign reaches both outcomes.
    assert!(outcomes[0] > 100 && outcomes[1] > 100, "{outcomes:?}");
}

#[test]
fn the_launch_beside_a_kernel_is_a_launch_file_or_the_cuda_comment_with_positions() {
    let dir = std::env::temp_dir().join(format!("ptxmc-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptx_text = std::fs::read_to_string(root().join("kernels/mp_acqrel.ptx")).unwrap();
    // A `.launch` file wins over the `.cu` comment.
    std::fs::write(dir.join("k.ptx"), &ptx_text).unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "// x\n/* ptxmc-launch:\n   --grid 2\n   --buffer data:int32[1] --buffer flag:int32[1]\n   --buffer out:int32[1] --forall 'out[0] == 4 2'\n*/\n",
    )
    .unwrap();
    let e = ptx::load_file(&dir.join("k.ptx"), None, None).unwrap_err();
    // The comment's error is positioned in the `.cu`, line 5.
    assert_eq!(
        e.to_string(),
        format!(
            "{}:5:48: expected the end of the condition, found `2`",
            dir.join("k.cu").display()
        )
    );
    std::fs::write(
        dir.join("k.launch"),
        "--grid 2 --buffer data:int32[1] --buffer flag:int32[1] --buffer out:int32[1]\n--forall 'out[0] == 42'\n",
    )
    .unwrap();
    let t = ptx::load_file(&dir.join("k.ptx"), None, None).unwrap();
    assert_eq!(t.program.threads.len(), 2);
    assert_eq!(
        t.program.condition.quantifier,
        ptxmc::ir::Quantifier::Forall
    );
    // No launch anywhere: said so.
    std::fs::remove_file(dir.join("k.launch")).unwrap();
    std::fs::remove_file(dir.join("k.cu")).unwrap();
    let e = ptx::load_file(&dir.join("k.ptx"), None, None).unwrap_err();
    assert!(
        e.to_string().contains("expected a launch description"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ptxmc_kernel_json_lists_the_buffers() {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["kernel", "kernels/cas_lock.ptx", "--json"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v.to_string();
    assert!(text.contains("counter[0]"), "{text}");
}

/// The corpus on an H200 (`tests/data/hw/kernels/`, written by the kernel
/// runner `src/hw/ptxmc_kernel_hw.cu`: 10,000 or 20,000 launches plain and as many with
/// stress warps beside, per kernel, each kernel's own PTX assembled by ptxas
/// 13.5): every final state the GPU showed is one the model allows, every
/// hang is one the model finds and the one fault is a kernel the model finds
/// undefined (the `.cta` flag between CTAs that hung, `mp_block_scope`,
/// included since fairness holds only between morally strong accesses;
/// `docs/hardware-results.md`, "Kernels on the GPU").
#[test]
fn every_kernel_run_on_the_gpu_is_allowed_by_the_model() {
    use ptxmc::hw::compare::compare_kernel;
    use ptxmc::hw::histogram::Histogram;
    let mut compared = 0;
    let mut refused = Vec::new();
    let mut outside = Vec::new();
    let mut weak = 0;
    let dir = root().join("tests/data/hw/kernels");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let h = Histogram::read(&f).unwrap();
        let path = root().join(&h.test);
        let t = match ptx::load_file(&path, None, None) {
            Ok(t) => t,
            Err(_) => {
                refused.push(h.test.clone());
                continue;
            }
        };
        let c = compare_kernel(&h, &t.program).unwrap();
        assert!(!c.model_partial, "{}: the model's set is partial", h.test);
        if !c.ok() {
            outside.push((
                h.test.clone(),
                c.forbidden_observed.clone(),
                c.hang,
                c.fault,
            ));
        }
        if h.outcomes.len() > 1 {
            weak += 1;
        }
        compared += 1;
    }
    assert_eq!(compared, 82);
    // Every kernel that ran on the GPU is one the front end lowers.
    assert!(refused.is_empty(), "{refused:?}");
    // Nothing outside the model. `mp_block_scope` (a `.cta`-scoped
    // release/acquire flag between two CTAs) hung on the GPU — the acquire
    // load spins on its SM's stale L1 line — and the model finds that hang:
    // the store and the load are not morally strong, so fairness does not
    // make the store visible to the load (`docs/loops.md`, "Fairness").
    // Under `--fairness all` it was the one kernel outside.
    assert!(outside.is_empty(), "outside the model: {outside:?}");
    // Kernels where the GPU showed more than one final state (lost updates,
    // stale reads, store buffering, the TMA consumer that waits on the wrong
    // parity, the CTA barrier where cooperative groups' grid barrier was
    // needed): every state among the model's.
    assert_eq!(weak, 11);
}

/// The nvcc named by `NVCC`, or `None` where there is none to run (a
/// developer's machine without the wheels): the tests that need it return.
/// Under CI (`.ci/run` installs the wheels and sets `NVCC`) its absence
/// fails the test instead of skipping it.
fn nvcc_or_skip() -> Option<String> {
    let nvcc = std::env::var("NVCC").ok();
    assert!(
        nvcc.is_some() || std::env::var_os("CI").is_none(),
        "CI runs the nvcc tests with NVCC set (.ci/run installs the wheels)"
    );
    nvcc
}

/// A `.cu` compiled by a real nvcc (CI installs the registry's wheels and
/// sets `NVCC`, `.ci/run`): `ptxmc kernel` checks the CUDA source itself,
/// with the verdict of its checked-in PTX. Without `NVCC` outside CI there
/// is no compiler to run; under CI its absence fails the test.
#[test]
fn a_cuda_file_is_compiled_with_nvcc_and_checked() {
    let Some(nvcc) = nvcc_or_skip() else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args([
            "kernel",
            "kernels/mp_relaxed.cu",
            "--engine",
            "both",
            "--nvcc",
            &nvcc,
        ])
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("\nNo\n"), "{stdout}");
    assert!(stdout.contains("Observation mp Sometimes"), "{stdout}");
}

/// A `.cu` built on CUTLASS's `ClusterBarrier` compiles with the wheels'
/// nvcc (`.ci/run` installs nvidia-cutlass beside it; ptxmc passes its
/// include folder) and the remote arrival's `.cta` scope is found: the
/// read may miss the DSMEM store, with the note on the scopes.
#[test]
fn a_cutlass_kernel_is_compiled_with_the_cutlass_wheel_and_checked() {
    let Some(nvcc) = nvcc_or_skip() else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args([
            "kernel",
            "kernels/cutlass_cluster_barrier.cu",
            "--nvcc",
            &nvcc,
        ])
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("\nNo\n"), "{stdout}");
    assert!(
        stdout.contains("cannot synchronise: the .cta scope of the release does not include P1"),
        "{stdout}"
    );
}

/// A bulk copy of 16 bytes between an `int32` buffer and shared memory is
/// four element copies of 4 bytes each, element i to element i, every one
/// completing its bytes on the mbarrier (16 in all, what `expect_tx`
/// announced); a size that is no multiple of 16 is refused at the operand.
#[test]
fn a_bulk_copy_is_one_copy_per_element_with_its_bytes() {
    use ptxmc::ir::{AsyncSrc, Completion, Instr};
    let t = load("tma_one_stage.ptx");
    let p = &t.program;
    let copies: Vec<(String, String, i64, String)> = p.threads[0]
        .code
        .iter()
        .filter_map(|i| match i {
            Instr::AsyncCopy {
                dst,
                src: AsyncSrc::Addr(src),
                size,
                completion: Completion::Mbarrier(bar),
                ..
            } => Some((
                p.addresses[*dst].name.clone(),
                p.addresses[*src].name.clone(),
                *size,
                p.addresses[*bar].name.clone(),
            )),
            _ => None,
        })
        .collect();
    let want: Vec<(String, String, i64, String)> = (0..4)
        .map(|k| {
            (
                format!("_ZZ5stagePKiPiE3buf[{k}]"),
                format!("src[{k}]"),
                4,
                "_ZZ5stagePKiPiE4full[0]".to_string(),
            )
        })
        .collect();
    assert_eq!(copies, want);
    let src = std::fs::read_to_string(root().join("kernels/tma_one_stage.ptx")).unwrap();
    let flags = "--block 2 --buffer src:int32[4] --buffer out:int32[1]";
    let bad = src.replace("mov.u32 \t%r11, 16;", "mov.u32 \t%r11, 8;");
    assert_ne!(bad, src);
    let e = with_flags(&bad, flags).unwrap_err();
    assert!(
        e.contains("expected a size that is a positive multiple of 16 bytes (PTX ISA, cp.async.bulk), found 8 bytes"),
        "{e}"
    );
    // A 16-byte copy of an `int64` buffer is two copies of 8 bytes; the
    // stage read as 4-byte words then clashes with them, positioned.
    let e = with_flags(
        &src,
        "--block 2 --buffer src:int64[2] --buffer out:int32[1]",
    )
    .unwrap_err();
    assert!(
        e.contains("accesses of 8 bytes, as before at this address"),
        "{e}"
    );
}

/// The producer that arrives a second time while its `arrive.expect_tx`
/// still holds the phase open takes the pending count below zero: undefined
/// behaviour in both engines (the GPU faulted on it).
#[test]
fn the_extra_arrival_after_a_bulk_copy_is_undefined() {
    let t = load("tma_extra_arrive.ptx");
    let r = engine::run(
        &t.program,
        &RunOptions {
            engine: EngineChoice::Both,
            ..RunOptions::default()
        },
    );
    assert!(r.disagreement.is_none());
    let u = r.undefined.expect("undefined");
    assert!(
        matches!(u.kind, ptxmc::model::ub::UbKind::Mbarrier(_)),
        "{u:?}"
    );
    assert!(r.termination.hangs());
}

/// Reading a real SM90 pipeline kernel (issue 25, "Reading"): CUTLASS's
/// example 48 (a warp-specialised TMA + wgmma GEMM, `PipelineTmaAsync`),
/// compiled by the wheels' nvcc with the nvidia-cutlass headers (`.ci/run`
/// installs them, with nvidia-curand for the example's host utilities),
/// is read whole: every function, its mbarrier pipeline, TMA tensor copies,
/// `elect.sync` and wgmma instructions in the syntax tree.
#[test]
fn a_cutlass_sm90_pipeline_gemm_module_is_read_whole() {
    let Some(nvcc) = nvcc_or_skip() else {
        return;
    };
    let nvcc = PathBuf::from(nvcc);
    let cu13 = nvcc.parent().unwrap().parent().unwrap();
    // The wheels' site-packages: nvidia/cu13/bin/nvcc, three folders up.
    let site = cu13.parent().unwrap().parent().unwrap();
    let cutlass = site.join("cutlass_library").join("source");
    let example =
        cutlass.join("examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu");
    assert!(example.is_file(), "the nvidia-cutlass wheel beside nvcc");
    let out = std::env::temp_dir().join(format!("ptxmc-cutlass48-{}.ptx", std::process::id()));
    let status = Command::new(&nvcc)
        .args([
            "-ptx",
            "-lineinfo",
            "-std=c++17",
            "--expt-relaxed-constexpr",
            "-arch=sm_90a",
        ])
        .arg(format!("-I{}", cu13.join("include").display()))
        .arg(format!("-I{}", cu13.join("include/cccl").display()))
        .arg(format!("-I{}", cutlass.join("include").display()))
        .arg(format!(
            "-I{}",
            cutlass.join("tools/util/include").display()
        ))
        .arg(format!("-I{}", cutlass.join("examples/common").display()))
        .arg(&example)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "nvcc compiles CUTLASS example 48");
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let module =
        ptx::parser::parse(&text).unwrap_or_else(|d| panic!("example 48 parses: {}", d.message()));
    assert!(module.entries().count() >= 1);
    let mnemonics: Vec<&str> = module
        .functions
        .iter()
        .flat_map(|f| f.body.iter().map(|i| i.mnemonic.as_str()))
        .collect();
    for wanted in [
        "mbarrier.try_wait.parity.shared::cta.b64",
        "mbarrier.arrive.expect_tx.shared::cta.b64",
        "elect.sync",
        "wgmma.fence.sync.aligned",
        "wgmma.commit_group.sync.aligned",
    ] {
        assert!(mnemonics.contains(&wanted), "{wanted} in the module");
    }
    assert!(
        mnemonics
            .iter()
            .any(|m| m.starts_with("cp.async.bulk.tensor.3d")),
        "a 3D tensor TMA copy in the module"
    );
}

/// The multicast bulk copy of a hand-written kernel: one copy per element
/// and per CTA of the mask, into the same variable of each CTA, completing
/// on each CTA's own mbarrier (`docs/async.md` §8).
#[test]
fn a_multicast_bulk_copy_writes_every_cta_of_its_mask() {
    let ptx = "\
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 src)
{
 .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .b16 %rs<2>;
 .shared .align 16 .b8 buf[16];
 .shared .align 8 .b64 bar;
 ld.param.u64 %rd1, [src];
 cvta.to.global.u64 %rd2, %rd1;
 mov.u32 %r1, buf;
 mov.u32 %r2, bar;
 mbarrier.init.shared.b64 [%r2], 1;
 mov.u16 %rs1, 3;
 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd2], 16, [%r2], %rs1;
 ret;
}
";
    let t = with_flags(ptx, "--grid 2 --cluster 2 --buffer src:int64[2]").unwrap();
    let copies: Vec<String> = t.program.threads[0]
        .code
        .iter()
        .filter_map(|i| match i {
            ptxmc::ir::Instr::AsyncCopy {
                dst,
                completion: ptxmc::ir::Completion::Mbarrier(b),
                ..
            } => Some(format!(
                "{} {}",
                t.program.addresses[*dst].name, t.program.addresses[*b].name
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        copies,
        [
            "buf[0]@cta0 bar[0]@cta0",
            "buf[1]@cta0 bar[0]@cta0",
            "buf[0]@cta1 bar[0]@cta1",
            "buf[1]@cta1 bar[0]@cta1",
        ]
    );
    // A mask naming a CTA outside the cluster is refused where it is written.
    let e = with_flags(
        &ptx.replace("mov.u16 %rs1, 3;", "mov.u16 %rs1, 5;"),
        "--grid 2 --cluster 2 --buffer src:int64[2]",
    )
    .unwrap_err();
    assert!(
        e.contains("expected a mask of CTA ranks of the cluster (0..2), found 0x5 (rank 2)"),
        "{e}"
    );
    // `tensormap.replace` is refused by name.
    let e = with_flags(
        &ptx.replace(
            " mov.u16 %rs1, 3;",
            " tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r1], %rd2;",
        ),
        "--grid 2 --cluster 2 --buffer src:int64[2]",
    )
    .unwrap_err();
    assert_eq!(
        e,
        "k.ptx:14:2: expected what ptxmc models (docs/kernels.md), found \
         `tensormap.replace.tile.global_address.shared::cta.b1024.b64`"
    );
}

/// `wgmma` is a warpgroup instruction: `.aligned` makes all 128 threads of
/// the warpgroup execute it together (PTX ISA §9.7.15.5.2). The corpus's
/// wgmma kernels are launched as one thread, for which an H200 stops the
/// launch with "an illegal instruction was encountered"
/// (`tests/data/hw/kernels/wgmma_*.json`); the model reports the undefined
/// step at the first `wgmma` instruction, in both engines, so the GPU's
/// fault is one the model allows.
#[test]
fn a_wgmma_launched_with_fewer_than_128_threads_is_undefined() {
    let opts = RunOptions {
        engine: EngineChoice::Both,
        ..RunOptions::default()
    };
    // (`wgmma_nofence` is undefined first for its missing `wgmma.fence`,
    // `tests/tensor_core.rs`.)
    let (name, first) = ("wgmma_fenced.ptx", "wgmma.fence.sync.aligned");
    let t = load(name);
    let r = engine::run(&t.program, &opts);
    assert!(r.disagreement.is_none(), "{name}: engines disagree");
    let u = r.undefined.as_ref().expect("undefined");
    let rep = ptxmc::report::ub::of(&t, u);
    assert_eq!(rep.kind, "warpgroup", "{name}");
    assert_eq!(
        rep.what,
        format!(
            "P0 executes `{first}`, which all 128 threads of its warpgroup must execute \
             together, but the launch gives warpgroup 0 of its CTA 1 thread"
        ),
        "{name}"
    );
}

/// Which threads the launch leaves short of their warpgroup: a kernel's
/// launch has at most 64 threads, so every thread of a `wgmma` kernel is
/// (the whole-warpgroup rule is unit-tested in `ir::tensor_core`); each at
/// its first `wgmma` instruction, counting the threads of its warpgroup.
#[test]
fn a_kernels_warpgroup_is_short_of_threads() {
    let text = std::fs::read_to_string(root().join("kernels/wgmma_fenced.ptx")).unwrap();
    for block in [2u32, 64] {
        let t = with_flags(
            &text,
            &format!("--block {block} --buffer 'out:int32[1]={{-1}}'"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let s = &t.program.short_warpgroups;
        assert_eq!(s.len(), block as usize);
        for w in s {
            assert_eq!((w.warpgroup, w.present), (0, block));
            let th = &t.program.threads[w.thread];
            assert_eq!(
                ptxmc::litmus::print::instr(&t.program, th, &th.code[w.at]),
                "wgmma.fence.sync.aligned"
            );
        }
    }
}
