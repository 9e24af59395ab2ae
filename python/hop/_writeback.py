"""What a traced function writes in place into its arguments and captured
hop.numpy arrays, copied back into the caller's arrays after each call
(_WriteBack), and the layout and identity tests it compares them by."""

import sys

from . import _C

try:
    import numpy as _np
except ImportError:  # NumPy is optional at run time
    _np = None


class SharedWrite(_C.UnsupportedError):
    """The traced call writes an argument or captured array in place that
    shares memory with another array input (_WriteBack.check): hop traces
    them as separate arrays, so it cannot reproduce NumPy's aliasing.
    hop.trace raises it (an UnsupportedError); hop.compile runs such a call
    eagerly, as NumPy would run it (fullgraph=True raises), when one of
    the two is an argument (arg); two arrays of its environment (a global
    and its view) stay its error.  what: which arrays, in words.  pair:
    (the written argument leaf, the other) when both are arguments, which
    hop.compile keeps to recognise the next such call without a trace
    (shares_memory); else None."""

    def __init__(self, message, what, arg, pair=None):
        super().__init__(message)
        self.what = what
        self.arg = arg
        self.pair = pair


def shares_memory(leaves, pair):
    """Whether the argument leaves at pair (SharedWrite.pair) are arrays
    (ndarrays, hop.Tensors: a hop.numpy array's leaf is its tensor) that
    share memory."""
    xs = []
    for i in pair:
        x = leaves[i]
        if isinstance(x, _C.Tensor):
            x = x.numpy()
        if _np is None or not isinstance(x, _np.ndarray):
            return False
        xs.append(x)
    return bool(_np.may_share_memory(*xs) and _np.shares_memory(*xs))


def _same_array(x, y):
    """Whether ndarrays x and y are one array's memory: the same items at
    the same addresses (a capture over an environment ndarray and that
    ndarray)."""
    return x.__array_interface__["data"][0] == y.__array_interface__["data"][0] and \
        x.shape == y.shape and x.strides == y.strides and x.dtype == y.dtype


