//! Fuzz targets, run as ordinary tests for a fixed time each (cargo-fuzz needs
//! a nightly compiler): one per data-file reader (`.npy`, `.png`, `.pgm`,
//! `.raw`) and per front-end (SDSL, the CUDA subset, C as `map` reads it).
//! No input may panic, and none may take more than a generous bound
//! ([`harness::PER_INPUT`]); see [`harness`] for the mutations, the regression
//! inputs under `tests/data/fuzz/<target>/` and the figures printed.

mod harness;

use std::path::{Path, PathBuf};

use harness::{fuzz, Target};
use stencilc::front::c::{lower_unit, CFile};
use stencilc::io::{self, FieldSpec};
use stencilc::ir::ScalarType;
use stencilc::source::SourceFile;

const TYPES: [ScalarType; 4] = [
    ScalarType::Int,
    ScalarType::Long,
    ScalarType::Float,
    ScalarType::Double,
];

/// The most points a fuzzed file's own shape may give the grid it is read into.
const MAX_POINTS: usize = 1 << 22;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files under `dir` (relative to the repository) whose names end in one
/// of `extensions`, read whole, sorted by path.
fn files(dir: &str, extensions: &[&str]) -> Vec<Vec<u8>> {
    let mut dirs = vec![repo().join(dir)];
    let mut found = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if extensions
                .iter()
                .any(|e| path.to_string_lossy().ends_with(e))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
        .into_iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

// --- the readers ---------------------------------------------------------------

/// Writes `bytes` to `dir/case.EXT` and reads it as every field type: the
/// shape it gives (when small) or `fallback` as the grid, and the checks a
/// run makes before reading.
fn read_as_file(bytes: &[u8], dir: &Path, extension: &str, fallback: &[usize]) {
    let path = dir.join(format!("case.{extension}"));
    std::fs::write(&path, bytes).unwrap();
    let dims = match io::probe_shape(&path) {
        Ok(Some(shape))
            if (1..=3).contains(&shape.len())
                && shape
                    .iter()
                    .try_fold(1usize, |n, &d| n.checked_mul(d))
                    .is_some_and(|n| n <= MAX_POINTS) =>
        {
            shape
        }
        _ => fallback.to_vec(),
    };
    for ty in TYPES {
        let field = FieldSpec {
            name: "f".into(),
            ty,
            rank: dims.len(),
        };
        let _ = io::check_input(&path, &field);
        let _ = io::read_field(&path, &field, &dims);
    }
}

fn run_npy(bytes: &[u8], dir: &Path) {
    read_as_file(bytes, dir, "npy", &[4]);
}

fn run_png(bytes: &[u8], dir: &Path) {
    read_as_file(bytes, dir, "png", &[2, 2]);
}

fn run_pgm(bytes: &[u8], dir: &Path) {
    read_as_file(bytes, dir, "pgm", &[2, 2]);
}

/// A `.raw` file has no header: it is read on grids that fit it, that do not,
/// and that no memory holds.
fn run_raw(bytes: &[u8], dir: &Path) {
    let path = dir.join("case.raw");
    std::fs::write(&path, bytes).unwrap();
    let n = bytes.len();
    let grids: [&[usize]; 5] = [
        &[n / 4],
        &[n / 8],
        &[2, n / 16],
        &[1 << 31, 1 << 31, 1 << 31],
        &[usize::MAX, 2],
    ];
    for dims in grids {
        for ty in TYPES {
            let field = FieldSpec {
                name: "f".into(),
                ty,
                rank: dims.len(),
            };
            let _ = io::check_input(&path, &field);
            let _ = io::read_field(&path, &field, dims);
        }
    }
}

/// Arrays NumPy would write, in every type, order and byte order the reader
/// takes, and some it refuses.
fn npy_seeds() -> Vec<Vec<u8>> {
    let headers = [
        ("<f4", "False", "(3, 2)", 24),
        (">f8", "False", "(2,)", 16),
        ("<i4", "True", "(2, 3, 2)", 48),
        ("<i8", "False", "(1, 1)", 8),
        ("|u1", "False", "(5,)", 5),
        ("<f4", "False", "()", 4),
    ];
    let mut seeds: Vec<Vec<u8>> = headers
        .iter()
        .map(|&(descr, fortran, shape, bytes)| {
            npy_file(
                &format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}"),
                &vec![0x3f; bytes],
            )
        })
        .collect();
    seeds.push(npy_file(
        "{'descr': [('a', '<f4'), ('b', '<i8', (2,))], 'fortran_order': False, 'shape': (1,)}",
        &[0; 20],
    ));
    seeds
}

