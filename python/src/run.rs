//! `Program.run`: arguments checked and bound, the run on a thread of its own
//! with the GIL released (Ctrl-C stops it between iterations), and the
//! `stencilc.Result`.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use stencilc::exec::backend::Backend;
use stencilc::exec::options::{ProgressHook, RunOptions};
use stencilc::exec::{Bindings, Buffer, ExecError, ReadInPlace};
use stencilc::front::suggest;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{FieldId, Program as Ir, ScalarType, Value};
use stencilc::session::{self, ShapeConflict};
use stencilc::tune::db::{self, Database, Entry, Key};

use crate::arrays::{self, dtype_name, shape_text, FieldArray};
use crate::errors::exec_error;
use crate::program::Program;
use crate::workers;

/// The schedule keywords of `run` and `emit`.
pub struct Schedule<'a, 'py> {
    /// Threads per block, innermost axis first.
    pub block: Option<Vec<u32>>,
    /// Points per thread, innermost axis first.
    pub tile: Option<Vec<u32>>,
    /// GPU consecutive x points per thread as one vector access (2 or 4).
    pub vector: Option<u32>,
    /// Time steps per launch (GPU) or tile sweep (C).
    pub time: Option<u32>,
    /// `"none"`, `"auto"`, or field names.
    pub shm: Option<&'a Bound<'py, PyAny>>,
    /// OpenMP threads of the C back-end (`None`: OpenMP's default).
    pub threads: Option<u32>,
}

impl Schedule<'_, '_> {
    /// The back-end options, with `shm`'s field names checked.
    pub fn options(&self, program: &Ir) -> PyResult<RunOptions> {
        let shm = match self.shm {
            None => None,
            Some(value) if value.is_instance_of::<PyString>() => {
                let text: String = value.extract()?;
                if text != "none" && text != "auto" {
                    return Err(PyValueError::new_err(format!(
                        "shm={text:?}: give \"none\", \"auto\" or a list of field names"
                    )));
                }
                Some(text)
            }
            Some(value) => {
                let names: Vec<String> = value.extract().map_err(|_| {
                    PyTypeError::new_err("shm takes \"none\", \"auto\" or a list of field names")
                })?;
                for name in &names {
                    find_field(program, name, "shm")?;
                }
                Some(names.join(","))
            }
        };
        for (what, sizes) in [("block", &self.block), ("tile", &self.tile)] {
            if let Some(sizes) = sizes {
                if sizes.is_empty() || sizes.len() > 3 || sizes.contains(&0) {
                    return Err(PyValueError::new_err(format!(
                        "{what}={sizes:?}: give 1 to 3 positive sizes, innermost axis first"
                    )));
                }
            }
        }
        if self.threads == Some(0) {
            return Err(PyValueError::new_err(
                "threads=0: give 1 or more OpenMP threads, or leave threads out",
            ));
        }
        if self.time == Some(0) {
            return Err(PyValueError::new_err(
                "time=0: give 1 or more time steps per launch",
            ));
        }
        Ok(RunOptions {
            block: self.block.clone(),
            tile: self.tile.clone(),
            vector: self.vector,
            time: self.time,
            shm,
            threads: self.threads,
            ..RunOptions::default()
        })
    }
}

fn backend_of(name: &str) -> PyResult<Backend> {
    Ok(match name {
        "auto" => Backend::Auto,
        "interp" => Backend::Interp,
        "c" => Backend::C,
        "opencl" => Backend::OpenCl,
        "cuda" => Backend::Cuda,
        other => {
            return Err(PyValueError::new_err(format!(
                "backend={other:?} is not a back-end; give \"auto\", \"interp\", \"c\", \"opencl\" or \"cuda\""
            )))
        }
    })
}

fn names_text<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The field named `name`, or a `ValueError` that lists the fields.
fn find_field(program: &Ir, name: &str, context: &str) -> PyResult<FieldId> {
    if let Some(at) = program.fields.iter().position(|f| f.name == name) {
        return Ok(FieldId(at));
    }
    let names = || program.fields.iter().map(|f| f.name.as_str());
    let help = match suggest::closest(name, names()) {
        Some(close) => format!("did you mean `{close}`? "),
        None => String::new(),
    };
    Err(PyValueError::new_err(format!(
        "`{name}` is not a field of `{}` (in {context}); {help}its fields are {}",
        program.name,
        names_text(names())
    )))
}

