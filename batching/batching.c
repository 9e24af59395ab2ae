/*
 * batching/batching.c - vmap as a graph transformation (hop/batching.h).
 *
 * The forward graph is walked once, in order, over the nodes the result
 * needs (mark_needed: a dead node is not batched).  Each forward value maps to a
 * value of the result and a bit: batched (its dim 0 is the batch, its other
 * dims the forward value's) or not (the forward value itself, computed once
 * for every example).  A node none of whose operands is batched is copied as
 * it is, so what does not depend on the batch costs what it cost before; a
 * node with a batched operand goes to its op's rule (batching/op_rules.c),
 * its HOP's batch slot, the bodies rule of a wrap-like HOP, or the loop
 * fallback (a `map` over the batch).  Inputs have their batch dim moved to
 * 0 on entry, outputs theirs moved to where out_dims says on exit.  The
 * walk is graph's rewriter (hop/rewrite.h), as autodiff's is.
 */
#include "batching/batch_impl.h"
#include "core/core.h"
#include "hop/rewrite.h"

#include <stdio.h>
#include <string.h>

/* The rewrite of the forward graph into the result: each forward node's
 * entry keeps the value standing for each of its outputs (vals; a call
 * copied as it is gets its getitems made on use) and whether it is batched
 * (flags). */
struct hop_batch_ctx {
    hop_rewrite rw;
    const hop_expr *size;
    const hop_class *loop;
};

hop_graph *
hop_batch_copy_body(hop_batch_ctx *cx, const hop_graph *body)
{
    if (cx == NULL || body == NULL) {
        hop_error(HOP_MISUSE, "hop_batch_copy_body: NULL %s", cx ? "body" : "context");
        return NULL;
    }
    return hop_rewrite_subgraph(&cx->rw, body);
}

/* ------------------------------------------------------------ the context */

hop_graph *
hop_batch_out(hop_batch_ctx *cx)
{
    return cx->rw.out;
}

const hop_expr *
hop_batch_size(hop_batch_ctx *cx)
{
    return cx->size;
}

/* The value of output i of forward node n (making a getitem of a copied
 * call on first use). */
static hop_node *
entry_value(hop_batch_ctx *cx, hop_rewrite_entry *e, size_t i, bool *batched)
{
    if (batched)
        *batched = i < e->n && e->flags[i];
    return hop_rewrite_value(&cx->rw, e, i);
}

hop_node *
hop_batch_value(hop_batch_ctx *cx, const hop_node *v, bool *batched)
{
    hop_rewrite_entry *e = v ? hop_rewrite_find(&cx->rw, v) : NULL;
    if (batched)
        *batched = false;
    return e ? entry_value(cx, e, 0, batched) : NULL;
}

hop_status
hop_batch_set(hop_batch_ctx *cx, const hop_node *n, size_t i, hop_node *v, bool batched)
{
    hop_rewrite_entry *e = n ? hop_rewrite_find(&cx->rw, n) : NULL;
    if (e == NULL || i >= e->n || v == NULL)
        return hop_error(HOP_MISUSE, "hop_batch_set: %s",
                         e == NULL   ? "not a node of the forward graph"
                         : v == NULL ? "NULL value"
                                     : "output index out of range");
    e->vals[i] = v;
    e->flags[i] = batched;
    return HOP_OK;
}

/* An unbatched value v of g expanded to the batch (a new dim 0). */
static hop_node *
broadcast_in(hop_batch_ctx *cx, hop_graph *g, hop_node *v)
{
    if (v == NULL)
        return NULL;
    const hop_meta *m = &v->meta->meta;
    hop_node *u = hop__batch_unsqueeze(g, v, 0);
    if (u == NULL)
        return NULL;
    hop_arg items[HOP_MAX_RANK];
    items[0] = hop_arg_sym(cx->size);
    for (int d = 0; d < m->rank; d++)
        items[d + 1] = hop_arg_int(-1);
    hop_arg args[] = {hop_arg_node(u), hop_arg_list(items, (size_t)m->rank + 1)};
    return hop_graph_call_op(g, HOP_OP_expand, args, 2);
}

hop_node *
hop_batch_broadcast(hop_batch_ctx *cx, hop_node *v)
{
    return broadcast_in(cx, cx->rw.out, v);
}

/* ------------------------------------------------------------ copying */

hop_status
hop__batch_map_args(hop_batch_ctx *cx, const hop_node *n, hop_arg *args)
{
    return hop_rewrite_map_args(&cx->rw, n, args);
}

void
hop__batch_scratch_clear(hop_batch_ctx *cx)
{
    hop_rewrite_scratch_clear(&cx->rw);
}

hop_node *
hop__batch_symbol(hop_batch_ctx *cx, const hop_node *at, const hop_expr *s)
{
    for (const hop_node *m = at->graph->first; m && m != at; m = m->next) {
        if (m->meta->kind != HOP_VALUE_SYM || m->meta->sym != s)
            continue;
        const hop_rewrite_entry *e = hop_rewrite_find(&cx->rw, m);
        return e != NULL && e->flags[0] ? e->vals[0] : NULL;
    }
    return NULL;
}

bool
hop__batch_mentions(hop_batch_ctx *cx, const hop_node *at, const hop_expr *e)
{
    const hop_expr *fs[16];
    size_t nf = hop_expr_free_symbols(e, fs, 16);
    for (size_t k = 0; k < nf && k < 16; k++)
        if (hop__batch_symbol(cx, at, fs[k]) != NULL)
            return true;
    return false;
}

/* Whether any node argument of a (lists included), an argument of node at,
 * is batched, or an expression argument mentions a batched item's int. */
