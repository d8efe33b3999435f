//! Programmatic dependent launch of two kernels in the kernel front end
//! (`--dependent`, docs/kernels.md "Two kernels", docs/griddep.md): the
//! primary kernel is grid 0, the dependent grid 1, and both engines give
//! `griddepcontrol` its meaning from the threads' grids.

use std::path::{Path, PathBuf};

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

/// The PTX of `kernels/NAME`.
fn ptx_of(name: &str) -> String {
    std::fs::read_to_string(root().join("kernels").join(name)).unwrap()
}

/// `ptx_text` under the launch `flags`; the error's one-line form if it fails.
fn with_flags(ptx_text: &str, flags: &str) -> Result<LitmusTest, String> {
    ptx::load_source("k.ptx", ptx_text, &LaunchText::whole("command line", flags))
        .map_err(|e| e.to_string())
}

const HANDOFF: &str = "--entry pdl_primary --grid 2 --buffer data:int32[2] \
                       --dependent pdl_dependent --buffer data --buffer out:int32[2] \
                       --forall 'out[0] == 42 /\\ out[1] == 43'";

#[test]
fn the_dependent_kernel_is_grid_one_after_the_primary_ctas_and_shares_its_buffer() {
    let t = load("pdl_handoff.ptx");
    let p = &t.program;
    assert_eq!(p.name, "pdl_primary+pdl_dependent");
    let placed: Vec<(u32, u32, u32)> = p
        .threads
        .iter()
        .map(|t| (t.placement.grid, t.placement.cta, t.placement.cluster))
        .collect();
    // Two primary CTAs (grid 0), then the dependent's CTA numbered after them.
    assert_eq!(placed, [(0, 0, 0), (0, 1, 1), (1, 2, 2)]);
    // One `data` buffer, read by both kernels; `out` is the dependent's.
    let names: Vec<&str> = p.locations.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["data[0]", "data[1]", "out[0]", "out[1]"]);
}

#[test]
fn the_handoff_holds_and_each_bug_is_found_in_both_engines() {
    let opts = RunOptions {
        engine: EngineChoice::Both,
        ..RunOptions::default()
    };
    for (name, holds, states) in [
        ("pdl_handoff.ptx", true, 1),
        ("pdl_read_before_wait.ptx", false, 2),
        ("pdl_trigger_no_wait.ptx", false, 2),
    ] {
        let t = load(name);
        let r = engine::run(&t.program, &opts);
        assert!(r.disagreement.is_none(), "{name}: engines disagree");
        assert!(r.incomplete.is_none(), "{name}: incomplete");
        assert_eq!(r.verdict.holds, holds, "{name}: verdict");
        assert_eq!(r.outcomes.len(), states, "{name}: outcomes");
        assert!(!r.termination.hangs(), "{name}: hangs");
    }
}

#[test]
fn the_same_ptx_under_flags_on_the_command_line() {
    let t = with_flags(&ptx_of("pdl_handoff.ptx"), HANDOFF).unwrap();
    assert_eq!(t.program.threads.len(), 3);
    assert_eq!(t.program.threads[2].placement.grid, 1);
}

