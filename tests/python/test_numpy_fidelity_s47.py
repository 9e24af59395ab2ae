"""Regressions of the hop.numpy fidelity gaps of issue #29 the forty-seventh
session closed, against NumPy 1.24, eagerly (hop.numpy arrays) and compiled
(hop.compile): einsum's out= casting.  Each case compares the result's
type, dtype, shape and values, the exception's type and text, and the
caller's arrays after the call."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from numpy_diff import check


def _outcome(fn, *args):
    """('ok', dtype, values) of fn(*args) or (exception type, its text)."""
    try:
        r = fn(*args)
    except Exception as e:  # noqa: BLE001 (compared)
        return type(e), str(e)
    return "ok", r.dtype, np.asarray(r).tolist()


# ------------------------------------------------------------ einsum(out=) casting

_F32 = np.array([[0.5, 1.25], [2.0, 3.0]], np.float32)
_EINSUM_OUT = [  # (operands, out, keywords): NumPy's iterator casts out= under `casting`
    ((_F32, _F32.astype(np.float64)), np.float32, {}),
    ((_F32, _F32.astype(np.float64)), np.float32, {"casting": "same_kind"}),
    ((_F32, _F32.astype(np.float64)), np.int64, {}),
    ((_F32, _F32.astype(np.float64)), np.float32, {"dtype": np.float64}),
    ((_F32, _F32), np.float64, {}),
    ((_F32.astype(np.int32), _F32.astype(np.int32)), np.float32, {}),
    ((_F32.astype(np.int64), _F32.astype(np.int64)), np.bool_, {}),
    ((_F32.astype(np.int64), _F32.astype(np.int64)), np.bool_, {"casting": "unsafe"}),
    ((_F32 > 1, _F32 > 1), np.int64, {}),
    ((_F32.astype(np.float64), _F32.astype(np.float64)), np.float32, {"casting": "no"}),
    ((_F32.astype(np.float64), _F32.astype(np.float64)), np.float64, {"casting": "no"}),
]


@pytest.mark.parametrize("case", range(len(_EINSUM_OUT)))
def test_einsum_out_is_cast_as_numpys_iterator_casts_it(case):
    # the finding: einsum wrote its result into out= by an unsafe cast
    # (float64 products into a float32 out), where NumPy's iterator checks
    # out under `casting` ('safe' by default) and raises its TypeError; and
    # float32 operands into a float64 out were summed in float32, where
    # NumPy's common dtype of the operands and out is float64
    ins, odt, kw = _EINSUM_OUT[case]

    def fn(a, b, o):
        return np.einsum("ij,jk->ik", a, b, out=o, **kw)

    out = np.zeros((2, 2), odt)
    check(fn, *ins, out, eager=True)
    want = _outcome(fn, *[x.copy() for x in ins], out.copy())
    eager = _outcome(fn, *[hnp.asarray(x.copy()) for x in ins], hnp.asarray(out.copy()))
    compiled = _outcome(hop.compile(fn), *[x.copy() for x in ins], out.copy())
    assert eager == want and compiled == want


def test_einsum_into_a_wider_out_sums_in_its_dtype():
    rng = np.random.default_rng(47)
    a = rng.random((5, 7)).astype(np.float32)
    b = rng.random((7, 3)).astype(np.float32)
    want = np.zeros((5, 3))
    np.einsum("ij,jk->ik", a, b, out=want)
    exact = np.einsum("ij,jk->ik", a.astype(np.float64), b.astype(np.float64))
    assert want.tobytes() == exact.tobytes()  # NumPy sums in float64
    got = hnp.zeros((5, 3))
    r = hnp.einsum("ij,jk->ik", hnp.asarray(a), hnp.asarray(b), out=got)
    assert r is got and np.asarray(got).dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-15)
    assert not np.allclose(np.asarray(got), np.einsum("ij,jk->ik", a, b), rtol=1e-12, atol=0)


def test_einsum_out_of_another_shape_is_the_shape_error_first():
    # NumPy's iterator refuses out's shape before its dtype
    a = np.ones((2, 2))
    for lib, mk in ((np, np.asarray), (hnp, hnp.asarray)):
        with pytest.raises(ValueError):
            lib.einsum("ij,jk->ik", mk(a), mk(a), out=mk(np.zeros(4, np.float32)))
