//! Differential property test of the OpenCL back-end (PoCL in CI): random valid
//! programs (tests/common/gen.rs) under random schedules — block shapes of 1 to 3
//! axes, points per thread, shared-memory staging, fusion — agree with the
//! interpreter: f32 within 1e-5 and f64 within 1e-12 of the largest magnitude of
//! each level, ints exactly; iteration counts and the check exactly.
//!
//! A second property takes the schedule the model chooses (`model::choose`,
//! what `run` does without schedule flags) for a random device preset, with
//! or without `--fuse`, runs it on OpenCL against the interpreter, and
//! renders `explain`'s report of it as text and JSON.
//!
//! The programs use only correctly rounded operations (`Flavor::CorrectlyRounded`,
//! no `exp`), so that a `floor` or a comparison cannot turn an ulp of difference
//! in a transcendental function into a large one.

use crate::common;

use common::gen::{self, Flavor, GenProgram, Interpreted};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use stencilc::exec::{opencl, FieldState};
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, ReduceOp, ScalarType, Value};
use stencilc::lower::Target;
use stencilc::schedule::{Schedule, ScheduleRequest};

fn opencl_here() -> bool {
    common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    )
}

/// The tolerance of the issue on a value of `ty` whose scale is `scale`.
fn tolerance(ty: ScalarType, scale: f64) -> f64 {
    match ty {
        ScalarType::Float => 1e-5 * scale,
        ScalarType::Double => 1e-12 * scale,
        ScalarType::Int | ScalarType::Long => 0.0,
    }
}

/// Points a reduction combines: a bound on the number of terms of a sum.
fn points(env: &RunEnv) -> f64 {
    env.grid_dims()[0].iter().product::<usize>() as f64 * 2.0
}

/// Reductions agree: max and min within the field tolerance (they are exact
/// over equal fields); a sum of `n` non-negative terms within the bound of a
/// sum in another order, `n` ulps of the result (and at least the tolerance).
fn reduction_close(
    program: &Program,
    env: &RunEnv,
    name: &str,
    a: Option<Value>,
    b: Option<Value>,
) -> Result<(), String> {
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (None, None) => return Ok(()),
        _ => return Err(format!("reduction {name}: interpreter {a:?}, OpenCL {b:?}")),
    };
    let (x, y) = (a.as_f64(), b.as_f64());
    // Equal covers the infinities a max or min over empty subsets gives.
    if x == y {
        return Ok(());
    }
    let is_sum = program
        .iterate
        .as_ref()
        .and_then(|it| it.reductions.iter().find(|r| r.name == name))
        .is_some_and(|r| r.op == ReduceOp::Sum);
    let scale = x.abs().max(1.0);
    let mut tol = tolerance(a.ty(), scale);
    if is_sum {
        let ulp = match a.ty() {
            ScalarType::Float => f64::from(f32::EPSILON),
            _ => f64::EPSILON,
        };
        tol = tol.max(points(env) * ulp * scale);
    }
    if (x - y).abs() <= tol {
        Ok(())
    } else {
        Err(format!(
            "reduction {name}: interpreter {x}, OpenCL {y} (tolerance {tol})"
        ))
    }
}

/// Every level of every field agrees within the tolerance.
fn fields_close(
    program: &Program,
    expected: &FieldState,
    actual: &FieldState,
) -> Result<(), String> {
    for (f, field) in program.fields.iter().enumerate() {
        for level in 0..field.levels() {
            let e = expected.fields[f][level].to_f64();
            let a = actual.fields[f][level].to_f64();
            let scale = e.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let tol = tolerance(field.ty, scale);
            if let Some(i) = (0..e.len()).find(|&i| (e[i] - a[i]).abs() > tol) {
                return Err(format!(
                    "field {} level {level} element {i}: interpreter {}, OpenCL {} (tolerance {tol})",
                    field.name, e[i], a[i]
                ));
            }
        }
    }
    Ok(())
}

