/*
 * graph/rewrite.c - the rewrite engine (hop/rewrite.h): the map from source
 * nodes to their entries, copying nodes and subgraphs with mapped arguments
 * and replaced symbols, the memo of transformed bodies, and the whole-graph
 * operations built on them (copy, inline).  Reverse mode, forward mode and
 * vmap are walks over one source graph that keep their facts in these
 * entries; everything they copy as it is goes through here.
 */
#include "graph/graph_impl.h"
#include "hop/class.h"
#include "hop/rewrite.h"

#include <string.h>

/* An entry; its arrays are one block: vals[n], aux[n], flags[n]. */
typedef struct rw_node {
    hop_rewrite_entry e;
    UT_hash_handle hh;
} rw_node;

void
hop_rewrite_init(hop_rewrite *rw, const hop_graph *src, hop_graph *out, const char *who)
{
    memset(rw, 0, sizeof *rw);
    rw->src = src;
    rw->out = out;
    rw->who = who;
}

void
hop_rewrite_clear(hop_rewrite *rw)
{
    rw_node *head = rw->map, *r, *tmp;
    HASH_ITER(hh, head, r, tmp)
    {
        HASH_DEL(head, r);
        hop__free(r->e.vals);
        hop__free(r);
    }
    rw->map = NULL;
    for (size_t i = 0; i < rw->nmemos; i++)
        hop__free(rw->memos[i].key);
    hop__free(rw->memos);
    hop_rewrite_scratch_clear(rw);
    hop__free(rw->scratch);
    if (rw->own_subs) {
        hop__free((void *)rw->from);
        hop__free((void *)rw->to);
    }
    hop_rewrite_init(rw, rw->src, rw->out, rw->who);
}

hop_rewrite_entry *
hop_rewrite_find(const hop_rewrite *rw, const hop_node *n)
{
    rw_node *head = rw->map, *r = NULL;
    HASH_FIND_PTR(head, &n, r);
    return r ? &r->e : NULL;
}

hop_rewrite_entry *
hop_rewrite_add(hop_rewrite *rw, const hop_node *n)
{
    size_t k = n->kind == HOP_NODE_CALL_HOP || n->kind == HOP_NODE_CALL_FOREIGN ? n->nouts : 1;
    size_t ptrs = (k + 1) * sizeof(hop_node *);
    rw_node *r = hop__calloc(1, sizeof *r);
    char *arrays = r ? hop__calloc(1, 2 * ptrs + k + 1) : NULL;
    if (arrays == NULL) {
        hop__free(r);
        return NULL;
    }
    r->e.src = n;
    r->e.n = k;
    r->e.vals = (hop_node **)arrays;
    r->e.aux = (hop_node **)(arrays + ptrs);
    r->e.flags = (bool *)(arrays + 2 * ptrs);
    rw_node *head = rw->map;
    hop_status st;
    HOP_HASH_ADD(st, hh, head, e.src, sizeof r->e.src, r);
    rw->map = head;
    if (st != HOP_OK) {
        hop__free(arrays);
        hop__free(r);
        return NULL;
    }
    return &r->e;
}

hop_node *
hop_rewrite_value(hop_rewrite *rw, hop_rewrite_entry *e, size_t i)
{
    if (i >= e->n)
        return NULL;
    if (e->vals[i] == NULL && e->copy != NULL)
        e->vals[i] = e->n == 1 && e->copy->kind != HOP_NODE_CALL_HOP &&
                             e->copy->kind != HOP_NODE_CALL_FOREIGN
                         ? e->copy
                         : hop_graph_getitem(rw->out, e->copy, i);
    return e->vals[i];
}

void
hop_rewrite_scratch_clear(hop_rewrite *rw)
{
    for (size_t i = 0; i < rw->nscratch; i++)
        hop__free(rw->scratch[i]);
    rw->nscratch = 0;
}

