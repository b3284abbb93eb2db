//! The part unit (`back::c::parts`, run by `exec::native::parts`): a snapshot
//! of its C, and every example and benchmark program computed part by part,
//! each part's box cut in pieces, bit-identical to the interpreter's run (what
//! the MPI driver relies on to run the C per rank).

use crate::common;

use stencilc::analysis::tile::CpuPlan;
use stencilc::back::c::parts::emit_part_unit;
use stencilc::exec::native::parts::PartKernel;
use stencilc::exec::options::RunOptions;
use stencilc::exec::{native, Bindings, Buffer, FieldState};
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, ScalarType, Value};
use stencilc::source::SourceFile;

fn cc_available() -> bool {
    common::runtime_available(
        "cc",
        native::Compiler::from_env()
            .map(|_| ())
            .map_err(|e| e.to_string()),
    )
}

fn load(path: &std::path::Path) -> Program {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    stencilc::front::parse_program(SourceFile::new(name, text))
        .and_then(stencilc::analysis::checked)
        .unwrap_or_else(|d| panic!("{d}"))
}

/// Small sizes that are no multiple of anything; a few iterations.
fn bindings(program: &Program) -> Bindings {
    let params = program
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let v = match p.name.as_str() {
                "steps" => 4.0,
                "alpha" => 0.1,
                "c2" => 0.2,
                "sigma" => 0.05,
                "lambda" => 0.065,
                _ => 9.0 + 2.0 * i as f64,
            };
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

/// `bounds` cut in two along its outermost and its innermost axis (where
/// it is at least two points wide): up to four boxes covering it once.
fn pieces(bounds: &[(i64, i64)]) -> Vec<Vec<(i64, i64)>> {
    let mut boxes = vec![bounds.to_vec()];
    for axis in [0, bounds.len() - 1] {
        let mut next = Vec::new();
        for b in boxes {
            let (lo, hi) = b[axis];
            if hi > lo {
                let mid = lo + (hi - lo) / 2;
                let (mut first, mut second) = (b.clone(), b.clone());
                first[axis] = (lo, mid);
                second[axis] = (mid + 1, hi);
                next.extend([first, second]);
            } else {
                next.push(b);
            }
        }
        boxes = next;
    }
    boxes
}

fn check(path: &std::path::Path) {
    let program = load(path);
    let env = RunEnv::new(&program, &bindings(&program))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut expected = state(&program, &env);
    let ran = interp::run(&program, &env, &mut expected).unwrap();
    let mut got = state(&program, &env);
    let kernel = PartKernel::prepare(&program, &env, &got, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let Some(iterate) = &program.iterate else {
        return;
    };
    for _ in 0..ran.iterations {
        for (s, stencil) in iterate.stencils.iter().enumerate() {
            for (p, part) in stencil.parts.iter().enumerate() {
                let bounds = env.subset_box(&part.subset);
                if bounds.iter().any(|(lo, hi)| lo > hi) {
                    continue;
                }
                for piece in pieces(&bounds) {
                    kernel.run_part_on(&mut got, (s, p), &piece).unwrap();
                }
            }
        }
        got.rotate();
    }
    for (f, field) in program.fields.iter().enumerate() {
        for level in 0..field.levels() {
            assert!(
                got.fields[f][level] == expected.fields[f][level],
                "{}: field `{}` level {level} differs from the interpreter's",
                path.display(),
                field.name
            );
        }
    }
}

#[test]
fn every_program_part_by_part_matches_the_interpreter() {
    if !cc_available() {
        return;
    }
    let examples = common::examples_dir();
    let bench = examples.parent().unwrap().join("bench/programs");
    let mut paths: Vec<_> = [examples, bench]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sdsl"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 10, "programs found: {}", paths.len());
    for path in paths {
        check(&path);
    }
}

#[test]
fn a_box_outside_its_part_or_a_state_of_another_shape_is_an_error() {
    if !cc_available() {
        return;
    }
    let program = load(&common::examples_dir().join("jacobi2d.sdsl"));
    let env = RunEnv::new(&program, &bindings(&program)).unwrap();
    let mut state = state(&program, &env);
    let kernel = PartKernel::prepare(&program, &env, &state, &RunOptions::default()).unwrap();
    // Part 4 is the interior, `[1:dim1-2][1:dim0-2]`.
    let interior = (0, 4);
    assert!(kernel.run_part_on(&mut state, interior, &[(1, 3)]).is_err());
    assert!(kernel
        .run_part_on(&mut state, (7, 0), &[(1, 3), (1, 3)])
        .is_err());
    assert!(kernel
        .run_part_on(&mut state, interior, &[(0, 3), (1, 3)])
        .is_err());
    assert!(kernel
        .run_part_on(&mut state, interior, &[(1, 3), (1, 300)])
        .is_err());
    assert!(kernel
        .run_part_on(&mut state, interior, &[(1, 3), (1, 3)])
        .is_ok());
    state.fields[0].pop();
    assert!(kernel
        .run_part_on(&mut state, interior, &[(1, 3), (1, 3)])
        .is_err());
}

#[test]
fn part_unit_of_the_blur_and_jacobi() {
    for name in ["gaussian_blur.sdsl", "jacobi2d.sdsl"] {
        let program = load(&common::examples_dir().join(name));
        let unit = emit_part_unit(&program, &CpuPlan::default());
        assert!(unit.source.contains(&format!("int {}(", unit.part_symbol)));
        insta::assert_snapshot!(
            format!("parts_{}", name.trim_end_matches(".sdsl")),
            unit.source
        );
    }
}
