//! Running a host plan on any GPU runtime: fields uploaded once, the whole
//! iterate on the device, time levels rotated by swapping buffer handles,
//! reductions on the device with only their scalar read back, one download at
//! the end. A runtime implements [`GpuDevice`]; this module does the rest.

use std::time::{Duration, Instant};

use crate::exec::{Buffer, ExecError, FieldState, RunSummary};
use crate::ir::env::RunEnv;
use crate::ir::{Program, ScalarType, Value};
use crate::kir::plan::{fold_groups, launch_groups, ArgSource, HostPlan, Launch};
use crate::kir::Module;
use crate::lower::Lowered;
use crate::schedule::DeviceLimits;

/// One kernel argument as the runtime receives it.
pub enum KernelArg<'a, B> {
    /// A device buffer.
    Buffer(&'a B),
    /// A scalar, of the parameter's type.
    Value(Value),
}

/// What a GPU runtime provides to run a [`Lowered`] program.
pub trait GpuDevice {
    /// A device buffer.
    type Buf;
    /// What the device allows per block.
    fn limits(&self) -> DeviceLimits;
    /// Compiles (or finds in the cache) the module's kernels.
    fn compile(&mut self, module: &Module) -> Result<(), ExecError>;
    /// A buffer of `len` elements of `ty`.
    fn alloc(&mut self, ty: ScalarType, len: usize) -> Result<Self::Buf, ExecError>;
    /// Copies `src` to the device.
    fn upload(&mut self, dst: &mut Self::Buf, src: &Buffer) -> Result<(), ExecError>;
    /// Copies a device buffer into `dst` (same type and length).
    fn download(&mut self, src: &Self::Buf, dst: &mut Buffer) -> Result<(), ExecError>;
    /// Copies the boxes `rects` of device buffer `src` into the same places
    /// of `dst` (same type and length), the rest of `dst` untouched.
    fn download_rects(
        &mut self,
        src: &Self::Buf,
        dst: &mut Buffer,
        rects: &[Rect],
    ) -> Result<(), ExecError>;
    /// Copies the boxes `rects` of `src` into the same places of device
    /// buffer `dst`, the rest of `dst` untouched.
    fn upload_rects(
        &mut self,
        dst: &mut Self::Buf,
        src: &Buffer,
        rects: &[Rect],
    ) -> Result<(), ExecError>;
    /// Enqueues kernel `kernel` of the compiled module.
    fn launch(
        &mut self,
        kernel: usize,
        groups: [u32; 3],
        block: [u32; 3],
        args: &[KernelArg<'_, Self::Buf>],
    ) -> Result<(), ExecError>;
    /// Waits for all enqueued work; returns the kernel time since the last call,
    /// measured on the device (events).
    fn finish(&mut self) -> Result<Duration, ExecError>;
}

/// A box of a row-major array as rectangular copies (OpenCL's
/// `clEnqueueReadBufferRect`, CUDA's `cuMemcpy3D`) take it: bytes along the
/// innermost axis, rows along the next, slices along the outermost (arrays
/// of fewer than three axes padded with axes of one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    /// The box's first byte within a row, its first row, its first slice.
    pub origin: [usize; 3],
    /// Bytes per row, rows, slices of the box.
    pub region: [usize; 3],
    /// Bytes of one row of the array.
    pub row_pitch: usize,
    /// Bytes of one slice of the array.
    pub slice_pitch: usize,
}

impl Rect {
    /// The box `bounds` (inclusive, outermost axis first) of an array shaped
    /// `dims` of `elem`-byte elements; `None` when the box is empty, lies
    /// outside the array or the array has more than three axes.
    pub fn of(dims: &[usize], bounds: &[(i64, i64)], elem: usize) -> Option<Rect> {
        if dims.len() > 3 || bounds.len() != dims.len() {
            return None;
        }
        let mut origin = [0usize; 3];
        let mut extent = [1usize; 3];
        let mut shape = [1usize; 3];
        // Index 0 the innermost axis.
        for (i, (&(lo, hi), &n)) in bounds.iter().rev().zip(dims.iter().rev()).enumerate() {
            if lo < 0 || lo > hi || hi as usize >= n {
                return None;
            }
            origin[i] = lo as usize;
            extent[i] = (hi - lo + 1) as usize;
            shape[i] = n;
        }
        Some(Rect {
            origin: [origin[0] * elem, origin[1], origin[2]],
            region: [extent[0] * elem, extent[1], extent[2]],
            row_pitch: shape[0] * elem,
            slice_pitch: shape[0] * shape[1] * elem,
        })
    }

