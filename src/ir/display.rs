//! `Display` for the IR: SDSL-like text, for tests and debugging.
//!
//! A [`Program`] prints as an SDSL program with its point functions already
//! inlined: each stencil part lists its locals, then its statements. Conversions
//! the front-end made explicit print as C casts (`(double)x`), and parentheses
//! appear exactly where precedence needs them. An [`Expr`] or [`Stmt`] printed on
//! its own has no program to take names from and shows ids (`param0`, `local1`).

use std::collections::HashMap;
use std::fmt::{self, Write};

use crate::ir::{
    BinaryOp, Expr, ExprKind, GridRef, Local, LocalId, Program, Stencil, Stmt, Subset, UnaryOp,
};

/// Where names come from while printing.
struct Names<'a> {
    program: Option<&'a Program>,
    /// Printed name of each local of the current part (unique within the part).
    locals: Vec<String>,
}

impl<'a> Names<'a> {
    fn new(program: Option<&'a Program>, locals: &[Local]) -> Names<'a> {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for l in locals {
            *count.entry(l.name.as_str()).or_default() += 1;
        }
        // Inlining may bring several locals of one name into a part: number them.
        let locals = locals
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if count[l.name.as_str()] > 1 {
                    format!("{}_{i}", l.name)
                } else {
                    l.name.clone()
                }
            })
            .collect();
        Names { program, locals }
    }

    fn local(&self, id: LocalId) -> String {
        self.locals
            .get(id.0)
            .cloned()
            .unwrap_or_else(|| format!("local{}", id.0))
    }

    fn param(&self, i: usize) -> String {
        self.program
            .and_then(|p| p.params.get(i))
            .map_or_else(|| format!("param{i}"), |p| p.name.clone())
    }

    fn constant(&self, i: usize) -> String {
        self.program
            .and_then(|p| p.constants.get(i))
            .map_or_else(|| format!("const{i}"), |c| c.name.clone())
    }

    fn field(&self, i: usize) -> String {
        self.program
            .and_then(|p| p.fields.get(i))
            .map_or_else(|| format!("field{i}"), |f| f.name.clone())
    }

    fn table(&self, i: usize) -> String {
        self.program
            .and_then(|p| p.tables.get(i))
            .map_or_else(|| format!("table{i}"), |t| t.name.clone())
    }

    fn reduction(&self, i: usize) -> String {
        self.program
            .and_then(|p| p.iterate.as_ref())
            .and_then(|it| it.reductions.get(i))
            .map_or_else(|| format!("reduction{i}"), |r| r.name.clone())
    }
}

/// Binding strength: higher binds tighter.
fn precedence(expr: &Expr) -> u8 {
    match &expr.kind {
        ExprKind::Select { .. } => 1,
        ExprKind::Binary(op, _, _) => binary_precedence(*op),
        ExprKind::Unary(..) | ExprKind::Cast(_) => 8,
        ExprKind::Literal(v) if v.as_f64() < 0.0 || v.as_f64().is_sign_negative() => 8,
        _ => 9,
    }
}

fn binary_precedence(op: BinaryOp) -> u8 {
    match op {
        BinaryOp::Or => 2,
        BinaryOp::And => 3,
        BinaryOp::Eq | BinaryOp::Ne => 4,
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => 5,
        BinaryOp::Add | BinaryOp::Sub => 6,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 7,
    }
}

