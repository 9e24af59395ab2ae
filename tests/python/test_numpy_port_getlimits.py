"""Ported from PyTorch's test/torch_np/numpy_tests/core/test_getlimits.py
(issue #29): np.finfo and np.iinfo (hop.numpy's are NumPy's) of dtypes,
type codes, scalar types, hop.numpy arrays and scalars, and of the dtypes
of traced arrays in hop.compile: each case runs by NumPy, by hop.numpy's
own names eagerly (numpy_diff.check_ns, xp the namespace) and compiled
(numpy_diff.check with eager=True).  torch's skips and xfails are ported
(the singletons, the attributes torch lacks, the instances); the MachAr
ones (test_known_types, test_subnormal_warning) read NumPy's private
numpy.core.getlimits, for long double, and are not."""

import functools

import numpy as np
import pytest

import hop.numpy as hnp
from numpy_diff import ported

import numpy_diff

SRC = "numpy_tests/core/test_getlimits.py"
port = lambda test: ported(SRC, test)  # noqa: E731
check = functools.partial(numpy_diff.check, eager=True)
check_ns = numpy_diff.check_ns
FATTRS = ("bits", "eps", "max", "min", "resolution", "tiny", "smallest_normal")
MORE = ("epsneg", "iexp", "machep", "maxexp", "minexp", "negep", "nexp", "nmant", "precision",
        "smallest_subnormal")


# ------------------------------------------------------------ the singletons


@port("TestPythonFloat.test_singleton")
@port("TestHalf.test_singleton")
@port("TestSingle.test_singleton")
@port("TestDouble.test_singleton")
@pytest.mark.parametrize("t", [float, np.half, np.single, np.double])
def test_singleton(t):
    assert check_ns(lambda xp: xp.finfo(t) is xp.finfo(t))
    # (of a hop.numpy array's dtype: NumPy's cached instance)
    assert hnp.finfo(hnp.zeros(2, dtype=t).dtype) is np.finfo(t)


# ---------------------------------------------------------------- TestFinfo


def _finfo(info):
    return [getattr(info, a) for a in FATTRS + MORE] + [info.dtype, repr(info), str(info)]


@port("TestFinfo.test_basic")
@pytest.mark.parametrize("code, t", zip(["f2", "f4", "f8", "c8", "c16"],
                                        [np.float16, np.float32, np.float64, np.complex64,
                                         np.complex128]))
def test_finfo_basic(code, t):
    # (of an array NumPy 1.24's finfo raises: test_finfo_of_an_array below)
    def f(xp, a):
        return _finfo(xp.finfo(code)), _finfo(xp.finfo(t)), _finfo(xp.finfo(a.dtype)), \
            _finfo(xp.finfo(a[0]))
    got = check_ns(f, np.ones(2, t))
    assert all(g == got[0] for g in got)
    check(lambda a: (_finfo(np.finfo(a.dtype)), _finfo(np.finfo(a[0])),
                     np.finfo(a.dtype).eps * a, np.finfo(a[0]).max), np.ones(2, t))
    check_ns(lambda xp: xp.finfo("i4"), text=True)


@port("TestFinfo.test_basic_missing")
def test_finfo_basic_missing():
    check_ns(lambda xp: [getattr(xp.finfo(xp.float32), a) for a in MORE])
    check(lambda a: [getattr(np.finfo(a.dtype), a_) for a_ in MORE], np.ones(2, np.float32))


# ---------------------------------------------------------------- TestIinfo


def _iinfo(info):
    return [info.bits, info.min, info.max, info.dtype, info.kind, repr(info), str(info)]


@port("TestIinfo.test_basic")
@pytest.mark.parametrize("code, t", zip(["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"],
                                        [np.int8, np.int16, np.int32, np.int64, np.uint8,
                                         np.uint16, np.uint32, np.uint64]))
