"""hop.numpy.linalg.lstsq's rank against NumPy's (issue #29): the rank
decides the solution, the rank returned and whether residuals are computed,
and NumPy takes it from gelsd's singular values, as hop does now (the op
linalg_lstsq; its bits: test_numpy_linalg_lstsq_gelsd.py).  On a matrix of
NumPy's own bits the count is NumPy's; on one that may differ, the plan
checks that no singular value lies within the error of the cutoff and
otherwise runs the call eagerly; the rank is then NumPy's and the residual
branch one cond instead of a graph break.  Here:
compiled vs NumPy on full-rank, rank-deficient and near-cutoff matrices,
float32/float64/complex, 1-d and 2-d b, rcond None/-1/explicit; the
near-cutoff calls fall back; the error bound the margin assumes, measured;
float32 computed in double as NumPy 1.24 does; gelsd's rcond rules."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop import _C
from hop.numpy import linalg as hla
from numpy_diff import check, same

LA = np.linalg
RNG = np.random.default_rng(29)


def _with_singular_values(m, n, s, rng=RNG):
    """An m x n matrix whose singular values are s (min(m, n) of them)."""
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal((m, k)))
    v, _ = np.linalg.qr(rng.standard_normal((n, k)))
    return (u * np.asarray(s, float)) @ v.T


def _fit(x, y):
    v = np.stack([x ** 3, x ** 2, x, np.ones_like(x)], axis=1)
    return np.linalg.lstsq(v, y, rcond=None)[0]


def _lstsq(rcond):
    return lambda a, b: LA.lstsq(a, b, rcond=rcond)


def _compiled(f, *args):
    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cf, cf(*args)


FULL = RNG.standard_normal((7, 3))
DEFICIENT = FULL.copy()
DEFICIENT[:, 2] = 2 * DEFICIENT[:, 0] - DEFICIENT[:, 1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("rcond", [None, -1, 1e-3])
@pytest.mark.parametrize("rhs", [(7,), (7, 2)])
@pytest.mark.parametrize("name", ["full", "deficient", "wide", "square"])
def test_compiled_lstsq_matches_numpy(name, rhs, rcond, dtype):
    a = {"full": FULL, "deficient": DEFICIENT, "wide": FULL[:3].T.copy(),
         "square": FULL[:3]}[name]
    b = RNG.standard_normal((a.shape[0],) + rhs[1:])
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(a.shape)
    # deficient: the zero singular value is gelsd's rounding noise, within
    # the margin of rcond=None's cutoff (eager decides)
    check(_lstsq(rcond), a.astype(dtype), b.astype(dtype),
          rtol=2e-5 if dtype == np.float32 else 1e-9)


def test_full_rank_tall_fit_stays_compiled_with_residuals():
    a = np.stack([FULL[:, 0], FULL[:, 1], np.ones(7)], 1)
    b = RNG.standard_normal(7)
    cf, got = _compiled(_lstsq(None), a, b)
    want = LA.lstsq(a, b, rcond=None)
    same(got, want, rtol=1e-9)
    assert got[2] == 3 and got[1].shape == (1,)
    assert cf.eager_calls == 0 and len(cf.graphs) == 1
    assert "graph break" not in cf.explain()


def test_rank_deficient_by_explicit_rcond_is_compiled_and_numpys():
    # s = [1, 0.5, 1e-6]: rank 2 under rcond=1e-4, far from the cutoff
    a = _with_singular_values(9, 3, [1.0, 0.5, 1e-6])
    b = RNG.standard_normal(9)
    cf, got = _compiled(_lstsq(1e-4), a, b)
    want = LA.lstsq(a, b, rcond=1e-4)
    same(got, want, rtol=1e-9)
    assert got[2] == 2 and got[1].shape == (0,)
    assert cf.eager_calls == 0


def _bits_equal(got, want):
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes(), (g, w)


@pytest.mark.parametrize("rel", [0.0, 1e-14, -1e-14, 4e-15])
def test_singular_value_at_the_cutoff_is_gelsds_count_and_stays_compiled(rel):
    # s[2] on the cutoff rcond * s[0] (or an ulp or so away): which side
    # gelsd's own s[2] falls is its rounding's; hop runs the same gelsd on
    # the same bits, so the plan answers NumPy's rank itself (before gelsd:
    # hop's SVD differed in the last bits and the call ran eagerly; a
    # matrix whose bits may differ from NumPy's still does:
    # test_numpy_linalg_precision.py, lstsq of a product)
    a = _with_singular_values(9, 3, [1.0, 0.5, 1e-3 * (1 + rel)])
    b = RNG.standard_normal(9)
    cf = hop.compile(_lstsq(1e-3))
    far = _with_singular_values(9, 3, [1.0, 0.5, 0.1])
    _bits_equal(cf(far, b), LA.lstsq(far, b, rcond=1e-3))
    _bits_equal(cf(a, b), LA.lstsq(a, b, rcond=1e-3))
    _bits_equal(cf(far, b), LA.lstsq(far, b, rcond=1e-3))
    assert cf.eager_calls == 0


def test_default_rcond_noise_singular_value_is_gelsds_count_compiled():
    # an exactly dependent column: its singular value is rounding noise of
    # the order of rcond=None's cutoff; gelsd's count on NumPy's bits is
    # NumPy's (before gelsd the call ran eagerly)
    b = RNG.standard_normal(7)
    cf, got = _compiled(_lstsq(None), DEFICIENT, b)
    _bits_equal(got, LA.lstsq(DEFICIENT, b, rcond=None))
    assert cf.eager_calls == 0


def test_zero_matrix_is_rank_zero_compiled():
    a, b = np.zeros((5, 3)), RNG.standard_normal(5)
    cf, got = _compiled(_lstsq(None), a, b)
    same(got, LA.lstsq(a, b, rcond=None))
    assert cf.eager_calls == 0


def test_rank_of_a_product_is_checked_at_run_time_and_stays_compiled():
    # a = x @ w: a float sum, whose difference from NumPy's is unbounded
    # relative to an element but bounded absolutely (2 gamma_3 |x| |w|, at
    # run time: _exact.absolute_error); far from the cutoff, the rank is
    # NumPy's and the residual branch one cond (before: a graph break)
    def f(x, w, b):
        return LA.lstsq(x @ w, b, rcond=None)
    x, w, b = RNG.standard_normal((8, 3)), RNG.standard_normal((3, 3)), RNG.standard_normal(8)
    cf, got = _compiled(f, x, w, b)
    same(got, f(x, w, b), rtol=1e-9)
    assert "graph break" not in cf.explain() and cf.eager_calls == 0
    assert got[2] == 3 and got[1].shape == (1,)


@pytest.mark.parametrize("n", [256, 262144])
def test_bench_cubic_fit_compiled_is_numpys_and_has_no_break(n):
    rng = np.random.default_rng(17)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    cf, got = _compiled(_fit, x, y)
    want = _fit(x, y)
    same(got, want, rtol=1e-5)
    assert cf.eager_calls == 0
    assert "graph break" not in cf.explain()


def test_float32_lstsq_computes_in_double_like_numpy():
    # NumPy 1.24 runs gelsd in double with double's eps for rcond=None:
    # s[2] / s[0] ~ 1e-4 is far above its cutoff (2000 * 2.2e-16), below
    # float32's (2000 * 1.2e-7); hop computed in float32 and gave rank 2
    a = (RNG.standard_normal((2000, 3)) * [1, 1, 1e-4]).astype(np.float32)
    b = RNG.standard_normal(2000).astype(np.float32)
    want = LA.lstsq(a, b, rcond=None)
    assert want[2] == 3
    eager = hnp.linalg.lstsq(hnp.asarray(a), hnp.asarray(b), rcond=None)
    assert int(eager[2]) == 3
    np.testing.assert_allclose(np.asarray(eager[0]), want[0], rtol=1e-5)
    check(_lstsq(None), a, b, rtol=1e-5)


@pytest.mark.parametrize("rcond", [-1, 0, 1.0, 2.0, "warn"])
def test_rcond_outside_zero_one_is_gelsds_machine_precision(rcond):
    # gelsd takes rcond <= 0 or >= 1 as its machine precision, 2**-53 (half
    # NumPy's eps): s = 1.5e-16 counts
    a, b = np.diag([1.0, 1.5e-16]), np.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        want = LA.lstsq(a, b, rcond=rcond)
        eager = hnp.linalg.lstsq(hnp.asarray(a), hnp.asarray(b), rcond=rcond)
    assert want[2] == 2 and int(eager[2]) == 2
    same(np.asarray(eager[0]), want[0])
    check(_lstsq(rcond), a, b)


def _hop_singular_values(a):
    m, n = a.shape
    p = _C._op("linalg_svd", hnp.asarray(a)._t, False)
    return p.select(0, m).slice(0, 0, min(m, n)).numpy()


@pytest.mark.parametrize("m, n", [(2, 2), (5, 3), (3, 5), (256, 4), (300, 40), (40, 300),
                                  (262144, 4)])
def test_hop_and_gelsd_singular_values_are_well_inside_the_margin(m, n):
    # the margin's model: each SVD within _SVD_ERROR * eps * max(m, n) *
    # s_max plus ulps; hop's and gelsd's differ by far less (measured worst:
    # 0.05 of eps * max(m, n) * s_max from 40 rows on, 2.4 ulps at 2 x 2)
    rng = np.random.default_rng(m * 1000 + n)
    eps = np.finfo(np.float64).eps
    bound = 2 * hla._SVD_ERROR * eps * max(m, n) + hla._SVD_ULPS * eps
    mats = [rng.standard_normal((m, n)),
            rng.standard_normal((m, n)) * np.logspace(0, -12, n),
            _with_singular_values(m, n, np.logspace(0, -15, min(m, n)), rng)]
    if m > n:
        x = rng.standard_normal(m).astype(np.float32).astype(np.float64)
        mats.append(np.stack([x ** p for p in range(n)], 1))
        dep = rng.standard_normal((m, n))
        dep[:, -1] = 3 * dep[:, 0] - dep[:, 1]
        mats.append(dep)
    for a in mats:
        want = LA.lstsq(a, np.ones(m), rcond=None)[3]
        diff = np.max(np.abs(_hop_singular_values(a) - want)) / want[0]
        assert diff <= bound / 4, (diff / (eps * max(m, n)), bound / (eps * max(m, n)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_functions_are_well_inside_relative_errors_ulp_budget(dtype):
    # _exact.relative_error credits an elementwise math function of exact
    # values with _ULPS_BUDGET ulps of difference from NumPy's; measured at
    # most 3 (SLEEF vs NumPy's SVML/glibc)
    from hop import _exact
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(20000) * 10).astype(dtype)
    fs = [lambda x: x ** 3, lambda x: np.abs(x) ** 2.5, np.exp, lambda x: np.log(np.abs(x)),
          np.sin, np.cos, np.tan, np.tanh, np.sinh, np.cosh, lambda x: np.arcsin(x / 30),
          np.arctan, np.cbrt, np.expm1, lambda x: np.log1p(np.abs(x)), np.exp2,
          lambda x: np.log2(np.abs(x)), lambda x: np.log10(np.abs(x))]
    for f in fs:
        cf = hop.compile(f)
        with np.errstate(all="ignore"):
            g, w = cf(x), f(x)
        ok = np.isfinite(w) & (w != 0)
        d = np.abs(g[ok].astype(np.float64) - w[ok]) / np.spacing(np.abs(w[ok]))
        assert d.max() <= _exact._ULPS_BUDGET / 4
        assert cf.eager_calls == 0


def test_relative_error_of_lineages():
    # exact ops: 0; pow of an argument: the budget; a sum: no bound; a
    # product: the operands' and one rounding
    from hop import _exact
    seen = {}

    def f(t):
        x = hnp.asarray(t)
        seen["exact"] = _exact.relative_error(hnp.stack([x * x, x, hnp.ones_like(x)], 1)._t)
        seen["pow"] = _exact.relative_error(hnp.stack([x ** 3, -x], 1)._t)
        seen["sum"] = _exact.relative_error((x + x ** 3)._t)
        seen["product"] = _exact.relative_error((x ** 3 * x)._t)
        return t
    hop.trace(f, hop.tensor(np.ones(4)))
    eps = np.finfo(np.float64).eps
    assert seen == {"exact": 0.0, "pow": _exact._ULPS_BUDGET * eps, "sum": None,
                    "product": (_exact._ULPS_BUDGET + 1) * eps}
