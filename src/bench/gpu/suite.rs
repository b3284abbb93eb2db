//! The standard GPU benchmark set, the f64 variants of float programs, and the
//! Markdown report.
//!
//! The set: every program of `bench/programs` at 2-D 16384² or 3-D
//! 512³ in f32 and f64 (the Rician denoiser is written in double and runs in
//! f64 only), the Gaussian blur on a 3840×2160 image, and the Thorin report's
//! three variants (no shared memory, the table in global memory; the table in
//! shared memory; tiles and table in shared memory) of the blur and of j2d9pt
//! with its weights in a table (`j2d9pt_table`). Each case runs under the
//! default schedule and `--shm none`, so a staged schedule can be compared with
//! the global-memory one. `j2d5pt_check` (a max-change reduction checked every
//! iteration) and the Rician denoiser (checked every 10) are also timed by
//! whole iterations.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::bench::gpu::{BenchCase, BenchResult, Precision};
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
        both(
            "heat3d",
            precision,
            p(&[("n", s.side_3d), ("steps", 1.0), ("alpha", 0.1)]),
        );
        let (w, h) = s.image;
        both(
            "gaussian_blur",
            precision,
            p(&[("width", w), ("height", h), ("steps", 1.0)]),
        );
    }
    both(
        "j2d5pt_check",
        Precision::F32,
        p(&[("n", s.side_2d), ("steps", 1.0)]),
    );
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
            "j2d9pt_table",
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

/// A time in ms with 4 decimals, or `–`.
fn ms(value: Option<f64>) -> String {
    value.map_or("–".into(), |v| format!("{v:.4}"))
}

/// A measured/predicted ratio, or `–`.
fn times(value: Option<f64>) -> String {
    value.map_or("–".into(), |v| format!("{v:.2}×"))
}

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
         device). `ms/iter` is the mean time of a whole iteration as `run --backend cuda` \
         executes it (stencils, the reductions when the check is due, their values read back \
         and the check evaluated), for programs with reductions or a check. `pred` columns \
         are the performance model's prediction (`stencilc explain`, bench/gpu/MODEL.md) for \
         the same schedule and sizes on the matching device preset, and `meas/pred` the \
         measured time over the predicted one. Effective bytes count one read and one write \
         per point per field level a stencil touches; copy bandwidth is `cuMemcpyDtoD` of \
         half those bytes (it reads and writes each), so `of copy` is the fraction of the \
         achievable bandwidth. `vs naive` is the naive kernel's time over stencilc's (above \
         1: stencilc is faster); `max diff` is the largest difference from the naive result \
         after one sweep, relative to the largest magnitude.\n\n",
    );
    out.push_str(
        "| case | schedule | ms/sweep | pred | meas/pred | ms/iter | pred | meas/pred | \
         GStencil/s | GB/s | of copy | naive ms | vs naive | max diff |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut notes: Vec<String> = Vec::new();
    for (case, outcome) in outcomes {
        match outcome {
            Ok(r) => {
                let diff = r
                    .max_rel_diff_vs_naive
                    .map_or("–".into(), |v| format!("{v:.1e}"));
                let predicted = r.predicted.as_ref();
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.4} | {} | {} | {} | {} | {} | {:.2} | {:.1} | {:.0} % | {} | {} | {diff} |",
                    case.label,
                    r.schedule.replace('\n', "; "),
                    r.stencilc_ms,
                    ms(predicted.map(|p| p.sweep_ms)),
                    times(r.sweep_measured_over_predicted),
                    ms(r.iteration_ms),
                    ms(predicted
                        .filter(|_| r.iteration_ms.is_some())
                        .map(|p| p.iteration_ms)),
                    times(r.iteration_measured_over_predicted),
                    r.gstencils_per_s,
                    r.effective_gb_per_s,
                    100.0 * r.fraction_of_copy,
                    ms(r.naive_ms),
                    times(r.speedup_vs_naive),
                );
                let note = predicted
                    .and_then(|p| p.note.clone())
                    .or_else(|| r.prediction_error.clone());
                if let Some(note) = note {
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                }
            }
            Err(why) => {
                let _ = writeln!(
                    out,
                    "| {} | – | failed: {} | | | | | | | | | | | |",
                    case.label,
                    why.replace('|', "/").replace('\n', " ")
                );
            }
        }
    }
    if !notes.is_empty() {
        out.push_str("\nModel notes:\n\n");
        for note in notes {
            let _ = writeln!(out, "- {note}");
        }
    }
    out
}

/// `results.json`: the device and, per case, the case, its result (measured
/// figures, the prediction and their ratios) or its error.
pub fn results_json(device: &str, outcomes: &[(BenchCase, Outcome)]) -> serde_json::Value {
    let cases: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|(case, outcome)| {
            serde_json::json!({
                "case": case,
                "result": outcome.as_ref().ok(),
                "error": outcome.as_ref().err(),
            })
        })
        .collect();
    serde_json::json!({ "device": device, "cases": cases })
}

