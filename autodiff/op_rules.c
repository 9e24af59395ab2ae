/*
 * autodiff/op_rules.c - the op table's autodiff column (placeholder set of
 * rules; the full table replaces it).
 */
#include "autodiff/ad_impl.h"

static hop_status
acc(hop_vjp_ctx *cx, const hop_node *n, size_t i, hop_node *g)
{
    if (g == NULL)
        return hop_error_code();
    if (n->args[i].kind != HOP_ARG_NODE)
        return HOP_OK;
    return hop_vjp_accumulate(cx, n->args[i].u.node, g);
}

static hop_node *
P(hop_vjp_ctx *cx, const hop_node *n, size_t i)
{
    return hop_vjp_primal(cx, n->args[i].u.node);
}

static hop_status
vjp_add(hop_vjp_ctx *cx, const hop_node *n)
{
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    hop_status st = acc(cx, n, 0, ct);
    return st == HOP_OK ? acc(cx, n, 1, ct) : st;
}

static hop_status
vjp_mul(hop_vjp_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_vjp_out(cx);
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    hop_status st = HOP_OK;
    for (size_t i = 0; i < 2 && st == HOP_OK; i++) {
        const hop_arg *o = &n->args[1 - i];
        if (n->args[i].kind != HOP_ARG_NODE || !hop_vjp_active(cx, n->args[i].u.node))
            continue;
        hop_node *d = o->kind == HOP_ARG_NODE    ? hop__ad_op2(g, HOP_OP_mul, ct, P(cx, n, 1 - i))
                      : o->kind == HOP_ARG_FLOAT ? hop__ad_op2c(g, HOP_OP_mul, ct, o->u.f)
                                                 : hop__ad_op2c(g, HOP_OP_mul, ct, (double)o->u.i);
        st = acc(cx, n, i, d);
    }
    return st;
}

static hop_status
vjp_sin(hop_vjp_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_vjp_out(cx);
    return acc(
        cx, n, 0,
        hop__ad_op2(g, HOP_OP_mul, hop_vjp_ct(cx, n, 0), hop__ad_op1(g, HOP_OP_cos, P(cx, n, 0))));
}

static hop_status
vjp_cos(hop_vjp_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_vjp_out(cx);
    return acc(cx, n, 0,
               hop__ad_op2(g, HOP_OP_mul, hop_vjp_ct(cx, n, 0),
                           hop__ad_op1(g, HOP_OP_neg, hop__ad_op1(g, HOP_OP_sin, P(cx, n, 0)))));
}

static hop_status
vjp_sum(hop_vjp_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_vjp_out(cx);
    const hop_node *x = n->args[0].u.node;
    hop_node *ct = hop_vjp_ct(cx, n, 0);
    /* reduced dims back (keepdim false): unsqueeze each, ascending */
    if (!n->args[2].u.b && ct->meta->meta.rank < x->meta->meta.rank) {
        const hop_arg *d = &n->args[1];
        int r = x->meta->meta.rank;
        bool red[HOP_MAX_RANK] = {0};
        if (d->kind == HOP_ARG_NONE || (d->kind == HOP_ARG_LIST && d->u.list.n == 0))
            for (int i = 0; i < r; i++)
                red[i] = true;
        else if (d->kind == HOP_ARG_INT)
            red[(d->u.i + r) % r] = true;
        else
            for (size_t i = 0; i < d->u.list.n; i++)
                red[(d->u.list.items[i].u.i + r) % r] = true;
        for (int i = 0; i < r && ct; i++)
            if (red[i]) {
                hop_arg a[] = {hop_arg_node(ct), hop_arg_int(i)};
                ct = hop_graph_call_op(g, HOP_OP_unsqueeze, a, 2);
            }
    }
    return acc(cx, n, 0, hop__ad_expand(g, ct, &x->meta->meta));
}

static hop_status
jvp_add(hop_jvp_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_jvp_out(cx);
    hop_node *a = n->args[0].kind == HOP_ARG_NODE ? hop_jvp_tangent(cx, n->args[0].u.node) : NULL;
    hop_node *b = n->args[1].kind == HOP_ARG_NODE ? hop_jvp_tangent(cx, n->args[1].u.node) : NULL;
    hop_node *t = a && b ? hop__ad_op2(g, HOP_OP_add, a, b) : a ? a : b;
    t = hop__ad_expand(g, t, &n->meta->meta);
    return t ? hop_jvp_set_tangent(cx, n, 0, t) : hop_error_code();
}

static hop_status
jvp_sin(hop_jvp_ctx *cx, const hop_node *n)
{
    hop_graph *g = hop_jvp_out(cx);
    hop_node *t = hop__ad_op2(g, HOP_OP_mul, hop_jvp_tangent(cx, n->args[0].u.node),
                              hop__ad_op1(g, HOP_OP_cos, hop_jvp_primal(cx, n->args[0].u.node)));
    return t ? hop_jvp_set_tangent(cx, n, 0, t) : hop_error_code();
}

static const hop_op_ad_rule rules[HOP_OP_COUNT] = {
    [HOP_OP_add] = {.vjp = vjp_add, .jvp = jvp_add},
    [HOP_OP_mul] = {.vjp = vjp_mul},
    [HOP_OP_sin] = {.vjp = vjp_sin, .jvp = jvp_sin},
    [HOP_OP_cos] = {.vjp = vjp_cos},
    [HOP_OP_sum] = {.vjp = vjp_sum},
    [HOP_OP_gt] = {.nondiff = true},
    [HOP_OP_lt] = {.nondiff = true},
    [HOP_OP_full] = {.nondiff = true},
    [HOP_OP_zeros] = {.nondiff = true},
    [HOP_OP_ones] = {.nondiff = true},
};

const hop_op_ad_rule *
hop_op_ad(hop_op op)
{
    return (unsigned)op < HOP_OP_COUNT ? &rules[op] : NULL;
}
