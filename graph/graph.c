/*
 * graph/graph.c - graphs and nodes: creation, placeholders, op/HOP calls,
 * getitem and output nodes, argument checks, use lists, subgraph ownership,
 * erasing and dead-code elimination (argument values, their copies and
 * operands are args.c's).
 *
 * Every builder works in two phases.  The first checks the request and does
 * everything that can fail: copies the arguments into the arena, allocates
 * the use records, reserves the name and runs shape inference.  The second
 * links the node into the graph and its arguments' use lists and cannot fail.
 * So a failing call leaves only arena garbage behind and the graph exactly as
 * it was (no node, no name, no use).
 *
 * Memory (issue #7: at most 256 bytes per node).  A node, its argument copy
 * and its use records are one arena block (128 + 24 per argument + 16 per
 * node argument bytes); its name is packed into the graph's string blocks;
 * its metadata is shared: the graph keeps each distinct value info once (an
 * elementwise op's result usually equals an operand's, found without
 * hashing) and nodes point at it.  A binary op costs about 230 bytes in all.
 *
 * Nothing a node holds is freed before its graph: an erased node (by
 * hop_graph_erase_node, DCE or a checkpoint restore) stays readable, so a
 * proxy of a removed value can still be inspected and reported.  Its name
 * is free again at once, and its metadata entry is shared with the nodes
 * that replace it, so a tracer that rolls back and retries repeatedly grows
 * by the nodes it makes (~200 bytes each), never by names or metadata; the
 * memory comes back when the OutputGraph is freed.
 */
#include "graph/graph_impl.h"
#include "hop/class.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

/* Lists nest at most this deep (a guard against cyclic item pointers). */
enum { MAX_LIST_DEPTH = 16 };

const char *
hop_node_kind_name(hop_node_kind k)
{
    switch (k) {
    case HOP_NODE_PLACEHOLDER:
        return "placeholder";
    case HOP_NODE_CALL_OP:
        return "call_op";
    case HOP_NODE_CALL_HOP:
        return "call_hop";
    case HOP_NODE_GETITEM:
        return "getitem";
    case HOP_NODE_OUTPUT:
        return "output";
    case HOP_NODE_CALL_FOREIGN:
        return "call_foreign";
    }
    return "?";
}

/* ------------------------------------------------------------ arguments */

/* What a set of arguments needs: list items (for the copy and the operand
 * buffer) and node references (one use record each). */
typedef struct arg_census {
    size_t items;
    size_t nodes;
} arg_census;

/*
 * Checks one argument of the node `who` is building in g.  Subgraphs are
 * accepted only as direct arguments of a call_hop (allow_graph).  Counts what
 * the copy needs into *c.
 */
static hop_status
check_arg(hop_graph *g, const char *who, size_t index, const hop_arg *a, bool allow_graph,
          int depth, arg_census *c)
{
    switch (a->kind) {
    case HOP_ARG_NONE:
    case HOP_ARG_INT:
    case HOP_ARG_FLOAT:
    case HOP_ARG_BOOL:
        return HOP_OK;
    case HOP_ARG_NODE: {
        const hop_node *n = a->u.node;
        if (n == NULL)
            return hop_error(HOP_MISUSE, "%s: argument %zu is a NULL node", who, index);
        if (n->graph == NULL)
            return hop_error(HOP_MISUSE, "%s: argument %zu (%s) was erased", who, index, n->name);
        if (n->graph != g)
            return hop_error(HOP_MISUSE, "%s: argument %zu (%s) belongs to graph %s, not %s", who,
                             index, n->name, n->graph->name, g->name);
        if (n->kind == HOP_NODE_OUTPUT)
            return hop_error(HOP_MISUSE, "%s: argument %zu is the output node of %s", who, index,
                             g->name);
        c->nodes++;
        return HOP_OK;
    }
    case HOP_ARG_SYM:
        if (a->u.sym == NULL)
            return hop_error(HOP_MISUSE, "%s: argument %zu is a NULL SymInt", who, index);
        return HOP_OK;
    case HOP_ARG_DTYPE:
        if ((unsigned)a->u.dtype >= HOP_DTYPE_COUNT)
            return hop_error(HOP_INVALID, "%s: argument %zu has an invalid dtype %d", who, index,
                             (int)a->u.dtype);
        return HOP_OK;
    case HOP_ARG_LIST:
        if (a->u.list.n > 0 && a->u.list.items == NULL)
            return hop_error(HOP_MISUSE, "%s: argument %zu is a list of %zu items at NULL", who,
                             index, a->u.list.n);
        if (depth >= MAX_LIST_DEPTH)
            return hop_error(HOP_INVALID, "%s: argument %zu nests lists more than %d deep", who,
                             index, MAX_LIST_DEPTH);
        c->items += a->u.list.n;
        for (size_t i = 0; i < a->u.list.n; i++) {
            hop_status st = check_arg(g, who, index, &a->u.list.items[i], false, depth + 1, c);
            if (st != HOP_OK)
                return st;
        }
        return HOP_OK;
    case HOP_ARG_GRAPH:
        if (!allow_graph || depth > 0)
            return hop_error(HOP_MISUSE,
                             "%s: argument %zu is a graph; only a call_hop takes subgraphs, as "
                             "direct arguments",
                             who, index);
        if (a->u.graph == NULL)
            return hop_error(HOP_MISUSE, "%s: argument %zu is a NULL graph", who, index);
        if (a->u.graph->parent != g)
            return hop_error(HOP_MISUSE, "%s: argument %zu: graph %s is not a subgraph of %s", who,
                             index, a->u.graph->name, g->name);
        return HOP_OK;
    }
    return hop_error(HOP_INVALID, "%s: argument %zu has an unknown kind %d", who, index,
                     (int)a->kind);
}

/* Deep-copies src into dst, taking list storage from *pool.  A constant
 * SymInt is stored as INT (a constant SymBool as BOOL): one spelling per
 * value. */
static void
copy_arg(hop_arg *dst, const hop_arg *src, hop_arg **pool)
{
    *dst = *src;
    if (src->kind == HOP_ARG_SYM) {
        int64_t v;
        if (hop_expr_const_value(src->u.sym, &v)) {
            if (hop_expr_is_bool(src->u.sym)) {
                dst->kind = HOP_ARG_BOOL;
                dst->u.b = v != 0;
            } else {
                dst->kind = HOP_ARG_INT;
                dst->u.i = v;
            }
        }
    } else if (src->kind == HOP_ARG_LIST) {
        size_t n = src->u.list.n;
        hop_arg *items = n ? *pool : NULL;
        *pool += n;
        for (size_t i = 0; i < n; i++)
            copy_arg(&items[i], &src->u.list.items[i], pool);
        dst->u.list.items = items;
    }
}

/* Prepends one use record per node reference in args, taken from *pool. */
static void
link_uses(hop_node *user, const hop_arg *args, size_t nargs, hop_use **pool)
{
    for (size_t i = 0; i < nargs; i++) {
        const hop_arg *a = &args[i];
        if (a->kind == HOP_ARG_NODE) {
            hop_use *u = (*pool)++;
            u->user = user;
            u->next = a->u.node->uses;
            a->u.node->uses = u;
            a->u.node->nuses++;
        } else if (a->kind == HOP_ARG_LIST) {
            link_uses(user, a->u.list.items, a->u.list.n, pool);
        }
    }
}

/* Removes one use record of user per node reference in args. */
static void
unlink_uses(hop_node *user, const hop_arg *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        const hop_arg *a = &args[i];
        if (a->kind == HOP_ARG_NODE) {
            hop_node *def = a->u.node;
            for (hop_use **pp = &def->uses; *pp; pp = &(*pp)->next) {
                if ((*pp)->user == user) {
                    *pp = (*pp)->next;
                    def->nuses--;
                    break;
                }
            }
        } else if (a->kind == HOP_ARG_LIST) {
            unlink_uses(user, a->u.list.items, a->u.list.n);
        }
    }
}

