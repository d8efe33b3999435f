//! Tensor-core instructions (`wgmma`, `tcgen05`; `docs/tensor-core.md`):
//! the refusals by name with their exact messages, the canonical text, and
//! the Blackwell pipeline with its three classic bugs in both engines.

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::litmus;

fn refused(path: &str, src: &str) -> String {
    match litmus::parse_source(path, src) {
        Err(e) => e.rendered().to_string(),
        Ok(tests) => {
            let t = &tests[0];
            let d = ptxmc::model::Model::Ptx75
                .admit(&t.program, &t.spans)
                .expect_err("the test is refused");
            t.error(d).rendered().to_string()
        }
    }
}

#[test]
fn allocation_is_refused_by_name() {
    let src = "PTX t\n{ s @ shared cta 0 = 0; }\n P0@cta 0,cluster 0,gpu 0 ;\n tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [s], 32 ;\nexists (0:r0 == 0)\n";
    assert_eq!(
        refused("alloc.litmus", src),
        "error: expected a tcgen05 operation ptxmc models, found `tcgen05.alloc`
  --> alloc.litmus:4:10
  |
4 |  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [s], 32 ;
  |          ^^^^^ `tcgen05.alloc` is not supported by ptxmc
  |
  = tensor-memory allocation is not modelled: declare the cells a test uses (`t @ tmem cta N`), as if allocated before the test (docs/tensor-core.md)

"
    );
}

#[test]
fn shift_is_refused_by_name() {
    let src = "PTX t\n{ t @ tmem cta 0 = 0; }\n P0@cta 0,cluster 0,gpu 0 ;\n tcgen05.shift.cta_group::1.down [t] ;\nexists (0:r0 == 0)\n";
    let r = refused("shift.litmus", src);
    assert!(r.starts_with("error: expected a tcgen05 operation ptxmc models, found `tcgen05.shift`\n  --> shift.litmus:4:10\n"), "{r}");
    assert!(
        r.contains("= shifting rows of tensor memory is not modelled"),
        "{r}"
    );
}

#[test]
fn tensor_memory_is_for_tcgen05_only() {
    let src = "PTX t\n{ t @ tmem cta 0 = 0; }\n P0@cta 0,cluster 0,gpu 0 ;\n ld.shared::cta r0, t ;\nexists (P0:r0 == 0)\n";
    assert_eq!(
        refused("generic.litmus", src),
        "error: expected an ordinary location, found tensor-memory cell `t`
  --> generic.litmus:4:21
  |
4 |  ld.shared::cta r0, t ;
  |                     ^ tensor memory is accessed by tcgen05 instructions only

"
    );
}

#[test]
fn issuers_are_straight_line() {
    let src = "PTX t\n{ s @ shared cta 0 = 5; w @ shared cta 0 = 7; t @ tmem cta 0 = 0; }\n P0@cta 0,cluster 0,gpu 0 ;\n mov r0, 1 ;\n beq r0, 0, L ;\n tcgen05.mma.cta_group::1.kind::f16 [t], [s], [w], 0, 0 ;\n L: ;\nexists (P0:r0 == 1)\n";
    assert_eq!(
        refused("branch.litmus", src),
        "error: expected straight-line code in a thread that issues tensor-core operations, found `beq r0, 0, L`
  --> branch.litmus:5:2
  |
5 |  beq r0, 0, L ;
  |  ^^^^^^^^^^^^
  |
  = P0 issues `tcgen05.mma.cta_group::1.kind::f16 [t], [s], [w], 0, 0`; which tensor-core operations a wait completes, and what orders each, are laid out statically (docs/tensor-core.md)

"
    );
}

