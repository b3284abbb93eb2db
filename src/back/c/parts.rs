//! A unit that runs one stencil part at a time, for drivers that act between
//! parts (the MPI driver exchanges halos there: `exec::mpi`).
//!
//! Each stencil part gets a `static` function with the loop nest the whole-run
//! unit prints for it ([`Writer::stencil_part_with`]: same peeling, same
//! expressions, same access), its points clipped to a box passed at run time
//! (`s_lo0..s_hi0`, ...), so that computing a part box by box gives the values
//! computing it whole gives. One exported function, `<program>_part`
//! ([`PART_ABI`]), takes the parameters and level pointers as the entry point
//! does ([`ENTRY_ABI`](super::ENTRY_ABI)) and runs the part asked for;
//! rotation, reductions and the check stay with the caller.
//!
//! Grid sizes are not printed as the program computes them: they are read
//! at run time, after the program's parameters, and a part's points are its
//! box's (the caller passes boxes inside the part's subset). So the ranks of
//! a decomposed run, whose programs differ only in their blocks' sizes and
//! subsets, share one unit and one compile.

use std::rc::Rc;

use crate::analysis::tile::CpuPlan;
use crate::back::c::names;
use crate::back::c::uses::Uses;
use crate::back::c::writer::{Linkage, Writer};
use crate::ir::{Expr, ExprKind, FieldId, Param, ParamId, Program, ScalarType, StencilPart, Value};

/// The part entry point every part unit exports as `<program>_part`:
///
/// `params_f`, `params_i` and `levels` as in [`ENTRY_ABI`](super::ENTRY_ABI)
/// (`levels` is only read: nothing is rotated), except that `params_i` goes
/// on after the program's parameters with the size of every grid along every
/// axis (grids in order, outermost axis first; `params_f` has as many
/// unused entries there); `stencil` and `part` are indices into the iterate;
/// `box` holds, per axis outermost first, the inclusive lower and upper bound
/// of the points to compute, which must lie inside the part's subset.
/// Returns 0 when the part ran, 1 when there is no such part.
pub const PART_ABI: &str = "int part(const double *params_f, const long *params_i, \
                            void *const *levels, int stencil, int part, const long *box)";

/// A part unit of one program.
#[derive(Clone, Debug)]
pub struct PartUnit {
    /// The C source text.
    pub source: String,
    /// The name of the part entry point (`<program>_part`, see [`PART_ABI`]).
    pub part_symbol: String,
}

/// Prints the part unit of `program` with the threads of `plan` (its time
/// tiling does not apply: a part runs one sweep).
pub fn emit_part_unit(program: &Program, plan: &CpuPlan) -> PartUnit {
    let program = &sized_at_run_time(program);
    let plan = CpuPlan {
        tiling: None,
        ..plan.clone()
    };
    let mut w = Writer::planned(program, Linkage::Internal, &plan);
    w.line(&format!(
        "/* ---- program {}, one stencil part at a time ---- */",
        program.name
    ));
    w.blank();
    w.write_tables();
    if let Some(iterate) = &program.iterate {
        for (s, stencil) in iterate.stencils.iter().enumerate() {
            for (p, part) in stencil.parts.iter().enumerate() {
                w.part_function(s, p, part);
                w.blank();
            }
        }
    }
    w.part_entry();
    PartUnit {
        source: w.finish(),
        part_symbol: names::part_symbol(program),
    }
}

/// `program` with every grid size a `long` parameter appended after the
/// program's (`<grid>_size<axis>`) and every part's subset unbounded (the box
/// bounds the points).
fn sized_at_run_time(program: &Program) -> Program {
    let mut generic = program.clone();
    for g in 0..generic.grids.len() {
        for a in 0..generic.grids[g].rank() {
            let id = ParamId(generic.params.len());
            generic.params.push(Param {
                name: format!("{}_size{a}", generic.grids[g].name),
                ty: ScalarType::Long,
                span: generic.grids[g].span,
            });
            generic.grids[g].dims[a] =
                Expr::new(ExprKind::Param(id), ScalarType::Long, generic.grids[g].span);
        }
    }
    let unbounded = || {
        (
            Expr::literal(Value::Long(0)),
            Expr::literal(Value::Long(UNBOUNDED)),
        )
    };
    if let Some(iterate) = &mut generic.iterate {
        for stencil in &mut iterate.stencils {
            for part in &mut stencil.parts {
                for range in &mut part.subset.ranges {
                    *range = unbounded();
                }
            }
        }
    }
    generic
}

/// The upper bound of an unbounded subset: beyond any grid, and far from
/// overflowing a `long` in the loop bounds' arithmetic.
const UNBOUNDED: i64 = 1 << 60;

