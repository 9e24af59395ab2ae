"""The register kernel of fused groups (runtime/fused_reg.c, issue #30) gives
the bits of the tiled engine it replaces: chains of f32 arithmetic with NaN,
signed zeros, infinities (a NaN for a NaN) and tails shorter than a vector, with a math step
between inline ones, broadcast operands, batched maps and straight loops;
at every vector width (HOP_SIMD=baseline runs its SSE2 build).  Each
configuration runs in a child process, HOP_FUSED_REG=0 turning it off."""
import os
import subprocess
import sys

import numpy as np

import hop

CHILD = r"""
import sys
import numpy as np
import hop
rng = np.random.default_rng(30)
edge = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 88.0, -88.0, 1e-40, -1e-40, 3e38, -3e38,
                 np.inf, -np.inf, np.nan, -np.nan], dtype=np.float32)
out = []
def emit(t):
    out.append(t.numpy().tobytes())
# sizes: one element, under a vector, a vector of 16, tails, several chunks
for n in (1, 5, 16, 17, 64, 200, 1003, 5000):
    x = np.resize(np.concatenate([edge, (rng.standard_normal(n) * 3).astype(np.float32)]), n)
    y = np.roll(x, 3)
    y[::7] = np.nan
    hx, hy = hop.asarray(x), hop.asarray(y)
    one = hop.asarray(np.array([-0.0], dtype=np.float32))
    fns = [
        lambda a, b: (a * 2 + 1).relu().exp(),
        lambda a, b: hop.maximum(a * b, b - a) + hop.minimum(1.5 - a, a),
        lambda a, b: hop.maximum(b, a - 1) * 3,
        lambda a, b: hop.minimum(b, a / 3) / 2,
        lambda a, b: (2 / (a + b) - a).abs().neg() * b,
        lambda a, b: ((a - b).tanh() * 2 + 1).relu() / 3,
        lambda a, b: (a * b + 1 - b) * 0.5,
        lambda a, b: -(a * 2) + b,
        lambda a, b: (a / b - 1).relu() * -0.0,
        # the chain's value as the second operand: o + x, o * x, o / x, o - x
        lambda a, b: 1 - (2 / (0.5 + 3 * (a * b))),
        lambda a, b: hop.minimum(hop.maximum(a * 2, b) - 1, b),
    ]
    for f in fns:
        emit(hop.compile(f)(hx, hy))
        emit(hop.compile(f)(hx, one))
        emit(hop.compile(f)(one, hy))
# a batched map over rows against broadcast rows, and a plain chain on 2-D
x = (rng.standard_normal((300, 16)) * 2).astype(np.float32)
x[5, 3], x[7, 0], x[9, 9] = np.nan, -0.0, np.inf
w, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
hx, hw, hb = hop.asarray(x), hop.asarray(w), hop.asarray(b)
emit(hop.compile(lambda x, w, b: hop.map(lambda r, w, b: (r * w + b).relu(), x, w, b))(hx, hw, hb))
emit(hop.compile(lambda x, w: (x * w - 1).abs() * 2)(hx, hw))
emit(hop.compile(lambda x, w: (x.T * 2 + 1).relu())(hx, hw))
# straight loops: a 16-float body, and one whose body reads a second tensor
v = hop.asarray((rng.standard_normal(16)).astype(np.float32))
for trips in (1, 2, 1001, 100001):  # odd and even; blocks ended by the interrupt budget
    emit(hop.compile(lambda v: hop.fori_loop(0, trips, lambda i, v: v * 0.999 + 0.001, v))(v))
# the counter read as a float operand; a carry of 5 and of 50 floats (tails, several vectors)
emit(hop.compile(lambda v: hop.fori_loop(0, 300, lambda i, v: v * 0.5 + i, v))(v))
for n in (5, 50):
    u = hop.asarray(rng.standard_normal(n).astype(np.float32))
    emit(hop.compile(lambda u: hop.fori_loop(0, 999, lambda i, u: hop.maximum(u * -1.01 + 0.5, -2.0)
                                              - 0.001, u))(u))
emit(hop.compile(lambda v, w: hop.fori_loop(0, 37, lambda i, v: (v * w - 0.5).relu() + 0.25,
                                             v))(v, hop.asarray(w)))
emit(hop.compile(lambda v: hop.fori_loop(0, 10, lambda i, v: (v * 1.5).tanh() - 0.1, v))(v))
sys.stdout.buffer.write(b"".join(out))
"""

