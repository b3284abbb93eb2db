//! The C-family code writer: the indentation, line packing, names and literals
//! that every printer of C, CUDA C and OpenCL C shares, so that those printers
//! differ in what they print, never in how a line, a name or a number is spelt.
//!
//! A [`CodeWriter`] holds the text, its indentation depth and its
//! [`Language`]; names come from a [`Namer`] (for one language, or for all of
//! them where a program must read the same on every back-end) and literals
//! from [`literal`], which reads back as the same value in each language.

pub use crate::kir::literal::{floating, integer, literal, plain};
pub use crate::kir::names::{Language, Namer};

use crate::ir::Value;

/// The widest line a printer packs a parameter or argument list into.
pub const LINE_WIDTH: usize = 100;

/// Source text of one C-family language, written line by line at an
/// indentation depth of four spaces a level.
#[derive(Clone, Debug)]
pub struct CodeWriter {
    /// The text written so far.
    pub out: String,
    /// The current indentation depth.
    pub indent: usize,
    /// The language written.
    pub language: Language,
}

impl CodeWriter {
    /// An empty text in `language`, at depth 0.
    pub fn new(language: Language) -> CodeWriter {
        CodeWriter {
            out: String::new(),
            indent: 0,
            language,
        }
    }

    /// The spaces before a line at the current depth.
    pub fn pad(&self) -> String {
        "    ".repeat(self.indent)
    }

    /// Writes one line at the current depth.
    pub fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// An empty line.
    pub fn blank(&mut self) {
        self.out.push('\n');
    }

    /// Writes a line and indents what follows.
    pub fn open(&mut self, text: &str) {
        self.line(text);
        self.indent += 1;
    }

    /// Unindents and writes a line.
    pub fn close(&mut self, text: &str) {
        self.indent -= 1;
        self.line(text);
    }

    /// `value` as a literal of the language written.
    pub fn literal(&self, value: Value) -> String {
        literal(value, self.language)
    }

    /// A function head, `head(params)`, on one line when it fits in
    /// [`LINE_WIDTH`] columns, otherwise with the parameters packed on
    /// indented continuation lines.
    pub fn function_head(&mut self, head: &str, params: &str) {
        let one_line = format!("{head}({params})");
        if 4 * self.indent + one_line.len() <= LINE_WIDTH {
            self.line(&one_line);
            return;
        }
        self.line(&format!("{head}("));
        self.indent += 1;
        let parts: Vec<&str> = params.split(", ").collect();
        for line in packed_lines(&parts, ")", LINE_WIDTH.saturating_sub(4 * self.indent)) {
            self.line(&line);
        }
        self.indent -= 1;
    }

    /// `head item, item, ...tail` on one line when it fits in [`LINE_WIDTH`]
    /// columns, otherwise with the items packed on continuation lines two
    /// levels deeper.
    pub fn wrapped(&mut self, head: &str, items: &[String], tail: &str) {
        let one_line = format!("{head}{}{tail}", items.join(", "));
        if 4 * self.indent + one_line.len() <= LINE_WIDTH {
            self.line(&one_line);
            return;
        }
        self.line(head);
        self.indent += 2;
        let items: Vec<&str> = items.iter().map(String::as_str).collect();
        let width = LINE_WIDTH.saturating_sub(4 * self.indent);
        for line in packed_lines(&items, tail, width) {
            self.line(&line);
        }
        self.indent -= 2;
    }

    /// The text written.
    pub fn finish(self) -> String {
        self.out
    }
}

/// `items` packed on lines of at most `width` columns (one item alone may be
/// longer), `item, item,` with the last item followed by `tail`: the
/// continuation lines of a wrapped parameter or argument list.
pub fn packed_lines(items: &[&str], tail: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for (i, item) in items.iter().enumerate() {
        let piece = if i + 1 == items.len() {
            format!("{item}{tail}")
        } else {
            format!("{item},")
        };
        if !current.is_empty() && current.len() + 1 + piece.len() > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(&piece);
    }
    lines.push(current);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_indented_and_lists_packed() {
        let mut w = CodeWriter::new(Language::C);
        w.open("{");
        w.line(&format!("x = {};", w.literal(Value::Float(-0.5))));
        w.function_head("void f", &["int argument"; 12].join(", "));
        w.close("}");
        let text = w.finish();
        assert!(text.starts_with("{\n    x = (-0.5f);\n    void f(\n        int argument,"));
        assert!(text.lines().all(|l| l.len() <= LINE_WIDTH));
        assert!(text.ends_with("int argument)\n}\n"));
    }
}
