//! In-place time tiling: the snapshots that let every tile write its centre
//! straight back into the grid's level buffers.
//!
//! A tile's window reads, around its centre, points of the neighbouring
//! tiles as they were before the sweep. Tiles that run later still hold those
//! values in the grid; tiles that ran earlier have overwritten them. So each
//! OpenMP thread takes a contiguous run of tile rows along the outermost tiled
//! axis `k` (its *chunk*) and walks its tiles in lexicographic order; a point
//! of the window belongs to an earlier tile exactly when, on the first axis
//! `a` where the two tiles differ, the point's tile comes before. Before a
//! tile overwrites anything it saves, per tiled axis `a`, the last
//! `T × reach below` rows of its centre along `a` (its centre on the other
//! axes) into that axis's **ring**, and a later tile fills the rows below its
//! centre along `a` (its centre on the axes before `a`, its whole window on
//! the axes after) from the ring instead of the grid. A ring holds
//! `T × reach + tile` rows along `a`, indexed modulo that count: the rows a
//! tile reads and the rows the tiles of its own row save meanwhile never share
//! a slot, and tiles thinner than the halo work too. Two rings need only the
//! `T × reach` rows of the halo: the innermost axis's, where the next tile to
//! save is the next along that axis and each tile reads its halo before it
//! saves (per row, in a streamed wave), and the chunk axis's when a thread's
//! chunk is one tile row (it then holds only the rows above the chunk; a tile
//! saves its last rows only for a next tile row of its own chunk). Along `k` the rows next to
//! the chunk belong to another thread: before any tile is written (an
//! `omp barrier`), each thread copies the rows above its chunk into its `k`
//! ring and the rows below into a **below** buffer, and afterwards reads the
//! written fields of the grid only inside its chunk. Every level of every
//! written field is snapshotted (a level that a stencil overwrites first is
//! copied whole too: its inside is never read, its rim is).
//!
//! The snapshots of a thread are a few rows of the grid (at 16384², T = 8 and
//! tiles 32 rows deep, 2.6 MiB per level against the 1 GiB of a second grid;
//! 6.8 MiB with tiles 96 deep), so a run no
//! longer pays the first touch of a second set of buffers nor a copy back.

use std::rc::Rc;

use crate::back::c::names;
use crate::back::c::writer::Writer;
use crate::ir::FieldId;

/// An array the sweep copies boxes between, indexed by grid coordinates.
pub(super) struct BoxArray {
    /// The typed pointer to element 0.
    pub(super) base: String,
    /// Per axis, the grid coordinate of its first element.
    pub(super) origin: Vec<String>,
    /// Per axis, its elements.
    pub(super) extent: Vec<String>,
    /// The axis indexed modulo its extent (a ring), if any.
    pub(super) ring: Option<usize>,
}

impl BoxArray {
    /// The linear index of the point at `coords` (Horner form over the extents).
    fn index(&self, coords: &[String]) -> String {
        let mut text = String::new();
        for (a, c) in coords.iter().enumerate() {
            let term = if self.ring == Some(a) {
                if c.contains(' ') {
                    format!("({c}) % {}", self.extent[a])
                } else {
                    format!("{c} % {}", self.extent[a])
                }
            } else if self.origin[a] == "0" {
                c.clone()
            } else {
                format!("{c} - {}", self.origin[a])
            };
            text = if a == 0 {
                term
            } else {
                let outer = if text.contains(' ') {
                    format!("({text})")
                } else {
                    text
                };
                let term = if term.contains('%') {
                    format!("({term})")
                } else {
                    term
                };
                format!("{outer} * {} + {term}", self.extent[a])
            };
        }
        text
    }
}

/// One copy of a box: the element type, destination and source.
pub(super) struct BoxCopy {
    pub(super) ty: &'static str,
    pub(super) dst: BoxArray,
    pub(super) src: BoxArray,
}

/// Which snapshot a level's array is.
#[derive(Clone, Copy)]
pub(super) enum Snapshot {
    /// The ring of rows along an axis.
    Ring(usize),
    /// The rows below the thread's chunk.
    Below,
}