# While loops whose test is a counter compare, which the register loop runs with
# the test in it (runtime/straight.c): the final counter (checked against
# Python's count) and carry for trip counts 0, 1, odd and even and blocks ended
# by the interrupt budget; the bound a tensor or a constant; <, <=, >, >= with
# the counter on either side; steps 1, 2, 3, 7 from other starts; carries of 5
# and 50 floats; and loops it leaves to the ops (a decreasing counter, a body
# reading a second tensor).
WHILE_CHILD = r"""
import sys
import numpy as np
import hop
rng = np.random.default_rng(31)
v = hop.asarray(rng.standard_normal(16).astype(np.float32))
out = []
def wl(test, step=1, body=lambda i, v: v * 0.999 + 0.001):
    return lambda v, n, c0: hop.while_loop(lambda i, v: test(i, n),
                                           lambda i, v: (i + step, body(i, v)), (c0, v))
def run(fn, v, n, c0, want_i):
    i, r = hop.compile(fn)(v, hop.tensor(n), hop.tensor(c0))
    assert i.item() == want_i, (n, c0, i.item(), want_i)
    out.append(i.numpy().tobytes() + r.numpy().tobytes())
for trips in (0, 1, 2, 3, 1001, 100001):
    run(wl(lambda i, n: i < n), v, trips, 0, trips)
    run(wl(lambda i, n: n > i), v, trips, 0, trips)
for n, c0, want in ((10, 0, 11), (0, 0, 1), (-1, 0, 0), (-5, -10, -4), (7, 7, 8)):
    run(wl(lambda i, n: i <= n), v, n, c0, want)
    run(wl(lambda i, n: n >= i), v, n, c0, want)
for step, n, c0, want in ((2, 7, 0, 8), (2, 8, 0, 8), (3, 100, 5, 101), (3, 100, 200, 200),
                          (7, 1000, -3, 1005)):
    run(wl(lambda i, n: i < n, step), v, n, c0, want)
run(lambda v, n, c0: hop.while_loop(lambda i, v: i < 37, lambda i, v: (i + 1, v * 0.5 - 0.25),
                                    (c0, v)), v, 0, 0, 37)
run(wl(lambda i, n: i > n, -1), v, -9, 4, -9)
for m in (5, 50):
    u = hop.asarray(rng.standard_normal(m).astype(np.float32))
    run(wl(lambda i, n: i < n, 1, lambda i, u: hop.maximum(u * -1.01 + 0.5, -2.0) - 0.001),
        u, 999, 0, 999)
w = hop.asarray(rng.standard_normal(16).astype(np.float32))
run(lambda v, n, c0: hop.while_loop(lambda i, v: i < n,
                                    lambda i, v: (i + 1, (v * w - 0.5).relu() + 0.25), (c0, v)),
    v, 38, 0, 38)
sys.stdout.buffer.write(b"".join(out))
"""


def run_child(script=CHILD, **env_set):
    env = dict(os.environ)
    for k in ("HOP_FUSED_REG", "HOP_SIMD"):
        env.pop(k, None)
    env.update(env_set)
    # the child imports the hop under test (conftest's path), not an installed one
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def same_bits(got, want):
    """Equal bits, a NaN for a NaN: which of two NaN operands a product or
    sum returns (its sign and payload) is the operand order the compiler
    gave each build of the loop, as between today's vector functions."""
    assert len(got) == len(want) > 0
    g, w = np.frombuffer(got, np.float32), np.frombuffer(want, np.float32)
    assert np.array_equal(np.isnan(g), np.isnan(w))
    ok = ~np.isnan(w)
    assert g[ok].tobytes() == w[ok].tobytes()


def test_register_kernel_gives_the_tiled_engines_bits():
    same_bits(run_child(), run_child(HOP_FUSED_REG="0"))


def test_register_kernel_at_sse2_width_gives_the_same_bits():
    same_bits(run_child(HOP_SIMD="baseline"), run_child(HOP_FUSED_REG="0"))


