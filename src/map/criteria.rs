//! The methodology's three criteria a nest must meet to be mapped onto a GPU,
//! with the device's numbers (loop pattern, iteration sizes: eq. 3, memory
//! footprint: eq. 4), the memory specialisation of each array, and the
//! transformations a mapped nest gets.

use std::collections::BTreeSet;

use serde::Serialize;

use super::facts::NestFacts;
use super::shared;
use super::syntax::lookup;
use super::threads::{block_shape, kernel_body, thread_loops, GRID_X, GRID_YZ};
use crate::front::c::fold::constant;
use crate::front::c::loops::{CUnit, Function, Loop};
use crate::model::device::Device;

/// One criterion and its verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Criterion {
    /// Its name.
    pub name: &'static str,
    /// Whether the nest meets it.
    pub pass: bool,
    /// The numbers.
    pub detail: String,
}

/// Where an array lives on the GPU, and why.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryChoice {
    /// The array.
    pub array: String,
    /// `global`, `read-only path`, `constant memory` or `shared memory`.
    pub choice: &'static str,
    /// Why.
    pub reason: String,
    /// The numbers of the shared-memory decision (read-only arrays the
    /// analysis could follow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub staging: Option<super::shared::StagingNumbers>,
    /// The tile of an array staged in shared memory.
    #[serde(skip)]
    pub tile: Option<super::shared::Tile>,
}

/// Device memory in bytes of each preset (datasheets: the capacity in the product name).
pub fn device_memory_bytes(device: &Device) -> u64 {
    let gib: u64 = match device.key {
        "h200" => 141,
        "l40s" => 48,
        "v100" => 32,
        _ => 80,
    };
    gib * 1_000_000_000
}

/// Constant memory of CUDA devices (64 KiB on every preset).
pub const CONSTANT_MEMORY_BYTES: u64 = 64 * 1024;

/// Checks the three criteria for the parallel loops `band` (outermost first).
pub fn check(
    band: &[String],
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
    device: &Device,
) -> Vec<Criterion> {
    let mut out = Vec::new();
    let depth = facts.loops.len();
    out.push(Criterion {
        name: "loop pattern",
        pass: !band.is_empty() && band.len() <= 6,
        detail: format!(
            "{} parallel loop(s) ({}) mapped onto threads, {} loop(s) in the nest; at most 3 thread loops and 3 block loops",
            band.len(),
            band.join(", "),
            depth
        ),
    });
    let shape = block_shape(band.len());
    let mut sizes = Vec::new();
    let mut fits = true;
    for (k, var) in band.iter().enumerate() {
        let l = &facts.loops[var];
        let block = shape[k.min(shape.len() - 1)];
        let limit = if k + 1 == band.len() { GRID_X } else { GRID_YZ };
        let trip = match (constant(&l.lower), constant(&l.upper)) {
            (Some(lo), Some(hi)) => hi
                .checked_sub(lo)
                .and_then(|s| s.max(0).checked_add(l.step - 1))
                .map(|s| s / l.step.max(1)),
            _ => None,
        };
        match trip {
            Some(trip) => {
                let blocks = trip / block + i64::from(trip % block != 0);
                fits &= blocks <= limit;
                sizes.push(format!(
                    "{var}: {trip} iterations / {block} threads = {blocks} blocks (limit {limit})"
                ));
            }
            _ => {
                let count = if l.lower == crate::front::c::loops::Expr::Int(0) {
                    l.upper.to_string()
                } else {
                    format!("{} - {}", l.upper, l.lower)
                };
                sizes.push(format!("{var}: {count} iterations (symbolic, checked at launch; limit {limit} blocks of {block})"))
            }
        }
    }
    out.push(Criterion {
        name: "iteration sizes (eq. 3)",
        pass: fits,
        detail: format!(
            "{}; at most {} threads per block on the {}",
            sizes.join("; "),
            device.max_threads_per_block,
            device.name
        ),
    });
    let arrays: BTreeSet<&String> = facts.accesses.iter().map(|a| &a.array).collect();
    let mut total: u64 = 0;
    let mut unknown = Vec::new();
    for a in &arrays {
        match array_bytes(a, function, unit) {
            Some(b) => total = total.saturating_add(b),
            None => unknown.push(format!("`{a}`")),
        }
    }
    let memory = device_memory_bytes(device);
    let footprint = if unknown.is_empty() {
        format!("{} bytes", total)
    } else {
        format!(
            "{} bytes known + {} (extent symbolic, checked at run time)",
            total,
            unknown.join(", ")
        )
    };
    out.push(Criterion {
        name: "memory footprint (eq. 4)",
        pass: total <= memory,
        detail: format!("{footprint} <= {} bytes of device memory", memory),
    });
    out
}

