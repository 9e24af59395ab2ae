"""Ported from PyTorch's test/torch_np/numpy_tests/core/test_einsum.py
(issue #29): TestEinsum's calls, each run by NumPy, eagerly by hop.numpy and by hop.compile
(numpy_diff.check: values, dtype, shape, ndarray or NumPy scalar or
Python value, the exception type, the arguments after the call), in both
spellings (subscripts string, and operands with sublists) and with
`optimize` False and True where torch tries both.  torch's xfails are
ported (the int8/uint8/int16 sums' wraparound, the float16 sums, the
views, the non-contiguous `out`, the output order), as NumPy's answers.
The random operands of torch's tests are a seeded generator's.  The
sums of check_einsum_sums run at the sizes 1, 2, 3, 7, 8 and 16 of torch's
1..16 (the unrolled loops' remainders), and test_einsum_broadcast's
(1, 1, 1, 160, 160, 120) operand at (1, 1, 1, 8, 8, 6): the file's time in
seconds.  Left out: TestEinsumPath's six tests of np.einsum_path's chosen
contraction order and of explicit paths (torch skips the class: hop
contracts in its own order and `einsum_path` is NumPy's planner, not a
computation); its test_spaces, an einsum call, is here, and so is
TestMisc.test_overlap: 35 of the file's 41 tests.  The port found
three bugs, fixed with its tests: einsum of a 0-d operand beside an array
took no account of the 0-d one's value (`np.einsum(",i->", 3, v)` of an
int8 v was int64, NumPy's int8; test_einsum_sums), and a sum over an
index of an integer operand narrower than int64 came out int64, which
the next operand's matmul refused (`np.einsum(",i->", s, v)` of an int8
0-d s raised hop's DTypeError; test_different_paths).  A third: the
result of no dimensions of an einsum with `optimize` other than False is
a 0-d ndarray in NumPy (its `asanyarray`), where hop.numpy gave a NumPy
scalar (test_einsum_optimized_result_of_no_dimensions_is_an_array)."""

import functools

import numpy as np
import pytest

import hop
import hop.numpy as hnp

from numpy_diff import ported
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)
raises = functools.partial(numpy_diff.raises, eager=True)

SRC = "numpy_tests/core/test_einsum.py"
port = lambda test: ported(SRC, test)  # noqa: E731
SIZES = dict(zip("abcdefghij", [2, 3, 4, 5, 4, 3, 2, 6, 5, 4]))


ERRORS = [
    ((), {}), (("",), {}), ((0, 0), {}), (("", 0), {"out": "test"}), (("", 0), {"order": "W"}),
    (("", 0), {"casting": "blah"}), (("", 0), {"dtype": "bad_data_type"}),
    (("", 0), {"bad_arg": 0}), ((None,) * 63, {}), (("", 0, 0), {}), ((",", 0, [0], [0]), {}),
    ((",", [0]), {}), (("i", 0), {}), (("ij", [0, 0]), {}), (("...i", 0), {}),
    (("i...j", [0, 0]), {}), (("i...", 0), {}), (("ij...", [0, 0]), {}), (("i..", [0, 0]), {}),
    ((".i...", [0, 0]), {}), (("j->..j", [0, 0]), {}), (("j->.j...", [0, 0]), {}),
    (("i%...", [0, 0]), {}), (("...j$", [0, 0]), {}), (("i->&", [0, 0]), {}),
    (("i->ij", [0, 0]), {}), (("ij->jij", [[0, 0], [0, 0]]), {}),
    (("ii", np.arange(6).reshape(2, 3)), {}), (("ii->i", np.arange(6).reshape(2, 3)), {}),
    (("i", np.arange(6).reshape(2, 3)), {}),
    (("i->i", [[0, 1], [0, 1]]), {"out": np.arange(4).reshape(2, 2)}),
    (("aabcb,abc", np.ones((3, 3, 4, 5, 6)), np.ones((3, 4, 5))), {}),
    (("i->i", np.arange(6).reshape(-1, 1)), {"order": "d"})]


@port("TestEinsum.test_einsum_errors")
@pytest.mark.parametrize("do_opt", [True, False])
@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_einsum_errors(case, do_opt):
    args, kwargs = ERRORS[case]
    # the exception NumPy raises, of the same type (check compares it)
    check(lambda: np.einsum(*args, optimize=do_opt, **kwargs))
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    if arrays:  # the arrays arguments of the compiled function
        def f(*arrs):
            full = list(args)
            for i, a in zip(arrays, arrs):
                full[i] = a
            return np.einsum(*full, optimize=do_opt, **kwargs)
        check(f, *[args[i] for i in arrays])


