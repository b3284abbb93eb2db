//! `stencilc.Program`: a checked program, what it declares, and the code it
//! compiles to.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use stencilc::driver::emit::{self as gpu_emit, EmitOptions, GpuTarget};
use stencilc::exec::options::RunOptions;
use stencilc::front::{self, LoadError};
use stencilc::ir::env::RunEnv;
use stencilc::source::SourceFile;

use crate::arrays::dtype_name;
use crate::errors::{compile_error, RunError};
use crate::run::{self, Schedule};

/// A stencil program, parsed and checked.
///
/// `Program(source)` takes SDSL text; `Program.from_file(path)` reads a `.sdsl`
/// file or a region of a C/C++ file with `#pragma sdsl` regions. A program with
/// errors raises `stencilc.CompileError`.
#[pyclass(module = "stencilc", frozen)]
pub struct Program {
    pub(crate) ir: Arc<stencilc::ir::Program>,
    /// The C back-end's loaded kernels of `ir`, so that a second `run` skips
    /// printing, hashing and loading the C.
    pub(crate) kernels: stencilc::exec::kernel_cache::KernelCache,
    /// `ir`'s hash in the tuning database's keys, computed on first need.
    pub(crate) hash: std::sync::OnceLock<String>,
}

fn checked(
    py: Python<'_>,
    parse: impl FnOnce() -> Result<stencilc::ir::Program, LoadError> + Send,
) -> PyResult<Program> {
    let parsed = py
        .allow_threads(|| {
            crate::on_deep_stack(|| {
                parse().and_then(|p| stencilc::analysis::checked(p).map_err(LoadError::Program))
            })
        })
        .ok_or_else(|| {
            RunError::new_err(
                "internal error in stencilc while parsing the program; please report it with the program",
            )
        })?;
    match parsed {
        Ok(ir) => {
            let ir = Arc::new(ir);
            let kernels = stencilc::exec::kernel_cache::KernelCache::new(Arc::clone(&ir));
            Ok(Program {
                ir,
                kernels,
                hash: std::sync::OnceLock::new(),
            })
        }
        Err(LoadError::Program(diagnostics)) => Err(compile_error(py, &diagnostics)),
        Err(error @ LoadError::Io { .. }) => Err(PyOSError::new_err(error.to_string())),
        Err(other) => Err(PyValueError::new_err(other.to_string())),
    }
}

#[pymethods]
impl Program {
    /// Parses and checks SDSL `source`; `name` is the file name shown in
    /// diagnostics (the program is named after its stem).
    #[new]
    #[pyo3(signature = (source, name = "program.sdsl"))]
    fn new(py: Python<'_>, source: String, name: &str) -> PyResult<Program> {
        let file = SourceFile::new(name.to_string(), source);
        checked(py, move || {
            front::parse_program(file).map_err(LoadError::Program)
        })
    }

    /// Reads, parses and checks the program in `path`: a `.sdsl` file, or
    /// region `region` (from 0; the first by default) of a C/C++ file.
    #[staticmethod]
    #[pyo3(signature = (path, region = None))]
    fn from_file(py: Python<'_>, path: PathBuf, region: Option<usize>) -> PyResult<Program> {
        checked(py, move || front::load(&path, region))
    }

    /// The program's name (the file's stem).
    #[getter]
    fn name(&self) -> &str {
        &self.ir.name
    }

    /// The parameters, in declaration order.
    #[getter]
    fn parameters(&self) -> Vec<Parameter> {
        self.ir
            .params
            .iter()
            .map(|p| Parameter {
                name: p.name.clone(),
                r#type: p.ty.to_string(),
            })
            .collect()
    }

    /// The fields (`griddata`), in declaration order.
    #[getter]
    fn fields(&self) -> Vec<Field> {
        self.ir
            .fields
            .iter()
            .map(|f| {
                let grid = &self.ir.grids[f.grid.0];
                Field {
                    name: f.name.clone(),
                    r#type: f.ty.to_string(),
                    dtype: dtype_name(f.ty).to_string(),
                    grid: grid.name.clone(),
                    dims: grid
                        .dims
                        .iter()
                        .map(|d| self.ir.display_expr(d, &[]))
                        .collect(),
                    time_levels: f.levels(),
                    boundary: f.boundary.name().to_string(),
                }
            })
            .collect()
    }

