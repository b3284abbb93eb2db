//! Time tiling in the generated C (`--time T`, `--cpu-tile`): overlapped tiles,
//! each advanced several iterations in a per-thread scratch window, written
//! back in place.
//!
//! Why overlapped tiling (rather than split, diamond or wavefront tiling) is
//! written in [`crate::schedule::cpu_tile`]. The sweep function
//! `<program>_sweep` runs `tsteps` iterations of every stencil: each OpenMP
//! thread takes a contiguous chunk of tile rows and walks its tiles in order;
//! per tile it copies the tile grown by `tsteps ×` the iteration's reach (every
//! level of every field the stencils touch) into its window, runs the stencil
//! parts there in order, `tsteps` times, each part over its subset clipped to
//! the tile grown by the reach of the parts still to run (so the computed
//! region shrinks as the halo's values go stale), rotating the window's level
//! pointers between steps exactly as the run function rotates the grid's, and
//! writes the tile's centre of every level of the written fields back into the
//! grid's own level buffers. The inner steps run level by level (here) or in
//! a streamed wave along the outermost axis, which copies the window in and
//! out a row at a time ([`crate::back::c::wavefront`]). A march
//! ([`crate::back::c::march`]) prints a sweep of its own: no window, out of
//! place.
//!
//! **In place.** The halo a tile reads belongs to its neighbours, and those
//! that ran before it have overwritten it; the values they had are kept in
//! small per-thread snapshots (rings of a tile's last rows per axis, and the
//! rows next to each thread's chunk, saved before a barrier), described in
//! [`crate::back::c::snapshot`]. This replaced a second full set of buffers
//! (each tile wrote to it while others read the first), which cost every run
//! the first touch of two more grids and a copy back (2-6 s at 16384² on the
//! development machine) and doubled the memory a sweep streams. Split and
//! diamond tiling are in place by construction but need a second kind of tile
//! (or skewed loop nests) printed apart from the untiled code; the snapshots
//! keep every inner step the untiled loop nest. A thread's window and
//! snapshots are one block that the run function keeps from sweep to sweep
//! ([`crate::back::c::scratch`]).
//!
//! Inside the window the loop nests are the untiled ones (same expressions,
//! same order, same boundary helpers on grid coordinates); only the index is
//! taken from the window's origin, so results are bit-identical. An axis read
//! across a periodic boundary is not tiled (its tiles span the grid), so the
//! wrapped reads stay in the window. The run function never lets a sweep cross
//! an iteration whose check is due, and evaluates the reductions and the check
//! after a sweep exactly as after an untiled iteration. A level that the next
//! sweep overwrites before reading it is written back only when the
//! reductions, the check or the caller read it next (`full`).

use std::rc::Rc;

use crate::analysis::tile::TileOrder;
use crate::back::c::boundary::Helper;
use crate::back::c::names;
use crate::back::c::uses::Uses;
use crate::back::c::writer::Writer;
use crate::ir::{FieldId, Iterate};

