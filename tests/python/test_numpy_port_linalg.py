"""Ported from PyTorch's test/torch_np/numpy_tests/linalg/test_linalg.py
(issue #29): torch's table of linear-algebra cases (square, non-square,
hermitian, in single, double, csingle and cdouble, 0 x 0 and other empty
ones, plain lists, and each stacked into (3, ...) and (3, 2, ...) batches)
run through each routine's case classes, every call by NumPy, eagerly by hop.numpy and by
hop.compile (numpy_diff.check), together with the identity torch asserts
(solve's a @ x == b, inv's a @ inv(a) == I, svd's and eigh's
reconstructions).  Singular vectors and eigenvectors are compared through
their reconstructions (their signs are LAPACK's choice); eig's and
eigvals' eigenvalues as a set (geev's order is LAPACK's), their vectors
through A v = v w, and cond in five norms.  Left out: ndarray subclasses,
the ILP64/byte-order/subprocess tests."""

import functools

import numpy as np
import pytest

import hop

from numpy_diff import ported
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)
raises = functools.partial(numpy_diff.raises, eager=True)

SRC = "numpy_tests/linalg/test_linalg.py"
LA = np.linalg
_rng = np.random.default_rng(1234)

SQUARE = {
    "single": (np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), np.array([2.0, 1.0], np.float32)),
    "double": (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([2.0, 1.0])),
    "double_2": (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[2.0, 1.0, 4.0], [3.0, 4.0, 6.0]])),
    "csingle": (np.array([[1 + 2j, 2 + 3j], [3 + 4j, 4 + 5j]], np.complex64),
                np.array([2 + 1j, 1 + 2j], np.complex64)),
    "cdouble": (np.array([[1 + 2j, 2 + 3j], [3 + 4j, 4 + 5j]]), np.array([2 + 1j, 1 + 2j])),
    "cdouble_2": (np.array([[1 + 2j, 2 + 3j], [3 + 4j, 4 + 5j]]),
                  np.array([[2 + 1j, 1 + 2j, 1 + 3j], [1 - 2j, 1 - 3j, 1 - 6j]])),
    "8x8": (_rng.random((8, 8)), _rng.random(8)),
    "1x1": (_rng.random((1, 1)), _rng.random(1)),
    "nonarray": ([[1, 2], [3, 4]], [2, 1]),
}
SQUARE_EMPTY = {"0x0": (np.empty((0, 0)), np.empty((0,)))}
_c1 = np.array([[1 + 1j, 2 + 2j, 3 - 3j], [3 - 5j, 4 + 9j, 6 + 2j]])
_c2 = np.array([[1 + 1j, 2 + 2j], [3 - 3j, 4 - 9j], [5 - 4j, 6 + 8j]])
NONSQUARE = {
    "single_nsq_1": (np.array([[1.0, 2.0, 3.0], [3.0, 4.0, 6.0]], np.float32),
                     np.array([2.0, 1.0], np.float32)),
    "single_nsq_2": (np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32),
                     np.array([2.0, 1.0, 3.0], np.float32)),
    "double_nsq_1": (np.array([[1.0, 2.0, 3.0], [3.0, 4.0, 6.0]]), np.array([2.0, 1.0])),
    "double_nsq_2": (np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), np.array([2.0, 1.0, 3.0])),
    "csingle_nsq_1": (_c1.astype(np.complex64), np.array([2 + 1j, 1 + 2j], np.complex64)),
    "csingle_nsq_2": (_c2.astype(np.complex64), np.array([2 + 1j, 1 + 2j, 3 - 3j], np.complex64)),
    "cdouble_nsq_1": (_c1, np.array([2 + 1j, 1 + 2j])),
    "cdouble_nsq_2": (_c2, np.array([2 + 1j, 1 + 2j, 3 - 3j])),
    "cdouble_nsq_1_2": (_c1, np.array([[2 + 1j, 1 + 2j], [1 - 1j, 2 - 2j]])),
    "cdouble_nsq_2_2": (_c2, np.array([[2 + 1j, 1 + 2j], [1 - 1j, 2 - 2j], [1 - 1j, 2 - 2j]])),
    "8x11": (_rng.random((8, 11)), _rng.random(8)),
    "1x5": (_rng.random((1, 5)), _rng.random(1)),
    "5x1": (_rng.random((5, 1)), _rng.random(5)),
}
NONSQUARE_EMPTY = {"0x4": (_rng.random((0, 4)), _rng.random(0)),
                   "4x0": (_rng.random((4, 0)), _rng.random(4))}
