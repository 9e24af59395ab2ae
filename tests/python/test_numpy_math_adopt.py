"""NumPy's own vector math adopted at `import hop` (python/hop/_numpy_math.py,
runtime/vmath_adopt.c): hop's kernels then answer NumPy's bits, eager,
compiled and in hop's own API; what cannot be adopted is left alone."""

import ctypes
import ctypes.util
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from hop import _numpy_math
from numpy_diff import assert_numpys_bits_and_warnings

UMATH = np.core._multiarray_umath
FEATURES = getattr(UMATH, "__cpu_features__", {})
SKX = bool(FEATURES.get("AVX512_SKX", False))
# NumPy 1.24 runs its own float32 exp/log/sin/cos loops (hop has copies)
NUMPY_LOOPS = bool(FEATURES.get("AVX512F") or (FEATURES.get("AVX2") and FEATURES.get("FMA3")))
OWN = {"exp", "log", "sin", "cos"}
needs_adoption = pytest.mark.skipif(not _numpy_math.ADOPTED,
                                    reason="nothing adopted (CPU without AVX2, or HOP_MATH)")
needs_svml = pytest.mark.skipif(not any(d == "f64" for _, d in _numpy_math.ADOPTED),
                                reason="no SVML adopted (CPU without AVX512_SKX, or HOP_MATH)")

NUMPY_NAME = {"asin": "arcsin", "acos": "arccos", "asinh": "arcsinh", "acosh": "arccosh",
              "atanh": "arctanh", "atan": "arctan", "pow": "power", "atan2": "arctan2"}


def child(code, **env_set):
    env = dict(os.environ)
    env.pop("HOP_MATH", None)
    env.update(env_set)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode().strip()


def inputs(name, dtype, n, seed):
    rng = np.random.default_rng(seed)
    big = 60.0 if dtype == np.float32 else 600.0
    if name in ("asin", "acos", "atanh"):
        x = rng.uniform(-1, 1, n)
    elif name in ("log", "acosh"):
        x = 1.0 + np.exp(rng.uniform(-20, 20, n))
    elif name in ("exp", "sinh", "cosh"):
        x = rng.uniform(-big / 7 * 1.2, big / 7 * 1.2, n)
    else:
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
    y = rng.uniform(-3, 3, n) if name in ("pow", "atan2") else None
    if name == "pow":
        x = np.abs(x)
    return x.astype(dtype), (None if y is None else y.astype(dtype))