/// The interpreter's run of `generated`; rejected (not compared) when a value
/// overflowed.
fn interpreted(generated: &GenProgram) -> Result<Interpreted, TestCaseError> {
    let run = gen::interpret(generated);
    prop_assume!(gen::all_finite(&run.state));
    Ok(run)
}

/// Runs the program on OpenCL under `plan` from the same inputs and compares
/// it with the interpreter's run; `what` describes the case.
fn opencl_agrees(
    generated: &GenProgram,
    want: &Interpreted,
    plan: &Schedule,
    what: &str,
) -> Result<(), TestCaseError> {
    let (program, env) = (&want.program, &want.env);
    let mut actual = generated.initial_state(program, env);
    let have = opencl::run_with_schedule(program, env, &mut actual, plan)
        .unwrap_or_else(|e| panic!("OpenCL failed: {e}\n{what}"));
    prop_assert_eq!(
        have.iterations,
        want.summary.iterations,
        "iterations\n{}",
        what
    );
    prop_assert_eq!(
        have.stopped_by_check,
        want.summary.stopped_by_check,
        "check\n{}",
        what
    );
    for ((name, a), (_, b)) in want.summary.reductions.iter().zip(&have.reductions) {
        if let Err(msg) = reduction_close(program, env, name, *a, *b) {
            prop_assert!(false, "{}\n{}", msg, what);
        }
    }
    if let Err(msg) = fields_close(program, &want.state, &actual) {
        prop_assert!(false, "{}\n{}", msg, what);
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(gen::cases(24)))]

    #[test]
    fn opencl_agrees_with_the_interpreter_under_random_schedules(
        generated in gen::program_strategy(Flavor::CorrectlyRounded),
        schedule in gen::schedule_strategy(),
    ) {
        if !opencl_here() {
            return Ok(());
        }
        let want = interpreted(&generated)?;
        let request = schedule.request(&generated);
        let what = format!("{}\nschedule {request:?}", want.text);
        let plan = Schedule::new(&want.program, &request)
            .unwrap_or_else(|e| panic!("the schedule was refused: {e}\n{what}"));
        opencl_agrees(&generated, &want, &plan, &what)?;
    }
}

proptest! {
    #![proptest_config(common::proptest_config(gen::cases(16)))]

    #[test]
    fn the_schedules_the_model_chooses_agree_with_the_interpreter(
        generated in gen::program_strategy(Flavor::CorrectlyRounded),
        device in prop::sample::select(stencilc::model::device::DEVICES),
        fuse in any::<bool>(),
    ) {
        if !opencl_here() {
            return Ok(());
        }
        let want = interpreted(&generated)?;
        let (program, env) = (&want.program, &want.env);
        let request = ScheduleRequest { fuse, ..ScheduleRequest::default() };
        let what = format!("{}\ndevice {}, fuse {fuse}", want.text, device.name);
        let choice = stencilc::model::choose::choose(program, &request, env, Target::OpenCl, &device)
            .unwrap_or_else(|e| panic!("the model chose no schedule: {e}\n{what}"));
        let what = format!("{what}\nchosen: {}", choice.reasons.join("; "));
        opencl_agrees(&generated, &want, &choice.schedule, &what)?;
        let report = stencilc::explain::explain(program, env, Target::Cuda, &device, &request)
            .unwrap_or_else(|e| panic!("explain failed: {e:?}\n{what}"));
        prop_assert!(report.render().contains(&program.name), "{}", what);
        let json = serde_json::to_string(&report).expect("the report serializes");
        prop_assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok(), "{}", what);
    }
}

/// The seeds committed in `differential_opencl.proptest-regressions`, beside
/// this file, are found by the property's configuration, which replays them
/// before any new case.
#[test]
fn committed_regression_seeds_are_replayed() {
    let persistence = common::proptest_config(1)
        .failure_persistence
        .expect("failure persistence is on");
    let seeds = persistence.load_persisted_failures2(Some(file!()));
    assert!(
        !seeds.is_empty(),
        "no regression seed found for {}",
        file!()
    );
}