static bool
args_use_graph(const hop_arg *args, size_t nargs, const hop_graph *sub)
{
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == HOP_ARG_GRAPH && args[i].u.graph == sub)
            return true;
    }
    return false;
}

/* The first node of g whose arguments name the subgraph sub, or NULL. */
static hop_node *
first_graph_user(const hop_graph *g, const hop_graph *sub)
{
    for (hop_node *n = g->first; n; n = n->next) {
        if (n->kind == HOP_NODE_CALL_HOP && args_use_graph(n->args, n->nargs, sub))
            return n;
    }
    return NULL;
}

/* ------------------------------------------------------------ metadata */

/* The meta of nodes without a single value (output, multi-output calls). */
static const hop_value_info no_value = {.kind = HOP_VALUE_NONE};

/* True when a and b describe the same value (expressions are interned, so
 * pointer equality is structural equality). */
/* The canonical form of v as hash key: fields that do not belong to its
 * kind are left out, so they cannot make equal values differ.  Returns the
 * key's length in bytes. */
static size_t
meta_key(const hop_value_info *v, uint64_t key[2 + HOP_MAX_RANK])
{
    key[0] = (uint64_t)v->kind;
    key[1] = 0;
    if (v->kind == HOP_VALUE_SYM) {
        key[1] = (uint64_t)(uintptr_t)v->sym;
        return 2 * sizeof(uint64_t);
    }
    if (v->kind != HOP_VALUE_TENSOR)
        return sizeof(uint64_t);
    key[0] |= (uint64_t)v->meta.dtype << 8 | (uint64_t)v->meta.rank << 16;
    for (int d = 0; d < v->meta.rank; d++)
        key[2 + d] = (uint64_t)(uintptr_t)v->meta.sizes[d];
    return (2 + (size_t)v->meta.rank) * sizeof(uint64_t);
}

/* Adds e (key of len bytes) to the uthash index once the list is long; the
 * index is built over the whole list when the list outgrows the linear
 * search.  HOP_NOMEM leaves the index as it was (or absent). */
static hop_status
index_meta(hop__graph_store *impl, hop__meta_entry *e, size_t len)
{
    if (impl->nmetas + 1 <= HOP__SMALL_METAS)
        return HOP_OK;
    hop_status st = HOP_OK;
    hop__meta_entry *head = impl->metas;
    if (head == NULL) {
        for (hop__meta_entry *o = impl->meta_list; o && st == HOP_OK; o = o->next)
            HOP_HASH_ADD(st, hh, head, key[0], meta_key(&o->info, o->key), o);
    }
    if (st == HOP_OK)
        HOP_HASH_ADD(st, hh, head, key[0], len, e);
    if (st != HOP_OK) {
        if (impl->metas == NULL)
            HASH_CLEAR(hh, head); /* the entries stay on the list */
        else
            impl->metas = head;
        return st;
    }
    impl->metas = head;
    return HOP_OK;
}

/*
 * The graph's shared copy of v (checked by value_info_ok or NONE), made on
 * first use.  Nodes of a chain mostly repeat the last one, and call_op
 * looks at its operands first, so the hash table is the slow path.  NULL on
 * out-of-memory; a new entry is harmless if the caller then fails.
 */
static const hop_value_info *
intern_meta(hop_graph *g, const hop_value_info *v)
{
    hop__graph_store *impl = hop__graph_impl(g)->store;
    if (v->kind == HOP_VALUE_NONE)
        return &no_value;
    if (impl->last_meta && hop_value_info_equal(impl->last_meta, v))
        return impl->last_meta;
    uint64_t key[2 + HOP_MAX_RANK];
    size_t len = meta_key(v, key);
    hop__meta_entry *e = NULL;
    if (impl->nmetas <= HOP__SMALL_METAS) {
        for (e = impl->meta_list; e && !hop_value_info_equal(&e->info, v); e = e->next)
            ;
    } else {
        HASH_FIND(hh, impl->metas, key, len, e);
    }
    if (e == NULL) {
        e = hop__arena_alloc(&impl->arena, sizeof *e);
        if (e == NULL)
            return NULL;
        memset(e, 0, sizeof *e);
        memcpy(e->key, key, len);
        e->info.kind = v->kind;
        if (v->kind == HOP_VALUE_SYM) {
            e->info.sym = v->sym;
        } else {
            e->info.meta.dtype = v->meta.dtype;
            e->info.meta.rank = v->meta.rank;
            memcpy(e->info.meta.sizes, v->meta.sizes, (size_t)v->meta.rank * sizeof(void *));
        }
        if (index_meta(impl, e, len) != HOP_OK)
            return NULL;
        e->next = impl->meta_list;
        impl->meta_list = e;
        impl->nmetas++;
    }
    impl->last_meta = &e->info;
    return &e->info;
}

/* ------------------------------------------------------------ node building */

/* Writes "<prefix> <name>" into who like snprintf (truncated to cap - 1
 * bytes, NUL-terminated): the message prefix of a builder made for every
 * node, where snprintf would cost more than the rest of the check. */
static void
who_text(char *who, size_t cap, const char *prefix, const char *name)
{
    size_t n = 0;
    for (const char *p = prefix; *p && n + 1 < cap; p++)
        who[n++] = *p;
    if (n + 1 < cap)
        who[n++] = ' ';
    for (const char *p = name; *p && n + 1 < cap; p++)
        who[n++] = *p;
    who[n] = '\0';
}

/* "call_op <op>" for each op: the prefix of the messages about an op node
 * being built, written once here instead of for every node (who_text). */
static const char *const call_op_who[] = {
#define HOP__OP_WHO(name, nargs, rule, family, complex, cost) "call_op " #name,
    HOP_OP_LIST(HOP__OP_WHO)
#undef HOP__OP_WHO
};
_Static_assert(sizeof call_op_who / sizeof *call_op_who == HOP_OP_COUNT,
               "one message prefix per op");

/* hop_node's packed fields hold every kind and op. */
_Static_assert(HOP_NODE_CALL_FOREIGN <= 0xFF && HOP_OP_COUNT <= 0xFFFF,
               "hop_node.kind and hop_node.op are 8 and 16 bits");

/* A call_foreign node's block starts with its target's name: the one kind
 * whose target is not derived from what the node holds already
 * (hop_node_target), so other nodes do not pay for the field. */
typedef struct foreign_node {
    const char *target;
    hop_node node;
} foreign_node;

/* A node built but not yet linked (phase one). */
typedef struct pending {
    hop_node *node;
    hop_use *uses;
    arg_census census;
    hop__name_claim claim;
} pending;

/*
 * Phase one, common part: checks args, allocates the node, its argument copy
 * and its use records, and reserves a name made from base.  A call_foreign
 * node is allocated as a foreign_node.
 */
