//! The sweep function of time tiling (`<program>_sweep`, see the parent
//! module), phase by phase: the signature, the sizes of the tiles and of a
//! thread's window, a thread's chunk of tile rows and its scratch (window,
//! rings, rows below the chunk), the tile's window bounds and level
//! pointers, and the tile's copies and inner steps in the order asked for.
//!
//! Every name is a fixed temporary of the program's C names, so each phase
//! names what it prints without being handed the names of the others.

use std::rc::Rc;

use crate::analysis::tile::{CpuTiling, TileOrder, TileShape};
use crate::back::c::boundary::Helper;
use crate::back::c::names;
use crate::back::c::snapshot::Snapshot;
use crate::back::c::writer::Writer;

impl Writer<'_> {
    /// `static int <program>_sweep(...)`: `tsteps` iterations of every
    /// stencil, tile by tile (see the module doc). Returns 3 when a window
    /// cannot be allocated.
    pub(in crate::back::c) fn sweep_function(&mut self) {
        let n = Rc::clone(&self.names);
        let (shape, tiling) = self.tiling.clone().expect("a time tiling");
        if tiling.order == TileOrder::March {
            self.march_sweep_function();
            return;
        }
        self.sweep_prologue(&shape, &tiling);
        self.sweep_sizes(&shape, &tiling);
        let parallel = self.omp_parallel("");
        self.line(&parallel);
        self.open("{");
        self.thread_chunk(&shape, &tiling);
        let broken = self.thread_scratch(&shape);
        let [tile, first_row, end_row, per_row] =
            ["tile", "first_row", "end_row", "per_row"].map(|role| n.temp(role));
        if self.chunk_axis().is_some() {
            self.open(&format!("if (!{broken} && {first_row} < {end_row}) {{"));
            self.snapshot_chunk_edges();
            self.close("}");
        }
        self.line("#pragma omp barrier /* no tile writes before every chunk's edges are saved */");
        self.open(&format!(
            "for (long {tile} = {first_row} * {per_row}; !{broken} && {tile} < {end_row} * {per_row}; {tile}++) {{"
        ));
        self.tile_window_bounds(&shape, &tiling);
        self.tile_level_pointers();
        self.tile_body(&shape, &tiling);
        self.close("}");
        self.close("}");
        let unused: Vec<String> = (0..shape.rank)
            .map(|a| format!("(void){};", n.axis_temp("tn", a)))
            .collect();
        self.line(&unused.join(" "));
        self.line(&format!("return {} ? 3 : 0;", n.temp("failed")));
        self.close("}");
    }

    /// The sweep's parameters after the stencils' scalars: the steps, `full`,
    /// the scratch, and every level of every field of the tiles (`const`
    /// where no stencil writes it).
    fn sweep_params(&self, shape: &TileShape) -> String {
        let p = self.program;
        let n = &self.names;
        let mut params = self.sweep_signature_head(&self.sweep_uses());
        params.push_str(&format!(
            "long {}, int {}, sdsl_scratch *{}",
            n.temp("tsteps"),
            n.temp("full"),
            n.temp("scratch")
        ));
        for &(f, lo, hi) in &self.tile_fields(false) {
            let ty = names::c_type(p.fields[f.0].ty);
            let constness = if shape.written.contains(&f) {
                ""
            } else {
                "const "
            };
            for t in lo..=hi {
                params.push_str(&format!(
                    ", {constness}{ty} *{}",
                    self.level_name("in", f, t)
                ));
            }
        }
        params
    }

    /// What the sweep does in a comment, the headers and types it needs,
    /// and its head.
    fn sweep_prologue(&mut self, shape: &TileShape, tiling: &CpuTiling) {
        let p = self.program;
        let params = self.sweep_params(shape);
        self.helpers.insert(Helper::MinMax);
        let tsteps = self.names.temp("tsteps");
        self.line(&format!(
            "/* {tsteps} iterations of every stencil of {}, time-tiled: per tile (centre {}, \
             outermost axis first), a\n   window grown by {tsteps} x the iteration's reach, \
             the inner steps in the window, the centre written back in place. */",
            p.name,
            (0..shape.rank)
                .map(|a| self.tile_centre_text(a))
                .collect::<Vec<_>>()
                .join(" x ")
        ));
        self.line("#ifdef _OPENMP");
        self.line("#include <omp.h>");
        self.line("#endif");
        if tiling.order == TileOrder::Wavefront {
            self.prefetch_macro();
        }
        self.scratch_type();
        self.function_head(&format!("static int {}", names::sweep_symbol(p)), &params);
        self.open("{");
    }

    /// The tile's centre along axis `a` as C: the tile size, or the grid's
    /// size for an axis not tiled.
    fn tile_centre_text(&self, a: usize) -> String {
        let (shape, tiling) = self.tiling.as_ref().expect("a time tiling");
        if shape.whole[a] {
            self.names.grid_size(shape.grid, a)
        } else {
            tiling.tile[a].to_string()
        }
    }

    /// The widest scalar of the fields of the tiles, in bytes.
    fn window_widest(&self, shape: &TileShape) -> usize {
        shape
            .used
            .iter()
            .map(|f| self.program.fields[f.0].ty.size_bytes())
            .max()
            .unwrap_or(8)
    }

    /// Before the threads start: the tiles per axis and in all, the points
    /// and bytes of a level of the window (a band of rows for a streamed
    /// wave), of the rows below a chunk, and the scratch reserved.
    fn sweep_sizes(&mut self, shape: &TileShape, tiling: &CpuTiling) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let [tsteps, ntiles, window_points, level_bytes, failed, below_bytes] = [
            "tsteps",
            "ntiles",
            "window_points",
            "level_bytes",
            "failed",
            "below_bytes",
        ]
        .map(|role| n.temp(role));
        let rank = shape.rank;
        let reach = shape.iteration_reach();
        let size = |a: usize| n.grid_size(shape.grid, a);
        let counts: Vec<String> = (0..rank)
            .map(|a| {
                let tn = n.axis_temp("tn", a);
                if shape.whole[a] {
                    format!("{tn} = 1")
                } else {
                    let t = self.tile_centre_text(a);
                    format!("{tn} = ({} + {}) / {t}", size(a), tiling.tile[a] - 1)
                }
            })
            .collect();
        self.line(&format!("const long {};", counts.join(", ")));
        let product: Vec<String> = (0..rank).map(|a| n.axis_temp("tn", a)).collect();
        self.line(&format!("const long {ntiles} = {};", product.join(" * ")));
        let mut extents: Vec<String> = (0..rank)
            .map(|a| {
                let halo = if shape.whole[a] {
                    0
                } else {
                    reach[a].0 + reach[a].1
                };
                let centre = self.tile_centre_text(a);
                if halo == 0 {
                    format!("sdsl_min({centre}, {})", size(a))
                } else {
                    format!("sdsl_min({centre} + {tsteps} * {halo}, {})", size(a))
                }
            })
            .collect();
        let widest = self.window_widest(shape);
        if tiling.order == TileOrder::Wavefront {
            // A streamed wave holds a band of rows along axis 0, not the window.
            let window_levels: usize = shape.used.iter().map(|f| p.fields[f.0].levels()).sum();
            let mut row_bytes = vec![format!("{}", widest * window_levels)];
            row_bytes.extend(extents[1..].iter().cloned());
            let rows_held = self.wave_band_lines(&row_bytes.join(" * "));
            extents[0] = format!("sdsl_min({rows_held}, {})", extents[0]);
        }
        self.line(&format!(
            "const long {window_points} = {};",
            extents.join(" * ")
        ));
        self.line(&format!(
            "const long {level_bytes} = ({window_points} * {widest} + 63) / 64 * 64; /* a level of the window, in bytes */"
        ));
        if self.has_below() {
            let extent = self.snapshot_extent(Snapshot::Below);
            self.line(&format!(
                "const long {below_bytes} = {}; /* a level of the rows below a chunk, in bytes */",
                aligned_level_bytes(&extent, widest)
            ));
        }
        self.line(&format!("int {failed} = 0;"));
        self.scratch_reserve();
    }

    /// In the parallel region: the thread's number and its chunk, the
    /// contiguous tile rows along the chunk axis it walks in order.
    fn thread_chunk(&mut self, shape: &TileShape, tiling: &CpuTiling) {
        let n = Rc::clone(&self.names);
        let [me, team, first_row, end_row, per_row, ntiles, chunk_lo, chunk_hi] = [
            "me",
            "team",
            "first_row",
            "end_row",
            "per_row",
            "ntiles",
            "chunk_lo",
            "chunk_hi",
        ]
        .map(|role| n.temp(role));
        self.line("#ifdef _OPENMP");
        self.line(&format!(
            "const long {me} = omp_get_thread_num(), {team} = omp_get_num_threads();"
        ));
        self.line("#else");
        self.line(&format!("const long {me} = 0, {team} = 1;"));
        self.line("#endif");
        let chunk_axis = self.chunk_axis();
        let rows_axis = chunk_axis.unwrap_or(0);
        let tn_rows = n.axis_temp("tn", rows_axis);
        self.line(&format!(
            "/* this thread's chunk: tile rows {first_row}..{end_row} along axis {rows_axis}, in order */"
        ));
        self.line(&format!(
            "const long {first_row} = {tn_rows} * {me} / {team}, {end_row} = {tn_rows} * ({me} + 1) / {team};"
        ));
        self.line(&format!("const long {per_row} = {ntiles} / {tn_rows};"));
        if let Some(k) = chunk_axis {
            let t = tiling.tile[k];
            self.line(&format!(
                "const long {chunk_lo} = {first_row} * {t}, {chunk_hi} = sdsl_min({end_row} * {t}, {}) - 1;",
                n.grid_size(shape.grid, k)
            ));
        }
    }

    /// The thread's scratch: the rings' sizes, its block split into the
    /// window, the rings and the rows below the chunk (`failed` set where
    /// it cannot be had), and the snapshots' level pointers into it.
    /// Returns the name of the flag saying the block is missing.
    fn thread_scratch(&mut self, shape: &TileShape) -> String {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let [window, level_bytes, failed, below, below_bytes, me] = [
            "window",
            "level_bytes",
            "failed",
            "below",
            "below_bytes",
            "me",
        ]
        .map(|role| n.temp(role));
        let ring_axes = self.ring_axes();
        let has_below = self.has_below();
        self.ring_sizes(shape, &ring_axes);
        let window_levels: usize = shape.used.iter().map(|f| p.fields[f.0].levels()).sum();
        let snapshot_levels = self.snapshot_levels();
        let slots = snapshot_levels.len();
        let mut buffers = vec![(window, format!("{level_bytes} * {window_levels}"))];
        for &a in &ring_axes {
            buffers.push((
                n.axis_temp("ring", a),
                format!("{} * {slots}", n.axis_temp("ring_bytes", a)),
            ));
        }
        if has_below {
            buffers.push((below.clone(), format!("{below_bytes} * {slots}")));
        }
        let broken = self.scratch_buffers(&me, &buffers);
        self.open(&format!("if ({broken}) {{"));
        self.line("#pragma omp atomic write");
        self.line(&format!("{failed} = 1;"));
        self.close("}");
        for (slot, &(f, t)) in snapshot_levels.iter().enumerate() {
            let ty = names::c_type(p.fields[f.0].ty);
            for &a in &ring_axes {
                let suffix = ["ring0", "ring1", "ring2"][a.min(2)];
                self.line(&format!(
                    "{ty} *{} = ({ty} *)({} + {slot} * {});",
                    self.level_name(suffix, f, t),
                    n.axis_temp("ring", a),
                    n.axis_temp("ring_bytes", a)
                ));
            }
            if has_below {
                self.line(&format!(
                    "{ty} *{} = ({ty} *)({below} + {slot} * {below_bytes});",
                    self.level_name("below", f, t)
                ));
            }
        }
        broken
    }

    /// Per axis with a ring, the rows it holds and the bytes of a level of
    /// it.
    fn ring_sizes(&mut self, shape: &TileShape, ring_axes: &[usize]) {
        let n = Rc::clone(&self.names);
        let (first_row, end_row) = (n.temp("first_row"), n.temp("end_row"));
        let reach = shape.iteration_reach();
        let chunk_axis = self.chunk_axis();
        let widest = self.window_widest(shape);
        for &a in ring_axes {
            // Rows a ring must hold (see `back::c::snapshot`): along the
            // innermost axis the halo, as each tile reads its halo there
            // before it saves its own last rows and the next tile is the next
            // along that axis; along the chunk axis the halo alone too when
            // the chunk is one tile row (the rows above it are all the ring
            // holds); else the halo and a tile.
            let halo = self.halo_text(reach[a].0);
            let (rows, why) = if a + 1 == shape.rank {
                (halo, "the halo")
            } else if chunk_axis == Some(a) {
                (
                    format!(
                        "{halo} + ({end_row} - {first_row} > 1 ? {} : 0)",
                        self.tile_extent(a)
                    ),
                    "the halo, and a tile when the chunk has more than one tile row",
                )
            } else {
                (
                    format!("{halo} + {}", self.tile_extent(a)),
                    "the halo and a tile",
                )
            };
            self.line(&format!(
                "const long {} = {rows}; /* rows of the ring along axis {a}: {why} */",
                n.axis_temp("ring_rows", a),
            ));
            let extent = self.snapshot_extent(Snapshot::Ring(a));
            self.line(&format!(
                "const long {} = {}; /* a level of the ring, in bytes */",
                n.axis_temp("ring_bytes", a),
                aligned_level_bytes(&extent, widest)
            ));
        }
    }

    /// In the tile loop: the tile's coordinates (innermost fastest), its
    /// centre and window per axis, and the window's strides.
    fn tile_window_bounds(&mut self, shape: &TileShape, tiling: &CpuTiling) {
        let n = Rc::clone(&self.names);
        let (tile, tsteps) = (n.temp("tile"), n.temp("tsteps"));
        let rank = shape.rank;
        let size = |a: usize| n.grid_size(shape.grid, a);
        let axis = |role: &'static str, a: usize| n.axis_temp(role, a);
        let mut index = Vec::new();
        for a in 0..rank {
            let inner: Vec<String> = (a + 1..rank).map(|b| axis("tn", b)).collect();
            let quotient = match inner.as_slice() {
                [] => tile.clone(),
                [one] => format!("{tile} / {one}"),
                _ => format!("{tile} / ({})", inner.join(" * ")),
            };
            index.push(if a == 0 {
                format!("{} = {quotient}", axis("ti", a))
            } else {
                format!("{} = {quotient} % {}", axis("ti", a), axis("tn", a))
            });
        }
        self.line(&format!("const long {};", index.join(", ")));
        for (a, reach) in shape.iteration_reach().iter().enumerate() {
            let [c_lo, c_hi, w_lo, w_hi] = ["c_lo", "c_hi", "w_lo", "w_hi"].map(|r| axis(r, a));
            if shape.whole[a] {
                self.line(&format!(
                    "const long {c_lo} = 0, {c_hi} = {} - 1, {w_lo} = 0, {w_hi} = {} - 1;",
                    size(a),
                    size(a)
                ));
                continue;
            }
            let t = tiling.tile[a];
            self.line(&format!(
                "const long {c_lo} = {} * {t}, {c_hi} = sdsl_min({c_lo} + {}, {} - 1);",
                axis("ti", a),
                t - 1,
                size(a)
            ));
            let below = match reach.0 {
                0 => c_lo.clone(),
                1 => format!("sdsl_max({c_lo} - {tsteps}, 0)"),
                r => format!("sdsl_max({c_lo} - {tsteps} * {r}, 0)"),
            };
            let above = match reach.1 {
                0 => c_hi.clone(),
                1 => format!("sdsl_min({c_hi} + {tsteps}, {} - 1)", size(a)),
                r => format!("sdsl_min({c_hi} + {tsteps} * {r}, {} - 1)", size(a)),
            };
            self.line(&format!("const long {w_lo} = {below}, {w_hi} = {above};"));
        }
        for a in (0..rank.saturating_sub(1)).rev() {
            let next = format!("({} - {} + 1)", axis("w_hi", a + 1), axis("w_lo", a + 1));
            let value = if a + 2 == rank {
                next.trim_start_matches('(')
                    .trim_end_matches(')')
                    .to_string()
            } else {
                format!("{next} * {}", n.grid_stride(shape.grid, a + 1))
            };
            self.line(&format!(
                "const long {} = {value}; /* the window's stride */",
                n.grid_stride(shape.grid, a)
            ));
        }
    }

    /// In the tile loop: every level's pointer into the window (`w`), the
    /// written fields' pointers into the grid (`to`), and the rows of the
    /// chunk axis those may be written in.
    fn tile_level_pointers(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (window, level_bytes) = (n.temp("window"), n.temp("level_bytes"));
        let mut slot = 0;
        for &(f, lo, hi) in &self.tile_fields(false) {
            let ty = names::c_type(p.fields[f.0].ty);
            for t in lo..=hi {
                self.line(&format!(
                    "{ty} *{} = ({ty} *)({window} + {slot} * {level_bytes});",
                    self.level_name("w", f, t)
                ));
                slot += 1;
            }
        }
        for &(f, lo, hi) in &self.tile_fields(true) {
            let ty = names::c_type(p.fields[f.0].ty);
            for t in lo..=hi {
                self.line(&format!(
                    "{ty} *{} = {};",
                    self.level_name("to", f, t),
                    self.level_name("in", f, t)
                ));
            }
        }
        if let Some(k) = self.chunk_axis() {
            self.line(&format!(
                "const long {} = sdsl_max({}, {}), {} = sdsl_min({}, {}); /* written fields: rows of this chunk only */",
                n.axis_temp("r_lo", k),
                n.axis_temp("w_lo", k),
                n.temp("chunk_lo"),
                n.axis_temp("r_hi", k),
                n.axis_temp("w_hi", k),
                n.temp("chunk_hi")
            ));
        }
    }

    /// The tile's work in the order asked for: the window in, the inner
    /// steps and the centre out level by level, or as one streamed wave.
    fn tile_body(&mut self, shape: &TileShape, tiling: &CpuTiling) {
        match tiling.order {
            TileOrder::Levels => {
                self.line("/* the window in: every level read before it is written */");
                self.window_in();
                self.inner_steps_by_level();
                self.line(&format!(
                    "/* the centre out: every level of the fields written ({}: also those the next sweep overwrites first) */",
                    self.names.temp("full")
                ));
                self.copy_centre_out("w", "to");
            }
            TileOrder::March => unreachable!("a march prints its own sweep"),
            TileOrder::Wavefront => {
                let wave = shape
                    .wavefront()
                    .expect("the plan takes the wavefront only where it applies");
                self.streamed_wave(&wave);
            }
        }
    }
}

/// The bytes of one level of a snapshot of `extent` (C, per axis) in
/// scalars of `widest` bytes, rounded up to a cache line.
fn aligned_level_bytes(extent: &[String], widest: usize) -> String {
    let factors: Vec<String> = extent
        .iter()
        .map(|e| {
            if e.contains(' ') {
                format!("({e})")
            } else {
                e.clone()
            }
        })
        .collect();
    format!("({} * {widest} + 63) / 64 * 64", factors.join(" * "))
}
