"""Foreign kernels from Python: hop.foreign registers a C function (here ctypes
callbacks) by address and prototype; calls run eagerly through libffi or are
recorded while tracing, inside HOPs too; the errors are hop exceptions."""

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from budget import examples

import hop

F = ctypes.POINTER(ctypes.c_float)
D = ctypes.POINTER(ctypes.c_double)
SAXPY = "void saxpy(int64_t n, float a, const float *x, float *y)"


@ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_float, F, F)
def _saxpy(n, a, x, y):
    for i in range(n):
        y[i] += a * x[i]


def T(*values):
    return hop.tensor(np.array(values, np.float32))


def test_saxpy_eagerly_gives_a_new_tensor_and_leaves_y_alone(kernels):
    saxpy = kernels(SAXPY, _saxpy)
    assert saxpy.signature == SAXPY
    assert repr(saxpy) == f"<hop.foreign {SAXPY}>"
    x, y = T(1, 2, 3, 4), T(10, 20, 30, 40)
    out = saxpy(4, 2.0, x, y)
    assert np.asarray(out).tolist() == [12, 24, 36, 48]
    assert np.asarray(y).tolist() == [10, 20, 30, 40]
    assert np.asarray(saxpy(2, -1, x, y)).tolist() == [9, 18, 30, 40]


def test_a_traced_call_is_a_call_foreign_node_and_runs_in_the_plan(kernels):
    saxpy = kernels(SAXPY, _saxpy)

    def f(x, y):
        return saxpy(x.shape[0], 2.0, x, y) + 1

    gm = hop.trace(f, T(1, 2, 3), T(1, 1, 1), dynamic=True)
    assert gm.code == (
        'def forward(s0: "Sym(s0)", x: "f32[s0]", y: "f32[s0]"):\n'
        '    saxpy: "f32[s0]" = foreign.saxpy(s0, 2.0, x, y)\n'
        '    getitem: "f32[s0]" = saxpy[0]\n'
        '    add: "f32[s0]" = add(getitem, 1)\n'
        '    return (add,)\n')
    for n in (3, 6):
        x = np.arange(n, dtype=np.float32)
        y = np.full(n, 5, np.float32)
        out = gm(hop.tensor(x), hop.tensor(y))
        assert np.asarray(out).tolist() == (y + 2 * x + 1).tolist()
        assert y.tolist() == [5] * n


def test_cond_runs_the_side_effects_of_the_taken_branch_only(kernels):
    ticks = {"true": 0, "false": 0}

    def ticker(name):
        @ctypes.CFUNCTYPE(None, ctypes.c_int64, F)
        def tick(k, x):
            ticks[name] += k
        return tick

    cbs = {name: ticker(name) for name in ticks}
    tick_true = kernels("void tick_true(int64_t k, const float *x)", cbs["true"],
                        side_effects=True)
    tick_false = kernels("void tick_false(int64_t k, const float *x)", cbs["false"],
                         side_effects=True)

    def f(x):
        def t():
            tick_true(2, x)
            return x.sin()

        def e():
            tick_false(3, x)
            return x.cos()

        return hop.cond(x.sum() > 0, t, e)

    gm = hop.trace(f, T(1, 2), dynamic=True)
    assert 'foreign.tick_true(2, x)  # side effects' in gm.code
    gm(T(1, 1))
    assert ticks == {"true": 2, "false": 0}
    gm(T(-1, -1, -1))
    assert ticks == {"true": 2, "false": 3}


