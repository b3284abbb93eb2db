//! The tuner's search space: every combination of the knobs a back-end takes,
//! less what cannot run and (unless the search is exhaustive) what the model
//! predicts hopeless, ordered best predicted first.
//!
//! GPU (OpenCL, CUDA): block shapes x points per thread (a run along the
//! streaming axis) x time-tile sizes x staging (`--shm none` or the model's
//! choice) x fusion (when the program has several stencils). CPU (C): tile
//! sizes x time-tile sizes x threads x the order of a tile's steps (the
//! back-end's choice, and the march where it applies: the heuristic takes a
//! march in 3-D only, and in 2-D it won by up to 1.2x on some stencils and
//! lost on others, bench/NOTES.md). A `--config` file replaces the block,
//! tile and time lists by its ranges.
//!
//! Pruned as unable to run: a schedule the scheduler refuses, kernels beyond
//! the device's limits ([`crate::driver::check_fits`]: threads per block,
//! shared memory), and duplicates (a time-tile size clamped to the iteration
//! count or check interval, a CPU tile larger than the grid, two requests that
//! give the same schedule). Pruned as hopeless: a prediction more than
//! [`HOPELESS`] times the best prediction (the GPU model of [`crate::model`],
//! or the rough [`cpu_model`](super::cpu_model)).

use std::collections::{BTreeMap, HashSet};

use crate::analysis::tile::{march_shape, tile_shape, TileOrder};
use crate::exec::backend::Backend;
use crate::exec::options::RunOptions;
use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::lower::Target;
use crate::model::{build, cost, Device};
use crate::schedule::time::requested_time_steps;

use super::config::TuneConfig;
use super::cpu_model::{self, Machine};
use super::Knobs;

/// A candidate predicted slower than this many times the best prediction is
/// pruned (unless the search is exhaustive).
pub const HOPELESS: f64 = 2.0;

/// The values each knob takes; the space is their product.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ranges {
    /// GPU blocks (innermost first); empty: the back-end's choice.
    pub blocks: Vec<Vec<u32>>,
    /// GPU points per thread; empty: the back-end's choice.
    pub tiles: Vec<Vec<u32>>,
    /// GPU vector widths (`--vector`; 1: none); empty: the back-end's choice.
    pub vectors: Vec<u32>,
    /// Staging choices (`None`: the model decides).
    pub shm: Vec<Option<String>>,
    /// Fusion choices.
    pub fuse: Vec<bool>,
    /// Time-tile sizes.
    pub times: Vec<u32>,
    /// CPU tiles (`None`: the back-end's choice).
    pub cpu_tiles: Vec<Option<Vec<u32>>>,
    /// Thread counts (`None`: OpenMP's default).
    pub threads: Vec<Option<u32>>,
    /// Orders of a CPU tile's inner steps (`None`: the back-end's choice).
    pub cpu_orders: Vec<Option<TileOrder>>,
}

/// A configuration to measure, with the model's prediction (seconds per
/// iteration; `None` where the model has nothing to say).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The knobs.
    pub knobs: Knobs,
    /// Predicted seconds per iteration.
    pub predicted: Option<f64>,
}

/// The space after pruning.
#[derive(Clone, Debug, Default)]
pub struct Space {
    /// Configurations considered (the product of the ranges).
    pub considered: usize,
    /// What is left, best predicted first.
    pub candidates: Vec<Candidate>,
    /// Pruned configurations per reason, as whole sentences.
    pub pruned_unrunnable: BTreeMap<String, usize>,
    /// Configurations pruned as hopeless by the model.
    pub pruned_hopeless: usize,
    /// The model's best prediction (seconds per iteration).
    pub best_predicted: Option<f64>,
}

impl Space {
    /// How many were pruned in all.
    pub fn pruned(&self) -> usize {
        self.pruned_unrunnable.values().sum::<usize>() + self.pruned_hopeless
    }
}

/// The rank of the program's stencils (1 when it has none).
pub fn rank(program: &Program) -> usize {
    program
        .iterate
        .as_ref()
        .and_then(|it| {
            it.stencils
                .iter()
                .map(|s| crate::schedule::stencil_rank(program, s))
                .max()
        })
        .unwrap_or(1)
}

