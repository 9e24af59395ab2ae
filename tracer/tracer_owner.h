/*
 * tracer/tracer_owner.h - what the owner of tracers (the OutputGraph, in
 * output_graph/) does with them beyond hop/tracer.h: makes and frees them,
 * moves them through their states, adds root inputs while a body is traced,
 * and undoes their changes when a scope fails.
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
/*
 * A scope over the tracers of t's OutputGraph (t among them), to undo what
 * a failed operation changed: t, the tracer the operation adds nodes to
 * (the current one), is marked when the scope begins; any other tracer is
 * marked when the tracer layer first changes it (a lift into an ancestor, a
 * root input), so beginning a scope is O(1) however deep the stack is.
 * Only t may be changed through the graph API directly (installing a
 * body's graph, a call node) while the scope is open.  Scopes nest and end
 * innermost first: hop__tracer_scope_end keeps the changes (an outer scope
 * can still undo them) or, with rollback, removes every node, placeholder,
 * subgraph, lifted value and bound symbol added since the scope began.
 * Removed subgraphs are handed to orphan (may be NULL) so that their owner
 * can keep them alive.  Neither fails.
 */
typedef struct hop__tracer_scope {
    hop_tracer *t;
    hop__tracer_mark mark;
    size_t at;      /* the journal's length at the beginning */
    uint64_t outer; /* the enclosing scope's number */
} hop__tracer_scope;
void hop__tracer_scope_begin(hop_tracer *t, hop__tracer_scope *s);
void hop__tracer_scope_end(hop__tracer_scope *s, bool rollback,
                           void (*orphan)(void *ctx, hop_graph *g), void *ctx);

#endif /* HOP_TRACER_OWNER_H */
