"""The ops issue #29 added to the op table, in hop's own API: values against
NumPy eagerly and in a compiled plan (fused groups included), gradients
against central finite differences in float64, forward mode, vmap against
a loop over examples, and put/searchsorted (NumPy's assignment, add.at and
searchsorted) with their checks."""

import numpy as np
import pytest

import hop
from test_autodiff import arr, close, fd_grad, t
from test_vmap import check as check_vmap, r

UNARY = {  # name -> (NumPy's function, a domain where it is smooth)
    "sinh": (np.sinh, (-3, 3)), "cosh": (np.cosh, (-3, 3)), "arcsin": (np.arcsin, (-0.9, 0.9)),
    "arccos": (np.arccos, (-0.9, 0.9)), "arcsinh": (np.arcsinh, (-3, 3)),
    "arccosh": (np.arccosh, (1.1, 4)), "arctanh": (np.arctanh, (-0.9, 0.9)),
    "cbrt": (np.cbrt, (0.2, 3)), "i0": (np.i0, (-9, 9)),
}
BINARY = {  # name -> (NumPy's function, domain of a, domain of b)
    "arctan2": (np.arctan2, (-2, 2), (0.5, 2)), "hypot": (np.hypot, (-2, 2), (0.5, 2)),
    "copysign": (np.copysign, (0.5, 2), (-2, 2)), "fmod": (np.fmod, (1, 2), (3, 4)),
    "nextafter": (np.nextafter, (-2, 2), (5, 6)),
}


def uniform(lo_hi, shape, seed):
    return np.random.default_rng(seed).uniform(lo_hi[0], lo_hi[1], shape)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_match_numpy_eagerly_and_compiled(name):
    fn, dom = UNARY[name]
    x = uniform(dom, (3, 5), 1)
    op = getattr(hop, name)
    for dt, rtol in ((np.float64, 1e-14), (np.float32, 3e-6)):
        want = fn(x.astype(dt))
        got = op(hop.tensor(x.astype(dt)))
        assert got.dtype.name == str(want.dtype)
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol)
        # in a plan: one fused group with an add (the op's vector function)
        comp = hop.compile(lambda v: getattr(v, name)() * 2.0 + 1.0)(hop.tensor(x.astype(dt)))
        np.testing.assert_allclose(comp.numpy(), want * 2 + 1, rtol=rtol * 4)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_float_ops_match_numpy_with_broadcasting(name):
    fn, da, db = BINARY[name]
    a, b = uniform(da, (4, 3), 2), uniform(db, (3,), 3)
    got = getattr(hop, name)(hop.tensor(a), hop.tensor(b))
    np.testing.assert_allclose(got.numpy(), fn(a, b), rtol=1e-15)
    got_s = getattr(hop, name)(hop.tensor(a), 1.5)  # a Python scalar operand
    np.testing.assert_allclose(got_s.numpy(), fn(a, 1.5), rtol=1e-15)
    comp = hop.compile(lambda u, v: getattr(hop, name)(u + 0.0, v))(hop.tensor(a), hop.tensor(b))
    np.testing.assert_allclose(comp.numpy(), fn(a, b), rtol=1e-15)
    for dt in (np.float64, np.float32):  # two 0-d operands (neither is a vector)
        x, y = np.array(a[0, 0], dt), np.array(b[1], dt)
        np.testing.assert_allclose(getattr(hop, name)(hop.tensor(x), hop.tensor(y)).numpy(),
                                   fn(x, y), rtol=2 * np.finfo(dt).eps, err_msg=dt.__name__)


def test_integer_ops_match_numpy_including_edge_counts_and_zero_divisors():
    a = np.array([7, -7, 12, 0, -128, 5], dtype=np.int8)
    b = np.array([3, 0, -18, 0, -1, 9], dtype=np.int8)
    for name in ["fmod", "gcd", "lcm"]:
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a, b)
        got = getattr(hop, name)(hop.tensor(a), hop.tensor(b)).numpy()
        np.testing.assert_array_equal(got, want, err_msg=name)
    x = np.array([1, -8, 3, -1, 5, 100], dtype=np.int64)
    c = np.array([63, 1, 64, 70, -1, 2], dtype=np.int64)
    np.testing.assert_array_equal(hop.left_shift(hop.tensor(x), hop.tensor(c)).numpy(),
                                  np.left_shift(x, c))
    np.testing.assert_array_equal(hop.right_shift(hop.tensor(x), hop.tensor(c)).numpy(),
                                  np.right_shift(x, c))


