"""The API's behaviour: what a program declares, results, bad input of every
kind (each a Python exception with a message that says what to do), inputs
never changed, two threads at once, Ctrl-C between iterations."""

import _thread
import signal
import threading

import numpy as np
import pytest

from conftest import EXAMPLES, has_c_compiler

import stencilc

JACOBI = EXAMPLES / "jacobi2d.sdsl"
RICIAN = EXAMPLES / "rician3d.sdsl"

# Many cheap iterations: long enough to interrupt, short per iteration.
SLOW = """
int n;
grid g[n];
double griddata a on g at 0,1;
iterate 100000000 {
    stencil s {
        [0:n-1] : [1]a[0] = [0]a[0] + 1.0;
    }
}
"""


@pytest.fixture
def jacobi():
    return stencilc.Program.from_file(JACOBI)


def plate(height=23, width=31):
    a = np.zeros((height, width), dtype=np.float32)
    a[0, :] = 1.0
    return a


def test_declarations_and_repr(jacobi):
    assert jacobi.name == "jacobi2d"
    assert [(p.name, p.type) for p in jacobi.parameters] == [("dim0", "int"), ("dim1", "int")]
    (a,) = jacobi.fields
    assert (a.name, a.type, a.dtype, a.grid, a.dims, a.time_levels, a.boundary) == (
        "a", "float", "float32", "g", ["dim1", "dim0"], 2, "none")
    assert [(r.name, r.op) for r in jacobi.reductions] == [("max_diff", "max")]
    assert repr(jacobi) == (
        "<stencilc.Program jacobi2d(int dim0, int dim1): "
        "Field(float a[dim1][dim0] on g, 2 time level(s), boundary none)>")
    assert "grid g" in str(jacobi)


def test_result(jacobi):
    result = jacobi.run("interp", a=plate())
    assert result.params == {"dim0": 31, "dim1": 23}
    # The check (max_diff < 1e-5, every 4) ends this small plate early.
    assert result.stopped_by_check is True
    assert result.iterations < 1000 and result.iterations % 4 == 0
    assert result.reductions["max_diff"] < 1e-5
    assert set(result.times) == {"compile", "upload", "compute", "download"}
    out = result.fields["a"]
    assert out.shape == (23, 31) and out.dtype == np.float32 and out.flags.c_contiguous
    assert 0 < out[1:-1, 1:-1].max() < 1


def test_params_override_and_missing_fields_start_at_zero():
    prog = stencilc.Program(SLOW.replace("100000000", "3"))
    result = prog.run("interp", params={"n": 5})
    assert result.fields["a"].tolist() == [3.0] * 5


def test_inputs_are_never_changed_and_outputs_are_fresh_arrays(jacobi):
    a = plate()
    before = a.copy()
    result = jacobi.run("interp", a=a)
    assert np.array_equal(a, before)
    assert not np.shares_memory(result.fields["a"], a)


def test_outputs_are_the_back_ends_buffers_handed_over(jacobi):
    # Not a copy: the array views memory that Rust owns (a Vec moved to NumPy).
    out = jacobi.run("interp", a=plate()).fields["a"]
    assert not out.flags.owndata
    owner = out
    while isinstance(owner, np.ndarray):
        owner = owner.base
    assert type(owner).__name__ == "PySliceContainer"


def test_buffer_protocol_and_read_only_inputs(jacobi):
    a = plate()
    expected = jacobi.run("interp", a=a).fields["a"]
    frozen = a.copy()
    frozen.flags.writeable = False
    assert np.array_equal(jacobi.run("interp", a=frozen).fields["a"], expected)
    # A memoryview keeps its format and shape: no conversion needed.
    assert np.array_equal(jacobi.run("interp", a=memoryview(a)).fields["a"], expected)


def test_emit(jacobi):
    c = jacobi.emit("c")
    assert "jacobi2d" in c and "#include" in c
    assert "__global__" in jacobi.emit("cuda")
    assert "__kernel" in jacobi.emit("opencl")
    with pytest.raises(ValueError, match='give "c", "cuda" or "opencl"'):
        jacobi.emit("fortran")


