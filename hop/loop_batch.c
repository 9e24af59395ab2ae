/*
 * hop/loop_batch.c - batching a loop HOP, the loop kit's (hop/loop_kit.h):
 * the same HOP over its bodies batched, its carries batched by the fixed
 * point over its step (hop_loop_batch: fori_loop and while_loop where no
 * lane stops early, the loops of examples/ (fold, repeat) for every call),
 * or every carry batched and the step masked per lane where lanes stop at
 * different times (hop_loop_batch_masked: fori_loop's batched bounds,
 * while_loop's batched predicate).
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

/*
 * Both kit calls: the HOP again over the bodies batched, its carries batched
 * where mask says (the fixed point, what the rule found, or every carry when
 * m is given: masked lanes), their unbatched inits broadcast, a batched xs
 * value's batch moved after its dim 0, the outputs batched where their
 * carries are.  m's bodies and leads replace the kit's where given.
 */
static hop_status
loop_again(hop_batch_ctx *cx, const hop_node *call, const char *body, const char *carries,
           const char *xs, const bool *batched, const hop_loop_lanes *m)
{
    hop_layout l;
    const hop_graph *f = m ? NULL : hop_node_body(call, body);
    hop_status st = m || f ? hop_layout_of(call, &l) : hop_error_code();
    if (st != HOP_OK)
        return st;
    hop_span c = hop_layout_span(&l, carries), x = xs ? hop_layout_span(&l, xs) : (hop_span){0, 0};
    if (call->nouts != c.n)
        return hop_error(HOP_MISUSE, "%s: %s has outputs past its carries",
                         m ? "hop_loop_batch_masked" : "hop_loop_batch", call->name);
    for (size_t j = 0; m && j < c.n; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "vmap: %s (%s) carries a SymInt (carry %zu), which cannot differ "
                             "per lane",
                             call->cls->name, call->name, j);
    bool *mask = hop_calloc(2 * l.n + 1, sizeof *mask), *was = mask ? mask + l.n : NULL;
    hop_node **ops = hop_calloc(l.n + 1, sizeof *ops);
    hop_value_info *outs = hop_calloc(c.n + 1, sizeof *outs);
    hop_build *b = mask && ops && outs ? hop_build_new(hop_batch_out(cx), call->cls) : NULL;
    st = b ? hop_batch_operands(cx, call, ops, was) : hop_error_code();
    if (st == HOP_OK && batched)
        memcpy(mask, batched, l.n * sizeof *mask);
    else if (st == HOP_OK) {
        memcpy(mask, was, l.n * sizeof *mask);
        for (size_t j = c.at; m && j < c.at + c.n; j++)
            mask[j] = true;
        if (!m)
            st = hop_batch_carries(cx, f, mask, c.at, c.n);
    }
    /* the kit's leads first: a batched one is refused before anything is
     * built; the class's after the operands, as it may pass more */
    bool own_leads = m && m->leads;
    if (st == HOP_OK && !own_leads)
        st = batch_leads(cx, call, b);
    if (st == HOP_OK)
        st = m ? m->bodies(m->arg, cx, call, mask, c, b) : batch_bodies(cx, call, body, c, mask, b);
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
    if (st == HOP_OK && own_leads)
        st = m->leads(m->arg, cx, call, b);
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

hop_status
hop_loop_batch(hop_batch_ctx *cx, const hop_node *call, const char *body, const char *carries,
               const char *xs, const bool *batched)
{
    return loop_again(cx, call, body, carries, xs, batched, NULL);
}

hop_status
hop_loop_batch_masked(hop_batch_ctx *cx, const hop_node *call, const char *carries,
                      const hop_loop_lanes *m)
{
    if (m == NULL || m->bodies == NULL)
        return hop_error(HOP_MISUSE, "hop_loop_batch_masked: no bodies function");
    return loop_again(cx, call, NULL, carries, NULL, NULL, m);
}
