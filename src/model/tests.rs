//! The model's arithmetic on cases computed by hand.

use super::*;
use warnings::ShapeSource::Given;

fn h100() -> &'static Device {
    Device::find("h100").unwrap()
}

fn access(level: &str, offset: Vec<i64>) -> Access {
    Access {
        level: level.into(),
        elem: 4,
        offset,
    }
}

/// `b[i] = a[i + shift]` over `n` floats, 256 threads per block.
fn copy_1d(n: i64, shift: i64) -> KernelSpec {
    KernelSpec {
        name: "copy".into(),
        role: Role::Stencil("copy".into()),
        block: [256, 1, 1],
        points_per_thread: [1, 1, 1],
        vector: 1,
        align_x: 1,
        bounds: vec![(0, n - 1)],
        grid_dims: vec![n as usize + 64],
        reads: vec![access("a", vec![shift])],
        writes: vec![access("b", vec![0])],
        tiles: vec![],
        instructions_per_thread: 10.0,
        fp64_per_thread: 0.0,
        instructions_per_thread_fma: 10.0,
        shared_bytes: 0,
        per_iteration: 1.0,
        sequential_loads: 1,
    }
}

#[test]
fn occupancy_follows_threads_registers_and_shared_memory() {
    let d = h100();
    // 256 threads at 32 registers: 8 blocks by threads (2048/256) and by
    // registers (65536 / (32*32*8)).
    let full = occupancy(d, 256, Some(32), 0).unwrap();
    assert_eq!((full.blocks_per_sm, full.fraction), (8, 1.0));
    // 64 registers: 2048 per warp, 16384 per block, 4 blocks, half the threads.
    let half = occupancy(d, 256, Some(64), 0).unwrap();
    assert_eq!((half.blocks_per_sm, half.fraction), (4, 0.5));
    assert_eq!(half.limiter, "registers");
    // 40 KiB + 1 KiB reserved per block: 228 KiB / 41 KiB = 5 blocks.
    let shared = occupancy(d, 256, Some(32), 40 * 1024).unwrap();
    assert_eq!(
        (shared.blocks_per_sm, shared.limiter.as_str()),
        (5, "shared memory")
    );
    // Registers are allocated per warp in units of 256: 33 registers take 40 per thread.
    assert_eq!(occupancy(d, 1024, Some(33), 0).unwrap().blocks_per_sm, 1);
    assert!(occupancy(d, 1024, Some(255), 0)
        .unwrap_err()
        .to_string()
        .contains("registers"));
    let err = occupancy(d, 2048, None, 0).unwrap_err().to_string();
    assert!(err.contains("1024 threads per block"), "{err}");
    let err = occupancy(d, 256, None, 64 * 1024).unwrap_err().to_string();
    assert!(err.contains("49152 bytes"), "{err}");
}

#[test]
fn an_aligned_copy_touches_one_line_per_warp_access() {
    let t = traffic::per_point(&copy_1d(1 << 20, 0), h100());
    // One 128-byte line for the read and one for the write per 32 points.
    assert_eq!(t.l1_wavefronts, 2.0 / 32.0);
    // 4 bytes read and 4 written per point, nothing more from L2.
    assert_eq!(t.dram, 8.0);
    assert_eq!(t.l2, 8.0);
    assert_eq!(t.rounds, 1);
}

#[test]
fn a_read_shifted_by_one_element_touches_two_lines() {
    let t = traffic::per_point(&copy_1d(1 << 20, 1), h100());
    assert_eq!(t.l1_wavefronts, 3.0 / 32.0);
    // The block's 256 reads span 1028 bytes: 33 sectors of 32 bytes, plus 32 written.
    assert_eq!(t.l2, (33.0 + 32.0) * 32.0 / 256.0);
}