def test_vector_keyword(jacobi):
    cuda = jacobi.emit("cuda", vector=4, tile=[1, 2])
    assert "float4" in cuda and "vector 4" in cuda
    assert "float4" not in jacobi.emit("cuda", vector=1, tile=[1, 2])
    with pytest.raises(ValueError, match="1, 2 or 4"):
        jacobi.emit("cuda", vector=3)
    with pytest.raises(ValueError, match="give --tile 1,"):
        jacobi.emit("cuda", vector=4, tile=[2, 1])


# --- bad input -------------------------------------------------------------------

def test_compile_error_has_the_diagnostic_line_and_column():
    source = "int n;\ngrid g[n];\nfloat griddata a on g at 0,1;\n" \
             "iterate 3 { stencil s { [0:n-1] : [1]a[0] = [0]a[0] + x; } }\n"
    with pytest.raises(stencilc.CompileError) as caught:
        stencilc.Program(source, name="bad.sdsl")
    error = caught.value
    assert (error.line, error.column) == (4, 55)
    assert "bad.sdsl:4:55" in str(error) and "unknown name `x`" in str(error)
    assert "^" in error.diagnostic


def test_missing_file():
    with pytest.raises(OSError, match="cannot read"):
        stencilc.Program.from_file(EXAMPLES / "no_such.sdsl")


@pytest.mark.parametrize("array,error,message", [
    (plate().astype(np.float64), TypeError, r"dtype float32, not float64.*astype\(numpy.float32\)"),
    (plate().astype(np.int32), TypeError, "dtype float32, not int32"),
    (plate()[:, ::2], ValueError, r"not C-contiguous.*ascontiguousarray"),
    (np.asfortranarray(plate()), ValueError, "not C-contiguous"),
    (plate()[0], ValueError, r"2-D grid, but its array has 1 dimension\(s\)"),
    ([[1.0, 2.0]], TypeError, "not a list"),
    (3.0, TypeError, "not a float"),
])
def test_bad_arrays(jacobi, array, error, message):
    with pytest.raises(error, match=message):
        jacobi.run("interp", a=array)


def test_wrong_shape_names_field_dtype_and_shape(jacobi):
    with pytest.raises(ValueError, match=r"field `a` needs an array of shape \(4, 5\) and dtype float32"
                                         r" for these parameters, not shape \(23, 31\)"):
        jacobi.run("interp", params={"dim0": 5, "dim1": 4}, a=plate())


def test_arrays_that_disagree_on_a_size():
    rician = stencilc.Program.from_file(RICIAN)
    u = np.zeros((4, 5, 6))
    f = np.zeros((4, 5, 7))
    with pytest.raises(ValueError, match="disagree on grid size `dim0`"):
        rician.run("interp", params={"sigma": 0.05, "lambda": 0.065}, U=u, F=f)


def test_aliased_arrays():
    rician = stencilc.Program.from_file(RICIAN)
    u = np.zeros((4, 5, 6))
    with pytest.raises(ValueError, match="fields `U` and `F` are given arrays that share memory"):
        rician.run("interp", params={"sigma": 0.05, "lambda": 0.065}, U=u, F=u)
    whole = np.zeros((2, 4, 5, 6))
    with pytest.raises(ValueError, match="share memory"):
        rician.run("interp", params={"sigma": 0.05, "lambda": 0.065}, U=whole[0], F=whole[0][1:3])


def test_unknown_field_and_parameter(jacobi):
    with pytest.raises(ValueError, match=r"`b` is not a field of `jacobi2d`.*did you mean `a`"):
        jacobi.run("interp", b=plate())
    with pytest.raises(ValueError, match=r"`dim2` is not a parameter of `jacobi2d`.*`dim0`, `dim1`"):
        jacobi.run("interp", params={"dim2": 3}, a=plate())
    with pytest.raises(ValueError, match="`q` is not a field"):
        jacobi.run("interp", params={"dim0": 4, "dim1": 4}, shm=["q"])


