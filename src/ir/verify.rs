//! The program IR verifier: what every front-end's [`Program`] must satisfy,
//! checked after the front-ends in debug builds and in the tests, so that a
//! front-end bug shows where it is made rather than as a wrong result later.
//!
//! - every id resolves: parameters, constants (a constant's value uses only
//!   earlier ones), grids, fields, tables, reductions and each part's locals;
//! - types agree as the front-end makes them explicit: a literal has its
//!   value's type, a leaf the type of what it names, an assigned or stored
//!   value the type of its target, the operands of an arithmetic operator or
//!   a comparison one type (integers for `%`), comparisons and logic `int`,
//!   both arms of `?:` the result's type, a math function's arguments and
//!   result `double` (`float` for the `f` forms), offsets, indices, sizes,
//!   bounds and counts integers, loop variables `int`;
//! - each expression uses only what its place allows: literals, parameters and
//!   constants in sizes, bounds and counts; loop variables (inside their loop)
//!   in offsets and table indices; no locals in reductions; reductions only in
//!   the check;
//! - time offsets lie in their field's declared levels, a field access has one
//!   offset per axis of its grid, a table read one index per dimension;
//! - grids and tables have 1 to 3 dimensions, a table holds one value of its
//!   type per element, a field's levels are not empty, and every subset has
//!   the rank of the grids of the fields its part touches.

use std::collections::HashSet;

use crate::diag::Diagnostic;
use crate::ir::{
    BinaryOp, Expr, ExprKind, FieldId, GridRef, Local, LocalId, MathFn, Program, ScalarType, Stmt,
    Subset, UnaryOp,
};
use crate::source::Span;

/// Checks `program`; the error lists every violation found, one an entry,
/// each naming the declaration or stencil part it is in.
pub fn verify(program: &Program) -> Result<(), Vec<String>> {
    located(program).map_err(|(_, errors)| errors)
}

/// In debug and test builds, [`verify`] as a front-end's last step: a
/// violation becomes one internal-error diagnostic (at the first violation's
/// place) that names every violation, so that a front-end bug is reported as
/// stencilc's and never panics. Release builds skip the check.
pub fn debug_check(program: &Program) -> Result<(), Diagnostic> {
    if !cfg!(debug_assertions) {
        return Ok(());
    }
    located(program).map_err(|(span, errors)| internal_error(span, &errors))
}

/// The diagnostic for a program that fails verification.
fn internal_error(span: Span, errors: &[String]) -> Diagnostic {
    Diagnostic::error(
        format!(
            "internal error in stencilc: the front-end built an invalid program IR: {}",
            errors.join("; ")
        ),
        span,
    )
    .with_label("while building the program for this")
    .with_help("this is a bug in stencilc, not in your program; please report it with the program")
}

/// [`verify`], with the span of the first violation's declaration or part.
fn located(program: &Program) -> Result<(), (Span, Vec<String>)> {
    let mut checker = Checker {
        program,
        errors: Vec::new(),
        first_span: None,
        place_name: String::new(),
        place_span: Span::default(),
        part: None,
    };
    checker.program();
    match checker.first_span {
        None => Ok(()),
        Some(span) => Err((span, checker.errors)),
    }
}

/// What an expression may refer to where it appears (the front-end's rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Sizes, bounds, counts and constants: literals, parameters and
    /// constants below the bound (a constant's value uses earlier ones only).
    Fixed {
        /// Constants with an id below this may be used.
        constants: usize,
    },
    /// Spatial offsets and table indices: as `Fixed`, plus loop variables.
    Offset,
    /// Stencil part bodies: anything but reductions.
    Point,
    /// Reduction values: as `Point`, without locals.
    Reduction,
    /// The check condition: reductions, parameters, constants and literals.
    Check,
}

impl Place {
    /// Whether fields and tables may be read here.
    fn allows_data(self) -> bool {
        matches!(self, Place::Point | Place::Reduction)
    }

