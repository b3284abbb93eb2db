//! Loop nests over a subset: bounds, peeling of the border, the point index, and
//! one `static` function per stencil with an OpenMP worksharing loop per part.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::back::c::boundary::{self, Helper, Reach};
use crate::back::c::expr::{Access, Scope};
use crate::back::c::names;
use crate::back::c::writer::{Uses, Writer};
use crate::ir::{Expr, ExprKind, GridId, Stencil, StencilPart, Stmt, Subset};

/// How an axis loop treats its points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Split {
    /// Every point of the remaining axes is interior.
    Interior,
    /// Every point of the remaining axes is in the border.
    Border,
    /// Split this axis (and the inner ones) into border and interior.
    Peel,
}

/// A loop nest to print: the points, how reads reach, and what wraps each row.
pub(super) struct Nest<'s> {
    /// The points.
    pub subset: &'s Subset,
    /// How far reads of fields with a boundary mode reach.
    pub reach: &'s Reach,
    /// Grids whose point index (`g_p`) the body uses.
    pub grids: &'s BTreeSet<GridId>,
    /// The OpenMP line put before every outermost loop (e.g. `#pragma omp for`).
    pub omp: String,
    /// Lines at the start of every outermost-loop iteration (a row).
    pub row_start: Vec<String>,
    /// Lines at the end of every outermost-loop iteration.
    pub row_end: Vec<String>,
    /// Lines after the bounds and before the loops.
    pub before: Vec<String>,
    /// Lines after the loops.
    pub after: Vec<String>,
}