impl Writer<'_> {
    /// Copies the box `lo..=hi` (per axis, outermost first) for every copy,
    /// a row (`memcpy`) at a time; a row along an innermost ring axis in two
    /// pieces, before and after the ring wraps. Nothing when the box is empty.
    pub(super) fn copy_boxes(&mut self, lo: &[String], hi: &[String], copies: &[BoxCopy]) {
        let n = Rc::clone(&self.names);
        let rank = lo.len();
        let inner = rank - 1;
        self.open("{");
        let bounds: Vec<String> = (0..rank)
            .map(|a| {
                let (lo, hi) = self.streamed_bounds(a, lo[a].clone(), hi[a].clone());
                format!(
                    "{} = {lo}, {} = {hi}",
                    n.axis_temp("b_lo", a),
                    n.axis_temp("b_hi", a),
                )
            })
            .collect();
        self.line(&format!("const long {};", bounds.join(", ")));
        let nonempty: Vec<String> = (0..rank)
            .map(|a| format!("{} <= {}", n.axis_temp("b_lo", a), n.axis_temp("b_hi", a)))
            .collect();
        self.open(&format!("if ({}) {{", nonempty.join(" && ")));
        for a in 0..inner {
            let i = n.axis_var(a);
            self.open(&format!(
                "for (long {i} = {}; {i} <= {}; {i}++) {{",
                n.axis_temp("b_lo", a),
                n.axis_temp("b_hi", a)
            ));
        }
        let mut coords: Vec<String> = (0..inner).map(|a| n.axis_var(a)).collect();
        let (b_lo, b_hi, b_cut) = (
            n.axis_temp("b_lo", inner),
            n.axis_temp("b_hi", inner),
            n.axis_temp("b_cut", inner),
        );
        let ring_extent = copies.iter().find_map(|copy| {
            [&copy.dst, &copy.src]
                .into_iter()
                .find(|array| array.ring == Some(inner))
                .map(|array| array.extent[inner].clone())
        });
        if let Some(rows) = &ring_extent {
            // The box is at most a ring's length, so it wraps at most once:
            // two contiguous copies rather than a `%` per element.
            self.line(&format!(
                "const long {b_cut} = sdsl_min({b_hi}, {b_lo} - {b_lo} % {rows} + {rows} - 1); \
                 /* the last point before the ring wraps */"
            ));
        }
        for copy in copies {
            // One contiguous row piece: `count` elements from `start` on the innermost axis.
            let memcpy_line = |coords: &mut Vec<String>, start: String, count: &str| {
                coords.push(start);
                let line = format!(
                    "memcpy(&{}[{}], &{}[{}], (size_t)({count}) * sizeof({}));",
                    copy.dst.base,
                    copy.dst.index(coords),
                    copy.src.base,
                    copy.src.index(coords),
                    copy.ty
                );
                coords.pop();
                line
            };
            let ring_inner = copy.dst.ring == Some(inner) || copy.src.ring == Some(inner);
            if ring_inner {
                let pieces = [
                    (b_lo.clone(), format!("{b_cut} - {b_lo} + 1"), None),
                    (
                        format!("{b_cut} + 1"),
                        format!("{b_hi} - {b_cut}"),
                        Some(format!("{b_cut} < {b_hi}")),
                    ),
                ];
                for (start, count, guard) in pieces {
                    let copy_line = memcpy_line(&mut coords, start, &count);
                    match guard {
                        None => self.line(&copy_line),
                        Some(guard) => self.line(&format!("if ({guard}) {copy_line}")),
                    }
                }
            } else {
                let line = memcpy_line(&mut coords, b_lo.clone(), &format!("{b_hi} - {b_lo} + 1"));
                self.line(&line);
            }
        }
        for _ in 0..inner {
            self.close("}");
        }
        self.close("}");
        self.close("}");
    }

    /// The levels the snapshots hold: every level of every written field.
    pub(super) fn snapshot_levels(&self) -> Vec<(FieldId, i32)> {
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        shape
            .written
            .iter()
            .flat_map(|&f| {
                let field = &self.program.fields[f.0];
                (field.time_lo..=field.time_hi).map(move |t| (f, t))
            })
            .collect()
    }

    /// The axes that have a ring: tiled, and read below the point.
    pub(super) fn ring_axes(&self) -> Vec<usize> {
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        let reach = shape.iteration_reach();
        (0..shape.rank)
            .filter(|&a| !shape.whole[a] && reach[a].0 > 0)
            .collect()
    }

    /// The axis threads split their tiles along: the outermost tiled one.
    pub(super) fn chunk_axis(&self) -> Option<usize> {
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        (0..shape.rank).find(|&a| !shape.whole[a])
    }

    /// Whether the rows below a thread's chunk are snapshotted (the
    /// iteration reads above the point along the chunk axis).
    pub(super) fn has_below(&self) -> bool {
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        self.chunk_axis()
            .is_some_and(|k| shape.iteration_reach()[k].1 > 0)
    }

    /// `tsteps * r` (the halo of a sweep on one side of an axis).
    pub(super) fn halo_text(&self, per_step: u64) -> String {
        let tsteps = self.names.temp("tsteps");
        match per_step {
            1 => tsteps,
            r => format!("{tsteps} * {r}"),
        }
    }

    /// The tile size along axis `a` as C (the grid size for a whole axis).
    pub(super) fn tile_extent(&self, a: usize) -> String {
        let (shape, tiling) = self.tiling.as_ref().expect("a time tiling");
        let size = self.names.grid_size(shape.grid, a);
        if shape.whole[a] {
            size
        } else {
            format!("sdsl_min({}, {size})", tiling.tile[a])
        }
    }

    /// Per axis the extent of a snapshot, as C.
    pub(super) fn snapshot_extent(&self, which: Snapshot) -> Vec<String> {
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        let reach = shape.iteration_reach();
        (0..shape.rank)
            .map(|b| match which {
                Snapshot::Ring(a) if b < a => self.tile_extent(b),
                Snapshot::Ring(a) if b == a => n.axis_temp("ring_rows", a),
                Snapshot::Below if Some(b) == self.chunk_axis() => self.halo_text(reach[b].1),
                _ => n.grid_size(shape.grid, b),
            })
            .collect()
    }

    /// The array of level `t` of `f` in a snapshot.
    pub(super) fn snapshot_array(&self, which: Snapshot, f: FieldId, t: i32) -> BoxArray {
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        let origin = (0..shape.rank)
            .map(|b| match which {
                Snapshot::Ring(a) if b < a && !shape.whole[b] => n.axis_temp("c_lo", b),
                Snapshot::Below if Some(b) == self.chunk_axis() => {
                    format!("({} + 1)", n.temp("chunk_hi"))
                }
                _ => "0".to_string(),
            })
            .collect();
        let suffix = match which {
            Snapshot::Ring(0) => "ring0",
            Snapshot::Ring(1) => "ring1",
            Snapshot::Ring(_) => "ring2",
            Snapshot::Below => "below",
        };
        BoxArray {
            base: self.level_name(suffix, f, t),
            origin,
            extent: self.snapshot_extent(which),
            ring: match which {
                Snapshot::Ring(a) => Some(a),
                Snapshot::Below => None,
            },
        }
    }

    /// The grid's array of level `t` of `f` (the sweep's `_in` pointer).
    pub(super) fn grid_array(&self, f: FieldId, t: i32) -> BoxArray {
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        BoxArray {
            base: self.level_name("in", f, t),
            origin: vec!["0".to_string(); shape.rank],
            extent: (0..shape.rank)
                .map(|a| self.names.grid_size(shape.grid, a))
                .collect(),
            ring: None,
        }
    }

    /// The window's array of level `t` of `f`.
    pub(super) fn window_array(&self, f: FieldId, t: i32) -> BoxArray {
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        BoxArray {
            base: self.level_name("w", f, t),
            origin: (0..shape.rank).map(|a| self.window_origin(a)).collect(),
            extent: (0..shape.rank)
                .map(|a| {
                    format!(
                        "({} - {} + 1)",
                        n.axis_temp("w_hi", a),
                        n.axis_temp("w_lo", a)
                    )
                })
                .collect(),
            ring: None,
        }
    }

    /// Copies of every snapshotted level between two kinds of arrays.
    fn snapshot_copies(
        &self,
        dst: impl Fn(FieldId, i32) -> BoxArray,
        src: impl Fn(FieldId, i32) -> BoxArray,
    ) -> Vec<BoxCopy> {
        self.snapshot_levels()
            .into_iter()
            .map(|(f, t)| BoxCopy {
                ty: names::c_type(self.program.fields[f.0].ty),
                dst: dst(f, t),
                src: src(f, t),
            })
            .collect()
    }

    /// Before the barrier: the rows above the chunk into the chunk axis's
    /// ring, the rows below into the below buffer.
    pub(super) fn snapshot_chunk_edges(&mut self) {
        let n = Rc::clone(&self.names);
        let Some(k) = self.chunk_axis() else {
            return;
        };
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let reach = shape.iteration_reach();
        let size = |a: usize| n.grid_size(shape.grid, a);
        let full_lo: Vec<String> = vec!["0".to_string(); shape.rank];
        let full_hi: Vec<String> = (0..shape.rank)
            .map(|a| format!("{} - 1", size(a)))
            .collect();
        let (first_row, end_row) = (n.temp("first_row"), n.temp("end_row"));
        let (chunk_lo, chunk_hi) = (n.temp("chunk_lo"), n.temp("chunk_hi"));
        if self.ring_axes().contains(&k) {
            self.line("/* the rows above the chunk, which the thread before may overwrite */");
            self.open(&format!("if ({first_row} > 0) {{"));
            let (mut lo, mut hi) = (full_lo.clone(), full_hi.clone());
            lo[k] = format!("sdsl_max({chunk_lo} - {}, 0)", self.halo_text(reach[k].0));
            hi[k] = format!("{chunk_lo} - 1");
            let copies = self.snapshot_copies(
                |f, t| self.snapshot_array(Snapshot::Ring(k), f, t),
                |f, t| self.grid_array(f, t),
            );
            self.copy_boxes(&lo, &hi, &copies);
            self.close("}");
        }
        if self.has_below() {
            self.line("/* the rows below the chunk, which the thread after may overwrite */");
            self.open(&format!("if ({end_row} < {}) {{", n.axis_temp("tn", k)));
            let (mut lo, mut hi) = (full_lo, full_hi);
            lo[k] = format!("{chunk_hi} + 1");
            hi[k] = format!(
                "sdsl_min({chunk_hi} + {}, {} - 1)",
                self.halo_text(reach[k].1),
                size(k)
            );
            let copies = self.snapshot_copies(
                |f, t| self.snapshot_array(Snapshot::Below, f, t),
                |f, t| self.grid_array(f, t),
            );
            self.copy_boxes(&lo, &hi, &copies);
            self.close("}");
        }
    }

    /// In a tile, after the window is read from the grid: the rows that
    /// earlier tiles (or the next thread) overwrote, from the snapshots.
    pub(super) fn patch_window_from_snapshots(&mut self) {
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let axis = |role: &'static str, a: usize| n.axis_temp(role, a);
        for a in self.ring_axes() {
            let lo: Vec<String> = (0..shape.rank)
                .map(|b| axis(if b < a { "c_lo" } else { "w_lo" }, b))
                .collect();
            let mut hi: Vec<String> = (0..shape.rank)
                .map(|b| axis(if b < a { "c_hi" } else { "w_hi" }, b))
                .collect();
            hi[a] = format!("{} - 1", axis("c_lo", a));
            self.line(&format!(
                "/* below the centre along axis {a}: rows earlier tiles overwrote, from their snapshots */"
            ));
            let copies = self.snapshot_copies(
                |f, t| self.window_array(f, t),
                |f, t| self.snapshot_array(Snapshot::Ring(a), f, t),
            );
            self.copy_boxes(&lo, &hi, &copies);
        }
        if self.has_below() {
            let k = self.chunk_axis().expect("a chunk axis");
            let lo: Vec<String> = (0..shape.rank)
                .map(|b| {
                    if b == k {
                        format!("{} + 1", n.temp("chunk_hi"))
                    } else {
                        axis("w_lo", b)
                    }
                })
                .collect();
            let hi: Vec<String> = (0..shape.rank).map(|b| axis("w_hi", b)).collect();
            self.line(
                "/* below the chunk: the next thread's rows as they were before the sweep */",
            );
            let copies = self.snapshot_copies(
                |f, t| self.window_array(f, t),
                |f, t| self.snapshot_array(Snapshot::Below, f, t),
            );
            self.copy_boxes(&lo, &hi, &copies);
        }
    }

    /// In a tile, before it computes: the last rows of its centre along each
    /// ring axis, for the tiles after it.
    pub(super) fn save_centre_edges(&mut self) {
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let reach = shape.iteration_reach();
        let axis = |role: &'static str, a: usize| n.axis_temp(role, a);
        for a in self.ring_axes() {
            let mut lo: Vec<String> = (0..shape.rank).map(|b| axis("c_lo", b)).collect();
            let hi: Vec<String> = (0..shape.rank).map(|b| axis("c_hi", b)).collect();
            lo[a] = format!(
                "sdsl_max({}, {} - {} + 1)",
                axis("c_lo", a),
                axis("c_hi", a),
                self.halo_text(reach[a].0)
            );
            self.line(&format!(
                "/* the centre's last rows along axis {a}, as they are before this tile writes them */"
            ));
            // Along the chunk axis the next tile row may be the next thread's,
            // which took its rows above before the barrier.
            let next_is_ours = if self.chunk_axis() == Some(a) {
                n.temp("end_row")
            } else {
                axis("tn", a)
            };
            self.open(&format!("if ({} + 1 < {next_is_ours}) {{", axis("ti", a)));
            let copies = self.snapshot_copies(
                |f, t| self.snapshot_array(Snapshot::Ring(a), f, t),
                |f, t| self.window_array(f, t),
            );
            self.copy_boxes(&lo, &hi, &copies);
            self.close("}");
        }
    }
}
