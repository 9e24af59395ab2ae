"""Flattening of nested Python structures (pytrees) into leaves.

A body may take and return tensors inside tuples, lists, dicts, namedtuples,
dataclasses and types registered with hop.register_pytree_node; HOPs and
traced functions hand C a flat list of leaves and rebuild the structure (with
the same types) after.  Everything else is a leaf.

Which node kind a type is gets decided once per type and cached, so a leaf
(the common case: a tensor) costs one dict lookup.
"""

import dataclasses
import functools
import inspect
import threading
import types

__all__ = ["flatten", "unflatten", "Spec", "register_pytree_node"]


class Spec:
    """The shape of a structure: its kind, keys and children; LEAF for a leaf.

    kind is "leaf", "none", "tuple", "list", "dict", "namedtuple",
    "dataclass" or "custom"; cls is the type of a namedtuple, dataclass or
    registered node; keys are a dict's keys, a namedtuple's or dataclass's
    field names, or a registered node's context.
    """

    __slots__ = ("kind", "keys", "children", "cls", "_hash")

    def __init__(self, kind, keys=None, children=(), cls=None):
        self.kind = kind
        self.keys = keys
        self.children = tuple(children)
        self.cls = cls
        self._hash = None

    def __eq__(self, other):
        return (isinstance(other, Spec) and self.kind == other.kind and self.cls is other.cls
                and self.keys == other.keys and self.children == other.children)

    def __hash__(self):
        # Kept after the first: a spec is never changed, and invoke_subgraph
        # hashes its call's spec (five levels deep) in every call's key.  (Not
        # made in __init__: keys a registered node gives may be unhashable,
        # which only hashing the spec may refuse.)
        h = self._hash
        if h is None:
            h = self._hash = hash((self.kind, self.cls, self.keys, self.children))
        return h

    def num_leaves(self):
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves() for c in self.children)

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        if self.kind == "tuple":
            inner = ", ".join(map(repr, self.children))
            return "(" + inner + ("," if len(self.children) == 1 else "") + ")"
        if self.kind == "list":
            return "[" + ", ".join(map(repr, self.children)) + "]"
        if self.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.keys, self.children)) + "}"
        name = self.cls.__qualname__
        if self.kind == "custom" and getattr(self.cls, "_pytree_repr_as_leaf", False):
            return repr(self.children[0])  # an array over a tensor reads as that tensor
        if self.kind == "custom":
            return f"{name}[{self.keys!r}](" + ", ".join(map(repr, self.children)) + ")"
        return f"{name}(" + ", ".join(f"{k}={c!r}" for k, c in zip(self.keys, self.children)) + ")"


LEAF = Spec("leaf")
NONE = Spec("none")


# ------------------------------------------------------------ node types

class _Node:
    """How one registered type flattens: flatten(obj) -> (children, context)
    and unflatten(children, context) -> obj."""

    __slots__ = ("flatten", "unflatten")

    def __init__(self, flatten_fn, unflatten_fn):
        self.flatten = flatten_fn
        self.unflatten = unflatten_fn


_REGISTERED = {}  # type -> _Node (hop.register_pytree_node)