/// A Python number as a value of parameter type `ty`; `bool` and numbers of
/// the wrong kind are refused (no float for an `int`).
fn value_of(value: &Bound<'_, PyAny>, name: &str, ty: ScalarType) -> PyResult<Value> {
    let wrong = || {
        PyTypeError::new_err(format!(
            "parameter `{name}` is {} {ty}: give a Python {}, not {}",
            if ty == ScalarType::Int { "an" } else { "a" },
            if ty.is_float() { "float or int" } else { "int" },
            value
                .get_type()
                .qualname()
                .map(|q| q.to_string())
                .unwrap_or_else(|_| "this value".into())
        ))
    };
    if value.is_instance_of::<PyBool>() {
        return Err(wrong());
    }
    let integral = value.is_instance_of::<PyInt>() || value.hasattr("__index__")?;
    match ty {
        ScalarType::Int | ScalarType::Long => {
            if value.is_instance_of::<PyFloat>() || !integral {
                return Err(wrong());
            }
            let wide: i128 = value.extract().map_err(|_| wrong())?;
            let fits = if ty == ScalarType::Int {
                i32::try_from(wide).ok().map(Value::Int)
            } else {
                i64::try_from(wide).ok().map(Value::Long)
            };
            fits.ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{wide} does not fit parameter `{name}`, {} {ty}",
                    if ty == ScalarType::Int { "an" } else { "a" }
                ))
            })
        }
        ScalarType::Float | ScalarType::Double => {
            if !(integral || value.is_instance_of::<PyFloat>() || value.hasattr("__float__")?) {
                return Err(wrong());
            }
            let x: f64 = value.extract().map_err(|_| wrong())?;
            Ok(if ty == ScalarType::Float {
                Value::Float(x as f32)
            } else {
                Value::Double(x)
            })
        }
    }
}

/// The program with the values of the region pragma's host identifiers that
/// `params` gives, and the parameter values `params` gives (by `ParamId`).
pub fn params_of(
    _py: Python<'_>,
    program: &Arc<Ir>,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<(Arc<Ir>, Vec<Option<Value>>)> {
    let mut values: Vec<Option<Value>> = vec![None; program.params.len()];
    let mut hints: Vec<(String, i64)> = Vec::new();
    for (key, value) in params.into_iter().flat_map(|d| d.iter()) {
        let name: String = key
            .extract()
            .map_err(|_| PyTypeError::new_err("the keys of params are parameter names (str)"))?;
        match program.params.iter().position(|p| p.name == name) {
            Some(at) => {
                let decl = &program.params[at];
                let v = value_of(&value, &name, decl.ty)?;
                if let Value::Int(i) = v {
                    hints.push((name, i64::from(i)));
                } else if let Value::Long(i) = v {
                    hints.push((name, i));
                }
                values[at] = Some(v);
            }
            None if program.hints.uses(&name) => {
                let v: i64 = value.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "`{name}` is a host identifier of the region's pragma options: give an int"
                    ))
                })?;
                hints.push((name, v));
            }
            None if program.fields.iter().any(|f| f.name == name) => {
                return Err(PyValueError::new_err(format!(
                    "`{name}` is a field of `{}`, not a parameter: give its array as a keyword \
                     argument, e.g. run(..., {name}=array), and only parameters in params=",
                    program.name
                )));
            }
            None => {
                let names = || program.params.iter().map(|p| p.name.as_str());
                let what = if program.constants.iter().any(|c| c.name == name) {
                    format!(
                        "`{name}` is a constant of `{}`, not a parameter",
                        program.name
                    )
                } else {
                    format!("`{name}` is not a parameter of `{}`", program.name)
                };
                let help = match suggest::closest(&name, names()) {
                    Some(close) => format!("did you mean `{close}`? "),
                    None => String::new(),
                };
                let list = if program.params.is_empty() {
                    "it has no parameters".to_string()
                } else {
                    format!("its parameters are {}", names_text(names()))
                };
                return Err(PyValueError::new_err(format!(
                    "{what} (in params); {help}{list}"
                )));
            }
        }
    }
    let hinted: Vec<(String, i64)> = hints
        .into_iter()
        .filter(|(n, _)| program.hints.uses(n))
        .collect();
    let program = if hinted.is_empty() {
        Arc::clone(program)
    } else {
        let mut owned = Ir::clone(program);
        owned.hints.values.extend(hinted);
        Arc::new(owned)
    };
    Ok((program, values))
}

