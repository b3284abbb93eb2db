//! The functions a kernel of the subset may call besides its own `__device__`
//! functions: the math functions (with the precision each computes in) and
//! the warp shuffles.

use super::ast::Scalar;

/// The warp shuffles of the subset: `__shfl_sync(mask, v, lane[, width])` and
/// its `up`, `down` and `xor` forms (the emulator runs them with the lanes of a
/// warp in step: see `exec::emu`).
pub const SHUFFLES: &[&str] = &[
    "__shfl_sync",
    "__shfl_up_sync",
    "__shfl_down_sync",
    "__shfl_xor_sync",
];

/// The math functions of the subset: name, the precision it computes in
/// (`None`: overloaded on its arguments, as CUDA's C++ overloads are), and
/// its number of arguments.
pub const MATH: &[(&str, Option<Scalar>, usize)] = &[
    ("sqrtf", Some(Scalar::Float), 1),
    ("rsqrtf", Some(Scalar::Float), 1),
    ("expf", Some(Scalar::Float), 1),
    ("exp2f", Some(Scalar::Float), 1),
    ("logf", Some(Scalar::Float), 1),
    ("log2f", Some(Scalar::Float), 1),
    ("sinf", Some(Scalar::Float), 1),
    ("cosf", Some(Scalar::Float), 1),
    ("tanf", Some(Scalar::Float), 1),
    ("tanhf", Some(Scalar::Float), 1),
    ("fabsf", Some(Scalar::Float), 1),
    ("floorf", Some(Scalar::Float), 1),
    ("ceilf", Some(Scalar::Float), 1),
    ("powf", Some(Scalar::Float), 2),
    ("fminf", Some(Scalar::Float), 2),
    ("fmaxf", Some(Scalar::Float), 2),
    ("fmodf", Some(Scalar::Float), 2),
    ("sqrt", None, 1),
    ("rsqrt", None, 1),
    ("exp", None, 1),
    ("exp2", None, 1),
    ("log", None, 1),
    ("log2", None, 1),
    ("sin", None, 1),
    ("cos", None, 1),
    ("tan", None, 1),
    ("tanh", None, 1),
    ("fabs", None, 1),
    ("floor", None, 1),
    ("ceil", None, 1),
    ("pow", None, 2),
    ("fmin", None, 2),
    ("fmax", None, 2),
    ("fmod", None, 2),
    ("min", None, 2),
    ("max", None, 2),
    ("abs", None, 1),
];

/// The type a call of math function `name` computes in, given its arguments'
/// types: integers for `min`/`max`/`abs` on integers, else `float` when every
/// argument is `float` (or the name ends in `f`), else `double`.
pub fn math_type(name: &str, args: &[Scalar]) -> Scalar {
    let Some(&(_, fixed, _)) = MATH.iter().find(|(n, _, _)| *n == name) else {
        return Scalar::Double;
    };
    if let Some(fixed) = fixed {
        return fixed;
    }
    let common = args.iter().copied().fold(Scalar::Bool, Scalar::common);
    if matches!(name, "min" | "max" | "abs") {
        return common;
    }
    if common == Scalar::Float {
        Scalar::Float
    } else {
        Scalar::Double
    }
}
