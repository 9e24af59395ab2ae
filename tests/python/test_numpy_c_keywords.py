"""NumPy's functions written in C bind their own arguments: the dispatcher
NumPy puts in front of each takes every parameter by keyword and hands the
keywords on to __array_function__, so hop.numpy saw `np.where(c, x=a, y=b)`
as a call with keywords and answered, where NumPy's C function raises
"where() takes no keyword arguments" (issue #29).  Each case runs by NumPy,
by eager hop.numpy (NumPy's function on hop.numpy arrays, and hop.numpy's own
function), on hop.Tensor and compiled, and each raises NumPy's TypeError
with NumPy's text (python/hop/numpy/_direct.py, C_PARAMETERS)."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp

A = np.array([1, 0, 2])
F = np.array([1.0, 2.0])
U = np.array([1, 0, 2], dtype=np.uint8)

# (name, the call of a namespace `m` (numpy or hop.numpy) on argument x, x)
CASES = [
    ("where_x_y", lambda m, x: m.where(x, x=x, y=x), A),
    ("where_y", lambda m, x: m.where(x, x, y=x), A),
    ("where_condition", lambda m, x: m.where(condition=x), A),
    ("inner_a_b", lambda m, x: m.inner(a=x, b=x), F),
    ("inner_b", lambda m, x: m.inner(x, b=x), F),
    ("vdot_a_b", lambda m, x: m.vdot(a=x, b=x), F),
    ("vdot_b", lambda m, x: m.vdot(x, b=x), F),
    ("min_scalar_type_a", lambda m, x: m.min_scalar_type(a=x), A),
    ("bincount_x", lambda m, x: m.bincount(x=x), A),
    ("bincount_x_weights", lambda m, x: m.bincount(x=x, weights=x), A),
    ("concatenate_arrays", lambda m, x: m.concatenate(arrays=[x], axis=0), A),
    ("packbits_a", lambda m, x: m.packbits(a=x), U),
    ("unpackbits_a", lambda m, x: m.unpackbits(a=x, axis=0), U),
    ("shares_memory_a_b", lambda m, x: m.shares_memory(a=x, b=x), A),
    ("shares_memory_b", lambda m, x: m.shares_memory(x, b=x), A),
    ("may_share_memory_b", lambda m, x: m.may_share_memory(x, b=x), A),
    ("putmask_a", lambda m, x: m.putmask(a=x, mask=x > 0, values=x), A),
]


def _error(fn, *args):
    with pytest.raises(TypeError) as e:
        fn(*args)
    return str(e.value)


@pytest.mark.parametrize("name, call, x", CASES, ids=[c[0] for c in CASES])
def test_a_keyword_numpys_c_function_refuses_is_its_type_error(name, call, x):
    want = _error(call, np, x.copy())
    assert _error(call, np, hnp.asarray(x.copy())) == want  # eager, NumPy's function
    assert _error(call, hnp, hnp.asarray(x.copy())) == want  # hop.numpy's own
    assert _error(call, hnp, x.copy()) == want
    assert _error(hop.compile(lambda x: call(np, x)), x.copy()) == want
    assert _error(hop.compile(lambda x: call(hnp, x)), x.copy()) == want
    if name not in ("packbits_a", "unpackbits_a", "putmask_a"):  # (hop.Tensor: no uint8 bits)
        assert _error(call, np, hop.tensor(x.copy())) == want


def test_the_keywords_numpys_c_functions_take_still_answer():
    x = np.array([1, 0, 2])
    for m, a in ((np, x), (hnp, hnp.asarray(x))):
        r = m.bincount(a, weights=a, minlength=5)
        assert np.asarray(r).tolist() == [0.0, 1.0, 2.0, 0.0, 0.0]
        assert np.asarray(m.concatenate([a, a], axis=0, dtype=np.float32)).dtype == np.float32
        assert np.asarray(m.packbits(a, axis=0, bitorder="little")).tolist() == [5]
        assert m.shares_memory(a, a, max_work=None)
    f = hop.compile(lambda a: (np.bincount(a, weights=a, minlength=5),
                               np.concatenate([a, a], axis=0, dtype=np.float32)))
    r = f(x)
    assert type(r[0]) is np.ndarray and r[0].tolist() == [0.0, 1.0, 2.0, 0.0, 0.0]
    assert r[1].dtype == np.float32 and r[1].tolist() == [1, 0, 2, 1, 0, 2]


def test_lexsort_of_one_key_array_is_a_scalar_as_numpys():
    # np.lexsort(a) of a 1-d a: each item a 0-d key, NumPy's intp scalar 0
    # (eager hop.numpy gave a 0-d array)
    want = np.lexsort(A)
    assert type(want) is np.int64 and want == 0
    for got in (np.lexsort(hnp.asarray(A)), hnp.lexsort(A), np.lexsort(keys=hnp.asarray(A)),
                hop.compile(lambda a: np.lexsort(a))(A)):
        got = np.asarray(got)[()] if isinstance(got, hnp.ndarray) and got._scalar else got
        assert type(got) is np.int64 and got == 0
