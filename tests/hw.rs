//! Hardware conformance without a GPU: the generator's output (golden files,
//! `PTXMC_BLESS=1` rewrites them), refusals, the SASS parser and the
//! comparison of recorded histograms with the model.

use std::path::Path;
use std::process::Command;

use ptxmc::hw::compare::{Explanation, compare};
use ptxmc::hw::generate::{GenOptions, generate};
use ptxmc::hw::histogram::Histogram;
use ptxmc::hw::sass::{self, Counts};
use ptxmc::hw::{Reason, plan};
use ptxmc::ir::Program;

fn program(path: &str) -> Program {
    let mut t = ptxmc::litmus::parse_file(Path::new(path)).expect("parses");
    t.remove(0).program
}

const GOLDEN_TESTS: [&str; 3] = [
    "litmus/mp/MP+rel+acq.gpu.litmus",
    "litmus/mp/MP+rel+acq.cluster.litmus",
    "litmus/barrier/MP+bar-same-cta.litmus",
];

/// Async tests in the shared harness: a TMA store (bulk groups, global
/// cells), a TMA load with an expect-tx mbarrier and a drain, st.async into
/// another CTA (`mapa`, cluster launch), red.async with a harness arrival,
/// cp.async with `cp.async.mbarrier.arrive`, and cluster barriers.
const GOLDEN_ASYNC_TESTS: [&str; 6] = [
    "litmus/async/Y1+tma-store.litmus",
    "litmus/async/Y3+tma-load+wait.acquire.litmus",
    "litmus/async/StAsync-remote+wait.litmus",
    "litmus/async/RedAsync+atom.litmus",
    "litmus/async/CpAsync+mbarrier.arrive.litmus",
    "litmus/async/MP+barrier.cluster.litmus",
];

#[test]
fn generator_output_is_golden() {
    golden(&GOLDEN_TESTS, "tests/data/hw/golden");
}

#[test]
fn shared_harness_output_is_golden() {
    golden(&GOLDEN_ASYNC_TESTS, "tests/data/hw/golden-async");
}

fn golden(paths: &[&str], dir: &str) {
    let tests: Vec<(String, Program)> = paths.iter().map(|p| (p.to_string(), program(p))).collect();
    let g = generate(&tests, &GenOptions::default());
    assert!(g.refusals.is_empty());
    assert_eq!(g.entries.len(), paths.len());
    let names: Vec<&str> = g.files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "ptxmc_hw.h",
            "bundle00.cu",
            "build.sh",
            "run.sh",
            "manifest.json"
        ]
    );
    let dir = Path::new(dir);
    let bless = std::env::var_os("PTXMC_BLESS").is_some();
    for (name, content) in &g.files {
        if name == "ptxmc_hw.h" {
            continue; // the runtime is a source file of the crate, not generated
        }
        let path = dir.join(name);
        if bless {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(&path, content).unwrap();
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run with PTXMC_BLESS=1)", path.display()));
        assert!(
            *content == want,
            "{name} differs from {} (PTXMC_BLESS=1 rewrites it)",
            path.display()
        );
    }
}

#[test]
fn generated_code_uses_the_exact_instructions() {
    let p = program("litmus/mp/MP+rel+acq.cluster.litmus");
    let g = generate(&[("t".into(), p)], &GenOptions::default());
    let cu = &g.files[1].1;
    for needle in [
        "st.release.cluster.global.u32",
        "ld.acquire.cluster.global.u32",
        "extern \"C\" __device__ __noinline__ void ptxmc_t0000_P0(",
        "extern \"C\" __device__ __noinline__ void ptxmc_t0000_P1(",
        // a cluster launch of two CTAs
        "(blockIdx.x % 2u + L.rank_rot) % 2u",
    ] {
        assert!(cu.contains(needle), "missing {needle}");
    }
    let p = program("litmus/barrier/MP+bar-same-cta.litmus");
    let g = generate(&[("t".into(), p)], &GenOptions::default());
    assert!(g.files[1].1.contains("bar.sync 1, 64;"));
}

#[test]
fn shared_harness_code_uses_the_exact_instructions() {
    let cu = |path: &str| {
        let g = generate(&[("t".into(), program(path))], &GenOptions::default());
        g.files[1].1.clone()
    };
    let checks: [(&str, &[&str]); 6] = [
        (
            "litmus/async/Y1+tma-store.litmus",
            &[
                // the copy moves the 16-byte cell; its source is .shared::cta (32-bit)
                "asm volatile(\"cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 16;\" :: \"l\"(a1), \"r\"(s0) : \"memory\");",
                "asm volatile(\"st.shared::cta.u32 [%0], %1;\" :: \"r\"(s0), \"r\"(0x1u) : \"memory\");",
                "cp.async.bulk.wait_group 0;",
                "ptxmc::complete_bulk_groups();",
                "ptxmc::gather(L, 0u, lane, inst, 0u);  // s",
            ],
        ),
        (
            "litmus/async/Y3+tma-load+wait.acquire.litmus",
            &[
                // 4 litmus bytes are the cell's 16
                "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], 16;",
                "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];",
                "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], 0;",
                "ptxmc::init_mbarrier(L, 1u, lane, 1u);  // bar",
                "ptxmc::drain(L, 1u, lane, 0u, 0u);  // bar",
                "ptxmc::inval_mbarrier(L, 1u, lane);  // bar",
            ],
        ),
        (
            "litmus/async/StAsync-remote+wait.litmus",
            &[
                "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];",
                "ptxmc::smem_cluster(L, 0u, li, (1u + 2u - L.rank_rot) % 2u)",
                "ptxmc::sync_cluster();",
            ],
        ),
        (
            "litmus/async/RedAsync+atom.litmus",
            &[
                "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%0], %1, [%2];",
                "atom.relaxed.cluster.add.u32 %0, [%1], %2;\" : \"=r\"(v0) : \"l\"(g0)",
                "ptxmc::drain(L, 1u, lane, 4u, 1u);  // bar",
            ],
        ),
        (
            "litmus/async/CpAsync+mbarrier.arrive.litmus",
            &[
                "cp.async.ca.shared::cta.global [%0], [%1], 4;",
                "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];",
                "ptxmc::complete_cp_async();",
            ],
        ),
        (
            "litmus/async/MP+barrier.cluster.litmus",
            &[
                "barrier.cluster.arrive.release;",
                "barrier.cluster.wait.acquire;",
                "case 0: phases = 1u; break;",
                "ptxmc::idle(L, warp >= 1u, phases);",
            ],
        ),
    ];
    for (path, needles) in checks {
        let text = cu(path);
        for needle in needles {
            assert!(text.contains(needle), "{path}: missing {needle}");
        }
    }
}

