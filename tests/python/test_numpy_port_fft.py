"""Ported from PyTorch's test/torch_np/numpy_tests/fft/test_pocketfft.py and
test_helper.py (issue #29): each torch test's NumPy calls run by NumPy, eagerly by hop.numpy and
by hop.compile (numpy_diff.check), so every identity torch asserts holds
in hop's results as it does in NumPy's.  Left out: the thread-safety class
(16 threads calling one function: hop.compile's thread safety is
test_trust_*'s), Fortran-order inputs (torch skips them too); the 1..511
round trips of test_identity run at 40 lengths (primes, powers of two and
others) to keep the file's time in seconds."""

import functools

import numpy as np
import pytest

from numpy_diff import ported
import numpy_diff

# each case by NumPy, by eager hop.numpy (every ndarray argument through
# hop.numpy.asarray) and compiled (the forty-eighth session)
check = functools.partial(numpy_diff.check, eager=True)
raises = functools.partial(numpy_diff.raises, eager=True)

SRC = "numpy_tests/fft/test_pocketfft.py"
F = np.fft
NORMS = [None, "backward", "ortho", "forward"]


def port(test, src=SRC):
    return ported(src, test)


def rand(*shape, seed=123456):
    return np.random.default_rng(seed).random(shape)


def crand(*shape, seed=123456):
    rng = np.random.default_rng(seed)
    return rng.random(shape) + 1j * rng.random(shape)


def dft(x):
    """The DFT by its definition, in NumPy operations."""
    n = len(x)
    k = np.arange(n)
    return np.sum(x * np.exp(-2j * np.pi * k.reshape(-1, 1) * k / n), axis=1)


@port("TestFFTShift.test_fft_n")
def test_fft_n_zero_is_an_error():
    raises(ValueError, lambda x: F.fft(x, 0), np.array([1, 2, 3]))


@port("TestFFT1D.test_identity")
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 31, 32, 33, 64, 97, 100,
                               127, 128, 255, 256, 257, 300, 509, 511])
def test_identity(n):
    check(lambda x, xr: (F.ifft(F.fft(x)), F.irfft(F.rfft(xr), n)), crand(n), rand(n), rtol=1e-9)


@port("TestFFT1D.test_fft")
def test_fft_is_the_dft_with_every_norm():
    check(lambda x: [dft(x), F.fft(x), F.fft(x, norm="backward"), F.fft(x, norm="ortho"),
                     F.fft(x, norm="forward"), dft(x) / np.sqrt(30), dft(x) / 30.0],
          crand(30, seed=1234), rtol=1e-9)


@port("TestFFT1D.test_ifft")
@pytest.mark.parametrize("norm", NORMS)
def test_ifft(norm):
    check(lambda x: F.ifft(F.fft(x, norm=norm), norm=norm), crand(30), rtol=1e-9)
    raises(ValueError, lambda x: F.ifft(x, norm=norm), np.array([], dtype=complex))


@port("TestFFT1D.test_fft2")
def test_fft2():
    check(lambda x: [F.fft(F.fft(x, axis=1), axis=0), F.fft2(x), F.fft2(x, norm="backward"),
                     F.fft2(x, norm="ortho"), F.fft2(x, norm="forward")], crand(30, 20),
          rtol=1e-9)


@port("TestFFT1D.test_ifft2")
def test_ifft2():
    check(lambda x: [F.ifft(F.ifft(x, axis=1), axis=0), F.ifft2(x), F.ifft2(x, norm="backward"),
                     F.ifft2(x, norm="ortho"), F.ifft2(x, norm="forward")], crand(30, 20),
          rtol=1e-9)


@port("TestFFT1D.test_fftn")
def test_fftn():
    check(lambda x: [F.fft(F.fft(F.fft(x, axis=2), axis=1), axis=0), F.fftn(x),
                     F.fftn(x, norm="backward"), F.fftn(x, norm="ortho"),
                     F.fftn(x, norm="forward")], crand(30, 20, 10), rtol=1e-9)