def test_a_parameter_given_as_a_field_and_a_field_given_in_params_say_where_they_belong():
    rician = stencilc.Program.from_file(RICIAN)
    u = np.zeros((4, 5, 6))
    with pytest.raises(ValueError, match=r"`sigma` is a parameter of `rician3d` \(double\), not a field: "
                                         r"give it in params=, e\.g\. params=\{\"sigma\": 0\.05\}"):
        rician.run("interp", U=u, F=u.copy(), sigma=0.05)
    with pytest.raises(ValueError, match=r"`U` is a field of `rician3d`, not a parameter: give its array "
                                         r"as a keyword argument, e\.g\. run\(\.\.\., U=array\)"):
        rician.run("interp", params={"sigma": 0.05, "lambda": 0.065, "U": u}, F=u.copy())
    # The same for explain, which reads params= the same way.
    with pytest.raises(ValueError, match=r"`F` is a field of `rician3d`, not a parameter"):
        rician.explain(params={"dim0": 8, "dim1": 8, "dim2": 8, "sigma": 0.05, "lambda": 0.065,
                               "F": u})


def test_bad_parameter_values(jacobi):
    with pytest.raises(TypeError, match="`dim0` is an int: give a Python int, not float"):
        jacobi.run("interp", params={"dim0": 4.0, "dim1": 4})
    with pytest.raises(TypeError, match="not bool"):
        jacobi.run("interp", params={"dim0": True, "dim1": 4})
    with pytest.raises(ValueError, match="does not fit parameter `dim0`"):
        jacobi.run("interp", params={"dim0": 2**40, "dim1": 4})
    with pytest.raises(ValueError, match=r"parameter\(s\) `dim0`, `dim1` of `jacobi2d` have no value"):
        jacobi.run("interp")


def test_negative_and_huge_sizes(jacobi):
    with pytest.raises(ValueError, match="size -3") as caught:
        jacobi.run("interp", params={"dim0": -3, "dim1": 4})
    assert caught.value.line == 6
    with pytest.raises(ValueError, match="more memory than can be allocated"):
        stencilc.Program(SLOW).run("interp", params={"n": 2**31 - 1})


def test_bad_backend_and_schedule(jacobi):
    with pytest.raises(ValueError, match='give "auto", "interp", "c", "opencl" or "cuda"'):
        jacobi.run("gpu", a=plate())
    with pytest.raises(ValueError, match="1 to 3 positive sizes"):
        jacobi.run("interp", block=[0, 4], a=plate())
    with pytest.raises(ValueError, match="time=0"):
        jacobi.run("interp", time=0, a=plate())
    with pytest.raises(ValueError, match="given twice"):
        jacobi.run("interp", inputs={"a": plate()}, a=plate())


