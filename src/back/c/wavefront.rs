//! The wavefront order of a time tile's inner steps in the generated C
//! (`--cpu-order wavefront`, [`crate::schedule::cpu_tile::TileOrder`]).
//!
//! Level by level, a tile runs each inner step over its whole window before
//! the next, so every step streams the window through L2 and the tile's halo
//! along the outermost axis is recomputed per tile, which keeps tiles short.
//! In a wave the same points are computed, with the same loop nests, in
//! another order: rounds `wave = w_lo0, w_lo0 + 1, ...`; in each, every stage
//! (each stencil part of each inner step, in run order) computes one row
//! along axis 0, `wave - lag`, where its clip (the same as level by level)
//! holds it. The lags ([`crate::schedule::cpu_tile::TileShape::wavefront`],
//! with the proof that no stage reads a row before it is computed nor after
//! it is overwritten) keep each stage just behind the one before it, so a row
//! is read again while it is in L1, and a tile can be hundreds of rows tall:
//! its halo along axis 0 is recomputed once, not once per short tile.
//!
//! The window, the snapshots, the copies in and out and the rotation of the
//! levels after the sweep are those of the level-by-level order; inside a
//! round the level pointers rotate per inner step under names of their own
//! (`_r`), reset at the start of every round.

use std::rc::Rc;

use crate::back::c::writer::Writer;
use crate::schedule::cpu_tile::Wavefront;

impl Writer<'_> {
    /// The inner steps of a tile as a wave along axis 0 with `wave`'s lags
    /// (see the module doc).
    pub(super) fn inner_steps_in_a_wave(&mut self, wave: &Wavefront) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let [tsteps, tstep, tleft, round, last_round, row] =
            ["tsteps", "tstep", "tleft", "wave", "last_wave", "row"].map(|role| n.temp(role));
        let (w_lo, w_hi) = (n.axis_temp("w_lo", 0), n.axis_temp("w_hi", 0));
        let per_iteration = wave.per_iteration;
        let last_part = wave.lags.last().copied().unwrap_or(0);
        let lag_of = |tstep_lag: &str, part_lag: u64| -> String {
            match part_lag {
                0 => tstep_lag.to_string(),
                l if tstep_lag.is_empty() => l.to_string(),
                l => format!("{tstep_lag} + {l}"),
            }
        };
        let tstep_lag = match per_iteration {
            0 => String::new(),
            1 => tstep.clone(),
            d => format!("{tstep} * {d}"),
        };
        let last_lag = lag_of(
            &match per_iteration {
                0 => String::new(),
                1 => format!("({tsteps} - 1)"),
                d => format!("({tsteps} - 1) * {d}"),
            },
            last_part,
        );
        self.line(&format!(
            "/* the inner steps in a wave along axis 0: in round {round}, part p of inner step \
             {tstep} computes\n   its row {round} - {tstep} * {per_iteration} - lag[p] (lag: {}), \
             by when every row it reads is computed\n   and none is overwritten yet \
             (schedule::cpu_tile::TileShape::wavefront) */",
            wave.lags
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let end = if last_lag.is_empty() {
            w_hi.clone()
        } else {
            format!("{w_hi} + {last_lag}")
        };
        self.line(&format!("const long {last_round} = {end};"));
        self.open(&format!(
            "for (long {round} = {w_lo}; {round} <= {last_round}; {round}++) {{"
        ));
        let window_fields = self.tile_fields(false);
        for &(f, lo, hi) in &window_fields {
            let ty = crate::back::c::names::c_type(p.fields[f.0].ty);
            for t in lo..=hi {
                self.line(&format!(
                    "{ty} *{} = {};",
                    self.level_name("r", f, t),
                    self.level_name("w", f, t)
                ));
            }
        }
        self.open(&format!(
            "for (long {tstep} = 0; {tstep} < {tsteps}; {tstep}++) {{"
        ));
        self.line(&format!("const long {tleft} = {tsteps} - 1 - {tstep};"));
        let iterate = p.iterate.as_ref().expect("an iterate");
        let mut part_index = 0;
        for stencil in &iterate.stencils {
            for part in &stencil.parts {
                let mut clip = self.part_clip(part_index);
                let lag = lag_of(&tstep_lag, wave.lags[part_index]);
                if let Some((lo, hi)) = clip.first_mut() {
                    let lo_text = lo.take().expect("axis 0 is tiled");
                    let hi_text = hi.take().expect("axis 0 is tiled");
                    *lo = Some(format!("sdsl_max({lo_text}, {row})"));
                    *hi = Some(format!("sdsl_min({hi_text}, {row})"));
                }
                self.line(&format!(
                    "/* stencil {}: its row of this round, if in the tile grown by the reach of \
                     what runs after it */",
                    stencil.name
                ));
                self.open("{");
                let row_value = if lag.is_empty() {
                    round.clone()
                } else if lag.contains('+') {
                    format!("{round} - ({lag})")
                } else {
                    format!("{round} - {lag}")
                };
                self.line(&format!("const long {row} = {row_value};"));
                self.bind_part_levels(part, "r");
                self.window = true;
                self.stencil_part_with(part, String::new(), clip);
                self.window = false;
                self.close("}");
                part_index += 1;
            }
        }
        self.rotate_names(&window_fields, "r");
        self.close("}");
        self.close("}");
        self.line("/* the levels as after the sweep's last inner step */");
        self.open(&format!(
            "for (long {tstep} = 1; {tstep} < {tsteps}; {tstep}++) {{"
        ));
        self.rotate_names(&window_fields, "w");
        let written = self.tile_fields(true);
        self.rotate_names(&written, "to");
        self.close("}");
    }
}
