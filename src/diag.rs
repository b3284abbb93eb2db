//! Diagnostics: compile-time and run-time errors that point into the source.
//!
//! A [`Diagnostic`] is rendered with `codespan-reporting` as
//! `error: message`, then `--> file:line:col`, the source line, a caret under the
//! offending text, and a `help:` line that says what to change.

use std::fmt;
use std::sync::Arc;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;

use crate::source::{SourceFile, Span};

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Compilation or the run cannot go on.
    Error,
    /// Worth knowing; the program still runs.
    Warning,
}

/// One error or warning about a program, located in its source.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, one sentence, no trailing period.
    pub message: String,
    /// Where (the primary label, shown with carets).
    pub span: Span,
    /// Text next to the carets; may be empty.
    pub label: String,
    /// Other places worth showing (e.g. the earlier declaration), with their labels.
    pub secondary: Vec<(Span, String)>,
    /// What to change, shown as `= help: ...`.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A new error at `span`.
    pub fn error(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            help: None,
        }
    }

    /// A new warning at `span`.
    pub fn warning(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message, span)
        }
    }

    /// Sets the text shown next to the carets.
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    /// Adds a secondary location.
    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.secondary.push((span, label.into()));
        self
    }

    /// Sets the advice on what to change.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Renders the diagnostic against its source, without colours.
    pub fn render(&self, source: &SourceFile) -> String {
        let file = SimpleFile::new(source.name.as_str(), source.text.as_str());
        let clamp = |s: Span| {
            let len = source.text.len();
            let start = (s.start as usize).min(len);
            let end = (s.end as usize).clamp(start, len);
            start..end
        };
        let mut labels =
            vec![Label::primary((), clamp(self.span)).with_message(self.label.clone())];
        for (span, text) in &self.secondary {
            labels.push(Label::secondary((), clamp(*span)).with_message(text.clone()));
        }
        let base = match self.severity {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
        };
        let mut diag = base.with_message(self.message.clone()).with_labels(labels);
        if let Some(help) = &self.help {
            diag = diag.with_notes(vec![format!("help: {help}")]);
        }
        let config = term::Config::default();
        // Rendering into a string can only fail on an invalid span, which `clamp`
        // rules out; fall back to a plain line rather than panic.
        match term::emit_into_string(&config, &file, &diag) {
            Ok(text) => text,
            Err(_) => {
                let (line, col) = source.line_col(self.span.start as usize);
                format!(
                    "error: {}\n --> {}:{line}:{col}\n",
                    self.message, source.name
                )
            }
        }
    }
}

/// One or more diagnostics together with the source they point into.
///
/// This is the error type of the front-end and of the run-time checks that
/// refer to source locations. Its `Display` renders every diagnostic.
#[derive(Clone, Debug)]
pub struct Diagnostics {
    /// The source the spans refer to.
    pub source: Arc<SourceFile>,
    /// The diagnostics, in source order where that is known.
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Wraps a list of diagnostics.
    pub fn new(source: Arc<SourceFile>, items: Vec<Diagnostic>) -> Diagnostics {
        Diagnostics { source, items }
    }

    /// Whether any item is an error.
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.items.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}", d.render(&self.source).trim_end())?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}
