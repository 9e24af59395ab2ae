/*
 * hop/graph_eval.c - running HOP calls on concrete values (hop/eval.h):
 *
 *   the eval context      what an eval slot reads and runs: leads, groups
 *                         and bodies, from a call_hop node (bodies are its
 *                         subgraphs) or from an eager caller (bodies are
 *                         host functions);
 *   hop_eval_apply        one eager call with host bodies;
 *   hop_graph_eval        the reference interpreter: a graph run node by
 *                         node with hop_eager, HOPs through their eval slot,
 *                         with symbols bound from the inputs' sizes and from
 *                         item/sym_size results.  It shares nothing with the
 *                         plan compiler but the classes, so a plan's result
 *                         can be checked against it (differential tests).
 */
#include "core/hash.h"
#include "hop/hop_impl.h"
#include "hop/foreign.h"

#include <inttypes.h>
#include <stdio.h>

/* Outputs of one foreign call the interpreter takes. */
#define FOREIGN_MAXOUT 16

typedef struct evmap {
    const hop_node *node;
    hop_rt_value v; /* v.tensor is a reference held here */
    hop_rt_value *results;
    size_t nresults;
    UT_hash_handle hh;
} evmap;

/* The reference interpreter's state: every node's value, every symbol's. */
typedef struct interp {
    evmap *values;
    int64_t *syms;
    size_t nsyms;
} interp;

/*
 * One call being evaluated.  From a node (ip and call set): leads and groups
 * are read from the node, bodies are its subgraphs.  Eagerly (hosts set):
 * leads and groups are the caller's args, bodies are host functions.
 */
struct hop_eval_ctx {
    const hop_class *cls;
    const hop_param *params;
    size_t nparams;
    size_t nbodies; /* of the call (a BODIES parameter's count varies) */
    interp *ip;
    const hop_node *call;
    const hop_rt_arg *args;
    const hop_host_body *hosts;
    /* every passed value (borrowed), and where each group starts in it */
    hop_rt_value *passed;
    size_t npassed;
    size_t group_start[HOP_MAX_PARAMS + 2];
    size_t ngroups;
    hop_rt_values results;
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
set(interp *ex, const hop_node *n, hop_rt_value v)
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
get(interp *ex, const hop_node *n, hop_rt_value *out)
{
    evmap *m = NULL;
    HASH_FIND_PTR(ex->values, &n, m);
    if (m == NULL || m->v.kind == HOP_VALUE_NONE)
        return hop_error(HOP_VERIFY, "eval: %s is used before it is computed", n->name);
    *out = m->v;
    return HOP_OK;
}

/* The value of a value-like argument (a node, an int, a bool, a SymInt);
 * a tensor is borrowed. */
static hop_status
arg_value(interp *ex, const hop_arg *arg, hop_rt_value *out)
{
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
        return hop_error(HOP_INVALID, "eval: an argument of kind %d has no value", (int)arg->kind);
    }
}

/* Runtime operands of a node's args; list items come from *pool. */
static hop_status
rt_args(interp *ex, const hop_arg *args, size_t n, hop_rt_arg *rt, hop_rt_arg **pool,
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
                return hop_error(HOP_UNSUPPORTED, "eval: list too long");
            *pool += a->u.list.n;
            if ((st = rt_args(ex, a->u.list.items, a->u.list.n, items, pool, end)) != HOP_OK)
                return st;
            rt[i] = hop_rt_list(items, a->u.list.n);
            break;
        }
        case HOP_ARG_GRAPH:
            return hop_error(HOP_VERIFY, "eval: a subgraph is not an operand of an op");
        }
    }
    return HOP_OK;
}

