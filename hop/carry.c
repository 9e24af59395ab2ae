/*
 * hop/carry.c - helpers for HOPs that carry values through iterations
 * (while_loop, fori_loop, scan, and any loop a user defines): the checks that
 * a carry comes back as it went in and that a condition is a bool scalar,
 * on metadata while tracing (hop/prim_hop.h) and on concrete values in eval
 * (hop/eval.h), with one message in both; the outputs of a loop; the
 * binding of their unbacked symbols.
 */
#include "hop/eval.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- tracing */

hop_status
hop_call_check_pred(hop_call *c, size_t body, const char *fn)
{
    const hop_values *r = &c->results[body];
    char got[128] = "nothing";
    if (r->n != 1)
        return hop_error(HOP_TRACE, "%s: %s must return one bool scalar, got %zu values",
                         c->cls->name, fn, r->n);
    const hop_value_info *v = r->items[0]->meta;
    if (hop_value_info_is_bool_scalar(v))
        return HOP_OK;
    hop_value_info_print(v, got, sizeof got);
    return hop_error(HOP_TRACE, "%s: %s must return a bool scalar, got %s", c->cls->name, fn, got);
}

hop_status
hop_call_check_carries(hop_call *c, size_t body, size_t first, size_t ncarry, const char *fn)
{
    const hop_values *r = &c->results[body];
    if (r->n < ncarry)
        return hop_error(HOP_TRACE, "%s: %s returns %zu value%s for %zu carr%s", c->cls->name, fn,
                         r->n, r->n == 1 ? "" : "s", ncarry, ncarry == 1 ? "y" : "ies");
    hop_shape_env *env = hop_output_graph_env(c->og);
    for (size_t i = 0; i < ncarry; i++) {
        const hop_value_info *in = &c->input_meta[first + i], *out = r->items[i]->meta;
        bool same;
        hop_status st = hop_value_info_decide_same(env, in, out, c->cls->name, &same);
        if (st != HOP_OK)
            return st;
        if (!same) {
            char a[128], b[128];
            hop_value_info_print(in, a, sizeof a);
            hop_value_info_print(out, b, sizeof b);
            return hop_error(HOP_TRACE, "%s: carry %zu enters as %s but %s returns %s",
                             c->cls->name, i, a, fn, b);
        }
    }
    return HOP_OK;
}

hop_status
hop_call_carry_outputs(hop_call *c, size_t first, size_t ncarry, size_t extra)
{
    c->outs = hop_calloc(ncarry + extra + 1, sizeof *c->outs);
    if (c->outs == NULL)
        return hop_error_code();
    hop_shape_env *env = hop_output_graph_env(c->og);
    for (size_t i = 0; i < ncarry; i++) {
        c->outs[i] = c->input_meta[first + i];
        if (c->outs[i].kind == HOP_VALUE_SYM &&
            (c->outs[i].sym = hop_shape_env_unbacked(env, INT64_MIN, INT64_MAX)) == NULL)
            return hop_error_code();
    }
    c->nouts = ncarry;
    return HOP_OK;
}

hop_status
hop_call_bind_outputs(hop_call *c)
{
    for (size_t i = 0; i < c->nouts; i++) {
        hop_node *item = c->outputs->items[c->outputs->n - c->nouts + i];
        if (c->outs[i].kind == HOP_VALUE_SYM &&
            hop_expr_kind_of(c->outs[i].sym) == HOP_EXPR_SYMBOL &&
            hop_symbol_is_unbacked(c->outs[i].sym) &&
            hop_tracer_bound_symbol(c->parent, c->outs[i].sym) == NULL &&
            hop_tracer_bind_value(c->parent, c->outs[i].sym, item) != HOP_OK)
            return hop_error_code();
    }
    return HOP_OK;
}

/* -------------------------------------------------------------- verifying */

hop_status
hop_verify_pred(const hop_node *call, const char *body, const char *fn)
{
    const hop_graph *g = hop_node_body(call, body);
    if (g == NULL)
        return hop_verify_error(call, hop_error_code());
    const hop_arg *a = g->output && g->output->nargs == 1 ? &g->output->args[0] : NULL;
    hop_value_info v = {.kind = HOP_VALUE_NONE};
    if (a && a->kind == HOP_ARG_NODE)
        v = *a->u.node->meta;
    else if (a && a->kind == HOP_ARG_SYM)
        v = (hop_value_info){.kind = HOP_VALUE_SYM, .sym = a->u.sym};
    if (hop_value_info_is_bool_scalar(&v))
        return HOP_OK;
    char got[128];
    hop_value_info_print(&v, got, sizeof got);
    return hop_verify_fail(call, "%s: %s (%s) must return a bool scalar, got %s", call->cls->name,
                           fn, g->name, got);
}

