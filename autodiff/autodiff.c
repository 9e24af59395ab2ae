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
 * drops the forward copies nothing needs.
 */
#include "autodiff/ad_impl.h"
#include "core/hash.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ node maps */

/* One forward node: its copy, and its cotangents (reverse) or tangents
 * (forward), one per value it has (a call's outputs). */
typedef struct entry {
    const hop_node *key;
    hop_node *primal;
    hop_node **slots;
    size_t nslots;
    bool active;
    UT_hash_handle hh;
} entry;

/* A subgraph of the source and its copy or transformed version in the
 * result; mask is the wrt mask of a transformed body (NULL for a copy). */
typedef struct body_memo {
    const hop_graph *src;
    hop_graph *dst;
    char *mask;
} body_memo;

typedef struct xform {
    const hop_graph *src;
    hop_graph *out;
    entry *nodes;
    body_memo *memos;
    size_t nmemos, memo_cap;
    /* list items of arguments being mapped, freed after each node */
    hop_arg **scratch;
    size_t nscratch, scratch_cap;
    /* symbols replaced in every copied argument and meta (hop_graph_inline
     * binding a SymInt placeholder to a value of another expression) */
    const hop_expr **from, **to;
    size_t nsubs;
} xform;

struct hop_vjp_ctx {
    xform x;
};

struct hop_jvp_ctx {
    xform x;
};

static entry *
find(const xform *x, const hop_node *n)
{
    entry *e = NULL;
    HASH_FIND_PTR(x->nodes, &n, e);
    return e;
}

static entry *
add_entry(xform *x, const hop_node *n, hop_node *primal)
{
    size_t nslots = n->kind == HOP_NODE_CALL_HOP || n->kind == HOP_NODE_CALL_FOREIGN ? n->nouts : 1;
    entry *e = hop__calloc(1, sizeof *e);
    if (e == NULL || (e->slots = hop__calloc(nslots + 1, sizeof *e->slots)) == NULL) {
        hop__free(e);
        return NULL;
    }
    e->key = n;
    e->primal = primal;
    e->nslots = nslots;
    hop_status st;
    HOP_HASH_ADD(st, hh, x->nodes, key, sizeof e->key, e);
    if (st != HOP_OK) {
        hop__free(e->slots);
        hop__free(e);
        return NULL;
    }
    return e;
}

static void
xform_free(xform *x)
{
    entry *e, *tmp;
    HASH_ITER(hh, x->nodes, e, tmp)
    {
        HASH_DEL(x->nodes, e);
        hop__free(e->slots);
        hop__free(e);
    }
    for (size_t i = 0; i < x->nmemos; i++)
        hop__free(x->memos[i].mask);
    hop__free(x->memos);
    for (size_t i = 0; i < x->nscratch; i++)
        hop__free(x->scratch[i]);
    hop__free(x->scratch);
}

/* Frees what hop_graph_inline allocated besides xform_free's. */
static void
subs_free(xform *x)
{
    hop__free((void *)x->from);
    hop__free((void *)x->to);
}

static void
scratch_clear(xform *x)
{
    for (size_t i = 0; i < x->nscratch; i++)
        hop__free(x->scratch[i]);
    x->nscratch = 0;
}

static hop_status copy_graph(const hop_graph *src, hop_graph *dst, const xform *subs);

/* e with x's symbols replaced. */
static const hop_expr *
subs_expr(const xform *x, const hop_expr *e)
{
    return x->nsubs ? hop_sym_subs(x->out->env, e, x->from, x->to, x->nsubs) : e;
}

/* *out = *v with x's symbols replaced; HOP_NOMEM on failure. */
static hop_status
subs_meta(const xform *x, const hop_value_info *v, hop_value_info *out)
{
    *out = *v;
    if (x->nsubs == 0)
        return HOP_OK;
    if (v->kind == HOP_VALUE_SYM && (out->sym = subs_expr(x, v->sym)) == NULL)
        return hop_error_code();
    for (int d = 0; v->kind == HOP_VALUE_TENSOR && d < v->meta.rank; d++)
        if ((out->meta.sizes[d] = subs_expr(x, v->meta.sizes[d])) == NULL)
            return hop_error_code();
    return HOP_OK;
}

/* The copy of subgraph g in x->out (made on first use: a subgraph shared by
 * several calls keeps one copy). */
