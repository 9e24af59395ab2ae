"""Known gaps of hop.numpy (issue #29), each differentially: NumPy 1.24 vs
hop.numpy eagerly vs hop.compile of the same function (values, dtype,
shape, ndarray vs NumPy scalar, the arguments after the call, an
exception's type):

  - quantile/percentile/nanquantile/nanpercentile of a q hop traces (a
    hop.numpy array of the function's environment, an argument): a graph
    break, NumPy's answer (was hop's UnsupportedError);
  - writes into np.r_/np.c_/np.mgrid/np.ogrid results compile (were an
    eager run: the effect finder took the result for a part of np);
  - np.frompyfunc (and any ufunc not NumPy's own) on hop arrays: NumPy's
    call on the values, a break when traced (was AttributeError);
  - np.linalg.qr(a, mode='raw'): geqrf's (h, tau) (was UnsupportedError);
  - ndarray.astype of a dtype hop lacks (str, object, bytes, ...): NumPy's
    array (was DTypeError);
  - np.nditer: NumPy's own iterator over a hop array's memory (a break when
    traced; hnp.nditer was missing).
"""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

from numpy_diff import as_numpy, copied, quiet_call, same

X = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
XN = np.array([3.0, np.nan, 4.0, 1.0, 5.0, np.nan, 2.0, 6.0])


def check(body, *args, compiled=True):
    """body(m, *args) with m numpy by NumPy; with m hop.numpy on hop arrays
    eagerly; hop.compile'd with m numpy (compiled): the same results and
    arguments after the call, or the same exception type.  Returns the
    compiled function."""
    want_args = copied(args)
    want, werr = quiet_call(lambda *a: body(np, *a), want_args)

    def compare(got, gerr, got_args, who):
        if werr is not None:
            assert gerr is not None, f"{who}: NumPy raised {werr!r}; hop did not"
            # (hop.LinAlgError is a subclass of NumPy's)
            assert isinstance(gerr, type(werr)), f"{who}: NumPy raised {werr!r}, hop {gerr!r}"
            return
        if gerr is not None:
            raise AssertionError(f"{who}: hop raised {gerr!r}") from gerr
        same(as_numpy(got), want, None, who)
        same([as_numpy(a) for a in got_args], list(want_args), None, f"{who}: arguments")

    a1 = tuple(hnp.asarray(a) if isinstance(a, np.ndarray) else a for a in copied(args))
    compare(*quiet_call(lambda *a: body(hnp, *a), a1), a1, "hnp eager")
    cf = None
    if compiled:
        # (named parameters: the effect finder binds m to the module numpy
        # in body's frame, as a function of the user's that reads np)
        cf = hop.compile({1: lambda a: body(np, a), 2: lambda a, b: body(np, a, b)}[len(args)])
        for _ in range(2):  # (the second call runs the plan)
            a2 = copied(args)
            compare(*quiet_call(cf, a2), a2, "compiled")
    return cf


