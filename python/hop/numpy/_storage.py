"""NumPy's aliasing for traced hop.numpy arrays: storages, views, writes.

Eagerly a hop.numpy array is a tensor over memory, its views are tensors
over the same memory, and an in-place update (`x[k] = v`, `x += 1`, `out=`)
writes that memory, exactly as NumPy does.  A traced array has no memory:
its value is a graph node.  So, while a function is traced, every array
belongs to a *storage*: the value of the array that owns the memory (a node,
replaced by each write) and a version.  A view (basic indexing, reshape
when NumPy's would not copy, transpose, ...) is its storage's value seen
through its *view steps*, recomputed when the version has changed.  A write
through any array computes the storage's new value: the flat positions the
array and the key select (the view steps and the key applied to
arange(size)), and one `put` of the values there (a write of the whole
storage is just its new value).  So a write through a view, a slice, an
integer array or a mask changes exactly what NumPy's changes, and every
array that shares the storage sees it.

A *run* is one execution of the traced function (hop.compile's path
specialisation runs it again inside the branches of a cond).  Arrays the
run makes are its own.  An argument, and a concrete hop.numpy array the
function reaches from outside (a global: *captured*), are roots whose
memory belongs to the caller: the final value of each one written is an
extra output of the trace, and the runner writes it back into the caller's
memory after the plan has run (`_trace._Runner`).  Which roots need a slot
is known only once the function writes them: a write to a root without a
slot restarts the trace with one more (GrowSlots; bounded by the number of
roots), so a trace whose function writes nothing has no extra output.

Writes that cannot be reproduced are errors, never silent: a write inside a
HOP body to an array made outside it (a body has no effects) is a
TraceError; a write to an operand of a HOP body, or to a root while hop
traces without write-back (hop.grad, hop.vmap), is an UnsupportedError.
"""

import itertools
import sys
import threading

from .. import _C


def _is_array(a):
    """Whether a is a hop.numpy array (by class: a probe of an attribute,
    hasattr(a, "_vw"), ran the __getattr__ of a user's object)."""
    return isinstance(a, sys.modules["hop.numpy"].ndarray)

__all__ = ["Run", "Storage", "GrowSlots", "current", "begin_run", "end_run", "release",
           "implicit_runs"]

class _Local(threading.local):
    """This thread's stack of runs and count of operand scopes.  The class
    defaults answer a thread that has set none (a read of an attribute
    threading.local lacks raises and catches an AttributeError: ~4,000
    instructions on every eager hop.numpy op, which asks current())."""
    stack = None
    operands = 0


_tls = _Local()
_IMPLICIT = "hop.numpy implicit run"


class GrowSlots(BaseException):
    """A run wrote a root (an argument or a captured array) without a
    write-back slot: the trace starts again with one for it.  A
    BaseException, so that user code's `except Exception` lets it through."""

    def __init__(self, key, array):
        super().__init__(key)
        self.key = key
        self.array = array  # the captured array of a ("capture", id) key


class Run:
    """One execution of the traced function.

    depth: the tracer depth of the function's own code (a HOP body is
    deeper); writeback: whether roots may be written (the trace returns
    their values); slots: the root keys with a write-back slot, in order;
    args: leaf index -> the argument array as the function sees it;
    arg_tensors: id of an argument's proxy -> its leaf index (a hop.numpy
    array rebuilt from an argument's pytree is that argument); marked:
    captured arrays given a storage in this run, forgotten when it ends;
    layout: argument leaves whose strides a view-or-copy decision read;
    order: elementwise_order's decisions that read an argument's layout;
    made: the concrete tensors of arrays the function made with NumPy's
    creation functions over new memory (_creation), which hop.compile
    captures without a guard (nothing outside the call can change them);
    owned: the storages of arrays the run made (release); columns: the
    arrays that are NumPy's nonzero columns of a 1-d array, whose strides
    are C's also without elements (hop._trace's _Results.columns)."""

    __slots__ = ("depth", "writeback", "slots", "slot_arrays", "args", "arg_tensors", "marked",
                 "active", "layout", "order", "captured", "arg_strides", "arg_examples", "made",
                 "owned", "columns", "fortran_copies", "__weakref__")

    def __init__(self, depth, writeback, slots, slot_arrays=None):
        self.depth = depth
        self.writeback = writeback
        self.slots = tuple(slots)
        self.slot_arrays = slot_arrays or {}  # a captured root's key -> the array
        self.args = {}
        self.arg_tensors = {}
        self.marked = []
        self.active = True
        self.layout = set()
        self.order = []  # the elementwise results' orders that read an argument's layout
        self.captured = {}  # id(array) -> array, the captured roots this run saw
        self.arg_strides = {}  # leaf -> the example's strides in elements
        self.arg_examples = {}  # leaf -> the example ndarray's (shape, strides in elements)
        # id -> storage of each order='F' reshape's copy, whose NumPy base
        # (the array's copy in Fortran order) the run does not make
        self.fortran_copies = {}
        self.made = []
        self.owned = []
        self.columns = []  # nonzero's columns of a 1-d array (NumPy's C strides when empty)

    def root_value(self, key):
        """The current value of root key (its storage's, or its own tensor
        when never written)."""
        kind, ref = key
        a = self.args.get(ref) if kind == "arg" else \
            self.captured.get(ref, self.slot_arrays.get(key))
        if a is None:
            return None
        st = a._st
        if st is not None and st.run is self and st.vw_root is a:
            return st.value
        return a._tv


def active_run():
    """The innermost run _trace began (begin_run) on this thread, or None:
    not current()'s implicit run, which a trace without runs gets (and which
    hop's own reads after the function ran, the guards' walk, would get)."""
    stack = _tls.stack
    return stack[-1] if stack else None


def current():
    """The run of this thread's active trace (the innermost), or None when
    nothing is traced.  A trace made without _trace's runs (hop.grad and
    hop.vmap trace their function directly) gets an implicit run: local
    arrays work, roots are not written."""
    stack = getattr(_tls, "stack", None)
    if stack:
        return stack[-1]
    tr = _C.tracing()
    if tr is None:
        return None
    r = tr.scratch.get(_IMPLICIT)
    if r is None:
        r = tr.scratch[_IMPLICIT] = Run(1, False, ())
    return r


class operands:
    """While a HOP body's operands are built (hop._hops), a hop.numpy array
    made among them is an operand: the caller's value, never written."""

    def __enter__(self):
        _tls.operands = getattr(_tls, "operands", 0) + 1

    def __exit__(self, *exc):
        _tls.operands -= 1


def making_operands():
    return getattr(_tls, "operands", 0) > 0


