/*
 * graph/verify.c - the verifier: checks that a graph (and, recursively, its
 * subgraphs) is well formed.
 *
 * The builders in graph.c keep a graph well formed; the verifier is for what
 * they cannot see: graphs mutated through the public fields, graphs stitched
 * together by upper layers (a call_hop whose subgraph signature drifted), and
 * bugs.  It reports the first problem as HOP_VERIFY with a message
 * `verify: <graph>: <what>` that names the node, and changes nothing.
 */
#include "graph/graph_impl.h"
#include "hop/class.h"

#include <stdio.h>
#include <string.h>

/* What the verifier knows about one node of the graph it checks; its
 * program position is its index in slots[]. */
typedef struct vnode {
    const hop_node *node;
    size_t refs;  /* argument slots that name it */
    size_t nuses; /* its nuses, read by the walk over the nodes */
} vnode;

/* slots[] holds the nodes of the list in order; by_node and by_name are
 * open-addressed tables of mask + 1 entries (a power of two, at least twice
 * the nodes), each 1 + a slot's index or 0 for a free entry.  The graph's
 * tables are what the verifier checks, so it keeps its own: a node is
 * looked up several times, and a general hash table's hashing would cost
 * more than the checks.  The entries are 32-bit and a slot 16 bytes (32
 * bytes of tables a node, 56 before): at 100,000 nodes the lookups, one per
 * node argument at random places, missed the caches and verification took a
 * quarter of a trace + lower against 5% at 1,000 (issue #30). */
typedef struct verifier {
    const hop_graph *g;
    vnode *slots;
    uint32_t *by_node;
    uint32_t *by_name;
    size_t mask;
    /* The layout as check_list saw it in its walk (a walk of a big graph
     * misses the caches at every node, so the layout takes no walk of its
     * own): placeholders, the first other node and the output node, and the
     * first node out of place (a placeholder after `body`, or a second
     * output after `output`), for check_layout to report. */
    size_t nph;
    const hop_node *body, *output, *misplaced;
} verifier;

/* The most nodes a graph the verifier checks may have (its table entries
 * are 32-bit); a graph that big would take a terabyte. */
#define VERIFY_MAX_NODES (UINT32_MAX / 4)
/* Graphs of at most this many nodes are checked with tables on the stack. */
#define VERIFY_SMALL 16

static size_t
node_hash(const hop_node *n)
{
    uint64_t h = (uint64_t)(uintptr_t)n * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32);
}

static size_t
text_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static hop_status verify_graph(const hop_graph *g, bool trusting);

static hop_status fail(const hop_graph *g, const char *fmt, ...) HOP_PRINTF(2, 3);

/* The one composer of the verifier's messages: "verify: <graph>: " then,
 * for a failure at a call, "node <name>: ", then the text. */
static hop_status
vreport(const char *graph, const char *node, const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (node == NULL)
        return hop_error(HOP_VERIFY, "verify: %s: %s", graph, msg);
    return hop_error(HOP_VERIFY, "verify: %s: node %s: %s", graph, node, msg);
}

static hop_status
fail(const hop_graph *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hop_status st = vreport(g->name, NULL, fmt, ap);
    va_end(ap);
    return st;
}

static vnode *
lookup(const verifier *v, const hop_node *n)
{
    for (size_t i = node_hash(n) & v->mask;; i = (i + 1) & v->mask) {
        uint32_t k = v->by_node[i];
        if (k == 0)
            return NULL;
        if (v->slots[k - 1].node == n)
            return &v->slots[k - 1];
    }
}

/* Enters slot k into by_node (n is not in it: the list check has seen each
 * node once). */
static void
add_node(verifier *v, const hop_node *n, size_t k)
{
    size_t i = node_hash(n) & v->mask;
    while (v->by_node[i] != 0)
        i = (i + 1) & v->mask;
    v->by_node[i] = (uint32_t)(k + 1);
}

/* Enters slot k, named name, into by_name; false if a node has that name. */
static bool
add_name(verifier *v, const char *name, size_t k)
{
    size_t i = text_hash(name) & v->mask;
    for (; v->by_name[i] != 0; i = (i + 1) & v->mask)
        if (strcmp(v->slots[v->by_name[i] - 1].node->name, name) == 0)
            return false;
    v->by_name[i] = (uint32_t)(k + 1);
    return true;
}

/* The node list: linked both ways, owned by g, as long as nnodes says.  Fills
 * the tables of v. */
