/*
 * hop/prim_hop.c - the PrimHOP base and the call protocol every HOP shares:
 * checkpoint, check operands, trace each body in its own subtracer, check and
 * merge the bodies' signatures, install the subgraphs, emit one call_hop node
 * and unpack it with getitem nodes; restore everything on any failure.
 */
#include "hop/hop_impl.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- values */

hop_status
hop_values_push(hop_values *vs, hop_node *v)
{
    if (vs == NULL)
        return hop_error(HOP_MISUSE, "hop_values_push: NULL list");
    if (hop__grow((void **)&vs->items, &vs->cap, vs->n + 1, sizeof *vs->items) != HOP_OK)
        return HOP_NOMEM;
    vs->items[vs->n++] = v;
    return HOP_OK;
}

void
hop_values_clear(hop_values *vs)
{
    if (vs == NULL)
        return;
    hop__free(vs->items);
    vs->items = NULL;
    vs->n = vs->cap = 0;
}

/* ------------------------------------------------------- slot resolution */

typedef hop_status (*slot_fn)(hop_call *c);

/* The class that defines the slot at `offset`: cls or its nearest base. */
static slot_fn
resolve(const hop_hop_class *cls, size_t offset)
{
    for (const hop_hop_class *k = cls; k; k = k->base ? k->base : hop_prim_hop_base()) {
        slot_fn f;
        memcpy(&f, (const char *)k + offset, sizeof f);
        if (f)
            return f;
        if (k == hop_prim_hop_base())
            break;
    }
    return NULL; /* unreachable: the base fills every slot */
}

#define RESOLVE(cls, slot) resolve((cls), offsetof(hop_hop_class, slot))

hop_input_mode
hop__input_mode(const hop_hop_class *cls)
{
    const hop_hop_class *k = cls;
    for (int i = 0; i < HOP__MAX_BASE_DEPTH && k; i++) {
        if (k->input_mode != HOP_INPUTS_INHERIT)
            return k->input_mode;
        k = k->base ? k->base : (k == hop_prim_hop_base() ? NULL : hop_prim_hop_base());
    }
    return HOP_INPUTS_LIFTED;
}

hop_guard_mode
hop__guard_mode(const hop_hop_class *cls)
{
    const hop_hop_class *k = cls;
    for (int i = 0; i < HOP__MAX_BASE_DEPTH && k; i++) {
        if (k->guard_mode != HOP_GUARDS_INHERIT)
            return k->guard_mode;
        k = k->base ? k->base : (k == hop_prim_hop_base() ? NULL : hop_prim_hop_base());
    }
    return HOP_GUARDS_CALLER;
}

/* ------------------------------------------------------------ base slots */

/* A value the call may use: one of c->parent's or of a tracer enclosing it,
 * in the same OutputGraph (lifting would refuse the others later, but a body
 * that ignores an operand must not hide the caller's mistake). */
static hop_status
check_reachable(hop_call *c, const char *what, size_t i, const hop_node *v)
{
    hop_tracer *owner = hop_tracer_of(v);
    if (owner == NULL || hop_output_graph_of(owner) != c->og)
        return hop_error(HOP_MISUSE, "%s: %s %zu (%s) belongs to another OutputGraph", c->cls->name,
                         what, i, v->name ? v->name : "?");
    if (hop_tracer_state_of(owner) == HOP_TRACER_ENDED)
        return hop_error(HOP_TRACE,
                         "%s: %s %zu (%s) was created in subgraph %s, whose tracing has ended",
                         c->cls->name, what, i, v->name, hop_tracer_graph(owner)->name);
    for (const hop_tracer *p = c->parent; p; p = hop_tracer_parent(p))
        if (p == owner)
            return HOP_OK;
    return hop_error(HOP_MISUSE, "%s: %s %zu (%s) belongs to graph %s, which does not enclose %s",
                     c->cls->name, what, i, v->name, hop_tracer_graph(owner)->name,
                     hop_tracer_graph(c->parent)->name);
}

