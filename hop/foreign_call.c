/*
 * hop/foreign_call.c - tracing a call of a foreign kernel
 * (hop_tracer_call_foreign).  It lives in the HOP layer beside hop_apply:
 * recording a call needs the tracer, and checking it needs the runtime's
 * kernels, and this is the first layer that has both (the tracer only
 * knows call_foreign nodes by name, hop_tracer_record_foreign; the runtime
 * knows no graphs).  The operands are checked as lowering checks a
 * recorded node (lowering/foreign.c): their metadata from the graph
 * (hop_args_operands), checked by the runtime (hop_foreign_check_operands).
 */
#include "core/core.h"
#include "hop/foreign.h"
#include "hop/prim_hop.h"

hop_status
hop_tracer_call_foreign(hop_tracer *t, const hop_foreign *f, const hop_arg *args, size_t nargs,
                        hop_values *outs)
{
    if (t == NULL || f == NULL || outs == NULL)
        return hop_error(HOP_MISUSE, "hop_tracer_call_foreign: NULL %s",
                         t == NULL   ? "tracer"
                         : f == NULL ? "kernel"
                                     : "output list");
    hop_operand ops[HOP_FOREIGN_MAX_PARAMS]; /* read only when the count is right */
    hop_status st = nargs == hop_foreign_nparams(f)
                        ? hop_args_operands(hop_foreign_name(f), args, nargs, ops, NULL)
                        : HOP_OK;
    if (st == HOP_OK)
        st = hop_foreign_check_operands(f, ops, nargs);
    if (st != HOP_OK)
        return st;
    hop_value_info metas[HOP_FOREIGN_MAX_PARAMS];
    hop_node *results[HOP_FOREIGN_MAX_PARAMS];
    size_t nouts = 0;
    for (size_t i = 0; i < nargs; i++)
        if (hop_foreign_param_at(f, i)->kind == HOP_FOREIGN_INOUT)
            metas[nouts++] = *args[i].u.node->meta;
    /* Room for the results first: once recorded, nothing may fail. */
    if (hop__grow((void **)&outs->items, &outs->cap, outs->n + nouts, sizeof *outs->items) !=
        HOP_OK)
        return HOP_NOMEM;
    if (hop_tracer_record_foreign(t, hop_foreign_name(f), args, nargs, metas, nouts,
                                  (hop_foreign_side_effects(f) ? HOP_NODE_SIDE_EFFECTS : 0) |
                                      (hop_foreign_may_fail(f) ? HOP_NODE_MAY_FAIL : 0),
                                  results) == NULL)
        return hop_error_code();
    for (size_t j = 0; j < nouts; j++)
        outs->items[outs->n++] = results[j];
    return HOP_OK;
}
