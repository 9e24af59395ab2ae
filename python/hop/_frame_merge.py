"""A data-dependent `if` in a translated function traced as one cond
(hop/_frame.py): each side translated, on a copy of the frame, as a body of
hop.cond (the _Merging mixin of the Translator: _merge_if, _merge_sides);
_SideState keeps what a side could change, so a side that changes anything
is refused and everything put back (the `if` stays a graph break)."""

import types

from . import _C
from . import _breaks
from . import _exact
from . import _paths
from ._pytree import flatten, repeats, unflatten_with
from ._frame_base import (
    _BreakHere, _cell_value, _CONTROL_FLOW, _EMPTY, _Frame, _instructions, _NoMerge, _PAUSED,
    _traced, _TransGen, _UNBOUND, Unsupported)
from ._reads import loaded_hop_numpy


# At most this many sides of data-dependent ifs are traced per translation:
# a side that runs on to the return holds the ifs after it, each two more
# sides (a bound on chains of ifs that do not join)
_MAX_SIDES = 64


class _SideState:
    """What a side of a data-dependent `if` traced as a cond body could
    change (Translator._merge_if), kept at the `if`: the translator's
    tables, and the contents of the objects the function made (lists,
    dicts, sets, cells, objects' attributes, generators it translates),
    which the translator changes for real.  A side must change none of it
    (the other side, and the code after the cond, must see the state
    before the `if`: a cond body has no effects); `opaque` holds the ids of
    the objects whose state it cannot read (an iterator, a made object with
    __slots__), which a side must not hand to any code.  restore() puts it
    all back when the `if` stays a break."""

    def __init__(self, tr, fr):
        self.neffects = len(tr.effects)
        self.nmerged = len(tr.merged)
        self.overlays = (dict(tr.cells), dict(tr.globs), dict(tr.attrs))
        self.shadows = {i: (sh, _contents(sh)) for i, sh in tr.shadows.items()}
        self.real = dict(tr.real)
        self.written, self.loads = set(tr.written), dict(tr.loads)
        self.error, self.gen_break = tr.error, tr.gen_break
        trace = _C.tracing()
        self.scratch = None if trace is None else trace.scratch
        # the conversions raised so far (a side's is the `if`'s, or none)
        self.breaks = None if trace is None else list(trace.scratch.get(_breaks._KEY, ()))
        self.made = []
        opaque = set(tr._opaque or ())
        seen = set()
        # the objects a side may reach other than through the environment
        # (whose writes are effects): those the function made, the frame's
        # values, and what they hold (an RNG in a list it made), 3 deep
        todo = [(o, 0) for o in list(tr.made.values()) + list(fr.stack) +
                list(fr.fast.values()) + [_cell_value(c) for c in fr.cells.values()]]
        while todo:
            o, depth = todo.pop()
            if id(o) in seen or id(o) not in tr.made and tr._kind(o) == "pre":
                continue
            seen.add(id(o))
            c = _contents(o)
            if c is _OPAQUE:
                opaque.add(id(o))
                continue
            if c is not _FIXED:
                self.made.append((o, c))
            if depth < 3:
                todo.extend((x, depth + 1) for x in _held(o, c))
        self.opaque = opaque
        # the loops' own range iterators (on the stack only: `for i in
        # range(n)`; one the code names, `it = iter(range(n))`, could be
        # read after the call, where its place must be eager's)
        named = {id(v) for v in fr.fast.values()} | {id(_cell_value(c)) for c in fr.cells.values()}
        self.loop_iters = {id(v) for v in fr.stack
                           if type(v) in _RANGE_ITERS and id(v) not in named}

    def changed(self, tr, to_return=False):
        """What a side changed (explain()'s words), or None.  A side that
        runs on to the return (to_return) may advance a loop's own range
        iterator (loop_iters): nothing runs after it, and rewind() puts it
        back for the other side."""
        if len(tr.effects) != self.neffects:
            e = tr.effects[self.neffects]
            return f"has a Python effect ({e.what} at {e.site})"
        for o, c in self.made:
            if to_return and id(o) in self.loop_iters:
                continue
            if not _same_contents(o, c):
                return f"changes a {type(o).__name__} the function made before the `if` " \
                       f"(the other side and the code after it must not see that)"
        return None

    def rewind(self):
        """The loops' range iterators back where they were at the `if`."""
        for o, c in self.made:
            if id(o) in self.loop_iters:
                o.__setstate__(c[0])

    def restore(self, tr):
        del tr.effects[self.neffects:]
        del tr.merged[self.nmerged:]
        for mine, kept in zip((tr.cells, tr.globs, tr.attrs), self.overlays):
            mine.clear()
            mine.update(kept)
        tr.shadows.clear()
        for i, (sh, c) in self.shadows.items():
            tr.shadows[i] = sh
            _put_contents(sh, c)
        tr.real.clear()
        tr.real.update(self.real)
        tr.written.clear()
        tr.written.update(self.written)
        tr.loads.clear()
        tr.loads.update(self.loads)
        tr.error, tr.gen_break = self.error, self.gen_break
        if self.scratch is not None:
            if self.breaks:
                self.scratch[_breaks._KEY] = self.breaks
            else:
                self.scratch.pop(_breaks._KEY, None)
        for o, c in self.made:
            _put_contents(o, c)


