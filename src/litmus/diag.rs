//! Positioned diagnostics for litmus input: what was found, what was
//! expected, where, rendered with the source line and a caret.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Chars, Config, DisplayStyle};
use std::fmt;

/// A byte range in a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
    /// Shift by `offset` bytes.
    pub fn shift(self, offset: usize) -> Span {
        Span::new(self.start + offset, self.end + offset)
    }
}

/// One error about one place in one file. Every diagnostic names what was
/// found and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where (byte offsets into the original file).
    pub span: Span,
    /// What the parser expected there.
    pub expected: String,
    /// What it found (already quoted where that helps).
    pub found: String,
    /// A short text under the caret.
    pub label: String,
    /// Extra explanation printed after the snippet.
    pub note: Option<String>,
    /// A warning rather than an error: the input is accepted, with a
    /// reading the user should know about. Its message is in `expected`.
    pub warning: bool,
}

impl Diagnostic {
    /// "expected E, found F" at `span`.
    pub fn expected(span: Span, expected: impl Into<String>, found: impl Into<String>) -> Self {
        Diagnostic {
            span,
            expected: expected.into(),
            found: found.into(),
            label: String::new(),
            note: None,
            warning: false,
        }
    }
    /// A warning at `span` with `message`.
    pub fn warning(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            expected: message.into(),
            found: String::new(),
            label: String::new(),
            note: None,
            warning: true,
        }
    }
    /// An input the tool understands but does not model: says so by name.
    pub fn unsupported(
        span: Span,
        feature: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Diagnostic {
            span,
            expected: expected.into(),
            found: format!("`{feature}`"),
            label: format!("`{feature}` is not supported by ptxmc"),
            note: None,
            warning: false,
        }
    }
    /// Set the label under the caret.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }
    /// Add a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
    /// The one-line message.
    pub fn message(&self) -> String {
        if self.warning {
            self.expected.clone()
        } else {
            format!("expected {}, found {}", self.expected, self.found)
        }
    }
}

/// A diagnostic bound to its file: what callers of the parser get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LitmusError {
    /// The file's path as given by the user.
    pub path: String,
    /// 1-based line of the error.
    pub line: usize,
    /// 1-based column (in characters) of the error.
    pub column: usize,
    /// The diagnostic.
    pub diagnostic: Box<Diagnostic>,
    rendered: String,
}

impl LitmusError {
    /// Bind `diagnostic` to the file `path` whose text is `source`.
    pub fn new(path: &str, source: &str, diagnostic: Diagnostic) -> Self {
        let start = clamp_to_char(source, diagnostic.span.start);
        let end = clamp_to_char(source, diagnostic.span.end.max(start));
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line = source[..start].matches('\n').count() + 1;
        let column = source[line_start..start].chars().count() + 1;
        let file = SimpleFile::new(path, source);
        let mut label = Label::primary((), start..end);
        if !diagnostic.label.is_empty() {
            label = label.with_message(&diagnostic.label);
        }
        let cs = if diagnostic.warning {
            CsDiagnostic::warning()
        } else {
            CsDiagnostic::error()
        };
        let mut cs = cs
            .with_message(diagnostic.message())
            .with_labels(vec![label]);
        if let Some(note) = &diagnostic.note {
            cs = cs.with_notes(vec![note.clone()]);
        }
        let config = Config {
            display_style: DisplayStyle::Rich,
            chars: Chars::ascii(),
            ..Config::default()
        };
        let rendered = term::emit_into_string(&config, &file, &cs)
            .unwrap_or_else(|_| format!("error: {}\n", diagnostic.message()));
        LitmusError {
            path: path.to_string(),
            line,
            column,
            diagnostic: Box::new(diagnostic),
            rendered,
        }
    }
    /// An error about the file as a whole (e.g. it cannot be read).
    pub fn whole_file(path: &str, expected: &str, found: String) -> Self {
        let diagnostic = Diagnostic::expected(Span::default(), expected, found);
        let rendered = format!("error: {}\n --> {path}:1:1\n", diagnostic.message());
        LitmusError {
            path: path.to_string(),
            line: 1,
            column: 1,
            diagnostic: Box::new(diagnostic),
            rendered,
        }
    }
    /// The full human-readable report (message, `--> file:line:col`, source line, caret).
    pub fn rendered(&self) -> &str {
        &self.rendered
    }
}

impl fmt::Display for LitmusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.path,
            self.line,
            self.column,
            self.diagnostic.message()
        )
    }
}

impl std::error::Error for LitmusError {}

fn clamp_to_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// "1 cell", "3 cells".
pub fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