HERMITIAN = {
    "hsingle": np.array([[1.0, 2.0], [2.0, 1.0]], np.float32),
    "hdouble": np.array([[1.0, 2.0], [2.0, 1.0]]),
    "hcsingle": np.array([[1.0, 2 + 3j], [2 - 3j, 1]], np.complex64),
    "hcdouble": np.array([[1.0, 2 + 3j], [2 - 3j, 1]]),
    "hnonarray": [[1, 2], [2, 1]],
    "matrix_b_only": np.array([[1.0, 2.0], [2.0, 1.0]]),
    "hmatrix_1x1": _rng.random((1, 1)),
}
HERMITIAN_EMPTY = {"hempty": np.empty((0, 0))}


def generalized(cases):
    """torch's _make_generalized_cases: each array case stacked as (3, ...)
    (scaled 1, 2, 3; b by 1, 7, 6) and tiled as (3, 2, ...)."""
    out = {}
    for name, case in cases.items():
        a, b = case if isinstance(case, tuple) else (case, None)
        if not isinstance(a, np.ndarray):
            continue
        out[name + "_tile3"] = (np.stack([a, 2 * a, 3 * a]),
                                None if b is None else np.stack([b, 7 * b, 6 * b]))
        out[name + "_tile213"] = (np.array([a] * 6).reshape((3, 2) + a.shape),
                                  None if b is None else np.array([b] * 6).reshape((3, 2) + b.shape))
    return out


def rtol(*arrays):
    single = any(np.asarray(x).dtype in (np.float32, np.complex64) for x in arrays if x is not None)
    return 1e-4 if single else 1e-9


SETS = {  # torch's case-class test methods -> the cases each runs
    "test_sq_cases": SQUARE, "test_empty_sq_cases": SQUARE_EMPTY,
    "test_nonsq_cases": NONSQUARE, "test_empty_nonsq_cases": NONSQUARE_EMPTY,
    "test_generalized_sq_cases": generalized(SQUARE),
    "test_generalized_empty_sq_cases": generalized(SQUARE_EMPTY),
    "test_generalized_nonsq_cases": generalized(NONSQUARE),
    "test_generalized_empty_nonsq_cases": generalized(NONSQUARE_EMPTY),
    "test_herm_cases": HERMITIAN, "test_empty_herm_cases": HERMITIAN_EMPTY,
    "test_generalized_herm_cases": generalized(HERMITIAN),
    "test_generalized_empty_herm_cases": generalized(HERMITIAN_EMPTY),
}
SQ = ["test_sq_cases", "test_empty_sq_cases", "test_generalized_sq_cases",
      "test_generalized_empty_sq_cases"]
NSQ = ["test_nonsq_cases", "test_empty_nonsq_cases", "test_generalized_nonsq_cases",
       "test_generalized_empty_nonsq_cases"]
HERM = ["test_herm_cases", "test_empty_herm_cases", "test_generalized_herm_cases",
        "test_generalized_empty_herm_cases"]


def _matmul(a, x):
    return np.matmul(a, x[..., None])[..., 0] if np.ndim(x) == np.ndim(a) - 1 else np.matmul(a, x)


def _eye_like(a):
    return np.broadcast_to(np.eye(np.shape(a)[-1]), np.shape(a))


def _svd(a):
    u, s, vh = LA.svd(a, full_matrices=False)
    return s, u, vh, LA.svd(a, compute_uv=False)


def _eigh(a):
    w, v = LA.eigh(a)
    return w, v, LA.eigh(a, "U")[0], LA.eigvalsh(a), LA.eigvalsh(a, "U")


def _h(x):
    return np.swapaxes(x, -1, -2).conj()


# torch's class -> (the routine, its case sets, whether it takes b, the
# identity torch asserts, on hop's result: singular vectors and
# eigenvectors are compared only through it, their signs being LAPACK's)
ROUTINES = {
    "TestSolve": (lambda a, b: LA.solve(a, b), SQ, True,
                  lambda a, b, x: (_matmul(np.asarray(a), x), b)),
    "TestInv": (lambda a: LA.inv(a), SQ, False, lambda a, b, r: (np.matmul(a, r), _eye_like(a))),
    "TestSVD": (_svd, SQ, False, lambda a, b, r: (np.matmul(r[1] * r[0][..., None, :], r[2]), a)),
    "TestPinv": (lambda a: LA.pinv(a), SQ + NSQ, False,
                 lambda a, b, p: (np.matmul(np.matmul(a, p), a), a)),
    "TestDet": (lambda a: (LA.det(a), LA.slogdet(a)), SQ, False, None),
    "TestLstsq": (lambda a, b: LA.lstsq(a, b, rcond=-1), SQ[:2] + NSQ[:2], True, None),
    "TestEigh": (_eigh, HERM, False,
                 lambda a, b, r: (np.matmul(r[1] * r[0][..., None, :], _h(r[1])), a)),
    "TestEig": (lambda a: LA.eig(a), SQ, False,
                lambda a, b, r: (np.matmul(a, r[1]), r[1] * r[0][..., None, :])),
    "TestEigvals": (lambda a: LA.eigvals(a), SQ, False, None),
    "TestCond": (lambda a: (LA.cond(a), LA.cond(a, -2), LA.cond(a, 1), LA.cond(a, -np.inf),
                            LA.cond(a, "fro")), SQ, False, None),
}
PARAMS = [(cls, m) for cls, (_, sets, _, _) in ROUTINES.items() for m in sets]
for _cls, _m in PARAMS:
    ported(SRC, f"{_cls}.{_m}")(lambda: None)
