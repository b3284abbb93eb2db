//! Interpreter speed on the two workloads, printed (no thresholds):
//! `cargo test --release --test interp -- --ignored --nocapture speed::`.

use crate::common;

use std::time::Instant;

use stencilc::interp;

use stencilc::exec::{Bindings, Buffer, FieldState};
use stencilc::ir::env::RunEnv;
use stencilc::ir::Value;
use stencilc::source::SourceFile;

fn run(name: &str, text: &str, params: Vec<Value>, input: (&str, Buffer)) {
    let program = stencilc::front::parse_program(SourceFile::new(name, text))
        .and_then(stencilc::analysis::checked)
        .expect("compiles");
    let env = RunEnv::new(&program, &Bindings { params }).expect("valid parameters");
    let mut inputs: Vec<Option<Buffer>> = vec![None; program.fields.len()];
    for (f, field) in program.fields.iter().enumerate() {
        if field.name == input.0 || (name == "rician3d.sdsl" && field.name == "F") {
            inputs[f] = Some(input.1.clone());
        }
    }
    let mut state = FieldState::initial(&program, &env, inputs).expect("inputs fit");
    let start = Instant::now();
    let summary = interp::run(&program, &env, &mut state).expect("runs");
    println!(
        "{name}: {} iterations in {:.3} s wall ({:.3} s compute), {} threads",
        summary.iterations,
        start.elapsed().as_secs_f64(),
        summary.times.compute.as_secs_f64(),
        rayon::current_num_threads()
    );
}

#[test]
#[ignore = "a measurement; run in release mode"]
fn speed_of_jacobi_2048_and_rician_64() {
    let text = std::fs::read_to_string(common::examples_dir().join("jacobi2d.sdsl")).unwrap();
    let text = text.replace("iterate 1000", "iterate 100");
    let n = 2048usize;
    let input: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
        .collect();
    run(
        "jacobi2d.sdsl",
        &text,
        vec![Value::Int(n as i32), Value::Int(n as i32)],
        ("a", Buffer::Float(input)),
    );

    let text = std::fs::read_to_string(common::examples_dir().join("rician3d.sdsl")).unwrap();
    let text = text.replace("max_diff < TOL", "max_diff < 0.0");
    let n = 64usize;
    let f: Vec<f64> = (0..n * n * n)
        .map(|i| ((i * 7919) % 1000) as f64 / 1000.0)
        .collect();
    run(
        "rician3d.sdsl",
        &text,
        vec![
            Value::Int(n as i32),
            Value::Int(n as i32),
            Value::Int(n as i32),
            Value::Double(0.05),
            Value::Double(0.065),
        ],
        ("U", Buffer::Double(f)),
    );
}
