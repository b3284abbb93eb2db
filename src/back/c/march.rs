//! The march order of a time-tiled sweep in the generated C (`--cpu-order
//! march`, [`crate::analysis::tile::TileOrder::March`]): tiles of the
//! inner axes, each marching along the outermost axis a plane per round.
//!
//! **Why.** The level-by-level and wavefront orders copy a tile's window
//! in and out, and a 3-D wave holds bands of whole planes, which live in L3
//! (`bench/NOTES.md`). A march copies nothing: in each round, step 1
//! computes one plane of its tile straight from the grid's level `read`,
//! each step `t` after it the plane `lag` below step `t - 1`'s from the
//! ring where step `t - 1` keeps its last `ring_planes` planes, and the last
//! step writes its plane into the array of level `write`. The rings of a
//! tile of 32 x 256 points hold about 1 MiB at `T` = 8, so the loop runs
//! from L2 and the grid streams once per sweep.
//!
//! **Out of place.** Step 1 reads only the level-`read` array, the last
//! step writes only the other, so tiles never read what another tile wrote
//! and need no snapshots; but the result of `m` steps lands in the array of
//! level `write` only when `m` is odd. A sweep of `tsteps` therefore runs
//! marches of odd lengths, the last of them followed by single steps where
//! `tsteps` is even or the caller reads both levels after the sweep
//! (`full`: the level below the result must then hold the step before it,
//! which only a single step leaves). The level pointers swap after each
//! march, as after each iteration.
//!
//! **Points outside the subset.** A step's ring holds every point of its
//! tile's extent that the next step reads. Those in the stencil's subset it
//! computes; the others keep, in every step, the value they have in the
//! array holding that step's level (`write`'s for odd steps, `read`'s for
//! even ones), which no step writes, so the tiles on the subset's edges copy
//! them from there: the planes beyond the subset along axis 0, and the rows
//! and columns beyond it within a plane.
//!
//! **Reads outside the grid.** A march never resolves a boundary mode: its
//! sweep checks first that the subset, grown by the reach, stays inside the
//! grid, and otherwise runs its steps untiled with the stencil's own
//! function (bit-identical either way).

mod tile_march;

use std::rc::Rc;

use crate::analysis::tile::{march_shape, MarchShape};
use crate::back::c::expr::Scope;
use crate::back::c::names;
use crate::back::c::uses::Uses;
use crate::back::c::writer::Writer;

