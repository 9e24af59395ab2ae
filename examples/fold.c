/*
 * examples/fold.c - a HOP defined in C, in one file, against the public API
 * only: fold(f, init, xs) is a left fold over the rows of xs,
 *
 *     carry = init;  for each row x of xs: carry = f(carry, x);  return carry
 *
 * with init and the result tuples of values of the same kinds and shapes.
 * It shows a HOP with two groups of operands (init, xs) whose body gets
 * explicit inputs (the carries, fresh in the body: a carry changes; the rows
 * as slices), its lifted values in a list of their own:
 * `fold(fold_body_0, (c,), (xs,), (w,))`.  Its checks, its eval loop, its
 * reverse and forward mode and its vmap are the loop kit's
 * (hop/loop_kit.h).
 */
#include <hop.h>

#include <string.h>

/* The operands, checked when traced and when a call node is verified. */
static hop_status
check_counts(size_t ninit, size_t nxs)
{
    if (ninit < 1 || nxs < 1)
        return hop_error(HOP_INVALID, "fold: needs at least one init value and one xs");
    return HOP_OK;
}

static hop_status
check_rows(size_t i, const hop_value_info *x, const hop_value_info *x0)
{
    if (x->kind != HOP_VALUE_TENSOR || x->meta.rank < 1 || x0->kind != HOP_VALUE_TENSOR ||
        x0->meta.rank < 1 || x->meta.sizes[0] != x0->meta.sizes[0])
        return hop_error(HOP_SHAPE, "fold: xs %zu must be a tensor with as many rows as xs 0", i);
    return HOP_OK;
}

/* Tracing: the rows are slices of the xs, the carries enter as they are. */
static hop_status
fold_check_operands(hop_call *c)
{
    size_t ninit, nxs;
    hop_node *const *xs = hop_call_group(c, "xs", &nxs);
    hop_call_group(c, "init", &ninit);
    hop_status st = check_counts(ninit, nxs);
    for (size_t i = 0; i < nxs && st == HOP_OK; i++)
        st = check_rows(i, xs[i]->meta, xs[0]->meta);
    return st == HOP_OK ? hop_prim_hop_base()->check_operands(c) : st;
}

static hop_status
fold_body_inputs(hop_call *c)
{
    size_t ninit, nxs;
    hop_call_group(c, "init", &ninit);
    hop_call_group(c, "xs", &nxs);
    hop_status st = hop_prim_hop_base()->body_inputs(c);
    return st == HOP_OK ? hop_call_slice_inputs(c, ninit, nxs, 0) : st;
}

/* The body returns the next carries, each like the one it replaces: sizes
 * decided equal (a size symbol and a constant may be, with a guard), the
 * loop kit's check (hop/loop_kit.h). */
static hop_status
fold_output_meta(hop_call *c)
{
    size_t ninit;
    hop_call_group(c, "init", &ninit);
    hop_status st = hop_call_check_carries(c, 0, 0, ninit, false, "f");
    return st == HOP_OK ? hop_prim_hop_base()->output_meta(c) : st;
}

/* Verifying: the operands as tracing checks them, the carries as the
 * outputs, and f over rows (the base checks the rest of its inputs and its
 * outputs against the carries). */
static bool
row_of_xs(void *ud, const hop_node *call, size_t body, size_t j, hop_value_info *want)
{
    const size_t *range = ud; /* the xs: passed values [range[0], range[1]) */
    (void)call, (void)body;
    if (j >= range[0] && j < range[1])
        *want = hop_value_info_drop_dim(want, 0);
    return true;
}

static hop_status
fold_verify(const hop_node *call)
{
    size_t ninit, nxs;
    const hop_arg *xs = hop_node_group(call, "xs", &nxs);
    hop_node_group(call, "init", &ninit);
    hop_status st = check_counts(ninit, nxs);
    for (size_t i = 0; i < nxs && st == HOP_OK; i++)
        st = xs[i].kind == HOP_ARG_NODE && xs[0].kind == HOP_ARG_NODE
                 ? check_rows(i, xs[i].u.node->meta, xs[0].u.node->meta)
                 : hop_error(HOP_SHAPE, "fold: xs %zu must be a tensor", i);
    if (st != HOP_OK)
        return hop_verify_error(call, st);
    size_t range[2] = {ninit, ninit + nxs};
    st = hop_verify_carries(call, "init", false);
    return st == HOP_OK ? hop_verify_bodies(call, row_of_xs, NULL, range) : st;
}

/* Lowering: the carries live in the call's outputs; per row, f writes the
 * next ones into a second set of buffers, copied back after the row. */
