"""python3 -m hop demo: trace a program with nested cond / map / wrap /
invoke_subgraph that closes over tensors and sizes, print its graphs, run it
against eager execution and print timings."""

import sys
import time

import hop


def _program():
    w = hop.randn(16, seed=1)
    b = hop.randn(16, seed=2)

    @hop.nested_compile_region
    def block(v):                     # one subgraph, however often it is called
        return (v * w + b).relu()     # w and b are closed over: lifted

    def f(x, scale):
        n = x.shape[0]                # a SymInt under dynamic=True

        def positive():
            rows = hop.map(lambda row: block(row) + b, x)
            return rows * scale

        def negative():
            return hop.wrap(lambda: (-x).tanh() * (n // 2))

        return hop.cond(x.sum() > 0, positive, negative)

    return f


def demo():
    f = _program()
    x = hop.randn(64, 16, seed=3)
    scale = hop.full((), 0.5)
    print("# Tracing f(x, scale) with dynamic shapes\n")
    t0 = time.perf_counter()
    gm = hop.trace(f, x, scale, dynamic=True)
    traced_ms = (time.perf_counter() - t0) * 1e3
    print(gm.code)
    print("# Placeholders per graph:", hop.testing.placeholders(gm), "\n")

    for rows in (64, 200):
        for sign in (1.0, -1.0):
            xi = hop.randn(rows, 16, seed=rows) * sign
            expected = f(xi, scale)
            got = gm(xi, scale)
            diff = float((got - expected).abs().amax().item())
            print(f"x: [{rows}, 16], sign {sign:+}: traced == eager (max |diff| {diff:.2e})")
            if diff > 1e-5:
                print("MISMATCH", file=sys.stderr)
                return 1

    reps = 2000
    xi = hop.randn(64, 16, seed=9)
    t0 = time.perf_counter()
    for _ in range(reps):
        f(xi, scale)
    eager_us = (time.perf_counter() - t0) / reps * 1e6
    t0 = time.perf_counter()
    for _ in range(reps):
        gm(xi, scale)
    plan_us = (time.perf_counter() - t0) / reps * 1e6
    print(f"\n# Timings: trace + lower {traced_ms:.2f} ms; eager {eager_us:.1f} us/call; "
          f"compiled plan {plan_us:.1f} us/call ({eager_us / plan_us:.1f}x)")
    return 0


def main(argv):
    if argv[1:2] == ["demo"]:
        return demo()
    print("usage: python3 -m hop demo", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
