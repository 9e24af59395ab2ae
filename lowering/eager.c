/*
 * lowering/eager.c - the reference interpreter: hop_graph_run_eager runs a
 * graph node by node with hop_eager, HOPs through their lowering's eager
 * slot, with symbols bound from the inputs' sizes and from item/sym_size
 * results.  It shares nothing with the plan compiler but the registry, so
 * a plan's result can be checked against it (differential tests).
 */
#include "hop/foreign.h"
#include "lowering/lowering_impl.h"

#include <inttypes.h>

typedef struct evmap {
    const hop_node *node;
    hop_rt_value v; /* v.tensor is a reference held here */
    hop_rt_value *results;
    size_t nresults;
    UT_hash_handle hh;
} evmap;

struct hop_eager_ctx {
    const hop_output_graph *og;
    hop_shape_env *env;
    evmap *values;
    int64_t *syms;
    size_t nsyms;
    const hop_node *call;
    hop_rt_value *results;
    size_t nresults;
    bool have;
};

static void
release_results(evmap *m)
{
    for (size_t i = 0; i < m->nresults; i++)
        hop_tensor_release(m->results[i].tensor);
    hop_free(m->results);
    m->results = NULL;
    m->nresults = 0;
}

static hop_status
set(hop_eager_ctx *ex, const hop_node *n, hop_rt_value v)
{
    evmap *m = NULL;
    HASH_FIND_PTR(ex->values, &n, m);
    if (m == NULL) {
        m = hop__calloc(1, sizeof *m);
        if (m == NULL) {
            hop_tensor_release(v.tensor);
            return HOP_NOMEM;
        }
        m->node = n;
        hop_status st;
        HOP_HASH_ADD(st, hh, ex->values, node, sizeof(m->node), m);
        if (st != HOP_OK) {
            hop__free(m);
            hop_tensor_release(v.tensor);
            return st;
        }
    }
    hop_tensor_release(m->v.tensor);
    release_results(m);
    m->v = v;
    if (v.kind == HOP_VALUE_SYM && n->meta->kind == HOP_VALUE_SYM &&
        hop_expr_kind_of(n->meta->sym) == HOP_EXPR_SYMBOL) {
        int64_t id = hop_symbol_id(n->meta->sym);
        if (id >= 0 && (size_t)id < ex->nsyms)
            ex->syms[id] = v.i;
    }
    return HOP_OK;
}

static hop_status
get(hop_eager_ctx *ex, const hop_node *n, hop_rt_value *out)
{
    evmap *m = NULL;
    HASH_FIND_PTR(ex->values, &n, m);
    if (m == NULL || m->v.kind == HOP_VALUE_NONE)
        return hop_error(HOP_VERIFY, "eager: %s is used before it is computed", n->name);
    *out = m->v;
    return HOP_OK;
}

hop_status
hop_eager_arg(hop_eager_ctx *ex, const hop_arg *arg, hop_rt_value *out)
{
    if (ex == NULL || arg == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "hop_eager_arg: NULL argument");
    out->kind = HOP_VALUE_SYM;
    out->tensor = NULL;
    switch (arg->kind) {
    case HOP_ARG_NODE:
        return get(ex, arg->u.node, out);
    case HOP_ARG_INT:
        out->i = arg->u.i;
        return HOP_OK;
    case HOP_ARG_BOOL:
        out->i = arg->u.b;
        return HOP_OK;
    case HOP_ARG_SYM:
        return hop_expr_eval(arg->u.sym, ex->syms, ex->nsyms, &out->i);
    default:
        return hop_error(HOP_INVALID, "hop_eager_arg: an argument of kind %d has no value",
                         (int)arg->kind);
    }
}

