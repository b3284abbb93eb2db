//! The C back-end and the native executor: emitted C (snapshots), the examples
//! and hand-made programs against the interpreter, random programs bit for bit
//! (property test), the kernel cache, and `stencilc compile` on C/C++ hosts.

#[path = "../common/mod.rs"]
mod common;

mod cache;
mod compile_examples;
mod compile_types;
mod differential;
mod emit;
mod examples;
mod fma;
mod handmade;
mod march;
mod overtile;
mod overtile_language;
mod parts;
mod time_tiling;
mod wavefront;
