"""A differential campaign on ndarray methods, attributes and Python's
protocol on arrays (the first rule): astype, copy, fill, item, itemset,
tolist, view, transposes, ravel and flatten, squeeze, repeat, clip, round,
cumsum, argsort and sort, searchsorted, nonzero, any and all, dot, conj,
real and imag, flags and sizes, len, iter, bool/int/float/complex/index,
`in`, hash, comparisons with None, strings and lists, the in-place
operators, str/repr/format, divmod, pow and matmul, on arrays of every
kind (0-d, empty, Fortran-ordered, strided).

Each expression runs by NumPy 1.24, eagerly on a hop.numpy array, compiled
with the array an argument and compiled with the array a global of the
function; the four agree on the result's type() (a NumPy scalar or a 0-d
array), dtype, shape, strides and contiguity, bytes, whether it shares
memory with the input, the input's state after the call, the warnings
(category and text) and the error (type and text).  The default pass runs
40 expressions; HOP_TEST_BUDGET=stress ten times as many."""

import operator
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hop
import hop.numpy as hnp

from budget import examples, pinned
from test_numpy_operand_campaign import _as_numpy

INPUTS = {
    "f": "np.array([[1.5, np.nan, -0.0], [2.5, -3.25, 4.0]])",
    "i": "np.array([[3, -1, 2], [0, 7, -5]])",
    "u8": "np.array([200, 3, 0, 255], np.uint8)",
    "b": "np.array([True, False, True])",
    "c": "np.array([1 + 2j, -1j, 3.5])",
    "f32": "np.array([0.1, 2.5, -7.5], np.float32)",
    "i8": "np.array([-128, 5, 127], np.int8)",
    "z": "np.array(2.5)",
    "zi": "np.array(-7, np.int32)",
    "zb": "np.array(True)",
    "zc": "np.array(1 - 2j)",
    "one": "np.array([4])",
    "ft": "np.asfortranarray(np.arange(6.0).reshape(2, 3))",
    "s": "np.arange(10)[::3]",
    "i3": "np.arange(24).reshape(2, 3, 4)",
    "col": "np.array([[-0.0], [1.0], [np.nan]])",
}


def _iop(op):
    def f(a, b):
        a = op(a, b)
        return a
    return f


def _set(a, name, v):
    setattr(a, name, v)


_NS = {"np": np, "operator": operator, "_set": _set, "_iadd": _iop(operator.iadd),
       "_imul": _iop(operator.imul), "_itruediv": _iop(operator.itruediv),
       "_ifloordiv": _iop(operator.ifloordiv), "_ipow": _iop(operator.ipow),
       "_ior": _iop(operator.ior)}


def _body(expr):
    """`stmt|value`: the statement runs, then (its value, value) returns."""
    if "|" in expr and not expr.startswith("a |"):
        stmt, ret = expr.split("|", 1)
        return f"    r0 = {stmt}\n    return (r0, {ret})"
    return f"    return {expr}"


def _functions(expr):
    """f(a) doing expr on its argument, and g() doing it on the global G
    (with g's namespace, where G goes)."""
    ns = dict(_NS)
    exec(f"def f(a):\n{_body(expr)}\n", ns)  # noqa: S102 (the tests' own text)
    gns = dict(_NS)
    exec(f"def g():\n    a = G\n{_body(expr)}\n", gns)  # noqa: S102
    return ns["f"], gns["g"], gns


def _numpy_of(x):
    """x with hop.numpy's arrays and scalars as NumPy's, in lists too."""
    if isinstance(x, list):
        return [_numpy_of(v) for v in x]
    return _as_numpy(x)


