//! The `.npy` header, parsed here in time linear in its length.
//!
//! A `.npy` file starts with the magic bytes `\x93NUMPY`, a version (1.0, 2.0
//! or 3.0), the header's length (2 bytes little-endian in version 1, 4 in
//! versions 2 and 3) and the header itself: a Python dictionary literal such as
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (240, 320), }` padded
//! with spaces and a newline. The data follows.
//!
//! The dictionary is read by a recursive-descent parser that looks at each
//! byte once and never backtracks, with a bound on its nesting
//! ([`MAX_DEPTH`]) and on the header's length ([`MAX_HEADER_BYTES`], and never
//! more than the file holds), so that no header, however crafted, takes more
//! than a moment or more memory than its own length. (The `ndarray-npy`
//! crate's grammar-based parser backtracks exponentially on nested brackets:
//! twenty levels took 12 s.) As NumPy does, the dictionary must hold exactly
//! the keys `descr`, `fortran_order` and `shape`.

use std::fmt::Write as _;

/// The magic bytes every `.npy` file starts with.
const MAGIC: &[u8] = b"\x93NUMPY";

/// The longest header read, in bytes. A plain array's header is under 200
/// bytes (NumPy pads it to 64 or 128); NumPy's own reader refuses headers over
/// 10000 bytes unless told otherwise.
pub const MAX_HEADER_BYTES: u64 = 65_536;

/// How deeply brackets may nest in the header's dictionary (the dictionary
/// itself is one level, `shape`'s tuple a second).
pub const MAX_DEPTH: usize = 8;

/// The most dimensions a shape may have (NumPy 2's limit).
pub const MAX_DIMS: usize = 64;

/// Longest text shown from the header in a message.
const SHOWN: usize = 60;

/// Why a `.npy` file's preamble or header is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NpyHeaderError {
    /// The file is shorter than the magic bytes, and what it has matches them.
    #[error("the file has only {0} bytes, fewer than the .npy preamble")]
    TooShort(usize),
    /// The file does not start with the magic bytes.
    #[error("it does not start with the .npy magic bytes `\\x93NUMPY`")]
    NoMagic,
    /// The file ends before the version.
    #[error("the file ends inside the .npy preamble (its version)")]
    EndsInVersion,
    /// A format version other than 1.0, 2.0 and 3.0.
    #[error("format version {major}.{minor} is not one stencilc reads (1.0, 2.0 and 3.0 are)")]
    Version {
        /// The major version.
        major: u8,
        /// The minor version.
        minor: u8,
    },
    /// The file ends before the header's length.
    #[error("the file ends inside the .npy preamble (its header length)")]
    EndsInLength,
    /// The header claims more than [`MAX_HEADER_BYTES`].
    #[error(
        "its header claims {0} bytes, more than the {MAX_HEADER_BYTES} stencilc reads (a plain \
         array's header is under 200 bytes)"
    )]
    TooLong(u64),
    /// The header claims more bytes than the file has after the preamble.
    #[error(
        "its header claims {claimed} bytes, but the file has only {available} after the \
         {preamble}-byte preamble"
    )]
    BeyondFile {
        /// The header's length as the preamble gives it.
        claimed: u64,
        /// The bytes after the preamble.
        available: u64,
        /// The preamble's length.
        preamble: usize,
    },
    /// The header's text is not a Python literal a header may hold.
    #[error("{what} at byte {at} of the header")]
    Syntax {
        /// What is wrong there.
        what: String,
        /// Where, in bytes from the header's start.
        at: usize,
    },
    /// The header is a literal but not a dictionary.
    #[error("the header is not a dictionary but `{0}`")]
    NotADictionary(String),
    /// A key is not a string.
    #[error("the header's key `{0}` is not a string")]
    KeyNotAString(String),
    /// `fortran_order` is not a boolean.
    #[error("`fortran_order` must be True or False, not `{0}`")]
    FortranOrder(String),
    /// A key other than the three.
    #[error(
        "the header has the key `{0}`; a .npy header holds only `descr`, `fortran_order` and \
         `shape`"
    )]
    UnknownKey(String),
    /// A key given twice.
    #[error("the header gives `{0}` twice")]
    Twice(String),
    /// One of the three keys is missing.
    #[error("the header has no `{0}`")]
    Missing(&'static str),
    /// `shape` is not a tuple of non-negative integers.
    #[error("`shape` must be a tuple of non-negative integers, not `{0}`")]
    NotAShape(String),
    /// `shape` has more than [`MAX_DIMS`] dimensions.
    #[error("`shape` has {0} dimensions, more than the {MAX_DIMS} an array may have")]
    TooManyDims(usize),
    /// An extent does not fit in `usize`.
    #[error("the extent {0} in `shape` is too large for this machine")]
    ExtentTooLarge(String),
}

/// What a `.npy` header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The type string (`<f4`), or the Python text of a `descr` that is not a
    /// string (a structured dtype's list of fields).
    pub descr: Descr,
    /// Whether the data is in column-major (Fortran) order.
    pub fortran_order: bool,
    /// The array's shape, outermost axis first.
    pub shape: Vec<usize>,
    /// Where the data starts: the preamble's and the header's bytes.
    pub data_offset: u64,
}

/// The header's `descr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Descr {
    /// A type string such as `<f4` or `|u1`.
    Simple(String),
    /// Anything else (a structured dtype), as Python text.
    Other(String),
}