fn powers_of_two_up_to(n: u32) -> Vec<u32> {
    let mut out: Vec<u32> = std::iter::successors(Some(1u32), |p| p.checked_mul(2))
        .take_while(|&p| p <= n)
        .collect();
    if !out.contains(&n) {
        out.push(n);
    }
    out
}

/// The default ranges for `backend` on a program of `rank` dimensions.
pub fn default_ranges(
    program: &Program,
    backend: Backend,
    rank: usize,
    machine: &Machine,
) -> Ranges {
    let stencils = program.iterate.as_ref().map_or(0, |it| it.stencils.len());
    let times = vec![1, 2, 3, 4, 6, 8];
    if backend == Backend::C {
        let tiles: &[&[u32]] = match rank {
            1 => &[&[1024], &[4096], &[16384]],
            // Flat (long rows stream well) to square (the least halo per
            // point for time tiling's windows).
            // Innermost first. Rows of 256-2048 points as deep as an L2 window
            // allows: what the back-end's own heuristic finds best for T = 8.
            2 => &[
                &[256, 128],
                &[256, 256],
                &[512, 32],
                &[512, 64],
                &[512, 96],
                &[512, 128],
                &[1024, 32],
                &[1024, 64],
                &[2048, 16],
                &[2048, 32],
            ],
            _ => &[
                &[16, 16, 16],
                &[32, 8, 8],
                &[32, 16, 16],
                &[32, 32, 8],
                &[64, 8, 4],
                &[64, 16, 8],
                &[128, 8, 8],
            ],
        };
        let mut cpu_tiles = vec![None];
        cpu_tiles.extend(tiles.iter().map(|t| Some(t.to_vec())));
        // The streamed wave measured its best at T = 16-32 (bench/NOTES.md).
        let times = [times, vec![16, 32]].concat();
        return Ranges {
            cpu_tiles,
            times,
            threads: powers_of_two_up_to(machine.cores)
                .into_iter()
                .map(Some)
                .collect(),
            shm: vec![None],
            fuse: vec![false],
            cpu_orders: cpu_orders(program),
            ..Ranges::default()
        };
    }
    let blocks: &[&[u32]] = match rank {
        1 => &[&[64], &[128], &[256], &[512], &[1024]],
        2 => &[
            &[32, 4],
            &[32, 8],
            &[32, 16],
            &[64, 4],
            &[64, 8],
            &[128, 2],
            &[128, 4],
            &[256, 1],
        ],
        _ => &[
            &[32, 4, 1],
            &[32, 8, 1],
            &[64, 4, 1],
            &[32, 4, 2],
            &[16, 8, 4],
            &[8, 8, 8],
        ],
    };
    let tiles = crate::model::choose::RUN_LENGTHS
        .iter()
        .map(|&run| {
            let mut tile = vec![1; rank];
            tile[rank - 1] = run;
            tile
        })
        .collect();
    Ranges {
        blocks: blocks.iter().map(|b| b.to_vec()).collect(),
        tiles,
        vectors: crate::schedule::VECTOR_WIDTHS.to_vec(),
        shm: vec![Some("none".into()), None],
        fuse: if stencils > 1 {
            vec![false, true]
        } else {
            vec![false]
        },
        times,
        cpu_tiles: vec![None],
        threads: vec![None],
        cpu_orders: vec![None],
    }
}

/// The back-end's choice of order, and the march where it applies.
fn cpu_orders(program: &Program) -> Vec<Option<TileOrder>> {
    let marches = tile_shape(program).is_ok_and(|shape| march_shape(program, &shape).is_ok());
    if marches {
        vec![None, Some(TileOrder::March)]
    } else {
        vec![None]
    }
}

