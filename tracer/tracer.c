/*
 * tracer/tracer.c - the SubgraphTracer: recording ops into its graph and
 * lifting free values and symbols, outer-first, through enclosing tracers.
 *
 * Lifting is recursive on the parent chain: the value for v in tracer t is
 * made from the value for v in t's parent, so each tracer between v's owner
 * and t is visited once, and every later use is one hash lookup keyed by v.
 * Every public entry point is all-or-nothing: the slow path (something must
 * be lifted) opens a scope (hop__tracer_scope_begin), in which every tracer
 * is marked at its first change, and rolls the scope back on failure.
 */
#include "tracer/tracer_impl.h"

#include <stdio.h>

/* ------------------------------------------------------------ accessors */

hop_graph *
hop_tracer_graph(const hop_tracer *t)
{
    return t ? t->graph : NULL;
}

hop_tracer *
hop_tracer_parent(const hop_tracer *t)
{
    return t ? t->parent : NULL;
}

int
hop_tracer_depth(const hop_tracer *t)
{
    return t ? t->depth : -1;
}

hop_tracer_state
hop_tracer_state_of(const hop_tracer *t)
{
    return t ? t->state : HOP_TRACER_ENDED;
}

hop_tracer *
hop_tracer_of(const hop_node *n)
{
    return n && n->graph ? (hop_tracer *)n->graph->user_data : NULL;
}

size_t
hop_tracer_nlifted(const hop_tracer *t)
{
    return t ? t->nlifted : 0;
}

hop_node *
hop_tracer_lifted_placeholder(const hop_tracer *t, size_t i)
{
    return t && i < t->nlifted ? t->lifted[i].placeholder : NULL;
}

hop_node *
hop_tracer_lifted_source_at(const hop_tracer *t, size_t i)
{
    return t && i < t->nlifted ? t->lifted[i].source : NULL;
}

size_t
hop_tracer_rollbacks(const hop_tracer *t)
{
    return t ? t->journal->rollbacks : 0;
}

hop_node *
hop_tracer_lifted_source(const hop_tracer *t, const hop_node *placeholder)
{
    if (t == NULL)
        return NULL;
    for (size_t i = 0; i < t->nlifted; i++)
        if (t->lifted[i].placeholder == placeholder)
            return t->lifted[i].source;
    return NULL;
}

hop_node *
hop_tracer_lifted_cause(const hop_tracer *t, const hop_node *placeholder)
{
    if (t == NULL)
        return NULL;
    for (size_t i = 0; i < t->nlifted; i++)
        if (t->lifted[i].placeholder == placeholder)
            return t->lifted[i].cause;
    return NULL;
}

void
hop_tracer_set_lift_hook(hop_tracer *t, hop_lift_hook hook, void *ud)
{
    if (t == NULL)
        return;
    t->hook = hook;
    t->hook_ud = ud;
}

/* ------------------------------------------------------ undoable tables */

/* The value of the newest entry for key, or NULL. */
static hop_node *
memo_get(const hop__memo *m, const void *key)
{
    const hop__memo_entry *e = hop__logindex_find(&m->log, key);
    return e ? e->value : NULL;
}

/* Adds key -> value, indexed at once (lookups are most of a table's
 * use).  HOP_NOMEM changes nothing. */
static hop_status
memo_put(hop__memo *m, const void *key, hop_node *value)
{
    hop__memo_entry *e = hop__logindex_push(&m->log);
    if (e == NULL)
        return HOP_NOMEM;
    *e = (hop__memo_entry){key, value};
    if (hop__logindex_index(&m->log) != HOP_OK) {
        hop__logindex_truncate(&m->log, m->log.n - 1);
        return HOP_NOMEM;
    }
    return HOP_OK;
}

hop_node *
hop_tracer_bound_symbol(const hop_tracer *t, const hop_expr *sym)
{
    if (t == NULL || sym == NULL)
        return NULL;
    return memo_get(&t->syms, sym);
}

/* ------------------------------------------------------ life and undo */

/* A tracer's graph was freed by its owner (a parent graph's free, or DCE of
 * the parent): forget it, so that nobody reaches it through the tracer. */
static void
forget_graph(hop_graph *g)
{
    hop_tracer *t = g->user_data;
    if (t && t->graph == g)
        t->graph = NULL;
}

