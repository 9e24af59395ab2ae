"""First-rule gaps a probe of hop.numpy's public surface found (every
function of hop.numpy.__all__ called by NumPy, eagerly on hop.numpy arrays
and compiled, over a grid of inputs and non-default keywords).  Each case
compares against NumPy 1.24: value, dtype, shape, type and error."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from test_numpy_operand_campaign import _as_numpy

C1 = np.array([1 + 2j, 3 - 1j])
C2 = np.array([[1 + 2j, 3 - 1j, 2j], [1, 2 - 1j, 0.5 + 0j]])


def _run(f):
    try:
        r = _as_numpy(f())
    except Exception as e:  # noqa: BLE001 (NumPy's error is the answer)
        return type(e), str(e)
    return _describe(r)


def _describe(r):
    if isinstance(r, (tuple, list)):
        return type(r).__name__, tuple(_describe(v) for v in r)
    a = np.asarray(r)
    return (type(r).__name__.replace("ndarray", "array"), str(a.dtype), a.shape,
            repr((a.round(12) if a.dtype.kind in "fc" else a).tolist()))  # (repr: NaN == NaN)


def _three_ways(fn, x, **kw):
    """NumPy's answer, then hop.numpy's eager and compiled ones."""
    want = _run(lambda: fn(x, **kw))
    eager = _run(lambda: fn(hnp.asarray(x), **kw))
    compiled = _run(lambda: hop.compile(lambda a: fn(a, **kw))(x))
    return want, eager, compiled


@pytest.mark.parametrize("fn", [np.cov, np.corrcoef])
@pytest.mark.parametrize("x,kw", [(C1, {}), (C1, {"bias": True}), (C2, {}), (C2, {"ddof": 0}),
                                  (C2, {"rowvar": False})])
def test_cov_and_corrcoef_of_complex_data_conjugate_as_numpy(fn, x, kw):
    # NumPy's cov is dot(X, X.T.conj()) (Hermitian); hop's left out the conj
    if fn is np.corrcoef:
        kw = {k: v for k, v in kw.items() if k == "rowvar"}
    want, eager, compiled = _three_ways(fn, x, **kw)
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("fn", [np.cov, np.corrcoef])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, bool])
def test_cov_with_an_integer_dtype_raises_numpys_casting_error(fn, dtype):
    # NumPy's X -= avg[:, None] cannot cast float64 back into X's dtype;
    # hop computed in float64 and returned an answer
    x = np.array([[1.0, 2.0, 4.0], [0.5, 3.0, 1.0]])
    want, eager, compiled = _three_ways(fn, x, dtype=dtype)
    assert want[0] is np.core._exceptions._UFuncOutputCastingError
    assert "Cannot cast ufunc 'subtract' output from dtype('float64')" in want[1]
    assert eager == want
    assert compiled == want


X = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
SORTS = [
    lambda a, **k: np.sort(a, **k), lambda a, **k: np.argsort(a, **k),
    lambda a, **k: np.partition(a, 1, **k), lambda a, **k: np.argpartition(a, 1, **k),
]


@pytest.mark.parametrize("fn", SORTS)
@pytest.mark.parametrize("kw", [{"order": "f0"}, {"order": []}, {"order": "f0", "axis": 5},
                                {"order": ["a", "b"], "axis": None}])
def test_sort_and_partition_refuse_order_for_an_array_without_fields(fn, kw):
    # NumPy's ValueError (before the axis is checked); hop ignored order
    want, eager, compiled = _three_ways(fn, X, **kw)
    assert want == (ValueError, "Cannot specify order when the array has no fields.")
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("fn", SORTS[2:])
@pytest.mark.parametrize("kind,error", [
    ("stable", ValueError), ("INTROSELECT", ValueError), (None, TypeError), (3, TypeError),
    (b"introselect", None), ("introselect", None)])
def test_partition_kind_is_checked_as_numpys(fn, kind, error):
    # NumPy has one select kind; hop ignored kind
    want, eager, compiled = _three_ways(fn, X, kind=kind)
    assert (want[0] if error else None) is error
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("method,kw", [
    ("sort", {"order": "f0"}), ("partition", {"kth": 1, "order": "f0"}),
    ("partition", {"kth": 1, "kind": "stable"}), ("argsort", {"order": "f0"}),
    ("argpartition", {"kth": 1, "kind": "bad"})])
def test_sort_methods_check_order_and_kind_and_leave_the_array(method, kw):
    a, h = X.copy(), hnp.asarray(X)
    with pytest.raises(Exception) as want:
        getattr(a, method)(**kw)
    with pytest.raises(type(want.value)) as got:
        getattr(h, method)(**kw)
    assert str(got.value) == str(want.value)
    assert np.asarray(h).tolist() == X.tolist()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("x,kw", [
    (np.zeros(0), {}), (np.zeros((0, 3)), {"axis": 0}), (np.zeros((3, 0)), {"axis": 1}),
    (np.zeros((0, 3)), {}), (np.zeros((0, 3)), {"axis": 1}), (np.zeros(0, np.complex128), {}),
    (np.zeros((0, 3), np.float32), {"axis": 0, "keepdims": True}), (np.zeros((2, 0)), {"axis": 0})])
def test_nanmedian_of_empty_slices_is_numpys_nan(x, kw):
    # hop raised a ShapeError (its take of the middle element of nothing)
    want, eager, compiled = _three_ways(np.nanmedian, x, **kw)
    assert eager == want
    assert compiled == want


CAST_CASES = [
    lambda a: np.exp(a, casting="no"), lambda a: np.sqrt(a, casting="safe"),
    lambda a: np.ceil(a, casting="equiv"), lambda a: np.add(a, 1.5, casting="no"),
    lambda a: np.add(a, 1, casting="no"), lambda a: np.multiply(a, a, casting="no"),
    lambda a: np.add(a, np.float32(1), casting="safe"), lambda a: np.negative(a, casting="no"),
    lambda a: np.arctan2(a, 2.0, casting="same_kind"), lambda a: np.sqrt(a, casting="unsafe"),
    lambda a: np.frexp(a, casting="no"), lambda a: np.modf(a, casting="equiv"),
    lambda a: np.modf(a, casting="safe"),
]


@pytest.mark.parametrize("case", range(len(CAST_CASES)))
@pytest.mark.parametrize("x", [np.arange(3), np.arange(3.0), np.array([True, False]),
                               np.arange(3, dtype=np.int8)])
def test_ufunc_casting_rules_the_inputs_as_numpys(case, x):
    # casting= without dtype= was checked only against out=; NumPy also
    # casts the inputs to the loop's dtypes under it (exp(int64,
    # casting='no') is NumPy's UFuncTypeError, where hop answered)
    fn = CAST_CASES[case]
    want = _run(lambda: fn(x))
    assert _run(lambda: fn(hnp.asarray(x))) == want
    assert _run(lambda: hop.compile(fn)(x)) == want


def test_ufunc_casting_no_of_an_int_array_is_numpys_error():
    with pytest.raises(TypeError, match=r"Cannot cast ufunc 'exp' input from dtype\('int64'\) "
                                        r"to dtype\('float64'\) with casting rule 'no'"):
        np.exp(hnp.arange(3), casting="no")


@pytest.mark.parametrize("make", [
    lambda m, A: m.full((2,), 3, dtype=complex), lambda m, A: m.full((2, 3), 3.5, dtype=np.complex64),
    lambda m, A: m.full((2,), 1 + 2j), lambda m, A: m.full((), 1 - 1j),
    lambda m, A: m.full((2,), np.complex64(1 + 1j)), lambda m, A: m.full((2,), True, dtype=complex),
    lambda m, A: m.full((2,), complex("nan+infj")), lambda m, A: m.full((), A(2.0)),
    lambda m, A: m.full_like(A(np.zeros(2, complex)), 3),
    lambda m, A: m.full_like(A(np.zeros((2, 2))), 3, dtype=complex)])
def test_full_with_a_complex_dtype_is_numpys(make):
    # hop raised "full(): argument 'fill_value' must be a number or a bool,
    # not hop.Tensor" for every complex fill
    want = _run(lambda: make(np, np.asarray))
    assert _run(lambda: make(hnp, hnp.asarray)) == want
    assert _run(lambda: hop.compile(lambda: make(np, np.asarray))()) == want


B1 = np.array([True, False, True, True])
B2 = np.array([[True, False, True], [False, False, True]])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("fn", [
    lambda a: np.ediff1d(a), lambda a: np.ediff1d(a, to_begin=[True]),
    lambda a: np.ediff1d(a, to_end=[2.5]), lambda a: np.gradient(a),
    lambda a: np.gradient(a, edge_order=2), lambda a: np.gradient(a, axis=-1),
    lambda a: np.gradient(a, np.array([0.0, 1.0, 3.0, 4.0][:a.shape[-1]]), axis=-1, edge_order=2),
    lambda a: np.gradient(a, np.array([0.0, 1.0, 3.0, 4.0][:a.shape[-1]]), axis=-1)])
@pytest.mark.parametrize("x", [B1, B2])
def test_ediff1d_and_gradient_of_bools_are_numpys(fn, x):
    # NumPy subtracts the bools (its TypeError); hop answered not_equal
    # (ediff1d) or converted them to float64 (gradient)
    want = _run(lambda: fn(x))
    assert _run(lambda: fn(hnp.asarray(x))) == want
    assert _run(lambda: hop.compile(fn)(x)) == want


A23 = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("fn,w", [
    (np.histogram, np.ones(6)), (np.histogram_bin_edges, np.ones(6)),
    (np.histogram, np.ones((3, 2))), (np.histogram_bin_edges, np.ones((3, 2))),
    (np.histogram, np.ones((2, 3))), (np.histogram_bin_edges, np.arange(6.0).reshape(2, 3))])
def test_histogram_weights_of_another_shape_are_numpys_error(fn, w):
    # NumPy compares the shapes before flattening (hop compared the
    # flattened ones, and histogram_bin_edges not at all)
    want = _run(lambda: fn(A23, weights=w))
    assert _run(lambda: fn(hnp.asarray(A23), weights=hnp.asarray(w))) == want
    assert _run(lambda: hop.compile(lambda a, b: fn(a, weights=b))(A23, w)) == want


@pytest.mark.parametrize("fn", [np.isposinf, np.isneginf])
@pytest.mark.parametrize("x", [C1, C1.astype(np.complex64), np.array(np.inf + 0j)])
def test_isposinf_of_complex_is_numpys_type_error(fn, x):
    # hop answered all False
    want = _run(lambda: fn(x))
    assert want[0] is TypeError
    assert _run(lambda: fn(hnp.asarray(x))) == want
    assert _run(lambda: hop.compile(fn)(x)) == want
