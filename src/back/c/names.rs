//! Names in the generated C: everything is named after the program's own
//! parameters, grids, fields and stencils, so that the output reads like the source.

use std::collections::HashSet;

use crate::ir::{
    ConstId, FieldId, GridId, ParamId, Program, ReductionId, ScalarType, StencilPart, Stmt, TableId,
};
use crate::kir::names::{identifier, Entity, Namer};

/// Roles of the generated C's own variables that there is one of per scope.
const TEMPS: &[&str] = &[
    "shadow",
    "done",
    "value",
    "row",
    "rows",
    "r",
    "partials",
    "point",
    "result",
    "iter",
    "stop",
    "max_iters",
    "check_every",
    "summary",
    "oldest",
    "status",
    "reach",
    "params_f",
    "params_i",
    "levels",
    "counts",
    "reductions_f",
    "reductions_i",
    "stencil",
    "part",
    "box",
    "interrupt",
    "scratch",
];

/// Per-axis roles (`i0`, `lo0`, `hi0`, `in_lo0`, `in_hi0`, and time tiling's
/// tile centre `c_lo0`..`c_hi0`, window `w_lo0`..`w_hi0`, tile counts `tn0`
/// and tile index `ti0`, the window's rows read from the grid `r_lo0`..`r_hi0`,
/// a copied box `b_lo0`..`b_hi0`, the snapshot rings `ring0`, their rows
/// `ring_rows0` and bytes per level `ring_bytes0`, and the grid row of a
/// streamed window's first row `w_at0`), for up to 3 axes.
const AXIS_TEMPS: &[&str] = &[
    "i",
    "lo",
    "hi",
    "in_lo",
    "in_hi",
    "c_lo",
    "c_hi",
    "w_lo",
    "w_hi",
    "tn",
    "ti",
    "s_lo",
    "s_hi",
    "r_lo",
    "r_hi",
    "b_lo",
    "b_hi",
    "b_cut",
    "ring",
    "ring_rows",
    "ring_bytes",
    "w_at",
    "w_s",
    "src_s",
    "src_o",
    "dst_s",
    "dst_o",
];

/// Time tiling's variables of the sweep function, which also holds the parts'
/// locals (so registered before them).
const TILE_TEMPS: &[&str] = &[
    "tile",
    "ntiles",
    "tsteps",
    "tstep",
    "tleft",
    "window",
    "window_points",
    "level_bytes",
    "failed",
    "full",
    "me",
    "team",
    "first_row",
    "end_row",
    "per_row",
    "chunk_lo",
    "chunk_hi",
    "below",
    "below_bytes",
    "broken",
    "wave",
    "last_wave",
    "row",
    "row_in",
    "row_out",
    "band",
    "rows_held",
    "keep",
    "msteps",
    "left",
    "stage",
    "plane",
    "plane_points",
    "plane_bytes",
    "plane_floats",
    "rings",
    "prev",
    "first",
    "last",
    "fill",
    "src_q",
    "dst_q",
    "src",
    "dst",
    "share",
    "out_share",
    "ahead_lo",
    "ahead_hi",
    "out_lo",
    "out_hi",
    "next_in",
    "next_out",
];

/// Per-level roles of time tiling (`a_t0_in`, `a_t0_out`, `a_t0_w`, `a_t0_r`, `a_t0_to`,
/// `a_t0_ring0`..`a_t0_ring2`, `a_t0_below`, and a wave's final levels `a_t0_wf`, `a_t0_tof`): the entity's role and the name's suffix.
const LEVEL_TEMPS: &[(&str, &str)] = &[
    ("level_in", "in"),
    ("level_out", "out"),
    ("level_window", "w"),
    ("level_round", "r"),
    ("level_to", "to"),
    ("level_ring0", "ring0"),
    ("level_ring1", "ring1"),
    ("level_ring2", "ring2"),
    ("level_below", "below"),
    ("level_final", "wf"),
    ("level_final_to", "tof"),
    ("level_planes", "z"),
];

/// Per-field roles of the embedded host wrapper (`a_count`, `a_levels`, `a_bytes`):
/// the entity's role (apart from the one-per-scope roles) and the name's suffix.
const FIELD_TEMPS: &[(&str, &str)] = &[
    ("field_count", "count"),
    ("field_levels", "levels"),
    ("field_bytes", "bytes"),
];

/// Every name of one program's C, from the one [`Namer`]: file-scope symbols
/// (prefixed with the program's name), then the program's own entities under
/// their own names, then names derived from them (`a_t0`, `g_n0`), then the
/// generated code's temporaries. All are distinct, so no scope can shadow another.
#[derive(Debug)]
pub(super) struct CNames {
    namer: Namer,
    /// Per field, the flat index of its lowest level over all fields' levels.
    level_base: Vec<usize>,
    /// The names a stencil function's scope holds (everything but the run
    /// function's, entry point's and reduction functions' own temporaries),
    /// which a part's locals avoid.
    stencil_scope: Namer,
}

