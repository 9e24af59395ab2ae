/*
 * hop/scan.c - scan(f, init, xs, length=, reverse=, dim=): carry = init; for
 * each slice x of the xs along dim (last to first with reverse),
 * (carry, y) = f(carry, x); returns the final carry and the ys stacked along
 * dim.  With no xs, length says how many steps.
 *
 * Tracing: f gets the carries (fresh) and one slice per xs, and returns the
 * carries as they entered followed by its ys (tensors); the node is
 * `scan(reverse, dim, length, scan_body_N, (init...), (xs...), (lifted...))`.
 *
 * Lowering: a counted loop; the carries double-buffered, each y written
 * straight into its row of the stacked output (no allocation, no copy per
 * step).  Eval: the same loop on concrete values with the same checks.
 */
#include "hop/autodiff.h"
#include "hop/batching.h"
#include "hop/eval.h"
#include "hop/lowering.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* dim counted from the end when negative; -1 when out of range. */
static int
norm_dim(int64_t dim, int rank)
{
    int64_t d = dim < 0 ? dim + rank : dim;
    return d >= 0 && d < rank ? (int)d : -1;
}

/* ---------------------------------------------------------------- tracing */

/* xs i's dim, or HOP_SHAPE: what tracing and verifying both refuse. */
static hop_status
xs_dim(size_t i, const char *name, const hop_value_info *x, int64_t dim, int *d)
{
    *d = x->kind == HOP_VALUE_TENSOR ? norm_dim(dim, x->meta.rank) : -1;
    if (*d >= 0)
        return HOP_OK;
    char what[128];
    hop_value_info_print(x, what, sizeof what);
    return hop_error(HOP_SHAPE, "scan: xs %zu (%s) is %s, which has no dim %" PRId64, i, name, what,
                     dim);
}

static hop_status
no_length(void)
{
    return hop_error(HOP_INVALID, "scan: with no xs, length must be given (an int >= 0)");
}

static hop_status
scan_check_operands(hop_call *c)
{
    size_t nxs;
    hop_node *const *xs = hop_call_group(c, "xs", &nxs);
    int64_t dim = hop_call_param(c, "dim")->u.i, length = hop_call_param(c, "length")->u.i;
    hop_status st = hop_prim_hop_base()->check_operands(c);
    if (st != HOP_OK)
        return st;
    if (nxs == 0 && length < 0)
        return no_length();
    hop_shape_env *env = hop_output_graph_env(c->og);
    const hop_expr *first = NULL;
    for (size_t i = 0; i < nxs; i++) {
        const hop_value_info *x = xs[i]->meta;
        int d;
        if (xs_dim(i, xs[i]->name, x, dim, &d) != HOP_OK)
            return HOP_SHAPE;
        const hop_expr *n = x->meta.sizes[d];
        bool eq = true;
        if (first == NULL && length >= 0)
            st = hop_shape_env_decide_eq(env, n, hop_sym_const(env, length), "scan", &eq);
        else if (first != NULL)
            st = hop_shape_env_decide_eq(env, first, n, "scan", &eq);
        if (st != HOP_OK)
            return st;
        if (!eq) {
            char a[64], b[64];
            hop_expr_print(n, a, sizeof a);
            if (first)
                hop_expr_print(first, b, sizeof b);
            else
                snprintf(b, sizeof b, "%" PRId64, length);
            return hop_error(HOP_SHAPE,
                             "scan: xs %zu (%s) has %s steps along dim %" PRId64 " but %s %s", i,
                             xs[i]->name, a, dim, first ? "xs 0 has" : "length is", b);
        }
        if (first == NULL)
            first = n;
    }
    return HOP_OK;
}

/* The xs' inputs are slices: dim removed. */
static hop_status
scan_body_inputs(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->body_inputs(c);
    size_t ninit, nxs;
    hop_call_group(c, "init", &ninit);
    hop_call_group(c, "xs", &nxs);
    int64_t dim = hop_call_param(c, "dim")->u.i;
    for (size_t i = ninit; i < ninit + nxs && st == HOP_OK; i++) {
        hop_meta *m = &c->input_meta[i].meta;
        int d = norm_dim(dim, m->rank);
        memmove(m->sizes + d, m->sizes + d + 1, (size_t)(m->rank - d - 1) * sizeof *m->sizes);
        m->rank--;
    }
    return st;
}

static hop_status
scan_check_outputs(hop_call *c)
{
    size_t ninit;
    hop_call_group(c, "init", &ninit);
    hop_status st = hop_call_check_carries(c, 0, 0, ninit, "f");
    const hop_values *r = &c->results[0];
    for (size_t j = ninit; j < r->n && st == HOP_OK; j++) {
        const hop_value_info *y = r->items[j]->meta;
        char what[128];
        hop_value_info_print(y, what, sizeof what);
        if (y->kind != HOP_VALUE_TENSOR)
            st =
                hop_error(HOP_TRACE, "scan: y %zu of f is %s; ys must be tensors", j - ninit, what);
        else if (y->meta.rank >= HOP_MAX_RANK)
            st = hop_error(HOP_SHAPE, "scan: y %zu of f is %s; stacking it would exceed rank %d",
                           j - ninit, what, HOP_MAX_RANK);
    }
    return st;
}

/* The number of steps: the xs' size along dim, or length. */
static const hop_expr *
steps(hop_call *c)
{
    size_t nxs;
    hop_node *const *xs = hop_call_group(c, "xs", &nxs);
    int64_t dim = hop_call_param(c, "dim")->u.i;
    if (nxs == 0)
        return hop_sym_const(hop_output_graph_env(c->og), hop_call_param(c, "length")->u.i);
    return xs[0]->meta->meta.sizes[norm_dim(dim, xs[0]->meta->meta.rank)];
}

