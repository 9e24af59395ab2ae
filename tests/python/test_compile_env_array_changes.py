"""Issue 28 (first rule): an ndarray a compiled function reads from its
environment is seen as it is at each call, as eagerly -- its contents after
writes between calls (through a module global, a closure cell, an attribute
`obj.G` or a list item `L[0]`: `G[...] = ...`, `G += 1`, `np.copyto`, a view
write `G[1:] *= 2`), and its metadata after changes of the array object in
place (`G.shape = (4, 4)`, `G.strides`, `G.dtype`, `G.data`,
`G.flags.writeable`), which retrace.  Each case runs the function eagerly and
compiled over several calls with changes between them and compares values,
dtypes and shapes.  Also: the arrays such a function makes itself stay
NumPy's (the merge of gl37b into main: a hang and unsourced-capture warnings)."""

import types
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

G = np.arange(4.0)
OBJ = types.SimpleNamespace(G=np.arange(4.0))
L = [np.arange(4.0)]


def _closure(kind):
    c = np.arange(4.0)
    fns = {
        "x + G": lambda x: x + c,
        "x + G * 2": lambda x: x + c * 2,
        "a slice's sum": lambda x: x * c[1:].sum(),
    }
    return fns[kind], c


FUNCTIONS = {
    "global": {"x + G": lambda x: x + G, "x + G * 2": lambda x: x + G * 2,
               "a slice's sum": lambda x: x * G[1:].sum()},
    "attribute": {"x + G": lambda x: x + OBJ.G, "x + G * 2": lambda x: x + OBJ.G * 2,
                  "a slice's sum": lambda x: x * OBJ.G[1:].sum()},
    "list item": {"x + G": lambda x: x + L[0], "x + G * 2": lambda x: x + L[0] * 2,
                  "a slice's sum": lambda x: x * L[0][1:].sum()},
}


def _view_write(a, k):
    a[1:] *= 2


WRITES = {
    "G[...] =": lambda a, k: a.__setitem__(Ellipsis, np.arange(4.0) * (k + 1) - 1),
    "G += 1": lambda a, k: a.__iadd__(1),
    "np.copyto": lambda a, k: np.copyto(a, np.full(4, 3.0 * k - 2)),
    "G[1:] *= 2": _view_write,
}


@pytest.fixture(autouse=True)
def _reset():
    global G
    G = np.arange(4.0)
    OBJ.G = np.arange(4.0)
    L[0] = np.arange(4.0)
    yield


def _fn_and_array(source, kind):
    if source == "closure cell":
        return _closure(kind)
    array = {"global": lambda: G, "attribute": lambda: OBJ.G, "list item": lambda: L[0]}[source]
    return FUNCTIONS[source][kind], array()


