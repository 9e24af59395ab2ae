"""Indexing with a 0-d integer tensor (issue #26): x[i], x[i:i + k] and
x[i] = v where i is a traced value (a loop carry, an argument), with JAX's
dynamic_slice / dynamic_update_slice semantics in every mode: a negative
index counts from the end, then the start is clamped so that the slice fits
(never an error from the data).  Eager, traced and compiled agree with a
NumPy reference; the ops differentiate (jvp, grad, against finite
differences) and batch (vmap against a loop over the examples)."""

import numpy as np
import pytest

import hop

F64 = hop.float64


def t(a, dtype=F64):
    return hop.tensor(np.asarray(a, dtype=np.float64), dtype=dtype)


def i64(v):
    return hop.tensor(np.asarray(v, dtype=np.int64))


def start(i, n, k):
    """The start dynamic_slice reads: JAX's clamp."""
    i = i + n if i < 0 else i
    return min(max(i, 0), n - k)


def every_mode(f, *args):
    """f eagerly, traced and compiled (dynamic shapes too), all equal."""
    eager = f(*args)
    outs = [hop.trace(f, *args)(*args), hop.compile(f)(*args),
            hop.compile(f, dynamic=True)(*args)]
    for got in outs:
        np.testing.assert_array_equal(np.asarray(got.numpy()), np.asarray(eager.numpy()))
    return eager


X = np.arange(15.0).reshape(5, 3)
INDEXES = [0, 2, 4, -1, -5, 7, -9, 5, -6]


@pytest.mark.parametrize("i", INDEXES)
def test_x_of_an_int_tensor_is_the_clamped_row_in_every_mode(i):
    got = every_mode(lambda x, i: x[i] * 2.0, t(X), i64(i))
    np.testing.assert_array_equal(got.numpy(), X[start(i, 5, 1)] * 2.0)


@pytest.mark.parametrize("i", INDEXES)
def test_a_slice_from_an_int_tensor_fits_in_the_dim_in_every_mode(i):
    got = every_mode(lambda x, i: x[i:i + 2] + 1.0, t(X), i64(i))
    s = start(i, 5, 2)
    np.testing.assert_array_equal(got.numpy(), X[s:s + 2] + 1.0)
    # along another dim, and with the int on the left
    got = every_mode(lambda x, i: x[:, i:2 + i], t(X), i64(i))
    s = start(i, 3, 2)
    np.testing.assert_array_equal(got.numpy(), X[:, s:s + 2])


@pytest.mark.parametrize("i", INDEXES)
def test_assigning_at_an_int_tensor_writes_the_clamped_row_in_every_mode(i):
    def f(x, i, v):
        y = x.clone()
        y[i] = v
        y[i, 1:] = y[i, 1:] * 10.0
        return y
    got = every_mode(f, t(X), i64(i), t([-1.0, -2.0, -3.0]))
    want = X.copy()
    s = start(i, 5, 1)
    want[s] = [-1.0, -20.0, -30.0]
    np.testing.assert_array_equal(got.numpy(), want)


def test_eager_assignment_writes_memory_that_views_share():
    x = hop.zeros(4, 2, dtype=F64)
    row = x[1]
    x[i64(1)] = 5.0
    x[hop.tensor(-1), 0] = 7.0
    x[0:1] = t([[1.0, 2.0]])
    assert row.tolist() == [5.0, 5.0]
    assert x.tolist() == [[1.0, 2.0], [5.0, 5.0], [0.0, 0.0], [7.0, 0.0]]
    x[1:] = x[:-1]  # overlapping: the value is read before it is written
    assert x.tolist() == [[1.0, 2.0], [1.0, 2.0], [5.0, 5.0], [0.0, 0.0]]
    with pytest.raises(IndexError, match="index 4 is out of bounds for dim 0 with size 4"):
        x[4] = 1.0


def test_a_traced_assignment_is_refused_where_eager_would_write_shared_memory():
    x, i = t(X), i64(1)

    def on_input(x, i):
        x[i] = 0.0
        return x

    def with_a_live_view(x, i):
        y = x * 1.0
        row = y[0]
        y[i] = 0.0
        return y + row

    def on_a_view(x, i):
        y = (x * 1.0)[1:]
        y[i] = 0.0
        return y

    for f, why in [(on_input, "it is an input of the traced function or body"),
                   (with_a_live_view, "a view of it is alive"),
                   (on_a_view, "it is a view of another tensor")]:
        with pytest.raises(hop.UnsupportedError, match=f"cannot update the traced tensor .* "
                                                       f"in place: {why}"):
            hop.trace(f, x, i)
    assert hop._C._trace_depth() == 0

    def fine(x, i):  # the view is dead by the time y is written
        y = x.clone()
        y[i] = y[i] * 2.0
        return y
    want = X.copy()
    want[1] *= 2
    np.testing.assert_array_equal(hop.trace(fine, x, i)(x, i).numpy(), want)


