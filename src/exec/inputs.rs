//! A run's inputs checked before anything computes.
//!
//! Every executor entry point calls [`check_inputs`]: the executors index
//! buffers with the environment's grid sizes without further checks (the
//! interpreter's inner loops, the generated C, the GPU kernels), so an
//! environment of another program, a state of the wrong shape or type, or an
//! access outside a grid for these parameter values must be refused here, with
//! an error, never reach the computation.

use crate::diag::Diagnostics;
use crate::exec::ReadInPlace;
use crate::exec::{Buffer, ExecError, FieldState};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::backend::RunOptions;
    use crate::exec::{interp, native};
    use crate::ir::Value;
    use crate::schedule::ScheduleRequest;
    use crate::source::SourceFile;

    /// Writes `[1]a` over `0:reach*m-1` from `[0]a`, on a grid of `size*n`
    /// points: programs with the same parameters but other sizes.
    fn program(size: i32, reach: i32) -> Program {
        let text = format!(
            "int n;\nint m;\ngrid g[{size}*n];\nfloat griddata a on g at 0,1;\n\
             iterate 2 {{\n  stencil s {{\n    [0:{reach}*m-1] : [1]a[0] = [0]a[0] + 1.0;\n  }}\n}}\n"
        );
        crate::front::parse_program(SourceFile::new("inputs.sdsl", text)).expect("compiles")
    }

    fn env(program: &Program, n: i32, m: i32) -> RunEnv {
        RunEnv::new(
            program,
            &Bindings {
                params: vec![Value::Int(n), Value::Int(m)],
            },
        )
        .expect("valid sizes")
    }

    fn state(program: &Program, env: &RunEnv) -> FieldState {
        FieldState::initial(program, env, vec![None]).expect("fits")
    }

    /// Every public executor entry that takes an environment and a state.
    fn every_executor(
        program: &Program,
        env: &RunEnv,
        state: &mut FieldState,
    ) -> Vec<(&'static str, Result<crate::exec::RunSummary, ExecError>)> {
        let schedule = crate::driver::sized_schedule(program, &ScheduleRequest::default(), env);
        let mut out = vec![("interp", interp::run(program, env, state))];
        if let Ok((unit, kernel)) = native::prepare(program, &RunOptions::default()) {
            out.push((
                "native::execute",
                native::execute(program, env, state, &unit, &kernel),
            ));
        }
        out.push((
            "native::run",
            native::run(program, env, state, &RunOptions::default(), &mut |_| {}),
        ));
        out.push((
            "opencl::run",
            crate::exec::opencl::run(program, env, state, &RunOptions::default()),
        ));
        out.push((
            "cuda::run",
            crate::exec::cuda::run(program, env, state, &RunOptions::default()),
        ));
        if let Ok(schedule) = schedule {
            out.push((
                "opencl::run_with_schedule",
                crate::exec::opencl::run_with_schedule(program, env, state, &schedule),
            ));
            out.push((
                "cuda::run_with_schedule",
                crate::exec::cuda::run_with_schedule(program, env, state, &schedule),
            ));
        }
        out
    }

    fn assert_refused(
        results: Vec<(&'static str, Result<crate::exec::RunSummary, ExecError>)>,
        expected: &str,
    ) {
        for (name, result) in results {
            match result {
                Err(ExecError::Failed(message)) if message.contains(expected) => {}
                other => panic!("{name}: expected an error saying `{expected}`, got {other:?}"),
            }
        }
    }

    #[test]
    fn an_environment_of_another_program_is_refused() {
        // The environment of the narrow program sizes `a` to 8 elements; the
        // wide one writes 16 of them. This used to write past the buffers.
        let (narrow, wide) = (program(1, 1), program(2, 2));
        let env = env(&narrow, 8, 8);
        let mut state = state(&narrow, &env);
        let results = every_executor(&wide, &env, &mut state);
        assert_refused(results, "not built for program");
        assert_eq!(state, self::state(&narrow, &env), "nothing was written");
    }

    #[test]
    fn a_state_of_the_wrong_shape_is_refused() {
        // `native::execute` used to skip this check and hand the C code buffers
        // shorter than the grid.
        let p = program(1, 1);
        let env = env(&p, 8, 8);
        let mut state = state(&p, &env);
        state.fields[0][1] = Buffer::Float(vec![0.0; 3]);
        let results = every_executor(&p, &env, &mut state);
        assert_refused(results, "holds 3 float values instead of 8 float");
        state.fields[0][1] = Buffer::Double(vec![0.0; 8]);
        let results = every_executor(&p, &env, &mut state);
        assert_refused(results, "holds 8 double values instead of 8 float");
    }

    #[test]
    fn accesses_are_checked_even_when_the_environment_was_not() {
        // `RunEnv::new` binds values without checking accesses; the executors
        // must check them. With m > n this stencil writes past its grid.
        let p = program(1, 1);
        let env = env(&p, 8, 9);
        let mut state = state(&p, &env);
        let results = every_executor(&p, &env, &mut state);
        for (name, result) in results {
            match result {
                Err(ExecError::Located(d)) => {
                    let text = d.to_string();
                    assert!(text.contains("past the last element"), "{name}: {text}");
                }
                other => panic!("{name}: expected a located bounds error, got {other:?}"),
            }
        }
        assert!(bind(
            &p,
            &Bindings {
                params: vec![Value::Int(8), Value::Int(9)]
            }
        )
        .is_err());
    }

    #[test]
    fn a_unit_of_another_program_is_refused() {
        let (narrow, wide) = (program(1, 1), program(2, 2));
        let Ok((unit, kernel)) = native::prepare(&wide, &RunOptions::default()) else {
            return; // no C compiler here: nothing to call
        };
        let env = env(&narrow, 8, 8);
        let mut state = state(&narrow, &env);
        let err = native::execute(&narrow, &env, &mut state, &unit, &kernel).unwrap_err();
        assert!(err.to_string().contains("not program `inputs`'s"), "{err}");
    }
}