static hop_status
prepare(hop_graph *g, const char *who, hop_node_kind kind, const char *base, const hop_arg *args,
        size_t nargs, bool allow_graph, pending *p)
{
    memset(p, 0, sizeof *p);
    if (nargs > 0 && args == NULL)
        return hop_error(HOP_MISUSE, "%s: %zu arguments at NULL", who, nargs);
    if (nargs > UINT32_MAX) /* hop_node.nargs */
        return hop_error(HOP_INVALID, "%s: %zu arguments (at most %" PRIu32 ")", who, nargs,
                         UINT32_MAX);
    for (size_t i = 0; i < nargs; i++) {
        hop_status st = check_arg(g, who, i, &args[i], allow_graph, 0, &p->census);
        if (st != HOP_OK)
            return st;
    }
    /* One block: the node, then its arguments with their list items, then
     * one use record per node reference (census.nodes <= total). */
    size_t total = nargs + p->census.items;
    if (total > (SIZE_MAX - sizeof(foreign_node)) / (sizeof(hop_arg) + sizeof(hop_use)))
        return hop_error(HOP_NOMEM, "%s: out of memory (%zu arguments)", who, total);
    size_t node_at = kind == HOP_NODE_CALL_FOREIGN ? offsetof(foreign_node, node) : 0;
    size_t args_at = node_at + sizeof(hop_node), uses_at = args_at + total * sizeof(hop_arg);
    unsigned char *block =
        hop__arena_alloc(hop__graph_arena(g), uses_at + p->census.nodes * sizeof(hop_use));
    if (block == NULL)
        return HOP_NOMEM;
    hop_node *n = (hop_node *)(block + node_at);
    memset(n, 0, sizeof *n);
    if (total > 0) {
        hop_arg *pool = (hop_arg *)(block + args_at);
        n->args = pool;
        pool += nargs;
        for (size_t i = 0; i < nargs; i++) {
            /* copy_arg's plain case inline: a call per argument of every node */
            if (args[i].kind == HOP_ARG_SYM || args[i].kind == HOP_ARG_LIST)
                copy_arg(&n->args[i], &args[i], &pool);
            else
                n->args[i] = args[i];
        }
    }
    n->nargs = (uint32_t)nargs;
    if (p->census.nodes > 0)
        p->uses = (hop_use *)(block + uses_at);
    /* Only prepare_op makes a call_op node: it names the node after its op
     * (hop__name_reserve_op; base is unused). */
    if (kind != HOP_NODE_CALL_OP) {
        hop_status st = hop__name_reserve(g, base, &p->claim);
        if (st != HOP_OK)
            return st;
    }
    n->kind = kind;
    n->op = HOP_OP_COUNT;
    n->meta = &no_value;
    p->node = n;
    return HOP_OK;
}

/* Takes n out of the node list without touching uses or names. */
static void
unlink_node(hop_graph *g, hop_node *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        g->first = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        g->last = n->prev;
    n->prev = n->next = NULL;
}

/* Puts n in front of next (NULL: at the end). */
static void
link_before(hop_graph *g, hop_node *n, hop_node *next)
{
    n->next = next;
    n->prev = next ? next->prev : g->last;
    if (n->prev)
        n->prev->next = n;
    else
        g->first = n;
    if (next)
        next->prev = n;
    else
        g->last = n;
}

/* Phase two: links the node in front of next (NULL: at the end), names it and
 * records its uses.  Cannot fail.  checked: the node is a checked append
 * (HOP__BUILT_CHECKED). */
static hop_node *
commit(hop_graph *g, pending *p, hop_node *next, bool checked)
{
    hop_node *n = p->node;
    n->graph = g;
    if (checked)
        hop__graph_touch_checked(g);
    else
        hop__graph_touch(g);
    hop__name_commit(g, &p->claim, n);
    link_before(g, n, next);
    g->nnodes++;
    hop_use *pool = p->uses;
    link_uses(n, n->args, n->nargs, &pool);
    return n;
}

/* The fast form of check_value_info: true when it would pass. */
static bool
value_info_ok(const hop_value_info *v)
{
    if (v->kind == HOP_VALUE_SYM)
        return v->sym != NULL;
    if (v->kind != HOP_VALUE_TENSOR || (unsigned)v->meta.dtype >= HOP_DTYPE_COUNT ||
        v->meta.rank < 0 || v->meta.rank > HOP_MAX_RANK)
        return false;
    for (int d = 0; d < v->meta.rank; d++)
        if (v->meta.sizes[d] == NULL)
            return false;
    return true;
}

/* Checks a value description given for a placeholder or a call_hop output. */
static hop_status
check_value_info(const char *who, const char *what, const hop_value_info *v)
{
    if (v->kind == HOP_VALUE_SYM) {
        if (v->sym == NULL)
            return hop_error(HOP_MISUSE, "%s: %s is a SymInt with a NULL expression", who, what);
        return HOP_OK;
    }
    if (v->kind != HOP_VALUE_TENSOR)
        return hop_error(HOP_INVALID, "%s: %s must be a tensor or a SymInt", who, what);
    const hop_meta *m = &v->meta;
    if ((unsigned)m->dtype >= HOP_DTYPE_COUNT)
        return hop_error(HOP_INVALID, "%s: %s has an invalid dtype %d", who, what, (int)m->dtype);
    if (m->rank < 0 || m->rank > HOP_MAX_RANK)
        return hop_error(HOP_INVALID, "%s: %s has rank %d (at most %d)", who, what, m->rank,
                         HOP_MAX_RANK);
    for (int d = 0; d < m->rank; d++) {
        if (m->sizes[d] == NULL)
            return hop_error(HOP_MISUSE, "%s: %s has a NULL size in dim %d", who, what, d);
    }
    return HOP_OK;
}

/* Where a node that is not a placeholder or the output goes: before the
 * output, so that a builder can still append once the output exists. */
static hop_node *
body_end(const hop_graph *g)
{
    return g->output;
}

/* ------------------------------------------------------------ graphs */

/* A new graph in store (which it takes a count of).  NULL on out-of-memory,
 * store unchanged. */
static hop_graph *
new_graph(hop_shape_env *env, hop__graph_store *store, const char *name)
{
    graph_impl *impl = hop__calloc(1, sizeof *impl);
    if (impl == NULL)
        return NULL;
    hop_graph *g = &impl->pub;
    g->arena = &store->arena;
    g->env = env;
    /* (a failed name leaves its bytes, if any, in the store) */
    if ((g->name = hop__name_sanitize(&store->arena, name)) == NULL) {
        hop__free(impl);
        return NULL;
    }
    impl->store = store;
    impl->version = 1;
    impl->verified = HOP__BUILT_CHECKED;
    store->refs++;
    return g;
}

hop_graph *
hop_graph_new(hop_shape_env *env, const char *name)
{
    if (env == NULL || name == NULL) {
        hop_error(HOP_MISUSE, "hop_graph_new: the %s is NULL", env ? "name" : "shape env");
        return NULL;
    }
    hop__graph_store *store = hop__calloc(1, sizeof *store);
    if (store == NULL)
        return NULL;
    hop__arena_init(&store->arena);
    hop_graph *g = new_graph(env, store, name);
    if (g == NULL) {
        hop__arena_destroy(&store->arena);
        hop__free(store);
    }
    return g;
}

hop_graph *
hop_graph_new_sharing(hop_graph *g, const char *name)
{
    if (g == NULL || name == NULL) {
        hop_error(HOP_MISUSE, "hop_graph_new_sharing: the %s is NULL", g ? "name" : "graph");
        return NULL;
    }
    return new_graph(g->env, hop__graph_impl(g)->store, name);
}

static void
free_graph(hop_graph *g)
{
    if (g->free_hook)
        g->free_hook(g);
    for (size_t i = 0; i < g->nsubgraphs; i++) {
        g->subgraphs[i]->parent = NULL;
        free_graph(g->subgraphs[i]);
    }
    hop__free(g->subgraphs);
    hop__names_clear(g);
    graph_impl *impl = hop__graph_impl(g);
    hop__graph_store *store = impl->store;
    hop__free(impl);
    if (--store->refs == 0) {
        HASH_CLEAR(hh, store->metas);
        hop__arena_destroy(&store->arena);
        hop__free(store);
    }
}

