//! The host plan: what the host does around the kernels (launches with their
//! arguments, reductions, the check), shared by every GPU back-end.

use crate::exec::env::RunEnv;
use crate::exec::ExecError;
use crate::ir::{
    BinaryOp, ConstId, ExprKind, FieldId, MathFn, ParamId, ReduceOp, ReductionId, ScalarType,
    Subset, UnaryOp, Value,
};

/// Where the host takes one kernel argument from.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSource {
    /// The device buffer currently holding a field's time level.
    Level(FieldId, i32),
    /// A parameter's value.
    Param(ParamId),
    /// A constant's value.
    Const(ConstId),
    /// The size of a grid along an axis (outermost first), as an `int`.
    GridSize(crate::ir::GridId, usize),
    /// The launch subset's first index along an axis (outermost first).
    Lo(usize),
    /// The launch subset's last index along an axis (outermost first).
    Hi(usize),
    /// The per-block partial results of a reduction.
    Partials(ReductionId),
    /// Where this launch's blocks start writing in the partials buffer.
    PartialOffset,
    /// How many partials the final pass combines.
    PartialCount,
    /// The one-element buffer receiving a reduction's value.
    Result(ReductionId),
}

/// One kernel launch over a box of points.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Index into the module's kernels.
    pub kernel: usize,
    /// The points; `None` for a single-block launch (final reduction pass).
    pub subset: Option<Subset>,
    /// Threads per block (x, y, z).
    pub block: [u32; 3],
    /// Points each block covers along x, y, z (block times points per thread).
    pub points_per_block: [u32; 3],
    /// The arguments, in the kernel's parameter order.
    pub args: Vec<ArgSource>,
}

/// How one reduction runs: a kernel per part writing per-block partials, then a
/// single-block pass combining them into the result.
#[derive(Clone, Debug)]
pub struct ReductionPlan {
    /// Name (for the summary).
    pub name: String,
    /// Combining operator.
    pub op: ReduceOp,
    /// Result type.
    pub ty: ScalarType,
    /// One launch per part.
    pub parts: Vec<Launch>,
    /// The final pass.
    pub finish: Launch,
}

/// Everything the host runs, in order, every iteration.
#[derive(Clone, Debug, Default)]
pub struct HostPlan {
    /// Per stencil, its launches (one per part) in order.
    pub stencils: Vec<Vec<Launch>>,
    /// Reductions, in order.
    pub reductions: Vec<ReductionPlan>,
}

/// The evaluated box of a launch: per axis (outermost first) `lo..=hi`.
pub fn eval_subset(subset: &Subset, env: &RunEnv) -> Result<Vec<(i64, i64)>, ExecError> {
    subset
        .ranges
        .iter()
        .map(|(lo, hi)| {
            Ok((
                eval_uniform(lo, env, &[])?.as_i64(),
                eval_uniform(hi, env, &[])?.as_i64(),
            ))
        })
        .collect()
}

/// Blocks per axis (x, y, z) for a launch over `bounds`; `None` when it is empty.
pub fn groups_for(bounds: &[(i64, i64)], points_per_block: [u32; 3]) -> Option<[u32; 3]> {
    let rank = bounds.len();
    let mut groups = [1u32; 3];
    for (axis, (lo, hi)) in bounds.iter().enumerate() {
        if hi < lo {
            return None;
        }
        let d = rank - 1 - axis;
        let extent = (hi - lo + 1) as u64;
        groups[d] = extent.div_ceil(points_per_block[d] as u64) as u32;
    }
    Some(groups)
}

fn failed(msg: String) -> ExecError {
    ExecError::Failed(msg)
}

/// Evaluates an expression of literals, parameters, constants and reduction
/// values (the check, subset bounds) with C semantics.
pub fn eval_uniform(
    e: &crate::ir::Expr,
    env: &RunEnv,
    reductions: &[Option<Value>],
) -> Result<Value, ExecError> {
    Ok(match &e.kind {
        ExprKind::Literal(v) => *v,
        ExprKind::Param(p) => env.params[p.0],
        ExprKind::Const(c) => env.constants[c.0],
        ExprKind::Reduction(r) => {
            reductions.get(r.0).copied().flatten().ok_or_else(|| {
                failed("the check reads a reduction before it was evaluated".into())
            })?
        }
        ExprKind::Cast(a) => eval_uniform(a, env, reductions)?.cast(e.ty),
        ExprKind::Unary(op, a) => {
            let v = eval_uniform(a, env, reductions)?;
            match op {
                UnaryOp::Not => Value::Int(!v.is_true() as i32),
                UnaryOp::Neg => match v {
                    Value::Int(x) => Value::Int(x.wrapping_neg()),
                    Value::Long(x) => Value::Long(x.wrapping_neg()),
                    Value::Float(x) => Value::Float(-x),
                    Value::Double(x) => Value::Double(-x),
                },
            }
        }
        ExprKind::Binary(op, a, b) => {
            let x = eval_uniform(a, env, reductions)?;
            match op {
                BinaryOp::And => {
                    return Ok(Value::Int(
                        (x.is_true() && eval_uniform(b, env, reductions)?.is_true()) as i32,
                    ))
                }
                BinaryOp::Or => {
                    return Ok(Value::Int(
                        (x.is_true() || eval_uniform(b, env, reductions)?.is_true()) as i32,
                    ))
                }
                _ => {}
            }
            let y = eval_uniform(b, env, reductions)?;
            binary(*op, x, y)?
        }
        ExprKind::Select {
            cond,
            then,
            otherwise,
        } => {
            if eval_uniform(cond, env, reductions)?.is_true() {
                eval_uniform(then, env, reductions)?
            } else {
                eval_uniform(otherwise, env, reductions)?
            }
        }
        ExprKind::Call {
            func,
            float_form,
            args,
        } => {
            let vals: Vec<f64> = args
                .iter()
                .map(|a| eval_uniform(a, env, reductions).map(Value::as_f64))
                .collect::<Result<_, _>>()?;
            let r = math(*func, &vals);
            if *float_form {
                Value::Float(math_f32(*func, &vals))
            } else {
                Value::Double(r)
            }
        }
        ExprKind::Local(_) | ExprKind::Load(_) | ExprKind::Table { .. } => {
            return Err(failed(
                "internal: a uniform expression reads point data".into(),
            ))
        }
    })
}