static hop_status
check_list(verifier *v)
{
    const hop_graph *g = v->g;
    size_t count = 0;
    const hop_node *prev = NULL;
    for (const hop_node *n = g->first; n; prev = n, n = n->next) {
        if (count == g->nnodes)
            return fail(g, "the node list is longer than nnodes (%zu)", g->nnodes);
        if (n->graph != g)
            return fail(g, "node %s in the node list belongs to %s", n->name,
                        n->graph ? n->graph->name : "no graph");
        if (n->prev != prev)
            return fail(g, "node %s has a wrong prev link", n->name);
        if (n->name == NULL)
            return fail(g, "node %zu has no name", count);
        v->slots[count].node = n;
        add_node(v, n, count);
        if (v->misplaced == NULL) {
            if (n->kind == HOP_NODE_PLACEHOLDER) {
                if (v->body)
                    v->misplaced = n;
                v->nph++;
            } else if (v->body == NULL) {
                v->body = n;
            }
            if (n->kind == HOP_NODE_OUTPUT) {
                if (v->output)
                    v->misplaced = n;
                else
                    v->output = n;
            }
        }
        if (!add_name(v, n->name, count))
            return fail(g, "two nodes are named %s", n->name);
        count++;
    }
    if (count != g->nnodes)
        return fail(g, "the node list holds %zu nodes but nnodes is %zu", count, g->nnodes);
    if (g->last != prev)
        return fail(g, "the last pointer does not point at the last node");
    return HOP_OK;
}

/* Placeholders first, one output last (from what check_list saw). */
static hop_status
check_layout(const verifier *v)
{
    const hop_graph *g = v->g;
    const hop_node *n = v->misplaced, *output = v->output;
    if (n && n->kind == HOP_NODE_PLACEHOLDER)
        return fail(g, "placeholder %s comes after %s", n->name, v->body->name);
    if (n)
        return fail(g, "more than one output node (%s, %s)", output->name, n->name);
    if (v->nph != g->nplaceholders)
        return fail(g, "nplaceholders is %zu but the graph has %zu placeholders", g->nplaceholders,
                    v->nph);
    if (output == NULL)
        return fail(g, "no output node");
    if (output != g->last)
        return fail(g, "output node %s is not the last node", output->name);
    if (g->output != output)
        return fail(g, "the output pointer does not point at output node %s", output->name);
    return HOP_OK;
}

static hop_status
check_subgraph_names(const hop_graph *g)
{
    for (size_t i = 0; i < g->nsubgraphs; i++) {
        const hop_graph *s = g->subgraphs[i];
        if (s == NULL)
            return fail(g, "subgraph %zu is NULL", i);
        if (s->parent != g)
            return fail(g, "subgraph %s names %s as its parent", s->name,
                        s->parent ? s->parent->name : "no graph");
        if (s->env != g->env)
            return fail(g, "subgraph %s uses another shape env", s->name);
        /* The index (one entry per subgraph) finds the first of two
         * subgraphs with one name for both. */
        const hop_graph *named = hop_graph_find_subgraph(g, s->name);
        if (named != s)
            return fail(g,
                        named ? "two subgraphs are named %s"
                              : "subgraph %s is not in the graph's subgraph index",
                        s->name);
    }
    return HOP_OK;
}

/* Arguments of n (at program position self): defined earlier in g, holding a
 * value; subgraphs owned by g.  Counts the references into the vnodes.  `top`
 * is true for n's direct arguments, false inside lists. */
static hop_status
check_args(const verifier *v, const hop_node *n, const hop_arg *args, size_t nargs, bool top,
           size_t self)
{
    const hop_graph *g = v->g;
    for (size_t i = 0; i < nargs; i++) {
        const hop_arg *a = &args[i];
        if (a->kind == HOP_ARG_LIST) {
            if (a->u.list.n > 0 && a->u.list.items == NULL)
                return fail(g, "node %s has a list argument with NULL items", n->name);
            hop_status st = check_args(v, n, a->u.list.items, a->u.list.n, false, self);
            if (st != HOP_OK)
                return st;
        } else if (a->kind == HOP_ARG_GRAPH) {
            const hop_graph *s = a->u.graph;
            if (s == NULL)
                return fail(g, "node %s has a NULL subgraph argument", n->name);
            if (n->kind != HOP_NODE_CALL_HOP || !top)
                return fail(g,
                            "node %s has subgraph %s as an argument, which only a call_hop "
                            "may have, directly",
                            n->name, s->name);
            if (s->parent != g)
                return fail(g, "node %s uses subgraph %s, which is not a subgraph of %s", n->name,
                            s->name, g->name);
        } else if (a->kind == HOP_ARG_NODE) {
            const hop_node *d = a->u.node;
            if (d == NULL)
                return fail(g, "node %s has a NULL node argument", n->name);
            if (d->graph != g) /* another graph's node is reported by check_foreign_args */
                return fail(g, "node %s uses %s, which was erased", n->name, d->name);
            vnode *e = lookup(v, d);
            if (e == NULL)
                return fail(g, "node %s uses %s, which is not in the node list", n->name, d->name);
            size_t index = (size_t)(e - v->slots);
            if (index == self)
                return fail(g, "node %s uses itself", n->name);
            if (index > self)
                return fail(g, "node %s uses %s, which is defined later", n->name, d->name);
            if (d->kind == HOP_NODE_OUTPUT)
                return fail(g, "node %s uses the output node %s", n->name, d->name);
            bool reads_call = n->kind == HOP_NODE_GETITEM && top && i == 0;
            if (d->meta->kind == HOP_VALUE_NONE && !reads_call)
                return fail(g, "node %s uses %s, which has no single value", n->name, d->name);
            e->refs++;
        }
    }
    return HOP_OK;
}

