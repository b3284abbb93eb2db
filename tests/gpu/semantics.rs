//! The operators' defined results hold bit for bit on every back-end: integer
//! `/` and `%` by zero and `MIN / -1`, float to integer conversions out of range
//! and NaN, reads at offsets far outside the grid (wrapping `int` offsets,
//! `long` offsets, parameter offsets, 1-point grids) under every boundary mode,
//! and the sign of a zero `fmin`/`fmax` and `min`/`max` reduction (-0.0 is
//! below +0.0).
//! Hand-written programs on field data full of zeros, `MIN`, -1, huge floats and
//! NaN run in the interpreter, natively in C and on OpenCL (PoCL in CI), and
//! their CUDA compiles with NVRTC without a warning; the `gpu_*` twins run
//! them on a CUDA GPU (ignored by default).
//!
//! NaNs are compared by their bits too, which these programs keep the same on
//! every back-end; in general a NaN's sign and payload are not part of a
//! result's meaning and do differ (see `ir::semantics`; `run --verify` takes any
//! NaN as equal to any NaN).

use crate::common;

use std::sync::OnceLock;

use stencilc::driver::emit::{emit, GpuTarget};
use stencilc::exec::cuda::nvrtc;
use stencilc::exec::options::RunOptions;
use stencilc::exec::{cuda, native, opencl, Bindings, Buffer, FieldState, RunSummary};
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, ScalarType, Value};
use stencilc::schedule::{Schedule, ScheduleRequest};
use stencilc::source::SourceFile;

const INTS: [i64; 10] = [7, -7, i32::MIN as i64, i32::MAX as i64, -1, 0, 5, 3, -2, 1];
const LONGS: [i64; 10] = [7, -7, i64::MIN, i64::MAX, -1, 0, 5, 3, -2, 1];
const FLOATS: [f64; 18] = [
    1e10,
    -1e10,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    2147483647.9,
    2147483648.0,
    -2147483648.5,
    -2147483649.0,
    -2.5,
    0.5,
    9.3e18,
    9.3e20,
    -9.3e20,
    9223372036854775807.0,
    -9223372036854775808.0,
    1e-30,
    -0.0,
];

fn parse(name: &str, text: &str) -> Program {
    stencilc::front::parse_program(SourceFile::new(format!("{name}.sdsl"), text.to_string()))
        .unwrap_or_else(|d| panic!("{name} does not parse:\n{d}"))
}

/// Field data: `a`-like fields (named `a*`, `d*`, `f*`) cycle through the
/// special values, `b`-like fields (named `b*`) through them more slowly, so
/// that every (dividend, divisor) pair occurs; everything else is `i + 1`.
fn state(program: &Program, env: &RunEnv) -> FieldState {
    let mut fields = Vec::new();
    for field in &program.fields {
        let len: usize = env.grid_dims()[field.grid.0].iter().product();
        let pick = |i: usize, table_len: usize| match field.name.chars().next() {
            Some('b') => Some((i / table_len) % table_len),
            Some('a' | 'd' | 'f') => Some(i % table_len),
            _ => None,
        };
        let buffer = match field.ty {
            ScalarType::Int => Buffer::Int(
                (0..len)
                    .map(|i| pick(i, INTS.len()).map_or(i as i32 + 1, |k| INTS[k] as i32))
                    .collect(),
            ),
            ScalarType::Long => Buffer::Long(
                (0..len)
                    .map(|i| pick(i, LONGS.len()).map_or(i as i64 + 1, |k| LONGS[k]))
                    .collect(),
            ),
            ScalarType::Float => Buffer::Float(
                (0..len)
                    .map(|i| pick(i, FLOATS.len()).map_or(i as f32 + 1.0, |k| FLOATS[k] as f32))
                    .collect(),
            ),
            ScalarType::Double => Buffer::Double(
                (0..len)
                    .map(|i| pick(i, FLOATS.len()).map_or(i as f64 + 1.0, |k| FLOATS[k]))
                    .collect(),
            ),
        };
        fields.push(vec![buffer; field.levels()]);
    }
    FieldState { fields }
}

