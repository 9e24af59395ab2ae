"""NumPy's own vector math, adopted at `import hop` (docs/ARCHITECTURE.md,
"Math functions: NumPy's bits").

NumPy 1.24 runs Intel's SVML (AVX-512) for float64 exp, log, sin, cos, tan,
tanh, pow, arctan, arctan2, the hyperbolic and inverse functions, cbrt, log10,
log2, exp2, expm1 and log1p, and for float32 all of those but exp, log, sin
and cos, on CPUs with AVX512_SKX; its extension module exports them
(`__svml_exp8`, `__svml_tanhf16`, ...).  hop's own kernels (SLEEF) are
within 1 ulp but differ from those in the last bit for 20-60% of elements
(libm's, for log10, log2, exp2, expm1, log1p, tan and arctan, in 4-46%).
So that hop.numpy answers with NumPy's bits,
`import hop` adopts each such function whose results equal the NumPy ufunc's
bit for bit on a probe of its domain (hop_runtime_math_adopt); one that
differs is left to hop's own.  Nothing is adopted when HOP_MATH is set and
not empty (HOP_MATH=sleef keeps the widest SLEEF backend), when NumPy does not run
AVX512_SKX code on this CPU, or when the symbols are absent (other NumPy
builds).

NumPy's float16 arrays (contiguous) run SVML's float32 functions, exp, log,
sin, cos and tanh (with its own NaNs) included, rounded to float16: those
five are adopted for float16 alone (`_svml_half`).  A strided float16 array
runs libm's in NumPy, whose bits differ at a few values (hop gives the
contiguous array's bits for every layout).

NumPy's float32 exp, log, sin and cos are its own AVX2/AVX512F loops, not
SVML's and not exported: hop has copies of them (runtime/vmath_numpy.c),
which `import hop` turns on (hop_runtime_math_adopt_numpy) on CPUs where
NumPy runs those loops (AVX512F, or AVX2 and FMA3) and keeps where they give
the ufunc's bits on a probe (special values included).  ADOPTED lists what
was adopted, both kinds.
"""

import os

import numpy as np

from . import _C

# (hop's name, NumPy ufunc, f64 probe domain, f32 probe domain); a domain
# is (kind, low, high): "u" uniform, "e" exp of a uniform, "pe" +-exp, "e1"
# 1 + exp.
FUNCTIONS = (
    ("exp", np.exp, ("u", -700.0, 700.0), ("u", -87.0, 88.0)),
    ("log", np.log, ("e", -700.0, 700.0), ("e", -85.0, 88.0)),
    ("sin", np.sin, ("u", -1e4, 1e4), ("u", -1e4, 1e4)),
    ("cos", np.cos, ("u", -1e4, 1e4), ("u", -1e4, 1e4)),
    ("tanh", np.tanh, ("u", -25.0, 25.0), ("u", -12.0, 12.0)),
    ("sinh", np.sinh, ("u", -700.0, 700.0), ("u", -88.0, 88.0)),
    ("cosh", np.cosh, ("u", -700.0, 700.0), ("u", -88.0, 88.0)),
    ("asin", np.arcsin, ("u", -1.0, 1.0), ("u", -1.0, 1.0)),
    ("acos", np.arccos, ("u", -1.0, 1.0), ("u", -1.0, 1.0)),
    ("asinh", np.arcsinh, ("pe", -30.0, 300.0), ("pe", -30.0, 60.0)),
    ("acosh", np.arccosh, ("e1", -30.0, 300.0), ("e1", -15.0, 60.0)),
    ("atanh", np.arctanh, ("u", -0.999999, 0.999999), ("u", -0.9999, 0.9999)),
    ("cbrt", np.cbrt, ("pe", -600.0, 600.0), ("pe", -80.0, 80.0)),
    ("log10", np.log10, ("e", -700.0, 700.0), ("e", -85.0, 88.0)),
    ("log2", np.log2, ("e", -700.0, 700.0), ("e", -85.0, 88.0)),
    ("exp2", np.exp2, ("u", -1080.0, 1030.0), ("u", -155.0, 130.0)),
    ("expm1", np.expm1, ("pe", -40.0, 6.6), ("pe", -20.0, 4.5)),
    ("log1p", np.log1p, ("pe", -40.0, 40.0), ("pe", -20.0, 20.0)),
    ("tan", np.tan, ("pe", -20.0, 40.0), ("pe", -10.0, 20.0)),
    ("atan", np.arctan, ("pe", -20.0, 20.0), ("pe", -20.0, 20.0)),
    ("pow", np.power, ("e", -5.0, 5.0), ("e", -3.0, 3.0)),
    ("atan2", np.arctan2, ("pe", -20.0, 20.0), ("pe", -20.0, 20.0)),
)

