#!/usr/bin/env python3
"""The model against a schedule sweep (bench/gpu/schedule_sweep.sh's log).

For every timed schedule, `stencilc explain --json` with the same flags (ptxas
registers) predicts the time per iteration; printed: measured, predicted and
their ratio, the log-RMS error, and per program the measured time of the
schedule the model ranks fastest against the fastest measured.

    python3 bench/gpu/sweep_check.py bench/gpu/h200/sweep.log --device h200

Needs the release binary (target/release/stencilc) and ptxas (see MODEL.md).
"""
import argparse
import concurrent.futures
import json
import math
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "bench" / "programs"
RICIAN = ["--set", "sigma=0.05", "--set", "lambda=0.065"]
ARGS = {
    "rician3d": [PROGRAMS / "rician3d.sdsl", "--set", "dim0=512", "--set", "dim1=512",
                 "--set", "dim2=512", "--set", "steps=20", *RICIAN],
    "j2d5pt": [PROGRAMS / "j2d5pt.sdsl", "--set", "n=16384", "--set", "steps=40"],
    "j2d9pt": [PROGRAMS / "j2d9pt.sdsl", "--set", "n=16384", "--set", "steps=40"],
    "box2d2r": [PROGRAMS / "box2d2r.sdsl", "--set", "n=16384", "--set", "steps=40"],
    "star3d1r": [PROGRAMS / "star3d1r.sdsl", "--set", "n=512", "--set", "steps=40"],
    "j3d27pt": [PROGRAMS / "j3d27pt.sdsl", "--set", "n=512", "--set", "steps=40"],
    "blur": [PROGRAMS / "gaussian_blur.sdsl", "--set", "width=3840", "--set", "height=2160",
             "--set", "steps=400"],
    "heat3d": [ROOT / "examples" / "heat3d.sdsl", "--set", "nx=512", "--set", "ny=512",
               "--set", "nz=512", "--set", "steps=40", "--set", "alpha=0.1"],
}
LINE = re.compile(
    r"(\S+) block (\S+) (?:tile (\S+))?\s*(?:vector (\d+))?\s*(?:shm (\S+))?\s+([\d.]+) ms/it"
)


def explain(stencilc, device, row, full=False):
    """The row with its predicted ms per iteration (or, `full`, the report)."""
    cmd = [stencilc, "explain", *map(str, ARGS[row["prog"]]), "--device", device,
           "--time", "1", "--json", "--block", row["block"]]
    if row["tile"]:
        cmd += ["--tile", row["tile"]]
    if row["vector"]:
        cmd += ["--vector", row["vector"]]
    # A row without `shm` ran unstaged (schedule_sweep.sh passes `--shm none`;
    # older logs name the rows their model staged, see their header).
    cmd += ["--shm", row["shm"] or "none"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    if full:
        return report
    row["predicted_ms"] = 1e3 * report["iteration_seconds"]
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--device", default="h200")
    parser.add_argument("--stencilc", default=str(ROOT / "target" / "release" / "stencilc"))
    args = parser.parse_args()
    rows = []
    for line in open(args.log):
        m = LINE.match(line)
        if m and m.group(1) in ARGS:
            prog, block, tile, vector, shm, ms = m.groups()
            rows.append(
                dict(prog=prog, block=block, tile=tile, vector=vector, shm=shm, ms=float(ms))
            )
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        rows = list(pool.map(lambda r: explain(args.stencilc, args.device, r), rows))
    errors = []
    by_program = {}
    for r in rows:
        ratio = r["ms"] / r["predicted_ms"]
        errors.append(math.log(ratio))
        by_program.setdefault(r["prog"], []).append(r)
        print(f"{r['prog']:9} block {r['block']:8} tile {r['tile'] or '-':7} "
              f"vector {r['vector'] or '1'} shm {r['shm'] or '-':4}"
              f" measured {r['ms']:.4f} predicted {r['predicted_ms']:.4f} ({ratio:.2f}x)")
    print(f"log-RMS error over {len(rows)}: {math.sqrt(sum(e * e for e in errors) / len(errors)):.3f}")
    for prog, group in by_program.items():
        ranked = min(group, key=lambda r: r["predicted_ms"])
        fastest = min(group, key=lambda r: r["ms"])
        print(f"{prog:9} model's fastest: block {ranked['block']} tile {ranked['tile']} "
              f"vector {ranked['vector'] or '1'} "
              f"shm {ranked['shm'] or '-'} measured {ranked['ms']:.4f}; fastest measured "
              f"{fastest['ms']:.4f} ({ranked['ms'] / fastest['ms']:.2f}x)")


if __name__ == "__main__":
    main()
