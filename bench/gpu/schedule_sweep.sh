#!/usr/bin/env bash
# Times schedules by hand on the device machine (`run --json`, the compute
# phase of a whole run over data on the device, divided by its iterations), to
# calibrate the model's choice: block × points per thread for the bench programs
# that bench-gpu found furthest from the copy bandwidth. Carry
# target/release/stencilc; everything goes to $OUT/sweep.log. A row without
# "shm LEVEL" runs with `--shm none` (before 2026-11-27 the model chose, and
# staged some: those logs are annotated).
set -uo pipefail
root="$(pwd)"
out="${OUT:-/tmp/sweep}"
mkdir -p "$out"
stencilc="$root/target/release/stencilc"
. "$root/bench/gpu/nvrtc_env.sh"
P="$root/bench/programs"

# ms per iteration of one run, with its label.
one() {
    local label="$1"
    shift
    local json
    json="$(timeout 60 "$stencilc" run "$@" --time 1 --json 2>"$out/err.txt")"
    printf '%-56s %s\n' "$label" "$(printf '%s' "$json" | python3 -c \
        'import json,sys
try:
    d=json.load(sys.stdin); t=d["times"]
    print("%.4f ms/it  (%d it)" % (1e3 * t["compute"] / d["iterations"], d["iterations"]))
except Exception as e:
    print("failed:", open(sys.argv[1]).read().strip().splitlines()[:1])' "$out/err.txt")"
}

# The vector rows (16-byte loads): the first thing to time on a
# short lease, alone with ONLY_VECTORS=1 (about 54 runs).
vectors() {
    echo "== vectors (--vector W: W consecutive x points a thread, float4/float2 rows), f32"
    for w in 1 2 4; do for t in 1 2 4; do
        one "j2d5pt block 32,8 tile 1,$t vector $w" "$P/j2d5pt.sdsl" --backend cuda --set n=16384 --set steps=40 --block 32,8 --tile 1,$t --vector $w --shm none
        one "j2d9pt block 32,8 tile 1,$t vector $w" "$P/j2d9pt.sdsl" --backend cuda --set n=16384 --set steps=40 --block 32,8 --tile 1,$t --vector $w --shm none
        one "box2d2r block 32,8 tile 1,$t vector $w" "$P/box2d2r.sdsl" --backend cuda --set n=16384 --set steps=40 --block 32,8 --tile 1,$t --vector $w --shm none
        one "star3d1r block 32,8,1 tile 1,1,$t vector $w" "$P/star3d1r.sdsl" --backend cuda --set n=512 --set steps=40 --block 32,8,1 --tile 1,1,$t --vector $w --shm none
        one "j3d27pt block 32,4,1 tile 1,1,$t vector $w" "$P/j3d27pt.sdsl" --backend cuda --set n=512 --set steps=40 --block 32,4,1 --tile 1,1,$t --vector $w --shm none
        one "blur block 64,4 tile 1,$t vector $w" "$P/gaussian_blur.sdsl" --backend cuda --set width=3840 --set height=2160 --set steps=400 --block 64,4 --tile 1,$t --vector $w --shm none
    done; done
}

# The model's choices after the H100 refit (2026-11-27) against the schedules
# the vector rows and the H200 sweep found fastest, for the programs furthest
# from their targets (about 25 runs); alone with ONLY_PICKS=1.
picks() {
    echo "== picks: the default schedule against the fastest measured, f32 (heat3d f64)"
    one "star3d1r default" "$P/star3d1r.sdsl" --backend cuda --set n=512 --set steps=40
    for s in "32,4,2 tile 1,1,2 vector 4" "32,8,1 tile 1,1,4 vector 2" "128,2,1 tile 1,1,4 vector 2" \
        "128,2,1 tile 1,1,4 vector 1" "64,4,1 tile 1,1,4 vector 2" "32,4,2 tile 1,1,4 vector 2"; do
        set -- $s
        one "star3d1r block $s" "$P/star3d1r.sdsl" --backend cuda --set n=512 --set steps=40 --block $1 --tile $3 --vector $5 --shm none
    done
    one "j3d27pt default" "$P/j3d27pt.sdsl" --backend cuda --set n=512 --set steps=40
    for s in "32,4,1 tile 1,1,2 vector 4" "32,4,1 tile 1,1,4 vector 2" "64,4,1 tile 1,1,8 vector 1" \
        "64,4,1 tile 1,1,4 vector 2" "32,8,1 tile 1,1,4 vector 2" "32,4,1 tile 1,1,8 vector 2"; do
        set -- $s
        one "j3d27pt block $s" "$P/j3d27pt.sdsl" --backend cuda --set n=512 --set steps=40 --block $1 --tile $3 --vector $5 --shm none
    done
    one "blur default" "$P/gaussian_blur.sdsl" --backend cuda --set width=3840 --set height=2160 --set steps=400
    for s in "32,8 tile 1,2 vector 4" "32,8 tile 1,4 vector 2" "64,4 tile 1,4 vector 2" "32,8 tile 1,4 vector 1" \
        "32,8 tile 1,8 vector 1 shm img" "64,4 tile 1,8 vector 1 shm img"; do
        set -- $s
        one "blur block $s" "$P/gaussian_blur.sdsl" --backend cuda --set width=3840 --set height=2160 --set steps=400 \
            --block $1 --tile $3 --vector $5 --shm ${7:-none}
    done
    one "heat3d default" "$root/examples/heat3d.sdsl" --backend cuda --set nx=512 --set ny=512 --set nz=512 --set steps=40 --set alpha=0.1
    for s in "32,8,1 tile 1,1,4 vector 1" "64,4,1 tile 1,1,4 vector 1" "32,8,1 tile 1,1,2 vector 2"; do
        set -- $s
        one "heat3d block $s" "$root/examples/heat3d.sdsl" --backend cuda --set nx=512 --set ny=512 --set nz=512 --set steps=40 \
            --set alpha=0.1 --block $1 --tile $3 --vector $5 --shm none
    done
}

