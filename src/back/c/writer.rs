//! The translation unit: header, tables and the per-stencil and per-reduction
//! functions; the run function and entry point are in `run`, what each
//! function needs from its surroundings in `uses`.

use std::collections::BTreeSet;
use std::rc::Rc;

use crate::analysis::tile::{tile_shape, CpuPlan, CpuTiling, TileShape};
use crate::back::c::boundary::{self, Helper};
use crate::back::c::expr::{Access, Scope};
use crate::back::c::names::{self, CNames};
use crate::back::c::uses::Uses;
use crate::back::text::{literal, CodeWriter, Language};
use crate::ir::{FieldId, GridId, Program, Table};
use crate::source::Span;

/// The uniform entry point every stand-alone unit exports as `<program>_entry`:
///
/// `params_f` holds the `float`/`double` parameters and `params_i` the `int`/`long`
/// ones, both indexed by parameter position (a `double` holds any `float` exactly,
/// a `long` any `int`). `levels` holds every field's level pointers, fields in
/// order and levels from `time_lo` up; on return it holds them rotated as the run
/// left them. `counts` receives iterations, whether the check stopped the iterate,
/// and whether the reductions were ever evaluated; `reductions_f`/`reductions_i`
/// receive each reduction's last value by position, by the same split as params.
/// Returns 0 on success, 1 for a check interval below 1, 3 when out of memory,
/// 4 when an access would leave its grid for the parameter values given and 5
/// when a grid size is below 1 or too large for `long` indices (4 and 5 print
/// a line on `stderr` and compute nothing; see `back::c::checks`), and 6 when
/// `*interrupt` was found set at the end of an iteration (`interrupt` may be
/// NULL; the executor's stop flag, set on Ctrl-C in the Python package).
pub const ENTRY_ABI: &str =
    "int entry(const double *params_f, const long *params_i, void **levels, \
                             long *counts, double *reductions_f, long *reductions_i, \
                             const volatile unsigned char *interrupt)";

/// Whether the run function is visible outside the unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Linkage {
    /// Called through the entry point of the same unit (native execution).
    Internal,
    /// Called by a host wrapper in the same file (source-to-source): `static`.
    Embedded,
}

/// Prints one program as C.
pub(crate) struct Writer<'a> {
    /// The program.
    pub(super) program: &'a Program,
    /// The text written so far (functions; the header is added by `finish`)
    /// and its indentation.
    pub(super) code: CodeWriter,
    /// Boundary helpers the text uses.
    pub(super) helpers: BTreeSet<Helper>,
    /// Every name of the program's C.
    pub(super) names: Rc<CNames>,
    /// Whether the run function is `static`.
    pub(super) linkage: Linkage,
    /// The grid sizes printed as values since the current function began.
    pub(super) sizes_read: BTreeSet<(GridId, usize)>,
    /// The grids whose point index was printed since the current point began.
    pub(super) points_read: BTreeSet<GridId>,
    /// `--threads N`: the `num_threads` of every parallel region.
    pub(super) threads: Option<u32>,
    /// Time tiling of the sweeps, with what the tiles need of the iterate.
    pub(super) tiling: Option<(TileShape, CpuTiling)>,
    /// Grid indices are relative to a time tile's window (origin `w_lo0`...).
    pub(super) window: bool,
    /// In a streamed wave ([`crate::back::c::wavefront`]): the window holds a
    /// band of rows along axis 0 from grid row `w_at0` on, not the whole window.
    pub(super) sliding: bool,
    /// In a streamed wave: the one row along axis 0 the copies between grid,
    /// window and snapshots print for (their loops clipped to it).
    pub(super) stream_row: Option<String>,
    /// In a march ([`crate::back::c::march`]): reads of the marching field
    /// go to its planes, its store to the step's plane.
    pub(super) march: Option<MarchView>,
    /// In a march: whether the point just printed read the level read
    /// (`src_q`) and wrote the level written (`dst_q`).
    pub(super) march_points: (bool, bool),
    /// In a march: lines printed before every innermost loop of a step's
    /// nest (the prefetches of the rows ahead).
    pub(super) row_prefetch: Vec<String>,
    /// The grid the points of the nest being printed lie in, when known
    /// ([`crate::ir::Program::holds_point`]): a border read at offset zero of
    /// a field on another grid takes its boundary mode.
    pub(super) point_grid: Option<GridId>,
}

/// How a march's loop nest addresses the field it updates.
#[derive(Clone, Copy, Debug)]
pub(super) struct MarchView {
    /// The field.
    pub field: FieldId,
    /// The level read, whose planes around the point are `<level>_z[..]`.
    pub read: i32,
    /// How far below the point reads reach along axis 0: `<level>_z[0]`
    /// is that many planes below.
    pub below: u64,
}

