"""Regressions of the hop.numpy fidelity gaps of issue #29 the forty-seventh
session closed, against NumPy 1.24, eagerly (hop.numpy arrays) and compiled
(hop.compile): einsum's out= casting, the .base of an argument and of an
order='F' reshape.  Each case compares the result's
type, dtype, shape and values, the exception's type and text, and the
caller's arrays after the call."""

import warnings
import weakref

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


def test_einsum_decisions_kept_for_out_do_not_skip_its_checks():
    # (einsum keeps its decisions per out='s dtype and shape: a call whose
    # out has another shape, checked by the write, leaves nothing that a
    # later call with the result's shape would take unchecked)
    a = hnp.asarray(np.ones((2, 2)))
    with pytest.raises(ValueError):
        hnp.einsum("ij,jk->ik", a, a, out=hnp.zeros(4, np.float32))
    for _ in range(2):
        o = hnp.zeros((2, 2), np.float32)
        with pytest.raises(TypeError, match="^Iterator requested dtype could not be cast from "
                                            "dtype\\('float64'\\) to dtype\\('float32'\\)"):
            hnp.einsum("ij,jk->ik", a, a, out=o)
        assert np.asarray(o).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    o = hnp.zeros((2, 2))
    assert hnp.einsum("ij,jk->ik", a, a, out=o) is o
    assert np.asarray(o).tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_einsum_out_of_another_shape_is_the_shape_error_first():
    # NumPy's iterator refuses out's shape before its dtype
    a = np.ones((2, 2))
    for lib, mk in ((np, np.asarray), (hnp, hnp.asarray)):
        with pytest.raises(ValueError):
            lib.einsum("ij,jk->ik", mk(a), mk(a), out=mk(np.zeros(4, np.float32)))


# ------------------------------------------------------------ .base of arguments, order='F'

_X = np.arange(6.0)
_BASE_PROGRAMS = [
    ("arg", lambda a: a.base),
    ("view", lambda a: a[1:].base),
    ("is_arg", lambda a: a[1:].base is a),
    ("is_none", lambda a: a.base is None),
    ("reshaped", lambda a: a.reshape(-1, 1).base),
]


@pytest.mark.parametrize("name", [n for n, _ in _BASE_PROGRAMS])
@pytest.mark.parametrize("which", ["owner", "view"])
def test_base_of_an_argument_is_the_callers(name, which):
    # the finding: compiled `a.base` of an argument was None and `a[1:].base`
    # was the argument, where NumPy's is the caller's array's base (x of
    # x[1:]: NumPy collapses a chain of views), so `a[1:].base is a` was
    # True for x[1:] compiled; a read of it ends the compiled part now
    fn = dict(_BASE_PROGRAMS)[name]
    x = np.arange(6.0)
    arg = x if which == "owner" else x[1:]
    want = fn(arg)
    f = hop.compile(fn)
    for _ in range(2):  # (a plan made for one layout is not reused for the other)
        got = f(arg)
        if isinstance(want, np.ndarray):
            assert got is want  # the caller's own array
        else:
            assert got is want or got == want
    h = hnp.asarray(x)
    harg = h if which == "owner" else h[1:]
    got = fn(harg)
    if isinstance(want, np.ndarray):
        assert got is (h if want is x else harg)
    else:
        assert got == want


def test_base_of_an_argument_under_hop_trace_is_an_unsupported_error():
    with pytest.raises(hop.UnsupportedError, match="the .base of an argument"):
        hop.trace(lambda a: a[1:].base, hnp.asarray(np.arange(3.0)))


def _fortran_base(r):
    b = r.base
    return (type(b).__name__, b.shape, b.strides, b.flags.owndata, b.base is None,
            b.flags.f_contiguous, b.flags.c_contiguous, np.asarray(b).tolist())


@pytest.mark.parametrize("shape", [(6,), (3, 2), (6, 1)])
def test_base_of_an_order_f_reshape_that_copies_is_the_fortran_copy(shape):
    # the finding: the .base of `a.reshape(n, order='F')` of a C-ordered a
    # (a copy) was the C-ordered copy of a.T, (3, 2), where NumPy's is a's
    # own copy in Fortran order, (2, 3) with strides (8, 16), owning its
    # memory; compiled, the read of it ends the compiled part
    a = np.arange(6.0).reshape(2, 3)
    want = _fortran_base(a.reshape(shape, order="F"))
    assert want[1:3] == ((2, 3), (8, 16))
    assert _fortran_base(hnp.asarray(a.copy()).reshape(shape, order="F")) == want
    for fn in (lambda x: x.reshape(shape, order="F").base,
               lambda x: (x * 1).reshape(shape, order="F").base):
        b = hop.compile(fn)(a.copy())
        assert (type(b).__name__, b.shape, b.strides, b.flags.owndata, b.base is None,
                np.asarray(b).tolist()) == want[:5] + want[7:]