impl Writer<'_> {
    /// The fields of the tiles, as `(field, time_lo, time_hi)`.
    pub(super) fn tile_fields(&self, written_only: bool) -> Vec<(FieldId, i32, i32)> {
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        let list = if written_only {
            &shape.written
        } else {
            &shape.used
        };
        list.iter()
            .map(|&f| {
                let field = &self.program.fields[f.0];
                (f, field.time_lo, field.time_hi)
            })
            .collect()
    }

    /// `level_temp` for a field's level.
    pub(super) fn level_name(&self, suffix: &str, f: FieldId, t: i32) -> String {
        let lo = self.program.fields[f.0].time_lo;
        self.names.level_temp(suffix, f, t, lo)
    }

    /// The scalars the sweep takes: parameters, constants and grid sizes of
    /// every stencil.
    pub(super) fn sweep_uses(&self) -> Uses {
        let p = self.program;
        let mut uses = Uses::default();
        if let Some(iterate) = &p.iterate {
            for stencil in &iterate.stencils {
                let u = Uses::of_stencil(p, stencil);
                uses.params.extend(u.params);
                uses.consts.extend(u.consts);
                uses.grids.extend(u.grids);
            }
        }
        uses
    }

    /// The parameters a sweep (or a march) takes before its own: the
    /// stencils' scalars and sizes, followed by `, `, or nothing.
    pub(super) fn sweep_signature_head(&self, uses: &Uses) -> String {
        match self.signature(uses).as_str() {
            "void" => String::new(),
            list => format!("{list}, "),
        }
    }

    /// `static int <program>_sweep(...)`: `tsteps` iterations of every
    /// stencil, tile by tile (see the module doc). Returns 3 when a window
    /// cannot be allocated.
    pub(super) fn sweep_function(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (shape, tiling) = self.tiling.clone().expect("a time tiling");
        if tiling.order == TileOrder::March {
            self.march_sweep_function();
            return;
        }
        let grid = shape.grid;
        let rank = shape.rank;
        let reach = shape.iteration_reach();
        let uses = self.sweep_uses();
        let mut params = self.sweep_signature_head(&uses);
        let [tsteps, tile, ntiles, window, window_points, level_bytes, failed] = [
            "tsteps",
            "tile",
            "ntiles",
            "window",
            "window_points",
            "level_bytes",
            "failed",
        ]
        .map(|role| n.temp(role));
        let full = n.temp("full");
        params.push_str(&format!(
            "long {tsteps}, int {full}, sdsl_scratch *{}",
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
        let size = |a: usize| n.grid_size(grid, a);
        let axis = |role: &'static str, a: usize| n.axis_temp(role, a);
        let tile_text = |a: usize| {
            if shape.whole[a] {
                size(a)
            } else {
                tiling.tile[a].to_string()
            }
        };
        let grow = |a: usize, side: usize| -> u64 {
            if shape.whole[a] {
                0
            } else if side == 0 {
                reach[a].0
            } else {
                reach[a].1
            }
        };
        self.helpers.insert(Helper::MinMax);
        self.line(&format!(
            "/* {tsteps} iterations of every stencil of {}, time-tiled: per tile (centre {}, \
             outermost axis first), a\n   window grown by {tsteps} x the iteration's reach, \
             the inner steps in the window, the centre written back in place. */",
            p.name,
            (0..rank).map(tile_text).collect::<Vec<_>>().join(" x ")
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
        let counts: Vec<String> = (0..rank)
            .map(|a| {
                let t = tile_text(a);
                if shape.whole[a] {
                    format!("{} = 1", axis("tn", a))
                } else {
                    format!(
                        "{} = ({} + {}) / {t}",
                        axis("tn", a),
                        size(a),
                        tiling.tile[a] - 1
                    )
                }
            })
            .collect();
        self.line(&format!("const long {};", counts.join(", ")));
        let product: Vec<String> = (0..rank).map(|a| axis("tn", a)).collect();
        self.line(&format!("const long {ntiles} = {};", product.join(" * ")));
        let extents: Vec<String> = (0..rank)
            .map(|a| {
                let halo = grow(a, 0) + grow(a, 1);
                if halo == 0 {
                    format!("sdsl_min({}, {})", tile_text(a), size(a))
                } else {
                    format!(
                        "sdsl_min({} + {tsteps} * {halo}, {})",
                        tile_text(a),
                        size(a)
                    )
                }
            })
            .collect();
        let mut extents = extents;
        let widest = shape
            .used
            .iter()
            .map(|f| p.fields[f.0].ty.size_bytes())
            .max()
            .unwrap_or(8);
        let window_levels: usize = shape.used.iter().map(|f| p.fields[f.0].levels()).sum();
        if tiling.order == TileOrder::Wavefront {
            // A streamed wave holds a band of rows along axis 0, not the window.
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
        let snapshot_levels = self.snapshot_levels().len();
        let ring_axes = self.ring_axes();
        let chunk_axis = self.chunk_axis();
        let has_below = self.has_below();
        let bytes_of = |extent: &[String]| {
            format!(
                "({} * {widest} + 63) / 64 * 64",
                extent
                    .iter()
                    .map(|e| if e.contains(' ') {
                        format!("({e})")
                    } else {
                        e.clone()
                    })
                    .collect::<Vec<_>>()
                    .join(" * ")
            )
        };
        let (below, below_bytes) = (n.temp("below"), n.temp("below_bytes"));
        if has_below {
            let extent = self.snapshot_extent(crate::back::c::snapshot::Snapshot::Below);
            self.line(&format!(
                "const long {below_bytes} = {}; /* a level of the rows below a chunk, in bytes */",
                bytes_of(&extent)
            ));
        }
        self.line(&format!("int {failed} = 0;"));
        self.scratch_reserve();
        let parallel = self.omp_parallel("");
        self.line(&parallel);
        self.open("{");
        let (me, team, first_row, end_row, per_row) = (
            n.temp("me"),
            n.temp("team"),
            n.temp("first_row"),
            n.temp("end_row"),
            n.temp("per_row"),
        );
        self.line("#ifdef _OPENMP");
        self.line(&format!(
            "const long {me} = omp_get_thread_num(), {team} = omp_get_num_threads();"
        ));
        self.line("#else");
        self.line(&format!("const long {me} = 0, {team} = 1;"));
        self.line("#endif");
        let rows_axis = chunk_axis.unwrap_or(0);
        let tn_rows = axis("tn", rows_axis);
        self.line(&format!(
            "/* this thread's chunk: tile rows {first_row}..{end_row} along axis {rows_axis}, in order */"
        ));
        self.line(&format!(
            "const long {first_row} = {tn_rows} * {me} / {team}, {end_row} = {tn_rows} * ({me} + 1) / {team};"
        ));
        self.line(&format!("const long {per_row} = {ntiles} / {tn_rows};"));
        let (chunk_lo, chunk_hi) = (n.temp("chunk_lo"), n.temp("chunk_hi"));
        if let Some(k) = chunk_axis {
            let t = tiling.tile[k];
            self.line(&format!(
                "const long {chunk_lo} = {first_row} * {t}, {chunk_hi} = sdsl_min({end_row} * {t}, {}) - 1;",
                size(k)
            ));
        }
        for &a in &ring_axes {
            // Rows a ring must hold (see `back::c::snapshot`): along the
            // innermost axis the halo, as each tile reads its halo there
            // before it saves its own last rows and the next tile is the next
            // along that axis; along the chunk axis the halo alone too when
            // the chunk is one tile row (the rows above it are all the ring
            // holds); else the halo and a tile.
            let halo = self.halo_text(reach[a].0);
            let (rows, why) = if a + 1 == rank {
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
                axis("ring_rows", a),
            ));
            let extent = self.snapshot_extent(crate::back::c::snapshot::Snapshot::Ring(a));
            self.line(&format!(
                "const long {} = {}; /* a level of the ring, in bytes */",
                axis("ring_bytes", a),
                bytes_of(&extent)
            ));
        }
        let mut buffers = vec![(window.clone(), format!("{level_bytes} * {window_levels}"))];
        for &a in &ring_axes {
            buffers.push((
                axis("ring", a),
                format!("{} * {snapshot_levels}", axis("ring_bytes", a)),
            ));
        }
        if has_below {
            buffers.push((below.clone(), format!("{below_bytes} * {snapshot_levels}")));
        }
        let broken = self.scratch_buffers(&me, &buffers);
        self.open(&format!("if ({broken}) {{"));
        self.line("#pragma omp atomic write");
        self.line(&format!("{failed} = 1;"));
        self.close("}");
        let snapshot_levels_list = self.snapshot_levels();
        for (slot, &(f, t)) in snapshot_levels_list.iter().enumerate() {
            let ty = names::c_type(p.fields[f.0].ty);
            for &a in &ring_axes {
                let suffix = ["ring0", "ring1", "ring2"][a.min(2)];
                self.line(&format!(
                    "{ty} *{} = ({ty} *)({} + {slot} * {});",
                    self.level_name(suffix, f, t),
                    axis("ring", a),
                    axis("ring_bytes", a)
                ));
            }
            if has_below {
                self.line(&format!(
                    "{ty} *{} = ({ty} *)({below} + {slot} * {below_bytes});",
                    self.level_name("below", f, t)
                ));
            }
        }
        if chunk_axis.is_some() {
            self.open(&format!("if (!{broken} && {first_row} < {end_row}) {{"));
            self.snapshot_chunk_edges();
            self.close("}");
        }
        self.line("#pragma omp barrier /* no tile writes before every chunk's edges are saved */");
        self.open(&format!(
            "for (long {tile} = {first_row} * {per_row}; !{broken} && {tile} < {end_row} * {per_row}; {tile}++) {{"
        ));
        // Tile coordinates, innermost fastest.
        let mut index = Vec::new();
        for a in 0..rank {
            let inner: Vec<String> = (a + 1..rank).map(|b| axis("tn", b)).collect();
            let quotient = if inner.is_empty() {
                tile.clone()
            } else {
                match inner.as_slice() {
                    [one] => format!("{tile} / {one}"),
                    _ => format!("{tile} / ({})", inner.join(" * ")),
                }
            };
            index.push(if a == 0 {
                format!("{} = {quotient}", axis("ti", a))
            } else {
                format!("{} = {quotient} % {}", axis("ti", a), axis("tn", a))
            });
        }
        self.line(&format!("const long {};", index.join(", ")));
        for (a, reach) in reach.iter().enumerate() {
            let (c_lo, c_hi, w_lo, w_hi) = (
                axis("c_lo", a),
                axis("c_hi", a),
                axis("w_lo", a),
                axis("w_hi", a),
            );
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
                format!("{next} * {}", n.grid_stride(grid, a + 1))
            };
            self.line(&format!(
                "const long {} = {value}; /* the window's stride */",
                n.grid_stride(grid, a)
            ));
        }
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
        if let Some(k) = chunk_axis {
            self.line(&format!(
                "const long {} = sdsl_max({}, {chunk_lo}), {} = sdsl_min({}, {chunk_hi}); /* written fields: rows of this chunk only */",
                axis("r_lo", k),
                axis("w_lo", k),
                axis("r_hi", k),
                axis("w_hi", k)
            ));
        }
        match tiling.order {
            TileOrder::Levels => {
                self.line("/* the window in: every level read before it is written */");
                self.window_in();
                self.inner_steps_by_level();
                self.line(&format!(
                    "/* the centre out: every level of the fields written ({full}: also those the next sweep overwrites first) */"
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
        self.close("}");
        self.close("}");
        let unused: Vec<String> = (0..rank)
            .map(|a| format!("(void){};", axis("tn", a)))
            .collect();
        self.line(&unused.join(" "));
        self.line(&format!("return {failed} ? 3 : 0;"));
        self.close("}");
    }

    /// The window in from the grid and the snapshots (every level read
    /// before it is written), and the centre's last rows saved for the tiles
    /// after it; a streamed wave prints it for one row at a time.
    pub(super) fn window_in(&mut self) {
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        self.copy_rows_in();
        for (f, t, part) in shape.dead.clone() {
            self.copy_dead_level_in(f, t, part);
        }
        self.patch_window_from_snapshots();
        self.save_centre_edges();
    }

    /// The inner steps of a tile level by level: each stencil part over its
    /// whole clip (see [`Self::part_clip`]), inner step after inner step.
    fn inner_steps_by_level(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let [tsteps, tstep, tleft] = ["tsteps", "tstep", "tleft"].map(|role| n.temp(role));
        let iterate = p.iterate.as_ref().expect("an iterate");
        self.open(&format!(
            "for (long {tstep} = 0; {tstep} < {tsteps}; {tstep}++) {{"
        ));
        self.line(&format!("const long {tleft} = {tsteps} - 1 - {tstep};"));
        let mut part_index = 0;
        for stencil in &iterate.stencils {
            for part in &stencil.parts {
                let clip = self.part_clip(part_index);
                self.line(&format!(
                    "/* stencil {}: its points in the tile grown by the reach of what runs after it */",
                    stencil.name
                ));
                self.open("{");
                self.bind_part_levels(part, "w");
                self.window = true;
                self.stencil_part_with(part, String::new(), clip);
                self.window = false;
                self.close("}");
                part_index += 1;
            }
        }
        self.open(&format!("if ({tstep} + 1 < {tsteps}) {{"));
        let window_fields = self.tile_fields(false);
        self.rotate_names(&window_fields, "w");
        let written = self.tile_fields(true);
        self.rotate_names(&written, "to");
        self.close("}");
        self.close("}");
    }

    /// The levels `part` reads and writes, named as the untiled loop names
    /// them, bound to the window's level pointers named with `suffix`.
    pub(super) fn bind_part_levels(&mut self, part: &crate::ir::StencilPart, suffix: &str) {
        let p = self.program;
        let part_uses = Uses::of_part(p, part);
        for (&(f, t), &written) in &part_uses.levels {
            let field = FieldId(f);
            let ty = names::c_type(p.fields[f].ty);
            let constness = if written { "" } else { "const " };
            self.line(&format!(
                "{constness}{ty} *SDSL_RESTRICT {} = {};",
                self.names.level(field, t),
                self.level_name(suffix, field, t)
            ));
        }
    }

    /// Per axis, the bounds the points of part `part_index` (of one
    /// iteration) are clipped to at inner step `tleft` from the sweep's end:
    /// the tile's centre grown by `tleft ×` the iteration's reach and the
    /// reach of the parts after it, so that the computed region shrinks as
    /// the halo's values go stale.
    pub(super) fn part_clip(&self, part_index: usize) -> Vec<(Option<String>, Option<String>)> {
        let n = &self.names;
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        let reach = shape.iteration_reach();
        let after = shape.reach_after(part_index);
        let tleft = n.temp("tleft");
        (0..shape.rank)
            .map(|a| {
                if shape.whole[a] {
                    return (None, None);
                }
                let side = |centre: String, sign: &str, per_step: u64, later: u64| {
                    let grown = match (per_step, later) {
                        (0, 0) => return centre,
                        (0, l) => l.to_string(),
                        (1, 0) => tleft.clone(),
                        (r, 0) => format!("{tleft} * {r}"),
                        (1, l) => format!("{tleft} + {l}"),
                        (r, l) => format!("{tleft} * {r} + {l}"),
                    };
                    if grown.contains(' ') {
                        format!("{centre} {sign} ({grown})")
                    } else {
                        format!("{centre} {sign} {grown}")
                    }
                };
                (
                    Some(side(n.axis_temp("c_lo", a), "-", reach[a].0, after[a].0)),
                    Some(side(n.axis_temp("c_hi", a), "+", reach[a].1, after[a].1)),
                )
            })
            .collect()
    }

    /// Rotates the level pointers named with `suffix` of `fields` (those with
    /// two levels or more): `[hi]` becomes `[hi-1]`.
    pub(super) fn rotate_names(&mut self, fields: &[(FieldId, i32, i32)], suffix: &str) {
        let oldest = self.names.temp("oldest");
        for &(f, lo, hi) in fields {
            if hi == lo {
                continue;
            }
            let ty = names::c_type(self.program.fields[f.0].ty);
            let lv = |t: i32| self.level_name(suffix, f, t);
            let mut text = format!("{{ {ty} *{oldest} = {};", lv(lo));
            for t in lo..hi {
                text.push_str(&format!(" {} = {};", lv(t), lv(t + 1)));
            }
            text.push_str(&format!(" {} = {oldest}; }}", lv(hi)));
            self.line(&text);
        }
    }

    /// The iterate loop of the run function with time tiling: sweeps of up
    /// to T iterations, never past a checked iteration, each writing its
    /// results in place; reductions, check and rotation after each sweep as
    /// after an untiled iteration.
    pub(super) fn tiled_iterate_loop(&mut self, iterate: &Iterate) {
        let n = Rc::clone(&self.names);
        let (shape, tiling) = self.tiling.clone().expect("a time tiling");
        let summary = n.temp("summary");
        let (iter, stop) = (n.temp("iter"), n.temp("stop"));
        let (max_iters, check_every) = (n.temp("max_iters"), n.temp("check_every"));
        let (done, tsteps, tstep) = (n.temp("done"), n.temp("tsteps"), n.temp("tstep"));
        let how = if tiling.order == TileOrder::March {
            "marching along axis 0, out of place"
        } else {
            "each writing its results in place"
        };
        self.line(&format!(
            "/* time tiling: sweeps of up to {} iterations (tiles of {}), {how} */",
            tiling.steps,
            tiling
                .tile
                .iter()
                .zip(&shape.whole)
                .map(|(t, &whole)| if whole {
                    "all".to_string()
                } else {
                    t.to_string()
                })
                .collect::<Vec<_>>()
                .join(" x ")
        ));
        let scratch = n.temp("scratch");
        self.line(&format!(
            "sdsl_scratch {scratch} = {{ NULL, NULL, 0 }}; /* the sweeps' windows and snapshots, kept from sweep to sweep */"
        ));
        self.line(&format!("long {done} = 0;"));
        self.open(&format!("while ({done} < {max_iters}) {{"));
        self.line(&format!(
            "long {tsteps} = sdsl_min({}, {max_iters} - {done});",
            tiling.steps
        ));
        if iterate.check.is_some() {
            self.line(&format!(
                "{tsteps} = sdsl_min({tsteps}, {check_every} - {done} % {check_every}); /* never past a check */"
            ));
            self.line(&format!("int {stop} = 0;"));
        }
        let mut args = self.arguments(&self.sweep_uses());
        if !args.is_empty() {
            args.push_str(", ");
        }
        let full = n.temp("full");
        args.push_str(&format!("{tsteps}, {full}, &{scratch}"));
        for &(f, lo, hi) in &self.tile_fields(false) {
            for t in lo..=hi {
                args.push_str(&format!(", {}", n.level(f, t)));
            }
        }
        let due = match &iterate.check {
            Some(_) => format!(" || ({done} + {tsteps}) % {check_every} == 0"),
            None => String::new(),
        };
        self.line(&format!(
            "const int {full} = {done} + {tsteps} == {max_iters}{due}; /* every level read after this sweep */"
        ));
        self.open(&format!(
            "if ({}({args}) != 0) {{",
            names::sweep_symbol(self.program)
        ));
        let cleanup = self.run_cleanup();
        self.line(&cleanup);
        self.line("return 3;");
        self.close("}");
        self.line("/* the sweep left its levels as after its last iteration's stencils */");
        self.open(&format!(
            "for (long {tstep} = 1; {tstep} < {tsteps}; {tstep}++) {{"
        ));
        self.rotation();
        self.close("}");
        self.line(&format!("const long {iter} = {done} + {tsteps};"));
        // Without a check only the last value of a reduction is seen.
        self.reductions_and_check_when(iterate, Some(format!("{iter} == {max_iters}")));
        self.line(&format!("{summary}->iterations = {iter};"));
        self.rotation();
        self.line(&format!("{done} = {iter};"));
        if iterate.check.is_some() {
            self.open(&format!("if ({stop}) {{"));
            self.line(&format!("{summary}->stopped_by_check = 1;"));
            self.line("break;");
            self.close("}");
        }
        let cleanup = self.run_cleanup();
        self.interrupt_poll(&cleanup);
        self.close("}");
    }
}