    /// The reductions of the iterate, in declaration order.
    #[getter]
    fn reductions(&self) -> Vec<Reduction> {
        self.ir
            .iterate
            .iter()
            .flat_map(|it| &it.reductions)
            .map(|r| Reduction {
                name: r.name.clone(),
                r#type: r.ty.to_string(),
                op: r.op.symbol().to_string(),
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        let params: Vec<String> = self
            .ir
            .params
            .iter()
            .map(|p| format!("{} {}", p.ty, p.name))
            .collect();
        let fields: Vec<String> = self.fields().iter().map(Field::__repr__).collect();
        format!(
            "<stencilc.Program {}({}): {}>",
            self.ir.name,
            params.join(", "),
            fields.join("; ")
        )
    }

    /// The program as the compiler sees it, in SDSL-like text.
    fn __str__(&self) -> String {
        self.ir.to_string()
    }

    /// Runs the program and returns a `stencilc.Result`.
    ///
    /// Each field is given as a keyword argument (or in `inputs`, for a field
    /// named like a keyword of `run`): a C-contiguous NumPy array of the field's
    /// dtype and grid shape, or an object with the buffer protocol or DLPack
    /// that is one. Fields not given start at zero; every time level starts
    /// from the array. Grid sizes not in `params` come from the arrays' shapes.
    /// No array passed in is changed.
    ///
    /// With `tuned=True` (the default) and a back-end of `"c"`, `"opencl"` or
    /// `"cuda"`, the schedule `stencilc.tune` (or `stencilc tune`) recorded for
    /// this program, back-end and parameter values fills in the schedule
    /// keywords not given (`Result.tuned` and a note say so).
    #[pyo3(signature = (backend = "auto", *, params = None, block = None, tile = None, vector = None, time = None, shm = None, threads = None, tuned = true, inputs = None, **fields))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        backend: &str,
        params: Option<&Bound<'_, PyDict>>,
        block: Option<Vec<u32>>,
        tile: Option<Vec<u32>>,
        vector: Option<u32>,
        time: Option<u32>,
        shm: Option<&Bound<'_, PyAny>>,
        threads: Option<u32>,
        tuned: bool,
        inputs: Option<&Bound<'_, PyDict>>,
        fields: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<run::RunResult> {
        let schedule = Schedule {
            block,
            tile,
            vector,
            time,
            shm,
            threads,
        };
        let all = merge_fields(py, inputs, fields)?;
        run::run(py, self, backend, params, &all, schedule, tuned)
    }

    /// What each GPU kernel of the program would cost on `device` (default
    /// `"h100-sxm"`; also `h100-pcie`, `h200`, `a100`, `l40s`, `v100`) and why,
    /// as `stencilc explain` reports it, without a GPU: returns a
    /// `stencilc.Explain` (`str()` is the command's text, `.to_json()` its
    /// `--json`, `.kernels` the kernels as dicts). Every parameter needs a
    /// value in `params`; the schedule keywords are `run`'s.
    #[pyo3(signature = (target = "cuda", device = None, *, params = None, block = None, tile = None, vector = None, time = None, shm = None))]
    #[allow(clippy::too_many_arguments)]
    fn explain(
        &self,
        py: Python<'_>,
        target: &str,
        device: Option<&str>,
        params: Option<&Bound<'_, PyDict>>,
        block: Option<Vec<u32>>,
        tile: Option<Vec<u32>>,
        vector: Option<u32>,
        time: Option<u32>,
        shm: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<crate::report::Explain> {
        let schedule = Schedule {
            block,
            tile,
            vector,
            time,
            shm,
            threads: None,
        };
        crate::report::explain(py, self, target, device, params, schedule)
    }

    /// The code generated for `target` (`"c"`, `"cuda"` or `"opencl"`), as
    /// `stencilc emit` prints it. With every parameter in `params`, the code is
    /// that of a run at those sizes.
    #[pyo3(signature = (target = "c", *, params = None, block = None, tile = None, vector = None, time = None, shm = None, threads = None))]
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        py: Python<'_>,
        target: &str,
        params: Option<&Bound<'_, PyDict>>,
        block: Option<Vec<u32>>,
        tile: Option<Vec<u32>>,
        vector: Option<u32>,
        time: Option<u32>,
        shm: Option<&Bound<'_, PyAny>>,
        threads: Option<u32>,
    ) -> PyResult<String> {
        let schedule = Schedule {
            block,
            tile,
            vector,
            time,
            shm,
            threads,
        };
        let options: RunOptions = schedule.options(&self.ir)?;
        let (program, values) = run::params_of(py, &self.ir, params)?;
        let env = values
            .iter()
            .cloned()
            .collect::<Option<Vec<_>>>()
            .and_then(|params| RunEnv::new(&program, &stencilc::exec::Bindings { params }).ok());
        let emit_options = EmitOptions {
            env: env.as_ref(),
            fma: false,
            ..EmitOptions::default()
        };
        let gpu = |target: GpuTarget| {
            let request = options.schedule_request();
            stencilc::schedule::hinted_shape(&program, &request).map_err(|d| {
                compile_error(
                    py,
                    &stencilc::diag::Diagnostics::new(program.source.clone(), vec![d]),
                )
            })?;
            gpu_emit::emit_with(&program, &request, target, emit_options).map_err(|e| {
                PyValueError::new_err(format!(
                    "cannot schedule `{}` for the GPU: {e}; change block, tile, vector or shm",
                    program.name
                ))
            })
        };
        match target {
            "c" => {
                let plan = match &env {
                    Some(env) => stencilc::exec::native::plan(&program, env, &options)
                        .map_err(|e| crate::errors::exec_error(py, e))?,
                    None => stencilc::analysis::tile::CpuPlan::default(),
                };
                Ok(stencilc::back::c::emit_program_planned(&program, &plan).source)
            }
            "cuda" => gpu(GpuTarget::Cuda),
            "opencl" => gpu(GpuTarget::OpenCl),
            other => Err(PyValueError::new_err(format!(
                "`{other}` is not a target; give \"c\", \"cuda\" or \"opencl\""
            ))),
        }
    }
}

/// The field arrays of `inputs` and of the keyword arguments in one dict; a
/// field given in both is a `ValueError`.
pub(crate) fn merge_fields<'py>(
    py: Python<'py>,
    inputs: Option<&Bound<'py, PyDict>>,
    fields: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let all = PyDict::new_bound(py);
    for given in [inputs, fields].into_iter().flatten() {
        for (name, value) in given.iter() {
            if all.contains(&name)? {
                return Err(PyValueError::new_err(format!(
                    "field `{name}` is given twice (as a keyword and in inputs); give it once"
                )));
            }
            all.set_item(name, value)?;
        }
    }
    Ok(all)
}

/// A parameter of a program: `name` and SDSL `type` (`int`, `long`, `float`,
/// `double`).
#[pyclass(module = "stencilc", frozen, get_all)]
pub struct Parameter {
    name: String,
    r#type: String,
}

#[pymethods]
impl Parameter {
    fn __repr__(&self) -> String {
        format!("Parameter({} {})", self.r#type, self.name)
    }
}

/// A field (`griddata`): `name`, SDSL `type` and NumPy `dtype`, `grid` and its
/// `dims` (the size expressions, outermost first, as NumPy orders a shape),
/// `time_levels` and `boundary` mode.
#[pyclass(module = "stencilc", frozen, get_all)]
pub struct Field {
    name: String,
    r#type: String,
    dtype: String,
    grid: String,
    dims: Vec<String>,
    time_levels: usize,
    boundary: String,
}

#[pymethods]
impl Field {
    fn __repr__(&self) -> String {
        format!(
            "Field({} {}[{}] on {}, {} time level(s), boundary {})",
            self.r#type,
            self.name,
            self.dims.join("]["),
            self.grid,
            self.time_levels,
            self.boundary
        )
    }
}

/// A reduction of the iterate: `name`, SDSL `type` and operator `op` (`+`,
/// `*`, `max`, `min`).
#[pyclass(module = "stencilc", frozen, get_all)]
pub struct Reduction {
    name: String,
    r#type: String,
    op: String,
}

#[pymethods]
impl Reduction {
    fn __repr__(&self) -> String {
        format!("Reduction({} {} {})", self.r#type, self.name, self.op)
    }
}
