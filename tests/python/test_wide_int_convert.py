"""The integer binary kernels and the common contiguous conversions at the
widest vectors the CPU has (runtime/elementwise.c's INT_ARITH and integer
comparisons, runtime/convert.c's wide_conversion: GCC target_clones, picked
at load time).  Each is exact or one IEEE rounding per element, so every
length (the vector bodies and their scalar tails), stride, broadcast and
overlap must give NumPy's bits, eagerly, through hop.numpy and in a compiled
plan (a fused group converts its operands per tile)."""
import os
import sys
import warnings

import numpy as np
import pytest

from budget import cases

import hop
import hop.numpy as hnp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from np_programs import np_mandelbrot  # noqa: E402

# the vector bodies at 16, 32 and 64 bytes, their tails, and the fused tiles
# (512 elements)
LENGTHS = [1, 2, 3, 7, 15, 16, 17, 31, 33, 63, 64, 65, 127, 511, 512, 513, 1025, 4099]
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
PAIRS = [("bool", "int32"), ("bool", "int64"), ("bool", "float32"), ("bool", "float64"),
         ("int8", "int32"), ("int8", "int64"), ("int8", "float32"),
         ("uint8", "int32"), ("uint8", "int64"), ("uint8", "float32"),
         ("int32", "int64"), ("int32", "float32"), ("int32", "float64"),
         ("float32", "float64"), ("float64", "float32")]


def values(dtype, n, seed):
    """n values of dtype that reach every corner its conversions round or
    saturate at: the extremes, zeros of both signs, nan payloads (quiet and
    signalling), infinities, subnormals, values past float32's range."""
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    if d == np.bool_:
        # bytes other than 0 and 1 read as true, as NumPy's casts read them
        return rng.integers(0, 4, n, dtype=np.uint8).view(np.bool_)
    if d.kind in "iu":
        info = np.iinfo(d)
        v = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
        edge = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=d)
    else:
        bits = rng.integers(0, 2 ** (8 * d.itemsize), n, dtype=np.uint64, endpoint=False)
        v = bits.astype("u%d" % d.itemsize).view(d)
        f = np.finfo(d)
        edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, f.max, -f.max, f.tiny,
                         f.tiny / 4, 1e39 if d == np.float64 else 3.0, 16777217.0], dtype=d)
        snan = np.array([0x7FA00001 if d == np.float32 else 0x7FF4000000000001],
                        dtype="u%d" % d.itemsize).view(d)
        edge = np.concatenate([edge, snan])
    k = min(n, len(edge))
    v[rng.permutation(n)[:k]] = edge[:k]
    return v


