/*
 * hop/builtins.c - the four built-in HOPs, each a class on the PrimHOP base
 * written only with the public API a user defining a HOP would use:
 *
 *   wrap(body, *args)              body(*args); inputs lifted on first use
 *   cond(pred, t, f, operands)     both branches traced, one merged signature
 *   map(f, xs, *args)              f over slices of xs along dim 0, stacked
 *   invoke_subgraph(f, *args)      traced once per graph and input metadata
 */
#include "hop/prim_hop.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ wrap */

const hop_hop_class hop_wrap_class = {
    .name = "wrap",
    .nbodies = 1,
    .prefixes = {"wrap_body"},
    .input_mode = HOP_INPUTS_LIFTED,
};

hop_status
hop_wrap(hop_output_graph *og, hop_body body, const hop_arg *args, size_t nargs,
         hop_values *outputs)
{
    return hop_hop_call(og, &hop_wrap_class, args, nargs, &body, 1, outputs);
}

/* ------------------------------------------------------------------ cond */

static const char *const branch_name[] = {"true", "false"};

/* "f32[s0, 4]" or "Sym(s0)" for messages. */
static void
describe(const hop_value_info *v, char *buf, size_t cap)
{
    if (v->kind == HOP_VALUE_TENSOR) {
        hop_meta_print(&v->meta, buf, cap);
    } else if (v->kind == HOP_VALUE_SYM) {
        char e[96];
        hop_expr_print(v->sym, e, sizeof e);
        snprintf(buf, cap, "Sym(%s)", e);
    } else {
        snprintf(buf, cap, "nothing");
    }
}

static hop_status
cond_check_operands(hop_call *c)
{
    if (c->noperands < 1)
        return hop_error(HOP_INVALID, "cond: missing pred");
    const hop_arg *pred = &c->operands[0];
    char what[128];
    switch (pred->kind) {
    case HOP_ARG_BOOL:
        break;
    case HOP_ARG_SYM:
        if (!hop_expr_is_bool(pred->u.sym)) {
            hop_expr_print(pred->u.sym, what, sizeof what);
            return hop_error(HOP_DTYPE,
                             "cond: pred must be a bool scalar tensor or a SymBool; "
                             "got the SymInt %s",
                             what);
        }
        break;
    case HOP_ARG_NODE: {
        const hop_node *p = pred->u.node;
        if (p == NULL)
            return hop_error(HOP_MISUSE, "cond: pred is a NULL value");
        bool ok = false;
        if (p->meta->kind == HOP_VALUE_TENSOR && p->meta->meta.dtype == HOP_BOOL) {
            int64_t numel = 1, v;
            ok = true;
            for (int d = 0; d < p->meta->meta.rank; d++)
                if (!hop_expr_const_value(p->meta->meta.sizes[d], &v) || (numel *= v) != 1)
                    ok = false;
        } else if (p->meta->kind == HOP_VALUE_SYM) {
            ok = hop_expr_is_bool(p->meta->sym);
        }
        if (!ok) {
            describe(p->meta, what, sizeof what);
            return hop_error(HOP_DTYPE,
                             "cond: pred must be a bool scalar tensor or a SymBool; "
                             "got %s (%s)",
                             p->name, what);
        }
        hop_node *local = hop_tracer_lift(c->parent, pred->u.node);
        if (local == NULL)
            return hop_error(hop_error_code(), "cond: pred: %s", hop_error_message());
        c->lead[0] = hop_arg_node(local);
        c->nlead = 1;
        c->body_operands = 1;
        return hop_prim_hop_base()->check_operands(c);
    }
    default:
        return hop_error(HOP_DTYPE, "cond: pred must be a bool scalar tensor, a SymBool or a "
                                    "bool");
    }
    c->lead[0] = *pred;
    c->nlead = 1;
    c->body_operands = 1;
    return hop_prim_hop_base()->check_operands(c);
}