/// Bytes of an array whose extents are constants.
fn array_bytes(name: &str, function: &Function, unit: &CUnit) -> Option<u64> {
    let v = lookup(name, function, unit)?;
    if v.dims.is_empty() {
        return None;
    }
    let mut n: u64 = v.elem_bytes();
    for d in &v.dims {
        n = n.checked_mul(u64::try_from(constant(d.as_ref()?)?).ok()?)?;
    }
    Some(n)
}

/// The memory specialisation of every array of a mapped nest whose parallel
/// loops are `band` (outermost first).
pub fn memory_choices(
    band: &[String],
    root: &Loop,
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
) -> Vec<MemoryChoice> {
    let threads: Vec<String> = thread_loops(band, facts)
        .into_iter()
        .map(|(v, _, _)| v)
        .collect();
    let body = kernel_body(root, threads.len());
    let mut out = Vec::new();
    let mut staged_bytes = 0;
    for array in facts.subs.keys() {
        let written = facts.accesses.iter().any(|a| &a.array == array && a.write);
        let mut staging = None;
        let mut tile = None;
        let (choice, reason) = if written {
            ("global", "written by the kernel".to_string())
        } else if let Some(bytes) =
            array_bytes(array, function, unit).filter(|&b| b <= CONSTANT_MEMORY_BYTES / 4)
        {
            (
                "constant memory",
                format!(
                    "read-only and small ({bytes} bytes <= {} bytes), read alike by all threads",
                    CONSTANT_MEMORY_BYTES / 4
                ),
            )
        } else {
            let read_only = "`const __restrict__` / `__ldg`";
            match shared::analyse(array, &threads, body, facts, function, unit) {
                Err(why) => (
                    "read-only path",
                    format!("read-only ({read_only}); not staged in shared memory: {why}"),
                ),
                Ok((numbers, t)) => {
                    let described = numbers.describe();
                    let refusal = if numbers.distinct_offsets == 1 {
                        staging = Some(numbers);
                        out.push(MemoryChoice {
                            array: array.clone(),
                            choice: "read-only path",
                            reason: format!("read-only ({read_only}), one element per point: nothing to share within a block"),
                            staging,
                            tile,
                        });
                        continue;
                    } else if numbers.tile_bytes > shared::TILE_BYTES_LIMIT {
                        Some(format!(
                            "offsets too wide, the tile exceeds {} bytes",
                            shared::TILE_BYTES_LIMIT
                        ))
                    } else if staged_bytes + numbers.tile_bytes > shared::KERNEL_TILE_BYTES_LIMIT {
                        Some(format!(
                            "the kernel's tiles would exceed {} bytes",
                            shared::KERNEL_TILE_BYTES_LIMIT
                        ))
                    } else if numbers.reuse < shared::MIN_REUSE {
                        Some(format!(
                            "a reuse under {} does not pay for the barrier",
                            shared::MIN_REUSE
                        ))
                    } else {
                        None
                    };
                    staging = Some(numbers.clone());
                    match refusal {
                        Some(why) => (
                            "read-only path",
                            format!("read-only ({read_only}); not staged in shared memory: {why}: {described}"),
                        ),
                        None => {
                            staged_bytes += numbers.tile_bytes;
                            tile = Some(t);
                            (
                                "shared memory",
                                format!("read-only and reused within a block: {described} >= {}", shared::MIN_REUSE),
                            )
                        }
                    }
                }
            }
        };
        out.push(MemoryChoice {
            array: array.clone(),
            choice,
            reason,
            staging,
            tile,
        });
    }
    out
}

/// The transformations a mapped nest gets, each with its reason.
pub fn transformations(band: &[String], facts: &NestFacts) -> Vec<String> {
    let mut out = Vec::new();
    for var in band {
        let l = &facts.loops[var];
        // A stride other than one is rewritten (or refused) by `transform::normalise`.
        if l.lower != crate::front::c::loops::Expr::Int(0) && l.step == 1 {
            out.push(format!(
                "normalisation: `{var}` runs from {} by {}; the thread index is `{var} = {} + {}*tid` (unit stride from zero)",
                l.lower, l.step, l.lower, l.step
            ));
        }
    }
    for (array, dims) in &facts.delinearised {
        out.push(format!("delinearisation: `{array}`'s linear subscripts split into {dims} dimensions (strides proved from the loop bounds)"));
    }
    if band.len() > 1 {
        out.push(format!(
            "coalescing: the {} parallel loops are collapsed into one iteration space",
            band.len()
        ));
    }
    let inner = facts.loops.len() - band.len();
    if inner > 0 {
        out.push(format!(
            "{inner} inner loop(s) stay sequential inside each thread"
        ));
    }
    out
}
