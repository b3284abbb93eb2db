//! `stencilc._stencilc`: the Python extension behind `import stencilc`.
//!
//! A thin layer over the library: [`stencilc::front`] parses, and
//! [`stencilc::session`] binds and runs, as `stencilc run` does; this crate only
//! turns Python arguments into the library's values (refusing, with a message
//! that says how to convert, what does not fit) and the results into NumPy
//! arrays. The pure-Python part (`stencilc/__init__.py`, the type stubs) lives at
//! the repository root, where maturin's `python-source` finds it.
#![deny(missing_docs)]
// pyo3 0.22's `#[pymethods]` expansion converts each `PyResult` error into
// itself, which newer clippy flags at every method's return type.
#![allow(clippy::useless_conversion)]

mod arrays;
mod errors;
mod program;
mod report;
mod run;
mod workers;

use pyo3::prelude::*;

/// Stack of the threads that parse and run: every pass over a program recurses
/// once per level of an expression, as in the command line (see its
/// `COMMAND_STACK_BYTES`); the memory is only reserved.
pub(crate) const DEEP_STACK_BYTES: usize = 1 << 30;

/// Runs `work` on a thread with [`DEEP_STACK_BYTES`] of stack; `None` if no such
/// thread could be made or it panicked.
pub(crate) fn on_deep_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("stencilc".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, work)
            .ok()?
            .join()
            .ok()
    })
}

#[pymodule]
fn _stencilc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<program::Program>()?;
    m.add_class::<program::Parameter>()?;
    m.add_class::<program::Field>()?;
    m.add_class::<program::Reduction>()?;
    m.add_class::<run::RunResult>()?;
    m.add_class::<report::Explain>()?;
    m.add_class::<report::TuneResult>()?;
    m.add_function(wrap_pyfunction!(report::tune, m)?)?;
    m.add("CompileError", py.get_type_bound::<errors::CompileError>())?;
    m.add("RunError", py.get_type_bound::<errors::RunError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
