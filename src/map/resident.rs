//! The communication specialisation of direct kernels (`--target opencl` and
//! `cuda`): the arrays that the kernels of an iterate (a time loop kept on
//! the host) share are copied to the device once before the loop and the
//! written ones back once after it, instead of around every launch.
//!
//! An array stays on the device only when nothing but the iterate's kernels
//! touches it inside the loop: no host statement, loop condition or nest left
//! on the CPU names it. The whole specialisation is refused when the loop
//! holds a construct the analysis cannot see through (a call of a function
//! that may touch the arrays, a pointer dereference, a `while` or `switch`),
//! or a `return` or `goto`, which would leave the loop without the copies
//! back. Lifted loops (see the `lift` module) keep their arrays on the device by
//! themselves and are not considered here.

use std::collections::BTreeSet;

use super::kernel::KernelPlan;
use super::nest::{Decision, NestPlan};
use crate::front::c::loops::{Expr, Loop, Stmt};
use crate::front::c::CFile;

/// Library functions that read and write none of the program's arrays.
const HARMLESS_CALLS: &[&str] = &[
    "printf", "fprintf", "puts", "putchar", "fabs", "fabsf", "sqrt", "sqrtf", "exp", "expf", "log",
    "logf", "pow", "powf", "sin", "sinf", "cos", "cosf", "tan", "tanf", "fmin", "fminf", "fmax",
    "fmaxf", "floor", "floorf", "ceil", "ceilf", "abs", "labs",
];

/// Decides which arrays of the iterate `plan` (rooted at `root`) stay on the
/// device, records them on the iterate and on each of its kernels, and says
/// so in the iterate's transformations.
pub fn plan(plan: &mut NestPlan, root: &Loop, file: &CFile) {
    if !matches!(plan.decision, Decision::Iterate) || plan.device.is_some() {
        return;
    }
    let mut kernels = Vec::new();
    kernel_nests(&plan.inner, &mut kernels);
    let candidates: BTreeSet<String> = kernels
        .iter()
        .flat_map(|k| k.arrays.iter().map(|(a, _)| a.clone()))
        .collect();
    if candidates.is_empty() {
        return;
    }
    let outcome = decide(plan, root, file, &candidates);
    let note = match &outcome {
        Ok((kept, host)) => {
            let mut note = if kept.is_empty() {
                "communication specialisation: not applied: no array is touched by the loop's kernels alone".to_string()
            } else {
                let written: Vec<&String> = kept
                    .iter()
                    .filter(|a| {
                        kernels
                            .iter()
                            .any(|k| k.arrays.iter().any(|(b, w)| b == *a && *w))
                    })
                    .collect();
                format!(
                    "communication specialisation: {} {} on the device across the steps of `{}`: copied in once before the loop{}, not around each launch",
                    list(kept.iter()),
                    if kept.len() == 1 { "stays" } else { "stay" },
                    root.var,
                    if written.is_empty() {
                        String::new()
                    } else {
                        format!(", {} back once after it", list(written.into_iter()))
                    }
                )
            };
            for (array, line) in host {
                note.push_str(&format!(
                    "; `{array}` is copied around each launch: {} reads or writes it on the host",
                    at(*line)
                ));
            }
            note
        }
        Err(why) => format!(
            "communication specialisation: not applied: {why}; each kernel launch copies its arrays"
        ),
    };
    let kept = outcome.map(|(kept, _)| kept).unwrap_or_default();
    plan.transformations.push(note);
    plan.resident = kept.iter().cloned().collect();
    mark(&mut plan.inner, &kept);
}

/// The iterates among `nests` that keep arrays on the device.
pub fn iterates(nests: &[NestPlan]) -> impl Iterator<Item = &NestPlan> {
    nests.iter().filter(|n| !n.resident.is_empty())
}

/// The arrays an iterate keeps on the device that one of its kernels writes
/// (copied back after the loop).
pub fn written(plan: &NestPlan) -> Vec<&String> {
    let mut kernels = Vec::new();
    kernel_nests(&plan.inner, &mut kernels);
    plan.resident
        .iter()
        .filter(|a| {
            kernels
                .iter()
                .any(|k| k.arrays.iter().any(|(b, w)| b == *a && *w))
        })
        .collect()
}

