//! The schedule heuristic, decided by the model: for every choice the user and
//! the region's pragma leave open (shared-memory staging, block shape, points
//! per thread), lower the program under each candidate, cost every stencil
//! launch on the device, and keep per stencil the fastest prediction.
//!
//! The candidates of a request are a superset of those of the same request
//! with `--shm none` (and include `--shm none` at the default shape), and the
//! fastest prediction wins, so the choice is never predicted slower than
//! either. Candidates are tried simplest first and a later one must be
//! faster by more than rounding ([`TIE`]) to win, so a tie keeps the simpler
//! kernel. Registers are the model's estimate
//! ([`estimated_registers`](crate::model::estimated_registers): more for longer
//! runs of points per thread, so a run that would cut occupancy loses):
//! running ptxas on every candidate would cost seconds; `stencilc explain`
//! shows the chosen kernels with ptxas's figures. `--ptxas-rank K` runs it on
//! the `K` fastest of each stencil and ranks those on its registers
//! ([`crate::model::rank`]).

use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::lower::{lower, Target};
use crate::model::rank::{self, Registers};
use crate::model::{build, cost, estimated_registers, Device, KernelSpec, Role};
use crate::schedule::{
    hinted_shape, FieldPlacement, Schedule, ScheduleError, ScheduleRequest, ShmRequest,
    StencilSchedule, VECTOR_WIDTHS,
};

pub use crate::model::rank::TIE;

/// Points per thread the heuristic tries along the streaming axis (y in 2-D,
/// z in 3-D). 16 pays where the kernel is bound by instruction issue: the 7×7
/// blur loads (16 + 6) × 7 values for 16 points, (8 + 6) × 7 for 8.
pub const RUN_LENGTHS: [u32; 5] = [1, 2, 4, 8, 16];

/// The chosen schedule and, per stencil group, why.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The schedule to run.
    pub schedule: Schedule,
    /// One sentence per stencil (or fused group) saying what was chosen and
    /// what it was compared with, for `--verbose` and `stencilc explain`.
    pub reasons: Vec<String>,
}

/// One candidate request with its predicted time per stencil.
struct Candidate {
    request: ScheduleRequest,
    schedule: Schedule,
    /// Predicted seconds per sweep of each stencil (fused members after the
    /// first: 0), `None` where the candidate does not fit the device.
    times: Vec<Option<f64>>,
    /// The specs of each stencil's launches (for `--ptxas-rank`).
    specs: Vec<Vec<KernelSpec>>,
}

/// The schedule for `program` under `request` on `device`: what the request
/// and the pragma fix is kept; the rest is chosen by the model, the time-tile
/// size last (with the chosen blocks): `--time` or the pragma's, else the `T`
/// of 1..=8 the model predicts fastest ([`crate::model::time_tile`]).
pub fn choose(
    program: &Program,
    request: &ScheduleRequest,
    env: &RunEnv,
    target: Target,
    device: &Device,
) -> Result<Choice, ScheduleError> {
    choose_ranked(program, request, env, target, device, None)
}

