//! The rewritten kernel, as edits of the user's text at the annotations'
//! places (so that everything else keeps its formatting): `profile(...)`
//! statements dropped (with their line when nothing else is on it), each
//! `__opt__.in[w]` replaced by `((guard) ? sb[index] : in[w])` (or by
//! `in[w]` when no slot serves it), and the barriers inserted.

use crate::front::cuda::ast::{Kernel, MarkedRead, Stmt, StmtKind};
use crate::source::Span;

use super::barriers::{line_of, Insertion};

/// One text edit: replace `range` of the original by `text`.
#[derive(Clone, Debug)]
struct Edit {
    start: usize,
    end: usize,
    text: String,
    /// The number of the barrier it inserts, to find its line afterwards.
    barrier: Option<usize>,
}

/// The rewritten text and the 1-based line of each inserted barrier (in the
/// order of `barriers`).
pub struct Rewritten {
    /// The whole file.
    pub text: String,
    /// The line of each barrier in [`Rewritten::text`].
    pub barrier_lines: Vec<usize>,
    /// The edits applied: original range and the length of what replaced it.
    applied: Vec<(usize, usize, usize)>,
}

impl Rewritten {
    /// The line in the rewritten text of what starts at `offset` in the
    /// original (for messages naming statements of both).
    pub fn line_of_original(&self, offset: usize) -> usize {
        let mut out = offset as isize;
        for &(start, end, len) in &self.applied {
            if end <= offset && !(start == end && start == offset) {
                out += len as isize - (end - start) as isize;
            }
        }
        line_of(&self.text, out.max(0) as usize)
    }
}

/// The marked read as its global read: `__opt__.in[w]` and
/// `__opt__(in[w], sb[j])` → `in[w]`.
pub fn global_read(read: &MarkedRead) -> String {
    match &read.chosen {
        Some(chosen) => chosen.read_text.clone(),
        None => global_text(&read.text),
    }
}

/// The read as the original global read: `__opt__.in[w]` → `in[w]`.
pub fn global_text(read_text: &str) -> String {
    let rest = read_text.trim_start();
    let rest = rest.strip_prefix("__opt__").unwrap_or(rest).trim_start();
    rest.strip_prefix('.')
        .unwrap_or(rest)
        .trim_start()
        .to_string()
}

/// Applies the replacements of the marked reads (`replacements[m]` for read
/// `m` of the kernel), drops `profile(...)`, inserts the barriers.
pub fn rewrite(
    text: &str,
    kernel: &Kernel,
    replacements: &[String],
    barriers: &[Insertion],
) -> Rewritten {
    let mut edits = Vec::new();
    for (read, replacement) in kernel.marked.iter().zip(replacements) {
        edits.push(Edit {
            start: read.span.start as usize,
            end: read.span.end as usize,
            text: replacement.clone(),
            barrier: None,
        });
    }
    let mut profiles = Vec::new();
    collect_profiles(&kernel.body, &mut profiles);
    for span in profiles {
        let (start, end) = whole_lines(text, span);
        edits.push(Edit {
            start,
            end,
            text: String::new(),
            barrier: None,
        });
    }
    for (n, b) in barriers.iter().enumerate() {
        edits.push(Edit {
            start: b.offset,
            end: b.offset,
            text: b.text.clone(),
            barrier: Some(n),
        });
    }
    // Insertions at one offset keep their order; none overlaps a replacement
    // (barriers go between statements, replacements inside them).
    edits.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(text.len() + 256);
    let mut at = 0;
    let mut barrier_offsets = vec![0; barriers.len()];
    let mut applied = Vec::new();
    for e in &edits {
        if e.start < at {
            continue; // overlapping: cannot happen for well-formed spans
        }
        applied.push((e.start, e.end, e.text.len()));
        out.push_str(&text[at..e.start]);
        if let Some(n) = e.barrier {
            let lead = e.text.len() - e.text.trim_start().len();
            barrier_offsets[n] = out.len() + lead;
        }
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(&text[at..]);
    let barrier_lines = barrier_offsets.iter().map(|&o| line_of(&out, o)).collect();
    Rewritten {
        text: out,
        barrier_lines,
        applied,
    }
}

fn collect_profiles(stmts: &[Stmt], out: &mut Vec<Span>) {
    for stmt in stmts {
        match &stmt.kind {
            StmtKind::Profile(_) => out.push(stmt.span),
            StmtKind::Block(s) | StmtKind::DeclList(s) => collect_profiles(s, out),
            StmtKind::If(_, a, b) => {
                collect_profiles(std::slice::from_ref(a), out);
                if let Some(b) = b {
                    collect_profiles(std::slice::from_ref(b), out);
                }
            }
            StmtKind::For { body, .. } | StmtKind::While(_, body) => {
                collect_profiles(std::slice::from_ref(body), out)
            }
            _ => {}
        }
    }
}

/// The span widened to its whole lines (with the newline) when nothing but
/// blanks shares them; else the span itself.
fn whole_lines(text: &str, span: Span) -> (usize, usize) {
    let (start, end) = (span.start as usize, span.end as usize);
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    let before_blank = text[line_start..start].trim().is_empty();
    let after_blank = text[end..line_end].trim().is_empty();
    if before_blank && after_blank {
        (line_start, line_end)
    } else {
        (start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_the_mark_only() {
        assert_eq!(global_text("__opt__.in[w]"), "in[w]");
        assert_eq!(
            global_text("__opt__ . a[j * nx + i - 1]"),
            "a[j * nx + i - 1]"
        );
    }

    #[test]
    fn a_statement_alone_on_its_lines_takes_them_along() {
        let text = "a;\n    profile(\"i\");\nb;";
        let at = text.find("profile").unwrap();
        let span = Span::new(at, at + "profile(\"i\");".len());
        let (s, e) = whole_lines(text, span);
        assert_eq!(&text[..s], "a;\n");
        assert_eq!(&text[e..], "b;");
        let text = "a; profile(\"i\"); b;";
        let at = text.find("profile").unwrap();
        let span = Span::new(at, at + "profile(\"i\");".len());
        assert_eq!(
            whole_lines(text, span),
            (span.start as usize, span.end as usize)
        );
    }
}