#[test]
fn results_need_their_wait() {
    let src = "PTX t\n{ t @ tmem cta 0 = 0; x=0; }\n P0@cta 0,cluster 0,gpu 0 ;\n tcgen05.ld.sync.aligned.32x32b.x1.b32 r0, [t] ;\n st.global x, 1 ;\nexists (x == 1)\n";
    assert_eq!(
        refused("ld.litmus", src),
        "error: expected a later `tcgen05.wait::ld` that completes it, found none
  --> ld.litmus:4:2
  |
4 |  tcgen05.ld.sync.aligned.32x32b.x1.b32 r0, [t] ;
  |  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ its result never reaches the register

"
    );
    let src = "PTX t\n{ s @ shared cta 0 = 5; w @ shared cta 0 = 7; }\n P0@cta 0,cluster 0,gpu 0 ;\n wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 d, [s], [w], 1 ;\n wgmma.commit_group.sync.aligned ;\n wgmma.wait_group.sync.aligned 0 ;\nexists (P0:d == 0)\n";
    let r = refused("scale.litmus", src);
    assert!(
        r.starts_with("error: expected scale-d 0, or an earlier `wgmma.mma_async` into the same register, found scale-d 1 onto a register value\n  --> scale.litmus:4:2\n"),
        "{r}"
    );
}

/// The printed text reads back as the same program: waits are printed
/// without the results they deliver, which the parser adds again.
#[test]
fn canonical_text_round_trips() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let files =
        litmus::collect_files(&[root.join("litmus/wgmma"), root.join("litmus/tcgen05")]).unwrap();
    assert!(files.len() >= 17);
    for f in files {
        let t = litmus::parse_file(&f).unwrap().remove(0);
        let text = litmus::print::to_litmus(&t.program);
        let back = litmus::parse_source("printed.litmus", &text)
            .unwrap_or_else(|e| panic!("{}: {}", f.display(), e.rendered()))
            .remove(0);
        assert_eq!(back.program, t.program, "{}", f.display());
    }
}

fn run(name: &str) -> (bool, Vec<String>) {
    let f = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("litmus/tcgen05")
        .join(format!("{name}.litmus"));
    let t = litmus::parse_file(&f).unwrap().remove(0);
    let r = engine::run(
        &t.program,
        &RunOptions {
            engine: EngineChoice::Both,
            ..RunOptions::default()
        },
    );
    assert!(r.disagreement.is_none(), "{name}: engines disagree");
    assert!(r.incomplete.is_none(), "{name}");
    let cols = ptxmc::outcome::Columns::of(&t.program);
    let lines = r
        .outcomes
        .iter()
        .map(|o| cols.line(&t.program, o))
        .collect();
    (r.verdict.holds, lines)
}

/// The Blackwell pipeline (TMA → tcgen05.mma → tcgen05.commit → epilogue
/// tcgen05.ld): each classic bug shows its stale value, each fix forbids it.
#[test]
fn blackwell_pipeline_bugs_are_found_and_fixes_forbid_them() {
    for (fixed, buggy, witness) in [
        (
            "Pipeline-tma-mma-ld",
            "Pipeline-tma-mma-ld-no-fence-epilogue",
            "1:r0=1; 2:r2=1; 2:r3=0;",
        ),
        (
            "Pipeline-tma-mma-ld",
            "Pipeline-tma-mma-ld-no-fence-mma",
            "1:r0=1; 2:r2=1; 2:r3=7;",
        ),
        (
            "Pipeline-2acc-commit",
            "Pipeline-2acc-commit-wrong-barrier",
            "1:r0=1; 2:r2=1; 2:r3=0;",
        ),
        (
            "Pipeline-tmem-reuse",
            "Pipeline-tmem-reuse-before-wait-ld",
            "0:r1=1; 1:r2=1; 1:r3=9007;",
        ),
    ] {
        let (holds, lines) = run(buggy);
        assert!(holds, "{buggy}: the bug is found");
        assert!(
            lines.iter().any(|l| l.starts_with(witness)),
            "{buggy}: {witness} in {lines:?}"
        );
        let (holds, lines) = run(fixed);
        assert!(!holds, "{fixed}: the fix forbids it");
        assert!(!lines.iter().any(|l| l.starts_with(witness)), "{fixed}");
    }
}

