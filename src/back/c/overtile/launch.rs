//! The launches of a region's host code: each launch's bounds, blocks and
//! grid (computed once per run), the call of its launcher, and the wrapped
//! lines and messages the host code prints.

use std::rc::Rc;

use super::host::shadow;
use super::launcher;
use crate::back::c::expr::{Access, Scope};
use crate::back::c::writer::Writer;
use crate::kir::names::{identifier, Namer};
use crate::kir::plan::{ArgSource, Launch, MAX_GROUPS};
use crate::kir::Module;

/// The C names of one launch's geometry.
pub(super) struct LaunchNames {
    /// `(lo, hi)` per axis, outermost first.
    pub(super) bounds: Vec<(String, String)>,
    /// The `dim3` of blocks.
    pub(super) grid: String,
    /// The number of blocks in all (0: nothing to run).
    pub(super) count: String,
}

/// What a launch's reduction arguments are (partial offset, partial count).
pub(super) type ReductionArgs<'t> = Option<(&'t str, &'t str)>;

impl Writer<'_> {
    /// Bounds, blocks per axis and grid of a launch over its subset.
    pub(super) fn launch_geometry(
        &mut self,
        module: &Module,
        launch: &Launch,
        local: &mut Namer,
        place: &str,
    ) -> LaunchNames {
        let kernel = &module.kernels[launch.kernel];
        let short = kernel_stem(self.program, &kernel.name);
        let subset = launch
            .subset
            .as_ref()
            .expect("launch_geometry is called for launches over points");
        let rank = subset.rank();
        let scope = Scope {
            access: Access::Interior,
            locals: &[],
        };
        let axis_name = |axis: usize| ["x", "y", "z"][rank - 1 - axis];
        let [px, py, pz] = launch.points_per_block;
        let written = subset_text(self, subset);
        self.line(&format!(
            "/* {} over {}: {px} x {py} x {pz} points per block{} */",
            kernel.name,
            written,
            if launch.max_groups.is_some() {
                ", grid-stride"
            } else {
                ""
            }
        ));
        let mut bounds = Vec::new();
        for (axis, (lo, hi)) in subset.ranges.iter().enumerate() {
            let a = axis_name(axis);
            let (lo_name, hi_name) = (
                local.fresh(&format!("{short}_lo_{a}")),
                local.fresh(&format!("{short}_hi_{a}")),
            );
            let (lo, hi) = (self.expr(lo, scope), self.expr(hi, scope));
            self.line(&format!("const long {lo_name} = {lo}, {hi_name} = {hi};"));
            bounds.push((lo_name, hi_name));
        }
        let blocks = local.fresh(&format!("{short}_blocks"));
        let cap = launch.max_groups.unwrap_or([0; 3]);
        let per_axis: Vec<String> = (0..3)
            .map(|d| {
                if d >= rank {
                    return "1".to_string();
                }
                let (lo, hi) = &bounds[rank - 1 - d];
                // A kernel of vectors starts its blocks at `lo` rounded down.
                let lo = if d == 0 && launch.align_x > 1 {
                    format!("{lo} - {lo} % {}", launch.align_x)
                } else {
                    lo.clone()
                };
                format!(
                    "stencilc_blocks({lo}, {hi}, {}, {}, {}L)",
                    launch.points_per_block[d], cap[d], MAX_GROUPS[d]
                )
            })
            .collect();
        self.line(&format!("const long {blocks}[3] = {{"));
        for (d, text) in per_axis.iter().enumerate() {
            let comma = if d < 2 { "," } else { "" };
            self.line(&format!("    {text}{comma}"));
        }
        self.line("};");
        let (grid, count) = (
            local.fresh(&format!("{short}_grid")),
            local.fresh(&format!("{short}_count")),
        );
        self.line(&format!("dim3 {grid}(1, 1, 1);"));
        self.line(&format!(
            "const long {count} = stencilc_grid({blocks}, &{grid});"
        ));
        self.open(&format!("if ({count} < 0) {{"));
        self.message(
            &format!(
                "stencilc: %s: kernel {} needs more blocks along an axis than CUDA allows; use a \
                 smaller grid, or a larger block: or tile: in the pragma",
                kernel.name
            ),
            place,
        );
        self.line("return 5;");
        self.close("}");
        LaunchNames {
            bounds,
            grid,
            count,
        }
    }

    /// `if (count > 0) STENCILC_CUDA(where, launch_k(grid, args...));`, with
    /// `steps` the step count a time-tiled kernel takes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn launch_call(
        &mut self,
        module: &Module,
        launch: &Launch,
        geometry: Option<&LaunchNames>,
        grid: &str,
        reduction: ReductionArgs<'_>,
        steps: &str,
        dev: &str,
        place: &str,
    ) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let kernel = &module.kernels[launch.kernel];
        let mut args = vec![grid.to_string()];
        for source in &launch.args {
            args.push(match source {
                ArgSource::Level(f, t) => {
                    let field = &p.fields[f.0];
                    format!("{dev}->{}[{}]", n.field(f.0), t - field.time_lo)
                }
                // The time-tiled launch writes the level's shadow.
                ArgSource::NextLevel(f, t) => {
                    let field = &p.fields[f.0];
                    format!("{dev}->{}[{}]", shadow(&n.field(f.0)), t - field.time_lo)
                }
                ArgSource::Param(q) => n.param(q.0),
                ArgSource::Const(c) => n.constant(c.0),
                ArgSource::GridSize(g, a) => format!("(int){}", n.grid_size(*g, *a)),
                ArgSource::Lo(a) => format!("(int){}", bound(geometry, *a).0),
                ArgSource::Hi(a) => format!("(int){}", bound(geometry, *a).1),
                ArgSource::Partials(r) => format!("{dev}->{}_partials", n.reduction(r.0)),
                ArgSource::Result(r) => format!("{dev}->{}_result", n.reduction(r.0)),
                ArgSource::PartialOffset => int_arg(reduction.map_or("0", |r| r.0)),
                ArgSource::PartialCount => int_arg(reduction.map_or("0", |r| r.1)),
                ArgSource::TimeSteps => steps.to_string(),
            });
        }
        let head = match geometry {
            Some(geometry) => format!("if ({} > 0) STENCILC_CUDA({place}, ", geometry.count),
            None => format!("STENCILC_CUDA({place}, "),
        };
        self.wrapped(&format!("{head}{}(", launcher(&kernel.name)), &args, "));");
    }
    /// `fprintf(stderr, "<text>\n", args);` with the text split over string
    /// literals of at most about 70 characters.
    pub(super) fn message(&mut self, text: &str, args: &str) {
        let mut pieces: Vec<String> = vec![String::new()];
        for word in text.split(' ') {
            let current = pieces.last_mut().expect("one piece at least");
            if !current.is_empty() && current.len() + word.len() > 70 {
                current.push(' ');
                pieces.push(String::new());
            } else if !current.is_empty() {
                current.push(' ');
            }
            pieces
                .last_mut()
                .expect("one piece at least")
                .push_str(word);
        }
        let escaped: Vec<String> = pieces
            .iter()
            .map(|p| p.replace('\\', "\\\\").replace('"', "\\\""))
            .collect();
        self.line("fprintf(stderr,");
        for (i, piece) in escaped.iter().enumerate() {
            let end = if i + 1 == escaped.len() {
                "\\n\","
            } else {
                "\""
            };
            self.line(&format!("        \"{piece}{end}"));
        }
        self.line(&format!("        {args});"));
    }

    /// `first` then `items` separated by spaces, on lines of at most 100 columns.
    pub(super) fn packed(&mut self, first: &str, items: &[String]) {
        let mut current = first.to_string();
        for item in items {
            if 4 * self.code.indent + current.len() + 1 + item.len() > 100 {
                self.line(&current);
                current.clear();
            } else {
                current.push(' ');
            }
            current.push_str(item);
        }
        self.line(&current);
    }
}

