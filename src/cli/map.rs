//! `stencilc map FILE.c`: plans the loop nests of a sequential C file for a
//! GPU or OpenMP (see [`stencilc::map`]), prints the report, writes the
//! rewritten program, and with `--profile` times each nest of the original.

use std::path::PathBuf;
use std::process::Command;

use clap::{Args, ValueEnum};

use stencilc::files::cleanup::output_listed;
use stencilc::front::c::{lower_unit, CError, CFile, Preprocess};
use stencilc::map::{plan_file, report, rewrite, transform, FilePlan, Target};
use stencilc::model::device::Device;

use crate::cli::error::CliError;
use crate::cli::out;

/// Arguments of `stencilc map`.
#[derive(Args, Debug)]
pub struct MapArgs {
    /// The C file (C99; preprocessed with `cc -E`, or `$CC -E`).
    file: PathBuf,

    /// Where to write the mapped program (default: stdout, unless --report,
    /// --json or --profile is given).
    #[arg(short = 'o', long, value_name = "OUT")]
    output: Option<PathBuf>,

    /// What the mapped nests run on: `c` (OpenMP), `opencl` (direct kernels
    /// and lifted stencil loops) or `cuda` (lifted stencil loops; CUDA C++ for nvcc).
    #[arg(long, short = 't', value_enum, default_value = "c")]
    target: MapTarget,

    /// The GPU whose limits the criteria use: h100-sxm (default), h100-pcie, h200, a100, l40s, v100.
    #[arg(long, value_name = "NAME", default_value = "h100-sxm")]
    device: String,

    /// Print, per nest, the classification, criteria, transformations, memory
    /// choices and why a nest stays on the CPU.
    #[arg(long)]
    report: bool,

    /// Print the plan as JSON.
    #[arg(long)]
    json: bool,

    /// Compile the original with `cc` and timers around each nest, run it,
    /// and rank the nests by time.
    #[arg(long)]
    profile: bool,

    /// An include folder for the preprocessor (as `cc -I`); repeatable.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,

    /// A macro definition for the preprocessor (`-D NAME` or `-D NAME=VALUE`,
    /// as `cc -D`); repeatable.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,

    /// A macro to undefine (as `cc -U`); repeatable.
    #[arg(short = 'U', value_name = "NAME")]
    undefine: Vec<String>,

    /// The C standard to preprocess and profile with (as `cc -std=`).
    #[arg(long = "std", value_name = "STD", default_value = "gnu99")]
    c_std: String,

    /// A compilation database (`compile_commands.json`): the file's entry
    /// gives its -I, -D, -U and -std= (before those given here).
    #[arg(long, value_name = "FILE")]
    compile_commands: Option<PathBuf>,

    /// With --profile: other sources or object files of the program
    /// (`polybench.c`, `util.o`) compiled and linked with it; repeatable.
    #[arg(long = "profile-with", value_name = "FILE", requires = "profile")]
    profile_with: Vec<PathBuf>,

    /// With --profile: the arguments the program runs with (one string,
    /// split at blanks as a shell would).
    #[arg(long = "profile-args", value_name = "ARGS", requires = "profile")]
    profile_args: Option<String>,

    /// With `--target opencl` or `cuda`: fail, naming each nest and why,
    /// when a nest would stay on the CPU (nothing is written).
    #[arg(long)]
    require_device: bool,
}

/// The `--target` values.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum MapTarget {
    C,
    Opencl,
    Cuda,
}

/// Runs `stencilc map`.
pub fn run(args: &MapArgs) -> Result<(), CliError> {
    if let Some(output) = &args.output {
        crate::cli::paths::refuse_output_over_input(&args.file, output)?;
    }
    let device = Device::find(&args.device).ok_or_else(|| {
        CliError::new(
            format!("unknown device `{}`", args.device),
            format!("choose one of {}", Device::known_names()),
        )
    })?;
    let options = preprocess_options(args)?;
    let file = CFile::load_with(&args.file, &options).map_err(|e| match e {
        CError::Located(d) => CliError::Located(d),
        CError::Plain(message) => CliError::new(
            message,
            "the file must preprocess and compile with `cc` and the -I/-D/-U/--std given",
        ),
        CError::Refused { message, help } => CliError::new(message, help),
    })?;
    let unit = lower_unit(&file);
    let target = match args.target {
        MapTarget::C => Target::C,
        MapTarget::Opencl => Target::Opencl,
        MapTarget::Cuda => Target::Cuda,
    };
    if args.require_device && target == Target::C {
        return Err(CliError::new(
            "--require-device needs a device target",
            "add `--target opencl` or `--target cuda`",
        ));
    }
    let transformed = transform::plan_transformed(&file, &unit, target, device);
    let plan = transformed.plan;
    if args.require_device {
        refuse_cpu_nests(&plan)?;
    }
    if args.report {
        out::stdout_text(&report::text(&plan))?;
    }
    if args.json {
        out::stdout_text(&format!("{}\n", report::json(&plan)))?;
    }
    if args.profile {
        // The dynamic analysis times the program as written.
        let original = plan_file(&file, &unit, target, device);
        out::stdout_text(&profile(&file, &original, &options, args)?)?;
    }
    let file = transformed.file.map_or(file, |(file, _)| file);
    let wants_program = args.output.is_some() || !(args.report || args.json || args.profile);
    if wants_program {
        let program = match target {
            Target::Opencl => stencilc::map::opencl::opencl_program(&file, &plan),
            Target::Cuda => stencilc::map::cuda::cuda_program(&file, &plan),
            Target::C => rewrite::openmp_program(&file, &plan),
        };
        match &args.output {
            Some(path) => crate::cli::paths::write_text(path, &program)?,
            None => out::stdout_text(&program)?,
        }
    }
    Ok(())
}

