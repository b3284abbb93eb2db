//! `--input FIELD=FILE`, as every command that takes one reads it: the field
//! looked up in the program (an unknown name lists the fields), given once,
//! its file checked before anything else is done (format, readability, rank:
//! [`stencilc::io::check_input`]), and the grid sizes left out of `--set`
//! taken from the files' shapes ([`params::infer_grid_sizes`]).
//!
//! `run` (and `run --decompose`, `tune`) read the files' values afterwards;
//! `explain` and `emit` take only the sizes, so that they describe the kernels
//! a `run` on the same files would compile.

use std::path::PathBuf;

use stencilc::front::suggest;
use stencilc::io::{self, FieldSpec};
use stencilc::ir::env::RunEnv;
use stencilc::ir::{FieldId, Program, Value};

use crate::cli::args::{Assignment, FieldFile};
use crate::cli::error::{name_list, CliError};
use crate::cli::params;

/// `FIELD=FILE` pairs with the field looked up; an unknown name lists the fields.
pub fn resolve_fields(
    program: &Program,
    pairs: &[FieldFile],
    flag: &str,
) -> Result<Vec<(FieldId, PathBuf)>, CliError> {
    pairs
        .iter()
        .map(|pair| {
            let field = find_field(program, &pair.field).ok_or_else(|| {
                unknown_field(
                    program,
                    &pair.field,
                    &format!("{flag} {}={}", pair.field, pair.path.display()),
                )
            })?;
            Ok((field, pair.path.clone()))
        })
        .collect()
}

/// The `--input` pairs with their fields looked up, each field given once.
pub fn resolve(
    program: &Program,
    pairs: &[FieldFile],
) -> Result<Vec<(FieldId, PathBuf)>, CliError> {
    let inputs = resolve_fields(program, pairs, "--input")?;
    for (i, (field, _)) in inputs.iter().enumerate() {
        if inputs[..i].iter().any(|(f, _)| f == field) {
            let name = &program.fields[field.0].name;
            return Err(CliError::new(
                format!("field `{name}` is given more than one --input"),
                format!("give `--input {name}=FILE` once"),
            ));
        }
    }
    Ok(inputs)
}

/// Checks each input's file as far as it can be before the grid's size is
/// known ([`io::check_input`]).
pub fn check(program: &Program, inputs: &[(FieldId, PathBuf)]) -> Result<(), CliError> {
    for (field, path) in inputs {
        io::check_input(path, &field_spec(program, *field))?;
    }
    Ok(())
}

/// The parameter values `--set` gives, with the grid sizes it leaves out
/// taken from the shapes of `inputs`; `say` is told each size so taken.
pub fn values(
    program: &Program,
    sets: &[Assignment],
    inputs: &[(FieldId, PathBuf)],
    say: &dyn Fn(String),
) -> Result<Vec<Option<Value>>, CliError> {
    let mut values = params::parse_sets(program, sets)?;
    let paths: Vec<(FieldId, &std::path::Path)> =
        inputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    for inferred in params::infer_grid_sizes(program, &mut values, &paths)? {
        say(format!(
            "{} = {} (from the shape of `{}`)",
            program.params[inferred.param.0].name,
            inferred.value,
            inferred.from.display()
        ));
    }
    Ok(values)
}

/// [`resolve`], [`check`] and [`values`] in one: what `explain` and `emit`,
/// which read no values, do with their `--input`s. Returns the values and the
/// inputs, for [`check_fits`] once the grids are bound.
pub fn sizes_from_inputs(
    program: &Program,
    sets: &[Assignment],
    pairs: &[FieldFile],
) -> Result<InputSizes, CliError> {
    let inputs = resolve(program, pairs)?;
    check(program, &inputs)?;
    let values = values(program, sets, &inputs, &|_| {})?;
    Ok((values, inputs))
}

/// The parameter values, and the inputs they were taken from.
pub type InputSizes = (Vec<Option<Value>>, Vec<(FieldId, PathBuf)>);

/// Checks that each input fits its field's grid under `env` without reading
/// it ([`io::check_fits`]): what `run` reports when it reads the file (a
/// `--set` that disagrees with the file's shape), for the commands that do
/// not read it.
pub fn check_fits(
    program: &Program,
    env: &RunEnv,
    inputs: &[(FieldId, PathBuf)],
) -> Result<(), CliError> {
    for (field, path) in inputs {
        let dims = env.field_dims(program, *field);
        io::check_fits(path, &field_spec(program, *field), dims)?;
    }
    Ok(())
}

/// The field named `name`.
pub fn find_field(program: &Program, name: &str) -> Option<FieldId> {
    program
        .fields
        .iter()
        .position(|f| f.name == name)
        .map(FieldId)
}

/// The error for a field name the program does not declare (in `context`,
/// the flag as written), with the closest name and the list of fields.
pub fn unknown_field(program: &Program, name: &str, context: &str) -> CliError {
    let names: Vec<&str> = program.fields.iter().map(|f| f.name.as_str()).collect();
    let help = match (
        names.is_empty(),
        suggest::closest(name, names.iter().copied()),
    ) {
        (true, _) => format!("`{}` declares no griddata", program.name),
        (false, Some(close)) => format!(
            "did you mean `{close}`? (the fields of `{}` are {})",
            program.name,
            name_list(&names)
        ),
        (false, None) => format!("the fields of `{}` are {}", program.name, name_list(&names)),
    };
    CliError::new(
        format!("`{name}` is not a field of the program (in `{context}`)"),
        help,
    )
}

/// What a data file must hold for `field`.
pub fn field_spec(program: &Program, field: FieldId) -> FieldSpec {
    let decl = &program.fields[field.0];
    FieldSpec {
        name: decl.name.clone(),
        ty: decl.ty,
        rank: program.grids[decl.grid.0].rank(),
    }
}
