//! The barriers that reads served from shared memory need: one between the
//! store that fills the shared array and the first read served from it, and,
//! when a loop runs both, one between the last read and the next iteration's
//! store (which overwrites slots other threads may still read).
//!
//! A barrier must be uniform: every thread of the block reaches it. A
//! statement list is uniform when every condition above it (of `if`, `for`,
//! `while`) has one value for all threads of a block — it depends on no
//! `threadIdx`, no memory, no variable that does — and no thread has left
//! before (a `return`, `break` or `continue` under such a condition). A store
//! or read nested in a divergent statement is hoisted: the barrier goes after
//! (or before) the outermost statement holding it, in the first list both share.
//! Existing `__syncthreads()` between are reused.

use std::collections::HashSet;

use crate::diag::Diagnostic;
use crate::front::cuda::ast::{Builtin, Expr, ExprKind, Kernel, Stmt, StmtKind};
use crate::front::cuda::sema::global_source;
use crate::source::Span;

/// Why a barrier is where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// After the store, before the read of the same iteration.
    AfterStore,
    /// After the store, before the read of the next iteration.
    BeforeNextRead,
    /// At the end of the loop body, before the next iteration's store.
    LoopEnd,
    /// Before the store, after the read earlier in the iteration.
    BeforeStore,
}

/// A barrier to insert into the kernel's text.
#[derive(Clone, Debug, PartialEq)]
pub struct Insertion {
    /// The byte offset in the original text.
    pub offset: usize,
    /// The text inserted (`\n` and the indentation, then `__syncthreads();`).
    pub text: String,
    /// Why it is there.
    pub why: Why,
    /// The shared array.
    pub shared: String,
    /// The marked read as written (`__opt__.in[w]`).
    pub read: String,
    /// Where the store and the read start in the original text.
    pub store_at: usize,
    /// See [`Insertion::store_at`].
    pub read_at: usize,
    /// When the store or read is nested in the statement the barrier is put
    /// beside: that statement's offset and whether threads diverge inside it.
    pub hoisted: Option<(usize, bool)>,
}

impl Insertion {
    /// Why it is there, with `line` giving the line of an original offset
    /// (in the rewritten text, say).
    pub fn reason(&self, line: &dyn Fn(usize) -> usize) -> String {
        let (shared, read) = (&self.shared, &self.read);
        let (store, at) = (line(self.store_at), line(self.read_at));
        match self.why {
            Why::AfterStore => format!(
                "after the store into `{shared}` at line {store}, before `{read}` at line {at} reads it"
            ),
            Why::BeforeNextRead => format!(
                "after the store into `{shared}` at line {store}, before `{read}` at line {at} reads it in the next iteration"
            ),
            Why::LoopEnd => format!(
                "at the end of the loop body, after `{read}` at line {at}, before the next iteration's store at line {store} overwrites `{shared}`"
            ),
            Why::BeforeStore => format!(
                "before the store at line {store} overwrites `{shared}`, after `{read}` at line {at} read it"
            ),
        }
    }

    /// Where it was hoisted from, if it is not beside the store or read.
    pub fn hoisted(&self, line: &dyn Fn(usize) -> usize) -> Option<String> {
        let (outer, divergent) = self.hoisted?;
        let what = match self.why {
            Why::AfterStore | Why::BeforeNextRead | Why::BeforeStore => "store",
            Why::LoopEnd => "read",
        };
        Some(format!(
            "beside the statement at line {} that holds the {what}{}",
            line(outer),
            if divergent {
                ", not inside it: its threads diverge"
            } else {
                ""
            }
        ))
    }
}

/// A statement list of the kernel (its body, a block, a loop's body).
struct List {
    /// Statement spans, in order.
    stmts: Vec<Span>,
    /// Which of them are `__syncthreads();`.
    syncs: Vec<bool>,
    /// Written in braces (a barrier can go in).
    braced: bool,
    /// Every thread of the block reaches it.
    uniform: bool,
    /// The first statement after which not every thread goes on.
    divergent_from: Option<usize>,
    /// A loop runs it more than once.
    in_loop: bool,
    /// The statement it is the body of (`if`, `for`, `while`, `{`), if any.
    owner: Option<(Span, &'static str)>,
}

impl List {
    /// Whether a barrier at position `p` (before statement `p`) is reached by
    /// every thread.
    fn uniform_at(&self, p: usize) -> bool {
        self.uniform && self.divergent_from.is_none_or(|d| p <= d)
    }
}

/// Where a statement of interest is: (list, index) from the body down.
type Path = Vec<(usize, usize)>;

struct Walk<'k> {
    varying: HashSet<usize>,
    lists: Vec<List>,
    /// Stores filling a shared array: (shared slot, path).
    stores: Vec<(usize, usize, Path)>,
    /// Marked reads: (read number, path).
    reads: Vec<(usize, Path)>,
    kernel: &'k Kernel,
}