static hop_status
run_op(interp *ex, const hop_node *n)
{
    size_t total = hop_args_count(n->args, n->nargs);
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

/* ------------------------------------------------------------ rt values */

hop_status
hop_rt_values_push(hop_rt_values *vs, hop_rt_value v)
{
    if (vs == NULL) {
        hop_tensor_release(v.tensor);
        return hop_error(HOP_MISUSE, "hop_rt_values_push: NULL list");
    }
    if (hop__grow((void **)&vs->items, &vs->cap, vs->n + 1, sizeof *vs->items) != HOP_OK) {
        hop_tensor_release(v.tensor);
        return HOP_NOMEM;
    }
    vs->items[vs->n++] = v;
    return HOP_OK;
}

void
hop_rt_values_clear(hop_rt_values *vs)
{
    if (vs == NULL)
        return;
    for (size_t i = 0; i < vs->n; i++)
        hop_tensor_release(vs->items[i].tensor);
    hop__free(vs->items);
    vs->items = NULL;
    vs->n = vs->cap = 0;
}

/* ------------------------------------------------------- the eval context */

static hop_status run_graph(interp *ex, const hop_graph *g, const hop_rt_value *inputs,
                            size_t ninputs, hop_rt_value *outputs, size_t noutputs);

static int
find_param(const hop_eval_ctx *ex, const char *name, const char *what)
{
    for (size_t i = 0; name && i < ex->nparams; i++)
        if (strcmp(ex->params[i].name, name) == 0)
            return (int)i;
    hop_error(HOP_MISUSE, "%s: the HOP %s has no parameter named %s", what, ex->cls->name,
              name ? name : "(NULL)");
    return -1;
}

/* How many params of kind-class `pred` (hop/class.h's hop_param_is_*)
 * come before param i. */
static size_t
count_before(const hop_eval_ctx *ex, int i, int (*pred)(hop_param_kind))
{
    size_t k = 0;
    for (int j = 0; j < i; j++)
        k += pred(ex->params[j].kind);
    return k;
}

static int
is_body(hop_param_kind k)
{
    return k == HOP_PARAM_BODY;
}

size_t
hop_eval_nbodies(const hop_eval_ctx *ex)
{
    return ex ? ex->nbodies : 0;
}

const hop_class *
hop_eval_class(const hop_eval_ctx *ex)
{
    return ex ? ex->cls : NULL;
}

hop_status
hop_eval_param(hop_eval_ctx *ex, const char *name, hop_rt_arg *out)
{
    if (ex == NULL || out == NULL)
        return hop_error(HOP_MISUSE, "hop_eval_param: NULL argument");
    int i = find_param(ex, name, "hop_eval_param");
    if (i < 0)
        return hop_error_code();
    hop_param_kind kind = ex->params[i].kind;
    if (!hop_param_is_lead(kind))
        return hop_error(HOP_MISUSE, "hop_eval_param: %s of %s is not a leading argument", name,
                         ex->cls->name);
    size_t k = count_before(ex, i, hop_param_is_lead);
    if (ex->hosts) {
        *out = ex->args[k];
        return HOP_OK;
    }
    const hop_arg *a = &ex->call->args[k];
    switch (a->kind) {
    case HOP_ARG_INT:
        *out = kind == HOP_PARAM_FLOAT ? hop_rt_float((double)a->u.i) : hop_rt_int(a->u.i);
        return HOP_OK;
    case HOP_ARG_FLOAT:
        *out = hop_rt_float(a->u.f);
        return HOP_OK;
    case HOP_ARG_BOOL:
        *out = hop_rt_bool(a->u.b);
        return HOP_OK;
    case HOP_ARG_DTYPE:
        *out = hop_rt_dtype(a->u.dtype);
        return HOP_OK;
    default: {
        hop_rt_value v;
        hop_status st = arg_value(ex->ip, a, &v);
        if (st != HOP_OK)
            return st;
        *out = v.kind == HOP_VALUE_TENSOR ? hop_rt_tensor(v.tensor) : hop_rt_int(v.i);
        return HOP_OK;
    }
    }
}

const hop_rt_value *
hop_eval_group(hop_eval_ctx *ex, const char *name, size_t *n)
{
    if (n)
        *n = 0;
    if (ex == NULL)
        return hop_error(HOP_MISUSE, "hop_eval_group: NULL context"), NULL;
    int i = find_param(ex, name, "hop_eval_group");
    if (i < 0)
        return NULL;
    if (!hop_param_is_group(ex->params[i].kind))
        return hop_error(HOP_MISUSE, "hop_eval_group: %s of %s is not a group of values", name,
                         ex->cls->name),
               NULL;
    /* A lifted-mode HOP's node has one list, its merged signature: its one
     * group is all of it. */
    size_t g = count_before(ex, i, hop_param_is_group);
    size_t from = ex->ngroups == 1 ? 0 : ex->group_start[g];
    size_t to = ex->ngroups == 1 ? ex->npassed : ex->group_start[g + 1];
    if (n)
        *n = to - from;
    return ex->passed + from;
}

const hop_rt_value *
hop_eval_passed(hop_eval_ctx *ex, size_t *n)
{
    if (n)
        *n = ex ? ex->npassed : 0;
    return ex ? ex->passed : NULL;
}

hop_status
hop_eval_body(hop_eval_ctx *ex, const char *body, const hop_rt_value *inputs, size_t ninputs,
              hop_rt_values *outputs)
{
    return hop_eval_body_at(ex, body, 0, inputs, ninputs, outputs);
}

hop_status
hop_eval_body_at(hop_eval_ctx *ex, const char *body, size_t k, const hop_rt_value *inputs,
                 size_t ninputs, hop_rt_values *outputs)
{
    if (ex == NULL || outputs == NULL || (ninputs && inputs == NULL))
        return hop_error(HOP_MISUSE, "hop_eval_body: NULL argument");
    int i = find_param(ex, body, "hop_eval_body");
    if (i < 0)
        return hop_error_code();
    hop_param_kind kind = ex->params[i].kind;
    if ((kind != HOP_PARAM_BODY || k != 0) && (kind != HOP_PARAM_BODIES || k >= ex->nbodies))
        return hop_error(HOP_MISUSE, "hop_eval_body: %s of %s is not a body%s", body, ex->cls->name,
                         kind == HOP_PARAM_BODIES ? " of that index" : "");
    size_t b = count_before(ex, i, is_body) + k;
    if (ex->hosts) {
        size_t before = outputs->n;
        hop_status st = ex->hosts[b].fn(ex->hosts[b].ud, inputs, ninputs, outputs);
        if (st != HOP_OK) {
            while (outputs->n > before)
                hop_tensor_release(outputs->items[--outputs->n].tensor);
            if (hop_error_code() == HOP_OK)
                st = hop_error(st, "%s: the %s body failed with %s and no message", ex->cls->name,
                               body, hop_status_name(st));
        }
        return st;
    }
    const hop_arg *a = &ex->call->args[count_before(ex, (int)ex->nparams, hop_param_is_lead) + b];
    if (a->kind != HOP_ARG_GRAPH)
        return hop_error(HOP_VERIFY, "eval: %s has no subgraph for %s", ex->call->name, body);
    const hop_graph *g = a->u.graph;
    size_t no = g->output ? g->output->nargs : 0;
    hop_rt_value small[16], *out = no <= 16 ? small : hop__calloc(no, sizeof *out);
    if (out == NULL)
        return HOP_NOMEM;
    hop_status st = run_graph(ex->ip, g, inputs, ninputs, out, no);
    for (size_t j = 0; j < no; j++)
        if (st == HOP_OK)
            st = hop_rt_values_push(outputs, out[j]);
        else
            hop_tensor_release(out[j].tensor);
    if (out != small)
        hop__free(out);
    return st;
}

hop_status
hop_eval_results(hop_eval_ctx *ex, hop_rt_values *results)
{
    if (ex == NULL || results == NULL)
        return hop_error(HOP_MISUSE, "hop_eval_results: NULL argument");
    hop_rt_values_clear(&ex->results);
    ex->results = *results;
    *results = (hop_rt_values){NULL, 0, 0};
    ex->have = true;
    return HOP_OK;
}

size_t
hop_eval_describe(const hop_rt_value *v, char *buf, size_t cap)
{
    if (v->kind == HOP_VALUE_TENSOR && v->tensor)
        return hop_tensor_print_meta(v->tensor, buf, cap);
    int n = snprintf(buf, cap, "%s", v->kind == HOP_VALUE_SYM ? "int" : "nothing");
    return n < 0 ? 0 : (size_t)n;
}

bool
hop_eval_same_kind(const hop_rt_value *a, const hop_rt_value *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind != HOP_VALUE_TENSOR)
        return true;
    const hop_tensor *x = a->tensor, *y = b->tensor;
    if (x->dtype != y->dtype || x->rank != y->rank)
        return false;
    for (int d = 0; d < x->rank; d++)
        if (x->sizes[d] != y->sizes[d])
            return false;
    return true;
}