hop_tracer *
hop__tracer_new(hop_graph *graph, hop_tracer *parent, void *owner)
{
    hop_tracer *t = hop__calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->journal = parent ? parent->journal : hop__calloc(1, sizeof *t->journal);
    if (t->journal == NULL) {
        hop__free(t);
        return NULL;
    }
    hop__logindex_init(&t->lifts.log, sizeof(hop__memo_entry), t->lifts.small, HOP__TRACER_SMALL);
    hop__logindex_init(&t->syms.log, sizeof(hop__memo_entry), t->syms.small, HOP__TRACER_SMALL);
    t->graph = graph;
    t->parent = parent;
    t->depth = parent ? parent->depth + 1 : 0;
    t->state = HOP_TRACER_CURRENT;
    t->owner = owner;
    if (parent) {
        t->hook = parent->hook;
        t->hook_ud = parent->hook_ud;
    }
    graph->user_data = t;
    graph->free_hook = forget_graph;
    return t;
}

void *
hop__tracer_owner(const hop_tracer *t)
{
    return t ? t->owner : NULL;
}

void
hop__tracer_set_state(hop_tracer *t, hop_tracer_state state)
{
    t->state = state;
}

void
hop__tracer_free(hop_tracer *t)
{
    if (t == NULL)
        return;
    hop__logindex_free(&t->lifts.log);
    hop__logindex_free(&t->syms.log);
    if (t->parent == NULL) {
        if (t->journal->items != t->journal->small)
            hop__free(t->journal->items);
        hop__free(t->journal);
    }
    if (t->lifted != t->lifted_small)
        hop__free(t->lifted);
    hop__free(t);
}

static void
mark_of(const hop_tracer *t, hop__tracer_mark *m)
{
    m->last = t->graph->last;
    m->nplaceholders = t->graph->nplaceholders;
    m->nsubgraphs = t->graph->nsubgraphs;
    m->nlift_log = t->lifts.log.n;
    m->nsym_log = t->syms.log.n;
    m->nlifted = t->nlifted;
}

static void
rollback(hop_tracer *t, const hop__tracer_mark *m, void (*orphan)(void *ctx, hop_graph *g),
         void *ctx)
{
    hop_graph *g = t->graph;
    /* Nodes after the mark, newest first, so users go before what they use.
     * Placeholders are skipped here: new ones are removed by position below. */
    for (hop_node *n = g->last; n != NULL && n != m->last;) {
        hop_node *prev = n->prev;
        if (n->kind != HOP_NODE_PLACEHOLDER)
            hop_graph_erase_node(g, n);
        n = prev;
    }
    while (g->nplaceholders > m->nplaceholders)
        hop_graph_erase_node(g, hop_graph_placeholder_at(g, g->nplaceholders - 1));
    while (g->nsubgraphs > m->nsubgraphs) {
        hop_graph *sub = g->subgraphs[g->nsubgraphs - 1];
        hop_graph_remove_subgraph(g, sub);
        if (orphan)
            orphan(ctx, sub);
    }
    hop__logindex_truncate(&t->lifts.log, m->nlift_log);
    hop__logindex_truncate(&t->syms.log, m->nsym_log);
    t->nlifted = m->nlifted;
}

/* Called before the tracer layer changes t: in an open scope, journals t's
 * mark at its first change since the innermost scope began.  Scope numbers
 * only grow, so a tracer touched at or after the innermost scope's number
 * was journaled in that scope or in one opened inside it since and kept,
 * whose entries are the innermost scope's now (hop__tracer_scope_end).
 * HOP_NOMEM (nothing changed) when the journal cannot grow. */
static hop_status
touch(hop_tracer *t)
{
    hop__journal *j = t->journal;
    if (j->scopes == 0 || t->touched >= j->gen)
        return HOP_OK;
    if (hop__grow_small((void **)&j->items, &j->cap, j->n + 1, sizeof *j->items, j->small,
                        HOP__TRACER_SMALL) != HOP_OK)
        return HOP_NOMEM;
    j->items[j->n].t = t;
    j->items[j->n].prev = t->touched;
    mark_of(t, &j->items[j->n].mark);
    j->n++;
    t->touched = j->gen;
    return HOP_OK;
}

