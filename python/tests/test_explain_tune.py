"""`Program.explain` says what `stencilc explain` says (its text and its
`--json`), and `stencilc.tune` tunes as `stencilc tune` does: it returns a
schedule that runs, records it in the tuning database, and a later `run` with
no schedule keywords uses it."""

import json
import subprocess

import numpy as np
import pytest

from conftest import ROOT, has_c_compiler

import stencilc

BENCH = ROOT / "bench" / "programs"

# (program, params, explain keywords, CLI flags)
EXPLAIN_CASES = [
    ("j2d9pt.sdsl", {"n": 16384, "steps": 1}, {}, []),
    ("rician3d.sdsl", {"dim0": 130, "dim1": 97, "dim2": 61, "steps": 10,
                       "sigma": 0.05, "lambda": 0.065},
     {"target": "opencl", "device": "a100", "block": [32, 4]},
     ["--target", "opencl", "--device", "a100", "--block", "32,4"]),
    ("j2d5pt.sdsl", {"n": 1000, "steps": 4}, {"device": "v100", "shm": "none", "tile": [1, 2]},
     ["--device", "v100", "--shm", "none", "--tile", "1,2"]),
]


def cli_explain(cli, program, params, flags, json_output=False):
    command = [cli, "explain", str(BENCH / program)] + flags
    for name, value in params.items():
        command += ["--set", f"{name}={value!r}"]
    if json_output:
        command.append("--json")
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("program,params,keywords,flags", EXPLAIN_CASES,
                         ids=[c[0] for c in EXPLAIN_CASES])
def test_explain_equals_the_cli(cli, program, params, keywords, flags):
    report = stencilc.Program.from_file(BENCH / program).explain(params=params, **keywords)
    assert str(report) == cli_explain(cli, program, params, flags)
    # `--json` prints the same object, in the same order.
    assert report.to_json() + "\n" == cli_explain(cli, program, params, flags, json_output=True)


def test_explain_attributes_and_json_keys():
    report = stencilc.Program.from_file(BENCH / "j2d9pt.sdsl").explain(
        params={"n": 4096, "steps": 2})
    as_dict = report.as_dict()
    assert set(as_dict) == {
        "program", "target", "device", "parameters", "schedule", "ptxas",
        "instructions_counted", "kernels", "sweep_seconds", "iteration_seconds",
        "checked_iteration_seconds", "gstencils_per_s", "fraction_of_copy", "notes",
        "time_tiling"}
    assert as_dict == json.loads(report.to_json())
    assert report.program == "j2d9pt" and report.target == "cuda"
    assert report.device["key"] == "h100-sxm"
    assert as_dict["parameters"] == {"n": 4096, "steps": 2}
    kernels = report.kernels
    assert len(kernels) == 1
    kernel = kernels[0]
    assert {"name", "role", "block", "points_per_thread", "ptxas", "cost",
            "launches_per_iteration", "gstencils_per_s", "fraction_of_copy",
            "warnings"} <= set(kernel)
    assert kernel["cost"]["points"] == 4092 * 4092  # radius 2
    assert report.iteration_seconds > 0 and report.sweep_seconds > 0
    assert "j2d9pt" in repr(report) and "1 kernel(s)" in repr(report)
    assert isinstance(report.warnings, list)


def test_explain_bad_arguments():
    prog = stencilc.Program.from_file(BENCH / "j2d9pt.sdsl")
    with pytest.raises(ValueError, match="unknown device `rtx9090`; choose one of: .*h100"):
        prog.explain(device="rtx9090", params={"n": 64, "steps": 1})
    with pytest.raises(ValueError, match="explain takes \"cuda\" or \"opencl\""):
        prog.explain("c", params={"n": 64, "steps": 1})
    with pytest.raises(ValueError, match="`steps`.*have no value.*params="):
        prog.explain(params={"n": 64})
    with pytest.raises(ValueError, match="`m` is not a parameter"):
        prog.explain(params={"n": 64, "steps": 1, "m": 2})
    with pytest.raises(ValueError, match="does not fit the NVIDIA H100"):
        prog.explain(params={"n": 4096, "steps": 1}, block=[1024, 2])
    with pytest.raises(ValueError, match="block=\\[0\\]"):
        prog.explain(params={"n": 64, "steps": 1}, block=[0])
    with pytest.raises(TypeError):
        prog.explain(params={"n": 64.5, "steps": 1})