/// [`choose`], with `registers` compiling candidates for `--ptxas-rank`
/// ([`ScheduleRequest::ptxas_rank`], refused without it): the stencils'
/// schedules are then ranked on ptxas's registers ([`crate::model::rank`]).
pub fn choose_ranked(
    program: &Program,
    request: &ScheduleRequest,
    env: &RunEnv,
    target: Target,
    device: &Device,
    registers: Option<Registers<'_>>,
) -> Result<Choice, ScheduleError> {
    // The pragma's `vector:`, `shm:` and `fuse:` count as asked for.
    let merged = crate::schedule::with_pragma(program, request)
        .map_err(|d| ScheduleError(d.one_line(&program.source)))?;
    let request = &merged;
    if request.ptxas_rank.is_some() {
        if target != Target::Cuda {
            return Err(ScheduleError(
                "--ptxas-rank ranks CUDA kernels on ptxas's registers: leave it out for OpenCL"
                    .into(),
            ));
        }
        if registers.is_none() {
            return Err(ScheduleError(
                "--ptxas-rank needs the kernels compiled, which this command does not do".into(),
            ));
        }
    }
    let mut choice = choose_space(program, request, env, target, device, registers)?;
    let schedule = &mut choice.schedule;
    if program.iterate.is_none() || schedule.stencils.is_empty() {
        return Ok(choice);
    }
    let requested = crate::schedule::time::requested_time_steps(program, request, env)
        .map_err(|d| ScheduleError(d.one_line(&program.source)))?;
    match requested {
        Some(asked) => {
            // Planned again with the blocks chosen above.
            schedule.time_notes = asked.notes;
            schedule.set_time_steps(program, env, asked.steps);
        }
        None => {
            if let Some(why) = crate::model::time_tile::untileable(program, env) {
                choice.reasons.push(format!("time tiling: none: {why}"));
                return Ok(choice);
            }
            let limit = crate::model::time_tile::step_limit(env);
            let max = crate::model::time_tile::MAX_TIME_STEPS.min(limit.max(1) as u32);
            match crate::model::time_tile::time_table(program, schedule, env, target, device, max) {
                Ok(rows) => {
                    let (steps, why) = crate::model::time_tile::pick(&rows, limit, device);
                    if steps > 1 {
                        schedule.set_time_steps(program, env, steps);
                    }
                    choice.reasons.push(why);
                }
                Err(why) => choice
                    .reasons
                    .push(format!("time tiling: not predicted ({why}); untiled")),
            }
        }
    }
    Ok(choice)
}

/// [`choose`] without the time-tile size: staging, blocks and runs.
fn choose_space(
    program: &Program,
    request: &ScheduleRequest,
    env: &RunEnv,
    target: Target,
    device: &Device,
    registers: Option<Registers<'_>>,
) -> Result<Choice, ScheduleError> {
    let mut base = Schedule::for_run(program, request, env)?;
    // `--fuse`: a halo-recompute fusion stays only where the model predicts a gain.
    crate::model::fusion::choose_recompute(program, &mut base, request, env, device, target);
    let Some(iterate) = &program.iterate else {
        return Ok(Choice {
            schedule: base,
            reasons: vec![],
        });
    };
    if iterate.stencils.is_empty() {
        return Ok(Choice {
            schedule: base,
            reasons: vec![],
        });
    }
    let hinted =
        hinted_shape(program, request).map_err(|d| ScheduleError(d.one_line(&program.source)))?;
    let block_free = request.block.is_none() && hinted.block.is_none();
    let tile_free = request.tile.is_none() && hinted.tile.is_none();
    let shm_free = request.shm == ShmRequest::Auto;
    if !block_free && !tile_free && !shm_free {
        return Ok(Choice {
            schedule: base,
            reasons: vec!["schedule as asked (--block, --tile and --shm given)".to_string()],
        });
    }
    let rank = iterate
        .stencils
        .iter()
        .map(|s| crate::schedule::stencil_rank(program, s))
        .max()
        .unwrap_or(1);

    // A vector replaces the x of the thread's points: it is chosen only
    // where `--tile` is left open too.
    let vector_free = request.vector.is_none() && tile_free;
    let candidates: Vec<Candidate> = requests(request, rank, block_free, tile_free, shm_free)
        .into_iter()
        .flat_map(|r| with_vectors(r, vector_free, env))
        .filter_map(|request| evaluate(program, request, env, target, device))
        .collect();
    let n = iterate.stencils.len();
    let mut stencils: Vec<StencilSchedule> = base.stencils.clone();
    let mut reasons = Vec::new();
    // `--ptxas-rank`: each candidate's registers, compiled once.
    let mut ranker = match (request.ptxas_rank, registers) {
        (Some(k), Some(registers)) => Some(rank::Ranker {
            program,
            target,
            device,
            k,
            registers,
            compiled: std::collections::BTreeMap::new(),
        }),
        _ => None,
    };
    let mut s = 0;
    while s < n {
        let mut end = s + 1;
        while end < n && base.stencil(end - 1).fuse_with_next {
            end += 1;
        }
        // Candidates whose grouping matches the base's: a candidate that fused
        // differently is not comparable (`--fuse` decides per shape). The
        // stencil before the group counts too: where it fused into this one,
        // this one has no launch of its own and a time of 0.
        let comparable = candidates.iter().enumerate().filter(|(_, c)| {
            (s.saturating_sub(1)..end)
                .all(|i| c.schedule.stencil(i).fuse_with_next == base.stencil(i).fuse_with_next)
        });
        let mut best: Option<(&Candidate, f64)> = None;
        let mut baseline: Option<f64> = None;
        let mut best_staged: Option<(&Candidate, f64)> = None;
        let mut scored: Vec<(usize, &Candidate, f64)> = Vec::new();
        for (index, c) in comparable {
            let Some(t) = c.times[s] else { continue };
            scored.push((index, c, t));
            if c.request.shm == ShmRequest::None
                && c.request.block == request.block
                && c.request.tile == request.tile
            {
                baseline.get_or_insert(t);
            }
            if stages(c.schedule.stencil(s)) && best_staged.is_none_or(|(_, b)| t < b) {
                best_staged = Some((c, t));
            }
            if best.is_none_or(|(_, b)| t < b * (1.0 - TIE)) {
                best = Some((c, t));
            }
        }
        let name = iterate.stencils[s..end]
            .iter()
            .map(|st| st.name.as_str())
            .collect::<Vec<_>>()
            .join("+");
        let mut ranking = String::new();
        if let Some(ranker) = ranker.as_mut() {
            if let Some((c, t, why)) = ranked_on_ptxas(ranker, &mut scored, s..end)? {
                best = Some((c, t));
                ranking = why;
            }
        }
        match best {
            Some((c, t)) => {
                for (i, slot) in stencils.iter_mut().enumerate().take(end).skip(s) {
                    *slot = c.schedule.stencil(i).clone();
                }
                reasons.push(
                    reason(
                        program,
                        &name,
                        c.schedule.stencil(s),
                        t,
                        baseline,
                        best_staged
                            .filter(|(b, _)| !std::ptr::eq(*b, c))
                            .map(|(_, t)| t),
                        device,
                    ) + &ranking,
                );
            }
            None => reasons.push(format!(
                "{name}: the static heuristic's schedule (no candidate fits the {})",
                device.name
            )),
        }
        s = end;
    }
    Ok(Choice {
        schedule: Schedule { stencils, ..base },
        reasons,
    })
}

