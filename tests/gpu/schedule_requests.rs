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
