/*
 * output_graph/lifts.c - lifting provenance (hop/lifts.h): each subgraph's
 * capture table (what every placeholder stands for in the parent graph), the
 * lift notes upper layers attach, and the report built from both.
 *
 * The capture table is read from the graphs and their tracers only: a
 * placeholder the graph's tracer lifted stands for its lifted source; one the
 * tracer did not lift stands for what the call passes at its position, and
 * is another body's lifted value (cond's unused placeholder) when a sibling
 * body lifted that value, else an explicit argument.  The saved format
 * (save.c, load.c) writes and rebuilds the same table.
 */
#include "hop/lifts.h"
#include "output_graph/output_graph_impl.h"
#include "output_graph/saved_impl.h"

#include "core/logindex.h"

#include <stdio.h>

/* ---------------------------------------------------------------- notes */

/* The notes in the order they were set, a log with an index
 * (core/logindex.h) indexed when one is looked up: a lift notes its
 * placeholder (one per operand of every traced HOP call, issue #30), while
 * only explain_lifts and saving read them, so setting one is an append (a
 * uthash add, hashing and bucket upkeep, was ~170 instructions of every
 * lift).  A lookup gives the placeholder's newest note. */
typedef struct note_entry {
    const void *key; /* the placeholder */
    const char *note;
    bool operand;
} note_entry;

typedef struct note_table {
    hop__logindex log;
    hop__arena arena;
    const char *last; /* the note copied last (in arena), or NULL */
} note_table;

static const char notes_key = 0; /* the og data key: its address */

static void
free_notes(void *p)
{
    note_table *t = p;
    hop__logindex_free(&t->log);
    hop__arena_destroy(&t->arena);
    hop__free(t);
}

hop_status
hop_output_graph_set_lift_note(hop_output_graph *og, const hop_node *placeholder, const char *note,
                               bool operand)
{
    if (og == NULL || placeholder == NULL || note == NULL)
        return hop_error(HOP_MISUSE, "hop_output_graph_set_lift_note: NULL argument");
    note_table *t = hop_output_graph_data(og, &notes_key);
    if (t == NULL) {
        if ((t = hop__calloc(1, sizeof *t)) == NULL)
            return HOP_NOMEM;
        hop__logindex_init(&t->log, sizeof(note_entry), NULL, 0);
        hop__arena_init(&t->arena);
        if (hop_output_graph_set_data(og, &notes_key, t, free_notes) != HOP_OK) {
            free_notes(t);
            return HOP_NOMEM;
        }
    }
    /* A loop's lifts note one place again and again (every capture of a
     * list a body adds up): they share its copy. */
    const char *copy =
        t->last && strcmp(t->last, note) == 0 ? t->last : hop__arena_strdup(&t->arena, note);
    note_entry *e = copy ? hop__logindex_push(&t->log) : NULL;
    if (e == NULL)
        return HOP_NOMEM;
    *e = (note_entry){placeholder, copy, operand};
    t->last = copy;
    return HOP_OK;
}

const char *
hop_output_graph_lift_note(const hop_output_graph *og, const hop_node *placeholder, bool *operand)
{
    note_table *t = hop_output_graph_data(og, &notes_key);
    /* An index that cannot be made leaves lookups scanning the log. */
    if (t)
        (void)hop__logindex_index(&t->log);
    const note_entry *e = t ? hop__logindex_find(&t->log, placeholder) : NULL;
    /* A note outlives a placeholder a failed call took back: only a
     * placeholder still in a graph has one. */
    if (e && placeholder->graph == NULL)
        e = NULL;
    if (operand)
        *operand = e && e->operand;
    return e ? e->note : NULL;
}

/* ------------------------------------------------------- capture tables */

