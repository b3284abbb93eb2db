//! The run function of a region on the GPU (`static int run(...)`): the host
//! plan of `exec::host_plan` written in C++, one method per phase so that
//! the function reads in the order the C runs: the head and the checks, the
//! launch geometry, the reductions' partial counts, allocations and uploads,
//! the iterate, the download.
//!
//! Names of the run's locals come from one [`Namer`] taken in that order,
//! so each phase asks it for its names where the single function did.

use std::rc::Rc;

use super::host::{shadow, TIME_TILE_STEPS};
use super::launch::{LaunchNames, ReductionArgs};
use crate::back::c::expr::{Access, Scope};
use crate::back::c::names;
use crate::back::c::writer::Writer;
use crate::ir::{FieldId, GridId, Iterate, Region};
use crate::kir::names::Namer;
use crate::kir::plan::{
    HostPlan, Launch, Lowered, TimeTileLaunch, FOLD_THRESHOLD, MAX_FOLD_BLOCKS,
};
use crate::kir::Module;

/// What the phases after the geometry share: the plan, the two names every
/// CUDA call takes, each launch's geometry and each reduction's partials.
struct DeviceRun<'l> {
    module: &'l Module,
    plan: &'l HostPlan,
    /// The `Buffers *` parameter.
    dev: String,
    /// The string naming the region in messages.
    place: String,
    /// Geometry of every launch over points, keyed by the launch's address.
    geometry: Vec<(usize, LaunchNames)>,
    /// Per reduction, in the plan's order.
    partials: Vec<Partials>,
}

/// The C names of one reduction's partial results.
struct Partials {
    /// How many partials its kernels write.
    total: String,
    /// How many blocks fold them (0: no fold).
    fold: String,
    /// Where each part's partials start.
    offsets: Vec<String>,
}

/// The C names of the iterate loop's locals.
struct LoopNames {
    max_iters: String,
    every: String,
    iter: String,
    due: String,
    stop: String,
    /// Time tiling: the iterations run so far and those the launch advances.
    done: String,
    steps: String,
}

impl DeviceRun<'_> {
    /// A launch's geometry; the fold and final passes of reductions have
    /// none (their grids are given).
    fn geometry_of(&self, launch: &Launch) -> Option<&LaunchNames> {
        let key = launch as *const Launch as usize;
        self.geometry
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, names)| names)
    }

    /// The geometry of a launch over points.
    fn names_of(&self, launch: &Launch) -> &LaunchNames {
        self.geometry_of(launch)
            .expect("every launch with points has its geometry")
    }

    /// The `dim3` of blocks of a launch over points.
    fn grid_of(&self, launch: &Launch) -> String {
        self.names_of(launch).grid.clone()
    }

    /// A launch of one iteration (one step) on `grid`.
    fn launch(
        &self,
        w: &mut Writer<'_>,
        launch: &Launch,
        grid: &str,
        reduction: ReductionArgs<'_>,
    ) {
        w.launch_call(
            self.module,
            launch,
            self.geometry_of(launch),
            grid,
            reduction,
            "1",
            &self.dev,
            &self.place,
        );
    }
}

/// Expressions of the run function are read on the host, inside the grid.
const HOST_SCOPE: Scope<'static> = Scope {
    access: Access::Interior,
    locals: &[],
};

