"""Transform campaign, round five (forty-seventh session).

Programs not drawn before, each f(x: f64[3], y: f64[3]) -> f64[]:

  cond_scan_map   a cond inside a scan inside a map (two HOPs deep)
  while_mixed     a while_loop carrying an int, an f64 tensor, an i64 tensor
                  and a bool tensor (grad through the float carry only)
  fori_mixed      a fori_loop carrying f64, i64 and bool tensors
  ascan_reverse   associative_scan along a reversed axis (dim 0 and 1; the
                  combine_fns an add and a mul, the differentiable ones)

under compositions not drawn before: the Jacobian forward (jvp over the
basis vectors, vmapped: jacfwd) and reverse (vjp with the cotangent 1:
jacrev), both per example under vmap; grad with respect to x of a vmap
with in_axes (None, 0) (x unbatched, the batch's sum); vmap of the two
arguments' grad.  Each plainly, under hop.compile and as a traced graph
saved, loaded and run again.  Reference: the same program in torch (Python
loops and control flow) differentiated per example by torch.func
(functorch, torch 1.13), itself checked against central finite
differences.

Plus symbolic zeros through a loop or map nested in another HOP: the HOP
class's reach slot (include/hop/class.h), which map and the loops set, lets
hop_ad_reach see that an output of a nested map, scan, fori_loop or
while_loop call is not reached by a tangent, so it keeps a symbolic zero
tangent (an instantiated one met exp's inf after the call: nan where
functorch gives the derivative).
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import hop
from budget import examples
from transform_values import F64, T, Campaign, lazy_import, t, torch_grad

torch = lazy_import("torch")
functorch = lazy_import("functorch")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


# ------------------------------------------------------------ the programs

def _h_cond_scan_map(x, y):
    def row(r):
        def body(c, s):
            c2 = hop.cond(c.sum() > 0, lambda: (c * s).sin() + r * 0.5, lambda: c * 0.75 - s, ())
            return c2, (c2 * y).sum()
        c, ys = hop.scan(body, r, hop.stack([y, y * 0.5, r]))
        return c.sum() + ys.sum()
    return hop.map(row, hop.stack([x, x * y])).sum()
def _t_cond_scan_map(x, y):
    tot = 0.0
    for r in (x, x * y):
        c, acc = r, 0.0
        for s in (y, y * 0.5, r):
            c = (c * s).sin() + r * 0.5 if bool(c.sum() > 0) else c * 0.75 - s
            acc = acc + (c * y).sum()
        tot = tot + c.sum() + acc
    return tot

def _h_while_mixed(x, y):
    def body(i, v, k, b):
        return (i + 1, v * (y * 0.5).cos() + b.to(F64) * 0.25, k + (v > 0).to(hop.int64).sum(),
                b != (v < 0.1))
    i, v, k, b = hop.while_loop(lambda i, v, k, b: (i < 4).logical_and(v.abs().sum() < 50.0),
                                body, (0, x, hop.tensor(1, dtype=hop.int64), x > 0))
    return (v * k.to(F64)).sum() + (v * b.to(F64)).sum() + i * 0.5
def _t_while_mixed(x, y):
    i, v, k, b = 0, x, torch.tensor(1), x > 0
    while i < 4 and bool(v.abs().sum() < 50.0):
        i, v, k, b = (i + 1, v * (y * 0.5).cos() + b.to(torch.float64) * 0.25,
                      k + (v > 0).to(torch.int64).sum(), b != (v < 0.1))
    return (v * k.to(torch.float64)).sum() + (v * b.to(torch.float64)).sum() + i * 0.5

def _h_fori_mixed(x, y):
    def body(i, c):
        v, k, b = c
        return v.tanh() * y + x * 0.5 + b.to(F64), k * 2 + 1, (v * y) > 0
    v, k, b = hop.fori_loop(0, 3, body, (x * 1.0, hop.tensor(0, dtype=hop.int64), y > 0))
    return (v * (1.0 + 0.125 * k.to(F64))).sum() + (v * v * b.to(F64)).sum()
def _t_fori_mixed(x, y):
    v, k, b = x * 1.0, 0, y > 0
    for _ in range(3):
        v, k, b = v.tanh() * y + x * 0.5 + b.to(torch.float64), k * 2 + 1, (v * y) > 0
    return (v * (1.0 + 0.125 * k)).sum() + (v * v * b.to(torch.float64)).sum()

def _h_ascan_reverse(x, y):
    m = hop.stack([x, y, x * y])                            # [3, 3]
    a = hop.associative_scan(lambda p, q: p + q, m.sin(), dim=0, reverse=True)
    b = hop.associative_scan(lambda p, q: p * q, m.cos() + 0.5, dim=1, reverse=True)
    return (a * b * m).sum()
def _t_ascan_reverse(x, y):
    m = torch.stack([x, y, x * y])
    a = m.sin().flip(0).cumsum(0).flip(0)
    b = (m.cos() + 0.5).flip(1).cumprod(1).flip(1)
    return (a * b * m).sum()

PROGRAMS = {"cond_scan_map": (_h_cond_scan_map, _t_cond_scan_map),
            "while_mixed": (_h_while_mixed, _t_while_mixed),
            "fori_mixed": (_h_fori_mixed, _t_fori_mixed),
            "ascan_reverse": (_h_ascan_reverse, _t_ascan_reverse)}


# -------------------------------------------------------- the compositions
# Each: (hop's function of X, Y: f64[B, 3], the reference: a NumPy array
# from torch.func per example).

EYE = np.eye(3)


def _jacfwd(hf):
    def per(x, y):
        def along(ex, ey):
            return hop.jvp(hf, (x, y), (ex, ey))[1]
        return hop.cat([hop.vmap(along, in_axes=(0, None))(t(EYE), y * 0.0),
                        hop.vmap(along, in_axes=(None, 0))(x * 0.0, t(EYE))])
    return hop.vmap(per)


def _jacrev(hf):
    def per(x, y):
        v, back = hop.vjp(hf, x, y)
        gx, gy = back(v * 0.0 + 1.0)
        return hop.cat([gx, gy])
    return hop.vmap(per)


COMPOSITIONS = {
    "jacfwd": _jacfwd,
    "jacrev": _jacrev,
    "vmap(grad)": lambda hf: lambda X, Y: hop.cat(hop.vmap(hop.grad(hf, argnums=(0, 1)))(X, Y), 1),
    "grad wrt x of vmap in_axes (None, 0) sum": lambda hf: lambda X, Y: hop.grad(
        lambda x0: hop.vmap(hf, in_axes=(None, 0))(x0, Y).sum())(X[0] * 0.5 + 0.25),
}
COMPS = sorted(COMPOSITIONS)


def _reference(comp, tf, X, Y):
    if comp.startswith("grad wrt x"):
        x0 = X[0] * 0.5 + 0.25
        return np.sum([torch_grad(tf, x0, y)[:3] for y in Y], axis=0)
    return np.array([torch_grad(tf, x, y) for x, y in zip(X, Y)]).reshape(len(X), 6)


CAMPAIGN = Campaign(PROGRAMS, COMPS, lambda comp, hf, tf: COMPOSITIONS[comp](hf), _reference,
                    lo=1.5, rtol=1e-11, atol=1e-12)


@settings(max_examples=examples(12), deadline=None, suppress_health_check=list(HealthCheck))
@given(**CAMPAIGN.draws())
def test_round_five_compositions_agree_with_functorch(prog, comp, seed, batch, mode):
    CAMPAIGN.check(prog, comp, seed, batch, mode)


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_every_program_under_every_composition_once(prog):
    CAMPAIGN.check_every_composition(prog)


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_the_torch_programs_are_the_hop_programs_by_value_and_finite_differences(prog):
    CAMPAIGN.check_reference(prog, 5, 3, abs=1e-13, rtol=1e-5, atol=1e-6)


# --------------------------------- symbolic zeros through a nested map or loop

def _pair(r, y):
    return (r * 2.0).exp(), r / y


def _tail(a, b):
    return ((a * 2.0).exp() + b).sum()


NESTED = {
    "scan's ys in wrap": lambda x, y: _tail(*hop.wrap(
        lambda z: hop.scan(lambda c, r: (c, _pair(r, y)), z[0] * 0.0, z)[1], x)),
    "scan's carries in wrap": lambda x, y: _tail(*hop.wrap(
        lambda z: hop.scan(lambda c, r: (_pair(z, y), r), (z, z), z)[0], x)),
    "fori_loop in wrap": lambda x, y: _tail(*hop.wrap(
        lambda z: hop.fori_loop(0, 2, lambda i, c: (c[0], c[1] * 0.0 + z / y), _pair(z, y)), x)),
    "while_loop in invoke_subgraph": lambda x, y: _tail(*hop.invoke_subgraph(
        lambda z: hop.while_loop(lambda a, b: (a.sum() < 0.0), lambda a, b: (a, b),
                                 _pair(z, y)), x)),
    "map in map's body in cond": lambda x, y: hop.cond(
        x.sum() > 0, lambda: _tail(*hop.wrap(lambda z: hop.map(
            lambda r: hop.map(lambda s: _pair(s, y), r), z), x[None])), lambda: x.sum(), ()),
    # (forty-eighth session: vmap's reach slot, hop_ad_reach_bodies)
    "vmap in wrap": lambda x, y: _tail(*hop.wrap(
        lambda z: hop.vmap(lambda r: _pair(r, y))(z), x)),
    "vmap in_axes (0, None) in invoke_subgraph": lambda x, y: _tail(*hop.invoke_subgraph(
        lambda z: hop.vmap(_pair, in_axes=(0, None))(z, y), x)),
    # (associative_scan's: its combine_fn reads y through a comparison only)
    "associative_scan in wrap": lambda x, y: _tail(*hop.wrap(lambda z: _ascan_pair(z, y), x)),
}


def _ascan_pair(r, y):
    a = hop.associative_scan(lambda p, q: hop.where(y.sum() > 0.0, p.maximum(q), p + q),
                             (r * 2.0).exp())
    return a, r / y

XN = [[200.0, 3.0], [1.0, 2.0]]
YN = [0.5, -0.5]


def test_the_nested_programs_reference_is_functorchs_derivative():
    v, dv = functorch.jvp(lambda b: _tail(*_pair(T(XN), b)), (T(YN),), (T(YN),))
    assert np.isinf(float(v)) and float(dv) == -392.0
    # associative_scan's program: torch's cumulative sum (y.sum() is 0)
    v, dv = functorch.jvp(lambda b: _tail((T(XN) * 2.0).exp().cumsum(0), T(XN) / b), (T(YN),),
                          (T(YN),))
    assert np.isinf(float(v)) and float(dv) == -392.0


@pytest.mark.parametrize("mode", ["plain", "compiled"])
@pytest.mark.parametrize("name", sorted(NESTED))
def test_an_output_no_tangent_reaches_through_a_nested_loop_or_map_keeps_a_symbolic_zero(
        name, mode):
    def f(x, y):
        return hop.jvp(lambda b: NESTED[name](x, b), (y,), (y,))
    if mode == "compiled":
        f = hop.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v, dv = f(t(XN), t(YN))
    assert np.isinf(float(v))
    assert float(dv) == -392.0


@pytest.mark.parametrize("flip", [False, True])
def test_an_associative_scan_no_tangent_reaches_has_none_whatever_its_combine_fn(flip):
    # combine_fn reads y through a comparison only: no tangent or cotangent
    # reaches the scan's output, so its rules have nothing to do (before:
    # UnsupportedError, the combine_fn is no single add/mul/max/min)
    x, y = np.array([[0.5, -1.0], [1.5, 0.25], [-2.0, 1.0]]), np.array([0.75, -0.5])
    y = -y if flip else y

    def h(x, b):
        a, d = _ascan_pair(x, b)
        return (a * d).sum()

    def tt(x, b):
        e = (x * 2.0).exp()
        return ((e.cummax(0).values if bool(b.sum() > 0) else e.cumsum(0)) * (x / b)).sum()
    jv = hop.jvp(lambda b: h(t(x), b), (t(y),), (t(x[0]),))
    want = functorch.jvp(lambda b: tt(T(x), b), (T(y),), (T(x[0]),))
    # (exp: hop's is NumPy's, torch's glibc's, a last bit apart)
    assert float(jv[0]) == float(h(t(x), t(y)))
    np.testing.assert_allclose([float(v) for v in jv], [float(v) for v in want], rtol=1e-14)
    g = hop.grad(h, argnums=1)(t(x), t(y))
    np.testing.assert_allclose(g.numpy(), functorch.grad(tt, argnums=1)(T(x), T(y)).numpy(),
                               rtol=1e-14)
    # a combine_fn y reaches through its arithmetic: refused as before
    with pytest.raises(hop.UnsupportedError, match="associative_scan .* has no jvp rule"):
        hop.jvp(lambda b: hop.associative_scan(lambda p, q: p * q + b, t(x)).sum(), (t(y),),
                (t(y),))


def test_a_carry_a_tangent_reaches_only_on_a_later_step_is_reached():
    # c1 takes y's tangent in step 1, c0 only in step 2 (from c1): the
    # loop's reach is a fixed point over the carries, so the wrap's output 0
    # keeps its tangent (not a symbolic zero)
    def h(x, y):
        a, b = hop.wrap(lambda z: hop.fori_loop(0, 2, lambda i, c: (c[1], z * y), (z, z)), x)
        return (a * b).sum()
    def tt(x, y):
        a, b = x, x
        for _ in range(2):
            a, b = b, x * y
        return (a * b).sum()
    x, y = np.array([0.5, -1.5]), np.array([2.0, 0.25])
    got = hop.jvp(lambda b: h(t(x), b), (t(y),), (t(x),))[1]
    want = functorch.jvp(lambda b: tt(T(x), b), (T(y),), (T(x),))[1]
    assert float(got) == float(want) and float(want) != 0.0


# ------------------- the s45 switch xfail: torch.func's batched form agrees

def _t_where_div_exp(h, y):
    # the switch as torch.func can batch it (functorch refuses vmap of the
    # Python if: a data-dependent bool of a batched tensor): both branches
    # computed, one selected per example
    k = (h.sum() > 0).to(torch.int64) + (y.sum() > 0).to(torch.int64)
    h = torch.where(k < 2, h / (y * y + 0.25), (h * 2.0).exp() - 1.0)
    return ((h * 2.0).exp() - 1.0).sum()


def test_vmap_of_jvp_of_a_switch_is_torch_funcs_of_its_batched_select():
    # Decision (forty-seventh session) on
    # test_transform_campaign_s45::test_jvp_of_a_switch_whose_taken_branch_
    # ignores_the_tangent_is_torchs_zero: its 0.0 is torch's Python if run
    # one example at a time; torch.func's own batched form of the switch
    # gives nan for that example too (an instantiated zero tangent of the
    # branch that ignores y times exp's inf), as JAX's switch and hop do.
    import test_transform_campaign_s45 as c45
    got = hop.vmap(lambda x, y: hop.jvp(lambda b: c45._h_switch_div_exp(x, b), (y,), (x,))[1])(
        t(c45._X2), t(c45._Y2))
    want = functorch.vmap(lambda x, y: functorch.jvp(lambda b: _t_where_div_exp(x, b), (y,),
                                                     (x,))[1])(T(c45._X2), T(c45._Y2))
    assert np.isnan(want[0].item()) and np.isnan(got.numpy()[0])
    assert got.numpy()[1] == pytest.approx(want[1].item(), rel=1e-13)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        functorch.vmap(lambda x, y: functorch.jvp(lambda b: c45._t_switch_div_exp(x, b), (y,),
                                                  (x,))[1])(T(c45._X2), T(c45._Y2))
