//! Kernels on the GPU: the launch of a corpus kernel written for the kernel
//! runner (`ptxmc_kernel_hw.cu`), which launches the kernel's own PTX — the
//! exact text the model checked, assembled by `ptxas` — many times and
//! writes the histogram of its final buffers (`docs/hardware.md`, "Kernels
//! on the GPU").
//!
//! Unlike the litmus harness ([`super::generate`]) nothing is rewritten: one
//! launch is one run of the kernel, so a hang is a hang of the GPU launch,
//! caught by the runner's watchdog (the histogram then says `"hangs": 1`).

use std::fmt::Write as _;
use std::path::Path;

use crate::ptx::launch::{Binding, FieldBinding, Launch};

/// The kernel runner's source, copied into every output folder.
pub const RUNNER: &str = include_str!("ptxmc_kernel_hw.cu");

/// One parameter of the kernel, in the order of its `.param` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunParam {
    /// A pointer parameter bound to a buffer.
    Buffer {
        /// The buffer's name (histogram columns are `name[i]`).
        name: String,
        /// Bytes per element (1, 2, 4 or 8).
        bytes: u32,
        /// Whether elements are read back sign-extended.
        signed: bool,
        /// Initial contents, one value per element.
        init: Vec<i64>,
    },
    /// A `CUtensorMap` parameter: the runner allocates the tensor as a
    /// buffer (its elements are histogram columns `name[i]`, like a
    /// buffer's) and encodes a tiled tensor map over it with
    /// `cuTensorMapEncodeTiled` (no interleave, no swizzle, no
    /// out-of-bound fill), passed by value.
    TensorMap {
        /// The tensor's name.
        name: String,
        /// Bytes per element (1, 2, 4 or 8).
        bytes: u32,
        /// Whether elements are read back sign-extended.
        signed: bool,
        /// The driver's data type (`CU_TENSOR_MAP_DATA_TYPE_*` without the prefix).
        dtype: &'static str,
        /// The tensor's size per dimension, innermost first.
        dims: Vec<u64>,
        /// The box's size per dimension, innermost first.
        boxdims: Vec<u64>,
        /// Initial contents, one value per element (dimension 0 fastest).
        init: Vec<i64>,
    },
    /// A struct passed by value (`--struct`, CUTLASS's `Params`): the
    /// runner packs each field at its offset — a pointer field's new
    /// buffer (its elements are histogram columns, like a buffer
    /// parameter's) or a value — into zeroed bytes.
    Struct {
        /// The struct's name.
        name: String,
        /// Its fields: the byte offset and the buffer or scalar there.
        fields: Vec<(u64, RunParam)>,
    },
    /// A value parameter.
    Scalar {
        /// Its name.
        name: String,
        /// Its width in bytes.
        bytes: u32,
        /// Whether it is signed.
        signed: bool,
        /// Its value.
        value: i64,
    },
}

/// Everything the runner needs to launch one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRun {
    /// Harness id: names the spec, the cubin and the histogram (`k000`).
    pub id: String,
    /// The kernel's path as given to ptxmc (the histogram's `test`).
    pub test: String,
    /// The PTX text the model read (written as `<id>.ptx`, assembled into `<id>.cubin`).
    pub ptx: String,
    /// The mangled `.entry` name.
    pub entry: String,
    /// Grid dimensions in CTAs.
    pub grid: [u32; 3],
    /// Block dimensions in threads.
    pub block: [u32; 3],
    /// Cluster dimensions in CTAs, for a cluster launch.
    pub cluster: Option<[u32; 3]>,
    /// A cooperative launch (`--cooperative`): the driver gives the kernel
    /// the grid workspace `cg::this_grid().sync()` uses.
    pub cooperative: bool,
    /// The kernel's parameters, in order.
    pub params: Vec<RunParam>,
}

