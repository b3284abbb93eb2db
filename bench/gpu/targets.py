#!/usr/bin/env python3
"""The GPU kernel targets, as `stencilc explain --device DEVICE` predicts them: each
bench program at its target size in f32, under the default schedule and under
`--shm none`, the fused separable blur against the unfused pair (with `tmp`
written, and with `--results out`, which leaves it unwritten), and a Rician
iteration with its check. Prints a Markdown table (and `--json` the figures).

    python3 bench/gpu/targets.py [STENCILC] [--device h100] [--json] [--fma] [--ptxas-rank K]

`--fma` and `--ptxas-rank K` are passed to every `explain` (the contracted
kernels' predictions; the schedules ranked on ptxas's registers). The
"register-bound" column is the default schedule's sweep with its loads in
flight bounded by ptxas's registers (`register_bound_time`, what
`--ptxas-rank` ranks on; bench/gpu/MODEL.md), where ptxas was found.

STENCILC defaults to target/release/stencilc. The model needs no GPU; with
NVRTC and ptxas found (see README), occupancy uses ptxas's register counts.
heat3d is bench/programs/heat3d.sdsl (examples/heat3d.sdsl in float on a cube,
as the targets are stated for f32). Rician stays in double, as written.
"""

import json
import os
import subprocess
import sys
import tempfile

TWO_D = 16384
THREE_D = 512

# (label, program, parameters, target fraction of copy or None)
SWEEPS = [
    ("j2d5pt", "bench/programs/j2d5pt.sdsl", {"n": TWO_D, "steps": 10}, 0.90),
    ("j2d9pt", "bench/programs/j2d9pt.sdsl", {"n": TWO_D, "steps": 10}, 0.90),
    ("star3d1r", "bench/programs/star3d1r.sdsl", {"n": THREE_D, "steps": 10}, 0.90),
    ("heat3d", "bench/programs/heat3d.sdsl", {"n": THREE_D, "steps": 10, "alpha": 0.1}, 0.90),
    ("box2d2r", "bench/programs/box2d2r.sdsl", {"n": TWO_D, "steps": 10}, 0.75),
    ("j3d27pt", "bench/programs/j3d27pt.sdsl", {"n": THREE_D, "steps": 10}, 0.75),
    ("blur 7x7", "bench/programs/gaussian_blur.sdsl",
     {"width": 3840, "height": 2160, "steps": 10}, 0.75),
]

BLUR_SEPARABLE = ("examples/gaussian_blur_separable.sdsl", {"width": 3840, "height": 2160})
RICIAN = ("bench/programs/rician3d.sdsl",
          {"dim0": 256, "dim1": 256, "dim2": 256, "steps": 10, "sigma": 0.05, "lambda": 0.065})


# Flags passed to every `explain` (set by main).
EXTRA = []


def explain(stencilc, path, params, flags, device, tmp):
    text = open(path).read()
    program = os.path.join(tmp, os.path.basename(path))
    with open(program, "w") as f:
        f.write(text)
    args = [stencilc, "explain", program, "--device", device, "--json"] + flags + EXTRA
    for name, value in params.items():
        args += ["--set", "%s=%s" % (name, value)]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:]}
    return json.loads(out.stdout)


def register_bound(report):
    """The sweep's fraction of copy with each stencil kernel's
    `register_bound_time` in place of its time ("-" without ptxas)."""
    stencils = [k for k in report["kernels"] if k["role"]["kind"] == "stencil"]
    if not stencils or any(k.get("register_bound_time") is None for k in stencils):
        return "-"
    bound = sum(k["register_bound_time"] for k in stencils)
    return "%.0f %%" % (100 * report["fraction_of_copy"] * report["sweep_seconds"] / bound)


def main():
    argv = [a for a in sys.argv[1:]]
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    if "--fma" in argv:
        EXTRA.append("--fma")
        argv.remove("--fma")
    if "--ptxas-rank" in argv:
        i = argv.index("--ptxas-rank")
        EXTRA.extend(argv[i:i + 2])
        del argv[i:i + 2]
    device = "h100"
    if "--device" in argv:
        i = argv.index("--device")
        device = argv[i + 1]
        del argv[i:i + 2]
    stencilc = argv[0] if argv else "target/release/stencilc"
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        print("| program | size | default: % of copy | --shm none: % of copy | default / none "
              "| register-bound: % of copy | target | schedule (default) |")
        print("|---|---|---|---|---|---|---|---|")
        for label, path, params, target in SWEEPS:
            default = explain(stencilc, path, params, [], device, tmp)
            plain = explain(stencilc, path, params, ["--shm", "none"], device, tmp)
            figures[label] = {"default": default, "shm_none": plain}
            if "error" in default or "error" in plain:
                print("| %s | | error: %s | | | | | |" % (label, default.get("error") or plain.get("error")))
                continue
            size = "x".join(str(params[k]) for k in params if k not in ("steps", "alpha"))
            ratio = plain["sweep_seconds"] / default["sweep_seconds"]
            print("| %s | %s | %.0f %% | %.0f %% | %.2fx | %s | %s | %s |" % (
                label, size, 100 * default["fraction_of_copy"], 100 * plain["fraction_of_copy"],
                ratio, register_bound(default), "%.0f %%" % (100 * target),
                default["schedule"].replace("\n", "; ")))
        path, params = BLUR_SEPARABLE
        unfused = explain(stencilc, path, params, [], device, tmp)
        fused = explain(stencilc, path, params, ["--fuse"], device, tmp)
        # `tmp` an intermediate: the fused kernel need not write it.
        fused_out = explain(stencilc, path, params, ["--fuse", "--results", "out"], device, tmp)
        figures["blur separable"] = {"unfused": unfused, "fused": fused,
                                     "fused_results_out": fused_out}
        print()
        if "error" in unfused or "error" in fused:
            print("separable blur: error: %s" % (unfused.get("error") or fused.get("error")))
        else:
            print("separable blur 3840x2160: unfused %.1f us, `--fuse` %.1f us per iteration: %.2fx (target 1.6x)" % (
                1e6 * unfused["iteration_seconds"], 1e6 * fused["iteration_seconds"],
                unfused["iteration_seconds"] / fused["iteration_seconds"]))
            if "error" not in fused_out:
                print("separable blur 3840x2160: `--fuse --results out` (tmp not written) %.1f us "
                      "per iteration: %.2fx the unfused pair" % (
                          1e6 * fused_out["iteration_seconds"],
                          unfused["iteration_seconds"] / fused_out["iteration_seconds"]))
        path, params = RICIAN
        rician = explain(stencilc, path, params, [], device, tmp)
        figures["rician"] = rician
        if "error" in rician:
            print("rician: error: %s" % rician["error"])
        else:
            print("rician3d 256^3 (double): %.1f us per sweep, %.1f us per iteration with its check share" % (
                1e6 * rician["sweep_seconds"], 1e6 * rician["iteration_seconds"]))
    if as_json:
        print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
