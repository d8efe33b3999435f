//! The litmus front end: reading test files into the program IR, and
//! printing the IR back as canonical litmus text.
//!
//! Two input formats are understood:
//! * `.litmus` — the herd-style PTX dialect of Dat3M ([`dat3m`]), extended
//!   with `cluster N` placements and an optional `expect` line;
//! * `.test` — NVIDIA mixedproxy's format ([`mixedproxy`]), with templates
//!   expanded into one test per row.
//!
//! Every failure is a [`LitmusError`]: file, line, column, what was found,
//! what was expected, and the source line with a caret.

mod async_instr;
mod builder;
pub mod cond;
pub mod dat3m;
mod diag;
pub mod instr;
pub mod lexer;
pub mod mixedproxy;
pub mod print;
pub mod raw;
mod sizes;
pub mod tcgen;
pub mod tensor;
pub mod typos;
pub mod vector;

pub use diag::{Diagnostic, LitmusError, Span};

use serde::Serialize;
use std::path::{Path, PathBuf};

use crate::ir::{Instr, Program, ProxyFenceKind};

/// Where each part of a program was written, as byte spans of the source file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SourceMap {
    /// `instrs[thread][pc]`: the instruction's text.
    pub instrs: Vec<Vec<Span>>,
    /// The thread header cells (or mixedproxy thread names).
    pub threads: Vec<Span>,
    /// The final condition.
    pub condition: Span,
    /// Per thread: the registers the initial state gives a value (a condition
    /// may name these, and the registers the thread's code writes).
    pub initialised: Vec<Vec<crate::ir::RegId>>,
}

impl SourceMap {
    /// The span of instruction `pc` of thread `t` (empty for instructions
    /// the source does not have, such as a lowering's).
    pub fn instr(&self, t: usize, pc: usize) -> Span {
        self.instrs
            .get(t)
            .and_then(|s| s.get(pc))
            .copied()
            .unwrap_or_default()
    }
}

/// The input format of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// herd-style `.litmus` (Dat3M's PTX dialect).
    Litmus,
    /// NVIDIA mixedproxy `.test`.
    MixedProxy,
    /// A CUDA kernel (`.ptx`, or `.cu` compiled to PTX) under a launch ([`crate::ptx`]).
    Kernel,
}

/// One test read from a file (a mixedproxy template yields several).
#[derive(Clone, Debug)]
pub struct LitmusTest {
    /// The program.
    pub program: Program,
    /// Positions of its parts in the file.
    pub spans: SourceMap,
    /// The file it came from.
    pub path: String,
    /// Its format.
    pub format: Format,
    /// 1-based template row, for expanded mixedproxy templates.
    pub instance: Option<usize>,
    /// The file's text (shared by the instances of one file), for diagnostics.
    pub source: std::sync::Arc<str>,
    /// For kernels: the CUDA `file:line` of each instruction (`cuda[thread][pc]`,
    /// from `.loc`); empty for litmus files.
    pub cuda: Vec<Vec<Option<String>>>,
}

impl LitmusTest {
    /// `path` or `path[row]` for template instances.
    pub fn display_path(&self) -> String {
        match self.instance {
            Some(k) => format!("{}[{k}]", self.path),
            None => self.path.clone(),
        }
    }
    /// Turn a diagnostic about this test into a positioned error.
    pub fn error(&self, d: Diagnostic) -> LitmusError {
        LitmusError::new(&self.path, &self.source, d)
    }
    /// `file:line:column` of instruction `pc` of thread `t`.
    pub fn position(&self, t: usize, pc: usize) -> String {
        let at = self.spans.instr(t, pc).start.min(self.source.len());
        let before = &self.source[..at];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        match self
            .cuda
            .get(t)
            .and_then(|c| c.get(pc))
            .and_then(|c| c.as_ref())
        {
            Some(cu) => format!("{}:{line}:{col} ({cu})", self.display_path()),
            None => format!("{}:{line}:{col}", self.display_path()),
        }
    }

    /// Notes for the reports: instructions the test uses that exist only in
    /// the ISCA'22 model, not in PTX (`fence.proxy.texture`, `.surface`,
    /// `.constant`), so that nobody takes them for fixes on real hardware.
    /// Also: a likely typo of a location name that the verdict rests on
    /// ([`typos::verdict_notes`]).
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (t, th) in self.program.threads.iter().enumerate() {
            for (pc, i) in th.code.iter().enumerate() {
                let Instr::ProxyFence { kind } = i else {
                    continue;
                };
                if !matches!(
                    kind,
                    ProxyFenceKind::Texture | ProxyFenceKind::Surface | ProxyFenceKind::Constant
                ) {
                    continue;
                }
                let at = self.spans.instrs[t][pc].start.min(self.source.len());
                let line = self.source[..at].matches('\n').count() + 1;
                out.push(format!(
                    "fence.proxy.{} ({}, line {line}) is a model-only instruction (ISCA'22), \
                     not PTX: ptxas rejects it",
                    kind.as_str(),
                    th.name
                ));
            }
        }
        out.extend(typos::verdict_notes(self));
        out
    }
}

