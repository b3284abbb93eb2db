//! The autotuner behind `stencilc tune`: the space of schedules a back-end can
//! run ([`space`]), measuring its candidates ([`search`]), the persistent
//! tuning database that `stencilc run` consults ([`db`]), the SDSL
//! autotuner's configuration file ([`config`]), and one tuning from start to
//! end ([`tuner`]), which `stencilc tune` and Python's `stencilc.tune` call.
//!
//! Everything the tuner varies is a field of [`RunOptions`]: it tunes whatever
//! the back-ends honour (block, points per thread, staging, fusion, time
//! tiling, CPU tiles, threads, the order of a CPU tile's steps) and nothing else, through the same run API as
//! `stencilc run`.

pub mod config;
pub mod cpu_model;
pub mod db;
pub mod search;
pub mod space;
pub mod tuner;

use serde::{Deserialize, Serialize};

use crate::analysis::tile::TileOrder;
use crate::exec::options::RunOptions;

/// The schedule knobs of one configuration: the [`RunOptions`] fields the
/// tuner sets. `None` leaves a knob to the back-end's own choice.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Knobs {
    /// GPU threads per block, innermost axis first (`--block`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<Vec<u32>>,
    /// GPU points per thread, innermost axis first (`--tile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tile: Option<Vec<u32>>,
    /// GPU consecutive x points per thread as one vector access (`--vector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<u32>,
    /// Shared-memory staging (`--shm none|auto|FIELDS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm: Option<String>,
    /// Fuse stencils (`--fuse`).
    #[serde(default)]
    pub fuse: bool,
    /// Time steps per launch or tile sweep (`--time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<u32>,
    /// The C back-end's tile sizes, innermost axis first (`--cpu-tile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_tile: Option<Vec<u32>>,
    /// OpenMP threads of the C back-end (`--threads`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// The order of the C back-end's time tiles' inner steps (`--cpu-order`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_order: Option<TileOrder>,
}

