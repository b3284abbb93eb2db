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

mod sweep;

use std::rc::Rc;

use crate::analysis::tile::TileOrder;
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