size_t
hop_eval_nouts(const hop_eval_ctx *ex)
{
    return ex && ex->call ? ex->call->nouts : SIZE_MAX;
}

hop_status
hop_eval_output_zeros(hop_eval_ctx *ex, size_t j, hop_tensor **out)
{
    *out = NULL;
    if (ex == NULL || ex->call == NULL)
        return hop_error(HOP_UNSUPPORTED, "%s: an eager call's outputs have no metadata",
                         ex ? ex->cls->name : "hop_eval_output_zeros");
    if (j >= ex->call->nouts || ex->call->outs[j].kind != HOP_VALUE_TENSOR)
        return hop_error(HOP_MISUSE, "hop_eval_output_zeros: output %zu of %s is no tensor", j,
                         ex->call->name);
    const hop_meta *m = &ex->call->outs[j].meta;
    int64_t sizes[HOP_MAX_RANK];
    for (int d = 0; d < m->rank; d++) {
        hop_status st = hop_expr_eval(m->sizes[d], ex->ip->syms, ex->ip->nsyms, &sizes[d]);
        if (st != HOP_OK)
            return st;
    }
    *out = hop_tensor_zeros(m->dtype, m->rank, sizes);
    return *out ? HOP_OK : hop_error_code();
}

hop_status
hop_eval_stack_rows(const hop_rt_values *rows, size_t n, int64_t steps, bool reverse, int64_t dim,
                    hop_rt_values *out)
{
    hop_rt_arg *items = hop_calloc((size_t)steps + 1, sizeof *items);
    hop_status st = items ? HOP_OK : hop_error_code();
    for (size_t j = 0; j < n && st == HOP_OK; j++) {
        for (int64_t s = 0; s < steps; s++)
            items[reverse ? steps - 1 - s : s] =
                hop_rt_tensor(rows->items[(size_t)s * n + j].tensor);
        int rank = rows->items[j].tensor->rank + 1;
        hop_rt_arg a[] = {hop_rt_list(items, (size_t)steps),
                          hop_rt_int(dim < 0 ? dim + rank : dim)};
        hop_rt_value v;
        if ((st = hop_eager(HOP_OP_stack, a, 2, &v)) == HOP_OK)
            st = hop_rt_values_push(out, v);
    }
    hop_free(items);
    return st;
}

