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
 * `fold(fold_body_0, (c,), (xs,), (w,))`.
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
    for (size_t i = ninit; i < ninit + nxs && st == HOP_OK; i++) {
        hop_meta *m = &c->input_meta[i].meta;
        memmove(m->sizes, m->sizes + 1, (size_t)(m->rank - 1) * sizeof *m->sizes);
        m->rank--;
    }
    return st;
}

/* The body returns the next carries, each like the one it replaces: sizes
 * decided equal (a size symbol and a constant may be, with a guard). */
static hop_status
fold_output_meta(hop_call *c)
{
    size_t ninit;
    hop_node *const *init = hop_call_group(c, "init", &ninit);
    const hop_values *r = &c->results[0];
    for (size_t i = 0; i < ninit; i++) {
        bool same = false;
        hop_status st = i < r->n
                            ? hop_value_info_decide_same(hop_output_graph_env(c->og), init[i]->meta,
                                                         r->items[i]->meta, "fold", &same)
                            : HOP_OK;
        if (st != HOP_OK)
            return st;
        if (same)
            continue;
        char want[96], got[96] = "nothing";
        hop_value_info_print(init[i]->meta, want, sizeof want);
        if (i < r->n)
            hop_value_info_print(r->items[i]->meta, got, sizeof got);
        return hop_error(HOP_TRACE, "fold: carry %zu enters as %s but f returns %s", i, want, got);
    }
    if (r->n != ninit)
        return hop_error(HOP_TRACE, "fold: f returns %zu values for %zu carries", r->n, ninit);
    return hop_prim_hop_base()->output_meta(c);
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

/* Eval: the same loop on concrete values (a host f is checked per row). */
static hop_status
fold_eval(hop_eval_ctx *ex)
{
    size_t n, ninit, nxs;
    const hop_rt_value *passed = hop_eval_passed(ex, &n);
    const hop_rt_value *xs = hop_eval_group(ex, "xs", &nxs);
    hop_eval_group(ex, "init", &ninit);
    hop_rt_value *in = hop_calloc(n + 1, sizeof *in);
    hop_rt_values carry = {NULL, 0, 0};
    hop_status st = in ? HOP_OK : hop_error_code();
    for (size_t k = 0; k < n && st == HOP_OK; k++)
        in[k] = passed[k];
    for (size_t k = 0; k < ninit && st == HOP_OK; k++)
        st = hop_rt_values_push(
            &carry,
            (hop_rt_value){passed[k].kind, hop_tensor_retain(passed[k].tensor), passed[k].i});
    int64_t rows = nxs && xs[0].tensor ? xs[0].tensor->sizes[0] : 0;
    for (int64_t r = 0; r < rows && st == HOP_OK; r++) {
        hop_rt_values next = {NULL, 0, 0}, sel = {NULL, 0, 0};
        for (size_t k = 0; k < nxs && st == HOP_OK; k++) {
            hop_rt_arg a[] = {hop_rt_tensor(xs[k].tensor), hop_rt_int(0), hop_rt_int(r)};
            hop_rt_value v;
            if ((st = hop_eager(HOP_OP_select, a, 3, &v)) == HOP_OK)
                st = hop_rt_values_push(&sel, v);
        }
        for (size_t k = 0; k < n && st == HOP_OK; k++)
            in[k] = k < ninit ? carry.items[k] : k < ninit + nxs ? sel.items[k - ninit] : passed[k];
        if (st == HOP_OK)
            st = hop_eval_body(ex, "f", in, n, &next);
        if (st == HOP_OK && next.n != ninit)
            st = hop_error(HOP_TRACE, "fold: f returns %zu values for %zu carries", next.n, ninit);
        for (size_t k = 0; k < ninit && st == HOP_OK; k++) {
            char want[96], got[96];
            hop_eval_describe(&passed[k], want, sizeof want);
            hop_eval_describe(&next.items[k], got, sizeof got);
            if (strcmp(want, got) != 0)
                st = hop_error(HOP_TRACE, "fold: carry %zu enters as %s but f returns %s", k, want,
                               got);
        }
        hop_rt_values_clear(&sel);
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
};

static hop_status
fold_init(void)
{
    return hop_register_hop(&fold_class);
}

HOP_LIBRARY(fold_init);
