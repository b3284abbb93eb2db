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

use crate::analysis::footprint::Footprint;
use crate::diag::Diagnostic;
use crate::ir::env::RunEnv;
use crate::ir::{FieldId, Program};

use super::ScheduleRequest;

/// Shared memory one time-tiled block may use (bytes): the static limit of
/// CUDA and what OpenCL devices guarantee at least; a tiling needing more runs
/// untiled with a note.
pub const TIME_TILE_SHARED_BUDGET: usize = 48 * 1024;

/// An iteration's stencils run `steps` times per launch on a block's tile
/// (overlapped time tiling): what lowering needs, decided for one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeTiling {
    /// The most iterations one launch advances (`T`).
    pub steps: u32,
    /// Threads per block along x, y, z.
    pub block: [u32; 3],
    /// The block's own points (its tile's centre) along x, y, z.
    pub per_block: [u32; 3],
    /// The fields the stencils write: every time level of each lives in
    /// shared memory for the whole launch (their tiles rotate like the
    /// interpreter's buffers).
    pub staged: Vec<FieldId>,
    /// Per stencil, per axis (outermost first): how far it reads staged
    /// levels below and above the point (both at least 0).
    pub reach: Vec<Vec<(i64, i64)>>,
    /// Per axis (outermost first): the halo the tile loads, `steps` times the
    /// sum of the stencils' reaches.
    pub halo: Vec<(i64, i64)>,
    /// Shared memory per block (bytes).
    pub shared_bytes: usize,
}

impl TimeTiling {
    /// The tile's extent per axis (outermost first): centre plus halo.
    pub fn extents(&self) -> Vec<usize> {
        let rank = self.halo.len();
        (0..rank)
            .map(|a| {
                self.per_block[rank - 1 - a] as usize + (self.halo[a].0 + self.halo[a].1) as usize
            })
            .collect()
    }

    /// The sum of the stencils' reaches per axis: how much the valid region
    /// shrinks per iteration.
    pub fn reach_per_step(&self) -> Vec<(i64, i64)> {
        let rank = self.reach.first().map_or(0, Vec::len);
        (0..rank)
            .map(|a| {
                self.reach
                    .iter()
                    .fold((0, 0), |(lo, hi), r| (lo + r[a].0, hi + r[a].1))
            })
            .collect()
    }
}

/// Why a program runs untiled in time: the construct that prevents time
/// tiling, or a tile too big for shared memory.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeTilingError {
    /// The program has no iterate.
    #[error("it has no iterate")]
    NoIterate,
    /// The iterate runs no stencil.
    #[error("its iterate has no stencil")]
    NoStencil,
    /// The grid needs 64-bit indices.
    #[error("its grid needs 64-bit indices")]
    WideIndices,
    /// The program has other than one grid.
    #[error("it has {0} grids (time tiling runs programs of one grid)")]
    Grids(usize),
    /// A stencil's subset has another rank than the grid.
    #[error("stencil `{stencil}` has a subset of another rank than the grid")]
    SubsetRank {
        /// The stencil.
        stencil: String,
    },
    /// A stencil writes other than one field level.
    #[error("stencil `{stencil}` writes {levels} field levels (time tiling runs stencils that write one)")]
    WrittenLevels {
        /// The stencil.
        stencil: String,
        /// How many levels it writes.
        levels: usize,
    },
    /// A stencil writes away from its point.
    #[error("stencil `{stencil}` writes at an offset from its point")]
    WritesAway {
        /// The stencil.
        stencil: String,
    },
    /// A stencil reads the level it writes at an offset.
    #[error("stencil `{stencil}` reads `[{time}]{field}` at an offset while writing it")]
    ReadsWhatItWrites {
        /// The stencil.
        stencil: String,
        /// The level.
        time: i32,
        /// The field.
        field: String,
    },
    /// A field of several levels is read but written by no stencil.
    #[error(
        "`{field}` has {levels} time levels but no stencil writes it (its levels rotate under \
         the tile)"
    )]
    UnwrittenLevels {
        /// The field.
        field: String,
        /// Its levels.
        levels: usize,
    },
    /// A read's offset depends on a parameter without a value yet.
    #[error("a read of `{field}` has an offset unknown before the run")]
    UnknownOffset {
        /// The field read.
        field: String,
    },
    /// The tile with its halo needs more shared memory than a block is given.
    #[error(
        "its tile of {} cells (the block's points and a halo of {} for {steps} steps) needs \
         {bytes} bytes of shared memory per block, more than {TIME_TILE_SHARED_BUDGET}; use a \
         smaller --time, --block or --tile",
        extents.iter().map(usize::to_string).collect::<Vec<_>>().join("x"),
        halo.iter().map(|(lo, hi)| format!("[{lo},{hi}]")).collect::<String>()
    )]
    SharedMemory {
        /// The tile's cells per axis, halo included.
        extents: Vec<usize>,
        /// The halo below and above per axis.
        halo: Vec<(i64, i64)>,
        /// Iterations per launch.
        steps: u32,
        /// The shared memory it needs per block.
        bytes: usize,
    },
}

