"""Ported from PyTorch's test/torch_np/test_dtype.py (the top-level one,
issue #29; numpy_tests/core/test_dtype.py's port is
test_numpy_port_dtype.py): dtype() of a name, a NumPy scalar type and a
NumPy dtype, by NumPy, by hop.numpy's own names eagerly and compiled
(numpy_diff.check_ns).  torch's xfails (NumPy's scalar types and dtype
objects) are ported: hop.numpy's dtypes are NumPy's."""

import numpy as np
import pytest

import hop.numpy as hnp
from numpy_diff import check_ns, ported

SRC = "test_dtype.py"

DTYPE_NAMES = ["bool_", *[f"int{w}" for w in [8, 16, 32, 64]], "uint8",
               *[f"float{w}" for w in [16, 32, 64]], *[f"complex{w}" for w in [64, 128]]]
PARAMS = [pytest.param("bool", "bool", id="'bool'"),
          pytest.param("bool", np.dtype("bool"), id="np.dtype('bool')")]
for _name in DTYPE_NAMES:
    PARAMS += [pytest.param(_name, _name, id=repr(_name)),
               pytest.param(_name, getattr(np, _name), id=f"np.{_name}"),
               pytest.param(_name, np.dtype(_name), id=f"np.dtype({_name!r})")]


@ported(SRC, "test_convert_np_dtypes")
@pytest.mark.parametrize("name, np_dtype", PARAMS)
def test_convert_np_dtypes(name, np_dtype):
    got = check_ns(lambda xp: xp.dtype(np_dtype))
    assert hnp.dtype(np_dtype) is got or hnp.dtype(np_dtype) == got
    if name == "bool_":
        assert got == np.bool_
    elif got.name == "bool":
        assert name.startswith("bool")
    else:
        assert got.name == name
    # and as a hop.numpy array's dtype, eagerly and compiled
    check_ns(lambda xp: xp.zeros(2, dtype=np_dtype).dtype)
