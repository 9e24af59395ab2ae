"""A writable eager hop.numpy view that hop.numpy made as a copy (`G[::-1]`,
`np.flip(G)` of a hop.numpy array G: ndarray._cp) writes through to the
array it views, eagerly (_storage.eager_write). A compiled call handed
one, directly or as the local a graph break's resume takes, wrote into
the copy alone: the write never reached G, silently (found by CI's draw
of test_numpy_alias_programs: `v1 = G[::-1]; a[np.array([1, 0, 1])] += -1;
v1[0] = -1`). Such a call now runs eagerly, and no plan made for a plain
array takes one (its structure key is another: hop.numpy._COPY_VIEW)."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp


def _G():
    return hnp.asarray(np.arange(12.0).reshape(3, 4))


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _write_row(a, v):
    v[0] = -1.0
    return a + 1.0


@pytest.mark.parametrize("view", [lambda G: G[::-1], lambda G: np.flip(G, 0),
                                  lambda G: G[::-1][:, ::-1]],
                         ids=["reversed", "flip", "reversed_twice"])
def test_a_compiled_write_into_a_copy_view_argument_reaches_its_array(view):
    want, got = _G(), _G()
    _write_row(np.zeros(3), view(want))
    cf = hop.compile(_write_row)
    for _ in range(2):
        r = _quiet(cf, np.zeros(3), view(got))
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        np.testing.assert_array_equal(r, np.ones(3))


def test_a_plan_made_for_a_plain_array_does_not_take_a_copy_view():
    cf = hop.compile(_write_row)
    plain = _G()
    _quiet(cf, np.zeros(3), plain)  # a plan for a plain hop.numpy array
    assert np.asarray(plain)[0].tolist() == [-1.0] * 4
    G = _G()
    _quiet(cf, np.zeros(3), G[::-1])
    assert np.asarray(G)[2].tolist() == [-1.0] * 4  # was [8, 9, 10, 11]: the copy's write
    assert np.asarray(G)[:2].tolist() == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]


def test_a_graph_breaks_resume_handed_a_copy_view_writes_through_it():
    def program():
        ns = {"np": np, "G": _G()}
        exec("def f(a, b):\n"
             "    global G\n"
             "    v1 = G[::-1]\n"
             "    a[np.array([1, 0, 1])] += -1\n"
             "    v1[0] = -1\n"
             "    return (a,)\n", ns)
        return ns
    eager, comp = program(), program()
    cf = hop.compile(comp["f"])
    for _ in range(2):
        a, b = np.arange(12.0).reshape(3, 4), np.ones((3, 4))
        a2 = a.copy()
        eager["f"](a, b)
        _quiet(cf, a2, b)
        np.testing.assert_array_equal(a2, a)
        np.testing.assert_array_equal(np.asarray(comp["G"]), np.asarray(eager["G"]))
    assert np.asarray(comp["G"])[2].tolist() == [-1.0] * 4


def test_a_read_only_copy_view_still_compiles():
    g = np.arange(12.0).reshape(3, 4)
    g.flags.writeable = False
    v = hnp.asarray(g)[::-1]
    assert v._ro and v._cp is not None
    cf = hop.compile(lambda x, v: x + v.sum())
    assert cf(np.zeros(2), v).tolist() == [66.0, 66.0]
    assert cf(np.zeros(2), v).tolist() == [66.0, 66.0]
    assert "eagerly" not in cf.explain()
