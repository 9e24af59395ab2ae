/*
 * hop/branch_kit.c - the branch kit (hop/branch_kit.h): tracing and vmap of
 * a HOP that runs one of its bodies, picked by a lead (cond's pred,
 * switch's index).  cond.c and switch.c read their lead and give the masks
 * of their branches; the rest is here, written against the public headers
 * only, as an outside HOP author would.
 *
 * Tracing: the outputs are checked against branch 0's and their sizes
 * merged (one expression whichever branch runs, else a fresh unbacked
 * symbol the installed slot binds in the caller).
 *
 * A predicate (index) that is not batched: the same cond (switch) over the
 * branches' batched versions (hop_batch_body: batched operands at dim 0,
 * every tensor output batched, an output that does not depend on the batch
 * broadcast, so every branch agrees).
 *
 * A batched predicate (index): each example picks its own branch.  Two
 * strategies, chosen by the cost rule of docs/VMAP.md:
 *
 *   select      every branch runs on the whole batch, and the results are
 *               combined with `where` (switch: a chain of where over
 *               clamp(index) == k); each branch's float operands pass
 *               through mask_gradient with its mask, so an example's
 *               gradient comes from its own branch only.  Only when every branch is cheap and
 *               pure: at most HOP_VMAP_SELECT_MAX_OPS op nodes over all
 *               branches, each elementwise (unary, binary, comparison,
 *               logical, where, to, clone: they have no effects and never
 *               raise, an integer division by zero is 0), no HOP and no
 *               foreign call.
 *   compaction  otherwise: the examples are partitioned by branch (nonzero
 *               of each branch's mask), each branch runs once, batched over
 *               its subset (a batch of unbacked size), and the results are
 *               put back in the examples' order: the branches' results
 *               concatenated in partition order, then a take with each
 *               example's position there (the inverse permutation, computed
 *               with a cumsum per mask: no sort, no scatter).
 *
 * A cond whose branches give an output of different shapes: uniform_lead
 * (every example must take one branch, checked when the plan runs).
 *
 * The batched branches are subgraphs named `<branch>_vmap_select` or
 * `<branch>_vmap_compact`, run by `wrap`, so the strategy shows in the
 * graph's code and in explain().
 */
#include "hop/branch_kit.h"
#include "hop/prim_hop.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- tracing */

static void
branch_name(const char *const *names, size_t b, char *buf, size_t cap)
{
    if (names)
        snprintf(buf, cap, "%s", names[b]);
    else
        snprintf(buf, cap, "branch %zu", b);
}

/* The branches' names are formatted only for an error (formatting them on
 * every call cost ~2 K instructions of a traced cond, issue #30). */
hop_status
hop_call_check_branches(hop_call *c, const char *const *names)
{
    const hop_values *a = &c->results[0];
    char first[64], other[64];
    for (size_t b = 1; b < c->nbodies; b++) {
        const hop_values *r = &c->results[b];
        if (r->n != a->n) {
            branch_name(names, 0, first, sizeof first);
            branch_name(names, b, other, sizeof other);
            return hop_error(HOP_TRACE, "%s: %s returns %zu value%s but %s returns %zu",
                             c->cls->name, first, a->n, a->n == 1 ? "" : "s", other, r->n);
        }
        for (size_t i = 0; i < a->n; i++) {
            const hop_value_info *x = a->items[i]->meta, *y = r->items[i]->meta;
            bool same = x->kind == y->kind &&
                        (x->kind != HOP_VALUE_TENSOR ||
                         (x->meta.dtype == y->meta.dtype && x->meta.rank == y->meta.rank));
            if (!same) {
                char p[128], q[128];
                branch_name(names, 0, first, sizeof first);
                branch_name(names, b, other, sizeof other);
                hop_value_info_print(x, p, sizeof p);
                hop_value_info_print(y, q, sizeof q);
                return hop_error(HOP_TRACE, "%s: output %zu of %s is %s but %s gives %s",
                                 c->cls->name, i, first, p, other, q);
            }
        }
    }
    return HOP_OK;
}

static const hop_expr *
branch_size(const hop_call *c, size_t b, size_t i, int d)
{
    const hop_value_info *m = c->results[b].items[i]->meta;
    return m->kind == HOP_VALUE_SYM ? m->sym : m->meta.sizes[d];
}