def test_while_loop_with_a_counter_test_in_registers_gives_the_instructions_bits():
    got = run_child(WHILE_CHILD)
    assert len(got) > 0
    assert got == run_child(WHILE_CHILD, HOP_FUSED_REG="0")
    assert got == run_child(WHILE_CHILD, HOP_SIMD="baseline")


def test_register_kernel_chain_matches_numpy():
    # + - * / of a chain in registers are single IEEE operations: NumPy's
    # float32 results are the exact reference
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(1003) * 5).astype(np.float32)
    y = (rng.standard_normal(1003) * 5).astype(np.float32)
    x[:4] = [np.nan, -0.0, np.inf, -np.inf]
    f = hop.compile(lambda a, b: ((a * b + 1) - b) * 0.5 / (b - 3))
    want = ((x * y + np.float32(1)) - y) * np.float32(0.5) / (y - np.float32(3))
    got = f(hop.asarray(x), hop.asarray(y)).numpy()
    assert got.dtype == np.float32
    assert got.tobytes() == want.tobytes()


def test_register_kernel_relu_keeps_nan_and_clears_negative_zero():
    x = np.array([np.nan, -0.0, -1.0, 2.0, -np.inf, np.inf] * 3, dtype=np.float32)
    got = hop.compile(lambda a: (a * 1 + 0).relu())(hop.asarray(x)).numpy()
    assert np.isnan(got[0]) and np.isnan(got[6])
    assert got[1] == 0 and not np.signbit(got[1])
    assert got[2] == 0 and not np.signbit(got[2])
    assert got[3] == 2 and got[4] == 0 and got[5] == np.inf


def test_rows_up_to_a_tile_with_a_broadcast_row_give_numpys_bits():
    # rows of 64..511 elements run as whole tiles over several rows when no
    # operand needs a gather per tile (a bias row added to a matmul's result);
    # a row whose length does not divide the tile (100, 300) keeps the run per
    # row; split over threads at a row's middle too
    rng = np.random.default_rng(31)
    f = hop.compile(lambda x, b, s: np.maximum(x + b, 0) * s - x.T.T)
    threads = hop.get_num_threads()
    try:
        for nt in (1, 2):
            hop.set_num_threads(nt)
            for m in (64, 100, 128, 256, 300, 511, 512):
                x = rng.standard_normal((1501, m)).astype(np.float32)
                b = rng.standard_normal(m).astype(np.float32)
                s = np.float32(1.5)
                want = np.maximum(x + b, 0) * s - x
                got = f(x, b, s)
                assert got.dtype == want.dtype
                assert got.tobytes() == want.tobytes(), (nt, m)
                col = rng.standard_normal((1501, 1)).astype(np.float32)  # a column: per tile
                assert f(x, col, s).tobytes() == (np.maximum(x + col, 0) * s - x).tobytes()
    finally:
        hop.set_num_threads(threads)


