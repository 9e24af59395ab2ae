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
#include "hop/batching.h"
#include "hop/layout.h"
#include "hop/lowering.h"
#include "hop/loop_kit.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- tracing */

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
        if (hop_loop_xs_dim("scan", i, xs[i]->name, x, dim, &d) != HOP_OK)
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
    return st == HOP_OK ? hop_call_slice_inputs(c, ninit, nxs, hop_call_param(c, "dim")->u.i) : st;
}

static hop_status
scan_check_outputs(hop_call *c)
{
    size_t ninit;
    hop_call_group(c, "init", &ninit);
    hop_status st = hop_call_check_carries(c, 0, 0, ninit, true, "f");
    const hop_values *r = &c->results[0];
    for (size_t j = ninit; j < r->n && st == HOP_OK; j++) {
        const hop_value_info *y = r->items[j]->meta;
        if (y->kind == HOP_VALUE_TENSOR && y->meta.rank < HOP_MAX_RANK)
            continue;
        char what[128]; /* printed for an error only */
        hop_value_info_print(y, what, sizeof what);
        if (y->kind != HOP_VALUE_TENSOR)
            st =
                hop_error(HOP_TRACE, "scan: y %zu of f is %s; ys must be tensors", j - ninit, what);
        else
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
    return xs[0]->meta->meta.sizes[hop_loop_dim(dim, xs[0]->meta->meta.rank)];
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
        int d = hop_loop_dim(dim, y.meta.rank + 1);
        if (d < 0) {
            char what[128];
            hop_value_info_print(&y, what, sizeof what);
            return hop_error(HOP_SHAPE,
                             "scan: y %zu of f is %s; it cannot be stacked along dim "
                             "%" PRId64,
                             j - ninit, what, dim);
        }
        c->outs[c->nouts++] = hop_value_info_insert_dim(&y, d, n);
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
        *want = hop_value_info_drop_dim(want, hop_loop_dim(s->dim, want->meta.rank));
    return true;
}

/* It returns the carries, then one y per stacked output (dim removed). */
static bool
scan_output(void *ud, const hop_node *call, size_t body, size_t j, hop_value_info *want)
{
    const scan_shape *s = ud;
    (void)call, (void)body;
    if (j >= s->ninit)
        *want = hop_value_info_drop_dim(want, hop_loop_dim(s->dim, want->meta.rank));
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
        if (hop_loop_xs_dim("scan", i, xs[i].u.node->name, x, s.dim, &d) != HOP_OK)
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
        int d = y->kind == HOP_VALUE_TENSOR ? hop_loop_dim(s.dim, y->meta.rank) : -1;
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
    hop_arg size = m0 ? hop_arg_sym(m0->sizes[hop_loop_dim(dim, m0->rank)])
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
            st = hop_lower_select_dim(cx, passed[i],
                                      hop_loop_dim(dim, xs[i - ninit].u.node->meta->meta.rank), idx,
                                      &in[i]);
        else
            in[i] = passed[i];
    }
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        st = j < ninit ? (dests[j] = lc.next[j], HOP_OK)
                       : hop_lower_select_dim(cx, ys[j], hop_loop_dim(dim, call->outs[j].meta.rank),
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
        st = hop_lower_carry_loop_end(cx, &lc);
    for (size_t j = 0; j < ninit; j++)
        ys[j] = lc.out[j];
    return st == HOP_OK ? hop_lower_results(cx, ys, no) : st;
}

/* ------------------------------------------------------------------- eval */

/* The number of steps: length, or the xs' count along dim (every one's the
 * same), with tracing's checks on concrete xs. */
static hop_status
eval_steps(const hop_rt_value *xs, size_t nxs, int64_t dim, int64_t length, int64_t *steps)
{
    *steps = length;
    for (size_t i = 0; i < nxs; i++) {
        int d = xs[i].kind == HOP_VALUE_TENSOR ? hop_loop_dim(dim, xs[i].tensor->rank) : -1;
        char what[96];
        hop_eval_describe(&xs[i], what, sizeof what);
        if (d < 0)
            return hop_error(HOP_SHAPE, "scan: xs %zu is %s, which has no dim %" PRId64, i, what,
                             dim);
        int64_t len = xs[i].tensor->sizes[d];
        if (i == 0 && *steps < 0)
            *steps = len;
        else if (len != *steps)
            return hop_error(HOP_SHAPE,
                             "scan: xs %zu has %" PRId64 " steps along dim %" PRId64
                             " but %s %" PRId64,
                             i, len, dim, i ? "xs 0 has" : "length is", *steps);
    }
    if (*steps < 0)
        return hop_error(HOP_INVALID, "scan: with no xs, length must be given (an int >= 0)");
    return HOP_OK;
}

/* Step s's ys (out's values after the carries) against step 0's (ys, ny of
 * them per step): every step gives ys of the same kinds. */
static hop_status
check_ys(const hop_rt_values *out, size_t nc, const hop_rt_values *ys, size_t ny, int64_t s)
{
    for (size_t j = 0; j < out->n - nc; j++) {
        const hop_rt_value *y = &out->items[nc + j], *y0 = s ? &ys->items[j] : y;
        char a[96], b[96];
        hop_eval_describe(y0, a, sizeof a);
        hop_eval_describe(y, b, sizeof b);
        if (out->n - nc != ny || y->kind != HOP_VALUE_TENSOR || !hop_eval_same_kind(y0, y))
            return hop_error(HOP_TRACE,
                             "scan: y %zu of f is %s at step 0 but %s at step %" PRId64
                             "; every step must give the same ys",
                             j, a, b, s);
    }
    return HOP_OK;
}

/* One step at row idx: the xs' slices into the body's inputs, the body,
 * its ys moved to *ys (ny per step, set at step 0), its carries taken. */
static hop_status
eval_step(hop_eval_loop *l, const hop_rt_value *xs, size_t nxs, int64_t dim, int64_t idx, int64_t s,
          hop_rt_values *ys, size_t *ny)
{
    hop_rt_values out = {NULL, 0, 0}, rows = {NULL, 0, 0};
    hop_status st = hop_eval_loop_slice(l, xs, nxs, dim, idx, &rows);
    if (st == HOP_OK)
        st = hop_eval_loop_step(l, "f", "f", &out);
    if (st == HOP_OK && s == 0)
        *ny = out.n - l->nc;
    if (st == HOP_OK)
        st = check_ys(&out, l->nc, ys, *ny, s);
    hop_rt_values_clear(&rows);
    for (size_t j = l->nc; j < out.n && st == HOP_OK; j++) {
        st = hop_rt_values_push(ys, out.items[j]);
        out.items[j].tensor = NULL;
    }
    if (st == HOP_OK) {
        out.n = l->nc;
        hop_eval_loop_take(l, &out);
    }
    hop_rt_values_clear(&out);
    return st;
}

static hop_status
scan_eval(hop_eval_ctx *ex)
{
    size_t nxs, ny = 0;
    const hop_rt_value *xs = hop_eval_group(ex, "xs", &nxs);
    hop_rt_arg reverse, dim, length;
    int64_t steps;
    hop_status st = hop_eval_param(ex, "reverse", &reverse);
    if (st == HOP_OK)
        st = hop_eval_param(ex, "dim", &dim);
    if (st == HOP_OK)
        st = hop_eval_param(ex, "length", &length);
    if (st == HOP_OK)
        st = eval_steps(xs, nxs, dim.u.i, length.u.i, &steps);
    if (st != HOP_OK)
        return st;
    hop_eval_loop l;
    hop_rt_values ys = {NULL, 0, 0}; /* step-major */
    st = hop_eval_loop_begin(ex, 0, "init", &l);
    l.more = true; /* f returns the carries, then the step's ys */
    for (int64_t s = 0; s < steps && st == HOP_OK; s++)
        st = eval_step(&l, xs, nxs, dim.u.i, reverse.u.b ? steps - 1 - s : s, s, &ys, &ny);
    /* No step ran: the ys are empty, of the shapes the trace found (an eager
     * call has no trace to ask). */
    size_t nouts = hop_eval_nouts(ex);
    if (st == HOP_OK && steps == 0 && nouts == SIZE_MAX)
        st = hop_error(HOP_UNSUPPORTED,
                       "scan: a scan of 0 steps run eagerly cannot know its ys' shapes (f never "
                       "runs); trace it (hop.trace) to get them");
    for (size_t j = l.nc; st == HOP_OK && steps == 0 && j < nouts; j++) {
        hop_rt_value v = {HOP_VALUE_TENSOR, NULL, 0};
        if ((st = hop_eval_output_zeros(ex, j, &v.tensor)) == HOP_OK)
            st = hop_rt_values_push(&l.carry, v);
    }
    if (st == HOP_OK)
        st = hop_eval_stack_rows(&ys, ny, steps, reverse.u.b, dim.u.i, &l.carry);
    hop_rt_values_clear(&ys);
    return hop_eval_loop_end(&l, st);
}

/* --------------------------------------------------------------- autodiff */

/* Reverse: the loop kit's (an augmented forward scan stacks the carries
 * each step starts from, a scan the other way runs the step's vjp); forward:
 * one scan over (carries, tangents), (xs, tangents), (lifted, tangents)
 * whose body is the step's tangent graph (docs/AUTODIFF.md). */
static hop_status
scan_vjp(hop_vjp_ctx *cx, const hop_node *call)
{
    hop_loop lp = {.call = call,
                   .body = "f",
                   .carries = "init",
                   .xs = "xs",
                   .reverse = hop_node_param(call, "reverse")->u.b,
                   .dim = hop_node_param(call, "dim")->u.i,
                   .length = hop_node_param(call, "length")->u.i};
    return hop_loop_vjp(cx, &lp);
}

static hop_status
scan_jvp(hop_jvp_ctx *cx, const hop_node *call)
{
    return hop_loop_jvp(cx, call, "f", "init");
}

static hop_status
scan_reach(const hop_node *call, const bool *from, bool *reached)
{
    return hop_loop_reach(call, "f", "init", from, reached);
}

/* ------------------------------------------------------------------ vmap */

/* The scan over fb (the body batched) with operands ops, its leads as
 * call's but dim 0 (every xs moved there), outputs outs. */
static hop_node *
emit_scan(hop_batch_ctx *cx, const hop_node *call, const hop_layout *l, hop_graph *fb,
          hop_node *const *ops, const hop_value_info *outs)
{
    hop_build *b = hop_build_new(hop_batch_out(cx), &hop_scan_class);
    hop_status st = b ? hop_build_use_body(b, "f", fb) : hop_error_code();
    if (st == HOP_OK)
        st = hop_build_lead(b, "reverse", *hop_node_param(call, "reverse"));
    if (st == HOP_OK)
        st = hop_build_lead(b, "dim", hop_arg_int(0));
    if (st == HOP_OK)
        st = hop_build_lead(b, "length", *hop_node_param(call, "length"));
    if (st == HOP_OK)
        st = hop_build_operands(b, l, ops);
    if (st != HOP_OK) {
        hop_build_free(b);
        return NULL;
    }
    return hop_build_emit(b, outs, call->nouts);
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
    const hop_graph *f = hop_node_body(call, "f");
    int64_t dim = hop_node_param(call, "dim")->u.i;
    size_t nph = f->nplaceholders, nout = call->nouts;
    hop_layout l;
    hop_status st = hop_layout_of(call, &l);
    hop_span c = hop_layout_span(&l, "init"), x = hop_layout_span(&l, "xs");
    for (size_t j = c.n; j < nout; j++)
        if (call->outs[j].meta.rank + 1 > HOP_MAX_RANK)
            return hop_batch_loop(cx, call); /* a batched y would not fit */
    bool *mask = hop_calloc(2 * nph + nout + 1, sizeof *mask), *was = mask ? mask + nph : NULL;
    bool *omask = mask ? was + nph : NULL;
    hop_node **ops = hop_calloc(nph + 1, sizeof *ops);
    hop_value_info *outs = hop_calloc(nout + 1, sizeof *outs);
    if (st == HOP_OK && (mask == NULL || ops == NULL || outs == NULL))
        st = HOP_NOMEM;
    if (st == HOP_OK)
        st = hop_batch_operands(cx, call, ops, mask);
    if (st == HOP_OK) /* the inits as they come, before the fixed point batches more */
        memcpy(was, mask, nph * sizeof *was);
    if (st == HOP_OK)
        st = hop_batch_carries(cx, f, mask, c.at, c.n);
    for (size_t j = 0; j < nout && st == HOP_OK; j++)
        omask[j] = j < c.n ? mask[c.at + j] : true;
    hop_graph *fb = NULL;
    if (st == HOP_OK)
        st = hop_batch_body_outs(cx, f, mask, omask, &fb);
    for (size_t i = c.at; i < c.at + c.n && st == HOP_OK; i++)
        if (mask[i] && !was[i] && (ops[i] = hop_batch_broadcast(cx, ops[i])) == NULL)
            st = hop_error_code();
    for (size_t i = x.at; i < x.at + x.n && st == HOP_OK; i++) {
        int d = hop_loop_dim(dim, hop_node_passed_to(call, i)->u.node->meta->meta.rank) + mask[i];
        if ((ops[i] = hop_batch_movedim(cx, ops[i], d, 0)) == NULL)
            st = hop_error_code();
    }
    /* the steps: the xs' count along dim, or length */
    const hop_meta *m0 = x.n ? &hop_node_passed_to(call, x.at)->u.node->meta->meta : NULL;
    const hop_expr *n = m0 ? m0->sizes[hop_loop_dim(dim, m0->rank)]
                           : hop_sym_const(f->env, hop_node_param(call, "length")->u.i);
    for (size_t j = 0; j < nout && st == HOP_OK; j++) {
        if (j >= c.n)
            outs[j] = hop_value_info_insert_dim(fb->output->args[j].u.node->meta, 0, n);
        else
            outs[j] = omask[j] ? hop_batch_meta(cx, &call->outs[j]) : call->outs[j];
    }
    hop_node *r = st == HOP_OK ? emit_scan(cx, call, &l, fb, ops, outs) : NULL;
    if (st == HOP_OK && r == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = hop_graph_rename_node(hop_batch_out(cx), r, call->name);
    for (size_t j = 0; j < nout && st == HOP_OK; j++) {
        hop_node *v = hop_graph_getitem(hop_batch_out(cx), r, j);
        if (v != NULL && j >= c.n)
            v = hop_batch_movedim(cx, v, 0, hop_loop_dim(dim, call->outs[j].meta.rank) + 1);
        st = v ? hop_batch_set(cx, call, j, v, omask[j]) : hop_error_code();
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
    .reach = scan_reach,
    .batch = scan_batch,
};
