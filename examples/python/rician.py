#!/usr/bin/env python3
"""Denoise a volume with the Rician denoiser (examples/rician3d.sdsl) and plot the
convergence of its reduction, the largest change of an iteration.

    python examples/python/rician.py [--backend c] [--iterations 50] [--out rician.png]

The program is run one iteration at a time (its source with `iterate 1` and the
check every iteration), the denoised volume fed back as the next run's `U`: the
same computation as one run of many iterations, with every `max_diff` seen.
"""

import argparse
import pathlib
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import stencilc

EXAMPLES = pathlib.Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--out", default="rician.png")
    args = parser.parse_args()

    source = (EXAMPLES / "rician3d.sdsl").read_text()
    source = re.sub(r"iterate \d+", "iterate 1", source)
    source = re.sub(r"every \d+ iterations", "every 1 iterations", source)
    step = stencilc.Program(source, name="rician3d.sdsl")

    noisy = np.load(EXAMPLES / "data" / "rician_24x20x16.npy")
    params = {"sigma": 0.05, "lambda": 0.065}
    u, changes = noisy.copy(), []
    for _ in range(args.iterations):
        result = step.run(args.backend, params=params, U=u, F=noisy)
        u = result.fields["U"]
        changes.append(result.reductions["max_diff"])
    print(f"{args.iterations} iterations on `{result.backend}`: max_diff "
          f"{changes[0]:.3g} -> {changes[-1]:.3g}")

    # The whole run in one call gives the same volume.
    whole = stencilc.Program.from_file(EXAMPLES / "rician3d.sdsl").run(
        args.backend, params=params, U=noisy, F=noisy.copy())
    if args.iterations == whole.iterations:
        print("same as one run of", whole.iterations, "iterations:",
              np.array_equal(whole.fields["U"], u))

    figure, axes = plt.subplots(figsize=(6, 3.6))
    axes.semilogy(range(1, len(changes) + 1), changes, marker=".")
    axes.axhline(1e-5, color="gray", linestyle="--", label="TOL (the check)")
    axes.set_xlabel("iteration")
    axes.set_ylabel("max_diff")
    axes.set_title("Rician denoise: largest change per iteration")
    axes.legend()
    figure.tight_layout()
    figure.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