def test_map_calls_the_kernel_once_per_row_and_lifts_outer_tensors(kernels):
    calls = []

    @ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_double, D, D)
    def daxpy(n, a, x, y):
        calls.append(n)
        for i in range(n):
            y[i] += a * x[i]

    k = kernels("void daxpy(int64_t n, double a, const double *x, double *y)", daxpy)
    w = hop.tensor(np.array([1.0, 2.0, 3.0]))

    def f(xs):
        return hop.map(lambda row: hop.wrap(lambda: k(row.shape[0], 0.5, w, row)), xs)

    gm = hop.trace(f, hop.tensor(np.zeros((2, 3))), dynamic=True)
    assert gm.code == (
        'def forward(s0: "Sym(s0)", s1: "Sym(s1)", xs: "f64[s0, s1]", w: "f64[3]"):\n'
        '    def map_body_0(xs: "f64[s1]", s1: "Sym(s1)", w: "f64[3]"):\n'
        '        def wrap_body_0(s1: "Sym(s1)", w: "f64[3]", xs: "f64[s1]"):\n'
        '            daxpy: "f64[s1]" = foreign.daxpy(s1, 0.5, w, xs)\n'
        '            getitem: "f64[s1]" = daxpy[0]\n'
        '            return (getitem,)\n'
        '\n'
        '        wrap: "f64[s1]" = wrap(wrap_body_0, (s1, w, xs))\n'
        '        getitem: "f64[s1]" = wrap[0]\n'
        '        return (getitem,)\n'
        '\n'
        '    map: "f64[s0, s1]" = map(map_body_0, (xs,), (s1, w))\n'
        '    getitem: "f64[s0, s1]" = map[0]\n'
        '    return (getitem,)\n')
    xs = np.arange(12, dtype=np.float64).reshape(4, 3)
    calls.clear()
    out = np.asarray(gm(hop.tensor(xs)))
    assert calls == [3, 3, 3, 3]
    assert out.tolist() == (xs + 0.5 * np.array([1.0, 2.0, 3.0])).tolist()


def test_errors_are_hop_exceptions_with_exact_messages(kernels):
    saxpy = kernels(SAXPY, _saxpy)
    with pytest.raises(hop.Error, match=r"^foreign signature: column 8 \(parameter 1\): "
                                        r"unknown type 'flaot'"):
        hop.foreign("void f(flaot a)", _saxpy)
    with pytest.raises(hop.Error, match="^hop_foreign_register: a foreign kernel named saxpy "
                                        "is registered already$"):
        hop.foreign(SAXPY, _saxpy)
    with pytest.raises(ValueError, match=r"^saxpy: takes 4 operands \(void saxpy"):
        saxpy(4, 2.0, T(1))
    with pytest.raises(hop.DTypeError,
                       match=r"^saxpy: parameter 4 \(float \*y\) takes f32, got i64\[2\]$"):
        saxpy(2, 1.0, T(1, 2), hop.tensor(np.array([1, 2], np.int64)))
    with pytest.raises(TypeError, match=r"^saxpy\(\): argument 2 must be a hop.Tensor, an int, "
                                        r"a float or a bool, not str$"):
        saxpy(2, "a", T(1, 2), T(1, 2))
    with pytest.raises(TypeError, match="address must be an int or a ctypes function"):
        hop.foreign("void g(void)", "nope")
    saxpy.unregister()
    with pytest.raises(hop.Error, match="^saxpy: the foreign kernel was unregistered$"):
        saxpy(1, 1.0, T(1), T(1))


@ctypes.CFUNCTYPE(None, ctypes.c_int64, F)
def _negate(n, y):
    for i in range(n):
        y[i] = -y[i]


@settings(max_examples=examples(50), deadline=None)
@given(hnp.arrays(np.float32, st.integers(1, 40),
                  elements=st.floats(-1024, 1024, width=32, allow_nan=False)))
def test_a_kernel_sees_exactly_the_data_hypothesis(arr):
    k = hop.foreign("void negate(int64_t n, float *y)", _negate)
    try:
        x = hop.tensor(arr.copy())
        assert np.asarray(k(arr.size, x)).tolist() == (-arr).tolist()
        assert np.asarray(x).tolist() == arr.tolist()
        # a strided view is made contiguous for the kernel
        if arr.size >= 2:
            v = hop.tensor(arr.copy())[::2]
            assert np.asarray(k(v.shape[0], v)).tolist() == (-arr[::2]).tolist()
    finally:
        k.unregister()