#[test]
fn two_kernel_launch_errors_are_positioned() {
    let ptx = ptx_of("pdl_handoff.ptx");
    // A buffer the primary does not bind.
    let flags = "--entry pdl_primary --grid 2 --buffer data:int32[2] \
                 --dependent pdl_dependent --buffer dta --buffer out:int32[2]";
    let e = with_flags(&ptx, flags).unwrap_err();
    let at = flags.find("dta").unwrap() + 1;
    assert_eq!(
        e,
        format!(
            "command line:1:{at}: expected a buffer of the primary kernel (`data`), found `dta`"
        )
    );
    // A new buffer may not take a name the primary bound.
    let flags = "--entry pdl_primary --grid 2 --buffer data:int32[2] \
                 --dependent pdl_dependent --buffer data --buffer data:int32[2]";
    let e = with_flags(&ptx, flags).unwrap_err();
    let at = flags.rfind("data:int32").unwrap() + 1;
    assert_eq!(
        e,
        format!("command line:1:{at}: expected a name not bound before, found `data` again")
    );
    // The dependent kernel must be a kernel of the module.
    let flags = "--entry pdl_primary --grid 2 --buffer data:int32[2] --dependent pdl_dep";
    let e = with_flags(&ptx, flags).unwrap_err();
    let at = flags.find("pdl_dep").unwrap() + 1;
    assert!(
        e.starts_with(&format!(
            "command line:1:{at}: expected a kernel of the module: "
        )),
        "{e}"
    );
    // Its parameters are counted against it.
    let flags = "--entry pdl_primary --grid 2 --buffer data:int32[2] --dependent pdl_dependent --buffer data";
    let e = with_flags(&ptx, flags).unwrap_err();
    assert_eq!(
        e,
        "command line:1:1: expected 2 parameter bindings (`--buffer`, `--scalar`, `--tensormap` or `--struct`, in order) for kernel `_Z13pdl_dependentPKiPi`, found 1"
    );
    // `--entry` names the primary only; one dependent.
    let flags = "--entry pdl_primary --dependent pdl_dependent --entry x";
    let e = with_flags(&ptx, flags).unwrap_err();
    let at = flags.rfind("--entry").unwrap() + 1;
    assert_eq!(
        e,
        format!(
            "command line:1:{at}: expected `--entry` before `--dependent` (the dependent kernel is named by `--dependent NAME`), found `--entry` after it"
        )
    );
    let flags = "--entry pdl_primary --dependent pdl_dependent --dependent pdl_dependent";
    let e = with_flags(&ptx, flags).unwrap_err();
    let at = flags.rfind("--dependent").unwrap() + 1;
    assert_eq!(
        e,
        format!("command line:1:{at}: expected one dependent kernel, found a second `--dependent`")
    );
    // The thread limit counts both kernels.
    let flags = "--grid 32 --dependent pdl_dependent --block 33";
    let e = with_flags(&ptx, flags).unwrap_err();
    assert_eq!(
        e,
        "command line:1:1: expected a launch of at most 64 threads (grid × block), found 65 threads"
    );
}

/// `ptxmc hw kernels` launches one kernel: a two-kernel launch is refused
/// with the reason, not run as its primary alone.
#[test]
fn the_kernel_runner_refuses_a_dependent_launch() {
    let k = ptx::load_file_full(&root().join("kernels/pdl_handoff.ptx"), None, None)
        .unwrap_or_else(|e| panic!("{}", e.rendered()));
    let e = ptxmc::hw::kernels::KernelRun::from_launch(
        "k000",
        "kernels/pdl_handoff.ptx",
        &k.entry,
        &k.launch,
        &k.ptx,
    )
    .unwrap_err();
    assert_eq!(
        e,
        "a programmatic dependent launch (`--dependent`): the kernel runner launches one kernel"
    );
}

/// On the command line too: the flags after `--dependent` (a second
/// `--grid`, `--buffer NAME`) are the dependent kernel's.
#[test]
fn ptxmc_kernel_takes_the_two_kernels_as_flags() {
    let run = |read_early: bool| {
        let file = if read_early {
            "kernels/pdl_read_before_wait.ptx"
        } else {
            "kernels/pdl_handoff.ptx"
        };
        std::process::Command::new(env!("CARGO_BIN_EXE_ptxmc"))
            .args([
                "kernel",
                file,
                "--entry",
                "pdl_primary",
                "--grid",
                "2",
                "--buffer",
                "data:int32[2]",
                "--dependent",
                "pdl_dependent",
                "--grid=1",
                "--buffer",
                "data",
                "--buffer",
                "out:int32[2]",
                "--exists",
                "out[0] == 0",
                "--engine",
                "both",
            ])
            .current_dir(root())
            .output()
            .unwrap()
    };
    let out = run(false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("States 1\n"), "{stdout}");
    assert!(stdout.contains("\nNo\n"), "{stdout}");
    let out = run(true);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("data[0]=42; data[1]=43; out[0]=0; out[1]=43;"),
        "{stdout}"
    );
    assert!(stdout.contains("\nOk\n"), "{stdout}");
}
