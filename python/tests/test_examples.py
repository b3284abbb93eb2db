"""The Python examples run and say what they should (small sizes)."""

import subprocess
import sys

import pytest

from conftest import EXAMPLES

SCRIPTS = EXAMPLES / "python"


def run(script, *args, cwd):
    done = subprocess.run([sys.executable, str(SCRIPTS / script), *args], cwd=cwd,
                          capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.parametrize("script,args,expected", [
    ("blur.py", ["--backend", "interp", "--out", "blur.png"], "wrote blur.png"),
    ("rician.py", ["--backend", "interp", "--out", "rician.png"],
     "same as one run of 50 iterations: True"),
])
def test_figures(tmp_path, script, args, expected):
    pytest.importorskip("matplotlib")
    assert expected in run(script, *args, cwd=tmp_path)
    assert (tmp_path / args[-1]).stat().st_size > 0


def test_jacobi_against_numpy(tmp_path):
    out = run("jacobi_vs_numpy.py", "--n", "67", "--steps", "5", "--backend", "interp",
              "--repeat", "1", cwd=tmp_path)
    assert "results identical: True" in out
