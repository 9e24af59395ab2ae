"""hop.save, hop.load and pickling, over the saved format (docs/SAVED_FORMAT.md).

What a file keeps: one traced program (the C OutputGraph: graphs, subgraphs
with their capture tables, symbols, guards, the values of captured tensors)
and, in the section "hop.python", JSON describing how Python calls it: the
argument structure, the constant arguments, the result structure.  Only
tuples, lists, dicts and None can be saved as structure, and only None,
bool, int, float and str as constants: anything else would have to be
imported or unpickled by name when loading, and loading never runs code from
a file.  A loaded GraphModule is the program as traced: the values it read
from its environment (captured tensors, Python scalars) are the saved ones
and nothing is re-read or guarded in the loading process.

Pickling goes through the same bytes: hop.Tensor (a program returning it),
GraphModule, and CompiledFunction (hop.compile): a compiled function whose
function can be imported by reference (module + qualified name, as pickle
finds functions) is pickled as that reference and its options, so the
receiving process compiles it against its own environment; otherwise (a
closure, a lambda) its compiled programs are kept and the unpickled object
runs them only (a call none of them fits raises hop.GuardError; it cannot
retrace without the function).  An empty cache and no importable function
cannot be pickled (pickle.PicklingError says why).
"""

import copyreg
import importlib
import json
import os
import pickle

from . import _C
from ._pytree import LEAF, NONE, Spec
from ._reads import loaded_hop_numpy

__all__ = ["save", "load"]

_KIND = "hop.kind"
_PYTHON = "hop.python"


class _NoGuards:
    """The environment guards of a loaded program: none (its captured
    tensors are the saved constants)."""

    guards = ()
    skipped = ()
    unsourced = ()
    check = None

    def state(self, captures):
        return ((), tuple(captures))

    def revalidate(self, state, leaves):
        return state

    def describe(self, capture_names):
        return []


# ------------------------------------------------------------ structure


def _spec_to_json(spec, what):
    if spec.kind == "leaf":
        return "*"
    if spec.kind == "none":
        return None
    if spec.kind in ("tuple", "list"):
        return {spec.kind[0]: [_spec_to_json(c, what) for c in spec.children]}
    if spec.kind == "dict":
        for k in spec.keys:
            if not isinstance(k, (str, int, float, bool)) and k is not None:
                raise TypeError(f"hop.save: {what} is a dict with the key {k!r} "
                                f"({type(k).__name__}); saved keys are str, int, float, bool "
                                f"or None")
        return {"d": [[k, _spec_to_json(c, what)] for k, c in zip(spec.keys, spec.children)]}
    hnp = loaded_hop_numpy()
    if spec.kind == "custom" and hnp is not None and spec.cls is hnp._NumpyOut:
        # an ndarray result of NumPy code (a NumPy scalar when keys is true)
        return {"n": [bool(spec.keys), _spec_to_json(spec.children[0], what)]}
    if spec.kind == "custom" and hnp is not None and spec.cls is hnp.ndarray:
        # a hop.numpy array result (0-d and a NumPy scalar's kind when keys)
        return {"a": [bool(spec.keys), _spec_to_json(spec.children[0], what)]}
    raise TypeError(f"hop.save: {what} contains a {spec.kind} ({spec.cls.__qualname__}); only "
                    f"tuples, lists, dicts and None can be saved (loading would have to import "
                    f"the class by name)")


def _spec_from_json(j, depth=0):
    if depth > 100:
        raise _C.Error("hop.load: the saved structure is nested deeper than 100")
    if j == "*":
        return LEAF
    if j is None:
        return NONE
    if isinstance(j, dict) and len(j) == 1:
        (k, v), = j.items()
        if k in ("t", "l") and isinstance(v, list):
            return Spec("tuple" if k == "t" else "list",
                        children=[_spec_from_json(c, depth + 1) for c in v])
        if k == "d" and isinstance(v, list) and all(
                isinstance(p, list) and len(p) == 2 and
                (p[0] is None or isinstance(p[0], (str, int, float, bool))) for p in v):
            return Spec("dict", keys=tuple(p[0] for p in v),
                        children=[_spec_from_json(p[1], depth + 1) for p in v])
        # An array node holds its tensor, a leaf (what _spec_to_json writes).
        if k in ("n", "a") and isinstance(v, list) and len(v) == 2 and isinstance(v[0], bool) \
                and v[1] == "*":
            from .numpy import _NumpyOut, ndarray
            return Spec("custom", keys=v[0], children=[_spec_from_json(v[1], depth + 1)],
                        cls=_NumpyOut if k == "n" else ndarray)
    raise _C.Error(f"hop.load: a saved structure is malformed ({str(j)[:60]})")