static hop_status
scan_output_meta(hop_call *c)
{
    size_t ninit;
    hop_call_group(c, "init", &ninit);
    const hop_values *r = &c->results[0];
    hop_status st = hop_call_carry_outputs(c, 0, ninit, r->n - ninit);
    const hop_expr *n = steps(c);
    int64_t dim = hop_call_param(c, "dim")->u.i;
    for (size_t j = ninit; j < r->n && st == HOP_OK; j++) {
        hop_value_info y = *r->items[j]->meta;
        int d = norm_dim(dim, y.meta.rank + 1);
        if (d < 0) {
            char what[128];
            hop_value_info_print(&y, what, sizeof what);
            return hop_error(HOP_SHAPE,
                             "scan: y %zu of f is %s; it cannot be stacked along dim "
                             "%" PRId64,
                             j - ninit, what, dim);
        }
        memmove(y.meta.sizes + d + 1, y.meta.sizes + d,
                (size_t)(y.meta.rank - d) * sizeof *y.meta.sizes);
        y.meta.sizes[d] = n;
        y.meta.rank++;
        c->outs[c->nouts++] = y;
    }
    return st;
}

/* ------------------------------------------------------------- verifying */

typedef struct scan_shape {
    int64_t dim;
    size_t ninit, nxs;
} scan_shape;

/* The body gets the carries, then one slice of each xs (dim removed). */
static bool
scan_input(void *ud, const hop_node *call, size_t body, size_t j, hop_value_info *want)
{
    const scan_shape *s = ud;
    (void)call, (void)body;
    if (j >= s->ninit && j < s->ninit + s->nxs)
        *want = hop_value_info_drop_dim(want, norm_dim(s->dim, want->meta.rank));
    return true;
}

/* It returns the carries, then one y per stacked output (dim removed). */
static bool
scan_output(void *ud, const hop_node *call, size_t body, size_t j, hop_value_info *want)
{
    const scan_shape *s = ud;
    (void)call, (void)body;
    if (j >= s->ninit)
        *want = hop_value_info_drop_dim(want, norm_dim(s->dim, want->meta.rank));
    return true;
}

/* Whether two step counts may be equal: the same, or not two different
 * constants. */
static bool
same_steps(const hop_expr *a, const hop_expr *b)
{
    int64_t x, y;
    return a == b || !hop_expr_const_value(a, &x) || !hop_expr_const_value(b, &y) || x == y;
}

/* What tracing checks of the operands (every xs has dim, the same number of
 * steps along it, length when there are none), the carries leaving as they
 * entered, the ys stacked along dim over those steps, and the body taking
 * slices and returning the carries and one y per stacked output. */
static hop_status
scan_verify(const hop_node *call)
{
    scan_shape s = {.dim = hop_node_param(call, "dim")->u.i};
    int64_t length = hop_node_param(call, "length")->u.i;
    const hop_arg *xs = hop_node_group(call, "xs", &s.nxs);
    hop_node_group(call, "init", &s.ninit);
    if (s.nxs == 0 && length < 0)
        return hop_verify_error(call, no_length());
    const hop_expr *steps = NULL;
    for (size_t i = 0; i < s.nxs; i++) {
        int d;
        if (xs[i].kind != HOP_ARG_NODE)
            return hop_verify_fail(call, "scan: xs %zu is an int, not a tensor", i);
        const hop_value_info *x = xs[i].u.node->meta;
        if (xs_dim(i, xs[i].u.node->name, x, s.dim, &d) != HOP_OK)
            return hop_verify_error(call, HOP_SHAPE);
        int64_t n;
        if ((steps && !same_steps(steps, x->meta.sizes[d])) ||
            (length >= 0 && hop_expr_const_value(x->meta.sizes[d], &n) && n != length))
            return hop_verify_fail(call,
                                   "scan: xs %zu has another number of steps along dim "
                                   "%" PRId64 " than %s",
                                   i, s.dim, steps ? "xs 0" : "length says");
        steps = steps ? steps : x->meta.sizes[d];
    }
    hop_status st = hop_verify_carries(call, "init", true);
    for (size_t j = s.ninit; j < call->nouts && st == HOP_OK; j++) {
        const hop_value_info *y = &call->outs[j];
        int d = y->kind == HOP_VALUE_TENSOR ? norm_dim(s.dim, y->meta.rank) : -1;
        int64_t n;
        if (d < 0 || (steps && !same_steps(steps, y->meta.sizes[d])) ||
            (!steps && hop_expr_const_value(y->meta.sizes[d], &n) && n != length)) {
            char what[128];
            hop_value_info_print(y, what, sizeof what);
            st = hop_verify_fail(
                call, "scan: output %zu is %s, not ys stacked along dim %" PRId64 " over the steps",
                j, what, s.dim);
        }
    }
    return st == HOP_OK ? hop_verify_bodies(call, scan_input, scan_output, &s) : st;
}

/* --------------------------------------------------------------- lowering */

