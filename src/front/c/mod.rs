//! The C front-end of `stencilc map`: a C99 translation unit, preprocessed by
//! the system `cc -E` and parsed by the `lang-c` crate, lowered into a small
//! loop IR ([`loops`]) that the mapping analysis works on.
//!
//! Every position is kept as a line of the user's file (the preprocessor's
//! line markers say which), so the rewritten program can keep the source text
//! outside mapped nests byte for byte and errors point into the real file.

pub mod fold;
pub mod loops;
pub mod lower;
pub mod options;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::diag::{Diagnostic, Diagnostics};
use crate::source::{read_source, show_bytes, ReadError, SourceFile, Span, MAX_C_SOURCE_BYTES};

pub use loops::CUnit;
pub use lower::lower_unit;
pub use options::Preprocess;

/// A preprocessed and parsed C file.
pub struct CFile {
    /// The file as the user wrote it.
    pub original: Arc<SourceFile>,
    /// The preprocessed text `lang-c` parsed.
    pub preprocessed: String,
    /// The syntax tree.
    pub unit: lang_c::ast::TranslationUnit,
    /// For each line of the preprocessed text: the 1-based line of the user's
    /// file it comes from, `None` for lines of included headers.
    line_origin: Vec<Option<usize>>,
    /// Byte offset where each preprocessed line starts.
    line_starts: Vec<usize>,
    /// The preprocessed lines that come from the user's file, as (line of the
    /// user's file, index of the preprocessed line) pairs in ascending order:
    /// [`CFile::preprocessed_lines`] finds a nest's lines by binary search
    /// instead of scanning every line of the unit for each nest.
    by_origin: Vec<(usize, usize)>,
    /// Byte offset where each line of the user's file starts (and, last, the
    /// text's length): [`CFile::original_line`] is a lookup, not a scan from
    /// the start of the file, which made `map` quadratic in the file's size.
    original_starts: Vec<usize>,
    /// Lines of the user's file of `#pragma scop` / `#pragma endscop` pairs.
    pub scops: Vec<(usize, usize)>,
}

/// Why a C file could not be read.
#[derive(Debug)]
pub enum CError {
    /// A syntax error located in the user's file.
    Located(Diagnostics),
    /// Anything else (no `cc`, an error of the preprocessor, a syntax error in a header).
    Plain(String),
    /// A limit on what `map` takes was passed (the file's size, the time or
    /// output of the preprocessor): what happened, and what to change.
    Refused {
        /// What went wrong, with the limit's figure.
        message: String,
        /// What to change.
        help: String,
    },
}

/// How deeply statements may nest in a C file for `map`: 256 levels (128
/// loops with braced bodies), far past real loop nests (the mapping criteria
/// take at most 3 block loops and 3 thread loops), while the analysis's memory,
/// which grows with the square of the depth, stays within a few tens of MiB.
pub const MAX_C_NESTING: usize = 256;

/// How long `cc -E` may run, in seconds: preprocessing even a large file with
/// its system headers takes well under a second, so a preprocessor still
/// running after this is stuck (reading `/dev/zero` or a pipe, say).
pub const PREPROCESS_SECONDS: u64 = 20;

/// The most bytes of `cc -E` output parsed: 16 MiB, four times the largest
/// file read ([`MAX_C_SOURCE_BYTES`]) plus room for the system headers, while
/// macros that expand exponentially are stopped before they fill memory.
pub const MAX_PREPROCESSED_BYTES: u64 = 16 << 20;

/// Stops the preprocessor `child` and every process of its group (see
/// [`preprocess`]), and reaps it.
fn kill_group(child: &mut std::process::Child) {
    crate::files::cleanup::kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
}

