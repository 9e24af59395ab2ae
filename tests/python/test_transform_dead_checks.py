"""A check whose value nothing uses is still a check under grad, jvp and
vmap (hop_node_may_fail, include/hop/graph.h): eagerly the code raises, so
the transformed function raises too.  Before the fiftieth session autodiff's
DCE and vmap's mark_needed dropped such a node and the transformed function
returned a value where eager raised."""
import ctypes

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


D = ctypes.POINTER(ctypes.c_double)


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int64, D, D)
def _checked_copy(n, x, y):
    # a kernel that refuses its data by its result: 1 for a negative element
    for i in range(n):
        if x[i] < 0:
            return 1
        y[i] = x[i]
    return 0


@pytest.mark.parametrize("mode", ["grad", "jvp", "vmap"])
def test_an_unused_foreign_kernel_that_can_fail_fails_the_transformed_call(kernels, mode):
    # an int-returning kernel may fail (hop_foreign_may_fail): its call is
    # HOP_NODE_MAY_FAIL and stays when nothing uses it (dropped before the
    # fifty-first session: the transformed call returned a value)
    k = kernels("int checked_copy(int64_t n, const double *x, double *y)", _checked_copy)

    def f(x, a):
        k(2, a, a * 0.0)
        return (x * x).sum()
    bad, good = hop.tensor([1.0, -1.0], dtype=hop.float64), hop.tensor([1.0, 2.0], dtype=hop.float64)
    msg = r"^checked_copy: the kernel returned 1$"
    with pytest.raises(hop.Error, match=msg):
        f(X, bad)
    x64 = X.to(hop.float64)
    calls = {"grad": lambda a: hop.grad(f)(x64, a),
             "jvp": lambda a: hop.jvp(lambda x: f(x, a), (x64,), (x64,)),
             "vmap": lambda a: hop.vmap(f, in_axes=(0, None))(hop.stack([x64, x64]), a)}
    with pytest.raises(hop.Error, match=msg):
        calls[mode](bad)
    calls[mode](good)  # a kernel that does not fail: the plain result


@pytest.mark.parametrize("name", ["vjp_body_0_bwd", "jvp_body_0_jvp", "vmap_body_0_vmap"])
def test_an_unused_while_loop_stays_in_the_transformed_graph(name):
    # a while_loop's trip count is data: one that never ends is eager's
    # hang, an effect (HOP_CLASS_MAY_NOT_END), so no transformation drops
    # it (grad, jvp and vmap returned a value where eager hangs before the
    # fifty-first session; hop.trace and hop.compile of f kept it always)
    def f(x):
        hop.while_loop(lambda c: c.sum() > -1.0, lambda c: c + 1.0, x)  # never ends
        return (x * x).sum()
    g = {"vjp_body_0_bwd": hop.grad(f), "jvp_body_0_jvp": lambda x: hop.jvp(f, (x,), (x,)),
         "vmap_body_0_vmap": hop.vmap(f)}[name]
    gm = hop.trace(g, hop.stack([X, X]) if name.startswith("vmap") else X)
    # (jvp keeps the forward copy and its tangent loop: both may not end)
    assert {n.target for n in gm.subgraphs[name].graph.nodes if n.op == "call_hop"} == \
        {"while_loop"}