# type -> its kind: "leaf", "namedtuple", "dataclass" or a _Node.  The
# builtin containers are tested before this cache; everything else is
# classified on first sight (a class cannot become a namedtuple or a
# dataclass later; registering a type drops the cache).
_KIND = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn):
    """Makes instances of cls structure instead of leaves.

    flatten_fn(obj) returns (children, context): children an iterable of the
    values to flatten further (tensors become traced inputs), context any
    value that describes the rest of obj (compared with == to decide whether
    two structures match, hashed for invoke_subgraph's cache: make it a
    tuple, a string or None).  unflatten_fn(children, context) rebuilds an
    instance from a list of children.  The argument order is
    torch.utils._pytree's; jax.tree_util's unflatten takes (context,
    children).

    Raises TypeError if cls is not a class or a function is not callable,
    ValueError if cls is already a pytree node type (the builtin containers,
    namedtuples and dataclasses included).

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> hop.register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
    ...                          lambda children, context: Pair(*children))
    >>> gm = hop.trace(lambda p: Pair(p.b, p.a * 2), Pair(hop.ones(2), hop.zeros(2)))
    >>> [n.name for n in gm.graph.placeholders]
    ['p_0', 'p_1']
    >>> gm(Pair(hop.ones(2), hop.zeros(2))).b
    hop.tensor([2., 2.])
    """
    if not isinstance(cls, type):
        raise TypeError(f"hop.register_pytree_node: cls must be a class, got "
                        f"{type(cls).__name__}")
    for what, fn in (("flatten_fn", flatten_fn), ("unflatten_fn", unflatten_fn)):
        if not callable(fn):
            raise TypeError(f"hop.register_pytree_node: {what} must be callable, got "
                            f"{type(fn).__name__}")
    if cls in _REGISTERED:
        raise ValueError(f"hop.register_pytree_node: {cls.__qualname__} is already registered")
    if cls in (tuple, list, dict, type(None)) or _classify(cls) != "leaf":
        raise ValueError(f"hop.register_pytree_node: {cls.__qualname__} is already a pytree "
                         f"node type (tuple, list, dict, None, namedtuple or dataclass)")
    _REGISTERED[cls] = _Node(flatten_fn, unflatten_fn)
    _KIND.clear()


def _unregister_pytree_node(cls):
    """For tests: forgets a registration."""
    del _REGISTERED[cls]
    _KIND.clear()


def _classify(t):
    node = _REGISTERED.get(t)
    if node is not None:
        return node
    if issubclass(t, tuple) and isinstance(getattr(t, "_fields", None), tuple):
        return "namedtuple"
    if isinstance(getattr(t, "__dataclass_fields__", None), dict):
        return "dataclass"
    return "leaf"


def is_array_node(t):
    """Whether t is one of hop.numpy's array types (registered nodes whose
    one leaf is their tensor: not a structure a function changes)."""
    mod = getattr(t, "__module__", "") or ""
    return t in _REGISTERED and mod.startswith("hop.numpy")


def _kind(t):
    k = _KIND.get(t)
    if k is None:
        k = _KIND[t] = _classify(t)
    return k


_FIELDS = {}  # dataclass type -> (all field names, those __init__ takes, the others)


def _dataclass_fields(t):
    names = _FIELDS.get(t)
    if names is None:
        fields = dataclasses.fields(t)
        names = _FIELDS[t] = (tuple(f.name for f in fields),
                              tuple(f.name for f in fields if f.init),
                              tuple(f.name for f in fields if not f.init))
    return names


# --------------------------------------------------------- flat <-> tree

def flatten(obj):
    """Returns (leaves, spec) for obj; None is structure, not a leaf."""
    leaves = []
    spec = _walk(obj, leaves)
    return leaves, spec


# A tuple of n leaves (a HOP's operands, a body's arguments) is the common
# structure: its spec is made once per n and shared (specs are never
# changed), so flattening one allocates nothing and rebuilding one is a
# tuple() (issue #30: a HOP call flattened and rebuilt its groups through the
# general walk, ~2 us each).
_FLAT = []
# Held while _FLAT grows: two threads growing it at once each made the spec
# for the same length, and the second append put a spec of k leaves at
# index k + 1, so a call of k + 1 arguments was rebuilt with k (a trace
# called its function with too few arguments; CI met it).  Readers need no
# lock: an entry is complete before it is appended.
_FLAT_LOCK = threading.Lock()


def flat_spec(n):
    """The spec of a tuple of n leaves (one shared object per n)."""
    if n >= len(_FLAT):
        with _FLAT_LOCK:
            while len(_FLAT) <= n:
                _FLAT.append(Spec("tuple", None, [LEAF] * len(_FLAT)))
    return _FLAT[n]


