//! Generated GPU kernels one stencil part at a time, on any [`GpuDevice`],
//! for drivers that act between parts (the MPI driver, `exec::mpi`).
//!
//! [`GpuParts`] lowers a program under a plain schedule (one launch per
//! stencil part: no fusion, time tiling or shared-memory staging), compiles
//! its kernels once and keeps every field level on the device. A part runs
//! on a box of its points by launching its kernel with the box as the
//! kernel's `lo_*`/`hi_*` bounds. The caller's host arrays and the device
//! copies are kept coherent level by level: a level the kernels wrote is read
//! back only when the host needs it ([`GpuParts::to_host`]), a level the host
//! changed (ghosts filled by an exchange) is written to the device before the
//! next launch ([`GpuParts::host_wrote`]).

use crate::analysis::footprint::Footprint;
use crate::exec::host_plan::{GpuDevice, KernelArg};
use crate::exec::{check_inputs, ExecError, FieldState};
use crate::ir::env::RunEnv;
use crate::ir::{Program, Value};
use crate::lower::plan::{launch_groups, ArgSource, Launch};
use crate::lower::{lower_for, Lowered, Target};
use crate::schedule::{Schedule, ScheduleRequest, ShmRequest};

/// A box of points: inclusive bounds per axis, outermost first.
type Bounds = Vec<(i64, i64)>;

/// A stencil part's box (`None` where empty) and the (field, level)s it writes.
type PartInfo = (Option<Bounds>, Vec<(usize, usize)>);

/// A program's kernels compiled on a device, with every field level resident.
pub struct GpuParts<D: GpuDevice> {
    device: D,
    backend: &'static str,
    lowered: Lowered,
    params: Vec<Value>,
    constants: Vec<Value>,
    grid_dims: Vec<Vec<usize>>,
    /// `levels[f][level]`, rotated like `FieldState`.
    levels: Vec<Vec<D::Buf>>,
    /// Each field's lowest time offset (`levels[f][t - time_lo[f]]`).
    time_lo: Vec<i32>,
    /// Levels whose newest values are on the device only.
    device_newer: Vec<Vec<bool>>,
    /// Levels whose newest values are on the host only.
    host_newer: Vec<Vec<bool>>,
    /// Per stencil part, its box (`None` where empty) and the levels it writes.
    parts: Vec<Vec<PartInfo>>,
}

impl<D: GpuDevice> GpuParts<D> {
    /// Lowers `program` for `target` under the plain schedule (`block` and
    /// `tile` as the user asked, innermost axis first; contractions into fused
    /// multiply-adds when `fma`), compiles it on `device` and uploads `state`.
    pub fn prepare(
        mut device: D,
        program: &Program,
        env: &RunEnv,
        state: &FieldState,
        target: Target,
        (block, tile): (Option<Vec<u32>>, Option<Vec<u32>>),
        fma: bool,
    ) -> Result<Self, ExecError> {
        check_inputs(program, env, state)?;
        let request = ScheduleRequest {
            block,
            tile,
            shm: ShmRequest::None,
            fuse: false,
            time_steps: Some(1),
            ..Default::default()
        };
        let mut schedule =
            Schedule::new(program, &request).map_err(|e| ExecError::Failed(e.to_string()))?;
        schedule.time = None;
        let mut lowered = lower_for(program, &schedule, target, Some(env));
        lowered.module.fma = fma;
        let iterate = program.iterate.as_ref();
        // Reductions are folded on the host (in the interpreter's order), so
        // a check fused into the last stencil's kernel is never launched.
        let per_part = lowered.plan.time_tile.is_none()
            && iterate.is_none_or(|it| {
                it.stencils.len() == lowered.plan.stencils.len()
                    && it
                        .stencils
                        .iter()
                        .zip(&lowered.plan.stencils)
                        .all(|(s, launches)| s.parts.len() == launches.len())
            });
        if !per_part {
            return Err(ExecError::Failed(
                "the kernels of this program do not run one stencil part per launch; \
                 run it with --backend c or interp per rank"
                    .into(),
            ));
        }
        crate::lower::check_limits(&lowered.module, &device.limits())
            .map_err(|e| ExecError::Failed(e.to_string()))?;
        let grids = program.grids.iter().map(|g| g.name.as_str());
        let dims = env.grid_dims().iter().map(Vec::as_slice);
        lowered
            .plan
            .check(grids.zip(dims), &|subset| env.subset_box(subset))
            .map_err(|e| ExecError::Failed(e.to_string()))?;
        device.compile(&lowered.module)?;
        let mut levels = Vec::with_capacity(program.fields.len());
        for (f, field) in program.fields.iter().enumerate() {
            let mut list = Vec::with_capacity(field.levels());
            for level in &state.fields[f] {
                let mut buf = device.alloc(field.ty, level.len())?;
                device.upload(&mut buf, level)?;
                list.push(buf);
            }
            levels.push(list);
        }
        let parts = iterate.map_or(Vec::new(), |it| {
            it.stencils
                .iter()
                .map(|s| {
                    s.parts
                        .iter()
                        .map(|p| {
                            let bounds = env.subset_box(&p.subset);
                            let written = Footprint::of_body(program, &p.body)
                                .writes
                                .iter()
                                .map(|w| (w.field.0, program.fields[w.field.0].level_of(w.time)))
                                .collect();
                            (
                                (!crate::ir::env::box_is_empty(&bounds)).then_some(bounds),
                                written,
                            )
                        })
                        .collect()
                })
                .collect()
        });
        let flags: Vec<Vec<bool>> = state.fields.iter().map(|l| vec![false; l.len()]).collect();
        Ok(GpuParts {
            device,
            backend: match target {
                Target::Cuda => "cuda",
                _ => "opencl",
            },
            lowered,
            params: env.params().to_vec(),
            constants: env.constants().to_vec(),
            grid_dims: env.grid_dims().to_vec(),
            levels,
            time_lo: program.fields.iter().map(|f| f.time_lo).collect(),
            device_newer: flags.clone(),
            host_newer: flags,
            parts,
        })
    }