impl Descr {
    /// The size of one element in bytes, for a type string that gives one
    /// (`<f4` → 4, `|u1` → 1, `<c16` → 16).
    pub fn item_size(&self) -> Option<u64> {
        let Descr::Simple(text) = self else {
            return None;
        };
        let body = text.strip_prefix(['<', '>', '=', '|']).unwrap_or(text);
        let kind = body.chars().next()?;
        let count: u64 = body[kind.len_utf8()..].parse().ok().filter(|&n| n > 0)?;
        match kind {
            'i' | 'u' | 'f' | 'c' | 'b' | 'S' | 'V' | 'M' | 'm' => Some(count),
            // Unicode strings: UCS-4 characters.
            'U' => count.checked_mul(4),
            _ => None,
        }
    }
}

/// Reads the fixed-size preamble (magic, version, header length) from its
/// first bytes and returns the header's length and the preamble's length.
/// `file_len` is the file's size: a header longer than the file is refused
/// before anything is allocated for it.
pub fn preamble(start: &[u8], file_len: u64) -> Result<(usize, usize), NpyHeaderError> {
    if start.len() < MAGIC.len() || &start[..MAGIC.len()] != MAGIC {
        return Err(if start.len() < MAGIC.len() && MAGIC.starts_with(start) {
            NpyHeaderError::TooShort(start.len())
        } else {
            NpyHeaderError::NoMagic
        });
    }
    let Some(&[major, minor]) = start.get(6..8) else {
        return Err(NpyHeaderError::EndsInVersion);
    };
    let (length_bytes, preamble_len) = match major {
        1 => (2, 10),
        2 | 3 => (4, 12),
        _ => return Err(NpyHeaderError::Version { major, minor }),
    };
    let Some(length) = start.get(8..8 + length_bytes) else {
        return Err(NpyHeaderError::EndsInLength);
    };
    let header_len = length
        .iter()
        .rev()
        .fold(0u64, |n, &b| (n << 8) | u64::from(b));
    if header_len > MAX_HEADER_BYTES {
        return Err(NpyHeaderError::TooLong(header_len));
    }
    let available = file_len.saturating_sub(preamble_len as u64);
    if header_len > available {
        return Err(NpyHeaderError::BeyondFile {
            claimed: header_len,
            available,
            preamble: preamble_len,
        });
    }
    Ok((header_len as usize, preamble_len))
}

/// Parses the header's text (the bytes after the preamble); `data_offset` is
/// where the data starts.
pub fn parse(text: &[u8], data_offset: u64) -> Result<Header, NpyHeaderError> {
    let mut parser = Parser { text, at: 0 };
    parser.skip_space();
    let value = parser.value(0)?;
    parser.skip_space();
    if parser.at < text.len() {
        return Err(parser.error(&format!(
            "unexpected {} after the dictionary",
            parser.found()
        )));
    }
    let Value::Dict(entries) = value else {
        return Err(NpyHeaderError::NotADictionary(value.shown()));
    };
    interpret(entries, data_offset)
}

