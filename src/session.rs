//! Running a program on data held in memory: the library face of `stencilc run`.
//!
//! `stencilc run` reads fields from files; a library user (the Python package)
//! has them in arrays. Both go through the same steps, which live here:
//! grid sizes inferred from the shapes of the given fields
//! ([`grid_sizes_from_shapes`]), every parameter given a value
//! ([`missing_params`]), the initial state built from the inputs, every time
//! level of a field starting from its input ([`initial_state`]), and the run
//! itself ([`run`]) on the back-end asked for. Messages that name command-line
//! flags or Python keywords are the caller's; what is returned here says what is
//! wrong in terms of the program.

use crate::exec::backend::{self, Backend};

use crate::exec::options::RunOptions;
use crate::exec::{Buffer, ExecError, FieldState, RunSummary};
use crate::ir::env::{Bindings, RunEnv};
use crate::ir::{Expr, ExprKind, FieldId, ParamId, Program, ScalarType, Value};

/// A parameter value inferred from the shape of a field's data.
#[derive(Clone, Debug, PartialEq)]
pub struct Inferred {
    /// The parameter.
    pub param: ParamId,
    /// Its value.
    pub value: Value,
    /// Where the shape came from, as the caller named it (a file, a field).
    pub from: String,
}

/// Two inputs that give one grid-size parameter different values.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeConflict {
    /// What the first input gave.
    pub earlier: Inferred,
    /// What a later input gives.
    pub later: Inferred,
}

/// The parameter an expression is, seen through casts (`grid g[n]` with `long n`
/// is `(int)n` after the front-end's conversions).
fn as_param(expr: &Expr) -> Option<ParamId> {
    match &expr.kind {
        ExprKind::Param(p) => Some(*p),
        ExprKind::Cast(inner) => as_param(inner),
        _ => None,
    }
}

/// The axes of `field`'s grid whose extent is, on its own, a parameter:
/// `(axis, parameter)`, outermost axis first.
pub fn grid_size_params(program: &Program, field: FieldId) -> Vec<(usize, ParamId)> {
    let grid = &program.grids[program.fields[field.0].grid.0];
    grid.dims
        .iter()
        .enumerate()
        .filter_map(|(axis, dim)| as_param(dim).map(|p| (axis, p)))
        .collect()
}

/// Fills the parameters of `values` that are unset and are, on their own, the
/// extent of a grid axis (`grid g[height][width]`) from the shapes of the
/// inputs: `(field, shape, where the shape came from)`. Shapes of another rank
/// than their field's grid are skipped (the caller reports them when it checks
/// the data). Returns what was inferred, in parameter order.
pub fn grid_sizes_from_shapes(
    program: &Program,
    values: &mut [Option<Value>],
    inputs: &[(FieldId, &[usize], String)],
) -> Result<Vec<Inferred>, ShapeConflict> {
    let mut found: Vec<Option<Inferred>> = vec![None; program.params.len()];
    for (field, shape, from) in inputs {
        let grid = &program.grids[program.fields[field.0].grid.0];
        if shape.len() != grid.rank() {
            continue;
        }
        let axes = grid_size_params(program, *field)
            .into_iter()
            .filter(|(_, p)| values[p.0].is_none());
        for (axis, param) in axes {
            let extent = shape[axis];
            let value = match program.params[param.0].ty {
                ScalarType::Int => i32::try_from(extent).ok().map(Value::Int),
                ScalarType::Long => i64::try_from(extent).ok().map(Value::Long),
                ScalarType::Float | ScalarType::Double => None,
            };
            let Some(value) = value else { continue };
            let here = Inferred {
                param,
                value,
                from: from.clone(),
            };
            match &found[param.0] {
                Some(earlier) if earlier.value != value => {
                    return Err(ShapeConflict {
                        earlier: earlier.clone(),
                        later: here,
                    })
                }
                Some(_) => {}
                None => found[param.0] = Some(here),
            }
        }
    }
    let inferred: Vec<Inferred> = found.into_iter().flatten().collect();
    for i in &inferred {
        values[i.param.0] = Some(i.value);
    }
    Ok(inferred)
}

/// The names of the parameters without a value, in declaration order.
pub fn missing_params<'p>(program: &'p Program, values: &[Option<Value>]) -> Vec<&'p str> {
    program
        .params
        .iter()
        .zip(values)
        .filter(|(_, v)| v.is_none())
        .map(|(p, _)| p.name.as_str())
        .collect()
}

/// The bindings once every parameter has a value; `None` while some lack one
/// (see [`missing_params`]).
pub fn bindings(values: Vec<Option<Value>>) -> Option<Bindings> {
    Some(Bindings {
        params: values.into_iter().collect::<Option<Vec<Value>>>()?,
    })
}

/// Every time level of every field: a copy of its input (the newest level takes
/// the input itself), or zeros for fields without one. The inputs must have
/// their field's type and grid size (the executors check it again).
pub fn initial_state(
    program: &Program,
    env: &RunEnv,
    mut inputs: Vec<(FieldId, Buffer)>,
) -> FieldState {
    let mut fields = Vec::with_capacity(program.fields.len());
    for (index, field) in program.fields.iter().enumerate() {
        let points: usize = env.grid_dims()[field.grid.0].iter().product();
        let first = match inputs.iter().position(|(f, _)| f.0 == index) {
            Some(at) => inputs.swap_remove(at).1,
            None => Buffer::zeros(field.ty, points),
        };
        let mut levels: Vec<Buffer> = (1..field.levels()).map(|_| first.clone()).collect();
        levels.push(first);
        fields.push(levels);
    }
    FieldState { fields }
}

/// What a run returned: the back-end that ran, the final state and the summary.
#[derive(Debug)]
pub struct Outcome {
    /// The back-end that ran (`auto` resolved).
    pub backend: Backend,
    /// Every field's time levels after the run; [`FieldState::newest`] gives
    /// the values a field ends with.
    pub state: FieldState,
    /// Iterations, whether the check stopped the loop, reductions, times.
    pub summary: RunSummary,
}

/// Runs `program` bound by `env` on `state` with `backend`; `notice` receives
/// one-line notes (why `auto` skipped a back-end, clamped options). The state
/// given is consumed: on failure nothing of it is returned, so a caller's own
/// data are unchanged whatever happened.
pub fn run(
    backend: Backend,
    program: &Program,
    env: &RunEnv,
    mut state: FieldState,
    options: &RunOptions,
    notice: &mut dyn FnMut(&str),
) -> Result<Outcome, ExecError> {
    let (summary, used) = backend::run(backend, program, env, &mut state, options, notice)?;
    Ok(Outcome {
        backend: used,
        state,
        summary,
    })
}
