//! The naive global-memory baselines of `bench/gpu/naive.cu`: which kernels run a
//! benchmark's sweep and what they take, resolved against the program's fields
//! and parameters by name.

use crate::exec::ExecError;
use crate::ir::env::RunEnv;
use crate::ir::{Program, ScalarType};

/// The baselines' source, compiled with NVRTC at run time (`-Dreal=float|double`).
pub const SOURCE: &str = include_str!("../../../bench/gpu/naive.cu");

/// One argument of a naive kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NaiveArg {
    /// The buffer of a field's time level (time offset as in the program).
    Level(&'static str, i32),
    /// A parameter's value, of the parameter's type.
    Param(&'static str),
}

/// One launch of a naive sweep: a kernel over every point of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NaiveLaunch {
    /// Kernel name in `naive.cu`.
    pub kernel: &'static str,
    /// Its arguments, in order.
    pub args: &'static [NaiveArg],
}

const SINGLE_FIELD: &[NaiveArg] = &[
    NaiveArg::Level("a", 0),
    NaiveArg::Level("a", 1),
    NaiveArg::Param("n"),
];

/// The naive sweep of the benchmark named `name` (a program file's stem), if
/// `naive.cu` has one.
pub fn recipe(name: &str) -> Option<&'static [NaiveLaunch]> {
    macro_rules! single {
        ($k:literal) => {
            &[NaiveLaunch {
                kernel: $k,
                args: SINGLE_FIELD,
            }]
        };
    }
    Some(match name {
        // The check's reduction has no naive counterpart: the sweeps compare.
        "j2d5pt" | "j2d5pt_check" => single!("j2d5pt"),
        // The same weights, from a table.
        "j2d9pt" | "j2d9pt_table" => single!("j2d9pt"),
        "box2d2r" => single!("box2d2r"),
        "gradient2d" => single!("gradient2d"),
        "star3d1r" => single!("star3d1r"),
        "j3d27pt" => single!("j3d27pt"),
        "heat3d" => &[NaiveLaunch {
            kernel: "heat3d",
            args: &[
                NaiveArg::Level("u", 0),
                NaiveArg::Level("u", 1),
                NaiveArg::Param("n"),
                NaiveArg::Param("alpha"),
            ],
        }],
        "gaussian_blur" => &[NaiveLaunch {
            kernel: "gaussian_blur",
            args: &[
                NaiveArg::Level("img", 0),
                NaiveArg::Level("out", 0),
                NaiveArg::Param("width"),
                NaiveArg::Param("height"),
            ],
        }],
        "rician3d" => &[
            NaiveLaunch {
                kernel: "rician3d_g",
                args: &[
                    NaiveArg::Level("U", 0),
                    NaiveArg::Level("G", 0),
                    NaiveArg::Param("dim0"),
                    NaiveArg::Param("dim1"),
                    NaiveArg::Param("dim2"),
                ],
            },
            NaiveLaunch {
                kernel: "rician3d_u",
                args: &[
                    NaiveArg::Level("U", 0),
                    NaiveArg::Level("U", 1),
                    NaiveArg::Level("G", 0),
                    NaiveArg::Level("F", 0),
                    NaiveArg::Param("dim0"),
                    NaiveArg::Param("dim1"),
                    NaiveArg::Param("dim2"),
                    NaiveArg::Param("sigma"),
                    NaiveArg::Param("lambda"),
                ],
            },
        ],
        _ => return None,
    })
}

/// Every kernel name the recipes use (each must be in [`SOURCE`]).
pub fn kernel_names() -> Vec<&'static str> {
    let stems = [
        "j2d5pt",
        "j2d9pt",
        "box2d2r",
        "gradient2d",
        "star3d1r",
        "j3d27pt",
        "heat3d",
        "gaussian_blur",
        "rician3d",
    ];
    stems
        .iter()
        .filter_map(|s| recipe(s))
        .flatten()
        .map(|l| l.kernel)
        .collect()
}

/// NVRTC's `-D` option choosing the baselines' element type.
pub fn real_define(ty: ScalarType) -> String {
    format!("-Dreal={}", ty.name())
}

/// A resolved argument: a field level's position in `levels[f][t - time_lo]`, or a
/// parameter's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// `(field, level index)`.
    Level(usize, usize),
    /// A parameter index.
    Param(usize),
}

/// Resolves a recipe's names against `program`; an error names what is missing.
pub fn resolve(
    program: &Program,
    launches: &[NaiveLaunch],
) -> Result<Vec<Vec<Resolved>>, ExecError> {
    let missing = |what: String| {
        ExecError::Failed(format!(
            "the naive baseline for `{}` expects {what}; the program file does not match \
             bench/gpu/naive.cu",
            program.name
        ))
    };
    launches
        .iter()
        .map(|launch| {
            launch
                .args
                .iter()
                .map(|arg| match *arg {
                    NaiveArg::Level(name, time) => {
                        let f = program
                            .fields
                            .iter()
                            .position(|f| f.name == name)
                            .ok_or_else(|| missing(format!("a field `{name}`")))?;
                        let field = &program.fields[f];
                        if time < field.time_lo || time > field.time_hi {
                            return Err(missing(format!("time level {time} of `{name}`")));
                        }
                        Ok(Resolved::Level(f, (time - field.time_lo) as usize))
                    }
                    NaiveArg::Param(name) => program
                        .params
                        .iter()
                        .position(|p| p.name == name)
                        .map(Resolved::Param)
                        .ok_or_else(|| missing(format!("a parameter `{name}`"))),
                })
                .collect()
        })
        .collect()
}

/// Blocks and block shape covering every point of the program's first grid, one
/// thread per point.
pub fn launch_shape(program: &Program, env: &RunEnv) -> ([u32; 3], [u32; 3]) {
    let dims = &env.grid_dims()[program.fields[0].grid.0];
    let rank = dims.len();
    let block = crate::schedule::default_block(rank);
    let mut groups = [1u32; 3];
    for (axis, n) in dims.iter().enumerate() {
        let d = rank - 1 - axis;
        groups[d] = (*n as u64).div_ceil(block[d] as u64) as u32;
    }
    (groups, block)
}
