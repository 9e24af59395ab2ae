"""ndarray.view(dtype) compiled (issue #29): NumPy reinterprets the bytes;
hop.compile traces a `bitcast` of the array's value, a view that follows
later writes to its base, with NumPy's errors where the item sizes differ
(a 0-d array, a last axis that is not contiguous, a last axis whose bytes
do not split into whole items).  Each case runs by NumPy and compiled, on
copies of the same arguments, and must give the same bits, dtype, shape and
type, or the same exception and message."""

import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp


def _run(fn, args, compiled, c=None):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    c = c or (hop.compile(fn) if compiled else fn)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("error", RuntimeWarning)  # hop.compile's fallback warning
        try:
            r = c(*args)
        except (ValueError, TypeError) as e:
            return e, args
    if compiled:
        assert c._eager_why is None and c._untranslated is None, c.explain()
    return r, args


def _same(got, want, path="result"):
    if isinstance(want, tuple):
        for k, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{path}[{k}]")
        return
    assert type(got) is type(want), f"{path}: {type(got).__name__} vs {type(want).__name__}"
    assert got.dtype == want.dtype, f"{path}: {got.dtype} vs {want.dtype}"
    assert np.shape(got) == np.shape(want), f"{path}: {np.shape(got)} vs {np.shape(want)}"
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), path  # the same bits


def same_as_numpy(fn, *args, c=None):
    want, wargs = _run(fn, args, False)
    got, gargs = _run(fn, args, True, c)
    if isinstance(want, Exception):
        assert type(got) is type(want), f"NumPy raised {want!r}, hop gave {got!r}"
        assert str(got) == str(want)
        return
    if isinstance(got, Exception):
        raise got
    _same(got, want)
    for k, (g, w) in enumerate(zip(gargs, wargs)):
        if isinstance(w, np.ndarray):
            _same(g, w, f"argument {k} after the call")


R = np.random.default_rng(7)
F64 = np.array([[1.5, -2.0, np.nan, 0.0], [-0.0, np.inf, 1e-310, 3.25]])
CASES = [
    (F64, np.int64), (F64, np.uint64), (F64, np.int32), (F64, np.uint8), (F64, np.float32),
    (F64, np.int16), (F64, np.complex128), (F64.astype(np.float32), np.complex64),
    (F64.astype(np.float32), np.int32), (F64.astype(np.float16), np.int16),
    (F64.astype(np.float16), np.uint8), (R.integers(0, 2, (3, 8)).astype(bool), np.uint8),
    (R.integers(0, 2, (3, 8)).astype(np.uint8), np.bool_),
    (R.integers(-2**31, 2**31, (3, 4)).astype(np.int32), np.float64),
    (R.integers(0, 256, (2, 16)).astype(np.uint8), np.float32),
    ((F64 + 1j * F64[::-1]).astype(np.complex128), np.float64),
    ((F64 + 1j * F64[::-1]).astype(np.complex128), np.int64),
]


@pytest.mark.parametrize("x,dt", CASES, ids=lambda v: getattr(v, "__name__", None) or
                         str(getattr(v, "dtype", v)))
def test_view_reinterprets_the_bytes_as_numpy(x, dt):
    same_as_numpy(lambda x: x.view(dt), x)
    same_as_numpy(lambda x: (x * 1).view(dt), x)  # of a value the function computed
    same_as_numpy(lambda x: x[1:].view(dt), x)  # of a view: its rows are contiguous


def test_view_of_a_scalar_element_and_of_a_computed_0d_array():
    same_as_numpy(lambda x: x[0, 1].view(np.int64), F64)  # np.float64 -> np.int64
    same_as_numpy(lambda x: x.sum().view(np.uint64), F64)
    same_as_numpy(lambda x: x[0, 1].view(np.int32), F64)  # NumPy's 0-d error


def test_view_is_used_as_people_use_it_for_bit_tricks():
    def sign_bits(x):
        return (x.view(np.int64) >> 63) & 1, (x.view(np.uint64) & (2**52 - 1)).max()
    same_as_numpy(sign_bits, F64)

    def float_floor_log2(x):  # the exponent field
        return ((x.view(np.int32) >> 23) & 0xFF) - 127
    same_as_numpy(float_floor_log2, np.array([1.0, 2.5, 1024.0, 0.3], np.float32))

    def interleaved_to_complex(x):
        return x.view(np.complex128) * 2j, x.view(np.complex128).real
    same_as_numpy(interleaved_to_complex, R.standard_normal((3, 8)))


@pytest.mark.parametrize("case", ["0d", "transposed", "strided", "not_whole", "fortran_arg",
                                  "strided_arg"])
def test_view_raises_numpys_errors(case):
    fns = {
        "0d": (lambda x: x.sum().view(np.int32), F64),
        "transposed": (lambda x: x.T.view(np.int32), F64),
        "strided": (lambda x: x[:, ::2].view(np.uint8), F64),
        "not_whole": (lambda x: x.view(np.complex128), F64[:, :3].copy()),
        "fortran_arg": (lambda x: x.view(np.int32), np.asfortranarray(F64)),
        "strided_arg": (lambda x: x.view(np.int32), F64[:, ::2]),
    }
    fn, x = fns[case]
    same_as_numpy(fn, x)


def test_a_size_one_last_axis_and_an_empty_array_need_no_contiguity():
    same_as_numpy(lambda x: x[:, :1].view(np.int32), F64)
    same_as_numpy(lambda x: x[:0, ::2].view(np.int32), F64)


