//! What a nest leaves live: may a scalar the nest writes (a loop variable
//! declared outside its loop, a private temporary) be read after the nest
//! before it is written again? `--target c` then makes it `lastprivate`, and
//! a device kernel sets it from the host or stays on the CPU.
//!
//! The answer follows the loop IR from the end of the nest: the rest of each
//! enclosing block, and, inside an enclosing loop (`for`, `while`, `do`), its
//! condition and its whole body again (the next trip runs the code before
//! the nest too). A statement that assigns the scalar on every path (`i = 0`,
//! `for (i = ...)`) ends the search along that path; a read before that
//! makes it live. A global, `static` or `extern` scalar outlives the call,
//! and a scalar whose address the function takes (`&t`) may be read through
//! a pointer anywhere: both are live. Where the IR does not model the code
//! (a `switch` around or after the nest, a `goto`, a pointer dereference, an
//! assignment inside an expression), the answer falls back to the source
//! text: the scalar is live when its name appears after the nest, or
//! anywhere in an enclosing loop.

use super::syntax::{mentions_identifier as mentions, walk, PURE_LIBRARY};
use crate::front::c::loops::{CUnit, Expr, Function, Loop, Stmt};
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
    /// The whole function's text (for `&name`).
    function_text: String,
    function: &'a Function,
    unit: &'a CUnit,
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
    /// The question for the nest `root` of `function` in `unit`.
    pub fn new(
        root: &Loop,
        function: &'a Function,
        unit: &'a CUnit,
        file: &CFile,
    ) -> LiveAfter<'a> {
        let mut frames = Vec::new();
        let found = path_to(&function.body, root, &mut frames) && !has_goto(&function.body);
        // The fallback text starts at the outermost loop around the nest, or
        // at the function's start where the IR cannot be followed.
        let from = if found {
            frames[..frames.len() - 1]
                .iter()
                .find_map(|f| loop_line(&f.block[f.index]))
        } else {
            Some(function.lines.0)
        };
        LiveAfter {
            frames: found.then_some(frames),
            text: text_after(root, from, function, file),
            function_text: lines(file, function.lines.0..function.lines.1 + 1),
            function,
            unit,
        }
    }

    /// Whether `name` may be read after the nest before it is assigned.
    pub fn reads(&self, name: &str) -> bool {
        if self.function.addressed.contains(name) || address_taken(&self.function_text, name) {
            return true;
        }
        let global = self.outlives_call(name);
        self.follow(name, global)
            .unwrap_or_else(|| global || mentions(&self.text, name))
    }

    /// Whether `name` is a global, or a `static` or `extern` local: it
    /// outlives the call, and other functions may read it.
    fn outlives_call(&self, name: &str) -> bool {
        self.unit.globals.contains_key(name)
            || self.unit.header_globals.contains(name)
            || self.function.vars.get(name).is_none_or(|v| v.global)
    }

    /// The answer from the loop IR, or `None` where it does not model the
    /// code on the way.
    fn follow(&self, name: &str, global: bool) -> Option<bool> {
        let frames = self.frames.as_ref()?;
        let scalar = Scalar {
            name,
            global,
            function: self.function,
        };
        // Whether the scalar may be read after the current statement list ends.
        let mut after_block = global;
        // The same for the body of the innermost enclosing loop, where
        // `break` and `continue` lead.
        let mut after_loop_body: Option<bool> = None;
        for (depth, frame) in frames.iter().enumerate() {
            let rest = scalar.block(&frame.block[frame.index + 1..], false)?;
            let escaped = rest.escapes && after_loop_body?;
            let after = rest.read || (rest.falls && after_block) || escaped;
            if depth + 1 == frames.len() {
                return Some(after);
            }
            // Leaving the body of a loop: it ends, or tests its condition
            // and runs the body again.
            let again = match &frame.block[frame.index] {
                Stmt::If { .. } => {
                    after_block = after;
                    continue;
                }
                Stmt::For(l) if l.not_canonical.is_none() && l.var != name => {
                    scalar.expr(&l.upper)? || scalar.block(&l.body, false)?.read
                }
                Stmt::Other {
                    body,
                    cond: Some(cond),
                    ..
                } => scalar.expr(cond)? || scalar.block(body, false)?.read,
                // A loop over the scalar itself, a `switch`: not followed.
                _ => return None,
            };
            after_block = after || again;
            after_loop_body = Some(after_block);
        }
        None
    }
}

/// The scalar asked about.
struct Scalar<'n> {
    name: &'n str,
    global: bool,
    /// For the extents of the arrays it declares.
    function: &'n Function,
}

