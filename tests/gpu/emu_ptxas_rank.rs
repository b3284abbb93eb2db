//! What `--ptxas-rank` keeps, run in the CUDA emulator against the
//! interpreter: the ranking compiles the model's best candidates with the
//! real NVRTC and ptxas and may keep any of them (a vector run, a staged
//! tile, another block), so each program's kept schedule is run here, on
//! sizes a multiple of the vector widths (so vector candidates compete) but
//! of no block. No GPU needed.

use crate::common;
use crate::gpu_common;

use gpu_common::*;
use stencilc::emu::Limits;
use stencilc::exec::emulated::run_with_schedule;
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::lower::Target;
use stencilc::model::choose::choose_ranked;
use stencilc::model::Device;
use stencilc::schedule::ScheduleRequest;

#[test]
fn emu_runs_what_ptxas_rank_keeps() {
    let nvrtc = stencilc::exec::cuda::nvrtc::load().map(|_| ());
    let ptxas = stencilc::model::ptxas::find().map(|_| ());
    if !common::runtime_available("nvrtc", nvrtc) || !common::runtime_available("ptxas", ptxas) {
        return;
    }
    let two_d: &[(&str, f64)] = &[("n", 24.0), ("steps", 2.0)];
    let three_d: &[(&str, f64)] = &[("n", 12.0), ("steps", 2.0)];
    let blur: &[(&str, f64)] = &[("width", 24.0), ("height", 13.0), ("steps", 1.0)];
    let cases = [
        ("j2d9pt", two_d),
        ("box2d2r", two_d),
        ("star3d1r", three_d),
        ("j3d27pt", three_d),
        ("gaussian_blur", blur),
    ];
    let request = ScheduleRequest {
        ptxas_rank: Some(8),
        ..ScheduleRequest::default()
    };
    for (name, params) in cases {
        let program = bench_program(name);
        let env = RunEnv::new(&program, &bindings(&program, params)).expect("valid parameters");
        let mut expected = initial_state(&program, &env);
        let reference = interp::run(&program, &env, &mut expected).expect("interpreter runs");
        let choice = choose_ranked(
            &program,
            &request,
            &env,
            Target::Cuda,
            Device::default_device(),
            Some(&stencilc::exec::cuda::nvrtc::ptxas_registers),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let what = format!("{name} [{}]", choice.schedule.describe(&program));
        assert!(
            choice.reasons[0].contains("ranked on ptxas's registers"),
            "{what}: {:?}",
            choice.reasons
        );
        let mut actual = initial_state(&program, &env);
        let (summary, _) = run_with_schedule(
            &program,
            &env,
            &mut actual,
            &choice.schedule,
            Limits::default(),
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(summary.iterations, reference.iterations, "{what}");
        assert_close(&program, &expected, &actual, &what);
    }
}