def test_the_layout_an_argument_had_is_checked_on_every_call():
    fn = lambda x: x.view(np.int32)  # noqa: E731
    c = hop.compile(fn)
    same_as_numpy(fn, F64, c=c)  # traced with a C-contiguous argument
    same_as_numpy(fn, np.asfortranarray(F64), c=c)  # NumPy's error, not the C plan's answer
    same_as_numpy(fn, F64[:, ::2], c=c)
    same_as_numpy(fn, F64 * 2, c=c)


def test_view_follows_writes_to_its_base():
    def f(x):
        v = x.view(np.int32)
        x[0] = 7.0
        w = v.copy()
        x[1, 2] += 1.0
        return w, v
    same_as_numpy(f, F64)


C128 = (F64 + 1j * F64[::-1]).astype(np.complex128)


def _view_write(view, write):
    """f(x): v = view; the write through v; returns (x, v)."""
    scope = {"np": np}
    exec(f"def f(x):\n    v = {view}\n    {write}\n    return x, v\n", scope)
    return scope["f"]


WRITES_THROUGH_VIEWS = {
    # (a draw of test_numpy_alias_programs.py's campaign in a CI run: an
    # in-place operator through a view of another dtype was refused)
    "iadd": ("x.view(np.int64)", "v += 1", F64),
    "item": ("x.view(np.int64)", "v[0] = 1", F64),
    "values_of_the_view": ("x.view(np.uint64)", "v[..., 1] = v[..., 0] - 3", F64),
    "after_a_reversed_view": ("x[::-1].view(np.int64)[1:]", "v += 1", F64),
    "before_a_transpose": ("x.view(np.int64).T[::2]", "v[0] = -1", F64),
    "two_views": ("x.view(np.int64)[:, 1:].view(np.uint64)", "v *= 3", F64),
    "smaller_items": ("x.view(np.int32)", "v[:, 1::2] = v[:, ::2] ^ 5", F64),
    "larger_items": ("x.view(np.int64)[1]", "v -= 2", F64.astype(np.float32)),
    "complex_part": ("x.real.view(np.int64)", "v += 1", C128),
    "complex_view": ("x.view(np.complex128)", "v[0] = 2 - 1j", F64),
}


@pytest.mark.parametrize("case", sorted(WRITES_THROUGH_VIEWS))
def test_a_write_through_a_view_with_another_dtype_changes_the_bases_bits(case):
    view, write, x = WRITES_THROUGH_VIEWS[case]
    fn = _view_write(view, write)
    same_as_numpy(fn, x, c=hop.compile(fn, fullgraph=True))


@pytest.mark.parametrize("view", ["x[1:].view(np.int32)",
                                  "x.view(np.complex128).real.view(np.int64)"])
def test_a_write_through_a_dtype_view_hop_does_not_trace_is_a_clear_error(view):
    # (a view of another item size after other views, and a part of a
    # complex view: docs/RELIABILITY.md)
    fn = _view_write(view, "v += 1")
    x = F64.copy()
    with pytest.raises(hop.UnsupportedError, match="writes through a view with another dtype"):
        hop.compile(fn)(x)
    assert x.tobytes() == F64.tobytes()


def test_view_with_symbolic_sizes_guards_the_last_axis():
    c = hop.compile(lambda x: x.view(np.complex128), dynamic=True)
    for n in (4, 6, 5, 8):  # 5 doubles are not whole complex numbers: NumPy's error
        same_as_numpy(lambda x: x.view(np.complex128), R.standard_normal((3, n)), c=c)
    c = hop.compile(lambda x: x.view(np.uint8).sum(-1), dynamic=True)
    for n in (2, 3, 7):
        same_as_numpy(lambda x: x.view(np.uint8).sum(-1), R.standard_normal((n, n + 1)), c=c)


def test_vmap_of_view_is_the_loop_over_examples():
    xs = R.standard_normal((5, 2, 3))
    got = hop.vmap(lambda x: hnp.asarray(x).view(np.int32))(hnp.asarray(xs))
    want = np.stack([x.view(np.int32) for x in xs])
    assert np.asarray(got).dtype == np.int32 and np.array_equal(np.asarray(got), want)


def test_grad_through_view_passes_none_to_integers_and_refuses_a_float_reading():
    g = hop.grad(lambda x: (x * (hnp.asarray(x).view(np.int64) > 0)).sum())(hnp.array([1.0, -2.0]))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 0.0])
    with pytest.raises(hop.UnsupportedError, match="bitcast: no derivative of f64's bits read "
                                                   "as c128"):
        hop.grad(lambda x: hnp.asarray(x).view(np.complex128).real.sum())(hnp.ones((2, 4)))


def test_bitcast_is_an_op_of_hops_own_api():
    x = hop.tensor([1.0, -2.0])
    r = hop.ops.bitcast(x, hop.int32) if hasattr(hop.ops, "bitcast") else \
        hop._C._op("bitcast", x, hop.int32)
    assert np.array_equal(r.numpy(), np.array([1.0, -2.0], np.float32).view(np.int32))
    gm = hop.trace(lambda x: hop._C._op("bitcast", x, hop.uint8), hop.ones((2, 3)))
    assert "bitcast" in gm.code
    assert np.array_equal(gm(hop.ones((2, 3))).numpy(), np.ones((2, 3), np.float32).view(np.uint8))
    with pytest.raises(hop.ShapeError, match="bitcast: the last dim of f32\\[2, 3\\] does not "
                                             "split into whole items of f64"):
        hop._C._op("bitcast", hop.ones((2, 3)), hop.float64)