hop_status
hop_eval_run_passed(hop_eval_ctx *ex, const char *body, size_t k)
{
    size_t n;
    const hop_rt_value *in = hop_eval_passed(ex, &n);
    hop_rt_values out = {NULL, 0, 0};
    hop_status st = hop_eval_body_at(ex, body, k, in, n, &out);
    if (st == HOP_OK)
        st = hop_eval_results(ex, &out);
    hop_rt_values_clear(&out);
    return st;
}

hop_status
hop_eval_default(hop_eval_ctx *ex)
{
    size_t np = 0;
    const hop_param *p = hop_class_params(ex->cls, &np);
    const char *body = NULL;
    for (size_t i = 0; i < np && body == NULL; i++)
        if (p[i].kind == HOP_PARAM_BODY || p[i].kind == HOP_PARAM_BODIES)
            body = p[i].name;
    return hop_eval_run_passed(ex, body, 0);
}

hop_status
hop_eval_traced_only(hop_eval_ctx *ex, const char *verb, const char *how)
{
    if (hop_eval_nouts(ex) == SIZE_MAX)
        return hop_error(HOP_UNSUPPORTED, "%s: an eager call has no graph to %s; %s", ex->cls->name,
                         verb, how);
    return hop_eval_default(ex);
}

/* A HOP's results never share memory with its operands, with what its
 * bodies close over or with each other (docs/ARCHITECTURE.md, "A HOP's
 * results are fresh"), as in a plan: a result whose storage anything else
 * still holds (a body returned an operand, a view of one, a captured tensor,
 * one tensor twice) is replaced by a contiguous copy.  In order, so that of
 * results sharing one storage the last keeps it.  A result the body made
 * and let go of costs one check. */
static hop_status
fresh_results(hop_eval_ctx *ex)
{
    for (size_t i = 0; i < ex->results.n; i++) {
        hop_rt_value *v = &ex->results.items[i];
        if (v->kind != HOP_VALUE_TENSOR || hop_tensor_owns_storage(v->tensor))
            continue;
        hop_rt_arg a = hop_rt_tensor(v->tensor);
        hop_tensor *copy = hop_eager_tensor(HOP_OP_clone, &a, 1);
        if (copy == NULL)
            return hop_error_code();
        hop_tensor_release(v->tensor);
        v->tensor = copy;
    }
    return HOP_OK;
}

