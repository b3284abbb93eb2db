//! `stencilc run --verify`: the interpreter runs beside the chosen back-end on
//! the same inputs, and every compared field must agree.
//!
//! The interpreter and the compiled C compute bit for bit the same values (the
//! C is compiled with `-ffp-contract=off`), so for them any difference is a
//! failure. GPU back-ends (OpenCL, CUDA) use their own `sqrt`, `exp`, ..., and
//! with `--fma` every compiler, the C one too, may contract `a * b + c` into a
//! fused multiply-add: then a point passes when it
//! differs by at most [`FLOAT_TOLERANCE`] (`float` fields) or
//! [`DOUBLE_TOLERANCE`] (`double` fields) times the field's largest magnitude in
//! the interpreter's result (1 when that is 0). Integer fields must always
//! match exactly, and so must the number of iterations.
//!
//! NaN is one value here: its sign bit and payload are not part of a result's
//! meaning, and any NaN equals any NaN (even where the comparison is exact), while
//! a NaN against a number fails. They do differ between back-ends: C and OpenCL
//! compilers rewrite `x * -1.0f` as `-x`, which flips a NaN's sign where the
//! interpreter's multiplication keeps it (a NaN `a` gives `0x7fc00000` in the
//! interpreter and `0xffc00000` from C and OpenCL on x86); the NaN an invalid
//! operation creates (`0/0`, `inf - inf`, `sqrt(-1)`) is the hardware's (negative
//! `0xffc00000` on x86 CPUs, PoCL included; positive `0x7fffffff` on NVIDIA GPUs);
//! and which operand's payload `a + b` passes on when both are NaN depends on the
//! order the compiler gives them.

use serde_json::{json, Map, Value as Json};
use stencilc::exec::backend::Backend;
use stencilc::exec::Buffer;
use stencilc::ir::{ScalarType, Value};

use crate::cli::error::CliError;
use crate::cli::scalar::{plain_number, value_json};

/// GPU back-ends: the largest difference allowed in a `float` field, relative to
/// the field's largest magnitude.
pub const FLOAT_TOLERANCE: f64 = 1e-4;
/// GPU back-ends: the largest difference allowed in a `double` field, relative
/// to the field's largest magnitude.
pub const DOUBLE_TOLERANCE: f64 = 1e-10;

/// The relative tolerance of `backend` for fields of type `ty`, built with
/// `--fma` or not: 0 (exact) for the interpreter, integer fields, and the
/// compiled C without `--fma`.
pub fn tolerance(backend: Backend, ty: ScalarType, fma: bool) -> f64 {
    let approximate = match backend {
        Backend::OpenCl | Backend::Cuda => true,
        Backend::C | Backend::Auto => fma,
        Backend::Interp => false,
    };
    match ty {
        ScalarType::Float if approximate => FLOAT_TOLERANCE,
        ScalarType::Double if approximate => DOUBLE_TOLERANCE,
        _ => 0.0,
    }
}

/// How one field compares.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldCheck {
    /// The field's name.
    pub field: String,
    /// The largest absolute difference (infinite where exactly one is NaN).
    pub max_abs: f64,
    /// The largest difference relative to the interpreter's value, over the
    /// points where that is not zero.
    pub max_rel: f64,
    /// The largest absolute difference allowed.
    pub allowed: f64,
    /// The point of the largest difference, outermost axis first, with both
    /// values (back-end, interpreter); `None` when every point is equal.
    pub worst: Option<(Vec<usize>, Value, Value)>,
}

impl FieldCheck {
    /// Whether the field passed.
    pub fn passed(&self) -> bool {
        self.max_abs <= self.allowed
    }
}

/// The result of `--verify`.
#[derive(Clone, Debug, PartialEq)]
pub struct Verification {
    /// The back-end checked.
    pub backend: Backend,
    /// Iterations the back-end ran.
    pub iterations: u64,
    /// Iterations the interpreter ran.
    pub reference_iterations: u64,
    /// One entry per compared field.
    pub fields: Vec<FieldCheck>,
}

impl Verification {
    /// Whether everything agreed.
    pub fn passed(&self) -> bool {
        self.iterations == self.reference_iterations && self.fields.iter().all(FieldCheck::passed)
    }

    /// The results for `--json`.
    pub fn to_json(&self) -> Json {
        let fields: Map<String, Json> = self
            .fields
            .iter()
            .map(|c| {
                let (index, value, reference) = match &c.worst {
                    Some((index, v, r)) => (json!(index), value_json(*v), value_json(*r)),
                    None => (Json::Null, Json::Null, Json::Null),
                };
                let entry = json!({
                    "passed": c.passed(),
                    "max_abs_diff": c.max_abs,
                    "max_rel_diff": c.max_rel,
                    "allowed_abs_diff": c.allowed,
                    "worst_index": index,
                    "backend_value": value,
                    "interp_value": reference,
                });
                (c.field.clone(), entry)
            })
            .collect();
        json!({
            "reference": "interp",
            "passed": self.passed(),
            "iterations": self.iterations,
            "interp_iterations": self.reference_iterations,
            "fields": fields,
        })
    }