ported(SRC, "TestSVDHermitian.test_herm_cases")(lambda: None)
ported(SRC, "TestEigvalsh.test_herm_cases")(lambda: None)


@pytest.mark.parametrize("cls,method", PARAMS, ids=[f"{c}.{m}" for c, m in PARAMS])
def test_case_classes(cls, method):
    fn, _, takes_b, identity = ROUTINES[cls]
    for name, case in SETS[method].items():
        a, b = case if isinstance(case, tuple) else (case, None)
        if cls == "TestLstsq" and np.ndim(a) > 2:
            continue
        args = (a, b) if takes_b else (a,)
        tol = rtol(a, b)
        try:
            if cls in ("TestEig", "TestEigvals"):
                # the eigenvalues as a set (geev's order is LAPACK's) with
                # NumPy's dtype; the vectors through A v = v w below
                check(lambda x: np.sort_complex(np.ravel(LA.eigvals(x))), *args, rtol=tol)
                check(lambda x: [r.dtype for r in LA.eig(x)], *args)
            elif cls in ("TestSVD", "TestEigh"):  # the values against NumPy's, vectors below
                check(lambda *x: [r for i, r in enumerate(fn(*x)) if i not in (1, 2) or
                                  cls == "TestEigh" and i == 2], *args, rtol=tol)
            else:
                check(fn, *args, rtol=tol)
            if identity is not None:
                got, want = identity(a, b, hop.compile(fn)(*args))
                np.testing.assert_allclose(got, want, rtol=tol, atol=100 * tol)
        except AssertionError as e:
            raise AssertionError(f"case {name}: {e}") from None


@pytest.mark.parametrize("name", sorted(HERMITIAN))
def test_svd_and_eigvalsh_of_hermitian_cases(name):
    a = HERMITIAN[name]
    check(lambda x: (LA.svd(x, compute_uv=False), LA.eigvalsh(x)), a, rtol=rtol(a))


@ported(SRC, "TestSolve.test_types")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_solve_types(dtype):
    x = np.array([[1, 0.5], [0.5, 1]], dtype=dtype)
    check(lambda a: LA.solve(a, a), x, rtol=1e-5)


@ported(SRC, "TestInv.test_types")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_inv_types(dtype):
    check(lambda a: LA.inv(a), np.array([[1, 0.5], [0.5, 1]], dtype=dtype), rtol=1e-5)


@ported(SRC, "TestDet.test_types")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_det_types(dtype):
    check(lambda a: (LA.det(a), LA.slogdet(a)), np.array([[1, 0.5], [0.5, 1]], dtype=dtype),
          rtol=1e-5)


@ported(SRC, "TestDet.test_zero")
def test_det_zero():
    check(lambda a, c: (LA.det(a), LA.slogdet(a), LA.det(c), LA.slogdet(c)),
          np.array([[0.0]]), np.array([[0.0j]]))


@ported(SRC, "TestEigvalsh.test_types")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_eigvalsh_types(dtype):
    check(lambda a: (LA.eigvalsh(a), LA.eigh(a)[0]), np.array([[1, 0.5], [0.5, 1]], dtype=dtype),
          rtol=1e-5)


@ported(SRC, "TestEigvalsh.test_invalid")
def test_eigvalsh_invalid_uplo():
    x = np.array([[1, 0.5], [0.5, 1]], dtype=np.float32)
    raises(ValueError, lambda a: LA.eigvalsh(a, UPLO="lrong"), x)
    raises(ValueError, lambda a: LA.eigh(a, UPLO="lrong"), x)
    check(lambda a: (LA.eigvalsh(a, UPLO="l"), LA.eigvalsh(a, UPLO="u")), x, rtol=1e-5)