void
hop_graph_free(hop_graph *g)
{
    if (g == NULL)
        return;
    if (g->parent) {
        hop_error(HOP_MISUSE, "hop_graph_free: %s is a subgraph of %s; free %s instead", g->name,
                  g->parent->name, g->parent->name);
        return;
    }
    free_graph(g);
}

/* ------------------------------------------------------------ placeholders */

hop_node *
hop_graph_placeholder_at(const hop_graph *g, size_t pos)
{
    if (g == NULL || pos >= g->nplaceholders)
        return NULL;
    if (pos == g->nplaceholders - 1)
        return g->last_placeholder;
    hop_node *n = g->first;
    while (pos-- > 0)
        n = n->next;
    return n;
}

hop_node *
hop_graph_insert_placeholder(hop_graph *g, size_t pos, const char *name, const hop_value_info *meta)
{
    if (g == NULL || name == NULL || meta == NULL) {
        hop_error(HOP_MISUSE, "placeholder: the %s is NULL",
                  g == NULL      ? "graph"
                  : name == NULL ? "name"
                                 : "metadata");
        return NULL;
    }
    /* Placeholders are made by the thousand when lifting: the message prefix
     * is formatted only when a check fails. */
    if (!value_info_ok(meta) || pos > g->nplaceholders) {
        char who[96];
        snprintf(who, sizeof who, "placeholder %s", name);
        if (check_value_info(who, "the metadata", meta) != HOP_OK)
            return NULL;
        hop_error(HOP_INVALID, "%s: position %zu is past the %zu placeholders of %s", who, pos,
                  g->nplaceholders, g->name);
        return NULL;
    }
    pending p;
    if (prepare(g, "placeholder", HOP_NODE_PLACEHOLDER, name, NULL, 0, false, &p) != HOP_OK)
        return NULL;
    if ((p.node->meta = intern_meta(g, meta)) == NULL)
        return NULL;
    hop_node *next;
    if (pos < g->nplaceholders)
        next = hop_graph_placeholder_at(g, pos);
    else if (pos > 0)
        next = g->last_placeholder->next; /* appending: the common case is O(1) */
    else
        next = g->first;
    hop_node *n = commit(g, &p, next, true);
    g->nplaceholders++;
    if (pos == g->nplaceholders - 1)
        g->last_placeholder = n;
    return n;
}

hop_node *
hop_graph_placeholder(hop_graph *g, const char *name, const hop_value_info *meta)
{
    return hop_graph_insert_placeholder(g, g ? g->nplaceholders : 0, name, meta);
}

hop_status
hop_graph_move_placeholder(hop_graph *g, hop_node *ph, size_t pos)
{
    if (g == NULL || ph == NULL)
        return hop_error(HOP_MISUSE, "move_placeholder: the %s is NULL", g ? "node" : "graph");
    if (ph->graph != g || ph->kind != HOP_NODE_PLACEHOLDER)
        return hop_error(HOP_MISUSE, "move_placeholder: %s is not a placeholder of %s", ph->name,
                         g->name);
    if (pos >= g->nplaceholders)
        return hop_error(HOP_INVALID,
                         "move_placeholder: position %zu is past the %zu "
                         "placeholders of %s",
                         pos, g->nplaceholders, g->name);
    if (hop_graph_placeholder_at(g, pos) == ph)
        return HOP_OK;
    hop__graph_touch(g);
    hop_node *after_last = g->last_placeholder->next;
    if (g->last_placeholder == ph)
        g->last_placeholder = ph->prev;
    unlink_node(g, ph);
    /* Positions now count without ph. */
    hop_node *next = pos < g->nplaceholders - 1 ? hop_graph_placeholder_at(g, pos) : after_last;
    if (pos == g->nplaceholders - 1) {
        link_before(g, ph, after_last);
        g->last_placeholder = ph;
    } else {
        link_before(g, ph, next);
    }
    return HOP_OK;
}

hop_status
hop_graph_replace_placeholders(hop_graph *g, size_t pos, size_t n)
{
    if (g == NULL)
        return hop_error(HOP_MISUSE, "replace_placeholders: the graph is NULL");
    if (pos > g->nplaceholders || n > (g->nplaceholders - pos) / 2)
        return hop_error(HOP_INVALID,
                         "replace_placeholders: %s has %zu placeholders, too few to replace "
                         "%zu from position %zu by its last %zu",
                         g->name, g->nplaceholders, n, pos, n);
    hop_status st = HOP_OK;
    for (size_t i = 0; i < n && st == HOP_OK; i++)
        st = hop_graph_erase_node(g, hop_graph_placeholder_at(g, pos));
    for (size_t i = 0; i < n && st == HOP_OK; i++)
        st = hop_graph_move_placeholder(g, hop_graph_placeholder_at(g, g->nplaceholders - 1), pos);
    return st;
}

hop_status
hop_graph_rename_node(hop_graph *g, hop_node *n, const char *base)
{
    if (g == NULL || n == NULL || base == NULL)
        return hop_error(HOP_MISUSE, "rename_node: the %s is NULL",
                         g == NULL   ? "graph"
                         : n == NULL ? "node"
                                     : "name");
    if (n->graph != g)
        return hop_error(HOP_MISUSE, "rename_node: %s is not a node of %s", n->name, g->name);
    hop__name_claim claim;
    hop__name_release(g, n); /* so that renaming to its own base keeps the name */
    hop_status st = hop__name_reserve(g, base, &claim);
    if (st != HOP_OK) {
        hop__name_retake(g, n);
        return st;
    }
    hop__name_commit(g, &claim, n);
    hop__graph_touch(g);
    return HOP_OK;
}

/* ------------------------------------------------------------ calls */

/* Runs shape inference of op over the node's copied arguments. */
static hop_status
infer(hop_graph *g, const char *who, hop_op op, const pending *p, hop_value_info *out)
{
    hop_operand small[32];
    size_t total = p->node->nargs + p->census.items;
    hop_operand *buf = small;
    if (total > HOP__ARRAY_LEN(small)) {
        buf = hop__calloc(total, sizeof *buf);
        if (buf == NULL)
            return HOP_NOMEM;
    }
    hop_operand *pool = buf + p->node->nargs;
    hop_status st = hop_args_operands(who, p->node->args, p->node->nargs, buf, &pool);
    if (st == HOP_OK) {
        memset(out, 0, sizeof *out);
        st = hop_op_infer(g->env, op, buf, p->node->nargs, out);
    }
    if (buf != small)
        hop__free(buf);
    return st;
}

static bool
arg_failed(const hop_arg *a)
{
    if (a->kind == HOP_ARG_NODE)
        return a->u.node == NULL;
    if (a->kind == HOP_ARG_LIST)
        for (size_t i = 0; i < a->u.list.n; i++)
            if (arg_failed(&a->u.list.items[i]))
                return true;
    return false;
}

hop_node *
hop_graph_emit(hop_graph *g, hop_op op, const hop_arg *args, size_t nargs)
{
    for (size_t i = 0; args && i < nargs; i++)
        if (arg_failed(&args[i]))
            return NULL;
    return hop_graph_call_op(g, op, args, nargs);
}

/* A tensor node's metadata as inference checks an operand's (hop__check_meta):
 * sizes present and none a SymBool. */
static bool
operand_meta_ok(const hop_value_info *v)
{
    if (v->kind != HOP_VALUE_TENSOR || !hop_dtype_is_float(v->meta.dtype) || v->meta.rank < 0 ||
        v->meta.rank > HOP_MAX_RANK)
        return false;
    for (int d = 0; d < v->meta.rank; d++)
        if (v->meta.sizes[d] == NULL || hop_expr_is_bool(v->meta.sizes[d]))
            return false;
    return true;
}

