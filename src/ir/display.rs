//! `Display` for the IR: SDSL-like text, for tests and debugging.
//!
//! (Placeholder until the front-end lands; the front-end owner writes the printer.)

use std::fmt;

use crate::ir::Program;

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "// program {}", self.name)
    }
}
