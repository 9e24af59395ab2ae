"""The contents guard of an environment ndarray a HOP body reads (issue 28
in bodies: hop.compile(hop.grad(f)), cond/map bodies, eager hop.grad)
compares the array's memory in C (_C._np_same_contents) with the snapshot
_C._np_contents took when traced, allocating nothing per call.  It must
answer exactly what comparing (layout, a.tobytes()) answered: a view's
elements only, never the bytes between them (a[::2], a[:, ::2], a.T,
np.broadcast_to, a[::-1]); a 0-size array by its layout; -0.0 and 0.0, and
two NaN payloads, as different (a byte compare: 1 / W and np.copysign tell
them apart, so a value compare would be wrong).  An array of Python objects
has no bytes to compare (they are addresses: an object changed inside keeps
them), so its guard passes only for the call that traced the plan."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop import _C, _guards


def _reference(a):
    """What the guard compared before the C helper: layout and tobytes."""
    return _guards._layout(a), a.tobytes()


def _views(base):
    """Views of a 2-D base array of every layout the walk distinguishes."""
    return {
        "C-contiguous": base,
        "F-contiguous": base.T,
        "rows a[::2]": base[::2],
        "columns a[:, ::2]": base[:, ::2],
        "reversed a[::-1, ::-1]": base[::-1, ::-1],
        "a[1:, 1:3]": base[1:, 1:3],
        "a[:, 2] (one strided axis)": base[:, 2],
        "broadcast_to": np.broadcast_to(base[0], (3,) + base[0].shape),
        "0-d": base[1, 1, ...],
        "size-1 axes": base[1:2, None, 2:3],
        "0-size": base[:0],
        "3-d a[::2, ::-1, 1::2]": base.reshape(3, 2, 5)[::2, ::-1, 1::2],
        "3-d rows a[:, ::-1, :]": base.reshape(3, 2, 5)[:, ::-1, :],
    }


@pytest.mark.parametrize("dtype", ["f8", "f4", "i2", "c16"])
@pytest.mark.parametrize("name", sorted(_views(np.zeros((6, 5)))))
def test_np_same_contents_answers_what_comparing_tobytes_answered(name, dtype):
    rng = np.random.default_rng(7)
    base = (rng.standard_normal((6, 5)) * 100).astype(dtype)
    view = _views(base)[name]
    snap, ref = _C._np_contents(view), _reference(view)
    assert type(snap) is bytes and _C._np_same_contents(view, snap)
    raw = base.view(np.uint8).reshape(-1)
    # each byte of the base changed in turn: a change the view sees fails
    # the guard, one between its elements does not (as tobytes)
    for i in range(raw.size):
        raw[i] ^= 0x5A
        assert _C._np_same_contents(view, snap) == (_reference(view) == ref), i
        raw[i] ^= 0x5A
    assert _C._np_same_contents(view, snap)


def test_np_same_contents_tells_a_changed_layout_and_other_objects():
    a = np.arange(12.0)
    snap = _C._np_contents(a)
    b = a.copy()
    assert not _C._np_same_contents(b, snap)  # (equal values, other memory)
    a.shape = (3, 4)
    assert not _C._np_same_contents(a, snap)
    a.shape = (12,)
    assert _C._np_same_contents(a, snap)
    a.flags.writeable = False
    assert not _C._np_same_contents(a, snap)
    assert not _C._np_same_contents(a.tolist(), snap)
    assert not _C._np_same_contents(a, snap[:-1]) and not _C._np_same_contents(a, snap + b"\0")
    assert not _C._np_same_contents(a, None)
    with pytest.raises(TypeError, match="2 arguments"):
        _C._np_same_contents(a)
    e = np.empty((0, 3))
    assert _C._np_same_contents(e, _C._np_contents(e))
    e.shape = (3, 0)
    assert not _C._np_same_contents(e, _C._np_contents(np.empty((0, 3))))


def test_np_same_contents_compares_bytes_not_values():
    a = np.array([0.0, np.nan, 1.0])
    snap = _C._np_contents(a)
    a[0] = -0.0  # == 0.0, other bytes
    assert not _C._np_same_contents(a, snap)
    a[0] = 0.0
    assert _C._np_same_contents(a, snap)
    a.view(np.uint64)[1] ^= np.uint64(1)  # another NaN payload
    assert np.isnan(a[1]) and not _C._np_same_contents(a, snap)


def test_np_contents_leaves_objects_subclasses_and_big_arrays_right():
    assert _C._np_contents(np.array([1.0, None], dtype=object)) is None
    assert _C._np_contents(np.zeros(2, dtype=[("a", "f8"), ("b", "O")])) is None
    assert _C._np_contents(np.ma.masked_array([1.0, 2.0])) is None
    assert _C._np_contents([1.0]) is None
    assert not _C._np_same_contents(np.array([1.0, None], dtype=object), b"")
    big = np.arange(1_000_000.0)
    snap = _C._np_contents(big)
    assert len(snap) == len(_C._np_layout(big)) + big.nbytes
    assert snap.endswith(big.tobytes())
    big[-1] = 0.0
    assert not _C._np_same_contents(big, snap)
    big[-1] = 999_999.0
    assert _C._np_same_contents(big, snap)
    strided = big[::3]
    snap = _C._np_contents(strided)
    assert snap.endswith(strided.tobytes())
    big[1] = -1.0  # (between strided's elements)
    assert _C._np_same_contents(strided, snap)
    big[-1] = -1.0
    assert not _C._np_same_contents(strided, snap)


# --------------------------------------------------- through hop.compile

BASE = np.arange(1.0, 13.0)
VIEW = BASE[::3]
Z = np.array([0.0, 1.0])
OBJ = np.empty(2, dtype=object)


@pytest.fixture(autouse=True)
def _reset():
    BASE[...] = np.arange(1.0, 13.0)
    Z[...] = [0.0, 1.0]
    OBJ[0], OBJ[1] = [1.0, 2.0], [3.0, 4.0]
    yield


def _grad_of(make_w):
    def loss(x):
        return (x * make_w()).sum()
    return hop.grad(loss)


def test_a_compiled_grad_over_a_strided_view_retraces_for_its_elements_only():
    g = _grad_of(lambda: np.sin(VIEW))
    cf = hop.compile(g, fullgraph=True)
    x = hnp.asarray(np.ones(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert np.asarray(cf(x)).tolist() == np.sin(VIEW).tolist()
        BASE[1] = 50.0  # between VIEW's elements: no retrace
        assert np.asarray(cf(x)).tolist() == np.sin(VIEW).tolist() and cf.recompiles == 0
        BASE[3] = 50.0  # VIEW[1]
        assert np.asarray(cf(x)).tolist() == np.sin(VIEW).tolist() and cf.recompiles == 1
    assert cf.eager_calls == 0


def _reciprocal():
    with np.errstate(divide="ignore"):
        return 1.0 / Z


def test_a_compiled_grad_tells_minus_zero_from_zero():
    # 1 / W: inf where W is 0.0, -inf where it is -0.0 (equal values)
    g = _grad_of(_reciprocal)
    cf = hop.compile(g)
    x = hnp.asarray(np.ones(2))
    assert np.asarray(cf(x)).tolist() == [np.inf, 1.0]
    Z[0] = -0.0
    assert np.asarray(cf(x)).tolist() == [-np.inf, 1.0] == np.asarray(g(x)).tolist()
    assert cf.recompiles == 1
    Z[0] = -0.0
    cf(x)
    assert cf.recompiles == 1


def test_a_compiled_grad_retraces_for_another_nan_payload_and_not_for_the_same():
    g = _grad_of(lambda: Z * 2)
    cf = hop.compile(g)
    x = hnp.asarray(np.ones(2))
    Z[0] = np.nan
    cf(x)
    Z[0] = np.nan
    cf(x)
    assert cf.recompiles == 0
    Z.view(np.uint64)[0] ^= np.uint64(1)  # a NaN still, other bytes (safe: the same answer)
    got = np.asarray(cf(x))
    assert np.isnan(got[0]) and got[1] == 2.0 and cf.recompiles == 1


def test_a_body_reading_an_array_of_python_objects_sees_a_change_inside_an_object():
    # (its bytes are the lists' addresses, which appending to a list or
    # setting its item keeps: the byte compare kept the traced value)
    g = _grad_of(lambda: np.array(OBJ[0] + OBJ[1]))
    cf = hop.compile(g)
    x = hnp.asarray(np.ones(4))
    for k in range(11):
        OBJ[0][0] = 10.0 * k
        want = [10.0 * k, 2.0, 3.0, 4.0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # (the recompile limit's)
            assert np.asarray(cf(x)).tolist() == want
        assert np.asarray(g(x)).tolist() == want  # (hop.grad eagerly: hop's own compile)
    # every call retraced, up to the recompile limit; then eagerly
    assert cf.recompiles == 8 and cf.eager_calls == 2
    assert "global 'OBJ' holds Python objects (a HOP body read it" in cf.explain()
    assert "hop cannot compare their contents: every call retraces" in cf.explain()


def test_a_cond_branch_reading_an_array_of_python_objects_is_right_every_call():
    def f(x):
        return hop.cond(x.sum() > 0, lambda v: v * np.array(OBJ[0]).sum(), lambda v: v - 1.0,
                        (x,))
    cf = hop.compile(f, recompile_limit=100)
    x = np.ones(3)
    for k in range(4):
        OBJ[0].append(float(k))
        assert cf(x).tolist() == f(x).tolist()
    assert cf.recompiles == 3 and cf.eager_calls == 0


def test_an_sgd_loop_over_an_environment_array_does_not_run_its_stale_plans(monkeypatch):
    # W updated in place on every call misses every live plan (16) on every
    # call: each is told by its contents guard alone (Guards.changed_contents),
    # not run (a run flattened the arguments and read every guard first)
    g = _grad_of(lambda: Z * Z)
    x = hnp.asarray(np.ones(2))
    for _ in range(20):
        Z[...] -= 0.25 * np.asarray(g(x))
    assert len(g._compiled.graphs) == 16
    full = []
    real = _guards.Guards.revalidate

    def counted(self, state, leaves):
        full.append(self)
        return real(self, state, leaves)
    monkeypatch.setattr(_guards.Guards, "revalidate", counted)
    for _ in range(3):
        before = Z.copy()
        got = np.asarray(g(x))
        assert got.tolist() == (before * before).tolist()
        Z[...] -= 0.25 * got
    # (the newest plan's run, and nothing else, per call)
    assert len(full) == 3
    assert "guard failed: global 'Z' changed inside since traced" in g._compiled.explain()


def test_a_retrace_of_a_function_reading_an_environment_array_goes_to_the_translator_at_once(
        monkeypatch):
    # its plain trace found the array and gave way to the translator
    # (EnvArrays) on every retrace; now once
    from hop import _compile
    g = _grad_of(lambda: Z * Z)
    x = hnp.asarray(np.ones(2))
    g(x)
    traces = []
    real = _compile._trace

    def counted(fn, *args, **kwargs):
        traces.append(kwargs.get("frame"))
        return real(fn, *args, **kwargs)
    monkeypatch.setattr(_compile, "_trace", counted)
    for k in range(3):
        Z[0] = k + 5.0
        assert np.asarray(g(x)).tolist() == (Z * Z).tolist()
    assert len(traces) == 3 and all(f is not None for f in traces)


S = 2.0


def test_a_function_whose_environment_array_is_rebound_to_a_number_stays_right():
    # (translated from then on: the translator compiles it as the plain
    # trace would have)
    global S
    S = np.array([2.0, 3.0])

    def f(x):
        return hop.cond(x.sum() > 0, lambda v: v * np.sin(S), lambda v: v - 1.0, (x,))
    cf = hop.compile(f)
    x = np.ones(2)
    try:
        for s in (np.array([2.0, 3.0]), 4.0, np.array([5.0, -1.0]), 0.5):
            S = s
            got, want = cf(x), f(x)
            assert type(got) is type(want) and got.tolist() == want.tolist()
        assert cf.eager_calls == 0
    finally:
        S = 2.0


D = np.array([0, 1000, 2000], dtype="m8[ms]")
REC = np.zeros(3, dtype=[("a", "f8")])


def test_a_dtype_set_in_place_with_the_same_size_retraces():
    # (the layout record holds type number, size and byte order: the same
    # for another datetime unit and for other field names)
    global D, REC
    D = np.array([0, 1000, 2000], dtype="m8[ms]")
    REC = np.array([(1.0,), (2.0,), (3.0,)], dtype=[("a", "f8")])
    g = _grad_of(lambda: (D / np.timedelta64(1, "s")).astype("f8"))
    h = _grad_of(lambda: REC["a"] + 0.0 if REC.dtype.names == ("a",) else -REC["b"])
    cg, ch = hop.compile(g), hop.compile(h)
    x = hnp.asarray(np.ones(3))
    assert np.asarray(cg(x)).tolist() == [0.0, 1.0, 2.0]
    assert np.asarray(ch(x)).tolist() == [1.0, 2.0, 3.0]
    D.dtype = "m8[s]"
    REC.dtype = [("b", "f8")]
    assert np.asarray(cg(x)).tolist() == [0.0, 1000.0, 2000.0] == np.asarray(g(x)).tolist()
    assert np.asarray(ch(x)).tolist() == [-1.0, -2.0, -3.0] == np.asarray(h(x)).tolist()
    assert cg.recompiles == 1 and ch.recompiles == 1
    cg(x), ch(x)
    assert cg.recompiles == 1 and ch.recompiles == 1
    assert _C._np_contents(D) is None and _C._np_contents(REC) is None