/// A `long` host value as an `int` kernel argument.
fn int_arg(value: &str) -> String {
    if value == "0" {
        value.to_string()
    } else {
        format!("(int){value}")
    }
}

/// The C names of a launch's bounds along `axis` (outermost first).
fn bound(geometry: Option<&LaunchNames>, axis: usize) -> (&str, &str) {
    let (lo, hi) = &geometry
        .expect("only launches over points take their bounds")
        .bounds[axis];
    (lo, hi)
}

/// The kernel's name without the program prefix the output gives it.
fn kernel_stem(program: &crate::ir::Program, name: &str) -> String {
    let prefix = format!("{}_", identifier(&program.name));
    name.strip_prefix(&prefix).unwrap_or(name).to_string()
}

/// `[1:dim2-2][1:dim1-2]` as the C host prints its bounds.
fn subset_text(w: &mut Writer<'_>, subset: &crate::ir::Subset) -> String {
    let text = &w.program.source.text;
    let range = subset.span.range();
    match text.get(range) {
        Some(written)
            if written.starts_with('[') && !written.contains("*/") && !written.contains('\n') =>
        {
            written.to_string()
        }
        // The time-tiled launch covers its grid (its subset is the grid's).
        Some(written) if written.starts_with("grid ") => "the whole grid".to_string(),
        _ => format!("{} axes", subset.rank()),
    }
}