def test_the_graph_records_dynamic_slice_and_dynamic_update_slice():
    def f(x, i):
        y = x.clone()
        y[i] = x[i] * 2.0
        return y
    code = hop.trace(f, t(X), i64(1)).code
    assert 'dynamic_slice: "f64[3]" = dynamic_slice(x, 0, i, None)' in code
    assert 'dynamic_slice: "f64[2, 3]" = dynamic_slice(x, 0, i, 2)' in hop.trace(
        lambda x, i: x[i:i + 2], t(X), i64(1)).code
    assert "dynamic_update_slice(clone, " in code


def test_a_traced_slice_needs_a_size_known_while_tracing():
    with pytest.raises(hop.TraceError, match=r"x\[i:j\] with a tensor start i is a dynamic "
                                             r"slice, whose size must be known while tracing"):
        hop.trace(lambda x, i, j: x[i:j], t(X), i64(1), i64(3))
    with pytest.raises(hop.ShapeError, match=r"dynamic_slice: a slice of 6 elements does not "
                                             r"fit in dim 0 of f64\[5, 3\]"):
        hop.trace(lambda x, i: x[i:i + 6], t(X), i64(1))
    with pytest.raises(hop.ShapeError, match=r"dynamic_slice: a slice of 6 elements does not "
                                             r"fit in dim 0 of f64\[5, 3\]"):
        t(X)[i64(1):i64(7)]
    with pytest.raises(hop.ShapeError, match="does not fit in dim 0 of f64"):
        t(np.zeros((0, 3)))[i64(0)]


def test_indexing_by_a_loop_carry_in_a_compiled_fori_loop():
    table = t(np.arange(12.0).reshape(6, 2))

    def f(table):
        return hop.fori_loop(0, 8, lambda k, c: (c[0] + table[c[1]], c[1] + 1),
                             (hop.zeros(2, dtype=F64), 0))

    acc, i = every_mode(lambda tb: f(tb)[0], table), f(table)[1]
    assert i.item() == 8
    want = sum(np.arange(12.0).reshape(6, 2)[min(k, 5)] for k in range(8))
    np.testing.assert_array_equal(acc.numpy(), want)


# ---------------------------------------------------------------- autodiff

def fd(f, x, dx, eps=1e-6):
    return (f(t(x + eps * dx)).numpy() - f(t(x - eps * dx)).numpy()) / (2 * eps)


@pytest.mark.parametrize("i", [1, -1, 9])
def test_gradients_and_tangents_of_dynamic_indexing_match_finite_differences(i):
    rng = np.random.default_rng(3)
    x, dx, w = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), t(rng.normal(size=3))
    idx = i64(i)

    def f(x):
        y = x.sin()
        z = y.clone()
        z[idx] = y[idx:idx + 2].sum(0) * w
        return (z * z).sum(1) + x[idx].sum()

    want = fd(f, x, dx)
    _, tan = hop.jvp(f, (t(x),), (t(dx),))
    np.testing.assert_allclose(tan.numpy(), want, rtol=1e-6, atol=1e-8)
    ct = rng.normal(size=5)
    g = hop.grad(lambda x: (f(x) * t(ct)).sum())(t(x))
    np.testing.assert_allclose((g.numpy() * dx).sum(), (ct * want).sum(), rtol=1e-6)
    # the gradient reaches the row the value came from and nothing else
    g = hop.grad(lambda x: (x[idx] * w).sum())(t(x))
    onehot = np.zeros((5, 3))
    onehot[start(i, 5, 1)] = w.numpy()
    np.testing.assert_array_equal(g.numpy(), onehot)


def test_second_derivative_through_a_dynamic_update():
    j = i64(2)

    def f(x):
        y = x * 1.0
        y[j:j + 2] = x[0:2] * x[0:2]
        return (y * y).sum()
    x = t([1.0, 2.0, 3.0, 4.0])
    # f = x0^2 + x1^2 + x0^4 + x1^4: its Hessian is diagonal
    h = hop.grad(lambda x: (hop.grad(f)(x) * t([1.0, 1.0, 1.0, 1.0])).sum())(x)
    np.testing.assert_allclose(h.numpy(), [2 + 12, 2 + 48, 0.0, 0.0])


# ---------------------------------------------------------------- vmap