static hop_status
base_check_operands(hop_call *c)
{
    for (size_t i = 0; i < c->nlead; i++)
        if (c->lead[i].kind == HOP_ARG_NODE && c->lead[i].u.node != NULL &&
            check_reachable(c, "argument", i, c->lead[i].u.node) != HOP_OK)
            return hop_error_code();
    for (size_t i = c->body_operands; i < c->noperands; i++) {
        const hop_arg *a = &c->operands[i];
        if (a->kind != HOP_ARG_NODE || a->u.node == NULL)
            return hop_error(HOP_INVALID,
                             "%s: operand %zu must be a traced value (a tensor or a SymInt)",
                             c->cls->name, i);
        if (a->u.node->meta->kind == HOP_VALUE_NONE)
            return hop_error(HOP_INVALID, "%s: operand %zu (%s) has no single value", c->cls->name,
                             i, a->u.node->name);
        if (check_reachable(c, "operand", i, a->u.node) != HOP_OK)
            return hop_error_code();
    }
    return HOP_OK;
}

static hop_status
base_body_inputs(hop_call *c)
{
    size_t n = c->noperands - c->body_operands;
    c->input_meta = hop__calloc(n + 1, sizeof *c->input_meta);
    c->input_names = hop__calloc(n + 1, sizeof *c->input_names);
    if (c->input_meta == NULL || c->input_names == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const hop_node *v = c->operands[c->body_operands + i].u.node;
        c->input_meta[i] = *v->meta;
        c->input_names[i] = v->name;
    }
    c->ninputs = n;
    return HOP_OK;
}

static hop_status
base_nothing(hop_call *c)
{
    (void)c;
    return HOP_OK;
}

static hop_status
base_output_meta(hop_call *c)
{
    const hop_values *r = &c->results[0];
    c->outs = hop__calloc(r->n + 1, sizeof *c->outs);
    if (c->outs == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < r->n; i++)
        c->outs[i] = *r->items[i]->meta;
    c->nouts = r->n;
    return HOP_OK;
}

static const hop_hop_class prim_hop_base = {
    .name = "prim_hop",
    .nbodies = 1,
    .prefixes = {"body"},
    .input_mode = HOP_INPUTS_LIFTED,
    .guard_mode = HOP_GUARDS_CALLER,
    .check_operands = base_check_operands,
    .body_inputs = base_body_inputs,
    .check_outputs = base_nothing,
    .signature = hop__signature_merge,
    .output_meta = base_output_meta,
    .lookup = base_nothing,
    .installed = base_nothing,
};

const hop_hop_class *
hop_prim_hop_base(void)
{
    return &prim_hop_base;
}

/* ------------------------------------------------------------ signatures */

typedef struct sig_entry {
    hop_node *source;             /* the parent's value */
    hop_node *ph[HOP_MAX_BODIES]; /* each body's placeholder for it, or NULL */
    int owner;                    /* the body it is unique to, or -1 if shared */
} sig_entry;

static int
compare_by_source_name(const void *a, const void *b)
{
    const sig_entry *x = a, *y = b;
    return strcmp(x->source->name, y->source->name);
}

/* The prefix's tail after the HOP's name: "cond_true" -> "true_branch". */
static void
unique_suffix(const hop_call *c, int body, char *buf, size_t cap)
{
    const char *p = c->cls->prefixes[body];
    size_t n = strlen(c->cls->name);
    if (strncmp(p, c->cls->name, n) == 0 && p[n] == '_')
        p += n + 1;
    snprintf(buf, cap, "_%s_branch", p);
}

/*
 * The base signature.  One body: explicit inputs, then its lifted values in
 * order of first use.  Several bodies (cond): explicit inputs, then lifted
 * values shared by all bodies sorted by name, then those unique to each body
 * in body order (suffixed, e.g. `_true_branch`); a body gets an unused
 * placeholder for each value unique to another body, so that every body has
 * the same signature.  Fills c->passed with the parent's values.
 */