void
hop__tracer_scope_begin(hop_tracer *t, hop__tracer_scope *s)
{
    hop__journal *j = t->journal;
    s->t = t;
    mark_of(t, &s->mark);
    s->at = j->n;
    s->outer = j->gen;
    j->scopes++;
    j->gen = ++j->last; /* every tracer's next change is journaled for this scope */
}

void
hop__tracer_scope_end(hop__tracer_scope *s, bool undo, void (*orphan)(void *ctx, hop_graph *g),
                      void *ctx)
{
    hop__journal *j = s->t->journal;
    if (undo) {
        /* Newest first: each tracer goes back to its state at its first
         * change in this scope, and s->t to its state at the beginning
         * last of all. */
        while (j->n > s->at) {
            hop__journal_entry *e = &j->items[--j->n];
            /* A tracer pushed since and popped (a body being traced when
             * the scope failed) keeps its graph as it is, as its owner
             * keeps the graph itself. */
            if (e->t->state != HOP_TRACER_ENDED)
                rollback(e->t, &e->mark, orphan, ctx);
            e->t->touched = e->prev;
        }
        rollback(s->t, &s->mark, orphan, ctx);
        j->rollbacks++;
    }
    /* Kept changes stay where they are and so belong to the enclosing
     * scope, whose entries are everything from its own start: an undo of
     * it, newest first, ends each tracer at its oldest entry's mark, the
     * state it had when that scope began (a tracer with an entry of its own
     * there as well has a later one too, which that undo passes first).
     * Touching them again in the enclosing scope journals nothing (touch:
     * their numbers are this scope's, above the enclosing one's).  Handing
     * the entries on one by one cost O(tracers touched) per scope: in a
     * nest, whose innermost op lifts into every level, O(depth) per level
     * (issue #30).  An ended tracer's entry is left too; an undo skips it. */
    j->scopes--;
    j->gen = s->outer;
    if (j->scopes == 0) { /* nothing to undo any more: no memory held either */
        if (j->items != j->small)
            hop__free(j->items);
        j->items = NULL;
        j->n = j->cap = 0;
    }
}

/* --------------------------------------------------------------- tables */

static hop_status
remember_lift(hop_tracer *t, const hop_node *key, hop_node *value)
{
    if (touch(t) != HOP_OK)
        return HOP_NOMEM;
    return memo_put(&t->lifts, key, value);
}

static hop_node *
find_lift(const hop_tracer *t, const hop_node *key)
{
    return memo_get(&t->lifts, key);
}

static hop_status
remember_symbol(hop_tracer *t, const hop_expr *sym, hop_node *value)
{
    if (touch(t) != HOP_OK)
        return HOP_NOMEM;
    return memo_put(&t->syms, sym, value);
}

static hop_status
remember_lifted(hop_tracer *t, hop_node *placeholder, hop_node *source)
{
    if (touch(t) != HOP_OK)
        return HOP_NOMEM;
    if (hop__grow_small((void **)&t->lifted, &t->lifted_cap, t->nlifted + 1, sizeof *t->lifted,
                        t->lifted_small, HOP__TRACER_SMALL) != HOP_OK)
        return HOP_NOMEM;
    t->lifted[t->nlifted] = (hop__lifted){
        .placeholder = placeholder,
        .source = source,
        .cause = placeholder->meta->kind == HOP_VALUE_SYM ? t->cause : NULL,
    };
    t->nlifted++;
    if (t->hook && t->hook(t->hook_ud, t, placeholder, source) != HOP_OK) {
        t->nlifted--;
        return hop_error_code();
    }
    return HOP_OK;
}

hop_status
hop__tracer_add_lifted(hop_tracer *t, hop_node *ph, hop_node *source, hop_node *cause)
{
    hop_node *saved = t->cause;
    t->cause = cause;
    hop_status st = remember_lifted(t, ph, source);
    t->cause = saved;
    return st;
}

/* --------------------------------------------------------------- lifting */

/* A SymInt value that is exactly one symbol: that symbol, else NULL. */
static const hop_expr *
single_symbol(const hop_node *v)
{
    if (v->meta->kind != HOP_VALUE_SYM || v->meta->sym == NULL)
        return NULL;
    return hop_expr_kind_of(v->meta->sym) == HOP_EXPR_SYMBOL ? v->meta->sym : NULL;
}