def bits(a):
    a = np.asarray(a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def test_what_is_adopted_is_consistent_with_the_cpu_and_numpy():
    if os.environ.get("HOP_MATH") is not None or not NUMPY_LOOPS:
        assert _numpy_math.ADOPTED == ()
        return
    # NumPy 1.24 runs SVML for every float64 function of the list and for
    # the float32 ones but exp, log, sin and cos (its own AVX2/AVX-512 loops,
    # which hop's copies reproduce, on any CPU with AVX2 and FMA3)
    names64 = {n for n, d in _numpy_math.ADOPTED if d == "f64"}
    names32 = {n for n, d in _numpy_math.ADOPTED if d == "f32"}
    if np.__version__.startswith("1.24."):
        assert names64 == ({f[0] for f in _numpy_math.FUNCTIONS} if SKX else set())
        assert names32 == ({f[0] for f in _numpy_math.FUNCTIONS} if SKX else OWN)


@needs_adoption
@pytest.mark.parametrize("n", [1, 7, 8, 9, 15, 16, 17, 33, 1000, 4099])
def test_adopted_functions_give_numpys_bits_eager(n):
    for name, dt in _numpy_math.ADOPTED:
        dtype = np.float64 if dt == "f64" else np.float32
        x, y = inputs(name, dtype, n, seed=n)
        uf = getattr(np, NUMPY_NAME.get(name, name))
        hf = getattr(hnp, NUMPY_NAME.get(name, name))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = uf(x) if y is None else uf(x, y)
            got = hf(x) if y is None else hf(x, y)
        assert np.asarray(got).dtype == want.dtype, (name, dt)
        assert np.array_equal(bits(got), bits(want)), (name, dt, n)


@needs_svml
def test_adopted_functions_give_numpys_bits_compiled_strided_and_2d():
    x64 = np.random.default_rng(3).standard_normal((37, 29)) * 4
    x32 = x64.astype(np.float32)

    def f(a):
        return np.exp(a) + np.sin(a[:, ::2]).sum(axis=1, keepdims=True) * np.tanh(a.T).T

    def g(a):  # float32 SVML (exp, log, sin and cos: test_numpy_float32_math.py)
        return np.tanh(a) + np.arcsinh(a[:, ::2]).sum(axis=1, keepdims=True) * np.cbrt(a.T).T

    for fn, xs in ((f, (x64, np.asfortranarray(x64), x64[::-1, ::3])), (g, (x32, x32[::2]))):
        cf = hop.compile(fn)
        for x in xs:
            want = fn(x)
            for got in (cf(x), cf(x)):
                assert got.dtype == want.dtype
                assert np.array_equal(bits(got), bits(want))


@needs_svml
def test_hop_api_runs_the_adopted_functions():
    x = np.random.default_rng(4).uniform(-30, 30, 1001)
    t = hop.tensor(x)
    for name in ("exp", "sin", "cos", "tanh", "log"):
        arg = np.abs(x) + 0.5 if name == "log" else x
        got = getattr(hop, name)(hop.tensor(arg)).numpy()
        assert np.array_equal(bits(got), bits(getattr(np, name)(arg))), name
    assert np.array_equal(bits((t * 2).exp().numpy()), bits(np.exp(x * 2)))


@needs_svml
def test_i0_is_numpys_bits():
    # NumPy's i0 takes np.exp of |x| (its SVML exp here): hop's kernel takes
    # the adopted exp from the table (runtime/elementwise.c, i0_f64)
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-40, 40, 2000), rng.uniform(-8.5, 8.5, 1001),
                        [0.0, -0.0, 8.0, -8.0, 700.0, 710.0, np.inf, -np.inf, np.nan]])
    with np.errstate(all="ignore"):
        want = np.i0(x)
        assert np.array_equal(bits(hnp.i0(x)), bits(want))
        assert np.array_equal(bits(hop.compile(lambda a: np.i0(a * 1.0))(x)), bits(want))
        assert np.array_equal(bits(hnp.i0(x[::3])), bits(np.i0(x[::3])))


@needs_svml
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 15, 19, 64])
def test_special_values_and_warnings_are_numpys(dtype, n):
    # NaN payloads and signs, infinities, zeros, overflow and underflow, in
    # the vector loop and in its padded tail (NumPy's tanh answers the
    # positive NaN for -nan, SVML's tanh -nan: adopted with NaN lanes set)
    import struct
    payload = np.frombuffer(struct.pack("<QQ", 0x7FF0000000000123, 0xFFF4000000000001), np.float64)
    x = np.concatenate([[np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, 710.0, -746.0,
                         -740.0, 1e-300, 1e300, -1e300], payload])
    if dtype == np.float32:
        x = np.concatenate([np.frombuffer(struct.pack("<II", 0x7FC00123, 0xFFA00001), np.float32),
                            [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 89.0, -104.0,
                             1e-38, 3e38, -3e38]]).astype(np.float32)
    x = np.resize(x, n)
    for name in ("exp", "log", "sin", "cos", "tanh", "sinh", "cosh", "asin", "atanh", "cbrt",
                 "log10", "log2", "exp2", "expm1", "log1p", "tan", "atan"):
        uf = getattr(np, NUMPY_NAME.get(name, name))
        hf = getattr(hnp, NUMPY_NAME.get(name, name))
        assert_numpys_bits_and_warnings(uf, hf, x, name)
        # hop's own API (which warns of nothing): the same bits
        with np.errstate(all="ignore"):
            want = uf(x)
        got = getattr(hop, NUMPY_NAME.get(name, name))(hop.asarray(x)).numpy()
        assert np.array_equal(bits(got), bits(want)), (name, bits(got), bits(want))


