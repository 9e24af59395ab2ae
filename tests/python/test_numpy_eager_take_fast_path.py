"""The eager fast path of hop.numpy for one integer or boolean index array
(python/_C/np_eager_take.c): a[idx], a[mask], a[idx] = number and
a[mask] = number on concrete arrays, where the general path
(_indexing._advanced, a checked `take`) cost 11-26 us against NumPy's
0.1-0.5 us.  Each key is checked to take the fast path, then against NumPy
(values, dtype, shape, strides, a new array) and against the general path
(test_numpy_eager_shape_fast_path's same_as_general); what it must leave to
the general path (an index out of range, a mask of another shape, a float
key, several arrays) still raises NumPy's errors and changes nothing."""

import itertools

import numpy as np
import pytest

import hop.numpy as hnp
from hop.numpy import _eager_shape
from test_numpy_eager_layouts_fast_path import VALUES, _set
from test_numpy_eager_shape_fast_path import (DTYPES, check_same, errors_alike, general_path,
                                              layouts, same_as_general)

INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
# the layouts the fast path reads (the others are views hop made as copies,
# empty or 0-d: the general path's)
TAKEN = {"1d", "2d", "3d", "transposed", "fortran", "strided", "ones", "broadcast"}


def _int_keys(n, itype):
    """Integer keys into a first dim of n: hop.numpy, NumPy and list forms of
    positions with negative ones, repeats and a 2-d one, each as a 1-tuple
    too."""
    signed = np.issubdtype(itype, np.signedinteger)
    pos = [0, n - 1, 1, n // 2, 1] + ([-1, -n] if signed else [])
    grid = [[0, n - 1], [n // 2, 1]] + ([[-1, -2]] if signed else [])
    for v in (pos, grid, [n - 1]):
        arr = np.array(v, itype)
        yield arr
        yield hnp.asarray(arr.copy())
        yield (arr,)
        yield np.asfortranarray(arr)  # (another layout of the key)
    yield list(pos)
    yield (list(pos),)


def _np_key(k):
    """k as NumPy reads it (hop.numpy arrays as NumPy's)."""
    if isinstance(k, tuple):
        return tuple(_np_key(v) for v in k)
    return np.asarray(k) if isinstance(k, hnp.ndarray) else k


@pytest.mark.parametrize("dtype", DTYPES)
def test_integer_array_keys_are_numpys_and_the_general_paths(dtype):
    for (name, n, h), itype in itertools.product(layouts(dtype), INT_TYPES):
        if n.ndim == 0 or n.shape[0] == 0:
            continue
        for key in _int_keys(n.shape[0], itype):
            # (a key of 2+ dims in another order picks elements of a 1-d
            # array into a result laid out as it is: the general path's)
            k = np.asarray(_np_key(key[0] if isinstance(key, tuple) else key))
            taken = name in TAKEN and not (n.ndim == 1 and k.ndim > 1 and
                                           not k.flags.c_contiguous)
            assert (_eager_shape.getitem(h, key) is not None) == taken, (name, key)
            got, want = h[key], n[_np_key(key)]
            check_same(got, want)
            assert got.strides == want.strides and got.base is None and want.base is None
            same_as_general(lambda: h[key])


@pytest.mark.parametrize("dtype", DTYPES)
def test_boolean_mask_keys_are_numpys_in_c_order(dtype):
    rng = np.random.default_rng(3)
    for name, n, h in layouts(dtype):
        if n.ndim == 0:
            continue
        for lead in range(1, n.ndim + 1):
            for density in (0.0, 0.4, 1.0):
                m = rng.random(n.shape[:lead]) < density
                keys = [m, hnp.asarray(m.copy()), (m,)]
                if lead == 1:
                    keys.append(m.tolist())
                if lead >= 2:
                    keys.append(m.T.copy().T)  # (a Fortran-ordered mask: read in C order)
                for key in keys:
                    if name in TAKEN and m.size:
                        assert _eager_shape.getitem(h, key) is not None, (name, key)
                    got, want = h[key], n[_np_key(key)]
                    check_same(got, want)
                    assert got.strides == want.strides and got.base is None
                    same_as_general(lambda: h[key])


def _orders3(dtype):
    """3-d arrays in every memory order of their dims, and broadcast: (NumPy
    array, the hop.numpy array over the same memory)."""
    for perm in itertools.permutations(range(3)):
        base = np.arange(24).astype(dtype).reshape(tuple(np.array((2, 3, 4))[list(perm)]))
        n = base.transpose(np.argsort(perm))
        yield n, hnp.asarray(n)
    n = np.broadcast_to(np.arange(4).astype(dtype), (2, 3, 4))
    yield n, hnp.broadcast_to(hnp.arange(4).astype(dtype), (2, 3, 4))


@pytest.mark.parametrize("dtype", [np.int16, np.float64])
def test_rows_of_other_memory_orders_are_laid_out_as_numpys(dtype):
    # NumPy lays the picked rows out in the array's memory order (a row of
    # a Fortran-ordered array stays Fortran-ordered) after the key's dims:
    # the fast path and the general path alike (both were C-ordered)
    for n, h in _orders3(dtype):
        keys = [np.array([1, 0, 1]), np.array([[1], [0]]), [0, -1], np.array([True, False]),
                np.array([[True, False, True], [False, True, True]])]
        for key in keys:
            k = key[:n.shape[0]] if isinstance(key, list) else key
            got, want = h[k], n[k]
            check_same(got, want)
            assert got.strides == want.strides, (n.strides, key, got.strides, want.strides)
            same_as_general(lambda: h[k])


def test_a_mask_of_the_arrays_own_comparison_and_an_argsort():
    x = np.array([3.0, -1.0, 7.5, 0.0, -2.5, 9.0])
    h = hnp.asarray(x.copy())
    np.testing.assert_array_equal(np.asarray(h[h > 0]), x[x > 0])
    np.testing.assert_array_equal(np.asarray(h[hnp.argsort(h)]), x[np.argsort(x)])
    m = hnp.asarray(np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(np.asarray(m[[2, 0]]), np.arange(12.0).reshape(3, 4)[[2, 0]])
    assert _eager_shape.getitem(h, hnp.argsort(h)) is not None


def test_uint64_index_arrays_wrap_to_intp_as_numpys():
    # NumPy reads an index array as intp: a uint64 2**64 - 1 is -1, the last
    # element (hop's general path said it was out of bounds)
    x = np.arange(5.0)
    key = np.array([2**64 - 1, 2**64 - 5, 0], np.uint64)
    for fast in (True, False):
        h = hnp.asarray(x.copy())
        if fast:
            assert _eager_shape.getitem(h, key) is not None
            assert _eager_shape.getitem(h, hnp.asarray(key)) is not None
        with (general_path() if not fast else _nothing()):
            check_same(h[key], x[key])
            check_same(h[hnp.asarray(key)], x[key])
            h[key] = -1.0
        want = x.copy()
        want[key] = -1.0
        np.testing.assert_array_equal(np.asarray(h), want)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_an_index_out_of_range_of_an_empty_result_only_warns_as_numpys():
    # NumPy 1.24: a result with no elements (another dim of size 0) only
    # warns for an index out of range (DeprecationWarning), where hop raised
    # IndexError; a result with elements still raises
    import warnings
    for shape, key in (((1, 0), [5]), ((1, 0), np.array([[7]])), ((3, 0, 2), [9]),
                       ((2, 0), [-3, 1]), ((0,), [1]), ((2, 3), [5])):
        n = np.empty(shape)
        h = hnp.asarray(n)
        got, want = [], []
        for arr, out in ((h, got), (n, want)):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    r = arr[key]
                    out.append(np.shape(r))
                except IndexError as e:
                    out.append(("IndexError", str(e)))
            out.append([(x.category, str(x.message)) for x in w])
        assert got == want, (shape, key, got, want)


def test_keys_the_fast_path_leaves_raise_numpys_errors():
    x = np.arange(10.0).reshape(5, 2)
    h = hnp.asarray(x.copy())
    bad = [[5], [0, -6], np.array([1, 7]), hnp.asarray(np.array([2, 9])), np.array([2**63], np.uint64),
           np.array([True, False]), [True, False, True], np.array([[True, False]] * 5).T,
           np.array([0.0, 1.0]), [0, 1.0], [[0, 1], [2, 3.5]]]
    for key in bad:
        assert _eager_shape.getitem(h, key) is None, key
        errors_alike(lambda: h[key], lambda: x[_np_key(key)])
        same_as_general(lambda: h[key])
    # several arrays, an array after a slice, an empty list: the general path's
    for key in ((np.array([0, 1]), np.array([1, 0])), (slice(None), [1, 0]), [], ([0, 1], 1)):
        assert _eager_shape.getitem(h, key) is None, key
        check_same(h[key], x[key])
    # a hop.numpy integer scalar, a bool scalar: still not array keys
    assert _eager_shape.getitem(h, hnp.argmax(hnp.arange(3))) is not None
    assert _eager_shape.getitem(h, np.True_) is None


# ---------------------------------------------------------------- assignment

SET_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
              np.uint64, np.float16, np.float32, np.float64, np.complex64]


def _set_keys(shape):
    m = (np.arange(int(np.prod(shape))).reshape(shape) % 3) == 1
    return [[0, 2], [-1, 1, 1], np.array([3, 0]), np.array([[1], [2]], np.uint8), [True] +
            [False] * (shape[0] - 1), m, m[..., 0] if len(shape) > 1 else m, np.array([0, 9]),
            [0, -9], np.array([[True, False]]), (np.array([1, 2]),), hnp.asarray(np.array([2, 0]))]


@pytest.mark.parametrize("dtype", SET_DTYPES)
def test_setitem_of_a_number_at_array_keys_is_numpys_and_the_general_paths(dtype):
    for shape in ((6,), (3, 4), (2, 3, 2)):
        for key, v in itertools.product(_set_keys(shape), VALUES):
            n0 = np.arange(int(np.prod(shape))).astype(dtype).reshape(shape)
            fast, slow, want = hnp.asarray(n0.copy()), hnp.asarray(n0.copy()), n0.copy()
            got = _set(fast, key, v)
            with general_path():
                slow_got = _set(slow, key, v)
            assert got == _set(want, _np_key(key), v) == slow_got, (key, v)
            np.testing.assert_array_equal(np.asarray(fast), want)
            np.testing.assert_array_equal(np.asarray(slow), want)


def test_setitem_at_array_keys_takes_the_fast_path_and_views_see_the_write(monkeypatch):
    from hop.numpy import _indexing

    def general(*args):
        raise AssertionError("the general path ran")
    h = hnp.asarray(np.arange(12.0).reshape(3, 4))
    want = np.arange(12.0).reshape(3, 4)
    rev = h[::-1]      # a view hop made as a copy: it reads again after a write
    col = h[:, 1]
    monkeypatch.setattr(_indexing, "setitem", general)
    h[[0, 2]] = -1.0
    h[np.array([1])] = 5
    h[h > 8] = 0.5
    h[hnp.asarray(np.array([True, False, False]))] = 2
    monkeypatch.undo()
    want[[0, 2]] = -1.0
    want[np.array([1])] = 5
    want[want > 8] = 0.5
    want[np.array([True, False, False])] = 2
    np.testing.assert_array_equal(np.asarray(h), want)
    np.testing.assert_array_equal(np.asarray(rev), want[::-1])
    assert rev.tolist() == want[::-1].tolist()
    np.testing.assert_array_equal(np.asarray(col), want[:, 1])


def test_setitem_reads_every_position_before_writing():
    # the key is the array written (a mask, an index array): NumPy reads it
    # first, and an index out of range leaves the array as it was
    b = hnp.asarray(np.array([True, False, True, True]))
    b[b] = False
    assert not np.asarray(b).any()
    i = hnp.asarray(np.array([3, 0, 2, 1, 0]))
    i[i] = 0
    want = np.array([3, 0, 2, 1, 0])
    want[want.copy()] = 0
    np.testing.assert_array_equal(np.asarray(i), want)
    h = hnp.asarray(np.arange(5.0))
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
        h[[0, 1, 7]] = -1.0
    np.testing.assert_array_equal(np.asarray(h), np.arange(5.0))
    ro = hnp.broadcast_to(hnp.arange(3.0), (2, 3))
    errors_alike(lambda: ro.__setitem__([0], 1.0),
                 lambda: np.broadcast_to(np.arange(3.0), (2, 3)).__setitem__([0], 1.0))


# ------------------------------------------------- a.item(), float(a), int(a)

ELEMENT_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                  np.int64, np.uint64, np.float16, np.float32, np.float64, np.complex64]


def _conv(fn):
    """fn(): its value and type, or its error (type, text)."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001
        return ("error", type(e), str(e))
    return (r if r == r else "nan", type(r))


@pytest.mark.parametrize("dtype", ELEMENT_DTYPES)
def test_item_float_and_int_are_numpys_and_the_general_paths(dtype):
    info = np.finfo(dtype) if np.issubdtype(dtype, np.inexact) else \
        np.iinfo(dtype) if dtype is not np.bool_ else None
    extremes = [info.min, info.max] if info is not None else [True, False]
    if np.issubdtype(dtype, np.floating):
        extremes += [np.nan, np.inf, -np.inf, -0.0, 2.5, -2.5, 1e-40 if dtype is np.float64 else 0]
    vals = np.array(extremes + [0, 1, 3], dtype=dtype)
    shapes = [(vals.size,), (1, vals.size), (vals.size, 1)]
    for shape in shapes:
        n = vals.reshape(shape)
        h = hnp.asarray(n.copy())
        for args in [(), (0,), (-1,), (3,), (vals.size,), (-vals.size - 1,), (0, 0), ((0, -1),),
                     ((1, 0),), (np.int64(2),), (True,), (2.0,)]:
            want = _conv(lambda: n.item(*args))
            assert _conv(lambda: h.item(*args)) == want, (shape, args)
            with general_path():
                assert _conv(lambda: h.item(*args)) == want, (shape, args)
        for v in (h[0] if h.ndim == 1 else h[0, 0], h[:1] if h.ndim == 1 else h[:1, :1], h):
            nv = np.asarray(v) if not v._scalar else np.asarray(v)[()]
            for conv in (float, int):
                want = _conv(lambda: conv(nv))
                assert _conv(lambda: conv(v)) == want, (conv, nv)
                with general_path():
                    assert _conv(lambda: conv(v)) == want, (conv, nv)


@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.float64])
def test_item_of_a_flat_index_counts_in_c_order_in_every_layout(dtype):
    for name, n, h in layouts(dtype):
        for k in range(-n.size, n.size):
            assert h.item(k) == n.item(k), (name, k)
        for idx in itertools.product(*[range(-d, d) for d in n.shape]):
            assert h.item(*idx) == n.item(*idx), (name, idx)


def test_item_float_and_int_take_the_fast_path(monkeypatch):
    import hop.numpy._ndarray as nd

    def general(*args):
        raise AssertionError("the general path ran")
    h = hnp.asarray(np.array([[1.5, -2.0], [3.25, 7.0]]))
    s = h[1, 0]
    u = hnp.asarray(np.array([2**63 + 5], np.uint64))
    # (the Python methods' first steps: item_key, _real_for)
    monkeypatch.setattr(nd, "item_key", general)
    monkeypatch.setattr(nd.ndarray, "_real_for", general)
    assert h.item(3) == 7.0 and type(h.item(3)) is float
    assert h.item(1, 0) == 3.25 and h.item((0, 1)) == -2.0 and h.item(-4) == 1.5
    assert float(s) == 3.25 and int(s) == 3 and s.item() == 3.25
    assert int(u) == 2**63 + 5 and float(u) == float(2**63 + 5)
    assert hnp.asarray(np.array([True])).item() is True
    assert hnp.asarray(np.array([7], np.int8)).item() == 7
    assert float(hnp.asarray(np.array([1.5], np.float16))) == 1.5
    # what the fast path leaves: a complex element, an index out of range,
    # int() of a NaN, a size other than 1
    for fn in (lambda: float(hnp.asarray(np.array([1 + 2j]))), lambda: h.item(4),
               lambda: int(hnp.asarray(np.array([np.nan]))), lambda: float(h),
               lambda: h.item(np.int64(1))):
        with pytest.raises(AssertionError, match="general path ran"):
            fn()


# ------------------------------------------ a property test against NumPy

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from budget import examples  # noqa: E402

_PROP_DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.uint8, np.bool_,
                np.complex64]


def _outcome(fn):
    """fn(): (dtype, shape, strides, NumPy scalar or not, values) of its
    result as NumPy sees it, or (error type, text); warnings ignored."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            return ("error", type(e), str(e))
    scalar = isinstance(r, np.generic) or bool(getattr(r, "_scalar", False))
    v = np.asarray(r)
    return (v.dtype, v.shape, v.strides if v.size else None, scalar, v)


def _alike(got, want, close=False):
    assert got[:4] == want[:4], (got[:4], want[:4])
    if got[0] == "error":
        return
    if close:
        np.testing.assert_allclose(got[4], want[4], rtol=1e-3, equal_nan=True)
    else:
        np.testing.assert_array_equal(got[4], want[4])


@st.composite
def _arrays(draw):
    """A hop.numpy array of 1-3 dims (sizes 0-4) in a drawn memory order,
    and NumPy's array over the same memory."""
    dt = draw(st.sampled_from(_PROP_DTYPES))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    seed = draw(st.integers(0, 2**16))
    n = (np.random.default_rng(seed).standard_normal(shape) * 5).astype(dt)
    perm = draw(st.permutations(range(n.ndim)))
    h = hnp.asarray(np.ascontiguousarray(n.transpose(perm)).transpose(np.argsort(perm)))
    return h._t.numpy(), h  # (NumPy's view of hop's memory: the same strides)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=list(HealthCheck))
@given(arr=_arrays(), data=st.data())
def test_index_arrays_masks_items_powers_and_products_are_numpys(arr, data):
    # The eager fast paths of this session and the general path behind
    # them, drawn: a[idx], a[mask], a[idx] = v, a.item(i), a ** e, a @ b and
    # np.dot against NumPy on the same memory (values, dtype, shape, strides,
    # NumPy scalar or not, errors)
    n, h = arr
    kind = data.draw(st.sampled_from(["take", "mask", "set", "item", "pow", "matmul"]))
    if kind in ("take", "set") and n.shape[0]:
        k = np.random.default_rng(data.draw(st.integers(0, 99))).integers(
            -n.shape[0] - 1, n.shape[0] + 1, size=tuple(data.draw(
                st.lists(st.integers(0, 3), min_size=1, max_size=2))))
        form = data.draw(st.sampled_from(["numpy", "hop", "list"]))
        hk = hnp.asarray(k) if form == "hop" else k.reshape(-1).tolist() if form == "list" else k
        nk = k.reshape(-1).tolist() if form == "list" else k
        if kind == "take":
            _alike(_outcome(lambda: h[hk]), _outcome(lambda: n[nk]))
        else:
            v = data.draw(st.sampled_from([0, 1, -1.5, True, 3, 2.5]))
            n2, h2 = n.copy(order="K"), hnp.asarray(n.copy(order="K"))
            _alike(_outcome(lambda: (h2.__setitem__(hk, v), h2)[1]),
                   _outcome(lambda: (n2.__setitem__(nk, v), n2)[1]))
    elif kind == "mask":
        lead = data.draw(st.integers(1, n.ndim))
        m = np.random.default_rng(data.draw(st.integers(0, 99))).random(n.shape[:lead]) < 0.5
        hm = data.draw(st.sampled_from([m, hnp.asarray(m)]))
        _alike(_outcome(lambda: h[hm]), _outcome(lambda: n[m]))
    elif kind == "item" and n.size:
        i = data.draw(st.integers(-n.size - 1, n.size))
        _alike(_outcome(lambda: h.item(i)), _outcome(lambda: n.item(i)))
    elif kind == "pow":
        e = data.draw(st.sampled_from([2, 2.0, 0.5, -1, 1, 3, -2, 1.5, 0, 0.0]))
        _alike(_outcome(lambda: h ** e), _outcome(lambda: n ** e),
               close=n.dtype.kind in "fc" and e not in (2, 1, 0))
    elif kind == "matmul" and n.ndim <= 2:
        cols = data.draw(st.sampled_from([None, 0, 1, 3]))
        bshape = (n.shape[-1],) if cols is None else (n.shape[-1], cols)
        b = (np.random.default_rng(1).standard_normal(bshape) * 3).astype(n.dtype)
        hb = hnp.asarray(b)
        for hf, nf in ((lambda: h @ hb, lambda: n @ b), (lambda: np.dot(h, hb), lambda: np.dot(n, b)),
                       (lambda: h.dot(hb), lambda: n.dot(b))):
            _alike(_outcome(hf), _outcome(nf), close=True)