/* Room for n list items, freed with the scratch. */
static hop_arg *
scratch_items(hop_rewrite *rw, size_t n)
{
    if (hop__grow((void **)&rw->scratch, &rw->scratch_cap, rw->nscratch + 1, sizeof *rw->scratch) !=
        HOP_OK)
        return NULL;
    hop_arg *items = hop__calloc(n + 1, sizeof *items);
    if (items != NULL)
        rw->scratch[rw->nscratch++] = items;
    return items;
}

/* ------------------------------------------------------------ symbols */

/* e with the rewrite's symbols replaced. */
static const hop_expr *
subs_expr(const hop_rewrite *rw, const hop_expr *e)
{
    return rw->nsubs ? hop_sym_subs(rw->out->env, e, rw->from, rw->to, rw->nsubs) : e;
}

/* *out = *v with the rewrite's symbols replaced. */
static hop_status
subs_meta(const hop_rewrite *rw, const hop_value_info *v, hop_value_info *out)
{
    *out = *v;
    if (rw->nsubs == 0)
        return HOP_OK;
    if (v->kind == HOP_VALUE_SYM && (out->sym = subs_expr(rw, v->sym)) == NULL)
        return hop_error_code();
    for (int d = 0; v->kind == HOP_VALUE_TENSOR && d < v->meta.rank; d++)
        if ((out->meta.sizes[d] = subs_expr(rw, v->meta.sizes[d])) == NULL)
            return hop_error_code();
    return HOP_OK;
}

/* Adds the replacement of symbol e by v unless e is not an unbacked symbol,
 * is v, or is bound already (the first binding wins). */
static void
bind_symbol(hop_rewrite *rw, const hop_expr *e, const hop_expr *v)
{
    if (e == v || !hop_symbol_is_unbacked(e))
        return; /* a backed symbol is an input size: the same everywhere */
    for (size_t k = 0; k < rw->nsubs; k++)
        if (rw->from[k] == e)
            return;
    rw->from[rw->nsubs] = e;
    rw->to[rw->nsubs++] = v;
}

/* The symbols of src's placeholders (a SymInt's, a tensor's sizes) that the
 * inputs bound to them carry as other expressions: replaced in the copy, so
 * a body's index symbol becomes the symbol of the value passed for it. */
static hop_status
bind_symbols(hop_rewrite *rw, const hop_graph *src, hop_node *const *inputs)
{
    size_t cap = 0;
    for (const hop_node *p = src->first; p && p->kind == HOP_NODE_PLACEHOLDER; p = p->next)
        cap += p->meta->kind == HOP_VALUE_SYM ? 1 : (size_t)p->meta->meta.rank;
    if (cap == 0)
        return HOP_OK;
    rw->own_subs = true;
    rw->from = hop__calloc(cap, sizeof *rw->from);
    rw->to = hop__calloc(cap, sizeof *rw->to);
    if (rw->from == NULL || rw->to == NULL)
        return HOP_NOMEM;
    size_t i = 0;
    for (const hop_node *q = src->first; q && q->kind == HOP_NODE_PLACEHOLDER; q = q->next, i++) {
        const hop_value_info *p = q->meta, *v = inputs[i] ? inputs[i]->meta : NULL;
        if (v == NULL || v->kind != p->kind)
            continue;
        if (p->kind == HOP_VALUE_SYM)
            bind_symbol(rw, p->sym, v->sym);
        for (int d = 0; p->kind == HOP_VALUE_TENSOR && d < p->meta.rank && d < v->meta.rank; d++)
            bind_symbol(rw, p->meta.sizes[d], v->meta.sizes[d]);
    }
    return HOP_OK;
}

/* ------------------------------------------------------------ copying */

/* dst (empty) becomes a copy of src with the symbols of subs (NULL: none)
 * replaced. */
static hop_status
copy_graph(const hop_graph *src, hop_graph *dst, const hop_rewrite *subs)
{
    hop_rewrite rw;
    hop_rewrite_init(&rw, src, dst, subs ? subs->who : "hop_graph_copy");
    if (subs) {
        rw.from = subs->from;
        rw.to = subs->to;
        rw.nsubs = subs->nsubs;
    }
    hop_status st = hop_graph_copy_guards(src, dst);
    for (const hop_node *n = src->first; n && st == HOP_OK; n = n->next)
        if (hop_rewrite_copy(&rw, n, NULL) == NULL)
            st = hop_error_code();
    hop_rewrite_clear(&rw);
    return st;
}

