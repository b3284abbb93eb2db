//! OverTile expressions to SDSL expressions: names resolved (`let`
//! variables, then parameters, then the extents `Dim_d`), field reads given
//! their time level, calls mapped to C's math functions, and C's types
//! computed for the `let` variables' declarations.
//!
//! Types follow C, as the CUDA that OverTile generates does: an integer
//! literal is an `int` (a `long` when it does not fit), a floating literal a
//! `double`, and `a op b` has the larger of the two types.

use crate::diag::Diagnostic;
use crate::front::ast::{self as sdsl, Ident, Stmt};
use crate::front::overtile::ast::{self as ot, BinOp};
use crate::front::suggest;
use crate::ir::{BinaryOp, MathFn, ScalarType};
use crate::source::Span;

use super::{dim_name, Lower};

/// The names an expression sees and the statements it needs.
pub(super) struct Scope {
    /// The update the expression belongs to.
    update: usize,
    /// Visible `let` variables, innermost last: OverTile's name, the local's
    /// name and its type.
    lets: Vec<(String, String, ScalarType)>,
    /// One local declaration per `let`, in the order they are evaluated.
    pub(super) locals: Vec<Stmt>,
    /// Every field read: its offsets (outermost first) and where.
    pub(super) reads: Vec<(Vec<i64>, Span)>,
}

impl Scope {
    /// The scope of a piece of update `update`.
    pub(super) fn new(update: usize) -> Scope {
        Scope {
            update,
            lets: Vec::new(),
            locals: Vec::new(),
            reads: Vec::new(),
        }
    }
}

/// A function OverTile's expressions may call.
#[derive(Clone, Copy)]
enum Callee {
    /// A C math function; `true` for its `f` (float) form.
    Math(MathFn, bool),
    /// CUDA's `rsqrt` / `rsqrtf`: `1 / sqrt(x)`.
    Rsqrt(bool),
}

impl Callee {
    fn find(name: &str) -> Option<Callee> {
        match name {
            "rsqrt" => return Some(Callee::Rsqrt(false)),
            "rsqrtf" => return Some(Callee::Rsqrt(true)),
            _ => {}
        }
        MathFn::ALL.into_iter().find_map(|f| {
            if name == f.name() {
                Some(Callee::Math(f, false))
            } else if name.strip_suffix('f') == Some(f.name()) {
                Some(Callee::Math(f, true))
            } else {
                None
            }
        })
    }

    fn arity(self) -> usize {
        match self {
            Callee::Math(f, _) => f.arity(),
            Callee::Rsqrt(_) => 1,
        }
    }

    fn ty(self) -> ScalarType {
        match self {
            Callee::Math(_, true) | Callee::Rsqrt(true) => ScalarType::Float,
            _ => ScalarType::Double,
        }
    }

    /// Every name, for messages and suggestions.
    fn names() -> Vec<String> {
        let mut names: Vec<String> = MathFn::ALL
            .iter()
            .flat_map(|f| [f.name().to_string(), format!("{}f", f.name())])
            .collect();
        names.extend(["rsqrt".to_string(), "rsqrtf".to_string()]);
        names
    }
}

fn node(kind: sdsl::ExprKind, span: Span) -> sdsl::Expr {
    sdsl::Expr::new(kind, span)
}

fn ident(name: &str, span: Span) -> Ident {
    Ident {
        name: name.to_string(),
        span,
    }
}

