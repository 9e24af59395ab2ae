"""hop.numpy.linalg: numpy.linalg over hop's LAPACK ops (runtime/linalg.c).

Each function has NumPy 1.24's signature, result dtypes (float32 and
complex64 results stay single precision, integers compute in float64,
float16 is NumPy's TypeError), precision (like NumPy's _commonType, LAPACK
runs in double for single-precision data too and the results are cast
after; matrix_power and multi_dot are matmuls in the input dtype) and
errors (LinAlgError, a numpy.linalg.LinAlgError, for singular matrices and
the like, raised when the data is known: eagerly at once, in a compiled
function when its plan runs).  The decompositions are
ops with several results packed in one tensor (ops/infer_linalg.c) viewed
apart here; lstsq is NumPy's own LAPACK call (gelsd); norm, pinv,
matrix_power and matrix_rank follow NumPy's own algorithms over the ops.  Everything batches over leading dims and is
differentiable where docs/AUTODIFF.md says (hop.grad of a compiled NumPy
function).
"""

import builtins
import math
import operator

import numpy as _np

from .. import _breaks, _C
from .. import _exact
from . import _core, _direct
from . import _funcs as F
from ._ndarray import ndarray, result_kind, wrap

LinAlgError = _C.LinAlgError

__all__ = ["LinAlgError", "norm", "solve", "inv", "det", "slogdet", "cholesky", "qr", "svd",
           "eigh", "eigvalsh", "lstsq", "pinv", "matrix_power", "matrix_rank", "multi_dot",
           "cond", "tensorinv", "tensorsolve", "eig", "eigvals"]


def _implements(np_fn):
    return F.implements(np_fn, public=False)


def _kind(*args, _kind=None):
    return _kind or result_kind(args, ndarray)


def _tensor(a, what):
    return F._t(a, what)


def _common(*ts, what):
    """NumPy 1.24's _commonType: the dtype LAPACK runs in (always double:
    float64 or complex128) and the result dtype (float32 or complex64 when
    every operand is single precision, else float64 or complex128: a bool or
    integer operand counts as double, so float32 with int64 is float64)."""
    dts = [_core.np_dtype(t) for t in ts]
    for d in dts:
        if d == _np.dtype(_np.float16):
            raise TypeError("array type float16 is unsupported in linalg")
        if d.kind not in "biufc":
            raise TypeError(f"array type {d} is unsupported in linalg")
    single = builtins.all(d in (_np.dtype(_np.float32), _np.dtype(_np.complex64)) for d in dts)
    cplx = builtins.any(d.kind == "c" for d in dts)
    ct = _np.dtype(_np.complex128 if cplx else _np.float64)
    if single:
        return ct, _np.dtype(_np.complex64 if cplx else _np.float32)
    return ct, ct


def _stacked_2d(t):
    if t.ndim < 2:
        raise LinAlgError(f"{t.ndim}-dimensional array given. Array must be at least "
                          f"two-dimensional")


def _stacked_square(t):
    if t.shape[-1] != t.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")


def _mT(t):
    return _C.transpose(t, -2, -1)


@_implements(_np.linalg.solve)
def solve(a, b, *, _kind=None):
    kind = _kind or result_kind((a, b), ndarray)
    ta, tb = _tensor(a, "solve"), _tensor(b, "solve")
    _stacked_2d(ta)
    _stacked_square(ta)
    ct, rt = _common(ta, tb, what="solve")
    _solve_gufunc_check(ta, tb)
    ta, tb = _core.cast(ta, ct), _core.cast(tb, ct)
    if tb.ndim == ta.ndim - 1:  # NumPy 1.24: a stack of vectors
        r = _C._op("linalg_solve", ta, tb.unsqueeze(-1)).squeeze(-1)
    else:
        r = _C._op("linalg_solve", ta, tb)
    return wrap(kind, _core.cast(r, rt))


def _solve_gufunc_check(ta, tb):
    """The errors of NumPy's gufunc solve ((m,m),(m,n)->(m,n)) or solve1
    ((m,m),(m)->(m), for b of one dimension less than a): b's core
    dimensions, then the loop dimensions' broadcast."""
    one = tb.ndim == ta.ndim - 1
    name, sig, core = ("solve1", "(m,m),(m)->(m)", 1) if one else \
        ("solve", "(m,m),(m,n)->(m,n)", 2)
    if tb.ndim < core:
        raise ValueError(f"{name}: Input operand 1 does not have enough dimensions (has "
                         f"{tb.ndim}, gufunc core with signature {sig} requires {core})")
    m, bm = ta.shape[-1], tb.shape[-core]
    if isinstance(m, int) and isinstance(bm, int) and m != bm:
        raise ValueError(f"{name}: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature {sig} (size {bm} is different from {m})")
    la, lb = list(ta.shape[:-2]), list(tb.shape[:tb.ndim - core])
    for x, y in zip(reversed(la), reversed(lb)):
        if isinstance(x, int) and isinstance(y, int) and x != y and 1 not in (x, y):
            def dims(d):
                return "(" + ",".join(str(n) for n in d) + ")"

            def text(shape, loop):
                return dims(shape) + "->" + dims(loop + ["newaxis"] * core)
            want = dims(tb.shape[tb.ndim - core:])
            raise ValueError(f"operands could not be broadcast together with remapped shapes "
                             f"[original->remapped]: {text(ta.shape, la)} {text(tb.shape, lb)}  "
                             f"and requested shape {want}")


def _square_op(op, a, what, kind):
    # op over a stack of square matrices in double, and the result dtype
    t = _tensor(a, what)
    _stacked_2d(t)
    _stacked_square(t)
    ct, rt = _common(t, what=what)
    return _C._op(op, _core.cast(t, ct)), rt, kind


