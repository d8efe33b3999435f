//! Cooperative launches in the kernel front end (`--cooperative`,
//! docs/kernels.md "Grid-wide sync"): `cg::this_grid().sync()` as nvcc
//! compiles it — the grid workspace's address from `%envreg1:%envreg2`,
//! `bfi.b64`, a release `atom.add` and an acquire spin with sense reversal —
//! checked in both engines; the workspace refused outside a cooperative
//! launch, and every other use of its address halves refused by name.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use ptxmc::engine::{self, EngineChoice, RunOptions};
use ptxmc::litmus::LitmusTest;
use ptxmc::outcome::Columns;
use ptxmc::ptx::{self, LaunchText};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn load(name: &str) -> LitmusTest {
    ptx::load_file(&root().join("kernels").join(name), None, None)
        .unwrap_or_else(|e| panic!("{}", e.rendered()))
}

fn ptx_of(name: &str) -> String {
    std::fs::read_to_string(root().join("kernels").join(name)).unwrap()
}

/// `ptx_text` under the launch `flags`; the error's one-line form if it fails.
fn with_flags(ptx_text: &str, flags: &str) -> Result<LitmusTest, String> {
    ptx::load_source("k.ptx", ptx_text, &LaunchText::whole("command line", flags))
        .map_err(|e| e.to_string())
}

/// Both engines on `t`: they agree, finish and do not hang; the final
/// values of the named locations, one string per outcome.
fn finals(t: &LitmusTest, names: &[&str]) -> BTreeSet<String> {
    let opts = RunOptions {
        engine: EngineChoice::Both,
        ..RunOptions::default()
    };
    let r = engine::run(&t.program, &opts);
    assert!(r.disagreement.is_none(), "engines disagree");
    assert!(r.incomplete.is_none(), "incomplete");
    assert!(!r.termination.hangs(), "hangs");
    let cols = Columns::of(&t.program);
    r.outcomes
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
        .collect()
}

#[test]
fn the_grid_sync_orders_every_cta_s_write_before_every_read() {
    let t = load("cg_grid_sync.ptx");
    let names: Vec<&str> = t
        .program
        .locations
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "grid_workspace[0]",
            "grid_workspace[1]",
            "slot[0]",
            "slot[1]",
            "slot[2]",
            "out[0]",
            "out[1]",
            "out[2]"
        ]
    );
    // One outcome of the buffers: every reader saw its neighbour's value,
    // and the barrier word's top bit flipped once (0 + 1 + 1 + 0x7ffffffe:
    // 0x80000000, a kernel's 32-bit values being signed).
    assert_eq!(
        finals(&t, &["out[0]", "out[1]", "out[2]", "grid_workspace[1]"]),
        BTreeSet::from(["out[0]=2 out[1]=3 out[2]=1 grid_workspace[1]=-2147483648".to_string()])
    );
    assert!(t.program.threads.len() == 6);
}

#[test]
fn a_block_sync_where_the_grid_sync_is_needed_lets_a_reader_see_zero() {
    let t = load("cg_grid_sync_block_only.ptx");
    let seen = finals(&t, &["out[0]"]);
    assert_eq!(
        seen,
        BTreeSet::from(["out[0]=0".to_string(), "out[0]=2".to_string()])
    );
}

#[test]
fn the_second_grid_sync_starts_from_the_flipped_word() {
    let t = load("cg_grid_sync_twice.ptx");
    // The word wraps at 32 bits as the GPU's does: 0x80000000 + 0x80000000
    // is 0 (docs/kernels.md, "Values").
    assert_eq!(
        finals(&t, &["out[0]", "out[1]", "out[2]", "grid_workspace[1]"]),
        BTreeSet::from(["out[0]=3 out[1]=1 out[2]=2 grid_workspace[1]=0".to_string()])
    );
}

const LAUNCH: &str = "--grid 2 --buffer slot:int32[2] --buffer out:int32[2]";

#[test]
fn the_workspace_is_refused_outside_a_cooperative_launch() {
    let e = with_flags(&ptx_of("cg_grid_sync.ptx"), LAUNCH).unwrap_err();
    assert_eq!(
        e,
        "k.ptx:36:15: expected what ptxmc models (docs/kernels.md), found special register `%envreg2` outside a cooperative launch"
    );
    let t = with_flags(
        &ptx_of("cg_grid_sync.ptx"),
        &format!("--cooperative {LAUNCH}"),
    )
    .unwrap();
    assert_eq!(t.program.threads.len(), 2);
}

#[test]
fn the_address_halves_are_only_joined_as_cooperative_groups_joins_them() {
    let src = ptx_of("cg_grid_sync.ptx");
    let flags = format!("--cooperative {LAUNCH}");
    // The halves swapped.
    let swapped = src.replace(
        "bfi.b64 \t%rd2, %rd7, %rd6, 32, 32;",
        "bfi.b64 \t%rd2, %rd6, %rd7, 32, 32;",
    );
    assert_ne!(swapped, src);
    assert_eq!(
        with_flags(&swapped, &flags).unwrap_err(),
        "k.ptx:48:2: expected what ptxmc models (docs/kernels.md), found `bfi` of an address other than joining the grid workspace's halves"
    );
    // Arithmetic on a half.
    let added = src.replace("cvt.u64.u32 \t%rd6, %r3;", "add.s32 \t%r3, %r3, 4;");
    assert_ne!(added, src);
    let e = with_flags(&added, &flags).unwrap_err();
    assert!(
        e.ends_with("found computing with half of the grid workspace's address"),
        "{e}"
    );
    // A user buffer may not take the workspace's name.
    let e = with_flags(
        &src,
        "--cooperative --grid 2 --buffer grid_workspace:int32[2] --buffer out:int32[2]",
    )
    .unwrap_err();
    assert_eq!(
        e,
        "command line:1:1: expected a buffer name other than `grid_workspace` in a cooperative launch, found `grid_workspace`"
    );
}

/// `bfi` of known values, as the PTX ISA defines it: `len` bits of `a` at
/// bit `pos` of `b`, bits past the width dropped.
const BFI: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	bfi.b32 	%r1, 5, -65536, 4, 3;
	st.global.u32 	[%rd2], %r1;
	bfi.b32 	%r2, 15, 0, 30, 4;
	st.global.u32 	[%rd2+4], %r2;
	bfi.b32 	%r3, 15, 7, 0, 0;
	st.global.u32 	[%rd2+8], %r3;
	ret;
}
"#;

#[test]
fn bfi_of_known_values_is_computed() {
    let t = with_flags(BFI, "--buffer v:int32[3]").unwrap();
    assert_eq!(
        finals(&t, &["v[0]", "v[1]", "v[2]"]),
        // 0xffff0050, 0xc0000000, 7.
        BTreeSet::from(["v[0]=-65456 v[1]=-1073741824 v[2]=7".to_string()])
    );
}

#[test]
fn ptxmc_kernel_takes_cooperative_on_the_command_line() {
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ptxmc"))
            .args([
                "kernel",
                "kernels/cg_grid_sync.ptx",
                "--grid",
                "2",
                "--block",
                "2",
            ])
            .args(extra)
            .args([
                "--buffer",
                "slot:int32[2]",
                "--buffer",
                "out:int32[2]",
                "--forall",
                "out[0] == 2 && out[1] == 1",
                "--engine",
                "both",
            ])
            .current_dir(root())
            .output()
            .unwrap()
    };
    let out = run(&["--cooperative"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("Observation grid_publish Always 2 0"),
        "{stdout}"
    );
    let out = run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("add `--cooperative` to the launch"),
        "{stderr}"
    );
}
