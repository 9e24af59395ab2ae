/*
 * lowering/hops.c - the lowering registry (keyed by HOP class, searched
 * along the base chain) and how the built-in HOPs run, in plans and in the
 * reference interpreter:
 *
 *   wrap             its body inlined
 *   cond             `IfNot pred` over the true branch inlined, `Goto` over
 *                    the false branch inlined; each branch's results are
 *                    moved (not copied) into the call's results
 *   map              a loop over rows: a view per row of each mapped input,
 *                    the body inlined with the row of each stacked output as
 *                    the destination of the body's result; the rows are
 *                    independent, so the loop is a parallel one (parmap.c)
 *   invoke_subgraph  a Call of its subgraph, compiled once per plan
 *
 * They use only the toolkit of hop/lowering.h, as a user's HOP would.
 */
#include "lowering/lowering_impl.h"

#include <pthread.h>

typedef struct entry {
    const hop_hop_class *cls;
    hop_lowering l;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *entries;
static size_t nentries, capentries;

/* ----------------------------------------------------------- helpers */

/* The values passed to the subgraphs: the call's last argument. */
static const hop_arg *
passed_list(const hop_node *call)
{
    const hop_arg *last = call->nargs ? &call->args[call->nargs - 1] : NULL;
    return last && last->kind == HOP_ARG_LIST ? last : NULL;
}

typedef struct pvals {
    hop_pval small[16];
    hop_pval *v;
} pvals;

static hop_status
pvals_init(pvals *p, size_t n)
{
    p->v = n <= 16 ? p->small : hop_malloc(n * sizeof *p->v);
    return p->v ? HOP_OK : hop_error_code();
}

static void
pvals_free(pvals *p)
{
    if (p->v != p->small)
        hop_free(p->v);
}

static hop_status
lower_passed(hop_lower_ctx *cx, const hop_node *call, pvals *in, size_t *n)
{
    const hop_arg *list = passed_list(call);
    if (list == NULL)
        return hop_error(HOP_VERIFY, "lowering: %s has no list of passed values", call->name);
    *n = list->u.list.n;
    hop_status st = pvals_init(in, *n);
    for (size_t i = 0; i < *n && st == HOP_OK; i++)
        st = hop_lower_arg(cx, &list->u.list.items[i], &in->v[i]);
    return st;
}

/* How many of map's passed values are mapped: the leading body inputs
 * that are slices (one dim less than what is passed). */
static size_t
map_nxs(const hop_graph *body, const hop_arg *list)
{
    size_t k = 0;
    for (const hop_node *n = body->first; n && n->kind == HOP_NODE_PLACEHOLDER && k < list->u.list.n;
         n = n->next, k++) {
        const hop_arg *a = &list->u.list.items[k];
        if (n->meta->kind != HOP_VALUE_TENSOR || a->kind != HOP_ARG_NODE ||
            a->u.node->meta->kind != HOP_VALUE_TENSOR ||
            a->u.node->meta->meta.rank != n->meta->meta.rank + 1)
            break;
    }
    return k;
}

static hop_status
graph_arg(const hop_node *call, size_t i, const hop_graph **g)
{
    if (i >= call->nargs || call->args[i].kind != HOP_ARG_GRAPH)
        return hop_error(HOP_VERIFY, "lowering: argument %zu of %s is not a subgraph", i,
                         call->name);
    *g = call->args[i].u.graph;
    return HOP_OK;
}

/* ------------------------------------------------------------ lowerings */

static hop_status
lower_body(hop_lower_ctx *cx, const hop_node *call, size_t gi, bool as_call)
{
    const hop_graph *g = NULL;
    pvals in, out;
    size_t n = 0;
    hop_status st = graph_arg(call, gi, &g);
    if (st != HOP_OK)
        return st;
    pvals dests;
    in.v = out.v = dests.v = NULL;
    if ((st = lower_passed(cx, call, &in, &n)) == HOP_OK &&
        (st = pvals_init(&out, call->nouts)) == HOP_OK &&
        (st = pvals_init(&dests, call->nouts)) == HOP_OK) {
        for (size_t j = 0; j < call->nouts && st == HOP_OK; j++)
            st = hop_lower_dest(cx, j, &dests.v[j]);
        if (st == HOP_OK)
            st = as_call ? hop_lower_call(cx, g, in.v, n, dests.v, out.v, call->nouts)
                         : hop_lower_inline(cx, g, in.v, n, dests.v, out.v, call->nouts);
        if (st == HOP_OK)
            st = hop_lower_results(cx, out.v, call->nouts);
    }
    if (in.v)
        pvals_free(&in);
    if (out.v)
        pvals_free(&out);
    if (dests.v)
        pvals_free(&dests);
    return st;
}

static hop_status
wrap_lower(hop_lower_ctx *cx, const hop_node *call, void *ud)
{
    (void)ud;
    return lower_body(cx, call, 0, false);
}

static hop_status
invoke_lower(hop_lower_ctx *cx, const hop_node *call, void *ud)
{
    (void)ud;
    return lower_body(cx, call, 0, true);
}

static hop_status
cond_lower(hop_lower_ctx *cx, const hop_node *call, void *ud)
{
    (void)ud;
    const hop_graph *tg = NULL, *fg = NULL;
    hop_status st;
    if ((st = graph_arg(call, 1, &tg)) != HOP_OK || (st = graph_arg(call, 2, &fg)) != HOP_OK)
        return st;
    hop_pval pred;
    pvals in = {.v = NULL}, res = {.v = NULL}, br = {.v = NULL}, dests = {.v = NULL};
    size_t n = 0, no = call->nouts;
    if ((st = hop_lower_arg(cx, &call->args[0], &pred)) != HOP_OK ||
        (st = lower_passed(cx, call, &in, &n)) != HOP_OK || (st = pvals_init(&res, no)) != HOP_OK ||
        (st = pvals_init(&br, no)) != HOP_OK || (st = pvals_init(&dests, no)) != HOP_OK)
        goto done;
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        st = hop_lower_dest(cx, j, &dests.v[j]);
    /* The results go to the caller's destinations when it has them (both
     * branches write there), else they stand for whichever branch ran. */
    for (size_t j = 0; j < no && st == HOP_OK; j++) {
        if ((st = hop_lower_dest(cx, j, &res.v[j])) == HOP_OK && res.v[j].kind == HOP_PVAL_NONE)
            st = hop_lower_tensor(cx, &call->outs[j], false, &res.v[j]);
    }
    if (st != HOP_OK || (st = hop_lower_if(cx, pred)) != HOP_OK)
        goto done;
    for (int b = 0; b < 2; b++) {
        if (b == 1 && (st = hop_lower_else(cx)) != HOP_OK)
            goto done;
        if ((st = hop_lower_inline(cx, b ? fg : tg, in.v, n, dests.v, br.v, no)) != HOP_OK)
            goto done;
        for (size_t j = 0; j < no && st == HOP_OK; j++)
            st = hop_lower_move(cx, res.v[j], br.v[j]);
        if (st != HOP_OK)
            goto done;
    }
    if ((st = hop_lower_end_if(cx)) == HOP_OK)
        st = hop_lower_results(cx, res.v, no);
done:
    if (in.v)
        pvals_free(&in);
    if (res.v)
        pvals_free(&res);
    if (br.v)
        pvals_free(&br);
    if (dests.v)
        pvals_free(&dests);
    return st;
}

static hop_status
map_lower(hop_lower_ctx *cx, const hop_node *call, void *ud)
{
    (void)ud;
    const hop_graph *g = NULL;
    hop_status st = graph_arg(call, 0, &g);
    if (st != HOP_OK)
        return st;
    const hop_arg *list = passed_list(call);
    if (list == NULL)
        return hop_error(HOP_VERIFY, "lowering: %s has no list of passed values", call->name);
    size_t nxs = map_nxs(g, list), no = call->nouts, n = 0;
    if (nxs == 0)
        return hop_error(HOP_VERIFY, "lowering: %s maps over nothing", call->name);
    for (size_t j = 0; j < no; j++) {
        /* The stacked outputs are made before the loop, so their sizes
         * must not depend on what the body computes. */
        const hop_meta *m = &call->outs[j].meta;
        for (int d = 0; d < m->rank; d++) {
            const hop_expr *syms[16];
            size_t ns = hop_expr_free_symbols(m->sizes[d], syms, 16);
            for (size_t k = 0; k < ns && k < 16; k++) {
                int64_t id = hop_symbol_id(syms[k]);
                if (hop_symbol_is_unbacked(syms[k]) && !cx->symdef[id]) {
                    char text[128];
                    hop_meta_print(m, text, sizeof text);
                    return hop_error(HOP_UNSUPPORTED,
                                     "lowering: %s: output %zu is %s, whose size %s is only known "
                                     "inside the body; map needs its outputs' sizes before it runs",
                                     call->name, j, text, hop_symbol_name(syms[k]));
                }
            }
        }
    }
    pvals in = {.v = NULL}, body_in = {.v = NULL}, out = {.v = NULL}, rows = {.v = NULL},
          res = {.v = NULL};
    hop_pval count, index;
    if ((st = lower_passed(cx, call, &in, &n)) != HOP_OK || (st = pvals_init(&body_in, n)) != HOP_OK ||
        (st = pvals_init(&out, no)) != HOP_OK || (st = pvals_init(&rows, no)) != HOP_OK ||
        (st = pvals_init(&res, no)) != HOP_OK)
        goto done;
    for (size_t j = 0; j < no && st == HOP_OK; j++) {
        if ((st = hop_lower_dest(cx, j, &out.v[j])) == HOP_OK && out.v[j].kind == HOP_PVAL_NONE)
            st = hop_lower_tensor(cx, &call->outs[j], true, &out.v[j]);
    }
    if (st != HOP_OK)
        goto done;
    /* The row count is the leading size of the first mapped input. */
    const hop_node *x0 = list->u.list.items[0].u.node;
    int64_t c;
    if (hop_expr_const_value(x0->meta->meta.sizes[0], &c)) {
        count = (hop_pval){HOP_PVAL_CONST, -1, c};
    } else {
        hop_arg size = hop_arg_sym(x0->meta->meta.sizes[0]);
        if ((st = hop_lower_arg(cx, &size, &count)) != HOP_OK)
            goto done;
    }
    /* Rows are independent: the plan may split them over the pool. */
    if ((st = hop_lower_parallel_loop_begin(cx, count, &index)) != HOP_OK)
        goto done;
    for (size_t k = 0; k < n && st == HOP_OK; k++)
        st = k < nxs ? hop_lower_select(cx, in.v[k], index, &body_in.v[k])
                     : (body_in.v[k] = in.v[k], HOP_OK);
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        st = hop_lower_select(cx, out.v[j], index, &rows.v[j]);
    if (st == HOP_OK)
        st = hop_lower_inline(cx, g, body_in.v, n, rows.v, res.v, no);
    if (st == HOP_OK)
        st = hop_lower_loop_end(cx);
    if (st == HOP_OK)
        st = hop_lower_results(cx, out.v, no);
done:
    if (in.v)
        pvals_free(&in);
    if (body_in.v)
        pvals_free(&body_in);
    if (out.v)
        pvals_free(&out);
    if (rows.v)
        pvals_free(&rows);
    if (res.v)
        pvals_free(&res);
    return st;
}

/* ---------------------------------------------------------------- eager */

typedef struct rvals {
    hop_rt_value small[16];
    hop_rt_value *v;
    size_t n;
} rvals;

static hop_status
rvals_init(rvals *r, size_t n)
{
    r->n = n;
    r->v = n <= 16 ? r->small : hop_calloc(n, sizeof *r->v);
    if (r->v == r->small)
        memset(r->small, 0, sizeof r->small);
    return r->v ? HOP_OK : hop_error_code();
}

/* Releases the tensors (owned) and the array. */
static void
rvals_free(rvals *r, bool owned)
{
    if (r->v == NULL)
        return;
    for (size_t i = 0; owned && i < r->n; i++)
        hop_tensor_release(r->v[i].tensor);
    if (r->v != r->small)
        hop_free(r->v);
    r->v = NULL;
}

static hop_status
eager_passed(hop_eager_ctx *ex, const hop_node *call, rvals *in)
{
    const hop_arg *list = passed_list(call);
    if (list == NULL)
        return hop_error(HOP_VERIFY, "%s has no list of passed values", call->name);
    hop_status st = rvals_init(in, list->u.list.n);
    for (size_t i = 0; i < in->n && st == HOP_OK; i++)
        st = hop_eager_arg(ex, &list->u.list.items[i], &in->v[i]);
    return st;
}

static hop_status
eager_body(hop_eager_ctx *ex, const hop_node *call, const hop_graph *g)
{
    rvals in = {.v = NULL}, out = {.v = NULL};
    hop_status st = eager_passed(ex, call, &in);
    if (st == HOP_OK && (st = rvals_init(&out, call->nouts)) == HOP_OK &&
        (st = hop_eager_graph(ex, g, in.v, in.n, out.v, out.n)) == HOP_OK)
        st = hop_eager_results(ex, out.v, out.n);
    rvals_free(&in, false);
    rvals_free(&out, st != HOP_OK);
    return st;
}

static hop_status
wrap_eager(hop_eager_ctx *ex, const hop_node *call, void *ud)
{
    (void)ud;
    const hop_graph *g = NULL;
    hop_status st = graph_arg(call, 0, &g);
    return st == HOP_OK ? eager_body(ex, call, g) : st;
}

static hop_status
cond_eager(hop_eager_ctx *ex, const hop_node *call, void *ud)
{
    (void)ud;
    hop_rt_value pred;
    const hop_graph *tg = NULL, *fg = NULL;
    hop_status st;
    if ((st = graph_arg(call, 1, &tg)) != HOP_OK || (st = graph_arg(call, 2, &fg)) != HOP_OK ||
        (st = hop_eager_arg(ex, &call->args[0], &pred)) != HOP_OK)
        return st;
    int64_t v = pred.i;
    if (pred.kind == HOP_VALUE_TENSOR && (st = hop_tensor_item_int(pred.tensor, &v)) != HOP_OK)
        return st;
    return eager_body(ex, call, v ? tg : fg);
}

static hop_status
map_eager(hop_eager_ctx *ex, const hop_node *call, void *ud)
{
    (void)ud;
    const hop_graph *g = NULL;
    hop_status st = graph_arg(call, 0, &g);
    if (st != HOP_OK)
        return st;
    size_t nxs = map_nxs(g, passed_list(call)), no = call->nouts;
    rvals in = {.v = NULL}, row_in = {.v = NULL}, row_out = {.v = NULL}, res = {.v = NULL};
    hop_rt_arg *stacks = NULL;
    int64_t nrows = 0;
    if ((st = eager_passed(ex, call, &in)) != HOP_OK || (st = rvals_init(&row_in, in.n)) != HOP_OK ||
        (st = rvals_init(&row_out, no)) != HOP_OK || (st = rvals_init(&res, no)) != HOP_OK)
        goto done;
    nrows = in.v[0].tensor->sizes[0];
    stacks = hop_calloc((size_t)(nrows > 0 ? nrows : 1) * (no ? no : 1), sizeof *stacks);
    if (stacks == NULL) {
        st = hop_error_code();
        goto done;
    }
    for (int64_t i = 0; i < nrows && st == HOP_OK; i++) {
        for (size_t k = 0; k < in.n && st == HOP_OK; k++) {
            row_in.v[k] = in.v[k];
            if (k < nxs) {
                hop_rt_arg a[] = {hop_rt_tensor(in.v[k].tensor), hop_rt_int(0), hop_rt_int(i)};
                st = hop_eager(HOP_OP_select, a, 3, &row_in.v[k]);
            }
        }
        if (st == HOP_OK)
            st = hop_eager_graph(ex, g, row_in.v, row_in.n, row_out.v, no);
        for (size_t k = 0; k < nxs && k < in.n; k++)
            if (row_in.v[k].tensor != in.v[k].tensor)
                hop_tensor_release(row_in.v[k].tensor);
        for (size_t j = 0; j < no && st == HOP_OK; j++)
            stacks[j * (size_t)nrows + (size_t)i] = hop_rt_tensor(row_out.v[j].tensor);
    }
    for (size_t j = 0; j < no && st == HOP_OK; j++) {
        if (nrows == 0) {
            st = hop_error(HOP_UNSUPPORTED, "map: no rows to map over");
            break;
        }
        hop_rt_arg a[] = {hop_rt_list(stacks + j * (size_t)nrows, (size_t)nrows), hop_rt_int(0)};
        st = hop_eager(HOP_OP_stack, a, 2, &res.v[j]);
    }
    for (size_t j = 0; j < no; j++)
        for (int64_t i = 0; i < nrows; i++)
            hop_tensor_release(stacks[j * (size_t)nrows + (size_t)i].u.tensor);
    if (st == HOP_OK)
        st = hop_eager_results(ex, res.v, no);
done:
    hop_free(stacks);
    rvals_free(&in, false);
    rvals_free(&row_in, false);
    rvals_free(&row_out, false);
    rvals_free(&res, st != HOP_OK);
    return st;
}

/* --------------------------------------------------------------- registry */

static const entry builtins[] = {
    {&hop_wrap_class, {wrap_lower, wrap_eager, NULL}},
    {&hop_cond_class, {cond_lower, cond_eager, NULL}},
    {&hop_map_class, {map_lower, map_eager, NULL}},
    {&hop_invoke_subgraph_class, {invoke_lower, wrap_eager, NULL}},
};

static const hop_lowering *
own(const hop_hop_class *cls)
{
    for (size_t i = 0; i < nentries; i++)
        if (entries[i].cls == cls)
            return &entries[i].l;
    for (size_t i = 0; i < HOP__ARRAY_LEN(builtins); i++)
        if (builtins[i].cls == cls)
            return &builtins[i].l;
    return NULL;
}

static const hop_lowering *
find_locked(const hop_hop_class *cls)
{
    for (int depth = 0; cls && depth < 32; depth++, cls = cls->base) {
        const hop_lowering *l = own(cls);
        if (l)
            return l;
    }
    return NULL;
}

const hop_lowering *
hop_find_lowering(const hop_hop_class *cls)
{
    pthread_mutex_lock(&lock);
    const hop_lowering *l = find_locked(cls);
    pthread_mutex_unlock(&lock);
    if (l == NULL)
        hop_error(HOP_NOT_FOUND, "no lowering for the HOP %s or its base classes",
                  cls && cls->name ? cls->name : "(null)");
    return l;
}

hop_status
hop_register_lowering(const hop_hop_class *cls, const hop_lowering *l)
{
    if (cls == NULL || l == NULL)
        return hop_error(HOP_MISUSE, "hop_register_lowering: NULL %s", cls ? "lowering" : "class");
    pthread_mutex_lock(&lock);
    hop_status st = HOP_OK;
    if (own(cls)) {
        st = hop_error(HOP_EXISTS, "hop_register_lowering: %s has a lowering already",
                       cls->name ? cls->name : "the class");
    } else if (hop__grow((void **)&entries, &capentries, nentries + 1, sizeof *entries) != HOP_OK) {
        st = HOP_NOMEM;
    } else {
        entries[nentries++] = (entry){cls, *l};
    }
    pthread_mutex_unlock(&lock);
    return st;
}

hop_status
hop_unregister_lowering(const hop_hop_class *cls)
{
    pthread_mutex_lock(&lock);
    hop_status st = hop_error(HOP_NOT_FOUND, "hop_unregister_lowering: %s has no lowering of its own",
                              cls && cls->name ? cls->name : "(null)");
    for (size_t i = 0; i < nentries; i++) {
        if (entries[i].cls != cls)
            continue;
        entries[i] = entries[--nentries];
        if (nentries == 0) {
            hop__free(entries);
            entries = NULL;
            capentries = 0;
        }
        hop_error_clear();
        st = HOP_OK;
        break;
    }
    pthread_mutex_unlock(&lock);
    return st;
}

const hop_lowering *
hop__lowering_for(const char *target, const hop_hop_class **cls)
{
    *cls = hop_find_hop(target);
    pthread_mutex_lock(&lock);
    if (*cls == NULL)
        for (size_t i = 0; i < nentries; i++)
            if (entries[i].cls->name && strcmp(entries[i].cls->name, target) == 0)
                *cls = entries[i].cls;
    const hop_lowering *l = *cls ? find_locked(*cls) : NULL;
    pthread_mutex_unlock(&lock);
    if (l)
        hop_error_clear();
    return l;
}
