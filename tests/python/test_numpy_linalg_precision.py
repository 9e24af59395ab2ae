"""hop.numpy.linalg's precision and cutoffs against NumPy 1.24's.

NumPy's _commonType runs LAPACK in double for float32 and complex64 data
and casts the results back, so a float32 inverse or SVD is the double one
rounded, not a float32 computation's (errors of cond * eps32).  matrix_rank
and pinv then compare the cast singular values with a cutoff; a singular
value near it decides a count or whether 1/s is used, so under hop.compile
the plan checks that none lies within the two SVDs' difference of it and
otherwise runs the call eagerly (linalg._cutoff_checked).
"""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from numpy_diff import same

LA = np.linalg
F32 = np.float32
EPS32 = float(np.finfo(F32).eps)


def _orthogonal(rng, n):
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return q


def _with_singular_values(rng, s):
    n = len(s)
    return (_orthogonal(rng, n) * np.asarray(s, float)) @ _orthogonal(rng, n)


def _compiled(f):
    cf = hop.compile(f)

    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cf(*args)
    return cf, call


def _near_default_tol(rng, n=6):
    # smallest singular value within 1e-3 relative of matrix_rank's default
    # tol, max(m, n) * eps32 * s_max (s_max = 1), before the cast to float32
    s = [1, 0.5, 0.2, 0.1, 0.05, n * EPS32 * (1 + rng.uniform(-1e-3, 1e-3))]
    return _with_singular_values(rng, s).astype(F32)


def test_float32_matrix_rank_near_default_tol_is_numpys_compiled():
    # before: hop's float32 SVD and an unchecked count gave another rank in
    # about 40% of these
    rng = np.random.default_rng(33)
    cf, f = _compiled(lambda a: LA.matrix_rank(a))
    for _ in range(40):
        a = _near_default_tol(rng)
        got, want = f(a), LA.matrix_rank(a)
        assert got == want and np.asarray(got).dtype == np.asarray(want).dtype
        assert hnp.linalg.matrix_rank(hnp.asarray(a)) == want


def test_float32_hermitian_matrix_rank_near_default_tol_is_numpys_compiled():
    rng = np.random.default_rng(34)
    cf, f = _compiled(lambda a: LA.matrix_rank(a, hermitian=True))
    for _ in range(30):
        u = _orthogonal(rng, 6)
        s = [1, -0.5, 0.2, 0.1, 0.05, 6 * EPS32 * (1 + rng.uniform(-1e-3, 1e-3))]
        a = ((u * np.asarray(s)) @ u.T).astype(F32)
        a = (a + a.T) / 2
        assert f(a) == LA.matrix_rank(a, hermitian=True)


def _diag(values, dtype=F32):
    return np.diag(np.asarray(values, dtype))


@pytest.mark.parametrize("hermitian", [False, True])
def test_matrix_rank_singular_value_on_the_default_tol_runs_eagerly(hermitian):
    # a diagonal matrix's singular values are exact: s[-1] on the float32
    # tol 6 * eps32 (NumPy: not above it, rank 5) or an ulp either side
    cf, f = _compiled(lambda a: LA.matrix_rank(a, hermitian=hermitian))
    far = _diag([1, 0.5, 0.2, 0.1, 0.05, 1e-3])
    assert f(far) == 6 and cf.eager_calls == 0
    tol = F32(6 * EPS32)
    for x in [tol, np.nextafter(tol, F32(1)), np.nextafter(tol, F32(0))]:
        a = _diag([1, 0.5, 0.2, 0.1, 0.05, x])
        before = cf.eager_calls
        assert f(a) == LA.matrix_rank(a, hermitian=hermitian)
        assert cf.eager_calls == before + 1
    assert f(far) == 6 and cf.eager_calls == 3
    assert LA.matrix_rank(_diag([1, 0.5, 0.2, 0.1, 0.05, tol])) == 5