    /// Bytes in the box.
    pub fn bytes(&self) -> usize {
        self.region.iter().product()
    }

    /// Refuses a box that is empty or reaches past an array of `len` bytes
    /// (a stencilc bug: [`Rect::of`] makes neither).
    pub fn check(&self, len: usize) -> Result<(), ExecError> {
        let end = |i: usize| self.origin[i] + self.region[i];
        let inside = self.bytes() > 0
            && end(0) <= self.row_pitch
            && end(1) * self.row_pitch <= self.slice_pitch
            && (end(2) - 1) * self.slice_pitch + (end(1) - 1) * self.row_pitch + end(0) <= len;
        if inside {
            Ok(())
        } else {
            Err(ExecError::Failed(format!(
                "internal: a box copy {self:?} outside an array of {len} bytes"
            )))
        }
    }

    /// The box as contiguous byte ranges `(offset, length)` of the array,
    /// in order; whole rows (and whole slices) merge into one range.
    pub fn runs(&self) -> Vec<(usize, usize)> {
        let [x, y, z] = self.origin;
        let [w, h, d] = self.region;
        let start = |row: usize, slice: usize| slice * self.slice_pitch + row * self.row_pitch + x;
        if w == self.row_pitch && h * self.row_pitch == self.slice_pitch {
            return vec![(start(y, z), w * h * d)];
        }
        if w == self.row_pitch {
            return (z..z + d).map(|s| (start(y, s), w * h)).collect();
        }
        (z..z + d)
            .flat_map(|s| (y..y + h).map(move |r| (s, r)))
            .map(|(s, r)| (start(r, s), w))
            .collect()
    }
}

/// A program's data resident on a device: every field time level (rotated like
/// `FieldState`), and each reduction's partials and result.
pub struct Resident<B> {
    /// `levels[f][level]`, rotated like `FieldState`.
    levels: Vec<Vec<B>>,
    /// `shadows[f][level]`: with time tiling, for each field the time-tiled
    /// launch writes, the buffers it writes the levels' new values into
    /// (swapped with `levels` after the launch); empty for other fields.
    shadows: Vec<Vec<B>>,
    /// Each field's lowest time offset (`levels[f][t - time_lo[f]]`).
    time_lo: Vec<i32>,
    partials: Vec<B>,
    results: Vec<B>,
    /// Per reduction: where each part's blocks start in its partials, and how
    /// many partials there are in all.
    partial_offsets: Vec<(Vec<i32>, i32)>,
}