#[test]
fn a_tile_costs_its_halo_and_one_round_of_fixed_shape_loads() {
    // 32x8 block over a 1024² f32 grid, tile with a halo of 1: 34 x 10 elements,
    // ceil(34/32) * ceil(10/8) = 4 loads per thread all issued before the first
    // shared store (one round), 5 reads per point from it.
    let mut spec = copy_1d(16, 0);
    spec.block = [32, 8, 1];
    spec.bounds = vec![(1, 1022), (1, 1022)];
    spec.grid_dims = vec![1024, 1024];
    spec.reads = vec![];
    spec.writes = vec![access("b", vec![0, 0])];
    spec.tiles = vec![Tile {
        level: "a".into(),
        elem: 4,
        halo: vec![(-1, 1), (-1, 1)],
        reads_per_point: 5,
        offsets: vec![],
    }];
    let t = traffic::per_point(&spec, h100());
    assert_eq!(t.rounds, 1);
    assert_eq!(t.shared, (340.0 / 256.0 + 5.0) * 4.0);
    assert_eq!(t.dram, 8.0);
    assert_eq!(t.dram_overfetch, 0.0);
    // A halo of 20 rows: 2 x ceil(48/8) = 12 loads, still unrolled: one round.
    spec.tiles[0].halo = vec![(-20, 20), (-1, 1)];
    assert_eq!(traffic::per_point(&spec, h100()).rounds, 1);
    // 32x1 block, halo of 20 rows: 2 x 41 = 82 loads, more than the 32
    // unrolled: strided loops, one round per load.
    spec.block = [32, 1, 1];
    assert_eq!(traffic::per_point(&spec, h100()).rounds, 82);
}

#[test]
fn a_streaming_run_loads_the_rows_its_points_share_once() {
    // b[y][x] = a[y-1][x] + a[y][x] + a[y+1][x] on a 1024² f32 grid, block 32x4.
    let mut spec = copy_1d(16, 0);
    spec.block = [32, 4, 1];
    spec.bounds = vec![(0, 1023), (0, 1023)];
    spec.grid_dims = vec![1024, 1024];
    spec.reads = vec![
        access("a", vec![-1, 0]),
        access("a", vec![0, 0]),
        access("a", vec![1, 0]),
    ];
    spec.writes = vec![access("b", vec![0, 0])];
    // One point per thread: a warp (32 aligned lanes of one row) touches one
    // line per access: 3 reads + 1 write per 32 points.
    let one = traffic::per_point(&spec, h100());
    assert_eq!(one.l1_wavefronts, 4.0 / 32.0);
    // A run of 4 rows per thread: rows -1..=4 read once (6 lines) and 4 rows
    // written, for 32 x 4 points.
    spec.points_per_thread = [1, 4, 1];
    let run = traffic::per_point(&spec, h100());
    assert_eq!(run.l1_wavefronts, 10.0 / 128.0);
    assert_eq!(run.rounds, 1);
    // Either way each point reads and writes 4 bytes from DRAM.
    assert_eq!((one.dram, run.dram), (8.0, 8.0));
}

#[test]
fn times_are_the_resource_equations() {
    let n: i64 = 1 << 24;
    let spec = copy_1d(n, 0);
    let d = h100();
    let c = cost(&spec, d, Some(16)).unwrap();
    assert_eq!(c.blocks, 65536);
    // 8 bytes per point over 3000 GB/s x 0.88.
    let dram = (n as f64) * 8.0 / (3000e9 * 0.88);
    assert!((c.times.dram - dram).abs() < 1e-12);
    // 65536 blocks over 132 SMs x 8 resident blocks, each wave leaving 450 ns
    // exposed (one point per thread: one round).
    let waves = 65536.0 / (132.0 * 8.0);
    let latency = waves * 450e-9;
    assert!((c.times.latency - latency).abs() < 1e-12);
    // 2048 warps per... 65536 blocks x 8 warps x 10 instructions over 4 per clock.
    let issue = 65536.0 * 8.0 * 10.0 / (132.0 * 4.0 * 1.98e9);
    assert!((c.times.issue - issue).abs() < 1e-12);
    // The busiest resource is DRAM, at the pace of whole waves (62.06 waves
    // take 63); the exposed latency adds to it.
    assert_eq!(c.bound, Resource::Dram);
    let tail = 63.0 / waves;
    assert!((c.time - (3e-6 + dram * tail + latency)).abs() < 1e-12);
    assert!((c.waves - waves).abs() < 1e-12);
}