    /// One line per field, for `-v` and the text summary.
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "verified against the interpreter: {}\n",
            if self.passed() { "passed" } else { "FAILED" }
        );
        for c in &self.fields {
            text.push_str(&format!(
                "  {}: largest difference {:.3e} (relative {:.3e}, allowed {:.3e})\n",
                c.field, c.max_abs, c.max_rel, c.allowed
            ));
        }
        text
    }

    /// The error of a failed verification: the first field that differs, where,
    /// and both values.
    pub fn error(&self) -> Option<CliError> {
        if self.iterations != self.reference_iterations {
            return Some(CliError::new(
                format!(
                    "--verify: the {} back-end ran {} iteration(s), the interpreter {}; no output written",
                    self.backend, self.iterations, self.reference_iterations
                ),
                "the back-end's check decided differently from the interpreter's; \
                 report this as a bug in stencilc with the program and the command line",
            ));
        }
        let bad = self.fields.iter().find(|c| !c.passed())?;
        let (index, value, reference) = bad.worst.as_ref()?;
        let allowed = if bad.allowed == 0.0 {
            "none: it must match exactly".to_string()
        } else {
            format!("{:.3e}", bad.allowed)
        };
        Some(CliError::new(
            format!(
                "--verify: field `{}` differs from the interpreter's: at index {index:?} the {} back-end gives {} and the interpreter {} (difference {:.3e}, relative {:.3e}; allowed {allowed}); no output written",
                bad.field,
                self.backend,
                plain_number(*value),
                plain_number(*reference),
                bad.max_abs,
                bad.max_rel,
            ),
            "`--fast-math` (or `--cflags`) lets the C compiler change results; run without it. \
             Otherwise this is a bug in stencilc: please report it with the program and the command line",
        ))
    }
}

/// Compares the back-end's values of a field with the interpreter's, on a grid
/// of size `dims` (outermost first); `fma`: the back-end was built with `--fma`.
pub fn compare_field(
    field: &str,
    backend: Backend,
    fma: bool,
    got: &Buffer,
    reference: &Buffer,
    dims: &[usize],
) -> FieldCheck {
    let ty = reference.ty();
    let differs = |i: usize| -> f64 {
        match (got, reference) {
            (Buffer::Int(a), Buffer::Int(b)) => (f64::from(a[i]) - f64::from(b[i])).abs(),
            (Buffer::Long(a), Buffer::Long(b)) => (a[i] as f64 - b[i] as f64).abs().max(
                // Two longs too close for an f64 to tell apart still differ.
                if a[i] == b[i] { 0.0 } else { 1.0 },
            ),
            _ => float_diff(got.get(i).as_f64(), reference.get(i).as_f64()),
        }
    };
    let scale = match reference {
        Buffer::Float(_) | Buffer::Double(_) => {
            let largest = (0..reference.len())
                .map(|i| reference.get(i).as_f64().abs())
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max);
            if largest > 0.0 {
                largest
            } else {
                1.0
            }
        }
        _ => 1.0,
    };
    let mut max_abs = 0.0f64;
    let mut max_rel = 0.0f64;
    let mut worst = None;
    let len = if got.ty() == ty {
        got.len().min(reference.len())
    } else {
        0
    };
    for i in 0..len {
        let d = differs(i);
        if d > max_abs || (worst.is_none() && d > 0.0) {
            max_abs = d;
            worst = Some(i);
        }
        let r = reference.get(i).as_f64().abs();
        if r > 0.0 && d.is_finite() {
            max_rel = max_rel.max(d / r);
        } else if d.is_infinite() {
            max_rel = f64::INFINITY;
        }
    }
    FieldCheck {
        field: field.to_string(),
        max_abs,
        max_rel,
        allowed: tolerance(backend, ty, fma) * scale,
        worst: worst.map(|i| (unflatten(i, dims), got.get(i), reference.get(i))),
    }
}

/// The absolute difference of two floating-point values; NaN equals NaN, and
/// NaN against a number is infinitely different.
fn float_diff(a: f64, b: f64) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => 0.0,
        (true, false) | (false, true) => f64::INFINITY,
        _ if a == b => 0.0,
        _ => (a - b).abs(),
    }
}

