#!/usr/bin/env bash
# The lease after a model refit, in one call of at most BUDGET seconds
# (default 360): most wanted first,
#
#   1. bench-gpu on the f32 set: the defaults the refitted model now chooses,
#      against the naive kernels and the copy bandwidth;          about 170 s
#   2. the picks of schedule_sweep.sh (ONLY_PICKS=1): each default against
#      the schedules measured fastest before;                      about 70 s
#   3. the `gpu_*` tests of the device suite (the defaults changed); about 50 s
#
# Prepare here with bench/gpu/device_prepare.sh, then with the device tool:
#
#   run: bash bench/gpu/confirm_lease.sh   (carry: .devbin, target/release/stencilc)
#
# Files back: $OUT/env.log, f32/RESULTS.md, f32/results.json, picks.log,
# tests.log. Then, here: python3 bench/gpu/sweep_check.py <files_at>/picks.log
set -uo pipefail
root="$(pwd)"
out="${OUT:-/tmp/confirm-lease}"
budget="${BUDGET:-360}"
mkdir -p "$out"
# As device_check.sh: ptxas and NVRTC 13 found, the test binaries' paths.
export PATH="/usr/local/cuda/bin:$PATH"
. "$root/bench/gpu/nvrtc_env.sh"
if [ "$root" != /work/main ]; then
    mkdir -p /work
    [ -e /work/main ] || ln -s "$root" /work/main
fi

. "$root/bench/gpu/lease_part.sh"

part 150 env OUT="$out" SKIP_TESTS=1 SKIP_RICIAN=1 SKIP_SERIES=1 SERIES=none \
    bash "$root/bench/gpu/device_check.sh"
rm -f "$out/series.log"

rm -rf /tmp/picks-sweep
part 60 env OUT=/tmp/picks-sweep ONLY_PICKS=1 bash "$root/bench/gpu/schedule_sweep.sh"
[ -f /tmp/picks-sweep/sweep.log ] && cp /tmp/picks-sweep/sweep.log "$out/picks.log"

if [ $((budget - SECONDS)) -ge 50 ]; then
    echo "== gpu_* tests (device suite)"
    timeout $((budget - SECONDS)) "$root/.devbin/gpu" --ignored gpu_ --test-threads 4 > "$out/tests.log" 2>&1
    grep -E "^test |test result" "$out/tests.log"
else
    echo "== skipped: gpu_* tests ($((budget - SECONDS)) s left)"
fi
echo "== confirm_lease.sh done after ${SECONDS} s"
