"""First-rule gaps a probe of everyday NumPy calls with unusual but valid
(or invalid) arguments found: comparisons of arrays that do not broadcast,
out= tuples, einsum/vdot errors, arange of arrays, reshape(None), histogram
edges; each compared against NumPy 1.24 eagerly on hop.numpy arrays and
compiled: value, dtype, shape, type, error type and text, and warnings
(hop.compile's own "runs eagerly" notice left out: a call hop cannot compile
runs eagerly, which is the first rule kept)."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp
from test_numpy_operand_campaign import _as_numpy


def _describe(r):
    if isinstance(r, (tuple, list)):
        return type(r).__name__, tuple(_describe(v) for v in r)
    if isinstance(r, (bool, int, float, complex, str, type(None))):
        return type(r).__name__, repr(r)
    a = np.asarray(r)
    return (type(r).__name__.replace("ndarray", "array"), str(a.dtype), a.shape,
            repr((a.round(12) if a.dtype.kind in "fc" else a).tolist()))


def _run(f):
    """f()'s answer (or its error) and the warnings it gave."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = _describe(_as_numpy(f()))
        except Exception as e:  # noqa: BLE001 (NumPy's error is the answer)
            r = type(e), str(e)
    return r, [(x.category, str(x.message)) for x in w
               if not str(x.message).startswith("hop.compile: ")]


def _copy(x):
    return x.copy() if isinstance(x, np.ndarray) else x


def _three_ways(f, *xs):
    """NumPy's answer, then hop.numpy's eager and compiled ones (ndarray
    arguments: hop.numpy arrays eagerly, NumPy's arrays compiled)."""
    want = _run(lambda: f(*[_copy(x) for x in xs]))
    eager = _run(lambda: f(*[hnp.asarray(x.copy()) if isinstance(x, np.ndarray) else x
                             for x in xs]))
    compiled = _run(lambda: hop.compile(f)(*[_copy(x) for x in xs]))
    return want, eager, compiled


# ------------------------------------------------- comparisons that fail

_DEPRECATED = (DeprecationWarning,
               "elementwise comparison failed; this will raise an error in the future.")

COMPARISONS = [
    (lambda x, y: x == y, np.arange(3.0), np.arange(4.0)),
    (lambda x, y: x != y, np.arange(3.0), np.arange(4.0)),
    (lambda x, y: x == y, np.ones((2, 3)), np.ones((3, 2), np.int32)),
    (lambda x, y: (x != y, x == y), np.ones((2, 3)), np.ones(4)),
    (lambda x, y: x == [1, 2], np.arange(3.0), None),
    (lambda x, y: [1, 2] != x, np.arange(3), None),
    (lambda x, y: x == np.arange(4), np.arange(3), None),
    (lambda x, y: np.arange(4) != x, np.arange(3), None),
]


@pytest.mark.parametrize("f,a,b", COMPARISONS)
def test_equality_of_arrays_that_do_not_broadcast_is_numpys_deprecated_identity(f, a, b):
    # NumPy 1.24's == and != of operands that do not broadcast warn (once
    # per NumPy array taking part) and answer by identity (a Python bool);
    # hop raised the ValueError of np.equal
    want, eager, compiled = _three_ways(f, a, b)
    assert _DEPRECATED in want[1] and "bool" in str(want[0])
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("fn", [np.equal, np.not_equal, np.less, np.add])
def test_equal_function_of_arrays_that_do_not_broadcast_raises(fn):
    # (hop.compile(np.add) itself raised the traced op's ShapeError)
    want, eager, compiled = _three_ways(fn, np.arange(3.0), np.arange(4.0))
    assert want[0][0] is ValueError
    assert eager == want
    assert compiled == want


def test_failed_comparison_under_warnings_as_errors_raises_the_warning():
    def f(x, y):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return x == y
    want, eager, compiled = _three_ways(f, np.arange(3.0), np.arange(4.0))
    assert want[0][0] is DeprecationWarning
    assert eager == want
    assert compiled == want


def test_failed_comparison_under_hop_trace_is_a_clear_error():
    with pytest.raises(hop.UnsupportedError, match="do not broadcast"):
        hop.trace(lambda x, y: hnp.asarray(x) == hnp.asarray(y), np.arange(3.0), np.arange(4.0))


# ------------------------------------------------------- out= of ufuncs

X3 = np.array([1.5, -2.25, 3.0])


def _e(*shape, dtype=float):
    return np.zeros(shape, dtype)