hop_node *
hop__first_call_of(const hop_graph *g)
{
    const hop_graph *p = g->parent;
    for (hop_node *n = p ? p->first : NULL; n; n = n->next) {
        if (n->kind != HOP_NODE_CALL_HOP)
            continue;
        for (size_t i = 0; i < n->nargs; i++)
            if (n->args[i].kind == HOP_ARG_GRAPH && n->args[i].u.graph == g)
                return n;
    }
    return NULL;
}

/* What call passes to placeholder j of its bodies (hop_node_passed_to: NULL
 * for one the HOP makes itself, a loop's index). */
static hop_node *
passed_at(const hop_node *call, size_t j)
{
    const hop_arg *a = hop_node_passed_to(call, j);
    return a && a->kind == HOP_ARG_NODE ? a->u.node : NULL;
}

/* The placeholder at position j of g, or NULL. */
static hop_node *
placeholder_at(const hop_graph *g, size_t j)
{
    return j < g->nplaceholders ? hop_graph_placeholder_at(g, j) : NULL;
}

/* Bodies of one call share their placeholders' positions (one signature):
 * the placeholder at position j of a body of call other than g that that
 * body's tracer lifted (so the call passes a value for it), or NULL. */
static hop_node *
sibling_lifted(const hop_node *call, const hop_graph *g, size_t j)
{
    for (size_t i = 0; call && i < call->nargs; i++) {
        const hop_arg *a = &call->args[i];
        if (a->kind != HOP_ARG_GRAPH || a->u.graph == g)
            continue;
        hop_node *ph = placeholder_at(a->u.graph, j);
        hop_tracer *t = ph ? hop_tracer_of(ph) : NULL;
        if (t && hop_tracer_graph(t) == a->u.graph && hop_tracer_lifted_source(t, ph))
            return ph;
    }
    return NULL;
}

/* The role and source of the placeholder at position j of g, a graph
 * installed in a parent: lifted by g's tracer; else there for a sibling
 * body's lifted value; else an explicit argument (or made by the HOP). */
static int
role_at(const hop_graph *g, const hop_node *ph, size_t j, hop_node **source, hop_node **cause)
{
    hop_tracer *t = hop_tracer_of(ph);
    if (t && hop_tracer_graph(t) != g)
        t = NULL;
    *source = t ? hop_tracer_lifted_source(t, ph) : NULL;
    *cause = NULL;
    if (*source) {
        *cause = hop_tracer_lifted_cause(t, ph);
        return HOP__ROLE_LIFTED;
    }
    hop_node *call = hop__first_call_of(g);
    hop_node *v = passed_at(call, j);
    if (v && sibling_lifted(call, g, j)) {
        *source = v;
        return HOP__ROLE_OTHER;
    }
    return HOP__ROLE_EXPLICIT;
}

hop_status
hop__capture_table(const hop_graph *g, hop__capture *out)
{
    size_t j = 0;
    for (hop_node *n = g->first; n && n->kind == HOP_NODE_PLACEHOLDER; n = n->next, j++)
        out[j].role = role_at(g, n, j, &out[j].source, &out[j].cause);
    return HOP_OK;
}

/* ------------------------------------------------------------- the report */

static size_t
placeholder_index(const hop_node *ph)
{
    size_t j = 0;
    for (const hop_node *n = ph->graph->first; n && n != ph; n = n->next)
        j++;
    return j;
}

/* The role and source of placeholder ph of a non-root graph. */
static int
role_of(const hop_node *ph, hop_node **source, hop_node **cause)
{
    return role_at(ph->graph, ph, placeholder_index(ph), source, cause);
}

/* Follows a lifted value up to where it was made; counts the graphs. */
static const hop_node *
origin_of(const hop_node *source, size_t *depth)
{
    const hop_node *v = source;
    *depth = 1;
    while (v->kind == HOP_NODE_PLACEHOLDER && v->graph->parent != NULL) {
        hop_node *up, *cause;
        if (role_of(v, &up, &cause) == HOP__ROLE_EXPLICIT || up == NULL)
            break;
        v = up;
        (*depth)++;
    }
    return v;
}