def begin_run(writeback, slots, slot_arrays=None):
    """Starts a run of the traced function at the current tracer depth."""
    from . import _creation
    run = Run(_C._trace_depth(), writeback, slots, slot_arrays)
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = []
    stack.append(run)
    _C._np_eager_off(1)  # (the eager fast path, _eager, is off while a run is on the stack)
    _creation.enter()
    return run


def end_run(run):
    """Ends run: it is popped and the captured arrays it marked forget their
    storage (their own tensor is what everyone else sees)."""
    from . import _creation
    run.active = False
    stack = _tls.stack
    if stack and stack[-1] is run:
        stack.pop()
        _C._np_eager_off(-1)
    _creation.leave()
    end_marked(run)


def end_marked(run):
    """The captured arrays run marked forget their storage in it (an
    implicit run's too, when its trace is released)."""
    for a in run.marked:
        if a._st is not None and a._st.run is run:
            a._st = None
            a._vw = ()
            a._cv = None  # (this run's value: a next run's version 0 would read it)
    run.marked = []


def implicit_runs(tr):
    """The implicit run of trace tr (current), taken off it: [] or [run]."""
    r = tr.scratch.pop(_IMPLICIT, None)
    return [] if r is None else [r]


def release(runs):
    """Breaks the reference cycles of the runs' arrays once the trace that
    ran them is done (nothing reads their storages any more): an array the
    run made and its storage refer to each other (Storage.vw_root, _st), as
    do the run and its arguments (Run.args, _run).  Each such array keeps
    its final value as its own tensor and forgets its storage; its views
    keep theirs, which keeps the array alive (NumPy's .base).  So a trace's
    arrays are freed when the last reference goes, not by the cyclic gc."""
    for run in runs:
        end_marked(run)
        for st in run.owned:
            a = st.vw_root
            if a._st is st:
                a._tv = st.value  # (the root's view steps are none)
                a._ver = st.version
                a._st = None
        run.owned = []
        run.args = {}
        run.captured = {}
        run.slot_arrays = {}


class Storage:
    """The memory of one array (vw_root: the array that owns it) while a run
    traces: value (its tensor, replaced by each write), version (bumped by
    each write), depth (the tracer depth the array was made at), root (None
    for an array the run made; ("arg", leaf) or ("capture", id) for the
    caller's memory; "input" for a HOP body's operand); foreign: a captured
    array's storage, valid only in its run; strides: the memory layout in
    elements (None: C order), for NumPy's view-or-copy decisions; leaves:
    the argument leaves whose layout a decision about this storage read;
    ambiguous: a reshape of it could not be told a view or a copy."""

    __slots__ = ("value", "version", "run", "depth", "root", "foreign", "vw_root", "strides",
                 "leaves", "ambiguous")

    def __init__(self, value, run, depth, root, foreign, vw_root, strides=None):
        self.value = value
        self.version = 0
        self.run = run
        self.depth = depth
        self.root = root
        self.foreign = foreign
        self.vw_root = vw_root
        self.strides = strides
        self.leaves = set()
        self.ambiguous = False

    def view(self, steps):
        t = self.value
        for s in steps:
            t = s.apply(t)
        return t


class Step:
    """One view step: apply (tensor -> tensor) makes the view from the
    storage's value, or from its arange of positions for a write; apply_np
    does the same to an ndarray when it can (to decide NumPy's views);
    readonly: NumPy's view is read-only (broadcast_to, diagonal); kind
    "reshape" for a reshape (a C-contiguous array stays so); copies: apply
    takes elements (a negative step, np.flip, diagonal, a 0-d integer array
    index), so the plan's tensor is a new C-ordered array where NumPy's is
    a view with its own strides (plan_gives_view); True where NumPy's is a
    view (eagerly then a copy that writes reach its base through,
    eager_write), "index" for a 0-d integer array index (NumPy copies)."""

    __slots__ = ("apply", "apply_np", "readonly", "kind", "copies")

    def __init__(self, apply, apply_np=None, readonly=False, kind=None, copies=False):
        self.apply = apply
        self.apply_np = apply_np
        self.readonly = readonly
        self.kind = kind
        self.copies = copies


def part_step(op):
    """The view step of a complex array's part (op "real" or "imag", kind
    the same): the part of the storage's value; positions (ints) pass
    through, a write's put goes into the part (write).  On an ndarray the
    part's NumPy view, on memory offsets (ints, in the complex items) the
    offsets in the part's items: 2k, 2k + 1."""
    def apply(x):
        return _C._op(op, x) if x.dtype.dtype.kind == "c" else x

    def apply_np(x):
        if x.dtype.kind == "c":
            return x.real if op == "real" else x.imag
        return x * 2 + (op == "imag")
    return Step(apply, apply_np, kind=op)


def _c_strides(shape):
    out, s = [], 1
    for n in reversed(shape):
        out.append(s)
        s *= n
    return tuple(reversed(out))


def storage_of(a, run):
    """a's storage in run, made on first use: an array the run made owns a
    new one; a captured array gets one for this run (marked, forgotten when
    the run ends)."""
    st = a._st
    if st is not None and (not st.foreign or st.run is run):
        return st
    if a._run is run:
        root = a._role if a._role is not None else None
        strides = None
        if isinstance(root, int):
            strides = run.arg_strides.get(root)
            root = ("arg", root)
        elif root is None and not _C._is_proxy(a._tv) and not a._tv.is_contiguous():
            # NumPy's own array the function made in another layout
            # (np.zeros(shape, order='F')): the elementwise K order reads it
            strides = tuple(a._tv.stride())
        st = Storage(a._tv, run, a._dp, root, False, a, strides)
        run.owned.append(st)
    elif a._cp is not None:
        return _copy_view_storage(a, run)
    else:
        # made outside this run: a captured array (or one of an ended run)
        strides = None
        if not _C._is_proxy(a._tv):
            arr = a._tv.numpy()
            strides = tuple(x // arr.itemsize for x in arr.strides) if arr.itemsize else None
        st = Storage(a._tv, run, run.depth, ("capture", id(a)), True, a, strides)
        run.marked.append(a)
        run.captured[id(a)] = a
    a._st = st
    a._vw = ()
    a._ver = 0
    a._cv = None  # (a captured array's value in an earlier run: a proxy of its trace)
    return st


def _copy_view_storage(a, run):
    """The storage in run of captured array a, an eager view that hop made
    as a copy (a._cp: `V = G[::-1]` of a hop.numpy G, or a view of one): the
    storage of the array whose memory it views, seen through the steps on
    the way there, as any view in the run, so that a write through a (or a
    view of a) reaches that array, and a read of a after a write of that
    array sees it (as its own root, the copy, it had neither: the write
    went into the copy alone, found by the forty-fifth session)."""
    steps, x = [], a
    while x._cp is not None:
        steps.append(x._cp[1])
        x = x._cp[0]
    st = storage_of(x, run)
    a._st = st
    a._vw = x._vw + tuple(reversed(steps))
    a._ver = -1  # (its value is made from the storage's at its first read)
    a._cv = None
    run.marked.append(a)
    return st


def _offsets(a, st):
    """The memory offsets (in elements) of a's elements as an ndarray of
    a's shape, or None when sizes are symbolic or a step cannot say."""
    shape = tuple(st.value.shape)
    if not all(isinstance(n, int) for n in shape):
        return None
    import numpy as np
    strides = st.strides if st.strides is not None else _c_strides(shape)
    off = np.zeros(shape, dtype=np.int64)
    for d, (n, k) in enumerate(zip(shape, strides)):
        idx = np.arange(n, dtype=np.int64) * k
        off = off + idx.reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1))
    for s in a._vw:
        if s.apply_np is None:
            return None
        off = s.apply_np(off)
    return off