/* Runtime operands of a node's args; list items come from *pool. */
static hop_status
rt_args(hop_eager_ctx *ex, const hop_arg *args, size_t n, hop_rt_arg *rt, hop_rt_arg **pool,
        hop_rt_arg *end)
{
    for (size_t i = 0; i < n; i++) {
        const hop_arg *a = &args[i];
        hop_rt_value v;
        hop_status st;
        switch (a->kind) {
        case HOP_ARG_NONE:
            rt[i] = hop_rt_none();
            break;
        case HOP_ARG_NODE:
            if ((st = get(ex, a->u.node, &v)) != HOP_OK)
                return st;
            if (v.kind == HOP_VALUE_TENSOR)
                rt[i] = hop_rt_tensor(v.tensor);
            else if (a->u.node->meta->kind == HOP_VALUE_SYM &&
                     hop_expr_is_bool(a->u.node->meta->sym))
                rt[i] = hop_rt_bool(v.i != 0);
            else
                rt[i] = hop_rt_int(v.i);
            break;
        case HOP_ARG_INT:
            rt[i] = hop_rt_int(a->u.i);
            break;
        case HOP_ARG_FLOAT:
            rt[i] = hop_rt_float(a->u.f);
            break;
        case HOP_ARG_BOOL:
            rt[i] = hop_rt_bool(a->u.b);
            break;
        case HOP_ARG_SYM: {
            int64_t x;
            if ((st = hop_expr_eval(a->u.sym, ex->syms, ex->nsyms, &x)) != HOP_OK)
                return st;
            rt[i] = hop_expr_is_bool(a->u.sym) ? hop_rt_bool(x != 0) : hop_rt_int(x);
            break;
        }
        case HOP_ARG_DTYPE:
            rt[i] = hop_rt_dtype(a->u.dtype);
            break;
        case HOP_ARG_LIST: {
            hop_rt_arg *items = *pool;
            if (items + a->u.list.n > end)
                return hop_error(HOP_UNSUPPORTED, "eager: list too long");
            *pool += a->u.list.n;
            if ((st = rt_args(ex, a->u.list.items, a->u.list.n, items, pool, end)) != HOP_OK)
                return st;
            rt[i] = hop_rt_list(items, a->u.list.n);
            break;
        }
        case HOP_ARG_GRAPH:
            return hop_error(HOP_VERIFY, "eager: a subgraph is not an operand of an op");
        }
    }
    return HOP_OK;
}

static size_t
count_args(const hop_arg *args, size_t n)
{
    size_t c = n;
    for (size_t i = 0; i < n; i++)
        if (args[i].kind == HOP_ARG_LIST)
            c += count_args(args[i].u.list.items, args[i].u.list.n);
    return c;
}

static hop_status
run_op(hop_eager_ctx *ex, const hop_node *n)
{
    size_t total = count_args(n->args, n->nargs);
    hop_rt_arg small[32], *rt = total <= 32 ? small : hop_malloc(total * sizeof *rt);
    if (rt == NULL)
        return hop_error_code();
    hop_rt_arg *pool = rt + n->nargs;
    hop_status st = rt_args(ex, n->args, n->nargs, rt, &pool, rt + total);
    hop_rt_value v;
    if (st == HOP_OK)
        st = hop_eager(n->op, rt, n->nargs, &v);
    if (rt != small)
        hop_free(rt);
    return st == HOP_OK ? set(ex, n, v) : st;
}

static hop_status
run_hop(hop_eager_ctx *ex, const hop_node *n)
{
    const hop_hop_class *cls;
    const hop_lowering *l = hop__lowering_for(n->target, &cls);
    if (l == NULL || l->eager == NULL) {
        hop_error_clear();
        return hop_error(HOP_UNSUPPORTED, "eager: %s calls the HOP %s, which has no eager slot",
                         n->name, n->target);
    }
    const hop_node *saved_call = ex->call;
    hop_rt_value *saved_results = ex->results;
    size_t saved_n = ex->nresults;
    bool saved_have = ex->have;
    ex->call = n;
    ex->results = NULL;
    ex->nresults = 0;
    ex->have = false;
    hop_status st = l->eager(ex, n, l->user_data);
    if (st == HOP_OK && (!ex->have || ex->nresults != n->nouts))
        st = hop_error(HOP_MISUSE, "eager %s: gave %zu results for a call with %zu outputs",
                       n->target, ex->have ? ex->nresults : 0, n->nouts);
    hop_rt_value *results = ex->results;
    size_t nres = ex->nresults;
    ex->call = saved_call;
    ex->results = saved_results;
    ex->nresults = saved_n;
    ex->have = saved_have;
    if (st == HOP_OK) {
        hop_rt_value none = {HOP_VALUE_NONE, NULL, 0};
        if ((st = set(ex, n, none)) == HOP_OK) {
            evmap *m = NULL;
            HASH_FIND_PTR(ex->values, &n, m);
            m->results = results;
            m->nresults = nres;
            return HOP_OK;
        }
    }
    for (size_t i = 0; i < nres; i++)
        hop_tensor_release(results[i].tensor);
    hop_free(results);
    return st;
}

