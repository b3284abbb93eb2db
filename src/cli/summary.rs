//! What `stencilc run` prints when it is done: a short text, or JSON (`--json`).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Map, Value as Json};
use stencilc::exec::backend::Backend;
use stencilc::exec::{Bindings, RunSummary};
use stencilc::ir::env::RunEnv;
use stencilc::ir::{FieldId, Program};

use crate::cli::error::CliError;
use crate::cli::scalar::{plain_number, value_json};
use crate::cli::verify::Verification;

/// Times of the phases the command line measures itself; the back-end measures
/// compile, upload, compute and download.
#[derive(Clone, Debug, Default)]
pub struct Phases {
    /// Reading the program and the front-end.
    pub parse: Duration,
    /// Binding parameters and checking every access against the grids.
    pub check: Duration,
    /// Reading input files.
    pub read: Duration,
    /// Writing output files.
    pub write: Duration,
}

/// Everything a finished run reports.
pub struct Report<'a> {
    /// The program that ran.
    pub program: &'a Program,
    /// Its uniform values.
    pub env: &'a RunEnv,
    /// Its parameter values.
    pub bindings: &'a Bindings,
    /// The back-end that ran it.
    pub backend: Backend,
    /// What the back-end reported.
    pub summary: &'a RunSummary,
    /// The outputs written.
    pub outputs: &'a [(FieldId, PathBuf)],
    /// Times measured by the command line.
    pub phases: Phases,
    /// The comparison with the interpreter, with `--verify`.
    pub verification: Option<&'a Verification>,
}

impl Report<'_> {
    /// The JSON summary.
    pub fn to_json(&self) -> Json {
        let s = self.summary;
        let reductions: Map<String, Json> = s
            .reductions
            .iter()
            .map(|(name, v)| (name.clone(), v.map_or(Json::Null, value_json)))
            .collect();
        let parameters: Map<String, Json> = self
            .program
            .params
            .iter()
            .zip(&self.bindings.params)
            .map(|(p, v)| (p.name.clone(), value_json(*v)))
            .collect();
        let outputs: Map<String, Json> = self
            .outputs
            .iter()
            .map(|(f, path)| {
                let name = self.program.fields[f.0].name.clone();
                (name, json!(path.display().to_string()))
            })
            .collect();
        let t = &s.times;
        let total = self.phases.parse
            + self.phases.check
            + self.phases.read
            + t.compile
            + t.upload
            + t.compute
            + t.download
            + self.phases.write;
        let mut summary = json!({
            "program": self.program.name,
            "backend": self.backend.to_string(),
            "iterations": s.iterations,
            "max_iterations": self.env.max_iters(),
            "stopped_by_check": s.stopped_by_check,
            "reductions": reductions,
            "parameters": parameters,
            "outputs": outputs,
            "times": {
                "parse": self.phases.parse.as_secs_f64(),
                "check": self.phases.check.as_secs_f64(),
                "read": self.phases.read.as_secs_f64(),
                "compile": t.compile.as_secs_f64(),
                "upload": t.upload.as_secs_f64(),
                "compute": t.compute.as_secs_f64(),
                "download": t.download.as_secs_f64(),
                "write": self.phases.write.as_secs_f64(),
                "total": total.as_secs_f64(),
            },
        });
        if let Some(verification) = self.verification {
            summary["verify"] = verification.to_json();
        }
        summary
    }

    /// The text summary: iterations, why the iterate stopped, the reductions.
    pub fn to_text(&self) -> String {
        let s = self.summary;
        let mut text = format!(
            "{}: {} iteration{} on {}",
            self.program.name,
            s.iterations,
            if s.iterations == 1 { "" } else { "s" },
            self.backend
        );
        if s.stopped_by_check {
            text.push_str(", stopped by the check");
        }
        text.push_str(&format!(" ({:.3?} computing)\n", s.times.compute));
        for (name, value) in &s.reductions {
            match value {
                Some(v) => text.push_str(&format!("  {name} = {}\n", plain_number(*v))),
                None => text.push_str(&format!("  {name} was not evaluated\n")),
            }
        }
        if let Some(verification) = self.verification {
            text.push_str(&verification.to_text());
        }
        text
    }

    /// Prints the summary on stdout. A closed stdout (`| head`) is
    /// [`CliError::ClosedStdout`]: the outputs are written by then, and the
    /// command ends quietly with status 141.
    pub fn print(&self, json: bool) -> Result<(), CliError> {
        let text = if json {
            format!("{:#}\n", self.to_json())
        } else {
            self.to_text()
        };
        crate::cli::out::stdout_text(&text)
    }
}
