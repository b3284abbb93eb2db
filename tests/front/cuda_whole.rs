//! Whole `.cu` files through `front::cuda::parse_kernel_in_file`: the kernel
//! found among host code, its macros and device functions, `extern
//! __shared__` sized by the launch, and `__opt__(a[i], sb[j])`.

use std::sync::Arc;

use stencilc::front::cuda::ast::StmtKind;
use stencilc::front::cuda::{parse_kernel_in_file, FileError, FileKernel, FileOptions};
use stencilc::source::SourceFile;

fn parse(
    text: &str,
    kernel: Option<&str>,
    shared_bytes: Option<u64>,
) -> Result<FileKernel, String> {
    let file: Arc<SourceFile> = SourceFile::new("whole.cu", text);
    let options = FileOptions {
        defines: &[],
        kernel,
        shared_bytes,
    };
    parse_kernel_in_file(&file, &options).map_err(|e| match e {
        FileError::Located(d) => d.to_string(),
        FileError::Choice { message, help } => format!("{message} ({help})"),
    })
}

const HOST: &str = r#"#include <cstdio>
#include <vector>
#define N 16
#define SQUARE(x) ((x) * (x))
template <typename T> struct Box { T v; };
namespace util { inline int twice(int x) { return 2 * x; } }
__device__ __forceinline__ float half(float v) { return v * 0.5f; }
__device__ float unused(float v) { return v; }
__global__ void scale(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = half(a[i]) + N;
    }
}
int main() {
    std::vector<float> h(N);
    printf("%d %s\n", SQUARE(3), "__global__ void fake() {");
    return 0;
}
"#;

#[test]
fn a_kernel_among_host_code_parses_with_its_macros_and_device_functions() {
    let found = parse(HOST, None, None).expect("the kernel parses");
    assert_eq!(found.kernel.name, "scale");
    assert_eq!(
        found.kernel.functions.len(),
        1,
        "only the function it calls"
    );
    assert_eq!(found.kernel.functions[0].name, "half");
    assert_eq!(found.masked.text.len(), HOST.len());
    assert!(!found.masked.text.contains("SQUARE") && !found.masked.text.contains("main"));
}

#[test]
fn an_error_in_the_kernel_is_at_its_line_in_the_whole_file() {
    let text = HOST.replace("a[i] = half(a[i]) + N;", "a[i] = half(a[i]) + M;");
    let err = parse(&text, None, None).unwrap_err();
    assert!(
        err.contains("unknown name `M`") && err.contains("whole.cu:12:"),
        "{err}"
    );
    assert!(
        err.contains("a[i] = half(a[i]) + M;") && err.contains('^'),
        "{err}"
    );
}

#[test]
fn extern_shared_takes_its_size_from_the_launch() {
    let text = "#include <cuda.h>\n__global__ void k(float* a) {\n    extern __shared__ float s[];\n    \
                s[threadIdx.x] = a[threadIdx.x];\n    __syncthreads();\n    a[threadIdx.x] = s[0];\n}\n";
    let err = parse(text, None, None).unwrap_err();
    assert!(
        err.contains("`s` is `extern __shared__`") && err.contains("--shared-bytes"),
        "{err}"
    );
    assert!(err.contains("whole.cu:3:5"), "{err}");
    let found = parse(text, None, Some(256)).expect("sized");
    let dims: Vec<Vec<i64>> = found
        .kernel
        .slots
        .iter()
        .filter(|s| s.name == "s")
        .map(|s| s.dims.clone())
        .collect();
    assert_eq!(dims, vec![vec![64]]);
    assert!(matches!(&found.kernel.body[0].kind, StmtKind::Shared { dims, .. } if dims.is_empty()));
    let err = parse(text, None, Some(6)).unwrap_err();
    assert!(err.contains("not a whole number of `float`s"), "{err}");
    let sized = text.replace("s[];", "s[4];");
    let err = parse(&sized, None, Some(16)).unwrap_err();
    assert!(
        err.contains("with a size") && err.contains("leave the size out"),
        "{err}"
    );
    let two = text.replace(
        "    extern __shared__ float s[];\n",
        "    extern __shared__ float s[];\n    extern __shared__ float t[];\n",
    );
    let err = parse(&two, None, Some(16)).unwrap_err();
    assert!(
        err.contains("a second `extern __shared__` array, `t`"),
        "{err}"
    );
}

#[test]
fn opt_with_a_chosen_slot_is_checked_against_the_candidates() {
    let text = "__global__ void k(float* in, float* out) {\n    profile(\"threadIdx.x i\");\n    \
                int i = threadIdx.x;\n    __shared__ float sb[8];\n    sb[i] = in[i];\n    \
                __syncthreads();\n    out[i] = __opt__(in[i + 1], sb[i + 1]);\n}\n";
    let found = parse(text, None, None).expect("parses");
    let read = &found.kernel.marked[0];
    let chosen = read.chosen.as_ref().expect("a chosen slot");
    assert_eq!(chosen.text, "sb[i + 1]");
    assert_eq!(chosen.read_text, "in[i + 1]");
    assert_eq!(read.text, "__opt__(in[i + 1], sb[i + 1])");
    assert_eq!(chosen.eval(&read.candidates, &[3, 3]), Some(vec![4]));
    let err = parse(&text.replace("sb[i + 1])", "sb[blockIdx.x])"), None, None).unwrap_err();
    assert!(
        err.contains("`blockIdx.x` in the chosen slot is not a candidate"),
        "{err}"
    );
    let err = parse(&text.replace("sb[i + 1])", "out[i])"), None, None).unwrap_err();
    assert!(err.contains("`out` is not a `__shared__` array"), "{err}");
    let err = parse(&text.replace("sb[i + 1])", "sb[i], 1)"), None, None).unwrap_err();
    assert!(err.contains("expected `)`"), "{err}");
}

#[test]
fn the_kernel_is_chosen_by_name_or_by_its_markers() {
    let two = format!("{HOST}\n__global__ void other(float* a) {{ a[0] = 1.0f; }}\n");
    let err = parse(&two, None, None).unwrap_err();
    assert!(
        err.contains("2 kernels, none of them with KaniCUDA's markers")
            && err.contains("`scale` (line 9)")
            && err.contains("`other` (line 21)"),
        "{err}"
    );
    assert_eq!(
        parse(&two, Some("other"), None).unwrap().kernel.name,
        "other"
    );
    let err = parse(&two, Some("missing"), None).unwrap_err();
    assert!(err.contains("no kernel `missing`"), "{err}");
    let err = parse("int main() { return 0; }\n", None, None).unwrap_err();
    assert!(err.contains("no `__global__` kernel"), "{err}");
}
