//! Source files and byte spans.
//!
//! Every IR node that a user wrote carries a [`Span`] into the [`SourceFile`] it came
//! from, so that errors found long after parsing (an out-of-grid access once parameter
//! values are known, say) still point at the offending line. For a program embedded in
//! a C/C++ file the source is the whole host file, so line numbers are the host file's.

use std::sync::Arc;

/// A half-open byte range `start..end` in a [`SourceFile`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span from `start` to `end` (byte offsets).
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The span as a `usize` range, for slicing the source text.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A named source text (a `.sdsl` file, or the whole of a C/C++ host file).
#[derive(Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// The name shown in diagnostics (usually the path as the user gave it).
    pub name: String,
    /// The full text.
    pub text: String,
}

impl SourceFile {
    /// A shared source file.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<SourceFile> {
        Arc::new(SourceFile {
            name: name.into(),
            text: text.into(),
        })
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = self.text[line_start..offset].chars().count() + 1;
        (line, col)
    }
}