static hop_status
fold_lower(hop_lower_ctx *cx, const hop_node *call)
{
    size_t n, ninit, nxs, no = call->nouts;
    const hop_graph *f = hop_node_body(call, "f");
    const hop_arg *xs = hop_node_group(call, "xs", &nxs);
    hop_node_group(call, "init", &ninit);
    hop_pval *in = hop_lower_passed(cx, call, &n), *carry = hop_lower_outputs(cx, true);
    hop_pval *next = hop_lower_pvals(cx, no), *got = hop_lower_pvals(cx, no), *body_in;
    if (f == NULL || xs == NULL || in == NULL || carry == NULL || next == NULL || got == NULL ||
        (body_in = hop_lower_pvals(cx, n)) == NULL)
        return hop_error_code();
    hop_status st = HOP_OK;
    for (size_t j = 0; j < no && st == HOP_OK; j++) {
        if ((st = hop_lower_copy(cx, carry[j], in[j])) == HOP_OK)
            st = hop_lower_tensor(cx, &call->outs[j], true, &next[j]);
    }
    hop_arg rows = hop_arg_sym(xs[0].u.node->meta->meta.sizes[0]);
    hop_pval count, i;
    if (st == HOP_OK && (st = hop_lower_arg(cx, &rows, &count)) == HOP_OK)
        st = hop_lower_loop_begin(cx, count, &i);
    for (size_t k = 0; k < n && st == HOP_OK; k++)
        st = k < ninit         ? (body_in[k] = carry[k], HOP_OK)
             : k < ninit + nxs ? hop_lower_select(cx, in[k], i, &body_in[k])
                               : (body_in[k] = in[k], HOP_OK);
    if (st == HOP_OK)
        st = hop_lower_inline(cx, f, body_in, n, next, got, no);
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        st = hop_lower_copy(cx, carry[j], got[j]);
    if (st == HOP_OK)
        st = hop_lower_loop_end(cx);
    return st == HOP_OK ? hop_lower_results(cx, carry, no) : st;
}

/* Eval: the same loop on concrete values, the loop kit's carry-evaluation
 * loop (a host f is checked per row with tracing's message). */
static hop_status
fold_eval(hop_eval_ctx *ex)
{
    size_t nxs;
    const hop_rt_value *xs = hop_eval_group(ex, "xs", &nxs);
    int64_t rows = nxs && xs[0].tensor ? xs[0].tensor->sizes[0] : 0;
    hop_eval_loop l;
    hop_status st = hop_eval_loop_begin(ex, 0, "init", &l);
    for (int64_t r = 0; r < rows && st == HOP_OK; r++) {
        hop_rt_values sel = {NULL, 0, 0}; /* row r of each xs, after the carries */
        st = hop_eval_loop_slice(&l, xs, nxs, 0, r, &sel);
        if (st == HOP_OK)
            st = hop_eval_loop_next(&l, "f", "f");
        hop_rt_values_clear(&sel);
    }
    return hop_eval_loop_end(&l, st);
}

/* Reverse mode: the loop kit's, an augmented forward scan over the rows
 * that stacks the carries, then a scan the other way running f's vjp. */
static hop_status
fold_vjp(hop_vjp_ctx *cx, const hop_node *call)
{
    hop_loop loop = {.call = call, .body = "f", .carries = "init", .xs = "xs", .length = -1};
    return hop_loop_vjp(cx, &loop);
}

/* Forward mode: fold again, each group followed by its tangents, over f's
 * tangent twin (fold takes any number of carries and xs). */
static hop_status
fold_jvp(hop_jvp_ctx *cx, const hop_node *call)
{
    return hop_loop_jvp(cx, call, "f", "init");
}

/* vmap: fold again over f batched, a carry batched where the batch reaches
 * it, a batched xs's rows batched. */
static hop_status
fold_batch(hop_batch_ctx *cx, const hop_node *call)
{
    return hop_loop_batch(cx, call, "f", "init", "xs", NULL);
}

static const hop_class fold_class = {
    .name = "fold",
    .params = {{"f", HOP_PARAM_BODY, "fold_body"},
               {"init", HOP_PARAM_CARRY},
               {"xs", HOP_PARAM_VALUES}},
    .doc = "fold(f, init, xs): carry = init; carry = f(carry, x) for each row x of xs; the final "
           "carry.",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .check_operands = fold_check_operands,
    .body_inputs = fold_body_inputs,
    .output_meta = fold_output_meta,
    .verify = fold_verify,
    .lower = fold_lower,
    .eval = fold_eval,
    .vjp = fold_vjp,
    .jvp = fold_jvp,
    .batch = fold_batch,
};

static hop_status
fold_init(void)
{
    return hop_register_hop(&fold_class);
}

HOP_LIBRARY(fold_init);