/* Runs the class's eval slot on a prepared context; the results stay in
 * ex->results, fresh.  Checks the slot gave results. */
static hop_status
eval_call(hop_eval_ctx *ex)
{
    const hop_class *owner = HOP_CLASS_SLOT_OWNER(ex->cls, eval);
    hop_status st;
    if (owner) {
        hop_error_clear();
        st = hop__slot_status(owner->name, "eval", owner->eval(ex));
    } else {
        st = hop_eval_default(ex);
    }
    if (st == HOP_OK && !ex->have)
        st = hop_error(HOP_MISUSE, "eval of %s: returned without hop_eval_results", ex->cls->name);
    if (st == HOP_OK && ex->call && ex->results.n != ex->call->nouts)
        st = hop_error(HOP_MISUSE, "eval of %s: gave %zu results for a call with %zu outputs",
                       ex->cls->name, ex->results.n, (size_t)ex->call->nouts);
    return st == HOP_OK ? fresh_results(ex) : st;
}

/* A call_hop node: its eval slot with the node's leads, groups and
 * subgraphs; the results are kept for the getitems. */
static hop_status
run_hop(interp *ip, const hop_node *n)
{
    if (n->cls == NULL)
        return hop_error(HOP_VERIFY, "eval: %s calls the HOP %s but records no class", n->name,
                         hop_node_target(n));
    hop_eval_ctx ex = {.cls = n->cls, .ip = ip, .call = n};
    ex.params = hop_class_params(n->cls, &ex.nparams);
    for (size_t i = 0; i < n->nargs; i++)
        ex.nbodies += n->args[i].kind == HOP_ARG_GRAPH;
    size_t np = hop_node_passed(n, NULL, 0);
    const hop_arg *small_a[32], **items = np <= 32 ? small_a : hop__malloc(np * sizeof *items);
    hop_rt_value small_v[32];
    ex.passed = np <= 32 ? small_v : hop__calloc(np, sizeof *ex.passed);
    hop_status st = items && ex.passed ? HOP_OK : HOP_NOMEM;
    if (st == HOP_OK) {
        hop_node_passed(n, items, np);
        for (size_t i = 0; i < np && st == HOP_OK; i++)
            st = arg_value(ip, items[i], &ex.passed[i]);
        ex.npassed = np;
        /* each list of the node is a group (the last may be the lifted) */
        size_t k = 0;
        for (size_t i = 0; i < n->nargs && ex.ngroups <= HOP_MAX_PARAMS; i++)
            if (n->args[i].kind == HOP_ARG_LIST) {
                ex.group_start[ex.ngroups++] = k;
                k += n->args[i].u.list.n;
            }
        ex.group_start[ex.ngroups] = k;
    }
    if (st == HOP_OK)
        st = eval_call(&ex);
    if (items != small_a)
        hop__free(items);
    if (ex.passed != small_v)
        hop__free(ex.passed);
    if (st == HOP_OK) {
        hop_rt_value none = {HOP_VALUE_NONE, NULL, 0};
        if ((st = set(ip, n, none)) == HOP_OK) {
            evmap *m = NULL;
            HASH_FIND_PTR(ip->values, &n, m);
            m->results = ex.results.items;
            m->nresults = ex.results.n;
            return HOP_OK;
        }
    }
    hop_rt_values_clear(&ex.results);
    return st;
}

