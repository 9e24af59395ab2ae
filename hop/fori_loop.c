/*
 * hop/fori_loop.c - fori_loop(lower, upper, body_fun, init_val): JAX's
 * counted loop, val = body_fun(i, val) for i in [lower, upper); the final
 * val.
 *
 * Tracing: the bounds are ints, SymInts or int scalar tensors (read with
 * item, so an unbacked trip count works); the body gets the index i (a
 * SymInt the HOP makes itself: fori_loop's one made input, an unbacked
 * symbol ranging over [lower, upper) when both are known) and the carries
 * (fresh), and must return each carry as it entered.  The node is
 * `fori_loop(lower, upper, fori_loop_body_N, (init...), (lifted...))`.
 *
 * Under vmap a batched tensor bound (its item deferred: the bounds are
 * HOP_PARAM_BATCHED_ITEM) is one loop over [min lower, max upper) whose
 * lanes update their carries only inside their own range (fori_batch).
 *
 * Lowering: a counted loop (no condition to evaluate per iteration) whose
 * index register is the body's i, carries double-buffered.  Eval: the same
 * loop on concrete values with the same checks.
 */
#include "hop/layout.h"
#include "hop/lowering.h"
#include "hop/loop_kit.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- tracing */

/* A bound as an int or a SymInt: an int scalar tensor is read with item. */
static hop_status
bound(hop_call *c, const char *name)
{
    hop_arg *b = hop_call_param(c, name);
    if (b->kind == HOP_ARG_INT)
        return HOP_OK;
    if (b->kind == HOP_ARG_SYM && !hop_expr_is_bool(b->u.sym))
        return HOP_OK;
    if (b->kind == HOP_ARG_NODE) {
        const hop_value_info *v = b->u.node->meta;
        if (v->kind == HOP_VALUE_SYM && !hop_expr_is_bool(v->sym))
            return HOP_OK;
        int64_t k, numel = 1;
        bool ok =
            v->kind == HOP_VALUE_TENSOR && (v->meta.dtype == HOP_I64 || v->meta.dtype == HOP_I32);
        for (int d = 0; ok && d < v->meta.rank; d++)
            ok = hop_expr_const_value(v->meta.sizes[d], &k) && (numel *= k) == 1;
        if (ok) {
            hop_node *local = hop_tracer_lift(c->parent, b->u.node);
            hop_node *item = local ? hop_tracer_call_op(c->parent, HOP_OP_item,
                                                        (hop_arg[]){hop_arg_node(local)}, 1)
                                   : NULL;
            if (item == NULL)
                return hop_error_code();
            *b = hop_arg_node(item);
            return HOP_OK;
        }
    }
    char what[96] = "a bool";
    if (b->kind == HOP_ARG_NODE)
        hop_value_info_print(b->u.node->meta, what, sizeof what);
    return hop_error(HOP_DTYPE, "%s: %s must be an int, a SymInt or an int scalar tensor, got %s",
                     c->cls->name, name, what);
}

static hop_status
fori_check_operands(hop_call *c)
{
    hop_status st = bound(c, "lower");
    if (st == HOP_OK)
        st = bound(c, "upper");
    return st == HOP_OK ? hop_prim_hop_base()->check_operands(c) : st;
}

/* The index: an unbacked SymInt, in [lower, upper) when both are known. */
static hop_status
fori_body_inputs(hop_call *c)
{
    hop_status st = hop_prim_hop_base()->body_inputs(c);
    if (st != HOP_OK)
        return st;
    const hop_arg *lo = hop_call_param(c, "lower"), *hi = hop_call_param(c, "upper");
    int64_t a = INT64_MIN, b = INT64_MAX;
    if (lo->kind == HOP_ARG_INT && hi->kind == HOP_ARG_INT && lo->u.i < hi->u.i)
        a = lo->u.i, b = hi->u.i - 1;
    const hop_expr *i = hop_shape_env_unbacked(hop_output_graph_env(c->og), a, b);
    if (i == NULL)
        return hop_error_code();
    c->input_meta[0] = (hop_value_info){.kind = HOP_VALUE_SYM, .sym = i};
    c->input_names[0] = "i";
    return HOP_OK;
}

static hop_status
fori_check_outputs(hop_call *c)
{
    size_t n;
    hop_call_group(c, "init_val", &n);
    return hop_call_check_carries(c, 0, 1, n, false, "body_fun");
}

static hop_status
fori_output_meta(hop_call *c)
{
    size_t n;
    hop_call_group(c, "init_val", &n);
    return hop_call_carry_outputs(c, 1, n, 0);
}

/* ------------------------------------------------------------- verifying */

