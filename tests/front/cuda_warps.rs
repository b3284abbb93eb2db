//! `__device__` functions and warp shuffles in the CUDA subset: parsed,
//! checked, and emulated with the lanes of a warp in step (results computed
//! by hand here), and the shuffles CUDA leaves undefined reported.

use stencilc::emu::{self, Arg, FindingKind, Launch, Limits, Report, Value};
use stencilc::front::cuda::{parse_unit, Unit};
use stencilc::source::SourceFile;

fn parse(text: &str) -> Result<Unit, String> {
    let file = SourceFile::new("kernel.cu", text);
    parse_unit(&file, &[]).map_err(|d| d.to_string())
}

fn ints(data: &[i32]) -> Arg {
    Arg::Array(data.iter().map(|&v| Value::Int(v)).collect())
}

fn result(arg: &Arg) -> Vec<i64> {
    match arg {
        Arg::Array(data) => data.iter().map(|v| v.as_i64()).collect(),
        Arg::Scalar(_) => Vec::new(),
    }
}

/// Runs the only kernel of `text` on `input` (read) and `out` (written).
fn run(text: &str, grid: u32, block: u32, input: &[i32], out: usize) -> (Report, Vec<i64>) {
    let unit = parse(text).unwrap_or_else(|e| panic!("{e}"));
    let mut args = vec![ints(input), ints(&vec![0; out])];
    let launch = Launch {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
    };
    let report = emu::run(&unit.kernels[0], launch, &mut args, Limits::default()).unwrap();
    let out = result(&args[1]);
    (report, out)
}

const WARP_SUM: &str = r#"
extern "C" __global__ void __launch_bounds__(64) warp_sum(const int* __restrict__ in, int* out)
{
    int tid = (int)threadIdx.x;
    int acc = in[(int)blockIdx.x * 64 + tid];
    for (int d = 16; d > 0; d /= 2) {
        acc += __shfl_down_sync(0xffffffffu, acc, d);
    }
    if (tid % 32 == 0) {
        out[(int)blockIdx.x * 2 + tid / 32] = acc;
    }
}
"#;

#[test]
fn a_shuffle_reduction_sums_each_warp() {
    let input: Vec<i32> = (0..192).map(|i| (i * 7919 % 103) - 50).collect();
    let (report, out) = run(WARP_SUM, 3, 64, &input, 6);
    assert!(report.is_clean(), "{:?}", report.findings);
    let expected: Vec<i64> = input
        .chunks(32)
        .map(|w| w.iter().map(|&v| i64::from(v)).sum())
        .collect();
    assert_eq!(out, expected);
}

#[test]
fn every_shuffle_kind_reads_the_lane_cuda_defines() {
    let text = r#"
__global__ void k(const int* in, int* out)
{
    int t = threadIdx.x;
    int v = in[t];
    out[t] = __shfl_sync(0xffffffff, v, 3);
    out[64 + t] = __shfl_up_sync(0xffffffff, v, 2);
    out[128 + t] = __shfl_xor_sync(0xffffffff, v, 5);
    out[192 + t] = __shfl_down_sync(0xffffffff, v, 3, 8);
}
"#;
    let input: Vec<i32> = (0..64).map(|i| 1000 + i).collect();
    let (report, out) = run(text, 1, 64, &input, 256);
    assert!(report.is_clean(), "{:?}", report.findings);
    for t in 0..64usize {
        let warp = t / 32 * 32;
        let lane = t % 32;
        let v = |l: usize| 1000 + (warp + l) as i64;
        assert_eq!(out[t], v(3), "shfl lane {t}");
        let up = if lane >= 2 { v(lane - 2) } else { v(lane) };
        assert_eq!(out[64 + t], up, "up lane {t}");
        assert_eq!(out[128 + t], v(lane ^ 5), "xor lane {t}");
        let down = if lane % 8 + 3 < 8 {
            v(lane + 3)
        } else {
            v(lane)
        };
        assert_eq!(out[192 + t], down, "down width 8 lane {t}");
    }
}

#[test]
fn a_shuffle_some_lanes_of_the_mask_miss_is_reported() {
    let text = r#"
__global__ void k(const int* in, int* out)
{
    int t = threadIdx.x;
    int v = in[t];
    if (t < 16) {
        v = __shfl_down_sync(0xffffffff, v, 1);
    }
    __syncthreads();
    out[t] = v;
}
"#;
    let (report, _) = run(text, 1, 32, &[1; 32], 32);
    let finding = report.findings.first().expect("a finding");
    assert_eq!(finding.kind, FindingKind::Shuffle);
    assert!(
        finding
            .message
            .contains("lane 16 of its mask waits at a barrier"),
        "{}",
        finding.message
    );
}

