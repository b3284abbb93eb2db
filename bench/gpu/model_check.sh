#!/usr/bin/env bash
# Out-of-sample check of `stencilc explain --device h100`: schedules and sizes
# bench-gpu never ran, measured with `stencilc run --backend cuda` (compute time
# over the sweeps) beside the prediction. Run on the device machine with
#   STENCILC=target/release/stencilc bench/gpu/model_check.sh [OUT_DIR]
set -u
S="${STENCILC:-target/release/stencilc}"
OUT="${1:-${OUT:-/tmp/model_check}}"; mkdir -p "$OUT"
nvrtc="$(ls /usr/local/cuda*/lib64/libnvrtc.so.* /usr/local/cuda*/targets/*/lib/libnvrtc.so.* /usr/lib/x86_64-linux-gnu/libnvrtc.so.* 2>/dev/null | grep -v builtins | sort -V | tail -n 1)"
mkdir -p $OUT/.nvrtc; ln -sf "$nvrtc" $OUT/.nvrtc/libnvrtc.so
export LD_LIBRARY_PATH="$OUT/.nvrtc:$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "nvrtc $nvrtc"; ls /usr/local/cuda*/bin/ptxas 2>&1 | head -3
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
STEPS=200
run() { # label program sets... -- flags
  local label=$1 prog=$2; shift 2
  local sets=() flags=(); local seen=0
  for a in "$@"; do if [ "$a" = "--" ]; then seen=1; elif [ $seen = 0 ]; then sets+=("$a"); else flags+=("$a"); fi; done
  local m=$($S run bench/programs/$prog.sdsl "${sets[@]}" --set steps=$STEPS --backend cuda "${flags[@]}" --json 2>$OUT/err.txt | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['times']['compute']*1e3/$STEPS)")
  local p=$($S explain bench/programs/$prog.sdsl "${sets[@]}" --set steps=$STEPS "${flags[@]}" --json | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['sweep_seconds']*1e3, d['ptxas']['path'], ' '.join(str(k['cost']['bound']) for k in d['kernels']))")
  echo "$label | measured $m ms | predicted $p"
}
N2="--set n=8192"
for p in j2d5pt j2d9pt box2d2r; do
  run "$p f32 8192 none" $p $N2 -- --shm none
  run "$p f32 8192 none tile1,2" $p $N2 -- --shm none --tile 1,2
  run "$p f32 8192 none tile1,4" $p $N2 -- --shm none --tile 1,4
  run "$p f32 8192 none block64,4" $p $N2 -- --shm none --block 64,4
  run "$p f32 8192 none block16,16" $p $N2 -- --shm none --block 16,16
  run "$p f32 8192 default" $p $N2 --
  run "$p f32 8192 default block32,16" $p $N2 -- --block 32,16
done
for p in star3d1r j3d27pt; do
  run "$p f32 384 none" $p --set n=384 -- --shm none
  run "$p f32 384 none tile1,1,2" $p --set n=384 -- --shm none --tile 1,1,2
  run "$p f32 384 default" $p --set n=384 --
  run "$p f32 384 block32,8,1" $p --set n=384 -- --block 32,8,1
done
cat $OUT/err.txt | tail -5
