//! The PTX front end: real `nvcc -ptx` output in, the program IR out.
//!
//! A sibling of [`crate::litmus`] that lands in the same [`crate::ir::Program`]:
//! * [`lexer`] and [`parser`] read a whole module into its syntax tree
//!   ([`ast`]), every instruction kept with its span and CUDA line;
//! * [`launch`] reads a launch description (grid, block, buffers, the
//!   condition) from flags, a `.launch` file or a comment in the `.cu`;
//! * [`lower`] specialises one kernel for every thread of the launch into
//!   litmus threads, reusing the litmus dialect's decoder for every
//!   memory-model instruction.
//!
//! No engine learns PTX syntax; see `docs/kernels.md`.

pub mod ast;
pub mod inline;
pub mod launch;
pub mod lexer;
pub mod lower;
pub mod nvcc;
pub mod parser;

use std::path::Path;
use std::sync::Arc;

use crate::litmus::{Format, LitmusError, LitmusTest, Span};

/// Where a launch description came from, for positioned errors.
#[derive(Clone, Debug)]
pub struct LaunchText {
    /// The name shown in errors (a file, or `command line`).
    pub path: String,
    /// The whole text of that file (or the command line).
    pub source: String,
    /// Where the launch grammar starts in it and ends.
    pub range: (usize, usize),
}

impl LaunchText {
    /// A launch given as its own text (a `.launch` file or the command line).
    pub fn whole(path: &str, text: &str) -> LaunchText {
        LaunchText {
            path: path.to_string(),
            source: text.to_string(),
            range: (0, text.len()),
        }
    }
    fn text(&self) -> &str {
        &self.source[self.range.0..self.range.1]
    }
    fn error(&self, d: crate::litmus::Diagnostic) -> LitmusError {
        let mut d = d;
        d.span = d.span.shift(self.range.0);
        LitmusError::new(&self.path, &self.source, d)
    }
}

/// A kernel read for a run on the GPU as well as for the model: the test,
/// and what a launcher needs to launch the same kernel (`hw::kernels`).
#[derive(Clone, Debug)]
pub struct LoadedKernel {
    /// The kernel lowered under its launch.
    pub test: LitmusTest,
    /// The mangled `.entry` name the launch selected.
    pub entry: String,
    /// The launch as read (grid, block, cluster, parameter bindings).
    pub launch: launch::Launch,
    /// The PTX module's text (nvcc's output for a `.cu`).
    pub ptx: String,
}

/// Read a PTX module's text and lower its kernel under `launch` into a test.
pub fn load_source(path: &str, text: &str, launch: &LaunchText) -> Result<LitmusTest, LitmusError> {
    load_source_full(path, text, launch).map(|k| k.test)
}

/// [`load_source`], keeping the entry, the launch and the PTX text.
pub fn load_source_full(
    path: &str,
    text: &str,
    launch: &LaunchText,
) -> Result<LoadedKernel, LitmusError> {
    let module = parser::parse(text).map_err(|d| LitmusError::new(path, text, d))?;
    let l = launch::parse(launch.text()).map_err(|d| launch.error(d))?;
    let lowered = lower::lower(&module, &l, launch.text().len()).map_err(|e| {
        let (src, d) = *e;
        match src {
            lower::Source::Ptx => LitmusError::new(path, text, d),
            lower::Source::Launch => launch.error(d),
        }
    })?;
    let mut program = lowered.program;
    let mut spans = lowered.spans;
    if let Some((q, ctext, cspan)) = &l.condition {
        let c = lower::condition(&program, *q, ctext, &lowered.loc_types).map_err(|mut d| {
            d.span = d.span.shift(cspan.start);
            launch.error(d)
        })?;
        program.condition = c;
        spans.condition = Span::default();
    }
    if let Err(e) = program.validate() {
        return Err(LitmusError::whole_file(
            path,
            "a kernel that lowers to a valid program",
            format!("an internal error: {e}"),
        ));
    }
    let cuda = lowered
        .lines
        .iter()
        .map(|t| {
            t.iter()
                .map(|l| {
                    l.map(|l| {
                        let file = module.files.get(&l.root.0).map_or("?".to_string(), |f| {
                            Path::new(f)
                                .file_name()
                                .map_or(f.clone(), |n| n.to_string_lossy().into_owned())
                        });
                        format!("{file}:{}", l.root.1)
                    })
                })
                .collect()
        })
        .collect();
    let test = LitmusTest {
        program,
        spans,
        path: path.to_string(),
        format: Format::Kernel,
        instance: None,
        source: Arc::from(text),
        cuda,
    };
    Ok(LoadedKernel {
        test,
        entry: lowered.entry,
        launch: l,
        ptx: text.to_string(),
    })
}

