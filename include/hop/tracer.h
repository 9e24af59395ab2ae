/*
 * hop/tracer.h - the SubgraphTracer: records ops into one graph and lifts
 * every value it uses from an enclosing tracer into an explicit input.
 *
 * Tracers form a chain through their parents (the root tracer has none); an
 * OutputGraph (hop/output_graph.h) owns them and their stack.  A traced value
 * (a "proxy") is simply a hop_node of the graph of the tracer that made it.
 *
 * Lifting (DESIGN.md, "Lifting"): when tracer T uses a value v owned by an
 * ancestor tracer A, every tracer between A and T, outer-first, gets one
 * placeholder for v (deduplicated per tracer).  Before a lifted tensor's
 * placeholder come placeholders for those of its shape's free symbols not yet
 * bound in that tracer, sorted by name.  A symbol is bound once per tracer,
 * however it arrives: as the shape of a lifted tensor, through sym_size() of a
 * tensor, as a SymInt input, or from item()/nonzero() (unbacked symbols are
 * bound in the tracer that created them).  A SymInt value whose expression is
 * a single symbol is lifted as that symbol (placeholder `s0`); a compound one
 * (`2*s0`) is one input named after its node.
 */
#ifndef HOP_TRACER_H
#define HOP_TRACER_H

/* The build checks the layering: a layer may include this header only if
 * it links the tracer layer (hop_add_layer in CMakeLists.txt). */
#if defined(HOP_LAYER_BUILD) && !defined(HOP_SEES_TRACER)
#error "hop/tracer.h belongs to the tracer layer, which this layer does not link"
#endif

#include "hop/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hop_tracer hop_tracer;

typedef enum hop_tracer_state {
    HOP_TRACER_CURRENT,   /* top of its OutputGraph's stack: records ops */
    HOP_TRACER_SUSPENDED, /* on the stack below the current one */
    HOP_TRACER_ENDED,     /* popped: its values are dead */
} hop_tracer_state;

/* Accessors; never fail.  Borrowed results. */
hop_graph *hop_tracer_graph(const hop_tracer *t);
hop_tracer *hop_tracer_parent(const hop_tracer *t);
int hop_tracer_depth(const hop_tracer *t); /* root: 0 */
hop_tracer_state hop_tracer_state_of(const hop_tracer *t);
/* The tracer whose graph holds n (NULL for a node of a graph no tracer built). */
hop_tracer *hop_tracer_of(const hop_node *n);

/*
 * An explicit input of t's graph (a body's argument, or a root argument),
 * appended after the placeholders so far.  meta is required: a NULL meta or
 * one of kind NONE is HOP_MISUSE ("... input x has no example metadata").
 * A SymInt input whose expression is one unbound symbol binds that symbol.
 * At the root, a tensor's free symbols not bound yet become placeholders
 * right before it.  NULL on error, with every state unchanged.
 */
hop_node *hop_tracer_create_input(hop_tracer *t, const char *name, const hop_value_info *meta);

/*
 * hop_tracer_create_input for an input that passes outer (a value of an
 * enclosing tracer) unchanged: later uses of outer in t, or in tracers inside
 * it, resolve to this input instead of lifting outer again.
 */
hop_node *hop_tracer_create_input_for(hop_tracer *t, const char *name, const hop_value_info *meta,
                                      hop_node *outer);

/*
 * The value standing for v in t: v itself if t owns it, else its lifted
 * placeholder (created on first use through every tracer between v's owner
 * and t).  Errors (NULL, every state unchanged): HOP_TRACE when v belongs to
 * an ended tracer ("value sin was created in subgraph cond_true_0, whose
 * tracing has ended"); HOP_MISUSE when v's tracer is not an ancestor of t.
 */
hop_node *hop_tracer_lift(hop_tracer *t, hop_node *v);
/* The value standing for symbol sym in t, binding it (and lifting it from
 * the parent) on first use.  HOP_TRACE if no enclosing tracer binds it. */
hop_node *hop_tracer_bind_symbol(hop_tracer *t, const hop_expr *sym);
/* Binds symbol sym in t to v, one of t's own SymInt values whose expression
 * is sym (e.g. a HOP's output that got a fresh unbacked symbol).  HOP_EXISTS
 * if sym is bound in t already; HOP_MISUSE for a v that does not fit. */