@_implements(_np.linalg.inv)
def inv(a, *, _kind=None):
    r, rt, kind = _square_op("linalg_inv", a, "inv", _kind or result_kind((a,), ndarray))
    return wrap(kind, _core.cast(r, rt))


@_implements(_np.linalg.det)
def det(a, *, _kind=None):
    r, rt, kind = _square_op("linalg_det", a, "det", _kind or result_kind((a,), ndarray))
    r = _core.cast(r, rt)
    return wrap(kind, r, scalar=r.ndim == 0)


@_implements(_np.linalg.slogdet)
def slogdet(a, *, _kind=None):
    p, rt, kind = _square_op("linalg_slogdet", a, "slogdet",
                             _kind or result_kind((a,), ndarray))
    sign, logdet = p.select(-1, 0), p.select(-1, 1)
    if _core.np_dtype(p).kind == "c":
        logdet = _C._op("real", logdet)
    sign, logdet = _core.cast(sign, rt), _core.cast(logdet, _real_dt(rt))
    return wrap(kind, sign, scalar=sign.ndim == 0), wrap(kind, logdet, scalar=logdet.ndim == 0)


@_implements(_np.linalg.cholesky)
def cholesky(a, *, _kind=None):
    r, rt, kind = _square_op("linalg_cholesky", a, "cholesky",
                             _kind or result_kind((a,), ndarray))
    return wrap(kind, _core.cast(r, rt))


