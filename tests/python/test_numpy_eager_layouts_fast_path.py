"""The eager fast path of hop.numpy's shape functions and ufuncs, for the
cases its first version sent to the general path (6-100 us against NumPy's
0.05-2 us): NumPy and hop.numpy integer scalars as index items and slice
bounds, reshape of arrays with dims of size 1, where with a condition that
is not bool, where, concatenate and the ufuncs of arrays that share a memory
order other than C (Fortran order, a transpose), and transpose itself (a.T,
a.transpose(...), np.transpose, hnp.transpose).  Each case is checked to
take the fast path (its function answers, not None), then against NumPy
(values, dtype, shape, strides, whether it owns its memory, writes through
views) and against the general path (test_numpy_eager_shape_fast_path's
same_as_general); what it must not take (bool index items, mixed layouts)
is checked to fall back."""

import itertools

import numpy as np
import pytest

import hop.numpy as hnp
from hop import _C
from hop.numpy import _eager_shape
from test_numpy_eager_shape_fast_path import (check_same, errors_alike, general_path,
                                              same_as_general)

INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _grid(dtype=np.float64, shape=(3, 4)):
    n = np.arange(int(np.prod(shape))).astype(dtype).reshape(shape)
    h = hnp.asarray(n.copy())
    return h, h._t.numpy()  # (NumPy's view of hop's own memory: its views are hop's)


def _same_layout(got, want):
    g = np.asarray(got)
    assert g.strides == want.strides, (g.strides, want.strides)
    assert (got.base is None) == (want.base is None)


# -------------------------------------------------------------- index items

@pytest.mark.parametrize("itype", INT_TYPES)
def test_numpy_and_hop_integer_scalars_index_and_bound_slices_as_ints(itype):
    h, n = _grid(shape=(5, 6))
    top = min(np.iinfo(itype).max, 2**63 - 1)  # (read as a signed type: -1)
    nps = [itype(v) for v in (1, 2, 4, top)]
    hs = hnp.asarray(np.array([1, 2, 4, top], itype))
    hops = [hs[i] for i in range(4)]  # hop.numpy's NumPy scalars of the type
    assert all(v._scalar and v.dtype == itype for v in hops)

    def keys(one, two, four, top):
        return [one, (one, two), (two, slice(None)), (slice(one, None), two),
                slice(one, four, two), (Ellipsis, two), (None, one), (slice(None), -1),
                slice(one, top), (slice(None), slice(two, top, two))]
    for hkey, nkey in zip(keys(*nps) + keys(*hops), keys(*nps) * 2):
        assert _eager_shape.getitem(h, hkey) is not None, hkey
        got, want = h[hkey], n[nkey]
        check_same(got, want, h, n)
        if isinstance(want, np.ndarray):
            _same_layout(got, want)
        same_as_general(lambda: h[hkey])
    # a NumPy scalar of the element (a copy), as for a Python int
    s = h[nps[0], hops[1]]
    assert s._scalar and float(s) == n[1, 2]
    # the type's largest index of a long axis (an unsigned one read as signed
    # would be negative: the last element)
    v = min(np.iinfo(itype).max, 69_998)
    long = hnp.arange(70_000.0)
    for k in (itype(v), hnp.asarray(np.array([v], itype))[0]):
        assert _eager_shape.getitem(long, k) is not None
        assert float(long[k]) == v and float(long[k:][0]) == v


