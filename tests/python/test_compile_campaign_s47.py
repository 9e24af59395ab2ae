"""Differential campaign of session 47 (the first rule at hop.compile's
Python boundary, round five): each case is a small program built twice (one
copy called eagerly, one through hop.compile) and called several times with
its state changed between the calls; after every call the result, the
printed text, the warnings, the raised error and the program's state must
be eager's (tests/python/compile_values.py).  Each test says what hop
answered before its fix, or that it was probed and found eager's."""

import pytest

from compile_values import campaign, warned_outcome


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
