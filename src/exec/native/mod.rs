//! The native executor: generated C ([`back::c`](crate::back::c)) compiled with the
//! system C compiler, loaded with `libloading` and run on the caller's buffers.
//!
//! The run function rotates time levels by swapping pointers; afterwards the
//! buffers of [`FieldState`] are permuted to match (moved, never copied), so the
//! state ends exactly as the interpreter leaves it.

pub mod cache;
pub mod compile;
pub mod parts;

use std::ffi::c_void;
use std::os::raw::{c_int, c_long};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use crate::analysis::tile::CpuPlan;
use crate::back::c;
use crate::exec::kernel_cache::KernelKey;
use crate::exec::options::RunOptions;
use crate::exec::{
    check_inputs, check_inputs_in_place, Buffer, ExecError, FieldState, PhaseTimes, ReadInPlace,
    RunSummary,
};
use crate::ir::env::RunEnv;
use crate::ir::{FieldId, Program, ScalarType, Value};
use crate::schedule::cpu_tile::CpuRequest;

pub use compile::{Compiler, Kernel};

/// The signature of `<program>_entry` (see [`c::ENTRY_ABI`]).
type Entry = unsafe extern "C" fn(
    *const f64,
    *const c_long,
    *mut *mut c_void,
    *mut c_long,
    *mut f64,
    *mut c_long,
    *const u8,
) -> c_int;

/// Compiles (or finds in the cache) and loads the C for `program`, with the
/// compiler from `$CC` (or `cc`) and the flags of `options`.
pub fn prepare(program: &Program, options: &RunOptions) -> Result<(c::CUnit, Kernel), ExecError> {
    let compiler = Compiler::from_env()?;
    prepare_with(program, options, &compiler)
}

/// [`prepare`] with a given compiler.
pub fn prepare_with(
    program: &Program,
    options: &RunOptions,
    compiler: &Compiler,
) -> Result<(c::CUnit, Kernel), ExecError> {
    prepare_planned(program, &CpuPlan::default(), options, compiler)
}

/// The plan for running `program` with `env` under `options` on this
/// machine: `--time`, `--cpu-tile` and `--threads` where given, the rest
/// chosen by the driver ([`crate::driver::cpu::plan`]). A pragma `time:`
/// naming an unknown identifier is an error at the identifier.
pub fn plan(program: &Program, env: &RunEnv, options: &RunOptions) -> Result<CpuPlan, ExecError> {
    let request = CpuRequest {
        time: options.time,
        tile: options.cpu_tile.clone(),
        threads: options.threads,
        order: options.cpu_order,
    };
    crate::driver::cpu::plan(program, &request, Some(env)).map_err(|d| {
        ExecError::Located(crate::diag::Diagnostics::new(
            program.source.clone(),
            vec![d],
        ))
    })
}

/// [`prepare_with`] for the C of `plan` (threads, time tiling).
pub fn prepare_planned(
    program: &Program,
    plan: &CpuPlan,
    options: &RunOptions,
    compiler: &Compiler,
) -> Result<(c::CUnit, Kernel), ExecError> {
    let mut unit = c::emit_program_planned(program, plan);
    if options.fma {
        unit.source = c::with_fma_notice(&unit.source);
    }
    let flags = compile::flags_with_fma(options.cflags.as_deref(), options.fast_math, options.fma);
    let kernel = compile::build(&unit.source, compiler, &flags, &compile::cache_dir())?;
    Ok((unit, kernel))
}

/// A program's C and the kernel loaded from it, as [`KernelCache`] keeps it.
type Prepared = (c::CUnit, Kernel);

