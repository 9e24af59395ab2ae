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
 * The checks are the loop kit's (hop/loop_kit.h), which
 * every loop HOP uses: messages name the HOP the user called.
 */
#include "hop/layout.h"
#include "hop/lowering.h"
#include "hop/loop_kit.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- tracing */

static hop_status
while_check_outputs(hop_call *c)
{
    size_t n;
    hop_call_group(c, "carried_inputs", &n);
    hop_status st = hop_call_check_pred(c, 0, "cond_fn");
    return st == HOP_OK ? hop_call_check_carries(c, 1, 0, n, false, "body_fn") : st;
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
    hop_eval_loop l;
    hop_status st = hop_eval_loop_begin(ex, 0, "carried_inputs", &l);
    while (st == HOP_OK) {
        hop_rt_values pred = {NULL, 0, 0};
        bool go = false;
        st = hop_eval_body(ex, "cond_fn", l.in, l.nin, &pred);
        if (st == HOP_OK)
            st = hop_eval_pred(ex, &pred, "cond_fn", &go);
        hop_rt_values_clear(&pred);
        if (st != HOP_OK || !go)
            break;
        st = hop_eval_loop_next(&l, "body_fn", "body_fn");
    }
    return hop_eval_loop_end(&l, st);
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

/* body_fn returns the call's outputs, the carries; cond_fn a bool scalar. */
static bool
body_fn_output(void *ud, const hop_node *call, size_t body, size_t i, hop_value_info *want)
{
    (void)ud, (void)call, (void)i, (void)want;
    return body == 1;
}

/* The carries leave as they entered (the outputs are the carries), both
 * functions take them and what the call passes, cond_fn returns a bool
 * scalar and body_fn the carries. */
static hop_status
while_verify(const hop_node *call)
{
    hop_status st = hop_verify_carries(call, "carried_inputs", false);
    if (st == HOP_OK)
        st = hop_verify_pred(call, "cond_fn", "cond_fn");
    return st == HOP_OK ? hop_verify_bodies(call, NULL, body_fn_output, NULL) : st;
}

/* --------------------------------------------------------------- autodiff */

/*
 * The counting twin t of body f (cond_fn or body_fn): its inputs are f's
 * with an i64 step counter k after the carries (c..., k, L...); cond_fn's
 * twin returns f's predicate, body_fn's (step) f's carries and k + 1.
 */
static hop_status
counting_twin(hop_build *b, hop_graph *t, const hop_graph *f, bool step)
{
    hop_span c = hop_build_span(b, "carried_inputs"), l = hop_build_span(b, HOP_SPAN_LIFTED);
    size_t nout = f->output->nargs;
    hop_node **in = hop_calloc(c.n + l.n + nout + 1, sizeof *in),
             **outs = in ? in + c.n - 1 + l.n : NULL;
    if (in == NULL)
        return hop_error_code();
    for (size_t j = 0; j + 1 < c.n; j++)
        in[j] = hop_graph_placeholder_at(t, c.at + j);
    hop_node *k = hop_graph_placeholder_at(t, c.at + c.n - 1);
    for (size_t j = 0; j < l.n; j++)
        in[c.n - 1 + j] = hop_graph_placeholder_at(t, l.at + j);
    hop_status st = hop_graph_inline(t, f, in, outs);
    for (size_t j = 0; j < nout && st == HOP_OK; j++)
        st = hop_build_output_of(b, t, outs[j]);
    if (st == HOP_OK && step) {
        hop_node *k1 =
            hop_graph_call_op(t, HOP_OP_add, (hop_arg[]){hop_arg_node(k), hop_arg_int(1)}, 2);
        st = k1 ? hop_build_output_of(b, t, k1) : hop_error_code();
    }
    hop_free(in);
    return st;
}

/* Inputs of group `group` of the loop b builds, like f's of span sp: the
 * primals of what call passes there. */
static hop_status
inputs_like(hop_vjp_ctx *cx, const hop_node *call, hop_build *b, const hop_graph *f,
            const char *group, hop_span sp)
{
    for (size_t j = sp.at; j < sp.at + sp.n; j++) {
        const hop_node *p = hop_graph_placeholder_at(f, j);
        hop_node *v = hop_vjp_primal(cx, hop_node_passed_to(call, j)->u.node);
        if (v == NULL || hop_build_input(b, group, v, p->name, p->meta) == NULL)
            return hop_error_code();
    }
    return HOP_OK;
}

/* The counting copy of the loop: while_loop over the counting twins from
 * (init..., 0), its step count n = item(k) (an unbacked SymInt, n >= 0). */
static hop_status
count_steps(hop_vjp_ctx *cx, const hop_node *call, hop_node **n)
{
    const hop_graph *cf = hop_node_body(call, "cond_fn"), *bf = hop_node_body(call, "body_fn");
    hop_graph *g = hop_vjp_out(cx);
    hop_layout l;
    hop_status st = hop_layout_of(call, &l);
    hop_span c = hop_layout_span(&l, "carried_inputs");
    hop_value_info km = {.kind = HOP_VALUE_TENSOR};
    hop_value_info *outs = hop_calloc(c.n + 2, sizeof *outs);
    char base[2][256];
    snprintf(base[0], sizeof base[0], "%s_count", cf->name);
    snprintf(base[1], sizeof base[1], "%s_count", bf->name);
    hop_build *b = st == HOP_OK && outs ? hop_build_new(g, &hop_while_loop_class) : NULL;
    hop_graph *tc = b ? hop_build_body(b, "cond_fn", base[0]) : NULL;
    hop_graph *tb = tc ? hop_build_body(b, "body_fn", base[1]) : NULL;
    st = tb ? hop_meta_init(&km.meta, g->env, HOP_I64, 0, NULL) : hop_error_code();
    hop_node *k0 =
        st == HOP_OK
            ? hop_graph_call_op(
                  g, HOP_OP_full,
                  (hop_arg[]){hop_arg_list(NULL, 0), hop_arg_int(0), hop_arg_dtype(HOP_I64)}, 3)
            : NULL;
    /* carried_inputs: the carries, then k; then the lifted values */
    if (k0 == NULL || inputs_like(cx, call, b, bf, "carried_inputs", c) != HOP_OK ||
        hop_build_input(b, "carried_inputs", k0, "k", &km) == NULL ||
        inputs_like(cx, call, b, bf, HOP_SPAN_LIFTED, hop_layout_span(&l, HOP_SPAN_LIFTED)) !=
            HOP_OK)
        k0 = NULL;
    if (st == HOP_OK && k0 == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = counting_twin(b, tc, cf, false);
    if (st == HOP_OK)
        st = counting_twin(b, tb, bf, true);
    hop_node *loop = NULL, *k = NULL;
    if (st == HOP_OK) {
        for (size_t j = 0; j < c.n; j++)
            outs[j] = call->outs[j];
        outs[c.n] = *k0->meta;
        loop = hop_build_emit(b, outs, c.n + 1);
        b = NULL;
        k = loop ? hop_graph_getitem(g, loop, c.n) : NULL;
        *n = k ? hop_graph_call_op(g, HOP_OP_item, (hop_arg[]){hop_arg_node(k)}, 1) : NULL;
        st = *n ? hop_shape_env_constrain(g->env, (*n)->meta->sym, 0, INT64_MAX) : hop_error_code();
    }
    hop_build_free(b);
    hop_free(outs);
    return st;
}

/*
 * Reverse mode with stored carries: a counting copy of the loop finds its
 * number of steps n (an unbacked SymInt, n >= 0); then the loop's vjp is a
 * counted loop's (the loop kit's hop_loop_vjp): a forward scan of n steps
 * stacks the carries, a reverse scan runs body_fn's backward.  The forward
 * runs three times (the loop, the count, the augmented scan) and the
 * carries take n times their size; cond_fn gets no gradient (its value is a
 * bool).
 */
static hop_status
while_vjp(hop_vjp_ctx *cx, const hop_node *call)
{
    for (size_t j = 0; j < call->nouts; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "autodiff: while_loop %s carries a SymInt (carry %zu); its vjp needs "
                             "tensor carries",
                             call->name, j);
    hop_node *n = NULL;
    hop_status st = count_steps(cx, call, &n);
    if (st != HOP_OK)
        return st;
    return hop_loop_vjp_counted(cx, call, "body_fn", "carried_inputs", hop_arg_int(0),
                                hop_arg_node(n));
}

/* while_loop(cond_jvp, body_jvp, (c..., dc...), (L..., dL...)): cond_fn
 * reads the primal carries only. */
static hop_status
while_jvp(hop_jvp_ctx *cx, const hop_node *call)
{
    return hop_loop_jvp(cx, call, "body_fn", "carried_inputs");
}

static hop_status
while_reach(const hop_node *call, const bool *from, bool *reached)
{
    return hop_loop_reach(call, "body_fn", "carried_inputs", from, reached);
}

/* ------------------------------------------------------------------ vmap */

/*
 * A batched predicate: every carry batched, and the loop runs until every
 * lane is done.  The new cond is any(pred over the batch) (masked_cond); the
 * new body computes pred per lane and keeps a finished lane's carries,
 * c' = where(pred, body(c), c) (hop_batch_masked_body, its mask cond_fn
 * batched, pred_lanes).  gc is cond_fn batched (every input per mask, its
 * output batched).
 */
static hop_status
pred_lanes(void *gc, hop_graph *g, hop_node *const *in, hop_node *const *extra, hop_node **mask)
{
    (void)extra;
    return hop_graph_inline(g, gc, in, mask);
}

static hop_status
masked_cond(hop_batch_ctx *cx, const hop_graph *cond, const hop_graph *gc, hop_graph **cv)
{
    hop_graph *g = hop_batch_out(cx);
    size_t nph = gc->nplaceholders;
    char base[256];
    hop_node **ph = hop_calloc(nph + 2, sizeof *ph), **o = ph ? ph + nph : NULL;
    if (ph == NULL)
        return HOP_NOMEM;
    snprintf(base, sizeof base, "%s_vmap", cond->name);
    hop_graph *ng = hop_graph_new_subgraph(g, base);
    hop_status st = ng ? HOP_OK : hop_error_code();
    for (size_t i = 0; i < nph && st == HOP_OK; i++)
        if ((ph[i] = hop_graph_placeholder(ng, hop_graph_placeholder_at(cond, i)->name,
                                           hop_graph_placeholder_at(gc, i)->meta)) == NULL)
            st = hop_error_code();
    if (st == HOP_OK)
        st = hop_graph_inline(ng, gc, ph, o);
    if (st == HOP_OK) {
        hop_arg dims[] = {hop_arg_int(0)};
        hop_arg a[] = {hop_arg_node(o[0]), hop_arg_list(dims, 1), hop_arg_bool(false)};
        hop_node *any = hop_graph_call_op(ng, HOP_OP_any, a, 3);
        hop_arg r = any ? hop_arg_node(any) : (hop_arg){0};
        if (any == NULL || hop_graph_output(ng, &r, 1) == NULL)
            st = hop_error_code();
    }
    if (st == HOP_OK && (st = hop_graph_add_subgraph(g, ng)) == HOP_OK)
        *cv = ng;
    else
        hop_graph_free(ng);
    hop_free(ph);
    return st;
}

/* The bodies of a batched predicate: cond_fn batched with its predicate
 * per lane (`<cond>_vmap_pred`, not installed: gc), any of it as the new
 * cond (masked_cond), body_fn masked per lane by it; the loop runs until
 * every lane is done. */
static hop_status
masked_bodies(void *arg, hop_batch_ctx *cx, const hop_node *call, const bool *batched,
              hop_span carries, hop_build *b)
{
    (void)arg;
    const hop_graph *cond = hop_node_body(call, "cond_fn"), *body = hop_node_body(call, "body_fn");
    int *od = hop_calloc(body->output->nargs + 2, sizeof *od); /* zeros: pred batched at 0 */
    char base[256];
    snprintf(base, sizeof base, "%s_vmap_pred", cond->name);
    hop_graph *gc = NULL, *cv = NULL, *bv = NULL;
    hop_status st = od ? HOP_OK : hop_error_code();
    if (st == HOP_OK && (gc = hop_graph_new_subgraph(hop_batch_out(cx), base)) == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = hop_batch_graph(cx, cond, batched, od, gc);
    if (st == HOP_OK)
        st = masked_cond(cx, cond, gc, &cv);
    hop_batch_lanes lanes = {pred_lanes, gc, 0, NULL, NULL};
    if (st == HOP_OK)
        st = hop_batch_masked_body(cx, body, batched, carries.at, &lanes, &bv);
    if (st == HOP_OK)
        st = hop_build_use_body(b, "cond_fn", cv);
    if (st == HOP_OK)
        st = hop_build_use_body(b, "body_fn", bv);
    hop_graph_free(gc);
    hop_free(od);
    return st;
}

/*
 * A batched carry or lifted value.  The carries' batching is a fixed point
 * over body_fn (hop_batch_carries).  An unbatched predicate: the same loop
 * over both functions batched (the predicate stays a scalar: the loop kit's
 * hop_loop_batch).  A batched predicate (a trip count per example): masked
 * lanes (hop_loop_batch_masked over masked_bodies); a SymInt carry then
 * cannot differ per lane: the loop fallback.
 */
static hop_status
while_batch(hop_batch_ctx *cx, const hop_node *call)
{
    const hop_graph *cond = hop_node_body(call, "cond_fn"), *body = hop_node_body(call, "body_fn");
    size_t nc, n = hop_node_passed(call, NULL, 0);
    hop_node_group(call, "carried_inputs", &nc);
    if (body->nplaceholders != n || cond->nplaceholders != n)
        return hop_error(HOP_MISUSE, "vmap: while_loop %s: its functions do not take %zu inputs",
                         call->name, n);
    bool *mask = hop_calloc(n + 1, sizeof *mask), pred_b = false;
    hop_node **ops = hop_calloc(n + 1, sizeof *ops);
    hop_status st = mask && ops ? hop_batch_operands(cx, call, ops, mask) : hop_error_code();
    if (st == HOP_OK)
        st = hop_batch_carries(cx, body, mask, 0, nc);
    if (st == HOP_OK)
        st = hop_batch_depends(cx, cond, mask, &pred_b);
    for (size_t j = 0; j < nc && st == HOP_OK && pred_b; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            st = HOP_UNSUPPORTED;
    if (st == HOP_UNSUPPORTED && pred_b)
        st = hop_batch_loop(cx, call);
    else if (st == HOP_OK)
        st = pred_b ? hop_loop_batch_masked(cx, call, "carried_inputs",
                                            &(hop_loop_lanes){masked_bodies, NULL, NULL})
                    : hop_loop_batch(cx, call, "body_fn", "carried_inputs", NULL, mask);
    hop_free(mask);
    hop_free(ops);
    return st;
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
    .flags = HOP_CLASS_MAY_NOT_END,
    .check_outputs = while_check_outputs,
    .output_meta = while_output_meta,
    .installed = hop_call_bind_outputs,
    .verify = while_verify,
    .body_nouts = while_body_nouts,
    .lower = while_lower,
    .eval = while_eval,
    .vjp = while_vjp,
    .jvp = while_jvp,
    .reach = while_reach,
    .batch = while_batch,
};
