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

    def walk(o):
        if o is None:
            return NONE
        if type(o) is tuple:
            return Spec("tuple", None, [walk(x) for x in o])
        if type(o) is list:
            return Spec("list", None, [walk(x) for x in o])
        if type(o) is dict:
            keys = tuple(o.keys())
            return Spec("dict", keys, [walk(o[k]) for k in keys])
        leaves.append(o)
        return LEAF

    spec = walk(obj)
    return leaves, spec


def unflatten(leaves, spec):
    """Rebuilds the structure of spec from leaves (an iterable)."""
    it = iter(leaves)

    def build(s):
        if s.kind == "leaf":
            return next(it)
        if s.kind == "none":
            return None
        items = [build(c) for c in s.children]
        if s.kind == "tuple":
            return tuple(items)
        if s.kind == "list":
            return items
        return dict(zip(s.keys, items))

    return build(spec)