/*
 * The metadata inference gives n, a prepared add, sub, mul, div, maximum or
 * minimum, when it is an operand's without a decision: a real float tensor
 * node and either a node of the same metadata (the same interned value) or
 * a Python int, float or bool, in either order.  Inference then promotes to
 * the tensor's dtype (a weak scalar is of no higher category than a float;
 * no bool, so sub accepts it; div's result is already float), broadcasts
 * one shape with nothing to decide (no guard, no symbol) and checks no
 * complex dtype; hop_graph_call_op would keep the first node operand's
 * metadata, which is this.  NULL for anything else: inference runs as
 * ever.  Inference of a traced chain's op, its operands converted and its
 * result compared with each operand, was ~0.5 K instructions of ~4.5 K
 * (issue #30).
 */
static const hop_value_info *
operand_result(hop_op op, const hop_node *n)
{
    if ((op != HOP_OP_add && op != HOP_OP_sub && op != HOP_OP_mul && op != HOP_OP_div &&
         op != HOP_OP_maximum && op != HOP_OP_minimum) ||
        n->nargs != 2)
        return NULL;
    const hop_arg *a = &n->args[0], *b = &n->args[1];
    if (a->kind != HOP_ARG_NODE) {
        const hop_arg *t = a;
        a = b;
        b = t;
    }
    if (a->kind != HOP_ARG_NODE || a->u.node == NULL || !operand_meta_ok(a->u.node->meta))
        return NULL;
    if (b->kind == HOP_ARG_NODE
            ? b->u.node == NULL || b->u.node->meta != a->u.node->meta
            : b->kind != HOP_ARG_INT && b->kind != HOP_ARG_FLOAT && b->kind != HOP_ARG_BOOL)
        return NULL;
    return a->u.node->meta;
}

/* An op call's arity checked (naming who), then the node prepared and its
 * name reserved. */
static hop_status
prepare_op(hop_graph *g, const char *who, hop_op op, const hop_op_info *info,
           const hop_arg *args, size_t nargs, pending *p)
{
    if (nargs != (size_t)info->nargs)
        return hop_error(HOP_INVALID, "%s: takes %d arguments, got %zu", who, info->nargs, nargs);
    hop_status st = prepare(g, who, HOP_NODE_CALL_OP, info->name, args, nargs, false, p);
    if (st == HOP_OK)
        st = hop__name_reserve_op(g, op, info->name, &p->claim);
    return st;
}

/* A prepared op call with its metadata, committed at the end of the body. */
static hop_node *
commit_op(hop_graph *g, pending *p, hop_op op, const hop_op_info *info, const hop_value_info *meta)
{
    p->node->op = op;
    p->node->meta = meta;
    /* (no op infers "no value": were one to, the verifier would see it) */
    return commit(g, p, body_end(g), meta->kind != HOP_VALUE_NONE);
}

hop_node *
hop_graph_call_op(hop_graph *g, hop_op op, const hop_arg *args, size_t nargs)
{
    if (g == NULL) {
        hop_error(HOP_MISUSE, "call_op: the graph is NULL");
        return NULL;
    }
    const hop_op_info *info = hop_op_get(op);
    if (info == NULL) {
        hop_error(HOP_INVALID, "call_op: unknown op %d", (int)op);
        return NULL;
    }
    const char *who = call_op_who[op];
    pending p;
    if (prepare_op(g, who, op, info, args, nargs, &p) != HOP_OK)
        return NULL;
    const hop_value_info *same = operand_result(op, p.node);
    if (same != NULL)
        return commit_op(g, &p, op, info, same);
    /* Inference goes last but for the metadata: it may create unbacked
     * symbols and guards in the env. */
    size_t nsymbols = hop_shape_env_nsymbols(g->env), nguards = hop_shape_env_nguards(g->env);
    hop_value_info out;
    if (infer(g, who, op, &p, &out) != HOP_OK)
        return NULL;
    /* An elementwise result usually has an operand's metadata. */
    const hop_value_info *meta = NULL;
    for (size_t i = 0; i < nargs && meta == NULL; i++) {
        const hop_arg *a = &p.node->args[i];
        if (a->kind == HOP_ARG_NODE && hop_value_info_equal(a->u.node->meta, &out))
            meta = a->u.node->meta;
    }
    if (meta == NULL && (meta = intern_meta(g, &out)) == NULL) {
        /* The one step after inference that can fail: take back the
         * symbols (item, nonzero) and guards inference made. */
        hop_shape_env_truncate_guards(g->env, nguards);
        hop_shape_env_truncate_symbols(g->env, nsymbols);
        return NULL;
    }
    return commit_op(g, &p, op, info, meta);
}

/* Sizes a and b are equal by one of the first nguards guards the ShapeEnv
 * recorded (`s0 == 8`, a loop's carry check): metadata built under that
 * guard may say either. */
static bool
guarded_equal(hop_shape_env *env, size_t nguards, const hop_expr *a, const hop_expr *b)
{
    const hop_expr *eq = hop_sym_eq(env, a, b);
    for (size_t i = 0; eq && i < nguards; i++)
        if (hop_shape_env_guard(env, i) == eq)
            return true;
    return false;
}

/* Inference's result and the given metadata agree: the same value (sizes
 * equal or equal by a guard recorded before inference ran), or for an op that made fresh symbols
 * the same kind, dtype and rank. */
static bool
meta_agrees(hop_shape_env *env, size_t nguards, const hop_value_info *inferred,
            const hop_value_info *given, bool fresh_symbols)
{
    if (!fresh_symbols && inferred->kind == HOP_VALUE_TENSOR && given->kind == HOP_VALUE_TENSOR &&
        inferred->meta.dtype == given->meta.dtype && inferred->meta.rank == given->meta.rank) {
        for (int d = 0; d < given->meta.rank; d++)
            if (inferred->meta.sizes[d] != given->meta.sizes[d] &&
                !guarded_equal(env, nguards, inferred->meta.sizes[d], given->meta.sizes[d]))
                return false;
        return true;
    }
    if (!fresh_symbols)
        return hop_value_info_equal(inferred, given);
    if (inferred->kind != given->kind)
        return false;
    return inferred->kind != HOP_VALUE_TENSOR ||
           (inferred->meta.dtype == given->meta.dtype && inferred->meta.rank == given->meta.rank);
}

static void
print_value_info(const hop_value_info *v, char *buf, size_t cap)
{
    if (v->kind == HOP_VALUE_TENSOR)
        hop_meta_print(&v->meta, buf, cap);
    else if (v->kind == HOP_VALUE_SYM)
        hop_expr_print(v->sym, buf, cap);
    else
        snprintf(buf, cap, "no value");
}

hop_node *
hop_graph_call_op_meta(hop_graph *g, hop_op op, const hop_arg *args, size_t nargs,
                       const hop_value_info *meta)
{
    const hop_op_info *info = hop_op_get(op);
    if (g == NULL || info == NULL || meta == NULL) {
        hop_error(g == NULL || meta == NULL ? HOP_MISUSE : HOP_INVALID, "call_op: %s",
                  g == NULL      ? "the graph is NULL"
                  : meta == NULL ? "the metadata is NULL"
                                 : "unknown op");
        return NULL;
    }
    const char *who = call_op_who[op];
    if (check_value_info(who, "the result", meta) != HOP_OK)
        return NULL;
    pending p;
    if (prepare_op(g, who, op, info, args, nargs, &p) != HOP_OK)
        return NULL;
    size_t nsymbols = hop_shape_env_nsymbols(g->env), nguards = hop_shape_env_nguards(g->env);
    hop_value_info out;
    hop_status st = infer(g, who, op, &p, &out);
    bool fresh = hop_shape_env_nsymbols(g->env) != nsymbols;
    if (st == HOP_OK && !meta_agrees(g->env, nguards, &out, meta, fresh)) {
        char want[256], got[256];
        print_value_info(meta, want, sizeof want);
        print_value_info(&out, got, sizeof got);
        st = hop_error(HOP_INVALID, "%s: the given metadata %s does not agree with inference's %s",
                       who, want, got);
    }
    const hop_value_info *m = st == HOP_OK ? intern_meta(g, meta) : NULL;
    hop_shape_env_truncate_guards(g->env, nguards);
    hop_shape_env_truncate_symbols(g->env, nsymbols);
    if (m == NULL)
        return NULL;
    return commit_op(g, &p, op, info, m);
}