def _quiet(cf, *args):
    """cf(*args) with hop.compile's fallback warning an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return cf(*args)


# ------------------------------------------------ quantiles of a traced q

Q_CASES = {"ndarray": np.array([0.25, 0.75]), "list": [0.25, 0.75], "scalar": 0.5,
           "0-d": np.array(0.5), "2-d": np.array([[0.1, 0.9], [0.5, 0.2]])}
FNS = {"quantile": 1, "nanquantile": 1, "percentile": 100, "nanpercentile": 100}


@pytest.mark.parametrize("qname", sorted(Q_CASES))
@pytest.mark.parametrize("fname", sorted(FNS))
def test_quantiles_of_a_closure_hop_array_q_are_numpys(fname, qname):
    # q a hop.numpy array the function closes over: hop.compile reads it on
    # every call (a traced value), whose values pick the elements: a break,
    # where NumPy's function computes the statement
    q = Q_CASES[qname]
    scaled = np.asarray(q) * FNS[fname]
    Q = hnp.asarray(scaled)
    x = XN if fname.startswith("nan") else X

    def f(a):
        return getattr(hnp, fname)(a, Q) + 0

    want = getattr(np, fname)(x, scaled) + 0
    cf = hop.compile(f)
    for _ in range(2):
        same(as_numpy(cf(x)), want)
    same(as_numpy(f(hnp.asarray(x))), want)
    assert "with traced" in cf.explain()


@pytest.mark.parametrize("qname", sorted(Q_CASES))
@pytest.mark.parametrize("fname", sorted(FNS))
def test_quantiles_of_a_q_given_as_data_are_numpys(fname, qname):
    # q a plain closure value (list, NumPy array, scalar): a constant
    q = Q_CASES[qname]
    scaled = (np.asarray(q) * FNS[fname]).tolist() if qname == "list" else \
        np.asarray(q) * FNS[fname] if isinstance(q, np.ndarray) else q * FNS[fname]
    check(lambda m, a: getattr(m, fname)(a, scaled, axis=0),
          XN if fname.startswith("nan") else X)


@pytest.mark.parametrize("fname", sorted(FNS))
def test_quantiles_of_a_traced_q_argument_follow_its_values(fname):
    # q an argument: each call's values, NumPy's range check included
    x = XN if fname.startswith("nan") else X
    hi = FNS[fname]

    def f(a, q):
        return getattr(np, fname)(a, q)

    cf = hop.compile(f)
    for q in (np.array([0.1, 0.6]) * hi, np.array([0.9, 0.3]) * hi, np.array(0.5) * hi):
        same(cf(x, q), f(x, q))
    with pytest.raises(ValueError):
        f(x, np.array([0.5, 2.0]) * hi)
    with pytest.raises(ValueError):
        cf(x, np.array([0.5, 2.0]) * hi)
    assert "with traced" in cf.explain()


def test_quantile_of_a_global_hop_array_sees_its_change():
    global GQ
    GQ = hnp.asarray(np.array([0.25, 0.5]))

    def f(a):
        return np.quantile(a, GQ)

    cf = hop.compile(f)
    same(as_numpy(cf(X)), np.quantile(X, [0.25, 0.5]))
    GQ[1] = 0.9
    same(as_numpy(cf(X)), np.quantile(X, [0.25, 0.9]))


def test_traced_q_stays_unsupported_in_hop_trace():
    with pytest.raises(hop.UnsupportedError, match="quantile with traced quantiles"):
        hop.trace(lambda a, q: np.quantile(a, q), X, np.array([0.5]))


# --------------------------------------------- writes into index tricks

TRICK_WRITES = {
    "r_ traced": lambda m, x: _w(m.r_[x, x[:2]], 0, 5.0),
    "r_ one array": lambda m, x: (_w(m.r_[x], 0, -1.0), x),
    "r_ constant": lambda m, x: _w(m.r_[0.0:3.0, 7.0], slice(1, 3), x[:2]) + x[0],
    "r_ directive": lambda m, x: _w(m.r_["0,2", x, x], (1, 0), 9.0),
    "c_ traced": lambda m, x: (_w(m.c_[x, 2 * x], (slice(None), 0), 7.0), x),
    "c_ nested": lambda m, x: _w(m.c_[m.r_[x, x], m.r_[x, x]], 0, x[0] + 9),
    "mgrid": lambda m, x: _iadd(m.mgrid[0:3, 0:2].astype(float), x[0]),
    "ogrid": lambda m, x: _ogrid_write(m, x),
}


def _w(a, key, v):
    a[key] = v
    return a


def _iadd(a, v):
    a[1] += v
    return a


def _ogrid_write(m, x):
    o = m.ogrid[0:3, 0:2]
    o[0][0] = 5
    return o[0] + x[:3, None], o[1]


@pytest.mark.parametrize("name", sorted(TRICK_WRITES))
def test_a_write_into_an_index_trick_result_compiles(name):
    body = TRICK_WRITES[name]
    x = np.arange(4.0)
    cf = check(body, x)
    # one plan, no eager run (before: "writes an item of the global 'np'")
    _quiet(cf, x)
    assert cf.eager_calls == 0 and len(cf.graphs) == 1, cf.explain()
    assert "runs eagerly" not in cf.explain()


def test_a_write_into_an_index_trick_result_keeps_in_place_ops():
    def f(x):
        c = np.r_[x, 1.0]
        np.add(c, 1, out=c)
        c.sort()
        return c

    x = np.array([3.0, -1.0, 2.0])
    cf = check(lambda m, a: f(a), x)
    _quiet(cf, x)
    assert cf.eager_calls == 0


class _Box:
    pass


BOX = _Box()
BOX.r_ = {"k": np.zeros(3)}


def test_a_write_into_an_item_of_another_objects_r_attribute_stays_an_effect():
    # `BOX.r_["k"]` is an item of the user's dict, not np.r_'s result: its
    # write changes the caller's array, on every call
    def f(x):
        BOX.r_["k"][0] += 1
        return x + 1

    cf = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf(X)
        cf(X)
    assert BOX.r_["k"][0] == 2.0


# ------------------------------------------------------------ frompyfunc

ADD = np.frompyfunc(lambda a, b: a + b, 2, 1)
DIVMOD = np.frompyfunc(divmod, 2, 2)


def test_frompyfunc_is_numpys():
    assert hnp.frompyfunc is np.frompyfunc


FROMPY = {
    "call": lambda m, x: m.frompyfunc(lambda a, b: a * b + 1, 2, 1)(x, 2),
    "call then astype": lambda m, x: ADD(x, 1).astype(float),
    "scalar": lambda m, x: ADD(x[1], 2),
    "two outputs": lambda m, x: DIVMOD(x, 3),
    "reduce": lambda m, x: ADD.reduce(x),
    "accumulate": lambda m, x: ADD.accumulate(x),
    "outer": lambda m, x: ADD.outer(x[:2], x[:3]),
    "raises": lambda m, x: m.frompyfunc(lambda a: 1 / (a - a), 1, 1)(x),
}


@pytest.mark.parametrize("name", sorted(FROMPY))
def test_frompyfunc_on_hop_arrays_is_numpys(name):
    check(FROMPY[name], X)


def test_frompyfunc_out_and_at_write_hop_arrays_as_numpys():
    def body(m, x):
        h = m.asarray(x).copy()
        v = h[::-1]
        ADD.at(v, [0], 10)  # (through a view hop holds as a copy)
        o = m.zeros(4)
        r = ADD(h, 1, out=o, casting="unsafe")
        o2 = m.zeros(4)
        ov = o2[::-1]
        ADD(h, 1, out=(ov,), casting="unsafe")
        q = m.zeros(4)
        r2 = DIVMOD(h, 3, out=(None, q), casting="unsafe")
        return h, v, o, o2, ov, r is o, r2[1] is q

    check(body, np.arange(4.0), compiled=False)


def test_frompyfunc_of_traced_arrays_is_a_break_with_numpys_answer():
    def f(x):
        y = x * 2
        return ADD(y, 1), y.sum()

    cf = hop.compile(f)
    with warnings.catch_warnings():
        # (the code after the break runs eagerly: the translator takes no
        # object array in a local)
        warnings.simplefilter("ignore")
        for k in (1.0, 2.0):
            same(cf(X * k), f(X * k))
    assert "not one of NumPy's own" in cf.explain()
    with pytest.raises(hop.UnsupportedError, match="not one of NumPy's own"):
        hop.trace(f, X)


# --------------------------------------------------------- qr mode='raw'

QR_INPUTS = {
    "tall": np.arange(12.0).reshape(4, 3) + np.eye(4, 3),
    "wide": np.arange(12.0).reshape(3, 4) + np.eye(3, 4),
    "stacked": np.arange(24.0).reshape(2, 4, 3) + np.eye(4, 3),
    "float32": np.eye(3, dtype=np.float32) + 1,
    "int": np.arange(9).reshape(3, 3),
    "complex": (np.arange(6) + 1j * np.arange(6)[::-1]).reshape(3, 2),
    "empty rows": np.zeros((0, 3)),
    "empty cols": np.zeros((3, 0)),
    "1-d": np.arange(3.0),
}


@pytest.mark.parametrize("name", sorted(QR_INPUTS))
def test_qr_raw_is_numpys(name):
    check(lambda m, a: m.linalg.qr(a, mode="raw"), QR_INPUTS[name])


def test_qr_raw_is_geqrf_bits_and_numpys_layout():
    a = np.random.default_rng(3).standard_normal((2, 6, 4))
    want = np.linalg.qr(a, mode="raw")
    got = hnp.linalg.qr(hnp.asarray(a), mode="raw")
    for g, w in zip(got, want):
        gn = np.asarray(g)
        assert np.array_equal(gn, w) and gn.strides == w.strides


def test_qr_raw_compiles_to_one_op():
    cf = hop.compile(lambda a: np.linalg.qr(a @ a.T, mode="raw"))
    a = QR_INPUTS["tall"]
    _quiet(cf, a)
    (g,) = cf.graphs
    assert "= linalg_qr_raw(" in g.code


# ------------------------------------------------------------- astype

ASTYPES = [str, "U3", "S", object, "M8[s]", np.longdouble]


@pytest.mark.parametrize("dt", ASTYPES, ids=str)
def test_astype_to_a_dtype_hop_lacks_is_numpys(dt):
    check(lambda m, a: m.asarray(a).astype(dt), np.array([0.5, 1.0, 25.0]))
    check(lambda m, a: m.asarray(a)[1].astype(dt), np.array([0.5, 1.0, 25.0]))
    check(lambda m, a: m.asarray(a).sum().astype(dt), np.arange(3))


def test_astype_to_str_is_numpys_with_its_casting_and_order():
    check(lambda m, a: m.asarray(a).T.astype(str, order="F"), np.arange(6.0).reshape(2, 3))
    check(lambda m, a: m.asarray(a).astype("U2", casting="same_kind"), np.arange(3))
    check(lambda m, a: m.asarray(a).astype(str, casting="no"), np.arange(3))


def test_astype_to_str_of_a_traced_array_is_a_break_and_a_trace_error():
    def f(x):
        return (x * 2).astype(str)

    cf = hop.compile(f)
    for k in (1.0, 3.0):
        same(cf(X * k), f(X * k))
    with pytest.raises(hop.DTypeError):
        hop.trace(f, X)


# -------------------------------------------------------------- nditer

def test_nditer_makes_numpys_iterator():
    it = hnp.nditer(hnp.arange(3.0))
    assert type(it) is np.nditer and isinstance(it, hnp.nditer)
    assert hnp.nditer.__doc__ == np.nditer.__doc__


def test_nditer_of_several_operands_one_traced_is_a_break_not_a_crash():
    # NumPy 1.24's nditer([a, None]) crashes when a's conversion raises
    cf = check(_nditer_multi, np.arange(6.0).reshape(2, 3))
    assert "graph break" in cf.explain()
    with pytest.raises(hop.TraceError):
        hop.trace(lambda a: np.nditer([a, None]), np.arange(3.0))


def _nditer_sum(m, a):
    t = 0.0
    for v in m.nditer(a):
        t += v * v
    return t


def _nditer_order(m, a):
    return [float(v) for v in m.nditer(a, order="F")]


def _nditer_multi(m, a):
    it = m.nditer([a, None])
    with it:
        for x, y in it:
            y[...] = x * 2
        return it.operands[1]


def _nditer_readwrite(m, a):
    with m.nditer(a, op_flags=["readwrite"]) as it:
        for v in it:
            v[...] = v * 2 + 1
    return a


def _nditer_readwrite_view(m, a):
    h = m.asarray(a)
    v = h[::-1]
    with m.nditer(v, op_flags=["readwrite"]) as it:
        for e in it:
            e[...] = e * 2 + 1
    return h, v


@pytest.mark.parametrize("body", [_nditer_sum, _nditer_order, _nditer_multi, _nditer_readwrite,
                                  _nditer_readwrite_view], ids=lambda f: f.__name__)
def test_nditer_over_hop_arrays_is_numpys(body):
    check(body, np.arange(6.0).reshape(2, 3))


def test_nditer_of_a_traced_array_is_a_break():
    cf = check(_nditer_sum, np.arange(6.0).reshape(2, 3))
    assert "graph break" in cf.explain()
