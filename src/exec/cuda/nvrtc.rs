//! Finding and calling NVRTC, the CUDA run-time compiler.
//!
//! NVRTC is looked for, in order: the file named by `STENCILC_NVRTC` (a path to
//! `libnvrtc.so.12`, the only place tried when set); the dynamic loader's
//! search path (`LD_LIBRARY_PATH`, `/etc/ld.so.cache`); then the CUDA toolkits
//! and the `nvidia/cuda_nvrtc/lib` folders of Python environments where
//! `pip install nvidia-cuda-nvrtc-cu12` puts it, as [`toolkit`] lists them
//! (Python itself is asked last). A library found by path is opened first with
//! `RTLD_GLOBAL`, its `libnvrtc-builtins` beside it before it, so that
//! cudarc's own lookup by soname finds it loaded. When it is not found, the
//! error names every place looked in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::exec::ExecError;
use crate::model::ptxas::{PtxasError, PtxasFigures};
use crate::model::toolkit::{self, NvrtcNotFound};

/// The environment variable naming the NVRTC library to use.
pub const NVRTC_ENV: &str = "STENCILC_NVRTC";

/// Why NVRTC cannot be used. Cloned: the first lookup's answer is kept for
/// the life of the process.
#[derive(Clone, Debug, thiserror::Error)]
pub enum NvrtcError {
    /// The library `STENCILC_NVRTC` names does not open.
    #[error("{NVRTC_ENV} names a library that does not load: {0}")]
    EnvDoesNotLoad(#[source] LibraryOpenError),
    /// The library `STENCILC_NVRTC` names opens, but cudarc does not find
    /// NVRTC of CUDA 12 by its name after it.
    #[error(
        "{NVRTC_ENV} names `{path}`, which loads but is not NVRTC of CUDA 12 \
         (`libnvrtc.so.12`); set it to that library"
    )]
    EnvNotNvrtc {
        /// The value of `STENCILC_NVRTC`.
        path: String,
    },
    /// NVRTC is in none of the places looked in.
    #[error(transparent)]
    NotFound(#[from] NvrtcNotFound),
    /// The NVRTC found does not open.
    #[error(transparent)]
    DoesNotLoad(#[from] LibraryOpenError),
    /// The NVRTC found opens, but cudarc does not find it by its name.
    #[error(
        "NVRTC was opened from `{}` but cudarc cannot find it by name; set \
         LD_LIBRARY_PATH to its folder or {NVRTC_ENV} to libnvrtc.so.12 itself",
        path.display()
    )]
    NotByName {
        /// Where it was found.
        path: PathBuf,
    },
}

/// A shared library that the dynamic loader would not open.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{}: {reason}", path.display())]
pub struct LibraryOpenError {
    /// The library.
    pub path: PathBuf,
    /// What the loader said.
    pub reason: String,
}

static LOADED: OnceLock<Result<String, NvrtcError>> = OnceLock::new();

/// Opens `path` with `RTLD_GLOBAL` and keeps it loaded for the life of the
/// process: cudarc (and NVRTC, for its builtins) then open it by its soname
/// and get this one.
fn preload(path: &Path) -> Result<(), LibraryOpenError> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: NVRTC's initialisers are plain library setup.
    let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }.map_err(|e| {
        LibraryOpenError {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }
    })?;
    std::mem::forget(lib);
    Ok(())
}

/// Opens NVRTC found at `path`, its builtins (in the same folder) first.
fn preload_with_builtins(path: &Path) -> Result<(), LibraryOpenError> {
    if let Some(builtins) = path.parent().and_then(toolkit::nvrtc_builtins_in) {
        // NVRTC opens it by name, from its own folder; a failure here shows
        // when it compiles.
        let _ = preload(&builtins);
    }
    preload(path)
}

/// Whether cudarc finds NVRTC by name.
fn cudarc_finds_it() -> bool {
    // SAFETY: only probes whether the library opens.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Makes NVRTC loadable; returns where it was found, or why it was not
/// (listing every place looked in).
pub fn load() -> Result<String, NvrtcError> {
    LOADED
        .get_or_init(|| {
            if let Ok(path) = std::env::var(NVRTC_ENV) {
                preload_with_builtins(Path::new(&path)).map_err(NvrtcError::EnvDoesNotLoad)?;
                return if cudarc_finds_it() {
                    Ok(path)
                } else {
                    Err(NvrtcError::EnvNotNvrtc { path })
                };
            }
            if cudarc_finds_it() {
                return Ok("the dynamic loader's search path".into());
            }
            let found = toolkit::find_nvrtc(
                "the dynamic loader's search path (LD_LIBRARY_PATH, /etc/ld.so.cache)",
            )?;
            preload_with_builtins(&found)?;
            if cudarc_finds_it() {
                Ok(found.display().to_string())
            } else {
                Err(NvrtcError::NotByName { path: found })
            }
        })
        .clone()
}

/// The result of an NVRTC compilation.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The PTX.
    pub ptx: String,
    /// NVRTC's log (warnings; empty when clean).
    pub log: String,
}