@port("TestFFT1D.test_ifftn")
def test_ifftn():
    check(lambda x: [F.ifft(F.ifft(F.ifft(x, axis=2), axis=1), axis=0), F.ifftn(x),
                     F.ifftn(x, norm="backward"), F.ifftn(x, norm="ortho"),
                     F.ifftn(x, norm="forward")], crand(30, 20, 10), rtol=1e-9)


@port("TestFFT1D.test_rfft")
def test_rfft():
    def f(x):
        out = []
        for n in (30, 60):
            for norm in NORMS:
                out += [F.fft(x, n=n, norm=norm)[: n // 2 + 1], F.rfft(x, n=n, norm=norm)]
        return out
    check(f, rand(30), rtol=1e-9)


@port("TestFFT1D.test_irfft")
def test_irfft():
    check(lambda x: [F.irfft(F.rfft(x, norm=norm), norm=norm) for norm in NORMS], rand(30),
          rtol=1e-9)


@port("TestFFT1D.test_rfft2")
def test_rfft2():
    check(lambda x: [F.fft2(x)[:, :11], F.rfft2(x)] + [F.rfft2(x, norm=n) for n in NORMS],
          rand(30, 20), rtol=1e-9)


@port("TestFFT1D.test_irfft2")
def test_irfft2():
    check(lambda x: [F.irfft2(F.rfft2(x, norm=n), norm=n) for n in NORMS], rand(30, 20),
          rtol=1e-9)


@port("TestFFT1D.test_rfftn")
def test_rfftn():
    check(lambda x: [F.fftn(x)[:, :, :6], F.rfftn(x)] + [F.rfftn(x, norm=n) for n in NORMS],
          rand(30, 20, 10), rtol=1e-9)


@port("TestFFT1D.test_irfftn")
def test_irfftn():
    check(lambda x: [F.irfftn(F.rfftn(x, norm=n), norm=n) for n in NORMS], rand(30, 20, 10),
          rtol=1e-9)


def hermitian():
    x = crand(14)
    x_herm = np.concatenate((rand(1, seed=1), x, rand(1, seed=2)))
    return x_herm, np.concatenate((x_herm, np.flip(x).conj()))


@port("TestFFT1D.test_hfft")
def test_hfft():
    check(lambda h, x: [F.fft(x), F.hfft(h)] + [F.hfft(h, norm=n) for n in NORMS], *hermitian(),
          rtol=1e-9)


@port("TestFFT1D.test_ihfft")
def test_ihfft():
    check(lambda h: [F.ihfft(F.hfft(h, norm=n), norm=n) for n in NORMS], hermitian()[0],
          rtol=1e-9)


@port("TestFFT1D.test_axes")
@pytest.mark.parametrize("op", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_axes(op):
    fn = getattr(F, op)
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    check(lambda x: [(fn(np.transpose(x, a)), np.transpose(fn(x, axes=a), a)) for a in perms],
          rand(30, 20, 10), rtol=1e-9)


@port("TestFFT1D.test_all_1d_norm_preserving")
def test_all_1d_norm_preserving():
    def f(x):
        out = [np.linalg.norm(x)]
        for forw, back in ((F.fft, F.ifft), (F.rfft, F.irfft), (F.ihfft, F.hfft)):
            for n in (30, 60):
                for norm in NORMS:
                    out.append(np.linalg.norm(back(forw(x, n=n, norm=norm), n=n, norm=norm)))
        return out
    check(f, rand(30), rtol=1e-9)


@port("TestFFT1D.test_dtypes")
@pytest.mark.parametrize("dtype", [np.half, np.single, np.double])
def test_dtypes(dtype):
    check(lambda x: (F.ifft(F.fft(x)), F.irfft(F.rfft(x))), rand(30).astype(dtype), rtol=1e-9)


@port("TestFFT1D.test_fft_with_order")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("fn", ["fft", "fft2", "fftn", "ifft", "ifft2", "ifftn"])
def test_fft_of_a_strided_array(dtype, fn):
    op = getattr(F, fn)
    z = np.zeros((16, 7, 13), dtype=dtype)
    z[::2] = rand(8, 7, 13).astype(dtype)
    y = z[::2]  # not contiguous
    if fn.endswith("fft"):
        calls = [{"axis": a} for a in range(3)]
    else:
        axes = [(0, 1), (1, 2), (0, 2)] + ([(0,), (1,), (2,), None] if fn.endswith("n") else [])
        calls = [{"axes": a} for a in axes]
    check(lambda a, b: [(op(a, **kw), op(b, **kw)) for kw in calls], y.copy(), y, rtol=1e-9)


HELPER = "numpy_tests/fft/test_helper.py"


@port("TestFFTShift.test_definition", HELPER)
def test_fftshift_definition():
    check(lambda x, y: (F.fftshift(x), F.ifftshift(y), F.fftshift(y), F.ifftshift(x)),
          np.array([0, 1, 2, 3, 4, -4, -3, -2, -1]), np.array([-4, -3, -2, -1, 0, 1, 2, 3, 4]))
    check(lambda x: (F.fftshift(x), F.ifftshift(x)), np.array([0, 1, 2, 3, 4, -5, -4, -3, -2, -1]))


@port("TestFFTShift.test_inverse", HELPER)
@pytest.mark.parametrize("n", [1, 4, 9, 100, 211])
def test_fftshift_inverse(n):
    check(lambda x: F.ifftshift(F.fftshift(x)), rand(n))


@port("TestFFTShift.test_axes_keyword", HELPER)
def test_fftshift_axes_keyword():
    check(lambda f: (F.fftshift(f, axes=(0, 1)), F.fftshift(f, axes=0), F.ifftshift(f, axes=0),
                     F.fftshift(f), F.ifftshift(f, axes=(0, 1)), F.ifftshift(f)),
          np.array([[0, 1, 2], [3, 4, -4], [-3, -2, -1]]))


@port("TestFFTShift.test_uneven_dims", HELPER)
def test_fftshift_uneven_dims():
    check(lambda x: [F.fftshift(x, axes=a) for a in (0, 1, (0, 1), (1, 0))] +
          [F.ifftshift(x, axes=a) for a in (0, 1, (0, 1), (1, 0))],
          np.array([[1, 2], [3, 4], [5, 6]]))


@port("TestFFTFreq.test_definition", HELPER)
def test_fftfreq_definition():
    check(lambda: (9 * F.fftfreq(9), 9 * np.pi * F.fftfreq(9, np.pi), 10 * F.fftfreq(10),
                   10 * np.pi * F.fftfreq(10, np.pi)))


@port("TestRFFTFreq.test_definition", HELPER)
def test_rfftfreq_definition():
    check(lambda: (9 * F.rfftfreq(9), 9 * np.pi * F.rfftfreq(9, np.pi), 10 * F.rfftfreq(10),
                   10 * np.pi * F.rfftfreq(10, np.pi)))


def _shift_by_take(x, axes, inverse):
    """fftshift as NumPy 1.14 wrote it: a take of each axis's rotated range."""
    axes = list(range(x.ndim)) if axes is None else [axes] if isinstance(axes, int) else axes
    for k in axes:
        n = x.shape[k]
        p2 = n - (n + 1) // 2 if inverse else (n + 1) // 2
        x = np.take(x, np.concatenate((np.arange(p2, n), np.arange(p2))), k)
    return x


@port("TestFFTShift.test_equal_to_original", HELPER)
@pytest.mark.parametrize("i", [0, 1, 2, 5, 8, 15])
def test_fftshift_equals_the_take_formulation(i):
    for j in (0, 1, 4, 7, 15):
        check(lambda x: [(F.fftshift(x, a), _shift_by_take(x, a, False),
                          F.ifftshift(x, a), _shift_by_take(x, a, True))
                         for a in (0, 1, None, (0,), (0, 1))], rand(i, j))


@port("TestIRFFTN.test_not_last_axis_success", HELPER)
def test_irfftn_not_last_axis():
    check(lambda a: F.irfftn(a, axes=(-2,)), crand(16, 8, 32), rtol=1e-9)
