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
#include "hop/autodiff.h"
#include "hop/batching.h"
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
        st = hop_rt_values_push(
            &carry,
            (hop_rt_value){passed[i].kind, hop_tensor_retain(passed[i].tensor), passed[i].i});
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
 * The counting twin of body f (cond_fn or body_fn), installed in g: inputs
 * (c..., k, L...) with k an i64 scalar; cond_fn's twin returns f's
 * predicate, body_fn's f's carries and k + 1.
 */
static hop_graph *
counting_body(hop_graph *g, const hop_graph *f, size_t nc, bool step)
{
    char base[256];
    snprintf(base, sizeof base, "%s_count", f->name);
    hop_graph *t = hop_graph_new_subgraph(g, base);
    size_t nph = f->nplaceholders, nout = f->output ? f->output->nargs : 0;
    hop_node **v = hop_calloc(2 * nph + nout + 4, sizeof *v);
    hop_arg *o = hop_calloc(nout + 2, sizeof *o);
    hop_value_info km = {.kind = HOP_VALUE_TENSOR};
    hop_status st = t && v && o ? hop_meta_init(&km.meta, g->env, HOP_I64, 0, NULL) : HOP_NOMEM;
    hop_node **in = v, *k = NULL, **outs = v + nph + 1;
    for (size_t i = 0; i <= nph && st == HOP_OK; i++) {
        const hop_node *p = i == nc ? NULL : hop_graph_placeholder_at(f, i < nc ? i : i - 1);
        hop_node *q = hop_graph_placeholder(t, p ? p->name : "k", p ? p->meta : &km);
        if (q == NULL)
            st = hop_error_code();
        else if (p)
            in[i < nc ? i : i - 1] = q;
        else
            k = q;
    }
    if (st == HOP_OK)
        st = hop_graph_inline(t, f, in, outs);
    for (size_t j = 0; j < nout; j++)
        o[j] = hop_arg_node(outs[j]);
    hop_node *k1 = NULL;
    if (st == HOP_OK && step &&
        (k1 = hop_graph_call_op(t, HOP_OP_add, (hop_arg[]){hop_arg_node(k), hop_arg_int(1)}, 2)) ==
            NULL)
        st = hop_error_code();
    if (k1)
        o[nout++] = hop_arg_node(k1);
    if (st == HOP_OK && hop_graph_output(t, o, nout) == NULL)
        st = hop_error_code();
    if (st == HOP_OK)
        st = hop_graph_add_subgraph(g, t);
    hop_free(v);
    hop_free(o);
    if (st != HOP_OK) {
        hop_graph_free(t);
        return NULL;
    }
    return t;
}

/*
 * Reverse mode with stored carries: a counting copy of the loop finds its
 * number of steps n (an unbacked SymInt, n >= 0); then the loop's vjp is a
 * counted loop's (hop_vjp_counted_loop): a forward scan of n steps stacks
 * the carries, a reverse scan runs body_fn's backward.  The forward runs
 * three times (the loop, the count, the augmented scan) and the carries take
 * n times their size; cond_fn gets no gradient (its value is a bool).
 */
