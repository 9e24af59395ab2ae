/*
 * hop/while_loop.c - while_loop(cond_fn, body_fn, carried_inputs): while
 * cond_fn(*carry) is true, carry = body_fn(*carry); the final carry.
 *
 * Tracing: both functions get the carries as explicit inputs (fresh: a carry
 * changes) and one merged signature, built as cond's (shared lifted values
 * sorted by name, then `_cond_branch`, then `_body_branch` ones); the node is
 * `while_loop(while_loop_cond_N, while_loop_body_N, (carries...),
 * (lifted...))`.  cond_fn must return one bool scalar; body_fn must return
 * each carry as it entered (dtype, rank, sizes), else an error names the
 * HOP, the carry and both metadata.  A guard a body's tracing found stays
 * with that body (it may not run).  A SymInt carry leaves as a fresh
 * unbacked symbol.
 *
 * Lowering: the carries live in two sets of buffers swapped per iteration
 * (no copy, no allocation per iteration, one Swap for all); cond_fn runs in
 * the plan and the loop stops when it says so, with no Python in between.
 * The loop is rotated (hop/lowering.h): entered at cond_fn, which follows
 * the body and branches back to it, so an iteration runs the body, one
 * Swap and one If (which also runs cond_fn's last fused group).  Eval: the same
 * loop on concrete values, with the same checks (for eager calls too).
 *
 * The checks are the carry helpers of hop/prim_hop.h and hop/eval.h, which
 * every loop HOP uses: messages name the HOP the user called.
 */
#include "hop/eval.h"
#include "hop/lowering.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- tracing */

static hop_status
while_check_outputs(hop_call *c)
{
    size_t n;
    hop_call_group(c, "carried_inputs", &n);
    hop_status st = hop_call_check_pred(c, 0, "cond_fn");
    return st == HOP_OK ? hop_call_check_carries(c, 1, 0, n, "body_fn") : st;
}

static hop_status
while_output_meta(hop_call *c)
{
    size_t n;
    hop_call_group(c, "carried_inputs", &n);
    return hop_call_carry_outputs(c, 0, n, 0);
}

/* ------------------------------------------------------------------- eval */

static hop_status
while_eval(hop_eval_ctx *ex)
{
    size_t n, ncarry;
    const hop_rt_value *passed = hop_eval_passed(ex, &n);
    hop_eval_group(ex, "carried_inputs", &ncarry);
    hop_rt_value *in = hop_calloc(n + 1, sizeof *in);
    hop_rt_values carry = {NULL, 0, 0};
    hop_status st = in ? HOP_OK : hop_error_code();
    for (size_t i = 0; i < n && st == HOP_OK; i++)
        in[i] = passed[i];
    for (size_t i = 0; i < ncarry && st == HOP_OK; i++)
        st = hop_rt_values_push(&carry, (hop_rt_value){passed[i].kind,
                                                       hop_tensor_retain(passed[i].tensor),
                                                       passed[i].i});
    while (st == HOP_OK) {
        hop_rt_values pred = {NULL, 0, 0}, next = {NULL, 0, 0};
        bool go = false;
        for (size_t i = 0; i < ncarry; i++)
            in[i] = carry.items[i];
        st = hop_eval_body(ex, "cond_fn", in, n, &pred);
        if (st == HOP_OK)
            st = hop_eval_pred(ex, &pred, "cond_fn", &go);
        hop_rt_values_clear(&pred);
        if (st != HOP_OK || !go)
            break;
        st = hop_eval_body(ex, "body_fn", in, n, &next);
        if (st == HOP_OK)
            st = hop_eval_check_carries(ex, &next, passed, ncarry, "body_fn");
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

/* --------------------------------------------------------------- lowering */

static hop_status
while_lower(hop_lower_ctx *cx, const hop_node *call)
{
    const hop_graph *cond = hop_node_body(call, "cond_fn"), *body = hop_node_body(call, "body_fn");
    size_t n;
    hop_pval *in = hop_lower_passed(cx, call, &n);
    hop_loop_carry lc;
    if (cond == NULL || body == NULL || in == NULL ||
        hop_lower_carry_begin(cx, call->outs, in, call->nouts, &lc) != HOP_OK)
        return hop_error_code();
    hop_pval pred;
    for (size_t i = 0; i < call->nouts; i++)
        in[i] = lc.cur[i];
    /* Rotated: the body, then the condition with the branch back to the
     * body (entered at the condition): one branch per iteration. */
    hop_status st = hop_lower_while_body(cx);
    if (st == HOP_OK)
        st = hop_lower_inline(cx, body, in, n, lc.next, lc.got, call->nouts);
    if (st == HOP_OK)
        st = hop_lower_carry_next(cx, &lc);
    if (st == HOP_OK)
        st = hop_lower_while_cond(cx);
    if (st == HOP_OK)
        st = hop_lower_inline(cx, cond, in, n, NULL, &pred, 1);
    if (st == HOP_OK)
        st = hop_lower_while_repeat(cx, pred);
    if (st == HOP_OK)
        st = hop_lower_carry_end(cx, &lc);
    return st == HOP_OK ? hop_lower_results(cx, lc.out, call->nouts) : st;
}

/* cond_fn returns one value, body_fn the carries (the call's outputs). */
static size_t
while_body_nouts(const hop_node *call, size_t body)
{
    return body == 0 ? 1 : call->nouts;
}

const hop_class hop_while_loop_class = {
    .name = "while_loop",
    .params = {{"cond_fn", HOP_PARAM_BODY, "while_loop_cond"},
               {"body_fn", HOP_PARAM_BODY, "while_loop_body"},
               {"carried_inputs", HOP_PARAM_CARRY}},
    .doc = "while_loop(cond_fn, body_fn, carried_inputs): while cond_fn(*carry) is true, carry "
           "= body_fn(*carry); returns the final carry.  cond_fn returns a bool scalar; body_fn "
           "returns each carry with the dtype and shape it entered with.",
    .input_mode = HOP_INPUTS_EXPLICIT,
    .guard_mode = HOP_GUARDS_BODY,
    .check_outputs = while_check_outputs,
    .output_meta = while_output_meta,
    .installed = hop_call_bind_outputs,
    .body_nouts = while_body_nouts,
    .lower = while_lower,
    .eval = while_eval,
};
