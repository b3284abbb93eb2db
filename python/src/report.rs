//! `Program.explain` and `stencilc.tune`: the library's explain report
//! ([`stencilc::explain`]) and tuning ([`stencilc::tune::tuner`]) with
//! Python arguments, and their results as `stencilc.Explain` and
//! `stencilc.TuneResult`. Both results keep the JSON object the command line
//! prints with `--json`; their attributes and `as_dict()` are read from it, so
//! they say exactly what `stencilc explain --json` and `stencilc tune --json` say.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use stencilc::exec::backend::Backend;
use stencilc::exec::options::{ProgressHook, RunOptions};
use stencilc::exec::Buffer;
use stencilc::ir::FieldId;
use stencilc::lower::Target;
use stencilc::model::Device;
use stencilc::session;
use stencilc::tune::search::Settings;
use stencilc::tune::tuner::{self, Request};

use crate::errors::RunError;
use crate::program::Program;
use crate::run::{self, BoundRun, Schedule};
use crate::workers;

/// `value` as Python objects (dicts, lists, str, int, float, bool, None),
/// through the `json` module so that numbers read as `json.loads` reads them.
pub fn json_to_py(py: Python<'_>, value: &serde_json::Value) -> PyResult<PyObject> {
    let text = serde_json::to_string(value)
        .map_err(|e| RunError::new_err(format!("internal error writing JSON: {e}")))?;
    Ok(py
        .import_bound("json")?
        .call_method1("loads", (text,))?
        .unbind())
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// What each GPU kernel of a program would cost on a device, and why: the
/// report of `stencilc explain`. `str(e)` is the text the command prints,
/// `e.to_json()` the object `--json` prints and `e.as_dict()` that object as
/// Python values; `e.kernels` lists the kernels (as dicts: `name`, `role`,
/// `block`, `points_per_thread`, `ptxas`, `cost`, `launches_per_iteration`,
/// `gstencils_per_s`, `fraction_of_copy`, `warnings`).
#[pyclass(module = "stencilc", frozen)]
pub struct Explain {
    text: String,
    /// `--json`'s text, in the report's field order.
    json_text: String,
    json: serde_json::Value,
}

impl Explain {
    fn get(&self, py: Python<'_>, key: &str) -> PyResult<PyObject> {
        json_to_py(py, &self.json[key])
    }
}

#[pymethods]
impl Explain {
    /// The kernels, in launch order, each a dict.
    #[getter]
    fn kernels(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, "kernels")
    }

    /// The program's name.
    #[getter]
    fn program(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, "program")
    }

    /// `"cuda"` or `"opencl"`.
    #[getter]
    fn target(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, "target")
    }

    /// The device modelled (a dict: `name`, `arch`, `sms`, ...).
    #[getter]
    fn device(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, "device")
    }

    /// The schedule, in words.
    #[getter]
    fn schedule(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, "schedule")
    }

    /// Predicted seconds of one sweep (every stencil kernel once).
    #[getter]
    fn sweep_seconds(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, "sweep_seconds")
    }

    /// Predicted seconds of one iteration, reductions and checks included.
    #[getter]
    fn iteration_seconds(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, "iteration_seconds")
    }

    /// The report's notes.
    #[getter]
    fn notes(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, "notes")
    }

    /// Every kernel's warnings, each as `"kernel: warning"`.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for kernel in self.json["kernels"].as_array().into_iter().flatten() {
            let name = kernel["name"].as_str().unwrap_or_default();
            for w in kernel["warnings"].as_array().into_iter().flatten() {
                out.push(format!("{name}: {}", w.as_str().unwrap_or_default()));
            }
        }
        out
    }

    /// The report as `stencilc explain --json` prints it.
    fn to_json(&self) -> String {
        self.json_text.clone()
    }

    /// The report as a dict (what `json.loads(e.to_json())` gives).
    fn as_dict(&self, py: Python<'_>) -> PyResult<PyObject> {
        json_to_py(py, &self.json)
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!(
            "<stencilc.Explain {} on the {}: {} kernel(s), {:.4} ms per iteration>",
            self.json["program"].as_str().unwrap_or_default(),
            self.json["device"]["name"].as_str().unwrap_or_default(),
            self.json["kernels"].as_array().map_or(0, Vec::len),
            self.json["iteration_seconds"].as_f64().unwrap_or(0.0) * 1e3
        )
    }
}

