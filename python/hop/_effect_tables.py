"""The tables of hop.compile's effect finder (_effects): which methods,
builtins, modules and library functions change state, return new objects or
hold their arguments.  Data only; the finder reads them."""

# Methods that change their receiver.
_MUTATORS = frozenset("""
    append extend insert pop remove clear update setdefault popitem add discard
    difference_update intersection_update symmetric_difference_update sort reverse
    appendleft extendleft popleft rotate fill put itemset resize setfield setflags partition
    byteswap write writelines flush truncate seek __setitem__ __delitem__ __setattr__
    __delattr__ __iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__
    __imatmul__ __iand__ __ior__ __ixor__ __ilshift__ __irshift__ acquire release set
    put_nowait get_nowait
""".split())
# Methods of the standard library's classes written in Python that change
# their receiver, beside _MUTATORS (collections.Counter.subtract, ...)
_STDLIB_MUTATORS = frozenset("subtract move_to_end".split())
_ITERATOR_METHODS = frozenset(["__next__", "send", "throw", "close"])
# Of an array (NumPy's, hop.numpy's), only these change it; a hop.Tensor has
# none (its add, sort, ... make new tensors).
_ARRAY_MUTATORS = frozenset("""
    fill sort put itemset resize setfield setflags partition byteswap __setitem__ __delitem__
    __iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __imatmul__
    __iand__ __ior__ __ixor__ __ilshift__ __irshift__ tofile dump
""".split())
# The ones hop.numpy traces as writes of the array (x.sort(), x.fill(0)):
# on an array whose writes the compiled call replays (written_back), no effect.
_TRACED_ARRAY_WRITES = frozenset(["fill", "sort", "put", "partition"])
# C methods whose result may be (a view of, a part of) their receiver; any
# other's result is a new object.
_PART_METHODS = frozenset("""
    reshape view ravel transpose swapaxes squeeze diagonal __getitem__ get pop popitem
    setdefault __next__ __iter__ __enter__ expand permute unsqueeze select narrow T mT real
    imag conj contiguous detach __self__ values keys items to numpy astype
""".split())

# Builtins: effects, results that are new objects, and the iterables they
# consume (an iterator argument is advanced).
_BUILTIN_EFFECTS = {
    "print": ("print", "calls print()"),
    "input": ("io", "calls input()"),
    "open": ("io", "opens a file"),
    "breakpoint": ("io", "calls breakpoint()"),
    "exec": ("call", "calls exec()"),
    "eval": ("call", "calls eval()"),
    "__import__": ("call", "calls __import__()"),
    "exit": ("io", "calls exit()"),
    "quit": ("io", "calls quit()"),
    "help": ("io", "calls help()"),
}
_BUILTIN_ARGS = frozenset("min max getattr iter reversed enumerate zip map filter vars type "
                          "super next".split())
_BUILTIN_UNKNOWN = frozenset("globals locals vars type".split())
_CONSUMERS = frozenset("list tuple dict set frozenset sorted sum min max any all enumerate zip "
                       "map filter reversed iter next bytes bytearray".split())

# Modules by what their functions do.  A module not listed, of the standard
# library, is "call": hop does not know it.
_PURE_MODULES = frozenset("""
    math cmath operator _operator itertools functools _functools numbers fractions
    statistics string re copy collections _collections dataclasses enum typing abc types
    bisect _bisect heapq _heapq struct keyword textwrap unicodedata array contextlib
    builtins json _json
""".split())
# Functions of pure modules that do I/O.
_IO_FUNCTIONS = frozenset(["json.dump", "json.load"])
_EFFECT_MODULES = {
    "time": "time", "random": "random", "_random": "random", "secrets": "random",
    "uuid": "random", "sys": "io", "io": "io", "_io": "io", "os": "io", "posix": "io",
    "logging": "io", "warnings": "io", "_warnings": "io", "subprocess": "io", "socket": "io",
    "shutil": "io", "pathlib": "io", "tempfile": "io", "pickle": "io", "_pickle": "io",
    "shelve": "io", "sqlite3": "io", "threading": "call", "gc": "call", "atexit": "call",
    "signal": "io", "datetime": "time",
    # the thread's decimal context: read by every operation on a Decimal, its
    # flags set by them (decimal.getcontext(), setcontext(), localcontext())
    "decimal": "context", "_decimal": "context", "_pydecimal": "context",
}
_DATETIME_NOW = frozenset(["now", "utcnow", "today", "fromtimestamp"])
# Functions of pure modules that change their first argument.
_ARG0_WRITERS = frozenset("""
    insort insort_left insort_right heappush heappop heapify heapreplace heappushpop
    setitem delitem iadd iconcat isub imul imatmul itruediv ifloordiv imod ipow iand ior
    ixor ilshift irshift __setitem__ __delitem__ __iadd__ update_wrapper
""".split())