#[test]
fn refusals_are_exact() {
    let cases = [
        (
            "litmus/sb/SB+fence.sc.gpu-diff-gpu.litmus",
            "multiple-gpus",
            "litmus/sb/SB+fence.sc.gpu-diff-gpu.litmus: threads on 2 GPUs; the harness runs on one GPU and does not emulate several",
        ),
        (
            "litmus/rmw/RMW-ops-arith-single-thread.litmus",
            "atom-sub",
            "litmus/rmw/RMW-ops-arith-single-thread.litmus: PTX has no atom.sub or red.sub (CUDA's atomicSub adds the negation); the harness does not rewrite instructions",
        ),
        (
            "litmus/proxy/CoWR-const+fence.proxy.constant-single-thread.litmus",
            "not-ptx-proxy-fence",
            "litmus/proxy/CoWR-const+fence.proxy.constant-single-thread.litmus: fence.proxy.constant is not a PTX instruction (ISCA'22 writes it for the model only; ptxas rejects it)",
        ),
        (
            "litmus/proxy/MP-surf+rel+acq.gpu.litmus",
            "texture-surface",
            "litmus/proxy/MP-surf+rel+acq.gpu.litmus: P0 makes a surface-proxy access; texture and surface objects over the test's memory are not generated yet (not validated on hardware)",
        ),
    ];
    let more = [
        (
            "tests/peers/dat3m/litmus/PTX/Manual/PC-bar-sync-sync-3.litmus",
            "barrier-deadlock",
            "tests/peers/dat3m/litmus/PTX/Manual/PC-bar-sync-sync-3.litmus: threads of CTA 0 deadlock: some wait at barrier (0) forever, so the model has no final state and the GPU would hang",
        ),
        (
            "litmus/warp/MP-lanes.litmus",
            "warp-lanes",
            "litmus/warp/MP-lanes.litmus: P0 is one of 2 lanes of a warp (`warp N`); the harness runs each litmus thread as a warp of its own and does not place threads as lanes yet",
        ),
        (
            "litmus/warp/MP+syncwarp-other-warps.litmus",
            "unknown-instruction",
            "litmus/warp/MP+syncwarp-other-warps.litmus: P0 uses an instruction the harness cannot generate (bar.warp.sync: the harness runs each litmus thread as a whole warp)",
        ),
    ];
    for (path, key, message) in cases.into_iter().chain(more) {
        let r = plan::plan(&program(path), path).expect_err(path);
        assert_eq!(r.reason.key(), key, "{path}");
        assert_eq!(r.to_string(), message);
    }
    // Constant and alias tests are planned, and so is every async test.
    for path in [
        "litmus/proxy/CoWR-const-single-thread.litmus",
        "litmus/proxy/MP-alias+rel+acq.gpu.litmus",
        "litmus/async/Y1+tma-store.litmus",
        "litmus/async/MP+barrier.cluster.litmus",
    ] {
        assert!(plan::plan(&program(path), path).is_ok(), "{path}");
    }
    let r = plan::plan(&program("litmus/sb/SB+fence.sc.gpu-diff-gpu.litmus"), "x").unwrap_err();
    assert_eq!(r.reason, Reason::MultipleGpus(2));
}

/// A test written here (the refusals of the shared harness need tests that
/// `litmus/` does not have).
fn inline(text: &str) -> Program {
    ptxmc::litmus::parse_source("inline.litmus", text)
        .expect("parses")
        .remove(0)
        .program
}

#[test]
fn shared_harness_refusals_are_exact() {
    let head = "PTX T\n{\ns @ shared cta 0 = 0;\nbar @ mbarrier cta 0 = 1;\ng=42;\n}\n P0@cta 0,cluster 0,gpu 0 ;\n";
    let cases: [(&str, &str, &str); 9] = [
        (
            " mov r5, 100 ;\n mbarrier.try_wait.parity.shared::cta r0, [bar], 0, r5 ;\nexists (P0:r0 == 0)",
            "mbarrier-operand",
            "P0 gives a suspend-time hint of an mbarrier operation in a register; the harness needs it before the run (to scale byte counts, plan phases and drain the barrier)",
        ),
        (
            " mbarrier.arrive.shared::cta r1, [bar] ;\nexists (P0:r1 == 0)",
            "mbarrier-state-token",
            "P0 keeps an mbarrier state token in a register or waits on one; the hardware token is an opaque 64-bit value, not the model's phase number",
        ),
        (
            " mov r1, 2 ;\n mbarrier.arrive.shared::cta _, [bar], r1 ;\nexists (s == 0)",
            "mbarrier-operand",
            "P0 gives an arrival count of an mbarrier operation in a register; the harness needs it before the run (to scale byte counts, plan phases and drain the barrier)",
        ),
        (
            " cp.async.ca.shared::cta.global [s], [g], 8 ;\n cp.async.wait_all ;\nexists (s == 0)",
            "copy-size",
            "P0 copies 8 bytes; a litmus location is one 32-bit word, so cp.async, st.async and red.async move 4 bytes and a bulk copy 4, 8 or 16 (the harness moves a 16-byte cell)",
        ),
        (
            " cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [s], [g], 4, [bar] ;\n mbarrier.arrive.shared::cta _, [bar] ;\n mbarrier.expect_tx.shared::cta [bar], 4 ;\nexists (s == 0)",
            "mbarrier-drain",
            "mbarrier `bar`: 1 arrivals for a count of 1, 16 bytes expected and 16 completed: the first phase could complete before every asynchronous operation has landed; the harness could read final values before an asynchronous write lands",
        ),
        (
            " mbarrier.arrive.shared::cta _, [bar] ;\n mbarrier.arrive.shared::cta _, [bar] ;\n mbarrier.test_wait.shared::cta r0, [bar], 0 ;\nexists (P0:r0 == 0)",
            "mbarrier-phase",
            "mbarrier `bar`: a wait asks whether phase 0 completed while 2 phases may complete; the hardware wait tests the phase's parity",
        ),
        (
            " mbarrier.test_wait.parity.shared::cta r0, [bar], 2 ;\nexists (P0:r0 == 0)",
            "mbarrier-phase",
            "mbarrier `bar`: the phase parity 2 is neither 0 nor 1",
        ),
        (
            " fence.proxy.tensormap::generic.acquire.gpu [g], 128 ;\nexists (s == 0)",
            "tensormap-acquire",
            "P0 uses fence.proxy.tensormap::generic.acquire on an address; the harness creates no tensor maps",
        ),
        (
            " cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [s], [g], 4, [bar] ;\n red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [s], 1, [bar] ;\nexists (s == 0)",
            "tx-bytes",
            "mbarrier `bar`: bulk copies (16 bytes) and word-sized st.async/red.async complete on it; one byte count cannot match both",
        ),
    ];
    for (code, key, message) in cases {
        let p = inline(&format!("{head}{code}\n"));
        let r = plan::plan(&p, "T").expect_err(code);
        assert_eq!(r.reason.key(), key, "{code}");
        assert_eq!(r.to_string(), format!("T: {message}"), "{code}");
    }
    // A test that initialises the barrier its copy completes on.
    let p = inline(
        "PTX T\n{\ns @ shared cta 0 = 0;\nbar @ mbarrier cta 0;\ng=42;\n}\n P0@cta 0,cluster 0,gpu 0 ;\n mbarrier.init.shared::cta [bar], 1 ;\n mbarrier.arrive.expect_tx.shared::cta _, [bar], 4 ;\n cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [s], [g], 4, [bar] ;\nexists (s == 0)\n",
    );
    let r = plan::plan(&p, "T").unwrap_err();
    assert_eq!(r.reason.key(), "mbarrier-drain");
    assert!(r.to_string().contains("the test initialises it"));
    // Cluster barriers: every thread of a cluster goes through each phase.
    let p = inline(
        "PTX T\n{\nx=0;\n}\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;\n barrier.cluster.arrive | barrier.cluster.arrive ;\n barrier.cluster.wait | barrier.cluster.wait ;\n barrier.cluster.arrive | st.global x, 1 ;\n barrier.cluster.wait | ;\nexists (x == 0)\n",
    );
    let r = plan::plan(&p, "T").unwrap_err();
    assert_eq!(r.reason.key(), "cluster-barrier-phases");
    assert_eq!(
        r.to_string(),
        "T: threads of cluster 0 go through different numbers of barrier.cluster phases; every thread of a hardware cluster takes part in each phase, so the barrier would hang"
    );
}