/*
 * What a call_hop and a call_foreign share: the target (it prints as a
 * function name) and the outputs' metadata checked (tensors only for a
 * foreign kernel, which writes buffers), the node prepared with copies of
 * both, its meta its one output's.  The caller sets its kind's fields and
 * commits; on error g is unchanged.
 */
static hop_status
prepare_call(hop_graph *g, const char *who, hop_node_kind kind, const char *target,
             const hop_arg *args, size_t nargs, const hop_value_info *outs, size_t nouts,
             pending *p)
{
    if (!hop_name_is_identifier(target))
        return hop_error(HOP_INVALID, "%s: the target is not an identifier", who);
    if (nouts > 0 && outs == NULL)
        return hop_error(HOP_MISUSE, "%s: %zu outputs at NULL", who, nouts);
    if (nouts > UINT32_MAX) /* hop_node.nouts */
        return hop_error(HOP_INVALID, "%s: %zu outputs (at most %" PRIu32 ")", who, nouts,
                         UINT32_MAX);
    for (size_t i = 0; i < nouts; i++) {
        if (!value_info_ok(&outs[i])) { /* the message only when there is one */
            char what[32];
            snprintf(what, sizeof what, "output %zu", i);
            return check_value_info(who, what, &outs[i]);
        }
        if (kind == HOP_NODE_CALL_FOREIGN && outs[i].kind != HOP_VALUE_TENSOR)
            return hop_error(HOP_INVALID, "%s: output %zu must be a tensor", who, i);
    }
    hop_status st = prepare(g, who, kind, target, args, nargs, kind == HOP_NODE_CALL_HOP, p);
    if (st != HOP_OK)
        return st;
    hop__arena *a = hop__graph_arena(g);
    hop_value_info *ocopy = NULL;
    if (nouts == 1 && outs[0].kind != HOP_VALUE_NONE) {
        /* One output (most HOP calls): the shared copy, as for any node's
         * value, not 80 bytes of its own.  Nothing writes through outs. */
        const hop_value_info *m = intern_meta(g, &outs[0]);
        if (m == NULL)
            return HOP_NOMEM;
        ocopy = (hop_value_info *)m;
    } else if (nouts > 0) {
        if (nouts > SIZE_MAX / sizeof *ocopy)
            return hop_error(HOP_NOMEM, "%s: out of memory (%zu outputs)", who, nouts);
        if ((ocopy = hop__arena_alloc(a, nouts * sizeof *ocopy)) == NULL)
            return HOP_NOMEM;
        memcpy(ocopy, outs, nouts * sizeof *ocopy);
    }
    hop_node *n = p->node;
    if (kind == HOP_NODE_CALL_FOREIGN) {
        char *tcopy = hop__arena_strdup(a, target);
        if (tcopy == NULL)
            return HOP_NOMEM;
        ((foreign_node *)((unsigned char *)n - offsetof(foreign_node, node)))->target = tcopy;
    }
    n->outs = ocopy;
    n->nouts = (uint32_t)nouts;
    if (nouts == 1)
        n->meta = &ocopy[0];
    return HOP_OK;
}

hop_node *
hop_graph_call_hop(hop_graph *g, const hop_class *cls, const hop_arg *args, size_t nargs,
                   const hop_value_info *outs, size_t nouts)
{
    if (g == NULL || cls == NULL || cls->name == NULL) {
        hop_error(HOP_MISUSE, "call_hop: the %s is NULL",
                  g == NULL     ? "graph"
                  : cls == NULL ? "class"
                                : "class's name");
        return NULL;
    }
    char who[96];
    who_text(who, sizeof who, "call_hop", cls->name);
    pending p;
    if (prepare_call(g, who, HOP_NODE_CALL_HOP, cls->name, args, nargs, outs, nouts, &p) != HOP_OK)
        return NULL;
    p.node->cls = cls;
    /* A checked append once hop_graph_verify_call passes on it (graph_impl.h):
     * one such call at a time. */
    graph_impl *impl = hop__graph_impl(g);
    bool checked = impl->verified == HOP__BUILT_CHECKED && impl->unverified == NULL;
    hop_node *n = commit(g, &p, body_end(g), checked);
    if (checked)
        impl->unverified = n;
    return n;
}

const char *
hop_node_target(const hop_node *n)
{
    if (n == NULL)
        return NULL;
    switch (n->kind) {
    case HOP_NODE_PLACEHOLDER:
        return n->name;
    case HOP_NODE_CALL_OP:
        return hop_op_get(n->op)->name;
    case HOP_NODE_CALL_HOP:
        return n->cls->name;
    case HOP_NODE_GETITEM:
        return "getitem";
    case HOP_NODE_OUTPUT:
        return "output";
    case HOP_NODE_CALL_FOREIGN:
        return ((const foreign_node *)((const unsigned char *)n - offsetof(foreign_node, node)))
            ->target;
    }
    return NULL;
}

size_t
hop_node_passed(const hop_node *call, const hop_arg **items, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; call && i < call->nargs; i++) {
        const hop_arg *a = &call->args[i];
        if (a->kind != HOP_ARG_LIST)
            continue;
        for (size_t k = 0; k < a->u.list.n; k++, n++)
            if (n < cap)
                items[n] = &a->u.list.items[k];
    }
    return n;
}

const hop_arg *
hop_node_graphs(const hop_node *call, size_t *n)
{
    size_t at = 0, k = 0;
    if (call == NULL) {
        *n = 0;
        return NULL;
    }
    while (at < call->nargs && call->args[at].kind != HOP_ARG_GRAPH)
        at++;
    while (at + k < call->nargs && call->args[at + k].kind == HOP_ARG_GRAPH)
        k++;
    *n = k;
    return call->args + at;
}

size_t
hop_node_made_inputs(const hop_node *call)
{
    if (call == NULL || call->kind != HOP_NODE_CALL_HOP || call->cls == NULL)
        return 0;
    return hop_class_made_inputs(call->cls);
}

const hop_arg *
hop_node_passed_to(const hop_node *call, size_t j)
{
    size_t made = hop_node_made_inputs(call);
    if (call == NULL || j < made)
        return NULL;
    size_t n = j - made;
    for (size_t i = 0; i < call->nargs; i++) {
        const hop_arg *a = &call->args[i];
        if (a->kind != HOP_ARG_LIST)
            continue;
        if (n < a->u.list.n)
            return &a->u.list.items[n];
        n -= a->u.list.n;
    }
    return NULL;
}

hop_node *
hop_graph_call_foreign(hop_graph *g, const char *target, const hop_arg *args, size_t nargs,
                       const hop_value_info *outs, size_t nouts, unsigned flags)
{
    if (g == NULL || target == NULL) {
        hop_error(HOP_MISUSE, "call_foreign: the %s is NULL", g == NULL ? "graph" : "target");
        return NULL;
    }
    char who[96];
    snprintf(who, sizeof who, "call_foreign %s", target);
    pending p;
    if (prepare_call(g, who, HOP_NODE_CALL_FOREIGN, target, args, nargs, outs, nouts, &p) != HOP_OK)
        return NULL;
    p.node->flags = flags & (HOP_NODE_SIDE_EFFECTS | HOP_NODE_MAY_FAIL);
    return commit(g, &p, body_end(g), false);
}

