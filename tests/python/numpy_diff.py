"""The differential harness of the tests ported from PyTorch's
test/torch_np (issue #29): a NumPy program runs by NumPy and compiled by
hop.compile, on copies of the same arguments, and the two must agree on
the result (values, dtype, shape, ndarray or NumPy scalar or Python value,
structure), on the arguments after the call (in-place updates) and on the
type of an exception.

`ported(source, test)` records which torch test a case ports;
`ported_counts()` reports them per source file (docs/ARCHITECTURE.md gives
the totals)."""

import warnings

import numpy as np

import hop
import hop.numpy  # noqa: F401 (NumPy's creation functions in traced code make hop arrays)

_PORTED = set()


def ported(source, test):
    """Marks a pytest function as the port of torch's `source`::`test`."""
    def deco(fn):
        _PORTED.add((source, test))
        fn.ported_from = (source, test)
        return fn
    return deco


def assert_numpys_bits_and_warnings(np_fn, hop_fn, x, name):
    """hop_fn(x) has np_fn(x)'s bits (every NaN payload and sign) and raises
    the same floating-point warnings, once each."""
    with warnings.catch_warnings(record=True) as wn:
        warnings.simplefilter("always")
        want = np.asarray(np_fn(x))
    with warnings.catch_warnings(record=True) as wh:
        warnings.simplefilter("always")
        got = np.asarray(hop_fn(x))
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    as_int = "u%d" % want.dtype.itemsize
    assert np.array_equal(got.view(as_int), want.view(as_int)), name
    assert sorted(str(w.message) for w in wh) == sorted(str(w.message) for w in wn), name


def ported_counts():
    out = {}
    for source, _ in _PORTED:
        out[source] = out.get(source, 0) + 1
    return out


def copied(a):
    """a with every ndarray in it (lists and tuples item by item) a copy."""
    if isinstance(a, np.ndarray):
        return a.copy()
    if isinstance(a, list):
        return [copied(x) for x in a]
    if isinstance(a, tuple):
        return tuple(copied(x) for x in a)
    return a


def quiet_call(fn, args):
    """(fn(*args), None) or (None, the exception it raised), with every
    warning and floating-point error state silenced."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args), None
        except Exception as e:  # noqa: BLE001 (compared)
            return None, e


def as_numpy(r):
    """A hop.numpy result as NumPy's: an ndarray, or a NumPy scalar where
    the hop array is one (lists and tuples item by item)."""
    if isinstance(r, tuple):
        return tuple(as_numpy(x) for x in r)
    if isinstance(r, list):
        return [as_numpy(x) for x in r]
    if isinstance(r, hop.numpy.ndarray):
        a = np.array(np.asarray(r))
        return a[()] if r._scalar else a
    return r


def same(got, want, rtol=None, path="result"):
    """got is what want is: the same structure, types, dtypes, shapes and
    values (floats within rtol, default a few ulps; nan equals nan)."""
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want), f"{path}: {type(got).__name__} vs {type(want).__name__}"
        assert len(got) == len(want), f"{path}: length {len(got)} vs {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, rtol, f"{path}[{i}]")
        return
    if isinstance(want, dict):
        assert type(got) is dict and got.keys() == want.keys(), path
        for k in want:
            same(got[k], want[k], rtol, f"{path}[{k!r}]")
        return
    if isinstance(want, (np.ndarray, np.generic)):
        assert type(got) is type(want), f"{path}: {type(got).__name__} vs {type(want).__name__}"
        assert got.dtype == want.dtype, f"{path}: dtype {got.dtype} vs {want.dtype}"
        assert np.shape(got) == np.shape(want), f"{path}: shape {np.shape(got)} vs {np.shape(want)}"
        if want.dtype.kind in "fc":
            tol = rtol if rtol is not None else 8 * np.finfo(want.dtype).eps
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 1e-3, equal_nan=True,
                                       err_msg=path)
        else:
            np.testing.assert_array_equal(got, want, err_msg=path)
        return
    if isinstance(want, np.dtype):
        assert got == want, f"{path}: {got} vs {want}"
        return
    assert type(got) is type(want), f"{path}: {type(got).__name__} vs {type(want).__name__}"
    if isinstance(want, float) and rtol is not None:
        assert abs(got - want) <= rtol * max(abs(want), 1e-300) or (got != got and want != want)
        return
    assert got == want or (got != got and want != want), f"{path}: {got!r} vs {want!r}"


def as_hop(a):
    """a with every ndarray in it (lists and tuples item by item) a
    hop.numpy array over the same memory (hop.numpy.asarray)."""
    if isinstance(a, np.ndarray):
        return hop.numpy.asarray(a)
    if isinstance(a, list):
        return [as_hop(x) for x in a]
    if isinstance(a, tuple):
        return tuple(as_hop(x) for x in a)
    return a


def _hops_linalg_error(err, werr):
    """Whether err is hop's LinAlgError where NumPy raised its own: eager
    hop.numpy.linalg raises hop.LinAlgError, a subclass of NumPy's, by
    contract (docs/ARCHITECTURE.md); compiled calls raise NumPy's."""
    return type(werr) is np.linalg.LinAlgError and type(err) is hop.LinAlgError


