//! Source-to-source for CUDA, like `sdslc -b overtile` (guide ch. 5): the host
//! file with each `#pragma sdsl begin ... end` region replaced by the same call
//! line as the `affine-c` path ([`super::embed`]), whose wrapper runs the region
//! on a CUDA GPU.
//!
//! Per region the output holds, in namespaces named after the program:
//! - (`<program>_kernels`) the CUDA back-end's kernels (lowered under the
//!   schedule the driver chose from the region's pragma, the heuristic
//!   otherwise, see `driver::overtile`), renamed
//!   `<program>_<kernel>` so that two regions cannot clash, between marker lines
//!   ([`KERNELS_BEGIN`], [`KERNELS_END`]) and inside `#if defined(__CUDACC__)`:
//!   nvcc compiles their bodies, any other C++ compiler sees only their
//!   declarations. That keeps the file one translation unit for nvcc, as
//!   sdslc's was, with no run-time compilation (NVRTC) for its users to
//!   ship, while the host part still compiles with `g++` against the CUDA
//!   runtime headers (CI does, without nvcc);
//! - (`<program>_gpu`, apart, so that host code never finds the kernels'
//!   device helpers, which share their names with the host's) one launcher
//!   per kernel, calling `cudaLaunchKernel` (not `<<<>>>`, which
//!   only nvcc parses) with the kernel's fixed block shape;
//! - the run function: the host plan of `exec::host_plan` written in
//!   C++ (buffers allocated and uploaded once, time levels rotated by swapping
//!   pointers, the fused check variant or the separate reduction kernels when
//!   the check is due, only each reduction's scalar read back), see the
//!   `run` module.
//!
//! The wrapper keeps `affine-c`'s statuses (0, 2 wrong host array size, 3 out
//! of memory, 4 an access would leave its grid, 5 a grid too large) and adds 6:
//! a CUDA call failed; its message on stderr names the region and the call.

mod host;
mod launch;
mod run;

use crate::back::c::embed;
use crate::back::c::writer::{Linkage, Writer};
use crate::ir::Region;
use crate::kir::names::identifier;
use crate::kir::plan::{HostPlan, Lowered};
use crate::kir::print::{kernel_names, module_namer, Dialect};
use crate::kir::{Module, ParamKind};
use crate::source::SourceFile;

/// The line opening a region's kernels in the output (followed by ` region N`).
pub const KERNELS_BEGIN: &str = "// ---- stencilc kernels begin";
/// The line closing a region's kernels in the output (followed by ` region N`).
pub const KERNELS_END: &str = "// ---- stencilc kernels end";

/// Options of `stencilc compile -b overtile`.
#[derive(Clone, Copy, Debug, Default)]
pub struct OvertileOptions {
    /// `-x`: give the wrappers C linkage.
    pub extern_c: bool,
    /// `--fma`: kernels built to contract into fused multiply-adds.
    pub fma: bool,
    /// `--index64`: kernels that compute flattened indices in 64 bits, for
    /// grids of more than 2^31 - 1 points (refused at run time otherwise).
    pub wide_indices: bool,
}

/// What was generated for one region, for `-v`.
#[derive(Clone, Debug)]
pub struct RegionReport {
    /// The region's index.
    pub index: usize,
    /// One line per stencil: its block, tile and staging.
    pub schedule: Vec<String>,
    /// The kernels, as named in the output.
    pub kernels: Vec<String>,
    /// What the user must know whether or not `-v`: why a requested time
    /// tiling is not applied (the region then runs untiled).
    pub notes: Vec<String>,
    /// For `-v`: how the model chose the time-tile size, where it did.
    pub reasons: Vec<String>,
}

/// The output file and what each region got.
#[derive(Clone, Debug)]
pub struct OvertileOutput {
    /// The CUDA C++ text.
    pub text: String,
    /// One report per region, in region order.
    pub regions: Vec<RegionReport>,
}

/// The nvcc options that give results identical to the interpreter: no FMA
/// contraction, IEEE division and square root (those of NVRTC in `run`).
pub fn nvcc_options(fma: bool) -> &'static str {
    if fma {
        "--fmad=true --prec-div=true --prec-sqrt=true"
    } else {
        "--fmad=false --prec-div=true --prec-sqrt=true"
    }
}

