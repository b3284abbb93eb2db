//! Helpers shared by the OpenCL, NVRTC and GPU tests: the examples with small
//! parameter values, deterministic inputs, the schedule matrix, and comparison
//! against the interpreter.
#![allow(dead_code)]

use std::path::Path;

use stencilc::exec::{Bindings, Buffer, FieldState};
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, ScalarType, Value};
use stencilc::schedule::{ScheduleRequest, ShmRequest, TablePlacement, ThorinVariant};
use stencilc::source::SourceFile;

/// Whether an OpenCL device is here (else the caller's test returns, and CI,
/// which requires OpenCL, fails).
pub fn opencl_here() -> bool {
    crate::common::runtime_available(
        "opencl",
        stencilc::exec::opencl::probe()
            .map(|_| ())
            .map_err(|e| e.to_string()),
    )
}

/// Whether NVRTC is here (as [`opencl_here`]).
pub fn nvrtc_here() -> bool {
    crate::common::runtime_available("nvrtc", stencilc::exec::cuda::nvrtc::load().map(|_| ()))
}

/// Compiles `source` with NVRTC for sm_80 and sm_90 and asserts an empty
/// log, naming `what` otherwise.
pub fn assert_nvrtc_compiles_cleanly(source: &str, what: &str) {
    for arch in ["sm_80", "sm_90"] {
        let compiled = stencilc::exec::cuda::nvrtc::compile_with_log(source, arch)
            .unwrap_or_else(|e| panic!("{what} {arch}: {e}\n{source}"));
        assert!(
            compiled.log.is_empty(),
            "{what} {arch}: NVRTC said\n{}\n{source}",
            compiled.log
        );
    }
}

/// A program of bench/programs/.
pub fn bench_program(name: &str) -> Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bench/programs")
        .join(format!("{name}.sdsl"));
    parse(
        name,
        &std::fs::read_to_string(path).expect("bench program exists"),
    )
}

/// The examples, with small parameter values (sizes not multiples of any block).
pub const EXAMPLES: &[(&str, &[(&str, f64)])] = &[
    ("gaussian_blur", &[("width", 37.0), ("height", 23.0)]),
    (
        "gaussian_blur_separable",
        &[("width", 37.0), ("height", 23.0)],
    ),
    (
        "heat3d",
        &[
            ("nx", 19.0),
            ("ny", 13.0),
            ("nz", 11.0),
            ("steps", 3.0),
            ("alpha", 0.1),
        ],
    ),
    ("jacobi2d", &[("dim0", 37.0), ("dim1", 23.0)]),
    (
        "rician3d",
        &[
            ("dim0", 19.0),
            ("dim1", 13.0),
            ("dim2", 11.0),
            ("sigma", 0.05),
            ("lambda", 0.065),
        ],
    ),
    ("wave2d", &[("n", 37.0), ("steps", 5.0), ("c2", 0.2)]),
];

/// Parses SDSL text.
pub fn parse(name: &str, text: &str) -> Program {
    let source = SourceFile::new(format!("{name}.sdsl"), text.to_string());
    match stencilc::front::parse_program(source).and_then(stencilc::analysis::checked) {
        Ok(p) => p,
        Err(d) => panic!("{name} does not parse:\n{d}"),
    }
}

/// Parses an example of `examples/`.
pub fn example(name: &str) -> Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(format!("{name}.sdsl"));
    let text = std::fs::read_to_string(&path).expect("example exists");
    parse(name, &text)
}

/// Bindings from `(name, value)` pairs, converted to each parameter's type.
pub fn bindings(program: &Program, values: &[(&str, f64)]) -> Bindings {
    Bindings {
        params: program
            .params
            .iter()
            .map(|p| {
                let v = values
                    .iter()
                    .find(|(n, _)| *n == p.name)
                    .unwrap_or_else(|| panic!("no value for parameter {}", p.name))
                    .1;
                Value::Double(v).cast(p.ty)
            })
            .collect(),
    }
}

/// Deterministic inputs in [0.5, 1.5): every level of a field gets the same data.
pub fn initial_state(program: &Program, env: &RunEnv) -> FieldState {
    let mut fields = Vec::new();
    for (f, field) in program.fields.iter().enumerate() {
        let len: usize = env.grid_dims()[field.grid.0].iter().product();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ (f as u64 + 1).wrapping_mul(0x2545_F491);
        let data: Vec<f64> = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                0.5 + (seed % 1_000_000) as f64 / 1_000_000.0
            })
            .collect();
        let buffer = match field.ty {
            ScalarType::Int => Buffer::Int(data.iter().map(|v| (v * 100.0) as i32).collect()),
            ScalarType::Long => Buffer::Long(data.iter().map(|v| (v * 100.0) as i64).collect()),
            ScalarType::Float => Buffer::Float(data.iter().map(|v| *v as f32).collect()),
            ScalarType::Double => Buffer::Double(data),
        };
        fields.push(vec![buffer; field.levels()]);
    }
    FieldState { fields }
}

/// Asserts two states agree: f32 within 1e-5 and f64 within 1e-12 of the largest
/// magnitude, integers exactly.
pub fn assert_close(program: &Program, expected: &FieldState, actual: &FieldState, what: &str) {
    for (f, field) in program.fields.iter().enumerate() {
        for level in 0..field.levels() {
            let e = expected.fields[f][level].to_f64();
            let a = actual.fields[f][level].to_f64();
            assert_eq!(e.len(), a.len(), "{what}: field {} sizes", field.name);
            let scale = e.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
            let tol = match field.ty {
                ScalarType::Float => 1e-5,
                ScalarType::Double => 1e-12,
                _ => 0.0,
            } * scale;
            for (i, (x, y)) in e.iter().zip(&a).enumerate() {
                assert!(
                    (x - y).abs() <= tol,
                    "{what}: field {} level {level} element {i}: interpreter {x}, got {y} \
                     (tolerance {tol})",
                    field.name
                );
            }
        }
    }
}