static hop_status
while_vjp(hop_vjp_ctx *cx, const hop_node *call)
{
    size_t nc, nl;
    const hop_arg *init = hop_node_group(call, "carried_inputs", &nc);
    const hop_arg *lifted = hop_node_lifted(call, &nl);
    const hop_graph *cf = hop_node_body(call, "cond_fn"), *bf = hop_node_body(call, "body_fn");
    for (size_t j = 0; j < nc; j++)
        if (call->outs[j].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_UNSUPPORTED,
                             "autodiff: while_loop %s carries a SymInt (carry %zu); its vjp needs "
                             "tensor carries",
                             call->name, j);
    hop_graph *g = hop_vjp_out(cx);
    hop_graph *tc = counting_body(g, cf, nc, false);
    hop_graph *tb = tc ? counting_body(g, bf, nc, true) : NULL;
    hop_arg *items = hop_calloc(nc + nl + 2, sizeof *items);
    hop_value_info *outs = hop_calloc(nc + 2, sizeof *outs);
    hop_node *k0 = hop_graph_call_op(
        g, HOP_OP_full, (hop_arg[]){hop_arg_list(NULL, 0), hop_arg_int(0), hop_arg_dtype(HOP_I64)},
        3);
    hop_status st = tb && items && outs && k0 ? HOP_OK : hop_error_code();
    for (size_t i = 0; i < nc + nl && st == HOP_OK; i++) {
        hop_node *p = hop_vjp_primal(cx, (i < nc ? init[i] : lifted[i - nc]).u.node);
        items[i < nc ? i : i + 1] = hop_arg_node(p);
    }
    hop_node *loop = NULL, *n = NULL;
    if (st == HOP_OK) {
        items[nc] = hop_arg_node(k0);
        for (size_t j = 0; j < nc; j++)
            outs[j] = call->outs[j];
        outs[nc] = *k0->meta;
        hop_arg args[] = {hop_arg_graph(tc), hop_arg_graph(tb), hop_arg_list(items, nc + 1),
                          hop_arg_list(items + nc + 1, nl)};
        hop_node *k = (loop = hop_graph_call_hop(g, &hop_while_loop_class, args, 4, outs, nc + 1))
                          ? hop_graph_getitem(g, loop, nc)
                          : NULL;
        n = k ? hop_graph_call_op(g, HOP_OP_item, (hop_arg[]){hop_arg_node(k)}, 1) : NULL;
        st = n ? hop_shape_env_constrain(g->env, n->meta->sym, 0, INT64_MAX) : hop_error_code();
    }
    hop_free(items);
    hop_free(outs);
    if (st != HOP_OK)
        return st;
    hop_arg lo = hop_arg_int(0), hi = hop_arg_node(n);
    return hop_vjp_counted_loop(cx, call, bf, false, &lo, &hi, init, nc, lifted, nl);
}

/* while_loop(cond_jvp, body_jvp, (c..., dc...), (L..., dL...)): cond_fn
 * reads the primal carries only. */