static hop_node *bind_symbol(hop_tracer *t, const hop_expr *sym);
static hop_node *bind_root_symbol(hop_tracer *t, const hop_expr *sym);

/* Binds, in sorted order, the free symbols of a tensor's shape in t: by
 * lifting them in a subtracer, as new inputs at the root. */
static hop_status
bind_shape_symbols(hop_tracer *t, const hop_meta *m, hop_node *shape_of)
{
    const hop_expr *syms[2 * HOP_MAX_RANK];
    size_t n = 0;
    for (int d = 0; d < m->rank; d++) {
        const hop_expr *found[2 * HOP_MAX_RANK];
        size_t k = hop_expr_free_symbols(m->sizes[d], found, HOP__ARRAY_LEN(found));
        if (k > HOP__ARRAY_LEN(found))
            k = HOP__ARRAY_LEN(found);
        for (size_t i = 0; i < k; i++) {
            size_t j = 0;
            while (j < n && syms[j] != found[i])
                j++;
            if (j == n && n < HOP__ARRAY_LEN(syms))
                syms[n++] = found[i];
        }
    }
    /* Insertion sort by name: shapes have few symbols. */
    for (size_t i = 1; i < n; i++) {
        const hop_expr *s = syms[i];
        size_t j = i;
        while (j > 0 && hop_expr_compare(syms[j - 1], s) > 0) {
            syms[j] = syms[j - 1];
            j--;
        }
        syms[j] = s;
    }
    hop_node *saved = t->cause;
    t->cause = shape_of;
    for (size_t i = 0; i < n; i++) {
        hop_node *v = t->parent ? bind_symbol(t, syms[i]) : bind_root_symbol(t, syms[i]);
        if (v == NULL) {
            t->cause = saved;
            return hop_error_code();
        }
    }
    t->cause = saved;
    return HOP_OK;
}

/* A placeholder of t's graph for sym, remembered as what yields it. */
static hop_node *
symbol_placeholder(hop_tracer *t, const hop_expr *sym)
{
    hop_value_info meta = {.kind = HOP_VALUE_SYM, .sym = sym};
    hop_node *ph =
        touch(t) == HOP_OK ? hop_graph_placeholder(t->graph, hop_symbol_name(sym), &meta) : NULL;
    return ph == NULL || remember_symbol(t, sym, ph) != HOP_OK ? NULL : ph;
}

static hop_node *
bind_root_symbol(hop_tracer *t, const hop_expr *sym)
{
    hop_node *v = hop_tracer_bound_symbol(t, sym);
    return v ? v : symbol_placeholder(t, sym);
}

static hop_node *
bind_symbol(hop_tracer *t, const hop_expr *sym)
{
    hop_node *v = hop_tracer_bound_symbol(t, sym);
    if (v)
        return v;
    if (t->parent == NULL) {
        hop_error(HOP_TRACE, "symbol %s is not bound in graph %s (no input or op yields it)",
                  hop_symbol_name(sym), t->graph->name);
        return NULL;
    }
    hop_node *outer = bind_symbol(t->parent, sym);
    if (outer == NULL)
        return NULL;
    hop_node *ph = symbol_placeholder(t, sym);
    if (ph == NULL || remember_lift(t, outer, ph) != HOP_OK ||
        remember_lifted(t, ph, outer) != HOP_OK)
        return NULL; /* the caller's rollback removes what was added */
    return ph;
}

static hop_node *
lift_from(hop_tracer *t, hop_node *v, const hop_tracer *owner)
{
    if (t == owner)
        return v;
    hop_node *found = find_lift(t, v);
    if (found)
        return found;
    const hop_expr *sym = single_symbol(v);
    if (sym) {
        hop_node *bound = bind_symbol(t, sym);
        if (bound == NULL || remember_lift(t, v, bound) != HOP_OK)
            return NULL;
        return bound;
    }
    hop_node *outer = lift_from(t->parent, v, owner);
    if (outer == NULL)
        return NULL;
    found = find_lift(t, outer);
    if (found) /* reached under another name: the parent's own value */
        return remember_lift(t, v, found) == HOP_OK ? found : NULL;
    if (outer->meta->kind == HOP_VALUE_TENSOR &&
        bind_shape_symbols(t, &outer->meta->meta, outer) != HOP_OK)
        return NULL;
    hop_node *ph =
        touch(t) == HOP_OK ? hop_graph_placeholder(t->graph, v->name, outer->meta) : NULL;
    if (ph == NULL || remember_lift(t, v, ph) != HOP_OK || remember_lifted(t, ph, outer) != HOP_OK)
        return NULL;
    if (outer != v && remember_lift(t, outer, ph) != HOP_OK)
        return NULL;
    return ph;
}

