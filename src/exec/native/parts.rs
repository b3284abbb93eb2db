//! Generated C one stencil part at a time ([`back::c::parts`](crate::back::c::parts)),
//! for drivers that act between parts (the MPI driver, `exec::mpi`).
//!
//! [`PartKernel`] compiles (or finds in the cache) the part unit of a program
//! once; [`PartKernel::run_part_on`] then runs one part over a box of its
//! points on the caller's buffers. The loop nests are those of the whole-run
//! unit, so a part computed box by box on the C back-end gives the values the
//! interpreter and the whole-run C give.

use std::ffi::c_void;
use std::os::raw::{c_int, c_long};

use crate::back::c::parts::{emit_part_unit, PartUnit};
use crate::exec::native::compile::{self, Compiler, Kernel};
use crate::exec::options::RunOptions;
use crate::exec::{check_inputs, ExecError, FieldState};
use crate::ir::env::RunEnv;
use crate::ir::Program;

/// The signature of `<program>_part` (see [`PART_ABI`](crate::back::c::parts::PART_ABI)).
type PartEntry = unsafe extern "C" fn(
    *const f64,
    *const c_long,
    *const *mut c_void,
    c_int,
    c_int,
    *const c_long,
) -> c_int;

/// A box of points: inclusive bounds per axis, outermost first.
type Bounds = Vec<(i64, i64)>;

/// A program's part unit, compiled and loaded, with its parameter values.
#[derive(Debug)]
pub struct PartKernel {
    /// The unit it was built from.
    pub unit: PartUnit,
    /// The loaded library.
    pub kernel: Kernel,
    params_f: Vec<f64>,
    params_i: Vec<c_long>,
    /// Per field, its number of levels and the elements of each (what the C
    /// indexes up to).
    lengths: Vec<(usize, usize)>,
    /// Each stencil part's box (`None` where empty): the C takes any box
    /// the caller gives as inside it, so every box is checked against it.
    boxes: Vec<Vec<Option<Bounds>>>,
}

impl PartKernel {
    /// Compiles the part unit of `program` for `env` with the compiler from
    /// `$CC` and the flags and threads of `options`, after checking `state`
    /// and every access as a run does ([`check_inputs`]).
    pub fn prepare(
        program: &Program,
        env: &RunEnv,
        state: &FieldState,
        options: &RunOptions,
    ) -> Result<PartKernel, ExecError> {
        check_inputs(program, env, state)?;
        let compiler = Compiler::from_env()?;
        let plan = crate::analysis::tile::CpuPlan {
            threads: options.threads,
            ..Default::default()
        };
        let mut unit = emit_part_unit(program, &plan);
        if options.fma {
            unit.source = crate::back::c::with_fma_notice(&unit.source);
        }
        let flags =
            compile::flags_with_fma(options.cflags.as_deref(), options.fast_math, options.fma);
        let kernel = compile::build(&unit.source, &compiler, &flags, &compile::cache_dir())?;
        let mut params_f: Vec<f64> = env.params().iter().map(|v| v.as_f64()).collect();
        let mut params_i: Vec<c_long> = env
            .params()
            .iter()
            .map(|v| {
                if v.ty().is_float() {
                    0
                } else {
                    v.as_i64() as c_long
                }
            })
            .collect();
        // The unit reads the grid sizes after the parameters (see PART_ABI).
        for dims in env.grid_dims() {
            for &n in dims {
                params_f.push(0.0);
                params_i.push(n as c_long);
            }
        }
        let lengths = program
            .fields
            .iter()
            .map(|f| (f.levels(), env.grid_dims()[f.grid.0].iter().product()))
            .collect();
        let boxes = program.iterate.as_ref().map_or(Vec::new(), |iterate| {
            iterate
                .stencils
                .iter()
                .map(|s| {
                    s.parts
                        .iter()
                        .map(|p| {
                            let bounds = env.subset_box(&p.subset);
                            (!crate::ir::env::box_is_empty(&bounds)).then_some(bounds)
                        })
                        .collect()
                })
                .collect()
        });
        Ok(PartKernel {
            unit,
            kernel,
            params_f,
            params_i,
            lengths,
            boxes,
        })
    }