impl<B> Resident<B> {
    /// Allocates everything `lowered` needs on `device` and uploads `state`.
    pub fn upload<D: GpuDevice<Buf = B>>(
        device: &mut D,
        program: &Program,
        lowered: &Lowered,
        env: &RunEnv,
        state: &FieldState,
    ) -> Result<Self, ExecError> {
        let mut levels = Vec::new();
        for (f, field) in program.fields.iter().enumerate() {
            let len: usize = env.grid_dims()[field.grid.0].iter().product();
            let mut list = Vec::new();
            for level in 0..field.levels() {
                let mut buf = device.alloc(field.ty, len)?;
                match state.fields.get(f).and_then(|l| l.get(level)) {
                    Some(src) if src.len() == len && src.ty() == field.ty => {
                        device.upload(&mut buf, src)?
                    }
                    _ => {
                        return Err(ExecError::Failed(format!(
                            "field `{}` level {level} has no data of {len} {} elements; \
                             give every level its input",
                            field.name, field.ty
                        )))
                    }
                }
                list.push(buf);
            }
            levels.push(list);
        }
        let mut shadows = Vec::new();
        for (f, field) in program.fields.iter().enumerate() {
            let staged = lowered
                .plan
                .time_tile
                .as_ref()
                .is_some_and(|t| t.staged.iter().any(|s| s.0 == f));
            let mut list = Vec::new();
            if staged {
                let len: usize = env.grid_dims()[field.grid.0].iter().product();
                for _ in 0..field.levels() {
                    list.push(device.alloc(field.ty, len)?);
                }
            }
            shadows.push(list);
        }
        let mut partials = Vec::new();
        let mut results = Vec::new();
        let mut partial_offsets = Vec::new();
        let blocks = |launch: &Launch| -> Result<u64, ExecError> {
            let Some(subset) = &launch.subset else {
                return Ok(0);
            };
            let groups = launch_groups(launch, &env.subset_box(subset))
                .map_err(|e| ExecError::Failed(e.to_string()))?;
            Ok(groups.map_or(0, |g| g.iter().map(|&v| u64::from(v)).product()))
        };
        let plan = &lowered.plan;
        for (r, red) in plan.reductions.iter().enumerate() {
            // The fused kernel's partials first (from index 0), then each
            // separate part's, then room for the fold's.
            let mut total = match &plan.fused {
                Some(fused) if fused.reductions.contains(&r) => blocks(&fused.launch)?,
                _ => 0,
            };
            let mut offsets = Vec::new();
            for (_, part) in &red.parts {
                offsets.push(total as i32);
                total += blocks(part)?;
            }
            partial_offsets.push((offsets, total as i32));
            let room = total + u64::from(fold_groups(total).unwrap_or(0));
            partials.push(device.alloc(red.ty, room.max(1) as usize)?);
            let mut result = device.alloc(red.ty, 1)?;
            device.upload(&mut result, &Buffer::zeros(red.ty, 1))?;
            results.push(result);
        }
        Ok(Resident {
            levels,
            shadows,
            time_lo: program.fields.iter().map(|f| f.time_lo).collect(),
            partials,
            results,
            partial_offsets,
        })
    }

    /// Enqueues one iteration's stencils, in order, with the plain kernels (no
    /// check).
    pub fn stencils<D: GpuDevice<Buf = B>>(
        &self,
        device: &mut D,
        plan: &HostPlan,
        env: &RunEnv,
    ) -> Result<(), ExecError> {
        for launches in &plan.stencils {
            for launch in launches {
                run_launch(device, launch, env, self, None, None)?;
            }
        }
        Ok(())
    }

    /// Enqueues the time-tiled launch advancing `steps` iterations, then swaps
    /// each level it wrote with its shadow (which now holds the new values).
    pub fn time_tile<D: GpuDevice<Buf = B>>(
        &mut self,
        device: &mut D,
        tile: &crate::kir::plan::TimeTileLaunch,
        env: &RunEnv,
        steps: u32,
    ) -> Result<(), ExecError> {
        run_launch_steps(device, &tile.launch, env, self, None, None, steps)?;
        for f in &tile.staged {
            std::mem::swap(&mut self.levels[f.0], &mut self.shadows[f.0]);
        }
        Ok(())
    }

    /// Enqueues one iteration (without rotating the levels). When the check
    /// is `due`, the last stencil launch runs its fused-check variant where
    /// the plan has one, then the rest of every reduction; returns their
    /// values (read back: this waits for the device).
    pub fn iteration<D: GpuDevice<Buf = B>>(
        &self,
        device: &mut D,
        plan: &HostPlan,
        env: &RunEnv,
        due: bool,
    ) -> Result<Option<Vec<Value>>, ExecError> {
        let fused = plan.fused.as_ref().filter(|_| due);
        for (s, launches) in plan.stencils.iter().enumerate() {
            for (k, launch) in launches.iter().enumerate() {
                let launch = match fused {
                    Some(f) if f.stencil == s && k + 1 == launches.len() => &f.launch,
                    _ => launch,
                };
                run_launch(device, launch, env, self, None, None)?;
            }
        }
        if !due || plan.reductions.is_empty() {
            return Ok(None);
        }
        self.reductions(device, plan, env).map(Some)
    }