/* A node argument from another graph needs that graph's name in the message;
 * check_args keeps its format simple and reports it as erased, so when
 * check_args fails this one says whether that was the first problem. */
static hop_status
check_foreign_args(const hop_graph *g, const hop_node *n, const hop_arg *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        const hop_arg *a = &args[i];
        if (a->kind == HOP_ARG_LIST && a->u.list.items) {
            hop_status st = check_foreign_args(g, n, a->u.list.items, a->u.list.n);
            if (st != HOP_OK)
                return st;
        } else if (a->kind == HOP_ARG_NODE && a->u.node && a->u.node->graph &&
                   a->u.node->graph != g) {
            return fail(g, "node %s uses %s, which belongs to graph %s", n->name, a->u.node->name,
                        a->u.node->graph->name);
        }
    }
    return HOP_OK;
}

/* Describes an operand passed to a subgraph: "x" for a node, else its value. */
static void
describe_operand(const hop_arg *a, char *buf, size_t cap)
{
    switch (a->kind) {
    case HOP_ARG_NODE:
        snprintf(buf, cap, "%s", a->u.node->name);
        break;
    case HOP_ARG_INT:
        snprintf(buf, cap, "%lld", (long long)a->u.i);
        break;
    case HOP_ARG_SYM:
        hop_expr_print(a->u.sym, buf, cap);
        break;
    default:
        snprintf(buf, cap, "a %s",
                 a->kind == HOP_ARG_FLOAT  ? "float"
                 : a->kind == HOP_ARG_BOOL ? "bool"
                 : a->kind == HOP_ARG_LIST ? "list"
                                           : "non-value");
        break;
    }
}

/* What an operand is, as a value kind (NONE: neither tensor nor SymInt). */
static hop_value_kind
operand_kind(const hop_arg *a, hop_dtype *dtype)
{
    if (a->kind == HOP_ARG_NODE) {
        *dtype = a->u.node->meta->meta.dtype;
        return a->u.node->meta->kind;
    }
    if (a->kind == HOP_ARG_SYM || a->kind == HOP_ARG_INT)
        return HOP_VALUE_SYM;
    return HOP_VALUE_NONE;
}

static const char *
value_kind_text(hop_value_kind k)
{
    return k == HOP_VALUE_TENSOR ? "a tensor" : k == HOP_VALUE_SYM ? "a SymInt" : "no value";
}

/* ---------------------------------------------------------- call_hop nodes */

static const char *const lead_text[] = {
    [HOP_PARAM_INT] = "an int",
    [HOP_PARAM_FLOAT] = "a float",
    [HOP_PARAM_BOOL] = "a bool",
    [HOP_PARAM_DTYPE] = "a dtype",
    [HOP_PARAM_VALUE] = "a value (a node, a SymInt or SymBool, a bool or an int)",
};

static const char *
arg_kind_text(hop_arg_kind k)
{
    static const char *const text[] = {
        [HOP_ARG_NONE] = "nothing",  [HOP_ARG_NODE] = "a node", [HOP_ARG_INT] = "an int",
        [HOP_ARG_FLOAT] = "a float", [HOP_ARG_BOOL] = "a bool", [HOP_ARG_SYM] = "a SymInt",
        [HOP_ARG_DTYPE] = "a dtype", [HOP_ARG_LIST] = "a list", [HOP_ARG_GRAPH] = "a graph",
    };
    return (unsigned)k < sizeof text / sizeof *text ? text[k] : "an unknown kind";
}

/* The call's arguments against its class's signature (hop/class.h): the
 * leads, then at least one subgraph per BODY parameter (a BODIES parameter:
 * one or more; how many exactly is the class's verify slot's to say, as
 * vmap keeps one more), then one list of values per group (lifted mode:
 * one, the merged signature; else one per group and, unless the last
 * parameter is VARARGS, one for the lifted values). */
