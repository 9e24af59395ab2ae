/*
 * tracer/tracer_impl.h - the SubgraphTracer's private layout, shared with the
 * OutputGraph layer, which creates tracers, moves them through their states
 * and undoes their changes when a scope fails.
 */
#ifndef HOP_TRACER_IMPL_H
#define HOP_TRACER_IMPL_H

#include "hop/tracer.h"
#include "core/hash.h"

/* One way to reach a placeholder of this tracer: keyed by the outer value it
 * stands for (the original value and the parent's value both get an entry). */
typedef struct hop__lift_entry {
    const hop_node *key;
    hop_node *value;
    UT_hash_handle hh;
} hop__lift_entry;

/* symbol -> the value in this tracer that yields it. */
typedef struct hop__sym_entry {
    const hop_expr *sym;
    hop_node *value;
    UT_hash_handle hh;
} hop__sym_entry;

struct hop_tracer {
    hop_graph *graph;
    hop_tracer *parent;
    int depth;
    hop_tracer_state state;
    void *owner; /* the OutputGraph that made it */
    hop__arena arena; /* table entries; undone entries are left behind */
    hop__lift_entry *lift_map;
    hop__lift_entry **lift_log; /* creation order, for undo */
    size_t nlift_log, lift_log_cap;
    hop__sym_entry *sym_map;
    hop__sym_entry **sym_log;
    size_t nsym_log, sym_log_cap;
    hop_node **lifted;        /* lifted placeholders, in creation order */
    hop_node **lifted_source; /* the parent's value for each */
    size_t nlifted, lifted_cap;
    /* Provenance (hop_tracer_lifted_cause, hop_tracer_set_lift_hook): for
     * each lifted symbol, the parent's tensor whose shape brought it in
     * (NULL when the symbol itself was used); `cause` is that tensor while
     * its shape's symbols are bound.  The hook is inherited by children. */
    hop_node **lifted_cause;
    size_t lifted_cause_cap;
    hop_node *cause;
    hop_lift_hook hook;
    void *hook_ud;
};

/* What undoing a tracer's changes needs to know. */
typedef struct hop__tracer_mark {
    hop_node *last; /* graph->last at mark time */
    size_t nplaceholders;
    size_t nsubgraphs;
    size_t nlift_log, nsym_log, nlifted;
} hop__tracer_mark;

/* A tracer for graph (which it does not own), child of parent (or NULL). */
hop_tracer *hop__tracer_new(hop_graph *graph, hop_tracer *parent);
/* hop_tracer_create_input without the check that t is current: the
 * OutputGraph adds captured tensors to the root while a body is traced. */
hop_node *hop__tracer_add_input(hop_tracer *t, const char *name, const hop_value_info *meta);
/* Records ph, a placeholder of t's graph, as lifted from source (a value of
 * t's parent) with cause (see hop_tracer_lifted_cause; may be NULL), for a
 * loaded program's tracers (hop/saved.h).  HOP_NOMEM. */
hop_status hop__tracer_add_lifted(hop_tracer *t, hop_node *ph, hop_node *source, hop_node *cause);
/* Frees t's tables, not its graph. */
void hop__tracer_free(hop_tracer *t);
void hop__tracer_mark_of(const hop_tracer *t, hop__tracer_mark *m);
/* Removes every node, placeholder, subgraph, lifted value and bound symbol
 * added to t since m.  Removed subgraphs are handed to orphan (may be NULL)
 * so that their owner can keep them alive.  Never fails. */
void hop__tracer_rollback(hop_tracer *t, const hop__tracer_mark *m,
                          void (*orphan)(void *ctx, hop_graph *g), void *ctx);

#endif /* HOP_TRACER_IMPL_H */