#[test]
fn warnings_name_a_tile_that_does_not_pay_and_an_index_overflow() {
    let d = h100();
    let mut spec = copy_1d(1 << 20, 0);
    spec.block = [32, 8, 1];
    spec.bounds = vec![(1, 4094), (1, 4094)];
    spec.grid_dims = vec![65536, 32768]; // 2^31 points
    let plain = cost(&spec, d, None).unwrap();
    let mut tiled = spec.clone();
    tiled.reads = vec![];
    tiled.tiles = vec![Tile {
        level: "a".into(),
        elem: 4,
        halo: vec![(-2, 2), (-2, 2)],
        reads_per_point: 9,
        offsets: vec![],
    }];
    // Fixed-shape tile loads: one round, as long as the plain kernel's life.
    assert_eq!(cost(&tiled, d, None).unwrap().memory_rounds, 1);
    // A halo of 70 rows: ceil(148/8) x ceil(36/32) = 38 loads per thread, more
    // than are unrolled: strided loops, 38 rounds, and a tile that does not pay.
    tiled.tiles[0].halo = vec![(-70, 70), (-2, 2)];
    let staged = cost(&tiled, d, None).unwrap();
    assert_eq!(staged.memory_rounds, 38);
    let text = warnings::warnings(&tiled, &staged, d, Some(&plain), None, Given).join("\n");
    assert!(text.contains("staging `a` (9 reads per point)"), "{text}");
    assert!(text.contains("2147483648 points"), "{text}");
    let text = warnings::warnings(&spec, &plain, d, None, None, Given).join("\n");
    assert!(!text.contains("staging"), "{text}");
}

#[test]
fn a_run_of_points_shares_its_rounds_and_estimates_registers_by_what_it_holds() {
    let d = h100();
    let mut spec = copy_1d(1 << 24, 0);
    // One point per thread: the assumed 32 registers, one round.
    assert_eq!(estimated_registers(&spec), ASSUMED_REGISTERS);
    let one = cost(&spec, d, Some(32)).unwrap();
    assert_eq!(one.memory_rounds, 1);
    // A run of 8 points along x (a 1-D grid): one row, so one round, and
    // fewer waves, each leaving one exposed latency.
    spec.block = [256, 1, 1];
    spec.points_per_thread = [8, 1, 1];
    let run = cost(&spec, d, Some(32)).unwrap();
    assert_eq!((run.rows_per_thread, run.memory_rounds), (1, 1));
    let waves = |c: &KernelCost| c.blocks as f64 / (132.0 * 8.0);
    assert!((one.times.latency - waves(&one) * 450e-9).abs() < 1e-12);
    assert!((run.times.latency - waves(&run) * 450e-9).abs() < 1e-12);
    // One 4-byte read held per point of the run: 20 + 8 x 1 / 2 = 24, at
    // least the assumed 32.
    assert_eq!(estimated_registers(&spec), ASSUMED_REGISTERS);
    // Eleven 8-byte values (the Rician update) over a run of 8: 20 + 8 x 22 / 2.
    spec.reads = (0..11)
        .map(|i| Access {
            level: format!("f{i}"),
            elem: 8,
            offset: vec![0],
        })
        .collect();
    assert_eq!(estimated_registers(&spec), 108);
}

/// The 7x7 blur's reads at 3840x2160, block 32x8, one point per thread.
fn blur_7x7() -> KernelSpec {
    let mut spec = copy_1d(1 << 20, 0);
    spec.block = [32, 8, 1];
    spec.bounds = vec![(3, 2156), (3, 3836)];
    spec.grid_dims = vec![2160, 3840];
    spec.reads = (-3..=3)
        .flat_map(|dy| {
            (-3..=3).map(move |dx| Access {
                level: "img".into(),
                elem: 4,
                offset: vec![dy, dx],
            })
        })
        .collect();
    spec
}

