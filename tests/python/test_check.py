"""The op fail_if and hop.CheckError (docs/ARCHITECTURE.md, "Run-time checks").

hop.numpy's run-time checks (the rank cutoff of matrix_rank, lstsq and pinv,
the sign of a zero max, a SIMD cast, sort ties) are one op: fail_if(x, flag,
kind) is x once the plan has checked that no element of flag is true, and
hop.CheckError (kind's message, the node) otherwise.  hop.compile runs the
call eagerly then (NumPy answers); hop.trace, hop.grad and hop.vmap, which
have no eager call, raise it: before, they gave hop's own count unchecked
(11 of these 30 near-cutoff matrix_rank cases differed from NumPy's).
"""
import os
import tempfile
import warnings

import numpy as np
import pytest

import hop

LA = np.linalg

CUTOFF = ("fail_if: a singular value lies within hop's error bound of the cutoff, so hop "
          "cannot vouch that its decision (which singular values count) is NumPy's (check "
          "fail_if = fail_if(sum, logical_not, 1) of kind NUMPY_CUTOFF)")


def _near_cutoff(n=30, seed=41):
    # tol is one of NumPy's own singular values of np.cov(x): the decision
    # at it is NumPy's last bits
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        x = rng.standard_normal((6, 20))
        out.append((x, np.asarray(LA.svd(np.cov(x), compute_uv=False)[i % 6])))
    return out


def _far(n=5, seed=7):
    # the default tol, singular values far from it
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((6, 20)) for _ in range(n)]


def rank(x, t):
    return LA.matrix_rank(np.cov(x), tol=t)


def rank_default(x):
    return LA.matrix_rank(np.cov(x))


def test_check_error_class_and_the_op_eagerly():
    assert issubclass(hop.CheckError, hop.Error)
    assert issubclass(hop.CheckError, RuntimeError)
    x = hop.tensor([1.0, 2.0])
    y = hop._C._op("fail_if", x, hop.tensor([[False, False], [False, False]]), 0)
    assert np.array_equal(np.asarray(y), [1.0, 2.0])
    with pytest.raises(hop.CheckError) as e:
        hop._C._op("fail_if", x, hop.tensor([False, True]), 0)
    assert str(e.value) == "fail_if: a run-time check failed (check of kind ASSERT)"
    with pytest.raises(hop.DTypeError) as e:
        hop._C._op("fail_if", x, hop.tensor([0.0]), 0)
    assert str(e.value) == "fail_if: flag must be a bool tensor, got f32[1]"
    with pytest.raises(hop.InvalidError) as e:
        hop._C._op("fail_if", x, hop.tensor([False]), 11)
    assert str(e.value) == "fail_if: 11 is not a check kind (0 to 10)"


def test_compile_checks_with_fail_if_and_falls_back_to_numpy():
    cf = hop.compile(rank)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, t in _near_cutoff():
            assert cf(x, t) == rank(x, t)
    code = cf.graphs[0].code
    assert "= fail_if(sum, logical_not, 1)" in code  # kind 1: NUMPY_CUTOFF
    assert "take(" not in code  # (the probe it replaces: a take of index 1 from 1 element)
    assert len(cf.graphs) == 1 and cf.recompiles == 0
    for x in _far():
        assert hop.compile(rank_default)(x) == rank_default(x)


def test_trace_raises_check_error_near_the_cutoff_and_is_numpys_far_from_it():
    cases = _near_cutoff()
    gm = hop.trace(rank, *cases[0])
    for x, t in cases:
        with pytest.raises(hop.CheckError) as e:
            gm(x, t)
        assert str(e.value) == CUTOFF
    # nothing of the failed run stays: the same module answers as NumPy
    gt = hop.trace(rank_default, _far()[0])
    for x in _far():
        assert int(np.asarray(gt(x))) == rank_default(x)
    assert "fail_if(" in gt.code
    assert hop._C._trace_depth() == 0


def test_grad_raises_check_error_near_the_cutoff_and_is_numpys_far_from_it():
    g = hop.grad(lambda x, t: (x * rank(x, t)).sum())
    for x, t in _near_cutoff(8):
        with pytest.raises(hop.CheckError) as e:
            g(x, t)
        assert str(e.value) == CUTOFF
    gd = hop.grad(lambda x: (x * rank_default(x)).sum())
    for x in _far():
        assert np.array_equal(np.asarray(gd(x)), np.full(x.shape, float(rank_default(x))))
    assert hop._C._trace_depth() == 0


def test_vmap_raises_check_error_when_any_example_is_near_the_cutoff():
    v = hop.vmap(rank)
    far = _far(2)
    tf = np.asarray([2.0 * LA.svd(np.cov(x), compute_uv=False)[0] for x in far])
    # far from it in every example: NumPy's counts (0: tol above every value)
    assert np.array_equal(np.asarray(v(np.stack(far), tf)), [0, 0])
    for x, t in _near_cutoff(6):
        with pytest.raises(hop.CheckError) as e:
            v(np.stack([far[0], x]), np.stack([tf[0], t]))
        assert str(e.value) == CUTOFF
    vd = hop.vmap(rank_default)
    assert np.array_equal(np.asarray(vd(np.stack(_far()))), [rank_default(x) for x in _far()])


def test_saved_module_keeps_its_check():
    cases = _near_cutoff(3)
    gm = hop.trace(rank, *cases[0])
    path = os.path.join(tempfile.mkdtemp(), "rank.hop")
    hop.save(gm, path)
    same = hop.load(path)
    for x, t in cases:
        with pytest.raises(hop.CheckError) as e:
            same(x, t)
        assert str(e.value) == CUTOFF
    x = _far(1)[0]
    t = np.asarray(2.0 * LA.svd(np.cov(x), compute_uv=False)[0])
    assert int(np.asarray(same(x, t))) == rank(x, t)