/* Whether branch b's size of output i, dim d, is x whenever b runs: the same
 * expression, or equated with x by a guard of the caller (which holds for
 * every branch) or by one of b's own guards (checked each time b runs). */
static hop_status
branch_size_is(hop_call *c, size_t b, size_t i, int d, const hop_expr *x, bool *is)
{
    hop_shape_env *env = hop_output_graph_env(c->og);
    const hop_expr *e = branch_size(c, b, i, d);
    *is = e == x;
    if (*is)
        return HOP_OK;
    const hop_expr *eq = hop_sym_eq(env, x, e);
    if (eq == NULL)
        return hop_error_code();
    for (size_t g = 0, n = hop_shape_env_nguards(env); g < n && !*is; g++)
        *is = hop_shape_env_guard(env, g) == eq;
    for (size_t g = 0; g < c->graphs[b]->nguards && !*is; g++)
        *is = c->graphs[b]->guards[g] == eq;
    return HOP_OK;
}

/* One size whichever branch runs: some branch's size that every branch's is
 * (a dim a branch broadcast against a static tensor guards s1 == 4 there,
 * and 4 and s1 are then one size), else a fresh unbacked symbol spanning
 * theirs. */
static const hop_expr *
merge_size(hop_call *c, size_t i, int d)
{
    hop_shape_env *env = hop_output_graph_env(c->og);
    for (size_t k = 0; k < c->nbodies; k++) {
        const hop_expr *x = branch_size(c, k, i, d);
        bool all = true;
        for (size_t b = 0; b < c->nbodies && all; b++)
            if (branch_size_is(c, b, i, d, x, &all) != HOP_OK)
                return NULL;
        if (all)
            return x;
    }
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t b = 0; b < c->nbodies; b++) {
        int64_t l, h;
        hop_shape_env_bounds(env, branch_size(c, b, i, d), &l, &h);
        lo = l < lo ? l : lo;
        hi = h > hi ? h : hi;
    }
    return hop_shape_env_unbacked(env, lo, hi);
}

hop_status
hop_call_merge_branch_outputs(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->output_meta(c); /* branch 0's */
    for (size_t i = 0; i < c->nouts && st == HOP_OK; i++) {
        hop_value_info *o = &c->outs[i];
        if (o->kind == HOP_VALUE_SYM) {
            if ((o->sym = merge_size(c, i, 0)) == NULL)
                st = hop_error_code();
            continue;
        }
        for (int d = 0; d < o->meta.rank && st == HOP_OK; d++)
            if ((o->meta.sizes[d] = merge_size(c, i, d)) == NULL)
                st = hop_error_code();
    }
    return st;
}