static bool
any_batched(hop_batch_ctx *cx, const hop_node *at, const hop_arg *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].kind == HOP_ARG_LIST && any_batched(cx, at, a[i].u.list.items, a[i].u.list.n))
            return true;
        if (a[i].kind == HOP_ARG_SYM && hop__batch_mentions(cx, at, a[i].u.sym))
            return true;
        if (a[i].kind != HOP_ARG_NODE)
            continue;
        const hop_rewrite_entry *e = hop_rewrite_find(&cx->rw, a[i].u.node);
        if (e != NULL && e->flags[0])
            return true;
    }
    return false;
}

static hop_status
batch_node(hop_batch_ctx *cx, const hop_node *n)
{
    switch (n->kind) {
    case HOP_NODE_CALL_OP: {
        const hop_op_batch_rule *r = hop_op_batch(n->op);
        if (r && r->batch)
            return r->batch(cx, n);
        return hop_error(HOP_UNSUPPORTED, "vmap: the op %s (%s) has no batch rule: %s",
                         hop_node_target(n), n->name,
                         r && r->unsupported ? r->unsupported : "not in the op table");
    }
    case HOP_NODE_CALL_HOP: {
        const hop_class *owner = HOP_CLASS_SLOT_OWNER(n->cls, batch);
        if (owner)
            return owner->batch(cx, n);
        return hop_class_is_wrap_like(n->cls) ? hop_batch_bodies(cx, n) : hop_batch_loop(cx, n);
    }
    case HOP_NODE_CALL_FOREIGN:
        return hop_batch_loop(cx, n);
    default:
        return hop_error(HOP_MISUSE, "vmap: unexpected node %s", n->name);
    }
}

/* Names the value a rule set for n after n (the helpers keep theirs). */
static hop_status
name_result(hop_batch_ctx *cx, const hop_node *n, hop_rewrite_entry *e)
{
    if (n->kind != HOP_NODE_CALL_OP)
        return HOP_OK;
    hop_node *v = e->vals[0];
    if (v == NULL)
        return hop_error(HOP_MISUSE, "vmap: the rule of %s set no value", n->name);
    /* the rule's last node is its result; a value it passed through keeps
     * its name */
    if (v != cx->rw.out->last || v->kind == HOP_NODE_PLACEHOLDER || strcmp(v->name, n->name) == 0)
        return HOP_OK;
    return hop_graph_rename_node(cx->rw.out, v, n->name);
}

/* ------------------------------------------------------------ bodies */

hop_status
hop_batch_graph(hop_batch_ctx *cx, const hop_graph *body, const bool *batched, const int *out_dims,
                hop_graph *g)
{
    if (cx == NULL || body == NULL || g == NULL || body->output == NULL ||
        (body->nplaceholders && batched == NULL) || (body->output->nargs && out_dims == NULL))
        return hop_error(HOP_MISUSE, "hop_batch_graph: NULL argument");
    size_t np = body->nplaceholders;
    int *in = hop__calloc(np + 1, sizeof *in);
    if (in == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < np; i++)
        in[i] = batched[i] ? 0 : -1;
    hop_status st = hop_vmap_graph_loop(body, in, cx->size, out_dims, cx->loop, g);
    hop__free(in);
    return st;
}

hop_status
hop_batch_depends(hop_batch_ctx *cx, const hop_graph *body, const bool *batched, bool *out_batched)
{
    if (cx == NULL || body == NULL || body->output == NULL || out_batched == NULL)
        return hop_error(HOP_MISUSE, "hop_batch_depends: NULL argument");
    size_t no = body->output->nargs;
    int *outd = hop__calloc(no + 1, sizeof *outd);
    hop_graph *g = hop_graph_new_subgraph(cx->rw.out, body->name);
    hop_status st = outd == NULL ? HOP_NOMEM : g == NULL ? hop_error_code() : HOP_OK;
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        outd[j] = HOP_VMAP_AUTO;
    if (st == HOP_OK)
        st = hop_batch_graph(cx, body, batched, outd, g);
    /* an output that came out batched has one dim more than body's */
    for (size_t j = 0; j < no && st == HOP_OK; j++) {
        const hop_arg *a = &body->output->args[j], *b = &g->output->args[j];
        out_batched[j] = a->kind == HOP_ARG_NODE && a->u.node->meta->kind == HOP_VALUE_TENSOR &&
                         b->u.node->meta->meta.rank == a->u.node->meta->meta.rank + 1;
    }
    hop_graph_free(g);
    hop__free(outd);
    return st;
}

hop_status
hop_batch_carries(hop_batch_ctx *cx, const hop_graph *body, bool *batched, size_t at, size_t n)
{
    if (body == NULL || body->output == NULL || batched == NULL || at + n > body->nplaceholders ||
        n > body->output->nargs)
        return hop_error(HOP_MISUSE, "hop_batch_carries: bad arguments");
    bool *dep = hop__calloc(body->output->nargs + 1, sizeof *dep);
    if (dep == NULL)
        return HOP_NOMEM;
    hop_status st = HOP_OK;
    /* each round batches one more carry or stops: at most n + 1 rounds */
    for (bool changed = true; changed && st == HOP_OK;) {
        changed = false;
        if ((st = hop_batch_depends(cx, body, batched, dep)) != HOP_OK)
            break;
        for (size_t j = 0; j < n; j++)
            if (dep[j] && !batched[at + j])
                batched[at + j] = changed = true;
    }
    hop__free(dep);
    return st;
}

hop_node *
hop_batch_movedim(hop_batch_ctx *cx, hop_node *v, int from, int to)
{
    return hop__batch_movedim(cx->rw.out, v, from, to);
}

/* The batched version of body in cx->rw.out, made once per (body, mask, out
 * mask). */