/// Decide the format of a file from its extension (or its first word).
pub fn format_of(path: &str, text: &str) -> Option<Format> {
    if path.ends_with(".litmus") {
        Some(Format::Litmus)
    } else if path.ends_with(".test") {
        Some(Format::MixedProxy)
    } else if text.trim_start().starts_with("PTX") {
        Some(Format::Litmus)
    } else {
        None
    }
}

/// Parse a test file's text. `path` is used for messages and to pick the format.
/// (The size of files is bounded when they are read, [`parse_file`]; a text
/// in memory, such as a canonical text printed by ptxmc, is parsed whatever
/// its size, in time linear in it.)
pub fn parse_source(path: &str, text: &str) -> Result<Vec<LitmusTest>, LitmusError> {
    let source: std::sync::Arc<str> = text.into();
    match format_of(path, text) {
        Some(Format::Litmus) => {
            let (program, spans) =
                dat3m::parse(text).map_err(|d| LitmusError::new(path, text, d))?;
            Ok(vec![LitmusTest {
                program,
                spans,
                path: path.to_string(),
                format: Format::Litmus,
                instance: None,
                source,
                cuda: Vec::new(),
            }])
        }
        Some(Format::MixedProxy) => {
            let stem = Path::new(path)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("test");
            let tests =
                mixedproxy::parse(stem, text).map_err(|d| LitmusError::new(path, text, d))?;
            Ok(tests
                .into_iter()
                .map(|(program, spans, instance)| LitmusTest {
                    program,
                    spans,
                    path: path.to_string(),
                    format: Format::MixedProxy,
                    instance,
                    source: source.clone(),
                    cuda: Vec::new(),
                })
                .collect())
        }
        Some(Format::Kernel) | None => Err(LitmusError::whole_file(
            path,
            "a `.litmus` (herd/Dat3M PTX) or `.test` (mixedproxy) file",
            format!("`{path}`"),
        )),
    }
}

/// The largest test file ptxmc reads. Litmus tests are a few kilobytes;
/// the bound keeps a mistaken argument (a device, a huge log) from filling
/// memory.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

fn too_large(path: &str) -> LitmusError {
    LitmusError::whole_file(
        path,
        &format!("a test file of at most {} MiB", MAX_FILE_BYTES >> 20),
        "a larger file".to_string(),
    )
}

/// Read and parse one file.
pub fn parse_file(path: &Path) -> Result<Vec<LitmusTest>, LitmusError> {
    let shown = path.display().to_string();
    let io = |e: std::io::Error| {
        LitmusError::whole_file(&shown, "a readable file", format!("an I/O error: {e}"))
    };
    // Only regular files: reading a FIFO or a device could block or never end.
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "a special file (FIFO, socket or device)"
        };
        return Err(LitmusError::whole_file(
            &shown,
            "a regular file",
            what.to_string(),
        ));
    }
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(io)?;
    // `take` as well as the size: some files report no size (`/proc`).
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, MAX_FILE_BYTES + 1),
        &mut bytes,
    )
    .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(&shown));
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            // Point at the offending byte: the text before it is valid.
            let at = e.utf8_error().valid_up_to();
            let byte = e.as_bytes()[at];
            let lossy = String::from_utf8_lossy(e.as_bytes());
            return Err(LitmusError::new(
                &shown,
                &lossy,
                Diagnostic::expected(
                    Span::new(at, at + 1),
                    "UTF-8 text",
                    format!("the byte 0x{byte:02x}, which is not UTF-8"),
                ),
            ));
        }
    };
    parse_source(&shown, &text)
}

/// Expand the given paths: files as they are, directories recursively into
/// their `.litmus` and `.test` files, sorted for a stable order.
pub fn collect_files(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    walk_once(dir, out, &mut std::collections::HashSet::new())
}

/// Each directory is entered once (by its canonical path), so symbolic
/// links that loop back cannot make the walk endless.
fn walk_once(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut std::collections::HashSet<PathBuf>,
) -> std::io::Result<()> {
    if !seen.insert(std::fs::canonicalize(dir)?) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk_once(&path, out, seen)?;
        } else if path
            .extension()
            .is_some_and(|e| e == "litmus" || e == "test")
        {
            out.push(path);
        }
    }
    Ok(())
}
