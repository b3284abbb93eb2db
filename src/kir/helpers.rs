//! The small inline functions that make generated C, OpenCL C and CUDA compute
//! what the interpreter computes where C leaves the result undefined or
//! implementation-defined (see [`crate::ir::semantics`] for the defined
//! results): integer `/` and `%` by zero and `MIN / -1`, float to integer
//! conversions out of range or NaN, the boundary modes' index mapping, and
//! `fmin`/`fmax` (also the steps of `min`/`max` reductions), which order -0.0
//! below +0.0 so that a reduction's result does not depend on the order its
//! partial results are combined in.
//!
//! Each helper is described once here and printed for every target family with
//! the same name and body; only the function qualifier (`static inline`,
//! `static __device__ __forceinline__`) and the index type differ (C indexes
//! with `long`, the GPU kernels with `int`). Code generators call a helper only
//! where a plain operator could differ: float code never uses one, and a
//! division by a literal other than 0 and -1 stays a plain `/`.
//!
//! Index arithmetic: an offset is computed in its own SDSL type (an `int` offset
//! wraps at 32 bits like any `int` expression); the coordinate it reaches
//! (point + offset) and its boundary mapping are computed in 64 bits, so a read
//! at any `int` offset, however far outside the grid, lands on the same element
//! on every back-end.

use std::fmt::Write;

use crate::ir::{
    BinaryOp, BoundaryMode, Expr, LocalId, MathFn, Program, ReduceOp, ScalarType, Value,
};

/// A helper function of generated code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Helper {
    /// `sdsl_min`/`sdsl_max` on `long` (C loop bounds).
    MinMax,
    /// `sdsl_clamp(i, n)`: the nearest index in `0..n`.
    Clamp,
    /// `sdsl_mirror(i, n)`: reflected without repeating the edge (-1 reads 1).
    Mirror,
    /// `sdsl_periodic(i, n)`: wrapped around (-1 reads n-1).
    Periodic,
    /// `sdsl_inside(i, n)`: whether `0 <= i < n` (boundary zero).
    Inside,
    /// `sdsl_div_i32`/`sdsl_div_i64`: integer `/` with `x / 0 == 0` and
    /// `MIN / -1 == MIN`. The type is `Int` or `Long`.
    Div(ScalarType),
    /// `sdsl_rem_i32`/`sdsl_rem_i64`: integer `%` with `x % 0 == 0` and
    /// `x % -1 == 0`. The type is `Int` or `Long`.
    Rem(ScalarType),
    /// `sdsl_f32_to_i32` and the like: truncation toward zero, saturated at the
    /// target's limits, NaN gives 0. `from` is `Float` or `Double`, `to` is
    /// `Int` or `Long`.
    FloatToInt {
        /// The floating source type.
        from: ScalarType,
        /// The integer target type.
        to: ScalarType,
    },
    /// `sdsl_add_i32`, `sdsl_neg_i64` and the like: two's complement wrapping
    /// arithmetic, for the GPU languages, which have no `-fwrapv` (their
    /// compilers otherwise assume that signed arithmetic never overflows and
    /// may, for instance, compute an `int` product in 64 bits). The type is
    /// `Int` or `Long`.
    Wrapping(WrapOp, ScalarType),
    /// `sdsl_fmax_f32`, `sdsl_fmin_f64` and the like: SDSL's `fmax`/`fmin`
    /// and one step of a `max`/`min` reduction over a floating type. A NaN
    /// argument gives the other one (C's `fmax`), and -0.0 is below +0.0
    /// (IEEE 754-2019 `maximumNumber`), where C leaves the sign of a zero
    /// result unspecified: a total order on the values kept, so that every
    /// order of combining gives the same result. The type is `Float` or
    /// `Double`.
    Extremum(Extremum, ScalarType),
}

/// Which of two values a [`Helper::Extremum`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Extremum {
    /// The largest value.
    Max,
    /// The smallest value.
    Min,
}

impl Extremum {
    fn name(self) -> &'static str {
        match self {
            Extremum::Max => "max",
            Extremum::Min => "min",
        }
    }
}

/// An integer operation that [`Helper::Wrapping`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WrapOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `-a`.
    Neg,
}

impl WrapOp {
    /// The operation for a binary operator, if it is one of `+ - *`.
    pub fn of_binary(op: BinaryOp) -> Option<WrapOp> {
        match op {
            BinaryOp::Add => Some(WrapOp::Add),
            BinaryOp::Sub => Some(WrapOp::Sub),
            BinaryOp::Mul => Some(WrapOp::Mul),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            WrapOp::Add => "add",
            WrapOp::Sub => "sub",
            WrapOp::Mul => "mul",
            WrapOp::Neg => "neg",
        }
    }
}

