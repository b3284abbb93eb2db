//! Every executor refuses the inputs [`check_inputs`](crate::data::check_inputs)
//! refuses: an environment of another program, a state of the wrong shape,
//! an access outside a grid.

use crate::data::{bind, Bindings, Buffer, ExecError, FieldState};
use crate::exec::native;
use crate::exec::options::RunOptions;
use crate::interp;
use crate::ir::env::RunEnv;
use crate::ir::{Program, Value};
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
) -> Vec<(&'static str, Result<crate::data::RunSummary, ExecError>)> {
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
    results: Vec<(&'static str, Result<crate::data::RunSummary, ExecError>)>,
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
