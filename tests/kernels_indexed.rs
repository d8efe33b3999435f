//! Addresses computed from loaded values in the kernel front end
//! (docs/kernels.md, "Run-time addresses"): an access through a pointer plus
//! a loaded index dispatches on the index at run time, one case per element
//! the access could name, and an address that names no element (out of
//! bounds, or not aligned to the access) is an undefined step
//! (`UndefinedStep::OutOfBounds`) after which the thread exits. Both engines
//! see ordinary branches on a register; they agree on every case here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use ptxmc::engine::{self, EngineChoice, RunOptions, RunResult};
use ptxmc::ir::UndefinedStep;
use ptxmc::litmus::LitmusTest;
use ptxmc::model::ub::UbKind;
use ptxmc::outcome::Columns;
use ptxmc::ptx::{self, LaunchText};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn load(name: &str) -> LitmusTest {
    ptx::load_file(&root().join("kernels").join(name), None, None)
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
}

/// `ptx_text` under the launch `flags`; the error's one-line form if it fails.
fn with_flags(ptx_text: &str, flags: &str) -> Result<LitmusTest, String> {
    ptx::load_source("k.ptx", ptx_text, &LaunchText::whole("command line", flags))
        .map_err(|e| e.to_string())
}

fn run(t: &LitmusTest, engine: EngineChoice) -> RunResult {
    let r = engine::run(
        &t.program,
        &RunOptions {
            engine,
            ..RunOptions::default()
        },
    );
    assert!(r.disagreement.is_none(), "engines disagree");
    assert!(r.incomplete.is_none(), "incomplete");
    assert!(!r.termination.hangs(), "hangs");
    r
}

