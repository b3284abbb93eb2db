//! `stencilc compile`: source-to-source for C/C++ files with SDSL regions, with
//! sdslc's options (guide ch. 5): `-f IN -o OUT [-b c|affine-c] [-x] [-v]`.

use std::path::{Path, PathBuf};

use stencilc::back::c::embed::{self, EmbedOptions};
use stencilc::source::SourceFile;

use crate::cli::error::CliError;

/// Arguments of `stencilc compile`.
#[derive(clap::Args, Debug)]
pub struct CompileArgs {
    /// The C/C++ file with `#pragma sdsl begin ... end` regions.
    #[arg(short = 'f', long = "in", value_name = "FILE")]
    pub input: PathBuf,
    /// Where to write the C/C++ file with each region replaced by generated code.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub output: PathBuf,
    /// The code generator: `c` (sdslc's name for it, `affine-c`, is accepted too).
    #[arg(short = 'b', long = "backend", default_value = "c", value_parser = ["c", "affine-c"])]
    pub backend: String,
    /// Give the generated wrapper functions C linkage (`extern "C"`), for C++ hosts.
    #[arg(short = 'x', long = "extern-c")]
    pub extern_c: bool,
    /// Say what is generated, region by region.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// The output is meant to be compiled with `-ffp-contract=fast` (its
    /// header says so; your compiler's flags decide).
    #[command(flatten)]
    pub fma: crate::cli::args::FmaArgs,
}

/// Runs `stencilc compile`.
pub fn run(args: &CompileArgs) -> Result<(), CliError> {
    refuse_output_over_input(&args.input, &args.output)?;
    let text = std::fs::read_to_string(&args.input).map_err(|e| {
        CliError::new(
            format!("cannot read `{}`: {e}", args.input.display()),
            "give -f the path of a C/C++ file with #pragma sdsl regions",
        )
    })?;
    let source = SourceFile::new(args.input.display().to_string(), text);
    let regions =
        stencilc::analysis::checked_regions(stencilc::front::parse_regions(source.clone())?)?;
    if regions.is_empty() {
        return Err(CliError::new(
            format!("`{}` has no SDSL region", args.input.display()),
            "mark the SDSL code with `#pragma sdsl begin` and `#pragma sdsl end` lines",
        ));
    }
    for region in &regions {
        let (line, _) = source.line_col(region.span.start as usize);
        let missing_names = embed::unmentioned_host_names(&source, &regions, region);
        for name in embed::unchecked_host_arrays(&source, &regions, region) {
            if missing_names.iter().any(|m| m.name == name) {
                continue; // already warned about below
            }
            eprintln!(
                "warning: {}:{line}: region {} binds griddata `{name}` to the host variable \
                 `{name}`, whose declaration stencilc does not recognise before the region, so \
                 its element type is not checked; declare it in this file as an array \
                 (`T {name}[..]`) or a pointer (`T *{name}`) of the griddata's type to have it checked",
                args.input.display(),
                region.index,
            );
        }
        for missing in missing_names {
            let name = &missing.name;
            eprintln!(
                "warning: {}:{line}: region {} binds `{name}` to a host variable of that name, \
                 but the file declares no `{name}` before the region; declare {} there, or the \
                 C compiler will report `{name}` as undeclared at this line",
                args.input.display(),
                region.index,
                missing.wanted,
            );
        }
    }
    if args.verbose {
        for region in &regions {
            let (line, _) = source.line_col(region.span.start as usize);
            eprintln!(
                "region {} (line {line}): `{}`, sets sdsl_return_{}",
                region.index,
                embed::wrapper_symbol(&region.program),
                region.index
            );
            if region.program.hints.all_values().next().is_some() {
                eprintln!(
                    "region {}: the pragma's options (block, tile, time) are GPU schedule hints; the C code does not use them",
                    region.index
                );
            }
        }
    }
    let mut output = embed::rewrite_host(
        &source,
        &regions,
        EmbedOptions {
            extern_c: args.extern_c,
        },
    );
    if args.fma.fma {
        output = stencilc::back::c::with_fma_notice(&output);
    }
    std::fs::write(&args.output, output).map_err(|e| {
        CliError::new(
            format!("cannot write `{}`: {e}", args.output.display()),
            "give -o a path in a writable folder",
        )
    })?;
    if args.verbose {
        eprintln!("wrote {}", args.output.display());
    }
    Ok(())
}

/// Refuses an output that is the input (the same path, a symbolic link to it, a
/// path through `..` or a hard link): writing it would replace the SDSL source.
fn refuse_output_over_input(input: &Path, output: &Path) -> Result<(), CliError> {
    if !is_same_file(input, output) {
        return Ok(());
    }
    Err(CliError::new(
        format!(
            "the output `{}` is the input `{}`: writing it would replace the SDSL regions with generated code and lose them",
            output.display(),
            input.display()
        ),
        "give -o a different file, e.g. `-o out.c`; nothing was written",
    ))
}

/// Whether two paths name one file: equal after resolving links and `..`, or
/// (for existing files) the same device and inode.
fn is_same_file(a: &Path, b: &Path) -> bool {
    if let (Some(a), Some(b)) = (resolve(a), resolve(b)) {
        if a == b {
            return true;
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    false
}

/// The canonical form of `path`; for a file that does not exist yet, its
/// folder's canonical form joined with its name.
fn resolve(path: &Path) -> Option<PathBuf> {
    if let Ok(full) = path.canonicalize() {
        return Some(full);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}