/* Checks that v may be used in t; returns v's owner or NULL (error set). */
static hop_tracer *
usable_owner(const hop_tracer *t, const hop_node *v)
{
    hop_tracer *owner = hop_tracer_of(v);
    if (owner == NULL) {
        hop_error(HOP_MISUSE, "value %s is not a traced value (its graph has no tracer)",
                  v->name ? v->name : "?");
        return NULL;
    }
    if (owner == t)
        return owner;
    if (owner->state == HOP_TRACER_ENDED) {
        hop_error(HOP_TRACE,
                  "value %s was created in subgraph %s, whose tracing has ended; a value made "
                  "inside a body cannot be used outside it (return it from the body instead)",
                  v->name, owner->graph->name);
        return NULL;
    }
    if (owner->owner != t->owner) {
        hop_error(HOP_MISUSE, "value %s belongs to graph %s of another OutputGraph than graph %s's",
                  v->name, owner->graph->name, t->graph->name);
        return NULL;
    }
    for (const hop_tracer *p = t->parent; p; p = p->parent)
        if (p == owner)
            return owner;
    hop_error(HOP_MISUSE, "value %s belongs to graph %s, which does not enclose graph %s", v->name,
              owner->graph->name, t->graph->name);
    return NULL;
}

hop_node *
hop_tracer_lift(hop_tracer *t, hop_node *v)
{
    if (t == NULL || v == NULL) {
        hop_error(HOP_MISUSE, "hop_tracer_lift: NULL %s", t ? "value" : "tracer");
        return NULL;
    }
    /* An ended tracer's graph is final: its caller has its signature. */
    if (t->state == HOP_TRACER_ENDED) {
        hop_error(HOP_MISUSE, "hop_tracer_lift: the tracer of graph %s has ended", t->graph->name);
        return NULL;
    }
    /* A value already lifted into t is valid: its owner encloses t. */
    hop_node *found = find_lift(t, v);
    if (found)
        return found;
    hop_tracer *owner = usable_owner(t, v);
    if (owner == NULL)
        return NULL;
    if (owner == t)
        return v;
    hop__tracer_scope scope;
    hop__tracer_scope_begin(t, &scope);
    hop_node *r = lift_from(t, v, owner);
    hop__tracer_scope_end(&scope, r == NULL, NULL, NULL);
    return r;
}

hop_node *
hop_tracer_bind_symbol(hop_tracer *t, const hop_expr *sym)
{
    if (t == NULL || sym == NULL || hop_expr_kind_of(sym) != HOP_EXPR_SYMBOL) {
        hop_error(HOP_MISUSE, "hop_tracer_bind_symbol: needs a tracer and a symbol");
        return NULL;
    }
    hop_node *v = hop_tracer_bound_symbol(t, sym);
    if (v)
        return v;
    if (t->state == HOP_TRACER_ENDED) {
        hop_error(HOP_MISUSE, "hop_tracer_bind_symbol: the tracer of graph %s has ended",
                  t->graph->name);
        return NULL;
    }
    hop__tracer_scope scope;
    hop__tracer_scope_begin(t, &scope);
    hop_node *r = bind_symbol(t, sym);
    hop__tracer_scope_end(&scope, r == NULL, NULL, NULL);
    return r;
}

hop_status
hop_tracer_bind_value(hop_tracer *t, const hop_expr *sym, hop_node *v)
{
    if (t == NULL || sym == NULL || v == NULL)
        return hop_error(HOP_MISUSE, "hop_tracer_bind_value: NULL argument");
    if (hop_tracer_of(v) != t || single_symbol(v) != sym) {
        char text[128];
        hop_expr_print(sym, text, sizeof text);
        return hop_error(HOP_MISUSE,
                         "hop_tracer_bind_value: %s is not a value of graph %s that yields %s",
                         v->name, t->graph->name, text);
    }
    if (hop_tracer_bound_symbol(t, sym))
        return hop_error(HOP_EXISTS, "hop_tracer_bind_value: %s is bound in graph %s already",
                         hop_symbol_name(sym), t->graph->name);
    return remember_symbol(t, sym, v);
}