impl KernelRun {
    /// The run of a kernel read by the front end: its entry, launch and PTX
    /// exactly as the model saw them. Buffers of `uint*` and `float*`
    /// elements are read back unsigned (a float is its bit pattern, as the
    /// model carries it).
    ///
    /// A kernel the runner cannot launch exactly is refused with the reason:
    /// a `--tensormap` the driver cannot encode ([`encodable`]), or a
    /// programmatic dependent launch (`--dependent`: the runner launches
    /// one kernel).
    pub fn from_launch(
        id: &str,
        test: &str,
        entry: &str,
        launch: &Launch,
        ptx: &str,
    ) -> Result<KernelRun, String> {
        const DEPENDENT: &str = "a programmatic dependent launch (`--dependent`): the kernel \
                                 runner launches one kernel";
        if launch.dependent.is_some() {
            return Err(DEPENDENT.to_string());
        }
        let signed = |name: &str| name.starts_with("int");
        let buffer = |b: &crate::ptx::launch::Buffer| RunParam::Buffer {
            name: b.name.clone(),
            bytes: b.elem.bytes() as u32,
            signed: signed(b.elem.name),
            init: contents(b),
        };
        let scalar = |s: &crate::ptx::launch::Scalar| RunParam::Scalar {
            name: s.name.clone(),
            bytes: s.elem.bytes() as u32,
            signed: signed(s.elem.name),
            value: s.value,
        };
        let params = launch
            .params
            .iter()
            .map(|b| match b {
                Binding::TensorMap(t) => {
                    let b = &t.buffer;
                    let dtype = encodable(b.elem.name, b.elem.bytes(), &t.dims, &t.boxdims)
                        .map_err(|why| {
                            format!(
                                "the tensor map `{}` (`--tensormap`) cannot be encoded on the GPU: {why}",
                                b.name
                            )
                        })?;
                    Ok(RunParam::TensorMap {
                        name: b.name.clone(),
                        bytes: b.elem.bytes() as u32,
                        signed: signed(b.elem.name),
                        dtype,
                        dims: t.dims.clone(),
                        boxdims: t.boxdims.clone(),
                        init: contents(b),
                    })
                }
                Binding::Struct(st) => Ok(RunParam::Struct {
                    name: st.name.clone(),
                    fields: st
                        .fields
                        .iter()
                        .map(|f| {
                            let p = match &f.binding {
                                FieldBinding::Buffer(b) => buffer(b),
                                FieldBinding::Scalar(s) => scalar(s),
                            };
                            (f.offset, p)
                        })
                        .collect(),
                }),
                Binding::Buffer(b) => Ok(buffer(b)),
                Binding::Scalar(s) => Ok(scalar(s)),
                Binding::Primary { .. } => Err(DEPENDENT.to_string()),
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(KernelRun {
            id: id.to_string(),
            test: test.to_string(),
            ptx: ptx.to_string(),
            entry: entry.to_string(),
            grid: launch.grid,
            block: launch.block,
            cluster: (launch.cluster != [1, 1, 1] || launch.given.cluster)
                .then_some(launch.cluster),
            cooperative: launch.cooperative,
            params,
        })
    }
}

/// A buffer's initial contents, one value per element (missing ones are 0).
fn contents(b: &crate::ptx::launch::Buffer) -> Vec<i64> {
    (0..b.len as usize)
        .map(|i| b.init.get(i).copied().unwrap_or(0))
        .collect()
}

/// The `cuTensorMapEncodeTiled` data type of a tensor map over elements of
/// type `elem` (`bytes` wide), if the driver can encode a tiled map with
/// these dimensions and box; else the rule it breaks (CUDA driver API,
/// `cuTensorMapEncodeTiled`: rank 1 to 5, every box dimension 1 to 256,
/// the box's innermost extent a multiple of 16 bytes without interleave,
/// every global stride — the bytes of one step along dimensions 1 and up —
/// a multiple of 16). The model reads any box; the GPU only these.
pub fn encodable(
    elem: &str,
    bytes: u64,
    dims: &[u64],
    boxdims: &[u64],
) -> Result<&'static str, String> {
    let dtype = match elem {
        "uint8" | "int8" => "UINT8",
        "uint16" | "int16" => "UINT16",
        "uint32" => "UINT32",
        "int32" => "INT32",
        "uint64" => "UINT64",
        "int64" => "INT64",
        "float32" => "FLOAT32",
        "float64" => "FLOAT64",
        other => return Err(format!("no tensor-map data type for `{other}` elements")),
    };
    if dims.is_empty() || dims.len() > 5 || boxdims.len() != dims.len() {
        return Err(format!(
            "a tensor of rank {} (the driver takes 1 to 5)",
            dims.len()
        ));
    }
    if let Some(b) = boxdims.iter().find(|&&b| b == 0 || b > 256) {
        return Err(format!(
            "a box dimension of {b} (the driver takes 1 to 256)"
        ));
    }
    if (boxdims[0] * bytes) % 16 != 0 {
        return Err(format!(
            "the box's innermost extent is {} bytes ({} elements of {bytes} bytes); the driver needs a multiple of 16",
            boxdims[0] * bytes,
            boxdims[0]
        ));
    }
    let mut stride = bytes;
    for (k, d) in dims.iter().enumerate().take(dims.len() - 1) {
        stride *= d;
        if stride % 16 != 0 {
            return Err(format!(
                "a step along dimension {} is {stride} bytes; the driver needs a multiple of 16",
                k + 1
            ));
        }
    }
    Ok(dtype)
}

/// How the runner repeats each kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunnerOptions {
    /// Launches per configuration (plain, then with stress warps beside).
    pub launches: u64,
    /// A launch not finished after this many milliseconds is a hang.
    pub timeout_ms: u32,
}