/// How `program` is time-tiled with `steps` iterations per launch and blocks of
/// `block` threads covering `per_block` points (x first) for `env`'s values,
/// or the construct that prevents it, in words (the run is then untiled).
pub fn plan_time_tiling(
    program: &Program,
    env: &RunEnv,
    steps: u32,
    block: [u32; 3],
    per_block: [u32; 3],
    wide_indices: bool,
) -> Result<TimeTiling, TimeTilingError> {
    plan_with_footprints(
        program,
        |s| Footprint::of_stencil_in(program, env, s),
        steps,
        block,
        per_block,
        wide_indices,
    )
}

/// [`plan_time_tiling`] from the program alone, for code generated before the
/// parameters have values (`compile -b overtile`): a read whose offset
/// depends on a parameter prevents it.
pub fn plan_time_tiling_static(
    program: &Program,
    steps: u32,
    block: [u32; 3],
    per_block: [u32; 3],
    wide_indices: bool,
) -> Result<TimeTiling, TimeTilingError> {
    plan_with_footprints(
        program,
        |s| Footprint::of_stencil(program, s),
        steps,
        block,
        per_block,
        wide_indices,
    )
}

/// The tiling with each stencil's footprint from `footprint_of`.
fn plan_with_footprints(
    program: &Program,
    footprint_of: impl Fn(usize) -> Footprint,
    steps: u32,
    block: [u32; 3],
    per_block: [u32; 3],
    wide_indices: bool,
) -> Result<TimeTiling, TimeTilingError> {
    let Some(iterate) = &program.iterate else {
        return Err(TimeTilingError::NoIterate);
    };
    if iterate.stencils.is_empty() {
        return Err(TimeTilingError::NoStencil);
    }
    if wide_indices {
        return Err(TimeTilingError::WideIndices);
    }
    if program.grids.len() != 1 {
        return Err(TimeTilingError::Grids(program.grids.len()));
    }
    let rank = program.grids[0].rank();
    let mut staged: Vec<FieldId> = Vec::new();
    let mut footprints = Vec::new();
    for (s, stencil) in iterate.stencils.iter().enumerate() {
        let footprint = footprint_of(s);
        if stencil.parts.iter().any(|p| p.subset.rank() != rank) {
            return Err(TimeTilingError::SubsetRank {
                stencil: stencil.name.clone(),
            });
        }
        let written = footprint.written();
        if written.len() != 1 {
            return Err(TimeTilingError::WrittenLevels {
                stencil: stencil.name.clone(),
                levels: written.len(),
            });
        }
        if !footprint.writes_only_center() {
            return Err(TimeTilingError::WritesAway {
                stencil: stencil.name.clone(),
            });
        }
        let (field, time) = written[0];
        if let Some(read) = footprint.read_extent(field, time) {
            if !read.only_center() {
                return Err(TimeTilingError::ReadsWhatItWrites {
                    stencil: stencil.name.clone(),
                    time,
                    field: program.fields[field.0].name.clone(),
                });
            }
        }
        if !staged.contains(&field) {
            staged.push(field);
        }
        footprints.push(footprint);
    }
    staged.sort();
    for footprint in &footprints {
        for read in &footprint.reads {
            let field = &program.fields[read.field.0];
            if !staged.contains(&read.field) && field.levels() > 1 {
                return Err(TimeTilingError::UnwrittenLevels {
                    field: field.name.clone(),
                    levels: field.levels(),
                });
            }
        }
    }
    let mut reach = Vec::new();
    for footprint in &footprints {
        let mut r = vec![(0i64, 0i64); rank];
        for read in footprint.reads.iter().filter(|l| staged.contains(&l.field)) {
            let Some(axes) = read.static_box() else {
                return Err(TimeTilingError::UnknownOffset {
                    field: program.fields[read.field.0].name.clone(),
                });
            };
            for (a, (lo, hi)) in axes.into_iter().enumerate() {
                r[a].0 = r[a].0.max(-lo);
                r[a].1 = r[a].1.max(hi);
            }
        }
        reach.push(r);
    }
    let mut tiling = TimeTiling {
        steps,
        block,
        per_block,
        staged,
        reach,
        halo: vec![],
        shared_bytes: 0,
    };
    tiling.halo = tiling
        .reach_per_step()
        .into_iter()
        .map(|(lo, hi)| (lo * i64::from(steps), hi * i64::from(steps)))
        .collect();
    let cells: usize = tiling.extents().iter().product();
    tiling.shared_bytes = tiling
        .staged
        .iter()
        .map(|f| {
            let field = &program.fields[f.0];
            field.levels() * field.ty.size_bytes() * cells
        })
        .sum();
    if tiling.shared_bytes > TIME_TILE_SHARED_BUDGET {
        return Err(TimeTilingError::SharedMemory {
            extents: tiling.extents(),
            halo: tiling.halo.clone(),
            steps,
            bytes: tiling.shared_bytes,
        });
    }
    Ok(tiling)
}

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

