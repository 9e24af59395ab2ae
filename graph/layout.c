/*
 * graph/layout.c - the inputs of a call's bodies by name (hop_layout) and
 * the builder of a call together with its bodies (hop_build), both derived
 * from the class's signature (hop/layout.h).
 */
#include "graph/graph_impl.h"
#include "hop/layout.h"

#include <stdio.h>
#include <string.h>

/* Whether cls's bodies have a list of lifted values of their own. */
static bool
own_lifted_list(const hop_class *cls, const hop_param *p, size_t np)
{
    return hop_class_input_mode(cls) != HOP_INPUTS_LIFTED &&
           !(np > 0 && p[np - 1].kind == HOP_PARAM_VARARGS);
}

hop_status
hop_layout_of(const hop_node *call, hop_layout *l)
{
    memset(l, 0, sizeof *l);
    if (call == NULL || call->kind != HOP_NODE_CALL_HOP || call->cls == NULL)
        return hop_error(HOP_MISUSE, "hop_layout_of: not a call_hop node");
    size_t np;
    const hop_param *p = hop_class_params(call->cls, &np);
    l->names[0] = HOP_SPAN_MADE;
    l->spans[0] = (hop_span){0, hop_class_made_inputs(call->cls)};
    l->n = l->spans[0].n;
    l->nspans = 1;
    const hop_arg *a = call->args, *end = call->args + call->nargs;
    for (size_t k = 0; k <= np; k++) {
        bool lifted = k == np;
        if (lifted ? !own_lifted_list(call->cls, p, np) : !hop_param_is_group(p[k].kind))
            continue;
        while (a < end && a->kind != HOP_ARG_LIST)
            a++;
        if (a == end)
            return hop_error(HOP_VERIFY, "hop_layout_of: %s (%s) has no list for %s", call->name,
                             call->cls->name, lifted ? HOP_SPAN_LIFTED : p[k].name);
        l->names[l->nspans] = lifted ? HOP_SPAN_LIFTED : p[k].name;
        l->spans[l->nspans++] = (hop_span){l->n, a->u.list.n};
        l->n += a->u.list.n;
        a++;
        if (hop_class_input_mode(call->cls) == HOP_INPUTS_LIFTED)
            break; /* one group: the merged signature */
    }
    return HOP_OK;
}

hop_span
hop_layout_span(const hop_layout *l, const char *name)
{
    for (size_t k = 0; k < l->nspans; k++)
        if (strcmp(l->names[k], name) == 0)
            return l->spans[k];
    hop_error(HOP_MISUSE, "hop_layout_span: the layout has no span %s", name);
    return (hop_span){l->n, 0};
}

/* ---------------------------------------------------------------- builder */

typedef struct build_body {
    const hop_param *param;
    hop_graph *g;
    bool built; /* ours: inputs get placeholders, installed at emit */
    hop_arg *outs;
    size_t nouts, cap;
} build_body;

/* One list the call passes: a group's values or the lifted ones. */
typedef struct build_list {
    const char *name;
    hop_arg *items;
    size_t n, cap;
} build_list;

struct hop_build {
    hop_graph *g;
    const hop_class *cls;
    const hop_param *params;
    size_t np;
    hop_arg leads[HOP_MAX_PARAMS];
    bool have_lead[HOP_MAX_PARAMS];
    build_body bodies[HOP_MAX_BODIES];
    size_t nbodies, nbuilt;
    hop_graph *kept; /* a body kept after the signature's (hop_build_keep_body) */
    build_list lists[HOP_MAX_PARAMS + 1];
    size_t nlists;
    size_t made;
};

hop_build *
hop_build_new(hop_graph *g, const hop_class *cls)
{
    if (g == NULL || cls == NULL) {
        hop_error(HOP_MISUSE, "hop_build_new: NULL %s", g ? "class" : "graph");
        return NULL;
    }
    hop_build *b = hop__calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->g = g;
    b->cls = cls;
    b->params = hop_class_params(cls, &b->np);
    for (size_t k = 0; k < b->np; k++)
        if (hop_param_is_group(b->params[k].kind))
            b->lists[b->nlists++].name = b->params[k].name;
    if (own_lifted_list(cls, b->params, b->np))
        b->lists[b->nlists++].name = HOP_SPAN_LIFTED;
    return b;
}

