"""Foreign kernels: C functions called as ops (hop/foreign.h).

    import ctypes, hop
    lib = ctypes.CDLL("./libkernels.so")
    saxpy = hop.foreign("void saxpy(int64_t n, float a, const float *x, float *y)",
                        lib.saxpy)
    out = saxpy(4, 2.0, x, y)        # a new tensor: y after the kernel ran; y is untouched

A call runs the kernel eagerly through libffi, or is recorded as a call_foreign node
while tracing (inside hop.cond, hop.map, ... too; outer tensors are lifted).  A kernel
gives one new tensor per non-const pointer parameter: None, a Tensor, or a tuple.

Sizes in the signature are checked before every call, eager, traced or compiled alike:

    saxpy = hop.foreign("void saxpy(int64_t n, float a, const float x[n], float y[n])", fn)
    saxpy(5, 2.0, x4, y5)   # hop.ShapeError: saxpy: parameter 3 (const float x[n])
                            #   needs n = 5 elements, got f32[4]

A ctypes callback stays alive as long as the kernel does: registered, or held by any
GraphModule or compiled function that calls it.
"""

import ctypes

from . import _C

__all__ = ["foreign", "ForeignKernel"]


def _address(fn):
    if isinstance(fn, bool):
        raise TypeError("hop.foreign(): address must be an int or a ctypes function, not bool")
    if isinstance(fn, int):
        return fn
    if isinstance(fn, ctypes._CFuncPtr):
        return ctypes.cast(fn, ctypes.c_void_p).value or 0
    raise TypeError("hop.foreign(): address must be an int or a ctypes function, not "
                    f"{type(fn).__name__}")


class ForeignKernel:
    """A registered C function, callable with hop.Tensors and Python scalars
    (hop.foreign makes it): eagerly through libffi, or recorded as a
    call_foreign node while tracing.  Each non-const pointer parameter gives
    a new tensor (the input's copy, after the kernel wrote it): None, one
    Tensor, or a tuple.

    >>> import ctypes
    >>> F = ctypes.POINTER(ctypes.c_float)
    >>> @ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_float, F, F)
    ... def axpy(n, a, x, y):
    ...     for i in range(n):
    ...         y[i] += a * x[i]
    >>> k = hop.foreign("void axpy(int64_t n, float a, const float *x, float *y)", axpy)
    >>> k(2, 3.0, hop.tensor([1.0, 2.0]), hop.tensor([10.0, 20.0]))
    hop.tensor([13., 26.])
    >>> k.unregister()
    """

    __slots__ = ("name", "_registered")

    def __init__(self, signature, address, *, side_effects=False):
        if not isinstance(signature, str):
            raise TypeError("hop.foreign(): signature must be a str, not "
                            f"{type(signature).__name__}")
        _check_text(signature)
        self._registered = False
        # The C kernel itself keeps a ctypes callback alive, not this object:
        # the registry while it is registered, and every plan (GraphModule,
        # compiled function) that calls it, however long they outlive this.
        self.name = _C._foreign_register(signature, _address(address), bool(side_effects),
                                         address if isinstance(address, ctypes._CFuncPtr)
                                         else None)
        self._registered = True

    @property
    def signature(self):
        """The C prototype in canonical spelling."""
        return _C._foreign_signature(self.name)

    def __call__(self, *args):
        """Calls the kernel: one argument per C parameter, in order."""
        if not self._registered:
            raise _C.Error(f"{self.name}: the foreign kernel was unregistered")
        return _C._foreign_call(self.name, *args)

    def unregister(self):
        """Removes the kernel from the registry (compiled plans keep it)."""
        if self._registered:
            self._registered = False
            _C._foreign_unregister(self.name)

    def __repr__(self):
        state = "" if self._registered else " (unregistered)"
        return f"<hop.foreign {self.signature if self._registered else self.name}{state}>"


def _check_text(signature):
    """InvalidError, naming the column as the prototype's own errors do,
    for what cannot reach the C parser as UTF-8 text: a NUL character (the
    end of a C string) or a lone surrogate."""
    for i, ch in enumerate(signature):
        if ch == "\0" or "\ud800" <= ch <= "\udfff":
            raise _C.InvalidError(f"foreign signature: column {i + 1}: {ch!r} is not a character "
                                  f"of a C prototype (names and types are ASCII C identifiers)")


def foreign(signature, address, *, side_effects=False):
    """Registers the C function at `address` (an int, or a ctypes function) with the C
    prototype `signature` and returns a callable ForeignKernel.  side_effects=True keeps
    its calls in graphs even when their results are unused.  Errors in the prototype
    name the column and the parameter (hop.InvalidError); ForeignKernel's
    docstring shows a kernel written with ctypes registered and called.

    >>> hop.foreign("void f(int64_t n, quux *y)", 1)
    Traceback (most recent call last):
        ...
    hop.InvalidError: foreign signature: column 19 (parameter 2): unknown type 'quux' (types: void, bool, int, int32_t, int64_t, float, double)
    """
    return ForeignKernel(signature, address, side_effects=side_effects)