fn write_expr(out: &mut dyn Write, e: &Expr, names: &Names, min: u8) -> fmt::Result {
    let prec = precedence(e);
    if prec < min {
        out.write_char('(')?;
    }
    match &e.kind {
        ExprKind::Literal(v) => write!(out, "{v}")?,
        ExprKind::Param(id) => out.write_str(&names.param(id.0))?,
        ExprKind::Const(id) => out.write_str(&names.constant(id.0))?,
        ExprKind::Local(id) => out.write_str(&names.local(*id))?,
        ExprKind::Reduction(id) => out.write_str(&names.reduction(id.0))?,
        ExprKind::Load(g) => write_grid_ref(out, g, names)?,
        ExprKind::Table { table, index } => {
            out.write_str(&names.table(table.0))?;
            for i in index {
                out.write_char('[')?;
                write_expr(out, i, names, 0)?;
                out.write_char(']')?;
            }
        }
        ExprKind::Unary(op, a) => {
            out.write_str(match op {
                UnaryOp::Neg => "-",
                UnaryOp::Not => "!",
            })?;
            // `- -x` must not print as the decrement `--x`.
            if *op == UnaryOp::Neg && starts_with_minus(a) {
                out.write_char(' ')?;
            }
            write_expr(out, a, names, 8)?;
        }
        ExprKind::Cast(a) => {
            write!(out, "({})", e.ty)?;
            write_expr(out, a, names, 8)?;
        }
        ExprKind::Binary(op, a, b) => {
            let p = binary_precedence(*op);
            write_expr(out, a, names, p)?;
            write!(out, " {} ", op.symbol())?;
            write_expr(out, b, names, p + 1)?;
        }
        ExprKind::Select {
            cond,
            then,
            otherwise,
        } => {
            write_expr(out, cond, names, 2)?;
            out.write_str(" ? ")?;
            write_expr(out, then, names, 1)?;
            out.write_str(" : ")?;
            write_expr(out, otherwise, names, 1)?;
        }
        ExprKind::Call {
            func,
            float_form,
            args,
        } => {
            out.write_str(func.name())?;
            if *float_form {
                out.write_char('f')?;
            }
            out.write_char('(')?;
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                write_expr(out, a, names, 0)?;
            }
            out.write_char(')')?;
        }
    }
    if prec < min {
        out.write_char(')')?;
    }
    Ok(())
}

fn starts_with_minus(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Unary(UnaryOp::Neg, _) => true,
        ExprKind::Literal(v) => v.as_f64().is_sign_negative(),
        _ => false,
    }
}

fn write_grid_ref(out: &mut dyn Write, g: &GridRef, names: &Names) -> fmt::Result {
    write!(out, "[{}]{}", g.time, names.field(g.field.0))?;
    for o in &g.offset {
        out.write_char('[')?;
        write_expr(out, o, names, 0)?;
        out.write_char(']')?;
    }
    Ok(())
}

fn write_stmt(out: &mut dyn Write, s: &Stmt, names: &Names, indent: usize) -> fmt::Result {
    let pad = "    ".repeat(indent);
    match s {
        Stmt::Assign { local, value, .. } => {
            write!(out, "{pad}{} = ", names.local(*local))?;
            write_expr(out, value, names, 0)?;
            writeln!(out, ";")
        }
        Stmt::Store { target, value, .. } => {
            out.write_str(&pad)?;
            write_grid_ref(out, target, names)?;
            out.write_str(" = ")?;
            write_expr(out, value, names, 0)?;
            writeln!(out, ";")
        }
        Stmt::For {
            var, lo, hi, body, ..
        } => {
            writeln!(out, "{pad}for {} in {lo}..{hi} {{", names.local(*var))?;
            for s in body {
                write_stmt(out, s, names, indent + 1)?;
            }
            writeln!(out, "{pad}}}")
        }
    }
}

fn write_subset(out: &mut dyn Write, subset: &Subset, names: &Names) -> fmt::Result {
    for (lo, hi) in &subset.ranges {
        out.write_char('[')?;
        write_expr(out, lo, names, 0)?;
        if lo != hi {
            out.write_char(':')?;
            write_expr(out, hi, names, 0)?;
        }
        out.write_char(']')?;
    }
    Ok(())
}

fn write_stencil(out: &mut dyn Write, stencil: &Stencil, program: &Program) -> fmt::Result {
    writeln!(out, "    stencil {} {{", stencil.name)?;
    for part in &stencil.parts {
        let names = Names::new(Some(program), &part.locals);
        out.write_str("        ")?;
        write_subset(out, &part.subset, &names)?;
        writeln!(out, " : {{")?;
        for (i, local) in part.locals.iter().enumerate() {
            writeln!(out, "            {} {};", local.ty, names.local(LocalId(i)))?;
        }
        for s in &part.body {
            write_stmt(out, s, &names, 3)?;
        }
        writeln!(out, "        }}")?;
    }
    writeln!(out, "    }}")
}