impl Lower<'_> {
    /// `e` as an SDSL expression and its C type; `None` after a diagnostic.
    pub(super) fn expr(
        &mut self,
        e: &ot::Expr,
        scope: &mut Scope,
    ) -> Option<(sdsl::Expr, ScalarType)> {
        let span = e.span;
        match &e.kind {
            ot::ExprKind::Int(v) => {
                let ty = if i32::try_from(*v).is_ok() {
                    ScalarType::Int
                } else {
                    ScalarType::Long
                };
                Some((node(sdsl::ExprKind::Int(*v, ty), span), ty))
            }
            ot::ExprKind::Real(v) => Some((
                node(sdsl::ExprKind::Float(*v, ScalarType::Double), span),
                ScalarType::Double,
            )),
            ot::ExprKind::Name(name) => self.name(name, scope),
            ot::ExprKind::FieldRef { field, offsets } => {
                self.field_ref(field, offsets, span, scope)
            }
            ot::ExprKind::Call { func, args } => self.call(func, args, span, scope),
            ot::ExprKind::Binary(op, a, b) => {
                let a = self.expr(a, scope);
                let b = self.expr(b, scope);
                let ((a, ta), (b, tb)) = (a?, b?);
                let op = match op {
                    BinOp::Add => BinaryOp::Add,
                    BinOp::Sub => BinaryOp::Sub,
                    BinOp::Mul => BinaryOp::Mul,
                    BinOp::Div => BinaryOp::Div,
                };
                Some((
                    node(sdsl::ExprKind::Binary(op, Box::new(a), Box::new(b)), span),
                    ta.common(tb),
                ))
            }
            ot::ExprKind::Let { bindings, body } => {
                let depth = scope.lets.len();
                let mut ok = true;
                for (name, value) in bindings {
                    let Some((value, ty)) = self.expr(value, scope) else {
                        // Still in scope, so that its uses raise no errors of their own.
                        scope
                            .lets
                            .push((name.name.clone(), name.name.clone(), ScalarType::Double));
                        ok = false;
                        continue;
                    };
                    let local = self.fresh(&name.name);
                    scope.locals.push(Stmt::Local {
                        ty,
                        name: ident(&local, name.span),
                        init: Some(value),
                        span: name.span,
                    });
                    scope.lets.push((name.name.clone(), local, ty));
                }
                let body = self.expr(body, scope);
                scope.lets.truncate(depth);
                if ok {
                    body
                } else {
                    None
                }
            }
        }
    }

    /// A name: a `let` variable, a parameter or an extent `Dim_d`.
    fn name(&mut self, name: &Ident, scope: &Scope) -> Option<(sdsl::Expr, ScalarType)> {
        let found = scope
            .lets
            .iter()
            .rev()
            .find(|(n, _, _)| *n == name.name)
            .map(|(_, local, ty)| (local.clone(), *ty))
            .or_else(|| {
                self.params
                    .get(&name.name)
                    .map(|ty| (name.name.clone(), *ty))
            })
            .or_else(|| {
                (0..self.rank)
                    .any(|d| dim_name(d) == name.name)
                    .then(|| (name.name.clone(), ScalarType::Int))
            });
        if let Some((resolved, ty)) = found {
            let kind = sdsl::ExprKind::Name(ident(&resolved, name.span));
            return Some((node(kind, name.span), ty));
        }
        let diag = if self.fields.contains_key(&name.name) {
            let zeros = "[0]".repeat(self.rank);
            Diagnostic::error(format!("field `{}` is read without offsets", name.name), name.span)
                .with_label("a field, not a scalar")
                .with_help(format!(
                    "read the field at an offset from the point, one per dimension: `{}{zeros}` is the point itself",
                    name.name
                ))
        } else {
            let mut visible: Vec<String> = scope.lets.iter().map(|(n, _, _)| n.clone()).collect();
            visible.extend(self.params.keys().cloned());
            visible.extend((0..self.rank).map(dim_name));
            let mut diag = Diagnostic::error(format!("unknown name `{}`", name.name), name.span)
                .with_label("not a `let` variable or a parameter");
            diag = match suggest::closest(&name.name, visible.iter().map(String::as_str)) {
                Some(close) => diag.with_help(format!("did you mean `{close}`?")),
                None => diag.with_help(format!(
                    "bind it with `let {} = ... in ...`, or declare it after the grid with `param {} double`",
                    name.name, name.name
                )),
            };
            diag
        };
        self.errors.push(diag);
        None
    }

    /// `A[0][-1]` at the level holding the field's newest values for update
    /// `scope.update`: `[1]` once an earlier update of the step wrote it.
    fn field_ref(
        &mut self,
        field: &Ident,
        offsets: &[(i64, Span)],
        span: Span,
        scope: &mut Scope,
    ) -> Option<(sdsl::Expr, ScalarType)> {
        let Some(&f) = self.fields.get(&field.name) else {
            let diag = if self.params.contains_key(&field.name)
                || scope.lets.iter().any(|(n, _, _)| *n == field.name)
            {
                Diagnostic::error(
                    format!("`{}` is a scalar, not a field", field.name),
                    field.span,
                )
                .with_label("takes no offsets")
                .with_help(format!(
                    "write `{}` alone; only fields are read at offsets",
                    field.name
                ))
            } else {
                self.unknown_field(field, "read")
            };
            self.errors.push(diag);
            return None;
        };
        if offsets.len() != self.rank {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "`{}` is read with {} offset(s) but the grid has {} dimension(s)",
                        field.name,
                        offsets.len(),
                        self.rank
                    ),
                    span,
                )
                .with_label(format!("{} offset(s)", offsets.len()))
                .with_secondary(self.program.rank.1, format!("{}-D grid", self.rank))
                .with_help(format!(
                    "give one offset per dimension, outermost first: `{}{}`",
                    field.name,
                    "[0]".repeat(self.rank)
                )),
            );
            return None;
        }
        let mut lowered = Vec::new();
        for &(o, o_span) in offsets {
            if i32::try_from(o).is_err() {
                self.errors.push(
                    Diagnostic::error(format!("offset {o} is too large"), o_span)
                        .with_label("does not fit an `int`")
                        .with_help("offsets are small integers: how far the point read is from the point written"),
                );
                return None;
            }
            lowered.push(node(sdsl::ExprKind::Int(o, ScalarType::Int), o_span));
        }
        scope
            .reads
            .push((offsets.iter().map(|&(o, _)| o).collect(), span));
        let info = &self.field_info[f];
        let level = i64::from(info.writer.is_some_and(|w| w < scope.update));
        let reference = sdsl::GridRef {
            time: Box::new(node(
                sdsl::ExprKind::Int(level, ScalarType::Int),
                field.span,
            )),
            field: field.clone(),
            offsets: lowered,
            span,
        };
        Some((node(sdsl::ExprKind::Grid(reference), span), info.ty))
    }

    /// `sqrt(x)`, `rsqrtf(x)`, `pow(x, y)`, …
    fn call(
        &mut self,
        func: &Ident,
        args: &[ot::Expr],
        span: Span,
        scope: &mut Scope,
    ) -> Option<(sdsl::Expr, ScalarType)> {
        let Some(callee) = Callee::find(&func.name) else {
            let names = Callee::names();
            let mut diag =
                Diagnostic::error(format!("unknown function `{}`", func.name), func.span)
                    .with_label("not a function stencilc knows");
            let list = format!(
                "the functions are C's {} (each also with `f` for `float`) and CUDA's `rsqrt`, `rsqrtf`; \
                 a host macro is not expanded inside the region, so write its expansion",
                MathFn::ALL.iter().map(|f| format!("`{}`", f.name())).collect::<Vec<_>>().join(", ")
            );
            diag = match suggest::closest(&func.name, names.iter().map(String::as_str)) {
                Some(close) => diag.with_help(format!("did you mean `{close}`? {list}")),
                None => diag.with_help(list),
            };
            self.errors.push(diag);
            return None;
        };
        let mut lowered = Vec::new();
        let mut ok = true;
        for arg in args {
            match self.expr(arg, scope) {
                Some((a, _)) => lowered.push(a),
                None => ok = false,
            }
        }
        if args.len() != callee.arity() {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "`{}` takes {} argument(s), found {}",
                        func.name,
                        callee.arity(),
                        args.len()
                    ),
                    span,
                )
                .with_label("wrong number of arguments")
                .with_help(if callee.arity() == 2 {
                    format!("call it with two arguments: `{}(x, y)`", func.name)
                } else {
                    format!("call it with one argument: `{}(x)`", func.name)
                }),
            );
            return None;
        }
        if !ok {
            return None;
        }
        let ty = callee.ty();
        let expr = match callee {
            Callee::Math(_, _) => node(
                sdsl::ExprKind::Call {
                    func: func.clone(),
                    args: lowered,
                },
                span,
            ),
            Callee::Rsqrt(float) => {
                let sqrt = ident(if float { "sqrtf" } else { "sqrt" }, func.span);
                let root = node(
                    sdsl::ExprKind::Call {
                        func: sqrt,
                        args: lowered,
                    },
                    span,
                );
                let one = node(sdsl::ExprKind::Float(1.0, ty), func.span);
                node(
                    sdsl::ExprKind::Binary(BinaryOp::Div, Box::new(one), Box::new(root)),
                    span,
                )
            }
        };
        Some((expr, ty))
    }

    /// "unknown field" with a suggestion; `what` is `update` or `read`.
    pub(super) fn unknown_field(&self, name: &Ident, what: &str) -> Diagnostic {
        let fields: Vec<&str> = self
            .program
            .fields
            .iter()
            .map(|f| f.name.name.as_str())
            .collect();
        let diag = Diagnostic::error(format!("unknown field `{}`", name.name), name.span)
            .with_label(format!("no field of this name to {what}"));
        match suggest::closest(&name.name, fields.iter().copied()) {
            Some(close) => diag.with_help(format!("did you mean `{close}`?")),
            None if fields.is_empty() => diag.with_help(format!(
                "declare it after the grid: `field {} float inout`",
                name.name
            )),
            None => {
                diag.with_help(format!(
                "the fields are {}; declare others after the grid with `field NAME float inout`",
                fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
            ))
            }
        }
    }
}
