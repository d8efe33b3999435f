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
