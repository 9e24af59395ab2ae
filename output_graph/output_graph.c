/*
 * output_graph/output_graph.c - the OutputGraph: owner of the ShapeEnv, the
 * root graph, every tracer and the stack of active ones, the root's inputs and
 * their sources, captured tensors, subgraph name counters, and checkpoints.
 *
 * Ownership: the root graph owns every installed subgraph.  A popped graph
 * that is never installed, or one removed again by a restore, stays owned by
 * its tracer's record here, so proxies into it never dangle; they are dead.
 */
#include "core/hash.h"
#include "output_graph/output_graph_impl.h"
#include "tracer/tracer_owner.h"

#include <stdio.h>

typedef struct input_rec {
    hop_node *node;
    hop_source source;
} input_rec;

typedef struct capture_entry {
    const void *identity;
    hop_node *node;
    UT_hash_handle hh;
} capture_entry;

typedef struct name_counter {
    const char *prefix; /* in og->strings */
    size_t next;
    UT_hash_handle hh;
} name_counter;

typedef struct og_data {
    const void *key;
    void *data;
    void (*free_fn)(void *);
} og_data;

struct hop_output_graph {
    hop_shape_env *env;
    hop_graph *root_graph;
    hop_tracer **tracers; /* every tracer made; [0] is the root */
    size_t ntracers, tracers_cap;
    hop_tracer **stack;
    size_t depth, stack_cap;
    input_rec *inputs;
    size_t ninputs, inputs_cap;
    capture_entry *captures;
    capture_entry **capture_log;
    size_t ncaptures, captures_cap;
    name_counter *counters;
    name_counter **counter_log;
    size_t ncounters, counters_cap;
    hop_graph **orphans; /* graphs a restore removed that no tracer owns */
    size_t norphans, orphans_cap;
    og_data *data;
    size_t ndata, data_cap;
    hop__arena strings; /* name counters' prefixes, names, capture entries */
    /* The last checkpoint freed, kept for the next: every HOP call takes
     * one and frees it (a malloc and a free a call, issue #30). */
    hop_checkpoint *spare;
};

struct hop_checkpoint {
    hop_output_graph *og;
    size_t cap; /* counter_values it has room for */
    size_t depth, ninputs, ncaptures, nguards, nsymbols, ncounters;
    hop__tracer_scope scope; /* the current tracer's; the others' when they change */
    size_t counter_values[]; /* ncounters of them */
};

/* ------------------------------------------------------------ lifecycle */

static hop_tracer *
add_tracer(hop_output_graph *og, hop_graph *graph, hop_tracer *parent)
{
    if (hop__grow((void **)&og->tracers, &og->tracers_cap, og->ntracers + 1, sizeof *og->tracers) !=
            HOP_OK ||
        hop__grow((void **)&og->stack, &og->stack_cap, og->depth + 1, sizeof *og->stack) != HOP_OK)
        return NULL;
    /* The tracer forgets graph when the graph it is installed in frees it,
     * so og never touches a freed graph through it. */
    hop_tracer *t = hop__tracer_new(graph, parent, og);
    if (t == NULL)
        return NULL;
    og->tracers[og->ntracers++] = t;
    og->stack[og->depth++] = t;
    if (parent)
        hop__tracer_set_state(parent, HOP_TRACER_SUSPENDED);
    return t;
}

hop_output_graph *
hop_output_graph_new(void)
{
    hop_output_graph *og = hop__calloc(1, sizeof *og);
    if (og == NULL)
        return NULL;
    /* Subgraph names: ~10 bytes each, most programs have a few. */
    hop__arena_init_first(&og->strings, 256);
    og->env = hop_shape_env_new();
    if (og->env == NULL)
        goto fail;
    og->root_graph = hop_graph_new(og->env, "forward");
    if (og->root_graph == NULL)
        goto fail;
    if (add_tracer(og, og->root_graph, NULL) == NULL)
        goto fail;
    return og;
fail:
    hop_output_graph_free(og);
    return NULL;
}