static hop_status
while_jvp(hop_jvp_ctx *cx, const hop_node *call)
{
    size_t nc, nl;
    const hop_arg *init = hop_node_group(call, "carried_inputs", &nc);
    const hop_arg *lifted = hop_node_lifted(call, &nl);
    hop_jvp_loop_parts p;
    hop_status st = hop_jvp_loop(cx, call, hop_node_body(call, "body_fn"),
                                 hop_node_body(call, "cond_fn"), 0, init, nc, lifted, nl, &p);
    if (st != HOP_OK)
        return st;
    hop_arg *items = hop_calloc(p.ncarries + p.nlifted + 1, sizeof *items);
    if (items == NULL) {
        hop_jvp_loop_parts_clear(&p);
        return HOP_NOMEM;
    }
    for (size_t k = 0; k < p.ncarries; k++)
        items[k] = hop_arg_node(p.carries[k]);
    for (size_t k = 0; k < p.nlifted; k++)
        items[p.ncarries + k] = hop_arg_node(p.lifted[k]);
    hop_arg args[] = {hop_arg_graph(p.cond), hop_arg_graph(p.body), hop_arg_list(items, p.ncarries),
                      hop_arg_list(items + p.ncarries, p.nlifted)};
    hop_node *loop =
        hop_graph_call_hop(hop_jvp_out(cx), &hop_while_loop_class, args, 4, p.outs, p.ncarries);
    hop_free(items);
    return hop_jvp_loop_finish(cx, call, &p, loop, nc);
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

/*
 * A batched carry or lifted value.  The carries' batching is a fixed point
 * over body_fn (hop_batch_carries).  An unbatched predicate: the same loop
 * over both functions batched (the predicate stays a scalar).  A batched
 * predicate (a trip count per example): masked lanes (masked_cond and
 * hop_batch_masked_body); a SymInt carry then cannot differ per lane: the
 * loop fallback.
 */
static hop_status
while_batch(hop_batch_ctx *cx, const hop_node *call)
{
    hop_graph *g = hop_batch_out(cx);
    size_t nc, nl;
    const hop_arg *carries = hop_node_group(call, "carried_inputs", &nc);
    const hop_arg *lifted = hop_node_lifted(call, &nl);
    const hop_graph *cond = hop_node_body(call, "cond_fn"), *body = hop_node_body(call, "body_fn");
    size_t nph = nc + nl;
    if (body->nplaceholders != nph || cond->nplaceholders != nph)
        return hop_error(HOP_MISUSE, "vmap: while_loop %s: its functions do not take %zu inputs",
                         call->name, nph);
    bool *mask = hop_calloc(nph + 1, sizeof *mask), pred_b = false, out_no = false;
    hop_node **ops = hop_calloc(nph + 1, sizeof *ops);
    hop_arg *items = hop_calloc(nph + 1, sizeof *items);
    hop_value_info *outs = hop_calloc(call->nouts + 1, sizeof *outs);
    hop_graph *gc = NULL, *cv = NULL, *bv = NULL;
    hop_status st = mask && ops && items && outs ? HOP_OK : HOP_NOMEM;
    for (size_t i = 0; i < nph && st == HOP_OK; i++) {
        const hop_node *v = (i < nc ? carries[i] : lifted[i - nc]).u.node;
        if ((ops[i] = hop_batch_value(cx, v, &mask[i])) == NULL)
            st = hop_error(HOP_MISUSE, "vmap: operand %s of while_loop %s has no value", v->name,
                           call->name);
    }
    if (st == HOP_OK)
        st = hop_batch_carries(cx, body, mask, 0, nc);
    if (st == HOP_OK)
        st = hop_batch_depends(cx, cond, mask, &pred_b);
    for (size_t j = 0; j < nc && st == HOP_OK && pred_b; j++) {
        if (call->outs[j].kind != HOP_VALUE_TENSOR) {
            hop_free(mask);
            hop_free(ops);
            hop_free(items);
            hop_free(outs);
            return hop_batch_loop(cx, call);
        }
        mask[j] = true;
    }
    if (st == HOP_OK && !pred_b) {
        st = hop_batch_body_outs(cx, cond, mask, &out_no, &cv);
        if (st == HOP_OK)
            st = hop_batch_body_outs(cx, body, mask, mask, &bv);
    } else if (st == HOP_OK) {
        int *od = hop_calloc(nc + 2, sizeof *od); /* zeros: pred batched at 0 */
        char base[256];
        snprintf(base, sizeof base, "%s_vmap_pred", cond->name);
        if (od == NULL)
            st = HOP_NOMEM;
        else if ((gc = hop_graph_new_subgraph(g, base)) == NULL)
            st = hop_error_code();
        else
            st = hop_batch_graph(cx, cond, mask, od, gc);
        if (st == HOP_OK)
            st = masked_cond(cx, cond, gc, &cv);
        hop_batch_lanes lanes = {pred_lanes, gc, true, 0, NULL, NULL};
        if (st == HOP_OK)
            st = hop_batch_masked_body(cx, body, mask, 0, &lanes, &bv);
        hop_free(od);
    }
    for (size_t j = 0; j < nc && st == HOP_OK; j++) {
        bool b;
        hop_batch_value(cx, carries[j].u.node, &b);
        if (mask[j] && !b && (ops[j] = hop_batch_broadcast(cx, ops[j])) == NULL)
            st = hop_error_code();
    }
    for (size_t i = 0; i < nph && st == HOP_OK; i++)
        items[i] = hop_arg_node(ops[i]);
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        outs[j] = call->outs[j];
        if (mask[j]) {
            hop_meta *m = &outs[j].meta;
            memmove(m->sizes + 1, m->sizes, (size_t)m->rank * sizeof *m->sizes);
            m->sizes[0] = hop_batch_size(cx);
            m->rank++;
        }
    }
    hop_node *c = NULL;
    if (st == HOP_OK) {
        hop_arg args[] = {hop_arg_graph(cv), hop_arg_graph(bv), hop_arg_list(items, nc),
                          hop_arg_list(items + nc, nl)};
        if ((c = hop_graph_call_hop(g, &hop_while_loop_class, args, 4, outs, call->nouts)) == NULL)
            st = hop_error_code();
    }
    if (st == HOP_OK)
        st = hop_graph_rename_node(g, c, call->name);
    for (size_t j = 0; j < call->nouts && st == HOP_OK; j++) {
        hop_node *v = hop_graph_getitem(g, c, j);
        st = v ? hop_batch_set(cx, call, j, v, mask[j]) : hop_error_code();
    }
    hop_graph_free(gc);
    hop_free(mask);
    hop_free(ops);
    hop_free(items);
    hop_free(outs);
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
    .check_outputs = while_check_outputs,
    .output_meta = while_output_meta,
    .installed = hop_call_bind_outputs,
    .verify = while_verify,
    .body_nouts = while_body_nouts,
    .lower = while_lower,
    .eval = while_eval,
    .vjp = while_vjp,
    .jvp = while_jvp,
    .batch = while_batch,
};