/* ------------------------------------------------------ recording values */

/* True when recording args in t needs no lifting or binding. */
static bool
args_are_local(const hop_tracer *t, const hop_arg *args, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const hop_arg *a = &args[i];
        switch (a->kind) {
        case HOP_ARG_NODE: /* hop_tracer_of, inline: a call per operand of every op */
            if (a->u.node == NULL || a->u.node->graph == NULL ||
                a->u.node->graph->user_data != (const void *)t)
                return false;
            break;
        case HOP_ARG_SYM: {
            const hop_expr *syms[8];
            size_t k = hop_expr_free_symbols(a->u.sym, syms, HOP__ARRAY_LEN(syms));
            if (k > HOP__ARRAY_LEN(syms))
                return false;
            for (size_t j = 0; j < k; j++)
                if (hop_tracer_bound_symbol(t, syms[j]) == NULL)
                    return false;
            break;
        }
        case HOP_ARG_LIST:
            if (!args_are_local(t, a->u.list.items, a->u.list.n))
                return false;
            break;
        default:
            break;
        }
    }
    return true;
}

/* Rewrites args (a writable copy) so that every node is t's own, and binds
 * the symbols of symbolic arguments. */
static hop_status
localize_args(hop_tracer *t, hop_arg *args, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        hop_arg *a = &args[i];
        if (a->kind == HOP_ARG_NODE) {
            if (a->u.node == NULL)
                return hop_error(HOP_MISUSE, "argument %zu is a NULL value (recording in graph %s)",
                                 i, t->graph->name);
            hop_node *known = find_lift(t, a->u.node);
            if (known) {
                a->u.node = known;
                continue;
            }
            hop_tracer *owner = usable_owner(t, a->u.node);
            if (owner == NULL)
                return hop_error_code();
            hop_node *local = lift_from(t, a->u.node, owner);
            if (local == NULL)
                return hop_error_code();
            a->u.node = local;
        } else if (a->kind == HOP_ARG_SYM && a->u.sym) {
            size_t k = hop_expr_free_symbols(a->u.sym, NULL, 0);
            const hop_expr *small[8], **syms = small;
            if (k > HOP__ARRAY_LEN(small) && (syms = hop__malloc(k * sizeof *syms)) == NULL)
                return HOP_NOMEM;
            hop_expr_free_symbols(a->u.sym, syms, k);
            hop_status st = HOP_OK;
            for (size_t j = 0; j < k && st == HOP_OK; j++)
                if (bind_symbol(t, syms[j]) == NULL)
                    st = hop_error_code();
            if (syms != small)
                hop__free(syms);
            if (st != HOP_OK)
                return st;
        } else if (a->kind == HOP_ARG_LIST && a->u.list.n > 0) {
            hop_status st = localize_args(t, a->u.list.items, a->u.list.n);
            if (st != HOP_OK)
                return st;
        }
    }
    return HOP_OK;
}

/* A deep copy of args in one block (lists point inside it): small, which
 * has room for nsmall arguments, when they fit (an op's few: a malloc and a
 * free were ~250 instructions of every op that lifts a value, issue #30),
 * else allocated; NULL when out of memory. */
static hop_arg *
copy_args(const hop_arg *args, size_t n, hop_arg *small, size_t nsmall)
{
    size_t total = hop_args_count(args, n);
    hop_arg *block = total <= nsmall ? small : hop__malloc(total * sizeof *block);
    if (block == NULL)
        return NULL;
    hop_arg *spare = block + n;
    return hop_args_copy(block, args, n, &spare);
}