@port("TestEinsum.test_einsum_views")
@pytest.mark.parametrize("do_opt", [True, False])
def test_einsum_views(do_opt):
    def f(a, a3, a24):
        out = []
        for b in (np.einsum("...", a, optimize=do_opt), np.einsum(a, [Ellipsis], optimize=do_opt),
                  np.einsum("ij", a, optimize=do_opt), np.einsum(a, [0, 1], optimize=do_opt),
                  np.einsum("ji", a, optimize=do_opt), np.einsum(a, [1, 0], optimize=do_opt)):
            out += [b, b.base is a]
        for spec in ("...ii->...i", "ii...->...i", "...ii->i...", "jii->ij", "ii...->i...",
                     "i...i->i...", "i...i->...i", "iii->i"):
            b = np.einsum(spec, a3, optimize=do_opt)
            out += [b, b.base is a3]
        for b in (np.einsum(a3, [Ellipsis, 0, 0], [Ellipsis, 0], optimize=do_opt),
                  np.einsum(a3, [0, 0, Ellipsis], [0, Ellipsis], optimize=do_opt),
                  np.einsum(a3, [0, 0, 0], [0], optimize=do_opt),
                  np.einsum("ijk->jik", a24, optimize=do_opt),
                  np.einsum(a24, [0, 1, 2], [1, 0, 2], optimize=do_opt)):
            out += [b, b.base is a3 or b.base is a24]
        return out
    check(f, np.arange(6).reshape(2, 3), np.arange(27).reshape(3, 3, 3),
          np.arange(24).reshape(2, 3, 4))


def _sums(dtype, do_opt, n):
    """check_einsum_sums' calls at size n, as one function of its arrays."""
    def f(a1, a2, a3, sq, b2, b3, c4, m6):
        return [np.einsum("i->", a1, optimize=do_opt), np.einsum(a1, [0], [], optimize=do_opt),
                np.einsum("...i->...", a3, optimize=do_opt),
                np.einsum(a3, [Ellipsis, 0], [Ellipsis], optimize=do_opt),
                np.einsum("i...->...", a2, optimize=do_opt),
                np.einsum(a2, [0, Ellipsis], [Ellipsis], optimize=do_opt),
                np.einsum("i...->...", a3, optimize=do_opt),
                np.einsum("ii", sq, optimize=do_opt), np.einsum(sq, [0, 0], optimize=do_opt),
                np.einsum("..., ...", b2, a3, optimize=do_opt),
                np.einsum(b2, [Ellipsis], a3, [Ellipsis], optimize=do_opt),
                np.einsum("...i, ...i", a3, a1, optimize=do_opt),
                np.einsum(a3, [Ellipsis, 0], a1, [Ellipsis, 0], optimize=do_opt),
                np.einsum("i,j", b3, a1 + 1, optimize=do_opt),
                np.einsum(b3, [0], a1 + 1, [1], optimize=do_opt),
                np.einsum("ij, j", c4, a1, optimize=do_opt),
                np.einsum(c4, [0, 1], a1, [1], optimize=do_opt),
                np.einsum("ji,j", c4.T, a1.T, optimize=do_opt),
                np.einsum("ij,jk", c4, m6, optimize=do_opt),
                np.einsum(c4, [0, 1], m6, [1, 2], optimize=do_opt)]
    a1 = np.arange(n, dtype=dtype)
    args = (a1, np.arange(2 * n, dtype=dtype).reshape(2, n),
            np.arange(2 * 3 * n, dtype=dtype).reshape(2, 3, n),
            np.arange(n * n, dtype=dtype).reshape(n, n),
            np.arange(3 * n, dtype=dtype).reshape(3, n), np.arange(3, dtype=dtype) + 1,
            np.arange(4 * n, dtype=dtype).reshape(4, n),
            np.arange(n * 6, dtype=dtype).reshape(n, 6))
    return f, args