/* A bound as tracing leaves it: an int, a SymInt, or a SymInt node (a
 * tensor bound was read with item). */
static hop_status
verify_bound(const hop_node *call, const char *name)
{
    const hop_arg *b = hop_node_param(call, name);
    const hop_value_info *m = b->kind == HOP_ARG_NODE ? b->u.node->meta : NULL;
    if (b->kind == HOP_ARG_INT || (b->kind == HOP_ARG_SYM && !hop_expr_is_bool(b->u.sym)) ||
        (m && m->kind == HOP_VALUE_SYM && !hop_expr_is_bool(m->sym)))
        return HOP_OK;
    char what[128] = "a bool";
    if (m)
        hop_value_info_print(m, what, sizeof what);
    else if (b->kind == HOP_ARG_SYM)
        snprintf(what, sizeof what, "a SymBool");
    return hop_verify_fail(call, "%s: %s must be an int or a SymInt, got %s", call->cls->name, name,
                           what);
}

/* The bounds, the index the HOP makes (body_fun's first input, a SymInt),
 * the carries (the outputs), and the base's checks of the body's inputs and
 * outputs. */
static hop_status
fori_verify(const hop_node *call)
{
    hop_status st = verify_bound(call, "lower");
    if (st == HOP_OK)
        st = verify_bound(call, "upper");
    const hop_graph *body = st == HOP_OK ? hop_node_body(call, "body_fun") : NULL;
    const hop_node *i = body ? body->first : NULL;
    if (st == HOP_OK && (i == NULL || i->kind != HOP_NODE_PLACEHOLDER ||
                         i->meta->kind != HOP_VALUE_SYM || hop_expr_is_bool(i->meta->sym)))
        st = hop_verify_fail(call, "%s: the first input of %s must be the index, a SymInt",
                             call->cls->name, body ? body->name : "body_fun");
    if (st == HOP_OK)
        st = hop_verify_carries(call, "init_val", false);
    return st == HOP_OK ? hop_verify_default(call) : st;
}

/* --------------------------------------------------------------- lowering */

static hop_status
fori_lower(hop_lower_ctx *cx, const hop_node *call)
{
    const hop_graph *body = hop_node_body(call, "body_fun");
    size_t n, ncarry = call->nouts;
    hop_pval *passed = hop_lower_passed(cx, call, &n), *in = hop_lower_pvals(cx, n + 1);
    hop_pval lo, hi, count, k;
    hop_loop_carry lc;
    if (body == NULL || passed == NULL || in == NULL ||
        hop_lower_arg(cx, hop_node_param(call, "lower"), &lo) != HOP_OK ||
        hop_lower_arg(cx, hop_node_param(call, "upper"), &hi) != HOP_OK ||
        hop_lower_carry_begin(cx, call->outs, passed, ncarry, &lc) != HOP_OK)
        return hop_error_code();
    /* count = max(upper, lower) - lower: no trips when upper <= lower, as
     * eager's range, even where upper - lower would overflow int64. */
    hop_pval top;
    hop_status st = HOP_OK;
    if (lo.kind == HOP_PVAL_CONST && hi.kind == HOP_PVAL_CONST && hi.value <= lo.value)
        count = (hop_pval){HOP_PVAL_CONST, -1, 0};
    else if (lo.kind == HOP_PVAL_CONST && hi.kind == HOP_PVAL_CONST &&
             !__builtin_sub_overflow(hi.value, lo.value, &count.value))
        count = (hop_pval){HOP_PVAL_CONST, -1, count.value};
    else if ((st = hop_lower_int(cx, HOP_INT_MAX, hi, lo, &top)) == HOP_OK)
        st = hop_lower_int(cx, HOP_INT_SUB, top, lo, &count);
    if (st == HOP_OK)
        st = hop_lower_loop_begin(cx, count, &k);
    /* i = lower + k: the counter itself when lower is 0. */
    if (st == HOP_OK)
        st = lo.kind == HOP_PVAL_CONST && lo.value == 0
                 ? (in[0] = k, HOP_OK)
                 : hop_lower_int(cx, HOP_INT_ADD, lo, k, &in[0]);
    for (size_t j = 0; j < n; j++)
        in[j + 1] = j < ncarry ? lc.cur[j] : passed[j];
    if (st == HOP_OK)
        st = hop_lower_inline(cx, body, in, n + 1, lc.next, lc.got, ncarry);
    if (st == HOP_OK)
        st = hop_lower_carry_loop_end(cx, &lc);
    return st == HOP_OK ? hop_lower_results(cx, lc.out, ncarry) : st;
}

/* ------------------------------------------------------------------- eval */

