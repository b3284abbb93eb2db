//! The CUDA-subset kernels of `examples/cuda/` printed as OpenCL C and run on
//! OpenCL (PoCL in CI), compared element by element with the emulator on
//! random inputs, on grids that blocks do not tile exactly where the kernel
//! guards its bounds. Annotated kernels run with their annotations stripped
//! (marked reads become the global reads they mark). The kernels `stencilc synth`
//! writes run there too, against their originals, bit for bit.

use std::sync::Arc;

use crate::common;

use stencilc::back::opencl::from_cuda::print_kernel;
use stencilc::emu::{self, Arg, Launch, Limits, Value};
use stencilc::exec::opencl::{self, cuda_kernel::run_cuda_kernel};
use stencilc::front::cuda::parse_unit;
use stencilc::source::SourceFile;

fn opencl_here() -> bool {
    common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    )
}

fn example(name: &str) -> Arc<SourceFile> {
    let path = common::examples_dir().join("cuda").join(name);
    let text = std::fs::read_to_string(&path).expect("example readable");
    SourceFile::new(name, text)
}

fn defines(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// `n` random values in [-1, 1) of a float type (deterministic per seed).
fn random(n: usize, seed: u64, double: bool) -> Arg {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    Arg::Array(
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let v = (s % 2_000_000) as f64 / 1_000_000.0 - 1.0;
                if double {
                    Value::Double(v)
                } else {
                    Value::Float(v as f32)
                }
            })
            .collect(),
    )
}

fn zeros(n: usize, double: bool) -> Arg {
    let zero = if double {
        Value::Double(0.0)
    } else {
        Value::Float(0.0)
    };
    Arg::Array(vec![zero; n])
}

fn int(v: i32) -> Arg {
    Arg::Scalar(Value::Int(v))
}

/// Runs `file`'s kernel in the emulator and on OpenCL; asserts the emulator
/// finds nothing and every array agrees (floats within 1e-5, doubles within
/// 1e-12 of the largest magnitude: the OpenCL compiler may contract `a*b+c`).
fn compare(file: &str, defs: &[(&str, &str)], launch: Launch, args: Vec<Arg>) {
    let source = example(file);
    let defs = defines(defs);
    let unit = parse_unit(&source, &defs).unwrap_or_else(|d| panic!("{d}"));
    let kernel = &unit.kernels[0];
    let mut emulated = args.clone();
    let report = emu::run(kernel, launch, &mut emulated, Limits::default()).unwrap();
    assert!(report.is_clean(), "{file}: {:?}", report.findings);
    let mut on_opencl = args.clone();
    run_cuda_kernel(kernel, &source, &defs, launch, &mut on_opencl)
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut compared = 0;
    for (p, (a, b)) in emulated.iter().zip(&on_opencl).enumerate() {
        let (Arg::Array(a), Arg::Array(b)) = (a, b) else {
            continue;
        };
        assert_eq!(a.len(), b.len());
        let scale = a
            .iter()
            .fold(0.0f64, |m, v| m.max(v.as_f64().abs()))
            .max(1e-30);
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            let tol = match x {
                Value::Float(_) => 1e-5 * scale,
                Value::Double(_) => 1e-12 * scale,
                _ => 0.0,
            };
            assert!(
                (x.as_f64() - y.as_f64()).abs() <= tol,
                "{file}: parameter {} element {i}: emulator {x:?}, OpenCL {y:?}",
                kernel.params[p].name
            );
            compared += 1;
        }
    }
    assert!(compared > 0);
    // The outputs are not all zero: the kernel ran.
    let written = on_opencl
        .iter()
        .zip(&args)
        .any(|(after, before)| after != before);
    assert!(written, "{file}: OpenCL changed nothing");
}

#[test]
fn jacobi_tile_agrees_on_partial_blocks() {
    if !opencl_here() {
        return;
    }
    // 13 x 6 points in 8 x 4 blocks: partial blocks along both axes.
    let (nx, ny) = (13, 6);
    compare(
        "jacobi2d_tile.cu",
        &[("TILE_X", "8"), ("TILE_Y", "4")],
        Launch {
            grid: [2, 2, 1],
            block: [8, 4, 1],
        },
        vec![
            random(nx * ny, 1, false),
            zeros(nx * ny, false),
            int(nx as i32),
            int(ny as i32),
        ],
    );
}

#[test]
fn heat3d_seven_point_agrees_on_partial_blocks() {
    if !opencl_here() {
        return;
    }
    let (nx, ny, nz) = (11, 6, 5);
    compare(
        "heat3d_7pt.cu",
        &[],
        Launch {
            grid: [2, 2, 1],
            block: [8, 4, 1],
        },
        vec![
            random(nx * ny * nz, 2, true),
            zeros(nx * ny * nz, true),
            int(nx as i32),
            int(ny as i32),
            int(nz as i32),
            Arg::Scalar(Value::Double(0.1)),
        ],
    );
}