def _sums_out(dtype, do_opt):
    """check_einsum_sums' calls with out= and dtype='f8', casting='unsafe',
    the triple product, tensordot, the logical and, scalars and strides."""
    def f(a, b, c, d, t1, t2, t3, la, lb, lc, v):
        d[...] = 0
        np.einsum("ij,jk,kl", a, b, c, out=d, dtype="f8", casting="unsafe", optimize=do_opt)
        t3[...] = 0
        np.einsum(t1, [0, 1, 2], t2, [1, 0, 3], [2, 3], out=t3, dtype="f8", casting="unsafe",
                  optimize=do_opt)
        out = [np.einsum("ij,jk,kl", a, b, c, optimize=do_opt),
               np.einsum(a, [0, 1], b, [1, 2], c, [2, 3], optimize=do_opt),
               np.einsum("ijk, jil -> kl", t1, t2), np.einsum(a, [0, 1], b, [1, 2]),
               np.einsum("i,i,i->i", la, lb, lc, dtype="?", casting="unsafe", optimize=do_opt),
               np.einsum(la, [0], lb, [0], lc, [0], [0], dtype="?", casting="unsafe"),
               np.einsum(",i->", 3, v), np.einsum(3, [], v, [0], []), np.einsum("i,->", v, 3),
               np.einsum(v, [0], 3, [], [])]
        for x, y in ((v, v), (v[1:], v[:-1])):
            out += [np.einsum("...,...", x, y, optimize=do_opt),
                    np.einsum("i,i", x, y, optimize=do_opt),
                    np.einsum("i,->i", x, 2, optimize=do_opt),
                    np.einsum(",i->i", 2, x, optimize=do_opt),
                    np.einsum("i,->", x, 2, optimize=do_opt),
                    np.einsum(",i->", 2, x, optimize=do_opt)]
        return out
    neg = -2 if np.dtype(dtype).kind != "u" else np.iinfo(dtype).max - 1
    args = (np.arange(12, dtype=dtype).reshape(3, 4), np.arange(20, dtype=dtype).reshape(4, 5),
            np.arange(30, dtype=dtype).reshape(5, 6), np.arange(18, dtype=dtype).reshape(3, 6),
            np.arange(60, dtype=dtype).reshape(3, 4, 5),
            np.arange(24, dtype=dtype).reshape(4, 3, 2),
            np.arange(10, dtype=dtype).reshape(5, 2),
            np.array([1, 3, neg, 0, 12, 13, 0, 1], dtype=dtype),
            np.array([0, 3.5, 0.0, neg, 0, 1, 3, 12]).astype(dtype),
            np.array([True, True, False, True, True, False, True, True]),
            np.arange(9, dtype=dtype))
    return f, args


def _cases():
    p, q, r = np.arange(2) + 1, np.arange(4).reshape(2, 2) + 3, np.arange(4).reshape(2, 2) + 7

    def f(p, q, r, ones102, ones12, x, y, p15, q55, eye, one2):
        out = [np.einsum("z,mz,zm->", p, q, r)]
        for opt in (True, False):
            out += [np.einsum("ij,ij->j", ones102, ones12, optimize=opt),
                    np.einsum("i, i", x, y, optimize=opt),
                    np.einsum("...ij,...jk->...ik", p15, p15, optimize=opt),
                    np.einsum("...ij,...jk->...ik", p15, q55, optimize=opt),
                    np.einsum("ji,i->", eye, one2, optimize=opt),
                    np.einsum("i,ij->", one2, eye, optimize=opt),
                    np.einsum("ij,i->", eye, one2, optimize=opt)]
        return out
    return f, (p, q, r, np.ones((10, 2)), np.ones((1, 2)), np.array([2.0, 3.0]), np.array([4.0]),
               np.ones((1, 5)) / 2, np.ones((5, 5)) / 2, np.eye(2), np.ones(2))


SUM_DTYPES = {"int8": "i1", "uint8": "u1", "int16": "i2", "int32": "i4", "int64": "i8",
              "float16": "f2", "float32": "f4", "float64": "f8", "cfloat64": "c8",
              "cfloat128": "c16"}


for _name in SUM_DTYPES:
    port(f"TestEinsum.test_einsum_sums_{_name}")(lambda: None)


@pytest.mark.parametrize("name", SUM_DTYPES)
def test_einsum_sums(name):
    dtype = SUM_DTYPES[name]
    rtol = 1e-3 if dtype == "f2" else 1e-6 if dtype in ("f4", "c8") else None
    for do_opt in (False, True):
        for n in (1, 2, 3, 7, 8, 16):
            f, args = _sums(dtype, do_opt, n)
            check(f, *args, rtol=rtol)
        f, args = _sums_out(dtype, do_opt)
        check(f, *args, rtol=rtol)
    check(lambda: np.einsum("..., ...", 3, 4))
    f, args = _cases()
    check(f, *args)


