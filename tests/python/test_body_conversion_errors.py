"""A conversion of a traced value inside a HOP body (a body is one graph, so
its Python code cannot read one) raises TraceError naming the body, the
user's line and what to do, in hop.trace and in hop.compile (which makes no
graph break inside a body); before, the message named neither."""

import numpy as np
import pytest

import hop


def cond_converts(x):
    return hop.cond(hop.sum(x) > 0, lambda v: v * float(v.sum()), lambda v: v, (x,))


def map_lists(x):
    return hop.map(lambda r: r * len(r.tolist()), x)


LINE = {cond_converts: cond_converts.__code__.co_firstlineno + 1,
        map_lists: map_lists.__code__.co_firstlineno + 1}


@pytest.mark.parametrize("fn,body,what", [(cond_converts, "cond_true_0", "a Python float"),
                                          (map_lists, "map_body_0", "a Python list")])
def test_hop_trace_names_the_body_and_the_line(fn, body, what):
    where = f"test_body_conversion_errors.py:{LINE[fn]}"
    with pytest.raises(hop.TraceError) as e:
        hop.trace(fn, hop.ones(2, 2))
    assert str(e.value).startswith(f"cannot convert a traced value to {what}")
    assert str(e.value).endswith(f" (in {body}, at {where}: a HOP body is one graph, traced "
                                 f"once, so its Python code cannot read a traced value)")
    assert hop._C._trace_depth() == 0


def test_hop_compile_says_it_makes_no_break_inside_a_body():
    cf = hop.compile(cond_converts)
    for _ in range(2):  # (every call: no plan was made)
        with pytest.raises(hop.TraceError, match=r"\(in cond_true_0, at test_body_conversion_"
                                                 r"errors.py:\d+: a HOP body is one graph, "
                                                 r"hop.compile makes no graph break inside one"):
            cf(hop.tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)))


def test_a_conversion_at_the_root_keeps_its_plain_message():
    with pytest.raises(hop.TraceError) as e:
        hop.trace(lambda x: x * float(x.sum()), hop.ones(2))
    assert str(e.value).startswith("cannot convert a traced value to a Python float during "
                                   "tracing")
    assert "HOP body" not in str(e.value)
