//! Parameter values made concrete: constants, grid sizes, trip counts.
//!
//! (Interface stub; the interpreter owner writes it.)

use crate::exec::{Bindings, ExecError};
use crate::ir::{Program, Value};

/// A program's uniform values for one run, evaluated once from its [`Bindings`].
#[derive(Clone, Debug)]
pub struct RunEnv {
    /// Parameter values, by `ParamId`.
    pub params: Vec<Value>,
    /// Constant values, by `ConstId`.
    pub constants: Vec<Value>,
    /// Size per axis of each grid, outermost first, by `GridId`.
    pub grid_dims: Vec<Vec<usize>>,
    /// The iterate's maximum trip count (0 without an iterate).
    pub max_iters: u64,
    /// Check every this many iterations (`None` without a check clause).
    pub every: Option<u64>,
}

impl RunEnv {
    /// Evaluates everything uniform and checks every access against the grids.
    pub fn new(_program: &Program, _bindings: &Bindings) -> Result<RunEnv, ExecError> {
        Err(ExecError::Failed("RunEnv is not built yet".into()))
    }
}