#[test]
fn slides_diffusion_agrees() {
    if !opencl_here() {
        return;
    }
    // The slides' kernel has no bounds guard: the grid covers the volume
    // exactly (3 x 2 blocks of 4 x 4 on 12 x 8 x 3).
    let (nx, ny, nz) = (12, 8, 3);
    let mut args = vec![
        random(nx * ny * nz, 3, false),
        zeros(nx * ny * nz, false),
        int(nx as i32),
        int(ny as i32),
        int(nz as i32),
    ];
    for c in [0.1f32, 0.11, 0.12, 0.13, 0.14, 0.15, 0.25] {
        args.push(Arg::Scalar(Value::Float(c)));
    }
    compare(
        "diffusion.cu",
        &[("BLOCK_X", "4"), ("BLOCK_Y", "4")],
        Launch {
            grid: [3, 2, 1],
            block: [4, 4, 1],
        },
        args,
    );
}

#[test]
fn printed_opencl_of_the_jacobi_tile() {
    let source = example("jacobi2d_tile.cu");
    let defs = defines(&[("TILE_X", "8"), ("TILE_Y", "4")]);
    let unit = parse_unit(&source, &defs).unwrap_or_else(|d| panic!("{d}"));
    let printed = print_kernel(&unit.kernels[0], &source.text, &defs).unwrap();
    assert!(!printed.contains("__opt__") && !printed.contains("profile"));
    assert!(
        printed.contains("__local float tile[TILE_Y][TILE_X];"),
        "{printed}"
    );
    insta::assert_snapshot!("jacobi2d_tile_opencl", printed);
}