/// `--ptxas-rank`: of a group's `scored` candidates (`(index, candidate,
/// predicted time)`), the one the ranking on ptxas's registers keeps, with
/// its time and why.
fn ranked_on_ptxas<'c>(
    ranker: &mut rank::Ranker<'_>,
    scored: &mut [(usize, &'c Candidate, f64)],
    group: std::ops::Range<usize>,
) -> Result<Option<(&'c Candidate, f64, String)>, ScheduleError> {
    let s = group.start;
    // Fastest first by the model; a stable sort keeps ties simplest
    // first. The K fastest, and the K fastest unstaged: those are
    // what `--shm none` would rank, so the schedule kept is never
    // slower by the ranking's equations than `--shm none`'s.
    scored.sort_by(|a, b| a.2.total_cmp(&b.2));
    let staged: Vec<bool> = scored
        .iter()
        .map(|(_, c, _)| stages(c.schedule.stencil(s)))
        .collect();
    let picked: Vec<(usize, &Candidate, f64)> = to_rank(&staged, ranker.k as usize)
        .into_iter()
        .map(|i| scored[i])
        .collect();
    let ranked: Vec<rank::Ranked<'_>> = picked
        .iter()
        .map(|&(index, c, _)| rank::Ranked {
            index,
            schedule: &c.schedule,
            specs: &c.specs,
        })
        .collect();
    if ranked.is_empty() {
        return Ok(None);
    }
    let kept = ranker.keep(&ranked, group)?;
    let (_, c, t) = picked[kept.chosen];
    Ok(Some((c, t, kept.why)))
}

/// Of candidates sorted fastest first (`staged[i]`: whether the `i`-th
/// stages a level), the positions `--ptxas-rank K` compiles: the first `k`,
/// and the first `k` that stage nothing.
fn to_rank(staged: &[bool], k: usize) -> Vec<usize> {
    let unstaged: Vec<usize> = (0..staged.len()).filter(|&i| !staged[i]).take(k).collect();
    (0..staged.len())
        .filter(|&i| i < k || unstaged.contains(&i))
        .collect()
}

/// Whether a stencil's schedule stages any level in shared memory.
fn stages(schedule: &StencilSchedule) -> bool {
    schedule
        .fields
        .values()
        .any(|p| *p == FieldPlacement::SharedTile)
}

/// `request`, then, where the vector width is left open and `request` stages
/// nothing, the same with vectors of 2 and 4 points ([`VECTOR_WIDTHS`]) as
/// long as every grid's x size is a multiple of the width: otherwise every
/// thread of the kernel would take its edge path, which the model does not
/// cost. A width too wide for the fields fails to schedule and drops out.
fn with_vectors(request: ScheduleRequest, vector_free: bool, env: &RunEnv) -> Vec<ScheduleRequest> {
    let mut out = vec![request.clone()];
    if !vector_free || request.shm != ShmRequest::None {
        return out;
    }
    for width in VECTOR_WIDTHS.into_iter().filter(|&w| w > 1) {
        let aligned = env
            .grid_dims()
            .iter()
            .all(|dims| dims.last().is_some_and(|&x| x % width as usize == 0));
        if aligned {
            out.push(ScheduleRequest {
                vector: Some(width),
                ..request.clone()
            });
        }
    }
    out
}

/// The candidate requests, simplest first: `--shm none` at the default shape
/// leads, so a tie keeps it.
fn requests(
    request: &ScheduleRequest,
    rank: usize,
    block_free: bool,
    tile_free: bool,
    shm_free: bool,
) -> Vec<ScheduleRequest> {
    let shms = if shm_free {
        vec![ShmRequest::None, ShmRequest::Auto]
    } else {
        vec![request.shm.clone()]
    };
    let mut blocks: Vec<Option<Vec<u32>>> = vec![request.block.clone()];
    if block_free {
        let more: &[&[u32]] = match rank {
            1 => &[&[128], &[512]],
            2 => &[&[64, 4], &[32, 4], &[128, 2]],
            _ => &[&[32, 8, 1], &[64, 4, 1], &[32, 4, 1]],
        };
        blocks.extend(more.iter().map(|b| Some(b.to_vec())));
    }
    let mut tiles: Vec<Option<Vec<u32>>> = vec![request.tile.clone()];
    if tile_free && rank >= 2 {
        for run in RUN_LENGTHS.into_iter().skip(1) {
            let mut tile = vec![1; rank];
            tile[rank - 1] = run;
            tiles.push(Some(tile));
        }
    }
    let mut out = Vec::new();
    for tile in &tiles {
        for block in &blocks {
            for shm in &shms {
                out.push(ScheduleRequest {
                    block: block.clone(),
                    tile: tile.clone(),
                    shm: shm.clone(),
                    ..request.clone()
                });
            }
        }
    }
    out
}

/// Lowers and costs one candidate; `None` when it is not a valid schedule.
fn evaluate(
    program: &Program,
    request: ScheduleRequest,
    env: &RunEnv,
    target: Target,
    device: &Device,
) -> Option<Candidate> {
    let mut schedule = Schedule::for_run(program, &request, env).ok()?;
    crate::model::fusion::choose_recompute(program, &mut schedule, &request, env, device, target);
    let lowered = lower(program, &schedule, target);
    let fits = crate::lower::check_limits(&lowered.module, &device.limits()).is_ok();
    let n = schedule.stencils.len();
    let mut times = vec![if fits { Some(0.0) } else { None }; n];
    let mut kept: Vec<Vec<KernelSpec>> = vec![Vec::new(); n];
    if fits {
        let specs = build::specs(program, &schedule, &lowered, env);
        // The stencil specs come first, one per launch in the plan's order.
        let mut stencil_specs = specs
            .iter()
            .filter(|spec| matches!(spec.role, Role::Stencil(_)));
        for (s, launches) in lowered.plan.stencils.iter().enumerate() {
            for _ in launches {
                let spec = stencil_specs.next()?;
                kept[s].push(spec.clone());
                times[s] = match (
                    times[s],
                    cost(spec, device, Some(estimated_registers(spec))),
                ) {
                    (Some(sum), Ok(c)) => Some(sum + c.time),
                    _ => None,
                };
            }
        }
    }
    Some(Candidate {
        request,
        schedule,
        times,
        specs: kept,
    })
}

/// One sentence: what was chosen, predicted how fast, against what.
fn reason(
    program: &Program,
    name: &str,
    chosen: &StencilSchedule,
    time: f64,
    baseline: Option<f64>,
    staged: Option<f64>,
    device: &Device,
) -> String {
    let join = |v: &[u32; 3]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let tiles: Vec<String> = chosen
        .fields
        .iter()
        .filter(|(_, p)| **p == FieldPlacement::SharedTile)
        .map(|((f, t), _)| format!("[{t}]{}", program.fields[f.0].name))
        .collect();
    let staging = if tiles.is_empty() {
        "no shared tiles".to_string()
    } else {
        format!("shared tiles {}", tiles.join(" "))
    };
    let vector = if chosen.vector > 1 {
        format!(" vector {}", chosen.vector)
    } else {
        String::new()
    };
    let mut text = format!(
        "{name}: block {} tile {}{vector}, {staging}: predicted {:.1} us per sweep on the {}",
        join(&chosen.block),
        join(&chosen.tile),
        time * 1e6,
        device.name
    );
    if let Some(b) = baseline {
        text.push_str(&format!(
            "; {:.2}x `--shm none` at the default shape ({:.1} us)",
            b / time,
            b * 1e6
        ));
    }
    if let Some(s) = staged {
        text.push_str(&format!(
            "; the best staged candidate {:.1} us ({:.2}x slower)",
            s * 1e6,
            s / time
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::env::RunEnv;

    fn program(text: &str) -> Program {
        let source = crate::source::SourceFile::new("test.sdsl", text);
        crate::front::parse_program(source).expect("valid program")
    }

    /// The program's one parameter `n`, bound to `n`.
    fn bound(program: &Program, n: i32) -> RunEnv {
        let bindings = crate::ir::env::Bindings {
            params: vec![crate::ir::Value::Int(n)],
        };
        RunEnv::new(program, &bindings).expect("bound")
    }

    const J2D9PT: &str = "int n;\ngrid g[n][n];\nfloat griddata a on g at 0,1;\n\
        iterate 2 {\n  stencil s {\n    [2:n-3][2:n-3] : [1]a[0][0] = 0.1f*([0]a[-2][0] + [0]a[-1][0] + [0]a[0][0]\n\
        + [0]a[1][0] + [0]a[2][0] + [0]a[0][-2] + [0]a[0][-1] + [0]a[0][1] + [0]a[0][2]);\n  }\n}\n";

    #[test]
    fn the_choice_is_never_predicted_slower_than_shm_none() {
        let p = program(J2D9PT);
        let env = bound(&p, 4096);
        let device = Device::default_device();
        let choice = choose(&p, &ScheduleRequest::default(), &env, Target::Cuda, device).unwrap();
        let none = ScheduleRequest {
            shm: ShmRequest::None,
            ..ScheduleRequest::default()
        };
        let time = |schedule: &Schedule| {
            let lowered = lower(&p, schedule, Target::Cuda);
            build::specs(&p, schedule, &lowered, &env)
                .iter()
                .map(|s| cost(s, device, None).unwrap().time)
                .sum::<f64>()
        };
        let plain = Schedule::for_run(&p, &none, &env).unwrap();
        assert!(time(&choice.schedule) <= time(&plain) * (1.0 + 1e-9));
        // Nor slower than what the model chooses when asked for `--shm none`.
        let unstaged = choose(&p, &none, &env, Target::Cuda, device).unwrap();
        assert!(time(&choice.schedule) <= time(&unstaged.schedule) * (1.0 + 1e-9));
        assert!(!stages(unstaged.schedule.stencil(0)));
        // The space's reason, then time tiling's.
        assert_eq!(choice.reasons.len(), 2);
        assert!(
            choice.reasons[1].starts_with("time tiling: "),
            "{}",
            choice.reasons[1]
        );
        assert!(
            choice.reasons[0].starts_with("s: block "),
            "{}",
            choice.reasons[0]
        );
        assert!(
            choice.reasons[0].contains("`--shm none`"),
            "{}",
            choice.reasons[0]
        );
    }

    #[test]
    fn what_the_request_fixes_is_kept() {
        let p = program(J2D9PT);
        let env = bound(&p, 512);
        let request = ScheduleRequest {
            block: Some(vec![16, 16]),
            ..ScheduleRequest::default()
        };
        let choice = choose(&p, &request, &env, Target::Cuda, Device::default_device()).unwrap();
        assert_eq!(choice.schedule.stencil(0).block, [16, 16, 1]);
        let all = ScheduleRequest {
            block: Some(vec![16, 16]),
            tile: Some(vec![1, 2]),
            shm: ShmRequest::Names(vec!["a".into()]),
            time_steps: Some(1),
            ..ScheduleRequest::default()
        };
        let choice = choose(&p, &all, &env, Target::Cuda, Device::default_device()).unwrap();
        assert_eq!(choice.schedule, Schedule::for_run(&p, &all, &env).unwrap());
    }

    /// A producer and a consumer reading it at non-zero offsets: `--fuse`
    /// may fuse them (recomputing `b` over a halo) for some candidate shapes
    /// and not for the base's.
    const CHAIN: &str = "int n;\ngrid g[n][n][n];\ndouble griddata a on g at 0,1;\n\
        double griddata b on g at 0;\niterate 2 {\n  stencil p {\n\
        [1:n-2][1:n-2][1:n-2] : [0]b[0][0][0] = 1.0 / sqrt(1.0 + [0]a[0][0][1] * [0]a[0][0][-1]);\n  }\n\
          stencil c {\n    [1:n-2][1:n-2][1:n-2] : [1]a[0][0][0] = [0]a[0][0][0] / (1.0 + [0]b[0][0][1]\n\
        + [0]b[0][0][-1] + [0]b[0][1][0] + [0]b[0][-1][0] + [0]b[1][0][0] + [0]b[-1][0][0]);\n  }\n}\n";

    #[test]
    fn a_stencil_fused_into_its_predecessor_by_a_candidate_is_not_costed_as_free() {
        let p = program(CHAIN);
        let env = bound(&p, 256);
        let request = ScheduleRequest {
            fuse: true,
            ..ScheduleRequest::default()
        };
        let choice = choose(&p, &request, &env, Target::Cuda, Device::default_device()).unwrap();
        let fused = choice.schedule.stencil(0).fuse_with_next;
        for reason in &choice.reasons {
            assert!(!reason.contains("predicted 0.0 us"), "{reason}");
            assert!(!reason.contains("infx"), "{reason}");
        }
        // Unfused, the consumer's reason stands on its own, with a real time.
        if !fused {
            assert!(
                choice.reasons.iter().any(|r| r.starts_with("c: block ")),
                "{:?}",
                choice.reasons
            );
        }
    }

    #[test]
    fn ptxas_rank_keeps_the_candidate_its_registers_serve_best() {
        let p = program(J2D9PT);
        let env = bound(&p, 4096);
        let device = Device::default_device();
        let plain = choose(&p, &ScheduleRequest::default(), &env, Target::Cuda, device).unwrap();
        let ranked = |k: u32, registers: Registers<'_>| {
            let request = ScheduleRequest {
                ptxas_rank: Some(k),
                ..ScheduleRequest::default()
            };
            choose_ranked(&p, &request, &env, Target::Cuda, device, Some(registers))
        };
        // Each compiled module's kernels get `regs` registers.
        let compiles = std::cell::Cell::new(0);
        let with = |regs: u32| {
            move |module: &crate::kir::Module, arch: &str| {
                assert_eq!(arch, device.arch);
                Ok(module
                    .kernels
                    .iter()
                    .map(|k| (k.name.clone(), regs))
                    .collect())
            }
        };
        let counted = |module: &crate::kir::Module, arch: &str| {
            compiles.set(compiles.get() + 1);
            with(64)(module, arch)
        };
        // One candidate: the model's own choice, compiled once.
        let one = ranked(1, &counted).unwrap();
        assert_eq!(one.schedule, plain.schedule);
        assert_eq!(compiles.get(), 1);
        assert!(
            one.reasons[0].contains("ranked on ptxas's registers among the model's 1 fastest"),
            "{}",
            one.reasons[0]
        );
        // 9 registers leave none for a run's loads in flight from global
        // memory: among the 64 fastest, the winner computes one point per
        // thread (a single round) or reads its run from a shared tile.
        let starved = ranked(64, &with(9)).unwrap();
        let chosen = starved.schedule.stencil(0);
        let points = chosen.tile.iter().product::<u32>() * chosen.vector;
        assert!(points == 1 || stages(chosen), "{chosen:?}");
        assert_ne!(chosen, plain.schedule.stencil(0));
        assert!(
            starved.reasons[0].contains("the model's own first choice"),
            "{}",
            starved.reasons[0]
        );
        // Ranked, the default is never slower by the ranking's equations than
        // `--shm none` ranked the same way.
        let bound = |schedule: &Schedule| {
            let lowered = lower(&p, schedule, Target::Cuda);
            build::specs(&p, schedule, &lowered, &env)
                .iter()
                .filter(|spec| matches!(spec.role, Role::Stencil(_)))
                .map(|spec| {
                    crate::model::register_bound_time(spec, &cost(spec, device, Some(40)).unwrap())
                })
                .sum::<f64>()
        };
        for k in [1, 2, 8] {
            let ranked_default = ranked(k, &with(40)).unwrap();
            let none = ScheduleRequest {
                shm: ShmRequest::None,
                ptxas_rank: Some(k),
                ..ScheduleRequest::default()
            };
            let ranked_none =
                choose_ranked(&p, &none, &env, Target::Cuda, device, Some(&with(40))).unwrap();
            assert!(
                bound(&ranked_default.schedule) <= bound(&ranked_none.schedule) * (1.0 + 1e-9),
                "K = {k}"
            );
        }
        // A compiler that fails is an error that says so.
        let failing = |_: &crate::kir::Module, _: &str| {
            Err(crate::model::ptxas::PtxasError::NotFound {
                places: Vec::new(),
                not_executable: Vec::new(),
                python: "python3".into(),
            })
        };
        let error = ranked(4, &failing).unwrap_err().to_string();
        assert!(
            error.contains("--ptxas-rank") && error.contains("ptxas not found"),
            "{error}"
        );
        // Without a compiler, or for OpenCL, it is refused.
        let request = ScheduleRequest {
            ptxas_rank: Some(4),
            ..ScheduleRequest::default()
        };
        let error = choose(&p, &request, &env, Target::Cuda, device).unwrap_err();
        assert!(error.to_string().contains("--ptxas-rank"), "{error}");
        let error =
            choose_ranked(&p, &request, &env, Target::OpenCl, device, Some(&with(64))).unwrap_err();
        assert!(error.to_string().contains("OpenCL"), "{error}");
    }

    #[test]
    fn ptxas_rank_compiles_the_fastest_and_the_fastest_unstaged() {
        let staged = [true, true, false, true, false, false];
        assert_eq!(to_rank(&staged, 2), vec![0, 1, 2, 4]);
        assert_eq!(to_rank(&staged, 1), vec![0, 2]);
        assert_eq!(to_rank(&staged, 4), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(to_rank(&[false, true], 1), vec![0]);
        assert!(to_rank(&[], 3).is_empty());
    }

    #[test]
    fn candidates_lead_with_shm_none_at_the_default_shape() {
        let list = requests(&ScheduleRequest::default(), 2, true, true, true);
        assert_eq!(list[0].shm, ShmRequest::None);
        assert_eq!(list[0].block, None);
        assert_eq!(list[0].tile, None);
        assert_eq!(list.len(), 2 * 4 * RUN_LENGTHS.len());
        let none = requests(&ScheduleRequest::default(), 3, false, false, true);
        assert_eq!(none.len(), 2);
    }
}