static hop_status
eval_bound(hop_eval_ctx *ex, const char *name, int64_t *out)
{
    hop_rt_arg b;
    hop_status st = hop_eval_param(ex, name, &b);
    if (st != HOP_OK)
        return st;
    if (b.kind == HOP_OPND_INT) {
        *out = b.u.i;
        return HOP_OK;
    }
    if (b.kind == HOP_OPND_TENSOR &&
        (b.u.tensor->dtype == HOP_I64 || b.u.tensor->dtype == HOP_I32) &&
        hop_tensor_numel(b.u.tensor) == 1)
        return hop_tensor_item_int(b.u.tensor, out);
    char what[96] = "a bool";
    if (b.kind == HOP_OPND_TENSOR)
        hop_tensor_print_meta(b.u.tensor, what, sizeof what);
    return hop_error(HOP_DTYPE, "%s: %s must be an int, a SymInt or an int scalar tensor, got %s",
                     hop_eval_class(ex)->name, name, what);
}

static hop_status
fori_eval(hop_eval_ctx *ex)
{
    int64_t lo, hi;
    hop_eval_loop l;
    hop_status st = eval_bound(ex, "lower", &lo);
    if (st == HOP_OK)
        st = eval_bound(ex, "upper", &hi);
    if (st != HOP_OK)
        return st;
    st = hop_eval_loop_begin(ex, 1, "init_val", &l); /* the made input: i */
    for (int64_t i = lo; i < hi && st == HOP_OK; i++) {
        l.in[0] = (hop_rt_value){HOP_VALUE_SYM, NULL, i};
        st = hop_eval_loop_next(&l, "body_fun", "body_fun");
    }
    return hop_eval_loop_end(&l, st);
}

/* --------------------------------------------------------------- autodiff */

/* The loop kit's counted loop over [lower, upper) (a SymInt node bound: its
 * primal), the body's index i = item of each step's index (docs/AUTODIFF.md). */
static hop_status
fori_vjp(hop_vjp_ctx *cx, const hop_node *call)
{
    hop_arg b[2] = {*hop_node_param(call, "lower"), *hop_node_param(call, "upper")};
    for (int k = 0; k < 2; k++)
        if (b[k].kind == HOP_ARG_NODE && (b[k].u.node = hop_vjp_primal(cx, b[k].u.node)) == NULL)
            return hop_error_code();
    return hop_loop_vjp_counted(cx, call, "body_fun", "init_val", b[0], b[1]);
}

/* fori_loop(lower, upper, body_jvp, (c..., dc...), (L..., dL...)). */
static hop_status
fori_jvp(hop_jvp_ctx *cx, const hop_node *call)
{
    return hop_loop_jvp(cx, call, "body_fun", "init_val");
}

static hop_status
fori_reach(const hop_node *call, const bool *from, bool *reached)
{
    return hop_loop_reach(call, "body_fun", "init_val", from, reached);
}

/* ------------------------------------------------------------------ vmap */

/* The lanes of batched bounds (the extra inputs lower, upper; NULL when
 * not batched): lane b runs while lower_b <= i < upper_b, only the batched
 * sides compared (the loop's own range is [min lower, max upper)). */
static hop_status
bound_lanes(void *arg, hop_graph *g, hop_node *const *in, hop_node *const *lim, hop_node **mask)
{
    (void)arg;
    hop_node *act[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++)
        if (lim[k] && (act[k] = hop_graph_call_op(
                           g, k ? HOP_OP_gt : HOP_OP_le,
                           (hop_arg[]){hop_arg_node(lim[k]), hop_arg_node(in[0])}, 2)) == NULL)
            return hop_error_code();
    hop_arg both[] = {hop_arg_node(act[0]), hop_arg_node(act[1])};
    *mask = act[0] == NULL   ? act[1]
            : act[1] == NULL ? act[0]
                             : hop_graph_call_op(g, HOP_OP_logical_and, both, 2);
    return *mask ? HOP_OK : hop_error_code();
}

/* The loop's bound from a batched one, [B]: item(amin) for lower, item(amax)
 * for upper. */
static hop_node *
loop_bound(hop_graph *g, hop_node *b, bool upper)
{
    hop_arg dims[] = {hop_arg_int(0)};
    hop_node *r = hop_graph_call_op(
        g, upper ? HOP_OP_amax : HOP_OP_amin,
        (hop_arg[]){hop_arg_node(b), hop_arg_list(dims, 1), hop_arg_bool(false)}, 3);
    return r ? hop_graph_call_op(g, HOP_OP_item, (hop_arg[]){hop_arg_node(r)}, 1) : NULL;
}

/* The step of batched bounds (bnd: NULL where a bound is not batched),
 * masked per lane by them (bound_lanes), which it takes as extra lifted
 * values. */
