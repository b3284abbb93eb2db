#!/usr/bin/env python3
"""The model's instructions per point beside the SASS that ptxas emits for the
same kernels: how `src/model/instr.rs` was calibrated (bench/gpu/MODEL.md).

    NVDISASM=/path/to/nvdisasm python3 bench/gpu/sass_table.py [STENCILC] [explain flags...]

For every bench program at its target size (2-D 16384², 3-D 512³, blur
3840x2160) it runs `stencilc explain --device h100 --json` with
`STENCILC_PTXAS` pointing at a wrapper that keeps the PTX and assembles it
into a cubin beside ptxas's own `-v` run, disassembles the cubin with
nvdisasm, and prints per kernel: block, points per thread, registers, the
model's instructions per point, and the SASS instructions a thread on the
fast path executes per point — the kernel's first block up to the branch into
its largest block, plus that block, over the points per thread. That rule
reads straight-line stencils exactly; where a kernel calls a subroutine (the
IEEE division's slow path) or loops (reductions), read the SASS by hand.

It also prints the dependent rounds of global loads on that path (`SASS
rounds`) beside the model's `memory_rounds`: a round is the global loads
ptxas issues before the first instruction that reads one of their results,
so a kernel whose loads ptxas serialises (a loop with a run-time trip count,
a run too long for its registers) shows more rounds than the model counts.
Read it on unstaged kernels: a staged tile's shared stores each read a load's
result, so its rounds count the stores ptxas interleaves with the loads.

nvdisasm: the PyPI wheel `nvidia-cuda-nvdisasm` (13.x reads ptxas 12.8's
sm_90 cubins); ptxas as `stencilc explain` finds it, or `REAL_PTXAS`.
"""

import collections
import json
import os
import re
import stat
import subprocess
import sys
import tempfile

PROGRAMS = [
    ("j2d5pt", "n=16384"), ("j2d9pt", "n=16384"), ("box2d2r", "n=16384"),
    ("gradient2d", "n=16384"), ("star3d1r", "n=512"), ("j3d27pt", "n=512"),
    ("gaussian_blur", "width=3840,height=2160"),
    ("rician3d", "dim0=512,dim1=512,dim2=512,sigma=0.05,lambda=0.065"),
]

WRAPPER = """#!/bin/sh
# ptxas -v as stencilc runs it, keeping the PTX and a cubin in $SASS_DIR
for last; do :; done
gpu=sm_90
for a; do case $a in --gpu-name=*) gpu=${a#--gpu-name=};; esac; done
cp "$last" "$SASS_DIR/k.ptx"
"$REAL_PTXAS" --gpu-name=$gpu -o "$SASS_DIR/k.cubin" "$last" >/dev/null 2>&1
exec "$REAL_PTXAS" "$@"
"""


def blocks(sass):
    """(function, label) -> instructions, in the order nvdisasm prints them."""
    out = collections.OrderedDict()
    key = fn = None
    for line in sass.splitlines():
        s = line.strip()
        m = re.match(r"^\.text\.(\w+):", s)
        if m:
            fn = m.group(1)
            key = (fn, "entry")
            out[key] = []
            continue
        m = re.match(r"^(\.L_x_\d+):", s)
        if m and fn:
            key = (fn, m.group(1))
            out[key] = []
            continue
        m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(.*?);", line)
        if m and key:
            out[key].append(m.group(1))
    return out


def fast_path(kernel_blocks):
    """Instructions of the entry up to the branch into the largest block, plus it."""
    if not kernel_blocks:
        return 0
    entry = kernel_blocks[0][1]
    rest = kernel_blocks[1:]
    if not rest:
        return len(entry)
    label, big = max(rest, key=lambda b: len(b[1]))
    if len(big) <= len(entry):
        return len(entry)
    before = len(entry)
    for n, ins in enumerate(entry):
        if "BRA" in ins and label in ins:
            before = n + 1
            break
    return before + len(big)


