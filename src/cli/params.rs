//! Parameter values from `--set`, and grid sizes inferred from input files.
//!
//! A parameter left out of `--set` that is, on its own, the size of a grid axis
//! (`grid g[height][width]`) takes that axis's extent from the shape of any
//! `.npy`, `.png` or `.pgm` input of a field on that grid. Inputs that disagree
//! are an error; `--set` always wins over inference (and a file that does not
//! fit the value set is then reported when it is read).

use std::path::{Path, PathBuf};

use stencilc::diag::Diagnostics;
use stencilc::exec::backend::Backend;
use stencilc::exec::options::RunOptions;
use stencilc::exec::Bindings;
use stencilc::front::suggest;
use stencilc::io;
use stencilc::ir::{FieldId, ParamId, Program, ScalarType, Value};
use stencilc::schedule;
use stencilc::session::{self, ShapeConflict};

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
        ScalarType::Int | ScalarType::Long => "64",
        ScalarType::Float | ScalarType::Double => "0.25",
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
/// duplicates are errors. Names of host identifiers in the region's pragma
/// options are left to [`bind_hint_values`].
pub fn parse_sets(program: &Program, sets: &[Assignment]) -> Result<Vec<Option<Value>>, CliError> {
    let mut values: Vec<Option<Value>> = vec![None; program.params.len()];
    for set in sets {
        let Some(index) = program.params.iter().position(|p| p.name == set.name) else {
            if program.hints.uses(&set.name) {
                continue;
            }
            let message = if program.constants.iter().any(|c| c.name == set.name) {
                format!(
                    "`{}` is a constant of the program, not a parameter",
                    set.name
                )
            } else {
                format!("`{}` is not a parameter of the program", set.name)
            };
            let hint_names = program.hints.names();
            let names = program
                .params
                .iter()
                .map(|p| p.name.as_str())
                .chain(hint_names.iter().map(|(n, _)| *n));
            let mut help = match suggest::closest(&set.name, names) {
                Some(close) => format!("did you mean `{close}`? ({})", describe_params(program)),
                None => describe_params(program),
            };
            if !hint_names.is_empty() {
                let listed: Vec<&str> = hint_names.iter().map(|(n, _)| *n).collect();
                help.push_str(&format!(
                    "; the region's pragma uses the host identifier(s) {}",
                    name_list(&listed)
                ));
            }
            return Err(CliError::new(
                format!("{message} (in `--set {}={}`)", set.name, set.value),
                help,
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
                    "`{}` is {} {}: give a value of that type, e.g. `--set {}={}`",
                    param.name,
                    if param.ty == ScalarType::Int {
                        "an"
                    } else {
                        "a"
                    },
                    param.ty,
                    param.name,
                    example_value(param.ty)
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

/// Gives the host identifiers of the region's pragma options (`block:BX*2,8`)
/// their values: a program parameter of that name gives its value (from
/// `params`), any other name takes its `--set NAME=VALUE`, which overrides a
/// `#define` of the host file. Names nobody gives stay without a value; a
/// command that needs one reports it at the identifier.
pub fn bind_hint_values(
    program: &mut Program,
    sets: &[Assignment],
    params: &[Option<Value>],
) -> Result<(), CliError> {
    let names: Vec<String> = program
        .hints
        .names()
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    for name in names {
        if let Some(index) = program.params.iter().position(|p| p.name == name) {
            match params.get(index).copied().flatten() {
                Some(Value::Int(v)) => {
                    program.hints.values.insert(name, i64::from(v));
                }
                Some(Value::Long(v)) => {
                    program.hints.values.insert(name, v);
                }
                _ => {}
            }
            continue;
        }
        let given: Vec<&Assignment> = sets.iter().filter(|s| s.name == name).collect();
        let set = match given.as_slice() {
            [] => continue,
            [one] => *one,
            _ => {
                return Err(CliError::new(
                    format!("`{name}` is set more than once"),
                    format!("give `--set {name}=VALUE` once"),
                ))
            }
        };
        let value = parse_c_integer(&set.value).ok_or_else(|| {
            CliError::new(
                format!(
                    "`{}` is not an integer for `{name}`, a host identifier of the region's pragma options (in `--set {name}={}`)",
                    set.value, set.value
                ),
                format!("give an integer, e.g. `--set {name}=8`"),
            )
        })?;
        program.hints.values.insert(name, value);
    }
    Ok(())
}

/// Checks, before any input is read, that the pragma's `block:` and `tile:`
/// (where `--block`/`--tile` do not override them) have values for a back-end
/// that schedules GPU kernels; the interpreter and C back-end do not use them.
pub fn check_hint_values(
    program: &Program,
    backend: Backend,
    options: &RunOptions,
) -> Result<(), CliError> {
    if matches!(backend, Backend::Interp | Backend::C) {
        return Ok(());
    }
    let request = options.schedule_request();
    schedule::hinted_shape(program, &request)
        .map(drop)
        .map_err(|mut diagnostic| {
            if backend == Backend::Auto {
                let help = diagnostic.help.take().unwrap_or_default();
                diagnostic.help = Some(format!(
                    "{help}; or choose `--backend c` or `--backend interp`, which do not use the pragma's GPU options"
                ));
            }
            CliError::Located(Diagnostics::new(program.source.clone(), vec![diagnostic]))
        })
}

/// A C integer literal (`8`, `-8`, `0x20`, `8u`, `8L`).
fn parse_c_integer(text: &str) -> Option<i64> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let digits = digits.trim_end_matches(['u', 'U', 'l', 'L']);
    let value = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    Some(if negative { -value } else { value })
}

/// Fills unset grid-size parameters from the shapes of input files; `inputs` are
/// the `--input` fields and files. Returns what was inferred, in parameter order
/// (see [`stencilc::session::grid_sizes_from_shapes`]).
pub fn infer_grid_sizes(
    program: &Program,
    values: &mut [Option<Value>],
    inputs: &[(FieldId, &Path)],
) -> Result<Vec<Inferred>, CliError> {
    let mut shapes: Vec<(FieldId, Vec<usize>, String)> = Vec::new();
    for &(field, path) in inputs {
        // Files are probed only where a size could come from them; a file of
        // the wrong rank is reported when it is read.
        let unset = session::grid_size_params(program, field)
            .into_iter()
            .any(|(_, p)| values[p.0].is_none());
        if !unset {
            continue;
        }
        if let Some(shape) = io::probe_shape(path)? {
            refuse_oversized_extents(program, field, &shape, path)?;
            shapes.push((field, shape, path.display().to_string()));
        }
    }
    let borrowed: Vec<(FieldId, &[usize], String)> = shapes
        .iter()
        .map(|(f, s, from)| (*f, s.as_slice(), from.clone()))
        .collect();
    let inferred = session::grid_sizes_from_shapes(program, values, &borrowed).map_err(
        |ShapeConflict { earlier, later }| {
            let name = &program.params[earlier.param.0].name;
            CliError::new(
                format!(
                    "the inputs disagree on grid size `{name}`: `{}` gives {} but `{}` gives {}",
                    earlier.from, earlier.value, later.from, later.value
                ),
                format!("give inputs of the same shape, or set the size with `--set {name}=VALUE`"),
            )
        },
    )?;
    Ok(inferred
        .into_iter()
        .map(|i| Inferred {
            param: i.param,
            value: i.value,
            from: PathBuf::from(i.from),
        })
        .collect())
}

/// An error when an axis of `shape` (of the file `path` for `field`) is
/// larger than the grid-size parameter it would give can hold: such an
/// extent is not inferred, and the run would otherwise end with "is not given
/// a value", hiding that the file was the problem.
fn refuse_oversized_extents(
    program: &Program,
    field: FieldId,
    shape: &[usize],
    path: &Path,
) -> Result<(), CliError> {
    let grid = &program.grids[program.fields[field.0].grid.0];
    if shape.len() != grid.rank() {
        return Ok(()); // reported when the file is read
    }
    for (axis, param) in session::grid_size_params(program, field) {
        let param = &program.params[param.0];
        let extent = shape[axis];
        let max = match param.ty {
            ScalarType::Int => i32::MAX as u64,
            ScalarType::Long => i64::MAX as u64,
            _ => continue,
        };
        if extent as u64 > max {
            let shown: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
            return Err(CliError::new(
                format!(
                    "`{}` has shape ({}), too large: its extent {extent} on axis {axis} does not fit \
                     the {} grid size `{}` (at most {max})",
                    path.display(),
                    shown.join(", "),
                    param.ty,
                    param.name
                ),
                format!(
                    "give an input of at most {max} points along axis {axis}{}",
                    if param.ty == ScalarType::Int {
                        format!(", or declare `{}` as `long`", param.name)
                    } else {
                        String::new()
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// The final bindings; every parameter must have a value by now.
pub fn complete(program: &Program, values: Vec<Option<Value>>) -> Result<Bindings, CliError> {
    let missing = session::missing_params(program, &values);
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
    Ok(session::bindings(values).expect("every parameter has a value"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stencilc::ir::{
        BoundaryMode, Constant, Expr, ExprKind, Field, Grid, GridId, Param, ScheduleHints,
    };
    use stencilc::source::{SourceFile, Span};

    fn param(name: &str, ty: ScalarType) -> Param {
        Param {
            name: name.into(),
            ty,
            span: Span::default(),
        }
    }

    fn field(name: &str, grid: usize) -> Field {
        Field {
            name: name.into(),
            ty: ScalarType::Float,
            grid: GridId(grid),
            time_lo: 0,
            time_hi: 0,
            boundary: BoundaryMode::None,
            span: Span::default(),
        }
    }

    fn param_expr(id: usize, ty: ScalarType) -> Expr {
        Expr::new(ExprKind::Param(ParamId(id)), ty, Span::default())
    }

    /// `int width, height; long n; float sigma; grid g[height][width];
    /// grid line[(int)n + 1]; griddata img, out on g, v on line; double k = 2;`
    fn program() -> Program {
        let n_plus_one = Expr::new(
            ExprKind::Binary(
                stencilc::ir::BinaryOp::Add,
                Box::new(Expr::new(
                    ExprKind::Cast(Box::new(param_expr(2, ScalarType::Long))),
                    ScalarType::Int,
                    Span::default(),
                )),
                Box::new(Expr::literal(Value::Int(1))),
            ),
            ScalarType::Int,
            Span::default(),
        );
        Program {
            source: SourceFile::new("t.sdsl", ""),
            name: "t".into(),
            params: vec![
                param("width", ScalarType::Int),
                param("height", ScalarType::Int),
                param("n", ScalarType::Long),
                param("sigma", ScalarType::Float),
            ],
            constants: vec![Constant {
                name: "k".into(),
                ty: ScalarType::Double,
                value: Expr::literal(Value::Double(2.0)),
                span: Span::default(),
            }],
            grids: vec![
                Grid {
                    name: "g".into(),
                    dims: vec![
                        param_expr(1, ScalarType::Int),
                        param_expr(0, ScalarType::Int),
                    ],
                    span: Span::default(),
                },
                Grid {
                    name: "line".into(),
                    dims: vec![n_plus_one],
                    span: Span::default(),
                },
            ],
            fields: vec![field("img", 0), field("out", 0), field("v", 1)],
            tables: vec![],
            iterate: None,
            hints: ScheduleHints::default(),
        }
    }

    fn set(name: &str, value: &str) -> Assignment {
        Assignment {
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn values_parse_as_the_parameter_type() {
        assert_eq!(parse_value("64", ScalarType::Int), Some(Value::Int(64)));
        assert_eq!(parse_value("-3", ScalarType::Long), Some(Value::Long(-3)));
        assert_eq!(parse_value("10L", ScalarType::Long), Some(Value::Long(10)));
        assert_eq!(
            parse_value("0.5f", ScalarType::Float),
            Some(Value::Float(0.5))
        );
        assert_eq!(
            parse_value("1e-3", ScalarType::Double),
            Some(Value::Double(1e-3))
        );
        assert_eq!(parse_value("0.5", ScalarType::Int), None);
        assert_eq!(parse_value("3000000000", ScalarType::Int), None);
        assert_eq!(parse_value("0.5f", ScalarType::Double), None);
    }

    #[test]
    fn sets_are_checked_against_the_parameters() {
        let p = program();
        let values = parse_sets(&p, &[set("sigma", "0.25"), set("width", "8")]).unwrap();
        assert_eq!(
            values,
            vec![Some(Value::Int(8)), None, None, Some(Value::Float(0.25))]
        );

        let err = parse_sets(&p, &[set("widht", "8")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "error: `widht` is not a parameter of the program (in `--set widht=8`)\n  = help: did you mean `width`? (the parameters of `t` are: width (int), height (int), n (long), sigma (float))"
        );
        let err = parse_sets(&p, &[set("k", "1")]).unwrap_err().to_string();
        assert!(err.contains("`k` is a constant of the program"), "{err}");
        let err = parse_sets(&p, &[set("width", "wide")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`wide` is not a valid int for parameter `width`"),
            "{err}"
        );
        let err = parse_sets(&p, &[set("n", "1"), set("n", "2")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("set more than once"), "{err}");
    }

    #[test]
    fn missing_parameters_are_named_with_the_flag_to_give_them() {
        let p = program();
        let values = vec![Some(Value::Int(8)), None, Some(Value::Long(4)), None];
        let err = complete(&p, values).unwrap_err().to_string();
        assert_eq!(
            err,
            "error: parameters `height` and `sigma` of `t` are not given a value\n  = help: give them with `--set height=VALUE --set sigma=VALUE` (grid sizes can also come from the shape of an .npy or image --input)"
        );
        let all = vec![
            Some(Value::Int(8)),
            Some(Value::Int(2)),
            Some(Value::Long(4)),
            Some(Value::Float(1.0)),
        ];
        assert_eq!(complete(&p, all.clone()).unwrap().params.len(), 4);
    }

    fn save_image(dir: &Path, name: &str, width: u32, height: u32) -> PathBuf {
        let path = dir.join(name);
        image::GrayImage::new(width, height).save(&path).unwrap();
        path
    }

    #[test]
    fn grid_sizes_come_from_input_shapes() {
        let dir = tempfile::tempdir().unwrap();
        let p = program();
        let a = save_image(dir.path(), "a.png", 5, 3);
        let mut values = vec![None; 4];
        let inferred = infer_grid_sizes(&p, &mut values, &[(FieldId(0), a.as_path())]).unwrap();
        assert_eq!(values[0], Some(Value::Int(5)));
        assert_eq!(values[1], Some(Value::Int(3)));
        assert_eq!(values[2], None, "`n + 1` is not a plain parameter");
        assert_eq!(inferred.len(), 2);
        assert_eq!(inferred[0].from, a);

        // --set wins: width stays as set, height is still inferred.
        let mut values = vec![Some(Value::Int(7)), None, None, None];
        infer_grid_sizes(&p, &mut values, &[(FieldId(0), a.as_path())]).unwrap();
        assert_eq!(values[..2], [Some(Value::Int(7)), Some(Value::Int(3))]);
    }

    #[test]
    fn disagreeing_inputs_are_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = program();
        let a = save_image(dir.path(), "a.png", 5, 3);
        let b = save_image(dir.path(), "b.png", 5, 4);
        let mut values = vec![None; 4];
        let err = infer_grid_sizes(
            &p,
            &mut values,
            &[(FieldId(0), a.as_path()), (FieldId(1), b.as_path())],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("the inputs disagree on grid size `height`")
                && err.contains("gives 3 but")
                && err.contains("gives 4"),
            "{err}"
        );
    }

    #[test]
    fn raw_inputs_and_wrong_ranks_infer_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = program();
        let raw = dir.path().join("a.raw");
        std::fs::write(&raw, [0u8; 60]).unwrap();
        let mut values = vec![None; 4];
        assert!(
            infer_grid_sizes(&p, &mut values, &[(FieldId(0), raw.as_path())])
                .unwrap()
                .is_empty()
        );
        assert_eq!(values, vec![None; 4]);
    }
}