# Module-level recursion: a nested recursive function refers to itself
# through its closure, a reference cycle that would keep the leaves (the
# arguments, a plan's results) alive until the cyclic GC runs, so a plan
# could not reuse its output buffer.
def _walk(o, leaves):
    if o is None:
        return NONE
    t = type(o)
    if t is tuple:
        children = [_walk(x, leaves) for x in o]
        for c in children:
            if c is not LEAF:
                return Spec("tuple", None, children)
        return _FLAT[len(children)] if len(children) < len(_FLAT) else flat_spec(len(children))
    if t is list:
        return Spec("list", None, [_walk(x, leaves) for x in o])
    if t is dict:
        keys = tuple(o.keys())
        return Spec("dict", keys, [_walk(o[k], leaves) for k in keys])
    k = _KIND.get(t) or _kind(t)
    if k == "leaf":
        leaves.append(o)
        return LEAF
    if k == "namedtuple":
        return Spec("namedtuple", t._fields, [_walk(x, leaves) for x in o], t)
    if k == "dataclass":
        names = _dataclass_fields(t)[0]
        return Spec("dataclass", names, [_walk(getattr(o, n), leaves) for n in names], t)
    children, context = k.flatten(o)
    return Spec("custom", context, [_walk(x, leaves) for x in children], t)


def unflatten(leaves, spec):
    """Rebuilds the structure of spec from leaves (an iterable)."""
    n = len(spec.children)
    if n < len(_FLAT) and spec is _FLAT[n] and type(leaves) in (list, tuple) and \
            len(leaves) >= n:
        return tuple(leaves) if len(leaves) == n else tuple(leaves[:n])
    return _build(spec, iter(leaves))


# What builder() writes out: nodes built by a display of their own (dict
# keys among the builder's constants).  Not namedtuples, dataclasses and
# registered nodes: their constructors run user code, which the general
# walk calls as it always has.
_DISPLAYS = frozenset(("leaf", "none", "tuple", "list", "dict"))
_BUILDER_MAX = 256  # leaves and containers: larger structures take the walk


def builder(spec):
    """A function of a leaf sequence (a list or tuple with at least
    spec.num_leaves() items) that returns unflatten(leaves, spec): for a
    spec of tuples, lists, dicts, None and leaves alone, one generated
    expression (`lambda L: ((), (L[0], L[1]), [L[2]])`), which builds the
    structure in one Python call where _build makes one per node; else
    unflatten itself.  Made once for a spec that is unflattened on every
    call (a plan's results: a graph break hands its stack and locals as
    nested tuples, ~1 us a call through _build)."""
    parts, consts = [], []
    if not _write(spec, parts, consts, [0, 0]):
        return functools.partial(_unflatten_any, spec)
    src = "lambda L: " + "".join(parts)
    # (our own text; K, the keys, its one global)
    return eval(compile(src, "<hop unflatten>", "eval"), {"K": tuple(consts)})  # noqa: S307


def _write(s, parts, consts, count):
    """Appends the expression building spec s to parts (leaves as L[i],
    dict keys as K[j]; count: the nodes and the leaves so far); False for a
    spec builder() leaves to the walk."""
    count[0] += 1
    if s.kind not in _DISPLAYS or count[0] > _BUILDER_MAX:
        return False
    if s.kind == "leaf":
        parts.append(f"L[{count[1]}]")
        count[1] += 1
        return True
    if s.kind == "none":
        parts.append("None")
        return True
    opening, closing = {"tuple": ("(", ")"), "list": ("[", "]"), "dict": ("{", "}")}[s.kind]
    parts.append(opening)
    for i, c in enumerate(s.children):
        if s.kind == "dict":
            parts.append(f"K[{len(consts)}]: ")
            consts.append(s.keys[i])
        if not _write(c, parts, consts, count):
            return False
        parts.append(", ")
    parts.append(closing)
    return True


def _unflatten_any(spec, leaves):
    return unflatten(leaves, spec)