# ------------------------------------------------------------ resize and weak references

_WEAK_TEXT = ("cannot resize an array that references or is referenced\nby another array in "
              "this way. Use the np.resize function.")


def _resize_outcome(mk, size, refcheck, weak):
    a = mk(3.0)
    r = weakref.ref(a) if weak else None
    try:
        a.resize(size, refcheck=refcheck)
    except ValueError as e:
        return "ValueError", str(e), np.asarray(a).tolist()
    finally:
        del r
    return "ok", np.asarray(a).tolist()


@pytest.mark.parametrize("size", [5, 3, 2])
@pytest.mark.parametrize("refcheck", [True, False])
@pytest.mark.parametrize("weak", [True, False])
def test_resize_of_an_array_with_a_weak_reference_is_numpys(size, refcheck, weak):
    # the finding: hop.numpy resized an array a weak reference pointed at,
    # where NumPy refuses (refcheck or not) to change its size
    want = _resize_outcome(np.arange, size, refcheck, weak)
    assert _resize_outcome(hnp.arange, size, refcheck, weak) == want
    if weak and size != 3:
        assert want[:2] == ("ValueError", _WEAK_TEXT)


def test_resize_does_not_count_hops_own_weak_references():
    # a guard holds an object weakly (_guards.Guard, _reads.HopRef): not a
    # reference NumPy's array would have, so the array stays resizable
    from hop._guards import Guard, Source
    a = hnp.arange(3.0)
    g = Guard(Source("global", {}, "a", "a"), "id", a)
    assert g.expected is a and weakref.getweakrefcount(a) == 1
    a.resize(5)
    assert np.asarray(a).tolist() == [0.0, 1.0, 2.0, 0.0, 0.0]


def _resize_after_a_decision(a):
    x = a * 1.0
    if a.sum() > 2:
        x.resize((5, 1))
    return x


def test_compiled_resize_after_a_decision_on_the_data_is_numpys():
    # (the forty-eighth session: runs eagerly, tests/python/test_compile_global_resize.py)
    want = _resize_after_a_decision(np.arange(3.0))
    got = hop.compile(_resize_after_a_decision)(np.arange(3.0))
    assert type(got) is np.ndarray and got.shape == (5, 1)
    assert got.tolist() == want.tolist()


_CAPTURED = None


def test_a_captured_ndarray_stays_resizable_after_a_compiled_call():
    # (the forty-eighth session: the cache guards it by id and layout, holding
    # no reference NumPy's refcheck counts; tests/python/test_compile_global_resize.py)
    global _CAPTURED
    _CAPTURED = np.arange(3.0)
    _CAPTURED.resize(4)  # NumPy's refcheck: the module's reference and the call's
    f = hop.compile(lambda a: a * _CAPTURED)
    f(np.ones(4))
    _CAPTURED.resize(5)
    assert _CAPTURED.tolist() == [0.0, 1.0, 2.0, 0.0, 0.0]


# ------------------------------------------------------------ advanced keys, overlapping values

_OVERLAP_WRITES = {
    "reversed view": lambda a: a[1:].__setitem__(([0, -1],), a[1:][::-1]),
    "self by a permutation": lambda a: a.reshape(-1).__setitem__([5, 0, 1, 2, 3, 4, 6, 7, 8, 9,
                                                                  10, 11], a.reshape(-1)),
    "repeated index": lambda a: a.reshape(-1).__setitem__(
        np.array([0, 0, 1, 5, 5, 2]), a.reshape(-1)[::-1][:6]),
    "mask": lambda a: a.__setitem__(a > 5, a.reshape(-1)[::-1][:6]),
    "2-d keys": lambda a: a.__setitem__((np.array([2, 0]), np.array([1, 3])), a[::-1, 1][:2]),
    "hop index array": lambda a: a[:, ::-1].__setitem__((slice(None), hnp.asarray([0, 2]) if
                                                         isinstance(a, hnp.ndarray) else
                                                         np.array([0, 2])), a[:, 1:3]),
}


