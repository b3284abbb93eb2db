//! Property test of the CUDA back-end without a GPU: the CUDA of every random
//! valid program (tests/common/gen.rs), under a random schedule, compiles with
//! NVRTC for sm_90 without a single warning.

use crate::common;

use common::gen::{self, Flavor};
use proptest::prelude::*;
use stencilc::driver::emit::{emit, GpuTarget};
use stencilc::exec::cuda::nvrtc;
use stencilc::lower::{check_limits, lower, Target};
use stencilc::schedule::{DeviceLimits, Schedule};

fn nvrtc_here() -> bool {
    common::runtime_available("nvrtc", nvrtc::load().map(|_| ()))
}

proptest! {
    #![proptest_config(common::proptest_config(gen::cases(32)))]

    #[test]
    fn nvrtc_compiles_generated_programs_without_warnings(
        generated in gen::program_strategy(Flavor::Full),
        schedule in gen::schedule_strategy(),
    ) {
        if !nvrtc_here() {
            return Ok(());
        }
        let (text, program) = generated.parse();
        let request = schedule.request(&generated);
        // A request a GPU cannot run (too much shared memory for the block and
        // tile) is refused before compiling when running; emit does not check.
        let plan = Schedule::new(&program, &request)
            .unwrap_or_else(|e| panic!("the schedule was refused: {e}\n{text}\n{request:?}"));
        let lowered = lower(&program, &plan, Target::Cuda);
        prop_assume!(check_limits(&lowered.module, &DeviceLimits::CUDA_DEFAULT).is_ok());
        let source = emit(&program, &request, GpuTarget::Cuda)
            .unwrap_or_else(|e| panic!("the schedule was refused: {e}\n{text}\n{request:?}"));
        let compiled = nvrtc::compile_with_log(&source, "sm_90")
            .unwrap_or_else(|e| panic!("NVRTC refused the CUDA: {e}\n{text}\n{request:?}\n{source}"));
        prop_assert!(
            compiled.log.is_empty(),
            "NVRTC warned:\n{}\n{}\n{:?}\n{}", compiled.log, text, request, source
        );
        prop_assert!(compiled.ptx.contains(".entry"), "the PTX has no kernel\n{}", text);
    }
}

/// Found by the property above: a point-function local that is assigned but
/// never read is legal SDSL, and NVRTC warned
/// `warning #550-D: variable "t0" was set but never used` until lowering
/// learnt to drop locals whose values reach no store.
#[test]
fn unused_locals_compile_without_warnings() {
    let text = "int n0;\ngrid g[n0];\nfloat griddata f0 on g at 0;\n\
                pointfunction pf(p0) {\n    float t0 = [0]p0[0] * 2.0f;\n    float t1 = t0 + 1.0f;\n\
                    float kept = [0]p0[0] * 3.0f;\n    [0]p0[0] = kept + 1.0f;\n}\n\
                iterate 1 {\n    stencil s0 {\n        [0:n0-1] : pf(f0);\n    }\n}\n";
    compiles_without_warnings("unused_local.sdsl", text);
}

/// A condition of literals picks its branch when lowered (`1.5 < 2.0` made
/// NVRTC and PoCL warn); a local read only in the branch dropped must not be
/// left set but never used.
#[test]
fn a_literal_condition_keeps_no_local_unused() {
    let text = "int n0;\ngrid g[n0];\nfloat griddata f0 on g at 0;\n\
                pointfunction pf(p0) {\n    float t0 = [0]p0[0] * 2.0f;\n\
                    [0]p0[0] = (1.5 < 2.0 || 1.0 != 1.0) ? 3.0f : t0;\n}\n\
                iterate 1 {\n    stencil s0 {\n        [0:n0-1] : pf(f0);\n    }\n}\n";
    let source = compiles_without_warnings("literal_condition.sdsl", text);
    assert!(source.contains("f0[ix] = 3.0f;"), "{source}");
}

/// Emits `text` as CUDA with the default schedule and compiles it with NVRTC
/// for sm_90, asserting an empty log; returns the source.
fn compiles_without_warnings(name: &str, text: &str) -> String {
    let program = stencilc::front::parse_program(stencilc::source::SourceFile::new(name, text))
        .and_then(stencilc::analysis::checked)
        .unwrap_or_else(|d| panic!("{d}"));
    let source = emit(
        &program,
        &stencilc::schedule::ScheduleRequest::default(),
        GpuTarget::Cuda,
    )
    .unwrap();
    if nvrtc_here() {
        let compiled = nvrtc::compile_with_log(&source, "sm_90").unwrap();
        assert!(
            compiled.log.is_empty(),
            "NVRTC warned:\n{}\n{source}",
            compiled.log
        );
    }
    source
}