impl Scalar<'_> {
    /// The flow of a statement list. Once a declaration of the same name
    /// appears in it (`shadowed`), the front-end having flattened the block
    /// that holds it, an assignment there may be to that other variable:
    /// it no longer ends the value.
    fn block(&self, body: &[Stmt], shadowed: bool) -> Option<Flow> {
        let mut shadowed = shadowed;
        let mut out = Flow::PASS;
        for s in body {
            // Nothing after changes a read already found.
            if !out.falls || out.read {
                break;
            }
            shadowed |= matches!(s, Stmt::Decl { name, .. } if name == self.name);
            let f = self.stmt(s, shadowed)?;
            out.read |= f.read;
            out.escapes |= f.escapes;
            out.falls = f.falls;
        }
        Some(out)
    }

    fn stmt(&self, s: &Stmt, shadowed: bool) -> Option<Flow> {
        Some(match s {
            Stmt::For(l) => {
                if l.not_canonical.is_some() {
                    return None;
                }
                let lower = self.expr(&l.lower)?;
                if l.var == self.name && !l.declared {
                    // `for (v = ...)` assigns it.
                    Flow {
                        read: lower,
                        falls: shadowed,
                        escapes: false,
                    }
                } else {
                    // The body may not run; its `break`s stay inside. (In
                    // `for (int v ...)`, `v` is another variable: counting
                    // its reads as reads errs on the safe side.)
                    let body = self.block(&l.body, shadowed)?;
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
                    falls: !whole || shadowed,
                    escapes: false,
                }
            }
            // A declaration assigns the new variable, not this one; a
            // variable-length array reads its extents.
            Stmt::Decl { name, init, .. } => {
                let mut read = match init {
                    Some(e) => self.expr(e)?,
                    None => false,
                };
                if let Some(v) = self.function.vars.get(name) {
                    for e in v.dims.iter().flatten() {
                        read |= self.expr(e)?;
                    }
                }
                Flow { read, ..Flow::PASS }
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                let cond = self.expr(cond)?;
                let (then, els) = (self.block(then, shadowed)?, self.block(els, shadowed)?);
                Flow {
                    read: cond || then.read || els.read,
                    falls: then.falls || els.falls,
                    escapes: then.escapes || els.escapes,
                }
            }
            Stmt::Eval { expr, .. } => Flow {
                read: self.expr(expr)?,
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
            // A `while` may not run its body, a `do` runs it once: either
            // way what it assigns is not counted, and its `break`s stay inside.
            Stmt::Other {
                body,
                cond: Some(cond),
                ..
            } => Flow {
                read: self.expr(cond)? || self.block(body, shadowed)?.read,
                ..Flow::PASS
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

/// Lines `range` of the user's file as written, then as preprocessed (a
/// macro may name what its invocation does not).
fn lines(file: &CFile, range: std::ops::Range<usize>) -> String {
    let written = range
        .clone()
        .map(|l| file.original_line(l))
        .collect::<Vec<_>>()
        .join("\n");
    if range.is_empty() {
        return written;
    }
    format!(
        "{written}\n{}",
        file.preprocessed_lines(range.start, range.end - 1)
    )
}

/// The text that may run after the nest, up to the end of the function,
/// from line `from` on when the code before the nest runs after it too (an
/// enclosing loop; the whole function where the IR is not followed). The
/// nest's last line is taken whole: code after the nest may share it.
fn text_after(root: &Loop, from: Option<usize>, function: &Function, file: &CFile) -> String {
    let head = file
        .original_line(root.lines.0)
        .split_once("for")
        .map_or("", |(before, _)| before);
    let before = from.map_or(String::new(), |first| lines(file, first..root.lines.0));
    let after = lines(file, root.lines.1..function.lines.1 + 1);
    format!("{before}\n{head}\n{after}")
}

/// The first line of a loop statement (`for`, `while`, `do`).
fn loop_line(s: &Stmt) -> Option<usize> {
    match s {
        Stmt::For(l) => Some(l.lines.0),
        Stmt::Other {
            cond: Some(_),
            line,
            ..
        } => Some(*line),
        _ => None,
    }
}

/// Whether `text` takes the address of `name` (`&name`, not `&&`).
fn address_taken(text: &str, name: &str) -> bool {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].find('&') {
        let amp = from + at;
        from = amp + 1;
        if bytes.get(amp + 1) == Some(&b'&') || (amp > 0 && bytes[amp - 1] == b'&') {
            continue;
        }
        let rest = text[amp + 1..].trim_start_matches(|c: char| c == '(' || c.is_whitespace());
        let ident: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if ident == name {
            return true;
        }
    }
    false
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
    let mut found = false;
    walk(body, &mut |s| found |= matches!(s, Stmt::Goto(_)));
    found
}

#[cfg(test)]
mod tests;
