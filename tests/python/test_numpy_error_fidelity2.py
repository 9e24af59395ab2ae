"""hop.numpy raises what NumPy 1.24 raises, type and text, eagerly on
hop.numpy arrays and under hop.compile: quantile and percentile over an
empty axis (an IndexError whose text depends on the method and the dtype),
nanmin/nanmax's errors naming fmin/fmax, the ufunc aliases (true_divide,
mod) naming the ufunc NumPy names, and an array given where a shape is
expected."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp


def _outcome(fn, *args):
    """(exception type, text) of fn(*args), or ("ok", result as NumPy)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            r = fn(*args)
        except Exception as e:  # noqa: BLE001 (compared by the caller)
            return type(e), str(e)
    return "ok", np.asarray(r)


def _same_outcome(want, got, how):
    assert got[0] == want[0], f"{how}: NumPy gave {want}, hop {got}"
    if want[0] == "ok":
        np.testing.assert_array_equal(got[1], want[1])
        assert got[1].dtype == want[1].dtype and got[1].shape == want[1].shape, how
    else:
        assert got[1] == want[1], f"{how}: NumPy said {want[1]!r}, hop {got[1]!r}"


def _as_numpy(fn, *args):
    """NumPy's outcome of fn(np, *args) and hop's eagerly (fn(hnp, ...) on
    hop.numpy arrays) and under hop.compile (fn(np, ...) and fn(hnp, ...)):
    the same exception type and text, or the same result."""
    want = _outcome(lambda *a: fn(np, *a), *args)
    hargs = [hnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    _same_outcome(want, _outcome(lambda *a: fn(hnp, *a), *hargs), "eager")
    for lib in (np, hnp):
        compiled = hop.compile(lambda *a, lib=lib: fn(lib, *a))
        _same_outcome(want, _outcome(compiled, *args), f"hop.compile ({lib.__name__})")
    return want


METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
           "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
           "weibull", "median_unbiased", "normal_unbiased"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_quantile_over_an_empty_axis_raises_numpys_index_error_per_method(method, dtype):
    for shape, axis in (((0,), None), ((0, 3), 0), ((2, 0), 1), ((0, 2), (0, 1))):
        x = np.zeros(shape, dtype)
        want = _as_numpy(lambda L, a: L.quantile(a, 0.5, axis=axis, method=method), x)
        assert want[0] is IndexError, want
        _as_numpy(lambda L, a: L.percentile(a, [30, 70], axis=axis, method=method), x)
        _as_numpy(lambda L, a: L.quantile(a, 0.0, axis=axis, method=method, keepdims=True), x)


def test_quantile_over_an_empty_axis_names_the_index_numpy_names():
    x = np.zeros((0, 3))
    assert _as_numpy(lambda L, a: L.quantile(a, 0.5, axis=0, method="lower"), x) == \
        (IndexError, "index -1 is out of bounds for axis 0 with size 0")
    assert _as_numpy(lambda L, a: L.percentile(a, 50, axis=0), x) == \
        (IndexError, "cannot do a non-empty take from an empty axes.")


def test_quantile_of_no_quantiles_over_an_empty_axis_is_numpys_empty_result():
    x = np.zeros((0, 3))
    for method in ("linear", "lower"):
        _as_numpy(lambda L, a: L.quantile(a, [], axis=0, method=method), x)


def test_quantile_over_a_non_empty_axis_of_an_empty_array_is_empty():
    _as_numpy(lambda L, a: L.quantile(a, 0.5, axis=0), np.zeros((3, 0)))


@pytest.mark.parametrize("name,ufunc", [("nanmin", "fmin"), ("nanmax", "fmax")])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.complex128, np.bool_])
def test_nanmin_nanmax_errors_name_fmin_fmax(name, ufunc, dtype):
    for shape, axis in (((0,), None), ((0, 3), 0), ((3, 0), 1), ((0, 3), (0, 1))):
        x = np.zeros(shape, dtype)
        want = _as_numpy(lambda L, a: getattr(L, name)(a, axis=axis), x)
        assert want == (ValueError,
                        f"zero-size array to reduction operation {ufunc} which has no identity")
        _as_numpy(lambda L, a: getattr(L, name)(a, axis=axis, keepdims=True), x)
        _as_numpy(lambda L, a: getattr(L, name)(a, axis=axis, initial=3), x)
    want = _as_numpy(lambda L, a: getattr(L, name)(a, axis=0, where=False), np.ones((2, 2), dtype))
    assert want == (ValueError, f"reduction operation '{ufunc}' does not have an identity, so to "
                                f"use a where mask one has to specify 'initial'")


