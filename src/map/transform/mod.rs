//! The loop transformations of `stencilc map`, each applied only when the
//! dependence vectors say it is legal, and each reported with its reason:
//! fission ([`fission`]), normalisation to unit stride from zero
//! ([`normalise`]), interchange for coalescing ([`interchange`]), fusion of
//! adjacent conformable nests ([`fusion`]) and strip-mining or tiling of nests
//! over the grid limits ([`stripmine`]).
//!
//! A transformation rewrites the lines of the user's text that hold the nest
//! (headers, bodies and braces as written, so the program stays readable);
//! the new text is preprocessed and parsed again, and the rewritten lines must
//! read back as exactly the statements the transformation meant (line numbers
//! aside) or the rewrite is dropped — never a wrong program. The file is then
//! planned again, so the mapped program (`--target c`, `opencl`, `cuda`) is
//! the transformed one, and the next transformation sees its result. Line
//! numbers in the report are those of the transformed program.

pub mod fission;
pub mod fusion;
pub mod interchange;
pub mod normalise;
pub mod stripmine;
pub mod text;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use super::analysis::analyse;
use super::facts::{Dependence, NestFacts};
use super::nest::{Decision, FilePlan, NestPlan, Target};
use super::plan::plan_file;
use super::syntax::walk;
use crate::front::c::loops::{CUnit, Expr, Function, Loop, Stmt};
use crate::front::c::lower::{declared_functions, lower_unit};
use crate::front::c::CFile;
use crate::model::device::Device;

/// At most this many rewrites per file (each one re-plans the file).
const MAX_REWRITES: usize = 24;

/// The lines one transformation rewrites, what they must read back as, and
/// what the report says.
#[derive(Clone, Debug)]
pub struct Proposal {
    /// `interchange`, `fusion`, ...
    pub kind: &'static str,
    /// The function holding the lines.
    pub function: String,
    /// First and last line replaced (1-based, inclusive).
    pub lines: (usize, usize),
    /// The new text of those lines (no newline at the end).
    pub text: String,
    /// The statements the new lines must read back as (line numbers ignored).
    pub expected: Vec<Stmt>,
    /// Report notes, each for the nest starting this many lines after the first.
    pub notes: Vec<(usize, String)>,
}

/// What a transformation makes of one site.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Rewrite these lines.
    Propose(Proposal),
    /// Considered, not applied: why (reported).
    Refuse(String),
    /// Nothing to consider.
    Nothing,
}

/// What the passes look at.
pub struct Cx<'a> {
    /// The current text.
    pub file: &'a CFile,
    /// Its loops.
    pub unit: &'a CUnit,
    /// Functions declared in it.
    pub declared: &'a BTreeMap<String, bool>,
    /// The current plan.
    pub plan: &'a FilePlan,
}

impl Cx<'_> {
    /// The analysis of the nest at `root`.
    pub fn facts(&self, root: &Loop, function: &Function) -> NestFacts {
        analyse(root, function, self.unit, self.declared)
    }
}

/// A report line anchored at the first line of a nest.
#[derive(Clone, Debug)]
struct Note {
    function: String,
    line: usize,
    text: String,
}

/// The plan of the transformed file, and the transformed file when any
/// transformation was applied.
pub struct Transformed {
    /// The transformed text and its loops (`None`: nothing was rewritten).
    pub file: Option<(CFile, CUnit)>,
    /// The plan of the file as transformed, with every transformation applied
    /// or considered in its nests' `transformations`.
    pub plan: FilePlan,
}

/// Plans `file`, applying every legal transformation and re-planning after each.
pub fn plan_transformed(
    file: &CFile,
    unit: &CUnit,
    target: Target,
    device: &Device,
) -> Transformed {
    let mut current: Option<(CFile, CUnit)> = None;
    let mut applied: Vec<Note> = Vec::new();
    let mut blocked: Vec<Note> = Vec::new();
    for round in 0..=MAX_REWRITES {
        let (f, u) = current.as_ref().map_or((file, unit), |(f, u)| (f, u));
        let mut plan = plan_file(f, u, target, device);
        let declared = declared_functions(f);
        let cx = Cx {
            file: f,
            unit: u,
            declared: &declared,
            plan: &plan,
        };
        let (proposals, refusals) = consider_all(&cx);
        let next = proposals.into_iter().find(|p| {
            !blocked
                .iter()
                .any(|b| b.text == p.kind && b.function == p.function && b.line == p.lines.0)
        });
        let next = match next {
            Some(p) if round < MAX_REWRITES => p,
            _ => {
                let mut notes = applied;
                notes.extend(refusals);
                attach(&mut plan.nests, &notes);
                keep_kernels_with_work_items(&mut plan.nests);
                plan.transformed = current.is_some();
                return Transformed {
                    file: current,
                    plan,
                };
            }
        };
        match rewrite(f, &next) {
            Ok(rewritten) => {
                let new_lines = next.text.split('\n').count();
                shift(&mut applied, &next, new_lines);
                shift(&mut blocked, &next, new_lines);
                applied.extend(next.notes.iter().map(|(offset, text)| Note {
                    function: next.function.clone(),
                    line: next.lines.0 + offset,
                    text: text.clone(),
                }));
                current = Some(rewritten);
            }
            Err(why) => {
                blocked.push(Note {
                    function: next.function.clone(),
                    line: next.lines.0,
                    text: next.kind.to_string(),
                });
                applied.push(Note {
                    function: next.function.clone(),
                    line: next.lines.0,
                    text: format!(
                        "{}: not applied: the rewritten lines did not read back as the transformed nest ({why})",
                        next.kind
                    ),
                });
            }
        }
    }
    unreachable!("the last round returns")
}

