//! Expressions: name resolution, typing, and C's conversions made explicit.

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::front::ast;
use crate::front::sema::fold::{self, FoldError};
use crate::front::sema::{Sema, Symbol};
use crate::ir::{
    BinaryOp, Expr, ExprKind, FieldId, GridRef, Local, LocalId, MathFn, ScalarType, UnaryOp, Value,
};
use crate::source::Span;

/// Where an expression appears, which decides what it may refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// Grid sizes, subset bounds, counts, constants, table values: literals,
    /// parameters and constants only. The text names the place for messages.
    Fixed(&'static str),
    /// Spatial offsets, table indices and loop bounds: as `Fixed`, plus loop variables.
    Offset(&'static str),
    /// Point-function bodies and stencil parts: anything but reductions.
    Point,
    /// Reduction values: as `Point`, without locals.
    Reduction,
    /// The check condition: reductions, parameters, constants, literals.
    Check,
}

impl Place {
    fn what(self) -> &'static str {
        match self {
            Place::Fixed(what) | Place::Offset(what) => what,
            Place::Point => "a stencil",
            Place::Reduction => "a reduction",
            Place::Check => "the check condition",
        }
    }

    fn allows_data(self) -> bool {
        matches!(self, Place::Point | Place::Reduction)
    }
}

/// Locals of the stencil part being built (shared by every inlined function).
#[derive(Debug, Default)]
pub(super) struct PartLocals {
    pub locals: Vec<Local>,
    pub is_loop_var: Vec<bool>,
}

impl PartLocals {
    pub fn add(&mut self, name: &ast::Ident, ty: ScalarType, is_loop_var: bool) -> LocalId {
        self.locals.push(Local {
            name: name.name.clone(),
            ty,
            span: name.span,
        });
        self.is_loop_var.push(is_loop_var);
        LocalId(self.locals.len() - 1)
    }
}

/// The names visible inside one inlined point function (or a stencil part).
#[derive(Debug, Default)]
pub(super) struct Frame {
    /// Block scopes, innermost last.
    pub scopes: Vec<HashMap<String, LocalId>>,
    /// Point-function parameters bound to the caller's griddata.
    pub bindings: HashMap<String, FieldId>,
}

impl Frame {
    fn local(&self, name: &str) -> Option<LocalId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }
}

/// The context an expression is lowered in.
#[derive(Clone, Copy)]
pub(super) struct Cx<'a> {
    pub place: Place,
    pub frame: Option<&'a Frame>,
    pub part: Option<&'a PartLocals>,
}

impl Cx<'static> {
    /// A context of literals, parameters and constants only.
    pub fn fixed(what: &'static str) -> Cx<'static> {
        Cx {
            place: Place::Fixed(what),
            frame: None,
            part: None,
        }
    }
}

impl<'a> Cx<'a> {
    fn with_place(self, place: Place) -> Cx<'a> {
        Cx { place, ..self }
    }
}

/// `expr` converted to `ty` (an explicit cast when the type differs).
pub(super) fn convert(expr: Expr, ty: ScalarType) -> Expr {
    if expr.ty == ty {
        return expr;
    }
    let span = expr.span;
    Expr::new(ExprKind::Cast(Box::new(expr)), ty, span)
}

/// The math function spelt `name`, and whether it is the `f`-suffixed form.
pub(super) fn math_function(name: &str) -> Option<(MathFn, bool)> {
    MathFn::ALL.into_iter().find_map(|f| {
        if name == f.name() {
            Some((f, false))
        } else if name.strip_suffix('f') == Some(f.name()) {
            Some((f, true))
        } else {
            None
        }
    })
}