/// A corpus kernel (`kernels/NAME`) with `from` replaced by `to`, under its
/// own launch: the rendered refusal.
fn kernel_refused(name: &str, from: &str, to: &str) -> String {
    use ptxmc::ptx::{self, LaunchText};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let src = std::fs::read_to_string(root.join(name)).unwrap();
    let bad = src.replacen(from, to, 1);
    assert_ne!(bad, src, "{from} not in {name}");
    let cu = std::fs::read_to_string(root.join(name).with_extension("cu")).unwrap();
    let (_, launch) = ptx::launch::from_cuda_comment(&cu).expect("the .cu has its launch comment");
    let launch = LaunchText::whole("launch", launch);
    ptx::load_source("k.ptx", &bad, &launch)
        .expect_err("refused")
        .rendered()
        .to_string()
}

/// A matrix descriptor whose start address lies in no shared variable is
/// refused at the operand, with the layout of the shared window.
#[test]
fn a_descriptor_of_no_shared_variable_is_refused_at_its_operand() {
    assert_eq!(
        kernel_refused(
            "wgmma_fenced.ptx",
            "mov.u32 \t%r2, _ZZ8wgmma_mpPiE1a;",
            "mov.u32 \t%r2, 65536;"
        ),
        "error: expected a descriptor of a shared variable (`_ZZ8wgmma_mpPiE1a` at 0x400..0xc00, `_ZZ8wgmma_mpPiE1b` at 0xc00..0xd00), found a descriptor of A whose start address is 0x10000
   --> k.ptx:63:73
   |
63 | wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, p, 1, 1, 0, 0;
   |                                                                         ^^^^
   |
   = a shared variable's address used as a number is its address in the shared window, where ptxmc lays variables out from 0x400, each aligned to 1024 bytes (docs/kernels.md)

"
    );
}

/// What the litmus dialect refuses stays refused in kernels, in its words:
/// a CTA pair's MMA.
#[test]
fn a_cta_pair_mma_in_a_kernel_is_refused_by_name() {
    assert_eq!(
        kernel_refused(
            "tcgen05_pipeline.ptx",
            "tcgen05.mma.cta_group::1.kind::f16",
            "tcgen05.mma.cta_group::2.kind::f16"
        ),
        "error: expected `.cta_group::1` and `.kind::KIND`, found `.cta_group::2`
    --> k.ptx:165:13
    |
165 | tcgen05.mma.cta_group::2.kind::f16 [%r2], %rd5, %rd6, %r15, p;
    |             ^^^^^^^^^^^^ `.cta_group::2` is not supported by ptxmc
    |
    = a CTA pair's tensor cores (`cta_group::2`) are not modelled: one CTA's tensor memory only

"
    );
}

/// One location stands for a whole operand tile: an access to another
/// element of the tile is refused at the descriptor, never left out of the
/// MMA's read.
#[test]
fn an_access_inside_an_operand_tile_is_refused_at_the_descriptor() {
    assert_eq!(
        kernel_refused(
            "tcgen05_pipeline.ptx",
            "st.shared.b16 \t[_ZZ16tcgen05_pipelinePiS_E1a], 5;",
            "st.shared.b16 \t[_ZZ16tcgen05_pipelinePiS_E1a+2], 5;"
        ),
        "error: expected what ptxmc models (docs/kernels.md), found an access to `_ZZ16tcgen05_pipelinePiS_E1a[1]` (bytes 2..4), inside the operand tile this descriptor names (bytes 0..2048 of `_ZZ16tcgen05_pipelinePiS_E1a`)
    --> k.ptx:165:43
    |
165 | tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd5, %rd6, %r15, p;
    |                                           ^^^^ not supported by ptxmc
    |
    = one location stands for a whole operand tile, its first element (docs/tensor-core.md §2): write and read the tile through its first element

"
    );
}