ADOPTED = ()


def _probe(domain, dtype, rng, n=2048):
    kind, lo, hi = domain
    u = rng.uniform(lo, hi, n)
    if kind == "e":
        u = np.exp(u)
    elif kind == "pe":
        u = np.exp(u) * rng.choice((-1.0, 1.0), n)
    elif kind == "e1":
        u = 1.0 + np.exp(u)
    return u.astype(dtype)


def _same_as_numpy(name, ufunc, x, y):
    want = ufunc(x) if y is None else ufunc(x, y)
    got = np.empty_like(x)
    _C._math_run(name, x.dtype.name[0] + str(8 * x.itemsize), got, x, y)
    return np.array_equal(want.view(np.uint8), got.view(np.uint8))


def _symbol(name, dtype):
    return "__svml_%s8" % name if dtype == np.float64 else "__svml_%sf16" % name


# NumPy's own float32 loops (hop's copies): the probe's special values, and
# where each function's uniform draws come from (sin and cos beyond the
# Cody-Waite range take libm in NumPy: the probe covers both)
OWN_LOOPS = (("exp", np.exp, ("u", -110.0, 95.0)), ("log", np.log, ("pe", -104.0, 89.0)),
             ("sin", np.sin, ("pe", -20.0, 40.0)), ("cos", np.cos, ("pe", -20.0, 40.0)))
OWN_SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45,
                         1e-40, 1.2e-38, 88.72283935546875, -103.97208404541015625, 71476.0625,
                         71476.07, 117435.992, 117436.0, 3e38, -3e38], np.float32)


def _own_loops(features):
    """Turns hop's copies of NumPy's float32 loops on where NumPy runs them
    and they give its bits on a probe; returns the pairs kept."""
    if not (features.get("AVX512F") or (features.get("AVX2") and features.get("FMA3"))):
        return []
    rng = np.random.default_rng(20261201)
    kept = []
    for name, ufunc, domain in OWN_LOOPS:
        try:
            _C._math_adopt_numpy(name, True)
        except _C.UnsupportedError:
            return kept  # the scalar backend: NumPy's loops cannot run here
        x = np.concatenate([OWN_SPECIALS, _probe(domain, np.float32, rng)])
        if _same_as_numpy(name, ufunc, x, None):
            kept.append((name, "f32"))
        else:
            _C._math_adopt_numpy(name, False)
    return kept


def _svml(umath, rng):
    """Adopts NumPy's SVML functions that give its bits on a probe; returns
    the pairs adopted."""
    library = umath.__file__
    adopted = []
    for name, ufunc, dom64, dom32 in FUNCTIONS:
        for dtype, domain in ((np.float64, dom64), (np.float32, dom32)):
            dt = "f64" if dtype == np.float64 else "f32"
            try:
                if not _C._math_adopt(name, dt, library, _symbol(name, dtype)):
                    continue
            except _C.UnsupportedError:
                return adopted  # not the AVX-512 backend: nothing can be adopted
            x = _probe(domain, dtype, rng)
            y = None
            if name == "pow":
                y = rng.uniform(-40.0, 40.0, x.size).astype(dtype)
            elif name == "atan2":
                y = _probe(domain, dtype, rng)
            else:
                x = np.concatenate([_specials(dtype), x])
            if _same_as_numpy(name, ufunc, x, y):
                adopted.append((name, dt))
            elif y is None and _same_with_nan_mode(name, dt, ufunc, x):
                adopted.append((name, dt))
            else:
                _C._math_adopt(name, dt, None, None)
    return adopted


