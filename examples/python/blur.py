#!/usr/bin/env python3
"""Blur an image held in a NumPy array with examples/gaussian_blur.sdsl and save a
before/after figure.

    python examples/python/blur.py [--backend c] [--out blur.png]

The image is examples/data/sample.png read by matplotlib (grayscale, floats in
[0, 1]); its width and height come from the array's shape.
"""

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt
import numpy as np

import stencilc

EXAMPLES = pathlib.Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--out", default="blur.png", help="the figure's file")
    args = parser.parse_args()

    image = plt.imread(EXAMPLES / "data" / "sample.png")
    if image.ndim == 3:  # RGB(A) read of a gray PNG: keep one channel
        image = image[..., 0]
    image = np.ascontiguousarray(image, dtype=np.float32)

    blur = stencilc.Program.from_file(EXAMPLES / "gaussian_blur.sdsl")
    result = blur.run(args.backend, img=image)
    blurred = result.fields["out"]
    print(f"{image.shape[1]}x{image.shape[0]} image blurred on `{result.backend}` "
          f"in {result.times['compute'] * 1e3:.2f} ms")

    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    for axes, data, title in [(left, image, "before"), (right, blurred, "after (7x7 Gaussian)")]:
        axes.imshow(data, cmap="gray", vmin=0, vmax=1)
        axes.set_title(title)
        axes.axis("off")
    figure.tight_layout()
    figure.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