static hop_status
check_call_layout(const hop_graph *g, const hop_node *n)
{
    const hop_class *cls = n->cls;
    if (cls == NULL || cls->name == NULL)
        return fail(g, "call_hop %s has no class", n->name);
    size_t np, k = 0, ngroups = 0, nbody = 0;
    bool bodies = false;
    const hop_param *params = hop_class_params(cls, &np);
    for (size_t i = 0; i < np; i++) {
        const hop_param *p = &params[i];
        ngroups += hop_param_is_group(p->kind);
        nbody += p->kind == HOP_PARAM_BODY;
        bodies |= p->kind == HOP_PARAM_BODIES;
        if (!hop_param_is_lead(p->kind))
            continue;
        if (k >= n->nargs)
            return hop_verify_fail(n, "%s: has %zu arguments; its signature has a %s after them",
                                   cls->name, (size_t)n->nargs, p->name);
        if (!hop_param_fits(p->kind, &n->args[k]))
            return hop_verify_fail(n, "%s: argument %zu (%s) must be %s, not %s", cls->name, k,
                                   p->name, lead_text[p->kind], arg_kind_text(n->args[k].kind));
        k++;
    }
    size_t first = k;
    while (k < n->nargs && n->args[k].kind == HOP_ARG_GRAPH)
        k++;
    size_t ngraphs = k - first, want = nbody + bodies;
    if (ngraphs < want || ngraphs > HOP_MAX_BODIES)
        return hop_verify_fail(n,
                               "%s: has %zu bodies after its %zu leading arguments; it takes %s%zu",
                               cls->name, ngraphs, first, bodies ? "at least " : "", want);
    bool lifted = hop_class_input_mode(cls) == HOP_INPUTS_LIFTED;
    bool varargs = np > 0 && params[np - 1].kind == HOP_PARAM_VARARGS;
    size_t nlists = lifted ? 1 : ngroups + !varargs;
    for (size_t l = 0; l < nlists; l++, k++) {
        if (k >= n->nargs || n->args[k].kind != HOP_ARG_LIST)
            return hop_verify_fail(n,
                                   "%s: argument %zu must be list %zu of the values it passes, "
                                   "not %s",
                                   cls->name, k, l,
                                   k < n->nargs ? arg_kind_text(n->args[k].kind) : "missing");
        const hop_arg *list = &n->args[k];
        for (size_t j = 0; j < list->u.list.n; j++) {
            hop_arg_kind kind = list->u.list.items[j].kind;
            if (kind != HOP_ARG_NODE && kind != HOP_ARG_SYM && kind != HOP_ARG_INT)
                return hop_verify_fail(n, "%s: item %zu of argument %zu is %s, not a value",
                                       cls->name, j, k, arg_kind_text(kind));
        }
    }
    if (k != n->nargs)
        return hop_verify_fail(n, "%s: has %zu arguments; its signature takes %zu", cls->name,
                               (size_t)n->nargs, k);
    return HOP_OK;
}

/* A call_hop against the subgraphs it calls: one operand per placeholder
 * (the call's lists, concatenated: hop_node_passed), matching kinds and
 * dtypes (ranks may differ: map passes slices), and as many subgraph
 * outputs as the class says (body_nouts).  The layout first, the class's
 * own verify last. */
static hop_status
check_call_hop(const hop_graph *g, const hop_node *n)
{
    hop_status st = check_call_layout(g, n);
    if (st != HOP_OK)
        return st;
    size_t nops = hop_node_passed(n, NULL, 0);
    const hop_arg *small[16], **ops = nops <= 16 ? small : hop__malloc(nops * sizeof *ops);
    if (ops == NULL)
        return HOP_NOMEM;
    hop_node_passed(n, ops, nops);
    /* The HOP makes its bodies' first inputs itself (a loop's index). */
    size_t made = hop_node_made_inputs(n);
    size_t body = 0;
    for (size_t i = 0; i < n->nargs && st == HOP_OK; i++) {
        if (n->args[i].kind != HOP_ARG_GRAPH)
            continue;
        const hop_graph *s = n->args[i].u.graph;
        if (s->nplaceholders != made + nops) {
            st = fail(g, "node %s passes %zu operand%s to %s, which has %zu placeholder%s%s",
                      n->name, nops, nops == 1 ? "" : "s", s->name, s->nplaceholders,
                      s->nplaceholders == 1 ? "" : "s",
                      made ? " (besides the ones the HOP makes)" : "");
            break;
        }
        const hop_node *ph = s->first;
        for (size_t j = 0; j < made && ph; j++)
            ph = ph->next;
        for (size_t j = 0; j < nops && ph && st == HOP_OK; j++, ph = ph->next) {
            hop_dtype dt = HOP_DTYPE_COUNT;
            hop_value_kind k = operand_kind(ops[j], &dt);
            bool kind_differs = k != ph->meta->kind;
            if (!kind_differs && (k != HOP_VALUE_TENSOR || dt == ph->meta->meta.dtype))
                continue;
            /* The operand's text only for the message: made for every
             * operand, it was a third of the verifier's cost of a call. */
            char what[160];
            describe_operand(ops[j], what, sizeof what);
            if (kind_differs)
                st = fail(g,
                          "node %s passes operand %zu (%s, %s) to placeholder %s of %s, "
                          "which is %s",
                          n->name, j, what, value_kind_text(k), ph->name, s->name,
                          value_kind_text(ph->meta->kind));
            else
                st = fail(g,
                          "node %s passes operand %zu (%s, %s) to placeholder %s of %s, "
                          "which is %s",
                          n->name, j, what, hop_dtype_name(dt), ph->name, s->name,
                          hop_dtype_name(ph->meta->meta.dtype));
        }
        /* A subgraph without an output is reported when it is checked. */
        const hop_class *owner = HOP_CLASS_SLOT_OWNER(n->cls, body_nouts);
        size_t want = owner ? owner->body_nouts(n, body) : n->nouts;
        if (st == HOP_OK && s->output == NULL)
            st = fail(g, "node %s calls %s, which has no output node", n->name, s->name);
        if (st == HOP_OK && s->output->nargs != want)
            st = owner ? fail(g, "node %s: %s returns %zu value%s, not %zu", n->name, s->name,
                              (size_t)s->output->nargs, s->output->nargs == 1 ? "" : "s", want)
                       : fail(g, "node %s has %zu output%s but %s returns %zu", n->name,
                              (size_t)n->nouts, n->nouts == 1 ? "" : "s", s->name,
                              (size_t)s->output->nargs);
        body++;
    }
    if (ops != small)
        hop__free(ops);
    if (st != HOP_OK)
        return st;
    const hop_class *owner = HOP_CLASS_SLOT_OWNER(n->cls, verify);
    /* A slot (a library's) that fails without a message must not be
     * reported with the message of an older error. */
    if (owner)
        hop_error_clear();
    st = owner ? owner->verify(n) : hop_verify_default(n);
    if (st != HOP_OK && hop_error_code() != HOP_VERIFY && hop_error_code() != HOP_NOMEM)
        st = hop_verify_error(n, st);
    return st;
}