impl CNames {
    /// Names every entity of `program`.
    pub(super) fn new(program: &Program) -> CNames {
        let prefix = identifier(&program.name);
        let mut namer = Namer::new();
        for symbol in ["run", "entry", "summary", "sweep", "march", "sdsl", "part"] {
            namer.take(&format!("{prefix}_{symbol}"));
        }
        let mut file_scope = |entity: Entity, kind: &str, name: &str| {
            namer.name(entity, &format!("{prefix}_{kind}_{name}"));
        };
        for (t, table) in program.tables.iter().enumerate() {
            file_scope(Entity::Table(TableId(t)), "table", &table.name);
        }
        if let Some(iterate) = &program.iterate {
            for (s, stencil) in iterate.stencils.iter().enumerate() {
                file_scope(Entity::Stencil(s), "stencil", &stencil.name);
            }
            for (r, reduction) in iterate.reductions.iter().enumerate() {
                file_scope(Entity::Temp("reduce", r), "reduce", &reduction.name);
            }
        }
        for (i, p) in program.params.iter().enumerate() {
            namer.name(Entity::Param(ParamId(i)), &p.name);
        }
        for (i, c) in program.constants.iter().enumerate() {
            namer.name(Entity::Const(ConstId(i)), &c.name);
        }
        for (i, f) in program.fields.iter().enumerate() {
            namer.name(Entity::Field(FieldId(i)), &f.name);
        }
        if let Some(iterate) = &program.iterate {
            for (r, reduction) in iterate.reductions.iter().enumerate() {
                namer.name(Entity::Reduction(ReductionId(r)), &reduction.name);
            }
        }
        for (f, field) in program.fields.iter().enumerate() {
            // Derived from the program's name, not from the field's C name:
            // a field `local` is `local_`, its levels `local_t0`.
            let base = &field.name;
            for t in field.time_lo..=field.time_hi {
                let hint = if t < 0 {
                    format!("{base}_tm{}", -t)
                } else {
                    format!("{base}_t{t}")
                };
                namer.name(Entity::Level(FieldId(f), t), &hint);
            }
            for (role, suffix) in FIELD_TEMPS {
                namer.name(Entity::Temp(role, f), &format!("{base}_{suffix}"));
            }
        }
        let mut level_base = Vec::new();
        let mut flat = 0;
        for field in &program.fields {
            level_base.push(flat);
            for t in field.time_lo..=field.time_hi {
                let hint = if t < 0 {
                    format!("{}_tm{}", field.name, -t)
                } else {
                    format!("{}_t{t}", field.name)
                };
                for (role, suffix) in LEVEL_TEMPS {
                    namer.name(Entity::Temp(role, flat), &format!("{hint}_{suffix}"));
                }
                flat += 1;
            }
        }
        for (g, grid) in program.grids.iter().enumerate() {
            let base = identifier(&grid.name);
            for axis in 0..grid.rank() {
                namer.name(
                    Entity::GridSize(GridId(g), axis),
                    &format!("{base}_n{axis}"),
                );
                namer.name(
                    Entity::GridStride(GridId(g), axis),
                    &format!("{base}_s{axis}"),
                );
            }
            namer.name(Entity::GridPoint(GridId(g)), &format!("{base}_p"));
        }
        for axis in 0..3 {
            for role in AXIS_TEMPS {
                namer.name(Entity::Temp(role, axis), &format!("{role}{axis}"));
            }
        }
        for role in TILE_TEMPS {
            namer.name(Entity::Temp(role, 0), role);
        }
        let stencil_scope = namer.clone();
        for role in TEMPS {
            namer.name(Entity::Temp(role, 0), role);
        }
        CNames {
            namer,
            level_base,
            stencil_scope,
        }
    }

    fn get(&self, entity: Entity) -> String {
        self.namer.get(&entity).to_string()
    }

    /// A parameter.
    pub(super) fn param(&self, p: usize) -> String {
        self.get(Entity::Param(ParamId(p)))
    }

    /// A constant.
    pub(super) fn constant(&self, c: usize) -> String {
        self.get(Entity::Const(ConstId(c)))
    }

    /// A field's array of time levels (run function and entry point).
    pub(super) fn field(&self, f: usize) -> String {
        self.get(Entity::Field(FieldId(f)))
    }

    /// The variable holding one time level of a field: `a_t0`, `a_t1`, `u_tm1`.
    pub(super) fn level(&self, field: FieldId, time: i32) -> String {
        self.get(Entity::Level(field, time))
    }

    /// The size of a grid along an axis (outermost axis 0): `g_n0`.
    pub(super) fn grid_size(&self, grid: GridId, axis: usize) -> String {
        self.get(Entity::GridSize(grid, axis))
    }

    /// The element stride of a grid along an axis: `g_s0` (the innermost is 1).
    pub(super) fn grid_stride(&self, grid: GridId, axis: usize) -> String {
        self.get(Entity::GridStride(grid, axis))
    }

    /// The linear index of the current point in a grid: `g_p`.
    pub(super) fn grid_point(&self, grid: GridId) -> String {
        self.get(Entity::GridPoint(grid))
    }

