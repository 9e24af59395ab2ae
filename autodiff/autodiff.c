/*
 * autodiff/autodiff.c - reverse and forward mode as graph transformations
 * (hop/autodiff.h).
 *
 * Both passes start the same way: every node of the forward graph is copied
 * into the result (a call_hop with copies of its subgraphs), so a rule finds
 * each forward value's primal there.  Reverse mode then walks the forward
 * nodes backwards, each active node with a cotangent handing it to its rule,
 * which accumulates into the node's operands; forward mode runs the tangent
 * rule of each node right after copying it.  A value is active when it
 * depends on a wrt input (reverse), or has a tangent (forward): only those
 * are differentiated, so a closure over a constant costs nothing.  DCE then
 * drops the forward copies nothing needs.  The walk is graph's rewriter
 * (hop/rewrite.h): copies, subgraph copies and the memo of transformed
 * bodies are its; this file keeps the cotangents and tangents in its
 * entries and holds the rules.
 */
#include "autodiff/ad_impl.h"
#include "core/core.h"
#include "hop/rewrite.h"

#include <stdio.h>
#include <string.h>

/* A transformation's state: the rewrite of the forward graph into the
 * result.  Each forward node's entry keeps its copy (the primal), one
 * cotangent (reverse) or tangent (forward) per value in aux, and whether it
 * is active in mark. */
struct hop_vjp_ctx {
    hop_rewrite rw;
};

struct hop_jvp_ctx {
    hop_rewrite rw;
};

/* ------------------------------------------------------------ helpers */

static bool
is_float_tensor(const hop_value_info *v)
{
    return v->kind == HOP_VALUE_TENSOR && hop_dtype_is_inexact(v->meta.dtype);
}

/* Whether any node argument of a (lists included) satisfies the entry test. */
static bool
any_active(const hop_rewrite *x, const hop_arg *a, size_t n, bool tangents)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].kind == HOP_ARG_LIST && any_active(x, a[i].u.list.items, a[i].u.list.n, tangents))
            return true;
        if (a[i].kind != HOP_ARG_NODE)
            continue;
        const hop_rewrite_entry *e = hop_rewrite_find(x, a[i].u.node);
        if (e == NULL)
            continue;
        if (tangents ? e->aux[0] != NULL : e->mark)
            return true;
    }
    return false;
}

static const char *
describe(const hop_value_info *v, char *buf, size_t cap)
{
    if (v->kind == HOP_VALUE_TENSOR)
        hop_meta_print(&v->meta, buf, cap);
    else
        snprintf(buf, cap, "%s", v->kind == HOP_VALUE_SYM ? "a SymInt" : "nothing");
    return buf;
}

typedef hop_status (*transform_fn)(const hop_graph *fwd, const bool *wrt, const hop_ct_kind *cts,
                                   hop_graph *out);

/* How a call's bodies are transformed: the suffix of their names, the
 * transformation, and which body outputs it differentiates: reverse mode,
 * how each is seeded (NULL: a cotangent input for every float tensor
 * output); forward mode, which get a tangent output (HOP_CT_NONE: none, a
 * symbolic zero; NULL: every tensor output). */
typedef struct body_transform {
    const char *suffix;
    transform_fn fn;
    const hop_ct_kind *cts;
} body_transform;

static hop_status
vjp_body_transform(const hop_graph *fwd, const bool *wrt, const hop_ct_kind *cts, hop_graph *out)
{
    return hop_vjp_graph(fwd, wrt, cts, out);
}

/* The transformed version of body in x->out, made once per (body, wrt,
 * cts). */
static hop_status
transformed_body(hop_rewrite *x, const hop_graph *body, const bool *wrt, const body_transform *t,
                 hop_graph **result)
{
    size_t n = body->nplaceholders, nouts = t->cts ? body->output->nargs : 0;
    char *mask = hop__calloc(n + nouts + 3, 1);
    if (mask == NULL)
        return HOP_NOMEM;
    mask[0] = t->suffix[1]; /* 'b' or 'j': a vjp and a jvp body differ */
    for (size_t i = 0; i < n; i++)
        mask[i + 1] = wrt[i] ? '1' : '0';
    if (t->cts != NULL) {
        mask[n + 1] = '|';
        for (size_t j = 0; j < nouts; j++)
            mask[n + 2 + j] = (char)('0' + t->cts[j]);
    }
    hop_graph *g = hop_rewrite_memo_find(x, body, mask);
    if (g != NULL) {
        hop__free(mask);
        *result = g;
        return HOP_OK;
    }
    char base[256];
    snprintf(base, sizeof base, "%s%s", body->name, t->suffix);
    hop_status st = (g = hop_graph_new_subgraph(x->out, base)) ? HOP_OK : hop_error_code();
    if (st == HOP_OK)
        st = t->fn(body, wrt, t->cts, g);
    if (st == HOP_OK)
        st = hop_graph_add_subgraph(x->out, g);
    if (st != HOP_OK)
        hop_graph_free(g);
    else if ((st = hop_rewrite_memo_add(x, body, mask, g)) == HOP_OK)
        *result = g;
    hop__free(mask);
    return st;
}

