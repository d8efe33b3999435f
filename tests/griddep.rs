//! Programmatic dependent launch (`docs/griddep.md`): grids in the dialect,
//! `griddepcontrol` lowered to signals and awaits, and the forms refused by
//! name.

use ptxmc::engine::{self, RunOptions};
use ptxmc::ir::{Instr, SignalKind};
use ptxmc::litmus::{self, LitmusTest, print};
use ptxmc::model::Model;

fn parse(src: &str) -> LitmusTest {
    let mut tests = litmus::parse_source("t.litmus", src)
        .unwrap_or_else(|e| panic!("does not parse:\n{}", e.rendered()));
    tests.remove(0)
}

fn refused(src: &str) -> String {
    match litmus::parse_source("t.litmus", src) {
        Ok(_) => panic!("parsed:\n{src}"),
        Err(e) => e.to_string(),
    }
}

/// The model's refusal of a test that parses.
fn not_admitted(src: &str, model: Model) -> String {
    let t = parse(src);
    match model.admit(&t.program, &t.spans) {
        Ok(()) => panic!("admitted:\n{src}"),
        Err(e) => format!("{e:?}"),
    }
}

const MP: &str = "PTX G\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,grid 1,gpu 0 ;\n \
                  st.weak x, 1 | griddepcontrol.wait ;\n \
                  griddepcontrol.launch_dependents | ld.weak r0, x ;\nexists (P1:r0 == 0)\n";

#[test]
fn grids_and_griddepcontrol_round_trip() {
    let t = parse(MP);
    let p = &t.program;
    p.validate().unwrap();
    assert_eq!(p.threads[0].placement.grid, 0);
    assert_eq!(p.threads[1].placement.grid, 1);
    assert_eq!(p.threads[1].code[0], Instr::GridDep { wait: true });
    assert_eq!(p.threads[0].code[1], Instr::GridDep { wait: false });
    let text = print::to_litmus(p);
    assert!(text.contains("P1@cta 1,cluster 1,grid 1,gpu 0"), "{text}");
    assert!(!text.contains("grid 0"), "{text}");
    assert!(text.contains("griddepcontrol.launch_dependents"), "{text}");
    let again = parse(&text);
    assert_eq!(&again.program, p, "round trip changed the IR:\n{text}");
}

#[test]
fn the_lowering_ends_primaries_with_a_signal_the_wait_awaits() {
    let p = parse(MP).program;
    let l = ptxmc::model::lower::lower(&p, 2);
    // The primary: its trigger orders nothing; its end is a signal.
    assert_eq!(
        l.threads[0].code,
        vec![
            p.threads[0].code[0].clone(),
            Instr::Signal {
                kind: SignalKind::GridControl
            },
            Instr::Signal {
                kind: SignalKind::GridEnd
            },
        ]
    );
    match &l.threads[1].code[0] {
        Instr::Await { from } => {
            assert_eq!(from.len(), 1);
            assert_eq!((from[0].thread, from[0].pc, from[0].exec), (0, 2, 0));
        }
        other => panic!("{other:?}"),
    }
    // Idempotent: a lowered program is run as it is.
    assert_eq!(ptxmc::model::lower::lower(&l, 2), l);
}

#[test]
fn without_a_dependent_grid_the_instructions_order_nothing() {
    let t = parse(
        "PTX G1\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
         griddepcontrol.wait | ld.weak r0, x ;\n st.weak x, 1 | griddepcontrol.launch_dependents ;\n\
         exists (P1:r0 == 0)\n",
    );
    let l = ptxmc::model::lower::lower(&t.program, 2);
    assert_eq!(
        l.threads[0].code.len(),
        2,
        "no end signal without a dependent"
    );
    let r = engine::run(&t.program, &RunOptions::default());
    assert!(r.disagreement.is_none());
    // Both values: no grid orders anything here.
    assert_eq!(r.outcomes.len(), 2);
}

