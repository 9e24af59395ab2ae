"""Regressions of the hop.numpy fidelity gaps of issue #29 the fifty-first
session closed, against NumPy 1.24: what CPython's buffer consumers get of a
hop.numpy array (bytes(a), a.data), eagerly; each compares with NumPy's own
answer or exception text; and NumPy's dispatch of hop.Tensors under
hop.compile (its floating-point warnings and errors, as eager's).  (einsum's
layouts: test_numpy_port_einsum.py.)"""

import hashlib
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp


def _bytes_outcome(x):
    try:
        return bytes(x)
    except Exception as e:  # noqa: BLE001 (compared)
        return type(e), str(e)


def _arrays(m):
    return [m.arange(3), m.arange(3.0), m.arange(6).reshape(2, 3).T, m.arange(5)[::-1],
            m.array(2), m.array(2.5), m.array(True), m.array(-1), m.arange(3)[1],
            m.arange(3.0)[1], m.zeros((0, 3)), m.array([1 + 2j], np.complex64)]


@pytest.mark.parametrize("i", range(12))
def test_bytes_of_an_array_is_numpys(i):
    # bytes() iterated a hop.numpy array (its class exports no buffer):
    # bytes(hnp.arange(3)) was b'\x00\x01\x02' where NumPy gives its 24 bytes;
    # an integer 0-d array or scalar is a count of zero bytes, as CPython
    # makes of NumPy's (its __index__ first)
    assert _bytes_outcome(_arrays(hnp)[i]) == _bytes_outcome(_arrays(np)[i])


def test_data_is_a_memoryview_of_numpys_memory():
    # a.data of a view hop holds as a copy (a[::-1]) was a memoryview of the
    # copy: a write through it was lost
    for m in (np, hnp):
        a = m.arange(6.0)
        d = a[::-1].data
        d[0] = 9.0
        assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 9.0] and d.strides == (-8,)
        assert m.broadcast_to(m.arange(3.0), (2, 3)).data.readonly
        assert m.arange(3.0)[1].data.readonly  # (a NumPy scalar's: a copy)
        assert a[::2].data.tolist() == [0.0, 2.0, 4.0]


def test_memoryview_of_an_array_is_cpythons_type_error():
    # Python 3.11 has no Python-level buffer export (PEP 688 is 3.12's): a
    # memoryview is a.data's, memoryview(a) CPython's TypeError
    with pytest.raises(TypeError, match="a bytes-like object is required"):
        memoryview(hnp.arange(3.0))
    assert memoryview(hnp.arange(3.0).data).tolist() == [0.0, 1.0, 2.0]


# ------------------------------------ NumPy's dispatch of hop.Tensors, compiled

G = np.array([0.0, 1.0, 2.0])


def _messages(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(*args)
    return repr(np.asarray(r).tolist()), [str(m.message) for m in w]


@pytest.mark.parametrize("src", ["np.multiply(a, G)", "G * a", "np.multiply(a, b)", "a * b"])
def test_numpy_dispatch_of_tensors_warns_and_raises_as_eager_when_compiled(src):
    # `np.multiply(t, G)` (NumPy's dispatch of a hop.Tensor to hop.numpy)
    # warns "invalid value encountered in multiply" eagerly: the compiled
    # plan's hop.Tensor calls checked no floating-point flags (nor NumPy's
    # errstate), on every call; `t * G` (hop.Tensor's own operator) warns in
    # neither
    f = eval(f"lambda a, b: {src}")
    a, b = hop.tensor(np.array([np.inf, 1.0, 2.0])), hop.tensor(G)
    want = _messages(f, a, b)
    compiled = hop.compile(f)
    for _ in range(3):
        assert _messages(compiled, a, b) == want
    with np.errstate(all="raise"):
        raises = src != "a * b"
        for call in (f, compiled):
            if raises:
                with pytest.raises(FloatingPointError, match="invalid value encountered"):
                    call(a, b)
            else:
                assert np.asarray(call(a, b)).tolist()[1:] == [1.0, 4.0]


# ------------------------------------------- buffers of arguments, compiled

def _ndarray_over(x):
    v = np.ndarray((2,), np.float64, buffer=x, offset=8, strides=(16,))
    v[0] = 7.0
    return v * 2


def _memoryview_of(x):
    return memoryview(x * 2).tolist()


def _hash_of(x):
    return hashlib.sha1(x).hexdigest()


@pytest.mark.parametrize("fn", [_ndarray_over, _memoryview_of, _hash_of])
def test_a_buffer_of_an_argument_is_eagers_when_compiled(fn):
    # np.ndarray(shape, buffer=x) of an ndarray argument x (and memoryview,
    # hashlib of one) raised `TypeError: a bytes-like object is required,
    # not 'NumpyArg'` from hop.compile where eager answers: the trace gave
    # the library hop.numpy's array, which exports no buffer; eager decides
    compiled = hop.compile(fn)
    for xs in ([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]):
        x, y = np.array(xs), np.array(xs)
        want = fn(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = compiled(y)
        assert repr(np.asarray(got).tolist() if isinstance(got, np.ndarray) else got) == \
            repr(np.asarray(want).tolist() if isinstance(want, np.ndarray) else want)
        assert np.array_equal(x, y)


# ----------------------------------------------- open, found by the campaign

@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "open (docs/RELIABILITY.md): hop's float-to-int conversion raises no invalid flag for "
    "NaN, inf or a value out of range, so a ufunc's dtype=, a reduction's dtype= and a "
    "compiled astype warn of nothing where NumPy warns"))
def test_a_float_to_int_cast_inside_a_ufunc_or_reduction_warns_as_numpy():
    x = np.array([np.inf, 1.0], np.float32)
    for fn in (lambda y: np.add(y, 1, dtype=np.int8, casting="unsafe"),
               lambda y: np.sum(y, dtype=np.int64)):
        assert _messages(fn, hnp.asarray(x)) == _messages(fn, x)


@pytest.mark.parametrize("dt", [np.float16, np.float32])
def test_clip_of_a_negative_zero_keeps_numpys_sign(dt):
    # (found by the campaign) NumPy's float16 clip keeps -0.0 against a
    # bound 0 (its half maximum keeps the first of equal operands), its
    # float32 one gives +0.0; hop's clip gave +0.0 for both, eagerly (the
    # fast path too) and compiled
    a = np.array([-0.0, 0.0, -5.0, 5.0, -0.0], dt)
    for lo, hi in ((0, 3), (-0.0, 0.0), (np.float16(0), 3)):
        want = np.signbit(np.clip(a, lo, hi)).tolist()
        assert np.signbit(np.asarray(hnp.clip(hnp.asarray(a), lo, hi))).tolist() == want
        compiled = hop.compile(lambda x: np.clip(x, lo, hi))
        compiled(a.copy())
        assert np.signbit(compiled(a.copy())).tolist() == want
