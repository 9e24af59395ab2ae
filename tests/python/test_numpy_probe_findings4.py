"""First-rule gaps a fourth probe of hop.numpy's surface against NumPy 1.24
found: einsum's '...' and sublist form, np.shares_memory of diagonal views,
the last bits of complex abs and np.i0, and the set, histogram, polynomial,
linalg, fft and pad routines' corners; each compared against NumPy eagerly
on hop.numpy arrays and compiled: value, dtype, shape, type, error type and
text, and warnings (hop.compile's own "runs eagerly" notice left out)."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from test_numpy_probe_findings3 import _run, _three_ways

X23 = np.arange(6.0).reshape(2, 3)
A234 = np.arange(24.0).reshape(2, 3, 4) / 7
E = np.einsum

# ------------------------------------------------------------ einsum '...'

EINSUM_ELLIPSIS = {
    "batched matmul": lambda x: E("...ij,jk->...ik", A234, x.T),
    "implicit batched": lambda x: E("...ij,jk", A234, x.T),
    "a sum to the broadcast dims": lambda x: E("...i->...", x),
    "implicit puts them first": lambda x: E("i...", x),
    "everything": lambda x: E("...", x),
    "broadcasting a 1": lambda x: E("...i,...i", x, np.ones((4, 1, 3))),
    "operands of other ranks": lambda x: E("...i,...i->...", x, np.ones((4, 2, 3))),
    "an ellipsis of no dims": lambda x: E("ij...,j", x, x[0]),
    "between labels": lambda x: E("i...j->...", A234),
    "with a diagonal": lambda x: E("...ii->...i", np.arange(18.0).reshape(2, 3, 3)),
    "ellipsis in the middle of the output": lambda x: E("i,...->i...", x[0], x),
    "of a scalar": lambda x: E("...,...", 3.0, x),
    "into out": lambda x: (lambda o: (E("i...,i...", x, x, out=o), o)[1])(np.empty(3)),
    "a view through it": lambda x: (lambda r: (r.__setitem__((0, 0), 50.0), x)[1])(
        E("i...->...i", x)),
    "upper case": lambda x: E("B...a", A234),
    "zero-size": lambda x: E("...,...->...", np.ones((0, 3)), x[0]),
    "ints and floats": lambda x: E("...i,...i->...", x.astype(np.int32), A234[:, :, :3]),
    # NumPy's errors
    "output without one": lambda x: E("...i->i", x),
    "summed away": lambda x: E("...ii->i", np.ones((2, 3, 3))),
    "too many labels": lambda x: E("ij...", x[0]),
    "two": lambda x: E("...i...", x),
    "a part of one": lambda x: E("..", x),
    "not broadcasting": lambda x: E("...i,...i->...", x, np.ones((4, 3, 3))),
}


@pytest.mark.parametrize("case", EINSUM_ELLIPSIS)
def test_einsum_ellipsis_broadcasts_as_numpys(case):
    # hop raised UnsupportedError("einsum with '...' is not supported")
    want, eager, compiled = _three_ways(EINSUM_ELLIPSIS[case], X23)
    assert eager == want
    assert compiled == want


EINSUM_SUBLISTS = {
    "matmul": lambda x: E(x, [0, 1], x.T, [1, 2], [0, 2]),
    "implicit output": lambda x: E(x, [0, 1], x.T, [1, 2]),
    "a transpose": lambda x: E(x, [0, 1], [1, 0]),
    "tuples": lambda x: E(x, (0, 1), (1,)),
    "an ellipsis": lambda x: E(A234, [Ellipsis, 1, 2], x, [2, 1], [Ellipsis]),
    "both cases": lambda x: E(x, [25, 26], [26, 25]),
    "NumPy integers": lambda x: E(x, [np.int64(0), np.int8(1)]),
    "an empty output": lambda x: E(x, [0, 1], x[0], [1], []),
    "a diagonal": lambda x: E(x[:, :2], [3, 3], [3]),
    "with optimize": lambda x: E(x, [0, 1], x[0], [1], optimize=True),
    # NumPy's errors
    "52": lambda x: E(x, [0, 52]),
    "negative": lambda x: E(x, [0, -1]),
    "a float": lambda x: E(x, [0, 1.0]),
    "a bool": lambda x: E(x, [0, True]),
    "not a sequence": lambda x: E(x, 5),
    "an array output": lambda x: E(x, [0, 1], x[0]),
    "two ellipses": lambda x: E(x, [Ellipsis, Ellipsis]),
    "too many": lambda x: E(x, [0, 1, 2]),
    "sizes of a diagonal": lambda x: E(x, [0, 0]),
    "no subscripts": lambda x: E(x),
    "no operand": lambda x: E("ij"),
    "nothing": lambda x: E(),
}


@pytest.mark.parametrize("case", EINSUM_SUBLISTS)
def test_einsum_sublist_form_is_numpys(case):
    # hop raised UnsupportedError("einsum takes a subscripts string")
    want, eager, compiled = _three_ways(EINSUM_SUBLISTS[case], X23)
    assert eager == want
    assert compiled == want


EINSUM_OPTIMIZE = {
    "True": lambda x: E("ij,jk,kl", x, x.T, x, optimize=True),
    "greedy": lambda x: E("ij,jk,kl", x, x.T, x, optimize="greedy"),
    "optimal": lambda x: E("ij,jk,kl", x, x.T, x, optimize="optimal"),
    "a memory limit": lambda x: E("ij,jk,kl", x, x.T, x, optimize=("greedy", 1e9)),
    "an explicit path": lambda x: E("ij,jk,kl", x, x.T, x,
                                    optimize=["einsum_path", (0, 1), (0, 1)]),
    "an unknown name of two": lambda x: E("ij,jk", x, x.T, optimize="bogus"),
    # NumPy's errors
    "an unknown name": lambda x: E("ij,jk,kl", x, x.T, x, optimize="bogus"),
    "a short path": lambda x: E("ij,jk,kl", x, x.T, x, optimize=["einsum_path", (0, 1)]),
    "an int": lambda x: E("ij,jk", x, x.T, optimize=1),
    "an empty list": lambda x: E("ij,jk", x, x.T, optimize=[]),
    "a tuple of one": lambda x: E("ij,jk", x, x.T, optimize=("greedy",)),
}


@pytest.mark.parametrize("case", EINSUM_OPTIMIZE)
def test_einsum_optimize_argument_is_read_as_numpys(case):
    # hop took any optimize= silently
    want, eager, compiled = _three_ways(EINSUM_OPTIMIZE[case], X23)
    assert eager == want
    assert compiled == want


# ------------------------------------------------- shares_memory of views

SM, MSM = np.shares_memory, np.may_share_memory
Z = np.arange(6.0) + 1j * np.arange(6.0)

SHARES = {
    "a diagonal": lambda x: SM(x.diagonal(), x),
    "np.diagonal": lambda x: SM(np.diagonal(x, 1), x),
    "np.diag": lambda x: SM(np.diag(x), x),
    "a diagonal and a row": lambda x: (SM(x.diagonal(), x[1]), SM(x.diagonal(), x[1, :1])),
    "a diagonal may share": lambda x: MSM(x.diagonal(), x[2:]),
    "a 3-d diagonal": lambda x: SM(x.reshape(2, 2, 3).diagonal(0, 0, 1), x[1:, 2:]),
    "an einsum diagonal": lambda x: SM(np.einsum("ii->i", x[:, :3]), x),
    "a reversed view": lambda x: (SM(x[::-1], x[:1]), SM(x[::-1, ::2], x[:, 1]),
                                  MSM(x[::-1, ::2], x[:, 1])),
    "np.flip": lambda x: SM(np.flip(x)[0], x[2]),
    "a flipped diagonal": lambda x: (SM(np.flip(x).diagonal(), x[0]),
                                     SM(np.flip(x).diagonal(), x[:, 3])),
    "rot90": lambda x: SM(np.rot90(x)[0], x[:, 3]),
    "strides": lambda x: (SM(x[:, ::2], x[:, 1::2]), MSM(x[:, ::2], x[:, 1::2])),
    "a transpose": lambda x: SM(x.T[1], x[:, 1]),
    "a reshape": lambda x: (SM(x.reshape(12)[4:], x[0]), SM(x.reshape(12)[4:], x[1])),
    "real and imag": lambda x: (SM(Z.real, Z.imag), MSM(Z.real, Z.imag),
                                SM(Z.real[::-1][:1], Z[5:])),
}


@pytest.mark.parametrize("case", SHARES)
def test_shares_memory_of_element_taking_views_is_numpys(case):
    # hop's eager diagonal, reversed and flipped views are copies that a
    # write reaches the base through; np.shares_memory read the copy's
    # memory (False for x.diagonal() and x); compiled, a complex array's
    # part compared its offsets, counted in the parts' items, with the
    # complex array's, counted in complex items (Z.real[5] and Z[5:]: False)
    want, eager, compiled = _three_ways(SHARES[case], np.arange(12.0).reshape(3, 4))
    assert eager == want
    assert compiled == want


# ------------------------------------------------------------ complex abs

def _bits(r):
    a = np.asarray(r)
    return a.dtype.str, a.shape, a.tobytes()


ZS = np.array([3.3 + 1e-3j, -3 + 4j, 0j, -0j, 1e-320 + 1e-320j, 1e308 + 1e308j, 1e-200 - 1e-200j,
               complex(np.inf, np.nan), complex(np.nan, -np.inf), complex(np.nan, 1),
               complex(2, np.nan), complex(-np.inf, 0), 0.1 + 0.7j, 1 - 2.3j, 7e-3 + 5j])


@pytest.mark.parametrize("z", [ZS, ZS.astype(np.complex64), ZS[::-2], ZS.reshape(3, 5)[:, 1::2],
                               np.random.default_rng(3).standard_normal((2, 700)).view(complex)],
                         ids=["c128", "c64", "strided", "2-d", "random"])
def test_complex_abs_is_numpys_bits(z):
    # NumPy 1.24's complex absolute loop computes max * sqrt(fma(r, r, 1))
    # (r = min / max) on an AVX512F CPU where hop took glibc's cabs (hypot):
    # |3.3 + 0.001j| differed in the last bit, in ~35% of random values; on
    # an AVX2 one (an AMD EPYC) NumPy's is hypot, which hop then takes
    with np.errstate(all="ignore"):
        want = _bits(np.abs(z))
        assert _bits(hnp.abs(hnp.asarray(z))) == want
        assert _bits(hop.compile(lambda a: np.abs(a))(z)) == want
        assert _bits(hop.compile(lambda a: np.absolute(a) * 1.0)(z)) == _bits(np.abs(z) * 1.0)


def test_abs_of_a_complex_numpy_scalar_is_hypot_as_numpys():
    # NumPy's abs() of a complex scalar is its scalar math's npy_hypot (the
    # ufunc's loop rounds otherwise); compiled, hop gave the ufunc's
    z = np.array([3.3 + 1e-3j, 0.3 + 0.7j])
    want = [abs(v) for v in z]
    f = hop.compile(lambda a: (abs(a[0].sum()), abs(a.sum())))
    assert [_bits(v) for v in f(z[:1])] == [_bits(np.float64(want[0]))] * 2
    h = hnp.asarray(z)
    for ignore in (False, True):
        with np.errstate(all="ignore" if ignore else "warn"):
            assert [_bits(abs(h[i])) for i in range(2)] == [_bits(np.float64(w)) for w in want]


# ------------------------------------------------------------------ det

@pytest.mark.parametrize("dt", [np.float64, np.float32, np.complex128, np.complex64, np.int64])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_det_is_numpys_sign_times_exp_of_logdet(n, dt):
    # NumPy's det is det_from_slogdet: sign * exp(sum(log|d|)) over the LU
    # diagonal; hop multiplied the diagonal (det([[3, 1], [1, 5]])... was
    # 7.0 where NumPy's is 7.000000000000001)
    r = np.random.default_rng(n)
    a = r.standard_normal((12, n, n)) * 3
    if np.dtype(dt).kind == "c":
        a = a + 1j * r.standard_normal((12, n, n))
    a = r.integers(-5, 5, (12, n, n)) if dt is np.int64 else a.astype(dt)
    want = _bits(np.linalg.det(a))
    assert _bits(hnp.linalg.det(hnp.asarray(a))) == want
    assert _bits(hop.compile(lambda x: np.linalg.det(x))(a)) == want
    assert _bits(hop.compile(lambda x: np.linalg.det(x[0]))(a)) == _bits(np.linalg.det(a[0]))


# ------------------------------------------------- sets and histograms

R6 = np.array([3, 1, 2, 3, 1, 5])


@pytest.mark.parametrize("f", [lambda x: np.intersect1d(x, [1, 5, 7], assume_unique=True),
                               lambda x: np.intersect1d(x, x[::-1], assume_unique=True),
                               lambda x: np.intersect1d(x, [1, 5, 7]),
                               lambda x: np.intersect1d(x * 1.0, [np.nan, 1.0], assume_unique=True)])
def test_intersect1d_assume_unique_is_numpys_sorted_concatenation(f):
    # NumPy's intersect1d(assume_unique=True) keeps the sorted
    # concatenation's repeats (of repeated input: [1, 1, 3, 5]); hop took
    # unique values
    want, eager, compiled = _three_ways(f, R6)
    assert eager == want
    assert compiled == want


def _weights(n, dt, seed):
    r = np.random.default_rng(seed)
    w = r.standard_normal(n) * 10
    if np.dtype(dt).kind == "c":
        w = w + 1j * r.standard_normal(n)
    return w.astype(dt)


@pytest.mark.parametrize("n", [10, 1000, 70000, 140001])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64, np.complex128, np.int32,
                                np.bool_])
@pytest.mark.parametrize("kw", [dict(bins=7), dict(bins=7, range=(0.1, 0.8))], ids=["n", "range"])
def test_weighted_histogram_sums_as_numpys_bincount_per_block(n, dt, kw):
    # NumPy sums each block of 65536 elements' weights in double
    # (np.bincount), casts the block's sums to the weights' dtype and adds
    # them (a complex weight's parts added in double); hop summed float32
    # weights in float32 (and all blocks at once)
    x = np.random.default_rng(n).random(n)
    w = _weights(n, dt, n + 1)
    want = _bits(np.histogram(x, weights=w, **kw)[0])
    assert _bits(hnp.histogram(hnp.asarray(x), weights=hnp.asarray(w), **kw)[0]) == want
    assert _bits(hop.compile(lambda a, b: np.histogram(a, weights=b, **kw)[0])(x, w)) == want


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int64, np.complex128])
def test_histogram_density_divides_by_the_counts_sum_in_their_dtype(dt):
    # NumPy's n / db / n.sum(): hop cast the counts to float64 first (a
    # complex weight lost its imaginary part)
    x = np.random.default_rng(1).random(300)
    w = _weights(300, dt, 2) if dt is not np.int64 else np.arange(300)
    want, eager, compiled = _three_ways(lambda a, b: np.histogram(a, 5, weights=b, density=True),
                                        x, w)
    assert eager == want
    assert compiled == want


HISTOGRAM_ARGS = {
    "auto": lambda x: np.histogram(x, bins="auto"),
    "fd": lambda x: np.histogram(x, bins="fd"),
    "sturges over a range": lambda x: np.histogram(x, bins="sturges", range=(0.2, 0.7)),
    "doane edges": lambda x: np.histogram_bin_edges(x, bins="doane"),
    "an unknown estimator": lambda x: np.histogram(x, bins="bogus"),
    "an estimator of weighted data": lambda x: np.histogram(x, bins="auto", weights=x),
    "bins a float": lambda x: np.histogram(x, bins=2.0),
    "bins a NumPy float": lambda x: np.histogram(x, bins=np.float64(3)),
    "bins a NumPy int": lambda x: np.histogram(x, bins=np.int8(3)),
    "a bool array": lambda x: np.histogram(x > 0.5, bins=2),
    "a bool array's edges": lambda x: np.histogram_bin_edges(x > 0.5, bins=2),
}


@pytest.mark.parametrize("case", HISTOGRAM_ARGS)
def test_histogram_bins_arguments_are_numpys(case):
    # hop refused estimator names (UnsupportedError), said "'float' object
    # cannot be interpreted as an integer" for bins=2.0 and converted a bool
    # array without NumPy's RuntimeWarning
    want, eager, compiled = _three_ways(HISTOGRAM_ARGS[case], np.linspace(0, 1, 23) ** 2)
    assert eager == want
    assert compiled == want


# ------------------------------------------- arguments read as NumPy's

X10 = np.linspace(0, 1, 10)
FFT = np.fft

ARGUMENTS = {
    "in1d table of floats": lambda x: np.in1d(x, [1.0], kind="table"),
    "in1d table of ints and floats": lambda x: np.in1d(x.astype(int), [1.0], kind="table"),
    "isin table of ints": lambda x: np.isin(x.astype(int), [0, 1], kind="table"),
    "bincount minlength=None": lambda x: np.bincount(x.astype(int), minlength=None),
    "convolve mode 'f'": lambda x: np.convolve(x, x[:4], mode="f"),
    "correlate mode 'V'": lambda x: np.correlate(x, x[:4], mode="V"),
    "convolve mode 'Same'": lambda x: np.convolve(x, x[:4], mode="Same"),
    "convolve mode 'x'": lambda x: np.convolve(x, x[:4], mode="x"),
    "convolve mode ''": lambda x: np.convolve(x, x[:4], mode=""),
    "convolve mode 1": lambda x: np.convolve(x, x[:4], mode=np.int64(1)),
    "convolve mode 3": lambda x: np.convolve(x, x[:4], mode=3),
    "convolve mode True": lambda x: np.convolve(x, x[:4], mode=True),
    "convolve mode 1.0": lambda x: np.convolve(x, x[:4], mode=1.0),
    "convolve mode None": lambda x: np.convolve(x, x[:4], mode=None),
    "cross axisa": lambda x: np.cross(x[:9].reshape(3, 3), x[:9].reshape(3, 3), axisa=5),
    "cross axisb": lambda x: np.cross(x[:9].reshape(3, 3), x[:9].reshape(3, 3), axisb=-3),
    "cross axisc": lambda x: np.cross(x[:3], x[3:6], axisc=1),
    "cross of a 0-d": lambda x: np.cross(x[0], x[:3]),
    "fft n 2.0": lambda x: FFT.fft(x, 2.0),
    "fft n 10.0": lambda x: FFT.fft(x, 10.0).shape,
    "fft n 12.0": lambda x: FFT.fft(x, 12.0),
    "fft n 2.0 and a bad norm": lambda x: FFT.fft(x, 2.0, norm="bad"),
    "fft axis out of range": lambda x: FFT.fft(x, axis=1),
    "fft n and axis out of range": lambda x: FFT.fft(x, 3, axis=1),
    "fft of a 0-d": lambda x: FFT.fft(x[0]),
    "fft of a 0-d with n": lambda x: FFT.fft(x[0], 3),
    "rfft axis out of range": lambda x: FFT.rfft(x, axis=-2),
    "irfft axis out of range": lambda x: FFT.irfft(x, axis=2),
    "hfft axis out of range": lambda x: FFT.hfft(x, axis=3),
    "irfft n 4.0": lambda x: FFT.irfft(x, 4.0),
    "rfft n 5.5": lambda x: FFT.rfft(x, 5.5),
    "fft n and axis both bad": lambda x: FFT.fft(x, -2, axis=5),
    "fft a bad norm and axis": lambda x: FFT.fft(x, norm="bad", axis=4),
}


@pytest.mark.parametrize("case", ARGUMENTS)
def test_arguments_are_read_as_numpys(case):
    # hop's in1d took kind='table' of floats, bincount refused minlength=None
    # (NumPy warns), convolve refused a mode's first letter (NumPy warns),
    # cross's axis errors lacked their 'axisa: ' prefix, fft took n=2.0 and
    # gave an AxisError where NumPy reads a.shape[axis] (IndexError)
    want, eager, compiled = _three_ways(ARGUMENTS[case], X10)
    assert eager == want
    assert compiled == want


POLYFITS = {
    "full's rcond": lambda x: np.polyfit(x, x ** 2, 2, full=True)[4],
    "full's rcond of float32": lambda x: np.polyfit(x.astype(np.float32), x, 1, full=True)[4],
    "cov": lambda x: np.polyfit(x, np.cos(x), 2, cov=True),
    "cov unscaled": lambda x: np.polyfit(x, np.cos(x), 2, cov="unscaled"),
    "cov of 2-d y": lambda x: np.polyfit(x, np.stack([np.cos(x), x]).T, 1, cov=True),
    "cov with weights": lambda x: np.polyfit(x, np.cos(x), 3, w=x + 1, cov=True),
    "cov of too few points": lambda x: np.polyfit(x[:3], x[:3], 2, cov=True),
    "cov unscaled of few points": lambda x: np.polyfit(x[:3], x[:3], 2, cov="unscaled"),
}


@pytest.mark.parametrize("case", POLYFITS)
def test_polyfit_cov_and_rcond_are_numpys(case):
    # hop refused cov= (UnsupportedError) and gave full=True's rcond as a
    # Python float (NumPy's is a NumPy float64)
    want, eager, compiled = _three_ways(POLYFITS[case], X10)
    assert eager == want
    assert compiled == want


SOLVES = [((4, 4), (3, 4)), ((4, 4), (3,)), ((4, 4), ()), ((2, 3, 3), (4, 3, 1)), ((2, 3, 3), (4, 3)),
          ((2, 3, 3), (2, 4)), ((2, 3, 3), (5, 4, 3, 1)), ((6, 2, 3, 3), (4, 3, 1)),
          ((2, 3, 3), (5, 4, 3)), ((3, 3), (2, 2, 3, 1)), ((2, 3, 3), (2, 3))]


@pytest.mark.parametrize("sa,sb", SOLVES, ids=repr)
def test_solve_shape_errors_are_numpys_gufunc_errors(sa, sb):
    # hop raised its own ShapeError ('linalg_solve: cannot solve with
    # f64[4, 4] for f64[3, 4]') where NumPy's gufunc names the core
    # dimension or the loop dimensions' broadcast
    a = np.eye(sa[-1]) * 2 + np.zeros(sa)
    want, eager, compiled = _three_ways(lambda x, y: np.linalg.solve(x, y), a, np.ones(sb))
    assert eager == want
    assert compiled == want


# ------------------------------------------------------ a second probe

F32 = np.random.default_rng(1).standard_normal(9).astype(np.float32)


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.float64, np.int8, np.uint8])
@pytest.mark.parametrize("same", [False, True], ids=["spread", "one value"])
@pytest.mark.parametrize("bins", [1, 3, 10, 37])
def test_histogram_edges_are_in_the_datas_float_dtype_as_numpys(dt, same, bins):
    # NumPy's edges are result_type(a.min(), a.max(), a): a float32 array's
    # are float32 (hop's float64), and its counts are the float32 edges'
    r = np.random.default_rng(bins)
    x = (r.standard_normal(171) * 1000).astype(dt)
    if same:
        x[:] = x[0]
    w = r.random(171).astype(np.float32)
    want = [_bits(v) for v in np.histogram(x, bins, weights=w)]
    assert [_bits(v) for v in hnp.histogram(hnp.asarray(x), bins, weights=hnp.asarray(w))] == want
    assert [_bits(v) for v in hop.compile(lambda a, b: np.histogram(a, bins, weights=b))(x, w)] \
        == want
    assert _bits(hnp.histogram(hnp.asarray(x[:0]), bins)[1]) == _bits(np.histogram(x[:0], bins)[1])


SECOND = {
    "intersect1d of int8 and uint8": lambda x: np.intersect1d(x.astype(np.int8), [3, 250]),
    "intersect1d of float32 and a list": lambda x: np.intersect1d(x, x[:3].tolist()),
    "bincount of complex weights": lambda x: np.bincount([0, 1], weights=[1j, 2]),
    "bincount of float32 weights": lambda x: np.bincount([0, 1, 1], weights=x[:3]),
    "pad width a bool": lambda x: np.pad(x, True),
    "pad width a float": lambda x: np.pad(x, 2.5),
    "pad width unsigned": lambda x: np.pad(x, np.uint8(2)),
    "pad mean": lambda x: np.pad(x, 2, "mean"),
    "pad median": lambda x: np.pad(x, (1, 3), "median", stat_length=2),
    "pad maximum": lambda x: np.pad(x, 2, "maximum", stat_length=(1, 3)),
    "pad linear ramp": lambda x: np.pad(x, 2, "linear_ramp", end_values=(5, -1)),
    "pad odd reflection": lambda x: np.pad(x[:2], 5, "reflect", reflect_type="odd"),
    "pad odd symmetric": lambda x: np.pad(x, 2, "symmetric", reflect_type="odd"),
    "pad another reflect_type": lambda x: np.pad(x, 2, "reflect", reflect_type="bogus"),
    "pad a function": lambda x: np.pad(x, 2, lambda v, w, a, k: None),
    "pad complex constants": lambda x: np.pad(x + 1j, 1, constant_values=1j),
    "interp of complex values": lambda x: np.interp(x, [0, 0.5, 1], [1j, 2, 0]),
    "interp of complex values with a period": lambda x: np.interp(x, [0, 1], [1j, 2], period=0.7),
    "rfft of complex values": lambda x: np.fft.rfft(x + 1j),
    "rfftn of complex values": lambda x: np.fft.rfftn((x + 1j).reshape(3, 3)).shape,
    "matrix_rank of no values": lambda x: np.linalg.matrix_rank(np.zeros((0, 3))),
}


@pytest.mark.parametrize("case", SECOND)
def test_second_probe_findings_are_numpys(case):
    # intersect1d kept ar1's dtype (NumPy concatenates: int16 of int8 and
    # uint8), bincount summed complex weights' real parts, pad took a bool
    # pad width and refused NumPy's statistic, ramp and odd modes, interp of
    # complex values was refused, rfft of them warned nothing, matrix_rank of
    # an empty matrix raised hop's ShapeError text
    want, eager, compiled = _three_ways(SECOND[case], F32)
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n1,n2", [(1, 1), (5, 2), (9, 4), (30, 7), (30, 11), (100, 12), (9, 20),
                                   (100, 40)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", ["convolve", "correlate"])
def test_float_convolve_and_correlate_are_numpys_bits(dt, n1, n2, mode, fn):
    # NumPy's _pyarray_correlate: each end output the BLAS dot of the overlap
    # only, the full overlaps small_correlate's s += d * k for a kernel of at
    # most 11; hop took BLAS dots of zero-padded windows (float32
    # convolve(x, int8 kernel) differed in the last bit)
    r = np.random.default_rng(n1 * 100 + n2)
    a, v = r.standard_normal(n1).astype(dt), r.standard_normal(n2).astype(dt)
    want = _bits(getattr(np, fn)(a, v, mode))
    assert _bits(getattr(hnp, fn)(hnp.asarray(a), hnp.asarray(v), mode)) == want
    assert _bits(hop.compile(lambda x, y: getattr(np, fn)(x, y, mode))(a, v)) == want


@pytest.mark.parametrize("f", [lambda x: np.cross(x[:3].astype(np.uint8), x[1:4].astype(np.uint8)),
                               lambda x: np.cross(x[:3].astype(np.int8) * 50, x[1:4].astype(np.int8)),
                               lambda x: np.cross(x[:2].astype(np.uint8), x[1:4].astype(np.uint8)),
                               lambda x: np.fft.fft2(x), lambda x: np.fft.fftn(x, axes=(0, 3)),
                               lambda x: np.fft.rfft2(x)])
def test_cross_of_integer_vectors_and_fft2_of_a_vector_are_numpys(f):
    # cross of 1-d uint8 vectors warned 'overflow encountered in scalar
    # subtract' (hop's parts were NumPy scalars); fft2 of a 1-d array said
    # 'tuple index out of range' where NumPy's take(a.shape, axes) names it
    want, eager, compiled = _three_ways(f, np.array([3.0, 1.0, 250.0, 7.0]))
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("f", [lambda x: np.histogram(x + 1j, bins=2),
                               lambda x: np.histogram(x * 1j, bins=3, range=(0, 1)),
                               lambda x: np.histogram(x + 1j, bins=[0, 1, 2], weights=x),
                               lambda x: np.histogram_bin_edges(x - 1j, bins=2)])
def test_histogram_of_complex_data_is_numpys(f):
    # NumPy histograms complex data (complex edges, its ComplexWarnings);
    # hop raised DTypeError ('amin: complex dtypes are not supported')
    want, eager, compiled = _three_ways(f, np.linspace(0, 1, 7))
    assert eager == want
    assert compiled == want


# ------------------------------------------- uint64 values beyond int64

UINT64_BIG = {
    "pad constant 2**63": lambda x: np.pad(x, 1, constant_values=2**63),
    "pad constant -1": lambda x: np.pad(x, 1, constant_values=-1),
    "pad constant uint64 max": lambda x: np.pad(x, (0, 2), constant_values=np.uint64(2**64 - 1)),
    "insert 2**63": lambda x: np.insert(x, 0, 2**63),
    "insert uint64 scalar": lambda x: np.insert(x, [1, 2], np.uint64(2**63 + 5)),
    "append uint64 scalar": lambda x: np.append(x, np.uint64(2**63)),
    "linspace to 2**63": lambda x: np.linspace(0, 2**63, 3, dtype=np.uint64),
    "full 2**63": lambda x: np.full(3, 2**63, dtype=np.uint64),
    "where with 2**63": lambda x: np.where(x > 0, x, np.uint64(2**63)),
}


@pytest.mark.parametrize("case", UINT64_BIG)
def test_uint64_values_beyond_int64_are_numpys(case):
    # (raised OverflowError "full(): ... does not fit in int64": hop's op
    # scalars are int64, and _C.full refused a uint64 fill value beyond them)
    x = np.array([0, 1, 3], np.uint64)
    want, eager, compiled = _three_ways(UINT64_BIG[case], x)
    assert eager == want
    assert compiled == want
    assert _three_ways(lambda: UINT64_BIG[case](hnp.asarray(x.copy())))[0] == want


# ------------------------------------- complex values cast to a real dtype

def _set_all(x):
    o = np.zeros(3)
    o[:] = x
    return o


def _copied(x):
    o = np.zeros(3)
    np.copyto(o, x, casting="unsafe")
    return o


def _placed(x):
    o = np.zeros(3)
    np.place(o, [True, False, True], np.complex64(2 - 1j))
    return o + x.real


def _putmasked(x):
    o = np.zeros(3, np.int32)
    np.putmask(o, [True, False, True], np.complex128(2 - 1j))
    return o + x.real


COMPLEX_TO_REAL = {
    "setitem": _set_all, "copyto": _copied, "place": _placed, "putmask": _putmasked,
    "setitem into bool": lambda x: (lambda o: (o.__setitem__(slice(None), x), o)[1])(
        np.zeros(3, bool)),
    "out= unsafe": lambda x: np.add(x, x, out=np.zeros(3), casting="unsafe"),
    "out= where": lambda x: np.add(x, x, out=np.zeros(3), casting="unsafe",
                                   where=np.array([True, False, True])),
    "asarray(dtype=float)": lambda x: np.asarray(x, dtype=float),
    "array(dtype=float32)": lambda x: np.array(x, dtype=np.float32),
    "array(dtype=int)": lambda x: np.array(x, dtype=int),
    "array(dtype=bool)": lambda x: np.array(x, dtype=bool),
    "empty astype": lambda x: x[:0].astype(float),
    "sum(dtype=float)": lambda x: x.sum(dtype=float), "np.sum(dtype=int)": lambda x: np.sum(
        x, dtype=int),
    "sum(dtype=bool)": lambda x: x.sum(dtype=bool), "prod(dtype=float32)": lambda x: np.prod(
        x, dtype=np.float32),
    "mean(dtype=float)": lambda x: x.mean(dtype=float), "mean(dtype=int) axis": lambda x: np.mean(
        x.reshape(3, 1), axis=1, dtype=int),
    "var(dtype=float)": lambda x: np.var(x, dtype=float), "std(dtype=float32)": lambda x: x.std(
        dtype=np.float32),
    "cumsum(dtype=float)": lambda x: np.cumsum(x, dtype=float),
    "nansum(dtype=float)": lambda x: np.nansum(x, dtype=float),
    "trace(dtype=float)": lambda x: np.trace(np.diag(x), dtype=float)}


@pytest.mark.parametrize("f", COMPLEX_TO_REAL.values(), ids=COMPLEX_TO_REAL.keys())
def test_complex_values_cast_to_a_real_dtype_warn_as_numpy_on_every_call(f):
    # NumPy's complex-to-real cast warns once per cast (a ComplexWarning,
    # whatever the values: an empty array's too; not into bool); hop gave
    # none for these, or only on a compiled function's first call (hunt29
    # bug07)
    def x():
        return np.array([1 + 2j, 3, 4j])
    want = _run(lambda: f(x()))
    assert _run(lambda: f(hnp.asarray(x()))) == want
    assert _run(lambda: f(hnp.asarray(x()))) == want
    cf = hop.compile(f)
    for _ in range(3):
        assert _run(lambda: cf(x())) == want


# ------------------------------------------- cov, corrcoef and cond warnings

_X23 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 7.0]])
STATS_WARNINGS = {
    "cov of one observation": lambda a: np.cov(a[:, :1]),
    "cov of a 1-d one": lambda a: np.cov(a[0, :1]),
    "cov with y": lambda a: np.cov(a[0, :1], a[1, :1]),
    "cov rowvar=False": lambda a: np.cov(a[:1], rowvar=False),
    "cov ddof=3": lambda a: np.cov(a, ddof=3), "cov ddof=2": lambda a: np.cov(a, ddof=2),
    "cov bias": lambda a: np.cov(a[:, :1], bias=True),
    "cov fweights": lambda a: np.cov(a, fweights=[1, 0, 0]),
    "cov aweights": lambda a: np.cov(a, aweights=[1.0, 0.0, 0.0]),
    "cov of no variable": lambda a: np.cov(a[:0]), "cov": lambda a: np.cov(a),
    "corrcoef with a constant row": lambda a: np.corrcoef(a[0], np.ones(3)),
    "corrcoef of one observation": lambda a: np.corrcoef(a[:, :1]),
    "corrcoef": lambda a: np.corrcoef(a),
    "cond of zeros": lambda a: np.linalg.cond(np.zeros((2, 2)) * a[0, 0]),
    "cond of a singular matrix": lambda a: np.linalg.cond(
        np.array([[1.0, 2.0], [2.0, 4.0]]) * a[0, 0]),
    "cond p=-2": lambda a: np.linalg.cond(np.zeros((2, 2)) * a[0, 0], -2),
    "cond p='fro'": lambda a: np.linalg.cond(np.zeros((2, 2)) * a[0, 0], "fro"),
    "cond p=1": lambda a: np.linalg.cond(np.array([[1.0, 2.0], [2.0, 4.0]]) * a[0, 0], 1)}


@pytest.mark.parametrize("f", STATS_WARNINGS.values(), ids=STATS_WARNINGS.keys())
def test_cov_corrcoef_and_cond_warn_as_numpy(f):
    # NumPy's cov warns "Degrees of freedom <= 0 for slice" for no more
    # observations than ddof (then its 1/0 and 0*inf), corrcoef of a constant
    # row its 0/0; cond computes under errstate(all='ignore').  hop gave
    # none of the first two and warned for cond's 1/0 (hunt29 bug17)
    want = _run(lambda: f(_X23.copy()))
    assert _run(lambda: f(hnp.asarray(_X23.copy()))) == want
    cf = hop.compile(f)
    for _ in range(3):
        assert _run(lambda: cf(_X23.copy())) == want