void
hop_build_free(hop_build *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->nbodies; i++) {
        if (b->bodies[i].built)
            hop_graph_free(b->bodies[i].g);
        hop__free(b->bodies[i].outs);
    }
    for (size_t k = 0; k < b->nlists; k++)
        hop__free(b->lists[k].items);
    hop__free(b);
}

/* The parameter called name of one of the kinds test accepts, or NULL with
 * HOP_MISUSE naming what was asked. */
static const hop_param *
param_of(const hop_build *b, const char *name, bool (*test)(hop_param_kind), const char *what)
{
    for (size_t k = 0; k < b->np; k++)
        if (strcmp(b->params[k].name, name) == 0 && test(b->params[k].kind))
            return &b->params[k];
    hop_error(HOP_MISUSE, "hop_build: %s has no %s parameter %s", b->cls->name, what, name);
    return NULL;
}

static bool
is_body(hop_param_kind k)
{
    return k == HOP_PARAM_BODY || k == HOP_PARAM_BODIES;
}

static bool
is_lead(hop_param_kind k)
{
    return hop_param_is_lead(k);
}

static build_list *
list_of(hop_build *b, const char *name)
{
    for (size_t k = 0; k < b->nlists; k++)
        if (strcmp(b->lists[k].name, name) == 0)
            return &b->lists[k];
    hop_error(HOP_MISUSE, "hop_build: %s passes no group %s", b->cls->name, name);
    return NULL;
}

/* A body slot for param, unless a BODY parameter has one already. */
static build_body *
body_slot(hop_build *b, const char *param)
{
    const hop_param *p = param_of(b, param, is_body, "body");
    if (p == NULL)
        return NULL;
    for (size_t i = 0; i < b->nbodies && p->kind == HOP_PARAM_BODY; i++)
        if (b->bodies[i].param == p) {
            hop_error(HOP_MISUSE, "hop_build: %s's body %s is given twice", b->cls->name, param);
            return NULL;
        }
    if (b->nbodies + (b->kept != NULL) == HOP_MAX_BODIES) {
        hop_error(HOP_MISUSE, "hop_build: %s has %d bodies already", b->cls->name, HOP_MAX_BODIES);
        return NULL;
    }
    build_body *s = &b->bodies[b->nbodies];
    memset(s, 0, sizeof *s);
    s->param = p;
    return s;
}

/* Whether name is free for a new body: no pending body of ours has it. */
static bool
pending_name(const hop_build *b, const char *name)
{
    for (size_t i = 0; i < b->nbodies; i++)
        if (b->bodies[i].built && strcmp(b->bodies[i].g->name, name) == 0)
            return true;
    return false;
}

hop_graph *
hop_build_body(hop_build *b, const char *param, const char *name)
{
    build_body *s = body_slot(b, param);
    if (s == NULL)
        return NULL;
    size_t inputs = b->made;
    for (size_t k = 0; k < b->nlists; k++)
        inputs += b->lists[k].n;
    if (inputs > 0) {
        hop_error(HOP_MISUSE, "hop_build_body: %s's body %s comes after inputs were added",
                  b->cls->name, param);
        return NULL;
    }
    /* bodies are installed together at the end: a name another pending body
     * has is taken */
    char base[256];
    snprintf(base, sizeof base, "%s", name);
    for (int k = 1; pending_name(b, base) && k < 1000; k++)
        snprintf(base, sizeof base, "%s_%d", name, k);
    if ((s->g = hop_graph_new_subgraph(b->g, base)) == NULL)
        return NULL;
    s->built = true;
    b->nbodies++;
    b->nbuilt++;
    return s->g;
}

hop_status
hop_build_use_body(hop_build *b, const char *param, hop_graph *body)
{
    build_body *s = body_slot(b, param);
    if (s == NULL)
        return hop_error_code();
    if (body == NULL || body->parent != b->g)
        return hop_error(HOP_MISUSE, "hop_build_use_body: %s's body %s is not a subgraph of %s",
                         b->cls->name, param, b->g->name);
    s->g = body;
    b->nbodies++;
    return HOP_OK;
}