/// What the shared harness plans for the async tests: cells, scaled byte
/// counts, drains, cluster launches and barrier phases.
#[test]
fn shared_harness_plans() {
    use ptxmc::hw::async_plan::{ArgForm, Drain};
    let pl = |path: &str| plan::plan(&program(path), path).unwrap();
    // A TMA load: the expected 4 litmus bytes are the cell's 16; the
    // harness waits for phase 0, which completes when the copy lands.
    let y3 = pl("litmus/async/Y3+tma-load+wait.acquire.litmus");
    let sh = y3.shared.as_ref().unwrap();
    assert_eq!(sh.cells, 2);
    assert!(sh.global_cells);
    assert_eq!(sh.mbarriers[0].scale, 4);
    assert_eq!(
        sh.mbarriers[0].drain,
        Some(Drain {
            expect_tx: 0,
            arrivals: 0
        })
    );
    assert!(!y3.uses_clusters());
    // red.async never announced: the harness expects its 4 bytes and arrives.
    let red = pl("litmus/async/RedAsync+atom.litmus");
    let sh = red.shared.as_ref().unwrap();
    assert_eq!(sh.mbarriers[0].scale, 1);
    assert_eq!(
        sh.mbarriers[0].drain,
        Some(Drain {
            expect_tx: 4,
            arrivals: 1
        })
    );
    assert!(red.uses_clusters());
    // The atom on the own CTA's shared memory uses a generic address; the
    // remote reduction a `.shared::cluster` one.
    assert_eq!(red.threads[1].args[0].form, ArgForm::SharedGeneric);
    assert_eq!(red.threads[0].args[0].form, ArgForm::SharedCluster);
    // A flag barrier has no drain; cluster barriers: one phase per cluster.
    let mp = pl("litmus/async/MP+barrier.cluster.litmus");
    assert_eq!(mp.shared.as_ref().unwrap().cluster_phases, [1]);
    let y4 = pl("litmus/async/Y4+mbarrier.rel+acq-same-cta.litmus");
    assert_eq!(y4.shared.as_ref().unwrap().mbarriers[0].drain, None);
    // Global-memory tests keep the global harness.
    assert!(
        pl("litmus/async/MP+rel+acq.cluster.litmus")
            .shared
            .is_none()
    );
    // Every test of litmus/async is planned.
    let mut n = 0;
    for e in std::fs::read_dir("litmus/async").unwrap() {
        let path = e.unwrap().path().display().to_string();
        assert!(plan::plan(&program(&path), &path).is_ok(), "{path}");
        n += 1;
    }
    assert_eq!(n, 42);
}

