//! The naive baselines of `bench/gpu/naive.cu`, which `bench-gpu` times
//! stencilc's kernels against, compute what their programs compute: each runs
//! in the CUDA emulator on a small grid (sizes not multiples of its block),
//! resolved by its recipe as `bench-gpu` resolves it (constant tables passed
//! as arrays), and gives the
//! interpreter's fields after one iteration, bit for bit (same arithmetic in
//! the same order). No GPU needed.

use crate::gpu_common::*;

use stencilc::bench::gpu::naive::{self, Resolved};
use stencilc::emu::{self, Arg, Launch, Limits};
use stencilc::exec::{Buffer, FieldState};
use stencilc::front::cuda::parse_unit;
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::Program;
use stencilc::source::SourceFile;

/// A kernel of naive.cu as the emulator's subset takes it: after the device
/// functions it calls, its `C(x)` literals written out as `((real)(x))`
/// (object-like macros only), and each `__constant__` table it reads made a
/// pointer parameter after the others (no constant memory), with the
/// table's values to pass there.
fn kernel_text(name: &str) -> (String, Vec<Vec<f64>>) {
    let source = naive::SOURCE;
    let head = format!("extern \"C\" __global__ void {name}(");
    let start = source.find(&head).expect("the kernel is in naive.cu");
    let open = start + source[start..].find('{').expect("a body");
    let mut depth = 0;
    let mut end = open;
    for (i, c) in source[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            end = open + i + 1;
            break;
        }
    }
    let mut kernel = source[start..end].to_string();
    let mut tables = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("__constant__ real ") {
        let decl = &rest[at + "__constant__ real ".len()..];
        let table = &decl[..decl.find('[').expect("an array")];
        let values = &decl[decl.find('{').expect("values") + 1..decl.find('}').expect("end")];
        if kernel.contains(&format!("{table}[")) {
            let params_end = kernel.find(')').expect("a parameter list");
            kernel.insert_str(params_end, &format!(", const real* __restrict__ {table}"));
            tables.push(
                values
                    .split(',')
                    .map(|v| v.trim().parse().expect("a number"))
                    .collect(),
            );
        }
        rest = &decl[decl.find('}').expect("end")..];
    }
    let mut text = String::new();
    if kernel.contains("clampi(") {
        let helper = source.find("static __device__").expect("clampi is defined");
        let helper_end = helper + source[helper..].find("\n}\n").expect("its end") + 3;
        text.push_str(&source[helper..helper_end]);
    }
    text.push_str(&kernel);
    (expand_literals(&text), tables)
}

/// `C(expr)` → `((real)(expr))`, parentheses balanced.
fn expand_literals(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("C(") {
        let preceded_by_ident = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..at]);
        if preceded_by_ident {
            out.push_str("C(");
            rest = &rest[at + 2..];
            continue;
        }
        let inner = &rest[at + 2..];
        let mut depth = 1;
        let close = inner
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .map(|(i, _)| i)
            .expect("balanced C(...)");
        out.push_str(&format!("((real)({}))", &inner[..close]));
        rest = &inner[close + 1..];
    }
    out.push_str(rest);
    out
}

fn to_emu(buffer: &Buffer) -> Vec<emu::Value> {
    match buffer {
        Buffer::Int(v) => v.iter().map(|x| emu::Value::Int(*x)).collect(),
        Buffer::Long(v) => v.iter().map(|x| emu::Value::Long(*x)).collect(),
        Buffer::Float(v) => v.iter().map(|x| emu::Value::Float(*x)).collect(),
        Buffer::Double(v) => v.iter().map(|x| emu::Value::Double(*x)).collect(),
    }
}

fn from_emu(values: &[emu::Value], like: &Buffer) -> Buffer {
    match like {
        Buffer::Int(_) => Buffer::Int(values.iter().map(|v| v.as_i64() as i32).collect()),
        Buffer::Long(_) => Buffer::Long(values.iter().map(|v| v.as_i64()).collect()),
        Buffer::Float(_) => Buffer::Float(values.iter().map(|v| v.as_f64() as f32).collect()),
        Buffer::Double(_) => Buffer::Double(values.iter().map(|v| v.as_f64()).collect()),
    }
}