@port("TestEinsum.test_einsum_misc")
def test_einsum_misc():
    def f(a, b, c5, d5, x, y, z):
        return [np.einsum("ij...,j...->i...", a, b),
                np.einsum("ij...,j...->i...", a, b, optimize=True),
                np.einsum("...i,...i", [1, 2, 3], [2, 3, 4]),
                np.einsum("...i,...i", [1, 2, 3], [2, 3, 4], optimize="greedy"),
                np.einsum("ijklm,ijn,ijn->", c5, d5, d5), np.einsum("ijklm,ijn->", c5, d5),
                np.einsum("x,yx,zx->xzy", x, y, z),
                np.einsum("x,yx,zx->xzy", x, y, z, optimize=True),
                np.einsum("i,j", [1], [2], out=None)]
    check(f, np.ones((1, 2)), np.ones((2, 2, 1)), np.ones((5, 12, 4, 2, 3), np.int64),
          np.ones((5, 12, 11), np.int64), np.arange(1, 3), np.arange(1, 5).reshape(2, 2),
          np.arange(1, 9).reshape(4, 2))


def test_einsum_optimized_result_of_no_dimensions_is_an_array():
    """NumPy's einsum with `optimize` other than False returns
    `asanyarray` of its last contraction: a result of no dimensions is a 0-d
    ndarray, where optimize=False's is a NumPy scalar.  hop.numpy gave the
    scalar for both (test_einsum_misc's three-operand sum, and
    check_einsum_sums' optimized sums)."""
    def f(a, c5, d5):
        return [np.einsum("ijklm,ijn,ijn->", c5, d5, d5, optimize=True),
                np.einsum("i->", a, optimize=True), np.einsum("i->", a, optimize="greedy"),
                np.einsum("i,i", a, a, optimize=True), np.einsum(a, [0], [], optimize="optimal"),
                np.einsum("ijklm,ijn,ijn->", c5, d5, d5), np.einsum("i->", a),
                np.einsum("i,i", a, a), np.einsum("i,i->i", a, a, optimize=True)]
    args = (np.arange(3.0), np.ones((5, 12, 4, 2, 3), np.int64), np.ones((5, 12, 11), np.int64))
    out = check(f, *args)
    assert [type(x) for x in out[:5]] == [np.ndarray] * 5
    assert [type(x) for x in out[5:8]] == [np.int64, np.float64, np.float64]
    import hop.numpy as hnp
    got = f(*[hnp.asarray(a) for a in args])
    assert [type(x) is hnp.ndarray and not x._scalar for x in got[:5]] == [True] * 5
    assert [x._scalar for x in got[5:8]] == [True, True, True]


@port("TestEinsum.test_subscript_range")
def test_subscript_range():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    check(lambda a, b: [np.einsum(a, [0, k], b, [k, 2], [0, 2], optimize=False)
                        for k in (20, 27, 51)], a, b)
    raises(ValueError, lambda a, b: np.einsum(a, [0, 52], b, [52, 2], [0, 2], optimize=False),
           a, b)
    raises(ValueError, lambda a, b: np.einsum(a, [-1, 5], b, [5, 2], [-1, 2], optimize=False),
           a, b)