/* A call_foreign: hop_foreign_call, the results kept for the getitems. */
static hop_status
run_foreign(hop_eager_ctx *ex, const hop_node *n)
{
    const hop_foreign *f = hop_foreign_acquire(n->target);
    if (f == NULL)
        return hop_error(HOP_NOT_FOUND,
                         "eager: %s calls the foreign kernel %s, which is not registered", n->name,
                         n->target);
    size_t total = count_args(n->args, n->nargs);
    hop_rt_arg small[32], *rt = total <= 32 ? small : hop_malloc(total * sizeof *rt);
    hop_rt_value *results = hop_calloc(n->nouts + 1, sizeof *results);
    hop_tensor *outs[HOP__EXTERN_MAXOUT] = {NULL};
    hop_status st = rt && results ? HOP_OK : hop_error_code();
    if (st == HOP_OK && n->nouts > HOP__EXTERN_MAXOUT)
        st = hop_error(HOP_UNSUPPORTED, "eager: %s has %zu outputs (at most %d)", n->name, n->nouts,
                       HOP__EXTERN_MAXOUT);
    hop_rt_arg *pool = rt ? rt + n->nargs : NULL;
    if (st == HOP_OK)
        st = rt_args(ex, n->args, n->nargs, rt, &pool, rt + total);
    if (st == HOP_OK)
        st = hop_foreign_call(f, rt, n->nargs, outs, n->nouts);
    hop_foreign_release(f);
    if (rt != small)
        hop_free(rt);
    if (st == HOP_OK) {
        for (size_t j = 0; j < n->nouts; j++)
            results[j] = (hop_rt_value){HOP_VALUE_TENSOR, outs[j], 0};
        hop_rt_value none = {HOP_VALUE_NONE, NULL, 0};
        if ((st = set(ex, n, none)) == HOP_OK) {
            evmap *m = NULL;
            HASH_FIND_PTR(ex->values, &n, m);
            m->results = results;
            m->nresults = n->nouts;
            return HOP_OK;
        }
    }
    for (size_t j = 0; j < n->nouts && j < HOP__EXTERN_MAXOUT; j++)
        hop_tensor_release(outs[j]);
    hop_free(results);
    return st;
}

hop_status
hop_eager_results(hop_eager_ctx *ex, hop_rt_value *results, size_t n)
{
    if (ex == NULL || ex->call == NULL || (n && results == NULL))
        return hop_error(HOP_MISUSE, "hop_eager_results: no call is running");
    hop_rt_value *copy = hop_calloc(n + 1, sizeof *copy);
    if (copy == NULL)
        return hop_error_code();
    for (size_t i = 0; i < n; i++) {
        copy[i] = results[i];
        results[i].tensor = NULL;
    }
    for (size_t i = 0; i < ex->nresults; i++)
        hop_tensor_release(ex->results[i].tensor);
    hop_free(ex->results);
    ex->results = copy;
    ex->nresults = n;
    ex->have = true;
    return HOP_OK;
}

static hop_status
run_getitem(hop_eager_ctx *ex, const hop_node *n)
{
    const hop_node *call = n->args[0].u.node;
    evmap *m = NULL;
    HASH_FIND_PTR(ex->values, &call, m);
    int64_t i = n->args[1].u.i;
    if (m == NULL || i < 0 || (size_t)i >= m->nresults)
        return hop_error(HOP_VERIFY, "eager: %s reads a result %s did not give", n->name,
                         call->name);
    hop_rt_value v = m->results[i];
    hop_tensor_retain(v.tensor);
    return set(ex, n, v);
}

hop_status
hop_eager_graph(hop_eager_ctx *ex, const hop_graph *g, const hop_rt_value *inputs, size_t ninputs,
                hop_rt_value *outputs, size_t noutputs)
{
    if (ex == NULL || g == NULL || (ninputs && inputs == NULL) || (noutputs && outputs == NULL))
        return hop_error(HOP_MISUSE, "hop_eager_graph: NULL argument");
    const hop_node *out = g->output;
    if (out == NULL || g->nplaceholders != ninputs || out->nargs != noutputs)
        return hop_error(HOP_VERIFY, "eager: %s called with %zu inputs and %zu outputs", g->name,
                         ninputs, noutputs);
    /* A graph's own guards (a cond branch's) hold whenever it runs. */
    for (size_t k = 0; k < g->nguards; k++) {
        int64_t v;
        hop_status st = hop_expr_eval(g->guards[k], ex->syms, ex->nsyms, &v);
        if (st != HOP_OK)
            return st;
        if (!v) {
            char text[256];
            hop_expr_print(g->guards[k], text, sizeof text);
            return hop_error(HOP_GUARD, "eager: guard %s of %s failed: %s was traced assuming it",
                             text, g->name, g->name);
        }
    }
    hop_status st = HOP_OK;
    size_t i = 0;
    for (const hop_node *n = g->first; n && st == HOP_OK; n = n->next) {
        switch (n->kind) {
        case HOP_NODE_PLACEHOLDER: {
            hop_rt_value v = inputs[i++];
            hop_tensor_retain(v.tensor);
            st = set(ex, n, v);
            break;
        }
        case HOP_NODE_CALL_OP:
            st = run_op(ex, n);
            break;
        case HOP_NODE_CALL_HOP:
            st = run_hop(ex, n);
            break;
        case HOP_NODE_CALL_FOREIGN:
            st = run_foreign(ex, n);
            break;
        case HOP_NODE_GETITEM:
            st = run_getitem(ex, n);
            break;
        case HOP_NODE_OUTPUT:
            break;
        }
    }
    for (size_t j = 0; j < noutputs; j++)
        outputs[j] = (hop_rt_value){HOP_VALUE_NONE, NULL, 0};
    for (size_t j = 0; j < noutputs && st == HOP_OK; j++) {
        if ((st = hop_eager_arg(ex, &out->args[j], &outputs[j])) == HOP_OK)
            hop_tensor_retain(outputs[j].tensor);
    }
    if (st != HOP_OK) {
        for (size_t j = 0; j < noutputs; j++) {
            hop_tensor_release(outputs[j].tensor);
            outputs[j].tensor = NULL;
        }
    }
    return st;
}