hop_status
hop__signature_merge(hop_call *c)
{
    hop_status st = HOP_OK;
    size_t nb = c->nbodies, total = 0;
    for (size_t b = 0; b < nb; b++)
        total += hop_tracer_nlifted(c->tracers[b]);
    sig_entry *entries = hop__calloc(total + 1, sizeof *entries);
    if (entries == NULL)
        return HOP_NOMEM;
    size_t n = 0;
    for (size_t b = 0; b < nb; b++) {
        const hop_tracer *t = c->tracers[b];
        for (size_t i = 0; i < hop_tracer_nlifted(t); i++) {
            hop_node *ph = hop_tracer_lifted_placeholder(t, i);
            hop_node *src = hop_tracer_lifted_source(t, ph);
            size_t k = 0;
            while (k < n && entries[k].source != src)
                k++;
            if (k == n) {
                entries[n].source = src;
                entries[n].owner = (int)b;
                n++;
            } else {
                entries[k].owner = -1;
            }
            entries[k].ph[b] = ph;
        }
    }
    if (nb > 1) {
        /* Shared first (sorted by name), then unique ones by body, each in
         * order of first use (a stable partition). */
        sig_entry *ordered = hop__calloc(n + 1, sizeof *ordered);
        if (ordered == NULL) {
            hop__free(entries);
            return HOP_NOMEM;
        }
        size_t m = 0;
        for (size_t k = 0; k < n; k++)
            if (entries[k].owner < 0)
                ordered[m++] = entries[k];
        qsort(ordered, m, sizeof *ordered, compare_by_source_name);
        for (size_t b = 0; b < nb; b++)
            for (size_t k = 0; k < n; k++)
                if (entries[k].owner == (int)b)
                    ordered[m++] = entries[k];
        hop__free(entries);
        entries = ordered;
    }

    /* Explicit inputs are passed as the operands, brought into the parent. */
    size_t nexplicit = hop__input_mode(c->cls) == HOP_INPUTS_EXPLICIT ? c->ninputs : 0;
    for (size_t i = 0; i < nexplicit && st == HOP_OK; i++) {
        hop_node *v = c->operands[c->body_operands + i].u.node;
        hop_node *local = hop_tracer_lift(c->parent, v);
        st = local ? hop_values_push(&c->passed, local) : hop_error_code();
    }
    for (size_t k = 0; k < n && st == HOP_OK; k++) {
        sig_entry *e = &entries[k];
        char suffix[64] = "";
        if (nb > 1 && e->owner >= 0)
            unique_suffix(c, e->owner, suffix, sizeof suffix);
        char name[256];
        snprintf(name, sizeof name, "%s%s", e->source->name, suffix);
        for (size_t b = 0; b < nb && st == HOP_OK; b++) {
            hop_graph *g = c->graphs[b];
            if (e->ph[b] == NULL) {
                e->ph[b] = hop_graph_placeholder(g, name, e->source->meta);
                if (e->ph[b] == NULL)
                    st = hop_error_code();
            } else if (suffix[0]) {
                st = hop_graph_rename_node(g, e->ph[b], name);
            }
            /* Usually already in place (lifted in signature order): checking
             * the neighbour keeps a call with many lifted values linear. */
            hop_node *prev = k > 0           ? entries[k - 1].ph[b]
                             : nexplicit > 0 ? hop_graph_placeholder_at(g, nexplicit - 1)
                                             : NULL;
            bool in_place = e->ph[b] && (prev ? prev->next == e->ph[b] : g->first == e->ph[b]);
            if (st == HOP_OK && !in_place)
                st = hop_graph_move_placeholder(g, e->ph[b], nexplicit + k);
        }
        if (st == HOP_OK)
            st = hop_values_push(&c->passed, e->source);
    }
    hop__free(entries);
    return st;
}

/* ------------------------------------------------------------- the call */

static hop_status
check_class_call(hop_output_graph *og, const hop_hop_class *cls, const hop_arg *operands,
                 size_t noperands, const hop_body *bodies, size_t nbodies, hop_values *outputs)
{
    if (og == NULL || cls == NULL || outputs == NULL)
        return hop_error(HOP_MISUSE, "hop_hop_call: NULL %s",
                         og == NULL    ? "output graph"
                         : cls == NULL ? "class"
                                       : "outputs");
    if (noperands > 0 && operands == NULL)
        return hop_error(HOP_MISUSE, "%s: %zu operands at NULL", cls->name, noperands);
    if (nbodies != (size_t)cls->nbodies)
        return hop_error(HOP_INVALID, "%s: takes %d bod%s, got %zu", cls->name, cls->nbodies,
                         cls->nbodies == 1 ? "y" : "ies", nbodies);
    for (size_t b = 0; b < nbodies; b++)
        if (bodies == NULL || bodies[b].fn == NULL)
            return hop_error(HOP_INVALID, "%s: %s body is not callable (NULL function)", cls->name,
                             cls->prefixes[b]);
    return HOP_OK;
}