@port("TestEinsum.test_einsum_broadcast")
def test_einsum_broadcast():
    def f(A, B, A2, B2, a, v, A6, B6):
        out = [np.einsum("ijk,j->ijk", A, B, optimize=False),
               np.einsum("ik,kj->ij", A2, B2, optimize=False),
               np.einsum("ijkl,k->ijl", a, v, optimize=False),
               np.einsum("...lmn,...lmno->...o", A6, B6, optimize=False)]
        for opt in (True, False):
            out += [np.einsum("ij...,j...->ij...", A, B, optimize=opt),
                    np.einsum("ij...,...j->ij...", A, B, optimize=opt),
                    np.einsum("ij...,j->ij...", A, B, optimize=opt),
                    np.einsum("ik...,k...->i...", A2, B2, optimize=opt),
                    np.einsum("ik...,...kj->i...j", A2, B2, optimize=opt),
                    np.einsum("...k,kj", A2, B2, optimize=opt),
                    np.einsum("ik,k...->i...", A2, B2, optimize=opt),
                    np.einsum("ijkl,k", a, v, optimize=opt),
                    np.einsum("...kl,k", a, v, optimize=opt),
                    np.einsum("...kl,k...", a, v, optimize=opt),
                    np.einsum("...lmn,lmno->...o", A6, B6, optimize=opt)]
        return out
    J, K, M = 8, 8, 6
    check(f, np.arange(24).reshape(2, 3, 4), np.arange(3), np.arange(12).reshape((4, 3)),
          np.arange(6).reshape((3, 2)), np.arange(120).reshape(2, 3, 4, 5), np.arange(4),
          np.arange(J * K * M).reshape(1, 1, 1, J, K, M),
          np.arange(J * K * M * 3).reshape(J, K, M, 3))


@port("TestEinsum.test_einsum_fixedstridebug")
def test_einsum_fixedstridebug():
    f = lambda A, B: (np.einsum("cl, cpx->lpx", A, B), np.tensordot(A, B, axes=(0, 0)))  # noqa
    check(f, np.arange(6).reshape(2, 3).astype(np.float32),
          np.arange(2 * 3 * 2731).reshape(2, 3, 2731).astype(np.int16), rtol=1e-6)
    check(f, np.arange(9).reshape(3, 3).astype(np.float64),
          np.arange(3 * 3 * 64 * 64).reshape(3, 3, 64, 64).astype(np.float32))


@port("TestEinsum.test_einsum_fixed_collapsingbug")
def test_einsum_fixed_collapsingbug():
    def f(x):
        y1 = np.zeros((5, 5))
        np.einsum("aabb->ab", x, out=y1)
        idx = np.arange(5)
        return y1, x[idx[:, None], idx[:, None], idx, idx]
    check(f, np.random.default_rng(0).normal(0, 1, (5, 5, 5, 5)))


@port("TestEinsum.test_einsum_failed_on_p9_and_s390x")
def test_einsum_failed_on_p9_and_s390x():
    check(lambda t: (np.einsum("ijij->", t), t.trace(axis1=0, axis2=2).trace()),
          np.random.default_rng(1).random((10, 10, 10, 10)), rtol=1e-12)


@port("TestEinsum.test_einsum_all_contig_non_contig_output")
def test_einsum_all_contig_non_contig_output():
    def f(x, x32, base, base3):
        out = base[::2]
        np.einsum("mi,mi,mi->m", x, x, x, out=out)
        np.einsum("im,im,im->m", x, x, x, out=base[1::2])
        np.einsum("ij,jk->ik", x32, x32, out=base3[..., 0])
        return out
    check(f, np.ones((5, 5)), np.ones((2, 2), np.float32), np.ones(10), np.ones((2, 2, 2)))


LONGLONG_GAP = pytest.mark.xfail(strict=True, reason=(
    "open gap (docs/RELIABILITY.md, the forty-first session's): a longlong ('q', 'Q') "
    "scalar result is np.int64 (np.uint64) in hop, np.longlong in NumPy"))


@port("TestEinsum.test_different_paths")
@pytest.mark.parametrize("dtype", [pytest.param(c, marks=LONGLONG_GAP) if c in "qQ" else c
                                   for c in np.typecodes["AllFloat"] + np.typecodes["AllInteger"]
                                   if c not in "gG"])
def test_different_paths(dtype):
    dt = np.dtype(dtype)

    def f(arr, scalar, arr5):
        out = np.ones(7, dtype=dt)
        res = np.einsum("i,->i", arr, dt.type(2), out=out)
        return [np.einsum("i->", arr), arr.sum(), np.einsum("i,i->i", arr, arr),
                np.einsum("i,i->i", arr.repeat(2)[::2], arr.repeat(2)[::2]),
                np.einsum("i,i->", arr, arr), res is out, out, np.einsum(",i->i", scalar, arr),
                np.einsum(",i->", scalar, arr), np.einsum("i,->", arr, scalar),
                np.einsum("i->", scalar * arr), np.einsum("i,i,i->", arr5, arr5, arr5),
                np.einsum("i,i,i,i->", arr5, arr5, arr5, arr5)]
    check(f, (np.arange(7) + 0.5).astype(dt), np.array(2, dtype=dt),
          np.array([0.5, 0.5, 0.25, 4.5, 3.0]).astype(dt),
          rtol=1e-3 if dtype == "e" else 1e-6 if dtype in "fF" else None)