fn bits(buffer: &Buffer) -> Vec<u64> {
    match buffer {
        Buffer::Int(v) => v.iter().map(|x| *x as u32 as u64).collect(),
        Buffer::Long(v) => v.iter().map(|x| *x as u64).collect(),
        Buffer::Float(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
        Buffer::Double(v) => v.iter().map(|x| x.to_bits()).collect(),
    }
}

/// The fields and the reductions of a run, as the interpreter left them.
struct Expected {
    state: FieldState,
    summary: RunSummary,
}

fn value_bits(value: Option<Value>) -> Option<u64> {
    value.map(|v| match v {
        Value::Int(x) => x as u32 as u64,
        Value::Long(x) => x as u64,
        Value::Float(x) => u64::from(x.to_bits()),
        Value::Double(x) => x.to_bits(),
    })
}

fn assert_same(
    program: &Program,
    expected: &Expected,
    (actual, summary): (&FieldState, &RunSummary),
    what: &str,
) {
    for ((name, want), (_, got)) in expected.summary.reductions.iter().zip(&summary.reductions) {
        assert_eq!(
            value_bits(*want),
            value_bits(*got),
            "{what}: {} reduction {name}: interpreter {want:?}, got {got:?}",
            program.name
        );
    }
    let expected = &expected.state;
    for (f, field) in program.fields.iter().enumerate() {
        for level in 0..field.levels() {
            let e = bits(&expected.fields[f][level]);
            let a = bits(&actual.fields[f][level]);
            if let Some(i) = (0..e.len()).find(|&i| e[i] != a[i]) {
                panic!(
                    "{what}: {} field {} element {i}: interpreter {:?}, got {:?}",
                    program.name,
                    field.name,
                    expected.fields[f][level].get(i),
                    actual.fields[f][level].get(i)
                );
            }
        }
    }
}

fn use_private_cache() {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("temporary directory"));
    std::env::set_var("STENCILC_CACHE_DIR", dir.path());
}

/// `text` parsed, bound to `params`, and the interpreter's result on the
/// fixed field data.
fn interpreted(name: &str, text: &str, params: &[(&str, f64)]) -> (Program, RunEnv, Expected) {
    let program = parse(name, text);

    let bindings = Bindings {
        params: program
            .params
            .iter()
            .map(|p| {
                let v = params.iter().find(|(n, _)| *n == p.name).expect("value").1;
                Value::Double(v).cast(p.ty)
            })
            .collect(),
    };
    let env = stencilc::exec::bind(&program, &bindings).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut expected = state(&program, &env);
    let summary =
        interp::run(&program, &env, &mut expected).unwrap_or_else(|e| panic!("{name}: {e}"));
    let expected = Expected {
        state: expected,
        summary,
    };
    (program, env, expected)
}

