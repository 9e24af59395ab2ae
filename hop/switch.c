/*
 * hop/switch.c - switch(index, branches, *operands): JAX's n-way cond,
 * branches[clamp(index, 0, n - 1)](*operands).
 *
 * Tracing: every branch is traced (inputs lifted on first use) and all get
 * one merged signature, built as cond's (shared lifted values sorted by
 * name, then those unique to each branch, suffixed `_branch<k>`); outputs
 * must agree in count, kind, dtype and rank across branches, and sizes that
 * differ become fresh unbacked symbols unless guards make them one (as
 * cond's: the caller's, or a branch's own for that branch's size).  A guard
 * only some branches' tracing found stays with them (HOP_GUARDS_BRANCH).  An
 * index known at trace time (an int, a constant SymInt) runs its branch
 * inline; a tensor index is read with item.  The node is
 * `switch(index, switch_branch_A, ..., switch_branch_Z, (merged...))`.
 *
 * Lowering: the index clamped in the plan, then a chain of tests over the
 * inlined branches; only the chosen one runs and its results are moved into
 * the call's.  Eval: the chosen branch runs.
 */
#include "hop/autodiff.h"
#include "hop/branch_kit.h"
#include "hop/eval.h"
#include "hop/lowering.h"

#include <inttypes.h>
#include <stdio.h>

/* ---------------------------------------------------------------- tracing */

static size_t
clamp(int64_t i, size_t n)
{
    return i < 0 ? 0 : (size_t)i >= n ? n - 1 : (size_t)i;
}

static hop_status
switch_check_operands(hop_call *c)
{
    hop_arg *index = hop_call_param(c, "index");
    int64_t v;
    char what[128] = "a bool";
    switch (index->kind) {
    case HOP_ARG_INT:
        c->inline_body = (int)clamp(index->u.i, c->nbodies);
        break;
    case HOP_ARG_SYM:
        if (hop_expr_is_bool(index->u.sym))
            return hop_error(HOP_DTYPE, "switch: index must be an int, got a SymBool");
        if (hop_expr_const_value(index->u.sym, &v))
            c->inline_body = (int)clamp(v, c->nbodies);
        break;
    case HOP_ARG_NODE: {
        const hop_value_info *m = index->u.node->meta;
        bool ok = m->kind == HOP_VALUE_SYM ? !hop_expr_is_bool(m->sym)
                                           : m->meta.dtype == HOP_I64 || m->meta.dtype == HOP_I32;
        int64_t numel = 1, k;
        for (int d = 0; ok && m->kind == HOP_VALUE_TENSOR && d < m->meta.rank; d++)
            ok = hop_expr_const_value(m->meta.sizes[d], &k) && (numel *= k) == 1;
        if (!ok) {
            hop_value_info_print(m, what, sizeof what);
            return hop_error(HOP_DTYPE, "switch: index must be an int scalar, got %s (%s)",
                             index->u.node->name, what);
        }
        /* A tensor index is read with item: the plan compares ints. */
        hop_node *local = hop_tracer_lift(c->parent, index->u.node);
        if (local && m->kind == HOP_VALUE_TENSOR)
            local = hop_tracer_call_op(c->parent, HOP_OP_item, (hop_arg[]){hop_arg_node(local)}, 1);
        if (local == NULL)
            return hop_error(hop_error_code(), "switch: index: %s", hop_error_message());
        *index = hop_arg_node(local);
        break;
    }
    default:
        return hop_error(HOP_DTYPE, "switch: index must be an int scalar, got %s", what);
    }
    return hop_prim_hop_base()->check_operands(c);
}

/* Outputs checked and merged by the branch kit (hop/branch_kit.h); the
 * installed slot binds the fresh symbols of SymInt outputs and sizes. */
static hop_status
switch_check_outputs(hop_call *c)
{
    return hop_call_check_branches(c, NULL);
}

static hop_status
switch_installed(hop_call *c)
{
    hop_status st = hop_call_bind_outputs(c);
    return st == HOP_OK ? hop_call_bind_output_sizes(c) : st;
}

/* ------------------------------------------------------------- verifying */

/* The index is what check_operands leaves: an int, a SymInt, or a SymInt
 * node (a tensor index was read with item); the rest is the base's, the
 * branches taking what the call passes and returning its outputs. */
static hop_status
switch_verify(const hop_node *call)
{
    const hop_arg *index = hop_node_param(call, "index");
    const hop_value_info *m = index->kind == HOP_ARG_NODE ? index->u.node->meta : NULL;
    bool ok = index->kind == HOP_ARG_INT ||
              (index->kind == HOP_ARG_SYM && !hop_expr_is_bool(index->u.sym)) ||
              (m && m->kind == HOP_VALUE_SYM && !hop_expr_is_bool(m->sym));
    if (ok)
        return hop_verify_default(call);
    char what[128] = "a bool";
    if (m)
        hop_value_info_print(m, what, sizeof what);
    else if (index->kind == HOP_ARG_SYM)
        snprintf(what, sizeof what, "a SymBool");
    return hop_verify_fail(call, "switch: index must be an int or a SymInt, got %s", what);
}

/* --------------------------------------------------------------- running */

