//! The C back-end: C99 with OpenMP for an [`ir::Program`](crate::ir::Program).
//!
//! The output is "affine C" in the sense of the SDSL guide (ch. 5): every stencil
//! part is a loop nest whose bounds are affine in the parameters, with the innermost
//! loop unit-stride and branch-free so that the C compiler vectorises it. Boundary
//! modes are handled by peeling: each axis range is split into the border points,
//! where some read may leave the grid (those reads go through an index-resolving
//! helper), and the interior, where none can (plain indexed loads). Time levels are
//! separate buffers, passed as `restrict` pointers and rotated by swapping pointers.
//!
//! Layout of one translation unit, top to bottom: headers and boundary helpers,
//! coefficient tables, one `static` function per stencil and per reduction, the
//! program's run function (`<name>_run`) with the iterate loop, and either a
//! uniform entry point for `exec::native` ([`emit_program`])
//! or host wrappers for embedded regions ([`embed`]).
//!
//! Results are bit-identical to the interpreter when compiled with
//! `-ffp-contract=off` and without `-ffast-math`: every conversion the IR makes
//! explicit is printed as a C cast, expressions are fully parenthesised, and `+`/`*`
//! reductions combine per-row partial results in row order, as the interpreter does.

mod boundary;
pub mod checks;
pub mod embed;
mod expr;
mod loops;
mod march;
mod names;
pub mod overtile;
pub mod parts;
mod reduce;
mod run;
mod scratch;
mod snapshot;
mod timetile;
mod uses;
mod wavefront;
mod window;
mod writer;

use crate::analysis::tile::CpuPlan;
use crate::ir::Program;

pub use writer::ENTRY_ABI;

/// A C translation unit for one program, ready for `exec::native`.
#[derive(Clone, Debug)]
pub struct CUnit {
    /// The C source text.
    pub source: String,
    /// The name of the typed run function (`<program>_run`).
    pub run_symbol: String,
    /// The name of the uniform entry point (`<program>_entry`, see [`ENTRY_ABI`]).
    pub entry_symbol: String,
    /// The plan it was written for (threads, time tiling).
    pub plan: CpuPlan,
}

/// Prints a stand-alone translation unit for `program`: the typed run function and
/// the uniform entry point that the native executor calls.
pub fn emit_program(program: &Program) -> CUnit {
    emit_program_planned(program, &CpuPlan::default())
}

/// [`emit_program`] run as `plan` says: `num_threads` on every parallel
/// region, and sweeps of several iterations per tile when it time-tiles (see
/// `back/c/timetile.rs`). A tiling the iterate cannot take (see
/// [`crate::analysis::tile::tile_shape`]) is left out.
pub fn emit_program_planned(program: &Program, plan: &CpuPlan) -> CUnit {
    let mut w = writer::Writer::planned(program, writer::Linkage::Internal, plan);
    w.write_program_body();
    w.write_entry();
    CUnit {
        source: w.finish(),
        run_symbol: names::run_symbol(program),
        entry_symbol: names::entry_symbol(program),
        plan: plan.clone(),
    }
}

/// `source` (a generated C unit) headed by the `--fma` notice: compile it with
/// `-ffp-contract=fast` in place of `-ffp-contract=off`, and its results may
/// differ from the interpreter's in the last bits.
pub fn with_fma_notice(source: &str) -> String {
    format!(
        "/* --fma: built to be compiled with -ffp-contract=fast (in place of -ffp-contract=off\n   \
         below), so `a * b + c` may be one fused multiply-add and results may differ from\n   \
         `stencilc run --backend interp` in the last bits. */\n{source}"
    )
}
