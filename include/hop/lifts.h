/*
 * hop/lifts.h - lifting provenance: why each subgraph has the inputs it has.
 *
 * For every placeholder of every subgraph that is not an explicit argument of
 * its body (every lifted input), hop_output_graph_lifts says what it stands
 * for (an argument of the traced function, a captured tensor, a symbol, or an
 * intermediate value of an enclosing graph), where that value was made,
 * which tracers lifted it on the way down (outer-first), whether one value
 * of the call serves it and another body's placeholder (cond's shared
 * inputs), for a symbol which tensor's shape brought it in, and the note an
 * upper layer attached when it was lifted (Python: the file:line of the
 * use).  It works on a traced OutputGraph and on a loaded one (hop/saved.h
 * keeps the capture tables and the notes).
 */
#ifndef HOP_LIFTS_H
#define HOP_LIFTS_H

/* The build checks the layering: a layer may include this header only if
 * it links the output_graph layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_OUTPUT_GRAPH)
#error "hop/lifts.h belongs to the output_graph layer, which this layer does not link"
#endif

#include "hop/output_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hop_lift_origin {
    HOP_LIFT_ARG,          /* a tensor argument of the traced function (a root input) */
    HOP_LIFT_CAPTURE,      /* a concrete tensor a body reached (a captured root input) */
    HOP_LIFT_SYMBOL,       /* a size symbol (s0 of a root input, u0 of an item()) */
    HOP_LIFT_INTERMEDIATE, /* a value computed in an enclosing graph, or its explicit input */
} hop_lift_origin;

typedef struct hop_lift_info {
    const hop_graph *graph;      /* the subgraph */
    const hop_node *placeholder; /* its lifted input */
    const hop_node *source;      /* the value of graph->parent that calls pass for it */
    hop_lift_origin origin_kind;
    const hop_node *origin; /* the value it stands for, where it was made */
    const hop_graph *origin_graph;
    /* The tracers that lifted it on the way down, outer-first: the graphs
     * below origin_graph down to graph (nlifted_by of them; graph is last),
     * or down to graph's parent for a placeholder only there for another
     * body (for_other_body: graph's tracer did not lift it). */
    const hop_graph **lifted_by;
    size_t nlifted_by;
    /* For a symbol: the tensor of graph->parent whose shape brought it in,
     * or NULL when the symbol was used itself (x.shape[0], a SymInt). */
    const hop_node *shape_of;
    /* The placeholder at the same position of another body of the same
     * call that lifted the value (the call passes one value for both: cond's
     * input both branches use), or NULL. */
    const hop_node *shared_with;
    /* This placeholder is only there for that other body, shared_with's
     * (cond: a value only the other branch uses; unused here). */
    bool for_other_body;
    const char *note; /* the note of hop_output_graph_set_lift_note, or NULL */
    bool operand;     /* its operand flag: the value is an operand the call was given */
} hop_lift_info;

/*
 * Every lifted input of every subgraph of og, subgraphs depth-first in
 * installation order and placeholders in order, in a new array *out of *n
 * entries (free with hop_free; the pointers inside are borrowed from og and
 * live as long as its graphs).  HOP_MISUSE for NULL arguments, HOP_NOMEM.
 */
hop_status hop_output_graph_lifts(const hop_output_graph *og, hop_lift_info **out, size_t *n);

/*
 * The same as text, one paragraph per lifted input, e.g.
 *   cond_true_0.w: captured tensor w (root input w)
 *       lifted by: cond_true_0
 *       first used at: model.py:12
 *       deduplicated: cond_false_0.w gets the same value (one input of the call)
 * or "no lifted inputs\n".  A new string (hop_free), NULL on out-of-memory.
 */
char *hop_output_graph_explain_lifts(const hop_output_graph *og);

/*
 * A note on a lifted placeholder of og (copied), e.g. the source location of
 * the use that lifted it, and whether the lifted value is an operand the
 * HOP call was given rather than a value its body closed over (the bodies of
 * wrap and cond receive their operands as outer values, lifted on first use:
 * Python's captures="error" allows those).  Replaces an earlier note.  Saved
 * with the program.  HOP_MISUSE for NULL arguments, HOP_NOMEM.
 */
hop_status hop_output_graph_set_lift_note(hop_output_graph *og, const hop_node *placeholder,
                                          const char *note, bool operand);
/* The note, or NULL (then *operand is false).  Borrowed from og.  operand may
 * be NULL. */
const char *hop_output_graph_lift_note(const hop_output_graph *og, const hop_node *placeholder,
                                       bool *operand);

#ifdef __cplusplus
}
#endif
#endif /* HOP_LIFTS_H */