def test_matrix_rank_python_float_tol_compares_in_double_like_numpy():
    # asarray(0.1) is float64, so NumPy compares float32(0.1) > 0.1 in
    # double (true); before, hop cast tol to float32 and counted 1
    a = _diag([1.0, 0.1])
    assert LA.matrix_rank(a, tol=0.1) == 2
    assert hnp.linalg.matrix_rank(hnp.asarray(a), tol=0.1) == 2
    cf, f = _compiled(lambda a: LA.matrix_rank(a, tol=0.1))
    assert f(a) == 2
    # a float32 tol compares in float32: not above
    assert LA.matrix_rank(a, tol=F32(0.1)) == 1
    assert hnp.linalg.matrix_rank(hnp.asarray(a), tol=F32(0.1)) == 1


def test_stacked_tol_on_a_singular_value_runs_eagerly_far_stays_compiled():
    cf, f = _compiled(lambda a, t: LA.matrix_rank(a, tol=t))
    a = np.stack([_diag([1, 0.5, 0.25]), _diag([2, 1, 0.125])])
    far = np.array([0.3, 0.1])
    same(f(a, far), LA.matrix_rank(a, tol=far))
    assert cf.eager_calls == 0
    on = np.array([0.3, 0.125])  # the second matrix's s[2] on its tol
    got, want = f(a, on), LA.matrix_rank(a, tol=on)
    same(got, want)
    assert list(want) == [2, 2] and cf.eager_calls == 1


def test_pinv_singular_value_on_the_cutoff_runs_eagerly():
    # rcond * s_max is 1e-3 in double (NumPy: a float64 rcond array times
    # float32 s_max) and s[2] is float32(1e-3), just above it: NumPy inverts
    # it (1/s, about 1000); before, hop compared in float32, dropped it,
    # and answered 0 there
    a = _diag([1, 0.5, 1e-3])
    want = LA.pinv(a, rcond=1e-3)
    inv_s = F32(1) / F32(1e-3)
    assert want[2, 2] == inv_s
    assert hnp.linalg.pinv(hnp.asarray(a), rcond=1e-3)[2, 2] == inv_s
    cf, f = _compiled(lambda a: LA.pinv(a, rcond=1e-3))
    same(f(_diag([1, 0.5, 0.1])), LA.pinv(_diag([1, 0.5, 0.1]), rcond=1e-3))
    assert cf.eager_calls == 0
    same(f(a), want)
    assert cf.eager_calls == 1


def test_float32_pinv_near_its_cutoff_is_numpys_and_far_stays_compiled():
    rng = np.random.default_rng(35)
    cf, f = _compiled(lambda a: LA.pinv(a, rcond=1e-3))
    for _ in range(20):
        a = _with_singular_values(rng, [1, 0.5, 0.2, 0.1, 1e-3 * (1 + rng.uniform(-1e-5, 1e-5))])
        a = a.astype(F32)
        got, want = f(a), LA.pinv(a, rcond=1e-3)
        assert got.dtype == want.dtype == F32
        assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()
    eager = cf.eager_calls
    for _ in range(5):
        a = _with_singular_values(rng, [1, 0.5, 0.2, 0.1, 0.01]).astype(F32)
        got, want = f(a), LA.pinv(a, rcond=1e-3)
        assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()
    assert cf.eager_calls == eager