/* A call that passed: its graph's pending checked append is one no more,
 * and its subgraphs are vouched for as they are now (graph_impl.h). */
static void
call_passed(const hop_node *call)
{
    graph_impl *impl = hop__graph_impl(call->graph);
    if (impl->unverified == call)
        impl->unverified = NULL;
    for (size_t i = 0; i < call->nargs; i++) {
        if (call->args[i].kind != HOP_ARG_GRAPH)
            continue;
        graph_impl *s = hop__graph_impl(call->args[i].u.graph);
        s->vouched = s->vouched == 0 || s->vouched == s->version ? s->version : HOP__BUILT_CHECKED;
    }
}

hop_status
hop_graph_verify_call(const hop_node *call)
{
    if (call == NULL || call->kind != HOP_NODE_CALL_HOP || call->graph == NULL)
        return hop_error(HOP_MISUSE, "hop_graph_verify_call: not a call_hop node of a graph");
    hop_status st = check_call_hop(call->graph, call);
    if (st == HOP_OK)
        call_passed(call);
    return st;
}

/* ------------------------------------------------------ the verify kit */

hop_status
hop_verify_fail(const hop_node *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hop_status st =
        vreport(call && call->graph ? call->graph->name : "?", call ? call->name : "?", fmt, ap);
    va_end(ap);
    return st;
}

hop_status
hop_verify_error(const hop_node *call, hop_status st)
{
    if (st == HOP_OK || st == HOP_NOMEM)
        return st;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", hop_error_message());
    return hop_verify_fail(call, "%s", msg[0] ? msg : hop_status_message(st));
}

/* The metadata of a value a call passes or a graph returns: a node's, or a
 * SymInt for an int (sym NULL) or a SymInt argument. */
static hop_value_info
arg_meta(const hop_arg *a)
{
    if (a->kind == HOP_ARG_NODE)
        return *a->u.node->meta;
    if (a->kind == HOP_ARG_SYM)
        return (hop_value_info){.kind = HOP_VALUE_SYM, .sym = a->u.sym};
    if (a->kind == HOP_ARG_INT)
        return (hop_value_info){.kind = HOP_VALUE_SYM};
    return (hop_value_info){.kind = HOP_VALUE_NONE};
}

/* Whether passed value j of call belongs to a CARRY group. */
static bool
passed_carried(const hop_node *call, size_t j)
{
    if (hop_class_input_mode(call->cls) == HOP_INPUTS_LIFTED)
        return false;
    size_t np;
    const hop_param *params = hop_class_params(call->cls, &np);
    size_t at = 0, p = 0;
    for (size_t i = 0; i < call->nargs; i++) {
        const hop_arg *a = &call->args[i];
        if (a->kind != HOP_ARG_LIST)
            continue;
        while (p < np && !hop_param_is_group(params[p].kind))
            p++;
        if (j < at + a->u.list.n)
            return p < np && params[p].kind == HOP_PARAM_CARRY;
        at += a->u.list.n;
        p++;
    }
    return false;
}

static hop_status
meta_mismatch(const hop_node *call, const char *what, const hop_graph *body,
              const hop_value_info *got, const hop_value_info *want)
{
    char a[128], b[128];
    hop_value_info_print(got, a, sizeof a);
    hop_value_info_print(want, b, sizeof b);
    return hop_verify_fail(call, "%s: %s of %s is %s, but the call needs %s there", call->cls->name,
                           what, body->name, a, b);
}

