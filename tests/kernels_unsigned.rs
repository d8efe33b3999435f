//! Unsigned `min`, `max`, `inc` and `dec` read-modify-writes in kernels
//! (docs/kernels.md, "Values"). A kernel keeps every value as a signed
//! number of its width (a `uint32` 0xffffffff is -1), and the PTX ISA
//! ("atom", "red", "cp.reduce.async.bulk.tensor") makes these operations
//! compare as the instruction's type says: `.u32`/`.u64` unsigned,
//! `.s32`/`.s64` signed, `inc`/`dec` `.u32` only. Each case runs the
//! machine and the oracle separately and asserts the exact final buffer of
//! each, around 2^31 and 2^32 - 1, with the operand an immediate and a
//! loaded value; signed instructions stay signed; the types the ISA does not
//! allow are errors at the type.

use std::collections::BTreeSet;

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::litmus::LitmusTest;
use ptxmc::outcome::Columns;
use ptxmc::ptx::{self, LaunchText};

/// `ptx_text` under the launch `flags`; the error's one-line form if it fails.
fn with_flags(ptx_text: &str, flags: &str) -> Result<LitmusTest, String> {
    ptx::load_source("k.ptx", ptx_text, &LaunchText::whole("command line", flags))
        .map_err(|e| e.to_string())
}

