/*
 * tracer/tracer_owner.h - what the owner of tracers (the OutputGraph, in
 * output_graph/) does with them beyond hop/tracer.h: makes and frees them,
 * moves them through their states, adds root inputs while a body is traced,
 * and marks and undoes their changes when a scope fails.
 *
 * Internal to libhop (hop__ names), but an interface, not a layout: the
 * tracer's fields stay private to tracer/ (tracer_impl.h), so the OutputGraph
 * reaches a tracer only through these functions and hop/tracer.h.
 */
#ifndef HOP_TRACER_OWNER_H
#define HOP_TRACER_OWNER_H

#include "hop/tracer.h"

/* What undoing a tracer's changes needs to know (hop__tracer_mark_of). */
typedef struct hop__tracer_mark {
    hop_node *last; /* graph->last at mark time */
    size_t nplaceholders;
    size_t nsubgraphs;
    size_t nlift_log, nsym_log, nlifted;
} hop__tracer_mark;

/* A tracer for graph (which it does not own), child of parent (or NULL),
 * made by owner (what hop__tracer_owner returns), in state CURRENT.  When
 * graph is freed by whoever owns it (the graph it is installed in), the
 * tracer forgets it: hop_tracer_graph(t) is NULL from then on.  NULL on
 * out-of-memory. */
hop_tracer *hop__tracer_new(hop_graph *graph, hop_tracer *parent, void *owner);
/* Records ph, a placeholder of t's graph, as lifted from source (a value of
 * t's parent) with cause (see hop_tracer_lifted_cause; may be NULL), for a
 * loaded program's tracers (hop/saved.h).  HOP_NOMEM. */
hop_status hop__tracer_add_lifted(hop_tracer *t, hop_node *ph, hop_node *source, hop_node *cause);
/* Frees t's tables, not its graph.  NULL is a no-op. */
void hop__tracer_free(hop_tracer *t);
/* The owner given to hop__tracer_new. */
void *hop__tracer_owner(const hop_tracer *t);
/* The owner keeps the states of its stack: the top CURRENT, the others
 * SUSPENDED, popped ones ENDED. */
void hop__tracer_set_state(hop_tracer *t, hop_tracer_state state);
/* hop_tracer_create_input without the check that t is current: the
 * OutputGraph adds captured tensors to the root while a body is traced. */
hop_node *hop__tracer_add_input(hop_tracer *t, const char *name, const hop_value_info *meta);
/* Records in *m how far t's graph and tables have grown. */
void hop__tracer_mark_of(const hop_tracer *t, hop__tracer_mark *m);
/* Removes every node, placeholder, subgraph, lifted value and bound symbol
 * added to t since m.  Removed subgraphs are handed to orphan (may be NULL)
 * so that their owner can keep them alive.  Never fails. */
void hop__tracer_rollback(hop_tracer *t, const hop__tracer_mark *m,
                          void (*orphan)(void *ctx, hop_graph *g), void *ctx);

#endif /* HOP_TRACER_OWNER_H */
