//! A proptest generator of random but valid SDSL programs, for the differential
//! tests of the back-ends against the interpreter.
//!
//! The strategies produce a small syntax tree ([`GenProgram`]) whose indices
//! (field, level, local, constant) are taken modulo what exists, so any value
//! proptest shrinks to is still meaningful. Printing (`Display`, in `print.rs`) is where
//! the program is made legal, in one place:
//! - a read of a (field, level) that its stencil writes has its offsets zeroed
//!   (the front-end's hazard rule);
//! - a read of a `boundary none` field on an axis the part fixes to one index has
//!   a zero offset there, and range axes are shrunk by the largest such offset,
//!   so such reads never leave the grid;
//! - stored float values are bounded (clamped or squashed) unless the tree says
//!   "raw", and int fields store a clamped conversion, so nothing overflows;
//! - a float division divides by `2 + x*x`, never by something that can be zero;
//!   integer `/` and `%` (`int` and `long`) divide by anything known only at run
//!   time (zero, -1 and `MIN` included, whose results the language defines), and
//!   conversions of scaled values to `int`/`long` are often out of range;
//! - fields that no stencil writes may lie on a second grid `h` a few points
//!   smaller or larger than `g` (a `boundary none` one only where `h` is nowhere
//!   smaller), so reads at points of `g` beyond `h` take their boundary mode;
//! - a read at the parameter offset `k * scale` (which may wrap in `int`) is
//!   printed so only for a field with a boundary mode that its stencil does not
//!   write.
#![allow(dead_code)]

mod ast;
mod names;
mod print;
mod strategy;

// Test binaries that do not use the generator would otherwise warn.
#[allow(unused_imports)]
pub use ast::*;
#[allow(unused_imports)]
pub use strategy::*;

use stencilc::interp;

use stencilc::exec::{Buffer, FieldState, RunSummary};
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, ScalarType, Value};

/// A generated program run on the interpreter: its text, program, bindings,
/// final state and summary.
pub struct Interpreted {
    /// The printed program.
    pub text: String,
    /// The program.
    pub program: Program,
    /// Its parameters bound.
    pub env: RunEnv,
    /// Every level of every field after the run.
    pub state: FieldState,
    /// Iterations, check and reductions.
    pub summary: RunSummary,
}

/// Parses, binds and runs `generated` in the interpreter; panics (with the
/// program text) when any step refuses it, since the generator promises
/// valid programs.
pub fn interpret(generated: &GenProgram) -> Interpreted {
    let (text, program) = generated.parse();
    let env = RunEnv::new(&program, &generated.bindings(&program))
        .unwrap_or_else(|e| panic!("analysis refused a generated program:\n{text}\n{e}"));
    let mut state = generated.initial_state(&program, &env);
    let summary = interp::run(&program, &env, &mut state)
        .unwrap_or_else(|e| panic!("the interpreter failed:\n{text}\n{e}"));
    Interpreted {
        text,
        program,
        env,
        state,
        summary,
    }
}

/// Whether every value of every level is finite (programs whose raw stores
/// overflowed are discarded rather than compared).
pub fn all_finite(state: &FieldState) -> bool {
    state
        .fields
        .iter()
        .flatten()
        .all(|b| b.to_f64().iter().all(|v| v.is_finite()))
}

/// The bit patterns of a buffer's values (so `-0.0` and `0.0` differ).
pub fn bits(buffer: &Buffer) -> Vec<u64> {
    match buffer {
        Buffer::Int(v) => v.iter().map(|x| *x as u32 as u64).collect(),
        Buffer::Long(v) => v.iter().map(|x| *x as u64).collect(),
        Buffer::Float(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
        Buffer::Double(v) => v.iter().map(|x| x.to_bits()).collect(),
    }
}

/// The bit pattern of a reduction value.
pub fn value_bits(value: Option<Value>) -> Option<(ScalarType, u64)> {
    value.map(|v| {
        let b = match v {
            Value::Int(x) => x as u32 as u64,
            Value::Long(x) => x as u64,
            Value::Float(x) => u64::from(x.to_bits()),
            Value::Double(x) => x.to_bits(),
        };
        (v.ty(), b)
    })
}