/// The tensor-memory address comes from the word `tcgen05.alloc` wrote;
/// a store to that word is refused by name (allocation is not memory).
#[test]
fn a_store_to_the_allocated_word_is_refused_by_name() {
    let e = kernel_refused(
        "tcgen05_pipeline.ptx",
        "st.shared.b16 \t[_ZZ16tcgen05_pipelinePiS_E1b], 7;",
        "st.shared.b32 \t[_ZZ16tcgen05_pipelinePiS_E9tmem_base], 7;",
    );
    assert!(
        e.starts_with("error: expected what ptxmc models (docs/kernels.md), found `st.shared.b32` of the word `tcgen05.alloc` wrote\n"),
        "{e}"
    );
}

/// The kernels' MMAs lower to the dialect's instructions: the wgmma
/// kernel's fragment of four registers is one register that the wait
/// delivers, its tiles the first elements of the shared arrays.
#[test]
fn the_wgmma_kernel_lowers_to_the_dialects_instructions() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let t = ptxmc::ptx::load_file(&root.join("wgmma_fenced.ptx"), None, None).unwrap();
    let th = &t.program.threads[0];
    let text: Vec<String> = th
        .code
        .iter()
        .filter(|i| matches!(i, ptxmc::ir::Instr::Tensor { .. }))
        .map(|i| ptxmc::litmus::print::instr(&t.program, th, i))
        .collect();
    assert_eq!(
        text,
        [
            "wgmma.fence.sync.aligned",
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 f1, [_ZZ8wgmma_mpPiE1a[0]], [_ZZ8wgmma_mpPiE1b[0]], 0",
            "wgmma.commit_group.sync.aligned",
            "wgmma.wait_group.sync.aligned 0",
            "(result of instruction 5 into f1)",
        ]
    );
}

/// Run `src` (named `name`) on one engine: its least undefined step, in the
/// herd text's words.
fn undefined_line(name: &str, src: &str, engine: EngineChoice) -> Option<String> {
    let t = litmus::parse_source(name, src).unwrap().remove(0);
    let r = engine::run(
        &t.program,
        &RunOptions {
            engine,
            ..RunOptions::default()
        },
    );
    assert!(r.incomplete.is_none(), "{name}");
    r.undefined
        .map(|u| ptxmc::report::ub::line(&ptxmc::report::ub::of(&t, &u)))
}

const WGMMA_HEAD: &str = "PTX t\n{ s @ shared cta 0 = 5; w @ shared cta 0 = 7; x = 0; }\n P0@cta 0,cluster 0,gpu 0 ;\n wgmma.fence.sync.aligned ;\n wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 d, [s], [w], 0 ;\n wgmma.commit_group.sync.aligned ;\n";

const ISA_26: &str = "PTX ISA 9.7.15.7.3, wgmma.wait_group: \"Accessing the accumulator register or the input register containing the fragments of matrix A of a wgmma.mma_async instruction without first performing a wgmma.wait_group instruction that waits on a wgmma-group including that wgmma.mma_async instruction is undefined behavior.\"";

