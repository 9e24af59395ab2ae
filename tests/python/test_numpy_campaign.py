"""A differential campaign on hop.numpy (issue #29, the first rule): NumPy
programs drawn by hypothesis, run by NumPy 1.24 and compiled by hop.compile
(numpy_diff.check: values, dtype, shape, ndarray or NumPy scalar or Python
type, the exception's exact type, and the caller's arrays after the call,
a raising call's too).  What test_numpy_hypothesis draws less of: the
dtypes hop added late (uint16, uint32, complex, float16), big-endian and
non-contiguous arguments, 0-d and empty arrays; scalars from reductions
with lists and tuples, and their type(); writes into an argument or a
local through views, slices, masks and integer arrays followed by an
error NumPy raises (the write must stay); reductions with dtype=, where=,
initial= and the nan* family; casts between every pair of dtypes."""

import warnings

import numpy as np
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from budget import examples
from numpy_diff import check

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                       HealthCheck.data_too_large,
                                                       HealthCheck.filter_too_much])


def _elements(dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return st.booleans()
    if dt.kind == "f":
        return st.one_of(st.floats(-40, 40, width=min(dt.itemsize * 8, 64)),
                         st.sampled_from([0.0, -0.0, np.nan, np.inf, -2.5, 0.5]))
    if dt.kind == "c":
        part = st.one_of(st.floats(-9, 9, width=32), st.sampled_from([0.0, np.nan, -1.5]))
        return st.builds(complex, part, part)
    info = np.iinfo(dt)
    return st.one_of(st.integers(max(info.min, -30), min(info.max, 30)),
                     st.sampled_from([info.min, info.max]))


@st.composite
def arrays(draw, shape=None, dtype=None, layout=True):
    """An argument: any dtype and shape (0-d and empty too), sometimes
    big-endian, unaligned or a non-contiguous view of a bigger array."""
    dt = np.dtype(draw(st.sampled_from(DTYPES)) if dtype is None else dtype)
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    how = draw(st.sampled_from(["plain", "big-endian", "strided", "transposed", "unaligned"])) \
        if layout else "plain"
    if how == "strided" and len(shape):
        big = draw(hnp.arrays(dt, shape[:-1] + (2 * shape[-1],), elements=_elements(dt)))
        return big[..., ::2]
    a = draw(hnp.arrays(dt, shape, elements=_elements(dt)))
    if how == "big-endian" and dt.itemsize > 1:
        return a.astype(dt.newbyteorder(">"))
    if how == "transposed" and a.ndim >= 2:
        return np.ascontiguousarray(a.T).T
    if how == "unaligned" and dt.itemsize > 1:
        return _unaligned(a)
    return a


def _unaligned(a):
    """A writable copy of a at an odd address."""
    buf = np.empty(a.nbytes + 1, np.uint8)
    u = buf[1:].view(a.dtype).reshape(a.shape)
    u[...] = a
    return u


def _typed(r):
    """r with the type of each value, compared too (a NumPy scalar, a
    Python number, a list)."""
    return r, type(r).__name__


@settings(max_examples=examples(60), **_SETTINGS)
@given(st.data())
def test_scalars_from_arrays_with_sequences_and_numbers(data):
    # A NumPy scalar (a reduction, an element, a comparison) with a list, a
    # tuple or a Python number on either side: the value and its type.
    x = data.draw(arrays(shape=(3,), layout=False))
    scalar = data.draw(st.sampled_from(["a.sum()", "a[1]", "a.max()", "a.mean()",
                                        "np.float32(a[0])", "a.sum() > 1", "a.argmax()"]))
    other = data.draw(st.sampled_from(["[1, 2, 3]", "(1.5, -2, 0)", "[True, False, True]",
                                       "2", "-1.5", "True", "[[1], [2]]", "[1j, 2, 0]", "3j",
                                       "(1-2j)"]))
    op = data.draw(st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<", "==", "&", ">>",
                                    "@"]))
    left = data.draw(st.booleans())
    # (`3j == np.float64(1)` is Python's bool, hop's np.bool_: hop.numpy's
    # __eq__ cannot tell it from `np.float64(1) == 3j`; docs/ARCHITECTURE.md)
    assume(not (left and "j" in other and op == "==" and "[" not in other))
    src = f"{scalar} {op} {other}" if left else f"{other} {op} {scalar}"
    f = eval(f"lambda a: {src}", {"np": np})  # noqa: S307 (drawn from the lists above)
    # (a float sum has NumPy's bits, its order being NumPy's; a complex64
    # one, which hop adds in double, is within 1e-5 of NumPy's)
    check(lambda a: _typed(f(a)), x, rtol=1e-5 if x.dtype.kind == "c" else None)