void
hop_output_graph_free(hop_output_graph *og)
{
    if (og == NULL)
        return;
    /* Find the unowned graphs before freeing any: a graph owns the graphs
     * installed in it, which may belong to other tracers. */
    size_t nfree = 0;
    hop_graph **unowned = hop__malloc((og->ntracers + og->norphans + 1) * sizeof *unowned);
    for (size_t i = 1; unowned && i < og->ntracers; i++) {
        hop_graph *g = hop_tracer_graph(og->tracers[i]);
        if (g && g->parent == NULL)
            unowned[nfree++] = g;
    }
    for (size_t i = 0; unowned && i < og->norphans; i++)
        if (og->orphans[i]->parent == NULL)
            unowned[nfree++] = og->orphans[i];
    if (unowned == NULL) {
        /* Out of memory while freeing: fall back to a quadratic scan that
         * needs no memory (free a graph only when its parent is gone). */
        for (size_t i = og->ntracers; i-- > 1;) {
            hop_graph *g = hop_tracer_graph(og->tracers[i]);
            if (g && g->parent == NULL)
                hop_graph_free(g);
        }
    } else {
        for (size_t i = 0; i < nfree; i++)
            hop_graph_free(unowned[i]);
        hop__free(unowned);
    }
    hop_graph_free(og->root_graph);
    for (size_t i = 0; i < og->ntracers; i++)
        hop__tracer_free(og->tracers[i]);
    HASH_CLEAR(hh, og->captures); /* its entries are in og->strings */
    HASH_CLEAR(hh, og->counters);
    for (size_t i = 0; i < og->ncounters; i++)
        hop__free(og->counter_log[i]);
    hop__free(og->tracers);
    hop__free(og->stack);
    hop__free(og->inputs);
    hop__free(og->capture_log);
    hop__free(og->counter_log);
    hop__free(og->orphans);
    for (size_t i = 0; i < og->ndata; i++)
        if (og->data[i].free_fn)
            og->data[i].free_fn(og->data[i].data);
    hop__free(og->data);
    hop__free(og->spare);
    hop__arena_destroy(&og->strings);
    hop_shape_env_free(og->env);
    hop__free(og);
}

hop_output_graph *
hop_output_graph_of(const hop_tracer *t)
{
    return hop__tracer_owner(t);
}

hop_shape_env *
hop_output_graph_env(const hop_output_graph *og)
{
    return og ? og->env : NULL;
}

hop_tracer *
hop_output_graph_root(const hop_output_graph *og)
{
    return og ? og->tracers[0] : NULL;
}

hop_graph *
hop_output_graph_root_graph(const hop_output_graph *og)
{
    return og ? og->root_graph : NULL;
}

hop_tracer *
hop_output_graph_current(const hop_output_graph *og)
{
    return og ? og->stack[og->depth - 1] : NULL;
}

size_t
hop_output_graph_depth(const hop_output_graph *og)
{
    return og ? og->depth : 0;
}

/* ----------------------------------------------------------- root inputs */

/* dims[d] = dynamic for every dim; returns dims. */
static const bool *
same_for_every_dim(bool dynamic, bool *dims)
{
    for (int d = 0; d < HOP_MAX_RANK; d++)
        dims[d] = dynamic;
    return dims;
}

static hop_node *
add_root_tensor(hop_output_graph *og, const char *name, hop_dtype dtype, int rank,
                const int64_t *sizes, const bool *dynamic, hop_source source)
{
    if (name == NULL || (rank > 0 && (sizes == NULL || dynamic == NULL))) {
        hop_error(HOP_MISUSE, "root input: NULL %s",
                  name == NULL    ? "name"
                  : sizes == NULL ? "sizes"
                                  : "dynamic flags");
        return NULL;
    }
    if ((unsigned)dtype >= HOP_DTYPE_COUNT) {
        hop_error(HOP_INVALID, "root input %s: invalid dtype %d", name, (int)dtype);
        return NULL;
    }
    if (rank < 0 || rank > HOP_MAX_RANK) {
        hop_error(HOP_INVALID, "root input %s: rank %d is outside 0..%d", name, rank, HOP_MAX_RANK);
        return NULL;
    }
    for (int d = 0; d < rank; d++)
        if (sizes[d] < 0) {
            hop_error(HOP_INVALID, "root input %s: size %lld of dim %d is negative", name,
                      (long long)sizes[d], d);
            return NULL;
        }
    if (hop__grow((void **)&og->inputs, &og->inputs_cap, og->ninputs + 2 * HOP_MAX_RANK + 1,
                  sizeof *og->inputs) != HOP_OK)
        return NULL;
    size_t nsymbols = hop_shape_env_nsymbols(og->env);
    hop_value_info meta = {.kind = HOP_VALUE_TENSOR};
    meta.meta.dtype = dtype;
    meta.meta.rank = rank;
    for (int d = 0; d < rank; d++) {
        meta.meta.sizes[d] = dynamic[d] ? hop_shape_env_size_symbol(og->env, sizes[d], true, true)
                                        : hop_sym_const(og->env, sizes[d]);
        if (meta.meta.sizes[d] == NULL) {
            hop_shape_env_truncate_symbols(og->env, nsymbols);
            return NULL;
        }
    }
    hop_graph *g = og->root_graph;
    size_t before = g->nplaceholders;
    hop_node *node = hop__tracer_add_input(og->tracers[0], name, &meta);
    if (node == NULL) {
        hop_shape_env_truncate_symbols(og->env, nsymbols);
        return NULL;
    }
    /* The placeholders between `before` and the tensor are its new symbols. */
    size_t tensor_index = og->ninputs + (g->nplaceholders - 1 - before);
    for (size_t p = before; p + 1 < g->nplaceholders; p++) {
        hop_node *sym = hop_graph_placeholder_at(g, p);
        input_rec *r = &og->inputs[og->ninputs++];
        r->node = sym;
        r->source = (hop_source){.kind = HOP_SOURCE_SIZE, .input = tensor_index};
        for (int d = 0; d < rank; d++)
            if (meta.meta.sizes[d] == sym->meta->sym) {
                r->source.dim = (size_t)d;
                break;
            }
    }
    og->inputs[og->ninputs++] = (input_rec){.node = node, .source = source};
    return node;
}

