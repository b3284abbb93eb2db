//! Every example and benchmark program on `--backend c` against the interpreter:
//! bit-identical results (the C is compiled with -ffp-contract=off, no fast-math),
//! also with the fields no stencil writes read in the caller's memory.

use crate::common;

use stencilc::exec::backend::{self, Backend};

use stencilc::data::in_place;
use stencilc::exec::options::RunOptions;
use stencilc::exec::{native, Bindings, Buffer, FieldState, ReadInPlace, RunSummary};
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{FieldId, Program, ScalarType, Value};
use stencilc::source::SourceFile;

fn cc_available() -> bool {
    common::runtime_available(
        "cc",
        native::Compiler::from_env()
            .map(|_| ())
            .map_err(|e| e.to_string()),
    )
}

/// Small, non-square sizes; a few iterations; physical constants where named.
fn bindings(program: &Program) -> Bindings {
    let params = program
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let v = match p.name.as_str() {
                "steps" => 5.0,
                "alpha" => 0.1,
                "c2" => 0.2,
                "sigma" => 0.05,
                "lambda" => 0.065,
                _ => 9.0 + 2.0 * i as f64,
            };
            // C's conversion, as `--set` would give the parameter.
            Value::Double(v).cast(p.ty)
        })
        .collect();
    Bindings { params }
}

fn state(program: &Program, env: &RunEnv) -> FieldState {
    let fields = program
        .fields
        .iter()
        .enumerate()
        .map(|(f, field)| {
            let len: usize = env.grid_dims()[field.grid.0].iter().product();
            let value = |i: usize| (((i * 7919 + f * 104729) % 1000) as f64) / 1000.0;
            let buffer = match field.ty {
                ScalarType::Float => Buffer::Float((0..len).map(|i| value(i) as f32).collect()),
                ScalarType::Double => Buffer::Double((0..len).map(value).collect()),
                ScalarType::Int => {
                    Buffer::Int((0..len).map(|i| (value(i) * 100.0) as i32).collect())
                }
                ScalarType::Long => {
                    Buffer::Long((0..len).map(|i| (value(i) * 100.0) as i64).collect())
                }
            };
            vec![buffer; field.levels()]
        })
        .collect();
    FieldState { fields }
}

fn check(path: &std::path::Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let program = stencilc::front::parse_program(SourceFile::new(path.display().to_string(), text))
        .and_then(stencilc::analysis::checked)
        .unwrap_or_else(|d| panic!("{d}"));
    let params = bindings(&program);
    check_bound(&program, &params, &path.display().to_string());
}

/// `program` bound by `params` on C against the interpreter: every level,
/// the reductions and the iterations equal.
/// The program run from [`state`] on the interpreter and on C: each one's
/// fields and summary.
fn interp_and_c(
    program: &Program,
    env: &RunEnv,
) -> ((FieldState, RunSummary), (FieldState, RunSummary)) {
    let mut expected = state(program, env);
    let want = interp::run(program, env, &mut expected).unwrap();
    let mut got = state(program, env);
    let have = native::run(program, env, &mut got, &RunOptions::default(), &mut |_| {}).unwrap();
    ((expected, want), (got, have))
}

fn check_bound(program: &Program, params: &Bindings, label: &str) {
    let program = program.clone();
    let path = std::path::Path::new(label);
    let env = RunEnv::new(&program, params).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let ((expected, want), (got, have)) = interp_and_c(&program, &env);
    assert_eq!(have.iterations, want.iterations, "{}", path.display());
    assert_eq!(
        have.stopped_by_check,
        want.stopped_by_check,
        "{}",
        path.display()
    );
    assert_eq!(have.reductions, want.reductions, "{}", path.display());
    // Every level, in the rotated order: the buffers were moved as the interpreter moves them.
    assert_eq!(got, expected, "{}", path.display());
    check_read_in_place(&program, &env, &expected, &want);
}