# The kernel's passes (runtime/fused_reg.c, issue #30): a run of many blocks
# (operand tables), one block, then 4, 2 and 1 vectors and a short one, at
# each width (AVX-512 blocks are 128 floats, SSE2's 16); operands that are
# one element (a constant, signed zero and NaN among them, or a lone input
# element, each spread once a pass) on either side of every op; and rows
# against row vectors broadcast over them, which short-rows groups hand the
# kernel whole as periodic operands (one gathered period of 512 elements):
# rows of 1 to 256 floats, row counts that leave a partial period, a math
# step between inline ones (its chunks read the period), 3-D broadcasts, a
# lone element beside them, split over 2 threads at any element; strided
# rows (a gather per tile) and other dtypes, which keep the tiled engine.
PASS_CHILD = r"""
import sys
import numpy as np
import hop
rng = np.random.default_rng(32)
out = []
def emit(t):
    out.append(t.numpy().tobytes())
edge = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40], dtype=np.float32)
lone = [hop.asarray(np.array([v], dtype=np.float32)) for v in (-0.0, np.nan, 2.5)]
chain = lambda a, b: ((hop.maximum(a * b, -0.0) - b) / (b + 3) + -0.0).relu() * b
consts = lambda a, b: hop.minimum(1.5 - (a + float("nan")) * -0.0, 2.0) - a * b
for n in (1, 17, 65, 129, 200, 257, 1029):
    x = np.resize(np.concatenate([edge, (rng.standard_normal(n) * 4).astype(np.float32)]), n)
    y = np.roll(x, 5)
    hx, hy = hop.asarray(x), hop.asarray(y)
    for f in (chain, consts):
        emit(hop.compile(f)(hx, hy))
    for one in lone[:2]:
        emit(hop.compile(chain)(hx, one))
        emit(hop.compile(consts)(one, hy))
bodies = [lambda r, w, b: (r * w + b).relu(),
          lambda r, w, b: (b - w / (r * r + 1)).tanh() * w - b,
          lambda r, w, b: hop.maximum(w, r - b) * 0.5]
runs = []
# (rows x 128 and x 256: pieces of 2 threads start inside a period)
for cols, rowss in ((1, (3, 20011)), (16, (3, 20011)), (128, (1337,)), (256, (1001,))):
    for rows in rowss:
        x = (rng.standard_normal((rows, cols)) * 2).astype(np.float32)
        x.flat[::97] = np.nan
        w = rng.standard_normal(cols).astype(np.float32)
        b = rng.standard_normal(cols).astype(np.float32)
        hx, hw, hb = hop.asarray(x), hop.asarray(w), hop.asarray(b)
        for body in bodies[:1] if cols >= 128 else bodies:
            runs.append((hop.compile(lambda x, w, b: hop.map(body, x, w, b)), (hx, hw, hb)))
        runs.append((hop.compile(lambda x, w, s: (x * w + s).relu()), (hx, hw, lone[2])))
        x2 = hop.asarray(np.repeat(x, 2, axis=1))
        runs.append((hop.compile(lambda x, w: (x[:, ::2] * w - 1).abs()), (x2, hw)))
x3 = rng.standard_normal((3001, 4, 8)).astype(np.float32)
w3 = rng.standard_normal((4, 8)).astype(np.float32)
b3 = rng.standard_normal((1, 8)).astype(np.float32)
runs.append((hop.compile(lambda x, w, b: (x * w + b).relu() - w),
             (hop.asarray(x3), hop.asarray(w3), hop.asarray(b3))))
for dt in (np.float64, np.float16):
    x = rng.standard_normal((1001, 16)).astype(dt)
    w = rng.standard_normal(16).astype(dt)
    runs.append((hop.compile(lambda x, w: hop.map(lambda r, w: (r * w + 1).relu(), x, w)),
                 (hop.asarray(x), hop.asarray(w))))
for nt in (1, 2):
    hop.set_num_threads(nt)
    for f, args in runs:
        emit(f(*args))
sys.stdout.buffer.write(b"".join(out))
"""


def test_kernel_passes_spread_and_periodic_operands_give_the_tiled_engines_bits():
    want = run_child(PASS_CHILD, HOP_FUSED_REG="0")
    same_bits(run_child(PASS_CHILD), want)
    same_bits(run_child(PASS_CHILD, HOP_SIMD="baseline"), want)


def test_map_over_rows_with_row_vectors_matches_numpy_bits():
    # the periodic operands' reference outside hop: NumPy's float32
    # (r * w + b).relu() over every row, at row lengths that divide the
    # period and one that does not (24), rows that leave a partial period
    rng = np.random.default_rng(33)
    for cols in (1, 4, 16, 24, 64):
        for rows in (1, 31, 1000, 4099):
            # a plan per shape (a function past its recompile limit runs eagerly)
            f = hop.compile(lambda x, w, b: hop.map(lambda r, w, b: (r * w + b).relu(), x, w, b))
            x = rng.standard_normal((rows, cols)).astype(np.float32)
            w = rng.standard_normal(cols).astype(np.float32)
            b = rng.standard_normal(cols).astype(np.float32)
            want = x * w + b
            want = np.where((want > 0) | np.isnan(want), want, np.float32(0))
            got = f(hop.asarray(x), hop.asarray(w), hop.asarray(b)).numpy()
            assert got.dtype == np.float32
            assert got.tobytes() == want.tobytes(), (rows, cols)