static hop_status
scan_lower(hop_lower_ctx *cx, const hop_node *call)
{
    const hop_graph *body = hop_node_body(call, "f");
    size_t n, ninit, nxs, no = call->nouts;
    const hop_arg *xs = hop_node_group(call, "xs", &nxs);
    hop_node_group(call, "init", &ninit);
    bool reverse = hop_node_param(call, "reverse")->u.b;
    int64_t dim = hop_node_param(call, "dim")->u.i;
    hop_pval *passed = hop_lower_passed(cx, call, &n), *in = hop_lower_pvals(cx, n);
    hop_pval *dests = hop_lower_pvals(cx, no), *got = hop_lower_pvals(cx, no);
    hop_pval *ys = hop_lower_dests(cx);
    hop_loop_carry lc;
    if (body == NULL || xs == NULL || passed == NULL || in == NULL || dests == NULL ||
        got == NULL || ys == NULL ||
        hop_lower_carry_begin(cx, call->outs, passed, ninit, &lc) != HOP_OK)
        return hop_error_code();
    hop_status st = HOP_OK;
    for (size_t j = ninit; j < no && st == HOP_OK; j++)
        if (ys[j].kind == HOP_PVAL_NONE)
            st = hop_lower_tensor(cx, &call->outs[j], true, &ys[j]);
    /* count: the size along dim of the stacked outputs (any of them). */
    hop_pval count, k, idx, last;
    const hop_meta *m0 = nxs ? &xs[0].u.node->meta->meta : NULL;
    hop_arg size = m0 ? hop_arg_sym(m0->sizes[norm_dim(dim, m0->rank)])
                      : hop_arg_int(hop_node_param(call, "length")->u.i);
    if (st == HOP_OK)
        st = hop_lower_arg(cx, &size, &count);
    if (st == HOP_OK && reverse)
        st = count.kind == HOP_PVAL_CONST
                 ? (last = (hop_pval){HOP_PVAL_CONST, -1, count.value - 1}, HOP_OK)
                 : hop_lower_int(cx, HOP_INT_SUB, count, (hop_pval){HOP_PVAL_CONST, -1, 1}, &last);
    if (st == HOP_OK)
        st = hop_lower_loop_begin(cx, count, &k);
    if (st == HOP_OK)
        st = reverse ? hop_lower_int(cx, HOP_INT_SUB, last, k, &idx) : (idx = k, HOP_OK);
    for (size_t i = 0; i < n && st == HOP_OK; i++) {
        if (i < ninit)
            in[i] = lc.cur[i];
        else if (i < ninit + nxs)
            st = hop_lower_select_dim(
                cx, passed[i], norm_dim(dim, xs[i - ninit].u.node->meta->meta.rank), idx, &in[i]);
        else
            in[i] = passed[i];
    }
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        st = j < ninit ? (dests[j] = lc.next[j], HOP_OK)
                       : hop_lower_select_dim(cx, ys[j], norm_dim(dim, call->outs[j].meta.rank),
                                              idx, &dests[j]);
    if (st == HOP_OK)
        st = hop_lower_inline(cx, body, in, n, dests, got, no);
    for (size_t j = 0; j < no && st == HOP_OK; j++) {
        if (j < ninit)
            lc.got[j] = got[j];
        else if (got[j].id != dests[j].id)
            st = hop_lower_copy(cx, dests[j], got[j]);
    }
    if (st == HOP_OK)
        st = hop_lower_carry_next(cx, &lc);
    if (st == HOP_OK)
        st = hop_lower_loop_end(cx);
    if (st == HOP_OK)
        st = hop_lower_carry_end(cx, &lc);
    for (size_t j = 0; j < ninit; j++)
        ys[j] = lc.out[j];
    return st == HOP_OK ? hop_lower_results(cx, ys, no) : st;
}

/* ------------------------------------------------------------------- eval */

static hop_status
scan_eval(hop_eval_ctx *ex)
{
    size_t n, ninit, nxs;
    const hop_rt_value *passed = hop_eval_passed(ex, &n);
    const hop_rt_value *xs = hop_eval_group(ex, "xs", &nxs);
    hop_eval_group(ex, "init", &ninit);
    hop_rt_arg reverse, dim_arg, length;
    hop_status st = hop_eval_param(ex, "reverse", &reverse);
    if (st == HOP_OK)
        st = hop_eval_param(ex, "dim", &dim_arg);
    if (st == HOP_OK)
        st = hop_eval_param(ex, "length", &length);
    if (st != HOP_OK)
        return st;
    int64_t dim = dim_arg.u.i, steps_n = length.u.i;
    for (size_t i = 0; i < nxs; i++) {
        int d = xs[i].kind == HOP_VALUE_TENSOR ? norm_dim(dim, xs[i].tensor->rank) : -1;
        char what[96];
        hop_eval_describe(&xs[i], what, sizeof what);
        if (d < 0)
            return hop_error(HOP_SHAPE, "scan: xs %zu is %s, which has no dim %" PRId64, i, what,
                             dim);
        int64_t len = xs[i].tensor->sizes[d];
        if (i == 0 && steps_n < 0)
            steps_n = len;
        else if (len != steps_n)
            return hop_error(HOP_SHAPE,
                             "scan: xs %zu has %" PRId64 " steps along dim %" PRId64
                             " but %s %" PRId64,
                             i, len, dim, i ? "xs 0 has" : "length is", steps_n);
    }
    if (steps_n < 0)
        return hop_error(HOP_INVALID, "scan: with no xs, length must be given (an int >= 0)");
    hop_rt_value *in = hop_calloc(n + 1, sizeof *in);
    hop_rt_values carry = {NULL, 0, 0}, ys = {NULL, 0, 0}; /* ys: step-major */
    size_t ny = 0;
    if (in == NULL)
        return hop_error_code();
    memcpy(in, passed, n * sizeof *in);
    for (size_t j = 0; j < ninit && st == HOP_OK; j++)
        st = hop_rt_values_push(
            &carry,
            (hop_rt_value){passed[j].kind, hop_tensor_retain(passed[j].tensor), passed[j].i});
    for (int64_t s = 0; s < steps_n && st == HOP_OK; s++) {
        int64_t idx = reverse.u.b ? steps_n - 1 - s : s;
        hop_rt_values out = {NULL, 0, 0}, rows = {NULL, 0, 0};
        for (size_t i = 0; i < nxs && st == HOP_OK; i++) {
            hop_rt_arg a[] = {hop_rt_tensor(xs[i].tensor),
                              hop_rt_int(norm_dim(dim, xs[i].tensor->rank)), hop_rt_int(idx)};
            hop_rt_value v;
            if ((st = hop_eager(HOP_OP_select, a, 3, &v)) == HOP_OK)
                st = hop_rt_values_push(&rows, v);
        }
        for (size_t i = 0; i < n && st == HOP_OK; i++)
            in[i] = i < ninit         ? carry.items[i]
                    : i < ninit + nxs ? rows.items[i - ninit]
                                      : passed[i];
        if (st == HOP_OK)
            st = hop_eval_body(ex, "f", in, n, &out);
        if (st == HOP_OK)
            st = hop_eval_check_carries(ex, &out, passed, ninit, "f");
        if (st == HOP_OK && s == 0)
            ny = out.n - ninit;
        /* every step gives ys of the same kinds as the first */
        for (size_t j = 0; j < out.n - ninit && st == HOP_OK; j++) {
            const hop_rt_value *y = &out.items[ninit + j], *y0 = s ? &ys.items[j] : y;
            char a[96], b[96];
            hop_eval_describe(y0, a, sizeof a);
            hop_eval_describe(y, b, sizeof b);
            if (out.n - ninit != ny || y->kind != HOP_VALUE_TENSOR || !hop_eval_same_kind(y0, y))
                st = hop_error(HOP_TRACE,
                               "scan: y %zu of f is %s at step 0 but %s at step %" PRId64
                               "; every step must give the same ys",
                               j, a, b, s);
        }
        hop_rt_values_clear(&rows);
        if (st != HOP_OK) {
            hop_rt_values_clear(&out);
            break;
        }
        for (size_t j = 0; j < ninit; j++) {
            hop_tensor_release(carry.items[j].tensor);
            carry.items[j] = out.items[j];
        }
        for (size_t j = ninit; j < out.n && st == HOP_OK; j++) {
            st = hop_rt_values_push(&ys, out.items[j]);
            out.items[j].tensor = NULL;
        }
        out.n = 0;
        hop_rt_values_clear(&out);
    }
    hop_free(in);
    /* No step ran: the ys are empty, of the shapes the trace found (an eager
     * call has no trace to ask). */
    size_t nouts = hop_eval_nouts(ex);
    if (st == HOP_OK && steps_n == 0 && nouts == SIZE_MAX)
        st = hop_error(HOP_UNSUPPORTED,
                       "scan: a scan of 0 steps run eagerly cannot know its ys' shapes (f never "
                       "runs); trace it (hop.trace) to get them");
    for (size_t j = ninit; st == HOP_OK && steps_n == 0 && j < nouts; j++) {
        hop_rt_value v = {HOP_VALUE_TENSOR, NULL, 0};
        if ((st = hop_eval_output_zeros(ex, j, &v.tensor)) == HOP_OK)
            st = hop_rt_values_push(&carry, v);
    }
    /* stack each y along dim */
    hop_rt_arg *items = st == HOP_OK ? hop_calloc((size_t)steps_n + 1, sizeof *items) : NULL;
    if (st == HOP_OK && items == NULL)
        st = hop_error_code();
    for (size_t j = 0; j < ny && st == HOP_OK; j++) {
        for (int64_t s = 0; s < steps_n; s++) {
            int64_t at = reverse.u.b ? steps_n - 1 - s : s; /* ys[at] came at step s */
            items[at] = hop_rt_tensor(ys.items[(size_t)s * ny + j].tensor);
        }
        hop_rt_arg a[] = {hop_rt_list(items, (size_t)steps_n),
                          hop_rt_int(norm_dim(dim, ys.items[j].tensor->rank + 1))};
        hop_rt_value v;
        if ((st = hop_eager(HOP_OP_stack, a, 2, &v)) == HOP_OK)
            st = hop_rt_values_push(&carry, v);
    }
    hop_free(items);
    hop_rt_values_clear(&ys);
    if (st == HOP_OK)
        st = hop_eval_results(ex, &carry);
    hop_rt_values_clear(&carry);
    return st;
}