/// The fields no stencil writes read in the caller's memory, on the
/// interpreter and on C: the written fields end as when every input is
/// copied, and the inputs are unchanged.
fn check_read_in_place(program: &Program, env: &RunEnv, expected: &FieldState, want: &RunSummary) {
    let read_only = in_place::read_only_fields(program);
    if !read_only.contains(&true) {
        return;
    }
    let inputs = state(program, env);
    let mut read_in_place = ReadInPlace::default();
    for (f, levels) in inputs.fields.iter().enumerate() {
        if read_only[f] {
            let input = &levels[0];
            // SAFETY: `inputs` outlives the runs below and nothing writes it.
            unsafe {
                read_in_place.add(
                    FieldId(f),
                    input.as_bytes().as_ptr(),
                    input.len(),
                    input.ty(),
                )
            };
        }
    }
    let options = RunOptions {
        read_in_place: Some(read_in_place),
        ..RunOptions::default()
    };
    for backend in [Backend::Interp, Backend::C] {
        let mut run = state(program, env);
        for (f, field) in program.fields.iter().enumerate() {
            if read_only[f] {
                run.fields[f] = vec![Buffer::zeros(field.ty, 0); field.levels()];
            }
        }
        let (have, _) =
            backend::run(backend, program, env, &mut run, &options, &mut |_| {}).unwrap();
        assert_eq!(
            have.iterations, want.iterations,
            "{} {backend}",
            program.name
        );
        assert_eq!(
            have.reductions, want.reductions,
            "{} {backend}",
            program.name
        );
        for (f, field) in program.fields.iter().enumerate() {
            if !read_only[f] {
                assert_eq!(
                    run.fields[f], expected.fields[f],
                    "{} {backend}: `{}`",
                    program.name, field.name
                );
            }
        }
    }
    assert_eq!(
        inputs,
        state(program, env),
        "{}: inputs changed",
        program.name
    );
}