    /// The place for messages.
    fn what(self) -> &'static str {
        match self {
            Place::Fixed { .. } => "a size, bound or count",
            Place::Offset => "an offset or index",
            Place::Point => "a stencil part",
            Place::Reduction => "a reduction value",
            Place::Check => "the check condition",
        }
    }
}

/// The stencil part being checked: its locals and which are loop variables.
struct PartScope<'a> {
    locals: &'a [Local],
    /// Every loop variable of the part.
    loop_vars: HashSet<LocalId>,
    /// Loop variables of the loops enclosing the statement being checked.
    in_scope: Vec<LocalId>,
}

struct Checker<'a> {
    program: &'a Program,
    errors: Vec<String>,
    first_span: Option<Span>,
    /// The declaration or part being checked, for messages (`stencil `s` part 0`).
    place_name: String,
    place_span: Span,
    part: Option<PartScope<'a>>,
}

impl<'a> Checker<'a> {
    fn error(&mut self, message: String) {
        self.first_span.get_or_insert(self.place_span);
        self.errors.push(format!("{}: {message}", self.place_name));
    }

    fn enter(&mut self, name: String, span: Span) {
        self.place_name = name;
        self.place_span = span;
    }

    fn program(&mut self) {
        let program = self.program;
        for (i, c) in program.constants.iter().enumerate() {
            self.enter(format!("constant `{}`", c.name), c.span);
            self.expr(&c.value, Place::Fixed { constants: i });
            self.same_type(c.value.ty, c.ty, "its value");
        }
        let all = Place::Fixed {
            constants: program.constants.len(),
        };
        for g in &program.grids {
            self.enter(format!("grid `{}`", g.name), g.span);
            self.rank_in_range(g.rank(), "dimension(s)");
            for dim in &g.dims {
                self.integer(dim, all, "a size");
            }
        }
        for f in &program.fields {
            self.enter(format!("griddata `{}`", f.name), f.span);
            if f.grid.0 >= program.grids.len() {
                self.error(format!(
                    "is on grid {} of {}",
                    f.grid.0,
                    program.grids.len()
                ));
            }
            if f.time_lo > f.time_hi {
                self.error(format!("has no time levels ({}..{})", f.time_lo, f.time_hi));
            }
        }
        for t in &program.tables {
            self.enter(format!("table `{}`", t.name), t.span);
            self.rank_in_range(t.shape.len(), "dimension(s)");
            let elements: usize = t.shape.iter().product();
            if t.shape.contains(&0) || t.values.len() != elements {
                let message = format!("has shape {:?} but {} value(s)", t.shape, t.values.len());
                self.error(message);
            }
            if let Some(v) = t.values.iter().find(|v| v.ty() != t.ty) {
                self.error(format!("holds `{v}` of type `{}`, not `{}`", v.ty(), t.ty));
            }
        }
        if let Some(iterate) = &program.iterate {
            self.iterate(iterate, all);
        }
    }

    fn iterate(&mut self, iterate: &'a crate::ir::Iterate, all: Place) {
        self.enter("the iterate".to_string(), iterate.span);
        self.integer(&iterate.max_iters, all, "the iteration count");
        for s in &iterate.stencils {
            for (p, part) in s.parts.iter().enumerate() {
                self.enter(format!("stencil `{}` part {p}", s.name), part.span);
                self.subset(&part.subset, all);
                let mut loop_vars = HashSet::new();
                for stmt in &part.body {
                    self.collect_loop_vars(stmt, &mut loop_vars);
                }
                self.part = Some(PartScope {
                    locals: &part.locals,
                    loop_vars,
                    in_scope: Vec::new(),
                });
                for stmt in &part.body {
                    self.stmt(stmt);
                }
                self.part = None;
                let mut touched = Vec::new();
                for stmt in &part.body {
                    fields_touched(stmt, &mut touched);
                }
                self.subset_ranks(&part.subset, &touched);
            }
        }
        for r in &iterate.reductions {
            for (p, part) in r.parts.iter().enumerate() {
                self.enter(format!("reduction `{}` part {p}", r.name), part.span);
                self.subset(&part.subset, all);
                self.expr(&part.value, Place::Reduction);
                self.same_type(part.value.ty, r.ty, "its value");
                let mut touched = Vec::new();
                part.value.visit(&mut |e| {
                    if let ExprKind::Load(g) = &e.kind {
                        touched.push(g.field);
                    }
                });
                self.subset_ranks(&part.subset, &touched);
            }
        }
        if let Some(check) = &iterate.check {
            self.enter("the check".to_string(), check.span);
            self.expr(&check.cond, Place::Check);
            self.integer(&check.every, all, "the check interval");
        }
    }

