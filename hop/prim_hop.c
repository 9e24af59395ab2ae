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

/* ------------------------------------------------------- slot resolution */

typedef hop_status (*slot_fn)(hop_call *c);

/* The nearest class of cls's chain, ending at the PrimHOP base. */
static const hop_class *
next_base(const hop_class *k)
{
    return k->base ? k->base : k == hop_prim_hop_base() ? NULL : hop_prim_hop_base();
}

/* The tracing slot at `offset`: cls's own or its nearest base's. */
static slot_fn
resolve(const hop_class *cls, size_t offset)
{
    for (const hop_class *k = cls; k; k = next_base(k)) {
        slot_fn f;
        memcpy(&f, (const char *)k + offset, sizeof f);
        if (f)
            return f;
    }
    return NULL; /* unreachable: the base fills every slot */
}

/* Runs cls's tracing slot `name` (at offset) on c, with a message naming
 * the slot where it fails without one (hop__slot_status). */
static hop_status
run_slot(const hop_class *cls, size_t offset, const char *name, hop_call *c)
{
    hop_error_clear();
    return hop__slot_status(cls->name, name, resolve(cls, offset)(c));
}

#define SLOT(cls, slot, c) run_slot((cls), offsetof(hop_class, slot), #slot, (c))

/* Lists of fewer items than this (a call's inputs, a body's outputs) are
 * arrays on the stack rather than blocks of their own. */
#define SMALL_LIST 8

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
    /* A tracer that has not ended is on the stack, which is the current
     * tracer and its ancestors: while c->parent is current, owner encloses
     * it without the walk (O(depth) per operand: a nest's bodies hand the
     * root's values on, lifted at each level, issue #30). */
    if (c->parent == hop_output_graph_current(c->og))
        return HOP_OK;
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
    for (size_t i = 0; i < c->noperands; i++) {
        const hop_node *v = c->operands[i];
        if (v->meta->kind == HOP_VALUE_NONE)
            return hop_error(HOP_INVALID, "%s: operand %zu (%s) has no single value", c->cls->name,
                             i, v->name);
        if (check_reachable(c, "operand", i, v) != HOP_OK)
            return hop_error_code();
    }
    return HOP_OK;
}

/* Whether operand j is in a CARRY group (its body input is fresh). */
static bool
carried(const hop_call *c, size_t j)
{
    for (size_t i = 0, g = 0; i < c->nparams; i++) {
        if (!hop_param_is_group(c->params[i].kind))
            continue;
        if (j >= c->group_start[g] && j < c->group_start[g + 1])
            return c->params[i].kind == HOP_PARAM_CARRY;
        g++;
    }
    return false;
}

/* Room for the made inputs (left for the class to fill), then one input per
 * operand with its metadata and name; a SymInt carry's is a fresh unbacked
 * symbol: in the body it is the current value, not the initial one. */
