//! Choosing the C back-end's plan (threads, time tiling, tile sizes and the
//! order of a tile's inner steps): what `--time`, `--cpu-tile`, `--threads`,
//! `--cpu-order` and the pragma's `time:` fix, the rest chosen by the CPU
//! model for this machine's caches where every parameter's value is known.

use crate::analysis::tile::{march_shape, tile_shape, CpuPlan, CpuTiling, TileOrder};
use crate::diag::Diagnostic;
use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::schedule::cpu_tile::{plan_cpu, CpuCaches, CpuRequest};

/// The plan for running `program` under `request` on this machine. With
/// `env`, what the request leaves open is chosen by the model
/// (`schedule::cpu_tile::plan_cpu`) for this machine's caches; a pragma
/// `time:` naming an unknown identifier is then a diagnostic. Without the
/// sizes the model cannot choose: the plan is what the request asks (tiles
/// of 32 points per axis where `--cpu-tile` does not say; the wavefront and
/// the march only where asked and where they apply). What was refused is in
/// the plan's notes.
pub fn plan(
    program: &Program,
    request: &CpuRequest,
    env: Option<&RunEnv>,
) -> Result<CpuPlan, Diagnostic> {
    match env {
        Some(env) => plan_on(program, request, env, &CpuCaches::here()),
        None => Ok(plan_without_sizes(program, request)),
    }
}

/// The plan for running `program` with `env` under `request` on a machine
/// with `caches` (another machine's, for the tuner's model): the request where
/// it says, the model's choice elsewhere.
pub fn plan_on(
    program: &Program,
    request: &CpuRequest,
    env: &RunEnv,
    caches: &CpuCaches,
) -> Result<CpuPlan, Diagnostic> {
    plan_cpu(program, request, env, caches)
}

/// [`plan`] without the sizes.
fn plan_without_sizes(program: &Program, request: &CpuRequest) -> CpuPlan {
    let mut plan = CpuPlan {
        threads: request.threads,
        ..CpuPlan::default()
    };
    let steps = request.time.unwrap_or(1);
    match tile_shape(program) {
        Ok(shape) if steps > 1 => {
            let tile = (0..shape.rank)
                .map(|a| {
                    let from_inner = shape.rank - 1 - a;
                    request
                        .tile
                        .as_ref()
                        .and_then(|t| t.get(from_inner))
                        .map_or(32, |&t| u64::from(t.max(1)))
                })
                .collect();
            let order = match request.order {
                Some(TileOrder::Wavefront) if shape.wavefront().is_ok() => TileOrder::Wavefront,
                Some(TileOrder::March) if march_shape(program, &shape).is_ok() => TileOrder::March,
                _ => TileOrder::Levels,
            };
            plan.tiling = Some(CpuTiling { steps, tile, order });
        }
        Err(construct) if steps > 1 => plan.notes.push(format!(
            "`--time {steps}` ignored: `{}` cannot be time-tiled because {construct}",
            program.name
        )),
        _ => {}
    }
    plan
}
