//! How a mapped nest's parallel loops become GPU threads: which loops of the
//! band are thread loops, the statements each thread runs, the block shape
//! and the grid's limits. The criteria, the memory specialisation and the
//! kernels all count threads the same way from here.

use super::facts::NestFacts;
use super::syntax::mentions_identifier;
use crate::front::c::loops::{Loop, Stmt};

/// Largest grid along x.
pub const GRID_X: i64 = (1 << 31) - 1;
/// Largest grid along y and z.
pub const GRID_YZ: i64 = 65535;

/// Thread-block shape the kernels would use for 1, 2 and 3 parallel loops
/// (innermost loop along x).
pub fn block_shape(loops: usize) -> Vec<i64> {
    match loops {
        1 => vec![256],
        2 => vec![8, 32],
        _ => vec![2, 4, 32],
    }
}

/// The parallel loops a kernel maps onto threads (var, lower, upper),
/// outermost first: `band` cut where an inner bound depends on an outer loop
/// or a step is not one.
pub fn thread_loops(band: &[String], facts: &NestFacts) -> Vec<(String, String, String)> {
    let mut dims = Vec::new();
    for var in band {
        let Some(l) = facts.loops.get(var) else { break };
        let text = format!("{} {}", l.lower, l.upper);
        if dims
            .iter()
            .any(|(v, _, _): &(String, String, String)| mentions_identifier(&text, v))
            || l.step != 1
        {
            break;
        }
        dims.push((var.clone(), l.lower.to_string(), l.upper.to_string()));
    }
    dims
}

/// The statements a kernel with `depth` thread loops runs: the body of its
/// innermost thread loop.
pub fn kernel_body(root: &Loop, depth: usize) -> &[Stmt] {
    let mut l = root;
    for _ in 1..depth {
        if let [Stmt::For(inner)] = l.body.as_slice() {
            l = inner;
        }
    }
    &l.body
}
