//! What a nest leaves live: may a scalar the nest writes (a loop variable
//! declared outside its loop, a private temporary) be read after the nest
//! before it is written again? `--target c` then makes it `lastprivate`, and
//! a device kernel sets it from the host or stays on the CPU.
//!
//! The answer follows the loop IR from the end of the nest: the rest of each
//! enclosing block, and, inside an enclosing `for`, its condition and its
//! whole body again (the next trip runs the code before the nest too). A
//! statement that assigns the scalar on every path (`i = 0`, `for (i = ...)`)
//! ends the search along that path; a read before that makes it live. Where
//! the IR does not model the code (a `while` or `switch` around or after the
//! nest, a `goto`, a pointer dereference, an assignment inside an
//! expression), the answer falls back to the source text: the scalar is live
//! when its name appears after the nest, or anywhere in an enclosing loop.

use super::analysis::PURE_LIBRARY;
use super::rewrite::mentions;
use crate::front::c::loops::{Expr, Function, Loop, Stmt};
use crate::front::c::CFile;

/// Calls that read none of the program's variables but their arguments.
const OUTPUT_CALLS: &[&str] = &["printf", "fprintf", "puts", "putchar"];

/// The liveness question for one nest (see the module docs).
pub struct LiveAfter<'a> {
    /// The statement lists from the function body down to the one holding
    /// the nest, each with the index of the statement that leads on; `None`
    /// where the nest is not found or the function has a `goto`.
    frames: Option<Vec<Frame<'a>>>,
    /// The source text that may run after the nest (the fallback).
    text: String,
    function: &'a Function,
}

/// One statement list on the way from the function body to the nest.
struct Frame<'a> {
    block: &'a [Stmt],
    index: usize,
}

/// What a statement list does to one scalar, over all its paths.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Flow {
    /// Some path reads it before assigning it.
    read: bool,
    /// Some path reaches the end without assigning it.
    falls: bool,
    /// Some path leaves by `break` or `continue` without assigning it.
    escapes: bool,
}

impl Flow {
    const PASS: Flow = Flow {
        read: false,
        falls: true,
        escapes: false,
    };
}

impl<'a> LiveAfter<'a> {
    /// The question for the nest `root` of `function`.
    pub fn new(root: &Loop, function: &'a Function, file: &CFile) -> LiveAfter<'a> {
        let mut frames = Vec::new();
        let found = path_to(&function.body, root, &mut frames);
        LiveAfter {
            frames: (found && !has_goto(&function.body)).then_some(frames),
            text: text_after(root, function, file),
            function,
        }
    }

    /// Whether `name` may be read after the nest before it is assigned.
    pub fn reads(&self, name: &str) -> bool {
        self.follow(name)
            .unwrap_or_else(|| mentions(&self.text, name))
    }

    /// The answer from the loop IR, or `None` where it does not model the
    /// code on the way.
    fn follow(&self, name: &str) -> Option<bool> {
        let frames = self.frames.as_ref()?;
        let scalar = Scalar {
            name,
            // A global (or a name the function does not declare) outlives it.
            global: self.function.vars.get(name).is_none_or(|v| v.global),
        };
        // Whether the scalar may be read after the current statement list ends.
        let mut after_block = scalar.global;
        // The same for the body of the innermost enclosing `for`, where
        // `break` and `continue` lead.
        let mut after_loop_body: Option<bool> = None;
        for (depth, frame) in frames.iter().enumerate() {
            let rest = scalar.block(&frame.block[frame.index + 1..])?;
            let escaped = rest.escapes && after_loop_body?;
            let after = rest.read || (rest.falls && after_block) || escaped;
            if depth + 1 == frames.len() {
                return Some(after);
            }
            match &frame.block[frame.index] {
                Stmt::If { .. } => after_block = after,
                Stmt::For(l) if l.not_canonical.is_none() && !(l.declared && l.var == name) => {
                    // Leaving the body: the loop ends, or tests its bound
                    // and runs the body again.
                    after_block = after
                        || l.var == name
                        || scalar.expr(&l.upper)?
                        || scalar.block(&l.body)?.read;
                    after_loop_body = Some(after_block);
                }
                _ => return None,
            }
        }
        None
    }
}

/// The scalar asked about.
struct Scalar<'n> {
    name: &'n str,
    global: bool,
}