def _constant(v, what):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(f"hop.save: {what} {v!r} ({type(v).__name__}) is not None, a bool, an int, "
                    f"a float or a str; it cannot be saved")


def _runner_bytes(tr, runner, kind):
    from ._trace import _Alias
    # one object at two places of the traced call (hop.compile's f(a, a)):
    # one input, the later leaf [j, i] the same object as leaf i
    alias = {j: s.i for j, s in enumerate(runner.statics) if type(s) is _Alias}
    info = {
        "spec": _spec_to_json(runner.spec, "the argument structure"),
        "statics": [None if j in alias else _constant(s, "the constant argument")
                    for j, s in enumerate(runner.statics)],
        "tensor_args": [s is None for s in runner.statics],
        "out_spec": _spec_to_json(runner.out_spec, "the result structure"),
        "template": [_constant(t, "the constant result") for t in runner.template],
        "traced_out": [t is None for t in runner.template],
        "all_numpy": bool(runner.all_numpy),
        "as_array": [bool(a) for a in runner.as_array],
        "sym_out": [s if s == "float" else bool(s) for s in runner.sym_out],
        "kwargs": bool(runner.kw),
    }
    if alias:
        info["aliases"] = [[j, i] for j, i in sorted(alias.items())]
    sections = {_KIND: kind.encode(), _PYTHON: json.dumps(info).encode()}
    return _C._save(tr, list(runner._state[1]), sections)


def _tensor_bytes(t):
    if _C._is_proxy(t):
        raise _C.TraceError("hop.save: a traced value (a proxy) cannot be saved; save the "
                            "GraphModule, or a concrete tensor")
    from ._trace import _trace
    gm, runner = _trace(lambda: t, (), False)
    return _runner_bytes(gm._trace, runner, "tensor")


def dumps(obj):
    """The saved bytes of a hop.Tensor or a GraphModule (see save)."""
    from ._trace import GraphModule
    if isinstance(obj, _C.Tensor):
        return _tensor_bytes(obj)
    if isinstance(obj, GraphModule):
        if obj._call is None:
            raise TypeError(f"hop.save: the subgraph {obj.name} is not a program on its own; "
                            f"save the root GraphModule")
        return _runner_bytes(obj._trace, obj._call, "graphmodule")
    raise TypeError(f"hop.save: expected a hop.Tensor or a GraphModule, got "
                    f"{type(obj).__name__} (pickle a hop.compile function instead)")


def _bools(v, what):
    if not isinstance(v, list) or not all(isinstance(b, bool) for b in v):
        raise ValueError(f"{what} is not a list of bools")
    return v


def _constants(v, what):
    if not isinstance(v, list) or not all(c is None or isinstance(c, (bool, int, float, str))
                                          for c in v):
        raise ValueError(f"{what} is not a list of constants")
    return v


def _aliases_from_json(pairs, statics, tensor_args):
    """The aliases of hop.python ([[j, i], ...]: argument leaf j is the same
    object as the earlier leaf i, a tensor input) into statics, as the
    _trace._Alias the runner checks; ValueError for anything else."""
    from ._trace import _Alias
    if not isinstance(pairs, list):
        raise ValueError("aliases is not a list")
    for p in pairs:
        if not (isinstance(p, list) and len(p) == 2 and
                all(type(k) is int and 0 <= k < len(statics) for k in p)):
            raise ValueError("an alias is not a pair of argument leaf indices")
        j, i = p
        if not (i < j and tensor_args[i] and statics[i] is None and not tensor_args[j] and
                statics[j] is None):
            raise ValueError(f"argument leaf {j} cannot be an alias of leaf {i} (an alias is "
                             f"a later leaf of no value of its own, the same object as an "
                             f"earlier tensor leaf)")
        statics[j] = _Alias(i)