#[test]
fn a_long_run_waits_for_its_rows_a_few_at_a_time() {
    // A 7x7 box read (the blur) on a 2-D grid, one point per thread: 7 rows,
    // one round (a single point's loads are all issued together).
    let d = h100();
    let mut spec = blur_7x7();
    let one = cost(&spec, d, Some(32)).unwrap();
    assert_eq!((one.rows_per_thread, one.memory_rounds), (7, 1));
    assert_eq!(one.loaded_words_per_thread, 49);
    // A run of 4 rows reads 10, of 16 rows 22: ceil(22 / 8) = 3 rounds, whose
    // exposed latency each wave pays.
    spec.points_per_thread = [1, 4, 1];
    assert_eq!(cost(&spec, d, Some(32)).unwrap().rows_per_thread, 10);
    spec.points_per_thread = [1, 16, 1];
    let run = cost(&spec, d, Some(32)).unwrap();
    assert_eq!((run.rows_per_thread, run.memory_rounds), (22, 3));
    assert!((run.times.latency - run.waves * 3.0 * 450e-9).abs() < 1e-12);
    // Consecutive x points of a vector share their rows.
    spec.points_per_thread = [4, 16, 1];
    spec.vector = 4;
    let vector = cost(&spec, d, Some(32)).unwrap();
    assert_eq!(vector.rows_per_thread, 22);
    // Their x offsets -3..=6 fall in 3 aligned groups of 4, loaded whole.
    assert_eq!(vector.loaded_words_per_thread, 22 * 3 * 4);
}

#[test]
fn loaded_words_count_the_loads_as_the_vectorizer_emits_them() {
    // One row of 4 vector points reading x-1, x, x+1: the aligned group of
    // the points (4 words) and two single elements left and right, which the
    // kernel loads as scalars (as j3d27pt's float4 runs do).
    let d = h100();
    let mut spec = copy_1d(1 << 20, 0);
    spec.points_per_thread = [4, 1, 1];
    spec.vector = 4;
    spec.reads = (-1..=1)
        .map(|dx| Access {
            level: "a_t0".into(),
            elem: 4,
            offset: vec![dx],
        })
        .collect();
    assert_eq!(cost(&spec, d, Some(32)).unwrap().loaded_words_per_thread, 6);
    // x-2..x: the left group's last two elements are one 2-vector.
    for (read, dx) in spec.reads.iter_mut().zip(-2..=0) {
        read.offset = vec![dx];
    }
    assert_eq!(cost(&spec, d, Some(32)).unwrap().loaded_words_per_thread, 6);
    // x-3..x: three elements of the left group: the whole group.
    spec.reads.push(Access {
        level: "a_t0".into(),
        elem: 4,
        offset: vec![-3],
    });
    assert_eq!(cost(&spec, d, Some(32)).unwrap().loaded_words_per_thread, 8);
    // Doubles count two words an element; scalar points each their own.
    spec.vector = 1;
    for read in &mut spec.reads {
        read.elem = 8;
    }
    assert_eq!(
        cost(&spec, d, Some(32)).unwrap().loaded_words_per_thread,
        4 * 4 * 2
    );
}

#[test]
fn the_register_estimate_drops_the_axis_a_run_marches_along() {
    // A 7-point star in 3-D marching along z (the outermost axis): the reads
    // at z-1, z and z+1 share one column, so a point holds 5 values.
    let mut spec = copy_1d(1 << 20, 0);
    spec.bounds = vec![(1, 510), (1, 510), (1, 510)];
    spec.grid_dims = vec![512, 512, 512];
    spec.block = [32, 8, 1];
    spec.points_per_thread = [1, 1, 8];
    spec.reads = [
        [0, 0, 0],
        [-1, 0, 0],
        [1, 0, 0],
        [0, -1, 0],
        [0, 1, 0],
        [0, 0, -1],
        [0, 0, 1],
    ]
    .into_iter()
    .map(|o| access("a", o.to_vec()))
    .collect();
    // 20 + 8 points x 5 words / 2.
    assert_eq!(estimated_registers(&spec), 40);
    // The same run along y instead (a 2-D-style run): the y-neighbours
    // share, the z-neighbours do not: (z, x) groups (0,0), (±1,0), (0,±1).
    spec.points_per_thread = [1, 8, 1];
    assert_eq!(estimated_registers(&spec), 40);
    // Along x nothing is shared but the x-neighbours: (z, y) groups (0,0),
    // (±1,0), (0,±1) again, 5 values.
    spec.points_per_thread = [8, 1, 1];
    assert_eq!(estimated_registers(&spec), 40);
    // Reads spread along z share within a z-run, not within an x-run: z
    // offsets -2..=2 and the x-neighbours, runs of 16.
    let mut spread = spec.clone();
    spread.reads = (-2..=2)
        .map(|dz| access("a", vec![dz, 0, 0]))
        .chain([-1, 1].map(|dx| access("a", vec![0, 0, dx])))
        .collect();
    spread.points_per_thread = [1, 1, 16];
    // Along z: columns (y, x) = (0, 0), (0, -1), (0, 1): 20 + 16 x 3 / 2.
    assert_eq!(estimated_registers(&spread), 44);
    // Along x: (z, y) = (-2..=2, 0): 20 + 16 x 5 / 2.
    spread.points_per_thread = [16, 1, 1];
    assert_eq!(estimated_registers(&spread), 60);
    // Two fields of doubles double the words: 20 + 8 x 20 / 2 = 100.
    let doubles: Vec<Access> = spec
        .reads
        .iter()
        .flat_map(|a| {
            ["u", "g"].map(|level| Access {
                level: level.into(),
                elem: 8,
                offset: a.offset.clone(),
            })
        })
        .collect();
    spec.reads = doubles;
    spec.points_per_thread = [1, 1, 8];
    assert_eq!(estimated_registers(&spec), 100);
}

