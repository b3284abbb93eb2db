//! Finding and calling NVRTC, the CUDA run-time compiler.
//!
//! NVRTC is looked for, in order: the file named by `STENCILC_NVRTC` (a path to
//! `libnvrtc.so.12`); the dynamic loader's search path (`LD_LIBRARY_PATH`, a CUDA
//! toolkit); the `nvidia/cuda_nvrtc/lib` folder of a Python installation where
//! `pip install nvidia-cuda-nvrtc-cu12` puts it. A library found by path is opened
//! first with `RTLD_GLOBAL`, so cudarc's own lookup by soname finds it loaded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::exec::ExecError;
use crate::model::ptxas::PtxasFigures;

/// The environment variable naming the NVRTC library to use.
pub const NVRTC_ENV: &str = "STENCILC_NVRTC";

static LOADED: OnceLock<Result<String, String>> = OnceLock::new();

fn python_lib_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(venv) = std::env::var("VIRTUAL_ENV") {
        roots.push(PathBuf::from(venv).join("lib"));
    }
    if let Some(home) = dirs::home_dir() {
        roots.push(home.join(".local/lib"));
        if let Ok(entries) = std::fs::read_dir(home.join(".pyenv/versions")) {
            roots.extend(entries.flatten().map(|e| e.path().join("lib")));
        }
    }
    roots.extend(["/usr/local/lib", "/usr/lib", "/opt/conda/lib"].map(PathBuf::from));
    let mut dirs = Vec::new();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with("python3") {
                continue;
            }
            for packages in ["site-packages", "dist-packages"] {
                dirs.push(entry.path().join(packages).join("nvidia/cuda_nvrtc/lib"));
            }
        }
    }
    dirs
}

fn library_in(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with("libnvrtc.so")
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

fn preload(path: &Path) -> Result<(), String> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: NVRTC's initialisers are plain library setup.
    let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // Keep it loaded for the life of the process: cudarc resolves it by soname.
    std::mem::forget(lib);
    Ok(())
}

/// Makes NVRTC loadable; returns where it was found.
pub fn load() -> Result<String, String> {
    LOADED
        .get_or_init(|| {
            if let Ok(path) = std::env::var(NVRTC_ENV) {
                preload(Path::new(&path))
                    .map_err(|e| format!("{NVRTC_ENV} names a library that does not load: {e}"))?;
            } else {
                // SAFETY: only probes whether the library opens.
                if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                    return Ok("the dynamic loader's search path".into());
                }
                let found = python_lib_dirs().iter().find_map(|d| library_in(d));
                match found {
                    Some(p) => preload(&p)?,
                    None => {
                        return Err(format!(
                            "NVRTC (libnvrtc.so.12) not found; install the CUDA toolkit or \
                             `pip install nvidia-cuda-nvrtc-cu12`, or set {NVRTC_ENV} to the \
                             library's path"
                        ))
                    }
                }
            }
            // SAFETY: as above.
            if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                Ok(std::env::var(NVRTC_ENV).unwrap_or_else(|_| "a Python installation".into()))
            } else {
                Err(format!(
                    "NVRTC was opened but cudarc cannot find it by name; set LD_LIBRARY_PATH to \
                     its folder or {NVRTC_ENV} to libnvrtc.so.12 itself"
                ))
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
) -> Result<BTreeMap<String, PtxasFigures>, String> {
    let (_, compiled) = compile_module(module, arch)
        .map_err(|e| format!("NVRTC could not compile the kernels to PTX: {e}"))?;
    crate::model::ptxas::run(ptxas, &compiled.ptx, arch)
}

/// ptxas's registers for every kernel of `module`, with the ptxas
/// [`crate::model::ptxas::find`] finds: `--ptxas-rank`'s
/// [`crate::model::rank::Registers`].
pub fn ptxas_registers(
    module: &crate::kir::Module,
    arch: &str,
) -> Result<BTreeMap<String, u32>, String> {
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
    load().map_err(ExecError::Unavailable)?;
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