/// A direct OpenCL kernel needs at least one unit-stride loop for its
/// work-items: a nest whose outer loop keeps a stride (normalisation refused)
/// stays on the CPU.
fn keep_kernels_with_work_items(nests: &mut [NestPlan]) {
    for n in nests.iter_mut() {
        if n.kernel.as_ref().is_some_and(|k| k.band.is_empty()) {
            n.kernel = None;
            n.omp = None;
            n.decision = Decision::Cpu {
                reasons: vec![
                    "parallel, but its outer loop is not of unit stride and was not normalised (see transformations): an OpenCL kernel maps unit-stride loops onto work-items".into(),
                ],
            };
        }
        keep_kernels_with_work_items(&mut n.inner);
    }
}

/// Moves notes after a rewrite of `p.lines` into `new_lines` lines.
fn shift(notes: &mut [Note], p: &Proposal, new_lines: usize) {
    let old_lines = p.lines.1 - p.lines.0 + 1;
    for n in notes.iter_mut() {
        if n.line > p.lines.1 {
            n.line = n.line + new_lines - old_lines;
        } else if n.line >= p.lines.0 {
            n.line = p.lines.0;
        }
    }
}

/// Every proposal (in pass order) and every refusal of the current plan.
fn consider_all(cx: &Cx) -> (Vec<Proposal>, Vec<Note>) {
    let mut sites = Vec::new();
    collect_sites(cx, &cx.plan.nests, &mut sites);
    type Pass = fn(&Cx, &NestPlan, &Loop, &Function) -> Outcome;
    let passes: [Pass; 4] = [
        fission::consider,
        normalise::consider,
        interchange::consider,
        stripmine::consider,
    ];
    let mut proposals = Vec::new();
    let mut refusals = Vec::new();
    let mut take =
        |outcome: Outcome, function: &str, line: usize, out: &mut Vec<Proposal>| match outcome {
            Outcome::Propose(p) => out.push(p),
            Outcome::Refuse(text) => refusals.push(Note {
                function: function.to_string(),
                line,
                text,
            }),
            Outcome::Nothing => {}
        };
    let mut by_pass: Vec<Vec<Proposal>> = vec![Vec::new(); passes.len() + 1];
    for (plan, root, function) in &sites {
        // The passes' legality tests read distances as of upward loops.
        if runs_downwards(root) {
            continue;
        }
        for (k, pass) in passes.iter().enumerate() {
            take(
                pass(cx, plan, root, function),
                &function.name,
                root.lines.0,
                &mut by_pass[k],
            );
        }
    }
    for function in &cx.unit.functions {
        let mut lists = Vec::new();
        statement_lists(&function.body, &mut lists);
        for list in lists {
            for pair in list.windows(2) {
                if let [Stmt::For(a), Stmt::For(b)] = pair {
                    let (Some(pa), Some(pb)) = (
                        find_plan(&cx.plan.nests, &function.name, a.lines.0),
                        find_plan(&cx.plan.nests, &function.name, b.lines.0),
                    ) else {
                        continue;
                    };
                    if runs_downwards(a) || runs_downwards(b) {
                        continue;
                    }
                    let outcome = fusion::consider(cx, function, (pa, a), (pb, b));
                    take(
                        outcome,
                        &function.name,
                        a.lines.0,
                        &mut by_pass[passes.len()],
                    );
                }
            }
        }
    }
    // Fusion after interchange and normalisation (nests conform once normalised),
    // strip-mining last (it splits a nest that fusion would otherwise see).
    let order = [0, 1, 2, passes.len(), 3];
    for k in order {
        proposals.append(&mut by_pass[k]);
    }
    (proposals, refusals)
}

/// Whether a loop of the nest rooted at `root` runs downwards.
fn runs_downwards(root: &Loop) -> bool {
    let mut down = root.descending;
    walk(&root.body, &mut |s| {
        if let Stmt::For(l) = s {
            down |= l.descending;
        }
    });
    down
}