#[test]
fn printed_opencl_keeps_defines_helpers_and_fp64() {
    let source = example("heat3d_7pt.cu");
    let unit = parse_unit(&source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let printed = print_kernel(&unit.kernels[0], &source.text, &[]).unwrap();
    assert!(printed.contains("#pragma OPENCL EXTENSION cl_khr_fp64 : enable"));
    assert!(
        printed.contains("#define BX 8") && printed.contains("plane[BY][BX]"),
        "{printed}"
    );
    assert!(
        printed.contains("barrier(CLK_LOCAL_MEM_FENCE);"),
        "{printed}"
    );
    assert!(
        printed.contains("(uint)get_group_id(0) * (uint)get_local_size(0)"),
        "{printed}"
    );

    let text = "static __device__ __forceinline__ int clampi(long i, int n)\n{\n    return i < 0 ? 0 : (i >= n ? n - 1 : (int)i);\n}\n\
                extern \"C\" __global__ void __launch_bounds__(64) k(float* __restrict__ out, const float* in, int n)\n{\n    \
                int t = (int)threadIdx.x;\n    out[t] = sqrtf(in[clampi(t - 1, n)]) + fminf(1.0f, (float)abs(t - 3));\n}\n";
    let file = SourceFile::new("k.cu", text);
    let unit = parse_unit(&file, &[]).unwrap_or_else(|d| panic!("{d}"));
    let printed = print_kernel(&unit.kernels[0], text, &[]).unwrap();
    for expected in [
        "int clampi(long i, int n)",
        "__kernel void k(",
        "__global float* restrict out,",
        "__global const float* in,",
        "int t = (int)get_local_id(0);",
        "sqrt(in[clampi(t - 1, n)])",
        "fmin(1.0f, (float)(int)abs(t - 3))",
    ] {
        assert!(printed.contains(expected), "{expected} missing:\n{printed}");
    }
    assert!(!printed.contains("__launch_bounds__") && !printed.contains("extern"));
    assert!(!printed.contains("cl_khr_fp64"), "{printed}");
}

/// `signbit` and `isnan` (stencilc's own `fmin`/`fmax` helpers call them)
/// take `float` or `double` and give an `int`, in the emulator and on OpenCL:
/// zeros of both signs, NaN of both signs and infinities.
#[test]
fn signbit_and_isnan_classify_floats_and_doubles() {
    let text = "extern \"C\" __global__ void k(int* __restrict__ out, const float* f, const double* d)\n{\n    \
                int t = (int)threadIdx.x;\n    \
                out[t] = signbit(f[t]) + 2 * isnan(f[t]) + 4 * signbit(d[t]) + 8 * isnan(d[t]);\n}\n";
    let file = SourceFile::new("k.cu", text);
    let unit = parse_unit(&file, &[]).unwrap_or_else(|d| panic!("{d}"));
    let kernel = &unit.kernels[0];
    let values = [
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        1.5,
        -1.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let args = vec![
        Arg::Array(vec![Value::Int(-1); values.len()]),
        Arg::Array(values.iter().map(|v| Value::Float(*v as f32)).collect()),
        Arg::Array(values.iter().rev().map(|v| Value::Double(*v)).collect()),
    ];
    let class = |v: f64| i32::from(v.is_sign_negative()) + 2 * i32::from(v.is_nan());
    let expected: Vec<Value> = values
        .iter()
        .zip(values.iter().rev())
        .map(|(f, d)| Value::Int(class(*f) + 4 * class(*d)))
        .collect();
    let launch = Launch {
        grid: [1, 1, 1],
        block: [values.len() as u32, 1, 1],
    };
    let mut emulated = args.clone();
    let report = emu::run(kernel, launch, &mut emulated, Limits::default()).unwrap();
    assert!(report.is_clean(), "{:?}", report.findings);
    assert_eq!(emulated[0], Arg::Array(expected.clone()), "emulator");
    let printed = print_kernel(kernel, text, &[]).unwrap();
    assert!(
        printed.contains("signbit(f[t])") && printed.contains("isnan(d[t])"),
        "{printed}"
    );
    if !opencl_here() {
        return;
    }
    let mut on_opencl = args;
    run_cuda_kernel(kernel, &file, &[], launch, &mut on_opencl).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(on_opencl[0], Arg::Array(expected), "OpenCL");
}

#[test]
fn a_shuffle_is_refused_with_its_place() {
    let text = "__global__ void k(int* o) { o[threadIdx.x] = __shfl_down_sync(0xffffffff, o[threadIdx.x], 1); }\n";
    let file = SourceFile::new("k.cu", text);
    let unit = parse_unit(&file, &[]).unwrap();
    let err = print_kernel(&unit.kernels[0], text, &[]).unwrap_err();
    assert!(err
        .message
        .contains("`__shfl_down_sync` has no OpenCL C counterpart"));
    assert!(
        err.render(&file).contains("k.cu:1:"),
        "{}",
        err.render(&file)
    );
}

#[test]
fn stencilcs_own_blur_kernel_agrees_on_opencl() {
    // The CUDA stencilc generates (a clamp helper, casts, a shared tile)
    // through the printer: 37 x 23 points in 32 x 8 blocks.
    if !opencl_here() {
        return;
    }
    use stencilc::driver::emit::{emit, GpuTarget};
    let program = crate::gpu_common::example("gaussian_blur");
    let cuda = emit(
        &program,
        &stencilc::schedule::ScheduleRequest::default(),
        GpuTarget::Cuda,
    )
    .unwrap();
    let source = SourceFile::new("blur.cu", cuda);
    let unit = parse_unit(&source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let kernel = unit.kernel(Some("blur")).expect("the blur kernel");
    let (w, h) = (37usize, 23usize);
    let mut args = vec![zeros(w * h, false), random(w * h, 4, false)];
    for v in [0, h as i32 - 1, 0, w as i32 - 1, h as i32, w as i32] {
        args.push(int(v));
    }
    let launch = Launch {
        grid: [2, 3, 1],
        block: [32, 8, 1],
    };
    let mut emulated = args.clone();
    let report = emu::run(kernel, launch, &mut emulated, Limits::default()).unwrap();
    assert!(report.is_clean(), "{:?}", report.findings);
    let mut on_opencl = args;
    run_cuda_kernel(kernel, &source, &[], launch, &mut on_opencl).unwrap_or_else(|e| panic!("{e}"));
    let (Arg::Array(a), Arg::Array(b)) = (&emulated[0], &on_opencl[0]) else {
        panic!("out is an array");
    };
    assert!(a.iter().any(|v| v.as_f64() != 0.0));
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x.as_f64() - y.as_f64()).abs() <= 1e-5,
            "out[{i}]: emulator {x:?}, OpenCL {y:?}"
        );
    }
}

