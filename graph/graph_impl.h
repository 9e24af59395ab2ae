/*
 * graph/graph_impl.h - internals shared by the files of the graph layer: the
 * private part of a graph (its arena and name table) and the name table's
 * entry points (graph/names.c).
 *
 * Ownership: a hop_graph is allocated as the first member of a graph_impl, so
 * the public struct and its arena live and die in one block.  g->arena points
 * at impl->arena; g->names is the head of the uthash table of name entries.
 */
#ifndef HOP_GRAPH_IMPL_H
#define HOP_GRAPH_IMPL_H

#include "core/hash.h"
#include "hop/graph.h"

/*
 * One entry per name a node holds or once held.  An entry whose node is NULL
 * is free (its node was erased, or a failed call reserved it), so entries can
 * be inserted early without any visible effect.  `next` serves the entry as a
 * base name: every `<name>_<k>` with 1 <= k < next is taken, so uniquifying
 * does not rescan the taken suffixes.
 */
typedef struct hop__name {
    const char *name; /* in the arena */
    hop_node *node;   /* the holder, or NULL while free */
    uint64_t next;
    UT_hash_handle hh;
} hop__name;

/* A reserved, not yet committed name (see hop__name_reserve). */
typedef struct hop__name_claim {
    hop__name *entry; /* the chosen name's entry, node still NULL */
    hop__name *base;  /* the base's entry when a suffix was chosen, or NULL */
    uint64_t suffix;  /* the chosen suffix, 0 for the bare base */
} hop__name_claim;

static inline hop__arena *
hop__graph_arena(const hop_graph *g)
{
    return (hop__arena *)g->arena;
}

/* True when s is a valid identifier ([A-Za-z_][A-Za-z0-9_]*) and no Python
 * keyword, so it can print as a name in generated code. */
bool hop__name_is_identifier(const char *s);

/*
 * Picks the unique name for a new node from `base` (sanitised into an
 * identifier first: invalid characters become `_`, a leading digit gets a
 * `_` prefix): `base` if free, else `base_1`, `base_2`, ... (the smallest free
 * suffix).  The entry is inserted but stays free until hop__name_commit, so a
 * call that fails after reserving leaves no visible trace.  HOP_NOMEM on
 * failure.
 */
hop_status hop__name_reserve(hop_graph *g, const char *base, hop__name_claim *claim);
/* Gives the reserved name to n (sets n->name).  Cannot fail. */
void hop__name_commit(hop_graph *g, const hop__name_claim *claim, hop_node *n);
/* Frees n's name for reuse (on erase).  Cannot fail. */
void hop__name_release(hop_graph *g, hop_node *n);
/* A subgraph name of g stopped being taken (the subgraph left g). */
void hop__name_unreserve(hop_graph *g, const char *name);
/* The node holding name, or NULL. */
hop_node *hop__name_find(const hop_graph *g, const char *name);
/* Copies s into the arena sanitised into an identifier; NULL on OOM. */
char *hop__name_sanitize(hop__arena *a, const char *s);
/* Frees the name table (the entries live in the arena). */
void hop__names_clear(hop_graph *g);

#endif /* HOP_GRAPH_IMPL_H */