impl Writer<'_> {
    /// Prints a block with the bounds of `nest` and its loops; `point` prints the
    /// body at one point (with border or interior access).
    pub(super) fn nest(&mut self, nest: &Nest<'_>, point: &mut dyn FnMut(&mut Writer<'_>, Access)) {
        let program = self.program;
        let rank = nest.subset.rank();
        let bounds_scope = Scope {
            access: Access::Interior,
            locals: &[],
        };
        self.open("{");
        for (axis, (lo, hi)) in nest.subset.ranges.iter().enumerate() {
            let lo = self.expr(lo, bounds_scope);
            let hi = self.expr(hi, bounds_scope);
            self.line(&format!("const long lo{axis} = {lo}, hi{axis} = {hi};"));
        }
        let split = match nest.reach {
            Reach::Inside => Split::Interior,
            Reach::Unknown => Split::Border,
            Reach::Known(per_grid) => {
                self.helpers.insert(Helper::MinMax);
                for axis in 0..rank {
                    let below = per_grid.values().map(|r| -r[axis].0).max().unwrap_or(0);
                    let mut in_hi = format!("hi{axis}");
                    for (grid, r) in per_grid {
                        let n = names::grid_size(program, *grid, axis);
                        let limit = match r[axis].1 {
                            0 => format!("{n} - 1"),
                            above => format!("{n} - {}", above + 1),
                        };
                        in_hi = format!("sdsl_min({in_hi}, {limit})");
                    }
                    self.line(&format!(
                        "long in_lo{axis} = sdsl_max(lo{axis}, {below}), in_hi{axis} = {in_hi};"
                    ));
                    self.line(&format!(
                        "if (in_lo{axis} > in_hi{axis}) {{ in_lo{axis} = hi{axis} + 1; in_hi{axis} = hi{axis}; }}"
                    ));
                }
                Split::Peel
            }
        };
        for l in &nest.before {
            self.line(l);
        }
        self.axis(nest, 0, split, point);
        for l in &nest.after {
            self.line(l);
        }
        self.close("}");
    }

    fn axis(
        &mut self,
        nest: &Nest<'_>,
        axis: usize,
        split: Split,
        point: &mut dyn FnMut(&mut Writer<'_>, Access),
    ) {
        let rank = nest.subset.rank();
        if axis == rank {
            // Print the body first so that only the point indices it uses are declared.
            let outer = std::mem::take(&mut self.out);
            point(
                self,
                if split == Split::Border {
                    Access::Border
                } else {
                    Access::Interior
                },
            );
            let body = std::mem::replace(&mut self.out, outer);
            self.point_start(nest.grids, rank, &body);
            self.out.push_str(&body);
            return;
        }
        let i = names::axis_var(axis);
        let innermost = axis + 1 == rank;
        let reaches = match nest.reach {
            Reach::Known(per_grid) => per_grid.values().any(|r| r[axis] != (0, 0)),
            _ => false,
        };
        let split = match split {
            Split::Peel if !reaches && innermost => Split::Interior,
            other => other,
        };
        match split {
            Split::Peel if !reaches => {
                let (from, to) = (format!("lo{axis}"), format!("hi{axis}"));
                self.axis_loop(nest, axis, &from, &to, |w| {
                    w.axis(nest, axis + 1, Split::Peel, point)
                });
            }
            Split::Interior | Split::Border => {
                let from = format!("lo{axis}");
                let to = format!("hi{axis}");
                self.axis_loop(nest, axis, &from, &to, |w| {
                    w.axis(nest, axis + 1, split, point)
                });
            }
            Split::Peel if innermost => {
                let border_lo = (format!("lo{axis}"), format!("in_lo{axis}"));
                let interior = (format!("in_lo{axis}"), format!("in_hi{axis}"));
                let border_hi = (format!("in_hi{axis} + 1"), format!("hi{axis}"));
                self.line(&format!(
                    "/* border {i} < in_lo{axis}, interior, border {i} > in_hi{axis} */"
                ));
                for ((from, to), part) in [
                    (border_lo, Split::Border),
                    (interior, Split::Interior),
                    (border_hi, Split::Border),
                ] {
                    self.axis_loop(nest, axis, &from, &to, |w| {
                        w.axis(nest, axis + 1, part, point)
                    });
                }
            }
            Split::Peel => {
                let (from, to) = (format!("lo{axis}"), format!("hi{axis}"));
                self.axis_loop(nest, axis, &from, &to, |w| {
                    w.open(&format!("if ({i} < in_lo{axis} || {i} > in_hi{axis}) {{"));
                    w.axis(nest, axis + 1, Split::Border, point);
                    w.close_open("} else {");
                    w.axis(nest, axis + 1, Split::Peel, point);
                    w.close("}");
                });
            }
        }
    }

    /// One `for` over an axis, with the OpenMP line and row hooks on axis 0.
    /// (`to` is inclusive, except that an `in_lo` bound is exclusive: the left border.)
    fn axis_loop(
        &mut self,
        nest: &Nest<'_>,
        axis: usize,
        from: &str,
        to: &str,
        inner: impl FnOnce(&mut Self),
    ) {
        let i = names::axis_var(axis);
        if axis == 0 {
            self.line(&nest.omp);
        }
        let cmp = if to.starts_with("in_lo") { "<" } else { "<=" };
        self.open(&format!(
            "for (long {i} = {from}; {i} {cmp} {to}; {i}++) {{"
        ));
        if axis == 0 {
            for l in &nest.row_start {
                self.line(l);
            }
        }
        inner(self);
        if axis == 0 {
            for l in &nest.row_end {
                self.line(l);
            }
        }
        self.close("}");
    }

    /// `const long g_p = i0 * g_s0 + i1;` for each grid whose point `body` uses.
    fn point_start(&mut self, grids: &BTreeSet<GridId>, rank: usize, body: &str) {
        for &grid in grids {
            let point = names::grid_point(self.program, grid);
            if !body
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .any(|word| word == point)
            {
                continue;
            }
            let terms: Vec<String> = (0..rank)
                .map(|a| {
                    if a + 1 == rank {
                        names::axis_var(a)
                    } else {
                        format!(
                            "{} * {}",
                            names::axis_var(a),
                            names::grid_stride(self.program, grid, a)
                        )
                    }
                })
                .collect();
            self.line(&format!(
                "const long {} = {};",
                names::grid_point(self.program, grid),
                terms.join(" + ")
            ));
        }
    }

    /// `static void <prog>_<stencil>(...)`: every part of a stencil, in order, in
    /// one OpenMP parallel region (the barrier after each part keeps them in order).
    pub(super) fn stencil_function(&mut self, stencil: &Stencil) {
        let program = self.program;
        let uses = Uses::of_stencil(program, stencil);
        let (line, _) = program.source.line_col(stencil.span.start as usize);
        self.line(&format!("/* stencil {} (line {line}) */", stencil.name));
        let signature = self.signature(&uses);
        let head = format!("static void {}", self.stencil_symbol(stencil));
        self.function_head(&head, &signature);
        self.open("{");
        let body_start = self.out.len();
        self.strides(&uses);
        self.line("#pragma omp parallel");
        self.open("{");
        for (index, part) in stencil.parts.iter().enumerate() {
            if index > 0 {
                self.blank();
            }
            self.stencil_part(part);
        }
        self.close("}");
        self.mark_unused_sizes(body_start, &uses);
        self.close("}");
    }

    /// The C name of a stencil's function.
    pub(super) fn stencil_symbol(&self, stencil: &Stencil) -> String {
        format!("{}_stencil_{}", self.prefix, names::sanitize(&stencil.name))
    }

    fn stencil_part(&mut self, part: &StencilPart) {
        let program = self.program;
        self.source_comment(part.span);
        let locals = names::part_locals(part, &self.taken);
        let mut loop_vars = HashSet::new();
        names::loop_variables(&part.body, &mut loop_vars);
        let reach = boundary::reach_of_body(program, &part.body);
        let mut grids = BTreeSet::new();
        Uses::grids_indexed(program, &part.body, &mut grids);
        let nest = Nest {
            subset: &part.subset,
            reach: &reach,
            grids: &grids,
            omp: "#pragma omp for schedule(static)".into(),
            row_start: Vec::new(),
            row_end: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
        };
        let initialised = initialising_assignments(&part.body, &loop_vars);
        self.nest(&nest, &mut |w, access| {
            for (id, local) in part.locals.iter().enumerate() {
                if !loop_vars.contains(&id) && !initialised.values().any(|&l| l == id) {
                    w.line(&format!(
                        "{} {} = {};",
                        names::c_type(local.ty),
                        locals[id],
                        names::zero(local.ty)
                    ));
                }
            }
            let scope = Scope {
                access,
                locals: &locals,
            };
            for (index, stmt) in part.body.iter().enumerate() {
                match (stmt, initialised.get(&index)) {
                    (Stmt::Assign { local, value, .. }, Some(_)) => {
                        let value = w.statement_value(value, scope);
                        let ty = names::c_type(part.locals[local.0].ty);
                        w.line(&format!("{ty} {} = {value};", locals[local.0]));
                    }
                    _ => w.stmts(std::slice::from_ref(stmt), scope),
                }
            }
        });
    }
}