def test_hop_numpy_integer_scalars_index_as_ints_and_bool_ones_do_not():
    h, n = _grid(shape=(5, 6))
    j = hnp.argmax(hnp.arange(3))  # a NumPy scalar's 0-d array, 2
    assert j._scalar
    for key in (j, (1, j), slice(j, None), (slice(None, j), j)):
        assert _eager_shape.getitem(h, key) is not None, key
        nk = tuple(2 if k is j else k for k in key) if isinstance(key, tuple) else \
            slice(2, None) if isinstance(key, slice) and key.start is j else 2
        if isinstance(key, tuple) and isinstance(key[0], slice):
            nk = (slice(None, 2), 2)
        check_same(h[key], n[nk], h, n)
        same_as_general(lambda: h[key])
    # a write through h[j] (a view of row 2, as NumPy's h[np.int64(2)]) reaches h
    r = h[j]
    r[0] = -1
    assert float(h[2, 0]) == -1
    # bool items are masks (NumPy's), never ints: the general path's
    for key in (np.bool_(True), hnp.asarray(True), True, (np.True_, 0)):
        assert _eager_shape.getitem(h, key) is None, key
        check_same(h[key], n[key], h, n)
    # a 0-d integer array that is no scalar is NumPy's copy (HAS_SCALAR_ARRAY)
    k = hnp.asarray(np.array(1))
    assert not k._scalar and _eager_shape.getitem(h, k) is None
    r = h[k]
    r[0] = 77
    assert float(h[1, 0]) != 77


def test_integer_items_out_of_range_or_beyond_int64_are_the_general_paths_errors():
    h, n = _grid(shape=(5, 6))
    big = np.uint64(2**63 + 5)
    for key in (np.int64(5), np.int8(-6), (0, np.uint8(200)), big, slice(big, None)):
        try:
            want = n[key]
        except Exception:  # noqa: BLE001
            errors_alike(lambda: h[key], lambda: n[key])
            continue
        check_same(h[key], want, h, n)
    assert _eager_shape.getitem(h, big) is None


# ------------------------------------------------------------------ reshape

def test_reshape_of_arrays_with_dims_of_size_one_is_numpys():
    h, n = _grid(shape=(4, 6))
    cases = [(h[:, None], n[:, None]), (h[None], n[None]), (h[1:2], n[1:2]),
             (h.reshape(1, 24, 1), n.reshape(1, 24, 1)), (h[:1, None, :], n[:1, None, :])]
    for (hv, nv), shape in itertools.product(cases, [(-1,), (24,), (4, 1, 6), (1, -1), (2, 12),
                                                     (6,), (1, 6), (1, 1, 6), (4, 6)]):
        try:
            want = nv.reshape(shape)
        except Exception:  # noqa: BLE001
            errors_alike(lambda: hv.reshape(shape), lambda: nv.reshape(shape))
            continue
        assert _eager_shape.reshape(hv, shape) is not None
        got = hv.reshape(shape)
        check_same(got, want, h, n)
        assert np.asarray(got).strides == want.strides, (nv.strides, shape)
        same_as_general(lambda: hv.reshape(shape))
    # the shape given as the array's own keeps its strides (the new axis's 0)
    v = h[:, None]
    assert np.asarray(v.reshape(4, 1, 6)).strides == n[:, None].reshape(4, 1, 6).strides
    assert np.asarray(v.reshape(4, 1, 6)).strides[1] == 0


def test_reshape_of_an_empty_array_still_takes_the_general_path():
    z = hnp.zeros((0, 3))
    assert _eager_shape.reshape(z, (3, 0)) is None
    check_same(z.reshape(3, 0), np.zeros((0, 3)).reshape(3, 0))


# ------------------------------------------------- other memory orders

def _orders(dtype):
    """(name, hop array, NumPy array) in C, Fortran and transposed order."""
    h, n = _grid(dtype, (3, 4))
    f = hnp.asarray(np.asfortranarray(n))
    yield "C", h, n
    yield "F", f, f._t.numpy()
    yield "T", h.T, n.T
    h3, n3 = _grid(dtype, (2, 3, 4))
    yield "moved", h3.transpose(1, 2, 0), n3.transpose(1, 2, 0)


@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.uint32, np.float32, np.float64,
                                   np.complex64])