static hop_graph *
subgraph_copy(xform *x, const hop_graph *g)
{
    for (size_t i = 0; i < x->nmemos; i++)
        if (x->memos[i].src == g && x->memos[i].mask == NULL)
            return x->memos[i].dst;
    if (hop__grow((void **)&x->memos, &x->memo_cap, x->nmemos + 1, sizeof *x->memos) != HOP_OK)
        return NULL;
    /* Named as g where the name is free: a transformed body made before it
     * may have taken it (jvp of jvp: the inner loop's `<cond>_jvp` is
     * copied after the outer rule made its own `<cond>_jvp`). */
    hop_graph *c = hop_graph_new_subgraph(x->out, g->name);
    if (c == NULL)
        return NULL;
    if (copy_graph(g, c, x) != HOP_OK || hop_graph_add_subgraph(x->out, c) != HOP_OK) {
        hop_graph_free(c);
        return NULL;
    }
    x->memos[x->nmemos++] = (body_memo){g, c, NULL};
    return c;
}

/* Maps forward argument a into x->out: nodes to their copies, subgraphs to
 * theirs, lists item by item. */
static hop_status
map_arg(xform *x, const hop_arg *a, hop_arg *out)
{
    switch (a->kind) {
    case HOP_ARG_NODE: {
        entry *e = find(x, a->u.node);
        if (e == NULL || e->primal == NULL)
            return hop_error(HOP_MISUSE, "autodiff: %s is used before it is defined in graph %s",
                             a->u.node->name, x->src->name);
        *out = hop_arg_node(e->primal);
        return HOP_OK;
    }
    case HOP_ARG_GRAPH: {
        hop_graph *c = subgraph_copy(x, a->u.graph);
        if (c == NULL)
            return hop_error_code();
        *out = hop_arg_graph(c);
        return HOP_OK;
    }
    case HOP_ARG_LIST: {
        if (hop__grow((void **)&x->scratch, &x->scratch_cap, x->nscratch + 1, sizeof *x->scratch) !=
            HOP_OK)
            return HOP_NOMEM;
        hop_arg *items = hop__calloc(a->u.list.n + 1, sizeof *items);
        if (items == NULL)
            return HOP_NOMEM;
        x->scratch[x->nscratch++] = items;
        for (size_t i = 0; i < a->u.list.n; i++)
            if (map_arg(x, &a->u.list.items[i], &items[i]) != HOP_OK)
                return hop_error_code();
        *out = hop_arg_list(items, a->u.list.n);
        return HOP_OK;
    }
    case HOP_ARG_SYM:
        *out = *a;
        return (out->u.sym = subs_expr(x, a->u.sym)) ? HOP_OK : hop_error_code();
    default:
        *out = *a;
        return HOP_OK;
    }
}

/* Maps every argument of n into args (room for n->nargs). */
static hop_status
map_args(xform *x, const hop_node *n, hop_arg *args)
{
    for (size_t i = 0; i < n->nargs; i++)
        if (map_arg(x, &n->args[i], &args[i]) != HOP_OK)
            return hop_error_code();
    return HOP_OK;
}

/* Copies node n of x->src into x->out and records it; the output node too.
 * The copy keeps n's name where it is free. */
static entry *
copy_node(xform *x, const hop_node *n)
{
    hop_arg *args = hop__calloc(n->nargs + 1, sizeof *args);
    hop_value_info meta, *outs = NULL;
    if (args == NULL)
        return NULL;
    hop_node *c = NULL;
    hop_status st = map_args(x, n, args);
    if (st == HOP_OK && n->meta)
        st = subs_meta(x, n->meta, &meta);
    if (st == HOP_OK && n->nouts && x->nsubs) {
        if ((outs = hop__calloc(n->nouts, sizeof *outs)) == NULL)
            st = HOP_NOMEM;
        for (size_t j = 0; j < n->nouts && st == HOP_OK; j++)
            st = subs_meta(x, &n->outs[j], &outs[j]);
    }
    const hop_value_info *nouts = outs ? outs : n->outs;
    if (st == HOP_OK) {
        hop_graph *g = x->out;
        switch (n->kind) {
        case HOP_NODE_PLACEHOLDER:
            c = hop_graph_placeholder(g, n->name, &meta);
            break;
        case HOP_NODE_CALL_OP:
            c = hop_graph_call_op_meta(g, n->op, args, n->nargs, &meta);
            break;
        case HOP_NODE_CALL_HOP:
            c = hop_graph_call_hop(g, n->cls, args, n->nargs, nouts, n->nouts);
            break;
        case HOP_NODE_GETITEM:
            c = hop_graph_getitem(g, args[0].u.node, (size_t)args[1].u.i);
            break;
        case HOP_NODE_CALL_FOREIGN:
            c = hop_graph_call_foreign(g, n->target, args, n->nargs, nouts, n->nouts, n->flags);
            break;
        case HOP_NODE_OUTPUT:
            c = hop_graph_output(g, args, n->nargs);
            break;
        }
    }
    hop__free(args);
    hop__free(outs);
    scratch_clear(x);
    if (c == NULL)
        return NULL;
    if (n->kind != HOP_NODE_OUTPUT && n->kind != HOP_NODE_PLACEHOLDER &&
        hop_graph_rename_node(x->out, c, n->name) != HOP_OK)
        return NULL;
    return add_entry(x, n, c);
}