/// Synthesizes `file`'s marked reads (as `stencilc synth` does), then runs the
/// original (its annotations stripped) and the rewritten kernel on OpenCL with
/// the same random inputs: an execution of the synthesized kernel that owes
/// nothing to the emulator that verified it.
fn synthesized_agrees_on_opencl(file: &str, defs: &[(&str, &str)], launch: Launch, args: &[&str]) {
    use stencilc::emu::args::{materialize, parse_specs};
    use stencilc::kanicuda::{self, Request};
    use stencilc::synth::Bounds;

    let source = example(file);
    let defs = defines(defs);
    let unit = parse_unit(&source, &defs).unwrap_or_else(|d| panic!("{d}"));
    let kernel = &unit.kernels[0];
    let given: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let specs = parse_specs(kernel, &given).unwrap_or_else(|e| panic!("{}", e.message));
    let synthesis = kanicuda::synthesize(&Request {
        source: &source,
        defines: &defs,
        kernel,
        launch,
        args: &specs,
        bounds: Bounds::default(),
        check: false,
        limits: Limits::default(),
        shared_bytes: None,
    })
    .unwrap_or_else(|e| panic!("{file}: synthesis failed: {e:?}"));
    assert!(
        synthesis.accesses.iter().any(|a| a.served()),
        "{file}: no read served"
    );
    let rewritten = SourceFile::new(format!("{file} (synthesized)"), synthesis.text.clone());
    let rewritten_unit = parse_unit(&rewritten, &defs).unwrap_or_else(|d| panic!("{d}"));
    let rewritten_kernel = &rewritten_unit.kernels[0];
    assert!(rewritten_kernel.marked.is_empty());
    for seed in [11, 12] {
        let inputs = materialize(kernel, &specs, seed);
        let mut original = inputs.clone();
        run_cuda_kernel(kernel, &source, &defs, launch, &mut original)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut synthesized = inputs.clone();
        run_cuda_kernel(
            rewritten_kernel,
            &rewritten,
            &defs,
            launch,
            &mut synthesized,
        )
        .unwrap_or_else(|e| panic!("{file} synthesized: {e}"));
        assert_ne!(original, inputs, "{file}: the kernel wrote nothing");
        for (p, (a, b)) in original.iter().zip(&synthesized).enumerate() {
            // The same operations on the same values: equal bit for bit.
            assert_eq!(
                a, b,
                "{file}: parameter {} differs between the original and the synthesized kernel on OpenCL",
                kernel.params[p].name
            );
        }
    }
}

#[test]
fn synthesized_diffusion_agrees_with_the_original_on_opencl() {
    if !opencl_here() {
        return;
    }
    synthesized_agrees_on_opencl(
        "diffusion.cu",
        &[("BLOCK_X", "4"), ("BLOCK_Y", "4")],
        Launch {
            grid: [2, 2, 1],
            block: [4, 4, 1],
        },
        &[
            "in=random:128",
            "out=zeros:128",
            "nx=8",
            "ny=8",
            "nz=2",
            "ce=0.1",
            "cw=0.1",
            "cn=0.1",
            "cs=0.1",
            "ct=0.1",
            "cb=0.1",
            "cc=0.4",
        ],
    );
}

#[test]
fn synthesized_jacobi_and_heat3d_agree_with_the_originals_on_opencl() {
    if !opencl_here() {
        return;
    }
    // Partial blocks: 13 x 6 points in 8 x 4 blocks.
    synthesized_agrees_on_opencl(
        "jacobi2d_tile.cu",
        &[("TILE_X", "8"), ("TILE_Y", "4")],
        Launch {
            grid: [2, 2, 1],
            block: [8, 4, 1],
        },
        &["a=random:78", "b=zeros:78", "nx=13", "ny=6"],
    );
    synthesized_agrees_on_opencl(
        "heat3d_7pt.cu",
        &[],
        Launch {
            grid: [2, 2, 1],
            block: [8, 4, 1],
        },
        &[
            "u=random:240",
            "v=zeros:240",
            "nx=10",
            "ny=6",
            "nz=4",
            "alpha=0.1",
        ],
    );
}

/// `__launch_bounds__` with its minimum blocks per SM (and blocks per
/// cluster), as stencilc's `--min-blocks` writes it: read, the threads bound
/// kept for the emulator's check, the rest left out of the OpenCL print.
#[test]
fn launch_bounds_take_a_minimum_of_blocks() {
    for bounds in ["64, 2", "64, 2, 1"] {
        let text = format!(
            "extern \"C\" __global__ void __launch_bounds__({bounds}) k(float* __restrict__ out)\n\
             {{\n    out[(int)threadIdx.x] = 1.0f;\n}}\n"
        );
        let file = SourceFile::new("k.cu", text.clone());
        let unit = parse_unit(&file, &[]).unwrap_or_else(|d| panic!("{bounds}: {d}"));
        let kernel = &unit.kernels[0];
        assert_eq!(kernel.launch_bounds, Some(64), "{bounds}");
        let printed = print_kernel(kernel, &text, &[]).unwrap();
        assert!(!printed.contains("__launch_bounds__"), "{printed}");
        // 128 threads exceed the bound of 64.
        let launch = Launch {
            grid: [1, 1, 1],
            block: [128, 1, 1],
        };
        let mut args = vec![zeros(128, false)];
        let error = emu::run(kernel, launch, &mut args, Limits::default()).unwrap_err();
        assert!(
            matches!(
                error,
                emu::CallError::LaunchBounds {
                    threads: 128,
                    bound: 64
                }
            ),
            "{error}"
        );
        assert!(
            error.to_string().contains("__launch_bounds__(64)"),
            "{error}"
        );
    }
    let text = "extern \"C\" __global__ void __launch_bounds__(64, n) k(float* out)\n{\n}\n";
    let error = parse_unit(&SourceFile::new("k.cu", text), &[]).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("expected the minimum blocks per SM"),
        "{error}"
    );
}