@ported(SRC, "TestEigvalsh.test_UPLO")
def test_eigvalsh_uplo():
    k = np.array([[1, -1], [-1, 1]], dtype=np.float64)
    check(lambda a, b: [LA.eigvalsh(x, u) for x in (a, b) for u in ("L", "U")] +
          [LA.eigvalsh(a)], np.array([[1, 0], [-2, 1]], dtype=np.float64),
          np.array([[1, -2], [0, 1]], dtype=np.float64), rtol=1e-9)
    check(lambda a: LA.eigvalsh(a), k, rtol=1e-9)


@ported(SRC, "TestEigvalsh.test_0_size")
def test_eigvalsh_0_size():
    check(lambda a, b: (LA.eigvalsh(a), LA.eigvalsh(b), LA.eigh(a)[0]),
          np.zeros((0, 1, 1), dtype=np.int_), np.ones((0, 0), dtype=np.complex64))


@ported(SRC, "TestCholesky.test_basic_property")
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (50, 50), (3, 10, 10)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_cholesky_basic_property(shape, dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    a = np.matmul(np.swapaxes(a, -1, -2).conj(), a).astype(dtype)
    check(lambda x: (lambda c: (c, np.matmul(c, np.swapaxes(c, -1, -2).conj())))(LA.cholesky(x)),
          a, rtol=3e-3 if dtype in (np.float32, np.complex64) else 1e-7)


@ported(SRC, "TestCholesky.test_0_size")
def test_cholesky_0_size():
    check(lambda a, b: (LA.cholesky(a), LA.cholesky(b)), np.zeros((0, 1, 1), dtype=np.int_),
          np.zeros((1, 0, 0), dtype=np.complex64))


@ported(SRC, "TestQR.test_qr_empty")
@pytest.mark.parametrize("m,n", [(3, 0), (0, 3), (0, 0)])
def test_qr_empty(m, n):
    check(lambda a: (LA.qr(a), LA.qr(a, mode="r"), LA.qr(a, mode="complete")), np.empty((m, n)))


@ported(SRC, "TestQR.test_mode_raw")
def test_qr_modes():
    a = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.double)
    check(lambda x: (LA.qr(x), LA.qr(x, mode="r"), LA.qr(x, mode="complete"),
                     LA.qr(x.T), LA.qr(x.T, mode="complete")), a, rtol=1e-9)


@ported(SRC, "TestMatrixPower.test_large_power")
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.int64])
def test_matrix_power_large_power(dtype):
    rshft = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0]], dtype=dtype)
    for power in (2**100, 2**10, 2**10 - 1, 2**10 - 2):
        check(lambda m, p=power: LA.matrix_power(m, p), rshft)


@ported(SRC, "TestMatrixPower.test_power_is_zero")
def test_matrix_power_zero():
    check(lambda m: [LA.matrix_power(m, 0), LA.matrix_power(np.stack([m, m]), 0)],
          np.array([[1.0, 2.0], [3.0, 4.0]]))


@ported(SRC, "TestMatrixPower.test_power_is_minus_one")
def test_matrix_power_minus_one():
    check(lambda m: LA.matrix_power(m, -1), np.array([[1.0, 2.0], [3.0, 4.0]]), rtol=1e-9)


@ported(SRC, "TestMatrixPower.test_exceptions_bad_power")
def test_matrix_power_bad_power():
    raises(TypeError, lambda m: LA.matrix_power(m, 1.5), np.eye(2))


@ported(SRC, "TestMatrixPower.test_exceptions_non_square")
def test_matrix_power_non_square():
    raises(LA.LinAlgError, lambda m: LA.matrix_power(m, 1), np.array([1]))
    raises(LA.LinAlgError, lambda m: LA.matrix_power(m, 1), np.array([[1], [2]]))
    raises(LA.LinAlgError, lambda m: LA.matrix_power(m, 1), np.ones((4, 3, 2)))


@ported(SRC, "TestMatrixPower.test_exceptions_not_invertible")
def test_matrix_power_not_invertible():
    raises(LA.LinAlgError, lambda m: LA.matrix_power(m, -1), np.zeros((2, 2)))


@ported(SRC, "TestMatrixRank.test_matrix_rank")
def test_matrix_rank():
    i = np.eye(4)
    check(lambda a: [LA.matrix_rank(a), LA.matrix_rank(a[:3]), LA.matrix_rank(np.zeros((4, 4))),
                     LA.matrix_rank(np.array([1, 0, 0, 0])), LA.matrix_rank(np.zeros((4,))),
                     LA.matrix_rank(np.array([1.0]))], i)