static hop_status
copy_guards(const hop_graph *src, hop_graph *dst)
{
    for (size_t i = 0; i < src->nguards; i++)
        if (hop_graph_add_guard(dst, src->guards[i]) != HOP_OK)
            return hop_error_code();
    return HOP_OK;
}

/* dst (empty) becomes a copy of src, subgraphs included, with subs's symbol
 * replacements (NULL for none). */
static hop_status
copy_graph(const hop_graph *src, hop_graph *dst, const xform *subs)
{
    xform x = {.src = src, .out = dst};
    if (subs) {
        x.from = subs->from;
        x.to = subs->to;
        x.nsubs = subs->nsubs;
    }
    hop_status st = copy_guards(src, dst);
    for (const hop_node *n = src->first; n && st == HOP_OK; n = n->next)
        if (copy_node(&x, n) == NULL)
            st = hop_error_code();
    xform_free(&x);
    return st;
}

/* Adds the replacement of symbol e by v unless e is not an unbacked symbol,
 * is v, or is bound already (the first binding wins). */
static void
bind_symbol(xform *x, const hop_expr *e, const hop_expr *v)
{
    if (e == v || !hop_symbol_is_unbacked(e))
        return; /* a backed symbol is an input size: the same everywhere */
    for (size_t k = 0; k < x->nsubs; k++)
        if (x->from[k] == e)
            return;
    x->from[x->nsubs] = e;
    x->to[x->nsubs++] = v;
}

/* The symbols of src's placeholders (a SymInt's, a tensor's sizes) that the
 * inputs bound to them carry as other expressions: replaced in the copy, so
 * a body's index symbol becomes the symbol of the value passed for it. */
static hop_status
bind_symbols(xform *x, const hop_graph *src, hop_node *const *inputs)
{
    size_t cap = 0;
    for (size_t i = 0; i < src->nplaceholders; i++) {
        const hop_value_info *p = hop_graph_placeholder_at(src, i)->meta;
        cap += p->kind == HOP_VALUE_SYM ? 1 : (size_t)p->meta.rank;
    }
    if (cap == 0)
        return HOP_OK;
    x->from = hop__calloc(cap, sizeof *x->from);
    x->to = hop__calloc(cap, sizeof *x->to);
    if (x->from == NULL || x->to == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < src->nplaceholders; i++) {
        const hop_value_info *p = hop_graph_placeholder_at(src, i)->meta;
        const hop_value_info *v = inputs[i] ? inputs[i]->meta : NULL;
        if (v == NULL || v->kind != p->kind)
            continue;
        if (p->kind == HOP_VALUE_SYM)
            bind_symbol(x, p->sym, v->sym);
        for (int d = 0; p->kind == HOP_VALUE_TENSOR && d < p->meta.rank && d < v->meta.rank; d++)
            bind_symbol(x, p->meta.sizes[d], v->meta.sizes[d]);
    }
    return HOP_OK;
}

hop_status
hop_graph_inline(hop_graph *dst, const hop_graph *src, hop_node *const *inputs, hop_node **outputs)
{
    if (dst == NULL || src == NULL || src->output == NULL || (src->nplaceholders && !inputs) ||
        outputs == NULL || dst->env != src->env)
        return hop_error(HOP_MISUSE, "hop_graph_inline: %s",
                         dst == NULL || src == NULL ? "NULL graph"
                         : src->output == NULL      ? "the source graph has no output"
                         : dst->env != src->env     ? "graphs of different ShapeEnvs"
                                                    : "NULL inputs or outputs");
    xform x = {.src = src, .out = dst};
    hop_status st = bind_symbols(&x, src, inputs);
    size_t i = 0;
    for (const hop_node *n = src->first; n && st == HOP_OK; n = n->next) {
        if (n->kind == HOP_NODE_PLACEHOLDER) {
            if (inputs[i] == NULL || add_entry(&x, n, inputs[i]) == NULL)
                st = inputs[i] ? hop_error_code()
                               : hop_error(HOP_MISUSE, "hop_graph_inline: input %zu is NULL", i);
            i++;
        } else if (n->kind == HOP_NODE_OUTPUT) {
            for (size_t j = 0; j < n->nargs && st == HOP_OK; j++) {
                hop_arg a;
                st = map_arg(&x, &n->args[j], &a);
                outputs[j] = st == HOP_OK && a.kind == HOP_ARG_NODE ? a.u.node : NULL;
            }
            scratch_clear(&x);
        } else if (copy_node(&x, n) == NULL)
            st = hop_error_code();
    }
    xform_free(&x);
    subs_free(&x);
    return st;
}