/// How one target family spells a helper's declaration.
#[derive(Clone, Copy, Debug)]
pub struct Spelling<'a> {
    /// The function qualifier: `static inline`, `static __device__ __forceinline__`.
    pub qualifier: &'a str,
    /// The type of a grid index and extent: `long` (C) or `int` (GPU kernels).
    pub index: &'a str,
    /// Whether each [`Helper::Extremum`] is also declared as an OpenMP
    /// reduction of the same name (C), for `reduction(sdsl_max_f64: acc)`.
    pub omp_reductions: bool,
}

impl Spelling<'static> {
    /// The C back-end's spelling.
    pub const C: Spelling<'static> = Spelling {
        qualifier: "static inline",
        index: "long",
        omp_reductions: true,
    };
}

/// `i32`/`i64`/`f32`/`f64`: the suffix naming a type in helper names.
fn short(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Int => "i32",
        ScalarType::Long => "i64",
        ScalarType::Float => "f32",
        ScalarType::Double => "f64",
    }
}

/// The unsigned type of the same width, in which wrapping negation is defined.
fn unsigned(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Long => "unsigned long",
        _ => "unsigned int",
    }
}

/// The C literal of an integer type's maximum.
fn max_literal(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Long => "9223372036854775807L",
        _ => "2147483647",
    }
}

impl Helper {
    /// The helper that maps an index for a boundary mode (`None` for zero, whose
    /// reads are tested with [`Helper::Inside`], and for none).
    pub fn for_mode(mode: BoundaryMode) -> Option<Helper> {
        match mode {
            BoundaryMode::Clamp => Some(Helper::Clamp),
            BoundaryMode::Mirror => Some(Helper::Mirror),
            BoundaryMode::Periodic => Some(Helper::Periodic),
            BoundaryMode::Zero | BoundaryMode::None => None,
        }
    }

    /// The helper for the integer operator `op` on `ty` when the divisor is
    /// `divisor` (its value when known at generation time): `None` where the
    /// plain C operator already gives the defined result.
    pub fn for_operator(op: BinaryOp, ty: ScalarType, divisor: Option<Value>) -> Option<Helper> {
        if ty.is_float() || !matches!(op, BinaryOp::Div | BinaryOp::Rem) {
            return None;
        }
        let safe = divisor.is_some_and(|d| {
            let d = d.as_i64();
            d != 0 && d != -1
        });
        match (safe, op) {
            (true, _) => None,
            (false, BinaryOp::Div) => Some(Helper::Div(ty)),
            (false, _) => Some(Helper::Rem(ty)),
        }
    }

    /// The helper for a conversion from `from` to `to`, where a plain C cast is
    /// undefined for some values (floating to integer).
    pub fn for_cast(from: ScalarType, to: ScalarType) -> Option<Helper> {
        (from.is_float() && !to.is_float()).then_some(Helper::FloatToInt { from, to })
    }

    /// The function's name in generated code.
    pub fn name(self) -> String {
        match self {
            Helper::MinMax => "sdsl_max".into(),
            Helper::Clamp => "sdsl_clamp".into(),
            Helper::Mirror => "sdsl_mirror".into(),
            Helper::Periodic => "sdsl_periodic".into(),
            Helper::Inside => "sdsl_inside".into(),
            Helper::Div(ty) => format!("sdsl_div_{}", short(ty)),
            Helper::Rem(ty) => format!("sdsl_rem_{}", short(ty)),
            Helper::FloatToInt { from, to } => format!("sdsl_{}_to_{}", short(from), short(to)),
            Helper::Wrapping(op, ty) => format!("sdsl_{}_{}", op.name(), short(ty)),
            Helper::Extremum(end, ty) => format!("sdsl_f{}_{}", end.name(), short(ty)),
        }
    }

    /// The helper for one step of a reduction `op` over `ty`: `None` where the
    /// plain comparison is already order-free (integers, `+`, `*`).
    pub fn for_reduction(op: ReduceOp, ty: ScalarType) -> Option<Helper> {
        let end = match op {
            ReduceOp::Max => Extremum::Max,
            ReduceOp::Min => Extremum::Min,
            ReduceOp::Sum | ReduceOp::Product => return None,
        };
        ty.is_float().then_some(Helper::Extremum(end, ty))
    }

    /// The helper that computes the math function `func` (`float_form`: its
    /// `f`-suffixed form), where C's own function leaves a result unspecified
    /// (the sign of a zero `fmin`/`fmax`).
    pub fn for_math(func: MathFn, float_form: bool) -> Option<Helper> {
        let end = match func {
            MathFn::Fmax => Extremum::Max,
            MathFn::Fmin => Extremum::Min,
            _ => return None,
        };
        let ty = if float_form {
            ScalarType::Float
        } else {
            ScalarType::Double
        };
        Some(Helper::Extremum(end, ty))
    }