def _affine(off):
    """Whether offsets off (an ndarray) are base + sum(i_d * stride_d): the
    elements can be viewed in this shape without a copy."""
    import numpy as np
    if off.size <= 1:
        return True
    base = off.reshape(-1)[0]
    want = np.full(off.shape, base, dtype=np.int64)
    for d, n in enumerate(off.shape):
        if n == 1:
            continue
        step = off[(0,) * d + (1,) + (0,) * (off.ndim - d - 1)] - base
        idx = np.arange(n, dtype=np.int64) * step
        want = want + idx.reshape((1,) * d + (n,) + (1,) * (off.ndim - d - 1))
    return bool((want == off).all())


def _layout_answer(a, st, test):
    """The one answer to a question about the memory layout of a's elements
    (is a reshape of them a view, is their last axis contiguous):
    test(offsets) of their offsets in st's memory, an ndarray of a's shape;
    True without offsets when st's root is in C order and every step since
    reshaped it (an array in C order, for which every such question is
    yes); None when hop cannot tell (symbolic sizes, a step that cannot
    say).  Also the argument leaf whose layout the answer read (None: a
    value the function made, or nothing read), which the caller records:
    in st.leaves when the answer matters only if the storage is written,
    in run.layout when it always does.  The root's order is read too when
    it is C order, since another call's argument may not be."""
    leaf = st.root[1] if isinstance(st.root, tuple) and st.root[0] == "arg" else None
    c_root = st.strides is None or st.strides == _c_strides(tuple(st.value.shape))
    if c_root and all(s.kind == "reshape" for s in a._vw):
        return True, leaf
    off = _offsets(a, st)
    if off is None:
        return None, None
    return test(off), leaf


def _strides_of(off):
    """The strides (in elements) of offsets off, an ndarray of the array's
    shape; 0 for a dim of size 1 (which NumPy's iteration ignores)."""
    base = off.reshape(-1)[0] if off.size else 0
    return tuple(int(off[(0,) * d + (1,) + (0,) * (off.ndim - d - 1)] - base) if n > 1 else 0
                 for d, n in enumerate(off.shape))


def elementwise_order(operands, ndim, run, how="iter"):
    """NumPy's K order for the new result of ndim dims that a function
    makes from operands (hop.numpy arrays of run, plain ndarrays; others are
    scalars): its axes from the outermost in memory to the innermost, or
    None for C order (decide_order; how says which of NumPy's allocations
    makes it).  The decision is recorded in run.order when it read an
    argument's layout, so that hop.compile makes it again for each call's
    arguments (order_holds).  A layout known only at run time (symbolic
    sizes) is read from the argument's example when the operand is that
    argument's view, and recorded the same way; otherwise the statement
    ends the compiled part (hop.trace: UnsupportedError), never C order
    silently."""
    import numpy as np
    layouts, specs, read = [], [], False
    every = callable(how)  # (a decision of NumPy's that reads every operand's layout)
    for a in operands:
        if every and not (isinstance(a, np.ndarray) or _is_array(a)):
            shape = tuple(np.shape(a))  # (a scalar or a list: NumPy's new C-ordered array)
            lay = (shape, _c_strides(shape))
            layouts.append(lay)
            specs.append(("fixed", lay))
            continue
        if isinstance(a, np.ndarray):
            if (a.ndim == 0 or a.size == 0) and not every:
                continue
            lay = (tuple(a.shape), _layout_of(a) or (0,) * a.ndim)
            spec = ("fixed", lay)
        elif _is_array(a) and (a._t.ndim or every):
            if any(isinstance(n, int) and n == 0 for n in a._t.shape) and not every:
                continue  # no elements: no say, as an empty ndarray's
            st = storage_of(a, run)
            leaf = st.root[1] if isinstance(st.root, tuple) and st.root[0] == "arg" else None
            remake = all(s.apply_np is not None and s.kind != "bitcast" for s in a._vw)
            lay = _exact_layout(a, st, run, leaf)
            if lay is None:
                lay = _offsets_layout(a, st)
            if lay is None:
                from .._breaks import conversion
                conversion(_C.UnsupportedError,
                           "hop.numpy: the memory order of a new array NumPy makes in its "
                           "operands' order (K) depends on a layout hop cannot read while "
                           "tracing (symbolic sizes, or a view step without a NumPy form)")
            spec = ("fixed", lay)
            if leaf is not None:
                read = True
                # made again from the call's argument: its steps on an array
                # of the argument's strides (no memory), or that layout exactly
                spec = ("arg", leaf, a._vw) if remake else ("exact", leaf, st.strides, lay)
        else:
            continue
        layouts.append(lay)
        specs.append(spec)
    order = decide_order(layouts, ndim, how)
    if read:
        run.order.append((tuple(specs), ndim, order, how))
    return order


def eager_c(operands):
    """Whether every eager array among operands (hop.numpy arrays outside a
    trace, ndarrays) is C-contiguous: then NumPy's K order of a new array
    made from them is C order, the common case, decided with one check per
    array (a view hop made as a copy, a[::-1], has NumPy's layout instead)."""
    import numpy as np
    for a in operands:
        if isinstance(a, np.ndarray):
            if not a.flags.c_contiguous:
                return False
        elif _is_array(a) and (a._cp is not None or not a._t.is_contiguous()):
            return False
    return True


def eager_layout(a):
    """(shape, strides in elements) of eager array a (a hop.numpy array
    outside a trace, or an ndarray) as NumPy has it: its tensor's, or for a
    view hop made as a copy (a[::-1]) NumPy's view of the memory's."""
    import numpy as np
    if not isinstance(a, np.ndarray) and a._cp is not None:
        v = numpy_of_copy(a)
        if v is not None:
            a = v
    if isinstance(a, np.ndarray):
        return tuple(a.shape), _layout_of(a) or (0,) * a.ndim
    t = a._t
    return tuple(t.shape), tuple(t.stride())