impl Writer<'_> {
    /// `const long src_q = ...;` and `dst_q`: the point's index in the plane
    /// read and in the plane written, relative to each one's origin.
    pub(super) fn march_point_start(&mut self, rank: usize) {
        let n = Rc::clone(&self.names);
        let (src, dst) = self.march_points;
        for (used, role, stride, origin) in [
            (src, "src_q", "src_s", "src_o"),
            (dst, "dst_q", "dst_s", "dst_o"),
        ] {
            if !used {
                continue;
            }
            let terms: Vec<String> = (1..rank)
                .map(|a| {
                    let i = n.axis_var(a);
                    let o = n.axis_temp(origin, a);
                    if a + 1 == rank {
                        format!("{i} - {o}")
                    } else {
                        format!("({i} - {o}) * {}", n.axis_temp(stride, a))
                    }
                })
                .collect();
            self.line(&format!(
                "const long {} = {};",
                n.temp(role),
                terms.join(" + ")
            ));
        }
    }

    /// The sweep of a march: checks that the subset's reads stay inside the
    /// grid (else runs the steps untiled), then splits `tsteps` into
    /// marches of odd lengths and single steps (see the module doc). Prints
    /// `<program>_march` first.
    pub(super) fn march_sweep_function(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let march = march_shape(p, &shape).expect("the plan marches only where it applies");
        self.line("#ifdef _OPENMP");
        self.line("#include <omp.h>");
        self.line("#endif");
        self.prefetch_macro();
        self.scratch_type();
        self.march_function(&march);
        self.blank();
        let uses = self.sweep_uses();
        let mut params = self.sweep_signature_head(&uses);
        let (tsteps, full, scratch) = (n.temp("tsteps"), n.temp("full"), n.temp("scratch"));
        let ty = names::c_type(p.fields[march.field.0].ty);
        let (read_in, write_in) = (
            self.level_name("in", march.field, march.read),
            self.level_name("in", march.field, march.write),
        );
        params.push_str(&format!(
            "long {tsteps}, int {full}, sdsl_scratch *{scratch}, {ty} *{read_in}, {ty} *{write_in}"
        ));
        self.line(&format!(
            "/* {tsteps} iterations of {}: marches of odd lengths, then single steps where \
             {tsteps} is even or\n   every level is read after the sweep ({full}); untiled \
             where the subset's reads leave the grid. */",
            p.name
        ));
        self.helpers
            .insert(crate::back::c::boundary::Helper::MinMax);
        self.function_head(&format!("static int {}", names::sweep_symbol(p)), &params);
        self.open("{");
        self.march_subset_bounds();
        let rank = shape.rank;
        let mut outside = Vec::new();
        for a in 0..rank {
            let (lo, hi) = (n.axis_temp("s_lo", a), n.axis_temp("s_hi", a));
            let size = n.grid_size(shape.grid, a);
            let (below, above) = march.reach[a];
            outside.push(format!("{lo} > {hi}"));
            outside.push(if below == 0 {
                format!("{lo} < 0")
            } else {
                format!("{lo} < {below}")
            });
            outside.push(if above == 0 {
                format!("{hi} > {size} - 1")
            } else {
                format!("{hi} > {size} - {}", above + 1)
            });
        }
        let (src, dst, oldest) = (n.temp("src"), n.temp("dst"), n.temp("oldest"));
        self.line(&format!("{ty} *{src} = {read_in}, *{dst} = {write_in};"));
        self.open(&format!("if ({}) {{", outside.join(" || ")));
        self.line("/* the subset is empty or reads outside the grid: untiled steps */");
        let stencil = &p.iterate.as_ref().expect("an iterate").stencils[0];
        let stencil_uses = Uses::of_stencil(p, stencil);
        let tstep = n.temp("tstep");
        self.open(&format!(
            "for (long {tstep} = 0; {tstep} < {tsteps}; {tstep}++) {{"
        ));
        self.line(&format!(
            "const {ty} *{} = {src};",
            n.level(march.field, march.read)
        ));
        self.line(&format!(
            "{ty} *{} = {dst};",
            n.level(march.field, march.write)
        ));
        self.line(&format!(
            "{}({});",
            n.stencil(0),
            self.arguments(&stencil_uses)
        ));
        self.line(&format!(
            "{{ {ty} *{oldest} = {src}; {src} = {dst}; {dst} = {oldest}; }}"
        ));
        self.close("}");
        self.line("return 0;");
        self.close("}");
        let left = n.temp("left");
        let msteps = n.temp("msteps");
        let mut args = self.arguments(&uses);
        if !args.is_empty() {
            args.push_str(", ");
        }
        args.push_str(&format!("{msteps}, {scratch}, {src}, {dst}"));
        self.open(&format!("for (long {left} = {tsteps}; {left} > 0;) {{"));
        self.line("/* odd, and a single step last when every level is read after the sweep */");
        self.line(&format!("long {msteps} = {left} - ({full} ? 1 : 0);"));
        self.line(&format!("if ({msteps} % 2 == 0) {msteps} -= 1;"));
        self.line(&format!("if ({msteps} < 1) {msteps} = 1;"));
        self.line(&format!(
            "if ({}({args}) != 0) return 3;",
            names::march_symbol(p)
        ));
        self.line(&format!(
            "{{ {ty} *{oldest} = {src}; {src} = {dst}; {dst} = {oldest}; }}"
        ));
        self.line(&format!("{left} -= {msteps};"));
        self.close("}");
        self.line("return 0;");
        self.close("}");
    }

    /// `const long s_lo0 = ..., s_hi0 = ...;`: the bounds of the stencil's
    /// one part, per axis.
    fn march_subset_bounds(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let part = &p.iterate.as_ref().expect("an iterate").stencils[0].parts[0];
        let scope = Scope {
            access: crate::back::c::expr::Access::Interior,
            locals: &[],
        };
        for (a, (lo, hi)) in part.subset.ranges.iter().enumerate() {
            let lo = self.expr(lo, scope);
            let hi = self.expr(hi, scope);
            self.line(&format!(
                "const long {} = {lo}, {} = {hi};",
                n.axis_temp("s_lo", a),
                n.axis_temp("s_hi", a)
            ));
        }
    }

    /// Per tile: how many points of a row of the grid each step of a round
    /// prefetches (`share`: the extent's row over the steps; `out_share`:
    /// the centre's), in whole cache lines.
    fn march_prefetch_shares(&mut self, rank: usize) {
        let n = Rc::clone(&self.names);
        let inner = rank - 1;
        let msteps = n.temp("msteps");
        let line = self.march_line_points();
        let mut shares = Vec::new();
        for (role, lo, hi) in [("share", "w_lo", "w_hi"), ("out_share", "c_lo", "c_hi")] {
            let (lo, hi) = (n.axis_temp(lo, inner), n.axis_temp(hi, inner));
            shares.push(format!(
                "{} = (({hi} - {lo} + {msteps}) / {msteps} + {}) / {line} * {line}",
                n.temp(role),
                line - 1
            ));
        }
        self.line(&format!(
            "const long {}; /* points of a row each step prefetches */",
            shares.join(", ")
        ));
    }

    /// Points of the field per 64-byte cache line.
    fn march_line_points(&self) -> usize {
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        let field = shape.written[0];
        (64 / self.program.fields[field.0].ty.size_bytes()).max(1)
    }

    /// Per step of a round: the slice of a row it prefetches of the grid's
    /// plane that the next round's first step reads new (`ahead_lo`..), and
    /// of the plane the next round's last step writes (`out_lo`..).
    fn march_prefetch_slices(&mut self, march: &MarchShape, rank: usize) {
        let n = Rc::clone(&self.names);
        let inner = rank - 1;
        let [wave, stage, msteps, share, out_share] =
            ["wave", "stage", "msteps", "share", "out_share"].map(|r| n.temp(r));
        let [ahead_lo, ahead_hi, out_lo, out_hi, next_in, next_out] = [
            "ahead_lo", "ahead_hi", "out_lo", "out_hi", "next_in", "next_out",
        ]
        .map(|r| n.temp(r));
        let (w_lo, w_hi) = (n.axis_temp("w_lo", inner), n.axis_temp("w_hi", inner));
        let (c_lo, c_hi) = (n.axis_temp("c_lo", inner), n.axis_temp("c_hi", inner));
        let above0 = march.reach[0].1;
        let lag = march.lag();
        let lagged = match lag {
            0 => String::new(),
            1 => format!(" - ({msteps} - 1)"),
            l => format!(" - ({msteps} - 1) * {l}"),
        };
        self.line(&format!(
            "const long {next_in} = {wave} + {}, {next_out} = {wave}{lagged} + 1;",
            above0 + 1
        ));
        self.line(&format!(
            "const long {ahead_lo} = {w_lo} + ({stage} - 1) * {share}, \
             {ahead_hi} = sdsl_min({ahead_lo} + {share} - 1, {w_hi});"
        ));
        self.line(&format!(
            "const long {out_lo} = {c_lo} + ({stage} - 1) * {out_share}, \
             {out_hi} = sdsl_min({out_lo} + {out_share} - 1, {c_hi});"
        ));
    }

    /// Before each row of a step's nest: its slices of the same row of the
    /// grid's plane the next round's first step reads new, and of the plane
    /// the next round's last step writes. Spread over the round's steps, the
    /// DRAM traffic hides under all of the round's work; issued by the first
    /// step alone, the prefetches stalled it (star3d1r 512³: 41 against 46
    /// ms per iteration, `bench/NOTES.md`, "A march along z").
    fn march_prefetches(&self, march: &MarchShape, rank: usize) -> Vec<String> {
        let n = &self.names;
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        let grid = shape.grid;
        let field = march.field;
        let step = self.march_line_points();
        let (src, dst) = (
            self.level_name("in", field, march.read),
            self.level_name("in", field, march.write),
        );
        let [ahead_lo, ahead_hi, out_lo, out_hi, next_in, next_out] = [
            "ahead_lo", "ahead_hi", "out_lo", "out_hi", "next_in", "next_out",
        ]
        .map(|r| n.temp(r));
        let inner = rank - 1;
        let x = n.axis_var(inner);
        let (row, in_centre) = if rank == 3 {
            let y = n.axis_var(1);
            (
                format!(" + {y} * {}", n.grid_stride(grid, 1)),
                format!(
                    " && {y} >= {} && {y} <= {}",
                    n.axis_temp("c_lo", 1),
                    n.axis_temp("c_hi", 1)
                ),
            )
        } else {
            (String::new(), String::new())
        };
        let g_s0 = n.grid_stride(grid, 0);
        let (s_lo0, s_hi0) = (n.axis_temp("s_lo", 0), n.axis_temp("s_hi", 0));
        let above0 = march.reach[0].1;
        vec![
            format!(
                "if ({next_in} <= {s_hi0} + {above0}) for (long {x} = {ahead_lo}; {x} <= {ahead_hi}; {x} += {step}) SDSL_PREFETCH({src} + {next_in} * {g_s0}{row} + {x}, 0);"
            ),
            format!(
                "if ({next_out} >= {s_lo0} && {next_out} <= {s_hi0}{in_centre}) for (long {x} = {out_lo}; {x} <= {out_hi}; {x} += {step}) SDSL_PREFETCH({dst} + {next_out} * {g_s0}{row} + {x}, 1);"
            ),
        ]
    }

    /// Copies into the ring plane `to` (the step's plane `plane`) the points
    /// of the tile's extent outside the subset from the array holding the
    /// step's level: every point when `whole` (a plane outside the subset
    /// along axis 0), else the rows and then the columns beyond the subset
    /// (loops that are empty for a tile inside it).
    fn march_fill(&mut self, march: &MarchShape, rank: usize, to: &str, whole: bool) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let grid = self.tiling.as_ref().expect("a time tiling").0.grid;
        let field = march.field;
        let ty = names::c_type(p.fields[field.0].ty);
        let [stage, plane, keep, row] = ["stage", "plane", "keep", "row"].map(|r| n.temp(r));
        let (src, dst) = (
            self.level_name("in", field, march.read),
            self.level_name("in", field, march.write),
        );
        self.line(&format!(
            "/* outside the subset: the values of the array holding step {stage}'s level */"
        ));
        self.line(&format!(
            "const {ty} *{keep} = ({stage} % 2 ? {dst} : {src}) + {plane} * {};",
            n.grid_stride(grid, 0)
        ));
        self.line(&format!("{ty} *{row} = {to};"));
        let axis = |role: &'static str, a: usize| n.axis_temp(role, a);
        let x = n.axis_var(rank - 1);
        let inner = rank - 1;
        // `for` over `lo..=hi` of axis `a`, the ranges before and after the
        // subset (or the whole extent).
        let ranges = |a: usize, whole: bool| -> Vec<(String, String)> {
            let (wl, wh, sl, sh) = (
                axis("w_lo", a),
                axis("w_hi", a),
                axis("s_lo", a),
                axis("s_hi", a),
            );
            if whole {
                vec![(wl, wh)]
            } else {
                vec![
                    (wl.clone(), format!("sdsl_min({sl} - 1, {wh})")),
                    (format!("sdsl_max({sh} + 1, {wl})"), wh),
                ]
            }
        };
        let (to_index, from_index) = if rank == 3 {
            let y = n.axis_var(1);
            (
                format!(
                    "({y} - {}) * {} + {x} - {}",
                    axis("w_lo", 1),
                    axis("w_s", 1),
                    axis("w_lo", inner)
                ),
                format!("{y} * {} + {x}", n.grid_stride(grid, 1)),
            )
        } else {
            (format!("{x} - {}", axis("w_lo", inner)), x.clone())
        };
        let copy = format!("{row}[{to_index}] = {keep}[{from_index}];");
        if rank == 2 {
            for (lo, hi) in ranges(inner, whole) {
                self.line(&format!("for (long {x} = {lo}; {x} <= {hi}; {x}++) {copy}"));
            }
            return;
        }
        let y = n.axis_var(1);
        // Rows beyond the subset, whole; then its rows' columns beyond it.
        for (lo, hi) in ranges(1, whole) {
            self.open(&format!("for (long {y} = {lo}; {y} <= {hi}; {y}++) {{"));
            self.line(&format!(
                "for (long {x} = {}; {x} <= {}; {x}++) {copy}",
                axis("w_lo", inner),
                axis("w_hi", inner)
            ));
            self.close("}");
        }
        if whole {
            return;
        }
        for (lo, hi) in ranges(inner, false) {
            self.open(&format!("for (long {x} = {lo}; {x} <= {hi}; {x}++) {{"));
            self.line(&format!(
                "for (long {y} = sdsl_max({}, {}); {y} <= sdsl_min({}, {}); {y}++) {copy}",
                axis("w_lo", 1),
                axis("s_lo", 1),
                axis("w_hi", 1),
                axis("s_hi", 1)
            ));
            self.close("}");
        }
    }
}
