//! Measuring the candidates: each runs once to warm up (compiling its code,
//! which the back-ends cache, so it compiles once), then `repeats` times; its
//! time is the median of the repeats' compute times. A candidate whose result
//! differs from the first measured candidate's is rejected: bit for bit, or
//! within the GPU tolerance with `--fma` (1e-4 of the field's largest
//! magnitude for `float`, 1e-10 for `double`; integers exactly). Candidates
//! are taken in the order given (best predicted first), and none is started
//! once the budget is spent.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::exec::backend::{self, Backend};

use crate::exec::options::RunOptions;
use crate::exec::{Buffer, FieldState};
use crate::ir::env::RunEnv;
use crate::ir::Program;

use super::space::Candidate;
use super::Knobs;

/// How to measure.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Timed runs per candidate after the warm-up (at least 1).
    pub repeats: usize,
    /// No candidate is started after this much time (`None`: no limit).
    pub budget: Option<Duration>,
    /// Compare results within a tolerance (`--fma`) instead of bit for bit.
    pub tolerant: bool,
}

/// What became of one candidate.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "why")]
pub enum Outcome {
    /// Measured, and its result matched.
    Measured,
    /// The back-end refused or failed to run it.
    Failed(String),
    /// Its result differed from the first candidate's.
    Mismatch(String),
}

/// One candidate's measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// The configuration.
    pub knobs: Knobs,
    /// The model's prediction, seconds per iteration.
    pub predicted: Option<f64>,
    /// Compute seconds of each timed run.
    pub times: Vec<f64>,
    /// The median of `times` (`None` unless measured).
    pub median: Option<f64>,
    /// What happened.
    pub outcome: Outcome,
}

/// The search's result.
#[derive(Clone, Debug, Default)]
pub struct Outcomes {
    /// Every candidate tried, in the order tried.
    pub measurements: Vec<Measurement>,
    /// Candidates left untried when the budget ran out.
    pub untried: usize,
    /// Wall time of the search.
    pub elapsed: Duration,
}

impl Outcomes {
    /// The index of the fastest measured candidate.
    pub fn best(&self) -> Option<usize> {
        best_of(&self.measurements)
    }
}

/// The index of the fastest measured candidate of `measurements`.
pub fn best_of(measurements: &[Measurement]) -> Option<usize> {
    measurements
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.median.map(|t| (i, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// Measures `candidates` in order on `backend`, each from a copy of
/// `initial`; `base` holds what every run shares (`--fma`, `--results`).
/// `tried` is told of each measurement with everything so far.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    program: &Program,
    env: &RunEnv,
    initial: &FieldState,
    backend: Backend,
    base: &RunOptions,
    candidates: &[Candidate],
    settings: &Settings,
    tried: &mut dyn FnMut(&[Measurement]),
) -> Outcomes {
    let started = Instant::now();
    let mut out = Outcomes::default();
    let mut reference: Option<FieldState> = None;
    for (index, candidate) in candidates.iter().enumerate() {
        if settings.budget.is_some_and(|b| started.elapsed() >= b) {
            out.untried = candidates.len() - index;
            break;
        }
        let options = candidate.knobs.apply(base);
        let mut times = Vec::new();
        let outcome = match run_once(program, env, initial, backend, &options) {
            Err(why) => Outcome::Failed(why),
            Ok((state, _)) => match reference
                .as_ref()
                .map(|r| compare(program, r, &state, settings.tolerant))
            {
                Some(Err(why)) => Outcome::Mismatch(why),
                _ => {
                    reference.get_or_insert(state);
                    let mut failed = None;
                    for _ in 0..settings.repeats.max(1) {
                        match run_once(program, env, initial, backend, &options) {
                            Ok((_, seconds)) => times.push(seconds),
                            Err(why) => {
                                failed = Some(why);
                                break;
                            }
                        }
                    }
                    failed.map_or(Outcome::Measured, Outcome::Failed)
                }
            },
        };
        let median = (outcome == Outcome::Measured).then(|| median(&times));
        out.measurements.push(Measurement {
            knobs: candidate.knobs.clone(),
            predicted: candidate.predicted,
            times,
            median,
            outcome,
        });
        tried(&out.measurements);
    }
    out.elapsed = started.elapsed();
    out
}

/// One run from a copy of `initial`: the final state and the compute seconds.
fn run_once(
    program: &Program,
    env: &RunEnv,
    initial: &FieldState,
    backend: Backend,
    options: &RunOptions,
) -> Result<(FieldState, f64), String> {
    let mut state = initial.clone();
    let mut ignore = |_: &str| {};
    let (summary, _) = backend::run(backend, program, env, &mut state, options, &mut ignore)
        .map_err(|e| e.to_string())?;
    Ok((state, summary.times.compute.as_secs_f64()))
}

fn median(times: &[f64]) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Whether `state` matches `reference` on the newest level of every field:
/// `Err` names the first field and point that differs.
pub fn compare(
    program: &Program,
    reference: &FieldState,
    state: &FieldState,
    tolerant: bool,
) -> Result<(), String> {
    for (f, field) in program.fields.iter().enumerate() {
        let want = reference.newest(program, f);
        let got = state.newest(program, f);
        let differs = |i: usize| -> String {
            format!(
                "field `{}` differs at flat index {i}: {} here, {} in the first configuration's result",
                field.name,
                got.get(i),
                want.get(i)
            )
        };
        match (want, got, tolerant) {
            (Buffer::Float(a), Buffer::Float(b), true) => {
                let scale = a.iter().fold(0f32, |m, v| m.max(v.abs())).max(1.0);
                if let Some(i) = (0..a.len()).find(|&i| !within(a[i], b[i], 1e-4 * scale)) {
                    return Err(differs(i));
                }
            }
            (Buffer::Double(a), Buffer::Double(b), true) => {
                let scale = a.iter().fold(0f64, |m, v| m.max(v.abs())).max(1.0);
                if let Some(i) = (0..a.len()).find(|&i| !within(a[i], b[i], 1e-10 * scale)) {
                    return Err(differs(i));
                }
            }
            _ => {
                if want.as_bytes() != got.as_bytes() {
                    let size = field.ty.size_bytes();
                    let i = want
                        .as_bytes()
                        .iter()
                        .zip(got.as_bytes())
                        .position(|(x, y)| x != y)
                        .map_or(0, |byte| byte / size);
                    return Err(differs(i));
                }
            }
        }
    }
    Ok(())
}

fn within<T: Into<f64> + Copy>(a: T, b: T, tolerance: T) -> bool {
    let (a, b) = (a.into(), b.into());
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= tolerance.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