fn math_function_list() -> String {
    MathFn::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Sema {
    /// Lowers `expr`; on error records diagnostics and returns `None`.
    pub(super) fn lower_expr(&mut self, expr: &ast::Expr, cx: &Cx) -> Option<Expr> {
        let span = expr.span;
        match &expr.kind {
            ast::ExprKind::Int(v, ty) => {
                let value = match ty {
                    ScalarType::Int => Value::Int(*v as i32),
                    _ => Value::Long(*v),
                };
                Some(Expr::new(ExprKind::Literal(value), value.ty(), span))
            }
            ast::ExprKind::Float(v, ty) => {
                let value = match ty {
                    ScalarType::Float => Value::Float(*v as f32),
                    _ => Value::Double(*v),
                };
                Some(Expr::new(ExprKind::Literal(value), value.ty(), span))
            }
            ast::ExprKind::Name(name) => self.resolve_value(name, cx),
            ast::ExprKind::Index { base, indices } => self.table_read(base, indices, span, cx),
            ast::ExprKind::Grid(grid) => {
                if !cx.place.allows_data() {
                    self.errors.push(
                        Diagnostic::error(
                            format!("griddata cannot be read in {}", cx.place.what()),
                            span,
                        )
                        .with_label("grid reference not allowed here")
                        .with_help(self.allowed_help(cx.place)),
                    );
                    return None;
                }
                let grid = self.grid_ref(grid, cx)?;
                let ty = self.program.fields[grid.field.0].ty;
                Some(Expr::new(ExprKind::Load(grid), ty, span))
            }
            ast::ExprKind::Call { func, args } => self.math_call(func, args, span, cx),
            ast::ExprKind::Cast(ty, inner) => {
                let inner = self.lower_expr(inner, cx)?;
                Some(Expr {
                    span,
                    ..convert(inner, *ty)
                })
            }
            ast::ExprKind::Unary(op, inner) => {
                let inner = self.lower_expr(inner, cx)?;
                let ty = match op {
                    UnaryOp::Neg => inner.ty,
                    UnaryOp::Not => ScalarType::Int,
                };
                Some(Expr::new(ExprKind::Unary(*op, Box::new(inner)), ty, span))
            }
            ast::ExprKind::Binary(op, a, b) => {
                let a = self.lower_expr(a, cx);
                let b = self.lower_expr(b, cx);
                self.binary(*op, a?, b?, span)
            }
            ast::ExprKind::Select(cond, then, otherwise) => {
                let cond = self.lower_expr(cond, cx);
                let then = self.lower_expr(then, cx);
                let otherwise = self.lower_expr(otherwise, cx);
                let (cond, then, otherwise) = (cond?, then?, otherwise?);
                let ty = then.ty.common(otherwise.ty);
                Some(Expr::new(
                    ExprKind::Select {
                        cond: Box::new(cond),
                        then: Box::new(convert(then, ty)),
                        otherwise: Box::new(convert(otherwise, ty)),
                    },
                    ty,
                    span,
                ))
            }
        }
    }

    fn binary(&mut self, op: BinaryOp, a: Expr, b: Expr, span: Span) -> Option<Expr> {
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            return Some(Expr::new(
                ExprKind::Binary(op, Box::new(a), Box::new(b)),
                ScalarType::Int,
                span,
            ));
        }
        if op == BinaryOp::Rem {
            for operand in [&a, &b] {
                if operand.ty.is_float() {
                    self.errors.push(
                        Diagnostic::error("`%` needs integer operands", operand.span)
                            .with_label(format!("this has type `{}`", operand.ty))
                            .with_help(
                                "`%` is the integer remainder; convert the operand with `(int)` or use integer values",
                            ),
                    );
                    return None;
                }
            }
        }
        let common = a.ty.common(b.ty);
        let ty = if op.is_boolean() {
            ScalarType::Int
        } else {
            common
        };
        Some(Expr::new(
            ExprKind::Binary(
                op,
                Box::new(convert(a, common)),
                Box::new(convert(b, common)),
            ),
            ty,
            span,
        ))
    }

    fn allowed_help(&self, place: Place) -> String {
        match place {
            Place::Fixed(what) => {
                format!("{what} may use only literals, parameters and constants")
            }
            Place::Offset(what) => {
                format!("{what} may use only literals, parameters, constants and loop variables")
            }
            Place::Check => {
                "the check condition may use reductions, parameters, constants and literals"
                    .to_string()
            }
            Place::Point | Place::Reduction => {
                "use literals, parameters, constants, locals, tables and grid references"
                    .to_string()
            }
        }
    }

    fn resolve_value(&mut self, name: &ast::Ident, cx: &Cx) -> Option<Expr> {
        let span = name.span;
        if let (Some(frame), Some(part)) = (cx.frame, cx.part) {
            if let Some(id) = frame.local(&name.name) {
                let is_loop_var = part.is_loop_var[id.0];
                let ok = match cx.place {
                    Place::Point => true,
                    Place::Offset(_) => is_loop_var,
                    _ => false,
                };
                if !ok {
                    self.errors.push(
                        Diagnostic::error(
                            format!(
                                "local variable `{}` cannot be used in {}",
                                name.name,
                                cx.place.what()
                            ),
                            span,
                        )
                        .with_label("a local variable, known only while the stencil runs")
                        .with_help(self.allowed_help(cx.place)),
                    );
                    return None;
                }
                return Some(Expr::new(ExprKind::Local(id), part.locals[id.0].ty, span));
            }
            if frame.bindings.contains_key(&name.name) {
                self.errors.push(self.griddata_as_value(name));
                return None;
            }
        }
        match self.scope.get(&name.name).map(|d| d.symbol) {
            Some(Symbol::Param(id)) => Some(Expr::new(
                ExprKind::Param(id),
                self.program.params[id.0].ty,
                span,
            )),
            Some(Symbol::Const(id)) => Some(Expr::new(
                ExprKind::Const(id),
                self.program.constants[id.0].ty,
                span,
            )),
            Some(Symbol::Reduction(id)) if cx.place == Place::Check => Some(Expr::new(
                ExprKind::Reduction(id),
                self.reduction_types[id.0],
                span,
            )),
            Some(Symbol::Reduction(_)) => {
                self.errors.push(
                    Diagnostic::error(
                        format!(
                            "reduction `{}` can only be used in the check condition",
                            name.name
                        ),
                        span,
                    )
                    .with_label("a reduction's value exists only after the stencils ran")
                    .with_help("use the reduction in `check (...)` after the iterate"),
                );
                None
            }
            Some(Symbol::Field(_)) => {
                self.errors.push(self.griddata_as_value(name));
                None
            }
            Some(Symbol::Table(id)) => {
                let dims = self.program.tables[id.0].shape.len();
                self.errors.push(
                    Diagnostic::error(format!("table `{}` needs indices", name.name), span)
                        .with_label("a whole table is not a value")
                        .with_help(format!(
                            "read one element with {} index(es), e.g. `{}{}`",
                            dims,
                            name.name,
                            "[0]".repeat(dims)
                        )),
                );
                None
            }
            Some(other) => {
                self.errors.push(
                    Diagnostic::error(
                        format!("`{}` is {}, not a value", name.name, other.describe()),
                        span,
                    )
                    .with_label("not a value")
                    .with_help(self.allowed_help(cx.place)),
                );
                None
            }
            None if self.reduction_names.contains_key(&name.name) => {
                self.errors.push(
                    Diagnostic::error(
                        format!(
                            "reduction `{}` can only be used in the check condition",
                            name.name
                        ),
                        span,
                    )
                    .with_label("a reduction's value exists only after the stencils ran")
                    .with_secondary(self.reduction_names[&name.name], "the reduction")
                    .with_help("use the reduction in `check (...)` after the iterate"),
                );
                None
            }
            None => {
                let mut candidates = self.names_where(|s| match s {
                    Symbol::Param(_) | Symbol::Const(_) => true,
                    Symbol::Reduction(_) => cx.place == Place::Check,
                    _ => false,
                });
                if let Some(frame) = cx.frame {
                    for scope in &frame.scopes {
                        candidates.extend(scope.keys().cloned());
                    }
                }
                let diag = self.unknown_name("name", name, candidates);
                self.errors.push(diag);
                None
            }
        }
    }

    fn griddata_as_value(&self, name: &ast::Ident) -> Diagnostic {
        Diagnostic::error(
            format!("griddata `{}` is used without a time and offsets", name.name),
            name.span,
        )
        .with_label("griddata, not a scalar")
        .with_help(format!(
            "refer to one element with a time offset and one offset per dimension, e.g. `[0]{}[0][0]`",
            name.name
        ))
    }

    /// An integer expression of literals, parameters, constants and loop variables.
    pub(super) fn offset_expr(
        &mut self,
        expr: &ast::Expr,
        cx: &Cx,
        what: &'static str,
    ) -> Option<Expr> {
        let lowered = self.lower_expr(expr, &cx.with_place(Place::Offset(what)))?;
        self.require_integer(&lowered, what).then_some(lowered)
    }

    /// Reports a non-integer expression where C needs an integer.
    pub(super) fn require_integer(&mut self, expr: &Expr, what: &str) -> bool {
        if fold::is_integer(expr.ty) {
            return true;
        }
        self.errors.push(
            Diagnostic::error(format!("{what} must be an integer"), expr.span)
                .with_label(format!("this has type `{}`", expr.ty))
                .with_help("write an integer expression, or convert it with `(int)`"),
        );
        false
    }

    fn table_read(
        &mut self,
        base: &ast::Ident,
        indices: &[ast::Expr],
        span: Span,
        cx: &Cx,
    ) -> Option<Expr> {
        let shadowed = cx
            .frame
            .is_some_and(|f| f.local(&base.name).is_some() || f.bindings.contains_key(&base.name));
        let table = match self.scope.get(&base.name).map(|d| d.symbol) {
            Some(Symbol::Table(id)) if !shadowed => id,
            Some(Symbol::Field(_)) if !shadowed => {
                self.errors.push(
                    Diagnostic::error(
                        format!("griddata `{}` needs a time offset in front", base.name),
                        base.span,
                    )
                    .with_label("missing `[time]`")
                    .with_help(format!(
                        "a grid reference starts with its time offset: `[0]{}[...]`",
                        base.name
                    )),
                );
                return None;
            }
            None if !shadowed => {
                let tables = self.names_where(|s| matches!(s, Symbol::Table(_)));
                let diag = self.unknown_name("table", base, tables);
                self.errors.push(diag);
                return None;
            }
            _ => {
                if cx
                    .frame
                    .is_some_and(|f| f.bindings.contains_key(&base.name))
                {
                    self.errors.push(
                        Diagnostic::error(
                            format!("griddata `{}` needs a time offset in front", base.name),
                            base.span,
                        )
                        .with_label("missing `[time]`")
                        .with_help(format!(
                            "a grid reference starts with its time offset: `[0]{}[...]`",
                            base.name
                        )),
                    );
                } else {
                    self.errors.push(
                        Diagnostic::error(format!("`{}` is not a table", base.name), base.span)
                            .with_label("cannot be indexed")
                            .with_help("only coefficient tables (`const float K[3] = {...};`) take indices"),
                    );
                }
                return None;
            }
        };
        if !cx.place.allows_data() {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "table `{}` cannot be read in {}",
                        base.name,
                        cx.place.what()
                    ),
                    span,
                )
                .with_label("table read not allowed here")
                .with_help(self.allowed_help(cx.place)),
            );
            return None;
        }
        let shape = self.program.tables[table.0].shape.clone();
        if indices.len() != shape.len() {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "wrong number of indices for table `{}`: expected {}, found {}",
                        base.name,
                        shape.len(),
                        indices.len()
                    ),
                    span,
                )
                .with_label(format!("{} index(es)", indices.len()))
                .with_help(format!(
                    "`{}` has shape {}; write one `[index]` per dimension",
                    base.name,
                    shape.iter().map(|n| format!("[{n}]")).collect::<String>()
                )),
            );
            return None;
        }
        let mut index = Vec::new();
        for (i, e) in indices.iter().enumerate() {
            let lowered = self.offset_expr(e, cx, "a table index")?;
            if let Ok(v) = fold::fold(&lowered, &|c| self.const_value(c)) {
                let at = fold::as_integer(v).unwrap_or(0);
                if at < 0 || at >= shape[i] as i64 {
                    self.errors.push(
                        Diagnostic::error(
                            format!("table index {at} is out of bounds for `{}`", base.name),
                            e.span,
                        )
                        .with_label(format!("valid indices are 0 to {}", shape[i] - 1))
                        .with_help("index tables from 0 to their extent minus one"),
                    );
                    return None;
                }
            }
            index.push(lowered);
        }
        let ty = self.program.tables[table.0].ty;
        Some(Expr::new(ExprKind::Table { table, index }, ty, span))
    }

    fn math_call(
        &mut self,
        func: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
        cx: &Cx,
    ) -> Option<Expr> {
        let Some((math, float_form)) = math_function(&func.name) else {
            let diag = match self.scope.get(&func.name).map(|d| d.symbol) {
                Some(Symbol::PointFunction(_)) => Diagnostic::error(
                    format!("point function `{}` does not return a value", func.name),
                    func.span,
                )
                .with_label("called inside an expression")
                .with_help(format!(
                    "call it as the statement of a stencil part or point function: `{}(...);`",
                    func.name
                )),
                _ => {
                    let names: Vec<String> = MathFn::ALL
                        .iter()
                        .flat_map(|f| [f.name().to_string(), format!("{}f", f.name())])
                        .collect();
                    let mut help = format!(
                        "the functions available are {} and their float forms ending in `f` (`sqrtf`, ...)",
                        math_function_list()
                    );
                    if let Some(close) =
                        crate::front::suggest::closest(&func.name, names.iter().map(String::as_str))
                    {
                        help = format!("did you mean `{close}`? {help}");
                    }
                    Diagnostic::error(format!("unknown function `{}`", func.name), func.span)
                        .with_label("not a math function")
                        .with_help(help)
                }
            };
            self.errors.push(diag);
            return None;
        };
        if args.len() != math.arity() {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "`{}` takes {} argument(s), found {}",
                        func.name,
                        math.arity(),
                        args.len()
                    ),
                    span,
                )
                .with_label("wrong number of arguments")
                .with_help(format!(
                    "call it as `{}({})`",
                    func.name,
                    if math.arity() == 2 { "x, y" } else { "x" }
                )),
            );
            return None;
        }
        let ty = if float_form {
            ScalarType::Float
        } else {
            ScalarType::Double
        };
        let mut lowered = Vec::new();
        for a in args {
            lowered.push(self.lower_expr(a, cx));
        }
        let args: Vec<Expr> = lowered
            .into_iter()
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .map(|a| convert(a, ty))
            .collect();
        Some(Expr::new(
            ExprKind::Call {
                func: math,
                float_form,
                args,
            },
            ty,
            span,
        ))
    }

    /// Resolves a griddata name (a bound parameter or a program griddata).
    pub(super) fn field_of(&mut self, name: &ast::Ident, cx: &Cx) -> Option<FieldId> {
        if let Some(frame) = cx.frame {
            if let Some(id) = frame.bindings.get(&name.name) {
                return Some(*id);
            }
            if frame.local(&name.name).is_some() {
                self.errors.push(
                    Diagnostic::error(
                        format!("`{}` is a local variable, not griddata", name.name),
                        name.span,
                    )
                    .with_label("not griddata")
                    .with_help("grid references name griddata or a point-function parameter"),
                );
                return None;
            }
        }
        match self.scope.get(&name.name).map(|d| d.symbol) {
            Some(Symbol::Field(id)) if id.0 < self.program.fields.len() => Some(id),
            // Declared, but its declaration failed (an unknown grid or
            // boundary mode, bad time offsets) and said why: nothing more.
            Some(Symbol::Field(_)) => None,
            Some(other) => {
                self.errors.push(
                    Diagnostic::error(
                        format!("`{}` is {}, not griddata", name.name, other.describe()),
                        name.span,
                    )
                    .with_label("not griddata")
                    .with_help("grid references name griddata or a point-function parameter"),
                );
                None
            }
            None => {
                let mut candidates = self.names_where(|s| matches!(s, Symbol::Field(_)));
                if let Some(frame) = cx.frame {
                    candidates.extend(frame.bindings.keys().cloned());
                }
                let diag = self.unknown_name("griddata", name, candidates);
                self.errors.push(diag);
                None
            }
        }
    }

    /// `[t]name[o0]...`: checks the time offset and the number of offsets.
    pub(super) fn grid_ref(&mut self, grid: &ast::GridRef, cx: &Cx) -> Option<GridRef> {
        let field_id = self.field_of(&grid.field, cx)?;
        let field = self.program.fields[field_id.0].clone();
        let declared: Vec<String> = (field.time_lo..=field.time_hi)
            .map(|t| t.to_string())
            .collect();
        let time = match time_literal(&grid.time) {
            Some(t) => t,
            None => {
                self.errors.push(
                    Diagnostic::error("a time offset must be an integer literal", grid.time.span)
                        .with_label("not an integer literal")
                        .with_help(format!(
                            "write one of the offsets `{}` is declared at ({}), e.g. `[{}]{}[...]`",
                            grid.field.name,
                            declared.join(", "),
                            field.time_hi,
                            grid.field.name
                        )),
                );
                return None;
            }
        };
        if time < i64::from(field.time_lo) || time > i64::from(field.time_hi) {
            self.errors.push(
                Diagnostic::error(
                    format!("`{}` has no time offset {time}", grid.field.name),
                    grid.time.span,
                )
                .with_label(format!(
                    "`{}` is declared at {}",
                    grid.field.name,
                    declared.join(", ")
                ))
                .with_secondary(field.span, "declared here")
                .with_help(format!(
                    "use one of the declared offsets ({}), or add {time} to the `at` list of `{}`",
                    declared.join(", "),
                    field.name
                )),
            );
            return None;
        }
        let rank = self.program.grids[field.grid.0].rank();
        if grid.offsets.len() != rank {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "wrong number of offsets for `{}`: expected {rank}, found {}",
                        grid.field.name,
                        grid.offsets.len()
                    ),
                    grid.span,
                )
                .with_label(format!("{} offset(s)", grid.offsets.len()))
                .with_help(format!(
                    "`{}` lives on the {rank}-D grid `{}`; write one `[offset]` per dimension, e.g. `[{time}]{}{}`",
                    grid.field.name,
                    self.program.grids[field.grid.0].name,
                    grid.field.name,
                    "[0]".repeat(rank)
                )),
            );
            return None;
        }
        let mut offset = Vec::new();
        let mut ok = true;
        for e in &grid.offsets {
            match self.offset_expr(e, cx, "a spatial offset") {
                Some(o) => offset.push(o),
                None => ok = false,
            }
        }
        ok.then_some(GridRef {
            field: field_id,
            time: time as i32,
            offset,
        })
    }

    /// Reports a fold failure of an expression that must be constant.
    pub(super) fn fold_error(&mut self, err: FoldError, what: &str, whole: Span) {
        let diag = match err {
            FoldError::NotConstant(at) => {
                Diagnostic::error(format!("{what} must be a compile-time constant"), whole)
                    .with_label("not known at compile time")
                    .with_secondary(at, "this is only known when the program runs")
                    .with_help(
                        "use integer literals, or constants that do not depend on parameters",
                    )
            }
            FoldError::DivisionByZero(at) => {
                Diagnostic::error(format!("{what} divides by zero"), at)
                    .with_label("division by zero")
                    .with_help("change the divisor")
            }
        };
        self.errors.push(diag);
    }
}

/// The value of `3` or `-1` as written; `None` for anything else.
fn time_literal(expr: &ast::Expr) -> Option<i64> {
    match &expr.kind {
        ast::ExprKind::Int(v, _) => Some(*v),
        ast::ExprKind::Unary(UnaryOp::Neg, inner) => match inner.kind {
            ast::ExprKind::Int(v, _) => Some(-v),
            _ => None,
        },
        _ => None,
    }
}