OUT_CASES = {
    "one entry": lambda m, x: m.modf(x, out=(_e(3),)),
    "three entries": lambda m, x: m.modf(x, out=(_e(3), _e(3), _e(3))),
    "an array": lambda m, x: m.modf(x, out=_e(3)),
    "a list": lambda m, x: m.modf(x, out=[_e(3), _e(3)]),
    "an int": lambda m, x: m.modf(x, out=(1, _e(3))),
    "first too long": lambda m, x: m.modf(x, out=(_e(4), _e(3))),
    "second 2-d": lambda m, x: m.modf(x, out=(_e(3), _e(2, 3))),
    "first 2-d": lambda m, x: m.modf(x, out=(_e(2, 3), _e(3))),
    "first int": lambda m, x: m.modf(x, out=(_e(3, dtype=int), _e(3))),
    "second int": lambda m, x: m.modf(x, out=(_e(3), _e(3, dtype=int))),
    "both int": lambda m, x: m.modf(x, out=(_e(3, dtype=int), _e(3, dtype=int))),
    "frexp first int": lambda m, x: m.frexp(x, out=(_e(3, dtype=int), _e(3, dtype=np.int32))),
    "divmod second int": lambda m, x: m.divmod(x, 2, out=(_e(3), _e(3, dtype=int))),
    "divmod first int": lambda m, x: m.divmod(x, 2, out=(_e(3, dtype=int), _e(3))),
    "add two": lambda m, x: m.add(x, 1, out=(_e(3), _e(3))),
    "add a list": lambda m, x: m.add(x, 1, out=[_e(3)]),
    "add an int": lambda m, x: m.add(x, 1, out=3),
    "add a scalar": lambda m, x: m.add(x, 1, out=np.float64(3)),
}


def _out_three_ways(f, x):
    want = _run(lambda: f(np, x.copy()))
    eager = _run(lambda: f(np, hnp.asarray(x.copy())))
    own = _run(lambda: f(hnp, hnp.asarray(x.copy())))
    compiled = _run(lambda: hop.compile(lambda a: f(np, a))(x.copy()))
    return want, eager, own, compiled


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_tuples_of_ufuncs_are_checked_as_numpys(case):
    # hop's texts differed (', got int', its own count of entries), its cast
    # errors named output 0 where NumPy counts operands (modf's first output
    # is 1), an output of another shape than the broadcast was written into
    # and a too long one was NumPy's setitem error
    want, eager, own, compiled = _out_three_ways(OUT_CASES[case], X3)
    assert want[0][0] in (TypeError, ValueError, np.core._exceptions._UFuncOutputCastingError)
    assert eager == want
    assert own == want
    assert compiled == want


ALIASED = {
    "modf into one": lambda m, x: (lambda o: m.modf(x, out=(o, o)))(np.empty(3)),
    "divmod into one": lambda m, x: (lambda o: m.divmod(x, 2, out=(o, o)))(np.empty(3)),
    "divmod into its input": lambda m, x: m.divmod(x, 2, out=(x, np.empty(3))),
    "divmod into its input where": lambda m, x: m.divmod(x, 2, out=(x, np.zeros(3)),
                                                         where=x > 0),
    "modf into its input": lambda m, x: m.modf(x, out=(np.empty(3), x)),
}


@pytest.mark.parametrize("case", ALIASED)
def test_two_output_ufuncs_read_inputs_first_and_write_the_first_output_last(case):
    # NumPy's loop computes both results of an element from the inputs, then
    # writes the second output, then the first; hop's compiled divmod wrote
    # the quotient into its input before computing the remainder from it (a
    # silently wrong answer) and its modf wrote the integral part last
    want, eager, own, compiled = _out_three_ways(ALIASED[case], X3)
    assert want[0][0] == "tuple"
    assert eager == want
    assert own == want
    assert compiled == want


# ------------------------------------------------------ vdot and einsum

A3, A4 = np.arange(3.0), np.arange(4.0)
M23, M32 = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)

PRODUCT_ERRORS = {
    "vdot of sizes 3 and 4": (lambda x, y: np.vdot(x, y), A3, A4),
    "vdot of sizes 6 and 3": (lambda x, y: np.vdot(x, y[:3]), M23, A4),
    "vdot of a scalar": (lambda x, y: np.vdot(x, 2.0), A3, A4),
    "vdot of a list": (lambda x, y: np.vdot(x, [1.0, 2.0]), A3, A4),
    "vdot of sizes 0 and 1": (lambda x, y: np.vdot(x[:0], y[:1]), A3, A4),
    "sizes of one label": (lambda x, y: np.einsum("i,i->", x, y), A3, A4),
    "sizes of a contraction": (lambda x, y: np.einsum("ij,jk->ik", x, x), M23, A4),
    "three operands": (lambda x, y: np.einsum("i,j,i", x, y[:2], y), A3, A4),
    "three matrices": (lambda x, y: np.einsum("ij,jk,kl", x, np.ones((4, 5)), np.ones((5, 2))),
                       M23, A4),
    "a digit": (lambda x, y: np.einsum("i1,i->", x, y), M23, A4),
    "fewer operands": (lambda x, y: np.einsum("i,i->", x), A3, A4),
    "more operands": (lambda x, y: np.einsum("i->", x, y), A3, A4),
    "an output label twice": (lambda x, y: np.einsum("i->ii", x), A3, A4),
    "an unknown output label": (lambda x, y: np.einsum("i->j", x), A3, A4),
    "too many labels": (lambda x, y: np.einsum("ij->", x), A3, A4),
    "too few labels": (lambda x, y: np.einsum("i->", x), M23, A4),
    "two arrows": (lambda x, y: np.einsum("i->->", x), A3, A4),
    "a dash": (lambda x, y: np.einsum("i-", x), A3, A4),
    "a >": (lambda x, y: np.einsum("i>", x), A3, A4),
    "a lone dot": (lambda x, y: np.einsum("i.j", x), M23, A4),
    "a dot in the output": (lambda x, y: np.einsum("ij->i.", x), M23, A4),
    "collapsing one operand": (lambda x, y: np.einsum("ii->i", x), M23, A4),
    "collapsing a summed label": (lambda x, y: np.einsum("ii", x), M23, A4),
    "collapsing after a summed label": (lambda x, y: np.einsum("jii->i", np.ones((2, 3, 4))),
                                        M23, A4),
    "collapsing one of two": (lambda x, y: np.einsum("ii,i", x, y[:2]), M23, A4),
    "collapsing into out": (lambda x, y: np.einsum("ii->i", x, out=np.empty(2)), M23, A4),
}