def _python_section(sections):
    """The hop.python section, checked field by field: anything a file can
    say that this reader does not is a hop.Error, whatever its JSON holds
    (any type, any depth)."""
    try:
        info = json.loads(sections[_PYTHON])
        if not isinstance(info, dict):
            raise ValueError("it is not a JSON object")
        spec = _spec_from_json(info["spec"])
        if spec.kind != "tuple":
            raise ValueError("the argument structure is not a tuple")
        out_spec = _spec_from_json(info["out_spec"])
        tensor_args = _bools(info["tensor_args"], "tensor_args")
        statics = _constants(info["statics"], "statics")
        traced_out = _bools(info["traced_out"], "traced_out")
        template = _constants(info["template"], "template")
        if not (len(tensor_args) == len(statics) == spec.num_leaves() and
                len(traced_out) == len(template) == out_spec.num_leaves()):
            raise ValueError("the structures and their leaves disagree")
        statics = [None if t else s for t, s in zip(tensor_args, statics)]
        _aliases_from_json(info.get("aliases", []), statics, tensor_args)
        template = [None if t else v for t, v in zip(traced_out, template)]
        sym_out = info["sym_out"]
        if not isinstance(sym_out, list) or not all(s == "float" or isinstance(s, bool)
                                                     for s in sym_out):
            raise ValueError("sym_out is not a list of bools and \"float\"")
        if not isinstance(info["all_numpy"], bool):
            raise ValueError("all_numpy is not a bool")
        kw = info.get("kwargs", False)
        if not isinstance(kw, bool):
            raise ValueError("kwargs is not a bool")
        if kw and not (len(spec.children) == 2 and spec.children[0].kind == "tuple" and
                       spec.children[1].kind == "dict"):
            raise ValueError("a call with keyword arguments is not (args, {keyword: value})")
        as_array = _bools(info.get("as_array", [False] * len(statics)), "as_array")
        if len(as_array) != len(statics):
            raise ValueError("as_array has the wrong length")
        from ._trace import _array_leaves
        k = 0
        for array, traced in zip(_array_leaves(out_spec), traced_out):
            if array and (not traced or k >= len(sym_out) or sym_out[k] is not False):
                raise ValueError("an array result is not a traced tensor")
            k += traced
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
        raise _C.Error(f"hop.load: the section {_PYTHON} is malformed "
                       f"({str(e)[:200]})") from None
    return spec, out_spec, statics, template, traced_out, sym_out, info["all_numpy"], as_array, \
        kw


def _check_sym_out(tr, sym_out):
    """hop.Error unless each result sym_out calls an int is a SymInt (a
    symbol, or the 0-d int64 tensor of an expression: _trace._out_value)
    and each it calls a float a 0-d float64 tensor (a SymFloat's): the
    runner returns such a result's item(), which would turn a tensor of one
    element of another kind into a number the program never computed."""
    nodes = tr.describe(())["nodes"]
    metas = {n[1]: n[4] for n in nodes}
    for k, (arg, sym) in enumerate(zip(nodes[-1][3], sym_out)):
        meta = metas.get(arg[1]) if isinstance(arg, tuple) and arg[0] == "%node" else None
        if sym is True:
            ok = meta is not None and (meta[0] == "sym" or meta[1:] == (_C.int64, ()))
        elif sym == "float":
            ok = meta is not None and meta[0] == "tensor" and meta[1:] == (_C.float64, ())
        else:
            ok = meta is not None and meta[0] == "tensor"
        if not ok:
            what = {True: "an int (a SymInt)", "float": "a float (a SymFloat)"}.get(sym,
                                                                                   "a tensor")
            raise _C.Error(f"hop.load: the section hop.python says result {k} is {what}, but "
                           f"the program's output {k} is {_describe_meta(meta)}")


