//! Where NVIDIA's compilers are installed: NVRTC (`libnvrtc.so.12`, with its
//! `libnvrtc-builtins` beside it) and ptxas, looked for where a CUDA toolkit
//! or NVIDIA's pip wheels put them.
//!
//! The places, in order (after the explicit `STENCILC_NVRTC` /
//! `STENCILC_PTXAS`, the dynamic loader's path for NVRTC and `PATH` for
//! ptxas, which their users try first):
//!
//! 1. the toolkits `$CUDA_HOME` and `$CUDA_PATH` (`lib64`, `lib`,
//!    `targets/<arch>-linux/lib`; `bin`);
//! 2. `/usr/local/cuda` and `/usr/local/cuda-*`;
//! 3. Python environments' `site-packages` (and Debian's `dist-packages`),
//!    where `pip install nvidia-cuda-nvrtc-cu12` puts
//!    `nvidia/cuda_nvrtc/lib` and `pip install nvidia-cuda-nvcc-cu12`
//!    `nvidia/cuda_nvcc/bin`: the active virtual environment
//!    (`$VIRTUAL_ENV`) or conda environment (`$CONDA_PREFIX`), the
//!    environment the running program was installed in (`<exe>/../lib`),
//!    the user site (`~/.local/lib/python3*`), pyenv's versions, and the
//!    system's (`/usr/local/lib`, `/usr/lib`, `/opt/conda/lib`);
//! 4. the folders `.ci/run` installs the wheels into
//!    (`$STENCILC_CI_CACHE` or `~/.cache/stencilc-ci`, `nvrtc-*` and
//!    `nvcc-*`);
//! 5. last, and only when nothing was found so far, the `site-packages` that
//!    Python itself reports (`python3 -c 'import site, sys; ...'`, or the
//!    interpreter `$STENCILC_PYTHON` names), asked with a time limit of
//!    [`PYTHON_SECONDS`]: this finds a `pip install` into any interpreter on
//!    `PATH` without stencilc knowing its layout.
//!
//! When nothing is found, the error lists every folder looked in.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The environment variable naming the Python interpreter whose
/// `site-packages` are asked for (default `python3`).
pub const PYTHON_ENV: &str = "STENCILC_PYTHON";

/// How long Python may take to say where its `site-packages` are.
pub const PYTHON_SECONDS: u64 = 5;

/// Where the wheel `nvidia-cuda-nvrtc-cu12` puts NVRTC, under `site-packages`.
pub const NVRTC_WHEEL_DIR: &str = "nvidia/cuda_nvrtc/lib";

/// Where the wheel `nvidia-cuda-nvcc-cu12` puts ptxas, under `site-packages`.
pub const NVCC_WHEEL_DIR: &str = "nvidia/cuda_nvcc/bin";

/// NVRTC's file name (CUDA 12, the release stencilc is built against).
pub const NVRTC_LIB: &str = "libnvrtc.so.12";

/// The environment a search reads, captured once so that the search itself is
/// a function of it (and tests can give their own).
#[derive(Clone, Debug, Default)]
pub struct Vars {
    /// `$CUDA_HOME`, `$CUDA_PATH`.
    pub cuda_roots: Vec<PathBuf>,
    /// `$VIRTUAL_ENV`, `$CONDA_PREFIX`, and the prefix the running executable
    /// is installed under (`<exe>/..`).
    pub python_prefixes: Vec<PathBuf>,
    /// The home directory.
    pub home: Option<PathBuf>,
    /// `$STENCILC_CI_CACHE` and `~/.cache/stencilc-ci` (as `dirs` says).
    pub ci_caches: Vec<PathBuf>,
    /// Folders that hold `/usr/local/cuda*` toolkits and system Pythons'
    /// `lib`s; `/usr/local` and the system's by default.
    pub system: SystemDirs,
}

/// The system's folders a search scans.
#[derive(Clone, Debug)]
pub struct SystemDirs {
    /// Where `cuda` and `cuda-*` toolkits are (`/usr/local`).
    pub toolkits: PathBuf,
    /// `lib` folders holding `python3*` (`/usr/local/lib`, `/usr/lib`, `/opt/conda/lib`).
    pub python_libs: Vec<PathBuf>,
}

impl Default for SystemDirs {
    fn default() -> SystemDirs {
        SystemDirs {
            toolkits: PathBuf::from("/usr/local"),
            python_libs: ["/usr/local/lib", "/usr/lib", "/opt/conda/lib"]
                .map(PathBuf::from)
                .to_vec(),
        }
    }
}