hop_status
hop_verify_inputs(const hop_node *call, hop_verify_meta_fn fn, void *ud)
{
    size_t made = hop_node_made_inputs(call), b = 0;
    for (size_t i = 0; i < call->nargs; i++) {
        if (call->args[i].kind != HOP_ARG_GRAPH)
            continue;
        const hop_graph *body = call->args[i].u.graph;
        const hop_node *ph = body->first;
        for (size_t j = 0; j < made && ph; j++)
            ph = ph->next;
        for (size_t j = 0; ph && ph->kind == HOP_NODE_PLACEHOLDER; j++, ph = ph->next) {
            const hop_arg *passed = hop_node_passed_to(call, made + j);
            if (passed == NULL)
                break;
            hop_value_info want = arg_meta(passed);
            if (want.kind == HOP_VALUE_SYM && passed_carried(call, j))
                want.sym = NULL; /* the body's is a fresh symbol */
            if (fn && !fn(ud, call, b, j, &want))
                continue;
            if (!hop_value_info_compatible(ph->meta, &want)) {
                char what[300];
                snprintf(what, sizeof what, "input %s", ph->name);
                return meta_mismatch(call, what, body, ph->meta, &want);
            }
        }
        b++;
    }
    return HOP_OK;
}

hop_status
hop_verify_outputs(const hop_node *call, hop_verify_meta_fn fn, void *ud)
{
    size_t b = 0;
    for (size_t i = 0; i < call->nargs; i++) {
        if (call->args[i].kind != HOP_ARG_GRAPH)
            continue;
        const hop_graph *body = call->args[i].u.graph;
        const hop_node *out = body->output;
        for (size_t k = 0; out && k < out->nargs && k < call->nouts; k++) {
            hop_value_info want = call->outs[k], got = arg_meta(&out->args[k]);
            if (fn && !fn(ud, call, b, k, &want))
                continue;
            if (!hop_value_info_compatible(&got, &want)) {
                char what[64];
                snprintf(what, sizeof what, "output %zu", k);
                return meta_mismatch(call, what, body, &got, &want);
            }
        }
        b++;
    }
    return HOP_OK;
}

hop_status
hop_verify_bodies(const hop_node *call, hop_verify_meta_fn in, hop_verify_meta_fn out, void *ud)
{
    size_t nbodies = 0;
    for (size_t i = 0; i < call->nargs; i++)
        nbodies += call->args[i].kind == HOP_ARG_GRAPH;
    if (!hop_class_takes_bodies(call->cls, nbodies)) {
        size_t nb = hop_class_nbodies(call->cls); /* for the message only */
        return hop_class_takes_bodies(call->cls, nb + 1)
                   ? hop_verify_fail(call, "%s: has %zu bodies; it takes %zu to %d",
                                     call->cls->name, nbodies, nb + 1, HOP_MAX_BODIES)
                   : hop_verify_fail(call, "%s: has %zu bodies; it takes %zu", call->cls->name,
                                     nbodies, nb);
    }
    hop_status st = hop_verify_inputs(call, in, ud);
    if (st == HOP_OK && (out || HOP_CLASS_SLOT_OWNER(call->cls, body_nouts) == NULL))
        st = hop_verify_outputs(call, out, ud);
    return st;
}

hop_status
hop_verify_default(const hop_node *call)
{
    return hop_verify_bodies(call, NULL, NULL, NULL);
}

static hop_status
check_node(const hop_graph *g, const hop_node *n)
{
    switch (n->kind) {
    case HOP_NODE_PLACEHOLDER:
        if (n->nargs != 0)
            return fail(g, "placeholder %s has arguments", n->name);
        if (n->meta->kind == HOP_VALUE_NONE)
            return fail(g, "placeholder %s has no value", n->name);
        return HOP_OK;
    case HOP_NODE_CALL_OP:
        if (hop_op_get(n->op) == NULL)
            return fail(g, "node %s calls an unknown op %d", n->name, (int)n->op);
        if (n->meta->kind == HOP_VALUE_NONE)
            return fail(g, "node %s has no value", n->name);
        return HOP_OK;
    case HOP_NODE_CALL_HOP:
        return check_call_hop(g, n);
    case HOP_NODE_CALL_FOREIGN:
        if (hop_node_target(n) == NULL)
            return fail(g, "call_foreign %s has no target", n->name);
        for (size_t i = 0; i < n->nouts; i++)
            if (n->outs[i].kind != HOP_VALUE_TENSOR)
                return fail(g, "call_foreign %s: output %zu is not a tensor", n->name, i);
        return HOP_OK;
    case HOP_NODE_GETITEM: {
        const hop_node *call =
            n->nargs == 2 && n->args[0].kind == HOP_ARG_NODE ? n->args[0].u.node : NULL;
        if (call == NULL ||
            (call->kind != HOP_NODE_CALL_HOP && call->kind != HOP_NODE_CALL_FOREIGN) ||
            n->args[1].kind != HOP_ARG_INT)
            return fail(g, "getitem %s does not read (call_hop, index)", n->name);
        int64_t index = n->args[1].u.i;
        if (index < 0 || (uint64_t)index >= call->nouts)
            return fail(g, "getitem %s reads index %lld of %s, which has %zu output%s", n->name,
                        (long long)index, call->name, (size_t)call->nouts,
                        call->nouts == 1 ? "" : "s");
        if (!hop_value_info_equal(n->meta, &call->outs[index]))
            return fail(g, "getitem %s has other metadata than output %lld of %s", n->name,
                        (long long)index, call->name);
        return HOP_OK;
    }
    case HOP_NODE_OUTPUT:
        return HOP_OK;
    }
    return fail(g, "node %s has an unknown kind %d", n->name, (int)n->kind);
}

