"""Pure-Python helpers of hop.Tensor (the type itself lives in hop._C).

tensor_repr makes the NumPy-like text of a concrete tensor:

    hop.tensor([[1., 2.],
                [3., 4.]])
    hop.tensor([1, 2, 3])
    hop.tensor([1, 2], dtype=hop.int32)

The data is formatted by NumPy's array2string (so precision, summarisation
of big tensors with '...', line width and np.set_printoptions behave as in
NumPy); a 0-d tensor under NumPy's default print options takes a shorter
path to the same text (_scalar_text: 2.5 us where array2string takes ~25 us,
which a compiled function's replayed print(x.sum()) pays on every call), and
a positional float's text is made in C before this module is asked
(tensor_repr.c's scalar_repr: dragon4's digits computed exactly, without NumPy,
for float32 and float64; _repr_parts tells it NumPy's print options).  The
dtype is shown exactly when hop.tensor() of the printed data would not give
it back: float32 (any data), int64 and bool (non-empty data)
are implied.
"""

import sys

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


# NumPy's default print options (np.get_printoptions() untouched): under
# these, _scalar_text spells a 0-d tensor as array2string does.
_DEFAULT_OPTIONS = {"edgeitems": 3, "threshold": 1000, "floatmode": "maxprec", "precision": 8,
                    "suppress": False, "linewidth": 75, "nanstr": "nan", "infstr": "inf",
                    "sign": "-", "formatter": None, "legacy": False}
# The same, as numpy.core.arrayprint keeps them (legacy False is stored as
# sys.maxsize): compared with that module's dict itself, not a copy of it.
_RAW_DEFAULTS = dict(_DEFAULT_OPTIONS, legacy=sys.maxsize)
_FLOATS = ("float16", "float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_INF = float("inf")


def _scalar_text(t, np):
    """array2string's text of the 0-d tensor t under NumPy's default print
    options, or None for any other case.  print(x.sum()) of a compiled
    function is replayed on every call, and array2string's generic path
    (format options, a FloatingFormat filled from array reductions) costs
    ~30 us for one number; this is NumPy's own FloatingFormat logic for a
    single value (numpy/core/arrayprint.py, 1.24: fillFormat, then
    __call__), with the same dragon4 formatters, so the text is the same."""
    name = t.dtype.name
    if name == "bool":
        return "True" if t.item() else "False"
    if name in _INTS:
        return str(t.item())  # IntegerFormat: '%{width}d', width its own
    if name not in _FLOATS:
        return None
    v = t.item()  # the value as a double, exactly
    if v != v:
        return "nan"  # (no sign: NumPy's default sign='-' shows none for nan)
    if v in (_INF, -_INF):
        return "-inf" if v < 0 else "inf"
    # fillFormat's choice of exponent form compares the numpy scalar with
    # Python floats, i.e. as doubles (float32(1e-4) < 0.0001 holds)
    x = getattr(np, name)(v)  # dragon4 spells the shortest digits of x's own dtype
    a = abs(v)
    if v != 0 and (a >= 1.e8 or a < 0.0001):
        first = np.format_float_scientific(x, precision=8, unique=True, trim=".")
        frac, _, exp = first.partition("e")
        whole, digits = frac.split(".")
        return np.format_float_scientific(x, precision=len(digits), min_digits=len(digits),
                                          unique=True, trim="k", pad_left=len(whole),
                                          exp_digits=len(exp) - 1)
    # both passes, as NumPy (the second's min_digits=0 spells a float32
    # -67600176 in full where the first pass gives -67600180.); dragon4 is
    # what format_float_positional calls after checking its arguments (these
    # are valid), called directly: this is most of a replayed print's cost
    d4 = _dragon4_positional(np)
    first = d4(x, precision=8, unique=True, fractional=True, trim=".")
    whole, _, digits = first.partition(".")
    return d4(x, precision=8, min_digits=0, unique=True, fractional=True, trim=".",
              pad_left=len(whole), pad_right=len(digits))


_numpy = []  # [numpy, numpy.core.arrayprint or None, dragon4_positional] once imported


def _np():
    if not _numpy:
        import numpy as np
        try:
            from numpy.core import arrayprint
            from numpy.core.multiarray import dragon4_positional
            if not isinstance(getattr(arrayprint, "_format_options", None), dict):
                arrayprint = None
        except ImportError:  # another NumPy's layout: its public functions
            arrayprint, dragon4_positional = None, np.format_float_positional
        _numpy.extend((np, arrayprint, dragon4_positional))
    return _numpy[0]


def _dragon4_positional(np):
    return _numpy[2]


def _repr_parts():
    """What the C text of a 0-d float tensor needs (tensor_repr.c's scalar_repr):
    (numpy.core.arrayprint, its default options as it keeps them,
    dragon4_positional), or None where this NumPy keeps its options
    elsewhere."""
    _np()
    if _numpy[1] is None:
        return None
    return (_numpy[1], _RAW_DEFAULTS, _numpy[2])


def _default_options(np):
    """Whether NumPy's print options are its defaults (np.get_printoptions()
    without the copy, where NumPy keeps them in a dict)."""
    ap = _numpy[1]
    if ap is not None:
        return ap._format_options == _RAW_DEFAULTS
    return np.get_printoptions() == _DEFAULT_OPTIONS


def tensor_repr(t):
    try:
        np = _numpy[0] if _numpy else _np()
    except ImportError:  # pragma: no cover - NumPy is a dependency of the tests
        return _plain_repr(t)
    if t.ndim == 0 and _default_options(np):
        body = _scalar_text(t, np)
        if body is not None:
            if _dtype_implied(t):
                return _PREFIX + body + ")"
            # (a number's text and a dtype's name fit in the default 75
            # columns: never the line break below)
            return _PREFIX + body + ", dtype=hop." + t.dtype.name + ")"
    return _array2string_repr(t, np)


def _array2string_repr(t, np):
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