@pytest.mark.parametrize("case", PRODUCT_ERRORS)
def test_vdot_and_einsum_errors_are_numpys(case):
    # hop's texts were its own (vdot's dot alignment, einsum's broadcast per
    # index, 'operand 0' where NumPy says 'single operand', its operand count
    # errors the other way round), a digit or a '>' in the subscripts was
    # taken, an output label twice was a hop InvalidError and an unknown one
    # a silently wrong answer (compiled too)
    f, a, b = PRODUCT_ERRORS[case]
    want, eager, compiled = _three_ways(f, a, b)
    assert want[0][0] is ValueError
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("f", [lambda x, y: np.einsum(" i , i -> ", x, x),
                               lambda x, y: np.einsum("iB,Bi", x, y.T),
                               lambda x, y: np.einsum("ij,j->i", x, y[:1]),
                               lambda x, y: np.vdot(x, y)])
def test_einsum_and_vdot_answers_are_numpys(f):
    want, eager, compiled = _three_ways(f, M23, M32)
    assert eager == want
    assert compiled == want


# ----------------------------------------------- arange of arrays, bool()

ARANGE_ARGS = [np.array(5), np.array(2.5), np.array([4]), np.array([1, 4]), np.array([], int),
               np.array([[3]]), np.array(True), np.array(4, np.uint8),
               np.array(4, np.float32), np.array(-2)]
ARANGES = {
    "stop": lambda m, a: m.arange(a),
    "start": lambda m, a: m.arange(a, 10),
    "stop after 1": lambda m, a: m.arange(1, a),
    "step": lambda m, a: m.arange(0, 9, a),
    "a dtype": lambda m, a: m.arange(a, dtype=np.float32),
}


@pytest.mark.parametrize("x", ARANGE_ARGS, ids=repr)
@pytest.mark.parametrize("case", ARANGES)
def test_arange_of_an_array_is_numpys(case, x):
    # hop.numpy's arange refused every array ('only integer scalar arrays
    # can be converted to a scalar index'; a negative one was hop's
    # InvalidError), NumPy takes a size-1 array's value (its dtype in the
    # result's) and np.arange of an empty hop.numpy array raised where
    # NumPy's bool() of it warns
    f = ARANGES[case]
    want = _run(lambda: f(np, x.copy()))
    assert _run(lambda: f(hnp, hnp.asarray(x.copy()))) == want
    assert _run(lambda: f(hnp, x.copy())) == want
    assert _run(lambda: f(np, hnp.asarray(x.copy()))) == want
    assert _run(lambda: hop.compile(lambda a: f(hnp, a))(x.copy())) == want
    assert _run(lambda: hop.compile(lambda a: f(np, a))(x.copy())) == want


@pytest.mark.parametrize("f", [bool, lambda x: 1 if x else 2, lambda x: bool(x == 1),
                               float, int, lambda x: not x])
@pytest.mark.parametrize("x", [np.array([]), np.zeros((2, 0)), np.array([1.0, 2.0])],
                         ids=repr)
def test_truth_and_conversions_of_arrays_not_of_size_one_are_numpys(f, x):
    # bool() of an empty array is NumPy 1.24's DeprecationWarning and False
    # (hop raised its 'more than one element' ValueError); int()/float()
    # say 'size-1 arrays' as NumPy 1.24 (hop: 'length-1')
    want, eager, compiled = _three_ways(f, x)
    assert eager == want
    assert compiled == want


# ------------------------------------------------- reshape(None), shapes