def test_ufuncs_of_arrays_in_one_other_order_are_numpys(dtype):
    taken = {}
    for name, h, n in _orders(dtype):
        ops = [("negative", (h,), (n,)), ("add", (h, h), (n, n)), ("multiply", (h, 2), (n, 2)),
               ("less", (1.5, h), (1.5, n)), ("maximum", (h, h), (n, n)),
               ("logical_and", (h, h), (n, n)), ("sqrt", (h,), (n,))]
        for uf, hops, nops in ops:
            try:
                want = getattr(np, uf)(*nops)
            except TypeError:
                errors_alike(lambda: getattr(np, uf)(*hops), lambda: getattr(np, uf)(*nops))
                continue
            # every order takes the fast path where C order does (its plan)
            fast = _C._np_eager(uf, hops) is not None
            assert taken.setdefault(uf, fast) == fast, (name, uf)
            got = getattr(np, uf)(*hops)
            check_same(got, want)
            _same_layout(got, want)
            _C._np_eager_off(1)
            try:
                slow = getattr(np, uf)(*hops)
            finally:
                _C._np_eager_off(-1)
            assert np.asarray(slow).strides == np.asarray(got).strides
    assert dtype is np.bool_ or taken["add"] and taken["negative"]
    # the operators reach it too
    f = hnp.asarray(np.asfortranarray(np.arange(12.0).reshape(3, 4)))
    nf = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    for got, want in ((f > 3, nf > 3), (f * f - 1, nf * nf - 1), (-f, -nf), (np.sin(f), np.sin(nf))):
        check_same(got, want)
        _same_layout(got, want)


def test_ufuncs_of_mixed_or_broadcast_orders_fall_back_to_the_general_path():
    h, n = _grid(shape=(4, 4))
    f = hnp.asarray(np.asfortranarray(n))
    nf = np.asfortranarray(n)
    for hops, nops in (((h, f), (n, nf)), ((f, h), (nf, n)), ((f, h[0]), (nf, n[0])),
                       ((f[:, :1], f), (nf[:, :1], nf)), ((h[::2].T, h[::2].T), (n[::2].T, n[::2].T))):
        assert _C._np_eager("add", hops) is None
        got, want = np.add(*hops), np.add(*nops)
        check_same(got, want)
        _same_layout(got, want)


@pytest.mark.parametrize("cdtype", [np.bool_, np.int32, np.float64, np.complex128])
def test_where_of_any_condition_dtype_and_one_other_order_is_numpys(cdtype):
    vals = np.array([[0, 1.5, -2, np.nan], [0, 0, 3, -0.0], [1, 0, 0, 2]])
    ncond = vals.astype(cdtype) if cdtype is not np.bool_ else vals > 0
    for (name, h, n), layout in itertools.product(_orders(np.float32), ("C", "F", "T")):
        if n.shape != (3, 4) and layout != "T":
            continue
        c = {"C": ncond, "F": np.asfortranarray(ncond), "T": ncond.T.copy().T}[layout]
        if n.shape != (3, 4):
            c = np.ones(n.shape, cdtype)
        hc = hnp.asarray(c)
        for hx, nx, hy, ny in ((h, n, 0, 0), (2.5, 2.5, h, n), (h, n, h, n)):
            want = np.where(c, nx, ny)
            got = hnp.where(hc, hx, hy)
            check_same(got, want)
            same_as_general(lambda: hnp.where(hc, hx, hy))
            same_order = layout == {"C": "C", "F": "F", "T": "F", "moved": None}[name]
            if same_order or (layout == "C" and name == "C"):
                assert _eager_shape.where(hc, hx, hy) is not None, (name, layout)
                _same_layout(got, want)