impl Default for RunnerOptions {
    fn default() -> Self {
        RunnerOptions {
            launches: 20_000,
            timeout_ms: 2_000,
        }
    }
}

/// The runner's spec file for `k` (the line format documented at the top of
/// `ptxmc_kernel_hw.cu`).
pub fn spec(k: &KernelRun, opts: &RunnerOptions) -> String {
    let mut s = String::new();
    let dims = |d: [u32; 3]| format!("{} {} {}", d[0], d[1], d[2]);
    let _ = writeln!(s, "id {}", k.id);
    let _ = writeln!(s, "test {}", k.test);
    let _ = writeln!(s, "cubin {}.cubin", k.id);
    let _ = writeln!(s, "entry {}", k.entry);
    let _ = writeln!(s, "grid {}", dims(k.grid));
    let _ = writeln!(s, "block {}", dims(k.block));
    let _ = writeln!(s, "cluster {}", dims(k.cluster.unwrap_or([0; 3])));
    if k.cooperative {
        let _ = writeln!(s, "cooperative");
    }
    for p in &k.params {
        param_line(&mut s, p);
    }
    let _ = writeln!(s, "launches {}", opts.launches);
    let _ = writeln!(s, "timeout_ms {}", opts.timeout_ms);
    s
}

/// One parameter's spec lines: one line, or a struct's line and then one
/// `field` line per field.
fn param_line(s: &mut String, p: &RunParam) {
    {
        match p {
            RunParam::Buffer {
                name,
                bytes,
                signed,
                init,
            } => {
                let _ = write!(s, "buffer {name} {bytes} {} {}", *signed as u8, init.len());
                for v in init {
                    let _ = write!(s, " {v}");
                }
                s.push('\n');
            }
            RunParam::TensorMap {
                name,
                bytes,
                signed,
                dtype,
                dims,
                boxdims,
                init,
            } => {
                let _ = write!(
                    s,
                    "tensormap {name} {bytes} {} {dtype} {}",
                    *signed as u8,
                    dims.len()
                );
                for d in dims.iter().chain(boxdims) {
                    let _ = write!(s, " {d}");
                }
                let _ = write!(s, " {}", init.len());
                for v in init {
                    let _ = write!(s, " {v}");
                }
                s.push('\n');
            }
            RunParam::Scalar {
                name,
                bytes,
                signed,
                value,
            } => {
                let _ = writeln!(s, "scalar {name} {bytes} {} {value}", *signed as u8);
            }
            RunParam::Struct { name, fields } => {
                let _ = writeln!(s, "struct {name}");
                for (offset, f) in fields {
                    let _ = write!(s, "field {offset} ");
                    param_line(s, f);
                }
            }
        }
    }
}