impl Vars {
    /// The process's environment.
    pub fn from_env() -> Vars {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let mut python_prefixes: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"]
            .into_iter()
            .filter_map(var)
            .collect();
        // `pip install stencilc` into an environment puts the executable (or
        // the Python interpreter running the extension) in `<prefix>/bin`.
        if let Some(prefix) = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent()?.parent().map(Path::to_path_buf))
        {
            python_prefixes.push(prefix);
        }
        let mut ci_caches: Vec<PathBuf> = var("STENCILC_CI_CACHE").into_iter().collect();
        if let Some(cache) = dirs::cache_dir() {
            ci_caches.push(cache.join("stencilc-ci"));
        }
        Vars {
            cuda_roots: ["CUDA_HOME", "CUDA_PATH"]
                .into_iter()
                .filter_map(var)
                .collect(),
            python_prefixes,
            home: dirs::home_dir(),
            ci_caches,
            system: SystemDirs::default(),
        }
    }
}

/// The folders a search looks in, in order, before Python is asked.
#[derive(Clone, Debug, Default)]
pub struct Places {
    /// CUDA toolkit roots (each with `lib64`, `bin`, ...).
    pub toolkits: Vec<PathBuf>,
    /// `site-packages` and `dist-packages` folders.
    pub site_packages: Vec<PathBuf>,
    /// The CI cache folders (holding `nvrtc-*` and `nvcc-*`).
    pub ci_caches: Vec<PathBuf>,
}

/// The entries of `dir` whose names start with `prefix`, sorted.
fn entries_starting(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The `site-packages`/`dist-packages` folders of the `python3*` folders in
/// `lib` (`lib/python3.12/site-packages`, and Debian's `lib/python3/dist-packages`).
fn sites_in_lib(lib: &Path) -> Vec<PathBuf> {
    let mut sites = Vec::new();
    for python in entries_starting(lib, "python3") {
        for packages in ["site-packages", "dist-packages"] {
            let site = python.join(packages);
            if site.is_dir() {
                sites.push(site);
            }
        }
    }
    sites
}

fn push_new(list: &mut Vec<PathBuf>, path: PathBuf) {
    if !list.contains(&path) {
        list.push(path);
    }
}

impl Places {
    /// The places `vars` gives: existing folders only, but for the toolkits
    /// named by variables and, when there is no `/usr/local/cuda*`,
    /// `/usr/local/cuda`, which a message then names as missing.
    pub fn from_vars(vars: &Vars) -> Places {
        let mut places = Places::default();
        for root in &vars.cuda_roots {
            push_new(&mut places.toolkits, root.clone());
        }
        let installed: Vec<PathBuf> = entries_starting(&vars.system.toolkits, "cuda")
            .into_iter()
            .filter(|t| t.is_dir())
            .collect();
        if installed.is_empty() {
            // Where a toolkit would be, so that a message names it.
            push_new(&mut places.toolkits, vars.system.toolkits.join("cuda"));
        }
        for toolkit in installed {
            push_new(&mut places.toolkits, toolkit);
        }
        let mut libs: Vec<PathBuf> = vars.python_prefixes.iter().map(|p| p.join("lib")).collect();
        if let Some(home) = &vars.home {
            libs.push(home.join(".local/lib"));
            libs.extend(
                entries_starting(&home.join(".pyenv/versions"), "")
                    .into_iter()
                    .map(|v| v.join("lib")),
            );
        }
        libs.extend(vars.system.python_libs.iter().cloned());
        for lib in libs {
            for site in sites_in_lib(&lib) {
                push_new(&mut places.site_packages, site);
            }
        }
        for cache in &vars.ci_caches {
            push_new(&mut places.ci_caches, cache.clone());
        }
        places
    }

    /// The folders that may hold NVRTC, in order.
    pub fn nvrtc_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        let target = format!("targets/{}-linux/lib", target_arch());
        for toolkit in &self.toolkits {
            for sub in ["lib64", "lib", target.as_str()] {
                push_new(&mut dirs, toolkit.join(sub));
            }
        }
        for site in &self.site_packages {
            push_new(&mut dirs, site.join(NVRTC_WHEEL_DIR));
        }
        for cache in &self.ci_caches {
            for wheel in wheels_in(cache, "nvrtc") {
                push_new(&mut dirs, wheel.join(NVRTC_WHEEL_DIR));
            }
        }
        dirs
    }

    /// The ptxas files to try, in order.
    pub fn ptxas_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for toolkit in &self.toolkits {
            push_new(&mut files, toolkit.join("bin/ptxas"));
        }
        for site in &self.site_packages {
            push_new(&mut files, site.join(NVCC_WHEEL_DIR).join("ptxas"));
        }
        for cache in &self.ci_caches {
            for wheel in wheels_in(cache, "nvcc") {
                push_new(&mut files, wheel.join(NVCC_WHEEL_DIR).join("ptxas"));
            }
        }
        files
    }
}

