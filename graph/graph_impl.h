/*
 * graph/graph_impl.h - internals shared by the files of the graph layer: the
 * private part of a graph (its arena, name table and metadata table) and the
 * entry points of the name table (graph/names.c) and the metadata table
 * (graph/graph.c).
 *
 * Ownership: a hop_graph is allocated as the first member of a graph_impl,
 * which holds its name table.  Its memory (the arena) and its metadata table
 * are a hop__graph_store, which graphs made by hop_graph_new_sharing share:
 * the store dies with the last graph that uses it.  g->arena points at the
 * store's arena.  Everything a node holds (the node, its arguments, use
 * records, name and metadata) lives in the arena.
 */
#ifndef HOP_GRAPH_IMPL_H
#define HOP_GRAPH_IMPL_H

#include "core/hash.h"
#include "hop/graph.h"

/*
 * A base name that has been uniquified at least once.  `next` serves it: every
 * `<name>_<k>` with 1 <= k < next is taken, so uniquifying `add` for the
 * 100,000th time does not rescan the taken suffixes.  Made on a base's first
 * clash only, so most names (lifted placeholders, unique ops) have none.
 * text holds the base's len bytes, then `_<text_k>` (text_len bytes in all,
 * no NUL; room for len + 22): the last candidate, whose successor is its
 * digits counted up in place.  bare_taken: the base itself was taken when a
 * name was last reserved from it and has not been released since (names.c,
 * lower_base_start), so it need not be looked up again.
 */
typedef struct hop__base {
    char *text; /* in the arena */
    /* next: where the search for a free `<base>_<k>` starts; top: every
     * name this entry's counter ever handed out has k < top. */
    uint64_t next, text_k, top;
    struct hop__base *chain; /* the bucket's next base */
    uint32_t hash, len, text_len;
    bool bare_taken;
    /* A name `<base>_<k>` was reserved some other way (whole, as a node's
     * base or a rename) or a subgraph has one: the counter's names above
     * top may be taken too. */
    bool foreign;
} hop__base;

/* One distinct value info of the graph, shared by every node that has it.
 * key is the value in canonical form (see graph.c, meta_key). */
typedef struct hop__meta_entry {
    uint64_t key[2 + HOP_MAX_RANK];
    hop_value_info info;
    struct hop__meta_entry *next; /* the list of all entries, newest first */
    UT_hash_handle hh;
} hop__meta_entry;

/* A graph keeps this many name buckets and metadata entries without any
 * table allocation (most subgraphs are small). */
enum {
    HOP__SMALL_BUCKETS = 8,
    HOP__SMALL_BASES = 4,
    HOP__SMALL_METAS = 8,
    HOP__SMALL_SUBGRAPHS = 8
};

/* A slot of the subgraph index: the subgraph and its name's hash (NULL: an
 * empty slot). */
typedef struct hop__sub_slot {
    hop_graph *graph;
    uint32_t hash;
} hop__sub_slot;

/*
 * The memory of a family of graphs: an OutputGraph's root and every body
 * traced under it share one (hop_graph_new_sharing), so a body pays no arena
 * of its own (its last chunk's empty part, a few hundred bytes to 8 KiB)
 * and no copy of the metadata its parent interned already (a body's inputs
 * and ops mostly have its parent's shapes).  Counted by the graphs using it;
 * a graph that leaves its parent (hop_graph_remove_subgraph) keeps its
 * count, so its nodes stay valid whoever frees what first.
 */
typedef struct hop__graph_store {
    hop__arena arena;
    size_t refs;
    /* The metadata entries: a list, searched linearly while short, and a
     * uthash index over them beyond HOP__SMALL_METAS; and the entry used
     * last (chains repeat it). */
    hop__meta_entry *meta_list, *metas;
    size_t nmetas;
    const hop_value_info *last_meta;
} hop__graph_store;

typedef struct graph_impl {
    hop_graph pub;
    hop__graph_store *store;
    /* The name table: a chained hash table of the named nodes, linked through
     * hop_node.name_next (see graph/names.c for why not uthash). */
    hop_node **buckets; /* small_buckets until the table grows */
    size_t nbuckets;    /* a power of two, or 0 */
    size_t nnamed;
    hop_node *small_buckets[HOP__SMALL_BUCKETS];
    /* The uniquified bases: a chained table like the names' (a uthash table
     * was ~600 bytes a graph, most graphs have a few bases). */
    hop__base **bases; /* small_bases until the table grows */
    size_t nbase_buckets, nbases;
    hop__base *small_bases[HOP__SMALL_BASES];
    size_t guard_cap; /* pub.guards holds this many (arena memory) */
    /* The subgraphs by name, once there are more than HOP__SMALL_SUBGRAPHS
     * (below that a scan is as fast): open addressing, linear probing,
     * at most half full.  See graph/names.c. */
    struct hop__sub_slot *sub_slots;
    size_t sub_cap; /* a power of two, or 0 */
    /* The graph's version, bumped by every change made through the graph
     * API (hop__graph_touch, hop__graph_touch_checked), and the version the
     * last successful hop_graph_verify that covered it saw (0: none since),
     * so a graph checked once is not checked again unchanged
     * (hop_graph_verify_changed); or HOP__BUILT_CHECKED.  Versions skip 0
     * and HOP__BUILT_CHECKED when they wrap. */
    uint32_t version, verified;
    /* A call_hop a checked append added (hop_graph_call_hop) whose
     * hop_graph_verify_call has not yet passed: the graph is not vouched for
     * while it is set, and a second such call ends HOP__BUILT_CHECKED. */
    const hop_node *unverified;
    /* This graph's version when a passing hop_graph_verify_call last checked
     * a call of it (0: none; HOP__BUILT_CHECKED: a call was checked against
     * another version of it, so an older call may no longer fit). */
    uint32_t vouched;
} graph_impl;