/// `build.sh`: assemble every kernel's PTX with the `ptxas` of the nvcc that
/// `$NVCC` (or the PATH) names — it must know the PTX's `.version`, so this
/// step runs where the toolkit that emitted the PTX is (the GPU machine's may
/// be older) — then, with `runner`, compile the runner with the nvcc there.
pub fn build_script(kernels: &[KernelRun]) -> String {
    let mut s = String::from(
        "#!/usr/bin/env bash\n\
         # Written by `ptxmc hw kernels`.\n\
         #   ./build.sh cubins   assemble each kernel's PTX (needs an nvcc that knows its .version)\n\
         #   ./build.sh runner   compile the runner (any nvcc with the driver API, C++17)\n\
         set -euo pipefail\ncd \"$(dirname \"$0\")\"\n\
         nvcc=\"${NVCC:-nvcc}\"\n\
         case \"${1:-all}\" in\n  cubins|all)\n",
    );
    for k in kernels {
        let _ = writeln!(
            s,
            "    \"$nvcc\" -cubin -arch=sm_90a {id}.ptx -o {id}.cubin",
            id = k.id
        );
    }
    s.push_str("    ;;&\n  runner|all)\n");
    s.push_str(
        "    \"$nvcc\" -O2 -std=c++17 -arch=sm_90 ptxmc_kernel_hw.cu -o ptxmc_kernel_hw -lcuda\n    ;;\nesac\n",
    );
    s
}

/// `run.sh`: each kernel in a process of its own (a hang kills the GPU
/// context), histograms into `OUT` (default `results/`).
pub fn run_script(kernels: &[KernelRun]) -> String {
    let mut s = String::from(
        "#!/usr/bin/env bash\n\
         # Written by `ptxmc hw kernels`. Usage: ./run.sh [OUT]\n\
         set -uo pipefail\ncd \"$(dirname \"$0\")\"\nout=\"${1:-results}\"\nmkdir -p \"$out\"\n",
    );
    for k in kernels {
        let _ = writeln!(
            s,
            "./ptxmc_kernel_hw {id}.spec \"$out/{id}.json\"; rc=$?; [ $rc = 0 ] || [ $rc = 4 ] || [ $rc = 5 ] || echo \"{id}: runner failed ($rc)\" >&2",
            id = k.id
        );
    }
    s
}