RESHAPES = {
    "method": lambda x: x.reshape(None),
    "function": lambda x: np.reshape(x, None),
    "order F": lambda x: x.reshape(None, order="F"),
    "a view": lambda x: np.shares_memory(x.reshape(None), x),
    "a new array": lambda x: x.reshape(None) is x,
    "written through": lambda x: (lambda r: (r.__setitem__(..., 9), x)[1])(np.reshape(x, None)),
    "two Nones": lambda x: x.reshape(None, None),
    "None in a tuple": lambda x: x.reshape((None,)),
    "no argument": lambda x: x.reshape(),
    "a str": lambda x: x.reshape("a"),
    "a str to the function": lambda x: np.reshape(x, "a"),
    "a float": lambda x: x.reshape(1.0),
    "a float to the function": lambda x: np.reshape(x, 1.0),
    "of a scalar": lambda x: x.sum().reshape(None),
    "resize to None": lambda x: np.resize(x, None),
}


@pytest.mark.parametrize("x", [np.arange(6.0), np.array(3.0), np.zeros((2, 0))], ids=repr)
@pytest.mark.parametrize("case", RESHAPES)
def test_reshape_none_is_numpys_view(case, x):
    # NumPy 1.24's reshape(None) is a view of the array as it is; hop read
    # None as a size ('NoneType' object cannot be interpreted as an integer);
    # one argument is the shape itself (x.reshape(1.0): NumPy's 'expected a
    # sequence ...', x.reshape('a') a sequence of sizes)
    want, eager, compiled = _three_ways(RESHAPES[case], x)
    assert eager == want
    assert compiled == want


SHAPE_NONE = {
    "zeros": lambda m: m.zeros(None), "ones": lambda m: m.ones(None),
    "empty": lambda m: m.empty(None).shape, "full": lambda m: m.full(None, 2),
    "a str": lambda m: m.zeros("ab"), "a float": lambda m: m.zeros(2.0),
    "a range": lambda m: m.ones(range(2)),
}


@pytest.mark.parametrize("case", SHAPE_NONE)
def test_shape_none_is_numpys_deprecated_alias_of_the_empty_shape(case):
    # None is () with NumPy 1.24's DeprecationWarning, which hop left out
    f = SHAPE_NONE[case]
    want = _run(lambda: f(np))
    assert _run(lambda: f(hnp)) == want
    assert _run(lambda: hop.compile(lambda x: (f(np), x + 1)[0])(np.ones(2))) == want
    assert _run(lambda: hop.compile(lambda x: (f(hnp), x + 1)[0])(np.ones(2))) == want


# -------------------------------------------------- histogram's bin edges

HX = np.array([0.5, 1.5, 2.5, 0.2, 3.9])
HB = np.array([0.0, 1.0, 2.0, 4.0])

EDGES = {
    "histogram": lambda x, b: np.histogram(x, bins=b)[1],
    "int edges": lambda x, b: (lambda i: np.histogram(x, bins=i)[1] is i)(b.astype(int)),
    "bin_edges": lambda x, b: np.histogram_bin_edges(x, bins=b),
    "histogramdd": lambda x, b: np.histogramdd(x, bins=[b])[1][0],
    "histogram2d": lambda x, b: np.histogram2d(x, x, bins=[b, b])[1],
    "strided bins": lambda x, b: np.shares_memory(np.histogram(x, bins=b[::2])[1], b),
    "a list of bins": lambda x, b: np.shares_memory(np.histogram(x, bins=list(b))[1], b),
    "a number of bins": lambda x, b: np.shares_memory(np.histogram(b, bins=3)[1], b),
}


@pytest.mark.parametrize("case", EDGES)
def test_histogram_returns_the_bins_array_as_its_edges(case):
    # NumPy's edges are np.asarray(bins): the array given itself; hop
    # returned a view eagerly (not the object) and a copy compiled (a write
    # into the edges did not reach the bins)
    f = EDGES[case]

    def g(x, b):
        r = f(x, b)
        if isinstance(r, bool):
            return r
        same = r is b
        r[...] = -1.0  # (into the bins, where the edges are the bins)
        return same, b

    want = _run(lambda: g(HX.copy(), HB.copy()))
    eager = _run(lambda: g(hnp.asarray(HX.copy()), hnp.asarray(HB.copy())))
    compiled = _run(lambda: hop.compile(g)(HX.copy(), HB.copy()))
    assert eager == want
    assert compiled == want


# ------------------------------------------------- comparisons with None

NONE_COMPARISONS = [lambda x: x == None, lambda x: x != None, lambda x: None == x,  # noqa: E711
                    lambda x: None != x, lambda x: np.equal(x, None),  # noqa: E711
                    lambda x: np.not_equal(None, x), lambda x: x.sum() == None]  # noqa: E711


@pytest.mark.parametrize("x", [np.array([1.0, 2.0]), np.array(1.0), np.array([[1]], np.int8),
                               np.zeros((0, 2))], ids=repr)
@pytest.mark.parametrize("f", NONE_COMPARISONS)
def test_comparison_with_none_is_numpys_elementwise(f, x):
    # NumPy compares each element with None (an array of False, of True for
    # !=; a 0-d array's an np.bool_, a NumPy scalar's a Python bool); hop
    # answered by identity (a Python bool) and np.equal(x, None) raised
    want, eager, compiled = _three_ways(f, x)
    assert eager == want
    assert compiled == want


