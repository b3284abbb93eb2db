//! How much memory a run may use: the kernel's `MemAvailable` and the limits of
//! the control group the process runs in (a container, a batch job, a systemd
//! slice), whichever leaves least.
//!
//! Linux overcommits: reserving more than a cgroup allows succeeds, and the run
//! is killed without a word once it touches the pages. So the fields' bytes are
//! compared with what each limit leaves before anything is allocated.
//!
//! - cgroup v2: `/proc/self/cgroup` has a line `0::/PATH`; the limit of
//!   `/sys/fs/cgroup/PATH` and of each parent up to the mount's root is
//!   `memory.max` (a number of bytes, or `max` for none) less `memory.current`.
//! - cgroup v1: the line whose controllers include `memory` names the path under
//!   `/sys/fs/cgroup/memory`; the files are `memory.limit_in_bytes` (a huge
//!   number for none) and `memory.usage_in_bytes`.
//!
//! When the listed path does not exist under the mount (a container that sees
//! its own cgroup as the root), the mount's root itself is read.
//!
//! - The address-space limit (`ulimit -v`, `RLIMIT_AS`) of `/proc/self/limits`,
//!   less the process's `VmSize`: a run past it fails its allocations.
//!
//! What a run needs is not the fields' bytes but the back-end's peak resident
//! memory, which [`peak`] gives per back-end from peaks measured with
//! `/usr/bin/time` (maximum RSS, children included: the C compiler runs inside
//! the same cgroup) on `examples/jacobi2d.sdsl` at 500² to 4000² points
//! (2 to 128 MB of fields); see [`peak`] for the figures.

use std::fs;
use std::path::{Path, PathBuf};

/// What one limit leaves for the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Headroom {
    /// Which limit, in words (`MemAvailable in /proc/meminfo`, `the cgroup
    /// limit memory.max = 2.0 GiB of /sys/fs/cgroup/job`).
    pub source: String,
    /// Bytes the run can still use under it.
    pub bytes: u64,
}

/// v1 reports "no limit" as a huge number (`PAGE_COUNTER_MAX` pages): anything
/// from 2^60 bytes up is no limit.
const V1_UNLIMITED: u64 = 1 << 60;

/// Every limit this machine and process are under, read from `/proc` and
/// `/sys/fs/cgroup`; missing files are limits that do not apply.
pub fn headrooms() -> Vec<Headroom> {
    let mut all = Vec::new();
    if let Some(bytes) = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_available(&text))
    {
        all.push(Headroom {
            source: "MemAvailable in /proc/meminfo".into(),
            bytes,
        });
    }
    if let Ok(cgroups) = fs::read_to_string("/proc/self/cgroup") {
        all.extend(cgroup_headrooms(&cgroups, Path::new("/sys/fs/cgroup")));
    }
    if let (Ok(limits), Ok(status)) = (
        fs::read_to_string("/proc/self/limits"),
        fs::read_to_string("/proc/self/status"),
    ) {
        all.extend(address_space_headroom(&limits, &status));
    }
    all
}

/// The smallest headroom, if any limit applies.
pub fn tightest(headrooms: &[Headroom]) -> Option<&Headroom> {
    headrooms.iter().min_by_key(|h| h.bytes)
}

/// The limit that refuses a run needing `bytes`: the tightest one, when the run
/// does not fit it.
pub fn refusal(bytes: u64, headrooms: &[Headroom]) -> Option<&Headroom> {
    tightest(headrooms).filter(|tight| bytes > tight.bytes)
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
pub fn mem_available(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix("MemAvailable:")?;
        let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// The cgroup limits of a process whose `/proc/self/cgroup` reads `cgroups`,
/// with the cgroup file systems mounted under `mount` (`/sys/fs/cgroup`).
pub fn cgroup_headrooms(cgroups: &str, mount: &Path) -> Vec<Headroom> {
    let mut all = Vec::new();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            all.extend(walk_up(
                &mount.join(path.trim_start_matches('/')),
                mount,
                "memory.max",
                "memory.current",
                None,
            ));
        } else if controllers.split(',').any(|c| c == "memory") {
            let root = mount.join("memory");
            all.extend(walk_up(
                &root.join(path.trim_start_matches('/')),
                &root,
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                Some(V1_UNLIMITED),
            ));
        }
    }
    all
}

