//! Copies between the grid and a time tile's scratch window in the generated
//! C (see [`crate::back::c::timetile`]): the window's rows in, the centre's
//! rows of the written fields back in place, and the levels a part overwrites
//! before reading them, copied only outside its subset.

use std::rc::Rc;

use crate::back::c::names;
use crate::back::c::writer::Writer;
use crate::ir::FieldId;

impl Writer<'_> {
    /// The whole window in from the grid (the written fields only over
    /// this chunk's rows, the rest comes from the snapshots).
    pub(super) fn copy_rows_in(&mut self) {
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let all = self.tile_fields(false);
        let (written, read_only): (Vec<_>, Vec<_>) = all
            .into_iter()
            .partition(|(f, _, _)| shape.written.contains(f));
        let window_roles = vec![("w_lo", "w_hi"); shape.rank];
        if !read_only.is_empty() {
            self.copy_rows_of(&read_only, &window_roles, ("w", "in"), false);
        }
        let mut clipped = window_roles;
        if let Some(k) = self.chunk_axis() {
            clipped[k] = ("r_lo", "r_hi");
        }
        self.copy_rows_of(&written, &clipped, ("w", "in"), false);
    }

    /// The centre of the written fields out, in place, from the window's
    /// levels named with `window` into the grid's named with `to` (a wave's
    /// final names, `wf` and `tof`, or the rotated `w` and `to`).
    pub(super) fn copy_centre_out(&mut self, window: &str, to: &str) {
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let fields = self.tile_fields(true);
        let roles = vec![("c_lo", "c_hi"); shape.rank];
        self.copy_rows_of(&fields, &roles, (window, to), true);
    }

    /// Whether level `t` of a field with levels `lo..=hi` is one a part
    /// overwrites before reading it ([`crate::analysis::tile::TileShape::dead`]):
    /// as copied in (`out` false), or as labelled after the run function's
    /// rotation once written back (`t` becomes `t - 1`, the lowest the highest).
    pub(super) fn dead_level(&self, f: FieldId, t: i32, (lo, hi): (i32, i32), out: bool) -> bool {
        let (shape, _) = self.tiling.as_ref().expect("a time tiling");
        let label = match (out, t == lo) {
            (false, _) => t,
            (true, true) => hi,
            (true, false) => t - 1,
        };
        shape.dead.iter().any(|&(df, dt, _)| df == f && dt == label)
    }

    /// [`Self::copy_rows_in`] and [`Self::copy_centre_out`] for `fields`,
    /// over the box named by `roles` per axis, between the levels named with
    /// `suffixes` (window, grid).
    pub(super) fn copy_rows_of(
        &mut self,
        fields: &[(FieldId, i32, i32)],
        roles: &[(&'static str, &'static str)],
        suffixes: (&str, &str),
        out: bool,
    ) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let (shape, _) = self.tiling.clone().expect("a time tiling");
        let grid = shape.grid;
        let rank = shape.rank;
        let axis = |role: &'static str, a: usize| n.axis_temp(role, a);
        let inner = rank - 1;
        for (a, &(lo, hi)) in roles.iter().enumerate().take(inner) {
            let i = n.axis_var(a);
            let (lo, hi) = self.streamed_bounds(a, axis(lo, a), axis(hi, a));
            self.open(&format!("for (long {i} = {lo}; {i} <= {hi}; {i}++) {{"));
        }
        let (inner_lo, inner_hi) = roles[inner];
        // Grid index (Horner form over the sizes) and window index.
        let mut global = String::new();
        for a in 0..rank {
            let c = if a == inner {
                axis(inner_lo, a)
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
                if a == inner {
                    if inner_lo == "w_lo" {
                        // Rows of the window start at its origin.
                        String::new()
                    } else {
                        format!("{} - {}", axis(inner_lo, a), self.window_origin(a))
                    }
                } else {
                    format!(
                        "({} - {}) * {}",
                        n.axis_var(a),
                        self.window_origin(a),
                        n.grid_stride(grid, a)
                    )
                }
            })
            .filter(|s| !s.is_empty())
            .collect();
        let local = if local.is_empty() {
            "0".to_string()
        } else {
            local.join(" + ")
        };
        let count = format!(
            "(size_t)({} - {} + 1)",
            axis(inner_hi, inner),
            axis(inner_lo, inner)
        );
        let full = n.temp("full");
        for &(f, flo, fhi) in fields {
            let ty = names::c_type(p.fields[f.0].ty);
            for t in flo..=fhi {
                let dead = self.dead_level(f, t, (flo, fhi), out);
                if dead && !out {
                    continue;
                }
                let guard = if dead {
                    format!("if ({full}) ")
                } else {
                    String::new()
                };
                let (w, g) = (
                    self.level_name(suffixes.0, f, t),
                    self.level_name(suffixes.1, f, t),
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
    pub(super) fn copy_dead_level_in(&mut self, f: FieldId, t: i32, part_index: usize) {
        self.copy_outside_subset(f, t, part_index, false);
    }

    /// Copies level `t` of `f` outside the subset of the part that writes it
    /// first: into the window (`out` false, over the window), or from the
    /// window into the `_to` level (over the centre: the points the next sweep
    /// copies in, which the second set must hold too).
    pub(super) fn copy_outside_subset(&mut self, f: FieldId, t: i32, part_index: usize, out: bool) {
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
        let chunk_axis = self.chunk_axis();
        let roles = |a: usize| -> (&'static str, &'static str) {
            if out {
                ("c_lo", "c_hi")
            } else if chunk_axis == Some(a) {
                ("r_lo", "r_hi")
            } else {
                ("w_lo", "w_hi")
            }
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
            let (lo, hi) = self.streamed_bounds(a, axis(roles(a).0, a), axis(roles(a).1, a));
            self.open(&format!("for (long {i} = {lo}; {i} <= {hi}; {i}++) {{"));
        }
        // The window row and the grid row of the current outer coordinates,
        // at inner coordinate `x`.
        let origins: Vec<String> = (0..rank).map(|a| self.window_origin(a)).collect();
        let window_at = |x: &str| {
            let mut terms: Vec<String> = (0..inner)
                .map(|a| {
                    format!(
                        "({} - {}) * {}",
                        n.axis_var(a),
                        origins[a],
                        n.grid_stride(grid, a)
                    )
                })
                .collect();
            terms.push(format!("{x} - {}", origins[inner]));
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
        let (w_lo, w_hi) = (axis(roles(inner).0, inner), axis(roles(inner).1, inner));
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
}
