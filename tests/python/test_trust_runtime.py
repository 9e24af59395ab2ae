"""The plan runtime keeps eager's promises (issue #12, items 6, 12 and 14).

- Size overflow: a program whose sizes multiply past what a tensor may hold
  raises the same exception with the same message, naming the op, eagerly,
  under hop.trace (static and dynamic) and under hop.compile; a plan never
  wraps around and answers (expand to 2**62 rows then sum gave 0.0).
- Process-wide settings: NumPy's OpenBLAS thread count is as NumPy set it,
  eagerly, in plans, after an error, with threads calling hop's matmul at
  once (exactly, each giving what hop gives alone) and while they run: hop's
  BLAS is a copy of its own.  These tests need threadpoolctl.
- Ctrl-C: a long plan run stops with KeyboardInterrupt soon after SIGINT,
  leaks nothing and runs correctly again.
- A map's batched body: a run the fit test sends row by row reserves no
  memory for it; a run that fits takes it and gives the row loop's bits.
"""

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hop
from hop import _C

# Under the sanitizers every parametrized case runs: each is a memory path of its own
# (budget.cases).
pytestmark = pytest.mark.every_case

BIG = 2**62


def expand_sum(x):
    return x.expand(BIG, 4).sum()


def expand_dynamic_rows(a):
    return a.expand(a.shape[0], 2**61).sum()


def zeros_huge(x):
    return hop.zeros(BIG, 4) + x


def zeros_rows(x):
    return hop.zeros(x.shape[0], 2**61).sum()


def full_rows(x):
    return hop.full((x.shape[0], 2**61), 1.0).sum()


def outer_product(p, q):
    return (p * q).sum()


def matmul_outer(p, q):
    return (p @ q).sum()


def map_expand(a):
    return hop.map(lambda r: r.expand(2**61, 4).sum(), a)


def reshape_overflow(p):
    return p.reshape(2**62, 4, -1)


def wide(rows):
    """rows x 1 of ones, no memory (stride 0)."""
    return hop.ones(1, 1).expand(rows, 1)


OVERFLOW = [
    ("expand-sum", expand_sum, lambda: (hop.ones(1, 4),), MemoryError,
     "expand: f32[4611686018427387904, 4] is too large"),
    ("expand-dynamic-rows", expand_dynamic_rows, lambda: (hop.ones(3, 1),), MemoryError,
     "expand: f32[3, 2305843009213693952] is too large"),
    ("zeros", zeros_huge, lambda: (hop.ones(1, 4),), MemoryError,
     "zeros: f32[4611686018427387904, 4] is too large"),
    ("zeros-rows", zeros_rows, lambda: (hop.ones(3, 4),), MemoryError,
     "zeros: f32[3, 2305843009213693952] is too large"),
    ("full-rows", full_rows, lambda: (hop.ones(4, 2),), MemoryError,
     "full: f32[4, 2305843009213693952] is too large"),
    ("outer-product", outer_product, lambda: (wide(2**40), wide(2**40).reshape(1, 2**40)),
     MemoryError, "mul: f32[1099511627776, 1099511627776] is too large"),
    ("matmul", matmul_outer, lambda: (wide(2**40), wide(2**40).reshape(1, 2**40)),
     MemoryError, "matmul: f32[1099511627776, 1099511627776] is too large"),
    ("map-body-expand", map_expand, lambda: (hop.ones(3, 1, 4),), MemoryError,
     "expand: f32[2305843009213693952, 4] is too large"),
    ("reshape", reshape_overflow, lambda: (hop.zeros(0),), hop.InvalidError,
     "reshape: hop_sym_mul: int64 overflow computing 4 * 4611686018427387904"),
]


def runners(fn, args):
    yield "eager", lambda: fn(*args)
    yield "trace", lambda: hop.trace(fn, *args)(*args)
    yield "trace-dynamic", lambda: hop.trace(fn, *args, dynamic=True)(*args)
    yield "compile", lambda: hop.compile(fn)(*args)
    yield "compile-dynamic", lambda: hop.compile(fn, dynamic=True)(*args)


@pytest.mark.parametrize("fn,make,exc,msg", [c[1:] for c in OVERFLOW],
                         ids=[c[0] for c in OVERFLOW])