@port("TestEinsum.test_small_boolean_arrays")
def test_small_boolean_arrays():
    def f(a, out):
        a = a[:2]
        a[...] = True
        return np.einsum("...ij,...jk->...ik", a, a, out=out[:2])
    check(f, np.zeros((16, 1, 1), dtype=np.bool_), np.zeros((16, 1, 1), dtype=np.bool_))


@port("TestEinsum.test_out_is_res")
def test_out_is_res():
    def f(a):
        res = np.einsum("...ij,...jk->...ik", a, a, out=a)
        return res is a, res
    check(f, np.arange(9).reshape(3, 3))


def _optimize_compare(subscripts, operands=None, seed=0):
    if operands is None:
        rng = np.random.default_rng(seed)
        terms = subscripts.split("->")[0].split(",")
        operands = [rng.random([SIZES[x] for x in term]) for term in terms]

    def f(*ops):
        return [np.einsum(subscripts, *ops, optimize=False),
                np.einsum(subscripts, *ops, optimize="greedy"),
                np.einsum(subscripts, *ops, optimize="optimal")]
    check(f, *operands, rtol=1e-12)


OPTIMIZE_CASES = {
    "test_hadamard_like_products": ["a,ab,abc->abc", "a,b,ab->ab"],
    "test_index_transformations": ["ea,fb,gc,hd,abcd->efgh", "ea,fb,abcd,gc,hd->efgh",
                                   "abcd,ea,fb,gc,hd->efgh"],
    "test_complex": ["acdf,jbje,gihb,hfac,gfac,gifabc,hfac", "cd,bdhe,aidb,hgca,gc,hgibcd,hgac",
                     "abhe,hidj,jgba,hiab,gab", "bde,cdh,agdb,hica,ibd,hgicd,hiac",
                     "chd,bde,agbc,hiad,hgc,hgi,hiad", "chd,bde,agbc,hiad,bdi,cgh,agdb",
                     "bdhe,acad,hiab,agac,hibd"],
    "test_collapse": ["ab,ab,c->", "ab,ab,c->c", "ab,ab,cd,cd->", "ab,ab,cd,cd->ac",
                      "ab,ab,cd,cd->cd", "ab,ab,cd,cd,ef,ef->"],
    "test_expand": ["ab,cd,ef->abcdef", "ab,cd,ef->acdf", "ab,cd,de->abcde", "ab,cd,de->be",
                    "ab,bcd,cd->abcd", "ab,bcd,cd->abd"],
    "test_edge_cases": ["eb,cb,fb->cef", "dd,fb,be,cdb->cef", "bca,cdb,dbf,afc->",
                        "dcc,fce,ea,dbf->ab", "fdf,cdd,ccd,afe->ae", "abcd,ad", "ed,fcd,ff,bcf->be",
                        "baa,dcf,af,cde->be", "bd,db,eac->ace", "fff,fae,bef,def->abd",
                        "efc,dbc,acf,fd->abe", "ba,ac,da->bcd"],
    "test_inner_product": ["ab,ab", "ab,ba", "abc,abc", "abc,bac", "abc,cba"],
    "test_random_cases": ["aab,fa,df,ecc->bde", "ecb,fef,bad,ed->ac", "bcf,bbb,fbf,fc->",
                          "bb,ff,be->e", "bcb,bb,fc,fff->", "fbb,dfd,fc,fc->", "afd,ba,cc,dc->bf",
                          "adb,bc,fa,cfc->d", "bbd,bda,fc,db->acf", "dba,ead,cad->bce",
                          "aef,fbc,dca->bde"]}


for _test in OPTIMIZE_CASES:
    port("TestEinsum." + _test)(lambda: None)


@pytest.mark.parametrize("test", OPTIMIZE_CASES)
def test_optimize_compare(test):
    for i, subscripts in enumerate(OPTIMIZE_CASES[test]):
        _optimize_compare(subscripts, seed=i)


@port("TestEinsum.test_combined_views_mapping")
def test_combined_views_mapping():
    check(lambda a: np.einsum("bbcdc->d", a), np.arange(9).reshape(1, 1, 3, 1, 3))


