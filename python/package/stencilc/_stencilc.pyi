"""Type stubs of the extension module; `stencilc` re-exports every name."""

from os import PathLike
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

Backend = Literal["auto", "interp", "c", "opencl", "cuda"]
Target = Literal["c", "cuda", "opencl"]
Number = Union[int, float]

class CompileError(Exception):
    """A program with errors; `str(e)` is the rendered diagnostic."""

    line: Optional[int]
    column: Optional[int]
    diagnostic: str

class RunError(Exception):
    """A run that failed (back-end unavailable, sizes refused, ...)."""

class Parameter:
    """A parameter: `name` and SDSL `type`."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...

class Field:
    """A field (griddata) and the grid it lives on."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def dtype(self) -> str: ...
    @property
    def grid(self) -> str: ...
    @property
    def dims(self) -> List[str]: ...
    @property
    def time_levels(self) -> int: ...
    @property
    def boundary(self) -> str: ...

class Reduction:
    """A reduction of the iterate: `name`, SDSL `type`, operator `op`."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def op(self) -> str: ...

class Result:
    """What `Program.run` returns."""

    @property
    def fields(self) -> Dict[str, npt.NDArray[Any]]: ...
    @property
    def iterations(self) -> int: ...
    @property
    def stopped_by_check(self) -> bool: ...
    @property
    def reductions(self) -> Dict[str, Optional[Number]]: ...
    @property
    def times(self) -> Dict[str, float]: ...
    @property
    def backend(self) -> str: ...
    @property
    def params(self) -> Dict[str, Number]: ...
    @property
    def notes(self) -> List[str]: ...
    @property
    def read_in_place(self) -> Dict[str, int]:
        """`{name: address}`: the fields whose array the back-end read where it
        lies, without a copy (fields no stencil writes, on "interp" and "c"),
        and the address of the first element it read."""
        ...
    @property
    def tuned(self) -> Optional[Dict[str, Any]]:
        """The knobs of the tuned schedule the run used (from the tuning
        database `stencilc.tune` writes), or None."""
        ...

ExplainTarget = Literal["cuda", "opencl"]
Device = Literal["h100-sxm", "h100-pcie", "h200", "a100", "l40s", "v100"]

class Explain:
    """What each GPU kernel would cost on a device, and why (`stencilc
    explain`): `str(e)` is the command's text, `e.to_json()` its `--json`."""

    @property
    def kernels(self) -> List[Dict[str, Any]]:
        """The kernels in launch order: `name`, `role`, `block`,
        `points_per_thread`, `ptxas` (or None), `cost`,
        `launches_per_iteration`, `gstencils_per_s`, `fraction_of_copy`,
        `warnings`."""
        ...
    @property
    def program(self) -> str: ...
    @property
    def target(self) -> ExplainTarget: ...
    @property
    def device(self) -> Dict[str, Any]: ...
    @property
    def schedule(self) -> str: ...
    @property
    def sweep_seconds(self) -> float: ...
    @property
    def iteration_seconds(self) -> float: ...
    @property
    def notes(self) -> List[str]: ...
    @property
    def warnings(self) -> List[str]:
        """Every kernel's warnings, as "kernel: warning"."""
        ...
    def to_json(self) -> str: ...
    def as_dict(self) -> Dict[str, Any]: ...

class TuneResult:
    """What `stencilc.tune` found: the fastest schedule measured and what the
    search did (`as_dict()` is `stencilc tune --json`'s object)."""

    @property
    def best(self) -> Dict[str, Any]:
        """The fastest configuration's knobs: `block`, `tile`, `vector`, `shm`,
        `fuse`, `time`, `cpu_tile`, `threads` (those left to the back-end absent)."""
        ...
    @property
    def seconds(self) -> float: ...
    @property
    def flags(self) -> str: ...
    @property
    def pragma(self) -> Optional[str]: ...
    @property
    def paste(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def considered(self) -> int: ...
    @property
    def pruned(self) -> int: ...
    @property
    def candidates(self) -> int: ...
    @property
    def measured(self) -> int: ...
    @property
    def untried(self) -> int: ...
    @property
    def measurements(self) -> List[Dict[str, Any]]: ...
    @property
    def database(self) -> Optional[str]: ...
    @property
    def warnings(self) -> List[str]: ...
    def to_json(self) -> str: ...
    def as_dict(self) -> Dict[str, Any]: ...

def tune(
    program: Program,
    backend: Literal["c", "opencl", "cuda"] = "c",
    *,
    params: Optional[Mapping[str, Number]] = None,
    budget: Optional[float] = None,
    exhaustive: bool = False,
    repeats: int = 3,
    save: bool = True,
    inputs: Optional[Mapping[str, Any]] = None,
    **fields: Any,
) -> TuneResult:
    """Measures the program's schedules on `backend` (the space of `stencilc
    tune`, pruned by the model unless `exhaustive`), starting none after
    `budget` seconds, and records the fastest in the tuning database (unless
    `save=False`), where a later `Program.run` on that back-end with the same
    parameter values finds it. Fields are given as for `Program.run`."""
    ...

class Program:
    """A stencil program, parsed and checked."""

    def __init__(self, source: str, name: str = "program.sdsl") -> None: ...
    @staticmethod
    def from_file(path: Union[str, PathLike[str]], region: Optional[int] = None) -> Program: ...
    @property
    def name(self) -> str: ...
    @property
    def parameters(self) -> List[Parameter]: ...
    @property
    def fields(self) -> List[Field]: ...
    @property
    def reductions(self) -> List[Reduction]: ...
    def run(
        self,
        backend: Backend = "auto",
        *,
        params: Optional[Mapping[str, Number]] = None,
        block: Optional[Sequence[int]] = None,
        tile: Optional[Sequence[int]] = None,
        vector: Optional[Literal[1, 2, 4]] = None,
        time: Optional[int] = None,
        shm: Union[None, Literal["none", "auto"], Sequence[str]] = None,
        threads: Optional[int] = None,
        tuned: bool = True,
        inputs: Optional[Mapping[str, Any]] = None,
        **fields: Any,
    ) -> Result: ...
    def explain(
        self,
        target: ExplainTarget = "cuda",
        device: Optional[Device] = None,
        *,
        params: Optional[Mapping[str, Number]] = None,
        block: Optional[Sequence[int]] = None,
        tile: Optional[Sequence[int]] = None,
        vector: Optional[Literal[1, 2, 4]] = None,
        time: Optional[int] = None,
        shm: Union[None, Literal["none", "auto"], Sequence[str]] = None,
    ) -> Explain: ...
    def emit(
        self,
        target: Target = "c",
        *,
        params: Optional[Mapping[str, Number]] = None,
        block: Optional[Sequence[int]] = None,
        tile: Optional[Sequence[int]] = None,
        vector: Optional[Literal[1, 2, 4]] = None,
        time: Optional[int] = None,
        shm: Union[None, Literal["none", "auto"], Sequence[str]] = None,
        threads: Optional[int] = None,
    ) -> str: ...
