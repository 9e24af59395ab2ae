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
#include "hop/batching.h"
#include "hop/hop_impl.h"
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

static hop_status
cond_check_outputs(hop_call *c)
{
    const hop_values *t = &c->results[0], *f = &c->results[1];
    if (t->n != f->n)
        return hop_error(HOP_TRACE,
                         "cond: the true branch returns %zu value%s but the false "
                         "branch returns %zu",
                         t->n, t->n == 1 ? "" : "s", f->n);
    for (size_t i = 0; i < t->n; i++) {
        const hop_value_info *a = t->items[i]->meta, *b = f->items[i]->meta;
        bool same = a->kind == b->kind;
        if (same && a->kind == HOP_VALUE_TENSOR)
            same = a->meta.dtype == b->meta.dtype && a->meta.rank == b->meta.rank;
        if (!same) {
            char x[128], y[128];
            hop_value_info_print(a, x, sizeof x);
            hop_value_info_print(b, y, sizeof y);
            return hop_error(HOP_TRACE,
                             "cond: output %zu of the true branch is %s but the false "
                             "branch gives %s",
                             i, x, y);
        }
    }
    return HOP_OK;
}

static bool
graph_has_guard(const hop_graph *g, const hop_expr *cond)
{
    for (size_t i = 0; i < g->nguards; i++)
        if (g->guards[i] == cond)
            return true;
    return false;
}

/* A size both branches agree on, else a fresh unbacked symbol. */
static const hop_expr *
merge_size(hop_call *c, const hop_expr *a, const hop_expr *b)
{
    if (a == b)
        return a;
    hop_shape_env *env = hop_output_graph_env(c->og);
    /* A guard may already equate them (s1 == 4 once a branch broadcast a
     * dynamic dim against a static tensor): then they are one size, and an
     * unbacked symbol would make later uses undecidable.  A guard of the
     * caller holds whichever branch runs.  One of a branch's own guards
     * holds only when that branch runs, and then the other branch's size is
     * right too, so that one is the merged size. */
    const hop_expr *eq = hop_sym_eq(env, a, b);
    if (eq == NULL)
        return NULL;
    for (size_t i = 0, n = hop_shape_env_nguards(env); i < n; i++) {
        if (hop_shape_env_guard(env, i) == eq)
            return a;
    }
    if (graph_has_guard(c->graphs[0], eq))
        return b;
    if (graph_has_guard(c->graphs[1], eq))
        return a;
    int64_t alo, ahi, blo, bhi;
    hop_shape_env_bounds(env, a, &alo, &ahi);
    hop_shape_env_bounds(env, b, &blo, &bhi);
    return hop_shape_env_unbacked(env, alo < blo ? alo : blo, ahi > bhi ? ahi : bhi);
}

static hop_status
cond_output_meta(hop_call *c)
{
    const hop_values *t = &c->results[0], *f = &c->results[1];
    hop_status st = hop_prim_hop_base()->output_meta(c); /* copies the true branch's */
    if (st != HOP_OK)
        return st;
    for (size_t i = 0; i < t->n; i++) {
        hop_value_info *o = &c->outs[i];
        const hop_value_info *b = f->items[i]->meta;
        if (o->kind == HOP_VALUE_SYM) {
            o->sym = merge_size(c, o->sym, b->sym);
            if (o->sym == NULL)
                return hop_error_code();
            continue;
        }
        for (int d = 0; d < o->meta.rank; d++) {
            o->meta.sizes[d] = merge_size(c, o->meta.sizes[d], b->meta.sizes[d]);
            if (o->meta.sizes[d] == NULL)
                return hop_error_code();
        }
    }
    return HOP_OK;
}

/* Binds, in the parent, the unbacked symbols the merged outputs introduced. */
static hop_status
cond_installed(hop_call *c)
{
    const hop_values *t = &c->results[0];
    for (size_t i = 0; i < c->nouts; i++) {
        hop_node *item = c->outputs->items[c->outputs->n - c->nouts + i];
        const hop_value_info *o = &c->outs[i];
        if (o->kind == HOP_VALUE_SYM) {
            if (o->sym != t->items[i]->meta->sym &&
                hop_tracer_bound_symbol(c->parent, o->sym) == NULL &&
                hop_tracer_bind_value(c->parent, o->sym, item) != HOP_OK)
                return hop_error_code();
            continue;
        }
        for (int d = 0; d < o->meta.rank; d++) {
            const hop_expr *s = o->meta.sizes[d];
            if (hop_expr_kind_of(s) != HOP_EXPR_SYMBOL || !hop_symbol_is_unbacked(s) ||
                hop_tracer_bound_symbol(c->parent, s))
                continue;
            hop_arg args[] = {hop_arg_node(item), hop_arg_int(d)};
            if (hop_tracer_call_op(c->parent, HOP_OP_sym_size, args, 2) == NULL)
                return hop_error_code();
        }
    }
    return HOP_OK;
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
    size_t n;
    const hop_rt_value *in = hop_eval_passed(ex, &n);
    hop_rt_values out = {NULL, 0, 0};
    st = hop_eval_body(ex, v ? "true_fn" : "false_fn", in, n, &out);
    if (st == HOP_OK)
        st = hop_eval_results(ex, &out);
    hop_rt_values_clear(&out);
    return st;
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
    .output_meta = cond_output_meta,
    .installed = cond_installed,
    .verify = cond_verify,
    .lower = cond_lower,
    .eval = cond_eval,
    .vjp = hop_vjp_bodies,
    .jvp = hop_jvp_bodies,
    .batch = hop__cond_batch,
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