/// The result of `Program.run`: the fields' final values, the iterate's
/// outcome and the time of each phase.
#[pyclass(name = "Result", module = "stencilc", frozen, get_all)]
pub struct RunResult {
    /// `{name: numpy.ndarray}`: each field's newest time level, shaped like its grid.
    fields: Py<PyDict>,
    /// Iterations run.
    iterations: u64,
    /// Whether the check ended the iterate before its maximum.
    stopped_by_check: bool,
    /// `{name: value or None}`: the last value of each reduction.
    reductions: Py<PyDict>,
    /// `{phase: seconds}` for `compile`, `upload`, `compute`, `download`.
    times: Py<PyDict>,
    /// The back-end that ran (`"auto"` resolved).
    backend: String,
    /// `{name: value}`: every parameter's value, those inferred from shapes included.
    params: Py<PyDict>,
    /// Notes of the run: why `auto` skipped a back-end, options clamped.
    notes: Vec<String>,
    /// `{name: address}`: the fields whose array the back-end read in place
    /// (fields no stencil writes, on `interp` and `c`) and the address it read.
    read_in_place: Py<PyDict>,
    /// The knobs of the tuned schedule the run used (`stencilc.tune`), as
    /// `{"cpu_tile": [...], "time": ..., ...}`; `None` when none was found.
    tuned: PyObject,
}

#[pymethods]
impl RunResult {
    fn __repr__(&self, py: Python<'_>) -> String {
        let reductions = self
            .reductions
            .bind(py)
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_default();
        format!(
            "<stencilc.Result backend={:?} iterations={} stopped_by_check={} reductions={} compute={:.6} s>",
            self.backend,
            self.iterations,
            if self.stopped_by_check { "True" } else { "False" },
            reductions,
            self.times
                .bind(py)
                .get_item("compute")
                .ok()
                .flatten()
                .and_then(|t| t.extract::<f64>().ok())
                .unwrap_or(0.0)
        )
    }
}

fn value_to_py(py: Python<'_>, value: Value) -> PyObject {
    match value {
        Value::Int(v) => v.into_py(py),
        Value::Long(v) => v.into_py(py),
        Value::Float(v) => f64::from(v).into_py(py),
        Value::Double(v) => v.into_py(py),
    }
}

