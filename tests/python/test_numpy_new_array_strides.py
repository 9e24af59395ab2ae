"""NumPy 1.24's strides and flags of results without elements and of
Fortran-ordered new arrays, eagerly, compiled and traced (issue 29, item 1;
docs/ARCHITECTURE.md, "A new array without elements").

A new array NumPy makes without elements has zero strides, one dim too
(np.sort, np.unique, x[x > 0] with no hit: compiled, hop gave (8,)); NumPy's
nonzero columns are views of stride ndim * 8 also without elements (eager
hop gave (0,)); np.tile of an empty result is NumPy's reshape (C strides, a
0 dim counted as 1, or the array's own when the shape is unchanged: hop gave
zero strides); np.atleast_3d is NumPy's indexing with new axes of stride 0
(hop's reshape gave C strides); np.zeros/ones/empty/full(shape,
order='F') of a known shape compiled are Fortran-ordered (hop's were C), and
so is what NumPy computes from them in K order."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp

E1 = np.arange(0.0)          # a new 1-d array without elements: strides (0,)
NEG = np.array([-1.0, -2.0])  # no element > 0
CASES = [
    ("np.sort(x)", E1), ("np.unique(x)", E1), ("np.unique(x[x > 0])", NEG),
    ("x[x > 0]", NEG), ("x[x > 0]", E1), ("x[x > 0]", np.zeros((2, 3))),
    ("np.argsort(x)", E1), ("np.cumsum(x)", E1), ("x[[]]", NEG),
    ("np.compress(x > 0, x)", NEG), ("np.extract(x > 0, x)", NEG),
    ("np.nonzero(x > 0)[0]", NEG), ("np.nonzero(x > 0)[1]", np.zeros((2, 3))),
    ("np.flatnonzero(x > 0)", NEG), ("np.where(x > 0)[0]", NEG),
    ("np.tile(x, 2)", E1), ("np.tile(x, (2, 3))", E1), ("np.tile(x, (2, 0))", np.ones(3)),
    ("np.tile(x, 0)", np.ones(3)), ("np.tile(x, (2, 2))", np.zeros((0, 3))),
    ("np.tile(x, (0, 1))", np.ones(3)), ("np.tile(x, (3, 1, 0))", np.ones((2, 2))),
    ("np.atleast_3d(x)", E1), ("np.atleast_3d(x)", np.zeros((0, 3))),
    ("np.atleast_3d(x)", np.zeros((3, 0))), ("np.atleast_3d(x[1:1])", np.ones(3)),
    ("np.atleast_3d(x)", np.ones(3)), ("np.atleast_3d(x.T)", np.ones((2, 3))),
    ("np.zeros((2, 3), order='F')", NEG), ("np.ones((3, 2, 4), order='F')", NEG),
    ("np.empty(x.shape + (3,), order='F')", NEG), ("np.full((2, 3), 2.0, order='F')", NEG),
    ("np.zeros((2, 3), order='F') + 1", NEG), ("np.zeros((2, 3), order='F') * x[0]", NEG),
    ("(np.zeros((2, 3), order='F'), x + 1)", NEG), ("np.ones((3, 2), order='F')[1:]", NEG),
    ("np.empty((2, 3), order='F').T", NEG),
]
IDS = [f"{src}-{x.shape}" for src, x in CASES]


def _function(src):
    ns = {"np": np}
    exec(f"def f(x):\n    return {src}\n", ns)  # noqa: S102 (the list above)
    return ns["f"]


def _layout(v):
    v = v[0] if isinstance(v, tuple) else v
    return (type(v).__name__ == "ndarray", v.shape, v.dtype, v.strides,
            bool(v.flags.c_contiguous), bool(v.flags.f_contiguous))


@pytest.mark.parametrize("src,x", CASES, ids=IDS)
def test_eager_results_have_numpys_strides(src, x):
    f = _function(src)
    assert _layout(f(hnp.asarray(x.copy()))) == _layout(f(x.copy()))


@pytest.mark.parametrize("src,x", CASES, ids=IDS)
def test_compiled_results_have_numpys_strides(src, x):
    f = _function(src)
    want, cf = _layout(f(x.copy())), hop.compile(f)
    for _ in range(2):  # (the trace's call and the plan's)
        got = cf(x.copy())
        assert _layout(got) == want
        assert type(got[0] if isinstance(got, tuple) else got) is np.ndarray


@pytest.mark.parametrize("src,x", CASES, ids=IDS)
def test_traced_results_have_numpys_strides(src, x):
    f = _function(src)
    gm = hop.trace(f, x.copy())
    assert _layout(gm(x.copy())) == _layout(f(x.copy()))


def test_compiled_fortran_zeros_are_new_arrays_each_call():
    # made anew per call in F order (a write into one is not seen by the next)
    cf = hop.compile(lambda x: np.zeros((2, 3), order="F"))
    a = cf(NEG)
    a[0, 0] = 5.0
    b = cf(NEG)
    assert b.flags.f_contiguous and not b.flags.c_contiguous and b[0, 0] == 0.0
    assert a is not b and not np.shares_memory(a, b)


@pytest.mark.parametrize("order,err,text", [
    (3, TypeError, "order must be str, not int"),
    ("CC", ValueError, "order must be one of 'C', 'F', 'A', or 'K' (got 'CC')"),
    ("A", ValueError, "only 'C' or 'F' order is permitted")])
@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "full"])
def test_creation_order_errors_are_numpys(name, order, err, text):
    args = ((2, 2), 1.0) if name == "full" else ((2, 2),)
    with pytest.raises(err) as want:
        getattr(np, name)(*args, order=order)
    assert str(want.value) == text
    with pytest.raises(err, match=text.replace("(", r"\(").replace(")", r"\)")):
        getattr(hnp, name)(*args, order=order)


@pytest.mark.parametrize("order", ["f", b"F", None, "c"])
def test_full_takes_numpys_orders(order):
    want = np.full((2, 3), 1j, order=order)
    got = hnp.full((2, 3), 1j, order=order)
    assert got.strides == want.strides and got.dtype == want.dtype