/// `Program.explain`.
pub fn explain(
    py: Python<'_>,
    program: &Program,
    target: &str,
    device: Option<&str>,
    params: Option<&Bound<'_, PyDict>>,
    schedule: Schedule<'_, '_>,
) -> PyResult<Explain> {
    let target = match target {
        "cuda" => Target::Cuda,
        "opencl" => Target::OpenCl,
        other => {
            return Err(PyValueError::new_err(format!(
                "target={other:?}: explain takes \"cuda\" or \"opencl\""
            )))
        }
    };
    let device_name = device.unwrap_or("h100-sxm");
    let device = Device::find(device_name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown device `{device_name}`; choose one of: {}",
            Device::known_names()
        ))
    })?;
    let (ir, values) = run::params_of(py, &program.ir, params)?;
    let request = schedule.options(&ir)?.schedule_request();
    let env = run::bind_all(py, &ir, values, "explain needs every grid size")?;
    // Lowering recurses over expressions, and NVRTC and ptxas take a while:
    // on a deep stack, with the GIL released.
    let report = py
        .allow_threads(|| {
            crate::on_deep_stack(|| stencilc::explain::explain(&ir, &env, target, device, &request))
        })
        .ok_or_else(|| {
            RunError::new_err("internal error in stencilc while explaining; please report it")
        })?
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let json = serde_json::to_value(&report)
        .map_err(|e| RunError::new_err(format!("internal error writing JSON: {e}")))?;
    Ok(Explain {
        text: report.render(),
        json_text: serde_json::to_string_pretty(&report).unwrap_or_default(),
        json,
    })
}

/// The outcome of `stencilc.tune`: the fastest schedule measured and what the
/// search did. `best` holds its knobs (`block`, `tile`, `vector`, `shm`, `fuse`,
/// `time`, `cpu_tile`, `threads`; those the back-end chose itself absent), `seconds`
/// its median time per run, `flags` the `stencilc run` flags and `pragma` the
/// region pragma (GPU back-ends) that ask for it; `database` is the tuning
/// database it was recorded in (`None` with `save=False`), where a later
/// `Program.run` on the same back-end and parameter values finds it.
/// `as_dict()` and `to_json()` give the object `stencilc tune --json` prints.
#[pyclass(module = "stencilc", frozen)]
pub struct TuneResult {
    json: serde_json::Value,
    /// The line to paste: the C back-end's flags, or the region pragma.
    #[pyo3(get)]
    paste: String,
    /// Configurations measured with a matching result.
    #[pyo3(get)]
    measured: usize,
    /// Warnings about the database.
    #[pyo3(get)]
    warnings: Vec<String>,
}

impl TuneResult {
    fn get(&self, py: Python<'_>, path: &[&str]) -> PyResult<PyObject> {
        let value = path.iter().fold(&self.json, |v, key| &v[*key]);
        json_to_py(py, value)
    }
}

#[pymethods]
impl TuneResult {
    /// The fastest configuration's knobs, as a dict.
    #[getter]
    fn best(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["best", "knobs"])
    }

    /// Its median seconds per run.
    #[getter]
    fn seconds(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["best", "seconds"])
    }

    /// The `stencilc run` flags asking for it (`--cpu-tile 64,8 --time 2`).
    #[getter]
    fn flags(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["best", "flags"])
    }

    /// The region pragma asking for it (GPU back-ends; `None` for C).
    #[getter]
    fn pragma(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["best", "pragma"])
    }

    /// The back-end tuned.
    #[getter]
    fn backend(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["backend"])
    }

    /// The device the schedule was tuned on.
    #[getter]
    fn device(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["device"])
    }

    /// Configurations in the space before pruning.
    #[getter]
    fn considered(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["considered"])
    }

    /// Configurations pruned (cannot run, or predicted hopeless).
    #[getter]
    fn pruned(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["pruned"])
    }

    /// Configurations left to measure after pruning.
    #[getter]
    fn candidates(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["candidates"])
    }

    /// Candidates left untried when the budget ran out.
    #[getter]
    fn untried(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["untried"])
    }

    /// Every measurement, in the order measured (dicts: `knobs`, `predicted`,
    /// `times`, `median`, `status`, `why`).
    #[getter]
    fn measurements(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["measurements"])
    }

    /// The tuning database the best went to, or `None`.
    #[getter]
    fn database(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.get(py, &["database"])
    }

    /// The report as `stencilc tune --json` prints it.
    fn to_json(&self) -> String {
        pretty(&self.json)
    }

    /// The report as a dict.
    fn as_dict(&self, py: Python<'_>) -> PyResult<PyObject> {
        json_to_py(py, &self.json)
    }

    fn __repr__(&self) -> String {
        format!(
            "<stencilc.TuneResult {} on {}: best `{}` {:.3} ms, {} measured of {} candidate(s)>",
            self.json["program"].as_str().unwrap_or_default(),
            self.json["backend"].as_str().unwrap_or_default(),
            self.paste,
            self.json["best"]["seconds"].as_f64().unwrap_or(0.0) * 1e3,
            self.measured,
            self.json["candidates"].as_u64().unwrap_or(0)
        )
    }
}

