//! Tests of the searches on profiles shaped like the slides' diffusion kernel,
//! built by simulating which thread's store fills which shared slot: profiled
//! on two block shapes and two grid sizes, checked on other shapes, partial
//! edge blocks included.

use std::time::Duration;

use super::print::{expr_to_cuda, guard_to_cuda, shared_read_to_cuda};
use super::table::{AccessProfile, ProfileRow};
use super::*;

/// A launch: block shape and grid extent (the grid of blocks covers it,
/// partially at the edges when it does not divide).
#[derive(Clone, Copy, Debug)]
struct Launch {
    bx: i64,
    by: i64,
    nx: i64,
    ny: i64,
}

/// The neighbour a marked read takes, clamped at the grid's edges as the
/// slides' kernel does (`w = (i == 0) ? c : c - 1`).
#[derive(Clone, Copy, Debug)]
enum Neighbour {
    W,
    E,
    N,
    S,
}

/// How the simulated kernel fills shared memory.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Layout {
    /// The slides' kernel: `sb[csb] = in[c]`, `csb = threadIdx.x +
    /// threadIdx.y * blockDim.x`, a plane of one element per thread.
    Plane,
    /// A tile with a one-point halo, `sb[ty + 1][tx + 1] = in[c]`, the edge
    /// threads also loading the neighbours that exist; reads only at interior
    /// points, so every one is served.
    HaloInterior,
}

/// The halo tile's declared sizes: blocks up to 8 x 16.
const HALO_DIMS: [i64; 2] = [10, 18];

const PLANE_CANDIDATES: [&str; 8] = [
    "threadIdx.x",
    "threadIdx.y",
    "blockDim.x",
    "blockDim.y",
    "csb",
    "c",
    "i",
    "j",
];

fn names(candidates: &[&str]) -> Vec<String> {
    candidates.iter().map(|s| s.to_string()).collect()
}

/// Simulates the kernel on the launches and profiles one marked read; the
/// plane marches over `nz` = 2 planes, each a row per thread.
fn profile(
    layout: Layout,
    launches: &[Launch],
    read: Neighbour,
    candidates: &[&str],
) -> AccessProfile {
    let mut rows = Vec::new();
    let mut max_plane = 0;
    for l in launches {
        max_plane = max_plane.max(l.bx * l.by);
        let xy = l.nx * l.ny;
        for k in 0..2 {
            for block_y in 0..(l.ny + l.by - 1) / l.by {
                for block_x in 0..(l.nx + l.bx - 1) / l.bx {
                    let thread = |tx: i64, ty: i64| {
                        let (i, j) = (block_x * l.bx + tx, block_y * l.by + ty);
                        (i < l.nx && j < l.ny).then_some((i, j, i + j * l.nx + k * xy))
                    };
                    // The block's stores: slot -> element.
                    let mut slots: Vec<(Vec<i64>, i64)> = Vec::new();
                    for ty in 0..l.by {
                        for tx in 0..l.bx {
                            let Some((i, j, c)) = thread(tx, ty) else {
                                continue;
                            };
                            match layout {
                                Layout::Plane => slots.push((vec![tx + ty * l.bx], c)),
                                Layout::HaloInterior => {
                                    slots.push((vec![ty + 1, tx + 1], c));
                                    if tx == 0 && i > 0 {
                                        slots.push((vec![ty + 1, 0], c - 1));
                                    }
                                    if tx == l.bx - 1 && i + 1 < l.nx {
                                        slots.push((vec![ty + 1, tx + 2], c + 1));
                                    }
                                    if ty == 0 && j > 0 {
                                        slots.push((vec![0, tx + 1], c - l.nx));
                                    }
                                    if ty == l.by - 1 && j + 1 < l.ny {
                                        slots.push((vec![ty + 2, tx + 1], c + l.nx));
                                    }
                                }
                            }
                        }
                    }
                    slots.sort();
                    for ty in 0..l.by {
                        for tx in 0..l.bx {
                            let Some((i, j, c)) = thread(tx, ty) else {
                                continue;
                            };
                            let interior = i > 0 && i < l.nx - 1 && j > 0 && j < l.ny - 1;
                            if layout == Layout::HaloInterior && !interior {
                                continue;
                            }
                            let element = match read {
                                Neighbour::W if i > 0 => c - 1,
                                Neighbour::E if i < l.nx - 1 => c + 1,
                                Neighbour::N if j > 0 => c - l.nx,
                                Neighbour::S if j < l.ny - 1 => c + l.nx,
                                _ => c,
                            };
                            let slot = slots
                                .iter()
                                .find(|(_, e)| *e == element)
                                .map(|(s, _)| s.clone());
                            let value = |name: &str| match name {
                                "threadIdx.x" => tx,
                                "threadIdx.y" => ty,
                                "blockDim.x" => l.bx,
                                "blockDim.y" => l.by,
                                "csb" => tx + ty * l.bx,
                                "c" => c,
                                "i" => i,
                                "j" => j,
                                "nx" => l.nx,
                                "ny" => l.ny,
                                other => panic!("no candidate {other} in the simulation"),
                            };
                            rows.push(ProfileRow {
                                values: candidates.iter().map(|n| value(n)).collect(),
                                slot,
                            });
                        }
                    }
                }
            }
        }
    }
    AccessProfile {
        access: format!("__opt__.in[{}]", format!("{read:?}").to_lowercase()),
        shared: "sb".to_string(),
        shared_dims: match layout {
            Layout::Plane => vec![max_plane],
            Layout::HaloInterior => HALO_DIMS.to_vec(),
        },
        candidates: names(candidates),
        rows,
    }
}