@pytest.mark.parametrize("name", list(_OVERLAP_WRITES))
def test_an_advanced_key_with_a_value_over_the_array_is_numpys_element_order(name):
    # the finding (a strict xfail of test_numpy_alias_programs.py): eager
    # hop.numpy read a value over the array's own memory whole (its copy of
    # a reversed view) where NumPy assigns element by element in the
    # index's order, reading what it wrote
    write = _OVERLAP_WRITES[name]
    want = np.arange(12.0).reshape(3, 4)
    write(want)
    x = np.arange(12.0).reshape(3, 4)
    h = hnp.asarray(x)
    write(h)
    assert np.asarray(h).tolist() == want.tolist() and x.tolist() == want.tolist()


# ------------------------------------------------------------ left: byte order and metadata

_SWAPPED = np.arange(3.0).astype(">f8")
_BYTE_ORDER = {  # NumPy keeps a dtype of the other byte order in the arrays it makes of it
    "zeros": lambda xp: xp.zeros(2, dtype=">f8"),
    "array": lambda xp: xp.array([1, 2], dtype=">i4"),
    "asarray": lambda xp: xp.asarray(_SWAPPED),
    "astype": lambda xp: xp.arange(3.0).astype(">f8"),
}


@pytest.mark.xfail(strict=True, raises=(AssertionError, hop.DTypeError), reason=(
    "open (docs/RELIABILITY.md): hop computes in native byte order; hop.numpy's creation "
    "functions give a native dtype where NumPy keeps '>f8' (astype and view raise DTypeError)"))
@pytest.mark.parametrize("name", list(_BYTE_ORDER))
def test_a_dtype_of_the_other_byte_order_is_kept_as_numpys(name):
    want = _BYTE_ORDER[name](np)
    got = _BYTE_ORDER[name](hnp)
    assert want.dtype.byteorder == ">"
    assert (got.dtype, got.dtype.byteorder) == (want.dtype, want.dtype.byteorder)
    assert np.asarray(got).tolist() == want.tolist()


@pytest.mark.xfail(strict=True, raises=(AssertionError, hop.DTypeError), reason=(
    "open (docs/RELIABILITY.md): hop's dtypes carry no metadata; hop.numpy's creation "
    "functions raise DTypeError for a dtype with metadata (dropped it silently before s48)"))
def test_a_dtypes_metadata_is_kept_by_creation_functions():
    dt = np.dtype("f4", metadata={"unit": "m"})
    assert np.zeros(2, dtype=dt).dtype.metadata == {"unit": "m"}
    assert hnp.zeros(2, dtype=dt).dtype.metadata == {"unit": "m"}


_KEEPS_SWAPPED = {  # (s48: each made the native array, silently, before)
    "full": lambda xp: xp.full(2, 1.5, ">f8"), "eye": lambda xp: xp.eye(2, dtype=">f8"),
    "identity": lambda xp: xp.identity(2, ">i4"), "array_of": lambda xp: xp.array(_SWAPPED),
    "asarray_of": lambda xp: xp.asarray(_SWAPPED),
    "asanyarray_of": lambda xp: xp.asanyarray(_SWAPPED[::-1]),
    "ascontiguousarray_of": lambda xp: xp.ascontiguousarray(_SWAPPED),
    "asfortranarray_of": lambda xp: xp.asfortranarray(_SWAPPED),
    "copy_of": lambda xp: xp.copy(_SWAPPED),
    "zeros_like_of": lambda xp: xp.zeros_like(_SWAPPED),
    "full_like_of": lambda xp: xp.full_like(_SWAPPED, 2), "asarray_given": lambda xp: xp.asarray(
        np.arange(2.0), dtype=">f8")}


@pytest.mark.parametrize("make", [lambda xp: xp.zeros(2, dtype=">f8"),
                                  lambda xp: xp.ones(2, dtype=">i4"),
                                  lambda xp: xp.array([1, 2], dtype=">i4"),
                                  lambda xp: xp.arange(3, dtype=">f8")] +
                         list(_KEEPS_SWAPPED.values()),
                         ids=["zeros", "ones", "array", "arange"] + list(_KEEPS_SWAPPED))
