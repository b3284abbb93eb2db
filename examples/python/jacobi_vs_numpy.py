#!/usr/bin/env python3
"""Time a 2-D 5-point Jacobi (bench/programs/j2d5pt.sdsl) on stencilc against the
same sweeps in plain NumPy, and print the ratio.

    python examples/python/jacobi_vs_numpy.py [--n 1000] [--steps 200] [--backend c]

Both compute in float32 in the same order, so the results are compared exactly.
The stencilc time is the wall time of `Program.run` (a first, untimed run
compiles the C and caches it); the NumPy time is the best of `--repeat` loops.
"""

import argparse
import pathlib
import time

import numpy as np

import stencilc

ROOT = pathlib.Path(__file__).resolve().parents[2]
C = [np.float32(c) for c in (5.1, 12.1, 15.0, 12.2, 5.2, 118.0)]


def numpy_jacobi(a, steps):
    """`steps` sweeps of the interior; the border keeps its values."""
    a, b = a.copy(), a.copy()
    for _ in range(steps):
        b[1:-1, 1:-1] = (C[0] * a[:-2, 1:-1] + C[1] * a[1:-1, :-2] + C[2] * a[1:-1, 1:-1]
                         + C[3] * a[1:-1, 2:] + C[4] * a[2:, 1:-1]) / C[5]
        a, b = b, a
    return a


def best_of(repeat, work):
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = work()
        times.append(time.perf_counter() - start)
    return min(times), value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--backend", default="c")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    a = np.random.default_rng(0).random((args.n, args.n), dtype=np.float32)
    prog = stencilc.Program.from_file(ROOT / "bench" / "programs" / "j2d5pt.sdsl")
    params = {"steps": args.steps}
    prog.run(args.backend, params=params, a=a)  # compiles (or loads) the kernel

    ours, result = best_of(args.repeat, lambda: prog.run(args.backend, params=params, a=a))
    theirs, expected = best_of(args.repeat, lambda: numpy_jacobi(a, args.steps))
    print(f"{args.n}x{args.n}, {args.steps} steps, float32")
    print(f"  stencilc ({result.backend}): {ours * 1e3:9.2f} ms")
    print(f"  NumPy:            {theirs * 1e3:9.2f} ms")
    print(f"  NumPy / stencilc: {theirs / ours:9.2f}x")
    print(f"  results identical: {np.array_equal(result.fields['a'], expected)}")


if __name__ == "__main__":
    main()