def same_bits(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def to(a, dst):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return a.astype(dst)


@pytest.mark.parametrize("src,dst", PAIRS)
def test_to_gives_numpys_bits(src, dst):
    for n in LENGTHS:
        a = values(src, n, n)
        same_bits(hop.asarray(a).to(getattr(hop, dst)).numpy(), to(a, dst))


@pytest.mark.parametrize("src,dst", PAIRS)
def test_strided_reversed_and_2d_sources(src, dst):
    a = values(src, 2 * 1031, 7)
    for view in (a[::2], a[::-1], a[1::3], a[:2 * 1030].reshape(2, 1030)[:, 1:],
                 a[:2 * 1030].reshape(1030, 2).T):
        same_bits(hop.asarray(view).to(getattr(hop, dst)).numpy(), to(view, dst))


def caught(f, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = f(*args)
    return r, [(type(m.message), str(m.message)) for m in w]


@pytest.mark.parametrize("src,dst", PAIRS)
def test_compiled_astype_gives_numpys_bits_and_warnings(src, dst):
    """Signalling nans and float32's overflow warn as NumPy's cast does."""
    f = hop.compile(lambda x: x.astype(dst))
    for n in (5, 513, 1025):
        a = values(src, n, n + 1)
        want, wwarn = caught(lambda x: x.astype(dst), a)
        got, gwarn = caught(f, a)
        same_bits(got, want)
        assert gwarn == wwarn


def test_overlapping_conversion_through_copyto():
    """A bool source and an int32 destination in one buffer: NumPy's
    answer, as if the source were read first."""
    buf = (np.arange(256) % 3 == 0).astype(np.uint8)
    want = buf.copy()
    np.copyto(want.view(np.int32)[1:40], want[:39].view(np.bool_), casting="unsafe")
    h = hnp.asarray(buf.copy())
    hnp.copyto(h.view(np.int32)[1:40], h[:39].view(np.bool_), casting="unsafe")
    same_bits(np.asarray(h), want)


OPS = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
       ("maximum", np.maximum), ("minimum", np.minimum), ("equal", np.equal),
       ("not_equal", np.not_equal), ("less", np.less), ("less_equal", np.less_equal),
       ("greater", np.greater), ("greater_equal", np.greater_equal)]
_int_ops = [(d, name) for d in INTS for name, _ in OPS]


@pytest.mark.parametrize("dtype,name", _int_ops[:cases(len(_int_ops))])
def test_integer_binary_ops_give_numpys_bits(dtype, name):
    """Wrapping arithmetic, both operand orders, a broadcast element on
    either side, and odd lengths, eagerly and through hop.numpy."""
    ref = dict(OPS)[name]
    op = getattr(hnp, name)
    for n in (3, 33, 513):
        a, b = values(dtype, n, n), values(dtype, n, 2 * n + 1)
        s = values(dtype, 1, n)[0]
        for x, y in ((a, b), (a, s), (s, b), (a[::-1], b)):
            with np.errstate(all="ignore"):
                want = ref(x, y)
            hx = hnp.asarray(x) if isinstance(x, np.ndarray) else x
            hy = hnp.asarray(y) if isinstance(y, np.ndarray) else y
            same_bits(op(hx, hy), np.asarray(want))


@pytest.mark.parametrize("dtype", INTS)
def test_integer_ops_in_place_on_overlapping_views(dtype):
    """out= a view of an operand shifted either way: NumPy's answer."""
    base = values(dtype, 1031, 3)
    for name in ("add", "multiply", "maximum", "subtract"):
        for x, y, o in ((slice(0, -1), slice(1, None), slice(1, None)),
                        (slice(1, None), slice(0, -1), slice(0, -1)),
                        (slice(0, -5), slice(0, -5), slice(5, None))):
            want = base.copy()
            with np.errstate(all="ignore"):
                getattr(np, name)(want[x], want[y], out=want[o])
            h = hnp.asarray(base.copy())
            getattr(hnp, name)(h[x], h[y], out=h[o])
            same_bits(np.asarray(h), want)


def test_mandelbrot_count_chain_compiled():
    """np_large's program: a bool mask converted and added to an int32 count
    20 times in fused groups, at an odd size that leaves tails in every
    tile and vector."""
    y, x = np.mgrid[-1.3:1.3:37j, -2.1:0.8:41j]
    cre, cim = x.astype(np.float32), y.astype(np.float32)
    want = np_mandelbrot(cre, cim)
    got = hop.compile(np_mandelbrot)(cre, cim)
    same_bits(got, want)
    assert len(np.unique(want)) > 5


def test_integer_chain_compiled_with_conversions():
    """count + mask, count * 3 - other, as int64 and float32: each fused
    step reads its operands converted per tile."""
    def f(c, m, k):
        return (c + m) * 3 - k, (c + m).astype(np.float32) + m, k.astype(np.int64) + m
    rng = np.random.default_rng(5)
    for n in (7, 513, 2049):
        c = rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int32)
        m = rng.random(n) < 0.5
        k = rng.integers(-100, 100, n, dtype=np.int8)
        want = f(c, m, k)
        got = hop.compile(f)(c, m, k)
        for g, w in zip(got, want):
            same_bits(g, w)