/// Reading or writing a `wgmma.mma_async` accumulator before the wait that
/// completes it is undefined in both engines, which name the same step:
/// the register, the access, the wait and the MMA (issue 26).
#[test]
fn accumulator_accesses_before_the_wait_are_undefined_in_both_engines() {
    let read = format!(
        "{WGMMA_HEAD} add r0, d, 1 ;\n wgmma.wait_group.sync.aligned 0 ;\nexists (P0:r0 == 1)\n"
    );
    let want = format!(
        "Undefined: P0 reads `d` (`add r0, d, 1`) before `wgmma.wait_group.sync.aligned 0` completes `wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 d, [s], [w], 0`, which writes it — P0 `wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 d, [s], [w], 0` (r.litmus:5:2), P0 `add r0, d, 1` (r.litmus:7:2), P0 `wgmma.wait_group.sync.aligned 0` (r.litmus:8:2); {ISA_26}"
    );
    for engine in [EngineChoice::Op, EngineChoice::Ax] {
        assert_eq!(
            undefined_line("r.litmus", &read, engine).as_deref(),
            Some(want.as_str()),
            "{engine:?}"
        );
    }
    // A store's value, and a write.
    let store = format!(
        "{WGMMA_HEAD} st.global x, d ;\n wgmma.wait_group.sync.aligned 0 ;\nexists (x == 0)\n"
    );
    let write = format!(
        "{WGMMA_HEAD} mov d, 3 ;\n wgmma.wait_group.sync.aligned 0 ;\nexists (P0:d == 3)\n"
    );
    for engine in [EngineChoice::Op, EngineChoice::Ax] {
        let s = undefined_line("s.litmus", &store, engine).unwrap();
        assert!(
            s.starts_with("Undefined: P0 reads `d` (`st.weak.global x, d`) before"),
            "{s}"
        );
        let w = undefined_line("w.litmus", &write, engine).unwrap();
        assert!(
            w.starts_with("Undefined: P0 writes `d` (`mov d, 3`) before"),
            "{w}"
        );
    }
    // After the wait, and a pipelined MMA into the same accumulator: defined.
    let after = format!(
        "{WGMMA_HEAD} wgmma.wait_group.sync.aligned 0 ;\n add r0, d, 1 ;\nexists (P0:r0 == 5008)\n"
    );
    let chain = format!(
        "{WGMMA_HEAD} wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 d, [s], [w], 1 ;\n wgmma.commit_group.sync.aligned ;\n wgmma.wait_group.sync.aligned 0 ;\nexists (P0:d == 5007005007)\n"
    );
    for engine in [EngineChoice::Op, EngineChoice::Ax] {
        assert_eq!(undefined_line("a.litmus", &after, engine), None);
        assert_eq!(undefined_line("c.litmus", &chain, engine), None);
    }
}

const ISA_FENCE: &str = "PTX ISA 9.7.15.7.1, wgmma.fence: \"The wgmma.fence instruction must be issued by all warps of the warpgroup at the following locations: Before the first wgmma.mma_async operation in a warpgroup. Between a register access by a thread in the warpgroup and any wgmma.mma_async instruction that accesses the same registers, either as accumulator or input register containing fragments of matrix A, except when these are accumulator register accesses across multiple wgmma.mma_async instructions of the same shape. ... Otherwise, the behavior is undefined.\"";

const MMA_D: &str = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 d, [s], [w]";

