//! The caches and cores of the machine the generated C runs on, as the
//! time-tiling model needs them.

/// The caches and cores of the machine the C runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuCaches {
    /// Cores the process may use.
    pub cores: u32,
    /// L2 per core, bytes.
    pub l2_bytes: u64,
    /// Last-level cache, bytes (shared).
    pub llc_bytes: u64,
}

impl CpuCaches {
    /// This machine: `available_parallelism`, and the cache sizes of cpu0 from
    /// `/sys/devices/system/cpu/cpu0/cache` (1 MiB L2 and 32 MiB last level
    /// where the system does not say). Read once per process: the two dozen
    /// files cost a large part of a small run's overhead on a loaded machine.
    pub fn here() -> CpuCaches {
        static HERE: std::sync::OnceLock<CpuCaches> = std::sync::OnceLock::new();
        *HERE.get_or_init(CpuCaches::read)
    }

    fn read() -> CpuCaches {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        let dir = "/sys/devices/system/cpu/cpu0/cache";
        let mut l2 = None;
        let mut llc: Option<(u32, u64)> = None;
        for index in 0..8 {
            let read = |what: &str| std::fs::read_to_string(format!("{dir}/index{index}/{what}"));
            let (Ok(level), Ok(size)) = (read("level"), read("size")) else {
                continue;
            };
            let (Ok(level), Some(size)) = (level.trim().parse::<u32>(), parse_size(size.trim()))
            else {
                continue;
            };
            if read("type").is_ok_and(|t| t.trim() == "Instruction") {
                continue;
            }
            if level == 2 {
                l2 = Some(size);
            }
            if llc.is_none_or(|(l, _)| level > l) {
                llc = Some((level, size));
            }
        }
        let l2_bytes = l2.unwrap_or(1 << 20);
        CpuCaches {
            cores,
            l2_bytes,
            llc_bytes: llc.map_or(32 << 20, |(_, s)| s).max(l2_bytes),
        }
    }
}

/// `512K`, `2M`, `1024`: a cache size as the kernel prints it.
pub fn parse_size(text: &str) -> Option<u64> {
    let (digits, scale) = match text.chars().last()? {
        'K' | 'k' => (&text[..text.len() - 1], 1 << 10),
        'M' | 'm' => (&text[..text.len() - 1], 1 << 20),
        'G' | 'g' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok().map(|n| n * scale)
}