hop_node *
hop_output_graph_add_input_dims(hop_output_graph *og, const char *name, hop_dtype dtype, int rank,
                                const int64_t *sizes, const bool *dynamic)
{
    if (og == NULL) {
        hop_error(HOP_MISUSE, "hop_output_graph_add_input: NULL output graph");
        return NULL;
    }
    if (og->depth != 1) {
        hop_error(HOP_MISUSE,
                  "hop_output_graph_add_input: argument %s added while subgraph %s is being "
                  "traced (add arguments before tracing; use hop_output_graph_capture for "
                  "tensors a body reaches)",
                  name ? name : "?", hop_tracer_graph(og->stack[og->depth - 1])->name);
        return NULL;
    }
    size_t position = 0;
    for (size_t i = 0; i < og->ninputs; i++)
        position += og->inputs[i].source.kind == HOP_SOURCE_ARG;
    return add_root_tensor(og, name, dtype, rank, sizes, dynamic,
                           (hop_source){.kind = HOP_SOURCE_ARG, .position = position});
}

hop_node *
hop_output_graph_add_input(hop_output_graph *og, const char *name, hop_dtype dtype, int rank,
                           const int64_t *sizes, bool dynamic)
{
    bool dims[HOP_MAX_RANK];
    return hop_output_graph_add_input_dims(og, name, dtype, rank, sizes,
                                           same_for_every_dim(dynamic, dims));
}

/* A capture's entry, in og->strings: it lives as long as the OutputGraph
 * (a restore takes it out of the table and leaves its bytes), which was a
 * malloc and a free of every capture (~250 instructions, issue #30). */
static capture_entry *
new_capture_entry(hop_output_graph *og)
{
    return hop__arena_alloc(&og->strings, sizeof(capture_entry));
}

hop_node *
hop_output_graph_capture(hop_output_graph *og, const void *identity, const char *name,
                         hop_dtype dtype, int rank, const int64_t *sizes, bool dynamic)
{
    if (og == NULL || identity == NULL) {
        hop_error(HOP_MISUSE, "hop_output_graph_capture: NULL %s",
                  og ? "identity" : "output graph");
        return NULL;
    }
    capture_entry *e = NULL;
    HASH_FIND_PTR(og->captures, &identity, e);
    if (e)
        return e->node;
    if (hop__grow((void **)&og->capture_log, &og->captures_cap, og->ncaptures + 1,
                  sizeof *og->capture_log) != HOP_OK)
        return NULL;
    e = new_capture_entry(og);
    if (e == NULL)
        return NULL;
    /* The entry goes in first, the one step that can fail after it
     * (add_root_tensor) leaves every state as it was when it fails, and the
     * entry comes out again: no checkpoint (its allocation and its tracer
     * scope were ~400 instructions of every capture, issue #30). */
    e->identity = identity;
    e->node = NULL;
    hop_status st;
    HOP_HASH_ADD(st, hh, og->captures, identity, sizeof e->identity, e);
    if (st != HOP_OK)
        return NULL;
    bool dims[HOP_MAX_RANK];
    hop_node *node =
        add_root_tensor(og, name, dtype, rank, sizes, same_for_every_dim(dynamic, dims),
                        (hop_source){.kind = HOP_SOURCE_CAPTURE, .identity = identity});
    if (node == NULL) {
        HASH_DEL(og->captures, e);
        return NULL;
    }
    e->node = node;
    og->capture_log[og->ncaptures++] = e;
    return node;
}

