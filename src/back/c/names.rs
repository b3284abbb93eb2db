//! Names in the generated C: everything is named after the program's own
//! parameters, grids, fields and stencils, so that the output reads like the source.

use std::collections::HashSet;

use crate::ir::{FieldId, GridId, Program, ScalarType, StencilPart, Stmt, Value};

/// A C identifier made from a program name (`my-prog.v2` becomes `my_prog_v2`).
pub(super) fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "sdsl_");
    }
    out
}

/// Prefix of every file-scope name of a program.
pub(super) fn prefix(program: &Program) -> String {
    sanitize(&program.name)
}

/// `<program>_run`: the typed function that runs the iterate.
pub(super) fn run_symbol(program: &Program) -> String {
    format!("{}_run", prefix(program))
}

/// `<program>_entry`: the uniform entry point for the native executor.
pub(super) fn entry_symbol(program: &Program) -> String {
    format!("{}_entry", prefix(program))
}

/// `<program>_summary`: the struct the run function fills.
pub(super) fn summary_type(program: &Program) -> String {
    format!("{}_summary", prefix(program))
}

/// The C variable holding one time level of a field: `a_t0`, `a_t1`, `u_tm1`.
pub(super) fn level(program: &Program, field: FieldId, time: i32) -> String {
    let name = &program.fields[field.0].name;
    if time < 0 {
        format!("{name}_tm{}", -time)
    } else {
        format!("{name}_t{time}")
    }
}

/// The size of a grid along an axis (outermost axis 0): `g_n0`.
pub(super) fn grid_size(program: &Program, grid: GridId, axis: usize) -> String {
    format!("{}_n{axis}", program.grids[grid.0].name)
}

/// The element stride of a grid along an axis: `g_s0` (the innermost stride is 1).
pub(super) fn grid_stride(program: &Program, grid: GridId, axis: usize) -> String {
    format!("{}_s{axis}", program.grids[grid.0].name)
}

/// The linear index of the current point in a grid: `g_p`.
pub(super) fn grid_point(program: &Program, grid: GridId) -> String {
    format!("{}_p", program.grids[grid.0].name)
}

/// The loop variable of a spatial axis.
pub(super) fn axis_var(axis: usize) -> String {
    format!("i{axis}")
}

/// The C spelling of a scalar type (`long` is 64-bit: LP64, as the IR says).
pub(super) fn c_type(ty: ScalarType) -> &'static str {
    ty.name()
}

/// A zero of the given type, as a C literal.
pub(super) fn zero(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Int => "0",
        ScalarType::Long => "0L",
        ScalarType::Float => "0.0f",
        ScalarType::Double => "0.0",
    }
}

/// A C literal that reads back to exactly `value`, parenthesised when negative.
pub(super) fn literal(value: Value) -> String {
    match value {
        Value::Int(i32::MIN) => "(-2147483647 - 1)".into(),
        Value::Int(v) if v < 0 => format!("({v})"),
        Value::Int(v) => format!("{v}"),
        Value::Long(i64::MIN) => "(-9223372036854775807L - 1L)".into(),
        Value::Long(v) if v < 0 => format!("({v}L)"),
        Value::Long(v) => format!("{v}L"),
        Value::Float(v) if v.is_nan() => "((float)NAN)".into(),
        Value::Float(v) if v.is_infinite() => {
            if v > 0.0 {
                "HUGE_VALF".into()
            } else {
                "(-HUGE_VALF)".into()
            }
        }
        // Rust's `{:?}` is the shortest text that rounds back to the same value,
        // and C rounds a decimal literal correctly, so the value survives.
        Value::Float(v) if v.is_sign_negative() => format!("({v:?}f)"),
        Value::Float(v) => format!("{v:?}f"),
        Value::Double(v) if v.is_nan() => "((double)NAN)".into(),
        Value::Double(v) if v.is_infinite() => {
            if v > 0.0 {
                "HUGE_VAL".into()
            } else {
                "(-HUGE_VAL)".into()
            }
        }
        Value::Double(v) if v.is_sign_negative() => format!("({v:?})"),
        Value::Double(v) => format!("{v:?}"),
    }
}

/// Every name the program declares at run-function scope, which locals must avoid.
pub(super) fn program_names(program: &Program) -> HashSet<String> {
    let mut taken: HashSet<String> = HashSet::new();
    taken.extend(program.params.iter().map(|p| p.name.clone()));
    taken.extend(program.constants.iter().map(|c| c.name.clone()));
    for (g, grid) in program.grids.iter().enumerate() {
        for axis in 0..grid.rank() {
            taken.insert(grid_size(program, GridId(g), axis));
            taken.insert(grid_stride(program, GridId(g), axis));
        }
        taken.insert(grid_point(program, GridId(g)));
    }
    for (f, field) in program.fields.iter().enumerate() {
        for t in field.time_lo..=field.time_hi {
            taken.insert(level(program, FieldId(f), t));
        }
    }
    for axis in 0..3 {
        taken.insert(axis_var(axis));
        for bound in ["lo", "hi", "in_lo", "in_hi"] {
            taken.insert(format!("{bound}{axis}"));
        }
    }
    taken.extend(["value", "row", "partials", "point"].map(String::from));
    taken
}

/// C names for the locals of a part: the name as written where it is unique,
/// otherwise the name with the local's index (inlined functions may reuse names).
pub(super) fn part_locals(part: &StencilPart, taken: &HashSet<String>) -> Vec<String> {
    part.locals
        .iter()
        .enumerate()
        .map(|(i, local)| {
            let base = sanitize(&local.name);
            let clashes = taken.contains(&base)
                || part
                    .locals
                    .iter()
                    .enumerate()
                    .any(|(j, other)| j != i && sanitize(&other.name) == base);
            if clashes {
                format!("{base}_{i}")
            } else {
                base
            }
        })
        .collect()
}

/// Locals used as `for` variables (declared by their loop, not at the point's top).
pub(super) fn loop_variables(body: &[Stmt], out: &mut HashSet<usize>) {
    for stmt in body {
        if let Stmt::For { var, body, .. } = stmt {
            out.insert(var.0);
            loop_variables(body, out);
        }
    }
}

/// Whether `text` holds `word` as a whole C identifier.
pub(super) fn mentions_word(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before_ok = !text[..at].chars().next_back().is_some_and(is_ident);
        let after_ok = !text[at + word.len()..].chars().next().is_some_and(is_ident);
        before_ok && after_ok
    })
}