def _describe_meta(meta):
    if meta is None:
        return "not a value"
    if meta[0] == "sym":
        return f"the SymInt {meta[1]}"
    return f"a tensor of {meta[1]} and sizes [{', '.join(map(str, meta[2]))}]"


def _check_kernels(tr, path=()):
    """hop.Error when a graph of tr calls a registered foreign kernel with a
    pointer parameter whose signature gives it no size: the ints the call
    passes (`n` of `void f(int64_t n, const float *x)`) would come from the
    file unchecked, and a hostile file would make the kernel read or write
    past its buffers.  A kernel whose pointers all have sizes is checked on
    every call (hop_foreign_call_into), whatever the file says."""
    d = tr.describe(path)
    for node in d["nodes"]:
        if node[0] != "call_foreign":
            continue
        unsized = _C._foreign_unsized(node[1])
        if unsized:
            raise _C.Error(
                f"hop.load: the program calls the foreign kernel {_C._foreign_signature(node[1])}"
                f", whose pointer parameter{'s' if len(unsized) > 1 else ''} "
                f"{', '.join(unsized)} {'have' if len(unsized) > 1 else 'has'} no size, so the "
                f"ints the file passes it would be used unchecked; declare the sizes in its "
                f"signature (const float x[n]), or load a file you trust with "
                f"hop.load(path, trust_kernels=True)")
    for sub in d["subgraphs"]:
        _check_kernels(tr, path + (sub,))


def loads(data, *, trust_kernels=False):
    """The object saved in data (see load)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"hop.load: expected bytes, got {type(data).__name__}")
    tr, captures, sections = _C._load(data)
    if not trust_kernels:
        _check_kernels(tr)
    kind = sections.get(_KIND, b"").decode("utf-8", "replace")
    spec, out_spec, statics, template, traced_out, sym_out, all_numpy, as_array, kw = \
        _python_section(sections)
    from ._trace import GraphModule, _Runner
    # A runner passes the arguments' tensors, then the captured ones, to the
    # plan's inputs (the root's tensor placeholders in order): an argument
    # after a capture would take the capture's place.
    kinds = [k for _, k, _ in tr.inputs() if k != "size"]
    if "capture" in kinds and "arg" in kinds[kinds.index("capture"):]:
        name = [n for n, k, _ in tr.inputs() if k == "arg"][-1]
        raise _C.Error(f"hop.load: root input {name} is an argument after a captured input "
                       f"(a saved program's arguments come first)")
    plan = tr.lower()
    if len(sym_out) != plan.noutputs or sum(traced_out) != plan.noutputs or \
            len(captures) != len(tr.captures):
        raise _C.Error("hop.load: the section hop.python does not match the program's outputs")
    _check_sym_out(tr, sym_out)
    if sum(s is None for s in statics) + len(captures) != len(plan.input_names):
        raise _C.Error("hop.load: the section hop.python does not match the program's inputs")
    runner = _Runner(tr, plan, spec, statics, out_spec, template, all_numpy, sym_out,
                     _NoGuards(), as_array, kw=kw)
    if kind == "tensor":
        if spec.num_leaves() != 0 or len(captures) != 1:
            raise _C.Error("hop.load: a saved tensor holds one captured value and no argument")
        # (what _tensor_bytes writes: the program returns its captured value;
        # one that computes something else is no saved tensor)
        nodes = tr.describe(())["nodes"]
        if [n[0] for n in nodes] != ["placeholder", "output"] or \
                nodes[1][3] != [("%node", nodes[0][1])] or tr.describe(())["subgraphs"]:
            raise _C.Error("hop.load: a saved tensor's program must return its captured value; "
                           "this one computes something else (save it as a GraphModule)")
        return captures[0]
    if kind != "graphmodule":
        raise _C.Error(f"hop.load: unknown kind {kind!r} (this hop reads tensor and "
                       f"graphmodule)")
    gm = GraphModule(tr, (), runner)
    gm.plan = plan
    return gm


def save(obj, path):
    """save(obj, path) -> None

    Writes a hop.Tensor or a root GraphModule to path in the saved format
    (docs/SAVED_FORMAT.md): the whole program with its nested subgraphs,
    capture tables, symbols, guards and captured constants.  Raises TypeError
    for anything else (a subgraph, a proxy, a namedtuple argument structure).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "f.hop")
    >>> gm = hop.trace(lambda x: hop.map(lambda r: r.sin(), x), hop.ones(3, 2), dynamic=True)
    >>> hop.save(gm, path)
    >>> same = hop.load(path)
    >>> same.code == gm.code, same(hop.zeros(5, 2)).shape
    (True, (5, 2))
    """
    data = dumps(obj)
    with open(os.fspath(path), "wb") as f:
        f.write(data)


def load(path, *, trust_kernels=False):
    """load(path, *, trust_kernels=False) -> hop.Tensor | GraphModule

    Reads what hop.save wrote.  A truncated, corrupted or hostile file is a
    hop.Error naming what is wrong (a checksum protects every byte); loading
    never unpickles or runs anything from the file.  A program that calls a
    HOP this process has not registered (hop.load_library) is a hop.Error
    naming it.  So is one that calls a foreign kernel (hop.foreign) with a
    pointer parameter its signature gives no size, whose int arguments the
    file would decide unchecked, unless trust_kernels=True says the file is
    trusted.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.hop")
    >>> hop.save(hop.tensor([1.5, 2.5]), path)
    >>> hop.load(path)
    hop.tensor([1.5, 2.5])
    >>> open(path, "r+b").write(b"junk")
    4
    >>> hop.load(path)
    Traceback (most recent call last):
        ...
    hop.Error: load: not a saved hop program (no "hopsaved" magic number)
    """
    with open(os.fspath(path), "rb") as f:
        return loads(f.read(), trust_kernels=trust_kernels)


def _loads_pickled(data):
    """loads for pickle: unpickling runs code of its own (the pickle is as
    trusted as a module), so its programs' kernels are too."""
    return loads(data, trust_kernels=True)