EINSUM_VIEWS = {
    "transpose shares": (lambda x: np.shares_memory(np.einsum("ij->ji", x), x), M23),
    "implicit shares": (lambda x: np.shares_memory(np.einsum("ij", x), x), M23),
    "one dim shares": (lambda x: np.shares_memory(np.einsum("i", x[0]), x), M23),
    "a new object": (lambda x: np.einsum("ij", x) is x, M23),
    "dtype not read": (lambda x: np.shares_memory(np.einsum("ij->ji", x, dtype=np.float32), x),
                       M23),
    "ints": (lambda x: np.shares_memory(np.einsum("ji", x), x), M23.astype(int)),
    "a sum copies": (lambda x: np.shares_memory(np.einsum("ij->i", x), x), M23),
    "out= copies": (lambda x: np.shares_memory(np.einsum("ij->ji", x, out=np.empty((3, 2))), x),
                    M23),
    "write through transpose": (lambda x: (lambda r: (r.__setitem__((2, 1), 99.0), x)[1])(
        np.einsum("ij->ji", x)), M23),
    "write through diagonal": (lambda x: (lambda r: (r.__setitem__(1, -7.0), x)[1])(
        np.einsum("ii->i", x)), np.arange(9.0).reshape(3, 3)),
    "write through 3-d": (lambda x: (lambda r: (r.__setitem__(..., 5.0), x)[1])(
        np.einsum("iji->ji", x)), np.arange(12.0).reshape(2, 3, 2)),
}


@pytest.mark.parametrize("case", EINSUM_VIEWS)
def test_einsum_of_one_operand_without_a_sum_is_numpys_view(case):
    # NumPy's einsum of one operand that keeps every label (no out=) is a
    # view of it (dtype= not read); hop computed a copy, so a write into
    # the result did not reach the operand
    f, x = EINSUM_VIEWS[case]
    want, eager, compiled = _three_ways(f, x)
    assert eager == want
    assert compiled == want


# ------------------------------------------- item() and integer indexing

@pytest.mark.parametrize("args", [(2,), (-1,), (6,), (-7,), ((1, 2),), (1, 2), ((1,),), (1.0,),
                                  (np.int64(4),), (True,), ((1, 5),), (np.array(2),), (0, 1, 2),
                                  ((),)], ids=repr)
def test_item_with_an_index_is_numpys(args):
    # one index is NumPy's flat index (hop took it as the first axis':
    # x.item(2) of a 2x3 array raised IndexError), a tuple of another length
    # than ndim its ValueError
    want, eager, compiled = _three_ways(lambda x: x.item(*args), M23)
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("key", [(1, 5), (1, -4), (1, 2, 7), (Ellipsis, 7), (1, Ellipsis, 9),
                                 (None, 1, None, 5), (slice(None), 0, 9),
                                 (0, None, slice(None), 4)], ids=repr)
def test_an_integer_index_out_of_range_names_its_axis_as_numpy(key):
    # hop named the axis of the array left after the earlier integers
    # ('axis 0' for x[1, 5])
    x = np.arange(24.0).reshape(2, 3, 4)[:, :, :3] if len(key) > 2 else M23
    want, eager, compiled = _three_ways(lambda a: a[key], x)
    assert want[0][0] is IndexError
    assert eager == want
    assert compiled == want


# ------------------------------------------------------ linspace, take

V4 = np.array([3.0, 1.0, 2.0, 1.0])

LINSPACES = {
    "int dtype floors": lambda m, x: m.linspace(-1, x[1] - 1, 3, dtype=int),
    "int8 dtype floors": lambda m, x: m.linspace(x[0] * -1, 0, 4, dtype=np.int8),
    "retstep": lambda m, x: m.linspace(0, x[0], 4, retstep=True),
    "retstep of one": lambda m, x: m.linspace(0, x[0], 1, retstep=True),
    "retstep of none": lambda m, x: m.linspace(0, x[0], 0, retstep=True),
    "retstep float32": lambda m, x: m.linspace(0, x[0], 3, dtype=np.float32, retstep=True),
    "retstep of arrays": lambda m, x: m.linspace(x[:2], x[2:], 3, retstep=True),
    "axis 1": lambda m, x: m.linspace(x[:2], x[2:], 3, axis=1),
    "axis -1": lambda m, x: m.linspace(x[:2], x[2:], 3, axis=-1),
    "axis 2": lambda m, x: m.linspace(x[:2], x[2:], 3, axis=2),
    "axis 1 of scalars": lambda m, x: m.linspace(0, x[0], 3, axis=1),
}


@pytest.mark.parametrize("case", LINSPACES)
def test_linspace_is_numpys(case):
    # hop's linspace (compiled code's) truncated toward 0 for an integer
    # dtype where NumPy floors, gave the step of scalar bounds as a 0-d
    # array (NumPy's a scalar) and refused axis=
    f = LINSPACES[case]
    want = _run(lambda: f(np, V4.copy()))
    assert _run(lambda: f(hnp, hnp.asarray(V4.copy()))) == want
    assert _run(lambda: hop.compile(lambda a: f(np, a))(V4.copy())) == want
    assert _run(lambda: hop.compile(lambda a: f(hnp, a))(V4.copy())) == want


