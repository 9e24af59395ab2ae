"""scripts/callgrind_scale.py - one hop.trace of a bench/workloads.py scale
program, counted by callgrind and nothing else (issue #30's scale rows).

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=ffi_call \\
        /usr/bin/python3 scripts/callgrind_scale.py BUILD KIND N

KIND is wrap, cond or map (N calls in one function; map's over 8 rows),
nested (N levels), lift (one wrap body adding N closed-over tensors),
chain (N plain ops: trace_node's function, whose N is a multiple of 4),
program (trace_lower's program of N segments, bench/workloads.py
nested_program), call (N steady calls of a hop.compile'd
function that reads a global tensor and a list item, run instead of traced), builtins
(the same for a function whose only guard is the builtin names it loads: len, float,
range), builtins_module (those calls from a module-level loop), env_array (N steady
calls of a hop.compile'd `a * G`, G a global ndarray), env_array_tensor (those calls on
a hop.Tensor), cond_call (N steady calls of bench/run.py's cond_call: a compiled
hop.cond on f32[16]) or plain (N steady calls of compile_call's `lambda x: x + 1` on a
hop.Tensor f32[16], a plan with no guard) or plain_array (those calls on an f32[16]
ndarray); BUILD a build tree (its python/ goes
first on sys.path; a RelWithDebInfo one names hop's C functions).  The
program is traced once to warm up, then once more from a C callback that
libc's bsearch makes through ctypes, so --toggle-collect=ffi_call counts that
trace alone (the interpreter has no symbols to toggle on).  The cost of one
unit is the count at N minus the count at a small N, divided by the
difference (docs/BENCHMARKS.md, the fifth pass of issue #30).  The counted
window holds the second trace alone: callgrind's call counts there show
trace_lower twice, but the whole process (warm-up and counted trace) costs
twice the window's difference per unit (cond, 200 vs 400 calls: 185 K against
93 K per call, docs/BENCHMARKS.md's thirteenth pass), so a unit's figure is
one trace's worth; every pass's rows are, so they compare with each other.
A fifth argument gc-off runs the counted trace with Python's cyclic collector
off (bench/run.py times the scale rows that way; where the collector runs
inside the window moves a nest's figure by thousands a level).
"""
import ctypes
import gc
import os
import sys
import warnings

sys.path.insert(0, os.path.join(sys.argv[1], "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import hop  # noqa: E402
from workloads import chain_fn, nested, nested_program, repeated  # noqa: E402


def program(kind, n):
    x = hop.randn(16, seed=1)
    if kind == "wrap":
        return repeated(lambda v: hop.wrap(lambda u: u + 1.0, v), n), (x,)
    if kind == "cond":
        return repeated(lambda v: hop.cond(v.sum() > 0, lambda u: u + 1.0, lambda u: u - 1.0,
                                           (v,)), n), (x,)
    if kind == "map":
        return repeated(lambda v: hop.map(lambda r: r + 1.0, v), n), (hop.randn(8, 16, seed=1),)
    if kind == "nested":
        return nested(n), (x,)
    if kind == "lift":
        caps = [hop.full((16,), float(i)) for i in range(n)]

        def body(v, caps=caps):
            for c in caps:
                v = v + c
            return v
        return (lambda x: hop.wrap(body, x)), (hop.ones(16),)
    if kind == "chain":
        return chain_fn(n), (x, hop.randn(16, seed=2))
    if kind == "program":
        return nested_program(n), (hop.randn(8, 16, seed=1), hop.randn(16, seed=2))
    if kind == "call":
        w, scale = hop.randn(16, seed=2), [2.0]
        g = hop.compile(lambda x: x * w + scale[0])  # guards to check: a global, a list item

        def calls(x):
            for _ in range(n):
                g(x)
        return calls, (x,)
    if kind in ("builtins", "builtins_module"):
        return builtins_calls(kind, n)
    if kind in ("env_array", "env_array_tensor"):
        return env_array_calls(n, kind == "env_array_tensor")
    if kind in ("plain", "plain_array"):
        cf = hop.compile(lambda x: x + 1)

        def calls(x):
            for _ in range(n):
                cf(x)
        return calls, (x if kind == "plain" else x.numpy(),)
    if kind == "cond_call":
        cf = hop.compile(lambda x: hop.cond(x.sum() > 0, lambda x: x * 2.0, lambda x: x - 1.0,
                                            (x,)))

        def calls(x):
            for _ in range(n):
                cf(x)
        return calls, (x,)
    raise SystemExit(f"unknown kind {kind!r}: wrap, cond, map, nested, lift, chain, program, "
                     "call, builtins, builtins_module, env_array, env_array_tensor, cond_call, "
                     "plain or plain_array")


# builtins: N steady calls of a hop.compile'd function whose only guard is
# the builtin names' (len, float, range), from a function's loop;
# builtins_module: the same calls from a module-level loop (its loop variable
# is a global of the function's module: every call sees that dict written).
_BUILTINS_SRC = """
def f(x):
    t = x * float(len(x))
    for i in range(2):
        t = t + i
    return t
cf = hop.compile(f)
"""


def builtins_calls(kind, n):
    g = {"__name__": "callgrind_builtins", "hop": hop}
    exec(_BUILTINS_SRC, g)
    x = hop.tensor([1.0, 2.0, 3.0, 4.0])
    if kind == "builtins":
        cf = g["cf"]

        def calls(x):
            for _ in range(n):
                cf(x)
        return calls, (x,)
    loop = compile(f"for _ in range({n}):\n    cf(x)\n", "<module loop>", "exec")
    g["x"] = x
    return (lambda x: exec(loop, g)), (x,)


# env_array: N steady calls of hop.compile(lambda a: a * G) on an f64[16]
# ndarray, G a global f64[16] ndarray of the function's module (a capture
# hop guards by id and layout and holds no reference to: Guards.live);
# env_array_tensor: the same calls on a hop.Tensor
_ENV_ARRAY_SRC = """
import numpy as np
G = np.linspace(0.0, 1.0, 16)
cf = hop.compile(lambda a: a * G)
"""


def env_array_calls(n, tensor):
    import numpy as np
    g = {"__name__": "callgrind_env_array", "hop": hop}
    exec(_ENV_ARRAY_SRC, g)
    cf, a = g["cf"], np.arange(16.0)
    if tensor:
        a = hop.tensor(a)

    def calls(x):
        for _ in range(n):
            cf(x)
    return calls, (a,)


def main():
    fn, args = program(sys.argv[2], int(sys.argv[3]))
    sys.setrecursionlimit(50000)
    warnings.simplefilter("ignore")  # lift: the captured list is guarded by identity only
    calls = ("call", "builtins", "builtins_module", "env_array", "env_array_tensor", "cond_call",
             "plain", "plain_array")
    run = fn if sys.argv[2] in calls else (lambda *a: hop.trace(fn, *a))
    run(*args)  # warm up: caches, imports (call: the trace and the first calls)
    if sys.argv[4:] == ["gc-off"]:
        gc.collect()
        gc.disable()
    libc = ctypes.CDLL(None)
    cmp = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)

    def once(a, b):
        run(*args)
        return 0
    key, base = ctypes.c_int(0), (ctypes.c_int * 1)(0)
    libc.bsearch.restype = ctypes.c_void_p
    libc.bsearch(ctypes.byref(key), base, 1, ctypes.sizeof(ctypes.c_int), cmp(once))


if __name__ == "__main__":
    main()