/* ------------------------------------------------------------ helpers */

static bool
is_float_tensor(const hop_value_info *v)
{
    return v->kind == HOP_VALUE_TENSOR && hop_dtype_is_float(v->meta.dtype);
}

/* Whether any node argument of a (lists included) satisfies the entry test. */
static bool
any_active(const xform *x, const hop_arg *a, size_t n, bool tangents)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].kind == HOP_ARG_LIST && any_active(x, a[i].u.list.items, a[i].u.list.n, tangents))
            return true;
        if (a[i].kind != HOP_ARG_NODE)
            continue;
        const entry *e = find(x, a[i].u.node);
        if (e == NULL)
            continue;
        if (tangents ? e->slots[0] != NULL : e->active)
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

typedef hop_status (*transform_fn)(const hop_graph *fwd, const bool *wrt, hop_graph *out);

static hop_status
vjp_body_transform(const hop_graph *fwd, const bool *wrt, hop_graph *out)
{
    return hop_vjp_graph(fwd, wrt, NULL, out);
}

/* The transformed version of body in x->out, made once per (body, wrt). */
static hop_status
transformed_body(xform *x, const hop_graph *body, const bool *wrt, const char *suffix,
                 transform_fn fn, hop_graph **result)
{
    size_t n = body->nplaceholders;
    char *mask = hop__calloc(n + 2, 1);
    if (mask == NULL)
        return HOP_NOMEM;
    mask[0] = suffix[1]; /* 'b' or 'j': a vjp and a jvp body differ */
    for (size_t i = 0; i < n; i++)
        mask[i + 1] = wrt[i] ? '1' : '0';
    for (size_t i = 0; i < x->nmemos; i++)
        if (x->memos[i].src == body && x->memos[i].mask && strcmp(x->memos[i].mask, mask) == 0) {
            hop__free(mask);
            *result = x->memos[i].dst;
            return HOP_OK;
        }
    char base[256];
    snprintf(base, sizeof base, "%s%s", body->name, suffix);
    hop_graph *g = NULL;
    hop_status st = hop__grow((void **)&x->memos, &x->memo_cap, x->nmemos + 1, sizeof *x->memos);
    if (st == HOP_OK && (g = hop_graph_new_subgraph(x->out, base)) == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = fn(body, wrt, g);
    if (st == HOP_OK)
        st = hop_graph_add_subgraph(x->out, g);
    if (st != HOP_OK) {
        hop_graph_free(g);
        hop__free(mask);
        return st;
    }
    x->memos[x->nmemos++] = (body_memo){body, g, mask};
    *result = g;
    return HOP_OK;
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
        return hop_error(HOP_UNSUPPORTED, "autodiff: the op %s (%s) has no %s rule", n->target,
                         n->name, mode);
    return hop_error(HOP_UNSUPPORTED, "autodiff: the %s %s (%s) has no %s rule",
                     n->kind == HOP_NODE_CALL_HOP ? "HOP" : "foreign kernel", n->target, n->name,
                     mode);
}

/* Whether a class without a vjp/jvp slot is wrap-like: its lowering and its
 * evaluation are the base's (run the one body on the passed values). */
static bool
wrap_like(const hop_class *cls)
{
    return HOP_CLASS_SLOT_OWNER(cls, lower) == NULL && HOP_CLASS_SLOT_OWNER(cls, eval) == NULL;
}

/* ------------------------------------------------------------ reverse */

hop_graph *
hop_vjp_out(hop_vjp_ctx *cx)
{
    return cx->x.out;
}

hop_node *
hop_vjp_primal(hop_vjp_ctx *cx, const hop_node *v)
{
    entry *e = v ? find(&cx->x, v) : NULL;
    return e ? e->primal : NULL;
}

bool
hop_vjp_active(hop_vjp_ctx *cx, const hop_node *v)
{
    entry *e = v ? find(&cx->x, v) : NULL;
    return e && e->active;
}

hop_node *
hop_vjp_ct(hop_vjp_ctx *cx, const hop_node *call, size_t i)
{
    entry *e = call ? find(&cx->x, call) : NULL;
    return e && i < e->nslots ? e->slots[i] : NULL;
}

hop_node *
hop_vjp_zeros(hop_vjp_ctx *cx, const hop_value_info *meta)
{
    return hop__ad_full(cx->x.out, &meta->meta, 0.0);
}

/* Adds g to slot i of e (no reshaping). */
static hop_status
add_to_slot(xform *x, entry *e, size_t i, hop_node *g)
{
    if (e->slots[i] != NULL && (g = hop__ad_op2(x->out, HOP_OP_add, e->slots[i], g)) == NULL)
        return hop_error_code();
    e->slots[i] = g;
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
    entry *e = find(&cx->x, v);
    if (e == NULL || !e->active || !is_float_tensor(v->meta))
        return HOP_OK;
    if ((g = hop__ad_sum_to(cx->x.out, g, &v->meta->meta)) == NULL)
        return hop_error_code();
    return add_to_slot(&cx->x, e, 0, g);
}

hop_status
hop_vjp_body(hop_vjp_ctx *cx, const hop_graph *body, const bool *wrt, hop_graph **bwd)
{
    return transformed_body(&cx->x, body, wrt, "_bwd", vjp_body_transform, bwd);
}

static hop_status
vjp_node(hop_vjp_ctx *cx, const hop_node *n)
{
    entry *e = find(&cx->x, n);
    bool any = false;
    for (size_t i = 0; i < e->nslots; i++)
        any = any || e->slots[i] != NULL;
    if (!e->active || !any)
        return HOP_OK;
    switch (n->kind) {
    case HOP_NODE_GETITEM: {
        entry *call = find(&cx->x, n->args[0].u.node);
        return add_to_slot(&cx->x, call, (size_t)n->args[1].u.i, e->slots[0]);
    }
    case HOP_NODE_CALL_OP: {
        const hop_op_ad_rule *r = hop_op_ad(n->op);
        if (r && r->nondiff)
            return HOP_OK;
        return r && r->vjp ? r->vjp(cx, n) : no_rule(n, "vjp");
    }
    case HOP_NODE_CALL_HOP: {
        const hop_class *owner = HOP_CLASS_SLOT_OWNER(n->cls, vjp);
        if (owner)
            return owner->vjp(cx, n);
        return wrap_like(n->cls) ? hop_vjp_bodies(cx, n) : no_rule(n, "vjp");
    }
    case HOP_NODE_CALL_FOREIGN:
        return no_rule(n, "vjp");
    default:
        return HOP_OK;
    }
}

/* The seed of output j (kind k) accumulated into its value. */
static hop_status
seed_output(hop_vjp_ctx *cx, size_t j, hop_ct_kind k)
{
    const hop_arg *a = &cx->x.src->output->args[j];
    char what[128];
    if (k == HOP_CT_NONE)
        return HOP_OK;
    if (a->kind != HOP_ARG_NODE || !is_float_tensor(a->u.node->meta))
        return hop_error(HOP_DTYPE, "autodiff: output %zu of graph %s (%s) is not a float tensor",
                         j, cx->x.src->name,
                         a->kind == HOP_ARG_NODE ? describe(a->u.node->meta, what, sizeof what)
                                                 : "a constant");
    const hop_node *v = a->u.node;
    hop_node *seed;
    if (k == HOP_CT_INPUT) {
        char name[256];
        snprintf(name, sizeof name, "%s_ct", v->name);
        seed = hop_graph_placeholder(cx->x.out, name, v->meta);
    } else
        seed = hop__ad_full(cx->x.out, &v->meta->meta, 1.0);
    if (seed == NULL)
        return hop_error_code();
    return hop_vjp_accumulate(cx, v, seed);
}

/* Copies the forward graph, marking what depends on a wrt input. */
static hop_status
forward_copy(xform *x, const bool *wrt, const char *mode)
{
    size_t k = 0;
    for (const hop_node *n = x->src->first; n && n != x->src->output; n = n->next) {
        entry *e = copy_node(x, n);
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
            e->active = true;
        } else if (n->kind == HOP_NODE_GETITEM)
            e->active = find(x, n->args[0].u.node)->active && is_float_tensor(n->meta);
        else
            e->active = any_active(x, n->args, n->nargs, false);
    }
    return HOP_OK;
}

