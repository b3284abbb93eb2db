//! Parameter values from `--set`, and grid sizes inferred from input files.
//!
//! A parameter left out of `--set` that is, on its own, the size of a grid axis
//! (`grid g[height][width]`) takes that axis's extent from the shape of any
//! `.npy`, `.png` or `.pgm` input of a field on that grid. Inputs that disagree
//! are an error; `--set` always wins over inference (and a file that does not
//! fit the value set is then reported when it is read).

use std::path::{Path, PathBuf};

use stencilc::exec::Bindings;
use stencilc::io;
use stencilc::ir::{Expr, ExprKind, FieldId, ParamId, Program, ScalarType, Value};

use crate::cli::args::Assignment;
use crate::cli::error::{name_list, CliError};

/// A parameter value inferred from a file, remembered for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Inferred {
    /// The parameter.
    pub param: ParamId,
    /// Its value.
    pub value: Value,
    /// The file whose shape gave it.
    pub from: PathBuf,
}

/// Parses `text` as a value of type `ty`. C's suffixes are accepted where they
/// fit the type (`0.5f` for a float, `10L` for a long).
pub fn parse_value(text: &str, ty: ScalarType) -> Option<Value> {
    match ty {
        ScalarType::Int => text.parse().ok().map(Value::Int),
        ScalarType::Long => text
            .strip_suffix(['l', 'L'])
            .unwrap_or(text)
            .parse()
            .ok()
            .map(Value::Long),
        ScalarType::Float => text
            .strip_suffix(['f', 'F'])
            .unwrap_or(text)
            .parse()
            .ok()
            .map(Value::Float),
        ScalarType::Double => text.parse().ok().map(Value::Double),
    }
}

fn example_value(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Int | ScalarType::Long => "an integer such as 64",
        ScalarType::Float | ScalarType::Double => "a number such as 0.25",
    }
}

fn describe_params(program: &Program) -> String {
    if program.params.is_empty() {
        return format!("`{}` has no parameters", program.name);
    }
    let list: Vec<String> = program
        .params
        .iter()
        .map(|p| format!("{} ({})", p.name, p.ty))
        .collect();
    format!(
        "the parameters of `{}` are: {}",
        program.name,
        list.join(", ")
    )
}

/// The values `--set` gives, by `ParamId`; unknown names, bad values and
/// duplicates are errors.
pub fn parse_sets(program: &Program, sets: &[Assignment]) -> Result<Vec<Option<Value>>, CliError> {
    let mut values: Vec<Option<Value>> = vec![None; program.params.len()];
    for set in sets {
        let Some(index) = program.params.iter().position(|p| p.name == set.name) else {
            let message = if program.constants.iter().any(|c| c.name == set.name) {
                format!(
                    "`{}` is a constant of the program, not a parameter",
                    set.name
                )
            } else {
                format!("`{}` is not a parameter of the program", set.name)
            };
            return Err(CliError::new(
                format!("{message} (in `--set {}={}`)", set.name, set.value),
                describe_params(program),
            ));
        };
        let param = &program.params[index];
        let value = parse_value(&set.value, param.ty).ok_or_else(|| {
            CliError::new(
                format!(
                    "`{}` is not a valid {} for parameter `{}`",
                    set.value, param.ty, param.name
                ),
                format!(
                    "give {}: `--set {}=VALUE` is parsed as the parameter's type, {}",
                    example_value(param.ty),
                    param.name,
                    param.ty
                ),
            )
        })?;
        if values[index].replace(value).is_some() {
            return Err(CliError::new(
                format!("parameter `{}` is set more than once", param.name),
                format!("give `--set {}=VALUE` once", param.name),
            ));
        }
    }
    Ok(values)
}

/// The parameter an expression is, seen through casts (`grid g[n]` with `long n`
/// is `(int)n` after the front-end's conversions).
fn as_param(expr: &Expr) -> Option<ParamId> {
    match &expr.kind {
        ExprKind::Param(p) => Some(*p),
        ExprKind::Cast(inner) => as_param(inner),
        _ => None,
    }
}

/// Fills unset grid-size parameters from the shapes of input files; `inputs` are
/// the `--input` fields and files. Returns what was inferred, in parameter order.
pub fn infer_grid_sizes(
    program: &Program,
    values: &mut [Option<Value>],
    inputs: &[(FieldId, &Path)],
) -> Result<Vec<Inferred>, CliError> {
    let mut found: Vec<Option<Inferred>> = vec![None; program.params.len()];
    for &(field, path) in inputs {
        let grid = &program.grids[program.fields[field.0].grid.0];
        let axes: Vec<(usize, ParamId)> = grid
            .dims
            .iter()
            .enumerate()
            .filter_map(|(axis, dim)| as_param(dim).map(|p| (axis, p)))
            .filter(|(_, p)| values[p.0].is_none())
            .collect();
        if axes.is_empty() {
            continue;
        }
        // A file of the wrong rank is reported when it is read.
        let Some(shape) = io::probe_shape(path)?.filter(|s| s.len() == grid.rank()) else {
            continue;
        };
        for (axis, param) in axes {
            let decl = &program.params[param.0];
            let extent = shape[axis];
            let value = match decl.ty {
                ScalarType::Int => i32::try_from(extent).ok().map(Value::Int),
                ScalarType::Long => i64::try_from(extent).ok().map(Value::Long),
                ScalarType::Float | ScalarType::Double => None,
            };
            let Some(value) = value else { continue };
            match &found[param.0] {
                Some(earlier) if earlier.value != value => return Err(CliError::new(
                    format!(
                        "the inputs disagree on grid size `{}`: `{}` gives {} but `{}` gives {}",
                        decl.name,
                        earlier.from.display(),
                        earlier.value,
                        path.display(),
                        value
                    ),
                    format!(
                        "give inputs of the same shape, or set the size with `--set {}=VALUE`",
                        decl.name
                    ),
                )),
                Some(_) => {}
                None => {
                    found[param.0] = Some(Inferred {
                        param,
                        value,
                        from: path.to_path_buf(),
                    })
                }
            }
        }
    }
    let inferred: Vec<Inferred> = found.into_iter().flatten().collect();
    for i in &inferred {
        values[i.param.0] = Some(i.value);
    }
    Ok(inferred)
}

/// The final bindings; every parameter must have a value by now.
pub fn complete(program: &Program, values: Vec<Option<Value>>) -> Result<Bindings, CliError> {
    let missing: Vec<&str> = program
        .params
        .iter()
        .zip(&values)
        .filter(|(_, v)| v.is_none())
        .map(|(p, _)| p.name.as_str())
        .collect();
    if !missing.is_empty() {
        let sets: Vec<String> = missing.iter().map(|n| format!("--set {n}=VALUE")).collect();
        let (noun, verb, pronoun) = if missing.len() == 1 {
            ("parameter", "is", "it")
        } else {
            ("parameters", "are", "them")
        };
        return Err(CliError::new(
            format!(
                "{noun} {} of `{}` {verb} not given a value",
                name_list(&missing),
                program.name
            ),
            format!(
                "give {pronoun} with `{}` (grid sizes can also come from the shape of an .npy or image --input)",
                sets.join(" ")
            ),
        ));
    }
    Ok(Bindings {
        params: values.into_iter().flatten().collect(),
    })
}
