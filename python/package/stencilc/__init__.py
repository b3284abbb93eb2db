"""stencilc: stencil programs (SDSL) run on NumPy arrays.

    >>> import numpy as np, stencilc
    >>> prog = stencilc.Program.from_file("examples/jacobi2d.sdsl")
    >>> a = np.zeros((64, 64), dtype=np.float32); a[0, :] = 1
    >>> result = prog.run("c", a=a)          # grid sizes from a's shape
    >>> result.fields["a"], result.iterations, result.reductions["max_diff"]

`Program(source)` / `Program.from_file(path)` parse and check a program
(`CompileError` with the rendered diagnostic, `.line` and `.column`);
`Program.run(backend="auto", *, params=None, block=None, tile=None,
vector=None, time=None, shm=None, **fields)` runs it on arrays of the fields' dtypes and grid shapes and
returns a `Result` (`.fields`, `.iterations`, `.stopped_by_check`,
`.reductions`, `.times`, `.backend`, `.params`, `.notes`, `.tuned`);
`Program.emit(target)` returns the generated C, CUDA or OpenCL;
`Program.explain(target, device, params=...)` what each GPU kernel would cost
(`stencilc explain`, as text or JSON); `stencilc.tune(program, backend,
params=..., budget=...)` measures schedules and records the fastest, which
later runs use. Bad arguments raise `ValueError` or
`TypeError`, a failed run `RunError`; Ctrl-C stops a run between iterations
with `KeyboardInterrupt`. Arrays passed in are never changed.
"""

from ._stencilc import (
    Explain,
    TuneResult,
    tune,
    CompileError,
    Field,
    Parameter,
    Program,
    Reduction,
    Result,
    RunError,
    __version__,
)

__all__ = [
    "Explain",
    "TuneResult",
    "tune",
    "CompileError",
    "Field",
    "Parameter",
    "Program",
    "Reduction",
    "Result",
    "RunError",
    "__version__",
]
