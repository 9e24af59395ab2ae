"""hop.numpy's functions as the user's code calls them.

Eagerly, a NumPy array handed to a hop.numpy function is an np.ndarray, and
what comes back is hop.numpy's: `hnp.sum(x)` is a 0-d hop.numpy array,
`hnp.asarray(x)` a hop.numpy array over x's memory, `hnp.linalg.norm(a)` a
0-d hop.numpy array.  Under hop.trace and hop.compile the function's NumPy
array arguments are NumpyArgs, which keep NumPy's semantics for NumPy's own
functions (`np.sum(x)` reaches hop.numpy through __array_function__ with the
NumpyArg kind, and is a NumPy scalar, as eagerly).  A direct call of a
hop.numpy function from the user's code must answer as eager's does, so it
sees each NumpyArg as a hop.numpy array over the same storage (a view:
writes through it reach the argument, and read-only stays read-only), as
eager's call sees the np.ndarray.

Calls from hop.numpy's own modules pass through as they are: its
implementations call each other with the kind they mean (a NumpyArg
operand of np.linalg.cond's own svd keeps NumPy's kind).  hop's other
modules call them for the user's code (hop.compile's frame translator makes
the user's calls from its own frames), so those calls are converted."""

import functools
import sys

from ._ndarray import NumpyArg, ndarray, view
from ._storage import Step


def _has_numpy_arg(values):
    for v in values:
        if type(v) is NumpyArg:
            return True
        if isinstance(v, (list, tuple)) and _has_numpy_arg(v):
            return True
    return False


_SAME = Step(lambda x: x, lambda x: x.view())


def _as_array(v):
    """v as eager's call would see it: a NumpyArg a hop.numpy array over its
    storage; lists and tuples of them item by item."""
    if type(v) is NumpyArg:
        return view(ndarray, v, _SAME, scalar=v._scalar, t=v._t)
    if isinstance(v, (list, tuple)) and _has_numpy_arg(v):
        items = [_as_array(x) for x in v]
        return items if type(v) is list else tuple(items) if type(v) is tuple else \
            type(v)(*items)  # (a namedtuple)
    return v


def _from_hop_numpy(frame):
    """Whether frame is hop.numpy's own code.  hop's other modules call these
    functions for the user's code (hop.compile's frame translator runs the
    user's call `hnp.where(...)` from its own frame), so they do not count."""
    name = frame.f_globals.get("__name__", "")
    return name == "hop.numpy" or name.startswith("hop.numpy.")


def as_called(fn):
    """fn as hop.numpy.<name> (or hop.numpy.linalg's, .fft's): its NumPy
    array arguments seen as hop.numpy arrays when the user's code calls it
    under a trace (the module's text, above)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if (_has_numpy_arg(args) or _has_numpy_arg(kwargs.values())) and \
                not _from_hop_numpy(sys._getframe(1)):
            args = tuple(_as_array(a) for a in args)
            kwargs = {k: _as_array(v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)
    call.__wrapped_by_hop__ = fn
    return call


def install(namespace, names):
    """Replaces each function of namespace (a module's globals) named in
    names by as_called's wrapper of it."""
    for name in names:
        fn = namespace.get(name)
        if callable(fn) and not isinstance(fn, type) and \
                getattr(fn, "__wrapped_by_hop__", None) is None:
            namespace[name] = as_called(fn)