/// Runs `text` with `params` on the CUDA GPU and compares with the
/// interpreter bit for bit (the `gpu_*` tests; ignored without a GPU).
fn check_on_gpu(name: &str, text: &str, params: &[(&str, f64)]) {
    let (program, env, expected) = interpreted(name, text, params);
    let mut actual = state(&program, &env);
    let summary = cuda::run(&program, &env, &mut actual, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{name} on CUDA: {e}"));
    assert_same(&program, &expected, (&actual, &summary), "CUDA");
}

/// Runs `text` with `params` on every back-end here and compares with the
/// interpreter bit for bit. OpenCL runs first: its runtime must not change
/// what the C computes afterwards in the same process (`--backend auto`).
fn check(name: &str, text: &str, params: &[(&str, f64)]) {
    let (program, env, expected) = interpreted(name, text, params);
    let opencl_here = common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    );
    if opencl_here {
        for (label, request) in [
            ("default", ScheduleRequest::default()),
            (
                "no-shm",
                ScheduleRequest {
                    shm: stencilc::schedule::ShmRequest::None,
                    ..ScheduleRequest::default()
                },
            ),
        ] {
            let schedule = Schedule::new(&program, &request).unwrap_or_else(|e| panic!("{e}"));
            let mut actual = state(&program, &env);
            let summary = opencl::run_with_schedule(&program, &env, &mut actual, &schedule)
                .unwrap_or_else(|e| panic!("{name} on OpenCL: {e}"));
            let what = format!("OpenCL [{label}]");
            assert_same(&program, &expected, (&actual, &summary), &what);
        }
    }

    let cc_here = common::runtime_available(
        "cc",
        native::Compiler::from_env()
            .map(|_| ())
            .map_err(|e| e.to_string()),
    );
    if cc_here {
        use_private_cache();
        let mut actual = state(&program, &env);
        let summary = native::run(
            &program,
            &env,
            &mut actual,
            &RunOptions::default(),
            &mut |_| {},
        )
        .unwrap_or_else(|e| panic!("{name} in C: {e}"));
        assert_same(&program, &expected, (&actual, &summary), "C");
    }

    if common::runtime_available("nvrtc", nvrtc::load().map(|_| ())) {
        let source = emit(&program, &ScheduleRequest::default(), GpuTarget::Cuda)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let compiled = nvrtc::compile_with_log(&source, "sm_90")
            .unwrap_or_else(|e| panic!("NVRTC refused {name}: {e}\n{source}"));
        assert!(
            compiled.log.is_empty(),
            "NVRTC warned on {name}:\n{}\n{source}",
            compiled.log
        );
    }
}

/// What runs a program and compares it with the interpreter.
type Checker = fn(&str, &str, &[(&str, f64)]);