fn launch(bx: i64, by: i64, nx: i64, ny: i64) -> Launch {
    Launch { bx, by, nx, ny }
}

/// Whether `plan` is right on every row of `held_out`: its guard holds exactly
/// where its index names the slot that holds the element.
fn check_plan(plan: &AccessPlan, held_out: &AccessProfile) {
    let names = &held_out.candidates;
    for row in &held_out.rows {
        let index: Vec<i64> = plan.index.iter().map(|e| e.eval(&row.values)).collect();
        let serves = row.slot.as_ref() == Some(&index);
        assert_eq!(
            plan.guard.eval(&row.values),
            serves,
            "{}: guard `{}` with `{}` is wrong on {:?} (slot {:?})",
            held_out.access,
            guard_to_cuda(&plan.guard, names),
            shared_read_to_cuda("sb", &plan.index, names),
            row.values,
            row.slot
        );
    }
}

fn report(plan: &AccessPlan, profile: &AccessProfile) -> String {
    format!(
        "{}: ({}) ? {} : global; {} of {} slot rows served; {} tested in {:?}",
        profile.access,
        guard_to_cuda(&plan.guard, &profile.candidates),
        shared_read_to_cuda("sb", &plan.index, &profile.candidates),
        plan.served,
        plan.with_slot,
        plan.stats().tested,
        plan.stats().elapsed
    )
}

const READS: [Neighbour; 4] = [Neighbour::W, Neighbour::E, Neighbour::N, Neighbour::S];

#[test]
fn slides_plane_on_even_grids_with_the_slides_candidates() {
    // The slides' kernel has no bounds check: its grids divide by the block.
    let profiled = [
        launch(4, 4, 16, 12),
        launch(8, 3, 24, 9),
        launch(4, 4, 8, 8),
        launch(8, 3, 32, 6),
    ];
    let held_out = [
        launch(16, 4, 64, 16),
        launch(2, 8, 6, 24),
        launch(5, 5, 15, 10),
    ];
    for read in READS {
        let p = profile(Layout::Plane, &profiled, read, &PLANE_CANDIDATES);
        let plan = synthesize_access(&p, &Bounds::default()).expect("a plan");
        println!("{}", report(&plan, &p));
        assert!(plan.served * 2 > plan.with_slot);
        if let Neighbour::W = read {
            assert_eq!(
                plan.to_cuda(&p, "in[w]"),
                "((threadIdx.x != 0) ? sb[csb - 1] : in[w])"
            );
            let json = plan_json(&plan, &p);
            assert_eq!(json["index"][0], "csb - 1");
            assert_eq!(json["guard"], "threadIdx.x != 0");
            assert!(json["index_search"]["tested"].as_u64().unwrap() > 0);
        }
        check_plan(
            &plan,
            &profile(Layout::Plane, &held_out, read, &PLANE_CANDIDATES),
        );
    }
}

