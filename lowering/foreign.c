/*
 * lowering/foreign.c - foreign kernels in graphs: recording a call in a
 * tracer (hop_tracer_call_foreign) and lowering a call_foreign node to an
 * Extern instruction.  Both check the call against the kernel's signature
 * with hop__extern_check (runtime/program.h), so a graph that traced
 * lowers; the tracer itself only knows call_foreign nodes by name, and the
 * runtime makes every libffi call (runtime/foreign.c, runtime/export.c).
 */
#include "hop/foreign.h"
#include "lowering/lowering_impl.h"

#include <inttypes.h>
#include <stdio.h>

_Static_assert(HOP__EXTERN_MAXOUT >= HOP_FOREIGN_MAX_PARAMS,
               "an Extern holds one output per parameter");

/* ------------------------------------------------------------- tracing */

hop_status
hop_tracer_call_foreign(hop_tracer *t, const hop_foreign *f, const hop_arg *args, size_t nargs,
                        hop_values *outs)
{
    if (t == NULL || f == NULL || outs == NULL)
        return hop_error(HOP_MISUSE, "hop_tracer_call_foreign: NULL %s",
                         t == NULL   ? "tracer"
                         : f == NULL ? "kernel"
                                     : "output list");
    hop_status st = hop__extern_check(f, args, nargs);
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
                                  hop_foreign_side_effects(f) ? HOP_NODE_SIDE_EFFECTS : 0,
                                  results) == NULL)
        return hop_error_code();
    for (size_t j = 0; j < nouts; j++)
        outs->items[outs->n++] = results[j];
    return HOP_OK;
}

/* ------------------------------------------------------------ lowering */

hop_status
hop__lower_foreign(hop_lower_ctx *cx, const hop_node *n, hop_pval **results)
{
    const hop_foreign *f = hop_foreign_acquire(n->target);
    if (f == NULL)
        return hop_error(HOP_NOT_FOUND,
                         "lowering: %s calls the foreign kernel %s, which is not registered",
                         n->name, n->target);
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
    hop_status st = hop__extern_check(f, n->args, n->nargs);
    if (st == HOP_OK && n->nouts != hop_foreign_noutputs(f))
        st = hop_error(HOP_VERIFY, "lowering: %s has %zu outputs but %s gives %zu", n->name,
                       n->nouts, hop_foreign_signature(f), hop_foreign_noutputs(f));
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
    if (hop__emit(cx, HOP__OP_Extern, n->nouts ? outs[0] : -1, (int32_t)n->nouts, 0, e, e->text) <
        0)
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