def _layout(x):
    """An array's layout as _WriteBack compares it between calls."""
    if isinstance(x, _C.Tensor):
        x = x.numpy()
    return True if x.flags.c_contiguous else tuple(s // x.itemsize for s in x.strides)


class _WriteBack:
    """The arguments and captured hop.numpy arrays a traced function writes
    in place (hop.numpy._storage): the plan's last outputs are their final
    values (then the captured ones' own tensors, which only locate them
    among the captured inputs), which each call copies into the caller's
    memory after the plan has run.  NumPy's aliasing between the plan's
    inputs is not traced (each is its own input, read when the plan starts),
    so a written argument or captured array that shares memory with another
    array input (an argument, or a global's or closed-over array: the same
    object or a view of it, which may differ from call to call) is refused,
    when traced and on every call; so is a call whose argument layout
    differs from the one a view-or-copy decision read (NumPy's reshape views
    memory or copies it by its layout)."""

    def __init__(self, slots, slot_arrays, tr, leaves, runs, traced, writes, env_sources=None,
                 alias=None):
        self.slots = slots
        # argument leaves that are an earlier leaf's object, one input of
        # the plan (_trace._aliases): no memory of their own to compare
        self.alias = alias or {}
        # results that are a written argument itself (`x += 1; return x`):
        # the caller's array is returned, as NumPy's in-place code returns it
        self.returns = {j: k[1] for j, x in enumerate(traced) for k, w in zip(slots, writes)
                        if k[0] == "arg" and x is w and _np is not None and
                        isinstance(leaves[k[1]], _np.ndarray)}
        caps = list(tr.captures)
        self.targets = []
        ncap = sum(1 for k in slots if k[0] == "capture")
        for k in slots:
            if k[0] == "arg":
                self.targets.append(("arg", k[1]))
            else:
                t = slot_arrays[k]._tv
                self.targets.append(("capture", next(j for j, c in enumerate(caps) if c is t)))
        self.nextra = len(slots) + ncap
        self.layout = {}
        for run in runs:
            for i in run.layout:
                self.layout[i] = _layout(leaves[i])
        names = tr.placeholder_names(())
        self.capture_names = names[len(names) - len(caps):] if caps else []
        self._cap_memory = (None, None)  # (captured tensors, their ndarrays)
        self.env = []  # (source, ndarray) the guards hold by identity (environment)
        # capture -> the source of the environment ndarray it is the memory
        # of (_frame_state._env_array), which a refusal names
        self.viewed = {j: env_sources[id(_C._base(t))] for j, t in enumerate(caps)
                       if env_sources and id(_C._base(t)) in env_sources}
        self.check(leaves, _C.UnsupportedError, caps, keep=False)

    def environment(self, guards, leaves, captured):
        """Adds the ndarrays the function reads from its globals and cells
        (held by identity: NumPy computes with them while tracing, so what it
        read of them is in the plan) to the inputs a write must not share
        memory with, and checks the traced call again."""
        self.env = [(g.source, g.expected) for g in guards.guards
                    if g.kind == "id" and isinstance(g.expected, _np.ndarray)]
        if self.env:
            self.check(leaves, _C.UnsupportedError, captured, keep=False)

    def _memory(self, leaves, captured, keep):
        """(what, ndarray) of every array input of the plan: the arguments'
        (ndarrays, the tensors of hop.numpy arrays), then the captured
        tensors' (their ndarrays made once per set of captures when keep:
        not while traced, where the references a capture has tell whether
        the function made it, _guards.made_captures)."""
        out = [(("arg", i), x if isinstance(x, _np.ndarray) else x.numpy())
               for i, x in enumerate(leaves)
               if isinstance(x, (_np.ndarray, _C.Tensor)) and i not in self.alias]
        seen, views = self._cap_memory
        if seen is not captured:
            views = [t.numpy() for t in captured]
            if keep:
                self._cap_memory = (captured, views)
        out.extend((("capture", j), v) for j, v in enumerate(views))
        out.extend((("env", j), a) for j, (_, a) in enumerate(self.env))
        return out

    def _what(self, k):
        if k[0] == "arg":
            return f"argument {k[1]}"
        if k[0] == "env":
            return f"the ndarray {self.env[k[1]][0]!r} the function reads"
        if k[1] in self.viewed:
            return f"the ndarray {self.viewed[k[1]]!r} the function reads"
        return f"the captured array {self.capture_names[k[1]]} (a global's or closed-over array)"

    def check(self, leaves, error, captured, keep=True):
        """Raises error when a written argument or captured array shares
        memory with another array input, or a layout a decision read has
        changed."""
        if _np is not None:
            memory = self._memory(leaves, captured, keep)
            where = dict(memory)
            for k in self.targets:
                x = where[k]
                if not x.flags.writeable:
                    # (traced writeable: the trace again, where the write
                    # raises NumPy's error, before anything happened)
                    raise _C.GuardError(f"guard failed: the traced function writes "
                                        f"{self._what(k)} in place, which is read-only now")
                for j, y in memory:
                    if j[0] == "env" and k[0] == "capture" and k[1] in self.viewed and \
                            _same_array(x, y):
                        continue  # (the capture is that ndarray's memory: one input)
                    if j != k and _np.may_share_memory(x, y) and _np.shares_memory(x, y):
                        what = f"{self._what(j)} sharing memory with {self._what(k)} (the " \
                               f"function writes {self._what(k)} in place)"
                        text = f"hop.numpy: the traced function writes {self._what(k)} in " \
                               f"place, which shares memory with {self._what(j)}; hop traces " \
                               f"them as separate arrays, so it cannot reproduce NumPy's " \
                               f"aliasing between them (pass copies, or write a copy)"
                        pair = (k[1], j[1]) if j[0] == k[0] == "arg" else None
                        raise SharedWrite(text, what, "arg" in (j[0], k[0]), pair) \
                            if error is _C.UnsupportedError else error(text)
        for i, want in self.layout.items():
            if _layout(leaves[i]) != want:
                raise error(f"guard failed: argument {i} has another memory layout than when "
                            f"traced, which decides what NumPy does with it (whether a reshape "
                            f"of it that the function writes through is a view, or whether "
                            f"ndarray.view with another item size raises)")

    def apply(self, results, leaves, captured):
        """Copies the written values into the caller's memory; the results
        without them."""
        n = len(results) - self.nextra
        for j, (kind, ref) in enumerate(self.targets):
            val = results[n + j]
            dst = leaves[ref] if kind == "arg" else captured[ref]
            if isinstance(dst, _C.Tensor):
                dst = dst.numpy()
            src = val.numpy()
            if src.ctypes.data == dst.ctypes.data and src.strides == dst.strides:
                continue  # the plan handed the input back: nothing to write
            dst[...] = src
        if self.targets:
            # an eager hop.numpy view made as a copy of a written array
            # (`v = G[::-1]` held by the caller) reads its elements again
            # (it kept the values before the call: found by the forty-fifth
            # session)
            st = sys.modules.get("hop.numpy._storage")
            if st is not None:
                st.numpy_may_write()
        results = results[:n]
        for j, i in self.returns.items():
            results[j] = leaves[i]
        return results