/* Traces body b in a new subtracer; leaves it popped with its graph in c. */
static hop_status
trace_body(hop_call *c, size_t b)
{
    const char *name = hop_output_graph_next_name(c->og, c->cls->prefixes[b]);
    if (name == NULL)
        return hop_error_code();
    hop_tracer *t = hop_output_graph_push(c->og, name);
    if (t == NULL)
        return hop_error_code();
    c->tracers[b] = t;

    hop_status st = HOP_OK;
    size_t nin = 0;
    hop_node **inputs = NULL;
    if (hop__input_mode(c->cls) == HOP_INPUTS_EXPLICIT) {
        inputs = hop__calloc(c->ninputs + 1, sizeof *inputs);
        if (inputs == NULL)
            return HOP_NOMEM;
        for (size_t i = 0; i < c->ninputs && st == HOP_OK; i++) {
            /* An input passed through unchanged stands for its operand, so a
             * closure over the same value reuses it. */
            hop_node *outer = c->operands[c->body_operands + i].u.node;
            bool same = i < c->noperands - c->body_operands &&
                        outer->meta->kind == c->input_meta[i].kind &&
                        (outer->meta->kind == HOP_VALUE_SYM
                             ? outer->meta->sym == c->input_meta[i].sym
                             : hop_meta_equal(&outer->meta->meta, &c->input_meta[i].meta));
            bool first = true;
            for (size_t j = 0; j < i; j++)
                if (c->operands[c->body_operands + j].u.node == outer)
                    first = false;
            inputs[i] =
                same && first && hop_tracer_of(outer) != t
                    ? hop_tracer_create_input_for(t, c->input_names[i], &c->input_meta[i], outer)
                    : hop_tracer_create_input(t, c->input_names[i], &c->input_meta[i]);
            if (inputs[i] == NULL)
                st = hop_error_code();
        }
        nin = c->ninputs;
    } else {
        nin = c->noperands - c->body_operands;
        inputs = hop__calloc(nin + 1, sizeof *inputs);
        if (inputs == NULL)
            return HOP_NOMEM;
        for (size_t i = 0; i < nin; i++)
            inputs[i] = c->operands[c->body_operands + i].u.node;
    }
    if (st == HOP_OK) {
        const hop_body *body = &c->bodies[b];
        st = body->fn(t, body->ud, inputs, nin, &c->results[b]);
        if (st != HOP_OK && hop_error_code() == HOP_OK)
            st = hop_error(st, "%s: the %s body failed with %s and no message", c->cls->name,
                           c->cls->prefixes[b], hop_status_name(st));
    }
    hop__free(inputs);
    /* A body must leave the stack as it found it; the restore repairs it. */
    if (st == HOP_OK && hop_output_graph_current(c->og) != t) {
        hop_tracer *cur = hop_output_graph_current(c->og);
        st = hop_error(HOP_MISUSE,
                       "%s: the %s body returned with the tracer of graph %s current instead of "
                       "its own (%s): unbalanced push or pop",
                       c->cls->name, c->cls->prefixes[b], hop_tracer_graph(cur)->name, name);
    }
    /* What the body returns becomes t's own: a free value is lifted. */
    hop_values *r = &c->results[b];
    for (size_t i = 0; i < r->n && st == HOP_OK; i++) {
        if (r->items[i] == NULL) {
            st = hop_error(HOP_INVALID, "%s: output %zu of the %s body is NULL", c->cls->name, i,
                           c->cls->prefixes[b]);
            break;
        }
        hop_node *local = hop_tracer_lift(t, r->items[i]);
        if (local == NULL) {
            char why[1024];
            snprintf(why, sizeof why, "%s", hop_error_message());
            st = hop_error(hop_error_code(), "%s: output %zu of the %s body: %s", c->cls->name, i,
                           c->cls->prefixes[b], why);
        } else
            r->items[i] = local;
    }
    if (st == HOP_OK) {
        hop_arg *outs = hop__calloc(r->n + 1, sizeof *outs);
        if (outs == NULL)
            return HOP_NOMEM;
        for (size_t i = 0; i < r->n; i++)
            outs[i] = hop_arg_node(r->items[i]);
        if (hop_tracer_output(t, outs, r->n) == NULL)
            st = hop_error_code();
        hop__free(outs);
    }
    if (st != HOP_OK)
        return st; /* the caller's restore pops t */
    return hop_output_graph_pop(c->og, t, &c->graphs[b]);
}