#[test]
fn slides_plane_with_partial_edge_blocks() {
    // A partial block's last thread is not at blockDim.x - 1: the guard needs
    // the grid's extent, so nx and ny are candidates too.
    let candidates: Vec<&str> = PLANE_CANDIDATES
        .iter()
        .copied()
        .chain(["nx", "ny"])
        .collect();
    let profiled = [
        launch(4, 4, 13, 11),
        launch(8, 3, 21, 7),
        launch(4, 4, 10, 5),
    ];
    let held_out = [
        launch(16, 4, 37, 19),
        launch(3, 5, 7, 23),
        launch(6, 6, 6, 6),
    ];
    for read in READS {
        let p = profile(Layout::Plane, &profiled, read, &candidates);
        let plan = synthesize_access(&p, &Bounds::default()).expect("a plan");
        println!("{}", report(&plan, &p));
        check_plan(&plan, &profile(Layout::Plane, &held_out, read, &candidates));
    }
}

#[test]
fn halo_tile_indices_are_exact_and_always_served() {
    let candidates = [
        "threadIdx.x",
        "threadIdx.y",
        "blockDim.x",
        "blockDim.y",
        "c",
        "i",
        "j",
    ];
    let profiled = [launch(4, 3, 13, 11), launch(8, 2, 21, 7)];
    let held_out = [launch(16, 8, 37, 19), launch(3, 5, 7, 23)];
    let expected = [
        ["threadIdx.y + 1", "threadIdx.x"],
        ["threadIdx.y + 1", "threadIdx.x + 2"],
        ["threadIdx.y", "threadIdx.x + 1"],
        ["threadIdx.y + 2", "threadIdx.x + 1"],
    ];
    for (read, want) in READS.into_iter().zip(expected) {
        let p = profile(Layout::HaloInterior, &profiled, read, &candidates);
        let plan = synthesize_access(&p, &Bounds::default()).expect("a plan");
        println!("{}", report(&plan, &p));
        assert!(plan.exact);
        assert_eq!(plan.guard, Guard::True);
        let printed: Vec<String> = plan
            .index
            .iter()
            .map(|e| expr_to_cuda(e, &p.candidates))
            .collect();
        assert_eq!(printed, want);
        check_plan(
            &plan,
            &profile(Layout::HaloInterior, &held_out, read, &candidates),
        );
    }
}

#[test]
fn exact_guard_of_a_clamped_read_covers_its_own_element() {
    // `w` at i == 0 is the thread's own element: the slot exists there too.
    let profiled = [launch(4, 3, 16, 12), launch(8, 2, 24, 8)];
    let p = profile(Layout::Plane, &profiled, Neighbour::W, &PLANE_CANDIDATES);
    let found = synthesize_guard(&p, &Bounds::default()).expect("a guard");
    println!(
        "guard `{}`: {} tested in {:?}",
        guard_to_cuda(&found.expr, &p.candidates),
        found.stats.tested,
        found.stats.elapsed
    );
    let held_out = profile(
        Layout::Plane,
        &[launch(16, 4, 64, 16), launch(2, 8, 6, 24)],
        Neighbour::W,
        &PLANE_CANDIDATES,
    );
    for row in &held_out.rows {
        assert_eq!(found.expr.eval(&row.values), row.slot.is_some(), "{row:?}");
    }
    // No single linear index fits both the neighbour and the own element.
    let err = synthesize_index(&p, 0, &Bounds::default()).unwrap_err();
    assert!(err.closest.is_some());
}

