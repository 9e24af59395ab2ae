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
 * Lowering: a counted loop (no condition to evaluate per iteration) whose
 * index register is the body's i, carries double-buffered.  Eval: the same
 * loop on concrete values with the same checks.
 */
#include "hop/eval.h"
#include "hop/lowering.h"

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
        bool ok = v->kind == HOP_VALUE_TENSOR &&
                  (v->meta.dtype == HOP_I64 || v->meta.dtype == HOP_I32);
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
    hop_status st = hop_call_check_carries(c, 0, 1, n, "body_fun");
    if (st == HOP_OK && c->results[0].n != n)
        st = hop_error(HOP_TRACE, "%s: body_fun returns %zu values for %zu carries", c->cls->name,
                       c->results[0].n, n);
    return st;
}

static hop_status
fori_output_meta(hop_call *c)
{
    size_t n;
    hop_call_group(c, "init_val", &n);
    return hop_call_carry_outputs(c, 1, n, 0);
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
    hop_status st = lo.kind == HOP_PVAL_CONST && hi.kind == HOP_PVAL_CONST
                        ? (count = (hop_pval){HOP_PVAL_CONST, -1, hi.value - lo.value}, HOP_OK)
                        : hop_lower_int(cx, HOP_INT_SUB, hi, lo, &count);
    if (st == HOP_OK)
        st = hop_lower_loop_begin(cx, count, &k);
    /* i = lower + k: the counter itself when lower is 0. */
    if (st == HOP_OK)
        st = lo.kind == HOP_PVAL_CONST && lo.value == 0 ? (in[0] = k, HOP_OK)
                                                         : hop_lower_int(cx, HOP_INT_ADD, lo, k, &in[0]);
    for (size_t j = 0; j < n; j++)
        in[j + 1] = j < ncarry ? lc.cur[j] : passed[j];
    if (st == HOP_OK)
        st = hop_lower_inline(cx, body, in, n + 1, lc.next, lc.got, ncarry);
    if (st == HOP_OK)
        st = hop_lower_carry_next(cx, &lc);
    if (st == HOP_OK)
        st = hop_lower_loop_end(cx);
    if (st == HOP_OK)
        st = hop_lower_carry_end(cx, &lc);
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
    if (b.kind == HOP_OPND_TENSOR && (b.u.tensor->dtype == HOP_I64 || b.u.tensor->dtype == HOP_I32) &&
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
    size_t n, ncarry;
    const hop_rt_value *passed = hop_eval_passed(ex, &n);
    hop_eval_group(ex, "init_val", &ncarry);
    hop_status st = eval_bound(ex, "lower", &lo);
    if (st == HOP_OK)
        st = eval_bound(ex, "upper", &hi);
    hop_rt_value *in = st == HOP_OK ? hop_calloc(n + 2, sizeof *in) : NULL;
    if (in == NULL)
        return st == HOP_OK ? hop_error_code() : st;
    memcpy(in + 1, passed, n * sizeof *in);
    hop_rt_values carry = {NULL, 0, 0};
    for (size_t j = 0; j < ncarry && st == HOP_OK; j++)
        st = hop_rt_values_push(&carry, (hop_rt_value){passed[j].kind,
                                                       hop_tensor_retain(passed[j].tensor),
                                                       passed[j].i});
    for (int64_t i = lo; i < hi && st == HOP_OK; i++) {
        hop_rt_values next = {NULL, 0, 0};
        in[0] = (hop_rt_value){HOP_VALUE_SYM, NULL, i};
        for (size_t j = 0; j < ncarry; j++)
            in[j + 1] = carry.items[j];
        st = hop_eval_body(ex, "body_fun", in, n + 1, &next);
        if (st == HOP_OK)
            st = hop_eval_check_carries(ex, &next, passed, ncarry, "body_fun");
        if (st == HOP_OK && next.n != ncarry)
            st = hop_error(HOP_TRACE, "%s: body_fun returns %zu values for %zu carries",
                           hop_eval_class(ex)->name, next.n, ncarry);
        hop_rt_values_clear(st == HOP_OK ? &carry : &next);
        if (st == HOP_OK)
            carry = next;
    }
    hop_free(in);
    if (st == HOP_OK)
        st = hop_eval_results(ex, &carry);
    hop_rt_values_clear(&carry);
    return st;
}

const hop_class hop_fori_loop_class = {
    .name = "fori_loop",
    .params = {{"lower", HOP_PARAM_VALUE},
               {"upper", HOP_PARAM_VALUE},
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
    .lower = fori_lower,
    .eval = fori_eval,
};
