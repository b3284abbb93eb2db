#!/usr/bin/env python3
"""The same 2-D 5-point Jacobi (bench/programs/j2d5pt.sdsl: AN5D coefficients,
float32, interior only) as a whole script in a fresh process, with stencilc,
pystencils and Devito: wall time of the process (interpreter start, imports,
kernel construction, run) and of the sweeps alone, medians of `--processes`
processes after one warm-up process (which fills each tool's kernel cache).

    python bench/python/peers.py --python-peers /path/to/venv/bin/python [--n 64 --steps 100]

stencilc runs from this interpreter; pystencils and Devito from the one given
(a venv with `pip install numpy pystencils devito`).
"""

import argparse
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

STENCILC = """
import time, numpy as np, stencilc
a = np.random.default_rng(0).random(({n}, {n}), dtype=np.float32)
prog = stencilc.Program.from_file({program!r})
r = prog.run("c", params={{"steps": {steps}}}, threads=1, a=a)
print(r.times["compute"])  # the sweeps; loading the cached kernel is in the process wall
"""

PYSTENCILS = """
import time, numpy as np, pystencils as ps
a = np.random.default_rng(0).random(({n}, {n}), dtype=np.float32)
b = a.copy()
src, dst = ps.fields("src, dst: float32[2D]")
c = [np.float32(x) for x in (5.1, 12.1, 15.0, 12.2, 5.2, 118.0)]
update = ps.Assignment(dst.center, (c[0] * src[-1, 0] + c[1] * src[0, -1] + c[2] * src[0, 0]
                                    + c[3] * src[0, 1] + c[4] * src[1, 0]) / c[5])
kernel = ps.create_kernel(update).compile()
t = time.perf_counter()
for _ in range({steps}):
    kernel(src=a, dst=b)
    a, b = b, a
print(time.perf_counter() - t)
"""

DEVITO = """
import time, numpy as np
from devito import Grid, TimeFunction, Eq, Operator, configuration
configuration["log-level"] = "ERROR"
a = np.random.default_rng(0).random(({n}, {n}), dtype=np.float32)
grid = Grid(shape=({n}, {n}), dtype=np.float32)
u = TimeFunction(name="u", grid=grid, space_order=1)
x, y = grid.dimensions
t_ = grid.stepping_dim
u.data[0] = a
u.data[1] = a
rhs = (5.1 * u[t_, x - 1, y] + 12.1 * u[t_, x, y - 1] + 15.0 * u[t_, x, y]
       + 12.2 * u[t_, x, y + 1] + 5.2 * u[t_, x + 1, y]) / 118.0
op = Operator([Eq(u.forward, rhs, subdomain=grid.interior)])
t = time.perf_counter()
op.apply(time_M={steps} - 1)
print(time.perf_counter() - t)
"""


def measure(python, script, processes):
    subprocess.run([python, "-c", script], check=True, capture_output=True)
    walls, sweeps = [], []
    for _ in range(processes):
        start = time.perf_counter()
        out = subprocess.run([python, "-c", script], check=True, capture_output=True,
                             text=True).stdout
        walls.append(time.perf_counter() - start)
        sweeps.append(float(out.split()[-1]))
    return statistics.median(walls), statistics.median(sweeps)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-peers", required=True)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--processes", type=int, default=5)
    args = parser.parse_args()
    values = dict(n=args.n, steps=args.steps,
                  program=str(ROOT / "bench" / "programs" / "j2d5pt.sdsl"))
    rows = [("stencilc (c)", sys.executable, STENCILC),
            ("pystencils", args.python_peers, PYSTENCILS),
            ("Devito", args.python_peers, DEVITO)]
    results = {name: measure(python, script.format(**values), args.processes)
               for name, python, script in rows}
    ours_wall, ours_sweeps = results["stencilc (c)"]
    print(f"{args.n}x{args.n}, {args.steps} steps, float32, medians of {args.processes} processes")
    print("| script | process wall | sweeps | wall / stencilc's | sweeps / stencilc's |")
    print("|---|---|---|---|---|")
    for name, (wall, sweeps) in results.items():
        print(f"| {name} | {wall * 1e3:.0f} ms | {sweeps * 1e3:.2f} ms | "
              f"{wall / ours_wall:.1f}x | {sweeps / ours_sweeps:.1f}x |")


if __name__ == "__main__":
    main()