impl Scalar<'_> {
    fn block(&self, body: &[Stmt]) -> Option<Flow> {
        let mut out = Flow::PASS;
        for s in body {
            if !out.falls {
                break;
            }
            let f = self.stmt(s)?;
            out.read |= f.read;
            out.escapes |= f.escapes;
            out.falls = f.falls;
        }
        Some(out)
    }

    fn stmt(&self, s: &Stmt) -> Option<Flow> {
        Some(match s {
            Stmt::For(l) => {
                if l.not_canonical.is_some() {
                    return None;
                }
                let lower = self.expr(&l.lower)?;
                if l.var == self.name {
                    // `for (int v ...)` declares another `v`; `for (v = ...)` assigns it.
                    Flow {
                        read: lower,
                        falls: l.declared,
                        escapes: false,
                    }
                } else {
                    // The body may not run; its `break`s stay inside.
                    let body = self.block(&l.body)?;
                    Flow {
                        read: lower || self.expr(&l.upper)? || body.read,
                        ..Flow::PASS
                    }
                }
            }
            Stmt::Assign(a) => {
                let whole = a.target.name == self.name && a.target.index.is_empty();
                let mut read = self.expr(&a.value)? || (whole && a.op.is_some());
                for e in &a.target.index {
                    read |= self.expr(e)?;
                }
                Flow {
                    read,
                    falls: !whole,
                    escapes: false,
                }
            }
            // A declaration of the same name shadows it in its block, which
            // the loop IR does not delimit: it assigns nothing here.
            Stmt::Decl { init, .. } => Flow {
                read: match init {
                    Some(e) => self.expr(e)?,
                    None => false,
                },
                ..Flow::PASS
            },
            Stmt::If {
                cond, then, els, ..
            } => {
                let cond = self.expr(cond)?;
                let (then, els) = (self.block(then)?, self.block(els)?);
                Flow {
                    read: cond || then.read || els.read,
                    falls: then.falls || els.falls,
                    escapes: then.escapes || els.escapes,
                }
            }
            Stmt::Eval(e) => Flow {
                read: self.expr(e)?,
                ..Flow::PASS
            },
            Stmt::Break | Stmt::Continue => Flow {
                read: false,
                falls: false,
                escapes: true,
            },
            Stmt::Return(value) => Flow {
                read: self.global
                    || match value {
                        Some(e) => self.expr(e)?,
                        None => false,
                    },
                falls: false,
                escapes: false,
            },
            Stmt::Goto(_) | Stmt::Other { .. } => return None,
        })
    }

    /// Whether evaluating `e` may read the scalar (`None`: `e` holds a
    /// construct the IR does not model).
    fn expr(&self, e: &Expr) -> Option<bool> {
        let mut read = false;
        let mut unknown = false;
        e.visit(&mut |x| match x {
            Expr::Load(r) if r.name == self.name => read = true,
            Expr::Call(f, _)
                if self.global
                    && !PURE_LIBRARY.contains(&f.as_str())
                    && !OUTPUT_CALLS.contains(&f.as_str()) =>
            {
                read = true
            }
            Expr::Unsupported(_) => unknown = true,
            _ => {}
        });
        (!unknown).then_some(read)
    }
}

/// The text that may run after the nest, up to the end of the function:
/// what may read a value the nest leaves (a name it mentions is taken as
/// live). Inside a loop, the code before the nest in that loop runs after it
/// too (from the outermost enclosing loop's first line); with a `goto`
/// anywhere in the function, the whole function but the nest.
fn text_after(root: &Loop, function: &Function, file: &CFile) -> String {
    let lines = |range: std::ops::Range<usize>| -> String {
        range
            .map(|l| file.original_line(l))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let after = lines((root.lines.1 + 1)..function.lines.1 + 1);
    let last_line = file.original_line(root.lines.1);
    let tail = last_line.rsplit_once('}').map_or("", |(_, rest)| rest);
    let first_line = file.original_line(root.lines.0);
    let head = first_line
        .split_once("for")
        .map_or("", |(before, _)| before);
    let from = if has_goto(&function.body) {
        Some(function.lines.0)
    } else {
        enclosing_loop_line(&function.body, root)
    };
    let before = from.map_or(String::new(), |first| lines(first..root.lines.0));
    format!("{before}\n{head}\n{tail}\n{after}")
}

/// The first line of the outermost loop (`for`, `while`, `do`) around
/// `root` in `body`, if any.
fn enclosing_loop_line(body: &[Stmt], root: &Loop) -> Option<usize> {
    fn holds(body: &[Stmt], root: &Loop) -> bool {
        body.iter().any(|s| match s {
            Stmt::For(l) => std::ptr::eq(l, root) || l.lines == root.lines || holds(&l.body, root),
            Stmt::If { then, els, .. } => holds(then, root) || holds(els, root),
            Stmt::Other { body, .. } => holds(body, root),
            _ => false,
        })
    }
    body.iter().find_map(|s| match s {
        Stmt::For(l) if l.lines != root.lines && holds(&l.body, root) => Some(l.lines.0),
        Stmt::Other { what, body, line } if holds(body, root) => {
            if what.ends_with("loop") {
                Some(*line)
            } else {
                enclosing_loop_line(body, root)
            }
        }
        Stmt::If { then, els, .. } => {
            enclosing_loop_line(then, root).or_else(|| enclosing_loop_line(els, root))
        }
        _ => None,
    })
}

/// Pushes the frames from `body` down to the list holding `root`.
fn path_to<'a>(body: &'a [Stmt], root: &Loop, out: &mut Vec<Frame<'a>>) -> bool {
    for (index, s) in body.iter().enumerate() {
        out.push(Frame { block: body, index });
        let found = match s {
            Stmt::For(l) => std::ptr::eq(l, root) || path_to(&l.body, root, out),
            Stmt::If { then, els, .. } => path_to(then, root, out) || path_to(els, root, out),
            Stmt::Other { body, .. } => path_to(body, root, out),
            _ => false,
        };
        if found {
            return true;
        }
        out.pop();
    }
    false
}