    /// The back-end's name (`opencl`, `cuda`).
    pub fn backend(&self) -> &'static str {
        self.backend
    }

    /// Runs part `part` of stencil `stencil` on the points of `bounds`
    /// (inclusive, per axis), a box inside the part's subset, on the current
    /// levels; the levels it writes are then newest on the device.
    pub fn run_part_on(
        &mut self,
        state: &FieldState,
        (stencil, part): (usize, usize),
        bounds: &[(i64, i64)],
    ) -> Result<(), ExecError> {
        let Some((whole, written)) = self.parts.get(stencil).and_then(|s| s.get(part)) else {
            return Err(ExecError::Failed(format!(
                "the part runner has no part {part} of stencil {stencil}"
            )));
        };
        if crate::ir::env::box_is_empty(bounds) {
            return Ok(());
        }
        crate::exec::native::parts::box_inside_part(whole.as_deref(), bounds, (stencil, part))?;
        let written = written.clone();
        for (f, flags) in self.host_newer.iter_mut().enumerate() {
            for (l, newer) in flags.iter_mut().enumerate() {
                if *newer {
                    self.device
                        .upload(&mut self.levels[f][l], &state.fields[f][l])?;
                    *newer = false;
                }
            }
        }
        self.launch((stencil, part), bounds)?;
        for (f, l) in written {
            self.device_newer[f][l] = true;
        }
        Ok(())
    }

    fn launch(&mut self, (s, p): (usize, usize), bounds: &[(i64, i64)]) -> Result<(), ExecError> {
        let launch: &Launch = &self.lowered.plan.stencils[s][p];
        let Some(groups) =
            launch_groups(launch, bounds).map_err(|e| ExecError::Failed(e.to_string()))?
        else {
            return Ok(());
        };
        let mut args = Vec::with_capacity(launch.args.len());
        for source in &launch.args {
            args.push(match source {
                ArgSource::Level(f, t) => {
                    KernelArg::Buffer(&self.levels[f.0][(t - self.time_lo[f.0]) as usize])
                }
                ArgSource::Param(p) => KernelArg::Value(self.params[p.0]),
                ArgSource::Const(c) => KernelArg::Value(self.constants[c.0]),
                ArgSource::GridSize(g, a) => {
                    KernelArg::Value(Value::Int(self.grid_dims[g.0][*a] as i32))
                }
                ArgSource::Lo(a) => KernelArg::Value(Value::Int(bounds[*a].0 as i32)),
                ArgSource::Hi(a) => KernelArg::Value(Value::Int(bounds[*a].1 as i32)),
                other => {
                    return Err(ExecError::Failed(format!(
                        "internal: a stencil part's kernel takes {other:?}, which the part \
                         runner does not provide"
                    )))
                }
            });
        }
        self.device
            .launch(launch.kernel, groups, launch.block, &args)
    }

    /// Makes the host's copy of `(field, level)` current (reads it back if
    /// the kernels wrote it since).
    pub fn to_host(
        &mut self,
        state: &mut FieldState,
        (f, l): (usize, usize),
    ) -> Result<(), ExecError> {
        if self.device_newer[f][l] {
            self.device
                .download(&self.levels[f][l], &mut state.fields[f][l])?;
            self.device_newer[f][l] = false;
        }
        Ok(())
    }

    /// Makes every level's host copy current.
    pub fn all_to_host(&mut self, state: &mut FieldState) -> Result<(), ExecError> {
        for f in 0..self.levels.len() {
            for l in 0..self.levels[f].len() {
                self.to_host(state, (f, l))?;
            }
        }
        Ok(())
    }

    /// Says the host changed `(field, level)` (after making it current with
    /// [`GpuParts::to_host`]): it is written to the device before the next
    /// launch.
    pub fn host_wrote(&mut self, (f, l): (usize, usize)) {
        debug_assert!(!self.device_newer[f][l], "host wrote a stale level");
        self.host_newer[f][l] = true;
    }

    /// Rotates the levels as `FieldState::rotate` does.
    pub fn rotate(&mut self) {
        for ((list, device), host) in self
            .levels
            .iter_mut()
            .zip(&mut self.device_newer)
            .zip(&mut self.host_newer)
        {
            list.rotate_left(1);
            device.rotate_left(1);
            host.rotate_left(1);
        }
    }
}