hop_status
hop_vjp_graph(const hop_graph *fwd, const bool *wrt, const hop_ct_kind *cts, hop_graph *out)
{
    hop_status st = check_call("hop_vjp_graph", fwd, out);
    if (st != HOP_OK)
        return st;
    hop_vjp_ctx cx = {{.src = fwd, .out = out}};
    st = copy_guards(fwd, out);
    if (st == HOP_OK)
        st = forward_copy(&cx.x, wrt, "grad");
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
        st = map_arg(&cx.x, &o->args[j], &args[j]);
    size_t k = o->nargs, i = 0;
    for (const hop_node *p = fwd->first; p && p->kind == HOP_NODE_PLACEHOLDER && st == HOP_OK;
         p = p->next, i++) {
        if (!wrt || !wrt[i])
            continue;
        hop_node *g = find(&cx.x, p)->slots[0];
        if (g == NULL && (g = hop_vjp_zeros(&cx, p->meta)) == NULL)
            st = hop_error_code();
        args[k++] = hop_arg_node(g);
    }
    if (st == HOP_OK && hop_graph_output(out, args, k) == NULL)
        st = hop_error_code();
    hop__free(args);
    xform_free(&cx.x);
    if (st != HOP_OK)
        return st;
    hop_graph_dce(out);
    return hop_graph_verify(out);
}

