//! Compiling a part into straight-line, typed vector operations.
//!
//! Parameter values are known when a run starts, and a part's control flow
//! does not depend on data (its only loops have constant bounds), so the
//! compiler unrolls the loops and folds everything uniform: parameters,
//! constants, loop variables, table entries, offsets, and locals while they hold
//! such values. What is left reads grid data; it becomes a list of [`Op`]s, each
//! applied to a whole row chunk of points at once by the `vm` module. Operands
//! are vector registers of one element type, or immediates.

use crate::data::ExecError;
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::env::{table_offset, RunEnv};
use crate::ir::semantics::{binary_value, call_value, unary_value};
use crate::ir::{
    BinaryOp, Expr, ExprKind, GridRef, MathFn, Program, ScalarType, Stmt, UnaryOp, Value,
};
use crate::source::Span;

/// The most operations one part may unroll to (its loops' trip counts times
/// their bodies); beyond this the interpreter refuses the program.
const MAX_OPS: usize = 1 << 20;

/// An operand: a vector register of the operation's type, or a value
/// broadcast to every point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Operand {
    /// Register number within the register file of the operand's type.
    Reg(u32),
    /// The same value at every point.
    Imm(Value),
}

/// A grid element relative to the current point, with everything folded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Access {
    /// Field index.
    pub field: usize,
    /// Level index (`time - time_lo`).
    pub level: usize,
    /// Offset per axis, outermost first.
    pub offset: Vec<i64>,
}

/// One vector operation. `ty` is the element type of the operands (and of the
/// result, except where noted); `dst` is always a register distinct from the
/// operands' registers.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
    /// `dst = field element at access` (boundary mode applied).
    Load {
        ty: ScalarType,
        dst: u32,
        access: Access,
    },
    /// `field element at access = src` (always inside the grid).
    Store {
        ty: ScalarType,
        src: Operand,
        access: Access,
    },
    /// `dst = -a`.
    Neg {
        ty: ScalarType,
        dst: u32,
        a: Operand,
    },
    /// `dst (int) = (a != 0) ^ negate`.
    Truth {
        ty: ScalarType,
        dst: u32,
        a: Operand,
        negate: bool,
    },
    /// `dst = a op b` for `+ - * / %`.
    Arith {
        ty: ScalarType,
        op: BinaryOp,
        dst: u32,
        a: Operand,
        b: Operand,
    },
    /// `dst (int) = a op b` for comparisons.
    Compare {
        ty: ScalarType,
        op: BinaryOp,
        dst: u32,
        a: Operand,
        b: Operand,
    },
    /// `dst (int) = a && b` (or `||`) on `int` truth values 0/1.
    Logic {
        and: bool,
        dst: u32,
        a: Operand,
        b: Operand,
    },
    /// `dst = cond (int) ? then : otherwise`.
    Select {
        ty: ScalarType,
        dst: u32,
        cond: Operand,
        then: Operand,
        otherwise: Operand,
    },
    /// `dst (to) = (to) a (from)`.
    Cast {
        from: ScalarType,
        to: ScalarType,
        dst: u32,
        a: u32,
    },
    /// `dst = func(a)` (`ty` is `float` or `double`).
    Call1 {
        ty: ScalarType,
        func: MathFn,
        dst: u32,
        a: Operand,
    },
    /// `dst = func(a, b)` (`ty` is `float` or `double`).
    Call2 {
        ty: ScalarType,
        func: MathFn,
        dst: u32,
        a: Operand,
        b: Operand,
    },
    /// `dst = src`.
    Copy {
        ty: ScalarType,
        dst: u32,
        src: Operand,
    },
}

/// A compiled part: its operations, the registers they need per type, and for
/// a reduction part the value at each point.
#[derive(Clone, Debug)]
pub(crate) struct Kernel {
    /// Operations, in order.
    pub ops: Vec<Op>,
    /// Number of registers per type, indexed like [`type_index`].
    pub regs: [u32; 4],
    /// The value at each point (reduction parts), of the reduction's type.
    pub result: Option<Operand>,
}

/// Position of a type in per-type tables.
pub(crate) fn type_index(ty: ScalarType) -> usize {
    match ty {
        ScalarType::Int => 0,
        ScalarType::Long => 1,
        ScalarType::Float => 2,
        ScalarType::Double => 3,
    }
}

/// A compiled sub-expression.
#[derive(Clone, Copy, Debug)]
struct Val {
    ty: ScalarType,
    operand: Operand,
    /// Whether the register is a temporary this value owns (freed once used).
    temp: bool,
}

impl Val {
    fn imm(v: Value) -> Val {
        Val {
            ty: v.ty(),
            operand: Operand::Imm(v),
            temp: false,
        }
    }
}

