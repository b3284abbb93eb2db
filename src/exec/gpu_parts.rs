//! Generated GPU kernels one stencil part at a time, on any [`GpuDevice`],
//! for drivers that act between parts (the MPI driver, `exec::mpi`).
//!
//! [`GpuParts`] lowers a program under a plain schedule (one launch per
//! stencil part: no fusion, time tiling or shared-memory staging), compiles
//! its kernels once and keeps every field level on the device. A part runs
//! on a box of its points by launching its kernel with the box as the
//! kernel's `lo_*`/`hi_*` bounds. The caller's host arrays and the device
//! copies are kept coherent level by level: a level the kernels wrote is read
//! back only when the host needs it, whole ([`GpuParts::to_host`]) or only
//! the boxes it reads ([`GpuParts::boxes_to_host`]: the faces a halo exchange
//! sends); what the host changed (the ghosts an exchange filled, or a whole
//! level) is written to the device before the next launch
//! ([`GpuParts::host_wrote`], [`GpuParts::host_wrote_boxes`]). The bytes
//! moved each way are counted ([`GpuParts::transferred`]).

use crate::analysis::footprint::Footprint;
use crate::exec::host_plan::{GpuDevice, KernelArg, Rect};
use crate::exec::{check_inputs, ExecError, FieldState};
use crate::ir::env::RunEnv;
use crate::ir::{Program, Value};
use crate::kir::plan::{launch_groups, ArgSource, Launch};
use crate::lower::{lower_for, Lowered, Target};
use crate::schedule::{ScheduleRequest, ShmRequest};

/// A box of points: inclusive bounds per axis, outermost first.
type Bounds = Vec<(i64, i64)>;

/// A stencil part's box (`None` where empty) and the (field, level)s it writes.
type PartInfo = (Option<Bounds>, Vec<(usize, usize)>);

