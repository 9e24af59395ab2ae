"""A reduction to one element of a fused group's output runs as the group's
epilogue (program.h: hop__fgroup.epi): the plan has no Op step between the
group and the next one (print_mid's shape, issue #28), and the result has
eager's bits - the same kernel in the same order - for float, f16, integer
and bool dtypes, NaN, infinities and signed zeros, sizes 1..100 and sizes
past a tile; a reduction that keeps dims stays its own step."""
import re

import numpy as np
import pytest

import hop

EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, 3e38, -3e38, np.inf, -np.inf, np.nan]


def plan_ops(gm):
    """The opcodes of gm's plan dump, in order."""
    ops = []
    for line in gm.plan.dump().splitlines():
        parts = line.split()
        if len(parts) > 1 and parts[0].isdigit():
            ops.append(parts[1])
    return ops


def mid_sum(x):
    s = None
    for i in range(50):
        if i == 25:
            s = x.sum()
        x = x * 1.5
        x = x + 1.0
        x = x - 0.5
        x = x * 0.5
    return x, s


def test_print_mid_shape_has_no_op_step():
    x = hop.randn(16, seed=1)
    gm = hop.trace(mid_sum, x)
    ops = plan_ops(gm)
    assert ops.count("Fused") == 4 and "Op" not in ops
    assert ops == ["Input", "Layout", "Fused", "Fused", "Fused", "Fused", "Halt"]
    dump = gm.plan.dump()
    assert "; sum(mul_49, None, False)" in dump and "t2 = sum (kernel 0, fixed)" in dump
    got, want = gm(x), mid_sum(x)
    for g, w in zip(got, want):
        assert g.numpy().tobytes() == w.numpy().tobytes()


def test_print_mid_compiled_prints_eager_sum(capsys):
    def f(x):
        for i in range(50):
            if i == 25:
                print(x.sum())
            x = x * 1.5
            x = x + 1.0
            x = x - 0.5
            x = x * 0.5
        return x

    x = hop.randn(16, seed=1)
    f(x)
    eager = capsys.readouterr().out
    cf = hop.compile(f)
    for _ in range(3):
        assert cf(x).numpy().tobytes() == f(x).numpy().tobytes()
    out = capsys.readouterr().out
    assert out == eager * 6
    assert cf.recompiles == 0 and cf.eager_calls == 0


def _data(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if dtype in (np.float32, np.float64, np.float16):
        v = np.concatenate([np.array(EDGE), rng.standard_normal(n) * 3])
        v = np.roll(v, seed)[:n]
        if seed % 3 == 0:  # finite only: the sum's own rounding shows
            v = rng.standard_normal(n) * 3
        return v.astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    return rng.integers(-50, 50, n).astype(dtype)


def _group(dtype):
    if dtype in (np.float32, np.float64):
        return lambda x: (x * 1.5 + 0.25) * x
    if dtype == np.float16:
        return lambda x: x * 1.5 - 0.25
    if dtype == np.bool_:
        return lambda x: x & x
    return lambda x: x * 3 + 1


REDUCTIONS = {
    "sum": lambda y: y.sum(),
    "mean": lambda y: y.mean(),
    "prod": lambda y: y.prod(),
    "amax": lambda y: y.amax(),
    "amin": lambda y: y.amin(),
    "argmax": lambda y: y.argmax(),
    "argmin": lambda y: y.argmin(),
    "any": lambda y: y.any(),
    "all": lambda y: y.all(),
}


def _check(dtype, name, n, seed):
    g, red = _group(dtype), REDUCTIONS[name]

    def fn(x):
        y = g(x)
        return red(y), y * 2

    x = hop.asarray(_data(dtype, n, seed))
    try:
        want = fn(x)
    except Exception:  # noqa: BLE001 - a reduction this dtype has not
        return None
    gm = hop.trace(fn, x)
    got = gm(x)
    assert got[0].dtype == want[0].dtype, (dtype, name, n)
    assert got[0].numpy().tobytes() == want[0].numpy().tobytes(), (dtype, name, n, seed)
    assert got[1].numpy().tobytes() == want[1].numpy().tobytes()
    return plan_ops(gm)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64,
                                   np.uint8, np.bool_])
def test_epilogue_bits_equal_eager(dtype):
    folded = 0
    for name in REDUCTIONS:
        for n in list(range(1, 101)) + [1003, 5000, 70000]:
            ops = _check(dtype, name, n, n)
            if ops is not None:
                # the group's epilogue: no Op step of its own
                assert "Op" not in ops, (dtype, name, n, ops)
                folded += 1
    assert folded >= 300


def test_sum_of_group_bits_for_every_size_f32():
    # the sum of f32 runs four partial sums in double: the order must be
    # the kernel's for every tail length
    rng = np.random.default_rng(7)
    for n in range(1, 101):
        v = (rng.standard_normal(n) * 1e4).astype(np.float32)
        x = hop.asarray(v)
        fn = lambda x: (x * 1.0001 + 3.0).sum()  # noqa: E731
        gm = hop.trace(fn, x)
        assert "Op" not in plan_ops(gm)
        assert gm(x).numpy().tobytes() == fn(x).numpy().tobytes(), n
        assert hop.compile(fn)(x).numpy().tobytes() == fn(x).numpy().tobytes(), n