fn param_value(value: stencilc::ir::Value) -> emu::Value {
    match value {
        stencilc::ir::Value::Int(v) => emu::Value::Int(v),
        stencilc::ir::Value::Long(v) => emu::Value::Long(v),
        stencilc::ir::Value::Float(v) => emu::Value::Float(v),
        stencilc::ir::Value::Double(v) => emu::Value::Double(v),
    }
}

/// Runs the naive sweep of `name` on `state` (levels as at the start of an
/// iteration; the sweep writes the newest).
fn run_naive(name: &str, program: &Program, env: &RunEnv, state: &mut FieldState) {
    let recipe = naive::recipe(name).expect("a naive recipe");
    let resolved = naive::resolve(program, recipe).expect("the recipe matches the program");
    let real = program.fields[0].ty.name().to_string();
    let (grid, block) = naive::launch_shape(program, env);
    for (launch, args) in recipe.iter().zip(&resolved) {
        let (text, tables) = kernel_text(launch.kernel);
        let source = SourceFile::new(format!("naive_{}.cu", launch.kernel), text);
        let unit = parse_unit(&source, &[("real".to_string(), real.clone())])
            .unwrap_or_else(|d| panic!("{}: outside the emulator's subset:\n{d}", launch.kernel));
        let kernel = unit.kernel(Some(launch.kernel)).expect("parsed");
        let mut emu_args: Vec<Arg> = args
            .iter()
            .map(|arg| match *arg {
                Resolved::Level(f, level) => Arg::Array(to_emu(&state.fields[f][level])),
                Resolved::Param(p) => Arg::Scalar(param_value(env.params()[p])),
            })
            .collect();
        let elem = |v: f64| match program.fields[0].ty {
            stencilc::ir::ScalarType::Float => emu::Value::Float(v as f32),
            _ => emu::Value::Double(v),
        };
        for table in &tables {
            emu_args.push(Arg::Array(table.iter().map(|&v| elem(v)).collect()));
        }
        let report = emu::run(
            kernel,
            Launch { grid, block },
            &mut emu_args,
            Limits::default(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", launch.kernel));
        assert!(report.is_clean(), "{}: {report:?}", launch.kernel);
        for (arg, emu_arg) in args.iter().zip(&emu_args) {
            if let (Resolved::Level(f, level), Arg::Array(values)) = (arg, emu_arg) {
                state.fields[*f][*level] = from_emu(values, &state.fields[*f][*level]);
            }
        }
    }
}

fn check(name: &str, params: &[(&str, f64)]) {
    let program = bench_program(name);
    let env = RunEnv::new(&program, &bindings(&program, params)).expect("valid parameters");
    let mut expected = initial_state(&program, &env);
    interp::run(&program, &env, &mut expected).expect("the interpreter runs");
    let mut actual = initial_state(&program, &env);
    run_naive(name, &program, &env, &mut actual);
    for (f, field) in program.fields.iter().enumerate() {
        // The naive sweep leaves its result where it wrote it (the highest
        // level); the interpreter has rotated it to the newest.
        let naive = &actual.fields[f][field.levels() - 1];
        assert!(
            naive == expected.newest(&program, f),
            "{name}: the naive baseline's `{}` differs from the interpreter's",
            field.name
        );
    }
}

#[test]
fn the_naive_baselines_compute_what_their_programs_compute() {
    let two_d = [("n", 37.0), ("steps", 1.0)];
    for name in ["j2d5pt", "j2d9pt", "box2d2r", "gradient2d"] {
        check(name, &two_d);
    }
    let three_d = [("n", 11.0), ("steps", 1.0)];
    check("star3d1r", &three_d);
    check("j3d27pt", &three_d);
    check("heat3d", &[("n", 11.0), ("steps", 1.0), ("alpha", 0.1)]);
    check(
        "gaussian_blur",
        &[("width", 37.0), ("height", 23.0), ("steps", 1.0)],
    );
    check(
        "rician3d",
        &[
            ("dim0", 11.0),
            ("dim1", 9.0),
            ("dim2", 7.0),
            ("steps", 1.0),
            ("sigma", 0.05),
            ("lambda", 0.065),
        ],
    );
}