/// The lines replacing an iterate's first and last lines (each with the
/// original line inside): `allocate` and `copy_back` are a target's own
/// statements for one array.
pub fn wrap_loop(
    plan: &NestPlan,
    file: &CFile,
    allocate: &dyn Fn(&str) -> String,
    copy_back: &dyn Fn(&str, bool) -> String,
    start: &str,
) -> [(usize, String); 2] {
    let (first, last) = plan.lines;
    let indent: String = file
        .original_line(first)
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let p = format!("{indent}    ");
    let mut head = format!(
        "{indent}{{ /* stencilc map: {} stay on the device during the loop at lines {first}-{last} (the communication specialisation) */\n",
        list(plan.resident.iter())
    );
    if !start.is_empty() {
        head.push_str(&format!("{p}{start}\n"));
    }
    for a in &plan.resident {
        head.push_str(&format!("{p}{}\n", allocate(a)));
    }
    head.push_str(&format!(
        "#line {first} \"{}\"\n{}",
        file.original.name,
        file.original_line_with_end(first).unwrap_or("\n")
    ));
    let written = written(plan);
    let mut tail = file
        .original_line_with_end(last)
        .unwrap_or("\n")
        .to_string();
    if !tail.ends_with('\n') {
        tail.push('\n');
    }
    for a in &plan.resident {
        tail.push_str(&format!("{p}{}\n", copy_back(a, written.contains(&a))));
    }
    tail.push_str(&format!("{indent}}}\n"));
    [(first, head), (last, tail)]
}

/// The direct kernels of `nests`, through inner iterates.
fn kernel_nests<'a>(nests: &'a [NestPlan], out: &mut Vec<&'a KernelPlan>) {
    for n in nests {
        if let (Decision::Mapped { .. }, Some(k)) = (&n.decision, &n.kernel) {
            out.push(k);
        }
        kernel_nests(&n.inner, out);
    }
}

/// Gives every kernel under `nests` the arrays it finds on the device.
fn mark(nests: &mut [NestPlan], kept: &BTreeSet<String>) {
    for n in nests {
        if let Some(k) = &n.kernel {
            n.resident = k
                .arrays
                .iter()
                .filter(|(a, _)| kept.contains(a))
                .map(|(a, _)| a.clone())
                .collect();
        }
        mark(&mut n.inner, kept);
    }
}