/// One region's kernels and what was chosen for them, as the driver hands them
/// to [`rewrite_host`].
#[derive(Clone, Debug)]
pub struct ChosenRegion {
    /// The kernels, lowered for CUDA, and the host plan that runs them.
    pub lowered: Lowered,
    /// The schedule in words, one line per stencil: its block, tile and staging.
    pub schedule: Vec<String>,
    /// Why a requested time tiling is not applied (said whether or not `-v`).
    pub notes: Vec<String>,
    /// For `-v`: how the model chose the time-tile size, where it did.
    pub reasons: Vec<String>,
}

/// The host file with each region replaced by a call to a generated function
/// that runs it on a CUDA GPU, `chosen[i]` giving region `i`'s kernels.
pub fn rewrite_host(
    host: &SourceFile,
    regions: &[Region],
    options: OvertileOptions,
    chosen: Vec<ChosenRegion>,
) -> OvertileOutput {
    let mut generated = String::new();
    let mut helpers = std::collections::BTreeSet::new();
    let mut reports = Vec::new();
    for (region, chosen) in regions.iter().zip(chosen) {
        let program = &region.program;
        let mut lowered = chosen.lowered;
        rename_kernels(&mut lowered.module, &identifier(&program.name));
        let mut w = Writer::new(program, Linkage::Embedded);
        w.region_on_gpu(region, &lowered, &chosen.schedule, options);
        helpers.extend(w.helpers.iter().copied());
        generated.push_str(&w.code.out);
        generated.push('\n');
        reports.push(RegionReport {
            index: region.index,
            schedule: chosen.schedule,
            kernels: lowered
                .module
                .kernels
                .iter()
                .map(|k| k.name.clone())
                .collect(),
            notes: chosen.notes,
            reasons: chosen.reasons,
        });
    }
    let mut out = file_header(&host.name, options.fma);
    out.push_str(embed::HOST_ARRAY_CHECK);
    out.push('\n');
    out.push_str(CUDA_SUPPORT);
    out.push('\n');
    let helper_text = crate::back::c::boundary::helper_definitions(&helpers);
    if !helper_text.is_empty() {
        out.push_str(&helper_text);
        out.push('\n');
    }
    out.push_str(&generated);
    embed::splice_calls(host, regions, &mut out);
    OvertileOutput {
        text: out,
        regions: reports,
    }
}

/// `<program>_<kernel>` for every kernel: the kernels have C linkage (a
/// namespace does not separate them), so the prefix keeps two regions', or a
/// host function's, names apart.
fn rename_kernels(module: &mut Module, prefix: &str) {
    for kernel in &mut module.kernels {
        kernel.name = format!("{prefix}_{}", kernel.name);
    }
}

/// The comment saying how to build the file, and the includes.
fn file_header(origin: &str, fma: bool) -> String {
    let results = if fma {
        "results that may differ from\n   `stencilc run --backend interp` in the last bits (--fma)"
    } else {
        "results identical to\n   `stencilc run --backend interp`"
    };
    format!(
        "/* Generated by stencilc (compile -b overtile) from {origin}:\n   \
         each SDSL region runs on a CUDA GPU. Build with nvcc, for {results}:\n     \
         nvcc -O3 -arch=native {} -o PROGRAM THIS_FILE.cu\n   \
         The kernels are compiled only by nvcc (#if defined(__CUDACC__)); the host part, which\n   \
         launches them through the CUDA runtime API, compiles with any C++ compiler given the CUDA\n   \
         headers (g++ -I$CUDA/include -c). */\n\
         #include <cuda_runtime.h>\n\
         #include <limits.h>\n\
         #include <math.h>\n\
         #include <stdio.h>\n\
         #include <stdlib.h>\n\
         #include <string.h>\n\n",
        nvcc_options(fma)
    )
}