def test_concatenate_of_arrays_in_one_other_order_is_numpys():
    for name, h, n in _orders(np.float64):
        for axis in range(-n.ndim, n.ndim):
            want = np.concatenate([n, n, n], axis)
            assert _eager_shape.concatenate([h, h, h], axis) is not None
            got = hnp.concatenate([h, h, h], axis)
            check_same(got, want)
            _same_layout(got, want)
            same_as_general(lambda: hnp.concatenate([h, h, h], axis))
        # flattened: the general path's (its C-order ravel of each)
        if name != "C":
            assert _eager_shape.concatenate([h, h], None) is None
        check_same(hnp.concatenate([h, h], None), np.concatenate([n, n], None))
    # many arrays (more than fit on the stack of the fast path)
    f = hnp.asarray(np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    nf = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    got, want = hnp.concatenate([f] * 40, 1), np.concatenate([nf] * 40, 1)
    check_same(got, want)
    _same_layout(got, want)


# ---------------------------------------------------------------- transpose

@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (2, 1, 3)])
def test_transpose_is_a_view_as_numpys(shape):
    h, n = _grid(shape=shape)
    nd = len(shape)
    calls = [(lambda a: a.T, None), (lambda a: a.transpose(), None),
             (lambda a: np.transpose(a), None), ("hnp", None)]
    for axes in itertools.permutations(range(nd)):
        neg = tuple(x - nd for x in axes)
        calls += [(lambda a, x=axes: a.transpose(*x), axes),
                  (lambda a, x=axes: a.transpose(x), axes),
                  (lambda a, x=neg: a.transpose(list(x)), axes),
                  (lambda a, x=axes: np.transpose(a, x), axes), ("hnp", axes)]
    for call, axes in calls:
        assert _eager_shape.transpose(h, axes) is not None
        if call == "hnp":  # (hop.numpy's function of hop's array, NumPy's of NumPy's)
            got, want = hnp.transpose(h, axes), np.transpose(n, axes)
            call = lambda a, x=axes: hnp.transpose(a, x)  # noqa: E731
        else:
            got, want = call(h), call(n)
        check_same(got, want, h, n)
        _same_layout(got, want)
        assert got.base is h
        same_as_general(lambda: call(h))
    # read-only stays read-only
    b = hnp.broadcast_to(hnp.arange(4.0), (3, 4))
    assert not b.T.flags.writeable and np.asarray(b.T).strides == (8, 0)


def test_transpose_errors_are_numpys_for_the_method_and_both_functions():
    h, n = _grid(shape=(2, 3, 4))
    for axes in ((0, 0, 1), (1, 0), (5, 0, 1), (0, 1, -4), (1.0, 0, 2), ("a", 0, 1)):
        for hcall, ncall in ((lambda: h.transpose(*axes), lambda: n.transpose(*axes)),
                             (lambda: h.transpose(axes), lambda: n.transpose(axes)),
                             (lambda: np.transpose(h, axes), lambda: np.transpose(n, axes)),
                             (lambda: hnp.transpose(h, axes), lambda: np.transpose(n, axes))):
            errors_alike(hcall, ncall)
    # a NumPy scalar's transpose is the scalar
    s = hnp.float64(2.5)
    assert s.T is s or float(s.T) == 2.5
    assert type(s.transpose()) is type(np.float64(2.5).transpose())


# ------------------------------------------------------------------ setitem

VALUES = [0, 1, -1, 7, 127, 128, 255, 256, -129, 300, 70000, 2**31, 2**53, 2**53 + 1, 2**63 - 1,
          2**63, -2**63, True, False, 0.0, -0.0, 0.5, 2.7, -2.5, 1e300, -1e300, 3.4028235677973366e38,
          float("nan"), float("inf"), 1e-320]
SET_KEYS = [0, 3, -1, slice(1, 3), slice(None, None, 2), (Ellipsis,), (None, 1), np.int64(2),
            (slice(None), 0), (1, 2), (0, slice(1, None, 3)), 24, slice(5, 2), (slice(None),),
            (slice(None), slice(0, 3, 2)), (Ellipsis, slice(1, 3)), (slice(None), None, 1)]


def _set(a, key, v):
    """a[key] = v: None, or the error and warnings (type, text)."""
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            a[key] = v
            err = None
        except Exception as e:  # noqa: BLE001
            err = (type(e), str(e))
    return err, [(x.category, str(x.message)) for x in w]


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32, np.int64, np.uint64, np.float16, np.float32,
                                   np.float64, np.complex64])