    /// A reduction's value (a local of the run function and a summary member).
    pub(super) fn reduction(&self, r: usize) -> String {
        self.get(Entity::Reduction(ReductionId(r)))
    }

    /// A table's file-scope array.
    pub(super) fn table(&self, t: usize) -> String {
        self.get(Entity::Table(TableId(t)))
    }

    /// A stencil's function.
    pub(super) fn stencil(&self, s: usize) -> String {
        self.get(Entity::Stencil(s))
    }

    /// A reduction's function.
    pub(super) fn reduce_function(&self, r: usize) -> String {
        self.get(Entity::Temp("reduce", r))
    }

    /// A per-axis variable of a loop nest: `axis_temp("lo", 0)` is `lo0`.
    pub(super) fn axis_temp(&self, role: &'static str, axis: usize) -> String {
        self.get(Entity::Temp(role, axis))
    }

    /// The loop variable of a spatial axis: `i0`.
    pub(super) fn axis_var(&self, axis: usize) -> String {
        self.axis_temp("i", axis)
    }

    /// A per-level variable of time tiling: `level_temp("in", a, 0)` is `a_t0_in`.
    pub(super) fn level_temp(
        &self,
        suffix: &str,
        field: FieldId,
        time: i32,
        time_lo: i32,
    ) -> String {
        let (role, _) = LEVEL_TEMPS
            .iter()
            .find(|(_, s)| *s == suffix)
            .expect("a per-level role");
        let flat = self.level_base[field.0] + (time - time_lo) as usize;
        self.get(Entity::Temp(role, flat))
    }

    /// A per-field variable of the host wrapper: `field_temp("count", f)`.
    pub(super) fn field_temp(&self, suffix: &str, f: usize) -> String {
        let (role, _) = FIELD_TEMPS
            .iter()
            .find(|(_, s)| *s == suffix)
            .expect("a per-field role");
        self.get(Entity::Temp(role, f))
    }

    /// One of the generated code's own variables (see `TEMPS`): `temp("value")`.
    pub(super) fn temp(&self, role: &'static str) -> String {
        self.get(Entity::Temp(role, 0))
    }

    /// C names for the locals of a part in the run function's access checks:
    /// distinct from every other name there, the run function's temporaries too.
    pub(super) fn check_locals(&self, part: &StencilPart) -> Vec<String> {
        let mut scope = self.namer.clone();
        part.locals.iter().map(|l| scope.fresh(&l.name)).collect()
    }

    /// C names for the locals of a part: the name as written where it is free,
    /// suffixed where it is not (inlined functions may reuse names).
    pub(super) fn part_locals(&self, part: &StencilPart) -> Vec<String> {
        let mut scope = self.stencil_scope.clone();
        part.locals.iter().map(|l| scope.fresh(&l.name)).collect()
    }
}

/// `<program>_run`: the typed function that runs the iterate.
pub(super) fn run_symbol(program: &Program) -> String {
    format!("{}_run", identifier(&program.name))
}

/// `<program>_part`: one stencil part on a box (`back::c::parts`).
pub(super) fn part_symbol(program: &Program) -> String {
    format!("{}_part", identifier(&program.name))
}

/// `<program>_sweep`: one time-tiled sweep of several iterations.
pub(super) fn sweep_symbol(program: &Program) -> String {
    format!("{}_sweep", identifier(&program.name))
}

/// `<program>_march`: one march of a time-tiled sweep (`back::c::march`).
pub(super) fn march_symbol(program: &Program) -> String {
    format!("{}_march", identifier(&program.name))
}

/// `<program>_entry`: the uniform entry point for the native executor.
pub(super) fn entry_symbol(program: &Program) -> String {
    format!("{}_entry", identifier(&program.name))
}

/// `<program>_summary`: the struct the run function fills.
pub(super) fn summary_type(program: &Program) -> String {
    format!("{}_summary", identifier(&program.name))
}

/// The C spelling of a scalar type (`long` is 64-bit: LP64, as the IR says).
pub(super) fn c_type(ty: ScalarType) -> &'static str {
    ty.name()
}

/// A zero of the given type, as a C literal.
pub(super) fn zero(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Int => "0",
        ScalarType::Long => "0L",
        ScalarType::Float => "0.0f",
        ScalarType::Double => "0.0",
    }
}

/// Locals used as `for` variables (declared by their loop, not at the point's top).
pub(super) fn loop_variables(body: &[Stmt], out: &mut HashSet<usize>) {
    for stmt in body {
        if let Stmt::For { var, body, .. } = stmt {
            out.insert(var.0);
            loop_variables(body, out);
        }
    }
}

/// Whether `text` holds `word` as a whole C identifier (used on the host's own
/// source, to find what it declares).
pub(super) fn mentions_word(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before_ok = !text[..at].chars().next_back().is_some_and(is_ident);
        let after_ok = !text[at + word.len()..].chars().next().is_some_and(is_ident);
        before_ok && after_ok
    })
}
