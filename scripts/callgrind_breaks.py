"""scripts/callgrind_breaks.py - N steady calls of a graph-break workload
(issue #28's log_mid and print_mid rows, and a loop with a logging call),
for callgrind's instruction count per call (the forty-fourth session):

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p \\
        /usr/bin/python3 scripts/callgrind_breaks.py BUILD KIND N

KIND is log_mid, log_mid_eager, print_mid, print_mid_plain (the same
without the print), loop_log or loop_log_eager; BUILD a build tree (its
python/ goes first on sys.path).  Each workload is compiled and called
twice before the N counted calls; the cost of one call is the total at N
minus the total at a small N, divided by the difference."""
import io
import logging
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import hop  # noqa: E402
from workloads import chain_with  # noqa: E402


def _logger():
    log = logging.getLogger("hop.callgrind_breaks")
    log.propagate = False
    log.addHandler(logging.StreamHandler(io.StringIO()))
    log.setLevel(logging.INFO)
    return log


def workload(kind):
    log = _logger()
    half = chain_with(100, lambda x: None)

    def log_mid(x):
        x = half(x)
        log.info("sum %s", x.sum())
        return half(x)

    def show(x):
        print(x.sum())

    def loop_log(x):
        y = x * 2
        for i in range(10):
            y = y + 1
            log.info("turn %d", i)
        return y * 3

    fns = {"log_mid": log_mid, "print_mid": chain_with(200, show),
           "print_mid_plain": chain_with(200, lambda x: None), "loop_log": loop_log}
    base = kind[:-len("_eager")] if kind.endswith("_eager") else kind
    fn = fns[base]
    return fn if kind.endswith("_eager") else hop.compile(fn)


def main():
    kind, n = sys.argv[2], int(sys.argv[3])
    f = workload(kind)
    x = hop.randn(16, seed=1)
    sys.stdout = open(os.devnull, "w")
    for _ in range(2 + n):
        f(x)
    sys.stdout = sys.__stdout__
    if hasattr(f, "eager_calls"):
        print(f"{kind}: {f.eager_calls} eager calls, {len(f.graphs)} graph(s)", file=sys.stderr)


main()