/// A `wgmma.mma_async` without the `wgmma.fence` the ISA requires (before
/// the thread's first one; between an access to its accumulator and it) is
/// undefined in both engines, which name the same step; the fenced forms,
/// an access before the fence and a pipelined MMA are defined (issue 26).
#[test]
fn wgmma_without_its_wgmma_fence_is_undefined_in_both_engines() {
    let head = "PTX t\n{ s @ shared cta 0 = 5; w @ shared cta 0 = 7; x = 0; }\n P0@cta 0,cluster 0,gpu 0 ;\n";
    let tail = " wgmma.commit_group.sync.aligned ;\n wgmma.wait_group.sync.aligned 0 ;\n";
    // No fence before the first MMA.
    let first = format!("{head} {MMA_D}, 0 ;\n{tail}exists (P0:d == 5007)\n");
    let want_first = format!(
        "Undefined: P0 issues `{MMA_D}, 0`, its first `wgmma.mma_async`, with no `wgmma.fence` before it — P0 `{MMA_D}, 0` (f.litmus:4:2); {ISA_FENCE}"
    );
    // A write of the accumulator between the fence and the MMA.
    let write = format!(
        "{head} wgmma.fence.sync.aligned ;\n mov d, 0 ;\n {MMA_D}, 0 ;\n{tail}exists (P0:d == 5007)\n"
    );
    let want_write = format!(
        "Undefined: P0 writes `d` (`mov d, 0`) and then issues `{MMA_D}, 0`, which accesses it, with no `wgmma.fence` between — P0 `mov d, 0` (w.litmus:5:2), P0 `{MMA_D}, 0` (w.litmus:6:2); {ISA_FENCE}"
    );
    // A read of the result, then an MMA accumulating onto it unfenced.
    let read = format!(
        "{head} wgmma.fence.sync.aligned ;\n {MMA_D}, 0 ;\n{tail} mov r0, d ;\n {MMA_D}, 1 ;\n{tail}exists (P0:r0 == 5007)\n"
    );
    for (name, src, want) in [
        ("f.litmus", &first, Some(want_first.as_str())),
        ("w.litmus", &write, Some(want_write.as_str())),
        ("r.litmus", &read, None),
    ] {
        for engine in [EngineChoice::Op, EngineChoice::Ax] {
            let got = undefined_line(name, src, engine).expect(name);
            match want {
                Some(w) => assert_eq!(got, w, "{name} {engine:?}"),
                None => assert!(
                    got.starts_with(&format!(
                        "Undefined: P0 reads `d` (`mov r0, d`) and then issues `{MMA_D}, 1`"
                    )),
                    "{got}"
                ),
            }
        }
    }
    // Defined: the access before the fence, the fence before the second
    // MMA, a pipelined MMA into the same accumulator, another accumulator.
    let defined = [
        format!(
            "{head} mov d, 0 ;\n wgmma.fence.sync.aligned ;\n {MMA_D}, 0 ;\n{tail}exists (P0:d == 5007)\n"
        ),
        format!(
            "{head} wgmma.fence.sync.aligned ;\n {MMA_D}, 0 ;\n{tail} mov r0, d ;\n wgmma.fence.sync.aligned ;\n {MMA_D}, 1 ;\n{tail}exists (P0:d == 5007005007)\n"
        ),
        format!(
            "{head} wgmma.fence.sync.aligned ;\n {MMA_D}, 0 ;\n{tail} {MMA_D}, 1 ;\n{tail}exists (P0:d == 5007005007)\n"
        ),
        format!(
            "{head} wgmma.fence.sync.aligned ;\n {MMA_D}, 0 ;\n{tail} mov r0, d ;\n wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 e, [s], [w], 0 ;\n{tail}exists (P0:e == 5007)\n"
        ),
    ];
    for src in &defined {
        for engine in [EngineChoice::Op, EngineChoice::Ax] {
            assert_eq!(undefined_line("d.litmus", src, engine), None, "{src}");
        }
    }
}

/// Kernels: the front end refuses an access to an accumulator register
/// between the thread's last `wgmma.fence` and the `wgmma.mma_async`, at the
/// MMA; the same access before the fence is accepted. A kernel with no
/// `wgmma.fence` at all (`wgmma_nofence`) is undefined in both engines.
#[test]
fn kernels_check_the_wgmma_fence_register_rule() {
    let mma = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}";
    let e = kernel_refused(
        "wgmma_fenced.ptx",
        "setp.ne.b32 p, %r1, 0;",
        "setp.ne.b32 p, %r1, 0;\nmov.b32 %f2, %r1;",
    );
    assert!(
        e.starts_with("error: expected a `wgmma.fence` between an access to `%f2` (`mov.b32`) and this `wgmma.mma_async`, whose accumulator `%f2` is, found no `wgmma.fence` since that access to `%f2`\n   --> k.ptx:64:57\n"),
        "{e}"
    );
    assert!(e.contains(mma), "{e}");
    assert!(e.contains("PTX ISA 9.7.15.7.1"), "{e}");
    // Before the fence: accepted.
    use ptxmc::ptx::{self, LaunchText};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let src = std::fs::read_to_string(root.join("wgmma_fenced.ptx")).unwrap();
    let ok = src.replacen(
        "\twgmma.fence.sync.aligned;",
        "\tmov.b32 %f2, %r1;\n\twgmma.fence.sync.aligned;",
        1,
    );
    assert_ne!(ok, src);
    let cu = std::fs::read_to_string(root.join("wgmma_fenced.cu")).unwrap();
    let (_, launch) = ptx::launch::from_cuda_comment(&cu).unwrap();
    assert!(ptx::load_source("k.ptx", &ok, &LaunchText::whole("launch", launch)).is_ok());
    // No fence at all: undefined in both engines, at the MMA.
    let t = ptx::load_file(&root.join("wgmma_nofence.ptx"), None, None).unwrap();
    for engine in [EngineChoice::Op, EngineChoice::Ax] {
        let r = engine::run(
            &t.program,
            &RunOptions {
                engine,
                ..RunOptions::default()
            },
        );
        let u = r.undefined.expect("undefined");
        let rep = ptxmc::report::ub::of(&t, &u);
        assert_eq!(rep.kind, "wgmma-fence", "{engine:?}");
        assert_eq!(rep.at.len(), 1, "{engine:?}");
        assert!(
            rep.at[0].position.contains("(wgmma_nofence.cu:"),
            "{:?}",
            rep.at
        );
    }
}