# The defaults against `--min-blocks 1` (ptxas then keeps the registers it
# squeezes: heat3d's spill, j3d27pt's loads issued a few at a time), and what
# the register-limited rounds (bench/gpu/MODEL.md, "the blur's vector runs
# modelled") would choose and no GPU has timed: staged 2-D tiles with runs of
# 4 and 8 rows, float2 3-D runs at 32x8, the blur's longer vector runs, and
# j2d9pt's and box2d2r's vector defaults beside them (about 30 runs); alone
# with ONLY_CANDIDATES=1.
candidates() {
    echo "== --min-blocks N (__launch_bounds__(threads, N)) and --ptxas-rank 16 against the defaults, f32"
    for spec in "j3d27pt:n=512" "heat3d:n=512 alpha=0.1" "star3d1r:n=512" "j2d9pt:n=16384" \
        "box2d2r:n=16384" "gaussian_blur:width=3840 height=2160"; do
        prog="${spec%%:*}"
        sets=()
        for kv in ${spec#*:}; do sets+=(--set "$kv"); done
        steps=40
        [ "$prog" = gaussian_blur ] && steps=400
        one "$prog default" "$P/$prog.sdsl" --backend cuda "${sets[@]}" --set steps=$steps
        for n in 1 4; do
            [ "$prog" != j3d27pt ] && [ $n = 4 ] && continue
            one "$prog default min-blocks $n" "$P/$prog.sdsl" --backend cuda "${sets[@]}" --set steps=$steps \
                --min-blocks $n
        done
        # The model's 16 best ranked on this machine's ptxas (MODEL.md, "--ptxas-rank"),
        # with the schedule it kept.
        one "$prog default ptxas-rank 16" "$P/$prog.sdsl" --backend cuda "${sets[@]}" --set steps=$steps \
            --ptxas-rank 16 --verbose
        grep -m1 -o "stencilc: [a-z0-9_+]*: block [^:]*:" "$out/err.txt" | sed 's/^/    kept: /'
    done
    echo "== candidates of the register-limited rounds, f32 (the vector defaults beside them)"
    for prog in j2d9pt box2d2r; do
        one "$prog block 32,8 tile 1,4 vector 4" "$P/$prog.sdsl" --backend cuda --set n=16384 --set steps=40 \
            --block 32,8 --tile 1,4 --vector 4 --shm none
        for s in "32,8 tile 1,4" "32,8 tile 1,8" "64,4 tile 1,8"; do
            set -- $s
            one "$prog block $s vector 1 shm a" "$P/$prog.sdsl" --backend cuda --set n=16384 --set steps=40 \
                --block $1 --tile $3 --shm a
        done
    done
    for s in "32,8,1 tile 1,1,2 vector 2" "32,8,1 tile 1,1,2 vector 4" "32,4,2 tile 1,1,2 vector 2"; do
        set -- $s
        one "star3d1r block $s" "$P/star3d1r.sdsl" --backend cuda --set n=512 --set steps=40 --block $1 --tile $3 --vector $5 --shm none
        one "j3d27pt block $s" "$P/j3d27pt.sdsl" --backend cuda --set n=512 --set steps=40 --block $1 --tile $3 --vector $5 --shm none
    done
    for s in "32,8 tile 1,4 vector 4" "32,8 tile 1,8 vector 2" "32,8 tile 1,16 vector 1 shm img" "64,4 tile 1,4 vector 1 shm img"; do
        set -- $s
        one "blur block $s" "$P/gaussian_blur.sdsl" --backend cuda --set width=3840 --set height=2160 --set steps=400 \
            --block $1 --tile $3 --vector $5 --shm ${7:-none}
    done
}

if [ "${ONLY_CANDIDATES:-0}" = 1 ]; then
    { date -u; candidates; date -u; } 2>&1 | tee "$out/sweep.log"
    exit 0
fi

if [ "${ONLY_PICKS:-0}" = 1 ]; then
    { date -u; picks; date -u; } 2>&1 | tee "$out/sweep.log"
    exit 0
fi

if [ "${ONLY_VECTORS:-0}" = 1 ]; then
    { date -u; vectors; date -u; } 2>&1 | tee "$out/sweep.log"
    exit 0
fi

{
date -u
python3 -c 'import numpy as np; np.save("/tmp/r512.npy", np.random.default_rng(1).random((512, 512, 512)))'
echo "== rician3d f64 512^3, 20 iterations, random U and F"
for b in 32,8,1 32,4,1 64,4,1 32,4,2; do for t in 1 2 4 8; do
    one "rician3d block $b tile 1,1,$t" "$P/rician3d.sdsl" --backend cuda --set dim0=512 --set dim1=512 --set dim2=512 \
        --set steps=20 --set sigma=0.05 --set lambda=0.065 --input U=/tmp/r512.npy --input F=/tmp/r512.npy --block $b --tile 1,1,$t --shm none
done; done
echo "== j2d5pt f32 16384^2, 40 steps"
for b in 32,8 64,4 128,2 32,4; do for t in 1 2 4 8; do
    one "j2d5pt block $b tile 1,$t" "$P/j2d5pt.sdsl" --backend cuda --set n=16384 --set steps=40 --block $b --tile 1,$t --shm none
done; done
one "j2d5pt block 32,8 tile 1,16" "$P/j2d5pt.sdsl" --backend cuda --set n=16384 --set steps=40 --block 32,8 --tile 1,16 --shm none
vectors
echo "== j2d5pt f64 (the float_to_double text) 16384^2, 40 steps"
sed -e 's/\bfloat\b/double/g' -e 's/\([0-9]\)f\b/\1/g' "$P/j2d5pt.sdsl" > /tmp/j2d5pt_f64.sdsl
for b in 32,8; do for t in 1 2 4; do
    one "j2d5pt f64 block $b tile 1,$t" /tmp/j2d5pt_f64.sdsl --backend cuda --set n=16384 --set steps=40 --block $b --tile 1,$t --shm none
done; done
echo "== star3d1r f32 512^3, 40 steps"
for b in 32,8,1 64,4,1 128,2,1 32,4,2; do for t in 1 4 8 16; do
    one "star3d1r block $b tile 1,1,$t" "$P/star3d1r.sdsl" --backend cuda --set n=512 --set steps=40 --block $b --tile 1,1,$t --shm none
done; done
echo "== j3d27pt f32 512^3, 40 steps"
for b in 32,8,1 64,4,1 32,4,2; do for t in 1 4 8 16; do
    one "j3d27pt block $b tile 1,1,$t" "$P/j3d27pt.sdsl" --backend cuda --set n=512 --set steps=40 --block $b --tile 1,1,$t --shm none
done; done
one "j3d27pt block 32,4,2 shm a" "$P/j3d27pt.sdsl" --backend cuda --set n=512 --set steps=40 --block 32,4,2 --shm a
echo "== gaussian_blur f32 3840x2160, 400 steps"
for b in 32,8 64,4 128,2; do for t in 1 2 4 8 16; do
    one "blur block $b tile 1,$t" "$P/gaussian_blur.sdsl" --backend cuda --set width=3840 --set height=2160 --set steps=400 --block $b --tile 1,$t --shm none
done; done
for b in 32,8 64,4; do for t in 1 4 8; do
    one "blur block $b tile 1,$t shm img" "$P/gaussian_blur.sdsl" --backend cuda --set width=3840 --set height=2160 --set steps=400 --block $b --tile 1,$t --shm img
done; done
echo "== heat3d f64 512^3, 40 steps"
for b in 32,8,1 64,4,1; do for t in 1 4 8 16; do
    one "heat3d block $b tile 1,1,$t" "$root/examples/heat3d.sdsl" --backend cuda --set nx=512 --set ny=512 --set nz=512 \
        --set steps=40 --set alpha=0.1 --block $b --tile 1,1,$t --shm none
done; done
date -u
} 2>&1 | tee "$out/sweep.log"