fn math(func: MathFn, a: &[f64]) -> f64 {
    match func {
        MathFn::Sqrt => a[0].sqrt(),
        MathFn::Fabs => a[0].abs(),
        MathFn::Exp => a[0].exp(),
        MathFn::Log => a[0].ln(),
        MathFn::Pow => a[0].powf(a[1]),
        MathFn::Sin => a[0].sin(),
        MathFn::Cos => a[0].cos(),
        MathFn::Tan => a[0].tan(),
        MathFn::Fmin => a[0].min(a[1]),
        MathFn::Fmax => a[0].max(a[1]),
        MathFn::Floor => a[0].floor(),
        MathFn::Ceil => a[0].ceil(),
    }
}

fn math_f32(func: MathFn, a: &[f64]) -> f32 {
    let x = a[0] as f32;
    let y = a.get(1).map(|v| *v as f32).unwrap_or(0.0);
    match func {
        MathFn::Sqrt => x.sqrt(),
        MathFn::Fabs => x.abs(),
        MathFn::Exp => x.exp(),
        MathFn::Log => x.ln(),
        MathFn::Pow => x.powf(y),
        MathFn::Sin => x.sin(),
        MathFn::Cos => x.cos(),
        MathFn::Tan => x.tan(),
        MathFn::Fmin => x.min(y),
        MathFn::Fmax => x.max(y),
        MathFn::Floor => x.floor(),
        MathFn::Ceil => x.ceil(),
    }
}

fn binary(op: BinaryOp, x: Value, y: Value) -> Result<Value, ExecError> {
    use BinaryOp::*;
    let cmp = |o: std::cmp::Ordering| -> bool {
        match op {
            Lt => o.is_lt(),
            Le => o.is_le(),
            Gt => o.is_gt(),
            Ge => o.is_ge(),
            Eq => o.is_eq(),
            _ => o.is_ne(),
        }
    };
    if matches!(op, Lt | Le | Gt | Ge | Eq | Ne) {
        let r = match (x, y) {
            (Value::Int(a), Value::Int(b)) => cmp(a.cmp(&b)),
            (Value::Long(a), Value::Long(b)) => cmp(a.cmp(&b)),
            _ => {
                let (a, b) = (x.as_f64(), y.as_f64());
                match a.partial_cmp(&b) {
                    Some(o) => cmp(o),
                    None => op == Ne,
                }
            }
        };
        return Ok(Value::Int(r as i32));
    }
    let div0 =
        || failed("division by zero in a uniform expression (check parameter values)".into());
    Ok(match (x, y) {
        (Value::Int(a), Value::Int(b)) => Value::Int(match op {
            Add => a.wrapping_add(b),
            Sub => a.wrapping_sub(b),
            Mul => a.wrapping_mul(b),
            Div => a.checked_div(b).ok_or_else(div0)?,
            _ => a.checked_rem(b).ok_or_else(div0)?,
        }),
        (Value::Long(a), Value::Long(b)) => Value::Long(match op {
            Add => a.wrapping_add(b),
            Sub => a.wrapping_sub(b),
            Mul => a.wrapping_mul(b),
            Div => a.checked_div(b).ok_or_else(div0)?,
            _ => a.checked_rem(b).ok_or_else(div0)?,
        }),
        (Value::Float(a), Value::Float(b)) => Value::Float(match op {
            Add => a + b,
            Sub => a - b,
            Mul => a * b,
            _ => a / b,
        }),
        (a, b) => {
            let (a, b) = (a.as_f64(), b.as_f64());
            Value::Double(match op {
                Add => a + b,
                Sub => a - b,
                Mul => a * b,
                _ => a / b,
            })
        }
    })
}