static hop_status
cond_check_outputs(hop_call *c)
{
    const hop_values *t = &c->results[0], *f = &c->results[1];
    if (t->n != f->n)
        return hop_error(HOP_TRACE,
                         "cond: the true branch returns %zu value%s but the false "
                         "branch returns %zu",
                         t->n, t->n == 1 ? "" : "s", f->n);
    for (size_t i = 0; i < t->n; i++) {
        const hop_value_info *a = t->items[i]->meta, *b = f->items[i]->meta;
        bool same = a->kind == b->kind;
        if (same && a->kind == HOP_VALUE_TENSOR)
            same = a->meta.dtype == b->meta.dtype && a->meta.rank == b->meta.rank;
        if (!same) {
            char x[128], y[128];
            describe(a, x, sizeof x);
            describe(b, y, sizeof y);
            return hop_error(HOP_TRACE,
                             "cond: output %zu of the true branch is %s but the false "
                             "branch gives %s",
                             i, x, y);
        }
    }
    return HOP_OK;
}

static bool
graph_has_guard(const hop_graph *g, const hop_expr *cond)
{
    for (size_t i = 0; i < g->nguards; i++)
        if (g->guards[i] == cond)
            return true;
    return false;
}

/* A size both branches agree on, else a fresh unbacked symbol. */
static const hop_expr *
merge_size(hop_call *c, const hop_expr *a, const hop_expr *b)
{
    if (a == b)
        return a;
    hop_shape_env *env = hop_output_graph_env(c->og);
    /* A guard may already equate them (s1 == 4 once a branch broadcast a
     * dynamic dim against a static tensor): then they are one size, and an
     * unbacked symbol would make later uses undecidable.  A guard of the
     * caller holds whichever branch runs.  One of a branch's own guards
     * holds only when that branch runs, and then the other branch's size is
     * right too, so that one is the merged size. */
    const hop_expr *eq = hop_sym_eq(env, a, b);
    if (eq == NULL)
        return NULL;
    for (size_t i = 0, n = hop_shape_env_nguards(env); i < n; i++) {
        if (hop_shape_env_guard(env, i) == eq)
            return a;
    }
    if (graph_has_guard(c->graphs[0], eq))
        return b;
    if (graph_has_guard(c->graphs[1], eq))
        return a;
    int64_t alo, ahi, blo, bhi;
    hop_shape_env_bounds(env, a, &alo, &ahi);
    hop_shape_env_bounds(env, b, &blo, &bhi);
    return hop_shape_env_unbacked(env, alo < blo ? alo : blo, ahi > bhi ? ahi : bhi);
}

static hop_status
cond_output_meta(hop_call *c)
{
    const hop_values *t = &c->results[0], *f = &c->results[1];
    hop_status st = hop_prim_hop_base()->output_meta(c); /* copies the true branch's */
    if (st != HOP_OK)
        return st;
    for (size_t i = 0; i < t->n; i++) {
        hop_value_info *o = &c->outs[i];
        const hop_value_info *b = f->items[i]->meta;
        if (o->kind == HOP_VALUE_SYM) {
            o->sym = merge_size(c, o->sym, b->sym);
            if (o->sym == NULL)
                return hop_error_code();
            continue;
        }
        for (int d = 0; d < o->meta.rank; d++) {
            o->meta.sizes[d] = merge_size(c, o->meta.sizes[d], b->meta.sizes[d]);
            if (o->meta.sizes[d] == NULL)
                return hop_error_code();
        }
    }
    return HOP_OK;
}

