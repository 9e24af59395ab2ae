/*
 * hop/vjp.c - vjp(wrt, f, args, cts): f's outputs and the vector-Jacobian
 * product of f at args, through hop_vjp_graph (hop/autodiff.h).  Python's
 * hop.grad, hop.value_and_grad and hop.vjp are built on it.
 *
 * Tracing: f gets a fresh input per args and per cts value (CARRY groups:
 * an input never stands for its operand, so a closure over the same tensor
 * stays a constant of f, as in JAX), then what it lifts; f itself sees only
 * the args.  The traced body is then replaced by its backward graph,
 * `<body>_bwd`, whose inputs follow the call's lists (args, cts, lifted)
 * and whose outputs are f's outputs and then the gradient of each args
 * value whose bit is set in wrt (bit i: args value i).
 *
 * Seeds: with no cts, output 0 must be a float scalar and is seeded with 1
 * (grad; the other outputs are aux values, passed through); with cts, one
 * per output, each with that output's metadata.
 *
 * Lowering and eval are the base's: the call runs its (backward) body.  An
 * eager call with a host function has nothing to differentiate: hop.grad
 * traces f first.
 */
#include "hop/batching.h"
#include "hop/autodiff.h"
#include "hop/eval.h"
#include "hop/lowering.h"

#include <stdio.h>

static hop_status
vjp_check_operands(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->check_operands(c);
    if (st != HOP_OK)
        return st;
    size_t nargs;
    hop_node *const *args = hop_call_group(c, "args", &nargs);
    int64_t wrt = hop_call_param(c, "wrt")->u.i;
    if (wrt < 0 || (nargs < 63 && (wrt >> nargs) != 0))
        return hop_error(HOP_INVALID, "vjp: wrt mask %lld names an argument past the %zu given",
                         (long long)wrt, nargs);
    for (size_t i = 0; i < nargs && i < 63; i++) {
        if (!((wrt >> i) & 1))
            continue;
        const hop_value_info *m = args[i]->meta;
        if (m->kind != HOP_VALUE_TENSOR || !hop_dtype_is_inexact(m->meta.dtype)) {
            char what[128];
            hop_value_info_print(m, what, sizeof what);
            return hop_error(HOP_DTYPE,
                             "vjp: argument %zu (%s: %s) is not a float tensor, so it has no "
                             "gradient",
                             i, args[i]->name, what);
        }
    }
    return HOP_OK;
}

static hop_status
vjp_check_outputs(hop_call *c)
{
    size_t ncts;
    hop_node *const *cts = hop_call_group(c, "cts", &ncts);
    const hop_values *r = &c->results[0];
    char a[128], b[128];
    if (ncts == 0) {
        const hop_value_info *m = r->n ? r->items[0]->meta : NULL;
        if (m == NULL || m->kind != HOP_VALUE_TENSOR || !hop_dtype_is_float(m->meta.dtype) ||
            m->meta.rank != 0) {
            if (m)
                hop_value_info_print(m, a, sizeof a);
            return hop_error(HOP_SHAPE,
                             "grad: the function must return a float scalar (shape ()) to take "
                             "its gradient, got %s",
                             m ? a : "no value");
        }
        return HOP_OK;
    }
    if (ncts != r->n)
        return hop_error(HOP_INVALID, "vjp: %zu cotangents given for %zu outputs", ncts, r->n);
    for (size_t i = 0; i < ncts; i++) {
        const hop_value_info *m = r->items[i]->meta, *t = cts[i]->meta;
        hop_value_info_print(m, a, sizeof a);
        hop_value_info_print(t, b, sizeof b);
        if (m->kind != HOP_VALUE_TENSOR || !hop_dtype_is_inexact(m->meta.dtype))
            return hop_error(HOP_DTYPE, "vjp: output %zu is %s, not a float tensor", i, a);
        bool same;
        hop_status st = hop_value_info_decide_same(hop_output_graph_env(c->og), m, t, "vjp", &same);
        if (st != HOP_OK)
            return st;
        if (!same)
            return hop_error(HOP_SHAPE, "vjp: cotangent %zu is %s but output %zu is %s", i, b, i,
                             a);
    }
    return HOP_OK;
}

