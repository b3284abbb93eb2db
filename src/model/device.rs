//! Device presets: what the performance model needs to know about a GPU.
//!
//! One table, [`DEVICES`], with a source for every figure. "Copy" is the
//! bandwidth a device-to-device copy (`cuMemcpyDtoD`) reaches: measured on the
//! H100 SXM (bench/gpu/h100, 3.0 TB/s), elsewhere estimated as the H100's
//! measured ratio to the datasheet (0.90). L2 bandwidths are estimates from
//! published microbenchmarks; they matter only for kernels bound by L2.

use serde::Serialize;

/// One GPU model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Device {
    /// The name `--device` takes.
    pub key: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// The product name.
    pub name: &'static str,
    /// The `--gpu-architecture` NVRTC and ptxas are given (`sm_90`).
    pub arch: &'static str,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Boost clock of the SMs, GHz.
    pub clock_ghz: f64,
    /// DRAM bandwidth on the datasheet, GB/s.
    pub dram_gb_s: f64,
    /// Bandwidth a device-to-device copy reaches, GB/s.
    pub copy_gb_s: f64,
    /// Whether `copy_gb_s` was measured (else estimated).
    pub copy_measured: bool,
    /// L2 cache size, bytes.
    pub l2_bytes: u64,
    /// L2 to SM bandwidth, GB/s (estimate).
    pub l2_gb_s: f64,
    /// Shared memory one SM gives to its resident blocks, bytes.
    pub shared_per_sm: u32,
    /// Static shared memory one block may use, bytes (more needs an opt-in).
    pub shared_per_block: u32,
    /// 32-bit registers per SM.
    pub registers_per_sm: u32,
    /// Threads resident per SM at most.
    pub max_threads_per_sm: u32,
    /// Blocks resident per SM at most.
    pub max_blocks_per_sm: u32,
    /// Threads per block at most.
    pub max_threads_per_block: u32,
    /// FP64 lanes per SM (FP32: 128 on every preset).
    pub fp64_lanes_per_sm: u32,
    /// Where the figures come from.
    pub source: &'static str,
}

const KIB: u32 = 1024;
const MIB: u64 = 1024 * 1024;