/* Binds, in the parent, the unbacked symbols the merged outputs introduced. */
static hop_status
cond_installed(hop_call *c)
{
    const hop_values *t = &c->results[0];
    for (size_t i = 0; i < c->nouts; i++) {
        hop_node *item = c->outputs->items[c->outputs->n - c->nouts + i];
        const hop_value_info *o = &c->outs[i];
        if (o->kind == HOP_VALUE_SYM) {
            if (o->sym != t->items[i]->meta->sym &&
                hop_tracer_bound_symbol(c->parent, o->sym) == NULL &&
                hop_tracer_bind_value(c->parent, o->sym, item) != HOP_OK)
                return hop_error_code();
            continue;
        }
        for (int d = 0; d < o->meta.rank; d++) {
            const hop_expr *s = o->meta.sizes[d];
            if (hop_expr_kind_of(s) != HOP_EXPR_SYMBOL || !hop_symbol_is_unbacked(s) ||
                hop_tracer_bound_symbol(c->parent, s))
                continue;
            hop_arg args[] = {hop_arg_node(item), hop_arg_int(d)};
            if (hop_tracer_call_op(c->parent, HOP_OP_sym_size, args, 2) == NULL)
                return hop_error_code();
        }
    }
    return HOP_OK;
}

const hop_hop_class hop_cond_class = {
    .name = "cond",
    .nbodies = 2,
    .prefixes = {"cond_true", "cond_false"},
    .input_mode = HOP_INPUTS_LIFTED,
    .guard_mode = HOP_GUARDS_BRANCH,
    .check_operands = cond_check_operands,
    .check_outputs = cond_check_outputs,
    .output_meta = cond_output_meta,
    .installed = cond_installed,
};

/* A pred known at trace time: run the chosen branch inline, like Python's if. */
static hop_status
cond_inline(hop_output_graph *og, bool pred, hop_body branch, const hop_arg *operands,
            size_t noperands, hop_values *outputs)
{
    if (branch.fn == NULL)
        return hop_error(HOP_INVALID, "cond: %s branch is not callable (NULL function)",
                         branch_name[pred ? 0 : 1]);
    hop_node *small[8], **inputs = small;
    if (noperands > 8 && (inputs = hop_calloc(noperands, sizeof *inputs)) == NULL)
        return hop_error_code();
    for (size_t i = 0; i < noperands; i++) {
        if (operands[i].kind != HOP_ARG_NODE || operands[i].u.node == NULL) {
            if (inputs != small)
                hop_free(inputs);
            return hop_error(HOP_INVALID,
                             "cond: operand %zu must be a traced value (a tensor or a SymInt)",
                             i + 1);
        }
        inputs[i] = operands[i].u.node;
    }
    hop_checkpoint *cp = hop_output_graph_checkpoint(og);
    hop_tracer *t = hop_output_graph_current(og);
    size_t before = outputs->n;
    hop_status st = cp ? branch.fn(t, branch.ud, inputs, noperands, outputs) : hop_error_code();
    for (size_t i = before; i < outputs->n && st == HOP_OK; i++) {
        hop_node *v = outputs->items[i] ? hop_tracer_lift(t, outputs->items[i]) : NULL;
        if (v == NULL)
            st = outputs->items[i] ? hop_error_code()
                                   : hop_error(HOP_INVALID,
                                               "cond: output %zu of the %s branch "
                                               "is NULL",
                                               i - before, branch_name[pred ? 0 : 1]);
        else
            outputs->items[i] = v;
    }
    if (inputs != small)
        hop_free(inputs);
    if (st != HOP_OK && cp) {
        outputs->n = before;
        return hop_output_graph_abandon(og, cp, st);
    }
    hop_checkpoint_free(cp);
    return st;
}

