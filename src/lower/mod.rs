//! Lowering: [`ir::Program`](crate::ir::Program) + [`Schedule`] to kernel IR and a
//! host plan.
//!
//! Every stencil part becomes one kernel over its subset (parts run in order, so
//! one launch per part keeps their in-place semantics); stencils the schedule
//! fuses become one kernel running them one after the other at each point; every
//! reduction part a
//! kernel writing per-block partials, and every reduction a single-block final
//! pass. Shared-memory tiles, table placement and boundary handling follow the
//! schedule; the kernels never compute a shared-memory index with `%` or `/`.

pub mod plan;
mod point;
mod reduce;
mod stencil;

use std::collections::BTreeMap;

use crate::ir::{FieldId, GridId, Program, ScalarType};
use crate::kir::{ConstArray, KExpr, KParam, Module, ParamKind};
use crate::schedule::{DeviceLimits, Schedule, ScheduleError};
use plan::{ArgSource, HostPlan};

/// The target dialect's capabilities that change what lowering emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// CUDA: warp shuffles for the last steps of reduction trees.
    Cuda,
    /// OpenCL: a portable local-memory tree all the way.
    OpenCl,
}

impl Target {
    /// Whether reductions may use warp shuffles.
    pub fn has_warp_shuffle(self) -> bool {
        self == Target::Cuda
    }
}

/// Kernels plus the host plan that runs them.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The kernels and constant tables.
    pub module: Module,
    /// The launches, reductions and check.
    pub plan: HostPlan,
}

/// Threads of every reduction block (a power of two).
pub const REDUCTION_THREADS: u32 = 256;

/// Lowers `program` under `schedule` for `target`.
pub fn lower(program: &Program, schedule: &Schedule, target: Target) -> Lowered {
    let mut module = Module {
        name: program.name.clone(),
        constants: Vec::new(),
        kernels: Vec::new(),
    };
    let mut plan = HostPlan::default();
    if let Some(iterate) = &program.iterate {
        let mut first = 0;
        while first < iterate.stencils.len() {
            let mut end = first + 1;
            while end < iterate.stencils.len() && schedule.stencil(end - 1).fuse_with_next {
                end += 1;
            }
            let group = &iterate.stencils[first..end];
            let launches =
                stencil::lower_group(program, group, schedule.stencil(first), &mut module);
            plan.stencils.push(launches);
            // The fused stencils run inside the group's kernel: no launches of their own.
            plan.stencils.extend((first + 1..end).map(|_| Vec::new()));
            first = end;
        }
        for (r, reduction) in iterate.reductions.iter().enumerate() {
            plan.reductions.push(reduce::lower_reduction(
                program,
                crate::ir::ReductionId(r),
                reduction,
                target,
                &mut module,
            ));
        }
    }
    Lowered { module, plan }
}

/// Names the generated code uses for itself; a user identifier equal to one of
/// them (or to a C keyword) gets a trailing `_`.
const RESERVED: &[&str] = &[
    "tx",
    "ty",
    "tz",
    "px",
    "py",
    "pz",
    "qx",
    "qy",
    "qz",
    "ix",
    "iy",
    "iz",
    "lx",
    "ly",
    "lz",
    "base_x",
    "base_y",
    "base_z",
    "lo_x",
    "lo_y",
    "lo_z",
    "hi_x",
    "hi_y",
    "hi_z",
    "tid",
    "s",
    "acc",
    "other",
    "partials",
    "partial_offset",
    "partial_count",
    "result",
    "int",
    "long",
    "float",
    "double",
    "char",
    "short",
    "unsigned",
    "signed",
    "void",
    "const",
    "if",
    "else",
    "for",
    "while",
    "do",
    "return",
    "break",
    "continue",
    "switch",
    "case",
    "default",
    "goto",
    "static",
    "inline",
    "restrict",
    "volatile",
    "struct",
    "union",
    "enum",
    "typedef",
    "sizeof",
    "auto",
    "register",
    "extern",
    "half",
    "bool",
    "global",
    "local",
    "constant",
    "private",
    "kernel",
    "min",
    "max",
    "sqrt",
    "exp",
    "log",
    "pow",
    "sin",
    "cos",
    "tan",
    "fabs",
    "floor",
    "ceil",
    "fmin",
    "fmax",
];

