/*
 * autodiff/emit.c - the emitting helpers of autodiff/ad_impl.h.
 */
#include "autodiff/ad_impl.h"

hop_node *
hop__ad_op1(hop_graph *g, hop_op op, hop_node *x)
{
    if (x == NULL)
        return NULL;
    hop_arg a[] = {hop_arg_node(x)};
    return hop_graph_call_op(g, op, a, 1);
}

hop_node *
hop__ad_op2(hop_graph *g, hop_op op, hop_node *a, hop_node *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    hop_arg args[] = {hop_arg_node(a), hop_arg_node(b)};
    return hop_graph_call_op(g, op, args, 2);
}

hop_node *
hop__ad_op2c(hop_graph *g, hop_op op, hop_node *a, double c)
{
    if (a == NULL)
        return NULL;
    hop_arg args[] = {hop_arg_node(a), hop_arg_float(c)};
    return hop_graph_call_op(g, op, args, 2);
}

hop_node *
hop__ad_cop2(hop_graph *g, hop_op op, double c, hop_node *b)
{
    if (b == NULL)
        return NULL;
    hop_arg args[] = {hop_arg_float(c), hop_arg_node(b)};
    return hop_graph_call_op(g, op, args, 2);
}

hop_node *
hop__ad_where(hop_graph *g, hop_node *cond, hop_node *a, hop_node *b)
{
    if (cond == NULL || a == NULL || b == NULL)
        return NULL;
    hop_arg args[] = {hop_arg_node(cond), hop_arg_node(a), hop_arg_node(b)};
    return hop_graph_call_op(g, HOP_OP_where, args, 3);
}

static hop_arg
shape_list(const hop_meta *m, hop_arg *items)
{
    for (int i = 0; i < m->rank; i++)
        items[i] = hop_arg_sym(m->sizes[i]);
    return hop_arg_list(items, (size_t)m->rank);
}

hop_node *
hop__ad_full(hop_graph *g, const hop_meta *m, double v)
{
    hop_arg items[HOP_MAX_RANK];
    hop_arg args[] = {shape_list(m, items), hop_arg_float(v), hop_arg_dtype(m->dtype)};
    return hop_graph_call_op(g, HOP_OP_full, args, 3);
}

hop_node *
hop__ad_to(hop_graph *g, hop_node *x, hop_dtype dtype)
{
    if (x == NULL || x->meta->meta.dtype == dtype)
        return x;
    hop_arg args[] = {hop_arg_node(x), hop_arg_dtype(dtype)};
    return hop_graph_call_op(g, HOP_OP_to, args, 2);
}

hop_node *
hop__ad_sum(hop_graph *g, hop_node *x, const int64_t *dims, size_t ndims, bool keepdim)
{
    if (x == NULL)
        return NULL;
    hop_arg items[HOP_MAX_RANK];
    for (size_t i = 0; i < ndims && i < HOP_MAX_RANK; i++)
        items[i] = hop_arg_int(dims[i]);
    hop_arg args[] = {ndims ? hop_arg_list(items, ndims) : hop_arg_none(), hop_arg_bool(keepdim)};
    hop_arg all[] = {hop_arg_node(x), args[0], args[1]};
    return hop_graph_call_op(g, HOP_OP_sum, all, 3);
}

hop_node *
hop__ad_sum_to(hop_graph *g, hop_node *x, const hop_meta *target)
{
    if (x == NULL)
        return NULL;
    const hop_meta *m = &x->meta->meta;
    int lead = m->rank - target->rank;
    if (lead < 0) {
        hop_error(HOP_SHAPE, "autodiff: a gradient of rank %d cannot sum to rank %d", m->rank,
                  target->rank);
        return NULL;
    }
    if (lead > 0) {
        int64_t dims[HOP_MAX_RANK];
        for (int i = 0; i < lead; i++)
            dims[i] = i;
        x = hop__ad_sum(g, x, dims, (size_t)lead, false);
        if (x == NULL)
            return NULL;
        m = &x->meta->meta;
    }
    int64_t dims[HOP_MAX_RANK];
    size_t nd = 0;
    for (int i = 0; i < target->rank; i++) {
        int64_t t;
        if (m->sizes[i] != target->sizes[i] && hop_expr_const_value(target->sizes[i], &t) && t == 1)
            dims[nd++] = i;
    }
    if (nd > 0 && (x = hop__ad_sum(g, x, dims, nd, true)) == NULL)
        return NULL;
    return hop__ad_to(g, x, target->dtype);
}

hop_node *
hop__ad_expand(hop_graph *g, hop_node *x, const hop_meta *target)
{
    if (x == NULL)
        return NULL;
    const hop_meta *m = &x->meta->meta;
    if (m->rank == target->rank) {
        bool same = true;
        for (int i = 0; i < m->rank; i++)
            same = same && m->sizes[i] == target->sizes[i];
        if (same)
            return x;
    }
    hop_arg items[HOP_MAX_RANK];
    hop_arg args[] = {hop_arg_node(x), shape_list(target, items)};
    return hop_graph_call_op(g, HOP_OP_expand, args, 2);
}
