//! `stencilc compile`: source-to-source for C/C++ files with SDSL regions, with
//! sdslc's options (guide ch. 5): `-f IN -o OUT [-b c|affine-c|overtile] [-x] [-v] [-l]`.

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
    /// The code generator: `c` (sdslc's name for it, `affine-c`, is accepted too), or
    /// `overtile`: CUDA C++ for nvcc, each region run on the GPU.
    #[arg(short = 'b', long = "backend", default_value = "c", value_parser = ["c", "affine-c", "overtile"])]
    pub backend: String,
    /// sdslc's option for GT2xx/Tesla 10xx GPUs; accepted, changes nothing
    /// (the kernels stencilc generates need no legacy variant).
    #[arg(short = 'l', long = "legacy-gpu")]
    pub legacy_gpu: bool,
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
    /// For `-b overtile`: values of host identifiers that a pragma's `block:`
    /// or `tile:` uses (`--set BX=16` for `block:BX*2,8`), which the kernels
    /// are compiled with.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = crate::cli::args::parse_assignment)]
    pub sets: Vec<crate::cli::args::Assignment>,
    /// For `-b overtile`: kernels index with 64-bit integers, for grids of
    /// more than 2^31 - 1 points (without it, the wrapper refuses them).
    #[arg(long)]
    pub index64: bool,
}

/// Runs `stencilc compile`.
pub fn run(args: &CompileArgs) -> Result<(), CliError> {
    refuse_output_over_input(&args.input, &args.output)?;
    let text = stencilc::source::read_source(&args.input, stencilc::source::MAX_SOURCE_BYTES)
        .map_err(|e| {
            crate::cli::program::source_error(
                &args.input,
                "the input",
                &e,
                "give -f the path of a C/C++ file with #pragma sdsl regions",
            )
        })?;
    let source = SourceFile::new(args.input.display().to_string(), text);
    let mut regions =
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
    if args.backend == "overtile" {
        return overtile(args, &source, &mut regions);
    }
    if args.legacy_gpu {
        eprintln!("note: -l/--legacy-gpu applies to -b overtile only; ignored");
    }
    if args.index64 || !args.sets.is_empty() {
        eprintln!(
            "note: --set and --index64 shape the GPU kernels of -b overtile; the C code does not use them"
        );
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
            if region.program.hints.any() {
                eprintln!(
                    "region {}: the pragma's options (block, tile, vector, shm, fuse, time) are GPU schedule hints; the C code does not use them",
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
    crate::cli::paths::write_text(&args.output, &output)?;
    if args.verbose {
        eprintln!("wrote {}", args.output.display());
    }
    Ok(())
}

/// `-b overtile`: the host file with each region run on a CUDA GPU.
fn overtile(
    args: &CompileArgs,
    source: &SourceFile,
    regions: &mut [stencilc::ir::Region],
) -> Result<(), CliError> {
    use stencilc::back::c::overtile::{self as gpu, OvertileOptions};
    use stencilc::driver::overtile::rewrite_host_for_cuda_in;
    if args.legacy_gpu {
        eprintln!(
            "note: -l/--legacy-gpu changes nothing: sdslc used it for GT2xx and Tesla 10xx GPUs, \
             and stencilc's kernels need no variant for them"
        );
    }
    for region in regions.iter_mut() {
        crate::cli::params::bind_hint_values(&mut region.program, &args.sets, &[])?;
        let program = &region.program;
        // Block and tile sizes are compiled into the kernels: a host
        // identifier without a value is an error at the identifier.
        stencilc::schedule::hinted_shape(program, &Default::default()).map_err(|d| {
            CliError::Located(stencilc::diag::Diagnostics::new(
                program.source.clone(),
                vec![d],
            ))
        })?;
        // So is the time-tile size.
        stencilc::schedule::time::asked_time_steps(program, &Default::default()).map_err(|d| {
            CliError::Located(stencilc::diag::Diagnostics::new(
                program.source.clone(),
                vec![d],
            ))
        })?;
    }
    let envs: Vec<_> = regions
        .iter()
        .map(|region| values_of_every_param(&region.program, &args.sets))
        .collect();
    let output = rewrite_host_for_cuda_in(
        source,
        regions,
        OvertileOptions {
            extern_c: args.extern_c,
            fma: args.fma.fma,
            wide_indices: args.index64,
        },
        &envs,
    )
    .map_err(|e| {
        CliError::new(
            format!("cannot generate CUDA for `{}`: {e}", args.input.display()),
            "change the region's pragma (block:, tile:) as the message says",
        )
    })?;
    // Why a requested time tiling is not applied, as `run` says it.
    for report in &output.regions {
        for note in &report.notes {
            eprintln!("note: region {}: {note}", report.index);
        }
    }
    if args.verbose {
        for (region, report) in regions.iter().zip(&output.regions) {
            let (line, _) = source.line_col(region.span.start as usize);
            eprintln!(
                "region {} (line {line}): `{}`, sets sdsl_return_{}; kernels {}",
                region.index,
                embed::wrapper_symbol(&region.program),
                region.index,
                report.kernels.join(", ")
            );
            for text in &report.schedule {
                eprintln!("region {}: schedule {text}", region.index);
            }
            for text in &report.reasons {
                eprintln!("region {}: {text}", region.index);
            }
        }
    }
    crate::cli::paths::write_text(&args.output, &output.text)?;
    if args.verbose {
        eprintln!(
            "wrote {}; build it with `nvcc -O3 -arch=native {} -o PROGRAM {}`",
            args.output.display(),
            gpu::nvcc_options(args.fma.fma),
            args.output.display()
        );
    }
    Ok(())
}

/// The run values of `program` when `--set` gives every parameter one (then
/// the model chooses a time-tile size the pragma does not give); `None`
/// otherwise, or when they do not make a run (the run decides at run time).
fn values_of_every_param(
    program: &stencilc::ir::Program,
    sets: &[crate::cli::args::Assignment],
) -> Option<stencilc::ir::env::RunEnv> {
    let params = program
        .params
        .iter()
        .map(|param| {
            let set = sets.iter().rev().find(|s| s.name == param.name)?;
            crate::cli::params::parse_value(&set.value, param.ty)
        })
        .collect::<Option<Vec<_>>>()?;
    let bindings = stencilc::ir::env::Bindings { params };
    stencilc::ir::env::RunEnv::new(program, &bindings).ok()
}

/// Refuses an output that is the input (the same path, a symbolic link to it, a
/// path through `..` or a hard link): writing it would replace the SDSL source.
fn refuse_output_over_input(input: &Path, output: &Path) -> Result<(), CliError> {
    if !stencilc::files::same_file(input, output) {
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