#[test]
fn the_cli_prints_refusals_and_writes_a_manifest() {
    let dir = std::env::temp_dir().join(format!("ptxmc-hw-gen-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args([
            "hw",
            "gen",
            "litmus/mp",
            "litmus/sb/SB+fence.sc.gpu-diff-gpu.litmus",
            "-o",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refused: litmus/mp/MP+rel+acq.gpu-diff-gpu.litmus: threads on 2 GPUs")
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let refused = manifest["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 3);
    assert!(refused.iter().all(|r| r["key"] == "multiple-gpus"));
    let tests = manifest["tests"].as_array().unwrap().len();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with(&format!("{tests} tests generated in 1 bundles")));
    assert!(dir.join("bundle00.cu").exists() && dir.join("run.sh").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sass_counts_per_function() {
    let text = std::fs::read_to_string("tests/data/hw/mp-matching.sass").unwrap();
    let f = sass::parse(&text);
    assert_eq!(
        f["ptxmc_t0000_P0"].counts,
        Counts {
            loads: 0,
            stores: 2,
            atomics: 0,
            fences: 1,
            barriers: 0,
            ..Counts::default()
        }
    );
    assert_eq!(
        f["ptxmc_t0000_P1"].counts,
        Counts {
            loads: 2,
            stores: 0,
            atomics: 0,
            // The acquire load's L1 invalidation (`CCTL.IVALL`).
            fences: 1,
            barriers: 0,
            ..Counts::default()
        }
    );
    // LDC from bank 0 (launch parameters) is not an access; a barrier on
    // barrier 0 (here `@!P0 BAR.SYNC 0x0`, in the kernel) is never a litmus
    // barrier: the harness gives those 1..15, and ptxas puts `BAR.SYNC 0x0`
    // in barrier.cluster's path for launches without clusters.
    assert_eq!(f["t0000_kernel"].counts.loads, 0);
    assert_eq!(f["t0000_kernel"].counts.barriers, 0);

    let p = program("litmus/mp/MP+rel+acq.gpu.litmus");
    assert!(!sass::check(&p, "t0000", &f).compiler_altered());
    let altered = sass::parse(&std::fs::read_to_string("tests/data/hw/mp-altered.sass").unwrap());
    let c = sass::check(&p, "t0000", &altered);
    assert!(c.compiler_altered());
    assert_eq!(c.reasons(), ["P1: 1 loads in SASS, 2 in the test"]);
    // Another id: the functions are missing, nothing is claimed.
    let c = sass::check(&p, "t0001", &f);
    assert!(!c.compiler_altered());
    assert_eq!(c.missing(), ["ptxmc_t0001_P0", "ptxmc_t0001_P1"]);
}

#[test]
fn compare_sorts_outcomes_into_three_categories() {
    let p = program("litmus/mp/MP+rel+acq.gpu.litmus");
    let h = Histogram::read(Path::new("tests/data/hw/mp-forbidden.json")).unwrap();
    let c = compare(&h, &p, None).unwrap();
    assert_eq!(
        c.allowed_observed,
        [(vec![0, 0, 1, 1], 700), (vec![1, 1, 1, 1], 300)]
    );
    assert_eq!(c.allowed_unobserved, [vec![0, 1, 1, 1]]);
    assert_eq!(c.forbidden_observed, [(vec![1, 0, 1, 1], 10)]);
    assert_eq!(c.explanation, Explanation::Investigate);
    assert!(!c.ok());

    let altered = sass::parse(&std::fs::read_to_string("tests/data/hw/mp-altered.sass").unwrap());
    let c = compare(&h, &p, Some(&altered)).unwrap();
    assert_eq!(c.explanation, Explanation::CompilerEffect);
    assert!(c.ok());

    let ok = Histogram::read(Path::new("tests/data/hw/mp-ok.json")).unwrap();
    let c = compare(&ok, &p, None).unwrap();
    assert!(c.forbidden_observed.is_empty());
    assert_eq!(c.explanation, Explanation::NothingForbidden);

    // Columns that are not the test's are an error.
    let other = program("litmus/sb/SB+rlx.gpu.litmus");
    let e = compare(&ok, &other, None).unwrap_err();
    assert!(e.starts_with("the histogram's columns [P1:r0, P1:r1, x, f] are not the test's"));
}

fn hw_compare(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["hw", "compare"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into(),
    )
}

#[test]
fn compare_exit_codes() {
    let (code, out) = hw_compare(&["tests/data/hw/mp-ok.json"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("Allowed, never observed: 1\n  P1:r0=0; P1:r1=1; x=1; f=1;\n"));
    assert!(out.ends_with("Verdict: nothing forbidden observed\n"));

    let (code, out) = hw_compare(&[
        "tests/data/hw/mp-forbidden.json",
        "--sass",
        "tests/data/hw/mp-matching.sass",
    ]);
    assert_eq!(code, Some(1));
    assert!(out.contains(
        "Observed but forbidden: 1\n            10 (0.9901%)  P1:r0=1; P1:r1=0; x=1; f=1;  [model bug or harness bug: investigate]\n"
    ));
    assert!(out.contains("SASS: matches the test\n"));
    assert!(out.ends_with("Verdict: model bug or harness bug: investigate\n"));

    let (code, out) = hw_compare(&[
        "tests/data/hw/mp-forbidden.json",
        "--sass",
        "tests/data/hw/mp-altered.sass",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["verdict"], "compiler-effect");
    assert_eq!(
        v[0]["sass"]["reasons"][0],
        "P1: 1 loads in SASS, 2 in the test"
    );
    assert_eq!(v[0]["forbidden_observed"][0]["count"], 10);

    // Two histograms: the worse status wins; --test needs one histogram.
    let (code, _) = hw_compare(&[
        "tests/data/hw/mp-ok.json",
        "tests/data/hw/mp-forbidden.json",
    ]);
    assert_eq!(code, Some(1));
    let (code, _) = hw_compare(&[
        "tests/data/hw/mp-ok.json",
        "tests/data/hw/mp-forbidden.json",
        "--test",
        "litmus/mp/MP+rel+acq.gpu.litmus",
    ]);
    assert_eq!(code, Some(2));
}

#[test]
fn sass_skips_dead_and_descriptor_instructions_and_counts_acquire_fences() {
    let dump = "\t\tFunction : ptxmc_t0001_P0
        /*0000*/ LDC.64 R10, c[0x0][0x208] ;
        /*0010*/ @!PT LDS RZ, [RZ] ;
        /*0020*/ LDG.E.STRONG.GPU R8, desc[UR4][R4.64] ;
        /*0030*/ CCTL.IVALL ;
        /*0040*/ LDG.E R9, desc[UR4][R6.64] ;
        /*0050*/ STG.E.EF.128 desc[UR4][R6.64], R8 ;
        /*0060*/ RET.ABS.NODEC R20 0x0 ;
";
    let f = sass::parse(dump);
    let c = f["ptxmc_t0001_P0"].counts;
    assert_eq!(
        (c.loads, c.stores, c.atomics, c.fences, c.barriers),
        (2, 0, 0, 1, 0)
    );
}

/// The recorded H100 campaign (docs/hardware-results.md): every histogram
/// compares cleanly, and the SASS check flags exactly the tests whose weak
/// accesses ptxas merged, forwarded or hoisted.
#[test]
fn recorded_h100_histograms_compare_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hw/h100");
    let mut hists: Vec<String> = std::fs::read_dir(dir.join("histograms"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    hists.sort();
    assert_eq!(hists.len(), 694);
    let sass = dir.join("roles.sass").display().to_string();
    let mut args: Vec<&str> = hists.iter().map(String::as_str).collect();
    args.extend(["--sass", &sass, "--format", "json"]);
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["hw", "compare"])
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let all = v.as_array().unwrap();
    assert_eq!(all.len(), 694);
    assert!(
        all.iter()
            .all(|c| c["forbidden_observed"].as_array().unwrap().is_empty())
    );
    let mut altered: Vec<&str> = all
        .iter()
        .filter(|c| c["sass"]["compiler_altered"] == true)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    altered.sort();
    assert_eq!(
        altered,
        [
            "14_simple",
            "22_simple",
            "30_simple",
            "46_simple",
            "4_simple",
            "58_simple",
            "Co-Total-3-threads-scope-same",
            "CoRR+weak",
            "CoRW-R",
            "CoWR+weak-single-thread",
            "CoWR-const-single-thread",
            "CoWW",
            "CoWW+weak-single-thread",
            "CoWW-R",
            "CoWW-RR",
            "MP-const+bar+bar-same-cta",
        ]
    );
    // The weak message-passing outcome was seen, as on the earlier campaign.
    let mp = all.iter().find(|c| c["name"] == "MP+rlx+rlx.gpu").unwrap();
    assert!(
        mp["allowed_observed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["values"] == serde_json::json!([1, 0, 1, 1])
                && o["count"].as_u64().unwrap() > 0)
    );
}

/// The second, cluster-scope run: `.cta` scope really is too narrow across
/// the CTAs of a cluster on the H100, as the model says.
#[test]
fn recorded_cluster_scope_histograms_compare_cleanly() {
    let dir = "tests/data/hw/h100-cluster";
    let mut args: Vec<String> = (0..6)
        .map(|k| format!("{dir}/histograms/t{k:04}.json"))
        .collect();
    args.extend([
        "--sass".into(),
        format!("{dir}/roles.sass"),
        "--format".into(),
        "json".into(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["hw", "compare"])
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let seen = |name: &str, values: serde_json::Value| -> u64 {
        let c = v
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap();
        assert!(c["forbidden_observed"].as_array().unwrap().is_empty());
        assert_eq!(c["sass"]["compiler_altered"], false);
        c["allowed_observed"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["values"] == values)
            .map(|o| o["count"].as_u64().unwrap())
            .sum()
    };
    assert!(
        seen(
            "MP+rel+acq.cta-same-cluster",
            serde_json::json!([1, 0, 1, 1])
        ) > 0
    );
    assert!(
        seen(
            "SB+fence.sc.cta-same-cluster",
            serde_json::json!([0, 0, 1, 1])
        ) > 0
    );
}

/// The wait-ordering rule reads the control bits (the second encoding word):
/// the load after an acquire `mbarrier.try_wait` must wait on the scoreboard
/// its `SYNCS.PHASECHK` sets (here 0), or follow an instruction that does.
#[test]
fn sass_checks_that_accesses_wait_for_acquire_mbarrier_waits() {
    // ptxas 13.0's code for `try_wait.acquire; ld.shared` (H100 campaign,
    // Y3+tma-load+wait.acquire P1): the LDS waits on nothing.
    let early = "\t\tFunction : ptxmc_t0000_P1
        /*0020*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R4+URZ], R3 ;                 /* 0x00000003040075a7 */
                                                                                                     /* 0x000e22000800017f */
        /*0030*/                   LDS R9, [R5] ;                                                    /* 0x0000000005097984 */
                                                                                                     /* 0x000e620000000800 */
        /*0060*/                   SEL R8, RZ, 0x1, !P0 ;                                            /* 0x00000001ff087807 */
                                                                                                     /* 0x001fc80004000000 */
        /*0090*/                   RET.ABS.NODEC R20 0x0 ;                                           /* 0x0000000014007950 */
                                                                                                     /* 0x001fea0003e00000 */
";
    // With `fence.acquire.cta` after the wait, ptxas puts a NOP that waits
    // on every scoreboard (wait mask 0x3f) before the LDS.
    let waited = early.replace(
        "        /*0030*/                   LDS",
        "        /*0028*/                   NOP ;                                                             /* 0x0000000000007918 */
                                                                                                     /* 0x03ffe20000000000 */
        /*0030*/                   LDS",
    );
    let f = sass::parse(early);
    assert_eq!(
        f["ptxmc_t0000_P1"].waits,
        [sass::WaitOrder::Early("LDS".into())]
    );
    assert_eq!(
        sass::parse(&waited)["ptxmc_t0000_P1"].waits,
        [sass::WaitOrder::Ordered]
    );
    // Without encodings the control bits cannot be read.
    let bare: String = early
        .lines()
        .filter(|l| !l.trim_start().starts_with("/* 0x"))
        .map(|l| format!("{}\n", l.split("/* 0x").next().unwrap()))
        .collect();
    assert_eq!(
        sass::parse(&bare)["ptxmc_t0000_P1"].waits,
        [sass::WaitOrder::Unknown]
    );

    // The acquire wait of Y3+tma-load+wait.acquire is not ordered: altered.
    let p = program("litmus/async/Y3+tma-load+wait.acquire.litmus");
    let c = sass::check(&p, "t0000", &f);
    assert_eq!(
        c.reasons(),
        [
            "P1: LDS issues before mbarrier wait 1 completes (nothing waits on the wait's scoreboard), so the wait does not order it"
        ]
    );
    assert!(c.compiler_altered());
    // A relaxed wait orders nothing: the same code is not altered.
    let p = program("litmus/async/Y3+tma-load+wait.relaxed.litmus");
    assert!(!sass::check(&p, "t0000", &f).compiler_altered());
    // Without encodings, nothing is claimed, and a note says so.
    let c = sass::check(
        &program("litmus/async/Y3+tma-load+wait.acquire.litmus"),
        "t0000",
        &sass::parse(&bare),
    );
    assert!(!c.compiler_altered());
    assert_eq!(
        c.notes(),
        [
            "P1: the dump has no instruction encodings: whether accesses wait for the mbarrier waits is not checked"
        ]
    );
}

/// Run `hw compare --format json` on recorded histograms and SASS.
fn compare_recorded(hists: &[String], sass: &str) -> (Option<i32>, Vec<serde_json::Value>) {
    let mut args: Vec<&str> = hists.iter().map(String::as_str).collect();
    args.extend(["--sass", sass, "--format", "json"]);
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["hw", "compare"])
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code(), v.as_array().unwrap().clone())
}

/// The async campaign on the H100 (docs/hardware-results.md): every
/// histogram compares cleanly; the forbidden outcomes observed are exactly
/// those of the tests whose acquire mbarrier wait ptxas does not wait for
/// before the next load; and the GPU shows the async behaviours recorded
/// there beside the model's verdicts.
#[test]
fn recorded_async_histograms_compare_cleanly() {
    let dir = "tests/data/hw/h100-async";
    let mut hists: Vec<String> = std::fs::read_dir(format!("{dir}/histograms"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    hists.sort();
    assert_eq!(hists.len(), 41);
    let (code, all) = compare_recorded(&hists, &format!("{dir}/roles.sass"));
    assert_eq!(code, Some(0));
    assert_eq!(all.len(), 41);
    let by_name =
        |name: &str| -> &serde_json::Value { all.iter().find(|c| c["name"] == name).unwrap() };
    // No role function is missing from the dump, no instance timed out.
    for c in &all {
        assert_eq!(
            c["sass"]["missing"].as_array().unwrap().len(),
            0,
            "{}",
            c["name"]
        );
        assert_eq!(c["timeouts"], 0, "{}", c["name"]);
    }
    // Forbidden outcomes: only where the SASS check explains them.
    let mut forbidden: Vec<&str> = all
        .iter()
        .filter(|c| !c["forbidden_observed"].as_array().unwrap().is_empty())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    forbidden.sort();
    assert_eq!(
        forbidden,
        [
            "CpAsync+mbarrier.arrive",
            "StAsync-remote+wait",
            "Y3+tma-load+wait.acquire",
            "Y4+mbarrier.rel+acq-same-cta",
        ]
    );
    let mut altered: Vec<&str> = all
        .iter()
        .filter(|c| c["sass"]["compiler_altered"] == true)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    altered.sort();
    assert_eq!(
        altered,
        [
            "CpAsync+mbarrier.arrive",
            "StAsync-remote+wait",
            "Y3+tma-load+wait.acquire",
            "Y4+mbarrier.rel+acq-same-cta",
            "Y4+mbarrier.rel.cluster-remote+acq.cta",
        ]
    );
    for name in &forbidden {
        let c = by_name(name);
        assert_eq!(c["verdict"], "compiler-effect");
        assert!(
            c["sass"]["reasons"][0]
                .as_str()
                .unwrap()
                .contains("issues before mbarrier wait 1 completes")
        );
    }
    // How often an outcome was observed (0 when never).
    let seen = |name: &str, values: serde_json::Value| -> u64 {
        let c = by_name(name);
        ["allowed_observed", "forbidden_observed"]
            .iter()
            .flat_map(|k| c[*k].as_array().unwrap())
            .filter(|o| o["values"] == values)
            .map(|o| o["count"].as_u64().unwrap())
            .sum()
    };
    use serde_json::json;
    // The stale TMA store without fence.proxy.async (allowed): frequent; with
    // the fence covering shared memory (forbidden): never.
    assert!(seen("Y1+tma-store", json!([0, 1, 0])) > 1_000_000);
    assert!(seen("Y1+fence.proxy.async.global+tma-store", json!([0, 1, 0])) > 0);
    assert_eq!(seen("Y1+fence.proxy.async+tma-store", json!([0, 1, 0])), 0);
    assert_eq!(
        seen("Y1+fence.proxy.async.full+tma-store", json!([0, 1, 0])),
        0
    );
    assert!(seen("Y2+bar+tma-store", json!([0, 1, 0])) > 1_000_000);
    assert_eq!(
        seen(
            "Y2+bar+fence.proxy.async-issuer+tma-store",
            json!([0, 1, 0])
        ),
        0
    );
    assert_eq!(
        seen(
            "Y2+fence.proxy.async-writer+bar+tma-store",
            json!([0, 1, 0])
        ),
        0
    );
    // Reusing the source after wait_group.read (forbidden): never; the
    // destination read right after wait_group.read (allowed): stale at times.
    assert_eq!(seen("TmaStore+wait_group.read+overwrite", json!([2, 2])), 0);
    assert!(seen("Y1+wait_group.read", json!([0, 1, 1])) > 0);
    // Remote arrive: with a .cluster wait the weak outcome (forbidden) never;
    // with a .cta wait (allowed) it was seen, in code the check flags.
    assert_eq!(
        seen(
            "Y4+mbarrier.rel.cluster-remote+acq.cluster",
            json!([1, 0, 1])
        ),
        0
    );
    assert!(seen("Y4+mbarrier.rel.cluster-remote+acq.cta", json!([1, 0, 1])) > 0);
    // Cluster barrier: release/acquire orders (forbidden: never), a relaxed
    // arrive does not (allowed: seen), a fence before it does again.
    assert_eq!(seen("MP+barrier.cluster", json!([0, 1, 0])), 0);
    assert!(seen("MP+barrier.cluster.relaxed", json!([0, 1, 0])) > 1_000_000);
    assert_eq!(
        seen(
            "MP+fence.acq_rel.cluster+barrier.cluster.relaxed",
            json!([0, 1, 0])
        ),
        0
    );
    // The same TMA load hand-off is never stale when the load waits for the
    // wait: a spin loop, or a fence after a relaxed wait.
    for name in [
        "Y3+tma-load+spin-wait",
        "Y3+tma-load+wait.relaxed+fence.acquire",
        "Y3+tma-load+wait.relaxed+fence.acq_rel",
    ] {
        assert_eq!(seen(name, json!([1, 0, 42, 42])), 0, "{name}");
        assert_eq!(by_name(name)["sass"]["compiler_altered"], false);
    }
    assert!(seen("Y3+tma-load+wait.relaxed", json!([1, 0, 42, 42])) > 0);
}

/// Cycle text names each thread's orderings, scopes and partners' placement.
#[test]
fn campaign_reads_what_orders_a_cycle() {
    use ptxmc::hw::campaign::{CycleOrders, Orderer, Ordering, Sync};
    use ptxmc::ir::Scope;
    let c =
        CycleOrders::parse("[weak] PodWW [rel.cta] Rfe.cluster [acq.gpu] PodRR [weak] Fre.cluster")
            .unwrap();
    assert_eq!(c.threads.len(), 2);
    assert_eq!(c.threads[0].accesses, "WW");
    assert_eq!(
        c.threads[0].orders,
        [Orderer {
            sync: Sync::Release,
            scope: Scope::Cta
        }]
    );
    assert_eq!(c.threads[1].label(), "acq.gpu");
    assert_eq!(c.threads[1].reach, Scope::Cluster);
    // The release at .cta does not reach the other CTA.
    assert_eq!(c.ordering(), Ordering::Narrow(Scope::Cta));
    // IRIW: single-access writers; the readers' fences at .gpu cover the
    // four clusters.
    let iriw = CycleOrders::parse(
        "[rlx.gpu] Rfe.gpu [rlx.gpu] PodRR{fence.sc.gpu} [rlx.gpu] Fre.gpu [rlx.gpu] Rfe.gpu [rlx.gpu] PodRR{fence.acq_rel.gpu} [rlx.gpu] Fre.gpu",
    )
    .unwrap();
    let shapes: Vec<&str> = iriw.threads.iter().map(|t| t.accesses.as_str()).collect();
    assert_eq!(shapes, ["W", "RR", "W", "RR"]);
    assert_eq!(iriw.ordering(), Ordering::Covered);
    // A thread with program order alone; a coherence cycle; an alias.
    let sb = CycleOrders::parse(
        "[rlx.gpu] PodWR [rlx.gpu] Fre.gpu [rlx.gpu] PodWR{fence.sc.cta} [rlx.gpu] Fre.gpu",
    )
    .unwrap();
    assert_eq!(sb.ordering(), Ordering::Unordered);
    assert_eq!(sb.threads[1].label(), "sc.cta");
    let corr = CycleOrders::parse("[rlx.gpu] Rfe.cta [rlx.cta] PosRR [rlx.cta] Fre.cta").unwrap();
    assert_eq!(corr.ordering(), Ordering::Coherence);
    let alias = CycleOrders::parse(
        "[weak] PodWW{fence.proxy.alias} [rel.gpu] Rfe.gpu [acq.gpu] PodRR [alias_weak] Fre.gpu",
    )
    .unwrap();
    assert!(alias.threads[0].proxy_fence);
    assert_eq!(alias.ordering(), Ordering::Alias);
    // Malformed text is an error that quotes it.
    for bad in [
        "[weak] PodWW [rel.gpu]",
        "[weak] Rfe.far",
        "weak PodWW [rlx.gpu] Rfe.gpu",
        "[weak] PodWW [rlx.gpu] PodWW [rlx.gpu] Rfe.gpu",
    ] {
        let e = CycleOrders::parse(bad).unwrap_err();
        assert!(e.starts_with(&format!("cycle text `{bad}`")), "{e}");
    }
}

const GEN_CAMPAIGN: &str = "tests/data/hw/h100-gen";

/// The generated campaign's tests are exactly what its script writes with
/// this ptxmc (`tests/data/hw/h100-gen/make-set.sh`): the recorded set can be
/// regenerated, and nothing was added or edited by hand.
#[test]
fn generated_campaign_set_is_reproducible() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("ptxmc-hw-gen-set-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new("bash")
        .arg(root.join(GEN_CAMPAIGN).join("make-set.sh"))
        .arg(env!("CARGO_BIN_EXE_ptxmc"))
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let files = |dir: &Path| -> Vec<(String, String)> {
        let mut all = Vec::new();
        for part in std::fs::read_dir(dir).unwrap() {
            let part = part.unwrap().path();
            for f in std::fs::read_dir(&part).unwrap() {
                let f = f.unwrap().path();
                let rel = f.strip_prefix(dir).unwrap().display().to_string();
                all.push((rel, std::fs::read_to_string(&f).unwrap()));
            }
        }
        all.sort();
        all
    };
    let regenerated = files(&out);
    let recorded = files(&root.join(GEN_CAMPAIGN).join("litmus"));
    std::fs::remove_dir_all(&out).unwrap();
    assert_eq!(recorded.len(), 1932);
    assert!(
        regenerated == recorded,
        "the recorded set differs from make-set.sh's output"
    );
}

/// The generated campaign on the H100 (docs/hardware-results.md): `hw
/// compare` on all 1,932 recorded histograms exits 0, no test showed an
/// outcome the model forbids, no instance timed out, and the SASS check
/// flags exactly the 42 single-location tests whose accesses ptxas merged.
#[test]
fn recorded_generated_campaign_compares_cleanly() {
    let mut hists: Vec<String> = std::fs::read_dir(format!("{GEN_CAMPAIGN}/histograms"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    hists.sort();
    assert_eq!(hists.len(), 1932);
    let (code, all) = compare_recorded(&hists, &format!("{GEN_CAMPAIGN}/roles.sass"));
    assert_eq!(code, Some(0));
    assert_eq!(all.len(), 1932);
    let mut runs = 0;
    for c in &all {
        assert!(
            c["forbidden_observed"].as_array().unwrap().is_empty(),
            "{}",
            c["name"]
        );
        assert_eq!(c["sass"]["missing"].as_array().unwrap().len(), 0);
        assert_eq!(c["timeouts"], 0);
        runs += c["runs"].as_u64().unwrap();
    }
    assert_eq!(runs, 6_171_247_872);
    let altered: Vec<&str> = all
        .iter()
        .filter(|c| c["sass"]["compiler_altered"] == true)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(altered.len(), 42);
    // Two accesses of one thread to one location became one: loads merged
    // (CoRR, WsW+RsR), a load forwarded from the thread's store (WsR),
    // relaxed stores merged (WsW+RsR, at .cta, .gpu and .sys alike).
    for name in &altered {
        assert!(
            ["CoRR+", "WsR+WsR+", "WsW+RsR+"]
                .iter()
                .any(|p| name.starts_with(p)),
            "{name}"
        );
    }
    let merged_relaxed_stores = all.iter().any(|c| {
        c["name"] == "WsW+RsR+rlx-rlx.sys@gpu"
            && c["sass"]["reasons"][0] == "P0: 1 stores in SASS, 2 in the test"
    });
    assert!(merged_relaxed_stores);
}

/// What the GPU showed of the generated tests' weak behaviours
/// (docs/hardware-results.md, generated campaign): never where every thread
/// is ordered at a scope that covers its partners, never inside one CTA
/// without aliases, never in a cluster launch (every test with a
/// `.cluster`-scoped instruction: `recorded_cluster_launch_twins`); through
/// `.cta` orderings across CTAs and program order, often.
#[test]
fn recorded_generated_campaign_weak_behaviours() {
    use ptxmc::hw::campaign::{CycleOrders, Ordering, weak_outcome};
    use ptxmc::ir::Scope;
    let funcs =
        sass::parse(&std::fs::read_to_string(format!("{GEN_CAMPAIGN}/roles.sass")).unwrap());
    let mut by_group = std::collections::BTreeMap::<Ordering, (usize, usize, u64)>::new();
    let mut rate = std::collections::BTreeMap::<String, (u64, u64)>::new();
    let (mut allowed, mut seen_tests, mut cluster_launched) = (0, 0, 0);
    let mut paths: Vec<_> = std::fs::read_dir(format!("{GEN_CAMPAIGN}/histograms"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let h = Histogram::read(&path).unwrap();
        let p = program(&h.test);
        let c = compare(&h, &p, Some(&funcs)).unwrap();
        let w = weak_outcome(&p, &h, &c);
        let group = CycleOrders::of(&p).unwrap().ordering();
        let g = by_group.entry(group).or_default();
        if w.allowed {
            allowed += 1;
            g.0 += 1;
            if w.seen > 0 {
                seen_tests += 1;
                g.1 += 1;
                g.2 += w.seen;
            }
        } else {
            assert_eq!(w.seen, 0, "{}", h.name);
        }
        assert_eq!(w.by_config.iter().sum::<u64>(), w.seen);
        if h.cluster_dim > 0 {
            assert_eq!(w.seen, 0, "{}", h.name);
            cluster_launched += usize::from(w.allowed);
        }
        // Inside one CTA no generic-proxy test showed its weak outcome.
        if h.name.ends_with("@cta") && group != Ordering::Alias {
            assert_eq!(w.seen, 0, "{}", h.name);
        }
        rate.insert(h.name.clone(), (w.seen, h.runs));
    }
    assert_eq!((allowed, seen_tests), (1351, 237));
    assert_eq!(cluster_launched, 562);
    // Every thread ordered at a covering scope: allowed (acq_rel fences in SB,
    // R, 2+2W, IRIW …) but never seen.
    assert_eq!(by_group[&Ordering::Covered].0, 211);
    assert_eq!(by_group[&Ordering::Covered].1, 0);
    // A .cluster ordering with partners in other clusters: never seen (every
    // such test ran in a cluster launch).
    assert_eq!(by_group[&Ordering::Narrow(Scope::Cluster)], (143, 0, 0));
    // A .cta ordering with partners in other CTAs, and program order alone:
    // seen.
    assert_eq!(by_group[&Ordering::Narrow(Scope::Cta)].1, 89);
    assert_eq!(by_group[&Ordering::Unordered].1, 130);
    let fraction = |name: &str| {
        let (seen, runs) = rate[name];
        seen as f64 / runs as f64
    };
    assert!(fraction("MP+rlx-rlx.gpu@gpu") > 0.004);
    assert!(fraction("SB+rlx-rlx.gpu@cluster") > 0.004);
    assert!(fraction("LB+rlx-rlx.gpu@gpu") > 0.004);
    assert!(fraction("MP+weak-rel+acq-weak.cta@gpu") > 0.0);
    assert_eq!(fraction("MP+weak-rel+acq-weak.cluster@gpu"), 0.0);
    assert_eq!(fraction("MP+rlx-rlx.gpu@cta"), 0.0);
}

/// The role functions of a compacted SASS dump (`roles.sass`): name → the
/// instructions, without addresses.
fn role_code(path: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out = std::collections::BTreeMap::<String, Vec<String>>::new();
    let mut current = None;
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let l = line.trim();
        if let Some(name) = l.strip_prefix("Function :") {
            current = Some(name.trim().to_string());
            out.entry(name.trim().to_string()).or_default();
        } else if let (Some(name), Some((_, inst))) = (&current, l.split_once("*/")) {
            out.get_mut(name).unwrap().push(inst.trim().to_string());
        }
    }
    out
}

/// The twins run of the generated campaign: four pairs of tests whose role
/// functions compiled to the same machine code, one of each pair launched
/// with clusters (it has a `.cluster`-scoped instruction, which ptxas
/// compiles as `.gpu`), 15 s each. The weak outcome appeared in every
/// ordinary launch and in none of the cluster launches.
#[test]
fn recorded_cluster_launch_twins() {
    let dir = format!("{GEN_CAMPAIGN}/twins");
    let hists: Vec<String> = (0..8)
        .map(|k| format!("{dir}/histograms/t{k:04}.json"))
        .collect();
    let (code, all) = compare_recorded(&hists, &format!("{dir}/roles.sass"));
    assert_eq!(code, Some(0));
    let roles = role_code(&format!("{dir}/roles.sass"));
    let funcs = sass::parse(&std::fs::read_to_string(format!("{dir}/roles.sass")).unwrap());
    for pair in 0..4 {
        let (cluster, plain) = (2 * pair, 2 * pair + 1);
        let weak = |k: usize| {
            let h = Histogram::read(Path::new(&hists[k])).unwrap();
            let p = program(&h.test);
            let c = compare(&h, &p, Some(&funcs)).unwrap();
            let w = ptxmc::hw::campaign::weak_outcome(&p, &h, &c);
            assert!(w.allowed && !c.sass.unwrap().compiler_altered());
            assert!(h.runs > 100_000_000);
            (h.cluster_dim, w.seen)
        };
        for thread in 0..2 {
            assert_eq!(
                roles[&format!("ptxmc_t{cluster:04}_P{thread}")],
                roles[&format!("ptxmc_t{plain:04}_P{thread}")],
                "{} and {}",
                all[cluster]["name"],
                all[plain]["name"]
            );
        }
        let (dim, seen) = weak(cluster);
        assert!(dim > 0 && seen == 0, "{}", all[cluster]["name"]);
        let (dim, seen) = weak(plain);
        assert!(dim == 0 && seen > 100, "{}", all[plain]["name"]);
    }
}

/// `ptxmc hw kernels` writes the runner folder from the kernels' own
/// launches: the spec is what the recorded campaign ran (byte for byte but
/// the id), the PTX is the checked-in text, and a kernel the model refuses
/// is refused here too, with its positioned error.
#[test]
fn hw_kernels_writes_a_runner_folder_from_the_launches() {
    let dir = std::env::temp_dir().join(format!("ptxmc-hw-kernels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // A kernel the model refuses: a barrier count that is no multiple of 32.
    let bad = std::env::temp_dir().join(format!("ptxmc-hw-bad-{}", std::process::id()));
    std::fs::create_dir_all(&bad).unwrap();
    let ptx = std::fs::read_to_string("kernels/scale/named_barrier_producer.ptx")
        .unwrap()
        .replace("bar.sync 1, 64;", "bar.sync 1, 48;");
    std::fs::write(bad.join("bar48.ptx"), ptx).unwrap();
    std::fs::copy(
        "kernels/scale/named_barrier_producer.cu",
        bad.join("bar48.cu"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .args(["hw", "kernels", "kernels/cluster_dsmem.ptx"])
        .arg(bad.join("bar48.ptx"))
        .args(["--launches", "500", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&bad);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("--> {}:", bad.join("bar48.ptx").display()))
            && stderr.contains("found 48"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!(
            "1 kernels written under {} (500 launches per configuration, hang after 2000 ms)",
            dir.display()
        )),
        "{stdout}"
    );
    assert!(stdout.ends_with("  k000  kernels/cluster_dsmem.ptx\n"));
    assert_eq!(
        std::fs::read_to_string(dir.join("k000.spec")).unwrap(),
        "id k000\ntest kernels/cluster_dsmem.ptx\ncubin k000.cubin\nentry _Z8exchangePi\n\
         grid 2 1 1\nblock 1 1 1\ncluster 2 1 1\nbuffer out 4 1 2 -1 -1\n\
         launches 500\ntimeout_ms 2000\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("k000.ptx")).unwrap(),
        std::fs::read_to_string("kernels/cluster_dsmem.ptx").unwrap()
    );
    let build = std::fs::read_to_string(dir.join("build.sh")).unwrap();
    assert!(build.contains("\"$nvcc\" -cubin -arch=sm_90a k000.ptx -o k000.cubin\n"));
    assert!(dir.join("ptxmc_kernel_hw.cu").exists() && dir.join("run.sh").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ptxmc hw compare` reads a kernel's histogram (its `test` is a `.ptx`)
/// against the kernel under its launch: final buffers allowed, and a final
/// buffer the model forbids fails the comparison (exit 1), in text and JSON.
#[test]
fn hw_compare_reads_kernel_histograms() {
    let (code, out) = hw_compare(&["tests/data/hw/kernels/mp_relaxed.json"]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out,
        "Kernel kernels/mp_relaxed.ptx: 20000 launches\n\
         Allowed and observed: 1\n         20000 (100.0000%)  data[0]=42; flag[0]=1; out[0]=42;\n\
         Observed but forbidden: 0\n\
         Verdict: nothing observed outside the model\n"
    );
    // The same histogram with a final buffer no execution gives (out = 7).
    let text = std::fs::read_to_string("tests/data/hw/kernels/mp_relaxed.json")
        .unwrap()
        .replace(
            "[42, 1, 42], \"count\": 20000",
            "[42, 1, 7], \"count\": 20000",
        );
    let dir = std::env::temp_dir().join(format!("ptxmc-hw-kcmp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let h = dir.join("mp.json");
    std::fs::write(&h, text).unwrap();
    let (code, out) = hw_compare(&[h.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, Some(1), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["kind"], "kernel");
    assert_eq!(v[0]["verdict"], "investigate");
    assert_eq!(
        v[0]["forbidden_observed"],
        serde_json::json!([{"values": [42, 1, 7], "count": 20000}])
    );
    let _ = std::fs::remove_dir_all(&dir);
}
