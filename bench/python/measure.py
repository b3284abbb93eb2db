#!/usr/bin/env python3
"""Measures the Python package's targets and prints a Markdown table.

    python bench/python/measure.py [--cli target/release/stencilc] [--runs 200]

1. Import plus first run of a cached program, in fresh processes: `import
   stencilc`, `Program.from_file`, and the first `run` of the 64x64 Jacobi on
   the C back-end (one OpenMP thread, as for every C run here), whose kernel is already in the on-disk cache (a warm-up
   process puts it there). NumPy's own import is shown apart.
2. The overhead of `Program.run` over the compute phase, for the 64x64 Jacobi
   (examples/jacobi2d.sdsl on examples/data/jacobi_64.npy, 1000 iterations):
   the wall time of the call minus `Result.times["compute"]`, the median over
   `--runs` calls (and its 10th percentile), for the interpreter and the C back-end; beside it, the same
   for the `stencilc run` process (its wall time minus the compute phase its
   --json reports), the cost of shelling out to the CLI.
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
JACOBI = ROOT / "examples" / "jacobi2d.sdsl"
DATA = ROOT / "examples" / "data" / "jacobi_64.npy"

FIRST_RUN = f"""
import time
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
import stencilc
a = numpy.load({str(DATA)!r})
t2 = time.perf_counter()
prog = stencilc.Program.from_file({str(JACOBI)!r})
result = prog.run("c", threads=1, a=a)
t3 = time.perf_counter()
print(t1 - t0, t3 - t1, t3 - t2, result.times["compute"])
"""


def first_runs(processes):
    subprocess.run([sys.executable, "-c", FIRST_RUN], check=True, capture_output=True)
    rows = []
    for _ in range(processes):
        out = subprocess.run([sys.executable, "-c", FIRST_RUN], check=True,
                             capture_output=True, text=True).stdout
        rows.append([float(x) for x in out.split()])
    return [statistics.median(column) for column in zip(*rows)]


def api_overhead(backend, runs):
    import numpy as np

    import stencilc

    a = np.load(DATA)
    prog = stencilc.Program.from_file(JACOBI)
    prog.run(backend, threads=1, a=a)
    overheads, computes = [], []
    for _ in range(runs):
        start = time.perf_counter()
        result = prog.run(backend, threads=1, a=a)
        wall = time.perf_counter() - start
        overheads.append(wall - result.times["compute"])
        computes.append(result.times["compute"])
    overheads.sort()
    return overheads[len(overheads) // 10], statistics.median(overheads), statistics.median(computes)


def cli_overhead(cli, backend, runs):
    with tempfile.TemporaryDirectory() as scratch:
        out = pathlib.Path(scratch) / "a.npy"
        command = [cli, "run", str(JACOBI), "--backend", backend, "--input", f"a={DATA}",
                   "--output", f"a={out}", "--json", "--quiet", "--no-tuned", "--threads", "1"]
        subprocess.run(command, check=True, capture_output=True)
        overheads, computes = [], []
        for _ in range(runs):
            start = time.perf_counter()
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            wall = time.perf_counter() - start
            compute = json.loads(done.stdout)["times"]["compute"]
            overheads.append(wall - compute)
            computes.append(compute)
    return statistics.median(overheads), statistics.median(computes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default=str(ROOT / "target" / "release" / "stencilc"))
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--processes", type=int, default=10)
    args = parser.parse_args()

    numpy_import, first, first_without_import, compute = first_runs(args.processes)
    print("| what | median |")
    print("|---|---|")
    print(f"| `import numpy` (not counted below) | {numpy_import * 1e3:.1f} ms |")
    print(f"| `import stencilc` + `from_file` + first `run` (C, cached kernel) | {first * 1e3:.1f} ms |")
    print(f"| of which `from_file` + first `run` | {first_without_import * 1e3:.1f} ms "
          f"(compute {compute * 1e3:.1f} ms) |")
    for backend in ["interp", "c"]:
        low, overhead, compute = api_overhead(backend, args.runs)
        print(f"| `Program.run` overhead over compute, 64² Jacobi, `{backend}` | "
              f"{overhead * 1e3:.3f} ms (10th percentile {low * 1e3:.3f} ms; "
              f"compute {compute * 1e3:.2f} ms) |")
    if pathlib.Path(args.cli).is_file():
        for backend in ["interp", "c"]:
            overhead, compute = cli_overhead(args.cli, backend, max(args.runs // 10, 5))
            print(f"| `stencilc run` process overhead over compute, `{backend}` | "
                  f"{overhead * 1e3:.2f} ms (compute {compute * 1e3:.2f} ms) |")
    else:
        print(f"(no CLI at {args.cli}: build it with cargo build --release)", file=sys.stderr)


if __name__ == "__main__":
    main()
