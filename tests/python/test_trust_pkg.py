"""Issue #12, foreign kernels: a plan (and so a GraphModule and a compiled
function) owns what its foreign kernels need, down to the Python object
behind a ctypes callback; and a size expression in the signature
(`float y[n]`) refuses a call whose buffer is too short, with the same
hop.ShapeError eagerly, traced and compiled, before the kernel runs."""

import ctypes
import gc
import types
import weakref

import numpy as np
import pytest

import hop

# Under the sanitizers every parametrized case runs: each is a memory path of its own
# (budget.cases).
pytestmark = pytest.mark.every_case

F = ctypes.POINTER(ctypes.c_float)
CB = ctypes.CFUNCTYPE(None, ctypes.c_int64, F)


def T(*values):
    return hop.tensor(np.array(values, np.float32))


@pytest.fixture(autouse=True)
def _unregister_leftovers():
    """A failed test must not leave its kernels registered for the next."""
    yield
    for name in ("dbl", "saxpy", "mm", "s"):
        try:
            hop._C._foreign_unregister(name)
        except hop.Error:
            pass


def _reuse_freed_callbacks():
    """Makes many new callbacks, so that a freed one's memory (libffi's
    trampoline) serves another function: calling a dangling kernel then gives
    -1000 instead of crashing sometimes."""
    gc.collect()
    made = []
    for j in range(300):
        def other(n, y, j=j):
            for i in range(n):
                y[i] = -1000 - j
        made.append(CB(other))
    return made


def _doubler():
    calls = []

    def dbl(n, y):
        calls.append(n)
        for i in range(n):
            y[i] *= 2

    return CB(dbl), calls


def _kernels_module(cb):
    """Kernels kept where a library keeps them: attributes of a module.  A
    trace guards the module's binding of one it calls (`lib.dbl` rebound or
    deleted: the GraphModule refuses, a compiled function runs eagerly and
    raises eager's AttributeError) but does not capture it: while the module
    holds it, the plan and the module tie the callback to the program."""
    lib = types.ModuleType("kernels")
    lib.dbl = hop.foreign("void dbl(int64_t n, float *y)", cb)
    return lib


@pytest.mark.parametrize("unregister", [False, True])
def test_a_graph_module_keeps_the_callback_of_a_dropped_kernel_alive(unregister, heap_frozen):
    cb, calls = _doubler()
    cb_ref = weakref.ref(cb)
    lib = _kernels_module(cb)
    gm = hop.trace(lambda x: lib.dbl(x.shape[0], x) + 1, T(1, 1, 1))
    if unregister:
        lib.dbl.unregister()
    del cb
    keep = _reuse_freed_callbacks()
    assert cb_ref() is not None
    assert np.asarray(gm(T(1, 2, 3))).tolist() == [3, 5, 7]
    assert calls == [3]
    del lib.dbl  # the binding the GraphModule was traced with is gone
    with pytest.raises(hop.GuardError, match="kernels.dbl was rebound"):
        gm(T(1, 2, 3))
    assert calls == [3] and cb_ref() is not None  # (the plan still holds it)
    del keep, gm
    gc.collect()
    if unregister:
        # Nothing holds the kernel any more: its callback is freed.
        assert cb_ref() is None
    else:
        # The registry still holds it (a name stays taken until unregistered).
        assert cb_ref() is not None
        hop._C._foreign_unregister("dbl")
        gc.collect()
        assert cb_ref() is None