static hop_status
check_call(const char *fn, const hop_graph *fwd, hop_graph *out)
{
    if (fwd == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "%s: NULL %s", fn, fwd ? "out graph" : "graph");
    if (fwd->output == NULL)
        return hop_error(HOP_MISUSE, "%s: graph %s has no output node", fn, fwd->name);
    if (out->first != NULL || out->nsubgraphs != 0)
        return hop_error(HOP_MISUSE, "%s: the out graph %s is not empty", fn, out->name);
    if (out->env != fwd->env)
        return hop_error(HOP_MISUSE, "%s: graphs %s and %s use different ShapeEnvs", fn, fwd->name,
                         out->name);
    return HOP_OK;
}

/* The error for a HOP or foreign call with no rule. */
static hop_status
no_rule(const hop_node *n, const char *mode)
{
    if (n->kind == HOP_NODE_CALL_OP)
        return hop_error(HOP_UNSUPPORTED, "autodiff: the op %s (%s) has no %s rule",
                         hop_node_target(n), n->name, mode);
    return hop_error(HOP_UNSUPPORTED, "autodiff: the %s %s (%s) has no %s rule",
                     n->kind == HOP_NODE_CALL_HOP ? "HOP" : "foreign kernel", hop_node_target(n),
                     n->name, mode);
}

/* The rule of a call node in one mode (slot: vjp or jvp): an op's row of
 * the op table (nothing to do for a nondiff op), a HOP's slot (inherited
 * through its base) or the rule of wrap-like HOPs, else no_rule.  A macro
 * because the two modes' contexts are distinct types; the order of the
 * lookups is written once.  Nodes that are no call have no rule. */