    /// The definition, in C, OpenCL C or CUDA as `spelling` says.
    pub fn definition(self, spelling: Spelling<'_>) -> String {
        let q = spelling.qualifier;
        let idx = spelling.index;
        // `(int)` where a 64-bit value in range is returned as a GPU index.
        let narrow = if idx == "long" {
            String::new()
        } else {
            format!("({idx})")
        };
        let name = self.name();
        let mut out = String::new();
        match self {
            Helper::MinMax => {
                let _ = writeln!(
                    out,
                    "{q} long sdsl_min(long a, long b) {{ return a < b ? a : b; }}\n\
                     {q} long sdsl_max(long a, long b) {{ return a > b ? a : b; }}"
                );
            }
            Helper::Clamp => {
                let _ = writeln!(
                    out,
                    "/* boundary clamp: the nearest edge element */\n\
                     {q} {idx} {name}(long i, {idx} n)\n{{\n    \
                     return i < 0 ? 0 : (i >= n ? n - 1 : {narrow}i);\n}}"
                );
            }
            Helper::Mirror => {
                let _ = writeln!(
                    out,
                    "/* boundary mirror: reflected without repeating the edge (-1 reads 1) */\n\
                     {q} {idx} {name}(long i, {idx} n)\n{{\n    \
                     long period, m;\n    \
                     if (i >= 0 && i < n) return {narrow}i;\n    \
                     if (n == 1) return 0;\n    \
                     period = 2 * ((long)n - 1);\n    \
                     m = i % period;\n    \
                     if (m < 0) m += period;\n    \
                     return {narrow}(m < n ? m : period - m);\n}}"
                );
            }
            Helper::Periodic => {
                let _ = writeln!(
                    out,
                    "/* boundary periodic: wrapped around (-1 reads n-1) */\n\
                     {q} {idx} {name}(long i, {idx} n)\n{{\n    \
                     long m;\n    \
                     if (i >= 0 && i < n) return {narrow}i;\n    \
                     m = i % n;\n    \
                     return {narrow}(m < 0 ? m + n : m);\n}}"
                );
            }
            Helper::Inside => {
                let _ = writeln!(
                    out,
                    "/* boundary zero: reads outside the grid give 0 */\n\
                     {q} int {name}(long i, {idx} n) {{ return i >= 0 && i < n; }}"
                );
            }
            // Branch-free (selects only), so that the C compiler can vectorise
            // a loop of them and pair `/` and `%` of the same operands: the
            // divisor is replaced by 1 where the hardware would trap.
            Helper::Div(ty) => {
                let t = ty.name();
                let u = unsigned(ty);
                let _ = writeln!(
                    out,
                    "/* {t} division: x / 0 is 0, MIN / -1 wraps to MIN */\n\
                     {q} {t} {name}({t} a, {t} b)\n{{\n    \
                     {t} q = a / ((b == 0 || b == -1) ? 1 : b);\n    \
                     return b == 0 ? 0 : (b == -1 ? ({t})(({u})0 - ({u})a) : q);\n}}"
                );
            }
            Helper::Rem(ty) => {
                let t = ty.name();
                let _ = writeln!(
                    out,
                    "/* {t} remainder: x % 0 and x % -1 are 0 */\n\
                     {q} {t} {name}({t} a, {t} b)\n{{\n    \
                     return a % ((b == 0 || b == -1) ? 1 : b);\n}}"
                );
            }
            Helper::FloatToInt { from, to } => float_to_int(&mut out, q, &name, from, to),
            Helper::Wrapping(op, ty) => {
                let t = ty.name();
                let u = unsigned(ty);
                let (params, value) = match op {
                    WrapOp::Neg => (format!("{t} a"), format!("({u})0 - ({u})a")),
                    _ => {
                        let symbol = match op {
                            WrapOp::Add => '+',
                            WrapOp::Sub => '-',
                            _ => '*',
                        };
                        (format!("{t} a, {t} b"), format!("({u})a {symbol} ({u})b"))
                    }
                };
                let _ = writeln!(out, "{q} {t} {name}({params}) {{ return ({t})({value}); }}");
            }
            Helper::Extremum(end, ty) => {
                let t = ty.name();
                let (further, zero) = match end {
                    Extremum::Max => (">", "!signbit(a)"),
                    Extremum::Min => ("<", "signbit(a)"),
                };
                let _ = writeln!(
                    out,
                    "/* f{which}: a NaN argument gives the other one, and -0.0 is below +0.0 */\n\
                     {q} {t} {name}({t} a, {t} b)\n{{\n    \
                     return a {further} b || (a == b && {zero}) || isnan(b) ? a : b;\n}}",
                    which = end.name(),
                );
                if spelling.omp_reductions {
                    let identity = match end {
                        Extremum::Max => "-INFINITY",
                        Extremum::Min => "INFINITY",
                    };
                    let _ = writeln!(
                        out,
                        "#pragma omp declare reduction({name} : {t} : omp_out = {name}(omp_out, omp_in)) \\\n    \
                         initializer(omp_priv = {identity})"
                    );
                }
            }
        }
        out
    }
}