def test_a_compiled_function_keeps_the_callback_of_an_unregistered_kernel_alive(heap_frozen):
    cb, calls = _doubler()
    cb_ref = weakref.ref(cb)
    lib = _kernels_module(cb)
    fast = hop.compile(lambda x: lib.dbl(x.shape[0], x) * 3)
    assert np.asarray(fast(T(1, 2))).tolist() == [6, 12]
    lib.dbl.unregister()
    del cb
    keep = _reuse_freed_callbacks()
    assert cb_ref() is not None
    # Same metadata: the cached plan runs the kernel it holds.
    assert np.asarray(fast(T(4, 5))).tolist() == [24, 30]
    assert calls == [2, 2]
    del lib.dbl  # eagerly lib.dbl is an AttributeError now, and so it is compiled
    with pytest.raises(AttributeError, match="has no attribute 'dbl'"):
        fast(T(4, 5))
    assert calls == [2, 2] and cb_ref() is not None
    del keep, fast
    gc.collect()
    assert cb_ref() is None


def test_a_failed_registration_keeps_no_reference_to_the_callback(heap_frozen):
    cb, _ = _doubler()
    cb_ref = weakref.ref(cb)
    with pytest.raises(hop.Error, match="unknown type 'flaot'"):
        hop.foreign("void dbl(int64_t n, flaot *y)", cb)
    k = hop.foreign("void dbl(int64_t n, float *y)", cb)
    with pytest.raises(hop.Error, match="is registered already"):
        hop.foreign("void dbl(int64_t n, float *y)", cb)
    k.unregister()
    del cb, k
    gc.collect()
    assert cb_ref() is None


def test_a_kernel_that_unregisters_itself_mid_call_finishes_the_call(heap_frozen):
    box = {}

    def body(n, y):
        box.pop("k").unregister()  # the last reference to the kernel but the call's
        gc.collect()
        for i in range(n):
            y[i] = 7

    cb = CB(body)
    cb_ref = weakref.ref(cb)
    box["k"] = hop.foreign("void dbl(int64_t n, float *y)", cb)
    del cb
    assert np.asarray(box["k"](2, T(0, 0))).tolist() == [7, 7]
    gc.collect()
    assert box == {} and cb_ref() is None


# ---------------------------------------------------------- size expressions

def _saxpy_cb():
    calls = []

    def saxpy(n, a, x, y):
        calls.append(n)
        for i in range(n):
            y[i] += a * x[i]

    return ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_float, F, F)(saxpy), calls


@pytest.fixture
def sized_saxpy():
    cb, calls = _saxpy_cb()
    k = hop.foreign("void saxpy(int64_t n, float a, const float x[n], float y[n])", cb)
    yield k, calls
    k.unregister()


SHORT = (r"^saxpy: parameter 3 \(const float x\[n\]\) needs n = 5 elements, "
         r"got f32\[4\]$")


def test_a_sized_signature_keeps_its_sizes_in_the_canonical_text(sized_saxpy):
    k, _ = sized_saxpy
    assert k.signature == "void saxpy(int64_t n, float a, const float x[n], float y[n])"
    cb, _ = _saxpy_cb()
    m = hop.foreign("void mm(int n, int32_t m, const float a[ n*m+(1) ], float b[], "
                    "float c[2 * (n - 1)])", cb)
    try:
        # operators spaced, parentheses as written
        assert m.signature == ("void mm(int32_t n, int32_t m, const float a[n * m + (1)], "
                               "float *b, float c[2 * (n - 1)])")
    finally:
        m.unregister()


