"""hop.SymFloat: the Python float a SymInt gives while tracing.

Eagerly, ``i * 0.25``, ``0.5 + i`` and ``i / 2`` of an int ``i`` are Python
floats (computed in double), and a float combined with a tensor is a weak
scalar: ``f32[4] + 0.25`` stays f32, the scalar rounded to f32.  While
tracing, ``i`` may be a SymInt (a loop index ``u0``, a size ``s0``); then the
same expressions give a SymFloat, which holds the value as a 0-d float64
tensor of the graph (``hop.zeros((), dtype=hop.float64) + i`` and the float
operations after it, each rounded in double as Python rounds it), and acts as
a weak scalar with tensors: it is converted to the tensor's float dtype (or
float32 for an int or bool tensor, as a Python float would be) before the op.
So a traced or compiled function gives the eager bits.

Only +, -, *, / (and unary -, +, abs) make SymFloats: //, %, ** with floats,
comparisons, bool(), float(), int(), round() and the text of a SymFloat need
its value, known only at run time: in the function's own code in hop.compile
that is where the compiled part ends (hop/_breaks.py: the call runs eagerly),
elsewhere (hop.trace, a HOP body) a TypeError that names the operation.  The
C side (python/_C/symint.c, symint_float_op) calls symint_op
for a SymInt operator with a float operand and for SymInt true division.
Functions that take a tensor or a number (hop.where, hop.maximum, hop.full)
take a SymFloat as the same weak float: python/_C/args.c and hop_py_run_op
(python/_C/tensor_dispatch.c) convert its tensor to the op's float dtype.  A
traced function returns a SymFloat as a Python float (_trace._Runner).
"""

import math
import operator
import sys

from . import _C
from . import _breaks

_ARITH = ("+", "-", "*", "/")


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _expr_text(s):
    """A SymInt's expression, parenthesised when it is compound."""
    e = str(s)
    return e if e.isidentifier() or e.lstrip("-").isdigit() else f"({e})"


def _desc(x):
    if isinstance(x, _C.SymInt):
        return f"SymInt {x}"
    if isinstance(x, SymFloat):
        return f"SymFloat {x._text}"
    if isinstance(x, _C.Tensor):
        return "Tensor"
    return f"{type(x).__name__} {x!r}"


def _text(x):
    if isinstance(x, _C.SymInt):
        return _expr_text(x)
    if isinstance(x, SymFloat):
        return f"({x._text})" if " " in x._text else x._text
    return repr(x)


def _f64(s):
    """A SymInt as a 0-d float64 tensor: float(s), exact below 2**53."""
    return _C.zeros((), dtype=_C.float64) + s


def _sample(x):
    """A stand-in of x's Python type for reproducing Python's own exception."""
    if isinstance(x, _C.SymInt) or _is_int(x):
        return 1
    return 1.0


def _check_divisor(a, b):
    """Python raises ZeroDivisionError for a zero divisor; decide it here."""
    if isinstance(b, SymFloat):
        raise TypeError(
            f"{_desc(a)} / {_desc(b)}: dividing by a SymFloat is not supported while tracing "
            f"(hop cannot tell whether it is 0, where Python raises ZeroDivisionError); "
            f"divide by a tensor or a SymInt instead")
    if isinstance(b, _C.SymInt):
        try:
            if bool(b != 0):
                return
        except _C.DataDependentError as e:
            raise _C.DataDependentError(
                f"{_desc(a)} / {_desc(b)}: cannot tell whether the divisor {b} is 0 (it depends "
                f"on data), where Python raises ZeroDivisionError; divide a float64 tensor "
                f"by it instead (inf or nan for 0, no error): {_alt_of(a)} / {_text(b)}") from e
    elif b != 0:
        return
    _sample(a) / (0 if isinstance(b, _C.SymInt) else b)  # Python's ZeroDivisionError


def _alt_of(x):
    """x as a 0-d float64 tensor, in the text of a suggestion."""
    if isinstance(x, _C.SymInt):
        return f"(hop.zeros((), dtype=hop.float64) + {_expr_text(x)})"
    return f"hop.full((), {x!r}, dtype=hop.float64)"