/// The final values of buffer `buf` (`len` elements), one line per final
/// state (`x[0]=1; x[1]=2;`), from `engine` alone; the run must finish.
fn finals_of(t: &LitmusTest, engine: EngineChoice, buf: &str, len: usize) -> BTreeSet<String> {
    let opts = RunOptions {
        engine,
        ..RunOptions::default()
    };
    let r = engine::run(&t.program, &opts);
    assert!(r.incomplete.is_none(), "incomplete");
    assert!(r.disagreement.is_none(), "engines disagree");
    assert!(!r.termination.hangs(), "hangs");
    let cols = Columns::of(&t.program);
    r.outcomes
        .iter()
        .map(|s| {
            let line = format!(" {}", cols.line(&t.program, s));
            (0..len)
                .map(|i| {
                    let name = format!(" {buf}[{i}]=");
                    let at = line
                        .find(&name)
                        .unwrap_or_else(|| panic!("{name} in {line}"));
                    let rest = &line[at + 1..];
                    format!("{};", &rest[..rest.find(';').unwrap()])
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The final states of `buf` from each engine alone; both the same.
fn finals(t: &LitmusTest, buf: &str, len: usize) -> BTreeSet<String> {
    let op = finals_of(t, EngineChoice::Op, buf, len);
    let ax = finals_of(t, EngineChoice::Ax, buf, len);
    assert_eq!(op, ax, "the machine's and the oracle's final states");
    op
}

/// A final state of `x` as the reports write it: 32-bit words as the
/// kernel keeps them (signed).
fn words(vals: &[u32]) -> String {
    vals.iter()
        .enumerate()
        .map(|(i, v)| format!("x[{i}]={};", *v as i32))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One thread: `x[1]` gets what `OP` returns (`%r1`); `%r2` holds `x[2]`.
const ONE: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [k_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.u32 %r2, [%rd2+8];
	OP
	st.global.u32 [%rd2+4], %r1;
	ret;
}
"#;

/// `x[0] = op(old, b)` by `atom.global.<op>.<ty>` with `b` an immediate and
/// with `b` loaded from `x[2]`, and by `red`: the final `x` of each engine.
fn one_rmw(op: &str, ty: &str, elem: &str, old: u32, b: u32) -> Vec<BTreeSet<String>> {
    // As the element type writes its values (`int32` -1, `uint32` 4294967295).
    let v = |w: u32| {
        if elem.starts_with('u') {
            w.to_string()
        } else {
            (w as i32).to_string()
        }
    };
    let flags = format!("--buffer 'x:{elem}[3]={{{},0,{}}}'", v(old), v(b));
    let b_imm = v(b);
    let forms = [
        format!("atom.global.{op}.{ty} %r1, [%rd2], {b_imm};"),
        format!("atom.global.{op}.{ty} %r1, [%rd2], %r2;"),
        format!("red.global.{op}.{ty} [%rd2], %r2;\n\tmov.u32 %r1, {old};"),
    ];
    forms
        .iter()
        .map(|f| {
            let src = ONE.replace("OP", f);
            let t = with_flags(&src, &flags).unwrap_or_else(|e| panic!("{f}: {e}"));
            finals(&t, "x", 3)
        })
        .collect()
}

/// Each form of `x[0] = op(old, b)` ends with `x = {new, old, b}`.
fn assert_rmw(op: &str, ty: &str, elem: &str, old: u32, b: u32, new: u32) {
    for (k, got) in one_rmw(op, ty, elem, old, b).into_iter().enumerate() {
        let want = BTreeSet::from([words(&[new, old, b])]);
        assert_eq!(
            got, want,
            "{op}.{ty} of {old:#x} and {b:#x} (form {k}): expected {new:#x}"
        );
    }
}

#[test]
fn unsigned_max_and_min_compare_the_full_32_bits() {
    // PTX ISA, atom: `.u32` compares unsigned; 0x80000000 is 2^31, above 1.
    assert_rmw("max", "u32", "uint32", 0x8000_0000, 1, 0x8000_0000);
    assert_rmw("max", "u32", "uint32", 1, 0xffff_ffff, 0xffff_ffff);
    assert_rmw(
        "max",
        "u32",
        "uint32",
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0000,
    );
    assert_rmw("min", "u32", "uint32", 0x8000_0000, 1, 1);
    assert_rmw(
        "min",
        "u32",
        "uint32",
        0xffff_ffff,
        0xffff_fffe,
        0xffff_fffe,
    );
    assert_rmw("min", "u32", "uint32", 0, 0xffff_ffff, 0);
}

#[test]
fn unsigned_inc_and_dec_wrap_at_their_bound_around_2_pow_31_and_2_pow_32() {
    // inc: (old >= b) ? 0 : old + 1; dec: (old == 0 || old > b) ? b : old - 1.
    assert_rmw("inc", "u32", "uint32", 5, 0xffff_ffff, 6);
    assert_rmw(
        "inc",
        "u32",
        "uint32",
        0x7fff_ffff,
        0xffff_ffff,
        0x8000_0000,
    );
    assert_rmw(
        "inc",
        "u32",
        "uint32",
        0x8000_0000,
        0xffff_ffff,
        0x8000_0001,
    );
    assert_rmw("inc", "u32", "uint32", 0xffff_ffff, 0xffff_ffff, 0);
    assert_rmw("inc", "u32", "uint32", 0x8000_0000, 3, 0);
    assert_rmw("dec", "u32", "uint32", 5, 0xffff_ffff, 4);
    assert_rmw("dec", "u32", "uint32", 0, 0xffff_ffff, 0xffff_ffff);
    assert_rmw(
        "dec",
        "u32",
        "uint32",
        0x8000_0000,
        0xffff_ffff,
        0x7fff_ffff,
    );
    assert_rmw("dec", "u32", "uint32", 0x8000_0000, 7, 7);
}

#[test]
fn signed_max_and_min_stay_signed() {
    // The same bits as `.s32`: 0x80000000 is -2^31, below 1.
    assert_rmw("max", "s32", "int32", 0x8000_0000, 1, 1);
    assert_rmw("min", "s32", "int32", 0x8000_0000, 1, 0x8000_0000);
    assert_rmw("max", "s32", "int32", 0xffff_ffff, 0, 0);
    assert_rmw("min", "s32", "int32", 0xffff_ffff, 0, 0xffff_ffff);
}

/// One thread, 64-bit words: `x[0] = OLD`, then `x[0] = op(x[0], x[1])`
/// (a launch writes no `uint64` value above 2^63 - 1: the kernel does).
const ONE_64: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [k_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	mov.b64 %rd5, OLD;
	st.global.u64 [%rd2], %rd5;
	ld.global.u64 %rd3, [%rd2+8];
	atom.global.OP %rd4, [%rd2], %rd3;
	ret;
}
"#;

#[test]
fn sixty_four_bit_max_and_min_follow_their_type() {
    let run = |op: &str, elem: &str, old: &str, b: i64| {
        let src = ONE_64.replace("OP", op).replace("OLD", old);
        let t = with_flags(&src, &format!("--buffer 'x:{elem}[2]={{0,{b}}}'"))
            .unwrap_or_else(|e| panic!("{e}"));
        finals(&t, "x", 2)
    };
    let state = |a: i64, b: i64| BTreeSet::from([format!("x[0]={a}; x[1]={b};")]);
    // 2^63 (0x8000000000000000, kept as -2^63) is above 1 unsigned, below it signed.
    let top = "0x8000000000000000";
    let all = "0xffffffffffffffff";
    assert_eq!(run("max.u64", "uint64", top, 1), state(i64::MIN, 1));
    assert_eq!(run("min.u64", "uint64", all, 1), state(1, 1));
    assert_eq!(run("max.s64", "int64", top, 1), state(1, 1));
    assert_eq!(run("min.s64", "int64", all, 1), state(-1, 1));
}

/// Two threads of one CTA: each `atom.<OP>` on `x[0]` with operand `A`
/// (thread 0) or `B` (thread 1), the value it read to `x[1 + tid]`.
const TWO: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred %p<2>;
	.reg .b32 %r<5>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [k_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r3, %tid.x;
	setp.eq.u32 %p1, %r3, 0;
	selp.u32 %r2, A, B, %p1;
	atom.global.OP %r1, [%rd2], %r2;
	mul.wide.u32 %rd3, %r3, 4;
	add.s64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4+4], %r1;
	ret;
}
"#;

#[test]
fn concurrent_unsigned_rmws_agree_in_every_order() {
    let two = |op: &str, a: u32, b: u32, init: u32| {
        let src = TWO
            .replace("OP", op)
            .replace("A,", &format!("{a},"))
            .replace("B,", &format!("{b},"));
        let t = with_flags(
            &src,
            &format!("--block 2 --buffer 'x:uint32[3]={{{init}}}'"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        finals(&t, "x", 3)
    };
    // max.u32 of 2^31 (thread 0) and 1 (thread 1) from 0: 2^31 whichever
    // goes first; the second reads the first's value.
    assert_eq!(
        two("max.u32", 0x8000_0000, 1, 0),
        BTreeSet::from([
            words(&[0x8000_0000, 0, 0x8000_0000]),
            words(&[0x8000_0000, 1, 0]),
        ])
    );
    // Two inc.u32 bounded by 0xffffffff from 0x7ffffffe: 0x80000000 (the
    // signed reading would wrap to 0 at once, -1 being the bound).
    assert_eq!(
        two("inc.u32", 0xffff_ffff, 0xffff_ffff, 0x7fff_fffe),
        BTreeSet::from([
            words(&[0x8000_0000, 0x7fff_fffe, 0x7fff_ffff]),
            words(&[0x8000_0000, 0x7fff_ffff, 0x7fff_fffe]),
        ])
    );
    // dec.u32 bounded by 0xffffffff from 1: 1 → 0 → 0xffffffff.
    assert_eq!(
        two("dec.u32", 0xffff_ffff, 0xffff_ffff, 1),
        BTreeSet::from([words(&[0xffff_ffff, 1, 0]), words(&[0xffff_ffff, 0, 1])])
    );
}

#[test]
fn a_stored_constant_is_kept_at_its_width() {
    // `st.u32 [x], 0xffffffff` writes what a uint32 4294967295 holds, so an
    // unsigned max of it against 0x80000000 keeps it.
    let src = ONE.replace(
        "OP",
        "st.global.u32 [%rd2], 4294967295;\n\tatom.global.max.u32 %r1, [%rd2], %r2;",
    );
    let t = with_flags(&src, "--buffer 'x:uint32[3]={0,0,2147483648}'").unwrap();
    assert_eq!(
        finals(&t, "x", 3),
        BTreeSet::from([words(&[0xffff_ffff, 0xffff_ffff, 0x8000_0000])])
    );
}

#[test]
fn types_the_isa_does_not_allow_are_errors_at_the_type() {
    let err = |op: &str| {
        with_flags(
            &ONE.replace("OP", &format!("atom.global.{op} %r1, [%rd2], %r2;")),
            "--buffer 'x:uint32[3]'",
        )
        .unwrap_err()
    };
    assert_eq!(
        err("min.b32"),
        "k.ptx:12:18: expected `.u32`, `.s32`, `.u64` or `.s64` (PTX ISA, atom: `.min` and `.max` compare integers, unsigned or signed as the type says), found `.b32` with `.min`"
    );
    assert_eq!(
        err("inc.s32"),
        "k.ptx:12:18: expected `.u32` (PTX ISA, atom: `.inc` and `.dec` are `.u32` only), found `.s32` with `.inc`"
    );
    assert_eq!(
        err("dec.b32"),
        "k.ptx:12:18: expected `.u32` (PTX ISA, atom: `.inc` and `.dec` are `.u32` only), found `.b32` with `.dec`"
    );
    // Operations that do not compare are not concerned.
    assert!(
        with_flags(
            &ONE.replace("OP", "atom.global.add.u32 %r1, [%rd2], %r2;"),
            "--buffer 'x:uint32[3]'"
        )
        .is_ok()
    );
}

/// One thread: four constant shared words reduced into the tensor `t` by
/// `cp.reduce.async.bulk.tensor` with operation `OP`.
const TENSOR: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.visible .entry k(
	.param .align 128 .b8 k_param_0[128]
)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<3>;
	.shared .align 128 .b8 buf[16];
	mov.b64 %rd1, k_param_0;
	mov.u32 %r1, buf;
	mov.u32 %r3, 0;
	st.shared.u32 [buf], 1;
	st.shared.u32 [buf+4], 4294967295;
	st.shared.u32 [buf+8], 2147483648;
	st.shared.u32 [buf+12], 5;
	fence.proxy.async.shared::cta;
	cp.reduce.async.bulk.tensor.1d.global.shared::cta.OP.tile.bulk_group [%rd1, {%r3}], [%r1];
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group 0;
	ret;
}
"#;

#[test]
fn tensor_reductions_compare_as_the_tensor_s_element_type() {
    let run = |op: &str, map: &str| {
        with_flags(&TENSOR.replace("OP", op), &format!("--tensormap '{map}'"))
            .map(|t| finals(&t, "t", 4))
    };
    let t = |v: [u32; 4]| {
        BTreeSet::from([v
            .iter()
            .enumerate()
            .map(|(i, v)| format!("t[{i}]={};", *v as i32))
            .collect::<Vec<_>>()
            .join(" ")])
    };
    // The shared words are 1, 0xffffffff, 0x80000000, 5.
    assert_eq!(
        run("max", "t:uint32[4]box[4]={2147483648,7,1,4294967295}"),
        Ok(t([0x8000_0000, 0xffff_ffff, 0x8000_0000, 0xffff_ffff]))
    );
    assert_eq!(
        run("max", "t:int32[4]box[4]={-2147483648,7,1,-1}"),
        Ok(t([1, 7, 1, 5]))
    );
    assert_eq!(
        run("min", "t:uint32[4]box[4]={2147483648,7,1,4294967295}"),
        Ok(t([1, 7, 1, 5]))
    );
    // inc bounded by the shared word: 0 >= 1? no: 1; 7 < 0xffffffff: 8;
    // 0x80000000 >= 0x80000000: 0; 0xffffffff >= 5: 0.
    assert_eq!(
        run("inc", "t:uint32[4]box[4]={0,7,2147483648,4294967295}"),
        Ok(t([1, 8, 0, 0]))
    );
    assert_eq!(
        run("inc", "t:int32[4]box[4]").unwrap_err(),
        "k.ptx:20:52: expected `.u32` (PTX ISA, atom: `.inc` and `.dec` are `.u32` only), found `.inc` on the `int32` tensor `t`"
    );
    assert_eq!(
        run("max", "t:float32[4]box[4]").unwrap_err(),
        "k.ptx:20:52: expected what ptxmc models (docs/kernels.md), found a reduction into the `float32` tensor `t`"
    );
}

/// A condition's constant compared with a buffer element is held as the
/// buffer holds its values: `x[1] == 4294967295` on a `uint32` buffer is
/// the -1 the engines keep (before, it compared with 2^32-1 and never
/// held); a constant the element type cannot hold is refused at its
/// position, either side of the comparison.
#[test]
fn a_condition_s_constants_are_held_at_the_element_s_width() {
    const COPY: &str = r#"
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 %r<5>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [k_param_0];
	cvta.to.global.u64 %rd3, %rd1;
	ld.global.u32 %r1, [%rd3];
	st.global.u32 [%rd3+4], %r1;
	ret;
}
"#;
    let t = with_flags(
        COPY,
        "--buffer x:uint32[2]={4294967295} --forall 'x[1] == 4294967295 /\\ 4294967295 == x[0]'",
    )
    .unwrap();
    let r = engine::run(
        &t.program,
        &RunOptions {
            engine: EngineChoice::Both,
            ..RunOptions::default()
        },
    );
    assert!(r.verdict.holds);
    // Either spelling of the width's value: -1 is the same `uint32`, and at
    // 64 bits `-1` names 2^64-1.
    for flags in [
        "--buffer x:uint32[2]={4294967295} --forall 'x[1] == -1'",
        "--buffer x:int32[2]={-1} --forall 'x[1] == 4294967295'",
    ] {
        let t = with_flags(COPY, flags).unwrap();
        let r = engine::run(&t.program, &RunOptions::default());
        assert!(r.verdict.holds, "{flags}");
    }
    assert_eq!(
        with_flags(COPY, "--buffer x:uint32[2] --exists 'x[1] == 4294967296'").unwrap_err(),
        "command line:1:40: expected a value of 32 bits (-2147483648 to 4294967295) for `x[1]` \
         (uint32), found `4294967296`"
    );
    assert_eq!(
        with_flags(COPY, "--buffer x:int32[2] --exists '-2147483649 != x[0]'").unwrap_err(),
        "command line:1:31: expected a value of 32 bits (-2147483648 to 4294967295) for `x[0]` \
         (int32), found `-2147483649`"
    );
}
