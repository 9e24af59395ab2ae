/*
 * hop/loop_kit.c - the loop kit's checks and its carry-evaluation loop
 * (hop/loop_kit.h): that a carry comes back as it went in and that a
 * condition is a bool scalar, on metadata while tracing, on a call node
 * when verifying and on concrete values in eval, with one message in all;
 * the outputs of a loop; the body run
 * step after step on the current carries.  (Its autodiff is
 * hop/loop_autodiff.c.)
 */
#include "hop/loop_kit.h"

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
hop_call_check_carries(hop_call *c, size_t body, size_t first, size_t ncarry, bool more,
                       const char *fn)
{
    const hop_values *r = &c->results[body];
    if (r->n < ncarry || (!more && r->n != ncarry))
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
hop_call_slice_inputs(hop_call *c, size_t first, size_t n, int64_t dim)
{
    for (size_t i = first; i < first + n; i++) {
        hop_value_info *m = &c->input_meta[i];
        int d = hop_loop_dim(dim, m->meta.rank);
        if (m->kind != HOP_VALUE_TENSOR || d < 0)
            return hop_error(HOP_MISUSE, "%s: body input %zu has no dim %lld to slice along",
                             c->cls->name, i, (long long)dim);
        *m = hop_value_info_drop_dim(m, d);
    }
    return HOP_OK;
}

int
hop_loop_dim(int64_t dim, int rank)
{
    int64_t d = dim < 0 ? dim + rank : dim;
    return d >= 0 && d < rank ? (int)d : -1;
}

hop_status
hop_loop_xs_dim(const char *hop, size_t i, const char *name, const hop_value_info *x, int64_t dim,
                int *d)
{
    *d = x->kind == HOP_VALUE_TENSOR ? hop_loop_dim(dim, x->meta.rank) : -1;
    if (*d >= 0)
        return HOP_OK;
    char what[128];
    hop_value_info_print(x, what, sizeof what);
    return hop_error(HOP_SHAPE, "%s: xs %zu (%s) is %s, which has no dim %lld", hop, i, name, what,
                     (long long)dim);
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
                               (size_t)call->nouts, call->nouts == 1 ? "" : "s", n,
                               n == 1 ? "y" : "ies");
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
                       size_t ncarry, bool more, const char *fn)
{
    const char *hop = hop_eval_class(ex)->name;
    if (r->n < ncarry || (!more && r->n != ncarry))
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

/* ------------------------------------------------------------ eval loop */

hop_status
hop_eval_loop_begin(hop_eval_ctx *ex, size_t made, const char *carries, hop_eval_loop *l)
{
    size_t n;
    memset(l, 0, sizeof *l);
    l->ex = ex;
    l->made = made;
    const hop_rt_value *passed = hop_eval_passed(ex, &n);
    hop_eval_group(ex, carries, &l->nc);
    l->init = passed;
    l->nin = made + n;
    if ((l->in = hop_calloc(l->nin + 1, sizeof *l->in)) == NULL)
        return hop_error_code();
    for (size_t j = 0; j < n; j++)
        l->in[made + j] = passed[j];
    hop_status st = HOP_OK;
    for (size_t j = 0; j < l->nc && st == HOP_OK; j++)
        st = hop_rt_values_push(
            &l->carry,
            (hop_rt_value){passed[j].kind, hop_tensor_retain(passed[j].tensor), passed[j].i});
    return st;
}

hop_status
hop_eval_loop_run(hop_eval_loop *l, const char *body, hop_rt_values *next)
{
    for (size_t j = 0; j < l->nc; j++)
        l->in[l->made + j] = l->carry.items[j];
    return hop_eval_body(l->ex, body, l->in, l->nin, next);
}

hop_status
hop_eval_loop_step(hop_eval_loop *l, const char *body, const char *fn, hop_rt_values *next)
{
    hop_status st = hop_eval_loop_run(l, body, next);
    if (st == HOP_OK)
        st = hop_eval_check_carries(l->ex, next, l->init, l->nc, l->more, fn);
    if (st != HOP_OK)
        hop_rt_values_clear(next);
    return st;
}

void
hop_eval_loop_take(hop_eval_loop *l, hop_rt_values *next)
{
    hop_rt_values_clear(&l->carry);
    l->carry = *next;
    *next = (hop_rt_values){NULL, 0, 0};
    for (size_t j = 0; j < l->nc && j < l->carry.n; j++)
        l->in[l->made + j] = l->carry.items[j];
}

hop_status
hop_eval_loop_next(hop_eval_loop *l, const char *body, const char *fn)
{
    hop_rt_values next = {NULL, 0, 0};
    hop_status st = hop_eval_loop_step(l, body, fn, &next);
    if (st == HOP_OK)
        hop_eval_loop_take(l, &next);
    return st;
}

hop_status
hop_eval_loop_slice(hop_eval_loop *l, const hop_rt_value *xs, size_t n, int64_t dim, int64_t idx,
                    hop_rt_values *rows)
{
    hop_status st = HOP_OK;
    size_t first = rows->n;
    for (size_t k = 0; k < n && st == HOP_OK; k++) {
        int64_t d = dim < 0 ? dim + xs[k].tensor->rank : dim;
        hop_rt_arg a[] = {hop_rt_tensor(xs[k].tensor), hop_rt_int(d), hop_rt_int(idx)};
        hop_rt_value v;
        if ((st = hop_eager(HOP_OP_select, a, 3, &v)) == HOP_OK)
            st = hop_rt_values_push(rows, v);
    }
    for (size_t k = 0; k < n && st == HOP_OK; k++)
        l->in[l->made + l->nc + k] = rows->items[first + k]; /* the xs follow the carries */
    return st;
}

hop_status
hop_eval_loop_end(hop_eval_loop *l, hop_status st)
{
    hop_free(l->in);
    l->in = NULL;
    if (st == HOP_OK)
        st = hop_eval_results(l->ex, &l->carry);
    hop_rt_values_clear(&l->carry);
    return st;
}