fn write_table_values(
    out: &mut dyn Write,
    shape: &[usize],
    values: &[crate::ir::Value],
) -> fmt::Result {
    if shape.len() <= 1 {
        out.write_char('{')?;
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.write_str(", ")?;
            }
            write!(out, "{v}")?;
        }
        return out.write_char('}');
    }
    let stride: usize = shape[1..].iter().product();
    out.write_char('{')?;
    for (i, chunk) in values.chunks(stride.max(1)).enumerate() {
        if i > 0 {
            out.write_str(", ")?;
        }
        write_table_values(out, &shape[1..], chunk)?;
    }
    out.write_char('}')
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = Names::new(Some(self), &[]);
        writeln!(f, "// program {}", self.name)?;
        for p in &self.params {
            writeln!(f, "{} {};", p.ty, p.name)?;
        }
        for c in &self.constants {
            write!(f, "{} {} = ", c.ty, c.name)?;
            write_expr(f, &c.value, &names, 0)?;
            writeln!(f, ";")?;
        }
        for g in &self.grids {
            write!(f, "grid {}", g.name)?;
            for d in &g.dims {
                f.write_char('[')?;
                write_expr(f, d, &names, 0)?;
                f.write_char(']')?;
            }
            writeln!(f, ";")?;
        }
        for field in &self.fields {
            let at: Vec<String> = (field.time_lo..=field.time_hi)
                .map(|t| t.to_string())
                .collect();
            write!(
                f,
                "{} griddata {} on {} at {}",
                field.ty,
                field.name,
                self.grids
                    .get(field.grid.0)
                    .map_or("?", |g| g.name.as_str()),
                at.join(",")
            )?;
            if field.boundary != crate::ir::BoundaryMode::None {
                write!(f, " boundary {}", field.boundary.name())?;
            }
            writeln!(f, ";")?;
        }
        for t in &self.tables {
            write!(f, "const {} {}", t.ty, t.name)?;
            for n in &t.shape {
                write!(f, "[{n}]")?;
            }
            f.write_str(" = ")?;
            write_table_values(f, &t.shape, &t.values)?;
            writeln!(f, ";")?;
        }
        let Some(it) = &self.iterate else {
            return Ok(());
        };
        f.write_str("\niterate ")?;
        write_expr(f, &it.max_iters, &names, 0)?;
        writeln!(f, " {{")?;
        for s in &it.stencils {
            write_stencil(f, s, self)?;
        }
        for r in &it.reductions {
            writeln!(
                f,
                "    reduction {} {} {{  // {}",
                r.name,
                r.op.symbol(),
                r.ty
            )?;
            for part in &r.parts {
                f.write_str("        ")?;
                write_subset(f, &part.subset, &names)?;
                f.write_str(" : ")?;
                write_expr(f, &part.value, &names, 0)?;
                writeln!(f, ";")?;
            }
            writeln!(f, "    }}")?;
        }
        f.write_char('}')?;
        if let Some(check) = &it.check {
            f.write_str(" check (")?;
            write_expr(f, &check.cond, &names, 0)?;
            f.write_str(") every ")?;
            write_expr(f, &check.every, &names, 0)?;
            f.write_str(" iterations")?;
        }
        writeln!(f)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(f, self, &Names::new(None, &[]), 0)
    }
}

impl fmt::Display for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_stmt(f, self, &Names::new(None, &[]), 0)
    }
}

impl Program {
    /// Prints `expr` with this program's names; `locals` are the enclosing
    /// stencil part's locals (empty outside a part).
    pub fn display_expr(&self, expr: &Expr, locals: &[Local]) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = write_expr(&mut out, expr, &Names::new(Some(self), locals), 0);
        out
    }
}
