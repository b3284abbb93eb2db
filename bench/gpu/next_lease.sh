#!/usr/bin/env bash
# What the next GPU lease should run, most wanted first, in one call of at
# most BUDGET seconds (default 540, inside the device tool's 600 s a call):
#
#   1. the `gpu_*` tests (the default schedules now use vector accesses, never
#      run on CUDA yet);                                           about 45 s
#   2. bench-gpu on the f32 set (the vector defaults against the naive
#      kernels and the copy bandwidth, with the model's predictions); about 150 s
#   3. whole runs: the default schedules, the separable blur fused and
#      unfused (its recompute phase now runs fixed trips), `--fma` against
#      the default, and j2d5pt and star3d1r at `--time 1..8` (the time
#      tiles' interior path, never timed: it re-measures the model's 5000 ns
#      per pass, PHASE_NS).                                        about 100 s
#   4. the candidates of schedule_sweep.sh (ONLY_CANDIDATES=1): the defaults
#      against `--min-blocks 1` (ptxas keeps the registers it squeezes) and
#      `--ptxas-rank 16` (the model's 16 best ranked on ptxas's registers), and
#      what the register-limited rounds of bench/gpu/MODEL.md would choose
#      (staged 2-D tiles, float2 3-D runs, the blur's longer runs), never
#      timed; the `--vector 1, 2, 4` rows ran on the H100 on 2026-11-27.
#                                                                   about 210 s
#
# A part starts only if the time it needs is left. Prepare here with
# bench/gpu/device_prepare.sh, then with the device tool:
#
#   run: bash bench/gpu/next_lease.sh   (carry: .devbin, target/release/stencilc)
#
# Files back (at most 8): $OUT/env.log, tests.log, candidates.log, f32/RESULTS.md,
# f32/results.json, series.log. Then, here:
#   python3 bench/gpu/sweep_check.py <files_at>/candidates.log --device h100
#   python3 bench/gpu/refit.py --variant registers <files_at>/candidates.log:h100
set -uo pipefail
root="$(pwd)"
out="${OUT:-/tmp/next-lease}"
budget="${BUDGET:-540}"
mkdir -p "$out"

. "$root/bench/gpu/lease_part.sh"

# 1. Tests (device_check.sh writes env.log and tests.log).
part 60 env OUT="$out" SKIP_BENCH=1 SERIES=none SKIP_SERIES=1 bash "$root/bench/gpu/device_check.sh"
rm -f "$out/series.log"

# 2 and 3. bench-gpu f32 (the kernel targets), then the whole runs.
part 240 env OUT="$out" SKIP_TESTS=1 SKIP_RICIAN=1 SERIES="defaults fusion fma tiling" \
    bash "$root/bench/gpu/device_check.sh"

# 4. The candidates (schedule_sweep.sh's scratch files stay out of $OUT).
rm -rf /tmp/candidate-sweep
part 210 env OUT=/tmp/candidate-sweep ONLY_CANDIDATES=1 bash "$root/bench/gpu/schedule_sweep.sh"
[ -f /tmp/candidate-sweep/sweep.log ] && cp /tmp/candidate-sweep/sweep.log "$out/candidates.log"

echo "== next_lease.sh done after ${SECONDS} s"