/* What is wrong with n's use list (records of nodes in g, as many as
 * n->nuses says): USES_OK, or the first problem, with *count the records
 * seen.  No error is set: the walk over the nodes asks, check_uses reports. */
enum { USES_OK, USES_FOREIGN, USES_MORE, USES_COUNT };

static int
use_list_problem(const verifier *v, const hop_node *n, size_t *count)
{
    *count = 0;
    for (const hop_use *u = n->uses; u; u = u->next) {
        if (u->user == NULL || lookup(v, u->user) == NULL)
            return USES_FOREIGN;
        if (++*count > n->nuses)
            return USES_MORE;
    }
    return *count != n->nuses ? USES_COUNT : USES_OK;
}

static hop_status
use_list_error(const verifier *v, const hop_node *n)
{
    const hop_graph *g = v->g;
    size_t count;
    switch (use_list_problem(v, n, &count)) {
    case USES_FOREIGN:
        return fail(g, "the use list of %s names a node that is not in %s", n->name, g->name);
    case USES_MORE:
        return fail(g, "the use list of %s has more than %zu records but nuses is %zu", n->name,
                    (size_t)n->nuses, (size_t)n->nuses);
    case USES_COUNT:
        return fail(g, "the use list of %s has %zu records but nuses is %zu", n->name, count,
                    (size_t)n->nuses);
    default:
        return HOP_OK;
    }
}

/* Use lists agree with the arguments: one record per argument slot.  The
 * walk over the nodes checked each use list (bad_list: the first node whose
 * list is wrong, or nnodes) and noted nuses, so this pass reads the slots
 * only, in program order (a node's refs are complete only now). */
static hop_status
check_uses(const verifier *v, size_t bad_list)
{
    const hop_graph *g = v->g;
    for (size_t k = 0; k < g->nnodes; k++) {
        const vnode *e = &v->slots[k];
        if (k == bad_list)
            return use_list_error(v, e->node);
        if (e->refs != e->nuses)
            return fail(g, "%s is used by %zu argument slot%s but has %zu use record%s",
                        e->node->name, e->refs, e->refs == 1 ? "" : "s", e->nuses,
                        e->nuses == 1 ? "" : "s");
    }
    return HOP_OK;
}

/* g's own nodes (its subgraphs were checked).  Not inlined: its tables
 * for a small graph are on its stack, which must not be on the stack of
 * each level of a deep nest of bodies while verify_graph_once recurses
 * (a 1,000-deep nest of wraps is a bench row). */
__attribute__((noinline)) static hop_status
check_nodes(const hop_graph *g)
{
    verifier v = {.g = g};
    hop_status st = HOP_OK;
    if (g->nnodes > VERIFY_MAX_NODES)
        return fail(g, "nnodes is %zu, more than the verifier checks (%zu)", g->nnodes,
                    (size_t)VERIFY_MAX_NODES);
    /* The list check stops at nnodes nodes: the tables never fill. */
    size_t cap = 2;
    while (cap < 2 * g->nnodes)
        cap *= 2;
    v.mask = cap - 1;
    /* A small graph's tables (a HOP's body: a few nodes) live on the stack:
     * two callocs and two frees were ~280 instructions of every body's
     * verification, four bodies a traced cond call (issue #30). */
    vnode small_slots[VERIFY_SMALL];
    uint32_t small_tables[4 * VERIFY_SMALL];
    if (g->nnodes <= VERIFY_SMALL) {
        memset(small_slots, 0, (g->nnodes ? g->nnodes : 1) * sizeof *small_slots);
        memset(small_tables, 0, 2 * cap * sizeof *small_tables);
        v.slots = small_slots;
        v.by_node = small_tables;
    } else {
        v.slots = hop__calloc(g->nnodes, sizeof(vnode));
        v.by_node = v.slots ? hop__calloc(2 * cap, sizeof(uint32_t)) : NULL;
        if (v.by_node == NULL) {
            hop__free(v.slots);
            return HOP_NOMEM;
        }
    }
    v.by_name = v.by_node + cap;
    st = check_list(&v);
    if (st == HOP_OK)
        st = check_layout(&v);
    /* Program order: check_list put the k-th node at slot k. */
    size_t k = 0, bad_list = g->nnodes;
    for (const hop_node *n = g->first; st == HOP_OK && n; n = n->next, k++) {
        v.slots[k].nuses = n->nuses;
        size_t count;
        if (bad_list == g->nnodes && use_list_problem(&v, n, &count) != USES_OK)
            bad_list = k; /* check_uses reports it, after every node's own checks */
        if (g->nsubgraphs > 0 && hop_graph_find_subgraph(g, n->name))
            st = fail(g, "node %s has the name of a subgraph", n->name);
        /* A node of another graph fails check_args too (its graph is not
         * g), so the walk that names that graph runs only when check_args
         * fails, and its message, the first problem, replaces check_args'
         * (a second walk of every node's arguments cost ~50 instructions a
         * node of every lowering, issue #30). */
        if (st == HOP_OK && (st = check_args(&v, n, n->args, n->nargs, true, k)) != HOP_OK) {
            hop_status foreign = check_foreign_args(g, n, n->args, n->nargs);
            if (foreign != HOP_OK)
                st = foreign;
        }
        if (st == HOP_OK)
            st = check_node(g, n);
    }
    if (st == HOP_OK)
        st = check_uses(&v, bad_list);
    if (v.slots != small_slots) {
        hop__free(v.by_node);
        hop__free(v.slots);
    }
    return st;
}