hop_status
hop_eval_apply(const hop_class *cls, const hop_rt_arg *args, size_t nargs,
               const hop_host_body *bodies, size_t nbodies, hop_rt_values *outputs)
{
    if (cls == NULL || outputs == NULL || (nargs && args == NULL))
        return hop_error(HOP_MISUSE, "hop_eval_apply: NULL argument");
    hop_eval_ctx ex = {.cls = cls, .args = args, .hosts = bodies};
    ex.params = hop_class_params(cls, &ex.nparams);
    size_t want = 0, nb = hop_class_nbodies(cls), total = 0;
    for (size_t i = 0; i < ex.nparams; i++)
        want += ex.params[i].kind != HOP_PARAM_BODY && ex.params[i].kind != HOP_PARAM_BODIES;
    if (nargs != want)
        return hop_error(HOP_INVALID, "%s: takes %zu argument%s besides its bodies, got %zu",
                         cls->name, want, want == 1 ? "" : "s", nargs);
    if (!hop_class_takes_bodies(cls, nbodies) || bodies == NULL)
        return hop_error(HOP_INVALID, "%s: takes %zu bod%s, got %zu", cls->name, nb,
                         nb == 1 ? "y" : "ies", nbodies);
    ex.nbodies = nb = nbodies;
    for (size_t b = 0; b < nb; b++)
        if (bodies[b].fn == NULL)
            return hop_error(HOP_INVALID, "%s: body %zu is not callable (NULL function)", cls->name,
                             b);
    /* leads first, then the groups (hop_apply's order) */
    size_t k = 0, nlead = 0;
    for (size_t i = 0; i < ex.nparams; i++) {
        const hop_param *p = &ex.params[i];
        if (p->kind == HOP_PARAM_BODY || p->kind == HOP_PARAM_BODIES)
            continue;
        const hop_rt_arg *a = &args[k++];
        if (hop_param_is_group(p->kind)) {
            bool ok = a->kind == HOP_OPND_LIST && (a->u.list.n == 0 || a->u.list.items);
            for (size_t j = 0; ok && j < a->u.list.n; j++)
                ok = (a->u.list.items[j].kind == HOP_OPND_TENSOR && a->u.list.items[j].u.tensor) ||
                     a->u.list.items[j].kind == HOP_OPND_INT;
            if (!ok)
                return hop_error(HOP_INVALID, "%s: %s must be a list of tensors and ints",
                                 cls->name, p->name);
            total += a->u.list.n;
            continue;
        }
        bool ok = false;
        switch (p->kind) {
        case HOP_PARAM_INT:
            ok = a->kind == HOP_OPND_INT;
            break;
        case HOP_PARAM_FLOAT:
            ok = a->kind == HOP_OPND_FLOAT || a->kind == HOP_OPND_INT;
            break;
        case HOP_PARAM_BOOL:
            ok = a->kind == HOP_OPND_BOOL;
            break;
        case HOP_PARAM_DTYPE:
            ok = a->kind == HOP_OPND_DTYPE;
            break;
        default: /* VALUE */
            ok = (a->kind == HOP_OPND_TENSOR && a->u.tensor) || a->kind == HOP_OPND_INT ||
                 a->kind == HOP_OPND_BOOL;
            break;
        }
        if (!ok)
            return hop_error(HOP_INVALID, "%s: %s has the wrong kind of value", cls->name, p->name);
        nlead++;
    }
    (void)nlead;
    hop_rt_value small[32];
    ex.passed = total <= 32 ? small : hop__calloc(total, sizeof *ex.passed);
    if (ex.passed == NULL)
        return HOP_NOMEM;
    k = 0;
    for (size_t i = 0; i < ex.nparams; i++) {
        const hop_param *p = &ex.params[i];
        if (p->kind == HOP_PARAM_BODY || p->kind == HOP_PARAM_BODIES)
            continue;
        const hop_rt_arg *a = &args[k++];
        if (!hop_param_is_group(p->kind))
            continue;
        ex.group_start[ex.ngroups++] = ex.npassed;
        for (size_t j = 0; j < a->u.list.n; j++) {
            const hop_rt_arg *it = &a->u.list.items[j];
            ex.passed[ex.npassed++] = it->kind == HOP_OPND_TENSOR
                                          ? (hop_rt_value){HOP_VALUE_TENSOR, it->u.tensor, 0}
                                          : (hop_rt_value){HOP_VALUE_SYM, NULL, it->u.i};
        }
    }
    ex.group_start[ex.ngroups] = ex.npassed;
    hop_status st = eval_call(&ex);
    if (ex.passed != small)
        hop__free(ex.passed);
    for (size_t i = 0; st == HOP_OK && i < ex.results.n; i++) {
        st = hop_rt_values_push(outputs, ex.results.items[i]);
        ex.results.items[i].tensor = NULL;
    }
    hop_rt_values_clear(&ex.results);
    return st;
}