/// Plans the barriers for the marked reads `served` (numbers into
/// [`Kernel::marked`]) being served from their shared arrays. `text` is the
/// kernel's source (for lines and indentation).
pub fn plan(kernel: &Kernel, text: &str, served: &[usize]) -> Result<Vec<Insertion>, Diagnostic> {
    let varying = varying_slots(kernel);
    let mut walk = Walk {
        varying,
        lists: Vec::new(),
        stores: Vec::new(),
        reads: Vec::new(),
        kernel,
    };
    walk.list(&kernel.body, true, true, false, None, &mut Vec::new());
    let line = |span: Span| line_of(text, span.start as usize);
    let mut planned: Vec<(usize, usize)> = Vec::new();
    let mut out = Vec::new();
    for &m in served {
        let Some(read) = kernel.marked.get(m) else {
            continue;
        };
        let Some((_, read_path)) = walk.reads.iter().find(|(r, _)| *r == m) else {
            continue;
        };
        let stores: Vec<&Path> = walk
            .stores
            .iter()
            .filter(|(shared, array, _)| *shared == read.shared && *array == read.array)
            .map(|(_, _, p)| p)
            .collect();
        let shared_name = &kernel.slots[read.shared].name;
        for store_path in stores {
            let common = store_path
                .iter()
                .zip(read_path)
                .take_while(|(a, b)| a == b)
                .count();
            let store_stmt = walk.stmt_span(store_path, store_path.len() - 1);
            let read_span = read.span;
            let same_list = common < store_path.len()
                && common < read_path.len()
                && store_path[common].0 == read_path[common].0;
            if !same_list {
                return Err(Diagnostic::error(
                    format!(
                        "no place for a barrier between the store into `{shared_name}` (line {}) and this read: they are in one statement, or in two branches of one `if`",
                        line(store_stmt)
                    ),
                    read_span,
                )
                .with_secondary(store_stmt, "the store")
                .with_help("put the store in a statement of its own before the statement that reads the shared array"));
            }
            let list_id = store_path[common].0;
            let (s, r) = (store_path[common].1, read_path[common].1);
            let list = &walk.lists[list_id];
            if !list.uniform {
                let (owner, kind) = list.owner.unwrap_or((store_stmt, "block"));
                return Err(Diagnostic::error(
                    format!(
                        "no uniform place for the barrier that this read needs after the store into `{shared_name}` (line {}): both are inside the `{kind}` at line {}, which not every thread of a block runs",
                        line(store_stmt),
                        line(owner)
                    ),
                    read_span,
                )
                .with_secondary(owner, "divergent")
                .with_help("move the store, and the read, out of the divergent statement, or guard each on its own (`if (inside) { store } __syncthreads(); if (inside) { read }`)"));
            }
            if !list.braced {
                let (owner, kind) = list.owner.unwrap_or((store_stmt, "block"));
                return Err(Diagnostic::error(
                    format!(
                        "the body of the `{kind}` at line {} needs a barrier but is a single statement",
                        line(owner)
                    ),
                    owner,
                )
                .with_help("write the body in braces `{ ... }`"));
            }
            let hoist = |path: &Path| -> Option<(usize, bool)> {
                (path.len() > common + 1).then(|| {
                    let outer = walk.stmt_span(path, common);
                    let nested = walk.lists[path[common + 1].0].uniform;
                    (outer.start as usize, !nested)
                })
            };
            let needs = barrier_needs(list, s, r, hoist(store_path), hoist(read_path));
            for (acceptable, existing, why, hoisted) in needs {
                if !existing.is_empty()
                    || planned
                        .iter()
                        .any(|&(l, p)| l == list_id && acceptable.contains(&p))
                {
                    continue;
                }
                let Some(&p) = acceptable.iter().find(|&&p| list.uniform_at(p)) else {
                    let (owner, kind) = list.owner.unwrap_or((store_stmt, "block"));
                    return Err(Diagnostic::error(
                        format!(
                            "no uniform place for the barrier between this read and the store into `{shared_name}` at line {}: some threads leave the `{kind}` at line {} early",
                            line(store_stmt),
                            line(owner)
                        ),
                        read_span,
                    )
                    .with_help("make the `return`, `break` or `continue` uniform, or move it after the reads"));
                };
                planned.push((list_id, p));
                let (offset, text_in) = insertion_text(text, &list.stmts, p);
                out.push(Insertion {
                    offset,
                    text: text_in,
                    why,
                    shared: shared_name.clone(),
                    read: read.text.clone(),
                    store_at: store_stmt.start as usize,
                    read_at: read_span.start as usize,
                    hoisted,
                });
            }
        }
    }
    out.sort_by_key(|i| i.offset);
    Ok(out)
}