#[test]
fn not_found_names_the_access_the_bounds_and_the_closest() {
    let p = AccessProfile {
        access: "__opt__.in[w]".to_string(),
        shared: "sb".to_string(),
        shared_dims: vec![64],
        candidates: names(&["x", "y"]),
        // slot = x * y * y * 3 + 7: too big for 4 units; x * y is closest... on none.
        rows: (0..6)
            .flat_map(|x| (0..6).map(move |y| (x, y)))
            .map(|(x, y)| ProfileRow {
                values: vec![x, y],
                slot: Some(vec![if x == 0 { 5 } else { x * y * y * 3 + 7 }]),
            })
            .collect(),
    };
    let bounds = Bounds {
        max_size: 4,
        shared_dims_as_constants: false,
        time_budget: Duration::from_secs(5),
        ..Bounds::default()
    };
    let err = synthesize_index(&p, 0, &bounds).unwrap_err();
    let message = err.to_string();
    println!("{message}");
    assert!(message.contains("`__opt__.in[w]`"), "{message}");
    assert!(
        message.contains("the index of dimension 0 of `sb`"),
        "{message}"
    );
    assert!(message.contains("at most 4 units"), "{message}");
    let closest = err.closest.expect("a closest candidate");
    assert_eq!(closest.rows, 36);
    assert!(
        closest.mismatches > 0 && closest.mismatches < 36,
        "{closest:?}"
    );
    assert!(message.contains(&closest.text));
}

/// Per access of the slides' kernel (and of the halo tile): expressions
/// tested by the index and the guard searches and the time, with and without
/// the canonical order and the correlation order. Prints; asserts no time.
#[test]
fn statistics_of_the_slides_kernel() {
    let plane = [launch(4, 4, 16, 12), launch(8, 3, 24, 9)];
    let tile = [launch(4, 3, 13, 11), launch(8, 2, 21, 7)];
    let tile_candidates = [
        "threadIdx.x",
        "threadIdx.y",
        "blockDim.x",
        "blockDim.y",
        "c",
        "i",
        "j",
    ];
    println!("kernel read canonical correlation: index tested, guard tested, ms");
    for canonical in [true, false] {
        for correlation_order in [true, false] {
            let bounds = Bounds {
                canonical,
                correlation_order,
                // The naive order runs into the budget: keep the test short.
                time_budget: Duration::from_millis(if canonical { 2000 } else { 500 }),
                ..Bounds::default()
            };
            let kernels = [
                ("plane", Layout::Plane, &plane, &PLANE_CANDIDATES[..]),
                ("tile", Layout::HaloInterior, &tile, &tile_candidates[..]),
            ];
            for (kernel, layout, launches, candidates) in kernels {
                for read in READS {
                    let p = profile(layout, launches, read, candidates);
                    let line = match synthesize_access(&p, &bounds) {
                        Ok(plan) => format!(
                            "{}{}, {}{}, {:.1}",
                            plan.index_stats.tested,
                            if plan.index_stats.budget_exhausted {
                                "+"
                            } else {
                                ""
                            },
                            plan.guard_stats.tested,
                            if plan.guard_stats.budget_exhausted {
                                "+"
                            } else {
                                ""
                            },
                            plan.stats().elapsed.as_secs_f64() * 1e3,
                        ),
                        Err(e) => format!("not found, {}+ tested", e.stats.tested),
                    };
                    println!("{kernel} {read:?} {canonical} {correlation_order}: {line}");
                }
            }
        }
    }
}

/// A profile over eight candidates whose slot is `v6 + v7 * 2 - 1`, the
/// others noise (a deterministic linear congruential sequence).
fn noisy_profile() -> AccessProfile {
    let mut state = 12345u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % 23) as i64
    };
    let rows = (0..200)
        .map(|_| {
            let values: Vec<i64> = (0..8).map(|_| next()).collect();
            let slot = values[6] + values[7] * 2 - 1;
            ProfileRow {
                values,
                slot: Some(vec![slot]),
            }
        })
        .collect();
    AccessProfile {
        access: "__opt__.in[k]".to_string(),
        shared: "sb".to_string(),
        shared_dims: vec![64],
        candidates: (0..8).map(|v| format!("v{v}")).collect(),
        rows,
    }
}