/// The preprocessor's options: the compilation database's entry for the
/// file, then `-I`, `-D`, `-U` and `--std` as given.
fn preprocess_options(args: &MapArgs) -> Result<Preprocess, CliError> {
    let mut options = Preprocess {
        includes: args.include.clone(),
        defines: args.define.clone(),
        undefines: args.undefine.clone(),
        std: args.c_std.clone(),
    };
    if let Some(db) = &args.compile_commands {
        options
            .add_compile_commands(db, &args.file)
            .map_err(|e| CliError::new(e.to_string(), "give the compile_commands.json of the file's project (CMake writes one with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"))?;
    }
    Ok(options)
}

/// `--require-device`: an error naming every nest left on the CPU and why.
fn refuse_cpu_nests(plan: &FilePlan) -> Result<(), CliError> {
    let left = report::left_on_cpu(plan);
    if left.is_empty() {
        return Ok(());
    }
    let mut message = format!(
        "{} nest(s) of {} would stay on the CPU (--require-device):",
        left.len(),
        plan.file
    );
    for (nest, reasons) in &left {
        message.push_str(&format!("\n  {nest}: {}", reasons.join("; ")));
    }
    Err(CliError::new(
        message,
        "see `stencilc map --report` for each nest's analysis, or drop --require-device to keep those nests on the CPU",
    ))
}

/// Compiles and runs the timed copy of the program; the nests ranked by time.
fn profile(
    file: &CFile,
    plan: &FilePlan,
    options: &Preprocess,
    args: &MapArgs,
) -> Result<String, CliError> {
    let (source, nests) = rewrite::profiled_program(file, plan);
    let dir = tempfile::tempdir().map_err(|e| {
        CliError::new(
            format!("cannot make a temporary directory: {e}"),
            "check TMPDIR",
        )
    })?;
    // Removed, and the children killed, if the run is interrupted.
    let _listed = stencilc::files::cleanup::Listed::temporary(dir.path());
    let c_path = dir.path().join("profiled.c");
    let exe = dir.path().join("profiled");
    let times = dir.path().join("times.txt");
    std::fs::write(&c_path, source).map_err(|e| {
        CliError::new(
            format!("cannot write the timed program: {e}"),
            "check TMPDIR",
        )
    })?;
    let include = file_dir(file);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut build = Command::new(&cc);
    build
        .arg("-O2")
        .args(options.cc_args())
        .arg("-I")
        .arg(&include)
        .arg(&c_path)
        .args(&args.profile_with)
        .arg("-o")
        .arg(&exe)
        .arg("-lm");
    let built = output_listed(&mut build).map_err(|e| {
        CliError::new(
            format!("cannot run `{cc}`: {e}"),
            "install a C compiler or set CC",
        )
    })?;
    if !built.status.success() {
        return Err(CliError::new(
            format!(
                "the timed program did not compile:\n{}",
                String::from_utf8_lossy(&built.stderr).trim_end()
            ),
            "the original must compile with `cc -O2 -lm`, the -I/-D/-U/--std given and the \
             --profile-with files (the project's other sources or objects)",
        ));
    }
    let program_args = args
        .profile_args
        .as_deref()
        .map(stencilc::front::c::options::split_command)
        .unwrap_or_default();
    let ran = output_listed(
        Command::new(&exe)
            .args(&program_args)
            .env("STENCILC_PROFILE_OUT", &times),
    )
    .map_err(|e| {
        CliError::new(
            format!("cannot run the timed program: {e}"),
            "check the program runs with the --profile-args given",
        )
    })?;
    if !ran.status.success() {
        let with = match &args.profile_args {
            Some(a) => format!("with the arguments `{a}`"),
            None => "without arguments (give them with --profile-args)".to_string(),
        };
        return Err(CliError::new(
            format!("the timed program failed ({})", ran.status),
            format!("--profile runs the program {with}; it must exit with status 0"),
        ));
    }
    let text = std::fs::read_to_string(&times).unwrap_or_default();
    let mut rows: Vec<(f64, String)> = Vec::new();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let (Some(k), Some(s)) = (
            parts.next().and_then(|k| k.parse::<usize>().ok()),
            parts.next().and_then(|s| s.parse::<f64>().ok()),
        ) else {
            continue;
        };
        if let Some(n) = nests.get(k) {
            rows.push((
                s,
                format!("{} (lines {}-{}, {})", n.id, n.lines.0, n.lines.1, n.class),
            ));
        }
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out = String::from(
        "profile (original program, cc -O2; nests inside an iterate are counted in it too):\n",
    );
    for (rank, (s, what)) in rows.iter().enumerate() {
        out.push_str(&format!("  {:>2}. {:>10.6} s  {what}\n", rank + 1, s));
    }
    Ok(out)
}

fn file_dir(file: &CFile) -> PathBuf {
    PathBuf::from(&file.original.name)
        .parent()
        .map(|p| p.to_path_buf())
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."))
}