/// The fields as the run's arguments give them: looked up, checked, and
/// checked for sharing memory.
fn field_arrays<'py>(
    program: &Ir,
    fields: &Bound<'py, PyDict>,
) -> PyResult<Vec<(FieldId, FieldArray<'py>)>> {
    let mut arrays: Vec<(FieldId, FieldArray<'py>)> = Vec::new();
    for (key, value) in fields.iter() {
        let name: String = key.extract()?;
        if let Some(param) = program.params.iter().find(|p| p.name == name) {
            return Err(PyValueError::new_err(format!(
                "`{name}` is a parameter of `{}` ({}), not a field: give it in params=, \
                 e.g. params={{\"{name}\": {}}}, and the fields' arrays as keyword arguments",
                program.name,
                param.ty,
                value
                    .repr()
                    .map_or_else(|_| "...".into(), |r| r.to_string())
            )));
        }
        let field = find_field(program, &name, "the field arguments")?;
        let decl = &program.fields[field.0];
        let rank = program.grids[decl.grid.0].rank();
        let array = arrays::field_array(&value, &name, decl.ty, rank)?;
        let (start, end) = array.byte_range();
        for (other, earlier) in &arrays {
            let (s, e) = earlier.byte_range();
            if start < e && s < end && start < end && s < e {
                return Err(PyValueError::new_err(format!(
                    "fields `{}` and `{name}` are given arrays that share memory; give each field \
                     its own array (x.copy())",
                    program.fields[other.0].name
                )));
            }
        }
        arrays.push((field, array));
    }
    Ok(arrays)
}

/// A program bound for a run: the parameters given and inferred from the
/// arrays' shapes, and the arrays checked against the grids.
pub struct BoundRun<'py> {
    /// The program (with the host identifiers `params` gives, when any).
    pub ir: Arc<Ir>,
    /// Its parameter values.
    pub env: RunEnv,
    /// The field arrays given, each of its field's dtype and grid shape.
    pub arrays: Vec<(FieldId, FieldArray<'py>)>,
}

/// Binds `params` and the arrays of `fields` (by field name) to `program`:
/// grid sizes not in `params` come from the shapes, as `stencilc run` infers
/// them from files; every parameter needs a value.
pub fn bind_arrays<'py>(
    py: Python<'py>,
    program: &Arc<Ir>,
    params: Option<&Bound<'py, PyDict>>,
    fields: &Bound<'py, PyDict>,
) -> PyResult<BoundRun<'py>> {
    let (ir, mut values) = params_of(py, program, params)?;
    let arrays = field_arrays(&ir, fields)?;

    let shapes: Vec<(FieldId, &[usize], String)> = arrays
        .iter()
        .map(|(f, a)| {
            (
                *f,
                a.shape.as_slice(),
                format!("the array of `{}`", ir.fields[f.0].name),
            )
        })
        .collect();
    session::grid_sizes_from_shapes(&ir, &mut values, &shapes).map_err(
        |ShapeConflict { earlier, later }| {
            let name = &ir.params[earlier.param.0].name;
            PyValueError::new_err(format!(
                "the arrays disagree on grid size `{name}`: {} gives {} but {} gives {}; give \
                 arrays of the same shape, or set params={{'{name}': ...}}",
                earlier.from, earlier.value, later.from, later.value
            ))
        },
    )?;
    let env = bind_all(
        py,
        &ir,
        values,
        "grid sizes also come from the shapes of the field arrays",
    )?;
    for (field, array) in &arrays {
        let decl = &ir.fields[field.0];
        let dims = env.field_dims(&ir, *field);
        if array.shape != dims {
            return Err(PyValueError::new_err(format!(
                "field `{}` needs an array of shape {} and dtype {} for these parameters, not shape {}",
                decl.name,
                shape_text(dims),
                dtype_name(decl.ty),
                shape_text(&array.shape)
            )));
        }
    }
    Ok(BoundRun { ir, env, arrays })
}

/// The bindings of `values` once each parameter has one, or a `ValueError`
/// naming those without (`hint` says where else values come from).
pub fn bind_all(
    py: Python<'_>,
    ir: &Ir,
    values: Vec<Option<Value>>,
    hint: &str,
) -> PyResult<RunEnv> {
    let missing = session::missing_params(ir, &values);
    if !missing.is_empty() {
        let example: Vec<String> = missing.iter().map(|n| format!("'{n}': ...")).collect();
        return Err(PyValueError::new_err(format!(
            "parameter(s) {} of `{}` have no value; give them with params={{{}}} ({hint})",
            names_text(missing.iter().copied()),
            ir.name,
            example.join(", ")
        )));
    }
    let bindings: Bindings = session::bindings(values).expect("every parameter has a value");
    stencilc::exec::bind(ir, &bindings).map_err(|e| exec_error(py, e))
}