/// Runs `cc -E -x c` with `options` (`-std=gnu99` by default) on `path`
/// within [`PREPROCESS_SECONDS`], keeping at most [`MAX_PREPROCESSED_BYTES`]
/// of its output.
fn preprocess(cc: &str, path: &Path, options: &Preprocess) -> Result<String, CError> {
    use std::io::Read;
    let mut child = Command::new(cc)
        .arg("-E")
        .args(["-x", "c"])
        .args(options.cc_args())
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that a stuck `cc1` (the driver's child,
        // which holds the pipes) is stopped with the driver.
        .process_group(0)
        .spawn()
        .map_err(|e| CError::Plain(format!("cannot run the preprocessor `{cc} -E`: {e}")))?;
    // Killed, with its group, if stencilc is interrupted meanwhile.
    let _listed = crate::files::cleanup::Listed::child(child.id());
    // Both pipes are drained by threads so that a full pipe never stalls the
    // preprocessor; stdout stops one byte past the limit, stderr at 64 KiB.
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let over = Arc::new(AtomicBool::new(false));
    let out_reader = std::thread::spawn({
        let over = over.clone();
        move || {
            let mut bytes = Vec::new();
            let _ = (&mut stdout)
                .take(MAX_PREPROCESSED_BYTES + 1)
                .read_to_end(&mut bytes);
            if bytes.len() as u64 > MAX_PREPROCESSED_BYTES {
                over.store(true, Ordering::Relaxed);
            }
            bytes
        }
    });
    let err_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = (&mut stderr).take(64 << 10).read_to_end(&mut bytes);
        // Drain the rest so that the preprocessor is never blocked on stderr.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        bytes
    });
    let deadline = Instant::now() + Duration::from_secs(PREPROCESS_SECONDS);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if over.load(Ordering::Relaxed) => {
                // Output past the limit: nothing more is read, so stop it.
                kill_group(&mut child);
                break None;
            }
            Ok(None) if Instant::now() >= deadline => {
                kill_group(&mut child);
                let _ = out_reader.join();
                let _ = err_reader.join();
                return Err(CError::Refused {
                    message: format!(
                        "the preprocessor `{cc} -E` was still running after {PREPROCESS_SECONDS} s on `{}`, and was stopped",
                        path.display()
                    ),
                    help: "check the file's #include lines: one may name a device or a pipe \
                           (such as /dev/zero) that never ends"
                        .to_string(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                kill_group(&mut child);
                return Err(CError::Plain(format!(
                    "cannot wait for the preprocessor `{cc} -E`: {e}"
                )));
            }
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if stdout.len() as u64 > MAX_PREPROCESSED_BYTES {
        return Err(CError::Refused {
            message: format!(
                "the preprocessed `{}` is larger than the {} limit of `map`",
                path.display(),
                show_bytes(MAX_PREPROCESSED_BYTES)
            ),
            help: "check the file's macros and #include lines (a macro that expands \
                   exponentially, or a header that includes itself)"
                .to_string(),
        });
    }
    match status {
        Some(status) if status.success() => Ok(String::from_utf8_lossy(&stdout).into_owned()),
        _ => Err(CError::Plain(format!(
            "the preprocessor `{cc} -E` failed:\n{}",
            String::from_utf8_lossy(&stderr).trim_end()
        ))),
    }
}

impl CFile {
    /// Preprocesses `path` with `cc -E` (`cc` or the `CC` environment variable)
    /// and parses it.
    ///
    /// The file is read with [`read_source`]'s bound of [`MAX_C_SOURCE_BYTES`],
    /// and the preprocessor is run as C whatever the file's name (`-x c`: a
    /// `.txt` would otherwise be taken as linker input, a `.C` as C++), for at
    /// most [`PREPROCESS_SECONDS`] seconds and [`MAX_PREPROCESSED_BYTES`] bytes
    /// of output (`#include </dev/zero>` never ends).
    pub fn load(path: &Path) -> Result<CFile, CError> {
        CFile::load_with(path, &Preprocess::default())
    }

    /// [`CFile::load`] with the project's preprocessor options (include
    /// folders, macros, the C standard).
    pub fn load_with(path: &Path, options: &Preprocess) -> Result<CFile, CError> {
        let text = read_source(path, MAX_C_SOURCE_BYTES).map_err(|e| {
            let help = match e {
                ReadError::Io(_) => "check the path of the C file".to_string(),
                ReadError::TooLarge { regular: false, .. } => {
                    "give the path of a C source file (a device or pipe that never ends cannot be read)"
                        .to_string()
                }
                ReadError::TooLarge { limit, .. } => format!(
                    "map a smaller file: split the program into files of at most {} and map the one with the loops",
                    show_bytes(limit)
                ),
                ReadError::NotUtf8 { .. } => "save the file as UTF-8".to_string(),
            };
            CError::Refused {
                message: format!("cannot read the C file `{}`: {e}", path.display()),
                help,
            }
        })?;
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let preprocessed = preprocess(&cc, path, options)?;
        CFile::from_preprocessed(&path.display().to_string(), text, preprocessed)
    }

    /// Parses already preprocessed text; `name` and `text` are the user's file.
    pub fn from_preprocessed(
        name: &str,
        text: String,
        preprocessed: String,
    ) -> Result<CFile, CError> {
        let original = SourceFile::new(name, text);
        let (line_origin, line_starts) = line_table(&preprocessed, name);
        let by_origin = origin_index(&line_origin);
        let original_starts = line_starts_of(&original.text);
        let scops = scop_regions(&original.text);
        let config = lang_c::driver::Config {
            flavor: lang_c::driver::Flavor::GnuC11,
            ..lang_c::driver::Config::default()
        };
        match lang_c::driver::parse_preprocessed(&config, preprocessed.clone()) {
            Ok(parse) => {
                let file = CFile {
                    original,
                    preprocessed,
                    unit: parse.unit,
                    line_origin,
                    line_starts,
                    by_origin,
                    original_starts,
                    scops,
                };
                file.refuse_deep_nesting()?;
                Ok(file)
            }
            Err(error) => {
                let mut expected: Vec<&str> = error.expected.iter().copied().collect();
                expected.sort_unstable();
                let message = format!("C syntax error: expected {}", expected.join(", "));
                let pre_line = error.line.saturating_sub(1);
                match line_origin.get(pre_line).copied().flatten() {
                    Some(line) => {
                        let offset = offset_of(&original, line, error.column);
                        let span = Span::new(offset, offset + 1);
                        let diagnostic = Diagnostic::error(message, span)
                            .with_label("the parser stopped here")
                            .with_help(
                                "fix the C syntax (the file must compile with `cc -std=gnu99`)",
                            );
                        Err(CError::Located(Diagnostics::new(
                            original,
                            vec![diagnostic],
                        )))
                    }
                    None => Err(CError::Plain(format!(
                        "{message}, in a header included by `{name}` (preprocessed line {})",
                        error.line
                    ))),
                }
            }
        }
    }

    /// An error when statements nest more than [`MAX_C_NESTING`] deep: the
    /// loop IR and the mapping analysis keep, for each loop, what encloses it,
    /// so their memory grows with the square of the depth (1,000 nested loops
    /// took 350 MiB, 10,000 more than 12 GiB).
    fn refuse_deep_nesting(&self) -> Result<(), CError> {
        use lang_c::visit::Visit;
        struct Depth {
            depth: usize,
            /// Where the first statement past the limit starts (preprocessed offset).
            too_deep: Option<usize>,
        }
        impl<'ast> Visit<'ast> for Depth {
            fn visit_statement(
                &mut self,
                statement: &'ast lang_c::ast::Statement,
                span: &'ast lang_c::span::Span,
            ) {
                if self.too_deep.is_some() {
                    return;
                }
                self.depth += 1;
                if self.depth > MAX_C_NESTING {
                    self.too_deep = Some(span.start);
                } else {
                    lang_c::visit::visit_statement(self, statement, span);
                }
                self.depth -= 1;
            }
        }
        let mut depth = Depth {
            depth: 0,
            too_deep: None,
        };
        depth.visit_translation_unit(&self.unit);
        let Some(offset) = depth.too_deep else {
            return Ok(());
        };
        let message = format!(
            "statements are nested more than {MAX_C_NESTING} deep here, the limit of `map`"
        );
        let help = "nest fewer loops and blocks (each `for` and each `{ ... }` is one level): \
                    move the inner loops into a function";
        match self.line_of(offset) {
            Some(line) => {
                let column = offset - self.line_starts[self.line_index(offset)] + 1;
                let at = offset_of(&self.original, line, column);
                Err(CError::Located(Diagnostics::new(
                    self.original.clone(),
                    vec![Diagnostic::error(message, Span::new(at, at + 1))
                        .with_label(format!("level {}", MAX_C_NESTING + 1))
                        .with_help(help)],
                )))
            }
            None => Err(CError::Refused {
                message: format!(
                    "{message}, in a header included by `{}`",
                    self.original.name
                ),
                help: help.to_string(),
            }),
        }
    }

    /// The index of the preprocessed line holding byte `offset`.
    fn line_index(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// The line of the user's file a byte offset of the preprocessed text comes
    /// from (`None` inside headers).
    pub fn line_of(&self, offset: usize) -> Option<usize> {
        let index = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        self.line_origin.get(index).copied().flatten()
    }

    /// The preprocessed text that lines `first..=last` of the user's file
    /// became (macros expanded), line by line in the preprocessed order.
    pub fn preprocessed_lines(&self, first: usize, last: usize) -> String {
        let mut out = String::new();
        if first > last {
            return out;
        }
        let from = self.by_origin.partition_point(|&(l, _)| l < first);
        let to = self.by_origin.partition_point(|&(l, _)| l <= last);
        let mut indices: Vec<usize> = self.by_origin[from..to].iter().map(|&(_, i)| i).collect();
        indices.sort_unstable();
        for index in indices {
            let start = self.line_starts[index];
            let end = self
                .line_starts
                .get(index + 1)
                .copied()
                .unwrap_or(self.preprocessed.len());
            out.push_str(&self.preprocessed[start..end]);
        }
        out
    }

    /// A 1-based line of the user's file with its line ending (the piece
    /// `split_inclusive('\n')` gives), `None` past the end.
    pub fn original_line_with_end(&self, line: usize) -> Option<&str> {
        let index = line.checked_sub(1)?;
        let start = *self.original_starts.get(index)?;
        let end = *self.original_starts.get(index + 1)?;
        Some(&self.original.text[start..end])
    }

    /// The text of a 1-based line of the user's file (as `str::lines` gives
    /// it: without `\n` or `\r\n`), `""` past the end.
    pub fn original_line(&self, line: usize) -> &str {
        let Some(text) = self.original_line_with_end(line) else {
            return "";
        };
        match text.strip_suffix('\n') {
            Some(text) => text.strip_suffix('\r').unwrap_or(text),
            None => text,
        }
    }
}

/// For [`CFile::by_origin`]: the (line of the user's file, preprocessed line)
/// pairs of the preprocessed lines that come from the user's file, sorted.
fn origin_index(line_origin: &[Option<usize>]) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = line_origin
        .iter()
        .enumerate()
        .filter_map(|(index, origin)| origin.map(|l| (l, index)))
        .collect();
    pairs.sort_unstable();
    pairs
}

/// Where each line of `text` starts (the pieces of `split_inclusive('\n')`),
/// then `text.len()`.
fn line_starts_of(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        text.bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i + 1)
            .filter(|&end| end < text.len()),
    );
    if text.is_empty() {
        starts.clear();
    }
    starts.push(text.len());
    starts
}

