//! Diagnostics: compile-time and run-time errors that point into the source.
//!
//! A [`Diagnostic`] is rendered with `codespan-reporting` as
//! `error: message`, then `--> file:line:col`, the source line, a caret under the
//! offending text, and a `help:` line that says what to change.

use std::fmt;
use std::sync::Arc;

use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::{self, Files};
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

    /// The diagnostic on one line, `file:line:col: message; help`, for errors
    /// carried as text.
    pub fn one_line(&self, source: &SourceFile) -> String {
        let (line, col) = source.line_col(self.span.start as usize);
        let mut text = format!(
            "{}:{line}:{col}: {}",
            source.name,
            clip_words(&self.message)
        );
        if let Some(help) = &self.help {
            text.push_str("; ");
            text.push_str(&clip_words(help));
        }
        text
    }

    /// Renders the diagnostic against its source, without colours.
    ///
    /// A source line longer than [`MAX_SHOWN_LINE`] characters is shown as a
    /// window around the caret, cut off with `...`; the `file:line:col` is that
    /// of the full line.
    pub fn render(&self, source: &SourceFile) -> String {
        self.render_at(source, &[])
    }

    /// Renders with carets at `self.span` and at `also` (the places of identical
    /// diagnostics merged into this one).
    fn render_at(&self, source: &SourceFile, also: &[Span]) -> String {
        let clamp = |s: Span| {
            let len = source.text.len();
            let start = (s.start as usize).min(len);
            let end = (s.end as usize).clamp(start, len);
            start..end
        };
        let mut ranges = vec![(clamp(self.span), true, clip_words(&self.label))];
        ranges.extend(also.iter().map(|s| (clamp(*s), true, String::new())));
        for (span, text) in &self.secondary {
            ranges.push((clamp(*span), false, clip_words(text)));
        }
        let shown = ClippedSource::new(source, &ranges);
        let labels = ranges
            .into_iter()
            .map(|(range, primary, text)| {
                let range = shown.map_range(range);
                let label = if primary {
                    Label::primary((), range)
                } else {
                    Label::secondary((), range)
                };
                label.with_message(text)
            })
            .collect();
        let base = match self.severity {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
        };
        let message = clip_words(&self.message);
        let mut diag = base.with_message(message.clone()).with_labels(labels);
        if let Some(help) = &self.help {
            diag = diag.with_notes(vec![format!("help: {}", clip_words(help))]);
        }
        let config = term::Config::default();
        // Rendering into a string can only fail on an invalid span, which `clamp`
        // rules out; fall back to a plain line rather than panic.
        match term::emit_into_string(&config, &shown, &diag) {
            Ok(text) => text,
            Err(_) => {
                let (line, col) = source.line_col(self.span.start as usize);
                format!("error: {message}\n --> {}:{line}:{col}\n", source.name)
            }
        }
    }
}

/// The longest word (a run of letters, digits and `_`: a name or a number) that
/// a diagnostic's message, labels and help show whole, in characters; a longer
/// one (a 5 MB identifier) is shown as its first [`SHOWN_WORD_PREFIX`]
/// characters, `...` and its length.
pub const MAX_SHOWN_WORD: usize = 80;

/// How much of a word longer than [`MAX_SHOWN_WORD`] is shown.
const SHOWN_WORD_PREFIX: usize = 60;

/// `text` with every word longer than [`MAX_SHOWN_WORD`] characters cut to
/// `prefix... (N characters)`.
pub fn clip_words(text: &str) -> String {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len().min(1 << 12));
    let mut rest = text;
    while let Some(start) = rest.find(is_word) {
        out.push_str(&rest[..start]);
        let word_len = rest[start..]
            .find(|c: char| !is_word(c))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        let chars = word.chars().count();
        if chars > MAX_SHOWN_WORD {
            let cut = word
                .char_indices()
                .nth(SHOWN_WORD_PREFIX)
                .map_or(word.len(), |(i, _)| i);
            out.push_str(&word[..cut]);
            out.push_str(&format!("{ELLIPSIS} ({chars} characters)"));
        } else {
            out.push_str(word);
        }
        rest = &rest[start + word_len..];
    }
    out.push_str(rest);
    out
}

/// The longest source line shown whole in a diagnostic, in characters; longer
/// lines are cut to a window of this many characters around the caret.
pub const MAX_SHOWN_LINE: usize = 120;

/// What a cut line is marked with where text was left out.
const ELLIPSIS: &str = "...";