def test_a_too_short_buffer_is_refused_eagerly_traced_and_compiled_alike(sized_saxpy):
    k, calls = sized_saxpy
    x4, y4, y5 = T(1, 2, 3, 4), T(0, 0, 0, 0), T(0, 0, 0, 0, 0)
    assert np.asarray(k(4, 2.0, x4, y4)).tolist() == [2, 4, 6, 8]
    assert np.asarray(k(3, 1.0, x4, y5)).tolist() == [1, 2, 3, 0, 0]  # more is fine
    calls.clear()

    with pytest.raises(hop.ShapeError, match=SHORT):
        k(5, 2.0, x4, y5)

    def f(n, x, y):
        return k(n, 2.0, x, y)

    # traced with a concrete n and sizes: refused while tracing, as eagerly
    with pytest.raises(hop.ShapeError, match=SHORT):
        hop.trace(lambda x, y: f(5, x, y), x4, y5)
    # n from another tensor's size: only known when the plan runs
    gm = hop.trace(lambda m, x, y: f(m.shape[0], x, y), T(0, 0), x4, y5, dynamic=True)
    assert np.asarray(gm(T(0, 0, 0), x4, y5)).tolist() == [2, 4, 6, 0, 0]
    with pytest.raises(hop.ShapeError, match=SHORT):
        gm(T(0, 0, 0, 0, 0), x4, T(0, 0, 0, 0, 0, 0))
    fast = hop.compile(lambda m, x, y: f(m.shape[0], x, y))
    assert np.asarray(fast(T(0), x4, y4)).tolist() == [2, 0, 0, 0]
    with pytest.raises(hop.ShapeError, match=SHORT):
        fast(T(0, 0, 0, 0, 0), x4, y5)
    assert calls == [3, 1]  # no refused call reached the kernel
    # the in-out parameter is checked too
    with pytest.raises(hop.ShapeError, match=r"^saxpy: parameter 4 \(float y\[n\]\) needs "
                                             r"n = 5 elements, got f32\[4\]$"):
        k(5, 2.0, y5, y4)


def test_a_size_expression_is_checked_per_row_inside_map(sized_saxpy):
    k, calls = sized_saxpy
    w = T(1, 1, 1)

    def f(xs, m):
        return hop.map(lambda row: k(m.shape[0], 1.0, w, row), xs)

    gm = hop.trace(f, hop.zeros(4, 6), T(0, 0), dynamic=True)  # no sizes shared
    assert np.asarray(gm(hop.zeros(2, 3), T(0, 0))).tolist() == [[1, 1, 0], [1, 1, 0]]
    with pytest.raises(hop.ShapeError, match=r"^saxpy: parameter 3 \(const float x\[n\]\) "
                                             r"needs n = 4 elements, got f32\[3\]$"):
        gm(hop.zeros(2, 4), T(0, 0, 0, 0))


def test_size_expression_errors_name_the_column_and_parameter():
    cb, _ = _saxpy_cb()
    cases = [
        ("void s(int64_t n, float a, const float x[a], float y[n])",
         r"column 42 \(parameter 3\): the size 'a' must name an integer parameter before x"),
        ("void s(int64_t n, float a, const float x[m], float y[n])",
         r"column 42 \(parameter 3\): the size 'm' must name an integer parameter before x"),
        ("void s(const float x[n], int64_t n, float a, float y[n])",
         r"column 22 \(parameter 1\): the size 'n' must name an integer parameter before x"),
        ("void s(int64_t n, float a, const float x[n, float y[n])",
         r"column 43 \(parameter 3\): expected '\]' or an operator \(\+ - \*\), got ','"),
        ("void s(int64_t n, float a, const float *x[n], float y[n])",
         r"column 42 \(parameter 3\): an array of pointers is not supported"),
        ("void s(int64_t n, float a, const float x[], float y[n + ])",
         r"column 57 \(parameter 4\): expected a number, a parameter or '\(', got '\]'"),
        ("void s(int64_t n, float a, const float x[99999999999999999999], float y[n])",
         r"column 42 \(parameter 3\): the number 99999999999999999999 does not fit in int64"),
    ]
    for sig, msg in cases:
        with pytest.raises(hop.Error, match="^foreign signature: " + msg + "$"):
            hop.foreign(sig, cb)


def test_a_size_that_overflows_is_refused():
    cb, calls = _saxpy_cb()
    k = hop.foreign("void saxpy(int64_t n, float a, const float x[n * n], float y[])", cb)
    try:
        with pytest.raises(hop.ShapeError,
                           match=r"^saxpy: parameter 3 \(const float x\[n \* n\]\): the size "
                                 r"n \* n overflows int64 \(n = 4294967296\)$"):
            k(2**32, 1.0, T(1), T(1))
        assert calls == []
    finally:
        k.unregister()
