//! Time tiling's step count: how many iterations of the iterate one GPU launch
//! or one CPU tile sweep advances before its results meet global memory again.
//!
//! The count comes from `--time T` ([`ScheduleRequest::time_steps`]), else from
//! the region's pragma (`time:` or OverTile's `time_steps:`), else from the
//! back-end's heuristic. A count above the iteration count, or above the check
//! interval, is clamped with a note: a tile never crosses an iteration whose
//! check is due, because the reductions read the whole grid at exactly that
//! iteration. Within those limits the steps of one launch follow
//! [`launch_steps`], so the last launch before a check, or before the end,
//! takes fewer.

use crate::diag::Diagnostic;
use crate::ir::env::RunEnv;
use crate::ir::Program;

use super::ScheduleRequest;

/// Where a time-tile size came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeSource {
    /// `--time T` (or the library's [`ScheduleRequest::time_steps`]).
    Request,
    /// The pragma's `time:`.
    PragmaTime,
    /// The pragma's `time_steps:` (OverTile's spelling).
    PragmaTimeSteps,
}

impl TimeSource {
    /// How the user wrote it, for messages.
    pub fn spelling(self) -> &'static str {
        match self {
            TimeSource::Request => "--time",
            TimeSource::PragmaTime => "time:",
            TimeSource::PragmaTimeSteps => "time_steps:",
        }
    }
}

/// A time-tile size the user asked for, after clamping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeRequest {
    /// Iterations per launch (or tile sweep), at least 1.
    pub steps: u32,
    /// Where it came from.
    pub source: TimeSource,
    /// What was clamped and why, one line each (print them as notices).
    pub notes: Vec<String>,
}

/// The time-tile size `request` or the pragma of `program` asks for with the
/// values of `env`, clamped to the iteration count and the check interval;
/// `None` when neither says (the back-end chooses). A pragma value naming an
/// identifier without a value is a diagnostic at the identifier; a request of
/// 0 steps is taken as 1 (the command line refuses it before).
pub fn requested_time_steps(
    program: &Program,
    request: &ScheduleRequest,
    env: &RunEnv,
) -> Result<Option<TimeRequest>, Diagnostic> {
    let hints = &program.hints;
    let (asked, source) = match request.time_steps {
        Some(steps) => (steps, TimeSource::Request),
        None => match (&hints.time, &hints.time_steps) {
            (Some(value), _) => (
                value.evaluate("time", &hints.values)?,
                TimeSource::PragmaTime,
            ),
            (None, Some(value)) => (
                value.evaluate("time_steps", &hints.values)?,
                TimeSource::PragmaTimeSteps,
            ),
            (None, None) => return Ok(None),
        },
    };
    let mut steps = asked.max(1);
    let mut notes = Vec::new();
    let spelled = |steps: u32| match source {
        TimeSource::Request => format!("`--time {steps}`"),
        other => format!("`{}{steps}`", other.spelling()),
    };
    let iterations = env.max_iters();
    if u64::from(steps) > iterations.max(1) {
        let clamped = iterations.max(1) as u32;
        notes.push(format!(
            "{} is more than the {iterations} iteration{} of `{}`; using {clamped}",
            spelled(steps),
            if iterations == 1 { "" } else { "s" },
            program.name
        ));
        steps = clamped;
    }
    if let Some(every) = env.every() {
        if u64::from(steps) > every {
            notes.push(format!(
                "{} is more than the check interval of `{}` (every {every} iterations): a \
                 launch never crosses a checked iteration; using {every}",
                spelled(steps),
                program.name
            ));
            steps = every as u32;
        }
    }
    Ok(Some(TimeRequest {
        steps,
        source,
        notes,
    }))
}

/// How many iterations the next launch (or tile sweep) advances when `done`
/// of `max` have run, with at most `steps` per launch and a check due every
/// `every` iterations (`None`: no check clause, so the reductions are needed
/// only after the last iteration): never past the next checked iteration, never
/// past the end. 0 once `done == max`.
pub fn launch_steps(done: u64, max: u64, every: Option<u64>, steps: u32) -> u32 {
    let left = max.saturating_sub(done);
    let to_check = every
        .filter(|&k| k > 0)
        .map_or(left, |k| k - done % k)
        .min(left);
    to_check.min(u64::from(steps.max(1))) as u32
}

#[cfg(test)]
mod tests {
    use super::launch_steps;

    #[test]
    fn launches_stop_at_each_checked_iteration_and_at_the_end() {
        // 11 iterations, a check every 5, up to 3 per launch: 3 2 | 3 2 | 1.
        let mut done = 0;
        let mut sizes = Vec::new();
        while done < 11 {
            let n = launch_steps(done, 11, Some(5), 3);
            sizes.push(n);
            done += u64::from(n);
        }
        assert_eq!(sizes, vec![3, 2, 3, 2, 1]);
        assert_eq!(launch_steps(11, 11, Some(5), 3), 0);
    }

    #[test]
    fn without_a_check_only_the_end_limits_a_launch() {
        assert_eq!(launch_steps(0, 10, None, 4), 4);
        assert_eq!(launch_steps(8, 10, None, 4), 2);
        assert_eq!(launch_steps(0, 10, None, 0), 1);
    }
}