fn collect_sites<'a>(
    cx: &'a Cx,
    nests: &'a [NestPlan],
    out: &mut Vec<(&'a NestPlan, &'a Loop, &'a Function)>,
) {
    for n in nests {
        let Some(function) = cx.unit.functions.iter().find(|f| f.name == n.function) else {
            continue;
        };
        if let Some(root) = find_loop(&function.body, n.lines.0) {
            out.push((n, root, function));
        }
        collect_sites(cx, &n.inner, out);
    }
}

/// The plan of the nest starting at `line` of `function`.
fn find_plan<'a>(nests: &'a [NestPlan], function: &str, line: usize) -> Option<&'a NestPlan> {
    for n in nests {
        if n.function == function && n.lines.0 == line {
            return Some(n);
        }
        if let Some(inner) = find_plan(&n.inner, function, line) {
            return Some(inner);
        }
    }
    None
}

/// The loop starting at `line`.
pub fn find_loop(body: &[Stmt], line: usize) -> Option<&Loop> {
    let mut found = None;
    walk(body, &mut |s| {
        if let Stmt::For(l) = s {
            if l.lines.0 == line && found.is_none() {
                found = Some(l);
            }
        }
    });
    found
}

fn statement_lists<'a>(body: &'a [Stmt], out: &mut Vec<&'a [Stmt]>) {
    out.push(body);
    for s in body {
        match s {
            Stmt::For(l) => statement_lists(&l.body, out),
            Stmt::If { then, els, .. } => {
                statement_lists(then, out);
                statement_lists(els, out);
            }
            _ => {}
        }
    }
}

/// Puts each note into the nest starting at its line (or the innermost nest
/// holding the line).
fn attach(nests: &mut [NestPlan], notes: &[Note]) {
    for note in notes {
        if !attach_one(nests, note) {
            // The nest moved into another one: the nest holding the line.
            attach_within(nests, note);
        }
    }
}

fn attach_one(nests: &mut [NestPlan], note: &Note) -> bool {
    for n in nests.iter_mut() {
        if n.function == note.function && n.lines.0 == note.line {
            if !n.transformations.contains(&note.text) {
                n.transformations.push(note.text.clone());
            }
            return true;
        }
        if attach_one(&mut n.inner, note) {
            return true;
        }
    }
    false
}

fn attach_within(nests: &mut [NestPlan], note: &Note) -> bool {
    for n in nests.iter_mut() {
        if n.function == note.function && n.lines.0 <= note.line && note.line <= n.lines.1 {
            if !attach_within(&mut n.inner, note) && !n.transformations.contains(&note.text) {
                n.transformations.push(note.text.clone());
            }
            return true;
        }
    }
    false
}

/// The file with `p` applied, parsed again, if the rewritten lines read back
/// as `p.expected`.
fn rewrite(file: &CFile, p: &Proposal) -> Result<(CFile, CUnit), String> {
    let mut text = String::new();
    for (index, line) in file.original.text.split_inclusive('\n').enumerate() {
        let number = index + 1;
        if number == p.lines.0 {
            text.push_str(&p.text);
            text.push('\n');
        }
        if number < p.lines.0 || number > p.lines.1 {
            text.push_str(line);
        }
    }
    let new_file = reparse(file, text)?;
    let unit = lower_unit(&new_file);
    let function = unit
        .functions
        .iter()
        .find(|f| f.name == p.function)
        .ok_or("the function is gone")?;
    let last = p.lines.0 + p.text.split('\n').count() - 1;
    let got = statements_in(&function.body, p.lines.0, last)
        .ok_or("no statement starts the rewritten lines")?;
    if strip_lines(got) != strip_lines(&p.expected) {
        return Err("a macro or an unusual layout changed what the text means".into());
    }
    Ok((new_file, unit))
}

/// The statements of one list that start on lines `first..=last`, the first
/// one starting at `first`.
fn statements_in(body: &[Stmt], first: usize, last: usize) -> Option<&[Stmt]> {
    let mut lists = Vec::new();
    statement_lists(body, &mut lists);
    for list in lists {
        if let Some(start) = list.iter().position(|s| start_line(s) == Some(first)) {
            let count = list[start..]
                .iter()
                .take_while(|s| start_line(s).is_some_and(|l| l <= last))
                .count();
            return Some(&list[start..start + count]);
        }
    }
    None
}

/// The line a statement starts on, when the loop IR records it.
pub fn start_line(s: &Stmt) -> Option<usize> {
    match s {
        Stmt::For(l) => Some(l.lines.0),
        Stmt::Assign(a) => Some(a.line),
        Stmt::Decl { line, .. }
        | Stmt::If { line, .. }
        | Stmt::Other { line, .. }
        | Stmt::Eval { line, .. } => Some(*line),
        _ => None,
    }
}