/// Whether `body` jumps anywhere with `goto`.
fn has_goto(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Goto(_) => true,
        Stmt::For(l) => has_goto(&l.body),
        Stmt::If { then, els, .. } => has_goto(then) || has_goto(els),
        Stmt::Other { body, .. } => has_goto(body),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::c::{lower_unit, CFile};

    /// Whether each of `names` is live after the loop starting on `line` of
    /// `main` in `text`.
    fn live(text: &str, line: usize, names: &[&str]) -> Vec<bool> {
        let pre = format!("# 1 \"t.c\"\n{text}");
        let Ok(file) = CFile::from_preprocessed("t.c", text.to_string(), pre) else {
            panic!("does not parse")
        };
        let unit = lower_unit(&file);
        let main = &unit.functions[0];
        fn find(body: &[Stmt], line: usize) -> Option<&Loop> {
            body.iter().find_map(|s| match s {
                Stmt::For(l) if l.lines.0 == line => Some(l),
                Stmt::For(l) => find(&l.body, line),
                Stmt::If { then, els, .. } => find(then, line).or_else(|| find(els, line)),
                _ => None,
            })
        }
        let root = find(&main.body, line).expect("a loop on that line");
        let after = LiveAfter::new(root, main, &file);
        names.iter().map(|n| after.reads(n)).collect()
    }

    #[test]
    fn an_assignment_on_every_path_ends_the_value() {
        let text = "void main(void) {\n int i, j, k; double t, s = 0;\n\
                    for (i = 0; i < 9; i++) { t = i; s += t; }\n\
                    if (s > 1) { t = 0; j = 1; } else { t = 1; }\n\
                    s += t + j;\n\
                    for (k = 0; k < 3; k++) s += i;\n}\n";
        // `t` is assigned on both branches, `j` on one; the loop `k` may not
        // run, so `i` in its body is read.
        assert_eq!(
            live(text, 3, &["t", "j", "i", "k"]),
            [false, true, true, false]
        );
    }

    #[test]
    fn the_next_trip_of_an_enclosing_loop_reads_what_the_nest_left() {
        let text = "void main(void) {\n int i, j; double t = 0, s = 0;\n\
                    for (int n = 0; n < 3; n++) {\n\
                    s += t;\n\
                    for (i = 0; i < 9; i++) t = i;\n\
                    for (j = 0; j < 9; j++) s += j;\n\
                    }\n}\n";
        assert_eq!(live(text, 5, &["t", "i", "j"]), [true, false, false]);
        assert_eq!(live(text, 6, &["t", "j"]), [true, false]);
    }

    #[test]
    fn break_leads_past_the_rest_of_the_body() {
        // The `break` skips `t = 0`; the loop's end then reaches `s += t`.
        let text = "void main(void) {\n int i; double t = 0, s = 0;\n\
                    for (int n = 0; n < 3; n++) {\n\
                    for (i = 0; i < 9; i++) t = i;\n\
                    if (s > 2) break;\n\
                    t = 0;\n\
                    }\n\
                    s += t;\n}\n";
        assert_eq!(live(text, 4, &["t"]), [true]);
        let without_break = text.replace("if (s > 2) break;", "");
        assert_eq!(live(&without_break, 4, &["t"]), [false]);
    }

    #[test]
    fn globals_outlive_the_function_and_unmodelled_code_falls_back_to_the_text() {
        let text = "double g;\nvoid main(void) {\n int i; double t = 0;\n\
                    for (i = 0; i < 9; i++) { g = i; t = i; }\n\
                    while (g > 0) g -= 1;\n}\n";
        // The `while` is not modelled: its text names `g` (live), not `t`.
        assert_eq!(live(text, 4, &["g", "t", "i"]), [true, false, false]);
        let returns = "double g;\nvoid main(void) {\n int i;\n\
                       for (i = 0; i < 9; i++) g = i;\n}\n";
        assert_eq!(live(returns, 4, &["g", "i"]), [true, false]);
    }
}