hop_status
hop_batch_body_outs(hop_batch_ctx *cx, const hop_graph *body, const bool *batched,
                    const bool *out_batched, hop_graph **vmapped)
{
    size_t np = body->nplaceholders, no = body->output->nargs;
    char *mask = hop__calloc(np + no + 2, 1);
    int *outd = hop__calloc(no + 1, sizeof *outd);
    hop_status st = mask && outd ? HOP_OK : HOP_NOMEM;
    for (size_t i = 0; i < np && st == HOP_OK; i++)
        mask[i] = batched[i] ? '1' : '0';
    if (st == HOP_OK && out_batched != NULL)
        mask[np] = '|';
    for (size_t j = 0; j < no && st == HOP_OK; j++) {
        const hop_arg *a = &body->output->args[j];
        bool tensor = a->kind == HOP_ARG_NODE && a->u.node->meta->kind == HOP_VALUE_TENSOR;
        bool b = out_batched ? out_batched[j] : tensor;
        outd[j] = b ? 0 : -1;
        if (out_batched != NULL)
            mask[np + 1 + j] = b ? '1' : '0';
    }
    hop_graph *g = st == HOP_OK ? hop_rewrite_memo_find(&cx->rw, body, mask) : NULL;
    if (g != NULL) {
        *vmapped = g;
        hop__free(mask);
        hop__free(outd);
        return HOP_OK;
    }
    char base[256];
    snprintf(base, sizeof base, "%s_vmap", body->name);
    if (st == HOP_OK && (g = hop_graph_new_subgraph(cx->rw.out, base)) == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = hop_batch_graph(cx, body, batched, outd, g);
    if (st == HOP_OK)
        st = hop_graph_add_subgraph(cx->rw.out, g);
    hop__free(outd);
    if (st != HOP_OK)
        hop_graph_free(g);
    else if ((st = hop_rewrite_memo_add(&cx->rw, body, mask, g)) == HOP_OK)
        *vmapped = g;
    hop__free(mask);
    return st;
}

hop_status
hop_batch_body(hop_batch_ctx *cx, const hop_graph *body, const bool *batched, hop_graph **vmapped)
{
    return hop_batch_body_outs(cx, body, batched, NULL, vmapped);
}

/* A [B] mask m reshaped to [B, 1, ...] against a value of rank r, made
 * once per rank (by_rank). */
static hop_node *
lane_mask(hop_batch_ctx *cx, hop_graph *g, hop_node *m, int r, hop_node **by_rank)
{
    if (r <= 1)
        return m;
    if (by_rank[r] != NULL)
        return by_rank[r];
    hop_arg sizes[HOP_MAX_RANK];
    sizes[0] = hop_arg_sym(cx->size);
    for (int d = 1; d < r; d++)
        sizes[d] = hop_arg_int(1);
    return by_rank[r] = hop_graph_call_op(
               g, HOP_OP_reshape, (hop_arg[]){hop_arg_node(m), hop_arg_list(sizes, (size_t)r)}, 2);
}

/* Whether the step reads input ph through mask_gradient: a float tensor. */
static bool
lane_masked(const hop_node *ph)
{
    return ph->meta->kind == HOP_VALUE_TENSOR && hop_dtype_is_inexact(ph->meta->meta.dtype);
}

/*
 * `<body>_vmap`: the mask first, from body's inputs (then the extra ones),
 * the step `<body>_vmap_step` inlined over body's inputs, and one where per
 * carry over the mask.  The step reads each float input through
 * mask_gradient with the mask (an unbatched one broadcast first: the step
 * takes it batched), so a finished lane gets no gradient from the step.
 * Without it, where's gradient gives the step's results on a finished lane
 * a zero cotangent, which the step's own rules turn into nan where its
 * derivative is infinite at that lane's carry (0 * inf: exp overflowing
 * once the lane is done, sqrt at the bound that ended it); an unbatched
 * input's gradient is a sum over the lanes, so it is masked per lane before
 * the sum.  The select strategy of a batched cond does the same
 * (hop/branch_kit.c).  Only views are added: the forward is the same.
 */
hop_status
hop_batch_masked_body(hop_batch_ctx *cx, const hop_graph *body, const bool *batched, size_t at,
                      const hop_batch_lanes *lanes, hop_graph **vmapped)
{
    if (cx == NULL || body == NULL || body->output == NULL || lanes == NULL ||
        lanes->build == NULL || vmapped == NULL ||
        (lanes->nextra && (lanes->extra_names == NULL || lanes->extra == NULL)))
        return hop_error(HOP_MISUSE, "hop_batch_masked_body: NULL argument");
    size_t nph = body->nplaceholders, nout = body->output->nargs, nin = nph + lanes->nextra;
    if (at > nph || nout > nph - at)
        return hop_error(HOP_MISUSE,
                         "hop_batch_masked_body: %s has %zu inputs, not %zu carries at %zu",
                         body->name, nph, nout, at);
    int *od = hop__calloc(nout + 1, sizeof *od); /* zeros: every output batched at 0 */
    /* in: the new body's inputs; sin: the step's (masked); o: its results */
    hop_node **in = hop__calloc(nin + nph + nout + 1, sizeof *in);
    hop_node **sin = in ? in + nin : NULL, **o = in ? sin + nph : NULL;
    bool *sb = hop__calloc(nph + 1, sizeof *sb); /* the step's batched inputs */
    hop_arg *res = hop__calloc(nout + 1, sizeof *res);
    hop_node *by_rank[HOP_MAX_RANK + 1] = {NULL};
    char base[256];
    snprintf(base, sizeof base, "%s_vmap_step", body->name);
    bool ok = od && in && sb && res;
    hop_graph *step = ok ? hop_graph_new_subgraph(cx->rw.out, base) : NULL;
    hop_status st = ok ? (step ? HOP_OK : hop_error_code()) : HOP_NOMEM;
    for (size_t i = 0; i < nph && st == HOP_OK; i++)
        sb[i] = batched[i] || lane_masked(hop_graph_placeholder_at(body, i));
    if (st == HOP_OK)
        st = hop_batch_graph(cx, body, sb, od, step);
    snprintf(base, sizeof base, "%s_vmap", body->name);
    hop_graph *g = st == HOP_OK ? hop_graph_new_subgraph(cx->rw.out, base) : NULL;
    if (st == HOP_OK && g == NULL)
        st = hop_error_code();
    for (size_t i = 0; i < nin && st == HOP_OK; i++) {
        bool own = i < nph;
        if (!own && lanes->extra[i - nph] == NULL)
            continue; /* no input: in[i] stays NULL */
        const char *name =
            own ? hop_graph_placeholder_at(body, i)->name : lanes->extra_names[i - nph];
        hop_value_info meta =
            own ? *hop_graph_placeholder_at(step, i)->meta : *lanes->extra[i - nph]->meta;
        if (own && !batched[i] && sb[i]) /* the caller passes it unbatched */
            meta = hop_value_info_drop_dim(&meta, 0);
        if ((in[i] = hop_graph_placeholder(g, name, &meta)) == NULL)
            st = hop_error_code();
    }
    hop_node *mask = NULL;
    if (st == HOP_OK)
        st = lanes->build(lanes->arg, g, in, in + nph, &mask);
    for (size_t i = 0; i < nph && st == HOP_OK; i++) {
        hop_node *v = sin[i] = in[i], *m;
        if (!lane_masked(v))
            continue;
        if (!batched[i])
            v = broadcast_in(cx, g, v);
        if (v == NULL || (m = lane_mask(cx, g, mask, v->meta->meta.rank, by_rank)) == NULL ||
            (sin[i] = hop_graph_call_op(g, HOP_OP_mask_gradient,
                                        (hop_arg[]){hop_arg_node(v), hop_arg_node(m)}, 2)) == NULL)
            st = hop_error_code();
    }
    if (st == HOP_OK)
        st = hop_graph_inline(g, step, sin, o);
    for (size_t j = 0; j < nout && st == HOP_OK; j++) {
        hop_node *c = in[at + j], *m = lane_mask(cx, g, mask, c->meta->meta.rank, by_rank);
        hop_node *w = NULL;
        if (m != NULL)
            w = hop_graph_call_op(g, HOP_OP_where,
                                  (hop_arg[]){hop_arg_node(m), hop_arg_node(o[j]), hop_arg_node(c)},
                                  3);
        if (w == NULL)
            st = hop_error_code();
        else
            res[j] = hop_arg_node(w);
    }
    if (st == HOP_OK && hop_graph_output(g, res, nout) == NULL)
        st = hop_error_code();
    if (st == HOP_OK && (st = hop_graph_add_subgraph(cx->rw.out, g)) == HOP_OK)
        *vmapped = g;
    else
        hop_graph_free(g);
    hop_graph_free(step);
    hop__free(od);
    hop__free(in);
    hop__free(sb);
    hop__free(res);
    return st;
}

hop_status
hop_batch_operands(hop_batch_ctx *cx, const hop_node *call, hop_node **ops, bool *batched)
{
    size_t made = hop_node_made_inputs(call), n = made + hop_node_passed(call, NULL, 0);
    for (size_t j = 0; j < n; j++) {
        const hop_arg *a = hop_node_passed_to(call, j);
        ops[j] = NULL;
        batched[j] = false;
        if (j < made || a->kind != HOP_ARG_NODE)
            continue;
        if ((ops[j] = hop_batch_value(cx, a->u.node, &batched[j])) == NULL)
            return hop_error(HOP_MISUSE, "vmap: operand %s of %s %s has no value", a->u.node->name,
                             call->cls->name, call->name);
    }
    return HOP_OK;
}

hop_value_info
hop_batch_meta(hop_batch_ctx *cx, const hop_value_info *v)
{
    return hop_value_info_insert_dim(v, 0, cx->size);
}

hop_status
hop_batch_outputs(hop_batch_ctx *cx, const hop_node *call, hop_node *c, const bool *batched)
{
    hop_status st = hop_graph_rename_node(cx->rw.out, c, call->name);
    for (size_t i = 0; i < call->nouts && st == HOP_OK; i++) {
        hop_node *g = hop_graph_getitem(cx->rw.out, c, i);
        bool b = batched ? batched[i] : c->outs[i].kind == HOP_VALUE_TENSOR;
        st = g ? hop_batch_set(cx, call, i, g, b) : hop_error_code();
    }
    return st;
}

hop_status
hop_batch_bodies(hop_batch_ctx *cx, const hop_node *call)
{
    size_t nbodies;
    const hop_arg *graphs = hop_node_graphs(call, &nbodies);
    size_t nlead = (size_t)(graphs - call->args);
    /* a batched value of the HOP itself, or inputs the HOP makes: a loop */
    if (nbodies == 0 || any_batched(cx, call, call->args, nlead) || hop_node_made_inputs(call) > 0)
        return hop_batch_loop(cx, call);
    size_t npassed = hop_node_passed(call, NULL, 0);
    const hop_arg **passed = hop__calloc(npassed + 1, sizeof *passed);
    bool *mask = hop__calloc(npassed + 1, sizeof *mask);
    hop_graph *bodies[HOP_MAX_BODIES];
    hop_value_info *outs = NULL;
    hop_status st = passed && mask ? HOP_OK : HOP_NOMEM;
    if (st == HOP_OK)
        hop_node_passed(call, passed, npassed);
    for (size_t j = 0; j < npassed && st == HOP_OK; j++)
        if (passed[j]->kind == HOP_ARG_NODE)
            hop_batch_value(cx, passed[j]->u.node, &mask[j]);
    for (size_t b = 0; b < nbodies && st == HOP_OK; b++)
        st = hop_batch_body(cx, graphs[b].u.graph, mask, &bodies[b]);
    hop__free(passed);
    hop__free(mask);
    if (st == HOP_UNSUPPORTED) {
        /* a body that cannot be batched (the compaction of a cond, whose
         * nonzero an outer vmap cannot batch): the loop, which is correct
         * for any call; nothing was emitted yet */
        return hop_batch_loop(cx, call);
    }
    hop_node *c = NULL;
    if (st == HOP_OK && (outs = hop__calloc(call->nouts + 1, sizeof *outs)) == NULL)
        st = HOP_NOMEM;
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        const hop_arg *o = &bodies[0]->output->args[j];
        outs[j] = o->kind == HOP_ARG_NODE ? *o->u.node->meta : call->outs[j];
    }
    if (st == HOP_OK &&
        (c = hop_rewrite_call(&cx->rw, call, bodies, nbodies, NULL, 0, outs, call->nouts)) == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = hop_batch_outputs(cx, call, c, NULL);
    hop__free(outs);
    return st;
}

/* ------------------------------------------------------------ the loop */

/* The loop body's inputs: the distinct forward nodes call uses, batched
 * ones first (the map's xs), then the others (its args). */
typedef struct loop_inputs {
    const hop_node **fwd;
    size_t n, cap, nbatched;
} loop_inputs;

static hop_status
collect(hop_batch_ctx *cx, const hop_arg *a, size_t n, loop_inputs *li, bool want_batched)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].kind == HOP_ARG_LIST) {
            hop_status st = collect(cx, a[i].u.list.items, a[i].u.list.n, li, want_batched);
            if (st != HOP_OK)
                return st;
            continue;
        }
        if (a[i].kind != HOP_ARG_NODE)
            continue;
        bool b;
        hop_batch_value(cx, a[i].u.node, &b);
        bool seen = false;
        for (size_t k = 0; k < li->n && !seen; k++)
            seen = li->fwd[k] == a[i].u.node;
        if (b != want_batched || seen)
            continue;
        if (hop__grow((void **)&li->fwd, &li->cap, li->n + 1, sizeof *li->fwd) != HOP_OK)
            return HOP_NOMEM;
        li->fwd[li->n++] = a[i].u.node;
    }
    return HOP_OK;
}