def test_setitem_of_a_number_is_numpys_and_the_general_paths(dtype):
    for key, v in itertools.product(SET_KEYS, VALUES):
        for shape in ((24,), (4, 6), (2, 3, 4)):
            n0 = np.arange(24).astype(dtype).reshape(shape)
            fast, slow, want = hnp.asarray(n0.copy()), hnp.asarray(n0.copy()), n0.copy()
            got = _set(fast, key, v)
            with general_path():
                slow_got = _set(slow, key, v)
            assert got == _set(want, key, v) == slow_got, (key, v)
            np.testing.assert_array_equal(np.asarray(fast), want)
            np.testing.assert_array_equal(np.asarray(slow), want)


def test_setitem_fast_path_is_taken_and_views_see_the_write(monkeypatch):
    from hop.numpy import _indexing

    def general(*args):
        raise AssertionError("the general path ran")
    h, n = _grid(np.float32, (4, 6))
    rev = h[::-1]          # a view hop made as a copy: it reads again after a write
    col = h[:, 2]          # a view of the memory
    monkeypatch.setattr(_indexing, "setitem", general)
    h[0, 2] = 9.5
    h[1:3, ::2] = -1
    h[3] = 7
    h[np.int64(2), np.uint8(5)] = True
    monkeypatch.undo()
    want = np.arange(24, dtype=np.float32).reshape(4, 6)
    want[0, 2] = 9.5
    want[1:3, ::2] = -1
    want[3] = 7
    want[2, 5] = True
    np.testing.assert_array_equal(np.asarray(h), want)
    np.testing.assert_array_equal(np.asarray(rev), want[::-1])
    # (its own elements, read again after the writes: not only NumPy's view)
    assert rev.tolist() == want[::-1].tolist() and float(rev[3, 2]) == 9.5
    np.testing.assert_array_equal(np.asarray(rev + 0), want[::-1])
    np.testing.assert_array_equal(np.asarray(col), want[:, 2])
    np.testing.assert_array_equal(n, want)  # (hop's own memory)
    # what the fast path leaves to the general path still works through it
    monkeypatch.setattr(_indexing, "setitem", general)
    for key, v in ((0, 2.5 + 0j), ((0, [0, 1]), 1.0), (0, np.float64(2)), (0, h[1, 1])):
        with pytest.raises(AssertionError, match="general path ran"):
            h[key] = v


def test_setitem_of_read_only_scalars_and_copies_is_the_general_paths():
    b = hnp.broadcast_to(hnp.arange(4.0), (3, 4))
    errors_alike(lambda: b.__setitem__(0, 1.0),
                 lambda: np.broadcast_to(np.arange(4.0), (3, 4)).__setitem__(0, 1.0))
    s = hnp.arange(3.0)[1]
    with pytest.raises(TypeError, match="does not support item assignment"):
        s[()] = 2.0
    h = hnp.arange(6.0)
    r = h[::-1]
    r[0] = 50.0  # (a write through a view hop made as a copy reaches h)
    assert float(h[5]) == 50.0


def _array_values(n, key, dtype):
    """Values for n[key] = value: arrays of dtype in every shape that
    broadcasts to the view's, one that does not, other dtypes, other
    layouts, and slices of n itself (overlapping the view or not)."""
    view = n[key]
    shape = np.shape(view)
    base = (np.arange(int(np.prod(shape)) or 1) * 3 + 1).astype(dtype)
    vals = []
    if np.prod(shape):
        vals.append(base[:int(np.prod(shape))].reshape(shape))
    if np.prod(shape) and len(shape):
        vals.append(base[:int(np.prod(shape))].reshape(shape)[..., ::-1])  # (reversed last dim)
    if len(shape) >= 1:
        vals.append(base[:shape[-1]] if shape[-1] else base[:0])  # one row
        vals.append(base[:1].reshape((1,) * len(shape)))  # all size 1
        vals.append(np.arange(shape[-1] + 1).astype(dtype))  # does not broadcast
    if len(shape) >= 2 and np.prod(shape):
        vals.append(base[:shape[-2]].reshape(shape[-2], 1))  # a column
        vals.append(np.ascontiguousarray(base[:int(np.prod(shape))].reshape(shape[::-1]).T)
                    if shape[0] and shape[-1] else base[:0])  # transposed
    vals.append(base[:1].reshape(()))  # 0-d
    vals.append(base[:1].reshape(1, 1, 1, 1))  # more dims than the view
    other = np.float64 if np.dtype(dtype) != np.float64 else np.float32
    if np.prod(shape):
        vals.append(base[:int(np.prod(shape))].reshape(shape).astype(other))
    return vals


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float16,
                                   np.float32, np.float64, np.complex128])