/// The ranges of a `--config` file: its blocks, tiles and times (on the CPU
/// its space tiles are the C back-end's tiles and its blocks are unused).
pub fn config_ranges(config: &TuneConfig, backend: Backend, machine: &Machine) -> Ranges {
    let product = |ranges: &[super::config::Range]| -> Vec<Vec<u32>> {
        ranges.iter().fold(vec![vec![]], |acc, range| {
            acc.iter()
                .flat_map(|prefix| {
                    range.values().into_iter().map(move |v| {
                        let mut next = prefix.clone();
                        next.push(v);
                        next
                    })
                })
                .collect()
        })
    };
    let times = config.time.values();
    if backend == Backend::C {
        return Ranges {
            cpu_tiles: product(&config.tiles).into_iter().map(Some).collect(),
            times,
            threads: powers_of_two_up_to(machine.cores)
                .into_iter()
                .map(Some)
                .collect(),
            shm: vec![None],
            fuse: vec![false],
            // The file has no spelling for the order: the back-end's choice.
            cpu_orders: vec![None],
            ..Ranges::default()
        };
    }
    Ranges {
        blocks: product(&config.blocks),
        tiles: product(&config.tiles),
        vectors: vec![],
        shm: vec![None],
        fuse: vec![false],
        times,
        cpu_tiles: vec![None],
        threads: vec![None],
        cpu_orders: vec![None],
    }
}