/// A barrier needed in one statement list: the acceptable positions,
/// preferred first; the existing barriers that already serve; why; and how
/// the store or read is hoisted to that list.
type Need = (Vec<usize>, Vec<usize>, Why, Option<(usize, bool)>);

/// The barriers a store at position `s` and a read at `r` of one list need:
/// between them in order, and around the loop when the list is a loop body.
fn barrier_needs(
    list: &List,
    s: usize,
    r: usize,
    store_hoist: Option<(usize, bool)>,
    read_hoist: Option<(usize, bool)>,
) -> Vec<Need> {
    let len = list.stmts.len();
    let mut needs: Vec<Need> = Vec::new();
    let syncs_where = |f: &dyn Fn(usize) -> bool| -> Vec<usize> {
        (0..len).filter(|&q| list.syncs[q] && f(q)).collect()
    };
    if s < r {
        needs.push((
            (s + 1..=r).collect(),
            syncs_where(&|q| s < q && q < r),
            Why::AfterStore,
            store_hoist,
        ));
    } else if list.in_loop {
        needs.push((
            (s + 1..=len).chain(0..=r).collect(),
            syncs_where(&|q| q > s || q < r),
            Why::BeforeNextRead,
            store_hoist,
        ));
    }
    if list.in_loop {
        if s < r {
            needs.push((
                (r + 1..=len).rev().chain(0..=s).collect(),
                syncs_where(&|q| q > r || q < s),
                Why::LoopEnd,
                read_hoist,
            ));
        } else {
            needs.push((
                (r + 1..=s).rev().collect(),
                syncs_where(&|q| r < q && q < s),
                Why::BeforeStore,
                read_hoist,
            ));
        }
    }
    needs
}

