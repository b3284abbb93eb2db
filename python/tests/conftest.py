"""Shared fixtures: the repository's paths and the `stencilc` command-line binary."""

import os
import pathlib
import shutil

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