size_t
hop_output_graph_ninputs(const hop_output_graph *og)
{
    return og ? og->ninputs : 0;
}

hop_node *
hop_output_graph_input(const hop_output_graph *og, size_t i, hop_source *source)
{
    if (og == NULL || i >= og->ninputs)
        return NULL;
    if (source)
        *source = og->inputs[i].source;
    return og->inputs[i].node;
}

hop_status
hop__output_graph_adopt_input(hop_output_graph *og, hop_node *node, hop_source src)
{
    if (hop__grow((void **)&og->inputs, &og->inputs_cap, og->ninputs + 1, sizeof *og->inputs) !=
        HOP_OK)
        return HOP_NOMEM;
    if (src.kind == HOP_SOURCE_CAPTURE) {
        capture_entry *e = NULL;
        HASH_FIND_PTR(og->captures, &src.identity, e);
        if (e)
            return hop_error(HOP_EXISTS, "root input %s: its identity is captured already",
                             node->name);
        if (hop__grow((void **)&og->capture_log, &og->captures_cap, og->ncaptures + 1,
                      sizeof *og->capture_log) != HOP_OK ||
            (e = new_capture_entry(og)) == NULL)
            return HOP_NOMEM;
        e->identity = src.identity;
        e->node = node;
        hop_status st;
        HOP_HASH_ADD(st, hh, og->captures, identity, sizeof e->identity, e);
        if (st != HOP_OK)
            return st;
        og->capture_log[og->ncaptures++] = e;
    }
    og->inputs[og->ninputs++] = (input_rec){.node = node, .source = src};
    return HOP_OK;
}

hop_tracer *
hop__output_graph_adopt_graph(hop_output_graph *og, hop_graph *g, hop_tracer *parent)
{
    if (hop__grow((void **)&og->tracers, &og->tracers_cap, og->ntracers + 1, sizeof *og->tracers) !=
        HOP_OK)
        return NULL;
    hop_tracer *t = hop__tracer_new(g, parent, og);
    if (t == NULL)
        return NULL;
    hop__tracer_set_state(t, HOP_TRACER_ENDED);
    og->tracers[og->ntracers++] = t;
    return t;
}

/* ------------------------------------------------------- the tracer stack */

hop_tracer *
hop_output_graph_push(hop_output_graph *og, const char *graph_name)
{
    if (og == NULL || graph_name == NULL) {
        hop_error(HOP_MISUSE, "hop_output_graph_push: NULL %s", og ? "graph name" : "output graph");
        return NULL;
    }
    if (og->depth - 1 >= HOP_MAX_NESTING) {
        hop_error(HOP_TRACE,
                  "%s: HOP bodies nested %d deep already; hop refuses to nest deeper (the "
                  "nesting depth limit, HOP_MAX_NESTING), which would overflow the C stack",
                  graph_name, HOP_MAX_NESTING);
        return NULL;
    }
    /* Bodies share the root's memory: a 100-node body's own arena and
     * metadata were a fifth of its bytes (issue #30). */
    hop_graph *g = hop_graph_new_sharing(og->root_graph, graph_name);
    if (g == NULL)
        return NULL;
    hop_tracer *t = add_tracer(og, g, og->stack[og->depth - 1]);
    if (t == NULL)
        hop_graph_free(g);
    return t;
}