hop_node *
hop_graph_getitem(hop_graph *g, hop_node *call, size_t index)
{
    if (g == NULL || call == NULL) {
        hop_error(HOP_MISUSE, "getitem: the %s is NULL", g == NULL ? "graph" : "call");
        return NULL;
    }
    if (call->graph != g) {
        hop_error(HOP_MISUSE, "getitem: %s belongs to graph %s, not %s", call->name,
                  call->graph ? call->graph->name : "(erased)", g->name);
        return NULL;
    }
    if (call->kind != HOP_NODE_CALL_HOP && call->kind != HOP_NODE_CALL_FOREIGN) {
        hop_error(HOP_INVALID, "getitem: %s is a %s, not a call_hop", call->name,
                  hop_node_kind_name(call->kind));
        return NULL;
    }
    if (index >= call->nouts) {
        hop_error(HOP_INVALID, "getitem: %s has %zu output%s; index %zu is out of range",
                  call->name, (size_t)call->nouts, call->nouts == 1 ? "" : "s", index);
        return NULL;
    }
    hop_arg args[2] = {hop_arg_node(call), hop_arg_int((int64_t)index)};
    pending p;
    if (prepare(g, "getitem", HOP_NODE_GETITEM, "getitem", args, 2, false, &p) != HOP_OK)
        return NULL;
    p.node->meta = &call->outs[index];
    /* checked: what the verifier checks of a getitem is checked above */
    return commit(g, &p, body_end(g), true);
}

hop_node *
hop_graph_output(hop_graph *g, const hop_arg *values, size_t n)
{
    if (g == NULL) {
        hop_error(HOP_MISUSE, "output: the graph is NULL");
        return NULL;
    }
    if (g->output) {
        hop_error(HOP_MISUSE, "output: %s already has an output node", g->name);
        return NULL;
    }
    pending p;
    if (prepare(g, "output", HOP_NODE_OUTPUT, "output", values, n, false, &p) != HOP_OK)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const hop_arg *v = &values[i];
        if (v->kind == HOP_ARG_NODE && v->u.node->meta->kind == HOP_VALUE_NONE) {
            hop_error(HOP_INVALID, "output: value %zu (%s) has no single value; return its items",
                      i, v->u.node->name);
            return NULL;
        }
    }
    hop_node *out = commit(g, &p, NULL, true);
    g->output = out;
    return out;
}

/* ------------------------------------------------------------ guards */

hop_status
hop_graph_add_guard(hop_graph *g, const hop_expr *cond)
{
    if (g == NULL || cond == NULL)
        return hop_error(HOP_MISUSE, "hop_graph_add_guard: the %s is NULL",
                         g ? "condition" : "graph");
    /* The env checks that cond is one of its SymBools (and is cond). */
    const hop_expr *same = hop_sym_and(g->env, cond, cond);
    if (same == NULL)
        return hop_error(hop_error_code(), "hop_graph_add_guard: %s: %s", g->name,
                         hop_error_message());
    int64_t v;
    if (hop_expr_const_value(cond, &v)) {
        if (v)
            return HOP_OK;
        return hop_error(HOP_INVALID, "hop_graph_add_guard: %s: the guard is False", g->name);
    }
    for (size_t i = 0; i < g->nguards; i++)
        if (g->guards[i] == cond)
            return HOP_OK;
    graph_impl *impl = hop__graph_impl(g);
    if (g->nguards == impl->guard_cap) {
        /* Arena memory: the old array stays until the graph goes (guards are
         * few, so doubling wastes little). */
        size_t cap = impl->guard_cap ? 2 * impl->guard_cap : 4;
        const hop_expr **grown = hop__arena_alloc(hop__graph_arena(g), cap * sizeof *grown);
        if (grown == NULL)
            return HOP_NOMEM;
        if (g->nguards)
            memcpy(grown, g->guards, g->nguards * sizeof *grown);
        g->guards = grown;
        impl->guard_cap = cap;
    }
    g->guards[g->nguards++] = cond;
    hop__graph_touch_checked(g); /* the verifier reads no guard */
    return HOP_OK;
}

/* ------------------------------------------------------------ subgraphs */

hop_status
hop_graph_add_subgraph(hop_graph *parent, hop_graph *child)
{
    if (parent == NULL || child == NULL)
        return hop_error(HOP_MISUSE, "add_subgraph: the %s is NULL",
                         parent == NULL ? "parent" : "child");
    if (child->parent)
        return hop_error(HOP_MISUSE, "add_subgraph: %s is already a subgraph of %s", child->name,
                         child->parent->name);
    for (const hop_graph *a = parent; a; a = a->parent) {
        if (a == child)
            return hop_error(HOP_MISUSE, "add_subgraph: %s contains %s, which cannot contain it",
                             child->name, parent->name);
    }
    if (child->env != parent->env)
        return hop_error(HOP_MISUSE, "add_subgraph: %s uses another shape env than %s", child->name,
                         parent->name);
    if (hop_graph_find_subgraph(parent, child->name))
        return hop_error(HOP_EXISTS, "add_subgraph: %s already has a subgraph named %s",
                         parent->name, child->name);
    if (hop__name_find(parent, child->name))
        return hop_error(HOP_EXISTS, "add_subgraph: %s already has a node named %s", parent->name,
                         child->name);
    hop_status st = hop__grow((void **)&parent->subgraphs, &parent->subgraph_cap,
                              parent->nsubgraphs + 1, sizeof(hop_graph *));
    if (st == HOP_OK)
        st = hop__subgraph_reserve(parent);
    if (st != HOP_OK)
        return st;
    parent->subgraphs[parent->nsubgraphs++] = child;
    hop__subgraph_link(parent, child);
    child->parent = parent;
    /* checked: what the verifier checks of the subgraph list is checked
     * above; the subgraph itself is vouched for by a call's check
     * (graph_impl.h) */
    hop__graph_touch_checked(parent);
    return HOP_OK;
}

/* Detaches the index-th subgraph of g. */
static hop_graph *
detach_subgraph(hop_graph *g, size_t index)
{
    hop_graph *child = g->subgraphs[index];
    hop__subgraph_unlink(g, child);
    memmove(&g->subgraphs[index], &g->subgraphs[index + 1],
            (g->nsubgraphs - index - 1) * sizeof(hop_graph *));
    g->nsubgraphs--;
    child->parent = NULL;
    hop__graph_impl(child)->vouched = 0; /* its calls were the old parent's */
    hop__name_unreserve(g, child->name);
    hop__graph_touch(g);
    return child;
}

hop_status
hop_graph_remove_subgraph(hop_graph *parent, hop_graph *child)
{
    if (parent == NULL || child == NULL)
        return hop_error(HOP_MISUSE, "remove_subgraph: the %s is NULL",
                         parent == NULL ? "parent" : "child");
    if (child->parent != parent)
        return hop_error(HOP_MISUSE, "remove_subgraph: %s is not a subgraph of %s", child->name,
                         parent->name);
    const hop_node *user = first_graph_user(parent, child);
    if (user)
        return hop_error(HOP_MISUSE, "remove_subgraph: %s is still used by node %s", child->name,
                         user->name);
    /* From the newest: a rolled-back trace removes its last subgraphs. */
    for (size_t i = parent->nsubgraphs; i-- > 0;) {
        if (parent->subgraphs[i] == child) {
            detach_subgraph(parent, i);
            return HOP_OK;
        }
    }
    return hop_error(HOP_MISUSE, "remove_subgraph: %s is not listed in %s", child->name,
                     parent->name);
}