/// The top-level assignments that can declare their local (`float acc = 0.0f;`
/// rather than a zero declaration and an assignment): by statement index, each
/// local's first mention when it is an assignment whose value does not read it.
fn initialising_assignments(body: &[Stmt], loop_vars: &HashSet<usize>) -> HashMap<usize, usize> {
    let mut mentioned = HashSet::new();
    let mut out = HashMap::new();
    for (index, stmt) in body.iter().enumerate() {
        if let Stmt::Assign { local, value, .. } = stmt {
            let mut reads = HashSet::new();
            locals_read(value, &mut reads);
            if !mentioned.contains(&local.0)
                && !loop_vars.contains(&local.0)
                && !reads.contains(&local.0)
            {
                out.insert(index, local.0);
            }
        }
        stmt_locals(stmt, &mut mentioned);
    }
    out
}

/// Every local a statement reads or writes (loop variables included).
fn stmt_locals(stmt: &Stmt, out: &mut HashSet<usize>) {
    match stmt {
        Stmt::Assign { local, value, .. } => {
            out.insert(local.0);
            locals_read(value, out);
        }
        Stmt::Store { target, value, .. } => {
            target.offset.iter().for_each(|o| locals_read(o, out));
            locals_read(value, out);
        }
        Stmt::For { var, body, .. } => {
            out.insert(var.0);
            body.iter().for_each(|s| stmt_locals(s, out));
        }
    }
}

fn locals_read(e: &Expr, out: &mut HashSet<usize>) {
    e.visit(&mut |node| {
        if let ExprKind::Local(l) = node.kind {
            out.insert(l.0);
        }
    });
}