/// Write the folder for `kernels` into `dir`: the runner, one spec and one
/// copy of the PTX per kernel, `build.sh`, `run.sh`.
pub fn write(dir: &Path, kernels: &[KernelRun], opts: &RunnerOptions) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("ptxmc_kernel_hw.cu"), RUNNER)?;
    for k in kernels {
        std::fs::write(dir.join(format!("{}.spec", k.id)), spec(k, opts))?;
        std::fs::write(dir.join(format!("{}.ptx", k.id)), &k.ptx)?;
    }
    for (name, text) in [
        ("build.sh", build_script(kernels)),
        ("run.sh", run_script(kernels)),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mp() -> KernelRun {
        KernelRun {
            id: "k000".into(),
            test: "kernels/mp_relaxed.cu".into(),
            ptx: ".version 8.8\n".into(),
            entry: "_Z2mpPiS_S_".into(),
            grid: [2, 1, 1],
            block: [1, 1, 1],
            cluster: None,
            cooperative: false,
            params: vec![
                RunParam::Buffer {
                    name: "data".into(),
                    bytes: 4,
                    signed: true,
                    init: vec![0],
                },
                RunParam::Buffer {
                    name: "out".into(),
                    bytes: 4,
                    signed: true,
                    init: vec![-1, -1],
                },
                RunParam::Scalar {
                    name: "n".into(),
                    bytes: 8,
                    signed: false,
                    value: 3,
                },
            ],
        }
    }

    #[test]
    fn the_spec_lists_the_launch_and_every_parameter_in_order() {
        let s = spec(
            &mp(),
            &RunnerOptions {
                launches: 10,
                timeout_ms: 500,
            },
        );
        assert_eq!(
            s,
            "id k000\ntest kernels/mp_relaxed.cu\ncubin k000.cubin\nentry _Z2mpPiS_S_\n\
             grid 2 1 1\nblock 1 1 1\ncluster 0 0 0\nbuffer data 4 1 1 0\n\
             buffer out 4 1 2 -1 -1\nscalar n 8 0 3\nlaunches 10\ntimeout_ms 500\n"
        );
    }

    #[test]
    fn a_tensor_map_is_a_spec_line_with_its_type_dims_box_and_contents() {
        let mut k = mp();
        k.params = vec![RunParam::TensorMap {
            name: "tensor".into(),
            bytes: 8,
            signed: true,
            dtype: encodable("int64", 8, &[4, 4], &[2, 2]).unwrap(),
            dims: vec![4, 4],
            boxdims: vec![2, 2],
            init: (0..16).collect(),
        }];
        let s = spec(&k, &RunnerOptions::default());
        assert!(
            s.contains(
                "\ntensormap tensor 8 1 INT64 2 4 4 2 2 16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"
            ),
            "{s}"
        );
    }

    #[test]
    fn a_tensor_map_the_driver_cannot_encode_says_which_rule_it_breaks() {
        assert_eq!(
            encodable("int32", 4, &[4, 4], &[2, 2]),
            Err("the box's innermost extent is 8 bytes (2 elements of 4 bytes); the driver needs a multiple of 16".into())
        );
        assert_eq!(
            encodable("int64", 8, &[3, 2], &[2, 1]),
            Err("a step along dimension 1 is 24 bytes; the driver needs a multiple of 16".into())
        );
        assert_eq!(
            encodable("int32", 4, &[512], &[512]),
            Err("a box dimension of 512 (the driver takes 1 to 256)".into())
        );
        assert_eq!(encodable("float32", 4, &[8, 2], &[4, 2]), Ok("FLOAT32"));
    }

    #[test]
    fn a_struct_is_a_line_then_one_field_line_per_field_at_its_offset() {
        let mut k = mp();
        k.params = vec![RunParam::Struct {
            name: "p".into(),
            fields: vec![
                (
                    0,
                    RunParam::Buffer {
                        name: "data".into(),
                        bytes: 4,
                        signed: true,
                        init: vec![0],
                    },
                ),
                (
                    24,
                    RunParam::Scalar {
                        name: "value".into(),
                        bytes: 4,
                        signed: true,
                        value: 42,
                    },
                ),
            ],
        }];
        let s = spec(&k, &RunnerOptions::default());
        assert!(
            s.contains(
                "\nstruct p\nfield 0 buffer data 4 1 1 0\nfield 24 scalar value 4 1 42\nlaunches "
            ),
            "{s}"
        );
    }

    #[test]
    fn a_struct_kernel_of_the_corpus_is_written_with_its_fields() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/mp_struct.ptx");
        let l = crate::ptx::load_file_full(&path, None, None).unwrap();
        let k =
            KernelRun::from_launch("k000", "kernels/mp_struct.ptx", &l.entry, &l.launch, &l.ptx)
                .unwrap();
        let s = spec(&k, &RunnerOptions::default());
        assert!(
            s.contains(
                "\nstruct p\nfield 0 buffer data 4 1 1 0\nfield 8 buffer flag 4 1 1 0\n\
                 field 16 buffer out 4 1 1 0\nfield 24 scalar value 4 1 42\n"
            ),
            "{s}"
        );
    }

    #[test]
    fn a_cooperative_kernel_of_the_corpus_asks_for_a_cooperative_launch() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/cg_grid_sync.ptx");
        let l = crate::ptx::load_file_full(&path, None, None).unwrap();
        let k = KernelRun::from_launch(
            "k000",
            "kernels/cg_grid_sync.ptx",
            &l.entry,
            &l.launch,
            &l.ptx,
        )
        .unwrap();
        let s = spec(&k, &RunnerOptions::default());
        assert!(
            s.contains(
                "grid 3 1 1\nblock 2 1 1\ncluster 0 0 0\ncooperative\nbuffer slot 4 1 3 0 0 0\n"
            ),
            "{s}"
        );
        // The workspace is the driver's: no parameter of the runner.
        assert!(!s.contains("grid_workspace"), "{s}");
        assert!(!spec(&mp(), &RunnerOptions::default()).contains("cooperative"));
    }

    #[test]
    fn run_script_keeps_going_after_a_hang_or_a_fault() {
        let s = run_script(&[mp()]);
        assert!(s.contains(
            "./ptxmc_kernel_hw k000.spec \"$out/k000.json\"; rc=$?; \
             [ $rc = 0 ] || [ $rc = 4 ] || [ $rc = 5 ] || echo \"k000: runner failed ($rc)\" >&2\n"
        ));
    }
}
