//! Command-line arguments shared by the subcommands, and their parsers.
//!
//! Value parsers here only check syntax (`NAME=VALUE`, `32,8`); whether a name is
//! a parameter or a field of the program is checked once the program is parsed.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use stencilc::analysis::tile::TileOrder;
use stencilc::exec::backend::Backend;
use stencilc::exec::options::RunOptions;

/// The program to work on.
#[derive(Args, Clone, Debug)]
pub struct ProgramArgs {
    /// The program: a `.sdsl` file, or a C/C++ file holding `#pragma sdsl begin` ...
    /// `#pragma sdsl end` regions.
    #[arg(value_name = "PROGRAM")]
    pub program: PathBuf,

    /// Which region of a C/C++ file to use, counting from 0 [default: 0].
    #[arg(long, value_name = "N")]
    pub region: Option<usize>,
}

/// Parameter values.
#[derive(Args, Clone, Debug, Default)]
pub struct ParamArgs {
    /// Sets a parameter, parsed as the parameter's type (`--set dim0=64`,
    /// `--set sigma=0.05`). Grid sizes may be left out when an input file's shape
    /// gives them.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_assignment)]
    pub sets: Vec<Assignment>,
}

/// Input files that give grid sizes, for the commands that read no values
/// (`explain`, `emit`).
#[derive(Args, Clone, Debug, Default)]
pub struct SizeInputArgs {
    /// A field's input file, as `run --input` takes it (`.npy`, `.png`/`.pgm`,
    /// `.raw`): the file is checked as `run` checks it, and a grid size left
    /// out of `--set` is taken from its shape, so that the kernels are those a
    /// run on it would compile. Its values are not read.
    #[arg(long = "input", value_name = "FIELD=FILE", value_parser = parse_field_file)]
    pub inputs: Vec<FieldFile>,
}

/// How to run on a GPU: threads per block, points per thread, shared memory.
#[derive(Args, Clone, Debug, Default)]
pub struct ScheduleArgs {
    /// Threads per block, innermost axis first as CUDA's x,y,z (`--block 32,8`).
    #[arg(long, value_name = "X,Y[,Z]", value_parser = parse_axes)]
    pub block: Option<Axes>,

    /// Points computed per thread along each axis, innermost first (`--tile 1,4`).
    #[arg(long, value_name = "X,Y[,Z]", value_parser = parse_axes)]
    pub tile: Option<Axes>,

    /// Points computed per thread along x, consecutive, each row of them read
    /// and written as one aligned vector access (2 or 4; at most 16 bytes:
    /// `float4`, `double2`). Replaces the x of `--tile`; no field is then
    /// staged in shared memory [default: chosen by the model]
    #[arg(long, value_name = "W")]
    pub vector: Option<u32>,

    /// Fields to stage in GPU shared memory: a comma-separated list of fields,
    /// `none`, or `auto` (let stencilc decide).
    #[arg(long, value_name = "LIST|none|auto", value_parser = parse_shm)]
    pub shm: Option<ShmChoice>,

    /// Fuse consecutive stencils into one kernel where that is legal (same
    /// points, and each reads what the one before writes only at offset zero).
    #[arg(long)]
    pub fuse: bool,

    /// The fields read after the run (`run` takes its `--output` fields when
    /// this is not given and there is no `--verify`). With `--fuse`, a level a
    /// fused kernel recomputes in shared memory that belongs to none of them
    /// and that nothing else reads is not written to global memory.
    #[arg(long, value_name = "FIELD[,FIELD...]", value_delimiter = ',')]
    pub results: Option<Vec<String>>,
    /// Compute flattened field indices in 64 bits in the GPU kernels even for
    /// grids of fewer than 2^31 points (chosen anyway for larger grids).
    #[arg(long)]
    pub index64: bool,

    /// Blocks of each CUDA kernel that should fit on an SM at once:
    /// `__launch_bounds__(threads, N)`, so that ptxas may use up to
    /// `65536 / (threads × N)` registers a thread instead of trading them,
    /// spills included, for occupancy (OpenCL kernels are unchanged)
    /// [default: the threads only]
    #[arg(long = "min-blocks", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=32))]
    pub min_blocks: Option<u32>,

    /// Rank the model's K fastest candidate schedules of each stencil on the
    /// registers ptxas gives them: each is compiled (NVRTC, `ptxas -v`) and the
    /// one whose loads those registers hold in the fewest rounds wins
    /// (bench/gpu/MODEL.md, "`--ptxas-rank`"). CUDA only; needs NVRTC and
    /// ptxas [default: off: the model's estimated registers]
    #[arg(long = "ptxas-rank", value_name = "K", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub ptxas_rank: Option<u32>,

    /// Time steps each launch (GPU) or tile sweep (`--backend c`) advances by
    /// time tiling; 1 turns it off [default: chosen by the model].
    #[arg(long = "time", value_name = "T", value_parser = clap::value_parser!(u32).range(1..))]
    pub time: Option<u32>,

