"""hop.numpy.fft: numpy.fft over hop's FFT ops (runtime/fft.c, FFTW).

NumPy 1.24's semantics: every transform computes in double precision
(float32 input gives complex128, as NumPy's pocketfft does), `n` pads with
zeros or truncates along `axis`, `norm` is "backward" (default), "ortho" or
"forward", the n-dimensional transforms run the 1-d one over the axes from
last to first, and errors are NumPy's ValueErrors.
"""

import builtins
import operator
import sys

import numpy as _np

from .. import _C
from . import _core, _direct
from . import _funcs as F
from . import _lib as L
from ._ndarray import ndarray, result_kind, wrap

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn",
           "rfft2", "irfft2", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _implements(np_fn):
    return F.implements(np_fn, public=False)


def _norm(norm, inverse):
    """The op's norm code (0: 1, 1: 1/sqrt(n), 2: 1/n) for NumPy's norm."""
    if norm is None or norm == "backward":
        return 2 if inverse else 0
    if norm == "ortho":
        return 1
    if norm == "forward":
        return 0 if inverse else 2
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _resize(t, n, axis):
    """t along axis truncated, or padded with zeros, to n elements."""
    have = t.shape[axis]
    if n == have:
        return t
    if n < have:
        return t.slice(axis, 0, n)
    shape = list(t.shape)
    shape[axis] = n - have
    return _C.cat([t, _C.zeros(tuple(shape), dtype=t.dtype)], axis)


def _length(t, n, axis, norm, inverse, default=None):
    """The transform's length n as NumPy 1.24's fft reads it, with its
    errors in its order: n None is a.shape[axis] (default(it) for
    irfft/hfft: an axis out of range is that IndexError), n < 1 or an
    unknown norm a ValueError, then the axis checked (AxisError); an n
    that is no integer works only at the axis's own size (else the TypeError
    of NumPy's slice or of its zeros' shape).  Returns (n, axis)."""
    if n is None:
        have = F._dim_at(t, axis)  # (NumPy's a.shape[axis])
        n = have if default is None else default(have)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    _norm(norm, inverse)
    if t.ndim == 0:
        raise _np.AxisError(axis, 0)
    axis = _np.core.multiarray.normalize_axis_index(axis, t.ndim)
    if not isinstance(n, (int, _C.SymInt)):
        try:
            n = operator.index(n)
        except TypeError:
            have = t.shape[axis]
            if n != have:
                raise TypeError("slice indices must be integers or None or have an __index__ "
                                "method" if have > n else
                                f"'{type(n).__name__}' object cannot be interpreted as an "
                                f"integer") from None
            n = have
    return n, axis


def _cast_line(last):
    """(module, line) where NumPy 1.24's rfft gives its ComplexWarning: the
    line of _raw_fft whose pocketfft call casts (the first of its two for
    the last axis), found in NumPy's source once; None without it."""
    global _CAST_LINES
    if _CAST_LINES is None:
        import inspect
        mod = sys.modules.get("numpy.fft._pocketfft")
        try:
            lines, first = inspect.getsourcelines(mod._raw_fft)
        except (AttributeError, OSError, TypeError):
            lines, first = [], 0
        calls = [first + i for i, text in enumerate(lines) if "pfi.execute(" in text]
        _CAST_LINES = (mod, calls) if len(calls) == 2 else ()
    if not _CAST_LINES:
        return None
    return _CAST_LINES[0], _CAST_LINES[1][0 if last else 1]


_CAST_LINES = None


def _prep(a, n, axis, what, norm, inverse, real_in=False):
    t = F._t(a, what)
    n, axis = _length(t, n, axis, norm, inverse)
    dt = _core.np_dtype(t)
    if real_in:
        if dt.kind == "c":  # NumPy's rfft discards the imaginary part (with a warning)
            _core.numpy_warns(f"{what} of complex values", "Casting complex values to real "
                              "discards the imaginary part", _np.ComplexWarning, replay=True,
                              at=_cast_line(axis % t.ndim == t.ndim - 1))
            t = _C._op("real", t)
        t = _core.cast(t, _np.dtype(_np.float64))
    else:
        t = _core.cast(t, _np.dtype(_np.complex128))
    return t, n, axis