/* Binds, in the parent, the free symbols of a symbolic lead argument. */
static hop_status
bind_lead_symbols(hop_call *c)
{
    for (size_t i = 0; i < c->nlead; i++) {
        if (c->lead[i].kind != HOP_ARG_SYM)
            continue;
        const hop_expr *syms[16];
        size_t k = hop_expr_free_symbols(c->lead[i].u.sym, syms, 16);
        for (size_t j = 0; j < k && j < 16; j++)
            if (hop_tracer_bind_symbol(c->parent, syms[j]) == NULL)
                return hop_error_code();
    }
    return HOP_OK;
}

/* Installs the subgraphs, emits the call node and its getitems. */
static hop_status
emit_call(hop_call *c, hop_values *outputs)
{
    hop_graph *pg = hop_tracer_graph(c->parent);
    for (size_t b = 0; b < c->nbodies; b++)
        if (c->reuse[b] == NULL && hop_graph_add_subgraph(pg, c->graphs[b]) != HOP_OK)
            return hop_error_code();
    hop_status st = bind_lead_symbols(c);
    if (st != HOP_OK)
        return st;
    size_t nargs = c->nlead + c->nbodies + 1;
    hop_arg *args = hop__calloc(nargs + c->passed.n, sizeof *args);
    if (args == NULL)
        return HOP_NOMEM;
    hop_arg *passed = args + nargs;
    size_t k = 0;
    for (size_t i = 0; i < c->nlead; i++)
        args[k++] = c->lead[i];
    for (size_t b = 0; b < c->nbodies; b++)
        args[k++] = hop_arg_graph(c->reuse[b] ? c->reuse[b] : c->graphs[b]);
    for (size_t i = 0; i < c->passed.n; i++)
        passed[i] = hop_arg_node(c->passed.items[i]);
    args[k++] = hop_arg_list(passed, c->passed.n);
    hop_node *call = hop_graph_call_hop(pg, c->cls->name, args, k, c->outs, c->nouts);
    hop__free(args);
    if (call == NULL)
        return hop_error_code();
    for (size_t i = 0; i < c->nouts; i++) {
        hop_node *item = hop_graph_getitem(pg, call, i);
        if (item == NULL || hop_values_push(outputs, item) != HOP_OK)
            return hop_error_code();
    }
    return HOP_OK;
}

static void
call_cleanup(hop_call *c)
{
    for (size_t b = 0; b < HOP_MAX_BODIES; b++)
        hop_values_clear(&c->results[b]);
    hop_values_clear(&c->passed);
    hop__free(c->input_meta);
    hop__free(c->input_names);
    hop__free(c->outs);
}

/* ---------------------------------------------------------------- guards */

/* The guards one body's tracing recorded, taken out of the ShapeEnv. */
typedef struct body_guards {
    const hop_expr **items[HOP_MAX_BODIES];
    size_t n[HOP_MAX_BODIES];
} body_guards;

/* Moves the env's guards after the first `before` into bg for body b. */
static hop_status
take_guards(hop_call *c, size_t b, size_t before, body_guards *bg)
{
    hop_shape_env *env = hop_output_graph_env(c->og);
    size_t n = hop_shape_env_nguards(env);
    if (n <= before)
        return HOP_OK;
    bg->items[b] = hop__malloc((n - before) * sizeof *bg->items[b]);
    if (bg->items[b] == NULL)
        return HOP_NOMEM;
    for (size_t i = before; i < n; i++)
        bg->items[b][bg->n[b]++] = hop_shape_env_guard(env, i);
    hop_shape_env_truncate_guards(env, before);
    return HOP_OK;
}

static bool
holds_guard(const body_guards *bg, size_t b, const hop_expr *g)
{
    for (size_t i = 0; i < bg->n[b]; i++)
        if (bg->items[b][i] == g)
            return true;
    return false;
}

