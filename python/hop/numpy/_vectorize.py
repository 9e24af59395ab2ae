"""NumPy's vectorize on hop arrays, with NumPy 1.24's semantics.

hnp.vectorize is a subclass of np.vectorize (NumPy's constructor: pyfunc,
otypes, doc, excluded, cache, signature; its __call__, which handles
excluded and keyword arguments); only the call over the arguments
(_vectorize_call) is hop's:

  - no traced value among the arguments (eagerly): NumPy's own call, on
    the arrays' values, so pyfunc sees what NumPy gives it (a NumPy scalar
    on the first call that finds the output types, Python numbers after),
    its effects and errors are NumPy's; the result as hop.numpy arrays (a
    dtype hop lacks, object or str, stays NumPy's array);
  - traced arguments (hop.trace, hop.compile; numpy.vectorize's
    _vectorize_call is this module's while a trace runs, _creation): pyfunc
    is traced once per element kind with hop.vmap over the broadcast,
    flattened arguments.  NumPy calls pyfunc on Python numbers: hop gives it
    hop.numpy scalars of Python's dtypes (int64 for an integer array,
    float64 for a float one, complex128 for a complex one), so the
    arithmetic is Python's (a float32 array's elements are computed in
    double, then cast to the output type, as NumPy's object loop does).
    The output types are NumPy's: otypes, or pyfunc traced on the first
    elements as NumPy scalars of the arrays' own dtypes (NumPy's first call);
    with cache=True that call's outputs are the first element's.
    Differences a traced pyfunc cannot see: where a Python number raises
    and a NumPy scalar does not (x / 0.0 is ZeroDivisionError in NumPy's
    loop, inf in hop's), and Python ints beyond int64.
  - what hop cannot do that way is _breaks.conversion with an
    UnsupportedError saying why: a graph break of hop.compile (NumPy runs
    the statement on the real values, pyfunc's effects included, on every
    call), hop.trace's UnsupportedError: signature=, bool or uint64 or
    non-numeric arguments, output types hop lacks, a pyfunc that may
    print, and a pyfunc that does not trace under vmap (one that needs an
    element's value: float(x), math.sin(x), `if x > 0:`).
"""

import numpy as _np

from .. import _C, _breaks
from . import _core
from ._ndarray import ndarray, NumpyArg

__all__ = ["vectorize"]

_NUMPYS_CALL = _np.vectorize._vectorize_call

# the dtype of the Python number NumPy's object loop gives pyfunc for an
# element of an array of each kind (bool and uint64 are not among them:
# Python's bool arithmetic and ints beyond int64 have no hop dtype)
_PY_DTYPE = {"i": _np.dtype(_np.int64), "u": _np.dtype(_np.int64),
             "f": _np.dtype(_np.float64), "c": _np.dtype(_np.complex128)}


def _has_hop(v):
    if isinstance(v, (ndarray, _C.Tensor, _C.SymInt)):
        return True
    if isinstance(v, (list, tuple)):
        return any(_has_hop(x) for x in v)
    return False


def _traced(v):
    """Whether v holds a value known only when the plan runs."""
    if isinstance(v, _C.SymInt):
        return True
    if isinstance(v, ndarray):
        return not v._fixed()
    if isinstance(v, _C.Tensor):
        return _C._is_proxy(v)
    if isinstance(v, (list, tuple)):
        return any(_traced(x) for x in v)
    return False


def _as_hop(r, kind):
    """NumPy's result r (an ndarray or a tuple of them) as hop.numpy arrays
    of kind (an array of a dtype hop lacks stays NumPy's)."""
    if isinstance(r, tuple):
        return tuple(_as_hop(x, kind) for x in r)
    if type(r) is _np.ndarray and r.dtype in _core._HOP:
        return kind(_C.asarray(_np.array(r, order="C")))
    return r


class vectorize(_np.vectorize):
    __doc__ = _np.vectorize.__doc__

    def _vectorize_call(self, func, args):
        return vectorize_call(self, func, args, ndarray)


def _hops_path(args):
    """Whether hop traces the call: an argument is traced, or hop.compile's
    eager run that records the path of data-dependent branches
    (_paths.record_path) passes a hop.numpy array, where the trace's
    decisions (pyfunc's first call, the break of a pyfunc vmap cannot
    trace) must be met alike."""
    return _traced(args) or _core._recording() and _has_hop(args)


def traced_vectorize_call(self, func, args):
    """numpy.vectorize._vectorize_call while a trace runs: hop's for traced
    arguments (results as NumPy code's arrays), else NumPy's."""
    if not _hops_path(args):
        return _NUMPYS_CALL(self, func, args)
    return vectorize_call(self, func, args, NumpyArg)


def vectorize_call(self, func, args, kind):
    """The vectorized call of func (pyfunc with the excluded and keyword
    arguments bound by NumPy's __call__) over the positional args."""
    if not _hops_path(args):
        r = _NUMPYS_CALL(self, func, args)
        return _as_hop(r, kind) if _has_hop(args) or kind is ndarray else r
    why = _refusal(self, args)
    if why is not None:
        return _fallback(why)
    return _traced_call(self, func, args, kind)


def _fallback(why):
    _breaks.conversion(_C.UnsupportedError, f"hop.numpy: numpy.vectorize {why}")