hop_graph *
hop_rewrite_subgraph(hop_rewrite *rw, const hop_graph *g)
{
    hop_graph *c = hop_rewrite_memo_find(rw, g, NULL);
    if (c != NULL)
        return c;
    if (hop__grow((void **)&rw->memos, &rw->memo_cap, rw->nmemos + 1, sizeof *rw->memos) != HOP_OK)
        return NULL;
    /* Named as g where the name is free: a transformed body made before it
     * may have taken it (jvp of jvp: the inner loop's `<cond>_jvp` is
     * copied after the outer rule made its own `<cond>_jvp`). */
    if ((c = hop_graph_new_subgraph(rw->out, g->name)) == NULL)
        return NULL;
    if (copy_graph(g, c, rw) != HOP_OK || hop_graph_add_subgraph(rw->out, c) != HOP_OK) {
        hop_graph_free(c);
        return NULL;
    }
    rw->memos[rw->nmemos++] = (hop_rewrite_memo){g, c, NULL};
    return c;
}

hop_status
hop_rewrite_map_arg(hop_rewrite *rw, const hop_arg *a, hop_arg *out)
{
    switch (a->kind) {
    case HOP_ARG_NODE: {
        hop_rewrite_entry *e = hop_rewrite_find(rw, a->u.node);
        hop_node *v = e ? hop_rewrite_value(rw, e, 0) : NULL;
        if (v == NULL)
            return e && e->copy ? hop_error_code()
                                : hop_error(HOP_MISUSE,
                                            "%s: %s is used before it is defined in "
                                            "graph %s",
                                            rw->who, a->u.node->name, rw->src->name);
        *out = hop_arg_node(v);
        return HOP_OK;
    }
    case HOP_ARG_GRAPH: {
        hop_graph *c = hop_rewrite_subgraph(rw, a->u.graph);
        if (c == NULL)
            return hop_error_code();
        *out = hop_arg_graph(c);
        return HOP_OK;
    }
    case HOP_ARG_LIST: {
        hop_arg *items = scratch_items(rw, a->u.list.n);
        if (items == NULL)
            return HOP_NOMEM;
        for (size_t i = 0; i < a->u.list.n; i++)
            if (hop_rewrite_map_arg(rw, &a->u.list.items[i], &items[i]) != HOP_OK)
                return hop_error_code();
        *out = hop_arg_list(items, a->u.list.n);
        return HOP_OK;
    }
    case HOP_ARG_SYM:
        *out = *a;
        return (out->u.sym = subs_expr(rw, a->u.sym)) ? HOP_OK : hop_error_code();
    default:
        *out = *a;
        return HOP_OK;
    }
}

hop_status
hop_rewrite_map_args(hop_rewrite *rw, const hop_node *n, hop_arg *args)
{
    for (size_t i = 0; i < n->nargs; i++)
        if (hop_rewrite_map_arg(rw, &n->args[i], &args[i]) != HOP_OK)
            return hop_error_code();
    return HOP_OK;
}

/* The getitem n (its call copied as it is): the call's value, named as n. */
static hop_node *
copy_getitem(hop_rewrite *rw, const hop_node *n)
{
    hop_rewrite_entry *call = hop_rewrite_find(rw, n->args[0].u.node);
    if (call == NULL || call->copy == NULL) {
        hop_error(HOP_MISUSE, "%s: getitem %s of a call that was not copied", rw->who, n->name);
        return NULL;
    }
    /* a second getitem of the same output is a second node, as in the
     * source: each keeps its name */
    size_t i = (size_t)n->args[1].u.i;
    hop_node *v = i < call->n && call->vals[i] ? hop_graph_getitem(rw->out, call->copy, i)
                                               : hop_rewrite_value(rw, call, i);
    if (v != NULL && hop_graph_rename_node(rw->out, v, n->name) != HOP_OK)
        return NULL;
    return v;
}

