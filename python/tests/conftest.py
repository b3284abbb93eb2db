"""Shared fixtures: the repository's paths and the `stencilc` command-line binary."""

import os
import pathlib
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DATA = EXAMPLES / "data"


@pytest.fixture(scope="session")
def cli():
    """The CLI binary the API is compared with: $STENCILC_BIN, else the debug
    or release build of this checkout (`cargo build` makes it)."""
    given = os.environ.get("STENCILC_BIN")
    candidates = [given] if given else [
        ROOT / "target" / "debug" / "stencilc",
        ROOT / "target" / "release" / "stencilc",
    ]
    for candidate in candidates:
        if candidate and pathlib.Path(candidate).is_file():
            return str(candidate)
    pytest.fail(
        "no stencilc binary: run `cargo build` at the repository root first, "
        "or set STENCILC_BIN"
    )


def has_c_compiler():
    """Whether the C back-end can run here (it compiles with $CC or cc)."""
    return shutil.which(os.environ.get("CC", "cc")) is not None


def require_runtime(name, why_missing):
    """Skips the calling test when runtime `name` (as `STENCILC_REQUIRE` names
    it: `opencl`, `cuda`, ...) is missing, `why_missing` saying why (None:
    it is here); fails it instead when `STENCILC_REQUIRE` names the runtime,
    as CI sets it. A skip is printed, and logged to `$STENCILC_SKIP_LOG` as
    the Rust tests log theirs (tests/common/mod.rs)."""
    if why_missing is None:
        return
    required = {r.strip() for r in os.environ.get("STENCILC_REQUIRE", "").split(",")}
    reason = f"runtime `{name}` unavailable: {why_missing}"
    if name in required:
        pytest.fail(f"{reason} (STENCILC_REQUIRE names it)")
    print(f"skipped: {reason}", file=sys.stderr)
    log = os.environ.get("STENCILC_SKIP_LOG")
    if log:
        with open(log, "a") as out:
            out.write(f"python: {reason}\n".replace("\n", " ").rstrip() + "\n")
    pytest.skip(reason)


_OPENCL_PROBE = """
int n;
grid g[n];
float griddata a on g at 0,1;
iterate 1 {
    stencil s {
        [0:n-1] : [1]a[0] = [0]a[0] + 1.0f;
    }
}
"""


@pytest.fixture(scope="session")
def opencl_missing():
    """Why the OpenCL back-end cannot run here (no ICD, no device), or None."""
    import numpy as np

    import stencilc

    try:
        stencilc.Program(_OPENCL_PROBE).run("opencl", a=np.zeros(5, dtype=np.float32))
    except stencilc.RunError as error:
        return str(error).splitlines()[0]
    return None