def test_run_errors_are_run_errors(jacobi, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.raises(stencilc.RunError):
        jacobi.run("c", a=plate())


# --- threads and signals ---------------------------------------------------------

def test_two_programs_from_two_threads():
    jacobi = stencilc.Program.from_file(JACOBI)
    rician = stencilc.Program.from_file(RICIAN)
    volume = np.random.default_rng(3).random((9, 10, 11))
    jobs = {
        "jacobi": lambda: jacobi.run("interp", a=plate()).fields["a"],
        "rician": lambda: rician.run(
            "interp", params={"sigma": 0.05, "lambda": 0.065}, U=volume, F=volume.copy()).fields["U"],
    }
    alone = {name: job() for name, job in jobs.items()}
    together, failures = {}, []
    barrier = threading.Barrier(len(jobs))

    def work(name):
        try:
            barrier.wait()
            together[name] = jobs[name]()
        except BaseException as error:  # reported below, on the main thread
            failures.append(error)

    threads = [threading.Thread(target=work, args=(name,)) for name in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    for name in jobs:
        assert together[name].tobytes() == alone[name].tobytes(), name


# Enough interpreter iterations for several seconds here, so that a missed
# interrupt fails the test rather than hanging it.
SLOW_INTERP_ITERATIONS = 300_000


@pytest.fixture
def sigint_handled():
    """Python's own SIGINT handler for the test. A process started as a
    background job of a non-interactive shell has SIGINT ignored, Python then
    installs no handler, and `_thread.interrupt_main` does nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_interrupts_between_iterations_and_changes_nothing(sigint_handled):
    prog = stencilc.Program(
        SLOW.replace("iterate 100000000", f"iterate {SLOW_INTERP_ITERATIONS}")
    )
    a = np.arange(1000, dtype=np.float64)
    before = a.copy()
    # Once, in a CI run under load, an interrupt from `_thread.interrupt_main`
    # was not seen by the run (it went on to its end). It was not seen again in
    # 900 tries with random delays and 10 whole-suite runs at load average
    # 6-10; Python drops a KeyboardInterrupt that lands in a finalizer, which
    # may be what happened. So: three tries, of which one must be interrupted
    # mid-run, and a bounded run, so that a miss fails in seconds.
    stopped_at = []
    for _ in range(3):
        timer = threading.Timer(0.3, _thread.interrupt_main)
        timer.start()
        try:
            prog.run("interp", a=a)
        except KeyboardInterrupt as interrupted:
            stopped_at.append(interrupted.iterations)
            break
        finally:
            timer.cancel()
    assert stopped_at, "no try was interrupted"
    done = stopped_at[0]
    assert done is None or 0 <= done < SLOW_INTERP_ITERATIONS
    assert np.array_equal(a, before)


# Ten million cheap iterations on the C back-end: a quarter of a minute or more
# to the end here, so an interrupt that waits for the compiled loop to return
# is seen in the iteration count.
SLOW_C_ITERATIONS = 10_000_000
SLOW_C = SLOW.replace("iterate 100000000", f"iterate {SLOW_C_ITERATIONS}")


@pytest.mark.skipif(not has_c_compiler(), reason="no C compiler (cc) for the C back-end")
def test_ctrl_c_interrupts_the_c_loop_between_iterations_and_changes_nothing(sigint_handled):
    prog = stencilc.Program(SLOW_C)
    a = np.arange(1000, dtype=np.float64)
    before = a.copy()
    # The interrupt lands in the compiled loop, or (on a slow compile) before
    # it starts, when the loop stops after its first iteration.
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as interrupted:
            prog.run("c", threads=1, a=a)
    finally:
        timer.cancel()
    # Stopped by the flag the compiled loop polls, not at the loop's end.
    done = interrupted.value.iterations
    assert done is not None and 0 < done < SLOW_C_ITERATIONS
    assert np.array_equal(a, before)
    # The next run has a flag of its own.
    short = stencilc.Program(SLOW_C.replace(f"iterate {SLOW_C_ITERATIONS}", "iterate 3"))
    assert short.run("c", a=a).fields["a"].tolist() == (before + 3).tolist()


def test_threads_keyword(jacobi):
    one = jacobi.run("interp", threads=1, a=plate()).fields["a"]
    assert one.tobytes() == jacobi.run("interp", a=plate()).fields["a"].tobytes()
    with pytest.raises(ValueError, match="threads=0"):
        jacobi.run("interp", threads=0, a=plate())


@pytest.mark.parametrize("backend", ["interp", "c"])
def test_fields_no_stencil_writes_are_read_in_place(backend):
    # rician3d writes U (and G); F, the noisy image, is only read.
    rician = stencilc.Program.from_file(RICIAN)
    rng = np.random.default_rng(3)
    shape = (5, 6, 7)
    u = rng.random(shape)
    f = rng.random(shape)
    f_before, u_before = f.copy(), u.copy()
    params = {"sigma": 0.05, "lambda": 0.065}
    result = rician.run(backend, params=params, U=u, F=f)
    assert result.read_in_place == {"F": f.__array_interface__["data"][0]}
    # Written fields are copied; the caller's arrays are unchanged, and the
    # result's arrays are its own.
    assert np.array_equal(f, f_before) and np.array_equal(u, u_before)
    assert np.array_equal(result.fields["F"], f)
    assert not np.shares_memory(result.fields["F"], f)
    assert not np.shares_memory(result.fields["U"], u)
    # (test_cli_equal compares these results with the CLI's, which copies.)
    # A read-only array is read in place as well: nothing writes it.
    frozen = f.copy()
    frozen.flags.writeable = False
    again = rician.run(backend, params=params, U=u, F=frozen)
    assert again.read_in_place == {"F": frozen.__array_interface__["data"][0]}
    assert np.array_equal(again.fields["U"], result.fields["U"])


def test_written_fields_are_not_read_in_place(jacobi):
    assert jacobi.run("c", a=plate()).read_in_place == {}
    assert jacobi.run("interp", a=plate()).read_in_place == {}