hop_status hop_tracer_bind_value(hop_tracer *t, const hop_expr *sym, hop_node *v);
/* The value bound to sym in t, or NULL (no lifting, no error). */
hop_node *hop_tracer_bound_symbol(const hop_tracer *t, const hop_expr *sym);

/*
 * Records op in t: lifts every HOP_ARG_NODE argument owned by another tracer
 * and binds the free symbols of every HOP_ARG_SYM argument, then runs shape
 * inference and adds the node.  item() binds its new unbacked symbol to the
 * result; nonzero() also records `sym_size(nonzero, 0)` and binds the
 * unbacked size to it.  t must be current (HOP_MISUSE otherwise).  NULL on
 * error, with t's graph, its ancestors' graphs and the ShapeEnv's guards as
 * before the call.
 */
hop_node *hop_tracer_call_op(hop_tracer *t, hop_op op, const hop_arg *args, size_t nargs);

/*
 * Records a call_foreign node (hop_graph_call_foreign) in t and one getitem
 * per output, stored in results[nouts]: lifts and binds the arguments as
 * hop_tracer_call_op does.  The typed entry point that checks the operands
 * against a kernel's C signature is hop_tracer_call_foreign (hop/prim_hop.h).
 * Returns the call node; NULL on error, every state as before the call.
 */
hop_node *hop_tracer_record_foreign(hop_tracer *t, const char *target, const hop_arg *args,
                                    size_t nargs, const hop_value_info *outs, size_t nouts,
                                    unsigned flags, hop_node **results);

/* Records t's output, lifting free values (returning an outer value unchanged
 * makes it an input).  Same rules as hop_tracer_call_op. */
hop_node *hop_tracer_output(hop_tracer *t, const hop_arg *values, size_t n);

/*
 * lifted_freevars, in creation order: the i-th lifted placeholder of t and the
 * value of t's parent that a call of t's graph must pass for it.  Also lists
 * lifted symbols.  hop_tracer_lifted_source maps a placeholder of t to that
 * parent value, or NULL for an explicit input.
 */
size_t hop_tracer_nlifted(const hop_tracer *t);
hop_node *hop_tracer_lifted_placeholder(const hop_tracer *t, size_t i);
/* The parent value of the i-th lifted placeholder (NULL when i is out of
 * range): O(1), where hop_tracer_lifted_source searches the placeholders. */
hop_node *hop_tracer_lifted_source_at(const hop_tracer *t, size_t i);
hop_node *hop_tracer_lifted_source(const hop_tracer *t, const hop_node *placeholder);
/*
 * How many times the tracers of t's OutputGraph were rolled back to a mark
 * (a failed op or HOP call; counted for all of them together; 0 for NULL).
 * While it is unchanged, every node of t seen earlier is still in t with the
 * same lifted source, so a fact derived from one may be kept by its address
 * (python/_C/hops.c does for lift provenance).
 */
size_t hop_tracer_rollbacks(const hop_tracer *t);
/*
 * Why a lifted symbol was lifted: the value of t's parent (a tensor) whose
 * shape brought it in, when t lifted that tensor; NULL when the symbol itself
 * was used (x.shape[0], a SymInt argument), for a lifted value that is not a
 * symbol, and for a placeholder t did not lift.
 */
hop_node *hop_tracer_lifted_cause(const hop_tracer *t, const hop_node *placeholder);

/*
 * Called each time tracer t (or a tracer created inside it later: children
 * inherit the hook when they are pushed) lifts a value: ph is the new
 * placeholder of t's graph, source the parent's value it stands for.  For
 * provenance (e.g. Python records the source line of the use); it must not
 * record ops.  An error it returns (HOP_NOMEM storing a note) fails the lift
 * like any other, and the enclosing call undoes it.  A lift undone later
 * was still reported.  NULL removes the hook.
 */
typedef hop_status (*hop_lift_hook)(void *ud, hop_tracer *t, hop_node *ph, hop_node *source);
void hop_tracer_set_lift_hook(hop_tracer *t, hop_lift_hook hook, void *ud);

/* A growable list of values (what a body returns, what a HOP call yields). */
typedef struct hop_values {
    hop_node **items;
    size_t n, cap;
} hop_values;

/* Appends v.  HOP_NOMEM leaves the list as it was. */
hop_status hop_values_push(hop_values *vs, hop_node *v);
/* Frees the items array (not the nodes) and empties the list. */
void hop_values_clear(hop_values *vs);

#ifdef __cplusplus
}
#endif
#endif /* HOP_TRACER_H */
