"""conftest.py's heap_frozen: what the process held before the case is out
of the collector's reach, what the case makes is collected as before."""
import gc
import weakref


class Node:
    pass


def test_heap_frozen_leaves_the_cases_own_cycles_to_the_collector(heap_frozen):
    assert gc.get_freeze_count() > 1000  # (the suite's modules at least)
    before = gc.get_objects()  # (a walk of the generations: none of it frozen)
    n = Node()
    n.me = n
    dead = weakref.ref(n)
    del n
    assert gc.collect() >= 1
    assert dead() is None
    assert len(before) < gc.get_freeze_count()


def test_without_it_nothing_is_frozen():
    assert gc.get_freeze_count() == 0