/// What the host changed of a level since it was last written to the device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum HostWrites {
    /// Nothing.
    #[default]
    None,
    /// These boxes (in the level's array).
    Boxes(Vec<Rect>),
    /// Anything.
    Whole,
}

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
    /// Levels whose newest values are, somewhere, on the device only (the
    /// boxes read back since are current on the host, the rest is not).
    device_newer: Vec<Vec<bool>>,
    /// What of each level the host changed since its last upload.
    host_newer: Vec<Vec<HostWrites>>,
    /// Bytes copied device to host since `prepare`.
    bytes_down: u64,
    /// Bytes copied host to device since `prepare` (its upload included).
    bytes_up: u64,
    /// Per stencil part, its box (`None` where empty) and the levels it writes.
    parts: Vec<Vec<PartInfo>>,
    /// Each field's array shape (its grid's, ghosts included).
    level_dims: Vec<Vec<usize>>,
    /// Each field's element size in bytes.
    elem_bytes: Vec<usize>,
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
            fma,
            ..Default::default()
        };
        let mut schedule = crate::driver::fixed_schedule(program, &request)
            .map_err(|e| ExecError::Failed(e.to_string()))?;
        schedule.time = None;
        let lowered = lower_for(program, &schedule, target, Some(env));
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
        let bytes_up = state
            .fields
            .iter()
            .flatten()
            .map(|level| level.as_bytes().len() as u64)
            .sum();
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
            level_dims: program
                .fields
                .iter()
                .map(|f| env.grid_dims()[f.grid.0].clone())
                .collect(),
            elem_bytes: program.fields.iter().map(|f| f.ty.size_bytes()).collect(),
            host_newer: flags
                .iter()
                .map(|l| vec![HostWrites::None; l.len()])
                .collect(),
            device_newer: flags,
            bytes_down: 0,
            bytes_up,
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
        for f in 0..self.levels.len() {
            for l in 0..self.levels[f].len() {
                self.flush(state, (f, l))?;
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

    /// Writes to the device what the host changed of `(field, level)`.
    fn flush(&mut self, state: &FieldState, (f, l): (usize, usize)) -> Result<(), ExecError> {
        let host = &state.fields[f][l];
        match std::mem::take(&mut self.host_newer[f][l]) {
            HostWrites::None => {}
            HostWrites::Boxes(rects) => {
                self.device
                    .upload_rects(&mut self.levels[f][l], host, &rects)?;
                self.bytes_up += rects.iter().map(|r| r.bytes() as u64).sum::<u64>();
            }
            HostWrites::Whole => {
                self.device.upload(&mut self.levels[f][l], host)?;
                self.bytes_up += host.as_bytes().len() as u64;
            }
        }
        Ok(())
    }

    /// The boxes `boxes` (inclusive local bounds) of a level of field `f`.
    fn rects(&self, f: usize, boxes: &[Vec<(i64, i64)>]) -> Result<Vec<Rect>, ExecError> {
        boxes
            .iter()
            .filter(|b| !crate::ir::env::box_is_empty(b))
            .map(|b| {
                Rect::of(&self.level_dims[f], b, self.elem_bytes[f]).ok_or_else(|| {
                    ExecError::Failed(format!(
                        "internal: box {b:?} outside the arrays ({:?}) of field {f}",
                        self.level_dims[f]
                    ))
                })
            })
            .collect()
    }

    /// Makes the host's copy of `(field, level)` current (reads it back whole
    /// if the kernels wrote it since; what the host changed since the last
    /// launch is written to the device first, so that it is not lost).
    pub fn to_host(
        &mut self,
        state: &mut FieldState,
        (f, l): (usize, usize),
    ) -> Result<(), ExecError> {
        if self.device_newer[f][l] {
            self.flush(state, (f, l))?;
            self.device
                .download(&self.levels[f][l], &mut state.fields[f][l])?;
            self.bytes_down += state.fields[f][l].as_bytes().len() as u64;
            self.device_newer[f][l] = false;
        }
        Ok(())
    }

    /// Makes the host's copy of the boxes `boxes` of `(field, level)`
    /// current, reading back only those (the rest of the host's copy stays
    /// as stale as it was).
    pub fn boxes_to_host(
        &mut self,
        state: &mut FieldState,
        (f, l): (usize, usize),
        boxes: &[Vec<(i64, i64)>],
    ) -> Result<(), ExecError> {
        if !self.device_newer[f][l] {
            return Ok(());
        }
        self.flush(state, (f, l))?;
        let rects = self.rects(f, boxes)?;
        self.device
            .download_rects(&self.levels[f][l], &mut state.fields[f][l], &rects)?;
        self.bytes_down += rects.iter().map(|r| r.bytes() as u64).sum::<u64>();
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

    /// Says the host changed `(field, level)` anywhere: it is written to the
    /// device whole before the next launch. The host's copy must have been
    /// current ([`GpuParts::to_host`]).
    pub fn host_wrote(&mut self, (f, l): (usize, usize)) {
        debug_assert!(!self.device_newer[f][l], "host wrote a stale level");
        self.host_newer[f][l] = HostWrites::Whole;
    }

    /// Says the host changed only the boxes `boxes` of `(field, level)`
    /// (ghosts an exchange filled, which the kernels never write): only they
    /// are written to the device before the next launch.
    pub fn host_wrote_boxes(
        &mut self,
        (f, l): (usize, usize),
        boxes: &[Vec<(i64, i64)>],
    ) -> Result<(), ExecError> {
        let rects = self.rects(f, boxes)?;
        match &mut self.host_newer[f][l] {
            HostWrites::Whole => {}
            HostWrites::Boxes(pending) => {
                for r in rects {
                    if !pending.contains(&r) {
                        pending.push(r);
                    }
                }
            }
            none @ HostWrites::None => *none = HostWrites::Boxes(rects),
        }
        Ok(())
    }

    /// Waits for the launched kernels.
    pub fn sync(&mut self) -> Result<(), ExecError> {
        self.device.finish().map(|_| ())
    }

    /// Bytes copied device to host and host to device since [`GpuParts::prepare`]
    /// (the upload of the initial state included).
    pub fn transferred(&self) -> (u64, u64) {
        (self.bytes_down, self.bytes_up)
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