    fn rank_in_range(&mut self, rank: usize, what: &str) {
        if !(1..=3).contains(&rank) {
            self.error(format!("has {rank} {what}, not 1 to 3"));
        }
    }

    fn subset(&mut self, subset: &Subset, all: Place) {
        self.rank_in_range(subset.rank(), "subset dimension(s)");
        for (lo, hi) in &subset.ranges {
            self.integer(lo, all, "a subset bound");
            self.integer(hi, all, "a subset bound");
        }
    }

    /// Every field a part touches lives on a grid of the subset's rank.
    fn subset_ranks(&mut self, subset: &Subset, touched: &[FieldId]) {
        let program = self.program;
        for field in touched {
            let Some(f) = program.fields.get(field.0) else {
                continue; // reported where the access is checked
            };
            let Some(grid) = program.grids.get(f.grid.0) else {
                continue;
            };
            if grid.rank() != subset.rank() {
                self.error(format!(
                    "its subset has {} dimension(s) but griddata `{}` has {}",
                    subset.rank(),
                    f.name,
                    grid.rank()
                ));
            }
        }
    }

    fn collect_loop_vars(&mut self, stmt: &Stmt, out: &mut HashSet<LocalId>) {
        if let Stmt::For { var, body, .. } = stmt {
            if !out.insert(*var) {
                self.error(format!("local {} is the variable of two loops", var.0));
            }
            for s in body {
                self.collect_loop_vars(s, out);
            }
        }
    }

    fn local_ty(&mut self, local: LocalId) -> Option<ScalarType> {
        let part = self.part.as_ref()?;
        match part.locals.get(local.0) {
            Some(l) => Some(l.ty),
            None => {
                let count = part.locals.len();
                self.error(format!("uses local {} of {count}", local.0));
                None
            }
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Assign { local, value, .. } => {
                self.expr(value, Place::Point);
                if self
                    .part
                    .as_ref()
                    .is_some_and(|p| p.loop_vars.contains(local))
                {
                    self.error(format!("assigns loop variable {}", local.0));
                }
                if let Some(ty) = self.local_ty(*local) {
                    self.same_type(value.ty, ty, "an assigned value");
                }
            }
            Stmt::Store { target, value, .. } => {
                self.expr(value, Place::Point);
                if let Some(ty) = self.grid_ref(target) {
                    self.same_type(value.ty, ty, "a stored value");
                }
            }
            Stmt::For {
                var, lo, hi, body, ..
            } => {
                if let Some(ty) = self.local_ty(*var) {
                    self.same_type(ty, ScalarType::Int, "a loop variable");
                }
                if i32::try_from(*lo).is_err() || i32::try_from(*hi).is_err() {
                    self.error(format!("has loop bounds {lo}..{hi} outside `int`"));
                }
                if let Some(part) = self.part.as_mut() {
                    part.in_scope.push(*var);
                }
                for s in body {
                    self.stmt(s);
                }
                if let Some(part) = self.part.as_mut() {
                    part.in_scope.pop();
                }
            }
        }
    }

