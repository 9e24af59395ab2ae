"""Differential campaign of session 47 (the first rule at hop.compile's
Python boundary, round five): each case is a small program built twice (one
copy called eagerly, one through hop.compile) and called several times with
its state changed between the calls; after every call the result, the
printed text, the warnings, the raised error and the program's state must
be eager's (tests/python/compile_values.py).  Each test says what hop
answered before its fix.

Probed this round and found eager's already (no test of their own here, in
the drawn programs below): a mutable default argument, function attributes,
class-attribute counters, a global itertools.count()/cycle() advanced by
next, heapq/bisect.insort on a global list, deque(maxlen=), array.array
items, struct.pack_into into a global bytearray, io.StringIO writes,
contextlib.redirect_stdout, ContextVar.set, threading.local attributes, an
enum member's method with effects, descriptors' __get__/__set__,
__getattr__ fallbacks, __slots__ objects, weakref.finalize, weakref
callbacks and __del__ of dropped objects, globals()/vars(obj) writes,
exec/eval, sys.getrecursionlimit() changed between calls, id() logic."""


import pytest

from budget import examples
from compile_values import campaign, check_drawn, drawn, warned_outcome


program, check = campaign("s47", outcome=warned_outcome())


# --------------------------------------------------------------- a dict keyed by the user's class

_KEY_CHANGES = {
    # (how D is read, the change made at call 2)
    "eq_method": ("D[K(1)]", "K.__eq__ = _logging_eq"),
    "tuple_key": ("D[(K(1), 'a')]", "K.__hash__ = _logging_hash"),
    "get": ("D.get(K(1), 0.0)", "K.__hash__ = _logging_hash"),
}


@pytest.mark.parametrize("read,change", _KEY_CHANGES.values(), ids=_KEY_CHANGES.keys())
def test_a_dicts_items_keyed_by_the_users_class_are_checked_without_its_hashing(read, change):
    # was: the guards read such an item through its key (`D[k]`), so a plan
    # traced while K's __hash__/__eq__ were pure ran the logging method
    # assigned since in its check, before the class's guard missed (LOG
    # grew by the check's calls too: 'e' or 'h' 8 times on the call after
    # the change, eager's 1 or 2); now the item is found by the key
    # object's identity (_guards._entry), running no code of the user's.
    # (eq_method passed before too: a lookup by the same key object never
    # calls __eq__; tuple_key and get failed)
    key = "(k, 'a')" if "'a'" in read else "k"
    check(f"""
        LOG = []
        class K:
            def __init__(self, n):
                self.n = n
            def __hash__(self):
                return self.n
            def __eq__(self, o):
                return self.n == o.n
        def _logging_hash(self):
            LOG.append('h')
            return self.n
        def _logging_eq(self, o):
            LOG.append('e')
            return self.n == o.n
        k = K(1)
        D = {{{key}: 2.0, K(5): 1.0}}
        def f(x):
            return x * {read}
        def change(i):
            if i == 2:
                {change}
            D[{key}] = float(i + 2)
        def snap():
            return LOG
        """, calls=5, name="key")


def test_an_item_read_by_its_key_objects_identity_fails_the_guard_for_an_equal_new_key():
    # an equal key object put in place of the traced one: the guard misses
    # (a retrace, the same answer), where D[k] through the key passed
    from hop import _guards
    ns = program("""
        class K:
            def __init__(self, n):
                self.n = n
            def __hash__(self):
                return self.n
            def __eq__(self, o):
                return self.n == o.n
        k = K(1)
        D = {k: 2.0}
        """, "entry")
    src = _guards.Source("global", ns, "D", "global 'D'").child("entry", ns["k"])
    assert src.read(()) == 2.0 and repr(src) == "global 'D'[<K key>]"
    del ns["D"][ns["k"]]
    ns["D"][ns["K"](1)] = 2.0
    with pytest.raises(KeyError):
        src.read(())
    ns["D"] = [2.0]
    with pytest.raises(TypeError, match="no longer a dict"):
        src.read(())


# --------------------------------------------------------------- state of the current context

_CONTEXT_VARS = {
    "read": ("x * V.get()", "V.set(i)"),
    "read_default": ("x * V.get(5)", "V.set(i) if i % 2 else None"),
    "read_helper": ("x * _read()", "V.set(2 * i)"),
    "read_and_set": ("x * (V.set(V.get() + 1) is not None) * V.get()", "pass"),
}


