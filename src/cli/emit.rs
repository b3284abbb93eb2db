//! `stencilc emit PROGRAM --target c`: prints the generated code.

use std::path::PathBuf;

use crate::cli::error::CliError;

/// What `emit` can print.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitTarget {
    /// The C with OpenMP that `--backend c` compiles.
    C,
}

/// Arguments of `stencilc emit`.
#[derive(clap::Args, Debug)]
pub struct EmitArgs {
    /// The program: a `.sdsl` file, or a C/C++ file with `#pragma sdsl` regions.
    pub program: PathBuf,
    /// Which code to print.
    #[arg(long, short = 't', value_enum, default_value = "c")]
    pub target: EmitTarget,
    /// For a C/C++ file: which region (from 0).
    #[arg(long)]
    pub region: Option<usize>,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs `stencilc emit`.
pub fn run(args: &EmitArgs) -> Result<(), CliError> {
    let program = crate::cli::program::load(&args.program, args.region)?;
    let text = match args.target {
        EmitTarget::C => stencilc::back::c::emit_program(&program).source,
    };
    match &args.output {
        Some(path) => std::fs::write(path, text).map_err(|e| {
            CliError::new(
                format!("cannot write `{}`: {e}", path.display()),
                "give -o a path in a writable folder",
            )
        }),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}