#[test]
fn integer_division_and_remainder_by_zero_and_minus_one() {
    division(check);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_integer_division_and_remainder_by_zero_and_minus_one() {
    division(check_on_gpu);
}

fn division(check: Checker) {
    let text = "int n;\nint zero;\nint minus;\ngrid g[n];\n\
        int griddata a on g at 0;\nint griddata b on g at 0;\n\
        long griddata al on g at 0;\nlong griddata bl on g at 0;\n\
        int griddata q on g at 0;\nint griddata r on g at 0;\n\
        long griddata ql on g at 0;\nlong griddata rl on g at 0;\n\
        int griddata s on g at 0;\nlong griddata sl on g at 0;\n\
        iterate 1 {\n  stencil div {\n\
        [0:n-1] : [0]q[0] = [0]a[0] / [0]b[0];\n\
        [0:n-1] : [0]r[0] = [0]a[0] % [0]b[0];\n\
        [0:n-1] : [0]ql[0] = [0]al[0] / [0]bl[0];\n\
        [0:n-1] : [0]rl[0] = [0]al[0] % [0]bl[0];\n\
        [0:n-1] : [0]s[0] = [0]a[0] / zero + [0]a[0] % zero + [0]a[0] / minus * 3 \
                            + [0]a[0] % minus + [0]a[0] / -1 + [0]a[0] % -1 + [0]a[0] / 3 + [0]a[0] % -3;\n\
        [0:n-1] : [0]sl[0] = [0]al[0] / (long)zero + [0]al[0] % (long)minus + [0]al[0] / -1L \
                             + [0]al[0] % 4L;\n\
        }\n}\n";
    check(
        "division",
        text,
        &[("n", 100.0), ("zero", 0.0), ("minus", -1.0)],
    );
}

#[test]
fn float_to_integer_conversions_saturate() {
    casts(check);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_float_to_integer_conversions_saturate() {
    casts(check_on_gpu);
}

fn casts(check: Checker) {
    let text = "int n;\ngrid g[n];\n\
        double griddata d on g at 0;\nfloat griddata f on g at 0;\n\
        int griddata id on g at 0;\nlong griddata ld on g at 0;\n\
        int griddata if32 on g at 0;\nlong griddata lf on g at 0;\n\
        int griddata mixed on g at 0;\n\
        iterate 1 {\n  stencil casts {\n\
        [0:n-1] : [0]id[0] = (int)[0]d[0];\n\
        [0:n-1] : [0]ld[0] = (long)[0]d[0];\n\
        [0:n-1] : [0]if32[0] = (int)[0]f[0];\n\
        [0:n-1] : [0]lf[0] = (long)[0]f[0];\n\
        [0:n-1] : [0]mixed[0] = (int)([0]d[0] * 3.0) + (int)(long)[0]f[0];\n\
        }\n}\n";
    check("casts", text, &[("n", 36.0)]);
}

/// Reads at offsets that wrap in `int`, `long` offsets up to the type's limits
/// (no overflow panic in a debug build), offsets many grid sizes away and
/// parameter offsets, under every boundary mode, on 1-, 2- and 5-point
/// grids.
#[test]
fn offsets_far_outside_the_grid_read_the_same_element() {
    far_offsets(check);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_offsets_far_outside_the_grid_read_the_same_element() {
    far_offsets(check_on_gpu);
}

fn far_offsets(check: Checker) {
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        let text = format!(
            "int n;\nint k;\ngrid g[n];\n\
             int griddata v on g at 0 boundary {mode};\nlong griddata w on g at 0 boundary {mode};\n\
             int griddata o1 on g at 0;\nint griddata o2 on g at 0;\nint griddata o3 on g at 0;\n\
             int griddata o4 on g at 0;\nlong griddata o5 on g at 0;\nlong griddata o6 on g at 0;\n\
             iterate 1 {{\n  stencil far {{\n\
             [0:n-1] : [0]o1[0] = [0]v[2147483647 + 3] + 10 * [0]v[-2147483647 - 5];\n\
             [0:n-1] : [0]o2[0] = [0]v[-7] + 10 * [0]v[13] + 100 * [0]v[-1] + 1000 * [0]v[1];\n\
             [0:n-1] : [0]o3[0] = [0]v[k] + 10 * [0]v[-k] + 100 * [0]v[k * 1000000000];\n\
             [0:n-1] : [0]o4[0] = [0]v[(int)(4294967296L + 5L)] + 10 * [0]v[4611686018427387904L * 4L + 3L];\n\
             [0:n-1] : [0]o5[0] = [0]w[4294967301L] + 10L * [0]w[-4294967301L] + 100L * [0]w[(long)k * 3000000000L];\n\
             [0:n-1] : [0]o6[0] = [0]w[9223372036854775807L] + 10L * [0]w[-9223372036854775807L - 1L] \
                                  + 100L * [0]w[(long)k * 4611686018427387904L];\n\
             }}\n}}\n"
        );
        for n in [1.0, 2.0, 5.0] {
            for k in [3.0, -11.0] {
                check(
                    &format!("offsets_{mode}_n{n}_k{k}"),
                    &text,
                    &[("n", n), ("k", k)],
                );
            }
        }
    }
}

/// `min` and `max` reductions over +0.0 and -0.0: -0.0 is below +0.0, so the
/// minimum is -0.0 and the maximum +0.0 whichever the interpreter meets first
/// and however OpenMP's threads and the GPU's blocks combine (in 2-D rows
/// and in 1-D runs, on more points than one block or one thread holds).
#[test]
fn zero_extrema_order_minus_zero_below_plus_zero() {
    zero_extrema(check);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_zero_extrema_order_minus_zero_below_plus_zero() {
    zero_extrema(check_on_gpu);
}

fn zero_extrema(check: Checker) {
    // `p` holds +0.0 in its first half and -0.0 in its second; `q` the other
    // way round: keeping the first of equal values gave a +0.0 minimum of `p`
    // and a -0.0 maximum of `q`.
    let texts = [
        (
            "zero_extrema_2d",
            "int n;\ngrid g[n][n];\nfloat griddata p on g at 0;\ndouble griddata q on g at 0;\n\
             iterate 1 {\n  stencil zeros {\n\
             [0:n/2-1][0:n-1] : [0]p[0][0] = 0.0f;\n[n/2:n-1][0:n-1] : [0]p[0][0] = -0.0f;\n\
             [0:n/2-1][0:n-1] : [0]q[0][0] = -0.0;\n[n/2:n-1][0:n-1] : [0]q[0][0] = 0.0;\n  }\n\
             reduction pmin min { [0:n-1][0:n-1] : [0]p[0][0]; }\n\
             reduction pmax max { [0:n-1][0:n-1] : [0]p[0][0]; }\n\
             reduction qmin min { [0:n-1][0:n-1] : [0]q[0][0]; }\n\
             reduction qmax max { [0:n-1][0:n-1] : [0]q[0][0]; }\n}\n",
            300.0,
        ),
        (
            "zero_extrema_1d",
            "int n;\ngrid g[n];\nfloat griddata p on g at 0;\ndouble griddata q on g at 0;\n\
             iterate 1 {\n  stencil zeros {\n\
             [0:n/2-1] : [0]p[0] = 0.0f;\n[n/2:n-1] : [0]p[0] = -0.0f;\n\
             [0:n/2-1] : [0]q[0] = -0.0;\n[n/2:n-1] : [0]q[0] = 0.0;\n  }\n\
             reduction pmin min { [0:n-1] : [0]p[0]; }\n\
             reduction pmax max { [0:n-1] : [0]p[0]; }\n\
             reduction qmin min { [0:n-1] : [0]q[0]; }\n\
             reduction qmax max { [0:n-1] : [0]q[0]; }\n}\n",
            70000.0,
        ),
    ];
    for (name, text, n) in texts {
        let (_, _, expected) = interpreted(name, text, &[("n", n)]);
        let sign_negative = |reduction: &str| {
            let (_, value) = expected
                .summary
                .reductions
                .iter()
                .find(|(r, _)| r == reduction)
                .expect("the reduction ran");
            let value = value.expect("evaluated");
            assert_eq!(value.as_f64(), 0.0, "{name} {reduction}");
            value.as_f64().is_sign_negative()
        };
        assert!(sign_negative("pmin"), "{name}: min of +0.0 then -0.0");
        assert!(!sign_negative("pmax"), "{name}: max of +0.0 then -0.0");
        assert!(sign_negative("qmin"), "{name}: min of -0.0 then +0.0");
        assert!(!sign_negative("qmax"), "{name}: max of -0.0 then +0.0");
        check(name, text, &[("n", n)]);
    }
}

/// `fmin`/`fmax` on every pair of the special values, NaN and both zeros
/// among them, on variables and on literals: C's functions leave the sign of
/// a zero result unspecified (PoCL and glibc gave different ones).
#[test]
fn fmin_and_fmax_order_minus_zero_below_plus_zero() {
    zero_fmin_fmax(check);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_fmin_and_fmax_order_minus_zero_below_plus_zero() {
    zero_fmin_fmax(check_on_gpu);
}

fn zero_fmin_fmax(check: Checker) {
    let text = "int n;\ngrid g[n];\n\
        float griddata af on g at 0;\nfloat griddata bf on g at 0;\n\
        double griddata ad on g at 0;\ndouble griddata bd on g at 0;\n\
        float griddata lo32 on g at 0;\nfloat griddata hi32 on g at 0;\n\
        double griddata lo64 on g at 0;\ndouble griddata hi64 on g at 0;\n\
        float griddata k32 on g at 0;\ndouble griddata k64 on g at 0;\n\
        iterate 1 {\n  stencil extrema {\n\
        [0:n-1] : [0]lo32[0] = fminf([0]af[0], [0]bf[0]);\n\
        [0:n-1] : [0]hi32[0] = fmaxf([0]af[0], [0]bf[0]);\n\
        [0:n-1] : [0]lo64[0] = fmin([0]ad[0], [0]bd[0]);\n\
        [0:n-1] : [0]hi64[0] = fmax([0]ad[0], [0]bd[0]);\n\
        [0:n-1] : [0]k32[0] = fminf(0.0f, -0.0f) * 2.0f - fmaxf(-0.0f, 0.0f);\n\
        [0:n-1] : [0]k64[0] = fmax(-0.0, 0.0) * fmin(0.0, -0.0);\n\
        }\n}\n";
    // Every (a, b) pair of the 18 special values.
    check("fmin_fmax", text, &[("n", 324.0)]);
}
