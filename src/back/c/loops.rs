//! Loop nests over a subset: bounds, peeling of the border, the point index, and
//! one `static` function per stencil with an OpenMP worksharing loop per part.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::analysis::Footprint;
use crate::back::c::boundary::{self, Helper, Reach};
use crate::back::c::expr::{Access, Scope};
use crate::back::c::names;
use crate::back::c::uses::Uses;
use crate::back::c::writer::Writer;
use crate::ir::{Expr, ExprKind, GridId, Stencil, StencilPart, Stmt, Subset};

/// The end of an axis loop.
#[derive(Clone, Copy)]
enum Bound<'s> {
    /// Up to and including this value.
    Through(&'s str),
    /// Up to this value, excluded (the left border ends where the interior starts).
    Before(&'s str),
}

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
    /// The grid the points lie in, when known ([`crate::ir::Program::holds_point`]):
    /// reads at offset zero of a field on another grid are bounded by its size.
    pub point_grid: Option<GridId>,
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
    /// Per axis, bounds the points are clipped to besides the subset's (a time
    /// tile's region): `(lower, upper)`, each `None` for no clip on that side.
    pub clip: Vec<(Option<String>, Option<String>)>,
}

impl Writer<'_> {
    /// Prints a block with the bounds of `nest` and its loops; `point` prints the
    /// body at one point (with border or interior access).
    pub(super) fn nest(&mut self, nest: &Nest<'_>, point: &mut dyn FnMut(&mut Writer<'_>, Access)) {
        let rank = nest.subset.rank();
        let bounds_scope = Scope {
            access: Access::Interior,
            locals: &[],
        };
        let n = std::rc::Rc::clone(&self.names);
        self.open("{");
        for (axis, (lo, hi)) in nest.subset.ranges.iter().enumerate() {
            let mut lo = self.expr(lo, bounds_scope);
            let mut hi = self.expr(hi, bounds_scope);
            if let Some((clip_lo, clip_hi)) = nest.clip.get(axis) {
                if let Some(c) = clip_lo {
                    self.helpers.insert(Helper::MinMax);
                    lo = format!("sdsl_max({lo}, {c})");
                }
                if let Some(c) = clip_hi {
                    self.helpers.insert(Helper::MinMax);
                    hi = format!("sdsl_min({hi}, {c})");
                }
            }
            let (lo_name, hi_name) = (n.axis_temp("lo", axis), n.axis_temp("hi", axis));
            self.line(&format!("const long {lo_name} = {lo}, {hi_name} = {hi};"));
        }
        let split = match nest.reach {
            Reach::Inside => Split::Interior,
            Reach::Unknown => Split::Border,
            Reach::Known(per_grid) => {
                self.helpers.insert(Helper::MinMax);
                for axis in 0..rank {
                    let [lo, hi, in_lo, in_hi] =
                        ["lo", "hi", "in_lo", "in_hi"].map(|role| n.axis_temp(role, axis));
                    let below = per_grid.values().map(|r| -r[axis].0).max().unwrap_or(0);
                    let mut limit_hi = hi.clone();
                    for (grid, r) in per_grid {
                        let size = self.read_size(*grid, axis);
                        let limit = match r[axis].1 {
                            0 => format!("{size} - 1"),
                            above => format!("{size} - {}", above + 1),
                        };
                        limit_hi = format!("sdsl_min({limit_hi}, {limit})");
                    }
                    self.line(&format!(
                        "long {in_lo} = sdsl_max({lo}, {below}), {in_hi} = {limit_hi};"
                    ));
                    self.line(&format!(
                        "if ({in_lo} > {in_hi}) {{ {in_lo} = {hi} + 1; {in_hi} = {hi}; }}"
                    ));
                }
                Split::Peel
            }
        };
        for l in &nest.before {
            self.line(l);
        }
        let outer_grid = std::mem::replace(&mut self.point_grid, nest.point_grid);
        self.axis(nest, 0, split, point);
        self.point_grid = outer_grid;
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
            // Print the body apart first so that only the point indices it reads
            // (recorded while printing) are declared before it.
            let outer = std::mem::take(&mut self.code.out);
            self.points_read.clear();
            self.march_points = (false, false);
            point(
                self,
                if split == Split::Border {
                    Access::Border
                } else {
                    Access::Interior
                },
            );
            let body = std::mem::replace(&mut self.code.out, outer);
            self.point_start(nest.grids, rank);
            self.code.out.push_str(&body);
            return;
        }
        let i = self.names.axis_var(axis);
        let [lo, hi, in_lo, in_hi] =
            ["lo", "hi", "in_lo", "in_hi"].map(|role| self.names.axis_temp(role, axis));
        let innermost = axis + 1 == rank;
        let reaches = match nest.reach {
            Reach::Known(per_grid) => per_grid.iter().any(|(&grid, r)| {
                r[axis] != (0, 0) || !self.program.holds_point(nest.point_grid, grid)
            }),
            _ => false,
        };
        let split = match split {
            Split::Peel if !reaches && innermost => Split::Interior,
            other => other,
        };
        match split {
            Split::Peel if !reaches => {
                self.axis_loop(nest, axis, &lo, Bound::Through(&hi), |w| {
                    w.axis(nest, axis + 1, Split::Peel, point)
                });
            }
            Split::Interior | Split::Border => {
                self.axis_loop(nest, axis, &lo, Bound::Through(&hi), |w| {
                    w.axis(nest, axis + 1, split, point)
                });
            }
            Split::Peel if innermost => {
                let after_interior = format!("{in_hi} + 1");
                self.line(&format!(
                    "/* border {i} < {in_lo}, interior, border {i} > {in_hi} */"
                ));
                for (from, to, part) in [
                    (&lo, Bound::Before(&in_lo), Split::Border),
                    (&in_lo, Bound::Through(&in_hi), Split::Interior),
                    (&after_interior, Bound::Through(&hi), Split::Border),
                ] {
                    self.axis_loop(nest, axis, from, to, |w| {
                        w.axis(nest, axis + 1, part, point)
                    });
                }
            }
            Split::Peel => {
                self.axis_loop(nest, axis, &lo, Bound::Through(&hi), |w| {
                    w.open(&format!("if ({i} < {in_lo} || {i} > {in_hi}) {{"));
                    w.axis(nest, axis + 1, Split::Border, point);
                    w.close_open("} else {");
                    w.axis(nest, axis + 1, Split::Peel, point);
                    w.close("}");
                });
            }
        }
    }

    /// One `for` over an axis, with the OpenMP line and row hooks on axis 0.
    fn axis_loop(
        &mut self,
        nest: &Nest<'_>,
        axis: usize,
        from: &str,
        to: Bound<'_>,
        inner: impl FnOnce(&mut Self),
    ) {
        let i = self.names.axis_var(axis);
        if axis == 0 && !nest.omp.is_empty() {
            self.line(&nest.omp);
        }
        let (cmp, to) = match to {
            Bound::Before(to) => ("<", to),
            Bound::Through(to) => ("<=", to),
        };
        self.open(&format!(
            "for (long {i} = {from}; {i} {cmp} {to}; {i}++) {{"
        ));
        if axis == 0 {
            for l in &nest.row_start {
                self.line(l);
            }
        }
        if axis + 2 == nest.subset.rank() {
            for l in self.row_prefetch.clone() {
                self.line(&l);
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

    /// `const long g_p = i0 * g_s0 + i1;` for each grid whose point the body
    /// just printed reads.
    fn point_start(&mut self, grids: &BTreeSet<GridId>, rank: usize) {
        if self.march.is_some() {
            self.march_point_start(rank);
        }
        for &grid in grids {
            if !self.points_read.contains(&grid) {
                continue;
            }
            let terms: Vec<String> = (0..rank)
                .map(|a| {
                    let coordinate = if self.window {
                        // Relative to the time tile's window.
                        let origin = self.window_origin(a);
                        let i = self.names.axis_var(a);
                        if a + 1 == rank {
                            format!("{i} - {origin}")
                        } else {
                            format!("({i} - {origin})")
                        }
                    } else {
                        self.names.axis_var(a)
                    };
                    if a + 1 == rank {
                        coordinate
                    } else {
                        format!("{coordinate} * {}", self.names.grid_stride(grid, a))
                    }
                })
                .collect();
            self.line(&format!(
                "const long {} = {};",
                self.names.grid_point(grid),
                terms.join(" + ")
            ));
        }
    }

    /// `static void <prog>_<stencil>(...)`: every part of a stencil, in order, in
    /// one OpenMP parallel region (the barrier after each part keeps them in order).
    pub(super) fn stencil_function(&mut self, index: usize, stencil: &Stencil) {
        let program = self.program;
        let uses = Uses::of_stencil(program, stencil);
        let (line, _) = program.source.line_col(stencil.span.start as usize);
        self.line(&format!("/* stencil {} (line {line}) */", stencil.name));
        let signature = self.signature(&uses);
        let head = format!("static void {}", self.names.stencil(index));
        self.function_head(&head, &signature);
        self.open("{");
        self.sizes_read.clear();
        self.strides(&uses);
        let parallel = self.omp_parallel("");
        self.line(&parallel);
        self.open("{");
        for (index, part) in stencil.parts.iter().enumerate() {
            if index > 0 {
                self.blank();
            }
            self.stencil_part(part);
        }
        self.close("}");
        self.mark_unused_sizes(&uses);
        self.close("}");
    }

    fn stencil_part(&mut self, part: &StencilPart) {
        self.stencil_part_with(part, "#pragma omp for schedule(static)".into(), Vec::new());
    }

    /// A stencil part's loop nest with the OpenMP line `omp` (empty for none)
    /// and the points clipped to `clip` (see [`Nest::clip`]).
    pub(super) fn stencil_part_with(
        &mut self,
        part: &StencilPart,
        omp: String,
        clip: Vec<(Option<String>, Option<String>)>,
    ) {
        let point_grid = Footprint::of_part(self.program, part).written_grid(self.program);
        let reach = boundary::reach_of_body(self.program, &part.body, point_grid);
        self.part_nest(part, omp, clip, &reach, point_grid);
    }

    /// A stencil part's loop nest clipped to `clip`, with no OpenMP line and
    /// no border: the caller has checked that no read leaves the grid.
    pub(super) fn stencil_part_inside(
        &mut self,
        part: &StencilPart,
        clip: Vec<(Option<String>, Option<String>)>,
    ) {
        let point_grid = Footprint::of_part(self.program, part).written_grid(self.program);
        self.part_nest(part, String::new(), clip, &Reach::Inside, point_grid);
    }

    fn part_nest(
        &mut self,
        part: &StencilPart,
        omp: String,
        clip: Vec<(Option<String>, Option<String>)>,
        reach: &Reach,
        point_grid: Option<GridId>,
    ) {
        let program = self.program;
        self.source_comment(part.span);
        let locals = self.names.part_locals(part);
        let mut loop_vars = HashSet::new();
        names::loop_variables(&part.body, &mut loop_vars);
        let mut grids = BTreeSet::new();
        Uses::grids_indexed(program, &part.body, &mut grids);
        let nest = Nest {
            subset: &part.subset,
            reach,
            point_grid,
            grids: &grids,
            omp,
            row_start: Vec::new(),
            row_end: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
            clip,
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
