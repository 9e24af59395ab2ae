/*
 * output_graph/output_graph_impl.h - what the saved format's loader
 * (output_graph/load.c) needs from the OutputGraph beyond its public API:
 * rebuilding the root inputs' records and the tracers of loaded subgraphs.
 */
#ifndef HOP_OUTPUT_GRAPH_IMPL_H
#define HOP_OUTPUT_GRAPH_IMPL_H

#include "hop/output_graph.h"

/* Records node, a placeholder of og's root graph, as the next root input
 * with source src (a CAPTURE also enters the identity table, so that
 * hop_output_graph_capture finds it).  HOP_NOMEM, HOP_EXISTS for an identity
 * captured already. */
hop_status hop__output_graph_adopt_input(hop_output_graph *og, hop_node *node, hop_source src);

/* A tracer for g, a graph installed (at any depth) under og's root, whose
 * parent is the tracer of g's parent graph: made ended, as if g had been
 * traced and popped, so that hop_tracer_of and the lifted-value accessors
 * work on a loaded program.  NULL on out-of-memory. */
hop_tracer *hop__output_graph_adopt_graph(hop_output_graph *og, hop_graph *g, hop_tracer *parent);

/* One placeholder of a subgraph's capture table (output_graph/lifts.c):
 * role HOP__ROLE_EXPLICIT, _LIFTED or _OTHER (output_graph/saved_impl.h);
 * source, the parent's value it stands for (NULL when explicit); cause, for
 * a lifted symbol, the parent's tensor whose shape brought it in. */
typedef struct hop__capture {
    int role;
    hop_node *source;
    hop_node *cause;
} hop__capture;

/* The capture table of g, a subgraph installed in a parent: out has one
 * entry per placeholder.  Never fails. */
hop_status hop__capture_table(const hop_graph *g, hop__capture *out);
/* The first call_hop node of g's parent that calls g, or NULL. */
hop_node *hop__first_call_of(const hop_graph *g);

#endif /* HOP_OUTPUT_GRAPH_IMPL_H */