def _specials(dtype):
    """Zeros, infinities, NaNs of both signs and with payloads (quiet and
    signalling), the smallest subnormals and normals, for a probe."""
    u = np.uint32 if dtype == np.float32 else np.uint64
    nans = ((0x7fc00000, 0xffc00000, 0x7fc00001, 0xffc12345, 0x7f800001, 0xffbfffff)
            if dtype == np.float32 else
            (0x7ff8000000000000, 0xfff8000000000000, 0x7ff8000000000001, 0xfff8000000012345,
             0x7ff0000000000001, 0xfff7ffffffffffff))
    info = np.finfo(dtype)
    values = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, info.tiny, -info.tiny,
                       info.smallest_subnormal, -info.smallest_subnormal, info.max, -info.max],
                      dtype)
    return np.concatenate([values, np.array(nans, u).view(dtype)])


def _same_with_nan_mode(name, dt, ufunc, x):
    """Whether NumPy's ufunc gives the adopted function's bits once its NaN
    arguments answer the positive default NaN (NumPy's own tanh loop does,
    SVML's tanh returns the NaN it was given) or the NaN argument itself
    (NumPy's float64 expm1 loop keeps NaN lanes from SVML, whose expm1
    quiets a signalling NaN); leaves the first such mode on."""
    for mode in ("default", "operand"):
        _C._math_nan(name, dt, mode)
        if _same_as_numpy(name, ufunc, x, None):
            return True
    _C._math_nan(name, dt, "own")
    return False


HALF_FUNCTIONS = (("exp", np.exp), ("log", np.log), ("sin", np.sin), ("cos", np.cos),
                  ("tanh", np.tanh))


def _svml_half(umath):
    """NumPy 1.24's float16 exp, log, sin, cos and tanh of a contiguous array
    run SVML's float32 functions (`__svml_expf16`, ...; its float32 arrays
    run loops of its own instead: hop's copies above; its float32 tanh loop
    answers the default NaN, SVML's the NaN it was given), rounded to float16;
    adopts each whose float16 results equal the ufunc's for every float16
    value; returns the pairs adopted."""
    library = umath.__file__
    x16 = np.arange(65536, dtype=np.uint16).view(np.float16)
    x32 = x16.astype(np.float32)
    adopted = []
    for name, ufunc in HALF_FUNCTIONS:
        try:
            if not _C._math_adopt(name, "f16", library, _symbol(name, np.float32)):
                continue
        except _C.UnsupportedError:
            return adopted
        got = np.empty_like(x32)
        _C._math_run(name, "f16", got, x32)
        if np.array_equal(ufunc(x16).view(np.uint16), got.astype(np.float16).view(np.uint16)):
            adopted.append((name, "f16"))
        else:
            _C._math_adopt(name, "f16", None, None)
    return adopted


def adopt():
    """Adopts what it can; returns the (name, dtype) pairs adopted."""
    global ADOPTED
    umath = np.core._multiarray_umath
    features = getattr(umath, "__cpu_features__", {})
    if os.environ.get("HOP_MATH"):
        return ADOPTED
    adopted = []
    status = _C._fp_status()
    try:
        with np.errstate(all="ignore"):
            if features.get("AVX512_SKX", False):
                adopted += _svml(umath, np.random.default_rng(20261130))
                adopted += _svml_half(umath)
            # after SVML's: NumPy's float32 exp, log, sin and cos are not SVML
            adopted += _own_loops(features)
    finally:
        # the probes' floating-point flags are not the caller's
        _C._fp_clear()
        _C._fp_note(status)
    ADOPTED = tuple(adopted)
    return ADOPTED