    /// Tile sizes in points for `--backend c`, innermost axis first
    /// (`--cpu-tile 256,32`) [default: chosen by the C back-end].
    #[arg(long, value_name = "X,Y[,Z]", value_parser = parse_axes)]
    pub cpu_tile: Option<Axes>,

    /// OpenMP threads for `--backend c`, at most four per hardware thread
    /// [default: OpenMP's, `OMP_NUM_THREADS`].
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<u32>,

    /// Order of a time tile's inner steps for `--backend c`: `levels` (each
    /// step over the whole tile), `wavefront` (all steps in one wave along
    /// the outermost axis) or `march` (tiles of the inner axes marching along
    /// the outermost one, which they cover whole; one stencil part updating
    /// one field of two levels) [default: chosen by the model].
    #[arg(long, value_name = "ORDER")]
    pub cpu_order: Option<CpuOrderArg>,
}

/// The orders `--cpu-order` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CpuOrderArg {
    /// Each inner step over the whole tile before the next.
    Levels,
    /// Every inner step in one wave of rows along the outermost axis.
    Wavefront,
    /// Tiles of the inner axes marching along the outermost one, each inner
    /// step a ring of planes (one stencil part updating one field of two
    /// levels).
    March,
}

impl From<CpuOrderArg> for TileOrder {
    fn from(arg: CpuOrderArg) -> TileOrder {
        match arg {
            CpuOrderArg::Levels => TileOrder::Levels,
            CpuOrderArg::Wavefront => TileOrder::Wavefront,
            CpuOrderArg::March => TileOrder::March,
        }
    }
}

/// Code generation that changes results.
#[derive(Args, Clone, Debug, Default)]
pub struct FmaArgs {
    /// Let the compilers contract `a * b + c` into fused multiply-adds (NVRTC
    /// --fmad=true, OpenCL -cl-mad-enable, C -ffp-contract=fast): faster, but
    /// results then differ from the interpreter's in the last bits.
    #[arg(long)]
    pub fma: bool,
}

impl ScheduleArgs {
    /// The back-end options these flags ask for (the rest left at their defaults).
    pub fn run_options(&self) -> RunOptions {
        RunOptions {
            block: self.block.as_ref().map(|a| a.0.clone()),
            tile: self.tile.as_ref().map(|a| a.0.clone()),
            vector: self.vector,
            shm: self.shm.as_ref().map(ShmChoice::to_option_string),
            fuse: self.fuse,
            results: self.results.clone(),
            index64: self.index64,
            min_blocks: self.min_blocks,
            ptxas_rank: self.ptxas_rank,
            time: self.time,
            cpu_tile: self.cpu_tile.as_ref().map(|a| a.0.clone()),
            threads: self.threads,
            cpu_order: self.cpu_order.map(TileOrder::from),
            ..RunOptions::default()
        }
    }
}

/// How many OpenMP threads `--threads` may ask for per hardware thread of
/// this machine: more only wait on each other (thousands took minutes on a
/// small grid, and 100,000 made libgomp abort the process).
pub const THREADS_PER_CORE: u32 = 4;

/// The most `--threads`: [`THREADS_PER_CORE`] × the available parallelism.
pub fn max_threads() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    u32::try_from(cores)
        .unwrap_or(u32::MAX)
        .saturating_mul(THREADS_PER_CORE)
}

/// `--threads N`: from 1 to [`max_threads`].
pub fn parse_threads(text: &str) -> Result<u32, String> {
    let cap = max_threads();
    let cores = cap / THREADS_PER_CORE;
    let range = format!(
        "give a number of threads from 1 to {cap} ({THREADS_PER_CORE} x the {cores} hardware thread{} here)",
        if cores == 1 { "" } else { "s" }
    );
    match text.trim().parse::<u64>() {
        Ok(0) => Err(format!("0 threads cannot run anything; {range}")),
        Ok(n) if n <= u64::from(cap) => Ok(n as u32),
        Ok(n) => Err(format!(
            "{n} threads is more than the limit of {cap}; {range}"
        )),
        Err(_) => Err(format!("`{text}` is not a number; {range}")),
    }
}

/// `NAME=VALUE` as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// Left of the first `=`.
    pub name: String,
    /// Right of the first `=`.
    pub value: String,
}

/// `FIELD=FILE` for `--input` and `--output`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldFile {
    /// The field's name.
    pub field: String,
    /// The file.
    pub path: PathBuf,
}

/// One to three positive sizes, innermost axis first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axes(pub Vec<u32>);

/// The `--shm` choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShmChoice {
    /// Stage nothing in shared memory.
    None,
    /// Let the schedule heuristic decide.
    Auto,
    /// Stage exactly these fields.
    Fields(Vec<String>),
}

impl ShmChoice {
    /// The spelling the back-ends receive in `RunOptions::shm`.
    pub fn to_option_string(&self) -> String {
        match self {
            ShmChoice::None => "none".into(),
            ShmChoice::Auto => "auto".into(),
            ShmChoice::Fields(names) => names.join(","),
        }
    }
}