/// The three keys, checked once each.
fn interpret(entries: Vec<(Value, Value)>, data_offset: u64) -> Result<Header, NpyHeaderError> {
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    for (key, value) in entries {
        let Value::Str(name) = &key else {
            return Err(NpyHeaderError::KeyNotAString(key.shown()));
        };
        let seen = match name.as_str() {
            "descr" => descr.replace(descr_of(value)).is_some(),
            "fortran_order" => match value {
                Value::Bool(b) => fortran_order.replace(b).is_some(),
                other => return Err(NpyHeaderError::FortranOrder(other.shown())),
            },
            "shape" => shape.replace(shape_of(value)?).is_some(),
            other => return Err(NpyHeaderError::UnknownKey(clip(other))),
        };
        if seen {
            return Err(NpyHeaderError::Twice(name.clone()));
        }
    }
    let missing = NpyHeaderError::Missing;
    Ok(Header {
        descr: descr.ok_or_else(|| missing("descr"))?,
        fortran_order: fortran_order.ok_or_else(|| missing("fortran_order"))?,
        shape: shape.ok_or_else(|| missing("shape"))?,
        data_offset,
    })
}

fn descr_of(value: Value) -> Descr {
    match value {
        Value::Str(text) => Descr::Simple(text),
        other => Descr::Other(other.shown()),
    }
}

fn shape_of(value: Value) -> Result<Vec<usize>, NpyHeaderError> {
    let not_a_shape = |v: &Value| NpyHeaderError::NotAShape(v.shown());
    let Value::Tuple(items) = &value else {
        return Err(not_a_shape(&value));
    };
    if items.len() > MAX_DIMS {
        return Err(NpyHeaderError::TooManyDims(items.len()));
    }
    items
        .iter()
        .map(|item| match item {
            Value::Int(digits) if !digits.starts_with('-') => {
                let digits = digits.trim_start_matches('+');
                digits
                    .parse::<usize>()
                    .map_err(|_| NpyHeaderError::ExtentTooLarge(clip(digits)))
            }
            _ => Err(not_a_shape(&value)),
        })
        .collect()
}

/// A Python literal, as much of one as a header may hold.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Str(String),
    /// The digits, with their sign (`-3`).
    Int(String),
    /// Any other number, as written.
    Number(String),
    Bool(bool),
    None,
    Tuple(Vec<Value>),
    List(Vec<Value>),
    Dict(Vec<(Value, Value)>),
}

impl Value {
    /// Python-like text, cut short for messages.
    fn shown(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        clip(&out)
    }

    fn write(&self, out: &mut String) {
        if out.len() > SHOWN {
            return;
        }
        let items = |out: &mut String, items: &[Value]| {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                item.write(out);
            }
        };
        match self {
            Value::Str(s) => {
                let _ = write!(out, "'{s}'");
            }
            Value::Int(s) | Value::Number(s) => out.push_str(s),
            Value::Bool(true) => out.push_str("True"),
            Value::Bool(false) => out.push_str("False"),
            Value::None => out.push_str("None"),
            Value::Tuple(v) => {
                out.push('(');
                items(out, v);
                if v.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            Value::List(v) => {
                out.push('[');
                items(out, v);
                out.push(']');
            }
            Value::Dict(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.write(out);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// `text`, cut to [`SHOWN`] characters with `…` when longer.
fn clip(text: &str) -> String {
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// A cursor over the header's bytes. Every method either consumes input or
/// fails, and recursion goes no deeper than [`MAX_DEPTH`].
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')) {
            self.at += 1;
        }
    }

    /// What is at the cursor, for a message.
    fn found(&self) -> String {
        match self.peek() {
            None => "end of header".to_string(),
            Some(b) if b.is_ascii_graphic() => format!("`{}`", b as char),
            Some(b) => format!("byte 0x{b:02x}"),
        }
    }

    fn error(&self, what: &str) -> NpyHeaderError {
        NpyHeaderError::Syntax {
            what: what.to_string(),
            at: self.at,
        }
    }

    fn expected(&self, what: &str) -> NpyHeaderError {
        self.error(&format!("expected {what}, found {}", self.found()))
    }

    fn value(&mut self, depth: usize) -> Result<Value, NpyHeaderError> {
        match self.peek() {
            Some(open @ (b'{' | b'(' | b'[')) => {
                if depth >= MAX_DEPTH {
                    return Err(
                        self.error(&format!("brackets nest deeper than {MAX_DEPTH} levels"))
                    );
                }
                self.at += 1;
                match open {
                    b'{' => self.dict(depth + 1),
                    b'(' => self.sequence(b')', depth + 1).map(Value::Tuple),
                    _ => self.sequence(b']', depth + 1).map(Value::List),
                }
            }
            Some(b'\'' | b'"') => self.string().map(Value::Str),
            Some(b'u' | b'b' | b'U' | b'B')
                if matches!(self.text.get(self.at + 1), Some(b'\'' | b'"')) =>
            {
                self.at += 1;
                self.string().map(Value::Str)
            }
            Some(b'0'..=b'9' | b'-' | b'+' | b'.') => Ok(self.number()),
            Some(b) if b.is_ascii_alphabetic() => self.word(),
            _ => Err(self.expected("a value")),
        }
    }

    /// The items of a tuple or list up to `close`, the opening bracket read.
    fn sequence(&mut self, close: u8, depth: usize) -> Result<Vec<Value>, NpyHeaderError> {
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(close) {
                self.at += 1;
                return Ok(items);
            }
            items.push(self.value(depth)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b) if b == close => {}
                _ => return Err(self.expected(&format!("`,` or `{}`", close as char))),
            }
        }
    }