hop_status
hop_cond(hop_output_graph *og, hop_arg pred, hop_body true_fn, hop_body false_fn,
         const hop_arg *operands, size_t noperands, hop_values *outputs)
{
    if (og == NULL || outputs == NULL || (noperands > 0 && operands == NULL))
        return hop_error(HOP_MISUSE, "hop_cond: NULL %s",
                         og == NULL        ? "output graph"
                         : outputs == NULL ? "outputs"
                                           : "operands");
    int64_t value;
    if (pred.kind == HOP_ARG_BOOL)
        return cond_inline(og, pred.u.b, pred.u.b ? true_fn : false_fn, operands, noperands,
                           outputs);
    if (pred.kind == HOP_ARG_SYM && pred.u.sym && hop_expr_is_bool(pred.u.sym) &&
        hop_expr_const_value(pred.u.sym, &value))
        return cond_inline(og, value != 0, value ? true_fn : false_fn, operands, noperands,
                           outputs);
    hop_arg small[8], *all = small;
    if (noperands + 1 > 8 && (all = hop_calloc(noperands + 1, sizeof *all)) == NULL)
        return hop_error_code();
    all[0] = pred;
    if (noperands)
        memcpy(all + 1, operands, noperands * sizeof *all);
    hop_body bodies[2] = {true_fn, false_fn};
    hop_status st = hop_hop_call(og, &hop_cond_class, all, noperands + 1, bodies, 2, outputs);
    if (all != small)
        hop_free(all);
    return st;
}

/* ------------------------------------------------------------------- map */

static hop_status
map_check_operands(hop_call *c)
{
    if (c->noperands < 2 || c->operands[0].kind != HOP_ARG_INT || c->operands[0].u.i < 1 ||
        (size_t)c->operands[0].u.i > c->noperands - 1)
        return hop_error(HOP_INVALID, "map: needs at least one xs to map over");
    size_t nxs = (size_t)c->operands[0].u.i;
    c->body_operands = 1;
    hop_status st = hop_prim_hop_base()->check_operands(c);
    if (st != HOP_OK)
        return st;
    hop_shape_env *env = hop_output_graph_env(c->og);
    const hop_meta *first = NULL;
    for (size_t i = 0; i < nxs; i++) {
        const hop_node *x = c->operands[1 + i].u.node;
        char what[128];
        describe(x->meta, what, sizeof what);
        if (x->meta->kind != HOP_VALUE_TENSOR || x->meta->meta.rank < 1)
            return hop_error(HOP_SHAPE,
                             "map: xs %zu (%s) is %s; map needs a tensor of rank >= 1 "
                             "to slice along dim 0",
                             i, x->name, what);
        int64_t n;
        if (hop_expr_const_value(x->meta->meta.sizes[0], &n) && n == 0)
            return hop_error(HOP_SHAPE,
                             "map: xs %zu (%s) is %s: zero-length along dim 0, so "
                             "there is nothing to map over",
                             i, x->name, what);
        if (first == NULL) {
            first = &x->meta->meta;
            continue;
        }
        bool eq;
        st = hop_shape_env_decide_eq(env, first->sizes[0], x->meta->meta.sizes[0], "map", &eq);
        if (st != HOP_OK)
            return st;
        if (!eq) {
            char a[96], b[96];
            hop_expr_print(first->sizes[0], a, sizeof a);
            hop_expr_print(x->meta->meta.sizes[0], b, sizeof b);
            return hop_error(HOP_SHAPE,
                             "map: xs %zu (%s) has %s rows but xs 0 has %s; every xs "
                             "needs the same leading size",
                             i, x->name, b, a);
        }
    }
    return HOP_OK;
}

static hop_status
map_body_inputs(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->body_inputs(c);
    if (st != HOP_OK)
        return st;
    size_t nxs = (size_t)c->operands[0].u.i;
    for (size_t i = 0; i < nxs; i++) {
        hop_meta *m = &c->input_meta[i].meta;
        for (int d = 1; d < m->rank; d++)
            m->sizes[d - 1] = m->sizes[d];
        m->rank--;
    }
    return HOP_OK;
}