/// The schedule matrix for a grid of `rank` dimensions: (label, request).
pub fn schedule_matrix(program: &Program, rank: usize) -> Vec<(String, ScheduleRequest)> {
    let all: Vec<String> = program
        .fields
        .iter()
        .map(|f| f.name.clone())
        .chain(program.tables.iter().map(|t| t.name.clone()))
        .collect();
    let req = |block: &[u32], tile: &[u32], shm: ShmRequest| ScheduleRequest {
        block: Some(block.to_vec()),
        tile: Some(tile.to_vec()),
        vector: None,
        shm,
        tables: None,
        fuse: false,
        results: None,
        wide_indices: false,
        time_steps: None,
        fma: false,
        min_blocks_per_sm: None,
        ptxas_rank: None,
    };
    let mut list = vec![
        ("default".to_string(), ScheduleRequest::default()),
        (
            "fused".to_string(),
            ScheduleRequest {
                fuse: true,
                ..ScheduleRequest::default()
            },
        ),
        // 64-bit flattened indices on a small grid: the form a grid of 2^31
        // points or more gets, checked against the interpreter.
        (
            "index64".to_string(),
            ScheduleRequest {
                wide_indices: true,
                ..ScheduleRequest::default()
            },
        ),
    ];
    for (label, variant) in [
        ("thorin-no-shm", ThorinVariant::NoShm),
        ("thorin-tables", ThorinVariant::TablesOnly),
        ("thorin-both", ThorinVariant::TilesAndTables),
    ] {
        let mut r = ScheduleRequest::thorin(variant);
        if variant == ThorinVariant::TilesAndTables {
            r.shm = ShmRequest::Names(all.clone());
        }
        list.push((label.to_string(), r));
    }
    match rank {
        1 => {
            list.push((
                "b16".into(),
                req(&[16], &[1], ShmRequest::Names(all.clone())),
            ));
            list.push((
                "b8t3".into(),
                req(&[8], &[3], ShmRequest::Names(all.clone())),
            ));
        }
        2 => {
            list.push(("b8x4-none".into(), req(&[8, 4], &[1, 1], ShmRequest::None)));
            list.push((
                "b16x2-t2x3-shm".into(),
                req(&[16, 2], &[2, 3], ShmRequest::Names(all.clone())),
            ));
            list.push((
                "b32-1d-t1x2-shm".into(),
                req(&[32], &[1, 2], ShmRequest::Names(all.clone())),
            ));
            list.push((
                "b4x4x1-3d-block".into(),
                ScheduleRequest {
                    tables: Some(TablePlacement::Constant),
                    ..req(&[4, 4, 1], &[3, 1], ShmRequest::Names(all.clone()))
                },
            ));
        }
        _ => {
            list.push((
                "b8x4x2-none".into(),
                req(&[8, 4, 2], &[1, 1, 1], ShmRequest::None),
            ));
            list.push((
                "b8x2x2-t2x1x3-shm".into(),
                req(&[8, 2, 2], &[2, 1, 3], ShmRequest::Names(all.clone())),
            ));
            list.push((
                "b16x4-2d-shm".into(),
                req(&[16, 4], &[1, 2, 2], ShmRequest::Names(all.clone())),
            ));
            list.push(("b32-1d".into(), req(&[32], &[1, 1, 2], ShmRequest::Auto)));
        }
    }
    list
}

/// The rank of a program's first grid.
pub fn rank(program: &Program) -> usize {
    program.grids[0].rank()
}

/// A small program reading at ±2 on both axes of a field with `mode`, over the
/// whole grid (so every boundary cell is exercised), plus a reduction.
pub fn boundary_program(mode: &str, ty: &str) -> Program {
    let suffix = if ty == "float" { "f" } else { "" };
    let text = format!(
        "int w;\nint h;\ngrid g[h][w];\n{ty} griddata src on g at 0 boundary {mode};\n\
         {ty} griddata dst on g at 0;\n\
         iterate 1 {{\n  stencil s {{\n    [0:h-1][0:w-1] : [0]dst[0][0] = 0.5{suffix}*[0]src[0][0] \
         + 0.25{suffix}*[0]src[-2][1] + 0.125{suffix}*[0]src[1][-2] + [0]src[2][2] - [0]src[-1][-1];\n  }}\n\
         reduction total + {{ [0:h-1][0:w-1] : [0]dst[0][0]; }}\n}}\n"
    );
    parse(&format!("boundary_{mode}_{ty}"), &text)
}

/// A program whose names are every class of word the targets reserve or the
/// generated code uses for itself: C keywords (`short`, `restrict`), OpenCL
/// address spaces (`kernel`, `global`, `local`), CUDA built-ins (`threadIdx`),
/// C library names (`min`), and the generated code's own names (`scratch`,
/// `a_tile`, `g_n0`, `acc`, `tx`, `tid`, `value`, `partials`, `iter`).
pub fn reserved_names_program() -> Program {
    let text = include_str!("../common/reserved_names.sdsl");
    parse("reserved_names", text)
}

/// Parameter values for [`reserved_names_program`] (sizes not multiples of a block).
pub const RESERVED_NAMES_PARAMS: &[(&str, f64)] = &[
    ("short", 29.0),
    ("g_n0", 13.0),
    ("restrict", 0.25),
    ("min", 3.0),
];