/* ------------------------------------------------------------ forward */

hop_graph *
hop_jvp_out(hop_jvp_ctx *cx)
{
    return cx->x.out;
}

hop_node *
hop_jvp_primal(hop_jvp_ctx *cx, const hop_node *v)
{
    entry *e = v ? find(&cx->x, v) : NULL;
    return e ? e->primal : NULL;
}

hop_node *
hop_jvp_tangent(hop_jvp_ctx *cx, const hop_node *v)
{
    entry *e = v ? find(&cx->x, v) : NULL;
    return e ? e->slots[0] : NULL;
}

hop_status
hop_jvp_set_tangent(hop_jvp_ctx *cx, const hop_node *call, size_t i, hop_node *t)
{
    entry *e = call ? find(&cx->x, call) : NULL;
    if (e == NULL || i >= e->nslots || t == NULL)
        return hop_error(HOP_MISUSE, "hop_jvp_set_tangent: %s",
                         e == NULL   ? "not a node of the forward graph"
                         : t == NULL ? "NULL tangent"
                                     : "output index out of range");
    /* A tangent has its value's metadata (a rule computing in a wider
     * dtype converts back). */
    const hop_value_info *m = call->kind == HOP_NODE_CALL_HOP || call->kind == HOP_NODE_CALL_FOREIGN
                                  ? &call->outs[i]
                                  : call->meta;
    if (m->kind == HOP_VALUE_TENSOR && (t = hop__ad_to(cx->x.out, t, m->meta.dtype)) == NULL)
        return hop_error_code();
    e->slots[i] = t;
    return HOP_OK;
}

hop_node *
hop_jvp_zeros(hop_jvp_ctx *cx, const hop_value_info *meta)
{
    return hop__ad_full(cx->x.out, &meta->meta, 0.0);
}

static hop_status
jvp_body_transform(const hop_graph *fwd, const bool *wrt, hop_graph *out)
{
    return hop_jvp_graph(fwd, wrt, out);
}

hop_status
hop_jvp_body(hop_jvp_ctx *cx, const hop_graph *body, const bool *wrt, hop_graph **jvp)
{
    return transformed_body(&cx->x, body, wrt, "_jvp", jvp_body_transform, jvp);
}

static hop_status
jvp_node(hop_jvp_ctx *cx, const hop_node *n)
{
    if (n->kind == HOP_NODE_GETITEM) {
        /* Its own output's tangent: any_active reads a call's first slot
         * only, which is empty when output 0 has none (an int carry before
         * a float one) while this output has one. */
        entry *call = find(&cx->x, n->args[0].u.node);
        find(&cx->x, n)->slots[0] = call->slots[(size_t)n->args[1].u.i];
        return HOP_OK;
    }
    if (!any_active(&cx->x, n->args, n->nargs, true))
        return HOP_OK;
    switch (n->kind) {
    case HOP_NODE_CALL_OP: {
        const hop_op_ad_rule *r = hop_op_ad(n->op);
        if (r && r->nondiff)
            return HOP_OK;
        return r && r->jvp ? r->jvp(cx, n) : no_rule(n, "jvp");
    }
    case HOP_NODE_CALL_HOP: {
        const hop_class *owner = HOP_CLASS_SLOT_OWNER(n->cls, jvp);
        if (owner)
            return owner->jvp(cx, n);
        return wrap_like(n->cls) ? hop_jvp_bodies(cx, n) : no_rule(n, "jvp");
    }
    case HOP_NODE_CALL_FOREIGN:
        return no_rule(n, "jvp");
    default:
        return HOP_OK;
    }
}