/* --------------------------------------------------------------- autodiff */

/* row stacked along dim (as scan stacks a y) into n steps. */
static hop_value_info
stacked_at(const hop_value_info *row, const hop_expr *n, int64_t dim)
{
    hop_value_info v = *row;
    int d = norm_dim(dim, v.meta.rank + 1);
    memmove(v.meta.sizes + d + 1, v.meta.sizes + d, (size_t)(v.meta.rank - d) * sizeof(void *));
    v.meta.sizes[d] = n;
    v.meta.rank++;
    return v;
}

static bool
float_value(const hop_value_info *v)
{
    return v->kind == HOP_VALUE_TENSOR && hop_dtype_is_float(v->meta.dtype);
}

/* Installs body in g, or frees it; NULL on error. */
static hop_graph *
install(hop_graph *g, hop_graph *body, hop_status st)
{
    if (st == HOP_OK && hop_graph_add_subgraph(g, body) == HOP_OK)
        return body;
    hop_graph_free(body);
    return NULL;
}

hop_node *
hop_graph_call_scan(hop_graph *g, bool reverse, int64_t dim, int64_t length, hop_graph *body,
                    hop_node *const *init, size_t ni, hop_node *const *xs, size_t nx,
                    hop_node *const *lifted, size_t nl, const hop_value_info *outs, size_t nouts)
{
    hop_arg *items = hop_calloc(ni + nx + nl + 1, sizeof *items);
    if (items == NULL)
        return NULL;
    for (size_t i = 0; i < ni; i++)
        items[i] = hop_arg_node(init[i]);
    for (size_t i = 0; i < nx; i++)
        items[ni + i] = hop_arg_node(xs[i]);
    for (size_t i = 0; i < nl; i++)
        items[ni + nx + i] = hop_arg_node(lifted[i]);
    hop_arg args[] = {hop_arg_bool(reverse),
                      hop_arg_int(dim),
                      hop_arg_int(length),
                      hop_arg_graph(body),
                      hop_arg_list(items, ni),
                      hop_arg_list(items + ni, nx),
                      hop_arg_list(items + ni + nx, nl)};
    hop_node *r = hop_graph_call_hop(g, &hop_scan_class, args, 7, outs, nouts);
    hop_free(items);
    return r;
}

/* The call's parts. */
typedef struct scan_parts {
    bool reverse;
    int64_t dim, length;
    const hop_arg *init, *xs, *lifted;
    size_t nc, nx, nl, ny;
    const hop_graph *f;
    const hop_expr *n; /* the number of steps */
} scan_parts;

static void
scan_parts_of(const hop_node *call, scan_parts *p)
{
    p->reverse = hop_node_param(call, "reverse")->u.b;
    p->dim = hop_node_param(call, "dim")->u.i;
    p->length = hop_node_param(call, "length")->u.i;
    p->init = hop_node_group(call, "init", &p->nc);
    p->xs = hop_node_group(call, "xs", &p->nx);
    p->lifted = hop_node_lifted(call, &p->nl);
    p->f = hop_node_body(call, "f");
    p->ny = call->nouts - p->nc;
    if (p->nx) {
        const hop_meta *m = &p->xs[0].u.node->meta->meta;
        p->n = m->sizes[norm_dim(p->dim, m->rank)];
    } else
        p->n = hop_sym_const(p->f->env, p->length);
}

/*
 * Reverse: the carries each step starts from are stacked by an augmented
 * forward scan (the body also returns its input carries as ys); then a scan
 * the other way carries the carries' cotangents and the sum of the lifted
 * values' gradients, over (xs, the stacked carries, the ys' cotangents), its
 * body the body's backward graph inlined: one step's vjp.  Its ys are the
 * xs' gradients, its final carries the init's and the lifted values'.
 */
