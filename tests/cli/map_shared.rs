//! `stencilc map`: shared-memory staging of read-only arrays in direct
//! kernels (`tests/data/map/shared.c` and the conv2d example). The OpenCL
//! programs run on PoCL and print what the originals print (`cc -O2
//! -ffp-contract=off`), bit for bit, on sizes that are not multiples of the
//! blocks; the CUDA kernels compile with NVRTC with an empty log and the host
//! part with `g++`; the decisions are reported with their numbers, and the
//! staged kernels are snapshots.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::map::{build_and_run, cc_available, map, opencl_available, opencl_headers_available};
use super::map_lift::{compile_host_part, cuda_include_dirs, kernel_units};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/map")
}

fn examples_c() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/c")
}

/// The programs and where they are.
fn programs() -> [(PathBuf, &'static str); 2] {
    [(data(), "shared"), (examples_c(), "conv2d")]
}

fn mapped(dir: &Path, name: &str, target: &str) -> String {
    let out = map(dir, &[&format!("{name}.c"), "--target", target]);
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn staged_opencl_kernels_compute_what_the_originals_compute() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (folder, name) in programs() {
        let program = mapped(&folder, name, "opencl");
        // Every staging kernel loads its tiles before one barrier and runs whole work-groups.
        let staged = program.matches("barrier(CLK_LOCAL_MEM_FENCE);").count();
        let expected = if name == "shared" { 5 } else { 1 };
        assert_eq!(staged, expected, "{name}: staged kernels\n{program}");
        assert_eq!(
            program.matches("reqd_work_group_size").count(),
            staged,
            "{name}"
        );
        assert_eq!(
            program.matches("global, local, 0").count(),
            staged,
            "{name}"
        );
        let source = dir.path().join(format!("{name}.cl.c"));
        std::fs::write(&source, &program).unwrap();
        let original = build_and_run(
            &folder.join(format!("{name}.c")),
            &dir.path().join(format!("{name}.orig")),
            &["-ffp-contract=off"],
        );
        let ran = build_and_run(
            &source,
            &dir.path().join(format!("{name}.cl")),
            &["-ffp-contract=off", "-lOpenCL"],
        );
        assert_eq!(original, ran, "{name}: the staged program prints otherwise");
    }
}

#[test]
fn staging_decisions_are_reported_with_their_numbers() {
    if !cc_available() {
        return;
    }
    let out = map(&data(), &["shared.c", "--target", "opencl", "--report"]);
    let report = String::from_utf8_lossy(&out.stdout);
    for expected in [
        "img: shared memory (read-only and reused within a block: 9 distinct offset(s) per point (y: -1 to 1, x: -1 to 1); a block of 8 x 32 threads stages a tile of 10 x 34 elements (1360 bytes): overfetch 1.33 elements per point, reuse 6.78 >= 2)",
        "rows3: shared memory (read-only and reused within a block: 3 distinct offset(s) per point (dimension 0: 0 to 2, x: 0 to 0)",
        "vol: shared memory (read-only and reused within a block: 7 distinct offset(s) per point (z: -1 to 1, y: -1 to 1, x: -1 to 1); a block of 2 x 4 x 32 threads stages a tile of 4 x 6 x 34 elements",
        "not staged in shared memory: a reuse under 2 does not pay for the barrier: 2 distinct offset(s) per point (i: 0 to 1); a block of 256 threads stages a tile of 257 elements (2056 bytes): overfetch 1.00 elements per point, reuse 1.99)",
        "not staged in shared memory: its subscript `(i + shift)` depends on `shift`, not a constant offset",
        "not staged in shared memory: offsets too wide, the tile exceeds 16384 bytes: 121 distinct offset(s) per point",
        "`img` staged in local memory (`__local float img_tile[10 * 34]`",
    ] {
        assert!(report.contains(expected), "missing {expected:?} in\n{report}");
    }
    let out = map(&data(), &["shared.c", "--target", "cuda", "--json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let nests = json["nests"].as_array().unwrap();
    let choice = |line: u64, array: &str| -> Value {
        let nest = nests
            .iter()
            .find(|n| n["lines"][0] == line)
            .unwrap_or_else(|| panic!("nest at line {line}"));
        nest["memory"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["array"] == array)
            .unwrap_or_else(|| panic!("{array} at line {line}"))
            .clone()
    };
    let img = choice(66, "img");
    assert_eq!(img["choice"], "shared memory");
    assert_eq!(img["staging"]["distinct_offsets"], 9);
    assert_eq!(img["staging"]["tile"], serde_json::json!([10, 34]));
    assert_eq!(img["staging"]["block"], serde_json::json!([8, 32]));
    let wide = choice(100, "wide");
    assert_eq!(wide["choice"], "read-only path");
    assert_eq!(wide["staging"]["tile_bytes"], 25024);
    let shifted = choice(92, "line_in");
    assert_eq!(shifted["choice"], "read-only path");
    assert!(shifted.get("staging").is_none(), "{shifted}");
    let nest = nests.iter().find(|n| n["lines"][0] == 66).unwrap();
    assert!(
        nest["transformations"]
            .to_string()
            .contains("`img` staged in shared memory (`__shared__ float img_tile[10 * 34]`"),
        "{nest}"
    );
}

/// The OpenCL C source of the kernels, from the C string literal the
/// program carries.
fn opencl_kernels(program: &str) -> String {
    let start = program
        .find("static const char *stencilc_kernels =\n")
        .expect("the kernels");
    let mut out = String::new();
    for line in program[start..].lines().skip(1) {
        let Some(text) = line.trim().strip_prefix('"') else {
            break;
        };
        let text = text.strip_suffix("\\n\"").expect("one line per literal");
        out.push_str(&text.replace("\\\"", "\"").replace("\\\\", "\\"));
        out.push('\n');
    }
    out
}

#[test]
fn staged_opencl_kernels_of_the_shared_program() {
    if !cc_available() {
        return;
    }
    let program = mapped(&data(), "shared", "opencl");
    insta::assert_snapshot!("map_shared_opencl_kernels", opencl_kernels(&program));
}

#[test]
fn staged_cuda_kernels_compile_with_nvrtc_and_gxx() {
    use stencilc::exec::cuda::nvrtc;
    if !cc_available() || !crate::common::runtime_available("nvrtc", nvrtc::load().map(|_| ())) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (folder, name) in programs() {
        let program = mapped(&folder, name, "cuda");
        let units = kernel_units(&program);
        let direct: Vec<&String> = units.iter().filter(|u| u.contains("__shared__")).collect();
        assert_eq!(direct.len(), 1, "{name}: one direct unit with tiles");
        assert!(direct[0].contains("__syncthreads();"), "{name}");
        if name == "conv2d" {
            insta::assert_snapshot!("map_shared_cuda_conv2d", direct[0]);
        }
        for unit in &units {
            let compiled =
                nvrtc::compile_source(unit, "sm_90", stencilc::back::cuda::NVRTC_OPTIONS, &[])
                    .unwrap_or_else(|e| panic!("{name}: {e}\n{unit}"));
            assert!(
                compiled.log.trim().is_empty(),
                "{name}: NVRTC said:\n{}",
                compiled.log
            );
        }
        // The host part with g++ against the CUDA runtime headers, when they are here.
        if !crate::common::runtime_available("cudart", cuda_include_dirs().map(drop)) {
            continue;
        }
        let includes = cuda_include_dirs().unwrap();
        let cu = dir.path().join(format!("{name}.cu"));
        std::fs::write(&cu, &program).unwrap();
        compile_host_part(name, &cu, &includes);
    }
}