fn list<'a>(names: impl Iterator<Item = &'a String>) -> String {
    names
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The arrays kept on the device, and those a host statement touches (with
/// its line); or why the loop cannot keep any.
type Decided = (BTreeSet<String>, Vec<(String, usize)>);

fn decide(
    plan: &NestPlan,
    root: &Loop,
    file: &CFile,
    candidates: &BTreeSet<String>,
) -> Result<Decided, String> {
    let (first, last) = root.lines;
    if first == last {
        return Err("the loop is written on one line".into());
    }
    if !file.original_line(first).trim_start().starts_with("for")
        || !file.original_line(last).trim_end().ends_with('}')
    {
        return Err(format!(
            "the loop shares its first line ({first}) or last line ({last}) with other code"
        ));
    }
    let mut inner_lines = Vec::new();
    nest_lines(&plan.inner, &mut inner_lines);
    if inner_lines.iter().any(|&(a, b)| a <= first || b >= last) {
        return Err("a nest inside starts on the loop's first line or ends on its last".into());
    }
    let mut host = HostUses::default();
    for e in [&root.lower, &root.upper] {
        host.expr(e, first);
    }
    host.body(&root.body, &plan.inner)?;
    let touched: BTreeSet<&String> = host.names.iter().map(|(n, _)| n).collect();
    let kept = candidates
        .iter()
        .filter(|a| !touched.contains(a))
        .cloned()
        .collect();
    let mut seen = BTreeSet::new();
    let on_host = host
        .names
        .into_iter()
        .filter(|(n, _)| candidates.contains(n) && seen.insert(n.clone()))
        .collect();
    Ok((kept, on_host))
}

fn nest_lines(nests: &[NestPlan], out: &mut Vec<(usize, usize)>) {
    for n in nests {
        out.push(n.lines);
        nest_lines(&n.inner, out);
    }
}

/// The names host code in the loop reads or writes, with their lines.
#[derive(Default)]
struct HostUses {
    names: Vec<(String, usize)>,
}

impl HostUses {
    fn body(&mut self, body: &[Stmt], inner: &[NestPlan]) -> Result<(), String> {
        for s in body {
            self.stmt(s, inner)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt, inner: &[NestPlan]) -> Result<(), String> {
        match s {
            Stmt::For(l) => {
                let plan = find(inner, l.lines);
                match plan.map(|p| (&p.decision, p.kernel.is_some())) {
                    // A direct kernel: its arrays are passed to it.
                    Some((Decision::Mapped { .. }, true)) => {
                        for e in [&l.lower, &l.upper] {
                            self.expr(e, l.lines.0);
                        }
                        Ok(())
                    }
                    // An inner iterate: its header on the host, its nests in turn.
                    Some((Decision::Iterate, false)) => {
                        for e in [&l.lower, &l.upper] {
                            self.expr(e, l.lines.0);
                        }
                        self.body(&l.body, &plan.expect("found").inner)
                    }
                    // A loop on the host.
                    _ => {
                        for e in [&l.lower, &l.upper] {
                            self.expr(e, l.lines.0);
                        }
                        self.body(&l.body, inner)
                    }
                }
            }
            Stmt::Assign(a) => {
                self.names.push((a.target.name.clone(), a.line));
                for e in &a.target.index {
                    self.expr(e, a.line);
                }
                self.expr(&a.value, a.line);
                Ok(())
            }
            Stmt::Decl { init, line, .. } => {
                if let Some(e) = init {
                    self.expr(e, *line);
                }
                Ok(())
            }
            Stmt::If {
                cond,
                then,
                els,
                line,
            } => {
                self.expr(cond, *line);
                self.body(then, inner)?;
                self.body(els, inner)
            }
            Stmt::Eval { expr, line } => {
                self.expr(expr, *line);
                Ok(())
            }
            Stmt::Break | Stmt::Continue => Ok(()),
            Stmt::Return(_) => {
                Err("a `return` in the loop would leave it without copying the arrays back".into())
            }
            Stmt::Goto(label) => Err(format!(
                "a `goto {label}` in the loop could leave it without copying the arrays back"
            )),
            Stmt::Other { what, line, .. } => Err(format!(
                "line {line} holds {what}, which the analysis does not follow"
            )),
        }
        .and_then(|()| self.opaque())
    }

    fn expr(&mut self, e: &Expr, line: usize) {
        e.visit(&mut |x| match x {
            Expr::Load(r) => self.names.push((r.name.clone(), line)),
            Expr::Call(f, _) if !HARMLESS_CALLS.contains(&f.as_str()) => {
                self.names.push((format!("call:{f}"), line))
            }
            Expr::Unsupported(what) => self.names.push((format!("unsupported:{what}"), line)),
            _ => {}
        });
    }

    /// Fails on a call or construct that may touch any array unseen.
    fn opaque(&self) -> Result<(), String> {
        for (name, line) in &self.names {
            if let Some(f) = name.strip_prefix("call:") {
                return Err(format!(
                    "{} calls `{f}`, which may read or write the arrays on the host",
                    at(*line)
                ));
            }
            if let Some(what) = name.strip_prefix("unsupported:") {
                return Err(format!(
                    "{} holds `{what}`, which may read or write the arrays on the host",
                    at(*line)
                ));
            }
        }
        Ok(())
    }
}

/// `line N`, or `a statement` where the parser kept no line.
fn at(line: usize) -> String {
    if line == 0 {
        "a statement in the loop".into()
    } else {
        format!("line {line}")
    }
}

fn find(nests: &[NestPlan], lines: (usize, usize)) -> Option<&NestPlan> {
    nests.iter().find(|n| n.lines == lines)
}