static hop_lift_origin
origin_kind(const hop_output_graph *og, const hop_node *v)
{
    if (v->kind == HOP_NODE_PLACEHOLDER && v->graph == hop_output_graph_root_graph(og)) {
        for (size_t i = 0; i < hop_output_graph_ninputs(og); i++) {
            hop_source src;
            if (hop_output_graph_input(og, i, &src) == v)
                return src.kind == HOP_SOURCE_ARG       ? HOP_LIFT_ARG
                       : src.kind == HOP_SOURCE_CAPTURE ? HOP_LIFT_CAPTURE
                                                        : HOP_LIFT_SYMBOL;
        }
    }
    if (v->meta->kind == HOP_VALUE_SYM && hop_expr_kind_of(v->meta->sym) == HOP_EXPR_SYMBOL)
        return HOP_LIFT_SYMBOL;
    return HOP_LIFT_INTERMEDIATE;
}

typedef struct walk {
    const hop_output_graph *og;
    hop_lift_info *out; /* NULL while counting */
    const hop_graph **chains;
    size_t n, nchain;
} walk;

static void
walk_graph(walk *w, const hop_graph *g)
{
    if (g->parent) {
        for (hop_node *ph = g->first; ph && ph->kind == HOP_NODE_PLACEHOLDER; ph = ph->next) {
            hop_node *source, *cause;
            int role = role_of(ph, &source, &cause);
            if (role == HOP__ROLE_EXPLICIT)
                continue;
            size_t depth;
            const hop_node *origin = origin_of(source, &depth);
            /* g's own tracer did not lift a placeholder that is only there
             * for another body: the chain ends above g. */
            const hop_graph *last = g;
            if (role == HOP__ROLE_OTHER) {
                depth--;
                last = g->parent;
            }
            if (w->out) {
                hop_lift_info *li = &w->out[w->n];
                memset(li, 0, sizeof *li);
                li->graph = g;
                li->placeholder = ph;
                li->source = source;
                li->origin = origin;
                li->origin_graph = origin->graph;
                li->origin_kind = origin_kind(w->og, origin);
                li->lifted_by = w->chains + w->nchain;
                li->nlifted_by = depth;
                const hop_graph *c = last;
                for (size_t k = depth; k-- > 0; c = c->parent)
                    w->chains[w->nchain + k] = c;
                li->shape_of = cause;
                li->for_other_body = role == HOP__ROLE_OTHER;
                li->shared_with = sibling_lifted(hop__first_call_of(g), g, placeholder_index(ph));
                li->note = hop_output_graph_lift_note(w->og, ph, &li->operand);
            }
            w->n++;
            w->nchain += depth;
        }
    }
    for (size_t i = 0; i < g->nsubgraphs; i++)
        walk_graph(w, g->subgraphs[i]);
}

hop_status
hop_output_graph_lifts(const hop_output_graph *og, hop_lift_info **out, size_t *n)
{
    if (og == NULL || out == NULL || n == NULL)
        return hop_error(HOP_MISUSE, "hop_output_graph_lifts: NULL argument");
    walk w = {.og = og};
    walk_graph(&w, hop_output_graph_root_graph(og));
    size_t count = w.n, nchain = w.nchain;
    /* One block: the records, then the lifted_by arrays they point into. */
    hop_lift_info *infos = hop__malloc(count * sizeof *infos + nchain * sizeof *w.chains + 1);
    if (infos == NULL)
        return HOP_NOMEM;
    w = (walk){.og = og, .out = infos, .chains = (const hop_graph **)(infos + count)};
    walk_graph(&w, hop_output_graph_root_graph(og));
    *out = infos;
    *n = count;
    return HOP_OK;
}

static const char *const origin_words[] = {
    [HOP_LIFT_ARG] = "argument",
    [HOP_LIFT_CAPTURE] = "captured tensor",
    [HOP_LIFT_SYMBOL] = "symbol",
    [HOP_LIFT_INTERMEDIATE] = "intermediate",
};