def test_vmap_with_an_index_per_example_is_a_loop_over_the_examples():
    rng = np.random.default_rng(5)
    xs, idx = rng.normal(size=(4, 5, 3)), np.array([0, 4, -1, 8])
    table = t(rng.normal(size=(5, 3)))

    def f(x, i):
        y = x.clone()
        y[i] = x[i:i + 2].sum(0) + table[i]
        return y

    for axes, args in [((0, 0), (t(xs), i64(idx))), ((None, 0), (t(xs[1]), i64(idx))),
                       ((0, None), (t(xs), i64(3)))]:
        got = hop.vmap(f, in_axes=axes)(*args)
        want = np.stack([f(*[a[b] if ax == 0 else a for a, ax in zip(args, axes)]).numpy()
                         for b in range(4)])
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
        compiled = hop.compile(lambda *a: hop.vmap(f, in_axes=axes)(*a))(*args)
        np.testing.assert_allclose(compiled.numpy(), want, rtol=1e-12)


def test_grad_of_vmap_and_vmap_of_grad_through_a_batched_index():
    rng = np.random.default_rng(6)
    xs, idx, cts = rng.normal(size=(3, 4, 2)), np.array([1, -2, 7]), rng.normal(size=(3, 2))

    def loss(x, i, c):
        return ((x[i] * x[i:i + 2].sum(0)) * c).sum()

    per = np.stack([hop.grad(loss)(t(xs[b]), i64(idx[b]), t(cts[b])).numpy() for b in range(3)])
    vg = hop.vmap(hop.grad(loss))(t(xs), i64(idx), t(cts))
    gv = hop.grad(lambda x, i, c: hop.vmap(loss)(x, i, c).sum())(t(xs), i64(idx), t(cts))
    np.testing.assert_allclose(vg.numpy(), per, rtol=1e-12)
    np.testing.assert_allclose(gv.numpy(), per, rtol=1e-12)


def test_a_loop_index_past_the_end_is_an_index_error_in_every_mode_as_eager():
    """x[i] with a Python int (a fori_loop's index, a SymInt when traced) keeps
    Python's IndexError; traced it was a plain hop.Error from the plan's
    select (HOP_RUNTIME), now OutOfBoundsError, an IndexError."""
    def f(v):
        def body(i, h):
            h = h * 1.0
            h[i] = h[i] + v * i
            return h
        return hop.fori_loop(0, 5, body, hop.zeros(4, 3, dtype=v.dtype)).sum()
    v = t([1.0, 2.0, 3.0])
    with pytest.raises(IndexError, match=r"^index 4 is out of bounds for dim 0 with size 4$"):
        f(v)
    vs = hop.stack([v, v * 2.0])
    for run, arg in ((hop.trace(f, v), v), (hop.grad(f), v), (hop.vmap(f), vs)):
        with pytest.raises(hop.OutOfBoundsError, match=r"index 4 is out of range for dim \d of "
                                                       r"f64\[(2, )?4, 3\]$"):
            run(arg)
    # hop.compile lets eager decide what its plan raised for the call's
    # values (docs/ARCHITECTURE.md): eager's own error and text
    with pytest.raises(IndexError, match=r"^index 4 is out of bounds for dim 0 with size 4$") \
            as got:
        hop.compile(f)(v)
    assert type(got.value) is IndexError


def test_a_write_at_a_loop_index_is_checked_as_eagers_int_index_not_clamped():
    """h[i] = v with a fori_loop's index: eagerly i is an int, so i past the
    end is an IndexError and i - 4 counts from the end.  Traced, the SymInt
    index was clamped like a tensor index: the last row was written and the
    compiled loop returned where eager raised."""
    def f(v, trips, shift):
        def body(i, h):
            h = h * 1.0
            h[i - shift] = v * (i + 1)
            return h
        return hop.fori_loop(0, trips, body, hop.zeros(4, 3, dtype=v.dtype))
    v = t([1.0, 2.0, 3.0])
    ok = lambda v: f(v, 4, 4)  # noqa: E731  rows -4..-1
    want = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0])
    for run in (ok, hop.trace(ok, v), hop.compile(ok)):
        np.testing.assert_array_equal(run(v).numpy(), want)
    g = hop.grad(lambda v: (ok(v) ** 2).sum())(v)
    np.testing.assert_allclose(g.numpy(), 2 * 30.0 * v.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(hop.vmap(ok)(hop.stack([v, v * 2.0])).numpy(),
                                  np.stack([want, 2 * want]))
    bad = lambda v: f(v, 5, 0)  # noqa: E731  i = 4 on 4 rows
    with pytest.raises(IndexError, match=r"^index 4 is out of bounds for dim 0 with size 4$"):
        bad(v)
    for run, arg in ((hop.trace(bad, v), v), (hop.vmap(bad), hop.stack([v, v]))):
        with pytest.raises(hop.OutOfBoundsError, match=r"index 4 is out of range for dim 0"):
            run(arg)
    with pytest.raises(IndexError, match=r"^index 4 is out of bounds for dim 0 with size 4$") \
            as got:
        hop.compile(bad)(v)  # eager decides (as above)
    assert type(got.value) is IndexError
