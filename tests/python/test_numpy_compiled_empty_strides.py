"""A compiled function's result without elements has NumPy 1.24's strides
(the first rule; docs/ARCHITECTURE.md, "A new array without elements"):
NumPy's new empty array of two or more dims has zero strides, and a plan's
result that is a new array is one, also where the plan gave the argument's
tensor or a C-ordered view of its own memory (hop showed C strides: (24, 8)
for np.cumsum of a (0, 3) array).  NumPy's views keep their strides."""

import numpy as np
import pytest

import hop

# each gave C strides compiled before
NEW = ["x[np.zeros(0, int)]", "x[[]]", "np.take(x, np.zeros(0, int), axis=0)",
       "np.cumsum(x, axis=0)", "np.cumsum(x, axis=1)", "np.cumprod(x, axis=1)",
       "np.sort(x, axis=0)", "np.argsort(x, axis=0)", "np.repeat(x, 2, axis=0)",
       "np.roll(x, 1, axis=1)", "np.argwhere(x)"]
# controls: right before and after (views, new arrays, one dim)
SAME = ["x + 1", "np.sqrt(x)", "x.astype(np.float32)", "np.concatenate([x, x])",
        "x.T.copy()", "x[:, 1:]", "x.T", "x[None]", "(x + 1).reshape(3, 0)", "(x + 1)[:, 1:]",
        "x.reshape(3, 0)", "x.sum(axis=0)", "x.max(axis=1)", "np.nonzero(x)[0]",
        "np.nonzero(x[:, 0])[0]", "np.flatnonzero(x)", "np.where(x[:, 0])[0]",
        "np.zeros((2, 0))", "x"]


@pytest.mark.parametrize("src", NEW + SAME)
@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 2)])
def test_compiled_empty_results_have_numpys_strides(src, shape):
    x = np.zeros(shape)
    if src in ("x.T.copy()", "x.reshape(3, 0)", "(x + 1).reshape(3, 0)") and len(shape) > 2:
        pytest.skip("(a 2-d case)")
    ns = {"np": np}
    exec(f"def f(x):\n    return {src}\n", ns)  # noqa: S102 (the lists above)
    f = ns["f"]
    want, cf = f(x), hop.compile(f)
    for _ in range(2):  # (the trace's call and the plan's)
        got = cf(x)
        assert type(got) is type(want)
        assert (got.shape, got.dtype, got.strides) == (want.shape, want.dtype, want.strides)


# An empty slice of a non-empty dim with a step: NumPy takes step 1 from the
# start (mapping.c: n_steps 0), so the stride stays the dim's; eager hop.numpy
# multiplied it by the step ((64, 8) for b[3:][::2] of a (3, 4) float64 where
# NumPy gives (32, 8)), found by test_compile_view_campaign's hypothesis draw
EMPTY_STEPPED = {
    "b[3:][::2]": lambda b: b[3:][::2],
    "b[3:][::3, 1:]": lambda b: b[3:][::3, 1:],
    "b[:, 4:][:, ::2]": lambda b: b[:, 4:][:, ::2],
    "b[1:1:2]": lambda b: b[1:1:2],
    "b[::2][2:]": lambda b: b[::2][2:],
    "b[:, ::3][1:][2:][::2]": lambda b: b[:, ::3][1:][2:][::2],
    "b[:1][::2] (one element: the step counts)": lambda b: b[:1][::2],
    "b[2:1:-1]": lambda b: b[2:1:-1],
}


@pytest.mark.parametrize("f", EMPTY_STEPPED.values(), ids=EMPTY_STEPPED.keys())
def test_an_empty_stepped_slice_keeps_numpys_strides_eager_and_compiled(f):
    def make():
        return np.arange(36.0).reshape(3, 12)
    want = f(make())
    for got in (f(hop.numpy.asarray(make())), hop.compile(f)(make())):
        got = np.asarray(got)
        assert (got.shape, got.strides, got.tolist()) == (want.shape, want.strides, want.tolist())


# A view of a computed array without elements (its NumPy strides are the
# new empty array's zeros): compiled, the runner made it from the plan's
# array with C strides ((8, 32) for np.sort(v).T of a (0, 4) v, NumPy
# (0, 0)), and a plan's transposed result kept them; eager hop.numpy's
# reshape of a reversed empty view copied where NumPy views ((0,) for (8,)).
# Found by test_compile_view_campaign's hypothesis draw.
def _strided():
    return np.arange(24.0).reshape(2, 12)[:, ::3]


@pytest.mark.parametrize("f", [
    lambda a: (a, np.sort(a[1:][1:]).T),
    lambda a: (np.sort(a[2:]).T,),
    lambda a: (np.sort(a[2:]), np.sort(a[2:]).T, a[2:]),
    lambda a: ((a[2:] + 1).T[:, ::2],),
    lambda a: (np.sort(a[2:]).reshape(-1),),
], ids=["sort.T with a", "sort.T", "sort, sort.T, view", "(v + 1).T[:, ::2]", "sort.reshape"])
def test_views_of_computed_empty_arrays_have_numpys_strides(f):
    want = f(_strided())
    got = hop.compile(f)(_strided())
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert (g.shape, g.strides) == (w.shape, w.strides)


def test_eager_reshape_of_a_reversed_empty_view_is_numpys_view():
    def f(a):
        return np.flip(a[1:])[1:].reshape(-1)
    want = f(_strided())
    got = np.asarray(f(hop.numpy.asarray(_strided())))
    assert (got.shape, got.strides) == (want.shape, want.strides) == ((0,), (8,))