hop_status
hop_output_graph_pop(hop_output_graph *og, hop_tracer *t, hop_graph **graph)
{
    if (og == NULL || t == NULL)
        return hop_error(HOP_MISUSE, "hop_output_graph_pop: NULL %s",
                         og ? "tracer" : "output graph");
    hop_tracer *top = og->stack[og->depth - 1];
    if (hop_output_graph_of(t) != og)
        return hop_error(HOP_MISUSE,
                         "hop_output_graph_pop: the tracer of graph %s belongs to another "
                         "OutputGraph",
                         hop_tracer_graph(t)->name);
    if (hop_tracer_state_of(t) == HOP_TRACER_ENDED)
        return hop_error(HOP_MISUSE,
                         "hop_output_graph_pop: the tracer of graph %s was popped already",
                         hop_tracer_graph(t)->name);
    if (og->depth == 1)
        return hop_error(HOP_MISUSE,
                         "hop_output_graph_pop: only the root tracer (graph %s) is "
                         "on the stack; it cannot be popped",
                         hop_tracer_graph(top)->name);
    if (t != top)
        return hop_error(HOP_MISUSE,
                         "hop_output_graph_pop: unbalanced pop of the tracer of graph %s while "
                         "the tracer of graph %s is current",
                         hop_tracer_graph(t)->name, hop_tracer_graph(top)->name);
    hop__tracer_set_state(t, HOP_TRACER_ENDED);
    og->depth--;
    hop__tracer_set_state(og->stack[og->depth - 1], HOP_TRACER_CURRENT);
    if (graph)
        *graph = hop_tracer_graph(t);
    return HOP_OK;
}

void
hop_output_graph_discard(hop_output_graph *og, hop_graph *graph)
{
    /* Nothing to do: the graph's tracer record keeps it until og is freed.
     * Kept as an explicit call so that callers state their intent. */
    (void)og;
    (void)graph;
}

const char *
hop_output_graph_next_name(hop_output_graph *og, const char *prefix)
{
    if (og == NULL || prefix == NULL) {
        hop_error(HOP_MISUSE, "hop_output_graph_next_name: NULL %s",
                  og ? "prefix" : "output graph");
        return NULL;
    }
    name_counter *c = NULL;
    HASH_FIND_STR(og->counters, prefix, c);
    if (c == NULL) {
        if (hop__grow((void **)&og->counter_log, &og->counters_cap, og->ncounters + 1,
                      sizeof *og->counter_log) != HOP_OK)
            return NULL;
        c = hop__malloc(sizeof *c);
        char *key = c ? hop__arena_strdup(&og->strings, prefix) : NULL;
        if (key == NULL) {
            hop__free(c);
            return NULL;
        }
        c->prefix = key;
        c->next = 0;
        hop_status st;
        HOP_HASH_ADD_KEYPTR(st, hh, og->counters, c->prefix, strlen(c->prefix), c);
        if (st != HOP_OK) {
            hop__free(c);
            return NULL;
        }
        og->counter_log[og->ncounters++] = c;
    }
    /* "<prefix>_<n>" written by hand: snprintf's format parsing was most of
       the cost of naming a HOP call's subgraph (issue #30). */
    char digits[24];
    size_t nd = 0;
    for (size_t v = c->next; nd == 0 || v != 0; v /= 10)
        digits[nd++] = (char)('0' + v % 10);
    size_t np = strlen(prefix);
    char *name = hop__arena_bytes(&og->strings, np + 1 + nd + 1);
    if (name == NULL)
        return NULL;
    memcpy(name, prefix, np);
    name[np] = '_';
    for (size_t i = 0; i < nd; i++)
        name[np + 1 + i] = digits[nd - 1 - i];
    name[np + 1 + nd] = '\0';
    c->next++;
    return name;
}

/* ------------------------------------------------------------ data */

void *
hop_output_graph_data(const hop_output_graph *og, const void *key)
{
    for (size_t i = 0; og && i < og->ndata; i++)
        if (og->data[i].key == key)
            return og->data[i].data;
    return NULL;
}

hop_status
hop_output_graph_set_data(hop_output_graph *og, const void *key, void *data,
                          void (*free_fn)(void *))
{
    if (og == NULL || key == NULL)
        return hop_error(HOP_MISUSE, "hop_output_graph_set_data: NULL %s",
                         og ? "key" : "output graph");
    for (size_t i = 0; i < og->ndata; i++)
        if (og->data[i].key == key) {
            if (og->data[i].free_fn && og->data[i].data != data)
                og->data[i].free_fn(og->data[i].data);
            og->data[i].data = data;
            og->data[i].free_fn = free_fn;
            return HOP_OK;
        }
    if (hop__grow((void **)&og->data, &og->data_cap, og->ndata + 1, sizeof *og->data) != HOP_OK)
        return HOP_NOMEM;
    og->data[og->ndata++] = (og_data){.key = key, .data = data, .free_fn = free_fn};
    return HOP_OK;
}

