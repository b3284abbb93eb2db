//! Expressions and statements in C: fully parenthesised, every conversion the IR
//! makes explicit printed as a cast, grid reads as indexed loads (plain in the
//! interior, resolved through a boundary helper in the border).

use crate::back::c::boundary::{self, Helper};
use crate::back::c::names;
use crate::back::c::writer::{MarchView, Writer};
use crate::ir::{BinaryOp, BoundaryMode, Expr, ExprKind, GridRef, Stmt, UnaryOp, Value};

/// Where the current point is, which decides how grid reads are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Access {
    /// Every read is inside the grid: `a_t0[g_p - g_s0 + 1]`.
    Interior,
    /// Reads of fields with a boundary mode may leave the grid and are resolved.
    Border,
}

/// What names mean while printing an expression.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scope<'s> {
    /// How grid reads are printed.
    pub access: Access,
    /// C names of the enclosing part's locals, by `LocalId`.
    pub locals: &'s [String],
}

impl Writer<'_> {
    /// The C text of an expression.
    pub(super) fn expr(&mut self, e: &Expr, scope: Scope<'_>) -> String {
        match &e.kind {
            ExprKind::Literal(v) => self.literal(*v),
            ExprKind::Param(p) => self.names.param(p.0),
            ExprKind::Const(c) => self.names.constant(c.0),
            ExprKind::Local(l) => scope.locals[l.0].clone(),
            ExprKind::Reduction(r) => self.names.reduction(r.0),
            ExprKind::Load(r) => self.load(r, scope),
            ExprKind::Table { table, index } => {
                let mut text = self.names.table(table.0);
                for i in index {
                    text.push_str(&format!("[{}]", self.expr(i, scope)));
                }
                text
            }
            ExprKind::Unary(op, a) => {
                let a = self.expr(a, scope);
                match op {
                    UnaryOp::Neg => format!("(-{a})"),
                    UnaryOp::Not => format!("(!{a})"),
                }
            }
            ExprKind::Binary(..) => {
                let text = self.bare_binary(e, scope);
                // A helper call is one operand already; anything else gets the
                // parentheses that make it one.
                if self.operator_helper(e).is_some() {
                    text
                } else {
                    format!("({text})")
                }
            }
            ExprKind::Select {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond, scope);
                let t = self.expr(then, scope);
                let o = self.expr(otherwise, scope);
                format!("({c} ? {t} : {o})")
            }
            ExprKind::Call {
                func,
                float_form,
                args,
            } => {
                let args: Vec<String> = args.iter().map(|a| self.expr(a, scope)).collect();
                if let Some(helper) = Helper::for_math(*func, *float_form) {
                    self.helpers.insert(helper);
                    return format!("{}({})", helper.name(), args.join(", "));
                }
                let suffix = if *float_form { "f" } else { "" };
                format!("{}{suffix}({})", func.name(), args.join(", "))
            }
            ExprKind::Cast(a) => {
                if a.ty == e.ty {
                    self.expr(a, scope)
                } else if let Some(helper) = Helper::for_cast(a.ty, e.ty) {
                    self.helpers.insert(helper);
                    let inner = self.bare_binary(a, scope);
                    format!("{}({inner})", helper.name())
                } else {
                    let inner = self.expr(a, scope);
                    format!("(({}){inner})", names::c_type(e.ty))
                }
            }
        }
    }

    /// The helper that computes a binary operation where C's own operator could
    /// differ from the language's meaning (integer `/ %`), if any.
    fn operator_helper(&self, e: &Expr) -> Option<Helper> {
        let ExprKind::Binary(op, _, b) = &e.kind else {
            return None;
        };
        let divisor = boundary::constant(self.program, b).map(|v| Value::Long(v).cast(b.ty));
        Helper::for_operator(*op, e.ty, divisor)
    }

    /// A binary operation without the outer parentheses that [`Writer::expr`]
    /// puts around it (for contexts that need none, like `x = a + b;`), or a
    /// call of the helper that computes it; any other expression as printed.
    fn bare_binary(&mut self, e: &Expr, scope: Scope<'_>) -> String {
        let ExprKind::Binary(op, a, b) = &e.kind else {
            return self.expr(e, scope);
        };
        if let Some(helper) = self.operator_helper(e) {
            self.helpers.insert(helper);
            let (a, b) = (self.bare_binary(a, scope), self.bare_binary(b, scope));
            return format!("{}({a}, {b})", helper.name());
        }
        // C's `+ -` and `* / %` associate to the left, so a left operand of the
        // same precedence needs no parentheses: `a + b + c` means `(a + b) + c`,
        // the same evaluation order.
        let left = match &a.kind {
            ExprKind::Binary(inner, _, _)
                if precedence_class(*inner).is_some()
                    && precedence_class(*inner) == precedence_class(*op) =>
            {
                self.bare_binary(a, scope)
            }
            _ => self.expr(a, scope),
        };
        let right = self.expr(b, scope);
        format!("{left} {} {right}", op.symbol())
    }

    /// An integer offset or index as a `long` C expression.
    fn offset_text(&mut self, e: &Expr, scope: Scope<'_>) -> String {
        match boundary::constant(self.program, e) {
            Some(v) => v.to_string(),
            None => format!("(long){}", self.expr(e, scope)),
        }
    }

    /// `field[index]` for a grid reference, in the current access mode.
    fn load(&mut self, r: &GridRef, scope: Scope<'_>) -> String {
        let program = self.program;
        let field = &program.fields[r.field.0];
        if let Some(view) = self.march.filter(|v| v.field == r.field) {
            return self.march_load(r, view, scope);
        }
        let level = self.names.level(r.field, r.time);
        if scope.access == Access::Interior || field.boundary == BoundaryMode::None {
            return format!("{level}[{}]", self.point_index(r, scope));
        }
        // Border: per axis the coordinate of the element read, then resolved.
        let grid = field.grid;
        let offsets: Vec<String> = r
            .offset
            .iter()
            .map(|o| self.offset_text(o, scope))
            .collect();
        let coords: Vec<String> = offsets
            .iter()
            .enumerate()
            .map(|(axis, o)| shifted(&self.names.axis_var(axis), o))
            .collect();
        let sizes: Vec<String> = (0..coords.len()).map(|a| self.read_size(grid, a)).collect();
        // An axis read at offset zero is inside the grid when the grid holds
        // the point; another grid may be smaller.
        let held = program.holds_point(self.point_grid, grid);
        match Helper::for_mode(field.boundary) {
            Some(helper) => {
                self.helpers.insert(helper);
                let resolved: Vec<String> = coords
                    .iter()
                    .zip(&sizes)
                    .zip(&offsets)
                    .map(|((c, n), o)| {
                        if held && o == "0" {
                            c.clone()
                        } else {
                            format!("{}({c}, {n})", helper.name())
                        }
                    })
                    .collect();
                format!("{level}[{}]", self.linear_index(grid, &resolved))
            }
            None => {
                // Zero: test every axis, read only when inside.
                self.helpers.insert(Helper::Inside);
                let test: Vec<String> = coords
                    .iter()
                    .zip(&sizes)
                    .zip(&offsets)
                    .filter(|(_, o)| !held || *o != "0")
                    .map(|((c, n), _)| format!("sdsl_inside({c}, {n})"))
                    .collect();
                if test.is_empty() {
                    return format!("{level}[{}]", self.linear_index(grid, &coords));
                }
                format!(
                    "({} ? {level}[{}] : {})",
                    test.join(" && "),
                    self.linear_index(grid, &coords),
                    names::zero(field.ty)
                )
            }
        }
    }

    /// `c0 * g_s0 + c1 * g_s1 + c2` for per-axis coordinates.
    fn linear_index(&self, grid: crate::ir::GridId, coords: &[String]) -> String {
        let last = coords.len() - 1;
        // In a time tile's window, coordinates count from its origin.
        let coords: Vec<String> = if self.window {
            coords
                .iter()
                .enumerate()
                .map(|(axis, c)| format!("{c} - {}", self.window_origin(axis)))
                .collect()
        } else {
            coords.to_vec()
        };
        coords
            .iter()
            .enumerate()
            .map(|(axis, c)| {
                if axis == last {
                    c.clone()
                } else {
                    let call = c.starts_with("sdsl_") && c.ends_with(')');
                    let c = if c.contains(' ') && !call {
                        format!("({c})")
                    } else {
                        c.clone()
                    };
                    format!("{c} * {}", self.names.grid_stride(grid, axis))
                }
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// A read of a march's field: the plane along axis 0
    /// (`a_t0_z[1]` for offset 0 with reach 1 below), then the index in the
    /// plane relative to the point (`src_q - src_s1 + 1`).
    fn march_load(&mut self, r: &GridRef, view: MarchView, scope: Scope<'_>) -> String {
        self.march_points.0 = true;
        let program = self.program;
        let planes = self.names.level_temp(
            "z",
            view.field,
            view.read,
            program.fields[view.field.0].time_lo,
        );
        let plane = match boundary::constant(program, &r.offset[0]) {
            Some(v) => (v + view.below as i64).to_string(),
            None => format!("{} + {}", self.offset_text(&r.offset[0], scope), view.below),
        };
        let mut text = self.names.temp("src_q");
        let last = r.offset.len() - 1;
        for (axis, o) in r.offset.iter().enumerate().skip(1) {
            let stride = (axis != last).then(|| self.names.axis_temp("src_s", axis));
            match (boundary::constant(program, o), stride) {
                (Some(0), _) => {}
                (Some(v), stride) => text.push_str(&signed(v, stride.as_deref())),
                (None, None) => text.push_str(&format!(" + {}", self.offset_text(o, scope))),
                (None, Some(s)) => {
                    text.push_str(&format!(" + {} * {s}", self.offset_text(o, scope)))
                }
            }
        }
        format!("{planes}[{plane}][{text}]")
    }

    /// The index of a grid reference relative to the point: `g_p - g_s0 + 1`.
    pub(super) fn point_index(&mut self, r: &GridRef, scope: Scope<'_>) -> String {
        let program = self.program;
        let grid = program.fields[r.field.0].grid;
        let mut text = self.read_point(grid);
        let last = r.offset.len() - 1;
        for (axis, o) in r.offset.iter().enumerate() {
            let stride = (axis != last).then(|| self.names.grid_stride(grid, axis));
            match (boundary::constant(program, o), stride) {
                (Some(0), _) => {}
                (Some(v), None) => text.push_str(&signed(v, None)),
                (Some(v), Some(s)) => text.push_str(&signed(v, Some(&s))),
                (None, stride) => {
                    let o = self.offset_text(o, scope);
                    match stride {
                        None => text.push_str(&format!(" + {o}")),
                        Some(s) => text.push_str(&format!(" + {o} * {s}")),
                    }
                }
            }
        }
        text
    }

    /// Prints statements of a part body at the current indentation.
    /// The right-hand side of an assignment: without the outer parentheses of a
    /// binary operation (`x = a + b;`), which `=` does not need.
    pub(super) fn statement_value(&mut self, value: &Expr, scope: Scope<'_>) -> String {
        self.bare_binary(value, scope)
    }

    pub(super) fn stmts(&mut self, body: &[Stmt], scope: Scope<'_>) {
        for stmt in body {
            match stmt {
                Stmt::Assign { local, value, .. } => {
                    let value = self.statement_value(value, scope);
                    self.line(&format!("{} = {value};", scope.locals[local.0]));
                }
                Stmt::Store { target, value, .. } => {
                    let value = self.statement_value(value, scope);
                    let level = self.names.level(target.field, target.time);
                    let index = match self.march.filter(|v| v.field == target.field) {
                        // A march writes its field only at the point (`march_shape`).
                        Some(_) => {
                            self.march_points.1 = true;
                            self.names.temp("dst_q")
                        }
                        None => self.point_index(target, scope),
                    };
                    self.line(&format!("{level}[{index}] = {value};"));
                }
                Stmt::For {
                    var, lo, hi, body, ..
                } => {
                    let trips = hi - lo + 1;
                    if trips <= 0 {
                        continue;
                    }
                    // Small constant loops are unrolled by the C compiler, so that
                    // table reads fold to constants and the point loop vectorises.
                    if trips <= 16 {
                        self.line(&format!("#pragma GCC unroll {trips}"));
                    }
                    let v = &scope.locals[var.0];
                    self.open(&format!("for (int {v} = {lo}; {v} <= {hi}; {v}++) {{"));
                    self.stmts(body, scope);
                    self.close("}");
                }
            }
        }
    }
}

/// `base + off` with the sign folded (`i0 - 1`, `i0`, `i0 + (long)k`).
fn shifted(base: &str, off: &str) -> String {
    match off.parse::<i64>() {
        Ok(0) => base.to_string(),
        Ok(i64::MIN) => format!("{base} + (-9223372036854775807L - 1L)"),
        Ok(v) if v < 0 => format!("{base} - {}", -v),
        Ok(v) => format!("{base} + {v}"),
        Err(_) => format!("{base} + {off}"),
    }
}

/// ` + 2 * g_s0`, ` - g_s0`, ` + 1`.
fn signed(v: i64, stride: Option<&str>) -> String {
    if v == i64::MIN {
        let min = "(-9223372036854775807L - 1L)";
        return match stride {
            None => format!(" + {min}"),
            Some(s) => format!(" + {min} * {s}"),
        };
    }
    let sign = if v < 0 { '-' } else { '+' };
    let magnitude = v.unsigned_abs();
    match (magnitude, stride) {
        (m, None) => format!(" {sign} {m}"),
        (1, Some(s)) => format!(" {sign} {s}"),
        (m, Some(s)) => format!(" {sign} {m} * {s}"),
    }
}

/// Operators of one C precedence level that associate to the left.
fn precedence_class(op: BinaryOp) -> Option<u8> {
    match op {
        BinaryOp::Add | BinaryOp::Sub => Some(0),
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => Some(1),
        _ => None,
    }
}
