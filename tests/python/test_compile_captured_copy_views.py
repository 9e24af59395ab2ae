"""A captured eager hop.numpy view that hop.numpy made as a copy (`V =
G[::-1]`, `np.flip(G, 1)` of a hop.numpy G, a global or a closure cell;
ndarray._cp) is, in a trace, a view of G's storage through its steps
(_storage._copy_view_storage), as any view in the run: a compiled write
through it, or through a view of it, reaches G, and a read of it after a
write of G sees the write, as eagerly.  Before the forty-fifth session a
direct write raised UnsupportedError ("the write would not reach the array
it views") where eager writes G, a write through a view of it (`V.T[0] =
5`) went into the copy alone, silently, and `G[0] = a; return V * 1` read V
as it was before the write.  The capture is read from V's chain
(V._cp[0]), so G rebound between calls does not move V's base.  A plan's
write-back into the caller's arrays counts as a write, so an eager copy-view
the caller holds reads its elements again (it kept the old ones)."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

BODIES = {
    "write": "V[0] = a\n    return a + 1",
    "augmented": "V[1:] += a\n    return V.sum(0)",
    "through a transpose": "W = V.T\n    W[0] = 5\n    return a * 2",
    "through a slice": "W = V[1:]\n    W *= 2\n    return V[:, 1] * 1",
    "out=": "np.add(V, a, out=V)\n    return V[0] * 1",
    "read after a write of G": "G[0] = a\n    return V * 1",
    "sum after a write of G": "G[-1] += 1\n    return a + V.sum()",
    "both": "G[0] = a\n    V[0] -= 1\n    return (V[::-1].T * 1, G[1] * 1)",
    "flip": "np.flip(V, 1)[0] = a\n    return a * 3",
}
VIEWS = {"reversed": lambda g: g[::-1], "flip": lambda g: np.flip(g, 1),
         "reversed twice": lambda g: g[::-1][:, ::-1], "a transposed reversal": lambda g: g.T[::-1].T}


def _world(body, view, compiled, cell):
    G = hnp.asarray(np.arange(12.0).reshape(3, 4))
    ns = {"np": np, "G": G}
    if cell:
        src = "def make(V):\n    def f(a):\n        " + body.replace("\n", "\n    ") + \
            "\n    return f\n"
        exec(src, ns)  # noqa: S102
        f = ns["make"](VIEWS[view](G))
    else:
        ns["V"] = VIEWS[view](G)
        exec("def f(a):\n    " + body + "\n", ns)  # noqa: S102
        f = ns["f"]
    return ns, (hop.compile(f) if compiled else f)


def _values(r):
    if isinstance(r, tuple):
        return [_values(x) for x in r]
    return np.asarray(r).tolist()


def _calls(body, view, compiled, cell, rebind=None):
    ns, f = _world(body, view, compiled, cell)
    out = []
    for k in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f(np.arange(4.0) + k)
        out.append((_values(r), np.asarray(ns["G"]).tolist()))
        ns["G"][1, 1] += 10  # an eager write between calls
        if rebind == "G":  # (V still views the old G)
            ns["G"] = hnp.asarray(np.arange(12.0).reshape(3, 4) * (k + 2))
    return out


@pytest.mark.parametrize("cell", [False, True], ids=["global", "cell"])
@pytest.mark.parametrize("body", sorted(BODIES))
def test_a_compiled_write_or_read_of_a_captured_copy_view_is_eagers(body, cell):
    want = _calls(BODIES[body], "reversed", False, cell)
    assert _calls(BODIES[body], "reversed", True, cell) == want


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_each_kind_of_captured_copy_view_writes_its_base(view):
    body = BODIES["through a transpose"]
    assert _calls(body, view, True, False) == _calls(body, view, False, False)
    if view != "a transposed reversal":
        assert _calls(BODIES["both"], view, True, False) == \
            _calls(BODIES["both"], view, False, False)
    else:
        # (its chain ends at G.T, an eager view of G's memory without view
        # steps: a capture of its own, so writing G and it is the refusal
        # of two environment arrays sharing memory, as for `H = G.T`)
        with pytest.raises(hop.UnsupportedError, match="shares memory with the captured"):
            _calls(BODIES["both"], view, True, False)


@pytest.mark.parametrize("body", ["read after a write of G", "write", "both"])
def test_a_global_rebound_under_a_captured_copy_view_does_not_move_its_base(body):
    want = _calls(BODIES[body], "reversed", False, False, rebind="G")
    assert _calls(BODIES[body], "reversed", True, False, rebind="G") == want


def test_a_direct_write_reaches_the_base_with_numpys_values():
    G = hnp.asarray(np.arange(6.0).reshape(2, 3))
    ns = {"np": np, "V": G[::-1]}
    exec("def f(a):\n    V[0] = a\n    return a * 1\n", ns)  # noqa: S102
    cf = hop.compile(ns["f"], fullgraph=True)  # (no fallback: compiled)
    cf(np.array([-1.0, -2.0, -3.0]))
    assert np.asarray(G).tolist() == [[0.0, 1.0, 2.0], [-1.0, -2.0, -3.0]]
    assert np.asarray(ns["V"]).tolist() == [[-1.0, -2.0, -3.0], [0.0, 1.0, 2.0]]
    assert "eagerly" not in cf.explain()


@pytest.mark.parametrize("what", ["capture", "argument"])
def test_a_plans_write_back_shows_in_an_eager_copy_view_the_caller_holds(what):
    # the write-back was no counted write (_storage.WRITES): v kept the
    # values from before the call
    G = hnp.asarray(np.arange(6.0))
    v = G[::-1]
    assert v[-1] == 0.0
    if what == "capture":
        def f(a):
            G[0] = a[0]
            return a + 1
        hop.compile(f)(np.array([5.0, 1.0]))
    else:
        def f(x):
            x[0] = 5.0
            return x * 1
        hop.compile(f)(G)
    assert v[-1] == 5.0  # (before np.asarray(G), which counts as a possible write)
    assert np.asarray(G)[0] == 5.0
    assert np.asarray(v).tolist() == [5.0, 4.0, 3.0, 2.0, 1.0, 5.0]


@pytest.mark.parametrize("write", ["", "V[0] = a\n    "])
def test_a_returned_captured_copy_view_is_that_array(write):
    # (the run sees V as a view of G's storage: its result was made again
    # as a new view of G, not V, until root_views took V itself)
    G = hnp.asarray(np.arange(6.0).reshape(2, 3))
    ns = {"np": np, "V": G[::-1]}
    exec(f"def f(a):\n    {write}return (V, a * 1)\n", ns)  # noqa: S102
    cf = hop.compile(ns["f"])
    for k in range(2):
        r = cf(np.arange(3.0) + k)
        assert r[0] is ns["V"] and np.shares_memory(np.asarray(r[0]), np.asarray(G))
    assert np.asarray(G).tolist() == ([[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]] if write else
                                      [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