def _build(s, it):
    if s.kind == "leaf":
        return next(it)
    if s.kind == "none":
        return None
    items = [_build(c, it) for c in s.children]
    if s.kind == "tuple":  # the common result, without a call
        return tuple(items)
    return _assemble(s, items)


def _assemble(s, items):
    if s.kind == "tuple":
        return tuple(items)
    if s.kind == "list":
        return items
    if s.kind == "dict":
        return dict(zip(s.keys, items))
    if s.kind == "namedtuple":
        return s.cls(*items)
    if s.kind == "dataclass":
        return _make_dataclass(s.cls, dict(zip(s.keys, items)))
    return _REGISTERED[s.cls].unflatten(items, s.keys)


def unflatten_with(leaves, spec, replace, again=None):
    """unflatten, except that the node at each path in replace (a tuple of
    child indices from the root) is replace[path]() and takes no leaves, and
    the node at each path in again ({path: an earlier path}, from repeats())
    is the object built at that earlier path, and takes no leaves."""
    built = None
    if again:
        built = dict.fromkeys(again.values())
        made = replace
        replace = dict(replace)
        for p, first in again.items():
            replace[p] = functools.partial(built.__getitem__, first)
        for first in built:
            if first in made:  # built by its own replace: that object, kept
                replace[first] = functools.partial(_keep, built, first, made[first])
    return _build_with(spec, iter(leaves), (), replace, built)


def _keep(built, path, make):
    built[path] = obj = make()
    return obj


def _build_with(s, it, path, replace, built=None):
    make = replace.get(path)
    if make is not None:
        for _ in range(s.num_leaves()):
            next(it)
        return make()
    if s.kind in ("leaf", "none"):
        obj = _build(s, it)
    else:
        items = [_build_with(c, it, path + (i,), replace, built)
                 for i, c in enumerate(s.children)]
        obj = _assemble(s, items)
    if built is not None and path in built:
        built[path] = obj
    return obj


def repeats(obj, atom):
    """{path: the first path} for every node of obj's structure (containers
    and leaves, paths as in nodes()) that is an object met earlier in the
    walk, but not atom(node) ones and none inside a repeated node: eager's
    `return y, y` is one object twice, which unflatten_with(again=) keeps.
    Tuples are walked into but never repeats: immutable, and the structure
    hop builds around the values (an effect's empty keyword tuple) shares
    them."""
    first, out = {}, {}
    todo = [(obj, ())]  # (node, path), depth first: the next on top
    while todo:
        o, path = todo.pop()
        if o is None or atom(o):
            continue
        if not isinstance(o, tuple):
            seen = first.setdefault(id(o), path)
            if seen is not path:
                out[path] = seen
                continue
        todo.extend(reversed([(c, path + (i,)) for i, c in enumerate(_children(o))]))
    return out


def _children(obj):
    """obj's children as flatten() walks them (none for a leaf)."""
    t = type(obj)
    if t in (tuple, list):
        return obj
    if t is dict:
        return [obj[k] for k in obj.keys()]
    k = _KIND.get(t) or _kind(t)
    if k == "leaf":
        return ()
    if k == "namedtuple":
        return obj
    if k == "dataclass":
        return [getattr(obj, n) for n in _dataclass_fields(t)[0]]
    return k.flatten(obj)[0]


def subtree(obj, spec, path):
    """The node of obj (a structure of spec) at path (child indices)."""
    for i in path:
        if spec.kind in ("tuple", "list", "namedtuple"):
            obj = obj[i]
        elif spec.kind == "dict":
            obj = obj[spec.keys[i]]
        elif spec.kind == "dataclass":
            obj = getattr(obj, spec.keys[i])
        else:
            obj = _REGISTERED[spec.cls].flatten(obj)[0][i]
        spec = spec.children[i]
    return obj


