//! Shared-memory staging of read-only arrays in direct kernels (OpenCL
//! `__local`, CUDA `__shared__`): an array read at constant offsets around
//! each thread's own point (`image[y + a - 2][x + b - 2]` with `a`, `b` from
//! loops of constant bounds) is loaded once per block — the block's points
//! plus the halo of the offsets — cooperatively, in a fixed-count loop over
//! the tile, and every read of the body then comes from the tile.
//!
//! The decision is per array, from its reuse: the global reads one block
//! makes without the tile (distinct offsets per point × points) over those it
//! makes with it (tile elements). Arrays with non-constant offsets, written
//! arrays (never asked), tiles wider than [`TILE_BYTES_LIMIT`] or a reuse
//! under [`MIN_REUSE`] keep the read-only path, and the report says why.
//!
//! Results never change: the tile holds the very elements the original's
//! linear index reaches (`(row) * W + col`, even where a column offset
//! crosses a row), and an element is loaded only where that linear index is
//! within the array; the guard is emitted only on the side where the block's
//! tile can leave it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::facts::NestFacts;
use super::subscript::{Context, Poly, Sub};
use super::syntax::lookup;
use super::threads::block_shape;
use crate::front::c::fold::constant;
use crate::front::c::loops::{CUnit, Expr, Function, Loop, Stmt};

/// Largest tile of one array, bytes; wider offsets keep the read-only path.
pub const TILE_BYTES_LIMIT: u64 = 16 * 1024;

/// Largest sum of one kernel's tiles, bytes (OpenCL promises 32 KiB of local memory).
pub const KERNEL_TILE_BYTES_LIMIT: u64 = 32 * 1024;

/// Smallest reuse (global reads per block without the tile over those with
/// it) that pays for the barrier: two reads saved of every element loaded.
pub const MIN_REUSE: f64 = 2.0;

/// Most offset combinations enumerated for one access.
const MAX_OFFSETS: usize = 1 << 16;

/// Numbers of the staging decision, for the report and `--json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StagingNumbers {
    /// Distinct elements each point reads (distinct offset vectors).
    pub distinct_offsets: usize,
    /// Per array dimension: the parallel loop along it (empty: none) and the
    /// smallest and largest offset.
    pub offsets: Vec<(String, i64, i64)>,
    /// Threads per block along the kernel's parallel loops, outermost first.
    pub block: Vec<i64>,
    /// Tile extents per array dimension.
    pub tile: Vec<i64>,
    /// Bytes of the tile.
    pub tile_bytes: u64,
    /// Tile elements per point of the block (1: no halo).
    pub overfetch: f64,
    /// Global reads per block without the tile over those with it.
    pub reuse: f64,
}

impl StagingNumbers {
    /// The numbers in words.
    pub fn describe(&self) -> String {
        let offsets: Vec<String> = self
            .offsets
            .iter()
            .enumerate()
            .map(|(k, (v, lo, hi))| {
                if v.is_empty() {
                    format!("dimension {k}: {lo} to {hi}")
                } else {
                    format!("{v}: {lo} to {hi}")
                }
            })
            .collect();
        format!(
            "{} distinct offset(s) per point ({}); a block of {} threads stages a tile of {} elements ({} bytes): overfetch {:.2} elements per point, reuse {:.2}",
            self.distinct_offsets,
            offsets.join(", "),
            join_x(&self.block),
            join_x(&self.tile),
            self.tile_bytes,
            self.overfetch,
            self.reuse
        )
    }
}