static hop_status
switch_lower(hop_lower_ctx *cx, const hop_node *call)
{
    size_t nb, n, no = call->nouts;
    const hop_arg *branches = hop_node_bodies(call, "branches", &nb);
    const hop_arg *index_arg = hop_node_param(call, "index");
    hop_pval index, *in = hop_lower_passed(cx, call, &n), *dests = in ? hop_lower_dests(cx) : NULL;
    hop_pval *res = dests ? hop_lower_pvals(cx, no) : NULL,
             *got = res ? hop_lower_pvals(cx, no) : NULL;
    if (branches == NULL || index_arg == NULL || got == NULL)
        return hop_error_code();
    hop_status st = hop_lower_arg(cx, index_arg, &index);
    /* clamp(index, 0, nb - 1) */
    if (st == HOP_OK)
        st = hop_lower_int(cx, HOP_INT_MAX, index, (hop_pval){HOP_PVAL_CONST, -1, 0}, &index);
    if (st == HOP_OK)
        st = hop_lower_int(cx, HOP_INT_MIN, index, (hop_pval){HOP_PVAL_CONST, -1, (int64_t)nb - 1},
                           &index);
    for (size_t j = 0; j < no && st == HOP_OK; j++)
        st = dests[j].kind != HOP_PVAL_NONE ? (res[j] = dests[j], HOP_OK)
                                            : hop_lower_tensor(cx, &call->outs[j], false, &res[j]);
    /* if index == 0: branch 0 else if index == 1: ... else: the last */
    size_t open = 0;
    for (size_t b = 0; b < nb && st == HOP_OK; b++) {
        if (b + 1 < nb) {
            hop_pval is_b;
            st = hop_lower_int(cx, HOP_INT_EQ, index, (hop_pval){HOP_PVAL_CONST, -1, (int64_t)b},
                               &is_b);
            if (st == HOP_OK && (st = hop_lower_if(cx, is_b)) == HOP_OK)
                open++;
        }
        if (st == HOP_OK)
            st = hop_lower_inline(cx, branches[b].u.graph, in, n, dests, got, no);
        for (size_t j = 0; j < no && st == HOP_OK; j++)
            st = hop_lower_move(cx, res[j], got[j]);
        if (st == HOP_OK && b + 1 < nb)
            st = hop_lower_else(cx);
    }
    while (open-- > 0 && st == HOP_OK)
        st = hop_lower_end_if(cx);
    return st == HOP_OK ? hop_lower_results(cx, res, no) : st;
}

static hop_status
switch_eval(hop_eval_ctx *ex)
{
    hop_rt_arg index;
    int64_t i = 0;
    hop_status st = hop_eval_param(ex, "index", &index);
    if (st == HOP_OK && index.kind == HOP_OPND_TENSOR) {
        const hop_tensor *t = index.u.tensor;
        if ((t->dtype != HOP_I64 && t->dtype != HOP_I32) || hop_tensor_numel(t) != 1) {
            char what[96];
            hop_tensor_print_meta(t, what, sizeof what);
            return hop_error(HOP_DTYPE, "switch: index must be an int scalar, got %s", what);
        }
        st = hop_tensor_item_int(t, &i);
    } else if (st == HOP_OK) {
        i = index.kind == HOP_OPND_BOOL ? index.u.b : index.u.i;
    }
    return st == HOP_OK ? hop_eval_run_passed(ex, "branches", clamp(i, hop_eval_nbodies(ex))) : st;
}

/* ------------------------------------------------------------------ vmap */

/* A batched index: branch k's examples are where clamp(index, 0, nb - 1)
 * is k, as eval's clamp picks. */
static hop_status
switch_masks(hop_graph *g, hop_node *index, size_t nb, hop_node **masks)
{
    hop_node *c =
        hop_graph_emit(g, HOP_OP_maximum, (hop_arg[]){hop_arg_node(index), hop_arg_int(0)}, 2);
    c = hop_graph_emit(g, HOP_OP_minimum,
                       (hop_arg[]){hop_arg_node(c), hop_arg_int((int64_t)nb - 1)}, 2);
    for (size_t k = 0; k < nb; k++)
        if ((masks[k] = hop_graph_emit(
                 g, HOP_OP_eq, (hop_arg[]){hop_arg_node(c), hop_arg_int((int64_t)k)}, 2)) == NULL)
            return hop_error_code();
    return HOP_OK;
}

/* The branch kit's (hop/branch_kit.h), as cond's. */
static hop_status
switch_batch(hop_batch_ctx *cx, const hop_node *call)
{
    return hop_batch_branches(cx, call, "index", "index", switch_masks);
}

const hop_class hop_switch_class = {
    .name = "switch",
    .params = {{"index", HOP_PARAM_VALUE, NULL, HOP_PARAM_BATCHED_ITEM},
               {"branches", HOP_PARAM_BODIES, "switch_branch"},
               {"operands", HOP_PARAM_VALUES}},
    .doc = "switch(index, branches, *operands): branches[clamp(index, 0, len(branches) - 1)]"
           "(*operands); under tracing every branch becomes a subgraph, all with one merged "
           "signature.",
    .input_mode = HOP_INPUTS_LIFTED,
    .guard_mode = HOP_GUARDS_BRANCH,
    .check_operands = switch_check_operands,
    .check_outputs = switch_check_outputs,
    .output_meta = hop_call_merge_branch_outputs,
    .installed = switch_installed,
    .verify = switch_verify,
    .lower = switch_lower,
    .eval = switch_eval,
    .vjp = hop_vjp_bodies,
    .jvp = hop_jvp_bodies,
    .batch = switch_batch,
};
