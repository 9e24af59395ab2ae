"""Eager hop.numpy's einsum (its decisions kept per subscripts, shapes and
dtypes: _products._EINSUM_PLANS), vstack, hstack, stack (NumPy's own
composition by the fast paths of indexing and concatenate) and outer
(multiply of the raveled views), each against NumPy: values, dtype, type,
memory order, views, and errors (type and text), on a first call and on the
calls after it, and with the fast paths off (the general path's answer)."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop.numpy import _eager_shape, _products


def _same(got, want, layout):
    """got (hop.numpy's) is NumPy's want: dtype, shape, type and (layout)
    memory order exactly, values exactly but for a float contraction's rounding
    (hop's matmul sums in another order than NumPy's einsum loop)."""
    g = np.asarray(got)
    assert g.dtype == np.asarray(want).dtype
    assert g.shape == np.shape(want)
    if g.dtype.kind == "f":
        np.testing.assert_allclose(g, want, rtol=1e-6 if g.dtype == np.float32 else 1e-13)
    else:
        np.testing.assert_array_equal(g, want)
    assert isinstance(got, hnp.ndarray)
    if isinstance(want, np.ndarray):
        assert got.ndim == want.ndim
        if not layout:
            return
        assert got.flags.c_contiguous == want.flags.c_contiguous
        assert got.flags.f_contiguous == want.flags.f_contiguous
        assert got.strides == want.strides
    else:  # a NumPy scalar's: hop.numpy's scalar
        assert got.ndim == 0 and np.isscalar(want)


def _outcome(fn, *args, **kwargs):
    try:
        return "ok", fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared with NumPy's
        return type(e), str(e)


def _check(call, np_args, repeat=3, layout=True):
    """call(module, *args) by NumPy and by hop.numpy (repeat times: the first
    decides, the others reuse), with and without the eager fast paths: every
    hop.numpy answer the same, bit for bit, and NumPy's (_same), or NumPy's
    error."""
    want = _outcome(call, np, *np_args)
    first = None
    for on in (True, False):
        old = _eager_shape.fast(on)
        try:
            for _ in range(repeat):
                got = _outcome(call, hnp, *[hnp.asarray(a) if isinstance(a, np.ndarray) else a
                                            for a in np_args])
                if want[0] != "ok":
                    assert got == want
                    continue
                assert got[0] == "ok", got
                _same(got[1], want[1], layout)
                if first is None:
                    first = np.array(got[1])
                np.testing.assert_array_equal(np.array(got[1]), first, strict=True)
        finally:
            _eager_shape.fast(old)


rng = np.random.default_rng(7)
f64 = rng.standard_normal((3, 4))
f32 = rng.standard_normal((4, 5)).astype(np.float32)
i64 = rng.integers(-5, 5, (4,))
b = rng.random((4,)) > 0.5
sq = rng.standard_normal((4, 4))
bat = rng.standard_normal((2, 3, 4))
bat2 = rng.standard_normal((2, 4, 5))

EINSUM = [
    ("i,i", (i64, i64)),
    ("i,i->", (f64[0], f64[1])),
    ("ij,j->i", (f64, f64[0])),
    ("ij,jk", (f64, f32)),
    ("ij,jk->ki", (f64, f32)),
    ("ii", (sq,)),
    ("ii->i", (sq,)),
    ("ij->", (f64,)),
    ("ij->i", (f64,)),
    ("bij,bjk->bik", (bat, bat2)),
    ("...j,j", (bat, f64[0])),
    ("i,j", (b, b)),
    ("i,i", (b, b)),
    ("ij,jk,kl", (f64, sq, f32)),
    ("iij,j", (np.ones((3, 3, 4)), f64[0])),
    # errors, each call: NumPy's type and text
    ("ij,j", (f64, f64[:, 0])),
    ("ii", (f64,)),
    ("i,i,i", (i64, i64)),
    ("ij->k", (f64,)),
    ("i", (f64,)),
]


# (_EINSUM_LAYOUT: not asserted for einsum: NumPy's result is in its
# iterator's K order (Fortran order for "ij,jk->ki", a strided view for
# "ii->i"), hop's is C-ordered, as before the kept decisions)


@pytest.mark.parametrize("subs,args", EINSUM, ids=[s for s, _ in EINSUM])
def test_einsum_as_numpy_on_every_call(subs, args):
    _check(lambda m, *a: m.einsum(subs, *a), args, layout=False)  # (_EINSUM_LAYOUT)


@pytest.mark.parametrize("kw", [{"dtype": np.float32}, {"dtype": "float64", "casting": "same_kind"},
                                {"dtype": np.int32}, {"dtype": np.int32, "casting": "unsafe"},
                                {"dtype": bool, "casting": "unsafe"},  # (operands cast to bool)
                                {"optimize": True},
                                {"optimize": "nonsense"}, {"casting": "no"}])
def test_einsum_keywords_as_numpy_on_every_call(kw):
    _check(lambda m, a, c: m.einsum("ij,jk", a, c, **kw), (f64, f32), layout=False)


def _decisions():
    """How many distinct decisions einsum keeps (an eager call of exact
    hop.numpy arrays keeps its decision under a second, shorter key too,
    beside its result's layout: (decision, layout))."""
    return len({id(v[0]) if len(v) == 2 else id(v) for v in _products._EINSUM_PLANS.values()})


def test_einsum_keeps_one_decision_per_subscripts_shapes_and_dtypes():
    _products._EINSUM_PLANS.clear()
    x, y = hnp.asarray(f64), hnp.asarray(f64[0])
    for _ in range(3):
        hnp.einsum("ij,j->i", x, y)
    assert _decisions() == 1 and len(_products._EINSUM_PLANS) == 2
    hnp.einsum("ij,j->i", hnp.asarray(f32[:, :4].T.copy()), hnp.asarray(f32[0, :4]))
    assert _decisions() == 2
    with pytest.raises(ValueError):
        hnp.einsum("ij,j->i", x, hnp.asarray(f64[:, 0]))  # a call that raised keeps nothing
    assert _decisions() == 2
    np.einsum("ij,j->i", x, y)  # NumPy's function on hop.numpy arrays: the same decision
    hnp.einsum("ij,j->i", f64, f64[0])  # NumPy arrays: the general key's
    assert _decisions() == 2 and len(_products._EINSUM_PLANS) == 4


def test_einsum_by_the_short_key_decides_nothing_again(monkeypatch):
    # the second call of exact hop.numpy arrays reads neither the subscripts
    # nor the operands' checks: it runs the kept decision, with the answer of
    # the first call bit for bit; a call with keywords takes the general key
    _products._EINSUM_PLANS.clear()
    a, c, ct = hnp.asarray(f64), hnp.asarray(f32), hnp.asarray(f32.T.copy())
    cases = (("ij,jk", a, c), ("ij,jk->ki", a, c), ("ij,kj->ik", a, ct), ("i,i", c[0], c[1]))
    first = [np.asarray(hnp.einsum(*case)) for case in cases]

    def parse(*args):
        raise AssertionError("parsed again")
    monkeypatch.setattr(_products, "_einsum_parse", parse)
    for case, want in zip(cases, first):
        got = hnp.einsum(*case)
        assert type(got) is hnp.ndarray and got.ndim == want.ndim
        np.testing.assert_array_equal(np.asarray(got), want, strict=True)
    for call in (lambda: hnp.einsum("ij,jk", a, c, dtype=np.float64),
                 lambda: hnp.einsum("ij,jk", a, c, optimize=True)):
        with pytest.raises(AssertionError, match="parsed again"):
            call()


def test_einsum_one_matmul_forms_are_one_matmul_op():
    # 'ij,jk', 'ij,j->i', 'i,i' and a batch of matrices trace to one matmul
    # of the operands as they are; a permuted output or operand adds its step
    def ops(fn, *args):
        gm = hop.trace(fn, *[hop.tensor(x) for x in args])
        return [n.target for n in gm.graph.nodes if n.op == "call_op"]
    for subs, args in (("ij,jk", (f64, f64.T)), ("ij,j->i", (f64, f64[0])),
                       ("i,i", (f64[0], f64[0])), ("bij,bjk->bik", (bat, bat2))):
        assert ops(lambda p, q: hnp.einsum(subs, p, q), *args) == ["matmul"], subs
    assert "permute" in ops(lambda p, q: hnp.einsum("ij,kj->ik", p, q), f64, f64)


def test_einsum_view_after_a_copy_of_the_same_key():
    # a list operand is a copy; the array of the same shape and dtype after
    # it is NumPy's view (a write reaches it), not the kept copy's answer
    lst = [[1.0, 2.0], [3.0, 4.0]]
    for m in (np, hnp):
        r = m.einsum("ij->ji", lst)
        a = m.asarray(np.array(lst))
        v = m.einsum("ij->ji", a)
        v[0, 1] = 9.0
        assert a[1, 0] == 9.0, m
        np.testing.assert_array_equal(np.asarray(r), np.array(lst).T)


def test_einsum_traced_as_eager():
    x, y = f64, f32
    cf = hop.compile(lambda a, c: np.einsum("ij,jk->ik", a, c))
    eager = np.asarray(hnp.einsum("ij,jk->ik", hnp.asarray(x), hnp.asarray(y)))
    for _ in range(3):
        got = cf(x, y)
        np.testing.assert_array_equal(got, eager, strict=True)
        np.testing.assert_allclose(got, np.einsum("ij,jk->ik", x, y), rtol=1e-13)
    assert cf.eager_calls == 0


JOINS = [
    ("hstack 1-d", lambda m, a, c: m.hstack([a[0], c[0]]), (f64, f64)),
    ("hstack 2-d", lambda m, a, c: m.hstack((a, a)), (f64, f64)),
    ("hstack mixed", lambda m, a, c: m.hstack([a[0], c[0]]), (f64, i64[None])),
    ("hstack 0-d", lambda m, a, c: m.hstack([a[0, 0], c[0]]), (f64, f64)),
    ("hstack fortran", lambda m, a, c: m.hstack([a, c]), (np.asfortranarray(f64),) * 2),
    ("hstack bad", lambda m, a, c: m.hstack([a, c]), (f64, f32)),
    ("vstack 1-d", lambda m, a, c: m.vstack([a[0], c[1]]), (f64, f64)),
    ("vstack 2-d", lambda m, a, c: m.vstack([a, c]), (f64, f64)),
    ("vstack mix 1-2", lambda m, a, c: m.vstack([a, c[0]]), (f64, f64)),
    ("vstack 3-d", lambda m, a, c: m.vstack([a, c]), (bat, bat)),
    ("vstack bad", lambda m, a, c: m.vstack([a, c]), (f64, f32)),
    ("vstack bool", lambda m, a, c: m.vstack((a, c)), (b, b)),
    ("stack 0", lambda m, a, c: m.stack([a, c]), (f64, f64)),
    ("stack 1", lambda m, a, c: m.stack([a, c], 1), (f64, f64)),
    ("stack -1", lambda m, a, c: m.stack([a, c], axis=-1), (f64, f64)),
    ("stack 1-d", lambda m, a, c: m.stack((a[0], c[2])), (f64, f64)),
    ("stack axis out", lambda m, a, c: m.stack([a, c], 3), (f64, f64)),
    ("stack shapes", lambda m, a, c: m.stack([a, c]), (f64, f64[:2])),
    ("stack dtypes", lambda m, a, c: m.stack([a, c]), (f64[0], i64)),
    ("stack transposed", lambda m, a, c: m.stack([a.T, c.T]), (f64, f64)),
    ("stack transposed 1", lambda m, a, c: m.stack([a.T, c.T], 1), (f64, f64)),
    ("stack transposed -1", lambda m, a, c: m.stack([a.T, c.T], -1), (f64, f64)),
    ("stack fortran", lambda m, a, c: m.stack([a, c], 1), (np.asfortranarray(f64),) * 2),
    ("stack one transposed", lambda m, a, c: m.stack([a.T, c]), (f64, np.ones((4, 3)))),
    ("stack transposed cast", lambda m, a, c: m.stack([a.T, c.T]), (f64, i64[:3, None] * f64)),
    ("stack transposed ints", lambda m, a, c: m.stack([a.T, c.T]), (i64[None], i64[None])),
    ("stack 3-d transposed", lambda m, a, c: m.stack([a.transpose(2, 0, 1), c.transpose(2, 0, 1)],
                                                     2), (bat, bat)),
    ("stack row views", lambda m, a, c: m.stack([a[:, ::2].T, c[:, 1::2].T]), (f64, f64)),
    ("outer", lambda m, a, c: m.outer(a, c), (f64[0], f64[1])),
    ("outer 2-d", lambda m, a, c: m.outer(a, c), (f64, f32)),
    ("outer ints", lambda m, a, c: m.outer(a, c), (i64, i64)),
    ("outer bool", lambda m, a, c: m.outer(a, c), (b, b)),
    ("outer mixed", lambda m, a, c: m.outer(a, c), (b, f32[0])),
    ("outer 0-d", lambda m, a, c: m.outer(a.sum(), c), (f64, f64[0])),
]


# (joins whose answer is not NumPy's yet, as strict xfails: none since
# stack's general path lays out as concatenate of the views does)
_KNOWN = {}
_RAISES = ("hstack bad", "vstack bad", "stack axis out", "stack shapes")


def _params(names_ok):
    return [pytest.param(*j[1:], id=j[0], marks=[pytest.mark.xfail(strict=True, reason=_KNOWN[j[0]])]
                         if j[0] in _KNOWN else []) for j in JOINS if names_ok(j[0])]


@pytest.mark.parametrize("call,args", _params(lambda n: True))
def test_joins_as_numpy(call, args):
    _check(call, args)


@pytest.mark.parametrize("call,args", _params(lambda n: n not in _RAISES and n not in _KNOWN))
def test_joins_compiled_as_numpy(call, args):
    cf = hop.compile(lambda a, c: call(np, a, c))
    for _ in range(2):
        got, want = cf(*args), call(np, *args)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert cf.eager_calls == 0


LINSPACE = [(0, 1, 16), (0.0, 1.0, 7), (-3, 10**15 + 1, 5), (2**53 + 1, 2**53 + 9, 4),
            (True, 5, 3), (1.5, -2.25, 11), (-0.0, 0.0, 3), (0, 1, 1), (0, 1, 0), (3, 3, 6),
            (2**63 - 1, 2**62, 3), (-2**63, 0, 3)]


@pytest.mark.parametrize("start,stop,num", LINSPACE)
@pytest.mark.parametrize("kw", [{}, {"endpoint": False}, {"dtype": np.int32}, {"retstep": True},
                                {"dtype": np.float32}])
def test_linspace_of_python_numbers_as_numpy(start, stop, num, kw):
    # Python bounds take float64 without NumPy's dtype probes; the answer is
    # NumPy's bit for bit, as the probed path's (a 0-d array bound)
    want = np.linspace(start, stop, num, **kw)
    for got in (hnp.linspace(start, stop, num, **kw),
                hnp.linspace(hnp.asarray(np.float64(start)), stop, num, **kw)):
        if kw.get("retstep"):
            (got, gstep), (w, wstep) = got, want
            np.testing.assert_array_equal(np.asarray(gstep), wstep, strict=True)
        else:
            w = want
        assert got.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(got), w, strict=True)


def test_numpys_function_on_hop_arrays_and_strings_calls_hop_numpys_once(monkeypatch):
    # ndarray.__array_function__ (np_eager.c) calls hop.numpy's function
    # itself for positional arguments that are all hop.numpy arrays or
    # strings: once, with _kind=ndarray, its result (None too) or its error
    # as it is; other calls reach it through _funcs.array_function as before
    from hop.numpy import _funcs
    calls = []

    def fake(*args, _kind=None, **kwargs):
        calls.append((len(args), _kind, kwargs))
        if args[0] == "raise":
            raise KeyError("from the implementation")
        return None
    monkeypatch.setitem(_funcs.FUNCS, np.einsum, fake)
    a = hnp.asarray(f64[0])
    assert np.einsum("i,i", a, a) is None
    with pytest.raises(KeyError, match="from the implementation"):
        np.einsum("raise", a)
    np.einsum("i,i", a, a, optimize=False)  # a keyword: the general path
    np.einsum("i,i", a, f64[0])  # a NumPy array: the general path
    assert calls == [(3, hnp.ndarray, {}), (2, hnp.ndarray, {}),
                     (3, hnp.ndarray, {"optimize": False}), (3, hnp.ndarray, {})]
    monkeypatch.undo()
    np.testing.assert_allclose(np.einsum("i,i", a, a), np.einsum("i,i", f64[0], f64[0]),
                               rtol=1e-13)