hop_status
hop_build_keep_body(hop_build *b, hop_graph *body)
{
    if (b->kept != NULL || b->nbodies == HOP_MAX_BODIES)
        return hop_error(HOP_MISUSE, "hop_build_keep_body: %s %s", b->cls->name,
                         b->kept ? "keeps a body already" : "has its bodies already");
    if (body == NULL || body->parent != b->g)
        return hop_error(HOP_MISUSE, "hop_build_keep_body: %s's kept body is not a subgraph of %s",
                         b->cls->name, b->g->name);
    b->kept = body;
    return HOP_OK;
}

hop_status
hop_build_lead(hop_build *b, const char *param, hop_arg v)
{
    const hop_param *p = param_of(b, param, is_lead, "leading");
    if (p == NULL)
        return hop_error_code();
    b->leads[p - b->params] = v;
    b->have_lead[p - b->params] = true;
    return HOP_OK;
}

/* Appends v to list l. */
static hop_status
push(build_list *l, hop_arg v)
{
    if (hop__grow((void **)&l->items, &l->cap, l->n + 1, sizeof *l->items) != HOP_OK)
        return HOP_NOMEM;
    l->items[l->n++] = v;
    return HOP_OK;
}

/* A placeholder at input position pos of every body being built; the first
 * one's. */
static hop_node *
placeholders_at(hop_build *b, size_t pos, const char *name, const hop_value_info *meta)
{
    hop_node *first = NULL;
    if (b->nbuilt == 0) {
        hop_error(HOP_MISUSE, "hop_build: %s has no body being built for input %s", b->cls->name,
                  name);
        return NULL;
    }
    for (size_t i = 0; i < b->nbodies; i++) {
        if (!b->bodies[i].built)
            continue;
        hop_node *p = hop_graph_insert_placeholder(b->bodies[i].g, pos, name, meta);
        if (p == NULL)
            return NULL;
        first = first ? first : p;
    }
    return first;
}

hop_node *
hop_build_made(hop_build *b, const char *name, const hop_value_info *meta)
{
    hop_node *p = placeholders_at(b, b->made, name, meta);
    if (p != NULL)
        b->made++;
    return p;
}

hop_span
hop_build_span(const hop_build *b, const char *name)
{
    size_t at = b->made;
    if (strcmp(name, HOP_SPAN_MADE) == 0)
        return (hop_span){0, b->made};
    for (size_t k = 0; k < b->nlists; k++) {
        if (strcmp(b->lists[k].name, name) == 0)
            return (hop_span){at, b->lists[k].n};
        at += b->lists[k].n;
    }
    hop_error(HOP_MISUSE, "hop_build_span: %s has no span %s", b->cls->name, name);
    return (hop_span){at, 0};
}

hop_node *
hop_build_input(hop_build *b, const char *group, hop_node *v, const char *name,
                const hop_value_info *meta)
{
    build_list *l = list_of(b, group);
    if (l == NULL || v == NULL) {
        if (l != NULL)
            hop_error(HOP_MISUSE, "hop_build_input: NULL value for %s of %s", group, b->cls->name);
        return NULL;
    }
    hop_span s = hop_build_span(b, group);
    hop_node *p = placeholders_at(b, s.at + s.n, name, meta);
    if (p != NULL && push(l, hop_arg_node(v)) != HOP_OK)
        return NULL;
    return p;
}

/* Appends operand v to group `group`'s list: no placeholder, so no body may
 * be being built; who names the caller in errors. */
static hop_status
operand(hop_build *b, const char *group, hop_arg v, const char *who)
{
    build_list *l = list_of(b, group);
    if (l == NULL)
        return hop_error_code();
    bool none = v.kind == HOP_ARG_NODE && v.u.node == NULL;
    if (b->nbuilt > 0 || none)
        return hop_error(HOP_MISUSE, "%s: %s of %s: %s", who, group, b->cls->name,
                         none ? "NULL value" : "a body being built needs hop_build_input");
    return push(l, v);
}

hop_status
hop_build_operand(hop_build *b, const char *group, hop_node *v)
{
    return operand(b, group, hop_arg_node(v), "hop_build_operand");
}

hop_status
hop_build_operands(hop_build *b, const hop_layout *l, hop_node *const *ops)
{
    for (size_t k = 1; k < l->nspans; k++)
        for (size_t j = l->spans[k].at; j < l->spans[k].at + l->spans[k].n; j++)
            if (hop_build_operand(b, l->names[k], ops[j]) != HOP_OK)
                return hop_error_code();
    return HOP_OK;
}