def test_sizes_too_large_raise_what_eager_raises_on_every_path(fn, make, exc, msg):
    args = make()
    for path, run in runners(fn, args):
        with pytest.raises(BaseException) as info:
            run()
        assert type(info.value) is exc, (path, type(info.value), str(info.value))
        assert str(info.value) == msg, path


def test_dynamic_reshape_whose_sizes_overflow_is_refused_naming_reshape():
    def f(p):
        return p.reshape(p.shape[0], 2**62, -1).sum()

    x = hop.zeros(4, 0)
    for path, run in runners(f, (x,)):
        with pytest.raises(hop.InvalidError, match=r"^reshape: .*int64 overflow computing") as info:
            run()
        assert "4611686018427387904" in str(info.value), path


def test_a_refused_plan_runs_correctly_again_with_sizes_that_fit():
    def f(p, q):
        return (p * q).sum()

    g = hop.trace(f, hop.ones(4, 1), hop.ones(1, 5), dynamic=True)
    with pytest.raises(MemoryError, match="^mul: f32"):
        g(wide(2**40), wide(2**40).reshape(1, 2**40))
    a = np.arange(6, dtype=np.float32).reshape(6, 1)
    b = np.arange(7, dtype=np.float32).reshape(1, 7)
    assert g(hop.asarray(a), hop.asarray(b)).item() == float((a * b).sum())


# ------------------------------------------------ process-wide settings

def blas_threads():
    """The thread counts of the OpenBLAS libraries of the process (NumPy's:
    hop's own copy, linked into hop._C, is not one of them)."""
    import threadpoolctl

    return [i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i.get("internal_api") == "openblas"]


@pytest.fixture
def blas3(heap_frozen):
    """NumPy's BLAS on 3 threads (a count hop would not choose) for a test."""
    # Only these tests need threadpoolctl (python3-threadpoolctl).
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if not blas_threads():
        pytest.skip("NumPy does not use OpenBLAS here")
    with threadpoolctl.threadpool_limits(limits=3, user_api="blas"):
        assert set(blas_threads()) == {3}
        yield
    gc.collect()


FRESH_PROCESS = """
import threadpoolctl, numpy as np, hop
with threadpoolctl.threadpool_limits(limits=3, user_api="blas"):
    a = hop.randn(64, 64, seed=1)
    hop.matmul(a, a)
    hop.compile(lambda x: (x @ x).sum())(a)
    print(sorted({i["num_threads"] for i in threadpoolctl.threadpool_info()
                  if i.get("internal_api") == "openblas"}))
"""