/// 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Where and what to insert for a barrier before statement `p` of a list
/// (after statement `p - 1`): on a line of its own, indented like its
/// neighbour, after any comment that ends the neighbour's line.
fn insertion_text(text: &str, stmts: &[Span], p: usize) -> (usize, String) {
    let indent_at = |offset: usize| -> String {
        let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        text[start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect()
    };
    if p > 0 {
        let after = stmts[p - 1].end as usize;
        let line_end = text[after..].find('\n').map_or(text.len(), |i| after + i);
        let rest = text[after..line_end].trim();
        let indent = indent_at(stmts[p - 1].start as usize);
        if rest.is_empty() || rest.starts_with("//") {
            (line_end, format!("\n{indent}__syncthreads();"))
        } else {
            (after, " __syncthreads();".to_string())
        }
    } else {
        let start = stmts[0].start as usize;
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        if text[line_start..start].trim().is_empty() {
            let indent = indent_at(start);
            (line_start, format!("{indent}__syncthreads();\n"))
        } else {
            (start, "__syncthreads(); ".to_string())
        }
    }
}

impl Walk<'_> {
    fn stmt_span(&self, path: &Path, depth: usize) -> Span {
        let (list, idx) = path[depth];
        self.lists[list].stmts[idx]
    }

    /// Records a statement list and everything in it; returns its id.
    fn list(
        &mut self,
        stmts: &[Stmt],
        braced: bool,
        uniform: bool,
        in_loop: bool,
        owner: Option<(Span, &'static str)>,
        path: &mut Path,
    ) -> usize {
        let id = self.lists.len();
        let divergent_from = stmts.iter().position(|s| self.exits(s, !uniform).0);
        self.lists.push(List {
            stmts: stmts.iter().map(|s| s.span).collect(),
            syncs: stmts
                .iter()
                .map(|s| matches!(s.kind, StmtKind::Sync))
                .collect(),
            braced,
            uniform,
            divergent_from,
            in_loop,
            owner,
        });
        for (k, stmt) in stmts.iter().enumerate() {
            path.push((id, k));
            let reached = uniform && divergent_from.is_none_or(|d| k <= d);
            self.stmt(stmt, reached, in_loop, path);
            path.pop();
        }
        id
    }

    fn body(
        &mut self,
        body: &Stmt,
        uniform: bool,
        in_loop: bool,
        owner: (Span, &'static str),
        path: &mut Path,
    ) {
        match &body.kind {
            StmtKind::Block(stmts) => {
                self.list(stmts, true, uniform, in_loop, Some(owner), path);
            }
            _ => {
                self.list(
                    std::slice::from_ref(body),
                    false,
                    uniform,
                    in_loop,
                    Some(owner),
                    path,
                );
            }
        }
    }

    fn stmt(&mut self, stmt: &Stmt, uniform: bool, in_loop: bool, path: &mut Path) {
        let mut own: Vec<&Expr> = Vec::new();
        own_exprs(stmt, &mut own);
        for e in own {
            self.note_hits(e, path);
        }
        match &stmt.kind {
            StmtKind::If(cond, then, other) => {
                let u = uniform && !self.varies(cond);
                self.body(then, u, in_loop, (stmt.span, "if"), path);
                if let Some(other) = other {
                    self.body(other, u, in_loop, (stmt.span, "else"), path);
                }
            }
            StmtKind::For { cond, body, .. } => {
                let u = uniform
                    && !cond.as_ref().is_some_and(|c| self.varies(c))
                    && !self.exits(body, false).1;
                self.body(body, u, true, (stmt.span, "for"), path);
            }
            StmtKind::While(cond, body) => {
                let u = uniform && !self.varies(cond) && !self.exits(body, false).1;
                self.body(body, u, true, (stmt.span, "while"), path);
            }
            StmtKind::Block(stmts) => {
                self.list(
                    stmts,
                    true,
                    uniform,
                    in_loop,
                    Some((stmt.span, "block")),
                    path,
                );
            }
            _ => {}
        }
    }

    /// Records the fill stores and marked reads in an expression of the
    /// statement at `path`.
    fn note_hits(&mut self, e: &Expr, path: &Path) {
        let kernel = self.kernel;
        visit(e, &mut |x| match &x.kind {
            ExprKind::Assign {
                op: None,
                target,
                value,
            } => {
                if let ExprKind::Index { slot, .. } = &target.kind {
                    if kernel.slots[*slot].dims.is_empty() {
                        return;
                    }
                    if let Some(array) = global_source(value) {
                        self.stores.push((*slot, array, path.clone()));
                    }
                }
            }
            ExprKind::Index {
                marked: Some(m), ..
            } => self.reads.push((*m, path.clone())),
            _ => {}
        });
    }

    /// Whether an expression may have different values in the threads of a
    /// block: it uses `threadIdx`, memory, or a variable that does.
    fn varies(&self, e: &Expr) -> bool {
        varies(e, &self.varying)
    }

    /// Whether some threads may leave the statement early while others go
    /// on: (by `return`, by `break`/`continue` of an enclosing loop), with
    /// `divergent` telling whether the statement itself is reached under a
    /// condition that differs between threads.
    fn exits(&self, stmt: &Stmt, divergent: bool) -> (bool, bool) {
        match &stmt.kind {
            StmtKind::Return => (divergent, false),
            StmtKind::Break | StmtKind::Continue => (false, divergent),
            StmtKind::If(cond, then, other) => {
                let d = divergent || self.varies(cond);
                let a = self.exits(then, d);
                let b = other.as_ref().map_or((false, false), |o| self.exits(o, d));
                (a.0 || b.0, a.1 || b.1)
            }
            StmtKind::For { cond, body, .. } => {
                let d = divergent || cond.as_ref().is_some_and(|c| self.varies(c));
                (self.exits(body, d).0, false)
            }
            StmtKind::While(cond, body) => {
                let d = divergent || self.varies(cond);
                (self.exits(body, d).0, false)
            }
            StmtKind::Block(stmts) | StmtKind::DeclList(stmts) => {
                stmts.iter().fold((false, false), |acc, s| {
                    let e = self.exits(s, divergent);
                    (acc.0 || e.0, acc.1 || e.1)
                })
            }
            _ => (false, false),
        }
    }
}

/// The expressions a statement evaluates itself (not those of the
/// statements in its bodies).
fn own_exprs<'a>(stmt: &'a Stmt, out: &mut Vec<&'a Expr>) {
    match &stmt.kind {
        StmtKind::Local { init: Some(e), .. } | StmtKind::Expr(e) => out.push(e),
        StmtKind::Shared { dims, .. } => out.extend(dims),
        StmtKind::If(cond, ..) | StmtKind::While(cond, _) => out.push(cond),
        StmtKind::For {
            init, cond, step, ..
        } => {
            if let Some(init) = init {
                own_exprs(init, out);
            }
            out.extend(cond.iter());
            out.extend(step.iter());
        }
        StmtKind::DeclList(stmts) => stmts.iter().for_each(|s| own_exprs(s, out)),
        _ => {}
    }
}

/// Calls `f` on `e` and every expression inside it.
fn visit<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Index { indices, .. } => indices.iter().for_each(|i| visit(i, f)),
        ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => visit(a, f),
        ExprKind::Binary(_, a, b) => {
            visit(a, f);
            visit(b, f);
        }
        ExprKind::Cond(c, a, b) => {
            visit(c, f);
            visit(a, f);
            visit(b, f);
        }
        ExprKind::Assign { target, value, .. } => {
            visit(target, f);
            visit(value, f);
        }
        ExprKind::Step { target, .. } => visit(target, f),
        ExprKind::Call { args, .. } => args.iter().for_each(|a| visit(a, f)),
        _ => {}
    }
}

