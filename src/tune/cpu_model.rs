//! The model that orders the tuner's CPU candidates and prunes the hopeless
//! ones (never to report a time): each candidate is planned as the C back-end
//! would run it ([`crate::driver::cpu::plan_on`]: its `--time`,
//! `--cpu-tile` and `--threads`, the back-end's choice for what they leave
//! open) and costed by the back-end's own calibrated model
//! ([`crate::schedule::cpu_tile::predict_step_seconds`]), so that the tuner's
//! first candidates are the ones the back-end would pick. A program the C
//! back-end cannot time-tile is costed by a rough model ([`rough`]): the
//! larger of its memory time (every field level read and written once per
//! sweep) and its compute time (a fixed cost per read and per division or
//! `sqrt`, divided among the threads).

use crate::analysis::footprint::Footprint;
use crate::ir::env::RunEnv;
use crate::ir::Program;

use super::Knobs;

/// Memory bandwidth one core reaches, bytes per second (a 2-core laptop-class
/// machine streams about 12 GB/s in all).
const BANDWIDTH_PER_CORE: f64 = 6e9;
/// Seconds per read of one point of one stencil (scalar-ish code).
const SECONDS_PER_READ: f64 = 0.4e-9;
/// Seconds per slow operation of a point (a division or `sqrt`; see
/// [`crate::schedule::cpu_tile::slow_ops_per_point`]), exact as compiled.
const SECONDS_PER_SLOW_OP: f64 = 3e-9;
/// Seconds of loop and scheduling overhead per tile.
const SECONDS_PER_TILE: f64 = 0.2e-6;

/// What the model knows of this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Cores the process may use.
    pub cores: u32,
    /// Cache per core, bytes (the L2 where the system says, else 1 MiB).
    pub cache_bytes: usize,
}

impl Machine {
    /// This machine, from `available_parallelism` and
    /// `/sys/devices/system/cpu/cpu0/cache`.
    pub fn here() -> Machine {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        let cache_bytes = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cache/index2/size")
            .ok()
            .and_then(|text| parse_size(text.trim()))
            .unwrap_or(1 << 20);
        Machine { cores, cache_bytes }
    }
}

/// `512K`, `2M`, `1024`: a cache size as the kernel prints it.
fn parse_size(text: &str) -> Option<usize> {
    let (digits, scale) = match text.chars().last()? {
        'K' | 'k' => (&text[..text.len() - 1], 1 << 10),
        'M' | 'm' => (&text[..text.len() - 1], 1 << 20),
        _ => (text, 1),
    };
    digits.parse::<usize>().ok().map(|n| n * scale)
}

/// The program's reach per axis (outermost first): the largest offset at
/// which any stencil reads, over all stencils.
pub fn reach(program: &Program, env: &RunEnv) -> Vec<u64> {
    let rank = env.grid_dims().iter().map(Vec::len).max().unwrap_or(1);
    let mut reach = vec![0u64; rank];
    let stencils = program.iterate.as_ref().map_or(0, |it| it.stencils.len());
    for s in 0..stencils {
        for read in Footprint::of_stencil_in(program, env, s).reads {
            let offset = rank - read.axes.len();
            for (a, axis) in read.axes.iter().enumerate() {
                let r = axis.map_or(1, |(lo, hi)| lo.unsigned_abs().max(hi.unsigned_abs()));
                reach[offset + a] = reach[offset + a].max(r);
            }
        }
    }
    reach
}

/// Predicted seconds per iteration of `program` with `knobs` on `machine`.
pub fn predict(program: &Program, env: &RunEnv, knobs: &Knobs, machine: &Machine) -> f64 {
    use crate::analysis::tile::tile_shape;
    use crate::schedule::cpu_tile::{predict_step_seconds, CpuCaches, CpuRequest, ModelInputs};
    let caches = CpuCaches {
        cores: machine.cores,
        ..CpuCaches::here()
    };
    let request = CpuRequest {
        time: knobs.time,
        tile: knobs.cpu_tile.clone(),
        threads: knobs.threads,
        order: knobs.cpu_order,
    };
    if let (Ok(shape), Ok(plan)) = (
        tile_shape(program),
        crate::driver::cpu::plan_on(program, &request, env, &caches),
    ) {
        let threads = plan.threads.unwrap_or(caches.cores).clamp(1, caches.cores);
        let inputs = ModelInputs::new(program, env, &shape);
        return predict_step_seconds(&inputs, plan.tiling.as_ref(), threads, &caches);
    }
    rough(program, env, knobs, machine)
}