fn axes(sizes: &[u32]) -> String {
    sizes
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

impl Knobs {
    /// `options` with these knobs, every knob `options` already sets kept
    /// (command-line flags win over a tuned schedule, field by field).
    pub fn fill(&self, options: &RunOptions) -> RunOptions {
        let mut out = options.clone();
        out.block = out.block.or_else(|| self.block.clone());
        out.tile = out.tile.or_else(|| self.tile.clone());
        // A GPU record (it sets the block) without a vector ran without one: a
        // region pragma's `vector:` must not add one.
        out.vector = out
            .vector
            .or(self.vector)
            .or_else(|| self.block.as_ref().map(|_| 1));
        out.shm = out.shm.or_else(|| self.shm.clone());
        out.fuse |= self.fuse;
        out.time = out.time.or(self.time);
        out.cpu_tile = out.cpu_tile.or_else(|| self.cpu_tile.clone());
        out.threads = out.threads.or(self.threads);
        out.cpu_order = out.cpu_order.or(self.cpu_order);
        out
    }

    /// `options` with these knobs replacing its own (the tuner's candidates,
    /// which print no notes: one per candidate would bury the tuner's report).
    pub fn apply(&self, options: &RunOptions) -> RunOptions {
        RunOptions {
            quiet: true,
            block: self.block.clone(),
            tile: self.tile.clone(),
            vector: self.vector,
            shm: self.shm.clone(),
            fuse: self.fuse,
            time: self.time,
            cpu_tile: self.cpu_tile.clone(),
            threads: self.threads,
            cpu_order: self.cpu_order,
            ..options.clone()
        }
    }

    /// The command-line flags that ask for these knobs
    /// (`--cpu-tile 256,16 --time 4 --threads 2`); empty when none is set.
    pub fn flags(&self) -> String {
        let mut parts = Vec::new();
        if let Some(b) = &self.block {
            parts.push(format!("--block {}", axes(b)));
        }
        if let Some(t) = &self.tile {
            parts.push(format!("--tile {}", axes(t)));
        }
        if let Some(w) = self.vector {
            parts.push(format!("--vector {w}"));
        }
        if let Some(s) = &self.shm {
            parts.push(format!("--shm {s}"));
        }
        if self.fuse {
            parts.push("--fuse".into());
        }
        if let Some(t) = &self.cpu_tile {
            parts.push(format!("--cpu-tile {}", axes(t)));
        }
        if let Some(t) = self.time {
            parts.push(format!("--time {t}"));
        }
        if let Some(order) = self.cpu_order {
            parts.push(format!("--cpu-order {}", order.spelling()));
        }
        if let Some(n) = self.threads {
            parts.push(format!("--threads {n}"));
        }
        parts.join(" ")
    }

    /// The region pragma asking for the GPU knobs, ready to paste:
    /// `#pragma sdsl begin gpu(block:32,8 tile:1,4 vector:2 shm:none fuse:on
    /// time:2)`; the region front-end reads every one of them back. The C
    /// back-end's knobs have no pragma spelling: [`Knobs::beyond_pragma`].
    pub fn pragma(&self) -> String {
        let mut parts = Vec::new();
        if let Some(b) = &self.block {
            parts.push(format!("block:{}", axes(b)));
        }
        if let Some(t) = &self.tile {
            parts.push(format!("tile:{}", axes(t)));
        }
        if let Some(w) = self.vector {
            parts.push(format!("vector:{w}"));
        }
        if let Some(s) = &self.shm {
            parts.push(format!("shm:{s}"));
        }
        if self.fuse {
            parts.push("fuse:on".into());
        }
        parts.push(format!("time:{}", self.time.unwrap_or(1)));
        format!("#pragma sdsl begin gpu({})", parts.join(" "))
    }

    /// The flags of the knobs [`Knobs::pragma`] cannot carry (`--cpu-tile`,
    /// `--threads`, `--cpu-order`); empty when none is set.
    pub fn beyond_pragma(&self) -> String {
        Knobs {
            cpu_tile: self.cpu_tile.clone(),
            threads: self.threads,
            cpu_order: self.cpu_order,
            ..Knobs::default()
        }
        .flags()
    }

    /// A short label for tables and plots (the flags, or `default`).
    pub fn label(&self) -> String {
        let flags = self.flags();
        if flags.is_empty() {
            "default".into()
        } else {
            flags
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_knobs_win_field_by_field() {
        let tuned = Knobs {
            block: Some(vec![64, 4]),
            tile: Some(vec![1, 4]),
            time: Some(3),
            ..Knobs::default()
        };
        let given = RunOptions {
            block: Some(vec![32, 8]),
            ..RunOptions::default()
        };
        let filled = tuned.fill(&given);
        assert_eq!(filled.block, Some(vec![32, 8]));
        assert_eq!(filled.tile, Some(vec![1, 4]));
        assert_eq!(filled.time, Some(3));
        assert_eq!(filled.vector, Some(1));
        assert_eq!(
            tuned.pragma(),
            "#pragma sdsl begin gpu(block:64,4 tile:1,4 time:3)"
        );
        assert_eq!(tuned.beyond_pragma(), "");
        assert_eq!(tuned.flags(), "--block 64,4 --tile 1,4 --time 3");
        assert_eq!(Knobs::default().label(), "default");
    }

    /// Every GPU knob the tuner sets, printed as the pragma and read back by
    /// the region front-end, asks for the same schedule as the knobs.
    #[test]
    fn the_pragma_carries_every_gpu_knob_back_to_the_same_request() {
        let tuned = Knobs {
            block: Some(vec![8, 8, 8]),
            tile: Some(vec![1, 1, 2]),
            vector: Some(2),
            shm: Some("none".into()),
            fuse: true,
            time: Some(6),
            ..Knobs::default()
        };
        let pragma = tuned.pragma();
        assert_eq!(
            pragma,
            "#pragma sdsl begin gpu(block:8,8,8 tile:1,1,2 vector:2 shm:none fuse:on time:6)"
        );
        let host = format!(
            "{pragma}\nint n;\ngrid g[n][n][n];\nfloat griddata a on g at 0,1;\n\
             iterate 10 {{\n  stencil s {{\n    [1:n-2][1:n-2][1:n-2] : [1]a[0][0][0] = \
             0.5f*([0]a[0][0][-1] + [0]a[0][0][1]);\n  }}\n}}\n#pragma sdsl end\n"
        );
        let source = crate::source::SourceFile::new("host.c", host);
        let regions = crate::front::parse_regions(source).expect("the region parses");
        let program = &regions[0].program;
        let hints = &program.hints;
        let from_pragma = crate::schedule::with_pragma(program, &Default::default()).unwrap();
        let from_knobs = tuned.apply(&RunOptions::default()).schedule_request();
        assert_eq!(hints.block_values().unwrap(), from_knobs.block);
        assert_eq!(hints.tile_values().unwrap(), from_knobs.tile);
        assert_eq!(from_pragma.vector, from_knobs.vector);
        assert_eq!(from_pragma.shm, from_knobs.shm);
        assert_eq!(from_pragma.fuse, from_knobs.fuse);
        let time = hints.time.as_ref().unwrap().evaluate("time", &hints.values);
        assert_eq!(time.ok(), from_knobs.time_steps);
        // A flag given on the command line wins over the pragma.
        let given = crate::schedule::ScheduleRequest {
            vector: Some(4),
            shm: crate::schedule::ShmRequest::Names(vec!["a".into()]),
            ..Default::default()
        };
        let merged = crate::schedule::with_pragma(program, &given).unwrap();
        assert_eq!(merged.vector, Some(4));
        assert_eq!(merged.shm, given.shm);
        // The C back-end's knobs are not in the pragma, and say so.
        let cpu = Knobs {
            cpu_tile: Some(vec![64, 8]),
            threads: Some(2),
            time: Some(3),
            ..Knobs::default()
        };
        assert_eq!(cpu.beyond_pragma(), "--cpu-tile 64,8 --threads 2");
    }

    #[test]
    fn the_cpu_order_is_a_flag_and_a_database_field() {
        let march = Knobs {
            time: Some(5),
            cpu_order: Some(TileOrder::March),
            ..Knobs::default()
        };
        assert_eq!(march.flags(), "--time 5 --cpu-order march");
        let json = serde_json::to_string(&march).unwrap();
        assert!(json.contains(r#""cpu_order":"march""#), "{json}");
        assert_eq!(serde_json::from_str::<Knobs>(&json).unwrap(), march);
        // Records written before the field existed still read.
        let old: Knobs = serde_json::from_str(r#"{"time":5,"fuse":false}"#).unwrap();
        assert_eq!(old.cpu_order, None);
        // A `--cpu-order` given on the command line wins over the record.
        let given = RunOptions {
            cpu_order: Some(TileOrder::Wavefront),
            ..RunOptions::default()
        };
        assert_eq!(march.fill(&given).cpu_order, Some(TileOrder::Wavefront));
        assert_eq!(
            march.fill(&RunOptions::default()).cpu_order,
            Some(TileOrder::March)
        );
    }
}