/* After recording an op: bind the unbacked symbol it created, if any. */
static hop_status
bind_new_symbols(hop_tracer *t, hop_op op, hop_node *node)
{
    if (op == HOP_OP_item || op == HOP_OP_sym_size) {
        const hop_expr *sym = single_symbol(node);
        if (sym && hop_tracer_bound_symbol(t, sym) == NULL)
            return remember_symbol(t, sym, node);
        return HOP_OK;
    }
    if (op == HOP_OP_nonzero) {
        const hop_expr *sym = node->meta->meta.sizes[0];
        if (hop_expr_kind_of(sym) != HOP_EXPR_SYMBOL || hop_tracer_bound_symbol(t, sym))
            return HOP_OK;
        hop_arg args[] = {hop_arg_node(node), hop_arg_int(0)};
        hop_node *size =
            touch(t) == HOP_OK ? hop_graph_call_op(t->graph, HOP_OP_sym_size, args, 2) : NULL;
        if (size == NULL)
            return hop_error_code();
        return remember_symbol(t, sym, size);
    }
    return HOP_OK;
}

static hop_status
check_current(const hop_tracer *t, const char *what)
{
    if (t == NULL)
        return hop_error(HOP_MISUSE, "%s: NULL tracer", what);
    if (t->state != HOP_TRACER_CURRENT)
        return hop_error(HOP_MISUSE, "%s: tracer of graph %s is %s, not current", what,
                         t->graph->name,
                         t->state == HOP_TRACER_ENDED ? "ended" : "suspended under a subtracer");
    return HOP_OK;
}

typedef enum record_kind { RECORD_OP, RECORD_OUTPUT, RECORD_FOREIGN } record_kind;

/* What a call_foreign node needs besides its arguments. */
typedef struct foreign_call {
    const char *target;
    const hop_value_info *outs;
    size_t nouts;
    unsigned flags;
    hop_node **results; /* one getitem per output */
} foreign_call;

static hop_node *
add_node(hop_tracer *t, record_kind kind, hop_op op, const hop_arg *args, size_t nargs,
         const foreign_call *fc)
{
    if (touch(t) != HOP_OK)
        return NULL;
    if (kind == RECORD_OP)
        return hop_graph_call_op(t->graph, op, args, nargs);
    if (kind == RECORD_OUTPUT)
        return hop_graph_output(t->graph, args, nargs);
    hop_node *call =
        hop_graph_call_foreign(t->graph, fc->target, args, nargs, fc->outs, fc->nouts, fc->flags);
    for (size_t i = 0; call && i < fc->nouts; i++)
        if ((fc->results[i] = hop_graph_getitem(t->graph, call, i)) == NULL)
            call = NULL; /* the caller's rollback erases what was added */
    return call;
}

static hop_node *
record(hop_tracer *t, record_kind kind, hop_op op, const hop_arg *args, size_t nargs,
       const foreign_call *fc)
{
    const char *what = kind == RECORD_OP       ? "hop_tracer_call_op"
                       : kind == RECORD_OUTPUT ? "hop_tracer_output"
                                               : "hop_tracer_record_foreign";
    if (check_current(t, what) != HOP_OK)
        return NULL;
    if (nargs > 0 && args == NULL) {
        hop_error(HOP_MISUSE, "%s: NULL arguments", what);
        return NULL;
    }
    bool local = args_are_local(t, args, nargs);
    bool binds =
        kind == RECORD_OP && (op == HOP_OP_item || op == HOP_OP_nonzero || op == HOP_OP_sym_size);
    if (local && !binds && kind != RECORD_FOREIGN) /* the hot path: nothing to lift or undo */
        return add_node(t, kind, op, args, nargs, fc);

    hop__tracer_scope scope;
    hop__tracer_scope_begin(t, &scope);
    hop_node *node = NULL;
    hop_arg small[8];
    hop_arg *copy = local ? NULL : copy_args(args, nargs, small, HOP__ARRAY_LEN(small));
    if (local || copy) {
        if (local || localize_args(t, copy, nargs) == HOP_OK) {
            node = add_node(t, kind, op, local ? args : copy, nargs, fc);
        }
    }
    if (node && kind == RECORD_OP && bind_new_symbols(t, op, node) != HOP_OK)
        node = NULL;
    if (copy != small)
        hop__free(copy);
    hop__tracer_scope_end(&scope, node == NULL, NULL, NULL);
    return node;
}

hop_node *
hop_tracer_call_op(hop_tracer *t, hop_op op, const hop_arg *args, size_t nargs)
{
    return record(t, RECORD_OP, op, args, nargs, NULL);
}

