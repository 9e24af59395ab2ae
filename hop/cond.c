/*
 * hop/cond.c - cond(pred, true_fn, false_fn, operands): the branch pred
 * picks, run on the operands.
 *
 * Tracing: both branches are traced (inputs lifted on first use) and given
 * one merged signature by the PrimHOP base; their outputs must agree in
 * count, kind, dtype and rank, and sizes that differ become fresh unbacked
 * symbols.  A guard only one branch's tracing found stays with that branch
 * (HOP_GUARDS_BRANCH).  A pred known at trace time (a bool, a constant
 * SymBool) runs its branch inline, like Python's if.
 *
 * Lowering: `IfNot pred` over the true branch inlined, `Goto` over the false
 * branch inlined; each branch's results are moved (not copied) into the
 * call's results.  Eval: the chosen branch runs.
 */
#include "hop/autodiff.h"
#include "hop/branch_kit.h"
#include "hop/eval.h"
#include "hop/lowering.h"

#include <stdio.h>
#include <string.h>

/* --------------------------------------------------------------- tracing */

/* What a pred that is a value must be, when traced and when verified. */
static hop_status
check_pred_value(const char *name, const hop_value_info *m)
{
    if (hop_value_info_is_bool_scalar(m))
        return HOP_OK;
    char what[128];
    hop_value_info_print(m, what, sizeof what);
    return hop_error(HOP_DTYPE, "cond: pred must be a bool scalar tensor or a SymBool; got %s (%s)",
                     name, what);
}

static hop_status
cond_check_operands(hop_call *c)
{
    hop_arg *pred = hop_call_param(c, "pred");
    char what[128];
    int64_t value;
    switch (pred->kind) {
    case HOP_ARG_BOOL:
        c->inline_body = pred->u.b ? 0 : 1;
        break;
    case HOP_ARG_INT: /* Python's truth of an int */
        c->inline_body = pred->u.i ? 0 : 1;
        break;
    case HOP_ARG_SYM:
        if (!hop_expr_is_bool(pred->u.sym)) {
            hop_expr_print(pred->u.sym, what, sizeof what);
            return hop_error(HOP_DTYPE,
                             "cond: pred must be a bool scalar tensor or a SymBool; "
                             "got the SymInt %s",
                             what);
        }
        if (hop_expr_const_value(pred->u.sym, &value))
            c->inline_body = value ? 0 : 1;
        break;
    default: { /* a node */
        const hop_node *p = pred->u.node;
        if (check_pred_value(p->name, p->meta) != HOP_OK)
            return hop_error_code();
        hop_node *local = hop_tracer_lift(c->parent, pred->u.node);
        if (local == NULL)
            return hop_error(hop_error_code(), "cond: pred: %s", hop_error_message());
        *pred = hop_arg_node(local);
    }
    }
    return hop_prim_hop_base()->check_operands(c);
}

/* Outputs checked and merged by the branch kit (hop/branch_kit.h). */
static hop_status
cond_check_outputs(hop_call *c)
{
    static const char *const names[] = {"the true branch", "the false branch"};
    return hop_call_check_branches(c, names);
}

/* Binds, in the parent, the unbacked symbols the merged outputs introduced. */
static hop_status
cond_installed(hop_call *c)
{
    const hop_values *t = &c->results[0];
    for (size_t i = 0; i < c->nouts; i++) {
        hop_node *item = c->outputs->items[c->outputs->n - c->nouts + i];
        const hop_value_info *o = &c->outs[i];
        if (o->kind == HOP_VALUE_SYM && o->sym != t->items[i]->meta->sym &&
            hop_tracer_bound_symbol(c->parent, o->sym) == NULL &&
            hop_tracer_bind_value(c->parent, o->sym, item) != HOP_OK)
            return hop_error_code();
    }
    return hop_call_bind_output_sizes(c);
}

/* ------------------------------------------------------------- verifying */

/* pred is what check_operands leaves (a bool scalar or a SymBool; a bool or
 * an int, which tracing runs inline, lowers too); the rest is the base's:
 * the branches take what the call passes and return its outputs (sizes that
 * differ between branches are the outputs' unbacked symbols). */
static hop_status
cond_verify(const hop_node *call)
{
    const hop_arg *pred = hop_node_param(call, "pred");
    hop_status st = HOP_OK;
    if (pred->kind == HOP_ARG_NODE)
        st = check_pred_value(pred->u.node->name, pred->u.node->meta);
    else if (pred->kind == HOP_ARG_SYM && !hop_expr_is_bool(pred->u.sym))
        st = hop_error(HOP_DTYPE, "cond: pred must be a bool scalar tensor or a SymBool; got a "
                                  "SymInt");
    return st == HOP_OK ? hop_verify_default(call) : hop_verify_error(call, st);
}

/* -------------------------------------------------------------- running */