def test_setitem_of_an_array_is_numpys_and_the_general_paths(dtype):
    # a basic key's view set from an array: by the fast path for an array
    # of the same dtype whose shape broadcasts and whose memory is not the
    # target's, else by the general path; either way NumPy's values, errors
    # and warnings
    for key in SET_KEYS:
        for shape in ((24,), (4, 6), (2, 3, 4)):
            n0 = np.arange(24).astype(dtype).reshape(shape)
            try:
                n0[key]
            except IndexError:
                continue
            for v in _array_values(n0, key, dtype):
                fast, slow, want = hnp.asarray(n0.copy()), hnp.asarray(n0.copy()), n0.copy()
                got = _set(fast, key, hnp.asarray(v.copy()))
                with general_path():
                    slow_got = _set(slow, key, hnp.asarray(v.copy()))
                assert got == _set(want, key, v) == slow_got, (key, shape, v.shape, v.dtype)
                np.testing.assert_array_equal(np.asarray(fast), want)
                np.testing.assert_array_equal(np.asarray(slow), want)


@pytest.mark.parametrize("src", [(slice(1, None), slice(None, -1)), (slice(None, -1), slice(1, None)),
                                 (slice(None), slice(None, None, -1)),
                                 (slice(0, 12), slice(12, 24))])
def test_setitem_from_the_arrays_own_memory_is_numpys(src):
    # NumPy copies a value that overlaps the view first (h[1:] = h[:-1]
    # shifts); the fast path leaves an overlapping value to the general path
    dst, val = src
    for shape_key in ((), (4, 6)):
        n = np.arange(24.0)
        h = hnp.asarray(n.copy())
        hv, nv = h[val], n[val]
        if shape_key:
            continue
        h[dst] = hv
        n[dst] = nv
        np.testing.assert_array_equal(np.asarray(h), n)
    m = np.arange(24.0).reshape(4, 6)
    hm = hnp.asarray(m.copy())
    hm[1:, :] = hm[:-1, :]
    m[1:, :] = m[:-1, :]
    np.testing.assert_array_equal(np.asarray(hm), m)
    hm[:, 0] = hm[0, :4]  # (a row read into a column of the same array)
    m[:, 0] = m[0, :4]
    np.testing.assert_array_equal(np.asarray(hm), m)


