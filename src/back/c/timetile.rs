//! Time tiling in the generated C (`--time T`, `--cpu-tile`): overlapped tiles,
//! each advanced several iterations in a per-thread scratch window.
//!
//! Why overlapped tiling (rather than split, diamond or wavefront tiling) is
//! written in [`crate::schedule::cpu_tile`]. The sweep function
//! `<program>_sweep` runs `tsteps` iterations of every stencil: an `omp for`
//! over tiles, where each thread copies its tile grown by `tsteps ×` the
//! iteration's reach (every level of every field the stencils touch) into its
//! window, runs the stencil parts there in order, `tsteps` times, each part over
//! its subset clipped to the tile grown by the reach of the parts still to run
//! (so the computed region shrinks as the halo's values go stale), rotating the
//! window's level pointers between steps exactly as the run function rotates
//! the grid's, and writes the tile's centre of every level of the written
//! fields into a second set of buffers (other tiles still read the first).
//!
//! Inside the window the loop nests are the untiled ones (same expressions,
//! same order, same boundary helpers on grid coordinates); only the index is
//! taken from the window's origin, so results are bit-identical. An axis read
//! across a periodic boundary is not tiled (its tiles span the grid), so the
//! wrapped reads stay in the window. The run function swaps the two sets after
//! each sweep, never lets a sweep cross an iteration whose check is due, and
//! evaluates the reductions and the check after a sweep exactly as after an
//! untiled iteration.

use std::rc::Rc;

use crate::back::c::boundary::Helper;
use crate::back::c::names;
use crate::back::c::uses::Uses;
use crate::back::c::writer::Writer;
use crate::ir::{FieldId, Iterate};

