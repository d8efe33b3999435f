//! Explanations, pictures, fixes and traces of the explain feature, pinned
//! byte for byte (insta snapshots; `INSTA_UPDATE=always` rewrites them).

use std::path::Path;

use ptxmc::explain::axiomatic::Caps;
use ptxmc::explain::enumerate::Limits;
use ptxmc::litmus;

fn explain(rel: &str) -> ptxmc::explain::Explanation {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let t = litmus::parse_file(&path).unwrap().remove(0);
    let want = t.program.condition.target();
    ptxmc::explain::explain_outcome(
        &t,
        rel,
        &want,
        &Limits::default(),
        Caps::default(),
        2_000_000,
    )
}

fn picture(rel: &str) -> String {
    let x = explain(rel);
    let pics = ptxmc::explain::pictures(&x);
    let (title, e) = &pics[0];
    ptxmc::report::dot::execution(title, e)
}

#[test]
fn explain_mp_release_acquire_text() {
    insta::assert_snapshot!(ptxmc::report::explain::text(&explain(
        "litmus/mp/MP+rel+acq.gpu.litmus"
    )));
}

#[test]
fn explain_sb_relaxed_text() {
    insta::assert_snapshot!(ptxmc::report::explain::text(&explain(
        "litmus/sb/SB+rlx.gpu.litmus"
    )));
}

#[test]
fn explain_remote_mbarrier_cluster_text() {
    insta::assert_snapshot!(ptxmc::report::explain::text(&explain(
        "litmus/async/Y4+mbarrier.rel.cluster-remote+acq.cluster.litmus"
    )));
}

#[test]
fn dot_mp_release_acquire_rejected_candidate() {
    insta::assert_snapshot!(picture("litmus/mp/MP+rel+acq.gpu.litmus"));
}

#[test]
fn dot_surface_proxy_witness_in_two_ctas() {
    insta::assert_snapshot!(picture("litmus/proxy/MP-surf+rel+acq.gpu.litmus"));
}

#[test]
fn svg_is_well_formed_and_draws_boxes() {
    let x = explain("litmus/mp/MP+rel+acq.gpu.litmus");
    let pics = ptxmc::explain::pictures(&x);
    let (title, e) = &pics[0];
    let svg = ptxmc::report::svg::render(title, e);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    for needle in [
        ">CTA 0</text>",
        ">CTA 1</text>",
        ">GPU 0</text>",
        "stroke-width=\"3\"",
        "e: R.acq.gpu f=1",
    ] {
        assert!(svg.contains(needle), "missing {needle}");
    }
}

#[test]
fn trace_remote_mbarrier_names_the_scope_mismatch() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("litmus/async/Y4+mbarrier.rel.cluster-remote+acq.cta.litmus");
    let t = litmus::parse_file(&path).unwrap().remove(0);
    let m = ptxmc::op::Machine::new(&t.program, 2).unwrap();
    let want = litmus::cond::parse_outcome(&t.program, &t.spans, "P1:r0=1 /\\ P1:r1=0").unwrap();
    let choices = m.shortest_run(&want, 100_000).unwrap();
    let trace = m.replay(&choices).unwrap();
    insta::assert_snapshot!(ptxmc::report::trace::text(
        &m.program,
        &m.columns,
        Some("P1:r0=1 /\\ P1:r1=0"),
        &trace,
        Path::new("litmus/async/Y4+mbarrier.rel.cluster-remote+acq.cta.litmus")
    ));
}

#[test]
fn fix_text_mp_relaxed() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus/mp/MP+rlx+rlx.gpu.litmus");
    let t = litmus::parse_file(&path).unwrap().remove(0);
    let mut r = ptxmc::fix::fix(&t.program, &t.program.condition.prop, &Default::default());
    r.seconds = 0.0;
    insta::assert_snapshot!(ptxmc::report::fix::text(&t.program.name, &r, false, 3, &[]));
}