@pytest.mark.parametrize("expr,change", _CONTEXT_VARS.values(), ids=_CONTEXT_VARS.keys())
def test_a_context_variable_is_read_on_every_call(expr, change):
    # was: `V.get()` (a read method of a library object) was taken for
    # pure, so it was read once, while tracing: a value set between calls
    # was not seen (0 on every call, eager's 0, 1, 2, 3); now an io effect,
    # a graph break there (`V.set()` in f was eager's already)
    check(f"""
        import contextvars
        V = contextvars.ContextVar('V')
        V.set(0)
        def _read():
            return V.get()
        def f(x):
            return {expr}
        def change(i):
            {change}
        def snap():
            return V.get()
        """, name="ctxvar")


def test_a_context_variable_read_is_a_graph_break_and_the_rest_stays_compiled():
    import hop
    import numpy as np
    ns = program("""
        import contextvars
        V = contextvars.ContextVar('V', default=1.0)
        def f(x):
            y = x * 2.0
            return y + V.get()
        """, "ctxvar_break")
    cf = hop.compile(ns["f"])
    x = hop.tensor(np.arange(3, dtype=np.float32))
    assert cf(x).tolist() == [1.0, 3.0, 5.0]
    ns["V"].set(4.0)
    assert cf(x).tolist() == [4.0, 6.0, 8.0]
    ns["V"].set(-1.5)
    assert cf(x).tolist() == [-1.5, 0.5, 2.5]
    text = cf.explain()
    # (the value read is a float input of the resume: no recompile per value)
    assert "ContextVar.get() may change state hop cannot see" in text, text
    assert "resume at instruction" in text and "its floats are inputs" in text, text
    assert text.count("0 recompile(s)") == 2, text


# --------------------------------------------------------------- a class statement in f

_SET_NAME = {
    "class_body": "class C:\n                d = D()",
    "two": "class C:\n                a = D()\n                b = D()",
    "type_call_free": "C = D()",  # (no class made: no __set_name__)
}


@pytest.mark.parametrize("stmt", _SET_NAME.values(), ids=_SET_NAME.keys())
def test_set_name_of_an_object_made_in_a_class_body_in_f_runs_every_call(stmt):
    # was: the effect finder followed the descriptor's __init__ but not the
    # __set_name__ the class statement calls, so a class made in f with a
    # descriptor whose __set_name__ logs logged once, while tracing (LOG
    # ['d'] after two calls, eager's ['d', 'd'])
    check(f"""
        LOG = []
        class D:
            def __set_name__(self, owner, name):
                LOG.append(name)
        def f(x):
            {stmt}
            return x * len(LOG)
        def snap():
            return LOG
        """, name="set_name")


# --------------------------------------------------------------- a class statement after a break

_AFTER_BREAK = {
    "print": ("print('a')\n            print(float(x.sum()))", "x"),
    "log": ("LOG.append(1)\n            print(float(x.sum()))", "x * len(LOG)"),
    "vars_write": ("vars(H)['v'] = vars(H).get('v', 0) + 1", "x * H.v"),
    "conversion": ("LOG.append(int(x[1]))", "x + LOG[-1]"),
}


@pytest.mark.parametrize("before,ret", _AFTER_BREAK.values(), ids=_AFTER_BREAK.keys())
def test_a_class_statement_after_a_graph_break_runs_the_function_once(before, ret):
    # was (found by this round's drawn programs, seed 47077; so before this
    # session too): the resume after a break that runs in Python (its
    # translation stops at the class statement, LOAD_BUILD_CLASS) ran in
    # the concrete interpreter, which refused the class statement after
    # the break's instruction had run, so f fell back to eager and ran
    # from its start again: 'a' and 3.0 printed twice, LOG [1, 1], H.v 3
    # after the first call (vars(H): a resume eager for its argument, then
    # untranslated, then f's fallback), eager's 1; the concrete interpreter
    # now runs a class statement (builtins.__build_class__)
    check(f"""
        LOG = []
        class Holder:
            pass
        H = Holder()
        def f(x):
            {before}
            class Made:
                m = 1
            return {ret}
        def snap():
            return LOG, vars(H)
        """, calls=3, name="class_after_break")


# --------------------------------------------------------------- drawn: this round's territory