static hop_status
bound_bodies(void *bnd, hop_batch_ctx *cx, const hop_node *call, const bool *batched,
             hop_span carries, hop_build *b)
{
    hop_batch_lanes lanes = {bound_lanes, NULL, 2, (const char *[]){"lower", "upper"}, bnd};
    hop_graph *fb = NULL;
    hop_status st = hop_batch_masked_body(cx, hop_node_body(call, "body_fun"), batched, carries.at,
                                          &lanes, &fb);
    return st == HOP_OK ? hop_build_use_body(b, "body_fun", fb) : st;
}

/* The leads of batched bounds bnd: the loop runs over [min lower, max
 * upper), each batched bound passed as an extra lifted value after the
 * call's own; no example (a batch of size 0) runs no iteration (and takes
 * no min or max of nothing). */
static hop_status
bound_leads(void *arg, hop_batch_ctx *cx, const hop_node *call, hop_build *b)
{
    hop_node *const *bnd = arg;
    int64_t size;
    bool none = hop_expr_const_value(hop_batch_size(cx), &size) && size == 0;
    const char *names[2] = {"lower", "upper"};
    hop_status st = HOP_OK;
    for (int k = 0; k < 2 && st == HOP_OK; k++) {
        hop_arg bound = *hop_node_param(call, names[k]);
        if (bound.kind == HOP_ARG_NODE)
            bound = hop_arg_node(hop_batch_value(cx, bound.u.node, NULL));
        if (bnd[k] != NULL && (st = hop_build_operand(b, HOP_SPAN_LIFTED, bnd[k])) == HOP_OK) {
            hop_node *v = none ? NULL : loop_bound(hop_batch_out(cx), bnd[k], k == 1);
            if (v == NULL && !none)
                st = hop_error_code();
            bound = v ? hop_arg_node(v) : bound;
        }
        if (st == HOP_OK)
            st = hop_build_lead(b, names[k], none ? hop_arg_int(0) : bound);
    }
    return st;
}

/*
 * A batched carry, lifted value or bound: the same loop over the body
 * batched (hop_loop_batch: a carry is batched when its init is or the body
 * makes it so).  A batched bound (an int tensor bound the vmapped function
 * reads per example: its `item` is deferred to here,
 * HOP_PARAM_BATCHED_ITEM) is one loop over [min lower, max upper) whose
 * index stays unbatched, every carry batched and masked per lane
 * (hop_loop_batch_masked); a SymInt carry then cannot differ per example:
 * HOP_UNSUPPORTED.
 */
static hop_status
fori_batch(hop_batch_ctx *cx, const hop_node *call)
{
    const char *names[2] = {"lower", "upper"};
    hop_node *bnd[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        const hop_arg *bound = hop_node_param(call, names[k]);
        bool b = false;
        hop_node *v = bound->kind == HOP_ARG_NODE ? hop_batch_value(cx, bound->u.node, &b) : NULL;
        bnd[k] = b ? v : NULL;
    }
    if (bnd[0] == NULL && bnd[1] == NULL)
        return hop_loop_batch(cx, call, "body_fun", "init_val", NULL, NULL);
    for (size_t j = 0; j < call->nouts; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "vmap: fori_loop (%s) with a batched bound carries a SymInt "
                             "(carry %zu), which cannot differ per example",
                             call->name, j);
    hop_loop_lanes lanes = {bound_bodies, bound_leads, bnd};
    return hop_loop_batch_masked(cx, call, "init_val", &lanes);
}

const hop_class hop_fori_loop_class = {
    .name = "fori_loop",
    .params = {{"lower", HOP_PARAM_VALUE, NULL, HOP_PARAM_BATCHED_ITEM},
               {"upper", HOP_PARAM_VALUE, NULL, HOP_PARAM_BATCHED_ITEM},
               {"body_fun", HOP_PARAM_BODY, "fori_loop_body"},
               {"init_val", HOP_PARAM_CARRY}},
    .doc = "fori_loop(lower, upper, body_fun, init_val): val = body_fun(i, val) for i in "
           "[lower, upper); returns the final val.  The bounds are ints or int scalar tensors.",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .guard_mode = HOP_GUARDS_BODY,
    .made_inputs = 1,
    .check_operands = fori_check_operands,
    .body_inputs = fori_body_inputs,
    .check_outputs = fori_check_outputs,
    .output_meta = fori_output_meta,
    .installed = hop_call_bind_outputs,
    .verify = fori_verify,
    .lower = fori_lower,
    .eval = fori_eval,
    .vjp = fori_vjp,
    .jvp = fori_jvp,
    .reach = fori_reach,
    .batch = fori_batch,
};
