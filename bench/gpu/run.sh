#!/usr/bin/env bash
# Runs the whole GPU benchmark set on the CUDA device of this machine and writes
# RESULTS.md and results.json into OUT_DIR (see README.md).
#
#   bench/gpu/run.sh [OUT_DIR] [extra stencilc bench-gpu options, e.g. --quick]
#
# STENCILC names the binary (default: target/release/stencilc, as carried to the
# device machine); PROGRAMS the folder of the benchmark programs (default
# bench/programs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/bench/gpu/out}"
shift || true
stencilc="${STENCILC:-$root/target/release/stencilc}"
programs="${PROGRAMS:-$root/bench/programs}"
if [ ! -x "$stencilc" ]; then
    echo "run.sh: no stencilc binary at $stencilc; build it with cargo build --release" >&2
    exit 1
fi
mkdir -p "$out"
# A CUDA 13 toolkit may have only libnvrtc.so.13, a name cudarc does not try:
# link it as libnvrtc.so and put it (and its builtins' folder) on the path.
if [ -z "${STENCILC_NVRTC:-}" ]; then
    nvrtc="$(ls /usr/local/cuda*/lib64/libnvrtc.so.* /usr/local/cuda*/targets/*/lib/libnvrtc.so.* \
        /usr/lib/x86_64-linux-gnu/libnvrtc.so.* 2>/dev/null | grep -v builtins | sort -V | tail -n 1 || true)"
    if [ -n "$nvrtc" ]; then
        mkdir -p "$out/.nvrtc"
        ln -sf "$nvrtc" "$out/.nvrtc/libnvrtc.so"
        export LD_LIBRARY_PATH="$out/.nvrtc:$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        echo "run.sh: NVRTC from $nvrtc" >&2
    fi
fi
# The model's ptxas (registers per kernel for the `pred` column): stencilc looks
# on PATH, in $CUDA_HOME/bin and /usr/local/cuda*/bin; say which it will find.
ptxas="${STENCILC_PTXAS:-$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -n 1 || true)}"
echo "run.sh: ptxas ${ptxas:-not found (the model assumes 32 registers per thread)}" >&2
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv \
        > "$out/gpu.csv" || true
fi
"$stencilc" bench-gpu --programs "$programs" --out "$out" "$@"
echo "run.sh: results in $out/RESULTS.md and $out/results.json"
