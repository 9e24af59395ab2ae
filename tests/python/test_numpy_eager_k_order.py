"""An eager hop.numpy elementwise result (unary and binary ufuncs,
comparisons, np.where, astype, copy(order='K'/'A'/'F')) is laid out in
NumPy's order for its operands (K: the operands' own order, NumPy's rules
for operands of different layouts), as hop.compile's results are
(_ufuncs.memory_order, _storage.eager_order).  Before, eager results were
C-ordered: `(a + 1).reshape(-1)` of a Fortran-ordered `a` was a view where
NumPy's is a copy, so a write through it changed the result, and strides,
flags, np.shares_memory, ravel() and tobytes(order='A') differed."""
import numpy as np
import pytest

import hop.numpy as hnp


def _c():
    return np.arange(12.0).reshape(3, 4)


def _f():
    return np.asfortranarray(np.arange(12.0).reshape(3, 4))


# (a base array, a view of it made by NumPy or by hop.numpy as m)
OPERANDS = {
    "fortran": (_f, lambda a, m: a),
    "transposed": (lambda: np.arange(12.0).reshape(4, 3), lambda a, m: a.T),
    "negative": (_f, lambda a, m: a[::-1]),
    "negative_c": (_c, lambda a, m: a[:, ::-1]),
    "strided": (lambda: np.arange(24.0).reshape(3, 8), lambda a, m: a[:, ::2]),
    "broadcast": (lambda: np.arange(3.0), lambda a, m: m.broadcast_to(a[:, None], (3, 4))),
    "c": (_c, lambda a, m: a),
    "fortran_3d": (lambda: np.asfortranarray(np.arange(24.0).reshape(2, 3, 4)),
                   lambda a, m: a),
    "size1": (lambda: np.asfortranarray(np.arange(4.0).reshape(4, 1)), lambda a, m: a.T),
}


def _operand(name, m):
    base, view = OPERANDS[name]
    a = base()
    return view(a if m is np else hnp.asarray(a), m)


# (empty_like's result is filled before it is compared: `np.empty_like(x) * 0`
# compared whatever the memory held times 0, which is -0.0 or NaN where that
# was negative or NaN, in NumPy's memory and in hop's alike only by chance.)
EXPRS = ("x * 1", "x + 1", "-x", "np.sqrt(x)", "x < 3", "np.where(x > 2, x, 0)",
         "x.astype(np.float32)", "x.copy(order='K')", "x.copy(order='A')", "x.copy(order='F')",
         "np.add(x, x)", "x.T * 1", "np.maximum(x, 2.0)", "x == x", "np.copy(x, order='K')",
         "(lambda e: (e.fill(1.0), e)[1])(np.empty_like(x))", "np.logical_not(x)", "abs(x)")


def _layout(r):
    return r.shape, r.dtype, r.strides, r.flags.c_contiguous, r.flags.f_contiguous


@pytest.mark.parametrize("expr", EXPRS)
@pytest.mark.parametrize("name", sorted(OPERANDS))
def test_eager_elementwise_result_has_numpys_layout_reshape_and_writes(expr, name):
    fn = eval("lambda x, np: " + expr)  # noqa: S307 (the expressions above)
    want = fn(_operand(name, np), np)
    got = fn(_operand(name, hnp), np)
    assert _layout(got) == _layout(want)
    assert got.tobytes(order="A") == want.tobytes(order="A")
    np.testing.assert_array_equal(np.asarray(got.ravel()), want.ravel())
    # a reshape of it is a view exactly where NumPy's is: a write through
    # it shows in the result exactly as NumPy's
    rw, rg = want.reshape(-1), got.reshape(-1)
    assert np.shares_memory(np.asarray(rg), np.asarray(got)) == np.shares_memory(rw, want)
    rw[1] = 1
    rg[1] = 1
    np.testing.assert_array_equal(np.asarray(got), want)


PAIRS = (("fortran", "c"), ("c", "fortran"), ("transposed", "fortran"), ("fortran", "broadcast"),
         ("negative", "c"), ("strided", "fortran"), ("fortran", "size1"),
         ("negative_c", "transposed"),
         ("fortran_3d", "fortran_3d"))


@pytest.mark.parametrize("op", ("np.add(x, y)", "x < y", "np.where(x > y, x, y)",
                                "np.multiply(x, y.T.T)"))
@pytest.mark.parametrize("names", PAIRS)
def test_eager_result_of_operands_of_different_layouts_is_in_numpys_k_order(op, names):
    fn = eval("lambda x, y, np: " + op)  # noqa: S307
    want = fn(*(_operand(n, np) for n in names), np)
    got = fn(*(_operand(n, hnp) for n in names), np)
    assert _layout(got) == _layout(want)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_reshape_of_a_fortran_sum_is_a_copy_a_write_through_it_leaves_the_sum():
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    b = hnp.asarray(a) + 1
    r = b.reshape(-1)
    r[0] = 100
    assert float(b[0, 0]) == 1.0
    assert b.strides == (8, 16) and b.flags.f_contiguous and not b.flags.c_contiguous


_K_RAVELS = {
    "a transpose": lambda m, x: m.ravel(x.transpose(2, 0, 1), order="K"),
    "a transpose, lower case": lambda m, x: m.ravel(x.transpose(1, 2, 0), order="k"),
    "Fortran order": lambda m, x: m.ravel(x.T.copy().T, order="K"),
    "a strided view": lambda m, x: m.ravel(x[:, ::2].transpose(2, 1, 0), order="K"),
    "C order": lambda m, x: m.ravel(x, order="K"),
    "a vector": lambda m, x: m.ravel(x[0, 0], order="K"),
    "a broadcast": lambda m, x: m.ravel(m.broadcast_to(x[0, :, :1], (3, 4)), order="K"),
}


@pytest.mark.parametrize("case", _K_RAVELS)
def test_ravel_function_in_k_order_is_numpys_values_and_view(case):
    # hnp.ravel(a, order='K') raised UnsupportedError where np.ravel of a
    # hop.numpy array and a.ravel('K') answered: one owner now (_funcs.ravel)
    f = _K_RAVELS[case]
    x = np.arange(24.0).reshape(2, 3, 4)
    want = f(np, x)
    for m in (hnp, np):
        h = hnp.asarray(x.copy())
        got = f(m, h)
        assert type(got) is hnp.ndarray and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
        assert np.shares_memory(np.asarray(got), np.asarray(h)) == np.shares_memory(want, x)
    got = hnp.ravel(x.transpose(2, 0, 1), order="K")  # a NumPy array's memory order
    np.testing.assert_array_equal(np.asarray(got), np.ravel(x.transpose(2, 0, 1), order="K"))