/// What the compiler knows about a local at the current point of the
/// (unrolled) program.
#[derive(Clone, Copy, Debug)]
enum LocalState {
    /// The same value at every point.
    Known(Value),
    /// Lives in this register (owned by the local).
    Reg(u32),
}

struct Compiler<'a> {
    program: &'a Program,
    env: &'a RunEnv,
    ops: Vec<Op>,
    free: [Vec<u32>; 4],
    count: [u32; 4],
    locals: Vec<LocalState>,
    local_types: Vec<ScalarType>,
    span: Span,
}

impl<'a> Compiler<'a> {
    fn new(program: &'a Program, env: &'a RunEnv, local_types: &[ScalarType], span: Span) -> Self {
        Compiler {
            program,
            env,
            ops: Vec::new(),
            free: Default::default(),
            count: [0; 4],
            locals: local_types
                .iter()
                .map(|&ty| LocalState::Known(Value::Int(0).cast(ty)))
                .collect(),
            local_types: local_types.to_vec(),
            span,
        }
    }

    fn error(&self, span: Span, message: String, help: &str) -> ExecError {
        let span = if span.start < span.end {
            span
        } else {
            self.span
        };
        ExecError::Located(Diagnostics::new(
            self.program.source.clone(),
            vec![Diagnostic::error(message, span)
                .with_label("the interpreter cannot run this")
                .with_help(help)],
        ))
    }

    fn alloc(&mut self, ty: ScalarType) -> u32 {
        let t = type_index(ty);
        self.free[t].pop().unwrap_or_else(|| {
            self.count[t] += 1;
            self.count[t] - 1
        })
    }

    fn release(&mut self, v: Val) {
        if let (true, Operand::Reg(r)) = (v.temp, v.operand) {
            self.free[type_index(v.ty)].push(r);
        }
    }

    fn emit(&mut self, op: Op) -> Result<(), ExecError> {
        if self.ops.len() >= MAX_OPS {
            return Err(self.error(
                self.span,
                format!("this part unrolls to more than {MAX_OPS} operations per point"),
                "shorten the loops of its point function",
            ));
        }
        self.ops.push(op);
        Ok(())
    }

    /// A new temporary holding the result of `make(dst)`.
    fn op(&mut self, ty: ScalarType, make: impl FnOnce(u32) -> Op) -> Result<Val, ExecError> {
        let dst = self.alloc(ty);
        self.emit(make(dst))?;
        Ok(Val {
            ty,
            operand: Operand::Reg(dst),
            temp: true,
        })
    }

    /// `v` converted to `ty` (folded for immediates).
    fn coerce(&mut self, v: Val, ty: ScalarType) -> Result<Val, ExecError> {
        match v.operand {
            _ if v.ty == ty => Ok(v),
            Operand::Imm(x) => Ok(Val::imm(x.cast(ty))),
            Operand::Reg(a) => {
                let out = self.op(ty, |dst| Op::Cast {
                    from: v.ty,
                    to: ty,
                    dst,
                    a,
                })?;
                self.release(v);
                Ok(out)
            }
        }
    }

    /// `v` as an `int` truth value 0/1.
    fn truth(&mut self, v: Val, negate: bool) -> Result<Val, ExecError> {
        match v.operand {
            Operand::Imm(x) => Ok(Val::imm(Value::Int((x.is_true() ^ negate) as i32))),
            Operand::Reg(_) => {
                let out = self.op(ScalarType::Int, |dst| Op::Truth {
                    ty: v.ty,
                    dst,
                    a: v.operand,
                    negate,
                })?;
                self.release(v);
                Ok(out)
            }
        }
    }

    fn uniform_int(&mut self, e: &Expr, what: &str) -> Result<i64, ExecError> {
        let v = self.expr(e)?;
        match v.operand {
            Operand::Imm(x) => Ok(x.as_i64()),
            Operand::Reg(_) => Err(self.error(
                e.span,
                format!("this {what} depends on grid data"),
                "compute offsets and table indices from constants, parameters and loop variables only",
            )),
        }
    }

    fn access(&mut self, target: &GridRef) -> Result<Access, ExecError> {
        let field = &self.program.fields[target.field.0];
        let mut offset = Vec::with_capacity(target.offset.len());
        for o in &target.offset {
            offset.push(self.uniform_int(o, "offset")?);
        }
        Ok(Access {
            field: target.field.0,
            level: field.level_of(target.time),
            offset,
        })
    }