/// The headroom of `dir` and each parent up to `root` (or of `root` alone when
/// `dir` does not exist) that has a limit.
fn walk_up(
    dir: &Path,
    root: &Path,
    limit_file: &str,
    usage_file: &str,
    unlimited_from: Option<u64>,
) -> Vec<Headroom> {
    let start: PathBuf = if dir.is_dir() {
        dir.to_path_buf()
    } else {
        root.to_path_buf()
    };
    start
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .filter_map(|d| headroom_of(d, limit_file, usage_file, unlimited_from))
        .collect()
}

fn headroom_of(
    dir: &Path,
    limit_file: &str,
    usage_file: &str,
    unlimited_from: Option<u64>,
) -> Option<Headroom> {
    let limit_text = fs::read_to_string(dir.join(limit_file)).ok()?;
    let limit: u64 = match limit_text.trim() {
        "max" => return None,
        number => number.parse().ok()?,
    };
    if unlimited_from.is_some_and(|huge| limit >= huge) {
        return None;
    }
    let used: u64 = fs::read_to_string(dir.join(usage_file))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    Some(Headroom {
        source: format!(
            "the cgroup limit {limit_file} = {} of {} ({} in use)",
            gib(limit),
            dir.display(),
            gib(used)
        ),
        bytes: limit.saturating_sub(used),
    })
}

/// A back-end, as far as its memory use goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The interpreter.
    Interp,
    /// Generated C, compiled by the system compiler.
    C,
    /// OpenCL (PoCL on a CPU in the measurements).
    OpenCl,
    /// CUDA, or `auto`, which tries CUDA first.
    Cuda,
}

/// A back-end's peak resident memory for a run whose fields take `F` bytes:
/// `factor × F + fixed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peak {
    /// Copies of the fields alive at the peak.
    pub factor: u64,
    /// Bytes that do not grow with the fields (the process, a compiler, the
    /// OpenCL platform).
    pub fixed: u64,
}

const MIB: u64 = 1 << 20;

/// The peak model of `engine`, an upper bound of what was measured (maximum
/// RSS with `/usr/bin/time`, jacobi2d at 500² / 1000² / 2000² / 3000² / 4000²
/// points, 2 / 8 / 32 / 72 / 128 MB of fields):
///
/// - interp: 107 MB at 72 MB of fields (26 MB at 8 MB): one copy of the fields
///   and about 20 MB of process;
/// - c: 89 MB at 72 MB, 41 MB at 2 MB with the kernel not yet compiled (the
///   C compiler is a child in the same cgroup): one copy, 64 MiB fixed;
/// - opencl on PoCL: 107 / 125 / 163 / 310 / 474 MB with the kernels in PoCL's
///   cache, 327 / 364 / 523 / 687 MB at 8 / 32 / 72 / 128 MB when PoCL compiles
///   them (LLVM): the host state, the staging copies and PoCL's buffers (host
///   memory on a CPU device), 4 copies, and 320 MiB fixed for the platform and
///   its compiler;
/// - cuda and auto (not measured: no GPU where this was written): the host
///   state and one staging copy, 64 MiB fixed.
pub fn peak(engine: Engine) -> Peak {
    match engine {
        Engine::Interp => Peak {
            factor: 1,
            fixed: 32 * MIB,
        },
        Engine::C => Peak {
            factor: 1,
            fixed: 64 * MIB,
        },
        Engine::OpenCl => Peak {
            factor: 4,
            fixed: 320 * MIB,
        },
        Engine::Cuda => Peak {
            factor: 2,
            fixed: 64 * MIB,
        },
    }
}

/// The peak resident memory of a run on `engine` whose fields (every time
/// level) take `field_bytes`; `--verify` (`verify`) keeps the interpreter's
/// copy of the fields besides. `None` past `u64`.
pub fn estimate(engine: Engine, field_bytes: u64, verify: bool) -> Option<u64> {
    let Peak { factor, fixed } = peak(engine);
    let copies = factor + u64::from(verify);
    field_bytes.checked_mul(copies)?.checked_add(fixed)
}

