//! The standard GPU benchmark set, the f64 variants of float programs, and the
//! Markdown report.
//!
//! The set (issue 4): every program of `bench/programs` at 2-D 16384² or 3-D
//! 512³ in f32 and f64 (the Rician denoiser is written in double and runs in
//! f64 only), the Gaussian blur on a 3840×2160 image, and the Thorin report's
//! three variants (no shared memory; tables only; tiles and tables) of the blur
//! and of j2d9pt. Each case runs under the default schedule and `--shm none`,
//! so a staged schedule can be compared with the global-memory one.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::exec::cuda::bench::{BenchCase, BenchResult, Precision};
use crate::schedule::{ScheduleRequest, ShmRequest, ThorinVariant};

/// The `f`-suffixed math functions and their double forms.
const FLOAT_MATH: &[(&str, &str)] = &[
    ("sqrtf", "sqrt"),
    ("fabsf", "fabs"),
    ("expf", "exp"),
    ("logf", "log"),
    ("powf", "pow"),
    ("sinf", "sin"),
    ("cosf", "cos"),
    ("tanf", "tan"),
    ("fminf", "fmin"),
    ("fmaxf", "fmax"),
    ("floorf", "floor"),
    ("ceilf", "ceil"),
];

/// The f64 variant of a float program: the type `float` becomes `double`, the
/// `f`-suffixed math functions their double forms, and float literals lose
/// their `f` suffix, so the whole computation is in double.
pub fn float_to_double(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 64);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if (c.is_alphabetic() || c == '_') && !prev_ident {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mapped = match word.as_str() {
                "float" => "double",
                other => FLOAT_MATH
                    .iter()
                    .find(|(f, _)| *f == other)
                    .map_or(other, |(_, d)| d),
            };
            out.push_str(mapped);
            continue;
        }
        let starts_number =
            c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit));
        if starts_number && !prev_ident {
            let start = i;
            while i < chars.len() {
                let d = chars[i];
                let exponent_sign = (d == '+' || d == '-')
                    && matches!(chars[i - 1], 'e' | 'E')
                    && !chars[start..i].iter().any(|c| matches!(c, 'x' | 'X'));
                if d.is_ascii_alphanumeric() || d == '.' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            let literal: String = chars[start..i].iter().collect();
            let is_float = literal.contains(['.', 'e', 'E']) && !literal.contains(['x', 'X']);
            match literal.strip_suffix(['f', 'F']) {
                Some(stripped) if is_float => out.push_str(stripped),
                _ => out.push_str(&literal),
            }
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Grid sizes of the standard set (`quick` shrinks them for a smoke run).
#[derive(Clone, Copy, Debug)]
struct Sizes {
    side_2d: f64,
    side_3d: f64,
    image: (f64, f64),
}

fn sizes(quick: bool) -> Sizes {
    if quick {
        Sizes {
            side_2d: 2048.0,
            side_3d: 128.0,
            image: (960.0, 540.0),
        }
    } else {
        Sizes {
            side_2d: 16384.0,
            side_3d: 512.0,
            image: (3840.0, 2160.0),
        }
    }
}

fn case(
    programs: &Path,
    stem: &str,
    precision: Precision,
    params: Vec<(String, f64)>,
    schedule_label: &str,
    request: ScheduleRequest,
) -> BenchCase {
    BenchCase {
        label: format!("{stem} {precision} {schedule_label}"),
        name: stem.to_string(),
        path: programs.join(format!("{stem}.sdsl")),
        precision,
        params,
        schedule_label: schedule_label.to_string(),
        request,
    }
}

fn p(list: &[(&str, f64)]) -> Vec<(String, f64)> {
    list.iter().map(|(n, v)| (n.to_string(), *v)).collect()
}

/// The standard set over the programs in `programs` (`bench/programs`).
pub fn standard_suite(programs: &Path, quick: bool) -> Vec<BenchCase> {
    let s = sizes(quick);
    let default = ScheduleRequest::default();
    let global = ScheduleRequest {
        shm: ShmRequest::None,
        ..ScheduleRequest::default()
    };
    let mut cases = Vec::new();
    let mut both = |stem: &str, precision: Precision, params: Vec<(String, f64)>| {
        cases.push(case(
            programs,
            stem,
            precision,
            params.clone(),
            "default",
            default.clone(),
        ));
        cases.push(case(
            programs,
            stem,
            precision,
            params,
            "shm-none",
            global.clone(),
        ));
    };
    for precision in [Precision::F32, Precision::F64] {
        for stem in ["j2d5pt", "j2d9pt", "box2d2r", "gradient2d"] {
            both(stem, precision, p(&[("n", s.side_2d), ("steps", 1.0)]));
        }
        for stem in ["star3d1r", "j3d27pt"] {
            both(stem, precision, p(&[("n", s.side_3d), ("steps", 1.0)]));
        }
        let (w, h) = s.image;
        both(
            "gaussian_blur",
            precision,
            p(&[("width", w), ("height", h), ("steps", 1.0)]),
        );
    }
    both(
        "rician3d",
        Precision::Native,
        p(&[
            ("dim0", s.side_3d),
            ("dim1", s.side_3d),
            ("dim2", s.side_3d),
            ("steps", 1.0),
            ("sigma", 0.05),
            ("lambda", 0.065),
        ]),
    );
    let (w, h) = s.image;
    let thorin = [
        ("thorin-no-shm", ThorinVariant::NoShm),
        ("thorin-tables", ThorinVariant::TablesOnly),
        ("thorin-tiles-tables", ThorinVariant::TilesAndTables),
    ];
    for (label, variant) in thorin {
        cases.push(case(
            programs,
            "gaussian_blur",
            Precision::F32,
            p(&[("width", w), ("height", h), ("steps", 1.0)]),
            label,
            ScheduleRequest::thorin(variant),
        ));
        cases.push(case(
            programs,
            "j2d9pt",
            Precision::F32,
            p(&[("n", s.side_2d), ("steps", 1.0)]),
            label,
            ScheduleRequest::thorin(variant),
        ));
    }
    cases
}

/// A result or the reason a case could not be measured.
pub type Outcome = Result<BenchResult, String>;

/// `bench/gpu/RESULTS.md`: one table of every case on `device`.
pub fn results_markdown(device: &str, outcomes: &[(BenchCase, Outcome)]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# GPU benchmark results\n");
    let _ = writeln!(
        out,
        "Device: **{device}**. Written by `stencilc bench-gpu`.\n"
    );
    out.push_str(
        "Time per sweep is the median over the measured sweeps (CUDA events, data on the \
         device). Effective bytes count one read and one write per point per field level a \
         stencil touches; copy bandwidth is `cuMemcpyDtoD` of half those bytes (it reads and \
         writes each), so `of copy` is the fraction of the achievable bandwidth. `vs naive` is \
         the naive kernel's time over stencilc's (above 1: stencilc is faster); `max diff` is \
         the largest difference from the naive result after one sweep, relative to the \
         largest magnitude.\n\n",
    );
    out.push_str(
        "| case | schedule | ms/sweep | GStencil/s | GB/s | of copy | naive ms | vs naive | max diff |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (case, outcome) in outcomes {
        match outcome {
            Ok(r) => {
                let naive = r.naive_ms.map_or("–".into(), |v| format!("{v:.4}"));
                let ratio = r
                    .speedup_vs_naive
                    .map_or("–".into(), |v| format!("{v:.2}×"));
                let diff = r
                    .max_rel_diff_vs_naive
                    .map_or("–".into(), |v| format!("{v:.1e}"));
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.4} | {:.2} | {:.1} | {:.0} % | {naive} | {ratio} | {diff} |",
                    case.label,
                    r.schedule.replace('\n', "; "),
                    r.stencilc_ms,
                    r.gstencils_per_s,
                    r.effective_gb_per_s,
                    100.0 * r.fraction_of_copy
                );
            }
            Err(why) => {
                let _ = writeln!(
                    out,
                    "| {} | – | failed: {} | | | | | | |",
                    case.label,
                    why.replace('|', "/").replace('\n', " ")
                );
            }
        }
    }
    out
}

/// Where `run.sh` and the CLI look for the programs by default.
pub fn default_programs_dir() -> PathBuf {
    PathBuf::from("bench/programs")
}