TAKES = {
    "clip": lambda x: np.take(x, [0, 9, -9], mode="clip"),
    "wrap": lambda x: np.take(x, [-9, 5, -1], mode="wrap"),
    "a first letter": lambda x: np.take(x, [7], mode="c"),
    "np.WRAP": lambda x: np.take(x, [7], mode=np.WRAP),
    "an unknown mode": lambda x: np.take(x, [1], mode="x"),
    "wrap along an axis": lambda x: np.take(x.reshape(2, 2), [[3, -1]], axis=1, mode="wrap"),
    "clip of a scalar index": lambda x: np.take(x, 5, mode="clip"),
    "method clip": lambda x: x.take([7], mode="clip"),
    "int8 indices": lambda x: np.take(x, np.array([9, -9], np.int8), mode="wrap"),
    "from an empty axis": lambda x: np.take(x[:0], [1], mode="clip"),
    "nothing from an empty axis": lambda x: np.take(x[:0], [], mode="wrap"),
    "raise from an empty axis": lambda x: np.take(x[:0], [0]),
    "out of range": lambda x: np.take(x, np.array([5, -7])),
    "an empty list": lambda x: np.take(x, []),
    "a list of floats": lambda x: np.take(x, [1.0, 2.7]),
    "an array of floats": lambda x: np.take(x, np.array([1.7, -1.2])),
    "an array of uint64": lambda x: np.take(x, np.array([1], np.uint64)),
    "an array of bools": lambda x: np.take(x, np.array([True, False])),
}


@pytest.mark.parametrize("case", TAKES)
def test_take_modes_and_indices_are_numpys(case):
    # hop refused mode='clip' and 'wrap', raised its OutOfBoundsError eagerly
    # for an index out of range and its DTypeError for np.take(x, []), and
    # took from an array of floats NumPy refuses
    want, eager, compiled = _three_ways(TAKES[case], np.arange(4.0))
    assert eager == want
    assert compiled == want


# ---------------------------------------------------------------- conj()

CONJS = [
    lambda x: x.conj() is x, lambda x: x.conjugate() is x, lambda x: np.conj(x) is x,
    lambda x: (x.conj().__setitem__(0, 7.0), x)[1],
    lambda x: (lambda o: (x.conj(o), o)[1])(np.empty(3, np.float32)),
    lambda x: x.conj(np.empty(3, int)), lambda x: x.conj(3), lambda x: x.conj(np.empty(2)),
    lambda x: (x > 0).conj(), lambda x: (x + 1j).conj(),
    lambda x: (lambda o: ((x + 1j).conj(o), o)[1])(np.empty(3, complex)),
    lambda x: x.sum().conj(),
]


@pytest.mark.parametrize("f", CONJS)
def test_conj_method_of_a_real_array_is_the_array_itself(f):
    # NumPy's PyArray_Conjugate gives a real array itself (a write into it
    # is the array's), or out with the array written into it; hop copied
    # and took no out
    want, eager, compiled = _three_ways(f, np.arange(3.0))
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("f", [lambda x: x.real is x, lambda x: np.real(x) is x,
                               lambda x: (x.real.__setitem__(0, 5.0), x)[1],
                               lambda x: x.sum().real, lambda x: (x + 1j).real is x,
                               lambda x: x.astype(np.float32).real.dtype])
def test_real_of_a_real_array_is_the_array_itself(f):
    # NumPy's array_real_get gives a real array itself; hop a new view
    want, eager, compiled = _three_ways(f, np.arange(3.0))
    assert eager == want
    assert compiled == want


# ----------------------------------------------- quantiles' interpolation=

QUANTILES = [
    lambda x: np.percentile(x, 40, interpolation="lower"),
    lambda x: np.quantile(x, 0.4, interpolation="linear"),
    lambda x: np.nanpercentile(x, 40, interpolation="lower"),
    lambda x: np.nanquantile(x, 0.4, interpolation="higher"),
    lambda x: np.percentile(x, 40, interpolation="lower", method="nearest"),
    lambda x: np.percentile(x, 40, interpolation="bogus"),
    lambda x: np.percentile(x, 400, interpolation="lower"),
    lambda x: np.quantile(x, [0.2, 0.4], axis=0, interpolation="midpoint"),
    lambda x: np.percentile(x, 400),
    lambda x: np.percentile(x, [10, -5]),
]


@pytest.mark.parametrize("f", QUANTILES)
def test_quantiles_interpolation_argument_is_numpys_deprecated_method(f):
    # NumPy 1.24 warns for interpolation= (a DeprecationWarning; with a
    # method too a TypeError), which hop took silently; a percentile beyond
    # 100 said 'range [0, 1]'
    want, eager, compiled = _three_ways(f, np.arange(5.0))
    assert eager == want
    assert compiled == want


