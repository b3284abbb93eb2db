//! `ptxas -v`: the registers, spills, shared and constant memory of each kernel
//! as the assembler allocates them.
//!
//! ptxas is looked for, in order: the file `STENCILC_PTXAS` names; `ptxas` on
//! `PATH`; `$CUDA_HOME/bin`; `/usr/local/cuda*/bin`; the `nvidia/cuda_nvcc/bin`
//! folder of the PyPI wheel `nvidia-cuda-nvcc-cu12` (in the CI cache
//! `~/.cache/stencilc-ci/nvcc-*`, or a Python installation's `site-packages`).
//! When it is not found, [`find`] says every place it looked. `STENCILC_PTXAS`,
//! when set, is the only place tried.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

/// The environment variable naming the ptxas to use.
pub const PTXAS_ENV: &str = "STENCILC_PTXAS";

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

/// Every place ptxas is looked for, in order.
pub fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(path) = std::env::var(PTXAS_ENV) {
        out.push(PathBuf::from(path));
    }
    if let Some(paths) = std::env::var_os("PATH") {
        out.extend(std::env::split_paths(&paths).map(|d| d.join("ptxas")));
    }
    if let Ok(home) = std::env::var("CUDA_HOME") {
        out.push(Path::new(&home).join("bin/ptxas"));
    }
    let mut cuda: Vec<PathBuf> = std::fs::read_dir("/usr/local")
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("cuda"))
                .map(|e| e.path().join("bin/ptxas"))
                .collect()
        })
        .unwrap_or_default();
    cuda.sort();
    if cuda.is_empty() {
        cuda.push(PathBuf::from("/usr/local/cuda/bin/ptxas"));
    }
    out.extend(cuda);
    let wheel = Path::new("nvidia/cuda_nvcc/bin/ptxas");
    let mut caches = Vec::new();
    if let Ok(dir) = std::env::var("STENCILC_CI_CACHE") {
        caches.push(PathBuf::from(dir));
    }
    if let Some(cache) = dirs::cache_dir() {
        caches.push(cache.join("stencilc-ci"));
    }
    for cache in caches {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&cache)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("nvcc"))
                    .map(|e| e.path().join(wheel))
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        if found.is_empty() {
            found.push(cache.join("nvcc-12.8.93").join(wheel));
        }
        out.extend(found);
    }
    out.extend(python_site_dirs().into_iter().map(|d| d.join(wheel)));
    out
}

fn python_site_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(venv) = std::env::var("VIRTUAL_ENV") {
        roots.push(PathBuf::from(venv).join("lib"));
    }
    if let Some(home) = dirs::home_dir() {
        roots.push(home.join(".local/lib"));
    }
    roots.extend(["/usr/local/lib", "/usr/lib", "/opt/conda/lib"].map(PathBuf::from));
    let mut dirs = Vec::new();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with("python3") {
                for packages in ["site-packages", "dist-packages"] {
                    dirs.push(entry.path().join(packages));
                }
            }
        }
    }
    dirs
}

/// The first ptxas found, or a sentence listing every place looked.
/// `STENCILC_PTXAS`, when set, must name ptxas itself: nothing else is tried.
pub fn find() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(PTXAS_ENV) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "{PTXAS_ENV} names `{}`, which is not a file; set it to ptxas's path or unset it",
                path.display()
            ))
        };
    }
    find_among(&candidates())
}

/// The first of `places` that is a file, or a sentence listing them all.
pub fn find_among(places: &[PathBuf]) -> Result<PathBuf, String> {
    if let Some(found) = places.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    let mut shown: Vec<String> = Vec::new();
    for p in places {
        let text = p.display().to_string();
        if !shown.contains(&text) {
            shown.push(text);
        }
    }
    Err(format!(
        "ptxas not found; looked in: {}. Install the CUDA toolkit, or \
         `pip install nvidia-cuda-nvcc-cu12==12.8.93`, or set {PTXAS_ENV} to ptxas's path",
        shown.join(", ")
    ))
}

/// Assembles `ptx` for `arch` with `ptxas -v`; returns the figures of every
/// kernel by name.
pub fn run(ptxas: &Path, ptx: &str, arch: &str) -> Result<BTreeMap<String, PtxasFigures>, String> {
    let mut file = tempfile::Builder::new()
        .prefix("stencilc-explain")
        .suffix(".ptx")
        .tempfile()
        .map_err(|e| format!("cannot write a temporary PTX file: {e}"))?;
    file.write_all(ptx.as_bytes())
        .map_err(|e| format!("cannot write a temporary PTX file: {e}"))?;
    let output = Command::new(ptxas)
        .arg("-v")
        .arg(format!("--gpu-name={arch}"))
        .arg("-o")
        .arg("/dev/null")
        .arg(file.path())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            ptxas.display(),
            output.status,
            text.trim()
        ));
    }
    let figures = parse(&text);
    if figures.is_empty() {
        return Err(format!(
            "{} printed no kernel figures: {}",
            ptxas.display(),
            text.trim()
        ));
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
        let err = find_among(&places).unwrap_err();
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
        let err = run(Path::new("/bin/false"), ".version 8.7", "sm_90").unwrap_err();
        assert!(err.contains("failed"), "{err}");
        let err = run(Path::new("/nonexistent/ptxas"), "", "sm_90").unwrap_err();
        assert!(err.contains("cannot run"), "{err}");
    }
}