def test_hop_math_set_adopts_nothing():
    out = child("import hop, hop._numpy_math as m; print(m.ADOPTED)", HOP_MATH="sleef")
    assert out == "()"


def test_adopting_leaves_the_callers_floating_point_flags():
    # (importing NumPy itself leaves underflow raised: cleared first, then
    # the probes' flags must not show; a flag raised before stays)
    code = ("import numpy, hop._C as C; C._fp_clear(); %s import hop, hop._numpy_math as m; "
            "print(bool(m.ADOPTED) == %s, C._fp_status())")
    some = str(NUMPY_LOOPS)
    assert child(code % ("", some)) == "True 0"
    assert child(code % ("C._fp_note(2);", some)) == "True 2"


def test_adopt_errors_change_nothing():
    x = np.linspace(-3, 3, 21)
    before = np.empty_like(x)
    hop._C._math_run("exp", "f64", before, x)
    with pytest.raises(ValueError, match="'f32', 'f64' or 'f16', got 'f8'"):
        hop._C._math_adopt("exp", "f8", None, None)
    # float16 adopts exp, log, sin, cos and tanh alone
    with pytest.raises(hop.Error, match="float16 adopts exp, log, sin, cos and tanh, got 'sinh'"):
        hop._C._math_adopt("sinh", "f16", None, None)
    with pytest.raises(hop.Error, match="float16's members are exp, log, sin, cos and tanh"):
        hop._C._math_run("sinh", "f16", np.empty(3, np.float32), np.ones(3, np.float32))
    # an unknown function: hop's error, raised before anything changes
    with pytest.raises(hop.Error, match="no math function 'expp'"):
        hop._C._math_run("expp", "f64", np.empty_like(x), x)
    # a library that is not loaded, a symbol it lacks: False, nothing adopted
    assert hop._C._math_adopt("exp", "f64", "/nonexistent/libnothing.so", "f") is False
    assert hop._C._math_adopt("exp", "f64", UMATH.__file__, "no_such_symbol_here") is False
    with pytest.raises(TypeError, match="needs a symbol"):
        hop._C._math_adopt("exp", "f64", UMATH.__file__, None)
    with pytest.raises(ValueError, match="differ in length"):
        hop._C._math_run("exp", "f64", np.empty(3), x)
    with pytest.raises(hop.Error, match="takes two arrays"):
        hop._C._math_run("pow", "f64", np.empty_like(x), x)
    after = np.empty_like(x)
    hop._C._math_run("exp", "f64", after, x)
    assert np.array_equal(bits(before), bits(after))


@pytest.mark.skipif(not SKX or os.environ.get("HOP_MATH") is not None,
                    reason="needs AVX512_SKX and HOP_MATH unset")
def test_adopt_unknown_name_raises_and_keeps_the_table():
    with pytest.raises(hop.Error, match="no math function 'sqrtt'"):
        hop._C._math_adopt("sqrtt", "f64", UMATH.__file__, "__svml_exp8")
    x = np.linspace(0.1, 3, 11)
    out = np.empty_like(x)
    hop._C._math_run("exp", "f64", out, x)
    assert np.array_equal(bits(out), bits(np.exp(x))) == (("exp", "f64") in _numpy_math.ADOPTED)


# The functions hop computes with libm where nothing is adopted (log10 too:
# test_numpy_fidelity_regressions.py): libm's differed from NumPy's SVML
# bits in 4-40% of elements.  Each float32 sweep steps evenly through the
# bit patterns of |x| over (low, high), both signs; float64 takes those
# values nudged off float32.
LIBM_MEMBERS = {"log2": (1e-3, 1e3), "exp2": (1e-4, 160.0), "expm1": (1e-7, 90.0),
                "log1p": (1e-7, 1e6), "tan": (1e-4, 1e5), "atan": (1e-4, 1e4)}


