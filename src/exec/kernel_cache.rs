//! The C back-end's loaded kernels of one program, kept between runs by a
//! caller that runs the program often; carried in the run options.

use std::any::Any;
use std::sync::{Arc, Mutex};

use crate::analysis::tile::CpuPlan;
use crate::ir::Program;

/// What the C of a run depends on besides the program: the plan (time
/// tiling, threads), `--fma`, the compiler flags and the compiler.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KernelKey {
    pub(crate) plan: CpuPlan,
    pub(crate) fma: bool,
    pub(crate) flags: Vec<String>,
    pub(crate) compiler: (String, String),
}

/// A kernel kept: the C back-end's unit and loaded kernel, which it alone
/// reads back (so that the options carrying the cache need not know them).
type Prepared = Arc<dyn Any + Send + Sync>;

/// The loaded kernels of one program, kept by a caller that runs the program
/// again and again (the Python package's `Program`): a later run with the same
/// plan, flags and compiler calls the loaded kernel without printing and
/// hashing the C again (0.7-0.9 ms for a small program). The cache holds the
/// program it was made for and is consulted only for that very program
/// (the same allocation), so a kernel is never called with another
/// program's buffers.
#[derive(Clone)]
pub struct KernelCache {
    program: Arc<Program>,
    kernels: Arc<Mutex<Vec<(KernelKey, Prepared)>>>,
}

impl KernelCache {
    /// An empty cache for `program`.
    pub fn new(program: Arc<Program>) -> KernelCache {
        KernelCache {
            program,
            kernels: Arc::default(),
        }
    }

    /// How many kernels (one per plan, flags and compiler) are kept.
    pub fn len(&self) -> usize {
        self.kernels.lock().map_or(0, |k| k.len())
    }

    /// Whether no kernel is kept yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether this is the cache of `program` (the same value, not an equal one).
    pub(crate) fn holds(&self, program: &Program) -> bool {
        std::ptr::eq(Arc::as_ptr(&self.program), program)
    }

    pub(crate) fn get(&self, key: &KernelKey) -> Option<Prepared> {
        let kernels = self.kernels.lock().ok()?;
        kernels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, prepared)| Arc::clone(prepared))
    }

    pub(crate) fn insert(&self, key: KernelKey, prepared: Prepared) {
        if let Ok(mut kernels) = self.kernels.lock() {
            kernels.push((key, prepared));
        }
    }
}

impl std::fmt::Debug for KernelCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "KernelCache({}: {} kernel(s))",
            self.program.name,
            self.len()
        )
    }
}
