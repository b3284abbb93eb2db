#!/usr/bin/env bash
# One lease's GPU checks in one call (the device machine has no Rust toolchain):
# the ignored `gpu_*` tests, `bench-gpu` (f32 set and the Rician denoiser), and
# whole runs timed by `run --json` for what the suite does not cover (time
# tiling T = 1..8, the fused separable blur, heat3d, Rician iterations).
#
# Build here first, then carry `.devbin` and `target/release/stencilc`:
#
#   bash bench/gpu/device_prepare.sh
#   run: bash bench/gpu/device_check.sh   (carry: .devbin, target/release/stencilc)
#
# Everything is written under $OUT (at most 8 files come back): env.log,
# tests.log, series.log, and bench-gpu's RESULTS.md / results.json in
# $OUT/f32 and $OUT/rician. SKIP_TESTS=1, SKIP_BENCH=1 or SKIP_SERIES=1 leave
# a part out (the last keeps only the default-schedule runs of the series);
# SKIP_RICIAN=1 leaves out bench-gpu's Rician run. SERIES names the groups of
# whole runs to time (default: all of "defaults tiling fusion fma heat
# rician"). bench/gpu/next_lease.sh runs the next lease's choice of them.
set -uo pipefail
root="$(pwd)"
out="${OUT:-/tmp/device-check}"
mkdir -p "$out"
export PATH="/usr/local/cuda/bin:$PATH"
stencilc="$root/target/release/stencilc"

# The test binaries were built in /work/main: CARGO_MANIFEST_DIR and
# CARGO_BIN_EXE_stencilc name paths there.
if [ "$root" != /work/main ]; then
    mkdir -p /work
    [ -e /work/main ] || ln -s "$root" /work/main
fi

# NVRTC 13 linked as libnvrtc.so (bench/gpu/README.md).
. "$root/bench/gpu/nvrtc_env.sh"

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv
    echo "nvrtc: ${nvrtc:-none}"
    for tool in nvcc ptxas gcc g++ mpirun python3; do
        echo "$tool: $(command -v $tool || echo missing)"
    done
    nvcc --version | tail -n 2
    "$stencilc" --version
} > "$out/env.log" 2>&1
cat "$out/env.log"

if [ -z "${SKIP_TESTS:-}" ]; then
    echo "== gpu_* tests"
    bin="$root/.devbin"
    (
        timeout 240 "$bin/gpu" --ignored gpu_ --test-threads 4 > "$out/t_gpu.log" 2>&1 &
        timeout 240 "$bin/native" --ignored gpu_overtile --test-threads 3 > "$out/t_native.log" 2>&1 &
        timeout 240 "$bin/cli" --ignored gpu_ --test-threads 2 > "$out/t_cli.log" 2>&1 &
        wait
    )
    cat "$out/t_gpu.log" "$out/t_native.log" "$out/t_cli.log" > "$out/tests.log"
    rm -f "$out"/t_*.log
    grep -E "^test |test result" "$out/tests.log"
fi

if [ -z "${SKIP_BENCH:-}" ]; then
    echo "== bench-gpu f32"
    timeout 230 "$stencilc" bench-gpu --programs "$root/bench/programs" --out "$out/f32" --filter f32 \
        2>&1 | tail -n 5
    [ -n "${SKIP_RICIAN:-}" ] || echo "== bench-gpu rician3d"
    [ -n "${SKIP_RICIAN:-}" ] || timeout 120 "$stencilc" bench-gpu --programs "$root/bench/programs" --out "$out/rician" --filter rician3d \
        2>&1 | tail -n 5
fi

# A whole run's compute phase (seconds) from `run --json`, with its label.
series() {
    local label="$1"
    shift
    local json
    json="$(timeout 60 "$stencilc" run "$@" --json 2>/dev/null)"
    printf '%-44s %s\n' "$label" "$(printf '%s' "$json" | python3 -c \
        'import json,sys
try:
    d=json.load(sys.stdin); t=d["times"]
    print("compute %.4f s  iterations %d  upload %.3f s  compile %.2f s" % (t["compute"], d["iterations"], t["upload"], t["compile"]))
except Exception as e:
    print("failed:", e)')"
}

# Whether the group of whole runs `$1` is wanted ($SERIES).
wanted() {
    case " ${SERIES:-defaults tiling fusion fma heat rician} " in
    *" $1 "*) return 0 ;;
    *) return 1 ;;
    esac
}