/// The `.ci/run` wheel folders of `kind` (`nvrtc-12.8.93`) in `cache`; the
/// version `.ci/run` installs when there are none, to show where it would be.
fn wheels_in(cache: &Path, kind: &str) -> Vec<PathBuf> {
    let found = entries_starting(cache, &format!("{kind}-"));
    if found.is_empty() {
        vec![cache.join(format!("{kind}-12.8.93"))]
    } else {
        found
    }
}

/// CUDA's name for this machine's architecture in `targets/<arch>-linux`.
fn target_arch() -> &'static str {
    match std::env::consts::ARCH {
        "aarch64" => "sbsa",
        other => other,
    }
}

/// The Python interpreter to ask: `$STENCILC_PYTHON`, else `python3`.
pub fn python() -> PathBuf {
    std::env::var_os(PYTHON_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("python3"), PathBuf::from)
}

/// What Python prints: its `site-packages`, the user site, and the
/// `site-packages`/`dist-packages` folders on `sys.path`, one a line.
const SITE_SCRIPT: &str = "import site, sys
dirs = []
try:
    dirs += site.getsitepackages()
except Exception:
    pass
try:
    dirs.append(site.getusersitepackages())
except Exception:
    pass
dirs += [p for p in sys.path if p.endswith(('site-packages', 'dist-packages'))]
print('\\n'.join(dirs))
";

/// The `site-packages` folders `python` reports, existing ones only; none if
/// it cannot be run, fails, or takes longer than `limit` (it is then killed).
pub fn ask_python(python: &Path, limit: Duration) -> Vec<PathBuf> {
    let child = Command::new(python)
        .args(["-c", SITE_SCRIPT])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return Vec::new();
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < limit => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let mut text = String::new();
    if let (Some(status), Some(mut out)) = (status, child.stdout.take()) {
        if status.success() {
            // The output is a few lines; a pipe holds them before the exit.
            let _ = out.by_ref().take(1 << 16).read_to_string(&mut text);
        }
    }
    let mut sites = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let path = PathBuf::from(line);
        if path.is_dir() {
            push_new(&mut sites, path);
        }
    }
    sites
}

/// The places Python adds beyond `known`'s: its `site-packages` not already
/// among them (no toolkits, no caches).
pub fn python_places(known: &Places, python: &Path, limit: Duration) -> Places {
    Places {
        site_packages: ask_python(python, limit)
            .into_iter()
            .filter(|s| !known.site_packages.contains(s))
            .collect(),
        ..Places::default()
    }
}

/// NVRTC in `dir`: `libnvrtc.so.12`, else an unversioned `libnvrtc.so` a
/// toolkit links to it.
pub fn nvrtc_in(dir: &Path) -> Option<PathBuf> {
    [NVRTC_LIB, "libnvrtc.so"]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
}

/// NVRTC's builtins library beside it (`libnvrtc-builtins.so.12.8`), which
/// NVRTC opens by name when it compiles.
pub fn nvrtc_builtins_in(dir: &Path) -> Option<PathBuf> {
    entries_starting(dir, "libnvrtc-builtins.so.12")
        .into_iter()
        .find(|p| p.is_file())
}

/// The first NVRTC in `dirs`.
pub fn find_nvrtc_among(dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter().find_map(|d| nvrtc_in(d))
}

/// NVRTC in the places of this environment, Python asked last; or an error
/// listing every folder looked in (after `before`, such as the loader's
/// search path, which the caller tried first).
pub fn find_nvrtc(before: &str) -> Result<PathBuf, NvrtcNotFound> {
    let places = Places::from_vars(&Vars::from_env());
    let mut dirs = places.nvrtc_dirs();
    if let Some(found) = find_nvrtc_among(&dirs) {
        return Ok(found);
    }
    let asked = python_places(&places, &python(), Duration::from_secs(PYTHON_SECONDS));
    let more = asked.nvrtc_dirs();
    if let Some(found) = find_nvrtc_among(&more) {
        return Ok(found);
    }
    dirs.extend(more);
    Err(nvrtc_not_found(before, &dirs))
}