#[test]
fn the_wait_forbids_the_stale_read_and_its_absence_allows_it() {
    let with = parse(MP);
    let r = engine::run(&with.program, &RunOptions::default());
    assert!(r.disagreement.is_none());
    assert_eq!(r.outcomes.len(), 1, "only the fresh value after the wait");
    let without = parse(&MP.replace("griddepcontrol.wait", "ld.weak r1, x"));
    let r = engine::run(&without.program, &RunOptions::default());
    assert!(r.disagreement.is_none());
    assert!(r.outcomes.len() > 1, "the stale read without the wait");
}

#[test]
fn placements_that_are_not_modelled_are_refused_by_name() {
    let e = refused("PTX G\n{ }\n P0@cta 0,grid 2,gpu 0 ;\n mov r0, 1 ;\nexists (P0:r0 == 1)\n");
    assert!(e.contains("grid 2"), "{e}");
    assert!(e.contains("grid 1 (its programmatic dependent)"), "{e}");
    let e = refused(
        "PTX G\n{ }\n P0@cta 0,gpu 0 | P1@cta 0,grid 1,gpu 0 ;\n mov r0, 1 | mov r0, 1 ;\n\
         exists (P0:r0 == 1)\n",
    );
    assert!(e.contains("CTA 0 of GPU 0 already runs in grid 0"), "{e}");
    let e = refused(
        "PTX G\n{ }\n P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,grid 1,gpu 0 ;\n \
         mov r0, 1 | mov r0, 1 ;\nexists (P0:r0 == 1)\n",
    );
    assert!(
        e.contains("cluster 0 of GPU 0 already runs in grid 0"),
        "{e}"
    );
    for (instr, want) in [
        ("griddepcontrol", "`.wait` or `.launch_dependents`"),
        ("griddepcontrol.sync", "`.wait` or `.launch_dependents`"),
        ("griddepcontrol.wait.cta", "nothing after the action"),
        ("griddepcontrol.wait x", "no operands"),
    ] {
        let e = refused(&format!(
            "PTX G\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n {instr} ;\nexists (x == 0)\n"
        ));
        assert!(e.contains(want), "{instr}: {e}");
    }
}

#[test]
fn a_dependent_write_the_primary_could_see_is_refused_by_name() {
    // Before the wait on one path (the branch skips it): refused.
    let e = not_admitted(
        "PTX G\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,grid 1,gpu 0 ;\n \
         ld.weak r0, x | beq r1, 1, L ;\n | griddepcontrol.wait ;\n | L: st.weak x, 1 ;\n\
         exists (P0:r0 == 1)\n",
        Model::Ptx75,
    );
    assert!(
        e.contains("a write to `x` before `griddepcontrol.wait` in the dependent grid"),
        "{e}"
    );
    // After the wait on every path: admitted, and the primary never sees it.
    let t = parse(
        "PTX G\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,grid 1,gpu 0 ;\n \
         ld.weak r0, x | griddepcontrol.wait ;\n | st.weak x, 1 ;\nexists (P0:r0 == 1)\n",
    );
    Model::Ptx75.admit(&t.program, &t.spans).unwrap();
    let r = engine::run(&t.program, &RunOptions::default());
    assert!(r.disagreement.is_none());
    assert_eq!(
        r.outcomes.len(),
        1,
        "the primary reads 0 only: {:?}",
        r.outcomes
    );
    // A write to a location the primary never touches: admitted.
    let t = parse(
        "PTX G\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,grid 1,gpu 0 ;\n \
         ld.weak r0, x | st.weak y, 1 ;\nexists (P0:r0 == 1)\n",
    );
    Model::Ptx75.admit(&t.program, &t.spans).unwrap();
}

#[test]
fn ptx60_refuses_griddepcontrol() {
    let e = not_admitted(MP, Model::Ptx60);
    assert!(e.contains("`griddepcontrol` (PTX 7.8+)"), "{e}");
}
