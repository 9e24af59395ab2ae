/*
 * graph/class.c - what a HOP class says about its call nodes, resolved
 * through its chain of bases: the signature, the input and guard modes, the
 * made inputs and the bodies a call takes.  Every layer that reads a call
 * node (the verifier here, the tracing protocol, the printers, the Python
 * front end) asks these, so the PrimHOP base's defaults live here once: the
 * signature (body: BODY, *args), inputs lifted on first use, the caller's
 * guards, no made inputs; and which classes are wrap-like.
 */
#include "graph/graph_impl.h"
#include "hop/class.h"

static const hop_param prim_params[] = {{"body", HOP_PARAM_BODY, "body", 0},
                                        {"args", HOP_PARAM_VARARGS, NULL, 0}};

hop_input_mode
hop_class_input_mode(const hop_class *cls)
{
    const hop_class *k = cls;
    for (int i = 0; i < HOP_CLASS_MAX_DEPTH && k; i++, k = k->base)
        if (k->input_mode != HOP_INPUTS_INHERIT)
            return k->input_mode;
    return HOP_INPUTS_LIFTED;
}

hop_guard_mode
hop_class_guard_mode(const hop_class *cls)
{
    const hop_class *k = cls;
    for (int i = 0; i < HOP_CLASS_MAX_DEPTH && k; i++, k = k->base)
        if (k->guard_mode != HOP_GUARDS_INHERIT)
            return k->guard_mode;
    return HOP_GUARDS_CALLER;
}

const hop_param *
hop_class_params(const hop_class *cls, size_t *n)
{
    const hop_class *k = cls;
    for (int i = 0; i < HOP_CLASS_MAX_DEPTH && k; i++, k = k->base) {
        if (k->params[0].kind == HOP_PARAM_END)
            continue;
        size_t m = 0;
        while (m < HOP_MAX_PARAMS && k->params[m].kind != HOP_PARAM_END)
            m++;
        if (n)
            *n = m;
        return k->params;
    }
    if (n)
        *n = sizeof prim_params / sizeof *prim_params;
    return prim_params;
}

size_t
hop_class_made_inputs(const hop_class *cls)
{
    const hop_class *k = cls;
    for (int i = 0; i < HOP_CLASS_MAX_DEPTH && k; i++, k = k->base)
        if (k->made_inputs)
            return k->made_inputs;
    return 0;
}

size_t
hop_class_nbodies(const hop_class *cls)
{
    size_t n, nb = 0;
    const hop_param *p = hop_class_params(cls, &n);
    for (size_t i = 0; i < n; i++)
        nb += p[i].kind == HOP_PARAM_BODY;
    return nb;
}

bool
hop_class_takes_bodies(const hop_class *cls, size_t nbodies)
{
    size_t n, nb = 0;
    const hop_param *p = hop_class_params(cls, &n);
    bool variadic = false;
    for (size_t i = 0; i < n; i++) { /* hop_class_nbodies in the same pass */
        nb += p[i].kind == HOP_PARAM_BODY;
        variadic |= p[i].kind == HOP_PARAM_BODIES;
    }
    return variadic ? nbodies > nb && nbodies <= HOP_MAX_BODIES : nbodies == nb;
}

const hop_param *
hop_class_body_param(const hop_class *cls, size_t b)
{
    size_t n;
    const hop_param *p = hop_class_params(cls, &n), *many = NULL;
    for (size_t i = 0; i < n; i++) {
        if (p[i].kind == HOP_PARAM_BODY && b-- == 0)
            return &p[i];
        if (p[i].kind == HOP_PARAM_BODIES)
            many = &p[i];
    }
    return many;
}

bool
hop_class_is_wrap_like(const hop_class *cls)
{
    return HOP_CLASS_SLOT_OWNER(cls, lower) == NULL && HOP_CLASS_SLOT_OWNER(cls, eval) == NULL;
}

bool
hop_param_fits(hop_param_kind k, const hop_arg *a)
{
    switch (k) {
    case HOP_PARAM_INT:
        return a->kind == HOP_ARG_INT;
    case HOP_PARAM_FLOAT:
        return a->kind == HOP_ARG_FLOAT || a->kind == HOP_ARG_INT;
    case HOP_PARAM_BOOL:
        return a->kind == HOP_ARG_BOOL;
    case HOP_PARAM_DTYPE:
        return a->kind == HOP_ARG_DTYPE && (unsigned)a->u.dtype < HOP_DTYPE_COUNT;
    case HOP_PARAM_VALUE:
        return (a->kind == HOP_ARG_NODE && a->u.node) || (a->kind == HOP_ARG_SYM && a->u.sym) ||
               a->kind == HOP_ARG_BOOL || a->kind == HOP_ARG_INT;
    default:
        return false;
    }
}