def eager_order(operands, ndim, how="iter"):
    """NumPy's K order (decide_order) of the new result of ndim dims that an
    eager function makes from operands (hop.numpy arrays outside a trace,
    ndarrays; others are scalars), as elementwise_order decides it for a
    trace: the axes from the outermost in memory, or None for C order."""
    import numpy as np
    layouts = []
    for a in operands:
        if isinstance(a, np.ndarray) or _is_array(a):
            lay = eager_layout(a)
            if lay[0] and all(n != 0 for n in lay[0]):
                layouts.append(lay)
    return decide_order(layouts, ndim, how)


def _exact_layout(a, st, run, leaf):
    """(shape, strides in elements) of a as NumPy has it, size-1 axes' own
    strides included: a's view steps made on an array of its storage's
    strides (an argument's example when sizes are symbolic), or None."""
    import numpy as np
    shape = tuple(st.value.shape)
    strides = st.strides
    if not all(isinstance(n, int) for n in shape):
        ex = run.arg_examples.get(leaf) if leaf is not None else None
        if ex is None:
            return None
        shape, strides = ex
    if strides is None:
        strides = _c_strides(shape)
    if any(s.apply_np is None and s.kind != "bitcast" for s in a._vw):
        return None
    from ._core import np_dtype
    dt = np_dtype(st.value)  # a view with another dtype reads the item size
    v = np.lib.stride_tricks.as_strided(np.zeros(1, dt), shape,
                                        tuple(k * dt.itemsize for k in strides), writeable=False)
    try:
        for s in a._vw:
            v = numpy_view(s, v)
    except (ValueError, IndexError, TypeError):
        return None
    return tuple(v.shape), _layout_of(v) or (0,) * v.ndim


def _offsets_layout(a, st):
    """(shape, strides) of a from its offsets (0 for a size-1 axis), or None.
    A symbolic size (never 0 or 1: those are constants) stands as 2 in a C
    order known without offsets, so that the record holds no symbol."""
    got, _ = _layout_answer(a, st, _strides_of)
    if got is None:
        return None
    shape = tuple(n if isinstance(n, int) else 2 for n in a._t.shape)
    return shape, _c_strides(shape) if got is True else got


def _contiguous(shape, strides):
    """NumPy's (c_contiguous, f_contiguous) of an array of shape and strides
    in elements (size-1 axes and empty arrays ignored)."""
    if any(n == 0 for n in shape):
        return True, True
    def run(axes):
        want = 1
        for d in axes:
            if shape[d] != 1 and strides[d] != want:
                return False
            want *= shape[d]
        return True
    nd = len(shape)
    return run(reversed(range(nd))), run(range(nd))


def decide_order(layouts, ndim, how):
    """The axes of NumPy's new array of ndim dims, outermost in memory first
    (None: C order), from its operands' layouts ((shape, strides) each, in
    elements; 0-d and scalar operands left out), for how NumPy allocates it:
    "iter" its iterator (k_order: a size-1 axis has no say and stays in
    place); "ufunc" a ufunc without where= or out=, which takes its trivial
    loop when every operand has the result's shape and all are C- or all
    F-contiguous (C order for one both C and F; the caller has ruled out
    inputs NumPy casts first), else its iterator; "like" PyArray_NewLikeArray
    of one operand (astype, copy, *_like): C for a C-contiguous one, F for an
    F-contiguous one, else its axes sorted by their own strides, size-1 axes
    included (a stable sort, largest first).  A callable how is a decision
    of its own, how(layouts), of every operand's layout (a scalar's ((), ()))
    in its place: einsum's (_products.einsum_layout)."""
    if callable(how):
        return how(layouts)
    nd_ops = [lay for lay in layouts if len(lay[0])]
    if how == "like" and nd_ops and ndim >= 2 and len(nd_ops[0][0]) == ndim:
        shape, strides = nd_ops[0]
        c, f = _contiguous(shape, strides)
        if c:
            return None
        if f:
            return tuple(reversed(range(ndim)))
        order = tuple(sorted(range(ndim), key=lambda d: -abs(strides[d])))
        return None if order == tuple(range(ndim)) else order
    if how == "ufunc" and nd_ops and ndim >= 2 and \
            all(lay[0] == nd_ops[0][0] and len(lay[0]) == ndim for lay in nd_ops):
        flags = {_contiguous(*lay) for lay in nd_ops}
        if len(flags) == 1 and flags != {(False, False)}:
            return tuple(reversed(range(ndim))) if flags == {(False, True)} else None
    strides = [(0,) * (ndim - len(shape)) + tuple(k if n > 1 else 0 for k, n in zip(st_, shape))
               for shape, st_ in nd_ops]
    return k_order(strides, ndim)


def k_order(strides, ndim):
    """NumPy's iterator's order of ndim axes for operands of these strides
    (in elements, aligned to the ndim dims, 0 where broadcast or of size 1):
    a stable insertion sort from the innermost axis by absolute stride,
    ignoring a zero stride, where operands that disagree leave the C order;
    the axes from the outermost in memory, or None for C order."""
    if not strides:
        return None
    perm = list(range(ndim))  # NumPy's iterator's axes: index k is axis ndim - 1 - k
    for i0 in range(1, ndim):
        ipos, j0 = i0, perm[i0]
        for i1 in range(i0 - 1, -1, -1):
            ambiguous, swap = True, False
            j1 = perm[i1]
            for s in strides:
                s0, s1 = s[ndim - 1 - j0], s[ndim - 1 - j1]
                if s0 != 0 and s1 != 0:
                    if abs(s1) <= abs(s0):
                        swap = False
                    elif ambiguous:
                        swap = True
                    ambiguous = False
            if not ambiguous:
                if not swap:
                    break
                ipos = i1
        if ipos != i0:
            perm[ipos + 1:i0 + 1] = perm[ipos:i0]
            perm[ipos] = j0
    order = tuple(ndim - 1 - perm[k] for k in reversed(range(ndim)))
    return None if order == tuple(range(ndim)) else order