/* The loop body: call made on one example (copied with the rewrite whose
 * entries of the forward nodes it uses are the body's inputs), its outputs
 * returned. */
static hop_status
loop_body(hop_batch_ctx *cx, const hop_node *call, const loop_inputs *li, hop_graph *body)
{
    hop_rewrite rw;
    hop_rewrite_init(&rw, cx->rw.src, body, "vmap");
    hop_arg *res = hop__calloc(call->nouts + 1, sizeof *res);
    hop_status st = res ? HOP_OK : HOP_NOMEM;
    for (size_t k = 0; k < li->n && st == HOP_OK; k++) {
        const hop_node *f = li->fwd[k];
        hop_rewrite_entry *e = hop_rewrite_add(&rw, f);
        hop_node *ph = e ? hop_graph_placeholder(body, f->name, f->meta) : NULL;
        if (ph == NULL)
            st = hop_error_code();
        else
            e->copy = e->vals[0] = ph;
    }
    hop_rewrite_entry *c = st == HOP_OK ? hop_rewrite_copy(&rw, call, NULL) : NULL;
    if (st == HOP_OK && c == NULL)
        st = hop_error_code();
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        hop_node *g = hop_rewrite_value(&rw, c, j);
        if (g == NULL)
            st = hop_error_code();
        else
            res[j] = hop_arg_node(g);
    }
    if (st == HOP_OK && hop_graph_output(body, res, call->nouts) == NULL)
        st = hop_error_code();
    hop_rewrite_clear(&rw);
    hop__free(res);
    return st;
}