UFUNC_ORDERS = [
    lambda x: np.add(x, 1, order="F").flags.f_contiguous,
    lambda x: np.add(x, 1, order="F").strides, lambda x: np.sin(x, order="F").strides,
    lambda x: np.add(x.T, 1, order="C").strides, lambda x: np.add(x.T, 1, order="A").strides,
    lambda x: np.add(x, 1, order="A").strides, lambda x: np.add(x, 1, order="X"),
    lambda x: np.add(x, x.T.T, order="f").strides,
    lambda x: np.multiply(x, 2, order="F", dtype=np.float32).strides,
    lambda x: np.negative(x, order="F"), lambda x: np.add(x, 1, order=None).strides,
]


@pytest.mark.parametrize("f", UFUNC_ORDERS)
def test_ufunc_order_argument_is_numpys_memory_order(f):
    # hop's eager ufuncs read no order= (np.add(x, 1, order='F') was C-ordered)
    want, eager, compiled = _three_ways(f, M23)
    assert eager == want
    assert compiled == want


# ------------------------------------------- NumPy's warnings, every call

PER_CALL_WARNINGS = [
    (lambda x: np.nonzero(x), (np.array(2.0),)),
    (lambda x: np.take(x, [5], mode="C"), (np.arange(3.0),)),
    (lambda x: np.choose([0, 1], [x, x], mode="w"), (np.arange(2.0),)),
    (lambda x, y: np.linalg.lstsq(x, y)[0], (np.eye(2), np.ones(2))),
    (lambda x: np.zeros(None) + x, (np.arange(2.0),)),
    (lambda x: bool(x[:0]), (np.arange(2.0),)),
    (lambda x: x == x[:2], (np.arange(3.0),)),
    (lambda x: np.percentile(x, 50, interpolation="lower"), (np.arange(3.0),)),
]


@pytest.mark.parametrize("f,args", PER_CALL_WARNINGS)
def test_numpys_argument_warnings_are_given_on_every_compiled_call(f, args):
    # a warning hop gave while tracing was the first compiled call's only
    def warned():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            c(*[a.copy() for a in args])
        return [(x.category, str(x.message)) for x in w
                if not str(x.message).startswith("hop.compile: ")]

    want = _run(lambda: f(*[a.copy() for a in args]))[1]
    assert want
    c = hop.compile(f)
    assert [warned(), warned(), warned()] == [want] * 3


def test_a_numpy_scalars_conj_is_a_new_scalar_and_a_real_arrays_is_itself():
    # NumPy: a real array's conj() is the array itself, a scalar's (real or
    # complex) a new scalar; the merge of two branches' conj() returned a
    # real scalar itself (found by the view campaign: v1 = a.sum().conj())
    for mod, a in ((np, np.arange(3.0)), (hnp, hnp.asarray(np.arange(3.0)))):
        s = a.sum()
        assert s.conj() is not s and s.conj() == s
        assert a.conj() is a
        z = (a + 1j).sum()
        assert z.conj() is not z and z.conj() == np.conj(complex(z))
    f = hop.compile(lambda a: (a.sum(), a.sum().conj()))
    s, c = f(np.arange(3.0))
    assert c is not s and type(c) is np.float64 and c == 3.0


def test_a_bool_scalars_conj_is_a_bool_scalar_eagerly_and_compiled():
    # NumPy's bool_.conjugate() is the 0-d array's method (the array itself),
    # returned as a new bool_; the conjugate ufunc would give int8. hop ran
    # the ufunc (found by the scalar campaign in a CI run: eager int8 vs bool_)
    assert type(np.bool_(True).conjugate()) is np.bool_
    for v in (np.bool_(True), np.int8(-3), np.float16(2.5), np.uint64(7)):
        assert type(hop.compile(lambda a: a.conjugate())(v)) is type(v)
        g = lambda a: (a == a).all().conj() if a.dtype == np.bool_ else (a + 0).conj()  # noqa: E731
        want, got = g(v), hop.compile(g)(v)
        assert type(got) is type(want) and got == want
    s = hnp.asarray(np.array([True, False])).any()
    assert type(s.conj()) is type(s) and s.conj() is not s and s.conj().dtype == np.bool_
    f = hop.compile(lambda a: a.any().conj())
    got = f(np.array([False, True]))
    assert type(got) is np.bool_ and got


# ---------------------------------- linspace family of float16/float32 bounds