REGISTER = re.compile(r"\bR(\d+)\b")


def load_rounds(instructions):
    """Dependent rounds of global loads in straight-line `instructions`."""
    rounds = 0
    pending = set()
    for ins in instructions:
        body = re.sub(r"^@!?U?P\w+\s+", "", ins)
        op = body.split()[0] if body.split() else ""
        regs = [int(r) for r in REGISTER.findall(body)]
        if op.startswith("LDG") or op.startswith("LD.E"):
            width = 4 if ".128" in op else (2 if ".64" in op else 1)
            if not pending:
                rounds += 1
            pending.update(range(regs[0], regs[0] + width) if regs else [])
            continue
        stores = op.startswith(("ST", "RED", "ATOM"))
        read = regs if stores else regs[1:]
        if pending and any(r in pending for r in read):
            pending = set()
    return rounds


def fast_path_instructions(kernel_blocks):
    """The instructions `fast_path` counts, in order."""
    if not kernel_blocks:
        return []
    entry = kernel_blocks[0][1]
    rest = kernel_blocks[1:]
    if not rest:
        return entry
    label, big = max(rest, key=lambda b: len(b[1]))
    if len(big) <= len(entry):
        return entry
    before = entry
    for n, ins in enumerate(entry):
        if "BRA" in ins and label in ins:
            before = entry[:n + 1]
            break
    return before + big


def find_ptxas():
    if os.environ.get("REAL_PTXAS"):
        return os.environ["REAL_PTXAS"]
    cache = os.environ.get("STENCILC_CI_CACHE", os.path.expanduser("~/.cache/stencilc-ci"))
    return os.path.join(cache, "nvcc-12.8.93/nvidia/cuda_nvcc/bin/ptxas")


def main():
    args = sys.argv[1:]
    stencilc = args.pop(0) if args and not args[0].startswith("-") else "target/release/stencilc"
    nvdisasm = os.environ.get("NVDISASM", "nvdisasm")
    print("| program | kernel | block | points/thread | registers | model instr/pt | SASS instr/pt "
          "| model rounds | SASS rounds | bound | % of copy |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        wrapper = os.path.join(tmp, "ptxas")
        with open(wrapper, "w") as f:
            f.write(WRAPPER)
        os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IEXEC)
        env = dict(os.environ, STENCILC_PTXAS=wrapper, SASS_DIR=tmp, REAL_PTXAS=find_ptxas())
        for name, sets in PROGRAMS:
            cmd = [stencilc, "explain", "bench/programs/%s.sdsl" % name, "--device", "h100",
                   "--json", "--set", "steps=10"]
            for s in sets.split(","):
                cmd += ["--set", s]
            out = subprocess.run(cmd + args, capture_output=True, text=True, env=env)
            try:
                report = json.loads(out.stdout)
            except ValueError:
                print("| %s | error: %s |" % (name, out.stderr.strip().splitlines()[-1:]))
                continue
            sass = subprocess.run([nvdisasm, "-c", os.path.join(tmp, "k.cubin")],
                                  capture_output=True, text=True).stdout
            by_block = blocks(sass)
            for k in report["kernels"]:
                points = 1
                for p in k["points_per_thread"]:
                    points *= p
                mine = [(label, ins) for (fn, label), ins in by_block.items() if fn == k["name"]]
                cost = k["cost"]
                print("| %s | %s | %s | %s | %s | %.1f | %.1f | %s | %d | %s | %.0f %% |" % (
                    name, k["name"], ",".join(map(str, k["block"])),
                    ",".join(map(str, k["points_per_thread"])),
                    (k.get("ptxas") or {}).get("registers", "-"),
                    cost["instructions_per_point"], fast_path(mine) / points,
                    cost.get("memory_rounds", "-"), load_rounds(fast_path_instructions(mine)),
                    cost["bound"], 100 * (k.get("fraction_of_copy") or 0)))


if __name__ == "__main__":
    main()