/*
 * Puts each body's guards where they hold.  With HOP_GUARDS_BRANCH exactly
 * one body runs per call, so a guard every body recorded holds whenever the
 * call runs: it goes back to the ShapeEnv, i.e. to the caller (the plan's
 * entry checks for a root call, the enclosing body's own list otherwise).
 * Every other guard becomes its body's graph's, checked only when that body
 * runs.  A failure is undone by the call's checkpoint (the env's guards are
 * truncated, the bodies' graphs dropped).
 */
static hop_status
place_guards(hop_call *c, hop_guard_mode mode, const body_guards *bg)
{
    hop_shape_env *env = hop_output_graph_env(c->og);
    for (size_t b = 0; b < c->nbodies; b++) {
        for (size_t i = 0; i < bg->n[b]; i++) {
            const hop_expr *g = bg->items[b][i];
            bool common = mode == HOP_GUARDS_BRANCH;
            for (size_t o = 0; o < c->nbodies && common; o++)
                common = o == b || holds_guard(bg, o, g);
            hop_status st =
                common ? hop_shape_env_add_guard(env, g) : hop_graph_add_guard(c->graphs[b], g);
            if (st != HOP_OK)
                return st;
        }
    }
    return HOP_OK;
}

/* Traces every body (step 3), placing the guards each one's tracing records
 * by the class's guard mode. */
static hop_status
trace_bodies(hop_call *c)
{
    hop_guard_mode mode = hop__guard_mode(c->cls);
    hop_shape_env *env = hop_output_graph_env(c->og);
    body_guards bg;
    memset(&bg, 0, sizeof bg);
    hop_status st = HOP_OK;
    for (size_t b = 0; b < c->nbodies && st == HOP_OK; b++) {
        size_t before = hop_shape_env_nguards(env);
        st = trace_body(c, b);
        /* Taken out before the next body is traced: that one must record
         * for itself what it relies on. */
        if (st == HOP_OK && mode != HOP_GUARDS_CALLER)
            st = take_guards(c, b, before, &bg);
    }
    if (st == HOP_OK && mode != HOP_GUARDS_CALLER)
        st = place_guards(c, mode, &bg);
    for (size_t b = 0; b < HOP_MAX_BODIES; b++)
        hop__free(bg.items[b]);
    return st;
}

hop_status
hop__call_run(hop_call *c, hop_values *outputs)
{
    const hop_hop_class *cls = c->cls;
    hop_status st = RESOLVE(cls, check_operands)(c);
    if (st == HOP_OK && hop__input_mode(cls) == HOP_INPUTS_EXPLICIT)
        st = RESOLVE(cls, body_inputs)(c);
    if (st == HOP_OK)
        st = RESOLVE(cls, lookup)(c);
    if (st == HOP_OK && c->reuse[0] == NULL) {
        st = trace_bodies(c);
        if (st == HOP_OK)
            st = RESOLVE(cls, check_outputs)(c);
        if (st == HOP_OK)
            st = RESOLVE(cls, signature)(c);
        if (st == HOP_OK)
            st = RESOLVE(cls, output_meta)(c);
    }
    if (st == HOP_OK)
        st = emit_call(c, outputs);
    if (st == HOP_OK)
        st = RESOLVE(cls, installed)(c);
    return st;
}

hop_status
hop_hop_call(hop_output_graph *og, const hop_hop_class *cls, const hop_arg *operands,
             size_t noperands, const hop_body *bodies, size_t nbodies, hop_values *outputs)
{
    hop_status st = check_class_call(og, cls, operands, noperands, bodies, nbodies, outputs);
    if (st != HOP_OK)
        return st;
    size_t nout_before = outputs->n;
    hop_checkpoint *cp = hop_output_graph_checkpoint(og);
    if (cp == NULL)
        return hop_error_code();
    hop_call c = {
        .cls = cls,
        .og = og,
        .parent = hop_output_graph_current(og),
        .operands = operands,
        .noperands = noperands,
        .bodies = bodies,
        .nbodies = nbodies,
        .outputs = outputs,
    };
    st = hop__call_run(&c, outputs);
    call_cleanup(&c);
    if (st != HOP_OK) {
        outputs->n = nout_before;
        return hop_output_graph_abandon(og, cp, st);
    }
    hop_checkpoint_free(cp);
    return HOP_OK;
}
