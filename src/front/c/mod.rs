//! The C front-end of `stencilc map`: a C99 translation unit, preprocessed by
//! the system `cc -E` and parsed by the `lang-c` crate, lowered into a small
//! loop IR ([`loops`]) that the mapping analysis works on.
//!
//! Every position is kept as a line of the user's file (the preprocessor's
//! line markers say which), so the rewritten program can keep the source text
//! outside mapped nests byte for byte and errors point into the real file.

pub mod loops;
pub mod lower;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use crate::diag::{Diagnostic, Diagnostics};
use crate::source::{SourceFile, Span};

pub use loops::CUnit;
pub use lower::lower_unit;

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
}

impl CFile {
    /// Preprocesses `path` with `cc -E` (`cc` or the `CC` environment variable)
    /// and parses it.
    pub fn load(path: &Path) -> Result<CFile, CError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CError::Plain(format!("cannot read `{}`: {e}", path.display())))?;
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let output = Command::new(&cc)
            .arg("-E")
            .arg("-std=gnu99")
            .arg(path)
            .output()
            .map_err(|e| CError::Plain(format!("cannot run the preprocessor `{cc} -E`: {e}")))?;
        if !output.status.success() {
            return Err(CError::Plain(format!(
                "the preprocessor `{cc} -E` failed:\n{}",
                String::from_utf8_lossy(&output.stderr).trim_end()
            )));
        }
        let preprocessed = String::from_utf8_lossy(&output.stdout).into_owned();
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
        let scops = scop_regions(&original.text);
        let config = lang_c::driver::Config {
            flavor: lang_c::driver::Flavor::GnuC11,
            ..lang_c::driver::Config::default()
        };
        match lang_c::driver::parse_preprocessed(&config, preprocessed.clone()) {
            Ok(parse) => Ok(CFile {
                original,
                preprocessed,
                unit: parse.unit,
                line_origin,
                line_starts,
                scops,
            }),
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
    /// became (macros expanded), line by line.
    pub fn preprocessed_lines(&self, first: usize, last: usize) -> String {
        let mut out = String::new();
        for (index, origin) in self.line_origin.iter().enumerate() {
            if origin.is_some_and(|l| first <= l && l <= last) {
                let start = self.line_starts[index];
                let end = self
                    .line_starts
                    .get(index + 1)
                    .copied()
                    .unwrap_or(self.preprocessed.len());
                out.push_str(&self.preprocessed[start..end]);
            }
        }
        out
    }

    /// The text of a 1-based line of the user's file.
    pub fn original_line(&self, line: usize) -> &str {
        self.original
            .text
            .lines()
            .nth(line.wrapping_sub(1))
            .unwrap_or("")
    }
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