def _ill_conditioned(rng, dtype, n=5, cond=1e4):
    a = _with_singular_values(rng, np.logspace(0, -np.log10(cond), n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * _with_singular_values(rng, np.logspace(0, -np.log10(cond), n))
    return a.astype(dtype)


def _spd(a):
    return (a @ a.conj().T + np.eye(a.shape[0])).astype(a.dtype)


FUNCS = {
    "inv": lambda a: LA.inv(a),
    "solve": lambda a: LA.solve(a, a[..., 0] + 1),
    "det": lambda a: LA.det(a),
    "slogdet": lambda a: LA.slogdet(a),
    "cholesky": lambda a: LA.cholesky(_spd(a)),
    "qr": lambda a: LA.qr(a),
    "qr_r": lambda a: LA.qr(a, mode="r"),
    "svd": lambda a: LA.svd(a),
    "svdvals": lambda a: LA.svd(a, compute_uv=False),
    "eigh": lambda a: LA.eigh(a + a.conj().T),
    "eigvalsh": lambda a: LA.eigvalsh(a + a.conj().T),
    "eig": lambda a: LA.eig(a + a.conj().T),
    "eigvals": lambda a: LA.eigvals(a + a.conj().T),
    "norm2": lambda a: LA.norm(a, 2),
    "norm-2": lambda a: LA.norm(a, -2),
    "nuc": lambda a: LA.norm(a, "nuc"),
    "cond": lambda a: LA.cond(a),
    "cond1": lambda a: LA.cond(a, 1),
    "pinv": lambda a: LA.pinv(a),
    "tensorinv": lambda a: LA.tensorinv(a.reshape(5, 5, 1), ind=1),
    "tensorsolve": lambda a: LA.tensorsolve(a, a[0]),
}


def _parts(r):
    return list(r) if isinstance(r, tuple) else [r]


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_single_precision_results_are_numpys_double_computation_cast(name, dtype):
    # cond 1e4: a float32 computation is off by about 1e-3 relative (the
    # small singular values, the inverse), the double one cast by an ulp or
    # so
    fn = FUNCS[name]
    a = _ill_conditioned(np.random.default_rng(36), dtype)
    want = fn(a)
    cf, f = _compiled(fn)
    for got in (f(a), fn(hnp.asarray(a))):
        for g, w in zip(_parts(got), _parts(want), strict=True):
            g, w = np.asarray(g), np.asarray(w)
            assert g.dtype == w.dtype and g.shape == w.shape
            # values (s, w, det): each to 1e-6 of itself; matrices to 1e-6 of
            # their largest element
            scale = np.abs(w) if w.ndim < 2 else np.abs(w).max()
            assert np.all(np.abs(g - w) <= 1e-6 * scale), name
    assert cf.eager_calls == 0


@pytest.mark.parametrize("name", ["matrix_power", "multi_dot"])
def test_matmul_functions_stay_in_the_input_dtype(name):
    # NumPy computes these with matmul in float32: no double step
    a = _ill_conditioned(np.random.default_rng(37), F32)
    fn = {"matrix_power": lambda a: LA.matrix_power(a, 3),
          "multi_dot": lambda a: LA.multi_dot([a, a, a])}[name]
    cf, f = _compiled(fn)
    got, want = f(a), fn(a)
    assert got.dtype == want.dtype == F32
    same(got, want, rtol=1e-5)


# Sums and products (np.cov, einsum, x @ w): hop adds in other orders than
# NumPy (its pairwise sums, OpenBLAS's blocking), so its matrix differs from
# NumPy's in the last bits, and no relative bound holds for it
# (cancellation).  The plan bounds the difference at run time
# (_exact.absolute_error: 2 gamma_k |x| |w| for a product of exact
# operands) and checks the singular values against it.

def _einsum(x, w):
    return np.einsum("ij,jk->ik", x, w)


def test_matrix_rank_of_a_covariance_with_tol_on_numpys_singular_value_is_numpys():
    # tol is one of NumPy's own singular values of np.cov(x): before, hop
    # counted its own matrix's and gave another rank in 24 of these 60,
    # silently
    rng = np.random.default_rng(41)
    cf, f = _compiled(lambda x, t: LA.matrix_rank(np.cov(x), tol=t))
    for i in range(60):
        x = rng.standard_normal((6, 20))
        t = np.asarray(LA.svd(np.cov(x), compute_uv=False)[i % 6])
        assert f(x, t) == LA.matrix_rank(np.cov(x), tol=t), i
    assert cf.recompiles == 0


def test_pinv_of_a_product_with_rcond_on_the_cutoff_is_numpys():
    # rcond * s_max within an ulp or two of NumPy's s[-1]: a different
    # choice changes the result by about 1 / s[-1] (22 of 40 before)
    rng = np.random.default_rng(42)
    cf, f = _compiled(lambda x, w, rc: LA.pinv(_einsum(x, w), rcond=rc))
    for i in range(40):
        x = _with_singular_values(rng, [1, 0.5, 0.2, 0.1, 0.05, 1e-3])
        w = _orthogonal(rng, 6)
        s = LA.svd(_einsum(x, w), compute_uv=False)
        rc = np.asarray(s[-1] / s[0] * (1 + (i % 5 - 2) * 1e-16))
        got, want = f(x, w, rc), LA.pinv(_einsum(x, w), rcond=rc)
        assert np.abs(got - want).max() <= 1e-9 * np.abs(want).max(), i


def test_lstsq_rank_of_a_product_near_rcond_is_numpys():
    # s[-1] / s[0] within 4e-16 relative of rcond: the rank (and whether
    # residuals are computed) is NumPy's in every case (16 of 60 before)
    rng = np.random.default_rng(43)
    rc = 1e-3
    cf, f = _compiled(lambda x, w, b: LA.lstsq(_einsum(x, w), b, rcond=rc))
    for i in range(60):
        x = _with_singular_values(rng, [1, 0.5, 0.2, rc * (1 + rng.uniform(-4e-16, 4e-16))])
        w = _orthogonal(rng, 4)
        b = rng.standard_normal(4)
        got, want = f(x, w, b), LA.lstsq(_einsum(x, w), b, rcond=rc)
        assert got[2] == want[2] and got[1].shape == want[1].shape, i
        same(got[3], want[3], rtol=1e-12)


def test_matrix_rank_after_a_data_dependent_branch_is_numpys():
    # traced anew inside a side of the branch (where no lineage is read):
    # not hop's unchecked count but a break, then the resumed code's check
    def f(x, t):
        if x[0, 0] > -10:
            return LA.matrix_rank(np.cov(x), tol=t)
        return -1
    rng = np.random.default_rng(41)
    cf, g = _compiled(f)
    for i in range(60):
        x = rng.standard_normal((6, 20))
        t = np.asarray(LA.svd(np.cov(x), compute_uv=False)[i % 6])
        assert g(x, t) == f(x, t), i
    assert "its True side breaks the graph: hop.numpy.linalg: matrix_rank" in cf.explain()


def _near_cutoff_stacks(rng, n):
    # tol is one of NumPy's own singular values of np.cov(x[0]): hop's count
    # of its own matrix differs from NumPy's in about half of these
    for i in range(n):
        x = rng.standard_normal((2, 6, 20))
        yield x, np.asarray(LA.svd(np.cov(x[0]), compute_uv=False)[i % 6])


_IN_BODIES = {
    "map matrix_rank": lambda x, t: hop.map(lambda m: LA.matrix_rank(np.cov(m), tol=t), x),
    "cond matrix_rank": lambda x, t: hop.cond(t > 0, lambda: LA.matrix_rank(np.cov(x[0]), tol=t),
                                              lambda: LA.matrix_rank(np.cov(x[1]), tol=t)),
    "map pinv": lambda x, t: hop.map(lambda m: LA.pinv(np.cov(m), rcond=t), x),
    "map lstsq": lambda x, t: hop.map(lambda m: LA.lstsq(np.cov(m), m[:, 0], rcond=1e-3)[0], x),
}
_IN_BODIES_WHAT = {"map matrix_rank": "matrix_rank", "cond matrix_rank": "matrix_rank",
                   "map pinv": "pinv", "map lstsq": "lstsq's rank"}


# How many of the 30 near-cutoff stacks fail the check: tol on NumPy's own
# singular value of np.cov(x[0]) always does; pinv's rcond t and lstsq's
# 1e-3 are far from every singular value's ratio
_IN_BODIES_EAGER = {"map matrix_rank": 30, "cond matrix_rank": 30, "map pinv": 0,
                    "map lstsq": 0}


def _rowwise(name, x, t):
    """What NumPy gives for _IN_BODIES[name] (a row at a time)."""
    if name == "map matrix_rank":
        return np.array([LA.matrix_rank(np.cov(m), tol=t) for m in x])
    if name == "cond matrix_rank":
        return LA.matrix_rank(np.cov(x[0] if t > 0 else x[1]), tol=t)
    if name == "map pinv":
        return np.stack([LA.pinv(np.cov(m), rcond=t) for m in x])
    return np.stack([LA.lstsq(np.cov(m), m[:, 0], rcond=1e-3)[0] for m in x])


def _as_eager(fn, stacks, check=None):
    """hop.compile(fn) called on each (x, t) of stacks: the compiled
    function and the last call's result, each checked to be the eager
    call's (dtype and values) and then passed to check(got, x, t)."""
    cf, f = _compiled(fn)
    for x, t in stacks:
        got = f(x, t)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = fn(x, t)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        assert np.array_equal(got, want)
        if check is not None:
            check(got, x, t)
    return cf, got


@pytest.mark.parametrize("name", sorted(_IN_BODIES))
def test_cutoff_decision_in_a_hop_body_is_checked_under_compile(name):
    # the body's lineage is read out to the function's arguments (through
    # the map's slice and cond's lifted inputs), so the plan checks the
    # decision there as at the root; a failed check runs the whole call
    # eagerly.  Before: UnsupportedError (and before that, hop's unchecked
    # count: 9 of these 30 hop.map matrix_rank stacks differed from NumPy's)
    def numpys(got, x, t):
        if name.startswith("cond") or not _IN_BODIES_EAGER[name]:
            # (a cond's eager branch is NumPy's own; a passed check: NumPy's)
            same(got, _rowwise(name, x, t), rtol=1e-12)
    rng = np.random.default_rng(41)
    cf, _ = _as_eager(_IN_BODIES[name], _near_cutoff_stacks(rng, 30), numpys)
    assert cf.eager_calls == _IN_BODIES_EAGER[name] and cf.recompiles == 0


def test_matrix_rank_in_a_hop_body_is_checked_under_trace():
    # before: UnsupportedError (and before that, hop's unchecked count: 14
    # of 30 stacks differed from NumPy's, silently); now the plan checks the
    # count and raises CheckError where it cannot vouch for it
    rng = np.random.default_rng(41)
    f = _IN_BODIES["map matrix_rank"]
    stacks = list(_near_cutoff_stacks(rng, 3))
    gm = hop.trace(f, *stacks[0])
    for x, t in stacks:
        with pytest.raises(hop.CheckError) as e:
            gm(x, t)
        assert "of kind NUMPY_CUTOFF" in str(e.value)
    x = rng.standard_normal((2, 6, 20))
    t = np.asarray(1e-6)
    assert np.array_equal(gm(x, t), [LA.matrix_rank(np.cov(m), tol=t) for m in x])


def _rank_of_rows(m):
    return hop.map(lambda r: LA.matrix_rank(np.outer(r, r) + np.eye(20)), m)


_DEPTH_2 = {
    "map of map": lambda x, t: hop.map(_rank_of_rows, x),
    "cond of map": lambda x, t: hop.cond(np.sum(x) < 1e9,
                                         lambda x: hop.map(lambda m: LA.pinv(m @ m.T), x),
                                         lambda x: hop.map(lambda m: LA.pinv(m @ m.T) * 2, x),
                                         (x,)),
    "cond of map tol": lambda x, t: hop.cond(np.sum(x) < 1e9, lambda x: hop.map(
        lambda m: LA.matrix_rank(np.cov(m), tol=t), x), lambda x: np.zeros(2, np.int64), (x,)),
}


@pytest.mark.parametrize("name", sorted(_DEPTH_2))
def test_cutoff_decision_two_bodies_deep_is_checked(name):
    # a body's lineage is followed through every enclosing body (a cond's
    # lifted inputs, a map's slices) to the arguments.  Before: the inner
    # body refused (UnsupportedError)
    rng = np.random.default_rng(45)
    fn = _DEPTH_2[name]
    stacks = list(_near_cutoff_stacks(rng, 4))
    cf, got = _as_eager(fn, stacks)
    x, t = stacks[-1]
    if name == "map of map":
        assert np.array_equal(got, np.full((2, 6), 20))
    if name == "cond of map":
        same(got, np.stack([LA.pinv(m @ m.T) for m in x]), rtol=1e-12)
    # tol on a singular value: the check fails, the whole call runs eagerly
    assert cf.eager_calls == (4 if name == "cond of map tol" else 0)
    gm = hop.trace(fn, x, t)
    if name == "cond of map tol":
        with pytest.raises(hop.CheckError):
            gm(x, t)
    else:
        assert np.array_equal(gm(x, t), got)


def test_cutoff_decision_in_a_loop_body_follows_closures_not_carries():
    # a value the loop body closes over is the same on every iteration:
    # followed to the argument; a carry changes, so it has no lineage
    x = np.random.default_rng(2).standard_normal((4, 6))
    closure = lambda x: hop.fori_loop(  # noqa: E731
        0, 2, lambda i, v: v + LA.matrix_rank(x @ x.T + np.eye(4)), np.int64(0))
    cf, f = _compiled(closure)
    assert f(x) == closure(x) == 8 and cf.eager_calls == 0
    carry = lambda x: hop.fori_loop(0, 2, lambda i, v: v * 0.5 + LA.pinv(v), x @ x.T)  # noqa
    with pytest.raises(hop.UnsupportedError, match="^hop.numpy.linalg: pinv inside a HOP body"):
        hop.trace(carry, x)
    assert hop._C._trace_depth() == 0


def test_cutoff_decision_in_a_body_with_no_bound_is_refused_naming_it():
    # a complex product has no bound (_exact.absolute_error): the body
    # cannot check the count, and there is no break in a body
    f = lambda x: hop.map(lambda m: LA.matrix_rank(m @ (m.T * 1j)), x)  # noqa: E731
    x = np.random.default_rng(1).standard_normal((2, 3, 3))
    with pytest.raises(hop.UnsupportedError) as e:
        hop.trace(f, x)
    assert str(e.value).startswith(
        "hop.numpy.linalg: matrix_rank inside a HOP body (hop.map, hop.cond, a loop) compares "
        "hop's singular values with a cutoff, and hop cannot bound there how far this matrix "
        "(its lineage: ")
    assert hop._C._trace_depth() == 0


def test_well_separated_sums_and_products_stay_compiled():
    # full rank, singular values far from any cutoff: the run-time bound
    # (about k * eps of the entries) passes, no call runs eagerly
    rng = np.random.default_rng(44)
    for dtype in (F32, np.float64):
        fr = _compiled(lambda z: LA.matrix_rank(np.cov(z)))
        fp = _compiled(lambda x, w: LA.pinv(_einsum(x, w)))
        fl = _compiled(lambda x, w, b: LA.lstsq((x - x.mean(0)) @ w + x, b, rcond=None)[:3])
        for _ in range(5):
            x = _with_singular_values(rng, [1, 0.5, 0.2, 0.1, 0.05, 0.01]).astype(dtype)
            w = _orthogonal(rng, 6).astype(dtype)
            b = rng.standard_normal(6).astype(dtype)
            z = rng.standard_normal((6, 20)).astype(dtype)
            assert fr[1](z) == LA.matrix_rank(np.cov(z)) == 6
            same(fp[1](x, w), LA.pinv(_einsum(x, w)), rtol=1e-4 if dtype == F32 else 1e-10)
            got, want = fl[1](x, w, b), LA.lstsq((x - x.mean(0)) @ w + x, b, rcond=None)[:3]
            assert got[2] == want[2] == 6
        for cf, _ in (fr, fp, fl):
            assert cf.eager_calls == 0 and cf.recompiles == 0
            assert "fallback" not in cf.explain()


def test_product_whose_singular_value_is_noise_runs_eagerly():
    # x (6 x 3) @ w (3 x 6) has rank 3: its other singular values are
    # rounding noise of the cutoff's order, within the bound, so NumPy counts
    rng = np.random.default_rng(45)
    cf, f = _compiled(lambda x, w: LA.matrix_rank(x @ w, tol=1e-300))
    x, w = rng.standard_normal((6, 3)), rng.standard_normal((3, 6))
    assert f(x, w) == LA.matrix_rank(x @ w, tol=1e-300)
    assert cf.eager_calls == 1


def test_matrix_rank_of_a_complex_product_is_numpys_not_hops_unchecked_count():
    # no bound for complex products: the decision is NumPy's (a graph break)
    rng = np.random.default_rng(46)
    cf, f = _compiled(lambda x, w, t: LA.matrix_rank(x @ w, tol=t))
    for i in range(20):
        x = _with_singular_values(rng, [1, 0.5, 0.2, 0.1, 0.05, 1e-3]) * (1 + 1j)
        w = _orthogonal(rng, 6).astype(np.complex64)
        x = x.astype(np.complex64)
        s = LA.svd(x @ w, compute_uv=False)
        t = np.asarray(s[-1])
        assert f(x, w, t) == LA.matrix_rank(x @ w, tol=t), i
    assert "cannot bound how far this matrix" in cf.explain()


def test_absolute_error_bounds_hops_product_and_sum_from_numpys():
    # the bound itself: |hop's - NumPy's| <= E elementwise for a lineage of
    # matmuls, sums, products and quotients, E about gamma_k |x| |w|
    from hop import _exact
    rng = np.random.default_rng(47)

    def fn(x, w, b):
        x, w, b = hnp.asarray(x), hnp.asarray(w), hnp.asarray(b)
        y = (x @ w + b) * x - (x @ w).sum(0) / 3.0
        y = hnp.sqrt(hnp.abs(y) + 1.0) @ w.T
        return y._t, _exact.absolute_error(y._t)
    for dtype in (F32, np.float64):
        x = rng.standard_normal((8, 8)).astype(dtype)
        w = rng.standard_normal((8, 8)).astype(dtype)
        b = rng.standard_normal(8).astype(dtype)
        args = [hop.tensor(v) for v in (x, w, b)]
        got, e = (np.asarray(v) for v in hop.trace(fn, *args)(*args))
        y = (x @ w + b) * x - (x @ w).sum(0) / dtype(3.0)
        want = np.sqrt(np.abs(y) + dtype(1.0)) @ w.T
        e = np.asarray(e)
        assert e.dtype == np.float64
        assert np.all(np.abs(got.astype(float) - want) <= e)
        u = float(np.finfo(dtype).eps) / 2
        assert np.all(e <= 1e4 * u * (np.abs(want) + 1)) and np.any(e > 0)


# cond of a singular matrix: NumPy 1.24 inverts with errors ignored (its
# gufunc inv writes NaN for a zero pivot), so cond is inf for every p but
# 'nuc' (whose SVD of NaN raises); before, hop.numpy's inv raised
# LinAlgError (eagerly; a compiled call ran eagerly for it)

SINGULAR = {
    "float64": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "float32": np.array([[1.0, 2.0], [2.0, 4.0]], F32),
    "complex128": np.array([[1.0, 2.0], [2.0, 4.0]]) * (1 + 1j),
    "zeros": np.zeros((3, 3)),
    "stacked": np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]]),
}