/// A user identifier made safe for generated code.
pub(crate) fn ident(name: &str) -> String {
    if RESERVED.contains(&name) || name.starts_with("sc_") || name.starts_with("size_") {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// The thread-axis letter of grid axis `axis` (outermost first) in a `rank`-D grid.
pub(crate) fn letter(rank: usize, axis: usize) -> &'static str {
    ["x", "y", "z"][rank - 1 - axis]
}

/// Kernel parameters collected while lowering, buffers first, in the order they
/// were first used, with where the host takes each from.
#[derive(Default)]
pub(crate) struct Params {
    buffers: Vec<(KParam, ArgSource)>,
    scalars: Vec<(KParam, ArgSource)>,
}

impl Params {
    /// The name of a field time level's buffer, registering it (a later use as a
    /// written buffer upgrades a read-only one).
    pub(crate) fn level(
        &mut self,
        program: &Program,
        field: FieldId,
        time: i32,
        writes: bool,
    ) -> String {
        let f = &program.fields[field.0];
        let name = level_name(program, field, time);
        let kind = if writes {
            ParamKind::Buffer
        } else {
            ParamKind::ReadOnlyBuffer
        };
        if let Some((p, _)) = self.buffers.iter_mut().find(|(p, _)| p.name == name) {
            if writes {
                p.kind = ParamKind::Buffer;
            }
        } else {
            self.buffers.push((
                KParam {
                    name: name.clone(),
                    ty: f.ty,
                    kind,
                },
                ArgSource::Level(field, time),
            ));
        }
        name
    }

    /// A buffer that is not a field level (partials, results).
    pub(crate) fn buffer(&mut self, name: &str, ty: ScalarType, source: ArgSource) -> String {
        if !self.buffers.iter().any(|(p, _)| p.name == name) {
            self.buffers.push((
                KParam {
                    name: name.into(),
                    ty,
                    kind: ParamKind::Buffer,
                },
                source,
            ));
        }
        name.into()
    }

    /// A scalar parameter, registered once.
    pub(crate) fn scalar(&mut self, name: &str, ty: ScalarType, source: ArgSource) -> KExpr {
        if !self.scalars.iter().any(|(p, _)| p.name == name) {
            self.scalars.push((
                KParam {
                    name: name.into(),
                    ty,
                    kind: ParamKind::Scalar,
                },
                source,
            ));
        }
        KExpr::var(name)
    }

    /// The size of `grid` along `axis` (outermost first).
    pub(crate) fn grid_size(&mut self, program: &Program, grid: GridId, axis: usize) -> KExpr {
        let rank = program.grids[grid.0].rank();
        let name = if program.grids.len() == 1 {
            format!("size_{}", letter(rank, axis))
        } else {
            format!(
                "size_{}_{}",
                ident(&program.grids[grid.0].name),
                letter(rank, axis)
            )
        };
        self.scalar(&name, ScalarType::Int, ArgSource::GridSize(grid, axis))
    }

    /// Parameters and argument sources, buffers first.
    pub(crate) fn finish(self) -> (Vec<KParam>, Vec<ArgSource>) {
        self.buffers.into_iter().chain(self.scalars).unzip()
    }
}

/// The generated name of a field time level's buffer: the field's name for a
/// one-level field, else `u_t0`, `u_t1`, `u_tm1` (time -1).
pub fn level_name(program: &Program, field: FieldId, time: i32) -> String {
    let f = &program.fields[field.0];
    let base = ident(&f.name);
    if f.levels() == 1 {
        base
    } else if time < 0 {
        format!("{base}_tm{}", -time)
    } else {
        format!("{base}_t{time}")
    }
}

/// Adds table `t` to the module once, in constant memory or (`global`) as a
/// global-memory array named `<table>_global`; returns its name.
pub(crate) fn constant_table(
    program: &Program,
    t: crate::ir::TableId,
    module: &mut Module,
    global: bool,
) -> String {
    let table = &program.tables[t.0];
    let name = if global {
        format!("{}_global", ident(&table.name))
    } else {
        ident(&table.name)
    };
    if !module.constants.iter().any(|c| c.name == name) {
        module.constants.push(ConstArray {
            name: name.clone(),
            ty: table.ty,
            values: table.values.clone(),
            global,
        });
    }
    name
}

/// Shared helper: `BTreeMap` of the loop variables fixed by unrolling.
pub(crate) type Fixed = BTreeMap<crate::ir::LocalId, i64>;

/// Checks every kernel of `module` against the device's limits (before any
/// launch: a kernel the device cannot run fails to launch with a less helpful
/// message).
pub fn check_limits(module: &Module, limits: &DeviceLimits) -> Result<(), ScheduleError> {
    for kernel in &module.kernels {
        let threads = kernel.threads();
        if threads > limits.max_threads_per_block {
            return Err(ScheduleError(format!(
                "kernel `{}`: block {}x{}x{} has {threads} threads but the device allows {} per \
                 block; pass a smaller --block (e.g. --block 32,8)",
                kernel.name,
                kernel.block[0],
                kernel.block[1],
                kernel.block[2],
                limits.max_threads_per_block
            )));
        }
        for axis in 0..3 {
            if kernel.block[axis] > limits.max_block_dims[axis] {
                return Err(ScheduleError(format!(
                    "kernel `{}`: {} threads along {} but the device allows {}; pass a \
                     smaller --block",
                    kernel.name,
                    kernel.block[axis],
                    ["x", "y", "z"][axis],
                    limits.max_block_dims[axis]
                )));
            }
        }
        let bytes = kernel.shared_bytes();
        if bytes > limits.shared_bytes_per_block {
            return Err(ScheduleError(format!(
                "kernel `{}` needs {bytes} bytes of shared memory per block but the device \
                 allows {}; use a smaller --block or --tile, or --shm none",
                kernel.name, limits.shared_bytes_per_block
            )));
        }
    }
    Ok(())
}
