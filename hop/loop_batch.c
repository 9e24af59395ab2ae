/*
 * hop/loop_batch.c - batching a loop HOP, the loop kit's (hop/loop_kit.h):
 * the same HOP over its bodies batched, its carries batched by the fixed
 * point over its step.  fori_loop and while_loop use it where no lane
 * stops early, and the loops of examples/ (fold, repeat) for every call.
 */
#include "hop/layout.h"
#include "hop/loop_kit.h"

#include <string.h>

/* The leads of call as they are, a node lead's value (batched: refused). */
static hop_status
batch_leads(hop_batch_ctx *cx, const hop_node *call, hop_build *b)
{
    size_t np;
    const hop_param *p = hop_class_params(call->cls, &np);
    hop_status st = HOP_OK;
    for (size_t k = 0; k < np && st == HOP_OK; k++) {
        if (!hop_param_is_lead(p[k].kind))
            continue;
        hop_arg a = *hop_node_param(call, p[k].name);
        bool batched = false;
        if (a.kind == HOP_ARG_NODE && (a.u.node = hop_batch_value(cx, a.u.node, &batched)) == NULL)
            return hop_error_code();
        if (batched)
            return hop_error(HOP_UNSUPPORTED, "vmap: %s (%s): its %s is batched", call->cls->name,
                             call->name, p[k].name);
        st = hop_build_lead(b, p[k].name, a);
    }
    return st;
}

/* The bodies batched, in parameter order: the step returns its carries
 * batched where mask says, the others their values unbatched. */
static hop_status
batch_bodies(hop_batch_ctx *cx, const hop_node *call, const char *body, hop_span c,
             const bool *mask, hop_build *b)
{
    size_t np;
    const hop_param *p = hop_class_params(call->cls, &np);
    hop_status st = HOP_OK;
    for (size_t k = 0; k < np && st == HOP_OK; k++) {
        if (p[k].kind != HOP_PARAM_BODY)
            continue;
        const hop_graph *g = hop_node_body(call, p[k].name);
        bool step = strcmp(p[k].name, body) == 0;
        bool *out = hop_calloc(g->output->nargs + 1, sizeof *out);
        hop_graph *v = NULL;
        if (out == NULL)
            return hop_error_code();
        for (size_t j = 0; step && j < g->output->nargs && j < c.n; j++)
            out[j] = mask[c.at + j];
        st = hop_batch_body_outs(cx, g, mask, out, &v);
        hop_free(out);
        if (st == HOP_OK)
            st = hop_build_use_body(b, p[k].name, v);
    }
    return st;
}

hop_status
hop_loop_batch(hop_batch_ctx *cx, const hop_node *call, const char *body, const char *carries,
               const char *xs, const bool *batched)
{
    hop_layout l;
    const hop_graph *f = hop_node_body(call, body);
    hop_status st = f ? hop_layout_of(call, &l) : hop_error_code();
    if (st != HOP_OK)
        return st;
    hop_span c = hop_layout_span(&l, carries), x = xs ? hop_layout_span(&l, xs) : (hop_span){0, 0};
    if (call->nouts != c.n)
        return hop_error(HOP_MISUSE, "hop_loop_batch: %s has outputs past its carries", call->name);
    bool *mask = hop_calloc(2 * l.n + 1, sizeof *mask), *was = mask ? mask + l.n : NULL;
    hop_node **ops = hop_calloc(l.n + 1, sizeof *ops);
    hop_value_info *outs = hop_calloc(c.n + 1, sizeof *outs);
    hop_build *b = mask && ops && outs ? hop_build_new(hop_batch_out(cx), call->cls) : NULL;
    st = b ? hop_batch_operands(cx, call, ops, was) : hop_error_code();
    if (st == HOP_OK && batched)
        memcpy(mask, batched, l.n * sizeof *mask);
    else if (st == HOP_OK) {
        memcpy(mask, was, l.n * sizeof *mask);
        st = hop_batch_carries(cx, f, mask, c.at, c.n);
    }
    if (st == HOP_OK)
        st = batch_leads(cx, call, b);
    if (st == HOP_OK)
        st = batch_bodies(cx, call, body, c, mask, b);
    for (size_t j = c.at; j < c.at + c.n && st == HOP_OK; j++)
        if (mask[j] && !was[j] && (ops[j] = hop_batch_broadcast(cx, ops[j])) == NULL)
            st = hop_error_code();
    for (size_t j = x.at; j < x.at + x.n && st == HOP_OK; j++)
        if (mask[j] && (ops[j] = hop_batch_movedim(cx, ops[j], 0, 1)) == NULL)
            st = hop_error_code();
    for (size_t j = 0; j < c.n && st == HOP_OK; j++)
        outs[j] = mask[c.at + j] ? hop_batch_meta(cx, &call->outs[j]) : call->outs[j];
    if (st == HOP_OK)
        st = hop_build_operands(b, &l, ops);
    hop_node *r = NULL;
    if (st == HOP_OK) {
        r = hop_build_emit(b, outs, c.n);
        b = NULL;
        st = r ? hop_batch_outputs(cx, call, r, mask + c.at) : hop_error_code();
    }
    hop_build_free(b);
    hop_free(mask);
    hop_free(ops);
    hop_free(outs);
    return st;
}