#define AD_CALL_RULE(slot, ctx)                                                                    \
    static hop_status slot##_call(ctx *cx, const hop_node *n)                                      \
    {                                                                                              \
        if (n->kind == HOP_NODE_CALL_OP) {                                                         \
            const hop_op_ad_rule *r = hop_op_ad(n->op);                                            \
            if (r && r->nondiff)                                                                   \
                return HOP_OK;                                                                     \
            return r && r->slot ? r->slot(cx, n) : no_rule(n, #slot);                              \
        }                                                                                          \
        if (n->kind == HOP_NODE_CALL_HOP) {                                                        \
            const hop_class *owner = HOP_CLASS_SLOT_OWNER(n->cls, slot);                           \
            if (owner)                                                                             \
                return owner->slot(cx, n);                                                         \
            if (hop_class_is_wrap_like(n->cls))                                                    \
                return hop_##slot##_bodies(cx, n);                                                 \
        }                                                                                          \
        return n->kind == HOP_NODE_CALL_HOP || n->kind == HOP_NODE_CALL_FOREIGN                    \
                   ? no_rule(n, #slot)                                                             \
                   : HOP_OK;                                                                       \
    }

AD_CALL_RULE(vjp, hop_vjp_ctx)
AD_CALL_RULE(jvp, hop_jvp_ctx)

/* The end of both modes' graphs: out's output node over args[k] (freed),
 * the rewriter cleared, then dead code removed and the graph verified. */
static hop_status
finish_graph(hop_rewrite *rw, hop_graph *out, hop_arg *args, size_t k, hop_status st)
{
    if (st == HOP_OK && hop_graph_output(out, args, k) == NULL)
        st = hop_error_code();
    hop__free(args);
    hop_rewrite_clear(rw);
    if (st != HOP_OK)
        return st;
    hop_graph_dce(out);
    return hop_graph_verify(out);
}

/* ------------------------------------------------------------ reverse */

hop_graph *
hop_vjp_out(hop_vjp_ctx *cx)
{
    return cx->rw.out;
}

hop_node *
hop_vjp_primal(hop_vjp_ctx *cx, const hop_node *v)
{
    hop_rewrite_entry *e = v ? hop_rewrite_find(&cx->rw, v) : NULL;
    return e ? e->copy : NULL;
}

bool
hop_vjp_active(hop_vjp_ctx *cx, const hop_node *v)
{
    hop_rewrite_entry *e = v ? hop_rewrite_find(&cx->rw, v) : NULL;
    return e && e->mark;
}

hop_node *
hop_vjp_ct(hop_vjp_ctx *cx, const hop_node *call, size_t i)
{
    hop_rewrite_entry *e = call ? hop_rewrite_find(&cx->rw, call) : NULL;
    return e && i < e->n ? e->aux[i] : NULL;
}

hop_node *
hop_vjp_zeros(hop_vjp_ctx *cx, const hop_value_info *meta)
{
    return hop__ad_full(cx->rw.out, &meta->meta, 0.0);
}

/* Adds g to slot i of e (no reshaping). */
static hop_status
add_to_slot(hop_rewrite *x, hop_rewrite_entry *e, size_t i, hop_node *g)
{
    if (e->aux[i] != NULL && (g = hop__ad_op2(x->out, HOP_OP_add, e->aux[i], g)) == NULL)
        return hop_error_code();
    e->aux[i] = g;
    return HOP_OK;
}

hop_status
hop_vjp_accumulate(hop_vjp_ctx *cx, const hop_node *v, hop_node *g)
{
    if (cx == NULL || v == NULL || g == NULL)
        return hop_error(HOP_MISUSE, "hop_vjp_accumulate: NULL %s",
                         cx == NULL  ? "context"
                         : v == NULL ? "value"
                                     : "gradient");
    hop_rewrite_entry *e = hop_rewrite_find(&cx->rw, v);
    if (e == NULL || !e->mark || !is_float_tensor(v->meta))
        return HOP_OK;
    if ((g = hop__ad_sum_to(cx->rw.out, g, &v->meta->meta)) == NULL)
        return hop_error_code();
    return add_to_slot(&cx->rw, e, 0, g);
}

hop_status
hop_vjp_body(hop_vjp_ctx *cx, const hop_graph *body, const bool *wrt, hop_graph **bwd)
{
    return hop_vjp_body_seeded(cx, body, wrt, NULL, bwd);
}

hop_status
hop_vjp_body_seeded(hop_vjp_ctx *cx, const hop_graph *body, const bool *wrt, const hop_ct_kind *cts,
                    hop_graph **bwd)
{
    const body_transform t = {"_bwd", vjp_body_transform, cts};
    return transformed_body(&cx->rw, body, wrt, &t, bwd);
}

static hop_status
vjp_node(hop_vjp_ctx *cx, const hop_node *n)
{
    hop_rewrite_entry *e = hop_rewrite_find(&cx->rw, n);
    bool any = false;
    for (size_t i = 0; i < e->n; i++)
        any = any || e->aux[i] != NULL;
    if (!e->mark || !any)
        return HOP_OK;
    if (n->kind == HOP_NODE_GETITEM) {
        hop_rewrite_entry *call = hop_rewrite_find(&cx->rw, n->args[0].u.node);
        return add_to_slot(&cx->rw, call, (size_t)n->args[1].u.i, e->aux[0]);
    }
    return vjp_call(cx, n);
}

/* The seed of output j (kind k) accumulated into its value. */
static hop_status
seed_output(hop_vjp_ctx *cx, size_t j, hop_ct_kind k)
{
    const hop_arg *a = &cx->rw.src->output->args[j];
    char what[128];
    if (k == HOP_CT_NONE)
        return HOP_OK;
    if (a->kind != HOP_ARG_NODE || !is_float_tensor(a->u.node->meta))
        return hop_error(HOP_DTYPE, "autodiff: output %zu of graph %s (%s) is not a float tensor",
                         j, cx->rw.src->name,
                         a->kind == HOP_ARG_NODE ? describe(a->u.node->meta, what, sizeof what)
                                                 : "a constant");
    const hop_node *v = a->u.node;
    hop_node *seed;
    if (k == HOP_CT_INPUT) {
        char name[256];
        snprintf(name, sizeof name, "%s_ct", v->name);
        seed = hop_graph_placeholder(cx->rw.out, name, v->meta);
    } else
        seed = hop__ad_full(cx->rw.out, &v->meta->meta, 1.0);
    if (seed == NULL)
        return hop_error_code();
    return hop_vjp_accumulate(cx, v, seed);
}

/* Copies the forward graph, marking what depends on a wrt input. */
static hop_status
forward_copy(hop_rewrite *x, const bool *wrt, const char *mode)
{
    size_t k = 0;
    for (const hop_node *n = x->src->first; n && n != x->src->output; n = n->next) {
        hop_rewrite_entry *e = hop_rewrite_copy(x, n, NULL);
        if (e == NULL)
            return hop_error_code();
        if (n->kind == HOP_NODE_PLACEHOLDER) {
            size_t i = k++;
            if (wrt == NULL || !wrt[i])
                continue;
            char what[128];
            if (!is_float_tensor(n->meta))
                return hop_error(HOP_DTYPE,
                                 "%s: input %zu of graph %s (%s: %s) is not a float tensor", mode,
                                 i, x->src->name, n->name, describe(n->meta, what, sizeof what));
            e->mark = true;
        } else if (n->kind == HOP_NODE_GETITEM)
            e->mark = hop_rewrite_find(x, n->args[0].u.node)->mark && is_float_tensor(n->meta);
        else
            e->mark = any_active(x, n->args, n->nargs, false);
    }
    return HOP_OK;
}

hop_status
hop_vjp_graph(const hop_graph *fwd, const bool *wrt, const hop_ct_kind *cts, hop_graph *out)
{
    hop_status st = check_call("hop_vjp_graph", fwd, out);
    if (st != HOP_OK)
        return st;
    hop_vjp_ctx cx;
    hop_rewrite_init(&cx.rw, fwd, out, "autodiff");
    st = hop_graph_copy_guards(fwd, out);
    if (st == HOP_OK)
        st = forward_copy(&cx.rw, wrt, "grad");
    const hop_node *o = fwd->output;
    for (size_t j = 0; j < o->nargs && st == HOP_OK; j++) {
        hop_ct_kind k =
            cts ? cts[j]
            : o->args[j].kind == HOP_ARG_NODE && is_float_tensor(o->args[j].u.node->meta)
                ? HOP_CT_INPUT
                : HOP_CT_NONE;
        st = seed_output(&cx, j, k);
    }
    for (const hop_node *n = o->prev; n && st == HOP_OK; n = n->prev)
        st = vjp_node(&cx, n);
    /* The output: the forward's outputs, then each wrt input's gradient. */
    size_t nwrt = 0;
    for (size_t i = 0; wrt && i < fwd->nplaceholders; i++)
        nwrt += wrt[i];
    hop_arg *args = st == HOP_OK ? hop__calloc(o->nargs + nwrt + 1, sizeof *args) : NULL;
    if (st == HOP_OK && args == NULL)
        st = HOP_NOMEM;
    for (size_t j = 0; j < o->nargs && st == HOP_OK; j++)
        st = hop_rewrite_map_arg(&cx.rw, &o->args[j], &args[j]);
    size_t k = o->nargs, i = 0;
    for (const hop_node *p = fwd->first; p && p->kind == HOP_NODE_PLACEHOLDER && st == HOP_OK;
         p = p->next, i++) {
        if (!wrt || !wrt[i])
            continue;
        hop_node *g = hop_rewrite_find(&cx.rw, p)->aux[0];
        if (g == NULL && (g = hop_vjp_zeros(&cx, p->meta)) == NULL)
            st = hop_error_code();
        args[k++] = hop_arg_node(g);
    }
    return finish_graph(&cx.rw, out, args, k, st);
}

/* ------------------------------------------------------------ forward */

hop_graph *
hop_jvp_out(hop_jvp_ctx *cx)
{
    return cx->rw.out;
}

hop_node *
hop_jvp_primal(hop_jvp_ctx *cx, const hop_node *v)
{
    hop_rewrite_entry *e = v ? hop_rewrite_find(&cx->rw, v) : NULL;
    return e ? e->copy : NULL;
}

hop_node *
hop_jvp_tangent(hop_jvp_ctx *cx, const hop_node *v)
{
    hop_rewrite_entry *e = v ? hop_rewrite_find(&cx->rw, v) : NULL;
    return e ? e->aux[0] : NULL;
}

hop_status
hop_jvp_set_tangent(hop_jvp_ctx *cx, const hop_node *call, size_t i, hop_node *t)
{
    hop_rewrite_entry *e = call ? hop_rewrite_find(&cx->rw, call) : NULL;
    if (e == NULL || i >= e->n || t == NULL)
        return hop_error(HOP_MISUSE, "hop_jvp_set_tangent: %s",
                         e == NULL   ? "not a node of the forward graph"
                         : t == NULL ? "NULL tangent"
                                     : "output index out of range");
    /* A tangent has its value's metadata (a rule computing in a wider
     * dtype converts back). */
    const hop_value_info *m = call->kind == HOP_NODE_CALL_HOP || call->kind == HOP_NODE_CALL_FOREIGN
                                  ? &call->outs[i]
                                  : call->meta;
    if (m->kind == HOP_VALUE_TENSOR && (t = hop__ad_to(cx->rw.out, t, m->meta.dtype)) == NULL)
        return hop_error_code();
    e->aux[i] = t;
    return HOP_OK;
}

hop_node *
hop_jvp_zeros(hop_jvp_ctx *cx, const hop_value_info *meta)
{
    return hop__ad_full(cx->rw.out, &meta->meta, 0.0);
}

static hop_status jvp_graph(const hop_graph *fwd, const bool *wrt, const hop_ct_kind *want,
                            hop_graph *out);

static hop_status
jvp_body_transform(const hop_graph *fwd, const bool *wrt, const hop_ct_kind *cts, hop_graph *out)
{
    return jvp_graph(fwd, wrt, cts, out);
}

hop_status
hop_jvp_body(hop_jvp_ctx *cx, const hop_graph *body, const bool *wrt, hop_graph **jvp)
{
    return hop_jvp_body_wanted(cx, body, wrt, NULL, jvp);
}

hop_status
hop_jvp_body_wanted(hop_jvp_ctx *cx, const hop_graph *body, const bool *wrt,
                    const hop_ct_kind *want, hop_graph **jvp)
{
    const body_transform t = {"_jvp", jvp_body_transform, want};
    return transformed_body(&cx->rw, body, wrt, &t, jvp);
}

static hop_status
jvp_node(hop_jvp_ctx *cx, const hop_node *n)
{
    if (n->kind == HOP_NODE_GETITEM) {
        /* Its own output's tangent: any_active reads a call's first slot
         * only, which is empty when output 0 has none (an int carry before
         * a float one) while this output has one. */
        hop_rewrite_entry *call = hop_rewrite_find(&cx->rw, n->args[0].u.node);
        hop_rewrite_find(&cx->rw, n)->aux[0] = call->aux[(size_t)n->args[1].u.i];
        return HOP_OK;
    }
    if (!any_active(&cx->rw, n->args, n->nargs, true))
        return HOP_OK;
    return jvp_call(cx, n);
}

/* hop_jvp_graph, with a tangent output only for the tensor outputs j with
 * want[j] != HOP_CT_NONE (want NULL: every tensor output). */
static hop_status
jvp_graph(const hop_graph *fwd, const bool *wrt, const hop_ct_kind *want, hop_graph *out)
{
    hop_status st = check_call("hop_jvp_graph", fwd, out);
    if (st != HOP_OK)
        return st;
    hop_jvp_ctx cx;
    hop_rewrite_init(&cx.rw, fwd, out, "autodiff");
    st = hop_graph_copy_guards(fwd, out);
    const hop_node *n = fwd->first;
    /* The placeholders, then one tangent per wrt input. */
    for (; n && n->kind == HOP_NODE_PLACEHOLDER && st == HOP_OK; n = n->next)
        if (hop_rewrite_copy(&cx.rw, n, NULL) == NULL)
            st = hop_error_code();
    size_t i = 0;
    for (const hop_node *p = fwd->first; p && p->kind == HOP_NODE_PLACEHOLDER && st == HOP_OK;
         p = p->next, i++) {
        if (!wrt || !wrt[i])
            continue;
        char what[128], name[256];
        if (!is_float_tensor(p->meta)) {
            st = hop_error(HOP_DTYPE, "jvp: input %zu of graph %s (%s: %s) is not a float tensor",
                           i, fwd->name, p->name, describe(p->meta, what, sizeof what));
            break;
        }
        snprintf(name, sizeof name, "%s_dot", p->name);
        hop_node *t = hop_graph_placeholder(out, name, p->meta);
        if (t == NULL)
            st = hop_error_code();
        else
            hop_rewrite_find(&cx.rw, p)->aux[0] = t;
    }
    for (; n && n != fwd->output && st == HOP_OK; n = n->next) {
        if (hop_rewrite_copy(&cx.rw, n, NULL) == NULL)
            st = hop_error_code();
        else
            st = jvp_node(&cx, n);
    }
    const hop_node *o = fwd->output;
    hop_arg *args = st == HOP_OK ? hop__calloc(2 * o->nargs + 1, sizeof *args) : NULL;
    if (st == HOP_OK && args == NULL)
        st = HOP_NOMEM;
    size_t k = o->nargs;
    for (size_t j = 0; j < o->nargs && st == HOP_OK; j++)
        st = hop_rewrite_map_arg(&cx.rw, &o->args[j], &args[j]);
    for (size_t j = 0; j < o->nargs && st == HOP_OK; j++) {
        const hop_arg *a = &o->args[j];
        if (a->kind != HOP_ARG_NODE || a->u.node->meta->kind != HOP_VALUE_TENSOR ||
            (want && want[j] == HOP_CT_NONE))
            continue;
        hop_node *t = hop_jvp_tangent(&cx, a->u.node);
        if (t == NULL && (t = hop_jvp_zeros(&cx, a->u.node->meta)) == NULL)
            st = hop_error_code();
        args[k++] = hop_arg_node(t);
    }
    return finish_graph(&cx.rw, out, args, k, st);
}

hop_status
hop_jvp_graph(const hop_graph *fwd, const bool *wrt, hop_graph *out)
{
    return jvp_graph(fwd, wrt, NULL, out);
}

/* ------------------------------------------------ rules of wrap-like HOPs */

/* The values a call passes to its bodies (in body input order, after the
 * made inputs) and how many bodies it has; first_only keeps one. */
typedef struct passed_values {
    const hop_arg **items;
    size_t n, made, nbodies;
} passed_values;

static hop_status
passed_of(const hop_node *call, bool first_only, passed_values *p)
{
    const hop_arg *bodies = hop_node_graphs(call, &p->nbodies);
    if (bodies + p->nbodies >= call->args + call->nargs ||
        call->args[call->nargs - 1].kind != HOP_ARG_LIST)
        return hop_error(HOP_UNSUPPORTED,
                         "autodiff: the HOP %s (%s) passes no list of values to its bodies",
                         hop_node_target(call), call->name);
    if (first_only && p->nbodies > 0)
        p->nbodies = 1;
    p->n = hop_node_passed(call, NULL, 0);
    p->made = hop_node_made_inputs(call);
    if ((p->items = hop__calloc(p->n + 1, sizeof *p->items)) == NULL)
        return HOP_NOMEM;
    hop_node_passed(call, p->items, p->n);
    return HOP_OK;
}

/* The i-th body of call. */
static const hop_graph *
body_at(const hop_node *call, size_t i)
{
    size_t n;
    const hop_arg *bodies = hop_node_graphs(call, &n);
    return i < n ? bodies[i].u.graph : NULL;
}

/* call's outputs, then more[nmore], in a new array (NULL: HOP_NOMEM). */
static hop_value_info *
outs_and(const hop_node *call, const hop_value_info *more, size_t nmore)
{
    hop_value_info *outs = hop__calloc(call->nouts + nmore + 1, sizeof *outs);
    if (outs != NULL) {
        memcpy(outs, call->outs, call->nouts * sizeof *outs);
        memcpy(outs + call->nouts, more, nmore * sizeof *outs);
    }
    return outs;
}

/* Both modes' middle: call again, each of its first nbodies bodies replaced
 * by its transform t over wrt (transformed_body's), extra passed after its
 * values and more output after its own outputs.  The new call node, or NULL
 * with the error set. */
static hop_node *
call_transformed(hop_rewrite *rw, const hop_node *call, size_t nbodies, const bool *wrt,
                 const body_transform *t, hop_node **extra, size_t nextra,
                 const hop_value_info *more, size_t nmore)
{
    hop_graph *bodies[HOP_MAX_BODIES];
    for (size_t b = 0; b < nbodies; b++)
        if (transformed_body(rw, body_at(call, b), wrt, t, &bodies[b]) != HOP_OK)
            return NULL;
    hop_value_info *outs = outs_and(call, more, nmore);
    if (outs == NULL)
        return NULL;
    hop_node *r =
        hop_rewrite_call(rw, call, bodies, nbodies, extra, nextra, outs, call->nouts + nmore);
    hop__free(outs);
    return r;
}

/* How call's bodies are seeded in reverse mode (*kinds, one per output;
 * left NULL when every float output has a cotangent, the bodies' default).
 * An output nothing differentiates (the value of a grad whose gradient alone
 * is differentiated again) gets none, a symbolic zero, not zeros: a zero
 * cotangent times an infinite partial would be NaN in the backward body
 * where the output contributes nothing, as PyTorch and JAX also skip it. */
static hop_status
seeds_of(hop_vjp_ctx *cx, const hop_node *call, size_t nbodies, hop_ct_kind **kinds)
{
    *kinds = NULL;
    bool all = true;
    for (size_t i = 0; i < call->nouts; i++)
        all = all && (!is_float_tensor(&call->outs[i]) || hop_vjp_ct(cx, call, i) != NULL);
    for (size_t b = 0; b < nbodies && !all; b++)
        if (body_at(call, b)->output->nargs != call->nouts)
            return HOP_OK; /* (bodies whose outputs are not the call's: zeros) */
    if (all)
        return HOP_OK;
    if ((*kinds = hop__calloc(call->nouts + 1, sizeof **kinds)) == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < call->nouts; i++)
        (*kinds)[i] = is_float_tensor(&call->outs[i]) && hop_vjp_ct(cx, call, i) != NULL
                          ? HOP_CT_INPUT
                          : HOP_CT_NONE;
    return HOP_OK;
}

static hop_status
vjp_bodies(hop_vjp_ctx *cx, const hop_node *call, bool first_only)
{
    passed_values p;
    hop_status st = passed_of(call, first_only, &p);
    if (st != HOP_OK)
        return st;
    size_t nph = p.made + p.n, nct = 0, ng = 0;
    bool *wrt = hop__calloc(nph + 1, sizeof *wrt);
    hop_node **cts = hop__calloc(call->nouts + 1, sizeof *cts);
    hop_value_info *more = hop__calloc(p.n + 1, sizeof *more);
    if (wrt == NULL || cts == NULL || more == NULL)
        st = HOP_NOMEM;
    for (size_t j = 0; j < p.n && st == HOP_OK; j++) {
        const hop_arg *a = p.items[j];
        if (a->kind == HOP_ARG_NODE && hop_vjp_active(cx, a->u.node) &&
            is_float_tensor(a->u.node->meta)) {
            wrt[p.made + j] = true;
            more[ng++] = *a->u.node->meta;
        }
    }
    body_transform t = {"_bwd", vjp_body_transform, NULL};
    hop_ct_kind *kinds = NULL;
    if (st == HOP_OK && ng > 0 && (st = seeds_of(cx, call, p.nbodies, &kinds)) == HOP_OK)
        t.cts = kinds;
    for (size_t i = 0; i < call->nouts && st == HOP_OK && ng > 0; i++) {
        if (!is_float_tensor(&call->outs[i]) || (kinds && kinds[i] == HOP_CT_NONE))
            continue;
        hop_node *ct = hop_vjp_ct(cx, call, i);
        if (ct == NULL && (ct = hop_vjp_zeros(cx, &call->outs[i])) == NULL)
            st = hop_error_code();
        cts[nct++] = ct;
    }
    hop_node *bwd = NULL;
    if (st == HOP_OK && ng > 0 &&
        (bwd = call_transformed(&cx->rw, call, p.nbodies, wrt, &t, cts, nct, more, ng)) == NULL)
        st = hop_error_code();
    for (size_t j = 0, k = 0; j < p.n && st == HOP_OK && bwd; j++) {
        if (!wrt[p.made + j])
            continue;
        hop_node *g = hop_graph_getitem(cx->rw.out, bwd, call->nouts + k++);
        st = g ? hop_vjp_accumulate(cx, p.items[j]->u.node, g) : hop_error_code();
    }
    hop__free(kinds);
    hop__free(wrt);
    hop__free(cts);
    hop__free(more);
    hop__free(p.items);
    return st;
}

hop_status
hop_ad_reach_bodies(const hop_node *call, const bool *from, bool *reached)
{
    if (call == NULL || from == NULL || reached == NULL || call->kind != HOP_NODE_CALL_HOP)
        return hop_error(HOP_MISUSE, "hop_ad_reach_bodies: %s",
                         call == NULL || call->kind != HOP_NODE_CALL_HOP ? "not a HOP call"
                                                                         : "NULL argument");
    size_t nb, made = hop_node_made_inputs(call), np = hop_node_passed(call, NULL, 0);
    const hop_arg *bodies = hop_node_graphs(call, &nb);
    bool laid_out = nb > 0, any = false;
    for (size_t b = 0; b < nb; b++)
        laid_out = laid_out && bodies[b].kind == HOP_ARG_GRAPH &&
                   bodies[b].u.graph->nplaceholders == made + np &&
                   bodies[b].u.graph->output != NULL &&
                   bodies[b].u.graph->output->nargs == call->nouts;
    for (size_t j = 0; j < np; j++)
        any = any || from[j];
    if (!laid_out) { /* the safe side */
        for (size_t i = 0; i < call->nouts; i++)
            reached[i] = reached[i] || any;
        return HOP_OK;
    }
    bool *body_from = hop__calloc(made + np + 1, sizeof *body_from);
    hop_status st = body_from ? HOP_OK : HOP_NOMEM;
    for (size_t j = 0; j < np && st == HOP_OK; j++)
        body_from[made + j] = from[j];
    for (size_t b = 0; b < nb && st == HOP_OK; b++)
        st = hop_ad_reach(bodies[b].u.graph, body_from, reached);
    hop__free(body_from);
    return st;
}

/* The reach slot hop_ad_reach asks for a call of cls (hop/class.h): the
 * nearest class of the chain that sets reach, unless a nearer one sets jvp
 * (its reach is then the base's no longer: NULL, every output reached, or
 * hop_ad_reach_bodies for hop_jvp_bodies); a chain that sets neither gets
 * hop_ad_reach_bodies when the class is wrap-like. */
typedef hop_status (*reach_fn)(const hop_node *, const bool *, bool *);

static reach_fn
reach_slot(const hop_class *cls)
{
    for (int depth = 0; cls && depth < HOP_CLASS_MAX_DEPTH; cls = cls->base, depth++) {
        if (cls->reach)
            return cls->reach;
        if (cls->jvp)
            return cls->jvp == hop_jvp_bodies ? hop_ad_reach_bodies : NULL;
    }
    return NULL;
}

/* Sets out[i] (one per output of call) for each output of call that the
 * values marked in rw reach, as call's class says (its reach slot), when
 * it has one and no lead it reads is reached.  *exact false: the caller
 * counts every output reached from every operand. */
static hop_status
reach_through(const hop_rewrite *rw, const hop_node *call, bool *out, bool *exact)
{
    *exact = false;
    if (call->kind != HOP_NODE_CALL_HOP)
        return HOP_OK;
    reach_fn fn = reach_slot(call->cls);
    if (fn == NULL && HOP_CLASS_SLOT_OWNER(call->cls, jvp) == NULL &&
        hop_class_is_wrap_like(call->cls))
        fn = hop_ad_reach_bodies;
    size_t nb, np = hop_node_passed(call, NULL, 0);
    const hop_arg *bodies = hop_node_graphs(call, &nb);
    if (fn == NULL || nb == 0 || any_active(rw, call->args, (size_t)(bodies - call->args), false))
        return HOP_OK;
    bool *from = hop__calloc(np + 1, sizeof *from);
    const hop_arg **items = hop__calloc(np + 1, sizeof *items);
    hop_status st = from && items ? HOP_OK : HOP_NOMEM;
    if (st == HOP_OK)
        hop_node_passed(call, items, np);
    for (size_t j = 0; j < np && st == HOP_OK; j++)
        from[j] = any_active(rw, items[j], 1, false);
    if (st == HOP_OK)
        st = fn(call, from, out);
    *exact = st == HOP_OK;
    hop__free(from);
    hop__free(items);
    return st;
}

hop_status
hop_ad_reach(const hop_graph *f, const bool *from, bool *reached)
{
    if (f == NULL || (f->nplaceholders > 0 && from == NULL) || reached == NULL)
        return hop_error(HOP_MISUSE, "hop_ad_reach: NULL %s",
                         f == NULL         ? "graph"
                         : reached == NULL ? "reached"
                                           : "from");
    if (f->output == NULL)
        return hop_error(HOP_MISUSE, "hop_ad_reach: graph %s has no output node", f->name);
    hop_rewrite rw;
    hop_rewrite_init(&rw, f, NULL, "autodiff");
    hop_status st = HOP_OK;
    size_t i = 0;
    for (const hop_node *n = f->first; n && n != f->output && st == HOP_OK; n = n->next) {
        const hop_op_ad_rule *ad = n->kind == HOP_NODE_CALL_OP ? hop_op_ad(n->op) : NULL;
        bool *out = n->kind == HOP_NODE_CALL_HOP ? hop__calloc(n->nouts + 1, sizeof *out) : NULL;
        bool exact = false, r = false;
        if (n->kind == HOP_NODE_CALL_HOP)
            st = out ? reach_through(&rw, n, out, &exact) : HOP_NOMEM;
        if (st != HOP_OK)
            r = false;
        else if (n->kind == HOP_NODE_PLACEHOLDER)
            r = from[i++];
        else if (n->kind == HOP_NODE_GETITEM) { /* the output of a call it reads */
            const hop_rewrite_entry *c = hop_rewrite_find(&rw, n->args[0].u.node);
            r = c != NULL && c->flags[(size_t)n->args[1].u.i];
        } else if (exact)
            for (size_t k = 0; k < n->nouts; k++)
                r = r || out[k];
        else
            r = !(ad && ad->nondiff) && any_active(&rw, n->args, n->nargs, false);
        hop_rewrite_entry *e = r ? hop_rewrite_add(&rw, n) : NULL;
        if (r && e == NULL)
            st = HOP_NOMEM;
        for (size_t k = 0; e != NULL && k < e->n; k++) /* a call's outputs */
            e->flags[k] = !exact || out[k];
        if (e != NULL)
            e->mark = true;
        hop__free(out);
    }
    for (size_t j = 0; j < f->output->nargs && st == HOP_OK; j++)
        reached[j] = reached[j] || any_active(&rw, &f->output->args[j], 1, false);
    hop_rewrite_clear(&rw);
    return st;
}

/* Which of call's outputs get a tangent (*want, one per output; left NULL
 * when every tensor output does, the bodies' default): those that a value
 * with a tangent reaches in some body, JAX's rule for cond (the union over
 * the branches of the outputs with a nonzero tangent).  An output no body's
 * tangent reaches keeps a symbolic zero tangent, not zeros that a later
 * rule would multiply by an infinite partial (0 * inf = nan where PyTorch
 * and JAX give the derivative of a constant). */
static hop_status
jvp_wanted(const hop_node *call, size_t nbodies, const bool *wrt, hop_ct_kind **want)
{
    *want = NULL;
    for (size_t b = 0; b < nbodies; b++)
        if (body_at(call, b)->output->nargs != call->nouts)
            return HOP_OK; /* (bodies whose outputs are not the call's: all) */
    bool *reached = hop__calloc(call->nouts + 1, sizeof *reached);
    hop_status st = reached ? HOP_OK : HOP_NOMEM;
    for (size_t b = 0; b < nbodies && st == HOP_OK; b++)
        st = hop_ad_reach(body_at(call, b), wrt, reached);
    bool all = true;
    for (size_t i = 0; i < call->nouts && st == HOP_OK; i++)
        all = all && (call->outs[i].kind != HOP_VALUE_TENSOR || reached[i]);
    if (st == HOP_OK && !all && (*want = hop__calloc(call->nouts + 1, sizeof **want)) == NULL)
        st = HOP_NOMEM;
    for (size_t i = 0; *want && i < call->nouts; i++)
        (*want)[i] =
            call->outs[i].kind == HOP_VALUE_TENSOR && reached[i] ? HOP_CT_INPUT : HOP_CT_NONE;
    hop__free(reached);
    return st;
}

static hop_status
jvp_bodies(hop_jvp_ctx *cx, const hop_node *call, bool first_only)
{
    passed_values p;
    hop_status st = passed_of(call, first_only, &p);
    if (st != HOP_OK)
        return st;
    size_t nph = p.made + p.n, nt = 0, nmore = 0;
    body_transform jvp_t = {"_jvp", jvp_body_transform, NULL};
    hop_ct_kind *want = NULL;
    bool *wrt = hop__calloc(nph + 1, sizeof *wrt);
    hop_node **tangents = hop__calloc(p.n + 1, sizeof *tangents);
    hop_value_info *more = hop__calloc(call->nouts + 1, sizeof *more);
    if (wrt == NULL || tangents == NULL || more == NULL)
        st = HOP_NOMEM;
    for (size_t j = 0; j < p.n && st == HOP_OK; j++) {
        const hop_arg *a = p.items[j];
        hop_node *t = a->kind == HOP_ARG_NODE ? hop_jvp_tangent(cx, a->u.node) : NULL;
        if (t != NULL && is_float_tensor(a->u.node->meta)) {
            wrt[p.made + j] = true;
            tangents[nt++] = t;
        }
    }
    if (st == HOP_OK && nt > 0 && (st = jvp_wanted(call, p.nbodies, wrt, &want)) == HOP_OK)
        jvp_t.cts = want;
    for (size_t i = 0; more && i < call->nouts; i++)
        if (call->outs[i].kind == HOP_VALUE_TENSOR && (!want || want[i] != HOP_CT_NONE))
            more[nmore++] = call->outs[i];
    hop_node *jc = NULL;
    if (st == HOP_OK && nt > 0 && nmore > 0 &&
        (jc = call_transformed(&cx->rw, call, p.nbodies, wrt, &jvp_t, tangents, nt, more, nmore)) ==
            NULL)
        st = hop_error_code();
    for (size_t i = 0, k = 0; i < call->nouts && st == HOP_OK && jc; i++) {
        if (call->outs[i].kind != HOP_VALUE_TENSOR || (want && want[i] == HOP_CT_NONE))
            continue;
        hop_node *t = hop_graph_getitem(cx->rw.out, jc, call->nouts + k++);
        st = t ? hop_jvp_set_tangent(cx, call, i, t) : hop_error_code();
    }
    hop__free(want);
    hop__free(wrt);
    hop__free(tangents);
    hop__free(more);
    hop__free(p.items);
    return st;
}

hop_status
hop_vjp_bodies(hop_vjp_ctx *cx, const hop_node *call)
{
    return vjp_bodies(cx, call, false);
}

hop_status
hop_jvp_bodies(hop_jvp_ctx *cx, const hop_node *call)
{
    return jvp_bodies(cx, call, false);
}

hop_status
hop_vjp_first_body(hop_vjp_ctx *cx, const hop_node *call)
{
    return vjp_bodies(cx, call, true);
}

hop_status
hop_jvp_first_body(hop_jvp_ctx *cx, const hop_node *call)
{
    return jvp_bodies(cx, call, true);
}

hop_status
hop_jvp_inline(hop_graph *dst, const hop_graph *f, const bool *wrt, hop_node *const *primals,
               hop_node *const *tangents, hop_node **outputs)
{
    if (dst == NULL || f == NULL || wrt == NULL || (f->nplaceholders && !primals) ||
        tangents == NULL || outputs == NULL)
        return hop_error(HOP_MISUSE, "hop_jvp_inline: NULL argument");
    size_t n = f->nplaceholders, k = 0;
    hop_graph *jg = hop_graph_new(dst->env, f->name);
    hop_node **in = hop__calloc(2 * n + 1, sizeof *in);
    hop_status st = jg && in ? hop_jvp_graph(f, wrt, jg) : HOP_NOMEM;
    for (size_t i = 0; i < n; i++)
        in[k++] = primals[i];
    for (size_t i = 0; in && i < n; i++)
        if (wrt[i])
            in[k++] = tangents[i];
    if (st == HOP_OK)
        st = hop_graph_inline(dst, jg, in, outputs);
    hop__free(in);
    hop_graph_free(jg);
    return st;
}