F32_BOUNDS = np.array([0.0, 1.0], np.float32)
SPACES = {
    "linspace f32 arrays": lambda a: np.linspace(a, a + 2, 3),
    "linspace f32 array, retstep": lambda a: np.linspace(a, 2, 5, retstep=True),
    "linspace f16 array, int": lambda a: np.linspace(a.astype(np.float16), 1, 3),
    "linspace f16 array, a 0-d bound beyond float16": lambda a: np.linspace(
        a.astype(np.float16), 1e5, 3),
    "linspace f32 0-d arrays": lambda a: np.linspace(a[0], a[1], 3),
    "linspace f32 NumPy scalars": lambda a: np.linspace(np.float32(0), np.float32(1), 3),
    "linspace int8 array": lambda a: np.linspace(a.astype(np.int8), 5, 4),
    "linspace c64 array": lambda a: np.linspace(a.astype(np.complex64), 5, 4),
    "linspace f16 array, dtype int": lambda a: np.linspace(a.astype(np.float16), 5, 4, dtype=int),
    "linspace f32, axis": lambda a: np.linspace(a, [3, 4], 4, endpoint=False, axis=1),
    "logspace f32 arrays": lambda a: np.logspace(a, a + 2, 3),
    "logspace f16 array": lambda a: np.logspace(a.astype(np.float16), 2, 4),
    # (bounds whose float32 log10 is exact: hop's float32 log10 of 3 is two
    # ulps from NumPy's)
    "geomspace f32 arrays": lambda a: np.geomspace(a * 9 + 1, a * 990 + 10, 3),
    "geomspace f16 array overflows": lambda a: np.geomspace(a.astype(np.float16) + 1, 5, 4),
    "geomspace int array": lambda a: np.geomspace(a.astype(np.int32) + 1, 8, 4),
}


@pytest.mark.parametrize("case", SPACES)
def test_linspace_family_of_single_precision_bounds_keeps_their_dtype(case):
    # NumPy 1.24: start * 1.0, stop * 1.0, then result_type(start, stop,
    # float(num)) casting by value (hop took float64 for every float bound)
    want, eager, compiled = _three_ways(SPACES[case], F32_BOUNDS)
    assert eager == want
    assert compiled == want


# ----------------------------------------------------- arange's fill rule

ARANGE_FILLS = {
    "int dtype, half steps": lambda x: np.arange(0, 5, 0.5, dtype=int),
    "int8 dtype, 1.5 steps": lambda x: np.arange(-3, 3, 1.5, dtype=np.int8),
    "int16 dtype, negative steps": lambda x: np.arange(5, 0, -0.7, dtype=np.int16),
    "int8 dtype wraps": lambda x: np.arange(0, 300.0, 100, dtype=np.int8),
    "uint8 dtype, negative start": lambda x: np.arange(-2.0, 3, dtype=np.uint8),
    "uint64 dtype, negative int start": lambda x: np.arange(-1, 3, dtype=np.uint64),
    "uint64 dtype, float start": lambda x: np.arange(0.5, 4, dtype=np.uint64),
    "float32 tenths": lambda x: np.arange(0, 1, 0.1, dtype=np.float32),
    "float32 large": lambda x: np.arange(0.0, 3e7, 1e6, dtype=np.float32),
    "float16 tenths": lambda x: np.arange(0, 1, 0.1, dtype=np.float16),
    "float16 beyond 2048": lambda x: np.arange(0, 3000, 1.0, dtype=np.float16),
    "float64 tenths": lambda x: np.arange(0, 1, 0.1, dtype=np.float64),
    "complex128 dtype": lambda x: np.arange(0, 5, 0.5, dtype=complex),
    "complex64 dtype": lambda x: np.arange(0, 1, 0.1, dtype=np.complex64),
    "float32 NaN stop": lambda x: np.arange(0, np.nan, 1.0, dtype=np.float32),
    "float32 zero step": lambda x: np.arange(0, 10, 0.0, dtype=np.float32),
    "int32 dtype, a size and half steps": lambda x: np.arange(0, x.shape[0], 0.5, dtype=np.int32),
    # NumPy's TypeError past two booleans, and its other corners (bug10)
    "bool of two": lambda x: np.arange(0, 2, dtype=bool),
    "bool of two floats": lambda x: np.arange(0.0, 1.5, 0.7, dtype=bool),
    "bool of three": lambda x: np.arange(3, dtype=bool),
    "bool of none": lambda x: np.arange(0, dtype=bool),
    "complex bounds, empty": lambda x: np.arange(0, 3j, 1j),
    "complex bounds": lambda x: np.arange(1j, 5 + 3j, 1 + 1j),
    "stop by keyword": lambda x: np.arange(stop=3),
    "start and stop by keyword": lambda x: np.arange(start=1, stop=3),
    "stop by keyword, float32": lambda x: np.arange(stop=3.0, dtype=np.float32),
    "no stop": lambda x: np.arange(),
}


@pytest.mark.parametrize("case", ARANGE_FILLS)
def test_arange_with_a_dtype_fills_as_numpys(case):
    # NumPy converts start and start + step into the dtype, then steps by
    # their difference in the dtype (hop computed start + i * step in
    # float64 and cast each element)
    want, eager, compiled = _three_ways(ARANGE_FILLS[case], np.zeros(7))
    assert eager == want
    assert compiled == want


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.uint64])
def test_arange_with_a_dtype_is_numpys_bits(dt):
    want = np.arange(0.3, 40, 0.7, dtype=dt)
    for got in (hnp.arange(0.3, 40, 0.7, dtype=dt),
                hop.compile(lambda: np.arange(0.3, 40, 0.7, dtype=dt))()):
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