def test_iinfo_basic(code, t):
    def f(xp, a):
        return _iinfo(xp.iinfo(code)), _iinfo(xp.iinfo(t)), _iinfo(xp.iinfo(a.dtype)), \
            _iinfo(xp.iinfo(a[0]))
    got = check_ns(f, np.ones(2, t))
    assert all(g == got[0] for g in got)
    check(lambda a: (_iinfo(np.iinfo(a.dtype)), np.iinfo(a[0]).max, np.iinfo(a.dtype).min + a),
          np.zeros(2, t))
    check_ns(lambda xp: xp.iinfo("f4"), text=True)


# (NumPy's finfo/iinfo of its ndarray: dtype(a) refuses the array, so
# they take dtype(type(a)), object, and raise ValueError; hop.numpy's
# array's dtype getter refuses np.dtype's read the same way: _callee.py)


@port("TestFinfo.test_basic")
@pytest.mark.parametrize("t", [np.float32, np.float64, np.complex64, np.int32])
def test_finfo_of_an_array(t):
    check(lambda a: np.finfo(a), np.ones(2, t))
    check(lambda a: np.finfo(a[:1]), np.ones((2, 2), t))
    check_ns(lambda xp, a: xp.finfo(a), np.ones(3, t), text=True)
    check_ns(lambda xp, a: xp.finfo(xp.asarray(a).reshape(())), np.ones(1, t), text=True)


@port("TestIinfo.test_basic")
@pytest.mark.parametrize("t", [np.int8, np.uint32, np.int64, np.float32])
def test_iinfo_of_an_array(t):
    check(lambda a: np.iinfo(a), np.ones(2, t))
    check_ns(lambda xp, a: xp.iinfo(a), np.ones(3, t), text=True)


@port("TestIinfo.test_unsigned_max")
@pytest.mark.parametrize("T", np.sctypes["uint"])
def test_unsigned_max(T):
    def f(xp, a):
        with xp.errstate(over="ignore"):
            max_calculated = T(0) - T(1)
            of_hop = a[0] - a[1]  # (hop.numpy's scalar when xp is hop.numpy)
        return xp.iinfo(T).max == max_calculated, xp.iinfo(T).max == of_hop, of_hop
    assert check_ns(f, np.array([0, 1], T))[:2] == (True, True)


# ------------------------------------------------------------------ TestRepr


@port("TestRepr.test_iinfo_repr")
def test_iinfo_repr():
    want = "iinfo(min=-32768, max=32767, dtype=int16)"
    assert check_ns(lambda xp, a: (repr(xp.iinfo(xp.int16)), repr(xp.iinfo(a.dtype))),
                    np.zeros(2, np.int16)) == (want, want)


@port("TestRepr.test_finfo_repr")
def test_finfo_repr():
    got = check_ns(lambda xp, a: (repr(xp.finfo(xp.float32)), repr(xp.finfo(a.dtype))),
                   np.zeros(2, np.float32))
    # (torch's "min=-3.40282e+38" is an older NumPy's repr)
    assert got == ("finfo(resolution=1e-06, min=-3.4028235e+38, max=3.4028235e+38, "
                   "dtype=float32)",) * 2


# ---------------------------------------------------------------- the rest


@port("test_instances")
def test_instances():
    check_ns(lambda xp: (_iinfo(xp.iinfo(10)), _finfo(xp.finfo(3.0))))
    # of a hop.numpy scalar (eagerly) and a traced one (compiled)
    check(lambda a, b: (_iinfo(np.iinfo(a[0])), _finfo(np.finfo(b[0]))),
          np.array([10], np.int32), np.array([3.0], np.float32))


@port("test_plausible_finfo")
@pytest.mark.parametrize("ftype", [np.float16, np.float32, np.float64, np.complex64,
                                   np.complex128])  # (np.sctypes' but long double)
def test_plausible_finfo(ftype):
    def f(xp):
        info = xp.finfo(ftype)
        return info.nmant > 1, info.minexp < -1, info.maxexp > 1
    assert check_ns(f) == (True, True, True)