    /// Folds every reduction's partials (the fused kernel's, if it ran this
    /// iteration, must be in place) and returns the values.
    fn reductions<D: GpuDevice<Buf = B>>(
        &self,
        device: &mut D,
        plan: &HostPlan,
        env: &RunEnv,
    ) -> Result<Vec<Value>, ExecError> {
        let mut values = Vec::new();
        for (r, red) in plan.reductions.iter().enumerate() {
            let (offsets, total) = &self.partial_offsets[r];
            for (p, (_, launch)) in red.parts.iter().enumerate() {
                run_launch(
                    device,
                    launch,
                    env,
                    self,
                    Some((r, offsets[p], *total)),
                    None,
                )?;
            }
            let (offset, count) = match fold_groups(*total as u64) {
                Some(groups) => {
                    run_launch(
                        device,
                        &red.fold,
                        env,
                        self,
                        Some((r, 0, *total)),
                        Some([groups, 1, 1]),
                    )?;
                    (*total, groups as i32)
                }
                None => (0, *total),
            };
            run_launch(
                device,
                &red.finish,
                env,
                self,
                Some((r, offset, count)),
                None,
            )?;
            let mut out = Buffer::zeros(red.ty, 1);
            device.download(&self.results[r], &mut out)?;
            values.push(out.get(0));
        }
        Ok(values)
    }

    /// Rotates every multi-level field's levels by swapping buffer handles.
    pub fn rotate(&mut self) {
        for list in &mut self.levels {
            list.rotate_left(1);
        }
    }

    /// Copies every level back into `state`.
    pub fn download<D: GpuDevice<Buf = B>>(
        &self,
        device: &mut D,
        state: &mut FieldState,
    ) -> Result<(), ExecError> {
        for (f, list) in self.levels.iter().enumerate() {
            for (level, buf) in list.iter().enumerate() {
                device.download(buf, &mut state.fields[f][level])?;
            }
        }
        Ok(())
    }
}

/// Runs `lowered` (of `program`) on `device`, updating `state` like the
/// interpreter, once the inputs pass [`check_inputs`](crate::exec::check_inputs).
pub fn run<D: GpuDevice>(
    device: &mut D,
    program: &Program,
    lowered: &Lowered,
    env: &RunEnv,
    state: &mut FieldState,
) -> Result<RunSummary, ExecError> {
    run_observed(device, program, lowered, env, state, None)
}