/// A read of a `tcgen05.ld` destination before `tcgen05.wait::ld` is
/// refused (the ISA orders it through the register dependency, which ptxmc
/// does not model), and so is a write.
#[test]
fn tcgen05_ld_registers_before_the_wait_are_refused() {
    let head = "PTX t\n{ t @ tmem cta 0 = 0; x = 0; }\n P0@cta 0,cluster 0,gpu 0 ;\n tcgen05.ld.sync.aligned.32x32b.x1.b32 r0, [t] ;\n";
    let read =
        format!("{head} st.global x, r0 ;\n tcgen05.wait::ld.sync.aligned ;\nexists (x == 1)\n");
    assert_eq!(
        refused("ld.litmus", &read),
        "error: expected `tcgen05.wait::ld.sync.aligned` (instruction 3) before this access to `r0`, which `tcgen05.ld.sync.aligned.32x32b.x1.b32 r0, [t]` (instruction 1) loads, found a read of `r0` before the wait
  --> ld.litmus:5:2
  |
5 |  st.global x, r0 ;
  |  ^^^^^^^^^^^^^^^ the `tcgen05.ld` is still pending here
  |
  = the ISA orders such a read after the load through the register dependency (PTX ISA 9.7.16.6.4.5, \"Register dependencies, same thread\") but gives it no memory ordering; ptxmc delivers the register at the wait and does not model that: move `tcgen05.wait::ld` before the access

"
    );
    let write =
        format!("{head} mov r0, 1 ;\n tcgen05.wait::ld.sync.aligned ;\nexists (P0:r0 == 1)\n");
    let r = refused("ldw.litmus", &write);
    assert!(
        r.contains("found a write of `r0` before the wait\n  --> ldw.litmus:5:2\n"),
        "{r}"
    );
    // The wait first: accepted.
    let fine =
        format!("{head} tcgen05.wait::ld.sync.aligned ;\n st.global x, r0 ;\nexists (x == 1)\n");
    assert!(litmus::parse_source("ok.litmus", &fine).is_ok());
}

/// Kernels: the front end keeps register copies of its own, so an access to
/// a pending fragment register is refused on the PTX as written, naming it.
#[test]
fn kernels_refuse_fragment_registers_touched_before_their_wait() {
    let e = kernel_refused(
        "wgmma_fenced.ptx",
        "\twgmma.commit_group.sync.aligned;",
        "\tadd.f32 %f2, %f1, %f1;\n\twgmma.commit_group.sync.aligned;",
    );
    assert!(
        e.starts_with("error: expected a `wgmma.wait_group` that completes the earlier `wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16` before this access to `%f2`, found an access to `%f2`, a register of its accumulator\n"),
        "{e}"
    );
    assert!(e.contains("undefined behaviour"), "{e}");
    let e = kernel_refused(
        "tcgen05_pipeline.ptx",
        "\ttcgen05.wait::ld.sync.aligned;",
        "\tmov.b32 %r12, %r11;\n\ttcgen05.wait::ld.sync.aligned;",
    );
    assert!(
        e.starts_with("error: expected a `tcgen05.wait::ld` that completes the earlier `tcgen05.ld.sync.aligned.32x32b.x1.b32` before this access to `%r11`, found an access to `%r11`, a register the load writes\n"),
        "{e}"
    );
}

/// Every single-thread `wgmma` program of up to three items between a
/// `wgmma.fence` and a final `commit_group; wait_group 0` (MMAs into `d`
/// or `e`, commits, `wait_group 1`, reads and a write of the accumulators):
/// each engine on its own reports undefined behaviour exactly when a
/// register is accessed while an MMA into it is pending, or an MMA follows
/// an access to its accumulator with no `wgmma.fence` between, as a
/// reference walk of the groups says, and both name the same step.
#[test]
fn engines_agree_on_accumulator_accesses_in_every_small_wgmma_program() {
    const ITEMS: [&str; 7] = [
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 d, [s], [w], 0",
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 e, [s], [w], 0",
        "wgmma.commit_group.sync.aligned",
        "wgmma.wait_group.sync.aligned 1",
        "mov r0, d",
        "mov d, 1",
        "st.global x, e",
    ];
    /// The reference: whether some access finds its register pending, or
    /// some MMA follows an access to its accumulator with no `wgmma.fence`
    /// between (the program has one fence, first).
    fn undefined(items: &[usize]) -> bool {
        // Each MMA: (register, committed group or none, completed).
        let mut mmas: Vec<(char, Option<usize>, bool)> = Vec::new();
        let mut groups = 0;
        let mut touched: Vec<char> = Vec::new();
        for &i in items {
            match i {
                0 | 1 if touched.contains(&if i == 0 { 'd' } else { 'e' }) => return true,
                4 | 5 => touched.push('d'),
                6 => touched.push('e'),
                _ => {}
            }
        }
        let pending = |m: &Vec<(char, Option<usize>, bool)>, r: char| {
            m.iter().any(|&(q, _, done)| q == r && !done)
        };
        for &i in items {
            match i {
                0 | 1 => mmas.push((if i == 0 { 'd' } else { 'e' }, None, false)),
                2 => {
                    for m in mmas.iter_mut().filter(|m| m.1.is_none()) {
                        m.1 = Some(groups);
                    }
                    groups += 1;
                }
                3 => {
                    for m in mmas.iter_mut() {
                        if m.1.is_some_and(|g| g + 1 < groups) {
                            m.2 = true;
                        }
                    }
                }
                4 | 5 if pending(&mmas, 'd') => return true,
                6 if pending(&mmas, 'e') => return true,
                _ => {}
            }
        }
        false
    }
    let mut programs: Vec<Vec<usize>> = vec![vec![]];
    let mut all = Vec::new();
    for _ in 0..3 {
        programs = programs
            .iter()
            .flat_map(|p| {
                (0..ITEMS.len()).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
        all.extend(programs.iter().cloned());
    }
    let (mut ub, mut defined) = (0, 0);
    for items in all {
        let mut src = String::from(
            "PTX t\n{ s @ shared cta 0 = 5; w @ shared cta 0 = 7; x = 0; }\n P0@cta 0,cluster 0,gpu 0 ;\n wgmma.fence.sync.aligned ;\n",
        );
        for &i in &items {
            src.push_str(&format!(" {} ;\n", ITEMS[i]));
        }
        src.push_str(" wgmma.commit_group.sync.aligned ;\n wgmma.wait_group.sync.aligned 0 ;\nexists (x == 0)\n");
        let Ok(mut tests) = litmus::parse_source("g.litmus", &src) else {
            continue;
        };
        let t = tests.remove(0);
        let run = |engine| {
            engine::run(
                &t.program,
                &RunOptions {
                    engine,
                    ..RunOptions::default()
                },
            )
            .undefined
        };
        let (op, ax) = (run(EngineChoice::Op), run(EngineChoice::Ax));
        assert_eq!(op, ax, "{src}");
        assert_eq!(op.is_some(), undefined(&items), "{src}");
        if op.is_some() {
            ub += 1;
        } else {
            defined += 1;
        }
    }
    assert!(ub > 50 && defined > 50, "undefined {ub}, defined {defined}");
}