/// Every device `--device` knows, the default first.
pub const DEVICES: &[Device] = &[
    Device {
        key: "h100-sxm",
        aliases: &["h100"],
        name: "NVIDIA H100 SXM5 80GB",
        arch: "sm_90",
        sms: 132,
        clock_ghz: 1.98,
        dram_gb_s: 3350.0,
        copy_gb_s: 3000.0,
        copy_measured: true,
        l2_bytes: 50 * MIB,
        l2_gb_s: 9200.0,
        shared_per_sm: 228 * KIB,
        shared_per_block: 48 * KIB,
        registers_per_sm: 65536,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        fp64_lanes_per_sm: 64,
        source: "NVIDIA H100 datasheet and Hopper tuning guide; copy measured (bench/gpu/h100); \
                 L2 fitted on the H200's schedules (bench/gpu/h200)",
    },
    Device {
        key: "h100-pcie",
        aliases: &[],
        name: "NVIDIA H100 PCIe 80GB",
        arch: "sm_90",
        sms: 114,
        clock_ghz: 1.755,
        dram_gb_s: 2000.0,
        copy_gb_s: 1800.0,
        copy_measured: false,
        l2_bytes: 50 * MIB,
        l2_gb_s: 7300.0,
        shared_per_sm: 228 * KIB,
        shared_per_block: 48 * KIB,
        registers_per_sm: 65536,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        fp64_lanes_per_sm: 64,
        source: "NVIDIA H100 datasheet and Hopper tuning guide; copy = 0.90 x datasheet",
    },
    Device {
        key: "h200",
        aliases: &["h200-sxm"],
        name: "NVIDIA H200 SXM 141GB",
        arch: "sm_90",
        sms: 132,
        clock_ghz: 1.98,
        dram_gb_s: 4800.0,
        copy_gb_s: 4290.0,
        copy_measured: true,
        l2_bytes: 50 * MIB,
        l2_gb_s: 9200.0,
        shared_per_sm: 228 * KIB,
        shared_per_block: 48 * KIB,
        registers_per_sm: 65536,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        fp64_lanes_per_sm: 64,
        source: "NVIDIA H200 datasheet (H100 SMs, HBM3e); copy and L2 measured (bench/gpu/h200)",
    },
    Device {
        key: "a100",
        aliases: &["a100-sxm"],
        name: "NVIDIA A100 SXM4 80GB",
        arch: "sm_80",
        sms: 108,
        clock_ghz: 1.41,
        dram_gb_s: 2039.0,
        copy_gb_s: 1830.0,
        copy_measured: false,
        l2_bytes: 40 * MIB,
        l2_gb_s: 5000.0,
        shared_per_sm: 164 * KIB,
        shared_per_block: 48 * KIB,
        registers_per_sm: 65536,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        fp64_lanes_per_sm: 32,
        source: "NVIDIA A100 datasheet and Ampere tuning guide; L2 = 2.3 x V100 (A100 whitepaper); copy = 0.90 x datasheet",
    },
    Device {
        key: "l40s",
        aliases: &[],
        name: "NVIDIA L40S 48GB",
        arch: "sm_89",
        sms: 142,
        clock_ghz: 2.52,
        dram_gb_s: 864.0,
        copy_gb_s: 780.0,
        copy_measured: false,
        l2_bytes: 96 * MIB,
        l2_gb_s: 4000.0,
        shared_per_sm: 100 * KIB,
        shared_per_block: 48 * KIB,
        registers_per_sm: 65536,
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 24,
        max_threads_per_block: 1024,
        fp64_lanes_per_sm: 2,
        source: "NVIDIA L40S datasheet and Ada tuning guide (FP64 = 1/64 FP32); copy = 0.90 x datasheet",
    },
    Device {
        key: "v100",
        aliases: &["v100-sxm2"],
        name: "NVIDIA V100 SXM2 32GB",
        arch: "sm_70",
        sms: 80,
        clock_ghz: 1.53,
        dram_gb_s: 900.0,
        copy_gb_s: 810.0,
        copy_measured: false,
        l2_bytes: 6 * MIB,
        l2_gb_s: 2150.0,
        shared_per_sm: 96 * KIB,
        shared_per_block: 48 * KIB,
        registers_per_sm: 65536,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        fp64_lanes_per_sm: 32,
        source: "NVIDIA V100 datasheet and Volta tuning guide; L2 from Jia et al. 2018 (Dissecting Volta); copy = 0.90 x datasheet",
    },
];

impl Device {
    /// The preset named `name` (its key or an alias, any case).
    pub fn find(name: &str) -> Option<&'static Device> {
        let wanted = name.trim().to_ascii_lowercase();
        DEVICES
            .iter()
            .find(|d| d.key == wanted || d.aliases.contains(&wanted.as_str()))
    }

    /// The default device (`h100-sxm`).
    pub fn default_device() -> &'static Device {
        &DEVICES[0]
    }

    /// The keys `--device` accepts, for error messages.
    pub fn known_names() -> String {
        DEVICES
            .iter()
            .map(|d| {
                if d.aliases.is_empty() {
                    d.key.to_string()
                } else {
                    format!("{} (or {})", d.key, d.aliases.join(", "))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The per-block limits a schedule must respect on this device.
    pub fn limits(&self) -> crate::schedule::DeviceLimits {
        crate::schedule::DeviceLimits {
            max_threads_per_block: self.max_threads_per_block,
            max_block_dims: [1024, 1024, 64],
            shared_bytes_per_block: self.shared_per_block as usize,
            max_threads_per_sm: self.max_threads_per_sm,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_find_their_device_in_any_case() {
        assert_eq!(Device::find("H100").unwrap().key, "h100-sxm");
        assert_eq!(Device::find("a100-sxm").unwrap().sms, 108);
        assert!(Device::find("rtx9090").is_none());
        assert!(Device::known_names().contains("l40s"));
    }

    #[test]
    fn every_preset_is_complete() {
        for d in DEVICES {
            assert!(
                d.sms > 0 && d.clock_ghz > 0.0 && d.copy_gb_s < d.dram_gb_s,
                "{}",
                d.key
            );
            assert!(d.arch.starts_with("sm_"), "{}", d.key);
            assert!(!d.source.is_empty());
        }
    }
}