@pytest.mark.parametrize("name", ["nanmin", "nanmax", "min", "max"])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_min_max_keeping_an_empty_axis_is_empty(name, dtype):
    # (hop's complex order reshaped to [0, -1], which it cannot infer)
    for shape, axis in (((3, 0), 0), ((3, 0, 2), (0, 2)), ((0, 2), 1), ((0, 0), 0)):
        x = np.zeros(shape, dtype)
        _as_numpy(lambda L, a: getattr(L, name)(a, axis=axis), x)
        _as_numpy(lambda L, a: getattr(L, name)(a, axis=axis, keepdims=True), x)


@pytest.mark.parametrize("alias,named", [("true_divide", "divide"), ("mod", "remainder"),
                                         ("divide", "divide"), ("remainder", "remainder"),
                                         ("abs", "absolute"), ("conj", "conjugate")])
def test_ufunc_aliases_name_the_ufunc_numpy_names(alias, named):
    a = np.ones(3)
    nin = 1 if named in ("absolute", "conjugate") else 2
    for args in ((), (a,) * (nin - 1), (a,) * (nin + 3)):
        want = _as_numpy(lambda L, *xs: getattr(L, alias)(*xs), *args)
        assert want[0] is TypeError and want[1].startswith(f"{named}() takes from"), want
    want = _as_numpy(lambda L, *xs: getattr(L, alias)(*xs, bogus=1), *(a,) * nin)
    assert want == (TypeError, f"{named}() got an unexpected keyword argument 'bogus'")


SHAPE_ARGS = [np.array([2, 3]), np.array([2, 3], np.uint8), np.array([], np.int64), np.array(2),
              np.array([2.0, 3.0]), np.array([1 + 0j]), np.array([True, False]), np.array(2.0),
              np.array(True), np.array([[2, 3]]), np.float64(2), np.float32(2), 2.0, True,
              [2.0], [np.float64(2)], (np.int32(2), 3)]
SHAPE_FUNCS = {"ones": lambda L, s: L.ones(s), "zeros": lambda L, s: L.zeros(s),
               "empty": lambda L, s: L.empty(s).shape, "full": lambda L, s: L.full(s, 1.5),
               "reshape": lambda L, s: L.reshape(L.arange(6), s),
               "zeros_like": lambda L, s: L.zeros_like(L.ones(6), shape=s),
               "broadcast_shapes": lambda L, s: L.broadcast_shapes(s, (2, 1)),
               "indices": lambda L, s: L.indices(s), "eye": lambda L, s: L.eye(s),
               "identity": lambda L, s: L.identity(s)}


def _each_shape_arg(fn):
    """fn(lib, s) as NumPy's for each of SHAPE_ARGS: an array also under
    hop.compile, a Python or NumPy scalar or list eagerly."""
    for s in SHAPE_ARGS:
        if isinstance(s, np.ndarray):
            _as_numpy(fn, s)
        else:
            want = _outcome(lambda: fn(np, s))
            _same_outcome(want, _outcome(lambda: fn(hnp, s)), f"eager {s!r}")


@pytest.mark.parametrize("name", sorted(SHAPE_FUNCS))
def test_an_array_or_scalar_where_a_shape_is_expected_is_read_as_numpy_reads_it(name):
    fn = SHAPE_FUNCS[name]
    _each_shape_arg(fn)


def test_a_shape_array_gives_numpys_errors_and_results():
    assert _as_numpy(lambda L, s: L.ones(s), np.array([2.0, 3.0])) == \
        (TypeError, "'numpy.float64' object cannot be interpreted as an integer")
    assert _as_numpy(lambda L, s: L.ones(s), np.array(2.0)) == \
        (TypeError, "expected a sequence of integers or a single integer, got 'array(2.)'")
    assert _as_numpy(lambda L, s: L.zeros(s), np.array([True])) == \
        (TypeError, "an integer is required")
    assert _as_numpy(lambda L, s: L.ones(s), np.array([2, 3]))[1].shape == (2, 3)
    assert _as_numpy(lambda L, s: L.broadcast_shapes(s), np.array([2, 3]))[1].tolist() == [2, 3]


def test_a_numpy_float_scalar_as_an_index_names_its_type():
    for lib in (np, hnp):
        with pytest.raises(TypeError, match=r"^'numpy.float64' object cannot be interpreted as an "
                                            r"integer$"):
            import operator
            operator.index(lib.float64(2.5) if lib is np else hnp.asarray(2.5)[()])


@pytest.mark.parametrize("where", ["N", "M"])
def test_tri_of_an_array_or_float_size_is_numpys(where):
    def fn(L, s):
        return L.tri(s) if where == "N" else L.tri(2, s)
    _each_shape_arg(fn)
    assert _as_numpy(fn, np.array([2, 3]))[0] is ValueError
    assert _as_numpy(lambda L: L.tri(2.5, None, 1.0))[1].shape == (3, 3)


def test_a_shape_of_none_is_the_shape_of_no_dimensions():
    for fn in (lambda L: L.ones(None), lambda L: L.full(None, 2), lambda L: L.zeros(None),
               lambda L: L.broadcast_shapes(None, (2,))):
        _as_numpy(fn)