#[test]
fn both_orders_test_fewer_expressions_and_find_the_same_index() {
    let p = noisy_profile();
    let run = |canonical, correlation_order| {
        let bounds = Bounds {
            canonical,
            correlation_order,
            time_budget: Duration::from_secs(20),
            ..Bounds::default()
        };
        let found = synthesize_index(&p, 0, &bounds).expect("v6 + v7 * 2 - 1");
        for row in &p.rows {
            assert_eq!(Some(vec![found.expr.eval(&row.values)]), row.slot);
        }
        println!(
            "canonical {canonical}, correlation {correlation_order}: `{}`, {} tested in {:?}",
            expr_to_cuda(&found.expr, &p.candidates),
            found.stats.tested,
            found.stats.elapsed
        );
        found
    };
    let both = run(true, true);
    let canonical_only = run(true, false);
    let correlation_only = run(false, true);
    assert_eq!(expr_to_cuda(&both.expr, &p.candidates), "v7 * 2 + v6 - 1");
    assert_eq!(both.pass, Pass::Correlated);
    assert!(both.stats.tested < canonical_only.stats.tested);
    assert!(both.stats.tested < correlation_only.stats.tested);
}

#[test]
fn a_spent_budget_is_named_in_the_message() {
    let bounds = Bounds {
        time_budget: Duration::ZERO,
        max_covering_size: 1,
        ..Bounds::default()
    };
    let err = synthesize_index(&noisy_profile(), 0, &bounds).unwrap_err();
    assert!(err.stats.budget_exhausted);
    assert!(err.to_string().contains("the time budget ran out"), "{err}");
}

/// Profiled shapes of one thread count (128) make the plane's size a constant
/// that fits them all (`blockDim.x < 128 - csb`); the passes try the small
/// constants first at each size, so the guard found holds on other counts.
/// Also a large profile: 32768 rows per read.
#[test]
fn shapes_of_one_thread_count_do_not_tie_the_guard_to_the_plane_size() {
    let profiled = [launch(16, 8, 128, 64), launch(32, 4, 128, 64)];
    let held_out = [launch(8, 8, 64, 32), launch(4, 16, 32, 64)];
    for read in READS {
        let p = profile(Layout::Plane, &profiled, read, &PLANE_CANDIDATES);
        let plan = synthesize_access(&p, &Bounds::default()).expect("a plan");
        println!("{} ({} rows)", report(&plan, &p), p.rows.len());
        check_plan(
            &plan,
            &profile(Layout::Plane, &held_out, read, &PLANE_CANDIDATES),
        );
    }
}

#[test]
fn malformed_profiles_are_reported_not_panicked_on() {
    let mut p = noisy_profile();
    assert_eq!(check_profile(&p), Ok(()));
    p.rows[3].values.pop();
    let message = check_profile(&p).unwrap_err().to_string();
    assert!(
        message.contains("row 3") && message.contains("7 values for 8"),
        "{message}"
    );
    p.rows[5].slot = Some(vec![1, 2]);
    let bounds = Bounds {
        max_size: 2,
        ..Bounds::default()
    };
    // The searches still run to an answer without panicking.
    let _ = synthesize_access(&p, &bounds);
    let _ = synthesize_guard(&p, &bounds);
}

#[test]
fn profiles_of_several_launches_merge_into_one() {
    // One launch per profile, as a shared array sized by -D BLOCK_X/BLOCK_Y gives.
    let launches = [launch(4, 4, 16, 12), launch(8, 3, 24, 9)];
    let parts: Vec<AccessProfile> = launches
        .iter()
        .map(|&l| profile(Layout::Plane, &[l], Neighbour::W, &PLANE_CANDIDATES))
        .collect();
    assert_eq!(parts[0].shared_dims, vec![16]);
    assert_eq!(parts[1].shared_dims, vec![24]);
    let merged = merge_profiles(&parts).expect("one read");
    assert_eq!(
        merged,
        profile(Layout::Plane, &launches, Neighbour::W, &PLANE_CANDIDATES)
    );
    let plan = synthesize_access(&merged, &Bounds::default()).expect("a plan");
    assert_eq!(
        plan.to_cuda(&merged, "in[w]"),
        "((threadIdx.x != 0) ? sb[csb - 1] : in[w])"
    );

    let other = profile(
        Layout::Plane,
        &launches[..1],
        Neighbour::E,
        &PLANE_CANDIDATES,
    );
    let message = merge_profiles(&[parts[0].clone(), other])
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("`__opt__.in[w]`") && message.contains("`__opt__.in[e]`"),
        "{message}"
    );
    assert!(merge_profiles(&[]).is_err());
}