needs_cc = pytest.mark.skipif(not has_c_compiler(), reason="no C compiler (cc) for the C back-end")


@needs_cc
def test_tune_records_a_schedule_that_a_later_run_uses(tmp_path, monkeypatch):
    # A database (and kernel cache) of this test's own.
    monkeypatch.setenv("STENCILC_CACHE_DIR", str(tmp_path))
    prog = stencilc.Program.from_file(BENCH / "j2d5pt.sdsl")
    a = np.random.default_rng(3).random((67, 67), dtype=np.float32)
    before = a.copy()
    tuned = stencilc.tune(prog, "c", params={"steps": 6}, budget=0.5, repeats=1, a=a)
    assert np.array_equal(a, before)
    assert tuned.backend == "c"
    assert tuned.measured >= 1 and tuned.seconds > 0
    assert tuned.candidates >= tuned.measured
    assert tuned.considered == tuned.pruned + tuned.candidates
    assert tuned.untried + len(tuned.measurements) == tuned.candidates
    assert tuned.pragma is None
    assert tuned.flags == tuned.paste
    assert tuned.database == str(tmp_path / "tuning.json")
    stored = json.loads((tmp_path / "tuning.json").read_text())
    assert json.dumps(tuned.best, sort_keys=True) in json.dumps(stored, sort_keys=True)
    assert tuned.as_dict()["best"]["knobs"] == tuned.best
    assert "TuneResult j2d5pt on c" in repr(tuned)

    later = prog.run("c", params={"steps": 6}, a=a)
    assert later.tuned == tuned.best
    assert any(note.startswith("using the tuned schedule") for note in later.notes)
    plain = prog.run("c", params={"steps": 6}, tuned=False, a=a)
    assert plain.tuned is None
    reference = prog.run("interp", params={"steps": 6}, a=a)
    assert reference.tuned is None
    for result in (later, plain):
        assert result.fields["a"].tobytes() == reference.fields["a"].tobytes()
    # Other parameter values have no entry.
    assert prog.run("c", params={"steps": 7}, a=a).tuned is None


@needs_cc
def test_tune_without_saving(tmp_path, monkeypatch):
    monkeypatch.setenv("STENCILC_CACHE_DIR", str(tmp_path))
    prog = stencilc.Program.from_file(BENCH / "j2d5pt.sdsl")
    tuned = stencilc.tune(prog, params={"n": 40, "steps": 2}, budget=0.2, repeats=1,
                          save=False)
    assert tuned.database is None and tuned.measured >= 1
    assert not (tmp_path / "tuning.json").exists()


def test_tune_bad_arguments():
    prog = stencilc.Program.from_file(BENCH / "j2d5pt.sdsl")
    a = np.zeros((20, 20), dtype=np.float32)
    with pytest.raises(ValueError, match="tune takes \"c\", \"opencl\" or \"cuda\""):
        stencilc.tune(prog, "interp", params={"steps": 1}, a=a)
    for budget in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="positive number of seconds"):
            stencilc.tune(prog, params={"steps": 1}, budget=budget, a=a)
    with pytest.raises(TypeError, match="budget"):
        stencilc.tune(prog, params={"steps": 1}, budget="1s", a=a)
    with pytest.raises(ValueError, match="repeats=0"):
        stencilc.tune(prog, params={"steps": 1}, repeats=0, a=a)
    with pytest.raises(TypeError, match="stencilc.Program"):
        stencilc.tune("j2d5pt.sdsl", params={"steps": 1}, a=a)
    with pytest.raises(ValueError, match="`b` is not a field"):
        stencilc.tune(prog, params={"steps": 1}, b=a)
    with pytest.raises(TypeError, match="float32"):
        stencilc.tune(prog, params={"steps": 1}, a=a.astype(np.float64))
    with pytest.raises(ValueError, match="`n`.*have no value"):
        stencilc.tune(prog, params={"steps": 1})