def describe(x, inp=None):
    """What the first rule compares of a result: its type, and of an array
    its dtype, shape, strides, contiguity, writeability, bytes and whether
    it shares memory with the input inp."""
    if isinstance(x, (tuple, list)):
        return type(x).__name__, tuple(describe(v, inp) for v in x)
    if isinstance(x, np.ndarray):
        # (an empty array's strides: NumPy's are 0 or the item size by the
        # path that made it, which nothing can observe through its items)
        return ("ndarray", str(x.dtype), x.shape, x.strides if x.size else None,
                x.flags.c_contiguous,
                x.flags.f_contiguous, x.flags.writeable, x.tobytes(),
                None if inp is None else bool(np.shares_memory(x, inp)))
    if isinstance(x, np.generic):
        return type(x).__name__, str(x.dtype), x.tobytes()
    if isinstance(x, (float, complex)):
        return type(x).__name__, repr(x)
    if isinstance(x, (bytes, str, int, bool, type(None))):
        return type(x).__name__, repr(x)
    return type(x).__name__, str(x)


def outcome(call, inp):
    """(the described result or error, the warnings), NumPy's errstate as
    the caller's."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            d = describe(_numpy_of(call()), inp)
        except Exception as e:  # noqa: BLE001 (compared by the caller)
            d = ("raised", type(e).__name__, str(e))
    ws = tuple(sorted({(x.category.__name__, str(x.message)) for x in w
                       if not str(x.message).startswith("hop.")}))
    return d, ws


def four_ways(expr, src):
    """{how: (outcome, the input after the call)} for NumPy, eager,
    compiled with an argument and compiled with a global."""
    f, g, gns = _functions(expr)
    make = lambda: eval(src, {"np": np})  # noqa: E731,S307 (the lists above)
    out = {}
    a = make()
    out["numpy"] = outcome(lambda: f(a), a), describe(a)
    h = hnp.asarray(make())
    out["eager"] = outcome(lambda: f(h), np.asarray(h)), describe(np.asarray(h))
    a = make()
    out["compiled"] = outcome(lambda: hop.compile(f)(a), a), describe(a)
    gns["G"] = make()
    out["global"] = outcome(lambda: hop.compile(g)(), gns["G"]), describe(gns["G"])
    return out


def differences(expr, src):
    out = four_ways(expr, src)
    want = out.pop("numpy")
    return [f"{how}: {got!r}\n  NumPy: {want!r}" for how, got in out.items() if got != want]


def check(expr, name):
    bad = differences(expr, INPUTS[name])
    assert not bad, f"{expr} on {name}:\n" + "\n".join(bad)


# The expressions the campaign draws ({} the array); the stress budget's
# pinned runs met the differences the regressions below keep.  Left out
# (docs/ARCHITECTURE.md and the report of this campaign): order='K' ravel
# and flatten, setflags, resize, byteswap, newbyteorder, getfield, ctypes,
# owndata, strings (astype('U')), float16 overflow warnings, float16 sums
# over an outer axis, a complex searchsorted of unsorted data, and the
# layout of round/imag/__copy__ of a Fortran-ordered array.
METHODS = [
    "a.astype(np.float32)", "a.astype(np.int8)", "a.astype(bool)", "a.astype(a.dtype, copy=False)",
    "a.astype(np.complex64, casting='safe')", "a.astype(np.int16, casting='same_kind')",
    "a.copy()", "a.copy(order='F')", "a.fill(3)|a", "a.fill(-1.5)|a", "a.item(0)", "a.item(-1)",
    "a.itemset(0, 9)|a", "a.tolist()", "a.tobytes()", "a.view(np.uint8)", "a.T", "a.transpose()",
    "a.swapaxes(0, -1)", "a.flatten()", "a.flatten('F')", "a.ravel()", "a.squeeze()",
    "a.squeeze(axis=0)", "a.repeat(2)", "a.repeat(2, axis=0)", "a.clip(0, 2)", "a.clip(min=0)",
    "a.clip(max=1)", "a.round()", "a.round(1)", "a.round(-1)", "a.cumsum()", "a.cumsum(axis=0)",
    "a.cumprod()", "a.argsort()", "a.argsort(kind='stable')", "a.sort()|a", "a.sort(axis=0)|a",
    "a.searchsorted(2)", "a.nonzero()", "a.any()", "a.all(axis=-1, keepdims=True)",
    "a.any(axis=0)", "a.dot(2)", "a.dot(a.T)", "a.conj()", "a.real", "a.imag", "a.size",
    "a.ndim", "a.nbytes", "a.itemsize", "a.shape", "len(a)", "list(a)", "bool(a)", "int(a)",
    "float(a)", "complex(a)", "operator.index(a)", "2 in a", "np.nan in a", "a == None",
    "a != None", "a == 'x'", "a == [1, 2, 3]", "a < [1, 2, 3]", "(1, 2, 3) + a", "[0.5] * a",
    "_iadd(a, 1.5)", "_iadd(a, 1)", "_imul(a, 2)", "_itruediv(a, 2)", "_ifloordiv(a, 2)",
    "_ior(a, 1)", "str(a)", "repr(a)", "format(a, '')", "str(a.sum())", "repr(a.max())",
    "divmod(a, 2)", "divmod(a, 0)", "a ** -1", "a ** 2", "2 ** a", "pow(a, 2, 3)", "a @ a",
    "a @ [1, 2, 3]", "-a", "~a", "abs(a)", "+a", "a.max(initial=3)", "a.ptp()", "a.prod()",
    "a.mean()", "a.argmax()", "a.take([0, 1])", "a.compress([True, False])", "hash(a)",
    "a.__array__()", "round(a)", "a.trace()", "a.reshape(-1)", "a.sum(axis=0, keepdims=True)",
    "a.__copy__()", "a.__deepcopy__({})",
]
NAMES = sorted(INPUTS)
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                       HealthCheck.data_too_large])


# pinned (budget.pinned): on 2026-11-30 every expression on every array
# (108 x 16, all four ways) and a HOP_TEST_BUDGET=stress run agreed; the
# probe that found the regressions below drew 224 expressions (/tmp).
@settings(max_examples=examples(40), derandomize=pinned(), **_SETTINGS)
@given(st.sampled_from(METHODS), st.sampled_from(NAMES))
def test_methods_and_protocol_agree_with_numpy(expr, name):
    """NumPy 1.24, eager hop.numpy, compiled with an argument and compiled
    with a global agree on everything describe() and outcome() see."""
    check(expr, name)


# ------------------------------------------------------------ regressions

@pytest.mark.parametrize("expr", ["a.fill(3)|a", "a.sort()|a", "a.itemset(0, 9)|a",
                                  "a.put([0], [9])|a", "a.partition(1)|a", "a.__contains__(1)",
                                  "a.sort(kind='bogus')|a"])
@pytest.mark.parametrize("name", ["f", "i"])
def test_methods_of_a_global_array_across_a_graph_break(expr, name):
    # compiled on a global were AttributeError ("'numpy.ndarray' object has
    # no attribute '_fill_method'"): a function without ndarray arguments
    # was not in NumPy's mode, and the break handed the resume hop.numpy's
    # name of the method
    check(expr, name)


@pytest.mark.parametrize("expr,name", [("a ** -2.0", "f"), ("a ** -2.0", "u8"),
                                       ("a.astype(np.int8)", "f"),
                                       ("a ** -1", "ft")])
def test_floating_point_warnings_of_a_global_array(expr, name):
    # compiled on a global gave no RuntimeWarning (and `u8 ** -2.0` other
    # bits than NumPy's): the call had no NumPy argument, so hop did not
    # run it again by NumPy
    check(expr, name)


def test_errstate_raise_with_a_global_array_raises():
    # returned [1, inf]: the plan's call was not NumPy's without ndarray
    # arguments
    ns = {"G": np.array([1.0, 0.0])}
    exec("def f():\n    return 1 / G\n", ns)  # noqa: S102
    c = hop.compile(ns["f"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c()
    for _ in range(2):
        with np.errstate(divide="raise"), \
                pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            c()


@pytest.mark.parametrize("expr", ["a == None", "a != None", "None == a", "a == object()",
                                  "a != {}", "a == 'x'", "'x' != a", "a == [1, 2, 3]",
                                  "a != [[1, 2]] * 3"])
@pytest.mark.parametrize("name", ["f", "u8", "zi", "one"])
def test_equality_with_objects_no_ufunc_takes(expr, name):
    # were Python's identity answer (False, True) for None and objects,
    # where NumPy compares elementwise (an array, an np.bool_ of a 0-d
    # array); no FutureWarning for a str; a ValueError for a list whose
    # shape does not broadcast (NumPy: False, with a DeprecationWarning)
    check(expr, name)


@pytest.mark.parametrize("expr", ["s == None", "s != None", "None == s", "s == object()",
                                  "s == 'x'", "s != {}"])
def test_equality_of_numpy_scalars_with_objects(expr):
    want = eval(expr, {"s": np.float32(1.5)})  # noqa: S307
    got = _as_numpy(eval(expr, {"s": hnp.asarray(np.array([1.5], np.float32)).sum()}))  # noqa
    assert type(got) is type(want) and got == want


@pytest.mark.parametrize("expr", ["a.item(0)", "a.item(-1)", "a.item(4)", "a.item(99)",
                                  "a.item((1, 2))", "a.item(1, 1)", "a.item(True)",
                                  "a.item(1.0)", "a.item(())", "a.itemset(7)|a",
                                  "a.itemset((0, 1), 9)|a", "a.itemset(9, 1)|a",
                                  "a.itemset(1, 0, 2)|a"])
@pytest.mark.parametrize("name", ["f", "u8", "z", "one", "i3"])
def test_item_and_itemset_read_numpys_flat_index(expr, name):
    # a.item(0) of a 2-d array was ValueError (hop indexed a row, then
    # wanted one element), of a 0-d array IndexError; a.itemset(7) of a
    # multi-element array filled every element (NumPy: ValueError);
    # item(1, 1) of a 1-d array an IndexError for NumPy's ValueError
    check(expr, name)


@pytest.mark.parametrize("expr", ["a[1, 1]", "a[0, -3]", "a[0, None, 0, 7]", "a[None, 1, 0, 3]"])
def test_an_integer_index_out_of_bounds_names_the_axis_it_indexes(expr):
    # hop named the axis of the array left after the indices before it
    # (axis 0 for a[1, 1] of a (2, 1, 3) array: NumPy's axis 1)
    bad = differences(expr, "np.ones((2, 1, 3))")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("expr,name", [
    ("a.dot(2)", "f"), ("a.dot(2)", "u8"), ("a.dot(0)", "f"), ("a.dot(2.0)", "f32"),
    ("a.dot(np.array(0.0))", "c"), ("a.dot(2 + 0j)", "c"), ("a.dot(np.float32(-1))", "f32"),
    ("np.dot(2, a)", "i8"), ("a.dot(True)", "b"), ("a.dot(np.array([0.0]))", "col"),
    ("a.dot(np.array([2.0]))", "col"), ("a.T.dot(np.array([[0.0, -0.0, 1.0]]))", "col"),
    ("a.dot(np.array([-0.0]))", "one"), ("a.dot(np.array(-0.0))", "z"),
    ("a.dot(a)", "i3"), ("a.dot(a.T)", "i3")])
def test_dot_with_a_scalar_operand_is_numpys_axpy(expr, name):
    # hop's dot of a 0-d operand was the ufunc multiply: value-based dtypes
    # (uint8 . 2 was uint8, NumPy's int64; float32 . 2.0 float32 for
    # float64) and -0.0 * 2 = -0.0, nan * 0 = nan, where NumPy's BLAS axpy
    # gives 0 + alpha * x (+0.0) and zeros for alpha == 0; the same for a
    # one-element operand of at most 2 dims ((3, 1) . (1,)); and a dot of
    # two 3-d arrays that do not align was a ShapeError of reshape
    check(expr, name)


@pytest.mark.parametrize("expr,name", [
    ("a.round()", "i"), ("a.round(1)", "u8"), ("np.round(a)", "i8"), ("np.around(a, 2)", "s"),
    ("a.round(-1)", "i"), ("a.round()", "zi"), ("a.conj()", "f"), ("a.conjugate()", "i"),
    ("a.conj()", "z"), ("a.conj()", "zc"), ("a.conj()", "c"), ("a.imag", "f"), ("a.imag", "b"),
    ("a.mT", "f"), ("a.T.mT", "i3"), ("a.nosuch", "f")])
def test_methods_that_return_the_array_itself_and_attributes_numpy_has(expr, name):
    # an integer array's round(d >= 0) and a real array's conj() are the
    # array itself in NumPy (shares its memory), hop's were copies; a real
    # array's imag is read-only; a complex 0-d array's conj() a NumPy
    # scalar; NumPy 1.24 has no .mT (hop gave a transpose); an attribute
    # error names numpy.ndarray (was 'ndarray', 'NumpyArg')
    check(expr, name)


def test_round_and_conj_are_the_same_object():
    a = hnp.asarray(np.arange(3))
    assert a.round() is a and np.round(a) is a and np.around(a, 1) is a and a.conj() is a
    assert np.round(a, -1) is not a


@pytest.mark.parametrize("expr,name", [
    ("a.astype(np.float32)", "c"), ("a.astype(np.int8)", "zc"), ("a.astype(bool)", "c"),
    ("a.astype(np.float64, copy=False)", "c"), ("a.real.astype(np.float32)", "c"),
    ("a.astype(np.complex64, casting='safe')", "z"), ("a.astype(np.uint8, casting='safe')", "zi"),
    ("a.astype(np.int8, casting='same_kind')", "z"), ("a.astype(np.float32, casting='safe')", "z"),
    ("a.astype(np.int8, casting='same_kind')", "f"), ("a.sum().astype(np.float16, casting='safe')",
                                                       "f32")])
def test_astype_warns_and_casts_0d_values_as_numpy(expr, name):
    # complex to a real dtype gave no ComplexWarning; a 0-d array's casting
    # rule is NumPy 1.24's by value (2.5 to complex64 is 'safe') with the
    # message "Cannot cast scalar from"
    check(expr, name)


@pytest.mark.parametrize("expr,name", [("_iadd(a, 1)|a", "f"), ("a.clip(0, 2, out=a)|a", "f"),
                                       ("np.add(a, 1, out=a)|a", "i")])
def test_a_global_written_in_place_through_a_local_name(expr, name):
    # `a = G; a += 1` compiled was UnsupportedError ("writes the ndarray
    # global 'G' ... which shares memory with the ndarray global 'G'"):
    # the capture over G's memory was checked against G itself
    check(expr, name)
    f, g, gns = _functions(expr.replace("_iadd(a, 1)", "operator.iadd(a, 1)"))
    gns["G"] = np.array([1.5, -2.0, 3.0])
    c = hop.compile(g)
    for _ in range(2):
        want = eval(INPUTS[name], {"np": np})  # noqa: S307
        f(want)
        gns["G"] = eval(INPUTS[name], {"np": np})  # noqa: S307
        c()
        assert gns["G"].tobytes() == want.tobytes()


_FRESH = """
import numpy as np, hop
G = np.array([1.5, -2.0, 3.0])
def f():
    a = G
    a += 1
    return a.clip(0, 2, out=a)
