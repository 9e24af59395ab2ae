"""float16 NaN payloads through hop.compile are NumPy 1.24's bits (issue 29):
NumPy's float16 casts keep a NaN's payload (npy_floatbits_to_halfbits and
npy_halfbits_to_doublebits, no quieting), its float16 arithmetic computes in
float32, where x86 quiets a signalling NaN and keeps its payload, and neg,
abs, maximum and where move the bits.  hop gave the default NaN 0x7e00 for
every NaN it rounded to float16 and quieted a signalling one it widened to
float64."""
import warnings

import numpy as np
import pytest

import hop

# every float16 NaN, both signs
_BITS = np.arange(0x7c01, 0x8000, dtype=np.uint16)
NANS = np.concatenate([_BITS, _BITS | 0x8000]).view(np.float16)

PROGRAMS = {
    "copy": lambda a: a.copy(),
    "negative": lambda a: -a,
    "absolute": np.abs,
    "add_zero": lambda a: a + np.float16(0),
    "multiply_one": lambda a: a * np.float16(1),
    "square": lambda a: a * a,
    "sqrt": np.sqrt,
    "maximum": lambda a: np.maximum(a, np.float16(1)),
    "where": lambda a: np.where(a != a, a, np.float16(0)),
    "to_float32": lambda a: a.astype(np.float32),
    "to_float64": lambda a: a.astype(np.float64),
    "through_float32": lambda a: a.astype(np.float32).astype(np.float16),
    "through_float64": lambda a: a.astype(np.float64).astype(np.float16),
    "sum_of_one": lambda a: a[5:6].sum(keepdims=True),
}


def _bits(x):
    return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_float16_nan_payloads_are_numpys_bits(name):
    fn = PROGRAMS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = fn(NANS.copy())
        got = hop.compile(fn)(NANS.copy())
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("src", [np.float32, np.float64])
def test_wider_nans_rounded_to_float16_keep_numpys_payload(src):
    # signalling and quiet NaNs, payloads whose top bits are zero (NumPy
    # keeps them NaNs: 0x7c01), both signs
    if src is np.float32:
        bits = np.array([0x7fa00001, 0x7fc12345, 0xffbfffff, 0x7f800001, 0xff800fff,
                         0x7fc00000], np.uint32)
    else:
        bits = np.array([0x7ff4000000000001, 0x7ff8123456789abc, 0xfff7ffffffffffff,
                         0x7ff0000000000001, 0xfff0000000000fff, 0x7ff8000000000000],
                        np.uint64)
    x = bits.view(src)
    fn = lambda a: a.astype(np.float16)  # noqa: E731
    want, got = fn(x.copy()), hop.compile(fn)(x.copy())
    np.testing.assert_array_equal(_bits(got), _bits(want))
    assert [hex(v) for v in _bits(want)][:4] == (
        ["0x7d00", "0x7e09", "0xfdff", "0x7c01"] if src is np.float32 else
        ["0x7d00", "0x7e04", "0xfdff", "0x7c01"])
