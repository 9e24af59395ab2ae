"""Flattening of nested Python structures (tuples, lists, dicts) into leaves.

A body may return a tensor or a tuple/list/dict of tensors and ints; HOPs and
traced functions hand C a flat list of leaves and rebuild the structure after.
"""

__all__ = ["flatten", "unflatten", "Spec"]


class Spec:
    """The shape of a structure: its kind, keys and children; LEAF for a leaf."""

    __slots__ = ("kind", "keys", "children")

    def __init__(self, kind, keys=None, children=()):
        self.kind = kind
        self.keys = keys
        self.children = tuple(children)

    def __eq__(self, other):
        return (isinstance(other, Spec) and self.kind == other.kind
                and self.keys == other.keys and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, self.keys, self.children))

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
        return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.keys, self.children)) + "}"


LEAF = Spec("leaf")
NONE = Spec("none")


def flatten(obj):
    """Returns (leaves, spec) for obj; None is structure, not a leaf."""
    leaves = []
    spec = _walk(obj, leaves)
    return leaves, spec


# Module-level recursion: a nested recursive function refers to itself
# through its closure, a reference cycle that would keep the leaves (the
# arguments, a plan's results) alive until the cyclic GC runs, so a plan
# could not reuse its output buffer.
def _walk(o, leaves):
    if o is None:
        return NONE
    if type(o) is tuple:
        return Spec("tuple", None, [_walk(x, leaves) for x in o])
    if type(o) is list:
        return Spec("list", None, [_walk(x, leaves) for x in o])
    if type(o) is dict:
        keys = tuple(o.keys())
        return Spec("dict", keys, [_walk(o[k], leaves) for k in keys])
    leaves.append(o)
    return LEAF


def unflatten(leaves, spec):
    """Rebuilds the structure of spec from leaves (an iterable)."""
    return _build(spec, iter(leaves))


def _build(s, it):
    if s.kind == "leaf":
        return next(it)
    if s.kind == "none":
        return None
    items = [_build(c, it) for c in s.children]
    if s.kind == "tuple":
        return tuple(items)
    if s.kind == "list":
        return items
    return dict(zip(s.keys, items))