static hop_status
map_output_meta(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->output_meta(c);
    if (st != HOP_OK)
        return st;
    const hop_expr *n = c->operands[1].u.node->meta->meta.sizes[0];
    for (size_t i = 0; i < c->nouts; i++) {
        hop_value_info *o = &c->outs[i];
        char what[128];
        describe(o, what, sizeof what);
        if (o->kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_TRACE,
                             "map: output %zu of the body is %s; a map body must "
                             "return tensors",
                             i, what);
        if (o->meta.rank >= HOP_MAX_RANK)
            return hop_error(HOP_SHAPE,
                             "map: output %zu of the body is %s; stacking it would "
                             "exceed rank %d",
                             i, what, HOP_MAX_RANK);
        for (int d = o->meta.rank; d > 0; d--)
            o->meta.sizes[d] = o->meta.sizes[d - 1];
        o->meta.sizes[0] = n;
        o->meta.rank++;
    }
    return HOP_OK;
}

const hop_hop_class hop_map_class = {
    .name = "map",
    .nbodies = 1,
    .prefixes = {"map_body"},
    .input_mode = HOP_INPUTS_EXPLICIT,
    .check_operands = map_check_operands,
    .body_inputs = map_body_inputs,
    .output_meta = map_output_meta,
};

hop_status
hop_map(hop_output_graph *og, hop_body f, const hop_arg *xs, size_t nxs, const hop_arg *args,
        size_t nargs, hop_values *outputs)
{
    if ((nxs > 0 && xs == NULL) || (nargs > 0 && args == NULL))
        return hop_error(HOP_MISUSE, "hop_map: NULL %s", xs == NULL ? "xs" : "args");
    size_t n = 1 + nxs + nargs;
    hop_arg *all = hop_calloc(n, sizeof *all);
    if (all == NULL)
        return hop_error_code();
    all[0] = hop_arg_int((int64_t)nxs);
    if (nxs)
        memcpy(all + 1, xs, nxs * sizeof *all);
    if (nargs)
        memcpy(all + 1 + nxs, args, nargs * sizeof *all);
    hop_status st = hop_hop_call(og, &hop_map_class, all, n, &f, 1, outputs);
    hop_free(all);
    return st;
}

/* -------------------------------------------------------- invoke_subgraph */

/*
 * The cache: one entry per installed subgraph, keyed by the body (fn, ud),
 * the tracer the call is recorded in and the explicit inputs' metadata.  An
 * entry is valid while its subgraph is still installed in that tracer's graph
 * (a restore may have removed it), which is checked on every hit.
 */
typedef struct subgraph_entry {
    hop_body_fn fn;
    void *ud;
    hop_tracer *parent;
    hop_graph *graph;
    hop_value_info *inputs; /* ninputs */
    size_t ninputs;
    hop_value_info *outs; /* nouts */
    size_t nouts;
    hop_node **lifted; /* the parent's values for the lifted inputs */
    size_t nlifted;
} subgraph_entry;

typedef struct subgraph_cache {
    subgraph_entry *entries;
    size_t n;
} subgraph_cache;

static void
entry_free(subgraph_entry *e)
{
    hop_free(e->inputs);
    hop_free(e->outs);
    hop_free(e->lifted);
}

static void
cache_free(void *p)
{
    subgraph_cache *cache = p;
    for (size_t i = 0; i < cache->n; i++)
        entry_free(&cache->entries[i]);
    hop_free(cache->entries);
    hop_free(cache);
}

static bool
value_info_equal(const hop_value_info *a, const hop_value_info *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == HOP_VALUE_SYM)
        return a->sym == b->sym;
    return hop_meta_equal(&a->meta, &b->meta);
}

static bool
installed_in(const hop_graph *sub, const hop_graph *parent)
{
    for (size_t i = 0; parent && i < parent->nsubgraphs; i++)
        if (parent->subgraphs[i] == sub)
            return true;
    return false;
}