/* The copy of n in rw->out (not a getitem): n's kind over args. */
static hop_node *
copy_as(hop_rewrite *rw, const hop_node *n, const hop_arg *args)
{
    hop_value_info meta, *outs = NULL;
    hop_status st = n->meta ? subs_meta(rw, n->meta, &meta) : HOP_OK;
    if (st == HOP_OK && n->nouts && rw->nsubs) {
        if ((outs = hop__calloc(n->nouts, sizeof *outs)) == NULL)
            st = HOP_NOMEM;
        for (size_t j = 0; j < n->nouts && st == HOP_OK; j++)
            st = subs_meta(rw, &n->outs[j], &outs[j]);
    }
    const hop_value_info *nouts = outs ? outs : n->outs;
    hop_graph *g = rw->out;
    hop_node *c = NULL;
    if (st == HOP_OK) {
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
        case HOP_NODE_CALL_FOREIGN:
            c = hop_graph_call_foreign(g, hop_node_target(n), args, n->nargs, nouts, n->nouts,
                                       n->flags);
            break;
        case HOP_NODE_OUTPUT:
            c = hop_graph_output(g, args, n->nargs);
            break;
        case HOP_NODE_GETITEM:
            break;
        }
    }
    hop__free(outs);
    if (c != NULL && n->kind != HOP_NODE_OUTPUT && n->kind != HOP_NODE_PLACEHOLDER &&
        hop_graph_rename_node(g, c, n->name) != HOP_OK)
        return NULL;
    return c;
}

hop_rewrite_entry *
hop_rewrite_copy(hop_rewrite *rw, const hop_node *n, hop_rewrite_entry *e)
{
    hop_node *c = NULL;
    if (n->kind == HOP_NODE_GETITEM) {
        c = copy_getitem(rw, n);
    } else {
        hop_arg *args = hop__calloc(n->nargs + 1, sizeof *args);
        if (args == NULL)
            return NULL;
        if (hop_rewrite_map_args(rw, n, args) == HOP_OK)
            c = copy_as(rw, n, args);
        hop__free(args);
        hop_rewrite_scratch_clear(rw);
    }
    if (c == NULL || (e == NULL && (e = hop_rewrite_add(rw, n)) == NULL))
        return NULL;
    e->copy = c;
    if (e->n == 1 && n->kind != HOP_NODE_CALL_HOP && n->kind != HOP_NODE_CALL_FOREIGN)
        e->vals[0] = c;
    return e;
}

/* ------------------------------------------------------------ memo */

hop_graph *
hop_rewrite_memo_find(const hop_rewrite *rw, const hop_graph *src, const char *key)
{
    for (size_t i = 0; i < rw->nmemos; i++) {
        const hop_rewrite_memo *m = &rw->memos[i];
        if (m->src == src && (key == NULL ? m->key == NULL : m->key && strcmp(m->key, key) == 0))
            return m->dst;
    }
    return NULL;
}

hop_status
hop_rewrite_memo_add(hop_rewrite *rw, const hop_graph *src, const char *key, hop_graph *dst)
{
    char *k = NULL;
    if (key != NULL) {
        size_t n = strlen(key) + 1;
        if ((k = hop__calloc(n, 1)) == NULL)
            return HOP_NOMEM;
        memcpy(k, key, n);
    }
    if (hop__grow((void **)&rw->memos, &rw->memo_cap, rw->nmemos + 1, sizeof *rw->memos) !=
        HOP_OK) {
        hop__free(k);
        return HOP_NOMEM;
    }
    rw->memos[rw->nmemos++] = (hop_rewrite_memo){src, dst, k};
    return HOP_OK;
}

/* ------------------------------------------------------------ calls */