    /// A dictionary's entries, the `{` read.
    fn dict(&mut self, depth: usize) -> Result<Value, NpyHeaderError> {
        let mut entries = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(b'}') {
                self.at += 1;
                return Ok(Value::Dict(entries));
            }
            let key = self.value(depth)?;
            self.skip_space();
            if self.peek() != Some(b':') {
                return Err(self.expected("`:` after a key"));
            }
            self.at += 1;
            self.skip_space();
            let value = self.value(depth)?;
            entries.push((key, value));
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {}
                _ => return Err(self.expected("`,` or `}`")),
            }
        }
    }

    /// A quoted string, the cursor on its quote; a backslash takes the next
    /// byte as it is.
    fn string(&mut self) -> Result<String, NpyHeaderError> {
        let quote = self.text[self.at];
        let start = self.at;
        self.at += 1;
        let mut bytes = Vec::new();
        loop {
            match self.peek() {
                None => {
                    self.at = start;
                    return Err(self.error("a string that is never closed starts"));
                }
                Some(b) if b == quote => {
                    self.at += 1;
                    return Ok(String::from_utf8_lossy(&bytes).into_owned());
                }
                Some(b'\\') => {
                    self.at += 1;
                    if let Some(b) = self.peek() {
                        bytes.push(b);
                        self.at += 1;
                    }
                }
                Some(b) => {
                    bytes.push(b);
                    self.at += 1;
                }
            }
        }
    }

    /// A number: an integer (Python 2's `4L` included) or anything else
    /// numeric-looking, kept as text.
    fn number(&mut self) -> Value {
        let start = self.at;
        while matches!(
            self.peek(),
            Some(b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'.' | b'_' | b'+' | b'-')
        ) {
            // A sign is part of the number only first or after an exponent.
            let b = self.text[self.at];
            if matches!(b, b'+' | b'-')
                && self.at > start
                && !matches!(self.text[self.at - 1], b'e' | b'E')
            {
                break;
            }
            self.at += 1;
        }
        let text = String::from_utf8_lossy(&self.text[start..self.at]).into_owned();
        let digits = text.strip_suffix(['L', 'l']).unwrap_or(&text);
        let body = digits.strip_prefix(['-', '+']).unwrap_or(digits);
        if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
            Value::Int(digits.to_string())
        } else {
            Value::Number(text)
        }
    }

    /// `True`, `False` or `None`.
    fn word(&mut self) -> Result<Value, NpyHeaderError> {
        let start = self.at;
        while matches!(self.peek(), Some(b) if b.is_ascii_alphanumeric() || b == b'_') {
            self.at += 1;
        }
        match &self.text[start..self.at] {
            b"True" => Ok(Value::Bool(true)),
            b"False" => Ok(Value::Bool(false)),
            b"None" => Ok(Value::None),
            word => {
                let word = String::from_utf8_lossy(word).into_owned();
                self.at = start;
                Err(self.error(&format!(
                    "`{}` is not a value a header may hold (strings, numbers, True, False, \
                     None, tuples, lists and dictionaries are)",
                    clip(&word)
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(dict: &str) -> Result<Header, String> {
        parse(dict.as_bytes(), 0).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_what_numpy_writes() {
        let h = header("{'descr': '<f4', 'fortran_order': False, 'shape': (240, 320), }    \n")
            .unwrap();
        assert_eq!(h.descr, Descr::Simple("<f4".into()));
        assert!(!h.fortran_order);
        assert_eq!(h.shape, vec![240, 320]);
        let h = header("{\"descr\":\"|u1\",\"fortran_order\":True,\"shape\":(7L,)}").unwrap();
        assert_eq!((h.shape, h.fortran_order), (vec![7], true));
        assert_eq!(
            header("{'descr': '<f8', 'fortran_order': False, 'shape': ()}")
                .unwrap()
                .shape,
            Vec::<usize>::new()
        );
        assert_eq!(Descr::Simple("<c16".into()).item_size(), Some(16));
        assert_eq!(Descr::Simple("O".into()).item_size(), None);
    }

    #[test]
    fn a_structured_descr_is_kept_as_text() {
        let h = header(
            "{'descr': [('a', '<f4'), ('b', '<i8', (2,))], 'fortran_order': False, 'shape': (3,)}",
        )
        .unwrap();
        assert_eq!(
            h.descr,
            Descr::Other("[('a', '<f4'), ('b', '<i8', (2,))]".into())
        );
    }

    #[test]
    fn deep_nesting_is_refused_at_once() {
        let depth = 100_000;
        let dict = format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': {}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let err = header(&dict).unwrap_err();
        assert!(err.contains("nest deeper than 8 levels"), "{err}");
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let cases = [
            ("{'descr': '<f4', 'shape': (4,)}", "no `fortran_order`"),
            (
                "{'descr': '<f4', 'fortran_order': 0, 'shape': (4,)}",
                "True or False",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}",
                "the key `x`",
            ),
            ("{'descr': '<f4', 'descr': '<f4'}", "`descr` twice"),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,)}",
                "non-negative",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': [4]}",
                "must be a tuple",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
                "too large",
            ),
            ("{'descr': '<f4' 'fortran_order'}", "expected `,` or `}`"),
            ("{'descr: '<f4'}", "expected `:`"),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} x",
                "after the dictionary",
            ),
            ("{'descr': nan}", "`nan` is not a value"),
            ("{'descr': '<f4", "never closed"),
            ("[1, 2]", "not a dictionary"),
            ("", "expected a value, found end of header"),
        ];
        for (text, expected) in cases {
            let err = header(text).unwrap_err();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn the_preamble_is_checked_against_the_file() {
        let mut start = b"\x93NUMPY\x01\x00".to_vec();
        start.extend_from_slice(&100u16.to_le_bytes());
        assert_eq!(preamble(&start, 110).unwrap(), (100, 10));
        let err = preamble(&start, 50).unwrap_err().to_string();
        assert!(
            err.contains("claims 100 bytes, but the file has only 40"),
            "{err}"
        );
        let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
        v2.extend_from_slice(&u32::MAX.to_le_bytes());
        let err = preamble(&v2, 1 << 40).unwrap_err().to_string();
        assert!(err.contains("more than the 65536"), "{err}");
        let err = preamble(b"\x93NUMPY\x04\x00\x00\x00", 100)
            .unwrap_err()
            .to_string();
        assert!(err.contains("version 4.0"), "{err}");
        assert!(preamble(b"PK\x03\x04", 100)
            .unwrap_err()
            .to_string()
            .contains("magic"));
        assert!(preamble(b"\x93NUM", 4)
            .unwrap_err()
            .to_string()
            .contains("only 4 bytes"));
        assert_eq!(
            preamble(b"\x93NUM", 4).unwrap_err(),
            NpyHeaderError::TooShort(4)
        );
    }
}
