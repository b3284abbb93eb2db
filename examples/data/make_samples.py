#!/usr/bin/env python3
"""Writes the sample inputs of stencilc's examples, deterministically.

Standard library only (no NumPy, no Pillow), so that anyone can regenerate the
files: `python3 examples/data/make_samples.py`. Outputs, next to this script:

  sample.png      320x240 8-bit grayscale scene with edges and noise (Gaussian blur)
  jacobi_64.npy   64x64 float32, 0 everywhere but a hot top edge of 1.0 (Jacobi 2-D)
  heat_24.npy     24x24x24 float64, 0 with a hot face z = 0 of 100.0 (3-D heat)
  wave_64.npy     64x64 float32, a Gaussian bump off centre (wave equation)
  rician_24x20x16.npy  float64 (dim2, dim1, dim0) = (16, 20, 24): a bright ball
                  in a dark volume with Rician noise, values in [0, 1] (denoise)
"""

import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


class Lcg:
    """A tiny 64-bit linear congruential generator: the same numbers everywhere."""

    def __init__(self, seed):
        self.state = seed

    def uniform(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (self.state >> 11) / float(2**53)

    def gauss(self):
        u1 = max(self.uniform(), 1e-12)
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def write_png_gray8(path, width, height, pixels):
    """Writes an 8-bit grayscale PNG; `pixels` is row-major, values 0..255."""

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter: none
        rows.extend(pixels[y * width:(y + 1) * width])
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", header))
        f.write(chunk(b"IDAT", zlib.compress(bytes(rows), 9)))
        f.write(chunk(b"IEND", b""))


def write_npy(path, descr, shape, values):
    """Writes a C-ordered little-endian .npy file (format version 1.0)."""
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    code = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q"}[descr]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00")
        f.write(struct.pack("<H", len(header)))
        f.write(header.encode("ascii"))
        f.write(struct.pack("<%d%s" % (len(values), code), *values))


def sample_scene(width=320, height=240):
    """A gradient sky, a bright disc, a dark box, a striped band, and noise."""
    rng = Lcg(2024)
    pixels = bytearray()
    for y in range(height):
        for x in range(width):
            v = 60.0 + 80.0 * x / width  # horizontal gradient
            if (x - 100) ** 2 + (y - 110) ** 2 < 55 ** 2:
                v = 220.0  # disc: a curved edge
            if 190 <= x < 290 and 40 <= y < 130:
                v = 25.0  # box: straight edges and corners
            if 160 <= y < 210 and 170 <= x < 300 and (x // 8) % 2 == 0:
                v = 200.0  # stripes: fine detail that a blur removes
            v += 8.0 * rng.gauss()  # sensor noise
            pixels.append(max(0, min(255, int(round(v)))))
    return width, height, pixels


def main():
    width, height, pixels = sample_scene()
    write_png_gray8(os.path.join(HERE, "sample.png"), width, height, pixels)

    n = 64
    jacobi = [1.0 if y == 0 else 0.0 for y in range(n) for x in range(n)]
    write_npy(os.path.join(HERE, "jacobi_64.npy"), "<f4", (n, n), jacobi)

    m = 16
    heat = [100.0 if z == 0 else 0.0 for z in range(m) for y in range(m) for x in range(m)]
    write_npy(os.path.join(HERE, "heat_16.npy"), "<f8", (m, m, m), heat)

    wave = []
    for y in range(n):
        for x in range(n):
            r2 = (x - 40) ** 2 + (y - 28) ** 2
            wave.append(math.exp(-r2 / 18.0))
    write_npy(os.path.join(HERE, "wave_64.npy"), "<f4", (n, n), wave)

    rng = Lcg(7)
    d0, d1, d2 = 24, 20, 16
    volume = []
    for z in range(d2):
        for y in range(d1):
            for x in range(d0):
                inside = (x - 12) ** 2 + (y - 10) ** 2 + (z - 8) ** 2 < 6 ** 2
                clean = 0.8 if inside else 0.2
                sigma = 0.05
                re = clean + sigma * rng.gauss()
                im = sigma * rng.gauss()
                volume.append(math.sqrt(re * re + im * im))  # Rician noise
    write_npy(os.path.join(HERE, "rician_24x20x16.npy"), "<f8", (d2, d1, d0), volume)


if __name__ == "__main__":
    main()