def test_a_creation_dtype_of_the_other_byte_order_is_a_clear_error(make):
    # the finding: the array was made native (float64 where NumPy's is
    # '>f8'), silently another dtype; until hop keeps NumPy's dtype beside
    # its native tensor (the strict xfail above) it is astype's DTypeError;
    # compiled, NumPy's code makes NumPy's array
    want = make(np)
    assert want.dtype.byteorder == ">"
    with pytest.raises(hop.DTypeError, match="is in the other byte order, which NumPy keeps "
                                             "in the arrays it makes of it"):
        make(hnp)
    got = hop.compile(lambda x: make(np), fullgraph=False)(np.zeros(1))
    assert type(got) is np.ndarray and got.dtype.str == want.dtype.str
    assert got.tolist() == want.tolist()


_MD = np.dtype("f4", metadata={"unit": "m"})
_KEEPS_METADATA = {
    "zeros": lambda xp, x: xp.zeros(2, _MD), "ones": lambda xp, x: xp.ones(2, dtype=_MD),
    "empty": lambda xp, x: xp.empty(0, _MD), "full": lambda xp, x: xp.full(2, 1, _MD),
    "eye": lambda xp, x: xp.eye(2, dtype=_MD), "arange": lambda xp, x: xp.arange(2, dtype=_MD),
    "array": lambda xp, x: xp.array([1, 2], dtype=_MD), "astype": lambda xp, x: x.astype(_MD)}


@pytest.mark.parametrize("name", list(_KEEPS_METADATA))
def test_a_creation_dtype_with_metadata_is_a_clear_error(name):
    # NumPy keeps a dtype's metadata in the array it makes; hop.numpy's
    # arrays have none: eagerly hop's DTypeError (the C fast path's table
    # took such a dtype as the plain one, equal to it), compiled NumPy's
    # array (a creation's NumPy array was held as a hop array, dropping it)
    make = _KEEPS_METADATA[name]
    x = np.arange(2.0)
    want = make(np, x)
    assert want.dtype.metadata == {"unit": "m"}
    with pytest.raises(hop.DTypeError, match=r"NumPy dtype float32 has metadata \{'unit': 'm'\}, "
                                             r"which NumPy keeps in the arrays it makes of it"):
        make(hnp, hnp.asarray(x))
    got = hop.compile(lambda x: make(np, x))(x.copy())
    assert type(got) is np.ndarray and got.dtype.metadata == {"unit": "m"}
    assert got.tolist() == want.tolist()


# ---------------------------------------- s49: functions that keep an argument's dtype

_B = np.arange(6.0).reshape(2, 3).astype(">f8")
_KEPT_BY = {  # NumPy's functions whose result keeps a '>f8' argument's dtype (_direct.KEEPS_ORDER)
    "array_split": lambda xp, a: xp.array_split(a, 2), "asarray_chkfinite": lambda xp, a:
    xp.asarray_chkfinite(a), "atleast_1d": lambda xp, a: xp.atleast_1d(a),
    "atleast_2d": lambda xp, a: xp.atleast_2d(a), "atleast_3d": lambda xp, a: xp.atleast_3d(a),
    "broadcast_arrays": lambda xp, a: xp.broadcast_arrays(a, a[:1]),
    "broadcast_to": lambda xp, a: xp.broadcast_to(a, (2, 2, 3)),
    "compress": lambda xp, a: xp.compress([True, False], a, 0),
    "delete": lambda xp, a: xp.delete(a, 0, 1), "diag": lambda xp, a: xp.diag(a),
    "diagflat": lambda xp, a: xp.diagflat(a[0]), "diagonal": lambda xp, a: xp.diagonal(a),
    "dsplit": lambda xp, a: xp.dsplit(a[..., None], 1), "einsum": lambda xp, a:
    xp.einsum("ij->ji", a), "expand_dims": lambda xp, a: xp.expand_dims(a, 0),
    "extract": lambda xp, a: xp.extract(a > 1, a), "flip": lambda xp, a: xp.flip(a),
    "fliplr": lambda xp, a: xp.fliplr(a), "flipud": lambda xp, a: xp.flipud(a),
    "gradient": lambda xp, a: xp.gradient(a[0]), "hsplit": lambda xp, a: xp.hsplit(a, 3),
    "insert": lambda xp, a: xp.insert(a, 1, 9.0), "meshgrid": lambda xp, a: xp.meshgrid(a[0], a[1]),
    "moveaxis": lambda xp, a: xp.moveaxis(a, 0, 1), "msort": lambda xp, a: xp.msort(a),
    "nan_to_num": lambda xp, a: xp.nan_to_num(a), "pad": lambda xp, a: xp.pad(a, 1),
    "partition": lambda xp, a: xp.partition(a, 1), "ravel": lambda xp, a: xp.ravel(a),
    "real_if_close": lambda xp, a: xp.real_if_close(a), "repeat": lambda xp, a: xp.repeat(a, 2),
    "require": lambda xp, a: xp.require(a), "reshape": lambda xp, a: xp.reshape(a, (3, 2)),
    "roll": lambda xp, a: xp.roll(a, 1), "rollaxis": lambda xp, a: xp.rollaxis(a, 1),
    "rot90": lambda xp, a: xp.rot90(a), "setdiff1d": lambda xp, a: xp.setdiff1d(a, [1.0]),
    "sort": lambda xp, a: xp.sort(a), "split": lambda xp, a: xp.split(a, 2),
    "squeeze": lambda xp, a: xp.squeeze(a[None]), "swapaxes": lambda xp, a: xp.swapaxes(a, 0, 1),
    "take": lambda xp, a: xp.take(a, [0, 4]), "take_along_axis": lambda xp, a:
    xp.take_along_axis(a, np.zeros((2, 1), np.intp), 1), "tile": lambda xp, a: xp.tile(a, 2),
    "transpose": lambda xp, a: xp.transpose(a), "trim_zeros": lambda xp, a: xp.trim_zeros(a[0]),
    "unique": lambda xp, a: xp.unique(a), "vsplit": lambda xp, a: xp.vsplit(a, 2),
    "reshape_keyword": lambda xp, a: xp.reshape(a=a, newshape=6)}