typedef struct vjp_build {
    int64_t wrt;
    size_t nargs, ncts;
} vjp_build;

/* The backward graph of fwd (placeholders args, cts, lifted) in out, with
 * the same order of inputs. */
static hop_status
vjp_build_graph(void *ud, const hop_graph *fwd, hop_graph *out)
{
    const vjp_build *vb = ud;
    size_t nph = fwd->nplaceholders, nouts = fwd->output->nargs;
    bool *wrt = hop_calloc(nph + 1, sizeof *wrt);
    hop_ct_kind *cts = hop_calloc(nouts + 1, sizeof *cts);
    hop_status st = wrt && cts ? HOP_OK : HOP_NOMEM;
    for (size_t i = 0; i < vb->nargs && i < 63 && st == HOP_OK; i++)
        wrt[i] = (vb->wrt >> i) & 1;
    for (size_t j = 0; j < nouts && st == HOP_OK; j++)
        cts[j] = vb->ncts ? HOP_CT_INPUT : j == 0 ? HOP_CT_ONE : HOP_CT_NONE;
    if (st == HOP_OK)
        st = hop_vjp_graph(fwd, wrt, cts, out);
    hop_free(wrt);
    hop_free(cts);
    /* f never saw its cts inputs: drop them, and put the cotangent inputs
     * the transformation made (last) in their place. */
    return st == HOP_OK ? hop_graph_replace_placeholders(out, vb->nargs, vb->ncts) : st;
}

static hop_status
vjp_signature(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->signature(c);
    if (st != HOP_OK)
        return st;
    vjp_build vb = {.wrt = hop_call_param(c, "wrt")->u.i};
    hop_call_group(c, "args", &vb.nargs);
    hop_call_group(c, "cts", &vb.ncts);
    return hop_call_replace_body(c, 0, "_bwd", vjp_build_graph, &vb);
}

/* The mask wrt names float tensors among the args, as tracing checked;
 * the rest is the base's (the backward body takes what the call passes and
 * returns its outputs). */
static hop_status
vjp_verify(const hop_node *call)
{
    size_t nargs;
    const hop_arg *args = hop_node_group(call, "args", &nargs);
    int64_t wrt = hop_node_param(call, "wrt")->u.i;
    if (wrt < 0 || (nargs < 63 && (wrt >> nargs) != 0))
        return hop_verify_fail(call, "vjp: wrt mask %lld names an argument past the %zu given",
                               (long long)wrt, nargs);
    for (size_t i = 0; i < nargs && i < 63; i++) {
        const hop_value_info *m = args[i].kind == HOP_ARG_NODE ? args[i].u.node->meta : NULL;
        if (((wrt >> i) & 1) &&
            (m == NULL || m->kind != HOP_VALUE_TENSOR || !hop_dtype_is_inexact(m->meta.dtype)))
            return hop_verify_fail(call,
                                   "vjp: argument %zu is not a float tensor, so it has no "
                                   "gradient",
                                   i);
    }
    return hop_verify_default(call);
}

static hop_status
vjp_eval(hop_eval_ctx *ex)
{
    return hop_eval_traced_only(ex, "differentiate",
                                "hop.grad and hop.vjp trace the function first");
}

const hop_class hop_vjp_class = {
    .name = "vjp",
    .params = {{"wrt", HOP_PARAM_INT},
               {"f", HOP_PARAM_BODY, "vjp_body"},
               {"args", HOP_PARAM_CARRY},
               {"cts", HOP_PARAM_CARRY}},
    .doc = "vjp(wrt, f, args, cts): f(*args)'s outputs, then the gradient of each args value "
           "whose bit is set in the mask wrt, seeded by the cotangents cts (one per output), or "
           "with no cts by 1 at output 0, a float scalar (grad).",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .check_operands = vjp_check_operands,
    .check_outputs = vjp_check_outputs,
    .signature = vjp_signature,
    .output_meta = hop_call_body_output_meta,
    .verify = vjp_verify,
    .eval = vjp_eval,
    /* the call runs its body on what it passes: differentiated through it
     * (grad of grad) */
    .vjp = hop_vjp_bodies,
    .jvp = hop_jvp_bodies,
    .batch = hop_batch_bodies,
};