static bool verified_as_is(const hop_graph *g);

/* trusting: hop_graph_verify_changed's walk, which skips a subgraph that
 * verified_as_is vouches for (its calls in g are still checked against it,
 * by check_nodes); hop_graph_verify checks every graph. */
static hop_status
verify_graph_once(const hop_graph *g, bool trusting)
{
    hop_status st = check_subgraph_names(g);
    /* Bottom-up: a call's class may read its bodies (their placeholders and
     * outputs) once they are known to be well formed. */
    for (size_t i = 0; st == HOP_OK && i < g->nsubgraphs; i++)
        if (!trusting || !verified_as_is(g->subgraphs[i]))
            st = verify_graph(g->subgraphs[i], trusting);
    return st == HOP_OK ? check_nodes(g) : st;
}

/* verify_graph_once, its answer recorded in g's stamp (a cache of it, not
 * part of the graph: hop_graph_verify_changed). */
static hop_status
verify_graph(const hop_graph *g, bool trusting)
{
    hop_status st = verify_graph_once(g, trusting);
    graph_impl *impl = hop__graph_impl(g);
    impl->verified = st == HOP_OK ? impl->version : 0;
    return st;
}

/* Both verifications: every enclosing graph's stamp goes first (a subgraph
 * checked alone may have changed since an enclosing graph's calls were
 * checked against it). */
static hop_status
verify_from(const hop_graph *g, bool trusting)
{
    if (g == NULL)
        return hop_error(HOP_MISUSE, "verify: the graph is NULL");
    for (const hop_graph *a = g->parent; a; a = a->parent)
        hop__graph_impl(a)->verified = 0;
    return verify_graph(g, trusting);
}

hop_status
hop_graph_verify(const hop_graph *g)
{
    return verify_from(g, false);
}

/* True when g and every graph under it verified and none changed since. */
static bool
unchanged_since_verified(const hop_graph *g)
{
    const graph_impl *impl = hop__graph_impl(g);
    if (impl->verified != impl->version)
        return false;
    for (size_t i = 0; i < g->nsubgraphs; i++)
        if (!unchanged_since_verified(g->subgraphs[i]))
            return false;
    return true;
}

/* What hop_graph_verify_changed skips: g unchanged since it and every graph
 * under it verified, or built by checked appends alone (graph_impl.h),
 * given its output node, its last call checked, and each subgraph the
 * version its calls were checked against and vouched for in turn. */
static bool
verified_as_is(const hop_graph *g)
{
    if (unchanged_since_verified(g))
        return true;
    const graph_impl *impl = hop__graph_impl(g);
    if (impl->verified != HOP__BUILT_CHECKED || g->output == NULL || impl->unverified != NULL)
        return false;
    for (size_t i = 0; i < g->nsubgraphs; i++) {
        const graph_impl *s = g->subgraphs[i] ? hop__graph_impl(g->subgraphs[i]) : NULL;
        if (s == NULL || s->vouched != s->version || !verified_as_is(g->subgraphs[i]))
            return false;
    }
    return true;
}

hop_status
hop_graph_verify_changed(const hop_graph *g)
{
    if (g != NULL && verified_as_is(g))
        return HOP_OK;
    /* The graphs under g that verified_as_is vouches for are skipped too: a
     * traced HOP's bodies are mostly built by checked appends, and only the
     * graphs that call them were not (issue #30: verifying every body was
     * ~6% of tracing and lowering a nested program). */
    return verify_from(g, true);
}

uint32_t
hop_graph_version(const hop_graph *g)
{
    return g ? hop__graph_impl(g)->version : 0;
}

void
hop_graph_touch(hop_graph *g)
{
    if (g != NULL)
        hop__graph_touch(g);
}
