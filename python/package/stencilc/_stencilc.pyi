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
        time: Optional[int] = None,
        shm: Union[None, Literal["none", "auto"], Sequence[str]] = None,
        threads: Optional[int] = None,
        inputs: Optional[Mapping[str, Any]] = None,
        **fields: Any,
    ) -> Result: ...
    def emit(
        self,
        target: Target = "c",
        *,
        params: Optional[Mapping[str, Number]] = None,
        block: Optional[Sequence[int]] = None,
        tile: Optional[Sequence[int]] = None,
        time: Optional[int] = None,
        shm: Union[None, Literal["none", "auto"], Sequence[str]] = None,
        threads: Optional[int] = None,
    ) -> str: ...
