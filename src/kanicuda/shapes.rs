//! The launches a synthesis profiles and verifies on, derived from the one
//! the user gave.
//!
//! Profiled: the given grid and block; the block one thread shorter along
//! each axis longer than 1, one axis at a time (so that no two block sizes
//! are always equal and none is constant); the grid one block smaller along
//! each axis (or one larger along x when it is a single block) with the given
//! block and with the first shorter one; and the block two threads shorter
//! along each axis, for a third size. An expression that holds on all of them has seen two block shapes
//! and two grid sizes at least. Verified: other blocks — two threads fewer
//! along x, along y, one more along x with one fewer along y, one more along
//! y with one fewer along x, a single row — each on the largest grid inside
//! the given launch's extent and on the smallest grid covering it (partial
//! blocks at the edges), minus the profiled launches.

use crate::emu::Launch;

fn minus(v: [u32; 3], by: u32) -> [u32; 3] {
    v.map(|d| if d > by { d - by } else { d })
}

/// The launches to profile, the given one first.
pub fn profile_launches(given: Launch) -> Vec<Launch> {
    let mut grid = minus(given.grid, 1);
    if grid == given.grid {
        grid[0] += 1;
    }
    let mut launches = vec![given];
    // One axis shorter at a time, so that no two block sizes stay equal (a
    // square block would let `blockDim.x` stand for `blockDim.y`) and none
    // stays constant (which would let a number stand for it).
    for axis in 0..3 {
        if given.block[axis] > 1 {
            let mut block = given.block;
            block[axis] -= 1;
            launches.push(Launch {
                grid: given.grid,
                block,
            });
            if launches.len() == 2 {
                launches.push(Launch { grid, block });
            }
        }
    }
    // A third size per axis, so that a guard true on the last thread of two
    // sizes by coincidence (`blockDim.y >= threadIdx.y + threadIdx.y` on
    // blocks 4 and 3 high) meets one where it is not.
    for axis in 0..3 {
        if given.block[axis] > 2 {
            let mut block = given.block;
            block[axis] -= 2;
            launches.push(Launch {
                grid: given.grid,
                block,
            });
        }
    }
    launches.push(Launch {
        grid,
        block: given.block,
    });
    let mut out = Vec::new();
    for launch in launches {
        if !out.contains(&launch) {
            out.push(launch);
        }
    }
    out
}

/// The launches to verify on, none of them in `profiled`.
pub fn verify_launches(given: Launch, profiled: &[Launch]) -> Vec<Launch> {
    let [bx, by, bz] = given.block;
    let less = |v: u32, by: u32| if v > by { v - by } else { v };
    let blocks = [
        [less(bx, 2), by, bz],
        [bx, less(by, 2), bz],
        [bx + 1, less(by, 1), bz],
        [less(bx, 1), by + 1, bz],
        [bx, 1, bz],
        given.block,
    ];
    let extent: Vec<u64> = (0..3)
        .map(|d| u64::from(given.grid[d]) * u64::from(given.block[d]))
        .collect();
    let mut out = Vec::new();
    for block in blocks {
        let fits = |d: usize| (extent[d] / u64::from(block[d])).max(1) as u32;
        let covers = |d: usize| extent[d].div_ceil(u64::from(block[d])) as u32;
        let inside = [fits(0), fits(1), fits(2)];
        let covering = [covers(0), covers(1), covers(2)];
        let more = [given.grid[0] + 1, given.grid[1] + 1, given.grid[2]];
        for grid in [inside, covering, more] {
            let launch = Launch { grid, block };
            if !profiled.contains(&launch) && !out.contains(&launch) {
                out.push(launch);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_two_blocks_and_two_grids_and_verifies_elsewhere() {
        let given = Launch {
            grid: [2, 2, 1],
            block: [4, 4, 1],
        };
        let p = profile_launches(given);
        let blocks: Vec<[u32; 3]> = p.iter().map(|l| l.block).collect();
        assert_eq!(
            blocks,
            [
                [4, 4, 1],
                [3, 4, 1],
                [3, 4, 1],
                [4, 3, 1],
                [2, 4, 1],
                [4, 2, 1],
                [4, 4, 1]
            ]
        );
        assert_eq!(p[2].grid, [1, 1, 1]);
        let v = verify_launches(given, &p);
        assert!(v.iter().all(|l| !p.contains(l)));
        // The largest grid of 2×4 blocks inside 8×8, and partial blocks.
        assert!(v.contains(&Launch {
            grid: [4, 2, 1],
            block: [2, 4, 1]
        }));
        assert!(v.contains(&Launch {
            grid: [2, 3, 1],
            block: [5, 3, 1]
        }));
        let single = Launch {
            grid: [1, 1, 1],
            block: [1, 1, 1],
        };
        assert_eq!(profile_launches(single)[1].grid, [2, 1, 1]);
    }
}