def test_ldexp_reads_its_exponent_as_an_integer_and_rounds_once():
    x = np.array([1.0, 3.0, 1e-300, 1e300, -0.0, np.inf])
    n = np.array([3, -1, 1100, -1100, 5, -5])
    np.testing.assert_array_equal(hop.ldexp(hop.tensor(x), hop.tensor(n)).numpy(),
                                  np.ldexp(x, n))


def test_integer_only_ops_refuse_floats_and_shifts_refuse_bools():
    with pytest.raises(hop.DTypeError, match=r"gcd: needs integer operands, got f32\[2\] and 2"):
        hop.gcd(hop.tensor([1.0, 2.0]), 2)
    with pytest.raises(hop.DTypeError, match="left_shift: needs integer operands"):
        hop.left_shift(hop.tensor([True]), hop.tensor([True]))
    with pytest.raises(hop.DTypeError, match="fmod: not supported for bool operands"):
        hop.fmod(hop.tensor([True]), True)


# ----------------------------------------------------------------- autodiff

@pytest.mark.parametrize("name", sorted(UNARY) + ["i1"])
def test_unary_grads_match_finite_differences(name):
    dom = UNARY.get(name, (None, (-9, 9)))[1]
    x = t(uniform(dom, (5,), 4))
    f = lambda v: (getattr(v, name)() * t([1.0, -2.0, 0.5, 3.0, 1.5])).sum()  # noqa: E731
    close(hop.grad(f)(x), fd_grad(f, [x], 0), 2e-6)
    d = t(uniform((-1, 1), (5,), 5))
    _, tan = hop.jvp(f, (x,), (d,))
    close(tan, float((arr(hop.grad(f)(x)) * arr(d)).sum()), 1e-9)


@pytest.mark.parametrize("name", sorted(BINARY) + ["ldexp"])
def test_binary_grads_match_finite_differences(name):
    if name == "ldexp":
        n = hop.tensor([2, -1, 0])
        f = lambda a: (hop.ldexp(a, n) * a).sum()  # noqa: E731
        a = t([0.3, -1.5, 2.0])
        close(hop.grad(f)(a), fd_grad(f, [a], 0), 1e-6)
        return
    _, da, db = BINARY[name]
    a, b = t(uniform(da, (2, 3), 6)), t(uniform(db, (3,), 7))
    f = lambda u, v: (getattr(hop, name)(u, v) * u).sum()  # noqa: E731
    ga, gb = hop.grad(f, argnums=(0, 1))(a, b)
    close(ga, fd_grad(f, [a, b], 0), 2e-6)
    close(gb, fd_grad(f, [a, b], 1), 2e-6)


def test_i1_gradient_at_zero_is_one_half():
    close(hop.grad(lambda v: hop.i1(v).sum())(t([0.0])), [0.5])


def test_integer_ops_and_searchsorted_carry_no_gradient():
    x = t([1.0, 2.5])
    f = lambda v: (v * hop._C._op("searchsorted", t([0.0, 2.0]), v, False).to(hop.float64)).sum()
    close(hop.grad(f)(x), [1.0, 2.0])


# ------------------------------------------------------------------- vmap

@pytest.mark.parametrize("name", ["sinh", "cosh", "arcsinh", "cbrt", "i0", "i1"])
def test_vmap_of_new_unary_ops_matches_a_loop(name):
    check_vmap(lambda x: getattr(x, name)(), (0,), r(4, 3))


def test_vmap_of_new_binary_ops_matches_a_loop():
    a, b = r(4, 3), r(3)
    for name in ["arctan2", "hypot", "copysign", "nextafter"]:
        check_vmap(getattr(hop, name), (0, None), a, b)
    ints = hop.tensor(np.arange(12).reshape(4, 3) - 5)
    for name in ["fmod", "gcd", "lcm", "left_shift", "right_shift"]:
        check_vmap(lambda x, name=name: getattr(hop, name)(x, 2), (0,), ints)


# --------------------------------------------------------------- put, search

def put(x, idx, v, acc=False):
    return hop._C._op("put", x, idx, v, acc)


