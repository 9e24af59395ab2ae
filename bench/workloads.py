"""bench/workloads.py - the programs and the CPU-time measure that bench/run.py and
the timing tests (tests/python/test_scale.py, test_perf_paths.py) share: one
copy of each, so a row of the table and the test that guards it time the same
program the same way.
"""
import ctypes
import ctypes.util
import gc
import time

import hop


def _malloc_trim():
    """glibc's malloc_trim(0): the heap's free pages go back to the system
    (None where there is no glibc)."""
    if not _TRIM:
        try:
            _TRIM.append(ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim)
        except (OSError, AttributeError, TypeError):
            _TRIM.append(None)
    if _TRIM[0] is not None:
        _TRIM[0](0)


_TRIM = []


def best_cpu_ns(fn, repeat=3, gc_off=False, fresh_memory=False):
    """The least of repeat runs of fn(), in ns of this thread's CPU time (a
    trace lasts up to seconds, long enough for a busy machine to take the
    core away: wall time then measures the neighbours).  Garbage is
    collected before each run; the collector's passes during fn count (a
    test bounds everything a call costs) unless gc_off keeps it off (a bench
    figure of hop alone).  fresh_memory returns the heap's free pages to the
    system before each run, so that every run pays for the memory it
    touches: otherwise a run that fits in what an earlier one left in the
    heap touches no new page, and one that does not pays a page fault per
    4 KiB (~10 us each on a VM seen in 2026-12, where 3,000 traced conds
    then cost 2.3-3.4x per call what 300 did, at the same instructions per
    call, and 1.2-1.4x with this)."""
    best = None
    for _ in range(repeat):
        gc.collect()
        if fresh_memory:
            _malloc_trim()
        if gc_off:
            gc.disable()
        try:
            t0 = time.thread_time_ns()
            fn()
            dt = time.thread_time_ns() - t0
        finally:
            gc.enable()
        best = dt if best is None else min(best, dt)
    return best


def chain_fn(nops):
    """A straight-line function of nops elementwise ops on x and y (written
    once, traced or run by hop, NumPy, PyTorch and torch.fx alike)."""
    def f(x, y):
        for _ in range(nops // 4):
            x = x * y
            x = x + 1.0
            x = x - y
            x = x * 0.5
        return x
    return f


def repeated(make, n):
    """x = make(x) n times: n HOP calls in one function."""
    def f(x):
        for _ in range(n):
            x = make(x)
        return x
    return f


def nested(depth):
    """depth wraps, each body calling the next level's wrap."""
    def level(k):
        if k == 0:
            return lambda v: v + 1.0
        inner = level(k - 1)
        return lambda v: hop.wrap(inner, v)
    return level(depth)


def nested_program(nseg):
    """nseg segments of map -> wrap -> 20 ops, cond with a 20-op branch and
    invoke_subgraph of a 20-op block (shared after the first call)."""
    def block(v, y):
        for _ in range(5):
            v = v * y
            v = v + 1.0
            v = v.relu()
            v = v - 0.5
        return v

    def f(x, y):
        for _ in range(nseg):
            a = hop.map(lambda r, y: hop.wrap(block, r, y), x, y)
            b = hop.cond(a.sum() > 0, lambda a, y: block(a, y), lambda a, y: a - y, (a, y))
            x = hop.invoke_subgraph(block, b, y)
        return x
    return f


def env_guard_fns(sizes):
    """bench/run.py's env_guard row: per size n, hop.compile(hop.grad(f))
    with f reading a closed-over f64 ndarray w in its body (the vjp node's:
    guarded on w's contents, checked every call), NumPy's w * 2 (the same
    gradient), the contents check alone, and the check it replaced (w's
    bytes made and compared)."""
    import numpy as np
    import hop.numpy as hnp
    from hop import _C
    fns = {}
    def reading(w):
        def loss(x):
            return (x * (w * 2)).sum()
        return loss
    for n in sizes:
        w = np.linspace(0.5, 1.5, n)
        cf = hop.compile(hop.grad(reading(w)), fullgraph=True)
        x = hnp.asarray(np.ones(n))
        assert np.array_equal(np.asarray(cf(x)), w * 2)
        snap, raw = _C._np_contents(w), w.tobytes()
        fns[f"call{n}"] = lambda cf=cf, x=x: cf(x)
        fns[f"np{n}"] = lambda w=w: w * 2
        fns[f"guard{n}"] = lambda w=w, snap=snap: _C._np_same_contents(w, snap)
        fns[f"tobytes{n}"] = lambda w=w, raw=raw: w.tobytes() == raw
    return fns


def env_guard_notes(s):
    """The env_guard row's notes from env_guard_fns' timings s (dicts in
    ns, the 16-float call's and NumPy's taken out)."""
    us = {k: v["median"] / 1e3 for k, v in s.items()}
    return (f"hop: hop.compile(hop.grad(f)) on 16 floats, f reading a closed-over ndarray in its "
            f"body (a hop.numpy argument: the runner's hop.numpy fast call); NumPy: w * 2 eager; "
            f"100,000 floats {us['call100000']:.0f} us a call (NumPy {us['np100000']:.0f} us); the "
            f"contents guard (_C._np_same_contents, a memcmp in place) "
            f"{us['guard16'] * 1e3:.0f} ns and {us['guard100000']:.1f} us, against "
            f"{us['tobytes16'] * 1e3:.0f} ns and {us['tobytes100000']:.1f} us making and "
            f"comparing tobytes")


def rnn_loop(lib, h, W, U, xs, steps):
    """scan_rnn's Python loop in array library lib (NumPy or torch): the cell
    h = tanh(h @ W + xs[t] @ U) for each step, then the final h and the
    stacked hs."""
    hs = []
    for t in range(steps):
        h = lib.tanh(h @ W + xs[t] @ U)
        hs.append(h)
    return h, lib.stack(hs)


def grad_program(cond, w):
    """20 steps of a cond over elementwise bodies, summed (#15's program)."""
    def f(x):
        for _ in range(20):
            x = cond(x, w)
        return x.sum()
    return f


def hop_step(x, w):
    return hop.cond(x.sum() > 0, lambda: (x * w).sin(), lambda: x * 0.5 + w)


def py_step(x, w):
    return (x * w).sin() if x.sum() > 0 else x * 0.5 + w


def chain_with(nops, mid):
    """chain_fn's ops on x (one argument), with mid(x) called after half."""
    def f(x):
        for i in range(nops // 4):
            if i == nops // 8:
                mid(x)
            x = x * 1.5
            x = x + 1.0
            x = x - 0.5
            x = x * 0.5
        return x
    return f