def _check_eager(fn, call, want, werr, rtol, post):
    """fn on hop.numpy arrays, eagerly (no trace): what NumPy gave (want,
    or an exception of werr's type) and the arguments NumPy left."""
    wargs = copied(call)
    eargs = as_hop(copied(call))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            fn(*wargs)
        except Exception:  # noqa: BLE001 (werr is this call's)
            pass
        got, err = quiet_call(fn, eargs)
    if werr is not None:
        assert err is not None, f"NumPy raised {type(werr).__name__}: {werr}; eager hop did not"
        assert type(err) is type(werr) or _hops_linalg_error(err, werr), \
            f"NumPy raised {type(werr).__name__} ({werr}), eager hop {type(err).__name__} ({err})"
    else:
        if err is not None:
            raise err
        got = as_numpy(got)
        if post is not None:
            got, want = post(got), post(want)
        same(got, want, rtol, "eager result")
    same(as_numpy(list(eargs)), list(wargs), rtol, "arguments after the eager call")


def check(fn, *args, rtol=None, calls=None, dynamic=None, post=None, fullgraph=False,
          eager=False):
    """fn(*args) by NumPy and by hop.compile(fn): same(); the same exception
    type when NumPy raises (exactly: hop's ShapeError is not NumPy's
    ValueError); the arguments after each call agree, a raising one's too.  calls:
    several argument tuples, run one after the other through one compiled
    function.  post: applied to both results after the call (a conversion
    to Python data such as float(), which traced code cannot make of a
    traced value).  fullgraph: compiled with hop.compile's fullgraph=True
    (a call that would run eagerly raises instead).  eager: fn is also run
    eagerly on hop.numpy arrays (every ndarray argument through
    hop.numpy.asarray) and must agree with NumPy the same way.  Returns
    NumPy's result of the last call."""
    opts = {} if dynamic is None else {"dynamic": dynamic}
    cf = hop.compile(fn, fullgraph=True, **opts) if fullgraph else hop.compile(fn, **opts)
    want = None
    for call in calls if calls is not None else [args]:
        wargs, gargs = copied(call), copied(call)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                want = fn(*wargs)
                werr = None
            except Exception as e:  # noqa: BLE001 (compared below)
                werr = e
            try:
                got = cf(*gargs)
                gerr = None
            except Exception as e:  # noqa: BLE001
                gerr = e
        if eager:
            _check_eager(fn, call, want if werr is None else None, werr, rtol, post)
        if werr is not None:
            assert gerr is not None, f"NumPy raised {type(werr).__name__}: {werr}; hop did not"
            assert type(gerr) is type(werr), \
                f"NumPy raised {type(werr).__name__} ({werr}), hop {type(gerr).__name__} ({gerr})"
            # what NumPy wrote before it raised, hop writes too
            same(list(gargs), list(wargs), rtol, "arguments after the raising call")
            continue
        if gerr is not None:
            raise gerr
        if post is not None:
            got, want = post(got), post(want)
        same(got, want, rtol)
        same(list(gargs), list(wargs), rtol, "arguments after the call")
    return want


def raises(exc, fn, *args, eager=False):
    """NumPy raises exc, and so does the compiled fn (eager: and fn on
    hop.numpy arrays, every ndarray argument through hop.numpy.asarray)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*copied(args))
        except exc:
            pass
        else:
            raise AssertionError(f"NumPy did not raise {exc.__name__}")
        if eager:
            try:
                fn(*as_hop(copied(args)))
            except exc:
                pass
            else:
                raise AssertionError(f"eager hop.numpy did not raise {exc.__name__}")
        try:
            hop.compile(fn)(*copied(args))
        except exc:
            return
        raise AssertionError(f"hop did not raise {exc.__name__}")


def check_ns(fn, *args, rtol=None, post=None, text=False):
    """fn(xp, *args) with xp NumPy, and with xp hop.numpy eagerly (every
    ndarray argument a hop.numpy array over the same memory), and
    hop.compile of fn(numpy, ...): the ports of calls made without an array
    (np.unravel_index(2, (2, 2)), np.finfo(np.float32), np.r_[1:4]) reach
    hop.numpy's own names only through xp.  The results agree as check()'s
    do; when NumPy raises, both raise its exception type (text: and its
    message).  Returns NumPy's result."""
    import hop.numpy as hnp

    def by_numpy(*a):
        return fn(np, *a)

    check(by_numpy, *args, rtol=rtol, post=post)
    wargs, hargs = copied(args), as_hop(copied(args))
    want, werr = quiet_call(by_numpy, wargs)
    got, gerr = quiet_call(lambda *a: fn(hnp, *a), hargs)
    if werr is not None:
        assert gerr is not None, f"NumPy raised {type(werr).__name__}: {werr}; hop.numpy did not"
        assert type(gerr) is type(werr), \
            f"NumPy raised {type(werr).__name__} ({werr}), hop.numpy {type(gerr).__name__} ({gerr})"
        if text:
            assert str(gerr) == str(werr), (str(gerr), str(werr))
            _, cerr = quiet_call(hop.compile(by_numpy), copied(args))
            assert type(cerr) is type(werr) and str(cerr) == str(werr), (cerr, werr)
    else:
        if gerr is not None:
            raise gerr
        got = as_numpy(got)
        if post is not None:
            got, want = post(got), post(want)
        same(got, want, rtol, "hop.numpy result")
    same(as_numpy(list(hargs)), list(wargs), rtol, "arguments after the hop.numpy call")
    return want