/// Both engines, and each alone: the same final values of the named
/// locations (one string per outcome) and the same undefined step.
fn finals(
    t: &LitmusTest,
    names: &[&str],
) -> (BTreeSet<String>, Option<ptxmc::model::ub::Undefined>) {
    let both = run(t, EngineChoice::Both);
    for e in [EngineChoice::Op, EngineChoice::Ax] {
        let one = run(t, e);
        assert_eq!(one.outcomes, both.outcomes, "{e:?}: outcomes");
        assert_eq!(one.undefined, both.undefined, "{e:?}: undefined");
    }
    let cols = Columns::of(&t.program);
    let set = both
        .outcomes
        .iter()
        .map(|s| {
            let line = format!(" {}", cols.line(&t.program, s));
            names
                .iter()
                .map(|n| {
                    let at = line
                        .find(&format!(" {n}="))
                        .unwrap_or_else(|| panic!("{n} in {line}"));
                    let rest = &line[at + 1..];
                    rest[..rest.find(';').unwrap()].to_string()
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    (set, both.undefined)
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// `idx[0]` is loaded and scaled by `mad.wide.s32` onto `out` (how nvcc
/// indexes an array), then `out + 4*idx + 4` is written.
const MAD_WIDE: &str = r#"
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
{
	.reg .b32 %r<5>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [k_param_0];
	ld.param.u64 %rd2, [k_param_1];
	cvta.to.global.u64 %rd3, %rd1;
	cvta.to.global.u64 %rd4, %rd2;
	ld.global.u32 %r1, [%rd3];
	mad.wide.s32 %rd5, %r1, 4, %rd4;
	st.global.u32 [%rd5+4], 7;
	ret;
}
"#;

#[test]
fn a_loaded_index_names_the_element_it_computes() {
    let cases = [
        (0, "out[0]=0 out[1]=7 out[2]=0"),
        (1, "out[0]=0 out[1]=0 out[2]=7"),
        // The operand's +4 brings index -1 back to the first element.
        (-1, "out[0]=7 out[1]=0 out[2]=0"),
    ];
    for (index, outcome) in cases {
        let t = with_flags(
            MAD_WIDE,
            &format!(
                "--buffer idx:int32[1]={{{index}}} --buffer out:int32[3] --exists 'out[0] == 7'"
            ),
        )
        .unwrap();
        let (got, undefined) = finals(&t, &["out[0]", "out[1]", "out[2]"]);
        assert_eq!(got, set(&[outcome]), "index {index}");
        assert!(undefined.is_none(), "index {index}");
    }
}

#[test]
fn an_index_past_either_end_is_an_undefined_step_and_the_thread_exits() {
    for index in [2, -2, 1 << 20] {
        let t = with_flags(
            MAD_WIDE,
            &format!(
                "--buffer idx:int32[1]={{{index}}} --buffer out:int32[3] --exists 'out[0] == 7'"
            ),
        )
        .unwrap();
        let (got, undefined) = finals(&t, &["out[0]", "out[1]", "out[2]"]);
        // Nothing was written: the thread exited at the undefined step.
        assert_eq!(got, set(&["out[0]=0 out[1]=0 out[2]=0"]), "index {index}");
        let u = undefined.unwrap_or_else(|| panic!("index {index}: undefined"));
        assert_eq!(u.kind, UbKind::Step(UndefinedStep::OutOfBounds));
        let rep = ptxmc::report::ub::of(&t, &u);
        assert_eq!(rep.kind, "out-of-bounds");
        assert_eq!(rep.at.len(), 1);
        assert_eq!(rep.at[0].thread, "P0");
        // Named at the store as written.
        assert_eq!(rep.at[0].position, "k.ptx:15:2", "{rep:?}");
    }
}

/// A vector store into a shared variable at `s + 8*idx`: two elements,
/// aligned to the vector's 8 bytes; then two plain reads of `s[2]`, `s[3]`.
const SHARED_VECTOR: &str = r#"
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
{
	.reg .b32 %r<9>;
	.reg .b64 %rd<8>;
	.shared .align 8 .b8 s[16];
	ld.param.u64 %rd1, [k_param_0];
	ld.param.u64 %rd2, [k_param_1];
	cvta.to.global.u64 %rd3, %rd1;
	cvta.to.global.u64 %rd4, %rd2;
	ld.global.u32 %r1, [%rd3];
	mov.u64 %rd5, s;
	mul.wide.u32 %rd6, %r1, SCALE;
	add.s64 %rd7, %rd5, %rd6;
	st.shared.v2.u32 [%rd7], {5, 6};
	ld.shared.u32 %r2, [s+8];
	ld.shared.u32 %r3, [s+12];
	st.global.u32 [%rd4], %r2;
	st.global.u32 [%rd4+4], %r3;
	ret;
}
"#;

#[test]
fn a_vector_into_shared_memory_takes_the_elements_the_index_names() {
    let launch = |index: i64| {
        format!("--buffer idx:int32[1]={{{index}}} --buffer out:int32[2] --exists 'out[0] == 5'")
    };
    let ptx8 = SHARED_VECTOR.replace("SCALE", "8");
    let t = with_flags(&ptx8, &launch(1)).unwrap();
    let (got, u) = finals(&t, &["s[0]", "s[1]", "s[2]", "s[3]", "out[0]", "out[1]"]);
    assert_eq!(got, set(&["s[0]=0 s[1]=0 s[2]=5 s[3]=6 out[0]=5 out[1]=6"]));
    assert!(u.is_none());
    let t = with_flags(&ptx8, &launch(0)).unwrap();
    let (got, u) = finals(&t, &["s[0]", "s[1]", "s[2]", "s[3]", "out[0]", "out[1]"]);
    assert_eq!(got, set(&["s[0]=5 s[1]=6 s[2]=0 s[3]=0 out[0]=0 out[1]=0"]));
    assert!(u.is_none());
    // Scaled by 4, index 1 puts the 8-byte vector at byte 4: not aligned to
    // its size (PTX ISA 6.4.1), undefined.
    let ptx4 = SHARED_VECTOR.replace("SCALE", "4");
    let t = with_flags(&ptx4, &launch(1)).unwrap();
    let (got, u) = finals(&t, &["s[0]", "s[1]", "s[2]", "s[3]", "out[0]", "out[1]"]);
    assert_eq!(got, set(&["s[0]=0 s[1]=0 s[2]=0 s[3]=0 out[0]=0 out[1]=0"]));
    assert_eq!(u.unwrap().kind, UbKind::Step(UndefinedStep::OutOfBounds));
    let t = with_flags(&ptx4, &launch(2)).unwrap();
    let (got, _) = finals(&t, &["s[2]", "s[3]", "out[0]"]);
    assert_eq!(got, set(&["s[2]=5 s[3]=6 out[0]=5"]));
}

#[test]
fn what_a_run_time_address_cannot_do_is_refused_by_name() {
    assert_eq!(
        with_flags(MAD_WIDE, "--buffer idx:int32[1] --buffer out:int32[300]").unwrap_err(),
        "k.ptx:15:17: expected at most 256 elements a run-time address may name (bind a smaller \
         buffer), found an address computed from a loaded value into `out`, which has 300 \
         elements of 4 bytes"
    );
    let prefetch = MAD_WIDE.replace(
        "st.global.u32 [%rd5+4], 7;",
        "cp.async.bulk.prefetch.L2.global [%rd5], 16;",
    );
    assert_eq!(
        with_flags(&prefetch, "--buffer idx:int32[1] --buffer out:int32[3]").unwrap_err(),
        "k.ptx:15:36: expected what ptxmc models (docs/kernels.md), found an address computed \
         from a loaded value in `cp.async.bulk.prefetch.L2.global`"
    );
    let stored = MAD_WIDE.replace("st.global.u32 [%rd5+4], 7;", "st.global.u64 [%rd4], %rd5;");
    assert_eq!(
        with_flags(&stored, "--buffer idx:int32[1] --buffer out:int64[3]").unwrap_err(),
        "k.ptx:15:24: expected what ptxmc models (docs/kernels.md), found storing an address"
    );
}

#[test]
fn a_slot_published_by_its_index_is_read_at_that_index() {
    let names = ["out[0]"];
    let (got, u) = finals(&load("indexed_mp.ptx"), &names);
    assert_eq!(got, set(&["out[0]=42"]));
    assert!(u.is_none());
    let (got, u) = finals(&load("indexed_mp_relaxed.ptx"), &names);
    assert_eq!(got, set(&["out[0]=0", "out[0]=42"]));
    assert!(u.is_none());
    let t = load("indexed_mp_oob.ptx");
    let (got, u) = finals(&t, &names);
    assert_eq!(got, set(&["out[0]=0"]));
    let rep = ptxmc::report::ub::of(&t, &u.expect("undefined"));
    assert_eq!(rep.at[0].thread, "P1");
    // At the read of `table[i]`, line 18 of the `.cu`.
    assert!(
        rep.at[0].position.ends_with("(indexed_mp_oob.cu:18)"),
        "{}",
        rep.at[0].position
    );
}

#[test]
fn tickets_from_an_atomic_name_distinct_slots_and_the_unchecked_one_runs_past_the_end() {
    let names = ["items[0]", "items[1]", "items[2]"];
    let (got, u) = finals(&load("queue_append.ptx"), &names);
    assert!(u.is_none());
    // Every ordered choice of three of the four threads' items.
    let mut want = BTreeSet::new();
    for a in 1..=4 {
        for b in 1..=4 {
            for c in 1..=4 {
                if a != b && a != c && b != c {
                    want.insert(format!("items[0]={a} items[1]={b} items[2]={c}"));
                }
            }
        }
    }
    assert_eq!(got.len(), 24);
    assert_eq!(got, want);
    let t = load("queue_append_unchecked.ptx");
    let (got, u) = finals(&t, &names);
    assert_eq!(got, want);
    let u = u.expect("undefined");
    assert_eq!(u.kind, UbKind::Step(UndefinedStep::OutOfBounds));
    // The least witness: P0 takes ticket 3.
    assert_eq!(ptxmc::report::ub::of(&t, &u).at[0].thread, "P0");
}

#[test]
fn ptxmc_kernel_reports_the_out_of_bounds_step_with_exit_status_6() {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .current_dir(root())
        .args(["kernel", "kernels/indexed_mp_oob.ptx"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(6), "{text}");
    assert!(
        text.contains(
            "\nUndefined: P1 accesses an address, computed from a loaded value, that is no element \
             of the buffer or variable its pointer points into (out of bounds, or not aligned to an \
             element) — P1 `undefined.out_of_bounds` (kernels/indexed_mp_oob.ptx:"
        ),
        "{text}"
    );
    assert!(
        text.contains("PTX ISA 6.4.1, Addresses as Operands"),
        "{text}"
    );
}

/// CTA 0 stores `V` to `idx[0]` (relaxed); CTA 1 loads it and writes
/// `out[idx]`: the value it reads (the initial 0 or `V`) names the element.
const RACY_INDEX: &str = r#"
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
{
	.reg .pred %p<2>;
	.reg .b32 %r<5>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [k_param_0];
	ld.param.u64 %rd2, [k_param_1];
	cvta.to.global.u64 %rd3, %rd1;
	cvta.to.global.u64 %rd4, %rd2;
	mov.u32 %r2, %ctaid.x;
	setp.ne.s32 %p1, %r2, 0;
	@%p1 bra READER;
	st.relaxed.gpu.global.u32 [%rd3], VALUE;
	ret;
READER:
	ld.relaxed.gpu.global.u32 %r1, [%rd3];
	mul.wide.s32 %rd5, %r1, 4;
	add.s64 %rd6, %rd4, %rd5;
	st.global.u32 [%rd6], 7;
	ret;
}
"#;

/// Every buffer length 1..=4 and every stored index from -2 to one past
/// the end: the machine and the oracle agree on the final states and on
/// the undefined step, which is there exactly when the stored index is
/// outside the buffer (the reader may also read the initial 0).
#[test]
fn both_engines_agree_on_every_racy_index_in_and_out_of_bounds() {
    for len in 1..=4i64 {
        for value in -2..=len {
            let ptx_text = RACY_INDEX.replace("VALUE", &value.to_string());
            let t = with_flags(
                &ptx_text,
                &format!("--grid 2 --buffer idx:int32[1] --buffer out:int32[{len}] --exists 'out[0] == 7'"),
            )
            .unwrap();
            let names: Vec<String> = (0..len).map(|i| format!("out[{i}]")).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let (got, u) = finals(&t, &names);
            let line = |at: Option<i64>| {
                (0..len)
                    .map(|i| format!("out[{i}]={}", if Some(i) == at { 7 } else { 0 }))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let inside = (0..len).contains(&value);
            let mut want = set(&[&line(Some(0))]);
            want.insert(line(if inside { Some(value) } else { None }));
            assert_eq!(got, want, "len {len}, value {value}");
            assert_eq!(u.is_some(), !inside, "len {len}, value {value}");
        }
    }
}

/// A kernel written out as a litmus test (`ptxmc fix --emit` does it) reads
/// back as the same code: the dispatch's branches get labels, and the
/// undefined step is spelt `undefined.out_of_bounds`.
#[test]
fn the_dispatch_and_its_undefined_step_read_back_from_litmus_text() {
    for name in [
        "indexed_mp_oob.ptx",
        "queue_append_unchecked.ptx",
        "queue_append.ptx",
    ] {
        let t = load(name);
        let text = ptxmc::litmus::print::to_litmus(&t.program);
        assert!(text.contains("undefined.out_of_bounds"), "{text}");
        let again = ptxmc::litmus::parse_source("t.litmus", &text)
            .unwrap_or_else(|e| panic!("{name}: {}\n{text}", e.rendered()))
            .remove(0);
        for (a, b) in t.program.threads.iter().zip(&again.program.threads) {
            assert_eq!(a.code, b.code, "{name}:\n{text}");
        }
        let (x, y) = (run(&t, EngineChoice::Both), run(&again, EngineChoice::Both));
        assert_eq!(x.outcomes, y.outcomes, "{name}");
        assert_eq!(x.undefined, y.undefined, "{name}");
    }
}

/// `mov %r3, 5; @%p ld %r3, [a+4*i]; st [c+8], %r3`, nvcc's if-conversion:
/// when the run-time guard fails the register keeps its old value (before,
/// the skipped load's register read 0, and a copy of the old value made
/// for the load landed inside the skipped code).
const GUARDED: &str = r#"
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [k_param_0];
	ld.param.u64 %rd5, [k_param_1];
	cvta.to.global.u64 %rd2, %rd1;
	cvta.to.global.u64 %rd6, %rd5;
	ld.global.u32 %r1, [%rd6];
	ld.global.u32 %r2, [%rd6+4];
	ld.global.u32 %r4, [%rd6+12];
	mov.b32 %r5, %r4;
	mov.u32 %r3, 5;
	setp.ne.s32 %p1, %r2, 0;
	mul.wide.s32 %rd3, %r1, 4;
	add.s64 %rd4, %rd2, %rd3;
	@%p1 ld.global.u32 %r3, [%rd4];
	@%p1 ld.global.u32 %r4, [%rd4+4];
	@%p1 mov.u32 %r1, 9;
	st.global.u32 [%rd6+8], %r3;
	st.global.u32 [%rd6+12], %r5;
	st.global.u32 [%rd6+16], %r4;
	st.global.u32 [%rd6], %r1;
	ret;
}
"#;

#[test]
fn a_guarded_write_that_is_skipped_keeps_the_register_s_old_value() {
    for (guard, want) in [
        (0, "c[0]=1 c[2]=5 c[3]=77 c[4]=77"),
        (1, "c[0]=9 c[2]=11 c[3]=77 c[4]=12"),
    ] {
        let t = with_flags(
            GUARDED,
            &format!(
                "--buffer a:int32[4]={{10,11,12,13}} --buffer c:int32[5]={{1,{guard},0,77,0}}"
            ),
        )
        .unwrap();
        let (got, u) = finals(&t, &["c[0]", "c[2]", "c[3]", "c[4]"]);
        assert_eq!(got, set(&[want]), "guard {guard}");
        assert!(u.is_none());
    }
}

/// One thread stores out of bounds and exits; the other's loop (a store in
/// its body: no spin loop) is cut at the loop bound. The undefined step
/// retired before the cut: both engines report it (the machine noted
/// undefined steps only at final states that were not cut).
#[test]
fn an_undefined_step_before_a_cut_is_reported_by_both_engines() {
    const CUT: &str = r#"
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
{
	.reg .pred %p<3>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [k_param_0];
	ld.param.u64 %rd5, [k_param_1];
	cvta.to.global.u64 %rd2, %rd1;
	cvta.to.global.u64 %rd6, %rd5;
	mov.u32 %r3, %tid.x;
	setp.ne.s32 %p2, %r3, 0;
	@%p2 bra $W;
	ld.global.u32 %r1, [%rd6];
	mul.wide.s32 %rd3, %r1, 4;
	add.s64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], 5;
	st.relaxed.gpu.global.u32 [%rd6+4], 1;
	ret;
$W:
	ld.relaxed.gpu.global.u32 %r2, [%rd6+4];
	st.global.u32 [%rd6+8], %r2;
	setp.eq.s32 %p1, %r2, 0;
	@%p1 bra $W;
	ret;
}
"#;
    let t = with_flags(
        CUT,
        "--block 2 --buffer a:int32[2] --buffer c:int32[3]={5,0,0}",
    )
    .unwrap();
    for e in [EngineChoice::Op, EngineChoice::Ax, EngineChoice::Both] {
        let r = engine::run(
            &t.program,
            &RunOptions {
                engine: e,
                ..RunOptions::default()
            },
        );
        assert!(r.disagreement.is_none(), "{e:?}");
        let u = r.undefined.unwrap_or_else(|| panic!("{e:?}: undefined"));
        assert_eq!(u.kind, UbKind::Step(UndefinedStep::OutOfBounds), "{e:?}");
    }
}

/// A 32-bit shared address `smem + a + b` wraps at 32 bits, as on the GPU:
/// 0x7ffffffc + 0x7ffffffc + 8 is byte 0.
#[test]
fn a_32_bit_run_time_address_wraps_at_32_bits() {
    const WRAP: &str = r#"
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 %r<9>;
	.reg .b64 %rd<8>;
	.shared .align 4 .b8 smem[16];
	ld.param.u64 %rd1, [k_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.u32 %r1, [%rd2];
	ld.global.u32 %r2, [%rd2+4];
	mov.u32 %r3, smem;
	add.s32 %r4, %r3, %r1;
	add.s32 %r5, %r4, %r2;
	st.shared.u32 [%r5+8], 7;
	ld.shared.u32 %r6, [smem];
	st.global.u32 [%rd2+8], %r6;
	ret;
}
"#;
    let t = with_flags(WRAP, "--buffer g:int32[3]={2147483644,2147483644,0}").unwrap();
    let (got, u) = finals(&t, &["g[2]", "smem[0]"]);
    assert_eq!(got, set(&["g[2]=7 smem[0]=7"]));
    assert!(u.is_none());
}

#[test]
fn an_access_larger_than_its_buffer_through_a_run_time_address_is_refused() {
    let wide = MAD_WIDE.replace(
        "st.global.u32 [%rd5+4], 7;",
        "st.global.v4.u32 [%rd5], {1, 2, 3, 4};",
    );
    assert_eq!(
        with_flags(&wide, "--buffer idx:int32[1] --buffer out:int32[3]").unwrap_err(),
        "k.ptx:15:20: expected an access no larger than the buffer or variable it points into, \
         found an access of 16 bytes through an address computed from a loaded value into `out`, \
         which has 12 bytes"
    );
}