def nodes(obj, path=(), out=None, spec=None):
    """{id(node): (path, node)} for every node of obj's structure (containers
    and leaves), outermost first (a node seen twice keeps its first path).
    With spec, obj's structure is spec's (a leaf of spec is not walked
    into)."""
    out = {} if out is None else out
    if obj is None:
        return out
    out.setdefault(id(obj), (path, obj))
    if spec is not None:
        if spec.kind in ("leaf", "none"):
            return out
        for i, c in enumerate(spec.children):
            nodes(subtree(obj, spec, (i,)), path + (i,), out, c)
        return out
    for i, c in enumerate(_children(obj)):
        nodes(c, path + (i,), out)
    return out


def _make_dataclass(cls, values):
    """cls(**init fields), then the fields __init__ does not take are set
    as flattened (through object.__setattr__, which frozen classes allow)."""
    _, init, rest = _dataclass_fields(cls)
    obj = cls(**{n: values[n] for n in init})
    for n in rest:
        object.__setattr__(obj, n, values[n])
    return obj


# What inspect.signature reads of a function besides its code: a signature
# named for it (unwrap's and the given one), a partialmethod's, a text one.
_SIGNATURE_ATTRS = frozenset(("__wrapped__", "__signature__", "_partialmethod",
                              "__text_signature__"))


def _code_params(fn):
    """(the positional parameters' names, the *args parameter's name or
    None) of a plain Python function, read from its code as
    inspect.signature reads them (_signature_from_function); None for
    anything else, and for a function carrying one of _SIGNATURE_ATTRS
    (functools.wraps's __wrapped__, ...), which inspect.signature follows.
    inspect.signature was a tenth of a small hop.trace's fixed cost
    (issue #30)."""
    if type(fn) is not types.FunctionType:
        return None
    attrs = fn.__dict__
    if attrs and not attrs.keys().isdisjoint(_SIGNATURE_ATTRS):
        return None
    code = fn.__code__
    npos = code.co_argcount
    star = None
    if code.co_flags & inspect.CO_VARARGS:
        star = code.co_varnames[npos + code.co_kwonlyargcount]
    return code.co_varnames[:npos], star


def param_names(fn, n):
    """The names of fn's first n positional parameters (a *args one's
    numbered, arg<i> past them)."""
    params = _code_params(fn)
    if params is not None:
        names, star = list(params[0]), params[1]
        if star is not None:
            names.extend(f"{star}_{i}" for i in range(n - len(names)))
        names.extend(f"arg{i}" for i in range(len(names), n))
        return names[:n]
    return _signature_names(fn, n)


def _signature_names(fn, n):
    """param_names as inspect.signature gives them (any callable)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            names.extend(f"{p.name}_{i}" for i in range(n - len(names)))
    names.extend(f"arg{i}" for i in range(len(names), n))
    return names[:n]


def leaf_names(fn, args, kwargs=None):
    """A placeholder name per argument leaf: the parameter's name (the
    keyword for a keyword argument), with the field (namedtuple, dataclass)
    or position (tuple, list, dict) of a leaf inside a structure."""
    names = param_names(fn, len(args))
    if kwargs:
        names = names + sorted(kwargs)
        args = tuple(args) + tuple(kwargs[k] for k in sorted(kwargs))
    out = []
    for i, a in enumerate(args):
        sub, spec = flatten(a)
        if len(sub) == 1:
            out.append(names[i])
        elif spec.kind in ("namedtuple", "dataclass") and all(c == LEAF for c in spec.children):
            out.extend(f"{names[i]}_{k}" for k in spec.keys)
        else:
            out.extend(f"{names[i]}_{k}" for k in range(len(sub)))
    return out


def structure_changed(built, spec, leaves):
    """What the function changed of the arguments' structure it was given
    (built, rebuilt from spec: a list or dict grown, shrunk or given
    another item; leaves, when given, the objects built from, compared by
    identity), or None."""
    now, now_spec = flatten(built)
    if now_spec != spec:
        return "the structure of its arguments (a list or dict argument grown, shrunk or " \
               "rekeyed)"
    if leaves is not None and any(a is not b for a, b in zip(now, leaves)):
        return "an item of a list or dict argument"
    return None