hop_status
hop_jvp_graph(const hop_graph *fwd, const bool *wrt, hop_graph *out)
{
    hop_status st = check_call("hop_jvp_graph", fwd, out);
    if (st != HOP_OK)
        return st;
    hop_jvp_ctx cx = {{.src = fwd, .out = out}};
    st = copy_guards(fwd, out);
    const hop_node *n = fwd->first;
    /* The placeholders, then one tangent per wrt input. */
    for (; n && n->kind == HOP_NODE_PLACEHOLDER && st == HOP_OK; n = n->next)
        if (copy_node(&cx.x, n) == NULL)
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
            find(&cx.x, p)->slots[0] = t;
    }
    for (; n && n != fwd->output && st == HOP_OK; n = n->next) {
        if (copy_node(&cx.x, n) == NULL)
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
        st = map_arg(&cx.x, &o->args[j], &args[j]);
    for (size_t j = 0; j < o->nargs && st == HOP_OK; j++) {
        const hop_arg *a = &o->args[j];
        if (a->kind != HOP_ARG_NODE || a->u.node->meta->kind != HOP_VALUE_TENSOR)
            continue;
        hop_node *t = hop_jvp_tangent(&cx, a->u.node);
        if (t == NULL && (t = hop_jvp_zeros(&cx, a->u.node->meta)) == NULL)
            st = hop_error_code();
        args[k++] = hop_arg_node(t);
    }
    if (st == HOP_OK && hop_graph_output(out, args, k) == NULL)
        st = hop_error_code();
    hop__free(args);
    xform_free(&cx.x);
    if (st != HOP_OK)
        return st;
    hop_graph_dce(out);
    return hop_graph_verify(out);
}

/* ------------------------------------------------ rules of wrap-like HOPs */

/* The layout of a call: how many leads, then bodies (HOP_ARG_GRAPH), then
 * lists; the values passed and how many inputs the HOP makes. */
typedef struct call_layout {
    size_t nlead, nbodies;
    size_t nkeep; /* the bodies the emitted call keeps (the first ones) */
    size_t npassed, made;
    const hop_arg **passed;
} call_layout;

static hop_status
layout_of(const hop_node *call, call_layout *l)
{
    memset(l, 0, sizeof *l);
    /* the leads are the arguments before the first body */
    while (l->nlead < call->nargs && call->args[l->nlead].kind != HOP_ARG_GRAPH)
        l->nlead++;
    while (l->nlead + l->nbodies < call->nargs &&
           call->args[l->nlead + l->nbodies].kind == HOP_ARG_GRAPH)
        l->nbodies++;
    l->nkeep = l->nbodies;
    if (l->nlead + l->nbodies >= call->nargs || call->args[call->nargs - 1].kind != HOP_ARG_LIST)
        return hop_error(HOP_UNSUPPORTED,
                         "autodiff: the HOP %s (%s) passes no list of values to its bodies",
                         call->target, call->name);
    l->npassed = hop_node_passed(call, NULL, 0);
    l->made = hop_node_made_inputs(call);
    l->passed = hop__calloc(l->npassed + 1, sizeof *l->passed);
    if (l->passed == NULL)
        return HOP_NOMEM;
    hop_node_passed(call, l->passed, l->npassed);
    return HOP_OK;
}

/*
 * Emits cls(leads, new bodies, lists + extra appended to the last list) in
 * x->out with outputs call's and then more[nmore]; returns the call.
 */
static hop_node *
emit_same_hop(xform *x, const hop_node *call, const call_layout *l, hop_graph **bodies,
              hop_node **extra, size_t nextra, const hop_value_info *more, size_t nmore)
{
    hop_arg *args = hop__calloc(call->nargs + 1, sizeof *args);
    hop_value_info *outs = hop__calloc(call->nouts + nmore + 1, sizeof *outs);
    hop_arg *last = NULL;
    hop_node *r = NULL;
    if (args == NULL || outs == NULL)
        goto done;
    size_t nargs = 0;
    for (size_t i = 0; i < call->nargs; i++) {
        if (i >= l->nlead + l->nkeep && i < l->nlead + l->nbodies)
            continue;
        if (i >= l->nlead && i < l->nlead + l->nkeep)
            args[nargs++] = hop_arg_graph(bodies[i - l->nlead]);
        else if (map_arg(x, &call->args[i], &args[nargs++]) != HOP_OK)
            goto done;
    }
    const hop_arg *tail = &args[nargs - 1];
    if ((last = hop__calloc(tail->u.list.n + nextra + 1, sizeof *last)) == NULL)
        goto done;
    memcpy(last, tail->u.list.items, tail->u.list.n * sizeof *last);
    for (size_t i = 0; i < nextra; i++)
        last[tail->u.list.n + i] = hop_arg_node(extra[i]);
    args[nargs - 1] = hop_arg_list(last, tail->u.list.n + nextra);
    memcpy(outs, call->outs, call->nouts * sizeof *outs);
    memcpy(outs + call->nouts, more, nmore * sizeof *outs);
    r = hop_graph_call_hop(x->out, call->cls, args, nargs, outs, call->nouts + nmore);
done:
    hop__free(args);
    hop__free(outs);
    hop__free(last);
    scratch_clear(x);
    return r;
}