    /// Checks a field access; returns the field's type when it resolves.
    fn grid_ref(&mut self, g: &GridRef) -> Option<ScalarType> {
        let program = self.program;
        let Some(field) = program.fields.get(g.field.0) else {
            let count = program.fields.len();
            self.error(format!("accesses griddata {} of {count}", g.field.0));
            return None;
        };
        if g.time < field.time_lo || g.time > field.time_hi {
            self.error(format!(
                "accesses `{}` at time offset {}, outside its levels {}..{}",
                field.name, g.time, field.time_lo, field.time_hi
            ));
        }
        if let Some(grid) = program.grids.get(field.grid.0) {
            if g.offset.len() != grid.rank() {
                self.error(format!(
                    "accesses `{}` with {} offset(s) on a {}-D grid",
                    field.name,
                    g.offset.len(),
                    grid.rank()
                ));
            }
        }
        for o in &g.offset {
            self.integer(o, Place::Offset, "a spatial offset");
        }
        Some(field.ty)
    }

    fn same_type(&mut self, found: ScalarType, expected: ScalarType, what: &str) {
        if found != expected {
            self.error(format!("{what} has type `{found}`, not `{expected}`"));
        }
    }

    /// Checks an expression that C needs to be an integer.
    fn integer(&mut self, e: &Expr, place: Place, what: &str) {
        self.expr(e, place);
        if e.ty.is_float() {
            self.error(format!("{what} has type `{}`, not an integer type", e.ty));
        }
    }

    fn not_here(&mut self, what: &str, place: Place) {
        self.error(format!("{what} is used in {}", place.what()));
    }

    /// Checks `e` and its sub-expressions. Recursion depth follows the
    /// expression's, so messages are built in helpers to keep frames small.
    fn expr(&mut self, e: &Expr, place: Place) {
        let leaf_ty = match &e.kind {
            ExprKind::Literal(v) => Some(v.ty()),
            ExprKind::Param(p) => self.resolve(p.0, self.program.params.len(), "parameter", |pr| {
                pr.params[p.0].ty
            }),
            ExprKind::Const(c) => {
                let visible = match place {
                    Place::Fixed { constants } => constants,
                    _ => self.program.constants.len(),
                };
                self.resolve(c.0, visible, "constant", |pr| pr.constants[c.0].ty)
            }
            ExprKind::Local(l) => self.local_use(*l, place),
            ExprKind::Load(g) => {
                if !place.allows_data() {
                    self.not_here("a griddata read", place);
                }
                self.grid_ref(g)
            }
            ExprKind::Table { table, index } => {
                self.table_read(table.0, index, place);
                self.resolve(table.0, self.program.tables.len(), "table", |pr| {
                    pr.tables[table.0].ty
                })
            }
            ExprKind::Reduction(r) => {
                if place != Place::Check {
                    self.not_here("a reduction", place);
                }
                let count = self
                    .program
                    .iterate
                    .as_ref()
                    .map_or(0, |i| i.reductions.len());
                self.resolve(r.0, count, "reduction", |pr| {
                    pr.iterate
                        .as_ref()
                        .map_or(ScalarType::Int, |i| i.reductions[r.0].ty)
                })
            }
            ExprKind::Unary(op, a) => {
                self.expr(a, place);
                self.unary(*op, a.ty, e.ty);
                None
            }
            ExprKind::Binary(op, a, b) => {
                self.expr(a, place);
                self.expr(b, place);
                self.binary(*op, a.ty, b.ty, e.ty);
                None
            }
            ExprKind::Select {
                cond,
                then,
                otherwise,
            } => {
                self.expr(cond, place);
                self.expr(then, place);
                self.expr(otherwise, place);
                self.same_type(then.ty, e.ty, "the true arm of `?:`");
                self.same_type(otherwise.ty, e.ty, "the false arm of `?:`");
                None
            }
            ExprKind::Call {
                func,
                float_form,
                args,
            } => {
                for a in args {
                    self.expr(a, place);
                }
                self.call(*func, *float_form, args, e.ty);
                None
            }
            ExprKind::Cast(a) => {
                self.expr(a, place);
                None
            }
        };
        if let Some(ty) = leaf_ty {
            self.same_type(e.ty, ty, "a reference");
        }
    }