hop_node *
hop_rewrite_call(hop_rewrite *rw, const hop_node *call, hop_graph *const *bodies, size_t nbodies,
                 hop_node *const *extra, size_t nextra, const hop_value_info *outs, size_t nouts)
{
    hop_arg *args = hop__calloc(call->nargs + 1, sizeof *args), *last = NULL;
    hop_node *r = NULL;
    size_t nargs = 0, b = 0;
    if (args == NULL)
        return NULL;
    for (size_t i = 0; i < call->nargs; i++) {
        const hop_arg *a = &call->args[i];
        if (a->kind == HOP_ARG_GRAPH) {
            if (b < nbodies)
                args[nargs++] = hop_arg_graph(bodies[b]);
            b++;
        } else if (hop_rewrite_map_arg(rw, a, &args[nargs++]) != HOP_OK) {
            goto done;
        }
    }
    const hop_arg *tail = nargs ? &args[nargs - 1] : NULL;
    if (tail == NULL || tail->kind != HOP_ARG_LIST) {
        hop_error(HOP_MISUSE, "%s: the HOP %s (%s) passes no list of values to its bodies", rw->who,
                  hop_node_target(call), call->name);
        goto done;
    }
    if ((last = hop__calloc(tail->u.list.n + nextra + 1, sizeof *last)) == NULL)
        goto done;
    memcpy(last, tail->u.list.items, tail->u.list.n * sizeof *last);
    for (size_t i = 0; i < nextra; i++)
        last[tail->u.list.n + i] = hop_arg_node(extra[i]);
    args[nargs - 1] = hop_arg_list(last, tail->u.list.n + nextra);
    r = hop_graph_call_hop(rw->out, call->cls, args, nargs, outs, nouts);
done:
    hop__free(args);
    hop__free(last);
    hop_rewrite_scratch_clear(rw);
    return r;
}

/* ------------------------------------------------------------ graphs */

hop_status
hop_graph_copy_guards(const hop_graph *src, hop_graph *dst)
{
    for (size_t i = 0; i < src->nguards; i++)
        if (hop_graph_add_guard(dst, src->guards[i]) != HOP_OK)
            return hop_error_code();
    return HOP_OK;
}

hop_status
hop_graph_copy(const hop_graph *src, hop_graph *dst)
{
    if (src == NULL || dst == NULL || dst->first != NULL || dst->env != src->env)
        return hop_error(HOP_MISUSE, "hop_graph_copy: %s",
                         src == NULL || dst == NULL ? "NULL graph"
                         : dst->first != NULL       ? "the out graph is not empty"
                                                    : "graphs of different ShapeEnvs");
    return copy_graph(src, dst, NULL);
}

hop_graph *
hop_graph_copy_into(hop_graph *parent, const hop_graph *src)
{
    hop_graph *c = hop_graph_new_subgraph(parent, src->name);
    if (c == NULL)
        return NULL;
    if (hop_graph_copy(src, c) != HOP_OK || hop_graph_add_subgraph(parent, c) != HOP_OK) {
        hop_graph_free(c);
        return NULL;
    }
    return c;
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
    hop_rewrite rw;
    hop_rewrite_init(&rw, src, dst, "autodiff");
    hop_status st = bind_symbols(&rw, src, inputs);
    size_t i = 0;
    for (const hop_node *n = src->first; n && st == HOP_OK; n = n->next) {
        if (n->kind == HOP_NODE_PLACEHOLDER) {
            hop_rewrite_entry *e = inputs[i] ? hop_rewrite_add(&rw, n) : NULL;
            if (e == NULL)
                st = inputs[i] ? hop_error_code()
                               : hop_error(HOP_MISUSE, "hop_graph_inline: input %zu is NULL", i);
            else
                e->copy = e->vals[0] = inputs[i];
            i++;
        } else if (n->kind == HOP_NODE_OUTPUT) {
            for (size_t j = 0; j < n->nargs && st == HOP_OK; j++) {
                hop_arg a;
                st = hop_rewrite_map_arg(&rw, &n->args[j], &a);
                outputs[j] = st == HOP_OK && a.kind == HOP_ARG_NODE ? a.u.node : NULL;
            }
            hop_rewrite_scratch_clear(&rw);
        } else if (hop_rewrite_copy(&rw, n, NULL) == NULL)
            st = hop_error_code();
    }
    hop_rewrite_clear(&rw);
    return st;
}