#[test]
fn a_run_reads_the_tile_elements_its_points_share_once() {
    // The 7x7 box: 49 reads per point; a run of 8 rows reads 14 rows of 7.
    let offsets: Vec<Vec<i64>> = (-3..=3)
        .flat_map(|y| (-3..=3).map(move |x| vec![y, x]))
        .collect();
    let tile = Tile {
        level: "img".into(),
        elem: 4,
        halo: vec![(-3, 3), (-3, 3)],
        reads_per_point: 49,
        offsets,
    };
    assert_eq!(tile.reads_per_thread_point([1, 1, 1]), 49.0);
    assert_eq!(tile.reads_per_thread_point([1, 8, 1]), 14.0 * 7.0 / 8.0);
    // A run along x shares columns instead: 7 rows of 14.
    assert_eq!(tile.reads_per_thread_point([8, 1, 1]), 7.0 * 14.0 / 8.0);
}

#[test]
fn vectors_take_one_round_per_row_and_one_l1_access_per_aligned_group() {
    let d = h100();
    let mut spec = copy_1d(1 << 24, 0);
    spec.grid_dims = vec![1 << 24];
    let scalar = cost(&spec, d, Some(32)).unwrap();
    // Four consecutive points a thread, one float4 each way: one round, not
    // one per point, and a quarter of the threads, so a quarter of the
    // waves and of the exposed latency.
    spec.points_per_thread = [4, 1, 1];
    spec.vector = 4;
    spec.align_x = 32;
    let vector = cost(&spec, d, Some(32)).unwrap();
    assert_eq!(vector.memory_rounds, 1);
    assert_eq!(vector.blocks * 4, scalar.blocks);
    assert!((vector.times.latency * 4.0 - scalar.times.latency).abs() < 1e-12);
    // L1: a warp's scalar access touches one 128-byte line per 32 points; a
    // float4 access of the same 32 threads four lines for 128 points: the
    // same per point. Counted per lane as strided scalars instead, it would
    // be four times that.
    assert!((scalar.l1_wavefronts_per_point - 2.0 / 32.0).abs() < 1e-9);
    assert!((vector.l1_wavefronts_per_point - 2.0 / 32.0).abs() < 1e-9);
    // The same traffic from DRAM.
    assert!((vector.dram_bytes_per_point - scalar.dram_bytes_per_point).abs() < 1e-9);
}

