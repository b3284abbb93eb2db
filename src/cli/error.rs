//! Errors of the command line: what went wrong and how to fix it.

use std::fmt;

use stencilc::diag::Diagnostics;
use stencilc::exec::ExecError;
use stencilc::io::DataError;

/// A failed command. `Display` gives the full text for stderr, starting with
/// `error:`; the process then exits with status 1.
#[derive(Debug)]
pub enum CliError {
    /// Errors located in the program's source, rendered with file:line:col.
    Located(Diagnostics),
    /// Any other error: one sentence on what is wrong and, when the message does
    /// not already say it, one on what to do.
    Plain {
        /// What is wrong.
        message: String,
        /// How to fix it.
        help: Option<String>,
    },
    /// Stdout was closed before everything was written (`| head`): not worth a
    /// message, but the command ends with status 141.
    ClosedStdout,
}

impl CliError {
    /// An error with advice.
    pub fn new(message: impl Into<String>, help: impl Into<String>) -> CliError {
        CliError::Plain {
            message: message.into(),
            help: Some(help.into()),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Located(diagnostics) => write!(f, "{diagnostics}"),
            CliError::Plain { message, help } => {
                write!(f, "error: {message}")?;
                if let Some(help) = help {
                    write!(f, "\n  = help: {help}")?;
                }
                Ok(())
            }
            CliError::ClosedStdout => write!(f, "error: standard output was closed"),
        }
    }
}

impl From<Diagnostics> for CliError {
    fn from(diagnostics: Diagnostics) -> CliError {
        CliError::Located(diagnostics)
    }
}

impl From<DataError> for CliError {
    fn from(error: DataError) -> CliError {
        CliError::new(error.to_string(), error.help())
    }
}

impl From<ExecError> for CliError {
    fn from(error: ExecError) -> CliError {
        match error {
            ExecError::Located(diagnostics) => CliError::Located(diagnostics),
            // Executors phrase these to say what to do already.
            ExecError::Unavailable(message) | ExecError::Failed(message) => CliError::Plain {
                message,
                help: None,
            },
            ExecError::Interrupted(_) => CliError::Plain {
                message: error.to_string(),
                help: None,
            },
        }
    }
}

/// `a`, `a and b`, `a, b and c`: names in backquotes for messages.
pub fn name_list<S: AsRef<str>>(names: &[S]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{}`", n.as_ref())).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