impl Writer<'_> {
    /// `<stencil>_part<p>`'s name.
    fn part_function_name(&self, stencil: usize, part: usize) -> String {
        format!("{}_part{part}", self.names.stencil(stencil))
    }

    /// `static void <stencil>_part<p>(..., long s_lo0, long s_hi0, ...)`: the
    /// part's loop nest, clipped to the box.
    fn part_function(&mut self, stencil: usize, index: usize, part: &StencilPart) {
        let program = self.program;
        let n = Rc::clone(&self.names);
        let uses = Uses::of_part(program, part);
        let rank = part.subset.rank();
        let (line, _) = program.source.line_col(part.span.start as usize);
        let stencil_name =
            &program.iterate.as_ref().expect("has an iterate").stencils[stencil].name;
        self.line(&format!(
            "/* stencil {stencil_name}, part {index} (line {line}), on the points of its subset \
             inside [s_lo, s_hi] */"
        ));
        let mut signature = self.signature(&uses);
        if signature == "void" {
            signature.clear();
        }
        let box_params: Vec<String> = (0..rank)
            .map(|a| {
                format!(
                    "long {}, long {}",
                    n.axis_temp("s_lo", a),
                    n.axis_temp("s_hi", a)
                )
            })
            .collect();
        let all: Vec<String> = [signature]
            .into_iter()
            .chain(box_params)
            .filter(|s| !s.is_empty())
            .collect();
        let head = format!("static void {}", self.part_function_name(stencil, index));
        self.function_head(&head, &all.join(", "));
        self.open("{");
        self.sizes_read.clear();
        self.strides(&uses);
        let parallel = self.omp_parallel("");
        self.line(&parallel);
        self.open("{");
        let clip = (0..rank)
            .map(|a| (Some(n.axis_temp("s_lo", a)), Some(n.axis_temp("s_hi", a))))
            .collect();
        self.stencil_part_with(part, "#pragma omp for schedule(static)".into(), clip);
        self.close("}");
        self.mark_unused_sizes(&uses);
        self.close("}");
    }

    /// `int <program>_part(...)` (see [`PART_ABI`]).
    fn part_entry(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let [params_f, params_i, levels, which_stencil, which_part, bounds] =
            ["params_f", "params_i", "levels", "stencil", "part", "box"].map(|role| n.temp(role));
        self.line(&format!(
            "/* Runs one part of one stencil of {} (see back::c::parts::PART_ABI). */",
            p.name
        ));
        self.function_head(
            &format!("int {}", names::part_symbol(p)),
            &format!(
                "const double *{params_f}, const long *{params_i}, void *const *{levels}, \
                 int {which_stencil}, int {which_part}, const long *{bounds}"
            ),
        );
        self.open("{");
        let mut declared: Vec<String> = Vec::new();
        for (i, q) in p.params.iter().enumerate() {
            let array = if q.ty.is_float() {
                &params_f
            } else {
                &params_i
            };
            let ty = names::c_type(q.ty);
            self.line(&format!("const {ty} {} = ({ty}){array}[{i}];", n.param(i)));
            declared.push(n.param(i));
        }
        self.constants_and_sizes();
        declared.extend((0..p.constants.len()).map(|c| n.constant(c)));
        for (g, grid) in p.grids.iter().enumerate() {
            declared.extend((0..grid.rank()).map(|a| n.grid_size(crate::ir::GridId(g), a)));
        }
        let mut flat = 0;
        for (f, field) in p.fields.iter().enumerate() {
            let ty = names::c_type(field.ty);
            for t in field.time_lo..=field.time_hi {
                let level = n.level(FieldId(f), t);
                self.line(&format!(
                    "{ty} *{level} = ({ty} *){levels}[{}];",
                    flat + field.level_of(t)
                ));
                declared.push(level);
            }
            flat += field.levels();
        }
        if let Some(iterate) = &p.iterate {
            for (s, stencil) in iterate.stencils.iter().enumerate() {
                for (index, part) in stencil.parts.iter().enumerate() {
                    let uses = Uses::of_part(p, part);
                    let mut args: Vec<String> = vec![self.arguments(&uses)];
                    args.extend(
                        (0..part.subset.rank())
                            .map(|a| format!("{bounds}[{}], {bounds}[{}]", 2 * a, 2 * a + 1)),
                    );
                    args.retain(|a| !a.is_empty());
                    self.open(&format!(
                        "if ({which_stencil} == {s} && {which_part} == {index}) {{"
                    ));
                    self.line(&format!(
                        "{}({});",
                        self.part_function_name(s, index),
                        args.join(", ")
                    ));
                    self.line("return 0;");
                    self.close("}");
                }
            }
        }
        declared.extend([params_f, params_i, bounds]);
        let voids: Vec<String> = declared.iter().map(|d| format!("(void){d};")).collect();
        for chunk in voids.chunks(6) {
            self.line(&chunk.join(" "));
        }
        self.line("return 1;");
        self.close("}");
    }
}
