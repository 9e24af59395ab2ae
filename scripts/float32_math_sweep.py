#!/usr/bin/env python3
"""Compare hop's float32 exp, log, sin and cos with NumPy's ufuncs over every
float32 bit pattern (or every STEP-th block of 2^24), bits and flags.

hop's math table answers with its copies of NumPy 1.24's own float32 loops
once `import hop` adopted them (runtime/vmath_numpy.c, docs/ARCHITECTURE.md
"NumPy's own float32 loops").  This runs each function over blocks of 2^24
consecutive bit patterns, through hop's table (_C._math_run) and NumPy's
ufunc, and reports the elements whose bits differ and the blocks whose
floating-point flags (divide, overflow, underflow, invalid) differ.  The
whole sweep takes about 15 minutes per function on a loaded 2-core machine.

Usage: PYTHONPATH=build/dev/python scripts/float32_math_sweep.py
       [exp,log,sin,cos] [STEP]
Exits 1 when anything differs.
"""
import sys
import time

import numpy as np

from hop import _C, _numpy_math

BLOCK = 1 << 24


def numpy_flags(fn, x, seen):
    seen.clear()
    with np.errstate(all="call"):
        y = fn(x)
    flags = 0
    for f in seen:
        flags |= f  # NumPy's error bits are hop's HOP_FP_* bits
    return y, flags


def sweep(name, step, seen):
    uf = getattr(np, name)
    t0 = time.time()
    bad = flag_blocks = 0
    for start in range(0, 1 << 32, BLOCK * step):
        x = np.arange(start, start + BLOCK, dtype=np.uint64).astype(np.uint32).view(np.float32)
        want, nf = numpy_flags(uf, x, seen)
        got = np.empty_like(x)
        _C._fp_clear()
        _C._math_run(name, "f32", got, x)
        hf = _C._fp_status() & 15
        differ = np.flatnonzero(want.view(np.uint32) != got.view(np.uint32))
        for i in differ[:max(0, 5 - bad)]:
            print("%s(0x%08x): numpy 0x%08x hop 0x%08x" % (
                name, x.view(np.uint32)[i], want.view(np.uint32)[i], got.view(np.uint32)[i]))
        bad += differ.size
        if nf != hf:
            flag_blocks += 1
            print("%s block 0x%08x: numpy flags %d, hop %d" % (name, start, nf, hf))
    print("%s: %d elements differ, %d blocks' flags differ (%.0f s)" % (
        name, bad, flag_blocks, time.time() - t0), flush=True)
    return bad + flag_blocks


def main():
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else ["exp", "log", "sin", "cos"]
    step = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    print("adopted:", _numpy_math.ADOPTED)
    seen = []
    np.seterrcall(lambda kind, flag: seen.append(flag))
    failed = sum(sweep(name, step, seen) for name in names)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
