//! How to run: the options every back-end reads what concerns it from, as the
//! user gave them on the command line or in the region's pragma.

use crate::analysis::tile::TileOrder;
use crate::data::ReadInPlace;
use crate::exec::kernel_cache::KernelCache;

pub use crate::data::ProgressHook;

/// How to run, as the user asked on the command line or in the region's pragma.
/// Back-ends read what concerns them and ignore the rest.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// `--block x,y,z`: threads per block, innermost axis first.
    pub block: Option<Vec<u32>>,
    /// `--tile x,y,z`: points per thread, innermost axis first.
    pub tile: Option<Vec<u32>>,
    /// `--vector W`: consecutive points per thread along x, read and written
    /// as one vector access ([`crate::schedule::StencilSchedule::vector`]).
    pub vector: Option<u32>,
    /// `--shm FIELD,...|none|auto`.
    pub shm: Option<String>,
    /// `--fuse`: fuse consecutive stencils into one GPU kernel where legal.
    pub fuse: bool,
    /// `--results`: the fields read after the run (`None`: every field); see
    /// [`ScheduleRequest::results`].
    pub results: Option<Vec<String>>,
    /// `--index64`: 64-bit flattened indices in the GPU kernels whatever the
    /// grid sizes (chosen anyway for grids of more than 2^31 - 1 points).
    pub index64: bool,
    /// `--fma`: let every compiler contract `a * b + c` into a fused
    /// multiply-add (NVRTC `--fmad=true`, OpenCL `-cl-mad-enable`, C
    /// `-ffp-contract=fast`); results then differ from the interpreter's in
    /// the last bits.
    pub fma: bool,
    /// `--min-blocks N`: CUDA kernels declare `__launch_bounds__(threads, N)`
    /// ([`ScheduleRequest::min_blocks_per_sm`]).
    pub min_blocks: Option<u32>,
    /// `--ptxas-rank K` ([`ScheduleRequest::ptxas_rank`]).
    pub ptxas_rank: Option<u32>,
    /// `--time T`: time steps advanced per launch (GPU) or per tile sweep (C)
    /// by time tiling; `None` leaves it to the pragma, then to the heuristic.
    pub time: Option<u32>,
    /// `--cpu-tile x,y,z`: the C back-end's tile sizes in points, innermost
    /// axis first; `None` leaves them to the heuristic.
    pub cpu_tile: Option<Vec<u32>>,
    /// `--threads N`: OpenMP threads of the C back-end (`None`: OpenMP's
    /// default, which `OMP_NUM_THREADS` sets).
    pub threads: Option<u32>,
    /// `--cpu-order levels|wavefront`: the order of a C time tile's inner
    /// steps; `None` leaves it to the model.
    pub cpu_order: Option<TileOrder>,
    /// Extra or replacement C compiler flags for the native back-end.
    pub cflags: Option<String>,
    /// Allow `-ffast-math` in the native back-end.
    pub fast_math: bool,
    /// Print progress (compilation, cache hits) to stderr.
    pub verbose: bool,
    /// Print no `note:` lines (`run -q`, and the tuner's candidates, which
    /// would repeat one per candidate).
    pub quiet: bool,
    /// Told after each iteration of the iterate loop by the back-ends that run
    /// the loop on the host (the interpreter, OpenCL, CUDA); the compiled C runs
    /// its loop inside the kernel and tells nothing.
    pub progress: Option<ProgressHook>,
    /// The C back-end's loaded kernels of this program, kept between runs
    /// by a caller that runs it often (see [`KernelCache`]); `None` prints,
    /// hashes and finds the kernel in the on-disk cache on every run.
    pub kernels: Option<KernelCache>,
    /// Inputs the interpreter and the C back-end read in the caller's memory
    /// (fields no stencil writes); the other back-ends, and `auto`, copy them
    /// into the state first.
    pub read_in_place: Option<ReadInPlace>,
}