/// Byte offset of a 1-based line and column in a source file (clamped to the line).
fn offset_of(file: &SourceFile, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (number, text) in file.text.split_inclusive('\n').enumerate() {
        if number + 1 == line {
            let content = text.trim_end_matches(['\n', '\r']);
            return offset
                + column
                    .saturating_sub(1)
                    .min(content.len().saturating_sub(1));
        }
        offset += text.len();
    }
    file.text.len().saturating_sub(1)
}

/// Reads the preprocessor's line markers (`# 12 "file.c" 2`): which line of
/// the main file each preprocessed line comes from, and where lines start.
fn line_table(preprocessed: &str, main_name: &str) -> (Vec<Option<usize>>, Vec<usize>) {
    let mut origin = Vec::new();
    let mut starts = Vec::new();
    let mut current: Option<(bool, usize)> = None;
    let mut offset = 0;
    for line in preprocessed.split_inclusive('\n') {
        starts.push(offset);
        offset += line.len();
        if let Some((number, file)) = line_marker(line) {
            origin.push(None);
            current = Some((file == main_name, number));
            continue;
        }
        match current {
            Some((true, number)) => {
                origin.push(Some(number));
                current = Some((true, number + 1));
            }
            Some((false, number)) => {
                origin.push(None);
                current = Some((false, number + 1));
            }
            None => origin.push(Some(origin.len() + 1)),
        }
    }
    (origin, starts)
}