/* ------------------------------------------------------------ checkpoints */

hop_checkpoint *
hop_output_graph_checkpoint(hop_output_graph *og)
{
    if (og == NULL) {
        hop_error(HOP_MISUSE, "hop_output_graph_checkpoint: NULL output graph");
        return NULL;
    }
    hop_checkpoint *cp = og->spare;
    if (cp != NULL && cp->cap >= og->ncounters) {
        og->spare = NULL;
    } else {
        cp = hop__malloc(sizeof *cp + (og->ncounters + 1) * sizeof cp->counter_values[0]);
        if (cp == NULL)
            return NULL;
        cp->cap = og->ncounters + 1;
    }
    cp->og = og;
    cp->depth = og->depth;
    /* O(1) in the depth: only the current tracer is marked now (the
     * tracer layer marks the others at their first change). */
    hop__tracer_scope_begin(og->stack[og->depth - 1], &cp->scope);
    cp->ninputs = og->ninputs;
    cp->ncaptures = og->ncaptures;
    cp->nguards = hop_shape_env_nguards(og->env);
    cp->nsymbols = hop_shape_env_nsymbols(og->env);
    cp->ncounters = og->ncounters;
    for (size_t i = 0; i < og->ncounters; i++)
        cp->counter_values[i] = og->counter_log[i]->next;
    return cp;
}

/* Frees cp, whose scope has ended, or keeps it as its graph's spare: the
 * one with room for more counters (their number never falls). */
static void
release(hop_checkpoint *cp)
{
    hop_output_graph *og = cp->og;
    if (og->spare != NULL && og->spare->cap >= cp->cap) {
        hop__free(cp);
        return;
    }
    hop__free(og->spare);
    og->spare = cp;
}

void
hop_checkpoint_free(hop_checkpoint *cp)
{
    if (cp == NULL)
        return;
    hop__tracer_scope_end(&cp->scope, false, NULL, NULL);
    release(cp);
}

/* A subgraph a restore took out of an active graph. */
static void
adopt_orphan(void *ctx, hop_graph *g)
{
    hop_output_graph *og = ctx;
    hop_tracer *t = g->user_data;
    for (size_t i = 0; t && i < og->ntracers; i++)
        if (og->tracers[i] == t)
            return; /* its tracer record owns it */
    if (hop__grow((void **)&og->orphans, &og->orphans_cap, og->norphans + 1, sizeof *og->orphans) !=
        HOP_OK) {
        hop_graph_free(g); /* unreachable already; nothing can point into it */
        return;
    }
    og->orphans[og->norphans++] = g;
}

hop_status
hop_output_graph_abandon(hop_output_graph *og, hop_checkpoint *cp, hop_status st)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", hop_error_message());
    hop_output_graph_restore(og, cp);
    return hop_error(st, "%s", msg);
}

hop_status
hop_output_graph_restore(hop_output_graph *og, hop_checkpoint *cp)
{
    if (og == NULL || cp == NULL || cp->og != og)
        return hop_error(HOP_MISUSE, "hop_output_graph_restore: %s",
                         og && cp ? "checkpoint of another output graph" : "NULL argument");
    if (cp->depth > og->depth) {
        hop_checkpoint_free(cp);
        return hop_error(HOP_MISUSE, "hop_output_graph_restore: the stack is shallower than at "
                                     "the checkpoint (a tracer was popped past it)");
    }
    while (og->depth > cp->depth)
        hop__tracer_set_state(og->stack[--og->depth], HOP_TRACER_ENDED);
    hop__tracer_set_state(og->stack[og->depth - 1], HOP_TRACER_CURRENT);
    hop__tracer_scope_end(&cp->scope, true, adopt_orphan, og);
    og->ninputs = cp->ninputs;
    while (og->ncaptures > cp->ncaptures) {
        capture_entry *e = og->capture_log[--og->ncaptures];
        HASH_DEL(og->captures, e); /* its bytes stay in og->strings */
    }
    for (size_t i = 0; i < og->ncounters; i++)
        og->counter_log[i]->next = i < cp->ncounters ? cp->counter_values[i] : 0;
    hop_shape_env_truncate_guards(og->env, cp->nguards);
    hop_shape_env_truncate_symbols(og->env, cp->nsymbols);
    release(cp); /* its scope ended above */
    return HOP_OK;
}
