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
# NVRTC 13 linked as libnvrtc.so (nvrtc_env.sh), in the output folder.
LINK_DIR="$out/.nvrtc" . "$here/nvrtc_env.sh"
[ -n "$nvrtc" ] && echo "run.sh: NVRTC from $nvrtc" >&2
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