static hop_status
invoke_lookup(hop_call *c)
{
    subgraph_cache *cache = hop_output_graph_data(c->og, &hop_invoke_subgraph_class);
    if (cache == NULL)
        return HOP_OK;
    const hop_body *body = &c->bodies[0];
    hop_graph *pg = hop_tracer_graph(c->parent);
    for (size_t i = 0; i < cache->n; i++) {
        subgraph_entry *e = &cache->entries[i];
        if (e->fn != body->fn || e->ud != body->ud || e->parent != c->parent ||
            e->ninputs != c->ninputs)
            continue;
        bool same = true;
        for (size_t k = 0; k < e->ninputs && same; k++)
            same = value_info_equal(&e->inputs[k], &c->input_meta[k]);
        if (!same)
            continue;
        if (!installed_in(e->graph, pg)) {
            /* Undone by a restore: forget it. */
            entry_free(e);
            cache->entries[i--] = cache->entries[--cache->n];
            continue;
        }
        for (size_t k = 0; k < c->ninputs; k++) {
            hop_node *v = hop_tracer_lift(c->parent, c->operands[c->body_operands + k].u.node);
            if (v == NULL || hop_values_push(&c->passed, v) != HOP_OK)
                return hop_error_code();
        }
        for (size_t k = 0; k < e->nlifted; k++)
            if (hop_values_push(&c->passed, e->lifted[k]) != HOP_OK)
                return hop_error_code();
        c->outs = hop_calloc(e->nouts + 1, sizeof *c->outs);
        if (c->outs == NULL)
            return hop_error_code();
        memcpy(c->outs, e->outs, e->nouts * sizeof *c->outs);
        c->nouts = e->nouts;
        c->reuse[0] = e->graph;
        return HOP_OK;
    }
    return HOP_OK;
}

static hop_status
invoke_installed(hop_call *c)
{
    if (c->reuse[0])
        return HOP_OK;
    subgraph_cache *cache = hop_output_graph_data(c->og, &hop_invoke_subgraph_class);
    if (cache == NULL) {
        cache = hop_calloc(1, sizeof *cache);
        if (cache == NULL || hop_output_graph_set_data(c->og, &hop_invoke_subgraph_class, cache,
                                                       cache_free) != HOP_OK) {
            hop_free(cache);
            return hop_error_code();
        }
    }
    subgraph_entry *grown = hop_realloc(cache->entries, (cache->n + 1) * sizeof *grown);
    if (grown == NULL)
        return hop_error_code();
    cache->entries = grown;
    subgraph_entry e = {.fn = c->bodies[0].fn,
                        .ud = c->bodies[0].ud,
                        .parent = c->parent,
                        .graph = c->graphs[0],
                        .ninputs = c->ninputs,
                        .nouts = c->nouts,
                        .nlifted = c->passed.n - c->ninputs};
    e.inputs = hop_calloc(e.ninputs + 1, sizeof *e.inputs);
    e.outs = hop_calloc(e.nouts + 1, sizeof *e.outs);
    e.lifted = hop_calloc(e.nlifted + 1, sizeof *e.lifted);
    if (e.inputs == NULL || e.outs == NULL || e.lifted == NULL) {
        entry_free(&e);
        return hop_error_code();
    }
    /* A body with no inputs, outputs or lifted values has NULL arrays here,
     * and memcpy from NULL is undefined even for 0 bytes. */
    if (e.ninputs)
        memcpy(e.inputs, c->input_meta, e.ninputs * sizeof *e.inputs);
    if (e.nouts)
        memcpy(e.outs, c->outs, e.nouts * sizeof *e.outs);
    if (e.nlifted)
        memcpy(e.lifted, c->passed.items + c->ninputs, e.nlifted * sizeof *e.lifted);
    cache->entries[cache->n++] = e;
    return HOP_OK;
}

const hop_hop_class hop_invoke_subgraph_class = {
    .name = "invoke_subgraph",
    .nbodies = 1,
    .prefixes = {"subgraph"},
    .input_mode = HOP_INPUTS_EXPLICIT,
    .lookup = invoke_lookup,
    .installed = invoke_installed,
};

hop_status
hop_invoke_subgraph(hop_output_graph *og, hop_body f, const hop_arg *args, size_t nargs,
                    hop_values *outputs)
{
    return hop_hop_call(og, &hop_invoke_subgraph_class, args, nargs, &f, 1, outputs);
}