/// The time-tile size `request` or the pragma of `program` asks for, as
/// written (not clamped), and where it comes from; `None` when neither says. A
/// pragma value naming an identifier without a value is a diagnostic at the
/// identifier.
pub fn asked_time_steps(
    program: &Program,
    request: &ScheduleRequest,
) -> Result<Option<(u32, TimeSource)>, Diagnostic> {
    let hints = &program.hints;
    Ok(Some(match request.time_steps {
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
    }))
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
    let Some((asked, source)) = asked_time_steps(program, request)? else {
        return Ok(None);
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
    use super::{launch_steps, plan_time_tiling};
    use crate::ir::env::{Bindings, RunEnv};
    use crate::ir::Value;

    fn why_untiled(text: &str) -> String {
        let source = crate::source::SourceFile::new("t.sdsl", text);
        let program = crate::front::parse_program(source).expect("valid program");
        let bindings = Bindings {
            params: vec![Value::Int(64)],
        };
        let env = RunEnv::new(&program, &bindings).expect("bound");
        plan_time_tiling(&program, &env, 4, [32, 8, 1], [32, 8, 1], false)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn what_cannot_be_time_tiled_is_named() {
        // (A stencil reading what it writes at an offset is refused by the language.)
        let rotating = why_untiled(
            "int n;\ngrid g[n];\nfloat griddata a on g at 0,1;\nfloat griddata b on g at 0,1;\n\
             iterate 4 {\n  stencil s { [1:n-2] : [1]a[0] = [0]b[-1] + [0]a[1]; }\n}\n",
        );
        assert!(rotating.starts_with("`b` has 2 time levels but no stencil writes it"));
        let two = why_untiled(
            "int n;\ngrid g[n];\nfloat griddata a on g at 0,1;\nfloat griddata b on g at 0;\n\
             iterate 4 {\n  stencil s { [1:n-2] : [1]a[0] = [0]a[1]; [1:n-2] : [0]b[0] = [0]a[-1]; }\n}\n",
        );
        assert_eq!(
            two,
            "stencil `s` writes 2 field levels (time tiling runs stencils that write one)"
        );
    }

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
