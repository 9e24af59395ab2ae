"""Regressions of NumPy-fidelity bugs found in the forty-first session,
against NumPy 1.24, compiled (hop.compile) and eagerly (hop.numpy arrays
through NumPy's functions, and hop.numpy's own): the float_power op in
hop's own API and counted exact, and what a hypothesis differential over
setitem and in-place writes through views, out=, where=, dtype= and mixed
scalar operands found.  Each case compares the result's type, dtype, shape
and bits, the exception's type and text, the warnings, and the caller's
arrays after the call."""

import contextlib
import io

import numpy as np
import pytest

import hop


# ------------------------------------------------------------ float_power in hop's API

def test_float_power_is_an_op_of_hops_own_api():
    # the finding: the float_power op (libm's pow per element) was reachable
    # only through hop._C._op; hop.float_power and Tensor.float_power are
    # hop's elementwise functions like hypot and logaddexp
    rng = np.random.default_rng(41)
    a = rng.uniform(0.1, 10, 257)
    b = rng.uniform(-5, 5, 257)
    want = np.float_power(a, b)
    assert np.asarray(hop.float_power(hop.tensor(a), hop.tensor(b))).tobytes() == want.tobytes()
    assert np.asarray(hop.tensor(a).float_power(hop.tensor(b))).tobytes() == want.tobytes()
    assert np.asarray(hop.float_power(hop.tensor(a), 0.5)).tobytes() == \
        np.float_power(a, 0.5).tobytes()
    with np.errstate(all="ignore"):
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        want32 = np.array([x ** y for x, y in zip(a32, b32)], np.float32)  # npy_powf
    got32 = hop.float_power(hop.tensor(a32), hop.tensor(b32))
    assert got32.dtype == hop.float32 and np.asarray(got32).tobytes() == want32.tobytes()
    assert hop.float_power(hop.tensor([2, 3]), 2).dtype == hop.float32  # as div's
    with pytest.raises(hop.DTypeError, match="float_power: complex dtypes are not supported"):
        hop.float_power(hop.tensor([1 + 2j]), 2.0)


def test_float_power_of_hops_api_has_grad_jvp_and_vmap():
    x = hop.tensor([1.5, 2.0, 3.0], dtype=hop.float64)
    y = hop.tensor([2.0, 0.5, -1.0], dtype=hop.float64)
    g = hop.grad(lambda a, b: hop.float_power(a, b).sum(), argnums=(0, 1))(x, y)
    xs, ys = np.asarray(x), np.asarray(y)
    np.testing.assert_allclose(np.asarray(g[0]), ys * xs ** (ys - 1), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(g[1]), xs ** ys * np.log(xs), rtol=1e-15)
    out, tangent = hop.jvp(lambda a: hop.float_power(a, y), (x,), (hop.tensor([1.0, 1.0, 1.0], dtype=hop.float64),))
    np.testing.assert_allclose(np.asarray(tangent), ys * xs ** (ys - 1), rtol=1e-15)
    X = hop.tensor(np.arange(1.0, 7.0).reshape(2, 3))
    v = hop.vmap(lambda r: hop.float_power(r, y))(X)
    assert np.asarray(v).tobytes() == np.float_power(np.asarray(X), ys).tobytes()


def test_a_printed_float_power_value_is_replayed_without_a_break():
    # the finding: hop/_exact.py counted float_power inexact, so printing an
    # element of np.float_power(x, y) made a graph break (the part before
    # it ran in Python) although the op is NumPy's libm pow bit for bit
    def f(x, y):
        z = np.float_power(x, y)
        print(z[3], z[5] * 2, x[2] ** 0.7)
        return z + 1

    x, y = np.linspace(0.1, 9, 20), np.linspace(-3, 3, 20)
    outs = []
    for fn in (f, hop.compile(f)):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            r = fn(x, y)
        outs.append((out.getvalue(), r.tobytes()))
    assert outs[0] == outs[1]
    cf = hop.compile(f)
    with contextlib.redirect_stdout(io.StringIO()):
        cf(x, y)
    text = cf.explain()
    assert "graph break" not in text and "side effects replayed after each call (1)" in text
    assert cf.eager_calls == 0
