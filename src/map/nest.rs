//! The plan of a file's loop nests: per nest, its loops, class, decision and
//! the reasons, the criteria, the memory choices and what was generated for
//! it. The planner fills it; the report, the rewrite, the residency and the
//! host emitters read it.

use serde::Serialize;

/// What the mapped program runs its kernels with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// C with OpenMP: each mapped nest's parallel loop under `#pragma omp parallel for`.
    C,
    /// OpenCL: each mapped nest a direct kernel, with host glue.
    Opencl,
    /// CUDA: lifted stencil nests run with stencilc's CUDA kernels, other
    /// mapped nests as direct CUDA kernels.
    Cuda,
}

/// The decision for one nest.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Mapped: these loops run in parallel (outermost first).
    Mapped {
        /// The parallel loops, outermost first.
        parallel: Vec<String>,
    },
    /// A sequential loop around other nests, kept on the host; its inner
    /// nests are planned on their own.
    Iterate,
    /// Stays on the CPU.
    Cpu {
        /// Why.
        reasons: Vec<String>,
    },
}

/// The plan of one loop nest.
#[derive(Clone, Debug, Serialize)]
pub struct NestPlan {
    /// `function:line`.
    pub id: String,
    /// The enclosing function.
    pub function: String,
    /// First and last line of the nest in the user's file.
    pub lines: (usize, usize),
    /// The loops of the nest: variable, bounds, parallel or why sequential.
    pub loops: Vec<LoopReport>,
    /// `stencil`, `parallel`, `reduction`, `iterate` or `sequential`.
    pub class: String,
    /// The decision.
    pub decision: Decision,
    /// The three criteria (empty unless parallel loops were found).
    pub criteria: Vec<super::criteria::Criterion>,
    /// Transformations applied or considered, each with its reason.
    pub transformations: Vec<String>,
    /// Memory choice per array on a GPU, with the reason.
    pub memory: Vec<super::criteria::MemoryChoice>,
    /// Scalars written in the nest and how they are handled.
    pub scalars: Vec<(String, String)>,
    /// Dependences found, as `array kind (lines) distance`.
    pub dependences: Vec<String>,
    /// The nests inside an iterate.
    pub inner: Vec<NestPlan>,
    /// The OpenMP clause line for the rewrite (mapped nests only).
    #[serde(skip)]
    pub omp: Option<String>,
    /// The direct kernel (mapped nests with `--target opencl` or `cuda`).
    #[serde(skip)]
    pub kernel: Option<super::kernel::KernelPlan>,
    /// Whether the nest (an outermost mapped nest or iterate) was lifted into
    /// an `ir::Program`, and what it gave or why not.
    pub lift: Option<String>,
    /// The lifted program's SDSL text.
    pub lift_sdsl: Option<String>,
    /// The lifted program.
    #[serde(skip)]
    pub lifted: Option<super::lift::Lift>,
    /// The lifted program's kernels and host code (`--target opencl` and
    /// `cuda`), which replace the nest's lines.
    #[serde(skip)]
    pub device: Option<super::device::DeviceCode>,
    /// The parallel loops of a nest that is parallel but has no direct
    /// kernel for the target (it may still run inside a lifted loop).
    #[serde(skip)]
    pub parallel_without_kernel: Option<Vec<String>>,
    /// Arrays kept on the device across an iterate's steps (on the iterate:
    /// copied in before it and back after; on a direct kernel inside it:
    /// found on the device), see the `resident` module.
    #[serde(skip)]
    pub resident: Vec<String>,
}

/// One loop of a nest, for the report.
#[derive(Clone, Debug, Serialize)]
pub struct LoopReport {
    /// The loop variable.
    pub var: String,
    /// Its line.
    pub line: usize,
    /// `lower .. upper` (exclusive) and step.
    pub range: String,
    /// Iterations, when the bounds are constants.
    pub trip: Option<i64>,
    /// Empty: parallel; else why it is sequential.
    pub sequential: Vec<String>,
}

/// The plan of a whole file.
#[derive(Clone, Debug, Serialize)]
pub struct FilePlan {
    /// The file.
    pub file: String,
    /// The target.
    pub target: Target,
    /// The device the criteria were checked against.
    pub device: String,
    /// Every nest, in source order.
    pub nests: Vec<NestPlan>,
    /// Whether loop transformations rewrote the text: line numbers are then
    /// those of the transformed program (the `transform` module).
    pub transformed: bool,
}

/// A C identifier for a nest's generated names (`main:18` gives `main_18`).
pub fn device_id(id: &str) -> String {
    id.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