/// Every combination of `ranges`, in a fixed order.
pub fn combinations(ranges: &Ranges) -> Vec<Knobs> {
    fn or_none<T: Clone>(values: &[T]) -> Vec<Option<T>> {
        if values.is_empty() {
            vec![None]
        } else {
            values.iter().cloned().map(Some).collect()
        }
    }
    let mut out = Vec::new();
    for block in or_none(&ranges.blocks) {
        for tile in or_none(&ranges.tiles) {
            for vector in or_none(&ranges.vectors) {
                // A vector stages nothing: `--shm none` is the same schedule.
                let shms: &[Option<String>] = if vector.is_some_and(|w| w > 1) {
                    &ranges.shm[..ranges.shm.len().min(1)]
                } else {
                    &ranges.shm
                };
                for shm in or_none(shms) {
                    for fuse in or_none(&ranges.fuse) {
                        for time in or_none(&ranges.times) {
                            for cpu_tile in or_none(&ranges.cpu_tiles) {
                                // One step per sweep is the untiled code whatever
                                // the tile: measure it once, not once per tile.
                                if time == Some(1) && cpu_tile.as_ref().is_some_and(Option::is_some)
                                {
                                    continue;
                                }
                                for threads in or_none(&ranges.threads) {
                                    for cpu_order in or_none(&ranges.cpu_orders) {
                                        let cpu_order = cpu_order.flatten();
                                        // Untiled, no order applies.
                                        if time == Some(1) && cpu_order.is_some() {
                                            continue;
                                        }
                                        out.push(Knobs {
                                            block: block.clone(),
                                            tile: tile.clone(),
                                            vector: vector.filter(|&w| w > 1),
                                            shm: shm.clone().flatten(),
                                            fuse: fuse.unwrap_or(false),
                                            time,
                                            cpu_tile: cpu_tile.clone().flatten(),
                                            threads: threads.flatten(),
                                            cpu_order,
                                        });
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// What the space is measured for.
#[derive(Clone, Copy, Debug)]
pub enum Family<'a> {
    /// A GPU back-end: the kernels' target and the model's device.
    Gpu(Target, &'a Device),
    /// The C back-end on this machine.
    Cpu(Machine),
}

/// Prunes and orders the combinations of `ranges` for `program` with `env`;
/// `base` holds the options every candidate shares (`--fma`, `--results`).
/// With `exhaustive`, only what cannot run is pruned.
pub fn build_space(
    program: &Program,
    env: &RunEnv,
    family: Family<'_>,
    ranges: &Ranges,
    base: &RunOptions,
    exhaustive: bool,
) -> Space {
    let all = combinations(ranges);
    let mut space = Space {
        considered: all.len(),
        ..Space::default()
    };
    let mut seen = HashSet::new();
    let mut kept = Vec::new();
    for knobs in all {
        match assess(program, env, family, &knobs, base) {
            Err(reason) => *space.pruned_unrunnable.entry(reason).or_default() += 1,
            Ok((identity, predicted)) => {
                if seen.insert(identity) {
                    kept.push(Candidate { knobs, predicted });
                } else {
                    *space
                        .pruned_unrunnable
                        .entry("the same schedule as an earlier configuration (a CPU tile larger than the grid is the whole grid; the model chose the same staging)".into())
                        .or_default() += 1;
                }
            }
        }
    }
    space.best_predicted = kept
        .iter()
        .filter_map(|c| c.predicted)
        .min_by(f64::total_cmp);
    if let (Some(best), false) = (space.best_predicted, exhaustive) {
        let before = kept.len();
        kept.retain(|c| c.predicted.is_none_or(|p| p <= best * HOPELESS));
        space.pruned_hopeless = before - kept.len();
    }
    // Best predicted first; unpredicted ones last, in their original order.
    kept.sort_by(|a, b| match (a.predicted, b.predicted) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    space.candidates = kept;
    space
}

/// Whether `knobs` can run: `Err(reason)` if not; else a text that is equal
/// for two knobs with the same effect, and the prediction.
fn assess(
    program: &Program,
    env: &RunEnv,
    family: Family<'_>,
    knobs: &Knobs,
    base: &RunOptions,
) -> Result<(String, Option<f64>), String> {
    let options = knobs.apply(base);
    let request = options.schedule_request();
    // A time-tile size past the iteration count or the check interval is
    // clamped: the same as the clamped size.
    let steps = requested_time_steps(program, &request, env)
        .map_err(|d| d.one_line(&program.source))?
        .map(|t| t.steps);
    if steps.is_some() && steps != knobs.time {
        return Err(format!(
            "a time-tile size above the iteration count{} ({} iterations{}): the same as a \
             smaller one",
            if env.every().is_some() {
                " or check interval"
            } else {
                ""
            },
            env.max_iters(),
            env.every()
                .map_or_else(String::new, |e| format!(", a check every {e}"))
        ));
    }
    match family {
        Family::Cpu(machine) => {
            let dims = env.grid_dims().iter().max_by_key(|d| d.len()).cloned();
            let mut effective = knobs.clone();
            if let (Some(tile), Some(dims)) = (&knobs.cpu_tile, dims) {
                if tile.len() != dims.len() {
                    return Err(format!(
                        "a CPU tile of {} sizes for a grid of {} axes",
                        tile.len(),
                        dims.len()
                    ));
                }
                // A tile larger than the grid is the whole grid along that
                // axis; a march covers the outermost axis whole.
                let marches = knobs.cpu_order == Some(TileOrder::March);
                effective.cpu_tile = Some(
                    tile.iter()
                        .zip(dims.iter().rev())
                        .enumerate()
                        .map(|(axis, (&t, &d))| {
                            if marches && axis + 1 == dims.len() {
                                d as u32
                            } else {
                                t.min(d as u32)
                            }
                        })
                        .collect(),
                );
            }
            let predicted = cpu_model::predict(program, env, &effective, &machine);
            Ok((format!("{effective:?}"), Some(predicted)))
        }
        Family::Gpu(target, device) => {
            let choice =
                crate::driver::choose_gpu(program, &request, Some(env), target, device, None)
                    .map_err(|e| format!("refused by the scheduler: {}", first_clause(&e.0)))?;
            let lowered = crate::driver::lower_gpu(program, &choice.schedule, target, None);
            crate::driver::check_fits(&lowered.module, &device.limits()).map_err(|e| {
                format!("beyond the {}'s limits: {}", device.name, limit_kind(&e.0))
            })?;
            let mut predicted = 0.0;
            for spec in build::specs(program, &choice.schedule, &lowered, env) {
                match cost(&spec, device, None) {
                    Ok(c) => predicted += c.time * spec.per_iteration,
                    Err(why) => {
                        return Err(format!(
                            "beyond the {}'s limits: {}",
                            device.name,
                            first_clause(&why.to_string())
                        ))
                    }
                }
            }
            // A time-tiled candidate costs what the time-tiling model predicts.
            if let Some(time) = &choice.schedule.time {
                let rows = crate::model::time_tile::time_table(
                    program,
                    &choice.schedule,
                    env,
                    target,
                    device,
                    time.steps,
                );
                if let Some(ms) = rows
                    .ok()
                    .and_then(|r| r.last().and_then(|r| r.iteration_ms))
                {
                    predicted = ms * 1e-3;
                }
            }
            let identity = format!("{:?} time {:?}", choice.schedule, steps);
            Ok((identity, Some(predicted)))
        }
    }
}

/// The kind of limit a [`crate::driver::check_fits`] message names.
fn limit_kind(message: &str) -> &'static str {
    if message.contains("shared memory") {
        "too much shared memory per block"
    } else {
        "too many threads per block"
    }
}

/// The text before the first `;` (the reason without the advice).
fn first_clause(message: &str) -> String {
    message
        .split(';')
        .next()
        .unwrap_or(message)
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::env::Bindings;
    use crate::ir::Value;

    fn j2d(n: i32, steps: i32) -> (Program, RunEnv) {
        let text = "int n;\nint steps;\ngrid g[n][n];\nfloat griddata a on g at 0,1;\n\
            iterate steps {\n  stencil s {\n    [1:n-2][1:n-2] : [1]a[0][0] = 0.25f*([0]a[-1][0] \
            + [0]a[1][0] + [0]a[0][-1] + [0]a[0][1]);\n  }\n}\n";
        let program = crate::front::parse_program(crate::source::SourceFile::new("t.sdsl", text))
            .expect("valid");
        let env = RunEnv::new(
            &program,
            &Bindings {
                params: vec![Value::Int(n), Value::Int(steps)],
            },
        )
        .expect("bound");
        (program, env)
    }

    const MACHINE: Machine = Machine {
        cores: 2,
        cache_bytes: 1 << 20,
    };

    #[test]
    fn cpu_space_counts_and_prunes() {
        let (program, env) = j2d(4096, 4);
        let ranges = default_ranges(&program, Backend::C, 2, &MACHINE);
        let base = RunOptions::default();
        let full = build_space(&program, &env, Family::Cpu(MACHINE), &ranges, &base, true);
        // 11 tiles x 8 times x 2 orders (the back-end's, the march) x 2
        // thread counts, but T = 1 (untiled whatever the tile and order) once
        // per thread count; times 6, 8, 16 and 32 exceed 4 iterations.
        assert_eq!(full.considered, (11 * 7 * 2 + 1) * 2);
        let clamped: usize = full
            .pruned_unrunnable
            .iter()
            .filter(|(k, _)| k.contains("time-tile size above"))
            .map(|(_, v)| v)
            .sum();
        assert_eq!(clamped, 11 * 4 * 2 * 2);
        // Times 1, 2, 3 and 4 remain, T = 1 once. A march covers the
        // outermost axis whole, so its 10 tiles are 4 row lengths (256, 512,
        // 1024, 2048): 6 are the same schedule as another.
        let marches = 11 - 6;
        assert_eq!(full.candidates.len(), ((11 + marches) * 3 + 1) * 2);
        assert_eq!(full.pruned_hopeless, 0);
        let pruned = build_space(&program, &env, Family::Cpu(MACHINE), &ranges, &base, false);
        assert_eq!(
            pruned.candidates.len() + pruned.pruned_hopeless,
            full.candidates.len()
        );
        let best = pruned.best_predicted.unwrap();
        assert!(pruned
            .candidates
            .iter()
            .all(|c| c.predicted.unwrap() <= best * HOPELESS));
        // Best predicted first.
        assert_eq!(pruned.candidates[0].predicted, Some(best));
    }

    #[test]
    fn the_cpu_space_tries_the_march_where_it_applies() {
        let (program, env) = j2d(4096, 8);
        let ranges = default_ranges(&program, Backend::C, 2, &MACHINE);
        assert_eq!(ranges.cpu_orders, vec![None, Some(TileOrder::March)]);
        let all = combinations(&ranges);
        let march = all
            .iter()
            .find(|k| k.cpu_order == Some(TileOrder::March))
            .expect("a march");
        assert!(
            march.flags().contains("--cpu-order march"),
            "{}",
            march.flags()
        );
        assert!(march.time.is_some_and(|t| t > 1));
        assert!(!all
            .iter()
            .any(|k| k.time == Some(1) && k.cpu_order.is_some()));
        // Its prediction is the back-end's model of the march it plans.
        let predicted = cpu_model::predict(&program, &env, march, &MACHINE);
        let plain = Knobs {
            cpu_order: None,
            ..march.clone()
        };
        assert_ne!(
            predicted,
            cpu_model::predict(&program, &env, &plain, &MACHINE)
        );
        // No march for a program it does not apply to (1-D), nor on a GPU.
        let text = "int n;\ngrid g[n];\nfloat griddata a on g at 0,1;\n\
            iterate 4 {\n  stencil s {\n    [1:n-2] : [1]a[0] = 0.5f*([0]a[-1] + [0]a[1]);\n  }\n}\n";
        let line = crate::front::parse_program(crate::source::SourceFile::new("l.sdsl", text))
            .expect("valid");
        assert_eq!(
            default_ranges(&line, Backend::C, 1, &MACHINE).cpu_orders,
            vec![None]
        );
        assert_eq!(
            default_ranges(&program, Backend::OpenCl, 2, &MACHINE).cpu_orders,
            vec![None]
        );
    }

    #[test]
    fn gpu_space_prunes_what_the_device_refuses() {
        let (program, env) = j2d(256, 3);
        let device = Device::default_device();
        let ranges = Ranges {
            blocks: vec![vec![32, 8], vec![64, 32]],
            tiles: vec![vec![1, 1]],
            times: vec![1],
            ..Ranges::default()
        };
        let space = build_space(
            &program,
            &env,
            Family::Gpu(Target::Cuda, device),
            &ranges,
            &RunOptions::default(),
            true,
        );
        assert_eq!(space.considered, 2);
        assert_eq!(space.candidates.len(), 1);
        let (reason, count) = space.pruned_unrunnable.iter().next().unwrap();
        assert!(reason.contains("too many threads per block"), "{reason}");
        assert_eq!(*count, 1);
    }

    #[test]
    fn the_gpu_space_tries_vectors_without_staging() {
        let (program, env) = j2d(256, 3);
        let device = Device::default_device();
        let ranges = Ranges {
            blocks: vec![vec![32, 8]],
            tiles: vec![vec![1, 2]],
            vectors: crate::schedule::VECTOR_WIDTHS.to_vec(),
            shm: vec![Some("none".into()), None],
            times: vec![1],
            ..Ranges::default()
        };
        // Scalar: `--shm none` and the model's staging; vectors of 2 and 4:
        // `--shm none` alone (a vector stages nothing).
        let all = combinations(&ranges);
        assert_eq!(all.len(), 4);
        let flags: Vec<String> = all.iter().map(Knobs::flags).collect();
        assert!(
            flags.contains(&"--block 32,8 --tile 1,2 --vector 4 --shm none --time 1".to_string()),
            "{flags:?}"
        );
        let space = build_space(
            &program,
            &env,
            Family::Gpu(Target::Cuda, device),
            &ranges,
            &RunOptions::default(),
            true,
        );
        assert_eq!(
            space.candidates.len() + space.pruned_unrunnable.values().sum::<usize>(),
            4
        );
        assert!(space
            .candidates
            .iter()
            .any(|c| c.knobs.vector == Some(4) && c.predicted.is_some()));
        // Tuned knobs carry the width into a run.
        let tuned = Knobs {
            vector: Some(4),
            ..Knobs::default()
        };
        assert_eq!(tuned.fill(&RunOptions::default()).vector, Some(4));
    }

    #[test]
    fn a_config_file_gives_its_product() {
        let text = "-b overtile\n-O3\n2\n32 64 32\n4 8 4\n1 1 1\n1 2 1\n1 2 1\n";
        let config =
            super::super::config::parse(crate::source::SourceFile::new("c.conf", text)).unwrap();
        let ranges = config_ranges(&config, Backend::OpenCl, &MACHINE);
        assert_eq!(combinations(&ranges).len(), config.size());
        assert_eq!(config.size(), 16);
    }
}