/// The back-ends `--backend` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// The reference interpreter.
    Interp,
    /// Generated C with OpenMP, compiled with the system C compiler.
    C,
    /// Generated OpenCL C on any OpenCL platform.
    Opencl,
    /// Generated CUDA C through NVRTC.
    Cuda,
    /// The fastest back-end available here.
    Auto,
}

impl From<BackendArg> for Backend {
    fn from(arg: BackendArg) -> Backend {
        match arg {
            BackendArg::Interp => Backend::Interp,
            BackendArg::C => Backend::C,
            BackendArg::Opencl => Backend::OpenCl,
            BackendArg::Cuda => Backend::Cuda,
            BackendArg::Auto => Backend::Auto,
        }
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits at the first `=`; the name must be an identifier, the value non-empty.
fn split_assignment(text: &str, what: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!("expected {what}, with an `=`"));
    };
    let name = name.trim();
    if !is_identifier(name) {
        return Err(format!(
            "`{name}` is not a name; expected {what} with a program identifier on the left"
        ));
    }
    if value.is_empty() {
        return Err(format!("nothing after `{name}=`; expected {what}"));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Parses `NAME=VALUE`.
pub fn parse_assignment(text: &str) -> Result<Assignment, String> {
    let (name, value) = split_assignment(text, "NAME=VALUE")?;
    Ok(Assignment {
        name,
        value: value.trim().to_string(),
    })
}

/// Parses `FIELD=FILE`.
pub fn parse_field_file(text: &str) -> Result<FieldFile, String> {
    let (field, path) = split_assignment(text, "FIELD=FILE")?;
    Ok(FieldFile {
        field,
        path: PathBuf::from(path),
    })
}

/// Parses `x[,y[,z]]`: one to three positive integers.
pub fn parse_axes(text: &str) -> Result<Axes, String> {
    let sizes = text
        .split(',')
        .map(|part| match part.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "`{}` is not a positive integer; expected sizes like `32,8` or `8,8,4`",
                part.trim()
            )),
        })
        .collect::<Result<Vec<u32>, String>>()?;
    if sizes.len() > 3 {
        return Err(format!(
            "{} sizes given; expected one to three, innermost axis first",
            sizes.len()
        ));
    }
    Ok(Axes(sizes))
}

/// Parses `none`, `auto`, or a comma-separated list of field names.
pub fn parse_shm(text: &str) -> Result<ShmChoice, String> {
    match text.trim() {
        "none" => Ok(ShmChoice::None),
        "auto" => Ok(ShmChoice::Auto),
        list => {
            let names: Vec<String> = list.split(',').map(|n| n.trim().to_string()).collect();
            match names.iter().find(|n| !is_identifier(n)) {
                Some(bad) => Err(format!(
                    "`{bad}` is not a field name; expected `none`, `auto` or fields like `img,tmp`"
                )),
                None => Ok(ShmChoice::Fields(names)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_split_at_the_first_equals_sign() {
        assert_eq!(
            parse_assignment("sigma = 0.5").unwrap(),
            Assignment {
                name: "sigma".into(),
                value: "0.5".into()
            }
        );
        let file = parse_field_file("img=dir/a=b.png").unwrap();
        assert_eq!(file.field, "img");
        assert_eq!(file.path, PathBuf::from("dir/a=b.png"));
        assert!(parse_assignment("n").unwrap_err().contains("`=`"));
        assert!(parse_assignment("=3").unwrap_err().contains("not a name"));
        assert!(parse_assignment("2n=3").unwrap_err().contains("not a name"));
        assert!(parse_assignment("n=")
            .unwrap_err()
            .contains("nothing after"));
    }

    #[test]
    fn axes_take_one_to_three_positive_sizes() {
        assert_eq!(parse_axes("32").unwrap(), Axes(vec![32]));
        assert_eq!(parse_axes("32, 8").unwrap(), Axes(vec![32, 8]));
        assert_eq!(parse_axes("8,8,4").unwrap(), Axes(vec![8, 8, 4]));
        assert!(parse_axes("8,8,4,2").unwrap_err().contains("one to three"));
        assert!(parse_axes("0,8").unwrap_err().contains("`0`"));
        assert!(parse_axes("x").is_err());
        assert!(parse_axes("").is_err());
    }

    #[test]
    fn shm_is_none_auto_or_fields() {
        assert_eq!(parse_shm("none").unwrap(), ShmChoice::None);
        assert_eq!(parse_shm("auto").unwrap(), ShmChoice::Auto);
        let fields = parse_shm("img, tmp").unwrap();
        assert_eq!(fields, ShmChoice::Fields(vec!["img".into(), "tmp".into()]));
        assert_eq!(fields.to_option_string(), "img,tmp");
        assert!(parse_shm("img,,tmp").is_err());
    }
}