impl<'a> Writer<'a> {
    /// A writer for `program`.
    pub(crate) fn new(program: &'a Program, linkage: Linkage) -> Writer<'a> {
        let names = CNames::new(program);
        Writer {
            program,
            code: CodeWriter::new(Language::C),
            helpers: BTreeSet::new(),
            names: Rc::new(names),
            linkage,
            sizes_read: BTreeSet::new(),
            points_read: BTreeSet::new(),
            point_grid: None,
            threads: None,
            tiling: None,
            window: false,
            sliding: false,
            stream_row: None,
            march: None,
            march_points: (false, false),
            row_prefetch: Vec::new(),
        }
    }

    /// A writer for `program` run as `plan` says (threads, time tiling); a
    /// tiling the iterate cannot take is left out (the planner said so).
    pub(crate) fn planned(program: &'a Program, linkage: Linkage, plan: &CpuPlan) -> Writer<'a> {
        let mut w = Writer::new(program, linkage);
        w.threads = plan.threads;
        w.tiling = plan
            .tiling
            .clone()
            .and_then(|t| tile_shape(program).ok().map(|shape| (shape, t)));
        w
    }

    /// The grid coordinate of the window's first element along axis `a`:
    /// `w_lo<a>`, or `w_at0` along axis 0 of a streamed wave's sliding band.
    pub(super) fn window_origin(&self, a: usize) -> String {
        if self.sliding && a == 0 {
            self.names.axis_temp("w_at", 0)
        } else {
            self.names.axis_temp("w_lo", a)
        }
    }

    /// The bounds `lo..=hi` of a copy's loop along axis `a`, clipped to the
    /// streamed row ([`Self::stream_row`]) along axis 0.
    pub(super) fn streamed_bounds(&self, a: usize, lo: String, hi: String) -> (String, String) {
        match &self.stream_row {
            Some(row) if a == 0 => (
                format!("sdsl_max({lo}, {row})"),
                format!("sdsl_min({hi}, {row})"),
            ),
            _ => (lo, hi),
        }
    }

    /// `#pragma omp parallel<rest>` with the `num_threads` clause of `--threads`.
    pub(super) fn omp_parallel(&self, rest: &str) -> String {
        match self.threads {
            Some(n) => format!("#pragma omp parallel{rest} num_threads({n})"),
            None => format!("#pragma omp parallel{rest}"),
        }
    }

    /// Writes one line at the current indentation.
    pub(super) fn line(&mut self, text: &str) {
        self.code.line(text);
    }

    /// An empty line.
    pub(super) fn blank(&mut self) {
        self.code.blank();
    }

    /// Writes a line and indents what follows.
    pub(super) fn open(&mut self, text: &str) {
        self.code.open(text);
    }

    /// Unindents and writes a line.
    pub(super) fn close(&mut self, text: &str) {
        self.code.close(text);
    }

    /// A function head (see [`CodeWriter::function_head`]).
    pub(super) fn function_head(&mut self, head: &str, params: &str) {
        self.code.function_head(head, params);
    }

    /// A packed list (see [`CodeWriter::wrapped`]).
    pub(super) fn wrapped(&mut self, head: &str, items: &[String], tail: &str) {
        self.code.wrapped(head, items, tail);
    }

    /// `value` as a C literal.
    pub(super) fn literal(&self, value: crate::ir::Value) -> String {
        self.code.literal(value)
    }

    /// The size of a grid along an axis, read as a value (recorded, so that
    /// [`Writer::mark_unused_sizes`] knows it is used).
    pub(super) fn read_size(&mut self, grid: GridId, axis: usize) -> String {
        self.sizes_read.insert((grid, axis));
        self.names.grid_size(grid, axis)
    }

    /// The linear index of the current point in a grid, read as a value
    /// (recorded, so that the point loop declares it).
    pub(super) fn read_point(&mut self, grid: GridId) -> String {
        self.points_read.insert(grid);
        self.names.grid_point(grid)
    }

    /// Marks the grid sizes in `uses` that the function body written since
    /// `sizes_read` was last cleared never read as unused, so that `-Wextra`
    /// stays quiet: every function takes all the sizes of the grids it touches,
    /// but only border code needs the outermost one. Called last in the body.
    pub(super) fn mark_unused_sizes(&mut self, uses: &Uses) {
        let p = self.program;
        let unused: Vec<String> = uses
            .grids
            .iter()
            .flat_map(|&g| (0..p.grids[g].rank()).map(move |a| (GridId(g), a)))
            .filter(|size| !self.sizes_read.contains(size))
            .map(|(g, a)| format!("(void){};", self.names.grid_size(g, a)))
            .collect();
        if !unused.is_empty() {
            self.line(&format!(
                "{} /* only border code would read it */",
                unused.join(" ")
            ));
        }
    }

    /// `} else {`: unindents, writes, indents.
    pub(super) fn close_open(&mut self, text: &str) {
        self.code.indent -= 1;
        self.line(text);
        self.code.indent += 1;
    }

    /// `/* line N: <source text> */` for a part of the program.
    pub(super) fn source_comment(&mut self, span: Span) {
        let source = &self.program.source;
        let (line, _) = source.line_col(span.start as usize);
        let text = source.text.get(span.range()).unwrap_or("");
        let mut text = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace("*/", "* /");
        if text.chars().count() > 100 {
            text = text.chars().take(97).collect::<String>() + "...";
        }
        self.line(&format!("/* line {line}: {text} */"));
    }

    /// A function's parameter list: parameters, constants, grid sizes, levels.
    pub(super) fn signature(&self, uses: &Uses) -> String {
        let p = self.program;
        let mut list: Vec<String> = Vec::new();
        let n = &self.names;
        list.extend(
            uses.params
                .iter()
                .map(|&i| format!("{} {}", names::c_type(p.params[i].ty), n.param(i))),
        );
        list.extend(
            uses.consts
                .iter()
                .map(|&i| format!("{} {}", names::c_type(p.constants[i].ty), n.constant(i))),
        );
        for &g in &uses.grids {
            for axis in 0..p.grids[g].rank() {
                list.push(format!("long {}", self.names.grid_size(GridId(g), axis)));
            }
        }
        for (&(f, t), &written) in &uses.levels {
            let ty = names::c_type(p.fields[f].ty);
            let constness = if written { "" } else { "const " };
            list.push(format!(
                "{constness}{ty} *SDSL_RESTRICT {}",
                self.names.level(FieldId(f), t)
            ));
        }
        if list.is_empty() {
            "void".into()
        } else {
            list.join(", ")
        }
    }

    /// The arguments matching [`Writer::signature`] at a call in the run function.
    pub(super) fn arguments(&self, uses: &Uses) -> String {
        let p = self.program;
        let mut list: Vec<String> = Vec::new();
        list.extend(uses.params.iter().map(|&i| self.names.param(i)));
        list.extend(uses.consts.iter().map(|&i| self.names.constant(i)));
        for &g in &uses.grids {
            for axis in 0..p.grids[g].rank() {
                list.push(self.names.grid_size(GridId(g), axis));
            }
        }
        list.extend(
            uses.levels
                .keys()
                .map(|&(f, t)| self.names.level(FieldId(f), t)),
        );
        list.join(", ")
    }

    /// `const long g_s0 = g_n1;` for every grid a function uses.
    pub(super) fn strides(&mut self, uses: &Uses) {
        let grids: Vec<usize> = uses.grids.iter().copied().collect();
        for g in grids {
            self.grid_strides(GridId(g));
        }
    }

    fn grid_strides(&mut self, grid: GridId) {
        let p = self.program;
        let rank = p.grids[grid.0].rank();
        for axis in (0..rank.saturating_sub(1)).rev() {
            let n_next = self.read_size(grid, axis + 1);
            let value = if axis + 2 == rank {
                n_next
            } else {
                format!("{n_next} * {}", self.names.grid_stride(grid, axis + 1))
            };
            self.line(&format!(
                "const long {} = {value};",
                self.names.grid_stride(grid, axis)
            ));
        }
    }

    /// `static const float <prog>_K[7][7] = {{...}, ...};`, one innermost row a line.
    fn table(&mut self, index: usize, table: &Table) {
        let (line, _) = self.program.source.line_col(table.span.start as usize);
        self.line(&format!("/* table {} (line {line}) */", table.name));
        let dims: String = table.shape.iter().map(|d| format!("[{d}]")).collect();
        self.open(&format!(
            "static const {} {}{dims} = {{",
            names::c_type(table.ty),
            self.names.table(index)
        ));
        self.table_rows(&table.shape, &table.values);
        self.close("};");
    }

    /// The contents of a braced initializer of `shape` (without its own braces).
    fn table_rows(&mut self, shape: &[usize], values: &[crate::ir::Value]) {
        let literals = |vs: &[crate::ir::Value]| {
            vs.iter()
                .map(|v| literal(*v, Language::C))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if shape.len() <= 1 {
            self.line(&literals(values));
            return;
        }
        let inner: usize = shape[1..].iter().product();
        for i in 0..shape[0] {
            let comma = if i + 1 < shape[0] { "," } else { "" };
            let chunk = &values[(i * inner).min(values.len())..((i + 1) * inner).min(values.len())];
            if shape.len() == 2 {
                self.line(&format!("{{{}}}{comma}", literals(chunk)));
            } else {
                self.open("{");
                self.table_rows(&shape[1..], chunk);
                self.close(&format!("}}{comma}"));
            }
        }
    }

    /// Tables, stencil and reduction functions, the summary struct and the run function.
    pub(crate) fn write_program_body(&mut self) {
        let p = self.program;
        self.line(&format!("/* ---- program {} ---- */", p.name));
        self.blank();
        self.write_tables();
        if let Some(iterate) = &p.iterate {
            for (index, stencil) in iterate.stencils.iter().enumerate() {
                self.stencil_function(index, stencil);
                self.blank();
            }
            for (index, reduction) in iterate.reductions.iter().enumerate() {
                self.reduction_function(index, reduction);
                self.blank();
            }
            if self.tiling.is_some() {
                self.sweep_function();
                self.blank();
            }
        }
        self.summary_struct();
        self.blank();
        self.run_function();
    }

    /// The program's coefficient tables, each followed by a blank line.
    pub(super) fn write_tables(&mut self) {
        for (index, table) in self.program.tables.iter().enumerate() {
            self.table(index, table);
            self.blank();
        }
    }

    fn summary_struct(&mut self) {
        let p = self.program;
        self.line(&format!("/* What one run of {} did. */", p.name));
        self.open("typedef struct {");
        self.line("long iterations;");
        self.line("int stopped_by_check;");
        self.line("int reductions_evaluated;");
        if let Some(iterate) = &p.iterate {
            for (i, r) in iterate.reductions.iter().enumerate() {
                self.line(&format!(
                    "{} {};",
                    names::c_type(r.ty),
                    self.names.reduction(i)
                ));
            }
        }
        self.close(&format!("}} {};", names::summary_type(p)));
    }

    /// The run function's parameter list: the program's parameters, then one
    /// array of level pointers per field.
    pub(super) fn run_parameters(&self) -> String {
        let p = self.program;
        let n = &self.names;
        let mut list: Vec<String> = p
            .params
            .iter()
            .enumerate()
            .map(|(i, q)| format!("{} {}", names::c_type(q.ty), n.param(i)))
            .collect();
        list.extend(
            p.fields
                .iter()
                .enumerate()
                .map(|(i, f)| format!("{} **{}", names::c_type(f.ty), n.field(i))),
        );
        list.push(format!("{} *{}", names::summary_type(p), n.temp("summary")));
        list.join(", ")
    }

    /// `const double sigma2 = (sigma * sigma);` for every constant, then grid sizes.
    pub(super) fn constants_and_sizes(&mut self) {
        let p = self.program;
        let scope = Scope {
            access: Access::Interior,
            locals: &[],
        };
        for (i, c) in p.constants.iter().enumerate() {
            let value = self.expr(&c.value, scope);
            let name = self.names.constant(i);
            self.line(&format!("const {} {name} = {value};", names::c_type(c.ty)));
        }
        for (g, grid) in p.grids.iter().enumerate() {
            for (axis, dim) in grid.dims.iter().enumerate() {
                let value = self.expr(dim, scope);
                self.line(&format!(
                    "const long {} = {value};",
                    self.names.grid_size(GridId(g), axis)
                ));
            }
        }
    }

    /// The whole unit: header, helpers, then the text written.
    pub(crate) fn finish(self) -> String {
        let mut text = header(&self.program.name);
        let helpers = boundary::helper_definitions(&self.helpers);
        if !helpers.is_empty() {
            text.push_str(&helpers);
            text.push('\n');
        }
        text.push_str(&self.code.out);
        text
    }
}

/// The includes and the `SDSL_RESTRICT` spelling (C99 `restrict`, C++ `__restrict__`).
pub(crate) fn header(origin: &str) -> String {
    format!(
        "/* Generated by stencilc from {origin}. C99 with OpenMP; compile with\n   \
         -O3 -fopenmp -ffp-contract=off -frounding-math -fwrapv for results identical to `stencilc run --backend interp`. */\n\
         #include <limits.h>\n\
         #include <math.h>\n\
         #include <stdio.h>\n\
         #include <stdlib.h>\n\
         #include <string.h>\n\
         \n\
         #ifndef SDSL_RESTRICT\n\
         #ifdef __cplusplus\n\
         #define SDSL_RESTRICT __restrict__\n\
         #else\n\
         #define SDSL_RESTRICT restrict\n\
         #endif\n\
         #endif\n\n"
    )
}