impl Writer<'_> {
    /// The fields of the tiles, as `(field, time_lo, time_hi)`.
    fn tile_fields(&self, written_only: bool) -> Vec<(FieldId, i32, i32)> {
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
    fn level_name(&self, suffix: &str, f: FieldId, t: i32) -> String {
        let lo = self.program.fields[f.0].time_lo;
        self.names.level_temp(suffix, f, t, lo)
    }

    /// The scalars the sweep takes: parameters, constants and grid sizes of
    /// every stencil.
    fn sweep_uses(&self) -> Uses {
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

    /// `static int <program>_sweep(...)`: `tsteps` iterations of every
    /// stencil, tile by tile (see the module doc). Returns 3 when a window
    /// cannot be allocated.
    pub(super) fn sweep_function(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (shape, tiling) = self.tiling.clone().expect("a time tiling");
        let grid = shape.grid;
        let rank = shape.rank;
        let reach = shape.iteration_reach();
        let uses = self.sweep_uses();
        let mut params = self.signature(&uses);
        if params == "void" {
            params.clear();
        } else {
            params.push_str(", ");
        }
        let [tsteps, tstep, tleft, tile, ntiles, window, window_points, level_bytes, failed] = [
            "tsteps",
            "tstep",
            "tleft",
            "tile",
            "ntiles",
            "window",
            "window_points",
            "level_bytes",
            "failed",
        ]
        .map(|role| n.temp(role));
        let full = n.temp("full");
        params.push_str(&format!("long {tsteps}, int {full}"));
        for &(f, lo, hi) in &self.tile_fields(false) {
            let ty = names::c_type(p.fields[f.0].ty);
            for t in lo..=hi {
                params.push_str(&format!(", const {ty} *{}", self.level_name("in", f, t)));
            }
        }
        for &(f, lo, hi) in &self.tile_fields(true) {
            let ty = names::c_type(p.fields[f.0].ty);
            for t in lo..=hi {
                params.push_str(&format!(", {ty} *{}", self.level_name("out", f, t)));
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
             the inner steps in the window, the centre written to the _out levels. */",
            p.name,
            (0..rank).map(tile_text).collect::<Vec<_>>().join(" x ")
        ));
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
        self.line(&format!(
            "const long {window_points} = {};",
            extents.join(" * ")
        ));
        let widest = shape
            .used
            .iter()
            .map(|f| p.fields[f.0].ty.size_bytes())
            .max()
            .unwrap_or(8);
        self.line(&format!(
            "const long {level_bytes} = ({window_points} * {widest} + 63) / 64 * 64; /* a level of the window, in bytes */"
        ));
        let window_levels: usize = shape.used.iter().map(|f| p.fields[f.0].levels()).sum();
        self.line(&format!("int {failed} = 0;"));
        let parallel = self.omp_parallel("");
        self.line(&parallel);
        self.open("{");
        self.line(&format!(
            "char *{window} = (char *)malloc((size_t){level_bytes} * {window_levels});"
        ));
        self.line("#pragma omp for schedule(dynamic)");
        self.open(&format!(
            "for (long {tile} = 0; {tile} < {ntiles}; {tile}++) {{"
        ));
        self.open(&format!("if ({window} == NULL) {{"));
        self.line("#pragma omp atomic write");
        self.line(&format!("{failed} = 1;"));
        self.line("continue;");
        self.close("}");
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
                    self.level_name("out", f, t)
                ));
            }
        }
        self.line("/* the window in: every level read before it is written */");
        self.copy_rows(false);
        for (f, t, part) in shape.dead.clone() {
            self.copy_dead_level_in(f, t, part);
        }
        let iterate = p.iterate.as_ref().expect("an iterate");
        self.open(&format!(
            "for (long {tstep} = 0; {tstep} < {tsteps}; {tstep}++) {{"
        ));
        self.line(&format!("const long {tleft} = {tsteps} - 1 - {tstep};"));
        let mut part_index = 0;
        for stencil in &iterate.stencils {
            for part in &stencil.parts {
                let after = shape.reach_after(part_index);
                let clip: Vec<(Option<String>, Option<String>)> = (0..rank)
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
                            Some(side(axis("c_lo", a), "-", reach[a].0, after[a].0)),
                            Some(side(axis("c_hi", a), "+", reach[a].1, after[a].1)),
                        )
                    })
                    .collect();
                self.line(&format!(
                    "/* stencil {}: its points in the tile grown by the reach of what runs after it */",
                    stencil.name
                ));
                self.open("{");
                let part_uses = Uses::of_part(p, part);
                for (&(f, t), &written) in &part_uses.levels {
                    let field = FieldId(f);
                    let ty = names::c_type(p.fields[f].ty);
                    let constness = if written { "" } else { "const " };
                    self.line(&format!(
                        "{constness}{ty} *SDSL_RESTRICT {} = {};",
                        n.level(field, t),
                        self.level_name("w", field, t)
                    ));
                }
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
        self.line(&format!(
            "/* the centre out: every level of the fields written ({full}: also those the next sweep overwrites first) */"
        ));
        self.copy_rows(true);
        if !shape.dead.is_empty() {
            self.open(&format!("if (!{full}) {{"));
            for (f, t, part) in shape.dead.clone() {
                let field = &p.fields[f.0];
                // The level that the run function's rotation turns into `t`.
                let before_rotation = if t == field.time_hi {
                    field.time_lo
                } else {
                    t + 1
                };
                self.copy_outside_subset(f, before_rotation, part, true);
            }
            self.close("}");
        }
        self.close("}");
        self.line(&format!("free({window});"));
        self.close("}");
        let unused: Vec<String> = (0..rank)
            .map(|a| format!("(void){};", axis("tn", a)))
            .collect();
        self.line(&unused.join(" "));
        self.line(&format!("return {failed} ? 3 : 0;"));
        self.close("}");
    }

    /// Rotates the level pointers named with `suffix` of `fields` (those with
    /// two levels or more): `[hi]` becomes `[hi-1]`.
    fn rotate_names(&mut self, fields: &[(FieldId, i32, i32)], suffix: &str) {
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

    /// Row copies between the grid and the window: the whole window in
    /// (`out` false), or the centre of the written fields out.
    fn copy_rows(&mut self, out: bool) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let grid = shape.grid;
        let rank = shape.rank;
        let (lo, hi) = if out {
            ("c_lo", "c_hi")
        } else {
            ("w_lo", "w_hi")
        };
        let axis = |role: &'static str, a: usize| n.axis_temp(role, a);
        let inner = rank - 1;
        for a in 0..inner {
            let i = n.axis_var(a);
            self.open(&format!(
                "for (long {i} = {}; {i} <= {}; {i}++) {{",
                axis(lo, a),
                axis(hi, a)
            ));
        }
        // Grid index (Horner form over the sizes) and window index.
        let mut global = String::new();
        for a in 0..rank {
            let c = if a == inner {
                axis(lo, a)
            } else {
                n.axis_var(a)
            };
            global = if a == 0 {
                c
            } else if a == 1 {
                format!("{global} * {} + {c}", n.grid_size(grid, a))
            } else {
                format!("({global}) * {} + {c}", n.grid_size(grid, a))
            };
        }
        let local: Vec<String> = (0..rank)
            .map(|a| {
                let c = if a == inner {
                    format!("{} - {}", axis(lo, a), axis("w_lo", a))
                } else {
                    format!("({} - {})", n.axis_var(a), axis("w_lo", a))
                };
                if a == inner {
                    if out {
                        c
                    } else {
                        // Rows of the window start at its origin.
                        String::new()
                    }
                } else {
                    format!("{c} * {}", n.grid_stride(grid, a))
                }
            })
            .filter(|s| !s.is_empty())
            .collect();
        let local = if local.is_empty() {
            "0".to_string()
        } else {
            local.join(" + ")
        };
        let count = format!("(size_t)({} - {} + 1)", axis(hi, inner), axis(lo, inner));
        let full = n.temp("full");
        for &(f, flo, fhi) in &self.tile_fields(out) {
            let ty = names::c_type(p.fields[f.0].ty);
            for t in flo..=fhi {
                // Written back, level `t` becomes `t - 1` (the lowest the
                // highest) in the run function's rotation after the sweep.
                let after_rotation = if t == flo { fhi } else { t - 1 };
                let label = if out { after_rotation } else { t };
                let dead = shape.dead.iter().any(|&(df, dt, _)| df == f && dt == label);
                if dead && !out {
                    continue;
                }
                let guard = if dead {
                    format!("if ({full}) ")
                } else {
                    String::new()
                };
                let (w, g) = (
                    self.level_name("w", f, t),
                    self.level_name(if out { "to" } else { "in" }, f, t),
                );
                let (dst, src) = if out {
                    (format!("&{g}[{global}]"), format!("&{w}[{local}]"))
                } else {
                    (format!("&{w}[{local}]"), format!("&{g}[{global}]"))
                };
                self.line(&format!(
                    "{guard}memcpy({dst}, {src}, {count} * sizeof({ty}));"
                ));
            }
        }
        for _ in 0..inner {
            self.close("}");
        }
    }

    /// Copies a level that `part` overwrites first into the window, but only
    /// outside `part`'s subset: the points inside are written before any read.
    fn copy_dead_level_in(&mut self, f: FieldId, t: i32, part_index: usize) {
        self.copy_outside_subset(f, t, part_index, false);
    }

    /// Copies level `t` of `f` outside the subset of the part that writes it
    /// first: into the window (`out` false, over the window), or from the
    /// window into the `_to` level (over the centre: the points the next sweep
    /// copies in, which the second set must hold too).
    fn copy_outside_subset(&mut self, f: FieldId, t: i32, part_index: usize, out: bool) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let grid = shape.grid;
        let rank = shape.rank;
        let inner = rank - 1;
        let iterate = p.iterate.as_ref().expect("an iterate");
        let part = iterate
            .stencils
            .iter()
            .flat_map(|s| &s.parts)
            .nth(part_index)
            .expect("the part");
        let field = &p.fields[f.0];
        let ty = names::c_type(field.ty);
        let axis = |role: &'static str, a: usize| n.axis_temp(role, a);
        let (w, g) = (
            self.level_name("w", f, t),
            self.level_name(if out { "to" } else { "in" }, f, t),
        );
        let (lo_role, hi_role) = if out {
            ("c_lo", "c_hi")
        } else {
            ("w_lo", "w_hi")
        };
        self.line(&format!(
            "/* [{t}]{} only outside the points of the part that writes it first */",
            field.name
        ));
        self.open("{");
        let scope = crate::back::c::expr::Scope {
            access: crate::back::c::expr::Access::Interior,
            locals: &[],
        };
        for (a, (lo, hi)) in part.subset.ranges.iter().enumerate() {
            let (lo, hi) = (self.expr(lo, scope), self.expr(hi, scope));
            self.line(&format!(
                "const long {} = {lo}, {} = {hi};",
                axis("s_lo", a),
                axis("s_hi", a)
            ));
        }
        for a in 0..inner {
            let i = n.axis_var(a);
            self.open(&format!(
                "for (long {i} = {}; {i} <= {}; {i}++) {{",
                axis(lo_role, a),
                axis(hi_role, a)
            ));
        }
        // The window row and the grid row of the current outer coordinates,
        // at inner coordinate `x`.
        let window_at = |x: &str| {
            let mut terms: Vec<String> = (0..inner)
                .map(|a| {
                    format!(
                        "({} - {}) * {}",
                        n.axis_var(a),
                        axis("w_lo", a),
                        n.grid_stride(grid, a)
                    )
                })
                .collect();
            terms.push(format!("{x} - {}", axis("w_lo", inner)));
            terms.join(" + ")
        };
        let grid_at = |x: &str| {
            let mut text = String::new();
            for a in 0..rank {
                let c = if a == inner {
                    x.to_string()
                } else {
                    n.axis_var(a)
                };
                text = match a {
                    0 => c,
                    1 => format!("{text} * {} + {c}", n.grid_size(grid, a)),
                    _ => format!("({text}) * {} + {c}", n.grid_size(grid, a)),
                };
            }
            text
        };
        let copy = |from: &str, to: &str| {
            let (window, grid) = (window_at(from), grid_at(from));
            let count = format!("(size_t)({to} - {from} + 1) * sizeof({ty})");
            if out {
                format!("memcpy(&{g}[{grid}], &{w}[{window}], {count});")
            } else {
                format!("memcpy(&{w}[{window}], &{g}[{grid}], {count});")
            }
        };
        let (w_lo, w_hi) = (axis(lo_role, inner), axis(hi_role, inner));
        let (s_lo, s_hi) = (axis("s_lo", inner), axis("s_hi", inner));
        let outside: Vec<String> = (0..inner)
            .map(|a| {
                format!(
                    "{i} < {} || {i} > {}",
                    axis("s_lo", a),
                    axis("s_hi", a),
                    i = n.axis_var(a)
                )
            })
            .collect();
        if !outside.is_empty() {
            self.open(&format!("if ({}) {{", outside.join(" || ")));
            self.line(&copy(&w_lo, &w_hi));
            self.close_open("} else {");
        }
        self.line(&format!(
            "if ({w_lo} < {s_lo}) {}",
            copy(&w_lo, &format!("sdsl_min({w_hi}, {s_lo} - 1)"))
        ));
        let after = format!("sdsl_max({w_lo}, {s_hi} + 1)");
        self.line(&format!("if ({w_hi} > {s_hi}) {}", copy(&after, &w_hi)));
        if !outside.is_empty() {
            self.close("}");
        }
        for _ in 0..inner {
            self.close("}");
        }
        self.close("}");
    }

    /// The iterate loop of the run function with time tiling: sweeps of up
    /// to T iterations, never past a checked iteration, into a second set of
    /// buffers for the written fields; reductions, check and rotation after
    /// each sweep as after an untiled iteration.
    pub(super) fn tiled_iterate_loop(&mut self, iterate: &Iterate) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (shape, tiling) = self.tiling.clone().expect("a time tiling");
        let summary = n.temp("summary");
        let (iter, stop) = (n.temp("iter"), n.temp("stop"));
        let (max_iters, check_every) = (n.temp("max_iters"), n.temp("check_every"));
        let (shadow, done, tsteps, tstep) = (
            n.temp("shadow"),
            n.temp("done"),
            n.temp("tsteps"),
            n.temp("tstep"),
        );
        let written = self.tile_fields(true);
        let points: Vec<String> = (0..shape.rank)
            .map(|a| self.read_size(shape.grid, a))
            .collect();
        let points = points.join(" * ");
        self.line(&format!(
            "/* time tiling: sweeps of up to {} iterations (tiles of {}), each writing the \
             fields it changes\n   into the second set of buffers (_next) while other \
             tiles still read the first */",
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
        let mut next_names = Vec::new();
        for &(f, lo, hi) in &written {
            let ty = names::c_type(p.fields[f.0].ty);
            for t in lo..=hi {
                let name = self.level_name("next", f, t);
                self.line(&format!(
                    "{ty} *{name} = ({ty} *)malloc((size_t)({points}) * sizeof({ty}));"
                ));
                next_names.push(name);
            }
        }
        let free_all: Vec<String> = next_names.iter().map(|x| format!("free({x});")).collect();
        let free_all = free_all.join(" ");
        let any_null: Vec<String> = next_names.iter().map(|x| format!("{x} == NULL")).collect();
        self.open(&format!("if ({}) {{", any_null.join(" || ")));
        self.line(&free_all);
        self.line("return 3;");
        self.close("}");
        self.line(&format!("int {shadow} = 0;"));
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
        args.push_str(&format!("{tsteps}, {full}"));
        for &(f, lo, hi) in &self.tile_fields(false) {
            for t in lo..=hi {
                args.push_str(&format!(", {}", n.level(f, t)));
            }
        }
        for &(f, lo, hi) in &written {
            for t in lo..=hi {
                args.push_str(&format!(", {}", self.level_name("next", f, t)));
            }
        }
        let due = match &iterate.check {
            Some(_) => format!(" || ({done} + {tsteps}) % {check_every} == 0"),
            None => String::new(),
        };
        self.line(&format!(
            "const int {full} = {done} + {tsteps} == {max_iters}{due}; /* every level read after this sweep */"
        ));
        self.open(&format!("if ({}({args}) != 0) {{", names::sweep_symbol(p)));
        self.line(&free_all);
        self.line("return 3;");
        self.close("}");
        self.line("/* the sweep wrote the second set: swap the sets */");
        let oldest = n.temp("oldest");
        for &(f, lo, hi) in &written {
            let ty = names::c_type(p.fields[f.0].ty);
            for t in lo..=hi {
                let (a, b) = (n.level(f, t), self.level_name("next", f, t));
                self.line(&format!(
                    "{{ {ty} *{oldest} = {a}; {a} = {b}; {b} = {oldest}; }}"
                ));
            }
        }
        self.line(&format!("{shadow} = !{shadow};"));
        self.line("/* the sweep left its levels as after its last iteration's stencils */");
        self.open(&format!(
            "for (long {tstep} = 1; {tstep} < {tsteps}; {tstep}++) {{"
        ));
        self.rotation();
        self.rotate_names(&written, "next");
        self.close("}");
        self.line(&format!("const long {iter} = {done} + {tsteps};"));
        // Without a check only the last value of a reduction is seen.
        self.reductions_and_check_when(iterate, Some(format!("{iter} == {max_iters}")));
        self.line(&format!("{summary}->iterations = {iter};"));
        self.rotation();
        self.rotate_names(&written, "next");
        self.line(&format!("{done} = {iter};"));
        if iterate.check.is_some() {
            self.open(&format!("if ({stop}) {{"));
            self.line(&format!("{summary}->stopped_by_check = 1;"));
            self.line("break;");
            self.close("}");
        }
        self.tiled_interrupt_poll(&written, &free_all);
        self.close("}");
        self.open(&format!("if ({shadow}) {{"));
        self.line("/* the results are in the second set: into the caller's buffers */");
        for &(f, lo, hi) in &written {
            let ty = names::c_type(p.fields[f.0].ty);
            for t in lo..=hi {
                let (a, b) = (n.level(f, t), self.level_name("next", f, t));
                self.line(&format!(
                    "memcpy({b}, {a}, (size_t)({points}) * sizeof({ty})); {{ {ty} *{oldest} = {a}; {a} = {b}; {b} = {oldest}; }}"
                ));
            }
        }
        self.close("}");
        self.line(&free_all);
    }
}