/* The loop over a batch of 0 examples: a map cannot run 0 rows (and its
 * verifier refuses them), and no example runs, so each output is the empty
 * stack of its example's value, sized from call's output metadata.  Sizes
 * an unbacked symbol decides (a nonzero's count, a cond's merged size) are
 * only known by running an example: refused. */
static hop_status
empty_loop(hop_batch_ctx *cx, const hop_node *call)
{
    hop_status st = HOP_OK;
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        const hop_meta *m = &call->outs[j].meta;
        hop_arg items[HOP_MAX_RANK + 1];
        items[0] = hop_arg_sym(cx->size);
        for (int q = 0; q < m->rank && st == HOP_OK; q++) {
            const hop_expr *free[16];
            size_t nf = hop_expr_free_symbols(m->sizes[q], free, 16);
            for (size_t k = 0; k < nf && k < 16 && st == HOP_OK; k++)
                if (hop_symbol_is_unbacked(free[k])) {
                    char what[128];
                    hop_meta_print(m, what, sizeof what);
                    st = hop_error(HOP_UNSUPPORTED,
                                   "vmap: the %s %s (%s) runs as a loop over the batch, and "
                                   "over a batch of size 0 its output %zu (%s) has sizes that "
                                   "only running an example decides",
                                   call->kind == HOP_NODE_CALL_HOP ? "HOP" : "foreign kernel",
                                   hop_node_target(call), call->name, j, what);
                }
            items[q + 1] = hop_arg_sym(m->sizes[q]);
        }
        hop_node *g = NULL;
        if (st == HOP_OK) {
            hop_arg args[] = {hop_arg_list(items, (size_t)m->rank + 1), hop_arg_int(0),
                              hop_arg_dtype(m->dtype)};
            if ((g = hop_graph_call_op(cx->rw.out, HOP_OP_full, args, 3)) == NULL)
                st = hop_error_code();
        }
        if (st == HOP_OK)
            st = hop_batch_set(cx, call, j, g, true);
    }
    return st;
}