#[test]
fn a_written_field_is_not_read_in_place() {
    let path = common::examples_dir().join("jacobi2d.sdsl");
    let text = std::fs::read_to_string(&path).unwrap();
    let program = stencilc::front::parse_program(SourceFile::new(path.display().to_string(), text))
        .and_then(stencilc::analysis::checked)
        .unwrap_or_else(|d| panic!("{d}"));
    let env = RunEnv::new(&program, &bindings(&program)).unwrap();
    let input = state(&program, &env).fields[0][0].clone();
    let mut read_in_place = ReadInPlace::default();
    // SAFETY: `input` outlives the run; the run refuses before reading it.
    unsafe {
        read_in_place.add(
            FieldId(0),
            input.as_bytes().as_ptr(),
            input.len(),
            input.ty(),
        )
    };
    let options = RunOptions {
        read_in_place: Some(read_in_place),
        ..RunOptions::default()
    };
    let mut run = state(&program, &env);
    let error = interp::run_in_place(
        &program,
        &env,
        &mut run,
        None,
        options.read_in_place.as_ref(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("field `a` is written by a stencil"),
        "{error}"
    );
}

/// A constant zero minus an integer converted to a floating type: GCC 12
/// folds `0.0 - (double)i` into `-(double)i`, -0.0 where `i` is 0, unless the
/// C is compiled with `-frounding-math` (one of the default flags since a
/// random program of the differential test met it). The interpreter's +0.0
/// and C's -0.0 compare equal as numbers: the test compares bits.
#[test]
fn zero_minus_a_converted_integer_keeps_the_sign_of_zero() {
    if !cc_available() {
        return;
    }
    let text = "int n;\nint zero;\ngrid g[n];\nfloat griddata f on g at 0;\n\
                double griddata d on g at 0;\niterate 2 {\n  stencil s {\n    \
                [0:n-1] : [0]f[0] = floor(0.5) - ((int)([0]f[0]) * zero);\n  }\n  \
                stencil t {\n    [0:n-1] : [0]d[0] = 0.0 - (double)(zero);\n  }\n}\n";
    let program =
        stencilc::front::parse_program(SourceFile::new("zero.sdsl".to_string(), text.to_string()))
            .and_then(stencilc::analysis::checked)
            .unwrap_or_else(|d| panic!("{d}"));
    let params = Bindings {
        params: vec![Value::Int(5), Value::Int(0)],
    };
    let env = RunEnv::new(&program, &params).unwrap();
    let ((expected, _), (got, _)) = interp_and_c(&program, &env);
    for run in [&expected, &got] {
        let Buffer::Float(f) = &run.fields[0][0] else {
            panic!("f is float")
        };
        let Buffer::Double(d) = &run.fields[1][0] else {
            panic!("d is double")
        };
        assert!(f.iter().all(|v| v.to_bits() == 0), "{f:?}");
        assert!(d.iter().all(|v| v.to_bits() == 0), "{d:?}");
    }
}

/// Fields on a second grid, smaller, equal or larger than the one the
/// stencil writes, read at offset zero and next to it: where the point lies
/// outside that grid the read takes the field's boundary mode (clamp, mirror,
/// periodic, zero), in the stencil and in a reduction, as the interpreter
/// reads it. The C used to read such a field at offset zero as it is.
#[test]
fn fields_on_another_grid_read_at_offset_zero_take_their_boundary_mode() {
    if !cc_available() {
        return;
    }
    let programs = [
        "int n;\nint m;\ngrid ga[n];\ngrid gb[m];\nfloat griddata a on ga at 0,1;\n\
         float griddata b on gb at 0 boundary clamp;\niterate 3 {\n  stencil s {\n    \
         [0:n-1] : [1]a[0] = [0]b[-1] + [0]b[0] + [0]a[0];\n  }\n}\n",
        "int n;\nint m;\ngrid ga[n][n];\ngrid gb[m][m];\nfloat griddata a on ga at 0,1;\n\
         float griddata b on gb at 0 boundary mirror;\niterate 3 {\n  stencil s {\n    \
         [0:n-1][0:n-1] : [1]a[0][0] = [0]b[-1][0] + [0]b[0][-2] + [0]b[0][0];\n  }\n}\n",
        "int n;\nint m;\ngrid ga[n][n];\ngrid gb[m][m];\nfloat griddata a on ga at 0,1;\n\
         float griddata b on gb at 0 boundary zero;\nfloat griddata c on gb at 0 boundary periodic;\n\
         iterate 2 {\n  stencil s {\n    \
         [0:n-1][0:n-1] : [1]a[0][0] = [0]b[0][0] + [0]c[0][0] + [0]a[0][0];\n  }\n  \
         reduction total + {\n    [0:n-1][0:n-1] : [0]b[0][0] + [0]c[0][0];\n  }\n}\n",
    ];
    for (i, text) in programs.into_iter().enumerate() {
        let label = format!("two_grids_{i}");
        let program =
            stencilc::front::parse_program(SourceFile::new(format!("{label}.sdsl"), text))
                .and_then(stencilc::analysis::checked)
                .unwrap_or_else(|d| panic!("{d}"));
        for (n, m) in [(40, 3), (64, 5), (30, 29), (7, 9), (12, 12)] {
            let params = Bindings {
                params: vec![Value::Int(n), Value::Int(m)],
            };
            check_bound(&program, &params, &format!("{label} n={n} m={m}"));
        }
    }
}

#[test]
fn every_example_matches_the_interpreter() {
    if !cc_available() {
        return;
    }
    let mut count = 0;
    for dir in [
        common::examples_dir(),
        common::examples_dir().join("../bench/programs"),
    ] {
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "sdsl"))
        {
            check(&path);
            count += 1;
        }
    }
    assert!(count >= 14, "examples and benchmarks found: {count}");
}

#[test]
fn a_program_named_with_every_targets_reserved_words_matches_the_interpreter() {
    if !cc_available() {
        return;
    }
    let text = include_str!("../common/reserved_names.sdsl");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reserved_names.sdsl");
    std::fs::write(&path, text).unwrap();
    check(&path);
}

#[test]
fn run_time_access_checks_use_the_namers_names() {
    // The access's reach depends on the parameters, so the C checks it at run
    // time: with the parameter `short` (C `short_`) in the offset and a
    // parameter `reach`, the name of the check's own temporary.
    if !cc_available() {
        return;
    }
    let text = "int n;\nint reach;\nint short;\ngrid g[n];\nfloat griddata a on g at 0,1;\n\
                iterate 2 {\n  stencil s {\n    [0:n-3] : [1]a[0] = [0]a[short - reach] + (float)reach;\n  }\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("checked_names.sdsl");
    std::fs::write(&path, text).unwrap();
    check(&path);
}
