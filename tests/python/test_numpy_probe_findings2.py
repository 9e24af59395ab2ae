"""First-rule gaps a probe of hop.numpy's functions of two arrays found
(binary ufuncs, joining, selection, set routines, convolutions, products,
comparisons; mixed dtypes, NaN, edge shapes), each compared against NumPy
1.24 eagerly on hop.numpy arrays and compiled (keywords written into the
compiled function, not passed through **kwargs): value, dtype, shape, type
and error."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from test_numpy_probe_findings import _run

F = np.array([1.5, np.nan, -2.0])
I3 = np.array([1, 2, 3])
I2 = np.array([1, 2])
C3 = np.array([1 + 1j, 2, -1j])
F23 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def _three_ways(f, *xs):
    """NumPy's answer, then hop.numpy's eager and compiled ones."""
    want = _run(lambda: f(*[x.copy() for x in xs]))
    eager = _run(lambda: f(*[hnp.asarray(x.copy()) for x in xs]))
    compiled = _run(lambda: hop.compile(f)(*[x.copy() for x in xs]))
    return want, eager, compiled


CONVOLUTIONS = [
    (lambda a, v: np.convolve(a, v), I3, F),
    (lambda a, v: np.convolve(a, v), F, I3),
    (lambda a, v: np.convolve(a, v, mode="same"), F, I2),
    (lambda a, v: np.correlate(a, v, mode="full"), I2, F),
    (lambda a, v: np.correlate(a, v, mode="same"), I2, F),
    (lambda a, v: np.convolve(a, v), np.array([1.5, np.inf, -2.0]), I2),
]


@pytest.mark.parametrize("f,a,v", CONVOLUTIONS)
def test_convolve_and_correlate_multiply_only_overlapping_elements(f, a, v):
    # hop padded the longer operand with zeros and multiplied them too: a NaN
    # or inf of the other operand (0 * nan) made every output NaN
    want, eager, compiled = _three_ways(f, a, v)
    assert want[0] == "array" and want[3].count("nan") < want[2][0]
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("a,v", [(I2, C3), (C3, C3), (C3, I2), (C3[:2], C3)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_correlate_conjugates_a_complex_second_operand(a, v, mode):
    # NumPy's correlate is sum(a[n+k] * conj(v[n])); hop left out the conj
    want, eager, compiled = _three_ways(lambda x, y: np.correlate(x, y, mode=mode), a, v)
    assert eager == want
    assert compiled == want


SETS = [
    lambda a, b: np.isin(a, b), lambda a, b: np.isin(a, b, invert=True),
    lambda a, b: np.in1d(a, b), lambda a, b: np.intersect1d(a, b),
    lambda a, b: np.setxor1d(a, b), lambda a, b: np.setdiff1d(a, b),
]


@pytest.mark.parametrize("f", SETS)
@pytest.mark.parametrize("b", [F, F[::-1].copy(), np.array([np.nan], np.float32)])
def test_set_routines_find_no_nan_as_numpys_equality(f, b):
    # NumPy compares with ==, so NaN is in no array; hop's sorted search
    # found NaN next to NaN (isin True, intersect1d kept it, setxor1d lost it)
    want, eager, compiled = _three_ways(f, F, b)
    assert eager == want
    assert compiled == want


def test_isin_of_complex_nan():
    a = C3 * np.array([1, np.nan, 1])
    want, eager, compiled = _three_ways(lambda x, y: np.isin(x, y), a, a)
    assert want[3] == "[True, False, True]"
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("f,a,b", [
    (lambda a, b: np.tensordot(a, b, axes=((0, 1), (0, 1))), F23, F23),
    (lambda a, b: np.tensordot(a, b, axes=2), F23, F23),
    (lambda a, b: np.tensordot(a, b, axes=1), I3, I3),
])
def test_tensordot_of_a_full_contraction_is_a_0d_array(f, a, b):
    # NumPy reshapes dot's answer: a 0-d array; hop returned einsum's scalar
    want, eager, compiled = _three_ways(f, a, b)
    assert want[0] == "array" and want[2] == ()
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("f,a,b", [
    (lambda a, b: np.einsum("ij,j->i", a, b, dtype=np.float32), F23, I3),
    (lambda a, b: np.einsum("ij,j->i", a, b, dtype=np.int64, casting="same_kind"), F23, I3),
    (lambda a, b: np.einsum("ij,j->i", a, b, dtype=np.int32), F23.astype(int), I3),
    (lambda a, b: np.einsum("ij,j", a, b, dtype=np.float64, casting="no"), F23, I3),
])
def test_einsum_dtype_casts_operands_under_casting(f, a, b):
    # NumPy's iterator refuses an operand it cannot cast to dtype under the
    # casting rule (default 'safe'); hop cast it regardless
    want, eager, compiled = _three_ways(f, a, b)
    assert want[0] is TypeError and want[1].startswith("Iterator operand")
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("f,a,b", [
    (lambda a, b: np.einsum("ij,j->i", a, b, dtype=np.float32, casting="unsafe"), F23, I3),
    (lambda a, b: np.einsum("ij,j->i", a, b, dtype=np.float64), F23.astype(int), I3),
    (lambda a, b: np.einsum("ij,j->i", a, b, dtype=np.float32, casting="same_kind"), F23, I3),
])
def test_einsum_dtype_that_casting_allows(f, a, b):
    want, eager, compiled = _three_ways(f, a, b)
    assert want[0] == "array"
    assert eager == want
    assert compiled == want


BROADCASTS = [
    lambda a, b: a + b, lambda a, b: b * a, lambda a, b: a < b, lambda a, b: np.add(a, b),
    lambda a, b: np.maximum(a, b), lambda a, b: np.add(a, 1, where=b > 0),
    lambda a, b: np.add(a, b, out=np.ones(3)), lambda a, b: np.clip(a, b, 3),
    lambda a, b: np.add(a, b, out=np.ones(3), where=np.ones(3, bool)),
    lambda a, b: np.isclose(a[0], b),
    # np.where: hop's message was np.broadcast_shapes' ("shape mismatch: objects
    # cannot be broadcast to a single shape. ..."); NumPy's lists the shapes
    lambda a, b: np.where(a > 1, a, b), lambda a, b: np.where(b > 1, 0, a[0]),
    lambda a, b: np.where(a[0] > 1, b, 1.5),
]


@pytest.mark.parametrize("f", BROADCASTS)
def test_operands_that_do_not_broadcast_raise_numpys_value_error(f):
    # hop's eager path raised its op's ShapeError ("add: cannot broadcast
    # f64[2, 3] with f64[2]"), not NumPy's text
    want, eager, compiled = _three_ways(f, F23, I2)
    assert want[0] is ValueError and want[1].startswith("operands could not be broadcast")
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("f", [
    lambda a, b: np.add(a, b, out=a[0]), lambda a, b: np.add(a, b, out=np.ones((1, 3))),
])
def test_an_output_smaller_than_the_broadcast_shape_is_numpys_error(f):
    want, eager, compiled = _three_ways(f, F23, I3)
    assert want[0] is ValueError and want[1].startswith("non-broadcastable output operand")
    assert eager == want
    assert compiled == want


JOINS_AND_OTHERS = [
    lambda a, b: np.concatenate([a, b]), lambda a, b: np.append(a, b, axis=0),
    lambda a, b: np.vstack([b, b[:2]]), lambda a, b: np.concatenate([a, a[:, :2]]),
    lambda a, b: np.hstack([a, a[:1]]), lambda a, b: np.stack([a, a]) + np.concatenate(
        [a[None], a[None, :1]], axis=2),
    lambda a, b: np.inner(a, b[:2]), lambda a, b: np.dot(a, a),
    lambda a, b: np.searchsorted(b, 2, side="middle"),
    lambda a, b: np.take_along_axis(a, (a % 3).astype(int), axis=None),
    lambda a, b: np.put_along_axis(a, (a % 3).astype(int), 1.0, axis=None),
]


@pytest.mark.parametrize("f", JOINS_AND_OTHERS)
def test_joining_and_products_of_mismatched_shapes_raise_numpys_text(f):
    # hop's texts: another concatenate message for a difference of ndim, its
    # op's ShapeError for one of sizes, shapes printed as (2, 3), NumPy 2's
    # take_along_axis text, searchsorted without "search "
    want, eager, compiled = _three_ways(f, F23, I3)
    assert want[0] is ValueError
    assert eager == want
    assert compiled == want


CHOOSE = [
    lambda i, c: np.choose(i, [c, c * 2], mode="clip"),
    lambda i, c: np.choose(i, [c, c * 2], mode="wrap"),
    lambda i, c: np.choose(i - 3, [c, c * 2, c * 3], mode="wrap"),
    lambda i, c: np.choose(i - 3, [c, c * 2, c * 3], mode="clip"),
    lambda i, c: np.choose(i - 3, [c, c * 2, c * 3], mode="Wr"),
    lambda i, c: np.choose(i - 1, [c, c * 2, c * 3], mode=np.WRAP),
    lambda i, c: np.choose(i - 1, [c, c * 2, c * 3], mode=None),
]


@pytest.mark.filterwarnings("ignore:inexact matches:DeprecationWarning")
@pytest.mark.parametrize("f", CHOOSE)
def test_choose_clip_and_wrap_modes(f):
    # hop raised UnsupportedError for every mode but 'raise'
    want, eager, compiled = _three_ways(f, I3, I3)
    assert want[0] == "array"
    assert eager == want
    assert compiled == want


def test_choose_an_inexact_mode_warns_as_numpy():
    with pytest.warns(DeprecationWarning, match="inexact matches and case insensitive"):
        r = np.choose(hnp.asarray(I3) - 3, [hnp.asarray(I3), hnp.asarray(I3) * 2], mode="Wr")
    assert r.tolist() == [1, 4, 3]


@pytest.mark.parametrize("f", [
    lambda i, c: np.choose(i, [c, c]), lambda i, c: np.choose(i - 3, [c, c, c], mode=None),
    lambda i, c: np.choose(i, [c, c], mode="x"), lambda i, c: np.choose(i, [c, c], mode=7),
])
def test_choose_out_of_range_and_bad_modes_are_numpys_value_errors(f):
    # an index out of range was the take op's OutOfBoundsError
    want, eager, compiled = _three_ways(f, I3, I3)
    assert want[0] is ValueError
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("f", [
    lambda a, b: np.tensordot(a, b, axes=([1], [0])),
    lambda a, b: np.tensordot(a, b, axes=([1, 0], [0])),
    lambda a, b: np.tensordot(a, b, axes=1),
    lambda a, b: np.tensordot(a, b, axes=3),
])
def test_tensordot_of_mismatched_axes_is_numpys_error(f):
    # hop's message was einsum's ("operands could not be broadcast together
    # with remapped shapes for index 'b': 3 and 2"); too many axes its own
    want, eager, compiled = _three_ways(f, F23, F23)
    assert want[0] in (ValueError, IndexError)
    assert eager == want
    assert compiled == want


def _warned(fn, make):
    """fn(make())'s dtype and values or exception, and its warnings
    (category, text, file and line)."""
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = np.asarray(fn(make()))
            r = r.dtype, r.tolist()
        except Exception as e:  # noqa: BLE001 (compared with NumPy's)
            r = type(e), str(e)
    return r, [(x.category, str(x.message), x.filename, x.lineno) for x in w
               if not str(x.message).startswith("hop")]


@pytest.mark.parametrize("f", [
    lambda x: np.clip(x, 0.5, 1.5, out=x), lambda x: np.clip(x, 0.5, None, out=x),
    lambda x: np.clip(x, None, 1.5, out=x), lambda x: x.clip(0.5, 1.5, out=x),
    lambda x: np.clip(x, np.array([0.5, 1.5, 0.5, 1.5]), 2, out=x),
    lambda x: np.clip(x, 0.5, 1.5, out=x, casting="same_kind"),
    lambda x: np.clip(x, 0.5, 1.5, out=x, casting="unsafe"),
    lambda x: np.core.umath.clip(x, 0.5, 1.5, out=x),
    lambda x: np.clip(x, 0.5, 1.5, out=x, dtype=np.int64),
    lambda x: np.clip(x, 0, 1, out=np.zeros(4, bool)),
    lambda x: np.clip(x, 0.5, 1.5, out=np.zeros(4, np.float32))])
def test_clip_into_an_out_of_another_kind_casts_with_numpys_deprecation_warning(f):
    # NumPy 1.24's _clip without casting= writes a result that does not
    # cast to out by 'same_kind' unsafely, with a DeprecationWarning at its
    # _methods.py line; with casting= (or the ufunc itself) it is the
    # UFuncTypeError.  Before, hop raised a plain TypeError (hunt29 bug12)
    def make():
        return np.array([1, 2, 0, 3])
    want = _warned(f, make)
    assert _warned(f, lambda: hnp.asarray(make())) == want
    cf = hop.compile(f)
    for _ in range(3):  # (the warning on every call)
        assert _warned(cf, make) == want
