//! A run's inputs checked before anything computes.
//!
//! Every executor entry point calls [`check_inputs`]: the executors index
//! buffers with the environment's grid sizes without further checks (the
//! interpreter's inner loops, the generated C, the GPU kernels), so an
//! environment of another program, a state of the wrong shape or type, or an
//! access outside a grid for these parameter values must be refused here, with
//! an error, never reach the computation.

use crate::data::ReadInPlace;
use crate::data::{Buffer, ExecError, FieldState};
use crate::diag::Diagnostics;
use crate::ir::env::{BindError, Bindings, RunEnv};
use crate::ir::{FieldId, Program};

impl From<BindError> for ExecError {
    fn from(e: BindError) -> ExecError {
        match e {
            BindError::Located(d) => ExecError::Located(d),
            BindError::WrongCount(message) => ExecError::Failed(message),
        }
    }
}

/// Binds parameter values to `program` ([`RunEnv::new`]) and checks every grid
/// access of every stencil and reduction against the grids
/// ([`crate::analysis::bounds::check_run_time`]): a program that would write
/// outside a grid, or read outside the grid of a `boundary none` field, is
/// refused with a located diagnostic before any buffer is allocated.
pub fn bind(program: &Program, bindings: &Bindings) -> Result<RunEnv, ExecError> {
    let env = RunEnv::new(program, bindings)?;
    check_accesses(program, &env)?;
    Ok(env)
}

/// Every access checked against the grids for the values in `env`.
fn check_accesses(program: &Program, env: &RunEnv) -> Result<(), ExecError> {
    let errors = crate::analysis::bounds::check_run_time(program, env);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ExecError::Located(Diagnostics::new(
            program.source.clone(),
            errors,
        )))
    }
}

/// Refuses inputs an executor cannot run safely: `env` not built for `program`
/// (see [`RunEnv::belongs_to`]), an access outside a grid for these parameter
/// values, a grid of a rank other than 1 to 3, or a `state` without one buffer
/// per time level of each field, of the field's type and its grid's size.
pub fn check_inputs(program: &Program, env: &RunEnv, state: &FieldState) -> Result<(), ExecError> {
    check_inputs_in_place(program, env, state, None)
}

/// [`check_inputs`] for a run that reads some inputs in place: those fields'
/// levels in `state` are not read (their lengths are not checked), the inputs
/// in `read_in_place` are checked instead.
pub fn check_inputs_in_place(
    program: &Program,
    env: &RunEnv,
    state: &FieldState,
    read_in_place: Option<&ReadInPlace>,
) -> Result<(), ExecError> {
    if !env.belongs_to(program) {
        return Err(ExecError::Failed(format!(
            "the run environment was not built for program `{}`; build it with `RunEnv::new` (or `exec::bind`) from this program",
            program.name
        )));
    }
    check_accesses(program, env)?;
    let fail = |what: String| {
        Err(ExecError::Failed(format!(
            "{what}; build the state with `FieldState::initial` for this program and these parameter values"
        )))
    };
    if state.fields.len() != program.fields.len() {
        return fail(format!(
            "the state holds {} field(s) but program `{}` declares {}",
            state.fields.len(),
            program.name,
            program.fields.len()
        ));
    }
    for (f, (field, levels)) in program.fields.iter().zip(&state.fields).enumerate() {
        let rank = env.field_dims(program, FieldId(f)).len();
        if !(1..=3).contains(&rank) {
            return fail(format!(
                "field `{}` lives on a grid of {rank} dimensions (1 to 3 supported)",
                field.name
            ));
        }
        let len = env.field_len(program, FieldId(f));
        if levels.len() != field.levels() {
            return fail(format!(
                "field `{}` has {} time level buffer(s) instead of {}",
                field.name,
                levels.len(),
                field.levels()
            ));
        }
        let in_place = read_in_place.is_some_and(|r| r.address(FieldId(f)).is_some());
        if in_place {
            continue;
        }
        if let Some(b) = levels.iter().find(|b| b.ty() != field.ty || b.len() != len) {
            return fail(format!(
                "a buffer of field `{}` holds {} {} values instead of {len} {}",
                field.name,
                b.len(),
                b.ty(),
                field.ty
            ));
        }
    }
    if let Some(read_in_place) = read_in_place {
        let lens: Vec<usize> = (0..program.fields.len())
            .map(|f| env.field_len(program, FieldId(f)))
            .collect();
        read_in_place.check(program, &lens)?;
    }
    Ok(())
}

impl FieldState {
    /// The state a run starts from: every time level of field `f` is a copy of
    /// `inputs[f]`, or zeros when it is `None`.
    ///
    /// Errors when `inputs` does not have one entry per field, or when an input
    /// has the wrong element type or length for its field.
    pub fn initial(
        program: &Program,
        env: &RunEnv,
        inputs: Vec<Option<Buffer>>,
    ) -> Result<FieldState, ExecError> {
        if inputs.len() != program.fields.len() {
            return Err(ExecError::Failed(format!(
                "program `{}` has {} field(s) but {} input slot(s) were given; pass one (possibly empty) input per field",
                program.name,
                program.fields.len(),
                inputs.len()
            )));
        }
        let mut fields = Vec::with_capacity(inputs.len());
        for (f, (field, input)) in program.fields.iter().zip(inputs).enumerate() {
            let len = env.field_len(program, FieldId(f));
            let buffer = match input {
                None => Buffer::zeros(field.ty, len),
                Some(b) if b.ty() != field.ty => {
                    return Err(ExecError::Failed(format!(
                        "the input for field `{}` holds {} values but the field is declared {}; convert the data to {}",
                        field.name,
                        b.ty(),
                        field.ty,
                        field.ty
                    )))
                }
                Some(b) if b.len() != len => {
                    let dims: Vec<String> = env
                        .field_dims(program, FieldId(f))
                        .iter()
                        .map(usize::to_string)
                        .collect();
                    return Err(ExecError::Failed(format!(
                        "the input for field `{}` has {} elements but its grid is {} = {len}; give data of the grid's shape or change the size parameters",
                        field.name,
                        b.len(),
                        dims.join(" x ")
                    )));
                }
                Some(b) => b,
            };
            let mut levels = Vec::with_capacity(field.levels());
            for _ in 1..field.levels() {
                levels.push(buffer.clone());
            }
            levels.push(buffer);
            fields.push(levels);
        }
        Ok(FieldState { fields })
    }
}