def test_the_first_matmul_of_a_process_leaves_numpys_blas_threads(blas3):
    # hop used to set OpenBLAS to one thread for good at its first matmul
    # (NumPy's matmul then ran 2x slower): a fresh process shows it.
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hop.__file__)))
    out = subprocess.run([sys.executable, "-c", FRESH_PROCESS], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[3]"


def test_matmul_leaves_the_blas_thread_count_as_it_found_it(blas3):
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        a = rng.standard_normal((64, 48)).astype(dt)
        b = rng.standard_normal((48, 32)).astype(dt)
        got = hop.matmul(hop.asarray(a), hop.asarray(b)).numpy()
        np.testing.assert_allclose(got, a @ b, rtol=1e-5)
        assert set(blas_threads()) == {3}, dt
        # batched, vector, and operator forms
        hop.asarray(a[None].repeat(3, 0)) @ hop.asarray(b)
        hop.asarray(a) @ hop.asarray(b[:, 0].copy())
        assert set(blas_threads()) == {3}, dt


def test_plans_with_matmul_leave_the_blas_thread_count_as_they_found_it(blas3):
    def chain(a, b):
        return ((a @ b) @ b.transpose(0, 1)).sum()

    def rows(xs, w):
        return hop.map(lambda r: (r @ w).relu(), xs)

    # large enough that BLAS would use threads (smaller ones leave the count alone)
    a, b = hop.randn(64, 64, seed=1), hop.randn(64, 64, seed=2)
    xs = hop.randn(64, 32, 64, seed=3)
    want = rows(xs, b)
    for run in (hop.trace(chain, a, b), hop.compile(chain), hop.compile(chain, dynamic=True)):
        assert run(a, b).item() == pytest.approx(chain(a, b).item(), rel=1e-4)
        assert set(blas_threads()) == {3}
    old = hop.get_num_threads()
    try:
        hop.set_num_threads(2)  # the map's rows go to the pool
        for run in (hop.trace(rows, xs, b), hop.compile(rows, dynamic=True)):
            np.testing.assert_allclose(run(xs, b).numpy(), want.numpy(), rtol=1e-5)
            assert set(blas_threads()) == {3}
    finally:
        hop.set_num_threads(old)


def test_a_plan_failing_after_a_matmul_leaves_the_blas_thread_count(blas3):
    def f(a, b, i):
        return (a @ b)[i.item()]

    a, b = hop.randn(64, 64, seed=1), hop.randn(64, 64, seed=2)
    g = hop.compile(f)
    assert g(a, b, hop.tensor(2)).shape == (64,)
    with pytest.raises(BaseException):
        g(a, b, hop.tensor(99))
    assert set(blas_threads()) == {3}
    with pytest.raises(hop.ShapeError):
        hop.matmul(a, hop.randn(7, 64))
    assert set(blas_threads()) == {3}


def test_threads_calling_matmul_at_once_beside_numpy_are_exact_and_leave_the_count(blas3):
    import threading

    a = hop.randn(96, 96, seed=4)
    an = a.numpy()
    # hop sums in its own order (its tiles, its split of the rows over the
    # pool), so its float32 product is not NumPy's bit for bit: both are
    # within float32 rounding of the float64 product.  On 2 threads a call
    # splits the rows in two, or runs them in one piece when another
    # thread's kernel holds the pool: under any concurrency each result is
    # exactly one of those two.
    old = hop.get_num_threads()
    alone = []
    for threads in (1, 2):
        hop.set_num_threads(threads)
        alone.append(hop.matmul(a, a).numpy())
    exact = an.astype(np.float64) @ an.astype(np.float64)
    bound = 96 * np.finfo(np.float32).eps * (np.abs(an).astype(np.float64) @ np.abs(an))
    for r in alone:
        assert (np.abs(r - exact) <= bound).all()
    stop = threading.Event()
    errors = []

    def hop_worker():
        try:
            g = hop.compile(lambda x: x @ x)
            for _ in range(300):
                for r in (hop.matmul(a, a).numpy(), g(a).numpy()):
                    assert any(np.array_equal(r, x) for x in alone)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    def numpy_worker():
        while not stop.is_set():
            an @ an

    np_thread = threading.Thread(target=numpy_worker)
    np_thread.start()
    workers = [threading.Thread(target=hop_worker) for _ in range(3)]
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        stop.set()
        np_thread.join()
        hop.set_num_threads(old)
    assert errors == []
    assert set(blas_threads()) == {3}


def test_numpy_never_sees_its_blas_thread_count_change_while_hop_multiplies(blas3):
    # hop used to set OpenBLAS, which NumPy shares, to one thread for the
    # duration of each of its matmuls: meanwhile another thread's NumPy
    # matmul ran on one thread, and a threadpoolctl limit entered then
    # restored 1 for good.  hop's BLAS is its own now.
    import threading

    a = hop.randn(128, 128, seed=5)
    stop = threading.Event()

    def hop_worker():
        g = hop.compile(lambda x: x @ x)
        while not stop.is_set():
            hop.matmul(a, a)
            g(a)

    workers = [threading.Thread(target=hop_worker) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        seen = set()
        for _ in range(300):
            seen.update(blas_threads())
    finally:
        stop.set()
        for w in workers:
            w.join()
    assert seen == {3}


# OpenBLAS's entry points: its thread count, a CBLAS call, a Fortran BLAS and a LAPACK
# routine (tests/c/test_libhop.c asks libhop.so for the same).
OPENBLAS_SYMBOLS = ("openblas_get_num_threads", "openblas_set_num_threads",
                    "goto_set_num_threads", "cblas_sgemm", "cblas_dgemm", "dgemm_", "dgesv_")


def test_hop_C_multiplies_with_an_openblas_of_its_own_whose_symbols_it_hides():
    # The module Python imports is the one these tests run (hop._C): the OpenBLAS archive
    # is linked into it (runtime/CMakeLists.txt), none of whose symbols its version script
    # lets out, so that NumPy's OpenBLAS and hop's never bind to each other.  dlsym on the
    # module's handle searches it and the libraries it needs: had it needed the shared
    # OpenBLAS, or exported its copy's symbols, these would be found, as in NumPy's.
    import ctypes

    module = ctypes.CDLL(_C.__file__)
    assert [s for s in OPENBLAS_SYMBOLS if hasattr(module, s)] == []
    with open("/proc/self/maps") as maps:
        shared = sorted({line.split()[-1] for line in maps if "/libopenblas" in line})
    for path in shared:  # NumPy's, loaded with it
        assert [s for s in OPENBLAS_SYMBOLS if not hasattr(ctypes.CDLL(path), s)] == [], path
    # and hop multiplies through it: exactly, small integers
    a = np.arange(96 * 96, dtype=np.float64).reshape(96, 96) % 7 - 3
    for dt in (np.float32, np.float64):
        got = hop.matmul(hop.asarray(a.astype(dt)), hop.asarray(a.astype(dt))).numpy()
        assert got.dtype == dt
        assert np.array_equal(got, (a @ a).astype(dt))


# ---------------------------------------------------------------- Ctrl-C


def nested_rows(xs):
    return hop.map(lambda row: hop.map(lambda r: (r.sin() * 2 + r).sum(), row), xs)


def matmul_chain(xs, w):
    return hop.map(lambda r: ((r @ w).tanh() @ w).sum(), xs)


def long_nested():
    # 400k rows of 25,600 (10G elements: seconds even with wide vectors on 2
    # threads; a tenth ended before the signal at 0.3 s); expanded, so no
    # memory.  The result is small ([40000, 10]): an interrupted run frees
    # its result before KeyboardInterrupt surfaces, and under ASan freeing
    # the 160 MB of a [40000, 1000] result took 40-60 ms of the latency
    # bound (the shadow of every freed byte is poisoned).
    return (hop.randn(1, 1, 25600, seed=1).expand(40000, 10, 25600),)


def long_chain():
    return (hop.randn(1, 64, 64, seed=2).expand(400000, 64, 64), hop.randn(64, 64, seed=3))


def small_nested():
    return (hop.randn(3, 5, 256, seed=4),)


def small_chain():
    return (hop.randn(3, 64, 64, seed=5), hop.randn(64, 64, seed=3))


def interrupted_after(delay, fn, *args):
    """Runs fn(*args) while a timer thread sends SIGINT after delay seconds:
    how long after the signal KeyboardInterrupt arrived."""
    import os
    import signal
    import threading

    sent = []

    def send():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(delay, send)
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            fn(*args)
        caught = time.perf_counter()
        timer.join()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
    assert sent, "the run ended before the signal"
    return caught - sent[0]


import time  # noqa: E402


@pytest.mark.serial  # the latency bound needs the machine to itself
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fn,make_long,make_small",
                         [(nested_rows, long_nested, small_nested),
                          (matmul_chain, long_chain, small_chain)],
                         ids=["nested-map", "matmul-chain"])
def test_ctrl_c_stops_a_long_plan_soon_and_it_runs_again(fn, make_long, make_small, threads,
                                                          heap_frozen):
    old = hop.get_num_threads()
    hop.set_num_threads(threads)  # 2: the rows run on the pool
    try:
        small, big = make_small(), make_long()
        want = fn(*small).numpy()
        base = live_blocks()
        compiled = hop.compile(fn, dynamic=True)
        np.testing.assert_allclose(compiled(*small).numpy(), want, rtol=1e-5)
        kept = []
        for _ in range(2):
            latency = interrupted_after(0.3, compiled, *big)
            assert latency < 0.1, latency
            # the plan, its frames and the pool are as before
            np.testing.assert_allclose(compiled(*small).numpy(), want, rtol=1e-5)
            kept.append(live_blocks())
        # What the plan keeps for the next run (its frames' blocks, the
        # worker frames) is made by the first run of these sizes; a second
        # interrupted run keeps nothing more, and dropping the plan frees
        # everything.
        assert kept[1] == kept[0]
        del compiled
        assert live_blocks() == base
    finally:
        hop.set_num_threads(old)


def live_blocks():
    gc.collect()
    _C._runtime_cleanup()
    return _C._alloc_live()


# ------------------------------------------------ a map's batched body


def sin_rows(xs):
    return hop.map(lambda r: (r.sin() * 2 + r).sum(), xs)


def allocated_by(fn, *args):
    """fn(*args) and the bytes hop's allocator was asked for meanwhile."""
    before = _C._alloc_bytes()
    out = fn(*args)
    return out, _C._alloc_bytes() - before


@pytest.mark.parametrize("threads", [1, 2])
def test_a_map_run_row_by_row_reserves_nothing_for_its_batched_body(threads):
    # 2,000 rows of 64 x 64 take 96 MiB batched, more than map's 64 MiB: the
    # fit test sends the run row by row.  Its plan used to lay out the
    # batched body's tensors anyway, sized by the real row count (13 GB for
    # 400,000 rows, a MemoryError at once on 2 threads).
    old = hop.get_num_threads()
    hop.set_num_threads(threads)
    try:
        compiled = hop.compile(matmul_chain, dynamic=True)
        small = small_chain()
        np.testing.assert_allclose(compiled(*small).numpy(), matmul_chain(*small).numpy(),
                                   rtol=1e-5)
        xs = hop.randn(1, 64, 64, seed=2).expand(2000, 64, 64)  # no memory
        w = small[1]
        got, nbytes = allocated_by(compiled, xs, w)
        # the result (8 KB), a block of one row's values per thread, frames
        assert nbytes < 512 << 10, nbytes
        # every row the bits of one eager row on this thread count (matmul.c
        # sizes its BLAS calls by the shape, not the pieces: with two threads
        # the rows of an eager map of this body once came out 5.9265747 or
        # 5.9266663 by thread and process history)
        want = matmul_chain(xs[:1], w).numpy()[0]
        assert got.numpy().tolist() == [want] * 2000
        assert allocated_by(compiled, xs, w)[1] < 64 << 10  # the result, again
    finally:
        hop.set_num_threads(old)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_map_run_that_fits_takes_the_batched_body_and_is_exact(threads):
    old = hop.get_num_threads()
    hop.set_num_threads(threads)
    try:
        compiled = hop.compile(sin_rows, dynamic=True)
        xs = hop.randn(300, 40, 256, seed=7)
        assert compiled(hop.randn(2, 3, 4)).shape == (2,)
        got, nbytes = allocated_by(compiled, xs)
        # the batched body's block, made by the first run that takes it:
        # all rows' values of its fused group
        assert nbytes >= 300 * 40 * 256 * 4, nbytes
        # elementwise ops and sums batched give the row loop's bits
        assert np.array_equal(got.numpy(), sin_rows(xs).numpy())
        assert any("one batched body over all rows" in line
                   for line in compiled.explain().splitlines())
        # a run of too many rows reserves nothing for it, and the block is
        # kept for the next run that fits
        big = hop.randn(1, 40, 256, seed=8).expand(4000, 40, 256)
        assert allocated_by(compiled, big)[1] < 512 << 10
        got, nbytes = allocated_by(compiled, xs)
        assert nbytes < 64 << 10, nbytes
        assert np.array_equal(got.numpy(), sin_rows(xs).numpy())
    finally:
        hop.set_num_threads(old)


def test_set_num_threads_from_another_thread_during_a_parallel_map_does_not_deadlock():
    # A running parallel map holds the pool's dispatch lock and its interrupt
    # check takes the GIL; set_num_threads waited for that lock holding the
    # GIL.  In a child process, so a deadlock fails the test instead of
    # hanging the suite.
    code = textwrap.dedent("""
        import threading
        import numpy as np
        import hop
        hop.set_num_threads(2)
        def body(r):
            for _ in range(20):
                r = hop.sin(r) + 1.0
            return r
        # Runs of ~0.1 s: the interrupt check takes the GIL every 20 ms.
        xs = hop.tensor(np.random.default_rng(0).random((64, 100000), np.float32))
        c = hop.compile(lambda xs: hop.map(body, xs))
        want = c(xs).numpy()
        stop = False
        def other():
            while not stop:
                hop.set_num_threads(2)
        th = threading.Thread(target=other)
        th.start()
        try:
            for _ in range(10):
                assert np.array_equal(c(xs).numpy(), want)
        finally:
            stop = True
            th.join()
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ,
                                PYTHONPATH=os.path.dirname(os.path.dirname(hop.__file__))))
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
