//! The march function (`<program>_march`, see the parent module), phase by
//! phase: the signature and sizes, a thread's rings, a tile's extent and
//! strides, and per round and step the planes it reads and writes and the
//! points it computes.
//!
//! Every name is a fixed temporary of the program's C names, so each phase
//! names what it prints without being handed the names of the others.

use std::rc::Rc;

use crate::analysis::tile::{CpuTiling, MarchShape, TileShape};
use crate::back::c::names;
use crate::back::c::uses::Uses;
use crate::back::c::writer::{MarchView, Writer};

impl Writer<'_> {
    /// `static int <program>_march(..., msteps, scratch, src, dst)`: `msteps`
    /// (odd) iterations from the level-`read` array `src` into `dst`, tile by
    /// tile of the inner axes, each marching along axis 0. Returns 3 when a
    /// ring cannot be allocated.
    pub(super) fn march_function(&mut self, march: &MarchShape) {
        let n = Rc::clone(&self.names);
        let (shape, tiling) = self.tiling.clone().expect("a time tiling");
        let uses = self.sweep_uses();
        let [round, stage, msteps] = ["wave", "stage", "msteps"].map(|role| n.temp(role));
        self.march_prologue(march, &shape, &tiling, &uses);
        self.march_sizes(march, &shape, &tiling);
        self.march_thread_rings(march);
        self.march_tile_extent(march, &shape, &tiling);
        self.march_prefetch_shares(shape.rank);
        let (s_lo0, s_hi0) = (n.axis_temp("s_lo", 0), n.axis_temp("s_hi", 0));
        let lag_text = |what: &str| match march.lag() {
            0 => String::new(),
            1 => format!(" + ({what})"),
            l => format!(" + ({what}) * {l}"),
        };
        self.open(&format!(
            "for (long {round} = {}; {round} <= {s_hi0}{}; {round}++) {{",
            march_below_text(march, &s_lo0),
            lag_text(&format!("{msteps} - 1"))
        ));
        self.open(&format!(
            "for (long {stage} = 1; {stage} <= {msteps}; {stage}++) {{"
        ));
        self.march_step_plane(march);
        self.march_step_inputs(march, &shape);
        self.march_step_points(march, &shape);
        self.close("}");
        self.close("}");
        self.close("}");
        self.close("}");
        self.mark_unused_sizes(&uses);
        self.line(&format!("return {} ? 3 : 0;", n.temp("failed")));
        self.close("}");
    }

    /// What the march does in a comment, its head, and the strides, sizes
    /// and subset bounds its steps read.
    fn march_prologue(
        &mut self,
        march: &MarchShape,
        shape: &TileShape,
        tiling: &CpuTiling,
        uses: &Uses,
    ) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let rank = shape.rank;
        let field = march.field;
        let ty = names::c_type(p.fields[field.0].ty);
        let mut params = self.sweep_signature_head(uses);
        let (msteps, scratch) = (n.temp("msteps"), n.temp("scratch"));
        let (src, dst) = (
            self.level_name("in", field, march.read),
            self.level_name("in", field, march.write),
        );
        params.push_str(&format!(
            "long {msteps}, sdsl_scratch *{scratch}, const {ty} *SDSL_RESTRICT {src}, \
             {ty} *SDSL_RESTRICT {dst}"
        ));
        let k = march.ring_planes();
        let tiles: Vec<String> = (1..rank).map(|a| tiling.tile[a].to_string()).collect();
        self.line(&format!(
            "/* {msteps} (odd) iterations of {} from {src} into {dst}: per tile of {} points \
             (axes 1-{}), a march along\n   axis 0; step 1 reads {src}, the last writes {dst}, \
             each step between keeps its last {k} planes in a ring. */",
            p.name,
            tiles.join(" x "),
            rank - 1
        ));
        self.function_head(&format!("static int {}", names::march_symbol(p)), &params);
        self.open("{");
        self.sizes_read.clear();
        self.strides(uses);
        for a in 1..rank {
            self.read_size(shape.grid, a);
        }
        self.march_subset_bounds();
    }

    /// Before the threads start: the tiles per axis and in all, the points
    /// and bytes of a plane of a ring, and the scratch reserved.
    fn march_sizes(&mut self, march: &MarchShape, shape: &TileShape, tiling: &CpuTiling) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let rank = shape.rank;
        let [msteps, ntiles, failed, plane_points, plane_bytes, plane_floats] = [
            "msteps",
            "ntiles",
            "failed",
            "plane_points",
            "plane_bytes",
            "plane_floats",
        ]
        .map(|role| n.temp(role));
        let size = |a: usize| n.grid_size(shape.grid, a);
        let counts: Vec<String> = (1..rank)
            .map(|a| {
                format!(
                    "{} = ({} + {}) / {}",
                    n.axis_temp("tn", a),
                    size(a),
                    tiling.tile[a] - 1,
                    tiling.tile[a]
                )
            })
            .collect();
        self.line(&format!("const long {};", counts.join(", ")));
        let product: Vec<String> = (1..rank).map(|a| n.axis_temp("tn", a)).collect();
        self.line(&format!("const long {ntiles} = {};", product.join(" * ")));
        let grown = |a: usize| {
            let halo = march.reach[a].0 + march.reach[a].1;
            format!(
                "sdsl_min({} + ({msteps} - 1) * {halo}, {})",
                tiling.tile[a],
                size(a)
            )
        };
        let extent: Vec<String> = (1..rank).map(grown).collect();
        self.line(&format!(
            "/* a plane of a ring: the tile grown by the reach of {msteps} - 1 steps */"
        ));
        self.line(&format!(
            "const long {plane_points} = {};",
            extent.join(" * ")
        ));
        let bytes = p.fields[march.field.0].ty.size_bytes();
        self.line(&format!(
            "const long {plane_bytes} = ({plane_points} * {bytes} + 63) / 64 * 64, \
             {plane_floats} = {plane_bytes} / {bytes};"
        ));
        self.line(&format!("int {failed} = 0;"));
        self.scratch_reserve();
    }

    /// The parallel region's start: the thread's rings (`failed` set where
    /// they cannot be had), and the tile loop, which a thread without rings
    /// skips.
    fn march_thread_rings(&mut self, march: &MarchShape) {
        let n = Rc::clone(&self.names);
        let [msteps, scratch, ntiles, tile, failed, plane_bytes, ring, me, broken] = [
            "msteps",
            "scratch",
            "ntiles",
            "tile",
            "failed",
            "plane_bytes",
            "rings",
            "me",
            "broken",
        ]
        .map(|role| n.temp(role));
        let k = march.ring_planes();
        let parallel = self.omp_parallel("");
        self.line(&parallel);
        self.open("{");
        self.line("#ifdef _OPENMP");
        self.line(&format!("const long {me} = omp_get_thread_num();"));
        self.line("#else");
        self.line(&format!("const long {me} = 0;"));
        self.line("#endif");
        self.line(&format!(
            "char *{ring} = sdsl_scratch_block({scratch}, {me}, (size_t)(({msteps} - 1) * {k} * {plane_bytes} + 64));"
        ));
        self.line(&format!("const int {broken} = {ring} == NULL;"));
        self.open(&format!("if ({broken}) {{"));
        self.line("#pragma omp atomic write");
        self.line(&format!("{failed} = 1;"));
        self.close("}");
        self.line("#pragma omp for schedule(static)");
        self.open(&format!(
            "for (long {tile} = 0; {tile} < {ntiles}; {tile}++) {{"
        ));
        self.line(&format!("if ({broken}) continue;"));
    }

    /// In the tile loop: the tile's coordinates, its centre and the extent
    /// its steps compute per inner axis, the rings' strides, and whether the
    /// rings hold points outside the subset (`fill`).
    fn march_tile_extent(&mut self, march: &MarchShape, shape: &TileShape, tiling: &CpuTiling) {
        let n = Rc::clone(&self.names);
        let rank = shape.rank;
        let [msteps, tile, fill] = ["msteps", "tile", "fill"].map(|role| n.temp(role));
        let size = |a: usize| n.grid_size(shape.grid, a);
        let mut index = Vec::new();
        for a in 1..rank {
            let inner: Vec<String> = (a + 1..rank).map(|b| n.axis_temp("tn", b)).collect();
            let quotient = match inner.as_slice() {
                [] => tile.clone(),
                [one] => format!("{tile} / {one}"),
                _ => format!("{tile} / ({})", inner.join(" * ")),
            };
            index.push(if a == 1 {
                format!("{} = {quotient}", n.axis_temp("ti", a))
            } else {
                format!(
                    "{} = {quotient} % {}",
                    n.axis_temp("ti", a),
                    n.axis_temp("tn", a)
                )
            });
        }
        self.line(&format!("const long {};", index.join(", ")));
        let mut sticks_out = Vec::new();
        for a in 1..rank {
            let [c_lo, c_hi, w_lo, w_hi, s_lo, s_hi] =
                ["c_lo", "c_hi", "w_lo", "w_hi", "s_lo", "s_hi"].map(|role| n.axis_temp(role, a));
            let t = tiling.tile[a];
            self.line(&format!(
                "const long {c_lo} = {} * {t}, {c_hi} = sdsl_min({c_lo} + {}, {} - 1);",
                n.axis_temp("ti", a),
                t - 1,
                size(a)
            ));
            let (below, above) = march.reach[a];
            self.line(&format!(
                "const long {w_lo} = sdsl_max({c_lo} - ({msteps} - 1) * {below}, 0), \
                 {w_hi} = sdsl_min({c_hi} + ({msteps} - 1) * {above}, {} - 1);",
                size(a)
            ));
            sticks_out.push(format!("{w_lo} < {s_lo} || {w_hi} > {s_hi}"));
        }
        for a in (1..rank - 1).rev() {
            let next = format!(
                "{} - {} + 1",
                n.axis_temp("w_hi", a + 1),
                n.axis_temp("w_lo", a + 1)
            );
            let value = if a + 2 == rank {
                next
            } else {
                format!("({next}) * {}", n.axis_temp("w_s", a + 1))
            };
            self.line(&format!(
                "const long {} = {value}; /* a ring's stride */",
                n.axis_temp("w_s", a)
            ));
        }
        self.line(&format!(
            "const int {fill} = {}; /* the rings hold points outside the subset */",
            sticks_out.join(" || ")
        ));
    }

    /// In a step: the plane it computes, whether it is the first or last
    /// step, and for a plane outside the subset along axis 0 only the copy
    /// the next step reads, then the next step.
    fn march_step_plane(&mut self, march: &MarchShape) {
        let n = Rc::clone(&self.names);
        let [round, stage, plane, msteps, first, last] =
            ["wave", "stage", "plane", "msteps", "first", "last"].map(|role| n.temp(role));
        let (s_lo0, s_hi0) = (n.axis_temp("s_lo", 0), n.axis_temp("s_hi", 0));
        let lagged = match march.lag() {
            0 => round.clone(),
            1 => format!("{round} - ({stage} - 1)"),
            l => format!("{round} - ({stage} - 1) * {l}"),
        };
        self.line(&format!("const long {plane} = {lagged};"));
        self.line(&format!(
            "const int {first} = {stage} == 1, {last} = {stage} == {msteps};"
        ));
        // Planes outside the subset along axis 0 that the next step reads.
        self.open(&format!("if ({plane} < {s_lo0} || {plane} > {s_hi0}) {{"));
        let above_text = match march.reach[0].1 {
            0 => s_hi0.clone(),
            a => format!("{s_hi0} + {a}"),
        };
        self.open(&format!(
            "if (!{last} && {plane} >= {} && {plane} <= {above_text}) {{",
            march_below_text(march, &s_lo0)
        ));
        let to = self.march_ring_plane(
            march,
            &format!("{stage} - 1"),
            &format!("{plane} % {}", march.ring_planes()),
        );
        self.march_fill(march, self.tiling_rank(), &to, true);
        self.close("}");
        self.line("continue;");
        self.close("}");
    }

    /// The rank of the tiled grid.
    fn tiling_rank(&self) -> usize {
        self.tiling.as_ref().expect("a time tiling").0.rank
    }

    /// In a step: the planes it reads (from the grid in step 1, else from
    /// the ring of the step before), the plane it writes (into the grid in
    /// the last step, else into its ring), and the strides and origins of
    /// both.
    fn march_step_inputs(&mut self, march: &MarchShape, shape: &TileShape) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (rank, grid, field) = (shape.rank, shape.grid, march.field);
        let ty = names::c_type(p.fields[field.0].ty);
        let [stage, plane, prev, first, last, plane_floats] =
            ["stage", "plane", "prev", "first", "last", "plane_floats"].map(|role| n.temp(role));
        let (src, dst) = (
            self.level_name("in", field, march.read),
            self.level_name("in", field, march.write),
        );
        let k = march.ring_planes();
        let below0 = march.reach[0].0;
        let time_lo = p.fields[field.0].time_lo;
        let planes = self.names.level_temp("z", field, march.read, time_lo);
        self.line(&format!(
            "const {ty} *{prev} = {};",
            self.march_ring_plane(march, &format!("{stage} > 1 ? {stage} - 2 : 0"), "0")
        ));
        let g_s0 = n.grid_stride(grid, 0);
        let mut plane_list = Vec::new();
        for dz in 0..k {
            let offset = dz as i64 - below0 as i64;
            let at = match offset {
                0 => plane.clone(),
                o if o < 0 => format!("({plane} - {})", -o),
                o => format!("({plane} + {o})"),
            };
            let from_grid = format!("{src} + {at} * {g_s0}");
            plane_list.push(format!(
                "{first} ? {from_grid} : {prev} + {at} % {k} * {plane_floats}"
            ));
        }
        self.open(&format!("const {ty} *SDSL_RESTRICT {planes}[{k}] = {{"));
        for (i, entry) in plane_list.iter().enumerate() {
            let comma = if i + 1 < plane_list.len() { "," } else { "" };
            self.line(&format!("{entry}{comma}"));
        }
        self.close("};");
        let written = n.level(field, march.write);
        self.line(&format!(
            "{ty} *SDSL_RESTRICT {written} = {last} ? {dst} + {plane} * {g_s0} : {};",
            self.march_ring_plane(march, &format!("{stage} - 1"), &format!("{plane} % {k}"))
        ));
        for (role_s, role_o, flag) in [("src_s", "src_o", &first), ("dst_s", "dst_o", &last)] {
            let mut items = Vec::new();
            for a in 1..rank {
                if a + 1 < rank {
                    items.push(format!(
                        "{} = {flag} ? {} : {}",
                        n.axis_temp(role_s, a),
                        n.grid_stride(grid, a),
                        n.axis_temp("w_s", a)
                    ));
                }
                items.push(format!(
                    "{} = {flag} ? 0 : {}",
                    n.axis_temp(role_o, a),
                    n.axis_temp("w_lo", a)
                ));
            }
            self.line(&format!("const long {};", items.join(", ")));
        }
        self.march_prefetch_slices(march, rank);
    }

    /// In a step: its points (the plane, within the tile grown by the reach
    /// of the steps after it) through the stencil's loop nest, then the
    /// points of the ring outside the subset.
    fn march_step_points(&mut self, march: &MarchShape, shape: &TileShape) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let rank = shape.rank;
        let [msteps, stage, plane, tleft, last, fill] =
            ["msteps", "stage", "plane", "tleft", "last", "fill"].map(|role| n.temp(role));
        self.line(&format!("const long {tleft} = {msteps} - {stage};"));
        let mut clip = vec![(Some(plane.clone()), Some(plane.clone()))];
        for a in 1..rank {
            let (below, above) = march.reach[a];
            let grow = |r: u64| match r {
                0 => String::new(),
                1 => format!(" {{}} {tleft}"),
                r => format!(" {{}} {tleft} * {r}"),
            };
            let lo = format!(
                "{}{}",
                n.axis_temp("c_lo", a),
                grow(below).replace("{}", "-")
            );
            let hi = format!(
                "{}{}",
                n.axis_temp("c_hi", a),
                grow(above).replace("{}", "+")
            );
            clip.push((Some(lo), Some(hi)));
        }
        let part = &p.iterate.as_ref().expect("an iterate").stencils[0].parts[0];
        self.row_prefetch = self.march_prefetches(march, rank);
        self.march = Some(MarchView {
            field: march.field,
            read: march.read,
            below: march.reach[0].0,
        });
        self.stencil_part_inside(part, clip);
        self.march = None;
        self.row_prefetch.clear();
        let written = n.level(march.field, march.write);
        self.open(&format!("if (!{last} && {fill}) {{"));
        self.march_fill(march, rank, &written, false);
        self.close("}");
    }

    /// Slot `slot` of the ring of step `step` (both C), as a pointer to the
    /// marching field's scalars.
    fn march_ring_plane(&self, march: &MarchShape, step: &str, slot: &str) -> String {
        let ty = names::c_type(self.program.fields[march.field.0].ty);
        let (ring, plane_bytes) = (self.names.temp("rings"), self.names.temp("plane_bytes"));
        let k = march.ring_planes();
        if slot == "0" {
            format!("({ty} *)({ring} + ({step}) * {k} * {plane_bytes})")
        } else {
            format!("({ty} *)({ring} + (({step}) * {k} + {slot}) * {plane_bytes})")
        }
    }
}

/// `what` less how far the march reads below a plane along axis 0.
fn march_below_text(march: &MarchShape, what: &str) -> String {
    match march.reach[0].0 {
        0 => what.to_string(),
        b => format!("{what} - {b}"),
    }
}