/// The definition of a saturating float-to-integer conversion from `from` to
/// `to`, appended to `out`.
fn float_to_int(out: &mut String, q: &str, name: &str, from: ScalarType, to: ScalarType) {
    let (f, t) = (from.name(), to.name());
    let max = max_literal(to);
    // -2^31 and 2^31 (or 2^63) are exact in float and double, and
    // truncation is defined on [-2^31, 2^31): the value converted is
    // clamped into that range (NaN to 0) before the cast.
    let bound = match (to, from) {
        (ScalarType::Long, ScalarType::Float) => "9223372036854775808.0f",
        (ScalarType::Long, _) => "9223372036854775808.0",
        (_, ScalarType::Float) => "2147483648.0f",
        _ => "2147483648.0",
    };
    let zero = if from == ScalarType::Float {
        "0.0f"
    } else {
        "0.0"
    };
    let _ = writeln!(
        out,
        "/* {f} to {t}: truncated toward zero, saturated, NaN gives 0 */\n\
             {q} {t} {name}({f} x)\n{{\n    \
             {f} in_range = x < -{bound} ? -{bound} : (x < {bound} ? x : {zero});\n    \
             return x >= {bound} ? {max} : ({t})in_range;\n}}"
    );
}

/// The definitions of `helpers`, in the order given, separated by blank lines.
pub fn definitions(helpers: impl IntoIterator<Item = Helper>, spelling: Spelling<'_>) -> String {
    helpers
        .into_iter()
        .map(|h| h.definition(spelling))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The value of an integer offset or index expression when it is known at
/// generation time, computed as the program computes it (in the expression's
/// type, with the interpreter's operators): literals, named constants that do
/// not depend on parameters, and loop variables that `local` fixes. `None`
/// when it depends on anything else.
pub fn known_value(
    program: &Program,
    e: &Expr,
    local: &dyn Fn(LocalId) -> Option<i64>,
) -> Option<Value> {
    /// Constants (through their defining expressions) and the caller's loop
    /// variables are known; nothing else is.
    struct Known<'a> {
        program: &'a Program,
        local: &'a dyn Fn(LocalId) -> Option<i64>,
    }
    impl crate::ir::eval::Leaves for Known<'_> {
        fn constant(&self, id: crate::ir::ConstId) -> Option<Value> {
            let constant = self.program.constants.get(id.0)?;
            crate::ir::eval::eval(&constant.value, self).ok()
        }
        fn local(&self, id: LocalId) -> Option<Value> {
            (self.local)(id).map(Value::Long)
        }
    }
    crate::ir::eval::eval(e, &Known { program, local }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_the_types() {
        assert_eq!(Helper::Div(ScalarType::Int).name(), "sdsl_div_i32");
        assert_eq!(Helper::Rem(ScalarType::Long).name(), "sdsl_rem_i64");
        let cast = Helper::for_cast(ScalarType::Double, ScalarType::Int).unwrap();
        assert_eq!(cast.name(), "sdsl_f64_to_i32");
        assert_eq!(Helper::for_cast(ScalarType::Int, ScalarType::Float), None);
    }

    #[test]
    fn plain_operators_where_they_are_defined() {
        let div = |d: Option<Value>| Helper::for_operator(BinaryOp::Div, ScalarType::Int, d);
        assert_eq!(div(Some(Value::Int(2))), None);
        assert_eq!(
            div(Some(Value::Int(-1))),
            Some(Helper::Div(ScalarType::Int))
        );
        assert_eq!(div(Some(Value::Int(0))), Some(Helper::Div(ScalarType::Int)));
        assert_eq!(div(None), Some(Helper::Div(ScalarType::Int)));
        let float = Helper::for_operator(BinaryOp::Div, ScalarType::Float, None);
        assert_eq!(float, None, "float code is never penalised");
    }

    #[test]
    fn gpu_and_c_share_one_body() {
        let gpu = Spelling {
            qualifier: "static inline",
            index: "int",
            omp_reductions: false,
        };
        let c = Helper::Mirror.definition(Spelling::C);
        let g = Helper::Mirror.definition(gpu);
        let g = g.replace("(int)", "");
        assert_eq!(c.replace("long", "int"), g.replace("long", "int"));
    }
}
