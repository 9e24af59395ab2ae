/*
 * hop/output_graph.h - the OutputGraph: the root graph being built, the stack
 * of SubgraphTracers, the root's inputs and their sources, the ShapeEnv (and
 * so the guards), subgraph naming, and checkpoints that undo a failed scope.
 */
#ifndef HOP_OUTPUT_GRAPH_H
#define HOP_OUTPUT_GRAPH_H

/* The build checks the layering: a layer may include this header only if
 * it links the output_graph layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_OUTPUT_GRAPH)
#error "hop/output_graph.h belongs to the output_graph layer, which this layer does not link"
#endif

#include "hop/tracer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hop_output_graph hop_output_graph;

/* A new OutputGraph with its own ShapeEnv, a root graph named "forward" and
 * its root tracer, which is current.  NULL on out-of-memory. */
hop_output_graph *hop_output_graph_new(void);
/* Frees everything: tracers, graphs (installed or not), the ShapeEnv. */
void hop_output_graph_free(hop_output_graph *og);

/* The OutputGraph that owns tracer t (a body uses it to call nested HOPs). */
hop_output_graph *hop_output_graph_of(const hop_tracer *t);
hop_shape_env *hop_output_graph_env(const hop_output_graph *og);
hop_tracer *hop_output_graph_root(const hop_output_graph *og);
hop_graph *hop_output_graph_root_graph(const hop_output_graph *og);
hop_tracer *hop_output_graph_current(const hop_output_graph *og);
/* Number of tracers on the stack: 1 when only the root is. */
size_t hop_output_graph_depth(const hop_output_graph *og);

/* ------------------------------------------------------------ root inputs */

typedef enum hop_source_kind {
    HOP_SOURCE_ARG,     /* the position-th argument of the traced function */
    HOP_SOURCE_CAPTURE, /* a concrete tensor reached by a body, by identity */
    HOP_SOURCE_SIZE,    /* size dim of the tensor input `input` (a symbol) */
} hop_source_kind;

typedef struct hop_source {
    hop_source_kind kind;
    size_t position;      /* ARG */
    const void *identity; /* CAPTURE */
    size_t input, dim;    /* SIZE: index into the input list, and the dim */
} hop_source;

/*
 * Adds the next argument of the traced function as a root tensor input named
 * `name` with example sizes.  With dynamic, each dim gets a backed symbol
 * (duck sizing; 0 and 1 specialised), and new symbols become placeholders
 * right before the tensor; otherwise sizes are constants.  Allowed only while
 * the root is current.  NULL on error, every state unchanged.
 */
hop_node *hop_output_graph_add_input(hop_output_graph *og, const char *name, hop_dtype dtype,
                                     int rank, const int64_t *sizes, bool dynamic);
/* The same with dynamic chosen per dim (dynamic[d] for d < rank). */
hop_node *hop_output_graph_add_input_dims(hop_output_graph *og, const char *name, hop_dtype dtype,
                                          int rank, const int64_t *sizes, const bool *dynamic);

/*
 * A concrete tensor (identified by `identity`, e.g. its address) that a body
 * reaches through a closure or a global: the first call adds a root input for
 * it (like hop_output_graph_add_input, at the end of the root's placeholders,
 * whatever tracer is current); later calls with the same identity return the
 * same root node.  Use the result in the current tracer; lifting brings it in.
 */
hop_node *hop_output_graph_capture(hop_output_graph *og, const void *identity, const char *name,
                                   hop_dtype dtype, int rank, const int64_t *sizes, bool dynamic);

/* Root inputs (tensors and their size symbols) in placeholder order. */
size_t hop_output_graph_ninputs(const hop_output_graph *og);
hop_node *hop_output_graph_input(const hop_output_graph *og, size_t i, hop_source *source);

/* ------------------------------------------------------- the tracer stack */

/*
 * Bodies nest at most this deep (tracers on the stack besides the root).
 * Tracing, lowering, printing and freeing recurse once per level, so a
 * deeper program would overflow the C stack (about 2,500 levels with 8 MiB,
 * fewer under AddressSanitizer); it is a HOP_TRACE error instead.
 */
#define HOP_MAX_NESTING 1000

/*
 * Pushes a new tracer, child of the current one, whose new empty graph is
 * named `graph_name`; it becomes current.  NULL on error: HOP_TRACE when
 * HOP_MAX_NESTING bodies are on the stack already.
 */
hop_tracer *hop_output_graph_push(hop_output_graph *og, const char *graph_name);
/*
 * Pops t, which must be current (HOP_MISUSE naming both tracers otherwise):
 * its values become dead, and its graph is handed to the caller through
 * *graph, to be installed with hop_graph_add_subgraph (or discarded with
 * hop_output_graph_discard).  The OutputGraph still frees it if neither
 * happens.
 */
hop_status hop_output_graph_pop(hop_output_graph *og, hop_tracer *t, hop_graph **graph);
/* Gives back a popped graph that will not be installed (the OutputGraph keeps
 * it alive, unreachable, so that dead proxies stay safe to inspect). */
void hop_output_graph_discard(hop_output_graph *og, hop_graph *graph);

/*
 * "<prefix>_<N>" with one counter per prefix, starting at 0: the next free
 * name for a subgraph ("cond_true_0").  Borrowed from og.  NULL on OOM.
 */
const char *hop_output_graph_next_name(hop_output_graph *og, const char *prefix);

/*
 * Per-OutputGraph storage for upper layers (e.g. a HOP's cache): one pointer
 * per key.  set_data replaces (freeing the old pointer with its free_fn) and
 * the OutputGraph frees what is left when it is freed.  NULL / HOP_NOMEM.
 */
void *hop_output_graph_data(const hop_output_graph *og, const void *key);
hop_status hop_output_graph_set_data(hop_output_graph *og, const void *key, void *data,
                                     void (*free_fn)(void *));

/* ------------------------------------------------------------- checkpoints */

/*
 * A checkpoint records the state of og: the stack, every active graph's nodes
 * and placeholders, lifted values and bound symbols, root inputs, captures,
 * symbols, guards and name counters.  hop_output_graph_restore returns og to
 * exactly that state (popping and discarding tracers pushed since) and frees
 * the checkpoint; hop_checkpoint_free keeps the changes.  Checkpoints nest:
 * restore or free them innermost first.
 */
typedef struct hop_checkpoint hop_checkpoint;
hop_checkpoint *hop_output_graph_checkpoint(hop_output_graph *og);
hop_status hop_output_graph_restore(hop_output_graph *og, hop_checkpoint *cp);
/* For a scope that failed with status st and its error message set: restores
 * og to cp and returns st with that message kept (a restore never replaces
 * the error the caller is reporting). */
hop_status hop_output_graph_abandon(hop_output_graph *og, hop_checkpoint *cp, hop_status st);
void hop_checkpoint_free(hop_checkpoint *cp);

#ifdef __cplusplus
}
#endif
#endif /* HOP_OUTPUT_GRAPH_H */