def _refusal(self, args):
    """Why hop cannot trace this call with vmap, or None."""
    from .._purity import _print_site
    if self.signature is not None:
        return "with signature= over traced arrays is not supported"
    where = _print_site(self.pyfunc)
    if where is not None:
        return (f"of a function that may call print() ({where}): a plan would print once, "
                f"where NumPy prints for every element on every call")
    return None


_WRAPPER_CELLS = ("inds", "kwargs", "names", "self", "the_args")


def _pure(func):
    """func without effects: NumPy's __call__ binds the excluded and keyword
    arguments with a wrapper that writes a list and a dict it holds (which
    hop.vmap's purity check refuses); the same call, on copies."""
    code = getattr(func, "__code__", None)
    if code is None or code.co_freevars != _WRAPPER_CELLS or \
            code.co_filename != _np.vectorize.__call__.__code__.co_filename:
        return func
    cells = dict(zip(code.co_freevars, (c.cell_contents for c in func.__closure__)))
    inds, names, me = cells["inds"], cells["names"], cells["self"]
    the_args, kwargs = list(cells["the_args"]), dict(cells["kwargs"])

    def pure(*vargs):
        a, kw = list(the_args), dict(kwargs)
        for n, i in enumerate(inds):
            a[i] = vargs[n]
        kw.update(zip(names, vargs[len(inds):]))
        return me.pyfunc(*a, **kw)
    return pure


def _traced_call(self, func, args, kind):
    from .._vmap import vmap
    from ._funcs import array, _t
    from ._lib import broadcast_shapes
    func = _pure(func)
    arrs = [array(a, copy=False) for a in args]
    for a in arrs:
        if a.dtype.kind not in _PY_DTYPE or a.dtype == _np.uint64:
            return _fallback(f"of a {a.dtype} array: NumPy gives pyfunc Python "
                             f"{'bools' if a.dtype.kind == 'b' else 'objects'}, whose "
                             f"arithmetic no hop dtype has")
        if not all(isinstance(n, int) for n in a.shape):
            return _fallback("over an array of symbolic size")
    shape = tuple(broadcast_shapes(*(a.shape for a in arrs)))
    first = None
    if self.otypes is not None:
        otypes = self.otypes
    else:
        if any(a.size == 0 for a in arrs):
            raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
        # NumPy's first call: the first element of each argument as a NumPy
        # scalar of its dtype; checked as a HOP body is (a pyfunc that
        # changes state outside itself has it put back, and NumPy's call
        # runs it on every call)
        from .._purity import run_pure
        try:
            first = run_pure("numpy.vectorize", "function", func,
                             tuple(kind(a._t.reshape(-1).select(0, 0), scalar=True)
                                   for a in arrs))
        except Exception as e:  # noqa: BLE001 (NumPy's own call decides: a break)
            return _fallback(f"of a function hop cannot trace ({type(e).__name__}: {e})")
        outs = first if isinstance(first, tuple) else (first,)
        otypes = "".join(_np.dtype(o.dtype if isinstance(o, ndarray) else
                                   _np.asarray(o).dtype).char for o in outs)
        first = outs
    dts = [_np.dtype(c) for c in otypes]
    if any(d not in _core._HOP for d in dts):
        return _fallback(f"with output types {otypes!r}, which hop lacks")
    n = 1
    for d in shape:
        n *= d
    if n == 0:
        res = [_C.zeros(shape, dtype=_core.hop_dtype(d, "vectorize")) for d in dts]
    else:
        flats = [_core.cast((a._t.expand(*shape) if shape else a._t).reshape(-1),
                            _PY_DTYPE[a.dtype.kind]) for a in arrs]
        nout = len(dts)

        def body(*ts):
            out = func(*(ndarray(t, scalar=True) for t in ts))
            outs = out if nout > 1 else (out,)
            if not isinstance(outs, tuple) or len(outs) != nout:
                raise ValueError("pyfunc returned a number of outputs other than otypes'")
            got = [_t(o, "vectorize") for o in outs]
            if any(g.ndim != 0 for g in got):
                raise ValueError("pyfunc returned an array, not a number")
            for g, d in zip(got, dts):
                k = _core.np_dtype(g).kind
                if k == "c" and d.kind != "c" or k == "f" and d.kind in "iu":
                    # NumPy converts each Python complex (float) with
                    # float() or int(): a TypeError (NaN's ValueError)
                    raise TypeError(f"pyfunc gives {_core.np_dtype(g)}, whose Python numbers "
                                    f"NumPy converts to {d} one by one")
            return tuple(_core.cast(g, d) for g, d in zip(got, dts))
        try:
            res = list(vmap(body)(*flats))
        except _breaks.GraphBreak:
            raise
        except Exception as e:  # noqa: BLE001 (NumPy's own call decides: a break)
            return _fallback(f"of a function hop cannot trace with hop.vmap ({type(e).__name__}: "
                             f"{e})")
        if first is not None and self.cache:
            # NumPy's cache: the first call's outputs are the first element's
            res = [_C.cat([_core.cast(_t(f, "vectorize"), d).reshape(1),
                           r.slice(0, 1, n, 1)], 0) for f, d, r in zip(first, dts, res)]
        res = [r.reshape(shape) for r in res]
    out = tuple(kind(r) for r in res)
    return out if len(out) > 1 else out[0]