/*
 * `verified` of a graph that changed only by the builders' checked appends
 * since it was made (placeholders, op calls, the output node, guards:
 * hop__graph_touch_checked): each of them checks what the verifier would
 * check of the node it adds (its arguments nodes of the graph, none the
 * output node, all before it; a unique name; placeholders first, the output
 * last; a known op with a value), so the graph holds by construction what
 * the verifier checks, but for having an output node.  A traced graph
 * without HOPs is one: verifying it was ~0.37 K instructions of each op of
 * trace_node's chain (issue #30).  Any other change ends it.
 *
 * A HOP call is one too (issue #30: re-verifying the calls of a traced
 * root at lowering was ~4.8 K instructions of each traced cond call): the
 * subgraphs it installs (hop_graph_add_subgraph checks their names, parent
 * and shape env) and its call_hop node, once hop_graph_verify_call passes
 * on that node (hop_apply runs it), and its getitems (they check what the
 * verifier would).  Such a graph is vouched for only while every subgraph
 * is still the version a passing call check saw (`vouched`) and is itself
 * vouched for (hop_graph_verify_changed, graph/verify.c).
 */
#define HOP__BUILT_CHECKED UINT32_MAX

static inline graph_impl *
hop__graph_impl(const hop_graph *g)
{
    return (graph_impl *)g;
}

/* Records a change made by a checked append (see HOP__BUILT_CHECKED): a
 * verification stamp no longer holds, HOP__BUILT_CHECKED still does. */
static inline void
hop__graph_touch_checked(hop_graph *g)
{
    graph_impl *impl = hop__graph_impl(g);
    if (++impl->version == 0 || impl->version == HOP__BUILT_CHECKED)
        impl->version = 1;
}

/* Records any other change to g: its verification stamp no longer holds,
 * nor does HOP__BUILT_CHECKED. */
static inline void
hop__graph_touch(hop_graph *g)
{
    hop__graph_touch_checked(g);
    if (hop__graph_impl(g)->verified == HOP__BUILT_CHECKED)
        hop__graph_impl(g)->verified = 0;
}

static inline hop__arena *
hop__graph_arena(const hop_graph *g)
{
    return (hop__arena *)g->arena;
}

/* A reserved, not yet committed name (see hop__name_reserve). */
typedef struct hop__name_claim {
    const char *name; /* the chosen name, in the arena */
    uint32_t hash;
    hop__base *base; /* the base's entry when a suffix was chosen, or NULL */
    uint64_t suffix; /* the chosen suffix, 0 for the bare base */
} hop__name_claim;

/*
 * Picks the unique name for a new node from `base` (sanitised into an
 * identifier first: invalid characters become `_`, a leading digit gets a
 * `_` prefix): `base` if free, else `base_1`, `base_2`, ... (the smallest free
 * suffix).  Everything that can fail happens here (the string, the table's
 * growth), but nothing is taken until hop__name_commit, so a call that fails
 * after reserving leaves no visible trace.  At most one claim per graph may
 * be pending.  HOP_NOMEM on failure.
 */
hop_status hop__name_reserve(hop_graph *g, const char *base, hop__name_claim *claim);
/* hop__name_reserve for a call_op node of op, whose base is its op's name
 * (op_name): an identifier and no keyword already, so it is not
 * sanitised. */
hop_status hop__name_reserve_op(hop_graph *g, hop_op op, const char *op_name,
                                hop__name_claim *claim);
/* Gives the reserved name to n (sets n->name).  Cannot fail. */
void hop__name_commit(hop_graph *g, const hop__name_claim *claim, hop_node *n);
/* Frees n's name for reuse (on erase and rename).  Cannot fail. */
void hop__name_release(hop_graph *g, hop_node *n);
/* Gives n its own name back after hop__name_release (a failed rename).
 * Cannot fail: release leaves the table's room behind. */
void hop__name_retake(hop_graph *g, hop_node *n);
/* A subgraph name of g stopped being taken (the subgraph left g). */
void hop__name_unreserve(hop_graph *g, const char *name);
/* The node holding name, or NULL. */
hop_node *hop__name_find(const hop_graph *g, const char *name);
/* Copies s into the arena sanitised into an identifier; NULL on OOM. */
char *hop__name_sanitize(hop__arena *a, const char *s);
/* Frees the name table (its entries and strings live in the arena) and the
 * subgraph index. */
void hop__names_clear(hop_graph *g);

/*
 * The subgraph index: finding a subgraph by name costs O(1) however many
 * subgraphs a graph has (a function with 10,000 HOP calls has 20,000), where
 * a scan made every name reservation, subgraph installation and verification
 * O(subgraphs).  hop__subgraph_reserve makes room for one more (HOP_NOMEM on
 * failure, nothing changed); hop__subgraph_link, after child was appended to
 * g->subgraphs, enters it and cannot fail; hop__subgraph_unlink drops it
 * (cannot fail).
 */
hop_status hop__subgraph_reserve(hop_graph *g);
void hop__subgraph_link(hop_graph *g, hop_graph *child);
void hop__subgraph_unlink(hop_graph *g, const hop_graph *child);
/* The subgraph of g named name (len bytes), or NULL. */
hop_graph *hop__subgraph_find(const hop_graph *g, const char *name, size_t len);

#endif /* HOP_GRAPH_IMPL_H */
