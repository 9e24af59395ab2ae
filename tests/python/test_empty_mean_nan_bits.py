"""The mean of no elements is NumPy's 0 / 0 at run time (true_divide), a
NaN whose bits are the platform's (its sign bit set on x86), eagerly and
compiled; hop's kernel stored the C constant NAN (sign bit clear)."""
import warnings

import numpy as np
import pytest

import hop
import hop.numpy as hnp

CASES = {
    "mean": lambda a: a[:0].mean(),
    "np.mean axis 0": lambda a: np.mean(a[:0].reshape(0, 1), 0),
    "average": lambda a: np.average(a[:0]),
    "float32": lambda a: a[:0].astype(np.float32).mean(),
    "int": lambda a: a[:0].astype(np.int64).mean(),
    "complex": lambda a: a[:0].astype(np.complex128).mean(),
    "complex64": lambda a: a[:0].astype(np.complex64).mean(),
}


def _bits(x):
    x = np.asarray(x)
    return x.dtype, x.tobytes()


@pytest.mark.parametrize("name", sorted(CASES))
def test_mean_of_no_elements_has_numpys_nan_bits(name):
    f = CASES[name]
    a = np.arange(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _bits(f(a))
        assert _bits(np.asarray(f(hnp.asarray(a)))) == want
        assert _bits(hop.compile(f)(a.copy())) == want