/// A version-1.0 `.npy` file of header `dict` (padded as NumPy pads it) and `data`.
fn npy_file(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut dict = dict.to_string();
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

/// Small grayscale images written by the `image` crate, 8- and 16-bit, and a
/// colour one.
fn image_seeds(format: image::ImageFormat) -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    let mut encode = |image: image::DynamicImage| {
        let mut bytes = std::io::Cursor::new(Vec::new());
        image.write_to(&mut bytes, format).unwrap();
        seeds.push(bytes.into_inner());
    };
    let gray = image::GrayImage::from_fn(5, 3, |x, y| image::Luma([(x * 40 + y * 7) as u8]));
    encode(image::DynamicImage::ImageLuma8(gray));
    let deep = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_fn(2, 4, |x, y| {
        image::Luma([(x * 30000 + y * 99) as u16])
    });
    encode(image::DynamicImage::ImageLuma16(deep));
    encode(image::DynamicImage::ImageRgb8(image::RgbImage::new(2, 2)));
    seeds
}

const NPY_WORDS: &[&[u8]] = &[
    b"\x93NUMPY",
    b"'descr'",
    b"'fortran_order'",
    b"'shape'",
    b"True",
    b"False",
    b"None",
    b"'<f4'",
    b"'>i8'",
    b"(1,)",
    b"[",
    b"{",
    b"(",
    b"\\",
    b"'",
    b": ",
    b", ",
];

const BRACKETS: &[(&str, &str)] = &[("(", ")"), ("[", "]"), ("{", "}")];

#[test]
fn fuzz_npy_reader() {
    let figures = fuzz(Target {
        name: "npy",
        seeds: npy_seeds(),
        dictionary: NPY_WORDS,
        brackets: BRACKETS,
        max_len: 96 * 1024,
        run: run_npy,
    });
    assert!(figures.regressions >= 3, "{figures:?}");
}

#[test]
fn fuzz_png_reader() {
    fuzz(Target {
        name: "png",
        seeds: image_seeds(image::ImageFormat::Png),
        dictionary: &[
            b"IHDR",
            b"IDAT",
            b"IEND",
            b"\x89PNG\r\n\x1a\n",
            b"zTXt",
            b"iCCP",
        ],
        brackets: &[],
        max_len: 16 * 1024,
        run: run_png,
    });
}

#[test]
fn fuzz_pgm_reader() {
    fuzz(Target {
        name: "pgm",
        seeds: image_seeds(image::ImageFormat::Pnm),
        dictionary: &[
            b"P5\n",
            b"P2\n",
            b"P6\n",
            b"P7\n",
            b"# comment\n",
            b" 65535\n",
            b"\n",
        ],
        brackets: &[],
        max_len: 16 * 1024,
        run: run_pgm,
    });
}

#[test]
fn fuzz_raw_reader() {
    fuzz(Target {
        name: "raw",
        seeds: vec![vec![0; 32], (0..=255).collect(), Vec::new()],
        dictionary: &[],
        brackets: &[],
        max_len: 4096,
        run: run_raw,
    });
}

// --- the front-ends ------------------------------------------------------------

/// The SDSL front-end, on the text as a `.sdsl` program and as a C host of
/// regions; a program it accepts goes on to the static checks `load` runs.
fn run_sdsl(bytes: &[u8], _: &Path) {
    let text = String::from_utf8_lossy(bytes).into_owned();
    if let Ok(program) = stencilc::front::parse_program(SourceFile::new("fuzz.sdsl", text.clone()))
    {
        let _ = stencilc::analysis::checked(program);
    }
    if let Ok(regions) = stencilc::front::parse_regions(SourceFile::new("fuzz.c", text)) {
        let _ = stencilc::analysis::checked_regions(regions);
    }
}

fn run_cuda(bytes: &[u8], _: &Path) {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let _ = stencilc::front::cuda::parse_unit(&SourceFile::new("fuzz.cu", text), &[]);
}