/// A source as a diagnostic shows it: every line longer than [`MAX_SHOWN_LINE`]
/// is cut to a window around the first labelled position in it, so that a
/// diagnostic on a megabyte-long line stays short. Line numbers are unchanged
/// and columns are reported as in the original text.
struct ClippedSource<'a> {
    original: &'a SourceFile,
    /// The text shown.
    text: String,
    /// Per line: where it starts in `text`, where it starts in the original,
    /// and the original byte range its window shows (after any leading `...`).
    lines: Vec<ShownLine>,
}

#[derive(Clone, Copy, Debug)]
struct ShownLine {
    shown_start: usize,
    shown_end: usize,
    original_start: usize,
    window: (usize, usize),
    lead: usize,
}

impl<'a> ClippedSource<'a> {
    fn new(original: &'a SourceFile, ranges: &[(Range<usize>, bool, String)]) -> ClippedSource<'a> {
        let source = original.text.as_str();
        // The first primary position, then every other labelled position.
        let mut points: Vec<usize> = Vec::new();
        for (range, primary, _) in ranges {
            if *primary {
                points.push(range.start);
            }
        }
        for (range, _, _) in ranges {
            points.push(range.start);
            points.push(range.end);
        }
        let mut text = String::new();
        let mut lines = Vec::new();
        let mut start = 0;
        for raw in source.split_inclusive('\n') {
            let content_len = raw.trim_end_matches(['\n', '\r']).len();
            let line = &source[start..start + content_len];
            let shown_start = text.len();
            let (window, lead) = if line.chars().count() <= MAX_SHOWN_LINE {
                text.push_str(line);
                ((start, start + content_len), 0)
            } else {
                let focus = points
                    .iter()
                    .find(|&&p| p >= start && p <= start + content_len)
                    .map_or(0, |p| p - start);
                let (lo, hi) = window_around(line, focus);
                let lead = if lo > 0 { ELLIPSIS.len() } else { 0 };
                if lo > 0 {
                    text.push_str(ELLIPSIS);
                }
                text.push_str(&line[lo..hi]);
                if hi < line.len() {
                    text.push_str(ELLIPSIS);
                }
                ((start + lo, start + hi), lead)
            };
            let shown_end = text.len();
            text.push_str(&raw[content_len..]);
            lines.push(ShownLine {
                shown_start,
                shown_end,
                original_start: start,
                window,
                lead,
            });
            start += raw.len();
        }
        if lines.is_empty() || source.ends_with('\n') {
            lines.push(ShownLine {
                shown_start: text.len(),
                shown_end: text.len(),
                original_start: source.len(),
                window: (source.len(), source.len()),
                lead: 0,
            });
        }
        ClippedSource {
            original,
            text,
            lines,
        }
    }

    /// The line holding original byte `offset`.
    fn line_of_original(&self, offset: usize) -> &ShownLine {
        let index = self
            .lines
            .partition_point(|l| l.original_start <= offset)
            .saturating_sub(1);
        &self.lines[index]
    }

    /// Where original byte `offset` is shown (the `...` when it was cut off).
    fn map(&self, offset: usize) -> usize {
        let line = self.line_of_original(offset);
        let (lo, hi) = line.window;
        if offset < lo {
            line.shown_start
        } else if offset > hi {
            line.shown_end
        } else {
            line.shown_start + line.lead + (offset - lo)
        }
    }

    fn map_range(&self, range: Range<usize>) -> Range<usize> {
        let start = self.map(range.start);
        start..self.map(range.end).max(start)
    }

    fn shown_line_index(&self, shown: usize) -> usize {
        self.lines
            .partition_point(|l| l.shown_start <= shown)
            .saturating_sub(1)
    }
}

/// The byte range of a window of [`MAX_SHOWN_LINE`] characters of `line`
/// around byte `focus`, a third of it before.
fn window_around(line: &str, focus: usize) -> (usize, usize) {
    let bounds: Vec<usize> = line
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(line.len()))
        .collect();
    let chars = bounds.len() - 1;
    let focus_char = bounds.partition_point(|&b| b < focus).min(chars);
    let width = MAX_SHOWN_LINE - 2 * ELLIPSIS.len();
    let first = focus_char
        .saturating_sub(width / 3)
        .min(chars.saturating_sub(width));
    let last = (first + width).min(chars);
    (bounds[first], bounds[last])
}

