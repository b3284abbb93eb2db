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

/// The most bytes [`read_source`] reads of an SDSL, CUDA or C/C++ host file:
/// 16 MiB, far past any real program (the largest example is a few KiB), and
/// small enough that lexing, parsing and checking such a file stay within
/// seconds and a few hundred MiB.
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// The most bytes [`read_source`] reads of a C file for `stencilc map`: 4 MiB.
/// The C parser (`lang-c`) and the mapping analysis need far more memory per
/// byte than the SDSL front-end (a 50 MB C file exhausted memory), and the file
/// grows again under `cc -E`.
pub const MAX_C_SOURCE_BYTES: u64 = 4 << 20;

/// Why [`read_source`] could not give a file's text.
#[derive(Debug)]
pub enum ReadError {
    /// The operating system's error opening or reading the file.
    Io(std::io::Error),
    /// The file has more than `limit` bytes; `regular` says whether it is a
    /// regular file (a device such as `/dev/zero` never ends).
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
        /// Whether the path names a regular file.
        regular: bool,
    },
    /// The file is not UTF-8; the first bad byte is at 1-based `line` and
    /// `col` (in characters).
    NotUtf8 {
        /// Line of the first byte that is not UTF-8.
        line: usize,
        /// Column of that byte, in characters of the valid text before it.
        col: usize,
    },
}

/// A byte count as people read it: `16 MiB`, `512 KiB`, `100 bytes`.
pub fn show_bytes(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::TooLarge { limit, regular } => {
                if *regular {
                    write!(
                        f,
                        "it is larger than the {} limit for a source file",
                        show_bytes(*limit)
                    )
                } else {
                    write!(
                        f,
                        "it is not a regular file, and reading it gave more than the {} limit for a source file",
                        show_bytes(*limit)
                    )
                }
            }
            ReadError::NotUtf8 { line, col } => {
                write!(
                    f,
                    "it is not UTF-8 text (the first bad byte is at line {line}, column {col})"
                )
            }
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads the source file at `path` as UTF-8 text, at most `limit` bytes.
///
/// This is the one way a command reads a program: `std::fs::read` on
/// `/dev/zero` (or a pipe that never closes) would fill memory before any
/// check ran. A regular file's size is checked before reading; anything else
/// (a pipe, `/dev/null`, a device) is read up to one byte past the limit.
pub fn read_source(path: &std::path::Path, limit: u64) -> Result<String, ReadError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let regular = file.metadata().map_err(ReadError::Io)?.is_file();
    if regular && file.metadata().map_err(ReadError::Io)?.len() > limit {
        return Err(ReadError::TooLarge { limit, regular });
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit, regular });
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        // The valid prefix is UTF-8 by construction.
        let before = std::str::from_utf8(valid).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        ReadError::NotUtf8 { line, col }
    })
}

/// `text` with every lone `\r` (a classic Mac line end, not part of `\r\n`)
/// made a `\n`, so that lines and columns in diagnostics count such lines; a
/// byte for a byte, so spans are unchanged.
pub fn lone_cr_to_lf(text: String) -> String {
    if !text.contains('\r') {
        return text;
    }
    let mut bytes = text.into_bytes();
    for i in 0..bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n') {
            bytes[i] = b'\n';
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes.
    String::from_utf8(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_source_bounds_devices_and_locates_bad_bytes() {
        let zero = read_source(std::path::Path::new("/dev/zero"), 1 << 10).unwrap_err();
        assert!(
            matches!(
                zero,
                ReadError::TooLarge {
                    limit: 1024,
                    regular: false
                }
            ),
            "{zero:?}"
        );
        assert!(zero.to_string().contains("1 KiB"), "{zero}");
        assert_eq!(
            read_source(std::path::Path::new("/dev/null"), 10).unwrap(),
            ""
        );
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.sdsl");
        std::fs::write(&big, vec![b' '; 2048]).unwrap();
        let err = read_source(&big, 1 << 10).unwrap_err();
        assert!(
            matches!(err, ReadError::TooLarge { regular: true, .. }),
            "{err:?}"
        );
        let bad = dir.path().join("bad.sdsl");
        std::fs::write(&bad, b"int n;\nint \xc3\xa9\xff;\n").unwrap();
        let err = read_source(&bad, 1 << 10).unwrap_err();
        assert!(
            matches!(err, ReadError::NotUtf8 { line: 2, col: 6 }),
            "{err:?}"
        );
    }

    #[test]
    fn lone_carriage_returns_become_line_feeds() {
        assert_eq!(lone_cr_to_lf("a\rb\r\nc\r".into()), "a\nb\r\nc\n");
    }
}