static hop_status
vjp_bodies(hop_vjp_ctx *cx, const hop_node *call, bool first_only)
{
    call_layout l;
    hop_status st = layout_of(call, &l);
    if (st != HOP_OK)
        return st;
    if (first_only && l.nbodies > 0)
        l.nkeep = 1;
    size_t nph = l.made + l.npassed, nct = 0, ng = 0;
    bool *wrt = hop__calloc(nph + 1, sizeof *wrt);
    hop_node **cts = hop__calloc(call->nouts + 1, sizeof *cts);
    hop_value_info *more = hop__calloc(l.npassed + 1, sizeof *more);
    hop_graph *bodies[HOP_MAX_BODIES];
    if (wrt == NULL || cts == NULL || more == NULL)
        st = HOP_NOMEM;
    for (size_t j = 0; j < l.npassed && st == HOP_OK; j++) {
        const hop_arg *a = l.passed[j];
        if (a->kind == HOP_ARG_NODE && hop_vjp_active(cx, a->u.node) &&
            is_float_tensor(a->u.node->meta)) {
            wrt[l.made + j] = true;
            more[ng++] = *a->u.node->meta;
        }
    }
    for (size_t b = 0; b < l.nkeep && st == HOP_OK && ng > 0; b++)
        st = hop_vjp_body(cx, call->args[l.nlead + b].u.graph, wrt, &bodies[b]);
    for (size_t i = 0; i < call->nouts && st == HOP_OK && ng > 0; i++) {
        if (!is_float_tensor(&call->outs[i]))
            continue;
        hop_node *ct = hop_vjp_ct(cx, call, i);
        if (ct == NULL && (ct = hop_vjp_zeros(cx, &call->outs[i])) == NULL)
            st = hop_error_code();
        cts[nct++] = ct;
    }
    hop_node *bwd = NULL;
    if (st == HOP_OK && ng > 0 &&
        (bwd = emit_same_hop(&cx->x, call, &l, bodies, cts, nct, more, ng)) == NULL)
        st = hop_error_code();
    for (size_t j = 0, k = 0; j < l.npassed && st == HOP_OK && bwd; j++) {
        if (!wrt[l.made + j])
            continue;
        hop_node *g = hop_graph_getitem(cx->x.out, bwd, call->nouts + k++);
        st = g ? hop_vjp_accumulate(cx, l.passed[j]->u.node, g) : hop_error_code();
    }
    hop__free(wrt);
    hop__free(cts);
    hop__free(more);
    hop__free(l.passed);
    return st;
}

static hop_status
jvp_bodies(hop_jvp_ctx *cx, const hop_node *call, bool first_only)
{
    call_layout l;
    hop_status st = layout_of(call, &l);
    if (st != HOP_OK)
        return st;
    if (first_only && l.nbodies > 0)
        l.nkeep = 1;
    size_t nph = l.made + l.npassed, nt = 0, nmore = 0;
    bool *wrt = hop__calloc(nph + 1, sizeof *wrt);
    hop_node **tangents = hop__calloc(l.npassed + 1, sizeof *tangents);
    hop_value_info *more = hop__calloc(call->nouts + 1, sizeof *more);
    hop_graph *bodies[HOP_MAX_BODIES];
    if (wrt == NULL || tangents == NULL || more == NULL)
        st = HOP_NOMEM;
    for (size_t j = 0; j < l.npassed && st == HOP_OK; j++) {
        const hop_arg *a = l.passed[j];
        hop_node *t = a->kind == HOP_ARG_NODE ? hop_jvp_tangent(cx, a->u.node) : NULL;
        if (t != NULL && is_float_tensor(a->u.node->meta)) {
            wrt[l.made + j] = true;
            tangents[nt++] = t;
        }
    }
    for (size_t i = 0; i < call->nouts; i++)
        if (call->outs[i].kind == HOP_VALUE_TENSOR)
            more[nmore++] = call->outs[i];
    for (size_t b = 0; b < l.nkeep && st == HOP_OK && nt > 0; b++)
        st = hop_jvp_body(cx, call->args[l.nlead + b].u.graph, wrt, &bodies[b]);
    hop_node *jc = NULL;
    if (st == HOP_OK && nt > 0 &&
        (jc = emit_same_hop(&cx->x, call, &l, bodies, tangents, nt, more, nmore)) == NULL)
        st = hop_error_code();
    for (size_t i = 0, k = 0; i < call->nouts && st == HOP_OK && jc; i++) {
        if (call->outs[i].kind != HOP_VALUE_TENSOR)
            continue;
        hop_node *t = hop_graph_getitem(cx->x.out, jc, call->nouts + k++);
        st = t ? hop_jvp_set_tangent(cx, call, i, t) : hop_error_code();
    }
    hop__free(wrt);
    hop__free(tangents);
    hop__free(more);
    hop__free(l.passed);
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
