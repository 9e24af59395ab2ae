"""The NumPy-fidelity tests' one check (test_numpy_fidelity_s38.py,
test_numpy_fidelity_s39.py): a function of NumPy arrays run by NumPy, by
hop.compile and eagerly on hop.numpy arrays, compared by outcome: the
result's (or each tuple item's) type, dtype, shape and bits, or the
exception's type and text; the warnings' texts; the array arguments' bytes
after the call."""

import warnings

import numpy as np

import hop
import hop.numpy as hnp


def _np_of(r):
    """A hop.numpy result as NumPy's: an ndarray, or a NumPy scalar where
    the hop array is one."""
    if isinstance(r, hnp.ndarray):
        a = np.array(np.asarray(r))
        return a[()] if r._scalar else a
    return r


def _one(r):
    a = np.asarray(r)
    return (type(r).__name__, a.dtype, a.shape, np.ascontiguousarray(a).tobytes())


def _outcome(fn, args, state):
    """What fn(*args) does under numpy.errstate(all=state): the result's
    (or each tuple item's) type, dtype, shape and bytes, or the exception's
    type and text; the warnings' texts; the array arguments' bytes after."""
    with warnings.catch_warnings(record=True) as w, np.errstate(all=state):
        warnings.simplefilter("always")
        try:
            r = fn(*args)
            if isinstance(r, tuple):
                got = ("ok", tuple(_one(_np_of(x)) for x in r))
            else:
                got = ("ok", _one(_np_of(r)))
        except Exception as e:  # noqa: BLE001 (compared)
            got = ("raised", type(e).__name__, str(e))
    after = [np.asarray(x).dtype.str + repr(np.asarray(x).tobytes())
             for x in args if isinstance(x, (np.ndarray, hnp.ndarray))]
    return got, sorted(str(x.message) for x in w if "hop.compile" not in str(x.message)), after


def _copies(args, eager=False):
    return [(hnp.asarray(a.copy()) if eager else a.copy()) if isinstance(a, np.ndarray) else a
            for a in args]


def check_all_ways(fn, *args, state="ignore", direct=None):
    """fn(*args) by NumPy, by hop.compile(fn), and eagerly on hop.numpy
    arrays (fn itself, and direct, hop.numpy's own function): the same
    outcome (_outcome)."""
    want = _outcome(fn, _copies(args), state)
    got = _outcome(hop.compile(fn), _copies(args), state)
    assert got == want, ("compiled", got, want)
    assert _outcome(fn, _copies(args, eager=True), state) == want, "eager"
    if direct is not None:
        assert _outcome(direct, _copies(args, eager=True), state) == want, "eager hop.numpy"
    return want
