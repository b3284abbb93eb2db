//! The examples run by the interpreter against hand-written reference loops:
//! Rician denoise (guide fig. 7.1, bit for bit), Jacobi, heat and wave (bit for
//! bit), the Gaussian blur in both forms under four boundary modes, reductions,
//! and the run-time bounds errors.

use crate::common;
use crate::reference;

use stencilc::interp;

use stencilc::exec::{Bindings, Buffer, ExecError, FieldState, RunSummary};
use stencilc::ir::env::RunEnv;
use stencilc::ir::{BoundaryMode, Program, Value};
use stencilc::source::SourceFile;

fn example(name: &str) -> String {
    std::fs::read_to_string(common::examples_dir().join(name)).expect("example exists")
}

fn parse(name: &str, text: &str) -> Program {
    match stencilc::front::parse_program(SourceFile::new(name, text))
        .and_then(stencilc::analysis::checked)
    {
        Ok(p) => p,
        Err(d) => panic!("{name} does not compile:\n{d}"),
    }
}

/// Binds parameters and inputs by name and runs the interpreter.
fn run(
    program: &Program,
    params: &[(&str, Value)],
    inputs: Vec<(&str, Buffer)>,
) -> Result<(FieldState, RunSummary), ExecError> {
    let values = program
        .params
        .iter()
        .map(|p| {
            params
                .iter()
                .find(|(n, _)| *n == p.name)
                .unwrap_or_else(|| panic!("no value for `{}`", p.name))
                .1
        })
        .collect();
    let env = RunEnv::new(program, &Bindings { params: values })?;
    let mut slots: Vec<Option<Buffer>> = vec![None; program.fields.len()];
    for (name, buffer) in inputs {
        let f = program
            .fields
            .iter()
            .position(|f| f.name == name)
            .expect("field exists");
        slots[f] = Some(buffer);
    }
    let mut state = FieldState::initial(program, &env, slots)?;
    let summary = interp::run(program, &env, &mut state)?;
    Ok((state, summary))
}

fn newest<'a>(program: &Program, state: &'a FieldState, name: &str) -> &'a Buffer {
    let f = program
        .fields
        .iter()
        .position(|f| f.name == name)
        .expect("field exists");
    state.newest(program, f)
}

#[test]
fn rician_matches_the_guide_c_reference_bit_for_bit() {
    let text = example("rician3d.sdsl").replace("every 10 iterations", "every 1 iterations");
    assert!(text.contains("every 1 iterations"));
    let program = parse("rician3d.sdsl", &text);
    let (dim0, dim1, dim2) = (32usize, 24usize, 20usize);
    let (sigma, lambda) = (0.05, 0.065);
    let f = reference::random_unit(7, dim0 * dim1 * dim2);
    let (want, want_iters) = reference::rician::rician3d(&f, sigma, lambda, dim0, dim1, dim2);
    let (state, summary) = run(
        &program,
        &[
            ("dim0", Value::Int(dim0 as i32)),
            ("dim1", Value::Int(dim1 as i32)),
            ("dim2", Value::Int(dim2 as i32)),
            ("sigma", Value::Double(sigma)),
            ("lambda", Value::Double(lambda)),
        ],
        vec![("U", Buffer::Double(f.clone())), ("F", Buffer::Double(f))],
    )
    .unwrap();
    assert_eq!(summary.iterations as usize, want_iters);
    assert_eq!(summary.stopped_by_check, want_iters < 50);
    let Buffer::Double(got) = newest(&program, &state, "U") else {
        panic!("U is double")
    };
    let same = got
        .iter()
        .zip(&want)
        .filter(|(a, b)| a.to_bits() == b.to_bits())
        .count();
    assert_eq!(same, want.len(), "every element bit-identical");
}

#[test]
fn jacobi_matches_hand_written_loops() {
    let program = parse("jacobi2d.sdsl", &example("jacobi2d.sdsl"));
    let (dim0, dim1) = (37usize, 23usize);
    let input: Vec<f32> = reference::random_unit(3, dim0 * dim1)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let (want, want_iters) = reference::jacobi2d(&input, dim0, dim1, 1000);
    let (state, summary) = run(
        &program,
        &[
            ("dim0", Value::Int(dim0 as i32)),
            ("dim1", Value::Int(dim1 as i32)),
        ],
        vec![("a", Buffer::Float(input))],
    )
    .unwrap();
    assert!(
        want_iters < 1000 && want_iters % 4 == 0,
        "converges on a check"
    );
    assert_eq!(summary.iterations as usize, want_iters);
    assert!(summary.stopped_by_check);
    assert_eq!(newest(&program, &state, "a"), &Buffer::Float(want));
    let (name, value) = &summary.reductions[0];
    assert_eq!(name, "max_diff");
    assert!(matches!(value, Some(Value::Double(d)) if *d < 1e-5));
}