impl<'a> Files<'a> for ClippedSource<'_> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, files::Error> {
        Ok(self.original.name.as_str())
    }

    fn source(&'a self, (): ()) -> Result<&'a str, files::Error> {
        Ok(self.text.as_str())
    }

    fn line_index(&'a self, (): (), byte_index: usize) -> Result<usize, files::Error> {
        Ok(self.shown_line_index(byte_index))
    }

    fn line_range(&'a self, (): (), line_index: usize) -> Result<Range<usize>, files::Error> {
        let line = self
            .lines
            .get(line_index)
            .ok_or(files::Error::LineTooLarge {
                given: line_index,
                max: self.lines.len().saturating_sub(1),
            })?;
        let next = self
            .lines
            .get(line_index + 1)
            .map_or(self.text.len(), |l| l.shown_start);
        Ok(line.shown_start..next)
    }

    /// The column in the original line, not in the window shown.
    fn column_number(
        &'a self,
        (): (),
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, files::Error> {
        let Some(line) = self.lines.get(line_index) else {
            return Ok(1);
        };
        let (lo, hi) = line.window;
        let within = byte_index.saturating_sub(line.shown_start + line.lead);
        let original = (lo + within).min(hi);
        let text = &self.original.text[line.original_start..original];
        Ok(text.chars().count() + 1)
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
    /// Renders every diagnostic; diagnostics that say the same thing on one
    /// line (one message, label and help at several places, such as a size
    /// that is too small on two axes) are shown once, with a caret at each place.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<usize> = self
            .items
            .iter()
            .map(|d| self.source.line_col(d.span.start as usize).0)
            .collect();
        let same = |i: usize, j: usize| {
            let (a, b) = (&self.items[i], &self.items[j]);
            lines[i] == lines[j]
                && a.severity == b.severity
                && a.message == b.message
                && a.label == b.label
                && a.help == b.help
                && a.secondary.is_empty()
                && b.secondary.is_empty()
        };
        let mut shown = 0;
        for (i, d) in self.items.iter().enumerate() {
            if (0..i).any(|earlier| same(earlier, i)) {
                continue;
            }
            let also: Vec<Span> = (i + 1..self.items.len())
                .filter(|&later| same(i, later) && self.items[later].span != d.span)
                .map(|later| self.items[later].span)
                .collect();
            if shown > 0 {
                writeln!(f)?;
            }
            write!(f, "{}", d.render_at(&self.source, &also).trim_end())?;
            shown += 1;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    fn render_at(text: &str, at: usize, len: usize) -> String {
        let source = SourceFile::new("t.sdsl", text.to_string());
        Diagnostic::error("bad", Span::new(at, at + len))
            .with_label("here")
            .render(&source)
    }

    #[test]
    fn long_names_in_messages_are_cut_with_their_length() {
        let name = "x".repeat(5_000_000);
        let text = format!("int {name};\n");
        let source = SourceFile::new("t.sdsl", text);
        let shown = Diagnostic::error(
            format!("`{name}` is never used"),
            Span::new(4, 4 + name.len()),
        )
        .with_label(format!("`{name}` here"))
        .with_help(format!("remove `{name}`"))
        .render(&source);
        assert!(shown.len() < 2_000, "{} bytes", shown.len());
        assert!(shown.contains("(5000000 characters)"), "{shown}");
        assert!(shown.contains("t.sdsl:1:5"), "{shown}");
        // Short words, and words of exactly the limit, are left alone.
        let exact = "y".repeat(MAX_SHOWN_WORD);
        assert_eq!(
            clip_words(&format!("a `{exact}` b")),
            format!("a `{exact}` b")
        );
        assert_eq!(
            clip_words("é".repeat(100).as_str())
                .chars()
                .filter(|&c| c == 'é')
                .count(),
            60
        );
    }

    #[test]
    fn long_lines_are_cut_around_the_caret_on_char_boundaries() {
        let line = format!("{}X{}", "é".repeat(500), "ü".repeat(500));
        let text = format!("short\n{line}\nnext\n");
        let x = text.find('X').unwrap();
        let shown = render_at(&text, x, 1);
        assert!(shown.contains("t.sdsl:2:501"), "{shown}");
        let source_line = shown.lines().find(|l| l.starts_with("2 │")).unwrap();
        assert!(source_line.starts_with("2 │ ...é") && source_line.ends_with("ü..."));
        assert!(
            source_line.chars().count() <= MAX_SHOWN_LINE + 10,
            "{source_line}"
        );
        // The caret is under the X, counted in characters.
        let caret_line = shown.lines().find(|l| l.contains('^')).unwrap();
        let caret = caret_line.chars().position(|c| c == '^').unwrap();
        assert_eq!(source_line.chars().nth(caret), Some('X'), "{shown}");
        // At the very start and the very end of the line, and past the text.
        for at in [
            text.find('é').unwrap(),
            text.find("\nnext").unwrap(),
            text.len(),
        ] {
            let shown = render_at(&text, at, 0);
            assert!(shown.contains("t.sdsl:"), "{shown}");
        }
        // A caret spanning the whole long line is clipped too.
        let start = text.find('é').unwrap();
        let shown = render_at(&text, start, line.len());
        assert!(shown.len() < 1_000, "{shown}");
    }
}