hop_status
hop_graph_run_eager(const hop_output_graph *og, hop_tensor *const *inputs, size_t ninputs,
                    hop_tensor **outputs, size_t noutputs)
{
    for (size_t j = 0; outputs && j < noutputs; j++)
        outputs[j] = NULL;
    if (og == NULL || (ninputs && inputs == NULL) || (noutputs && outputs == NULL))
        return hop_error(HOP_MISUSE, "hop_graph_run_eager: NULL argument");
    const hop_graph *g = hop_output_graph_root_graph(og);
    if (g->output == NULL || g->output->nargs != noutputs)
        return hop_error(HOP_MISUSE, "hop_graph_run_eager: the graph has %zu outputs, not %zu",
                         g->output ? g->output->nargs : 0, noutputs);
    hop_eager_ctx ex = {.og = og, .env = hop_output_graph_env(og)};
    ex.nsyms = hop_shape_env_nsymbols(ex.env);
    ex.syms = hop_malloc((ex.nsyms + 1) * sizeof *ex.syms);
    size_t np = g->nplaceholders;
    hop_rt_value *in = hop_calloc(np + 1, sizeof *in);
    hop_rt_value *out = hop_calloc(noutputs + 1, sizeof *out);
    hop_status st = ex.syms && in && out ? HOP_OK : hop_error_code();
    for (size_t s = 0; st == HOP_OK && s < ex.nsyms; s++)
        ex.syms[s] = HOP_UNBOUND;
    /* Tensors bind the symbols of their sizes; SymInt inputs read them. */
    size_t k = 0, i = 0;
    for (const hop_node *n = g->first; st == HOP_OK && n && n->kind == HOP_NODE_PLACEHOLDER;
         n = n->next, i++) {
        if (n->meta->kind != HOP_VALUE_TENSOR)
            continue;
        if (k >= ninputs || inputs[k] == NULL) {
            st = hop_error(HOP_INVALID, "hop_graph_run_eager: input %zu (%s) is missing", k,
                           n->name);
            break;
        }
        in[i] = (hop_rt_value){HOP_VALUE_TENSOR, inputs[k], 0};
        for (int d = 0; d < n->meta->meta.rank && d < inputs[k]->rank; d++) {
            const hop_expr *e = n->meta->meta.sizes[d];
            if (hop_expr_kind_of(e) == HOP_EXPR_SYMBOL && ex.syms[hop_symbol_id(e)] == HOP_UNBOUND)
                ex.syms[hop_symbol_id(e)] = inputs[k]->sizes[d];
        }
        k++;
    }
    if (st == HOP_OK && k != ninputs)
        st = hop_error(HOP_INVALID, "hop_graph_run_eager: expected %zu inputs, got %zu", k,
                       ninputs);
    i = 0;
    for (const hop_node *n = g->first; st == HOP_OK && n && n->kind == HOP_NODE_PLACEHOLDER;
         n = n->next, i++)
        if (n->meta->kind == HOP_VALUE_SYM) {
            in[i].kind = HOP_VALUE_SYM;
            st = hop_expr_eval(n->meta->sym, ex.syms, ex.nsyms, &in[i].i);
        }
    if (st == HOP_OK)
        st = hop_eager_graph(&ex, g, in, np, out, noutputs);
    for (size_t j = 0; st == HOP_OK && j < noutputs; j++) {
        if (out[j].kind == HOP_VALUE_TENSOR) {
            outputs[j] = out[j].tensor;
            out[j].tensor = NULL;
        } else if ((outputs[j] = hop_tensor_from_data(HOP_I64, 0, NULL, &out[j].i)) == NULL) {
            st = hop_error_code();
        }
    }
    if (st != HOP_OK)
        for (size_t j = 0; j < noutputs; j++) {
            hop_tensor_release(outputs[j]);
            outputs[j] = NULL;
        }
    for (size_t j = 0; out && j < noutputs; j++)
        hop_tensor_release(out[j].tensor);
    evmap *m, *tmp;
    HASH_ITER(hh, ex.values, m, tmp)
    {
        HASH_DEL(ex.values, m);
        hop_tensor_release(m->v.tensor);
        release_results(m);
        hop__free(m);
    }
    hop_free(ex.syms);
    hop_free(in);
    hop_free(out);
    return st;
}
