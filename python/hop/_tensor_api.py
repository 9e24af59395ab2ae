"""Pure-Python helpers of hop.Tensor (the type itself lives in hop._C).

tensor_repr makes the NumPy-like text of a concrete tensor:

    hop.tensor([[1., 2.],
                [3., 4.]])
    hop.tensor([1, 2, 3])
    hop.tensor([1, 2], dtype=hop.int32)

The data is formatted by NumPy's array2string (so precision, summarisation
of big tensors with '...', line width and np.set_printoptions behave as in
NumPy).  The dtype is shown exactly when hop.tensor() of the printed data
would not give it back: float32 (any data), int64 and bool (non-empty data)
are implied.
"""

__all__ = ["tensor_repr"]

_PREFIX = "hop.tensor("


def _dtype_implied(t):
    name = t.dtype.name
    if name == "float32":
        return True
    return name in ("int64", "bool") and t.numel() > 0


def _plain_repr(t):
    # Without NumPy: the nested lists of Python numbers.
    text = _PREFIX + repr(t.tolist())
    if not _dtype_implied(t):
        text += ", dtype=hop." + t.dtype.name
    return text + ")"


def tensor_repr(t):
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - NumPy is a dependency of the tests
        return _plain_repr(t)
    a = np.asarray(t)
    skipdtype = _dtype_implied(t)
    # The same layout as NumPy's array_repr with "hop.tensor(" for "array(".
    linewidth = np.get_printoptions()["linewidth"]
    suffix = ")" if skipdtype else ","
    if a.size > 0 or a.shape == (0,):
        body = np.array2string(a, separator=", ", prefix=_PREFIX, suffix=suffix)
    else:
        body = "[], shape=%r" % (a.shape,)
    text = _PREFIX + body + suffix
    if skipdtype:
        return text
    dtype_str = "dtype=hop.%s)" % t.dtype.name
    last_line_len = len(text) - (text.rfind("\n") + 1)
    spacer = " "
    if last_line_len + len(dtype_str) + 1 > linewidth:
        spacer = "\n" + " " * len(_PREFIX)
    return text + spacer + dtype_str