/// Where `run.sh` and the CLI look for the programs by default.
pub fn default_programs_dir() -> PathBuf {
    PathBuf::from("bench/programs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::predict::Prediction;

    fn fake_result(iteration_ms: Option<f64>, note: Option<&str>) -> BenchResult {
        BenchResult {
            device: "NVIDIA H100 80GB HBM3 (sm_90)".into(),
            schedule: "j2d5pt: block 32,8,1\nmax_change: block 256".into(),
            points: 1000,
            bytes: 8000,
            stencilc_ms: 1.5,
            iteration_ms,
            predicted: Some(Prediction {
                device: "h100-sxm".into(),
                sweep_ms: 1.2,
                iteration_ms: 2.0,
                registers_from_ptxas: note.is_none(),
                note: note.map(String::from),
            }),
            prediction_error: None,
            sweep_measured_over_predicted: None,
            iteration_measured_over_predicted: None,
            naive_ms: Some(3.0),
            copy_ms: 1.0,
            gstencils_per_s: 0.5,
            effective_gb_per_s: 5.0,
            copy_gb_per_s: 8.0,
            fraction_of_copy: 0.625,
            speedup_vs_naive: Some(2.0),
            max_rel_diff_vs_naive: Some(1e-7),
        }
        .with_ratios()
    }

    fn outcomes() -> Vec<(BenchCase, Outcome)> {
        let cases = standard_suite(Path::new("bench/programs"), true);
        let find = |label: &str| cases.iter().find(|c| c.label == label).unwrap().clone();
        vec![
            (
                find("j2d5pt_check f32 default"),
                Ok(fake_result(Some(2.5), Some("no ptxas figures (not found)"))),
            ),
            (find("j2d5pt f32 default"), Ok(fake_result(None, None))),
            (
                find("j2d9pt f32 shm-none"),
                Err("CUDA: out of memory | try smaller sizes".into()),
            ),
        ]
    }

    #[test]
    fn ratios_are_measured_over_predicted() {
        let r = fake_result(Some(2.5), None);
        assert!((r.sweep_measured_over_predicted.unwrap() - 1.25).abs() < 1e-12);
        assert!((r.iteration_measured_over_predicted.unwrap() - 1.25).abs() < 1e-12);
        let r = fake_result(None, None);
        assert_eq!(r.iteration_measured_over_predicted, None);
    }

    #[test]
    fn the_table_puts_each_prediction_beside_its_measurement() {
        let md = results_markdown("NVIDIA H100 80GB HBM3 (sm_90)", &outcomes());
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
        let header: Vec<&str> = rows[0].split('|').map(str::trim).collect();
        assert_eq!(
            &header[1..9],
            &[
                "case",
                "schedule",
                "ms/sweep",
                "pred",
                "meas/pred",
                "ms/iter",
                "pred",
                "meas/pred"
            ]
        );
        let width = header.len();
        let check: Vec<&str> = rows[1].split('|').map(str::trim).collect();
        assert_eq!(check.len(), width);
        assert_eq!(
            &check[1..9],
            &[
                "j2d5pt_check f32 default",
                "j2d5pt: block 32,8,1; max_change: block 256",
                "1.5000",
                "1.2000",
                "1.25×",
                "2.5000",
                "2.0000",
                "1.25×"
            ]
        );
        // Without iteration work there is no iteration time, nor its prediction.
        let plain: Vec<&str> = rows[2].split('|').map(str::trim).collect();
        assert_eq!(&plain[6..9], &["–", "–", "–"]);
        // A failed case keeps the table's shape; `|` in the reason cannot break it.
        let failed: Vec<&str> = rows[3].split('|').map(str::trim).collect();
        assert_eq!(failed.len(), width);
        assert!(failed[3].starts_with("failed: CUDA: out of memory / try"));
        assert!(md.contains("\n- no ptxas figures (not found)\n"), "{md}");
    }

    #[test]
    fn the_json_carries_measurements_predictions_ratios_and_errors() {
        let json = results_json("dev", &outcomes());
        let text = serde_json::to_string_pretty(&json).unwrap();
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["device"], "dev");
        let first = &back["cases"][0];
        assert_eq!(first["case"]["label"], "j2d5pt_check f32 default");
        assert_eq!(first["result"]["stencilc_ms"], 1.5);
        assert_eq!(first["result"]["iteration_ms"], 2.5);
        assert_eq!(first["result"]["predicted"]["sweep_ms"], 1.2);
        assert_eq!(first["result"]["predicted"]["iteration_ms"], 2.0);
        assert_eq!(first["result"]["predicted"]["device"], "h100-sxm");
        assert_eq!(first["result"]["sweep_measured_over_predicted"], 1.25);
        assert_eq!(first["result"]["iteration_measured_over_predicted"], 1.25);
        assert!(first["error"].is_null());
        assert!(back["cases"][1]["result"]["iteration_ms"].is_null());
        let failed = &back["cases"][2];
        assert!(failed["result"].is_null());
        assert_eq!(failed["error"], "CUDA: out of memory | try smaller sizes");
    }

    #[test]
    fn the_suite_has_whole_iteration_cases_and_thorin_on_a_table() {
        let cases = standard_suite(Path::new("bench/programs"), false);
        let labels: Vec<&str> = cases.iter().map(|c| c.label.as_str()).collect();
        for label in [
            "j2d5pt_check f32 default",
            "j2d5pt_check f32 shm-none",
            "rician3d native default",
            "j2d9pt_table f32 thorin-no-shm",
            "j2d9pt_table f32 thorin-tables",
            "j2d9pt_table f32 thorin-tiles-tables",
        ] {
            assert!(labels.contains(&label), "missing {label}");
        }
    }
}