hop_status
hop_call_bind_output_sizes(hop_call *c)
{
    for (size_t i = 0; i < c->nouts; i++) {
        const hop_value_info *o = &c->outs[i];
        hop_node *item = c->outputs->items[c->outputs->n - c->nouts + i];
        for (int d = 0; o->kind == HOP_VALUE_TENSOR && d < o->meta.rank; d++) {
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

/* The cost rule's constant (docs/VMAP.md). */
#define HOP_VMAP_SELECT_MAX_OPS 16

/* ------------------------------------------------------------ the rule */

/* Adds g's op nodes to *ops; false when g holds anything select may not run
 * on every example: a HOP, a foreign call, an op that is not elementwise. */
static bool
cheap_and_pure(const hop_graph *g, size_t *ops)
{
    for (const hop_node *n = g->first; n; n = n->next) {
        if (n->kind == HOP_NODE_PLACEHOLDER || n->kind == HOP_NODE_OUTPUT)
            continue;
        if (n->kind != HOP_NODE_CALL_OP || (n->flags & HOP_NODE_SIDE_EFFECTS))
            return false;
        const hop_op_info *info = hop_op_get(n->op);
        if (info == NULL)
            return false;
        switch (info->family) {
        case HOP_KF_UNARY:
        case HOP_KF_BINARY:
        case HOP_KF_WHERE:
            break;
        case HOP_KF_COPY: /* to, clone */
            break;
        default:
            return false;
        }
        (*ops)++;
    }
    return true;
}

/* ------------------------------------------------------------ helpers */

/* reshape(x, [B, 1 x rank]): a [B] mask lined up with a batched value. */
static hop_node *
line_up(hop_graph *g, hop_node *mask, const hop_expr *size, int rank)
{
    hop_arg items[HOP_MAX_RANK + 1];
    items[0] = hop_arg_sym(size);
    for (int d = 0; d < rank; d++)
        items[d + 1] = hop_arg_int(1);
    hop_arg args[] = {hop_arg_node(mask), hop_arg_list(items, (size_t)rank + 1)};
    return rank == 0 ? mask : hop_graph_emit(g, HOP_OP_reshape, args, 2);
}

static hop_node *
emit1(hop_graph *g, hop_op op, hop_arg a)
{
    return hop_graph_emit(g, op, &a, 1);
}

static hop_node *
emit2(hop_graph *g, hop_op op, hop_arg a, hop_arg b)
{
    hop_arg args[] = {a, b};
    return hop_graph_emit(g, op, args, 2);
}

static hop_node *
emit3(hop_graph *g, hop_op op, hop_arg a, hop_arg b, hop_arg c)
{
    hop_arg args[] = {a, b, c};
    return hop_graph_emit(g, op, args, 3);
}

#define N(x) hop_arg_node(x)

/* Whether output j's shapes may differ between the branches when every
 * example takes one branch (uniform_lead): a tensor output of one rank in
 * every branch.  Tracing already checked the ranks; the output must be a
 * node in each. */
static bool
differ_ok(const hop_graph *const *bodies, size_t nb, size_t j)
{
    for (size_t k = 0; k < nb; k++)
        if (bodies[k]->output->args[j].kind != HOP_ARG_NODE)
            return false;
    return true;
}

/* Every branch must give each output one shape: an example's result is one
 * row of a batched output.  Sizes that differ as expressions may still be
 * equal: the ShapeEnv decides (s0 == 3 from the hints, with a guard), and
 * only sizes it finds different, or cannot decide (unbacked), are refused. */
static hop_status
check_same_shapes(hop_shape_env *env, const hop_node *call, const char *what,
                  const hop_graph *const *bodies, size_t nb, bool uniform_ok, bool *differ)
{
    *differ = false;
    for (size_t j = 0; j < call->nouts; j++) {
        const hop_arg *a0 = &bodies[0]->output->args[j];
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "vmap: %s (%s) with a batched %s returns a SymInt (output %zu), "
                             "which would differ per example",
                             hop_node_target(call), call->name, what, j);
        for (size_t k = 1; k < nb; k++) {
            const hop_arg *ak = &bodies[k]->output->args[j];
            const hop_meta *m0 = &a0->u.node->meta->meta, *mk = &ak->u.node->meta->meta;
            bool same = a0->kind == HOP_ARG_NODE && ak->kind == HOP_ARG_NODE;
            for (int d = 0; same && d < m0->rank; d++)
                if (m0->sizes[d] != mk->sizes[d] &&
                    hop_shape_env_decide_eq(env, m0->sizes[d], mk->sizes[d], NULL, &same) !=
                        HOP_OK) {
                    hop_error_clear(); /* unbacked: refused below */
                    same = false;
                }
            if (!same && uniform_ok && differ_ok(bodies, nb, j)) {
                *differ = true;
                continue;
            }
            if (!same)
                return hop_error(HOP_UNSUPPORTED,
                                 "vmap: %s (%s) with a batched %s: output %zu has a different "
                                 "shape in branch %zu (%s) than in branch 0 (%s)",
                                 hop_node_target(call), call->name, what, j, k, bodies[k]->name,
                                 bodies[0]->name);
        }
    }
    return HOP_OK;
}

/* body batched over size (batched[i]: placeholder i is), installed in out
 * as `<body><suffix>`. */
static hop_status
branch_vmapped(hop_batch_ctx *cx, const hop_graph *body, const bool *batched, const hop_expr *size,
               const char *suffix, hop_graph **res)
{
    hop_graph *out = hop_batch_out(cx);
    size_t np = body->nplaceholders, no = body->output->nargs;
    int *in = hop_calloc(np + 1, sizeof *in), *od = hop_calloc(no + 1, sizeof *od);
    char name[256];
    snprintf(name, sizeof name, "%s%s", body->name, suffix);
    hop_graph *g = in && od ? hop_graph_new_subgraph(out, name) : NULL;
    hop_status st = g ? HOP_OK : in && od ? hop_error_code() : HOP_NOMEM;
    for (size_t i = 0; i < np && st == HOP_OK; i++)
        in[i] = batched[i] ? 0 : -1;
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        od[j] = 0; /* tensors only (check_same_shapes) */
    if (st == HOP_OK)
        st = hop_vmap_graph(body, in, size, od, g);
    if (st == HOP_OK)
        st = hop_graph_add_subgraph(out, g);
    hop_free(in);
    hop_free(od);
    if (st != HOP_OK) {
        hop_graph_free(g);
        return st;
    }
    *res = g;
    return HOP_OK;
}

/* wrap(g, *vals): the results, one per output of g, into res. */
static hop_status
run_wrapped(hop_graph *out, hop_graph *g, hop_arg *vals, size_t nvals, hop_node **res)
{
    size_t no = g->output->nargs;
    hop_value_info *outs = hop_calloc(no + 1, sizeof *outs);
    if (outs == NULL)
        return HOP_NOMEM;
    for (size_t j = 0; j < no; j++)
        outs[j] = *g->output->args[j].u.node->meta;
    hop_arg args[] = {hop_arg_graph(g), hop_arg_list(vals, nvals)};
    hop_node *c = hop_graph_call_hop(out, &hop_wrap_class, args, 2, outs, no);
    hop_free(outs);
    if (c == NULL)
        return hop_error_code();
    for (size_t j = 0; j < no; j++)
        if ((res[j] = hop_graph_getitem(out, c, j)) == NULL)
            return hop_error_code();
    return HOP_OK;
}

/* ------------------------------------------------------------ the slot */

/* The values call passes (mapped into cx's result) and which are batched. */
typedef struct passed {
    hop_arg *vals;
    bool *batched;
    size_t n;
} passed;

static hop_status
passed_values(hop_batch_ctx *cx, const hop_node *call, passed *p)
{
    p->n = hop_node_passed(call, NULL, 0);
    const hop_arg **items = hop_calloc(p->n + 1, sizeof *items);
    p->vals = hop_calloc(p->n + 1, sizeof *p->vals);
    p->batched = hop_calloc(p->n + 1, sizeof *p->batched);
    if (items == NULL || p->vals == NULL || p->batched == NULL) {
        hop_free(items);
        return HOP_NOMEM;
    }
    hop_node_passed(call, items, p->n);
    hop_status st = HOP_OK;
    for (size_t j = 0; j < p->n && st == HOP_OK; j++) {
        p->vals[j] = *items[j];
        if (items[j]->kind != HOP_ARG_NODE)
            continue;
        hop_node *v = hop_batch_value(cx, items[j]->u.node, &p->batched[j]);
        if (v == NULL)
            st = hop_error(HOP_MISUSE, "vmap: %s passes %s before it is defined", call->name,
                           items[j]->u.node->name);
        else
            p->vals[j] = hop_arg_node(v);
    }
    hop_free(items);
    return st;
}

static void
passed_free(passed *p)
{
    hop_free(p->vals);
    hop_free(p->batched);
}

/* The lead is not batched: the same HOP over the batched branches. */
static hop_status
same_hop(hop_batch_ctx *cx, const hop_node *call, const passed *p, const hop_arg *lead,
         hop_node *lead_value)
{
    hop_graph *out = hop_batch_out(cx);
    hop_arg *args = hop_calloc(call->nargs + 1, sizeof *args);
    hop_value_info *outs = hop_calloc(call->nouts + 1, sizeof *outs);
    hop_status st = args && outs ? HOP_OK : HOP_NOMEM;
    size_t used = 0;
    for (size_t i = 0; i < call->nargs && st == HOP_OK; i++) {
        const hop_arg *a = &call->args[i];
        if (a->kind == HOP_ARG_GRAPH) {
            hop_graph *b;
            if ((st = hop_batch_body(cx, a->u.graph, p->batched, &b)) == HOP_OK)
                args[i] = hop_arg_graph(b);
        } else if (a->kind == HOP_ARG_LIST) { /* the passed values, in order */
            args[i] = hop_arg_list(p->vals + used, a->u.list.n);
            used += a->u.list.n;
        } else if (a->kind == HOP_ARG_NODE) {
            hop_node *v =
                a == lead && lead_value ? lead_value : hop_batch_value(cx, a->u.node, NULL);
            st = v ? (args[i] = hop_arg_node(v), HOP_OK) : hop_error_code();
        } else {
            args[i] = *a;
        }
    }
    /* the call's outputs (cond's merged sizes) with the batch in front */
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        outs[j] = call->outs[j];
        if (outs[j].kind != HOP_VALUE_TENSOR)
            continue;
        outs[j] = hop_value_info_insert_dim(&outs[j], 0, hop_batch_size(cx));
    }
    hop_node *c = NULL;
    if (st == HOP_OK &&
        (c = hop_graph_call_hop(out, call->cls, args, call->nargs, outs, call->nouts)) == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = hop_graph_rename_node(out, c, call->name);
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        hop_node *g = hop_graph_getitem(out, c, j);
        st = g ? hop_batch_set(cx, call, j, g, call->outs[j].kind == HOP_VALUE_TENSOR)
               : hop_error_code();
    }
    hop_free(args);
    hop_free(outs);
    return st;
}

/*
 * The values branch k runs on under select: each float tensor through
 * mask_gradient with the branch's mask (batched: an unbatched one is
 * broadcast first), so that the examples that did not take the branch get
 * no gradient from it.  Without it, where's gradient gives such an example
 * a zero cotangent, which the branch's own rules turn into nan where its
 * derivative is infinite there (0 * inf: sqrt at 0, the value the other
 * branch exists to avoid); JAX's batched cond does the same with a select
 * and stop_gradient.  Only views are added: the forward costs nothing.
 */
static hop_status
masked_values(hop_batch_ctx *cx, const passed *p, hop_node *mask, hop_arg *vals, bool *batched)
{
    hop_graph *out = hop_batch_out(cx);
    for (size_t j = 0; j < p->n; j++) {
        vals[j] = p->vals[j];
        batched[j] = p->batched[j];
        if (vals[j].kind != HOP_ARG_NODE)
            continue;
        hop_node *v = vals[j].u.node;
        if (v->meta->kind != HOP_VALUE_TENSOR || !hop_dtype_is_inexact(v->meta->meta.dtype))
            continue;
        if (!batched[j] && (v = hop_batch_broadcast(cx, v)) == NULL)
            return hop_error_code();
        hop_node *m = line_up(out, mask, hop_batch_size(cx), v->meta->meta.rank - 1);
        if (m == NULL || (v = emit2(out, HOP_OP_mask_gradient, N(v), N(m))) == NULL)
            return hop_error_code();
        vals[j] = N(v);
        batched[j] = true;
    }
    return HOP_OK;
}

/* select: every branch on the whole batch, then a chain of where. */
static hop_status
select_batch(hop_batch_ctx *cx, const hop_node *call, const hop_graph *const *bodies, size_t nb,
             hop_node *const *masks, const passed *p)
{
    hop_graph *out = hop_batch_out(cx);
    size_t no = call->nouts;
    hop_node **res = hop_calloc(nb * no + 1, sizeof *res);
    hop_arg *vals = hop_calloc(p->n + 1, sizeof *vals);
    bool *batched = hop_calloc(p->n + 1, sizeof *batched);
    hop_status st = res && vals && batched ? HOP_OK : HOP_NOMEM;
    for (size_t k = 0; k < nb && st == HOP_OK; k++) {
        hop_graph *g;
        st = masked_values(cx, p, masks[k], vals, batched);
        if (st == HOP_OK)
            st = branch_vmapped(cx, bodies[k], batched, hop_batch_size(cx), "_vmap_select", &g);
        if (st == HOP_OK)
            st = run_wrapped(out, g, vals, p->n, res + k * no);
    }
    hop_free(vals);
    hop_free(batched);
    for (size_t j = 0; j < no && st == HOP_OK; j++) {
        hop_node *v = res[(nb - 1) * no + j];
        int rank = v->meta->meta.rank - 1;
        for (size_t k = nb - 1; k-- > 0;)
            v = emit3(out, HOP_OP_where, N(line_up(out, masks[k], hop_batch_size(cx), rank)),
                      N(res[k * no + j]), N(v));
        if (v == NULL)
            st = hop_error_code();
        else
            st = hop_batch_set(cx, call, j, v, true);
    }
    hop_free(res);
    return st;
}

/* compaction: each branch once on its examples, then back in order. */
static hop_status
compact_batch(hop_batch_ctx *cx, const hop_node *call, const hop_graph *const *bodies, size_t nb,
              hop_node *const *masks, const passed *p)
{
    hop_graph *out = hop_batch_out(cx);
    size_t no = call->nouts;
    hop_node **res = hop_calloc(nb * no + 1, sizeof *res);
    hop_arg *sub = hop_calloc(p->n + 1, sizeof *sub), *parts = hop_calloc(nb + 1, sizeof *parts);
    hop_status st = res && sub && parts ? HOP_OK : HOP_NOMEM;
    hop_node *pos = NULL, *offset = NULL;
    for (size_t k = 0; k < nb && st == HOP_OK; k++) {
        /* the examples of branch k, in order, and their positions among
         * the concatenated results: offset + (running count - 1) */
        hop_node *idx = emit1(out, HOP_OP_nonzero, N(masks[k]));
        idx = emit2(out, HOP_OP_reshape, N(idx), hop_arg_list((hop_arg[]){hop_arg_int(-1)}, 1));
        /* binds the subset's size (an unbacked symbol) where the plan runs */
        if (idx && emit2(out, HOP_OP_sym_size, N(idx), hop_arg_int(0)) == NULL)
            idx = NULL;
        if (k + 1 < nb || nb == 1) {
            hop_node *count = emit2(out, HOP_OP_to, N(masks[k]), hop_arg_dtype(HOP_I64));
            hop_node *run = emit2(out, HOP_OP_cumsum, N(count), hop_arg_int(0));
            hop_node *at = emit2(out, HOP_OP_sub, N(run), hop_arg_int(1));
            if (offset)
                at = emit2(out, HOP_OP_add, N(at), N(offset));
            pos = pos ? emit3(out, HOP_OP_where, N(masks[k]), N(at), N(pos)) : at;
            hop_node *total = emit3(out, HOP_OP_sum, N(count), hop_arg_none(), hop_arg_bool(false));
            offset = offset ? emit2(out, HOP_OP_add, N(offset), N(total)) : total;
        } else { /* the last branch's examples are the rest */
            hop_node *run = emit2(out, HOP_OP_cumsum,
                                  N(emit2(out, HOP_OP_to, N(masks[k]), hop_arg_dtype(HOP_I64))),
                                  hop_arg_int(0));
            hop_node *at = emit2(out, HOP_OP_add, N(emit2(out, HOP_OP_sub, N(run), hop_arg_int(1))),
                                 N(offset));
            pos = emit3(out, HOP_OP_where, N(masks[k]), N(at), N(pos));
        }
        if (idx == NULL || pos == NULL) {
            st = hop_error_code();
            break;
        }
        for (size_t i = 0; i < p->n && st == HOP_OK; i++) {
            sub[i] = p->vals[i];
            if (p->batched[i]) {
                hop_node *t = emit3(out, HOP_OP_take, p->vals[i], hop_arg_int(0), N(idx));
                st = t ? (sub[i] = N(t), HOP_OK) : hop_error_code();
            }
        }
        hop_graph *g;
        if (st == HOP_OK)
            st = branch_vmapped(cx, bodies[k], p->batched, idx->meta->meta.sizes[0],
                                "_vmap_compact", &g);
        if (st == HOP_OK)
            st = run_wrapped(out, g, sub, p->n, res + k * no);
    }
    for (size_t j = 0; j < no && st == HOP_OK; j++) {
        for (size_t k = 0; k < nb; k++)
            parts[k] = N(res[k * no + j]);
        hop_node *all = emit2(out, HOP_OP_cat, hop_arg_list(parts, nb), hop_arg_int(0));
        hop_node *v = emit3(out, HOP_OP_take, N(all), hop_arg_int(0), N(pos));
        st = v ? hop_batch_set(cx, call, j, v, true) : hop_error_code();
    }
    hop_free(res);
    hop_free(sub);
    hop_free(parts);
    return st;
}

/*
 * Branches whose outputs differ in shape under a batched predicate: an
 * example's result is a row of one batched output, so the examples can only
 * all take one branch, as only then could a loop over them stack their
 * results (np.stack refuses rows of different shapes; hop.numpy's lstsq
 * residuals, 1 or 0 values by the rank, are such an output).  The lead
 * becomes any(pred), checked when the plan runs to be all(pred) too
 * (fail_if of kind VMAP_BRANCHES), and the branches run batched, once.  A
 * bool lead only (cond's): a switch's index has no such one value (its
 * error stays).
 */
static hop_node *
uniform_lead(hop_batch_ctx *cx, hop_node *flat)
{
    hop_graph *out = hop_batch_out(cx);
    hop_node *any = emit3(out, HOP_OP_any, N(flat), hop_arg_none(), hop_arg_bool(false));
    hop_node *all =
        any ? emit3(out, HOP_OP_all, N(flat), hop_arg_none(), hop_arg_bool(false)) : NULL;
    hop_node *none = all ? hop_graph_emit(out, HOP_OP_logical_not, (hop_arg[]){N(all)}, 1) : NULL;
    hop_node *mixed = none ? emit2(out, HOP_OP_logical_and, N(any), N(none)) : NULL;
    return mixed
               ? emit3(out, HOP_OP_fail_if, N(any), N(mixed), hop_arg_int(HOP_CHECK_VMAP_BRANCHES))
               : NULL;
}

hop_status
hop_batch_branches(hop_batch_ctx *cx, const hop_node *call, const char *lead_name, const char *what,
                   hop_branch_masks_fn make_masks)
{
    hop_graph *out = hop_batch_out(cx);
    const hop_graph *bodies[64];
    size_t nb;
    const hop_arg *graphs = hop_node_graphs(call, &nb);
    if (nb > 64)
        return hop_error(HOP_UNSUPPORTED, "vmap: %s (%s) has more than 64 branches",
                         hop_node_target(call), call->name);
    for (size_t k = 0; k < nb; k++)
        bodies[k] = graphs[k].u.graph;
    passed p = {0};
    hop_status st = passed_values(cx, call, &p);
    bool lead_batched = false;
    hop_node *lead = NULL;
    const hop_arg *la = st == HOP_OK ? hop_node_param(call, lead_name) : NULL;
    if (st == HOP_OK && la == NULL)
        st = hop_error_code();
    if (st == HOP_OK && la->kind == HOP_ARG_NODE)
        lead = hop_batch_value(cx, la->u.node, &lead_batched);
    if (st != HOP_OK || !lead_batched) {
        if (st == HOP_OK)
            st = same_hop(cx, call, &p, NULL, NULL);
        passed_free(&p);
        return st;
    }
    bool differ = false,
         uniform_ok = lead->meta->kind == HOP_VALUE_TENSOR && lead->meta->meta.dtype == HOP_BOOL;
    if ((st = check_same_shapes(hop_batch_out(cx)->env, call, what, bodies, nb, uniform_ok,
                                &differ)) != HOP_OK) {
        passed_free(&p);
        return st;
    }
    /* the lead as [B], then one mask per branch (select's chain of where
     * reads all but the last; every branch's masks its operands'
     * gradients) */
    const hop_expr *size = hop_batch_size(cx);
    hop_node *masks[64] = {NULL};
    hop_node *flat =
        lead->meta->meta.rank == 1
            ? lead
            : emit2(out, HOP_OP_reshape, N(lead), hop_arg_list((hop_arg[]){hop_arg_sym(size)}, 1));
    if (differ) {
        hop_node *one = flat ? uniform_lead(cx, flat) : NULL;
        st = one ? same_hop(cx, call, &p, la, one) : hop_error_code();
        passed_free(&p);
        return st;
    }
    size_t ops = 0;
    bool cheap = true;
    for (size_t k = 0; k < nb && cheap; k++)
        cheap = cheap_and_pure(bodies[k], &ops);
    cheap = cheap && ops <= HOP_VMAP_SELECT_MAX_OPS;
    st = flat ? make_masks(out, flat, nb, masks) : hop_error_code();
    for (size_t k = 0; k < nb && st == HOP_OK; k++)
        if (masks[k] == NULL)
            st = hop_error_code();
    if (st == HOP_OK)
        st = cheap ? select_batch(cx, call, bodies, nb, masks, &p)
                   : compact_batch(cx, call, bodies, nb, masks, &p);
    passed_free(&p);
    return st;
}