/// Runs `program` natively on `state`.
pub fn run(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    options: &RunOptions,
    notice: &mut dyn FnMut(&str),
) -> Result<RunSummary, ExecError> {
    let read_in_place = options.read_in_place.as_ref();
    check_inputs_in_place(program, env, state, read_in_place)?;
    let start = Instant::now();
    let plan = plan(program, env, options)?;
    for note in &plan.notes {
        notice(note);
    }
    if options.verbose {
        for reason in &plan.reasons {
            notice(reason);
        }
    }
    let compiler = Compiler::from_env()?;
    let flags = compile::flags_with_fma(options.cflags.as_deref(), options.fast_math, options.fma);
    let key = KernelKey {
        plan: plan.clone(),
        fma: options.fma,
        flags,
        compiler: (compiler.command.clone(), compiler.identity.clone()),
    };
    let cache = options.kernels.as_ref().filter(|c| c.holds(program));
    let remembered = cache.and_then(|c| c.get(&key)?.downcast::<Prepared>().ok());
    let prepared = match remembered {
        Some(prepared) => prepared,
        None => {
            let prepared: Arc<Prepared> =
                Arc::new(prepare_planned(program, &plan, options, &compiler)?);
            // A damaged cache entry rebuilt, an unwritable cache: said once,
            // when the kernel is built or looked up.
            for note in &prepared.1.notes {
                notice(note);
            }
            if let Some(cache) = cache {
                cache.insert(key, prepared.clone());
            }
            prepared
        }
    };
    let (unit, kernel) = &*prepared;
    if options.verbose {
        let what = if kernel.cache_hit {
            "cache hit"
        } else {
            "compiled"
        };
        notice(&format!(
            "c: {what}: {} ({:.3} s)",
            kernel.path.display(),
            kernel.elapsed.as_secs_f64()
        ));
    }
    let compile_time = start.elapsed();
    // The run ends between iterations once the stop flag is set (the C polls it).
    let stop = options.progress.as_ref().and_then(|p| p.stop_flag());
    let mut summary = execute_checked(program, env, state, unit, kernel, read_in_place, stop)?;
    summary.times.compile = compile_time;
    Ok(summary)
}

/// Calls a loaded unit's entry point on `state`, after checking the inputs
/// ([`check_inputs`]) and that `unit` is `program`'s C and `kernel` was built
/// from it ([`prepare`] returns such a pair): the C code indexes the buffers
/// without checks.
pub fn execute(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    unit: &c::CUnit,
    kernel: &Kernel,
) -> Result<RunSummary, ExecError> {
    check_inputs(program, env, state)?;
    let expected = c::emit_program_planned(program, &unit.plan).source;
    let expected = if unit.source.starts_with("/* --fma") {
        c::with_fma_notice(&expected)
    } else {
        expected
    };
    if unit.source != expected || !kernel.built_from(&unit.source) {
        return Err(ExecError::Failed(format!(
            "the compiled unit is not program `{}`'s; prepare it with `native::prepare` from this program",
            program.name
        )));
    }
    execute_checked(program, env, state, unit, kernel, None, None)
}