static hop_status
base_body_inputs(hop_call *c)
{
    size_t made = hop_class_made_inputs(c->cls), n = made + c->noperands;
    c->input_meta = hop__calloc(n + 1, sizeof *c->input_meta);
    c->input_names = hop__calloc(n + 1, sizeof *c->input_names);
    if (c->input_meta == NULL || c->input_names == NULL)
        return HOP_NOMEM;
    hop_shape_env *env = hop_output_graph_env(c->og);
    for (size_t i = 0; i < c->noperands; i++) {
        hop_value_info *m = &c->input_meta[made + i];
        *m = *c->operands[i]->meta;
        c->input_names[made + i] = c->operands[i]->name;
        if (m->kind == HOP_VALUE_SYM && carried(c, i) &&
            (m->sym = hop_shape_env_unbacked(env, INT64_MIN, INT64_MAX)) == NULL)
            return hop_error_code();
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

/* Its signature (body, *args) and modes (lifted inputs, the caller's guards)
 * are the defaults of the resolvers (graph/class.c), which every layer asks. */
static const hop_class prim_hop_base = {
    .name = "prim_hop",
    .check_operands = base_check_operands,
    .body_inputs = base_body_inputs,
    .check_outputs = base_nothing,
    .signature = hop__signature_merge,
    .output_meta = base_output_meta,
    .lookup = base_nothing,
    .installed = base_nothing,
    .verify = hop_verify_default,
    .lower = hop_lower_default,
    .eval = hop_eval_default,
};

const hop_class *
hop_prim_hop_base(void)
{
    return &prim_hop_base;
}

/* The BODY (or BODIES) parameter of body b. */
static const hop_param *
body_param(const hop_call *c, size_t b)
{
    return hop_class_body_param(c->cls, b);
}

/* Body b's subgraph name prefix ("cond_true"), for names and messages. */
static const char *
prefix_of(const hop_call *c, size_t b)
{
    const hop_param *p = body_param(c, b);
    return p ? p->prefix : "body";
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

/* An earlier body's entry by its source, for a later body's search. */
typedef struct source_index {
    uintptr_t source;
    size_t entry;
} source_index;

static int
compare_by_source(const void *a, const void *b)
{
    const source_index *x = a, *y = b;
    return (x->source > y->source) - (x->source < y->source);
}

/* The entry of entries[0..earlier) whose source is src, or earlier: a scan
 * of a few, else a binary search of index (entries[0..earlier) sorted by
 * source, made once per body: a cond whose branches share k lifted values
 * searched k entries for each, O(k^2)). */
static size_t
find_entry(const sig_entry *entries, size_t earlier, const source_index *index, const hop_node *src)
{
    if (index == NULL) {
        size_t k = 0;
        while (k < earlier && entries[k].source != src)
            k++;
        return k;
    }
    source_index key = {(uintptr_t)src, 0};
    const source_index *hit = bsearch(&key, index, earlier, sizeof *index, compare_by_source);
    return hit ? hit->entry : earlier;
}

/* Past this many earlier entries a body's search sorts an index. */
#define SCAN_ENTRIES 16

/* A call lifts a few values: its entries live on the stack up to this many
 * (a calloc and a free of each of the two arrays were ~0.3 K instructions
 * of every traced cond call, issue #30). */
enum { SIG_STACK = 8 };

/* n zeroed entries: stack (room for SIG_STACK) when they fit, else a block
 * (NULL when out of memory); sig_release frees what is not stack. */
static sig_entry *
sig_alloc(sig_entry *stack, size_t n)
{
    if (n > SIG_STACK)
        return hop__calloc(n, sizeof *stack);
    memset(stack, 0, n * sizeof *stack);
    return stack;
}

static void
sig_release(sig_entry *entries, const sig_entry *stack)
{
    if (entries != stack)
        hop__free(entries);
}

/* The prefix's tail after the HOP's name: "cond_true" -> "true_branch"; a
 * body of a BODIES parameter: its index, "_branch2". */
static void
unique_suffix(const hop_call *c, int body, char *buf, size_t cap)
{
    const hop_param *bp = body_param(c, (size_t)body);
    if (bp && bp->kind == HOP_PARAM_BODIES) {
        snprintf(buf, cap, "_branch%zu", (size_t)body - hop_class_nbodies(c->cls));
        return;
    }
    const char *p = prefix_of(c, (size_t)body);
    size_t n = strlen(c->cls->name);
    if (strncmp(p, c->cls->name, n) == 0 && p[n] == '_')
        p += n + 1;
    snprintf(buf, cap, "_%s_branch", p);
}

/* Moves body b's placeholders of entries[0..n) to follow its nexplicit
 * explicit ones, in entry order.  When those are all of its placeholders,
 * each goes to the end in turn (O(1) each); hop_graph_move_placeholder to a
 * position walks the list to it, and a cond's branches, whose shared values
 * are sorted by name, had every one moved so: O(k^2) in k lifted values. */
static hop_status
put_in_signature_order(hop_graph *g, const sig_entry *entries, size_t n, size_t b, size_t nexplicit)
{
    hop_status st = HOP_OK;
    bool all = g->nplaceholders == nexplicit + n;
    for (size_t k = 0; k < n && st == HOP_OK; k++)
        st = hop_graph_move_placeholder(g, entries[k].ph[b],
                                        all ? nexplicit + n - 1 : nexplicit + k);
    return st;
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
    sig_entry stack[2][SIG_STACK];
    const sig_entry *on_stack = stack[0];
    sig_entry *entries = sig_alloc(stack[0], total + 1);
    if (entries == NULL)
        return HOP_NOMEM;
    size_t n = 0;
    source_index *index = NULL;
    for (size_t b = 0; b < nb; b++) {
        const hop_tracer *t = c->tracers[b];
        /* A tracer lifts each source once: only earlier bodies' entries can
         * hold it (the first body's search is skipped, so a wrap with k
         * lifted values is O(k), not O(k^2)). */
        size_t earlier = n;
        hop__free(index);
        index = NULL;
        if (earlier > SCAN_ENTRIES && hop_tracer_nlifted(t) > 0) {
            if ((index = hop__calloc(earlier, sizeof *index)) == NULL) {
                sig_release(entries, on_stack);
                return HOP_NOMEM;
            }
            for (size_t k = 0; k < earlier; k++)
                index[k] = (source_index){(uintptr_t)entries[k].source, k};
            qsort(index, earlier, sizeof *index, compare_by_source);
        }
        for (size_t i = 0; i < hop_tracer_nlifted(t); i++) {
            hop_node *ph = hop_tracer_lifted_placeholder(t, i);
            hop_node *src = hop_tracer_lifted_source_at(t, i);
            size_t k = find_entry(entries, earlier, index, src);
            if (k == earlier)
                k = n;
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
    hop__free(index);
    if (nb > 1) {
        /* Shared first (sorted by name), then unique ones by body, each in
         * order of first use (a stable partition). */
        sig_entry *ordered = sig_alloc(stack[1], n + 1);
        if (ordered == NULL) {
            sig_release(entries, on_stack);
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
        sig_release(entries, on_stack);
        entries = ordered;
        on_stack = stack[1];
    }

    /* Explicit inputs are passed as the operands, brought into the parent. */
    bool explicit = hop_class_input_mode(c->cls) == HOP_INPUTS_EXPLICIT;
    size_t nexplicit = explicit ? c->ninputs : 0; /* placeholders before the lifted ones */
    for (size_t i = 0; explicit && i < c->noperands && st == HOP_OK; i++) {
        hop_node *v = c->operands[i];
        hop_node *local = hop_tracer_lift(c->parent, v);
        st = local ? hop_values_push(&c->passed, local) : hop_error_code();
    }
    unsigned reorder = 0; /* the bodies whose placeholders are out of order */
    _Static_assert(HOP_MAX_BODIES <= 32, "a bit per body");
    for (size_t k = 0; k < n && st == HOP_OK; k++) {
        sig_entry *e = &entries[k];
        char suffix[64] = "";
        if (nb > 1 && e->owner >= 0)
            unique_suffix(c, e->owner, suffix, sizeof suffix);
        /* The source's own name when it needs no suffix and fits (a
         * snprintf per lifted value was ~1,400 instructions of its ~20,000;
         * issue #30); else as before, cut to 255 bytes. */
        char buf[256];
        const char *name = e->source->name;
        if (suffix[0] || strlen(name) >= sizeof buf) {
            snprintf(buf, sizeof buf, "%s%s", e->source->name, suffix);
            name = buf;
        }
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
            if (st == HOP_OK && (prev ? prev->next : g->first) != e->ph[b])
                reorder |= 1u << b;
        }
        if (st == HOP_OK)
            st = hop_values_push(&c->passed, e->source);
    }
    for (size_t b = 0; b < nb && st == HOP_OK; b++)
        if (reorder & (1u << b))
            st = put_in_signature_order(c->graphs[b], entries, n, b, nexplicit);
    sig_release(entries, on_stack);
    return st;
}

/* ------------------------------------------------------------- the call */

static const char *const param_kind_text[] = {
    [HOP_PARAM_INT] = "an int",
    [HOP_PARAM_FLOAT] = "a float",
    [HOP_PARAM_BOOL] = "a bool",
    [HOP_PARAM_DTYPE] = "a dtype",
    [HOP_PARAM_VALUE] = "a traced value, a SymInt/SymBool, a bool or an int",
    [HOP_PARAM_BODY] = "a body",
    [HOP_PARAM_VALUES] = "a list of traced values",
    [HOP_PARAM_CARRY] = "a list of traced values",
    [HOP_PARAM_VARARGS] = "a list of traced values",
};

/*
 * Binds args to the signature: the leads into c->lead, the groups' values
 * into c->operands (allocated; the caller frees it).  HOP_INVALID names the
 * parameter that does not fit.
 */
static hop_status
bind_args(hop_call *c, const hop_arg *args, size_t nargs)
{
    const char *hop = c->cls->name;
    size_t want = 0, total = 0;
    for (size_t i = 0; i < c->nparams; i++)
        want += c->params[i].kind != HOP_PARAM_BODY && c->params[i].kind != HOP_PARAM_BODIES;
    if (nargs != want)
        return hop_error(HOP_INVALID, "%s: takes %zu argument%s besides its bodies, got %zu", hop,
                         want, want == 1 ? "" : "s", nargs);
    size_t k = 0;
    for (size_t i = 0; i < c->nparams; i++) {
        const hop_param *p = &c->params[i];
        if (p->kind == HOP_PARAM_BODY || p->kind == HOP_PARAM_BODIES)
            continue;
        const hop_arg *a = &args[k++];
        if (hop_param_is_group(p->kind)) {
            if (a->kind != HOP_ARG_LIST)
                return hop_error(HOP_INVALID, "%s: %s must be %s", hop, p->name,
                                 param_kind_text[p->kind]);
            if (a->u.list.n && a->u.list.items == NULL)
                return hop_error(HOP_MISUSE, "%s: %zu operands at NULL", hop, a->u.list.n);
            for (size_t j = 0; j < a->u.list.n; j++)
                if (a->u.list.items[j].kind != HOP_ARG_NODE || a->u.list.items[j].u.node == NULL)
                    return hop_error(HOP_INVALID,
                                     "%s: operand %zu must be a traced value (a tensor or a "
                                     "SymInt)",
                                     hop, total + j);
            total += a->u.list.n;
        } else if (p->kind == HOP_PARAM_VALUE && a->kind == HOP_ARG_NODE && a->u.node == NULL) {
            return hop_error(HOP_MISUSE, "%s: %s is a NULL value", hop, p->name);
        } else if (!hop_param_fits(p->kind, a)) {
            return hop_error(HOP_INVALID, "%s: %s must be %s", hop, p->name,
                             param_kind_text[p->kind]);
        } else {
            c->lead[c->nlead++] = *a;
        }
    }
    c->operands = hop__calloc(total + 1, sizeof *c->operands);
    if (c->operands == NULL)
        return HOP_NOMEM;
    k = 0;
    for (size_t i = 0; i < c->nparams; i++) {
        const hop_param *p = &c->params[i];
        if (p->kind == HOP_PARAM_BODY || p->kind == HOP_PARAM_BODIES)
            continue;
        const hop_arg *a = &args[k++];
        if (!hop_param_is_group(p->kind))
            continue;
        c->group_start[c->ngroups++] = c->noperands;
        for (size_t j = 0; j < a->u.list.n; j++)
            c->operands[c->noperands++] = a->u.list.items[j].u.node;
    }
    c->group_start[c->ngroups] = c->noperands;
    return HOP_OK;
}

static hop_status
check_class_call(hop_output_graph *og, const hop_class *cls, const hop_arg *args, size_t nargs,
                 const hop_body *bodies, size_t nbodies, hop_values *outputs)
{
    if (og == NULL || cls == NULL || outputs == NULL)
        return hop_error(HOP_MISUSE, "hop_apply: NULL %s",
                         og == NULL    ? "output graph"
                         : cls == NULL ? "class"
                                       : "outputs");
    if (nargs > 0 && args == NULL)
        return hop_error(HOP_MISUSE, "%s: %zu arguments at NULL", cls->name, nargs);
    if (!hop_class_takes_bodies(cls, nbodies)) {
        size_t nb = hop_class_nbodies(cls); /* for the message only */
        return hop_class_takes_bodies(cls, nb + 1)
                   ? hop_error(HOP_INVALID, "%s: takes %zu to %d bodies, got %zu", cls->name,
                               nb + 1, HOP_MAX_BODIES, nbodies)
                   : hop_error(HOP_INVALID, "%s: takes %zu bod%s, got %zu", cls->name, nb,
                               nb == 1 ? "y" : "ies", nbodies);
    }
    for (size_t b = 0; b < nbodies; b++)
        if (bodies == NULL || bodies[b].fn == NULL)
            return hop_error(HOP_INVALID, "%s: %s body is not callable (NULL function)", cls->name,
                             hop_class_body_param(cls, b)->prefix);
    return HOP_OK;
}

/* Traces body b in a new subtracer; leaves it popped with its graph in c. */
static hop_status
trace_body(hop_call *c, size_t b)
{
    const char *prefix = prefix_of(c, b);
    const char *name = hop_output_graph_next_name(c->og, prefix);
    if (name == NULL)
        return hop_error_code();
    hop_tracer *t = hop_output_graph_push(c->og, name);
    if (t == NULL)
        return hop_error_code();
    c->tracers[b] = t;

    hop_status st = HOP_OK;
    bool explicit = hop_class_input_mode(c->cls) == HOP_INPUTS_EXPLICIT;
    size_t nin = explicit ? c->ninputs : c->noperands;
    /* A call's few inputs sit on the stack (a malloc and a free were ~250
     * instructions of every body, issue #30). */
    hop_node *few[SMALL_LIST] = {NULL};
    hop_node **inputs = nin < SMALL_LIST ? few : hop__calloc(nin + 1, sizeof *inputs);
    if (inputs == NULL)
        return HOP_NOMEM;
    if (explicit) {
        size_t made = c->ninputs - c->noperands;
        /* A class with a lookup slot calls this body again from later calls
         * (invoke_subgraph's shared subgraph_N) with other operands: there an
         * input stands for no outer value, and a closure over this call's
         * operand must be a lifted input of its own. */
        bool shared = resolve(c->cls, offsetof(hop_class, lookup)) != base_nothing;
        for (size_t i = 0; i < nin && st == HOP_OK; i++) {
            /* An input passed through unchanged stands for its operand, so a
             * closure over the same value reuses it; a carry's is fresh (it
             * changes), and so is an input the HOP makes. */
            hop_node *outer = i >= made && !shared ? c->operands[i - made] : NULL;
            bool same = outer && !carried(c, i - made) &&
                        outer->meta->kind == c->input_meta[i].kind &&
                        (outer->meta->kind == HOP_VALUE_SYM
                             ? outer->meta->sym == c->input_meta[i].sym
                             : hop_meta_equal(&outer->meta->meta, &c->input_meta[i].meta));
            for (size_t j = made; same && j < i; j++)
                if (c->operands[j - made] == outer)
                    same = false; /* only its first use */
            inputs[i] =
                same && hop_tracer_of(outer) != t
                    ? hop_tracer_create_input_for(t, c->input_names[i], &c->input_meta[i], outer)
                    : hop_tracer_create_input(t, c->input_names[i], &c->input_meta[i]);
            if (inputs[i] == NULL)
                st = hop_error_code();
        }
    } else {
        for (size_t i = 0; i < nin; i++)
            inputs[i] = c->operands[i];
    }
    if (st == HOP_OK) {
        const hop_body *body = &c->bodies[b];
        st = body->fn(t, body->ud, inputs, nin, &c->results[b]);
        if (st != HOP_OK && hop_error_code() == HOP_OK)
            st = hop_error(st, "%s: the %s body failed with %s and no message", c->cls->name,
                           prefix, hop_status_name(st));
    }
    if (inputs != few)
        hop__free(inputs);
    /* A body must leave the stack as it found it; the restore repairs it. */
    if (st == HOP_OK && hop_output_graph_current(c->og) != t) {
        hop_tracer *cur = hop_output_graph_current(c->og);
        st = hop_error(HOP_MISUSE,
                       "%s: the %s body returned with the tracer of graph %s current instead of "
                       "its own (%s): unbalanced push or pop",
                       c->cls->name, prefix, hop_tracer_graph(cur)->name, name);
    }
    /* What the body returns becomes t's own: a free value is lifted. */
    hop_values *r = &c->results[b];
    for (size_t i = 0; i < r->n && st == HOP_OK; i++) {
        if (r->items[i] == NULL) {
            st = hop_error(HOP_INVALID, "%s: output %zu of the %s body is NULL", c->cls->name, i,
                           prefix);
            break;
        }
        hop_node *local = hop_tracer_lift(t, r->items[i]);
        if (local == NULL) {
            char why[1024];
            snprintf(why, sizeof why, "%s", hop_error_message());
            st = hop_error(hop_error_code(), "%s: output %zu of the %s body: %s", c->cls->name, i,
                           prefix, why);
        } else
            r->items[i] = local;
    }
    if (st == HOP_OK) {
        hop_arg few_outs[SMALL_LIST];
        hop_arg *outs = r->n < SMALL_LIST ? few_outs : hop__malloc(r->n * sizeof *outs);
        if (outs == NULL)
            return HOP_NOMEM;
        for (size_t i = 0; i < r->n; i++)
            outs[i] = hop_arg_node(r->items[i]);
        if (hop_tracer_output(t, outs, r->n) == NULL)
            st = hop_error_code();
        if (outs != few_outs)
            hop__free(outs);
    }
    if (st != HOP_OK)
        return st; /* the caller's restore pops t */
    return hop_output_graph_pop(c->og, t, &c->graphs[b]);
}

/* The node whose memory v's is: v with the views it is made by (x[0], x.T)
 * walked back to their base. */
static const hop_node *
storage_root(const hop_node *v)
{
    while (v->kind == HOP_NODE_CALL_OP && v->nargs > 0 && v->args[0].kind == HOP_ARG_NODE &&
           hop_op_get(v->op)->family == HOP_KF_VIEW)
        v = v->args[0].u.node;
    return v;
}

/* Whether v, in graph g, was made after mark (NULL: g was empty) by a node
 * other than a placeholder (a placeholder a lift inserts is the caller's). */
static bool
made_after(const hop_graph *g, const hop_node *mark, const hop_node *v)
{
    if (v->kind == HOP_NODE_PLACEHOLDER)
        return false;
    for (const hop_node *n = mark ? mark->next : g->first; n; n = n->next)
        if (n == v)
            return true;
    return false;
}

/* A HOP's results never share memory with its operands, with what its
 * bodies close over or with each other (docs/ARCHITECTURE.md, "A HOP's
 * results are fresh"), also when its body runs inline: an output whose
 * memory is a value made before the body ran (an operand, a lifted value)
 * or another output's is replaced by a clone of it, as eagerly
 * (hop/graph_eval.c fresh_results) and in a plan (lowering/lower.c). */
static hop_status
fresh_inline_outputs(hop_call *c, const hop_node *mark, hop_values *outputs, size_t before)
{
    hop_graph *g = hop_tracer_graph(c->parent);
    for (size_t i = before; i < outputs->n; i++) {
        hop_node *v = outputs->items[i];
        if (v->meta->kind != HOP_VALUE_TENSOR)
            continue;
        const hop_node *root = storage_root(v);
        bool shared = !made_after(g, mark, root);
        for (size_t j = before; j < i && !shared; j++)
            shared = outputs->items[j]->meta->kind == HOP_VALUE_TENSOR &&
                     storage_root(outputs->items[j]) == root;
        if (!shared)
            continue;
        hop_arg a = hop_arg_node(v);
        hop_node *copy = hop_tracer_call_op(c->parent, HOP_OP_clone, &a, 1);
        if (copy == NULL)
            return hop_error_code();
        outputs->items[i] = copy;
    }
    return HOP_OK;
}

/*
 * Runs body b inline: traced straight into the caller's tracer, with the
 * operands themselves as its inputs, its results (lifted into the caller)
 * the call's outputs, fresh.  For a HOP whose operands decide at trace time
 * which body runs (cond with a constant pred), like Python's own if.
 */
__attribute__((noinline)) static hop_status
run_inline(hop_call *c, size_t b, hop_values *outputs)
{
    size_t before = outputs->n;
    const hop_body *body = &c->bodies[b];
    const hop_node *mark = hop_tracer_graph(c->parent)->last;
    hop_status st = body->fn(c->parent, body->ud, c->operands, c->noperands, outputs);
    if (st != HOP_OK && hop_error_code() == HOP_OK)
        st = hop_error(st, "%s: the %s body failed with %s and no message", c->cls->name,
                       prefix_of(c, b), hop_status_name(st));
    for (size_t i = before; i < outputs->n && st == HOP_OK; i++) {
        hop_node *v = outputs->items[i] ? hop_tracer_lift(c->parent, outputs->items[i]) : NULL;
        if (v == NULL)
            st = outputs->items[i] ? hop_error_code()
                                   : hop_error(HOP_INVALID, "%s: output %zu of the %s body is NULL",
                                               c->cls->name, i - before, prefix_of(c, b));
        else
            outputs->items[i] = v;
    }
    return st == HOP_OK ? fresh_inline_outputs(c, mark, outputs, before) : st;
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

/*
 * Installs the subgraphs, emits the call node (leads, bodies, groups: the
 * layout of hop/class.h) and its getitems.
 */
__attribute__((noinline)) static hop_status
emit_call(hop_call *c, hop_values *outputs)
{
    hop_graph *pg = hop_tracer_graph(c->parent);
    for (size_t b = 0; b < c->nbodies; b++)
        if (c->reuse[b] == NULL && hop_graph_add_subgraph(pg, c->graphs[b]) != HOP_OK)
            return hop_error_code();
    hop_status st = bind_lead_symbols(c);
    if (st != HOP_OK)
        return st;
    /* Lists: lifted mode has one, the merged signature.  Explicit mode has
     * one per group, the lifted values appended to a final VARARGS group or
     * in a list of their own. */
    bool lifted = hop_class_input_mode(c->cls) == HOP_INPUTS_LIFTED;
    size_t nlists = lifted ? 1 : c->ngroups;
    bool trailing_varargs = c->nparams > 0 && c->params[c->nparams - 1].kind == HOP_PARAM_VARARGS;
    if (!lifted && !trailing_varargs)
        nlists++;
    size_t nargs = c->nlead + c->nbodies + nlists;
    /* The call's arguments on the stack when they are few (a cond's: 5 and
     * its operands), as hop_graph_call_hop copies them: a calloc and a free
     * fewer a call (issue #30). */
    hop_arg small[16];
    hop_arg *args =
        nargs + c->passed.n <= 16 ? small : hop__calloc(nargs + c->passed.n, sizeof *args);
    if (args == NULL)
        return HOP_NOMEM;
    hop_arg *passed = args + nargs;
    for (size_t i = 0; i < c->passed.n; i++)
        passed[i] = hop_arg_node(c->passed.items[i]);
    size_t k = 0;
    for (size_t i = 0; i < c->nlead; i++)
        args[k++] = c->lead[i];
    for (size_t b = 0; b < c->nbodies; b++)
        args[k++] = hop_arg_graph(c->reuse[b] ? c->reuse[b] : c->graphs[b]);
    for (size_t l = 0; l < nlists; l++) {
        size_t from = lifted ? 0 : l < c->ngroups ? c->group_start[l] : c->noperands;
        size_t to = lifted || l + 1 == nlists ? c->passed.n : c->group_start[l + 1];
        args[k++] = hop_arg_list(passed + from, to - from);
    }
    hop_node *call = hop_graph_call_hop(pg, c->cls, args, k, c->outs, c->nouts);
    if (args != small)
        hop__free(args);
    if (call == NULL)
        return hop_error_code();
    /* The node must be one the HOP's verify slot accepts, as a loaded one
     * must: a class whose tracing slots disagree with it fails here, not
     * when the program is saved and loaded again. */
    if (hop_graph_verify_call(call) != HOP_OK && hop_error_code() != HOP_NOMEM) {
        char why[1024];
        snprintf(why, sizeof why, "%s", hop_error_message());
        return hop_error(HOP_VERIFY, "%s: the call its slots traced does not verify: %s",
                         c->cls->name, why);
    }
    for (size_t i = 0; i < c->nouts; i++) {
        hop_node *item = hop_graph_getitem(pg, call, i);
        if (item == NULL || hop_values_push(outputs, item) != HOP_OK)
            return hop_error_code();
    }
    return HOP_OK;
}

/*
 * The end of a call's tracing: the slot that gave the outputs (output_meta,
 * or lookup when it answered from a cache) gave metadata for each, and, for
 * a class that does not count its bodies' outputs itself (body_nouts), as
 * many as its first body returns: a class that returned HOP_OK without
 * outputs would otherwise make a call node with none, and its caller would
 * look for results that are not there.
 */
static hop_status
check_outputs_made(const hop_call *c, const char *slot)
{
    const char *hop = c->cls->name;
    if (c->nouts > 0 && c->outs == NULL)
        return hop_error(HOP_MISUSE, "%s: the %s slot gave %zu outputs but no metadata for them",
                         hop, slot, c->nouts);
    for (size_t i = 0; i < c->nouts; i++)
        if (c->outs[i].kind != HOP_VALUE_TENSOR && c->outs[i].kind != HOP_VALUE_SYM)
            return hop_error(HOP_MISUSE,
                             "%s: the %s slot left output %zu without metadata (a tensor or a "
                             "SymInt)",
                             hop, slot, i);
    const hop_graph *g0 = c->reuse[0] ? c->reuse[0] : c->graphs[0];
    if (HOP_CLASS_SLOT_OWNER(c->cls, body_nouts) == NULL && g0 && g0->output &&
        g0->output->nargs != c->nouts)
        return hop_error(
            HOP_MISUSE, "%s: the %s slot gave %zu output%s but the body %s returns %zu", hop, slot,
            (size_t)c->nouts, c->nouts == 1 ? "" : "s", g0->name, (size_t)g0->output->nargs);
    return HOP_OK;
}

static void
call_cleanup(hop_call *c)
{
    /* Only a body's tracing fills results[b] (b < nbodies, which only
     * grows): the other HOP_MAX_BODIES - nbodies lists are empty, and
     * clearing them was ~300 instructions a call (issue #30). */
    for (size_t b = 0; b < c->nbodies; b++)
        hop_values_clear(&c->results[b]);
    hop_values_clear(&c->passed);
    hop__free(c->operands);
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
    hop_guard_mode mode = hop_class_guard_mode(c->cls);
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
    const hop_class *cls = c->cls;
    hop_status st = SLOT(cls, check_operands, c);
    if (st == HOP_OK && c->inline_body >= 0)
        return run_inline(c, (size_t)c->inline_body, outputs);
    if (st == HOP_OK && hop_class_input_mode(cls) == HOP_INPUTS_EXPLICIT) {
        size_t made = hop_class_made_inputs(cls);
        st = SLOT(cls, body_inputs, c);
        if (st == HOP_OK && c->ninputs != made + c->noperands)
            st = hop_error(HOP_MISUSE,
                           "%s: body_inputs made %zu inputs for %zu operands and %zu "
                           "made inputs",
                           cls->name, c->ninputs, c->noperands, made);
        for (size_t i = 0; i < c->ninputs && st == HOP_OK; i++)
            if (c->input_meta[i].kind == HOP_VALUE_NONE || c->input_names[i] == NULL)
                st = hop_error(HOP_MISUSE,
                               "%s: body_inputs left input %zu without metadata "
                               "or a name",
                               cls->name, i);
    }
    if (st == HOP_OK)
        st = SLOT(cls, lookup, c);
    if (st == HOP_OK && c->reuse[0] == NULL) {
        st = trace_bodies(c);
        if (st == HOP_OK)
            st = SLOT(cls, check_outputs, c);
        if (st == HOP_OK)
            st = SLOT(cls, signature, c);
        if (st == HOP_OK)
            st = SLOT(cls, output_meta, c);
    }
    if (st == HOP_OK)
        st = check_outputs_made(c, c->reuse[0] ? "lookup" : "output_meta");
    if (st == HOP_OK)
        st = emit_call(c, outputs);
    if (st == HOP_OK)
        st = SLOT(cls, installed, c);
    return st;
}

hop_status
hop_apply(hop_output_graph *og, const hop_class *cls, const hop_arg *args, size_t nargs,
          const hop_body *bodies, size_t nbodies, hop_values *outputs)
{
    hop_status st = check_class_call(og, cls, args, nargs, bodies, nbodies, outputs);
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
        .bodies = bodies,
        .nbodies = nbodies,
        .inline_body = -1,
        .outputs = outputs,
    };
    c.params = hop_class_params(cls, &c.nparams);
    st = bind_args(&c, args, nargs);
    if (st == HOP_OK)
        st = hop__call_run(&c, outputs);
    call_cleanup(&c);
    if (st != HOP_OK) {
        outputs->n = nout_before;
        return hop_output_graph_abandon(og, cp, st);
    }
    hop_checkpoint_free(cp);
    return HOP_OK;
}

/* ------------------------------------------------------------ accessors */

/* The index of parameter `name` in c's signature, or -1 with HOP_MISUSE. */
static int
param_index(const hop_class *cls, const hop_param *params, size_t n, const char *name,
            const char *what)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(params[i].name, name) == 0)
            return (int)i;
    hop_error(HOP_MISUSE, "%s: the HOP %s has no %s named %s", what, cls ? cls->name : "(null)",
              "parameter", name ? name : "(NULL)");
    return -1;
}

hop_arg *
hop_call_param(hop_call *c, const char *name)
{
    if (c == NULL)
        return hop_error(HOP_MISUSE, "hop_call_param: NULL call"), NULL;
    int i = param_index(c->cls, c->params, c->nparams, name, "hop_call_param");
    if (i < 0)
        return NULL;
    if (!hop_param_is_lead(c->params[i].kind))
        return hop_error(HOP_MISUSE, "hop_call_param: %s of %s is not a leading argument", name,
                         c->cls->name),
               NULL;
    size_t k = 0;
    for (int j = 0; j < i; j++)
        k += hop_param_is_lead(c->params[j].kind);
    return &c->lead[k];
}

hop_node *const *
hop_call_group(const hop_call *c, const char *name, size_t *n)
{
    static hop_node *const none[1] = {NULL};
    if (n)
        *n = 0;
    if (c == NULL)
        return hop_error(HOP_MISUSE, "hop_call_group: NULL call"), NULL;
    int i = param_index(c->cls, c->params, c->nparams, name, "hop_call_group");
    if (i < 0)
        return NULL;
    if (!hop_param_is_group(c->params[i].kind))
        return hop_error(HOP_MISUSE, "hop_call_group: %s of %s is not a group of values", name,
                         c->cls->name),
               NULL;
    size_t g = 0;
    for (int j = 0; j < i; j++)
        g += hop_param_is_group(c->params[j].kind);
    size_t from = c->group_start[g], to = c->group_start[g + 1];
    if (n)
        *n = to - from;
    return to > from ? c->operands + from : none;
}

/* The node's argument for parameter `name` (see hop/class.h's layout). */
static const hop_arg *
node_arg(const hop_node *call, const char *name, const char *what, hop_param_kind *kind)
{
    if (call == NULL || call->kind != HOP_NODE_CALL_HOP || call->cls == NULL)
        return hop_error(HOP_MISUSE, "%s: not a call_hop node", what), NULL;
    size_t np;
    const hop_param *params = hop_class_params(call->cls, &np);
    int i = param_index(call->cls, params, np, name, what);
    if (i < 0)
        return NULL;
    /* leads, then bodies (a BODIES parameter's are all the rest), then
     * groups: a lead's index counts the leads before it, a body's every
     * lead and the bodies before it, a group's the call's bodies too (a
     * traced cond's lowering and verifying ask for its leads and bodies
     * four times a call: no walk over the arguments for those) */
    size_t k = 0;
    hop_param_kind want = params[i].kind;
    bool lead = hop_param_is_lead(want);
    for (size_t j = 0; j < (lead ? (size_t)i : np); j++)
        k += hop_param_is_lead(params[j].kind);
    if (want == HOP_PARAM_BODY || want == HOP_PARAM_BODIES) {
        for (int j = 0; j < i; j++)
            k += params[j].kind == HOP_PARAM_BODY;
    } else if (!lead) {
        for (size_t j = 0; j < call->nargs; j++)
            k += call->args[j].kind == HOP_ARG_GRAPH;
        if (hop_class_input_mode(call->cls) != HOP_INPUTS_LIFTED)
            for (int j = 0; j < i; j++)
                k += hop_param_is_group(params[j].kind);
    }
    *kind = want;
    if (k >= call->nargs)
        return hop_error(HOP_VERIFY, "%s: %s has no argument for %s", what, call->name, name), NULL;
    return &call->args[k];
}

const hop_arg *
hop_node_param(const hop_node *call, const char *name)
{
    hop_param_kind k;
    const hop_arg *a = node_arg(call, name, "hop_node_param", &k);
    if (a && !hop_param_is_lead(k))
        return hop_error(HOP_MISUSE, "hop_node_param: %s of %s is not a leading argument", name,
                         call->cls->name),
               NULL;
    return a;
}

const hop_graph *
hop_node_body(const hop_node *call, const char *name)
{
    hop_param_kind k;
    const hop_arg *a = node_arg(call, name, "hop_node_body", &k);
    if (a && (k != HOP_PARAM_BODY || a->kind != HOP_ARG_GRAPH))
        return hop_error(HOP_MISUSE, "hop_node_body: %s of %s is not a body", name,
                         call->cls->name),
               NULL;
    return a ? a->u.graph : NULL;
}

const hop_arg *
hop_node_bodies(const hop_node *call, const char *name, size_t *n)
{
    if (n)
        *n = 0;
    hop_param_kind k;
    const hop_arg *a = node_arg(call, name, "hop_node_bodies", &k);
    if (a && k != HOP_PARAM_BODIES && k != HOP_PARAM_BODY)
        return hop_error(HOP_MISUSE, "hop_node_bodies: %s of %s is not a body", name,
                         call->cls->name),
               NULL;
    size_t m = 0;
    while (a && a + m < call->args + call->nargs && a[m].kind == HOP_ARG_GRAPH &&
           (k == HOP_PARAM_BODIES || m == 0))
        m++;
    if (n)
        *n = m;
    return a;
}

const hop_arg *
hop_node_group(const hop_node *call, const char *name, size_t *n)
{
    if (n)
        *n = 0;
    hop_param_kind k;
    const hop_arg *a = node_arg(call, name, "hop_node_group", &k);
    if (a && (!hop_param_is_group(k) || a->kind != HOP_ARG_LIST))
        return hop_error(HOP_MISUSE, "hop_node_group: %s of %s is not a group of values", name,
                         call->cls->name),
               NULL;
    if (a == NULL)
        return NULL;
    if (n)
        *n = a->u.list.n;
    return a->u.list.items ? a->u.list.items : a;
}

const hop_arg *
hop_node_lifted(const hop_node *call, size_t *n)
{
    if (n)
        *n = 0;
    if (call == NULL || call->kind != HOP_NODE_CALL_HOP || call->cls == NULL)
        return hop_error(HOP_MISUSE, "hop_node_lifted: not a call_hop node"), NULL;
    size_t np;
    const hop_param *params = hop_class_params(call->cls, &np);
    bool own_list = hop_class_input_mode(call->cls) != HOP_INPUTS_LIFTED &&
                    !(np > 0 && params[np - 1].kind == HOP_PARAM_VARARGS);
    const hop_arg *last = call->nargs ? &call->args[call->nargs - 1] : NULL;
    if (!own_list || last == NULL || last->kind != HOP_ARG_LIST)
        return call->args;
    if (n)
        *n = last->u.list.n;
    return last->u.list.items ? last->u.list.items : last;
}

/* ------------------------------------------------- bound outputs */

hop_status
hop_call_bind_outputs(hop_call *c)
{
    for (size_t i = 0; i < c->nouts; i++) {
        hop_node *item = c->outputs->items[c->outputs->n - c->nouts + i];
        if (c->outs[i].kind == HOP_VALUE_SYM &&
            hop_expr_kind_of(c->outs[i].sym) == HOP_EXPR_SYMBOL &&
            hop_symbol_is_unbacked(c->outs[i].sym) &&
            hop_tracer_bound_symbol(c->parent, c->outs[i].sym) == NULL &&
            hop_tracer_bind_value(c->parent, c->outs[i].sym, item) != HOP_OK)
            return hop_error_code();
    }
    return HOP_OK;
}

/* ------------------------------------------------- transformed bodies */

static hop_status
replace_body(hop_call *c, size_t b, const char *suffix, hop_body_builder build, void *ud, bool keep)
{
    if (b >= c->nbodies || c->graphs[b] == NULL || build == NULL)
        return hop_error(HOP_MISUSE, "%s: hop_call_replace_body: no traced body %zu", c->cls->name,
                         b);
    if (keep && c->nbodies >= HOP_MAX_BODIES)
        return hop_error(HOP_MISUSE, "%s: hop_call_replace_body_keep: %zu bodies already",
                         c->cls->name, c->nbodies);
    char name[256];
    snprintf(name, sizeof name, "%s%s", c->graphs[b]->name, suffix ? suffix : "");
    /* A tracer's graph, so that the OutputGraph owns it; nothing is traced
     * in it: build writes it with the graph builders. */
    hop_tracer *t = hop_output_graph_push(c->og, name);
    if (t == NULL)
        return hop_error_code();
    hop_graph *out = hop_tracer_graph(t);
    hop_status st = build(ud, c->graphs[b], out);
    if (st == HOP_OK && out->nplaceholders != c->graphs[b]->nplaceholders)
        st = hop_error(HOP_MISUSE, "%s: the transformed body %s has %zu inputs, the traced one %zu",
                       c->cls->name, name, out->nplaceholders, c->graphs[b]->nplaceholders);
    if (st != HOP_OK)
        return st; /* the protocol's restore pops t */
    if ((st = hop_output_graph_pop(c->og, t, &out)) != HOP_OK)
        return st;
    if (keep)
        c->graphs[c->nbodies++] = c->graphs[b];
    else
        hop_output_graph_discard(c->og, c->graphs[b]);
    c->graphs[b] = out;
    return HOP_OK;
}

hop_status
hop_call_replace_body(hop_call *c, size_t b, const char *suffix, hop_body_builder build, void *ud)
{
    return replace_body(c, b, suffix, build, ud, false);
}

hop_status
hop_call_replace_body_keep(hop_call *c, size_t b, const char *suffix, hop_body_builder build,
                           void *ud)
{
    return replace_body(c, b, suffix, build, ud, true);
}

hop_status
hop_call_body_output_meta(hop_call *c)
{
    const hop_node *o = c->graphs[0]->output;
    c->outs = hop_calloc(o->nargs + 1, sizeof *c->outs);
    if (c->outs == NULL)
        return HOP_NOMEM;
    for (size_t i = 0; i < o->nargs; i++) {
        if (o->args[i].kind != HOP_ARG_NODE)
            return hop_error(HOP_INVALID, "%s: output %zu of %s is not a value of the graph",
                             c->cls->name, i, c->graphs[0]->name);
        c->outs[i] = *o->args[i].u.node->meta;
    }
    c->nouts = o->nargs;
    return HOP_OK;
}