@pytest.mark.parametrize("p", [1, -1, np.inf, -np.inf, "fro"])
@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_cond_of_a_singular_matrix_is_numpys_inf(name, p):
    a = SINGULAR[name]
    with np.errstate(all="ignore"):
        want = LA.cond(a, p)
    assert np.isinf(np.asarray(want).ravel()[-1])
    same(np.asarray(hnp.linalg.cond(hnp.asarray(a), p)), np.asarray(want))
    cf, f = _compiled(lambda a: LA.cond(a, p))
    same(f(a), want)
    assert cf.eager_calls == 0


@pytest.mark.parametrize("p", [None, 2, -2])
def test_cond_of_a_zero_matrix_by_its_singular_values_is_numpys(p):
    a = np.zeros((3, 3))
    with np.errstate(all="ignore"):
        want = LA.cond(a, p)  # 0 / 0: NaN, made inf
    assert want == np.inf
    same(np.asarray(hnp.linalg.cond(hnp.asarray(a), p)), np.asarray(want))
    cf, f = _compiled(lambda a: LA.cond(a, p))
    same(f(a), want)


def test_cond_nuc_of_a_singular_matrix_raises_numpys_svd_error():
    a = SINGULAR["float64"]
    with pytest.raises(LA.LinAlgError, match="SVD did not converge"):
        LA.cond(a, "nuc")
    with pytest.raises(LA.LinAlgError, match="SVD did not converge"):
        hnp.linalg.cond(hnp.asarray(a), "nuc")
    cf, f = _compiled(lambda a: LA.cond(a, "nuc"))
    with pytest.raises(LA.LinAlgError, match="SVD did not converge"):
        f(a)


