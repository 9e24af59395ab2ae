"""Second derivatives where a partial is infinite, through every HOP.

A zero (co)tangent that a rule instantiates as a tensor of zeros and
multiplies by an infinite partial gives 0 * inf = nan where PyTorch, whose
Python control flow never multiplies a gradient it does not have (None),
gives inf or a finite value.  hop keeps such zeros symbolic through its HOP
rules (docs/AUTODIFF.md, "Symbolic zeros"): an output nothing
differentiates gets no cotangent input (wrap, cond, switch, invoke_subgraph,
map, the loops), an input with no tangent no tangent input, a loop's carry
that no tangent reaches a symbolic zero one after the loop, and a loop's
first step's backward reads the init itself, not the stacked carries.

Each composition runs the step v * v * 0.5 * b (it overflows at v = 1e200)
in every HOP and is compared with functorch over the same program in
Python control flow, exactly (inf and nan positions included).
"""
import math
import warnings

import numpy as np
import pytest

import hop
from transform_values import lazy_import

torch = lazy_import("torch")
tf = lazy_import("functorch")

F64 = hop.float64


def t(a):
    return hop.tensor(np.asarray(a, dtype=np.float64), dtype=F64)


def T(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def step(v, b):
    return v * v * 0.5 * b


def _plain(a, b):
    return step(a, b)


# each HOP running step once (or as its only work), and torch's program
HOPS = {
    "wrap": (lambda a, b: hop.wrap(step, a, b), _plain),
    "invoke_subgraph": (lambda a, b: hop.invoke_subgraph(step, a, b), _plain),
    "cond": (lambda a, b: hop.cond(b.sum() > 0, lambda: step(a, b), lambda: step(a, b) * 2.0, ()),
             lambda a, b: step(a, b) if bool(b.sum() > 0) else step(a, b) * 2.0),
    "switch": (lambda a, b: hop.switch((b.sum() > 0).to(hop.int64),
                                       [lambda v: step(v, b) * 2.0, lambda v: step(v, b)], a),
               lambda a, b: step(a, b) if bool(b.sum() > 0) else step(a, b) * 2.0),
    "map over xs with an arg": (
        lambda a, b: hop.map(lambda r, q: step(r, q).sum(), a, b),
        lambda a, b: torch.stack([step(a[i], b).sum() for i in range(2)])),
    "map over two xs": (lambda a, b: hop.map(lambda r: step(r[0], r[1]), (a, b)), _plain),
    "vmap": (lambda a, b: hop.vmap(step)(a, b), _plain),
    "fori_loop": (lambda a, b: hop.fori_loop(0, 1, lambda i, v: step(v, b), a), _plain),
    "while_loop": (lambda a, b: hop.while_loop(lambda i, v: i < 1,
                                               lambda i, v: (i + 1, step(v, b)), (0, a))[1],
                   _plain),
    "scan": (lambda a, b: hop.scan(lambda c, r: (step(c, b), c), a,
                                   hop.zeros((1, 2), dtype=F64))[0], _plain),
    "associative_scan(add) of the step": (
        lambda a, b: hop.associative_scan(lambda u, w: u + w, step(a, b)),
        lambda a, b: torch.cumsum(step(a, b), 0)),
}


def gg(f, grad, argnums=(0, 1)):
    """d/db of sum(d/da sum(f(a, b))), the first grad taken wrt (a, b): its
    value output is one nothing differentiates."""
    return lambda a, b: grad(lambda u, v: grad(lambda p, q: f(p, q).sum(), argnums=argnums)(
        u, v)[0].sum(), argnums=1)(a, b)


def jg(f, grad, jvp, tb):
    """The jvp along b (which f closes over) of d/da sum(f(a, b))."""
    return lambda a, b: jvp(lambda q: grad(lambda p, r: f(p, r).sum())(a, q), (b,), (tb,))[1]


def hvp(f, grad, jvp, ta):
    return lambda a, b: jvp(lambda p: grad(lambda q, r: f(q, r).sum())(p, b), (a,), (ta,))[1]


def compositions(hf, torch_f):
    tb = [1.0, 2.0]
    return {
        "grad of grad": (gg(hf, hop.grad), gg(torch_f, tf.grad)),
        "jvp of grad along b": (jg(hf, hop.grad, hop.jvp, t(tb)),
                                jg(torch_f, tf.grad, tf.jvp, T(tb))),
        "hvp": (hvp(hf, hop.grad, hop.jvp, t(tb)), hvp(torch_f, tf.grad, tf.jvp, T(tb))),
    }


WANT = {
    # (d/db d/da 0.5 a^2 b = a; along tb: a * tb; d2/da2 along ta: b * ta)
    "grad of grad": [1e200, 3.0],
    "jvp of grad along b": [1e200, 6.0],
    "hvp": [2.0, -2.0],
}


@pytest.mark.parametrize("comp", sorted(WANT))
@pytest.mark.parametrize("kind", sorted(HOPS))
def test_second_order_through_a_hop_whose_partial_overflows_is_torchs(kind, comp):
    hf, torch_f = HOPS[kind]
    h, ref = compositions(hf, torch_f)[comp]
    a, b = [1e200, 3.0], [2.0, -1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = ref(T(a), T(b)).tolist()
        got = h(t(a), t(b)).tolist()
    if HOPS[kind][1] is _plain or kind in ("cond", "switch"):
        assert want == WANT[comp]
    else:  # (a program of its own: torch's answer has no nan)
        assert not any(math.isnan(x) for x in want)
    assert got == want


def test_grad_of_grad_through_a_map_gives_no_cotangent_to_the_value_output():
    # the map's backward body takes no cotangent for the output nothing
    # differentiates (map_body_0_bwd over the rows of a alone), so its
    # partial (0.5 * 1e200^2 = inf) is never multiplied by a zero
    hf = HOPS["map over two xs"][0]
    a, b = t([1e200, 3.0]), t([2.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        gm = hop.trace(gg(hf, hop.grad), a, b)
        assert gm(a, b).tolist() == [1e200, 3.0]
    # (before, it took one for every output, the value's a map over zeros)
    assert ('def map_body_0_bwd_bwd(a: "f64[]", b: "f64[]", mul_2_ct: "f64[]", '
            'add_ct: "f64[]"):') in gm.code


def test_an_output_cotangent_that_is_zero_is_still_zero_where_everything_is_finite():
    # the same programs where nothing overflows: the values of before
    a, b = [0.5, 3.0], [2.0, -1.0]
    for kind in ("map over xs with an arg", "map over two xs"):
        hf, torch_f = HOPS[kind]
        for comp, (h, ref) in compositions(hf, torch_f).items():
            assert h(t(a), t(b)).tolist() == ref(T(a), T(b)).tolist(), (kind, comp)