/// NVRTC was in none of the places looked in; says every one, and what to do.
#[derive(Clone, Debug, thiserror::Error)]
#[error(
    "NVRTC ({NVRTC_LIB}) not found; looked in {before}, then in {}, and asked `{}` for its \
     site-packages. Install the CUDA toolkit (and set CUDA_HOME), or \
     `pip install nvidia-cuda-nvrtc-cu12` (into the active virtual environment or with \
     --user), or set STENCILC_NVRTC to the library's path",
    shown(.dirs),
    python.display()
)]
pub struct NvrtcNotFound {
    /// The places the caller looked in first, in words.
    pub before: String,
    /// The folders looked in after them, in order.
    pub dirs: Vec<PathBuf>,
    /// The Python asked for its `site-packages`.
    pub python: PathBuf,
}

fn shown(dirs: &[PathBuf]) -> String {
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    shown.join(", ")
}

/// The error for an NVRTC not found after `before` and `dirs`.
pub fn nvrtc_not_found(before: &str, dirs: &[PathBuf]) -> NvrtcNotFound {
    NvrtcNotFound {
        before: before.to_string(),
        dirs: dirs.to_vec(),
        python: python(),
    }
}

/// Whether `path` is a file that may be run.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wheels `.ci/run` installs, when they are here: the real NVRTC and
    /// ptxas that a fake layout links to.
    fn ci_wheel(kind: &str, sub: &str) -> Option<PathBuf> {
        Vars::from_env()
            .ci_caches
            .iter()
            .flat_map(|c| entries_starting(c, &format!("{kind}-")))
            .map(|w| w.join(sub))
            .find(|d| d.is_dir())
    }

    /// `site/nvidia/cuda_nvrtc/lib` and `site/nvidia/cuda_nvcc/bin` as pip
    /// lays them out: links to the CI cache's real wheels when present,
    /// else stand-in files.
    fn fake_wheels(site: &Path) {
        let nvidia = site.join("nvidia");
        std::fs::create_dir_all(nvidia.join("cuda_nvrtc")).unwrap();
        std::fs::create_dir_all(nvidia.join("cuda_nvcc")).unwrap();
        match ci_wheel("nvrtc", NVRTC_WHEEL_DIR) {
            Some(real) => std::os::unix::fs::symlink(real, site.join(NVRTC_WHEEL_DIR)).unwrap(),
            None => {
                let lib = site.join(NVRTC_WHEEL_DIR);
                std::fs::create_dir_all(&lib).unwrap();
                std::fs::write(lib.join(NVRTC_LIB), b"").unwrap();
            }
        }
        match ci_wheel("nvcc", NVCC_WHEEL_DIR) {
            Some(real) => std::os::unix::fs::symlink(real, site.join(NVCC_WHEEL_DIR)).unwrap(),
            None => {
                use std::os::unix::fs::PermissionsExt;
                let bin = site.join(NVCC_WHEEL_DIR);
                std::fs::create_dir_all(&bin).unwrap();
                std::fs::write(bin.join("ptxas"), b"#!/bin/sh\n").unwrap();
                let executable = std::fs::Permissions::from_mode(0o755);
                std::fs::set_permissions(bin.join("ptxas"), executable).unwrap();
            }
        }
    }

    /// Variables that point at nothing on this machine but `root`.
    fn vars_under(root: &Path) -> Vars {
        Vars {
            home: Some(root.join("home")),
            ci_caches: vec![root.join("cache/stencilc-ci")],
            system: SystemDirs {
                toolkits: root.join("usr/local"),
                python_libs: vec![root.join("usr/lib")],
            },
            ..Vars::default()
        }
    }

    #[test]
    fn a_pip_install_into_a_virtual_environment_is_found() {
        let root = tempfile::tempdir().unwrap();
        let site = root.path().join("venv/lib/python3.11/site-packages");
        fake_wheels(&site);
        let mut vars = vars_under(root.path());
        vars.python_prefixes = vec![root.path().join("venv")];
        let places = Places::from_vars(&vars);
        assert_eq!(places.site_packages, vec![site.clone()]);
        let found = find_nvrtc_among(&places.nvrtc_dirs()).unwrap();
        assert_eq!(found, site.join(NVRTC_WHEEL_DIR).join(NVRTC_LIB));
        let ptxas = places.ptxas_files();
        let ptxas = ptxas.iter().find(|p| is_executable(p)).unwrap();
        assert_eq!(ptxas, &site.join(NVCC_WHEEL_DIR).join("ptxas"));
        // Through the link, the real wheel's library opens (when CI installed it).
        if ci_wheel("nvrtc", NVRTC_WHEEL_DIR).is_some() {
            // SAFETY: NVRTC's initialisers are plain library setup.
            let lib = unsafe { libloading::Library::new(&found) };
            assert!(lib.is_ok(), "{found:?}: {:?}", lib.err());
            assert!(nvrtc_builtins_in(found.parent().unwrap()).is_some());
        }
    }

    #[test]
    fn the_user_site_pyenv_and_debian_layouts_are_scanned() {
        let root = tempfile::tempdir().unwrap();
        let user = root.path().join("home/.local/lib/python3.12/site-packages");
        let pyenv = root
            .path()
            .join("home/.pyenv/versions/3.11.7/lib/python3.11/site-packages");
        let debian = root.path().join("usr/lib/python3/dist-packages");
        for dir in [&user, &pyenv, &debian] {
            std::fs::create_dir_all(dir).unwrap();
        }
        fake_wheels(&debian);
        let places = Places::from_vars(&vars_under(root.path()));
        assert_eq!(places.site_packages, vec![user, pyenv, debian.clone()]);
        assert_eq!(
            find_nvrtc_among(&places.nvrtc_dirs()),
            Some(debian.join(NVRTC_WHEEL_DIR).join(NVRTC_LIB))
        );
    }

    #[test]
    fn toolkits_come_first_and_are_named_by_variables_or_found() {
        let root = tempfile::tempdir().unwrap();
        let toolkit = root.path().join("usr/local/cuda-12.8");
        std::fs::create_dir_all(toolkit.join("lib64")).unwrap();
        std::fs::write(toolkit.join("lib64").join(NVRTC_LIB), b"").unwrap();
        let mut vars = vars_under(root.path());
        vars.cuda_roots = vec![root.path().join("opt/cuda")];
        let places = Places::from_vars(&vars);
        assert_eq!(
            places.toolkits,
            vec![root.path().join("opt/cuda"), toolkit.clone()]
        );
        let dirs = places.nvrtc_dirs();
        assert_eq!(dirs[0], root.path().join("opt/cuda/lib64"));
        assert_eq!(
            find_nvrtc_among(&dirs),
            Some(toolkit.join("lib64").join(NVRTC_LIB))
        );
        assert_eq!(
            places.ptxas_files()[..2],
            [
                root.path().join("opt/cuda/bin/ptxas"),
                toolkit.join("bin/ptxas")
            ]
        );
    }

    #[test]
    fn a_missing_nvrtc_lists_every_place_looked_in() {
        let root = tempfile::tempdir().unwrap();
        let site = root.path().join("venv/lib/python3.11/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        let mut vars = vars_under(root.path());
        vars.python_prefixes = vec![root.path().join("venv")];
        vars.cuda_roots = vec![root.path().join("cuda")];
        let dirs = Places::from_vars(&vars).nvrtc_dirs();
        assert_eq!(find_nvrtc_among(&dirs), None);
        let message = nvrtc_not_found("the loader's path", &dirs).to_string();
        for dir in [
            root.path().join("cuda/lib64"),
            site.join(NVRTC_WHEEL_DIR),
            root.path()
                .join("cache/stencilc-ci/nvrtc-12.8.93")
                .join(NVRTC_WHEEL_DIR),
        ] {
            assert!(message.contains(&dir.display().to_string()), "{message}");
        }
        assert!(
            message.contains("pip install nvidia-cuda-nvrtc-cu12"),
            "{message}"
        );
        assert!(message.contains("STENCILC_NVRTC"), "{message}");
    }

    #[test]
    fn python_is_asked_for_its_site_packages_with_a_time_limit() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let site = root.path().join("conda/lib/python3.13/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        // A stand-in interpreter printing what `SITE_SCRIPT` would.
        let python = root.path().join("python3");
        std::fs::write(
            &python,
            format!(
                "#!/bin/sh\necho {}\necho /nonexistent/site-packages\n",
                site.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
        let limit = Duration::from_secs(PYTHON_SECONDS);
        assert_eq!(ask_python(&python, limit), vec![site.clone()]);
        let known = Places {
            site_packages: vec![site],
            ..Places::default()
        };
        assert!(python_places(&known, &python, limit)
            .site_packages
            .is_empty());
        // One that never answers is given up on.
        std::fs::write(&python, "#!/bin/sh\nexec sleep 60\n").unwrap();
        assert!(ask_python(&python, Duration::from_millis(200)).is_empty());
        assert!(ask_python(Path::new("/nonexistent/python3"), limit).is_empty());
    }
}
