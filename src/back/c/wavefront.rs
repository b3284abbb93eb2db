//! The wavefront order of a time tile's inner steps in the generated C
//! (`--cpu-order wavefront`, [`crate::analysis::tile::TileOrder`]),
//! streamed through a band of rows.
//!
//! Level by level, a tile runs each inner step over its whole window before
//! the next, so every step streams the window through L2 and the tile's halo
//! along the outermost axis is recomputed per tile, which keeps tiles short.
//! In a wave the same points are computed, with the same loop nests, in
//! another order: rounds `wave = w_lo0 - lead, ...`; in each, every stage
//! (each stencil part of each inner step, in run order) computes one row
//! along axis 0, `wave - lag`, where its clip (the same as level by level)
//! holds it. The lags ([`crate::analysis::tile::TileShape::wavefront`],
//! with the proof that no stage reads a row before it is computed nor after
//! it is overwritten) keep each stage just behind the one before it, so a row
//! is read again while it is in L1.
//!
//! **Streamed.** A round also copies one row in, `wave + lead` (from the grid
//! and the snapshots, and the snapshots saved from it: the level-by-level
//! window copies, each clipped to that row), and one row of the centre out,
//! `wave - last lag`, once the last stage has computed it. So a round uses a
//! band of `band` rows, from the oldest row the last stage reads to the row
//! just copied in, and the window holds `rows_held` (three bands, down to two
//! where rows are large, [`WINDOW_BUDGET`])
//! rather than the whole tile: its first row is grid row `w_at0`, and when
//! the next row would not fit, the band's rows move to the front (one
//! `memmove` per level every `rows_held - band + 1` rounds). A tile can then
//! be as tall as a thread's chunk, with its halo along axis 0 recomputed once
//! per chunk, and the grid's rows are read and written once per sweep while
//! the band stays in L2. Inside a round the level pointers rotate per inner
//! step under names of their own (`_r`), reset at the start of every round;
//! the centre's rows go out from the levels as the sweep's last inner step
//! leaves them (`_wf`, `_tof`).

use std::rc::Rc;

use crate::analysis::tile::Wavefront;
use crate::back::c::writer::Writer;
use crate::ir::FieldId;

/// The most bytes a thread's window takes (every level) before it holds
/// fewer than three bands (never fewer than two): the band moves to the
/// front of the window more often then, but the window's rows stay in the
/// last-level cache. Rows of a 3-D wave are planes: three bands of them ran
/// slower than two (star3d1r 512³, T = 8, tiles of 64 × 512 points per
/// plane, 6.4 MiB per level against 3.5: 49-52 ms per iteration against
/// 38-48 on the 2-core development machine, `bench/NOTES.md`).
const WINDOW_BUDGET: u64 = 8 << 20;

/// How many rounds ahead of its copy a row of the grid is prefetched: a
/// round computes `T` rows of stages, microseconds, so one round would hide
/// DRAM latency; two leave room for the row's hundred-odd cache lines.
const PREFETCH_ROUNDS: u64 = 2;