@port("TestEinsum.test_broadcasting_dot_cases")
def test_broadcasting_dot_cases():
    rng = np.random.default_rng(2)
    a, b, c, d = rng.random((1, 5, 4)), rng.random((4, 6)), rng.random((5, 6)), rng.random(10)
    _optimize_compare("ijk,kl,jl", [a, b, c])
    _optimize_compare("ijk,kl,jl,i->i", [a, b, c, d])
    e, f = rng.random((1, 1, 5, 4)), rng.random((7, 7))
    _optimize_compare("abjk,kl,jl", [e, b, c])
    _optimize_compare("abjk,kl,jl,ab->ab", [e, b, c, f])
    g = np.arange(64).reshape(2, 4, 8)
    _optimize_compare("obk,ijk->ioj", [g, g])


@port("TestEinsum.test_output_order")
def test_output_order():
    def f(a, b, c, d):
        out = []
        for opt in (True, False):
            for order in ("a", "f", "c", "k"):
                t = np.einsum("...ft,mf->...mt", a, b, order=order, optimize=opt)
                out += [t, t.flags.c_contiguous, t.flags.f_contiguous]
            t = np.einsum("...ft,mf->...mt", a, b, optimize=opt)
            out += [t, t.flags.c_contiguous, t.flags.f_contiguous]
            t = np.einsum("...ft,mf->...mt", a, c, order="a", optimize=opt)
            out += [t.flags.c_contiguous]
            t = np.einsum("...ft,mf->...mt", d, c, order="a", optimize=opt)
            out += [t.flags.c_contiguous]
        return out
    # (compiled, the flags end the graph)
    check(f, np.ones((2, 3, 5), order="F"), np.ones((4, 3), order="F"), np.ones((4, 3)),
          np.ones((2, 3, 5)))


def test_output_order_is_numpys_eagerly_and_compiled():
    # einsum's order= and its operands' layouts (order 'K') give NumPy's
    # layout, eagerly and in a compiled plan (strides read after the call),
    # optimize's final asanyarray(order=) copy of a one-operand view included
    # (the forty-seventh session's open item: every result was C-ordered)
    a, b = np.ones((2, 3, 5), order="F"), np.ones((4, 3), order="F")
    c = np.arange(12.0).reshape(3, 4)
    calls = [(lambda a, b: np.einsum("...ft,mf->...mt", a, b, order="F"), (a, b)),
             (lambda a, b: np.einsum("...ft,mf->...mt", a, b), (a, b)),
             (lambda a, b: np.einsum("...ft,mf->...mt", a, b, optimize=True), (a, b)),
             (lambda a, b: np.einsum("ij,jk->ik", a, b, order="A"), (c.T, c)),
             (lambda c: np.einsum("ij->ji", c, order="C", optimize=True), (c,)),
             (lambda c: np.einsum("ij->ji", c, order="F", optimize=True), (c,))]
    for f, args in calls:
        want = f(*args)
        got_eager = f(*[hnp.asarray(x) for x in args])
        compiled = hop.compile(f)
        compiled(*args)
        got = compiled(*args)
        for g in (got_eager, got):
            assert np.asarray(g).strides == want.strides
            assert np.array_equal(np.asarray(g), want)
            assert np.shares_memory(np.asarray(g), args[0]) == np.shares_memory(want, args[0])


def test_order_of_einsum_is_checked_as_numpy_checks_it():
    for order, err in (("W", ValueError), ("", ValueError), (3, TypeError)):
        with pytest.raises(err) as want:
            np.einsum("i", np.ones(2), order=order)
        with pytest.raises(err) as got:
            hnp.einsum("i", hnp.ones(2), order=order)
        assert str(got.value) == str(want.value)


@port("TestEinsumPath.test_spaces")
def test_spaces():
    import itertools
    check(lambda arr: [np.einsum("{}...a{}->{}...a{}".format(*sp), arr)
                       for sp in itertools.product(["", " "], repeat=4)], np.array([[1]]))


@port("TestMisc.test_overlap")
def test_overlap():
    def f(a, b):
        d = np.dot(a, b)
        c = np.einsum("ij,jk->ik", a, b)
        c2 = np.einsum("ij,jk->ik", a, b, out=b)  # out overlaps an operand (gh-10080)
        return d, c, c2, c2 is b
    check(f, np.arange(9, dtype=int).reshape(3, 3), np.arange(9, dtype=int).reshape(3, 3))