    fn expr(&mut self, e: &Expr) -> Result<Val, ExecError> {
        let v = match &e.kind {
            ExprKind::Literal(v) => Val::imm(*v),
            ExprKind::Param(_) | ExprKind::Const(_) => Val::imm(self.env.eval_uniform(e)),
            ExprKind::Local(l) => match self.locals.get(l.0) {
                Some(LocalState::Known(v)) => Val::imm(*v),
                Some(LocalState::Reg(r)) => Val {
                    ty: self.local_types[l.0],
                    operand: Operand::Reg(*r),
                    temp: false,
                },
                None => Val::imm(Value::Int(0).cast(e.ty)),
            },
            ExprKind::Reduction(_) => {
                return Err(self.error(
                    e.span,
                    "a reduction's value is only available in the check".into(),
                    "use reductions in the `check` condition only",
                ))
            }
            ExprKind::Load(target) => {
                let access = self.access(target)?;
                let ty = self.program.fields[target.field.0].ty;
                self.op(ty, |dst| Op::Load { ty, dst, access })?
            }
            ExprKind::Table { table, index } => {
                let mut idx = Vec::with_capacity(index.len());
                for i in index {
                    idx.push(self.uniform_int(i, "table index")?);
                }
                let t = &self.program.tables[table.0];
                match table_offset(t, &idx) {
                    Some(k) => Val::imm(t.values[k]),
                    None => {
                        return Err(self.error(
                            e.span,
                            format!("this reads table `{}` outside its bounds", t.name),
                            "keep table indices between 0 and the table's size minus 1",
                        ))
                    }
                }
            }
            ExprKind::Unary(op, a) => {
                let a = self.expr(a)?;
                match (op, a.operand) {
                    (_, Operand::Imm(x)) => Val::imm(unary_value(*op, x)),
                    (UnaryOp::Not, _) => self.truth(a, true)?,
                    (UnaryOp::Neg, _) => {
                        let out = self.op(a.ty, |dst| Op::Neg {
                            ty: a.ty,
                            dst,
                            a: a.operand,
                        })?;
                        self.release(a);
                        out
                    }
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b)?,
            ExprKind::Select {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond)?;
                let c = self.truth(c, false)?;
                match c.operand {
                    Operand::Imm(x) if x.is_true() => self.expr(then)?,
                    Operand::Imm(_) => self.expr(otherwise)?,
                    Operand::Reg(_) => {
                        let t = self.expr(then)?;
                        let t = self.coerce(t, e.ty)?;
                        let o = self.expr(otherwise)?;
                        let o = self.coerce(o, e.ty)?;
                        let out = self.op(e.ty, |dst| Op::Select {
                            ty: e.ty,
                            dst,
                            cond: c.operand,
                            then: t.operand,
                            otherwise: o.operand,
                        })?;
                        self.release(c);
                        self.release(t);
                        self.release(o);
                        out
                    }
                }
            }
            ExprKind::Call {
                func,
                float_form,
                args,
            } => {
                let ty = if *float_form {
                    ScalarType::Float
                } else {
                    ScalarType::Double
                };
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    let v = self.expr(a)?;
                    vals.push(self.coerce(v, ty)?);
                }
                if vals.len() != func.arity() {
                    return Err(self.error(
                        e.span,
                        format!("`{}` takes {} argument(s)", func.name(), func.arity()),
                        "call math functions with their C number of arguments",
                    ));
                }
                let imms: Option<Vec<Value>> = vals
                    .iter()
                    .map(|v| match v.operand {
                        Operand::Imm(x) => Some(x),
                        Operand::Reg(_) => None,
                    })
                    .collect();
                if let Some(imms) = imms {
                    Val::imm(call_value(*func, *float_form, &imms))
                } else {
                    let func = *func;
                    let out = match vals[..] {
                        [a] => self.op(ty, |dst| Op::Call1 {
                            ty,
                            func,
                            dst,
                            a: a.operand,
                        })?,
                        [a, b] => self.op(ty, |dst| Op::Call2 {
                            ty,
                            func,
                            dst,
                            a: a.operand,
                            b: b.operand,
                        })?,
                        _ => unreachable!("arity checked above"),
                    };
                    vals.into_iter().for_each(|v| self.release(v));
                    out
                }
            }
            ExprKind::Cast(a) => {
                let a = self.expr(a)?;
                self.coerce(a, e.ty)?
            }
        };
        self.coerce(v, e.ty)
    }

    fn binary(&mut self, op: BinaryOp, a: &Expr, b: &Expr) -> Result<Val, ExecError> {
        let a = self.expr(a)?;
        let b = self.expr(b)?;
        if let (Operand::Imm(x), Operand::Imm(y)) = (a.operand, b.operand) {
            return Ok(Val::imm(binary_value(op, x, y)));
        }
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let and = op == BinaryOp::And;
                let a = self.truth(a, false)?;
                let b = self.truth(b, false)?;
                // A known operand decides or drops out.
                for (known, other) in [(a, b), (b, a)] {
                    if let Operand::Imm(x) = known.operand {
                        return Ok(if x.is_true() == and {
                            other
                        } else {
                            self.release(other);
                            Val::imm(Value::Int(!and as i32))
                        });
                    }
                }
                let out = self.op(ScalarType::Int, |dst| Op::Logic {
                    and,
                    dst,
                    a: a.operand,
                    b: b.operand,
                })?;
                self.release(a);
                self.release(b);
                Ok(out)
            }
            _ => {
                let ty = a.ty;
                let b = self.coerce(b, ty)?;
                let out = if op.is_boolean() {
                    self.op(ScalarType::Int, |dst| Op::Compare {
                        ty,
                        op,
                        dst,
                        a: a.operand,
                        b: b.operand,
                    })?
                } else {
                    self.op(ty, |dst| Op::Arith {
                        ty,
                        op,
                        dst,
                        a: a.operand,
                        b: b.operand,
                    })?
                };
                self.release(a);
                self.release(b);
                Ok(out)
            }
        }
    }

    fn stmts(&mut self, body: &[Stmt]) -> Result<(), ExecError> {
        for stmt in body {
            match stmt {
                Stmt::Assign { local, value, .. } => {
                    let ty = self.local_types[local.0];
                    let v = self.expr(value)?;
                    let v = self.coerce(v, ty)?;
                    let old = self.locals[local.0];
                    let new = match v.operand {
                        Operand::Imm(x) => LocalState::Known(x),
                        // A temporary becomes the local's register: no copy.
                        Operand::Reg(r) if v.temp => LocalState::Reg(r),
                        // `x = x`.
                        Operand::Reg(r) if matches!(old, LocalState::Reg(o) if o == r) => old,
                        // Another local's register: copy, so that each local
                        // owns its register.
                        Operand::Reg(_) => {
                            let dst = self.alloc(ty);
                            self.emit(Op::Copy {
                                ty,
                                dst,
                                src: v.operand,
                            })?;
                            LocalState::Reg(dst)
                        }
                    };
                    if let LocalState::Reg(o) = old {
                        if !matches!(new, LocalState::Reg(n) if n == o) {
                            self.free[type_index(ty)].push(o);
                        }
                    }
                    self.locals[local.0] = new;
                }
                Stmt::Store { target, value, .. } => {
                    let ty = self.program.fields[target.field.0].ty;
                    let v = self.expr(value)?;
                    let v = self.coerce(v, ty)?;
                    let access = self.access(target)?;
                    self.emit(Op::Store {
                        ty,
                        src: v.operand,
                        access,
                    })?;
                    self.release(v);
                }
                Stmt::For {
                    var, lo, hi, body, ..
                } => {
                    if hi.saturating_sub(*lo) >= MAX_OPS as i64 {
                        return Err(self.error(
                            stmt_span(stmt),
                            format!("this loop runs {} times per point", hi - lo + 1),
                            "shorten the loop; the interpreter unrolls loops in point functions",
                        ));
                    }
                    for i in *lo..=*hi {
                        let ty = self.local_types[var.0];
                        if let LocalState::Reg(o) = self.locals[var.0] {
                            self.free[type_index(ty)].push(o);
                        }
                        self.locals[var.0] = LocalState::Known(Value::Long(i).cast(ty));
                        self.stmts(body)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(self, result: Option<Operand>) -> Kernel {
        Kernel {
            ops: self.ops,
            regs: self.count,
            result,
        }
    }
}

fn stmt_span(stmt: &Stmt) -> Span {
    match stmt {
        Stmt::Assign { span, .. } | Stmt::Store { span, .. } | Stmt::For { span, .. } => *span,
    }
}

/// Compiles part `part` of stencil `stencil`.
pub(crate) fn stencil_part(
    program: &Program,
    env: &RunEnv,
    stencil: usize,
    part: usize,
) -> Result<Kernel, ExecError> {
    let iterate = program
        .iterate
        .as_ref()
        .expect("called for a program with an iterate");
    let part = &iterate.stencils[stencil].parts[part];
    let types: Vec<ScalarType> = part.locals.iter().map(|l| l.ty).collect();
    let mut c = Compiler::new(program, env, &types, part.span);
    c.stmts(&part.body)?;
    Ok(c.finish(None))
}

/// Compiles part `part` of reduction `reduction`.
pub(crate) fn reduction_part(
    program: &Program,
    env: &RunEnv,
    reduction: usize,
    part: usize,
) -> Result<Kernel, ExecError> {
    let iterate = program
        .iterate
        .as_ref()
        .expect("called for a program with an iterate");
    let reduction = &iterate.reductions[reduction];
    let part = &reduction.parts[part];
    let mut c = Compiler::new(program, env, &[], part.span);
    let v = c.expr(&part.value)?;
    let v = c.coerce(v, reduction.ty)?;
    Ok(c.finish(Some(v.operand)))
}
