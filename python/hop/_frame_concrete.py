"""What hop's concrete interpreter (the Translator with concrete=True: a
graph break's instruction, a resume hop cannot compile, a region CPython
cannot run) runs beyond the translator's own instructions, and the check
that it can run the rest of a function at all.

The concrete interpreter runs the code after a graph break once the plan
ran and the effects before the break were replayed.  An instruction it
cannot run there can no longer send the call back to eager from the start:
the effects before the break would happen twice (a `print` before the
break printed twice, until the forty-seventh session for a class statement
and the forty-eighth for an import).  So the translation asks, before
anything of the call ran, whether every instruction reachable from the
break is one the concrete interpreter runs (`unrunnable`, over the code's
control flow and exception table); where one is not, the translation is
Unsupported and the call runs eagerly from its start, once.

import_name and import_from are CPython 3.11's IMPORT_NAME and IMPORT_FROM
(ceval.c's import_name and import_from) in Python: the import the user's
function makes after a break, with eager's errors."""

import dis
import sys
import types

from ._frame_base import _at_line, _instructions

__all__ = ["import_from", "import_name", "unrunnable"]


# Instructions after which control does not go on to the next one.
_ENDS = frozenset(("RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
                   "JUMP_BACKWARD_NO_INTERRUPT"))
_JUMPS = frozenset(dis.hasjrel + dis.hasjabs)
_SCANNED = {}  # (id(code), pc) -> (code, runs, the answer), bounded


def unrunnable(code, pc, runs):
    """The first instruction (index, opname) of code reachable from
    instruction pc -- by falling through, a jump or the exception table --
    whose opname is not in runs (the concrete interpreter's), or None."""
    key = (id(code), pc)
    hit = _SCANNED.get(key)
    if hit is not None and hit[0] is code and hit[1] is runs:
        return hit[2]
    ins, at, handlers, _, _, _ = _instructions(code)
    seen, todo, bad = set(), [pc], None
    while todo:
        n = todo.pop()
        if n in seen or n >= len(ins):
            continue
        seen.add(n)
        i = ins[n]
        if i.opname not in runs:
            bad = (n, i.opname) if bad is None or n < bad[0] else bad
            continue
        if i.opname not in _ENDS:
            todo.append(n + 1)
        if i.opcode in _JUMPS and i.argval in at:
            todo.append(at[i.argval])
        if n in handlers:
            todo.append(handlers[n][0])
    if len(_SCANNED) >= 4096:
        _SCANNED.clear()
    _SCANNED[key] = (code, runs, bad)
    return bad


def import_name(fr, name, fromlist, level):
    """IMPORT_NAME of frame fr: the `__import__` of its function's
    builtins, called as CPython calls it (the frame's globals, no locals),
    from fr's line (_at_line: a warning the import gives names it)."""
    imp = fr.func.__builtins__.get("__import__") if isinstance(fr.func, types.FunctionType) \
        else None
    if imp is None:
        raise ImportError("__import__ not found")
    return _at_line(fr, "call")(imp, (name, fr.func.__globals__, None, fromlist, level), {})


def import_from(v, name):
    """IMPORT_FROM: name of module v, else the submodule sys.modules holds
    (a circular import), else eager's ImportError."""
    try:
        return getattr(v, name)
    except AttributeError:
        pass
    try:
        pkgname = getattr(v, "__name__")
    except Exception:  # (CPython's error path: the name unknown)
        pkgname = None
    if type(pkgname) is not str:
        pkgname = None
    if pkgname is not None:
        x = sys.modules.get(f"{pkgname}.{name}")
        if x is not None:
            return x
    path = v.__dict__.get("__file__") if isinstance(v, types.ModuleType) else None
    if type(path) is not str:
        path = None
    shown = "<unknown module name>" if pkgname is None else pkgname
    if path is None:
        raise ImportError(f"cannot import name {name!r} from {shown!r} (unknown location)",
                          name=pkgname, path=None)
    try:
        spec = getattr(v, "__spec__")
    except Exception:
        spec = None
    initializing = False
    if spec is not None:
        try:
            initializing = bool(getattr(spec, "_initializing", False))
        except Exception:
            initializing = False
    if initializing:
        raise ImportError(f"cannot import name {name!r} from partially initialized module "
                          f"{shown!r} (most likely due to a circular import) ({path})",
                          name=pkgname, path=path)
    raise ImportError(f"cannot import name {name!r} from {shown!r} ({path})", name=pkgname,
                      path=path)