def _layout_of(x):
    return tuple(k // x.itemsize for k in x.strides) if x.itemsize else None


def orders_hold(checks, leaves, memo):
    """Whether every record of checks holds for a call's argument leaves
    (order_holds), remembered in memo (the runner's, bounded) by the leaves'
    shapes and strides, all that the records read."""
    import numpy as np
    key = tuple((x.shape, x.strides) if isinstance(x, np.ndarray) else type(x) for x in leaves)
    got = memo.get(key)
    if got is None:
        got = all(order_holds(check, leaves) for check in checks)
        if len(memo) >= 16:
            memo.clear()
        memo[key] = got
    return got


def order_holds(check, leaves):
    """Whether a new array's order (elementwise_order's record check) is the
    same for a call's argument leaves."""
    import numpy as np
    specs, ndim, want, how = check
    layouts = []
    for spec in specs:
        if spec[0] == "fixed":
            lay = spec[1]
        else:
            x = leaves[spec[1]]
            if not isinstance(x, np.ndarray):
                return False
            if spec[0] == "exact":
                if (None if x.flags.c_contiguous else _layout_of(x)) != spec[2]:
                    return False
                lay = spec[3]
            elif not spec[2]:
                lay = (x.shape, _layout_of(x) or (0,) * x.ndim)  # the argument itself
            else:
                v = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), x.shape,
                                                    _layout_of(x) or (0,) * x.ndim,
                                                    writeable=False)
                try:
                    for s in spec[2]:
                        v = numpy_view(s, v)
                except (ValueError, IndexError, TypeError):
                    return False  # another shape: the shape guards retrace too
                lay = (tuple(v.shape), _layout_of(v) or (0,) * v.ndim)
        if len(lay[0]) > ndim and not callable(how):
            return False
        layouts.append(lay)
    return decide_order(layouts, ndim, how) == want