static hop_status
cond_lower(hop_lower_ctx *cx, const hop_node *call)
{
    const hop_graph *branch[2] = {hop_node_body(call, "true_fn"), hop_node_body(call, "false_fn")};
    const hop_arg *pred_arg = hop_node_param(call, "pred");
    if (branch[0] == NULL || branch[1] == NULL || pred_arg == NULL)
        return hop_error_code();
    size_t n, no = call->nouts;
    hop_pval pred, *in = hop_lower_passed(cx, call, &n);
    hop_pval *dests = in ? hop_lower_dests(cx) : NULL;
    hop_pval *res = dests ? hop_lower_pvals(cx, no) : NULL;
    hop_pval *got = res ? hop_lower_pvals(cx, no) : NULL;
    if (got == NULL)
        return hop_error_code();
    /* The results go to the caller's destinations when it has them (both
     * branches write there), else they stand for whichever branch ran. */
    hop_status st = HOP_OK;
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        st = dests[j].kind != HOP_PVAL_NONE ? (res[j] = dests[j], HOP_OK)
                                            : hop_lower_tensor(cx, &call->outs[j], false, &res[j]);
    if (st == HOP_OK && (st = hop_lower_arg(cx, pred_arg, &pred)) == HOP_OK)
        st = hop_lower_if(cx, pred);
    for (int b = 0; b < 2 && st == HOP_OK; b++) {
        if (b == 1 && (st = hop_lower_else(cx)) != HOP_OK)
            break;
        st = hop_lower_inline(cx, branch[b], in, n, dests, got, no);
        for (size_t j = 0; j < no && st == HOP_OK; j++)
            st = hop_lower_move(cx, res[j], got[j]);
    }
    if (st == HOP_OK && (st = hop_lower_end_if(cx)) == HOP_OK)
        st = hop_lower_results(cx, res, no);
    return st;
}

static hop_status
cond_eval(hop_eval_ctx *ex)
{
    hop_rt_arg pred;
    hop_status st = hop_eval_param(ex, "pred", &pred);
    if (st != HOP_OK)
        return st;
    int64_t v = pred.kind == HOP_OPND_BOOL ? pred.u.b : pred.u.i;
    if (pred.kind == HOP_OPND_TENSOR && (st = hop_tensor_item_int(pred.u.tensor, &v)) != HOP_OK)
        return st;
    return hop_eval_run_passed(ex, v ? "true_fn" : "false_fn", 0);
}

/* ------------------------------------------------------------------ vmap */

/* A batched predicate: the true branch's examples are where it holds, the
 * false branch's the others. */
static hop_status
cond_masks(hop_graph *g, hop_node *pred, size_t nb, hop_node **masks)
{
    (void)nb;
    hop_arg a = hop_arg_node(pred);
    masks[0] = pred;
    masks[1] = hop_graph_emit(g, HOP_OP_logical_not, &a, 1);
    return masks[1] ? HOP_OK : hop_error_code();
}

/* The branch kit's (hop/branch_kit.h): the same cond over the branches
 * batched, or with a batched predicate each example's own branch by select
 * or compaction (docs/VMAP.md). */
static hop_status
cond_batch(hop_batch_ctx *cx, const hop_node *call)
{
    return hop_batch_branches(cx, call, "pred", "predicate", cond_masks);
}

const hop_class hop_cond_class = {
    .name = "cond",
    .params = {{"pred", HOP_PARAM_VALUE},
               {"true_fn", HOP_PARAM_BODY, "cond_true"},
               {"false_fn", HOP_PARAM_BODY, "cond_false"},
               {"operands", HOP_PARAM_VALUES}},
    .doc = "cond(pred, true_fn, false_fn, operands): true_fn(*operands) if pred else "
           "false_fn(*operands); under tracing both branches become subgraphs cond_true_N and "
           "cond_false_N with one merged signature.",
    .input_mode = HOP_INPUTS_LIFTED,
    .guard_mode = HOP_GUARDS_BRANCH,
    .check_operands = cond_check_operands,
    .check_outputs = cond_check_outputs,
    .output_meta = hop_call_merge_branch_outputs,
    .installed = cond_installed,
    .verify = cond_verify,
    .lower = cond_lower,
    .eval = cond_eval,
    .vjp = hop_vjp_bodies,
    .jvp = hop_jvp_bodies,
    .batch = cond_batch,
};

hop_status
hop_cond(hop_output_graph *og, hop_arg pred, hop_body true_fn, hop_body false_fn,
         const hop_arg *operands, size_t noperands, hop_values *outputs)
{
    if (og == NULL || outputs == NULL || (noperands > 0 && operands == NULL))
        return hop_error(HOP_MISUSE, "hop_cond: NULL %s",
                         og == NULL        ? "output graph"
                         : outputs == NULL ? "outputs"
                                           : "operands");
    hop_arg args[] = {pred, hop_arg_list((hop_arg *)operands, noperands)};
    hop_body bodies[2] = {true_fn, false_fn};
    return hop_apply(og, &hop_cond_class, args, 2, bodies, 2, outputs);
}