_OPAQUE = object()  # _contents: state it cannot read
# A loop's range iterator: its state is its position (__reduce__'s third
# item), which __setstate__ puts back, even after it ran out.
_RANGE_ITERS = (type(iter(range(0))), type(iter(range(1 << 64))))
_FIXED = object()   # _contents: an object with no state a side could change
_FIXED_TYPES = frozenset([int, float, bool, str, bytes, complex, tuple, frozenset, range, slice,
                          type(None), type(Ellipsis), _C.SymInt, types.CodeType,
                          types.BuiltinFunctionType, types.ModuleType])


def _contents(o):
    """What a side of an `if` could change in o, as a snapshot (_SideState)."""
    t = type(o)
    if t is list or t is set:
        return tuple(o)
    if t is dict:
        return tuple(o.items())
    if t is types.CellType:
        return (_cell_value(o),)
    if t is _TransGen:
        return (o.pc, o.done, tuple(o.fr.stack), tuple(o.fr.fast.items()))
    if t in _RANGE_ITERS:
        return (o.__reduce__()[2],)
    if t in _FIXED_TYPES or isinstance(o, (_C.Tensor, type)) or _traced(o):
        return _FIXED
    if t is types.MethodType:
        return _FIXED  # (its function and self are objects of their own)
    if t is types.FunctionType or t.__dictoffset__ and \
            not any("__slots__" in vars(k) for k in t.__mro__[:-1]):
        try:
            d = object.__getattribute__(o, "__dict__")  # (no property of the user's runs)
        except AttributeError:
            d = None
        if type(d) is dict:
            return (tuple(d.items()),)
    return _OPAQUE


def _held(o, c):
    """The objects o holds, from its snapshot c (_contents)."""
    t = type(o)
    if t is tuple or t is frozenset:
        return tuple(o)
    if t is list or t is set or t is types.CellType:
        return c
    if t is dict:
        return tuple(x for kv in c for x in kv)
    if c is _FIXED or t is _TransGen or t in _RANGE_ITERS:
        return ()
    return tuple(v for _, v in c[0])  # an object's attributes


def _same_contents(o, c):
    now = _contents(o)
    if type(o) is set:
        return len(now) == len(c) and {id(x) for x in now} == {id(x) for x in c}
    return _same_items(now, c)


