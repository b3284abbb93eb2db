//! Whether a producer/consumer pair fused by halo recompute pays on a device:
//! the fused kernel against the two sweeps, each costed by the model for the
//! run's sizes. `--fuse` keeps a recompute fusion only when this predicts a
//! gain; the model-driven schedule heuristic asks the same question.

use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::lower::{lower, Target};
use crate::model::{build, cost, Device, KernelSpec, OccupancyError, Role};
use crate::schedule::{unfuse, Schedule, ScheduleError, ScheduleRequest};

/// Why a recompute fusion has no predicted verdict.
#[derive(Debug, thiserror::Error)]
pub enum VerdictError {
    /// The schedule with the fusion taken back could not be made.
    #[error(transparent)]
    Apart(#[from] ScheduleError),
    /// A kernel, fused or apart, does not fit the device.
    #[error(transparent)]
    Occupancy(#[from] OccupancyError),
}

/// The model's verdict on one recompute pair.
#[derive(Clone, Debug, PartialEq)]
pub struct RecomputeVerdict {
    /// The producer's index in the iterate (the consumer follows it).
    pub producer: usize,
    /// Predicted time of the fused kernel per iteration, seconds.
    pub fused_s: f64,
    /// Predicted time of the two kernels apart per iteration, seconds.
    pub apart_s: f64,
}

impl RecomputeVerdict {
    /// Whether fusing is predicted faster.
    pub fn gains(&self) -> bool {
        self.fused_s < self.apart_s
    }
}

/// Per recompute pair of `fused` (the schedule of `request`, fusion asked), the
/// predicted times fused and apart on `device` (registers as the model
/// assumes without ptxas). An error says why a figure could not be had.
pub fn recompute_verdicts(
    program: &Program,
    fused: &Schedule,
    request: &ScheduleRequest,
    env: &RunEnv,
    device: &Device,
    target: Target,
) -> Result<Vec<RecomputeVerdict>, VerdictError> {
    let Some(iterate) = &program.iterate else {
        return Ok(vec![]);
    };
    let pairs: Vec<usize> = (0..fused.stencils.len())
        .filter(|&s| fused.stencils[s].recompute.is_some())
        .collect();
    if pairs.is_empty() {
        return Ok(vec![]);
    }
    let apart = Schedule::for_run(
        program,
        &ScheduleRequest {
            fuse: false,
            ..request.clone()
        },
        env,
    )?;
    let time_of = |schedule: &Schedule| -> Result<Vec<(String, f64)>, OccupancyError> {
        let lowered = lower(program, schedule, target);
        build::specs(program, schedule, &lowered, env)
            .iter()
            .filter(|s| matches!(s.role, Role::Stencil(_)))
            .map(|s: &KernelSpec| {
                let c = cost(s, device, None)?;
                let Role::Stencil(name) = &s.role else {
                    unreachable!("filtered to stencils")
                };
                Ok((name.clone(), c.time * s.per_iteration))
            })
            .collect()
    };
    let fused_times = time_of(fused)?;
    let apart_times = time_of(&apart)?;
    let sum = |times: &[(String, f64)], names: &[&str]| -> f64 {
        times
            .iter()
            .filter(|(n, _)| names.contains(&n.as_str()))
            .map(|(_, t)| t)
            .sum()
    };
    Ok(pairs
        .into_iter()
        .map(|p| {
            let (a, b) = (&iterate.stencils[p].name, &iterate.stencils[p + 1].name);
            RecomputeVerdict {
                producer: p,
                fused_s: sum(&fused_times, &[&format!("{a}+{b}")]),
                apart_s: sum(&apart_times, &[a, b]),
            }
        })
        .collect())
}

/// Keeps each recompute fusion of `schedule` that the model predicts faster
/// on `device` and takes back the others, with a note either way (for `-v`
/// and `explain`). Without figures (an error) the fusions stay, with a note.
pub fn choose_recompute(
    program: &Program,
    schedule: &mut Schedule,
    request: &ScheduleRequest,
    env: &RunEnv,
    device: &Device,
    target: Target,
) {
    let verdicts = match recompute_verdicts(program, schedule, request, env, device, target) {
        Ok(v) => v,
        Err(why) => {
            schedule.notes.push(format!(
                "halo-recompute fusion kept without a prediction: {why}"
            ));
            return;
        }
    };
    let Some(iterate) = &program.iterate else {
        return;
    };
    let apart = Schedule::for_run(
        program,
        &ScheduleRequest {
            fuse: false,
            ..request.clone()
        },
        env,
    );
    for v in verdicts {
        let (a, b) = (
            &iterate.stencils[v.producer].name,
            &iterate.stencils[v.producer + 1].name,
        );
        let figures = format!(
            "the model predicts {:.1} µs fused against {:.1} µs apart per iteration on the {} \
             ({:.2}×)",
            v.fused_s * 1e6,
            v.apart_s * 1e6,
            device.name,
            v.apart_s / v.fused_s.max(1e-12)
        );
        if v.gains() {
            schedule
                .notes
                .push(format!("keeping `{b}` fused into `{a}`: {figures}"));
        } else if let Ok(apart) = &apart {
            unfuse(
                schedule,
                v.producer,
                apart,
                format!("not fusing `{b}` into `{a}` after all: {figures}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::env::Bindings;
    use crate::ir::Value;

    fn example(name: &str) -> Program {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(format!("{name}.sdsl"));
        let text = std::fs::read_to_string(path).unwrap();
        let source = crate::source::SourceFile::new(format!("{name}.sdsl"), text);
        crate::analysis::checked(crate::front::parse_program(source).unwrap()).unwrap()
    }

    fn fuse(results: Option<Vec<String>>) -> ScheduleRequest {
        ScheduleRequest {
            fuse: true,
            results,
            ..ScheduleRequest::default()
        }
    }

    fn chosen(program: &Program, request: &ScheduleRequest, env: &RunEnv) -> Schedule {
        let mut schedule = Schedule::for_run(program, request, env).unwrap();
        let device = Device::find("h100").unwrap();
        choose_recompute(program, &mut schedule, request, env, device, Target::Cuda);
        schedule
    }

    #[test]
    fn the_separable_blur_at_4k_is_predicted_faster_fused_and_more_so_without_the_write() {
        let program = example("gaussian_blur_separable");
        let bindings = Bindings {
            params: vec![Value::Int(3840), Value::Int(2160)],
        };
        let env = RunEnv::new(&program, &bindings).unwrap();
        let device = Device::find("h100").unwrap();
        let gain = |results: Option<Vec<String>>| {
            let request = fuse(results);
            let schedule = Schedule::for_run(&program, &request, &env).unwrap();
            let v = recompute_verdicts(&program, &schedule, &request, &env, device, Target::Cuda)
                .unwrap();
            assert_eq!(v.len(), 1);
            assert!(v[0].gains(), "{v:?}");
            v[0].apart_s / v[0].fused_s
        };
        let kept = gain(None);
        let skipped = gain(Some(vec!["out".into()]));
        assert!(skipped > kept, "{skipped} against {kept}");
        let schedule = chosen(&program, &fuse(None), &env);
        assert!(schedule.stencils[0].recompute.is_some());
        assert!(
            schedule
                .notes
                .iter()
                .any(|n| n.starts_with("keeping `columns` fused into `rows`")),
            "{:?}",
            schedule.notes
        );
    }

    #[test]
    fn rician_with_a_block_of_32_4_2_is_predicted_slower_fused_and_left_apart() {
        // The 3-D halo of G more than triples the points a block computes.
        let program = example("rician3d");
        let bindings = Bindings {
            params: vec![
                Value::Int(256),
                Value::Int(256),
                Value::Int(256),
                Value::Double(0.05),
                Value::Double(0.065),
            ],
        };
        let env = RunEnv::new(&program, &bindings).unwrap();
        let request = fuse(None);
        let schedule = chosen(&program, &request, &env);
        let apart = Schedule::for_run(&program, &ScheduleRequest::default(), &env).unwrap();
        assert_eq!(schedule.stencils, apart.stencils);
        assert!(
            schedule
                .notes
                .iter()
                .any(|n| n.starts_with("not fusing `us` into `gs` after all: the model predicts")),
            "{:?}",
            schedule.notes
        );
    }
}