def test_the_kept_by_list_is_hop_numpys():
    from hop.numpy import _direct
    assert set(_KEPT_BY) - {"reshape_keyword"} == _direct.KEEPS_ORDER


@pytest.mark.parametrize("name", list(_KEPT_BY))
def test_a_function_keeping_a_swapped_arguments_dtype_is_a_clear_error(name):
    # the finding: hop.numpy's reshape, transpose, sort, take, ... of a
    # '>f8' ndarray gave a native float64 array (values right, dtype not
    # NumPy's '>f8'), silently; flip/fliplr/flipud raised AttributeError
    # (of any ndarray).  Eagerly it is hop's DTypeError now; compiled, the
    # call with such an argument runs by NumPy (NumPy's '>f8' result).
    make = _KEPT_BY[name]
    want = make(np, _B)
    wants = want if isinstance(want, (list, tuple)) else [want]
    assert all(w.dtype.str == ">f8" for w in wants)
    what = name.split("_keyword")[0]
    with pytest.raises(hop.DTypeError, match=f"hop.numpy: {what}: NumPy dtype >f8 is in the other "
                                             f"byte order, which NumPy keeps in the arrays it "
                                             f"makes of it; hop computes in native order"):
        make(hnp, _B)
    got = hop.compile(lambda x: make(np, x), fullgraph=False)(_B.copy())
    gots = got if isinstance(got, (list, tuple)) else [got]
    assert type(got) is type(want) and len(gots) == len(wants)
    for g, w in zip(gots, wants):
        assert type(g) is np.ndarray and g.dtype.str == ">f8" and g.tolist() == w.tolist()
    # the same call of a native array computes (flip's AttributeError before)
    native = _B.astype("<f8")
    want = make(np, native)
    got = make(hnp, native)
    wants = want if isinstance(want, (list, tuple)) else [want]
    gots = got if isinstance(got, (list, tuple)) else [got]
    for g, w in zip(gots, wants):
        assert g.dtype == w.dtype and np.asarray(g).tolist() == w.tolist()


def test_an_index_array_of_the_other_byte_order_is_taken_by_its_values():
    # only the array whose dtype the result keeps is checked
    want = np.take(np.arange(3.0), np.array([2, 0], ">i8"))
    got = hnp.take(np.arange(3.0), np.array([2, 0], ">i8"))
    assert got.dtype == want.dtype == np.float64 and np.asarray(got).tolist() == [2.0, 0.0]
    got = hnp.compress(np.array([True, False, True]).astype("?"), _B.ravel().astype("<f8"))
    assert np.asarray(got).tolist() == [0.0, 2.0]


