//! `ptxas -v`: the registers, spills, shared and constant memory of each kernel
//! as the assembler allocates them.
//!
//! ptxas is looked for, in order: the file `STENCILC_PTXAS` names; `ptxas` on
//! `PATH`; then the toolkits and the `nvidia/cuda_nvcc/bin` folder of the PyPI
//! wheel `nvidia-cuda-nvcc-cu12` wherever [`toolkit`] looks (`$CUDA_HOME`,
//! `$CUDA_PATH`, `/usr/local/cuda*`, Python environments' `site-packages`, the
//! CI cache, and last the `site-packages` Python reports). When it is not
//! found, [`find`] says every place it looked. `STENCILC_PTXAS`, when set, is
//! the only place tried.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::model::toolkit;

/// The environment variable naming the ptxas to use.
pub const PTXAS_ENV: &str = "STENCILC_PTXAS";

/// Why there are no ptxas figures: ptxas not found or failing, or the
/// kernels not compiled to PTX for it.
#[derive(Debug, thiserror::Error)]
pub enum PtxasError {
    /// `STENCILC_PTXAS` names a file that cannot be run.
    #[error(
        "{PTXAS_ENV} names `{}`, which is not executable; `chmod +x` it or unset {PTXAS_ENV}",
        path.display()
    )]
    EnvNotExecutable {
        /// The file named.
        path: PathBuf,
    },
    /// `STENCILC_PTXAS` names something that is not a file.
    #[error(
        "{PTXAS_ENV} names `{}`, which is not a file; set it to ptxas's path or unset it",
        path.display()
    )]
    EnvNotAFile {
        /// The path named.
        path: PathBuf,
    },
    /// No place looked in holds an executable ptxas.
    #[error("{}", not_found(.places, .not_executable, .python))]
    NotFound {
        /// Every place looked in, in order.
        places: Vec<PathBuf>,
        /// Those of them that are files but cannot be run.
        not_executable: Vec<PathBuf>,
        /// The Python asked for its `site-packages`.
        python: PathBuf,
    },
    /// The PTX could not be written to a temporary file for ptxas.
    #[error("cannot write a temporary PTX file: {0}")]
    TempFile(#[source] std::io::Error),
    /// ptxas could not be started.
    #[error("cannot run {}: {source}", ptxas.display())]
    Spawn {
        /// The ptxas tried.
        ptxas: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// ptxas ran and failed.
    #[error("{} failed ({status}): {output}", ptxas.display())]
    Failed {
        /// The ptxas run.
        ptxas: PathBuf,
        /// How it exited.
        status: std::process::ExitStatus,
        /// What it printed, trimmed.
        output: String,
    },
    /// ptxas succeeded but printed no figures for any kernel.
    #[error("{} printed no kernel figures: {output}", ptxas.display())]
    NoFigures {
        /// The ptxas run.
        ptxas: PathBuf,
        /// What it printed, trimmed.
        output: String,
    },
    /// NVRTC could not compile the kernels to the PTX ptxas would assemble.
    #[error("NVRTC could not compile the kernels to PTX: {0}")]
    Nvrtc(#[source] crate::data::ExecError),
}

/// The sentence for [`PtxasError::NotFound`]: every place looked in (each
/// once), any that is there but not executable, and what to do.
fn not_found(places: &[PathBuf], not_executable: &[PathBuf], python: &Path) -> String {
    let mut shown: Vec<String> = Vec::new();
    for p in places {
        let text = p.display().to_string();
        if !shown.contains(&text) {
            shown.push(text);
        }
    }
    let not_executable: Vec<String> = not_executable
        .iter()
        .map(|p| format!("`{}`", p.display()))
        .collect();
    let fix = if not_executable.is_empty() {
        String::new()
    } else {
        format!(
            " ({} {} there but not executable: `chmod +x` it)",
            not_executable.join(", "),
            if not_executable.len() == 1 {
                "is"
            } else {
                "are"
            }
        )
    };
    format!(
        "ptxas not found; looked in: {}, and in the site-packages `{}` reports{fix}. Install the \
         CUDA toolkit (and set CUDA_HOME), or `pip install nvidia-cuda-nvcc-cu12==12.8.93`, or \
         set {PTXAS_ENV} to ptxas's path",
        shown.join(", "),
        python.display()
    )
}

/// What ptxas reports for one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PtxasFigures {
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of register spill stores per thread.
    pub spill_stores: u32,
    /// Bytes of register spill loads per thread.
    pub spill_loads: u32,
    /// Bytes of the stack frame per thread.
    pub stack_frame: u32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: u32,
    /// Constant memory (all banks), bytes.
    pub constant_bytes: u32,
}

/// Every place ptxas is looked for, in order, but for the `site-packages`
/// that only Python knows of ([`find`] asks it when these fail).
pub fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(path) = std::env::var(PTXAS_ENV) {
        out.push(PathBuf::from(path));
    }
    if let Some(paths) = std::env::var_os("PATH") {
        out.extend(std::env::split_paths(&paths).map(|d| d.join("ptxas")));
    }
    let places = toolkit::Places::from_vars(&toolkit::Vars::from_env());
    out.extend(places.ptxas_files());
    out
}

/// The first ptxas found, or a sentence listing every place looked.
/// `STENCILC_PTXAS`, when set, must name ptxas itself: nothing else is tried.
pub fn find() -> Result<PathBuf, PtxasError> {
    if let Some(path) = std::env::var_os(PTXAS_ENV) {
        let path = PathBuf::from(path);
        return if toolkit::is_executable(&path) {
            Ok(path)
        } else if path.is_file() {
            Err(PtxasError::EnvNotExecutable { path })
        } else {
            Err(PtxasError::EnvNotAFile { path })
        };
    }
    let mut places = candidates();
    if let Some(found) = places.iter().find(|p| toolkit::is_executable(p)) {
        return Ok(found.clone());
    }
    let known = toolkit::Places::from_vars(&toolkit::Vars::from_env());
    let asked = toolkit::python_places(
        &known,
        &toolkit::python(),
        std::time::Duration::from_secs(toolkit::PYTHON_SECONDS),
    );
    places.extend(asked.ptxas_files());
    find_among(&places)
}