/* What a root input of a symbol is: "size 0 of root input x". */
static void
describe_symbol(hop__buf *b, const hop_output_graph *og, const hop_node *v)
{
    for (size_t i = 0; i < hop_output_graph_ninputs(og); i++) {
        hop_source src;
        if (hop_output_graph_input(og, i, &src) == v && src.kind == HOP_SOURCE_SIZE) {
            hop_node *t = hop_output_graph_input(og, src.input, NULL);
            hop__buf_printf(b, " (size %zu of root input %s)", src.dim, t ? t->name : "?");
            return;
        }
    }
    if (v->graph->parent == NULL && v->kind == HOP_NODE_PLACEHOLDER)
        return;
    hop__buf_printf(b, " (%s %s of graph %s)",
                    v->kind == HOP_NODE_PLACEHOLDER ? "input" : "made by",
                    v->kind == HOP_NODE_PLACEHOLDER ? v->name : hop_node_target(v), v->graph->name);
}

char *
hop_output_graph_explain_lifts(const hop_output_graph *og)
{
    hop_lift_info *infos;
    size_t n;
    if (hop_output_graph_lifts(og, &infos, &n) != HOP_OK)
        return NULL;
    hop__buf b;
    hop__buf_init(&b);
    if (n == 0)
        hop__buf_puts(&b, "no lifted inputs\n");
    for (size_t i = 0; i < n; i++) {
        const hop_lift_info *li = &infos[i];
        const hop_node *o = li->origin;
        hop__buf_printf(&b, "%s.%s: %s ", li->graph->name, li->placeholder->name,
                        origin_words[li->origin_kind]);
        if (li->origin_kind == HOP_LIFT_SYMBOL && o->meta->kind == HOP_VALUE_SYM) {
            char text[128];
            hop_expr_print(o->meta->sym, text, sizeof text);
            hop__buf_puts(&b, text);
            describe_symbol(&b, og, o);
        } else if (li->origin_kind == HOP_LIFT_INTERMEDIATE) {
            hop__buf_printf(&b, "%s (%s of graph %s)", o->name,
                            o->kind == HOP_NODE_PLACEHOLDER ? "an input" : hop_node_target(o),
                            li->origin_graph->name);
        } else {
            hop__buf_printf(&b, "%s (root input %s)", o->name, o->name);
        }
        hop__buf_puts(&b, "\n    lifted by: ");
        for (size_t k = 0; k < li->nlifted_by; k++)
            hop__buf_printf(&b, "%s%s", k ? " -> " : "", li->lifted_by[k]->name);
        if (li->nlifted_by == 0)
            hop__buf_printf(&b, "none (a value of %s itself)", li->graph->parent->name);
        hop__buf_puts(&b, "\n");
        if (li->note)
            hop__buf_printf(&b, "    first used at: %s%s\n", li->note,
                            li->operand ? " (an operand of the call)" : "");
        if (li->shape_of)
            hop__buf_printf(&b, "    brought in by the shape of %s (%s)\n", li->shape_of->name,
                            li->shape_of->graph->name);
        else if (li->origin_kind == HOP_LIFT_SYMBOL && !li->for_other_body)
            hop__buf_puts(&b, "    brought in by a use of the symbol itself\n");
        if (li->for_other_body)
            hop__buf_printf(&b, "    unused here: passed for %s.%s, another body of %s\n",
                            li->shared_with->graph->name, li->shared_with->name,
                            hop_node_target(hop__first_call_of(li->graph)));
        else if (li->shared_with)
            hop__buf_printf(&b,
                            "    deduplicated: %s.%s gets the same value (one input of the call)\n",
                            li->shared_with->graph->name, li->shared_with->name);
    }
    hop__free(infos);
    return hop__buf_finish(&b);
}