def _same_items(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if type(x) is tuple and type(y) is tuple:
            if not _same_items(x, y):
                return False
        elif not (type(x) is type(y) and type(x) in (int, bool) and x == y):
            return False
    return True


def _put_contents(o, c):
    t = type(o)
    if t is list:
        o[:] = c
    elif t is set or t is dict:
        o.clear()
        o.update(c)
    elif t is types.CellType:
        if c[0] is _EMPTY:
            try:
                del o.cell_contents
            except ValueError:
                pass
        else:
            o.cell_contents = c[0]
    elif t in _RANGE_ITERS:
        o.__setstate__(c[0])
    elif t is _TransGen:
        o.pc, o.done = c[0], c[1]
        o.fr.stack[:] = c[2]
        o.fr.fast.clear()
        o.fr.fast.update(c[3])
    else:
        d = o.__dict__
        d.clear()
        d.update(c[0])


def _touches(values, opaque):
    """Whether an instruction's operands hand code one of the opaque
    objects (itself, as a bound method's self, or in a tuple or list)."""
    for v in values:
        if id(v) in opaque:
            return True
        t = type(v)
        if t is types.BuiltinMethodType or t is types.MethodType:
            if id(v.__self__) in opaque:
                return True
        elif t is tuple or t is list:
            for x in v:
                if id(x) in opaque:
                    return True
    return False


def _cond_value(v, containers, depth=0):
    """Whether a cond can return v (a side's value): traced values, tensors,
    Python numbers, strings and None, in tuples (containers: also lists and
    dicts, for a side's return value, made anew on every call anyway)."""
    if v is None or type(v) in (int, float, bool, str, complex) or \
            isinstance(v, (_C.Tensor, _C.SymInt)):
        return True
    hnp = loaded_hop_numpy()
    if hnp is not None and isinstance(v, hnp.ndarray):
        return True
    if depth > 8:
        return False
    if type(v) is tuple or containers and type(v) is list:
        return all(_cond_value(x, containers, depth + 1) for x in v)
    if containers and type(v) is dict:
        return all(type(x) in (str, int) for x in v) and \
            all(_cond_value(x, containers, depth + 1) for x in v.values())
    return False


def _side_outputs(what, vals, olds, labels, returns, kept):
    """(output?, value) per value a side leaves (_merge_sides): True, an
    output; False, none, for one left as it was; None, none, for an array
    that is the caller's memory or a view, or an object whose identity the
    code after the `if` can tell (kept: _Identities; the same on both sides,
    else _same_arrays refuses); _NoMerge for one a cond cannot return."""
    keep = []
    for v, old, label in zip(vals, olds, labels):
        if v is old and not _cond_value(v, False):
            keep.append((False, v))  # unchanged: no output (the other side's too)
        elif v is _UNBOUND:
            raise _NoMerge(f"{what} leaves {label} unassigned")
        elif not _cond_value(v, returns):
            raise _NoMerge(f"{what} leaves in {label} a {type(v).__name__}, which a cond "
                           f"cannot return")
        elif _views_memory(v) or kept(v, old):
            # NumPy's array is that memory itself (an argument, a view), or
            # an object made before the `if` that something else holds: a
            # cond's output would be a copy.  The same object on both sides
            # stays itself (no output); different ones break the `if`
            keep.append((None, v))
        elif _holds_memory(v, kept):
            raise _NoMerge(f"{what} leaves in {label} a {type(v).__name__} holding an "
                           f"argument's or another array's memory, or an array or tensor made "
                           f"before the `if` (NumPy's array itself, which a cond's output would "
                           f"copy)")
        else:
            keep.append((True, v))
    return keep


def _same_arrays(keep, other, labels):
    """_NoMerge where the sides leave different arrays at a place, one of
    them kept as itself (_side_outputs: the caller's memory, a view, or an
    object made before the `if` that something else holds)."""
    mine = [i for i, ((o, v), (p, w)) in enumerate(zip(keep, other))
            if (o is None or p is None) and v is not w]
    if mine:
        raise _NoMerge(f"its sides leave different arrays in {labels[mine[0]]}, one of them an "
                       f"argument, a captured array, a view, or an array or tensor made before "
                       f"the `if` that something else holds (the object itself, which a cond's "
                       f"output would copy)")


def _identity(v):
    """Whether v is a hop.numpy array or a tensor: an object a cond's output
    would replace by a new one."""
    if isinstance(v, _C.Tensor):
        return True
    hnp = loaded_hop_numpy()
    return hnp is not None and isinstance(v, hnp.ndarray)


class _Identities:
    """The arrays and tensors the state at a data-dependent `if` holds, and
    where (_merge_sides): a side that leaves one made before the `if` at a
    place a cond's output would take must leave that object itself (kept),
    unless nothing can tell the difference: at the join (region) the old
    value of the local it stays in, held by that local alone (`if p: y = y
    + 1`); at the return (no region) one that does not outlive the frame
    (held by no argument, effect or write of the translation).  Otherwise
    `y = c if p else d; y[0] = 1` wrote a copy of c, and `y is c` was
    False."""

    def __init__(self, tr, fr, region):
        self.region = region
        self.held, self.escaped, seen = {}, set(), set()

        def walk(roots, into):
            todo = [(o, 0) for o in roots]
            while todo:
                o, depth = todo.pop()
                if _identity(o):
                    into(id(o))
                elif depth < 3 and id(o) not in seen and not isinstance(o, _C.SymInt):
                    seen.add(id(o))
                    c = _contents(o)
                    if c is not _OPAQUE:
                        todo.extend((x, depth + 1) for x in _held(o, c))

        def count(i):
            self.held[i] = self.held.get(i, 0) + 1

        def values(g):
            return list(g.fast.values()) + list(g.stack) + \
                [_cell_value(c) for c in g.cells.values()]
        # (the callers' frames of an inlined call hold values too, and
        # outlive it; a side's frame is a copy of the innermost one)
        own = fr if any(g is fr for g in tr.frames) or not tr.frames else tr.frames[-1]
        callers = [v for g in tr.frames if g is not own for v in values(g)]
        walk(values(fr) + callers + list(tr.made.values()), count)
        seen.clear()
        walk([tr._argtree] + [e.values for e in tr.effects] + list(tr.shadows.values()) +
             [v for d in (tr.cells, tr.globs, tr.attrs) for v in d.values()] + callers,
             self.escaped.add)

    def __call__(self, v, old):
        """Whether the side's value v (old: the local's value at the `if`)
        must stay itself."""
        if not _identity(v):
            return False
        depth = _C._trace_depth()
        if isinstance(v, _C.Tensor):
            if _C._is_proxy(v) and _C._proxy_depth(v) >= depth:
                return False  # made in the side
        elif v._dp >= depth:
            return False
        if id(v) in self.escaped or id(v) not in self.held:
            return True  # the caller's, an effect's, or read from the environment
        return self.region is not None and not (v is old and self.held[id(v)] == 1)


def _views_memory(v):
    """Whether v is a hop.numpy array that is memory NumPy's code can tell
    apart from a copy (an argument, a captured array, a view): merging it
    into a cond's output would return (and write) a copy."""
    hnp = loaded_hop_numpy()
    return hnp is not None and isinstance(v, hnp.ndarray) and bool(
        v._vw or isinstance(v._role, int) or
        (v._st is not None and isinstance(v._st.root, tuple)))


def _holds_memory(v, kept, depth=0):
    """Whether the tuple, list or dict v holds such an array (_views_memory)
    or an object kept as itself (kept: _Identities)."""
    if depth > 8:
        return False
    items = v.values() if type(v) is dict else v if type(v) in (tuple, list) else ()
    return any(_views_memory(x) or kept(x, _UNBOUND) or _holds_memory(x, kept, depth + 1)
               for x in items)


def _same_constants(a, b):
    """Whether two sides' templates (None at a traced leaf) agree: the
    same Python values at the same places."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if (x is None) != (y is None):
            return False
        if x is not y and not (type(x) is type(y) and x == y):
            return False
    return True


def _if_outputs(code, k, region, in_loop):
    """The locals a data-dependent `if` at instruction k of code may assign
    in region (k + 1, join): the cond's outputs (none for a region to the
    return, whose output is the value returned)."""
    ins = _instructions(code)[0]
    names = []
    if region is not None:
        for j in range(k + 1, region[1]):
            if ins[j].opname in ("STORE_FAST", "DELETE_FAST") and \
                    ins[j].argval not in names:
                names.append(ins[j].argval)
        if not in_loop:
            # a local no code after the `if` reads is no output (a
            # temporary of one side: unassigned on the other)
            read = {i.argval for i in ins[region[1]:]
                    if i.opname in ("LOAD_FAST", "DELETE_FAST")}
            names = [n for n in names if n in read]
    return names


class _Merging:
    """The Translator's data-dependent `if` (a mixin)."""

    def _mergeable(self, v):
        """Whether a data-dependent `if` on v may become a cond (_merge_if):
        a traced tensor or hop.numpy array, in a translation that may break
        (fullgraph=True raises at such an `if`, as the plain tracer does)."""
        if self.concrete or not self.can_break:
            return False
        if isinstance(v, _C.Tensor):
            return _C._is_proxy(v)
        hnp = loaded_hop_numpy()
        return hnp is not None and isinstance(v, hnp.ndarray) and _C._is_proxy(v._t)

    def _merge_if(self, fr, k, target, v, jump_on):
        """A forward POP_JUMP_IF_<jump_on> at instruction k of fr on the
        traced value v: both sides traced as the bodies of one cond, as the
        plain tracer's path specialisation does (_paths), and the next pc;
        or, when a side cannot be a body (_NoMerge: a Python effect, a
        break, a jump out of the `if`, values a cond cannot return), the
        graph break at the `if` that was the rule before, its reason saying
        why.  Each side first runs to the join (the end of the `if`
        statement or conditional expression): the locals the `if` may
        assign and the value it pushes are the cond's outputs.  Where that
        fails, each side runs to the return instead (the rest of the
        function in each body, the rest of a loop's turns too: a side that
        returns, breaks or continues, sides that assign different Python
        numbers)."""
        ins, at, _, _, _, loops = _instructions(fr.code)
        try:
            if self.numpy_mode:
                bad = _exact.differs([v])
                if bad is not None:
                    # eager branches on NumPy's own value: a cond on hop's
                    # could take the other side where the two differ
                    raise _NoMerge(f"its condition is a value NumPy may compute with other "
                                   f"bits ({bad}), so hop could take another side than NumPy")
            pred = _paths._predicate(v if isinstance(v, _C.Tensor) else v._t)
        except _NoMerge as e:
            raise _BreakHere(f"{_CONTROL_FLOW}; not traced as a cond: {e.message}",
                             self.depth) from None
        except Exception:
            # bool() of it raises (more than one element): eager's error, in Python
            raise _BreakHere(_CONTROL_FLOW, self.depth) from None
        starts = {jump_on: target, not jump_on: k + 1}
        join = target
        prev = ins[target - 1]
        if prev.opname == "JUMP_FORWARD" and at[prev.argval] > target:
            join = at[prev.argval]  # an `else`: the `if` part jumps over it
        in_loop = any(t <= k <= j for t, j in loops)
        site = _paths.Site(fr.code.co_filename, fr.line)
        why = None
        for region in ((k + 1, join), None):
            try:
                pc = self._merge_sides(fr, k, starts, region, pred, in_loop)
            except _NoMerge as e:
                why = e.message
                continue
            self.merged.append(f"data-dependent branch at {site} (`{site.text}`): both sides "
                               f"traced as one cond" +
                               ("" if region else " (each side runs on to the return)"))
            return pc
        raise _BreakHere(f"{_CONTROL_FLOW}; its sides were not traced as one cond: {why}",
                         self.depth)

    def _merge_sides(self, fr, k, starts, region, pred, in_loop):
        """The cond of _merge_if for one region ((k + 1, join), or None: to
        the return): the next pc, or _NoMerge with the translator and the
        objects the function made put back as they were at the `if`."""
        names = _if_outputs(fr.code, k, region, in_loop)
        h0 = len(fr.stack)
        state = _SideState(self, fr)
        kept = _Identities(self, fr, region)
        tr = _C.tracing()
        results = {}

        def body(side):
            what = f"its {side} side"

            def run():
                self._sides += 1
                if self._sides > _MAX_SIDES:
                    raise _NoMerge(f"the function has more than {_MAX_SIDES} sides of "
                                   f"data-dependent ifs to trace")
                s = _Frame()
                s.func, s.code, s.cells, s.kwnames = fr.func, fr.code, fr.cells, fr.kwnames
                s.line, s.handling = fr.line, fr.handling
                s.fast = dict(fr.fast)
                s.stack = list(fr.stack)
                saved = (self._opaque, self.trace_depth, tr.scratch.get(_breaks.SIDE))
                self._opaque = state.opaque
                # the side's own code runs in this body: the call guard and
                # conversions treat it as the function's (_check, _breaks)
                self.trace_depth = _C._trace_depth()
                tr.scratch[_breaks.SIDE] = self.trace_depth
                try:
                    got = self._execute(s, starts[side], region=region)
                except _NoMerge as e:
                    raise _NoMerge(f"{what} {e.message}") from None
                except _BreakHere as b:
                    raise _NoMerge(f"{what} breaks the graph: {b.message}") from None
                except Unsupported as u:
                    raise _NoMerge(f"{what}: {u.message}") from None
                except _breaks.GraphBreak as b:  # (a conversion outside a call)
                    raise _NoMerge(f"{what} breaks the graph: {b.message}") from None
                except Exception as e:
                    raise _NoMerge(f"{what} raised {type(e).__name__}: {e}") from None
                finally:
                    self._opaque, self.trace_depth = saved[0], saved[1]
                    if saved[2] is None:
                        tr.scratch.pop(_breaks.SIDE, None)
                    else:
                        tr.scratch[_breaks.SIDE] = saved[2]
                    self._cur = fr
                changed = state.changed(self, region is None)
                if changed is not None:
                    raise _NoMerge(f"{what} {changed}")
                if region is None:
                    state.rewind()
                if region is not None:
                    if got is not _PAUSED:
                        raise _NoMerge(f"{what} returns inside the `if`")
                    if len(s.stack) < h0 or any(a is not b for a, b in zip(s.stack, fr.stack)):
                        raise _NoMerge(f"{what} ends with another stack")
                    vals = [s.fast.get(n, _UNBOUND) for n in names] + s.stack[h0:]
                    olds = [fr.fast.get(n, _UNBOUND) for n in names] + \
                        [_UNBOUND] * (len(s.stack) - h0)
                    labels = [f"the local {n!r}" for n in names] + \
                        ["the value of the conditional expression"] * (len(s.stack) - h0)
                else:
                    vals, olds, labels = [got], [_UNBOUND], ["the value it returns"]
                keep = _side_outputs(what, vals, olds, labels, region is None, kept)
                joined = [v for out, v in keep if out]
                leaves, spec = flatten(joined)
                again = repeats(joined, _paths._atom)
                traced = [x for x in leaves if isinstance(x, (_C.Tensor, _C.SymInt))]
                template = [None if isinstance(x, (_C.Tensor, _C.SymInt)) else x for x in leaves]
                other = results.get(not side)
                if other is not None:
                    same = [(o, None if o else id(v)) for o, v in keep] == \
                        [(o, None if o else id(v)) for o, v in other[2]]
                    _same_arrays(keep, other[2], labels)
                    if not same or _paths._agnostic(spec) != _paths._agnostic(other[0]) or \
                            not _same_constants(template, other[1]) or again != other[3]:
                        raise _NoMerge(f"its sides leave values of different kinds in "
                                       f"{', '.join(labels) or 'nothing'} (Python values a "
                                       f"cond cannot return as one)")
                results[side] = (spec, template, keep, again)
                return traced
            return run

        try:
            if tr is None:
                raise _NoMerge("no trace")
            outs = _C.call_hop("cond", (pred,), ((),), (body(True), body(False)))
        except _NoMerge:
            state.restore(self)
            raise
        except Exception as e:
            state.restore(self)
            raise _NoMerge(f"hop.cond cannot join its sides ({type(e).__name__}: {e})") from None
        spec, template, keep, again = results[True]
        spec = _paths._merge(spec, results[False][0])
        it = iter(outs)
        # one object at several places (`return y, [y]`, `a = b = y`) is one
        # merged value there too, as eagerly
        merged = iter(unflatten_with([next(it) if x is None else x for x in template], spec, {},
                                     again))
        final = [next(merged) if out else v for out, v in keep]
        if region is None:
            fr.stack.append(final[0])
            return -1  # (returned: the value on top of the stack)
        for n, v in zip(names, final):
            if v is _UNBOUND:
                fr.fast.pop(n, None)
            else:
                fr.fast[n] = v
        fr.stack[h0:] = final[len(names):]
        return region[1]
