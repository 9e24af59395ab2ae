"""Multi-output fused groups (lowering/fuseplan.c merge_units, runtime/fused_exec.c):
consecutive elementwise groups of one shape, each reading a result of the
ones before it, run as one group that writes every result read after it.
Plans (how many groups, which outputs) and values: bit for bit eager's, in
every dtype of the Mandelbrot step, over strided and broadcast inputs, on
one thread and split between two, with results returned, carried by a loop
(the group's outputs are the buffers its inputs came from the iteration
before) and reduced after the group."""
import re
import sys
import os

import numpy as np
import pytest

import hop

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from np_programs import np_mandelbrot  # noqa: E402

DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int32", "int64"]


def fused_lines(dump):
    return [line for line in dump.splitlines() if re.match(r"\s*\d+\s+Fused\s", line)]


def extra_outputs(line):
    """The slots a Fused line's comment names after its output, less an
    epilogue's (`; t9 = sum (kernel 0, fixed)`)."""
    comment = line[line.rindex("  t"):]
    return [m for m in re.findall(r"; (t\d+ = [\w.]+)( \(kernel)?", comment) if not m[1]]


def step(zr, zi, cr, ci, count):
    inside = zr * zr + zi * zi < 4
    zr2 = hop.where(inside, zr * zr - zi * zi + cr, zr)
    zi2 = hop.where(inside, zr * zi * 2 + ci, zi)
    return zr2, zi2, count + inside.to(count.dtype)


def steps(k):
    def f(zr, zi, cr, ci, count):
        for _ in range(k):
            zr, zi, count = step(zr, zi, cr, ci, count)
        return count, zr, zi
    return f


def operands(dtype, shape, seed=29):
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        cr = rng.uniform(-2, 1, shape)
        ci = rng.uniform(-1.5, 1.5, shape)
        cr.flat[:4] = [np.nan, -0.0, np.inf, 1e-3]
    else:
        info = np.iinfo(dtype)
        cr = rng.integers(max(info.min, -3), min(info.max, 3) + 1, shape)
        ci = rng.integers(max(info.min, -2), min(info.max, 2) + 1, shape)
    cr, ci = cr.astype(dtype), ci.astype(dtype)
    count = np.zeros(shape, np.int32)
    return [hop.asarray(a) for a in (np.zeros_like(cr), np.zeros_like(ci), cr, ci, count)]


def bits(t):
    a = t.numpy()
    return a.dtype, a.shape, a.tobytes()


def same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert bits(g) == bits(w)


def test_mandelbrot_runs_as_few_multi_output_groups_with_numpys_counts():
    cre, cim = np.meshgrid(np.linspace(-2, 1, 32, dtype=np.float32),
                           np.linspace(-1.5, 1.5, 32, dtype=np.float32))
    cf = hop.compile(np_mandelbrot)
    got = cf(cre, cim)
    want = np_mandelbrot(cre, cim)
    assert type(got) is np.ndarray and got.dtype == np.int32
    assert np.array_equal(got, want)
    lines = fused_lines(cf._entries[0].runner.plan.dump())
    # 20 steps of three groups each (the count chain in groups of 7) were 63
    # groups; merged: a group of about 4.5 steps, writing zr, zi and each
    # step's `inside` once, then the count chain over those
    assert len(lines) == 9
    multi = [line for line in lines if extra_outputs(line)]
    assert len(multi) == 6
    assert all(len(extra_outputs(line)) >= 2 for line in multi)


@pytest.mark.parametrize("dtype", DTYPES)
def test_merged_steps_give_eagers_bits_in_every_dtype(dtype):
    args = operands(dtype, (40, 40))
    f = steps(3)
    gm = hop.trace(f, *args)
    lines = fused_lines(gm.plan.dump())
    assert any(extra_outputs(line) for line in lines)
    same(gm(*args), f(*args))
    same(hop.compile(f)(*args), f(*args))


def test_strided_and_broadcast_inputs_and_their_results():
    zr, zi, cr, ci, count = operands("float32", (48, 40))
    f = steps(2)
    # transposed operands, a broadcast row and a broadcast column
    args = [zr.T, zi.T, cr[:1, :].T.contiguous() * 0 + cr[:40, :1], ci.T,
            count.T]
    gm = hop.trace(f, *args)
    assert any(extra_outputs(line) for line in fused_lines(gm.plan.dump()))
    same(gm(*args), f(*args))
    row = cr[0]
    g = lambda zr, zi, row, ci, count: steps(2)(zr, zi, row, ci, count)  # noqa: E731
    gm = hop.trace(g, zr, zi, row, ci, count)
    same(gm(zr, zi, row, ci, count), g(zr, zi, row, ci, count))


def test_split_between_threads_gives_one_threads_bits():
    args = operands("float32", (256, 256))
    f = steps(4)
    gm = hop.trace(f, *args)
    old = hop.get_num_threads()
    try:
        hop.set_num_threads(1)
        one = gm(*args)
        hop.set_num_threads(2)
        two = gm(*args)
    finally:
        hop.set_num_threads(old)
    same(two, one)
    same(one, f(*args))


def test_outputs_are_loop_carries_that_the_group_reads():
    zr, zi, cr, ci, count = operands("float32", (64, 64))

    def f(zr, zi, cr, ci, count):
        def body(i, c):
            a, b, n = c
            for _ in range(2):
                a, b, n = step(a, b, cr, ci, n)
            return a, b, n
        return hop.fori_loop(0, 5, body, (zr, zi, count))

    gm = hop.trace(f, zr, zi, cr, ci, count)
    assert any(extra_outputs(line) for line in fused_lines(gm.plan.dump()))
    same(gm(zr, zi, cr, ci, count), f(zr, zi, cr, ci, count))
    same(hop.compile(f)(zr, zi, cr, ci, count), f(zr, zi, cr, ci, count))


def test_a_result_read_again_after_the_group_and_reduced():
    zr, zi, cr, ci, count = operands("float64", (30, 50))

    def f(zr, zi, cr, ci, count):
        count, zr2, zi2 = steps(2)(zr, zi, cr, ci, count)
        inside = zr2 * zr2 + zi2 * zi2 < 4
        return zr2.sum(), inside, zi2 - zr2, count

    gm = hop.trace(f, zr, zi, cr, ci, count)
    same(gm(zr, zi, cr, ci, count), f(zr, zi, cr, ci, count))


def test_small_groups_stay_single_output():
    # at most 64 elements: the straight runners keep their groups
    args = operands("float32", (8, 8))
    gm = hop.trace(steps(2), *args)
    assert not any(extra_outputs(line) for line in fused_lines(gm.plan.dump()))
    same(gm(*args), steps(2)(*args))


def test_hop_numpy_where_updates_compiled_match_numpy():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((100, 30)).astype(np.float32)
    y = rng.standard_normal((100, 30)).astype(np.float32)

    def f(x, y):
        m = x * y > 0.1
        a = np.where(m, x * 2 - y, x)
        b = np.where(m, y * 3 + x, y)
        c = np.where(a > b, a - b, b * 0.5)
        return a, b, c + m

    got = hop.compile(f)(x, y)
    want = f(x, y)
    for g, w in zip(got, want):
        assert type(g) is np.ndarray and g.dtype == w.dtype
        assert g.tobytes() == w.tobytes()
