"""The forty-fourth session's campaign: rare compositions of the
transformations over programs that nest the HOPs the way the earlier
campaigns do not (tests/python/test_transform_campaign41.py and
test_transform_campaign44.py draw layers at random; these are fixed shapes
of nesting, each a known hard case for a rule):

  cond_in_map_in_scan  a scan whose body maps the rows of (carry, row) and
                       picks a branch per row from that row's data
  dwhile_in_cond       a while_loop with a data-dependent stop (and an int
                       counter carry) inside one branch of a cond
  ascan_in_vmap        associative_scan (mul, then add) under an inner vmap
                       over the rows of stack([x, y])
  invoke_twice         invoke_subgraph called twice with a shared captured
                       weight (one installed body, two call nodes)
  int_bool_carries     fori_loop carrying an int count, a bool flag and two
                       floats, the flag choosing each step's update
  aux                  has_aux: a dict of an int count and a bool beside the
                       loss (non-differentiable outputs)

Compositions, each over a batch of examples (X, Y: f64[B, 3]; B is 0, 1 or
3): vmap(grad), grad(vmap(f).sum()), vmap(jvp(grad)) (the Hessian-vector
product), vmap(grad(grad(f).sum())) (second order), vmap(vmap) with
in_axes (1, 0), vmap(jvp) with in_axes (1, 0) and out_axes 1, grad of a
hop.compile'd function and hop.compile of a grad (also dynamic=True).  The
reference is PyTorch's functorch (torch 1.13) over the same program written
with Python control flow, per example.  Values are compared to 1e-13
relative (to each element, and for an element near zero to 1e-13 of the
result's largest: the forty-eighth session's draw of cond_in_map_in_scan
under hvp, seed 38594, gave -7.049770e-05 as the difference of O(1) terms,
1.4e-17 from torch's, 2e-13 of itself, on the original code too) with nan
and inf positions and signs exact, not bit for bit: sin,
tanh and exp come from different libraries (hop's SLEEF or NumPy's, torch's
own), whose results differ in the last bit now and then, and the derivatives
carry such a difference on (measured: at most 1.3e-14 relative, in
invoke_twice's tanh of a tanh).  The program made of products and sums only
(ascan_in_vmap) is held to torch's bits under every composition, and so is
every composition over an empty batch.  Finite differences (float64,
central, h = 1e-6) check that each torch program is the hop program's
function.  Examples of zero elements (x, y: f64[0]; scan, cond, while_loop and
associative_scan over nothing) give empty results of the composition's shape.
has_aux with a dict of an int, a bool and a float output is
checked under vmap of grad, compiled, dynamic and over a compiled function.

Nothing here found a wrong answer in hop (400 random draws under
HOP_TEST_BUDGET=stress, the forty-fourth session).

The pinned finding of campaign 44 (finding 4 there): grad of jvp wrt y of a
nested cond of exp and div is +-inf in hop where torch gives nan; worked out
by hand, hop is right (test_grad_of_jvp_wrt_y_of_an_overflowing_division_
is_infinite).
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings

import hop
from budget import examples
from transform_values import F64, T, Campaign, grad_of, inputs, lazy_import, t

torch = lazy_import("torch")
functorch = lazy_import("functorch")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

W = np.array([0.75, -1.25, 0.5])
_HW = t(W)


# ------------------------------------------------------------ the programs
# Each: (hop's f(x, y) -> f64[] scalar, torch's), x and y f64[3].

def _h_cond_in_map_in_scan(x, y):
    def row(q):
        return hop.cond(q[0] > 0, lambda: (q[0:1] * q[1:2]).sin(), lambda: q[0:1].tanh() + q[1:2])

    def step(c, r):
        return hop.map(row, hop.stack([c, r], 1)).reshape(3) * 0.5 + c * 0.5, c * r

    c, ys = hop.scan(step, x, hop.stack([y, x * y, y * 0.5]))
    return c.sum() + ys.sum()


def _t_cond_in_map_in_scan(x, y):
    c, ys = x, []
    for r in (y, x * y, y * 0.5):
        q = torch.stack([c, r], 1)
        m = torch.stack([(q[i][0:1] * q[i][1:2]).sin() if bool(q[i][0] > 0)
                         else q[i][0:1].tanh() + q[i][1:2] for i in range(3)]).reshape(3)
        ys.append(c * r)
        c = m * 0.5 + c * 0.5
    return c.sum() + torch.stack(ys).sum()


def _h_dwhile_in_cond(x, y):
    def loop():
        return hop.while_loop(lambda i, v: (i < 6).logical_and((v * v).sum() < 9.0),
                              lambda i, v: (i + 1, v * 1.25 + y * 0.5), (0, x))[1]
    return hop.cond((x * y).sum() > 0, loop, lambda: x * y + 1.0).sin().sum()


def _t_dwhile_in_cond(x, y):
    if bool((x * y).sum() > 0):
        i, v = 0, x
        while i < 6 and bool((v * v).sum() < 9.0):
            i, v = i + 1, v * 1.25 + y * 0.5
    else:
        v = x * y + 1.0
    return v.sin().sum()


def _h_ascan_in_vmap(x, y):
    z = hop.vmap(lambda r: hop.associative_scan(lambda a, b: a + b,
                                                hop.associative_scan(lambda a, b: a * b, r)))(
        hop.stack([x, y]))
    return (z * z).sum()


def _t_ascan_in_vmap(x, y):
    z = torch.stack([_t_cumprod(r).cumsum(0) for r in (x, y)])
    return (z * z).sum()


def _t_cumprod(r):
    out = [r[0]]
    for i in range(1, r.shape[0]):
        out.append(out[-1] * r[i])
    return torch.stack(out)


_region = hop.nested_compile_region(lambda a, b: (a * _HW + b).tanh())


def _h_invoke_twice(x, y):
    return (_region(_region(x, y) * x, y) * y).sum()


def _t_invoke_twice(x, y):
    tw = T(W)
    f = lambda a, b: (a * tw + b).tanh()  # noqa: E731
    return (f(f(x, y) * x, y) * y).sum()


def _h_int_bool_carries(x, y):
    def body(i, carry):
        k, b, h, g = carry
        h2 = hop.where(b, h * y, h.sin() + g * 0.25)
        return (k + (h.sum() > 0).to(hop.int64), b.logical_not(), h2, g * 0.5 + h * 0.125)
    k, b, h, g = hop.fori_loop(0, 4, body, (hop.tensor(0), hop.tensor(True), x, y))
    return (h + g).sum() + k.to(F64) * 0.0 + b.to(F64)


def _t_int_bool_carries(x, y):
    k, b, h, g = 0, True, x, y
    for _ in range(4):
        h, g, k, b = (h * y if b else h.sin() + g * 0.25), g * 0.5 + h * 0.125, \
            k + int(bool(h.sum() > 0)), not b
    return (h + g).sum() + k * 0.0 + float(b)


PROGRAMS = {
    "cond_in_map_in_scan": (_h_cond_in_map_in_scan, _t_cond_in_map_in_scan),
    "dwhile_in_cond": (_h_dwhile_in_cond, _t_dwhile_in_cond),
    "ascan_in_vmap": (_h_ascan_in_vmap, _t_ascan_in_vmap),
    "invoke_twice": (_h_invoke_twice, _t_invoke_twice),
    "int_bool_carries": (_h_int_bool_carries, _t_int_bool_carries),
}


# ------------------------------------------------------- the compositions
# Each: (hop's function of (X, Y): f64[B, 3] each, torch's per example
# (x, y) -> value, stacked over the batch; None: a reference of its own).

def _compositions(hf, tf):
    tg = grad_of(tf)
    return {
        "vmap(grad)": (hop.vmap(hop.grad(hf)), tg),
        "grad(vmap sum)": (lambda X, Y: hop.grad(lambda A: hop.vmap(hf)(A, Y).sum())(X), tg),
        "hvp": (hop.vmap(lambda x, y: hop.jvp(lambda v: hop.grad(hf)(v, y), (x,), (y,))[1]),
                lambda x, y: functorch.jvp(lambda v: tg(v, y), (x,), (y,))[1]),
        "grad(grad)": (hop.vmap(hop.grad(lambda x, y: hop.grad(hf, argnums=1)(x, y).sum())),
                       grad_of(lambda x, y: functorch.grad(tf, argnums=1)(x, y).sum())),
        "vmap(vmap) in_axes (1, 0)": (
            lambda X, Y: hop.vmap(hop.vmap(hop.grad(hf), in_axes=(0, None)), in_axes=(1, 0))(
                hop.stack([X, X * 0.5], 1), hop.stack([Y.sum(0) * 0.5, Y.sum(0) * -0.25])),
            None),
        "vmap(jvp) in_axes (1, 0) out_axes 1": (
            lambda X, Y: hop.vmap(lambda x, y: hop.jvp(lambda b: hop.grad(hf)(x, b), (y,), (x,))[1],
                                  in_axes=(1, 0), out_axes=1)(X.transpose(0, 1), Y),
            None),
        "grad(compile)": (hop.vmap(hop.grad(hop.compile(hf))), tg),
        "compile(grad)": (hop.compile(hop.vmap(hop.grad(hf))), tg),
        "compile(grad) dynamic": (hop.compile(hop.vmap(hop.grad(hf)), dynamic=True), tg),
    }


COMPS = sorted(_compositions(lambda x, y: x.sum(), lambda x, y: x.sum()))


def _reference(comp, tf, X, Y):
    tg = functorch.grad(tf)
    if comp == "vmap(vmap) in_axes (1, 0)":
        # out[i, j] = grad(X_i[j], Y_i) with X_0 = X, X_1 = X * 0.5 and
        # Y_0 = Y.sum(0) / 2, Y_1 = -Y.sum(0) / 4 (the outer batch: 2)
        ys = (T(Y).sum(0) * 0.5, T(Y).sum(0) * -0.25)
        return np.array([[tg(T(X[j] * s), y).numpy() for j in range(len(X))]
                         for s, y in zip((1.0, 0.5), ys)]).reshape(2, len(X), 3)
    if comp.startswith("vmap(jvp)"):
        # the batch at dim 1 of the output
        got = [functorch.jvp(lambda b: tg(T(x), b), (T(y),), (T(x),))[1].numpy()
               for x, y in zip(X, Y)]
        return np.array(got).reshape(len(X), 3).T
    ref = _compositions(lambda x, y: x.sum(), tf)[comp][1]
    return np.array([ref(T(x), T(y)).numpy() for x, y in zip(X, Y)]).reshape(len(X), 3)


CAMPAIGN = Campaign(PROGRAMS, COMPS, lambda comp, hf, tf: _compositions(hf, tf)[comp][0],
                    _reference, rtol=1e-13, atol=None)


def check(prog, comp, seed, batch, exact=False):
    CAMPAIGN.check(prog, comp, seed, batch, "plain", exact)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck))
@given(**CAMPAIGN.draws(batches=(0, 1, 2, 3), modes=None))
@example(prog="cond_in_map_in_scan", comp="hvp", seed=38594, batch=1)
def test_rare_compositions_of_nested_hops_agree_with_functorch(prog, comp, seed, batch):
    check(prog, comp, seed, batch)


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_every_program_under_every_composition_once(prog):
    CAMPAIGN.check_every_composition(prog, seed=7, modes=("plain",))


@pytest.mark.parametrize("comp", COMPS)
def test_products_and_sums_only_give_functorchs_bits(comp):
    # associative_scan of mul then add under vmap: the same multiplications
    # and additions in the same order as torch's loop, no transcendental
    # function, so no tolerance
    check("ascan_in_vmap", comp, 3, 3, exact=True)


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_an_empty_batch_gives_empty_float64_results(prog):
    # B = 0: every composition runs over no examples, the result's shape
    # has the batch dim 0 where the reference's does
    for comp in COMPS:
        check(prog, comp, 0, 0, exact=True)


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_the_torch_programs_are_the_hop_programs_by_value_and_finite_differences(prog):
    # the reference is the same function: equal values, and its gradient
    # agrees with central differences (away from the programs' branch
    # switches: a draw that straddles one is skipped)
    CAMPAIGN.check_reference(prog, 11, 3, rel=1e-14, abs=0, rtol=1e-5, atol=1e-6, hop_grad=True)


def _h_aux(x, y):
    return _h_dwhile_in_cond(x, y), {"n": (x > 0).sum(), "b": (x * y).sum() > 0,
                                     "v": (x * y).tanh()}


def _t_aux(x, y):
    return _t_dwhile_in_cond(x, y), {"n": (x > 0).sum(), "b": (x * y).sum() > 0,
                                     "v": (x * y).tanh()}


@pytest.mark.parametrize("how", ["plain", "compiled", "grad of compiled", "dynamic"])
@pytest.mark.parametrize("batch", [0, 1, 3])
def test_vmap_of_grad_with_a_dict_of_int_bool_and_float_aux(how, batch):
    # has_aux: the aux dict's int count, bool and float come back batched
    # with their dtypes, beside the gradient of the loss
    f = hop.compile(_h_aux) if how == "grad of compiled" else _h_aux
    g = hop.vmap(hop.grad(f, has_aux=True))
    if how == "compiled":
        g = hop.compile(g)
    elif how == "dynamic":
        g = hop.compile(g, dynamic=True)
    X, Y = inputs(5, batch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grads, aux = g(t(X), t(Y))
    tg = functorch.grad(_t_aux, has_aux=True)
    want = [tg(T(x), T(y)) for x, y in zip(X, Y)]
    assert type(aux) is dict and sorted(aux) == ["b", "n", "v"]
    assert grads.dtype == F64 and aux["v"].dtype == F64
    assert aux["n"].dtype == hop.int64 and aux["b"].dtype == hop.bool
    assert aux["n"].shape == (batch,) and aux["b"].shape == (batch,)
    assert aux["v"].shape == (batch, 3) and grads.shape == (batch, 3)
    np.testing.assert_allclose(grads.numpy(), np.array([w[0].numpy() for w in want]).reshape(
        batch, 3), rtol=1e-13, atol=0)
    assert aux["n"].numpy().tolist() == [int(w[1]["n"]) for w in want]
    assert aux["b"].numpy().tolist() == [bool(w[1]["b"]) for w in want]
    # tanh: hop's and torch's may differ in the last bit
    np.testing.assert_allclose(aux["v"].numpy(), np.array([w[1]["v"].numpy() for w in want])
                               .reshape(batch, 3), rtol=1e-15, atol=0)


def test_grad_of_jvp_wrt_y_of_an_overflowing_division_is_infinite():
    # campaign 44's finding 4, worked out by hand.  Per element,
    # f = (exp(2 (exp(2x) - 1)) - 1) / b, b = y^2 + 1/4 (exp, then a cond
    # whose taken branch is exp then div).  The jvp along x is
    # J = x f'(x) with f'(x) = 4 exp(2x) exp(2 (exp(2x) - 1)) / b, and
    # dJ/dy = -x (b f'(x)) 2y / b^2.  For x >= 3 the inner exp(2 e^(2x))
    # overflows: b f'(x) = +inf, so dJ/dy = -sign(x y) inf.  hop gives that;
    # torch's functorch gives nan: its forward rule for a / b is
    # (a_t - b_t (a / b)) / b with b's tangent an instantiated zero, whose
    # backward sends 0 * d(a / b)/db = 0 * -inf into y.  Written as
    # a * (1 / b), the same derivative, torch gives -sign(x y) inf too.
    def hf(h, y):
        h = (h * 2.0).exp() - 1.0
        return hop.cond((h * y).sum() > 0, lambda: ((h * 2.0).exp() - 1.0) / (y * y + 0.25),
                        lambda: h / (y * y + 0.25)).sum()

    def tf(h, y, divide):
        h = (h * 2.0).exp() - 1.0
        h = ((h * 2.0).exp() - 1.0) if bool((h * y).sum() > 0) else h
        return (h / (y * y + 0.25) if divide else h * (1.0 / (y * y + 0.25))).sum()

    X = np.array([[3.0, 3.5, 40.0], [0.5, 1.0, -1.0]])
    Y = np.array([[0.5, -0.25, 0.75], [0.3, 0.6, -0.2]])
    g = hop.vmap(hop.grad(lambda x, y: hop.jvp(lambda a: hf(a, y), (x,), (x,))[1], argnums=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = g(t(X), t(Y)).numpy()
        for row in range(2):
            x, y = T(X[row]), T(Y[row])
            by = {d: functorch.grad(lambda x, y: functorch.jvp(lambda a: tf(a, y, d), (x,), (x,))[1],
                                    argnums=1)(x, y).numpy() for d in (True, False)}
            # row 0 takes the exp branch, which overflows in every element
            if row == 0:
                assert np.isnan(by[True]).all()
                want = -np.sign(X[0] * Y[0]) * np.inf
                assert np.array_equal(got[0], want) and np.array_equal(by[False], want)
            else:
                # the exp branch, no overflow (x < 3): all three agree
                np.testing.assert_allclose(got[1], by[True], rtol=1e-13, atol=0)
                np.testing.assert_allclose(got[1], by[False], rtol=1e-13, atol=0)
    assert np.isfinite(got[1]).all()


def _h_empty_scan_cond_ascan(x, y):
    def step(c, r):
        return hop.cond(c.sum() > 0, lambda: c.sin() * r, lambda: c + r) * 0.5 + c, c * r
    c, ys = hop.scan(step, x, hop.stack([y, x * y]))
    return c.sum() + ys.sum() + hop.associative_scan(lambda a, b: a * b, x).sum()


def _h_empty_while_in_cond(x, y):
    return hop.cond(x.sum() >= 0, lambda: hop.while_loop(
        lambda i, v: i < 3, lambda i, v: (i + 1, v.sin() + y), (0, x))[1], lambda: x).sum() + 1.0


@pytest.mark.parametrize("hf", [_h_empty_scan_cond_ascan, _h_empty_while_in_cond])
@pytest.mark.parametrize("batch", [0, 1, 2])
def test_examples_of_zero_elements_give_empty_float64_results_under_every_composition(hf, batch):
    # x, y: f64[0] per example (scan, cond, while_loop and associative_scan
    # over nothing): each composition's result is empty, shaped as its
    # batch dims say
    X = np.zeros((batch, 0))
    shapes = {"vmap(jvp) in_axes (1, 0) out_axes 1": (0, batch),
              "vmap(vmap) in_axes (1, 0)": (2, batch, 0)}
    for comp in COMPS:
        got = _compositions(hf, None)[comp][0](t(X), t(X))
        assert isinstance(got, hop.Tensor) and got.dtype == F64, comp
        assert got.shape == shapes.get(comp, (batch, 0)), (comp, got.shape)