def _c2c(a, n, axis, norm, inverse, what, kind):
    t, n, axis = _prep(a, n, axis, what, norm, inverse)
    t = _resize(t, n, axis)
    return wrap(kind, _C._op("fft", t, axis, inverse, _norm(norm, inverse)))


@_implements(_np.fft.fft)
def fft(a, n=None, axis=-1, norm=None, *, _kind=None):
    return _c2c(a, n, axis, norm, False, "fft", _kind or result_kind((a,), ndarray))


@_implements(_np.fft.ifft)
def ifft(a, n=None, axis=-1, norm=None, *, _kind=None):
    return _c2c(a, n, axis, norm, True, "ifft", _kind or result_kind((a,), ndarray))


@_implements(_np.fft.rfft)
def rfft(a, n=None, axis=-1, norm=None, *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    t, n, axis = _prep(a, n, axis, "rfft", norm, False, real_in=True)
    t = _resize(t, n, axis)
    return wrap(kind, _C._op("rfft", t, axis, _norm(norm, False)))


@_implements(_np.fft.irfft)
def irfft(a, n=None, axis=-1, norm=None, *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    t = F._t(a, "irfft")
    n, axis = _length(t, n, axis, norm, True, lambda m: (m - 1) * 2)
    t = _resize(_core.cast(t, _np.dtype(_np.complex128)), n // 2 + 1, axis)
    return wrap(kind, _C._op("irfft", t, axis, n, _norm(norm, True)))


@_implements(_np.fft.hfft)
def hfft(a, n=None, axis=-1, norm=None, *, _kind=None):
    # NumPy: irfft(conjugate(a), n, axis) with the swapped norm
    kind = _kind or result_kind((a,), ndarray)
    t = F._t(a, "hfft")
    if n is None:
        if not -t.ndim <= axis < t.ndim:
            raise IndexError("tuple index out of range")
        n = (t.shape[axis] - 1) * 2
    swapped = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
    if norm not in swapped:
        _norm(norm, False)
    c = _C._op("conj", _core.cast(t, _np.dtype(_np.complex128)))
    return irfft(ndarray(c), n, axis, swapped[norm], _kind=kind)


@_implements(_np.fft.ihfft)
def ihfft(a, n=None, axis=-1, norm=None, *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    swapped = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
    if norm not in swapped:
        _norm(norm, False)
    r = rfft(a, n, axis, swapped[norm], _kind=ndarray)._t
    return wrap(kind, _C._op("conj", r))


def _cook_nd_args(t, s=None, axes=None, invreal=False):
    if s is None:
        shapeless = True
        if axes is not None:  # (NumPy's take(a.shape, axes) and its IndexError)
            for ax in axes:
                if not -t.ndim <= ax < t.ndim:
                    raise IndexError(f"index {ax} is out of bounds for axis 0 with size "
                                     f"{t.ndim}")
        s = list(t.shape) if axes is None else [t.shape[ax] for ax in axes]
    else:
        shapeless = False
    s = list(s)
    if axes is None:
        axes = list(range(-len(s), 0))
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (t.shape[axes[-1]] - 1) * 2
    return s, list(axes)


def _raw_nd(a, s, axes, fn, norm, kind, what):
    t = F._t(a, what)
    s, axes = _cook_nd_args(t, s, axes)
    x = ndarray(t)
    for ii in reversed(range(len(axes))):
        x = fn(x, n=s[ii], axis=axes[ii], norm=norm, _kind=ndarray)
    return wrap(kind, x._t)


@_implements(_np.fft.fftn)
def fftn(a, s=None, axes=None, norm=None, *, _kind=None):
    return _raw_nd(a, s, axes, fft, norm, _kind or result_kind((a,), ndarray), "fftn")


@_implements(_np.fft.ifftn)
def ifftn(a, s=None, axes=None, norm=None, *, _kind=None):
    return _raw_nd(a, s, axes, ifft, norm, _kind or result_kind((a,), ndarray), "ifftn")


@_implements(_np.fft.fft2)
def fft2(a, s=None, axes=(-2, -1), norm=None, *, _kind=None):
    return _raw_nd(a, s, axes, fft, norm, _kind or result_kind((a,), ndarray), "fft2")


@_implements(_np.fft.ifft2)
def ifft2(a, s=None, axes=(-2, -1), norm=None, *, _kind=None):
    return _raw_nd(a, s, axes, ifft, norm, _kind or result_kind((a,), ndarray), "ifft2")


@_implements(_np.fft.rfftn)
def rfftn(a, s=None, axes=None, norm=None, *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    t = F._t(a, "rfftn")
    s, axes = _cook_nd_args(t, s, axes)
    x = rfft(ndarray(t), s[-1], axes[-1], norm, _kind=ndarray)
    for ii in range(len(axes) - 1):
        x = fft(x, s[ii], axes[ii], norm, _kind=ndarray)
    return wrap(kind, x._t)


@_implements(_np.fft.rfft2)
def rfft2(a, s=None, axes=(-2, -1), norm=None, *, _kind=None):
    return rfftn(a, s, axes, norm, _kind=_kind)


@_implements(_np.fft.irfftn)
def irfftn(a, s=None, axes=None, norm=None, *, _kind=None):
    kind = _kind or result_kind((a,), ndarray)
    t = F._t(a, "irfftn")
    s, axes = _cook_nd_args(t, s, axes, invreal=True)
    x = ndarray(t)
    for ii in range(len(axes) - 1):
        x = ifft(x, s[ii], axes[ii], norm, _kind=ndarray)
    x = irfft(x, s[-1], axes[-1], norm, _kind=ndarray)
    return wrap(kind, x._t)


@_implements(_np.fft.irfft2)
def irfft2(a, s=None, axes=(-2, -1), norm=None, *, _kind=None):
    return irfftn(a, s, axes, norm, _kind=_kind)


def _freq_ints(n, first):
    k = _C.arange(0, n, 1, dtype=_C.int64)
    return _C.where(_C.lt(k, first), k, k - n)


def _times_val(ints, val):
    """NumPy's `results * val` of the frequencies' int64 array: in float64
    (hop's int64 tensor times a Python float is float32)."""
    if isinstance(val, _np.generic):
        val = val.item()
    return _core.cast(ints, _np.dtype(_np.float64)) * val


@_implements(_np.fft.fftfreq)
def fftfreq(n, d=1.0, *, _kind=None):
    if not isinstance(n, (int, _np.integer, _C.SymInt)):
        raise ValueError("n should be an integer")
    r = _times_val(_freq_ints(n, (n - 1) // 2 + 1), 1.0 / (n * d))
    return wrap(_kind or ndarray, _core.cast(r, _np.dtype(_np.float64)))


@_implements(_np.fft.rfftfreq)
def rfftfreq(n, d=1.0, *, _kind=None):
    if not isinstance(n, (int, _np.integer, _C.SymInt)):
        raise ValueError("n should be an integer")
    r = _times_val(_C.arange(0, n // 2 + 1, 1, dtype=_C.int64), 1.0 / (n * d))
    return wrap(_kind or ndarray, _core.cast(r, _np.dtype(_np.float64)))


def _shift(x, axes, sign, kind, what):
    t = F._t(x, what)
    if axes is None:
        axes = tuple(range(t.ndim))
        shift = [sign * (dim // 2) for dim in t.shape]
    elif isinstance(axes, (int, _np.integer)):
        shift = sign * (t.shape[axes] // 2)
    else:
        shift = [sign * (t.shape[ax] // 2) for ax in axes]
    return L.roll(ndarray(t), shift, axes, _kind=kind)


@_implements(_np.fft.fftshift)
def fftshift(x, axes=None, *, _kind=None):
    return _shift(x, axes, 1, _kind or result_kind((x,), ndarray), "fftshift")


@_implements(_np.fft.ifftshift)
def ifftshift(x, axes=None, *, _kind=None):
    return _shift(x, axes, -1, _kind or result_kind((x,), ndarray), "ifftshift")


del builtins


_direct.install(globals(), __all__)  # the user's calls: see _direct
