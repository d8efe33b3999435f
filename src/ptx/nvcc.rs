//! Compiling a `.cu` file to PTX with nvcc (the registry's
//! `nvidia-cuda-nvcc` wheel works without a GPU).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::litmus::LitmusError;

/// How long nvcc may run on one file.
pub const TIMEOUT: Duration = Duration::from_secs(300);

const INSTALL: &str = "install nvcc without a GPU: `python3 -m venv nv && nv/bin/pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cccl`, then pass `--nvcc nv/lib/python3*/site-packages/nvidia/cu13/bin/nvcc` or set NVCC";

/// The nvcc to use: `explicit`, else `$NVCC`, else `nvcc` on `PATH`.
pub fn find(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("NVCC").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("nvcc"))
        .find(|p| p.is_file())
}

/// The target a `.cu` file asks for with a line `// arch: sm_XXX` (the
/// first such line; `kernels/build.sh` reads the same line), else `sm_90a`.
/// Kernels using `tcgen05` need `sm_100a`.
pub fn arch_of(source: &str) -> &str {
    source
        .lines()
        .filter_map(|l| l.trim_end().strip_prefix("// arch: "))
        .find(|a| {
            a.strip_prefix("sm_").is_some_and(|v| {
                !v.is_empty()
                    && v.bytes()
                        .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
            })
        })
        .unwrap_or("sm_90a")
}

/// Compile `cu` to PTX text (`-ptx -arch=sm_90a -lineinfo`, or the target
/// of its `// arch:` line ([`arch_of`]), with the
/// headers beside nvcc: `include/` and `include/cccl/`, and the CUTLASS/CuTe
/// headers of the nvidia-cutlass wheel where it is installed beside it).
pub fn compile(cu: &Path, explicit: Option<&Path>) -> Result<String, LitmusError> {
    compile_within(cu, &cu.display().to_string(), explicit, TIMEOUT)
}

/// Compile CUDA C++ given as text (the playground's `.cu`, named `name` in
/// errors) with `nvcc`, stopped after `timeout`: the text is written to a
/// temporary directory of its own, removed afterwards.
pub fn compile_text(
    name: &str,
    text: &str,
    nvcc: &Path,
    timeout: Duration,
) -> Result<String, LitmusError> {
    let fail =
        |what: String| LitmusError::whole_file(name, "a `.cu` file that nvcc compiles", what);
    let dir = scratch();
    std::fs::create_dir_all(&dir).map_err(|e| fail(format!("no temporary directory: {e}")))?;
    // Under the request's own base name, so that `.file` (and the CUDA
    // lines read from it) name the file as `ptxmc kernel` would.
    let base = Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| {
            n.ends_with(".cu")
                && n.len() <= 128
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-+".contains(c))
        })
        .unwrap_or_else(|| "kernel.cu".to_string());
    let cu = dir.join(base);
    let out = std::fs::write(&cu, text)
        .map_err(|e| fail(format!("no temporary file: {e}")))
        .and_then(|()| compile_within(&cu, name, Some(nvcc), timeout));
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// A fresh temporary directory name for one compilation.
fn scratch() -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    std::env::temp_dir().join(format!(
        "ptxmc-nvcc-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ))
}

/// [`compile`], with nvcc stopped after `timeout`; errors name the file
/// `shown` (nvcc's own messages too).
fn compile_within(
    cu: &Path,
    shown: &str,
    explicit: Option<&Path>,
    timeout: Duration,
) -> Result<String, LitmusError> {
    let nvcc = find(explicit).ok_or_else(|| {
        LitmusError::whole_file(
            shown,
            &format!("an nvcc to compile it (none on PATH, no NVCC, no --nvcc): {INSTALL}"),
            "none".to_string(),
        )
    })?;
    let dir = scratch();
    let fail =
        |what: String| LitmusError::whole_file(shown, "a `.cu` file that nvcc compiles", what);
    std::fs::create_dir_all(&dir).map_err(|e| fail(format!("no temporary directory: {e}")))?;
    let out = dir.join("kernel.ptx");
    let mut cmd = Command::new(&nvcc);
    let source = std::fs::read_to_string(cu).unwrap_or_default();
    cmd.arg("-ptx")
        .arg(format!("-arch={}", arch_of(&source)))
        .arg("-lineinfo");
    if let Some(root) = nvcc.parent().and_then(Path::parent) {
        cmd.arg(format!("-I{}", root.join("include").display()));
        cmd.arg(format!("-I{}", root.join("include").join("cccl").display()));
        // CUTLASS and CuTe from the registry's nvidia-cutlass wheel, installed
        // beside nvcc's (site-packages/nvidia/cu13/bin/nvcc).
        if let Some(site) = root.parent().and_then(Path::parent) {
            let cutlass = site.join("cutlass_library/source/include");
            if cutlass.is_dir() {
                cmd.arg(format!("-I{}", cutlass.display()));
            }
        }
    }
    cmd.arg(cu).arg("-o").arg(&out);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        LitmusError::whole_file(
            shown,
            &format!("an nvcc that runs: {INSTALL}"),
            format!("`{}`: {e}", nvcc.display()),
        )
    })?;
    // Read stderr on a thread so a chatty nvcc cannot block on a full pipe.
    let mut err = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::Read::take(&mut err, 1 << 20), &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_dir_all(&dir);
                return Err(fail(format!(
                    "nvcc still running after {} s (stopped)",
                    timeout.as_secs_f64()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(fail(format!("nvcc could not be waited for: {e}"))),
        }
    };
    let stderr = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
    if !status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        let tail: String = stderr
            .lines()
            .take(20)
            .collect::<Vec<_>>()
            .join("\n")
            .replace(&cu.display().to_string(), shown);
        return Err(fail(format!("nvcc failing ({status}):\n{tail}")));
    }
    let text = std::fs::read_to_string(&out);
    let _ = std::fs::remove_dir_all(&dir);
    text.map_err(|e| fail(format!("no PTX from nvcc: {e}")))
}

#[cfg(test)]
mod tests {
    use super::arch_of;

    #[test]
    fn the_arch_line_picks_the_target() {
        assert_eq!(
            arch_of("// arch: sm_100a\n__global__ void k() {}"),
            "sm_100a"
        );
        assert_eq!(arch_of("__global__ void k() {}"), "sm_90a");
        assert_eq!(arch_of("// arch: sm_100a; rm -rf /\n"), "sm_90a");
        assert_eq!(arch_of("// arch: \n// arch: sm_120a\n"), "sm_120a");
    }
}
