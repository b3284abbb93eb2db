//! The one literal printer of generated code: a [`Value`] as C, CUDA C or
//! OpenCL C source text that reads back as exactly that value, and the plain
//! digits of a value for people. Every printer of code (the kernel-IR printer,
//! the C back-end, the CUDA-to-OpenCL printer, `map`'s kernels) prints its
//! literals here, so a spelling fixed once is fixed everywhere.
//!
//! It lives beside the [`Namer`](crate::kir::names::Namer) rather than in
//! `back` because the kernel-IR printer, below `back`, prints literals too.

use crate::ir::Value;
use crate::kir::names::Language;

/// `value` as a literal of `language` that reads back as exactly `value` and
/// is safe as an operand anywhere: a negative value, and a non-finite one, is
/// parenthesised.
///
/// Floats carry the `f` suffix and the shortest decimal digits that round
/// back to the same value (C, CUDA and OpenCL C all round a decimal literal
/// correctly). `long` values carry `L`: `long` is 64 bits in OpenCL C and on
/// the LP64 platforms the C and CUDA back-ends target.
pub fn literal(value: Value, language: Language) -> String {
    match value {
        Value::Int(v) => integer(i64::from(v)),
        Value::Long(i64::MIN) => "(-9223372036854775807L - 1L)".into(),
        Value::Long(v) if v < 0 => format!("({v}L)"),
        Value::Long(v) => format!("{v}L"),
        Value::Float(v) if !v.is_finite() => non_finite(f64::from(v), true, language).into(),
        Value::Float(v) if v.is_sign_negative() => format!("({v:?}f)"),
        Value::Float(v) => format!("{v:?}f"),
        Value::Double(v) if !v.is_finite() => non_finite(v, false, language).into(),
        Value::Double(v) if v.is_sign_negative() => format!("({v:?})"),
        Value::Double(v) => format!("{v:?}"),
    }
}

/// An integer as a C decimal literal without suffix, which C (and CUDA and
/// OpenCL C) types as `int` where it fits and as `long` otherwise; negative
/// values are parenthesised, and the most negative ones, whose magnitude is no
/// literal of their type, are spelt as a difference.
pub fn integer(value: i64) -> String {
    match value {
        v if v == i64::from(i32::MIN) => "(-2147483647 - 1)".into(),
        i64::MIN => "(-9223372036854775807L - 1L)".into(),
        v if v < 0 => format!("({v})"),
        v => v.to_string(),
    }
}

/// A floating literal, `single` (`float`) or `double`, from its value: the
/// CUDA-to-OpenCL printer's literals, which its parser holds as `f64`.
pub fn floating(value: f64, single: bool, language: Language) -> String {
    if single {
        // The value was parsed as a `float`: the conversion is exact.
        literal(Value::Float(value as f32), language)
    } else {
        literal(Value::Double(value), language)
    }
}

/// The digits of `value` for people and for JSON: the shortest decimal that
/// rounds back to the value, with no suffix; a non-finite value as `inf`,
/// `-inf` or `NaN`, which is no literal of any target.
pub fn plain(value: Value) -> String {
    match value {
        Value::Int(v) => v.to_string(),
        Value::Long(v) => v.to_string(),
        Value::Float(v) => format!("{v:?}"),
        Value::Double(v) => format!("{v:?}"),
    }
}

/// A non-finite value (`single`: a `float`) in `language`.
///
/// Every target spells it the same way, as a constant division: `INFINITY`
/// and `NAN` need `math.h` in C and are `float` constants in OpenCL C, and
/// NVRTC compiles CUDA without any header that defines them, while a division
/// of literals needs no header and has the literals' own type in all three.
fn non_finite(value: f64, single: bool, language: Language) -> &'static str {
    // Named, so that a language added later chooses its own spelling.
    match language {
        Language::C | Language::Cuda | Language::OpenCl => {}
    }
    match single {
        true if value.is_nan() => "(0.0f / 0.0f)",
        true if value > 0.0 => "(1.0f / 0.0f)",
        true => "(-1.0f / 0.0f)",
        false if value.is_nan() => "(0.0 / 0.0)",
        false if value > 0.0 => "(1.0 / 0.0)",
        false => "(-1.0 / 0.0)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_back_in_every_language() {
        for language in [Language::C, Language::Cuda, Language::OpenCl] {
            let l = |v| literal(v, language);
            assert_eq!(l(Value::Int(3)), "3");
            assert_eq!(l(Value::Int(-3)), "(-3)");
            assert_eq!(l(Value::Int(i32::MIN)), "(-2147483647 - 1)");
            assert_eq!(l(Value::Long(3)), "3L");
            assert_eq!(l(Value::Long(i64::MIN)), "(-9223372036854775807L - 1L)");
            assert_eq!(l(Value::Float(0.1)), "0.1f");
            assert_eq!(l(Value::Float(-0.0)), "(-0.0f)");
            assert_eq!(l(Value::Float(1e-7)), "1e-7f");
            assert_eq!(l(Value::Float(f32::INFINITY)), "(1.0f / 0.0f)");
            assert_eq!(l(Value::Float(f32::NEG_INFINITY)), "(-1.0f / 0.0f)");
            assert_eq!(l(Value::Float(f32::NAN)), "(0.0f / 0.0f)");
            assert_eq!(l(Value::Double(0.1)), "0.1");
            assert_eq!(l(Value::Double(1e300)), "1e300");
            assert_eq!(l(Value::Double(f64::INFINITY)), "(1.0 / 0.0)");
            assert_eq!(l(Value::Double(f64::NAN)), "(0.0 / 0.0)");
        }
        assert_eq!(floating(0.2, true, Language::OpenCl), "0.2f");
        assert_eq!(
            floating(f64::INFINITY, true, Language::OpenCl),
            "(1.0f / 0.0f)"
        );
        assert_eq!(integer(3_000_000_000), "3000000000");
        assert_eq!(plain(Value::Float(f32::NAN)), "NaN");
    }

    #[test]
    fn float_digits_round_trip() {
        for v in [
            0.1f32,
            1.0 / 3.0,
            f32::MAX,
            f32::MIN_POSITIVE,
            1e-45,
            16777217.0,
        ] {
            let text = literal(Value::Float(v), Language::C);
            let digits = text.trim_end_matches('f');
            assert_eq!(digits.parse::<f32>().unwrap(), v, "{text}");
            assert!(digits.contains(['.', 'e']), "{text} is a floating literal");
        }
        for v in [0.1f64, 1.0 / 3.0, f64::MAX, 5e-324] {
            let text = literal(Value::Double(v), Language::C);
            assert_eq!(text.parse::<f64>().unwrap(), v, "{text}");
            assert!(text.contains(['.', 'e']), "{text} is a floating literal");
        }
    }
}