/// `stencilc.tune`.
#[pyfunction]
#[pyo3(signature = (program, backend = "c", *, params = None, budget = None, exhaustive = false, repeats = 3, save = true, inputs = None, **fields))]
#[allow(clippy::too_many_arguments)]
pub fn tune(
    py: Python<'_>,
    program: &Bound<'_, PyAny>,
    backend: &str,
    params: Option<&Bound<'_, PyDict>>,
    budget: Option<&Bound<'_, PyAny>>,
    exhaustive: bool,
    repeats: i64,
    save: bool,
    inputs: Option<&Bound<'_, PyDict>>,
    fields: Option<&Bound<'_, PyDict>>,
) -> PyResult<TuneResult> {
    let program: PyRef<'_, Program> = program
        .extract()
        .map_err(|_| PyTypeError::new_err("tune takes a stencilc.Program as its first argument"))?;
    let backend = match backend {
        "c" => Backend::C,
        "opencl" => Backend::OpenCl,
        "cuda" => Backend::Cuda,
        other => {
            return Err(PyValueError::new_err(format!(
                "backend={other:?}: tune takes \"c\", \"opencl\" or \"cuda\""
            )))
        }
    };
    let budget = match budget {
        None => None,
        Some(value) => {
            let seconds: f64 = value.extract().map_err(|_| {
                PyTypeError::new_err("budget is a number of seconds (float or int), or None")
            })?;
            if !(seconds.is_finite() && seconds > 0.0) {
                return Err(PyValueError::new_err(format!(
                    "budget={seconds}: give a positive number of seconds, e.g. budget=60"
                )));
            }
            Some(Duration::from_secs_f64(seconds))
        }
    };
    if repeats < 1 {
        return Err(PyValueError::new_err(format!(
            "repeats={repeats}: give 1 or more timed runs per configuration"
        )));
    }
    let all = crate::program::merge_fields(py, inputs, fields)?;
    let BoundRun { ir, env, arrays } = run::bind_arrays(py, &program.ir, params, &all)?;
    let mut given: Vec<(FieldId, Buffer)> = Vec::with_capacity(arrays.len());
    for (field, array) in &arrays {
        given.push((
            *field,
            crate::arrays::to_buffer(array, ir.fields[field.0].ty)?,
        ));
    }
    let initial = session::initial_state(&ir, &env, given);
    let stop = Arc::new(AtomicBool::new(false));
    let base = RunOptions {
        // Ctrl-C ends each run still to measure after its first iteration;
        // the search then ends quickly with those runs failed.
        progress: Some(ProgressHook::new(|_, _| {}).with_stop(Arc::clone(&stop))),
        ..RunOptions::default()
    };
    let job_ir = Arc::clone(&ir);
    let tuned = workers::run_interruptibly(py, &stop, move || {
        let request = Request {
            backend,
            base,
            config: None,
            exhaustive,
            settings: Settings {
                repeats: repeats as usize,
                budget,
                tolerant: false,
            },
            save,
        };
        // The worker has the command line's deep stack.
        tuner::tune(&job_ir, &env, &initial, &request, &mut |_| {})
    })?;
    let tuned = match tuned {
        (_, Some(interrupt)) => return Err(interrupt),
        (tuned, None) => tuned.map_err(|e| RunError::new_err(e.to_string()))?,
    };
    Ok(TuneResult {
        json: tuned.json(),
        paste: tuned.paste(),
        measured: tuned.measured(),
        warnings: tuned.warnings.clone(),
    })
}
