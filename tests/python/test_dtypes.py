"""The small dtypes (int8, uint8, int16, uint16, uint32, uint64, float16) end to end:
constructors, NumPy zero-copy both ways, conversions, elementwise kernels
(eager and fused in a compiled plan), reductions and matmul, compared with
NumPy 1.24 where the op is the same (same-dtype arithmetic, astype, sums)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from budget import examples

import hop

NEW = ["int8", "uint8", "int16", "uint16", "uint32", "uint64", "float16"]
ALL = NEW + ["bool", "int32", "int64", "float32", "float64"]
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def hdt(name):
    return getattr(hop, name)


@pytest.mark.parametrize("name", NEW)
def test_small_dtypes_share_memory_with_numpy_both_ways(name):
    a = (np.arange(12) % 7).astype(name).reshape(3, 4)
    t = hop.asarray(a)
    assert t.dtype is hdt(name) and t.data_ptr() == a.ctypes.data
    back = np.asarray(t)
    assert back.dtype == np.dtype(name) and np.shares_memory(back, a)
    a[1, 2] = 5
    assert t.tolist()[1][2] == 5
    assert t.T.numpy().strides == a.T.strides
    assert np.dtype(hdt(name)) == np.dtype(name) and hdt(name).itemsize == np.dtype(name).itemsize
    assert memoryview(t).format == a.data.format


@pytest.mark.parametrize("name", NEW)
def test_constructors_and_python_values_of_small_dtypes(name):
    d = hdt(name)
    assert hop.zeros(2, dtype=d).tolist() == [0, 0]
    assert hop.ones(2, 3, dtype=name).dtype is d
    assert hop.full((2,), 3, dtype=d).tolist() == [3, 3]
    assert hop.arange(3, dtype=d).tolist() == [0, 1, 2]
    x = hop.tensor([1, 2], dtype=d)
    kind = float if name == "float16" else int
    assert all(type(v) is kind for v in x.tolist()) and type(x[0].item()) is kind
    assert repr(hop.tensor([1, 2], dtype=d)) == f"hop.tensor([1{'.' if kind is float else ''}, " \
        f"2{'.' if kind is float else ''}], dtype=hop.{name})"
    assert d.is_floating_point == (name == "float16")


def test_python_ints_out_of_a_small_dtypes_range_are_overflow_errors():
    with pytest.raises(OverflowError, match=r"^tensor\(\): 300 does not fit in uint8$"):
        hop.tensor([300], dtype=hop.uint8)
    with pytest.raises(OverflowError, match=r"^tensor\(\): -1 does not fit in uint64$"):
        hop.tensor([-1], dtype=hop.uint64)
    with pytest.raises(OverflowError, match=r"^tensor\(\): -129 does not fit in int8$"):
        hop.tensor([1, -129], dtype=hop.int8)
    big = hop.tensor([2**64 - 1, 2**63], dtype=hop.uint64)
    assert big.tolist() == [2**64 - 1, 2**63] and big.numpy()[0] == np.uint64(2**64 - 1)
    assert hop.tensor([65520.0], dtype=hop.float16).tolist() == [float("inf")]


# ------------------------------------------------------------- conversions


def _range(name):
    if name == "bool":
        return 0, 1
    if name == "float16":
        return -2048, 2048
    if name.startswith("float"):
        return -2**31, 2**31
    info = np.iinfo(name)
    return int(info.min), int(info.max)


@st.composite
def conversions(draw):
    src = draw(st.sampled_from(ALL))
    dst = draw(st.sampled_from(ALL))
    lo, hi = _range(src)
    if src.startswith("float"):
        vals = draw(st.lists(st.floats(lo, hi), min_size=1, max_size=20))
    else:
        vals = draw(st.lists(st.integers(lo, hi), min_size=1, max_size=20))
    with np.errstate(all="ignore"):
        a = np.array(vals).astype(src)
    if src.startswith("float") and dst != "bool" and not dst.startswith("float"):
        # NumPy leaves float -> integer undefined outside the target's range
        dlo, dhi = _range(dst)
        a = a[(a.astype(np.float64) >= dlo) & (a.astype(np.float64) <= dhi)]
    return a, dst


@settings(max_examples=examples(150), deadline=None)
@given(conversions())
def test_to_converts_like_numpy_astype(case):
    a, dst = case
    got = hop.asarray(a).to(hdt(dst)).numpy()
    with np.errstate(all="ignore"):
        want = a.astype(dst)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------ elementwise kernels

OPS = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "maximum": (hop.maximum, np.maximum),
    "minimum": (hop.minimum, np.minimum),
    "lt": (lambda a, b: a < b, np.less),
    "eq": (lambda a, b: a == b, np.equal),
}


@st.composite
def same_dtype_pairs(draw):
    name = draw(st.sampled_from(INTS))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
    elems = hnp.from_dtype(np.dtype(name))
    a = draw(hnp.arrays(name, shape, elements=elems))
    b = draw(hnp.arrays(name, shape[-1:], elements=elems))  # broadcast along the rows
    return a, b


# (arrays of up to 125 int64 elements overrun hypothesis's buffer now and
# then; an overrun is drawn again, but a run that met 20 overruns before 8
# valid examples failed the data_too_large health check: the sanitizer
# pass's share, 20 examples, did twice in two runs)
@settings(max_examples=examples(100), deadline=None,
          suppress_health_check=[HealthCheck.data_too_large, HealthCheck.too_slow])
@given(same_dtype_pairs(), st.sampled_from(sorted(OPS)))
def test_integer_kernels_wrap_like_numpy_eager_and_fused(pair, op):
    a, b = pair
    hop_fn, np_fn = OPS[op]
    with np.errstate(over="ignore"):
        want = np_fn(a, b)
    got = hop_fn(hop.asarray(a), hop.asarray(b)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    fused = hop.compile(lambda x, y: hop_fn(hop_fn(x, y), y) if op not in ("lt", "eq")
                        else hop_fn(x, y))
    with np.errstate(over="ignore"):
        want2 = np_fn(np_fn(a, b), b) if op not in ("lt", "eq") else want
    np.testing.assert_array_equal(fused(hop.asarray(a), hop.asarray(b)).numpy(), want2)


def test_float16_arithmetic_matches_numpy_bit_for_bit_eagerly_and_fused():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(1000) * 100).astype(np.float16)
    b = (rng.standard_normal(1000) * 3).astype(np.float16)
    ha, hb = hop.asarray(a), hop.asarray(b)
    for got, want in [(ha + hb, a + b), (ha - hb, a - b), (ha * hb, a * b), (ha / hb, a / b),
                      (ha * 0.1, a * np.float16(0.1)), (-ha, -a), (ha.abs(), np.abs(a)),
                      (hop.maximum(ha, hb), np.maximum(a, b))]:
        assert got.dtype is hop.float16
        assert got.numpy().tobytes() == want.tobytes()

    def chain(x, y):
        return ((x * y + x) / (y * y + 1) - x).relu()

    with np.errstate(over="ignore"):
        want = np.maximum(((a * b + a) / (b * b + np.float16(1)) - a), np.float16(0))
    compiled = hop.compile(chain)
    got = compiled(ha, hb).numpy()
    assert "Fused" in compiled.graphs[0].plan.dump()
    assert got.tobytes() == want.tobytes()
    assert chain(ha, hb).numpy().tobytes() == want.tobytes()


@pytest.mark.parametrize("fn", ["exp", "log", "sin", "cos", "tanh", "sqrt"])
def test_float16_math_is_within_one_ulp_of_numpy(fn):
    a = np.linspace(0.01, 8, 500).astype(np.float16)
    got = getattr(hop.asarray(a), fn)().numpy()
    want = getattr(np, fn)(a)
    assert got.dtype == np.float16
    ulps = np.abs(got.view(np.int16).astype(np.int32) - want.view(np.int16).astype(np.int32))
    assert ulps.max() <= 1


# ------------------------------------------------------ reductions, matmul


@pytest.mark.parametrize("name", ALL)
def test_sums_widen_like_numpy(name):
    a = (np.arange(24) * 37 % 251).astype(name).reshape(2, 3, 4)
    t = hop.asarray(a)
    want = a.sum(axis=(0, 2))
    got = t.sum(dim=(0, 2))
    assert got.numpy().dtype == want.dtype  # uint8 -> uint64, int8 -> int64, float16 stays
    if name == "float16":
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-3)
    else:
        np.testing.assert_array_equal(got.numpy(), want)
    if name != "bool":
        for red, npred in [("amax", np.max), ("amin", np.min)]:
            r = getattr(t, red)(dim=1)
            np.testing.assert_array_equal(r.numpy(), npred(a, axis=1))
            assert r.dtype is hdt(name)
        np.testing.assert_array_equal(t.argmax(dim=2).numpy(), a.argmax(axis=2))


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "uint16", "uint32", "uint64",
                                  "float16"])
def test_matmul_of_small_dtypes(name):
    a = (np.arange(12) % 5).astype(name).reshape(3, 4)
    b = (np.arange(8) % 3).astype(name).reshape(4, 2)
    got = (hop.asarray(a) @ hop.asarray(b)).numpy()
    assert got.dtype == np.dtype(name)
    np.testing.assert_array_equal(got, a @ b)
    compiled = hop.compile(lambda x, y: x @ y)
    np.testing.assert_array_equal(compiled(hop.asarray(a), hop.asarray(b)).numpy(), a @ b)