impl Writer<'_> {
    /// `SDSL_PREFETCH(address, write)`: GCC's and Clang's prefetch into
    /// the caches, nothing elsewhere.
    pub(super) fn prefetch_macro(&mut self) {
        for line in [
            "#ifndef SDSL_PREFETCH",
            "#if defined(__GNUC__)",
            "#define SDSL_PREFETCH(address, write) __builtin_prefetch((address), (write), 2)",
            "#else",
            "#define SDSL_PREFETCH(address, write) ((void)(address))",
            "#endif",
            "#endif",
        ] {
            self.line(line);
        }
    }

    /// Prefetches of the grid's row `row` along axis 0 of every level the
    /// wave copies in (`out` false: over the window, for reading) or out
    /// (over the centre, for writing), a cache line (64 bytes) at a time.
    fn prefetch_row(&mut self, row: &str, out: bool) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let rank = shape.rank;
        let inner = rank - 1;
        let (lo_role, hi_role) = if out {
            ("c_lo", "c_hi")
        } else {
            ("w_lo", "w_hi")
        };
        let mut arrays = Vec::new();
        for &(f, lo, hi) in &self.tile_fields(out) {
            for t in lo..=hi {
                if self.dead_level(f, t, (lo, hi), out) {
                    continue;
                }
                let suffix = if out { "tof" } else { "in" };
                arrays.push((self.level_name(suffix, f, t), p.fields[f.0].ty.size_bytes()));
            }
        }
        if arrays.is_empty() {
            return;
        }
        self.open(&format!(
            "if ({row} >= {} && {row} <= {}) {{",
            n.axis_temp(lo_role, 0),
            n.axis_temp(hi_role, 0)
        ));
        for a in 1..inner {
            let i = n.axis_var(a);
            self.open(&format!(
                "for (long {i} = {}; {i} <= {}; {i}++) {{",
                n.axis_temp(lo_role, a),
                n.axis_temp(hi_role, a)
            ));
        }
        let x = n.axis_var(inner);
        let step = 64
            / arrays
                .iter()
                .map(|&(_, size)| size)
                .max()
                .unwrap_or(8)
                .max(1);
        self.open(&format!(
            "for (long {x} = {}; {x} <= {}; {x} += {step}) {{",
            n.axis_temp(lo_role, inner),
            n.axis_temp(hi_role, inner)
        ));
        let mut index = format!("({row})");
        for a in 1..rank {
            let c = n.axis_var(a);
            index = if a == 1 {
                format!("{index} * {} + {c}", n.grid_size(shape.grid, a))
            } else {
                format!("({index}) * {} + {c}", n.grid_size(shape.grid, a))
            };
        }
        for (array, _) in &arrays {
            self.line(&format!(
                "SDSL_PREFETCH(&{array}[{index}], {});",
                if out { 1 } else { 0 }
            ));
        }
        for _ in 0..rank {
            self.close("}");
        }
    }

    /// How far the wave's stages read above and below their rows along axis
    /// 0, at most: `(lead, below)`.
    fn wave_reach(&self) -> (u64, u64) {
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        let lead = shape.parts.iter().map(|part| part[0].1).max().unwrap_or(0);
        let below = shape.parts.iter().map(|part| part[0].0).max().unwrap_or(0);
        (lead, below)
    }

    /// The lag of the sweep's last stage as C (`tsteps`-dependent).
    fn last_lag_text(&self, wave: &Wavefront) -> String {
        let tsteps = self.names.temp("tsteps");
        let last_part = wave.lags.last().copied().unwrap_or(0);
        let steps = match wave.per_iteration {
            0 => String::new(),
            1 => format!("({tsteps} - 1)"),
            d => format!("({tsteps} - 1) * {d}"),
        };
        match (steps.is_empty(), last_part) {
            (true, l) => l.to_string(),
            (false, 0) => steps,
            (false, l) => format!("{steps} + {l}"),
        }
    }

    /// Declares a streamed wave's `band` (the rows a round uses) and
    /// `rows_held` (the rows its window holds, each of `row_bytes` over
    /// every level); returns the latter's name.
    pub(super) fn wave_band_lines(&mut self, row_bytes: &str) -> String {
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let wave = shape
            .wavefront()
            .expect("the plan takes the wavefront only where it applies");
        let (lead, below) = self.wave_reach();
        let (band, rows_held) = (n.temp("band"), n.temp("rows_held"));
        self.line(&format!(
            "const long {band} = {} + {}; /* rows a round of the wave uses: the last stage's \
             reads up to the row copied in */",
            self.last_lag_text(&wave),
            below + lead + 1
        ));
        self.line(&format!(
            "/* rows the window holds (the band slides down it): three bands, fewer past {} MiB */",
            WINDOW_BUDGET >> 20
        ));
        self.line(&format!(
            "const long {rows_held} = sdsl_max(2 * {band} + 1, sdsl_min(3 * {band} + 8, \
             {WINDOW_BUDGET} / ({row_bytes})));"
        ));
        rows_held
    }

    /// `ty *<level>_<name> = <level>_<from>;` for every level of `fields`.
    fn alias_levels(&mut self, fields: &[(FieldId, i32, i32)], name: &str, from: &str) {
        for &(f, lo, hi) in fields {
            let ty = crate::back::c::names::c_type(self.program.fields[f.0].ty);
            for t in lo..=hi {
                self.line(&format!(
                    "{ty} *{} = {};",
                    self.level_name(name, f, t),
                    self.level_name(from, f, t)
                ));
            }
        }
    }

    /// A tile's copies in, inner steps and copies out as one streamed wave
    /// along axis 0 with `wave`'s lags (see the module doc).
    pub(super) fn streamed_wave(&mut self, wave: &Wavefront) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let [tsteps, tstep, round, last_round] =
            ["tsteps", "tstep", "wave", "last_wave"].map(|role| n.temp(role));
        let [row_in, row_out, band, rows_held, keep] =
            ["row_in", "row_out", "band", "rows_held", "keep"].map(|role| n.temp(role));
        let (w_lo, w_hi, w_at) = (
            n.axis_temp("w_lo", 0),
            n.axis_temp("w_hi", 0),
            n.axis_temp("w_at", 0),
        );
        let stride = n.grid_stride(shape.grid, 0);
        let (lead, _) = self.wave_reach();
        let per_iteration = wave.per_iteration;
        let last_lag = self.last_lag_text(wave);
        let last_lag_term = if last_lag.contains(" + ") {
            format!("({last_lag})")
        } else {
            last_lag.clone()
        };
        let window_fields = self.tile_fields(false);
        let written = self.tile_fields(true);
        self.line(&format!(
            "/* the tile as a wave along axis 0: in round {round}, part p of inner step {tstep} \
             computes\n   its row {round} - {tstep} * {per_iteration} - lag[p] (lag: {}), by \
             when every row it reads is computed\n   and none is overwritten yet \
             (schedule::cpu_tile::TileShape::wavefront); row {round} + {lead} comes in first, \
             the centre's\n   row {round} - {last_lag_term} goes out last */",
            wave.lags
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        self.line(&format!("const long {last_round} = {w_hi} + {last_lag};"));
        self.line(&format!(
            "long {w_at} = {w_lo}; /* the grid row of the window's first row */"
        ));
        self.line(
            "/* the levels as the sweep's last inner step leaves them, for the centre out */",
        );
        self.alias_levels(&window_fields, "wf", "w");
        self.alias_levels(&written, "tof", "to");
        self.open(&format!(
            "for (long {tstep} = 1; {tstep} < {tsteps}; {tstep}++) {{"
        ));
        self.rotate_names(&window_fields, "wf");
        self.rotate_names(&written, "tof");
        self.close("}");
        self.sliding = true;
        self.open(&format!(
            "for (long {round} = {w_lo} - {lead}; {round} <= {last_round}; {round}++) {{"
        ));
        self.line(&format!("const long {row_in} = {round} + {lead};"));
        self.open(&format!("if ({row_in} - {w_at} >= {rows_held}) {{"));
        self.line("/* the band's rows to the front of the window */");
        self.line(&format!("const long {keep} = {row_in} - {band} + 1;"));
        for &(f, lo, hi) in &window_fields {
            let ty = crate::back::c::names::c_type(p.fields[f.0].ty);
            for t in lo..=hi {
                let level = self.level_name("w", f, t);
                self.line(&format!(
                    "memmove({level}, {level} + ({keep} - {w_at}) * {stride}, (size_t)({row_in} - {keep}) * {stride} * sizeof({ty}));"
                ));
            }
        }
        self.line(&format!("{w_at} = {keep};"));
        self.close("}");
        self.line(&format!(
            "/* the row {row_in} in, from the grid and the snapshots */"
        ));
        self.stream_row = Some(row_in.clone());
        self.window_in();
        self.stream_row = None;
        self.line(&format!(
            "/* the grid's rows {PREFETCH_ROUNDS} rounds ahead into the cache: the row in, the \
             centre's row out */"
        ));
        self.prefetch_row(&format!("{row_in} + {PREFETCH_ROUNDS}"), false);
        self.prefetch_row(
            &format!("{round} + {PREFETCH_ROUNDS} - {last_lag_term}"),
            true,
        );
        self.wave_round_steps(wave);
        let full = n.temp("full");
        self.line(&format!(
            "/* the centre's row {row_out} out, every level of the fields written ({full}: also \
             those the next sweep overwrites first) */"
        ));
        self.line(&format!(
            "const long {row_out} = {round} - {last_lag_term};"
        ));
        self.stream_row = Some(row_out);
        self.copy_centre_out("wf", "tof");
        self.stream_row = None;
        self.close("}");
        self.sliding = false;
    }

    /// In a round of a streamed wave: every inner step's parts, each over
    /// its row of the round (the round less the step's and the part's lag),
    /// clipped to the tile grown by the reach of what runs after it.
    fn wave_round_steps(&mut self, wave: &Wavefront) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let [tsteps, tstep, tleft, round, row] =
            ["tsteps", "tstep", "tleft", "wave", "row"].map(|role| n.temp(role));
        let window_fields = self.tile_fields(false);
        let tstep_lag = match wave.per_iteration {
            0 => String::new(),
            1 => tstep.clone(),
            d => format!("{tstep} * {d}"),
        };
        let lag_of = |part_lag: u64| -> String {
            match part_lag {
                0 => tstep_lag.clone(),
                l if tstep_lag.is_empty() => l.to_string(),
                l => format!("{tstep_lag} + {l}"),
            }
        };
        self.alias_levels(&window_fields, "r", "w");
        self.open(&format!(
            "for (long {tstep} = 0; {tstep} < {tsteps}; {tstep}++) {{"
        ));
        self.line(&format!("const long {tleft} = {tsteps} - 1 - {tstep};"));
        let iterate = p.iterate.as_ref().expect("an iterate");
        let mut part_index = 0;
        for stencil in &iterate.stencils {
            for part in &stencil.parts {
                let mut clip = self.part_clip(part_index);
                let lag = lag_of(wave.lags[part_index]);
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
    }
}
