"""A check whose value nothing uses is still a check under grad, jvp and
vmap (hop_node_may_fail, include/hop/graph.h): eagerly the code raises, so
the transformed function raises too.  Before the fiftieth session autodiff's
DCE and vmap's mark_needed dropped such a node and the transformed function
returned a value where eager raised."""
import pytest

import hop
import hop.numpy as hnp

X = hop.tensor([1.0, 2.0])
NEG = hop.tensor(-1)


def _transforms(f, *rest):
    """f's grad, jvp and vmap (over x), each a thunk."""
    return {
        "grad": lambda: hop.grad(f)(X, *rest),
        "jvp": lambda: hop.jvp(lambda x: f(x, *rest), (X,), (X,)),
        "vmap": lambda: hop.vmap(f, in_axes=(0,) + (None,) * len(rest))(hop.stack([X, X]), *rest),
    }


def dead_size(x, k):
    hop.zeros(k.item())  # eagerly: InvalidError for a negative size
    return (x * x).sum()


def dead_size_in_cond(x, k):
    def t(x):
        hop.zeros(k.item())
        return x * 2
    return hop.cond(x.sum() > 0, t, lambda x: x * 3, (x,)).sum()


def dead_size_in_map(x, k):
    def body(r):
        hop.zeros(k.item())
        return r * 2
    return hop.map(body, x.reshape(2, 1)).sum()


def dead_size_in_scan(x, k):
    def body(c, r):
        hop.zeros(k.item())
        return c + r, r * 2
    c, ys = hop.scan(body, hop.tensor(0.0), x)
    return c + ys.sum()


# (grad and jvp of the bodies kept the check before: they are not DCE'd)
CASES = [(dead_size, "grad"), (dead_size, "jvp"), (dead_size, "vmap"),
         (dead_size_in_cond, "vmap"), (dead_size_in_map, "vmap"), (dead_size_in_scan, "vmap")]


@pytest.mark.parametrize("f, mode", CASES, ids=lambda c: getattr(c, "__name__", c))
def test_an_unused_size_that_eager_refuses_fails_the_transformed_call(f, mode):
    msg = r"^zeros: invalid size -1 in shape \[-1\]$"
    with pytest.raises(hop.InvalidError, match=msg):
        f(X, NEG)
    with pytest.raises(hop.InvalidError, match=msg):
        _transforms(f, NEG)[mode]()
    # a valid size: the plain derivative
    assert _transforms(f, hop.tensor(2))["grad"]().tolist() == hop.grad(
        lambda x: f(x, hop.tensor(0)))(X).tolist()


def dead_unravel(x, idx):
    hnp.unravel_index(hnp.asarray(idx), (2, 3))
    return (x * x).sum()


@pytest.mark.parametrize("mode", ["grad", "vmap"])
def test_an_unused_unravel_index_out_of_bounds_fails_the_transformed_call(mode):
    with pytest.raises(ValueError, match=r"^index 7 is out of bounds for array with size 6$"):
        dead_unravel(X, hop.tensor(7))
    with pytest.raises(hop.CheckError, match=r"^fail_if: a flat index or a coordinate is out of "
                       r"bounds.*of kind NUMPY_INDEX\)$"):
        _transforms(dead_unravel, hop.tensor(7))[mode]()
    assert _transforms(dead_unravel, hop.tensor(5))["grad"]().tolist() == [2.0, 4.0]


def test_an_unused_singular_inverse_fails_grad_and_vmap():
    a = hop.tensor([[1.0, 2.0], [2.0, 4.0]])

    def f(x, a):
        hnp.linalg.inv(hnp.asarray(a))
        return (x * x).sum()
    for mode in ("grad", "vmap"):
        with pytest.raises(hnp.linalg.LinAlgError, match="^Singular matrix$"):
            _transforms(f, a)[mode]()


def test_a_symint_index_known_out_of_range_is_an_index_error_as_eager():
    def f(x):
        def body(i, c):
            x[i + 5]  # eagerly: IndexError
            return c + x[i]
        return hop.fori_loop(0, 2, body, hop.tensor(0.0))
    with pytest.raises(IndexError, match=r"^index 5 is out of bounds for dim 0 with size 2$"):
        f(X)
    for call in (lambda: hop.trace(f, X), lambda: hop.grad(f)(X)):
        # was: hop.InvalidError, a ValueError
        with pytest.raises(IndexError, match=r"^select: index u0 \+ 5 out of range for dim 0 "
                           r"of f32\[2\]$"):
            call()