#[test]
fn heat_matches_hand_written_loops() {
    let program = parse("heat3d.sdsl", &example("heat3d.sdsl"));
    let (nx, ny, nz, steps, alpha) = (19usize, 13usize, 7usize, 25usize, 0.1);
    let input = reference::random_unit(11, nx * ny * nz);
    let want = reference::heat3d(&input, nx, ny, nz, steps, alpha);
    let (state, summary) = run(
        &program,
        &[
            ("nx", Value::Int(nx as i32)),
            ("ny", Value::Int(ny as i32)),
            ("nz", Value::Int(nz as i32)),
            ("steps", Value::Int(steps as i32)),
            ("alpha", Value::Double(alpha)),
        ],
        vec![("u", Buffer::Double(input))],
    )
    .unwrap();
    assert_eq!(summary.iterations as usize, steps);
    assert!(!summary.stopped_by_check);
    assert_eq!(newest(&program, &state, "u"), &Buffer::Double(want));
}

#[test]
fn wave_matches_hand_written_loops_on_a_non_square_grid() {
    let text = example("wave2d.sdsl")
        .replace("int n;", "int n;\nint m;")
        .replace("grid g[n][n];", "grid g[m][n];")
        .replace("[1:n-2][1:n-2]", "[1:m-2][1:n-2]")
        .replace("[0:n-1][0:n-1]", "[0:m-1][0:n-1]");
    let program = parse("wave2d.sdsl", &text);
    let (m, n, steps, c2) = (17usize, 29usize, 40usize, 0.2f32);
    let input: Vec<f32> = reference::random_unit(5, m * n)
        .iter()
        .map(|&v| v as f32 - 0.5)
        .collect();
    let (want, energy) = reference::wave2d(&input, m, n, steps, c2);
    let (state, summary) = run(
        &program,
        &[
            ("n", Value::Int(n as i32)),
            ("m", Value::Int(m as i32)),
            ("steps", Value::Int(steps as i32)),
            ("c2", Value::Float(c2)),
        ],
        vec![("u", Buffer::Float(input))],
    )
    .unwrap();
    assert_eq!(summary.iterations as usize, steps);
    assert_eq!(newest(&program, &state, "u"), &Buffer::Float(want));
    assert_eq!(
        summary.reductions[0],
        ("energy".to_string(), Some(Value::Float(energy)))
    );
}

fn blur(name: &str, mode: BoundaryMode, width: usize, height: usize, img: &[f32]) -> Vec<f64> {
    let text = example(name).replace("boundary clamp", &format!("boundary {}", mode.name()));
    let program = parse(name, &text);
    let (state, _) = run(
        &program,
        &[
            ("width", Value::Int(width as i32)),
            ("height", Value::Int(height as i32)),
        ],
        vec![("img", Buffer::Float(img.to_vec()))],
    )
    .unwrap();
    newest(&program, &state, "out").to_f64()
}

#[test]
fn gaussian_blur_both_forms_match_a_direct_convolution() {
    let (width, height) = (37usize, 23usize);
    let img: Vec<f32> = reference::random_unit(13, width * height)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let w = reference::gaussian_weights(1.1, 3);
    for mode in [
        BoundaryMode::Clamp,
        BoundaryMode::Mirror,
        BoundaryMode::Periodic,
        BoundaryMode::Zero,
    ] {
        let want = reference::convolve(&img, width, height, &w, mode);
        for name in ["gaussian_blur.sdsl", "gaussian_blur_separable.sdsl"] {
            let got = blur(name, mode, width, height, &img);
            let worst = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                worst < 1e-5,
                "{name} with boundary {}: off by {worst}",
                mode.name()
            );
        }
    }
    // The borders differ between modes: the comparison above is not vacuous.
    let clamp = reference::convolve(&img, width, height, &w, BoundaryMode::Clamp);
    let zero = reference::convolve(&img, width, height, &w, BoundaryMode::Zero);
    assert!((clamp[0] - zero[0]).abs() > 1e-3);
}