def test_put_is_numpys_assignment_and_add_at():
    x = np.arange(6.0).reshape(2, 3)
    idx = np.array([[0, -1], [0, 2]])
    v = np.array([[10.0, 20.0], [30.0, 40.0]])
    want = x.copy()
    want.flat[idx.ravel() % 6] = v.ravel()  # NumPy's: the last write wins
    np.testing.assert_array_equal(put(hop.tensor(x), hop.tensor(idx), hop.tensor(v)).numpy(),
                                  want)
    want = x.copy()
    np.add.at(want.reshape(-1), idx.ravel(), v.ravel())
    np.testing.assert_array_equal(
        put(hop.tensor(x), hop.tensor(idx), hop.tensor(v), True).numpy(), want)
    comp = hop.compile(lambda a, i, w: put(a * 1.0, i, w, True))
    np.testing.assert_array_equal(comp(hop.tensor(x), hop.tensor(idx), hop.tensor(v)).numpy(),
                                  want)


def test_put_checks_indices_and_the_value_count_when_it_runs():
    f = hop.compile(lambda a, i, w: put(a, i, w))
    x, w = hop.tensor([1.0, 2.0, 3.0]), hop.tensor([5.0, 6.0])
    with pytest.raises(hop.OutOfBoundsError, match="put: index 3 is out of bounds for size 3"):
        f(x, hop.tensor([0, 3]), w)
    with pytest.raises(hop.ShapeError, match=r"put: cannot put 2 value\(s\) at 3 index\(es\)"):
        f(x, hop.tensor([0, 1, 2]), w)
    assert f(x, hop.tensor([2, 0]), w).tolist() == [6.0, 2.0, 5.0]


def test_put_gradient_reaches_only_the_value_written_last():
    x = t([1.0, 2.0, 3.0])
    idx = hop.tensor([0, 2, 0])
    v = t([10.0, 20.0, 30.0])
    w = t([1.0, 2.0, 3.0])

    def f(a, b, acc):
        return (put(a, idx, b, acc) * w).sum()
    ga, gb = hop.grad(lambda a, b: f(a, b, False), argnums=(0, 1))(x, v)
    close(ga, [0.0, 2.0, 0.0])
    close(gb, [0.0, 3.0, 1.0])  # value 0 is overwritten by value 2
    ga, gb = hop.grad(lambda a, b: f(a, b, True), argnums=(0, 1))(x, v)
    close(ga, [1.0, 2.0, 3.0])
    close(gb, [1.0, 3.0, 1.0])
    _, tan = hop.jvp(lambda b: f(x, b, False), (v,), (t([1.0, 1.0, 1.0]),))
    close(tan, 4.0)


def test_vmap_of_put_and_searchsorted_matches_a_loop():
    x, v = r(4, 5), r(4, 3)
    idx = hop.tensor(np.array([[0, 4, 0], [1, 1, -1], [2, 3, 4], [-5, 0, 1]]))
    for acc in (False, True):
        check_vmap(lambda a, i, b: put(a, i, b, acc), (0, 0, 0), x, idx, v)
        check_vmap(lambda a, b: put(a, hop.tensor([1, 3, 1]), b, acc), (0, 0), x, v)
        check_vmap(lambda b: put(x[0], hop.tensor([1, 3, 1]), b, acc), (0,), v)
    srt = hop.tensor(np.sort(np.random.default_rng(0).standard_normal((4, 6)), axis=1)
                     .astype(np.float32))
    vals = r(4, 2, 3)
    for right in (False, True):
        check_vmap(lambda a, b: hop._C._op("searchsorted", a, b, right), (0, 0), srt, vals)
        check_vmap(lambda b: hop._C._op("searchsorted", srt[0], b, right), (0,), vals)


def test_searchsorted_matches_numpy_with_nan_last():
    a = np.array([1.0, 2.0, 2.0, 3.0, np.nan])
    v = np.array([[0.0, 2.0, 2.5], [3.0, np.nan, 9.0]])
    for right, side in ((False, "left"), (True, "right")):
        got = hop._C._op("searchsorted", hop.tensor(a), hop.tensor(v), right).numpy()
        np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))
    with pytest.raises(hop.ShapeError, match="searchsorted: the sorted sequence must be 1-d"):
        hop._C._op("searchsorted", hop.tensor([[1.0]]), hop.tensor([1.0]), False)