@settings(max_examples=examples(80), **_SETTINGS)
@given(st.data())
def test_writes_through_views_then_numpys_errors(data):
    # A write into the argument or a local through a view, a slice, a mask
    # or an integer array; sometimes then an error NumPy raises (an index
    # out of range, shapes that do not broadcast, a forbidden cast): the
    # write must be in the caller's array as eagerly, and the error NumPy's.
    x = data.draw(arrays(shape=data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1,
                                                          max_side=4))))
    target = data.draw(st.sampled_from(["y", "w"]))
    through = data.draw(st.sampled_from(["", "[::-1]", ".T", ".reshape(-1)", "[..., :1]",
                                         "[None]"]))
    key = data.draw(st.sampled_from(["...", "0", "-1", "1:", "::2", "y > 0", "[0, 0]",
                                     "np.array([-1])"]))
    upd = data.draw(st.sampled_from(["= 2", "+= 1", "*= 3", "-= y.flat[0]", "//= 2",
                                     "= np.ones(1)"]))
    then = data.draw(st.sampled_from(["", "y[7, 7]", "y + np.ones(5)", "y.reshape(7)",
                                      "np.zeros(1, np.int8).__iadd__(0.5)", "y.sum(axis=3)"]))
    lines = ["m = None"]
    if target == "w":
        lines.append("w = y.copy()")
    lines.append(f"v = {target}{through}")
    if key == "y > 0":
        key = f"{target}{through} > 0"  # a mask of the view's shape
    lines.append(f"v[{key}] {upd}")
    if then:
        lines.append(f"m = {then}")
    lines.append(f"return {target}, m")
    src = "def f(y):\n" + "".join(f"    {ln}\n" for ln in lines)
    ns = {"np": np}
    exec(src, ns)  # noqa: S102 (drawn from the lists above)
    check(lambda y: (ns["f"](y)), x)


REDUCTIONS = ["sum", "prod", "max", "min", "mean", "var", "std", "nansum", "nanmax", "nanmin",
              "nanmean", "nanvar", "nanstd", "any", "all"]


@settings(max_examples=examples(100), **_SETTINGS)
@given(st.data())
def test_reductions_with_dtype_where_initial(data):
    x = data.draw(arrays(shape=data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0,
                                                          max_side=3))))
    name = data.draw(st.sampled_from(REDUCTIONS))
    kw = {}
    if data.draw(st.booleans()):
        kw["axis"] = data.draw(st.sampled_from([None, 0, -1, (0,), 1]))
    if data.draw(st.booleans()):
        kw["keepdims"] = True
    if name not in ("any", "all") and data.draw(st.booleans()):
        kw["dtype"] = data.draw(st.sampled_from([np.int8, np.uint16, np.int64, np.float32,
                                                 np.float64, np.complex64]))
    if name in ("sum", "prod", "max", "min", "nanmax", "nanmin") and data.draw(st.booleans()):
        kw["initial"] = data.draw(st.sampled_from([-5, 0, 2.5, True]))
    if name not in ("any", "all") and data.draw(st.booleans()):
        kw["where"] = data.draw(arrays(shape=x.shape[-1:], dtype=np.bool_, layout=False))
    if name in ("var", "std", "nanvar", "nanstd") and data.draw(st.booleans()):
        kw["ddof"] = 1
    check(lambda a: _typed(getattr(np, name)(a, **kw)), x, rtol=2e-3)


