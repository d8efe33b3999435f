//! Device functions (`.func`) in the kernel front end: calls are inlined
//! before lowering (`ptx::inline`, docs/kernels.md "Device functions"), so a
//! kernel written with `__noinline__` helpers is checked as one body; what
//! cannot be inlined is refused by name at its position.

use std::path::{Path, PathBuf};

use ptxmc::ptx::{self, LaunchText};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// `ptx_text` under the launch `flags`; the error's one-line form if it fails.
fn with_flags(ptx_text: &str, flags: &str) -> Result<ptxmc::litmus::LitmusTest, String> {
    ptx::load_source("k.ptx", ptx_text, &LaunchText::whole("command line", flags))
        .map_err(|e| e.to_string())
}

#[test]
fn calls_become_the_callee_s_instructions_with_its_cuda_lines() {
    let path = root().join("kernels/device_fn_mp.ptx");
    let t = ptx::load_file(&path, None, None).unwrap_or_else(|e| panic!("{}", e.rendered()));
    // CTA 1 runs `wait_read`: its spin, fence and read, at the lines of the
    // device function in the `.cu` (14 to 16), not of the call (19).
    let lines: Vec<&str> = t.cuda[1].iter().flatten().map(String::as_str).collect();
    for l in [
        "device_fn_mp.cu:15",
        "device_fn_mp.cu:16",
        "device_fn_mp.cu:17",
    ] {
        assert!(lines.contains(&l), "{l} in {lines:?}");
    }
    let text = format!("{:?}", t.program.threads[1].code);
    assert!(text.contains("Fence"), "{text}");
}

const RECURSIVE: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.func _Z1fv()
{
	{ // callseq 0, 0
	call.uni 
	_Z1fv, 
	(
	);
	} // callseq 0
	ret;
}
.extern .func _Z1gv
()
;
.visible .entry k()
{
	{ // callseq 1, 0
	call.uni 
	_Z1fv, 
	(
	);
	} // callseq 1
	ret;
}
"#;

#[test]
fn recursion_and_bodiless_callees_are_refused_at_the_call() {
    assert_eq!(
        with_flags(RECURSIVE, "").unwrap_err(),
        "k.ptx:9:2: expected what ptxmc models (docs/kernels.md), found a recursive call to `_Z1fv`"
    );
    let external = RECURSIVE.replace(
        "call.uni \n\t_Z1fv, \n\t(\n\t);\n\t} // callseq 1",
        "call.uni \n\t_Z1gv, \n\t(\n\t);\n\t} // callseq 1",
    );
    assert_ne!(external, RECURSIVE);
    assert_eq!(
        with_flags(&external, "").unwrap_err(),
        "k.ptx:22:2: expected what ptxmc models (docs/kernels.md), found a call to `_Z1gv`, which has no body in the module"
    );
}

/// A caller that writes the argument's register again between the
/// `st.param` and the `call`, and a callee that stores its parameter.
const LATE_WRITE: &str = r#"
.version 9.5
.target sm_90a
.address_size 64
.func _Z1fPii(
	.param .b64 _Z1fPii_param_0,
	.param .b32 _Z1fPii_param_1
)
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [_Z1fPii_param_0];
	ld.param.u32 	%r1, [_Z1fPii_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	st.global.u32 	[%rd2], %r1;
	ret;
}
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<2>;
	ld.param.u64 	%rd1, [k_param_0];
	mov.u32 	%r1, 5;
	{ // callseq 0, 0
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd1;
	.param .b32 param1;
	st.param.b32 	[param1+0], %r1;
	mov.u32 	%r1, 7;
	call.uni 
	_Z1fPii, 
	(
	param0, 
	param1
	);
	} // callseq 0
	ret;
}
"#;

#[test]
fn an_argument_is_the_value_stored_before_the_call() {
    use ptxmc::engine::{self, EngineChoice, RunOptions};
    let t = with_flags(LATE_WRITE, "--buffer out:int32[1] --forall 'out[0] == 5'").unwrap();
    let r = engine::run(
        &t.program,
        &RunOptions {
            engine: EngineChoice::Both,
            ..RunOptions::default()
        },
    );
    assert!(r.disagreement.is_none());
    assert!(
        r.verdict.holds,
        "the callee must see 5, not the 7 written after"
    );
    // A callee's own variables are refused where they are declared.
    let local = LATE_WRITE.replace(
        "\t.reg .b64 \t%rd<3>;\n\tld.param.u64",
        "\t.reg .b64 \t%rd<3>;\n\t.local .align 4 .b8 scratch[4];\n\tld.param.u64",
    );
    assert_ne!(local, LATE_WRITE);
    assert_eq!(
        with_flags(&local, "--buffer out:int32[1]").unwrap_err(),
        "k.ptx:12:22: expected what ptxmc models (docs/kernels.md), found a variable `scratch` declared inside the called `_Z1fPii`"
    );
}
