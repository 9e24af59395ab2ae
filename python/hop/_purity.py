"""Keeping HOP bodies pure while they are traced.

A body is traced once and its graph runs many times, so it must not change
Python state outside itself: rebinding a nonlocal or global, mutating an outer
list, dict, set or object attribute, or storing a traced value there (which
would let it escape its body).  `run_pure` snapshots what a body can reach,
runs it, and on any change restores the snapshot and raises hop.TraceError
naming the HOP, so the caller's state is as it was.
"""

import types

from . import _C

_MISSING = object()
_OPAQUE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type,
           types.MethodType, _C.Tensor)


def _global_names(code, out):
    out.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _global_names(const, out)
    return out


class _Snapshot:
    __slots__ = ("cells", "globals", "containers", "objects")

    def __init__(self, fn):
        self.cells = []
        self.containers = []
        self.objects = []
        self.globals = None
        seen = set()
        if getattr(fn, "__code__", None) is not None:
            self.globals = (fn.__globals__, {})
            self._scan(fn, seen)

    def _scan(self, fn, seen):
        """What fn reaches: its closure cells and the globals its code names;
        and, through them, the same for the helper functions of its own
        module it calls (a body that calls log(x) where log appends to a
        global list mutates that list just the same)."""
        code = fn.__code__
        closure = getattr(fn, "__closure__", None) or ()
        for name, cell in zip(code.co_freevars, closure):
            try:
                value = cell.cell_contents
            except ValueError:
                value = _MISSING
            self.cells.append((name, cell, value))
            self._reach(name, value, seen)
        g, saved = self.globals
        for n in _global_names(code, set()):
            if n in g and n not in saved:
                saved[n] = g[n]
                self._reach(n, g[n], seen)

    def _reach(self, name, value, seen):
        if value is _MISSING or id(value) in seen:
            return
        seen.add(id(value))
        if isinstance(value, types.FunctionType) and value.__globals__ is self.globals[0]:
            self._scan(value, seen)
        elif isinstance(value, list):
            self.containers.append((name, value, list(value)))
        elif isinstance(value, dict):
            self.containers.append((name, value, dict(value)))
        elif isinstance(value, (set, bytearray)):
            self.containers.append((name, value, value.copy()))
        elif not isinstance(value, _OPAQUE) and hasattr(value, "__dict__") and \
                isinstance(getattr(value, "__dict__", None), dict):
            self.objects.append((name, value, dict(value.__dict__)))

    def changes(self):
        """What changed, as text, or None."""
        for name, cell, value in self.cells:
            try:
                now = cell.cell_contents
            except ValueError:
                now = _MISSING
            if now is not value:
                return f"it rebinds the nonlocal variable {name!r}"
        if self.globals is not None:
            g, saved = self.globals
            for n, value in saved.items():
                if g.get(n, _MISSING) is not value:
                    return f"it rebinds the global variable {n!r}"
        for name, obj, saved in self.containers:
            if not _same(obj, saved):
                return f"it mutates {name!r} (a {type(obj).__name__} defined outside the body)"
        for name, obj, saved in self.objects:
            if not _same(obj.__dict__, saved):
                return f"it sets an attribute of {name!r} (an object defined outside the body)"
        return None

    def restore(self):
        for name, cell, value in self.cells:
            if value is _MISSING:
                try:
                    del cell.cell_contents
                except ValueError:
                    pass
            else:
                cell.cell_contents = value
        if self.globals is not None:
            g, saved = self.globals
            for n, value in saved.items():
                g[n] = value
        for name, obj, saved in self.containers:
            if isinstance(obj, list):
                obj[:] = saved
            elif isinstance(obj, dict):
                obj.clear()
                obj.update(saved)
            elif isinstance(obj, set):
                obj.clear()
                obj.update(saved)
            else:
                obj[:] = saved
        for name, obj, saved in self.objects:
            obj.__dict__.clear()
            obj.__dict__.update(saved)


def _same(obj, saved):
    if isinstance(obj, list):
        return len(obj) == len(saved) and all(a is b for a, b in zip(obj, saved))
    if isinstance(obj, dict):
        return obj.keys() == saved.keys() and all(obj[k] is saved[k] for k in obj)
    return obj == saved


def run_pure(hop_name, which, fn, args):
    """fn(*args), raising hop.TraceError (with outer state restored) if the
    body changes state outside itself."""
    snap = _Snapshot(fn)
    try:
        result = fn(*args)
    except BaseException:
        what = snap.changes()
        if what is not None:
            snap.restore()
        raise
    what = snap.changes()
    if what is not None:
        snap.restore()
        raise _C.TraceError(
            f"hop.{hop_name}: the {which} has a side effect: {what}; a body is traced once "
            f"and must not change state outside itself (return values instead)")
    return result