_MDT = np.dtype("f8", metadata={"unit": "m"})
_WITH_METADATA = {  # NumPy keeps an argument's dtype metadata, ufuncs' results too
    "add": lambda xp, a: xp.add(a, 1), "sqrt": lambda xp, a: xp.sqrt(a),
    "sum_axis": lambda xp, a: xp.sum(a, axis=0), "reshape": lambda xp, a: xp.reshape(a, 6),
    "asarray": lambda xp, a: xp.asarray(a), "copy": lambda xp, a: xp.copy(a),
    "zeros_like": lambda xp, a: xp.zeros_like(a), "take": lambda xp, a: xp.take(a, [1, 2]),
    "negative": lambda xp, a: xp.negative(a), "getitem": lambda xp, a: xp.asarray(a)[:, 1:]}


@pytest.mark.parametrize("name", list(_WITH_METADATA))
def test_an_argument_whose_dtype_has_metadata_is_numpys_or_a_clear_error(name):
    # the finding: hop.numpy of an ndarray whose dtype has metadata (asarray,
    # copy, zeros_like through the C fast path; add, sum, reshape, ...) gave
    # arrays without it, silently, and so did hop.compile's plans, which took
    # such an argument (equal to float64) as float64; eagerly it is hop's
    # DTypeError now, compiled NumPy's answer (the call runs eagerly),
    # also after a trace of a plain argument (the call's fast path)
    make = _WITH_METADATA[name]
    a = np.arange(6.0).reshape(2, 3).astype(_MDT)
    want = make(np, a)
    assert want.dtype.metadata == {"unit": "m"}
    with pytest.raises(hop.DTypeError, match=r"NumPy dtype float64 has metadata \{'unit': 'm'\}, "
                                             r"which NumPy keeps in the arrays it makes of it"):
        make(hnp, a)
    f = hop.compile(lambda x: make(np, x), fullgraph=False)
    plain = np.arange(6.0).reshape(2, 3)
    assert f(plain).dtype.metadata is None and f(plain).dtype.metadata is None
    for i in range(2):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            got = f(a.copy())
        assert [str(w.message) for w in seen] == [] if i else [
            "hop.compile: <lambda>: a call with an argument whose dtype has metadata "
            "({'unit': 'm'}: NumPy keeps it in its results; hop's dtypes have none) runs "
            "eagerly (explain() counts them)"]
        assert type(got) is np.ndarray and got.dtype.metadata == {"unit": "m"}
        assert got.tolist() == want.tolist()


def test_a_captured_array_whose_dtype_has_metadata_is_numpys():
    g = np.arange(3.0).astype(_MDT)
    f = hop.compile(lambda x: x + np.sqrt(g))
    with pytest.warns(RuntimeWarning, match=r"has a dtype with metadata \(\{'unit': 'm'\}\)"):
        got = f(np.ones(3))
    assert got.tolist() == (np.ones(3) + np.sqrt(g)).tolist()


_HISTOGRAMDD_STR_BINS = {  # NumPy's histogramdd takes no estimator: its errors, type and text
    "auto": lambda xp, s: xp.histogramdd(s, bins="auto"),
    "fd": lambda xp, s: xp.histogramdd(s, bins="fd"),
    "list": lambda xp, s: xp.histogramdd(s, bins=["auto", 3]),
    "tuple": lambda xp, s: xp.histogramdd(s, bins=("sturges", "sturges")),
    "one_d": lambda xp, s: xp.histogramdd(s[:, 0], bins="a"),
    "histogram2d": lambda xp, s: xp.histogram2d(s[:, 0], s[:, 1], bins="auto"),
    "histogram2d_pair": lambda xp, s: xp.histogram2d(s[:, 0], s[:, 1], bins=["auto", 2])}


@pytest.mark.parametrize("name", list(_HISTOGRAMDD_STR_BINS))
def test_histogramdd_string_bins_are_numpys_errors(name):
    # the finding: eager hop.numpy's histogramdd took ["auto", 3] and
    # ("sturges", "sturges") as histogram's estimators (a histogram where
    # NumPy raises TypeError), bins="fd" of 2-d data was a ValueError of its
    # own, and the dimension error's text was not NumPy's
    from numpy_diff import check_ns
    s = np.random.default_rng(0).random((20, 2))
    check_ns(_HISTOGRAMDD_STR_BINS[name], s, text=True)
