//! The host side of a region on the GPU: the device buffers, the checks of
//! what the kernels can index, and the wrapper the region's call line calls
//! (the run function between them is in `run`).

use std::rc::Rc;

use crate::back::c::embed::wrapper_symbol;
use crate::back::c::names;
use crate::back::c::writer::Writer;
use crate::ir::{FieldId, GridId, Region};
use crate::kir::names::Namer;
use crate::kir::plan::{ArgSource, HostPlan};
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

    /// The kernels index with 32-bit `int` coordinates (and, unless `wide`,
    /// flattened indices): larger grids are refused with status 5.
    pub(super) fn gpu_size_checks(&mut self, wide: bool, place: &str) {
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
pub(super) fn written_by_a_kernel(module: &Module, plan: &HostPlan, field: FieldId) -> bool {
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