#[test]
fn a_run_that_ptxas_gives_too_few_registers_for_its_loads_is_warned() {
    // The 7x7 blur's vector runs of 2 rows: 8 rows of 3 float4 groups, 96
    // words for 8 points.
    let d = h100();
    let mut spec = blur_7x7();
    spec.points_per_thread = [4, 2, 1];
    spec.vector = 4;
    let figures = |registers| crate::model::ptxas::PtxasFigures {
        registers,
        spill_stores: 0,
        spill_loads: 0,
        stack_frame: 0,
        shared_bytes: 0,
        constant_bytes: 0,
    };
    let warned = |registers| {
        let c = cost(&spec, d, Some(registers)).unwrap();
        assert_eq!(c.loaded_words_per_thread, 96);
        warnings::warnings(&spec, &c, d, None, Some(&figures(registers)), Given).join("\n")
    };
    // 32 registers leave 16 for loads in flight: 6 rounds.
    assert_eq!(warnings::register_rounds(96, 32, 8), 6);
    let text = warned(32);
    assert!(
        text.contains("about 16 are left for loads in flight"),
        "{text}"
    );
    assert!(text.contains("in about 6 rounds"), "{text}");
    // 40 registers: ceil(96 / 24) = 4 rounds, below the warning; 128: one.
    assert_eq!(warnings::register_rounds(96, 40, 8), 4);
    assert!(!warned(40).contains("loads in flight"));
    assert!(!warned(128).contains("loads in flight"));
    // Fewer registers than points and addresses still leave one.
    assert_eq!(warnings::register_rounds(96, 12, 8), 96);
    // Without ptxas's figures nothing is said.
    let c = cost(&spec, d, None).unwrap();
    assert!(!warnings::warnings(&spec, &c, d, None, None, Given)
        .join("\n")
        .contains("loads in flight"));
}

#[test]
fn an_issue_bound_kernel_is_told_what_fma_would_save() {
    // 2000 instructions a point, 1200 of them once multiply-adds contract.
    let d = h100();
    let mut spec = copy_1d(1 << 24, 0);
    spec.instructions_per_thread = 2000.0;
    spec.instructions_per_thread_fma = 1200.0;
    let c = cost(&spec, d, None).unwrap();
    assert_eq!(c.bound, Resource::Issue);
    let text = warnings::warnings(&spec, &c, d, None, None, Given).join("\n");
    assert!(text.contains("bound by instruction issue"), "{text}");
    assert!(
        text.contains("--fma contracts them into FFMAs, 1200.0 instructions per point"),
        "{text}"
    );
    // Already contracted (or nothing to contract): not said.
    spec.instructions_per_thread_fma = 2000.0;
    let text = warnings::warnings(&spec, &c, d, None, None, Given).join("\n");
    assert!(
        text.contains("bound by instruction issue") && !text.contains("--fma"),
        "{text}"
    );
}

#[test]
fn the_register_bound_time_rounds_loads_by_the_registers_left() {
    // The 7x7 blur's vector runs of 2 rows (8 points, 96 words a thread).
    let d = h100();
    let mut spec = blur_7x7();
    spec.points_per_thread = [4, 2, 1];
    spec.vector = 4;
    // DRAM at the copy bandwidth itself (today's time over 0.88), the busiest
    // resource and `rounds` of 450 ns per wave paid over whole waves.
    let expected = |c: &KernelCost, rounds: f64| {
        let t = &c.times;
        let busiest = [t.dram * 0.88, t.l2, t.l1, t.issue, t.fp64]
            .into_iter()
            .fold(0.0, f64::max);
        let tail = c.waves.ceil() / c.waves;
        3e-6 + busiest * tail + c.waves * rounds * 450e-9 * tail
    };
    let c = cost(&spec, d, Some(32)).unwrap();
    assert_eq!((c.rows_per_thread, c.memory_rounds), (8, 1));
    // 32 registers: 16 left for loads, ceil(96 / 16) = 6 rounds.
    assert!((register_bound_time(&spec, &c) - expected(&c, 6.0)).abs() < 1e-12);
    // 128 registers hold every load: one round, as cost() counts rows.
    let roomy = cost(&spec, d, Some(128)).unwrap();
    assert!((register_bound_time(&spec, &roomy) - expected(&roomy, 1.0)).abs() < 1e-12);
    // One point a thread: one round whatever the registers.
    spec.points_per_thread = [1, 1, 1];
    spec.vector = 1;
    let one = cost(&spec, d, Some(32)).unwrap();
    assert!((register_bound_time(&spec, &one) - expected(&one, 1.0)).abs() < 1e-12);
}