@settings(max_examples=examples(80), **_SETTINGS)
@given(st.data())
def test_casts_and_elementwise_of_every_dtype(data):
    # astype between every pair (complex to integers, floats to uint64 out
    # of range), a ufunc with out= of another dtype, and integer overflow.
    x = data.draw(arrays())
    to = np.dtype(data.draw(st.sampled_from(DTYPES)))
    what = data.draw(st.sampled_from(["astype", "out", "overflow", "unary", "item"]))
    if what == "astype":
        check(lambda a: (a.astype(to)), x)
    elif what == "out":
        casting = data.draw(st.sampled_from(["same_kind", "unsafe"]))

        def f(a):
            out = np.zeros(a.shape, to)
            r = np.add(a, 1, out=out, casting=casting)
            return r is out, out
        check(f, x)
    elif what == "overflow":
        k = data.draw(st.sampled_from(["a * 100", "a + 250", "-a", "a << 3", "abs(a)",
                                       "a // -1", "a ** 2", "np.square(a)"]))
        check(eval(f"lambda a: _typed({k})", {"np": np, "_typed": _typed}), x)  # noqa: S307
    elif what == "unary":
        u = data.draw(st.sampled_from(["np.round(a)", "np.angle(a)", "np.sort(a)",
                                       "np.argsort(a)", "a.real", "np.conj(a)", "np.sign(a)",
                                       "np.isnan(a)", "np.sqrt(a)", "np.cumsum(a)"]))
        f = eval(f"lambda a: _typed({u})", {"np": np, "_typed": _typed})  # noqa: S307
        check(lambda a: (f(a)), x, rtol=1e-3)
    else:
        check(lambda a: _typed(a.item(0) if a.size else None), x)


# Arguments no plan takes (hop.compile runs such a call eagerly): NumPy's
# answer depends on their byte order, alignment or class.
def _subclass(kind, a):
    if kind == "matrix":
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.matrix(a.reshape(a.shape[0], -1) if a.ndim >= 2 else np.atleast_2d(a))
    return np.ma.masked_array(a, mask=np.arange(a.size).reshape(a.shape) % 2 == 0)


def _flags(r):
    """What a result is beyond its values: its byte order, alignment,
    writability, and its class (numpy_diff compares the rest)."""
    if isinstance(r, tuple):
        return tuple(_flags(x) for x in r)
    if isinstance(r, np.ndarray):
        return (r.dtype.str, r.flags.aligned, r.flags.writeable, type(r).__name__)
    return type(r).__name__


@settings(max_examples=examples(80), **_SETTINGS)
@given(st.data())
def test_unusual_arguments_after_a_plain_call_are_numpys(data):
    # One compiled function called with a plain array, then with the same
    # values big-endian, unaligned, as an np.matrix or a masked array (so
    # the plan's guards must turn the second call away): the result's
    # values, dtype with its byte order, class, alignment and writability,
    # and the caller's array after an in-place update, are NumPy's.
    kind = data.draw(st.sampled_from(["big-endian", "unaligned", "matrix", "masked"]))
    dt = np.dtype(data.draw(st.sampled_from([np.int16, np.int32, np.int64, np.float32,
                                             np.float64, np.complex128])))
    x = data.draw(arrays(shape=(2, 3), dtype=dt, layout=False))
    if kind == "big-endian":
        odd = x.astype(dt.newbyteorder(">"))
    elif kind == "unaligned":
        odd = _unaligned(x)
    else:
        odd = _subclass(kind, x)
    src = data.draw(st.sampled_from([
        "a", "a.copy()", "a.T", "a[0]", "a[:, 1:]", "a.reshape(-1)", "a.ravel()",
        "a.astype(a.dtype)", "a.view(np.uint8)", "a.dtype", "a.tobytes()", "a + 1", "a * a",
        "a.sum()", "a[0, 1]", "np.sort(a, axis=None)", "a.flatten()", "a[a.real > 0]"]))
    inplace = data.draw(st.booleans())
    ns = {"np": np}
    exec("def f(a):\n" + ("    a += 1\n" if inplace else "") + f"    return {src}\n", ns)  # noqa: S102
    # (the flags are read after the call: in the function they are Python
    # effects hop.compile would run eagerly)
    check(ns["f"], calls=[(x,), (odd,)], post=lambda r: (r, _flags(r)))