def numpy_reshape_strides(shape, strides, given, order):
    """The strides (in elements) of NumPy 1.24's view a.reshape(given,
    order) of an array a of this shape and these strides (in elements), or
    None where NumPy copies.  PyArray_Newshape: the shape as given (a -1
    not resolved) equal to a's is a view with a's own strides; an array
    contiguous in the order asked gets that order's strides (sizes 0
    counted as 1); any other tries _attempt_nocopy_reshape, whose size-1
    dims take the strides of the run they join, or the last one's.  (Only
    dims of size 1, and every dim of an empty array, can differ from the
    strides hop's reshape gives a view: the others are fixed by where the
    elements lie.)"""
    shape, given = tuple(shape), tuple(given)
    if given == shape:
        return tuple(strides)
    fo = order == "F"
    n = 1
    for d in shape:
        n *= d
    known = 1
    for d in given:
        known *= d if d != -1 else 1
    new = tuple((n // known if known else 0) if d == -1 else d for d in given)
    if not (_contiguous_in(shape[::-1], strides[::-1]) if fo else
            _contiguous_in(shape, strides)):
        return _nocopy_strides(shape, strides, new, fo)
    out, s = [0] * len(new), 1
    for i in (range(len(new)) if fo else range(len(new) - 1, -1, -1)):
        out[i] = s
        s *= new[i] or 1
    return tuple(out)


def _contiguous_in(shape, strides):
    """NumPy's C-contiguous flag (size-1 dims' strides aside; an empty array
    is contiguous)."""
    if 0 in shape:
        return True
    s = 1
    for d in range(len(shape) - 1, -1, -1):
        if shape[d] != 1:
            if strides[d] != s:
                return False
            s *= shape[d]
    return True


def _nocopy_strides(shape, strides, new, fo):
    """NumPy's _attempt_nocopy_reshape (shape.c), or None (a copy)."""
    od = [d for d in shape if d != 1]
    os_ = [s for d, s in zip(shape, strides) if d != 1]
    ns = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(od):
        np_, op = new[ni], od[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= od[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if (os_[ok + 1] != od[ok] * os_[ok]) if fo else (os_[ok] != od[ok + 1] * os_[ok + 1]):
                return None
        if fo:
            ns[ni] = os_[oi]
            for nk in range(ni + 1, nj):
                ns[nk] = ns[nk - 1] * new[nk - 1]
        else:
            ns[nj - 1] = os_[oj - 1]
            for nk in range(nj - 1, ni, -1):
                ns[nk - 1] = ns[nk] * new[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = ns[ni - 1] if ni >= 1 else 1
    if fo and ni >= 1:
        last *= new[ni - 1]
    for nk in range(ni, len(new)):
        ns[nk] = last
    return tuple(ns)


def reshape_is_view(a, run, shape):
    """Whether NumPy's reshape of a (an array of run) to shape is a view of
    a's memory (True) or a copy (False); None when hop cannot tell (sizes
    known only at run time and a non-contiguous array).  The argument
    layout the answer read is recorded in a's storage: the runner checks it
    on every call once the storage is written (a copy is not)."""
    st = storage_of(a, run)
    n = 1
    for d in shape:
        n *= d
    is_view, leaf = _layout_answer(
        a, st, lambda off: _affine(off.reshape(shape)) if n == off.size else True)
    if leaf is not None:
        st.leaves.add(leaf)
    return is_view


def _c_order(off):
    """Whether offsets off (an ndarray) run base, base + 1, ... in C order:
    NumPy's flags.c_contiguous (size-1 axes and empty arrays are)."""
    import numpy as np
    flat = off.reshape(-1)
    return flat.size <= 1 or bool((flat - flat[0] == np.arange(flat.size)).all())


def c_contiguous(a, run):
    """Whether a (an array of run) is in C order in its memory, as NumPy's
    flags.c_contiguous says; None when hop cannot tell (symbolic sizes and
    a non-contiguous storage, a step that cannot say).  The argument layout
    the answer read is recorded in run.layout, so the runner checks that
    layout on every call."""
    st = storage_of(a, run)
    contiguous, leaf = _layout_answer(a, st, _c_order)
    if contiguous is None:
        contiguous, leaf = _example_flags(a, st, run, 0)
    if leaf is not None:
        run.layout.add(leaf)
    return contiguous


def _example_flags(a, st, run, which):
    """NumPy's contiguity flag `which` (0 C, 1 F) of a view a of an argument
    whose sizes are symbolic, from the argument's example (the caller
    records the argument's layout, which the runner checks on every call),
    and that argument's leaf; (None, None) where hop cannot tell."""
    leaf = st.root[1] if isinstance(st.root, tuple) and st.root[0] == "arg" else None
    if leaf is None or not all(s.apply_np is not None and s.kind != "bitcast" for s in a._vw):
        return None, None
    lay = _exact_layout(a, st, run, leaf)
    return (None, None) if lay is None else (_contiguous(*lay)[which], leaf)


def fortran_only(a, run):
    """NumPy's PyArray_ISFORTRAN of a (an array of run, or an ndarray): its
    elements are in Fortran order in its memory and not in C order, which
    makes order='A' mean 'F'; None when hop cannot tell.  The argument
    layout the answer read is recorded in run.layout (checked every call)."""
    import numpy as np
    if isinstance(a, np.ndarray):
        return a.flags.f_contiguous and not a.flags.c_contiguous
    st = storage_of(a, run)
    # asked as "C order or not Fortran order": _layout_answer's True for a
    # C-ordered root then answers it too
    other, leaf = _layout_answer(a, st, lambda off: _c_order(off) or not _c_order(off.T))
    if other is None:
        c, leaf = _example_flags(a, st, run, 0)
        f, _ = _example_flags(a, st, run, 1)
        other = None if c is None else c or not f
    if leaf is not None:
        run.layout.add(leaf)
    return None if other is None else not other


def last_axis_contiguous(a, run):
    """Whether a's last axis is contiguous in its memory as NumPy's
    ndarray.view(dtype) asks it (a size-1 axis and an empty array are);
    None when hop cannot tell (symbolic sizes and a non-contiguous
    storage).  The argument layout the answer read is recorded in
    run.layout, so the runner checks that layout on every call."""
    if a._t.ndim == 0:
        return True
    n, size = a._t.shape[-1], 1
    for d in a._t.shape:
        size = size * d
    if isinstance(n, int) and n == 1 or isinstance(size, int) and size == 0:
        return True
    st = storage_of(a, run)
    if a._vw and a._vw[-1].kind == "bitcast":
        return True  # a view with another dtype: its last axis is its new items, contiguous
    contiguous, leaf = _layout_answer(
        a, st, lambda off: off.size == 0 or off.shape[-1] == 1 or
        bool((off[..., 1:] - off[..., :-1] == 1).all()))
    if leaf is not None:
        run.layout.add(leaf)
    return contiguous


def root_view(a, run):
    """How NumPy's array a, which the traced function returns, is a view of
    memory the caller holds or of an array the function made: (root, steps)
    with root ("arg", leaf), ("capture", the captured array), ("made", an
    array the function made from constants, made anew per call) or ("out",
    the tensor of an array it computed, the plan's result in its place) and
    steps the view steps from it, for
    the runner to make the same view of the caller's array on every call
    (the plan's result is hop's memory: a copy where hop copied the argument
    on the way in, read-only or with negative strides, or where a step is a
    take); None for an array that is not such a view (or is the root
    itself); False when a step cannot be made again on an ndarray (the
    call then runs eagerly)."""
    st = a._st
    if st is None and not a._scalar and a._tv is not None and \
            any(a._tv is t for t in run.made) and not a._tv.is_contiguous():
        # NumPy's own array the function made, untouched, in a layout of its
        # own (np.zeros(shape, order='F')): made anew per call in it, where
        # the plan's constant result is C-ordered
        return ("made", a), ()
    if st is None or st.run is not run or not a._vw or a._scalar:
        return None  # (a NumPy scalar is a value, not a view)
    if st.root is None:
        # an array the function made from constants (np.arange(6)), which
        # the plan holds as one constant: a new copy of it on every call, as
        # eagerly, and the view of that copy
        if st.version == 0 and any(st.value is t for t in run.made):
            return ("made", st.vw_root), a._vw
        # an array the function computed: the plan's result is the whole
        # array, the view NumPy's of it (the plan gives a view of its own
        # memory as a C-ordered copy: `(a + 1).T`); a reshape of it is C
        # ordered as it is, except without elements (the computed array's
        # strides are zero, its reshape's C strides: plan_gives_view)
        if any(s.kind != "reshape" for s in a._vw) or \
                any(isinstance(n, int) and n == 0 for n in st.value.shape):
            if any(s.apply_np is None and s.kind != "bitcast" for s in a._vw):
                return False
            return ("out", st.value), a._vw
        return None
    if not isinstance(st.root, tuple):
        return None
    if any(s.apply_np is None and s.kind != "bitcast" for s in a._vw):
        return False
    if st.root[0] == "arg":
        return st.root, a._vw
    cap = run.captured.get(st.root[1])
    return (("capture", cap), a._vw) if cap is not None else False


def view_key(a, run):
    """What NumPy's view a, which the traced function returns, is, for
    telling whether two runs (the paths of hop.compile's merged branches)
    return the same view: root_view's root (an argument's leaf, a captured
    array, or "a computed array") with the geometry its steps make of an
    array of the root's shape and memory layout (shape, strides, offset,
    dtype), its read-only flag and type; None when a is not such a view
    (root_view), False when its steps cannot be compared (root_view's
    False, or a root of symbolic size)."""
    import numpy as np
    how = root_view(a, run)
    if not how:
        return how
    (kind, ref), steps = how
    shape = tuple(a._st.value.shape)
    if not all(isinstance(n, int) for n in shape):
        return False
    root = (kind, ref) if kind == "arg" else (kind, id(ref)) if kind == "capture" else (kind,)
    dtype = a._st.value.dtype.dtype
    probe = np.zeros(shape, dtype=dtype)
    if a._st.strides is not None and probe.size:
        el = a._st.strides
        lo = sum((n - 1) * s for n, s in zip(shape, el) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(shape, el) if s > 0)
        buf = np.zeros(hi - lo + 1, dtype=dtype)
        probe = np.lib.stride_tricks.as_strided(
            buf[-lo:], shape, tuple(s * dtype.itemsize for s in el))
    v = probe
    for s in steps:
        v = numpy_view(s, v)
    offset = v.__array_interface__["data"][0] - probe.__array_interface__["data"][0]
    return root, v.shape, v.strides, offset, v.dtype.str, bool(a._ro), type(a)


def plan_gives_view(a, shared):
    """Whether the plan's own result for a, a view of an array the function
    computed (root_view's "out"), is the array NumPy's view is as far as a
    caller can tell, so that the runner need not make the view again from
    the whole array on every call: NumPy's strides of the view are those of
    a C-ordered array of its shape (the plan's result), it is writeable,
    its sizes are fixed, and nothing else the call gives back (another
    result, an effect's value) reaches the computed array, so no write can
    show that the memories differ.  shared: whether another array of the
    result is a (view of) the same storage.  NumPy's strides are those of
    its steps made on an empty array of the computed one's layout (trace
    time only; the K order of that layout is checked per call).  No step
    may take elements (Step.copies): the plan's result is then a view of
    the new array the take made (kept storage, which the VM hands over
    as it is, not copied into C order), with strides of that array's
    layout, not NumPy's (`(a + 1)[:, ::-1][:, 1]` of a Fortran-ordered a:
    NumPy's (8,), the plan's (32,))."""
    st = a._st
    if st is None:
        return False  # (an untouched array the function made: root_view's "made")
    shape, vshape = tuple(st.value.shape), tuple(a._t.shape)
    if shared or a._ro or st.strides is not None or \
            not all(isinstance(n, int) for n in shape + vshape) or \
            any(s.apply_np is None or s.kind == "bitcast" or s.copies for s in a._vw):
        return False
    v = _plan_array(shape, st.value.dtype.dtype)
    for s in a._vw:
        v = numpy_view(s, v)
    if v.base is None or v.shape != vshape:
        return False  # (a step that copies is not a view)
    return v.strides == _plan_array(vshape, v.dtype).strides


def _plan_array(shape, dtype):
    """A plan's new array of shape as the caller gets it: C order, and zero
    strides without elements (NumPy 1.24's new empty array's, whose
    reshape fills in C strides again, a 0 dim counted as 1)."""
    import numpy as np
    v = np.empty(shape, dtype=dtype)
    if v.size or not v.ndim:
        return v
    return np.lib.stride_tricks.as_strided(v, shape, (0,) * v.ndim)


def numpy_view(step, x):
    """View step made on ndarray x, as NumPy makes it (root_view's)."""
    if step.kind == "bitcast":
        return x.view(step.apply.dtype)
    return step.apply_np(x)


# A new number after each eager write of a hop.numpy array (eager_write):
# an eager view that hop made as a copy (ndarray._cp) reads its elements
# again from the array it views when this has changed since it last read
# them (fresh).  (next() of a count: two threads' writes never store one
# number, so a race makes a view read again, never miss a write)
_NUMBERS = itertools.count(1)
WRITES = 0


def eager_write(a, store):
    """Runs store(), the write of concrete array a's memory, and counts it
    (WRITES); for an eager view that hop made as a copy (a._cp: a[::-1],
    np.flip, or a view of such a copy) it first reads a's elements again
    from the array it views, then writes them all back there, so the write
    reaches that array as through NumPy's view (and a[::-1] += 1 is
    NumPy's)."""
    global WRITES
    if a._cp is None or a._ro:
        try:
            store()
        finally:
            WRITES = next(_NUMBERS)
        return
    chain = _copy_chain(a)
    _fill(chain)
    try:
        store()
        for x, base, pos in chain:  # and written back up
            base._tv.numpy().flat[pos] = x._tv.numpy()
    finally:
        WRITES = next(_NUMBERS)
    _read_now(a)


def numpy_may_write():
    """Counts a write NumPy may make to concrete arrays' memory through its
    own view of it (np.asarray(a) handed out, a NumPy function on the
    arrays' memory: an iterator's readwrite operand, a foreign ufunc's
    out=), so that an eager view that hop made as a copy reads its elements
    again at its next read (fresh)."""
    global WRITES
    WRITES = next(_NUMBERS)


def fresh(a):
    """The tensor of eager array a, a view that hop made as a copy (a._cp),
    with its elements read again from the array it views (and that one's
    from its own, up to the memory itself) when an eager write happened
    since it last read them: a read after a write to the base is NumPy's
    (`v = a[::-1]; a[0] = 9; v[-1]` is 9)."""
    if a._cp[2] != WRITES:
        _fill(_copy_chain(a))
        _read_now(a)
    return a._tv


def numpy_of_copy(a):
    """NumPy's own view of the memory for eager array a, a view that hop
    made as a copy (a._cp): the NumPy form of each step made on the NumPy
    array of the memory it views (negative strides and all), so that
    np.asarray(a[::-1]) is NumPy's view, which a later write of the memory
    shows; None when a step has no NumPy form."""
    steps, x = [], a
    while x._cp is not None:
        steps.append(x._cp[1])
        x = x._cp[0]
    if any(s.apply_np is None and s.kind != "bitcast" for s in steps):
        return None
    v = x._t.numpy()
    try:
        for s in reversed(steps):
            v = numpy_view(s, v)
    except ValueError:
        return None  # (NumPy's dtype view of another item size needs a contiguous last axis)
    return v


def _copy_chain(a):
    """The copies on a's way to the memory it views, (copy, its base, the
    flat positions in base of the copy's elements), a's own first."""
    chain, x = [], a
    while x._cp is not None:
        cp = x._cp
        base, step = cp[0], cp[1]
        if step.copies is True:  # (else x is a view of base's memory)
            shape = tuple(base._tv.shape)
            if cp[3] is None or cp[3][0] != shape:
                pos = _C.arange(_size(shape)).reshape(shape) if shape else \
                    _C.arange(1).reshape(())
                cp[3] = (shape, step.apply(pos).numpy())
            chain.append((x, base, cp[3][1]))
        x = base
    return chain


def _fill(chain):
    """Each copy of chain read again from its base, from the memory down."""
    for x, base, pos in reversed(chain):
        x._tv.numpy()[...] = base._tv.numpy().reshape(-1)[pos]  # (a strided base: copied)


def _read_now(a):
    """a and the views on its way to the memory have read their elements
    after every eager write so far."""
    x = a
    while x._cp is not None:
        x._cp[2] = WRITES
        x = x._cp[0]


def _size(shape):
    n = 1
    for d in shape:
        n = n * d
    return n


# NumPy's text for a write into a read-only array, by the start of what
# hop's writer says it is (each writer's own check: PyArray_FailUnlessWriteable
# with the writer's name, the ufunc's output check, the flat iterator's, the
# reductions' and accumulations' iterator, place's WRITEBACKIFCOPY copy)
_READ_ONLY_TEXT = (("ndarray.sort", "sort array is read-only"),
                   ("ndarray.partition", "partition array is read-only"),
                   ("put_along_axis", "assignment destination is read-only"),
                   ("putmask", "putmask: output array is read-only"),
                   ("put", "put: output array is read-only"),
                   ("place", "WRITEBACKIFCOPY base is read-only"),
                   ("ndarray.flat", "underlying array is read-only"),
                   ("fill_diagonal", "underlying array is read-only"),
                   ("reduction out", "operand array with iterator write flag set is read-only"))


def read_only_error(what):
    """The ValueError NumPy raises where the write hop calls what meets a
    read-only array ("assignment destination is read-only" for an item
    assignment, fill, copyto; "output array is read-only" for a ufunc's
    out=)."""
    if what.endswith("(..., out=...)"):
        return ValueError("output array is read-only")
    for start, text in _READ_ONLY_TEXT:
        if what.startswith(start):
            return ValueError(text)
    return ValueError("assignment destination is read-only")


def check_write(a, run, what):
    """Raises what NumPy raises (a read-only view), or the error saying why
    hop cannot reproduce this write; returns a's storage."""
    if a._ro:
        raise read_only_error(what)
    st = storage_of(a, run)
    if st.root == "input":
        raise _C.UnsupportedError(
            f"hop.numpy: {what} writes an operand of a HOP body in place; the body's operands "
            f"are the caller's values, which a body cannot change (write `x = x + ...` or copy "
            f"it first: `x = x.copy()`)")
    if st.ambiguous:
        raise _C.UnsupportedError(
            f"hop.numpy: {what} writes an array that NumPy's reshape made a view of, or copied, "
            f"depending on a layout hop knows only at run time (a non-contiguous array of "
            f"symbolic size); make the copy explicit (`.copy()`) or write before reshaping")
    run.layout |= st.leaves
    if _C._trace_depth() != st.depth:
        raise _C.TraceError(
            f"hop.numpy: {what} writes, inside a HOP body, an array made outside it; a body has "
            f"no effects: return the new value from the body instead")
    if st.root is not None:
        if not run.writeback:
            raise _C.UnsupportedError(
                f"hop.numpy: {what} writes the caller's array in place, which hop cannot do in "
                f"this trace (hop.grad and hop.vmap trace a function without its effects); copy "
                f"it first (`x = x.copy()`)")
        if st.root not in run.slots:
            raise GrowSlots(st.root, st.vw_root)
    return st


def write(a, run, key, value, what, select=None, accumulate=False):
    """The functional write a[key] = value (key None: the whole array) of
    tensor value, already in a's dtype, with NumPy's broadcasting.  select
    (instead of a key) maps the positions of a's elements to those written
    (flat: value is then flat too); accumulate is put's combine: True adds,
    an int is a combine code (NumPy's ufunc.at, _index_routines.ufunc_at)."""
    from ._indexing import index_tensor, whole_key
    st = check_write(a, run, what)
    steps = a._vw if a._st is st else ()
    base = st.value
    part = next((s.kind for s in steps if s.kind in ("real", "imag")), None)
    if part is not None:
        # through c.real / c.imag: the put goes into that part of c's value
        whole, base = base, _C._op(part, base)
    bits = None
    if any(s.kind == "bitcast" for s in steps):
        # through a.view(dtype): the put goes into the base's bits seen in
        # the view's dtype, which are then the base's again (_cast_steps)
        bits, steps = base.dtype, _cast_steps(steps, what)
        base = steps[0].apply(base)
        steps = steps[1:]
    if not steps and select is None and not accumulate and \
            (key is None or whole_key(key, base.ndim)):
        new = broadcast_value(value, tuple(base.shape), base.dtype, what)
    else:
        n = 1
        for d in base.shape:
            n = n * d
        pos = _C.arange(n).reshape(tuple(base.shape)) if base.ndim else _C.arange(1).reshape(())
        for s in steps:
            pos = s.apply(pos)
        if select is not None:
            pos = select(pos)
            v = value
        else:
            if key is not None:
                pos = index_tensor(pos, key)[0]
            v = setitem_value(value, pos, what)
        new = _C._op("put", base, pos, v, accumulate)
    if bits is not None:
        new = _C._op("bitcast", new, bits)
    if part is not None:
        re, im = (new, _C._op("imag", whole)) if part == "real" else (_C._op("real", whole), new)
        new = _C._op("complex", re, im)
    st.value = new
    st.version += 1


def _cast_steps(steps, what):
    """A write's view steps through dtype views (ndarray.view) as the cast
    first, then the steps of positions: a view with the same item size
    reinterprets each element alone, so it commutes with the steps that
    pick elements, and only the last one's dtype counts; one of another
    item size is taken only as the first step (it changes the last axis).
    A part of a complex view (.real/.imag) after a cast is refused."""
    casts = [s for s in steps if s.kind == "bitcast"]
    first = steps.index(casts[0])
    part_of_complex_cast = any(s.kind in ("real", "imag") for s in steps[first + 1:]) and \
        any(s.apply.dtype.kind == "c" for s in casts)
    resized_later = any(s.apply_np is None for s in casts) and (first or len(casts) > 1)
    if part_of_complex_cast or resized_later:
        raise _C.UnsupportedError(
            f"hop.numpy: {what} writes through a view with another dtype (ndarray.view) "
            f"that hop does not trace: a part of a complex view of it, or a view of another "
            f"item size after other views; write the base array, or copy the view first")
    return [casts[-1]] + [s for s in steps if s.kind != "bitcast"]


def broadcast_value(v, shape, dtype, what):
    """v broadcast to shape (NumPy's rule for assignment: leading size-1 dims
    of v may be dropped), as a new tensor of dtype."""
    v = _drop_leading_ones(v, len(shape))
    if tuple(v.shape) != shape:
        try:
            v = v.expand(*shape)
        except (_C.ShapeError, _C.InvalidError):
            raise ValueError(f"could not broadcast input array from shape {tuple(v.shape)} into "
                             f"shape {shape}") from None
        return v.clone() if v.dtype is dtype else v.to(dtype)
    return v.clone() if v.dtype is dtype else v.to(dtype)


def _drop_leading_ones(v, ndim):
    while v.ndim > ndim and v.shape[0] == 1:
        v = v.squeeze(0)
    if v.ndim > ndim:
        raise ValueError(f"could not broadcast input array from shape {tuple(v.shape)} into "
                         f"shape of rank {ndim}")
    return v


def _same_size(d, n):
    """Whether sizes d and n are known to be equal (no decision about an
    unbacked size is made)."""
    if isinstance(d, int) and isinstance(n, int):
        return d == n
    return d is n or (isinstance(d, _C.SymInt) and isinstance(n, _C.SymInt) and
                      d.expr == n.expr)


def setitem_value(v, pos, what):
    """The values for put at positions pos (NumPy's broadcasting of an
    assignment's value to the selected shape).  Where a size is known only
    at run time (a mask's count) and v has as many dims, v goes as it is:
    put checks its element count when it runs, as NumPy checks the count."""
    v = _drop_leading_ones(v, pos.ndim)
    shape = tuple(pos.shape)
    if v.ndim == len(shape) and all(_same_size(d, n) for d, n in zip(v.shape, shape)):
        return v
    lead = len(shape) - v.ndim
    needs_runtime = False
    for d, n in zip(v.shape, shape[lead:]):
        if isinstance(d, int) and d == 1:
            continue
        if _same_size(d, n):
            continue
        if isinstance(d, int) and isinstance(n, int):
            raise ValueError(f"shape mismatch: value array of shape {tuple(v.shape)} could not "
                             f"be broadcast to indexing result of shape {shape}")
        needs_runtime = True
    if needs_runtime:
        if lead == 0 and all(isinstance(d, int) for d in v.shape[1:]) and \
                tuple(v.shape[1:]) == tuple(shape[1:]):
            return v  # one unknown leading size: put compares the counts when it runs
        raise _C.UnsupportedError(
            f"hop.numpy: {what}: the value's shape {tuple(v.shape)} and the selected shape "
            f"{shape} can only be matched when the program runs, in a way hop does not "
            f"support; give the value the selected shape")
    return v.expand(*shape)