# A program draws one to three statements of this round's territory (each
# giving a number t<k>), beside an effect of f's own or none and, on some
# draws, a graph break, over a hop.Tensor or a NumPy array; change(i) sets a
# context variable, a threading.local's attribute, a class attribute and an
# item of a dict keyed by the user's class between calls (both copies see
# the same state at each call).
_WORLD = """
import array
import bisect
import collections
import contextlib
import contextvars
import enum
import heapq
import io
import itertools
import struct
import sys
import threading
import weakref
LOG, TAPE, HEAP, SORTED = [], [], [], []
Q = collections.deque(maxlen=2)
ARR = array.array('d', [0.0, 0.0])
BUF = bytearray(8)
OUT = io.StringIO()
VAR = contextvars.ContextVar('VAR', default=0)
TLS = threading.local()
TLS.n = 0
CNT = itertools.count()
CYC = itertools.cycle([1, 2, 3])
class Col(enum.Enum):
    R = 1
    G = 2
    def log(self):
        LOG.append(self.name)
        return self.value
class Desc:
    def __set_name__(self, owner, name):
        LOG.append('set_name')
        self.name = '_' + name
    def __get__(self, obj, t=None):
        LOG.append('get')
        return getattr(obj, self.name, 1) if obj is not None else self
    def __set__(self, obj, v):
        LOG.append('set')
        setattr(obj, self.name, v)
class Holder:
    d = Desc()
    k = 1
    def __getattr__(self, name):
        LOG.append(name)
        return 3
class Slot:
    __slots__ = ('n',)
    def __init__(self):
        self.n = 0
class Dying:
    def __del__(self):
        LOG.append('del')
class Key:
    def __init__(self, n):
        self.n = n
    def __hash__(self):
        return self.n
    def __eq__(self, o):
        return self.n == o.n
H, S = Holder(), Slot()
KD = {Key(1): 1, Key(2): 2}
def acc(v, into=[]):
    into.append(v)
    return len(into)
def counted():
    counted.calls += 1
    return counted.calls
counted.calls = 0
def change(i):
    VAR.set(i)
    TLS.n = 10 * i
    Holder.k = i % 2
    KD[Key(1)] = i
def snap():
    return (LOG, TAPE, HEAP, SORTED, list(Q), list(ARR), bytes(BUF), OUT.getvalue(),
            counted.calls, acc.__defaults__[0], H.__dict__, S.n, Holder.k)
"""
_STATEMENTS = [
    "t = acc(1)", "t = counted()", "Holder.k += 1\n    t = Holder.k", "t = next(CNT)",
    "t = next(CYC)", "heapq.heappush(HEAP, -len(HEAP))\n    t = HEAP[0]",
    "bisect.insort(SORTED, 5 - len(SORTED))\n    t = SORTED[0]",
    "Q.append(len(Q) + 1)\n    t = sum(Q)", "ARR[0] += 1.0\n    t = ARR[0]",
    "struct.pack_into('<d', BUF, 0, struct.unpack_from('<d', BUF)[0] + 1)\n    t = BUF[7]",
    "OUT.write('a')\n    t = len(OUT.getvalue())",
    "with contextlib.redirect_stdout(OUT):\n        print('r')\n    t = 1",
    "t = VAR.get()", "VAR.set(VAR.get() + 1)\n    t = VAR.get()", "t = TLS.n",
    "TLS.n += 1\n    t = TLS.n", "t = Col.G.log()", "t = H.d", "H.d = 4\n    t = H.d",
    "class Made:\n        m = Desc()\n    t = 1", "t = H.missing", "S.n += 1\n    t = S.n",
    "o = Dying()\n    o = None\n    t = len(LOG)",
    "o = Holder()\n    weakref.finalize(o, LOG.append, 'fin')\n    del o\n    t = len(LOG)",
    "globals()['G1'] = globals().get('G1', 0) + 1\n    t = G1",
    "vars(H)['v'] = vars(H).get('v', 0) + 1\n    t = H.v",
    "exec('TAPE.append(2)')\n    t = eval('len(TAPE)')", "t = sys.getrecursionlimit() > 100",
    "t = id(H) == id(H)", "t = KD[Key(1)]", "t = KD.get(Key(2), 0)",
]
@pytest.mark.parametrize("chunk", range(2))
def test_drawn_programs_of_this_rounds_territory(chunk):
    # (drew 400 programs while this was written: see docs/RELIABILITY.md,
    # "The forty-seventh session's campaign", for how many differed before
    # this session's fixes and after)
    check_drawn(check, drawn(_WORLD, _STATEMENTS), 47000 + chunk * 1000, examples(10))