print(hop.compile(f)().tolist(), G.tolist())
"""


def test_the_first_compile_of_a_process_writes_a_global_in_place():
    # (hop.numpy not imported yet) was UnsupportedError ("numpy.add(...,
    # out=...) writes the caller's array in place, which hop cannot do in
    # this trace"): the trace started without hop.numpy's storage run
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.environ.get("HOP_PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.stdout.strip() == "[2.0, 0.0, 2.0] [2.0, 0.0, 2.0]", out.stderr[-2000:]


@pytest.mark.parametrize("src", ["G.tolist()", "str(G)", "repr(G)", "format(G)", "G.tobytes()",
                                 "'%s' % G", "'{}'.format(G)", "np.asarray(G).tolist()",
                                 "Z.tolist()", "str(Z)", "G.__array__() * 2", "list(G)",
                                 "f'{G}'", "G.item(1)"])
def test_what_python_reads_of_a_global_array_is_this_calls_value(src):
    # compiled, these returned the value of the first call's global on every
    # later call (tolist, str, repr, format, tobytes of an ndarray global
    # were read once while tracing, a constant of the plan)
    G, Z = np.array([1.5, -2.0, 3.0]), np.array(2.5)
    ns = {"G": G, "Z": Z, "np": np}
    exec(f"def f():\n    return {src}\n", ns)  # noqa: S102
    c = hop.compile(ns["f"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a break, an identity guard: warned)
        c()
        for k in range(3):
            G[:] = [100.0 + k, 5.0, -7.0]
            Z[()] = -1.25 * k
            got, want = c(), ns["f"]()
            assert type(got) is type(want)
            assert (np.array_equal(got, want) if isinstance(want, np.ndarray) else got == want)


@pytest.mark.parametrize("expr,src", [
    ("a.std(ddof=1)", "np.array([0.5, -1.5, 65504.0], np.float16)"),
    ("a.var()", "np.array([300.0, 1.0, 2.0], np.float16)"),
    ("np.var(a, axis=-1, ddof=1)", "np.array([[3.3, 1.1, 7.7, 0.01], [9, 8, 7, 6]], np.float16)"),
    ("a.std(axis=1, keepdims=True)", "np.array([[3.3, 1.1, 7.7, 0.01], [9, 8, 7, 6]], "
                                     "np.float16)"),
    ("a.var(ddof=5)", "np.array([1.0, 2.0], np.float16)")])
def test_var_and_std_of_float16_compute_in_float16_as_numpy(expr, src):
    # hop computed in float32 (as mean does): a finite 7608 where NumPy's
    # float16 squares overflow to inf, and other last bits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = eval(expr, {"np": np, "a": eval(src, {"np": np})})  # noqa: S307
        got = _as_numpy(eval(expr, {"np": np, "a": hnp.asarray(eval(src, {"np": np}))}))  # noqa
        comp = hop.compile(lambda a: eval(expr, {"np": np, "a": a}))(eval(src, {"np": np}))  # noqa
    for g in (got, comp):
        assert type(g) is type(want) and np.asarray(g).tobytes() == np.asarray(want).tobytes()


@pytest.mark.parametrize("expr,name", [("bool(a[:0])", "f"), ("bool(a[:0])", "s"),
                                       ("a.__array__(np.float32)", "f32"),
                                       ("a.__array__(np.float64)", "f32")])
def test_bool_of_an_empty_array_and_array_of_its_own_dtype(expr, name):
    # bool() of an empty array was ValueError (NumPy 1.24: False, with a
    # DeprecationWarning); __array__(its own dtype) a copy (NumPy: itself)
    check(expr, name)


@pytest.mark.parametrize("expr,name", [
    ("a.transpose(1, 0)", "u8"), ("a.transpose((1, 0))", "b"), ("a.transpose(0, 0)", "f"),
    ("np.transpose(a, (0, 5))", "f"), ("a.transpose()", "i3"), ("a.swapaxes(0, 1)", "u8"),
    ("a.swapaxes(0, -1)", "z"), ("np.swapaxes(a, 5, 7)", "f"), ("a.squeeze(axis=0)", "z"),
    ("a.squeeze(axis=(0,))", "zi"), ("a.squeeze(axis=1)", "z"), ("np.squeeze(a, -1)", "zb"),
    ("a.sort(axis=None)|a", "f"), ("a.nonzero()", "zb"), ("np.nonzero(a)", "z"),
    ("a.repeat(2, axis=0)", "z"), ("a.repeat([1, 2], axis=0)", "zi"), ("a.repeat(2, axis=1)", "z"),
    ("a[:0].repeat(-1)", "f"), ("a.compress([True, False])", "z"),
    ("a.compress([1, 0, 0, 0, 0])", "s"), ("a.compress([1, 0, 0, 0, 1])", "s"),
    ("a.take([0, 1])", "z"), ("a.take(7)", "f"), ("np.take(a, [[0, -7]], axis=1)", "i"),
    ("a[:0].take(0)", "f"), ("a.take([])", "f"), ("int(a)", "f"), ("float(a)", "u8"),
    ("+a", "b"), ("+a", "zb"), ("divmod(a, 0)", "f"), ("divmod(3, a)", "i"),
    ("divmod(a, 2)", "c"), ("pow(a, 2, 3)", "f"), ("pow(a, 2, 3)", "z")])
def test_numpys_errors_and_0d_cases_of_methods(expr, name):
    # hop's errors were its own (AxisError for transpose's count, no
    # axis1:/axis2: prefix, IndexError of a tuple, OutOfBoundsError and
    # ShapeError of its take op, 'length-1 arrays', _pow()'s argument
    # count, floor_divide/remainder in divmod's warnings and errors), a 0-d
    # array's repeat(axis=0), squeeze(axis=0) and compress raised where
    # NumPy answers, and warnings were missing or worded otherwise (+ of a
    # bool array, nonzero of a 0-d one)
    check(expr, name)


@pytest.mark.parametrize("expr,name", [
    ("a.round()", "ft"), ("a.round(1)", "ft"), ("np.round(a, -1)", "ft"), ("a.imag", "ft"),
    ("a.__copy__()", "ft"), ("a.__deepcopy__({})", "ft"), ("complex(a)", "f"),
    ("complex(a)", "b"), ("list(a)", "f32"), ("list(a)", "i")])
def test_layout_of_new_arrays_and_complex_of_many_elements(expr, name):
    # a Fortran-ordered array's round, imag, __copy__ and __deepcopy__ were
    # C-ordered (NumPy's keep the memory order); complex() of a real array
    # of many elements said 'size-1' (NumPy 1.24's complex: 'length-1')
    check(expr, name)


@pytest.mark.parametrize("expr,name", [
    ("a.ravel(order='K')", "ft"), ("a.flatten('K')", "ft"), ("np.ravel(a, order='K')", "i3"),
    ("a.transpose(2, 0, 1).ravel('K')", "i3"), ("a[:, ::2].T.flatten(order='K')", "i3"),
    ("a.ravel(order='K')", "s"), ("a.flatten('K')", "z"), ("a.T.ravel('K')", "ft")])
def test_ravel_and_flatten_in_memory_order(expr, name):
    # order='K' was hop.UnsupportedError ("reshape with order='K' is not
    # supported"): now the array transposed into its memory order, then C
    check(expr, name)


@pytest.mark.parametrize("where", ["argument", "global"])
def test_setflags_of_the_callers_array_changes_it(where):
    # compiled, a.setflags(write=False) changed hop's array only: the
    # caller's stayed writeable (now the statement runs in Python, on it)
    ns = {"np": np}
    exec("def f(a):\n    a.setflags(write=False)\n    return a.sum()\n"  # noqa: S102
         "def g():\n    G.setflags(write=False)\n    return G.sum()\n", ns)
    x = np.arange(3.0)
    ns["G"] = x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the break: warned)
        r = hop.compile(ns["f"])(x) if where == "argument" else hop.compile(ns["g"])()
    assert r == 3.0 and not x.flags.writeable