def _apply(op, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return a / b


def _value(x):
    """An operand of a SymFloat's tensor: its tensor, or a number, or a SymInt."""
    if isinstance(x, SymFloat):
        return x._t
    if isinstance(x, bool):
        return int(x)
    return x


def _numpy_scalar(x):
    """Whether x is a NumPy scalar (np.float64 too, a float subclass)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.generic)


_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
              "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
              "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
              ">": operator.gt, ">=": operator.ge}


def _by_value(op, a, b):
    """a op b with the SymInt's value (int(): a guard on a size, a graph
    break in hop.compile for an unbacked one), as Python computes it."""
    a = int(a) if isinstance(a, _C.SymInt) else a
    b = int(b) if isinstance(b, _C.SymInt) else b
    return _OPERATORS[op](a, b)


def symint_op(op, a, b):
    """a op b where a or b is a SymInt and the other is neither an int nor a
    SymInt, or op is "/": a float result is a SymFloat; a NumPy scalar is
    NumPy's to combine (NotImplemented: its operator calls the ufunc, which
    the SymInt's __array_ufunc__ hands to hop.numpy, so `np.float64(1.5) *
    n` is an np.float64 as eagerly); a complex number takes the SymInt's
    value; anything else is NotImplemented."""
    other = b if isinstance(a, _C.SymInt) else a
    if _numpy_scalar(other):
        return NotImplemented
    if isinstance(other, complex) and op != "pow":
        return _by_value(op, a, b)
    if not isinstance(other, (int, float, _C.SymInt)):
        return NotImplemented
    a = float(a) if isinstance(a, float) else a
    b = float(b) if isinstance(b, float) else b
    if op in _ARITH:
        if op == "/":
            _check_divisor(a, b)
        # The first SymInt becomes a float64 tensor; the other operand is
        # converted to double by the op as Python converts it (a bool is
        # the int 0 or 1).
        if isinstance(a, _C.SymInt):
            t = _apply(op, _f64(a), _value(b))
        else:
            t = _apply(op, _value(a), _f64(b))
        return SymFloat(t, f"{_text(a)} {op} {_text(b)}")
    if op == "**" and (isinstance(b, _C.SymInt) and not isinstance(a, float)):
        why = ("a SymInt exponent has no symbolic form (a SymInt power needs a constant int "
               "exponent >= 0)")
        alt = f"use a constant exponent, or a tensor base: hop.full((), {_text(a)}, " \
              f"dtype=hop.int64) ** {_text(b)}" if isinstance(a, int) else \
              "use a constant exponent"
        raise TypeError(f"{_desc(a)} ** {_desc(b)}: {why}; {alt}")
    if op == "**" and _is_int(b) and b < 0:
        raise TypeError(
            f"{_desc(a)} ** {_desc(b)}: a negative exponent gives a float, and SymInts make "
            f"floats only with +, -, * and /; write 1 / {_text(a)} ** {-b} for that float")
    if op == "pow":
        raise TypeError(
            f"pow({_desc(a)}, {_desc(b)}, mod): the three-argument pow of a SymInt needs int "
            f"operands and an exponent that is a constant int >= 0")
    raise TypeError(
        f"{_desc(a)} {op} {_desc(b)}: a float result of {op} is not supported for SymInts "
        f"(SymInts make floats only with +, -, * and /, which give Python's bits); use int "
        f"operands, or compute it on a float64 tensor: {_alt_of(a)} {op} {_text(b)}")


_FLIPPED = {"<": ">", "<=": ">=", "==": "==", "!=": "!=", ">": "<", ">=": "<="}
_INT64_END = 2.0 ** 63


def _compare_float(op, s, f):
    """s op f for a SymInt s and a float f, as Python compares an int with a
    float (exactly, not in double): a decision on s against f's neighbouring
    ints, with the ShapeEnv's guard; a NaN is unordered; a float past int64
    lies beyond every SymInt."""
    if f != f:
        return op == "!="
    if f >= _INT64_END:
        return op in ("<", "<=", "!=")
    if f < -_INT64_END:
        return op in (">", ">=", "!=")
    if op in ("==", "!="):
        equal = f.is_integer() and bool(s == int(f))
        return equal if op == "==" else not equal
    if op == "<":
        return bool(s < math.ceil(f))
    if op == "<=":
        return bool(s <= math.floor(f))
    if op == ">":
        return bool(s > math.floor(f))
    return bool(s >= math.ceil(f))


def symint_compare(op, a, b):
    """a op b (a comparison) where a or b is a SymInt and the other is not
    an int of int64: a float or complex number as Python compares an int
    with it; a NumPy scalar is NumPy's (NotImplemented: its comparison calls
    the ufunc, the SymInt's __array_ufunc__ hop.numpy's); an int past int64
    lies beyond every SymInt; else NotImplemented."""
    if isinstance(a, _C.SymInt):
        s, other = a, b
    else:
        s, other, op = b, a, _FLIPPED[op]
    if _numpy_scalar(other) or isinstance(other, (SymFloat, _C.Tensor)):
        return NotImplemented
    if isinstance(other, int):
        return _OPERATORS[op](0, 1 if other > 0 else -1)  # (s's side of a big int)
    if isinstance(other, float):
        return _compare_float(op, s, float(other))
    if isinstance(other, complex):
        if op in ("==", "!="):
            equal = other.imag == 0 and _compare_float("==", s, other.real)
            return equal if op == "==" else not equal
        left, right = ("int", "complex") if s is a else ("complex", "int")
        raise TypeError(f"'{op if s is a else _FLIPPED[op]}' not supported between instances of "
                        f"'{left}' and '{right}'")
    return NotImplemented


def _weak_dtype(t):
    """The dtype a Python float takes beside tensor t: t's if float, else float32."""
    d = t.dtype
    return d if d.is_floating_point else _C.float32


class SymFloat:
    """A float computed from SymInts while tracing (``i * 0.25``, ``i / 2``).

    Holds the value as a 0-d float64 tensor of the graph, computed in double
    as Python computes the float; with a tensor it is a weak scalar (the
    tensor's float dtype, or float32).  Supports +, -, *, / with ints,
    floats, SymInts, SymFloats and tensors, and unary -, + and abs().  Not
    made by calling hop.SymFloat.

    >>> def body(i, v):
    ...     return v + i * 0.25          # i: SymInt u0; i * 0.25: SymFloat
    >>> hop.compile(lambda x: hop.fori_loop(0, 5, body, x))(hop.zeros(2))
    hop.tensor([2.5, 2.5])
    """

    __slots__ = ("_t", "_text")
    __hash__ = None

    def _user_class(self):
        """float: the class of the value eagerly, which the user's code sees
        while hop traces (isinstance(v, float); hop.compile's type(v))."""
        return float

    __class__ = _C._UserClass(_user_class)

    def __init__(self, t, text):
        self._t = t
        self._text = text

    def __repr__(self):
        return _breaks.text("a SymFloat", f"SymFloat({self._text})", sys._getframe(1))

    def __str__(self):
        return _breaks.text("a SymFloat", self._text, sys._getframe(1))

    def __format__(self, spec):
        if not spec:
            return _breaks.text("a SymFloat", self._text, sys._getframe(1))
        return self._unsupported(f"format(..., {spec!r})")

    def _binary(self, op, other, reflected):
        a, b = (other, self) if reflected else (self, other)
        if isinstance(other, _C.Tensor):
            t = self._t.to(_weak_dtype(other))
            return _apply(op, other, t) if reflected else _apply(op, t, other)
        if _numpy_scalar(other):
            # (a Python float with a NumPy scalar is NumPy's scalar: its value
            # is needed, at run time)
            return self._unsupported(op, other)
        if not (isinstance(other, (int, float, _C.SymInt, SymFloat))):
            return NotImplemented
        if op == "/":
            _check_divisor(a, b)
        return SymFloat(_apply(op, _value(a), _value(b)), f"{_text(a)} {op} {_text(b)}")

    def __add__(self, other):
        return self._binary("+", other, False)

    def __radd__(self, other):
        return self._binary("+", other, True)

    def __sub__(self, other):
        return self._binary("-", other, False)

    def __rsub__(self, other):
        return self._binary("-", other, True)

    def __mul__(self, other):
        return self._binary("*", other, False)

    def __rmul__(self, other):
        return self._binary("*", other, True)

    def __truediv__(self, other):
        return self._binary("/", other, False)

    def __rtruediv__(self, other):
        return self._binary("/", other, True)

    def __neg__(self):
        return SymFloat(-self._t, f"-{_text(self)}")

    def __pos__(self):
        return self

    def __abs__(self):
        return SymFloat(abs(self._t), f"abs({self._text})")

    def _unsupported(self, what, other=None):
        if not isinstance(other, (int, float, _C.SymInt, SymFloat, type(None))) and \
                not _numpy_scalar(other):
            return NotImplemented
        shown = f"{_desc(self)} {what} {_desc(other)}" if other is not None \
            else f"{what}({_desc(self)})"
        _breaks.conversion(
            TypeError,
            f"{shown}: not supported while tracing: a SymFloat's value is known only at run "
            f"time (SymFloats support +, -, *, /, unary -, + and abs(), and combine with "
            f"tensors); do it on a tensor instead, e.g. hop.zeros((), dtype=hop.float64) + "
            f"{_text(self)}")

    def __floordiv__(self, other):
        return self._unsupported("//", other)

    def __rfloordiv__(self, other):
        return self._unsupported("//", other)

    def __mod__(self, other):
        return self._unsupported("%", other)

    def __rmod__(self, other):
        return self._unsupported("%", other)

    def __pow__(self, other, mod=None):
        return self._unsupported("**", other)

    def __rpow__(self, other):
        return self._unsupported("**", other)

    def __lt__(self, other):
        return self._unsupported("<", other)

    def __le__(self, other):
        return self._unsupported("<=", other)

    def __gt__(self, other):
        return self._unsupported(">", other)

    def __ge__(self, other):
        return self._unsupported(">=", other)

    def __eq__(self, other):
        return self._unsupported("==", other)

    def __ne__(self, other):
        return self._unsupported("!=", other)

    def __bool__(self):
        return self._unsupported("bool")

    def __float__(self):
        return self._unsupported("float")

    def __int__(self):
        return self._unsupported("int")

    def __round__(self, ndigits=None):
        return self._unsupported("round")

    def __trunc__(self):
        return self._unsupported("math.trunc")

    def __floor__(self):
        return self._unsupported("math.floor")

    def __ceil__(self):
        return self._unsupported("math.ceil")