def numpy_runs_svml(name, dtype):
    """Whether NumPy 1.24's ufunc runs SVML here: an AVX512_SKX CPU and the
    symbol in its module (HOP_MATH set: hop adopts nothing)."""
    if not SKX or os.environ.get("HOP_MATH") or not np.__version__.startswith("1.24."):
        return False
    symbol = _numpy_math._symbol(name, dtype)
    try:
        return hasattr(ctypes.CDLL(UMATH.__file__), symbol)
    except OSError:
        return False


def sweep(name, dtype, n=100_000):
    lo, hi = np.array(LIBM_MEMBERS[name], np.float32).view(np.uint32)
    mag = np.arange(lo, hi, (hi - lo) // n, dtype=np.uint32).view(np.float32).astype(dtype)
    if dtype == np.float64:
        mag = mag * (1 + 2.0 ** -30)
    return np.concatenate([_numpy_math._specials(dtype), mag, -mag])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(LIBM_MEMBERS))
def test_libm_members_give_numpys_svml_bits(name, dtype):
    if not numpy_runs_svml(name, dtype):
        pytest.skip("NumPy runs no SVML %s here" % name)
    assert (name, "f64" if dtype == np.float64 else "f32") in _numpy_math.ADOPTED
    x = sweep(name, dtype)
    uf = getattr(np, NUMPY_NAME.get(name, name))
    hf = getattr(hnp, NUMPY_NAME.get(name, name))
    with np.errstate(all="ignore"):
        want = uf(x)
        assert np.array_equal(bits(hf(x)), bits(want)), name
        assert np.array_equal(bits(hop.compile(lambda a: uf(a))(x)), bits(want)), name
        assert np.array_equal(bits(hop.compile(lambda a: uf(a[::3]))(x)), bits(want[::3]))
        got = getattr(hop, NUMPY_NAME.get(name, name))(hop.asarray(x)).numpy()
        assert np.array_equal(bits(got), bits(want)), name
        # vmap and grad run the same op (its kernel, batched or fused)
        rows = x[: x.size // 8 * 8].reshape(8, -1)
        fn = getattr(hop, NUMPY_NAME.get(name, name))
        assert np.array_equal(bits(hop.vmap(fn)(hop.asarray(rows)).numpy()), bits(uf(rows)))
        value, _ = hop.value_and_grad(lambda t: fn(t).sum())(hop.asarray(rows))
        assert np.array_equal(bits(np.asarray(value)), bits(np.asarray(fn(hop.asarray(rows))
                                                                          .sum())))


def test_hop_math_sleef_keeps_libms_bits_for_the_libm_members():
    # the libm answers (no SLEEF function for them) as before they could be
    # adopted, on a machine where they are adopted otherwise
    code = ("import numpy as np, hop, hop.numpy as hnp, hop._numpy_math as m\n"
            "assert m.ADOPTED == ()\n"
            "x = np.load(%r)\n"
            "with np.errstate(all='ignore'):\n"
            "    for name in %r:\n"
            "        for dt in (np.float32, np.float64):\n"
            "            print(np.asarray(getattr(hnp, name)(x.astype(dt))).tobytes().hex())\n")
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    names = [NUMPY_NAME.get(n, n) for n in sorted(LIBM_MEMBERS)]
    x = np.concatenate([sweep(n, np.float64, 300) for n in sorted(LIBM_MEMBERS)])
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "hop_libm_members_%d.npy" % os.getpid())
    np.save(path, x)
    try:
        lines = child(code % (path, names), HOP_MATH="sleef").split()
    finally:
        os.remove(path)
    k = 0
    for name in sorted(LIBM_MEMBERS):
        for dt, ct, sfx in ((np.float32, ctypes.c_float, "f"), (np.float64, ctypes.c_double, "")):
            f = getattr(libm, name + sfx)
            f.restype, f.argtypes = ct, [ct]
            with np.errstate(all="ignore"):
                xs = x.astype(dt)
            want = np.array([f(v) for v in xs.tolist()], dt)
            got = np.frombuffer(bytes.fromhex(lines[k]), dt)
            k += 1
            nan = np.isnan(want) & np.isnan(got)  # ctypes passes a NaN through a Python float
            assert np.array_equal(bits(got)[~nan], bits(want)[~nan]), (name, dt)