def _same(got, want):
    assert type(got) is type(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("kind", ["x + G", "x + G * 2", "a slice's sum"])
@pytest.mark.parametrize("source", ["global", "closure cell", "attribute", "list item"])
def test_a_write_inside_an_environment_array_between_calls_is_seen(source, kind, write):
    fn, a = _fn_and_array(source, kind)
    cf = hop.compile(fn)
    for k in range(4):
        if k:
            WRITES[write](a, k)
        x = np.full(4, float(k))
        _same(cf(x), fn(x))
    assert cf.recompiles == 0 and cf.eager_calls == 0


# ------------------------------------------------------- metadata in place

def _set_shape(a):
    a.shape = (2, 2)


def _set_strides(a):
    a.shape = (2, 2)
    a.strides = (8, 16)  # the transpose, in place


def _set_zero_strides(a):
    a.shape = (2, 2)
    a.strides = (0, 8)  # both rows are the first two elements


def _set_dtype(a):
    a.dtype = np.int64  # the same bytes read as int64


def _set_data(a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        a.data = np.array([7.0, 8.0, 9.0, 10.0]).data  # other memory


METADATA = {"shape": _set_shape, "strides": _set_strides, "zero strides": _set_zero_strides,
            "dtype": _set_dtype, "data": _set_data}


@pytest.mark.parametrize("change", sorted(METADATA))
@pytest.mark.parametrize("kind", ["x + G", "x + G * 2"])
@pytest.mark.parametrize("source", ["global", "closure cell", "attribute", "list item"])
def test_an_environment_array_changed_in_place_retraces(source, kind, change):
    # (x of one element broadcasts against G of any shape)
    fn, a = _fn_and_array(source, kind)
    cf = hop.compile(fn)
    x = np.full(1, 0.5)
    _same(cf(x), fn(x))
    METADATA[change](a)
    for k in range(3):
        x = np.full(1, k + 0.5)
        _same(cf(x), fn(x))
        a[(0,) * a.ndim] += 1  # and the new layout's contents are read every call
    assert cf.recompiles == 1 and cf.eager_calls == 0
    assert "changed in place" in cf.explain()


def test_an_environment_array_changed_back_and_forth_is_read_as_it_is_each_call():
    fn = lambda x: x + G * 2  # noqa: E731
    cf = hop.compile(fn)
    x = np.full(1, 1.0)
    for shape in [(4,), (2, 2), (4, 1), (4,), (1, 4), (2, 2)]:
        G.shape = shape
        _same(cf(x), fn(x))
    assert cf.eager_calls == 0


def _returns_view(x):
    return x + 1, G.T


def _writes(x):
    G[0] = x[0]
    return G * 2


def _reads(x):
    return x + G


@pytest.mark.parametrize("fn", [_reads, _returns_view, _writes], ids=lambda f: f.__name__)
def test_an_environment_array_made_read_only_and_writable_again(fn):
    cf = hop.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (_writes runs eagerly)
        for k, writeable in enumerate([True, False, False, True, False]):
            G.flags.writeable = writeable
            x = np.full(4, float(k))
            try:
                want = fn(x)
            except ValueError as e:
                with pytest.raises(ValueError, match="read-only"):
                    cf(x)
                assert "read-only" in str(e)
                continue
            got = cf(x)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                _same(g, w)
                assert g.flags.writeable == w.flags.writeable
    G.flags.writeable = True


def test_the_layout_guard_is_no_guard_of_contents():
    # a write inside G keeps its layout: read by the same plan, no retrace
    cf = hop.compile(lambda x: x + G)
    x = np.zeros(4)
    cf(x)
    G[...] = 5.0
    assert cf(x).tolist() == [5.0] * 4 and cf.recompiles == 0


# --------------------------------------- the function's own arrays (merge)

def test_arrays_the_function_makes_stay_numpys_when_it_reads_a_global():
    # np.eye(3) and np.ones(3): NumPy's constants of the plan, not captures
    # with no source (warned as unguarded reads before)
    fn = lambda x: np.linalg.solve(x @ x.T + np.eye(3) + G[:3, None], np.ones(3))  # noqa: E731
    x = np.arange(9.0).reshape(3, 3) / 10
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        cf = hop.compile(fn)
        for k in range(3):
            G[0] = k
            np.testing.assert_allclose(cf(x), fn(x), rtol=1e-12)
    assert cf.eager_calls == 0 and cf.recompiles == 0
    assert "made by the function itself" in cf.explain()


def test_an_array_the_function_makes_and_writes_in_place_when_it_reads_a_global():
    # np.percentile(..., out=y): a write to an array each run makes anew (the
    # trace restarted for a write-back slot keyed by it forever: a hang)
    def fn(x):
        y = np.zeros(3)
        np.percentile(x + G[:1], (10, 50, 90), out=y)
        z = np.empty(2)
        z[...] = x[:2] * G[1]
        return y, z

    cf = hop.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for k in range(3):
            G[:2] = k, k + 1
            x = np.arange(5.0) * (k + 1)
            for got, want in zip(cf(x), fn(x)):
                _same(got, want)
    assert cf.eager_calls == 0


def test_hop_tensor_of_a_global_in_a_translated_function_is_its_memory():
    def fn(x):
        return x + hop.tensor(G) * 2

    cf = hop.compile(fn)
    x = hop.tensor([0.0, 0.0, 0.0, 0.0])
    for k in range(3):
        G[0] = 10.0 * k
        assert cf(x).tolist() == fn(x).tolist()
    # (the plain trace's capture over G's memory, named as hop.tensor's)
    assert "captured input 0 (_tensor_constant0) is the memory of the array global 'G' " \
           "(read every call)" in cf.explain() and cf.recompiles == 0


def test_a_compiled_grad_of_a_function_reading_a_global_array():
    # (a hop.grad wrapper is no Python function: traced as before, with no
    # translation; hop.numpy's ops read G's memory every call)
    def loss(x):
        return (x * G).sum()

    cf = hop.compile(hop.grad(loss))
    x = hnp.asarray(np.ones(4))
    for k in range(3):
        G[0] = k
        assert np.asarray(cf(x)).tolist() == np.asarray(hop.grad(loss)(x)).tolist()


def test_a_change_inside_a_global_ndarray_numpy_computes_with_inside_a_hop_body():
    def loss(x):
        return (x * (G * 2)).sum()

    cf = hop.compile(hop.grad(loss))
    x = hnp.asarray(np.ones(4))
    cf(x)
    G[0] = 10.0
    assert np.asarray(cf(x)).tolist() == np.asarray(hop.grad(loss)(x)).tolist()


def test_np_layout_tells_every_change_of_an_array_object_in_place(monkeypatch):
    from hop import _C, _guards
    real = _C._np_layout
    a = np.arange(4.0)
    for layout in (real, lambda a: _guards._layout(a)):
        before = layout(a)
        assert _C._np_same_layout(a, real(a)) and layout(a) == before
        a[0] = 9.0  # contents: not layout
        assert layout(a) == before
        for change in (_set_shape, _set_strides, _set_dtype, _set_data):
            a = np.arange(4.0)
            before = layout(a)
            change(a)
            assert layout(a) != before
            assert not _C._np_same_layout(a, real(np.arange(4.0)))
        a = np.arange(4.0)
        before = layout(a)
        a.flags.writeable = False
        assert layout(a) != before
        a = np.arange(4.0)
        # (without NumPy's C API: the same read through Python)
        monkeypatch.setattr(_C, "_np_layout", lambda a: None)
    assert not _C._np_same_layout([1.0], b"") and _guards._layout([1.0]) is None
    with pytest.raises(TypeError, match="layout must be bytes"):
        _C._np_same_layout(a, None)