hop_status
hop_batch_loop(hop_batch_ctx *cx, const hop_node *call)
{
    int64_t nb;
    if (cx->loop == NULL)
        return hop_error(HOP_UNSUPPORTED, "vmap: the %s %s (%s) has no batch rule",
                         call->kind == HOP_NODE_CALL_HOP ? "HOP" : "foreign kernel",
                         hop_node_target(call), call->name);
    for (size_t j = 0; j < call->nouts; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "vmap: the %s %s (%s) has no batch rule, and its output %zu is not "
                             "a tensor, so it cannot run as a loop over the batch",
                             call->kind == HOP_NODE_CALL_HOP ? "HOP" : "foreign kernel",
                             hop_node_target(call), call->name, j);
    if (hop_expr_const_value(cx->size, &nb) && nb == 0)
        return empty_loop(cx, call);
    loop_inputs li = {0};
    hop_status st = collect(cx, call->args, call->nargs, &li, true);
    li.nbatched = li.n;
    if (st == HOP_OK)
        st = collect(cx, call->args, call->nargs, &li, false);
    char base[256];
    snprintf(base, sizeof base, "%s_vmap_loop", call->name);
    hop_graph *body = st == HOP_OK ? hop_graph_new_subgraph(cx->rw.out, base) : NULL;
    if (st == HOP_OK && body == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = loop_body(cx, call, &li, body);
    if (st == HOP_OK)
        st = hop_graph_add_subgraph(cx->rw.out, body);
    if (st != HOP_OK) {
        hop_graph_free(body); /* not installed: still ours */
        body = NULL;
    }
    hop_arg *xs = hop__calloc(li.n + 1, sizeof *xs);
    hop_value_info *outs = hop__calloc(call->nouts + 1, sizeof *outs);
    if (st == HOP_OK && (xs == NULL || outs == NULL))
        st = HOP_NOMEM;
    for (size_t k = 0; k < li.n && st == HOP_OK; k++)
        xs[k] = hop_arg_node(hop_batch_value(cx, li.fwd[k], NULL));
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        outs[j] = call->outs[j];
        hop_meta *m = &outs[j].meta;
        if (m->rank >= HOP_MAX_RANK) {
            st = hop_error(HOP_UNSUPPORTED, "vmap: output %zu of %s has rank %d already", j,
                           call->name, m->rank);
            break;
        }
        outs[j] = hop_value_info_insert_dim(&outs[j], 0, cx->size);
    }
    hop_node *c = NULL;
    if (st == HOP_OK) {
        hop_arg args[] = {hop_arg_graph(body), hop_arg_list(xs, li.nbatched),
                          hop_arg_list(xs + li.nbatched, li.n - li.nbatched)};
        if ((c = hop_graph_call_hop(cx->rw.out, cx->loop, args, 3, outs, call->nouts)) == NULL)
            st = hop_error_code();
    }
    /* the map keeps its own name: it is not the call it loops over */
    for (size_t i = 0; i < call->nouts && st == HOP_OK; i++) {
        hop_node *g = hop_graph_getitem(cx->rw.out, c, i);
        st = g ? hop_batch_set(cx, call, i, g, true) : hop_error_code();
    }
    hop__free(li.fwd);
    hop__free(xs);
    hop__free(outs);
    return st;
}

bool
hop_batch_is_loop(const hop_node *n)
{
    if (n == NULL || n->kind != HOP_NODE_CALL_HOP || strcmp(hop_node_target(n), "map") != 0 ||
        n->nargs < 1 || n->args[0].kind != HOP_ARG_GRAPH)
        return false;
    const char *name = n->args[0].u.graph->name, *tail = strstr(name, "_vmap_loop");
    return tail != NULL && (tail[10] == '\0' || tail[10] == '_');
}

/* ------------------------------------------------------------ the graph */

static hop_status
check_call(const hop_graph *fwd, const int *in_dims, const hop_expr *size, const int *out_dims,
           hop_graph *out)
{
    if (fwd == NULL || out == NULL || size == NULL || (fwd->nplaceholders && in_dims == NULL) ||
        (fwd->output && fwd->output->nargs && out_dims == NULL))
        return hop_error(HOP_MISUSE, "hop_vmap_graph: NULL %s",
                         fwd == NULL    ? "graph"
                         : out == NULL  ? "out graph"
                         : size == NULL ? "size"
                                        : "dims");
    if (fwd->output == NULL)
        return hop_error(HOP_MISUSE, "hop_vmap_graph: graph %s has no output node", fwd->name);
    if (out->first != NULL || out->nsubgraphs != 0)
        return hop_error(HOP_MISUSE, "hop_vmap_graph: the out graph %s is not empty", out->name);
    if (out->env != fwd->env)
        return hop_error(HOP_MISUSE, "hop_vmap_graph: graphs %s and %s use different ShapeEnvs",
                         fwd->name, out->name);
    return HOP_OK;
}

/* The placeholder of input i: batched ones with the batch at in_dim, moved
 * to 0. */