static hop_status
scan_vjp(hop_vjp_ctx *cx, const hop_node *call)
{
    scan_parts p;
    scan_parts_of(call, &p);
    hop_graph *g = hop_vjp_out(cx);
    const hop_graph *f = p.f;
    size_t nph = f->nplaceholders, nout = p.nc + p.ny;
    for (size_t j = 0; j < p.nc; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "autodiff: scan %s carries a SymInt (carry %zu); its vjp needs "
                             "tensor carries",
                             call->name, j);
    hop_status st = HOP_OK;
    bool *wrt = hop_calloc(nph + 1, sizeof *wrt);
    /* nodes: fa's inputs and outputs, the primals, gb's inputs, bwd's inputs
     * and outputs, the backward scan's operands: 10 (nph + nout) bound them */
    hop_node **v = hop_calloc(10 * (nph + nout) + 8, sizeof *v);
    hop_value_info *outs = hop_calloc(2 * (nph + nout) + 2, sizeof *outs);
    hop_graph *bwd = NULL, *fa = NULL, *gb = NULL;
    if (wrt == NULL || v == NULL || outs == NULL)
        st = HOP_NOMEM;
    size_t nwl = 0, nfc = 0, nfy = 0, nfx = 0;
    for (size_t i = 0; i < nph && st == HOP_OK; i++) {
        wrt[i] = float_value(hop_graph_placeholder_at(f, i)->meta);
        nwl += wrt[i] && i >= p.nc + p.nx;
        nfc += wrt[i] && i < p.nc;
        nfx += wrt[i] && i >= p.nc && i < p.nc + p.nx;
    }
    for (size_t j = p.nc; j < nout; j++)
        nfy += float_value(&call->outs[j]);

    /* 1. one step's backward: (c, x, L, cts of float outputs) -> (outs, grads) */
    char base[256];
    snprintf(base, sizeof base, "%s_step_bwd", f->name);
    if (st == HOP_OK && (bwd = hop_graph_new(g->env, base)) == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = hop_vjp_graph(f, wrt, NULL, bwd);

    /* 2. the augmented forward: f's outputs, then its input carries */
    snprintf(base, sizeof base, "%s_fwd", f->name);
    if (st == HOP_OK && (fa = hop_graph_new_subgraph(g, base)) == NULL)
        st = hop_error_code();
    for (size_t i = 0; i < nph && st == HOP_OK; i++) {
        const hop_node *ph = hop_graph_placeholder_at(f, i);
        if ((v[i] = hop_graph_placeholder(fa, ph->name, ph->meta)) == NULL)
            st = hop_error_code();
    }
    hop_node **fo = v + nph;
    if (st == HOP_OK)
        st = hop_graph_inline(fa, f, v, fo);
    if (st == HOP_OK) {
        hop_arg *o = hop_calloc(nout + p.nc + 1, sizeof *o);
        if (o == NULL)
            st = HOP_NOMEM;
        for (size_t j = 0; o && j < nout + p.nc; j++)
            o[j] = hop_arg_node(j < nout ? fo[j] : v[j - nout]);
        if (o && hop_graph_output(fa, o, nout + p.nc) == NULL)
            st = hop_error_code();
        hop_free(o);
    }
    if (st == HOP_OK || fa)
        fa = install(g, fa, st);
    if (st == HOP_OK && fa == NULL)
        st = hop_error_code();
    hop_node **pin = v + nph + nout + p.nc; /* primals: init, xs, lifted */
    for (size_t i = 0; i < p.nc + p.nx + p.nl && st == HOP_OK; i++) {
        const hop_arg *a = i < p.nc          ? &p.init[i]
                           : i < p.nc + p.nx ? &p.xs[i - p.nc]
                                             : &p.lifted[i - p.nc - p.nx];
        pin[i] = hop_vjp_primal(cx, a->u.node);
    }
    hop_node *aug = NULL;
    if (st == HOP_OK) {
        memcpy(outs, call->outs, nout * sizeof *outs);
        for (size_t j = 0; j < p.nc; j++)
            outs[nout + j] = stacked_at(&call->outs[j], p.n, p.dim);
        aug = hop_graph_call_scan(g, p.reverse, p.dim, p.length, fa, pin, p.nc, pin + p.nc, p.nx,
                                  pin + p.nc + p.nx, p.nl, outs, nout + p.nc);
        if (aug == NULL)
            st = hop_error_code();
    }

    /* 3. the backward body: carries (ct of float carries, lifted grad
     * sums), xs (x, c, ct of float ys), then the lifted values */
    snprintf(base, sizeof base, "%s_bwd", f->name);
    if (st == HOP_OK && (gb = hop_graph_new_subgraph(g, base)) == NULL)
        st = hop_error_code();
    hop_node **gp = pin + p.nc + p.nx + p.nl; /* gb's placeholders */
    size_t k = 0;
    char name[256];
    for (size_t j = 0; j < p.nc && st == HOP_OK; j++)
        if (wrt[j]) {
            const hop_node *ph = hop_graph_placeholder_at(f, j);
            snprintf(name, sizeof name, "%s_ct", ph->name);
            if ((gp[k++] = hop_graph_placeholder(gb, name, ph->meta)) == NULL)
                st = hop_error_code();
        }
    for (size_t l = p.nc + p.nx; l < nph && st == HOP_OK; l++)
        if (wrt[l]) {
            const hop_node *ph = hop_graph_placeholder_at(f, l);
            snprintf(name, sizeof name, "%s_grad", ph->name);
            if ((gp[k++] = hop_graph_placeholder(gb, name, ph->meta)) == NULL)
                st = hop_error_code();
        }
    size_t xbase = k;
    for (size_t i = 0; i < p.nx + p.nc && st == HOP_OK; i++) {
        const hop_node *ph = hop_graph_placeholder_at(f, i < p.nx ? p.nc + i : i - p.nx);
        if ((gp[k++] = hop_graph_placeholder(gb, ph->name, ph->meta)) == NULL)
            st = hop_error_code();
    }
    for (size_t j = p.nc; j < nout && st == HOP_OK; j++)
        if (float_value(&call->outs[j])) {
            const hop_arg *o = &f->output->args[j];
            snprintf(name, sizeof name, "%s_ct", o->kind == HOP_ARG_NODE ? o->u.node->name : "y");
            if ((gp[k++] = hop_graph_placeholder(gb, name, o->u.node->meta)) == NULL)
                st = hop_error_code();
        }
    size_t lbase = k;
    for (size_t l = 0; l < p.nl && st == HOP_OK; l++) {
        const hop_node *ph = hop_graph_placeholder_at(f, p.nc + p.nx + l);
        if ((gp[k++] = hop_graph_placeholder(gb, ph->name, ph->meta)) == NULL)
            st = hop_error_code();
    }
    /* bwd's inputs: c, x, L, then the cotangents of f's float outputs */
    hop_node **bi = gp + k, **bo = bi + nph + nout;
    size_t fc = 0, fy = 0;
    for (size_t i = 0; i < nph && st == HOP_OK; i++)
        bi[i] = i < p.nc          ? gp[xbase + p.nx + i]
                : i < p.nc + p.nx ? gp[xbase + i - p.nc]
                                  : gp[lbase + i - p.nc - p.nx];
    size_t nb = nph;
    for (size_t j = 0; j < nout && st == HOP_OK; j++) {
        if (!float_value(&call->outs[j]))
            continue;
        bi[nb++] = j < p.nc ? gp[fc++] : gp[xbase + p.nx + p.nc + fy++];
    }
    if (st == HOP_OK)
        st = hop_graph_inline(gb, bwd, bi, bo);
    if (st == HOP_OK) {
        /* bo: f's outputs, then one gradient per wrt input in order */
        hop_arg *o = hop_calloc(nfc + nwl + nfx + 1, sizeof *o);
        size_t m = 0, gi = nout;
        for (size_t i = 0; o && i < nph && st == HOP_OK; i++) {
            if (!wrt[i])
                continue;
            hop_node *d = bo[gi++];
            if (i < p.nc)
                o[m++] = hop_arg_node(d);
            else if (i >= p.nc + p.nx) {
                /* the running sum of a lifted value's gradient */
                size_t slot = nfc;
                for (size_t l = p.nc + p.nx; l < i; l++)
                    slot += wrt[l];
                hop_arg a[] = {hop_arg_node(gp[slot]), hop_arg_node(d)};
                hop_node *s = hop_graph_call_op(gb, HOP_OP_add, a, 2);
                if (s == NULL)
                    st = hop_error_code();
                else
                    o[slot] = hop_arg_node(s);
                m++;
            }
        }
        for (size_t i = p.nc, gj = nout; o && i < p.nc + p.nx && st == HOP_OK; i++) {
            gj = nout;
            for (size_t q = 0; q < i; q++)
                gj += wrt[q];
            if (wrt[i])
                o[m++] = hop_arg_node(bo[gj]);
        }
        if (o == NULL)
            st = HOP_NOMEM;
        else if (st == HOP_OK && hop_graph_output(gb, o, m) == NULL)
            st = hop_error_code();
        hop_free(o);
    }
    if (st == HOP_OK || gb)
        gb = install(g, gb, st);
    if (st == HOP_OK && gb == NULL)
        st = hop_error_code();

    /* 4. the backward scan, the other way */
    hop_node **bin = bo + nph + nout, **bxs = bin + nfc + nwl;
    size_t ni = 0, nbx = 0;
    for (size_t j = 0; j < p.nc && st == HOP_OK; j++)
        if (wrt[j]) {
            hop_node *ct = hop_vjp_ct(cx, call, j);
            bin[ni++] = ct ? ct : hop_vjp_zeros(cx, &call->outs[j]);
            if (bin[ni - 1] == NULL)
                st = hop_error_code();
        }
    for (size_t l = p.nc + p.nx; l < nph && st == HOP_OK; l++)
        if (wrt[l] && (bin[ni++] = hop_vjp_zeros(cx, hop_graph_placeholder_at(f, l)->meta)) == NULL)
            st = hop_error_code();
    for (size_t i = 0; i < p.nx && st == HOP_OK; i++)
        bxs[nbx++] = pin[p.nc + i];
    for (size_t j = 0; j < p.nc && st == HOP_OK; j++)
        if ((bxs[nbx++] = hop_graph_getitem(g, aug, nout + j)) == NULL)
            st = hop_error_code();
    for (size_t j = p.nc; j < nout && st == HOP_OK; j++)
        if (float_value(&call->outs[j])) {
            hop_node *ct = hop_vjp_ct(cx, call, j);
            bxs[nbx++] = ct ? ct : hop_vjp_zeros(cx, &call->outs[j]);
            if (bxs[nbx - 1] == NULL)
                st = hop_error_code();
        }
    hop_node *back = NULL;
    size_t no = 0;
    if (st == HOP_OK) {
        for (size_t i = 0; i < ni; i++)
            outs[no++] = *bin[i]->meta;
        for (size_t i = 0; i < p.nx; i++)
            if (wrt[p.nc + i])
                outs[no++] = *p.xs[i].u.node->meta;
        back = hop_graph_call_scan(g, !p.reverse, p.dim, p.length, gb, bin, ni, bxs, nbx,
                                   pin + p.nc + p.nx, p.nl, outs, no);
        if (back == NULL)
            st = hop_error_code();
    }
    /* 5. the gradients: init's, the lifted values', the xs' */
    size_t q = 0;
    for (size_t i = 0; i < nph && st == HOP_OK; i++) {
        if (!wrt[i] || (i >= p.nc && i < p.nc + p.nx))
            continue;
        const hop_arg *a = i < p.nc ? &p.init[i] : &p.lifted[i - p.nc - p.nx];
        hop_node *d = hop_graph_getitem(g, back, q++);
        st = d ? hop_vjp_accumulate(cx, a->u.node, d) : hop_error_code();
    }
    for (size_t i = 0; i < p.nx && st == HOP_OK; i++) {
        if (!wrt[p.nc + i])
            continue;
        hop_node *d = hop_graph_getitem(g, back, q++);
        st = d ? hop_vjp_accumulate(cx, p.xs[i].u.node, d) : hop_error_code();
    }
    hop_graph_free(bwd);
    hop_free(wrt);
    hop_free(v);
    hop_free(outs);
    return st;
}

/*
 * Forward: one scan over (carries, their tangents), (xs, theirs), (lifted,
 * theirs) whose body is the body's tangent graph inlined; every float carry
 * carries a tangent (zeros where init has none).
 */
static hop_status
scan_jvp(hop_jvp_ctx *cx, const hop_node *call)
{
    scan_parts p;
    scan_parts_of(call, &p);
    hop_graph *g = hop_jvp_out(cx);
    const hop_graph *f = p.f;
    size_t nph = f->nplaceholders, nout = p.nc + p.ny;
    for (size_t j = 0; j < p.nc; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "autodiff: scan %s carries a SymInt (carry %zu); its jvp needs "
                             "tensor carries",
                             call->name, j);
    hop_status st = HOP_OK;
    bool *wrt = hop_calloc(nph + 1, sizeof *wrt);
    hop_node **v = hop_calloc(8 * (nph + nout) + 8, sizeof *v);
    hop_value_info *outs = hop_calloc(2 * nout + 2, sizeof *outs);
    hop_graph *jb = NULL;
    if (wrt == NULL || v == NULL || outs == NULL)
        st = HOP_NOMEM;
    /* the operands in placeholder order, and their tangents */
    hop_node **prim = v, **tan = v + nph;
    for (size_t i = 0; i < nph && st == HOP_OK; i++) {
        const hop_arg *a = i < p.nc          ? &p.init[i]
                           : i < p.nc + p.nx ? &p.xs[i - p.nc]
                                             : &p.lifted[i - p.nc - p.nx];
        const hop_value_info *m = hop_graph_placeholder_at(f, i)->meta;
        prim[i] = hop_jvp_primal(cx, a->u.node);
        tan[i] = float_value(m) ? hop_jvp_tangent(cx, a->u.node) : NULL;
        wrt[i] = float_value(m) && (i < p.nc || tan[i] != NULL);
        if (i < p.nc && wrt[i] && tan[i] == NULL && (tan[i] = hop_jvp_zeros(cx, m)) == NULL)
            st = hop_error_code();
    }
    char base[256];
    /* the body: each group's values, then their tangents */
    snprintf(base, sizeof base, "%s_jvp", f->name);
    if (st == HOP_OK && (jb = hop_graph_new_subgraph(g, base)) == NULL)
        st = hop_error_code();
    hop_node **ph = tan + nph, **dot = ph + nph; /* jb's placeholders by f's index */
    size_t bounds[] = {0, p.nc, p.nc + p.nx, nph};
    char name[256];
    for (int grp = 0; grp < 3 && st == HOP_OK; grp++) {
        for (size_t i = bounds[grp]; i < bounds[grp + 1] && st == HOP_OK; i++) {
            const hop_node *q = hop_graph_placeholder_at(f, i);
            if ((ph[i] = hop_graph_placeholder(jb, q->name, q->meta)) == NULL)
                st = hop_error_code();
        }
        for (size_t i = bounds[grp]; i < bounds[grp + 1] && st == HOP_OK; i++) {
            if (!wrt[i])
                continue;
            const hop_node *q = hop_graph_placeholder_at(f, i);
            snprintf(name, sizeof name, "%s_dot", q->name);
            if ((dot[i] = hop_graph_placeholder(jb, name, q->meta)) == NULL)
                st = hop_error_code();
        }
    }
    hop_node **jo = dot + nph;
    if (st == HOP_OK)
        st = hop_jvp_inline(jb, f, wrt, ph, dot, jo);
    /* jo: f's outputs, then one tangent per output (all tensors) */
    size_t nfc = 0, nfy = 0;
    for (size_t j = 0; j < nout; j++)
        *(j < p.nc ? &nfc : &nfy) += float_value(&call->outs[j]);
    if (st == HOP_OK) {
        hop_arg *o = hop_calloc(2 * nout + 1, sizeof *o);
        size_t m = 0;
        for (size_t j = 0; o && j < p.nc; j++)
            o[m++] = hop_arg_node(jo[j]);
        for (size_t j = 0; o && j < p.nc; j++)
            if (float_value(&call->outs[j]))
                o[m++] = hop_arg_node(jo[nout + j]);
        for (size_t j = p.nc; o && j < nout; j++)
            o[m++] = hop_arg_node(jo[j]);
        for (size_t j = p.nc; o && j < nout; j++)
            if (float_value(&call->outs[j]))
                o[m++] = hop_arg_node(jo[nout + j]);
        if (o == NULL)
            st = HOP_NOMEM;
        else if (hop_graph_output(jb, o, m) == NULL)
            st = hop_error_code();
        hop_free(o);
    }
    if (st == HOP_OK || jb)
        jb = install(g, jb, st);
    if (st == HOP_OK && jb == NULL)
        st = hop_error_code();
    /* the operands: each group's primals, then its tangents */
    hop_node **ops = jo + 2 * nout;
    size_t n[3] = {0, 0, 0}, at = 0;
    for (int grp = 0; grp < 3; grp++) {
        size_t start = at;
        for (size_t i = bounds[grp]; i < bounds[grp + 1]; i++)
            ops[at++] = prim[i];
        for (size_t i = bounds[grp]; i < bounds[grp + 1]; i++)
            if (wrt[i])
                ops[at++] = tan[i];
        n[grp] = at - start;
    }
    hop_node *r = NULL;
    if (st == HOP_OK) {
        size_t m = 0;
        for (size_t j = 0; j < p.nc; j++)
            outs[m++] = call->outs[j];
        for (size_t j = 0; j < p.nc; j++)
            if (float_value(&call->outs[j]))
                outs[m++] = call->outs[j];
        for (size_t j = p.nc; j < nout; j++)
            outs[m++] = call->outs[j];
        for (size_t j = p.nc; j < nout; j++)
            if (float_value(&call->outs[j]))
                outs[m++] = call->outs[j];
        r = hop_graph_call_scan(g, p.reverse, p.dim, p.length, jb, ops, n[0], ops + n[0], n[1],
                                ops + n[0] + n[1], n[2], outs, m);
        if (r == NULL)
            st = hop_error_code();
    }
    for (size_t j = 0, kc = 0, ky = 0; j < nout && st == HOP_OK; j++) {
        if (!float_value(&call->outs[j]))
            continue;
        size_t at_j = j < p.nc ? p.nc + kc++ : p.nc + nfc + p.ny + ky++;
        hop_node *t = hop_graph_getitem(g, r, at_j);
        st = t ? hop_jvp_set_tangent(cx, call, j, t) : hop_error_code();
    }
    hop_free(wrt);
    hop_free(v);
    hop_free(outs);
    return st;
}

/* ------------------------------------------------------------------ vmap */

/* m with size s inserted at dim d. */
static hop_value_info
insert_dim(hop_value_info m, const hop_expr *s, int d)
{
    memmove(m.meta.sizes + d + 1, m.meta.sizes + d,
            (size_t)(m.meta.rank - d) * sizeof *m.meta.sizes);
    m.meta.sizes[d] = s;
    m.meta.rank++;
    return m;
}

/*
 * A batched operand: the same scan over the body batched.  A carry is
 * batched when its init is or the body makes it so (hop_batch_carries, a
 * fixed point; such an init is broadcast on entry); every y is batched.
 * The batched scan runs over dim 0: each xs has its scan dim moved to the
 * front (a batched one's batch dim right after it), so each step's slice of
 * a batched xs is batched at 0; each y comes out [steps, B, ...] and its
 * steps dim is moved to where the call stacks it, after the batch.
 */
static hop_status
scan_batch(hop_batch_ctx *cx, const hop_node *call)
{
    scan_parts p;
    scan_parts_of(call, &p);
    hop_graph *g = hop_batch_out(cx);
    const hop_graph *f = p.f;
    size_t nph = f->nplaceholders, nout = call->nouts;
    for (size_t j = p.nc; j < nout; j++)
        if (call->outs[j].meta.rank + 1 > HOP_MAX_RANK)
            return hop_batch_loop(cx, call); /* a batched y would not fit */
    bool *mask = hop_calloc(nph + nout + 1, sizeof *mask), *omask = mask ? mask + nph : NULL;
    hop_node **ops = hop_calloc(nph + 1, sizeof *ops);
    hop_value_info *outs = hop_calloc(nout + 1, sizeof *outs);
    hop_status st = mask && ops && outs ? HOP_OK : HOP_NOMEM;
    for (size_t i = 0; i < nph && st == HOP_OK; i++) {
        const hop_arg *a = i < p.nc          ? &p.init[i]
                           : i < p.nc + p.nx ? &p.xs[i - p.nc]
                                             : &p.lifted[i - p.nc - p.nx];
        if ((ops[i] = hop_batch_value(cx, a->u.node, &mask[i])) == NULL)
            st = hop_error(HOP_MISUSE, "vmap: operand %s of scan %s has no value", a->u.node->name,
                           call->name);
    }
    if (st == HOP_OK)
        st = hop_batch_carries(cx, f, mask, 0, p.nc);
    for (size_t j = 0; j < nout && st == HOP_OK; j++)
        omask[j] = j < p.nc ? mask[j] : true;
    hop_graph *fb = NULL;
    if (st == HOP_OK)
        st = hop_batch_body_outs(cx, f, mask, omask, &fb);
    for (size_t j = 0; j < p.nc && st == HOP_OK; j++) {
        bool b;
        hop_batch_value(cx, p.init[j].u.node, &b);
        if (mask[j] && !b && (ops[j] = hop_batch_broadcast(cx, ops[j])) == NULL)
            st = hop_error_code();
    }
    for (size_t i = 0; i < p.nx && st == HOP_OK; i++) {
        int d = norm_dim(p.dim, p.xs[i].u.node->meta->meta.rank) + (mask[p.nc + i] ? 1 : 0);
        if ((ops[p.nc + i] = hop_batch_movedim(cx, ops[p.nc + i], d, 0)) == NULL)
            st = hop_error_code();
    }
    for (size_t j = 0; j < nout && st == HOP_OK; j++) {
        if (j < p.nc)
            outs[j] = mask[j] ? insert_dim(call->outs[j], hop_batch_size(cx), 0) : call->outs[j];
        else
            outs[j] = insert_dim(*fb->output->args[j].u.node->meta, p.n, 0);
    }
    hop_node *c = NULL;
    if (st == HOP_OK &&
        (c = hop_graph_call_scan(g, p.reverse, 0, p.length, fb, ops, p.nc, ops + p.nc, p.nx,
                                 ops + p.nc + p.nx, p.nl, outs, nout)) == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = hop_graph_rename_node(g, c, call->name);
    for (size_t j = 0; j < nout && st == HOP_OK; j++) {
        hop_node *v = hop_graph_getitem(g, c, j);
        if (v != NULL && j >= p.nc)
            v = hop_batch_movedim(cx, v, 0, norm_dim(p.dim, call->outs[j].meta.rank) + 1);
        st = v ? hop_batch_set(cx, call, j, v, j < p.nc ? mask[j] : true) : hop_error_code();
    }
    hop_free(mask);
    hop_free(ops);
    hop_free(outs);
    return st;
}

const hop_class hop_scan_class = {
    .name = "scan",
    .params = {{"reverse", HOP_PARAM_BOOL},
               {"dim", HOP_PARAM_INT},
               {"length", HOP_PARAM_INT},
               {"f", HOP_PARAM_BODY, "scan_body"},
               {"init", HOP_PARAM_CARRY},
               {"xs", HOP_PARAM_VALUES}},
    .doc = "scan(reverse, dim, length, f, init, xs): carry = init; (carry, y) = f(carry, x) for "
           "each slice x of xs along dim (last first with reverse); returns the final carry and "
           "the ys stacked along dim.  length (-1: from xs) counts the steps when there are no xs.",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .guard_mode = HOP_GUARDS_BODY,
    .check_operands = scan_check_operands,
    .body_inputs = scan_body_inputs,
    .check_outputs = scan_check_outputs,
    .output_meta = scan_output_meta,
    .installed = hop_call_bind_outputs,
    .verify = scan_verify,
    .lower = scan_lower,
    .eval = scan_eval,
    .vjp = scan_vjp,
    .jvp = scan_jvp,
    .batch = scan_batch,
};
