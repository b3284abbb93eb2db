//! The program IR: the algorithm, typed and validated, free of syntax.
//!
//! An [`ir::Program`](Program) is what every front-end produces and every back-end
//! and the interpreter consume. It says *what* to compute; how to run it (block
//! shapes, shared-memory staging, …) is a separate schedule. Point functions are
//! inlined into the stencil parts that call them; types and C's implicit conversions
//! are explicit. Its `Display` prints SDSL-like text for tests and debugging.

mod display;
pub mod env;
pub mod eval;
mod expr;
mod hints;
mod program;
mod region;
pub(crate) mod semantics;
mod types;
pub mod verify;

pub use expr::{BinaryOp, Expr, ExprKind, GridRef, MathFn, Stmt, UnaryOp};
pub use hints::{HintEvalError, HintExpr, HintOp, HintValue, ScheduleHints};
pub use program::{
    BoundaryMode, Check, Constant, Field, Grid, Iterate, Local, Param, Program, ReduceOp,
    Reduction, ReductionPart, Stencil, StencilPart, Subset, Table,
};
pub use region::Region;
pub use types::{ScalarType, Value};

macro_rules! define_id {
    ($(#[$doc:meta] $name:ident),* $(,)?) => {$(
        #[$doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub usize);
    )*};
}

define_id!(
    /// Index into [`Program::params`].
    ParamId,
    /// Index into [`Program::constants`].
    ConstId,
    /// Index into [`Program::grids`].
    GridId,
    /// Index into [`Program::fields`].
    FieldId,
    /// Index into [`Program::tables`].
    TableId,
    /// Index into [`Iterate::reductions`].
    ReductionId,
    /// Index into [`StencilPart::locals`].
    LocalId,
);