static hop_status
batch_input(hop_batch_ctx *cx, const hop_node *p, size_t i, int in_dim, hop_rewrite_entry *e)
{
    if (in_dim == -1) {
        hop_node *c = hop_graph_placeholder(cx->rw.out, p->name, p->meta);
        e->vals[0] = c;
        return c ? HOP_OK : hop_error_code();
    }
    char what[128];
    if (p->meta->kind != HOP_VALUE_TENSOR)
        return hop_error(HOP_INVALID,
                         "vmap: input %zu (%s) is batched but is a SymInt, not a tensor", i,
                         p->name);
    const hop_meta *m = &p->meta->meta;
    if (m->rank >= HOP_MAX_RANK)
        return hop_error(HOP_UNSUPPORTED,
                         "vmap: input %zu (%s) has rank %d already; batched it "
                         "would exceed rank %d",
                         i, p->name, m->rank, HOP_MAX_RANK);
    if (in_dim < 0 || in_dim > m->rank) {
        hop_meta_print(m, what, sizeof what);
        return hop_error(HOP_INVALID,
                         "vmap: in dim %d of input %zu (%s: %s) is out of range for a batched "
                         "input of rank %d",
                         in_dim, i, p->name, what, m->rank + 1);
    }
    hop_value_info v = hop_value_info_insert_dim(p->meta, in_dim, cx->size);
    hop_node *c = hop_graph_placeholder(cx->rw.out, p->name, &v);
    if (c != NULL && in_dim != 0)
        c = hop__batch_movedim(cx->rw.out, c, in_dim, 0);
    e->vals[0] = c;
    e->flags[0] = true;
    return c ? HOP_OK : hop_error_code();
}

/* Output j: its value with the batch dim at out_dim. */
static hop_status
batch_output(hop_batch_ctx *cx, size_t j, int out_dim, hop_arg *res)
{
    const hop_arg *a = &cx->rw.src->output->args[j];
    if (a->kind != HOP_ARG_NODE) {
        if (out_dim >= 0)
            return hop_error(HOP_UNSUPPORTED,
                             "vmap: output %zu is a constant, not a tensor to batch", j);
        *res = *a;
        return HOP_OK;
    }
    bool b;
    hop_node *v = hop_batch_value(cx, a->u.node, &b);
    if (v == NULL)
        return hop_error_code();
    if (out_dim == HOP_VMAP_AUTO) {
        *res = hop_arg_node(v);
        return HOP_OK;
    }
    if (out_dim == -1) {
        if (b)
            return hop_error(HOP_INVALID,
                             "vmap: output %zu (%s) is batched but its out dim is None", j,
                             a->u.node->name);
        *res = hop_arg_node(v);
        return HOP_OK;
    }
    if (a->u.node->meta->kind != HOP_VALUE_TENSOR)
        return hop_error(HOP_INVALID,
                         "vmap: output %zu (%s) is a SymInt; only tensors take a batch dim", j,
                         a->u.node->name);
    int r = a->u.node->meta->meta.rank;
    if (out_dim < 0 || out_dim > r)
        return hop_error(HOP_INVALID,
                         "vmap: out dim %d of output %zu (%s) is out of range for a batched output "
                         "of rank %d",
                         out_dim, j, a->u.node->name, r + 1);
    if (!b && (v = hop_batch_broadcast(cx, v)) == NULL)
        return hop_error_code();
    if (out_dim != 0 && (v = hop__batch_movedim(cx->rw.out, v, 0, out_dim)) == NULL)
        return hop_error_code();
    *res = hop_arg_node(v);
    return HOP_OK;
}

/* ------------------------------------------------------------ liveness */

/* The unbacked symbols of the forward graph: each with the first node whose
 * value mentions it (the call or op that made it) and whether a needed node
 * mentions it. */
typedef struct {
    const hop_expr *sym;
    const hop_node *first;
    bool needed;
} unbacked;

typedef struct {
    hop_batch_ctx *cx;
    unbacked *items;
    size_t n, cap;
} live_walk;

static unbacked *
find_unbacked(live_walk *w, const hop_expr *s)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->items[i].sym == s)
            return &w->items[i];
    return NULL;
}

/* Records (first: a node whose value mentions them, in order) or marks needed
 * (first NULL) the unbacked symbols of e. */
static hop_status
visit_expr(live_walk *w, const hop_expr *e, const hop_node *first)
{
    const hop_expr *small[16], **fs = small;
    size_t nf = e ? hop_expr_free_symbols(e, NULL, 0) : 0;
    if (nf > 16 && (fs = hop__calloc(nf, sizeof *fs)) == NULL)
        return HOP_NOMEM;
    if (nf)
        hop_expr_free_symbols(e, fs, nf);
    hop_status st = HOP_OK;
    for (size_t k = 0; k < nf && st == HOP_OK; k++) {
        if (!hop_symbol_is_unbacked(fs[k]))
            continue;
        unbacked *u = find_unbacked(w, fs[k]);
        if (first == NULL) {
            hop_rewrite_entry *e1 = u ? hop_rewrite_find(&w->cx->rw, u->first) : NULL;
            if (u != NULL)
                u->needed = true;
            if (e1 != NULL)
                e1->mark = true;
            continue;
        }
        if (u != NULL)
            continue;
        if (w->n == w->cap) {
            size_t cap = w->cap ? 2 * w->cap : 8;
            unbacked *items = hop__realloc(w->items, cap * sizeof *items);
            if (items == NULL) {
                st = HOP_NOMEM;
                break;
            }
            w->items = items;
            w->cap = cap;
        }
        w->items[w->n++] = (unbacked){fs[k], first, false};
    }
    if (fs != small)
        hop__free(fs);
    return st;
}

static hop_status
visit_value(live_walk *w, const hop_value_info *v, const hop_node *first)
{
    if (v->kind == HOP_VALUE_SYM)
        return visit_expr(w, v->sym, first);
    hop_status st = HOP_OK;
    for (int d = 0; v->kind == HOP_VALUE_TENSOR && d < v->meta.rank && st == HOP_OK; d++)
        st = visit_expr(w, v->meta.sizes[d], first);
    return st;
}

/* Marks what the needed node reading args reads: its node arguments and the
 * bindings of the symbols of its symbolic ones (lists at any depth). */