/// Statements with every line number zeroed, to compare what they mean.
pub fn strip_lines(body: &[Stmt]) -> Vec<Stmt> {
    body.iter()
        .map(|s| match s {
            Stmt::For(l) => Stmt::For(Loop {
                body: strip_lines(&l.body),
                lines: (0, 0),
                ..l.clone()
            }),
            Stmt::Assign(a) => {
                let mut a = a.clone();
                a.line = 0;
                Stmt::Assign(a)
            }
            Stmt::Decl { name, init, .. } => Stmt::Decl {
                name: name.clone(),
                init: init.clone(),
                line: 0,
            },
            Stmt::If {
                cond, then, els, ..
            } => Stmt::If {
                cond: cond.clone(),
                then: strip_lines(then),
                els: strip_lines(els),
                line: 0,
            },
            Stmt::Other {
                what, body, cond, ..
            } => Stmt::Other {
                what: what.clone(),
                body: strip_lines(body),
                cond: cond.clone(),
                line: 0,
            },
            Stmt::Eval { expr, .. } => Stmt::Eval {
                expr: expr.clone(),
                line: 0,
            },
            other => other.clone(),
        })
        .collect()
}

/// Preprocesses and parses a new text of `file` (same name, same directory
/// for its `#include "..."`).
fn reparse(file: &CFile, text: String) -> Result<CFile, String> {
    let name = file.original.name.clone();
    let dir = std::path::Path::new(&name)
        .parent()
        .map(|d| d.display().to_string())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| ".".into());
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut child = Command::new(&cc)
        .args(["-E", "-std=gnu99", "-iquote", &dir, "-x", "c", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{cc} -E`: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .map_err(|e| format!("cannot write to `{cc} -E`: {e}"))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("`{cc} -E` failed: {e}"))?;
    if !output.status.success() {
        return Err(format!("`{cc} -E` rejected the rewritten text"));
    }
    // Line markers name the standard input: give them the file's name back.
    let marker = format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""));
    let preprocessed: String = String::from_utf8_lossy(&output.stdout)
        .split_inclusive('\n')
        .map(|l| {
            if l.starts_with('#') {
                l.replacen("\"<stdin>\"", &marker, 1)
            } else {
                l.to_string()
            }
        })
        .collect();
    CFile::from_preprocessed(&name, text, preprocessed)
        .map_err(|_| "the rewritten text does not parse".to_string())
}

/// The loops of the perfect nest at `root`: the root, then its only child
/// loop while the body is exactly that loop, at most `limit` of them.
pub fn perfect_chain(root: &Loop, limit: usize) -> Vec<&Loop> {
    let mut chain = vec![root];
    let mut l = root;
    while chain.len() < limit {
        match l.body.as_slice() {
            [Stmt::For(inner)] => {
                chain.push(inner);
                l = inner;
            }
            _ => break,
        }
    }
    chain
}

/// Whether `e` reads the scalar `var`.
pub fn mentions(e: &Expr, var: &str) -> bool {
    let mut found = false;
    e.visit(&mut |x| {
        if matches!(x, Expr::Load(r) if r.name == var && r.index.is_empty()) {
            found = true;
        }
    });
    found
}

/// A dependence as the report writes it.
pub fn describe(d: &Dependence) -> String {
    format!(
        "{} dependence on `{}` (lines {} and {}), distance {}",
        d.kind,
        d.array,
        d.lines.0,
        d.lines.1,
        d.vector()
    )
}

/// The parallel loops of a mapped plan (empty otherwise).
pub fn band(plan: &NestPlan) -> &[String] {
    match &plan.decision {
        Decision::Mapped { parallel } => parallel,
        _ => &[],
    }
}

/// The outer parallel loops of a nest whose criteria were checked, mapped or
/// not (a nest over a GPU's limits stays on the CPU, its loops parallel).
pub fn parallel_loops(plan: &NestPlan, root: &Loop) -> Vec<String> {
    if plan.criteria.is_empty() {
        return Vec::new();
    }
    perfect_chain(root, 3)
        .iter()
        .take_while(|l| {
            plan.loops
                .iter()
                .any(|r| r.var == l.var && r.line == l.lines.0 && r.sequential.is_empty())
        })
        .map(|l| l.var.clone())
        .collect()
}

/// Copies the loop headers of `chain` (outermost first) around `body`.
pub fn wrap(chain: &[&Loop], body: Vec<Stmt>) -> Loop {
    let mut body = body;
    for l in chain[1..].iter().rev() {
        body = vec![Stmt::For(Loop {
            body,
            ..(*l).clone()
        })];
    }
    Loop {
        body,
        ..chain[0].clone()
    }
}