/// The C front-end of `map` without the preprocessor: the text is taken as
/// already preprocessed (its `#` lines dropped), parsed and lowered to the
/// loop IR.
fn run_c(bytes: &[u8], _: &Path) {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let preprocessed: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with('#') {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    if let Ok(file) = CFile::from_preprocessed("fuzz.c", text, preprocessed) {
        let _ = lower_unit(&file);
    }
}

const SDSL_WORDS: &[&[u8]] = &[
    b"grid ",
    b"griddata ",
    b"const ",
    b"int ",
    b"long ",
    b"float ",
    b"double ",
    b"on ",
    b"at ",
    b"boundary ",
    b"clamp",
    b"mirror",
    b"periodic",
    b"pointfunction ",
    b"iterate ",
    b"stencil ",
    b"reduction ",
    b"check ",
    b"every ",
    b"iterations",
    b"for ",
    b"in ",
    b"max",
    b"min",
    b"sqrt",
    b"? ",
    b": ",
    b"..",
    b";",
    b",",
    b"#pragma sdsl begin\n",
    b"#pragma sdsl end\n",
    b"[0]",
    b"[-1]",
    b"1e38",
    b"0x7fffffff",
];

const CUDA_WORDS: &[&[u8]] = &[
    b"__global__ ",
    b"__device__ ",
    b"__shared__ ",
    b"__syncthreads();",
    b"threadIdx.x",
    b"blockIdx.y",
    b"blockDim.x",
    b"profile(\"",
    b"__opt__.",
    b"#define N 4\n",
    b"float* ",
    b"int ",
    b"for (int i = 0; i < 4; i++) ",
    b"if (",
    b"return;",
    b"__shfl_down_sync(",
];

const C_WORDS: &[&[u8]] = &[
    b"for (int i = 0; i < n; i++) ",
    b"int ",
    b"double ",
    b"float ",
    b"void ",
    b"struct ",
    b"typedef ",
    b"#pragma scop\n",
    b"#pragma endscop\n",
    b"a[i][j]",
    b"*",
    b"&",
    b"->",
    b"while (1) ",
    b"if (",
    b"else ",
    b"restrict ",
    b"sizeof(",
];

#[test]
fn fuzz_sdsl_front_end() {
    let mut seeds = files("examples", &[".sdsl"]);
    seeds.extend(files("examples/embedded", &[".c", ".cpp"]));
    fuzz(Target {
        name: "sdsl",
        seeds,
        dictionary: SDSL_WORDS,
        brackets: BRACKETS,
        max_len: 64 * 1024,
        run: run_sdsl,
    });
}

#[test]
fn fuzz_cuda_front_end() {
    fuzz(Target {
        name: "cuda",
        seeds: files("examples/cuda", &[".cu"]),
        dictionary: CUDA_WORDS,
        brackets: BRACKETS,
        max_len: 64 * 1024,
        run: run_cuda,
    });
}

#[test]
fn fuzz_c_front_end() {
    let mut seeds = files("examples/c", &[".c"]);
    seeds.extend(files("tests/data/map", &[".c"]));
    fuzz(Target {
        name: "c",
        seeds,
        dictionary: C_WORDS,
        brackets: BRACKETS,
        max_len: 64 * 1024,
        run: run_c,
    });
}

/// The generator and the mutations are the same from run to run, so that a
/// failure's case number reproduces it.
#[test]
fn mutations_are_deterministic() {
    let target = || Target {
        name: "t",
        seeds: vec![b"grid g[4]; (1 + 2)".to_vec()],
        dictionary: SDSL_WORDS,
        brackets: BRACKETS,
        max_len: 1 << 16,
        run: |_, _| {},
    };
    let sequence = || {
        let t = target();
        let mut rng = harness::Rng::new(7);
        (0..200)
            .map(|_| harness::mutate(&mut rng, &t.seeds, &t))
            .collect::<Vec<_>>()
    };
    let first = sequence();
    assert_eq!(first, sequence());
    assert!(first.iter().filter(|m| **m != target().seeds[0]).count() > 150);
}

/// The loop catches what it is for: a target that panics on some inputs
/// fails the test, naming the case and where its input was written.
#[test]
#[should_panic(expected = "panicked: a `!` in the input")]
fn a_panicking_target_fails_the_test() {
    fuzz(Target {
        name: "selftest",
        seeds: vec![b"!!!!!!!!".to_vec()],
        dictionary: &[],
        brackets: &[],
        max_len: 64,
        run: |bytes, _| assert!(!bytes.contains(&b'!'), "a `!` in the input"),
    });
}
