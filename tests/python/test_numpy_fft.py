"""hop.numpy.fft against numpy.fft (issue #29): each call run by NumPy and
by hop.compile (numpy_diff.check: values, dtype, shape, the exception's
type), with n, axis, axes, s and norm; real, int, bool and complex inputs
(NumPy 1.24 computes every FFT in double precision: complex128 results);
gradients through the FFTs against central differences; a hypothesis
campaign over lengths, axes and norms."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hop
import hop.numpy as hnp
from budget import examples
from numpy_diff import check

F = np.fft
RNG = np.random.default_rng(0)
X = RNG.standard_normal(8)
X7 = RNG.standard_normal(7)
M = RNG.standard_normal((4, 6))
M3 = RNG.standard_normal((2, 3, 4))
Z = X + 1j * RNG.standard_normal(8)

CASES = {
    "fft": (lambda a: F.fft(a), X), "fft_odd": (lambda a: F.fft(a), X7),
    "fft_complex": (lambda a: F.fft(a), Z),
    "fft_float32_gives_complex128": (lambda a: F.fft(a), X.astype(np.float32)),
    "fft_complex64_gives_complex128": (lambda a: F.fft(a), Z.astype(np.complex64)),
    "fft_int": (lambda a: F.fft(a), np.arange(6)),
    "fft_bool": (lambda a: F.fft(a), np.array([True, False, True])),
    "fft_n_crops": (lambda a: F.fft(a, 5), X), "fft_n_pads": (lambda a: F.fft(a, 12), X),
    "fft_ortho": (lambda a: F.fft(a, norm="ortho"), X),
    "fft_forward": (lambda a: F.fft(a, norm="forward"), X),
    "fft_axis_0": (lambda a: F.fft(a, axis=0), M),
    "ifft": (lambda a: F.ifft(a), Z), "ifft_ortho": (lambda a: F.ifft(a, norm="ortho"), Z),
    "rfft": (lambda a: F.rfft(a), X), "rfft_odd": (lambda a: F.rfft(a), X7),
    "irfft": (lambda a: F.irfft(a), F.rfft(X)), "irfft_odd_n": (lambda a: F.irfft(a, 7), F.rfft(X7)),
    "hfft": (lambda a: F.hfft(a), Z[:5]), "ihfft": (lambda a: F.ihfft(a), X),
    "fft2": (lambda a: F.fft2(a), M), "ifft2": (lambda a: F.ifft2(a), M),
    "fftn": (lambda a: F.fftn(a), M3), "ifftn_axes": (lambda a: F.ifftn(a, axes=(0, 2)), M3),
    "fftn_s": (lambda a: F.fftn(a, s=(3, 5), axes=(1, 2)), M3),
    "rfftn": (lambda a: F.rfftn(a), M3), "rfft2": (lambda a: F.rfft2(a), M),
    "irfftn": (lambda a: F.irfftn(a, M3.shape), F.rfftn(M3)),
    "irfft2": (lambda a: F.irfft2(a), F.rfft2(M)),
    "fftfreq": (lambda: F.fftfreq(8, 0.1),), "fftfreq_odd": (lambda: F.fftfreq(7),),
    "rfftfreq": (lambda: F.rfftfreq(9, 2.0),),
    "fftshift": (lambda a: F.fftshift(a), M), "ifftshift_axis": (lambda a: F.ifftshift(a, axes=0), M),
    "fft_empty_axis_is_numpys_error": (lambda a: F.fft(a), np.zeros(0)),
    "fft_n_0_is_numpys_error": (lambda a: F.fft(a, 0), X),
    "fft_bad_norm": (lambda a: F.fft(a, norm="x"), X),
    "fft_bad_axis": (lambda a: F.fft(a, axis=3), X),
    "convolution_via_rfft": (lambda a, b: F.irfft(F.rfft(a, 16) * F.rfft(b, 16), 16)[:12], X, X7[:5]),
    "convolution_2d_via_rfft2": (lambda a, k: F.irfft2(F.rfft2(a, (8, 8)) * F.rfft2(k, (8, 8)),
                                                       (8, 8)), M, np.ones((3, 3))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fft_matches_numpy(name):
    fn, *args = CASES[name]
    check(fn, *args, rtol=1e-9)


def test_convolution_via_fft_is_numpys_convolve():
    a, b = RNG.standard_normal(10), RNG.standard_normal(4)
    got = hop.compile(lambda x, y: F.irfft(F.rfft(x, 16) * F.rfft(y, 16), 16)[:13])(a, b)
    np.testing.assert_allclose(got, np.convolve(a, b), rtol=1e-12, atol=1e-12)


def test_fft_traces_to_fft_ops():
    f = hop.compile(lambda a: (F.fft(a), F.rfft(a), F.irfft(F.rfft(a))))
    f(X)
    code = f.graphs[0].code
    assert "= fft(" in code and "= rfft(" in code and "= irfft(" in code, code


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (float(f(hop.tensor(x + d))) - float(f(hop.tensor(x - d)))) / (2 * eps)
    return g


W = hnp.arange(1.0, 9.0)
GRADS = {
    "fft_abs": lambda t: hnp.abs(hnp.fft.fft(t)).sum(),
    "fft_real_weighted": lambda t: (hnp.real(hnp.fft.fft(t, norm="ortho")) * W).sum(),
    "ifft_imag": lambda t: (hnp.imag(hnp.fft.ifft(t)) * W).sum(),
    "rfft_abs2": lambda t: (hnp.abs(hnp.fft.rfft(t)) ** 2 * hnp.arange(1.0, 6.0)).sum(),
    "irfft_roundtrip": lambda t: (hnp.fft.irfft(hnp.fft.rfft(t) * hnp.arange(1.0, 6.0)) * W).sum(),
    "fft_padded": lambda t: hnp.abs(hnp.fft.fft(t, 11)).sum(),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_fft_gradients_match_central_differences(name):
    x = np.random.default_rng(3).standard_normal(8)
    f = GRADS[name]
    g = hop.grad(f)(hop.tensor(x))
    np.testing.assert_allclose(np.asarray(g.numpy()), _fd(f, x), rtol=1e-5, atol=1e-6)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       op=st.sampled_from(["fft", "ifft", "rfft", "irfft", "fftn", "rfftn", "fftshift"]),
       n=st.one_of(st.none(), st.integers(1, 9)),
       norm=st.sampled_from([None, "backward", "ortho", "forward"]),
       cplx=st.booleans(), seed=st.integers(0, 2**16), data=st.data())
def test_random_ffts_match_numpy(shape, op, n, norm, cplx, seed, data):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if cplx and op not in ("rfft", "rfftn"):
        a = a + 1j * rng.standard_normal(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    fns = {"fft": lambda x: F.fft(x, n, axis, norm), "ifft": lambda x: F.ifft(x, n, axis, norm),
           "rfft": lambda x: F.rfft(x, n, axis, norm),
           "irfft": lambda x: F.irfft(x, n, axis, norm),
           "fftn": lambda x: F.fftn(x, None, None, norm),
           "rfftn": lambda x: F.rfftn(x, None, None, norm),
           "fftshift": lambda x: F.fftshift(x, axis)}
    check(fns[op], a, rtol=1e-9)


def test_an_array_the_trace_made_with_numpy_is_new_on_every_call():
    f = hop.compile(lambda: F.fftfreq(4))
    first = f()
    first[0] = 100.0  # eagerly every call returns a new array
    np.testing.assert_array_equal(f(), F.fftfreq(4))
    g = np.arange(3.0)
    h = hop.compile(lambda x: (x + 1, g))  # an array the function reads is that array
    assert h(np.ones(2))[1] is g


@pytest.mark.parametrize("fn", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("args", [(7, 0.5), (7, 2), (3,), (8, np.float32(0.3)), (5, 0.1), (1,)],
                         ids=repr)
def test_sample_frequencies_are_numpys_float64_bits(fn, args):
    # NumPy multiplies its int array by 1 / (n * d) in float64; eagerly hop
    # multiplied the int64 tensor by a Python float, a float32 product
    want = getattr(F, fn)(*args)
    eager = getattr(hnp.fft, fn)(*args)
    assert type(eager) is hnp.ndarray and eager.dtype == np.float64
    assert np.asarray(eager).tobytes() == want.tobytes()
    dispatched = getattr(F, fn)(hnp.asarray(np.zeros(args[0])).shape[0], *args[1:])
    assert np.asarray(dispatched).tobytes() == want.tobytes()
    got = hop.compile(lambda x: getattr(F, fn)(x.shape[0], *args[1:]))(np.zeros(args[0]))
    assert type(got) is np.ndarray and got.dtype == np.float64
    assert got.tobytes() == want.tobytes()