ZERO_SIGN = ("fail_if: a zero result's sign is the one NumPy's SIMD loop happens to keep among "
             "zeros of both signs, which hop cannot know (check fail_if = fail_if(amax, {}, 2) "
             "of kind NUMPY_ZERO_SIGN)")


def test_zero_sign_of_a_max_raises_under_trace_grad_and_vmap():
    # before: hop.trace gave 0.0 where NumPy gives -0.0 (its loop keeps the
    # last zero), silently, and hop.grad and hop.vmap made no check
    both = np.array([0.0, -0.0, -1.0])
    plain = np.array([1.0, 2.0, -1.0])
    assert repr(np.max(both)) == "-0.0"
    gm = hop.trace(lambda x: np.max(x), both)
    with pytest.raises(hop.CheckError) as e:
        gm(both)
    assert str(e.value) == ZERO_SIGN.format("getitem")
    assert float(np.asarray(gm(plain))) == 2.0
    g = hop.grad(lambda x: np.max(x) * 2)
    with pytest.raises(hop.CheckError) as e:
        g(both)
    assert str(e.value) == ZERO_SIGN.format("getitem")
    assert np.array_equal(np.asarray(g(plain)), [0.0, 2.0, 0.0])
    v = hop.vmap(lambda x: np.max(x))
    with pytest.raises(hop.CheckError) as e:
        v(np.stack([plain, both]))
    assert str(e.value) == ZERO_SIGN.format("take_4")
    assert np.array_equal(np.asarray(v(np.stack([plain, -plain]))), [2.0, 1.0])
    # a max only compared stays unchecked (the check follows the results)
    gc = hop.trace(lambda x: np.max(x) > -1, both)
    assert bool(np.asarray(gc(both))) is True
    # hop.compile: NumPy's answer, eagerly
    cf = hop.compile(lambda x: np.max(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(cf(both)) == "-0.0"


CAST = ("fail_if: a float outside (-2**31 - 1, 2**32) or NaN cast to uint32, where NumPy's "
        "answer depends on which of its loops takes the element (check fail_if = fail_if(to_1, "
        "logical_not, 3) of kind NUMPY_CAST)")


def test_a_cast_to_uint32_numpy_decides_by_its_loop_raises_under_trace_and_vmap():
    # before: hop.trace and hop.vmap gave [0, 1410065408, ...] where NumPy
    # gives [2147483648, 0, ...] (its SIMD loop), silently
    x = np.array([np.nan, 1e10, -3.0] + [1.0] * 12)
    f = lambda a: a.astype(np.uint32)  # noqa: E731
    assert f(x)[:3].tolist() == [2147483648, 0, 4294967293]
    gm = hop.trace(f, x)
    with pytest.raises(hop.CheckError) as e:
        gm(x)
    assert str(e.value) == CAST
    assert np.array_equal(np.asarray(gm(np.arange(15.0))), f(np.arange(15.0)))
    v = hop.vmap(f)
    with pytest.raises(hop.CheckError) as e:
        v(np.stack([np.arange(15.0), x]))
    assert str(e.value) == CAST
    ok = np.stack([np.arange(15.0), -np.arange(15.0)])
    assert np.array_equal(np.asarray(v(ok)), f(ok))
    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array_equal(cf(x), f(x))


INDEX = ("fail_if: a flat index or a coordinate is out of bounds, where NumPy's unravel_index or "
         "ravel_multi_index raises its ValueError (check fail_if = fail_if({}, 9) of kind "
         "NUMPY_INDEX)")


def test_an_index_out_of_bounds_in_unravel_and_ravel_multi_index_raises_under_trace_and_vmap():
    # before: hop.trace's unravel_index of -1 in shape (2, 3) gave (1, 2)
    # where NumPy raises ValueError, silently (a take of arange(6) wraps
    # it), and an index past the end raised hop's OutOfBoundsError
    unravel = lambda a: np.unravel_index(a, (2, 3))  # noqa: E731
    gm = hop.trace(unravel, np.array([1, 5, 4]))
    for bad in ([1, -1, 3], [1, 6, 3]):
        with pytest.raises(ValueError):
            unravel(np.array(bad))
        with pytest.raises(hop.CheckError) as e:
            gm(np.array(bad))
        assert str(e.value) == INDEX.format("a, logical_or")
    assert [x.tolist() for x in gm(np.array([1, 2, 3]))] == [[0, 0, 1], [1, 2, 0]]
    ravel = lambda a, b: np.ravel_multi_index((a, b), (2, 3))  # noqa: E731
    gr = hop.trace(ravel, np.array([1, 0]), np.array([2, 2]))
    for a, b in (([1, 0], [2, -1]), ([2, 0], [2, 2])):
        with pytest.raises(hop.CheckError) as e:
            gr(np.array(a), np.array(b))
        assert str(e.value) == INDEX.format("expand, logical_or_2")
    assert np.asarray(gr(np.array([1, 0]), np.array([2, 2]))).tolist() == [5, 2]
    v = hop.vmap(lambda a: np.unravel_index(a, (2, 3))[1])
    with pytest.raises(hop.CheckError) as e:
        v(np.array([[1, 5], [2, 6]]))
    assert str(e.value) == INDEX.format("args_0, logical_or")
    assert np.asarray(v(np.array([[1, 5], [2, 3]]))).tolist() == [[1, 2], [2, 0]]
    # hop.compile: NumPy's ValueError, eagerly
    with pytest.raises(ValueError, match="index -1 is out of bounds for array with size 6"):
        hop.compile(unravel)(np.array([1, -1, 3]))
