//! `--fma` on the C back-end: compiled with `-ffp-contract=fast` (in place of
//! `-ffp-contract=off`), headed by a notice, and within the tolerance that
//! `run --verify` then states, 1e-4 (`float`) and 1e-10 (`double`) of the
//! field's largest magnitude, of the interpreter's results.

use crate::common;

use stencilc::exec::native::{self, compile};
use stencilc::exec::options::RunOptions;
use stencilc::exec::{Bindings, Buffer, FieldState};
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{ScalarType, Value};
use stencilc::source::SourceFile;

#[test]
fn fma_flags_replace_the_contraction_flag() {
    let plain = compile::flags(None, false);
    assert!(plain.iter().any(|f| f == "-ffp-contract=off"));
    let fused = compile::flags_with_fma(None, false, true);
    assert!(fused.iter().any(|f| f == "-ffp-contract=fast"));
    assert!(!fused.iter().any(|f| f == "-ffp-contract=off"), "{fused:?}");
    let own = compile::flags_with_fma(Some("-O2 -ffp-contract=on"), false, true);
    assert_eq!(own, ["-O2", "-ffp-contract=fast"]);
}

#[test]
fn c_with_fma_agrees_with_the_interpreter_within_the_stated_tolerance() {
    if !common::runtime_available(
        "cc",
        native::Compiler::from_env()
            .map(|_| ())
            .map_err(|e| e.to_string()),
    ) {
        return;
    }
    let options = RunOptions {
        fma: true,
        ..RunOptions::default()
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, n) in [
        ("bench/programs/j2d5pt.sdsl", 37),
        ("bench/programs/star3d1r.sdsl", 13),
        ("bench/programs/j3d27pt.sdsl", 11),
        ("examples/heat3d.sdsl", 11),
    ] {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        let program = stencilc::front::parse_program(SourceFile::new(path, text))
            .and_then(stencilc::analysis::checked)
            .unwrap_or_else(|d| panic!("{d}"));
        let params = program
            .params
            .iter()
            .map(|p| match p.name.as_str() {
                "steps" => Value::Int(4),
                "alpha" => Value::Double(0.1),
                _ => Value::Int(n).cast(p.ty),
            })
            .collect();
        let env = RunEnv::new(&program, &Bindings { params }).unwrap();
        let start = |f: usize, len: usize, ty: ScalarType| {
            let v = |i: usize| (((i * 7919 + f * 104729) % 1000) as f64) / 1000.0;
            match ty {
                ScalarType::Float => Buffer::Float((0..len).map(|i| v(i) as f32).collect()),
                _ => Buffer::Double((0..len).map(v).collect()),
            }
        };
        let state = FieldState {
            fields: program
                .fields
                .iter()
                .enumerate()
                .map(|(f, field)| {
                    let len = env.field_len(&program, stencilc::ir::FieldId(f));
                    vec![start(f, len, field.ty); field.levels()]
                })
                .collect(),
        };
        let mut expected = state.clone();
        interp::run(&program, &env, &mut expected).unwrap();
        let mut got = state;
        native::run(&program, &env, &mut got, &options, &mut |_| {})
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let (unit, _) = native::prepare(&program, &options).unwrap();
        assert!(unit.source.starts_with("/* --fma:"), "{path}");
        for (f, field) in program.fields.iter().enumerate() {
            let e = expected.newest(&program, f).to_f64();
            let a = got.newest(&program, f).to_f64();
            let scale = e.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let tol = if field.ty == ScalarType::Float {
                1e-4
            } else {
                1e-10
            } * scale;
            for (i, (x, y)) in e.iter().zip(&a).enumerate() {
                assert!(
                    (x - y).abs() <= tol,
                    "{path} {}[{i}]: {x} vs {y}",
                    field.name
                );
            }
        }
    }
}