# hop's and NumPy's own functions are pure but for these.
_HOP_EFFECTS = {"save": "io", "load": "io", "set_num_threads": "call",
                "load_library": "call", "register_pytree_node": "call"}
_NP_EFFECTS = {"seterr": "fperror", "seterrcall": "fperror", "set_printoptions": "call",
               "setbufsize": "call", "save": "io", "savez": "io", "savez_compressed": "io",
               "savetxt": "io", "load": "io", "loadtxt": "io", "genfromtxt": "io",
               "fromfile": "io", "tofile": "io", "dump": "io", "printoptions": "call",
               # reads of the process's NumPy settings, which a caller may change
               # between calls (and a trace runs under hop's own errstate): a break,
               # read in Python on every call
               "geterr": "io", "geterrcall": "io", "geterrobj": "io", "getbufsize": "io",
               "get_printoptions": "io"}
_FP_QUIET = ("ignore", "warn")  # the numpy.errstate modes hop's results agree with (warnings aside)

# NumPy functions whose result is always a new array.
_NP_NEW = frozenset("""
    zeros ones empty full zeros_like ones_like empty_like full_like arange linspace logspace
    geomspace eye identity array copy concatenate stack vstack hstack dstack column_stack
    tile repeat sort argsort cumsum cumprod sum prod mean std var max min amax amin argmax
    argmin dot matmul outer inner einsum tensordot where clip round around isclose allclose
    array_equal nonzero argwhere diff unique meshgrid tri tril triu diag
""".split())
_RANDOM_MAKERS = frozenset(["default_rng", "RandomState", "Generator", "SeedSequence",
                            "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64", "Random"])

# Library callables whose result holds none of their arguments: a number, a
# string, a bool, a copy into bytes (any other library callable may: the
# general rule of _effects._builds_holder)
_KEEPS_NOTHING = frozenset([len, sum, any, all, isinstance, issubclass, hash, id, repr, str,
                            int, float, bool, complex, abs, round, divmod, pow, format, ord, chr,
                            bin, hex, oct, ascii, callable, hasattr, print, bytes, bytearray,
                            range])
# Modules whose functions return numbers, strings or new arrays, never an
# object holding their arguments (with hop's and NumPy's)
_KEEPS_NOTHING_MODULES = frozenset("math cmath numbers statistics string struct keyword "
                                   "unicodedata json _json textwrap time random _random".split())

# The special methods of their arguments the builtin functions and classes
# may run (float(v): v.__float__, list(v): v.__iter__, sorted(xs): the
# items' __lt__ when xs is one of them, dict(v): v.keys), and NumPy's
# functions of an object (np.asarray(v): v.__array__).  The effect finder
# follows them into the user's code; the frame translator breaks at such a
# call only when the class has one of them of the user's.  (A special
# method is looked up on the class, past __getattribute__/__getattr__; dict(v)
# reads v.keys as an attribute.)
_ITERATION = ("__iter__", "__next__", "__getitem__", "__len__", "__length_hint__")
_ORDER = ("__lt__", "__gt__", "__le__", "__ge__", "__eq__", "__bool__")
_CALLED = ("__call__",)  # a callable argument (map(f, xs), sorted(key=f))
_BUILTIN_DUNDERS = {
    "float": ("__float__", "__index__"), "int": ("__int__", "__index__", "__trunc__"),
    "complex": ("__complex__", "__float__", "__index__"), "str": ("__str__", "__repr__"),
    "bytes": ("__bytes__", "__index__", "__buffer__") + _ITERATION,
    "bool": ("__bool__", "__len__"),
    "list": _ITERATION, "tuple": _ITERATION, "set": _ITERATION + ("__hash__", "__eq__"),
    "frozenset": _ITERATION + ("__hash__", "__eq__"),
    "dict": _ITERATION + ("keys", "__getattribute__", "__getattr__"),
    "enumerate": _ITERATION, "zip": _ITERATION, "map": _ITERATION + _CALLED,
    "filter": _ITERATION + _CALLED + ("__bool__",),
    "reversed": ("__reversed__",) + _ITERATION,
    "len": ("__len__",), "repr": ("__repr__",), "ascii": ("__repr__",),
    "format": ("__format__", "__str__", "__repr__"), "hash": ("__hash__",),
    "abs": ("__abs__",), "round": ("__round__",), "next": ("__next__",),
    "iter": _ITERATION + _CALLED + ("__eq__",),
    "sorted": _ITERATION + _ORDER + _CALLED, "min": _ITERATION + _ORDER + _CALLED,
    "max": _ITERATION + _ORDER + _CALLED, "sum": _ITERATION + ("__add__", "__radd__"),
    "any": _ITERATION + ("__bool__",), "all": _ITERATION + ("__bool__",),
    "divmod": ("__divmod__", "__rdivmod__"), "pow": ("__pow__", "__rpow__"),
}
_NUMPY_DUNDERS = ("__array__", "__array_function__", "__array_ufunc__", "__float__", "__int__",
                  "__index__", "__complex__") + _ITERATION