    /// Runs part `part` of stencil `stencil` on the points of `bounds`
    /// (inclusive, per axis), a box inside the part's subset, on `state`'s
    /// current levels. A box reaching out of the subset, a part that does not
    /// exist and a state of another shape are errors.
    pub fn run_part_on(
        &self,
        state: &mut FieldState,
        (stencil, part): (usize, usize),
        bounds: &[(i64, i64)],
    ) -> Result<(), ExecError> {
        let Some(whole) = self.boxes.get(stencil).and_then(|s| s.get(part)) else {
            return Err(ExecError::Failed(format!(
                "the part kernel has no part {part} of stencil {stencil}"
            )));
        };
        if crate::ir::env::box_is_empty(bounds) {
            return Ok(());
        }
        box_inside_part(whole.as_deref(), bounds, (stencil, part))?;
        let fits = state.fields.len() == self.lengths.len()
            && state
                .fields
                .iter()
                .zip(&self.lengths)
                .all(|(levels, &(count, n))| {
                    levels.len() == count && levels.iter().all(|b| b.len() == n)
                });
        if !fits {
            return Err(ExecError::Failed(
                "the state no longer has the shape the part kernel was prepared for".into(),
            ));
        }
        // SAFETY: the symbol was generated with exactly the `PartEntry` signature.
        let entry: libloading::Symbol<'_, PartEntry> =
            unsafe { self.kernel.library.get(self.unit.part_symbol.as_bytes()) }.map_err(|e| {
                ExecError::Failed(format!(
                    "the compiled kernel {} lacks `{}`: {e}; delete it to compile again",
                    self.kernel.path.display(),
                    self.unit.part_symbol
                ))
            })?;
        let levels: Vec<*mut c_void> = state
            .fields
            .iter_mut()
            .flat_map(|levels| {
                levels
                    .iter_mut()
                    .map(|b| b.as_bytes_mut().as_mut_ptr().cast::<c_void>())
            })
            .collect();
        let flat: Vec<c_long> = bounds
            .iter()
            .flat_map(|&(lo, hi)| [lo as c_long, hi as c_long])
            .collect();
        // SAFETY: every level pointer addresses a buffer of the field's type
        // and of the length the C code indexes (checked above, and every
        // access of the program was checked against these grids in
        // `prepare`), and the box lies inside the part's subset (checked
        // above), whose accesses those checks covered.
        let status = unsafe {
            entry(
                self.params_f.as_ptr(),
                self.params_i.as_ptr(),
                levels.as_ptr(),
                stencil as c_int,
                part as c_int,
                flat.as_ptr(),
            )
        };
        match status {
            0 => Ok(()),
            _ => Err(ExecError::Failed(format!(
                "the part kernel has no part {part} of stencil {stencil}"
            ))),
        }
    }
}

/// `Ok` when `bounds` (inclusive, per axis) lies inside `whole`, the box of
/// part `part` of stencil `stencil` (`None`: the part has no points); the
/// error names both, so that no part runner launches outside its subset.
pub(crate) fn box_inside_part(
    whole: Option<&[(i64, i64)]>,
    bounds: &[(i64, i64)],
    (stencil, part): (usize, usize),
) -> Result<(), ExecError> {
    let inside = whole.is_some_and(|whole| {
        whole.len() == bounds.len()
            && whole
                .iter()
                .zip(bounds)
                .all(|(&(lo, hi), &(blo, bhi))| lo <= blo && bhi <= hi)
    });
    if inside {
        Ok(())
    } else {
        Err(ExecError::Failed(format!(
            "the box {bounds:?} is not inside part {part} of stencil {stencil} ({whole:?})"
        )))
    }
}