@ported(SRC, "TestMatrixRank.test_symmetric_rank")
def test_matrix_rank_hermitian():
    check(lambda a: [LA.matrix_rank(a, hermitian=True), LA.matrix_rank(np.ones((4, 4)),
                                                                       hermitian=True),
                     LA.matrix_rank(np.zeros((4, 4)), hermitian=True)], np.eye(4))


@ported(SRC, "TestMultiDot.test_basic_function_with_three_arguments")
def test_multi_dot_three():
    rng = np.random.default_rng(2)
    check(lambda a, b, c: LA.multi_dot([a, b, c]), rng.random((6, 2)), rng.random((2, 6)),
          rng.random((6, 2)), rtol=1e-9)


@ported(SRC, "TestMultiDot.test_basic_function_with_dynamic_programming_optimization")
def test_multi_dot_four():
    rng = np.random.default_rng(3)
    check(lambda a, b, c, d: LA.multi_dot([a, b, c, d]), rng.random((6, 2)), rng.random((2, 6)),
          rng.random((6, 2)), rng.random((2, 1)), rtol=1e-9)


@ported(SRC, "TestMultiDot.test_vector_as_first_and_last_argument")
def test_multi_dot_vectors():
    rng = np.random.default_rng(4)
    check(lambda a, b, c, d: LA.multi_dot([a, b, c, d]), rng.random(2), rng.random((2, 6)),
          rng.random((6, 2)), rng.random(2), rtol=1e-9)


@ported(SRC, "TestMultiDot.test_too_few_input_arrays")
def test_multi_dot_too_few():
    raises(ValueError, lambda a: LA.multi_dot([a]), np.ones(3))


NORM_ORDS = [None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"]


@ported(SRC, "TestNorm_NonSystematic.test_intmin")
def test_norm_of_int_min():
    check(lambda x: LA.norm(x), np.array([-(2**31)], dtype=np.int32))


@ported(SRC, "_TestNorm2D.test_matrix_2x2")
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64])
def test_norm_matrix_2x2(dt):
    a = np.array([[1, 3], [5, 7]], dtype=dt)
    check(lambda x: [LA.norm(x, o) for o in NORM_ORDS], a, rtol=1e-5)


@ported(SRC, "_TestNorm2D.test_matrix_3x3")
def test_norm_matrix_3x3():
    a = 1 / 10 * np.array([[1, 2, 3], [6, 0, 5], [3, 2, 1]], dtype=np.float64)
    check(lambda x: [LA.norm(x, o) for o in NORM_ORDS], a, rtol=1e-9)


@ported(SRC, "_TestNormGeneral.test_vector")
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64])
def test_norm_vector(dt):
    a = np.array([1, 2, 3, 4], dtype=dt)
    check(lambda x: [LA.norm(x, o) for o in (None, np.inf, -np.inf, 0, 1, -1, 2, -2, 3, 0.5)],
          a, rtol=1e-5)


@ported(SRC, "_TestNormGeneral.test_axis")
def test_norm_axis():
    b = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float64)
    check(lambda x: [LA.norm(x, o, axis=k) for o in (None, -np.inf, -1, 0, 1, 2, 3, np.inf)
                     for k in (0, 1)] +
          [LA.norm(x, o, axis=ax) for o in (1, -1, 2, -2, "fro", "nuc", np.inf, -np.inf)
           for ax in ((0, 1), (1, 0))], b, rtol=1e-9)


@ported(SRC, "_TestNormGeneral.test_keepdims")
def test_norm_keepdims():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    check(lambda x: [LA.norm(x, o, axis=k, keepdims=True) for o in (None, 1, 2, np.inf)
                     for k in (0, 1, 2)] +
          [LA.norm(x, o, axis=ax, keepdims=True) for o in (None, 1, -1, "fro", np.inf)
           for ax in ((0, 1), (1, 2), (2, 0))], a, rtol=1e-9)


@ported(SRC, "_TestNormGeneral.test_bad_args")
def test_norm_bad_args():
    a = np.array([[1, 2, 3], [4, 5, 6]])
    b = np.arange(24).reshape(2, 3, 4)
    raises(ValueError, lambda x: LA.norm(x, "fro", axis=0), a)
    raises(ValueError, lambda x: LA.norm(x, "nuc", axis=0), a)
    raises(ValueError, lambda x: LA.norm(x, "test", axis=None), a)
    raises(ValueError, lambda x: LA.norm(x, 3, axis=(0, 1)), a)
    raises(ValueError, lambda x: LA.norm(x, None, axis=(0, 1, 2)), b)


@ported(SRC, "_TestNormGeneral.test_empty")
def test_norm_empty():
    check(lambda a, b: (LA.norm(a), LA.norm(b)), np.array([]), np.array([[]]))