# ------------------------------------------------------------ pickling


def _reduce_tensor(t):
    return (loads, (dumps(t),))


def _reduce_graphmodule(gm):
    return (_loads_pickled, (dumps(gm),))


def _importable(fn):
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if module is None or "<" in qualname:
        return False
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except Exception:
        return False
    return obj is fn


def _reduce_compiled(cf):
    if _importable(cf.fn):
        return (_C_compiled_by_reference, (cf.fn, cf.dynamic, cf.recompile_limit))
    programs = [dumps(gm) for gm in cf.graphs]
    if not programs:
        raise pickle.PicklingError(
            f"hop.compile({cf.__name__}) cannot be pickled: its function is not importable by "
            f"reference (a closure or a lambda) and it has compiled nothing yet; call it once "
            f"(its compiled programs are then pickled) or define the function at module level")
    return (_compiled_from_programs, (programs, cf.__name__))


def _C_compiled_by_reference(fn, dynamic, recompile_limit):
    from ._compile import CompiledFunction
    return CompiledFunction(fn, dynamic, recompile_limit)


class FrozenCompiled:
    """A hop.compile function unpickled from its compiled programs (its own
    function was a closure or a lambda): it runs the newest program whose
    guards fit a call and raises hop.GuardError when none does."""

    def __init__(self, graphs, name):
        self.graphs = graphs
        self.__name__ = name

    def __call__(self, *args):
        failures = []
        for gm in reversed(self.graphs):
            try:
                return gm._call.call(args, _C.GuardError)
            except _C.GuardError as e:
                failures.append(str(e))
        raise _C.GuardError(f"hop.compile({self.__name__}) was unpickled from its compiled "
                            f"programs (its function was not importable) and none fits this "
                            f"call: " + "; ".join(failures))

    def __reduce__(self):
        return (_compiled_from_programs, ([dumps(gm) for gm in self.graphs], self.__name__))


def _compiled_from_programs(programs, name):
    return FrozenCompiled([_loads_pickled(p) for p in programs], name)


def _install():
    from ._compile import CompiledFunction
    from ._trace import GraphModule
    copyreg.pickle(_C.Tensor, _reduce_tensor)
    GraphModule.__reduce__ = _reduce_graphmodule
    CompiledFunction.__reduce__ = _reduce_compiled