/// `# 12 "file.c" ...` → (12, "file.c").
fn line_marker(line: &str) -> Option<(usize, &str)> {
    let rest = line.strip_prefix("# ")?;
    let (number, rest) = rest.split_once(' ')?;
    let number = number.parse().ok()?;
    let file = rest.trim_start().strip_prefix('"')?;
    let end = file.find('"')?;
    Some((number, &file[..end]))
}

/// The `#pragma scop` ... `#pragma endscop` line pairs of a file.
fn scop_regions(text: &str) -> Vec<(usize, usize)> {
    let mut regions = Vec::new();
    let mut open = None;
    for (index, line) in text.lines().enumerate() {
        let words: Vec<&str> = line
            .trim_start()
            .trim_start_matches('#')
            .split_whitespace()
            .collect();
        let is = |w: &str| {
            line.trim_start().starts_with('#')
                && words.first() == Some(&"pragma")
                && words.get(1) == Some(&w)
        };
        if is("scop") {
            open = Some(index + 1);
        } else if is("endscop") {
            if let Some(start) = open.take() {
                regions.push((start, index + 1));
            }
        }
    }
    regions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_markers_map_preprocessed_lines_to_the_main_file() {
        let pre = "# 1 \"a.c\"\nint x;\n# 1 \"h.h\" 1\nint y;\n# 3 \"a.c\" 2\nint z;\n";
        let (origin, _) = line_table(pre, "a.c");
        assert_eq!(origin, vec![None, Some(1), None, None, None, Some(3)]);
    }

    #[test]
    fn syntax_errors_point_into_the_users_file() {
        let text = "int f(void) {\n  return 1 +;\n}\n".to_string();
        let pre = format!("# 1 \"a.c\"\n{text}");
        let Err(CError::Located(diagnostics)) = CFile::from_preprocessed("a.c", text, pre) else {
            panic!("expected a located error");
        };
        let shown = diagnostics.to_string();
        assert!(shown.contains("a.c:2:"), "{shown}");
        assert!(shown.contains("return 1 +;"), "{shown}");
    }

    #[test]
    fn scop_pragmas_delimit_regions() {
        let text = "int a;\n#pragma scop\nfor(;;);\n#pragma endscop\n";
        assert_eq!(scop_regions(text), vec![(2, 4)]);
    }
}