@_implements(_np.linalg.qr)
def qr(a, mode="reduced", *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    if mode not in ("reduced", "complete", "r", "raw"):
        if mode in ("f", "full"):
            # NumPy 1.24's: a DeprecationWarning, then mode "reduced"
            _core.numpy_warns(f"numpy.linalg.qr mode {mode!r}",
                              "The 'full' option is deprecated in favor of 'reduced'.\n"
                              "For backward compatibility let mode default.",
                              DeprecationWarning, replay=True)
            mode = "reduced"
        elif mode in ("e", "economic"):
            # (LAPACK's raw Householder matrix alone, which hop does not
            # give: hop.compile's graph breaks, NumPy computes it)
            _breaks.conversion(_C.UnsupportedError, f"hop.numpy: numpy.linalg.qr mode "
                                                    f"{mode!r} (deprecated in NumPy) is not "
                                                    f"supported")
        else:
            raise ValueError(f"Unrecognized mode '{mode}'")
    t = _tensor(a, "qr")
    _stacked_2d(t)
    ct, rt = _common(t, what="qr")
    t = _core.cast(t, ct)
    m, n = t.shape[-2], t.shape[-1]
    k = builtins.min(m, n)
    if mode == "raw":
        # NumPy's (h, tau): h its factored matrix swapped (geqrf's
        # column-major m x n read as n x m), a view of a C-ordered m x n as
        # NumPy's; both in the result dtype
        p = _C._op("linalg_qr_raw", t)
        h = _core.cast(p.slice(-2, 0, n), rt).transpose(-1, -2).contiguous().transpose(-1, -2)
        tau = _core.cast(p.select(-2, n).slice(-1, 0, k), rt).contiguous()
        return wrap(kind, h), wrap(kind, tau)
    q = m if mode == "complete" else k
    p = _C._op("linalg_qr", t, mode == "complete")
    r = _core.cast(p.slice(-2, m, m + q).slice(-1, 0, n), rt)
    if mode == "r":
        return wrap(kind, r)
    return wrap(kind, _core.cast(p.slice(-2, 0, m).slice(-1, 0, q), rt)), wrap(kind, r)


def _svd_input(a, what):
    # svd/pinv's operand: a stack of matrices in double, and the result dtype
    t = _tensor(a, what)
    _stacked_2d(t)
    ct, rt = _common(t, what=what)
    return _core.cast(t, ct), rt


@_implements(_np.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False, *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    if hermitian:
        return _svd_hermitian(ndarray(_tensor(a, "svd")), compute_uv, kind)
    t, rt = _svd_input(a, "svd")
    if not compute_uv:
        return wrap(kind, _core.cast(_C._op("linalg_svdvals", t), _real_dt(rt)))
    m, n = t.shape[-2], t.shape[-1]
    k = builtins.min(m, n)
    u = m if full_matrices else k
    v = n if full_matrices else k
    p = _C._op("linalg_svd", t, bool(full_matrices))
    s = p.select(-2, m).slice(-1, 0, k)
    if _core.np_dtype(p).kind == "c":
        s = _C._op("real", s)
    return (wrap(kind, _core.cast(p.slice(-2, 0, m).slice(-1, 0, u), rt)),
            wrap(kind, _core.cast(s, _real_dt(rt))),
            wrap(kind, _core.cast(p.slice(-2, m + 1, m + 1 + v).slice(-1, 0, n), rt)))


def _svd_hermitian(a, compute_uv, kind):
    """NumPy 1.24's svd(a, hermitian=True), step for step: eigh's (or
    eigvalsh's) values by decreasing magnitude (NumPy's argsort, so its
    order of ties), their signs moved into vh; full_matrices has no effect."""
    from .. import numpy as hnp
    if not compute_uv:
        s = hnp.abs(eigvalsh(a))
        return wrap(kind, hnp.sort(s)[..., ::-1]._t)
    s, u = eigh(a)
    sgn = hnp.sign(s)
    s = hnp.abs(s)
    sidx = hnp.argsort(s)[..., ::-1]
    sgn = hnp.take_along_axis(sgn, sidx, axis=-1)
    s = hnp.take_along_axis(s, sidx, axis=-1)
    u = hnp.take_along_axis(u, sidx[..., None, :], axis=-1)
    vt = hnp.swapaxes(u * sgn[..., None, :], -1, -2).conjugate()
    return wrap(kind, u._t), wrap(kind, s._t), wrap(kind, vt._t)


def _uplo(UPLO):
    u = str(UPLO).upper()
    if u not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return u == "U"


def _hermitian(a, UPLO, what):
    # eigh/eigvalsh's operand: a stack of square matrices in double, the
    # result dtype, and which triangle is read
    upper = _uplo(UPLO)
    t = _tensor(a, what)
    _stacked_2d(t)
    _stacked_square(t)
    ct, rt = _common(t, what=what)
    return _core.cast(t, ct), rt, upper


@_implements(_np.linalg.eigh)
def eigh(a, UPLO="L", *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    t, rt, upper = _hermitian(a, UPLO, "eigh")
    n = t.shape[-1]
    p = _C._op("linalg_eigh", t, upper)
    w = p.select(-2, 0)
    if _core.np_dtype(p).kind == "c":
        w = _C._op("real", w)
    return (wrap(kind, _core.cast(w, _real_dt(rt))),
            wrap(kind, _core.cast(p.slice(-2, 1, n + 1), rt)))


@_implements(_np.linalg.eigvalsh)
def eigvalsh(a, UPLO="L", *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    t, rt, upper = _hermitian(a, UPLO, "eigvalsh")
    return wrap(kind, _core.cast(_C._op("linalg_eigvalsh", t, upper), _real_dt(rt)))


def _real_dt(dt):
    return _np.dtype(_np.float32) if dt in (_np.dtype(_np.float32), _np.dtype(_np.complex64)) \
        else _np.dtype(_np.float64)


def _h(t):
    """The conjugate transpose of the last two dims."""
    t = _mT(t)
    return _C._op("conj", t) if _core.np_dtype(t).kind == "c" else t


# How far hop's singular values (gesdd) and gelsd's may each be from the
# exact ones, in units of eps * max(m, n) * s_max (eps of the computing
# dtype): LAPACK's bound p(m, n) * eps * ||A||_2 for a backward-stable SVD
# (its Users' Guide), with p(m, n) = max(m, n), the noise level NumPy's own
# rcond=None assumes; and a floor of _SVD_ULPS ulps of s_max for the last
# steps of both (a 2 x 2 matrix's differ by up to 2.4 ulps).  Measured
# differences between the two are at most 0.05 of the first term from 40
# rows or columns on, 1.2 at 2 x 2 (tests/python/test_numpy_linalg_lstsq.py):
# 2 per solver and 16 ulps in all keep a factor of 10 or more of slack.
_SVD_ERROR = 2.0
_SVD_ULPS = 16
# ulps of a narrower result dtype (float32) by which two singular values
# that close, cast, and a cutoff computed from them may differ
# (_cutoff_checked)
_CAST_ULPS = 4


@_implements(_np.linalg.lstsq)
def lstsq(a, b, rcond="warn", *, _kind=None):
    """NumPy's lstsq: LAPACK's gelsd as NumPy 1.24 calls it (the op
    linalg_lstsq), so x, the residuals, the rank and s are NumPy's bits.
    Like NumPy it computes in double (float32 data too) and casts the
    results.  gelsd has no derivative of its own: while tracing (hop.grad,
    hop.trace, hop.vmap) the results carry the derivatives of the same
    minimum-norm solution through the SVD (_lstsq_svd, _with_grad_of)."""
    kind = _kind or result_kind((a, b), ndarray)
    ta, tb = _tensor(a, "lstsq"), _tensor(b, "lstsq")
    is_1d = tb.ndim == 1
    if is_1d:
        tb = tb.unsqueeze(-1)
    if ta.ndim != 2 or tb.ndim != 2:
        # NumPy's _assert_2d(a, b): the first that is not 2-d
        raise LinAlgError(f"{ta.ndim if ta.ndim != 2 else tb.ndim}"
                          f"-dimensional array given. Array must be two-dimensional")
    m, n = ta.shape
    m2, n_rhs = tb.shape
    if m != m2:
        raise LinAlgError("Incompatible dimensions")
    ct, dt = _common(ta, tb, what="lstsq")
    rdt = _real_dt(dt)
    if isinstance(rcond, str) and rcond == "warn":
        _core.numpy_warns("lstsq without rcond=",
                          "`rcond` parameter will change to the default of machine precision "
                          "times ``max(M, N)`` where M and N are the input matrix dimensions.\nTo "
                          "use the future default and silence this warning we advise to pass "
                          "`rcond=None`, to keep using the old, explicitly pass `rcond=-1`.",
                          FutureWarning)
        rcond = -1
    eps = float(_np.finfo(ct).eps)
    if rcond is None:
        # NumPy's eps * max(m, n), which the op computes itself (-inf asks
        # for it): under dynamic=True the sizes are symbols.  Sizes 0 and 1
        # are constants, so a symbolic max(m, n) is >= 2 and the cutoff
        # ratio is in (0, 1).
        ratio = eps * builtins.max(n, m)
        if isinstance(ratio, float) and not 0 < ratio < 1:
            ratio = eps / 2
        op_rcond = -math.inf
    else:
        rcond = float(rcond)
        # gelsd (dlalsd) takes rcond outside (0, 1) as its machine
        # precision, half NumPy's eps: the cutoff the rank check below
        # compares with.  -inf is the op's rcond=None: a given -inf means
        # what any rcond <= 0 means to gelsd
        ratio = rcond if 0 < rcond < 1 else eps / 2
        op_rcond = -1.0 if rcond == -math.inf else rcond
    a_in = ta
    ta, tb = _core.cast(ta, ct), _core.cast(tb, ct)
    k = builtins.min(m, n)
    p = _C._op("linalg_lstsq", ta, tb, op_rcond)
    x = p.slice(0, 0, n).slice(1, 0, n_rhs)
    last = p.select(0, n + 1)
    resids, s, rank = p.select(0, n).slice(0, 0, n_rhs), last.slice(0, 0, k), last.select(0, k)
    if ct.kind == "c":
        resids, s, rank = (_C._op("real", t) for t in (resids, s, rank))
    rank = rank.to(_C.int32)
    if k > 0:
        smax = _C.amax(s)
        rank = _cutoff_checked(a_in, s, smax, smax * ratio, rank, ratio=ratio, count=True,
                               what="lstsq's rank", same_solver=True)
    traced = _core.tracing() and not _core.compiling()
    if traced:
        x_svd, s_svd = _lstsq_svd(ta, tb, m, n, ct, ratio)
        x, s = _with_grad_of(x, x_svd), _with_grad_of(s, s_svd)
    # NumPy's residuals: only for a full-rank tall system, a data-dependent
    # decision: hop.compile specialises on it; hop.trace, hop.grad and
    # hop.vmap have no path to specialise, so there it is a cond whose
    # branches give n_rhs and 0 values (an unbacked size, as NumPy's)
    if k == 0 or m <= n:
        full_rank = k == 0 and m > n
    elif traced:
        full_rank = None
        from .._hops import cond
        resids = cond(_C.eq(rank, n), lambda v: v, lambda v: v.slice(0, 0, 0),
                      (_resids_with_grad(resids, ta, tb, x_svd, ct),))
    else:
        full_rank = _core.decide(_C.eq(rank, n), "lstsq: whether the residuals are computed")
    if full_rank is False:
        resids = _C.zeros((0,), dtype=_core.hop_dtype(rdt, "lstsq"))
    elif full_rank and traced:
        resids = _resids_with_grad(resids, ta, tb, x_svd, ct)
    if is_1d:
        x = x.squeeze(-1)
    x = _core.cast(x, dt)
    return (wrap(kind, x), wrap(kind, _core.cast(resids, rdt)), wrap(kind, rank, scalar=True),
            wrap(kind, _core.cast(s, rdt)))


def _resids_with_grad(resids, ta, tb, x_svd, ct):
    """gelsd's residuals with the derivatives of the SVD solution's."""
    r = _C.matmul(ta, x_svd) - tb
    r2 = _C._op("real", r) * _C._op("real", r) + _C._op("imag", r) * _C._op("imag", r) \
        if ct.kind == "c" else r * r
    return _with_grad_of(resids, _C.sum(r2, 0))


def _lstsq_svd(ta, tb, m, n, ct, ratio):
    """The minimum-norm solution and the singular values of lstsq through
    the SVD (the same values as gelsd's up to rounding), whose derivatives
    lstsq's results carry."""
    k = builtins.min(m, n)
    if k == 0:
        return _C.zeros((n, tb.shape[1]), dtype=_core.hop_dtype(ct, "lstsq")), \
            _C.zeros((0,), dtype=_core.hop_dtype(_real_dt(ct), "lstsq"))
    # the SVD of a itself, tall ones too (gelsd takes a QR first when m >=
    # 2n, for speed): a rank-deficient a's R is singular, and the QR's
    # derivative, which divides by R, is not the solution's there
    f, c, rows = ta, tb, m
    p = _C._op("linalg_svd", f, False)
    u = p.slice(0, 0, rows).slice(1, 0, k)
    s = p.select(0, rows).slice(0, 0, k)
    vh = p.slice(0, rows + 1, rows + 1 + k).slice(1, 0, n)
    if ct.kind == "c":
        s = _C._op("real", s)
    large = _C.gt(s, _C.amax(s) * ratio)
    sinv = _C.where(large, _C.div(1.0, _C.where(large, s, 1.0)), 0.0)
    sinv = _core.cast(sinv, ct)
    return _C.matmul(_h(vh), _C.matmul(_h(u), c) * sinv.unsqueeze(-1)), s


def _with_grad_of(v, w):
    """v's values (bits, signs of zero, NaNs) with w's derivatives: v - d
    for d = (w without its derivative) - w, which is +0 (x - x in round to
    nearest; where it is not, a non-finite w, a +0 without derivative), so
    v - d is v for every v and d's derivative is -w's."""
    no = _C.zeros((), dtype=_C.bool)
    d = _C._op("mask_gradient", w, no) - w
    d = _C.where(_C.eq(d, 0), d, 0.0)
    return v - _core.cast(d, _core.np_dtype(v))


def _cutoff_checked(a, s, smax, cutoff, r, *, ratio=None, rounded=None, hermitian=False,
                    count=False, what="the rank", same_solver=False):
    """r, decided by which of hop's singular values s (..., k) of a lie above
    cutoff (a count for lstsq's and matrix_rank's rank; which 1/s pinv
    uses), made NumPy's under hop.compile: NumPy compares its own singular
    values, which differ from hop's in the last bits, so the decisions agree
    only when no singular value lies within that difference of the cutoff.
    Each SVD (in double) is within _SVD_ERROR * eps * max(m, n) * s_max of
    the exact values, plus _SVD_ULPS ulps of s_max in all.  hop's a differs
    from NumPy's by Delta, which moves each singular value by at most
    ||Delta||_2 <= ||Delta||_F (Weyl; a hermitian a read from one triangle:
    the mirrored Delta, up to sqrt(2) ||Delta||_F): where a's lineage has a
    relative bound (_exact.relative_error: exact values, elementwise math,
    products of elements) that is rel * ||a||_F <= rel * sqrt(min(m, n)) *
    s_max (hermitian: sqrt(2 n)); otherwise (matmul, sums) the run-time
    bound d of _exact.frobenius_error(a) per matrix, and NumPy's s_max
    is then up to s_max + d.  A cutoff that scales with s_max (ratio: rcond
    for rcond * s_max, max(m, n) * eps) moves by ratio times the same; a
    given one (ratio None) not at all.  When s was rounded to a narrower
    dtype (rounded, default s's dtype: float32 data, whose double SVD NumPy
    casts too), two values that close may round one ulp apart and the
    cutoff computed from them a few ulps apart: _CAST_ULPS ulps of |s| +
    |cutoff| cover it.  So the plan checks that every singular value is
    farther than the sum from the cutoff (and s_max a normal magnitude, or
    zero: a zero matrix's singular values are zeros for both) and otherwise
    hands the call to eager (_core.unknown_if): NumPy decides.  A count
    (count=True: a rank) is then NumPy's, so a branch on it is one cond
    (_exact.checked).  Where neither bound exists (complex products, an op
    without a rule) the call is a graph break (what names the decision):
    NumPy's code decides on NumPy's values, never hop's unchecked count.
    Inside a HOP body (hop.map, hop.cond, a loop's body, at any depth) the
    lineage is read out to the function's arguments (_exact._body_nodes)
    and the check is made there; a failed one fails the whole plan, so
    hop.compile runs the whole call eagerly.  Where no bound exists in a
    body (a loop's carry, an invoke_subgraph input, an op without a rule)
    the trace raises UnsupportedError naming the decision: a body has no
    break to take.  hop.trace, hop.grad and hop.vmap make the same check
    (hop.grad's and hop.vmap's body of the user's function reads its
    lineage: _exact.own_body), and a failed one raises hop.CheckError when
    the plan runs: they have no eager call to hand it to.  Eagerly (no
    trace) r is hop's own count.  same_solver: s and r come from NumPy's
    own routine (lstsq's gelsd), so on a with NumPy's exact bits they are
    NumPy's and nothing is checked."""
    if _C._trace_depth() > 1 and _C._proxy_at_root(r):
        # a side of a branch that replayed this call's ops from before it:
        # checked there
        return r
    if not _core.compiling() and _C.tracing() is None:
        return r  # eager: hop's own count
    # (hop.trace, hop.grad, hop.vmap and a HOP body: the same check, whose
    # failure raises hop.CheckError when the plan runs; hop.compile then
    # runs the whole call eagerly)
    rel = _exact.relative_error(a)
    if same_solver and rel == 0:
        # r came from NumPy's own routine (lstsq's gelsd) run on NumPy's
        # own bits: it is NumPy's, whatever the singular values
        return _exact.checked(r) if count else r
    d = None if rel is not None else _exact.frobenius_error(a)
    if rel is None and d is None and not _core.compiling() and _C._trace_depth() > 1 and \
            not _exact.own_body():
        # a HOP body has no break to take (a side of the function's own
        # data-dependent `if` has: below); a body of hop.compile's trace is
        # never hop.grad's/vmap's own
        from .._breaks import in_compiled_body
        who = "hop.compile" if in_compiled_body() else "hop"
        raise _C.UnsupportedError(
            f"hop.numpy.linalg: {what} inside a HOP body (hop.map, hop.cond, a loop) "
            f"compares hop's singular values with a cutoff, and {who} cannot bound there how "
            f"far this matrix (its lineage: {_exact.differs([a])}) is from NumPy's, so it "
            f"cannot check that the decision is NumPy's (the two SVDs differ in the last "
            f"bits): call it outside the body, where NumPy decides")
    if rel is None and d is None:
        from .._breaks import conversion
        conversion(_C.UnsupportedError,
                   f"hop.numpy.linalg: {what} compares singular values with a cutoff, and hop "
                   f"cannot bound how far this matrix (its lineage: "
                   f"{_exact.differs([a])}) is from NumPy's, so NumPy decides")
    m, n = a.shape[-2], a.shape[-1]
    sdt = rounded or _core.np_dtype(s)
    eps = float(_np.finfo(_np.float64).eps)  # the SVD's: always computed in double
    err = 2 * _SVD_ERROR * eps * builtins.max(m, n) + _SVD_ULPS * eps
    scale = 1 if ratio is None else 1 + abs(ratio)
    if d is None:
        spread = math.sqrt(2 * n) if hermitian else math.sqrt(builtins.min(m, n))
        margin = smax * ((err + 2 * rel * spread) * scale)
    else:  # (scale: no op when it is 1)
        d = d * math.sqrt(2) if hermitian else d
        d = _core.cast(d.unsqueeze(-1), _core.np_dtype(smax))
        margin = (smax + d) * err + d
        margin = margin if ratio is None else margin * scale
    eps_s = float(_np.finfo(sdt).eps)
    if eps_s > eps:
        margin = margin + (_C.abs(s) + _C.abs(cutoff)) * (_CAST_ULPS * eps_s)
    far = _C.gt(_C.abs(s - cutoff), margin)
    fi = _np.finfo(sdt)
    normal = _C.logical_and(_C.ge(smax, math.sqrt(float(fi.tiny))),
                            _C.le(smax, math.sqrt(float(fi.max))))
    zero = _C.eq(smax, 0.0)
    if d is not None:  # NumPy's matrix is zero too only if it is within 0 of hop's
        zero = _C.logical_and(zero, _C.eq(d, 0.0))
    ok = _C.logical_or(_C.logical_and(far, normal), zero)
    r = _core.unknown_if(_C.logical_not(_C.all(ok, None, False)), r, _core.CHECK_CUTOFF)
    return _exact.checked(r) if count else r


@_implements(_np.linalg.pinv)
def pinv(a, rcond=1e-15, hermitian=False, *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    a_in = _tensor(a, "pinv")
    t, dt = _svd_input(a, "pinv")
    m, n = t.shape[-2], t.shape[-1]
    k = builtins.min(m, n)
    if k == 0:
        return wrap(kind, _C.zeros(tuple(t.shape[:-2]) + (n, m),
                                   dtype=_core.hop_dtype(_core.np_dtype(a_in), "pinv")))
    if hermitian:  # NumPy's svd(a.conjugate(), hermitian=True), in the result dtype
        ac = _C._op("conj", a_in) if dt.kind == "c" else a_in
        u, s, vt = (x._t for x in _svd_hermitian(ndarray(ac), True, ndarray))
    else:
        t = _C._op("conj", t) if dt.kind == "c" else t
        # NumPy's svd: in double, u, s and vt cast to the result dtype
        p = _C._op("linalg_svd", t, False)
        u = _core.cast(p.slice(-2, 0, m).slice(-1, 0, k), dt)
        s = p.select(-2, m).slice(-1, 0, k)
        vt = _core.cast(p.slice(-2, m + 1, m + 1 + k).slice(-1, 0, n), dt)
        if dt.kind == "c":
            s = _C._op("real", s)
    s = _core.cast(s, _real_dt(dt))
    # NumPy's cutoff rcond[..., newaxis] * amax(s): two arrays, so in their
    # promoted dtype (float64 for a float rcond and float32 s), as is s > cutoff
    rc = _tensor(rcond, "pinv")
    smax = _C.amax(s, -1, True)
    cdt = _np.promote_types(_core.np_dtype(rc), _core.np_dtype(s))
    rc = _core.cast(rc, cdt).unsqueeze(-1)
    cutoff = rc * _core.cast(smax, cdt)
    large = _C.gt(_core.cast(s, cdt), cutoff)
    sinv = _C.where(large, _C.div(1.0, _C.where(large, s, 1.0)), 0.0)
    sinv = _core.cast(sinv, dt)
    r = _C.matmul(_mT(vt), sinv.unsqueeze(-1) * _mT(u))
    return wrap(kind, _cutoff_checked(a_in, _core.cast(s, cdt), _core.cast(smax, cdt), cutoff, r,
                                      ratio=rc, rounded=_core.np_dtype(s), hermitian=hermitian,
                                      what="pinv"))


def _bool_matmul(x, y):
    """NumPy's bool matmul (an OR of ANDs): hop's matmul has no bool, so the
    int64 product's nonzero elements, as _products.dot."""
    return _C.ne(_C.matmul(x.to(_C.int64), y.to(_C.int64)), 0)


@_implements(_np.linalg.matrix_power)
def matrix_power(a, n, *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    t = _tensor(a, "matrix_power")
    _stacked_2d(t)
    _stacked_square(t)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        eye = F.identity(t.shape[-1], dtype=_core.np_dtype(t))._t
        return wrap(kind, _C.zeros(tuple(t.shape), dtype=t.dtype) + eye)
    if n < 0:
        t = inv(ndarray(t))._t
        n = abs(n)
    if n == 1:
        return wrap(kind, t.clone())
    mm = _C.matmul if t.dtype is not _C.bool else _bool_matmul
    if n == 2:
        return wrap(kind, mm(t, t))
    if n == 3:
        return wrap(kind, mm(mm(t, t), t))
    z = result = None
    while n > 0:
        z = t if z is None else mm(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else mm(result, z)
    return wrap(kind, result)


@_implements(_np.linalg.matrix_rank)
def matrix_rank(A, tol=None, hermitian=False, *, _kind=None):
    kind = _kind or result_kind((A,), ndarray)
    t = _tensor(A, "matrix_rank")
    if t.ndim < 2:  # NumPy's int(not all(A == 0)): a Python int (traced, a SymInt)
        return _C.logical_not(_C.all(_C.eq(t, 0))).to(_C.int64).item()
    # NumPy's S: svd's or |eigvalsh|, computed in double, cast to the result
    # dtype (float32 for float32 data)
    if hermitian:
        s = _C.abs(eigvalsh(ndarray(t))._t)
    else:
        s = svd(ndarray(t), compute_uv=False)._t
    sdt = _core.np_dtype(s)
    if isinstance(s.shape[-1], int) and s.shape[-1] == 0:  # (NumPy's S.max of no values)
        raise ValueError("zero-size array to reduction operation maximum which has no identity")
    smax = _C.amax(s, -1, True)
    ratio = None
    if tol is None:  # in S's dtype, NumPy's order of operations
        ratio = builtins.max(t.shape[-2:]) * float(_np.finfo(sdt).eps)
        tol = smax * builtins.max(t.shape[-2:]) * float(_np.finfo(sdt).eps)
    else:  # asarray(tol)[..., newaxis]: an array, so S > tol compares in the promoted dtype
        tt = _tensor(tol, "matrix_rank")
        cdt = _np.promote_types(_core.np_dtype(tt), sdt)
        tol, s, smax = _core.cast(tt, cdt).unsqueeze(-1), _core.cast(s, cdt), _core.cast(smax, cdt)
    r = _C.sum(_C.gt(s, tol), -1)
    r = _cutoff_checked(t, s, smax, tol, r, ratio=ratio, rounded=sdt, hermitian=hermitian,
                        count=True, what="matrix_rank")
    return wrap(kind, r, scalar=r.ndim == 0)


@_implements(_np.linalg.multi_dot)
def multi_dot(arrays, *, out=None, _kind=None):
    kind = _kind or result_kind(arrays, ndarray)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    ts = [_tensor(x, "multi_dot") for x in arrays]
    r = ts[0]
    for x in ts[1:]:
        r = F.dot(ndarray(r), ndarray(x))._t
    return F._out(kind, r, scalar=r.ndim == 0 and out is None, out=out, what="multi_dot")


def _multi_svd_norm(x, row_axis, col_axis, op):
    from .. import numpy as hnp
    y = hnp.moveaxis(x, (row_axis, col_axis), (-2, -1))
    return op(svd(y, compute_uv=False), axis=-1)


@_implements(_np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False, *, _kind=None):
    """NumPy 1.24's norm, step for step."""
    from .. import numpy as hnp
    kind = _kind or result_kind((x,), ndarray)
    x = ndarray(_tensor(x, "norm"))
    if x.dtype.kind not in "fc":
        x = x.astype(float)
    if axis is None:
        ndim = x.ndim
        if (ord is None or (ord in ("f", "fro") and ndim == 2) or (ord == 2 and ndim == 1)):
            x = hnp.ravel(x)
            if x.dtype.kind == "c":
                xr, xi = x.real, x.imag
                sq = hnp.dot(xr, xr) + hnp.dot(xi, xi)
            else:
                sq = hnp.dot(x, x)
            ret = hnp.sqrt(sq)
            if keepdims:
                ret = hnp.reshape(ret, ndim * [1])
            return wrap(kind, ret._t, scalar=ret.ndim == 0)
    nd = x.ndim
    if axis is None:
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = int(axis)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
        axis = (axis,)
    if len(axis) == 1:
        if ord == _np.inf:
            r = hnp.max(hnp.abs(x), axis=axis, keepdims=keepdims)
        elif ord == -_np.inf:
            r = hnp.min(hnp.abs(x), axis=axis, keepdims=keepdims)
        elif ord == 0:
            r = hnp.sum((x != 0).astype(x.real.dtype), axis=axis, keepdims=keepdims)
        elif ord == 1:
            r = hnp.sum(hnp.abs(x), axis=axis, keepdims=keepdims)
        elif ord is None or ord == 2:
            s = (hnp.conj(x) * x).real
            r = hnp.sqrt(hnp.sum(s, axis=axis, keepdims=keepdims))
        else:
            if isinstance(ord, str):
                raise ValueError(f"Invalid norm order '{ord}' for vectors")
            absx = hnp.abs(x)
            absx = absx ** ord
            r = hnp.sum(absx, axis=axis, keepdims=keepdims)
            # NumPy's `ret **= reciprocal(ord, dtype=ret.dtype)`: in place, so
            # a float32 norm stays float32 (a Python float would promote a
            # 0-d result to float64)
            r = r ** _np.reciprocal(ord, dtype=r.dtype)
        return wrap(kind, r._t, scalar=r.ndim == 0)
    if len(axis) == 2:
        row_axis, col_axis = axis
        row_axis = _np.core.multiarray.normalize_axis_index(row_axis, nd)
        col_axis = _np.core.multiarray.normalize_axis_index(col_axis, nd)
        if row_axis == col_axis:
            raise ValueError("Duplicate axes given.")
        if ord == 2:
            r = _multi_svd_norm(x, row_axis, col_axis, hnp.amax)
        elif ord == -2:
            r = _multi_svd_norm(x, row_axis, col_axis, hnp.amin)
        elif ord == 1:
            if col_axis > row_axis:
                col_axis -= 1
            r = hnp.max(hnp.sum(hnp.abs(x), axis=row_axis), axis=col_axis)
        elif ord == _np.inf:
            if row_axis > col_axis:
                row_axis -= 1
            r = hnp.max(hnp.sum(hnp.abs(x), axis=col_axis), axis=row_axis)
        elif ord == -1:
            if col_axis > row_axis:
                col_axis -= 1
            r = hnp.min(hnp.sum(hnp.abs(x), axis=row_axis), axis=col_axis)
        elif ord == -_np.inf:
            if row_axis > col_axis:
                row_axis -= 1
            r = hnp.min(hnp.sum(hnp.abs(x), axis=col_axis), axis=row_axis)
        elif ord in (None, "fro", "f"):
            r = hnp.sqrt(hnp.sum((hnp.conj(x) * x).real, axis=axis))
        elif ord == "nuc":
            r = _multi_svd_norm(x, row_axis, col_axis, hnp.sum)
        else:
            raise ValueError("Invalid norm order for matrices.")
        if keepdims:
            shape = list(x.shape)
            shape[axis[0]] = 1
            shape[axis[1]] = 1
            r = hnp.reshape(r, shape)
        return wrap(kind, r._t, scalar=r.ndim == 0)
    raise ValueError("Improper number of dimensions to norm.")



def _inv_or_nan(t):
    """NumPy's _umath_linalg.inv of t (..., n, n) under errstate(all='ignore'):
    the inverse, or NaN for each matrix whose LU has a zero pivot (not a
    LinAlgError)."""
    dt = _core.np_dtype(t)
    logabs = _C._op("linalg_slogdet", t).select(-1, 1)
    if dt.kind == "c":
        logabs = _C._op("real", logabs)
    singular = _C.eq(logabs, -_np.inf).unsqueeze(-1).unsqueeze(-1)
    eye = F.identity(t.shape[-1], dtype=dt)._t
    inv_t = _C._op("linalg_inv", _C.where(singular, eye, t))
    nan = _core.complex_scalar(complex(_np.nan, _np.nan), dt) if dt.kind == "c" else \
        _C.full((), _np.nan, dtype=t.dtype)
    return _C.where(singular, nan, inv_t)


@_implements(_np.linalg.cond)
def cond(x, p=None, *, _kind=None):
    """NumPy 1.24's cond, step for step.  For p other than None, 2 and -2
    NumPy inverts with errors ignored: its gufunc inv writes NaN for a
    matrix whose LU has a zero pivot (gesv's info > 0), so its cond is inf
    (or, p 'nuc', the SVD of NaN raises).  hop finds those matrices by the
    same LU (slogdet's log|det| is -inf exactly for a zero pivot), inverts
    the identity in their place and writes NaN there."""
    kind = _kind or result_kind((x,), ndarray)
    x = ndarray(_tensor(x, "cond"))
    if x.size == 0 and x.ndim >= 2 and x.shape[-2] * x.shape[-1] == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    # (NumPy computes the quotient, the inverse and the norms' product under
    # errstate(all='ignore'): a singular matrix's 1/0 warns of nothing)
    if p is None or p == 2 or p == -2:
        s = svd(x, compute_uv=False)
        with _np.errstate(all="ignore"):
            r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    else:
        _stacked_2d(x._t)
        _stacked_square(x._t)
        ct, result_t = _common(x._t, what="cond")
        # NumPy's inverse stays double here (its gufunc inv, not linalg.inv)
        with _np.errstate(all="ignore"):
            invx = ndarray(_inv_or_nan(_core.cast(x._t, ct)))
            r = norm(x, p, axis=(-2, -1)) * norm(invx, p, axis=(-2, -1))
        r = r.astype(result_t, copy=False)
    # a NaN is inf unless the matrix had a NaN (a where, not NumPy's masked
    # write, so that it traces)
    rt = r._t
    nan_mask = _C.ne(rt, rt)
    xt = x._t
    x_nan = _C.ne(xt, xt)
    if _core.np_dtype(xt).kind == "c":
        x_nan = _C.logical_or(_C.ne(_C._op("real", xt), _C._op("real", xt)),
                              _C.ne(_C._op("imag", xt), _C._op("imag", xt)))
    nan_mask = _C.logical_and(nan_mask, _C.logical_not(_C.any(x_nan, [-2, -1], False)))
    inf = _core.complex_scalar(complex(_np.inf), _core.np_dtype(rt)) \
        if _core.np_dtype(rt).kind == "c" else _C.full((), _np.inf, dtype=rt.dtype)
    rt = _C.where(nan_mask, inf, rt)
    return wrap(kind, rt, scalar=rt.ndim == 0)


@_implements(_np.linalg.tensorinv)
def tensorinv(a, ind=2, *, _kind=None):
    """NumPy 1.24's tensorinv, step for step."""
    kind = _kind or result_kind((a,), ndarray)
    a = ndarray(_tensor(a, "tensorinv"))
    oldshape = a.shape
    prod = 1
    if ind > 0:
        invshape = oldshape[ind:] + oldshape[:ind]
        for k in oldshape[ind:]:
            prod *= k
    else:
        raise ValueError("Invalid ind argument.")
    ia = inv(a.reshape(prod, -1))
    return wrap(kind, ia.reshape(*invshape)._t)


@_implements(_np.linalg.tensorsolve)
def tensorsolve(a, b, axes=None, *, _kind=None):
    """NumPy 1.24's tensorsolve, step for step."""
    kind = _kind or result_kind((a, b), ndarray)
    a = ndarray(_tensor(a, "tensorsolve"))
    b = ndarray(_tensor(b, "tensorsolve"))
    an = a.ndim
    if axes is not None:
        allaxes = list(range(0, an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        a = a.transpose(allaxes)
    oldshape = a.shape[-(an - b.ndim):]
    prod = 1
    for k in oldshape:
        prod *= k
    if a.size != prod ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    res = solve(a.reshape(prod, prod), b.ravel())
    return wrap(kind, res.reshape(oldshape)._t)


# The transform that traces a body of each of these names (a prefix).
_TRANSFORM_BODIES = {"vjp_body": "hop.grad or hop.vjp", "jvp_body": "hop.jvp",
                     "vmap_body": "hop.vmap"}


def _real_dtype_decidable(what):
    """Raises UnsupportedError where `what` (eig, eigvals) of a real matrix
    runs in a HOP body: its result dtype depends on the eigenvalues, a
    decision a body traced once cannot make (a bool() there is a
    TraceError about control flow the user did not write)."""
    from .._breaks import _compiling
    if _C.tracing() is None or _C._trace_depth() < 2 or _compiling() is not None:
        return  # eager, hop.compile's own code, or hop.trace's root (its TraceError)
    body = _C._body_name() or "a HOP body"
    by = next((f", traced by {t}" for p, t in _TRANSFORM_BODIES.items()
               if body.startswith(p)), "")
    raise _C.UnsupportedError(
        f"{what} of a real matrix in {body}{by}: NumPy's result is real when every "
        f"eigenvalue is real and complex otherwise, a dtype that depends on the values, "
        f"which a HOP body cannot follow; pass a complex matrix (a.astype(complex)) "
        f"to get complex eigenvalues whatever they are")


def _eig(a, vectors, what, kind):
    """NumPy 1.24's eig/eigvals: LAPACK's geev in double precision (NumPy's
    _commonType computes in float64/complex128 and casts to the result
    dtype after), and for a real input real results when every eigenvalue
    is real, complex ones otherwise: a decision on the data, which
    hop.compile makes as it makes a data-dependent `if` (a guard on the
    path; hop.trace raises saying so), and a HOP body (a transform's, a
    branch's) cannot: there a real input is an UnsupportedError naming the
    body, a complex one works.  The op checks that the input is finite
    (NumPy's LinAlgError), in every mode."""
    t = _tensor(a, what)
    _stacked_2d(t)
    _stacked_square(t)
    ct, result_t = _common(t, what=what)
    cplx = result_t.kind == "c"
    t = _core.cast(t, ct)
    n = t.shape[-1]
    p = _C._op("linalg_eig", t, vectors)
    w = p.select(-2, 0) if vectors else p
    v = p.slice(-2, 1, n + 1) if vectors else None
    if not cplx:
        _real_dtype_decidable(what)
        if bool(_C.all(_C.eq(_C._op("imag", w), 0), None, False)):
            w = _C._op("real", w)
            v = _C._op("real", v) if vectors else None
        else:
            result_t = _np.dtype(_np.complex64 if result_t == _np.dtype(_np.float32)
                                 else _np.complex128)
    w = wrap(kind, _core.cast(w, result_t))
    return (w, wrap(kind, _core.cast(v, result_t))) if vectors else w


@_implements(_np.linalg.eig)
def eig(a, *, _kind=None):
    return _eig(a, True, "eig", _kind or result_kind((a,), ndarray))


@_implements(_np.linalg.eigvals)
def eigvals(a, *, _kind=None):
    return _eig(a, False, "eigvals", _kind or result_kind((a,), ndarray))


_direct.install(globals(), __all__)  # the user's calls: see _direct
