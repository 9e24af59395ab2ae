"""bench/c_side.py - the C column of bench/run.py: the C microbenchmarks of
the build (bench/*.c, run as subprocesses, their output parsed by the rows)
and the hand-written C reference (bench/cref.c as libhop_cref.so, loaded with
ctypes).  BUILD_DIR is the build they come from; run.py's main sets it.
"""

import ctypes
import os
import subprocess

BUILD_DIR = None

C_OUTPUT = {}


def c_bench(name):
    """Output of build/bench/<name> (run once), or None when it is not built."""
    if name not in C_OUTPUT:
        exe = os.path.join(BUILD_DIR, "bench", name) if BUILD_DIR else None
        if exe is None or not os.access(exe, os.X_OK):
            return None
        C_OUTPUT[name] = subprocess.run([exe], check=True, capture_output=True,
                                        text=True).stdout
    return C_OUTPUT[name]


# ------------------------------------------------- the hand-written C

_CREF = []


def cref():
    """The hand-written C reference (bench/cref.c, built as
    <build>/bench/libhop_cref.so with -O3 -march=native), or None."""
    if not _CREF:
        lib = None
        so = os.path.join(BUILD_DIR, "bench", "libhop_cref.so") if BUILD_DIR else None
        if so and os.path.exists(so):
            lib = ctypes.CDLL(so)
            lib.cref_isa.restype = ctypes.c_char_p
            i64 = ctypes.c_int64
            P = ctypes.c_void_p
            lib.cref_fori.argtypes = [P, i64]
            lib.cref_map.argtypes = [P, P, P, P, i64]
            lib.cref_scan_rnn.argtypes = [P, P, P, P, P, P, i64]
            lib.cref_fused_exp.argtypes = [P, P, i64]
            lib.cref_chain.argtypes = [P, P, P, ctypes.c_int, i64]
            lib.cref_cond.argtypes = [P, P, i64]
            lib.cref_cumsum.argtypes = [P, P, i64]
            lib.cref_cumsum_chunked.argtypes = [P, P, i64, ctypes.c_int]
            if hasattr(lib, "cref_map_mt"):  # built with OpenMP
                lib.cref_map_mt.argtypes = [P, P, P, P, i64, ctypes.c_int]
                lib.cref_fused_exp_mt.argtypes = [P, P, i64, ctypes.c_int]
        _CREF.append(lib)
    return _CREF[0]


def addr(a):
    """The data pointer of a C-contiguous ndarray, for the C reference."""
    assert a.flags.c_contiguous
    return a.ctypes.data


def c_note():
    lib = cref()
    return f"C: bench/cref.c, -O3 -march=native ({lib.cref_isa().decode()})" if lib else \
        "C: bench/cref.c not built"


def hop_over_c(mine, c, rate_unit=False):
    """hop/C: hop's time over the C reference's (for a rate, C's rate over
    hop's): 1.0 is as fast as the hand-written C."""
    if mine is None or c is None:
        return None
    return c["median"] / mine["median"] if rate_unit else mine["median"] / c["median"]