/// [`run`], telling `progress` after each iteration (as launched: the device
/// may still be computing it).
pub fn run_observed<D: GpuDevice>(
    device: &mut D,
    program: &Program,
    lowered: &Lowered,
    env: &RunEnv,
    state: &mut FieldState,
    progress: Option<&crate::data::ProgressHook>,
) -> Result<RunSummary, ExecError> {
    crate::exec::check_inputs(program, env, state)?;
    let mut summary = RunSummary::default();
    crate::lower::check_limits(&lowered.module, &device.limits())
        .map_err(|e| ExecError::Failed(e.to_string()))?;
    // Sizes the kernels cannot index or launch, refused before any launch.
    let grids = program.grids.iter().map(|g| g.name.as_str());
    let dims = env.grid_dims().iter().map(Vec::as_slice);
    lowered
        .plan
        .check(grids.zip(dims), &|subset| env.subset_box(subset))
        .map_err(|e| ExecError::Failed(e.to_string()))?;
    let t0 = Instant::now();
    device.compile(&lowered.module)?;
    summary.times.compile = t0.elapsed();
    let plan = &lowered.plan;

    let t0 = Instant::now();
    let mut resident = Resident::upload(device, program, lowered, env, state)?;
    device.finish()?;
    summary.times.upload = t0.elapsed();

    let mut compute = Duration::ZERO;
    let mut values: Vec<Option<Value>> = vec![None; plan.reductions.len()];
    if let (Some(iterate), Some(tile)) = (&program.iterate, &plan.time_tile) {
        let max = env.max_iters();
        let mut done = 0;
        'launches: while done < max {
            let steps = crate::schedule::time::launch_steps(done, max, env.every(), tile.steps);
            resident.time_tile(device, tile, env, steps)?;
            for k in done + 1..=done + u64::from(steps) {
                // A launch ends at an iteration whose check is due.
                let checked = match env.every() {
                    Some(every) => every > 0 && k % every == 0,
                    None => k == max,
                };
                let mut stop = false;
                if checked && !plan.reductions.is_empty() {
                    let reduced = resident.reductions(device, plan, env)?;
                    if let (Some(check), Some(_)) = (&iterate.check, env.every()) {
                        stop = env
                            .eval_with(&check.cond, &program.tables, &[], &reduced)
                            .is_true();
                    }
                    values = reduced.into_iter().map(Some).collect();
                }
                resident.rotate();
                summary.iterations = k;
                if let Some(progress) = progress {
                    progress.tell(k, max)?;
                }
                if stop {
                    summary.stopped_by_check = true;
                    break 'launches;
                }
            }
            done += u64::from(steps);
            if done % 64 < u64::from(steps) {
                compute += device.finish()?;
            }
        }
        summary.reductions = iterate
            .reductions
            .iter()
            .zip(&values)
            .map(|(r, v)| (r.name.clone(), *v))
            .collect();
    } else if let Some(iterate) = &program.iterate {
        for k in 1..=env.max_iters() {
            let checked = match env.every() {
                Some(every) => every > 0 && k % every == 0,
                // Without a check only the last value can be observed.
                None => k == env.max_iters(),
            };
            let mut stop = false;
            if let Some(reduced) = resident.iteration(device, plan, env, checked)? {
                values = reduced.into_iter().map(Some).collect();
            }
            if checked {
                if let (Some(check), Some(_)) = (&iterate.check, env.every()) {
                    // As in the interpreter; every reduction was just evaluated.
                    let reduced: Vec<Value> = values.iter().flatten().copied().collect();
                    stop = env
                        .eval_with(&check.cond, &program.tables, &[], &reduced)
                        .is_true();
                }
            }
            resident.rotate();
            summary.iterations = k;
            if let Some(progress) = progress {
                progress.tell(k, env.max_iters())?;
            }
            if stop {
                summary.stopped_by_check = true;
                break;
            }
            if k % 64 == 0 {
                compute += device.finish()?;
            }
        }
        summary.reductions = iterate
            .reductions
            .iter()
            .zip(&values)
            .map(|(r, v)| (r.name.clone(), *v))
            .collect();
    }
    compute += device.finish()?;
    summary.times.compute = compute;

    let t0 = Instant::now();
    resident.download(device, state)?;
    summary.times.download = t0.elapsed();
    Ok(summary)
}

/// `(reduction, partial offset, partial count)` of a reduction launch.
type ReductionArgs = Option<(usize, i32, i32)>;

/// Enqueues `launch`; `groups` overrides the block count of a launch without
/// points (the fold).
fn run_launch<D: GpuDevice>(
    device: &mut D,
    launch: &Launch,
    env: &RunEnv,
    bufs: &Resident<D::Buf>,
    reduction: ReductionArgs,
    groups: Option<[u32; 3]>,
) -> Result<(), ExecError> {
    run_launch_steps(device, launch, env, bufs, reduction, groups, 1)
}