/// The headroom under the address-space limit (`ulimit -v`) given the text of
/// `/proc/self/limits` and `/proc/self/status`: the soft limit less `VmSize`.
/// `None` without a limit.
pub fn address_space_headroom(limits: &str, status: &str) -> Option<Headroom> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft = line["Max address space".len()..]
        .split_whitespace()
        .next()?;
    let limit: u64 = soft.parse().ok()?; // "unlimited" does not parse
    let used = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib.saturating_mul(1024));
    Some(Headroom {
        source: format!(
            "the address-space limit (ulimit -v) of {} ({} in use)",
            gib(limit),
            gib(used)
        ),
        bytes: limit.saturating_sub(used),
    })
}

/// Bytes in GiB with one decimal (MiB below 1 GiB), for messages.
pub fn gib(bytes: u64) -> String {
    if bytes < 1 << 30 {
        return format!("{} MiB", bytes.div_ceil(MIB));
    }
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn write(dir: &Path, file: &str, text: &str) {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join(file), text).unwrap();
    }

    const MB: u64 = 1_000_000;

    #[test]
    fn estimates_cover_the_measured_peaks() {
        // (engine, fields, measured peak RSS), both in bytes.
        let measured = [
            (Engine::Interp, 8 * MB, 26_420 * 1024),
            (Engine::Interp, 72 * MB, 88_516 * 1024),
            (Engine::C, 2 * MB, 40_728 * 1024),
            (Engine::C, 72 * MB, 89_168 * 1024),
            (Engine::OpenCl, 2 * MB, 106_764 * 1024),
            (Engine::OpenCl, 8 * MB, 334_712 * 1024),
            (Engine::OpenCl, 32 * MB, 363_872 * 1024),
            (Engine::OpenCl, 72 * MB, 523_316 * 1024),
            (Engine::OpenCl, 128 * MB, 686_568 * 1024),
        ];
        for (engine, fields, peak) in measured {
            let estimate = estimate(engine, fields, false).unwrap();
            assert!(
                estimate >= peak,
                "{engine:?} at {fields}: {estimate} < {peak}"
            );
        }
    }

    #[test]
    fn opencl_at_3000_squared_does_not_fit_200_mb() {
        // The docs' promise (docs/src/cli.md): `run examples/jacobi2d.sdsl --backend opencl
        // --set dim0=3000 --set dim1=3000` (72 MB of fields) in a 200 MB
        // cgroup is refused, not killed; the interpreter fits.
        let limit = [Headroom {
            source: "the cgroup limit".into(),
            bytes: 200 * MB,
        }];
        let fields = 3000 * 3000 * 4 * 2;
        let opencl = estimate(Engine::OpenCl, fields, false).unwrap();
        assert!(refusal(opencl, &limit).is_some());
        let interp = estimate(Engine::Interp, fields, false).unwrap();
        assert!(refusal(interp, &limit).is_none());
        // --verify adds the interpreter's copy; overflow is None.
        assert_eq!(
            estimate(Engine::Interp, fields, true),
            Some(2 * fields + 32 * MIB)
        );
        assert_eq!(estimate(Engine::OpenCl, u64::MAX / 2, false), None);
    }

    #[test]
    fn the_address_space_limit_is_read_from_proc() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max stack size            8388608              unlimited            bytes\n\
                      Max address space         2147483648           unlimited            bytes\n";
        let status = "Name:\tstencilc\nVmPeak:\t 2000 kB\nVmSize:\t    1024 kB\n";
        let found = address_space_headroom(limits, status).unwrap();
        assert_eq!(found.bytes, 2 * GIB - 1024 * 1024);
        assert!(found.source.contains("ulimit -v"), "{found:?}");
        let unlimited = limits.replace("2147483648 ", "unlimited  ");
        assert_eq!(address_space_headroom(&unlimited, status), None);
        assert_eq!(address_space_headroom("", status), None);
    }

    #[test]
    fn mem_available_is_read_in_kib() {
        let meminfo = "MemTotal:       16303252 kB\nMemFree:  1000 kB\nMemAvailable:    2048 kB\n";
        assert_eq!(mem_available(meminfo), Some(2048 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
    }

    #[test]
    fn v2_limits_are_read_from_the_cgroup_and_its_parents() {
        let mount = tempfile::tempdir().unwrap();
        let job = mount.path().join("batch/job7");
        write(&job, "memory.max", "max\n");
        write(&job, "memory.current", "100\n");
        let batch = mount.path().join("batch");
        write(&batch, "memory.max", &format!("{}\n", 2 * GIB));
        write(&batch, "memory.current", &format!("{}\n", GIB / 2));
        let found = cgroup_headrooms("0::/batch/job7\n", mount.path());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].bytes, 2 * GIB - GIB / 2);
        assert!(
            found[0].source.contains("memory.max = 2.0 GiB"),
            "{found:?}"
        );
        assert!(found[0].source.contains("batch"), "{found:?}");

        // A tighter limit on the job itself is found too; the smallest wins.
        write(&job, "memory.max", &format!("{}\n", GIB));
        let found = cgroup_headrooms("0::/batch/job7\n", mount.path());
        assert_eq!(found.len(), 2, "{found:?}");
        let tight = tightest(&found).unwrap();
        assert_eq!(tight.bytes, GIB - 100);
        assert!(tight.source.contains("job7"), "{tight:?}");
    }

    #[test]
    fn the_tightest_limit_refuses_and_is_named() {
        let limits = [
            Headroom {
                source: "MemAvailable in /proc/meminfo".into(),
                bytes: 20 * GIB,
            },
            Headroom {
                source: "the cgroup limit memory.max = 2.0 GiB of /sys/fs/cgroup/job".into(),
                bytes: 2 * GIB,
            },
        ];
        let refused = refusal(4 * GIB + GIB / 5, &limits).unwrap();
        assert!(refused.source.contains("memory.max"), "{refused:?}");
        assert!(refusal(GIB, &limits).is_none());
        assert!(refusal(u64::MAX, &[]).is_none());
    }

    #[test]
    fn v2_without_a_limit_or_files_gives_nothing() {
        let mount = tempfile::tempdir().unwrap();
        write(mount.path(), "memory.max", "max\n");
        assert!(cgroup_headrooms("0::/\n", mount.path()).is_empty());
        assert!(cgroup_headrooms("", mount.path()).is_empty());
        assert!(cgroup_headrooms("garbage\n", mount.path()).is_empty());
    }

    #[test]
    fn v2_path_missing_under_the_mount_reads_the_mount_root() {
        // A container with its own cgroup namespace mounted at the root.
        let mount = tempfile::tempdir().unwrap();
        write(mount.path(), "memory.max", &format!("{}\n", 2 * GIB));
        write(mount.path(), "memory.current", "0\n");
        let found = cgroup_headrooms("0::/system.slice/docker-1.scope\n", mount.path());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].bytes, 2 * GIB);
    }

    #[test]
    fn v1_limits_come_from_the_memory_controller() {
        let mount = tempfile::tempdir().unwrap();
        let group = mount.path().join("memory/slurm/uid_1/job_2");
        write(&group, "memory.limit_in_bytes", &format!("{}\n", 3 * GIB));
        write(&group, "memory.usage_in_bytes", &format!("{}\n", GIB));
        let unlimited = mount.path().join("memory/slurm");
        write(&unlimited, "memory.limit_in_bytes", "9223372036854771712\n");
        let cgroups = "12:pids:/slurm\n4:cpu,cpuacct:/slurm\n7:memory:/slurm/uid_1/job_2\n";
        let found = cgroup_headrooms(cgroups, mount.path());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].bytes, 2 * GIB);
        assert!(
            found[0].source.contains("memory.limit_in_bytes"),
            "{found:?}"
        );
        // Usage above the limit leaves nothing rather than wrapping around.
        write(&group, "memory.usage_in_bytes", &format!("{}\n", 4 * GIB));
        assert_eq!(cgroup_headrooms(cgroups, mount.path())[0].bytes, 0);
    }
}