/// A row-major flat index as grid coordinates, outermost axis first.
fn unflatten(mut flat: usize, dims: &[usize]) -> Vec<usize> {
    let mut index = vec![0; dims.len()];
    for (slot, &size) in index.iter_mut().zip(dims).rev() {
        if size > 0 {
            *slot = flat % size;
            flat /= size;
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_must_match_exactly_and_reports_the_worst_point() {
        let reference = Buffer::Float(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let got = Buffer::Float(vec![1.0, 2.0, 3.0, 4.0, 5.0 + 1e-6, 6.0]);
        let check = compare_field("u", Backend::C, false, &got, &reference, &[2, 3]);
        assert!(!check.passed());
        let (index, value, interp) = check.worst.clone().unwrap();
        assert_eq!(index, vec![1, 1]);
        assert_eq!(value, Value::Float(5.0 + 1e-6));
        assert_eq!(interp, Value::Float(5.0));
        let same = compare_field("u", Backend::C, false, &reference, &reference, &[2, 3]);
        assert!(same.passed() && same.worst.is_none() && same.max_abs == 0.0);
    }

    #[test]
    fn gpu_back_ends_get_a_tolerance_relative_to_the_field() {
        let reference = Buffer::Float(vec![100.0, 0.0]);
        let close = Buffer::Float(vec![100.0, 0.005]);
        let far = Buffer::Float(vec![100.0, 0.02]);
        assert!(compare_field("u", Backend::OpenCl, false, &close, &reference, &[2]).passed());
        assert!(!compare_field("u", Backend::OpenCl, false, &far, &reference, &[2]).passed());
        assert!(!compare_field("u", Backend::C, false, &close, &reference, &[2]).passed());
        let ints = Buffer::Int(vec![1, 2]);
        let off = Buffer::Int(vec![1, 3]);
        assert!(!compare_field("n", Backend::Cuda, false, &off, &ints, &[2]).passed());
    }

    #[test]
    fn c_built_with_fma_gets_the_float_tolerance() {
        let reference = Buffer::Float(vec![100.0, 0.0]);
        let last_bits = Buffer::Float(vec![100.00001, 0.0]);
        assert!(!compare_field("u", Backend::C, false, &last_bits, &reference, &[2]).passed());
        let check = compare_field("u", Backend::C, true, &last_bits, &reference, &[2]);
        assert!(check.passed(), "{check:?}");
        assert_eq!(check.allowed, FLOAT_TOLERANCE * 100.0);
        assert_eq!(tolerance(Backend::Interp, ScalarType::Float, true), 0.0);
        assert_eq!(tolerance(Backend::C, ScalarType::Int, true), 0.0);
    }

    #[test]
    fn nan_matches_only_nan() {
        let reference = Buffer::Double(vec![f64::NAN, 1.0]);
        assert!(compare_field("u", Backend::C, false, &reference, &reference, &[2]).passed());
        let got = Buffer::Double(vec![0.0, 1.0]);
        let check = compare_field("u", Backend::Cuda, false, &got, &reference, &[2]);
        assert!(!check.passed() && check.max_abs.is_infinite());
    }

    #[test]
    fn nan_sign_and_payload_do_not_count_even_where_comparison_is_exact() {
        // What `x * -1.0f` gives for a NaN `x`: the interpreter keeps the sign,
        // C and OpenCL (which compute `-x`) flip it.
        let interp = Buffer::Float(vec![
            f32::from_bits(0x7fc0_0000),
            f32::from_bits(0x7fc0_0001),
        ]);
        let flipped = Buffer::Float(vec![
            f32::from_bits(0xffc0_0000),
            f32::from_bits(0xffc0_1234),
        ]);
        assert_eq!(tolerance(Backend::C, ScalarType::Float, false), 0.0);
        let check = compare_field("o", Backend::C, false, &flipped, &interp, &[2]);
        assert!(check.passed() && check.max_abs == 0.0, "{check:?}");
        assert!(compare_field("o", Backend::OpenCl, false, &flipped, &interp, &[2]).passed());
    }

    #[test]
    fn the_error_names_the_field_the_point_and_both_values() {
        let reference = Buffer::Float(vec![0.5, 0.25]);
        let got = Buffer::Float(vec![0.5, 0.75]);
        let verification = Verification {
            backend: Backend::C,
            iterations: 3,
            reference_iterations: 3,
            fields: vec![compare_field(
                "img",
                Backend::C,
                false,
                &got,
                &reference,
                &[1, 2],
            )],
        };
        let text = verification.error().unwrap().to_string();
        assert!(text.contains("field `img`"), "{text}");
        assert!(text.contains("[0, 1]") && text.contains("0.75") && text.contains("0.25"));
        let json = verification.to_json();
        assert_eq!(json["passed"], false);
        assert_eq!(json["fields"]["img"]["worst_index"], json!([0, 1]));
    }
}