/* A call_foreign: hop_foreign_call, the results kept for the getitems. */
static hop_status
run_foreign(interp *ex, const hop_node *n)
{
    const hop_foreign *f = hop_foreign_acquire(hop_node_target(n));
    if (f == NULL)
        return hop_error(HOP_NOT_FOUND,
                         "eval: %s calls the foreign kernel %s, which is not registered", n->name,
                         hop_node_target(n));
    size_t total = hop_args_count(n->args, n->nargs);
    hop_rt_arg small[32], *rt = total <= 32 ? small : hop_malloc(total * sizeof *rt);
    hop_rt_value *results = hop_calloc(n->nouts + 1, sizeof *results);
    hop_tensor *outs[FOREIGN_MAXOUT] = {NULL};
    hop_status st = rt && results ? HOP_OK : hop_error_code();
    if (st == HOP_OK && n->nouts > FOREIGN_MAXOUT)
        st = hop_error(HOP_UNSUPPORTED, "eval: %s has %zu outputs (at most %d)", n->name,
                       (size_t)n->nouts, FOREIGN_MAXOUT);
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
    for (size_t j = 0; j < n->nouts && j < FOREIGN_MAXOUT; j++)
        hop_tensor_release(outs[j]);
    hop_free(results);
    return st;
}

static hop_status
run_getitem(interp *ex, const hop_node *n)
{
    const hop_node *call = n->args[0].u.node;
    evmap *m = NULL;
    HASH_FIND_PTR(ex->values, &call, m);
    int64_t i = n->args[1].u.i;
    if (m == NULL || i < 0 || (size_t)i >= m->nresults)
        return hop_error(HOP_VERIFY, "eval: %s reads a result %s did not give", n->name,
                         call->name);
    hop_rt_value v = m->results[i];
    hop_tensor_retain(v.tensor);
    return set(ex, n, v);
}

/* Runs graph g on inputs (borrowed); outputs[noutputs] get new references. */
static hop_status
run_graph(interp *ex, const hop_graph *g, const hop_rt_value *inputs, size_t ninputs,
          hop_rt_value *outputs, size_t noutputs)
{
    /* Every early return leaves the outputs empty, so a caller may release them. */
    for (size_t j = 0; j < noutputs; j++)
        outputs[j] = (hop_rt_value){HOP_VALUE_NONE, NULL, 0};
    const hop_node *out = g->output;
    if (out == NULL || g->nplaceholders != ninputs || out->nargs != noutputs)
        return hop_error(HOP_VERIFY, "eval: %s called with %zu inputs and %zu outputs", g->name,
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
            return hop_error(HOP_GUARD, "eval: guard %s of %s failed: %s was traced assuming it",
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
    for (size_t j = 0; j < noutputs && st == HOP_OK; j++) {
        if ((st = arg_value(ex, &out->args[j], &outputs[j])) == HOP_OK)
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
hop_graph_eval(const hop_output_graph *og, hop_tensor *const *inputs, size_t ninputs,
               hop_tensor **outputs, size_t noutputs)
{
    for (size_t j = 0; outputs && j < noutputs; j++)
        outputs[j] = NULL;
    if (og == NULL || (ninputs && inputs == NULL) || (noutputs && outputs == NULL))
        return hop_error(HOP_MISUSE, "hop_graph_eval: NULL argument");
    const hop_graph *g = hop_output_graph_root_graph(og);
    if (g->output == NULL || g->output->nargs != noutputs)
        return hop_error(HOP_MISUSE, "hop_graph_eval: the graph has %zu outputs, not %zu",
                         g->output ? (size_t)g->output->nargs : 0, noutputs);
    interp ex = {NULL};
    ex.nsyms = hop_shape_env_nsymbols(hop_output_graph_env(og));
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
            st = hop_error(HOP_INVALID, "hop_graph_eval: input %zu (%s) is missing", k, n->name);
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
        st = hop_error(HOP_INVALID, "hop_graph_eval: expected %zu inputs, got %zu", k, ninputs);
    i = 0;
    for (const hop_node *n = g->first; st == HOP_OK && n && n->kind == HOP_NODE_PLACEHOLDER;
         n = n->next, i++)
        if (n->meta->kind == HOP_VALUE_SYM) {
            in[i].kind = HOP_VALUE_SYM;
            st = hop_expr_eval(n->meta->sym, ex.syms, ex.nsyms, &in[i].i);
        }
    if (st == HOP_OK)
        st = run_graph(&ex, g, in, np, out, noutputs);
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
