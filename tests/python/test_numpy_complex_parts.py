"""c.real and c.imag of a complex array are NumPy's views of c's memory,
eagerly and under hop.compile: the part's dtype, NumPy's strides (twice the
item: (16,) for complex128), memory shared with c (np.shares_memory, a
write through the part seen in c and one into c seen in the part), for an
array the function computed, an argument and their views."""

import numpy as np
import pytest

import hop
import hop.numpy as hnp


def _layout(r):
    r = np.asarray(r)
    return (r.dtype, r.shape, r.strides, r.flags.c_contiguous, r.flags.f_contiguous,
            r.flags.writeable)


def _z(shape=(3, 4), dtype=np.complex128):
    n = int(np.prod(shape))
    return (np.arange(n) + 1j * (np.arange(n) % 3 - 1)).astype(dtype).reshape(shape)


PROGRAMS = {
    "computed_real": lambda a: (a * 2 + 1j).real,
    "computed_imag": lambda a: (a * 2 + 1j).imag,
    "both_with_c": lambda a: (lambda c: (c, c.real, c.imag))(a * (1 - 1j)),
    "real_of_view": lambda a: (a + 1).T.real,
    "view_of_real": lambda a: (a + 1).real[:, ::2],
    "np_real": lambda a: (lambda c: (c, np.real(c), np.imag(c)))(a - 1j),
    "write_part": lambda a: (lambda c: (c.real.__setitem__((0, 1), 9.0), c)[1])(a + 1j),
    "write_imag_slice": lambda a: (lambda c: (c.imag.__setitem__(slice(None, 2), -5.0),
                                              c)[1])(a * 1j),
    "write_c_then_part": lambda a: (lambda c: (c.__setitem__(0, 7 + 7j), c.imag)[1])(a + 1j),
    "part_plus": lambda a: (a + 1j).real + (a - 2j).imag,
    "arg_real": lambda a: a.real,
    "arg_imag_with_arg": lambda a: (a, a.imag),
    "arg_write_real": lambda a: (a.real.__setitem__(0, -1.0), a.imag)[1],
    "reshape_real": lambda a: (a + 1).real.reshape(-1),
}


def _outs(r):
    return r if isinstance(r, tuple) else (r,)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_complex_part_is_numpys_view(name, dtype):
    # before: c.real a read-only copy (strides (8,), no memory shared with
    # c; a write through it raised "assignment destination is read-only")
    fn = PROGRAMS[name]
    cf = hop.compile(fn)
    for shape in [(3, 4), (2, 2)]:
        want_arg, eager_arg, arg = _z(shape, dtype), _z(shape, dtype), _z(shape, dtype)
        want, got, eager = _outs(fn(want_arg)), _outs(cf(arg)), _outs(fn(hnp.asarray(eager_arg)))
        for w, g, e in zip(want, got, eager):
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(e, w)
            assert _layout(g) == _layout(w), (shape, _layout(g), _layout(w))
            assert _layout(e) == _layout(w), (shape, _layout(e), _layout(w))
        np.testing.assert_array_equal(arg, want_arg)
        np.testing.assert_array_equal(eager_arg, want_arg)
        for outs, a in [(want, want_arg), (got, arg)]:
            assert [np.shares_memory(x, y) for x in outs for y in outs + (a,)] == \
                [np.shares_memory(x, y) for x in want for y in want + (want_arg,)]
        # a write through a returned part reaches the returned complex array
        if len(want) == 3:
            for outs in (want, got):
                outs[1][0, 0] = 123.0
                outs[2][-1, -1] = -4.0
            np.testing.assert_array_equal(got[0], want[0])
