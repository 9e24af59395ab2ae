/*
 * hop/jvp.c - jvp(f, primals, tangents): f's outputs at primals and their
 * tangents along tangents (one per primal, each with its metadata),
 * through hop_jvp_graph (hop/autodiff.h).  Python's hop.jvp is built on it.
 *
 * Tracing as vjp's (hop/vjp.c): fresh inputs per primal and per tangent, f
 * sees only the primals; the traced body is replaced by its tangent graph,
 * `<body>_jvp`, whose inputs follow the call's lists (primals, tangents,
 * lifted) and whose outputs are f's outputs and then one tangent per tensor
 * output.  Every primal must be a float tensor.
 */
#include "hop/batching.h"
#include "hop/autodiff.h"
#include "hop/eval.h"
#include "hop/lowering.h"

#include <stdio.h>

static hop_status
jvp_check_operands(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->check_operands(c);
    if (st != HOP_OK)
        return st;
    size_t np, nt;
    hop_node *const *p = hop_call_group(c, "primals", &np);
    hop_node *const *t = hop_call_group(c, "tangents", &nt);
    if (np != nt)
        return hop_error(HOP_INVALID, "jvp: %zu tangents given for %zu primals", nt, np);
    for (size_t i = 0; i < np; i++) {
        char a[128], b[128];
        hop_value_info_print(p[i]->meta, a, sizeof a);
        hop_value_info_print(t[i]->meta, b, sizeof b);
        if (p[i]->meta->kind != HOP_VALUE_TENSOR || !hop_dtype_is_inexact(p[i]->meta->meta.dtype))
            return hop_error(HOP_DTYPE, "jvp: primal %zu (%s: %s) is not a float tensor", i,
                             p[i]->name, a);
        bool same;
        st = hop_value_info_decide_same(hop_output_graph_env(c->og), p[i]->meta, t[i]->meta, "jvp",
                                        &same);
        if (st != HOP_OK)
            return st;
        if (!same)
            return hop_error(HOP_SHAPE, "jvp: tangent %zu is %s but primal %zu is %s", i, b, i, a);
    }
    return HOP_OK;
}

/* The tangent graph of fwd (placeholders primals, tangents, lifted). */
static hop_status
jvp_build_graph(void *ud, const hop_graph *fwd, hop_graph *out)
{
    size_t np = *(const size_t *)ud, nph = fwd->nplaceholders;
    bool *wrt = hop_calloc(nph + 1, sizeof *wrt);
    if (wrt == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < np; i++)
        wrt[i] = true;
    hop_status st = hop_jvp_graph(fwd, wrt, out);
    hop_free(wrt);
    /* f never saw its tangent inputs: the tangent inputs the transformation
     * made (last) take their place. */
    return st == HOP_OK ? hop_graph_replace_placeholders(out, np, np) : st;
}

static hop_status
jvp_signature(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->signature(c);
    if (st != HOP_OK)
        return st;
    size_t np;
    hop_call_group(c, "primals", &np);
    return hop_call_replace_body(c, 0, "_jvp", jvp_build_graph, &np);
}

/* One tangent per primal, as tracing checked (under vmap a primal and its
 * tangent may be batched apart, so their shapes are the body's to agree
 * on); the rest is the base's. */
static hop_status
jvp_verify(const hop_node *call)
{
    size_t np, nt;
    hop_node_group(call, "primals", &np);
    hop_node_group(call, "tangents", &nt);
    if (np != nt)
        return hop_verify_fail(call, "jvp: %zu tangents given for %zu primals", nt, np);
    return hop_verify_default(call);
}

static hop_status
jvp_eval(hop_eval_ctx *ex)
{
    return hop_eval_traced_only(ex, "differentiate", "hop.jvp traces the function first");
}

const hop_class hop_jvp_class = {
    .name = "jvp",
    .params = {{"f", HOP_PARAM_BODY, "jvp_body"},
               {"primals", HOP_PARAM_CARRY},
               {"tangents", HOP_PARAM_CARRY}},
    .doc = "jvp(f, primals, tangents): f(*primals)'s outputs, then one tangent per tensor output "
           "along the tangents (one per primal, each with its metadata).",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .check_operands = jvp_check_operands,
    .signature = jvp_signature,
    .output_meta = hop_call_body_output_meta,
    .verify = jvp_verify,
    .eval = jvp_eval,
    /* the call runs its body on what it passes: differentiated through it
     * (grad of grad) */
    .vjp = hop_vjp_bodies,
    .jvp = hop_jvp_bodies,
    .batch = hop_batch_bodies,
};