/// [`run_launch`] with the step count a time-tiled launch takes.
fn run_launch_steps<D: GpuDevice>(
    device: &mut D,
    launch: &Launch,
    env: &RunEnv,
    bufs: &Resident<D::Buf>,
    reduction: ReductionArgs,
    groups: Option<[u32; 3]>,
    steps: u32,
) -> Result<(), ExecError> {
    let (bounds, groups) = match &launch.subset {
        Some(subset) => {
            let bounds = env.subset_box(subset);
            match launch_groups(launch, &bounds).map_err(|e| ExecError::Failed(e.to_string()))? {
                Some(g) => (bounds, g),
                // An empty part: no blocks, and no partials counted for it.
                None => return Ok(()),
            }
        }
        None => (vec![], groups.unwrap_or([1, 1, 1])),
    };
    let mut args = Vec::with_capacity(launch.args.len());
    for source in &launch.args {
        args.push(match source {
            ArgSource::Level(f, t) => {
                KernelArg::Buffer(&bufs.levels[f.0][(t - bufs.time_lo[f.0]) as usize])
            }
            ArgSource::Param(p) => KernelArg::Value(env.params()[p.0]),
            ArgSource::Const(c) => KernelArg::Value(env.constants()[c.0]),
            ArgSource::GridSize(g, a) => {
                KernelArg::Value(Value::Int(env.grid_dims()[g.0][*a] as i32))
            }
            ArgSource::Lo(a) => KernelArg::Value(Value::Int(bounds[*a].0 as i32)),
            ArgSource::Hi(a) => KernelArg::Value(Value::Int(bounds[*a].1 as i32)),
            ArgSource::Partials(r) => KernelArg::Buffer(&bufs.partials[r.0]),
            ArgSource::Result(r) => KernelArg::Buffer(&bufs.results[r.0]),
            ArgSource::PartialOffset => KernelArg::Value(Value::Int(reduction.map_or(0, |r| r.1))),
            ArgSource::PartialCount => KernelArg::Value(Value::Int(reduction.map_or(0, |r| r.2))),
            ArgSource::NextLevel(f, t) => {
                KernelArg::Buffer(&bufs.shadows[f.0][(t - bufs.time_lo[f.0]) as usize])
            }
            ArgSource::TimeSteps => KernelArg::Value(Value::Int(steps as i32)),
        });
    }
    device.launch(launch.kernel, groups, launch.block, &args)
}

#[cfg(test)]
mod tests {
    use super::Rect;

    #[test]
    fn a_box_is_a_rect_and_its_runs_merge_whole_rows() {
        // A 4x5x6 array of 4-byte elements: slices of 5 rows of 6.
        let dims = [4, 5, 6];
        let column = Rect::of(&dims, &[(1, 2), (0, 4), (5, 5)], 4).expect("inside");
        assert_eq!(column.origin, [20, 0, 1]);
        assert_eq!(column.region, [4, 5, 2]);
        assert_eq!((column.row_pitch, column.slice_pitch), (24, 120));
        assert_eq!(column.bytes(), 40);
        assert_eq!(column.runs().len(), 10);
        assert_eq!(column.runs()[0], (120 + 20, 4));
        // Whole rows of one slice: one run per slice; whole slices: one run.
        let rows = Rect::of(&dims, &[(1, 2), (3, 4), (0, 5)], 4).expect("inside");
        assert_eq!(rows.runs(), vec![(120 + 72, 48), (240 + 72, 48)]);
        let slices = Rect::of(&dims, &[(2, 3), (0, 4), (0, 5)], 4).expect("inside");
        assert_eq!(slices.runs(), vec![(240, 240)]);
        assert!(slices.check(480).is_ok());
        assert!(slices.check(479).is_err());
        // 1-D and 2-D arrays are padded with axes of one.
        let row = Rect::of(&[7, 9], &[(6, 6), (0, 8)], 8).expect("inside");
        assert_eq!((row.origin, row.region), ([0, 6, 0], [72, 1, 1]));
        assert_eq!(
            Rect::of(&[9], &[(2, 4)], 4).map(|r| r.runs()),
            Some(vec![(8, 12)])
        );
        // Empty or outside: none.
        assert_eq!(Rect::of(&[7, 9], &[(3, 2), (0, 8)], 4), None);
        assert_eq!(Rect::of(&[7, 9], &[(0, 7), (0, 8)], 4), None);
    }
}
