"""Which function the Python code that reads a hop.numpy array's `dtype`
from C is calling: NumPy's `np.dtype(obj)` refuses its own ndarray
("Cannot construct a dtype from an array": `PyArray_Check` before it reads
any other object's `dtype` attribute), and so `np.finfo(a)` and
`np.iinfo(a)` of an ndarray fall back to `np.dtype(type(a))`, object, and
raise ValueError.  NumPy's C code makes no frame: the frame above the
property's getter is the caller's, stopped at its instruction.  A Python
read of the attribute (`a.dtype`) is a LOAD_ATTR or LOAD_METHOD there; a
call (`np.dtype(a)`, `getattr(a, "dtype")`, a C function) is a CALL, whose
callable this module finds by walking the caller's bytecode back from the
CALL (CPython 3.11's layout; elsewhere, or for a callable made in a way
the walk does not follow, `np.dtype` is not recognised and the array's
dtype is answered as before)."""

import dis
import sys

import numpy as _np

from .. import _breaks

_OP = dis.opmap
_ATTR_READS = frozenset(_OP[n] for n in ("LOAD_ATTR", "LOAD_METHOD") if n in _OP)
_CALL = _OP.get("CALL") if sys.version_info[:2] == (3, 11) else None
_LOADS = ("LOAD_FAST", "LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLASSDEREF")
_CACHE = {}
# NumPy code that reads its own ndarray's dtype before it calls dtype() of
# the object (obj2sctype: `rep.dtype.type`; sctype2char and issctype call
# it): a hop.numpy array's is read there, as NumPy's
_READS_ARRAYS_FIRST = frozenset([_np.obj2sctype.__code__])


def _effect(ins):
    """(values popped, values pushed) of instruction ins, or None for one
    the walk does not follow (a jump, a store, anything else)."""
    name, arg = ins.opname, ins.arg
    if name in ("PRECALL", "KW_NAMES", "NOP", "EXTENDED_ARG"):
        return 0, 0
    if name == "LOAD_GLOBAL":
        return 0, 2 if arg & 1 else 1
    if name in _LOADS or name in ("LOAD_CONST", "LOAD_CLOSURE", "PUSH_NULL"):
        return 0, 1
    if name == "LOAD_ATTR":
        return 1, 1
    if name == "LOAD_METHOD":
        return 1, 2
    if name == "CALL":
        return arg + 2, 1
    if name in ("BINARY_SUBSCR", "BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP"):
        return 2, 1
    if name in ("UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "UNARY_POSITIVE",
                "GET_ITER"):
        return 1, 1
    if name in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET"):
        return arg, 1
    if name == "BUILD_MAP":
        return 2 * arg, 1
    if name == "BUILD_CONST_KEY_MAP":
        return arg + 1, 1
    return None


def _producer(ins, k, depth):
    """The index of the instruction before ins[k] (in ins) that pushed the
    value `depth` below the top of the stack as ins[k] begins, and which of
    its pushed values it is (0: its first), or None."""
    for j in range(k - 1, -1, -1):
        e = _effect(ins[j])
        if e is None:
            return None
        pops, pushes = e
        if depth < pushes:
            return j, pushes - 1 - depth
        depth += pops - pushes
    return None


def _chain(ins, j, which):
    """The names that load the value instruction ins[j] pushed as its
    `which`-th output: ("LOAD_GLOBAL", "np", "dtype") for `np.dtype`, or
    None where it is not a name and attributes."""
    names = []
    while True:
        i = ins[j]
        if i.opname in _LOADS and (i.opname != "LOAD_GLOBAL" or which == (i.arg & 1)):
            return (i.opname, i.argval) + tuple(reversed(names))
        if i.opname == "LOAD_ATTR" and which == 0 or i.opname == "LOAD_METHOD" and which == 0:
            names.append(i.argval)
            got = _producer(ins, j, 0)
            if got is None:
                return None
            j, which = got
            continue
        return None


def _callee_chain(code, lasti):
    """The name chain of the callable of the CALL at byte offset lasti of
    code, or None (cached per instruction)."""
    key = (code, lasti)
    got = _CACHE.get(key, key)
    if got is not key:
        return got
    chain = None
    ins = [i for i in dis.get_instructions(code)]
    at = next((k for k, i in enumerate(ins) if i.offset == lasti), None)
    if at is not None and ins[at].opcode == _CALL:
        # the stack at CALL n: [NULL or the method, the callable or self,
        # n arguments]; LOAD_METHOD pushes the pair, so its name is the
        # callable's whichever of the two the walk lands on
        got = _producer(ins, at, ins[at].arg)
        if got is not None:
            j, which = got
            if ins[j].opname == "LOAD_METHOD":
                which = 0
            chain = _chain(ins, j, which)
    if len(_CACHE) > 4096:
        _CACHE.clear()
    _CACHE[key] = chain
    return chain


def _value(frame, chain):
    """The object chain names in frame (attributes of modules and classes
    only: reading any other object's attribute could run its code), or
    None."""
    op, name = chain[0], chain[1]
    if op == "LOAD_GLOBAL":
        spaces = (frame.f_globals, frame.f_builtins)
    elif op == "LOAD_NAME":
        spaces = (frame.f_locals, frame.f_globals, frame.f_builtins)
    else:
        spaces = (frame.f_locals,)
    v = next((s[name] for s in spaces if name in s), None)
    for attr in chain[2:]:
        if not isinstance(v, (type(sys), type)):
            return None
        v = getattr(v, attr, None)
    return v


def calls_np_dtype(frame):
    """Whether frame (the one above a hop.numpy array's dtype getter) is
    calling np.dtype: NumPy's dtype() of an object that is not its ndarray
    reads the object's `dtype`."""
    code, lasti = frame.f_code, frame.f_lasti
    if code in _READS_ARRAYS_FIRST:
        return False
    if code in _breaks.ACTS_FOR_USER:
        # hop.compile's frame translator calls the user's callable f for
        # the user's instruction (_frame_library's `f(*args, **kwargs)`)
        return frame.f_locals.get("f") is _np.dtype
    co = code.co_code
    if _CALL is None or not 0 <= lasti < len(co) or co[lasti] in _ATTR_READS:
        return False
    chain = _callee_chain(code, lasti)
    return chain is not None and _value(frame, chain) is _np.dtype