def test_setitem_of_an_array_takes_the_fast_path_and_views_see_the_write(monkeypatch):
    from hop.numpy import _indexing

    def general(*args):
        raise AssertionError("the general path ran")
    h, n = _grid(np.float64, (4, 6))
    rev, col = h[::-1], h[:, 2]
    row, block = hnp.arange(6.0) * 10, hnp.ones((2, 3))
    other = hnp.asarray(np.arange(24.0).reshape(4, 6) - 100)
    monkeypatch.setattr(_indexing, "setitem", general)
    h[:] = other
    h[0] = row
    h[1:3, ::2] = block
    h[3, :] = other[1]
    h[2, 1::2] = other[0, ::2]  # (a strided value)
    h[..., 5] = hnp.arange(4.0)
    monkeypatch.undo()
    want = np.arange(24.0).reshape(4, 6) - 100
    want[0] = np.arange(6.0) * 10
    want[1:3, ::2] = 1
    want[3, :] = (np.arange(24.0).reshape(4, 6) - 100)[1]
    want[2, 1::2] = (np.arange(24.0).reshape(4, 6) - 100)[0, ::2]
    want[..., 5] = np.arange(4.0)
    np.testing.assert_array_equal(np.asarray(h), want)
    assert rev.tolist() == want[::-1].tolist()  # (a copy-view reads again after the write)
    np.testing.assert_array_equal(np.asarray(col), want[:, 2])
    np.testing.assert_array_equal(n, want)
    monkeypatch.setattr(_indexing, "setitem", general)
    # (another dtype, the array's own memory, a view hop made as a copy, a
    # shape that does not broadcast, an array key)
    for key, v in ((0, hnp.arange(6.0, dtype=np.float32)), (0, h[1]), (slice(None), rev),
                   (0, row[::-1]), (0, hnp.arange(7.0)), ([0, 1], hnp.ones(6))):
        with pytest.raises(AssertionError, match="general path ran"):
            h[key] = v
    ro = hnp.broadcast_to(hnp.arange(6.0), (4, 6))
    with pytest.raises(AssertionError, match="general path ran"):
        ro[0] = row


FILL_VALUES = VALUES + [np.float64(2.5), np.int8(-3), 2.5 + 1j, "3", None, [1.0], (2,)]


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.uint32, np.int64,
                                   np.uint64, np.float16, np.float32, np.float64, np.complex64])
def test_fill_is_numpys_and_the_general_paths(dtype):
    # a.fill(v) is a C method: a[...] = v's fast path for a number it
    # converts exactly, else the Python method (NumPy's conversion of the
    # object); values, errors and warnings NumPy's
    for v in FILL_VALUES + [hnp.asarray(np.array(4, dtype)), hnp.arange(3.0), hnp.zeros(0),
                            hnp.ones((1, 1)), hnp.asarray(np.array([1 + 2j, 3]))]:
        for shape in ((6,), (2, 3), ()):
            n0 = np.arange(6).astype(dtype)[:int(np.prod(shape))].reshape(shape)
            fast, slow, want = hnp.asarray(n0.copy()), hnp.asarray(n0.copy()), n0.copy()
            nv = np.asarray(v) if isinstance(v, hnp.ndarray) else v
            got = _fill(fast, v)
            with general_path():
                slow_got = _fill(slow, v)
            assert got == _fill(want, nv) == slow_got, (v, shape)
            np.testing.assert_array_equal(np.asarray(fast), want)
            np.testing.assert_array_equal(np.asarray(slow), want)


def _fill(a, v):
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = a.fill(v)
            err = None if r is None else ("returned", r)
        except Exception as e:  # noqa: BLE001
            err = (type(e), str(e))
    return err, [(x.category, str(x.message)) for x in w]


def test_fill_takes_the_fast_path_and_views_see_it(monkeypatch):
    h, n = _grid(np.float32, (4, 6))
    rev = h[::-1]
    calls = []
    real = hnp.ndarray._assign
    monkeypatch.setattr(hnp.ndarray, "_assign", lambda *a: calls.append(1) or real(*a))
    h.fill(2.5)
    h[1].fill(7)
    h[:, ::2].fill(True)
    assert not calls
    h.fill(np.float32(3.5))  # (a NumPy scalar: the Python method)
    assert calls
    monkeypatch.undo()
    want = np.full((4, 6), 3.5, np.float32)
    np.testing.assert_array_equal(np.asarray(h), want)
    assert rev.tolist() == want[::-1].tolist()
    np.testing.assert_array_equal(n, want)
    ro = hnp.broadcast_to(hnp.arange(6.0), (4, 6))
    with pytest.raises(ValueError) as e:
        ro.fill(1.0)
    with pytest.raises(ValueError) as w:
        np.broadcast_to(np.arange(6.0), (4, 6)).fill(1.0)
    assert str(e.value) == str(w.value)