fn join_x(v: &[i64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(" x ")
}

/// One dimension of a tile.
#[derive(Clone, Debug, PartialEq)]
pub struct TileDim {
    /// The parallel loop along it: its position in the kernel's band
    /// (outermost first), its variable and threads per block.
    pub thread_loop: Option<(usize, String, i64)>,
    /// The smallest offset (the tile starts there).
    pub low: i64,
    /// Elements of the tile along it.
    pub extent: i64,
}

/// How a staged array's tile is laid out, loaded and read.
#[derive(Clone, Debug, PartialEq)]
pub struct Tile {
    /// The array.
    pub array: String,
    /// The array's extents, outermost first.
    pub extents: Vec<i64>,
    /// The tile's dimensions, as the array's.
    pub dims: Vec<TileDim>,
    /// Whether the tile can start before the array (a `>= 0` guard).
    pub guard_low: bool,
    /// Whether it can end after it (a `< elements` guard).
    pub guard_high: bool,
}

/// The name of the thread's index within its block in staged kernels.
pub const LOCAL_THREAD: &str = "local_thread";
/// The name of the tile loop's index.
const ELEMENT: &str = "element";

impl Tile {
    /// The tile's extents as its declaration writes them (`12 * 36`).
    pub fn shape(&self) -> String {
        let extents: Vec<String> = self.dims.iter().map(|d| d.extent.to_string()).collect();
        extents.join(" * ")
    }

    /// Elements of the tile.
    pub fn elements(&self) -> i64 {
        self.dims.iter().map(|d| d.extent).product()
    }

    fn name(&self) -> String {
        format!("{}_tile", self.array)
    }

    fn origin(&self, k: usize) -> String {
        match &self.dims[k].thread_loop {
            Some((_, v, _)) => format!("{}_origin_{v}", self.array),
            None => format!("({})", self.dims[k].low),
        }
    }

    /// The array's coordinate `at` along dimension `k` as the tile's.
    fn tile_coordinate(&self, at: &str, k: usize) -> String {
        match &self.dims[k].thread_loop {
            None if self.dims[k].low == 0 => at.to_string(),
            _ => format!("{at} - {}", self.origin(k)),
        }
    }

    /// The tile's coordinate `at` along dimension `k` as the array's.
    fn array_coordinate(&self, at: &str, k: usize) -> String {
        match &self.dims[k].thread_loop {
            None if self.dims[k].low == 0 => at.to_string(),
            _ => format!("{} + {at}", self.origin(k)),
        }
    }

    /// The names the staging code declares (they must not clash with the program's).
    fn names(&self) -> Vec<String> {
        let mut out = vec![self.name(), format!("{}_at", self.array)];
        out.extend(
            (0..self.dims.len())
                .filter(|&k| self.dims[k].thread_loop.is_some())
                .map(|k| self.origin(k)),
        );
        out
    }

    /// The tile's declaration at kernel scope.
    pub fn declaration(&self, ty: &str, cuda: bool) -> String {
        let space = if cuda { "__shared__" } else { "__local" };
        format!("    {space} {ty} {}[{}];\n", self.name(), self.shape())
    }

    /// The cooperative load: each thread of the block (`threads` of them)
    /// loads every `threads`-th element of the tile.
    pub fn load(&self, threads: i64, band_len: usize, cuda: bool) -> String {
        let a = &self.array;
        let mut out = String::new();
        let halo: Vec<String> = self
            .dims
            .iter()
            .map(|d| {
                let hi = d.low + d.extent - 1 - d.thread_loop.as_ref().map_or(0, |t| t.2 - 1);
                let at = |offset: i64| match &d.thread_loop {
                    Some((_, v, _)) if offset == 0 => v.clone(),
                    Some((_, v, _)) => format!("{v}{offset:+}"),
                    None => offset.to_string(),
                };
                if d.low == hi {
                    at(hi)
                } else {
                    format!("{}..{}", at(d.low), at(hi))
                }
            })
            .collect();
        out.push_str(&format!(
            "    /* `{a}`: the elements the block's points read ([{}]), {} of them, each loaded once. */\n",
            halo.join("]["),
            self.elements()
        ));
        for (k, d) in self.dims.iter().enumerate() {
            let Some((position, v, block)) = &d.thread_loop else {
                continue;
            };
            let group = if cuda {
                format!("blockIdx.{}", ["x", "y", "z"][band_len - 1 - position])
            } else {
                format!("get_group_id({})", band_len - 1 - position)
            };
            out.push_str(&format!(
                "    const long {} = {v}_lower + (long){group} * {block}{};\n",
                self.origin(k),
                signed(d.low)
            ));
        }
        // The element's coordinates in the tile, outermost first.
        let mut stride = self.elements();
        let mut linear = String::new();
        for (k, d) in self.dims.iter().enumerate() {
            stride /= d.extent;
            let mut coordinate = ELEMENT.to_string();
            if stride > 1 {
                coordinate = format!("{coordinate} / {stride}");
            }
            if k > 0 {
                coordinate = format!("{coordinate} % {}", d.extent);
            }
            let at = self.array_coordinate(&coordinate, k);
            linear = if k == 0 {
                at
            } else {
                format!("({linear}) * {} + ({at})", self.extents[k])
            };
        }
        let total: i64 = self.extents.iter().product();
        let mut guards = Vec::new();
        if self.guard_low {
            guards.push(format!("{a}_at >= 0"));
        }
        if self.guard_high {
            guards.push(format!("{a}_at < {total}"));
        }
        let value = if guards.is_empty() {
            format!("{a}[{a}_at]")
        } else {
            format!("{} ? {a}[{a}_at] : 0", guards.join(" && "))
        };
        out.push_str(&format!(
            "    for (int {ELEMENT} = {LOCAL_THREAD}; {ELEMENT} < {}; {ELEMENT} += {threads}) {{\n        const long {a}_at = {linear};\n        {}[{ELEMENT}] = {value};\n    }}\n",
            self.elements(),
            self.name()
        ));
        out
    }

    /// A read of the array at the subscripts `index` (printed), from the tile.
    pub fn reference(&self, index: &[String]) -> String {
        let mut linear = String::new();
        for (k, e) in index.iter().enumerate() {
            let at = self.tile_coordinate(e, k);
            linear = if k == 0 {
                at
            } else {
                format!("({linear}) * {} + ({at})", self.dims[k].extent)
            };
        }
        format!("{}[{linear}]", self.name())
    }
}

fn signed(v: i64) -> String {
    match v {
        0 => String::new(),
        v if v < 0 => format!(" - {}", -v),
        v => format!(" + {v}"),
    }
}

/// The start of a kernel that stages `tiles`: each thread's point along the
/// thread loops `dims` (of C types `types`), its share of the tiles' loads,
/// the barrier, and then the return of threads without an iteration (every
/// thread of the block loads and meets the barrier first).
pub fn prologue(
    dims: &[(String, String, String)],
    types: &[&str],
    tiles: &BTreeMap<String, Tile>,
    block: &[i64],
    cuda: bool,
) -> String {
    let mut src = String::new();
    let depth = dims.len();
    for (k, ((v, _, _), ty)) in dims.iter().zip(types).enumerate() {
        let d = depth - 1 - k;
        let id = if cuda {
            let axis = ["x", "y", "z"][d];
            format!("(long)blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis}")
        } else {
            format!("(long)get_global_id({d})")
        };
        src.push_str(&format!(
            "    const long {v}_offset = {id};\n    const {ty} {v} = ({ty})({v}_lower + {v}_offset);\n"
        ));
    }
    src.push_str(&local_thread(block, cuda));
    let threads: i64 = block.iter().product();
    for tile in tiles.values() {
        src.push_str(&tile.load(threads, depth, cuda));
    }
    src.push_str(if cuda {
        "    __syncthreads();\n"
    } else {
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    });
    let outside: Vec<String> = dims
        .iter()
        .map(|(v, _, _)| format!("{v}_offset >= {v}_count"))
        .collect();
    src.push_str(&format!("    if ({}) return;\n", outside.join(" || ")));
    src
}

/// The code that computes `local_thread`, the thread's index in its block
/// (`block` outermost first).
fn local_thread(block: &[i64], cuda: bool) -> String {
    let n = block.len();
    let mut index = String::new();
    for (k, b) in block.iter().enumerate() {
        let id = if cuda {
            format!("(int)threadIdx.{}", ["x", "y", "z"][n - 1 - k])
        } else {
            format!("(int)get_local_id({})", n - 1 - k)
        };
        index = if k == 0 {
            id
        } else {
            format!("{} * {b} + {id}", paren(&index))
        };
    }
    format!("    const int {LOCAL_THREAD} = {index};\n")
}

fn paren(s: &str) -> String {
    if s.contains(' ') {
        format!("({s})")
    } else {
        s.to_string()
    }
}

/// The values a loop variable takes, when its bounds are constants.
fn values(l: &Loop) -> Option<Vec<i64>> {
    let (lo, hi) = (constant(&l.lower)?, constant(&l.upper)?);
    if l.step < 1 || hi.checked_sub(lo)? / l.step > MAX_OFFSETS as i64 {
        return None;
    }
    Some((lo..hi).step_by(l.step as usize).collect())
}

/// The values of the body's loops around a read (`None`: bounds not constant).
type LoopValues = BTreeMap<String, Option<Vec<i64>>>;

/// What the walk found about one array's reads.
struct Reads {
    /// Per read: its subscripts with the values of the body's loops around it.
    subs: Vec<(Vec<Expr>, LoopValues)>,
    /// Why the array cannot be staged, if the walk found a reason.
    refused: Option<String>,
}

fn collect(
    array: &str,
    body: &[Stmt],
    scope: &mut Vec<(String, Option<Vec<i64>>)>,
    reads: &mut Reads,
) {
    let mut exprs: Vec<&Expr> = Vec::new();
    for s in body {
        exprs.clear();
        match s {
            Stmt::Assign(a) => {
                if a.target.name == array {
                    reads.refused = Some("it is written".into());
                }
                exprs.extend(&a.target.index);
                exprs.push(&a.value);
            }
            Stmt::Decl { init, .. } => exprs.extend(init),
            Stmt::Eval { expr: e, .. } => exprs.push(e),
            Stmt::If {
                cond, then, els, ..
            } => {
                visit(array, cond, scope, reads);
                collect(array, then, scope, reads);
                collect(array, els, scope, reads);
            }
            Stmt::For(l) => {
                visit(array, &l.lower, scope, reads);
                visit(array, &l.upper, scope, reads);
                scope.push((l.var.clone(), values(l)));
                collect(array, &l.body, scope, reads);
                scope.pop();
            }
            _ => reads.refused = Some("the body holds a statement a kernel cannot".into()),
        }
        for e in &exprs {
            visit(array, e, scope, reads);
        }
    }
}

fn visit(array: &str, e: &Expr, scope: &[(String, Option<Vec<i64>>)], reads: &mut Reads) {
    e.visit(&mut |x| {
        if let Expr::Load(r) = x {
            if r.name == array {
                if r.index.is_empty() {
                    reads.refused = Some("it is used as a whole".into());
                } else {
                    reads
                        .subs
                        .push((r.index.clone(), scope.iter().cloned().collect()));
                }
            }
        }
    });
}

/// Per dimension of an array, the thread loop (index into `threads`) along it.
type ThreadAxes = Vec<Option<usize>>;

/// Per dimension, the thread loop (index into `threads`) that the reads
/// follow, and every offset from the thread's point at which the array is
/// read; `Err` says why the reads cannot be staged.
fn read_offsets(
    reads: &Reads,
    threads: &[String],
    rank: usize,
    cx: &Context,
) -> Result<(ThreadAxes, BTreeSet<Vec<i64>>), String> {
    let mut along: Option<Vec<Option<usize>>> = None;
    let mut offsets: BTreeSet<Vec<i64>> = BTreeSet::new();
    for (index, scope) in &reads.subs {
        if index.len() != rank {
            return Err(format!(
                "it is read with {} subscript(s) for {rank} dimension(s)",
                index.len()
            ));
        }
        // Per dimension: the thread loop along it, the constant, and the body's loop variables with their coefficients.
        let mut this_along = vec![None; rank];
        let mut terms: Vec<(usize, String, i64)> = Vec::new();
        let mut constants = vec![0; rank];
        for (k, e) in index.iter().enumerate() {
            let p = match (constant(e), cx.sub(e)) {
                (Some(c), _) => Poly([(Vec::new(), c)].into_iter().filter(|m| m.1 != 0).collect()),
                (None, Sub::Affine(p)) => p,
                _ => return Err(format!("its subscript `{e}` is not affine")),
            };
            for (monomial, coef) in &p.0 {
                match monomial.as_slice() {
                    [] => constants[k] = *coef,
                    [s] if threads.contains(s) && !scope.contains_key(s) => {
                        if *coef != 1 {
                            return Err(format!(
                                "its subscript `{e}` walks `{s}` with stride {coef}"
                            ));
                        }
                        let position = threads.iter().position(|t| t == s).unwrap_or(0);
                        if this_along.contains(&Some(position)) || this_along[k].is_some() {
                            return Err(format!("its subscript `{e}` mixes parallel loops"));
                        }
                        this_along[k] = Some(position);
                    }
                    [s] if scope.contains_key(s) => match &scope[s] {
                        Some(_) => terms.push((k, s.clone(), *coef)),
                        None => {
                            return Err(format!(
                                "its subscript `{e}` depends on `{s}`, whose loop bounds are not constants (or it runs more than {MAX_OFFSETS} times)"
                            ))
                        }
                    },
                    _ => {
                        return Err(format!(
                            "its subscript `{e}` depends on `{}`, not a constant offset",
                            monomial.join(" * ")
                        ))
                    }
                }
            }
        }
        match &along {
            None => along = Some(this_along),
            Some(a) if *a != this_along => {
                return Err(
                    "its reads do not follow the same parallel loops in each dimension".into(),
                )
            }
            _ => {}
        }
        // Every combination of the values of the loops in the subscripts.
        let vars: Vec<&String> = terms
            .iter()
            .map(|(_, v, _)| v)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let domains: Vec<&Vec<i64>> = vars
            .iter()
            .map(|v| scope[*v].as_ref().expect("checked above"))
            .collect();
        let count = domains
            .iter()
            .try_fold(1usize, |n, d| n.checked_mul(d.len()))
            .filter(|&n| n <= MAX_OFFSETS)
            .ok_or_else(|| format!("it is read at more than {MAX_OFFSETS} offsets per point"))?;
        for mut combination in 0..count {
            let mut value = BTreeMap::new();
            for (v, d) in vars.iter().zip(&domains) {
                value.insert(*v, d[combination % d.len()]);
                combination /= d.len();
            }
            let mut offset = constants.clone();
            for (k, v, coef) in &terms {
                offset[*k] += coef * value[v];
            }
            offsets.insert(offset);
        }
    }
    let along = along.ok_or("it is not read")?;
    Ok((along, offsets))
}

/// Why an array's reads cannot be staged in a tile of local (shared)
/// memory: a clause for the plan's memory choice.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotStaged(pub String);

impl From<String> for NotStaged {
    fn from(why: String) -> Self {
        NotStaged(why)
    }
}

impl From<&str> for NotStaged {
    fn from(why: &str) -> Self {
        NotStaged(why.to_string())
    }
}

/// Whether `array`, read in `body` (the kernel's body inside its parallel
/// loops `threads`, outermost first), can be staged, with the numbers;
/// `Err` says why it cannot (offsets that are not constants, ...).
pub fn analyse(
    array: &str,
    threads: &[String],
    body: &[Stmt],
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
) -> Result<(StagingNumbers, Tile), NotStaged> {
    let v = lookup(array, function, unit).ok_or("it is not declared")?;
    let extents: Vec<i64> = v
        .dims
        .iter()
        .map(|d| d.as_ref().and_then(constant))
        .collect::<Option<_>>()
        .filter(|d: &Vec<i64>| !d.is_empty() && !v.pointer)
        .ok_or("its extents are not constants")?;
    if threads.is_empty() {
        return Err("the kernel has no parallel loop".into());
    }
    let mut reads = Reads {
        subs: Vec::new(),
        refused: None,
    };
    collect(array, body, &mut Vec::new(), &mut reads);
    if let Some(why) = reads.refused {
        return Err(NotStaged(why));
    }
    let loop_vars: BTreeSet<String> = facts.loops.keys().cloned().collect();
    let written: BTreeSet<String> = facts.scalars.keys().cloned().collect();
    let cx = Context {
        loop_vars: &loop_vars,
        written: &written,
    };
    let rank = extents.len();
    let (along, offsets) = read_offsets(&reads, threads, rank, &cx)?;
    if offsets.is_empty() {
        return Err("none of its reads runs".into());
    }
    let block = block_shape(threads.len());
    let points: i64 = block.iter().product();
    let mut dims = Vec::new();
    let mut numbers_offsets = Vec::new();
    let (mut guard_low, mut guard_high) = (false, false);
    for k in 0..rank {
        let lo = offsets.iter().map(|o| o[k]).min().unwrap_or(0);
        let hi = offsets.iter().map(|o| o[k]).max().unwrap_or(0);
        let thread_loop = along[k].map(|p| (p, threads[p].clone(), block[p]));
        let (first, last) = match &thread_loop {
            Some((_, var, b)) => {
                let l = facts
                    .loops
                    .get(var)
                    .ok_or("a parallel loop is not in the nest")?;
                match (constant(&l.lower), constant(&l.upper)) {
                    (Some(lower), Some(upper)) => {
                        let count = (upper - lower).max(0);
                        let rounded = (count + b - 1) / b * b;
                        (Some(lower + lo), Some(lower + rounded - 1 + hi))
                    }
                    _ => (None, None),
                }
            }
            None => (Some(lo), Some(hi)),
        };
        guard_low |= first.is_none_or(|f| f < 0);
        guard_high |= last.is_none_or(|l| l >= extents[k]);
        let extent = match &thread_loop {
            Some((_, _, b)) => b + hi - lo,
            None => hi - lo + 1,
        };
        numbers_offsets.push((
            thread_loop.as_ref().map_or(String::new(), |t| t.1.clone()),
            lo,
            hi,
        ));
        dims.push(TileDim {
            thread_loop,
            low: lo,
            extent,
        });
    }
    let tile = Tile {
        array: array.to_string(),
        extents,
        dims,
        guard_low,
        guard_high,
    };
    let elements = tile.elements();
    let numbers = StagingNumbers {
        distinct_offsets: offsets.len(),
        offsets: numbers_offsets,
        block,
        tile: tile.dims.iter().map(|d| d.extent).collect(),
        tile_bytes: (elements as u64).saturating_mul(v.elem_bytes()),
        overfetch: elements as f64 / points as f64,
        reuse: (offsets.len() as f64 * points as f64) / elements as f64,
    };
    // The staging code's names must not clash with the program's.
    let taken: BTreeSet<&String> = facts
        .loops
        .keys()
        .chain(facts.scalars.keys())
        .chain(facts.subs.keys())
        .collect();
    let mut names = tile.names();
    names.push(LOCAL_THREAD.to_string());
    for name in &names {
        if taken.contains(name) || lookup(name, function, unit).is_some() {
            return Err(format!("the staging code's name `{name}` is taken by the program").into());
        }
    }
    if array == ELEMENT {
        return Err(format!("the staging loop's index is named `{ELEMENT}`").into());
    }
    Ok((numbers, tile))
}

#[cfg(test)]
mod tests {
    use super::super::{plan_file, Target};
    use crate::front::c::CFile;
    use crate::model::device::Device;

    /// The memory choice of `array` in the first nest of `body`, a function
    /// over `double a[64][64]`, `double b[64][64]` and `double out[64][64]`.
    fn choice(body: &str, array: &str) -> super::super::criteria::MemoryChoice {
        let text = format!(
            "double a[64][64];\ndouble b[64][64];\ndouble out[64][64];\ndouble b_tile;\nvoid f(void) {{\n{body}\n}}\n"
        );
        let pre = format!("# 1 \"t.c\"\n{text}");
        let file = CFile::from_preprocessed("t.c", text.clone(), pre)
            .unwrap_or_else(|_| panic!("does not parse"));
        let unit = crate::front::c::lower_unit(&file);
        let plan = plan_file(&file, &unit, Target::Opencl, Device::default_device());
        plan.nests[0]
            .memory
            .iter()
            .find(|m| m.array == array)
            .cloned()
            .unwrap_or_else(|| panic!("no choice for {array}"))
    }

    #[test]
    fn transposed_reads_stage_a_tile_along_the_loops_they_follow() {
        let c = choice(
            "for (int i = 0; i < 60; i++) for (int j = 0; j < 60; j++) out[i][j] = a[j][i] + a[j+1][i] + a[j+2][i+1];",
            "a",
        );
        assert_eq!(c.choice, "shared memory", "{}", c.reason);
        let tile = c.tile.expect("a tile");
        // Dimension 0 follows `j` (32 threads), dimension 1 follows `i` (8 threads).
        assert_eq!(tile.dims[0].thread_loop, Some((1, "j".to_string(), 32)));
        assert_eq!(tile.dims[1].thread_loop, Some((0, "i".to_string(), 8)));
        assert_eq!((tile.dims[0].extent, tile.dims[1].extent), (34, 9));
        assert!(tile.guard_high && !tile.guard_low);
    }

    #[test]
    fn strided_and_mixed_reads_keep_the_read_only_path() {
        let strided = choice(
            "for (int i = 0; i < 30; i++) for (int j = 0; j < 60; j++) out[i][j] = a[2*i][j] + a[2*i+1][j];",
            "a",
        );
        assert_eq!(strided.choice, "read-only path");
        assert!(
            strided.reason.contains("walks `i` with stride 2"),
            "{}",
            strided.reason
        );
        let mixed = choice(
            "for (int i = 0; i < 60; i++) for (int j = 0; j < 60; j++) out[i][j] = a[i][j] + a[3][j] + a[i][j+1];",
            "a",
        );
        assert_eq!(mixed.choice, "read-only path");
        assert!(
            mixed
                .reason
                .contains("do not follow the same parallel loops"),
            "{}",
            mixed.reason
        );
    }

    #[test]
    fn a_tile_name_the_program_uses_keeps_the_read_only_path() {
        let c = choice(
            "for (int i = 1; i < 63; i++) for (int j = 1; j < 63; j++) out[i][j] = b[i-1][j] + b[i+1][j] + b[i][j-1] + b[i][j+1] + b_tile;",
            "b",
        );
        assert_eq!(c.choice, "read-only path");
        assert!(c.reason.contains("`b_tile` is taken"), "{}", c.reason);
        // The same reads of `a` are staged.
        let c = choice(
            "for (int i = 1; i < 63; i++) for (int j = 1; j < 63; j++) out[i][j] = a[i-1][j] + a[i+1][j] + a[i][j-1] + a[i][j+1];",
            "a",
        );
        assert_eq!(c.choice, "shared memory", "{}", c.reason);
    }
}