def test_keepdim_and_one_element_outputs_fold():
    x = hop.asarray(np.arange(24, dtype=np.float32).reshape(4, 6) - 11.5)
    row = hop.asarray(np.arange(24, dtype=np.float32).reshape(1, 24) - 11.5)
    for fn, x in ((lambda x: (x * 2 - 1).sum(keepdim=True), x),
                  (lambda x: (x * 2 - 1).sum(dim=[0, 1]), x),
                  (lambda x: (x * 2 - 1).sum(dim=1), row)):
        gm = hop.trace(fn, x)
        assert "Op" not in plan_ops(gm), gm.plan.dump()
        got, want = gm(x), fn(x)
        assert got.shape == want.shape
        assert got.numpy().tobytes() == want.numpy().tobytes()


def test_partial_reduction_stays_a_step():
    x = hop.asarray(np.arange(24, dtype=np.float32).reshape(4, 6) - 11.5)
    fn = lambda x: (x * 2 - 1).sum(dim=1)  # noqa: E731
    gm = hop.trace(fn, x)
    assert plan_ops(gm).count("Op") == 1
    assert gm(x).numpy().tobytes() == fn(x).numpy().tobytes()


def test_sum_in_loop_body_and_run_into():
    x = hop.randn(16, seed=3)

    def fn(x):
        return hop.fori_loop(0, 4, lambda i, v: v * 0.5 + (v * 2 + 1).sum(), x)

    gm = hop.trace(fn, x)
    assert gm(x).numpy().tobytes() == fn(x).numpy().tobytes()
    cf = hop.compile(fn)
    for _ in range(3):
        assert cf(x).numpy().tobytes() == fn(x).numpy().tobytes()


# ---- the epilogue against the unfused step and eager, sizes and dtypes ----

EPI_DTYPES = [np.float32, np.float64, np.int32, np.int64]
EPI_SIZES = [0, 1, 15, 16, 17, 1000, 100_003]
EPI_REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


def _epi_input(dtype, n, nan):
    rng = np.random.default_rng(n)
    if np.issubdtype(dtype, np.floating):
        v = (rng.standard_normal(n) * 2).astype(dtype)
        if nan and n:
            v[n // 2] = np.nan
        return v
    return rng.integers(-3, 4, n).astype(dtype)


def _red(name):
    return lambda y: getattr(y, name)()


def _same_bits(got, want, what):
    assert got.dtype == want.dtype, what
    assert got.shape == want.shape, what
    assert got.numpy().tobytes() == want.numpy().tobytes(), what


@pytest.mark.parametrize("dtype", EPI_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", EPI_REDUCTIONS)
def test_epilogue_equals_unfused_step_and_eager_bit_for_bit(dtype, name):
    """red(x * 3 - 1) runs as the group's epilogue (no Op step); the unfused
    step - the same reduction of the group's output passed in as an input,
    its own Op - and eager give the same bits, NaN included; the group's
    output is used elsewhere too (y * 2, and y itself returned).  In
    inner() the reduction feeds a later group; in looped() it runs in a loop
    body, whose later trips take the epilogue's path for a kernel on the
    same data."""
    red = _red(name)

    def fn(x):
        y = x * 3 - 1
        return red(y), y * 2, y

    def inner(x):
        y = x * 3 - 1
        return red(y) * 2, y * 2

    def looped(x):
        return hop.fori_loop(0, 3, lambda i, v: (v * 2 - red(v * 3 - 1)).to(v.dtype), x)

    floating = np.issubdtype(dtype, np.floating)
    for n in EPI_SIZES:
        for nan in (False, True) if floating else (False,):
            x = hop.asarray(_epi_input(dtype, n, nan))
            what = (np.dtype(dtype).name, name, n, nan)
            try:
                want = fn(x)
            except Exception as e:  # noqa: BLE001 - then tracing raises it too
                # amax/amin of nothing; the mean of integers (float-only)
                assert (n == 0 and name in ("amax", "amin")) or \
                    (name == "mean" and not floating), (what, e)
                with pytest.raises(type(e), match=re.escape(str(e))):
                    hop.trace(fn, x)
                continue
            gm = hop.trace(fn, x)
            ops = plan_ops(gm)
            assert "Op" not in ops and ops.count("Fused") >= 1, (what, ops)
            unfused = hop.trace(red, want[2])
            assert plan_ops(unfused).count("Op") == 1, what
            gi, want_i = hop.trace(inner, x), inner(x)
            assert "Op" not in plan_ops(gi), what
            gl, want_l = hop.trace(looped, x), looped(x)
            assert "Op" not in plan_ops(gl), (what, plan_ops(gl))
            for _ in range(2):  # the second run: the kernel on the same data
                got = gm(x)
                for g, w in zip(got, want):
                    _same_bits(g, w, what)
                _same_bits(unfused(want[2]), want[0], what)
                for g, w in zip(gi(x), want_i):
                    _same_bits(g, w, what)
                _same_bits(gl(x), want_l, what)