/// `Program.run`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    py: Python<'_>,
    program: &Program,
    backend: &str,
    params: Option<&Bound<'_, PyDict>>,
    fields: &Bound<'_, PyDict>,
    schedule: Schedule<'_, '_>,
    use_tuned: bool,
) -> PyResult<RunResult> {
    let backend = backend_of(backend)?;
    let BoundRun { ir, env, arrays } = bind_arrays(py, &program.ir, params, fields)?;
    let mut options = schedule.options(&ir)?;
    let mut notes = Vec::new();
    let mut tuned = None;
    if use_tuned {
        let mut warnings = Vec::new();
        let found = tuned_entry(program, &ir, &env, backend, &options, &mut warnings);
        notes.extend(warnings.into_iter().map(|w| format!("warning: {w}")));
        if let Some(entry) = found {
            notes.push(format!(
                "using the tuned schedule `{}` ({:.3} ms when tuned; tuned=False to ignore it)",
                entry.knobs.label(),
                entry.seconds * 1e3
            ));
            options = entry.knobs.fill(&options);
            tuned = Some(entry.knobs);
        }
    }

    // The fields no stencil writes are read in the caller's arrays by the
    // back-ends that can (a run never changes an array passed in, so the
    // written ones are copied).
    let in_place_backend = matches!(backend, Backend::Interp | Backend::C);
    let read_only = stencilc::data::in_place::read_only_fields(&ir);
    let mut read_in_place = ReadInPlace::default();
    let mut guards: Vec<(FieldId, arrays::ReadGuard<'_>)> = Vec::new();
    let mut inputs: Vec<(FieldId, Buffer)> = Vec::with_capacity(arrays.len());
    for (field, array) in &arrays {
        let decl = &ir.fields[field.0];
        if in_place_backend && read_only[field.0] {
            let guard = arrays::read_guard(array, decl.ty)?;
            let (data, len) = guard.data();
            // SAFETY: `data` is the first of `len` elements of the field's type
            // in a C-contiguous array that `guards` keeps alive and borrowed for
            // reading until the run has returned.
            unsafe { read_in_place.add(*field, data, len, decl.ty) };
            guards.push((*field, guard));
            inputs.push((*field, Buffer::zeros(decl.ty, 0)));
        } else {
            inputs.push((*field, arrays::to_buffer(array, decl.ty)?));
        }
    }
    check_memory(&ir, &env)?;
    let state = session::initial_state(&ir, &env, inputs);

    let stop = Arc::new(AtomicBool::new(false));
    let options = RunOptions {
        progress: Some(ProgressHook::new(|_, _| {}).with_stop(Arc::clone(&stop))),
        // A program with host identifiers bound by `params` is a new one each run.
        kernels: Arc::ptr_eq(&ir, &program.ir).then(|| program.kernels.clone()),
        read_in_place: (!guards.is_empty()).then(|| read_in_place.clone()),
        ..options
    };
    let job_ir = Arc::clone(&ir);
    let ran = workers::run_interruptibly(py, &stop, move || {
        let mut notes = Vec::new();
        let outcome = session::run(backend, &job_ir, &env, state, &options, &mut |n| {
            notes.push(n.to_string())
        });
        (outcome, notes, env)
    })?;
    let ((outcome, run_notes, env), interrupt) = ran;
    if let Some(error) = interrupt {
        // How far the run got: `e.iterations` on the KeyboardInterrupt.
        let done = match &outcome {
            Err(ExecError::Interrupted(done)) => Some(*done),
            Ok(outcome) => Some(outcome.summary.iterations),
            Err(_) => None,
        };
        let _ = error.value_bound(py).setattr("iterations", done);
        return Err(error);
    }
    notes.extend(run_notes);
    let outcome = outcome.map_err(|e| exec_error(py, e))?;
    drop(guards);

    let out = PyDict::new_bound(py);
    let read = PyDict::new_bound(py);
    let mut state = outcome.state;
    for (index, field) in ir.fields.iter().enumerate() {
        if let Some(address) = read_in_place.address(FieldId(index)) {
            // Read in place and never written: the values it ends with are the
            // input's, in an array of the result's own.
            let (_, array) = arrays
                .iter()
                .find(|(f, _)| f.0 == index)
                .expect("a field read in place was given an array");
            out.set_item(&field.name, array.array.call_method0("copy")?)?;
            read.set_item(&field.name, address)?;
            continue;
        }
        let level = field.level_of(field.newest_offset());
        let buffer = std::mem::replace(&mut state.fields[index][level], Buffer::Int(Vec::new()));
        let dims = env.field_dims(&ir, FieldId(index));
        out.set_item(&field.name, arrays::to_numpy(py, buffer, dims)?)?;
    }
    let reductions = PyDict::new_bound(py);
    for (name, value) in &outcome.summary.reductions {
        reductions.set_item(name, value.map(|v| value_to_py(py, v)))?;
    }
    let times = PyDict::new_bound(py);
    let t = &outcome.summary.times;
    for (phase, duration) in [
        ("compile", t.compile),
        ("upload", t.upload),
        ("compute", t.compute),
        ("download", t.download),
    ] {
        times.set_item(phase, duration.as_secs_f64())?;
    }
    let bound = PyDict::new_bound(py);
    for (param, value) in ir.params.iter().zip(env.params()) {
        bound.set_item(&param.name, value_to_py(py, *value))?;
    }
    Ok(RunResult {
        fields: out.unbind(),
        iterations: outcome.summary.iterations,
        stopped_by_check: outcome.summary.stopped_by_check,
        reductions: reductions.unbind(),
        times: times.unbind(),
        backend: outcome.backend.to_string(),
        params: bound.unbind(),
        notes,
        read_in_place: read.unbind(),
        tuned: match tuned {
            Some(knobs) => crate::report::json_to_py(py, &serde_json::json!(knobs))?,
            None => py.None(),
        },
    })
}

/// The tuned schedule recorded for `ir` with `env` on `backend`, as
/// `stencilc run` finds it (`tune::db::tuned_for`), at a run's cost: nothing
/// when there is no database, and the program's hash and this machine's
/// device and compiler description kept (per `Program`, per process) rather
/// than printed, hashed and probed on every run.
fn tuned_entry(
    program: &Program,
    ir: &Arc<Ir>,
    env: &RunEnv,
    backend: Backend,
    options: &RunOptions,
    warnings: &mut Vec<String>,
) -> Option<Entry> {
    type Identities = Mutex<HashMap<String, (String, String)>>;
    static IDENTITIES: OnceLock<Identities> = OnceLock::new();
    if !matches!(backend, Backend::C | Backend::OpenCl | Backend::Cuda) {
        return None;
    }
    let database = Database::in_cache();
    if !database.path().exists() {
        return None;
    }
    let which = format!(
        "{backend} {:?} {:?} {} {}",
        std::env::var("CC").ok(),
        options.cflags,
        options.fast_math,
        options.fma
    );
    let identities = IDENTITIES.get_or_init(Identities::default);
    let known = identities.lock().ok()?.get(&which).cloned();
    let (device, compiler) = known.unwrap_or_else(|| {
        let found = db::identity(backend, options);
        if let Ok(mut identities) = identities.lock() {
            identities.insert(which, found.clone());
        }
        found
    });
    let hash = if Arc::ptr_eq(ir, &program.ir) {
        program.hash.get_or_init(|| db::program_hash(ir)).clone()
    } else {
        db::program_hash(ir)
    };
    let key = Key::with_hash(hash, ir, env, backend, &device, &compiler);
    database.lookup(&key, warnings).unwrap_or_else(|why| {
        warnings.push(why);
        None
    })
}

/// Refuses a run whose fields (every time level) need more memory than the
/// address space holds or than can be reserved now, instead of aborting.
fn check_memory(program: &Ir, env: &stencilc::ir::env::RunEnv) -> PyResult<()> {
    let bytes = program.fields.iter().try_fold(0usize, |total, field| {
        let points: usize = env.grid_dims()[field.grid.0].iter().product();
        points
            .checked_mul(field.ty.size_bytes() * field.levels())
            .and_then(|b| total.checked_add(b))
    });
    let fits = bytes.is_some_and(|b| Vec::<u8>::new().try_reserve_exact(b).is_ok());
    if fits {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "the fields of `{}` need more memory than can be allocated here; use smaller grid sizes",
            program.name
        )))
    }
}
