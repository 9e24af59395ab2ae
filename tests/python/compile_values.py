"""plain(v): a value a compiled or eager call returned, as comparable plain
values (a traced value anywhere in it is a failure), for the compile
campaigns (test_compile_campaign41.py, test_compile_campaign_s39.py)."""

import numpy as np

import hop
from hop import _C


def plain(v):
    """v as comparable plain values (a proxy anywhere is a failure)."""
    if isinstance(v, hop.Tensor):
        assert not _C._is_proxy(v), "a traced value escaped its trace"
        return ("T", v.dtype.name, v.tolist())
    if isinstance(v, np.ndarray):
        return ("A", str(v.dtype), v.tolist())
    if isinstance(v, np.generic):
        return ("S", str(v.dtype), v.item())
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [plain(x) for x in v])
    if isinstance(v, dict):
        return ("dict", [(plain(k), plain(x)) for k, x in v.items()])
    if isinstance(v, (set, frozenset)):
        return (type(v).__name__, sorted(map(repr, v)))
    if isinstance(v, (int, float, str, bool, type(None), complex, bytes)):
        return (type(v).__name__, repr(v))
    if isinstance(v, type):
        return ("type", v.__qualname__)
    return (type(v).__name__, plain(dict(vars(v))) if hasattr(v, "__dict__") else repr(v))