impl Writer<'_> {
    /// `static int run(...)`: checks, allocations, uploads, the iterate, the
    /// download of every field a kernel writes.
    pub(super) fn run_on_device(&mut self, region: &Region, lowered: &Lowered) {
        let p = self.program;
        let (module, plan) = (&lowered.module, &lowered.plan);
        let mut local = self.run_namer(plan);
        let (dev, place) = (local.fresh("dev"), local.fresh("where"));
        self.run_head(region, &dev, &place);
        self.run_checks(plan, &place);
        let geometry = self.run_geometry(module, plan, &mut local, &place);
        let mut run = DeviceRun {
            module,
            plan,
            dev,
            place,
            geometry,
            partials: Vec::new(),
        };
        run.partials = self.run_partials(&run, &mut local);
        self.run_allocations(&run, &mut local);
        if let Some(iterate) = &p.iterate {
            self.run_iterate(&run, iterate, &mut local);
            self.run_download(&run);
        }
        self.line("return 0;");
        self.close("}");
    }

    /// The run's locals must not hide the names of the program (parameters,
    /// constants, fields, grid sizes, reductions): a namer that holds them.
    fn run_namer(&self, plan: &HostPlan) -> Namer {
        let p = self.program;
        let n = &self.names;
        let mut local = Namer::new();
        for i in 0..p.params.len() {
            local.take(&n.param(i));
        }
        for i in 0..p.constants.len() {
            local.take(&n.constant(i));
        }
        for f in 0..p.fields.len() {
            local.take(&n.field(f));
            local.take(&n.field_temp("bytes", f));
            local.take(&n.field_temp("count", f));
        }
        for (g, grid) in p.grids.iter().enumerate() {
            for a in 0..grid.rank() {
                local.take(&n.grid_size(GridId(g), a));
            }
        }
        for r in 0..plan.reductions.len() {
            local.take(&n.reduction(r));
        }
        local
    }

    /// The signature, the region's name for messages, the constants and
    /// sizes, and `(void)` for the scalars only the kernels may read (so
    /// that the host compiler does not warn).
    fn run_head(&mut self, region: &Region, dev: &str, place: &str) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (line, _) = p.source.line_col(region.span.start as usize);
        let mut list: Vec<String> = p
            .params
            .iter()
            .enumerate()
            .map(|(i, q)| format!("{} {}", names::c_type(q.ty), n.param(i)))
            .collect();
        for (f, field) in p.fields.iter().enumerate() {
            list.push(format!("{} *{}", names::c_type(field.ty), n.field(f)));
            list.push(format!("size_t {}", n.field_temp("bytes", f)));
        }
        list.push(format!("Buffers *{dev}"));
        self.line(&format!(
            "/* Runs region {} on the GPU; returns the wrapper's status. */",
            region.index
        ));
        self.function_head("static int run", &list.join(", "));
        self.open("{");
        let file = p.source.name.replace('\\', "\\\\").replace('"', "\\\"");
        self.line(&format!(
            "const char *{place} = \"region {} (line {line} of {file})\";",
            region.index
        ));
        self.constants_and_sizes();
        let mut unused: Vec<String> = (0..p.params.len()).map(|i| n.param(i)).collect();
        unused.extend((0..p.constants.len()).map(|i| n.constant(i)));
        if !unused.is_empty() {
            self.line("/* the kernels may be all that reads these */");
            let voids: Vec<String> = unused.iter().map(|u| format!("(void){u};")).collect();
            let (last, rest) = voids.split_last().expect("not empty");
            let first = rest.first().map_or(last.as_str(), |f| f.as_str());
            let items: Vec<String> = rest.iter().skip(1).cloned().chain([last.clone()]).collect();
            if rest.is_empty() {
                self.line(first);
            } else {
                self.packed(first, &items);
            }
        }
    }

    /// Before anything is allocated: the grids' sizes, what the kernels can
    /// index, every access inside its grid, and each host array's size.
    fn run_checks(&mut self, plan: &HostPlan, place: &str) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        self.grid_size_checks();
        self.gpu_size_checks(plan.wide_indices, place);
        self.access_bounds_checks();
        for (f, field) in p.fields.iter().enumerate() {
            let ty = names::c_type(field.ty);
            let sizes: Vec<String> = (0..p.grids[field.grid.0].rank())
                .map(|a| n.grid_size(field.grid, a))
                .collect();
            let (bytes, count) = (n.field_temp("bytes", f), n.field_temp("count", f));
            self.line(&format!(
                "const size_t {count} = (size_t)({});",
                sizes.join(" * ")
            ));
            // A pointer's size says nothing (STENCILC_HOST_BYTES); an array
            // must hold the grid exactly.
            self.line(&format!(
                "if ({bytes} != STENCILC_HOST_POINTER && {bytes} != {count} * sizeof({ty})) return 2;"
            ));
        }
    }

    /// The blocks of every launch over points, computed once: the sizes are
    /// fixed for the run.
    fn run_geometry(
        &mut self,
        module: &Module,
        plan: &HostPlan,
        local: &mut Namer,
        place: &str,
    ) -> Vec<(usize, LaunchNames)> {
        let mut launches: Vec<&Launch> = Vec::new();
        match &plan.time_tile {
            // The per-stencil kernels are not launched when the run time-tiles.
            Some(tile) => launches.push(&tile.launch),
            None => launches.extend(plan.stencils.iter().flatten()),
        }
        if let Some(fused) = &plan.fused {
            launches.push(&fused.launch);
        }
        for reduction in &plan.reductions {
            launches.extend(reduction.parts.iter().map(|(_, part)| part));
        }
        self.line(
            "/* Blocks of every launch over its points (the sizes are fixed for the run). */",
        );
        launches
            .into_iter()
            .map(|launch| {
                let key = launch as *const Launch as usize;
                (key, self.launch_geometry(module, launch, local, place))
            })
            .collect()
    }

    /// Per reduction, how many partials its kernels write (the fused
    /// kernel's first, then each part's) and how many blocks fold them;
    /// status 5 where the count would overflow the kernels' `int`.
    fn run_partials(&mut self, run: &DeviceRun<'_>, local: &mut Namer) -> Vec<Partials> {
        let n = Rc::clone(&self.names);
        let place = &run.place;
        let mut partials = Vec::new();
        for (r, reduction) in run.plan.reductions.iter().enumerate() {
            let name = n.reduction(r);
            let total = local.fresh(&format!("{name}_partial_count"));
            let fold = local.fresh(&format!("{name}_fold_blocks"));
            self.line(&format!(
                "/* {}: one partial per block of its kernels, folded when there are more than {FOLD_THRESHOLD} */",
                reduction.name
            ));
            self.line(&format!("long {total} = 0;"));
            match &run.plan.fused {
                Some(fused) if fused.reductions.contains(&r) => {
                    let count = &run.names_of(&fused.launch).count;
                    self.line(&format!("{total} += {count};"));
                }
                _ => {}
            }
            let mut offsets = Vec::new();
            for (_, part) in &reduction.parts {
                let offset = local.fresh(&format!("{name}_offset"));
                let count = &run.names_of(part).count;
                self.line(&format!("const long {offset} = {total};"));
                self.line(&format!("{total} += {count};"));
                offsets.push(offset);
            }
            self.open(&format!(
                "if ({total} > (long)INT_MAX - {MAX_FOLD_BLOCKS}) {{"
            ));
            self.message(
                &format!(
                    "stencilc: %s: reduction {} needs %ld partial results, more than 32-bit int \
                     counts; use a smaller grid",
                    reduction.name
                ),
                &format!("{place}, {total}"),
            );
            self.line("return 5;");
            self.close("}");
            self.line(&format!(
                "long {fold} = {total} > {FOLD_THRESHOLD} ? ({total} + {}) / {FOLD_THRESHOLD} : 0;",
                FOLD_THRESHOLD - 1
            ));
            self.line(&format!(
                "if ({fold} > {MAX_FOLD_BLOCKS}) {fold} = {MAX_FOLD_BLOCKS};"
            ));
            partials.push(Partials {
                total,
                fold,
                offsets,
            });
        }
        partials
    }

    /// The run's allocations and uploads: every field's time levels (from the
    /// host arrays), the time tile's shadow levels, each reduction's partials.
    fn run_allocations(&mut self, run: &DeviceRun<'_>, local: &mut Namer) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (dev, place) = (&run.dev, &run.place);
        let memory = "cudaMalloc";
        for (f, field) in p.fields.iter().enumerate() {
            let ty = names::c_type(field.ty);
            let (name, count) = (n.field(f), n.field_temp("count", f));
            self.line(&format!(
                "/* {}: every time level starts from the host array */",
                field.name
            ));
            for l in 0..field.levels() {
                self.line(&format!(
                    "STENCILC_CUDA({place}, {memory}((void **)&{dev}->{name}[{l}], {count} * sizeof({ty})));"
                ));
                self.line(&format!(
                    "STENCILC_CUDA({place}, cudaMemcpy({dev}->{name}[{l}], {name}, {count} * sizeof({ty}), cudaMemcpyHostToDevice));"
                ));
            }
        }
        if let Some(tile) = &run.plan.time_tile {
            for f in &tile.staged {
                let field = &p.fields[f.0];
                let ty = names::c_type(field.ty);
                let (name, count) = (n.field(f.0), n.field_temp("count", f.0));
                self.line(&format!(
                    "/* {}: the shadow levels (the time-tiled kernel writes every point) */",
                    field.name
                ));
                for l in 0..field.levels() {
                    self.line(&format!(
                        "STENCILC_CUDA({place}, {memory}((void **)&{dev}->{}[{l}], {count} * sizeof({ty})));",
                        shadow(&name)
                    ));
                }
            }
        }
        for (r, reduction) in run.plan.reductions.iter().enumerate() {
            let ty = names::c_type(reduction.ty);
            let name = n.reduction(r);
            let Partials { total, fold, .. } = &run.partials[r];
            let room = local.fresh(&format!("{name}_room"));
            self.line(&format!(
                "/* {}: the partials, the fold's after them, and the value */",
                reduction.name
            ));
            self.line(&format!(
                "const long {room} = {total} + {fold} > 0 ? {total} + {fold} : 1;"
            ));
            self.line(&format!(
                "STENCILC_CUDA({place}, {memory}((void **)&{dev}->{name}_partials, {room} * sizeof({ty})));"
            ));
            self.line(&format!(
                "STENCILC_CUDA({place}, {memory}((void **)&{dev}->{name}_result, sizeof({ty})));"
            ));
            self.line(&format!(
                "STENCILC_CUDA({place}, cudaMemset({dev}->{name}_result, 0, sizeof({ty})));"
            ));
        }
    }

    /// The iterate: each iteration's launches, reductions when due, the
    /// check, the rotation; with a time tile, inside a loop of launches that
    /// each advance several iterations.
    fn run_iterate(&mut self, run: &DeviceRun<'_>, iterate: &Iterate, local: &mut Namer) {
        let names = self.iterate_prologue(run, iterate, local);
        match &run.plan.time_tile {
            Some(tile) => self.time_tile_open(run, tile, iterate, &names, local),
            None => self.open(&format!(
                "for (long {iter} = 1; {iter} <= {max_iters}; {iter}++) {{",
                iter = names.iter,
                max_iters = names.max_iters
            )),
        }
        self.iteration_body(run, iterate, &names, local);
        self.close("}");
        if run.plan.time_tile.is_some() {
            if iterate.check.is_some() {
                self.line(&format!("if ({}) break;", names.stop));
            }
            self.line(&format!("{} += {};", names.done, names.steps));
            self.close("}");
        }
    }

    /// The loop's names, each reduction's host value, the iteration count
    /// and the check interval (status 1 when it is not positive).
    fn iterate_prologue(
        &mut self,
        run: &DeviceRun<'_>,
        iterate: &Iterate,
        local: &mut Namer,
    ) -> LoopNames {
        let n = Rc::clone(&self.names);
        let (max_iters, every) = (local.fresh("max_iters"), local.fresh("check_every"));
        let (iter, due, stop) = (local.fresh("iter"), local.fresh("due"), local.fresh("stop"));
        for (r, reduction) in run.plan.reductions.iter().enumerate() {
            let zero = names::zero(reduction.ty);
            self.line(&format!(
                "{} {} = {zero};",
                names::c_type(reduction.ty),
                n.reduction(r)
            ));
        }
        let max = self.expr(&iterate.max_iters, HOST_SCOPE);
        self.line(&format!("const long {max_iters} = {max};"));
        if let Some(check) = &iterate.check {
            let value = self.expr(&check.every, HOST_SCOPE);
            self.line(&format!("const long {every} = {value};"));
            self.line(&format!("if ({every} < 1) return 1;"));
        }
        let (done, steps) = (local.fresh("done"), local.fresh("steps"));
        LoopNames {
            max_iters,
            every,
            iter,
            due,
            stop,
            done,
            steps,
        }
    }

    /// As `exec::host_plan::run` does with the plan's time tile: one launch
    /// advances up to `steps` iterations (never past a checked one), its
    /// levels swap with their shadows, then the loop over the iterations it
    /// advanced opens (each has its reductions and check when due, and
    /// rotates).
    fn time_tile_open(
        &mut self,
        run: &DeviceRun<'_>,
        tile: &TimeTileLaunch,
        iterate: &Iterate,
        names: &LoopNames,
        local: &mut Namer,
    ) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let LoopNames {
            max_iters,
            every,
            iter,
            stop,
            done,
            steps,
            ..
        } = names;
        let dev = &run.dev;
        if iterate.check.is_some() {
            self.line(&format!("int {stop} = 0;"));
        }
        self.line(&format!("long {done} = 0;"));
        self.open(&format!("while ({done} < {max_iters}) {{"));
        let every_arg = if iterate.check.is_some() {
            every.as_str()
        } else {
            "0"
        };
        self.line(&format!(
            "const long {steps} = {TIME_TILE_STEPS}({done}, {max_iters}, {every_arg}, {});",
            tile.steps
        ));
        let grid = run.grid_of(&tile.launch);
        self.launch_call(
            run.module,
            &tile.launch,
            run.geometry_of(&tile.launch),
            &grid,
            None,
            &format!("(int){steps}"),
            dev,
            &run.place,
        );
        for f in &tile.staged {
            let field = &p.fields[f.0];
            let ty = names::c_type(field.ty);
            let name = n.field(f.0);
            let (held, swapped) = (local.fresh("held"), local.fresh("swapped"));
            self.line(&format!(
                "/* {}: the new values are in the shadow levels */",
                field.name
            ));
            self.open(&format!(
                "for (int {held} = 0; {held} < {}; {held}++) {{",
                field.levels()
            ));
            let level = format!("{dev}->{name}[{held}]");
            let other = format!("{dev}->{}[{held}]", shadow(&name));
            self.line(&format!(
                "{ty} *{swapped} = {level}; {level} = {other}; {other} = {swapped};"
            ));
            self.close("}");
        }
        self.open(&format!(
            "for (long {iter} = {done} + 1; {iter} <= {done} + {steps}; {iter}++) {{"
        ));
    }

    /// One iteration inside the loop: whether its reductions (and check)
    /// are due, its stencils' launches, the reductions, the check, the
    /// rotation of every field's levels.
    fn iteration_body(
        &mut self,
        run: &DeviceRun<'_>,
        iterate: &Iterate,
        names: &LoopNames,
        local: &mut Namer,
    ) {
        let LoopNames {
            max_iters,
            every,
            iter,
            due,
            stop,
            ..
        } = names;
        let due_when = match &iterate.check {
            Some(_) => format!("{iter} % {every} == 0"),
            // Without a check only the last value can be observed.
            None => format!("{iter} == {max_iters}"),
        };
        let needs_due = !run.plan.reductions.is_empty() || iterate.check.is_some();
        if needs_due {
            self.line(&format!("const int {due} = {due_when};"));
        }
        if run.plan.time_tile.is_none() {
            self.stencil_launches(run, due);
        }
        if !run.plan.reductions.is_empty() {
            self.reduction_launches(run, due);
        }
        if let Some(check) = &iterate.check {
            let cond = self.expr(&check.cond, HOST_SCOPE);
            let declared = if run.plan.time_tile.is_some() {
                ""
            } else {
                "const int "
            };
            self.line(&format!("{declared}{stop} = {due} && {cond} != 0;"));
        }
        self.rotate_device_levels(&run.dev, local);
        if iterate.check.is_some() {
            self.line(&format!("if ({stop}) break;"));
        }
    }

    /// Every stencil's launches of an untiled iteration; the last of the
    /// stencil the check's reductions ride in runs fused when `due`.
    fn stencil_launches(&mut self, run: &DeviceRun<'_>, due: &str) {
        for (s, launches) in run.plan.stencils.iter().enumerate() {
            for (k, launch) in launches.iter().enumerate() {
                let fused = run
                    .plan
                    .fused
                    .as_ref()
                    .filter(|f| f.stencil == s && k + 1 == launches.len());
                match fused {
                    Some(fused) => {
                        self.line(
                            "/* the check's reductions ride in this kernel when it is due */",
                        );
                        self.open(&format!("if ({due}) {{"));
                        let grid = run.grid_of(&fused.launch);
                        run.launch(self, &fused.launch, &grid, None);
                        self.close_open("} else {");
                        let grid = run.grid_of(launch);
                        run.launch(self, launch, &grid, None);
                        self.close("}");
                    }
                    None => {
                        let grid = run.grid_of(launch);
                        run.launch(self, launch, &grid, None);
                    }
                }
            }
        }
    }

    /// When `due`: each reduction's parts, its fold where there are many
    /// partials, its final pass, and only its scalar read back.
    fn reduction_launches(&mut self, run: &DeviceRun<'_>, due: &str) {
        let n = Rc::clone(&self.names);
        let (dev, place) = (&run.dev, &run.place);
        self.open(&format!("if ({due}) {{"));
        for (r, reduction) in run.plan.reductions.iter().enumerate() {
            let Partials {
                total,
                fold,
                offsets,
            } = &run.partials[r];
            let name = n.reduction(r);
            let ty = names::c_type(reduction.ty);
            self.line(&format!(
                "/* {}: its parts' partials, folded, read back */",
                reduction.name
            ));
            for ((_, part), offset) in reduction.parts.iter().zip(offsets) {
                let grid = run.grid_of(part);
                run.launch(self, part, &grid, Some((offset, total)));
            }
            self.open(&format!("if ({fold} > 0) {{"));
            let fold_grid = format!("dim3((unsigned){fold}, 1, 1)");
            run.launch(self, &reduction.fold, &fold_grid, Some(("0", total)));
            run.launch(
                self,
                &reduction.finish,
                "dim3(1, 1, 1)",
                Some((total, fold)),
            );
            self.close_open("} else {");
            run.launch(self, &reduction.finish, "dim3(1, 1, 1)", Some(("0", total)));
            self.close("}");
            self.line(&format!(
                "STENCILC_CUDA({place}, cudaMemcpy(&{name}, {dev}->{name}_result, sizeof({ty}), cudaMemcpyDeviceToHost));"
            ));
        }
        self.close("}");
    }

    /// The end of an iteration: every field of two levels or more rotates
    /// its level pointers on the device (nothing is copied).
    fn rotate_device_levels(&mut self, dev: &str, local: &mut Namer) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        for (f, field) in p.fields.iter().enumerate() {
            if field.levels() < 2 {
                continue;
            }
            let ty = names::c_type(field.ty);
            let name = n.field(f);
            let oldest = local.fresh("oldest");
            let mut text = format!("{{ {ty} *{oldest} = {dev}->{name}[0];");
            for l in 0..field.levels() - 1 {
                text.push_str(&format!(" {dev}->{name}[{l}] = {dev}->{name}[{}];", l + 1));
            }
            text.push_str(&format!(
                " {dev}->{name}[{}] = {oldest}; }}",
                field.levels() - 1
            ));
            self.line(&format!(
                "/* rotate {}: [{}] becomes [{}] (pointers swap, nothing is copied) */",
                field.name,
                field.time_hi,
                field.time_hi - 1
            ));
            self.line(&text);
        }
    }

    /// After the iterate: wait for the device, then bring back the newest
    /// level of every field a kernel writes.
    fn run_download(&mut self, run: &DeviceRun<'_>) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (dev, place) = (&run.dev, &run.place);
        self.line(&format!("STENCILC_CUDA({place}, cudaDeviceSynchronize());"));
        for (f, field) in p.fields.iter().enumerate() {
            if !super::host::written_by_a_kernel(run.module, run.plan, FieldId(f)) {
                continue;
            }
            let ty = names::c_type(field.ty);
            let (name, count) = (n.field(f), n.field_temp("count", f));
            let newest = field.level_of(field.newest_offset());
            self.line(&format!(
                "/* {}: its newest level back into the host array */",
                field.name
            ));
            self.line(&format!(
                "STENCILC_CUDA({place}, cudaMemcpy({name}, {dev}->{name}[{newest}], {count} * sizeof({ty}), cudaMemcpyDeviceToHost));"
            ));
        }
    }
}
