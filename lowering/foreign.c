/*
 * lowering/foreign.c - a call_foreign node lowered to an Extern
 * instruction.  The node's arguments are checked against the kernel's
 * signature as tracing checked them (hop/foreign_call.c): the graph gives
 * their metadata (hop_args_operands) and the runtime checks that
 * (hop_foreign_check_operands), so a graph that traced lowers; the runtime
 * makes every libffi call (runtime/foreign.c, runtime/export.c).
 */
#include "hop/foreign.h"
#include "lowering/lowering_impl.h"

#include <inttypes.h>
#include <stdio.h>

_Static_assert(HOP__EXTERN_MAXOUT >= HOP_FOREIGN_MAX_PARAMS,
               "an Extern holds one output per parameter");

/* ------------------------------------------------------------ lowering */

hop_status
hop__lower_foreign(hop_lower_ctx *cx, const hop_node *n, hop_pval **results)
{
    const hop_foreign *f = hop_foreign_acquire(hop_node_target(n));
    if (f == NULL)
        return hop_error(HOP_NOT_FOUND,
                         "lowering: %s calls the foreign kernel %s, which is not registered",
                         n->name, hop_node_target(n));
    hop_plan *p = cx->plan;
    hop__extern *e = hop__arena_zalloc(&p->arena, sizeof *e);
    if (e == NULL) {
        hop_foreign_release(f);
        return HOP_NOMEM;
    }
    /* From here the plan holds the reference, also when lowering fails. */
    e->kernel = f;
    e->chain = p->externs;
    p->externs = e;
    e->name = hop_foreign_name(f);
    hop_operand ops[HOP_FOREIGN_MAX_PARAMS]; /* read only when the count is right */
    hop_status st = n->nargs == hop_foreign_nparams(f)
                        ? hop_args_operands(n->name, n->args, n->nargs, ops, NULL)
                        : HOP_OK;
    if (st == HOP_OK)
        st = hop_foreign_check_operands(f, ops, n->nargs);
    if (st == HOP_OK && n->nouts != hop_foreign_noutputs(f))
        st = hop_error(HOP_VERIFY, "lowering: %s has %zu outputs but %s gives %zu", n->name,
                       (size_t)n->nouts, hop_foreign_signature(f), hop_foreign_noutputs(f));
    if (st != HOP_OK)
        return st;
    hop__oparg *args = hop__arena_zalloc(&p->arena, (n->nargs + 1) * sizeof *args);
    int32_t *outs = hop__arena_zalloc(&p->arena, (n->nouts + 1) * sizeof *outs);
    hop_pval *res = hop__arena_zalloc(&cx->tmp, (n->nouts + 1) * sizeof *res);
    if (args == NULL || outs == NULL || res == NULL || (e->text = hop__node_text(cx, n)) == NULL)
        return HOP_NOMEM;
    int32_t nrt = 0;
    for (size_t i = 0; i < n->nargs; i++)
        if ((st = hop__compile_oparg(cx, &n->args[i], &args[i], &nrt)) != HOP_OK)
            return st;
    e->args = args;
    e->nargs = (int32_t)n->nargs;
    e->rtbase = (int32_t)cx->nrtargs;
    cx->nrtargs += nrt;
    for (size_t j = 0; j < n->nouts; j++) {
        const hop_meta *m = &n->outs[j].meta;
        bool late = hop__meta_late(cx, m);
        const char *name = hop__note(cx, "%s[%zu]", n->name, j);
        if (name == NULL)
            return HOP_NOMEM;
        if ((st = hop__new_slot(cx, late ? HOP__S_LATE : HOP__S_BUFFER, m, name, &outs[j])) !=
            HOP_OK)
            return st;
        if (late && hop__emit(cx, HOP__OP_Alloc, outs[j], 0, 0, NULL, NULL) < 0)
            return HOP_NOMEM;
        res[j] = hop__pv_tensor(outs[j]);
    }
    e->outs = outs;
    e->nouts = (int32_t)n->nouts;
    if (hop__emit(cx, HOP__OP_Extern, n->nouts ? outs[0] : -1, (int32_t)n->nouts, 0, e, NULL) < 0)
        return HOP_NOMEM;
    for (size_t i = 0; i < n->nargs; i++)
        if (args[i].kind == HOP__A_TENSOR && (st = hop__access(cx, args[i].slot)) != HOP_OK)
            return st;
    for (size_t j = 0; j < n->nouts; j++)
        if ((st = hop__access(cx, outs[j])) != HOP_OK)
            return st;
    *results = res;
    return HOP_OK;
}
