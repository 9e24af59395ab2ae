/*
 * hop/invoke_subgraph.c - invoke_subgraph(body, *args): body(*args), where
 * repeated calls of one body share one installed subgraph.
 *
 * Tracing: the first call in a graph traces the body into subgraph_N; a
 * later call in the same graph of the same body (fn and ud) with matching
 * input metadata reuses it without tracing (slots lookup and installed keep
 * a cache per OutputGraph).  Lowering: the subgraph is compiled once per
 * plan as a subroutine and CALLed from every call site.  Eval: the PrimHOP
 * base's (run the body).
 */
#include "hop/batching.h"
#include "hop/autodiff.h"
#include "hop/lowering.h"
#include "hop/prim_hop.h"

#include <string.h>

/* --------------------------------------------------------------- tracing */

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
            same = hop_value_info_equal(&e->inputs[k], &c->input_meta[k]);
        if (!same)
            continue;
        if (!installed_in(e->graph, pg)) {
            /* Undone by a restore: forget it. */
            entry_free(e);
            cache->entries[i--] = cache->entries[--cache->n];
            continue;
        }
        for (size_t k = 0; k < c->ninputs; k++) {
            hop_node *v = hop_tracer_lift(c->parent, c->operands[k]);
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

/* -------------------------------------------------------------- lowering */

static hop_status
invoke_lower(hop_lower_ctx *cx, const hop_node *call)
{
    const hop_graph *body = hop_node_body(call, "body");
    size_t n;
    hop_pval *in = body ? hop_lower_passed(cx, call, &n) : NULL;
    hop_pval *dests = in ? hop_lower_dests(cx) : NULL;
    hop_pval *out = dests ? hop_lower_pvals(cx, call->nouts) : NULL;
    if (out == NULL)
        return hop_error_code();
    hop_status st = hop_lower_call(cx, body, in, n, dests, out, call->nouts);
    return st == HOP_OK ? hop_lower_results(cx, out, call->nouts) : st;
}

const hop_class hop_invoke_subgraph_class = {
    .name = "invoke_subgraph",
    .params = {{"body", HOP_PARAM_BODY, "subgraph"}, {"args", HOP_PARAM_VARARGS}},
    .doc = "invoke_subgraph(body, *args): body(*args); under tracing calls of the same body "
           "with matching argument metadata share one subgraph_N, traced once.",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .lookup = invoke_lookup,
    .installed = invoke_installed,
    .lower = invoke_lower,
    .vjp = hop_vjp_bodies,
    .jvp = hop_jvp_bodies,
    .batch = hop_batch_bodies,
};

hop_status
hop_invoke_subgraph(hop_output_graph *og, hop_body f, const hop_arg *args, size_t nargs,
                    hop_values *outputs)
{
    hop_arg list = hop_arg_list((hop_arg *)args, nargs);
    return hop_apply(og, &hop_invoke_subgraph_class, &list, 1, &f, 1, outputs);
}