{
    if wanted defaults; then
        echo "== default schedules (the model's choice, time tiling included) against --time 1"
        series "j2d5pt 16384^2 default" "$root/bench/programs/j2d5pt.sdsl" --backend cuda \
            --set n=16384 --set steps=96
        series "gaussian_blur 3840x2160 default" "$root/bench/programs/gaussian_blur.sdsl" \
            --backend cuda --set width=3840 --set height=2160 --set steps=500
        series "gaussian_blur 3840x2160 --time 1" "$root/bench/programs/gaussian_blur.sdsl" \
            --backend cuda --set width=3840 --set height=2160 --set steps=500 --time 1
    fi
    [ -n "${SKIP_SERIES:-}" ] && exit 0
    if wanted tiling; then
        echo "== time tiling: j2d5pt f32 16384^2, 96 steps"
        for t in 1 2 3 4 5 6 7 8; do
            series "j2d5pt --time $t" "$root/bench/programs/j2d5pt.sdsl" --backend cuda \
                --set n=16384 --set steps=96 --time "$t"
        done
        for t in 1 2 4; do
            series "star3d1r 512^3 --time $t" "$root/bench/programs/star3d1r.sdsl" --backend cuda \
                --set n=512 --set steps=48 --time "$t"
        done
    fi
    if wanted fusion; then
        echo "== separable blur 3840x2160, 500 iterations (iterate 1 made iterate steps)"
        sep=/tmp/gaussian_blur_separable_steps.sdsl
        sed -e 's/^int height;/int height;\nint steps;/' -e 's/^iterate 1 {/iterate steps {/' \
            "$root/examples/gaussian_blur_separable.sdsl" > "$sep"
        series "separable unfused" "$sep" --backend cuda \
            --set width=3840 --set height=2160 --set steps=500 --time 1
        series "separable --fuse" "$sep" --backend cuda \
            --set width=3840 --set height=2160 --set steps=500 --time 1 --fuse
        series "separable --fuse --results out" "$sep" --backend cuda \
            --set width=3840 --set height=2160 --set steps=500 --time 1 --fuse --results out
        series "gaussian_blur (2-D 7x7) " "$root/bench/programs/gaussian_blur.sdsl" --backend cuda \
            --set width=3840 --set height=2160 --set steps=500 --time 1
    fi
    if wanted fma; then
        echo "== --fma (contracted multiply-adds) against the default, f32"
        for flag in "" --fma; do
            series "gaussian_blur 3840x2160 ${flag:-(no --fma)}" "$root/bench/programs/gaussian_blur.sdsl" \
                --backend cuda --set width=3840 --set height=2160 --set steps=500 --time 1 $flag
            series "j3d27pt 512^3 ${flag:-(no --fma)}" "$root/bench/programs/j3d27pt.sdsl" \
                --backend cuda --set n=512 --set steps=40 --time 1 $flag
            series "box2d2r 16384^2 ${flag:-(no --fma)}" "$root/bench/programs/box2d2r.sdsl" \
                --backend cuda --set n=16384 --set steps=40 --time 1 $flag
        done
    fi
    if wanted heat; then
        echo "== heat3d f64 512^3, 40 steps"
        series "heat3d default" "$root/examples/heat3d.sdsl" --backend cuda \
            --set nx=512 --set ny=512 --set nz=512 --set steps=40 --set alpha=0.1 --time 1
        series "heat3d --shm none" "$root/examples/heat3d.sdsl" --backend cuda \
            --set nx=512 --set ny=512 --set nz=512 --set steps=40 --set alpha=0.1 --time 1 --shm none
    fi
    if wanted rician; then
        echo "== rician3d 512^3, 40 iterations (check every 10), U and F random in [0, 1)"
        python3 -c 'import numpy as np; np.save("/tmp/r512.npy", np.random.default_rng(1).random((512, 512, 512)))'
        series "rician3d default" "$root/bench/programs/rician3d.sdsl" --backend cuda \
            --set dim0=512 --set dim1=512 --set dim2=512 --set steps=40 --set sigma=0.05 --set lambda=0.065 \
            --input U=/tmp/r512.npy --input F=/tmp/r512.npy
        series "rician3d --shm none" "$root/bench/programs/rician3d.sdsl" --backend cuda \
            --set dim0=512 --set dim1=512 --set dim2=512 --set steps=40 --set sigma=0.05 --set lambda=0.065 \
            --input U=/tmp/r512.npy --input F=/tmp/r512.npy --shm none
    fi
} 2>&1 | tee "$out/series.log"
echo "== done $(date -u)"
