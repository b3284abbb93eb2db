//! `stencilc explain PROGRAM`: what each GPU kernel of a program would cost on
//! a named device, and why — without a GPU.
//!
//! The report is the library's ([`stencilc::explain`], also behind
//! Python's `Program.explain`); this module reads the arguments and prints it,
//! as text or, with `--json`, as one JSON object on stdout for every outcome,
//! errors included.

use clap::Args;
use stencilc::explain::{self, Report};
use stencilc::lower::Target;
use stencilc::model::Device;

use crate::cli::args::{FmaArgs, ParamArgs, ProgramArgs, ScheduleArgs, SizeInputArgs};
use crate::cli::error::CliError;
use crate::cli::{inputs, out, params, program};

/// Which kernels to explain.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExplainTarget {
    /// CUDA C, compiled by NVRTC and assembled by ptxas when found.
    Cuda,
    /// OpenCL C (the same kernel IR; no ptxas figures).
    Opencl,
}

/// Arguments of `stencilc explain`.
#[derive(Args, Debug)]
pub struct ExplainArgs {
    #[command(flatten)]
    program: ProgramArgs,

    #[command(flatten)]
    params: ParamArgs,

    #[command(flatten)]
    inputs: SizeInputArgs,

    /// Which kernels to explain.
    #[arg(long, short = 't', value_enum, default_value = "cuda")]
    target: ExplainTarget,

    /// The GPU to model: h100-sxm (default), h100-pcie, h200, a100, l40s, v100.
    #[arg(long, value_name = "NAME", default_value = "h100-sxm")]
    device: String,

    #[command(flatten)]
    schedule: ScheduleArgs,

    #[command(flatten)]
    fma: FmaArgs,

    /// Print one JSON object on stdout (also on errors).
    #[arg(long)]
    json: bool,
}

/// Runs `stencilc explain`.
pub fn run(args: &ExplainArgs) -> Result<(), CliError> {
    match explain(args) {
        Ok(report) => {
            if args.json {
                let text = serde_json::to_string_pretty(&report).map_err(|e| {
                    CliError::new(format!("cannot write JSON: {e}"), "report this bug")
                })?;
                out::stdout_text(&format!("{text}\n"))
            } else {
                out::stdout_text(&report.render())
            }
        }
        Err(error) => {
            if args.json {
                let (message, help) = match &error {
                    CliError::Plain { message, help } => (message.clone(), help.clone()),
                    other => (other.to_string(), None),
                };
                let object = serde_json::json!({ "error": message, "help": help });
                // A closed stdout ends quietly (status 141) even here; the
                // error itself still goes to stderr otherwise.
                if let Err(CliError::ClosedStdout) = out::stdout_text(&format!("{object}\n")) {
                    return Err(CliError::ClosedStdout);
                }
            }
            Err(error)
        }
    }
}

/// A usage error of `stencilc explain ... --json`, printed as a JSON object on
/// stdout so that `--json` output stays JSON on every path.
pub fn usage_error_as_json(message: &str) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("explain") && args.iter().any(|a| a == "--json") {
        let first = message.lines().next().unwrap_or(message);
        let text = first.strip_prefix("error: ").unwrap_or(first);
        let object = serde_json::json!({ "error": text, "help": "see stencilc explain --help" });
        // The usage error is on stderr too, and the exit status is 2 either
        // way, so a stdout that cannot be written changes nothing.
        let _ = out::stdout_text(&format!("{object}\n"));
    }
}

fn explain(args: &ExplainArgs) -> Result<Report, CliError> {
    let device = Device::find(&args.device).ok_or_else(|| {
        CliError::new(
            format!("unknown device `{}`", args.device),
            format!("choose one of: {}", Device::known_names()),
        )
    })?;
    let mut program = program::load(&args.program.program, args.program.region)?;
    let (values, inputs) =
        inputs::sizes_from_inputs(&program, &args.params.sets, &args.inputs.inputs)?;
    params::bind_hint_values(&mut program, &args.params.sets, &values)?;
    let bindings = params::complete(&program, values)?;
    let env = stencilc::exec::bind(&program, &bindings)?;
    inputs::check_fits(&program, &env, &inputs)?;
    let target = match args.target {
        ExplainTarget::Cuda => Target::Cuda,
        ExplainTarget::Opencl => Target::OpenCl,
    };
    let mut request = args.schedule.run_options().schedule_request();
    request.fma = args.fma.fma;
    explain::explain(&program, &env, target, device, &request)
        .map_err(|e| CliError::new(e.message, e.help))
}