hop_status
hop_build_passed(hop_build *b, const hop_layout *l, const hop_arg *vals)
{
    size_t made = l->spans[0].n;
    for (size_t k = 1; k < l->nspans; k++)
        for (size_t j = l->spans[k].at; j < l->spans[k].at + l->spans[k].n; j++)
            if (operand(b, l->names[k], vals[j - made], "hop_build_passed") != HOP_OK)
                return hop_error_code();
    return HOP_OK;
}

hop_status
hop_build_output_of(hop_build *b, hop_graph *body, hop_node *v)
{
    for (size_t i = 0; i < b->nbodies; i++) {
        build_body *s = &b->bodies[i];
        if (s->g != body || !s->built)
            continue;
        if (hop__grow((void **)&s->outs, &s->cap, s->nouts + 1, sizeof *s->outs) != HOP_OK)
            return HOP_NOMEM;
        s->outs[s->nouts++] = hop_arg_node(v);
        return HOP_OK;
    }
    return hop_error(HOP_MISUSE, "hop_build_output: %s is not a body %s's builder builds",
                     body ? body->name : "NULL", b->cls->name);
}

hop_status
hop_build_output(hop_build *b, const char *param, hop_node *v)
{
    for (size_t i = 0; i < b->nbodies; i++)
        if (b->bodies[i].built && strcmp(b->bodies[i].param->name, param) == 0)
            return hop_build_output_of(b, b->bodies[i].g, v);
    return hop_error(HOP_MISUSE, "hop_build_output: %s builds no body %s", b->cls->name, param);
}

/* The call's arguments: leads, bodies (in parameter order), the kept body,
 * lists. */
static hop_status
call_args(hop_build *b, hop_arg *args, size_t *nargs)
{
    size_t n = 0;
    for (size_t k = 0; k < b->np; k++) {
        if (!is_lead(b->params[k].kind))
            continue;
        if (!b->have_lead[k])
            return hop_error(HOP_MISUSE, "hop_build_emit: %s's lead %s is not given", b->cls->name,
                             b->params[k].name);
        args[n++] = b->leads[k];
    }
    for (size_t k = 0; k < b->np; k++) {
        size_t before = n;
        for (size_t i = 0; i < b->nbodies; i++)
            if (b->bodies[i].param == &b->params[k])
                args[n++] = hop_arg_graph(b->bodies[i].g);
        if (b->params[k].kind == HOP_PARAM_BODY && n == before)
            return hop_error(HOP_MISUSE, "hop_build_emit: %s's body %s is not given", b->cls->name,
                             b->params[k].name);
    }
    if (b->kept != NULL)
        args[n++] = hop_arg_graph(b->kept);
    for (size_t k = 0; k < b->nlists; k++)
        args[n++] = hop_arg_list(b->lists[k].items, b->lists[k].n);
    *nargs = n;
    return HOP_OK;
}

hop_node *
hop_build_emit(hop_build *b, const hop_value_info *outs, size_t nouts)
{
    hop_arg args[HOP_MAX_PARAMS + HOP_MAX_BODIES + 2];
    size_t nargs = 0, installed = 0;
    hop_status st = call_args(b, args, &nargs);
    for (size_t i = 0; i < b->nbodies && st == HOP_OK; i++) {
        build_body *s = &b->bodies[i];
        if (!s->built)
            continue;
        if (hop_graph_output(s->g, s->outs, s->nouts) == NULL ||
            hop_graph_add_subgraph(b->g, s->g) != HOP_OK)
            st = hop_error_code();
        else
            installed = i + 1;
    }
    hop_node *c = st == HOP_OK ? hop_graph_call_hop(b->g, b->cls, args, nargs, outs, nouts) : NULL;
    if (c != NULL) {
        for (size_t i = 0; i < b->nbodies; i++)
            b->bodies[i].built = false; /* g's now */
    } else {
        /* what was installed is ours again (the error stays the first one) */
        for (size_t i = 0; i < installed; i++)
            if (b->bodies[i].built)
                (void)hop_graph_remove_subgraph(b->g, b->bodies[i].g);
    }
    hop_build_free(b);
    return c;
}
