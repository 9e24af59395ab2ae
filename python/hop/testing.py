"""Helpers for people writing subgraph-lifting tests.

    gm = hop.trace(f, x, dynamic=True)
    hop.testing.assert_graph_equal(gm, '''
        def forward(s0: "Sym(s0)", x: "f32[s0]"):
            ...
    ''')
    assert hop.testing.placeholders(gm) == {"forward": ["s0", "x"], "wrap_body_0": [...]}
"""

import difflib
import textwrap

__all__ = ["normalize", "assert_graph_equal", "placeholders"]


def normalize(text):
    """normalize(text) -> str

    Graph text (or a GraphModule's code) without common indentation,
    trailing spaces or blank lines at either end, so expected graphs can be
    written indented in a test.

    >>> hop.testing.normalize("\\n    def forward():  \\n        return ()\\n")
    'def forward():\\n    return ()\\n'
    """
    if not isinstance(text, str):
        code = getattr(text, "code", None)
        if not isinstance(code, str):
            raise TypeError(f"hop.testing: expected graph text or a GraphModule, got "
                            f"{type(text).__name__}")
        text = code
    lines = [line.rstrip() for line in textwrap.dedent(text).strip("\n").splitlines()]
    return "\n".join(lines) + "\n"


def assert_graph_equal(actual, expected):
    """assert_graph_equal(actual, expected) -> None

    Asserts that a GraphModule (or graph text) prints as expected (both
    normalized), with a unified diff in the AssertionError otherwise.

    >>> gm = hop.trace(lambda x: x.sin(), hop.ones(2))
    >>> hop.testing.assert_graph_equal(gm, '''
    ...     def forward(x: "f32[2]"):
    ...         sin: "f32[2]" = sin(x)
    ...         return (sin,)
    ... ''')
    """
    a, e = normalize(actual), normalize(expected)
    if a != e:
        diff = "".join(difflib.unified_diff(e.splitlines(True), a.splitlines(True),
                                            "expected", "actual"))
        raise AssertionError("graphs differ:\n" + diff)


def placeholders(gm):
    """placeholders(gm) -> dict

    {graph name: [placeholder names in order]} for gm and every nested
    subgraph.

    >>> w = hop.ones(3)
    >>> gm = hop.trace(lambda x: hop.wrap(lambda: x * w), hop.ones(3))
    >>> hop.testing.placeholders(gm)
    {'forward': ['x', 'w'], 'wrap_body_0': ['x', 'w']}
    """
    if not hasattr(gm, "subgraphs") or not hasattr(gm, "graph"):
        raise TypeError(f"hop.testing.placeholders: expected a GraphModule, got "
                        f"{type(gm).__name__}")
    out = {}

    def walk(m):
        out[m.name] = [n.name for n in m.graph.placeholders]
        for sub in m.subgraphs.values():
            walk(sub)

    walk(gm)
    return out