const REDUCTIONS: &str = "\
int n;
int m;
grid g[m][n];
double griddata x on g at 0;
int griddata k on g at 0;
double griddata y on g at 0;
iterate 1 {
    stencil copy {
        [0:m-1][0:n-1] : [0]y[0][0] = 2.0 * [0]x[0][0];
    }
    reduction total + { [0:m-1][0:n-1] : [0]y[0][0]; }
    reduction product * { [0:m-1][0:n-1] : [0]k[0][0]; [0][0] : 2; }
    reduction largest max { [0:m-1][0:n-1] : [0]x[0][0]; }
    reduction smallest min { [1:m-1][0:n-1] : [0]x[0][0]; [0][0:n-1] : [0]x[0][0] + 1.0; }
}
";

#[test]
fn reductions_sum_multiply_and_take_extremes() {
    let program = parse("reductions.sdsl", REDUCTIONS);
    let (m, n) = (9usize, 300usize);
    let x: Vec<f64> = reference::random_unit(17, m * n)
        .iter()
        .map(|v| v - 0.5)
        .collect();
    let k: Vec<i32> = (0..m * n)
        .map(|i| if i % 97 == 0 { -1 } else { 1 })
        .collect();
    let (_, summary) = run(
        &program,
        &[("n", Value::Int(n as i32)), ("m", Value::Int(m as i32))],
        vec![
            ("x", Buffer::Double(x.clone())),
            ("k", Buffer::Int(k.clone())),
        ],
    )
    .unwrap();
    // `+`: per-row partials, combined in row order.
    let mut total = 0.0f64;
    for row in x.chunks(n) {
        total += row.iter().fold(0.0, |acc, v| acc + 2.0 * v);
    }
    let product = 2 * k.iter().product::<i32>();
    let largest = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let smallest = x[n..]
        .iter()
        .chain(&x[..n].iter().map(|v| v + 1.0).collect::<Vec<_>>())
        .cloned()
        .fold(f64::INFINITY, f64::min);
    let get = |name: &str| {
        summary
            .reductions
            .iter()
            .find(|(r, _)| r == name)
            .unwrap()
            .1
    };
    assert_eq!(get("total"), Some(Value::Double(total)));
    assert_eq!(get("product"), Some(Value::Int(product)));
    assert_eq!(get("largest"), Some(Value::Double(largest)));
    assert_eq!(get("smallest"), Some(Value::Double(smallest)));
}

const OUT_OF_GRID: &str = "\
int n;
grid g[n][n];
double griddata a on g at 0,1;
iterate 1 {
    stencil edge {
        [0:n-1][n-1] : [1]a[0][n-1] = [0]a[0][0];
    }
}
";

#[test]
fn out_of_grid_writes_are_refused_before_running() {
    let program = parse("edge.sdsl", OUT_OF_GRID);
    let err = run(&program, &[("n", Value::Int(10))], vec![]).unwrap_err();
    insta::assert_snapshot!("write_past_last_column", err.to_string());
    // n = 1 puts the write at column 0: inside.
    assert!(run(&program, &[("n", Value::Int(1))], vec![]).is_ok());
}

#[test]
fn reads_outside_a_none_field_are_refused_with_the_loop_value() {
    let text = example("gaussian_blur.sdsl").replace(" boundary clamp", "");
    match stencilc::front::parse_program(SourceFile::new("gaussian_blur.sdsl", text.as_str()))
        .and_then(stencilc::analysis::checked)
    {
        // The front-end may prove it without parameter values (rows 0 and -3).
        Err(d) => insta::assert_snapshot!("blur_without_boundary_static", d.to_string()),
        Ok(program) => {
            let err = run(
                &program,
                &[("width", Value::Int(37)), ("height", Value::Int(23))],
                vec![],
            )
            .unwrap_err();
            insta::assert_snapshot!("blur_without_boundary_run_time", err.to_string());
        }
    }
}

#[test]
fn results_do_not_depend_on_the_number_of_threads() {
    let program = parse("reductions.sdsl", REDUCTIONS);
    let (m, n) = (64usize, 300usize);
    let x: Vec<f64> = reference::random_unit(23, m * n)
        .iter()
        .map(|v| (v - 0.5) * 1e3)
        .collect();
    let go = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let (state, summary) = run(
                &program,
                &[("n", Value::Int(n as i32)), ("m", Value::Int(m as i32))],
                vec![("x", Buffer::Double(x.clone()))],
            )
            .unwrap();
            (state, summary.reductions)
        })
    };
    let (state1, reductions1) = go(1);
    let (state4, reductions4) = go(4);
    assert_eq!(state1, state4);
    assert_eq!(reductions1, reductions4);
}