#[test]
fn a_shuffle_reading_beyond_a_small_block_is_undefined_and_reported() {
    let text = r#"
__global__ void k(const int* in, int* out)
{
    int t = threadIdx.x;
    out[t] = __shfl_down_sync(0xffffffff, in[t], 8);
}
"#;
    // 16 threads: lane 8 reads lane 16, which does not exist.
    let (report, _) = run(text, 1, 16, &[1; 16], 16);
    let finding = report.findings.first().expect("a finding");
    assert_eq!(finding.kind, FindingKind::Shuffle);
    assert!(
        finding.message.contains("lane 8 of warp 0 reads lane 16")
            && finding.message.contains("beyond the block"),
        "{}",
        finding.message
    );
    // With a width of 16 the same shuffle stays inside the block.
    let text = text.replace("in[t], 8)", "in[t], 8, 16)");
    let (report, out) = run(&text, 1, 16, &[7; 16], 16);
    assert!(report.is_clean(), "{:?}", report.findings);
    assert_eq!(out, vec![7; 16]);
}

#[test]
fn a_lane_outside_the_mask_calling_the_shuffle_is_reported() {
    let text = r#"
__global__ void k(const int* in, int* out)
{
    int t = threadIdx.x;
    out[t] = __shfl_xor_sync(0x0000ffff, in[t], 1);
}
"#;
    let (report, _) = run(text, 1, 32, &[1; 32], 32);
    let finding = report.findings.first().expect("a finding");
    assert_eq!(finding.kind, FindingKind::Shuffle);
    assert!(
        finding.message.contains("does not name it"),
        "{}",
        finding.message
    );
}

const HELPERS: &str = r#"
/* boundary mirror, as stencilc prints it */
static __device__ __forceinline__ int sdsl_mirror(long i, int n)
{
    long period, m;
    if (i >= 0 && i < n) return (int)i;
    if (n == 1) return 0;
    period = 2 * ((long)n - 1);
    m = i % period;
    if (m < 0) m += period;
    return (int)(m < n ? m : period - m);
}

__device__ inline int twice_mirrored(int i, int n)
{
    int once = sdsl_mirror(i, n);
    return 2 * once;
}

extern "C" __global__ void k(const int* in, int* out)
{
    int t = (int)threadIdx.x;
    out[t] = twice_mirrored(t - 8, 5) + sdsl_mirror(t, 3) * 100;
}
"#;

#[test]
fn device_functions_run_inline_with_their_own_variables() {
    let (report, out) = run(HELPERS, 1, 24, &[0; 24], 24);
    assert!(report.is_clean(), "{:?}", report.findings);
    let mirror = |i: i64, n: i64| -> i64 {
        if (0..n).contains(&i) {
            return i;
        }
        let period = 2 * (n - 1);
        let m = i.rem_euclid(period);
        if m < n {
            m
        } else {
            period - m
        }
    };
    for t in 0..24i64 {
        assert_eq!(
            out[t as usize],
            2 * mirror(t - 8, 5) + 100 * mirror(t, 3),
            "thread {t}"
        );
    }
}

#[test]
fn device_functions_outside_the_subset_get_located_diagnostics() {
    let cases: &[(&str, &str)] = &[
        (
            "__device__ void f(int a) { }\n__global__ void k(int* o) { o[0] = 1; }\n",
            "`void` device functions are outside the CUDA subset",
        ),
        (
            "__device__ int f(int* a) { return a[0]; }\n__global__ void k(int* o) { o[0] = 1; }\n",
            "device function parameter `a` is a pointer",
        ),
        (
            "__device__ int f(int a) { if (a) return 1; }\n__global__ void k(int* o) { o[0] = f(1); }\n",
            "does not end with `return`",
        ),
        (
            "__device__ int f(int a) { return g(a); }\n__device__ int g(int a) { return a; }\n__global__ void k(int* o) { o[0] = f(1); }\n",
            "`g` is not a function of the CUDA subset",
        ),
        (
            "__device__ int f(int a) { __syncthreads(); return a; }\n__global__ void k(int* o) { o[0] = f(1); }\n",
            "`__syncthreads()` in a device function",
        ),
        (
            "__global__ void k(int* o) { o[0] = 1; return 2; }\n",
            "a kernel returns no value",
        ),
        (
            "__global__ void k(int* o) { o[0] = __shfl_sync(0xffffffff, 1); }\n",
            "`__shfl_sync` takes 3 or 4 arguments, given 2",
        ),
        (
            "__device__ int f(int a) { return a; }\n__global__ void k(int* o) { o[0] = f(1, 2); }\n",
            "`f` takes 1 argument(s), given 2",
        ),
    ];
    // Each function calls the one before twice: 2^20 bodies once inlined.
    let mut doubling = String::from("__device__ int f0(int a) { return a + 1; }\n");
    for i in 1..=20 {
        doubling.push_str(&format!(
            "__device__ int f{i}(int a) {{ return f{j}(a) + f{j}(a); }}\n",
            j = i - 1
        ));
    }
    doubling.push_str("__global__ void k(int* o) { o[0] = f20(1); }\n");
    let err = parse(&doubling).expect_err("too large once inlined");
    assert!(
        err.contains("function bodies, more than the emulator's 10000"),
        "{err}"
    );
    for (text, message) in cases {
        let err = parse(text).expect_err(text);
        assert!(err.contains(message), "{text}\n{err}");
        assert!(err.contains("kernel.cu:"), "located: {err}");
    }
}
