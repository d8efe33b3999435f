//! `activemask.b32 d` (`docs/warps.md`, "`activemask.b32 d`"): the lanes
//! that execute one `activemask` together are a block of a partition of the
//! lanes that execute it; both engines run every partition and agree, no
//! lane hangs at the rendezvous, the dialect prints it back, the kernel
//! front end lowers nvcc's `activemask.b32 %r1;`, and what the model does
//! not cover exactly is refused at its position.

use std::process::Command;

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::litmus::{self, print};
use ptxmc::ptx::{self, LaunchText};

fn ptxmc(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxmc"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The final-state lines of `ptxmc run --engine both FILE`, and its exit status.
fn states(file: &str) -> (i32, Vec<String>) {
    let (code, out) = ptxmc(&["run", "--engine", "both", file]);
    let lines = out
        .lines()
        .skip_while(|l| !l.starts_with("States "))
        .skip(1)
        .take_while(|l| l.contains('='))
        .map(str::to_string)
        .collect();
    (code, lines)
}

#[test]
fn the_warp_tests_give_their_outcomes_in_both_engines() {
    let cases: [(&str, i32, &[&str]); 5] = [
        (
            "litmus/warp/Activemask-two-lanes.litmus",
            0,
            &["0:r0=1; 1:r0=2;", "0:r0=3; 1:r0=3;"],
        ),
        (
            "litmus/warp/Activemask-lane-exits.litmus",
            0,
            &["0:r9=0; 0:r0=1; 1:r9=1; 1:r0=0;"],
        ),
        (
            "litmus/warp/Activemask-flag-after.litmus",
            0,
            &[
                "0:r9=0; 0:r1=0; 0:r0=1; 1:r9=1; 1:r1=1; 1:r0=2; f=1;",
                "0:r9=0; 0:r1=0; 0:r0=3; 1:r9=1; 1:r1=1; 1:r0=3; f=1;",
            ],
        ),
        (
            "litmus/warp/Activemask-together-spins.litmus",
            5,
            &["0:r0=1; 0:r1=0; 1:r0=2; 1:r1=0; f=0;"],
        ),
        (
            "litmus/warp/MP+activemask.litmus",
            0,
            &[
                "0:r9=0; 0:r0=1; 0:r1=0; 1:r9=1; 1:r0=2; 1:r1=0; x=1;",
                "0:r9=0; 0:r0=1; 0:r1=0; 1:r9=1; 1:r0=2; 1:r1=1; x=1;",
                "0:r9=0; 0:r0=3; 0:r1=0; 1:r9=1; 1:r0=3; 1:r1=0; x=1;",
                "0:r9=0; 0:r0=3; 0:r1=0; 1:r9=1; 1:r0=3; 1:r1=1; x=1;",
            ],
        ),
    ];
    for (file, code, want) in cases {
        let (got_code, got) = states(file);
        assert_eq!(got_code, code, "{file}: exit status");
        assert_eq!(got, want, "{file}: final states");
    }
}

/// The exited lane is not waited for, and no lane hangs at a rendezvous
/// its block's other lane never reaches; the hang that needs both lanes
/// together is found, with the choice step first.
#[test]
fn termination_is_decided_over_every_partition() {
    let (code, out) = ptxmc(&["run", "litmus/warp/Activemask-flag-after.litmus"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Termination: checked — every execution terminates"),
        "{out}"
    );
    let (code, out) = ptxmc(&[
        "trace",
        "litmus/warp/Activemask-together-spins.litmus",
        "--hang",
    ]);
    assert_eq!(code, 5, "{out}");
    assert!(
        out.contains(
            "  1. P0,P1 activemask.b32 r0                lanes together: P0,P1, at its every \
             execution in warp 0 of cta 0, gpu 0 (choice 2 of 2)\n"
        ),
        "{out}"
    );
}

#[test]
fn a_trace_picks_the_partition_the_outcome_needs() {
    let (code, out) = ptxmc(&[
        "trace",
        "litmus/warp/Activemask-two-lanes.litmus",
        "--outcome",
        "P0:r0=3 /\\ P1:r0=3",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("  2. P0 activemask.b32 (rendezvous) 0x3  arrives at the barrier"),
        "{out}"
    );
    assert!(out.contains("Final state: 0:r0=3; 1:r0=3;"), "{out}");
}

const TWO: &str = "PTX A\n{ }\n P0@cta 0,warp 0,gpu 0 | P1@cta 0,warp 0,gpu 0 ;\n";

#[test]
fn activemask_round_trips() {
    let src = format!("{TWO} activemask.b32 r0 | activemask.b32 r3 ;\nexists (P0:r0 == 3)\n");
    let t = litmus::parse_source("t.litmus", &src)
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
        .remove(0);
    t.program.validate().unwrap();
    let text = print::to_litmus(&t.program);
    assert!(text.contains("activemask.b32 r0"), "{text}");
    assert!(text.contains("activemask.b32 r3"), "{text}");
    let again = litmus::parse_source("t.litmus", &text)
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
        .remove(0);
    assert_eq!(again.program, t.program, "{text}");
}

fn refused(src: &str) -> String {
    match litmus::parse_source("t.litmus", src) {
        Ok(_) => panic!("parsed:\n{src}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn what_the_partition_model_does_not_cover_is_refused_at_its_position() {
    let e = refused(&format!(
        "{TWO} L: | activemask.b32 r0 ;\n activemask.b32 r0 | ;\n beq r0, 0, L | ;\nexists (P0:r0 == 1)\n"
    ));
    assert!(
        e.contains(
            "t.litmus:5:2: expected an `activemask` that each lane executes at most once, in at \
             most 6 lanes of a warp, whose result cannot flow back before the lanes meet, found \
             `activemask` on a loop"
        ),
        "{e}"
    );
    let head: Vec<String> = (0..7).map(|i| format!("P{i}@cta 0,warp 0,gpu 0")).collect();
    let body = ["activemask.b32 r0"; 7];
    let e = refused(&format!(
        "PTX A\n{{ }}\n {} ;\n {} ;\nexists (P0:r0 == 1)\n",
        head.join(" | "),
        body.join(" | ")
    ));
    assert!(
        e.contains("found `activemask` executed by 7 lanes of one warp"),
        "{e}"
    );
    // A whole warp: refused before any of its Bell(32) partitions is built
    // (the deep mutation campaign found parsing a 32-lane mutant of
    // `Activemask-together-spins` running out of time and memory).
    let head: Vec<String> = (0..32)
        .map(|i| format!("P{i}@cta 0,warp 0,gpu 0"))
        .collect();
    let body = ["activemask.b32 r0"; 32];
    let e = refused(&format!(
        "PTX A\n{{ }}\n {} ;\n {} ;\nexists (P0:r0 == 1)\n",
        head.join(" | "),
        body.join(" | ")
    ));
    assert!(
        e.contains("found `activemask` executed by 32 lanes of one warp"),
        "{e}"
    );
    for (instr, want) in [
        ("activemask r0", "`.b32` after `activemask`"),
        ("activemask.b64 r0", "`.b32` after `activemask`"),
        ("activemask.b32 r0, r1", "d"),
    ] {
        let e = refused(&format!(
            "{TWO} {instr} | activemask.b32 r0 ;\nexists (P0:r0 == 1)\n"
        ));
        assert!(e.contains(want), "{instr}: {e}");
    }
}

/// A result that may flow back before the lanes meet (lane 0 stores its
/// mask to the flag lane 1 spins on before its own `activemask`) is refused
/// at the instruction whose result escapes, naming the first lane whose code
/// reads before it; the same program storing a constant is answered.
#[test]
fn a_result_that_may_flow_back_before_the_lanes_meet_is_refused() {
    let body = |value: &str| {
        format!(
            "PTX A\n{{ f=0; P0:r9=0; P1:r9=1; }}\n P0@cta 0,warp 0,gpu 0 | P1@cta 0,warp 0,gpu 0 ;\n\
             beq r9, 0, AM | beq r9, 0, AM ;\n\
             LOOP: | LOOP: ;\n\
             ld.relaxed.cta r1, f | ld.relaxed.cta r1, f ;\n\
             beq r1, 0, LOOP | beq r1, 0, LOOP ;\n\
             AM: | AM: ;\n\
             activemask.b32 r0 | activemask.b32 r0 ;\n\
             beq r9, 1, END | beq r9, 1, END ;\n\
             st.relaxed.cta f, {value} | st.relaxed.cta f, {value} ;\n\
             END: | END: ;\n\
             exists (P1:r0 == 3)\n"
        )
    };
    let e = refused(&body("r0"));
    assert!(
        e.contains(
            "t.litmus:9:1: expected an `activemask` that each lane executes at most once, in at \
             most 6 lanes of a warp, whose result cannot flow back before the lanes meet, found an \
             `activemask` whose result is used beyond register code while a lane of its warp \
             reads or waits before it"
        ),
        "{e}"
    );
    let full = match litmus::parse_source("t.litmus", &body("r0")) {
        Err(e) => e.rendered().to_string(),
        Ok(_) => unreachable!(),
    };
    assert!(
        full.contains("P0 may observe memory before this `activemask`"),
        "{full}"
    );
    assert!(litmus::parse_source("t.litmus", &body("1")).is_ok());
}

/// What nvcc emits for `out[threadIdx.x] = __activemask();`.
const KERNEL: &str = r#"
.version 9.0
.target sm_90a
.address_size 64
.visible .entry am(.param .u64 am_param_0)
{
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<5>;
	ld.param.u64 	%rd1, [am_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r2, %tid.x;
	activemask.b32 %r1;
	mul.wide.u32 	%rd3, %r2, 4;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.u32 	[%rd4], %r1;
	ret;
}
"#;

#[test]
fn the_kernel_front_end_lowers_activemask() {
    let t = ptx::load_source(
        "k.ptx",
        KERNEL,
        &LaunchText::whole("command line", "--grid 1 --block 3 --buffer out:int32[3]"),
    )
    .unwrap_or_else(|e| panic!("{}", e.rendered()));
    let r = engine::run(
        &t.program,
        &RunOptions {
            engine: EngineChoice::Both,
            ..RunOptions::default()
        },
    );
    assert!(r.disagreement.is_none(), "engines disagree");
    assert!(r.incomplete.is_none(), "incomplete");
    // The five partitions of three lanes.
    assert_eq!(r.outcomes.len(), 5, "{:?}", r.outcomes);
    // Nine lanes: refused at the instruction.
    let e = ptx::load_source(
        "k.ptx",
        KERNEL,
        &LaunchText::whole("command line", "--grid 1 --block 9 --buffer out:int32[9]"),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("k.ptx:12:2")
            && e.contains("found `activemask` executed by 9 lanes of one warp"),
        "{e}"
    );
}