def test_cond_of_a_nearly_singular_matrix_stays_finite_like_numpy():
    # no zero pivot: NumPy's inverse is huge but finite, and so is cond
    a = np.array([[1.0, 2.0], [1.0, 2.0 + 1e-12]])
    want = LA.cond(a, 1)
    assert np.isfinite(want)
    same(np.asarray(hnp.linalg.cond(hnp.asarray(a), 1)), np.asarray(want), rtol=1e-3)


# svd and pinv with hermitian=True: NumPy 1.24 takes eigh's values by
# decreasing magnitude (its argsort: its order of ties) and moves their
# signs into vh; hop refused them before

def _hermitian_case(rng, dtype, shape=(4, 4)):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return (a + np.swapaxes(a, -1, -2).conj()).astype(dtype)


HERMITIAN_FUNCS = {
    "svd": lambda a: LA.svd(a, hermitian=True),
    "svd_reduced": lambda a: LA.svd(a, full_matrices=False, hermitian=True),
    "svdvals": lambda a: LA.svd(a, compute_uv=False, hermitian=True),
    "pinv": lambda a: LA.pinv(a, hermitian=True),
    "pinv_rcond": lambda a: LA.pinv(a, rcond=0.3, hermitian=True),
}


@pytest.mark.parametrize("dtype", [F32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("name", sorted(HERMITIAN_FUNCS))
def test_hermitian_svd_and_pinv_are_numpys(name, dtype):
    fn = HERMITIAN_FUNCS[name]
    rng = np.random.default_rng(48)
    rtol = 1e-5 if dtype in (F32, np.complex64) else 1e-11
    cf, f = _compiled(fn)
    # a random one, a stack, and ties in |s| (1, -1, 1, 2): NumPy's argsort
    # order decides which eigenvector comes first
    for a in (_hermitian_case(rng, dtype), _hermitian_case(rng, dtype, (2, 3, 3)),
              np.diag([1.0, -1.0, 1.0, 2.0]).astype(dtype)):
        want = fn(a)
        for got in (f(a), fn(hnp.asarray(a))):
            for g, w in zip(_parts(got), _parts(want), strict=True):
                g = np.asarray(g)
                assert g.dtype == w.dtype and g.shape == w.shape, name
                assert np.all(np.abs(g - w) <= rtol * np.abs(w).max()), name
    assert cf.eager_calls == 0


def test_hermitian_svd_of_a_non_square_matrix_raises_numpys_error():
    for fn in (HERMITIAN_FUNCS["svd"], HERMITIAN_FUNCS["pinv"]):
        with pytest.raises(LA.LinAlgError, match="must be square"):
            fn(np.ones((2, 3)))
        with pytest.raises(LA.LinAlgError, match="must be square"):
            fn(hnp.ones((2, 3)))
    same(np.asarray(LA.pinv(hnp.ones((0, 3)), hermitian=True)),
         LA.pinv(np.ones((0, 3)), hermitian=True))


def test_frobenius_error_bounds_a_product_per_matrix():
    # x @ w of exact operands: 2 gamma_k ||x||_F ||w||_F per matrix; other
    # lineages: the norm of absolute_error's bound.  The bound holds against
    # the exact product (long double: 64-bit significands, enough for
    # float64 products of 200 terms to round far below the bound), and the
    # float64 product does round (whether hop's bits equal NumPy's depends on
    # the CPU's BLAS kernel: equal on an AVX2 EPYC, not on an AVX-512 Xeon)
    from hop import _exact
    rng = np.random.default_rng(49)

    def fn(x, w):
        x, w = hnp.asarray(x), hnp.asarray(w)
        p, q = x @ w, (x @ w) * 0.5 + x
        return p._t, _exact.frobenius_error(p._t), q._t, _exact.frobenius_error(q._t)
    for dtype, shape in ((np.float64, (200, 200)), (F32, (3, 40, 40))):
        x, w = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
        args = [hop.tensor(v) for v in (x, w)]
        p, dp, q, dq = (np.asarray(v) for v in hop.trace(fn, *args)(*args))
        assert dp.shape == dq.shape == shape[:-2] and dp.dtype == np.float64
        for got, d, want in ((p, dp, x @ w), (q, dq, (x @ w) * dtype(0.5) + x)):
            diff = np.sqrt(((got.astype(float) - want) ** 2).sum((-2, -1)))
            assert np.all(diff <= d)
            # about k eps ||x||_F ||w||_F: no looser than 8 times that
            fx, fw = (np.sqrt((v.astype(float) ** 2).sum((-2, -1))) for v in (x, w))
            assert np.all(d <= 8 * shape[-1] * np.finfo(dtype).eps * fx * fw)
        if dtype == np.float64:
            exact = x.astype(np.longdouble) @ w.astype(np.longdouble)
            assert np.sqrt(((p - exact) ** 2).sum()) <= dp
            assert np.any(p != exact)
