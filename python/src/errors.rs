//! The exceptions: `CompileError` (a program with errors, rendered with
//! file:line:col and a caret), `RunError` (a run that failed), and the mapping of
//! the library's errors onto them and onto `ValueError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use stencilc::diag::Diagnostics;
use stencilc::exec::ExecError;

create_exception!(
    stencilc,
    CompileError,
    PyException,
    "A program with errors. `str(e)` is the rendered diagnostic (file:line:col, \
     the line with a caret, and help); `e.line` and `e.column` locate the first \
     error (1-based), `e.diagnostic` is the rendered text."
);
create_exception!(
    stencilc,
    RunError,
    PyException,
    "A run that failed: the back-end asked for is unavailable here, the compiled \
     code refused the sizes, or the computation failed. No array passed in was \
     changed."
);

/// `CompileError` for `diagnostics`, with `.line`, `.column` and `.diagnostic`.
pub fn compile_error(py: Python<'_>, diagnostics: &Diagnostics) -> PyErr {
    located(
        py,
        CompileError::new_err(diagnostics.to_string()),
        diagnostics,
    )
}

/// `error` with the attributes `.line`, `.column` (of the first diagnostic;
/// `None` without one) and `.diagnostic` (the rendered text).
pub fn located(py: Python<'_>, error: PyErr, diagnostics: &Diagnostics) -> PyErr {
    let (line, column) = match diagnostics.items.first() {
        Some(first) => {
            let (l, c) = diagnostics.source.line_col(first.span.start as usize);
            (Some(l), Some(c))
        }
        None => (None, None),
    };
    let value = error.value_bound(py);
    // Setting attributes on a fresh exception instance cannot fail in practice;
    // if it did, the exception still carries the rendered text.
    let _ = value.setattr("line", line);
    let _ = value.setattr("column", column);
    let _ = value.setattr("diagnostic", diagnostics.to_string());
    error
}

/// The Python exception for a run that failed. Errors located in the source
/// (an access outside a grid for these parameter values) are `ValueError`s with
/// `.line` and `.column`: the arguments are what to change.
pub fn exec_error(py: Python<'_>, error: ExecError) -> PyErr {
    match error {
        ExecError::Located(diagnostics) => located(
            py,
            PyValueError::new_err(diagnostics.to_string()),
            &diagnostics,
        ),
        ExecError::Interrupted(done) => {
            PyKeyboardInterrupt::new_err(format!("interrupted after {done} iteration(s)"))
        }
        ExecError::Unavailable(message) | ExecError::Failed(message) => RunError::new_err(message),
    }
}
