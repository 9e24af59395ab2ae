"""scripts/check_float_text.py - the text of 0-d float tensors against NumPy's, by hand.

    HOP_PYTHONPATH=build/dev/python /usr/bin/python3 scripts/check_float_text.py \
        [--stride N] [--f64 N] [--against REV] [--c-stride N]

tensor_repr.c makes the text of a positional 0-d float32/float64 tensor itself
(scalar_repr, dragon4_text: the shortest digits NumPy's dragon4 gives, from
exact floors and Ryu's digit loop).  tests/python/test_tensor_float_text.py
checks a few thousand values per run; this checks many more:

- hop's repr against NumPy's repr of the same 0-d array for every float32
  bit pattern at a stride (default 4099: about a million values, subnormals,
  the largest floats, NaNs and infinities among them), every float32 within
  40 ulps of each power of ten and of two, and --f64 float64 values (random
  bits in the positional range, and around powers of ten and two);
- with --against REV, dragon4_text of the working tree against the one at git
  revision REV, compiled side by side into one C program, over every float32
  in the positional range (1e-4 <= |v| < 1e8) at --c-stride (default 1:
  all 344 million) and 2 million float64 values.

Prints the counts and the first differences; exits 1 on any.
"""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in reversed(os.environ.get("HOP_PYTHONPATH", "").split(os.pathsep)):
    if p:
        sys.path.insert(0, p)

import hop  # noqa: E402


def numpy_text(v, dtype):
    """hop's text of a 0-d tensor holding v, from NumPy's repr of the 0-d
    array (as tests/python/test_tensor_float_text.py makes it)."""
    body = repr(np.array(v, dtype=dtype))[len("array("):-1]
    if dtype == np.float32:
        return "hop.tensor(" + body[:-len(", dtype=float32")] + ")"
    return "hop.tensor(" + body + ", dtype=hop.float64)"


def float32_values(stride):
    bits = list(range(0, 2 ** 32, stride))
    for k in range(-45, 39):
        c = int(np.array([10.0 ** k], np.float32).view(np.uint32)[0])
        bits += range(max(c - 40, 0), c + 40)
    for e in range(0, 255):
        bits += range(max((e << 23) - 40, 0), (e << 23) + 40)
    bits += range(0x7F7FFFFF - 40, 0x7F800001)
    b = np.array(sorted(set(bits)), np.uint64)
    b = np.concatenate([b, b | (1 << 31)]).astype(np.uint32)
    return b.view(np.float32)


def float64_values(n, seed=28):
    rng = np.random.default_rng(seed)
    lo, hi = np.array([1e-4, 1e8]).view(np.uint64)
    out = [rng.integers(lo, hi, n // 2, dtype=np.uint64).view(np.float64)]
    for k in range(-5, 9):
        c = np.array([10.0 ** k]).view(np.uint64)[0]
        out.append(np.arange(c - 200, c + 200, dtype=np.uint64).view(np.float64))
    for e in range(-15, 28):
        c = np.array([2.0 ** e]).view(np.uint64)[0]
        out.append(np.arange(c - 50, c + 50, dtype=np.uint64).view(np.float64))
    out.append(rng.standard_normal(n // 2) * 10.0 ** rng.integers(-6, 10, n // 2))
    v = np.concatenate(out)
    return np.concatenate([v, -v, [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324]])


def against_numpy(stride, n64):
    bad = count = 0
    for dtype, values in ((np.float32, float32_values(stride)),
                          (np.float64, float64_values(n64))):
        hdt = hop.float32 if dtype == np.float32 else hop.float64
        for v in values:
            got = repr(hop.tensor(v, dtype=hdt))
            want = numpy_text(v, dtype)
            count += 1
            if got != want:
                bad += 1
                if bad <= 20:
                    print(f"{np.dtype(dtype).name} {v!r}: hop {got} NumPy {want}")
    print(f"hop vs NumPy: {count} values, {bad} differ")
    return bad


# The part of tensor_repr.c (tensor.c before 2bf5319) with the digits and the
# text: from the u128 typedef to
# scalar_repr.
_NAMES = ("pow10_u64", "pow5_u64", "pow5", "dec_vs_bin", "round_scaled", "reads_back",
          "digits_of", "put_digits", "dragon4_text", "floor_scaled", "shortest_digits")


def text_part(src, prefix):
    a = src.index("typedef unsigned __int128 u128;")
    b = src.index("static PyObject *\nscalar_repr(TensorObject *o)")
    part = src[a:b].replace("typedef unsigned __int128 u128;", "")
    part = re.sub(r"PyErr_SetString\([^;]*\);", "", part)
    for n in _NAMES:
        part = re.sub(r"\b%s\b" % n, prefix + n, part)
    return part


_MAIN = r"""
int main(int argc, char **argv)
{
    uint64_t stride = strtoull(argv[1], 0, 10);
    long n = 0, bad = 0;
    char a[96], b[96];
    float lo = 1e-4f, hi = 1e8f;
    uint32_t blo, bhi;
    memcpy(&blo, &lo, 4);
    memcpy(&bhi, &hi, 4);
    for (uint64_t u = blo; u < bhi; u += stride) {
        uint32_t b32 = (uint32_t)u;
        float f;
        memcpy(&f, &b32, 4);
        double v = f;
        if (v < 1e-4)
            continue;
        old_dragon4_text(v, 1, a);
        new_dragon4_text(v, 1, b);
        n++;
        if (strcmp(a, b) && bad++ < 20)
            printf("float32 %08x: old %s new %s\n", b32, a, b);
    }
    uint64_t s = 88172645463325252ull, l64, h64;
    double l = 1e-4, h = 1e8;
    memcpy(&l64, &l, 8);
    memcpy(&h64, &h, 8);
    for (long i = 0; i < 2000000; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        uint64_t b64 = l64 + s % (h64 - l64);
        double v;
        memcpy(&v, &b64, 8);
        old_dragon4_text(v, 0, a);
        new_dragon4_text(v, 0, b);
        n++;
        if (strcmp(a, b) && bad++ < 20)
            printf("float64 %.17g: old %s new %s\n", v, a, b);
    }
    printf("old vs new dragon4_text: %ld values, %ld differ\n", n, bad);
    return bad != 0;
}
"""


def against_rev(rev, stride):
    def at_rev(name):
        return subprocess.run(["git", "-C", ROOT, "show", f"{rev}:python/_C/{name}"],
                              capture_output=True, text=True)
    got = at_rev("tensor_repr.c")
    old = (got if got.returncode == 0 else at_rev("tensor.c")).stdout
    with open(os.path.join(ROOT, "python", "_C", "tensor_repr.c")) as f:
        new = f.read()
    head = ("#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
            "#include <string.h>\ntypedef unsigned __int128 u128;\n")
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "cmp.c"), os.path.join(d, "cmp")
        with open(c, "w") as f:
            f.write(head + text_part(old, "old_") + text_part(new, "new_") + _MAIN)
        subprocess.run(["cc", "-O2", "-o", exe, c, "-lm"], check=True)
        r = subprocess.run([exe, str(stride)], capture_output=True, text=True)
        print(r.stdout, end="")
        return r.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stride", type=int, default=4099)
    ap.add_argument("--f64", type=int, default=200000)
    ap.add_argument("--against", metavar="REV")
    ap.add_argument("--c-stride", type=int, default=1)
    args = ap.parse_args()
    bad = against_numpy(args.stride, args.f64)
    if args.against:
        bad += against_rev(args.against, args.c_stride)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