/// [`execute`] on inputs already checked.
fn execute_checked(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    unit: &c::CUnit,
    kernel: &Kernel,
    read_in_place: Option<&ReadInPlace>,
    stop: Option<&AtomicBool>,
) -> Result<RunSummary, ExecError> {
    // SAFETY: the symbol was generated with exactly the `Entry` signature.
    let entry: libloading::Symbol<'_, Entry> =
        unsafe { kernel.library.get(unit.entry_symbol.as_bytes()) }.map_err(|e| {
            ExecError::Failed(format!(
                "the compiled kernel {} lacks `{}`: {e}; delete it to compile again",
                kernel.path.display(),
                unit.entry_symbol
            ))
        })?;
    let params_f: Vec<f64> = env.params().iter().map(|v| v.as_f64()).collect();
    let params_i: Vec<c_long> = env
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
    // A field read in place is never stored into (checked by
    // `check_inputs_in_place`): every level of it points at the input.
    let mut levels: Vec<*mut c_void> = state
        .fields
        .iter_mut()
        .enumerate()
        .flat_map(|(f, levels)| {
            let in_place = read_in_place.and_then(|r| r.data(FieldId(f)));
            levels.iter_mut().map(move |b| match in_place {
                Some(data) => data.cast_mut().cast::<c_void>(),
                None => b.as_bytes_mut().as_mut_ptr().cast::<c_void>(),
            })
        })
        .collect();
    let before = levels.clone();
    let reduction_count = program.iterate.as_ref().map_or(0, |it| it.reductions.len());
    let mut counts: [c_long; 3] = [0; 3];
    let mut reductions_f = vec![0f64; reduction_count.max(1)];
    let mut reductions_i: Vec<c_long> = vec![0; reduction_count.max(1)];
    let start = Instant::now();
    // SAFETY: every level pointer addresses a buffer of the field's type whose
    // length was checked against the grid the C code computes from the same
    // parameters; the arrays have the lengths the entry point indexes.
    let status = unsafe {
        entry(
            params_f.as_ptr(),
            params_i.as_ptr(),
            levels.as_mut_ptr(),
            counts.as_mut_ptr(),
            reductions_f.as_mut_ptr(),
            reductions_i.as_mut_ptr(),
            // An `AtomicBool` is one byte holding 0 or 1, which the C reads
            // (volatile) between iterations while this flag may be stored to.
            stop.map_or(std::ptr::null(), |flag| {
                flag.as_ptr().cast_const().cast::<u8>()
            }),
        )
    };
    let compute = start.elapsed();
    reorder_levels(state, &before, &levels);
    match status {
        0 => {}
        1 => {
            return Err(ExecError::Failed(
                "the check interval (`every`) is below 1; check every 1 or more iterations".into(),
            ))
        }
        3 => {
            return Err(ExecError::Failed(
                "out of memory for the reduction partials or the time-tiling buffers; use a \
                 smaller grid (or no --time)"
                    .into(),
            ))
        }
        4 | 5 => {
            return Err(ExecError::Failed(format!(
            "the compiled kernel refused the sizes (status {status}: {}; its message is above); \
                 change the parameter values",
            if status == 4 {
                "an access would leave its grid"
            } else {
                "a grid is empty or too large to index"
            }
        )))
        }
        6 => return Err(ExecError::Interrupted(counts[0].max(0) as u64)),
        other => {
            return Err(ExecError::Failed(format!(
                "the compiled kernel failed with status {other}"
            )))
        }
    }
    let reductions = match &program.iterate {
        Some(iterate) => iterate
            .reductions
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let value = (counts[2] != 0).then(|| match r.ty {
                    ScalarType::Int => Value::Int(reductions_i[i] as i32),
                    ScalarType::Long => Value::Long(reductions_i[i] as i64),
                    ScalarType::Float => Value::Float(reductions_f[i] as f32),
                    ScalarType::Double => Value::Double(reductions_f[i]),
                });
                (r.name.clone(), value)
            })
            .collect(),
        None => Vec::new(),
    };
    Ok(RunSummary {
        iterations: counts[0].max(0) as u64,
        stopped_by_check: counts[1] != 0,
        reductions,
        times: PhaseTimes {
            compute,
            ..PhaseTimes::default()
        },
    })
}

/// Moves each field's buffers into the order the C code left its level pointers.
fn reorder_levels(state: &mut FieldState, before: &[*mut c_void], after: &[*mut c_void]) {
    let mut base = 0;
    for levels in &mut state.fields {
        let n = levels.len();
        let mut old: Vec<Option<Buffer>> = levels.drain(..).map(Some).collect();
        for slot in 0..n {
            // Find the buffer the C code put in this slot (the first unused one
            // with that address: empty buffers may share a dangling address).
            let k = (0..n)
                .find(|&k| old[k].is_some() && before[base + k] == after[base + slot])
                .or_else(|| (0..n).find(|&k| old[k].is_some()))
                .expect("as many buffers as slots");
            levels.push(old[k].take().expect("unused"));
        }
        base += n;
    }
}