/// What every region's host code uses: the launch-grid helper and the CUDA
/// error check.
const CUDA_SUPPORT: &str = "\
/* Blocks along one axis for the points lo..hi (inclusive), per_block points per block,
   at most cap blocks when cap > 0 (a grid-stride kernel loops over the rest): 0 when there
   are no points, -1 when more than most (CUDA's limit along the axis) would be needed. */
static inline long stencilc_blocks(long lo, long hi, long per_block, long cap, long most)
{
    if (hi < lo) return 0;
    long count = (hi - lo) / per_block + 1;
    if (cap > 0 && count > cap) count = cap;
    return count > most ? -1 : count;
}

/* The grid of a launch from its blocks per axis (x, y, z): the number of blocks in all, 0
   when an axis has none (nothing to run), -1 when an axis needs more than CUDA allows. */
static inline long stencilc_grid(const long blocks[3], dim3 *grid)
{
    if (blocks[0] == 0 || blocks[1] == 0 || blocks[2] == 0) return 0;
    if (blocks[0] < 0 || blocks[1] < 0 || blocks[2] < 0) return -1;
    *grid = dim3((unsigned)blocks[0], (unsigned)blocks[1], (unsigned)blocks[2]);
    return blocks[0] * blocks[1] * blocks[2];
}

/* Prints which CUDA call of which region failed, and why; returns the wrapper's status:
   3 when the device is out of memory, 6 for any other CUDA error. */
static inline int stencilc_cuda_failed(cudaError_t error, const char *region, const char *call)
{
    fprintf(stderr, \"stencilc: %s: %s failed: %s (%s)\\n\", region, call, cudaGetErrorName(error),
            cudaGetErrorString(error));
    return error == cudaErrorMemoryAllocation ? 3 : 6;
}

/* Runs a CUDA runtime call; on failure, reports it (with the region) and returns. */
#define STENCILC_CUDA(region, call) \\
    do { \\
        cudaError_t stencilc_error = (call); \\
        if (stencilc_error != cudaSuccess) return stencilc_cuda_failed(stencilc_error, region, #call); \\
    } while (0)
";

impl Writer<'_> {
    /// Everything generated for one region: its namespace (kernels,
    /// launchers, device buffers, run function) and its wrapper.
    fn region_on_gpu(
        &mut self,
        region: &Region,
        lowered: &Lowered,
        schedule: &[String],
        options: OvertileOptions,
    ) {
        let p = self.program;
        let (line, _) = p.source.line_col(region.span.start as usize);
        let space = format!("{}_gpu", identifier(&p.name));
        self.line(&format!(
            "/* ---- region {} (line {line}): program {} on the GPU ---- */",
            region.index, p.name
        ));
        for text in schedule {
            self.line(&format!("/* schedule: {text} */"));
        }
        // Two namespaces: the host code must not see the kernels' device
        // helpers, which share their names with the host's (`sdsl_div_i32`).
        // Their bodies are not indented (the kernels are NVRTC's unit as is).
        let kernel_space = format!("{}_kernels", identifier(&p.name));
        self.line(&format!("namespace {kernel_space} {{"));
        self.kernels(region.index, &lowered.module);
        self.line(&format!("}} /* namespace {kernel_space} */"));
        self.blank();
        self.line(&format!("namespace {space} {{"));
        self.blank();
        self.launchers(&lowered.module, &lowered.plan, &kernel_space);
        self.device_buffers(&lowered.plan);
        self.blank();
        if lowered.plan.time_tile.is_some() {
            self.time_tile_steps();
        }
        self.run_on_device(region, lowered);
        self.line(&format!("}} /* namespace {space} */"));
        self.blank();
        self.gpu_wrapper(region, &lowered.plan, &space, options.extern_c);
    }

    /// The step count of the next time-tiled launch, as
    /// `schedule::time::launch_steps` computes it for `run`.
    fn time_tile_steps(&mut self) {
        for text in [
            "/* Iterations the next time-tiled launch advances when `done` of `max` have run, with at",
            "   most `steps` per launch and a check due every `every` iterations (0: no check): never",
            "   past a checked iteration (its reductions read the whole grid), never past the end. */",
        ] {
            self.line(text);
        }
        self.function_head(
            &format!("static long {}", host::TIME_TILE_STEPS),
            "long done, long max, long every, long steps",
        );
        self.open("{");
        self.line("const long left = max > done ? max - done : 0;");
        self.line("long to_check = every > 0 ? every - done % every : left;");
        self.line("if (to_check > left) to_check = left;");
        self.line("if (steps < 1) steps = 1;");
        self.line("return to_check < steps ? to_check : steps;");
        self.close("}");
        self.blank();
    }

    /// The kernels, for nvcc; their declarations, for other compilers.
    fn kernels(&mut self, index: usize, module: &Module) {
        let dialect = crate::back::cuda::Cuda::default();
        self.line(&format!("{KERNELS_BEGIN} region {index}"));
        self.line("#if defined(__CUDACC__)");
        // The printed module is NVRTC's unit as `run --backend cuda` compiles it.
        for text in crate::back::cuda::print(module).lines() {
            if text.is_empty() {
                self.blank();
            } else {
                self.line(text);
            }
        }
        self.line("#else");
        self.line("/* Not nvcc: the kernels' declarations, so that the launchers compile. */");
        let names_of = module_namer(module);
        for kernel in &module.kernels {
            let names = kernel_names(module, kernel, &names_of);
            let params: Vec<String> = kernel
                .params
                .iter()
                .map(|q| dialect.param(q, &names[q.var.0 as usize]))
                .collect();
            self.function_head(
                &format!("extern \"C\" void {}", kernel.name),
                &params.join(", "),
            );
            let last = self.code.out.trim_end().len();
            self.code.out.truncate(last);
            self.code.out.push_str(";\n");
        }
        self.line("#endif");
        self.line(&format!("{KERNELS_END} region {index}"));
    }

    /// One `launch_<kernel>` per kernel the host code launches: its arguments
    /// by value, the fixed block. (A time-tiled run launches none of the
    /// per-stencil kernels, which stay in the module.)
    fn launchers(&mut self, module: &Module, plan: &HostPlan, kernel_space: &str) {
        let dialect = crate::back::cuda::Cuda::default();
        let names_of = module_namer(module);
        let launched: std::collections::BTreeSet<usize> = match &plan.time_tile {
            Some(tile) => plan
                .reductions
                .iter()
                .flat_map(|r| r.parts.iter().map(|(_, l)| l).chain([&r.fold, &r.finish]))
                .chain([&tile.launch])
                .map(|launch| launch.kernel)
                .collect(),
            None => plan.launches().map(|launch| launch.kernel).collect(),
        };
        for (k, kernel) in module.kernels.iter().enumerate() {
            if !launched.contains(&k) {
                continue;
            }
            let names = kernel_names(module, kernel, &names_of);
            let [bx, by, bz] = kernel.block;
            let mut params = vec!["dim3 grid".to_string()];
            let mut addresses = Vec::new();
            for q in &kernel.params {
                let name = &names[q.var.0 as usize];
                let ty = dialect.type_name(q.ty);
                params.push(match q.kind {
                    ParamKind::Scalar => format!("{ty} {name}"),
                    ParamKind::Buffer | ParamKind::ReadOnlyBuffer => format!("{ty} *{name}"),
                });
                addresses.push(format!("(void *)&{name}"));
            }
            self.line(&format!(
                "/* {} on `grid` blocks of {bx} x {by} x {bz} threads */",
                kernel.name
            ));
            self.function_head(
                &format!("static cudaError_t {}", launcher(&kernel.name)),
                &params.join(", "),
            );
            self.open("{");
            self.wrapped("void *arguments[] = {", &addresses, "};");
            self.line(&format!(
                "return cudaLaunchKernel((const void *){kernel_space}::{},",
                kernel.name
            ));
            self.line(&format!(
                "                        grid, dim3({bx}, {by}, {bz}), arguments, 0, 0);"
            ));
            self.close("}");
            self.blank();
        }
    }
}

/// The launcher's name for a kernel.
fn launcher(kernel: &str) -> String {
    format!("launch_{kernel}")
}