hop_node *
hop_tracer_output(hop_tracer *t, const hop_arg *values, size_t n)
{
    return record(t, RECORD_OUTPUT, (hop_op)0, values, n, NULL);
}

hop_node *
hop_tracer_record_foreign(hop_tracer *t, const char *target, const hop_arg *args, size_t nargs,
                          const hop_value_info *outs, size_t nouts, unsigned flags,
                          hop_node **results)
{
    if (nouts > 0 && results == NULL) {
        hop_error(HOP_MISUSE, "hop_tracer_record_foreign: NULL results for %zu outputs", nouts);
        return NULL;
    }
    foreign_call fc = {target, outs, nouts, flags, results};
    return record(t, RECORD_FOREIGN, (hop_op)0, args, nargs, &fc);
}

hop_node *
hop_tracer_create_input(hop_tracer *t, const char *name, const hop_value_info *meta)
{
    if (check_current(t, "hop_tracer_create_input") != HOP_OK)
        return NULL;
    return hop__tracer_add_input(t, name, meta);
}

hop_node *
hop_tracer_create_input_for(hop_tracer *t, const char *name, const hop_value_info *meta,
                            hop_node *outer)
{
    if (check_current(t, "hop_tracer_create_input_for") != HOP_OK)
        return NULL;
    if (outer == NULL || usable_owner(t, outer) == NULL || hop_tracer_of(outer) == t) {
        if (outer == NULL || hop_tracer_of(outer) == t)
            hop_error(HOP_MISUSE,
                      "hop_tracer_create_input_for: input %s needs a value of an "
                      "enclosing tracer to stand for",
                      name ? name : "?");
        return NULL;
    }
    if (find_lift(t, outer)) {
        hop_error(HOP_EXISTS,
                  "hop_tracer_create_input_for: %s already has a stand-in in graph "
                  "%s",
                  outer->name, t->graph->name);
        return NULL;
    }
    hop_node *ph = hop__tracer_add_input(t, name, meta);
    if (ph && remember_lift(t, outer, ph) != HOP_OK) {
        hop_graph_erase_node(t->graph, ph);
        return NULL;
    }
    return ph;
}

hop_node *
hop__tracer_add_input(hop_tracer *t, const char *name, const hop_value_info *meta)
{
    if (name == NULL) {
        hop_error(HOP_MISUSE, "hop_tracer_create_input: NULL name");
        return NULL;
    }
    if (meta == NULL || meta->kind == HOP_VALUE_NONE) {
        hop_error(HOP_MISUSE,
                  "hop_tracer_create_input: input %s of graph %s has no example metadata "
                  "(every graph input needs one)",
                  name, t->graph->name);
        return NULL;
    }
    hop__tracer_scope scope;
    hop__tracer_scope_begin(t, &scope);
    hop_node *ph = NULL;
    hop_status st = HOP_OK;
    /* At the root, a tensor's new symbols are placeholders right before it. */
    if (t->parent == NULL && meta->kind == HOP_VALUE_TENSOR)
        st = bind_shape_symbols(t, &meta->meta, NULL);
    if (st == HOP_OK && touch(t) == HOP_OK)
        ph = hop_graph_placeholder(t->graph, name, meta);
    if (ph && meta->kind == HOP_VALUE_SYM) {
        const hop_expr *sym = single_symbol(ph);
        if (sym && hop_tracer_bound_symbol(t, sym) == NULL && remember_symbol(t, sym, ph) != HOP_OK)
            ph = NULL;
    }
    hop__tracer_scope_end(&scope, ph == NULL, NULL, NULL);
    return ph;
}

/* ---------------------------------------------------------------- values */

hop_status
hop_values_push(hop_values *vs, hop_node *v)
{
    if (vs == NULL)
        return hop_error(HOP_MISUSE, "hop_values_push: NULL list");
    if (hop__grow((void **)&vs->items, &vs->cap, vs->n + 1, sizeof *vs->items) != HOP_OK)
        return HOP_NOMEM;
    vs->items[vs->n++] = v;
    return HOP_OK;
}

void
hop_values_clear(hop_values *vs)
{
    if (vs == NULL)
        return;
    hop__free(vs->items);
    vs->items = NULL;
    vs->n = vs->cap = 0;
}
