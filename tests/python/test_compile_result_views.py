"""hop.compile returns NumPy's views of the caller's memory as NumPy does:
a view of an argument hop copies on the way in (read-only, negative
strides), a reversed view (a take in hop's graph) and a view of a global
array are views of the caller's array, with NumPy's strides and flags, and
a write through them reaches it (issue 29; docs/ARCHITECTURE.md, "Arguments
and results")."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hop
from budget import examples


def _layout(r):
    return (r.dtype, r.shape, r.strides, r.flags.writeable, r.flags.c_contiguous,
            r.flags.f_contiguous)


def _same_answer(fn, make_args, write=True):
    """fn compiled (twice: the trace's call and the plan's) and eagerly on
    fresh copies of the same arguments: values, dtype, strides, flags, the
    memory shared with each argument, and a write through the result seen in
    the arguments exactly as eagerly."""
    cf = hop.compile(fn)
    for _ in range(2):
        eargs, cargs = make_args(), make_args()
        want, got = fn(*eargs), cf(*cargs)
        assert type(got) is type(want)
        np.testing.assert_array_equal(got, want)
        assert _layout(got) == _layout(want)
        assert [np.shares_memory(got, a) for a in cargs] == \
            [np.shares_memory(want, a) for a in eargs]
        if write and want.size and want.flags.writeable:
            want[...] = -7
            got[...] = -7
            for e, c in zip(eargs, cargs):
                np.testing.assert_array_equal(c, e)
        elif want.size and not want.flags.writeable:
            with pytest.raises(ValueError, match="read-only"):
                got[...] = -7
    return cf


def _read_only(a):
    a.flags.writeable = False
    return a


def test_view_of_a_reversed_argument_is_a_view_with_negative_strides():
    cf = _same_answer(lambda a: a[::2], lambda: (np.arange(8.0)[::-1],))
    assert len(cf.graphs) == 1


def test_view_of_a_read_only_argument_is_read_only_and_shares_its_memory():
    _same_answer(lambda a: a[::2], lambda: (_read_only(np.arange(8.0)),))
    _same_answer(lambda a: a.T, lambda: (_read_only(np.arange(6.0).reshape(2, 3)),))


def test_reversing_slice_of_an_argument_is_numpys_view_not_a_copy():
    _same_answer(lambda a: a[::-1], lambda: (np.arange(5.0),))
    _same_answer(lambda a: a[:, ::-2], lambda: (np.arange(12).reshape(3, 4),))


def test_view_after_a_write_shows_the_written_values_in_the_callers_array():
    def f(a):
        a += 1
        return a[::-1]
    _same_answer(f, lambda: (np.arange(4.0),))


def test_view_of_one_of_two_arguments_shares_memory_with_that_one_only():
    _same_answer(lambda a, b: (a + b, a[1:])[1], lambda: (np.arange(4.0)[::-1], np.ones(4)))


def test_same_size_dtype_view_of_a_read_only_argument_is_read_only():
    _same_answer(lambda a: a.view(np.int64), lambda: (_read_only(np.arange(4.0)),))


def test_results_that_are_not_views_stay_new_arrays():
    cf = _same_answer(lambda a: a[::-1] + 1, lambda: (_read_only(np.arange(4.0)),))
    assert len(cf.graphs) == 1


G = np.arange(6.0).reshape(2, 3)
R = _read_only(np.arange(6.0).reshape(2, 3))


def test_transpose_of_a_global_array_is_a_view_of_it():
    cf = hop.compile(lambda x: G.T)
    for _ in range(2):
        got, want = cf(np.ones(2)), G.T
        assert _layout(got) == _layout(want) and np.shares_memory(got, G)
    got[0, 1] = 100.0
    assert G[1, 0] == 100.0
    G[1, 0] = 3.0


def test_row_of_a_read_only_global_array_is_a_read_only_view_of_it():
    cf = hop.compile(lambda x: R[1])
    got = cf(np.ones(2))
    assert _layout(got) == _layout(R[1]) and np.shares_memory(got, R)
    with pytest.raises(ValueError, match="read-only"):
        got[0] = 1.0


def test_view_of_an_array_the_function_makes_is_new_on_every_call():
    cf = hop.compile(lambda x: np.arange(6.0).reshape(2, 3).T)
    a, b = cf(np.ones(2)), cf(np.ones(2))
    assert not np.shares_memory(a, b)
    a[0, 0] = 9.0
    assert b[0, 0] == 0.0


# ---------------------------------------------------- differential over layouts

_LAYOUTS = ["c", "f", "reversed", "read_only", "sliced", "reversed_read_only"]

_VIEWS = [
    ("a[::2]", lambda a: a[::2]),
    ("a[::-1]", lambda a: a[::-1]),
    ("a.T", lambda a: a.T),
    ("a[1:, ::-1]", lambda a: a[1:, ::-1]),
    ("a[None]", lambda a: a[None]),
    ("a.real", lambda a: a.real),
    ("a.reshape(-1) or copy", lambda a: a.reshape(-1)),
    ("a.swapaxes(0, 1)[0]", lambda a: a.swapaxes(0, 1)[0]),
    ("np.broadcast_to", lambda a: np.broadcast_to(a, (2,) + a.shape)),
    ("a.diagonal()", lambda a: a.diagonal()),
    ("a[:, 1]", lambda a: a[:, 1]),
]


def _make(layout, rows, cols):
    base = np.arange(rows * cols * 4, dtype=np.float64).reshape(rows * 2, cols * 2)
    if layout == "c":
        a = base[:rows, :cols].copy()
    elif layout == "f":
        a = np.asfortranarray(base[:rows, :cols])
    elif layout in ("reversed", "reversed_read_only"):
        a = base[:rows, :cols].copy()[::-1, ::-1]
    elif layout == "read_only":
        a = base[:rows, :cols].copy()
    else:
        a = base[::2, 1::2]
    if layout.endswith("read_only"):
        a.flags.writeable = False
    return a


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(_LAYOUTS), st.sampled_from(range(len(_VIEWS))),
       st.integers(2, 4), st.integers(2, 4))
def test_compiled_view_of_an_argument_is_numpys_in_every_layout(layout, k, rows, cols):
    name, fn = _VIEWS[k]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (a call run eagerly says so)
        _same_answer(fn, lambda: (_make(layout, rows, cols),))


# ------------------------------------------- elementwise results in NumPy's order

F = np.asfortranarray(np.arange(6.0).reshape(2, 3))


def _fortran():
    return (np.asfortranarray(np.arange(6.0).reshape(2, 3)),)


@pytest.mark.parametrize("name, fn", [
    ("a + 1", lambda a: a + 1),
    ("np.sqrt(a)", lambda a: np.sqrt(a)),
    ("2.5 * a", lambda a: 2.5 * a),
    ("-a", lambda a: -a),
    ("a > 2", lambda a: a > 2),
    ("np.add(a, a)", lambda a: np.add(a, a)),
    ("a + row", lambda a: a + np.arange(3.0)),
    ("a + ones (C wins)", lambda a: a + np.ones((2, 3))),
    ("a.T + 1", lambda a: a.T + 1),
])
def test_elementwise_result_of_a_fortran_array_has_numpys_order(name, fn):
    _same_answer(fn, _fortran)


def test_elementwise_result_of_a_transposed_c_array_is_fortran_ordered():
    cf = _same_answer(lambda a: a.T * 2, lambda: (np.arange(6.0).reshape(2, 3),))
    assert len(cf.graphs) == 1


def test_elementwise_out_into_a_fortran_array_returns_that_array():
    def f(a, o):
        return np.multiply(a, 2.0, out=o)
    _same_answer(f, lambda: (np.arange(6.0).reshape(2, 3), np.zeros((3, 2)).T))


def test_plan_traced_on_c_order_retraces_for_fortran_order_and_keeps_its_fast_call():
    fn = lambda a, b: a * b + 1  # noqa: E731
    cf = hop.compile(fn)
    c = np.arange(6.0).reshape(2, 3)
    for a in (c, np.asfortranarray(c), c, np.asfortranarray(c)):
        # (two arrays: one at both places is a plan of one input, whose call
        # is the general path's)
        b = a.copy(order="K")
        got, want = cf(a, b), fn(a, b)
        assert _layout(got) == _layout(want)
        np.testing.assert_array_equal(got, want)
    assert len(cf.graphs) == 2
    # the C-order plan's bound call checks the order in C
    assert any(e.runner.fast is not None for e in cf._entries)


def test_reshape_of_a_fortran_ordered_result_copies_as_numpys_does():
    def f(a):
        b = a + 1
        c = b.reshape(-1)
        c[0] = 50.0
        return b, c
    cf = hop.compile(f)
    for got, want in zip(cf(*_fortran()), f(*_fortran())):
        np.testing.assert_array_equal(got, want)
        assert _layout(got) == _layout(want)


def test_view_of_a_computed_array_has_numpys_strides():
    _same_answer(lambda a: (a + 1).T, lambda: (np.arange(6.0).reshape(2, 3),))
    _same_answer(lambda a: (a + 1)[::2], lambda: (np.arange(6.0),))
    _same_answer(lambda a: (a * 2)[:, ::-1], lambda: (np.arange(6.0).reshape(2, 3),))


_OPS = [
    ("a + 1", lambda a, b: a + 1),
    ("np.sqrt(a)", lambda a, b: np.sqrt(a)),
    ("a * b", lambda a, b: a * b),
    ("a - b[0]", lambda a, b: a - b[0]),
    ("np.maximum(a, b.T.T)", lambda a, b: np.maximum(a, b.T.T)),
    ("3 - a", lambda a, b: 3 - a),
    ("(a + b).T", lambda a, b: (a + b).T),
]


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(_LAYOUTS), st.sampled_from(_LAYOUTS),
       st.sampled_from(range(len(_OPS))), st.integers(2, 4), st.integers(2, 4))
def test_compiled_elementwise_result_is_numpys_in_every_layout(la, lb, k, rows, cols):
    name, fn = _OPS[k]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _same_answer(fn, lambda: (_make(la, rows, cols), _make(lb, rows, cols)))


def test_argument_of_another_rank_after_a_fortran_trace_retraces_with_numpys_order():
    fn = lambda x, b: x + b  # noqa: E731
    cf = hop.compile(fn)
    x = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    for b in (np.ones(3), np.ones((2, 1)), np.ones((2, 3))):
        got, want = cf(x, b), fn(x, b)
        assert _layout(got) == _layout(want)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("make", [
    lambda: np.arange(6.).reshape(2, 3),
    lambda: np.asfortranarray(np.arange(6.).reshape(2, 3)),
    lambda: np.arange(12.).reshape(2, 6)[:, ::2],
], ids=["C", "F", "strided"])
@pytest.mark.parametrize("fn", [
    lambda a: np.ascontiguousarray(a),
    lambda a: np.ascontiguousarray(a.T),
    lambda a: np.ascontiguousarray(a[:, :1]),
    lambda a: np.ascontiguousarray(a[0]),
    lambda a: np.ascontiguousarray(a.reshape(3, 2).T),
    lambda a: np.ascontiguousarray(a, dtype=np.float32),
    lambda a: np.ascontiguousarray((a + 1).T),
    lambda a: np.ascontiguousarray(a.sum()),
], ids=["self", "T", "column", "row", "reshape_T", "cast", "made_T", "0d"])
def test_ascontiguousarray_is_the_array_itself_only_when_numpy_says_it_is_in_c_order(fn, make):
    # it was asarray: ascontiguousarray(a.T) came back as a view of the
    # argument, and a write through it changed the caller's array
    _same_answer(fn, lambda: (make(),))


# ---------------------------------------- functions NumPy runs in K order

_LAYOUTS = {
    "C": lambda: np.arange(12.0).reshape(3, 4),
    "F": lambda: np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    "neg": lambda: np.arange(12.0).reshape(3, 4)[::-1],
    "sliced": lambda: np.arange(40.0).reshape(5, 8).T[::2, 1:4],
    "readonly_F": lambda: _read_only(np.asfortranarray(np.arange(12.0).reshape(3, 4))),
}

def _filled(e):
    e[...] = 2
    return e


_K_FUNCS = {
    "astype": lambda a: a.astype(np.float32),
    "astype_C": lambda a: a.astype(np.float32, order="C"),
    "astype_F": lambda a: a.astype(np.float32, order="F"),
    "astype_A": lambda a: a.astype(np.float32, order="A"),
    "np.copy": lambda a: np.copy(a),
    "np.copy_C": lambda a: np.copy(a, order="C"),
    "np.copy_F": lambda a: np.copy(a, order="F"),
    "np.copy_A": lambda a: np.copy(a, order="A"),
    "ndarray.copy": lambda a: a.copy(),
    "ndarray.copy_K": lambda a: a.copy(order="K"),
    "ndarray.copy_F": lambda a: a.copy(order="F"),
    "ndarray.copy_A": lambda a: a.copy(order="A"),
    "np.array": lambda a: np.array(a),
    "np.array_C": lambda a: np.array(a, order="C"),
    "np.array_F": lambda a: np.array(a, order="F"),
    "np.array_A": lambda a: np.array(a, order="A"),
    "np.array_dtype": lambda a: np.array(a, dtype=np.float32),
    "zeros_like": lambda a: np.zeros_like(a),
    "zeros_like_C": lambda a: np.zeros_like(a, order="C"),
    "zeros_like_F": lambda a: np.zeros_like(a, order="F"),
    "zeros_like_A": lambda a: np.zeros_like(a, order="A"),
    "ones_like": lambda a: np.ones_like(a, dtype=np.int32),
    "empty_like": lambda a: _filled(np.empty_like(a)),
    "empty_like_shape": lambda a: np.zeros_like(a, shape=a.shape[::-1]),
    "full_like": lambda a: np.full_like(a, 3.5),
    "full_like_F": lambda a: np.full_like(a, 3.5, order="F"),
    "np.where": lambda a: np.where(a > 4, a, -a),
    "np.where_scalars": lambda a: np.where(a > 4, 1.0, 0.0),
    "np.clip": lambda a: np.clip(a, 2, 7),
    "np.clip_max": lambda a: np.clip(a, None, 7),
}


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("name", sorted(_K_FUNCS))
def test_function_numpy_runs_in_k_order_gives_numpys_layout(name, layout):
    """Each function's result has NumPy 1.24's order for its order= (its
    default differs: K for np.copy, astype, np.array and *_like, C for
    ndarray.copy) in every argument layout."""
    fn = _K_FUNCS[name]
    _same_answer(fn, lambda: (_LAYOUTS[layout](),))


@pytest.mark.parametrize("fn", [lambda a: a.astype(np.float32), lambda a: np.copy(a, order="A"),
                                lambda a: np.zeros_like(a), lambda a: np.where(a > 3, a, 0.0)],
                         ids=["astype", "copy_A", "zeros_like", "where"])
def test_order_decision_is_made_again_for_each_calls_argument_layout(fn):
    """A plan traced on a C-ordered argument gives NumPy's order for a
    Fortran-ordered one and again for a C-ordered one (the recorded decision
    is rechecked per call, not kept from the trace)."""
    cf = hop.compile(fn)
    c = np.arange(12.0).reshape(3, 4)
    # (one shape: another would retrace with symbolic sizes, C order as stated)
    for a in (c, np.asfortranarray(c), c, np.arange(12.0).reshape(4, 3).T, c[::-1]):
        assert _layout(cf(a)) == _layout(fn(a))


@pytest.mark.parametrize("make", [
    lambda: np.arange(6.).reshape(2, 3),
    lambda: np.asfortranarray(np.arange(6.).reshape(2, 3)),
    lambda: np.arange(12.).reshape(2, 6)[:, ::2],
], ids=["C", "F", "strided"])
@pytest.mark.parametrize("order", ["C", "F", "A", "K", None])
@pytest.mark.parametrize("fn", [
    lambda a, order: np.asarray(a, order=order),
    lambda a, order: np.array(a, copy=False, order=order),
    lambda a, order: np.asarray(a.T, order=order),
    lambda a, order: np.asarray(a[0], order=order),
    lambda a, order: np.asarray(a + 1, order=order),
    lambda a, order: np.asarray((a + 1).T, order=order),
], ids=["arg", "array_nocopy", "T", "row", "made", "made_T"])
def test_asarray_copies_exactly_when_numpy_does_for_its_order(fn, order, make):
    # asarray returned the array itself for every order: np.asarray(a,
    # order='C') of a Fortran-ordered argument was a view of it, so a write
    # through the result changed the caller's array; and array(copy=False)
    # of a K-ordered result lost its layout
    _same_answer(lambda a: fn(a, order), lambda: (make(),))


# ------------------------- views of computed arrays on the plan's own result

def _results(r):
    return list(r) if isinstance(r, tuple) else [r]


def _same_aliasing(fn, make_args, state=lambda: []):
    """fn compiled and eagerly: each result's type and layout, which
    results (and the arrays in state(), what the call stored) share memory,
    and a write through each result seen in all of them as eagerly."""
    cf = hop.compile(fn)
    for _ in range(3):
        want = _results(fn(*make_args())) + state()
        got = _results(cf(*make_args())) + state()
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert type(g) is type(w)
            np.testing.assert_array_equal(g, w)
            assert _layout(g) == _layout(w)
        assert [[np.shares_memory(g, h) for h in got] for g in got] == \
            [[np.shares_memory(w, v) for v in want] for w in want]
        for k in range(len(want)):
            if want[k].size and want[k].flags.writeable:
                want[k][...] = -7 - k
                got[k][...] = -7 - k
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(g, w)
    return cf


def _bound(cf):
    return [e.runner.fast is not None for e in cf._entries]


def _logsumexp_shape(x):
    # bench/np_programs.py's logsumexp without exp and log (whose last bits
    # are hop's own): the same (n, 1)[..., 0] of a computed array
    m = np.max(x, axis=-1, keepdims=True)
    return (m + np.sum(x - m, axis=-1, keepdims=True))[..., 0]


def test_view_of_a_computed_array_in_c_order_takes_the_bound_call():
    # issue 29/30: the returned view (n, 1)[..., 0] was made again in Python
    # from the plan's whole array on every call, off the C fast call
    cf = _same_aliasing(_logsumexp_shape, lambda: (np.arange(1024.0).reshape(32, 32) % 7,))
    assert _bound(cf) == [True]
    cf = _same_aliasing(lambda a: (a * 2)[1], lambda: (np.arange(12.0).reshape(3, 4),))
    assert _bound(cf) == [True]
    cf = _same_aliasing(lambda a: (a + 1)[1:], lambda: (np.arange(12.0).reshape(3, 4),))
    assert _bound(cf) == [True]


@pytest.mark.parametrize("fn", [
    lambda a: (a + 1)[..., 0],
    lambda a: (a + 1)[0, ...],
    lambda a: (a * 2)[-1][...],
], ids=["ellipsis_0", "0_ellipsis", "last"])
def test_zero_d_view_of_a_computed_vector_is_a_zero_d_array(fn):
    _same_aliasing(fn, lambda: (np.arange(5.0),))


@pytest.mark.parametrize("fn", [
    lambda a: (a + 1)[::-1],
    lambda a: (a + 1)[::2],
    lambda a: (a + 1)[:, ::-1],
    lambda a: (a + 1)[:, 1],
    lambda a: (a + 1)[1:, ::2],
    lambda a: (a + 1).T,
    lambda a: (a + 1)[None],
    lambda a: (a + 1).reshape(-1)[::3],
    lambda a: (a + 1)[:, :1].T,
    lambda a: np.broadcast_to((a + 1)[0], (2, 4)),
    lambda a: (a + 1).view(np.int64)[0],
], ids=["reversed", "step", "cols_reversed", "column", "block", "T", "newaxis", "flat_step",
        "size_1_T", "broadcast", "bitcast"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_view_of_a_computed_array_has_numpys_layout_in_each_order(fn, order):
    _same_aliasing(fn, lambda: (np.asarray(np.arange(12.0).reshape(3, 4), order=order),))


def test_row_and_column_of_a_computed_array_follow_each_calls_order():
    # a C-strided view of a Fortran-ordered result ((a + 1)[:, 0]) is not one
    # of a C-ordered result: the call's order decides, not the trace's
    for fn in (lambda a: (a + 1)[:, 0], lambda a: (a + 1)[0], lambda a: (a * a)[..., 1]):
        cf = hop.compile(fn)
        c = np.arange(12.0).reshape(3, 4)
        for a in (c, np.asfortranarray(c), c, np.asfortranarray(c), c[::-1], c):
            got, want = cf(a), fn(a)
            np.testing.assert_array_equal(got, want)
            assert _layout(got) == _layout(want)


@pytest.mark.parametrize("fn", [
    lambda a: ((b := a + 1), b[..., 0]),
    lambda a: ((b := a + 1)[0], b),
    lambda a: ((b := a + 1)[0], b[1]),
    lambda a: ((b := a * 2)[:, 0], b[0, :1]),
    lambda a: ((b := a + 1)[0], b[0]),
    lambda a: ((b := a + 1)[0], [b]),
    lambda a: ((b := a + 1)[0], {"whole": b.T}),
], ids=["base_after", "base_before", "two_rows", "col_and_row", "same_row_twice", "in_list",
        "in_dict"])
def test_view_returned_with_its_base_or_another_view_stays_aliased(fn):
    # eagerly a write through the view shows in the other result
    def flat(a):
        out = []
        for r in fn(a):
            out.extend(r if isinstance(r, list) else r.values() if isinstance(r, dict) else [r])
        return tuple(out)
    _same_aliasing(flat, lambda: (np.arange(8.0).reshape(4, 2)[:, :1].copy(),))
    cf = hop.compile(fn)
    for _ in range(2):
        got, want = cf(np.ones((4, 1))), fn(np.ones((4, 1)))
        got[0][...] = 5.0
        want[0][...] = 5.0
        assert repr(got) == repr(want)


KEPT = []
WHOLE = None


def test_view_whose_base_a_call_stores_stays_a_view_of_it():
    def stored_global(a):
        global WHOLE
        WHOLE = a + 1
        return WHOLE[..., 0]

    def appended(a):
        b = a * 3
        KEPT.append(b)
        return b[0]

    def view_stored(a):
        global WHOLE
        b = a + 2
        WHOLE = b[:, 0]
        return b[1]

    for fn in (stored_global, appended, view_stored):
        KEPT.clear()
        _same_aliasing(fn, lambda: (np.arange(6.0).reshape(3, 2)[:, :1] * 1,),
                       lambda: [WHOLE] if fn is not appended else KEPT[-1:])


def test_view_taken_before_a_write_to_its_computed_base_sees_the_write():
    def f(a):
        b = a + 1
        v = b[..., 0]
        b[0, 0] = 50.0
        b *= 2
        return v
    cf = _same_aliasing(f, lambda: (np.arange(6.0).reshape(3, 2)[:, :1] * 1,))
    assert _bound(cf) == [True]


def test_view_of_a_computed_array_of_another_size_each_call():
    fn = lambda a: (a + 1)[..., 0]  # noqa: E731
    cf = hop.compile(fn)
    for n in (3, 5, 7, 5):
        a = np.arange(2.0 * n).reshape(n, 2)
        got, want = cf(a), fn(a)
        np.testing.assert_array_equal(got, want)
        assert _layout(got) == _layout(want)


@pytest.mark.parametrize("fn", [
    lambda x: ((c := np.arange(6.0).reshape(2, 3)), c.T, x + 1),
    lambda x: ((c := np.arange(6.0).reshape(2, 3)).T, c[1], c),
    lambda x: ((c := np.arange(6.0).reshape(2, 3))[0], c[::-1]),
], ids=["base_first", "base_last", "two_views"])
def test_array_made_from_constants_returned_with_its_views_is_one_new_array_per_call(fn):
    # the views were each made from a copy of their own, not the returned array
    cf = _same_aliasing(fn, lambda: (np.ones(2),))
    a, b = cf(np.ones(2)), cf(np.ones(2))
    assert not any(np.shares_memory(x, y) for x in a for y in b)


def _flags(r):
    return (type(r), r.dtype, r.shape, r.strides, r.flags.c_contiguous, r.flags.f_contiguous,
            r.flags.writeable, r.flags.owndata)


@pytest.mark.parametrize("dynamic", [None, True, False])
@pytest.mark.parametrize("fn", [
    lambda a: np.reshape((a + 1)[:, 1:], -1),
    lambda a: (a + 1)[:, 1:].reshape(-1, 1),
    lambda a: (a + 1)[:, 1:].reshape(1, -1),
    lambda a: (a + 1)[1:, ::2].reshape(-1),
    lambda a: np.reshape((a * 2).T[1:], (-1,)),
])
def test_reshape_of_a_computed_strided_view_is_numpys_view_or_copy_at_changing_sizes(fn,
                                                                                    dynamic):
    # NumPy's reshape views a strided array when its axes allow (a trailing
    # axis of 1: strides (16,), and reshape(-1, 1) its (16, 16)) and copies
    # otherwise.  Before: at symbolic sizes hop gave its own C-ordered copy
    # for every call ((8,) where NumPy's view has (16,)); statically
    # reshape(-1, 1) gave (16, 8)
    cf = hop.compile(fn, dynamic=dynamic)
    for shape in [(3, 4), (3, 2), (5, 2), (2, 7), (1, 5), (4, 3), (6, 2), (3, 3)]:
        a = np.arange(float(np.prod(shape))).reshape(shape)
        want, got = fn(a), cf(a.copy())
        np.testing.assert_array_equal(got, want)
        assert _flags(got) == _flags(want), (shape, _flags(got), _flags(want))


def test_write_through_an_ambiguous_reshape_is_refused_clearly():
    # a view or a copy by the call's sizes: a write through it (or into
    # the array it reshaped) cannot be one plan's, so the call runs in NumPy
    def fn(a):
        r = (a + 1)[:, 1:].reshape(-1)
        r[0] = 100.0
        return r
    cf = hop.compile(fn, dynamic=True)
    for shape in [(3, 2), (3, 4), (5, 2)]:
        a = np.arange(float(np.prod(shape))).reshape(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = cf(a)
        want = fn(a)
        np.testing.assert_array_equal(got, want)
        assert _flags(got) == _flags(want)