#[test]
fn cli_explain_fix_and_graphs() {
    let bin = env!("CARGO_BIN_EXE_ptxmc");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |args: &[&str]| {
        let o = std::process::Command::new(bin)
            .args(args)
            .current_dir(root)
            .output()
            .unwrap();
        (
            o.status.code().unwrap(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, out, _) = run(&[
        "explain",
        "litmus/mp/MP+rel+acq.gpu.litmus",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ax"]["verdict"]["verdict"], "forbidden");
    assert_eq!(v["op"]["machine"], "blocked");
    let (code, _, err) = run(&[
        "explain",
        "litmus/mp/MP+rel+acq.gpu.litmus",
        "--outcome",
        "P1:r9=1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("expected a register that P1 writes or the initial state sets, found `r9`"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("ptxmc-explain-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (code, out, _) = run(&["fix", "litmus/mp/MP+rlx+rlx.gpu.litmus", "--emit", d]);
    assert_eq!(code, 0, "{out}");
    let emitted = std::fs::read_to_string(dir.join("MP+rlx+rlx.gpu+fix1.litmus")).unwrap();
    assert!(
        emitted.contains("st.release.gpu f, 1") && emitted.contains("ld.acquire.gpu r0, f"),
        "{emitted}"
    );
    let (code, _, _) = run(&["run", "litmus/mp/MP+rel+acq.gpu.litmus", "--graphs", d]);
    assert_eq!(code, 0);
    assert!(dir.join("MP+rel+acq.gpu-1.dot").exists());
    let (code, _, _) = run(&[
        "explain",
        "litmus/mp/MP+rel+acq.gpu.litmus",
        "--format",
        "svg",
        "-o",
        d,
    ]);
    assert_eq!(code, 0);
    assert!(dir.join("MP+rel+acq.gpu-candidate1.svg").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn notes_name_scope_mismatches_idle_proxy_fences_and_unneeded_fences() {
    let notes = |rel: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        let t = litmus::parse_file(&path).unwrap().remove(0);
        ptxmc::explain::lints::notes(&t.program, true)
    };
    assert_eq!(
        notes("litmus/mp/MP+rel.cta+acq.gpu.litmus"),
        vec![
            "P0 `st.release.cta f, 1` and P1 `ld.acquire.gpu r0, f` cannot synchronise: the .cta scope of the release does not include P1 (GPU 0, cluster 0, CTA 1)"
        ]
    );
    assert_eq!(
        notes("litmus/proxy/MP-const+fence.proxy.constant-rel+acq.gpu.litmus"),
        vec![
            "P0 `fence.proxy.constant` has no effect: no constant access happens in CTA 0 (a proxy fence acts only in its own CTA; place it in the CTA of the constant access)"
        ]
    );
    assert!(notes("litmus/mp/MP+rel+acq.gpu.litmus").is_empty());
    assert!(notes("litmus/mp/MP+fence.sc-rlx+rlx-fence.sc.gpu.litmus").is_empty());
    let text = "PTX MP+rel+acq+fence\n{\nx=0; f=0;\n}\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r0, f ;\n fence.sc.gpu | ld.weak r1, x ;\n st.release.gpu f, 1 | ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n";
    let t = litmus::parse_source("red.litmus", text).unwrap().remove(0);
    assert_eq!(
        ptxmc::explain::lints::notes(&t.program, true),
        vec![
            "P0 `fence.sc.gpu` is not needed: without it the outcome stays forbidden and nothing else the program does changes (termination, definedness, races, final values; see `ptxmc fix --weaken`)"
        ]
    );
}

/// The "not needed" note and `fix --weaken` make the same check (issue
/// 28): on the seqlock and on a variant whose condition observes only the
/// accepted read of the second sequence value, a fence is "not needed"
/// exactly when a listed weakening removes it, and named with what its
/// removal changes exactly when `--weaken` flags its removal.
#[test]
fn unneeded_fence_notes_agree_with_weaken_on_a_seqlock() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus/weaken/Seqlock.litmus");
    let src = std::fs::read_to_string(&path).unwrap();
    let cond = src.rfind("exists").unwrap();
    let variant = format!(
        "{}exists (P1:r0 == 2 /\\ P1:r3 == 2 /\\ (P1:r1 != 1 \\/ P1:r2 != 1))\n",
        &src[..cond]
    )
    .replace("PTX Seqlock", "PTX Seqlock-even");
    let mut removable_somewhere = 0;
    for (name, text) in [
        ("Seqlock.litmus", src.clone()),
        ("Seqlock-even.litmus", variant),
    ] {
        let t = litmus::parse_source(name, &text).unwrap().remove(0);
        let p = &t.program;
        let notes = ptxmc::explain::lints::notes(p, true);
        let r = ptxmc::fix::weaken(p, &p.condition.prop, &Default::default());
        assert!(!r.incomplete, "{name}");
        for (ti, th) in p.threads.iter().enumerate() {
            for (pc, i) in th.code.iter().enumerate() {
                if !matches!(i, ptxmc::ir::Instr::Fence { .. }) {
                    continue;
                }
                let who = format!("{} `{}`", th.name, ptxmc::litmus::print::instr(p, th, i));
                let note = notes.iter().find(|n| n.starts_with(&who));
                let removed = format!("remove {} `", th.name);
                let weaken_removes = r.fixes.iter().any(|f| {
                    f.changes.iter().any(|c| {
                        c.text.starts_with(&removed)
                            && c.text.contains(&ptxmc::litmus::print::instr(p, th, i))
                    })
                });
                let flagged = r.flagged.iter().find(|f| {
                    f.change.text.starts_with(&removed)
                        && f.change
                            .text
                            .contains(&ptxmc::litmus::print::instr(p, th, i))
                });
                let changes = ptxmc::fix::weaken::fence_removal_changes(
                    p,
                    &p.condition.prop,
                    ti,
                    pc,
                    &Default::default(),
                )
                .unwrap();
                let unneeded = note.is_some_and(|n| n.contains(" is not needed: "));
                assert_eq!(unneeded, weaken_removes, "{name}: {who}: {note:?}");
                assert_eq!(unneeded, changes.is_empty(), "{name}: {who}");
                removable_somewhere += usize::from(unneeded);
                if let Some(f) = flagged {
                    let n = note.unwrap_or_else(|| panic!("{name}: {who} flagged, no note"));
                    assert!(n.ends_with(&format!(
                        "without it {} (see `ptxmc fix --weaken`)",
                        f.changes_what.join("; ")
                    )));
                }
            }
        }
    }
    assert!(removable_somewhere > 0);
}

#[test]
fn weaken_micro24_fence_sc_to_release_and_acquire() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers/dat3m/litmus/PTX/Manual/MICRO24-Fig4a-correct.litmus");
    let t = litmus::parse_file(&path).unwrap().remove(0);
    let r = ptxmc::fix::weaken(
        &t.program,
        &t.program.condition.prop,
        &ptxmc::fix::FixOptions {
            bound: 4,
            ..Default::default()
        },
    );
    assert!(!r.fixes.is_empty() && r.fixes.iter().all(|f| f.verified));
    let first: Vec<&str> = r.fixes[0].changes.iter().map(|c| c.text.as_str()).collect();
    assert!(
        first.contains(&"P0 `fence.sc.gpu` → `fence.release.gpu`"),
        "{first:?}"
    );
    assert!(
        first.contains(&"P1 `fence.sc.gpu` → `fence.acquire.gpu`"),
        "{first:?}"
    );
}