/// Compiles CUDA C for `arch` (e.g. `sm_90`) with stencilc's NVRTC options;
/// returns the PTX and the log. A failure shows the log with the generated
/// source line each message points to.
pub fn compile_with_log(source: &str, arch: &str) -> Result<Compiled, ExecError> {
    compile_with_options(source, arch, &[])
}

/// As [`compile_with_log`], with `extra` NVRTC options (e.g. `-Dreal=double`).
pub fn compile_with_options(
    source: &str,
    arch: &str,
    extra: &[String],
) -> Result<Compiled, ExecError> {
    compile_source(source, arch, crate::back::cuda::NVRTC_OPTIONS, extra)
}

/// Compiles `module` printed as CUDA for `arch` with the options it asks for
/// ([`crate::back::cuda::nvrtc_options`]: `--fmad=true` under `--fma`);
/// returns the source with the PTX and log.
pub fn compile_module(
    module: &crate::kir::Module,
    arch: &str,
) -> Result<(String, Compiled), ExecError> {
    let source = crate::back::cuda::print(module);
    let options = crate::back::cuda::nvrtc_options(module);
    let compiled = compile_source(&source, arch, options, &[])?;
    Ok((source, compiled))
}

/// `ptxas -v`'s figures for every kernel of `module`: compiled to PTX by
/// [`compile_module`], then assembled for `arch` by the ptxas at `ptxas`.
pub fn ptxas_figures(
    ptxas: &Path,
    module: &crate::kir::Module,
    arch: &str,
) -> Result<BTreeMap<String, PtxasFigures>, PtxasError> {
    let (_, compiled) = compile_module(module, arch).map_err(PtxasError::Nvrtc)?;
    crate::model::ptxas::run(ptxas, &compiled.ptx, arch)
}

/// ptxas's registers for every kernel of `module`, with the ptxas
/// [`crate::model::ptxas::find`] finds: `--ptxas-rank`'s
/// [`crate::model::rank::Registers`].
pub fn ptxas_registers(
    module: &crate::kir::Module,
    arch: &str,
) -> Result<BTreeMap<String, u32>, PtxasError> {
    let ptxas = crate::model::ptxas::find()?;
    let figures = ptxas_figures(&ptxas, module, arch)?;
    Ok(figures
        .into_iter()
        .map(|(name, f)| (name, f.registers))
        .collect())
}

/// Compiles CUDA C for `arch` with the options `base` (such as
/// [`crate::back::cuda::NVRTC_OPTIONS`]) and `extra`.
pub fn compile_source(
    source: &str,
    arch: &str,
    base: &[&str],
    extra: &[String],
) -> Result<Compiled, ExecError> {
    load().map_err(|e| ExecError::Unavailable(e.to_string()))?;
    use cudarc::nvrtc::result;
    let src = std::ffi::CString::new(source)
        .map_err(|_| ExecError::Failed("internal: generated CUDA contains a NUL byte".into()))?;
    let name = c"stencilc.cu";
    let prog = result::create_program(&src, Some(name))
        .map_err(|e| ExecError::Failed(format!("NVRTC: creating the program failed: {e:?}")))?;
    let mut options: Vec<String> = base.iter().map(|s| s.to_string()).collect();
    options.push(format!("--gpu-architecture={arch}"));
    options.extend(extra.iter().cloned());
    // SAFETY: `prog` is a live program; the log and PTX are read before it is destroyed.
    let outcome = unsafe { result::compile_program(prog, &options) };
    let log = unsafe { result::get_program_log(prog) }
        .map(|raw| c_chars(&raw))
        .unwrap_or_default();
    let ptx = if outcome.is_ok() {
        unsafe { result::get_ptx(prog) }
            .map(|raw| c_chars(&raw))
            .ok()
    } else {
        None
    };
    // SAFETY: destroyed once, after its last use.
    let _ = unsafe { result::destroy_program(prog) };
    match (outcome, ptx) {
        (Ok(()), Some(ptx)) => Ok(Compiled { ptx, log }),
        (outcome, _) => Err(ExecError::Failed(format!(
            "NVRTC rejected the generated CUDA ({}) — a stencilc bug; please report it:\n{}",
            outcome.err().map(|e| format!("{e:?}")).unwrap_or_default(),
            annotate(&log, source)
        ))),
    }
}

/// Compiles `module` to a PTX module cudarc can load, with the source it was
/// compiled from.
pub fn compile(
    module: &crate::kir::Module,
    arch: &str,
) -> Result<(String, cudarc::nvrtc::Ptx), ExecError> {
    let (source, compiled) = compile_module(module, arch)?;
    Ok((source, cudarc::nvrtc::Ptx::from_src(compiled.ptx)))
}

fn c_chars(raw: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

/// Each `stencilc.cu(LINE): ...` message followed by that line of the source.
pub fn annotate(log: &str, source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    for l in log.lines() {
        out.push_str(l);
        out.push('\n');
        let number = l
            .strip_prefix("stencilc.cu(")
            .and_then(|rest| rest.split(')').next())
            .and_then(|n| n.parse::<usize>().ok());
        if let Some(n) = number.filter(|n| *n >= 1 && *n <= lines.len()) {
            out.push_str(&format!("    | {}\n", lines[n - 1]));
        }
    }
    out
}