/// The rough model, for programs the C back-end cannot time-tile (and for a
/// request it refuses): memory or compute time, whichever is larger, plus a
/// cost per tile.
pub fn rough(program: &Program, env: &RunEnv, knobs: &Knobs, machine: &Machine) -> f64 {
    let dims = env
        .grid_dims()
        .iter()
        .max_by_key(|d| d.iter().product::<usize>())
        .cloned()
        .unwrap_or_else(|| vec![1]);
    let points = dims.iter().product::<usize>() as f64;
    let bytes_per_point: f64 = program
        .fields
        .iter()
        .map(|f| (f.ty.size_bytes() * f.levels()) as f64)
        .sum();
    let stencils = program.iterate.as_ref().map_or(0, |it| it.stencils.len());
    let reads: f64 = (0..stencils)
        .map(|s| {
            Footprint::of_stencil_in(program, env, s)
                .reads
                .iter()
                .map(|r| r.distinct as f64)
                .sum::<f64>()
        })
        .sum::<f64>()
        .max(1.0);
    let threads = knobs
        .threads
        .unwrap_or(machine.cores)
        .clamp(1, machine.cores) as f64;
    // A program the C back-end cannot time-tile runs untiled whatever T says.
    let tileable = crate::analysis::tile::tile_shape(program).is_ok();
    let steps = if tileable {
        f64::from(knobs.time.unwrap_or(1).max(1))
    } else {
        1.0
    };
    let reach = reach(program, env);

    // The tile, outermost first, clamped to the grid (`None`: the whole grid).
    let tile: Vec<f64> = match &knobs.cpu_tile {
        Some(inner_first) => dims
            .iter()
            .enumerate()
            .map(|(a, &d)| {
                let from_inner = dims.len() - 1 - a;
                inner_first
                    .get(from_inner)
                    .map_or(d as f64, |&t| (t as f64).min(d as f64))
            })
            .collect(),
        None => dims.iter().map(|&d| d as f64).collect(),
    };
    let grown: f64 = tile
        .iter()
        .zip(&reach)
        .map(|(t, r)| t + 2.0 * *r as f64 * steps)
        .product();
    let fits = grown * bytes_per_point <= machine.cache_bytes as f64;
    let reuse = if fits { steps } else { 1.0 };
    let bandwidth = BANDWIDTH_PER_CORE * threads;
    let memory = points * bytes_per_point / bandwidth / reuse;
    // Overlapped tiling recomputes, on average, half the grown halo per step.
    let redundancy: f64 = tile
        .iter()
        .zip(&reach)
        .map(|(t, r)| (t + *r as f64 * (steps - 1.0)) / t)
        .product();
    let slow = crate::schedule::cpu_tile::slow_ops_per_point(program);
    let compute =
        points * (reads * SECONDS_PER_READ + slow * SECONDS_PER_SLOW_OP) * redundancy / threads;
    let tiles = points / tile.iter().product::<f64>();
    memory.max(compute) + tiles * SECONDS_PER_TILE / threads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_costed_as_the_back_end_plans_them() {
        use crate::analysis::tile::tile_shape;
        use crate::driver::cpu::plan_on as plan_cpu;
        use crate::schedule::cpu_tile::{predict_step_seconds, CpuCaches, CpuRequest, ModelInputs};
        let text = "int n;\ngrid g[n][n];\nfloat griddata a on g at 0,1;\niterate 100 {\n\
            stencil s {\n[1:n-2][1:n-2] : [1]a[0][0] = 0.2f*([0]a[0][0] + [0]a[-1][0] + [0]a[1][0]\n\
            + [0]a[0][-1] + [0]a[0][1]);\n}\n}\n";
        let program = crate::front::parse_program(crate::source::SourceFile::new("t.sdsl", text))
            .expect("valid program");
        let bindings = crate::ir::env::Bindings {
            params: vec![crate::ir::Value::Int(4096)],
        };
        let env = RunEnv::new(&program, &bindings).expect("bound");
        let machine = Machine {
            cores: 2,
            cache_bytes: 512 << 10,
        };
        let caches = CpuCaches {
            cores: 2,
            ..CpuCaches::here()
        };
        let inputs = ModelInputs::new(&program, &env, &tile_shape(&program).unwrap());
        for (time, tile) in [
            (Some(8), None),
            (Some(4), Some(vec![512, 64])),
            (Some(1), None),
        ] {
            let knobs = Knobs {
                time,
                cpu_tile: tile.clone(),
                threads: Some(2),
                ..Knobs::default()
            };
            let request = CpuRequest {
                time,
                tile,
                threads: Some(2),
                order: None,
            };
            let plan = plan_cpu(&program, &request, &env, &caches).unwrap();
            let expected = predict_step_seconds(&inputs, plan.tiling.as_ref(), 2, &caches);
            assert_eq!(predict(&program, &env, &knobs, &machine), expected);
        }
        // Tiled 8 steps deep is predicted faster than untiled, as the back-end plans.
        let at = |time| {
            let knobs = Knobs {
                time: Some(time),
                threads: Some(2),
                ..Knobs::default()
            };
            predict(&program, &env, &knobs, &machine)
        };
        assert!(at(8) < at(1));
    }

    #[test]
    fn cache_sizes_read_as_the_kernel_prints_them() {
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
    }
}
