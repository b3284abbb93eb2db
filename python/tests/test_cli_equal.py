"""Every example program through the Python API equals `stencilc run` bit for bit:
the fields, the iteration count, whether the check stopped the loop, and the
reductions, on the interpreter, the C back-end and OpenCL (skipped, with the
reason printed, where no OpenCL platform runs; CI requires it)."""

import json
import subprocess

import numpy as np
import pytest

from conftest import DATA, EXAMPLES, has_c_compiler, require_runtime

import stencilc


def noisy_image(height, width, seed):
    """An image whose size is no multiple of a tile."""
    return np.random.default_rng(seed).random((height, width), dtype=np.float32)


# (program, params, {field: array}); sizes come from the arrays' shapes.
CASES = [
    ("gaussian_blur.sdsl", {}, {"img": noisy_image(37, 53, 1)}),
    ("gaussian_blur_separable.sdsl", {}, {"img": noisy_image(29, 41, 2)}),
    ("jacobi2d.sdsl", {}, {"a": np.load(DATA / "jacobi_64.npy")}),
    ("heat3d.sdsl", {"steps": 50, "alpha": 0.1}, {"u": np.load(DATA / "heat_16.npy")}),
    ("wave2d.sdsl", {"steps": 100, "c2": 0.2}, {"u": np.load(DATA / "wave_64.npy")}),
    (
        "rician3d.sdsl",
        {"sigma": 0.05, "lambda": 0.065},
        {
            "U": np.load(DATA / "rician_24x20x16.npy"),
            "F": np.load(DATA / "rician_24x20x16.npy"),
        },
    ),
]

BACKENDS = ["interp", pytest.param("c", marks=pytest.mark.skipif(
    not has_c_compiler(), reason="no C compiler (cc) for the C back-end")), "opencl"]


def test_every_example_program_is_covered():
    covered = {case[0] for case in CASES}
    assert covered == {p.name for p in EXAMPLES.glob("*.sdsl")}


def run_cli(cli, program, backend, params, fields, tmp_path):
    """`stencilc run` with .npy inputs; every field written out; its JSON."""
    command = [cli, "run", str(EXAMPLES / program), "--backend", backend, "--json",
               "--no-tuned", "--quiet"]
    for name, value in params.items():
        command += ["--set", f"{name}={value!r}"]
    for name, array in fields.items():
        path = tmp_path / f"in_{name}.npy"
        np.save(path, array)
        command += ["--input", f"{name}={path}"]
    outputs = {}
    for field in stencilc.Program.from_file(EXAMPLES / program).fields:
        outputs[field.name] = tmp_path / f"out_{field.name}.npy"
        command += ["--output", f"{field.name}={outputs[field.name]}"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout), {name: np.load(path) for name, path in outputs.items()}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("program,params,fields", CASES, ids=[c[0] for c in CASES])
def test_api_equals_cli(cli, tmp_path, program, params, fields, backend, request):
    if backend == "opencl":
        require_runtime("opencl", request.getfixturevalue("opencl_missing"))
    summary, expected = run_cli(cli, program, backend, params, fields, tmp_path)
    result = stencilc.Program.from_file(EXAMPLES / program).run(
        backend, params=params, tuned=False, **fields)
    assert result.backend == summary["backend"] == backend
    assert result.iterations == summary["iterations"]
    assert result.stopped_by_check == summary["stopped_by_check"]
    assert set(result.fields) == set(expected)
    for name, array in expected.items():
        ours = result.fields[name]
        assert ours.dtype == array.dtype and ours.shape == array.shape, name
        assert ours.tobytes() == array.tobytes(), f"field {name} differs from the CLI's"
    reductions = summary.get("reductions", {})
    assert set(result.reductions) == set(reductions)
    for name, value in reductions.items():
        # The JSON prints the value in full (shortest round trip of a double).
        assert result.reductions[name] == value, name