hop_status
hop_verify_carries(const hop_node *call, const char *group, bool more)
{
    size_t n;
    const hop_arg *init = hop_node_group(call, group, &n);
    if (init == NULL)
        return hop_verify_error(call, hop_error_code());
    if (call->nouts < n || (!more && call->nouts != n))
        return hop_verify_fail(call, "%s: has %zu output%s for %zu carr%s", call->cls->name,
                               call->nouts, call->nouts == 1 ? "" : "s", n, n == 1 ? "y" : "ies");
    for (size_t i = 0; i < n; i++) {
        hop_value_info in = {.kind = HOP_VALUE_SYM}; /* an int or a SymInt: any SymInt */
        if (init[i].kind == HOP_ARG_NODE && init[i].u.node->meta->kind == HOP_VALUE_TENSOR)
            in = *init[i].u.node->meta;
        if (hop_value_info_compatible(&in, &call->outs[i]))
            continue;
        char a[128], b[128];
        hop_value_info_print(&in, a, sizeof a);
        hop_value_info_print(&call->outs[i], b, sizeof b);
        return hop_verify_fail(call, "%s: carry %zu enters as %s but leaves as %s", call->cls->name,
                               i, a, b);
    }
    return HOP_OK;
}

/* ------------------------------------------------------------------- eval */

hop_status
hop_eval_pred(hop_eval_ctx *ex, const hop_rt_values *r, const char *fn, bool *out)
{
    const char *hop = hop_eval_class(ex)->name;
    if (r->n != 1)
        return hop_error(HOP_TRACE, "%s: %s must return one bool scalar, got %zu values", hop, fn,
                         r->n);
    const hop_rt_value *v = &r->items[0];
    if (v->kind == HOP_VALUE_TENSOR && v->tensor->dtype == HOP_BOOL &&
        hop_tensor_numel(v->tensor) == 1) {
        int64_t b;
        hop_status st = hop_tensor_item_int(v->tensor, &b);
        *out = b != 0;
        return st;
    }
    char got[96];
    hop_eval_describe(v, got, sizeof got);
    return hop_error(HOP_TRACE, "%s: %s must return a bool scalar, got %s", hop, fn, got);
}

hop_status
hop_eval_check_carries(hop_eval_ctx *ex, const hop_rt_values *r, const hop_rt_value *carry,
                       size_t ncarry, const char *fn)
{
    const char *hop = hop_eval_class(ex)->name;
    if (r->n < ncarry)
        return hop_error(HOP_TRACE, "%s: %s returns %zu value%s for %zu carr%s", hop, fn, r->n,
                         r->n == 1 ? "" : "s", ncarry, ncarry == 1 ? "y" : "ies");
    for (size_t i = 0; i < ncarry; i++) {
        if (hop_eval_same_kind(&carry[i], &r->items[i]))
            continue;
        char a[96], b[96];
        hop_eval_describe(&carry[i], a, sizeof a);
        hop_eval_describe(&r->items[i], b, sizeof b);
        return hop_error(HOP_TRACE, "%s: carry %zu enters as %s but %s returns %s", hop, i, a, fn,
                         b);
    }
    return HOP_OK;
}

/* ------------------------------------------------- transformed bodies */

static hop_status
replace_body(hop_call *c, size_t b, const char *suffix, hop_body_builder build, void *ud, bool keep)
{
    if (b >= c->nbodies || c->graphs[b] == NULL || build == NULL)
        return hop_error(HOP_MISUSE, "%s: hop_call_replace_body: no traced body %zu", c->cls->name,
                         b);
    if (keep && c->nbodies >= HOP_MAX_BODIES)
        return hop_error(HOP_MISUSE, "%s: hop_call_replace_body_keep: %zu bodies already",
                         c->cls->name, c->nbodies);
    char name[256];
    snprintf(name, sizeof name, "%s%s", c->graphs[b]->name, suffix ? suffix : "");
    /* A tracer's graph, so that the OutputGraph owns it; nothing is traced
     * in it: build writes it with the graph builders. */
    hop_tracer *t = hop_output_graph_push(c->og, name);
    if (t == NULL)
        return hop_error_code();
    hop_graph *out = hop_tracer_graph(t);
    hop_status st = build(ud, c->graphs[b], out);
    if (st == HOP_OK && out->nplaceholders != c->graphs[b]->nplaceholders)
        st = hop_error(HOP_MISUSE, "%s: the transformed body %s has %zu inputs, the traced one %zu",
                       c->cls->name, name, out->nplaceholders, c->graphs[b]->nplaceholders);
    if (st != HOP_OK)
        return st; /* the protocol's restore pops t */
    if ((st = hop_output_graph_pop(c->og, t, &out)) != HOP_OK)
        return st;
    if (keep)
        c->graphs[c->nbodies++] = c->graphs[b];
    else
        hop_output_graph_discard(c->og, c->graphs[b]);
    c->graphs[b] = out;
    return HOP_OK;
}

hop_status
hop_call_replace_body(hop_call *c, size_t b, const char *suffix, hop_body_builder build, void *ud)
{
    return replace_body(c, b, suffix, build, ud, false);
}

hop_status
hop_call_replace_body_keep(hop_call *c, size_t b, const char *suffix, hop_body_builder build,
                           void *ud)
{
    return replace_body(c, b, suffix, build, ud, true);
}

hop_status
hop_call_body_output_meta(hop_call *c, size_t b)
{
    const hop_node *o = c->graphs[b]->output;
    c->outs = hop_calloc(o->nargs + 1, sizeof *c->outs);
    if (c->outs == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < o->nargs; i++) {
        if (o->args[i].kind != HOP_ARG_NODE)
            return hop_error(HOP_INVALID, "%s: output %zu of %s is not a value of the graph",
                             c->cls->name, i, c->graphs[b]->name);
        c->outs[i] = *o->args[i].u.node->meta;
    }
    c->nouts = o->nargs;
    return HOP_OK;
}