    /// Checks that id `index` is below `count`; the type of what it names.
    fn resolve(
        &mut self,
        index: usize,
        count: usize,
        what: &str,
        ty: impl Fn(&Program) -> ScalarType,
    ) -> Option<ScalarType> {
        if index < count {
            Some(ty(self.program))
        } else {
            self.error(format!("uses {what} {index} where {count} can be used"));
            None
        }
    }

    fn local_use(&mut self, local: LocalId, place: Place) -> Option<ScalarType> {
        let Some(part) = self.part.as_ref() else {
            self.not_here("a local", place);
            return None;
        };
        let is_loop_var = part.loop_vars.contains(&local);
        let in_loop = part.in_scope.contains(&local);
        match place {
            Place::Point | Place::Offset if is_loop_var && !in_loop => {
                self.error(format!("uses loop variable {} outside its loop", local.0));
            }
            Place::Offset if !is_loop_var => self.not_here("a local (not a loop variable)", place),
            Place::Point | Place::Offset => {}
            _ => self.not_here("a local", place),
        }
        self.local_ty(local)
    }

    fn table_read(&mut self, table: usize, index: &[Expr], place: Place) {
        if !place.allows_data() {
            self.not_here("a table read", place);
        }
        if let Some(t) = self.program.tables.get(table) {
            if t.shape.len() != index.len() {
                let message = format!(
                    "reads table `{}` with {} index(es) for {} dimension(s)",
                    t.name,
                    index.len(),
                    t.shape.len()
                );
                self.error(message);
            }
        }
        for i in index {
            self.integer(i, Place::Offset, "a table index");
        }
    }

    fn unary(&mut self, op: UnaryOp, operand: ScalarType, ty: ScalarType) {
        match op {
            UnaryOp::Neg => self.same_type(operand, ty, "the operand of `-`"),
            UnaryOp::Not => self.same_type(ty, ScalarType::Int, "a `!`"),
        }
    }

    fn binary(&mut self, op: BinaryOp, a: ScalarType, b: ScalarType, ty: ScalarType) {
        let symbol = op.symbol();
        if op.is_boolean() {
            self.same_type(ty, ScalarType::Int, &format!("a `{symbol}`"));
        }
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            return;
        }
        if a != b {
            self.error(format!("`{symbol}` has operands of types `{a}` and `{b}`"));
        } else if !op.is_boolean() {
            self.same_type(ty, a, &format!("a `{symbol}` of `{a}` operands"));
        }
        if op == BinaryOp::Rem && (a.is_float() || b.is_float()) {
            self.error("`%` has a floating-point operand".to_string());
        }
    }

    fn call(&mut self, func: MathFn, float_form: bool, args: &[Expr], ty: ScalarType) {
        let name = func.name();
        if args.len() != func.arity() {
            let message = format!(
                "`{name}` has {} argument(s), not {}",
                args.len(),
                func.arity()
            );
            self.error(message);
        }
        let form = if float_form {
            ScalarType::Float
        } else {
            ScalarType::Double
        };
        self.same_type(ty, form, &format!("a call of `{name}`"));
        for a in args {
            self.same_type(a.ty, form, &format!("an argument of `{name}`"));
        }
    }
}

/// The fields a statement stores to or loads from, into `out`.
fn fields_touched(stmt: &Stmt, out: &mut Vec<FieldId>) {
    let mut loads = |e: &Expr| {
        e.visit(&mut |e| {
            if let ExprKind::Load(g) = &e.kind {
                out.push(g.field);
            }
        })
    };
    match stmt {
        Stmt::Assign { value, .. } => loads(value),
        Stmt::Store { target, value, .. } => {
            loads(value);
            out.push(target.field);
        }
        Stmt::For { body, .. } => body.iter().for_each(|s| fields_touched(s, out)),
    }
}

#[cfg(test)]
mod tests;