fn varies(e: &Expr, varying: &HashSet<usize>) -> bool {
    let mut any = false;
    visit(e, &mut |x| {
        any |= match &x.kind {
            ExprKind::Builtin(Builtin::ThreadIdx, _) | ExprKind::Index { .. } => true,
            ExprKind::Var { slot, .. } => varying.contains(slot),
            _ => false,
        }
    });
    any
}

/// The variables that may differ between the threads of a block: assigned
/// a value that does, or assigned under a condition that does (to a fixed
/// point, as loops carry values around).
fn varying_slots(kernel: &Kernel) -> HashSet<usize> {
    let mut varying = HashSet::new();
    loop {
        let before = varying.len();
        for stmt in &kernel.body {
            taint(stmt, false, &mut varying);
        }
        if varying.len() == before {
            return varying;
        }
    }
}

fn taint(stmt: &Stmt, divergent: bool, varying: &mut HashSet<usize>) {
    let assigned = |e: &Expr, varying: &mut HashSet<usize>| {
        let mut found = Vec::new();
        visit(e, &mut |x| match &x.kind {
            ExprKind::Assign { target, value, .. } => {
                if let ExprKind::Var { slot, .. } = &target.kind {
                    found.push((*slot, divergent || varies(value, varying)));
                }
            }
            ExprKind::Step { target, .. } => {
                if let ExprKind::Var { slot, .. } = &target.kind {
                    found.push((*slot, divergent));
                }
            }
            _ => {}
        });
        for (slot, v) in found {
            if v {
                varying.insert(slot);
            }
        }
    };
    match &stmt.kind {
        StmtKind::Local {
            slot,
            init: Some(e),
            ..
        } => {
            assigned(e, varying);
            if divergent || varies(e, varying) {
                varying.insert(*slot);
            }
        }
        StmtKind::Expr(e) => assigned(e, varying),
        StmtKind::If(cond, then, other) => {
            assigned(cond, varying);
            let d = divergent || varies(cond, varying);
            taint(then, d, varying);
            if let Some(o) = other {
                taint(o, d, varying);
            }
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            if let Some(init) = init {
                taint(init, divergent, varying);
            }
            let d = divergent || cond.as_ref().is_some_and(|c| varies(c, varying));
            if let Some(step) = step {
                assigned(step, varying);
                if d {
                    visit(step, &mut |x| {
                        if let ExprKind::Step { target, .. } | ExprKind::Assign { target, .. } =
                            &x.kind
                        {
                            if let ExprKind::Var { slot, .. } = &target.kind {
                                varying.insert(*slot);
                            }
                        }
                    });
                }
            }
            taint(body, d, varying);
        }
        StmtKind::While(cond, body) => {
            let d = divergent || varies(cond, varying);
            taint(body, d, varying);
        }
        StmtKind::Block(stmts) | StmtKind::DeclList(stmts) => {
            for s in stmts {
                taint(s, divergent, varying);
            }
        }
        _ => {}
    }
}