/// The first of `places` that is an executable file, or a sentence listing
/// them all (and any that is there but cannot be run).
pub fn find_among(places: &[PathBuf]) -> Result<PathBuf, PtxasError> {
    if let Some(found) = places.iter().find(|p| toolkit::is_executable(p)) {
        return Ok(found.clone());
    }
    Err(PtxasError::NotFound {
        places: places.to_vec(),
        not_executable: places.iter().filter(|p| p.is_file()).cloned().collect(),
        python: toolkit::python(),
    })
}

/// Assembles `ptx` for `arch` with `ptxas -v`; returns the figures of every
/// kernel by name.
pub fn run(
    ptxas: &Path,
    ptx: &str,
    arch: &str,
) -> Result<BTreeMap<String, PtxasFigures>, PtxasError> {
    let mut file = tempfile::Builder::new()
        .prefix("stencilc-explain")
        .suffix(".ptx")
        .tempfile()
        .map_err(PtxasError::TempFile)?;
    file.write_all(ptx.as_bytes())
        .map_err(PtxasError::TempFile)?;
    let output = Command::new(ptxas)
        .arg("-v")
        .arg(format!("--gpu-name={arch}"))
        .arg("-o")
        .arg("/dev/null")
        .arg(file.path())
        .output()
        .map_err(|source| PtxasError::Spawn {
            ptxas: ptxas.to_path_buf(),
            source,
        })?;
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(PtxasError::Failed {
            ptxas: ptxas.to_path_buf(),
            status: output.status,
            output: text.trim().to_string(),
        });
    }
    let figures = parse(&text);
    if figures.is_empty() {
        return Err(PtxasError::NoFigures {
            ptxas: ptxas.to_path_buf(),
            output: text.trim().to_string(),
        });
    }
    Ok(figures)
}

/// The figures of every kernel in the text `ptxas -v` prints.
pub fn parse(text: &str) -> BTreeMap<String, PtxasFigures> {
    let mut out: BTreeMap<String, PtxasFigures> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line
            .split_once("Compiling entry function '")
            .map(|(_, r)| r)
            .or_else(|| line.split_once("Function properties for ").map(|(_, r)| r))
        {
            let name = rest.split('\'').next().unwrap_or(rest).trim().to_string();
            out.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        let Some(name) = &current else {
            continue;
        };
        let figures = out.entry(name.clone()).or_default();
        let body = line.split_once("Used ").map(|(_, r)| r).unwrap_or(line);
        for item in body.split(',') {
            let words: Vec<&str> = item.split_whitespace().collect();
            let Some(n) = words.first().and_then(|w| w.parse::<u32>().ok()) else {
                continue;
            };
            match &words[1..] {
                ["registers", ..] => figures.registers = n,
                ["bytes", "smem", ..] => figures.shared_bytes = n,
                ["bytes", bank, ..] if bank.starts_with("cmem") => figures.constant_bytes += n,
                ["bytes", "stack", "frame", ..] => figures.stack_frame = n,
                ["bytes", "spill", "stores", ..] => figures.spill_stores = n,
                ["bytes", "spill", "loads", ..] => figures.spill_loads = n,
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_ptxas_prints_for_each_kernel() {
        let text = "ptxas info    : 0 bytes gmem\n\
            ptxas info    : Compiling entry function 'blur' for 'sm_90'\n\
            ptxas info    : Function properties for blur\n    \
            8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
            ptxas info    : Used 40 registers, used 1 barriers, 2128 bytes smem, 400 bytes cmem[0], 16 bytes cmem[2]\n\
            ptxas info    : Compiling entry function 'sum' for 'sm_90'\n\
            ptxas info    : Function properties for sum\n    \
            0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
            ptxas info    : Used 12 registers, 380 bytes cmem[0]\n";
        let figures = parse(text);
        assert_eq!(
            figures["blur"],
            PtxasFigures {
                registers: 40,
                spill_stores: 4,
                spill_loads: 12,
                stack_frame: 8,
                shared_bytes: 2128,
                constant_bytes: 416,
            }
        );
        assert_eq!(figures["sum"].registers, 12);
        assert_eq!(figures["sum"].shared_bytes, 0);
        assert_eq!(figures.len(), 2);
    }

    #[test]
    fn a_missing_ptxas_names_the_places_looked_in() {
        let places = [
            PathBuf::from("/nonexistent/bin/ptxas"),
            PathBuf::from("/nonexistent/nvidia/cuda_nvcc/bin/ptxas"),
        ];
        let err = find_among(&places).unwrap_err().to_string();
        assert!(
            err.contains("/nonexistent/bin/ptxas, /nonexistent/nvidia"),
            "{err}"
        );
        assert!(
            err.contains("nvidia-cuda-nvcc-cu12") && err.contains(PTXAS_ENV),
            "{err}"
        );
        assert!(candidates()
            .iter()
            .any(|p| p.ends_with("nvidia/cuda_nvcc/bin/ptxas")));
    }

    #[test]
    fn a_failing_ptxas_is_an_error_with_its_output() {
        let err = run(Path::new("/bin/false"), ".version 8.7", "sm_90")
            .unwrap_err()
            .to_string();
        assert!(err.contains("failed"), "{err}");
        let err = run(Path::new("/nonexistent/ptxas"), "", "sm_90")
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot run"), "{err}");
    }
}
