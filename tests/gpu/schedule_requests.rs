//! Schedules from requests: the heuristic, overrides and clear errors (no runtime needed).

use crate::gpu_common;

use gpu_common::*;
use stencilc::schedule::{FieldPlacement, Schedule, ScheduleRequest, ShmRequest, TablePlacement};

#[test]
fn heuristic_tiles_the_blur_and_folds_its_table() {
    let program = example("gaussian_blur");
    let s = Schedule::new(&program, &ScheduleRequest::default()).unwrap();
    let blur = s.stencil(0);
    assert_eq!(blur.block, [32, 8, 1]);
    assert!(blur
        .fields
        .values()
        .any(|p| *p == FieldPlacement::SharedTile));
    assert!(blur.tables.values().all(|p| *p == TablePlacement::Literals));
}

#[test]
fn heuristic_leaves_a_five_point_stencil_in_global_memory() {
    let program = example("jacobi2d");
    let s = Schedule::new(&program, &ScheduleRequest::default()).unwrap();
    assert!(s
        .stencil(0)
        .fields
        .values()
        .all(|p| *p != FieldPlacement::SharedTile));
}

#[test]
fn a_written_level_is_never_tiled_even_when_named() {
    let program = example("heat3d");
    let request = ScheduleRequest {
        shm: ShmRequest::Names(vec!["u".into()]),
        ..ScheduleRequest::default()
    };
    let s = Schedule::new(&program, &request).unwrap();
    let fields = &s.stencil(0).fields;
    let u = program.fields.iter().position(|f| f.name == "u").unwrap();
    assert_eq!(
        fields[&(stencilc::ir::FieldId(u), 0)],
        FieldPlacement::SharedTile
    );
    assert!(!fields.contains_key(&(stencilc::ir::FieldId(u), 1)));
}

#[test]
fn unknown_shm_name_and_bad_blocks_are_explained() {
    let program = example("jacobi2d");
    let err = Schedule::new(
        &program,
        &ScheduleRequest {
            shm: ShmRequest::parse("b"),
            ..ScheduleRequest::default()
        },
    )
    .unwrap_err();
    assert!(err.0.contains("`b`") && err.0.contains("a"), "{err}");
    let err = Schedule::new(
        &program,
        &ScheduleRequest {
            block: Some(vec![8, 8, 4]),
            ..ScheduleRequest::default()
        },
    )
    .unwrap_err();
    assert!(err.0.contains("2-D grid"), "{err}");
    let err = Schedule::new(
        &program,
        &ScheduleRequest {
            tile: Some(vec![0, 1]),
            ..ScheduleRequest::default()
        },
    )
    .unwrap_err();
    assert!(err.0.contains("positive"), "{err}");
}

#[test]
fn shm_parse() {
    assert_eq!(ShmRequest::parse("none"), ShmRequest::None);
    assert_eq!(ShmRequest::parse("auto"), ShmRequest::Auto);
    assert_eq!(
        ShmRequest::parse("a, K"),
        ShmRequest::Names(vec!["a".into(), "K".into()])
    );
}

/// `--block 256 --tile 16777216` (2^32 points per block) used to wrap a `u32`
/// product to 0 and panic dividing by it; it is refused naming the limit.
#[test]
fn oversize_block_times_tile_is_refused_naming_the_limit() {
    let program = example("jacobi2d");
    let request = ScheduleRequest {
        block: Some(vec![256]),
        tile: Some(vec![16777216]),
        ..ScheduleRequest::default()
    };
    let err = Schedule::new(&program, &request).unwrap_err().to_string();
    assert!(
        err.contains("4294967296 points") && err.contains("limit of 1048576"),
        "{err}"
    );
}

/// Sizes a request may carry: small, around the limits, and huge.
fn request_size() -> impl proptest::strategy::Strategy<Value = u32> {
    use proptest::prelude::*;
    prop_oneof![
        0u32..=4,
        Just(7),
        Just(32),
        Just(1024),
        Just(65536),
        Just(1 << 20),
        Just(16777216),
        Just(u32::MAX),
        any::<u32>(),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(192))]

    /// Whatever block and tile sizes are asked for (zero, huge, too many axes),
    /// scheduling either refuses with a message or gives a schedule that lowers
    /// for both targets and whose host plan checks (or refuses) the launch
    /// counts for a range of grid sizes: nothing panics.
    #[test]
    fn schedule_lowering_and_planning_never_panic(
        example_index in 0usize..6,
        block in proptest::collection::vec(request_size(), 0..5),
        tile in proptest::collection::vec(request_size(), 0..5),
        shm_none in proptest::bool::ANY,
        size in proptest::prop_oneof![1usize..=70, proptest::strategy::Just(1usize << 31)],
    ) {
        let names = ["jacobi2d", "heat3d", "gaussian_blur", "gaussian_blur_separable", "wave2d", "rician3d"];
        let program = example(names[example_index]);
        let request = ScheduleRequest {
            block: Some(block),
            tile: Some(tile),
            shm: if shm_none { ShmRequest::None } else { ShmRequest::Auto },
            ..ScheduleRequest::default()
        };
        let Ok(schedule) = Schedule::new(&program, &request) else {
            return Ok(());
        };
        for target in [stencilc::lower::Target::Cuda, stencilc::lower::Target::OpenCl] {
            let lowered = stencilc::lower::lower(&program, &schedule, target);
            let _ = stencilc::lower::check_limits(
                &lowered.module,
                &stencilc::schedule::DeviceLimits::CUDA_DEFAULT,
            );
            let dims: Vec<Vec<usize>> = program.grids.iter().map(|g| vec![size; g.rank()]).collect();
            let grids = program.grids.iter().map(|g| g.name.as_str()).zip(dims.iter().map(Vec::as_slice));
            let last = size as i64 - 1;
            let result = lowered
                .plan
                .check(grids, &|subset| vec![(0, last); subset.rank()]);
            if size > 46340 {
                proptest::prop_assert!(result.is_err());
            }
        }
    }
}

/// `emit --target cuda|opencl` prints no host code, so it says what the host
/// must check before launching, naming each access that only the sizes decide.
#[test]
fn emitted_gpu_code_lists_the_checks_its_host_makes() {
    use stencilc::driver::emit::{emit, GpuTarget};
    let program = parse(
        "segi",
        "int Nx; int Ny; grid g[Ny][Nx];
double griddata phi on g at 0,1;
iterate 1 {
    stencil wrap {
        [0:Ny-1][Nx-1:Nx-1] : [1]phi[0][Nx-1] = [0]phi[0][0];
    }
}
",
    );
    for target in [GpuTarget::Cuda, GpuTarget::OpenCl] {
        let text = emit(&program, &ScheduleRequest::default(), target).unwrap();
        for expected in [
            "every grid has at most 2147483647 points",
            "--index64",
            "- line 5: `[1]phi[0][Nx-1]` writes past the last column of `phi`",
        ] {
            assert!(
                text.contains(expected),
                "{target:?}: no `{expected}` in:\n{text}"
            );
        }
    }
}