hop_graph *
hop_graph_find_subgraph(const hop_graph *g, const char *name)
{
    if (g == NULL || name == NULL)
        return NULL;
    return hop__subgraph_find(g, name, strlen(name));
}

hop_graph *
hop_graph_new_subgraph(const hop_graph *g, const char *base)
{
    if (g == NULL || base == NULL) {
        hop_error(HOP_MISUSE, "hop_graph_new_subgraph: NULL %s", g ? "base name" : "graph");
        return NULL;
    }
    char name[300];
    snprintf(name, sizeof name, "%.255s", base);
    for (int k = 1; hop_graph_find_subgraph(g, name) || hop_graph_find_node(g, name); k++)
        snprintf(name, sizeof name, "%.255s_%d", base, k);
    return hop_graph_new(g->env, name);
}

hop_node *
hop_graph_find_node(const hop_graph *g, const char *name)
{
    return g ? hop__name_find(g, name) : NULL;
}

size_t
hop_graph_tree_nodes(const hop_graph *g)
{
    if (g == NULL)
        return 0;
    size_t n = g->nnodes;
    for (size_t i = 0; i < g->nsubgraphs; i++)
        n += hop_graph_tree_nodes(g->subgraphs[i]);
    return n;
}

/* ------------------------------------------------------------ removal */

/* Unlinks n, which has no users.  Cannot fail. */
static void
remove_node(hop_graph *g, hop_node *n)
{
    unlink_uses(n, n->args, n->nargs);
    hop_node *prev = n->prev;
    unlink_node(g, n);
    hop__graph_touch(g);
    g->nnodes--;
    if (n->kind == HOP_NODE_PLACEHOLDER) {
        g->nplaceholders--;
        if (g->last_placeholder == n)
            g->last_placeholder = g->nplaceholders ? prev : NULL;
    }
    if (g->output == n)
        g->output = NULL;
    hop__name_release(g, n);
    /* The node stays readable (arena memory) but belongs to no graph now. */
    n->graph = NULL;
}

hop_status
hop_graph_erase_node(hop_graph *g, hop_node *n)
{
    if (g == NULL || n == NULL)
        return hop_error(HOP_MISUSE, "erase_node: the %s is NULL", g == NULL ? "graph" : "node");
    if (n->graph != g)
        return hop_error(HOP_MISUSE, "erase_node: %s is not a node of %s", n->name, g->name);
    if (n->nuses > 0)
        return hop_error(HOP_MISUSE, "erase_node: %s is still used by %s", n->name,
                         n->uses->user->name);
    remove_node(g, n);
    return HOP_OK;
}

/* True when a node of g or of its subgraphs, at any depth, has side effects. */
static bool
has_side_effects(const hop_graph *g)
{
    for (const hop_node *n = g->first; n; n = n->next)
        if (n->flags & HOP_NODE_SIDE_EFFECTS)
            return true;
    for (size_t i = 0; i < g->nsubgraphs; i++)
        if (has_side_effects(g->subgraphs[i]))
            return true;
    return false;
}

bool
hop_node_has_side_effects(const hop_node *n)
{
    if (n->flags & HOP_NODE_SIDE_EFFECTS)
        return true;
    if (n->kind != HOP_NODE_CALL_HOP)
        return false;
    for (size_t i = 0; i < n->nargs; i++)
        if (n->args[i].kind == HOP_ARG_GRAPH && has_side_effects(n->args[i].u.graph))
            return true;
    return false;
}

/* Whether evaluating e when the plan runs may fail: it mentions an
 * unbacked symbol (no guard checked the value it stands for) or divides by
 * a non-constant. */
static bool
expr_may_fail(const hop_expr *e)
{
    hop_expr_kind k = hop_expr_kind_of(e);
    if (k == HOP_EXPR_SYMBOL)
        return hop_symbol_is_unbacked(e);
    int64_t c;
    if ((k == HOP_EXPR_FLOORDIV || k == HOP_EXPR_MOD) &&
        !hop_expr_const_value(hop_expr_operand(e, 1), &c))
        return true;
    for (size_t i = 0; i < hop_expr_noperands(e); i++)
        if (expr_may_fail(hop_expr_operand(e, i)))
            return true;
    return false;
}

/* Whether one of args is a SymInt that may fail to be a valid size or
 * index (expr_may_fail), written in the node or the value of another. */
static bool
args_may_fail(const hop_arg *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == HOP_ARG_SYM && expr_may_fail(args[i].u.sym))
            return true;
        const hop_node *v = args[i].kind == HOP_ARG_NODE ? args[i].u.node : NULL;
        if (v && v->meta && v->meta->kind == HOP_VALUE_SYM && expr_may_fail(v->meta->sym))
            return true;
        if (args[i].kind == HOP_ARG_LIST && args_may_fail(args[i].u.list.items, args[i].u.list.n))
            return true;
    }
    return false;
}

static bool
graph_may_fail(const hop_graph *g)
{
    for (const hop_node *n = g->first; n; n = n->next)
        if (hop_node_may_fail(n))
            return true;
    return false;
}

bool
hop_node_may_fail(const hop_node *n)
{
    if (n->flags & HOP_NODE_MAY_FAIL)
        return true;
    if (n->kind == HOP_NODE_CALL_OP && n->op == HOP_OP_fail_if)
        return n->args[2].kind != HOP_ARG_INT || hop_check_kind_is_effect(n->args[2].u.i);
    if (n->kind == HOP_NODE_CALL_OP) {
        /* an elementwise op takes a SymInt as a scalar value, never fails */
        hop_kernel_family f = hop_op_get(n->op)->family;
        bool values = f == HOP_KF_UNARY || f == HOP_KF_BINARY || f == HOP_KF_WHERE;
        return hop_op_checks_values(n->op) || (!values && args_may_fail(n->args, n->nargs));
    }
    if (n->kind != HOP_NODE_CALL_HOP)
        return false;
    if (n->cls && (n->cls->flags & HOP_CLASS_MAY_NOT_END))
        return true;
    for (size_t i = 0; i < n->nargs; i++)
        if (n->args[i].kind == HOP_ARG_GRAPH && graph_may_fail(n->args[i].u.graph))
            return true;
    return false;
}

size_t
hop_graph_dce(hop_graph *g)
{
    if (g == NULL)
        return 0;
    size_t removed = 0;
    /* Backwards, so that a node whose last user goes is seen after it. */
    for (hop_node *n = g->last, *prev; n; n = prev) {
        prev = n->prev;
        bool removable = n->kind == HOP_NODE_CALL_OP || n->kind == HOP_NODE_CALL_HOP ||
                         n->kind == HOP_NODE_CALL_FOREIGN || n->kind == HOP_NODE_GETITEM;
        /* A node may define an unbacked symbol that sizes and SYM
         * arguments name without using the node (item: `select(w, 0, u0 %
         * 3)`); a backed one is bound on entry. */
        bool defines_sym = n->kind != HOP_NODE_CALL_HOP && n->meta &&
                           n->meta->kind == HOP_VALUE_SYM && hop_symbol_is_unbacked(n->meta->sym);
        if (removable && n->nuses == 0 && !defines_sym && !hop_node_has_side_effects(n) &&
            !hop_node_may_fail(n)) {
            remove_node(g, n);
            removed++;
        }
    }
    for (size_t i = g->nsubgraphs; i-- > 0;) {
        if (first_graph_user(g, g->subgraphs[i]) == NULL)
            free_graph(detach_subgraph(g, i));
    }
    return removed;
}
