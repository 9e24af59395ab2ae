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
