//! The host side of a region on the GPU: the device buffers, the run function
//! (the host plan of `exec::host_plan` in C++) and the wrapper the
//! region's call line calls.

use std::rc::Rc;

use super::launch::{LaunchNames, ReductionArgs};
use crate::back::c::embed::wrapper_symbol;
use crate::back::c::expr::{Access, Scope};
use crate::back::c::names;
use crate::back::c::writer::Writer;
use crate::ir::{FieldId, GridId, Region};
use crate::kir::names::Namer;
use crate::kir::plan::Lowered;
use crate::kir::plan::{ArgSource, HostPlan, Launch, FOLD_THRESHOLD, MAX_FOLD_BLOCKS};
use crate::kir::plan::{MAX_GPU_AXIS_POINTS, MAX_GPU_GRID_POINTS};
use crate::kir::Module;

impl Writer<'_> {
    /// `struct Buffers`: every field's time levels (rotated by swapping), and
    /// each reduction's partials and result, all on the device.
    pub(super) fn device_buffers(&mut self, plan: &HostPlan) {
        let p = self.program;
        self.line("/* The device buffers of one run (the wrapper frees them whatever happens). */");
        self.open("struct Buffers {");
        for (f, field) in p.fields.iter().enumerate() {
            self.line(&format!(
                "{} *{}[{}]; /* time levels, oldest first */",
                names::c_type(field.ty),
                self.names.field(f),
                field.levels()
            ));
        }
        for (r, reduction) in plan.reductions.iter().enumerate() {
            let ty = names::c_type(reduction.ty);
            let name = self.names.reduction(r);
            self.line(&format!("{ty} *{name}_partials; /* one per block */"));
            self.line(&format!("{ty} *{name}_result;"));
        }
        if let Some(tile) = &plan.time_tile {
            for f in &tile.staged {
                let field = &p.fields[f.0];
                self.line(&format!(
                    "{} *{}[{}]; /* {}: what the time-tiled launch writes, swapped with the levels after it */",
                    names::c_type(field.ty),
                    shadow(&self.names.field(f.0)),
                    field.levels(),
                    field.name
                ));
            }
        }
        self.close("};");
    }

    /// `static int run(...)`: checks, allocations, uploads, the iterate, the
    /// download of every field a kernel writes.
    pub(super) fn run_on_device(&mut self, region: &Region, lowered: &Lowered) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (module, plan) = (&lowered.module, &lowered.plan);
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
        let (dev, place) = (local.fresh("dev"), local.fresh("where"));
        let (line, _) = p.source.line_col(region.span.start as usize);
        let scope = Scope {
            access: Access::Interior,
            locals: &[],
        };

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
        self.grid_size_checks();
        self.gpu_size_checks(plan.wide_indices, &place);
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

        // Launch geometry: fixed for the run, computed once.
        let mut launch_names: Vec<(usize, LaunchNames)> = Vec::new();
        let mut geometry = |w: &mut Writer<'_>, launch: &Launch, local: &mut Namer| {
            let key = launch as *const Launch as usize;
            let names = w.launch_geometry(module, launch, local, &place);
            launch_names.push((key, names));
        };
        self.line(
            "/* Blocks of every launch over its points (the sizes are fixed for the run). */",
        );
        match &plan.time_tile {
            // The per-stencil kernels are not launched when the run time-tiles.
            Some(tile) => geometry(self, &tile.launch, &mut local),
            None => {
                for launch in plan.stencils.iter().flatten() {
                    geometry(self, launch, &mut local);
                }
            }
        }
        if let Some(fused) = &plan.fused {
            geometry(self, &fused.launch, &mut local);
        }
        for reduction in &plan.reductions {
            for (_, part) in &reduction.parts {
                geometry(self, part, &mut local);
            }
        }
        // Launches over points have their geometry; the fold and final passes
        // of reductions have none (their grids are given).
        let geometry_of = |launch: &Launch| -> Option<&LaunchNames> {
            let key = launch as *const Launch as usize;
            launch_names
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, names)| names)
        };
        let names_of = |launch: &Launch| -> &LaunchNames {
            geometry_of(launch).expect("every launch with points has its geometry")
        };

        // Partials: the fused kernel's first, then each part's, then the fold's.
        let mut partials = Vec::new();
        for (r, reduction) in plan.reductions.iter().enumerate() {
            let name = n.reduction(r);
            let total = local.fresh(&format!("{name}_partial_count"));
            let fold = local.fresh(&format!("{name}_fold_blocks"));
            self.line(&format!(
                "/* {}: one partial per block of its kernels, folded when there are more than {FOLD_THRESHOLD} */",
                reduction.name
            ));
            self.line(&format!("long {total} = 0;"));
            match &plan.fused {
                Some(fused) if fused.reductions.contains(&r) => {
                    let count = &names_of(&fused.launch).count;
                    self.line(&format!("{total} += {count};"));
                }
                _ => {}
            }
            let mut offsets = Vec::new();
            for (_, part) in &reduction.parts {
                let offset = local.fresh(&format!("{name}_offset"));
                let count = &names_of(part).count;
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
            partials.push((total, fold, offsets));
        }

        // Allocations and uploads.
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
        if let Some(tile) = &plan.time_tile {
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
        for (r, reduction) in plan.reductions.iter().enumerate() {
            let ty = names::c_type(reduction.ty);
            let name = n.reduction(r);
            let (total, fold, _) = &partials[r];
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

        let Some(iterate) = &p.iterate else {
            self.line("return 0;");
            self.close("}");
            return;
        };
        let (max_iters, every) = (local.fresh("max_iters"), local.fresh("check_every"));
        let (iter, due, stop) = (local.fresh("iter"), local.fresh("due"), local.fresh("stop"));
        for (r, reduction) in plan.reductions.iter().enumerate() {
            let zero = names::zero(reduction.ty);
            self.line(&format!(
                "{} {} = {zero};",
                names::c_type(reduction.ty),
                n.reduction(r)
            ));
        }
        let max = self.expr(&iterate.max_iters, scope);
        self.line(&format!("const long {max_iters} = {max};"));
        if let Some(check) = &iterate.check {
            let value = self.expr(&check.every, scope);
            self.line(&format!("const long {every} = {value};"));
            self.line(&format!("if ({every} < 1) return 1;"));
        }
        let args = |w: &mut Writer<'_>, launch: &Launch, grid: &str, reduction: ReductionArgs| {
            w.launch_call(
                module,
                launch,
                geometry_of(launch),
                grid,
                reduction,
                "1",
                &dev,
                &place,
            )
        };
        let (done, steps) = (local.fresh("done"), local.fresh("steps"));
        if let Some(tile) = &plan.time_tile {
            // As `exec::host_plan::run` does with the plan's time tile: one
            // launch advances up to `steps` iterations (never past a checked
            // one), its levels swap with their shadows, then each iteration it
            // advanced has its reductions and check when due, and rotates.
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
            let grid = names_of(&tile.launch).grid.clone();
            self.launch_call(
                module,
                &tile.launch,
                geometry_of(&tile.launch),
                &grid,
                None,
                &format!("(int){steps}"),
                &dev,
                &place,
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
        } else {
            self.open(&format!(
                "for (long {iter} = 1; {iter} <= {max_iters}; {iter}++) {{"
            ));
        }
        let due_when = match &iterate.check {
            Some(_) => format!("{iter} % {every} == 0"),
            // Without a check only the last value can be observed.
            None => format!("{iter} == {max_iters}"),
        };
        // Whether this iteration's reductions (and check) are due.
        let needs_due = !plan.reductions.is_empty() || iterate.check.is_some();
        if needs_due {
            self.line(&format!("const int {due} = {due_when};"));
        }
        let untiled = if plan.time_tile.is_some() {
            &[][..]
        } else {
            &plan.stencils[..]
        };
        for (s, launches) in untiled.iter().enumerate() {
            for (k, launch) in launches.iter().enumerate() {
                let fused = plan
                    .fused
                    .as_ref()
                    .filter(|f| f.stencil == s && k + 1 == launches.len());
                match fused {
                    Some(fused) => {
                        self.line(
                            "/* the check's reductions ride in this kernel when it is due */",
                        );
                        self.open(&format!("if ({due}) {{"));
                        let grid = names_of(&fused.launch).grid.clone();
                        args(self, &fused.launch, &grid, None);
                        self.close_open("} else {");
                        let grid = names_of(launch).grid.clone();
                        args(self, launch, &grid, None);
                        self.close("}");
                    }
                    None => {
                        let grid = names_of(launch).grid.clone();
                        args(self, launch, &grid, None);
                    }
                }
            }
        }
        if !plan.reductions.is_empty() {
            self.open(&format!("if ({due}) {{"));
            for (r, reduction) in plan.reductions.iter().enumerate() {
                let (total, fold, offsets) = &partials[r];
                let name = n.reduction(r);
                let ty = names::c_type(reduction.ty);
                self.line(&format!(
                    "/* {}: its parts' partials, folded, read back */",
                    reduction.name
                ));
                for ((_, part), offset) in reduction.parts.iter().zip(offsets) {
                    let grid = names_of(part).grid.clone();
                    args(self, part, &grid, Some((offset, total)));
                }
                self.open(&format!("if ({fold} > 0) {{"));
                let fold_grid = format!("dim3((unsigned){fold}, 1, 1)");
                args(self, &reduction.fold, &fold_grid, Some(("0", total)));
                args(
                    self,
                    &reduction.finish,
                    "dim3(1, 1, 1)",
                    Some((total, fold)),
                );
                self.close_open("} else {");
                args(self, &reduction.finish, "dim3(1, 1, 1)", Some(("0", total)));
                self.close("}");
                self.line(&format!(
                    "STENCILC_CUDA({place}, cudaMemcpy(&{name}, {dev}->{name}_result, sizeof({ty}), cudaMemcpyDeviceToHost));"
                ));
            }
            self.close("}");
        }
        if let Some(check) = &iterate.check {
            let cond = self.expr(&check.cond, scope);
            let declared = if plan.time_tile.is_some() {
                ""
            } else {
                "const int "
            };
            self.line(&format!("{declared}{stop} = {due} && {cond} != 0;"));
        }
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
        if iterate.check.is_some() {
            self.line(&format!("if ({stop}) break;"));
        }
        self.close("}");
        if plan.time_tile.is_some() {
            if iterate.check.is_some() {
                self.line(&format!("if ({stop}) break;"));
            }
            self.line(&format!("{done} += {steps};"));
            self.close("}");
        }
        self.line(&format!("STENCILC_CUDA({place}, cudaDeviceSynchronize());"));
        for (f, field) in p.fields.iter().enumerate() {
            if !written_by_a_kernel(module, plan, FieldId(f)) {
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
        self.line("return 0;");
        self.close("}");
    }

    /// The kernels index with 32-bit `int` coordinates (and, unless `wide`,
    /// flattened indices): larger grids are refused with status 5.
    fn gpu_size_checks(&mut self, wide: bool, place: &str) {
        let p = self.program;
        for (g, grid) in p.grids.iter().enumerate() {
            let sizes: Vec<String> = (0..grid.rank())
                .map(|a| self.names.grid_size(GridId(g), a))
                .collect();
            let mut tests: Vec<String> = sizes
                .iter()
                .map(|s| format!("{s} > {MAX_GPU_AXIS_POINTS}L"))
                .collect();
            if !wide {
                // Innermost first, by division, so that the test cannot overflow.
                let mut inner: Vec<&str> = Vec::new();
                for s in sizes.iter().rev() {
                    tests.push(match inner.as_slice() {
                        [] => format!("{s} > {MAX_GPU_GRID_POINTS}L"),
                        [one] => format!("{s} > {MAX_GPU_GRID_POINTS}L / {one}"),
                        many => format!("{s} > {MAX_GPU_GRID_POINTS}L / ({})", many.join(" * ")),
                    });
                    inner.push(s);
                }
            }
            self.line(&format!("if ({}", tests[0]));
            let last = tests.len() - 1;
            for (i, test) in tests.iter().enumerate().skip(1) {
                let end = if i == last { ") {" } else { "" };
                self.line(&format!("        || {test}{end}"));
            }
            if last == 0 {
                let text = self.code.out.trim_end().to_string();
                self.code.out = format!("{text}) {{\n");
            }
            self.code.indent += 1;
            self.message(
                &format!(
                    "stencilc: %s: grid {} is larger than the GPU kernels index (at most \
                 {MAX_GPU_AXIS_POINTS} points along an axis{}); use a smaller grid{}",
                    grid.name,
                    if wide {
                        String::new()
                    } else {
                        format!(" and {MAX_GPU_GRID_POINTS} in all")
                    },
                    if wide {
                        ", or -b affine-c"
                    } else {
                        ", or generate with --index64 (64-bit indices)"
                    }
                ),
                place,
            );
            self.line("return 5;");
            self.close("}");
        }
    }

    /// The function the region's call line calls: runs, then frees every
    /// device buffer whatever happened.
    pub(super) fn gpu_wrapper(
        &mut self,
        region: &Region,
        plan: &HostPlan,
        space: &str,
        extern_c: bool,
    ) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (line, _) = p.source.line_col(region.span.start as usize);
        self.line(&format!(
            "/* Region {} (line {line}) on the GPU: binds its parameters and griddata to the host\n   \
             variables of the same names. Returns 0, 2 if a host array has the wrong size, 3 if out\n   \
             of (host or device) memory, 4 if an access would leave its grid, 5 if a grid is empty\n   \
             or too large for the kernels, 6 if another CUDA call fails (4 to 6 print a line on\n   \
             stderr; the host arrays are left as they were). */",
            region.index
        ));
        if extern_c {
            self.line("extern \"C\"");
        }
        let mut list: Vec<String> = p
            .params
            .iter()
            .enumerate()
            .map(|(i, q)| format!("{} {}", names::c_type(q.ty), n.param(i)))
            .collect();
        let mut args: Vec<String> = (0..p.params.len()).map(|i| n.param(i)).collect();
        for (f, field) in p.fields.iter().enumerate() {
            let (name, bytes) = (n.field(f), n.field_temp("bytes", f));
            list.push(format!("{} *{name}", names::c_type(field.ty)));
            list.push(format!("size_t {bytes}"));
            args.push(name);
            args.push(bytes);
        }
        self.function_head(&format!("int {}", wrapper_symbol(p)), &list.join(", "));
        self.open("{");
        let mut local = Namer::new();
        for name in list
            .iter()
            .filter_map(|decl| decl.rsplit([' ', '*']).next())
        {
            local.take(name);
        }
        let (dev, status) = (local.fresh("buffers"), local.fresh("status"));
        self.line(&format!("{space}::Buffers {dev};"));
        self.line(&format!("memset(&{dev}, 0, sizeof {dev});"));
        args.push(format!("&{dev}"));
        self.line(&format!(
            "const int {status} = {space}::run({});",
            args.join(", ")
        ));
        self.line("/* cudaFree(NULL) does nothing: free all, allocated or not */");
        let mut frees = Vec::new();
        for (f, field) in p.fields.iter().enumerate() {
            for l in 0..field.levels() {
                frees.push(format!("cudaFree({dev}.{}[{l}]);", n.field(f)));
            }
        }
        if let Some(tile) = &plan.time_tile {
            for f in &tile.staged {
                let name = shadow(&n.field(f.0));
                for l in 0..p.fields[f.0].levels() {
                    frees.push(format!("cudaFree({dev}.{name}[{l}]);"));
                }
            }
        }
        if let Some(iterate) = &p.iterate {
            for r in 0..iterate.reductions.len() {
                let name = n.reduction(r);
                frees.push(format!("cudaFree({dev}.{name}_partials);"));
                frees.push(format!("cudaFree({dev}.{name}_result);"));
            }
        }
        for text in frees {
            self.line(&text);
        }
        self.line(&format!("return {status};"));
        self.close("}");
    }
}

/// Whether some launch of `plan` passes a level of `field` to a parameter its
/// kernel may write.
fn written_by_a_kernel(module: &Module, plan: &HostPlan, field: FieldId) -> bool {
    plan.launches().any(|launch| {
        let kernel = &module.kernels[launch.kernel];
        launch.args.iter().zip(&kernel.params).any(|(arg, param)| {
            matches!(arg, ArgSource::Level(f, _) | ArgSource::NextLevel(f, _) if *f == field)
                && param.kind == crate::kir::ParamKind::Buffer
        })
    })
}

/// The member holding a field's shadow levels (time tiling).
pub(super) fn shadow(field: &str) -> String {
    format!("{field}_shadow")
}

/// The region's function giving a time-tiled launch's step count.
pub(super) const TIME_TILE_STEPS: &str = "time_tile_steps";