static hop_status
need_args(live_walk *w, const hop_arg *args, size_t n)
{
    hop_status st = HOP_OK;
    for (size_t i = 0; i < n && st == HOP_OK; i++) {
        if (args[i].kind == HOP_ARG_LIST) {
            st = need_args(w, args[i].u.list.items, args[i].u.list.n);
        } else if (args[i].kind == HOP_ARG_SYM) {
            st = visit_expr(w, args[i].u.sym, NULL);
        } else if (args[i].kind == HOP_ARG_NODE) {
            hop_rewrite_entry *e = hop_rewrite_find(&w->cx->rw, args[i].u.node);
            if (e != NULL)
                e->mark = true;
        }
    }
    return st;
}

/* Whether n's value is an unbacked symbol a needed node mentions (a
 * sym_size binding it: the lowering reads the size there). */
static bool
binds_needed(live_walk *w, const hop_node *n)
{
    if (n->meta->kind != HOP_VALUE_SYM || !hop_symbol_is_unbacked(n->meta->sym))
        return false;
    const unbacked *u = find_unbacked(w, n->meta->sym);
    return u != NULL && u->needed;
}

/* Gives every node of fwd its entry, in order, and marks (e->mark) those
 * the result needs: the output's operands and, transitively, what a needed
 * node reads (its node arguments; the binding of each unbacked symbol its
 * values or arguments mention: the first node whose value mentions it and
 * the sym_size nodes that are it), placeholders, nodes with side effects
 * and checks (hop_node_may_fail: eagerly a failed one raises).  The walk
 * batches only those: fwd's other dead nodes cost nothing and cannot fail
 * it (a tall lstsq's residual cond, whose predicate is per example and
 * whose branches differ in shape, when only x is used). */
static hop_status
mark_needed(hop_batch_ctx *cx, const hop_graph *fwd)
{
    live_walk w = {.cx = cx};
    hop_status st = HOP_OK;
    for (const hop_node *n = fwd->first; n && n != fwd->output && st == HOP_OK; n = n->next) {
        if (hop_rewrite_add(&cx->rw, n) == NULL)
            st = hop_error_code();
        else
            st = visit_value(&w, n->meta, n);
        for (uint32_t i = 0; i < n->nouts && st == HOP_OK; i++)
            st = visit_value(&w, &n->outs[i], n);
    }
    if (st == HOP_OK)
        st = need_args(&w, fwd->output->args, fwd->output->nargs);
    const hop_node *n = fwd->output->prev;
    for (; n && st == HOP_OK; n = n->prev) {
        hop_rewrite_entry *e = hop_rewrite_find(&cx->rw, n);
        e->mark = e->mark || n->kind == HOP_NODE_PLACEHOLDER || hop_node_has_side_effects(n) ||
                  hop_node_may_fail(n) || binds_needed(&w, n);
        if (!e->mark)
            continue;
        st = need_args(&w, n->args, n->nargs);
        if (st == HOP_OK)
            st = visit_value(&w, n->meta, NULL);
        for (uint32_t i = 0; i < n->nouts && st == HOP_OK; i++)
            st = visit_value(&w, &n->outs[i], NULL);
    }
    hop__free(w.items);
    return st;
}

hop_status
hop_vmap_graph_loop(const hop_graph *fwd, const int *in_dims, const hop_expr *size,
                    const int *out_dims, const hop_class *loop, hop_graph *out)
{
    hop_status st = check_call(fwd, in_dims, size, out_dims, out);
    if (st != HOP_OK)
        return st;
    hop_batch_ctx cx = {.size = size, .loop = loop};
    hop_rewrite_init(&cx.rw, fwd, out, "vmap");
    st = hop_graph_copy_guards(fwd, out);
    if (st == HOP_OK)
        st = mark_needed(&cx, fwd);
    size_t k = 0;
    for (const hop_node *n = fwd->first; n && n != fwd->output && st == HOP_OK; n = n->next) {
        hop_rewrite_entry *e = hop_rewrite_find(&cx.rw, n);
        if (!e->mark)
            continue;
        if (n->kind == HOP_NODE_PLACEHOLDER) {
            st = batch_input(&cx, n, k, in_dims[k], e);
            k++;
        } else if (n->kind == HOP_NODE_GETITEM) {
            hop_rewrite_entry *c = hop_rewrite_find(&cx.rw, n->args[0].u.node);
            size_t i = (size_t)n->args[1].u.i;
            bool b = false;
            hop_node *v = c ? entry_value(&cx, c, i, &b) : NULL;
            if (c == NULL)
                st = hop_error(HOP_MISUSE, "vmap: getitem %s of an unknown node", n->name);
            else if (v == NULL)
                st = hop_error_code();
            else if (c->copy && v->kind == HOP_NODE_GETITEM && !b)
                st = hop_graph_rename_node(out, v, n->name);
            e->vals[0] = v;
            e->flags[0] = b;
        } else if (!any_batched(&cx, n, n->args, n->nargs))
            st = hop_rewrite_copy(&cx.rw, n, e) ? HOP_OK : hop_error_code();
        else if ((st = batch_node(&cx, n)) == HOP_OK)
            st = name_result(&cx, n, e);
    }
    const hop_node *o = fwd->output;
    hop_arg *args = st == HOP_OK ? hop__calloc(o->nargs + 1, sizeof *args) : NULL;
    if (st == HOP_OK && args == NULL)
        st = HOP_NOMEM;
    for (size_t j = 0; j < o->nargs && st == HOP_OK; j++)
        st = batch_output(&cx, j, out_dims[j], &args[j]);
    if (st == HOP_OK && hop_graph_output(out, args, o->nargs) == NULL)
        st = hop_error_code();
    hop__free(args);
    hop_rewrite_clear(&cx.rw);
    if (st != HOP_OK)
        return st;
    /* every node is a copy of a needed node of fwd's or feeds one
     * (mark_needed) */
    return hop_graph_verify(out);
}