/// The launch description beside a kernel file: `FILE.launch`, or the
/// `/* ptxmc-launch: ... */` comment of `FILE.cu` (for `FILE.ptx`, of the
/// `.cu` beside it, else of the `.ptx` itself). `None` if there is none.
pub fn launch_beside(path: &Path) -> Option<LaunchText> {
    let launch = path.with_extension("launch");
    if let Ok(t) = std::fs::read_to_string(&launch) {
        return Some(LaunchText::whole(&launch.display().to_string(), &t));
    }
    let cu = path.with_extension("cu");
    if let Some(l) = std::fs::read_to_string(&cu)
        .ok()
        .and_then(|src| launch_in(&cu.display().to_string(), &src))
    {
        return Some(l);
    }
    // The comment in the file itself (a `.ptx` pasted with its launch, as
    // the playground takes it).
    let src = std::fs::read_to_string(path).ok()?;
    launch_in(&path.display().to_string(), &src)
}

/// The launch in a kernel's own text: its `/* ptxmc-launch: ... */` comment
/// (a `.cu`'s, or one pasted into PTX, where the lexer skips it as any other
/// comment), positioned in that text for errors. `None` if there is none.
pub fn launch_in(path: &str, text: &str) -> Option<LaunchText> {
    let (at, l) = launch::from_cuda_comment(text)?;
    Some(LaunchText {
        path: path.to_string(),
        source: text.to_string(),
        range: (at, at + l.len()),
    })
}

/// Whether a path names a kernel (`.ptx` or `.cu`).
pub fn is_kernel_path(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ptx" || e == "cu")
}

/// Load a kernel file (`.ptx`, or `.cu` compiled with nvcc) under `launch`
/// (or the launch beside it).
pub fn load_file(
    path: &Path,
    launch: Option<&LaunchText>,
    nvcc: Option<&Path>,
) -> Result<LitmusTest, LitmusError> {
    load_file_full(path, launch, nvcc).map(|k| k.test)
}

/// [`load_file`], keeping the entry, the launch and the PTX text.
pub fn load_file_full(
    path: &Path,
    launch: Option<&LaunchText>,
    nvcc: Option<&Path>,
) -> Result<LoadedKernel, LitmusError> {
    let shown = path.display().to_string();
    let beside;
    let launch = match launch {
        Some(l) => l,
        None => {
            beside = launch_beside(path).ok_or_else(|| {
                LitmusError::whole_file(
                    &shown,
                    "a launch description (launch flags, a `.launch` file beside the kernel, or a `/* ptxmc-launch: ... */` comment in the `.cu`)",
                    "none".to_string(),
                )
            })?;
            &beside
        }
    };
    if path.extension().is_some_and(|e| e == "cu") {
        let ptx = nvcc::compile(path, nvcc)?;
        let label = format!("{} (nvcc -ptx)", shown);
        return load_source_full(&label, &ptx, launch);
    }
    let text = read_text(path)?;
    load_source_full(&shown, &text, launch)
}

/// The largest PTX file ptxmc reads (real modules run to megabytes).
pub const MAX_PTX_BYTES: u64 = 256 << 20;

fn read_text(path: &Path) -> Result<String, LitmusError> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| {
        LitmusError::whole_file(&shown, "a readable file", format!("an I/O error: {e}"))
    })?;
    if !meta.is_file() {
        return Err(LitmusError::whole_file(
            &shown,
            "a regular file",
            "something else".to_string(),
        ));
    }
    if meta.len() > MAX_PTX_BYTES {
        return Err(LitmusError::whole_file(
            &shown,
            &format!("a file of at most {} MiB", MAX_PTX_BYTES >> 20),
            "a larger file".to_string(),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| {
        LitmusError::whole_file(&shown, "a readable file", format!("an I/O error: {e}"))
    })?;
    String::from_utf8(bytes).map_err(|e| {
        LitmusError::whole_file(
            &shown,
            "UTF-8 text",
            format!(
                "a byte that is not UTF-8 at offset {}",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}
